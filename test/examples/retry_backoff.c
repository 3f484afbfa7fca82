/* retry_backoff.c - retry failed calls in the background, with exponential backoff.

   The problem: Dubbo's FailbackClusterInvoker (and FailbackRegistry) answer a failed call
   at once and retry it in the background: the retry is a timeout on a HashedWheelTimer,
   re-armed after each failure until it succeeds or `retries` is used up. The number of
   retries waiting is capped (failbackTasks); a call whose retry cannot be queued is
   reported failed at once. Here the delay doubles after each failure: 10, 20, 40, 80 ms,
   then stays at 80 ms.

   How the timer is used: caller-driven on a fake clock, one thread (cfg.threads = NULL).
   The driver is a discrete-event simulation: the clock jumps straight to
   hwtimer_next_expiry and hwtimer_advance runs what is due, so hours of retries take
   microseconds and every time is exact. Each call embeds its retry timeout; a failed
   attempt re-arms it from its own callback (allowed: a one-shot node that has fired is no
   longer pending). cfg.max_pending is the cap on queued retries: HWTIMER_EFULL beyond it.

   The test: call k fails its first k % 8 attempts. With MAX_RETRIES = 5, a call that
   fails f <= 5 times succeeds on attempt f + 1, the others give up after 6 attempts. Each
   retry runs exactly its backoff after the failure before it (the fake clock and a 1 ms
   tick make it exact). With the cap, the calls beyond it fail at once, and the queued ones
   keep their places through all their retries. */
#include "harness.h"

#define TICK HWTIMER_MS(1)
#define FIRST_BACKOFF HWTIMER_MS(10)
#define MAX_BACKOFF HWTIMER_MS(80)
#define MAX_RETRIES 5u
#define CALLS 64
#define CALL_EVERY HWTIMER_MS(3) /* 3 ms apart, so retries of many calls interleave */

enum outcome { IN_FLIGHT, SUCCEEDED, GAVE_UP, REJECTED };

typedef struct failback failback;

typedef struct call {
    failback *fb;
    unsigned fails_left; /* the fake service fails this call this many more times */
    unsigned attempts;
    uint64_t attempt_at[MAX_RETRIES + 1];
    enum outcome outcome;
    hwtimer_timeout retry;
} call;

struct failback {
    hwtimer *timer;
    uint64_t clock; /* the fake clock the timer reads */
};

/* 10, 20, 40, 80, 80, ... ms before retry number `retry` (0 is the first retry). */
static uint64_t backoff(unsigned retry) {
    uint64_t delay = FIRST_BACKOFF;
    while (retry-- > 0 && delay < MAX_BACKOFF) delay *= 2;
    return delay < MAX_BACKOFF ? delay : MAX_BACKOFF;
}

/* The remote service: fails a call as many times as it was told to. */
static int service_invoke(call *c) {
    if (c->fails_left == 0) return 0;
    c->fails_left--;
    return -1;
}

static void on_retry(hwtimer_timeout *to, void *arg);

/* One attempt; on failure, queue the next one after its backoff (or give up). */
static void attempt(call *c) {
    unsigned retries_done = c->attempts; /* this attempt included, if it is a retry */
    c->attempt_at[c->attempts++] = c->fb->clock;
    if (service_invoke(c) == 0) {
        c->outcome = SUCCEEDED;
    } else if (retries_done == MAX_RETRIES) {
        c->outcome = GAVE_UP;
    } else if (hwtimer_schedule(c->fb->timer, &c->retry, backoff(retries_done), on_retry, c) ==
               HWTIMER_EFULL) {
        c->outcome = REJECTED; /* Dubbo: "Failback background works error" */
    }
}

static void on_retry(hwtimer_timeout *to, void *arg) {
    (void)to;
    attempt((call *)arg);
}

/* Moves the fake clock to `until`, stopping at every time the timer has work. */
static void run_until(failback *fb, uint64_t until) {
    uint64_t next;
    while ((next = hwtimer_next_expiry(fb->timer)) <= until) {
        if (next > fb->clock) fb->clock = next;
        hwtimer_advance(fb->timer, fb->clock);
    }
    fb->clock = until;
}

static void failback_open(failback *fb, size_t max_pending) {
    hwtimer_config cfg;
    hwtimer_config_default(&cfg);
    cfg.tick_ns = TICK;
    cfg.max_pending = max_pending;
    cfg.clock_fn = test_fake_clock;
    cfg.clock_ctx = &fb->clock;
    fb->clock = 0;
    CHECK_EQ(hwtimer_create(&fb->timer, &cfg), HWTIMER_OK);
}

static void test_retries_back_off_then_succeed_or_give_up(void) {
    static const uint64_t expected_backoff_ms[MAX_RETRIES] = {10, 20, 40, 80, 80};
    failback fb;
    call calls[CALLS];
    unsigned k, n, retries = 0;
    hwtimer_stats stats;
    failback_open(&fb, 0);
    memset(calls, 0, sizeof calls);
    for (k = 0; k < CALLS; k++) {
        run_until(&fb, k * CALL_EVERY);
        calls[k].fb = &fb;
        calls[k].fails_left = k % 8;
        attempt(&calls[k]);
    }
    run_until(&fb, UINT64_MAX - 1);

    for (k = 0; k < CALLS; k++) {
        call *c = &calls[k];
        unsigned failures = k % 8;
        if (failures <= MAX_RETRIES) {
            CHECK_EQ(c->outcome, SUCCEEDED);
            CHECK_EQ(c->attempts, failures + 1);
        } else {
            CHECK_EQ(c->outcome, GAVE_UP);
            CHECK_EQ(c->attempts, MAX_RETRIES + 1);
        }
        CHECK_EQ(c->attempt_at[0], k * CALL_EVERY);
        for (n = 1; n < c->attempts; n++)
            CHECK_EQ(c->attempt_at[n] - c->attempt_at[n - 1],
                     HWTIMER_MS(expected_backoff_ms[n - 1]));
        retries += c->attempts - 1;
    }
    hwtimer_stats_get(fb.timer, &stats);
    CHECK_EQ(stats.fired, retries);
    CHECK_EQ(hwtimer_pending(fb.timer), 0);
    hwtimer_destroy(fb.timer);
}

/* Dubbo's failbackTasks: at most QUEUE_CAP retries wait; the next failures fail at once. */
#define QUEUE_CAP 4
#define BURST 10

static void test_retry_queue_is_capped(void) {
    failback fb;
    call calls[BURST];
    unsigned k;
    failback_open(&fb, QUEUE_CAP);
    memset(calls, 0, sizeof calls);
    for (k = 0; k < BURST; k++) {
        calls[k].fb = &fb;
        calls[k].fails_left = 100; /* the service is down */
        attempt(&calls[k]);
    }
    CHECK_EQ(hwtimer_pending(fb.timer), QUEUE_CAP);
    for (k = QUEUE_CAP; k < BURST; k++) {
        CHECK_EQ(calls[k].outcome, REJECTED);
        CHECK_EQ(calls[k].attempts, 1);
    }

    /* A retry that fails again re-arms from its callback: its place was freed when it
       fired, so a full queue never rejects a call it already holds. */
    run_until(&fb, UINT64_MAX - 1);
    for (k = 0; k < QUEUE_CAP; k++) {
        CHECK_EQ(calls[k].outcome, GAVE_UP);
        CHECK_EQ(calls[k].attempts, MAX_RETRIES + 1);
    }
    CHECK_EQ(hwtimer_pending(fb.timer), 0);
    hwtimer_destroy(fb.timer);
}

int main(void) {
    RUN_TEST(test_retries_back_off_then_succeed_or_give_up);
    RUN_TEST(test_retry_queue_is_capped);
    return test_finish();
}
