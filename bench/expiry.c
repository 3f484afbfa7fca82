/* expiry.c - scenario 2: every caller-driven peer that can move its clock schedules N
   timeouts (scenario 1's delays, 1-61 s), then advances past all of them in one step,
   firing every callback: ns per timer, the schedule included. */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"


static void body_schedule(void *arg) {
    bench_run *r = (bench_run *)arg;
    r->t0 = bench_wall_ns();
    r->peer->schedule(r->ctx, r->delay_ms, r->n);
}

static void measure_expiry(bench_run *r, double ns[2]) {
    bench_run_in_loop(r, body_schedule);
    size_t fired = r->peer->expire(r->ctx, BENCH_RPC_MAX_MS + 1000u);
    r->t1 = bench_wall_ns();
    r->failures += bench_check_fired(SCENARIO_EXPIRY, r->peer, r->n, fired);
    ns[0] = bench_per_op(r->t0, r->t1, r->n);
}

static int expires(const bench_peer *p) {
    return p->expire != NULL;
}

int scenario_expiry(const bench_options *o, const uint32_t *delay_ms) {
    static const bench_measure m = {SCENARIO_EXPIRY, measure_expiry, {"schedule+expire", NULL},
                                    "ns/timer", expires, 1};
    int failures = bench_caller_measure(o, &m, delay_ms, NULL);
#ifdef BENCH_HAVE_TIMEOUT_C
    bench_note(SCENARIO_EXPIRY, "timeout.c: timeouts_update to the new time, then "
                                "timeouts_get until it returns NULL, calling each callback "
                                "(timeout.c never calls them itself); one update past every "
                                "deadline hands them back in wheel order, not in deadline "
                                "order.");
#endif
    bench_print_table(SCENARIO_EXPIRY, "Expiry: schedule N, advance past all, fire everything "
                                       "(ns per timer, lower is better)", BENCH_BASELINE);
    return failures;
}
