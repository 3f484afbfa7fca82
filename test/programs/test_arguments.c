/* test_arguments.c - NULL arguments and error texts: every public function fed NULL
   returns what hwtimer.h documents for it and changes nothing; hwtimer_strerror names every
   code and any other int. */
#include "harness.h"
#include "fixture.h"
#include "probe.h"


/* Each scheduling call with a NULL t, to or fn is EINVAL, whether the node is idle or
   pending (argument errors come first), and changes nothing. */
static void check_null_scheduling(fixture *r, probe *n) {
    hwtimer *t = r->t;
    hwtimer_timeout *to = &n->to;
    snapshot before = take_snapshot(t, to);
    CHECK_EQ(hwtimer_schedule(NULL, to, MS, probe_fn, n), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_schedule(t, NULL, MS, probe_fn, n), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_schedule(t, to, MS, NULL, n), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_schedule_at(NULL, to, MS, probe_fn, n), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_schedule_at(t, NULL, MS, probe_fn, n), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_schedule_at(t, to, MS, NULL, n), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_schedule_periodic(NULL, to, MS, MS, probe_fn, n), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_schedule_periodic(t, NULL, MS, MS, probe_fn, n), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_schedule_periodic(t, to, MS, MS, NULL, n), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_schedule_periodic(t, to, MS, 0, probe_fn, n), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_reschedule(NULL, to, MS), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_reschedule(t, NULL, MS), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_cancel(NULL, to), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_cancel(t, NULL), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_try_cancel(NULL, to), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_try_cancel(t, NULL), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_retire(NULL, to), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_retire(t, NULL), HWTIMER_EINVAL);
    CHECK_UNCHANGED(before, t, to);
}

/* The calls that take only a timer or only a node, with NULL: their documented results. */
static void check_null_queries(void) {
    hwtimer_stats stats;
    hwtimer_config_default(NULL);
    hwtimer_destroy(NULL);
    hwtimer_timeout_init(NULL);
    CHECK_EQ(hwtimer_create(NULL, NULL), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_timeout_state(NULL), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_timeout_deadline(NULL), 0);
    CHECK_EQ(hwtimer_pending(NULL), 0);
    CHECK_EQ(hwtimer_now(NULL), 0);
    CHECK_EQ(hwtimer_advance(NULL, UINT64_MAX), 0);
    CHECK_EQ(hwtimer_poll(NULL), 0);
    CHECK_EQ(hwtimer_next_expiry(NULL), UINT64_MAX);
    CHECK_EQ(hwtimer_poll_timeout_ms(NULL), -1);
    CHECK_EQ(hwtimer_start(NULL), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_stop(NULL, probe_fn, NULL), HWTIMER_EINVAL);
    memset(&stats, 0xff, sizeof stats);
    hwtimer_stats_get(NULL, &stats);
    CHECK_EQ(stats.wakeups + stats.passes + stats.fired + stats.cascaded, 0);
    CHECK_EQ(stats.pending + stats.bytes, 0);
}

static unsigned null_arg_runs;

static void null_arg_run(hwtimer_timeout *to, void *arg) {
    CHECK(to != NULL && arg == NULL);
    null_arg_runs++;
}

static void test_null_arguments(void) {
    fixture r;
    probe n[2];
    hwtimer_stats_get(NULL, NULL);
    check_null_queries();
    open_with_probes(&r, n, 2, 5 * SEC, 8);
    CHECK_EQ(probe_schedule(&n[1], 3 * MS), HWTIMER_OK);
    check_null_scheduling(&r, &n[0]); /* an idle probe */
    check_null_scheduling(&r, &n[1]); /* a pending one */
    /* one never scheduled cannot be rescheduled, even after the refused calls above */
    CHECK_EQ(hwtimer_reschedule(r.t, &n[0].to, MS), HWTIMER_EINVAL);
    hwtimer_stats_get(r.t, NULL);
    /* a NULL arg is the caller's business: the callback gets it back */
    null_arg_runs = 0;
    CHECK_EQ(hwtimer_schedule(r.t, &n[0].to, MS, null_arg_run, NULL), HWTIMER_OK);
    CHECK_EQ(advance_to(&r, r.start + 3 * MS), 2);
    CHECK_EQ(null_arg_runs + n[1].runs, 2);
    fixture_close(&r);
}

/* strerror names every code and says "unknown error" for anything else. */
static void test_strerror(void) {
    static const int unknown[] = {1, 2, -10, -100, INT_MIN, INT_MAX};
    const char *seen[10];
    int code, i, j;
    for (code = 0; code >= HWTIMER_ERETIRED; code--) {
        const char *text = hwtimer_strerror(code);
        CHECK(text != NULL && *text != '\0' && strcmp(text, "unknown error") != 0);
        seen[-code] = text;
        for (j = 0; j < -code; j++) CHECK(strcmp(seen[j], text) != 0);
    }
    for (i = 0; i < (int)(sizeof unknown / sizeof unknown[0]); i++)
        CHECK(strcmp(hwtimer_strerror(unknown[i]), "unknown error") == 0);
}

int main(void) {
    RUN_TEST(test_null_arguments);
    RUN_TEST(test_strerror);
    return test_finish();
}
