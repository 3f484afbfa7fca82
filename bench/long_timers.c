/* long_timers.c - scenario 4, long timers on a fine tick: 10^6 timeouts of 1 s to 1 h on
   a 1 ms tick, then an hour advanced 1 ms at a time, for every caller-driven peer whose
   clock can be stepped: the CPU time of the advances, and the timeout visits (hwtimer's
   callbacks and moves down a level; Netty's, simulated). */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>

#define LONG_MIN_MS 1000u /* delays: 1 s .. the span */

int scenario_long_timers(const bench_options *o, const uint32_t *delay_ms) {
    size_t n = o->long_timers;
    uint32_t *d = bench_delays_ms(n, LONG_MIN_MS, (uint32_t)o->long_span_ms, BENCH_SEED + 4);
    int failures = 0;
    (void)delay_ms; /* its own delays */
    for (size_t k = 0; k < bench_ncaller_peers; k++) {
        const bench_peer *p = bench_caller_peers[k];
        if (!bench_selected(o, p->key)) {
            continue;
        }
        if (!p->step) {
            bench_note(SCENARIO_LONG_TIMERS, "%s: n/a (%s)", p->title, p->skip_reason);
            continue;
        }
        fprintf(stderr, "  scenario 4: %s\n", p->title);
        void *ctx = p->create(n);
        p->schedule(ctx, d, n);
        uint64_t cpu0 = bench_cpu_ns();
        size_t fired = p->step(ctx, o->long_span_ms);
        uint64_t cpu1 = bench_cpu_ns();
        failures += bench_check_fired(SCENARIO_LONG_TIMERS, p, n, fired);
        bench_record(SCENARIO_LONG_TIMERS, p->key, n, "advance through the span, CPU",
                     (double)(cpu1 - cpu0) / 1e9, "s");
        if (p->visits) {
            bench_record(SCENARIO_LONG_TIMERS, p->key, n, "timeout visits",
                         (double)p->visits(ctx), "count");
        }
        p->destroy(ctx);
    }
    if (bench_selected(o, "netty")) {
        bench_record(SCENARIO_LONG_TIMERS, "netty", n, "timeout visits",
                     (double)bench_netty_simulated_visits(d, n, 512), "count");
        bench_note(SCENARIO_LONG_TIMERS,
                   "%llu advance calls of 1 ms each (the schedule phase is not timed). "
                   "Timeout visits: hwtimer counts callbacks + moves down a level "
                   "(hwtimer_stats); Netty's figure is SIMULATED, not run: its rounds wheel "
                   "(512 buckets, 1 ms tick) visits every timeout in the current bucket on "
                   "every tick, once per rotation until it expires, and its worker wakes on "
                   "each of the %llu ticks.",
                   (unsigned long long)o->long_span_ms, (unsigned long long)o->long_span_ms);
    }
    free(d);
    bench_print_table(SCENARIO_LONG_TIMERS, "Long timers on a fine tick: 1 s - 1 h delays, 1 ms "
                                            "tick, advance through the hour in 1 ms steps",
                      BENCH_BASELINE);
    return failures;
}
