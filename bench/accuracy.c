/* accuracy.c - scenario 6, the worker's accuracy: 10^5 timeouts with delays uniform in
   [1 ms, 1 s] at ns resolution on hwtimer's worker (1 ms tick, the platform's clock), each
   callback's lateness after its deadline: p50, p99, max, and early firings (none allowed);
   Netty's beside them. */
#define _POSIX_C_SOURCE 200809L
#include "hwtimer.h"

#include "bench.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct accuracy {
    hwtimer_timeout *nodes;
    int64_t *late_ns;
    size_t done; /* atomic: callbacks finished */
} accuracy;

static void accuracy_fire(hwtimer_timeout *to, void *arg) {
    accuracy *a = (accuracy *)arg;
    uint64_t now = bench_wall_ns();
    a->late_ns[to - a->nodes] = (int64_t)(now - hwtimer_timeout_deadline(to));
    __atomic_add_fetch(&a->done, 1, __ATOMIC_RELEASE);
}

static int compare_i64(const void *x, const void *y) {
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

/* Waits for n callbacks, at most the longest delay plus 5 s; returns how many ran. */
static size_t wait_done(accuracy *a, size_t n, uint32_t max_ms) {
    uint64_t give_up = bench_wall_ns() + (max_ms + 5000u) * BENCH_MS;
    size_t done;
    while ((done = __atomic_load_n(&a->done, __ATOMIC_ACQUIRE)) < n && bench_wall_ns() < give_up) {
        bench_sleep_ns(10 * BENCH_MS);
    }
    return done;
}

static void record_lateness(int64_t *late, size_t n) {
    size_t early = 0;
    qsort(late, n, sizeof *late, compare_i64);
    for (size_t i = 0; i < n && late[i] < 0; i++) {
        early++;
    }
    bench_record(SCENARIO_ACCURACY,
                 "hwtimer_worker", n, "lateness p50", (double)late[n / 2] / 1e3, "µs");
    bench_record(SCENARIO_ACCURACY,
                 "hwtimer_worker", n, "lateness p99", (double)late[n * 99 / 100] / 1e3, "µs");
    bench_record(SCENARIO_ACCURACY,
                 "hwtimer_worker", n, "lateness max", (double)late[n - 1] / 1e3, "µs");
    bench_record(SCENARIO_ACCURACY, "hwtimer_worker", n, "early firings", (double)early, "count");
    if (early) {
        fprintf(stderr, "FAIL scenario 6: %zu timeouts fired before their deadline\n", early);
    }
}

static int measure_accuracy(const bench_options *o) {
    size_t n = o->accuracy_timers;
    uint64_t seed = BENCH_SEED + 6, span = (uint64_t)(o->accuracy_max_ms - 1) * BENCH_MS;
    accuracy a = {NULL, NULL, 0};
    if (!hwtimer_threads_pthread()) {
        bench_note(SCENARIO_ACCURACY, "hwtimer: skipped, this build has no POSIX threads backend");
        return 0;
    }
    fprintf(stderr, "  scenario 6: hwtimer worker, %zu timers\n", n);
    a.nodes = (hwtimer_timeout *)bench_xcalloc(n, sizeof *a.nodes);
    a.late_ns = (int64_t *)bench_xcalloc(n, sizeof *a.late_ns);
    /* a worker on the platform's clock, 1 ms tick */
    hwtimer *t = bench_hwtimer_make(hwtimer_threads_pthread(), 1, NULL, NULL, 512, 0);
    for (size_t i = 0; i < n; i++) {
        uint64_t delay = BENCH_MS + bench_rand_next(&seed) % span; /* ns resolution */
        hwtimer_schedule(t, &a.nodes[i], delay, accuracy_fire, &a);
    }
    size_t done = wait_done(&a, n, o->accuracy_max_ms);
    hwtimer_destroy(t);
    int failed = done != n;
    if (failed) {
        fprintf(stderr, "FAIL scenario 6: %zu of %zu callbacks ran\n", done, n);
    } else {
        record_lateness(a.late_ns, n);
        failed = a.late_ns[0] < 0;
    }
    bench_note(SCENARIO_ACCURACY,
               "Delays uniform in [1 ms, %u ms] at ns resolution, on a 1 ms tick: a timeout "
               "runs at the first tick boundary at or after its deadline, so up to 1 ms of "
               "lateness is by design and the rest is the OS waking the worker. Netty: "
               "System.nanoTime() in the task minus (nanoTime before newTimeout + delay).",
               o->accuracy_max_ms);
    free(a.nodes);
    free(a.late_ns);
    return failed;
}

int scenario_accuracy(const bench_options *o, const uint32_t *delay_ms) {
    int failures = measure_accuracy(o);
    (void)delay_ms; /* its own delays */
    bench_print_table(SCENARIO_ACCURACY, "Accuracy: worker mode, 1 ms tick, random delays up "
                                         "to 1 s (lateness after the deadline)",
                      "hwtimer_worker");
    return failures;
}
