/* example_util.h - what the examples on the real clock share: sleeping until a time, the
   median of measured delays, and running a timing test again when the machine starved it.
   Include after harness.h and harness_threads.h.

   The examples check real-time behaviour on machines that may be busy with other work,
   where a thread now and then waits tens of milliseconds for a CPU. Two defences:
   - Medians, not means or maxima, carry the tight timing checks: a short stall moves a
     mean or a maximum but not a median.
   - RUN_TIMED_TEST runs a test while a canary thread measures how late its own short
     sleeps wake up. That lateness is the operating system's, not the timer's: if the test
     failed while the canary saw a stall longer than STARVED, the failures are reported
     as void and the test runs again, up to TIMED_ATTEMPTS times; the last attempt counts
     whatever the canary saw. A test that fails on a quiet machine fails at once. */
#ifndef HWTIMER_EXAMPLE_UTIL_H
#define HWTIMER_EXAMPLE_UTIL_H

#define STARVED HWTIMER_MS(30)
#define TIMED_ATTEMPTS 3

static inline void sleep_until(uint64_t when) {
    uint64_t now = now_ns();
    if (when > now) sleep_ns(when - now);
}

static int example__compare_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The median of values[0..count) (sorts them); 0 for none. */
static inline uint64_t median(uint64_t *values, size_t count) {
    if (count == 0) return 0;
    qsort(values, count, sizeof *values, example__compare_u64);
    return values[count / 2];
}

/* Checks how late `count` callbacks ran (late[], sorted here): the median under
   typical_bound, the worst under worst_bound; prints both, in ms. */
static inline void check_lateness(const char *who, const char *what, uint64_t *late,
                                  size_t count, uint64_t typical_bound, uint64_t worst_bound) {
    uint64_t typical = median(late, count), worst = count ? late[count - 1] : 0;
    printf("%s: %s: %zu, late by %.2f ms (median), %.2f ms (worst)\n", who, what, count,
           (double)typical / 1e6, (double)worst / 1e6);
    CHECK(count > 0);
    CHECK(typical < typical_bound);
    CHECK(worst < worst_bound);
}

/* ---- the canary: how long this process waits for a CPU ------------------------------ */

typedef struct canary {
    unsigned quit;  /* atomic */
    uint64_t worst; /* atomic: the longest oversleep seen */
    test_thread thread;
} canary;

static void canary__main(void *arg) {
    canary *c = (canary *)arg;
    while (!ATOMIC_GET(&c->quit)) {
        uint64_t before = now_ns(), late;
        sleep_ns(HWTIMER_MS(2));
        late = now_ns() - before - HWTIMER_MS(2);
        if (late > ATOMIC_GET(&c->worst)) ATOMIC_SET(&c->worst, late);
    }
}

static inline void canary_start(canary *c) {
    ATOMIC_SET(&c->quit, 0u);
    ATOMIC_SET(&c->worst, (uint64_t)0);
    test_thread_start(&c->thread, canary__main, c);
}

/* Stops the canary and returns the longest stall it saw. */
static inline uint64_t canary_stop(canary *c) {
    ATOMIC_SET(&c->quit, 1u);
    test_thread_join(&c->thread);
    return ATOMIC_GET(&c->worst);
}

/* Runs fn; runs it again while it failed on a starved machine (see the top). */
static inline void run_timed(void (*fn)(void), const char *name) {
    int attempt;
    for (attempt = 1;; attempt++) {
        int failed_before = test__checks_failed;
        canary c;
        uint64_t stall;
        canary_start(&c);
        fn();
        stall = canary_stop(&c);
        if (test__checks_failed == failed_before) return;
        if (stall < STARVED || attempt == TIMED_ATTEMPTS) {
            fprintf(stderr, "FAILED: %s (the longest stall seen: %.1f ms)\n", name,
                    (double)stall / 1e6);
            return;
        }
        fprintf(stderr, "%s: the failures above are void: the process waited %.1f ms for a "
                "CPU (attempt %d of %d)\n", name, (double)stall / 1e6, attempt,
                TIMED_ATTEMPTS);
        test__checks_failed = failed_before;
    }
}

/* RUN_TEST for a test on the real clock (a failure is reported as "FAILED: timed_test",
   after run_timed's own line with the test's name). */
static void (*example__timed_fn)(void);
static const char *example__timed_name;

static inline void timed_test(void) {
    run_timed(example__timed_fn, example__timed_name);
}

#define RUN_TIMED_TEST(fn)                \
    do {                                  \
        example__timed_fn = fn;           \
        example__timed_name = #fn;        \
        RUN_TEST(timed_test);             \
    } while (0)

#endif
