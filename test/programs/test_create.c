/* test_create.c - creating a timer: initialisers, configs in and out of range, thread
   tables (whole, incomplete, failing), allocators (counting, refusing, failing).

   Each refused config must be refused before anything is allocated and leave *out NULL;
   each accepted one gives a timer that works and returns every byte at destroy. */
#include "harness.h"
#include "harness_threads.h"
#include "fixture.h"
#include "probe.h"

static hwtimer_timeout static_zero_timeout; /* zero-filled by C */

static void test_idle_initialisers(void) {
    hwtimer_timeout by_macro = HWTIMER_TIMEOUT_INIT;
    hwtimer_timeout by_memset, by_function;
    hwtimer_timeout *all[4];
    fixture f;
    size_t i;
    memset(&by_memset, 0, sizeof by_memset);
    memset(&by_function, 0x5A, sizeof by_function); /* init must not need a clean node */
    hwtimer_timeout_init(&by_function);
    all[0] = &by_macro;
    all[1] = &by_memset;
    all[2] = &by_function;
    all[3] = &static_zero_timeout;

    fixture_open(&f, 11 * MS + 3, MS, 8);
    other_fn_runs = 0;
    for (i = 0; i < 4; i++) {
        CHECK_EQ(hwtimer_timeout_state(all[i]), HWTIMER_IDLE);
        CHECK_EQ(hwtimer_cancel(f.t, all[i]), 0);
        CHECK_EQ(hwtimer_schedule(f.t, all[i], MS, other_fn, NULL), HWTIMER_OK);
        CHECK_EQ(hwtimer_timeout_state(all[i]), HWTIMER_PENDING);
    }
    CHECK_EQ(hwtimer_pending(f.t), 4);
    CHECK_EQ(advance_to(&f, tick_at(&f, 1)), 4);
    CHECK_EQ(other_fn_runs, 4);
    fixture_close(&f);
}

static void test_config_default(void) {
    hwtimer_config cfg;
    memset(&cfg, 0x5A, sizeof cfg);
    hwtimer_config_default(&cfg);
    CHECK_EQ(cfg.tick_ns, 100 * MS);
    CHECK_EQ(cfg.ticks_per_wheel, 512);
    CHECK_EQ(cfg.max_pending, 0);
    CHECK(cfg.clock_fn == NULL);
    CHECK(cfg.alloc_fn == NULL);
    CHECK(cfg.free_fn == NULL);
    CHECK_EQ(cfg.worker, 0);
}

/* Creating with cfg = NULL gives a working timer on the platform's monotonic clock. */
static void test_create_with_defaults(void) {
    hwtimer *t = NULL;
    hwtimer_timeout to = HWTIMER_TIMEOUT_INIT;
    uint64_t a, b;
    CHECK_EQ(hwtimer_create(&t, NULL), HWTIMER_OK);
    if (t == NULL) {
        return;
    }
    a = hwtimer_now(t);
    b = hwtimer_now(t);
    CHECK(b >= a);
    CHECK_EQ(hwtimer_schedule(t, &to, HOUR, other_fn, NULL), HWTIMER_OK);
    CHECK(hwtimer_timeout_deadline(&to) >= a + HOUR);
    CHECK_EQ(hwtimer_pending(t), 1);
    CHECK_EQ(hwtimer_poll(t), 0); /* an hour has not passed */
    CHECK_EQ(hwtimer_cancel(t, &to), 1);
    hwtimer_destroy(t);
}

/* Creates with cfg and returns the result; on error *out must stay NULL (it starts as a
   sentinel), on success the timer is destroyed again. */
static int try_create(const hwtimer_config *cfg) {
    static int sentinel;
    hwtimer *t = (hwtimer *)(void *)&sentinel;
    int rc = hwtimer_create(&t, cfg);
    if (rc == HWTIMER_OK) {
        CHECK(t != NULL && t != (hwtimer *)(void *)&sentinel);
        hwtimer_destroy(t);
    } else {
        CHECK(t == NULL);
    }
    return rc;
}

/* A config refused for its values is refused before anything is allocated. */
static void check_refused(const hwtimer_config *cfg, const fixture *r) {
    unsigned before = r->mem.allocs;
    CHECK_EQ(try_create(cfg), HWTIMER_EINVAL);
    CHECK_EQ(r->mem.allocs, before);
}

static void test_config_values(void) {
    hwtimer_config cfg;
    fixture r;
    fixture_config(&r, &cfg, 0, MS, 512);
    CHECK_EQ(hwtimer_create(NULL, &cfg), HWTIMER_EINVAL);
    CHECK_EQ(try_create(&cfg), HWTIMER_OK);
    cfg.tick_ns = 0;
    check_refused(&cfg, &r);
    cfg.tick_ns = MS;
    cfg.ticks_per_wheel = 0;
    check_refused(&cfg, &r);
    cfg.ticks_per_wheel = (1u << 30) + 1;
    check_refused(&cfg, &r);
    cfg.ticks_per_wheel = UINT32_MAX;
    check_refused(&cfg, &r);
    cfg.ticks_per_wheel = 1; /* the smallest legal wheel */
    CHECK_EQ(try_create(&cfg), HWTIMER_OK);
    cfg.ticks_per_wheel = 512;
    cfg.max_pending = SIZE_MAX; /* as good as unlimited */
    CHECK_EQ(try_create(&cfg), HWTIMER_OK);
    cfg.clock_fn = NULL; /* the platform clock */
    CHECK_EQ(try_create(&cfg), HWTIMER_OK);
    CHECK_EQ(r.mem.frees, r.mem.allocs);
}

/* tick_ns times the wheel size rounded up to a power of two must fit in 64 bits: the
   largest tick that fits is accepted, one more is refused. */
static void check_tick_limit(uint32_t ticks_per_wheel, uint64_t rounded) {
    hwtimer_config cfg;
    fixture r;
    fixture_config(&r, &cfg, 0, MS, ticks_per_wheel);
    cfg.tick_ns = UINT64_MAX / rounded;
    CHECK_EQ(try_create(&cfg), HWTIMER_OK);
    cfg.tick_ns++;
    check_refused(&cfg, &r);
    cfg.tick_ns = UINT64_MAX;
    check_refused(&cfg, &r);
}

static void test_tick_times_wheel_overflow(void) {
    check_tick_limit(1, 2); /* a wheel has at least 2 slots */
    check_tick_limit(2, 2);
    check_tick_limit(8, 8);
    check_tick_limit(512, 512);
    check_tick_limit(513, 1024);
    check_tick_limit(1u << 20, 1u << 20);
}

/* The largest legal wheel, 2^30 slots, is accepted: it only fails for lack of memory (it
   needs over 32 GiB), here from an allocator that refuses, before anything is touched. */
static void test_largest_wheel(void) {
    hwtimer_config cfg;
    fixture r;
    fixture_config(&r, &cfg, 0, 1, 1u << 30);
    cfg.shards = 0; /* one block: the one asked for is the wheel's */
    r.mem.refuse = 1;
    CHECK_EQ(try_create(&cfg), HWTIMER_ENOMEM);
#if SIZE_MAX > 0xFFFFFFFFu /* 32-bit: the size does not fit a size_t, nothing is asked for */
    CHECK(r.mem.last_size >= ((size_t)1 << 30) * 16 * 2);
#endif
    cfg.tick_ns = UINT64_MAX >> 30; /* the largest tick a 2^30 wheel allows */
    CHECK_EQ(try_create(&cfg), HWTIMER_ENOMEM);
    cfg.tick_ns++;
    check_refused(&cfg, &r);
    CHECK_EQ(r.mem.allocs, 0);
}

static void test_allocator_pairs(void) {
    hwtimer_config cfg;
    fixture r;
    fixture_config(&r, &cfg, 0, MS, 8);
    cfg.free_fn = NULL;
    check_refused(&cfg, &r);
    cfg.free_fn = counting_free;
    cfg.alloc_fn = NULL;
    CHECK_EQ(try_create(&cfg), HWTIMER_EINVAL);
    CHECK_EQ(r.mem.frees, 0);
    cfg.alloc_fn = counting_alloc; /* both */
    CHECK_EQ(try_create(&cfg), HWTIMER_OK);
    CHECK_EQ(r.mem.frees, r.mem.allocs);
}

/* Only hwtimer_create allocates, through the configured allocator (the fixture's counting
   one); destroy gives back every byte (fixture_close checks). */
static void test_custom_allocator(void) {
    enum { N = 300 };
    fixture f;
    probe p[N];
    hwtimer_stats stats;
    uint64_t rng = 5;
    unsigned allocs_after_create;
    fixture_open(&f, 0, MS, 64);
    CHECK(f.mem.allocs > 0);
    allocs_after_create = f.mem.allocs;
    hwtimer_stats_get(f.t, &stats);
    CHECK_EQ(stats.bytes, f.mem.live_bytes);

    probes_init(p, N, &f);
    schedule_random(p, N - 1, &rng, 0, 100 * YEAR);
    CHECK_EQ(probe_schedule_periodic(&p[N - 1], MS, MS), HWTIMER_OK);
    CHECK_EQ(probe_cancel(&p[0]), 1);
    CHECK_EQ(hwtimer_reschedule(f.t, &p[1].to, MS), HWTIMER_OK);
    (void)advance_to(&f, tick_at(&f, 1000));
    (void)advance_to(&f, f.start + 200 * YEAR);
    (void)hwtimer_poll(f.t);
    (void)hwtimer_next_expiry(f.t);
    (void)hwtimer_poll_timeout_ms(f.t);
    CHECK_EQ(hwtimer_stop(f.t, NULL, NULL), 1);
    CHECK_EQ(f.mem.allocs, allocs_after_create);
    CHECK_EQ(f.mem.frees, 0);
    fixture_close(&f);
}

/* Every allocation hwtimer_create makes may fail: ENOMEM, and nothing leaks. */
/* Each of the `needed` allocations of a create with cfg (f's counting allocator) fails in
   turn: ENOMEM, and nothing leaks. */
static void check_each_allocation_fails(fixture *f, const hwtimer_config *cfg,
                                        unsigned needed) {
    unsigned k;
    for (k = 1; k <= needed; k++) {
        memset(&f->mem, 0, sizeof f->mem);
        f->mem.fail_at = k;
        CHECK_EQ(try_create(cfg), HWTIMER_ENOMEM);
        CHECK_EQ(f->mem.live_bytes, 0);
        CHECK_EQ(f->mem.frees, f->mem.allocs);
    }
}

static void test_allocation_failure(void) {
    fixture f;
    hwtimer_config cfg;
    unsigned needed;
    fixture_open(&f, 0, MS, 64);
    needed = f.mem.allocs;
    fixture_close(&f);
    fixture_config(&f, &cfg, 0, MS, 64);
    check_each_allocation_fails(&f, &cfg, needed);
}

/* cfg.shards: refused without threads and above 64; with threads a timer of
   shards allocates one block through the user's allocator, counts all of it in
   stats.bytes, and that allocation may fail without a leak. */
static void test_shards_config(void) {
    fixture f;
    hwtimer_config cfg;
    hwtimer_stats stats;
    unsigned needed;
    fixture_config(&f, &cfg, 0, MS, 64);
    cfg.threads = NULL;
    cfg.shards = 2;
    CHECK_EQ(try_create(&cfg), HWTIMER_EINVAL);
    if (!test_threads()) return;
    cfg.threads = test_threads();
    cfg.shards = 65;
    CHECK_EQ(try_create(&cfg), HWTIMER_EINVAL);
    cfg.shards = 64;
    CHECK_EQ(try_create(&cfg), HWTIMER_OK);
    cfg.shards = 3;
    memset(&f.mem, 0, sizeof f.mem);
    f.t = create_or_die(&cfg);
    needed = f.mem.allocs;
    CHECK_EQ(needed, 1); /* one block: the timer and its 3 wheels */
    hwtimer_stats_get(f.t, &stats);
    CHECK_EQ(stats.bytes, f.mem.live_bytes);
    hwtimer_destroy(f.t);
    CHECK_EQ(f.mem.live_bytes, 0);
    check_each_allocation_fails(&f, &cfg, needed);
}

static void test_timeout_size(void) {
    if (sizeof(void *) == 8) {
        CHECK(sizeof(hwtimer_timeout) <= 64);
    }
}

/* Which backends exist depends on the build; absent ones are NULL, as hwtimer.h documents. */
static void test_thread_backends(void) {
#if HWTIMER_TEST_MODE == 0
    CHECK(hwtimer_threads_default() == NULL);
    CHECK(hwtimer_threads_pthread() == NULL);
    CHECK(hwtimer_threads_c11() == NULL);
    CHECK(hwtimer_threads_win32() == NULL);
#elif defined(HWTIMER_NO_PTHREADS) && !defined(_WIN32) /* C11 threads only */
    CHECK(hwtimer_threads_win32() == NULL);
    CHECK(hwtimer_threads_pthread() == NULL);
    CHECK(hwtimer_threads_default() == hwtimer_threads_c11());
#elif defined(_WIN32) /* mingw-w64: Win32 threads by default, no pthreads unless asked */
    CHECK(hwtimer_threads_win32() != NULL);
    CHECK(hwtimer_threads_pthread() == NULL);
    CHECK(hwtimer_threads_default() == hwtimer_threads_win32());
#else
    CHECK(hwtimer_threads_win32() == NULL);
    CHECK(hwtimer_threads_pthread() != NULL);
    CHECK(hwtimer_threads_default() == hwtimer_threads_pthread()); /* pthreads preferred */
#endif
#if HWTIMER_TEST_MODE == 3
    CHECK(hwtimer_threads_c11() != NULL);
#endif
}

/* Hooks that must never be called: creating a caller-driven timer with them either fails
   first or uses only the mutex/cond hooks, which succeed here and do nothing. */
static int hook_init(void *obj) {
    (void)obj;
    return 0;
}
static void hook_obj(void *obj) {
    (void)obj;
}
static void hook_wait(void *cond, void *mutex, uint64_t timeout_ns) {
    (void)cond;
    (void)mutex;
    (void)timeout_ns;
}
static int hook_start(void *thread, void (*fn)(void *arg), void *arg) {
    (void)thread;
    (void)fn;
    (void)arg;
    return -1;
}
static int hook_is_self(const void *thread) {
    (void)thread;
    return 0;
}

static void fill_inert_threads(hwtimer_threads *th) {
    memset(th, 0, sizeof *th);
    th->name = "inert";
    th->mutex_size = th->cond_size = th->thread_size = sizeof(void *);
    th->mutex_init = th->cond_init = hook_init;
    th->mutex_destroy = th->mutex_lock = th->mutex_unlock = hook_obj;
    th->cond_destroy = th->cond_broadcast = hook_obj;
    th->cond_wait = hook_wait;
    th->thread_start = hook_start;
    th->thread_join = th->thread_detach = th->thread_self = hook_obj;
    th->thread_is_self = hook_is_self;
}

/* A user-filled table of hooks: refused under HWTIMER_NO_THREADS, by a compiler without
   atomics and on a target without an 8-byte compare-and-swap, accepted otherwise (as hwtimer.h documents; test_incomplete_thread_tables checks
   a table missing a hook). */
static void test_user_threads_table(void) {
    hwtimer_threads th;
    hwtimer_config cfg;
    fixture f;
    fixture_config(&f, &cfg, 0, MS, 8);
    fill_inert_threads(&th);
    cfg.threads = &th;
#if HWTIMER_TEST_MODE == 0
    CHECK_EQ(try_create(&cfg), HWTIMER_EINVAL);
#else
    CHECK_EQ(try_create(&cfg), TEST_THREADS_ALLOWED ? HWTIMER_OK : HWTIMER_EINVAL);
#endif
}

/* Clears hook i of a table (every hook is required); 0 when there is no hook i. */
static int clear_hook(hwtimer_threads *th, int i) {
    switch (i) {
    case 0: th->mutex_init = NULL; break;
    case 1: th->mutex_destroy = NULL; break;
    case 2: th->mutex_lock = NULL; break;
    case 3: th->mutex_unlock = NULL; break;
    case 4: th->cond_init = NULL; break;
    case 5: th->cond_destroy = NULL; break;
    case 6: th->cond_broadcast = NULL; break;
    case 7: th->cond_wait = NULL; break;
    case 8: th->thread_start = NULL; break;
    case 9: th->thread_join = NULL; break;
    case 10: th->thread_detach = NULL; break;
    case 11: th->thread_self = NULL; break;
    case 12: th->thread_is_self = NULL; break;
    case 13: th->mutex_size = 0; break;
    case 14: th->cond_size = 0; break;
    case 15: th->thread_size = 0; break;
    default: return 0;
    }
    return 1;
}

/* A thread table to break: this mode's, or the default one in mode 1; NULL where every
   table is refused (mode 0, a compiler without atomics, a target without an 8-byte
   compare-and-swap). */
static const hwtimer_threads *real_threads(void) {
    if (!TEST_THREADS_ALLOWED) return NULL;
    return test_threads() ? test_threads() : hwtimer_threads_default();
}

static void test_incomplete_thread_tables(void) {
    hwtimer_threads th;
    hwtimer_config cfg;
    fixture r;
    int i;
    fixture_config(&r, &cfg, 0, MS, 8);
    if (!real_threads()) { /* any table is refused */
        memset(&th, 0, sizeof th);
        cfg.threads = &th;
        check_refused(&cfg, &r);
        return;
    }
    cfg.threads = &th;
    for (i = 0, th = *real_threads(); clear_hook(&th, i); th = *real_threads(), i++)
        check_refused(&cfg, &r);
    CHECK_EQ(i, 16);
    CHECK_EQ(try_create(&cfg), HWTIMER_OK); /* the whole table */
    cfg.threads = NULL;
    cfg.shards = 0; /* (shards need threads too) */
    cfg.worker = 1; /* a worker needs threads */
    check_refused(&cfg, &r);
}

/* Thread objects of any size get bytes of their own in the timer's block: each object a
   table's init hook makes is filled with a mark of its own, and every later use of it
   (lock, unlock, broadcast, destroy) must find that mark whole. Sizes 1 to 33 bytes: one
   past a multiple of 16 is where a layout that rounds down would let the next object
   overlap this one. */
static struct {
    size_t size;
    int objects;
    void *obj[8];
    unsigned char mark[8];
    unsigned torn; /* uses that found their object's mark broken, or an unknown object */
} marked;

static int marked_init(void *obj) {
    if (marked.objects == 8) return -1;
    marked.obj[marked.objects] = obj;
    marked.mark[marked.objects] = (unsigned char)(0xA0 + marked.objects);
    memset(obj, marked.mark[marked.objects], marked.size);
    marked.objects++;
    return 0;
}

static void marked_use(void *obj) {
    const unsigned char *p = (const unsigned char *)obj;
    size_t i;
    int k = 0;
    while (k < marked.objects && marked.obj[k] != obj) k++;
    if (k == marked.objects) {
        marked.torn++;
        return;
    }
    for (i = 0; i < marked.size; i++) marked.torn += p[i] != marked.mark[k];
}

static void test_thread_objects_apart(void) {
    hwtimer_threads th;
    hwtimer_config cfg;
    fixture f;
    size_t size;
    if (!real_threads()) return; /* no table is accepted */
    fill_inert_threads(&th);
    th.mutex_init = th.cond_init = marked_init;
    th.mutex_lock = th.mutex_unlock = th.mutex_destroy = marked_use;
    th.cond_broadcast = th.cond_destroy = marked_use;
    for (size = 1; size <= 33; size++) {
        hwtimer *t = NULL;
        probe p;
        memset(&marked, 0, sizeof marked);
        marked.size = th.mutex_size = th.cond_size = th.thread_size = size;
        fixture_config(&f, &cfg, 0, MS, 8);
        cfg.threads = &th;
        cfg.shards = 0;
        CHECK_EQ(hwtimer_create(&t, &cfg), HWTIMER_OK);
        if (!t) return;
        CHECK_EQ(marked.objects, 3); /* the mutex and two condition variables */
        probe_init(&p, &f, 0);
        CHECK_EQ(hwtimer_schedule(t, &p.to, MS, probe_fn, &p), HWTIMER_OK);
        CHECK_EQ(hwtimer_cancel(t, &p.to), 1);
        CHECK_EQ(hwtimer_schedule(t, &p.to, MS, probe_fn, &p), HWTIMER_OK);
        f.clock = MS;
        CHECK_EQ(hwtimer_poll(t), 1);
        CHECK_EQ(p.runs, 1);
        hwtimer_destroy(t);
        CHECK_EQ(marked.torn, 0);
        CHECK_EQ(f.mem.live_bytes, 0);
    }
}

/* Wrapped hooks of a real backend that fail on request and count what they made. */
static struct {
    const hwtimer_threads *real;
    int fail_mutex, fail_cond_at; /* fail the mutex, or the n-th cond_init (1-based) */
    int cond_inits, live_objects;
    int fail_thread;
} faulty;

static int faulty_mutex_init(void *m) {
    if (faulty.fail_mutex || faulty.real->mutex_init(m)) return -1;
    faulty.live_objects++;
    return 0;
}

static void faulty_mutex_destroy(void *m) {
    faulty.live_objects--;
    faulty.real->mutex_destroy(m);
}

static int faulty_cond_init(void *c) {
    if (++faulty.cond_inits == faulty.fail_cond_at || faulty.real->cond_init(c)) return -1;
    faulty.live_objects++;
    return 0;
}

static void faulty_cond_destroy(void *c) {
    faulty.live_objects--;
    faulty.real->cond_destroy(c);
}

static int faulty_thread_start(void *th, void (*fn)(void *), void *arg) {
    if (faulty.fail_thread) return -1;
    return faulty.real->thread_start(th, fn, arg);
}

static hwtimer_threads faulty_table(void) {
    hwtimer_threads th = *faulty.real;
    th.mutex_init = faulty_mutex_init;
    th.mutex_destroy = faulty_mutex_destroy;
    th.cond_init = faulty_cond_init;
    th.cond_destroy = faulty_cond_destroy;
    th.thread_start = faulty_thread_start;
    return th;
}

/* A mutex or either condition variable that cannot be made: ETHREAD, and what was made
   is destroyed and freed. */
static void test_sync_objects_fail(void) {
    hwtimer_threads th;
    hwtimer_config cfg;
    fixture r;
    int which;
    if (!real_threads()) return;
    memset(&faulty, 0, sizeof faulty);
    faulty.real = real_threads();
    th = faulty_table();
    fixture_config(&r, &cfg, 0, MS, 8);
    cfg.threads = &th;
    for (which = 0; which <= 2; which++) {
        faulty.fail_mutex = which == 0;
        faulty.fail_cond_at = which; /* 1: the first cond_init, 2: the second */
        faulty.cond_inits = 0;
        CHECK_EQ(try_create(&cfg), HWTIMER_ETHREAD);
        CHECK_EQ(faulty.live_objects, 0);
        CHECK_EQ(r.mem.frees, r.mem.allocs);
    }
    faulty.fail_mutex = 0;
    faulty.fail_cond_at = 0;
    CHECK_EQ(try_create(&cfg), HWTIMER_OK);
    CHECK_EQ(faulty.live_objects, 0);
}

/* A worker that cannot start: schedule and start say ETHREAD and change nothing; once
   threads start again, the same timer works. */
static unsigned worker_shards; /* the same on a timer of shards, whose worker starts apart */

static void test_worker_cannot_start(void) {
    hwtimer_threads th;
    hwtimer_config cfg;
    fixture r;
    probe n;
    snapshot before;
    memset(&faulty, 0, sizeof faulty);
    faulty.real = test_threads();
    th = faulty_table();
    fixture_config(&r, &cfg, 0, MS, 8);
    cfg.clock_fn = NULL; /* the worker sleeps on the real clock */
    cfg.threads = &th;
    cfg.worker = 1;
    cfg.shards = worker_shards;
    r.t = create_or_die(&cfg);
    probes_init(&n, 1, NULL);
    faulty.fail_thread = 1;
    before = take_snapshot(r.t, &n.to);
    CHECK_EQ(hwtimer_start(r.t), HWTIMER_ETHREAD);
    CHECK_EQ(hwtimer_schedule(r.t, &n.to, MS, probe_fn, &n), HWTIMER_ETHREAD);
    CHECK_EQ(hwtimer_schedule_periodic(r.t, &n.to, MS, MS, probe_fn, &n), HWTIMER_ETHREAD);
    CHECK_UNCHANGED(before, r.t, &n.to);
    CHECK_EQ(hwtimer_timeout_state(&n.to), HWTIMER_IDLE);
    faulty.fail_thread = 0;
    CHECK_EQ(hwtimer_schedule(r.t, &n.to, MS, probe_fn, &n), HWTIMER_OK);
    CHECK(wait_for_count(&n.runs, 1, 5 * SEC));
    fixture_close(&r);
}

int main(void) {
    RUN_TEST(test_idle_initialisers);
    RUN_TEST(test_config_default);
    RUN_TEST(test_create_with_defaults);
    RUN_TEST(test_config_values);
    RUN_TEST(test_tick_times_wheel_overflow);
    RUN_TEST(test_largest_wheel);
    RUN_TEST(test_allocator_pairs);
    RUN_TEST(test_custom_allocator);
    RUN_TEST(test_allocation_failure);
    RUN_TEST(test_timeout_size);
    RUN_TEST(test_shards_config);
    RUN_TEST(test_thread_backends);
    RUN_TEST(test_user_threads_table);
    RUN_TEST(test_thread_objects_apart);
    RUN_TEST(test_incomplete_thread_tables);
    RUN_TEST(test_sync_objects_fail);
    if (test_threads()) { /* a worker thread needs a backend */
        RUN_TEST(test_worker_cannot_start);
        worker_shards = 2;
        RUN_TEST(test_worker_cannot_start);
    }
    return test_finish();
}
