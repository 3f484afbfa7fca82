/* test_failures.c - failures where they can happen, with the real thread backends:

   - the C library refuses what a backend asks of it: a mutex, a condition attribute, a
     condition variable, a thread (POSIX threads: pthread_mutex_init, pthread_condattr_init,
     pthread_cond_init, pthread_create; C11: mtx_init, cnd_init, thrd_create). Each object
     hwtimer_create makes fails in turn (every shard's too): HWTIMER_ETHREAD, *out NULL,
     every byte given back, one sentence for log_fn; a worker that cannot start:
     hwtimer_start, schedule and reschedule say HWTIMER_ETHREAD and change nothing, and
     the timer works once threads start again;
   - the same in the child after fork(): hwtimer_fork_child cannot re-create the lock (of
     the timer, or of a shard's wheel) or restart the worker: HWTIMER_ETHREAD, and a second call
     that succeeds gives a timer that runs what the child inherited;
   - sizes that do not fit a size_t: thread objects (a table's sizes) so large that the one
     allocation cannot be counted: HWTIMER_ENOMEM before anything is asked of the
     allocator, and the sentence says why;
   - a clock that steps back while a worker's callback runs: no slow-callback report for
     it (the callback's time is not "negative, so huge"), and the next callback that takes
     long is reported with its real length.

   The C library's functions are replaced for this program by definitions here that fail
   on demand and otherwise call the real ones (dlsym(RTLD_NEXT)): the backends' own wrappers
   then see the failure, as they would see the C library's. POSIX only (fork, dlsym), and
   not under a sanitizer whose runtime is linked into the program (clang's TSan and ASan),
   whose own definitions of these functions would be bypassed. */
#define _GNU_SOURCE /* RTLD_NEXT */
#include "harness.h"
#include "fixture.h"
#include "harness_threads.h"

#if defined(__clang__) && defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer) || \
    __has_feature(memory_sanitizer)
#define TEST_STATIC_SANITIZER 1
#endif
#endif

#if defined(_WIN32) || defined(TEST_STATIC_SANITIZER)

int main(void) {
    printf("skipped: test_failures replaces C library functions (POSIX, and no sanitizer "
           "runtime linked in)\n");
    return test_finish();
}

#else

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#if HWTIMER_TEST_MODE == 3
#include <threads.h>
#endif

#include "forking.h"

/* ---- the C library, failing on demand ---------------------------------------------------- */

/* What a backend asks the C library for, whichever backend this mode uses. */
enum { MUTEX, CONDATTR, COND, THREAD, KINDS };

typedef struct failing {
    unsigned calls;   /* atomic: calls since fail_call */
    unsigned fail_at; /* atomic: the call that fails (1: the next one); 0: none */
} failing;

static failing plan[KINDS];

/* From now on, the n-th call of that kind fails (0: none does); counts from 0 again. */
static void fail_call(int kind, unsigned n) {
    ATOMIC_SET(&plan[kind].calls, 0u);
    ATOMIC_SET(&plan[kind].fail_at, n);
}

static void fail_nothing(void) {
    int kind;
    for (kind = 0; kind < KINDS; kind++) fail_call(kind, 0);
}

/* Counts a call; 1 if it is the one to fail. */
static int fails_now(int kind) {
    unsigned call = ATOMIC_ADD(&plan[kind].calls, 1u) + 1;
    return call == ATOMIC_GET(&plan[kind].fail_at);
}

static unsigned calls_of(int kind) { return ATOMIC_GET(&plan[kind].calls); }

/* The C library's definition of `name` (the next after this program's). */
static void real_function(const char *name, void *fn_ptr, size_t size) {
    void *sym = dlsym(RTLD_NEXT, name);
    if (!sym) {
        fprintf(stderr, "fatal: dlsym(RTLD_NEXT, %s) found nothing\n", name);
        exit(1);
    }
    memcpy(fn_ptr, &sym, size); /* (ISO C has no cast from void * to a function pointer) */
}

/* Each replacement finds the C library's function at its first call. */
#define REAL(fn_type, name)                                                    \
    static fn_type real;                                                       \
    if (!real) real_function(#name, &real, sizeof real)

typedef int (*mutex_init_fn)(pthread_mutex_t *, const pthread_mutexattr_t *);
typedef int (*condattr_init_fn)(pthread_condattr_t *);
typedef int (*cond_init_fn)(pthread_cond_t *, const pthread_condattr_t *);
typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

int pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *attr) {
    REAL(mutex_init_fn, pthread_mutex_init);
    return fails_now(MUTEX) ? EAGAIN : real(m, attr);
}

int pthread_condattr_init(pthread_condattr_t *attr) {
    REAL(condattr_init_fn, pthread_condattr_init);
    return fails_now(CONDATTR) ? ENOMEM : real(attr);
}

int pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *attr) {
    REAL(cond_init_fn, pthread_cond_init);
    return fails_now(COND) ? EAGAIN : real(c, attr);
}

int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*start)(void *), void *arg) {
    REAL(create_fn, pthread_create);
    return fails_now(THREAD) ? EAGAIN : real(th, attr, start, arg);
}

#if HWTIMER_TEST_MODE == 3
typedef int (*mtx_init_fn)(mtx_t *, int);
typedef int (*cnd_init_fn)(cnd_t *);
typedef int (*thrd_create_fn)(thrd_t *, thrd_start_t, void *);

int mtx_init(mtx_t *m, int type) {
    REAL(mtx_init_fn, mtx_init);
    return fails_now(MUTEX) ? thrd_error : real(m, type);
}

int cnd_init(cnd_t *c) {
    REAL(cnd_init_fn, cnd_init);
    return fails_now(COND) ? thrd_nomem : real(c);
}

int thrd_create(thrd_t *th, thrd_start_t start, void *arg) {
    REAL(thrd_create_fn, thrd_create);
    return fails_now(THREAD) ? thrd_nomem : real(th, start, arg);
}
#endif

/* ---- sentences ----------------------------------------------------------------------------- */

/* cfg's log_fn notes its sentences in *h (note_log, harness.h). */
static void hear_into(hwtimer_config *cfg, logged *h) {
    memset(h, 0, sizeof *h);
    cfg->log_fn = note_log;
    cfg->log_ctx = h;
}

/* ---- creating a timer ------------------------------------------------------------------------ */

/* Makes each object of `kind` that hwtimer_create asks for fail in turn: HWTIMER_ETHREAD,
   *out NULL, nothing kept, one sentence. Returns how many such objects a create makes. */
static unsigned fail_each(int kind, unsigned shards) {
    hwtimer_config cfg;
    fixture f;
    logged h;
    hwtimer *t = NULL;
    unsigned n;
    fixture_config(&f, &cfg, 0, MS, 64);
    cfg.shards = shards;
    cfg.worker = 1; /* on the list fork() locks, once made (a failed timer is not) */
    hear_into(&cfg, &h);
    for (n = 1;; n++) {
        int rc;
        fail_call(kind, n);
        rc = hwtimer_create(&t, &cfg);
        if (calls_of(kind) < n) { /* made fewer: this one succeeded */
            CHECK_EQ(rc, HWTIMER_OK);
            break;
        }
        CHECK_EQ(rc, HWTIMER_ETHREAD);
        CHECK(t == NULL);
        CHECK_EQ(ATOMIC_GET(&f.mem.frees), ATOMIC_GET(&f.mem.allocs));
        CHECK_EQ(ATOMIC_GET(&h.calls), n);
        CHECK(strstr(h.last, "mutex_init or cond_init failed") != NULL);
    }
    fail_nothing();
    f.t = t;
    fixture_close(&f);
    return n - 1;
}

/* Every mutex and condition variable of a timer (and of each of its shards) the C library
   cannot make: the timer's mutex and two condition variables (a pass done, the worker's
   wake-up), and with several shards a mutex and a condition variable each; a condition
   attribute for each condition variable with POSIX threads. */
static void test_create_objects_fail(void) {
    unsigned shards = test_shards(test_threads()), own = shards > 1 ? shards : 0;
    CHECK_EQ(fail_each(MUTEX, shards), 1 + own);
    CHECK_EQ(fail_each(COND, shards), 2 + own);
    CHECK_EQ(fail_each(CONDATTR, shards), HWTIMER_TEST_MODE == 3 ? 0 : 2 + own);
    CHECK_EQ(fail_each(MUTEX, 2), 3u); /* a timer of shards in every mode: its own, 2 shards' */
    CHECK_EQ(fail_each(COND, 2), 4u);
}

/* The worker's thread cannot be made: hwtimer_start, the schedule forms and a reschedule
   say HWTIMER_ETHREAD and change nothing; then a thread can be made again, and the timer
   runs what is scheduled. */
static void check_worker_cannot_start(unsigned shards) {
    hwtimer_config cfg;
    hwtimer *t, *other;
    hwtimer_timeout to = HWTIMER_TIMEOUT_INIT;
    unsigned runs = 0;
    real_config(&cfg, 1, MS, 64);
    cfg.shards = shards;
    t = create_or_die(&cfg);
    /* give the node a callback on another timer first: a reschedule arms it again */
    real_config(&cfg, 0, MS, 64);
    cfg.shards = 0;
    other = create_or_die(&cfg);
    CHECK_EQ(hwtimer_schedule(other, &to, HOUR, count_runs, &runs), HWTIMER_OK);
    CHECK_EQ(hwtimer_cancel(other, &to), 1);
    fail_call(THREAD, 1);
    CHECK_EQ(hwtimer_start(t), HWTIMER_ETHREAD);
    fail_call(THREAD, 1);
    CHECK_EQ(hwtimer_schedule(t, &to, MS, count_runs, &runs), HWTIMER_ETHREAD);
    fail_call(THREAD, 1);
    CHECK_EQ(hwtimer_schedule_at(t, &to, hwtimer_now(t), count_runs, &runs), HWTIMER_ETHREAD);
    fail_call(THREAD, 1);
    CHECK_EQ(hwtimer_reschedule(t, &to, MS), HWTIMER_ETHREAD);
    CHECK_EQ(calls_of(THREAD), 1);
    CHECK_EQ(hwtimer_pending(t), 0);
    CHECK_EQ(hwtimer_timeout_state(&to), HWTIMER_CANCELLED);
    fail_nothing();
    CHECK_EQ(hwtimer_reschedule(t, &to, MS), HWTIMER_OK);
    CHECK(wait_for_count(&runs, 1, 5 * SEC));
    hwtimer_destroy(t);
    hwtimer_destroy(other);
}

static void test_worker_cannot_start(void) {
    check_worker_cannot_start(0);
    check_worker_cannot_start(2);
}

/* ---- in the child after fork() ---------------------------------------------------------- */

/* A timer with a node pending an hour away, forked; in the child the n-th `kind` call
   fails: hwtimer_fork_child says HWTIMER_ETHREAD, a second call succeeds, and the node
   scheduled then runs in the child (on its worker, or its advance). */
static void fork_child_fails(int worker, unsigned shards, int kind, unsigned n) {
    hwtimer_config cfg;
    hwtimer *t;
    hwtimer_timeout far = HWTIMER_TIMEOUT_INIT, first = HWTIMER_TIMEOUT_INIT;
    unsigned runs = 0;
    pid_t pid;
    real_config(&cfg, worker, MS, 64);
    cfg.shards = shards;
    t = create_or_die(&cfg);
    /* a worker that has run once (under ASan a fork may not come while it starts) */
    CHECK_EQ(hwtimer_schedule(t, &first, 0, count_runs, &runs), HWTIMER_OK);
    if (!worker) hwtimer_advance(t, hwtimer_now(t) + MS);
    CHECK(wait_for_count(&runs, 1, 5 * SEC));
    CHECK_EQ(hwtimer_schedule(t, &far, HOUR, count_runs, &runs), HWTIMER_OK);
    pid = fork_or_die();
    if (pid == 0) {
        int before = test__checks_failed;
        fail_call(kind, n);
        CHECK_EQ(hwtimer_fork_child(t), HWTIMER_ETHREAD);
        CHECK(calls_of(kind) >= n);
        fail_nothing();
        CHECK_EQ(hwtimer_fork_child(t), HWTIMER_OK);
        CHECK_EQ(hwtimer_pending(t), 1);
        CHECK_EQ(hwtimer_reschedule(t, &far, 0), HWTIMER_OK);
        if (!worker) hwtimer_advance(t, hwtimer_now(t) + MS);
        CHECK(wait_for_count(&runs, 2, 5 * SEC));
        CHECK_EQ(hwtimer_check(t), 0);
        hwtimer_destroy(t);
        child_exit(before);
    }
    check_child(pid);
    CHECK_EQ(hwtimer_pending(t), 1); /* the parent's is untouched */
    CHECK_EQ(ATOMIC_GET(&runs), 1);
    hwtimer_destroy(t);
}

/* The lock of the timer, or of one of its shards' wheels, or a condition variable (the
   timer's, a shard's), cannot be made again in the child; or its worker cannot be started
   there. */
static void test_fork_child_fails(void) {
    unsigned shards = test_shards(test_threads());
    fork_child_fails(0, shards, MUTEX, 1);
    fork_child_fails(0, 0, COND, 2);
    fork_child_fails(0, 2, MUTEX, 1); /* the timer's own */
    fork_child_fails(0, 2, MUTEX, 3); /* the second shard's, after the first's */
    fork_child_fails(0, 2, COND, 4);  /* the second shard's, after the timer's and the first's */
    if (!TEST_WORKER_IN_CHILD) return;
    fork_child_fails(1, shards, THREAD, 1);
    fork_child_fails(1, 2, THREAD, 1);
}

/* ---- sizes that do not fit a size_t ------------------------------------------------------ */

/* A table of this mode's backend with these sizes for its objects (the hooks never run: the
   allocation cannot be made). */
static hwtimer_threads sized_table(size_t mutex_size, size_t cond_size, size_t thread_size) {
    hwtimer_threads th = *test_threads();
    th.mutex_size = mutex_size;
    th.cond_size = cond_size;
    th.thread_size = thread_size;
    return th;
}

/* hwtimer_create with these thread objects: HWTIMER_ENOMEM before the allocator is asked,
   with the sentence that says the size does not fit. */
static void check_uncountable(size_t mutex_size, size_t cond_size, size_t thread_size,
                              unsigned shards) {
    hwtimer_threads th = sized_table(mutex_size, cond_size, thread_size);
    hwtimer_config cfg;
    fixture f;
    logged h;
    hwtimer *t = NULL;
    fixture_config(&f, &cfg, 0, MS, 2);
    cfg.threads = &th;
    cfg.shards = shards;
    hear_into(&cfg, &h);
    CHECK_EQ(hwtimer_create(&t, &cfg), HWTIMER_ENOMEM);
    CHECK(t == NULL);
    CHECK_EQ(f.mem.last_size, 0); /* never asked */
    CHECK_EQ(h.calls, 1);
    CHECK(strstr(h.last, "more memory than size_t can count") != NULL);
}

/* Each part of a timer's one allocation starts a cache line of 64 bytes. */
enum { LINE = 64 };
static size_t round_line(size_t n) { return (n + LINE - 1) & ~(size_t)(LINE - 1); }

/* The bytes before the thread objects in a one-wheel timer of 2 slots: what such a timer
   takes (hwtimer_stats.bytes) less its three objects and two threads' records, each on
   lines of its own, and the line that aligns the timer. */
static size_t bytes_before_objects(void) {
    const hwtimer_threads *th = test_threads();
    hwtimer_config cfg;
    fixture f;
    hwtimer_stats s;
    fixture_config(&f, &cfg, 0, MS, 2);
    cfg.shards = 0;
    fixture_create(&f, &cfg);
    hwtimer_stats_get(f.t, &s);
    fixture_close(&f);
    return s.bytes - round_line(th->mutex_size) - 2 * round_line(th->cond_size) -
           2 * round_line(th->thread_size) - LINE;
}

/* Each object's size in turn too large, the second of two objects of a size too, and two
   threads' records that a one-wheel timer can count but a timer of shards, with its
   shards' wheels and objects before them, cannot. */
static void test_sizes_past_size_t(void) {
    size_t before = bytes_before_objects(), half = SIZE_MAX / 2, fit;
    check_uncountable(SIZE_MAX, 1, 1, 0);
    check_uncountable(1, SIZE_MAX, 1, 0);
    check_uncountable(1, half, 1, 0); /* the first condition variable fits, not the second */
    check_uncountable(1, 1, SIZE_MAX, 0);
    check_uncountable(1, 1, half, 0);
    /* records that leave the last line and the two lines each part must leave room for:
       one wheel's timer is then only too big to allocate */
    fit = ((SIZE_MAX - before - 3 * LINE - LINE - 2 * LINE) / 2) & ~(size_t)(LINE - 1);
    {
        hwtimer_threads th = sized_table(1, 1, fit);
        hwtimer_config cfg;
        fixture f;
        hwtimer *t = NULL;
        fixture_config(&f, &cfg, 0, MS, 2);
        cfg.threads = &th;
        cfg.shards = 0;
        f.mem.refuse = 1;
        CHECK_EQ(hwtimer_create(&t, &cfg), HWTIMER_ENOMEM);
        CHECK_EQ(f.mem.last_size, before + 3 * LINE + 2 * fit + LINE); /* asked for, refused */
    }
    check_uncountable(1, 1, fit, 2);
}

/* ---- a clock that steps back under a worker ------------------------------------------- */

static uint64_t stepping_now; /* atomic: the worker reads it, its callbacks move it */

static uint64_t stepping_clock(void *ctx) {
    (void)ctx;
    return ATOMIC_GET(&stepping_now);
}

typedef struct stepper {
    int64_t step; /* what its callback does to the clock */
    unsigned runs;
} stepper;

static void step_clock(hwtimer_timeout *to, void *arg) {
    stepper *s = (stepper *)arg;
    (void)to;
    ATOMIC_SET(&stepping_now, ATOMIC_GET(&stepping_now) + (uint64_t)s->step);
    ATOMIC_ADD(&s->runs, 1u);
}

/* A worker's callback during which the clock steps 5 s back: not reported (it did not run
   for "2^64 - 5 s"), and the worker still runs what is due; the next callback, during
   which the clock moves 1 s on, is: once, with 1000 ms. */
static void test_clock_steps_back_in_callback(void) {
    hwtimer_config cfg;
    hwtimer *t;
    logged h;
    stepper back, on;
    hwtimer_timeout a = HWTIMER_TIMEOUT_INIT, b = HWTIMER_TIMEOUT_INIT;
    memset(&back, 0, sizeof back);
    memset(&on, 0, sizeof on);
    back.step = -(int64_t)(5 * SEC);
    on.step = (int64_t)SEC;
    ATOMIC_SET(&stepping_now, 100 * SEC);
    real_config(&cfg, 1, MS, 64);
    cfg.clock_fn = stepping_clock;
    hear_into(&cfg, &h);
    t = create_or_die(&cfg);
    CHECK_EQ(hwtimer_schedule(t, &a, 0, step_clock, &back), HWTIMER_OK);
    CHECK(wait_for_count(&back.runs, 1, 5 * SEC));
    CHECK_EQ(hwtimer_schedule(t, &b, 0, step_clock, &on), HWTIMER_OK); /* behind the last pass */
    CHECK(wait_for_count(&on.runs, 1, 5 * SEC));
    CHECK(wait_for_count(&h.calls, 1, 5 * SEC));
    hwtimer_destroy(t);
    CHECK_EQ(ATOMIC_GET(&h.calls), 1);
    CHECK(strstr(h.last, "a callback ran for 1000 ms") != NULL);
}

int main(void) {
    REQUIRE_THREADS("test_failures");
    RUN_TEST(test_create_objects_fail);
    RUN_TEST(test_worker_cannot_start);
    RUN_TEST(test_fork_child_fails);
    RUN_TEST(test_sizes_past_size_t);
    RUN_TEST(test_clock_steps_back_in_callback);
    return test_finish();
}

#endif
