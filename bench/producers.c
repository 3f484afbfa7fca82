/* producers.c - scenario 5, producer threads against the worker: 1 or 2 threads each
   keeping 1024 timeouts in flight (scheduled with delays of 1-61 s, then cancelled), on
   hwtimer's worker and on a caller-driven timer with locks, on one timer, on two, or on one
   of two shards; Netty's (NettyBench.java) beside them. Million schedule+cancel pairs per
   second, all threads together. */
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
                                bench_hwtimer_never_called, NULL);
        }
    } else {
        for (size_t i = 0; i < PRODUCER_WINDOW; i++) {
            hwtimer_schedule(p->timer, &p->nodes[i], p->delay_ms[i] * BENCH_MS,
                             bench_hwtimer_never_called, NULL);
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
    bench_record(SCENARIO_NO_TABLE, "clock", 0, "clock read", (double)(t1 - t0) / READS, "ns");
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
    bench_record(SCENARIO_PRODUCERS,
                 worker ? "hwtimer_worker" : "hwtimer_lock", 0, row->metric, mops,
                 "M pairs/s");
    for (unsigned k = 0; k < row->timers; k++) {
        hwtimer_stats s;
        hwtimer_stats_get(timers[k], &s);
        wakeups += s.wakeups;
        hwtimer_destroy(timers[k]);
    }
    if (worker) {
        bench_note(SCENARIO_PRODUCERS,
                   "hwtimer worker, %s: the worker%s woke %llu times (%.1f per 1000 pairs)",
                   row->metric, row->timers == 1 ? "" : "s", (unsigned long long)wakeups,
                   (double)wakeups * 1000.0 / (double)(row->threads * o->producer_pairs));
    }
}

static int measure_producers(const bench_options *o) {
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
        bench_note(SCENARIO_PRODUCERS, "hwtimer: skipped, this build has no POSIX threads backend");
        free(delays);
        return 0;
    }
    measure_clock_read();
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        for (int worker = 1; worker >= 0; worker--) {
            producers_row(o, &rows[r], worker, delays);
        }
    }
    bench_note(SCENARIO_PRODUCERS,
               "Each producer keeps %u timeouts in flight: schedules them (1-61 s), then "
               "cancels them, %zu pairs per thread. hwtimer worker: cfg.worker = 1, the "
               "platform's clock; hwtimer+lock: the same locks, caller-driven, frozen "
               "clock. Netty: newTimeout + Timeout.cancel, its worker running (1 ms tick).",
               PRODUCER_WINDOW, o->producer_pairs);
    bench_note(SCENARIO_PRODUCERS,
               "2 producers on 2 timers: each thread on its own timer (and worker), no lock "
               "shared: the upper bound for 2 threads on this machine. schedule_at: "
               "absolute deadlines from one clock read per window of %u (hwtimer_now), "
               "where hwtimer_schedule reads the clock once per call.", PRODUCER_WINDOW);
    bench_note(SCENARIO_PRODUCERS,
               "timer of 2 shards: cfg.shards = 2, one timer whose nodes live in 2 wheels "
               "with a lock each; a thread arms its fresh nodes in its own shard, so the "
               "2 producers share no lock while the one timer (and its one worker) serves "
               "both.");
    free(delays);
    return 0;
}

int scenario_producers(const bench_options *o, const uint32_t *delay_ms) {
    int failures = measure_producers(o);
    (void)delay_ms; /* its own delays */
    bench_print_table(SCENARIO_PRODUCERS, "Threads: producers scheduling + cancelling against "
                                          "the worker (M pairs/s, higher is better)",
                      "hwtimer_worker");
    return failures;
}
