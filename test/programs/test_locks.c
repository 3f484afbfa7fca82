/* test_locks.c - every public function that reads or changes a timer with threads takes its
   locks, and gives back each lock it took, once.

   The timers here run on a backend that wraps this mode's and keeps, for every mutex a
   timer made, whether it is held. It counts the misuses: a lock of a mutex already held,
   an unlock or a wait on one that is not, a destroy of one still held (a misuse is counted
   and not passed on, so that the test fails rather than hangs), and it counts the locks.
   Every entry point is called on an ordinary timer and on a timer of 3 shards, caller-driven
   on a fake clock and on this thread alone (so a mutex held when it is locked again is held
   by this thread), from the outside, from callbacks and from a hwtimer_foreach visitor;
   then no misuse may have been counted, each call from the outside must have locked, and
   each call from a visitor must not have (foreach holds the locks: it would deadlock).
   Then, on a timer of shards, the wheel (the lock) a thread's arming takes: its own; a
   worker-mode timer, whose worker locks too (what a thread holds is its own to the
   backend); and a cancel that finds the node armed on another timer once it holds the
   lock (a hook run just before a lock does what another thread could do there). */
#include "harness.h"
#include "harness_threads.h"
#include "fixture.h"
#include "probe.h"

/* ---- a backend that checks the locking ---------------------------------------------------- */

enum { GUARDED_MAX = 16 };

/* The registry of mutexes changes only while one thread runs (create, destroy); the counts
   are atomic, and what a thread holds is its own (thread-local): a worker may lock too. */
static struct {
    const hwtimer_threads *real;
    void *mutex[GUARDED_MAX]; /* the mutexes made and not destroyed */
    unsigned mutexes;
    unsigned locks, misuses;  /* atomic */
    const void *last_locked;  /* atomic */
} guard;

static TEST_THREAD_LOCAL unsigned char held_here[GUARDED_MAX]; /* by this thread */

static hwtimer_threads guarded_threads;

static void misuse(void) { ATOMIC_ADD(&guard.misuses, 1u); }

/* The mutex's index in the guard's table; an unknown mutex is a misuse. */
static int guarded(const void *m) {
    unsigned i;
    for (i = 0; i < guard.mutexes; i++)
        if (guard.mutex[i] == m) return (int)i;
    misuse();
    return -1;
}

static int guarded_mutex_init(void *m) {
    int err;
    if (guard.mutexes == GUARDED_MAX) return -1;
    err = guard.real->mutex_init(m);
    if (err) return err;
    held_here[guard.mutexes] = 0;
    guard.mutex[guard.mutexes++] = m;
    return 0;
}

static void guarded_mutex_destroy(void *m) {
    int i = guarded(m);
    if (i < 0) return;
    if (held_here[i]) misuse();
    guard.mutex[i] = NULL;
    guard.real->mutex_destroy(m);
}

/* A hook run once just before the next lock (then cleared): what another thread would do
   between an entry point's choice of a wheel and its lock of it. Atomic: a worker's locks
   read it too. */
static void (*before_next_lock)(void);

static void guarded_mutex_lock(void *m) {
    int i = guarded(m);
    void (*hook)(void) = ATOMIC_GET(&before_next_lock);
    if (i < 0) return;
    if (held_here[i]) { /* a second lock would never return */
        misuse();
        return;
    }
    if (hook && ATOMIC_CAS(&before_next_lock, &hook, (void (*)(void))0)) {
        hook(); /* (only the thread that cleared it runs it) */
    }
    guard.real->mutex_lock(m);
    held_here[i] = 1;
    ATOMIC_ADD(&guard.locks, 1u);
    ATOMIC_SET(&guard.last_locked, (const void *)m);
}

/* Marks a mutex this thread holds released and returns its index; one it does not hold is
   a misuse: -1. */
static int guarded_release(const void *m) {
    int i = guarded(m);
    if (i < 0) return -1;
    if (!held_here[i]) {
        misuse();
        return -1;
    }
    held_here[i] = 0;
    return i;
}

static void guarded_mutex_unlock(void *m) {
    if (guarded_release(m) >= 0) guard.real->mutex_unlock(m);
}

static void guarded_cond_wait(void *cond, void *m, uint64_t timeout_ns) {
    int i = guarded_release(m);
    if (i < 0) return;
    guard.real->cond_wait(cond, m, timeout_ns);
    held_here[i] = 1;
}

/* The checking backend's table, the guard reset. */
static void guard_reset(void) {
    memset(&guard, 0, sizeof guard);
    guard.real = test_wrap_threads(&guarded_threads);
    guarded_threads.mutex_init = guarded_mutex_init;
    guarded_threads.mutex_destroy = guarded_mutex_destroy;
    guarded_threads.mutex_lock = guarded_mutex_lock;
    guarded_threads.mutex_unlock = guarded_mutex_unlock;
    guarded_threads.cond_wait = guarded_cond_wait;
}

/* A caller-driven timer on f's fake clock with the checking backend and `shards` shards. */
static void open_guarded(fixture *f, unsigned shards) {
    hwtimer_config cfg;
    guard_reset();
    fixture_config(f, &cfg, 0, MS, 64);
    cfg.threads = &guarded_threads;
    cfg.shards = shards;
    fixture_create(f, &cfg);
}

/* No mutex held by this thread, none misused. */
static int guard_clean(void) {
    unsigned i;
    int held = 0;
    for (i = 0; i < guard.mutexes; i++) held += guard.mutex[i] != NULL && held_here[i];
    return held == 0 && ATOMIC_GET(&guard.misuses) == 0;
}

/* The locks a call takes: LOCKS_IN(n, call) runs the call and sets n. */
#define LOCKS_IN(n, call)                                                         \
    do {                                                                          \
        unsigned locks__before = ATOMIC_GET(&guard.locks);                        \
        call;                                                                     \
        (n) = ATOMIC_GET(&guard.locks) - locks__before;                           \
    } while (0)

/* ---- the entry points ----------------------------------------------------------------------- */

static unsigned visitor_locks, visits;

/* A foreach visitor asks about the node: under foreach's locks, so without locking. */
static void visit_and_ask(hwtimer_timeout *to, void *ctx) {
    probe *p = (probe *)ctx;
    unsigned n;
    LOCKS_IN(n, CHECK_EQ(hwtimer_is_pending(p->f->t, to), 1));
    visitor_locks += n;
    LOCKS_IN(n, CHECK(hwtimer_timeout_due_in(p->f->t, to) != UINT64_MAX));
    visitor_locks += n;
    visits++;
}

/* A callback that works on the timer: each call locks as from the outside. */
static unsigned callback_calls_unlocked;

static void act_work(probe *p) {
    unsigned n;
    LOCKS_IN(n, CHECK_EQ(probe_schedule(p->peer[0], 5 * MS), HWTIMER_OK));
    callback_calls_unlocked += n == 0;
    LOCKS_IN(n, CHECK_EQ(hwtimer_reschedule(p->f->t, &p->peer[0]->to, 6 * MS), HWTIMER_OK));
    callback_calls_unlocked += n == 0;
    LOCKS_IN(n, CHECK_EQ(hwtimer_is_pending(p->f->t, &p->peer[0]->to), 1));
    callback_calls_unlocked += n == 0;
    LOCKS_IN(n, CHECK_EQ(probe_cancel(p->peer[0]), 1));
    callback_calls_unlocked += n == 0;
}

static void check_entry_points(unsigned shards) {
    fixture f;
    probe p[4];
    hwtimer_stats stats;
    handed_back back;
    unsigned n;
    open_guarded(&f, shards);
    probes_init(p, 4, &f);
    CHECK_EQ(guard.mutexes, shards ? 1 + shards : 1); /* the timer's and each shard's */
    /* arming, moving and cancelling, from the outside */
    LOCKS_IN(n, CHECK_EQ(probe_schedule(&p[0], 10 * MS), HWTIMER_OK));
    CHECK(n > 0);
    LOCKS_IN(n, CHECK_EQ(probe_schedule_at(&p[1], 200 * MS), HWTIMER_OK));
    CHECK(n > 0);
    LOCKS_IN(n, CHECK_EQ(probe_schedule_periodic(&p[2], 3 * MS, 7 * MS), HWTIMER_OK));
    CHECK(n > 0);
    LOCKS_IN(n, CHECK_EQ(hwtimer_reschedule(f.t, &p[1].to, 300 * MS), HWTIMER_OK)); /* later */
    CHECK(n > 0);
    LOCKS_IN(n, CHECK_EQ(hwtimer_reschedule_at(f.t, &p[1].to, 20 * MS), HWTIMER_OK)); /* earlier */
    CHECK(n > 0);
    LOCKS_IN(n, CHECK_EQ(probe_cancel(&p[1]), 1));
    CHECK(n > 0);
    LOCKS_IN(n, CHECK_EQ(probe_cancel(&p[1]), 0)); /* not pending */
    CHECK(n > 0);
    LOCKS_IN(n, CHECK_EQ(hwtimer_reschedule(f.t, &p[1].to, 30 * MS), HWTIMER_OK)); /* again */
    CHECK(n > 0);
    LOCKS_IN(n, CHECK_EQ(hwtimer_schedule_ticks(f.t, &p[3].to, 50, probe_fn, &p[3]), HWTIMER_OK));
    CHECK(n > 0);
    LOCKS_IN(n, CHECK_EQ(probe_cancel(&p[3]), 1));
    CHECK(n > 0);
    CHECK(guard_clean());
    /* the questions, from the outside */
    LOCKS_IN(n, CHECK_EQ(hwtimer_is_pending(f.t, &p[0].to), 1));
    CHECK(n > 0);
    LOCKS_IN(n, CHECK_EQ(hwtimer_timeout_due_in(f.t, &p[0].to), 10 * MS));
    CHECK(n > 0);
    LOCKS_IN(n, CHECK_EQ(hwtimer_pending(f.t), 3));
    CHECK(n > 0);
    LOCKS_IN(n, CHECK_EQ(hwtimer_next_expiry(f.t), 3 * MS));
    CHECK(n > 0);
    LOCKS_IN(n, CHECK_EQ(hwtimer_poll_timeout_ms(f.t), 3));
    CHECK(n > 0);
    LOCKS_IN(n, hwtimer_stats_get(f.t, &stats));
    CHECK(n > 0);
    CHECK_EQ(stats.pending, 3);
    LOCKS_IN(n, CHECK_EQ(hwtimer_check(f.t), 0));
    CHECK(n > 0);
    CHECK(guard_clean());
    /* a foreach visitor asks without locking; after the walk, asking locks again */
    visitor_locks = visits = 0;
    LOCKS_IN(n, CHECK_EQ(hwtimer_foreach(f.t, visit_and_ask, &p[0]), 3));
    CHECK(n > 0);
    CHECK_EQ(visits, 3);
    CHECK_EQ(visitor_locks, 0);
    LOCKS_IN(n, CHECK_EQ(hwtimer_is_pending(f.t, &p[0].to), 1));
    CHECK(n > 0);
    LOCKS_IN(n, CHECK(hwtimer_timeout_due_in(f.t, &p[0].to) != UINT64_MAX));
    CHECK(n > 0);
    CHECK(guard_clean());
    /* passes whose callbacks work on the timer, each call locking */
    p[2].action = act_work;
    p[2].peer[0] = &p[3];
    callback_calls_unlocked = 0;
    LOCKS_IN(n, CHECK_EQ(advance_to(&f, 3 * MS), 1));
    CHECK(n > 0);
    f.clock = 10 * MS;
    LOCKS_IN(n, CHECK_EQ(hwtimer_poll(f.t), 2)); /* p[0], and p[2] again */
    CHECK(n > 0);
    CHECK_EQ(callback_calls_unlocked, 0);
    CHECK_EQ(p[3].runs, 0);
    CHECK(guard_clean());
    /* stop hands the rest back, then the timer refuses */
    memset(&back, 0, sizeof back);
    LOCKS_IN(n, CHECK_EQ(hwtimer_stop(f.t, note_handed_back, &back), 2)); /* p[1], p[2] */
    CHECK(n > 0);
    CHECK_EQ(back.calls, 2);
    LOCKS_IN(n, CHECK_EQ(probe_schedule(&p[0], MS), HWTIMER_ESTOPPED));
    CHECK(n > 0);
    CHECK(guard_clean());
    fixture_close(&f);
    CHECK(guard_clean()); /* destroy: nothing held, every mutex destroyed unheld */
}

static void test_entry_points_lock(void) { check_entry_points(0); }

static void test_entry_points_lock_shards(void) { check_entry_points(3); }

/* ---- a thread's own wheel ------------------------------------------------------------------- */

static void arm_on_new_thread(void *arg) {
    CHECK_EQ(probe_schedule((probe *)arg, 10 * MS), HWTIMER_OK);
}

/* Arms p on a thread of its own, one that never armed a node before; returns the mutex the
   arming took last (the guarded timer's) once the thread is gone. */
static const void *arm_on_a_fresh_thread(probe *p) {
    test_thread th;
    ATOMIC_SET(&guard.last_locked, (const void *)NULL);
    test_thread_start(&th, arm_on_new_thread, p);
    test_thread_join(&th);
    return ATOMIC_GET(&guard.last_locked);
}

/* On a timer of 2 shards, a thread arms a node the timer does not hold in its own wheel
   (threads are numbered as they first arm on a timer of shards, thread k uses wheel
   k mod 2), under that wheel's lock, and the node stays there for every later call from
   any thread. Threads that armed only on a timer of one wheel are not numbered: C, then A
   on such a timer, then B take numbers k and k + 1, so B's wheel is not C's. */
static void test_own_wheel_per_thread(void) {
    fixture f, plain;
    hwtimer_config cfg;
    probe p[2], q;
    const void *c_wheel, *b_wheel;
    open_guarded(&f, 2);
    probes_init(p, 2, &f);
    fixture_config(&plain, &cfg, 0, MS, 64);
    cfg.shards = 0;
    fixture_create(&plain, &cfg);
    probes_init(&q, 1, &plain);
    c_wheel = arm_on_a_fresh_thread(&p[0]);
    CHECK(arm_on_a_fresh_thread(&q) == NULL); /* A: another timer, not guarded */
    b_wheel = arm_on_a_fresh_thread(&p[1]);
    CHECK(c_wheel != NULL && b_wheel != NULL);
    CHECK(c_wheel != b_wheel);
    CHECK_EQ(hwtimer_reschedule(f.t, &p[0].to, 20 * MS), HWTIMER_OK);
    CHECK(ATOMIC_GET(&guard.last_locked) == c_wheel);
    CHECK_EQ(hwtimer_reschedule(f.t, &p[1].to, 20 * MS), HWTIMER_OK);
    CHECK(ATOMIC_GET(&guard.last_locked) == b_wheel);
    CHECK(guard_clean());
    fixture_close(&plain);
    fixture_close(&f);
}

/* ---- a worker, and a node armed elsewhere meanwhile ------------------------------------------ */

/* A worker-mode timer takes and gives back its locks on the worker thread too: a node that
   runs, a periodic one that runs twice and is cancelled from outside, stop (which joins the
   worker) and destroy. */
static void check_worker_locks(unsigned shards) {
    fixture f;
    hwtimer_config cfg;
    probe p[2];
    guard_reset();
    fixture_config(&f, &cfg, 0, MS, 64);
    cfg.clock_fn = NULL; /* the worker sleeps on the real clock */
    cfg.threads = &guarded_threads;
    cfg.shards = shards;
    cfg.worker = 1;
    fixture_create(&f, &cfg);
    probes_init(p, 2, NULL); /* the real clock: no fixture */
    CHECK_EQ(hwtimer_schedule(f.t, &p[0].to, 2 * MS, probe_fn, &p[0]), HWTIMER_OK);
    CHECK_EQ(hwtimer_schedule_periodic(f.t, &p[1].to, MS, MS, probe_fn, &p[1]), HWTIMER_OK);
    CHECK(wait_for_count(&p[0].runs, 1, 5 * SEC));
    CHECK(wait_for_count(&p[1].runs, 2, 5 * SEC));
    CHECK_EQ(hwtimer_cancel(f.t, &p[1].to), 1);
    CHECK_EQ(hwtimer_stop(f.t, NULL, NULL), 0);
    CHECK(guard_clean());
    fixture_close(&f);
    CHECK(guard_clean());
}

static void test_worker_locks(void) {
    check_worker_locks(0);
    check_worker_locks(2);
}

/* What the hook does: the node cancelled on its timer and armed on another one, as a thread
   would between a cancel's choice of the node's wheel and its lock. */
static struct {
    hwtimer *t, *other;
    hwtimer_timeout *to;
    int cancelled, armed;
} moved;

static void move_to_other_timer(void) {
    moved.cancelled = hwtimer_cancel(moved.t, moved.to);
    moved.armed = hwtimer_schedule(moved.other, moved.to, SEC, probe_fn, NULL);
}

/* A cancel that finds, once it holds the wheel's lock, the node pending on another timer:
   EINVAL, the node left there, and the lock given back. */
static void test_cancel_finds_node_armed_elsewhere(void) {
    fixture f, other;
    probe p;
    open_guarded(&f, 0);
    fixture_open(&other, 0, MS, 64);
    probes_init(&p, 1, &f);
    CHECK_EQ(probe_schedule(&p, 10 * MS), HWTIMER_OK);
    moved.t = f.t;
    moved.other = other.t;
    moved.to = &p.to;
    ATOMIC_SET(&before_next_lock, move_to_other_timer);
    CHECK_EQ(hwtimer_cancel(f.t, &p.to), HWTIMER_EINVAL);
    CHECK(ATOMIC_GET(&before_next_lock) == NULL); /* the hook ran */
    CHECK_EQ(moved.cancelled, 1);
    CHECK_EQ(moved.armed, HWTIMER_OK);
    CHECK(guard_clean());
    CHECK_EQ(hwtimer_pending(f.t), 0);
    CHECK_EQ(hwtimer_cancel(other.t, &p.to), 1);
    fixture_close(&other);
    fixture_close(&f);
    CHECK(guard_clean());
}

int main(void) {
    REQUIRE_THREADS("test_locks");
    RUN_TEST(test_entry_points_lock);
    RUN_TEST(test_entry_points_lock_shards);
    RUN_TEST(test_own_wheel_per_thread);
    RUN_TEST(test_worker_locks);
    RUN_TEST(test_cancel_finds_node_armed_elsewhere);
    return test_finish();
}
