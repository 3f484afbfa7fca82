/* test_expiry.c - what an event loop asks: hwtimer_next_expiry (never later than the
   next boundary, always ahead after an advance, exact for a timeout in the finest level),
   hwtimer_poll_timeout_ms (rounded up, capped at INT_MAX) and hwtimer_poll (advance to the
   clock). */
#include "harness.h"
#include "fixture.h"
#include "probe.h"

static void test_next_expiry(void) {
    enum { N = 100 };
    fixture f;
    probe p[N];
    uint64_t rng = 12345;
    open_with_probes(&f, p, N, 17 * MS + 1, 8);
    CHECK_EQ(hwtimer_next_expiry(f.t), UINT64_MAX);
    CHECK_EQ(probe_schedule(&p[0], 3 * MS + 5), HWTIMER_OK);
    CHECK(hwtimer_next_expiry(f.t) <= probe_boundary(&p[0]));
    CHECK_EQ(probe_cancel(&p[0]), 1);
    CHECK_EQ(hwtimer_next_expiry(f.t), UINT64_MAX);
    CHECK_EQ(probe_schedule(&p[0], 3 * MS + 5), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, probe_boundary(&p[0])), 1);
    CHECK_EQ(hwtimer_next_expiry(f.t), UINT64_MAX);

    /* an event loop over random delays up to ~3 hours on a small wheel */
    probes_init(p, N, &f);
    schedule_random(p, N, &rng, MS, 10000 * SEC);
    drain_by_next_expiry(&f, p, N, 20 * N);
    fixture_close(&f);
}

/* An advance across a stretch where nothing is pending still moves the wheel to its target:
   a timeout then due within the finest level's rotation (ticks_per_wheel ticks: 96 to 104
   ms here) waits in that level, so next_expiry is its boundary exactly, and it runs without
   moving down a level (stats.cascaded). */
static void test_next_expiry_after_empty_advance(void) {
    fixture f;
    probe p;
    hwtimer_stats stats;
    open_with_probes(&f, &p, 1, 0, 8);
    CHECK_EQ(advance_to(&f, 100 * MS), 0);
    CHECK_EQ(probe_schedule(&p, MS), HWTIMER_OK);
    CHECK_EQ(hwtimer_next_expiry(f.t), 101 * MS);
    CHECK_EQ(advance_to(&f, 101 * MS), 1);
    hwtimer_stats_get(f.t, &stats);
    CHECK_EQ(stats.cascaded, 0);
    fixture_close(&f);
}

/* -1 when nothing is pending, else the rounded-up distance to hwtimer_next_expiry. */
static int expected_poll_timeout(const fixture *f) {
    uint64_t next = hwtimer_next_expiry(f->t);
    return next == UINT64_MAX ? -1 : test_ms_until(next, f->clock);
}

static void test_poll_timeout_ms(void) {
    fixture f;
    probe p;
    fixture_open(&f, 5 * US, US, 1u << 12);
    probe_init(&p, &f, 0);
    CHECK_EQ(hwtimer_poll_timeout_ms(f.t), -1);
    CHECK_EQ(probe_schedule(&p, 1500 * US), HWTIMER_OK);
    CHECK_EQ(hwtimer_poll_timeout_ms(f.t), expected_poll_timeout(&f));
    CHECK_EQ(hwtimer_poll_timeout_ms(f.t), 2);
    f.clock += 499 * US; /* 1001 us left */
    CHECK_EQ(hwtimer_poll_timeout_ms(f.t), 2);
    f.clock += 1 * US; /* 1000 us left */
    CHECK_EQ(hwtimer_poll_timeout_ms(f.t), 1);
    f.clock += 999 * US; /* 1 us left */
    CHECK_EQ(hwtimer_poll_timeout_ms(f.t), 1);
    f.clock += 1 * US; /* due, not yet run */
    CHECK_EQ(hwtimer_poll_timeout_ms(f.t), 0);
    f.clock += 1 * SEC; /* overdue */
    CHECK_EQ(hwtimer_poll_timeout_ms(f.t), 0);
    CHECK_EQ(advance_to(&f, f.clock), 1);
    CHECK_EQ(hwtimer_poll_timeout_ms(f.t), -1);
    CHECK_EQ(probe_schedule(&p, 0), HWTIMER_OK);
    CHECK_EQ(hwtimer_poll_timeout_ms(f.t), 0);
    fixture_close(&f);

    /* 27 days (more than INT_MAX ms) on one wheel level of 2^18 ticks of 10 s */
    fixture_open(&f, 3 * SEC, 10 * SEC, 1u << 18);
    probe_init(&p, &f, 0);
    CHECK_EQ(probe_schedule(&p, 27 * DAY), HWTIMER_OK);
    CHECK_EQ(hwtimer_poll_timeout_ms(f.t), expected_poll_timeout(&f));
    CHECK_EQ(hwtimer_poll_timeout_ms(f.t), INT_MAX);
    CHECK_EQ(probe_cancel(&p), 1);
    CHECK_EQ(probe_schedule(&p, UINT64_MAX), HWTIMER_OK);
    CHECK_EQ(hwtimer_poll_timeout_ms(f.t), expected_poll_timeout(&f));
    fixture_close(&f);
}

/* hwtimer_poll is hwtimer_advance(t, hwtimer_now(t)); hwtimer_now is the clock. */
static void test_poll(void) {
    fixture f;
    probe p[2];
    open_with_probes(&f, p, 2, 4 * MS + 4, 8);
    CHECK_EQ(hwtimer_now(f.t), f.clock);
    CHECK_EQ(probe_schedule(&p[0], 2 * MS), HWTIMER_OK);
    CHECK_EQ(probe_schedule(&p[1], 2 * MS + 1), HWTIMER_OK);
    f.clock = tick_at(&f, 2);
    CHECK_EQ(hwtimer_now(f.t), tick_at(&f, 2));
    CHECK_EQ(hwtimer_poll(f.t), 1);
    CHECK_EQ(p[0].ran_at, tick_at(&f, 2));
    f.clock = tick_at(&f, 3) - 1;
    CHECK_EQ(hwtimer_poll(f.t), 0);
    f.clock = tick_at(&f, 3);
    CHECK_EQ(hwtimer_poll(f.t), 1);
    CHECK_EQ(p[1].ran_at, tick_at(&f, 3));
    CHECK_EQ(hwtimer_poll(f.t), 0);
    fixture_close(&f);
}

int main(void) {
    RUN_TEST(test_next_expiry);
    RUN_TEST(test_next_expiry_after_empty_advance);
    RUN_TEST(test_poll_timeout_ms);
    RUN_TEST(test_poll);
    return test_finish();
}
