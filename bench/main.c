/* main.c - main() of hwtimer_bench: hwtimer side by side with libuv, libevent, a binary
   heap, Netty's HashedWheelTimer and William Ahern's timeout.c, scenario by scenario.

   usage: hwtimer_bench [--full] [--smoke] [--no-java] [--scenarios a,b,...] [--peers a,b]
                        [--sizes n,...] [--out FILE.csv]            (options.c; --help)

   Prints a markdown table per scenario and writes FILE.csv and FILE.svg (default:
   bench/results/latest.* in the build directory). --full adds N = 10^7; --smoke is a
   tiny correctness run (every callback fired, none early) for `meson test`: it exits
   nonzero only on such failures, never because of a timing.

   Each scenario is the file of its name (the table below). Timing, in all of them: a
   fresh timer for every run, the clock around the batch call (caller.c; CPU time in
   scenario 4), delays from a fixed seed. Nodes live in one array per run, starting on a
   cache line and touched before the clock starts (no page faults are timed). Scenarios
   1-4, 8 and 10 take every caller-driven peer (peer_*.c) that can do what they ask; the
   rest are hwtimer's own (its threads, leeway, bounded expiry and clocks), with Netty's
   numbers beside them where NettyBench.java has the same scenario. */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Every scenario, in the order they run. bench/run --help reads this table from this
   file, as options.c prints it: keep each string a single literal. */
static const bench_scenario scenarios[] = {
    {"schedule_cancel", SCENARIO_SCHEDULE_CANCEL, scenario_schedule_cancel,
     "RPC timeouts: schedule N, cancel all, in order or at random"},
    {"expiry", SCENARIO_EXPIRY, scenario_expiry,
     "schedule N, advance past all, fire every callback"},
    {"reschedule", SCENARIO_RESCHEDULE, scenario_reschedule,
     "idle-connection churn: each timer pushed 1 s later, 10 times"},
    {"long_timers", SCENARIO_LONG_TIMERS, scenario_long_timers,
     "10^6 timers of 1 s - 1 h, an hour of 1 ms ticks: CPU, visits"},
    {"producers", SCENARIO_PRODUCERS, scenario_producers,
     "threads scheduling + cancelling against the worker"},
    {"accuracy", SCENARIO_ACCURACY, scenario_accuracy,
     "the worker's lateness after the deadline"},
    {"idle_wakeups", SCENARIO_IDLE_WAKEUPS, scenario_idle_wakeups,
     "the worker's wake-ups per second with nothing due"},
    {"memory", SCENARIO_MEMORY, scenario_memory,
     "bytes per pending timeout"},
    {"leeway", SCENARIO_LEEWAY, scenario_leeway,
     "what a leeway saves in passes and wake-ups, and costs"},
    {"keepalive", SCENARIO_KEEPALIVE, scenario_keepalive,
     "idle timeouts pushed back on every read, 1000 reads per ms"},
    {"bursts_and_clocks", SCENARIO_BURSTS_AND_CLOCKS, scenario_bursts_and_clocks,
     "a burst's longest call; the coarse clock's cost, lateness, idle"},
};
#define NSCENARIOS (sizeof scenarios / sizeof scenarios[0])

/* The columns of the tables, in their order. */
static const char *const peer_keys[] = {"hwtimer", "hwtimer_lock", "hwtimer_worker",
                                        "hwtimer_64", "heap", "libuv", "libevent", "netty",
                                        "timeout_c", "bound"};
static const char *const peer_titles[] = {"hwtimer", "hwtimer+lock", "hwtimer worker",
                                          "hwtimer 64 slots", "binary heap", "libuv",
                                          "libevent", "Netty HWT", "timeout.c", "bound"};

/* The SVG path: FILE.csv -> FILE.svg, anything else -> FILE.svg appended. */
static void svg_path_for(char *svg, size_t size, const char *csv) {
    size_t len = strlen(csv);
    if (len > 4 && strcmp(csv + len - 4, ".csv") == 0) {
        snprintf(svg, size, "%.*s.svg", (int)(len - 4), csv);
    } else {
        snprintf(svg, size, "%s.svg", csv);
    }
}

int main(int argc, char **argv) {
    bench_options o;
    int status = bench_parse_options(&o, argc, argv, scenarios, NSCENARIOS), failures = 0;
    if (status >= 0) {
        return status;
    }
    uint64_t start = bench_wall_ns();
    bench_print_environment(&o);
    for (size_t i = 0; i < sizeof peer_keys / sizeof peer_keys[0]; i++) {
        bench_declare_peer(peer_keys[i], peer_titles[i]);
    }
    bench_netty_run(&o); /* first, so its numbers join every table as it is printed */

    /* Scenario 1's delays, for every scenario that takes them, at its largest N. */
    size_t max_n = (size_t)o.sizes[o.nsizes - 1];
    max_n = o.memory_timers > max_n ? o.memory_timers : max_n;
    max_n = o.leeway_cost_timers > max_n ? o.leeway_cost_timers : max_n;
    uint32_t *delays = bench_delays_ms(max_n, BENCH_RPC_MIN_MS, BENCH_RPC_MAX_MS, BENCH_SEED);
    for (size_t i = 0; i < NSCENARIOS; i++) {
        if (o.scenarios & (1u << scenarios[i].number)) {
            failures += scenarios[i].run(&o, delays);
        }
    }
    free(delays);
    if (!o.smoke) {
        bench_print_summary(&o);
    }

    char svg[4096];
    svg_path_for(svg, sizeof svg, o.out);
    if (mkdir(BENCH_RESULTS_DIR, 0777) != 0 && errno != EEXIST) {
        perror(BENCH_RESULTS_DIR);
    }
    if (bench_write_csv(o.out) == 0 && bench_write_svg(svg) == 0) {
        printf("\nResults: %s, chart: %s\n", o.out, svg);
    }
    printf("Total time %.1f s; %d correctness failure%s.\n",
           (double)(bench_wall_ns() - start) / 1e9, failures, failures == 1 ? "" : "s");
    return failures ? 1 : 0;
}
