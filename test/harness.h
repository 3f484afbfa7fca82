/* harness.h - the tiny test harness every hwtimer test shares.

   Each test source is compiled once per mode; meson passes HWTIMER_TEST_MODE:
     0  HWTIMER_NO_THREADS: no thread code compiled in at all
     1  pthreads compiled in, but cfg.threads = NULL (single thread, no locks)
     2  cfg.threads = hwtimer_threads_pthread()
     3  cfg.threads = hwtimer_threads_c11()   (built with HWTIMER_C11_THREADS, -std=c11)
     4  cfg.threads = hwtimer_threads_win32() (Windows: mingw-w64 under Wine, test/wine)
   test_threads() returns the table for the mode, so a test that only needs
   "whatever this build has" never repeats the selection.

   Results: CHECK() records a failure and carries on; test_finish() prints the
   closing line "N passed, N failed" that CI reads and returns the exit status. */
#ifndef HWTIMER_TEST_HARNESS_H
#define HWTIMER_TEST_HARNESS_H

#ifndef HWTIMER_TEST_MODE
#define HWTIMER_TEST_MODE 1
#endif
#if HWTIMER_TEST_MODE == 0 && !defined(HWTIMER_NO_THREADS)
#define HWTIMER_NO_THREADS
#endif
#if HWTIMER_TEST_MODE == 3 && !defined(HWTIMER_C11_THREADS)
#define HWTIMER_C11_THREADS
#endif

#ifndef HWTIMER_TEST_NO_IMPLEMENTATION
#define HWTIMER_IMPLEMENTATION
#endif
#include "../hwtimer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test__checks_failed;
static int test__tests_passed;
static int test__tests_failed;

#define CHECK(cond)                                                               \
    do {                                                                          \
        if (!(cond)) {                                                            \
            test__checks_failed++;                                                \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                         \
    } while (0)

#define CHECK_EQ(a, b)                                                            \
    do {                                                                          \
        unsigned long long check__a = (unsigned long long)(a);                   \
        unsigned long long check__b = (unsigned long long)(b);                   \
        if (check__a != check__b) {                                               \
            test__checks_failed++;                                                \
            fprintf(stderr, "%s:%d: CHECK_EQ failed: %s == %s (%llu != %llu)\n",  \
                    __FILE__, __LINE__, #a, #b, check__a, check__b);              \
        }                                                                         \
    } while (0)

/* Runs one test function and counts it as passed when it failed no CHECK. */
#define RUN_TEST(fn)                                                              \
    do {                                                                          \
        int run__before = test__checks_failed;                                    \
        fn();                                                                     \
        if (test__checks_failed == run__before) {                                 \
            test__tests_passed++;                                                 \
        } else {                                                                  \
            test__tests_failed++;                                                 \
            fprintf(stderr, "FAILED: %s\n", #fn);                                 \
        }                                                                         \
    } while (0)

static inline int test_finish(void) {
    printf("%d passed, %d failed\n", test__tests_passed, test__tests_failed);
    return test__tests_failed ? 1 : 0;
}

/* The thread table for this build's mode (NULL in modes 0 and 1). */
static inline const hwtimer_threads *test_threads(void) {
#if HWTIMER_TEST_MODE == 2
    return hwtimer_threads_pthread();
#elif HWTIMER_TEST_MODE == 3
    return hwtimer_threads_c11();
#elif HWTIMER_TEST_MODE == 4
    return hwtimer_threads_win32();
#else
    return NULL;
#endif
}

/* A fake clock: the timer reads *ctx. */
static inline uint64_t test_fake_clock(void *ctx) {
    return *(const uint64_t *)ctx;
}

/* Config for a caller-driven timer on a fake clock, with this mode's threads. */
static inline void test_fake_config(hwtimer_config *cfg, uint64_t *clock, uint64_t tick_ns,
                             uint32_t ticks_per_wheel) {
    hwtimer_config_default(cfg);
    cfg->tick_ns = tick_ns;
    cfg->ticks_per_wheel = ticks_per_wheel;
    cfg->clock_fn = test_fake_clock;
    cfg->clock_ctx = clock;
    cfg->threads = test_threads();
}

#endif
