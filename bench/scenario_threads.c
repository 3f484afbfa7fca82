/* scenario_threads.c - scenarios 5-7, hwtimer with threads: producers against the worker,
   the worker's accuracy, and its wake-ups while idle. */
#define _POSIX_C_SOURCE 200809L
#include "hwtimer.h"

#include "bench.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define PRODUCER_WINDOW 1024u /* timeouts each producer keeps in flight */

/* CLOCK_MONOTONIC, as hwtimer's platform clock reads it (the worker's clock here). */
static uint64_t monotonic_clock(void *ctx) {
    (void)ctx;
    return bench_wall_ns();
}

static uint64_t frozen_clock(void *ctx) {
    (void)ctx;
    return 0;
}

/* A 1 ms timer of `shards` shards (0: one wheel): the worker on the platform's clock (the
   default, with which the _at forms read no clock), or caller-driven with locks on a frozen
   one. */
static hwtimer *create_threaded(int worker, unsigned shards) {
    return bench_hwtimer_make(hwtimer_threads_pthread(), worker, worker ? NULL : frozen_clock,
                              NULL, 512, shards);
}

static void never_called(hwtimer_timeout *to, void *arg) {
    (void)to;
    (void)arg;
}

/* ---- scenario 5: producers ---- */

typedef struct producer {
    pthread_t thread;
    hwtimer *timer;
    hwtimer_timeout nodes[PRODUCER_WINDOW];
    const uint32_t *delay_ms;
    size_t rounds;
    int absolute; /* hwtimer_schedule_at from one clock read per window */
    pthread_barrier_t *start;
    uint64_t t0, t1; /* this producer's first and last operation */
} producer;

static void schedule_window(producer *p) {
    if (p->absolute) {
        uint64_t now = hwtimer_now(p->timer); /* as an event loop's cached time */
        for (size_t i = 0; i < PRODUCER_WINDOW; i++) {
            hwtimer_schedule_at(p->timer, &p->nodes[i], now + p->delay_ms[i] * BENCH_MS,
                                never_called, NULL);
        }
    } else {
        for (size_t i = 0; i < PRODUCER_WINDOW; i++) {
            hwtimer_schedule(p->timer, &p->nodes[i], p->delay_ms[i] * BENCH_MS, never_called, NULL);
        }
    }
}

/* Like an RPC client: schedule a window of timeouts (1-61 s), then cancel them all as the
   replies come in; repeat. */
static void *producer_main(void *arg) {
    producer *p = (producer *)arg;
    pthread_barrier_wait(p->start);
    p->t0 = bench_wall_ns();
    for (size_t r = 0; r < p->rounds; r++) {
        schedule_window(p);
        for (size_t i = 0; i < PRODUCER_WINDOW; i++) {
            hwtimer_cancel(p->timer, &p->nodes[i]);
        }
    }
    p->t1 = bench_wall_ns();
    return NULL;
}

/* One row of scenario 5: how many producer threads, on how many timers (producer k uses
   timer k % timers) of how many shards, scheduling with relative delays or absolute
   deadlines. */
typedef struct producer_row {
    const char *metric;
    unsigned threads, timers, shards;
    int absolute;
} producer_row;

/* Million schedule+cancel pairs per second, all producers together. */
static double producers_mops(hwtimer *const *timers, const producer_row *row, size_t pairs,
                             const uint32_t *delays) {
    unsigned threads = row->threads;
    pthread_barrier_t start;
    producer *p = (producer *)bench_xcalloc(threads, sizeof *p);
    pthread_barrier_init(&start, NULL, threads + 1);
    for (unsigned k = 0; k < threads; k++) {
        p[k].timer = timers[k % row->timers];
        p[k].delay_ms = delays + (size_t)k * PRODUCER_WINDOW;
        p[k].rounds = pairs / PRODUCER_WINDOW;
        p[k].absolute = row->absolute;
        p[k].start = &start;
        if (pthread_create(&p[k].thread, NULL, producer_main, &p[k]) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            exit(2);
        }
    }
    pthread_barrier_wait(&start);
    uint64_t t0 = UINT64_MAX, t1 = 0; /* from the first producer's start to the last's end */
    for (unsigned k = 0; k < threads; k++) {
        pthread_join(p[k].thread, NULL);
        t0 = p[k].t0 < t0 ? p[k].t0 : t0;
        t1 = p[k].t1 > t1 ? p[k].t1 : t1;
    }
    double done = (double)threads * (double)(pairs / PRODUCER_WINDOW) * PRODUCER_WINDOW;
    pthread_barrier_destroy(&start);
    free(p);
    return done / (double)(t1 - t0) * 1e3;
}

/* ns per read of the clock the worker uses: every schedule reads it once. Recorded as
   scenario 0 (a fact about the machine, in the CSV and the summary, not a table). */
static void measure_clock_read(void) {
    enum { READS = 1000000 };
    uint64_t t0 = bench_wall_ns();
    for (int i = 0; i < READS; i++) (void)monotonic_clock(NULL); /* a call: not optimized out */
    uint64_t t1 = bench_wall_ns();
    bench_record(0, "clock", 0, "clock read", (double)(t1 - t0) / READS, "ns");
}

/* Runs one row in one mode on fresh timers and records it. */
static void producers_row(const bench_options *o, const producer_row *row, int worker,
                          const uint32_t *delays) {
    hwtimer *timers[2];
    uint64_t wakeups = 0;
    fprintf(stderr, "  scenario 5: %s, %s\n", worker ? "hwtimer worker" : "hwtimer+lock",
            row->metric);
    for (unsigned k = 0; k < row->timers; k++) {
        timers[k] = create_threaded(worker, row->shards);
        if (worker) {
            hwtimer_start(timers[k]);
        }
    }
    double mops = producers_mops(timers, row, o->producer_pairs, delays);
    bench_record(5, worker ? "hwtimer_worker" : "hwtimer_lock", 0, row->metric, mops,
                 "M pairs/s");
    for (unsigned k = 0; k < row->timers; k++) {
        hwtimer_stats s;
        hwtimer_stats_get(timers[k], &s);
        wakeups += s.wakeups;
        hwtimer_destroy(timers[k]);
    }
    if (worker) {
        bench_note(5, "hwtimer worker, %s: the worker%s woke %llu times (%.1f per 1000 pairs)",
                   row->metric, row->timers == 1 ? "" : "s", (unsigned long long)wakeups,
                   (double)wakeups * 1000.0 / (double)(row->threads * o->producer_pairs));
    }
}

int bench_threads_producers(const bench_options *o) {
    static const producer_row rows[] = {
        {"1 producer thread", 1, 1, 0, 0},
        {"2 producer threads", 2, 1, 0, 0},
        {"2 producers on 2 timers", 2, 2, 0, 0},
        {"1 producer with schedule_at", 1, 1, 0, 1},
        {"1 producer, timer of 2 shards", 1, 1, 2, 0},
        {"2 producers, timer of 2 shards", 2, 1, 2, 0},
    };
    uint32_t *delays = bench_delays_ms(2 * PRODUCER_WINDOW, 1000, 61000, BENCH_SEED + 5);
    if (!hwtimer_threads_pthread()) {
        bench_note(5, "hwtimer: skipped, this build has no POSIX threads backend");
        free(delays);
        return 0;
    }
    measure_clock_read();
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        for (int worker = 1; worker >= 0; worker--) {
            producers_row(o, &rows[r], worker, delays);
        }
    }
    bench_note(5, "Each producer keeps %u timeouts in flight: schedules them (1-61 s), then "
                  "cancels them, %zu pairs per thread. hwtimer worker: cfg.worker = 1, the "
                  "platform's clock; hwtimer+lock: the same locks, caller-driven, frozen "
                  "clock. Netty: newTimeout + Timeout.cancel, its worker running (1 ms tick).",
               PRODUCER_WINDOW, o->producer_pairs);
    bench_note(5, "2 producers on 2 timers: each thread on its own timer (and worker), no lock "
                  "shared: the upper bound for 2 threads on this machine. schedule_at: "
                  "absolute deadlines from one clock read per window of %u (hwtimer_now), "
                  "where hwtimer_schedule reads the clock once per call.", PRODUCER_WINDOW);
    bench_note(5, "timer of 2 shards: cfg.shards = 2, one timer whose nodes live in 2 wheels "
                  "with a lock each; a thread arms its fresh nodes in its own shard, so the "
                  "2 producers share no lock while the one timer (and its one worker) serves "
                  "both.");
    free(delays);
    return 0;
}

/* ---- scenario 6: accuracy ---- */

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
    bench_record(6, "hwtimer_worker", n, "lateness p50", (double)late[n / 2] / 1e3, "µs");
    bench_record(6, "hwtimer_worker", n, "lateness p99", (double)late[n * 99 / 100] / 1e3, "µs");
    bench_record(6, "hwtimer_worker", n, "lateness max", (double)late[n - 1] / 1e3, "µs");
    bench_record(6, "hwtimer_worker", n, "early firings", (double)early, "count");
    if (early) {
        fprintf(stderr, "FAIL scenario 6: %zu timeouts fired before their deadline\n", early);
    }
}

int bench_threads_accuracy(const bench_options *o) {
    size_t n = o->accuracy_timers;
    uint64_t seed = BENCH_SEED + 6, span = (uint64_t)(o->accuracy_max_ms - 1) * BENCH_MS;
    accuracy a = {NULL, NULL, 0};
    if (!hwtimer_threads_pthread()) {
        bench_note(6, "hwtimer: skipped, this build has no POSIX threads backend");
        return 0;
    }
    fprintf(stderr, "  scenario 6: hwtimer worker, %zu timers\n", n);
    a.nodes = (hwtimer_timeout *)bench_xcalloc(n, sizeof *a.nodes);
    a.late_ns = (int64_t *)bench_xcalloc(n, sizeof *a.late_ns);
    hwtimer *t = create_threaded(1, 0);
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
    bench_note(6, "Delays uniform in [1 ms, %u ms] at ns resolution, on a 1 ms tick: a timeout "
                  "runs at the first tick boundary at or after its deadline, so up to 1 ms of "
                  "lateness is by design and the rest is the OS waking the worker. Netty: "
                  "System.nanoTime() in the task minus (nanoTime before newTimeout + delay).",
               o->accuracy_max_ms);
    free(a.nodes);
    free(a.late_ns);
    return failed;
}

/* ---- scenario 7: idle wake-ups ---- */

static uint64_t worker_wakeups(hwtimer *t) {
    hwtimer_stats s;
    hwtimer_stats_get(t, &s);
    return s.wakeups;
}

int bench_threads_idle(const bench_options *o) {
    hwtimer_timeout far = HWTIMER_TIMEOUT_INIT;
    if (!hwtimer_threads_pthread()) {
        bench_note(7, "hwtimer: skipped, this build has no POSIX threads backend");
        return 0;
    }
    fprintf(stderr, "  scenario 7: hwtimer worker idle for %.1f s\n", (double)o->idle_ns / 1e9);
    hwtimer *empty = create_threaded(1, 0), *one = create_threaded(1, 0);
    hwtimer_start(empty);
    hwtimer_schedule(one, &far, 3600000 * BENCH_MS, never_called, NULL);
    bench_sleep_ns(100 * BENCH_MS); /* let both workers settle into their wait */
    uint64_t e0 = worker_wakeups(empty), o0 = worker_wakeups(one), t0 = bench_wall_ns();
    bench_sleep_ns(o->idle_ns);
    double secs = (double)(bench_wall_ns() - t0) / 1e9;
    bench_record(7, "hwtimer_worker", 0, "nothing pending",
                 (double)(worker_wakeups(empty) - e0) / secs, "wake-ups/s");
    bench_record(7, "hwtimer_worker", 0, "one timeout due in 1 h",
                 (double)(worker_wakeups(one) - o0) / secs, "wake-ups/s");
    hwtimer_destroy(empty);
    hwtimer_destroy(one);
    bench_note(7, "hwtimer: hwtimer_stats.wakeups (returns from the worker's wait) over %.1f s, "
                  "1 ms tick. Netty: voluntary context switches of its worker thread over the "
                  "same time, read from /proc (it sleeps until every tick: 1000/s computed).",
               secs);
    return 0;
}
