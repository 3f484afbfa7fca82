/* bench.h - what the benchmark's files share: the scenarios and their numbers, clocks,
   the seeded delays, the peer interface of the caller-driven scenarios, and the results.

   Every peer is measured the same way: a scenario calls one batch function per phase
   (schedule all, cancel all, ...) and times the call; the loop over the nodes runs
   inside the peer's file, with direct calls the compiler can inline, so an indirect
   call per operation does not blur the comparison. */
#ifndef HWTIMER_BENCH_H
#define HWTIMER_BENCH_H

#include <stddef.h>
#include <stdint.h>

/* ---- the scenarios ---- */

/* Each scenario's number: its table's ("### 4. ...") and the CSV's scenario column, as
   NettyBench.java prints them too. main.c lists them with their names (--scenarios takes
   either; options.c's mask has a bit per number); each has a file of its name. */
enum {
    SCENARIO_NO_TABLE = 0,           /* rows no table shows: facts notes and summary use */
    SCENARIO_SCHEDULE_CANCEL = 1,    /* RPC timeouts: schedule N, cancel all */
    SCENARIO_EXPIRY = 2,             /* schedule N, expire all */
    SCENARIO_RESCHEDULE = 3,         /* each timer pushed later 10 times */
    SCENARIO_LONG_TIMERS = 4,        /* 1 s - 1 h timers, an hour of 1 ms ticks */
    SCENARIO_PRODUCERS = 5,          /* producer threads against the worker */
    SCENARIO_ACCURACY = 6,           /* the worker's lateness */
    SCENARIO_IDLE_WAKEUPS = 7,       /* the worker's wake-ups with nothing due */
    SCENARIO_MEMORY = 8,             /* bytes per pending timeout */
    SCENARIO_LEEWAY = 9,             /* what a leeway saves and costs */
    SCENARIO_KEEPALIVE = 10,         /* idle timeouts pushed back on every read */
    SCENARIO_BURSTS_AND_CLOCKS = 11  /* a burst's longest call; the coarse clock */
};

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
/* Scenario 1's delays, which main.c draws once (from BENCH_SEED) for every scenario that
   takes delay_ms: 1 s .. 61 s. */
#define BENCH_RPC_MIN_MS 1000u
#define BENCH_RPC_MAX_MS 61000u

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

#define BENCH_IDLE_MS 30000u /* scenario 10's idle timeout, which every read pushes back */

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

/* ---- results (report.c) ---- */

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

/* ---- options (options.c) ---- */

#ifndef BENCH_RESULTS_DIR /* meson's: results/ in the build directory */
#define BENCH_RESULTS_DIR "bench-results"
#endif

#define BENCH_MAX_SIZES 16 /* N values --sizes takes */

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
    unsigned scenarios;  /* bit k: scenario k runs */
    const char *peers;   /* --peers: comma-separated keys, NULL for all */
    const char *out;     /* the CSV's path (the SVG's: next to it) */
    uint64_t given_sizes[BENCH_MAX_SIZES]; /* --sizes: sizes and keepalive_sizes then */
} bench_options;

/* A scenario: `run` measures it, records its rows and prints its table; it returns the
   number of correctness failures it saw (lost or extra callbacks, early firings).
   delay_ms: scenario 1's delays (1-61 s, BENCH_SEED), enough for every N it is given. */
typedef int (*bench_scenario_fn)(const bench_options *o, const uint32_t *delay_ms);
typedef struct bench_scenario {
    const char *name; /* --scenarios takes it, or the number; the file measuring it: NAME.c */
    int number;       /* SCENARIO_* */
    bench_scenario_fn run;
    const char *description; /* a line of --help */
} bench_scenario;

/* Fills o from the command line, the scenarios by name or number from the table; returns
   -1 to run, or the exit status after --help (0) or a bad argument (2). */
int bench_parse_options(bench_options *o, int argc, char **argv,
                        const bench_scenario *scenarios, size_t count);
/* Whether --peers lets a peer's key (a column) in. */
int bench_selected(const bench_options *o, const char *key);

/* The run's opening lines: machine, libraries, sizes (report.c). */
void bench_print_environment(const bench_options *o);
/* The summary against the project's targets, from the recorded rows (targets.c). */
void bench_print_summary(const bench_options *o);

/* ---- the scenarios, each in the file of its name ---- */

int scenario_schedule_cancel(const bench_options *o, const uint32_t *delay_ms);
int scenario_expiry(const bench_options *o, const uint32_t *delay_ms);
int scenario_reschedule(const bench_options *o, const uint32_t *delay_ms);
int scenario_long_timers(const bench_options *o, const uint32_t *delay_ms);
int scenario_producers(const bench_options *o, const uint32_t *delay_ms);
int scenario_accuracy(const bench_options *o, const uint32_t *delay_ms);
int scenario_idle_wakeups(const bench_options *o, const uint32_t *delay_ms);
int scenario_memory(const bench_options *o, const uint32_t *delay_ms);
int scenario_leeway(const bench_options *o, const uint32_t *delay_ms);
int scenario_keepalive(const bench_options *o, const uint32_t *delay_ms);
int scenario_bursts_and_clocks(const bench_options *o, const uint32_t *delay_ms);

/* ---- timing the caller-driven peers (caller.c) ---- */

extern const bench_peer *const bench_caller_peers[]; /* the columns' order */
extern const size_t bench_ncaller_peers;

/* One run of a peer: a fresh timer (ctx) of n nodes, scenario 1's delays, and a random
   order of the nodes (scenario 1's cancel in random order); t0 .. t2: the clock around
   the phases. */
typedef struct bench_run {
    const bench_peer *peer;
    void *ctx;
    const uint32_t *delay_ms;
    const uint32_t *order; /* a random permutation of 0 .. n-1, or NULL */
    size_t n;
    uint64_t t0, t1, t2;
    int failures; /* lost or extra callbacks */
} bench_run;

/* Runs body(r) where the peer's cached clock is valid (bench_peer.in_loop). */
void bench_run_in_loop(bench_run *r, bench_body_fn body);

/* What one kind of run measures (fills ns[], in ns per operation), and the rows it fills. */
typedef void (*bench_measure_fn)(bench_run *r, double ns[2]);
typedef struct bench_measure {
    int scenario;
    bench_measure_fn fn;
    const char *metrics[2]; /* ns[0], ns[1] (NULL: not recorded) */
    const char *unit;
    /* The peers that take part (NULL: all); with `noted`, each other one is noted n/a
       in the scenario's table, with its skip_reason. */
    int (*can)(const bench_peer *p);
    int noted;
} bench_measure;

/* For each N of the options, the selected peers' runs of m in turn, on fresh timers: 3
   rounds for N <= 10^6 (1 above, or with --smoke), each peer keeping its best, recorded.
   orders[i]: the random order for sizes[i] (NULL: none). Returns the failures. */
int bench_caller_measure(const bench_options *o, const bench_measure *m,
                         const uint32_t *delay_ms, const uint32_t *const *orders);
/* 1 (and a FAIL line) if a peer ran `fired` callbacks where `expected` were due. */
int bench_check_fired(int scenario, const bench_peer *p, size_t expected, size_t fired);
/* ns per operation from two clock readings. */
double bench_per_op(uint64_t from, uint64_t to, size_t ops);

/* ---- hwtimer outside the caller-driven peers ---- */

/* ns per timeout of hwtimer_stop with n pending (scenario 1's delays), each handed back
   (peer_hwtimer.c). Exits if one is lost. */
double bench_hwtimer_stop_ns(const uint32_t *delay_ms, size_t n);
/* The floors under scenario 1's cancel and schedule (floors.c): hwtimer's own wheel with
   no timer around it. Cancel: ns per node to take n nodes filed as hwtimer files them out
   of their lists, bare and with the node's state and the pending count too. Schedule: ns
   per node to file them, from a delay in ticks storing what timeout.c's add stores, from
   nanoseconds turned into ticks as hwtimer does, and storing also the node's fields a
   schedule keeps under hwtimer's contract. */
void bench_cancel_floor_ns(const uint32_t *delay_ms, size_t n, double *bare, double *with_state);
void bench_schedule_floor_ns(const uint32_t *delay_ms, size_t n, double *ticks, double *divides,
                             double *full);
/* ns per schedule and per cancel of n timeouts with the given leeway, as scenario 1
   measures hwtimer (peer_hwtimer.c). */
void bench_hwtimer_leeway_cost(const uint32_t *delay_ms, size_t n, uint64_t leeway_ns,
                               double *schedule_ns, double *cancel_ns);

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

/* A timer of that config, made by the hwtimer the including file calls: peer_hwtimer.c and
   floors.c have their own, static (HWTIMER_STATIC), the other scenarios share
   hwtimer_impl.c's. Exits on failure. */
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

/* The callback of timeouts that are cancelled before they are due. */
static inline void bench_hwtimer_never_called(hwtimer_timeout *to, void *arg) {
    (void)to;
    (void)arg;
}
#endif

/* ---- Netty (peer_netty.c) ---- */

/* Netty's HashedWheelTimer through NettyBench.java: its rows of every scenario it runs. */
void bench_netty_run(const bench_options *o);
/* Scenario 4 for a rounds wheel like Netty's: the bucket visits it would make. */
uint64_t bench_netty_simulated_visits(const uint32_t *delay_ms, size_t n, uint32_t wheel);

#endif
