/* keepalive.c - scenario 10, keep-alive: N connections, each with an idle timeout of
   30 s pushed back on every read, 1000 reads per ms in a fixed random order, the loop
   advancing every 1 ms (bench_keepalive in bench.h), for the peers that have its loop,
   hwtimer's worker among them on a fake clock: ns per push, the advances included. */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define READS_PER_MS 1000u
/* At its default sizes this pushes 90 million times per run: a peer at 1 us a push (a heap
   of 10^6) would take minutes. Its timed span ends after this much wall time, and a run
   that took longer than KEEPALIVE_SLOW_RUN_NS is not repeated. */
#define KEEPALIVE_BUDGET_NS 8000000000ull
#define KEEPALIVE_SLOW_RUN_NS 20000000000ull

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

int scenario_keepalive(const bench_options *o, const uint32_t *delay_ms) {
    int failures = 0;
    (void)delay_ms; /* its own first deadlines */
    for (size_t s = 0; s < o->nkeepalive; s++) {
        size_t n = (size_t)o->keepalive_sizes[s];
        uint32_t *order = bench_permutation(n, BENCH_SEED + 10);
        uint32_t *first = bench_delays_ms(n, 2000, BENCH_IDLE_MS, BENCH_SEED + 11);
        for (size_t j = 0; j < bench_ncaller_peers; j++) {
            const bench_peer *p = bench_caller_peers[j];
            bench_keepalive k;
            if (!bench_selected(o, p->key)) {
                continue;
            }
            if (!p->keepalive) {
                if (s == 0) {
                    bench_note(SCENARIO_KEEPALIVE, "%s: n/a (%s)", p->title, p->skip_reason);
                }
                continue;
            }
            fprintf(stderr, "  scenario 10: %s, N = %zu\n", p->title, n);
            memset(&k, 0, sizeof k);
            k.n = n;
            k.order = order;
            k.first_ms = first;
            k.idle_ms = BENCH_IDLE_MS;
            k.reads_per_ms = READS_PER_MS;
            k.warm_ms = o->keepalive_warm_ms;
            k.span_ms = o->keepalive_span_ms;
            k.budget_ns = o->smoke ? 0 : KEEPALIVE_BUDGET_NS;
            keepalive_runs(p, &k, o->smoke ? 1 : 3);
            failures += bench_check_fired(SCENARIO_KEEPALIVE, p, 0, k.fired);
            bench_record(SCENARIO_KEEPALIVE, p->key, n, "push, advances included",
                         bench_per_op(0, k.ns, (size_t)(k.timed_ms * READS_PER_MS)), "ns/op");
            /* (re-filings come in waves a slot apart: counted over an idle period at least) */
            if (strncmp(p->key, "hwtimer", 7) == 0 && k.timed_ms >= BENCH_IDLE_MS) {
                bench_record(SCENARIO_KEEPALIVE, p->key, n,
                             "re-filings per timeout and idle period",
                             (double)k.refiled / (double)n * BENCH_IDLE_MS / (double)k.timed_ms,
                             "count");
            }
            if (p == &bench_peer_hwtimer_worker) {
                bench_record(SCENARIO_KEEPALIVE, p->key, n, "worker wake-ups per second",
                             (double)k.wakeups * 1000.0 / (double)k.timed_ms, "count");
            }
        }
        free(order);
        free(first);
    }
    bench_note(SCENARIO_KEEPALIVE,
               "%u reads per ms over N connections in a fixed random order (each read "
               "every N/%u ms), each pushing its connection's idle timeout to the loop's "
               "time + %u s; the loop advances every 1 ms. The first %llu ms are not "
               "timed (every timeout is pushed through a full idle period first), the "
               "next %llu ms are, or as many of them as a peer runs in %u s of wall "
               "time (a slower peer): ns per push, the advances included; the best of "
               "3 runs, or of 1 where a run takes over %u s. First deadlines spread "
               "over 2-30 s (connections opened over the last idle period); nothing "
               "expires.", READS_PER_MS, READS_PER_MS, BENCH_IDLE_MS / 1000u,
               (unsigned long long)o->keepalive_warm_ms,
               (unsigned long long)o->keepalive_span_ms,
               (unsigned)(KEEPALIVE_BUDGET_NS / 1000000000ull),
               (unsigned)(KEEPALIVE_SLOW_RUN_NS / 1000000000ull));
    bench_note(SCENARIO_KEEPALIVE,
               "hwtimer: hwtimer_reschedule_at; a push later of a timeout in a coarse "
               "level (30 s ahead: level 1) only stores the deadline, and the pass "
               "re-files the timeout when it reaches the slot where it waited "
               "(re-filings: hwtimer_stats.refiled). hwtimer worker: the same on "
               "a fake clock that the reads move on, far faster than real time (each "
               "read checks the worker's wake-up, so it wakes on time in fake time); "
               "its wake-ups per second of that time. timeout.c: timeouts_add on the "
               "pending timeout. Binary heap: heap_update. libuv: uv_timer_start, its "
               "cached loop->time set every 1 ms, no uv_run (it would read the real "
               "clock): it pays no advance.");
    bench_print_table(SCENARIO_KEEPALIVE, "Keep-alive: idle timeouts of 30 s pushed back on "
                                          "every read, 1000 reads per ms from the loop's "
                                          "cached time (ns per push, lower is better)",
                      BENCH_BASELINE);
    return failures;
}
