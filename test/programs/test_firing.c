/* test_firing.c - when timeouts fire: exactly at the boundary of their deadline (never
   early, never a tick late), in order of boundary, on wheels of any size, a million of
   them.

   The tick start S is deliberately not a multiple of the tick, so a timer that aligns
   boundaries to 0 instead of to its start fails the boundary checks. */
#include "harness.h"
#include "fixture.h"
#include "probe.h"

/* Never early, never a tick late: for deadlines anywhere inside a tick, scheduled from
   anywhere inside a tick, advancing to B - 1 runs nothing and advancing to B runs it. */
static void test_exact_boundary(void) {
    static const uint64_t delays[] = {1, MS - 1, MS, MS + 1, 5 * MS + 17, 64 * MS, 1000 * MS + 1};
    static const uint64_t offsets[] = {0, 1, MS / 2, MS - 1};
    fixture f;
    size_t i, j;
    fixture_open(&f, 7 * MS + 123, MS, 8);
    for (i = 0; i < sizeof offsets / sizeof offsets[0]; i++) {
        for (j = 0; j < sizeof delays / sizeof delays[0]; j++) {
            probe p;
            uint64_t now = boundary_of(&f, f.clock) + offsets[i], b;
            probe_init(&p, &f, 0);
            f.clock = now;
            CHECK_EQ(probe_schedule(&p, delays[j]), HWTIMER_OK);
            CHECK_EQ(hwtimer_timeout_deadline(&p.to), now + delays[j]);
            b = probe_boundary(&p);
            CHECK_EQ(advance_to(&f, b - 1), 0);
            CHECK_EQ(p.runs, 0);
            CHECK_EQ(advance_to(&f, b), 1);
            CHECK_EQ(p.runs, 1);
            CHECK_EQ(p.ran_at, b);
            CHECK(p.ran_at >= now + delays[j]);
        }
    }
    fixture_close(&f);
}

/* Callbacks run in order of their boundaries, both one tick at a time and in one jump. */
static void test_order_across_ticks(void) {
    enum { N = 64 };
    probe p[N];
    fixture f;
    uint64_t rng = 0x9E3779B97F4A7C15ull;
    size_t i;

    open_with_probes(&f, p, N, 3 * MS + 5, 4);
    schedule_random(p, N, &rng, 0, 300 * MS);
    CHECK_EQ(hwtimer_pending(f.t), N);
    step_and_check_exact(&f, p, N, tick_at(&f, 301));
    fixture_close(&f);

    open_with_probes(&f, p, N, 3 * MS + 5, 4);
    schedule_random(p, N, &rng, 0, 300 * MS);
    run_log_reset();
    CHECK_EQ(advance_to(&f, tick_at(&f, 400)), N);
    CHECK_EQ(run_logged, N);
    for (i = 1; i < run_logged; i++) {
        CHECK(probe_boundary(run_log[i - 1]) <= probe_boundary(run_log[i]));
    }
    for (i = 0; i < N; i++) {
        CHECK_EQ(p[i].runs, 1);
    }
    CHECK_EQ(hwtimer_pending(f.t), 0);
    fixture_close(&f);
}

/* Delay 0 fires at the first boundary at or after the scheduling time: on the boundary
   itself that is the next advance even with the same `now`; inside a tick, its end. */
static void test_delay_zero(void) {
    fixture f;
    probe p;
    open_with_probes(&f, &p, 1, 3 * MS + 7, 8);

    f.clock = tick_at(&f, 2);
    CHECK_EQ(probe_schedule(&p, 0), HWTIMER_OK);
    CHECK_EQ(hwtimer_timeout_deadline(&p.to), tick_at(&f, 2));
    CHECK_EQ(advance_to(&f, tick_at(&f, 2)), 1);
    CHECK_EQ(p.ran_at, tick_at(&f, 2));

    /* the timer has already processed this boundary */
    CHECK_EQ(probe_schedule(&p, 0), HWTIMER_OK);
    CHECK(hwtimer_next_expiry(f.t) <= tick_at(&f, 2));
    CHECK_EQ(hwtimer_poll_timeout_ms(f.t), 0);
    CHECK_EQ(advance_to(&f, tick_at(&f, 2)), 1);
    CHECK_EQ(p.runs, 2);

    f.clock = tick_at(&f, 2) + MS / 2;
    CHECK_EQ(probe_schedule(&p, 0), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, tick_at(&f, 3) - 1), 0);
    CHECK_EQ(advance_to(&f, tick_at(&f, 3)), 1);
    CHECK_EQ(p.ran_at, tick_at(&f, 3));
    fixture_close(&f);
}

/* Deadlines already in the past (schedule_at) fire on the next advance. */
static void test_deadline_in_the_past(void) {
    fixture f;
    probe p[3];
    open_with_probes(&f, p, 3, 50 * MS, 8);
    CHECK_EQ(advance_to(&f, tick_at(&f, 20)), 0);
    CHECK_EQ(hwtimer_schedule_at(f.t, &p[0].to, tick_at(&f, 19), probe_fn, &p[0]), HWTIMER_OK);
    CHECK_EQ(hwtimer_schedule_at(f.t, &p[1].to, tick_at(&f, 3) + 1, probe_fn, &p[1]), HWTIMER_OK);
    CHECK_EQ(hwtimer_schedule_at(f.t, &p[2].to, 0, probe_fn, &p[2]), HWTIMER_OK);
    CHECK_EQ(hwtimer_timeout_deadline(&p[2].to), 0);
    CHECK_EQ(hwtimer_pending(f.t), 3);
    CHECK_EQ(hwtimer_poll_timeout_ms(f.t), 0);
    run_log_reset();
    CHECK_EQ(advance_to(&f, tick_at(&f, 20)), 3);
    CHECK_EQ(p[0].runs + p[1].runs + p[2].runs, 3);
    CHECK_EQ(run_logged, 3); /* in order of boundary: S, tick 4, tick 19 */
    CHECK(run_logged == 3 && run_log[0] == &p[2] && run_log[1] == &p[1] && run_log[2] == &p[0]);
    fixture_close(&f);
}

/* Any ticks_per_wheel from 1 up works the same (hwtimer.h rounds it up to a power of two; only
   the behaviour is checked): every timeout fires exactly at its boundary, near or far. */
static void test_wheel_sizes(void) {
    static const uint32_t sizes[] = {1, 2, 3, 5, 7, 64, 1000};
    enum { NEAR_COUNT = 150, FAR_COUNT = 40 };
    size_t s;
    for (s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        fixture f;
        probe p[NEAR_COUNT];
        uint64_t rng = 1000 + s;
        open_with_probes(&f, p, NEAR_COUNT, 2 * MS + 999, sizes[s]);
        schedule_random(p, NEAR_COUNT, &rng, 0, 300 * MS);
        step_and_check_exact(&f, p, NEAR_COUNT, tick_at(&f, 301));

        probes_init(p, FAR_COUNT, &f);
        schedule_random(p, FAR_COUNT, &rng, MS, 50 * YEAR);
        drain_by_next_expiry(&f, p, FAR_COUNT, 200 * FAR_COUNT);
        fixture_close(&f);
    }
}

typedef struct million_node {
    hwtimer_timeout to;
    uint64_t boundary;
    uint32_t runs;
} million_node;

typedef struct million_tally {
    const fixture *f;
    size_t fired, off_boundary;
} million_tally;

static void million_fn(hwtimer_timeout *to, void *arg) {
    million_tally *m = (million_tally *)arg;
    million_node *n = (million_node *)(void *)to;
    n->runs++;
    m->fired++;
    m->off_boundary += n->boundary != m->f->clock;
}

/* One hour of 1 ms ticks, one advance per tick, with 1M timeouts of random delays between
   1 s and 1 h: each fires exactly once, at its boundary, and each advance counts one pass.
   A correctness test only. */
static void test_million_timeouts(void) {
    enum { N = 1000000 };
    fixture f;
    million_tally m = {NULL, 0, 0};
    million_node *nodes = (million_node *)calloc(N, sizeof *nodes);
    uint64_t rng = 0xDEADBEEFull, now, advances = 0;
    size_t i, wrong_runs = 0;
    hwtimer_stats stats;
    if (nodes == NULL) {
        exit(1);
    }
    fixture_open(&f, 123456789, MS, 512);
    m.f = &f;
    for (i = 0; i < N; i++) {
        uint64_t delay = SEC + test_rng_below(&rng, HOUR - SEC + 1);
        CHECK_EQ(hwtimer_schedule(f.t, &nodes[i].to, delay, million_fn, &m), HWTIMER_OK);
        nodes[i].boundary = boundary_of(&f, f.start + delay);
    }
    CHECK_EQ(hwtimer_pending(f.t), N);
    for (now = tick_at(&f, 1); now <= f.start + HOUR; now += MS) {
        (void)advance_to(&f, now);
        advances++;
    }
    CHECK_EQ(m.fired, N);
    CHECK_EQ(m.off_boundary, 0);
    for (i = 0; i < N; i++) {
        wrong_runs += nodes[i].runs != 1;
    }
    CHECK_EQ(wrong_runs, 0);
    CHECK_EQ(hwtimer_pending(f.t), 0);
    hwtimer_stats_get(f.t, &stats);
    CHECK_EQ(stats.fired, N);
    CHECK_EQ(stats.passes, advances); /* each advance ran a pass */
    fixture_close(&f);
    free(nodes);
}

int main(void) {
    RUN_TEST(test_exact_boundary);
    RUN_TEST(test_order_across_ticks);
    RUN_TEST(test_delay_zero);
    RUN_TEST(test_deadline_in_the_past);
    RUN_TEST(test_wheel_sizes);
    RUN_TEST(test_million_timeouts);
    return test_finish();
}
