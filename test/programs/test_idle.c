/* test_idle.c - the worker does not wake while nothing is due.

   As hwtimer.h documents, the worker "sleeps until the next boundary that has work: no
   wake-ups while nothing is due". The claim to check is "at most one wake-up in 10 s"
   with nothing due or with one timeout 60 s away, on a 1 ms tick, where a worker that
   ticks (Netty before its busy-spin fixes, see Netty #8277, #1246, #9710) wakes 1000
   times a second or spins.

   What is measured: hwtimer_stats.wakeups (returns from the worker's wait) and .passes over
   a WINDOW of 2.5 s, on several timers at once, each in its own scenario; and the process's
   CPU time over the same window. With nothing due the expected count is 0 whatever the
   window, so the 10 s claim is checked as "at most one wake-up in 2.5 s" (one is allowed:
   a spurious wake-up, or the stale wake described below). A ticking worker shows ~2500 and
   a spinning one shows a full core of CPU time. The CPU bound is loose (10% of one core)
   and catches spinning, not small costs. Last, the count is not stuck at 0: a sleeping
   worker woken for a timeout counts its wake-up. */
#include "harness.h"
#include "harness_threads.h"

#define WINDOW (2500 * MS)

typedef struct scenario scenario;
typedef struct scenario_kind {
    const char *name;
    uint32_t ticks_per_wheel;
    void (*begin)(scenario *s);
} scenario_kind;

struct scenario {
    const scenario_kind *kind;
    hwtimer *t;
    hwtimer_timeout node;
    hwtimer_stats before;
    unsigned runs; /* atomic */
    size_t pending; /* expected during the window */
};

static void open_timer(scenario *s) {
    s->t = worker_timer(1 * MS, s->kind->ticks_per_wheel);
}

/* A 1 ms timeout that ran: the worker was busy, now nothing is due. */
static void begin_after_work(scenario *s) {
    open_timer(s);
    CHECK_EQ(hwtimer_schedule(s->t, &s->node, 1 * MS, count_runs, &s->runs), HWTIMER_OK);
    CHECK(wait_for_count(&s->runs, 1, 3 * SEC));
}

/* Started with nothing ever scheduled. */
static void begin_never_used(scenario *s) {
    open_timer(s);
    CHECK_EQ(hwtimer_start(s->t), HWTIMER_OK);
}

/* One timeout 60 s away: the worker sleeps until its slot (on a small wheel, until the
   coarse slot it must move down from; both lie past the window). */
static void begin_far(scenario *s) {
    open_timer(s);
    CHECK_EQ(hwtimer_schedule(s->t, &s->node, 60 * SEC, count_runs, &s->runs), HWTIMER_OK);
    s->pending = 1;
}

/* A timeout 1 s away, cancelled: the worker still sleeps toward its old boundary, wakes
   there once (a stale wake-up: cancel does not wake it), finds nothing and sleeps for good. */
static void begin_cancelled(scenario *s) {
    open_timer(s);
    CHECK_EQ(hwtimer_schedule(s->t, &s->node, 1 * SEC, count_runs, &s->runs), HWTIMER_OK);
    sleep_ns(50 * MS); /* the worker is asleep now */
    CHECK_EQ(hwtimer_cancel(s->t, &s->node), 1);
}

static const scenario_kind kinds[] = {
    {"nothing due after work", 512, begin_after_work},
    {"nothing ever due", 512, begin_never_used},
    {"one timeout 60 s away", 512, begin_far},
    {"one timeout 60 s away, 8-slot wheel", 8, begin_far},
    {"only timeout cancelled", 512, begin_cancelled},
};
#define SCENARIOS (sizeof kinds / sizeof kinds[0])

static scenario scenarios[SCENARIOS];

static void check_quiet(const scenario *s) {
    hwtimer_stats after;
    uint64_t wakeups, passes;
    hwtimer_stats_get(s->t, &after);
    wakeups = after.wakeups - s->before.wakeups;
    passes = after.passes - s->before.passes;
    printf("%-38s %llu wake-ups, %llu passes in %llu ms\n", s->kind->name,
           (unsigned long long)wakeups, (unsigned long long)passes,
           (unsigned long long)(WINDOW / MS));
    CHECK(wakeups <= 1);
    CHECK(passes <= 1);
    CHECK_EQ(after.pending, s->pending);
    CHECK_EQ(after.fired, s->before.fired);
}

static void test_worker_sleeps_while_nothing_is_due(void) {
    size_t i;
    clock_t cpu_before, cpu_used;
    for (i = 0; i < SCENARIOS; i++) {
        scenarios[i].kind = &kinds[i];
        kinds[i].begin(&scenarios[i]);
    }
    sleep_ns(100 * MS); /* the wake-up a schedule may cause is over */
    for (i = 0; i < SCENARIOS; i++) hwtimer_stats_get(scenarios[i].t, &scenarios[i].before);
    cpu_before = clock();
    sleep_ns(WINDOW);
    cpu_used = clock() - cpu_before;
    for (i = 0; i < SCENARIOS; i++) check_quiet(&scenarios[i]);
    printf("CPU time of the whole process in the window: %.1f ms\n",
           (double)cpu_used * 1000.0 / CLOCKS_PER_SEC);
    CHECK((double)cpu_used / CLOCKS_PER_SEC < 0.1 * (double)WINDOW / (double)SEC);
    for (i = 0; i < SCENARIOS; i++) {
        CHECK_EQ(hwtimer_stop(scenarios[i].t, NULL, NULL), scenarios[i].pending);
        hwtimer_destroy(scenarios[i].t);
    }
}

/* And the count is of real wake-ups: a worker asleep with nothing due wakes for a timeout
   scheduled 20 ms ahead, and returns from its wait at least once to run it. */
static void test_worker_wakes_for_what_is_due(void) {
    scenario s;
    hwtimer_stats after;
    memset(&s, 0, sizeof s);
    s.kind = &kinds[1];
    begin_never_used(&s);
    sleep_ns(50 * MS); /* asleep, nothing due */
    hwtimer_stats_get(s.t, &s.before);
    CHECK_EQ(hwtimer_schedule(s.t, &s.node, 20 * MS, count_runs, &s.runs), HWTIMER_OK);
    CHECK(wait_for_count(&s.runs, 1, 3 * SEC));
    hwtimer_stats_get(s.t, &after);
    CHECK(after.wakeups >= s.before.wakeups + 1);
    CHECK_EQ(after.fired, 1);
    CHECK_EQ(hwtimer_stop(s.t, NULL, NULL), 0);
    hwtimer_destroy(s.t);
}

int main(void) {
    RUN_TEST(test_worker_sleeps_while_nothing_is_due);
    RUN_TEST(test_worker_wakes_for_what_is_due);
    return test_finish();
}
