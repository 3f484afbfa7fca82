/* test_wake_threads.c - cfg.wake_fn with threads: called on the thread that schedules, with
   no lock of the timer held; a real loop thread that sleeps on a condition variable until
   hwtimer_next_expiry is woken by a scheduling on another thread and runs the timeout on
   time; not called while another thread's pass is under way; never in worker mode. test_wake.c has the rules on a fake clock. */
#include "harness.h"
#include "fixture.h"
#include "probe.h"
#include "harness_threads.h"

/* How late a woken loop may run a timeout. Had it not been woken it would run it 10 s late
   or never; woken, within a tick plus the time the machine takes to run the loop's thread,
   which on two cores busy with other tests under a sanitizer has passed 30 ms. The bound
   sits far from both. */
#define LATE_SLACK (500 * MS)

/* Memory for one object of the backend's (mutex, condition variable, thread record). */
static void *backend_object(size_t size) {
    return calloc_or_die(1, size);
}

/* ---- wake_fn runs on the scheduling thread, no lock held -------------------------------- */

typedef struct cross {
    hwtimer *t;
    void *main_thread; /* the backend's record of the test's main thread */
    probe *p;
    unsigned wakes, on_main, done; /* atomic */
    size_t pending_seen;
    uint64_t expiry_seen;
} cross;

static void cross_wake(void *ctx) {
    cross *c = (cross *)ctx;
    ATOMIC_ADD(&c->wakes, 1u);
    ATOMIC_ADD(&c->on_main, (unsigned)(test_threads()->thread_is_self(c->main_thread) != 0));
    c->pending_seen = hwtimer_pending(c->t);     /* would hang with the timer's lock held */
    c->expiry_seen = hwtimer_next_expiry(c->t);
}

static void cross_schedule_earlier(void *arg) {
    cross *c = (cross *)arg;
    CHECK_EQ(probe_schedule(c->p, 7 * MS + 1), HWTIMER_OK);
    ATOMIC_SET(&c->done, 1u);
}

static void test_called_on_scheduling_thread(void) {
    fixture f;
    hwtimer_config cfg;
    cross c;
    probe p[2];
    test_thread th;
    memset(&c, 0, sizeof c);
    c.main_thread = backend_object(test_threads()->thread_size);
    test_threads()->thread_self(c.main_thread);
    fixture_config(&f, &cfg, 0, MS, 64);
    cfg.wake_fn = cross_wake;
    cfg.wake_ctx = &c;
    fixture_create(&f, &cfg);
    c.t = f.t;
    probes_init(p, 2, &f);
    c.p = &p[1];
    CHECK_EQ(probe_schedule(&p[0], 50 * MS), HWTIMER_OK);
    CHECK_EQ(hwtimer_next_expiry(f.t), 50 * MS);
    test_thread_start(&th, cross_schedule_earlier, &c);
    if (!wait_for_count(&c.done, 1, 10 * SEC)) {
        fprintf(stderr, "FAILED: the scheduling thread hangs: wake_fn ran with a lock held\n");
        exit(1); /* the thread cannot be joined */
    }
    test_thread_join(&th);
    CHECK_EQ(ATOMIC_GET(&c.wakes), 1);
    CHECK_EQ(ATOMIC_GET(&c.on_main), 0);
    CHECK_EQ(c.pending_seen, 2);
    CHECK_EQ(c.expiry_seen, 8 * MS);
    fixture_close(&f);
    free(c.main_thread);
}

/* ---- a loop thread woken by another thread's scheduling -------------------------------- */

/* An event loop: sleeps on a condition variable until the timer's next expiry (or until
   woken), then polls. */
typedef struct loop {
    hwtimer *t;
    void *mutex, *cond;
    int woken;     /* under mutex */
    int quit;      /* under mutex */
    unsigned wakes; /* atomic: wake_fn calls */
    int asleep;    /* under mutex: it waits, having asked for the next expiry */
    test_thread thread;
} loop;

static void loop_wake(void *ctx) {
    loop *l = (loop *)ctx;
    const hwtimer_threads *th = test_threads();
    ATOMIC_ADD(&l->wakes, 1u);
    th->mutex_lock(l->mutex);
    l->woken = 1;
    th->cond_broadcast(l->cond);
    th->mutex_unlock(l->mutex);
}

static void loop_main(void *arg) {
    loop *l = (loop *)arg;
    const hwtimer_threads *th = test_threads();
    th->mutex_lock(l->mutex);
    while (!l->quit) {
        uint64_t next = hwtimer_next_expiry(l->t), now = hwtimer_now(l->t);
        if (!l->woken && next > now) {
            l->asleep = 1;
            th->cond_wait(l->cond, l->mutex, next == UINT64_MAX ? UINT64_MAX : next - now);
            l->asleep = 0;
        }
        l->woken = 0;
        th->mutex_unlock(l->mutex);
        hwtimer_poll(l->t);
        th->mutex_lock(l->mutex);
    }
    th->mutex_unlock(l->mutex);
}

static void loop_start(loop *l) {
    const hwtimer_threads *th = test_threads();
    hwtimer_config cfg;
    memset(l, 0, sizeof *l);
    l->mutex = backend_object(th->mutex_size);
    l->cond = backend_object(th->cond_size);
    if (th->mutex_init(l->mutex) != 0 || th->cond_init(l->cond) != 0) {
        fprintf(stderr, "fatal: cannot make a mutex or condition variable\n");
        exit(1);
    }
    real_config(&cfg, 0, MS, 64);
    cfg.wake_fn = loop_wake;
    cfg.wake_ctx = l;
    l->t = create_or_die(&cfg);
    test_thread_start(&l->thread, loop_main, l);
}

static void loop_stop(loop *l) {
    const hwtimer_threads *th = test_threads();
    th->mutex_lock(l->mutex);
    l->quit = 1;
    th->cond_broadcast(l->cond);
    th->mutex_unlock(l->mutex);
    test_thread_join(&l->thread);
    CHECK_EQ(hwtimer_check(l->t), 0);
    hwtimer_destroy(l->t);
    th->cond_destroy(l->cond);
    th->mutex_destroy(l->mutex);
    free(l->cond);
    free(l->mutex);
}

/* A timeout that notes when it ran, on the timer's clock. */
typedef struct stamped {
    hwtimer_timeout to;
    hwtimer *t;
    unsigned runs;  /* atomic */
    uint64_t ran_at; /* atomic */
} stamped;

static void stamp(hwtimer_timeout *to, void *arg) {
    stamped *s = (stamped *)arg;
    (void)to;
    ATOMIC_SET(&s->ran_at, hwtimer_now(s->t));
    ATOMIC_ADD(&s->runs, 1u);
}

/* Waits until the loop sleeps on the answer of its last hwtimer_next_expiry, with no wake
   since (only then is a wake_fn owed to it); 0 if it does not within 5 s. */
static int wait_until_asleep(loop *l) {
    const hwtimer_threads *th = test_threads();
    uint64_t give_up = now_ns() + 5 * SEC;
    for (;;) {
        int asleep;
        th->mutex_lock(l->mutex);
        asleep = l->asleep && !l->woken;
        th->mutex_unlock(l->mutex);
        if (asleep) return 1;
        if (now_ns() > give_up) return 0;
        sleep_ns(MS / 10);
    }
}

/* Schedules s 20 ms from now while the loop sleeps, and checks the loop ran it within a tick
   and LATE_SLACK of its deadline (it slept until `far` or for ever, had it not been woken). */
static void check_woken_on_time(loop *l, stamped *s, const char *asleep_until) {
    uint64_t deadline, late;
    unsigned wakes_before;
    CHECK(wait_until_asleep(l));
    wakes_before = ATOMIC_GET(&l->wakes);
    s->t = l->t;
    deadline = hwtimer_now(l->t) + 20 * MS;
    CHECK_EQ(hwtimer_schedule_at(l->t, &s->to, deadline, stamp, s), HWTIMER_OK);
    CHECK_EQ(ATOMIC_GET(&l->wakes), wakes_before + 1);
    CHECK(wait_for_count(&s->runs, 1, 5 * SEC));
    late = ATOMIC_GET(&s->ran_at) - deadline;
    printf("loop asleep until %s, woken: ran %.3f ms after its deadline (bound %.3f ms)\n",
           asleep_until, (double)late / (double)MS, (double)(MS + LATE_SLACK) / (double)MS);
    CHECK(ATOMIC_GET(&s->ran_at) >= deadline);
    CHECK(late <= MS + LATE_SLACK);
}

static void test_loop_thread_woken(void) {
    loop l;
    stamped first, second, far;
    memset(&first, 0, sizeof first);
    memset(&second, 0, sizeof second);
    memset(&far, 0, sizeof far);
    loop_start(&l);
    check_woken_on_time(&l, &first, "nothing was pending");
    CHECK_EQ(hwtimer_schedule(l.t, &far.to, 10 * SEC, stamp, &far), HWTIMER_OK);
    check_woken_on_time(&l, &second, "a timeout 10 s away");
    CHECK_EQ(hwtimer_cancel(l.t, &far.to), 1);
    loop_stop(&l);
}

/* ---- not while another thread's pass is under way ------------------------------------- */

/* A callback that holds its pass open until released. */
typedef struct gate {
    hwtimer_timeout to;
    unsigned entered, release; /* atomic */
} gate;

static void gate_fn(hwtimer_timeout *to, void *arg) {
    gate *g = (gate *)arg;
    (void)to;
    ATOMIC_SET(&g->entered, 1u);
    while (!ATOMIC_GET(&g->release)) sleep_ns(MS);
}

static void advance_to_clock(void *arg) {
    fixture *f = (fixture *)arg;
    (void)hwtimer_advance(f->t, f->clock);
}

static void count_wake(void *ctx) {
    ATOMIC_ADD((unsigned *)ctx, 1u);
}

/* While a pass runs on the loop's thread, a scheduling on another thread with a boundary
   earlier than the answer does not call wake_fn: the loop asks again when advance returns. */
static void test_not_while_pass_under_way(void) {
    fixture f;
    hwtimer_config cfg;
    unsigned calls = 0;
    gate g;
    probe p;
    test_thread loop_thread;
    memset(&g, 0, sizeof g);
    fixture_config(&f, &cfg, 0, MS, 64);
    cfg.wake_fn = count_wake;
    cfg.wake_ctx = &calls;
    fixture_create(&f, &cfg);
    probe_init(&p, NULL, 0);
    CHECK_EQ(hwtimer_schedule_at(f.t, &g.to, 5 * MS, gate_fn, &g), HWTIMER_OK);
    CHECK_EQ(hwtimer_next_expiry(f.t), 5 * MS);
    f.clock = 5 * MS;
    test_thread_start(&loop_thread, advance_to_clock, &f);
    CHECK(wait_for_count(&g.entered, 1, 10 * SEC));
    CHECK_EQ(hwtimer_schedule_at(f.t, &p.to, MS, probe_fn, &p), HWTIMER_OK); /* earlier */
    CHECK_EQ(ATOMIC_GET(&calls), 0);
    ATOMIC_SET(&g.release, 1u);
    test_thread_join(&loop_thread);
    CHECK_EQ(ATOMIC_GET(&calls), 0);
    CHECK_EQ(advance_to(&f, f.clock), 1); /* the next pass runs it */
    CHECK_EQ(p.runs, 1);
    fixture_close(&f);
}

/* ---- never in worker mode ---------------------------------------------------------------- */

/* The worker is woken inside the timer: wake_fn is not called, whatever the answers and
   schedulings. */
static void test_never_in_worker_mode(void) {
    hwtimer_config cfg;
    hwtimer *t;
    unsigned calls = 0;
    probe p[3];
    real_config(&cfg, 1, MS, 64);
    cfg.wake_fn = count_wake;
    cfg.wake_ctx = &calls;
    t = create_or_die(&cfg);
    probes_init(p, 3, NULL);
    CHECK_EQ(hwtimer_next_expiry(t), UINT64_MAX);
    CHECK_EQ(hwtimer_schedule(t, &p[0].to, 40 * MS, probe_fn, &p[0]), HWTIMER_OK);
    CHECK_EQ(hwtimer_poll_timeout_ms(t) > 0, 1);
    CHECK_EQ(hwtimer_schedule(t, &p[1].to, 20 * MS, probe_fn, &p[1]), HWTIMER_OK);
    (void)hwtimer_next_expiry(t);
    CHECK_EQ(hwtimer_schedule_at(t, &p[2].to, hwtimer_now(t) + 5 * MS, probe_fn, &p[2]),
             HWTIMER_OK);
    CHECK(wait_for_count(&p[0].runs, 1, 5 * SEC));
    CHECK_EQ(probe_runs(p, 3), 3);
    CHECK_EQ(ATOMIC_GET(&calls), 0);
    hwtimer_destroy(t);
}

int main(void) {
    REQUIRE_THREADS("test_wake_threads");
    RUN_TEST(test_called_on_scheduling_thread);
    RUN_TEST(test_loop_thread_woken);
    RUN_TEST(test_not_while_pass_under_way);
    RUN_TEST(test_never_in_worker_mode);
    return test_finish();
}
