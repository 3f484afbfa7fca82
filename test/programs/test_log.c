/* test_log.c - cfg.log_fn, the sentences hwtimer gives a program that asked for them:
   - every refusal of hwtimer_create: exactly one sentence, naming the field and its rule
     (a valid configuration logs nothing; without log_fn nothing is called);
   - a worker's callback that ran longer than max(100 ms, tick): once, with how long it ran
     and the limit, at most once a second per timer, never for a caller-driven timer;
   - a timer with a worker created while 64 or more other timers with a worker are alive in
     the process (it is the 65th or later; each is a thread): exactly once per such creation,
     in the sentence that says so (MANY_WORKERS_SENTENCE); not for the 64th; not again once
     timers were destroyed below the count; caller-driven timers never count. A worker starts only at the first schedule or hwtimer_start, so
     these timers cost no thread.
   - a hwtimer_cancel or hwtimer_retire that has waited a second for a callback: once per
     call, naming the call, the likely deadlock and hwtimer_try_cancel; not for a shorter
     wait.
   The refusals run in every mode; the worker's sentences in the threaded modes. */
#include "harness.h"
#include "fixture.h"
#include "harness_threads.h"

enum { MANY = 64, SLOTS = MANY + 8 };

/* What log_fn hears at the 65th timer with a worker, word for word. */
#define MANY_WORKERS_SENTENCE                                                               \
    "hwtimer: this timer was created while 64 or more other timers with a worker thread "   \
    "were alive (each is a thread); share one timer among many timeouts instead"

/* A timer (small: 2 slots a level) on this mode's threads that logs to l (NULL: no log_fn). */
static hwtimer *create_logging(int worker, logged *l) {
    hwtimer_config cfg;
    hwtimer_config_default(&cfg);
    cfg.tick_ns = MS;
    cfg.ticks_per_wheel = 2;
    cfg.threads = test_threads();
    cfg.worker = worker;
    cfg.log_fn = l ? note_log : NULL;
    cfg.log_ctx = l;
    return create_or_die(&cfg);
}

/* Creates t[from .. to-1] with a worker, checking that none of them logs. */
static void create_quietly(hwtimer **t, size_t from, size_t to, logged *l) {
    size_t i;
    for (i = from; i < to; i++) {
        unsigned before = l->calls;
        t[i] = create_logging(1, l);
        CHECK_EQ(l->calls, before);
    }
}

static void destroy_all(hwtimer **t, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) {
        hwtimer_destroy(t[i]);
        t[i] = NULL;
    }
}

/* The 64th is fine, the 65th logs once, the sentence that says 64 others were alive; with
   five destroyed (60 alive) four new ones are fine, and the next, the 65th again, logs once
   more. */
static void test_warns_past_64(void) {
    static hwtimer *t[SLOTS];
    logged l;
    size_t i;
    memset(&l, 0, sizeof l);
    create_quietly(t, 0, MANY, &l);
    CHECK_EQ(l.calls, 0);
    t[MANY] = create_logging(1, &l);
    CHECK_EQ(l.calls, 1);
    CHECK(strcmp(l.last, MANY_WORKERS_SENTENCE) == 0);

    for (i = 0; i < 5; i++) {
        hwtimer_destroy(t[MANY - i]);
        t[MANY - i] = NULL;
    }
    create_quietly(t, MANY - 4, MANY, &l); /* 60 alive, then back to 64 */
    CHECK_EQ(l.calls, 1);
    t[MANY] = create_logging(1, &l);
    CHECK_EQ(l.calls, 2);
    destroy_all(t, MANY + 1);
}

/* With log_fn NULL the 65th is created silently (and without a crash). */
static void test_silent_without_log_fn(void) {
    static hwtimer *t[SLOTS];
    logged l;
    memset(&l, 0, sizeof l);
    create_quietly(t, 0, MANY, &l);
    t[MANY] = create_logging(1, NULL);
    CHECK(t[MANY] != NULL);
    CHECK_EQ(l.calls, 0);
    CHECK_EQ(hwtimer_start(t[MANY]), HWTIMER_OK); /* a working timer, thread and all */
    destroy_all(t, MANY + 1);
}

/* Caller-driven timers (with threads or without) are not counted: 64 workers and any
   number of them log nothing, and the 65th worker logs once. */
static void test_caller_driven_not_counted(void) {
    static hwtimer *t[SLOTS], *driven[20];
    logged l;
    size_t i;
    memset(&l, 0, sizeof l);
    create_quietly(t, 0, MANY, &l);
    for (i = 0; i < 20; i++) {
        driven[i] = create_logging(0, &l);
    }
    CHECK_EQ(l.calls, 0);
    t[MANY] = create_logging(1, &l);
    CHECK_EQ(l.calls, 1);
    destroy_all(driven, 20);
    destroy_all(t, MANY + 1);
}

/* ---- hwtimer_create's refusals -------------------------------------------------------- */

/* A config as a test starts it: the defaults, logging to l. */
static void logging_config(hwtimer_config *cfg, logged *l) {
    hwtimer_config_default(cfg);
    cfg->log_fn = note_log;
    cfg->log_ctx = l;
}

/* hwtimer_create(cfg) fails with `code`, logging exactly one sentence that starts with
   "hwtimer_create: " and holds every word of `words` (a |-separated list). */
static void check_refusal(const hwtimer_config *cfg, int code, const char *words) {
    logged *l = (logged *)cfg->log_ctx;
    hwtimer *t = (hwtimer *)&t;
    char want[128];
    const char *w = words;
    l->calls = 0;
    CHECK_EQ(hwtimer_create(&t, cfg), code);
    CHECK(t == NULL);
    CHECK_EQ(l->calls, 1);
    CHECK(strncmp(l->last, "hwtimer_create: ", 16) == 0);
    while (*w) {
        size_t n = strcspn(w, "|");
        memcpy(want, w, n);
        want[n] = '\0';
        if (!strstr(l->last, want)) {
            fprintf(stderr, "  \"%s\" not in: %s\n", want, l->last);
            CHECK(strstr(l->last, want) != NULL);
        }
        w += n + (w[n] == '|');
    }
}

static void *refusing_alloc(size_t size, void *ctx) {
    (void)size;
    (void)ctx;
    return NULL;
}

static void unused_free(void *ptr, void *ctx) {
    (void)ptr;
    (void)ctx;
}

/* Each field a config can get wrong, one at a time: one sentence naming it. */
static void test_refusals_name_the_field(void) {
    hwtimer_config cfg;
    hwtimer_threads broken;
    logged l;
    hwtimer *t = NULL;
    memset(&l, 0, sizeof l);

    logging_config(&cfg, &l);
    cfg.tick_ns = 0;
    check_refusal(&cfg, HWTIMER_EINVAL, "tick_ns is 0|at least 1 ns");
    logging_config(&cfg, &l);
    cfg.ticks_per_wheel = 0;
    check_refusal(&cfg, HWTIMER_EINVAL, "ticks_per_wheel is 0|2^30");
    cfg.ticks_per_wheel = (1u << 30) + 1;
    check_refusal(&cfg, HWTIMER_EINVAL, "ticks_per_wheel is 1073741825|2^30");
    logging_config(&cfg, &l);
    cfg.tick_ns = UINT64_MAX / 256;
    check_refusal(&cfg, HWTIMER_EINVAL, "tick_ns is|overflows");
    logging_config(&cfg, &l);
    cfg.alloc_fn = refusing_alloc;
    check_refusal(&cfg, HWTIMER_EINVAL, "alloc_fn is set but free_fn is NULL|both");
    cfg.alloc_fn = NULL;
    cfg.free_fn = unused_free;
    check_refusal(&cfg, HWTIMER_EINVAL, "free_fn is set but alloc_fn is NULL|both");
    cfg.alloc_fn = refusing_alloc;
    check_refusal(&cfg, HWTIMER_ENOMEM, "allocating|bytes failed");
    logging_config(&cfg, &l);
    cfg.worker = 1;
    check_refusal(&cfg, HWTIMER_EINVAL, "worker is set but threads is NULL|threads backend");
    logging_config(&cfg, &l);
    cfg.shards = 65;
    check_refusal(&cfg, HWTIMER_EINVAL, "shards is 65|at most 64");
    cfg.shards = 4;
    check_refusal(&cfg, HWTIMER_EINVAL, "shards is 4 but threads is NULL");

    l.calls = 0; /* out NULL: said too, though no timer could be given back */
    CHECK_EQ(hwtimer_create(NULL, &cfg), HWTIMER_EINVAL);
    CHECK_EQ(l.calls, 1);
    CHECK(strstr(l.last, "out is NULL") != NULL);

    if (test_threads()) { /* a table with a hook left out names that hook */
        broken = *test_threads();
        broken.cond_wait = NULL;
        logging_config(&cfg, &l);
        cfg.threads = &broken;
        check_refusal(&cfg, HWTIMER_EINVAL, "threads|cond_wait is missing");
        broken = *test_threads();
        broken.thread_size = 0;
        check_refusal(&cfg, HWTIMER_EINVAL, "threads|thread_size is missing");
    }
    if (!TEST_HAVE_ATOMICS && hwtimer_threads_default()) { /* threads without atomics (tcc) */
        logging_config(&cfg, &l);
        cfg.threads = hwtimer_threads_default();
        check_refusal(&cfg, HWTIMER_EINVAL, "threads is set|neither GCC's nor MSVC's atomics");
    }
    if (TEST_HAVE_ATOMICS && !TEST_WHOLE64 && hwtimer_threads_default()) { /* i486 */
        logging_config(&cfg, &l);
        cfg.threads = hwtimer_threads_default();
        check_refusal(&cfg, HWTIMER_EINVAL, "threads is set|no 8-byte compare-and-swap");
    }
#ifdef HWTIMER_NO_THREADS
    { /* a table passed to a build without thread code */
        hwtimer_threads any;
        memset(&any, 0, sizeof any);
        logging_config(&cfg, &l);
        cfg.threads = &any;
        check_refusal(&cfg, HWTIMER_EINVAL, "threads is set|HWTIMER_NO_THREADS");
    }
#endif

    /* a valid config, any mode: nothing said */
    logging_config(&cfg, &l);
    cfg.threads = test_threads();
    cfg.shards = test_shards(cfg.threads);
    l.calls = 0;
    CHECK_EQ(hwtimer_create(&t, &cfg), HWTIMER_OK);
    CHECK_EQ(l.calls, 0);
    hwtimer_destroy(t);

    /* without log_fn the same refusals are silent (and do not crash) */
    hwtimer_config_default(&cfg);
    cfg.tick_ns = 0;
    CHECK_EQ(hwtimer_create(&t, &cfg), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_create(NULL, NULL), HWTIMER_EINVAL);
}

/* ---- a worker's slow callbacks ------------------------------------------------------------
   The timer's clock is a fake one that the callbacks move: a callback "runs for" what it
   adds, so the durations are exact whatever the machine's load. The worker sleeps for real
   until the fake time it waits for; the test sets the fake clock there. */

typedef struct slow_case {
    uint64_t clock;      /* the fake clock (atomic: the worker reads it) */
    uint64_t run_for;    /* what the next callback adds to the clock */
    unsigned ran;        /* callbacks run */
    logged log;          /* written on the worker thread: read after hwtimer_stop */
} slow_case;

static uint64_t slow_clock(void *ctx) { return ATOMIC_GET(&((slow_case *)ctx)->clock); }

/* Its frame is left full of non-zero bytes: the worker builds its sentence about a slow
   callback on the stack just after, where a sentence left without its terminator would
   run on into them. */
static void run_for_a_while(hwtimer_timeout *to, void *arg) {
    slow_case *c = (slow_case *)arg;
    volatile char scrawl[4096];
    size_t i;
    (void)to;
    for (i = 0; i < sizeof scrawl; i++) scrawl[i] = 'x';
    ATOMIC_ADD(&c->clock, ATOMIC_GET(&c->run_for));
    ATOMIC_ADD(&c->ran, 1u);
}

static hwtimer *slow_timer(slow_case *c, int worker, uint64_t tick_ns, int with_log) {
    hwtimer_config cfg;
    hwtimer_config_default(&cfg);
    cfg.tick_ns = tick_ns;
    cfg.clock_fn = slow_clock;
    cfg.clock_ctx = c;
    cfg.threads = test_threads();
    cfg.shards = test_shards(cfg.threads);
    cfg.worker = worker;
    cfg.log_fn = with_log ? note_log : NULL;
    cfg.log_ctx = &c->log;
    return create_or_die(&cfg);
}

/* Runs one callback that moves the clock by `run_for`: due one tick ahead, the clock set
   to its deadline, then waits for it. */
static void run_one(hwtimer *t, slow_case *c, hwtimer_timeout *to, uint64_t tick_ns,
                    uint64_t run_for) {
    unsigned before = ATOMIC_GET(&c->ran);
    ATOMIC_SET(&c->run_for, run_for);
    CHECK_EQ(hwtimer_schedule(t, to, tick_ns, run_for_a_while, c), HWTIMER_OK);
    ATOMIC_ADD(&c->clock, tick_ns);
    CHECK(wait_for_count(&c->ran, before + 1, 10 * SEC));
}

/* 1 ms tick, so the limit is 100 ms: 300 ms is said, with both durations; 50 ms and 99 ms
   are not; another 300 ms that ends within the second is not said again; 700 ms that ends
   after it is. */
static void test_slow_callback_said_once_a_second(void) {
    slow_case c;
    hwtimer_timeout to = HWTIMER_TIMEOUT_INIT;
    hwtimer *t;
    memset(&c, 0, sizeof c);
    t = slow_timer(&c, 1, MS, 1);
    run_one(t, &c, &to, MS, 50 * MS);
    run_one(t, &c, &to, MS, 300 * MS);
    run_one(t, &c, &to, MS, 300 * MS); /* ends 301 ms after the first report: quiet */
    run_one(t, &c, &to, MS, 99 * MS);
    run_one(t, &c, &to, MS, 700 * MS); /* ends 1102 ms after the first report: said */
    CHECK_EQ(hwtimer_stop(t, NULL, NULL), 0);
    CHECK_EQ(c.log.calls, 2);
    CHECK(strstr(c.log.last, "ran for 700 ms") != NULL);
    CHECK(strstr(c.log.last, "longer than 100 ms") != NULL);
    CHECK(strstr(c.log.last, "late") != NULL);
    CHECK(ends_with(c.log.last, "said at most once a second)"));
    hwtimer_destroy(t);
}

/* A tick longer than 100 ms raises the limit to the tick: 150 ms on a 200 ms tick is fine,
   250 ms is said, with the limit in whole milliseconds. */
static void test_slow_callback_limit_is_the_tick(void) {
    slow_case c;
    hwtimer_timeout to = HWTIMER_TIMEOUT_INIT;
    hwtimer *t;
    memset(&c, 0, sizeof c);
    t = slow_timer(&c, 1, 200 * MS, 1);
    run_one(t, &c, &to, 200 * MS, 150 * MS);
    CHECK_EQ(hwtimer_stop(t, NULL, NULL), 0);
    CHECK_EQ(c.log.calls, 0);
    hwtimer_destroy(t);

    memset(&c, 0, sizeof c);
    t = slow_timer(&c, 1, 200 * MS, 1);
    run_one(t, &c, &to, 200 * MS, 250 * MS);
    CHECK_EQ(hwtimer_stop(t, NULL, NULL), 0);
    CHECK_EQ(c.log.calls, 1);
    CHECK(strstr(c.log.last, "ran for 250 ms") != NULL);
    CHECK(strstr(c.log.last, "longer than 200 ms") != NULL);
    hwtimer_destroy(t);

    /* a tick a nanosecond short of 200 ms: the limit is said in whole ms, rounded down */
    memset(&c, 0, sizeof c);
    t = slow_timer(&c, 1, 200 * MS - 1, 1);
    run_one(t, &c, &to, 200 * MS - 1, 250 * MS);
    CHECK_EQ(hwtimer_stop(t, NULL, NULL), 0);
    CHECK_EQ(c.log.calls, 1);
    CHECK(strstr(c.log.last, "ran for 250 ms") != NULL);
    CHECK(strstr(c.log.last, "longer than 199 ms") != NULL);
    hwtimer_destroy(t);
}

/* Caller-driven timers are never timed (the loop's own code is the caller's to measure),
   and a worker without log_fn runs slow callbacks without a word or a crash. */
static void test_slow_callback_only_worker_with_log(void) {
    slow_case c;
    hwtimer_timeout to = HWTIMER_TIMEOUT_INIT;
    hwtimer *t;
    memset(&c, 0, sizeof c);
    t = slow_timer(&c, 0, MS, 1);
    CHECK_EQ(hwtimer_schedule(t, &to, MS, run_for_a_while, &c), HWTIMER_OK);
    c.run_for = 300 * MS;
    c.clock = MS;
    CHECK_EQ(hwtimer_poll(t), 1);
    CHECK_EQ(c.log.calls, 0);
    hwtimer_destroy(t);

    memset(&c, 0, sizeof c);
    t = slow_timer(&c, 1, MS, 0);
    run_one(t, &c, &to, MS, 300 * MS);
    CHECK_EQ(hwtimer_stop(t, NULL, NULL), 0);
    CHECK_EQ(c.log.calls, 0);
    hwtimer_destroy(t);
}

/* ---- a cancel that waits long for a callback ----------------------------------------------
   On the real clock: a callback sleeps while another thread cancels or retires its timeout,
   as a callback that waits for a lock the canceller holds would. The timer is caller-driven,
   its callbacks run by a polling thread, so that no sentence about a slow worker callback
   mixes in. */

typedef struct sleeper {
    uint64_t hold;     /* how long the callback sleeps */
    unsigned started;  /* atomic */
    unsigned finished; /* atomic */
} sleeper;

static void sleep_a_while(hwtimer_timeout *to, void *arg) {
    sleeper *z = (sleeper *)arg;
    (void)to;
    ATOMIC_ADD(&z->started, 1u);
    sleep_ns(z->hold);
    ATOMIC_ADD(&z->finished, 1u);
}

/* Runs a callback that sleeps `hold`, then cancels (or retires) it from this thread: the
   call returns once the callback has. */
static int cancel_sleeper(hwtimer *t, uint64_t hold, int retire) {
    hwtimer_timeout to = HWTIMER_TIMEOUT_INIT;
    sleeper z;
    int rc;
    memset(&z, 0, sizeof z);
    z.hold = hold;
    CHECK_EQ(hwtimer_schedule(t, &to, MS, sleep_a_while, &z), HWTIMER_OK);
    CHECK(wait_for_count(&z.started, 1, 3 * SEC));
    rc = retire ? hwtimer_retire(t, &to) : hwtimer_cancel(t, &to);
    CHECK_EQ(ATOMIC_GET(&z.finished), 1);
    return rc;
}

/* A cancel that waits 300 ms says nothing; one that waits 1.3 s says, once, that it waits
   and what to use under a lock; a retire that waits 2.4 s says it once too, by its name. */
static void test_long_cancel_wait_said_once(void) {
    logged l;
    hwtimer_config cfg;
    hwtimer *t;
    test_poller poller;
    memset(&l, 0, sizeof l);
    real_config(&cfg, 0, MS, 64);
    cfg.log_fn = note_log;
    cfg.log_ctx = &l;
    t = create_or_die(&cfg);
    test_poller_start(&poller, t, 1 * MS);
    CHECK_EQ(cancel_sleeper(t, 300 * MS, 0), 0);
    CHECK_EQ(ATOMIC_GET(&l.calls), 0);
    CHECK_EQ(cancel_sleeper(t, 1300 * MS, 0), 0);
    CHECK_EQ(ATOMIC_GET(&l.calls), 1);
    CHECK(strstr(l.last, "hwtimer: hwtimer_cancel has waited 1 s for a callback") == l.last);
    CHECK(strstr(l.last, "holds a lock the callback takes") != NULL);
    CHECK(ends_with(l.last, "cancel with hwtimer_try_cancel, which never waits)"));
    CHECK_EQ(cancel_sleeper(t, 2400 * MS, 1), 0);
    CHECK_EQ(ATOMIC_GET(&l.calls), 2);
    CHECK(strstr(l.last, "hwtimer: hwtimer_retire has waited 1 s") == l.last);
    CHECK_EQ(hwtimer_check(t), 0);
    test_poller_stop(&poller);
    hwtimer_destroy(t);
}

int main(void) {
    RUN_TEST(test_refusals_name_the_field);
    REQUIRE_THREADS("test_log's worker tests");
    RUN_TEST(test_slow_callback_said_once_a_second);
    RUN_TEST(test_slow_callback_limit_is_the_tick);
    RUN_TEST(test_slow_callback_only_worker_with_log);
    RUN_TEST(test_warns_past_64);
    RUN_TEST(test_silent_without_log_fn);
    RUN_TEST(test_caller_driven_not_counted);
    RUN_TEST(test_long_cancel_wait_said_once);
    return test_finish();
}
