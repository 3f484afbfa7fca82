/* test_lateness.c - hwtimer_stats.late_max_ns and late_runs, exact on a fake clock: a
   callback's lateness is the `now` of the advance that ran it (with timeouts left by
   hwtimer_advance_max, a `now` behind the last counts as the last) minus its deadline D,
   or with a worker its clock reading when the pass began; late_max_ns is the largest
   since hwtimer_create, late_runs counts the runs later than tick_ns + their leeway. */
#include "harness.h"
#include "fixture.h"
#include "probe.h"
#include "harness_threads.h"

static void expect_late(const fixture *f, uint64_t max_ns, uint64_t runs) {
    hwtimer_stats stats;
    hwtimer_stats_get(f->t, &stats);
    CHECK_EQ(stats.late_max_ns, max_ns);
    CHECK_EQ(stats.late_runs, runs);
}

/* On time (at B, within a tick of D), a tick late exactly (not counted), more. */
static void test_lateness_counts(void) {
    probe p[4];
    fixture f;
    open_with_probes(&f, p, 4, 0, 8);
    expect_late(&f, 0, 0);
    CHECK_EQ(probe_schedule_at(&p[0], 2 * MS + 300 * US), HWTIMER_OK); /* B = 3 ms */
    CHECK_EQ(advance_to(&f, 3 * MS), 1);
    expect_late(&f, 700 * US, 0);
    CHECK_EQ(probe_schedule_at(&p[1], 4 * MS), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, 5 * MS), 1); /* 1 ms = tick_ns: not more */
    expect_late(&f, MS, 0);
    CHECK_EQ(probe_schedule_at(&p[2], 6 * MS), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, 7 * MS + 1), 1); /* 1 ms + 1 ns */
    expect_late(&f, MS + 1, 1);
    CHECK_EQ(probe_schedule_at(&p[3], 8 * MS), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, 8 * MS + 500 * US), 1); /* less late: the max stays */
    expect_late(&f, MS + 1, 1);
    fixture_close(&f);
}

/* The leeway is allowed on top of the tick: with a 10 ms leeway 11 ms late is not
   counted, 12 ms is; with 2 ms, 5 ms is. */
static void test_lateness_with_leeway(void) {
    probe p[3];
    fixture f;
    open_with_probes(&f, p, 3, 0, 64);
    CHECK_EQ(hwtimer_timeout_set_leeway(&p[0].to, 10 * MS), HWTIMER_OK);
    CHECK_EQ(hwtimer_timeout_set_leeway(&p[1].to, 10 * MS), HWTIMER_OK);
    CHECK_EQ(hwtimer_timeout_set_leeway(&p[2].to, 2 * MS), HWTIMER_OK);
    CHECK_EQ(probe_schedule_at(&p[0], 20 * MS), HWTIMER_OK);
    CHECK_EQ(probe_schedule_at(&p[1], 21 * MS), HWTIMER_OK);
    CHECK_EQ(probe_schedule_at(&p[2], 27 * MS), HWTIMER_OK); /* grid: 28 ms */
    CHECK_EQ(advance_to(&f, 32 * MS), 3); /* 12, 11 and 5 ms late */
    expect_late(&f, 12 * MS, 2);
    fixture_close(&f);
}

/* A periodic run is late from the D of that run; its next run counts from the next D. */
static void test_lateness_periodic(void) {
    probe p;
    fixture f;
    open_with_probes(&f, &p, 1, 0, 8);
    CHECK_EQ(probe_schedule_periodic(&p, MS, MS), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, 5 * MS + 500 * US), 1); /* D = 1 ms: 4.5 ms late */
    expect_late(&f, 4500 * US, 1);
    CHECK_EQ(hwtimer_timeout_deadline(&p.to), 6 * MS);
    CHECK_EQ(advance_to(&f, 6 * MS), 1);
    CHECK_EQ(advance_to(&f, 7 * MS), 1);
    expect_late(&f, 4500 * US, 1);
    CHECK_EQ(advance_to(&f, 9 * MS), 1); /* D = 8 ms: 1 ms */
    expect_late(&f, 4500 * US, 1);
    fixture_close(&f);
}

/* Left by hwtimer_advance_max, a timeout is late by the now of the call that runs it; a
   now behind the last counts as the last. */
static void test_lateness_left(void) {
    probe p[3];
    fixture f;
    open_with_probes(&f, p, 3, 0, 8);
    CHECK_EQ(probe_schedule_at(&p[0], 2 * MS), HWTIMER_OK);
    CHECK_EQ(probe_schedule_at(&p[1], 2 * MS), HWTIMER_OK);
    CHECK_EQ(probe_schedule_at(&p[2], 2 * MS), HWTIMER_OK);
    CHECK_EQ(hwtimer_advance_max(f.t, 2 * MS, 1), 1);
    expect_late(&f, 0, 0);
    CHECK_EQ(hwtimer_advance_max(f.t, 9 * MS, 1), 1);
    expect_late(&f, 7 * MS, 1);
    CHECK_EQ(hwtimer_advance_max(f.t, 3 * MS, 1), 1); /* behind: counts as 9 ms */
    expect_late(&f, 7 * MS, 2);
    fixture_close(&f);
}

/* A worker's lateness uses its clock reading: the fake clock stands at 8 ms. */
static void test_lateness_worker(void) {
    hwtimer_stats stats;
    hwtimer *t;
    probe p;
    test_u64 clock = 8 * MS;
    if (!test_threads()) return;
    t = test_fake_worker(&clock, MS, 8);
    probe_init(&p, NULL, 0);
    CHECK_EQ(hwtimer_schedule_at(t, &p.to, 9 * MS, probe_fn, &p), HWTIMER_OK);
    ATOMIC_SET(&clock, 9 * MS + 250 * US); /* due; the worker wakes within its wait's
                                              bound (1 ms) */
    CHECK(wait_for_count(&p.runs, 1, 5 * SEC));
    hwtimer_stop(t, NULL, NULL);
    hwtimer_stats_get(t, &stats);
    CHECK_EQ(stats.late_max_ns, 250 * US);
    CHECK_EQ(stats.late_runs, 0);
    hwtimer_destroy(t);
}

int main(void) {
    RUN_TEST(test_lateness_counts);
    RUN_TEST(test_lateness_with_leeway);
    RUN_TEST(test_lateness_periodic);
    RUN_TEST(test_lateness_left);
    RUN_TEST(test_lateness_worker);
    return test_finish();
}
