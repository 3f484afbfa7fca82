/* bench_main.c - main() of hwtimer_bench: hwtimer side by side with libuv, libevent, a
   binary heap, Netty's HashedWheelTimer and William Ahern's timeout.c.

   usage: hwtimer_bench [--full] [--smoke] [--no-java] [--scenarios 1,2,...] [--peers a,b]
                        [--sizes n,...] [--out FILE.csv]

   Prints a markdown table per scenario and writes FILE.csv and FILE.svg (default:
   bench/results/latest.* in the build directory). --full adds N = 10^7; --smoke is a
   tiny correctness run (every callback fired, none early) for `meson test`: it exits
   nonzero only on such failures, never because of a timing.

   Timing: one timed loop per (peer, N, scenario), the best of 3 runs for N <= 10^6 (one
   run above) taken in turn with the other peers' (scenarios 1-3), a fresh timer for every
   run, and the wall clock around the batch call (CPU time in scenario 4). Delays come from
   a fixed seed. Nodes live in one array per run, starting on a cache line and touched
   before the clock starts (no page faults are timed), and are scheduled in index order
   and cancelled in index order, or in a seeded random order (scenario 1's second cancel
   row); at N = 10^6 they outgrow a core's own caches, so
   each peer also pays for bringing its nodes in from memory, in proportion to their size
   (see scenario 8), and a random order defeats the prefetcher.

   Scenarios: 1-3 and 8 every caller-driven peer (peer_*.c); 4 those that can step a fake
   clock; 5-7 hwtimer with threads (scenario_threads.c) and Netty; 9 hwtimer's leeway
   (scenario_leeway.c); 10 keep-alive, the peers that have its loop (and hwtimer's worker on a
   fake clock); 11 hwtimer's bounded expiry, coarse clock, lateness counters and
   an idle minute's wake-ups (scenario_expiry.c). */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef BENCH_HAVE_LIBUV
#include <uv.h>
#endif
#ifdef BENCH_HAVE_LIBEVENT
#include <event2/event.h>
#endif

#ifndef BENCH_RESULTS_DIR
#define BENCH_RESULTS_DIR "bench-results"
#endif

#define RPC_MIN_MS 1000u  /* scenario 1-3 delays: 1 s .. 61 s */
#define RPC_MAX_MS 61000u
#define RESCHEDULES 10u   /* scenario 3: each timer moved 10 times, 1 s later each time */
#define LONG_MIN_MS 1000u /* scenario 4 delays: 1 s .. 1 h */
#define MAX_SIZES 16      /* N values --sizes takes */
#define IDLE_MS 30000u    /* scenario 10: the idle timeout each read pushes back */
#define READS_PER_MS 1000u
/* Scenario 10 at its default sizes pushes 90 million times per run: a peer at 1 us a push
   (a heap of 10^6) would take minutes. Its timed span ends after this much wall time, and
   a run that took longer than KEEPALIVE_SLOW_RUN_NS is not repeated. */
#define KEEPALIVE_BUDGET_NS 8000000000ull
#define KEEPALIVE_SLOW_RUN_NS 20000000000ull
/* Scenario 3 expires at RPC_MAX_MS + (RESCHEDULES + 1) s: it must stay in the fake time
   libuv and libevent can map (a negative array size stops the build otherwise). */
typedef char bench_fake_time_fits[RPC_MAX_MS + (RESCHEDULES + 1) * 1000u <= BENCH_MAX_FAKE_MS ? 1 : -1];

static int failures; /* correctness problems: lost or extra callbacks */

static const bench_peer *const caller_peers[] = {
    &bench_peer_hwtimer, &bench_peer_hwtimer_locked, &bench_peer_hwtimer_worker,
    &bench_peer_hwtimer_64, &bench_peer_heap,
#ifdef BENCH_HAVE_LIBUV
    &bench_peer_libuv,
#endif
#ifdef BENCH_HAVE_LIBEVENT
    &bench_peer_libevent,
#endif
#ifdef BENCH_HAVE_TIMEOUT_C
    &bench_peer_timeout,
#endif
};
#define NCALLER_PEERS (sizeof caller_peers / sizeof caller_peers[0])

static const char *peer_filter; /* --peers: comma-separated keys, NULL for all */

static int selected(const char *key) {
    size_t len = strlen(key);
    if (!peer_filter) {
        return 1;
    }
    for (const char *c = peer_filter; *c;) {
        size_t item = strcspn(c, ",");
        if (item == len && strncmp(c, key, len) == 0) {
            return 1;
        }
        c += item + (c[item] == ',');
    }
    return 0;
}

/* ---- one run of a peer ---- */

typedef struct run {
    const bench_peer *peer;
    void *ctx;
    const uint32_t *delay_ms;
    const uint32_t *order; /* a random permutation of 0 .. n-1 */
    size_t n;
    uint64_t t0, t1, t2;
} run;

static void run_in_loop(run *r, bench_body_fn body) {
    if (r->peer->in_loop) {
        r->peer->in_loop(r->ctx, body, r);
    } else {
        body(r);
    }
}

static void body_schedule_cancel(void *arg) {
    run *r = (run *)arg;
    r->t0 = bench_wall_ns();
    r->peer->schedule(r->ctx, r->delay_ms, r->n);
    r->t1 = bench_wall_ns();
    r->peer->cancel(r->ctx, r->n);
    r->t2 = bench_wall_ns();
}

static void body_schedule_reading_clock(void *arg) {
    run *r = (run *)arg;
    r->t0 = bench_wall_ns();
    r->peer->schedule_reading_clock(r->ctx, r->delay_ms, r->n);
    r->t1 = bench_wall_ns();
    r->peer->cancel(r->ctx, r->n);
}

static void body_schedule_cancel_order(void *arg) {
    run *r = (run *)arg;
    r->peer->schedule(r->ctx, r->delay_ms, r->n);
    r->t0 = bench_wall_ns();
    r->peer->cancel_order(r->ctx, r->order, r->n);
    r->t1 = bench_wall_ns();
}

static void body_schedule(void *arg) {
    run *r = (run *)arg;
    r->t0 = bench_wall_ns();
    r->peer->schedule(r->ctx, r->delay_ms, r->n);
}

static void body_reschedule(void *arg) {
    run *r = (run *)arg;
    r->peer->schedule(r->ctx, r->delay_ms, r->n);
    r->t0 = bench_wall_ns();
    for (uint32_t k = 1; k <= RESCHEDULES; k++) {
        r->peer->reschedule(r->ctx, r->delay_ms, r->n, k * 1000u);
    }
    r->t1 = bench_wall_ns();
}

static void check_fired(int scenario, const bench_peer *p, size_t expected, size_t fired) {
    if (fired != expected) {
        fprintf(stderr, "FAIL scenario %d, %s: %zu callbacks ran, expected %zu\n", scenario,
                p->title, fired, expected);
        failures++;
    }
}

static double per_op(uint64_t from, uint64_t to, size_t ops) {
    return (double)(to - from) / (double)(ops ? ops : 1);
}

/* ---- scenarios 1-3: one timed run each, on a fresh peer ---- */

/* Fills ns[] with what one run measures, in ns per operation. */
typedef void (*measure_fn)(run *r, double ns[2]);

static void measure_rpc(run *r, double ns[2]) {
    run_in_loop(r, body_schedule_cancel);
    ns[0] = per_op(r->t0, r->t1, r->n);
    ns[1] = per_op(r->t1, r->t2, r->n);
}

/* hwtimer's schedule that reads the clock on every call. */
static void measure_schedule_reading_clock(run *r, double ns[2]) {
    run_in_loop(r, body_schedule_reading_clock);
    ns[0] = per_op(r->t0, r->t1, r->n);
}

/* Cancels in a random order: an RPC's replies do not come back in the order the requests
   went out, and nodes touched in index order sit next to each other in memory. */
static void measure_cancel_order(run *r, double ns[2]) {
    run_in_loop(r, body_schedule_cancel_order);
    ns[0] = per_op(r->t0, r->t1, r->n);
}

static void measure_expiry(run *r, double ns[2]) {
    run_in_loop(r, body_schedule);
    size_t fired = r->peer->expire(r->ctx, RPC_MAX_MS + 1000u);
    r->t1 = bench_wall_ns();
    check_fired(2, r->peer, r->n, fired);
    ns[0] = per_op(r->t0, r->t1, r->n);
}

static void measure_churn(run *r, double ns[2]) {
    run_in_loop(r, body_reschedule);
    if (r->peer->expire) {
        check_fired(3, r->peer, r->n,
                    r->peer->expire(r->ctx, RPC_MAX_MS + (RESCHEDULES + 1) * 1000u));
    } else {
        r->peer->cancel(r->ctx, r->n);
    }
    ns[0] = per_op(r->t0, r->t1, r->n * RESCHEDULES);
}

/* A peer's run number nth (0 first), on a fresh timer: keeps its best so far in best[2]. */
static void one_run(const bench_peer *p, const uint32_t *d, const uint32_t *order, size_t n,
                    measure_fn measure, unsigned nth, double best[2]) {
    run r = {p, p->create(n), d, order, n, 0, 0, 0};
    double ns[2] = {0, 0};
    measure(&r, ns);
    for (int i = 0; i < 2; i++) {
        best[i] = nth == 0 || ns[i] < best[i] ? ns[i] : best[i];
    }
    p->destroy(r.ctx);
}

/* What one kind of run measures, and the rows it fills. */
typedef struct measure {
    int scenario;
    measure_fn fn;
    const char *metrics[2]; /* ns[0], ns[1] (NULL: not recorded) */
    const char *unit;
} measure;

static const measure measures[] = {
    {1, measure_rpc, {"schedule", "cancel"}, "ns/op"},
    {1, measure_cancel_order, {"cancel in random order", NULL}, "ns/op"},
    {1, measure_schedule_reading_clock, {"schedule, reading the clock", NULL}, "ns/op"},
    {2, measure_expiry, {"schedule+expire", NULL}, "ns/timer"},
    {3, measure_churn, {"reschedule", NULL}, "ns/op"},
};

/* Whether a peer takes part in a kind of run (noting why not, once, where that is news). */
static int takes_part(const measure *m, const bench_peer *p) {
    if (!selected(p->key)) {
        return 0;
    }
    if (m->fn == measure_schedule_reading_clock && !p->schedule_reading_clock) {
        return 0;
    }
    if (m->scenario == 2 && !p->expire) {
        bench_note(2, "%s: n/a (%s)", p->title, p->skip_reason);
        return 0;
    }
    return 1;
}

/* For each N, the peers' runs in turn, 3 rounds for N <= 10^6 (1 above, or with --smoke),
   each peer keeping its best: on a shared VM the machine's speed drifts over minutes, so
   runs taken in turn see the same drift, and the best of three is the least disturbed. */
static void caller_measure(const bench_options *o, const measure *m, const uint32_t *d,
                           const uint32_t *const *orders) {
    int part[NCALLER_PEERS];
    for (size_t k = 0; k < NCALLER_PEERS; k++) {
        part[k] = takes_part(m, caller_peers[k]);
    }
    for (size_t i = 0; i < o->nsizes; i++) {
        size_t n = (size_t)o->sizes[i];
        unsigned runs = o->smoke || n > 1000000 ? 1 : 3;
        double best[NCALLER_PEERS][2];
        fprintf(stderr, "  scenario %d, %s: N = %zu, %u round(s) of the peers\n", m->scenario,
                m->metrics[0], n, runs);
        for (unsigned r = 0; r < runs; r++) {
            for (size_t k = 0; k < NCALLER_PEERS; k++) {
                if (part[k]) {
                    one_run(caller_peers[k], d, orders[i], n, m->fn, r, best[k]);
                }
            }
        }
        for (size_t k = 0; k < NCALLER_PEERS; k++) {
            for (int j = 0; j < 2 && part[k] && m->metrics[j]; j++) {
                bench_record(m->scenario, caller_peers[k]->key, n, m->metrics[j], best[k][j],
                             m->unit);
            }
        }
    }
}

/* Scenarios 1-3 as the mask selects them. */
static void caller_scenarios(const bench_options *o, unsigned mask, const uint32_t *d) {
    uint32_t *orders[MAX_SIZES] = {NULL}; /* scenario 1's random orders */
    for (size_t i = 0; i < o->nsizes && (mask & (1u << 1)); i++) {
        orders[i] = bench_permutation((size_t)o->sizes[i], BENCH_SEED + 1);
    }
    for (size_t k = 0; k < sizeof measures / sizeof measures[0]; k++) {
        if (mask & (1u << measures[k].scenario)) {
            caller_measure(o, &measures[k], d, (const uint32_t *const *)orders);
        }
    }
    for (size_t i = 0; i < o->nsizes; i++) {
        free(orders[i]);
    }
}

/* ---- scenario 4: long timers on a fine tick ---- */

static void long_timers(const bench_options *o) {
    size_t n = o->long_timers;
    uint32_t *d = bench_delays_ms(n, LONG_MIN_MS, (uint32_t)o->long_span_ms, BENCH_SEED + 4);
    for (size_t k = 0; k < NCALLER_PEERS; k++) {
        const bench_peer *p = caller_peers[k];
        if (!selected(p->key)) {
            continue;
        }
        if (!p->step) {
            bench_note(4, "%s: n/a (%s)", p->title, p->skip_reason);
            continue;
        }
        fprintf(stderr, "  scenario 4: %s\n", p->title);
        void *ctx = p->create(n);
        p->schedule(ctx, d, n);
        uint64_t cpu0 = bench_cpu_ns();
        size_t fired = p->step(ctx, o->long_span_ms);
        uint64_t cpu1 = bench_cpu_ns();
        check_fired(4, p, n, fired);
        bench_record(4, p->key, n, "advance through the span, CPU", (double)(cpu1 - cpu0) / 1e9,
                     "s");
        if (p->visits) {
            bench_record(4, p->key, n, "timeout visits", (double)p->visits(ctx), "count");
        }
        p->destroy(ctx);
    }
    if (!selected("netty")) {
        free(d);
        return;
    }
    bench_record(4, "netty", n, "timeout visits",
                 (double)bench_netty_simulated_visits(d, n, 512), "count");
    bench_note(4, "%llu advance calls of 1 ms each (the schedule phase is not timed). "
                  "Timeout visits: hwtimer counts callbacks + moves down a level "
                  "(hwtimer_stats); Netty's figure is SIMULATED, not run: its rounds wheel "
                  "(512 buckets, 1 ms tick) visits every timeout in the current bucket on "
                  "every tick, once per rotation until it expires, and its worker wakes on "
                  "each of the %llu ticks.",
               (unsigned long long)o->long_span_ms, (unsigned long long)o->long_span_ms);
    free(d);
}

/* ---- scenario 10: keep-alive ---- */

/* The best of 3 runs (one with --smoke, or for a peer whose run takes more than
   KEEPALIVE_SLOW_RUN_NS), each on a fresh peer: the best ns per push, and the counts of
   the last run. */
static void keepalive_runs(const bench_peer *p, bench_keepalive *k, unsigned runs) {
    double best = 0;
    uint64_t best_ns = 0, best_ms = 0;
    for (unsigned r = 0; r < runs; r++) {
        void *ctx = p->create(k->n);
        uint64_t t0 = bench_wall_ns();
        k->fired = 0;
        k->refiled = k->wakeups = 0;
        p->keepalive(ctx, k);
        p->destroy(ctx);
        if (r == 0 || (double)k->ns / (double)k->timed_ms < best) {
            best = (double)k->ns / (double)k->timed_ms;
            best_ns = k->ns;
            best_ms = k->timed_ms;
        }
        if (bench_wall_ns() - t0 > KEEPALIVE_SLOW_RUN_NS) break;
    }
    k->ns = best_ns;
    k->timed_ms = best_ms;
}

static void keepalive(const bench_options *o) {
    for (size_t s = 0; s < o->nkeepalive; s++) {
        size_t n = (size_t)o->keepalive_sizes[s];
        uint32_t *order = bench_permutation(n, BENCH_SEED + 10);
        uint32_t *first = bench_delays_ms(n, 2000, IDLE_MS, BENCH_SEED + 11);
        for (size_t j = 0; j < NCALLER_PEERS; j++) {
            const bench_peer *p = caller_peers[j];
            bench_keepalive k;
            if (!selected(p->key)) {
                continue;
            }
            if (!p->keepalive) {
                if (s == 0) bench_note(10, "%s: n/a (%s)", p->title, p->skip_reason);
                continue;
            }
            fprintf(stderr, "  scenario 10: %s, N = %zu\n", p->title, n);
            memset(&k, 0, sizeof k);
            k.n = n;
            k.order = order;
            k.first_ms = first;
            k.idle_ms = IDLE_MS;
            k.reads_per_ms = READS_PER_MS;
            k.warm_ms = o->keepalive_warm_ms;
            k.span_ms = o->keepalive_span_ms;
            k.budget_ns = o->smoke ? 0 : KEEPALIVE_BUDGET_NS;
            keepalive_runs(p, &k, o->smoke ? 1 : 3);
            check_fired(10, p, 0, k.fired);
            bench_record(10, p->key, n, "push, advances included",
                         per_op(0, k.ns, (size_t)(k.timed_ms * READS_PER_MS)), "ns/op");
            /* (re-filings come in waves a slot apart: counted over an idle period at least) */
            if (strncmp(p->key, "hwtimer", 7) == 0 && k.timed_ms >= IDLE_MS) {
                bench_record(10, p->key, n, "re-filings per timeout and idle period",
                             (double)k.refiled / (double)n * IDLE_MS / (double)k.timed_ms,
                             "count");
            }
            if (p == &bench_peer_hwtimer_worker) {
                bench_record(10, p->key, n, "worker wake-ups per second",
                             (double)k.wakeups * 1000.0 / (double)k.timed_ms, "count");
            }
        }
        free(order);
        free(first);
    }
    bench_note(10, "%u reads per ms over N connections in a fixed random order (each read "
                   "every N/%u ms), each pushing its connection's idle timeout to the loop's "
                   "time + %u s; the loop advances every 1 ms. The first %llu ms are not "
                   "timed (every timeout is pushed through a full idle period first), the "
                   "next %llu ms are, or as many of them as a peer runs in %u s of wall "
                   "time (a slower peer): ns per push, the advances included; the best of "
                   "3 runs, or of 1 where a run takes over %u s. First deadlines spread "
                   "over 2-30 s (connections opened over the last idle period); nothing "
                   "expires.", READS_PER_MS, READS_PER_MS, IDLE_MS / 1000u,
               (unsigned long long)o->keepalive_warm_ms,
               (unsigned long long)o->keepalive_span_ms,
               (unsigned)(KEEPALIVE_BUDGET_NS / 1000000000ull),
               (unsigned)(KEEPALIVE_SLOW_RUN_NS / 1000000000ull));
    bench_note(10, "hwtimer: hwtimer_reschedule_at; a push later of a timeout in a coarse "
                   "level (30 s ahead: level 1) only stores the deadline, and the pass "
                   "re-files the timeout when it reaches the slot where it waited "
                   "(re-filings: hwtimer_stats.refiled). hwtimer worker: the same on "
                   "a fake clock that the reads move on, far faster than real time (each "
                   "read checks the worker's wake-up, so it wakes on time in fake time); "
                   "its wake-ups per second of that time. timeout.c: timeouts_add on the "
                   "pending timeout. Binary heap: heap_update. libuv: uv_timer_start, its "
                   "cached loop->time set every 1 ms, no uv_run (it would read the real "
                   "clock): it pays no advance.");
}

/* ---- scenario 8: memory ---- */

static void memory(const bench_options *o, const uint32_t *d) {
    size_t n = o->memory_timers;
    for (size_t k = 0; k < NCALLER_PEERS; k++) {
        const bench_peer *p = caller_peers[k];
        if (!selected(p->key)) {
            continue;
        }
        if (p == &bench_peer_hwtimer_locked || p == &bench_peer_hwtimer_worker) {
            continue; /* the same nodes; a mutex, condition variable and thread more */
        }
        void *ctx = p->create(n);
        p->schedule(ctx, d, n);
        size_t node = p->node_bytes(ctx), overhead = p->overhead_bytes(ctx, n);
        bench_record(8, p->key, n, "node", (double)node, "bytes");
        bench_record(8, p->key, n, "structure / N", (double)overhead / (double)n, "bytes");
        bench_record(8, p->key, n, "per pending timeout", (double)node + (double)overhead / (double)n,
                     "bytes");
        p->cancel(ctx, n);
        p->destroy(ctx);
    }
    bench_note(8, "hwtimer+lock and hwtimer worker: the same node and levels, plus a mutex, "
                  "a condition variable and a thread handle.");
    bench_note(8, "node: sizeof the per-timeout struct the user embeds or allocates "
                  "(libevent: event_get_struct_event_size()). structure: what the timer holds "
                  "beyond the nodes (hwtimer_stats.bytes; the heap arrays of pointers; libuv's "
                  "uv_loop_t, its heap being intrusive; timeout.c's struct timeouts, four "
                  "wheels of 64 list heads).");
}

/* ---- the summary: the project's targets against what this run measured ---- */

static void summary_line(int scenario, const char *peer, uint64_t n, const char *metric,
                         const char *label, double target) {
    double v;
    if (bench_lookup(scenario, peer, n, metric, &v)) {
        printf("- %s at N = %llu: %.1f ns (target <= %.0f: %s)\n", label, (unsigned long long)n,
               v, target, v <= target ? "met" : "MISSED");
    }
}

/* Schedule + cancel against timeout.c's in the same run (target: no slower), with 512 and
   with 64 slots per level, and the floor under it (floors.c). */
static void pair_vs_timeout_line(uint64_t n) {
    static const char *const peers[] = {"hwtimer", "hwtimer_64"};
    double tc_s, tc_c, file, unlink;
    if (!bench_lookup(1, "timeout_c", n, "schedule", &tc_s) ||
        !bench_lookup(1, "timeout_c", n, "cancel", &tc_c)) {
        return;
    }
    for (int k = 0; k < 2; k++) {
        double s, c;
        if (bench_lookup(1, peers[k], n, "schedule", &s) &&
            bench_lookup(1, peers[k], n, "cancel", &c)) {
            printf("- %s schedule + cancel at N = %llu: %.1f ns, timeout.c %.1f = x%.2f "
                   "(target <= 1: %s)\n", peers[k], (unsigned long long)n, s + c, tc_s + tc_c,
                   (s + c) / (tc_s + tc_c), s + c <= tc_s + tc_c ? "met" : "MISSED");
        }
    }
    if (bench_lookup(0, "floor", n, "file with the node's fields", &file) &&
        bench_lookup(0, "floor", n, "unlink + state + count", &unlink)) {
        printf("  (the floor under them with 512 slots, no timer: %.1f ns; see scenario 1)\n",
               file + unlink);
    }
}

/* Keep-alive pushes against timeout.c and the binary heap (target: at most 0.5 of each). */
static void keepalive_lines(const bench_options *o) {
    static const char *const peers[] = {"timeout_c", "heap"};
    static const char *const names[] = {"timeout.c", "binary heap"};
    for (size_t s = 0; s < o->nkeepalive; s++) {
        uint64_t n = o->keepalive_sizes[s];
        double hw, other;
        if (!bench_lookup(10, "hwtimer", n, "push, advances included", &hw)) {
            continue;
        }
        for (int k = 0; k < 2; k++) {
            if (bench_lookup(10, peers[k], n, "push, advances included", &other)) {
                printf("- keep-alive push at N = %llu: hwtimer %.2f ns, %s %.2f = x%.2f "
                       "(target <= 0.5: %s)\n", (unsigned long long)n, hw, names[k], other,
                       hw / other, hw <= 0.5 * other ? "met" : "MISSED");
            }
        }
    }
}

/* How much ns/op grows from N = 10^4 to the largest N, next to how much log2(N) grows. */
static void growth_line(int scenario, const char *metric, uint64_t big) {
    double a, b, c, d;
    if (big > 10000 && bench_lookup(scenario, "hwtimer", 10000, metric, &a) &&
        bench_lookup(scenario, "hwtimer", big, metric, &b)) {
        printf("- %s, 10^4 -> %llu: hwtimer x%.1f", metric, (unsigned long long)big, b / a);
        if (bench_lookup(scenario, "heap", 10000, metric, &c) &&
            bench_lookup(scenario, "heap", big, metric, &d)) {
            printf(", binary heap x%.1f", d / c);
        }
        printf(" (log2 N grows x%.2f)\n", log2((double)big) / log2(10000.0));
    }
}

/* Scenario 9's widest leeway against its bound: passes (caller-driven) and wake-ups (worker). */
static void leeway_line(const bench_options *o) {
    double bound, passes, wakeups;
    const char *metric = "leeway 100 ms";
    if (!bench_lookup(9, "bound", o->leeway_timers, metric, &bound) ||
        !bench_lookup(9, "hwtimer", o->leeway_timers, metric, &passes)) {
        return;
    }
    printf("- %s, %zu timeouts over %llu ms: %.0f passes ran callbacks", metric,
           o->leeway_timers, (unsigned long long)o->leeway_span_ms, passes);
    if (bench_lookup(9, "hwtimer_worker", o->leeway_timers, metric, &wakeups)) {
        printf(", the worker woke %.0f times", wakeups);
        passes = wakeups > passes ? wakeups : passes; /* both must meet the bound */
    }
    printf(" (bound %.0f: %s)\n", bound, passes <= bound ? "met" : "MISSED");
}

/* Scenario 9's cost of a leeway on a schedule against the 10% the project holds it to. */
static void leeway_cost_line(const bench_options *o) {
    static const char *const leeways[] = {"10 ms", "100 ms"};
    for (int k = 0; k < 2; k++) {
        char metric[64];
        double more;
        snprintf(metric, sizeof metric, "schedule with leeway %s vs none", leeways[k]);
        if (bench_lookup(9, "hwtimer", o->leeway_cost_timers, metric, &more)) {
            printf("- schedule with a leeway of %s at N = %zu: %+.1f%% over none (target "
                   "<= 10%%: %s)\n", leeways[k], o->leeway_cost_timers, more,
                   more <= 10 ? "met" : "MISSED");
        }
    }
}

/* Two producers on one shared timer against one producer (target: no slower in all). */
static void shared_timer_lines(void) {
    static const char *const modes[] = {"hwtimer_lock", "hwtimer_worker"};
    for (int k = 0; k < 2; k++) {
        double one, two, sharded;
        if (!bench_lookup(5, modes[k], 0, "1 producer thread", &one) ||
            !bench_lookup(5, modes[k], 0, "2 producer threads", &two) ||
            !bench_lookup(5, modes[k], 0, "2 producers, timer of 2 shards", &sharded)) {
            continue;
        }
        printf("- %s, 2 producers on one timer vs 1 producer: %.1f vs %.1f M pairs/s; with 2 "
               "shards %.1f (x%.2f; target >= 1: %s)\n", modes[k], two, one, sharded,
               sharded / one, sharded >= one ? "met" : "MISSED");
    }
}

static void print_summary(const bench_options *o) {
    uint64_t big = o->sizes[o->nsizes - 1], at = big < 1000000 ? big : 1000000;
    static const char *const producers[] = {"1 producer thread", "2 producer threads"};
    printf("\n### Summary against the targets\n\n");
    summary_line(1, "hwtimer", at, "schedule", "hwtimer schedule", 10);
    summary_line(1, "hwtimer", at, "cancel", "hwtimer cancel", 10);
    summary_line(2, "hwtimer", at, "schedule+expire", "hwtimer schedule+expire", 100);
    pair_vs_timeout_line(at);
    growth_line(1, "schedule", big);
    growth_line(1, "cancel", big);
    growth_line(2, "schedule+expire", big);
    leeway_line(o);
    leeway_cost_line(o);
    keepalive_lines(o);
    for (int k = 0; k < 2; k++) {
        const double target = 0.30; /* at most 0.3x Netty's time per pair */
        double hw, netty;
        if (bench_lookup(5, "hwtimer_worker", 0, producers[k], &hw) &&
            bench_lookup(5, "netty", 0, producers[k], &netty)) {
            printf("- worker schedule+cancel, %s: hwtimer %.1f / Netty %.1f M pairs/s, %.1f vs "
                   "%.1f ns per pair = x%.2f (target <= %.2f: %s)\n", producers[k], hw, netty,
                   1e3 / hw, 1e3 / netty, netty / hw, target,
                   netty / hw <= target ? "met" : "MISSED");
            double clock_ns, at_lock;
            if (k == 0 && netty / hw > target &&
                bench_lookup(0, "clock", 0, "clock read", &clock_ns) &&
                bench_lookup(5, "hwtimer_lock", 0, "1 producer with schedule_at", &at_lock)) {
                printf("  (floor: one clock read, which every hwtimer_schedule makes, %.1f ns + "
                       "the locked pair without one, the schedule_at row, %.1f ns = %.1f ns; "
                       "%.2fx Netty is %.1f ns)\n", clock_ns, 1e3 / at_lock,
                       clock_ns + 1e3 / at_lock, target, target * 1e3 / netty);
            }
            double sharded;
            if (k == 1 && bench_lookup(5, "hwtimer_worker", 0, "2 producers, timer of 2 shards",
                                       &sharded)) {
                printf("  (on one timer of 2 shards: %.1f M pairs/s, %.1f ns per pair = x%.2f "
                       "Netty's)\n", sharded, 1e3 / sharded, netty / sharded);
            }
        }
    }
    shared_timer_lines();
}

/* ---- options and the run ---- */

static const uint64_t default_sizes[] = {1000, 10000, 100000, 1000000, 10000000};
static const uint64_t keepalive_sizes[] = {100000, 1000000};

static void usage(FILE *f) {
    fprintf(f, "usage: hwtimer_bench [--full] [--smoke] [--no-java] [--scenarios 1,2,...] "
               "[--peers a,b] [--sizes n,...] [--out FILE.csv]\n"
               "  --full       add N = 10^7 to scenarios 1-3 and 10x the producer operations\n"
               "  --smoke      tiny sizes: checks callbacks, not speed (meson test)\n"
               "  --no-java    skip Netty's HashedWheelTimer\n"
               "  --scenarios  run only these (1-11), e.g. 3,10\n"
               "  --peers      only these columns, e.g. hwtimer,heap,timeout_c (CSV keys)\n"
               "  --sizes      N values of scenarios 1-3 and 10, e.g. 1e4,1e6 (default "
               "10^3-10^6; 10^5 and 10^6 connections for 10)\n"
               "  --out FILE   CSV path; the SVG chart goes next to it (.svg)\n");
}

static void set_defaults(bench_options *o, int full, int smoke) {
    memset(o, 0, sizeof *o);
    o->sizes = default_sizes;
    o->nsizes = smoke ? 1 : full ? 5 : 4;
    o->long_timers = smoke ? 10000 : 1000000;
    o->long_span_ms = 3600000;
    o->producer_pairs = smoke ? 10000 : full ? 20000000 : 2000000;
    o->accuracy_timers = smoke ? 1000 : 100000;
    o->accuracy_max_ms = smoke ? 100 : 1000;
    o->idle_ns = smoke ? 200 * BENCH_MS : 2000 * BENCH_MS;
    o->memory_timers = smoke ? 1000 : 1000000;
    o->leeway_timers = smoke ? 1000 : 10000;
    o->leeway_span_ms = smoke ? 1000 : 10000;
    o->leeway_cost_timers = smoke ? 1000 : 1000000;
    o->keepalive_sizes = smoke ? default_sizes : keepalive_sizes;
    o->nkeepalive = smoke ? 1 : 2;
    o->keepalive_warm_ms = smoke ? 2000 : IDLE_MS;
    o->keepalive_span_ms = smoke ? 2000 : 2 * IDLE_MS;
    o->java = !smoke;
    o->smoke = smoke;
}

static void print_environment(const bench_options *o) {
    char line[256], cpu[256] = "unknown CPU";
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0 && strchr(line, ':')) {
            snprintf(cpu, sizeof cpu, "%s", strchr(line, ':') + 2);
            cpu[strcspn(cpu, "\n")] = '\0';
            break;
        }
    }
    if (f) {
        fclose(f);
    }
    printf("# hwtimer benchmarks\n\n");
    printf("%s, %ld CPUs online; compiler %s; 1 ms tick everywhere; seed %#llx.\n", cpu,
           sysconf(_SC_NPROCESSORS_ONLN), __VERSION__, (unsigned long long)BENCH_SEED);
#ifdef BENCH_HAVE_LIBUV
    printf("libuv %s. ", uv_version_string());
#else
    printf("libuv: not built (meson found no libuv), its column is skipped. ");
#endif
#ifdef BENCH_HAVE_LIBEVENT
    printf("libevent %s.\n", event_get_version());
#else
    printf("libevent: not built (meson found no libevent), its column is skipped.\n");
#endif
#ifdef BENCH_HAVE_TIMEOUT_C
    printf("timeout.c: %s, built from %s.\n", bench_timeout_version(), BENCH_TIMEOUT_SRC);
#else
    printf("timeout.c: skipped (point bench/run at a checkout: bench/run --timeout-src DIR, "
           "or meson -Dtimeout_src=DIR).\n");
#endif
    f = fopen("/proc/loadavg", "r");
    if (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        printf("Load average at start: %s (other work on the machine skews the numbers).\n",
               line);
    }
    if (f) {
        fclose(f);
    }
    printf("Scenarios 1-3: N = ");
    for (size_t i = 0; i < o->nsizes; i++) {
        printf("%s%llu", i ? ", " : "", (unsigned long long)o->sizes[i]);
    }
    printf("; best of 3 runs for N <= 10^6, one run above.\n");
}

/* Parses "1,2,10" into a mask of scenarios. */
static unsigned parse_scenarios(const char *list) {
    unsigned mask = 0;
    for (const char *c = list; *c;) {
        char *end;
        unsigned long k = strtoul(c, &end, 10);
        if (end == c) {
            c++;
            continue;
        }
        if (k >= 1 && k <= 11) {
            mask |= 1u << k;
        }
        c = end;
    }
    return mask;
}

/* Parses "1000,1e6" into sizes; returns how many. */
static size_t parse_sizes(const char *list, uint64_t *sizes, size_t max) {
    size_t count = 0;
    for (const char *c = list; *c && count < max;) {
        char *end;
        double v = strtod(c, &end);
        if (end == c || v < 1) {
            break;
        }
        sizes[count++] = (uint64_t)v;
        c = *end == ',' ? end + 1 : end;
    }
    return count;
}

/* The SVG path: FILE.csv -> FILE.svg, anything else -> FILE.svg appended. */
static void svg_path_for(char *svg, size_t size, const char *csv) {
    size_t len = strlen(csv);
    if (len > 4 && strcmp(csv + len - 4, ".csv") == 0) {
        snprintf(svg, size, "%.*s.svg", (int)(len - 4), csv);
    } else {
        snprintf(svg, size, "%s.svg", csv);
    }
}

static void print_caller_tables(unsigned mask) {
    static const char *const headings[] = {
        "",
        ("RPC timeouts: schedule N (delays 1-61 s from the loop's time, as each peer counts "
         "them: hwtimer_schedule_ticks, timeout.c's add, uv_timer_start, the heap's cached "
         "now; hwtimer also reading the clock on every call, hwtimer_schedule), then cancel "
         "all, in index order or in a random order (ns/op, lower is better)"),
        "Expiry: schedule N, advance past all, fire everything (ns per timer, lower is better)",
        ("Idle-connection churn: each of N timers rescheduled 10 times, 1 s later each time, "
         "then expired (ns per reschedule, lower is better)"),
    };
    for (int s = 1; s <= 3; s++) {
        if (mask & (1u << s)) {
            bench_print_table(s, headings[s], BENCH_BASELINE);
        }
    }
}

int main(int argc, char **argv) {
    int full = 0, smoke = 0, no_java = 0;
    uint64_t sizes[MAX_SIZES];
    size_t nsizes = 0;
    unsigned mask = 0xffeu; /* scenarios 1-11 */
    const char *out = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--full") == 0) {
            full = 1;
        } else if (strcmp(argv[i], "--smoke") == 0) {
            smoke = 1;
        } else if (strcmp(argv[i], "--no-java") == 0) {
            no_java = 1;
        } else if (strcmp(argv[i], "--scenarios") == 0 && i + 1 < argc) {
            mask = parse_scenarios(argv[++i]);
        } else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
            out = argv[++i];
        } else if (strcmp(argv[i], "--peers") == 0 && i + 1 < argc) {
            peer_filter = argv[++i];
        } else if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc) {
            nsizes = parse_sizes(argv[++i], sizes, sizeof sizes / sizeof sizes[0]);
        } else {
            usage(strcmp(argv[i], "--help") == 0 ? stdout : stderr);
            return strcmp(argv[i], "--help") == 0 ? 0 : 2;
        }
    }
    if (!out) {
        out = smoke ? BENCH_RESULTS_DIR "/smoke.csv" : BENCH_RESULTS_DIR "/latest.csv";
    }
    bench_options o;
    set_defaults(&o, full, smoke);
    o.java = o.java && !no_java && selected("netty");
    if (nsizes) {
        o.sizes = o.keepalive_sizes = sizes;
        o.nsizes = o.nkeepalive = nsizes;
    }
    uint64_t start = bench_wall_ns();
    print_environment(&o);

    static const char *const keys[] = {"hwtimer", "hwtimer_lock", "hwtimer_worker",
                                       "hwtimer_64", "heap", "libuv", "libevent", "netty",
                                       "timeout_c", "bound"};
    static const char *const titles[] = {"hwtimer", "hwtimer+lock", "hwtimer worker",
                                         "hwtimer 64 slots", "binary heap", "libuv",
                                         "libevent", "Netty HWT", "timeout.c", "bound"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        bench_declare_peer(keys[i], titles[i]);
    }
    bench_netty_run(&o); /* first, so its numbers join every table as it is printed */

    size_t max_n = (size_t)o.sizes[o.nsizes - 1];
    if (o.memory_timers > max_n) {
        max_n = o.memory_timers;
    }
    if (o.leeway_cost_timers > max_n) {
        max_n = o.leeway_cost_timers;
    }
    uint32_t *delays = bench_delays_ms(max_n, RPC_MIN_MS, RPC_MAX_MS, BENCH_SEED);
    caller_scenarios(&o, mask, delays);
#ifdef BENCH_HAVE_TIMEOUT_C
    bench_note(2, "timeout.c: timeouts_update to the new time, then timeouts_get until it "
                  "returns NULL, calling each callback (timeout.c never calls them itself); "
                  "one update past every deadline hands them back in wheel order, not in "
                  "deadline order.");
    bench_note(3, "timeout.c: timeouts_add on a pending timeout (it takes it out first).");
#endif
    if (mask & (1u << 1)) {
        size_t n = (size_t)o.sizes[o.nsizes - 1];
        double bare_ns, state_ns, file_ticks_ns, file_div_ns, file_ns;
        bench_cancel_floor_ns(delays, n, &bare_ns, &state_ns);
        bench_schedule_floor_ns(delays, n, &file_ticks_ns, &file_div_ns, &file_ns);
        static const char *const floor_metrics[] = {"bare unlink", "unlink + state + count",
                                                    "file ticks as timeout.c stores",
                                                    "file ns as timeout.c stores",
                                                    "file with the node's fields"};
        const double floor_ns[] = {bare_ns, state_ns, file_ticks_ns, file_div_ns, file_ns};
        for (int k = 0; k < 5; k++) bench_record(0, "floor", n, floor_metrics[k], floor_ns[k], "ns/op");
        bench_note(1, "Floor under cancel at N = %zu: unlinking the same nodes, in the same "
                      "order, from lists built as hwtimer builds them, with no timer: %.1f ns "
                      "per node bare, %.1f ns with the node's state and a pending count "
                      "written too, as a cancel must (floors.c)", n, bare_ns, state_ns);
        bench_note(1, "Floor under schedule at N = %zu: filing the same nodes as hwtimer files "
                      "them, written out inline with no checks, call or clock, storing what "
                      "timeout.c's add stores (deadline, owner, list): %.1f ns per node from "
                      "a delay in ticks, as timeout.c and hwtimer_schedule_ticks take it; %.1f ns "
                      "from nanoseconds divided into ticks, as hwtimer_schedule_at takes "
                      "them; %.1f ns storing also "
                      "the callback, argument, period, state and pending count that a "
                      "schedule keeps here (floors.c). Schedule + cancel floor under this "
                      "contract: %.1f ns", n, file_ticks_ns, file_div_ns, file_ns,
                   file_ns + state_ns);
        if (selected("hwtimer")) {
            double stop_ns = bench_hwtimer_stop_ns(delays, n);
            bench_record(0, "hwtimer", n, "stop", stop_ns, "ns/op");
            bench_note(1, "hwtimer_stop with N = %zu pending, each handed back to a callback: "
                          "%.1f ns per timeout", n, stop_ns);
        }
    }
    print_caller_tables(mask);
    if (mask & (1u << 4)) {
        long_timers(&o);
        bench_print_table(4, "Long timers on a fine tick: 1 s - 1 h delays, 1 ms tick, "
                             "advance through the hour in 1 ms steps", BENCH_BASELINE);
    }
    if (mask & (1u << 5)) {
        failures += bench_threads_producers(&o);
        bench_print_table(5, "Threads: producers scheduling + cancelling against the worker "
                             "(M pairs/s, higher is better)", "hwtimer_worker");
    }
    if (mask & (1u << 6)) {
        failures += bench_threads_accuracy(&o);
        bench_print_table(6, "Accuracy: worker mode, 1 ms tick, random delays up to 1 s "
                             "(lateness after the deadline)", "hwtimer_worker");
    }
    if (mask & (1u << 7)) {
        failures += bench_threads_idle(&o);
        bench_print_table(7, "Idle cost: worker wake-ups per second with nothing due",
                          "hwtimer_worker");
    }
    if (mask & (1u << 8)) {
        memory(&o, delays);
        bench_print_table(8, "Memory per pending timeout (lower is better)", BENCH_BASELINE);
    }
    if (mask & (1u << 9)) {
        failures += bench_leeway(&o, delays, o.leeway_cost_timers);
        bench_print_table(9, "Leeway: passes that ran callbacks (caller-driven), worker "
                             "wake-ups, and the cost of schedule and cancel", BENCH_BASELINE);
    }
    if (mask & (1u << 10)) {
        keepalive(&o);
        bench_print_table(10, "Keep-alive: idle timeouts of 30 s pushed back on every read, "
                              "1000 reads per ms from the loop's cached time (ns per push, "
                              "lower is better)", BENCH_BASELINE);
    }
    if (mask & (1u << 11)) {
        failures += bench_expiry(&o, delays);
        bench_print_table(11, "Expiry and the clock: a loop's longest call in a burst, "
                              "bounded or not; schedule and the worker's pair with each "
                              "clock; lateness, measured and counted; an idle minute's "
                              "wake-ups and CPU time", BENCH_BASELINE);
    }
    free(delays);
    if (!o.smoke) {
        print_summary(&o);
    }

    char svg[4096];
    svg_path_for(svg, sizeof svg, out);
    if (mkdir(BENCH_RESULTS_DIR, 0777) != 0 && errno != EEXIST) {
        perror(BENCH_RESULTS_DIR);
    }
    if (bench_write_csv(out) == 0 && bench_write_svg(svg) == 0) {
        printf("\nResults: %s, chart: %s\n", out, svg);
    }
    printf("Total time %.1f s; %d correctness failure%s.\n", (double)(bench_wall_ns() - start) / 1e9,
           failures, failures == 1 ? "" : "s");
    return failures ? 1 : 0;
}
