/* targets.c - the summary under the tables: the project's targets against what this run
   measured, each line printed only when the run has its rows. */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"

#include <math.h>
#include <stdio.h>

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
    if (!bench_lookup(SCENARIO_SCHEDULE_CANCEL, "timeout_c", n, "schedule", &tc_s) ||
        !bench_lookup(SCENARIO_SCHEDULE_CANCEL, "timeout_c", n, "cancel", &tc_c)) {
        return;
    }
    for (int k = 0; k < 2; k++) {
        double s, c;
        if (bench_lookup(SCENARIO_SCHEDULE_CANCEL, peers[k], n, "schedule", &s) &&
            bench_lookup(SCENARIO_SCHEDULE_CANCEL, peers[k], n, "cancel", &c)) {
            printf("- %s schedule + cancel at N = %llu: %.1f ns, timeout.c %.1f = x%.2f "
                   "(target <= 1: %s)\n", peers[k], (unsigned long long)n, s + c, tc_s + tc_c,
                   (s + c) / (tc_s + tc_c), s + c <= tc_s + tc_c ? "met" : "MISSED");
        }
    }
    if (bench_lookup(SCENARIO_NO_TABLE, "floor", n, "file with the node's fields", &file) &&
        bench_lookup(SCENARIO_NO_TABLE, "floor", n, "unlink + state + count", &unlink)) {
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
        if (!bench_lookup(SCENARIO_KEEPALIVE, "hwtimer", n, "push, advances included", &hw)) {
            continue;
        }
        for (int k = 0; k < 2; k++) {
            if (bench_lookup(SCENARIO_KEEPALIVE, peers[k], n, "push, advances included",
                             &other)) {
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
    if (!bench_lookup(SCENARIO_LEEWAY, "bound", o->leeway_timers, metric, &bound) ||
        !bench_lookup(SCENARIO_LEEWAY, "hwtimer", o->leeway_timers, metric, &passes)) {
        return;
    }
    printf("- %s, %zu timeouts over %llu ms: %.0f passes ran callbacks", metric,
           o->leeway_timers, (unsigned long long)o->leeway_span_ms, passes);
    if (bench_lookup(SCENARIO_LEEWAY, "hwtimer_worker", o->leeway_timers, metric, &wakeups)) {
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
        if (bench_lookup(SCENARIO_LEEWAY, "hwtimer", o->leeway_cost_timers, metric, &more)) {
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
        if (!bench_lookup(SCENARIO_PRODUCERS, modes[k], 0, "1 producer thread", &one) ||
            !bench_lookup(SCENARIO_PRODUCERS, modes[k], 0, "2 producer threads", &two) ||
            !bench_lookup(SCENARIO_PRODUCERS, modes[k], 0, "2 producers, timer of 2 shards",
                          &sharded)) {
            continue;
        }
        printf("- %s, 2 producers on one timer vs 1 producer: %.1f vs %.1f M pairs/s; with 2 "
               "shards %.1f (x%.2f; target >= 1: %s)\n", modes[k], two, one, sharded,
               sharded / one, sharded >= one ? "met" : "MISSED");
    }
}

void bench_print_summary(const bench_options *o) {
    uint64_t big = o->sizes[o->nsizes - 1], at = big < 1000000 ? big : 1000000;
    static const char *const producers[] = {"1 producer thread", "2 producer threads"};
    printf("\n### Summary against the targets\n\n");
    summary_line(SCENARIO_SCHEDULE_CANCEL, "hwtimer", at, "schedule", "hwtimer schedule", 10);
    summary_line(SCENARIO_SCHEDULE_CANCEL, "hwtimer", at, "cancel", "hwtimer cancel", 10);
    summary_line(SCENARIO_EXPIRY, "hwtimer", at, "schedule+expire", "hwtimer schedule+expire",
                 100);
    pair_vs_timeout_line(at);
    growth_line(SCENARIO_SCHEDULE_CANCEL, "schedule", big);
    growth_line(SCENARIO_SCHEDULE_CANCEL, "cancel", big);
    growth_line(SCENARIO_EXPIRY, "schedule+expire", big);
    leeway_line(o);
    leeway_cost_line(o);
    keepalive_lines(o);
    for (int k = 0; k < 2; k++) {
        const double target = 0.30; /* at most 0.3x Netty's time per pair */
        double hw, netty;
        if (bench_lookup(SCENARIO_PRODUCERS, "hwtimer_worker", 0, producers[k], &hw) &&
            bench_lookup(SCENARIO_PRODUCERS, "netty", 0, producers[k], &netty)) {
            printf("- worker schedule+cancel, %s: hwtimer %.1f / Netty %.1f M pairs/s, %.1f vs "
                   "%.1f ns per pair = x%.2f (target <= %.2f: %s)\n", producers[k], hw, netty,
                   1e3 / hw, 1e3 / netty, netty / hw, target,
                   netty / hw <= target ? "met" : "MISSED");
            double clock_ns, at_lock;
            if (k == 0 && netty / hw > target &&
                bench_lookup(SCENARIO_NO_TABLE, "clock", 0, "clock read", &clock_ns) &&
                bench_lookup(SCENARIO_PRODUCERS, "hwtimer_lock", 0,
                             "1 producer with schedule_at", &at_lock)) {
                printf("  (floor: one clock read, which every hwtimer_schedule makes, %.1f ns + "
                       "the locked pair without one, the schedule_at row, %.1f ns = %.1f ns; "
                       "%.2fx Netty is %.1f ns)\n", clock_ns, 1e3 / at_lock,
                       clock_ns + 1e3 / at_lock, target, target * 1e3 / netty);
            }
            double sharded;
            if (k == 1 && bench_lookup(SCENARIO_PRODUCERS, "hwtimer_worker", 0,
                                       "2 producers, timer of 2 shards", &sharded)) {
                printf("  (on one timer of 2 shards: %.1f M pairs/s, %.1f ns per pair = x%.2f "
                       "Netty's)\n", sharded, 1e3 / sharded, netty / sharded);
            }
        }
    }
    shared_timer_lines();
}
