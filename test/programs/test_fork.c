/* test_fork.c - hwtimer_fork_child: after fork() the child calls it and the timer works
   there, nothing lost: caller-driven with threads, and in worker mode (a new worker in the
   child), also when the fork came while the parent's worker ran a periodic callback; the
   parent is unaffected. Without the call a worker timer does nothing in the child, which is
   why the call exists. POSIX only: elsewhere it prints that it skipped.

   Each child reports through its exit status (0: every check passed), which the parent
   reads with waitpid, so no child is left behind. A child leaves with _exit, so that it
   neither runs the parent's exit handlers nor flushes the parent's buffered output again. */
#include "harness.h"
#include "fixture.h"
#include "probe.h"
#include "harness_threads.h"

#if defined(_WIN32)

int main(void) {
    printf("skipped: test_fork needs fork(), which Windows does not have\n");
    return test_finish();
}

#else

#include "forking.h"

#if TEST_TSAN
/* ThreadSanitizer refuses a thread started in the child of a process that had threads
   ("starting new threads after multi-threaded fork is not supported"), which is exactly what
   hwtimer_fork_child does in worker mode. It calls that unsupported because the child may
   inherit locks held by the parent's other threads; its option die_after_fork=0 lets the
   child go on, and the child is checked like any other program (this test runs clean so). */
const char *__tsan_default_options(void);
const char *__tsan_default_options(void) {
    return "die_after_fork=0";
}
#endif

/* TEST_ASAN and TEST_WORKER_IN_CHILD (forking.h): the C11 mode under ASan starts no worker in
   a child. */

/* AddressSanitizer's allocator (GCC 12) takes locks of its own, also as a thread starts
   (its stack bounds: pthread_getattr_np, malloc, free), and does not take them around
   fork(): a fork while the parent's worker is starting can leave one held in the child,
   whose new worker then blocks for ever in its own start, before it runs anything (the
   child's timeouts never run, and its destroy waits for that worker for ever). So under
   ASan the tests let the parent's worker start, with a first timeout run, before they
   fork, and leave out the forks that come while it starts; every other build (TSan
   included) forks right after the first schedule too. */

/* How long a child or the parent may take to see its timeouts fire: generous, as the
   machine may be loaded. */
#define FIRE_LIMIT (5 * SEC)

static uint64_t time_left(uint64_t until) {
    uint64_t now = now_ns();
    return until > now ? until - now : 0;
}

/* What a child inherited of a one-shot timeout: read before hwtimer_fork_child, without the
   timer's lock (the parent's worker may have held it). It is pending while PENDING; the
   one whose callback the parent's worker had claimed is EXPIRED, and counts as run. */
typedef struct inherited {
    int pending;
    unsigned runs; /* its callback's count of runs */
} inherited;

static void note_inherited(inherited *in, const hwtimer_timeout *to, const unsigned *runs) {
    in->pending = hwtimer_timeout_state(to) == HWTIMER_PENDING;
    in->runs = ATOMIC_GET(runs);
}

/* The child waits (until give_up) for an inherited one-shot to run if it was pending... */
static void wait_inherited(const inherited *in, const unsigned *runs, uint64_t give_up) {
    if (in->pending) CHECK(wait_for_count(runs, in->runs + 1, time_left(give_up)));
}

/* ... and then checks that it ran exactly that once, or not at all. */
static void check_inherited(const inherited *in, const unsigned *runs) {
    CHECK_EQ(ATOMIC_GET(runs), in->runs + (unsigned)in->pending);
}

/* NULL is HWTIMER_EINVAL; a timer without threads has nothing to re-create. */
static void test_arguments(void) {
    fixture f;
    hwtimer_config cfg;
    CHECK_EQ(hwtimer_fork_child(NULL), HWTIMER_EINVAL);
    fixture_config(&f, &cfg, 0, MS, 8);
    cfg.threads = NULL;
    cfg.shards = 0; /* shards need threads */
    fixture_create(&f, &cfg);
    CHECK_EQ(hwtimer_fork_child(f.t), HWTIMER_OK);
    fixture_close(&f);
}

/* Caller-driven with threads (a fake clock): two pending timeouts, one near and one on a
   coarse level; the child calls hwtimer_fork_child and drives the timer: both run at their
   boundaries. So do the parent's. */
static void check_caller_driven_fires(fixture *f, probe *p) {
    step_and_check_exact(f, p, 2, tick_at(f, 1000));
    CHECK_EQ(hwtimer_pending(f->t), 0);
    CHECK_EQ(hwtimer_check(f->t), 0);
}

static void test_caller_driven(void) {
    fixture f;
    probe p[2];
    pid_t pid;
    open_with_probes(&f, p, 2, 0, 8);
    CHECK_EQ(probe_schedule(&p[0], 3 * MS + 1), HWTIMER_OK);
    CHECK_EQ(probe_schedule(&p[1], 900 * MS), HWTIMER_OK);
    pid = fork_or_die();
    if (pid == 0) {
        int before = test__checks_failed;
        CHECK_EQ(hwtimer_fork_child(f.t), HWTIMER_OK);
        check_caller_driven_fires(&f, p);
        fixture_close(&f);
        child_exit(before);
    }
    check_caller_driven_fires(&f, p);
    check_child(pid);
    fixture_close(&f);
}

/* Under ASan, runs a timeout on t's worker and waits for it: the worker has started (see
   TEST_ASAN). Static: the callback may still read it after the count. */
static probe started_probe;
static void let_worker_start(hwtimer *t) {
    if (!TEST_ASAN) return;
    probe_init(&started_probe, NULL, 0);
    CHECK_EQ(hwtimer_schedule(t, &started_probe.to, 0, probe_fn, &started_probe), HWTIMER_OK);
    CHECK(wait_for_count(&started_probe.runs, 1, FIRE_LIMIT));
}

/* A worker timer on the real clock with two timeouts, 50 and 100 ms away. */
static hwtimer *worker_with_two(probe *p) {
    hwtimer *t = worker_timer(MS, 64);
    let_worker_start(t);
    probes_init(p, 2, NULL);
    CHECK_EQ(hwtimer_schedule(t, &p[0].to, 50 * MS, probe_fn, &p[0]), HWTIMER_OK);
    CHECK_EQ(hwtimer_schedule(t, &p[1].to, 100 * MS, probe_fn, &p[1]), HWTIMER_OK);
    return t;
}

static void check_both_fire(hwtimer *t, probe *p) {
    CHECK(wait_for_count(&p[0].runs, 1, FIRE_LIMIT));
    CHECK(wait_for_count(&p[1].runs, 1, FIRE_LIMIT));
    CHECK_EQ(hwtimer_pending(t), 0);
}

/* The exit status of a child forked too late to check anything: both timeouts had run, or
   begun, in the parent (a loaded machine can hold the parent 50 ms and more between its
   schedule and its fork). The parent then tries again, up to WORKER_ATTEMPTS times. */
enum { CHILD_TOO_LATE = 3, WORKER_ATTEMPTS = 5 };

/* Worker mode: the child's new worker runs the timeouts pending at the fork, once each
   (the fork is meant to come before the first is due, but that is not up to the test);
   the parent's worker runs its own. */
static void test_worker(void) {
    int attempt, status = CHILD_TOO_LATE;
    for (attempt = 0; attempt < WORKER_ATTEMPTS && status == CHILD_TOO_LATE; attempt++) {
        probe p[2];
        hwtimer *t = worker_with_two(p);
        pid_t pid = fork_or_die();
        if (pid == 0) {
            int before = test__checks_failed, i;
            inherited in[2];
            uint64_t give_up = now_ns() + FIRE_LIMIT;
            for (i = 0; i < 2; i++) note_inherited(&in[i], &p[i].to, &p[i].runs);
            if (!in[0].pending && !in[1].pending) _exit(CHILD_TOO_LATE);
            CHECK_EQ(hwtimer_fork_child(t), HWTIMER_OK);
            for (i = 0; i < 2; i++) wait_inherited(&in[i], &p[i].runs, give_up);
            CHECK_EQ(hwtimer_pending(t), 0);
            for (i = 0; i < 2; i++) check_inherited(&in[i], &p[i].runs);
            CHECK_EQ(hwtimer_check(t), 0);
            hwtimer_destroy(t);
            child_exit(before);
        }
        check_both_fire(t, p);
        status = reap_child(pid);
        hwtimer_destroy(t);
    }
    CHECK_EQ(status, 0);
}

/* Worker mode without hwtimer_fork_child: the child has no worker thread, so nothing fires
   there that had not run in the parent before the fork (the child must not touch the timer
   at all: it only waits and leaves). */
static void test_worker_without_fork_child(void) {
    probe p[2];
    hwtimer *t = worker_with_two(p);
    pid_t pid = fork_or_die();
    if (pid == 0) {
        int before = test__checks_failed;
        size_t runs = probe_runs(p, 2);
        sleep_ns(200 * MS);
        CHECK_EQ(probe_runs(p, 2), runs);
        child_exit(before);
    }
    check_both_fire(t, p);
    check_child(pid);
    hwtimer_destroy(t);
}

/* A stopped worker-mode timer: in the child hwtimer_fork_child succeeds and starts no
   worker (nothing may run), the timer stays stopped, and destroy there joins nothing. */
static void test_stopped_worker(void) {
    probe p;
    hwtimer *t = worker_timer(MS, 64);
    pid_t pid;
    probes_init(&p, 1, NULL);
    CHECK_EQ(hwtimer_schedule(t, &p.to, HOUR, probe_fn, &p), HWTIMER_OK);
    CHECK_EQ(hwtimer_stop(t, NULL, NULL), 1);
    pid = fork_or_die();
    if (pid == 0) {
        int before = test__checks_failed;
        CHECK_EQ(hwtimer_fork_child(t), HWTIMER_OK);
        CHECK_EQ(hwtimer_schedule(t, &p.to, 0, probe_fn, &p), HWTIMER_ESTOPPED);
        CHECK_EQ(hwtimer_pending(t), 0);
        hwtimer_destroy(t);
        child_exit(before);
    }
    check_child(pid);
    CHECK_EQ(p.runs, 0);
    hwtimer_destroy(t);
}

/* A periodic callback that, on its first run, waits until the process it runs in has
   forked: the fork comes while the worker runs it. */
static unsigned in_callback, forked; /* atomic */

static void act_wait_for_fork(probe *p) {
    if (ATOMIC_GET(&p->runs) != 1) return;
    ATOMIC_SET(&in_callback, 1u);
    while (!ATOMIC_GET(&forked)) sleep_ns(MS);
}

/* The child treats the run the parent's worker was in as done and re-arms the periodic
   timeout for its next period: it fires again in the child; and in the parent. */
static void test_fork_during_periodic_callback(void) {
    probe p;
    hwtimer *t = worker_timer(MS, 64);
    pid_t pid;
    probe_init(&p, NULL, 0);
    p.action = act_wait_for_fork;
    ATOMIC_SET(&in_callback, 0u);
    ATOMIC_SET(&forked, 0u);
    CHECK_EQ(hwtimer_schedule_periodic(t, &p.to, 10 * MS, 30 * MS, probe_fn, &p), HWTIMER_OK);
    CHECK(wait_for_count(&in_callback, 1, FIRE_LIMIT));
    pid = fork_or_die();
    ATOMIC_SET(&forked, 1u); /* in both: the child's copy of the flag is its own */
    if (pid == 0) {
        int before = test__checks_failed;
        CHECK_EQ(hwtimer_fork_child(t), HWTIMER_OK);
        if (!wait_for_count(&p.runs, 3, FIRE_LIMIT)) {
            fprintf(stderr, "the periodic timeout did not run again in the child\n");
            CHECK(0);
            child_exit(before); /* the timer still thinks its callback runs: leave it */
        }
        CHECK_EQ(hwtimer_cancel(t, &p.to), 1);
        CHECK_EQ(hwtimer_check(t), 0);
        hwtimer_destroy(t);
        child_exit(before);
    }
    CHECK(wait_for_count(&p.runs, 3, FIRE_LIMIT));
    CHECK_EQ(hwtimer_cancel(t, &p.to), 1);
    check_child(pid);
    hwtimer_destroy(t);
}

/* ---- forks at varied moments of the worker's passes ----------------------------------
   The tests above fork at one moment each. Here the parent forks again and again while its
   worker runs passes, and every child checks what it inherited: hwtimer_check holds, each
   one-shot pending at the fork runs exactly once more and no other runs again, none runs
   before its deadline, the periodic timeout goes on, and none is left over.

   Where a fork leaves the worker: fork() takes a while (hundreds of microseconds, more on
   a loaded machine), and the worker goes on during it until it first writes to a page the
   fork has already made copy-on-write: the child sees the worker as it was then. So each
   round gives the worker a pass of about a millisecond: FORK_ONESHOTS one-shots due at
   once, most of whose callbacks return at once (the worker then holds the lock for most of
   the pass: claiming, unlinking, re-taking the lock), one in 64 spinning 50 us (it runs a
   callback). Three rounds in four fork once a random number of those callbacks has begun;
   the fourth anywhere in the next 2 ms (asleep, waking, in a pass). A periodic timeout
   every millisecond keeps the worker waking up, and every few rounds the fork comes right
   after the first arming on a fresh timer, whose worker has just been started (not under
   ASan: see TEST_ASAN). */

enum { FORK_ROUNDS = 40, FORK_ONESHOTS = 1024, FRESH_EVERY = 4 };

/* A timeout that counts its runs and those that came before its deadline (on the clock of
   its timer, which it reads in the callback). */
typedef struct stamp {
    hwtimer_timeout to;
    hwtimer *t;
    uint64_t spin;     /* its callback spins this long (ns) */
    unsigned runs;     /* atomic */
    unsigned early;    /* atomic */
    unsigned returned; /* atomic: callbacks that have returned */
    unsigned armed;    /* the parent's successful schedulings (the parent's thread only) */
} stamp;

static stamp shots[FORK_ONESHOTS], fresh_shots[FORK_ONESHOTS], periodic_stamp;
static inherited shots_inherited[FORK_ONESHOTS];
static unsigned callbacks_entered; /* atomic: one-shot callbacks begun since the round began */

/* Spins (busy, no sleep) for ns. */
static void spin_ns(uint64_t ns) {
    uint64_t until = now_ns() + ns;
    while (now_ns() < until) {
    }
}

static void stamp_fn(hwtimer_timeout *to, void *arg) {
    stamp *s = (stamp *)arg;
    if (hwtimer_now(s->t) < hwtimer_timeout_deadline(to)) ATOMIC_ADD(&s->early, 1u);
    ATOMIC_ADD(&s->runs, 1u);
    if (!hwtimer_timeout_period(to)) ATOMIC_ADD(&callbacks_entered, 1u);
    spin_ns(s->spin);
    ATOMIC_ADD(&s->returned, 1u); /* the last word about `to`: it may be re-armed now */
}

static void stamps_init(stamp *s, size_t n, hwtimer *t) {
    size_t i;
    for (i = 0; i < n; i++) {
        memset(&s[i], 0, sizeof s[i]);
        hwtimer_timeout_init(&s[i].to);
        s[i].t = t;
        s[i].spin = i % 64 == 0 ? 50 * US : 0;
    }
}

/* The child's part, for the one-shots `s` and `periodic` (or NULL). */
static void child_checks(hwtimer *t, stamp *s, stamp *periodic, int before) {
    unsigned periodic_runs = periodic ? ATOMIC_GET(&periodic->runs) : 0;
    size_t i, pending = 0;
    uint64_t give_up;
    for (i = 0; i < FORK_ONESHOTS; i++) {
        note_inherited(&shots_inherited[i], &s[i].to, &s[i].runs);
        pending += (size_t)shots_inherited[i].pending;
    }
    CHECK_EQ(hwtimer_fork_child(t), HWTIMER_OK);
    CHECK_EQ(hwtimer_check(t), 0);
    give_up = now_ns() + FIRE_LIMIT; /* one limit for all of them */
    for (i = 0; i < FORK_ONESHOTS; i++) wait_inherited(&shots_inherited[i], &s[i].runs, give_up);
    if (periodic) CHECK(wait_for_count(&periodic->runs, periodic_runs + 2, time_left(give_up)));
    sleep_ns(3 * MS); /* a second run would come by now */
    for (i = 0; i < FORK_ONESHOTS; i++) {
        check_inherited(&shots_inherited[i], &s[i].runs);
        CHECK_EQ(ATOMIC_GET(&s[i].early), 0);
    }
    if (periodic) {
        CHECK_EQ(ATOMIC_GET(&periodic->early), 0);
        CHECK_EQ(hwtimer_cancel(t, &periodic->to), 1);
    }
    CHECK_EQ(hwtimer_pending(t), 0);
    CHECK_EQ(hwtimer_check(t), 0);
    if (test__checks_failed != before) {
        fprintf(stderr, "the child inherited %zu pending one-shots%s\n", pending,
                periodic ? " and the periodic one" : "");
    }
}

/* One round: arms the one-shots that are idle, all due at once, waits, forks; the child
   checks, the parent reaps it. */
static void fork_round(hwtimer *t, stamp *s, stamp *periodic, uint64_t *rng) {
    pid_t pid;
    size_t i;
    ATOMIC_SET(&callbacks_entered, 0u);
    for (i = 0; i < FORK_ONESHOTS; i++) {
        /* A one-shot is idle once its callback begins, but that callback still reads the
           node: re-arming it before it returns would race with those reads. */
        if (ATOMIC_GET(&s[i].returned) != s[i].armed) continue;
        CHECK_EQ(hwtimer_schedule(t, &s[i].to, 0, stamp_fn, &s[i]), HWTIMER_OK);
        s[i].armed++;
    }
    if (!periodic) {
        /* a fresh timer: right away, its worker just started */
    } else if (test_rng_below(rng, 4)) {
        unsigned target = 1 + (unsigned)test_rng_below(rng, FORK_ONESHOTS);
        uint64_t give_up = now_ns() + 100 * MS;
        while (ATOMIC_GET(&callbacks_entered) < target && now_ns() < give_up) {
        }
    } else {
        spin_ns(test_rng_below(rng, 2 * MS));
    }
    pid = fork_or_die();
    if (pid == 0) {
        int before = test__checks_failed;
        child_checks(t, s, periodic, before);
        child_exit(before); /* the timer is left as it is: the child ends here */
    }
    check_child(pid);
}

/* Only the POSIX backend makes fork() wait while the worker holds a lock of a timer
   (pthread_atfork); with the C11 backend alone a fork may land inside a pass, which the
   contract leaves out (hwtimer_fork_child). */
#if defined(HWTIMER_NO_PTHREADS)
#define FORK_AT_ANY_MOMENT 0
#else
#define FORK_AT_ANY_MOMENT 1
#endif

static void test_fork_at_varied_moments(void) {
    uint64_t rng = 0x5eed;
    hwtimer *t = worker_timer(MS, 64);
    unsigned round;
    size_t i;
    stamps_init(shots, FORK_ONESHOTS, t);
    stamps_init(&periodic_stamp, 1, t);
    CHECK_EQ(hwtimer_schedule_periodic(t, &periodic_stamp.to, MS, MS, stamp_fn, &periodic_stamp),
             HWTIMER_OK);
    let_worker_start(t);
    for (round = 0; round < FORK_ROUNDS; round++) {
        if (!TEST_ASAN && round % FRESH_EVERY == 0) {
            hwtimer *u = worker_timer(MS, 64);
            stamps_init(fresh_shots, FORK_ONESHOTS, u);
            fork_round(u, fresh_shots, NULL, &rng);
            hwtimer_destroy(u);
        }
        fork_round(t, shots, &periodic_stamp, &rng);
    }
    CHECK_EQ(hwtimer_cancel(t, &periodic_stamp.to), 1);
    CHECK_EQ(ATOMIC_GET(&periodic_stamp.early), 0);
    hwtimer_destroy(t);
    for (i = 0; i < FORK_ONESHOTS; i++) CHECK_EQ(ATOMIC_GET(&shots[i].early), 0);
}

int main(void) {
    REQUIRE_THREADS("test_fork");
    RUN_TEST(test_arguments);
    RUN_TEST(test_caller_driven);
    RUN_TEST(test_worker_without_fork_child);
    RUN_TEST(test_stopped_worker);
    if (TEST_WORKER_IN_CHILD) {
        RUN_TEST(test_worker);
        RUN_TEST(test_fork_during_periodic_callback);
        if (FORK_AT_ANY_MOMENT) RUN_TEST(test_fork_at_varied_moments);
        else printf("skipped without the POSIX backend: test_fork_at_varied_moments\n");
    } else {
        printf("skipped under ASan in the C11 mode (see TEST_ASAN): test_worker, "
               "test_fork_during_periodic_callback, test_fork_at_varied_moments\n");
    }
    return test_finish();
}

#endif
