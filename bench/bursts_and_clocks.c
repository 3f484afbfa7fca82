/* bursts_and_clocks.c - scenario 11: what a loop pays when timeouts expire, and what the
   clock costs.

   - A burst: N timeouts (10^5 by default) due at the same tick on a caller-driven timer
     (no locks, a fake clock), each callback a few stores. The loop's longest stretch
     without returning: one hwtimer_advance, then hwtimer_advance_max with a bound of 1000
     (and 100) called until nothing is left, its longest call, its number of calls and its
     total. Best of 3 runs.
   - The clock: hwtimer_schedule (which reads the clock) of 10^5 timeouts with scenario 1's
     delays, caller-driven, and the worker's schedule+cancel pair (one producer, windows of
     1024 as scenario 5), each with the default clock (CLOCK_MONOTONIC) and with
     cfg.coarse_clock (CLOCK_MONOTONIC_COARSE, deadlines G later), in alternating rounds,
     the median of each; Netty's pair beside them, from scenario 5 when the run has it.
   - Lateness with a worker (scenario 6's measure: the callback's CLOCK_MONOTONIC minus
     its deadline, 10^4 delays up to 200 ms) beside hwtimer_stats' late_max_ns and
     late_runs, with each clock.
   - An idle minute: a periodic timeout every 100 ms and 6 one-shots spread over the
     window, pending on a worker (this thread asleep) and on a loop that sleeps in
     poll(NULL, 0, hwtimer_poll_timeout_ms) then calls hwtimer_poll, each with the default
     and the coarse clock, one after the other: the wake-ups (stats.wakeups; the loop's
     iterations), the callbacks and the process's CPU time, measured over IDLE_WINDOW_NS
     of real time (200 ms with --smoke) and scaled to IDLE_MINUTE_NS. With the coarse
     clock lagging a deadline already passed, a spin would show as thousands of wake-ups
     and the CPU time they cost. */
#define _POSIX_C_SOURCE 200809L
#include "hwtimer.h"

#include "bench.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A row of this scenario. */
static void record(const char *peer, uint64_t n, const char *metric, double value,
                   const char *unit) {
    bench_record(SCENARIO_BURSTS_AND_CLOCKS, peer, n, metric, value, unit);
}

/* ---- the burst ---- */

typedef struct burst {
    hwtimer_timeout *nodes;
    uint64_t *seen; /* what each callback writes: a loop's callback does some work */
    uint64_t now;   /* the fake clock */
    size_t fired;
} burst;

static uint64_t burst_clock(void *ctx) {
    return ((const burst *)ctx)->now;
}

static void burst_fire(hwtimer_timeout *to, void *arg) {
    burst *b = (burst *)arg;
    size_t i = (size_t)(to - b->nodes);
    b->seen[i] = b->now ^ (uint64_t)i;
    b->fired++;
}

/* One burst of n, expired by calls bounded by `bound` (0: one hwtimer_advance): the
   longest call, the number of calls and their total, in ns. */
static void burst_run(burst *b, size_t n, size_t bound, uint64_t *longest, uint64_t *calls,
                      uint64_t *total) {
    hwtimer *t;
    size_t ran;
    b->now = 0; /* (before the timer reads its start: the burst then waits in a slot) */
    b->fired = 0;
    t = bench_hwtimer_make(NULL, 0, burst_clock, b, 512, 0);
    for (size_t i = 0; i < n; i++) {
        hwtimer_schedule_at(t, &b->nodes[i], 10 * BENCH_MS, burst_fire, b);
    }
    b->now = 10 * BENCH_MS;
    *longest = *calls = *total = 0;
    do {
        uint64_t t0 = bench_wall_ns();
        ran = hwtimer_advance_max(t, b->now, bound);
        uint64_t took = bench_wall_ns() - t0;
        *longest = took > *longest ? took : *longest;
        *total += took;
        ++*calls;
    } while (ran > 0 && hwtimer_pending(t) > 0);
    if (b->fired != n) {
        fprintf(stderr, "FAIL scenario 11: %zu of %zu burst callbacks ran\n", b->fired, n);
        exit(1);
    }
    hwtimer_destroy(t);
}

static void burst_measure(size_t n) {
    static const size_t bounds[] = {0, 1000, 100};
    burst b = {NULL, NULL, 0, 0};
    b.nodes = (hwtimer_timeout *)bench_xcalloc(n, sizeof *b.nodes);
    b.seen = (uint64_t *)bench_xcalloc(n, sizeof *b.seen);
    fprintf(stderr, "  scenario 11: a burst of %zu\n", n);
    for (size_t k = 0; k < sizeof bounds / sizeof bounds[0]; k++) {
        uint64_t best_longest = UINT64_MAX, best_total = UINT64_MAX, calls = 0;
        for (int run = 0; run < 3; run++) {
            uint64_t longest, total;
            burst_run(&b, n, bounds[k], &longest, &calls, &total);
            best_longest = longest < best_longest ? longest : best_longest;
            best_total = total < best_total ? total : best_total;
        }
        char metric[96];
        if (bounds[k] == 0) {
            snprintf(metric, sizeof metric, "burst: longest call, hwtimer_advance");
        } else {
            snprintf(metric, sizeof metric, "burst: longest call, advance_max %zu", bounds[k]);
        }
        record("hwtimer", n, metric, (double)best_longest / 1e3, "µs");
        if (bounds[k] != 0) {
            snprintf(metric, sizeof metric, "burst: calls of advance_max %zu", bounds[k]);
            record("hwtimer", n, metric, (double)calls, "count");
        }
        if (bounds[k] == 0) {
            snprintf(metric, sizeof metric, "burst: all calls, hwtimer_advance");
        } else {
            snprintf(metric, sizeof metric, "burst: all calls, advance_max %zu", bounds[k]);
        }
        record("hwtimer", n, metric, (double)best_total / 1e3, "µs");
    }
    free(b.nodes);
    free(b.seen);
}

/* ---- the clock ---- */

static hwtimer *clock_timer(const hwtimer_threads *threads, int worker, int coarse) {
    hwtimer_config cfg;
    bench_hwtimer_config(&cfg, threads, worker, NULL, NULL, 512, 0);
    cfg.coarse_clock = coarse;
    return bench_hwtimer_create(&cfg);
}

/* ns per hwtimer_schedule of n nodes (the clock read each time), then cancelled. */
static double schedule_ns(int coarse, hwtimer_timeout *nodes, const uint32_t *delay_ms,
                          size_t n) {
    hwtimer *t = clock_timer(NULL, 0, coarse);
    uint64_t t0 = bench_wall_ns();
    for (size_t i = 0; i < n; i++) {
        hwtimer_schedule(t, &nodes[i], delay_ms[i] * BENCH_MS, bench_hwtimer_never_called,
                         NULL);
    }
    uint64_t took = bench_wall_ns() - t0;
    for (size_t i = 0; i < n; i++) hwtimer_cancel(t, &nodes[i]);
    hwtimer_destroy(t);
    return (double)took / (double)n;
}

#define PAIR_WINDOW 1024u

/* ns per schedule+cancel pair against a worker (one producer: this thread), in windows
   of `window` (at most the n nodes there are). */
static double pair_ns(int coarse, hwtimer_timeout *nodes, const uint32_t *delay_ms,
                      size_t window, size_t pairs) {
    hwtimer *t = clock_timer(hwtimer_threads_pthread(), 1, coarse);
    size_t rounds = pairs / window + 1;
    hwtimer_start(t);
    uint64_t t0 = bench_wall_ns();
    for (size_t r = 0; r < rounds; r++) {
        for (size_t i = 0; i < window; i++) {
            hwtimer_schedule(t, &nodes[i], delay_ms[i] * BENCH_MS, bench_hwtimer_never_called,
                         NULL);
        }
        for (size_t i = 0; i < window; i++) hwtimer_cancel(t, &nodes[i]);
    }
    uint64_t took = bench_wall_ns() - t0;
    hwtimer_destroy(t);
    return (double)took / (double)(rounds * window);
}

static int compare_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_of(double *v, unsigned n) {
    qsort(v, n, sizeof *v, compare_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#define CLOCK_ROUNDS 7u

static void clock_measure(const uint32_t *delay_ms, size_t n, size_t pairs) {
    static const char *const clocks[] = {"default clock", "coarse clock"};
    double sched[2][CLOCK_ROUNDS], pair[2][CLOCK_ROUNDS];
    hwtimer_timeout *nodes = (hwtimer_timeout *)bench_xcalloc(n, sizeof *nodes);
    int threads = hwtimer_threads_pthread() != NULL;
    fprintf(stderr, "  scenario 11: the clock, %zu schedules, %zu pairs\n", n, pairs);
    for (unsigned r = 0; r < CLOCK_ROUNDS; r++) {
        for (int c = 0; c < 2; c++) { /* alternating: drift falls on both alike */
            int coarse = (int)(r % 2) ^ c;
            sched[coarse][r] = schedule_ns(coarse, nodes, delay_ms, n);
            if (threads) {
                pair[coarse][r] = pair_ns(coarse, nodes, delay_ms,
                                          n < PAIR_WINDOW ? n : PAIR_WINDOW, pairs);
            }
        }
    }
    for (int c = 0; c < 2; c++) {
        char metric[96];
        snprintf(metric, sizeof metric, "hwtimer_schedule, %s", clocks[c]);
        record("hwtimer", n, metric, median_of(sched[c], CLOCK_ROUNDS), "ns/op");
        if (!threads) continue;
        snprintf(metric, sizeof metric, "schedule+cancel pair, %s", clocks[c]);
        record("hwtimer_worker", n, metric, median_of(pair[c], CLOCK_ROUNDS),
               "ns/pair");
    }
    { /* Netty's pair beside them, from scenario 5 of the same run (one producer; its
         worker reads its own clock, System.nanoTime) */
        double netty_mpairs;
        if (threads &&
            bench_lookup(SCENARIO_PRODUCERS, "netty", 0, "1 producer thread", &netty_mpairs) &&
            netty_mpairs > 0) {
            record("netty", n, "schedule+cancel pair, default clock",
                   1e3 / netty_mpairs, "ns/pair");
        }
    }
    free(nodes);
}

/* ---- lateness ---- */

typedef struct lateness {
    hwtimer_timeout *nodes;
    int64_t *late_ns;
    size_t done; /* atomic */
} lateness;

static void lateness_fire(hwtimer_timeout *to, void *arg) {
    lateness *l = (lateness *)arg;
    l->late_ns[to - l->nodes] = (int64_t)(bench_wall_ns() - hwtimer_timeout_deadline(to));
    __atomic_add_fetch(&l->done, 1, __ATOMIC_RELEASE);
}

static int compare_i64(const void *x, const void *y) {
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

/* The worker's lateness with each clock: its callbacks' own measure, and the counters.
   Returns the number of early runs or lost callbacks. */
static int lateness_measure(size_t n, uint32_t max_ms) {
    static const char *const clocks[] = {"default clock", "coarse clock"};
    int failures = 0;
    if (!hwtimer_threads_pthread()) return 0;
    fprintf(stderr, "  scenario 11: worker lateness, %zu timers\n", n);
    for (int coarse = 0; coarse < 2; coarse++) {
        lateness l = {NULL, NULL, 0};
        uint64_t seed = BENCH_SEED + 11, span = (uint64_t)(max_ms - 1) * BENCH_MS;
        hwtimer_stats stats;
        char metric[96];
        l.nodes = (hwtimer_timeout *)bench_xcalloc(n, sizeof *l.nodes);
        l.late_ns = (int64_t *)bench_xcalloc(n, sizeof *l.late_ns);
        hwtimer *t = clock_timer(hwtimer_threads_pthread(), 1, coarse);
        for (size_t i = 0; i < n; i++) {
            hwtimer_schedule(t, &l.nodes[i], BENCH_MS + bench_rand_next(&seed) % span,
                             lateness_fire, &l);
        }
        uint64_t give_up = bench_wall_ns() + (max_ms + 5000u) * BENCH_MS;
        while (__atomic_load_n(&l.done, __ATOMIC_ACQUIRE) < n && bench_wall_ns() < give_up) {
            bench_sleep_ns(10 * BENCH_MS);
        }
        hwtimer_stop(t, NULL, NULL);
        hwtimer_stats_get(t, &stats);
        hwtimer_destroy(t);
        if (l.done != n) {
            fprintf(stderr, "FAIL scenario 11: %zu of %zu callbacks ran\n", l.done, n);
            failures++;
        } else {
            qsort(l.late_ns, n, sizeof *l.late_ns, compare_i64);
            failures += l.late_ns[0] < 0;
            snprintf(metric, sizeof metric, "lateness max (callbacks' clock), %s", clocks[coarse]);
            record("hwtimer_worker", n, metric, (double)l.late_ns[n - 1] / 1e3, "µs");
            snprintf(metric, sizeof metric, "lateness p99 (callbacks' clock), %s", clocks[coarse]);
            record("hwtimer_worker", n, metric,
                   (double)l.late_ns[n * 99 / 100] / 1e3, "µs");
            snprintf(metric, sizeof metric, "stats.late_max_ns, %s", clocks[coarse]);
            record("hwtimer_worker", n, metric, (double)stats.late_max_ns / 1e3, "µs");
            snprintf(metric, sizeof metric, "stats.late_runs, %s", clocks[coarse]);
            record("hwtimer_worker", n, metric, (double)stats.late_runs, "count");
        }
        free(l.nodes);
        free(l.late_ns);
    }
    return failures;
}

/* ---- the idle minute ---- */

#define IDLE_MINUTE_NS (60000ull * BENCH_MS) /* what the rows count per */
#define IDLE_WINDOW_NS (15000ull * BENCH_MS) /* real time measured per case and clock */
#define IDLE_SMOKE_NS (200ull * BENCH_MS)    /* the same with --smoke */
#define IDLE_PERIOD_NS (100ull * BENCH_MS)   /* the periodic timeout's */
#define IDLE_ONESHOTS 6u                     /* one-shots, due at window * k / 7 */

typedef struct idle_case {
    hwtimer_timeout periodic, oneshots[IDLE_ONESHOTS];
    uint64_t fired; /* atomic: every callback */
    uint64_t early; /* atomic: one-shots run before their deadline on CLOCK_MONOTONIC */
    uint64_t oneshots_fired; /* atomic */
} idle_case;

static void idle_tick(hwtimer_timeout *to, void *arg) {
    (void)to;
    __atomic_add_fetch(&((idle_case *)arg)->fired, 1, __ATOMIC_RELAXED);
}

static void idle_oneshot(hwtimer_timeout *to, void *arg) {
    idle_case *c = (idle_case *)arg;
    if (bench_wall_ns() < hwtimer_timeout_deadline(to)) {
        __atomic_add_fetch(&c->early, 1, __ATOMIC_RELAXED);
    }
    __atomic_add_fetch(&c->oneshots_fired, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&c->fired, 1, __ATOMIC_RELAXED);
}

static void idle_arm(hwtimer *t, idle_case *c, uint64_t window) {
    if (hwtimer_schedule_periodic(t, &c->periodic, IDLE_PERIOD_NS, IDLE_PERIOD_NS, idle_tick,
                                  c) != HWTIMER_OK) {
        fprintf(stderr, "scenario 11: hwtimer_schedule_periodic failed\n");
        exit(2);
    }
    for (unsigned k = 0; k < IDLE_ONESHOTS; k++) {
        uint64_t at = window * (k + 1) / (IDLE_ONESHOTS + 1);
        if (hwtimer_schedule(t, &c->oneshots[k], at, idle_oneshot, c) != HWTIMER_OK) {
            fprintf(stderr, "scenario 11: hwtimer_schedule failed\n");
            exit(2);
        }
    }
}

/* One case over `window` of real time: worker (1) or loop (0), with the clock `coarse`.
   Its wake-ups, callbacks and CPU ns, and the span it measured; returns its failures. */
static int idle_run(int worker, int coarse, uint64_t window, uint64_t *wakeups,
                    uint64_t *callbacks, uint64_t *cpu_ns, uint64_t *span_ns) {
    idle_case c;
    hwtimer_stats s0, s1;
    int failures = 0;
    memset(&c, 0, sizeof c);
    c.periodic = (hwtimer_timeout)HWTIMER_TIMEOUT_INIT;
    for (unsigned k = 0; k < IDLE_ONESHOTS; k++) {
        c.oneshots[k] = (hwtimer_timeout)HWTIMER_TIMEOUT_INIT;
    }
    hwtimer *t = clock_timer(worker ? hwtimer_threads_pthread() : NULL, worker, coarse);
    if (worker) hwtimer_start(t);
    idle_arm(t, &c, window);
    hwtimer_stats_get(t, &s0);
    uint64_t cpu0 = bench_cpu_ns(), w0 = bench_wall_ns(), end = w0 + window, loops = 0;
    if (worker) {
        bench_sleep_ns(window);
    } else {
        for (;;) {
            uint64_t now = bench_wall_ns();
            if (now >= end) break;
            uint64_t left_ms = (end - now + BENCH_MS - 1) / BENCH_MS;
            int ms = hwtimer_poll_timeout_ms(t);
            if (ms < 0 || (uint64_t)ms > left_ms) ms = (int)left_ms;
            poll(NULL, 0, ms);
            loops++;
            hwtimer_poll(t);
        }
    }
    *cpu_ns = bench_cpu_ns() - cpu0;
    *span_ns = bench_wall_ns() - w0;
    if (worker) hwtimer_stop(t, NULL, NULL);
    hwtimer_stats_get(t, &s1);
    hwtimer_destroy(t);
    *wakeups = worker ? s1.wakeups - s0.wakeups : loops;
    *callbacks = __atomic_load_n(&c.fired, __ATOMIC_ACQUIRE);
    if (c.oneshots_fired != IDLE_ONESHOTS || c.early != 0) {
        fprintf(stderr, "FAIL scenario 11: idle %s, %s clock: %llu of %u one-shots ran, "
                        "%llu early\n", worker ? "worker" : "loop", coarse ? "coarse" : "default",
                (unsigned long long)c.oneshots_fired, IDLE_ONESHOTS,
                (unsigned long long)c.early);
        failures++;
    }
    return failures;
}

static int idle_measure(int smoke) {
    static const char *const clocks[] = {"default clock", "coarse clock"};
    static const char *const peers[] = {"hwtimer", "hwtimer_worker"};
    uint64_t window = smoke ? IDLE_SMOKE_NS : IDLE_WINDOW_NS;
    int failures = 0, threads = hwtimer_threads_pthread() != NULL;
    fprintf(stderr, "  scenario 11: idle, %.1f s per case\n", (double)window / 1e9);
    for (int worker = 0; worker <= threads; worker++) {
        for (int coarse = 0; coarse < 2; coarse++) {
            uint64_t wakeups, callbacks, cpu_ns, span_ns;
            char metric[96];
            failures += idle_run(worker, coarse, window, &wakeups, &callbacks, &cpu_ns,
                                 &span_ns);
            double per_minute = (double)IDLE_MINUTE_NS / (double)span_ns;
            snprintf(metric, sizeof metric, "idle (%.3g s as 1 min): wake-ups, %s",
                     (double)window / 1e9, clocks[coarse]);
            record(peers[worker], IDLE_ONESHOTS + 1, metric,
                   (double)wakeups * per_minute, "count");
            snprintf(metric, sizeof metric, "idle (%.3g s as 1 min): callbacks, %s",
                     (double)window / 1e9, clocks[coarse]);
            record(peers[worker], IDLE_ONESHOTS + 1, metric,
                   (double)callbacks * per_minute, "count");
            snprintf(metric, sizeof metric, "idle (%.3g s as 1 min): CPU time, %s",
                     (double)window / 1e9, clocks[coarse]);
            record(peers[worker], IDLE_ONESHOTS + 1, metric,
                   (double)cpu_ns * per_minute / 1e6, "ms");
        }
    }
    return failures;
}

static int measure_all(const bench_options *o, const uint32_t *delay_ms) {
    size_t burst_n = o->smoke ? 1000 : 100000;
    size_t clock_n = o->smoke ? 1000 : 100000;
    size_t pairs = o->smoke ? 10000 : o->producer_pairs / 4;
    burst_measure(burst_n);
    clock_measure(delay_ms, clock_n, pairs);
    int failures = lateness_measure(o->smoke ? 1000 : 10000, o->smoke ? 50 : 200);
    failures += idle_measure(o->smoke);
    bench_note(SCENARIO_BURSTS_AND_CLOCKS,
               "Burst: callbacks that each write 8 bytes; the longest call is how long the "
               "loop goes without returning to its fds. A bounded call's longest is its "
               "first: that pass still empties the whole slot (a walk of every node, as "
               "an unbounded pass does before it runs them) and sets aside what it did "
               "not run; the later calls only run theirs. Clock: CLOCK_MONOTONIC_COARSE "
               "lags by its resolution G when the kernel's tick is on time, more when it is "
               "late; every deadline from a delay gets G added (never early on the coarse "
               "clock; on CLOCK_MONOTONIC while the lag is at most G); lateness with it "
               "includes up to G more. "
               "stats.late_runs counts runs more than tick_ns (1 ms) + leeway (0) late; "
               "the worker's counters measure from its clock reading when its pass "
               "began, the callbacks from their own reading.");
    bench_note(SCENARIO_BURSTS_AND_CLOCKS,
               "Idle (N = the 7 timeouts pending: one periodic every 100 ms, 6 one-shots at "
               "1/7 .. 6/7 of the window): each case runs alone for the real time its row "
               "names, its counts scaled to 60 s. hwtimer: the loop, poll(NULL, 0, "
               "hwtimer_poll_timeout_ms) then hwtimer_poll, a wake-up being an iteration "
               "(the window's end included); hwtimer worker: stats.wakeups, this thread "
               "asleep. CPU time: the process's (CLOCK_PROCESS_CPUTIME_ID).");
    return failures;
}

int scenario_bursts_and_clocks(const bench_options *o, const uint32_t *delay_ms) {
    int failures = measure_all(o, delay_ms);
    bench_print_table(SCENARIO_BURSTS_AND_CLOCKS,
                      "Expiry and the clock: a loop's longest call in a burst, bounded or not; "
                      "schedule and the worker's pair with each clock; lateness, measured and "
                      "counted; an idle minute's wake-ups and CPU time", BENCH_BASELINE);
    return failures;
}
