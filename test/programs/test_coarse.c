/* test_coarse.c - cfg.coarse_clock. With a clock_fn of the user's it is ignored. Without
   one (Linux), the timer reads CLOCK_MONOTONIC_COARSE, every deadline made from a delay is
   G later (G: that clock's clock_getres) and the _at forms are not, no timeout runs before
   its deadline on the coarse clock, nor before its delay has passed on CLOCK_MONOTONIC
   when the coarse clock lagged by at most G (caller-driven and with a worker), and neither a
   worker nor a loop that sleeps until next_expiry or for poll_timeout_ms spins while the
   coarse clock lags a boundary: a periodic timeout of 1 ms for a second costs about one
   wake-up per pass and little CPU. */
#include "harness.h"
#include "harness_threads.h"

static unsigned never_runs; /* the callback count of timeouts destroyed before they run */

/* With a clock_fn: nothing changes (the fake clock's readings, exact deadlines). */
static void test_ignored_with_clock_fn(void) {
    hwtimer_config cfg;
    hwtimer_timeout to = HWTIMER_TIMEOUT_INIT;
    uint64_t clock = 7 * MS + 3;
    hwtimer *t;
    test_fake_config(&cfg, &clock, MS, 64);
    cfg.coarse_clock = 1;
    t = create_or_die(&cfg);
    CHECK_EQ(hwtimer_now(t), clock);
    CHECK_EQ(hwtimer_schedule(t, &to, 5 * MS, count_runs, &never_runs), HWTIMER_OK);
    CHECK_EQ(hwtimer_timeout_deadline(&to), clock + 5 * MS);
    CHECK_EQ(hwtimer_next_expiry(t), 12 * MS + 3); /* its boundary exactly: no G */
    CHECK_EQ(hwtimer_poll_timeout_ms(t), 5);
    hwtimer_destroy(t);
}

#if defined(CLOCK_MONOTONIC_COARSE) && !defined(_WIN32)
#include <sys/resource.h>

static uint64_t coarse_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec;
}

static uint64_t coarse_lag(void) {
    struct timespec res;
    CHECK_EQ(clock_getres(CLOCK_MONOTONIC_COARSE, &res), 0);
    return (uint64_t)res.tv_sec * SEC + (uint64_t)res.tv_nsec;
}

/* user + system CPU time of the process so far (every thread's) */
static uint64_t cpu_ns(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * SEC +
           ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * US;
}

static hwtimer *coarse_timer(int worker) {
    hwtimer_config cfg;
    hwtimer_config_default(&cfg);
    cfg.tick_ns = MS;
    cfg.coarse_clock = 1;
    cfg.threads = test_threads();
    cfg.shards = test_shards(cfg.threads);
    cfg.worker = worker;
    return create_or_die(&cfg);
}

/* hwtimer_now is a coarse reading; a delay's deadline is the coarse reading + G + delay
   (schedule, reschedule, a periodic's first), an _at's is its own. */
static void test_coarse_deadlines(void) {
    hwtimer *t = coarse_timer(0);
    hwtimer_timeout a = HWTIMER_TIMEOUT_INIT, b = HWTIMER_TIMEOUT_INIT;
    hwtimer_timeout c = HWTIMER_TIMEOUT_INIT, d = HWTIMER_TIMEOUT_INIT;
    uint64_t g = coarse_lag(), before, now, after;
    CHECK(g > 0);
    before = coarse_ns();
    now = hwtimer_now(t);
    after = coarse_ns();
    CHECK(before <= now && now <= after);
    before = coarse_ns();
    CHECK_EQ(hwtimer_schedule(t, &a, 50 * MS, count_runs, &never_runs), HWTIMER_OK);
    CHECK_EQ(hwtimer_schedule_periodic(t, &b, 50 * MS, MS, count_runs, &never_runs), HWTIMER_OK);
    CHECK_EQ(hwtimer_schedule(t, &c, SEC, count_runs, &never_runs), HWTIMER_OK);
    CHECK_EQ(hwtimer_reschedule(t, &c, 50 * MS), HWTIMER_OK);
    after = coarse_ns();
    CHECK(hwtimer_timeout_deadline(&a) >= before + g + 50 * MS);
    CHECK(hwtimer_timeout_deadline(&a) <= after + g + 50 * MS);
    CHECK(hwtimer_timeout_deadline(&b) >= before + g + 50 * MS);
    CHECK(hwtimer_timeout_deadline(&b) <= after + g + 50 * MS);
    CHECK(hwtimer_timeout_deadline(&c) >= before + g + 50 * MS);
    CHECK(hwtimer_timeout_deadline(&c) <= after + g + 50 * MS);
    CHECK_EQ(hwtimer_schedule_at(t, &d, now + 50 * MS, count_runs, &never_runs), HWTIMER_OK);
    CHECK_EQ(hwtimer_timeout_deadline(&d), now + 50 * MS);
    /* the first boundary, d's (within a tick after its deadline), G later */
    CHECK(hwtimer_next_expiry(t) >= now + 50 * MS + g);
    CHECK(hwtimer_next_expiry(t) <= now + 51 * MS + g);
    hwtimer_destroy(t);
}

/* Never early, on the timer's clock and on CLOCK_MONOTONIC. Each schedule notes the
   coarse clock c before it and the monotonic clock m before and m2 after it. The timer's
   promise is on its own clock: each callback finds the coarse clock at least c + G + delay
   (its deadline is the coarse reading the schedule took, c or later, plus G and delay).
   On CLOCK_MONOTONIC, which never reads less than the coarse clock, the callback comes at
   least the delay after m whenever the coarse clock lagged by at most G during the
   schedule (m2 - c <= G: its reading plus G was at or after m2). When it lagged more, as
   on an overloaded virtual machine, the header promises nothing on CLOCK_MONOTONIC: those
   schedules are counted and printed, not failed. */
enum { EARLY_N = 300 };
typedef struct timed {
    hwtimer_timeout to;
    uint64_t coarse, scheduled, after, delay; /* c, m and m2; the delay */
    uint64_t ran_coarse, ran_monotonic;       /* the clocks in the callback */
    unsigned runs;
} timed;

/* Notes the clocks; they are judged after hwtimer_destroy (which joins a worker). */
static void on_timed(hwtimer_timeout *to, void *arg) {
    timed *x = (timed *)arg;
    x->ran_coarse = coarse_ns();
    x->ran_monotonic = now_ns();
    ATOMIC_ADD(&x->runs, 1u);
    (void)to;
}

static void never_early(int worker) {
    static timed x[EARLY_N];
    hwtimer *t = coarse_timer(worker);
    uint64_t rng = 5, end, g = coarse_lag();
    unsigned i, early_coarse = 0, early_monotonic = 0, runs = 0, lagged = 0;
    memset(x, 0, sizeof x);
    for (i = 0; i < EARLY_N; i++) {
        x[i].delay = test_rng_below(&rng, 12 * MS);
        x[i].coarse = coarse_ns();
        x[i].scheduled = now_ns();
        CHECK_EQ(hwtimer_schedule(t, &x[i].to, x[i].delay, on_timed, &x[i]), HWTIMER_OK);
        x[i].after = now_ns();
        if (i % 16 == 0) sleep_ns(test_rng_below(&rng, MS)); /* spread over coarse ticks */
        if (!worker) hwtimer_poll(t);
    }
    end = now_ns() + 5 * SEC;
    while (hwtimer_pending(t) > 0 && now_ns() < end) {
        if (!worker) {
            int ms = hwtimer_poll_timeout_ms(t);
            sleep_ns((uint64_t)(ms > 0 ? ms : 0) * MS);
            hwtimer_poll(t);
        } else {
            sleep_ns(MS);
        }
    }
    hwtimer_destroy(t);
    for (i = 0; i < EARLY_N; i++) {
        runs += ATOMIC_GET(&x[i].runs);
        if (x[i].ran_coarse < x[i].coarse + g + x[i].delay) early_coarse++;
        if (x[i].after - x[i].coarse > g) lagged++;
        else if (x[i].ran_monotonic < x[i].scheduled + x[i].delay) early_monotonic++;
    }
    if (lagged) printf("  the coarse clock lagged more than G during %u of %u schedules\n", lagged, EARLY_N);
    CHECK_EQ(runs, EARLY_N);
    CHECK_EQ(early_coarse, 0);
    CHECK_EQ(early_monotonic, 0);
}

static void test_never_early(void) {
    never_early(0);
    if (test_threads()) never_early(1);
}

/* A periodic timeout of 1 ms for a second. How a loop sleeps between its polls. */
enum { SLEEP_POLL_TIMEOUT, SLEEP_UNTIL_NEXT_EXPIRY };

typedef struct idle_result {
    unsigned wakeups, runs; /* times the loop woke; callbacks run */
    uint64_t cpu;           /* CPU time, ns */
} idle_result;

static void count_periodic(hwtimer_timeout *to, void *arg) {
    ATOMIC_ADD((unsigned *)arg, 1u);
    (void)to;
}

static idle_result idle_second(int how) {
    hwtimer *t = coarse_timer(0);
    hwtimer_timeout to = HWTIMER_TIMEOUT_INIT;
    idle_result r = {0, 0, 0};
    uint64_t end = now_ns() + SEC, cpu = cpu_ns();
    CHECK_EQ(hwtimer_schedule_periodic(t, &to, MS, MS, count_periodic, &r.runs), HWTIMER_OK);
    while (now_ns() < end) {
        if (how == SLEEP_POLL_TIMEOUT) {
            int ms = hwtimer_poll_timeout_ms(t);
            sleep_ns((uint64_t)(ms > 0 ? ms : 0) * MS);
        } else {
            uint64_t at = hwtimer_next_expiry(t);
            struct timespec ts;
            ts.tv_sec = (time_t)(at / SEC);
            ts.tv_nsec = (long)(at % SEC);
            while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) continue;
        }
        r.wakeups++;
        hwtimer_poll(t);
    }
    r.cpu = cpu_ns() - cpu;
    hwtimer_destroy(t);
    return r;
}

/* Each wake-up of a loop runs the periodic timeout (a few may not: slack for a coarse
   clock that lags more than its resolution says, on a busy machine); the second costs
   little CPU. A loop that spun would wake thousands of times and use the whole second. */
static void check_idle(const char *what, unsigned wakeups, unsigned runs, uint64_t cpu) {
    printf("  %s: %u wake-ups, %u runs, %llu us CPU\n", what, wakeups, runs,
           (unsigned long long)(cpu / US));
    CHECK(runs >= 50);                     /* it ran, at most every G */
    /* about one wake-up per run; a busy machine (ASan, another job) makes a worker's pass
       miss some boundaries, so up to twice: a spin is thousands */
    CHECK(wakeups <= 2 * runs + 10);
    if (!TEST_ASAN && !TEST_TSAN) CHECK(cpu < 250 * MS);
}

static void test_no_spin(void) {
    idle_result r = idle_second(SLEEP_POLL_TIMEOUT);
    check_idle("loop sleeping for poll_timeout_ms", r.wakeups, r.runs, r.cpu);
    r = idle_second(SLEEP_UNTIL_NEXT_EXPIRY);
    check_idle("loop sleeping until next_expiry", r.wakeups, r.runs, r.cpu);
    if (test_threads()) { /* the worker: its wake-ups and passes (stats) */
        hwtimer *t = coarse_timer(1);
        hwtimer_timeout to = HWTIMER_TIMEOUT_INIT;
        hwtimer_stats stats;
        unsigned runs = 0;
        uint64_t cpu = cpu_ns();
        CHECK_EQ(hwtimer_schedule_periodic(t, &to, MS, MS, count_periodic, &runs), HWTIMER_OK);
        sleep_ns(SEC);
        hwtimer_stop(t, NULL, NULL);
        cpu = cpu_ns() - cpu;
        hwtimer_stats_get(t, &stats);
        check_idle("worker (wake-ups; passes as runs)", (unsigned)stats.wakeups,
                   (unsigned)stats.passes, cpu);
        CHECK(ATOMIC_GET(&runs) >= 50);
        hwtimer_destroy(t);
    }
}
#endif

int main(void) {
    RUN_TEST(test_ignored_with_clock_fn);
#if defined(CLOCK_MONOTONIC_COARSE) && !defined(_WIN32)
    RUN_TEST(test_coarse_deadlines);
    RUN_TEST(test_never_early);
    RUN_TEST(test_no_spin);
#else
    printf("skipped: no CLOCK_MONOTONIC_COARSE here (cfg.coarse_clock changes nothing)\n");
#endif
    return test_finish();
}
