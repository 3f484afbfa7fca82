/* harness_threads.h - what the threaded tests (suite 'threads') share on top of harness.h:
   the real clock, sleeping, polling a counter with a time limit, starting test
   threads, a backend that wraps this mode's, a thread that polls a caller-driven timer,
   and real-clock timers.

   Test threads are started through this mode's own hwtimer_threads table (the same hooks the
   timer uses), so one test source runs unchanged under the pthread and the C11 backend.
   Include after harness.h. */
#ifndef HWTIMER_TEST_HARNESS_THREADS_H
#define HWTIMER_TEST_HARNESS_THREADS_H

#include <time.h>

#include "units.h"

/* TEST_TSAN is 1 under ThreadSanitizer, which makes every lock and atomic ten times slower:
   tests that measure throughput-bound latency scale their load down by it. */
#if defined(__SANITIZE_THREAD__)
#define TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TEST_TSAN 1
#endif
#endif
#ifndef TEST_TSAN
#define TEST_TSAN 0
#endif

/* TEST_ASAN is 1 under AddressSanitizer. */
#if defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif
#ifndef TEST_ASAN
#define TEST_ASAN 0
#endif

/* ---- time --------------------------------------------------------------------------- */

/* The monotonic clock, in ns: the same clock a timer with no clock_fn reads. */
static inline uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec;
}

static inline void sleep_ns(uint64_t ns) {
    struct timespec ts;
    ts.tv_sec = (time_t)(ns / SEC);
    ts.tv_nsec = (long)(ns % SEC);
    while (nanosleep(&ts, &ts) != 0) {
        /* interrupted by a signal: sleep the rest */
    }
}

/* Polls *counter every millisecond until it reaches `target` or `limit_ns` have passed.
   Returns whether it got there: the wait for "callback ran" in every threaded test. */
static inline int wait_for_count(const unsigned *counter, unsigned target, uint64_t limit_ns) {
    uint64_t give_up = now_ns() + limit_ns;
    while (ATOMIC_GET(counter) < target) {
        if (now_ns() >= give_up) return 0;
        sleep_ns(1 * MS);
    }
    return 1;
}

/* A callback that counts its runs in the unsigned at arg (atomic: a worker may run it), for
   wait_for_count to wait on. */
static inline void count_runs(hwtimer_timeout *to, void *arg) {
    (void)to;
    ATOMIC_ADD((unsigned *)arg, 1u);
}

/* ---- test threads ------------------------------------------------------------------- */

typedef struct test_thread {
    void *record; /* thread_size bytes for the backend's thread hooks */
} test_thread;

/* Starts fn(arg) on a new thread; a failure ends the program (nothing can be tested). */
static inline void test_thread_start(test_thread *th, void (*fn)(void *), void *arg) {
    const hwtimer_threads *hooks = test_threads();
    th->record = hooks ? calloc_or_die(1, hooks->thread_size) : NULL;
    if (!th->record || hooks->thread_start(th->record, fn, arg) != 0) {
        fprintf(stderr, "fatal: cannot start a test thread\n");
        exit(1);
    }
}

static inline void test_thread_join(test_thread *th) {
    test_threads()->thread_join(th->record);
    free(th->record);
    th->record = NULL;
}

/* ---- a backend that wraps this mode's ----------------------------------------------- */

/* Makes *th a copy of this mode's thread table, in which a test then puts hooks of its own
   (that count, check or shape the calls), and returns this mode's table, which those hooks
   pass the calls on to. */
static inline const hwtimer_threads *test_wrap_threads(hwtimer_threads *th) {
    const hwtimer_threads *real = test_threads();
    *th = *real;
    return real;
}

/* ---- a poll loop: the thread that drives a caller-driven timer ---------------------- */

typedef struct test_poller {
    hwtimer *t;
    uint64_t pause_ns; /* between two polls */
    unsigned quit;     /* atomic */
    test_thread thread;
} test_poller;

static inline void test_poller__main(void *arg) {
    test_poller *p = (test_poller *)arg;
    while (!ATOMIC_GET(&p->quit)) {
        hwtimer_poll(p->t);
        sleep_ns(p->pause_ns);
    }
}

/* Starts a thread that calls hwtimer_poll(t) every pause_ns, until test_poller_stop. */
static inline void test_poller_start(test_poller *p, hwtimer *t, uint64_t pause_ns) {
    p->t = t;
    p->pause_ns = pause_ns;
    ATOMIC_SET(&p->quit, 0u);
    test_thread_start(&p->thread, test_poller__main, p);
}

static inline void test_poller_stop(test_poller *p) {
    ATOMIC_SET(&p->quit, 1u);
    test_thread_join(&p->thread);
}

/* ---- timers ------------------------------------------------------------------------- */

/* Config for a timer on the real clock with this mode's threads; worker selects the mode. */
static inline void real_config(hwtimer_config *cfg, int worker, uint64_t tick_ns,
                               uint32_t ticks_per_wheel) {
    hwtimer_config_default(cfg);
    cfg->tick_ns = tick_ns;
    cfg->ticks_per_wheel = ticks_per_wheel;
    cfg->threads = test_threads();
    cfg->shards = test_shards(cfg->threads);
    cfg->worker = worker;
}

/* A worker-mode timer on the real clock. */
static inline hwtimer *worker_timer(uint64_t tick_ns, uint32_t ticks_per_wheel) {
    hwtimer_config cfg;
    real_config(&cfg, 1, tick_ns, ticks_per_wheel);
    return create_or_die(&cfg);
}

#endif
