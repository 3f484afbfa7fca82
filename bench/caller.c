/* caller.c - the caller-driven peers (peer_*.c) and how a scenario times them: one timed
   loop per (peer, N), on a fresh timer every run, the peers' runs taken in turn, the best
   of 3 kept (scenarios 1-3). Scenarios 4, 8 and 10 walk the same peers their own way. */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"

#include <stdio.h>

const bench_peer *const bench_caller_peers[] = {
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
#define NCALLER_PEERS (sizeof bench_caller_peers / sizeof bench_caller_peers[0])
const size_t bench_ncaller_peers = NCALLER_PEERS;

void bench_run_in_loop(bench_run *r, bench_body_fn body) {
    if (r->peer->in_loop) {
        r->peer->in_loop(r->ctx, body, r);
    } else {
        body(r);
    }
}

int bench_check_fired(int scenario, const bench_peer *p, size_t expected, size_t fired) {
    if (fired != expected) {
        fprintf(stderr, "FAIL scenario %d, %s: %zu callbacks ran, expected %zu\n", scenario,
                p->title, fired, expected);
        return 1;
    }
    return 0;
}

double bench_per_op(uint64_t from, uint64_t to, size_t ops) {
    return (double)(to - from) / (double)(ops ? ops : 1);
}

/* A peer's run number nth (0 first), on a fresh timer: keeps its best so far in best[2].
   Returns its failures. */
static int one_run(const bench_peer *p, const uint32_t *d, const uint32_t *order, size_t n,
                   bench_measure_fn measure, unsigned nth, double best[2]) {
    bench_run r = {p, p->create(n), d, order, n, 0, 0, 0, 0};
    double ns[2] = {0, 0};
    measure(&r, ns);
    for (int i = 0; i < 2; i++) {
        best[i] = nth == 0 || ns[i] < best[i] ? ns[i] : best[i];
    }
    p->destroy(r.ctx);
    return r.failures;
}

/* Whether a peer takes part in a kind of run (noting why not, once, where that is news). */
static int takes_part(const bench_options *o, const bench_measure *m, const bench_peer *p) {
    if (!bench_selected(o, p->key)) {
        return 0;
    }
    if (m->can && !m->can(p)) {
        if (m->noted) {
            bench_note(m->scenario, "%s: n/a (%s)", p->title, p->skip_reason);
        }
        return 0;
    }
    return 1;
}

/* For each N, the peers' runs in turn, 3 rounds for N <= 10^6 (1 above, or with --smoke),
   each peer keeping its best: on a shared VM the machine's speed drifts over minutes, so
   runs taken in turn see the same drift, and the best of three is the least disturbed. */
int bench_caller_measure(const bench_options *o, const bench_measure *m,
                         const uint32_t *delay_ms, const uint32_t *const *orders) {
    int part[NCALLER_PEERS], failures = 0;
    for (size_t k = 0; k < NCALLER_PEERS; k++) {
        part[k] = takes_part(o, m, bench_caller_peers[k]);
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
                    failures += one_run(bench_caller_peers[k], delay_ms,
                                        orders ? orders[i] : NULL, n, m->fn, r, best[k]);
                }
            }
        }
        for (size_t k = 0; k < NCALLER_PEERS; k++) {
            for (int j = 0; j < 2 && part[k] && m->metrics[j]; j++) {
                bench_record(m->scenario, bench_caller_peers[k]->key, n, m->metrics[j],
                             best[k][j], m->unit);
            }
        }
    }
    return failures;
}
