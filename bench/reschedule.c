/* reschedule.c - scenario 3, idle-connection churn: every caller-driven peer schedules N
   timeouts (scenario 1's delays), then moves each one RESCHEDULES times, 1 s later each
   time, as a server pushes an idle timeout back on activity; then expires them (or
   cancels them, a peer whose clock cannot move): ns per reschedule. */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"

#define RESCHEDULES 10u   /* each timer moved 10 times, 1 s later each time */
/* The timers expire at BENCH_RPC_MAX_MS + (RESCHEDULES + 1) s: it must stay in the fake time
   libuv and libevent can map (a negative array size stops the build otherwise). */
typedef char bench_fake_time_fits[BENCH_RPC_MAX_MS + (RESCHEDULES + 1) * 1000u <= BENCH_MAX_FAKE_MS ? 1 : -1];

static void body_reschedule(void *arg) {
    bench_run *r = (bench_run *)arg;
    r->peer->schedule(r->ctx, r->delay_ms, r->n);
    r->t0 = bench_wall_ns();
    for (uint32_t k = 1; k <= RESCHEDULES; k++) {
        r->peer->reschedule(r->ctx, r->delay_ms, r->n, k * 1000u);
    }
    r->t1 = bench_wall_ns();
}

static void measure_churn(bench_run *r, double ns[2]) {
    bench_run_in_loop(r, body_reschedule);
    if (r->peer->expire) {
        r->failures += bench_check_fired(
            SCENARIO_RESCHEDULE, r->peer, r->n,
            r->peer->expire(r->ctx, BENCH_RPC_MAX_MS + (RESCHEDULES + 1) * 1000u));
    } else {
        r->peer->cancel(r->ctx, r->n);
    }
    ns[0] = bench_per_op(r->t0, r->t1, r->n * RESCHEDULES);
}

int scenario_reschedule(const bench_options *o, const uint32_t *delay_ms) {
    static const bench_measure m = {SCENARIO_RESCHEDULE, measure_churn, {"reschedule", NULL},
                                    "ns/op", NULL, 0};
    int failures = bench_caller_measure(o, &m, delay_ms, NULL);
#ifdef BENCH_HAVE_TIMEOUT_C
    bench_note(SCENARIO_RESCHEDULE, "timeout.c: timeouts_add on a pending timeout (it takes it "
                                    "out first).");
#endif
    bench_print_table(SCENARIO_RESCHEDULE, "Idle-connection churn: each of N timers "
                                           "rescheduled 10 times, 1 s later each time, then "
                                           "expired (ns per reschedule, lower is better)",
                      BENCH_BASELINE);
    return failures;
}
