/* harness.h - the tiny test harness every hwtimer test shares.

   Each test source is compiled once per mode; meson passes HWTIMER_TEST_MODE:
     0  HWTIMER_NO_THREADS: no thread code compiled in at all
     1  pthreads compiled in, but cfg.threads = NULL (single thread, no locks)
     2  cfg.threads = hwtimer_threads_pthread()
     3  cfg.threads = hwtimer_threads_c11()   (built with HWTIMER_C11_THREADS, -std=c11)
     4  cfg.threads = hwtimer_threads_win32() (mingw-w64 under Wine: test/tools/wine.sh)
   and HWTIMER_TEST_SHARDS=n (meson's 'shards' mode, with mode 2): every timer with threads
   that the helpers configure is a timer of n shards (cfg.shards), so that the whole suite
   checks them too.
   test_threads() returns the table for the mode, so a test that only needs
   "whatever this build has" never repeats the selection.

   It also holds what every test shares: atomics, a seeded PRNG, what hwtimer_stop hands
   back and what log_fn says, the fake clock and the boundary arithmetic; units.h has the
   time units, fixture.h the fixture.

   Results: CHECK() records a failure and carries on; test_finish() prints the
   closing line "N passed, N failed" that CI reads and returns the exit status. */
#ifndef HWTIMER_TEST_HARNESS_H
#define HWTIMER_TEST_HARNESS_H

#include "mode.h"

/* With HWTIMER_TEST_NO_IMPLEMENTATION the program links the implementation built apart
   (impl.c, once per mode: meson); without it, it is one program on its own. */
#ifndef HWTIMER_TEST_NO_IMPLEMENTATION
#define HWTIMER_IMPLEMENTATION
#endif
#include "../../hwtimer.h"

#include <limits.h>
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

/* cfg.shards for the timers the tests make: HWTIMER_TEST_SHARDS in the 'shards' mode (the
   pthread mode again, every timer of threads a timer of shards), else 0 (one wheel). */
static inline unsigned test_shards(const hwtimer_threads *threads) {
#ifdef HWTIMER_TEST_SHARDS
    return threads ? HWTIMER_TEST_SHARDS : 0;
#else
    (void)threads;
    return 0;
#endif
}

/* For a program that needs a thread backend, at the top of main(): in a mode without one
   it says so and passes with no test run. */
#define REQUIRE_THREADS(program)                                                  \
    do {                                                                          \
        if (!test_threads()) {                                                    \
            printf("skipped: %s needs a thread backend (a threaded mode)\n", program); \
            return test_finish();                                                 \
        }                                                                         \
    } while (0)

/* ---- atomics ---------------------------------------------------------------------------
   The GCC/Clang __atomic builtins: they compile warning-free as C99 with -Wpedantic, where
   <stdatomic.h> does not. Counters a worker thread may touch go through these. A compiler
   with neither (tcc, where hwtimer.h takes its portable code) builds modes 0 and 1 alone:
   one thread, so plain accesses do; hwtimer_create refuses it cfg.threads
   (TEST_HAVE_ATOMICS 0). ATOMIC_CAS(p, e, d): *p = d if *p == *e (1), else *e = *p (0).
   TEST_THREAD_LOCAL: a variable each thread has its own of. */

#if defined(__GNUC__) || defined(__clang__)
/* A uint64_t that ATOMIC_GET and ATOMIC_SET may take on a 32-bit target too, where a
   uint64_t is only 4-byte aligned (clang -m32 would call a library function). */
typedef uint64_t test_u64 __attribute__((aligned(8)));
#define ATOMIC_GET(p) __atomic_load_n((p), __ATOMIC_SEQ_CST)
#define ATOMIC_SET(p, v) __atomic_store_n((p), (v), __ATOMIC_SEQ_CST)
#define ATOMIC_ADD(p, v) __atomic_fetch_add((p), (v), __ATOMIC_SEQ_CST) /* returns the old value */
#define ATOMIC_SUB(p, v) __atomic_fetch_sub((p), (v), __ATOMIC_SEQ_CST)
#define ATOMIC_CAS(p, e, d) \
    __atomic_compare_exchange_n((p), (e), (d), 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)
#define TEST_THREAD_LOCAL __thread
#define TEST_HAVE_ATOMICS 1
#elif HWTIMER_TEST_MODE <= 1
typedef uint64_t test_u64;
#define ATOMIC_GET(p) (*(p))
#define ATOMIC_SET(p, v) (*(p) = (v))
#define ATOMIC_ADD(p, v) ((*(p) += (v)) - (v))
#define ATOMIC_SUB(p, v) ((*(p) -= (v)) + (v))
#define ATOMIC_CAS(p, e, d) (*(p) == *(e) ? (*(p) = (d), 1) : (*(e) = *(p), 0))
#define TEST_THREAD_LOCAL
#define TEST_HAVE_ATOMICS 0
#else
#error "without GCC's or Clang's atomics the tests build only in modes 0 and 1 (one thread)"
#endif

/* TEST_WHOLE64: the target has an 8-byte compare-and-swap, by which hwtimer.h reads a
   64-bit value whole while another thread writes it; where it has none (gcc -m32
   -march=i486: test/tools/matrix.sh), hwtimer_create refuses cfg.threads.
   TEST_THREADS_ALLOWED: threads are accepted (atomics and whole 64-bit values). */
#if defined(__GCC_HAVE_SYNC_COMPARE_AND_SWAP_8) || UINTPTR_MAX > 0xFFFFFFFFu
#define TEST_WHOLE64 1
#else
#define TEST_WHOLE64 0
#endif
#define TEST_THREADS_ALLOWED (TEST_HAVE_ATOMICS && TEST_WHOLE64)

/* ---- a seeded PRNG ---------------------------------------------------------------------- */

/* splitmix64: tiny, fast, and any seed gives a good stream, so runs are reproducible. */
static inline uint64_t test_rng_next(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* A draw in 0 .. bound - 1; 0 when bound is 0. */
static inline uint64_t test_rng_below(uint64_t *state, uint64_t bound) {
    return bound ? test_rng_next(state) % bound : 0;
}

/* ---- what every test needs to go on ------------------------------------------------------ */

/* Zeroed memory; without it nothing can be tested, so a failure ends the program. */
static inline void *calloc_or_die(size_t count, size_t size) {
    void *p = calloc(count, size);
    if (!p) {
        fprintf(stderr, "fatal: out of memory\n");
        exit(1);
    }
    return p;
}

/* Every later call needs the timer, so a failure here ends the program. */
static inline hwtimer *create_or_die(const hwtimer_config *cfg) {
    hwtimer *t = NULL;
    int rc = hwtimer_create(&t, cfg);
    if (rc != HWTIMER_OK || !t) {
        fprintf(stderr, "fatal: hwtimer_create: %d %s\n", rc, hwtimer_strerror(rc));
        exit(1);
    }
    return t;
}

/* ---- what hwtimer_stop hands back --------------------------------------------------------
   The `unprocessed` callback every test gives hwtimer_stop: it records each node handed
   back, whether it was already CANCELLED in the callback (it must be), the ctx it got, and
   the node's own arg and period (still readable there). */

enum { HANDED_BACK_MAX = 256 };

typedef struct handed_back {
    unsigned calls;         /* nodes handed back */
    unsigned not_cancelled; /* ... whose state was not CANCELLED in the callback */
    void *ctx_seen;         /* the ctx the callback got: stop's */
    void *arg_seen;         /* the last node's hwtimer_timeout_arg ... */
    uint64_t period_seen;   /* ... and hwtimer_timeout_period */
    const hwtimer_timeout *node[HANDED_BACK_MAX]; /* the first nodes handed back, in order */
} handed_back;

static inline void note_handed_back(hwtimer_timeout *to, void *ctx) {
    handed_back *h = (handed_back *)ctx;
    if (h->calls < HANDED_BACK_MAX) h->node[h->calls] = to;
    h->calls++;
    h->not_cancelled += hwtimer_timeout_state(to) != HWTIMER_CANCELLED;
    h->ctx_seen = ctx;
    h->arg_seen = hwtimer_timeout_arg(to);
    h->period_seen = hwtimer_timeout_period(to);
}

/* How many times `to` was handed back (among the first HANDED_BACK_MAX). */
static inline unsigned handed_back_times(const handed_back *h, const hwtimer_timeout *to) {
    unsigned i, n = 0, recorded = h->calls < HANDED_BACK_MAX ? h->calls : HANDED_BACK_MAX;
    for (i = 0; i < recorded; i++) n += h->node[i] == to;
    return n;
}

/* ---- what log_fn says --------------------------------------------------------------------
   The log_fn of the tests that read hwtimer's sentences: it counts them and keeps the last
   one, whole up to its buffer's size (the sentence first, then the count: a thread that
   sees the count go up may read it). */

typedef struct logged {
    unsigned calls; /* atomic: a worker may speak */
    char last[512];
} logged;

/* 1 if the sentence s ends with `tail`: it was ended where it should be. */
static inline int ends_with(const char *s, const char *tail) {
    size_t n = strlen(s), k = strlen(tail);
    return n >= k && strcmp(s + n - k, tail) == 0;
}

static inline void note_log(void *ctx, const char *message) {
    logged *l = (logged *)ctx;
    strncpy(l->last, message, sizeof l->last - 1);
    l->last[sizeof l->last - 1] = '\0';
    ATOMIC_ADD(&l->calls, 1u);
}

/* ---- the fake clock ---------------------------------------------------------------------- */

/* The timer reads *ctx. */
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
    cfg->shards = test_shards(cfg->threads);
}

/* A fake clock another thread reads while this one moves it (ATOMIC_SET). */
static inline uint64_t test_shared_clock(void *ctx) {
    return ATOMIC_GET((const test_u64 *)ctx);
}

/* A timer with a worker on the shared fake clock *clock, with this mode's threads (the
   caller checks test_threads() first). */
static inline hwtimer *test_fake_worker(test_u64 *clock, uint64_t tick_ns,
                                        uint32_t ticks_per_wheel) {
    hwtimer_config cfg;
    test_fake_config(&cfg, (uint64_t *)clock, tick_ns, ticks_per_wheel);
    cfg.clock_fn = test_shared_clock;
    cfg.worker = 1;
    return create_or_die(&cfg);
}

/* The boundary of deadline d on a timer started at `start` with this tick, as hwtimer.h
   documents: the first start + k*tick (k >= 0) at or after d. Returns 0 when that lies
   beyond UINT64_MAX (such a timeout never fires). */
static inline int test_boundary(uint64_t start, uint64_t tick, uint64_t d, uint64_t *b) {
    uint64_t k;
    if (d <= start) {
        *b = start;
        return 1;
    }
    k = (d - start) / tick + ((d - start) % tick != 0);
    if (k > (UINT64_MAX - start) / tick) return 0;
    *b = start + k * tick;
    return 1;
}

/* The tick a timeout with a leeway runs at, as hwtimer.h documents for
   hwtimer_timeout_set_leeway: with e its due tick and n = floor(leeway / tick), the first
   multiple at or after e of the largest power of two <= n + 1 (found by trying them from
   2^63 down), or `last`, the tick of the latest deadline, if that multiple lies past it. */
static inline uint64_t test_leeway_grid_tick(uint64_t e, uint64_t n, uint64_t last) {
    unsigned bit = 63;
    uint64_t step, multiple;
    while (bit > 0 && ((uint64_t)1 << bit) - 1 > n) bit--;
    step = (uint64_t)1 << bit;
    multiple = e / step + (e % step != 0);
    return multiple > last / step ? last : multiple * step;
}

/* What hwtimer_poll_timeout_ms must say while something is pending, as hwtimer.h
   documents: the time from now to next_expiry in milliseconds, rounded up, at most
   INT_MAX; 0 once it is due. */
static inline int test_ms_until(uint64_t next_expiry, uint64_t now) {
    uint64_t wait, ms;
    if (next_expiry <= now) return 0;
    wait = next_expiry - now;
    ms = wait / 1000000u + (wait % 1000000u != 0);
    return ms > (uint64_t)INT_MAX ? INT_MAX : (int)ms;
}

#endif
