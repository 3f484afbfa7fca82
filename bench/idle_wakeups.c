/* idle_wakeups.c - scenario 7, the idle cost: hwtimer's worker with nothing pending, and
   with one timeout due in an hour, over a couple of seconds: its wake-ups per second
   (hwtimer_stats.wakeups); Netty's worker's beside them. */
#define _POSIX_C_SOURCE 200809L
#include "hwtimer.h"

#include "bench.h"

#include <stdio.h>

/* A 1 ms timer with a worker, on the platform's clock. */
static hwtimer *worker_timer(void) {
    return bench_hwtimer_make(hwtimer_threads_pthread(), 1, NULL, NULL, 512, 0);
}

static uint64_t worker_wakeups(hwtimer *t) {
    hwtimer_stats s;
    hwtimer_stats_get(t, &s);
    return s.wakeups;
}

static int measure_idle(const bench_options *o) {
    hwtimer_timeout far = HWTIMER_TIMEOUT_INIT;
    if (!hwtimer_threads_pthread()) {
        bench_note(SCENARIO_IDLE_WAKEUPS,
                   "hwtimer: skipped, this build has no POSIX threads backend");
        return 0;
    }
    fprintf(stderr, "  scenario 7: hwtimer worker idle for %.1f s\n", (double)o->idle_ns / 1e9);
    hwtimer *empty = worker_timer(), *one = worker_timer();
    hwtimer_start(empty);
    hwtimer_schedule(one, &far, 3600000 * BENCH_MS, bench_hwtimer_never_called, NULL);
    bench_sleep_ns(100 * BENCH_MS); /* let both workers settle into their wait */
    uint64_t e0 = worker_wakeups(empty), o0 = worker_wakeups(one), t0 = bench_wall_ns();
    bench_sleep_ns(o->idle_ns);
    double secs = (double)(bench_wall_ns() - t0) / 1e9;
    bench_record(SCENARIO_IDLE_WAKEUPS, "hwtimer_worker", 0, "nothing pending",
                 (double)(worker_wakeups(empty) - e0) / secs, "wake-ups/s");
    bench_record(SCENARIO_IDLE_WAKEUPS, "hwtimer_worker", 0, "one timeout due in 1 h",
                 (double)(worker_wakeups(one) - o0) / secs, "wake-ups/s");
    hwtimer_destroy(empty);
    hwtimer_destroy(one);
    bench_note(SCENARIO_IDLE_WAKEUPS,
               "hwtimer: hwtimer_stats.wakeups (returns from the worker's wait) over %.1f s, "
               "1 ms tick. Netty: voluntary context switches of its worker thread over the "
               "same time, read from /proc (it sleeps until every tick: 1000/s computed).",
               secs);
    return 0;
}

int scenario_idle_wakeups(const bench_options *o, const uint32_t *delay_ms) {
    int failures = measure_idle(o);
    (void)delay_ms; /* its own delays */
    bench_print_table(SCENARIO_IDLE_WAKEUPS,
                      "Idle cost: worker wake-ups per second with nothing due", "hwtimer_worker");
    return failures;
}
