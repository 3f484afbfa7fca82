/* test_clock.c - the clock: it goes backwards (advance and schedule behind the last
   advance or the start), jumps years, and runs into the end of time (deadlines clamp to
   UINT64_MAX, boundaries past it never fire); a worker on a clock that steps. */
#include "harness.h"
#include "harness_threads.h"
#include "fixture.h"
#include "probe.h"

/* A `now` below the previous one (or below S) is a no-op returning 0. */
static void test_now_going_backwards(void) {
    fixture f;
    probe p;
    open_with_probes(&f, &p, 1, 1000 * MS, 8);
    CHECK_EQ(hwtimer_advance(f.t, 5), 0); /* before the timer's start */
    CHECK_EQ(advance_to(&f, tick_at(&f, 10)), 0);
    CHECK_EQ(probe_schedule(&p, 2 * MS), HWTIMER_OK);
    CHECK_EQ(hwtimer_advance(f.t, tick_at(&f, 5)), 0);
    CHECK_EQ(hwtimer_advance(f.t, 0), 0);
    CHECK_EQ(p.runs, 0);
    CHECK_EQ(hwtimer_pending(f.t), 1);
    CHECK_EQ(advance_to(&f, tick_at(&f, 11)), 0);
    CHECK_EQ(advance_to(&f, tick_at(&f, 12)), 1);
    CHECK_EQ(p.ran_at, tick_at(&f, 12));
    fixture_close(&f);
}

/* A clock behind the last advance, or behind the start: deadlines computed from it may be
   past already; they run at the next advance that is not itself behind, never early. */
static void test_clock_backwards(void) {
    fixture r;
    probe n[3];
    open_with_probes(&r, n, 3, HOUR, 8);
    CHECK_EQ(advance_to(&r, r.start + 10 * SEC), 0);
    r.clock = r.start + 5 * SEC; /* stepped back 5 s */
    CHECK_EQ(probe_schedule(&n[0], SEC), HWTIMER_OK);
    CHECK_EQ(hwtimer_timeout_deadline(&n[0].to), r.start + 6 * SEC);
    r.clock = r.start - 30 * 60 * SEC; /* and behind the start */
    CHECK_EQ(probe_schedule(&n[1], 0), HWTIMER_OK);
    CHECK_EQ(probe_schedule(&n[2], 30 * 60 * SEC + 5 * SEC), HWTIMER_OK); /* S + 5 s */
    CHECK_EQ(hwtimer_poll(r.t), 0);                 /* behind: a no-op */
    CHECK_EQ(advance_to(&r, r.start + 9 * SEC), 0); /* still behind the last advance */
    CHECK(hwtimer_next_expiry(r.t) <= r.start + 10 * SEC);
    CHECK_EQ(advance_to(&r, r.start + 10 * SEC), 3);
    CHECK_EQ(n[0].runs + n[1].runs + n[2].runs, 3);
    CHECK_EQ(n[0].early + n[1].early + n[2].early, 0);
    CHECK_EQ(hwtimer_next_expiry(r.t), UINT64_MAX);
    fixture_close(&r);
}

/* One advance call over ten years of 1 ms ticks: everything due runs, in order, and the
   return value counts it; what is not due yet stays pending. */
static void test_jump_ten_years(void) {
    static const uint64_t delays[] = {9 * YEAR + 300 * DAY, MS, YEAR, HOUR, 5 * YEAR + 1,
                                      DAY, 10 * YEAR, 11 * YEAR};
    enum { N = sizeof delays / sizeof delays[0] };
    probe p[N];
    fixture f;
    size_t i;
    open_with_probes(&f, p, N, 42 * MS, 512);
    for (i = 0; i < N; i++) {
        CHECK_EQ(probe_schedule(&p[i], delays[i]), HWTIMER_OK);
    }
    run_log_reset();
    CHECK_EQ(advance_to(&f, f.start + 10 * YEAR), N - 1);
    CHECK_EQ(run_logged, N - 1);
    for (i = 1; i < run_logged; i++) {
        CHECK(probe_boundary(run_log[i - 1]) <= probe_boundary(run_log[i]));
    }
    CHECK_EQ(p[N - 1].runs, 0);
    CHECK_EQ(hwtimer_pending(f.t), 1);
    CHECK(hwtimer_next_expiry(f.t) <= f.start + 11 * YEAR);
    CHECK_EQ(advance_to(&f, f.start + 11 * YEAR - 1), 0);
    CHECK_EQ(advance_to(&f, f.start + 11 * YEAR), 1);
    CHECK_EQ(p[N - 1].runs, 1);
    fixture_close(&f);
}

static void test_clock_jumps_years(void) {
    enum { N = 500 };
    static probe n[N];
    fixture r;
    size_t i, jump, due, ran_before;
    open_with_probes(&r, n, N, 42, 16);
    for (i = 0; i < N; i++)
        CHECK_EQ(probe_schedule(&n[i], (i * 7919 % N) * (YEAR / 50) + i), HWTIMER_OK);
    for (jump = 1; jump <= 4; jump++) {
        uint64_t now = r.start + jump * 3 * YEAR;
        for (due = 0, i = 0; i < N; i++)
            due += boundary_of(&r, hwtimer_timeout_deadline(&n[i].to)) <= now;
        ran_before = probe_runs(n, N);
        CHECK_EQ(advance_to(&r, now), due - ran_before);
        CHECK_EQ(probe_runs(n, N), due);
    }
    for (i = 0; i < N; i++) {
        CHECK_EQ(n[i].runs, 1);
        CHECK_EQ(n[i].early, 0);
    }
    fixture_close(&r);
}

/* UINT64_MAX as delay: the deadline is the end of time and it never fires. */
static void test_max_delay_never_fires(void) {
    fixture f;
    probe p[2];
    open_with_probes(&f, p, 2, 9 * MS + 1, 8);
    CHECK_EQ(probe_schedule(&p[0], UINT64_MAX), HWTIMER_OK);
    CHECK_EQ(probe_schedule_periodic(&p[1], UINT64_MAX, 1), HWTIMER_OK);
    CHECK_EQ(hwtimer_timeout_deadline(&p[0].to), UINT64_MAX);
    CHECK_EQ(hwtimer_timeout_deadline(&p[1].to), UINT64_MAX);
    CHECK(hwtimer_poll_timeout_ms(f.t) > 0);
    CHECK_EQ(advance_to(&f, UINT64_MAX - 1), 0);
    CHECK_EQ(p[0].runs + p[1].runs, 0);
    CHECK_EQ(hwtimer_pending(f.t), 2);
    CHECK_EQ(hwtimer_timeout_state(&p[0].to), HWTIMER_PENDING);
    CHECK_EQ(probe_cancel(&p[0]), 1);
    CHECK_EQ(probe_cancel(&p[1]), 1);
    fixture_close(&f);
}

/* N + d past UINT64_MAX clamps to UINT64_MAX (never fires); a deadline just short of it
   still fires at its boundary; a periodic whose next deadline would wrap never fires again. */
static void test_overflow_clamp(void) {
    fixture f;
    probe p[4];
    uint64_t near_end;
    open_with_probes(&f, p, 4, 4 * MS + 3, 4);
    near_end = boundary_of(&f, UINT64_MAX - 20 * MS);
    f.clock = near_end;
    CHECK_EQ(probe_schedule(&p[0], 100 * MS), HWTIMER_OK);
    CHECK_EQ(hwtimer_timeout_deadline(&p[0].to), UINT64_MAX);
    CHECK_EQ(probe_schedule(&p[1], 3 * MS), HWTIMER_OK);
    CHECK_EQ(hwtimer_timeout_deadline(&p[1].to), near_end + 3 * MS);
    CHECK_EQ(probe_schedule_periodic(&p[2], MS, 1ull << 63), HWTIMER_OK);
    CHECK_EQ(probe_schedule(&p[3], 10 * MS), HWTIMER_OK);
    f.clock = near_end + 5 * MS;
    CHECK_EQ(hwtimer_reschedule(f.t, &p[3].to, UINT64_MAX / 2), HWTIMER_OK);
    CHECK_EQ(hwtimer_timeout_deadline(&p[3].to), UINT64_MAX);

    CHECK_EQ(advance_to(&f, UINT64_MAX - 1), 2);
    CHECK_EQ(p[0].runs, 0);
    CHECK_EQ(p[1].runs, 1);
    CHECK_EQ(p[1].ran_at, UINT64_MAX - 1);
    CHECK_EQ(p[2].runs, 1);
    CHECK_EQ(hwtimer_timeout_deadline(&p[2].to), UINT64_MAX);
    CHECK_EQ(p[3].runs, 0);
    CHECK_EQ(hwtimer_pending(f.t), 3);
    fixture_close(&f);
}

/* Extreme geometry: a start 10 ticks before the end of time (a deadline past the last
   boundary never fires, even at now = UINT64_MAX), a 1 ns tick, a 2^40 ns tick. */
static void test_extreme_ticks(void) {
    fixture f;
    probe p[2];
    open_with_probes(&f, p, 2, UINT64_MAX - 10 * MS - 5, 4);
    CHECK_EQ(probe_schedule(&p[0], 3 * MS), HWTIMER_OK);
    CHECK_EQ(probe_schedule(&p[1], 10 * MS + 1), HWTIMER_OK); /* D = UINT64_MAX - 4 */
    CHECK_EQ(advance_to(&f, tick_at(&f, 3) - 1), 0);
    CHECK_EQ(advance_to(&f, tick_at(&f, 3)), 1);
    CHECK_EQ(advance_to(&f, UINT64_MAX), 0);
    CHECK_EQ(p[1].runs, 0);
    CHECK_EQ(hwtimer_pending(f.t), 1);
    fixture_close(&f);

    fixture_open(&f, 5, 1, 2);
    probes_init(p, 1, &f);
    CHECK_EQ(probe_schedule(&p[0], SEC + 7), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, SEC + 11), 0);
    CHECK_EQ(advance_to(&f, SEC + 12), 1);
    CHECK_EQ(p[0].ran_at, SEC + 12);
    fixture_close(&f);

    fixture_open(&f, 0, 1ull << 40, 1u << 20);
    probes_init(p, 1, &f);
    CHECK_EQ(probe_schedule(&p[0], 3 * (1ull << 40) + 1), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, tick_at(&f, 4) - 1), 0);
    CHECK_EQ(advance_to(&f, tick_at(&f, 4)), 1);
    fixture_close(&f);
}

/* A timer created when the clock is about to run out: deadlines clamp to UINT64_MAX, the
   last boundaries still fire, those past UINT64_MAX never do, and periods that would
   overflow leave their timeout pending but never due. */
static void test_end_of_time(void) {
    fixture r;
    probe n[5];
    open_with_probes(&r, n, 5, UINT64_MAX - 10 * MS - 3, 4);
    CHECK_EQ(probe_schedule(&n[0], UINT64_MAX), HWTIMER_OK); /* D clamps to UINT64_MAX */
    CHECK_EQ(hwtimer_timeout_deadline(&n[0].to), UINT64_MAX);
    CHECK_EQ(hwtimer_schedule_at(r.t, &n[1].to, r.start + 10 * MS, probe_fn, &n[1]), HWTIMER_OK);
    CHECK_EQ(hwtimer_schedule_periodic(r.t, &n[2].to, 0, UINT64_MAX, probe_fn, &n[2]), HWTIMER_OK);
    CHECK_EQ(hwtimer_schedule_at(r.t, &n[3].to, 0, probe_fn, &n[3]), HWTIMER_OK); /* long past */
    CHECK_EQ(hwtimer_schedule_periodic(r.t, &n[4].to, MS, 1, probe_fn, &n[4]), HWTIMER_OK);
    CHECK_EQ(advance_to(&r, UINT64_MAX), 4);
    CHECK_EQ(n[0].runs, 0); /* its boundary lies past UINT64_MAX */
    CHECK_EQ(n[1].runs + n[2].runs + n[3].runs + n[4].runs, 4);
    CHECK_EQ(hwtimer_timeout_deadline(&n[2].to), UINT64_MAX); /* the next period overflowed */
    CHECK_EQ(hwtimer_pending(r.t), 3);                        /* n[0], n[2], n[4] */
    CHECK_EQ(advance_to(&r, UINT64_MAX), 0);
    CHECK_EQ(hwtimer_poll_timeout_ms(r.t), 0); /* the clock reads UINT64_MAX (hwtimer.h) */
    CHECK_EQ(hwtimer_cancel(r.t, &n[2].to), 1);
    CHECK_EQ(n[0].early + n[1].early + n[2].early + n[3].early + n[4].early, 0);
    CHECK_EQ(hwtimer_stop(r.t, NULL, NULL), 2);
    fixture_close(&r);
}

/* A worker on a clock that steps back an hour and then forward a year (real clock plus
   an offset). Stepped back, the worker must not run a timeout its clock says is an hour
   away; stepped forward, a schedule that is due at once wakes it, and everything that
   became due runs. Nothing runs before its deadline on the timer's clock, taken as the
   highest reading so far: like advance, the worker never moves time backwards, so a
   deadline computed from the stepped-back clock that the clock had already passed
   counts as reached. */
static uint64_t offset_clock_ns; /* atomic */
static uint64_t highest_reading; /* atomic */

static uint64_t offset_clock(void *ctx) {
    uint64_t now = now_ns() + ATOMIC_GET(&offset_clock_ns), seen = ATOMIC_GET(&highest_reading);
    (void)ctx;
    while (now > seen && !ATOMIC_CAS(&highest_reading, &seen, now)) {
        /* seen was reloaded: try again while now is still higher */
    }
    return now;
}

typedef struct watched {
    hwtimer_timeout to;
    unsigned runs; /* atomic */
    unsigned early;
} watched;

static void watched_run(hwtimer_timeout *to, void *arg) {
    watched *w = (watched *)arg;
    (void)offset_clock(NULL);
    w->early += ATOMIC_GET(&highest_reading) < hwtimer_timeout_deadline(to);
    ATOMIC_ADD(&w->runs, 1u);
}

static void test_worker_clock_steps(void) {
    hwtimer_config cfg;
    hwtimer *t;
    watched a, b, c;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    memset(&c, 0, sizeof c);
    ATOMIC_SET(&offset_clock_ns, 2 * YEAR);
    real_config(&cfg, 1, MS, 64);
    cfg.clock_fn = offset_clock;
    t = create_or_die(&cfg);
    ATOMIC_SET(&offset_clock_ns, 2 * YEAR + 2 * HOUR); /* S + 2 h: room to step back */
    CHECK_EQ(hwtimer_schedule(t, &a.to, SEC, watched_run, &a), HWTIMER_OK);
    ATOMIC_SET(&offset_clock_ns, 2 * YEAR + HOUR);
    sleep_ns(400 * MS);
    CHECK_EQ(ATOMIC_GET(&a.runs), 0); /* an hour early on the timer's clock */
    CHECK_EQ(hwtimer_schedule(t, &b.to, 50 * MS, watched_run, &b), HWTIMER_OK);
    CHECK(wait_for_count(&b.runs, 1, 5 * SEC));
    CHECK_EQ(ATOMIC_GET(&a.runs), 0);
    ATOMIC_SET(&offset_clock_ns, 3 * YEAR);
    CHECK_EQ(hwtimer_schedule(t, &c.to, 0, watched_run, &c), HWTIMER_OK);
    CHECK(wait_for_count(&c.runs, 1, 5 * SEC));
    CHECK(wait_for_count(&a.runs, 1, 5 * SEC));
    CHECK_EQ(a.early + b.early + c.early, 0);
    CHECK_EQ(hwtimer_pending(t), 0);
    hwtimer_destroy(t);
}

int main(void) {
    RUN_TEST(test_now_going_backwards);
    RUN_TEST(test_clock_backwards);
    RUN_TEST(test_jump_ten_years);
    RUN_TEST(test_clock_jumps_years);
    RUN_TEST(test_max_delay_never_fires);
    RUN_TEST(test_overflow_clamp);
    RUN_TEST(test_extreme_ticks);
    RUN_TEST(test_end_of_time);
    if (test_threads()) { /* a worker thread needs a backend */
        RUN_TEST(test_worker_clock_steps);
    }
    return test_finish();
}
