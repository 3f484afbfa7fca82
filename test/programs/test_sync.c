/* test_sync.c - hwtimer_cancel is synchronous, like Linux's del_timer_sync; hwtimer_try_cancel
   never waits; hwtimer_retire waits, and nothing arms the node after it.

   As hwtimer.h documents: when cancel returns on any thread other than the one running the
   timeout's callback, the timer no longer refers to the node and its callback is not running, so the
   node may be freed at once. The nodes here are malloc'd and freed right after cancel
   returns, and the callbacks write to their node at their very end: a cancel that returned
   too early fails the `finished` check, and under ASan the late write is a use-after-free.

   Every test runs twice: on the worker thread, and caller-driven with a second thread that
   calls hwtimer_poll in a loop (the callbacks run on that thread). */
#include "harness.h"
#include "harness_threads.h"

#define HOLD (200 * MS)       /* how long a slow callback sleeps */
#define REARM_DELAY (20 * MS) /* a callback that re-arms itself: shorter than the quiet check */

/* ---- drivers: who runs the callbacks ------------------------------------------------ */

typedef struct driver {
    hwtimer *t;
    int worker;
    test_poller poller; /* caller-driven: the thread that runs the callbacks */
} driver;

static int use_worker; /* which driver this round of tests uses */

static void driver_open(driver *d) {
    hwtimer_config cfg;
    memset(d, 0, sizeof *d);
    d->worker = use_worker;
    real_config(&cfg, d->worker, 1 * MS, 512);
    d->t = create_or_die(&cfg);
    if (!d->worker) test_poller_start(&d->poller, d->t, 1 * MS);
}

static void driver_close(driver *d) {
    if (!d->worker) test_poller_stop(&d->poller);
    CHECK_EQ(hwtimer_pending(d->t), 0);
    CHECK_EQ(hwtimer_check(d->t), 0); /* every cancel that waited took itself off the list */
    hwtimer_destroy(d->t);
}

/* ---- a slow callback ---------------------------------------------------------------- */

typedef struct slow {
    hwtimer_timeout node;
    hwtimer *t;
    uint64_t hold;           /* the callback sleeps this long */
    int rearm;               /* then schedules itself again (once) */
    int cancel_self;         /* or cancels its own node */
    int rearm_always;        /* or reschedules its own node at every run */
    void *user_lock;         /* a mutex of the test's that the callback takes, or NULL ... */
    int unwanted;            /* ... and, under it, the canceller's word: do nothing */
    int did_work;            /* runs that found themselves wanted, under the lock */
    hwtimer_timeout *victim; /* or cancels this node */
    int cancel_result;       /* what that cancel returned */
    unsigned started;        /* atomic: runs begun */
    unsigned finished;       /* atomic: runs ended; written last */
    unsigned *group_finished; /* NULL, or a counter runs of a group of nodes bump at the end */
    uint64_t fixed_rate;      /* or re-arms at its last deadline + this, every run ... */
    unsigned stop_rearming;   /* atomic: ... until this is set */
} slow;

static void slow_run(hwtimer_timeout *to, void *arg) {
    slow *s = (slow *)arg;
    unsigned run = ATOMIC_ADD(&s->started, 1u);
    if (s->hold) sleep_ns(s->hold);
    if (s->user_lock) {
        test_threads()->mutex_lock(s->user_lock);
        if (!s->unwanted) s->did_work++;
        test_threads()->mutex_unlock(s->user_lock);
    }
    if (s->rearm_always) s->cancel_result = hwtimer_reschedule(s->t, to, REARM_DELAY);
    if (s->rearm && run == 0) s->cancel_result = hwtimer_reschedule(s->t, to, REARM_DELAY);
    if (s->fixed_rate && !ATOMIC_GET(&s->stop_rearming)) {
        s->cancel_result = hwtimer_schedule_at(s->t, to, hwtimer_timeout_deadline(to) + s->fixed_rate,
                                               slow_run, s);
    }
    if (s->cancel_self) s->cancel_result = hwtimer_cancel(s->t, to);
    if (s->victim) s->cancel_result = hwtimer_cancel(s->t, s->victim);
    if (s->group_finished) ATOMIC_ADD(s->group_finished, 1u);
    ATOMIC_ADD(&s->finished, 1u);
}

static slow *slow_new(hwtimer *t, uint64_t hold) {
    slow *s = (slow *)calloc_or_die(1, sizeof *s);
    s->t = t;
    s->hold = hold;
    return s;
}

/* Schedules s (periodic when period_ns is not 0) and waits until its callback began. */
static void slow_start(slow *s, uint64_t period_ns) {
    int rc = period_ns ? hwtimer_schedule_periodic(s->t, &s->node, 1 * MS, period_ns, slow_run, s)
                       : hwtimer_schedule(s->t, &s->node, 1 * MS, slow_run, s);
    CHECK_EQ(rc, HWTIMER_OK);
    CHECK(wait_for_count(&s->started, 1, 3 * SEC));
}

/* After cancel returned: nothing runs (every begun run ended), and nothing runs later. */
static void check_quiet_after_cancel(slow *s) {
    unsigned started = ATOMIC_GET(&s->started);
    CHECK_EQ(ATOMIC_GET(&s->finished), started);
    CHECK_EQ(hwtimer_timeout_state(&s->node) == HWTIMER_PENDING, 0);
    sleep_ns(50 * MS);
    CHECK_EQ(ATOMIC_GET(&s->started), started);
}

/* ---- tests -------------------------------------------------------------------------- */

/* A one-shot callback sleeps; another thread cancels it meanwhile. The timeout is not
   pending any more (0), but cancel returns only after the callback did. */
static void test_cancel_waits_for_running_callback(void) {
    driver d;
    slow *s;
    driver_open(&d);
    s = slow_new(d.t, HOLD);
    slow_start(s, 0);
    CHECK_EQ(hwtimer_cancel(d.t, &s->node), 0);
    CHECK_EQ(ATOMIC_GET(&s->finished), 1);
    check_quiet_after_cancel(s);
    free(s);
    driver_close(&d);
}

/* A periodic timeout is pending even while its callback runs: cancelling it from another
   thread then returns 1, waits for the callback, and it never runs again. */
static void test_cancel_periodic_while_running(void) {
    driver d;
    slow *s;
    driver_open(&d);
    s = slow_new(d.t, HOLD);
    slow_start(s, 10 * MS);
    CHECK_EQ(hwtimer_cancel(d.t, &s->node), 1);
    CHECK_EQ(ATOMIC_GET(&s->started), 1);
    check_quiet_after_cancel(s);
    CHECK_EQ(hwtimer_timeout_state(&s->node), HWTIMER_CANCELLED);
    free(s);
    driver_close(&d);
}

/* The callback re-arms itself while cancel waits for it: cancel must not return with that
   arming pending. Normally it cancels it (returning 1: it was pending and now will never
   run). If the waiting thread is not scheduled for REARM_DELAY, the new arming may run
   first, as with del_timer_sync: then cancel returns 0 after that run. Either way every
   arming ran or was cancelled, and nothing runs after cancel returned. */
static void test_cancel_while_callback_rearms(void) {
    driver d;
    slow *s;
    int cancelled;
    driver_open(&d);
    s = slow_new(d.t, HOLD);
    s->rearm = 1;
    slow_start(s, 0);
    cancelled = hwtimer_cancel(d.t, &s->node);
    CHECK(cancelled == 0 || cancelled == 1);
    CHECK_EQ(s->cancel_result, HWTIMER_OK); /* the re-arm itself succeeded */
    CHECK_EQ(ATOMIC_GET(&s->started), cancelled == 1 ? 1 : 2); /* two armings */
    if (cancelled == 0) fprintf(stderr, "note: the re-armed callback ran before cancel took it\n");
    check_quiet_after_cancel(s);
    CHECK_EQ(hwtimer_pending(d.t), 0);
    free(s);
    driver_close(&d);
}

/* Cancels a node on another thread, so that the test thread can time it. */
typedef struct canceller {
    hwtimer *t;
    hwtimer_timeout *to;
    int result;
    unsigned done; /* atomic */
    test_thread thread;
} canceller;

static void canceller_main(void *arg) {
    canceller *c = (canceller *)arg;
    c->result = hwtimer_cancel(c->t, c->to);
    ATOMIC_SET(&c->done, 1u);
}

/* A one-shot re-arms itself at a fixed rate, its last deadline + 1 ms, but takes 2 ms: every
   new deadline is already due when it re-arms (a callback behind schedule). Cancel from
   another thread waits for the running callback to return (as hwtimer.h documents), not
   for the callback to stop re-arming: it must return soon, with nothing running or pending. The wait is
   bounded: after 2 s the callback is told to stop re-arming, so a starving cancel fails
   the check instead of hanging the test. */
static void test_cancel_rearming_behind_schedule(void) {
    driver d;
    slow *s;
    canceller c;
    int returned;
    driver_open(&d);
    s = slow_new(d.t, 2 * MS);
    s->fixed_rate = 1 * MS;
    slow_start(s, 0);
    sleep_ns(20 * MS); /* behind schedule by now */
    memset(&c, 0, sizeof c);
    c.t = d.t;
    c.to = &s->node;
    test_thread_start(&c.thread, canceller_main, &c);
    returned = wait_for_count(&c.done, 1, 2 * SEC);
    if (!returned) fprintf(stderr, "cancel still waiting after 2 s, %u runs\n", ATOMIC_GET(&s->started));
    CHECK(returned);
    ATOMIC_SET(&s->stop_rearming, 1u);
    test_thread_join(&c.thread);
    CHECK(c.result == 0 || c.result == 1);
    check_quiet_after_cancel(s);
    free(s);
    driver_close(&d);
}

/* Cancelling one's own node from the callback returns at once: 0 for a one-shot (it is
   running, not pending), 1 for a periodic one, which is then not re-armed. */
static void check_cancel_self(uint64_t period_ns, int expected) {
    driver d;
    slow *s;
    driver_open(&d);
    s = slow_new(d.t, 0);
    s->cancel_self = 1;
    slow_start(s, period_ns);
    CHECK(wait_for_count(&s->finished, 1, 3 * SEC)); /* no deadlock */
    CHECK_EQ(s->cancel_result, expected);
    CHECK_EQ(hwtimer_cancel(d.t, &s->node), 0);
    check_quiet_after_cancel(s);
    CHECK_EQ(ATOMIC_GET(&s->started), 1);
    free(s);
    driver_close(&d);
}

static void test_callback_cancels_itself(void) {
    check_cancel_self(0, 0);
    check_cancel_self(10 * MS, 1);
}

/* A callback cancels another pending timeout: 1 at once, and that one never runs. */
static void test_callback_cancels_another(void) {
    driver d;
    slow *s, *victim;
    driver_open(&d);
    victim = slow_new(d.t, 0);
    CHECK_EQ(hwtimer_schedule(d.t, &victim->node, 60 * SEC, slow_run, victim), HWTIMER_OK);
    s = slow_new(d.t, 0);
    s->victim = &victim->node;
    slow_start(s, 0);
    CHECK(wait_for_count(&s->finished, 1, 3 * SEC));
    CHECK_EQ(s->cancel_result, 1);
    CHECK_EQ(hwtimer_timeout_state(&victim->node), HWTIMER_CANCELLED);
    CHECK_EQ(ATOMIC_GET(&victim->started), 0);
    free(victim);
    free(s);
    driver_close(&d);
}

/* Two timeouts due in the same tick cancel each other: whichever runs first cancels the
   other (1), which then never runs, although it had already been taken out of the wheel. */
static void test_callbacks_cancel_each_other_in_one_tick(void) {
    driver d;
    slow *a, *b;
    uint64_t deadline;
    unsigned finished = 0;
    driver_open(&d);
    a = slow_new(d.t, 0);
    b = slow_new(d.t, 0);
    a->victim = &b->node;
    b->victim = &a->node;
    a->group_finished = b->group_finished = &finished;
    deadline = hwtimer_now(d.t) + 5 * MS;
    CHECK_EQ(hwtimer_schedule_at(d.t, &a->node, deadline, slow_run, a), HWTIMER_OK);
    CHECK_EQ(hwtimer_schedule_at(d.t, &b->node, deadline, slow_run, b), HWTIMER_OK);
    CHECK(wait_for_count(&finished, 1, 3 * SEC));
    sleep_ns(50 * MS); /* time for a second run, which must not come */
    CHECK_EQ(ATOMIC_GET(&finished), 1);
    CHECK_EQ(a->cancel_result + b->cancel_result, 1);
    CHECK_EQ(hwtimer_pending(d.t), 0);
    free(a);
    free(b);
    driver_close(&d);
}

/* try_cancel never waits: against a running one-shot and a running periodic callback it
   returns HWTIMER_ERUNNING while the callback still runs; the node is then not pending, and
   after the callback returns nothing runs again (the periodic one is not re-armed). */
static void check_try_cancel_running(uint64_t period_ns) {
    driver d;
    slow *s;
    driver_open(&d);
    s = slow_new(d.t, HOLD);
    slow_start(s, period_ns);
    CHECK_EQ(hwtimer_try_cancel(d.t, &s->node), HWTIMER_ERUNNING);
    CHECK_EQ(ATOMIC_GET(&s->finished), 0); /* it did not wait */
    CHECK_EQ(hwtimer_is_pending(d.t, &s->node), 0);
    CHECK_EQ(hwtimer_pending(d.t), 0);
    CHECK(wait_for_count(&s->finished, 1, 3 * SEC));
    check_quiet_after_cancel(s);
    CHECK_EQ(ATOMIC_GET(&s->started), 1);
    CHECK_EQ(hwtimer_try_cancel(d.t, &s->node), 0); /* not pending, not running */
    free(s);
    driver_close(&d);
}

static void test_try_cancel_running_callback(void) {
    check_try_cancel_running(0);
    check_try_cancel_running(10 * MS);
}

/* The worker-mode pattern: a callback takes a lock of the user's, and a thread holding that
   lock cancels its timeout. hwtimer_cancel would wait for the callback, which waits for the
   lock: a deadlock. hwtimer_try_cancel returns HWTIMER_ERUNNING at once; the canceller says
   "unwanted" under the lock, and the callback, once it has the lock, does nothing. */
static void test_try_cancel_under_a_lock_the_callback_takes(void) {
    const hwtimer_threads *th = test_threads();
    driver d;
    slow *s;
    int rc;
    driver_open(&d);
    s = slow_new(d.t, 50 * MS);
    s->user_lock = calloc_or_die(1, th->mutex_size);
    CHECK_EQ(th->mutex_init(s->user_lock), 0);
    th->mutex_lock(s->user_lock);
    slow_start(s, 0);
    rc = hwtimer_try_cancel(d.t, &s->node); /* the callback runs, and will wait for the lock */
    CHECK_EQ(rc, HWTIMER_ERUNNING);
    if (rc == HWTIMER_ERUNNING) s->unwanted = 1;
    th->mutex_unlock(s->user_lock);
    CHECK(wait_for_count(&s->finished, 1, 3 * SEC));
    CHECK_EQ(s->did_work, 0);
    check_quiet_after_cancel(s);
    th->mutex_destroy(s->user_lock);
    free(s->user_lock);
    free(s);
    driver_close(&d);
}

/* retire against a periodic callback that reschedules itself at every run: it waits for the
   callback, whose rescheduling (after retire began) is refused; then nothing runs, the
   node is RETIRED and may be freed at once (ASan: a later touch by the timer is a crash). */
static void test_retire_periodic_that_rearms(void) {
    driver d;
    slow *s;
    driver_open(&d);
    s = slow_new(d.t, HOLD);
    s->rearm_always = 1;
    slow_start(s, 10 * MS);
    CHECK_EQ(hwtimer_retire(d.t, &s->node), 1);
    CHECK_EQ(ATOMIC_GET(&s->finished), 1);
    CHECK_EQ(s->cancel_result, HWTIMER_ERETIRED);
    CHECK_EQ(hwtimer_timeout_state(&s->node), HWTIMER_RETIRED);
    check_quiet_after_cancel(s);
    free(s);
    driver_close(&d);
}

/* Reschedules a node again and again on another thread, and counts what each call gave. */
typedef struct rescheduler {
    hwtimer *t;
    hwtimer_timeout *to;
    unsigned quit;       /* atomic */
    unsigned after_mark; /* atomic: calls begun after `mark` was seen set ... */
    unsigned mark;       /* atomic */
    unsigned refused_after_mark; /* ... of which refused as retired */
    test_thread thread;
} rescheduler;

static void rescheduler_main(void *arg) {
    rescheduler *r = (rescheduler *)arg;
    while (!ATOMIC_GET(&r->quit)) {
        int marked = (int)ATOMIC_GET(&r->mark);
        int rc = hwtimer_reschedule(r->t, r->to, 30 * SEC);
        if (marked) {
            ATOMIC_ADD(&r->after_mark, 1u);
            if (rc == HWTIMER_ERETIRED) ATOMIC_ADD(&r->refused_after_mark, 1u);
        }
    }
}

/* retire against another thread's reschedules: once retire has returned, the node is not
   pending and every later reschedule of the other thread is refused. */
static void test_retire_against_reschedules(void) {
    driver d;
    slow *s;
    rescheduler r;
    int rc;
    driver_open(&d);
    s = slow_new(d.t, 0);
    CHECK_EQ(hwtimer_schedule(d.t, &s->node, 30 * SEC, slow_run, s), HWTIMER_OK);
    memset(&r, 0, sizeof r);
    r.t = d.t;
    r.to = &s->node;
    test_thread_start(&r.thread, rescheduler_main, &r);
    sleep_ns(5 * MS);
    rc = hwtimer_retire(d.t, &s->node);
    CHECK(rc == 1 || rc == 0);
    ATOMIC_SET(&r.mark, 1u);
    CHECK_EQ(hwtimer_is_pending(d.t, &s->node), 0);
    while (ATOMIC_GET(&r.after_mark) < 1000) sleep_ns(1 * MS);
    ATOMIC_SET(&r.quit, 1u);
    test_thread_join(&r.thread);
    CHECK_EQ(ATOMIC_GET(&r.refused_after_mark), ATOMIC_GET(&r.after_mark));
    CHECK_EQ(hwtimer_timeout_state(&s->node), HWTIMER_RETIRED);
    CHECK_EQ(hwtimer_pending(d.t), 0);
    CHECK_EQ(ATOMIC_GET(&s->started), 0);
    free(s);
    driver_close(&d);
}

static void run_all(void) {
    RUN_TEST(test_cancel_waits_for_running_callback);
    RUN_TEST(test_cancel_periodic_while_running);
    RUN_TEST(test_cancel_while_callback_rearms);
    RUN_TEST(test_cancel_rearming_behind_schedule);
    RUN_TEST(test_callback_cancels_itself);
    RUN_TEST(test_callback_cancels_another);
    RUN_TEST(test_callbacks_cancel_each_other_in_one_tick);
    RUN_TEST(test_try_cancel_running_callback);
    RUN_TEST(test_try_cancel_under_a_lock_the_callback_takes);
    RUN_TEST(test_retire_periodic_that_rearms);
    RUN_TEST(test_retire_against_reschedules);
}

int main(void) {
    fprintf(stderr, "-- callbacks on the worker thread\n");
    use_worker = 1;
    run_all();
    fprintf(stderr, "-- caller-driven: callbacks on a thread that polls\n");
    use_worker = 0;
    run_all();
    return test_finish();
}
