/* bench.h - what the benchmark's files share: clocks, the seeded delays, the peer
   interface of the caller-driven scenarios, and the result table.

   Every peer is measured the same way: a scenario calls one batch function per phase
   (schedule all, cancel all, ...) and times the call; the loop over the nodes runs
   inside the peer's file, with direct calls the compiler can inline, so an indirect
   call per operation does not blur the comparison. */
#ifndef HWTIMER_BENCH_H
#define HWTIMER_BENCH_H

#include <stddef.h>
#include <stdint.h>

/* ---- clocks and randomness ---- */

uint64_t bench_wall_ns(void); /* CLOCK_MONOTONIC */
uint64_t bench_cpu_ns(void);  /* CLOCK_PROCESS_CPUTIME_ID: all threads of the process */
void bench_sleep_ns(uint64_t ns);

/* splitmix64: the same sequence in C and in NettyBench.java, so both get equal delays. */
uint64_t bench_rand_next(uint64_t *state);
/* n delays uniform in [lo_ms, hi_ms], from seed. Exits on allocation failure. */
uint32_t *bench_delays_ms(size_t n, uint32_t lo_ms, uint32_t hi_ms, uint64_t seed);
/* A random permutation of 0 .. n-1 from seed (Fisher-Yates; NettyBench.java draws the same). */
uint32_t *bench_permutation(size_t n, uint64_t seed);
/* calloc that exits on failure, starts on a cache line and maps every page at once. */
void *bench_xcalloc(size_t count, size_t size);
void bench_prefault(void *p, size_t bytes);

#define BENCH_SEED 0x9e3779b97f4a7c15ull
#define BENCH_MS 1000000ull /* ns per millisecond: every peer runs a 1 ms tick */
/* Every fake time scenarios 1-3 use stays below this (72 s at most). libuv and libevent
   map fake time onto their real clocks (see their files), which holds up to this limit. */
#define BENCH_MAX_FAKE_MS 100000u

/* ---- caller-driven peers (scenarios 1-4, 8 and 10) ---- */

typedef void (*bench_body_fn)(void *arg);

/* Scenario 10, keep-alive: n connections, each with an idle timeout of idle_ms, the first
   one due at first_ms[i]. Then, every millisecond now_ms from 1 on, the loop advances to
   now_ms (running what is due), then makes reads_per_ms reads, read k pushing connection
   order[k mod n]'s timeout to now_ms + idle_ms (the loop's cached time, as a server that
   rearms on every read does). The first warm_ms are not timed; the next span_ms are. */
typedef struct bench_keepalive {
    size_t n;
    const uint32_t *order, *first_ms;
    uint32_t idle_ms, reads_per_ms;
    uint64_t warm_ms, span_ms;
    uint64_t budget_ns; /* the timed span ends at the first 64 ms past this much wall time
                           (0: never): a slow peer is timed over the ms it reached */
    /* out */
    uint64_t ns;       /* wall time of the timed span */
    uint64_t timed_ms; /* the ms the timed span covered (span_ms unless cut by budget_ns) */
    size_t fired;     /* callbacks run (0: every connection is read well within idle_ms) */
    uint64_t refiled; /* hwtimer: timeouts re-filed in the timed span (hwtimer_stats) */
    uint64_t wakeups; /* hwtimer's worker: its wake-ups in the timed span */
} bench_keepalive;

/* The loop of scenario 10, written out in each peer's file so that the push is inlined as
   every peer's batch loop is: ADVANCE runs with `now_ms` set, PUSH with `i`, the connection
   read, and `now_ms`. Sets k->ns and k->timed_ms. */
#define BENCH_KEEPALIVE_LOOP(k, ADVANCE, PUSH)                                          \
    do {                                                                                 \
        size_t bench_next = 0;                                                           \
        uint64_t bench_t0 = bench_wall_ns(), bench_end = (k)->warm_ms + (k)->span_ms;     \
        for (uint64_t now_ms = 1; now_ms <= bench_end; now_ms++) {                       \
            if (now_ms == (k)->warm_ms + 1) {                                            \
                bench_t0 = bench_wall_ns();                                              \
            } else if (now_ms > (k)->warm_ms && (now_ms & 63) == 0 && (k)->budget_ns &&  \
                       bench_wall_ns() - bench_t0 > (k)->budget_ns) {                    \
                bench_end = now_ms; /* this ms is the last */                            \
            }                                                                            \
            ADVANCE;                                                                     \
            for (uint32_t bench_r = 0; bench_r < (k)->reads_per_ms; bench_r++) {         \
                size_t i = (k)->order[bench_next];                                       \
                bench_next = bench_next + 1 == (k)->n ? 0 : bench_next + 1;              \
                PUSH;                                                                    \
            }                                                                            \
        }                                                                                \
        (k)->ns = bench_wall_ns() - bench_t0;                                            \
        (k)->timed_ms = bench_end - (k)->warm_ms;                                        \
    } while (0)

/* A fresh peer holds n idle nodes and a frozen clock reading 0 ms (worker peers: the
   real clock). Delays are relative to that frozen clock. A NULL function means the peer
   cannot do that phase; the scenario prints n/a and says why (skip_reason). */
typedef struct bench_peer {
    const char *key;   /* CSV and column key */
    const char *title; /* column heading */
    void *(*create)(size_t n);
    void (*destroy)(void *ctx);
    /* Runs body(arg) where the peer's cached clock is valid (libevent: inside a loop
       callback). NULL: body is called directly. */
    void (*in_loop)(void *ctx, bench_body_fn body, void *arg);
    /* The loops of schedule, cancel, cancel_order and reschedule hold the peer's timer and
       node array in locals, as a loop that owns them would: no peer's loop reloads them
       from the context after each call into its library. */
    void (*schedule)(void *ctx, const uint32_t *delay_ms, size_t n); /* node i: delay_ms[i] */
    void (*cancel)(void *ctx, size_t n);                             /* nodes 0 .. n-1 */
    void (*cancel_order)(void *ctx, const uint32_t *order, size_t n); /* order[0], order[1] .. */
    /* Moves pending node i to delay_ms[i] + extra_ms. */
    void (*reschedule)(void *ctx, const uint32_t *delay_ms, size_t n, uint32_t extra_ms);
    /* Moves the clock to now_ms (past every deadline) and fires everything due; returns
       callbacks run. */
    size_t (*expire)(void *ctx, uint64_t now_ms);
    /* Advances 1 ms at a time up to end_ms (one advance call per tick); returns callbacks run. */
    size_t (*step)(void *ctx, uint64_t end_ms);
    /* Timeouts touched while stepping (moved between lists or fired), or 0 if unknown. */
    uint64_t (*visits)(void *ctx);
    /* Bytes of one node, and bytes the timer structure holds beyond the nodes. */
    size_t (*node_bytes)(void *ctx);
    size_t (*overhead_bytes)(void *ctx, size_t n);
    const char *skip_reason; /* why the NULL phases are missing */
    /* Scenario 10 on a fresh peer of k->n nodes; fills k's outputs. */
    void (*keepalive)(void *ctx, bench_keepalive *k);
    /* hwtimer's schedule that reads the clock, where `schedule` counts from the loop's
       time as the other peers do (scenario 1's row "schedule, reading the clock"); NULL
       for the rest. */
    void (*schedule_reading_clock)(void *ctx, const uint32_t *delay_ms, size_t n);
} bench_peer;

extern const bench_peer bench_peer_hwtimer;
extern const bench_peer bench_peer_hwtimer_locked;
extern const bench_peer bench_peer_hwtimer_64;
extern const bench_peer bench_peer_hwtimer_worker;
extern const bench_peer bench_peer_heap;
#ifdef BENCH_HAVE_LIBUV
extern const bench_peer bench_peer_libuv;
#endif
#ifdef BENCH_HAVE_LIBEVENT
extern const bench_peer bench_peer_libevent;
#endif
#ifdef BENCH_HAVE_TIMEOUT_C
extern const bench_peer bench_peer_timeout;
const char *bench_timeout_version(void); /* timeout.c's vendor and version */
#endif

/* ---- results ---- */

/* Column order of every table; the first one present in a scenario is its baseline
   unless the baseline key is present. */
#define BENCH_BASELINE "hwtimer"

void bench_record(int scenario, const char *peer, uint64_t n, const char *metric, double value,
                  const char *unit);
/* Returns 1 and stores the value if recorded. */
int bench_lookup(int scenario, const char *peer, uint64_t n, const char *metric, double *value);
void bench_note(int scenario, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void bench_declare_peer(const char *key, const char *title);
void bench_print_table(int scenario, const char *heading, const char *baseline);
int bench_write_csv(const char *path);
int bench_write_svg(const char *path);

/* ---- the parts outside the caller-driven peers ---- */

typedef struct bench_options {
    const uint64_t *sizes; /* N values of scenarios 1-3 */
    size_t nsizes;
    size_t long_timers;    /* scenario 4 */
    uint64_t long_span_ms; /* scenario 4: the hour */
    size_t producer_pairs; /* scenario 5: schedule+cancel pairs per producer thread */
    size_t accuracy_timers;
    uint32_t accuracy_max_ms;
    uint64_t idle_ns;
    size_t memory_timers;  /* scenario 8 */
    size_t leeway_timers;  /* scenario 9: timeouts spread over leeway_span_ms */
    uint64_t leeway_span_ms;
    size_t leeway_cost_timers; /* scenario 9: N of the schedule and cancel costs */
    const uint64_t *keepalive_sizes; /* scenario 10: connections */
    size_t nkeepalive;
    uint64_t keepalive_warm_ms, keepalive_span_ms;
    int java;
    int smoke;
} bench_options;

/* Scenarios 5-7 for hwtimer's worker mode (scenario_threads.c). Return the number of
   correctness failures (early firings, lost callbacks). */
int bench_threads_producers(const bench_options *o);
int bench_threads_accuracy(const bench_options *o);
int bench_threads_idle(const bench_options *o);

/* ns per timeout of hwtimer_stop with n pending (scenario 1's delays), each handed back
   (peer_hwtimer.c). Exits if one is lost. */
double bench_hwtimer_stop_ns(const uint32_t *delay_ms, size_t n);
/* ns per unlink of n nodes laid out and linked as hwtimer links scenario 1's
   (floors.c), bare and with a cancel's two other stores: the floor under a cancel. */
void bench_cancel_floor_ns(const uint32_t *delay_ms, size_t n, double *bare, double *with_state);
/* ns per node to file scenario 1's nodes as hwtimer files them, with no timer, no checks and
   no call (floors.c): from delays in ticks storing what timeout.c's add stores, from
   nanoseconds divided into ticks as hwtimer does, and storing also the node's fields a
   schedule keeps under hwtimer's contract: the floor under a schedule. */
void bench_schedule_floor_ns(const uint32_t *delay_ms, size_t n, double *ticks, double *divides,
                             double *full);

#ifdef HWTIMER_H_INCLUDED
#include <stdio.h>
#include <stdlib.h>

/* A config for a timer with a 1 ms tick, `slots` per wheel level and `shards` shards (0: one
   wheel). clock_fn NULL: the platform's monotonic clock. */
static inline void bench_hwtimer_config(hwtimer_config *cfg, const hwtimer_threads *threads,
                                        int worker, uint64_t (*clock_fn)(void *ctx),
                                        void *clock_ctx, uint32_t slots, unsigned shards) {
    hwtimer_config_default(cfg);
    cfg->tick_ns = BENCH_MS;
    cfg->ticks_per_wheel = slots;
    cfg->shards = shards;
    cfg->threads = threads;
    cfg->worker = worker;
    cfg->clock_fn = clock_fn;
    cfg->clock_ctx = clock_ctx;
}

/* A timer of that config, made by the hwtimer the including file calls: peer_hwtimer.c has
   its own, static (HWTIMER_STATIC), the scenarios with threads share hwtimer_impl.c's.
   Exits on failure. */
static inline hwtimer *bench_hwtimer_create(const hwtimer_config *cfg) {
    hwtimer *t = NULL;
    int err = hwtimer_create(&t, cfg);
    if (err != HWTIMER_OK) {
        fprintf(stderr, "hwtimer_create: %s\n", hwtimer_strerror(err));
        exit(2);
    }
    return t;
}

/* bench_hwtimer_create of bench_hwtimer_config. */
static inline hwtimer *bench_hwtimer_make(const hwtimer_threads *threads, int worker,
                                          uint64_t (*clock_fn)(void *ctx), void *clock_ctx,
                                          uint32_t slots, unsigned shards) {
    hwtimer_config cfg;
    bench_hwtimer_config(&cfg, threads, worker, clock_fn, clock_ctx, slots, shards);
    return bench_hwtimer_create(&cfg);
}
#endif

/* Scenario 9 (scenario_leeway.c): what a leeway saves in passes and wake-ups, and what it
   costs schedule and cancel. Returns the number of correctness failures. */
int bench_leeway(const bench_options *o, const uint32_t *delay_ms, size_t n);
/* ns per schedule and per cancel of n timeouts with the given leeway, as scenario 1
   measures hwtimer (peer_hwtimer.c). */
void bench_hwtimer_leeway_cost(const uint32_t *delay_ms, size_t n, uint64_t leeway_ns,
                               double *schedule_ns, double *cancel_ns);

/* Scenario 11 (scenario_expiry.c): a loop's longest call when a burst expires, with and
   without hwtimer_advance_max's bound; schedule and the worker's pair with the default
   and the coarse clock; the worker's lateness beside hwtimer_stats' counters; an idle
   minute's wake-ups, callbacks and CPU time for the worker and a poll loop with each
   clock. Returns the number of correctness failures. */
int bench_expiry(const bench_options *o, const uint32_t *delay_ms);

/* Netty's HashedWheelTimer through NettyBench.java (peer_netty.c). */
void bench_netty_run(const bench_options *o);
/* Scenario 4 for a rounds wheel like Netty's: the bucket visits it would make. */
uint64_t bench_netty_simulated_visits(const uint32_t *delay_ms, size_t n, uint32_t wheel);

#endif
