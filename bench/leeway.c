/* leeway.c - scenario 9, hwtimer_timeout_set_leeway: N timeouts with random
   deadlines over a span (10^4 over 10 s by default), 1 ms tick, leeway 0, 10 ms and
   100 ms.

   What a leeway saves: how many times the timer has to run, counted twice.
   - Caller-driven, on a fake clock stepped one tick at a time: the passes that ran at least
     one callback (hwtimer_advance returned > 0), each of which would be a wake-up of an
     event loop. The clock is exact, so every callback is also checked against its window:
     never before its deadline, never after B + floor(leeway / tick), B its first boundary.
   - Worker mode, on the real clock: hwtimer_stats.wakeups, counted from the last schedule
     to the last callback. The three timers (one per leeway) run at the same time.
   A leeway of L lets timeouts with nearby deadlines share a pass: the timer runs each at
   the first multiple, at or after its due tick, of the largest power of two of ticks that
   fits in its window, so every timeout runs on one grid. The bound the project holds it to, 2 * span / L + 1 (201 for 10 s
   and 100 ms), is printed beside them; the caller-driven count, exact, fails the run if
   it is above.

   What a leeway costs: ns per schedule and per cancel of 10^6 timeouts (scenario 1's
   delays, caller-driven, no locks), with and without, measured in alternating rounds. */
#define _POSIX_C_SOURCE 200809L
#include "hwtimer.h"

#include "bench.h"

#include <stdio.h>
#include <stdlib.h>

/* A row of this scenario. */
static void record(const char *peer, uint64_t n, const char *metric, double value,
                   const char *unit) {
    bench_record(SCENARIO_LEEWAY, peer, n, metric, value, unit);
}

static const uint64_t leeways_ms[] = {0, 10, 100};
#define NLEEWAYS (sizeof leeways_ms / sizeof leeways_ms[0])

/* One timer with its timeouts, all with one leeway. */
typedef struct leeway_timer {
    hwtimer *timer;
    hwtimer_timeout *nodes;
    uint64_t leeway_ticks; /* floor(leeway / tick) */
    uint64_t fake_now_ns;  /* the fake clock (caller-driven) */
    size_t fired;          /* atomic in worker mode */
    size_t early, late;    /* before the deadline; after the window (caller-driven) */
} leeway_timer;

static uint64_t fake_clock(void *ctx) {
    return ((const leeway_timer *)ctx)->fake_now_ns;
}

static void on_fire_stepped(hwtimer_timeout *to, void *arg) {
    leeway_timer *lt = (leeway_timer *)arg;
    uint64_t now = lt->fake_now_ns, deadline = hwtimer_timeout_deadline(to);
    uint64_t first_boundary = (deadline + BENCH_MS - 1) / BENCH_MS * BENCH_MS;
    lt->early += now < deadline;
    lt->late += now > first_boundary + lt->leeway_ticks * BENCH_MS;
    lt->fired++;
}

static void on_fire_worker(hwtimer_timeout *to, void *arg) {
    leeway_timer *lt = (leeway_timer *)arg;
    if (bench_wall_ns() < hwtimer_timeout_deadline(to)) {
        __atomic_add_fetch(&lt->early, 1, __ATOMIC_RELAXED);
    }
    __atomic_add_fetch(&lt->fired, 1, __ATOMIC_RELEASE);
}

/* Schedules n timeouts at base + offset_ns[i], each with the timer's leeway. */
static void schedule_all(leeway_timer *lt, const uint64_t *offset_ns, size_t n, uint64_t base,
                         hwtimer_fn fn) {
    for (size_t i = 0; i < n; i++) {
        hwtimer_timeout_set_leeway(&lt->nodes[i], lt->leeway_ticks * BENCH_MS);
        hwtimer_schedule_at(lt->timer, &lt->nodes[i], base + offset_ns[i], fn, lt);
    }
}

static leeway_timer *leeway_timers_new(size_t n) {
    leeway_timer *lts = (leeway_timer *)bench_xcalloc(NLEEWAYS, sizeof *lts);
    for (size_t k = 0; k < NLEEWAYS; k++) {
        lts[k].nodes = (hwtimer_timeout *)bench_xcalloc(n, sizeof *lts[k].nodes);
        lts[k].leeway_ticks = leeways_ms[k]; /* 1 ms tick */
    }
    return lts;
}

static void leeway_timers_free(leeway_timer *lts) {
    for (size_t k = 0; k < NLEEWAYS; k++) {
        hwtimer_destroy(lts[k].timer);
        free(lts[k].nodes);
    }
    free(lts);
}

static int check_callbacks(const char *mode, const leeway_timer *lt, size_t n) {
    if (lt->fired == n && lt->early == 0 && lt->late == 0) {
        return 0;
    }
    fprintf(stderr, "FAIL scenario 9, %s, leeway %llu ms: %zu of %zu callbacks ran, %zu early, "
                    "%zu after their window\n", mode, (unsigned long long)lt->leeway_ticks,
            lt->fired, n, lt->early, lt->late);
    return 1;
}

/* "leeway 10 ms", or with a prefix: "schedule with leeway 10 ms" (no comma: a CSV field). */
static const char *metric_for(const char *prefix, size_t k) {
    static char metric[48];
    snprintf(metric, sizeof metric, "%s%sleeway %llu ms", prefix, *prefix ? " with " : "",
             (unsigned long long)leeways_ms[k]);
    return metric;
}

/* Caller-driven: steps the fake clock one tick at a time through the span and the widest
   window, and records the passes that ran callbacks. */
static int stepped(const bench_options *o, const uint64_t *offset_ns, size_t n) {
    leeway_timer *lts = leeway_timers_new(n);
    uint64_t end_tick = o->leeway_span_ms + leeways_ms[NLEEWAYS - 1] + 1;
    int failed = 0;
    for (size_t k = 0; k < NLEEWAYS; k++) {
        leeway_timer *lt = &lts[k];
        size_t passes = 0;
        lt->timer = bench_hwtimer_make(NULL, 0, fake_clock, lt, 512, 0);
        schedule_all(lt, offset_ns, n, 0, on_fire_stepped);
        for (uint64_t tick = 1; tick <= end_tick; tick++) {
            lt->fake_now_ns = tick * BENCH_MS;
            passes += hwtimer_advance(lt->timer, lt->fake_now_ns) > 0;
        }
        failed += check_callbacks("caller-driven", lt, n);
        record("hwtimer", n, metric_for("", k), (double)passes, "count");
        if (leeways_ms[k] > 0) {
            uint64_t bound = 2 * o->leeway_span_ms / leeways_ms[k] + 1;
            record("bound", n, metric_for("", k), (double)bound, "count");
            if (passes > bound) {
                fprintf(stderr, "FAIL scenario 9, leeway %llu ms: %zu passes ran callbacks, "
                                "more than %llu\n", (unsigned long long)leeways_ms[k], passes,
                        (unsigned long long)bound);
                failed++;
            }
        }
    }
    leeway_timers_free(lts);
    return failed;
}

static uint64_t wakeups_of(hwtimer *t) {
    hwtimer_stats s;
    hwtimer_stats_get(t, &s);
    return s.wakeups;
}

/* Worker mode on the real clock: the three timers at once, each with its own worker. */
static int with_worker(const bench_options *o, const uint64_t *offset_ns, size_t n) {
    leeway_timer *lts = leeway_timers_new(n);
    uint64_t wakeups[NLEEWAYS];
    int failed = 0;
    for (size_t k = 0; k < NLEEWAYS; k++) {
        lts[k].timer = bench_hwtimer_make(hwtimer_threads_pthread(), 1, NULL, NULL, 512, 0);
        schedule_all(&lts[k], offset_ns, n, hwtimer_now(lts[k].timer), on_fire_worker);
        wakeups[k] = wakeups_of(lts[k].timer);
    }
    uint64_t give_up = bench_wall_ns() + (o->leeway_span_ms + 5000) * BENCH_MS;
    for (size_t k = 0; k < NLEEWAYS; k++) {
        while (__atomic_load_n(&lts[k].fired, __ATOMIC_ACQUIRE) < n && bench_wall_ns() < give_up) {
            bench_sleep_ns(10 * BENCH_MS);
        }
    }
    for (size_t k = 0; k < NLEEWAYS; k++) {
        wakeups[k] = wakeups_of(lts[k].timer) - wakeups[k];
        hwtimer_stop(lts[k].timer, NULL, NULL); /* joins the worker: its counts are final */
        failed += check_callbacks("worker", &lts[k], n);
        record("hwtimer_worker", n, metric_for("", k), (double)wakeups[k], "count");
    }
    leeway_timers_free(lts);
    return failed;
}

enum { COST_ROUNDS = 9 };

static int compare_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0 .. n-1], n odd (v is sorted in place). */
static double median_of(double *v, unsigned n) {
    qsort(v, n, sizeof *v, compare_double);
    return v[n / 2];
}

/* Schedule and cancel of n timeouts with each leeway, in rounds: each round measures every
   leeway once, starting with a different one, so that the machine's drift (this is a shared
   VM) falls on all of them alike. Records each leeway's median schedule and cancel, and
   the median over rounds of its schedule over the no-leeway schedule of the same round:
   what the project holds to 10%. */
static void schedule_cancel_cost(const uint32_t *delay_ms, size_t n, int smoke) {
    unsigned rounds = smoke ? 1 : COST_ROUNDS;
    double schedule[NLEEWAYS][COST_ROUNDS], cancel[NLEEWAYS][COST_ROUNDS];
    double more[NLEEWAYS][COST_ROUNDS];
    for (unsigned r = 0; r < rounds; r++) {
        for (size_t j = 0; j < NLEEWAYS; j++) {
            size_t k = (r + j) % NLEEWAYS;
            bench_hwtimer_leeway_cost(delay_ms, n, leeways_ms[k] * BENCH_MS, &schedule[k][r],
                                      &cancel[k][r]);
        }
        for (size_t k = 1; k < NLEEWAYS; k++) {
            more[k][r] = 100.0 * (schedule[k][r] / schedule[0][r] - 1.0);
        }
    }
    for (size_t k = 0; k < NLEEWAYS; k++) {
        record("hwtimer", n, metric_for("schedule", k), median_of(schedule[k], rounds),
               "ns/op");
    }
    for (size_t k = 0; k < NLEEWAYS; k++) {
        record("hwtimer", n, metric_for("cancel", k), median_of(cancel[k], rounds),
               "ns/op");
    }
    for (size_t k = 1; k < NLEEWAYS; k++) {
        char metric[64];
        snprintf(metric, sizeof metric, "%s vs none", metric_for("schedule", k));
        record("hwtimer", n, metric, median_of(more[k], rounds), "% more");
    }
}

static int measure_leeway(const bench_options *o, const uint32_t *delay_ms, size_t n_cost) {
    size_t n = o->leeway_timers;
    uint64_t seed = BENCH_SEED + 9, span_ns = o->leeway_span_ms * BENCH_MS;
    uint64_t *offset_ns = (uint64_t *)bench_xcalloc(n, sizeof *offset_ns);
    int failed = 0;
    for (size_t i = 0; i < n; i++) {
        offset_ns[i] = BENCH_MS + bench_rand_next(&seed) % (span_ns - BENCH_MS); /* ns resolution */
    }
    fprintf(stderr, "  scenario 9: caller-driven, %zu timeouts over %llu ms\n", n,
            (unsigned long long)o->leeway_span_ms);
    failed += stepped(o, offset_ns, n);
    if (hwtimer_threads_pthread()) {
        fprintf(stderr, "  scenario 9: worker, %llu ms on the real clock\n",
                (unsigned long long)o->leeway_span_ms);
        failed += with_worker(o, offset_ns, n);
    } else {
        bench_note(SCENARIO_LEEWAY,
                   "hwtimer worker: skipped, this build has no POSIX threads backend");
    }
    fprintf(stderr, "  scenario 9: schedule and cancel, N = %zu\n", n_cost);
    schedule_cancel_cost(delay_ms, n_cost, o->smoke);
    free(offset_ns);
    bench_note(SCENARIO_LEEWAY,
               "%zu timeouts, deadlines uniform over %llu ms at ns resolution, 1 ms tick. "
               "hwtimer: caller-driven on a fake clock advanced one tick at a time, the "
               "passes that ran at least one callback (each callback checked: not before "
               "its deadline, not after its window). hwtimer worker: hwtimer_stats.wakeups "
               "on the real clock, the three leeways at once. bound: 2 x span / leeway + 1.",
               n, (unsigned long long)o->leeway_span_ms);
    bench_note(SCENARIO_LEEWAY,
               "schedule and cancel: scenario 1's delays (1-61 s), caller-driven, no locks, "
               "median of %u rounds, each of which measures the three leeways in turn (vs "
               "none: the median of each round's ratio). Every row sets each node's leeway "
               "(0 too) before the clock starts, which scenario 1 does not: compare these "
               "rows with each other.",
               o->smoke ? 1u : (unsigned)COST_ROUNDS);
    return failed;
}

int scenario_leeway(const bench_options *o, const uint32_t *delay_ms) {
    int failures = measure_leeway(o, delay_ms, o->leeway_cost_timers);
    bench_print_table(SCENARIO_LEEWAY, "Leeway: passes that ran callbacks (caller-driven), "
                                       "worker wake-ups, and the cost of schedule and cancel",
                      BENCH_BASELINE);
    return failures;
}
