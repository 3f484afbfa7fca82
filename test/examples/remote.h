/* remote.h - timeouts scheduled from other threads into a loop that sleeps: the test side
   shared by loop_wake (epoll + eventfd) and loop_libuv (uv_async_t).

   A caller-driven timer with locks (cfg.threads) is driven by one loop thread; other
   threads (a thread pool handing work back to the loop, say) schedule timeouts into it.
   The loop sleeps until the time hwtimer_next_expiry or hwtimer_poll_timeout_ms last
   told it, or forever when nothing was pending: a timeout scheduled from elsewhere with
   an earlier boundary would wait for that old wake-up. cfg.wake_fn is the fix: hwtimer
   calls it (on the scheduling thread, no lock held) when a schedule needs the loop
   earlier than it was told, and the recipe's wake_fn wakes the loop, which then asks the
   timer again.

   remote_run: REMOTE_THREADS threads each schedule REMOTE_PER_THREAD one-shot timeouts
   with hwtimer_schedule, a few ms apart, each due 1 to 40 ms later, while the loop sleeps
   with nothing else pending, or with a sentinel timeout pending an hour away (the loop's
   old wake-up). Checked: every timeout runs exactly once, none before its deadline, late
   by less than a tick plus REMOTE_TYPICAL_SLACK in the median and a tick plus
   REMOTE_WORST_SLACK at worst (so never at the old wake-up); the sentinel never runs; the
   recipe's wake_fn was called (at most once per schedule).
   Include after harness.h, harness_threads.h and example_util.h. */
#ifndef HWTIMER_EXAMPLE_REMOTE_H
#define HWTIMER_EXAMPLE_REMOTE_H

#define REMOTE_THREADS 4
#define REMOTE_PER_THREAD 25
#define REMOTE_COUNT (REMOTE_THREADS * REMOTE_PER_THREAD)
#define REMOTE_TYPICAL_SLACK HWTIMER_MS(5)
#define REMOTE_WORST_SLACK HWTIMER_MS(100)

typedef struct remote_timeout {
    hwtimer_timeout node;
    unsigned runs;   /* atomic */
    uint64_t ran_at; /* atomic: the real clock when its callback ran */
} remote_timeout;

typedef struct remote_test {
    hwtimer *timer;
    remote_timeout items[REMOTE_COUNT];
    unsigned ran; /* atomic */
    struct remote_producer {
        struct remote_test *test;
        unsigned index;
        test_thread thread;
    } producers[REMOTE_THREADS];
} remote_test;

static void remote__ran(hwtimer_timeout *to, void *arg) {
    remote_timeout *r = HWTIMER_CONTAINER_OF(to, remote_timeout, node);
    ATOMIC_SET(&r->ran_at, now_ns());
    ATOMIC_ADD(&r->runs, 1u);
    ATOMIC_ADD(&((remote_test *)arg)->ran, 1u);
}

static void remote__sentinel_ran(hwtimer_timeout *to, void *arg) {
    (void)to;
    ATOMIC_ADD((unsigned *)arg, 1u);
}

/* One producer thread: a schedule every 2 to 12 ms, each due 1 to 40 ms later. */
static void remote__produce(void *arg) {
    struct remote_producer *p = (struct remote_producer *)arg;
    unsigned i;
    for (i = 0; i < REMOTE_PER_THREAD; i++) {
        unsigned n = p->index * REMOTE_PER_THREAD + i;
        sleep_ns(HWTIMER_MS(2 + (n * 7) % 11));
        CHECK_EQ(hwtimer_schedule(p->test->timer, &p->test->items[n].node,
                                  HWTIMER_MS(1 + (n * 37) % 40), remote__ran, p->test),
                 HWTIMER_OK);
    }
}

static void remote__check(const char *recipe, const char *phase, remote_test *test) {
    uint64_t late[REMOTE_COUNT];
    size_t count = 0, i;
    for (i = 0; i < REMOTE_COUNT; i++) {
        const remote_timeout *r = &test->items[i];
        uint64_t ran_at = ATOMIC_GET(&r->ran_at), deadline = hwtimer_timeout_deadline(&r->node);
        CHECK_EQ(ATOMIC_GET(&r->runs), 1);
        CHECK(ran_at >= deadline);
        if (ran_at >= deadline) late[count++] = ran_at - deadline;
    }
    check_lateness(recipe, phase, late, count, HWTIMER_MS(1) + REMOTE_TYPICAL_SLACK,
                   HWTIMER_MS(1) + REMOTE_WORST_SLACK);
}

/* The test; the loop already runs timer (1 ms tick) and calls wake_fn through it.
   *wakes counts the recipe's wake_fn calls. */
static void remote_run(const char *recipe, hwtimer *timer, int with_sentinel,
                       const unsigned *wakes) {
    remote_test *test = (remote_test *)calloc_or_die(1, sizeof *test);
    hwtimer_timeout sentinel = HWTIMER_TIMEOUT_INIT;
    unsigned sentinel_runs = 0, wakes_before, woken, i;
    test->timer = timer;
    if (with_sentinel)
        hwtimer_schedule(timer, &sentinel, HWTIMER_SEC(3600), remote__sentinel_ran,
                         &sentinel_runs);
    sleep_ns(HWTIMER_MS(20)); /* the loop goes to sleep: forever, or for an hour */
    wakes_before = ATOMIC_GET(wakes);
    for (i = 0; i < REMOTE_THREADS; i++) {
        test->producers[i].test = test;
        test->producers[i].index = i;
        test_thread_start(&test->producers[i].thread, remote__produce, &test->producers[i]);
    }
    for (i = 0; i < REMOTE_THREADS; i++) test_thread_join(&test->producers[i].thread);
    CHECK(wait_for_count(&test->ran, REMOTE_COUNT, HWTIMER_SEC(2)));
    woken = ATOMIC_GET(wakes) - wakes_before;
    printf("%s: %s: wake_fn called %u times for %d schedules\n", recipe,
           with_sentinel ? "sentinel an hour away" : "nothing else pending", woken,
           REMOTE_COUNT);
    CHECK(woken > 0 && woken <= REMOTE_COUNT);
    remote__check(recipe, "timeouts scheduled from other threads", test);
    if (with_sentinel) CHECK_EQ(hwtimer_cancel(timer, &sentinel), 1);
    CHECK_EQ(sentinel_runs, 0);
    free(test);
}

#endif
