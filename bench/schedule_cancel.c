/* schedule_cancel.c - scenario 1, RPC timeouts: every caller-driven peer schedules N
   timeouts (delays 1-61 s from the loop's time), then cancels them all, in index order;
   then again, cancelling in a seeded random order; hwtimer also with the schedule that
   reads the clock on every call. Beside them, at the largest N: the floors under a
   schedule and a cancel (floors.c) and hwtimer_stop's cost per timeout.

   At N = 10^6 the nodes outgrow a core's own caches, so each peer also pays for bringing
   its nodes in from memory, in proportion to their size (see scenario 8), and a random
   order defeats the prefetcher. */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"

#include <stdlib.h>

static void body_schedule_cancel(void *arg) {
    bench_run *r = (bench_run *)arg;
    r->t0 = bench_wall_ns();
    r->peer->schedule(r->ctx, r->delay_ms, r->n);
    r->t1 = bench_wall_ns();
    r->peer->cancel(r->ctx, r->n);
    r->t2 = bench_wall_ns();
}

static void body_schedule_reading_clock(void *arg) {
    bench_run *r = (bench_run *)arg;
    r->t0 = bench_wall_ns();
    r->peer->schedule_reading_clock(r->ctx, r->delay_ms, r->n);
    r->t1 = bench_wall_ns();
    r->peer->cancel(r->ctx, r->n);
}

static void body_schedule_cancel_order(void *arg) {
    bench_run *r = (bench_run *)arg;
    r->peer->schedule(r->ctx, r->delay_ms, r->n);
    r->t0 = bench_wall_ns();
    r->peer->cancel_order(r->ctx, r->order, r->n);
    r->t1 = bench_wall_ns();
}

static void measure_rpc(bench_run *r, double ns[2]) {
    bench_run_in_loop(r, body_schedule_cancel);
    ns[0] = bench_per_op(r->t0, r->t1, r->n);
    ns[1] = bench_per_op(r->t1, r->t2, r->n);
}

/* hwtimer's schedule that reads the clock on every call. */
static void measure_schedule_reading_clock(bench_run *r, double ns[2]) {
    bench_run_in_loop(r, body_schedule_reading_clock);
    ns[0] = bench_per_op(r->t0, r->t1, r->n);
}

/* Cancels in a random order: an RPC's replies do not come back in the order the requests
   went out, and nodes touched in index order sit next to each other in memory. */
static void measure_cancel_order(bench_run *r, double ns[2]) {
    bench_run_in_loop(r, body_schedule_cancel_order);
    ns[0] = bench_per_op(r->t0, r->t1, r->n);
}

static int reads_clock(const bench_peer *p) {
    return p->schedule_reading_clock != NULL;
}

static const bench_measure measures[] = {
    {SCENARIO_SCHEDULE_CANCEL, measure_rpc, {"schedule", "cancel"}, "ns/op", NULL, 0},
    {SCENARIO_SCHEDULE_CANCEL, measure_cancel_order, {"cancel in random order", NULL}, "ns/op",
     NULL, 0},
    {SCENARIO_SCHEDULE_CANCEL, measure_schedule_reading_clock,
     {"schedule, reading the clock", NULL}, "ns/op", reads_clock, 0},
};

/* The floors (floors.c) and hwtimer_stop at N = n: rows of no table, and notes. */
static void floors_and_stop(const bench_options *o, const uint32_t *d, size_t n) {
    double bare_ns, state_ns, file_ticks_ns, file_div_ns, file_ns;
    bench_cancel_floor_ns(d, n, &bare_ns, &state_ns);
    bench_schedule_floor_ns(d, n, &file_ticks_ns, &file_div_ns, &file_ns);
    static const char *const floor_metrics[] = {"bare unlink", "unlink + state + count",
                                                "file ticks as timeout.c stores",
                                                "file ns as timeout.c stores",
                                                "file with the node's fields"};
    const double floor_ns[] = {bare_ns, state_ns, file_ticks_ns, file_div_ns, file_ns};
    for (int k = 0; k < 5; k++) {
        bench_record(SCENARIO_NO_TABLE, "floor", n, floor_metrics[k], floor_ns[k], "ns/op");
    }
    bench_note(SCENARIO_SCHEDULE_CANCEL,
               "Floor under cancel at N = %zu: taking the same nodes, in the same order, "
               "out of the lists hwtimer's own wheel filed them in, with no timer around "
               "it: %.1f ns per node with its unlink alone, %.1f ns with the node's state "
               "and the pending count written too, as a cancel must (floors.c)",
               n, bare_ns, state_ns);
    bench_note(SCENARIO_SCHEDULE_CANCEL,
               "Floor under schedule at N = %zu: filing the same nodes with hwtimer's own "
               "wheel functions, inline, with no checks, call or clock, storing what "
               "timeout.c's add stores (deadline, owner, list): %.1f ns per node from a "
               "delay in ticks, as timeout.c and hwtimer_schedule_ticks take it; %.1f ns "
               "from nanoseconds divided into ticks, as hwtimer_schedule_at takes them; "
               "%.1f ns storing also the callback, argument, period, state and pending "
               "count that a schedule keeps here (floors.c). Schedule + cancel floor under "
               "this contract: %.1f ns",
               n, file_ticks_ns, file_div_ns, file_ns, file_ns + state_ns);
    if (bench_selected(o, "hwtimer")) {
        double stop_ns = bench_hwtimer_stop_ns(d, n);
        bench_record(SCENARIO_NO_TABLE, "hwtimer", n, "stop", stop_ns, "ns/op");
        bench_note(SCENARIO_SCHEDULE_CANCEL,
                   "hwtimer_stop with N = %zu pending, each handed back to a callback: "
                   "%.1f ns per timeout", n, stop_ns);
    }
}

int scenario_schedule_cancel(const bench_options *o, const uint32_t *delay_ms) {
    uint32_t *orders[BENCH_MAX_SIZES] = {NULL}; /* the random orders, one per N */
    int failures = 0;
    for (size_t i = 0; i < o->nsizes; i++) {
        orders[i] = bench_permutation((size_t)o->sizes[i], BENCH_SEED + 1);
    }
    for (size_t k = 0; k < sizeof measures / sizeof measures[0]; k++) {
        failures += bench_caller_measure(o, &measures[k], delay_ms,
                                         (const uint32_t *const *)orders);
    }
    for (size_t i = 0; i < o->nsizes; i++) {
        free(orders[i]);
    }
    floors_and_stop(o, delay_ms, (size_t)o->sizes[o->nsizes - 1]);
    bench_print_table(SCENARIO_SCHEDULE_CANCEL,
                      "RPC timeouts: schedule N (delays 1-61 s from the loop's time, as each "
                      "peer counts them: hwtimer_schedule_ticks, timeout.c's add, "
                      "uv_timer_start, the heap's cached now; hwtimer also reading the clock "
                      "on every call, hwtimer_schedule), then cancel all, in index order or "
                      "in a random order (ns/op, lower is better)", BENCH_BASELINE);
    return failures;
}
