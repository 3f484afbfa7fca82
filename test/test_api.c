/* test_api.c - every clause of SPEC.md that needs no second thread.

   All timers here are caller-driven and read a fake clock: the test sets the clock and
   calls hwtimer_advance itself, so every expectation is exact ("ran at boundary B", not
   "ran within 5 ms") and nothing depends on how fast the machine is. There are no timing
   assertions. The tick start S is deliberately not a multiple of the tick, so a timer
   that aligns boundaries to 0 instead of to its start fails the boundary checks. */
#include "harness.h"

#include <limits.h>

#define US 1000ull
#define MS (1000ull * US)
#define SEC (1000ull * MS)
#define HOUR (3600ull * SEC)
#define DAY (24ull * HOUR)
#define YEAR (365ull * DAY)

/* ---- fixture: a timer on a fake clock ------------------------------------------------ */

/* The timer keeps a pointer to `clock`, so a fixture must not move while it is open. */
typedef struct fixture {
    uint64_t clock;
    uint64_t start; /* S: the clock reading at hwtimer_create */
    uint64_t tick;
    hwtimer *t;
} fixture;

static void fixture_config(fixture *f, hwtimer_config *cfg, uint64_t start, uint64_t tick,
                           uint32_t ticks_per_wheel) {
    f->clock = start;
    f->start = start;
    f->tick = tick;
    f->t = NULL;
    test_fake_config(cfg, &f->clock, tick, ticks_per_wheel);
}

/* Every later call needs the timer, so a failure here ends the program. */
static void fixture_create(fixture *f, const hwtimer_config *cfg) {
    int rc = hwtimer_create(&f->t, cfg);
    if (rc != HWTIMER_OK || f->t == NULL) {
        fprintf(stderr, "fatal: hwtimer_create: %d %s\n", rc, hwtimer_strerror(rc));
        exit(1);
    }
}

static void fixture_open(fixture *f, uint64_t start, uint64_t tick, uint32_t ticks_per_wheel) {
    hwtimer_config cfg;
    fixture_config(f, &cfg, start, tick, ticks_per_wheel);
    fixture_create(f, &cfg);
}

static void fixture_close(fixture *f) {
    hwtimer_destroy(f->t);
    f->t = NULL;
}

/* Moves the clock and advances to it, as an event loop would. */
static size_t advance_to(fixture *f, uint64_t now) {
    f->clock = now;
    return hwtimer_advance(f->t, now);
}

/* The k-th tick boundary after S. */
static uint64_t tick_at(const fixture *f, uint64_t k) {
    return f->start + k * f->tick;
}

/* When SPEC says a timeout with this deadline fires: the first boundary S + k*tick >= D.
   UINT64_MAX when no boundary that late exists (the timeout never fires). */
static uint64_t boundary_of(const fixture *f, uint64_t deadline) {
    uint64_t diff, k;
    if (deadline <= f->start) {
        return f->start;
    }
    diff = deadline - f->start;
    k = diff / f->tick + (diff % f->tick != 0);
    if (k > (UINT64_MAX - f->start) / f->tick) {
        return UINT64_MAX;
    }
    return tick_at(f, k);
}

/* ---- probe: a timeout embedded in a record of what happened to it --------------------- */

typedef struct probe probe;
typedef void (*probe_action)(probe *p);

struct probe {
    hwtimer_timeout to; /* embedded, as SPEC intends */
    fixture *f;
    int id;
    int runs;
    uint64_t ran_at;        /* the clock during its last run */
    uint64_t deadline_seen; /* hwtimer_timeout_deadline during its last run */
    int state_seen;         /* hwtimer_timeout_state during its last run */
    unsigned long seq;      /* position of its last run among all runs */
    probe_action action;    /* extra work its callback does after recording, or NULL */
    probe *peer[3];         /* the timeouts the action works on */
    int result[3];          /* what the action's calls returned */
    size_t pending_seen[2]; /* hwtimer_pending before and after the action's calls */
    uint64_t delay;         /* for actions that schedule */
    int repeats;            /* for actions that re-arm: how many more times */
};

static unsigned long run_seq;

/* Every probe run in order, for the ordering checks. */
#define RUN_LOG_CAP 4096
static probe *run_log[RUN_LOG_CAP];
static size_t run_logged;

static void run_log_reset(void) {
    run_logged = 0;
}

static void probe_fn(hwtimer_timeout *to, void *arg) {
    probe *p = (probe *)arg;
    CHECK(to == &p->to);
    p->runs++;
    p->ran_at = p->f->clock;
    p->deadline_seen = hwtimer_timeout_deadline(to);
    p->state_seen = hwtimer_timeout_state(to);
    p->seq = ++run_seq;
    if (run_logged < RUN_LOG_CAP) {
        run_log[run_logged++] = p;
    }
    if (p->action != NULL) {
        p->action(p);
    }
}

/* A second callback, to see which of two callbacks a timeout kept. */
static int other_fn_runs;
static void other_fn(hwtimer_timeout *to, void *arg) {
    (void)to;
    (void)arg;
    other_fn_runs++;
}

static void probe_init(probe *p, fixture *f, int id) {
    memset(p, 0, sizeof *p);
    hwtimer_timeout_init(&p->to);
    p->f = f;
    p->id = id;
}

static void probes_init(probe *p, size_t n, fixture *f) {
    size_t i;
    for (i = 0; i < n; i++) {
        probe_init(&p[i], f, (int)i);
    }
}

/* The common setup: a 1 ms timer started at 0, and one probe whose callback runs `action`. */
static void open_with_probe(fixture *f, probe *p, uint32_t ticks_per_wheel, probe_action action) {
    fixture_open(f, 0, MS, ticks_per_wheel);
    probe_init(p, f, 0);
    p->action = action;
}

static int probe_schedule(probe *p, uint64_t delay) {
    return hwtimer_schedule(p->f->t, &p->to, delay, probe_fn, p);
}

static int probe_schedule_periodic(probe *p, uint64_t delay, uint64_t period) {
    return hwtimer_schedule_periodic(p->f->t, &p->to, delay, period, probe_fn, p);
}

static int probe_cancel(probe *p) {
    return hwtimer_cancel(p->f->t, &p->to);
}

/* When this probe must fire, from the deadline the timer reports. */
static uint64_t probe_boundary(const probe *p) {
    return boundary_of(p->f, hwtimer_timeout_deadline(&p->to));
}

/* A fixed-seed xorshift: the runs are reproducible. */
static uint64_t rng_next(uint64_t *state) {
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *state = x;
    return x;
}

static uint64_t rng_below(uint64_t *state, uint64_t bound) {
    return rng_next(state) % bound;
}

/* Schedules each probe with a random delay in [lo, lo + span), in nanoseconds, so
   deadlines fall anywhere inside ticks. */
static void schedule_random(probe *p, size_t n, uint64_t *rng, uint64_t lo, uint64_t span) {
    size_t i;
    for (i = 0; i < n; i++) {
        CHECK_EQ(probe_schedule(&p[i], lo + rng_below(rng, span)), HWTIMER_OK);
    }
}

/* Advances one tick at a time up to `last` and checks each probe ran once, exactly at
   the boundary of its deadline. */
static void step_and_check_exact(fixture *f, probe *p, size_t n, uint64_t last) {
    size_t i, fired = 0;
    uint64_t now;
    for (now = boundary_of(f, f->clock); now <= last; now += f->tick) {
        fired += advance_to(f, now);
    }
    CHECK_EQ(fired, n);
    for (i = 0; i < n; i++) {
        CHECK_EQ(p[i].runs, 1);
        CHECK_EQ(p[i].ran_at, probe_boundary(&p[i]));
    }
}

/* The earliest boundary among the probes that have not run. */
static uint64_t earliest_unrun_boundary(const probe *p, size_t n) {
    uint64_t best = UINT64_MAX;
    size_t i;
    for (i = 0; i < n; i++) {
        uint64_t b = probe_boundary(&p[i]);
        if (p[i].runs == 0 && b < best) {
            best = b;
        }
    }
    return best;
}

/* Drives the timer as an event loop does - sleep until hwtimer_next_expiry, advance -
   and checks SPEC's promise: next_expiry is never later than the next boundary and is
   always in the future right after an advance, so every wake-up makes progress and each
   probe runs exactly at its boundary. max_wakeups bounds the wake-ups: an answer that is
   merely "the next tick" would need millions. */
static void drain_by_next_expiry(fixture *f, probe *p, size_t n, size_t max_wakeups) {
    size_t wakeups = 0, fired = 0, i;
    while (hwtimer_pending(f->t) > 0 && wakeups <= max_wakeups) {
        uint64_t next = hwtimer_next_expiry(f->t);
        CHECK(next <= earliest_unrun_boundary(p, n));
        CHECK(next > f->clock);
        if (next <= f->clock) {
            break; /* no progress possible: already reported */
        }
        fired += advance_to(f, next);
        wakeups++;
    }
    CHECK(wakeups <= max_wakeups);
    CHECK_EQ(fired, n);
    CHECK_EQ(hwtimer_next_expiry(f->t), UINT64_MAX);
    for (i = 0; i < n; i++) {
        CHECK_EQ(p[i].runs, 1);
        CHECK_EQ(p[i].ran_at, probe_boundary(&p[i]));
    }
}

/* ---- probe actions: what callbacks do to the timer ------------------------------------ */

static void act_cancel_peers(probe *p) {
    size_t i;
    p->pending_seen[0] = hwtimer_pending(p->f->t);
    for (i = 0; i < 3; i++) {
        if (p->peer[i] != NULL) {
            p->result[i] = probe_cancel(p->peer[i]);
        }
    }
    p->pending_seen[1] = hwtimer_pending(p->f->t);
}

static void act_rearm(probe *p) {
    if (p->repeats > 0) {
        p->repeats--;
        p->result[0] = probe_schedule(p, p->delay);
    }
}

static void act_reschedule_self(probe *p) {
    if (p->repeats > 0) {
        p->repeats--;
        p->result[0] = hwtimer_reschedule(p->f->t, &p->to, p->delay);
    }
}

static void act_schedule_peer(probe *p) {
    p->result[0] = probe_schedule(p->peer[0], p->delay);
}

static void act_cancel_self(probe *p) {
    p->pending_seen[0] = hwtimer_pending(p->f->t);
    p->result[0] = probe_cancel(p);
    p->pending_seen[1] = hwtimer_pending(p->f->t);
}

static void act_stop(probe *p) {
    p->result[0] = (int)hwtimer_stop(p->f->t, NULL, NULL);
}

static void act_note_pending(probe *p) {
    p->pending_seen[0] = hwtimer_pending(p->f->t);
}

/* Overwrites its own node: the timer must neither read nor write it afterwards. */
static void act_scribble(probe *p) {
    memset(&p->to, 0xA5, sizeof p->to);
}

/* Reuses its own node as a brand-new one and schedules it again. */
static void act_reuse(probe *p) {
    memset(&p->to, 0, sizeof p->to);
    p->result[0] = probe_schedule(p, p->delay);
}

static int all_bytes_are(const void *mem, size_t size, unsigned char value) {
    const unsigned char *b = (const unsigned char *)mem;
    size_t i;
    for (i = 0; i < size; i++) {
        if (b[i] != value) {
            return 0;
        }
    }
    return 1;
}

/* ---- initialisation, configuration and argument errors -------------------------------- */

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

static void *malloc_with_ctx(size_t size, void *ctx) {
    (void)ctx;
    return malloc(size);
}

static void free_with_ctx(void *ptr, void *ctx) {
    (void)ctx;
    free(ptr);
}

static int create_rc(const hwtimer_config *cfg) {
    hwtimer *t = NULL;
    int rc = hwtimer_create(&t, cfg);
    if (rc == HWTIMER_OK) {
        hwtimer_destroy(t);
    }
    return rc;
}

static void test_config_errors(void) {
    hwtimer_config cfg;
    fixture f;

    fixture_config(&f, &cfg, 0, MS, 8);
    CHECK_EQ(hwtimer_create(NULL, &cfg), HWTIMER_EINVAL);
    CHECK_EQ(create_rc(&cfg), HWTIMER_OK);

    cfg.tick_ns = 0;
    CHECK_EQ(create_rc(&cfg), HWTIMER_EINVAL);
    cfg.tick_ns = MS;

    cfg.ticks_per_wheel = 0;
    CHECK_EQ(create_rc(&cfg), HWTIMER_EINVAL);
    cfg.ticks_per_wheel = (1u << 30) + 1;
    CHECK_EQ(create_rc(&cfg), HWTIMER_EINVAL);
    cfg.ticks_per_wheel = UINT32_MAX;
    CHECK_EQ(create_rc(&cfg), HWTIMER_EINVAL);
    cfg.ticks_per_wheel = 1; /* the smallest legal wheel */
    CHECK_EQ(create_rc(&cfg), HWTIMER_OK);

    /* tick * ticks_per_wheel does not fit in 64 bits */
    cfg.tick_ns = 1ull << 62;
    cfg.ticks_per_wheel = 8;
    CHECK_EQ(create_rc(&cfg), HWTIMER_EINVAL);
    cfg.tick_ns = UINT64_MAX;
    cfg.ticks_per_wheel = 2;
    CHECK_EQ(create_rc(&cfg), HWTIMER_EINVAL);
    cfg.tick_ns = MS;
    cfg.ticks_per_wheel = 8;

    /* a worker thread needs a thread backend */
    cfg.threads = NULL;
    cfg.worker = 1;
    CHECK_EQ(create_rc(&cfg), HWTIMER_EINVAL);
}

/* Extensions hwtimer.h documents beyond SPEC: NULL handling, allocator pairs. */
static void test_documented_extensions(void) {
    hwtimer_config cfg;
    hwtimer_stats stats;
    fixture f;
    hwtimer_destroy(NULL);
    CHECK_EQ(hwtimer_stop(NULL, NULL, NULL), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_timeout_state(NULL), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_timeout_deadline(NULL), 0);
    CHECK_EQ(hwtimer_pending(NULL), 0);
    CHECK_EQ(hwtimer_advance(NULL, 1), 0);
    CHECK_EQ(hwtimer_next_expiry(NULL), UINT64_MAX);
    CHECK_EQ(hwtimer_poll_timeout_ms(NULL), -1);
    CHECK_EQ(hwtimer_start(NULL), HWTIMER_EINVAL);
    hwtimer_stats_get(NULL, &stats);
    CHECK_EQ(stats.fired + stats.passes + stats.pending, 0);

    fixture_config(&f, &cfg, 0, MS, 8);
    cfg.alloc_fn = NULL;
    cfg.free_fn = free_with_ctx;
    CHECK_EQ(create_rc(&cfg), HWTIMER_EINVAL);
    cfg.alloc_fn = malloc_with_ctx;
    cfg.free_fn = NULL;
    CHECK_EQ(create_rc(&cfg), HWTIMER_EINVAL);
    cfg.free_fn = free_with_ctx;
    CHECK_EQ(create_rc(&cfg), HWTIMER_OK);

    fixture_create(&f, &cfg);
    CHECK_EQ(hwtimer_start(f.t), HWTIMER_OK); /* caller-driven: nothing to start */
    CHECK_EQ(hwtimer_stop(f.t, NULL, NULL), 0);
    CHECK_EQ(hwtimer_start(f.t), HWTIMER_ESTOPPED);
    fixture_close(&f);
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

/* A user-filled table: refused under HWTIMER_NO_THREADS, refused when a hook is missing
   (both documented in hwtimer.h), accepted otherwise. */
static void test_user_threads_table(void) {
    hwtimer_threads th;
    hwtimer_config cfg;
    fixture f;
    fixture_config(&f, &cfg, 0, MS, 8);
    fill_inert_threads(&th);
    cfg.threads = &th;
#if HWTIMER_TEST_MODE == 0
    CHECK_EQ(create_rc(&cfg), HWTIMER_EINVAL);
#else
    CHECK_EQ(create_rc(&cfg), HWTIMER_OK);
    th.cond_wait = NULL;
    CHECK_EQ(create_rc(&cfg), HWTIMER_EINVAL);
#endif
}

/* Which backends exist depends on the build; SPEC says absent ones are NULL. */
static void test_thread_backends(void) {
#if HWTIMER_TEST_MODE == 0
    CHECK(hwtimer_threads_default() == NULL);
    CHECK(hwtimer_threads_pthread() == NULL);
    CHECK(hwtimer_threads_c11() == NULL);
    CHECK(hwtimer_threads_win32() == NULL);
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

static void test_argument_errors(void) {
    fixture f;
    probe p;
    hwtimer_timeout never = HWTIMER_TIMEOUT_INIT;
    fixture_open(&f, 5 * MS, MS, 8);
    probe_init(&p, &f, 0);

    CHECK_EQ(hwtimer_schedule(NULL, &p.to, MS, probe_fn, &p), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_schedule(f.t, NULL, MS, probe_fn, &p), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_schedule(f.t, &p.to, MS, NULL, &p), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_schedule_at(NULL, &p.to, MS, probe_fn, &p), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_schedule_at(f.t, NULL, MS, probe_fn, &p), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_schedule_at(f.t, &p.to, MS, NULL, &p), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_schedule_periodic(NULL, &p.to, MS, MS, probe_fn, &p), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_schedule_periodic(f.t, NULL, MS, MS, probe_fn, &p), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_schedule_periodic(f.t, &p.to, MS, MS, NULL, &p), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_schedule_periodic(f.t, &p.to, MS, 0, probe_fn, &p), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_reschedule(NULL, &p.to, MS), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_reschedule(f.t, NULL, MS), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_reschedule(f.t, &never, MS), HWTIMER_EINVAL); /* never scheduled */
    CHECK_EQ(hwtimer_cancel(NULL, &p.to), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_cancel(f.t, NULL), HWTIMER_EINVAL);

    /* nothing of that left a trace */
    CHECK_EQ(hwtimer_timeout_state(&p.to), HWTIMER_IDLE);
    CHECK_EQ(hwtimer_timeout_state(&never), HWTIMER_IDLE);
    CHECK_EQ(hwtimer_pending(f.t), 0);
    CHECK_EQ(hwtimer_next_expiry(f.t), UINT64_MAX);
    CHECK_EQ(advance_to(&f, tick_at(&f, 100)), 0);
    CHECK_EQ(p.runs, 0);
    /* and a failed periodic schedule does not make the node reschedulable */
    CHECK_EQ(hwtimer_reschedule(f.t, &p.to, MS), HWTIMER_EINVAL);
    fixture_close(&f);
}

static void test_strerror(void) {
    static const int codes[] = {HWTIMER_OK,       HWTIMER_EINVAL, HWTIMER_ENOMEM,
                                HWTIMER_EFULL,    HWTIMER_ESTOPPED, HWTIMER_EBUSY,
                                HWTIMER_EWORKER,  HWTIMER_ETHREAD};
    enum { N = sizeof codes / sizeof codes[0] };
    const char *text[N];
    size_t i, j;
    for (i = 0; i < N; i++) {
        text[i] = hwtimer_strerror(codes[i]);
        CHECK(text[i] != NULL && text[i][0] != '\0');
        for (j = 0; j < i && text[i] != NULL; j++) {
            CHECK(text[j] == NULL || strcmp(text[i], text[j]) != 0);
        }
    }
    CHECK(hwtimer_strerror(-12345) != NULL);
    CHECK(hwtimer_strerror(12345) != NULL);
    CHECK(hwtimer_strerror(INT_MIN) != NULL);
}

static void test_timeout_size(void) {
    if (sizeof(void *) == 8) {
        CHECK(sizeof(hwtimer_timeout) <= 64);
    }
}

/* ---- when timeouts fire ---------------------------------------------------------------- */

/* Never early, never a tick late: for deadlines anywhere inside a tick, scheduled from
   anywhere inside a tick, advancing to B - 1 runs nothing and advancing to B runs it. */
static void test_exact_boundary(void) {
    static const uint64_t delays[] = {1, MS - 1, MS, MS + 1, 5 * MS + 17, 64 * MS, 1000 * MS + 1};
    static const uint64_t offsets[] = {0, 1, MS / 2, MS - 1};
    fixture f;
    size_t i, j;
    fixture_open(&f, 7 * MS + 123, MS, 8);
    for (i = 0; i < sizeof offsets / sizeof offsets[0]; i++) {
        for (j = 0; j < sizeof delays / sizeof delays[0]; j++) {
            probe p;
            uint64_t now = boundary_of(&f, f.clock) + offsets[i], b;
            probe_init(&p, &f, 0);
            f.clock = now;
            CHECK_EQ(probe_schedule(&p, delays[j]), HWTIMER_OK);
            CHECK_EQ(hwtimer_timeout_deadline(&p.to), now + delays[j]);
            b = probe_boundary(&p);
            CHECK_EQ(advance_to(&f, b - 1), 0);
            CHECK_EQ(p.runs, 0);
            CHECK_EQ(advance_to(&f, b), 1);
            CHECK_EQ(p.runs, 1);
            CHECK_EQ(p.ran_at, b);
            CHECK(p.ran_at >= now + delays[j]);
        }
    }
    fixture_close(&f);
}

/* Callbacks run in order of their boundaries, both one tick at a time and in one jump. */
static void test_order_across_ticks(void) {
    enum { N = 64 };
    probe p[N];
    fixture f;
    uint64_t rng = 0x9E3779B97F4A7C15ull;
    size_t i;

    fixture_open(&f, 3 * MS + 5, MS, 4);
    probes_init(p, N, &f);
    schedule_random(p, N, &rng, 0, 300 * MS);
    CHECK_EQ(hwtimer_pending(f.t), N);
    step_and_check_exact(&f, p, N, tick_at(&f, 301));
    fixture_close(&f);

    fixture_open(&f, 3 * MS + 5, MS, 4);
    probes_init(p, N, &f);
    schedule_random(p, N, &rng, 0, 300 * MS);
    run_log_reset();
    CHECK_EQ(advance_to(&f, tick_at(&f, 400)), N);
    CHECK_EQ(run_logged, N);
    for (i = 1; i < run_logged; i++) {
        CHECK(probe_boundary(run_log[i - 1]) <= probe_boundary(run_log[i]));
    }
    for (i = 0; i < N; i++) {
        CHECK_EQ(p[i].runs, 1);
    }
    CHECK_EQ(hwtimer_pending(f.t), 0);
    fixture_close(&f);
}

/* One advance call over ten years of 1 ms ticks: everything due runs, in order, and the
   return value counts it; what is not due yet stays pending. */
static void test_jump_ten_years(void) {
    static const uint64_t delays[] = {9 * YEAR + 300 * DAY, MS, YEAR, HOUR, 5 * YEAR + 1,
                                      DAY, 10 * YEAR, 11 * YEAR};
    enum { N = sizeof delays / sizeof delays[0] };
    probe p[N];
    fixture f;
    size_t i;
    fixture_open(&f, 42 * MS, MS, 512);
    probes_init(p, N, &f);
    for (i = 0; i < N; i++) {
        CHECK_EQ(probe_schedule(&p[i], delays[i]), HWTIMER_OK);
    }
    run_log_reset();
    CHECK_EQ(advance_to(&f, f.start + 10 * YEAR), N - 1);
    CHECK_EQ(run_logged, N - 1);
    for (i = 1; i < run_logged; i++) {
        CHECK(probe_boundary(run_log[i - 1]) <= probe_boundary(run_log[i]));
    }
    CHECK_EQ(p[N - 1].runs, 0);
    CHECK_EQ(hwtimer_pending(f.t), 1);
    CHECK(hwtimer_next_expiry(f.t) <= f.start + 11 * YEAR);
    CHECK_EQ(advance_to(&f, f.start + 11 * YEAR - 1), 0);
    CHECK_EQ(advance_to(&f, f.start + 11 * YEAR), 1);
    CHECK_EQ(p[N - 1].runs, 1);
    fixture_close(&f);
}

/* A `now` below the previous one (or below S) is a no-op returning 0. */
static void test_now_going_backwards(void) {
    fixture f;
    probe p;
    fixture_open(&f, 1000 * MS, MS, 8);
    probe_init(&p, &f, 0);
    CHECK_EQ(hwtimer_advance(f.t, 5), 0); /* before the timer's start */
    CHECK_EQ(advance_to(&f, tick_at(&f, 10)), 0);
    CHECK_EQ(probe_schedule(&p, 2 * MS), HWTIMER_OK);
    CHECK_EQ(hwtimer_advance(f.t, tick_at(&f, 5)), 0);
    CHECK_EQ(hwtimer_advance(f.t, 0), 0);
    CHECK_EQ(p.runs, 0);
    CHECK_EQ(hwtimer_pending(f.t), 1);
    CHECK_EQ(advance_to(&f, tick_at(&f, 11)), 0);
    CHECK_EQ(advance_to(&f, tick_at(&f, 12)), 1);
    CHECK_EQ(p.ran_at, tick_at(&f, 12));
    fixture_close(&f);
}

/* Delay 0 fires at the first boundary at or after the scheduling time: on the boundary
   itself that is the next advance even with the same `now`; inside a tick, its end. */
static void test_delay_zero(void) {
    fixture f;
    probe p;
    fixture_open(&f, 3 * MS + 7, MS, 8);
    probe_init(&p, &f, 0);

    f.clock = tick_at(&f, 2);
    CHECK_EQ(probe_schedule(&p, 0), HWTIMER_OK);
    CHECK_EQ(hwtimer_timeout_deadline(&p.to), tick_at(&f, 2));
    CHECK_EQ(advance_to(&f, tick_at(&f, 2)), 1);
    CHECK_EQ(p.ran_at, tick_at(&f, 2));

    /* the timer has already processed this boundary */
    CHECK_EQ(probe_schedule(&p, 0), HWTIMER_OK);
    CHECK(hwtimer_next_expiry(f.t) <= tick_at(&f, 2));
    CHECK_EQ(hwtimer_poll_timeout_ms(f.t), 0);
    CHECK_EQ(advance_to(&f, tick_at(&f, 2)), 1);
    CHECK_EQ(p.runs, 2);

    f.clock = tick_at(&f, 2) + MS / 2;
    CHECK_EQ(probe_schedule(&p, 0), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, tick_at(&f, 3) - 1), 0);
    CHECK_EQ(advance_to(&f, tick_at(&f, 3)), 1);
    CHECK_EQ(p.ran_at, tick_at(&f, 3));
    fixture_close(&f);
}

/* Deadlines already in the past (schedule_at) fire on the next advance. */
static void test_deadline_in_the_past(void) {
    fixture f;
    probe p[3];
    fixture_open(&f, 50 * MS, MS, 8);
    probes_init(p, 3, &f);
    CHECK_EQ(advance_to(&f, tick_at(&f, 20)), 0);
    CHECK_EQ(hwtimer_schedule_at(f.t, &p[0].to, tick_at(&f, 19), probe_fn, &p[0]), HWTIMER_OK);
    CHECK_EQ(hwtimer_schedule_at(f.t, &p[1].to, tick_at(&f, 3) + 1, probe_fn, &p[1]), HWTIMER_OK);
    CHECK_EQ(hwtimer_schedule_at(f.t, &p[2].to, 0, probe_fn, &p[2]), HWTIMER_OK);
    CHECK_EQ(hwtimer_timeout_deadline(&p[2].to), 0);
    CHECK_EQ(hwtimer_pending(f.t), 3);
    CHECK_EQ(hwtimer_poll_timeout_ms(f.t), 0);
    run_log_reset();
    CHECK_EQ(advance_to(&f, tick_at(&f, 20)), 3);
    CHECK_EQ(p[0].runs + p[1].runs + p[2].runs, 3);
    CHECK_EQ(run_logged, 3); /* in order of boundary: S, tick 4, tick 19 */
    CHECK(run_logged == 3 && run_log[0] == &p[2] && run_log[1] == &p[1] && run_log[2] == &p[0]);
    fixture_close(&f);
}

/* UINT64_MAX as delay: the deadline is the end of time and it never fires. */
static void test_max_delay_never_fires(void) {
    fixture f;
    probe p[2];
    fixture_open(&f, 9 * MS + 1, MS, 8);
    probes_init(p, 2, &f);
    CHECK_EQ(probe_schedule(&p[0], UINT64_MAX), HWTIMER_OK);
    CHECK_EQ(probe_schedule_periodic(&p[1], UINT64_MAX, 1), HWTIMER_OK);
    CHECK_EQ(hwtimer_timeout_deadline(&p[0].to), UINT64_MAX);
    CHECK_EQ(hwtimer_timeout_deadline(&p[1].to), UINT64_MAX);
    CHECK(hwtimer_poll_timeout_ms(f.t) > 0);
    CHECK_EQ(advance_to(&f, UINT64_MAX - 1), 0);
    CHECK_EQ(p[0].runs + p[1].runs, 0);
    CHECK_EQ(hwtimer_pending(f.t), 2);
    CHECK_EQ(hwtimer_timeout_state(&p[0].to), HWTIMER_PENDING);
    CHECK_EQ(probe_cancel(&p[0]), 1);
    CHECK_EQ(probe_cancel(&p[1]), 1);
    fixture_close(&f);
}

/* N + d past UINT64_MAX clamps to UINT64_MAX (never fires); a deadline just short of it
   still fires at its boundary; a periodic whose next deadline would wrap never fires again. */
static void test_overflow_clamp(void) {
    fixture f;
    probe p[4];
    uint64_t near_end;
    fixture_open(&f, 4 * MS + 3, MS, 4);
    probes_init(p, 4, &f);
    near_end = boundary_of(&f, UINT64_MAX - 20 * MS);
    f.clock = near_end;
    CHECK_EQ(probe_schedule(&p[0], 100 * MS), HWTIMER_OK);
    CHECK_EQ(hwtimer_timeout_deadline(&p[0].to), UINT64_MAX);
    CHECK_EQ(probe_schedule(&p[1], 3 * MS), HWTIMER_OK);
    CHECK_EQ(hwtimer_timeout_deadline(&p[1].to), near_end + 3 * MS);
    CHECK_EQ(probe_schedule_periodic(&p[2], MS, 1ull << 63), HWTIMER_OK);
    CHECK_EQ(probe_schedule(&p[3], 10 * MS), HWTIMER_OK);
    f.clock = near_end + 5 * MS;
    CHECK_EQ(hwtimer_reschedule(f.t, &p[3].to, UINT64_MAX / 2), HWTIMER_OK);
    CHECK_EQ(hwtimer_timeout_deadline(&p[3].to), UINT64_MAX);

    CHECK_EQ(advance_to(&f, UINT64_MAX - 1), 2);
    CHECK_EQ(p[0].runs, 0);
    CHECK_EQ(p[1].runs, 1);
    CHECK_EQ(p[1].ran_at, UINT64_MAX - 1);
    CHECK_EQ(p[2].runs, 1);
    CHECK_EQ(hwtimer_timeout_deadline(&p[2].to), UINT64_MAX);
    CHECK_EQ(p[3].runs, 0);
    CHECK_EQ(hwtimer_pending(f.t), 3);
    fixture_close(&f);
}

/* ---- schedule, cancel, reschedule -------------------------------------------------------- */

/* Scheduling a pending timeout is EBUSY and changes nothing at all. */
static void test_schedule_pending_is_busy(void) {
    fixture f;
    probe p;
    int other_arg = 0;
    fixture_open(&f, 2 * MS + 9, MS, 8);
    probe_init(&p, &f, 0);
    other_fn_runs = 0;
    CHECK_EQ(probe_schedule(&p, 5 * MS), HWTIMER_OK);
    CHECK_EQ(hwtimer_schedule(f.t, &p.to, MS, other_fn, &other_arg), HWTIMER_EBUSY);
    CHECK_EQ(hwtimer_schedule_at(f.t, &p.to, f.clock, other_fn, &other_arg), HWTIMER_EBUSY);
    CHECK_EQ(hwtimer_schedule_periodic(f.t, &p.to, MS, MS, other_fn, &other_arg),
             HWTIMER_EBUSY);
    CHECK_EQ(hwtimer_timeout_deadline(&p.to), f.start + 5 * MS);
    CHECK_EQ(hwtimer_timeout_state(&p.to), HWTIMER_PENDING);
    CHECK_EQ(hwtimer_pending(f.t), 1);
    CHECK_EQ(advance_to(&f, tick_at(&f, 4)), 0);
    CHECK_EQ(advance_to(&f, tick_at(&f, 5)), 1);
    CHECK_EQ(other_fn_runs, 0);
    CHECK_EQ(p.runs, 1);
    CHECK_EQ(p.ran_at, tick_at(&f, 5));
    CHECK_EQ(advance_to(&f, tick_at(&f, 50)), 0); /* one-shot: once */
    CHECK_EQ(p.runs, 1);
    fixture_close(&f);
}

static void test_cancel(void) {
    fixture f;
    probe p[3];
    fixture_open(&f, 6 * MS, MS, 8);
    probes_init(p, 3, &f);
    CHECK_EQ(probe_cancel(&p[0]), 0); /* never scheduled */
    CHECK_EQ(probe_schedule(&p[0], 2 * MS), HWTIMER_OK);
    CHECK_EQ(probe_schedule(&p[1], 2 * MS), HWTIMER_OK);
    CHECK_EQ(probe_schedule(&p[2], 4 * MS), HWTIMER_OK);
    CHECK_EQ(hwtimer_pending(f.t), 3);
    CHECK_EQ(probe_cancel(&p[0]), 1);
    CHECK_EQ(hwtimer_timeout_state(&p[0].to), HWTIMER_CANCELLED);
    CHECK_EQ(hwtimer_pending(f.t), 2);
    CHECK_EQ(probe_cancel(&p[0]), 0);
    CHECK_EQ(hwtimer_pending(f.t), 2);
    CHECK_EQ(advance_to(&f, tick_at(&f, 2)), 1);
    CHECK_EQ(p[0].runs, 0);
    CHECK_EQ(p[1].runs, 1);
    CHECK_EQ(probe_cancel(&p[1]), 0); /* already ran */
    CHECK_EQ(hwtimer_timeout_state(&p[1].to), HWTIMER_EXPIRED);
    CHECK_EQ(probe_cancel(&p[2]), 1);
    CHECK_EQ(hwtimer_pending(f.t), 0);
    CHECK_EQ(hwtimer_next_expiry(f.t), UINT64_MAX);
    CHECK_EQ(advance_to(&f, tick_at(&f, 100)), 0);
    CHECK_EQ(p[2].runs, 0);
    /* a cancelled node can be scheduled again */
    CHECK_EQ(probe_schedule(&p[0], MS), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, tick_at(&f, 101)), 1);
    CHECK_EQ(p[0].runs, 1);
    fixture_close(&f);
}

/* A pending timeout moves to N + d (later or earlier), keeps its callback, fires once. */
static void test_reschedule_pending(void) {
    fixture f;
    probe p[2];
    fixture_open(&f, 8 * MS, MS, 4);
    probes_init(p, 2, &f);
    CHECK_EQ(probe_schedule(&p[0], 10 * MS), HWTIMER_OK);
    CHECK_EQ(probe_schedule(&p[1], 50 * MS), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, tick_at(&f, 3)), 0);
    CHECK_EQ(hwtimer_reschedule(f.t, &p[0].to, 10 * MS), HWTIMER_OK); /* later */
    CHECK_EQ(hwtimer_reschedule(f.t, &p[1].to, 2 * MS), HWTIMER_OK);  /* earlier */
    CHECK_EQ(hwtimer_timeout_deadline(&p[0].to), tick_at(&f, 13));
    CHECK_EQ(hwtimer_timeout_deadline(&p[1].to), tick_at(&f, 5));
    CHECK_EQ(hwtimer_pending(f.t), 2);
    CHECK_EQ(hwtimer_timeout_state(&p[0].to), HWTIMER_PENDING);
    CHECK_EQ(advance_to(&f, tick_at(&f, 4)), 0);
    CHECK_EQ(advance_to(&f, tick_at(&f, 5)), 1);
    CHECK_EQ(p[1].ran_at, tick_at(&f, 5));
    CHECK_EQ(advance_to(&f, tick_at(&f, 12)), 0); /* the old deadline 10 passed unnoticed */
    CHECK_EQ(advance_to(&f, tick_at(&f, 13)), 1);
    CHECK_EQ(p[0].ran_at, tick_at(&f, 13));
    CHECK_EQ(advance_to(&f, tick_at(&f, 60)), 0); /* p[1]'s old deadline 50 too */
    CHECK_EQ(p[0].runs + p[1].runs, 2);
    fixture_close(&f);
}

/* A timeout that is not pending (run, cancelled) is scheduled again with its last
   callback and argument; one never scheduled is EINVAL. */
static void test_reschedule_not_pending(void) {
    fixture f;
    probe p;
    hwtimer_timeout fresh = HWTIMER_TIMEOUT_INIT;
    fixture_open(&f, 8 * MS, MS, 4);
    probe_init(&p, &f, 0);
    other_fn_runs = 0;
    CHECK_EQ(hwtimer_reschedule(f.t, &fresh, MS), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_timeout_state(&fresh), HWTIMER_IDLE);

    CHECK_EQ(probe_schedule(&p, MS), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, tick_at(&f, 1)), 1);
    CHECK_EQ(hwtimer_reschedule(f.t, &p.to, 3 * MS), HWTIMER_OK);
    CHECK_EQ(hwtimer_timeout_state(&p.to), HWTIMER_PENDING);
    CHECK_EQ(hwtimer_pending(f.t), 1);
    CHECK_EQ(advance_to(&f, tick_at(&f, 3)), 0);
    CHECK_EQ(advance_to(&f, tick_at(&f, 4)), 1);
    CHECK_EQ(p.runs, 2); /* probe_fn with the probe as argument, as at first */

    CHECK_EQ(probe_schedule(&p, 5 * MS), HWTIMER_OK);
    CHECK_EQ(probe_cancel(&p), 1);
    CHECK_EQ(hwtimer_reschedule(f.t, &p.to, 2 * MS), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, tick_at(&f, 6)), 1);
    CHECK_EQ(p.runs, 3);
    CHECK_EQ(p.ran_at, tick_at(&f, 6));
    CHECK_EQ(other_fn_runs, 0);
    fixture_close(&f);
}

/* Rescheduling a periodic timeout (pending or cancelled) keeps its period. */
static void test_reschedule_periodic(void) {
    fixture f;
    probe p;
    open_with_probe(&f, &p, 4, NULL);
    CHECK_EQ(probe_schedule_periodic(&p, 2 * MS, 3 * MS), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, tick_at(&f, 2)), 1);
    CHECK_EQ(hwtimer_timeout_deadline(&p.to), tick_at(&f, 5));
    CHECK_EQ(hwtimer_reschedule(f.t, &p.to, 7 * MS), HWTIMER_OK);
    CHECK_EQ(hwtimer_timeout_deadline(&p.to), tick_at(&f, 9));
    CHECK_EQ(hwtimer_pending(f.t), 1);
    CHECK_EQ(advance_to(&f, tick_at(&f, 8)), 0);
    CHECK_EQ(advance_to(&f, tick_at(&f, 9)), 1);
    CHECK_EQ(hwtimer_timeout_deadline(&p.to), tick_at(&f, 12));
    CHECK_EQ(advance_to(&f, tick_at(&f, 12)), 1);

    CHECK_EQ(probe_cancel(&p), 1);
    CHECK_EQ(advance_to(&f, tick_at(&f, 20)), 0);
    CHECK_EQ(hwtimer_reschedule(f.t, &p.to, MS), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, tick_at(&f, 21)), 1);
    CHECK_EQ(advance_to(&f, tick_at(&f, 24)), 1); /* still every 3 ms */
    CHECK_EQ(p.runs, 5);
    CHECK_EQ(hwtimer_pending(f.t), 1);
    fixture_close(&f);
}

/* ---- periodic timeouts ------------------------------------------------------------------- */

/* Fixed rate: runs for D, D+p, D+2p, ... each at its own boundary, also when p is not a
   multiple of the tick, and stays pending (even while its callback runs). */
static void test_periodic_fixed_rate(void) {
    fixture f;
    probe p;
    uint64_t k, now;
    const uint64_t period = 2 * MS + MS / 2;
    fixture_open(&f, 1 * MS + 77, MS, 4);
    probe_init(&p, &f, 0);
    p.action = act_note_pending;
    CHECK_EQ(probe_schedule_periodic(&p, 3 * MS, period), HWTIMER_OK);
    k = 0;
    for (now = tick_at(&f, 1); now <= tick_at(&f, 60); now += f.tick) {
        uint64_t due = boundary_of(&f, f.start + 3 * MS + k * period);
        CHECK_EQ(advance_to(&f, now), now == due ? 1 : 0);
        if (now == due) {
            k++;
            CHECK_EQ(p.ran_at, due);
            CHECK_EQ(p.pending_seen[0], 1);
            CHECK_EQ(hwtimer_timeout_deadline(&p.to), f.start + 3 * MS + k * period);
            CHECK_EQ(hwtimer_timeout_state(&p.to), HWTIMER_PENDING);
        }
    }
    CHECK_EQ((uint64_t)p.runs, k);
    CHECK(k >= 20);
    CHECK_EQ(hwtimer_pending(f.t), 1);
    fixture_close(&f);
}

/* A jump over several periods runs it once; its next deadline is the first D + k*p
   strictly after now, so the missed runs are skipped, not made up. */
static void test_periodic_jump_skips(void) {
    fixture f;
    probe p;
    open_with_probe(&f, &p, 4, NULL);
    CHECK_EQ(probe_schedule_periodic(&p, 2 * MS, 10 * MS), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, tick_at(&f, 37)), 1); /* D = 2, jump past 12, 22, 32 */
    CHECK_EQ(p.runs, 1);
    CHECK_EQ(hwtimer_timeout_deadline(&p.to), tick_at(&f, 42));
    CHECK_EQ(advance_to(&f, tick_at(&f, 41)), 0);
    CHECK_EQ(advance_to(&f, tick_at(&f, 42)), 1);
    CHECK_EQ(hwtimer_timeout_deadline(&p.to), tick_at(&f, 52)); /* now == D+k*p: next one */
    CHECK_EQ(advance_to(&f, tick_at(&f, 52) + 10 * YEAR), 1);
    CHECK_EQ(p.runs, 3);
    CHECK(hwtimer_timeout_deadline(&p.to) > f.clock);
    CHECK(hwtimer_timeout_deadline(&p.to) <= f.clock + 10 * MS);
    fixture_close(&f);
}

/* A period shorter than the tick runs once per tick, never twice in one pass. */
static void test_periodic_shorter_than_tick(void) {
    fixture f;
    probe p;
    uint64_t k;
    open_with_probe(&f, &p, 8, NULL);
    CHECK_EQ(probe_schedule_periodic(&p, MS, 300 * US), HWTIMER_OK);
    for (k = 1; k <= 20; k++) {
        CHECK_EQ(advance_to(&f, tick_at(&f, k)), 1);
        CHECK(hwtimer_timeout_deadline(&p.to) > tick_at(&f, k));
    }
    CHECK_EQ(p.runs, 20);
    fixture_close(&f);
}

/* Cancelling a periodic timeout from its own callback returns 1 and ends it. */
static void test_periodic_cancel_from_callback(void) {
    fixture f;
    probe p;
    open_with_probe(&f, &p, 8, act_cancel_self);
    CHECK_EQ(probe_schedule_periodic(&p, MS, MS), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, tick_at(&f, 1)), 1);
    CHECK_EQ(p.result[0], 1);
    CHECK_EQ(p.pending_seen[0], 1);
    CHECK_EQ(p.pending_seen[1], 0);
    CHECK_EQ(hwtimer_pending(f.t), 0);
    CHECK_EQ(advance_to(&f, tick_at(&f, 10)), 0);
    CHECK_EQ(p.runs, 1);
    CHECK_EQ(hwtimer_timeout_state(&p.to), HWTIMER_CANCELLED);
    fixture_close(&f);
}

/* A periodic timeout is pending while its callback runs: scheduling it there is EBUSY, and
   rescheduling it there sets its next deadline to N + d, from which its period goes on. */
static void act_periodic_moves_itself(probe *p) {
    if (p->repeats > 0) {
        p->repeats--;
        p->result[0] = probe_schedule(p, MS);
        p->result[1] = hwtimer_reschedule(p->f->t, &p->to, p->delay);
    }
}

static void test_periodic_reschedule_from_callback(void) {
    fixture f;
    probe p;
    open_with_probe(&f, &p, 4, act_periodic_moves_itself);
    p.delay = 5 * MS;
    p.repeats = 1;
    CHECK_EQ(probe_schedule_periodic(&p, 2 * MS, 10 * MS), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, tick_at(&f, 2)), 1);
    CHECK_EQ(p.result[0], HWTIMER_EBUSY);
    CHECK_EQ(p.result[1], HWTIMER_OK);
    CHECK_EQ(hwtimer_timeout_deadline(&p.to), tick_at(&f, 7));
    CHECK_EQ(hwtimer_pending(f.t), 1);
    CHECK_EQ(advance_to(&f, tick_at(&f, 6)), 0);
    CHECK_EQ(advance_to(&f, tick_at(&f, 7)), 1);
    CHECK_EQ(advance_to(&f, tick_at(&f, 16)), 0);
    CHECK_EQ(advance_to(&f, tick_at(&f, 17)), 1);
    CHECK_EQ(p.runs, 3);
    fixture_close(&f);
}

/* ---- callbacks that use the timer --------------------------------------------------------- */

/* A one-shot re-arms itself (schedule or reschedule) from its callback; re-arming with
   delay 0 does not run it again in the same pass, however long the pass. */
static void test_rearm_from_callback(void) {
    fixture f;
    probe p;
    open_with_probe(&f, &p, 4, act_rearm);
    p.delay = MS;
    p.repeats = 4;
    CHECK_EQ(probe_schedule(&p, MS), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, tick_at(&f, 1)), 1);
    CHECK_EQ(p.result[0], HWTIMER_OK);
    CHECK_EQ(advance_to(&f, tick_at(&f, 2)), 1);
    CHECK_EQ(advance_to(&f, tick_at(&f, 3)), 1);
    CHECK_EQ(advance_to(&f, tick_at(&f, 4)), 1);
    CHECK_EQ(advance_to(&f, tick_at(&f, 5)), 1);
    CHECK_EQ(advance_to(&f, tick_at(&f, 6)), 0);
    CHECK_EQ(p.runs, 5);
    CHECK_EQ(hwtimer_pending(f.t), 0);

    p.delay = 0;
    p.repeats = 1000;
    CHECK_EQ(probe_schedule(&p, 0), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, tick_at(&f, 6) + YEAR), 1);
    CHECK_EQ(hwtimer_pending(f.t), 1);
    CHECK_EQ(advance_to(&f, tick_at(&f, 6) + YEAR), 1); /* same now: due, so it runs */
    CHECK_EQ(p.runs, 7);

    p.action = act_reschedule_self;
    p.delay = 2 * MS;
    p.repeats = 1;
    CHECK_EQ(probe_cancel(&p), 1);
    CHECK_EQ(probe_schedule(&p, MS), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, f.clock + MS), 1);
    CHECK_EQ(p.result[0], HWTIMER_OK);
    CHECK_EQ(advance_to(&f, f.clock + MS), 0);
    CHECK_EQ(advance_to(&f, f.clock + MS), 1);
    CHECK_EQ(p.runs, 9);
    fixture_close(&f);
}

/* A callback schedules another timeout with delay 0: it waits for the next advance. */
static void test_schedule_delay_zero_from_callback(void) {
    fixture f;
    probe p[2];
    fixture_open(&f, 0, MS, 4);
    probes_init(p, 2, &f);
    p[0].action = act_schedule_peer;
    p[0].peer[0] = &p[1];
    p[0].delay = 0;
    CHECK_EQ(probe_schedule(&p[0], 3 * MS), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, tick_at(&f, 100)), 1);
    CHECK_EQ(p[0].result[0], HWTIMER_OK);
    CHECK_EQ(p[1].runs, 0);
    CHECK_EQ(hwtimer_pending(f.t), 1);
    CHECK_EQ(advance_to(&f, tick_at(&f, 100)), 1);
    CHECK_EQ(p[1].runs, 1);
    CHECK_EQ(p[1].ran_at, tick_at(&f, 100));
    fixture_close(&f);
}

/* The first of three timeouts due in the same tick cancels the other two: they do not
   run, both cancels return 1, and the pending count drops by exactly 2. */
static void test_cancel_peers_in_same_tick(void) {
    fixture f;
    probe p[3];
    size_t i, ran = 0;
    fixture_open(&f, 0, MS, 4);
    probes_init(p, 3, &f);
    for (i = 0; i < 3; i++) {
        p[i].action = act_cancel_peers;
        p[i].peer[0] = &p[(i + 1) % 3];
        p[i].peer[1] = &p[(i + 2) % 3];
        CHECK_EQ(probe_schedule(&p[i], 7 * MS), HWTIMER_OK);
    }
    CHECK_EQ(advance_to(&f, tick_at(&f, 7)), 1);
    for (i = 0; i < 3; i++) {
        if (p[i].runs == 1) {
            ran++;
            CHECK_EQ(p[i].result[0], 1);
            CHECK_EQ(p[i].result[1], 1);
            CHECK_EQ(p[i].pending_seen[0] - p[i].pending_seen[1], 2);
            CHECK_EQ(p[i].pending_seen[1], 0);
        }
    }
    CHECK_EQ(ran, 1);
    CHECK_EQ(hwtimer_pending(f.t), 0);
    CHECK_EQ(advance_to(&f, tick_at(&f, 50)), 0);
    fixture_close(&f);
}

/* In one long jump, an early callback cancels one due later in the same pass (it must not
   run) and tries to cancel one that already ran (0). */
static void test_cancel_peers_later_in_pass(void) {
    fixture f;
    probe p[4];
    fixture_open(&f, 0, MS, 4);
    probes_init(p, 4, &f);
    p[1].action = act_cancel_peers;
    p[1].peer[0] = &p[0]; /* ran before */
    p[1].peer[1] = &p[2]; /* due later in this pass */
    p[1].peer[2] = &p[3]; /* due after this pass */
    CHECK_EQ(probe_schedule(&p[0], 1 * MS), HWTIMER_OK);
    CHECK_EQ(probe_schedule(&p[1], 3 * MS), HWTIMER_OK);
    CHECK_EQ(probe_schedule(&p[2], 90 * MS), HWTIMER_OK);
    CHECK_EQ(probe_schedule(&p[3], 900 * MS), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, tick_at(&f, 100)), 2);
    CHECK_EQ(p[1].result[0], 0);
    CHECK_EQ(p[1].result[1], 1);
    CHECK_EQ(p[1].result[2], 1);
    CHECK_EQ(p[1].pending_seen[0], 2);
    CHECK_EQ(p[1].pending_seen[1], 0);
    CHECK_EQ(p[2].runs + p[3].runs, 0);
    CHECK_EQ(hwtimer_pending(f.t), 0);
    CHECK_EQ(advance_to(&f, tick_at(&f, 1000)), 0);
    fixture_close(&f);
}

/* A one-shot's callback owns its node: cancelling it returns 0, and it may overwrite,
   reuse or free it; the timer never touches it again. Several share one slot, so the
   timer must have let go of each node before calling it. */
static void test_callback_owns_its_node(void) {
    enum { N = 4 };
    fixture f;
    probe p[N];
    size_t i;
    fixture_open(&f, 0, MS, 4);
    probes_init(p, N, &f);
    for (i = 0; i < N; i++) {
        p[i].action = act_scribble;
        CHECK_EQ(probe_schedule(&p[i], 5 * MS), HWTIMER_OK);
    }
    CHECK_EQ(advance_to(&f, tick_at(&f, 5)), N);
    CHECK_EQ(advance_to(&f, tick_at(&f, 5000)), 0);
    for (i = 0; i < N; i++) {
        CHECK_EQ(p[i].runs, 1);
        CHECK_EQ(p[i].state_seen, HWTIMER_EXPIRED);
        CHECK(all_bytes_are(&p[i].to, sizeof p[i].to, 0xA5));
    }

    /* reuse as a fresh node and schedule it again */
    probes_init(p, N, &f);
    for (i = 0; i < N; i++) {
        p[i].action = act_reuse;
        p[i].delay = MS;
        CHECK_EQ(probe_schedule(&p[i], MS), HWTIMER_OK);
    }
    CHECK_EQ(advance_to(&f, tick_at(&f, 5001)), N);
    CHECK_EQ(hwtimer_pending(f.t), N);
    for (i = 0; i < N; i++) {
        p[i].action = act_cancel_self;
    }
    CHECK_EQ(advance_to(&f, tick_at(&f, 5002)), N);
    for (i = 0; i < N; i++) {
        CHECK_EQ(p[i].runs, 2);
        CHECK_EQ(p[i].result[0], 0); /* a running one-shot is not pending */
    }
    fixture_close(&f);
}

static void free_own_node(hwtimer_timeout *to, void *arg) {
    int *freed = (int *)arg;
    (*freed)++;
    free(to);
}

static void test_callback_frees_its_node(void) {
    enum { N = 8 };
    fixture f;
    int freed = 0;
    size_t i;
    fixture_open(&f, 0, MS, 4);
    for (i = 0; i < N; i++) {
        hwtimer_timeout *to = (hwtimer_timeout *)malloc(sizeof *to);
        if (to == NULL) {
            exit(1);
        }
        hwtimer_timeout_init(to);
        CHECK_EQ(hwtimer_schedule(f.t, to, (i % 2 + 1) * MS, free_own_node, &freed), HWTIMER_OK);
    }
    CHECK_EQ(advance_to(&f, tick_at(&f, 1)), N / 2);
    CHECK_EQ(advance_to(&f, tick_at(&f, 9)), N / 2);
    CHECK_EQ(freed, N);
    CHECK_EQ(hwtimer_pending(f.t), 0);
    fixture_close(&f);
}

/* ---- counting and max_pending --------------------------------------------------------------- */

static void test_pending_counts(void) {
    enum { N = 100 };
    fixture f;
    probe p[N];
    size_t i;
    fixture_open(&f, 0, MS, 8);
    probes_init(p, N, &f);
    for (i = 0; i < N; i++) {
        CHECK_EQ(probe_schedule(&p[i], (i + 1) * MS), HWTIMER_OK);
        CHECK_EQ(hwtimer_pending(f.t), i + 1);
    }
    for (i = 0; i < N; i += 3) {
        CHECK_EQ(probe_cancel(&p[i]), 1); /* 34 cancelled: 0, 3, ..., 99 */
    }
    CHECK_EQ(hwtimer_pending(f.t), N - 34);
    CHECK_EQ(advance_to(&f, tick_at(&f, 50)), 50 - 17);
    CHECK_EQ(hwtimer_pending(f.t), N - 34 - 33);
    CHECK_EQ(advance_to(&f, tick_at(&f, N)), 33);
    CHECK_EQ(hwtimer_pending(f.t), 0);

    /* inside callbacks: a running one-shot is no longer pending */
    probes_init(p, 3, &f);
    for (i = 0; i < 3; i++) {
        p[i].action = act_note_pending;
        CHECK_EQ(probe_schedule(&p[i], MS), HWTIMER_OK);
    }
    CHECK_EQ(advance_to(&f, tick_at(&f, N + 1)), 3);
    CHECK_EQ(p[0].pending_seen[0] + p[1].pending_seen[0] + p[2].pending_seen[0], 2 + 1 + 0);
    fixture_close(&f);
}

static void test_max_pending(void) {
    fixture f;
    hwtimer_config cfg;
    probe p[4];
    fixture_config(&f, &cfg, 0, MS, 8);
    cfg.max_pending = 2;
    fixture_create(&f, &cfg);
    probes_init(p, 4, &f);
    CHECK_EQ(probe_schedule(&p[0], 5 * MS), HWTIMER_OK);
    CHECK_EQ(probe_schedule_periodic(&p[1], MS, MS), HWTIMER_OK);
    CHECK_EQ(probe_schedule(&p[2], MS), HWTIMER_EFULL);
    CHECK_EQ(hwtimer_schedule_at(f.t, &p[2].to, MS, probe_fn, &p[2]), HWTIMER_EFULL);
    CHECK_EQ(probe_schedule_periodic(&p[2], MS, MS), HWTIMER_EFULL);
    CHECK_EQ(hwtimer_timeout_state(&p[2].to), HWTIMER_IDLE);
    CHECK_EQ(hwtimer_pending(f.t), 2);
    CHECK_EQ(advance_to(&f, tick_at(&f, 3)), 1); /* the periodic keeps its place */
    CHECK_EQ(probe_schedule(&p[2], MS), HWTIMER_EFULL);
    CHECK_EQ(probe_cancel(&p[0]), 1);
    CHECK_EQ(probe_schedule(&p[2], MS), HWTIMER_OK); /* at once after a cancel */
    CHECK_EQ(probe_schedule(&p[3], MS), HWTIMER_EFULL);
    CHECK_EQ(advance_to(&f, tick_at(&f, 4)), 2);
    CHECK_EQ(probe_schedule(&p[3], MS), HWTIMER_OK); /* at once after a fire */
    CHECK_EQ(probe_cancel(&p[1]), 1);
    CHECK_EQ(probe_cancel(&p[3]), 1);
    CHECK_EQ(hwtimer_pending(f.t), 0);
    fixture_close(&f);
}

/* With a single place, a callback re-arms itself, or schedules another, at once: a
   fired one-shot no longer holds its place while its callback runs. */
static void test_max_pending_one(void) {
    fixture f;
    hwtimer_config cfg;
    probe p[3];
    fixture_config(&f, &cfg, 0, MS, 8);
    cfg.max_pending = 1;
    fixture_create(&f, &cfg);
    probes_init(p, 3, &f);
    p[0].action = act_rearm;
    p[0].delay = MS;
    p[0].repeats = 1;
    CHECK_EQ(probe_schedule(&p[0], MS), HWTIMER_OK);
    CHECK_EQ(probe_schedule(&p[1], MS), HWTIMER_EFULL);
    CHECK_EQ(advance_to(&f, tick_at(&f, 1)), 1);
    CHECK_EQ(p[0].result[0], HWTIMER_OK);
    CHECK_EQ(hwtimer_pending(f.t), 1);
    CHECK_EQ(probe_cancel(&p[0]), 1);

    p[2].action = act_schedule_peer;
    p[2].peer[0] = &p[1];
    p[2].delay = MS;
    CHECK_EQ(probe_schedule(&p[2], 2 * MS), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, tick_at(&f, 3)), 1);
    CHECK_EQ(p[2].result[0], HWTIMER_OK);
    CHECK_EQ(hwtimer_pending(f.t), 1);
    CHECK_EQ(advance_to(&f, tick_at(&f, 4)), 1);
    CHECK_EQ(p[1].runs, 1);
    CHECK_EQ(hwtimer_pending(f.t), 0);
    fixture_close(&f);
}

/* ---- states ------------------------------------------------------------------------------- */

static void test_states(void) {
    fixture f;
    probe p;
    open_with_probe(&f, &p, 8, NULL);
    CHECK_EQ(hwtimer_timeout_state(&p.to), HWTIMER_IDLE);
    CHECK_EQ(probe_schedule(&p, MS), HWTIMER_OK);
    CHECK_EQ(hwtimer_timeout_state(&p.to), HWTIMER_PENDING);
    CHECK_EQ(advance_to(&f, tick_at(&f, 1)), 1);
    CHECK_EQ(p.state_seen, HWTIMER_EXPIRED); /* set before the callback is called */
    CHECK_EQ(p.deadline_seen, tick_at(&f, 1));
    CHECK_EQ(hwtimer_timeout_state(&p.to), HWTIMER_EXPIRED);
    CHECK_EQ(hwtimer_timeout_deadline(&p.to), tick_at(&f, 1));
    CHECK_EQ(probe_schedule(&p, 3 * MS), HWTIMER_OK);
    CHECK_EQ(hwtimer_timeout_state(&p.to), HWTIMER_PENDING);
    CHECK_EQ(hwtimer_timeout_deadline(&p.to), tick_at(&f, 4));
    CHECK_EQ(probe_cancel(&p), 1);
    CHECK_EQ(hwtimer_timeout_state(&p.to), HWTIMER_CANCELLED);
    CHECK_EQ(hwtimer_timeout_deadline(&p.to), tick_at(&f, 4));
    fixture_close(&f);
}

/* ---- a node on two timers ---------------------------------------------------------------- */

static void test_node_moves_between_timers(void) {
    fixture a, b;
    probe p;
    fixture_open(&a, 0, MS, 8);
    fixture_open(&b, 5 * MS, 2 * MS, 16);
    probe_init(&p, &a, 0);
    CHECK_EQ(hwtimer_schedule(a.t, &p.to, MS, probe_fn, &p), HWTIMER_OK);
    CHECK_EQ(hwtimer_schedule(b.t, &p.to, MS, probe_fn, &p), HWTIMER_EBUSY);
    CHECK_EQ(hwtimer_cancel(b.t, &p.to), HWTIMER_EINVAL); /* pending on the other one */
    CHECK_EQ(hwtimer_pending(a.t), 1);
    CHECK_EQ(hwtimer_pending(b.t), 0);
    CHECK_EQ(advance_to(&a, tick_at(&a, 1)), 1);

    p.f = &b;
    CHECK_EQ(hwtimer_schedule(b.t, &p.to, 3 * MS, probe_fn, &p), HWTIMER_OK);
    CHECK_EQ(hwtimer_cancel(a.t, &p.to), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_pending(a.t), 0);
    CHECK_EQ(hwtimer_pending(b.t), 1);
    CHECK_EQ(advance_to(&a, tick_at(&a, 100)), 0);
    CHECK_EQ(advance_to(&b, tick_at(&b, 1)), 0);
    CHECK_EQ(advance_to(&b, tick_at(&b, 2)), 1); /* b's boundaries: 5, 7, 9 ms */
    CHECK_EQ(p.ran_at, tick_at(&b, 2));
    CHECK_EQ(p.runs, 2);

    /* after a cancel on b it can go back to a */
    CHECK_EQ(hwtimer_schedule(b.t, &p.to, MS, probe_fn, &p), HWTIMER_OK);
    CHECK_EQ(hwtimer_cancel(b.t, &p.to), 1);
    p.f = &a;
    CHECK_EQ(hwtimer_schedule(a.t, &p.to, MS, probe_fn, &p), HWTIMER_OK);
    CHECK_EQ(advance_to(&b, tick_at(&b, 100)), 0);
    CHECK_EQ(advance_to(&a, tick_at(&a, 101)), 1);
    CHECK_EQ(p.runs, 3);
    fixture_close(&a);
    fixture_close(&b);
}

/* ---- stop and destroy --------------------------------------------------------------------- */

typedef struct handed_back {
    int calls;
    int not_cancelled;
    void *ctx_seen;
} handed_back;

static void collect_unprocessed(hwtimer_timeout *to, void *ctx) {
    handed_back *h = (handed_back *)ctx;
    h->calls++;
    h->ctx_seen = ctx;
    if (hwtimer_timeout_state(to) != HWTIMER_CANCELLED) {
        h->not_cancelled++;
    }
    ((probe *)(void *)to)->repeats++; /* the probe embeds `to` first: count per node */
}

static void test_stop(void) {
    enum { N = 6 };
    fixture f;
    probe p[N];
    handed_back h = {0, 0, NULL};
    size_t i;
    fixture_open(&f, 0, MS, 4);
    probes_init(p, N, &f);
    for (i = 0; i < N - 1; i++) {
        CHECK_EQ(probe_schedule(&p[i], (i + 1) * 10 * MS), HWTIMER_OK);
    }
    CHECK_EQ(probe_schedule_periodic(&p[N - 1], 5 * MS, 5 * MS), HWTIMER_OK);
    CHECK_EQ(probe_schedule(&p[2], MS), HWTIMER_EBUSY);
    CHECK_EQ(probe_cancel(&p[1]), 1);
    CHECK_EQ(advance_to(&f, tick_at(&f, 10)), 2); /* p[0]; the periodic once (a jump) */
    CHECK_EQ(hwtimer_pending(f.t), 4);

    CHECK_EQ(hwtimer_stop(f.t, collect_unprocessed, &h), 4);
    CHECK_EQ(h.calls, 4);
    CHECK_EQ(h.not_cancelled, 0);
    CHECK(h.ctx_seen == &h);
    for (i = 0; i < N; i++) {
        CHECK_EQ(p[i].repeats, (i >= 2) ? 1 : 0);
        if (i >= 2) {
            CHECK_EQ(hwtimer_timeout_state(&p[i].to), HWTIMER_CANCELLED);
        }
    }
    CHECK_EQ(hwtimer_pending(f.t), 0);
    CHECK_EQ(hwtimer_next_expiry(f.t), UINT64_MAX);
    CHECK_EQ(hwtimer_poll_timeout_ms(f.t), -1);
    CHECK_EQ(advance_to(&f, tick_at(&f, 1000)), 0);
    for (i = 0; i < N; i++) {
        CHECK_EQ(probe_cancel(&p[i]), 0);
    }

    CHECK_EQ(probe_schedule(&p[1], MS), HWTIMER_ESTOPPED);
    CHECK_EQ(probe_schedule_periodic(&p[1], MS, MS), HWTIMER_ESTOPPED);
    CHECK_EQ(hwtimer_schedule_at(f.t, &p[1].to, MS, probe_fn, &p[1]), HWTIMER_ESTOPPED);
    CHECK_EQ(hwtimer_reschedule(f.t, &p[3].to, MS), HWTIMER_ESTOPPED);
    CHECK_EQ(hwtimer_reschedule(f.t, &p[0].to, MS), HWTIMER_ESTOPPED);
    CHECK_EQ(hwtimer_pending(f.t), 0);
    CHECK_EQ(hwtimer_stop(f.t, collect_unprocessed, &h), 0);
    CHECK_EQ(h.calls, 4);
    fixture_close(&f);
}

/* Stop without a callback still cancels and counts; handed-back nodes may be freed in
   the callback (AddressSanitizer sees any later access). */
static void free_unprocessed(hwtimer_timeout *to, void *ctx) {
    (*(int *)ctx)++;
    free(to);
}

static void test_stop_hands_over_ownership(void) {
    fixture f;
    probe p[3];
    int freed = 0;
    size_t i;
    fixture_open(&f, 0, MS, 4);
    probes_init(p, 3, &f);
    for (i = 0; i < 3; i++) {
        CHECK_EQ(probe_schedule(&p[i], (i + 1) * HOUR), HWTIMER_OK);
    }
    CHECK_EQ(hwtimer_stop(f.t, NULL, NULL), 3);
    for (i = 0; i < 3; i++) {
        CHECK_EQ(hwtimer_timeout_state(&p[i].to), HWTIMER_CANCELLED);
    }
    fixture_close(&f);

    /* Enough nodes that slots hold several lists each: every one handed back once (a node
       freed twice or visited after its free is an ASan failure). */
    fixture_open(&f, 0, MS, 4);
    for (i = 0; i < 2000; i++) {
        hwtimer_timeout *to = (hwtimer_timeout *)calloc(1, sizeof *to);
        if (to == NULL) {
            exit(1);
        }
        CHECK_EQ(hwtimer_schedule(f.t, to, (i * 37 % 2000) * MS, other_fn, NULL), HWTIMER_OK);
    }
    CHECK_EQ(hwtimer_stop(f.t, free_unprocessed, &freed), 2000);
    CHECK_EQ(freed, 2000);
    fixture_close(&f);
}

/* Stop from one of the timer's own callbacks is EWORKER and changes nothing. */
static void test_stop_from_callback(void) {
    fixture f;
    probe p[2];
    fixture_open(&f, 0, MS, 8);
    probes_init(p, 2, &f);
    p[0].action = act_stop;
    CHECK_EQ(probe_schedule(&p[0], MS), HWTIMER_OK);
    CHECK_EQ(probe_schedule(&p[1], 5 * MS), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, tick_at(&f, 1)), 1);
    CHECK_EQ(p[0].result[0], HWTIMER_EWORKER);
    CHECK_EQ(hwtimer_pending(f.t), 1);
    CHECK_EQ(hwtimer_timeout_state(&p[1].to), HWTIMER_PENDING);
    CHECK_EQ(probe_schedule(&p[0], 2 * MS), HWTIMER_OK);
    p[0].action = NULL;
    CHECK_EQ(advance_to(&f, tick_at(&f, 5)), 2);
    CHECK_EQ(p[1].runs, 1);
    CHECK_EQ(hwtimer_stop(f.t, NULL, NULL), 0);
    fixture_close(&f);
}

/* Destroy with timeouts pending (one-shot, periodic, in every wheel level) frees
   everything: AddressSanitizer's leak check runs at exit. */
static void test_destroy_with_pending(void) {
    enum { N = 200 };
    fixture f;
    probe p[N];
    uint64_t rng = 77;
    fixture_open(&f, 0, MS, 4);
    probes_init(p, N, &f);
    schedule_random(p, N - 1, &rng, HOUR, 10 * YEAR);
    CHECK_EQ(probe_schedule_periodic(&p[N - 1], MS, MS), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, tick_at(&f, 3)), 1);
    fixture_close(&f);

    fixture_open(&f, 0, MS, 4); /* and destroy with nothing ever scheduled */
    fixture_close(&f);
}

/* ---- next expiry and poll ------------------------------------------------------------------ */

static void test_next_expiry(void) {
    enum { N = 100 };
    fixture f;
    probe p[N];
    uint64_t rng = 12345;
    fixture_open(&f, 17 * MS + 1, MS, 8);
    probes_init(p, N, &f);
    CHECK_EQ(hwtimer_next_expiry(f.t), UINT64_MAX);
    CHECK_EQ(probe_schedule(&p[0], 3 * MS + 5), HWTIMER_OK);
    CHECK(hwtimer_next_expiry(f.t) <= probe_boundary(&p[0]));
    CHECK_EQ(probe_cancel(&p[0]), 1);
    CHECK_EQ(hwtimer_next_expiry(f.t), UINT64_MAX);
    CHECK_EQ(probe_schedule(&p[0], 3 * MS + 5), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, probe_boundary(&p[0])), 1);
    CHECK_EQ(hwtimer_next_expiry(f.t), UINT64_MAX);

    /* an event loop over random delays up to ~3 hours on a small wheel */
    probes_init(p, N, &f);
    schedule_random(p, N, &rng, MS, 10000 * SEC);
    drain_by_next_expiry(&f, p, N, 20 * N);
    fixture_close(&f);
}

/* -1 when nothing is pending, 0 when due, milliseconds rounded up, at most INT_MAX, and
   always the rounded-up distance to hwtimer_next_expiry. */
static int expected_poll_timeout(const fixture *f) {
    uint64_t next = hwtimer_next_expiry(f->t), ms;
    if (next == UINT64_MAX) {
        return -1;
    }
    if (next <= f->clock) {
        return 0;
    }
    ms = (next - f->clock) / MS + ((next - f->clock) % MS != 0);
    return ms > (uint64_t)INT_MAX ? INT_MAX : (int)ms;
}

static void test_poll_timeout_ms(void) {
    fixture f;
    probe p;
    fixture_open(&f, 5 * US, US, 1u << 12);
    probe_init(&p, &f, 0);
    CHECK_EQ(hwtimer_poll_timeout_ms(f.t), -1);
    CHECK_EQ(probe_schedule(&p, 1500 * US), HWTIMER_OK);
    CHECK_EQ(hwtimer_poll_timeout_ms(f.t), expected_poll_timeout(&f));
    CHECK_EQ(hwtimer_poll_timeout_ms(f.t), 2);
    f.clock += 499 * US; /* 1001 us left */
    CHECK_EQ(hwtimer_poll_timeout_ms(f.t), 2);
    f.clock += 1 * US; /* 1000 us left */
    CHECK_EQ(hwtimer_poll_timeout_ms(f.t), 1);
    f.clock += 999 * US; /* 1 us left */
    CHECK_EQ(hwtimer_poll_timeout_ms(f.t), 1);
    f.clock += 1 * US; /* due, not yet run */
    CHECK_EQ(hwtimer_poll_timeout_ms(f.t), 0);
    f.clock += 1 * SEC; /* overdue */
    CHECK_EQ(hwtimer_poll_timeout_ms(f.t), 0);
    CHECK_EQ(advance_to(&f, f.clock), 1);
    CHECK_EQ(hwtimer_poll_timeout_ms(f.t), -1);
    CHECK_EQ(probe_schedule(&p, 0), HWTIMER_OK);
    CHECK_EQ(hwtimer_poll_timeout_ms(f.t), 0);
    fixture_close(&f);

    /* 27 days (more than INT_MAX ms) on one wheel level of 2^18 ticks of 10 s */
    fixture_open(&f, 3 * SEC, 10 * SEC, 1u << 18);
    probe_init(&p, &f, 0);
    CHECK_EQ(probe_schedule(&p, 27 * DAY), HWTIMER_OK);
    CHECK_EQ(hwtimer_poll_timeout_ms(f.t), expected_poll_timeout(&f));
    CHECK_EQ(hwtimer_poll_timeout_ms(f.t), INT_MAX);
    CHECK_EQ(probe_cancel(&p), 1);
    CHECK_EQ(probe_schedule(&p, UINT64_MAX), HWTIMER_OK);
    CHECK_EQ(hwtimer_poll_timeout_ms(f.t), expected_poll_timeout(&f));
    fixture_close(&f);
}

/* hwtimer_poll is hwtimer_advance(t, hwtimer_now(t)); hwtimer_now is the clock. */
static void test_poll(void) {
    fixture f;
    probe p[2];
    fixture_open(&f, 4 * MS + 4, MS, 8);
    probes_init(p, 2, &f);
    CHECK_EQ(hwtimer_now(f.t), f.clock);
    CHECK_EQ(probe_schedule(&p[0], 2 * MS), HWTIMER_OK);
    CHECK_EQ(probe_schedule(&p[1], 2 * MS + 1), HWTIMER_OK);
    f.clock = tick_at(&f, 2);
    CHECK_EQ(hwtimer_now(f.t), tick_at(&f, 2));
    CHECK_EQ(hwtimer_poll(f.t), 1);
    CHECK_EQ(p[0].ran_at, tick_at(&f, 2));
    f.clock = tick_at(&f, 3) - 1;
    CHECK_EQ(hwtimer_poll(f.t), 0);
    f.clock = tick_at(&f, 3);
    CHECK_EQ(hwtimer_poll(f.t), 1);
    CHECK_EQ(p[1].ran_at, tick_at(&f, 3));
    CHECK_EQ(hwtimer_poll(f.t), 0);
    fixture_close(&f);
}

/* ---- wheel geometry -------------------------------------------------------------------------- */

/* Any ticks_per_wheel from 1 up works the same (SPEC rounds it up to a power of two; only
   the behaviour is checked): every timeout fires exactly at its boundary, near or far. */
static void test_wheel_sizes(void) {
    static const uint32_t sizes[] = {1, 2, 3, 5, 7, 64, 1000};
    enum { NEAR_COUNT = 150, FAR_COUNT = 40 };
    size_t s;
    for (s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        fixture f;
        probe p[NEAR_COUNT];
        uint64_t rng = 1000 + s;
        fixture_open(&f, 2 * MS + 999, MS, sizes[s]);
        probes_init(p, NEAR_COUNT, &f);
        schedule_random(p, NEAR_COUNT, &rng, 0, 300 * MS);
        step_and_check_exact(&f, p, NEAR_COUNT, tick_at(&f, 301));

        probes_init(p, FAR_COUNT, &f);
        schedule_random(p, FAR_COUNT, &rng, MS, 50 * YEAR);
        drain_by_next_expiry(&f, p, FAR_COUNT, 200 * FAR_COUNT);
        fixture_close(&f);
    }
}

/* Extreme geometry: a start 10 ticks before the end of time (a deadline past the last
   boundary never fires, even at now = UINT64_MAX), a 1 ns tick, a 2^40 ns tick. */
static void test_extreme_ticks(void) {
    fixture f;
    probe p[2];
    fixture_open(&f, UINT64_MAX - 10 * MS - 5, MS, 4);
    probes_init(p, 2, &f);
    CHECK_EQ(probe_schedule(&p[0], 3 * MS), HWTIMER_OK);
    CHECK_EQ(probe_schedule(&p[1], 10 * MS + 1), HWTIMER_OK); /* D = UINT64_MAX - 4 */
    CHECK_EQ(advance_to(&f, tick_at(&f, 3) - 1), 0);
    CHECK_EQ(advance_to(&f, tick_at(&f, 3)), 1);
    CHECK_EQ(advance_to(&f, UINT64_MAX), 0);
    CHECK_EQ(p[1].runs, 0);
    CHECK_EQ(hwtimer_pending(f.t), 1);
    fixture_close(&f);

    fixture_open(&f, 5, 1, 2);
    probes_init(p, 1, &f);
    CHECK_EQ(probe_schedule(&p[0], SEC + 7), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, SEC + 11), 0);
    CHECK_EQ(advance_to(&f, SEC + 12), 1);
    CHECK_EQ(p[0].ran_at, SEC + 12);
    fixture_close(&f);

    fixture_open(&f, 0, 1ull << 40, 1u << 20);
    probes_init(p, 1, &f);
    CHECK_EQ(probe_schedule(&p[0], 3 * (1ull << 40) + 1), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, tick_at(&f, 4) - 1), 0);
    CHECK_EQ(advance_to(&f, tick_at(&f, 4)), 1);
    fixture_close(&f);
}

/* ---- memory ---------------------------------------------------------------------------------- */

typedef union alloc_header {
    size_t size;
    uint64_t align_u64;
    long double align_ld;
    void *align_ptr;
} alloc_header;

typedef struct alloc_counter {
    size_t allocs, frees, live_bytes;
    size_t fail_at; /* the 1-based allocation that fails; 0: none */
} alloc_counter;

static void *counting_alloc(size_t size, void *ctx) {
    alloc_counter *c = (alloc_counter *)ctx;
    alloc_header *h;
    if (c->fail_at != 0 && c->allocs + 1 == c->fail_at) {
        c->fail_at = 0;
        return NULL;
    }
    h = (alloc_header *)malloc(sizeof *h + size);
    if (h == NULL) {
        return NULL;
    }
    h->size = size;
    c->allocs++;
    c->live_bytes += size;
    return h + 1;
}

static void counting_free(void *ptr, void *ctx) {
    alloc_counter *c = (alloc_counter *)ctx;
    alloc_header *h;
    if (ptr == NULL) {
        return;
    }
    h = (alloc_header *)ptr - 1;
    c->frees++;
    c->live_bytes -= h->size;
    free(h);
}

static void counting_config(fixture *f, hwtimer_config *cfg, alloc_counter *c) {
    fixture_config(f, cfg, 0, MS, 64);
    cfg->alloc_fn = counting_alloc;
    cfg->free_fn = counting_free;
    cfg->alloc_ctx = c;
}

/* Only hwtimer_create allocates, through the configured allocator; destroy gives back
   every byte. */
static void test_custom_allocator(void) {
    enum { N = 300 };
    fixture f;
    hwtimer_config cfg;
    alloc_counter c = {0, 0, 0, 0};
    probe p[N];
    hwtimer_stats stats;
    uint64_t rng = 5;
    size_t allocs_after_create;
    counting_config(&f, &cfg, &c);
    fixture_create(&f, &cfg);
    CHECK(c.allocs > 0);
    allocs_after_create = c.allocs;
    hwtimer_stats_get(f.t, &stats);
    CHECK_EQ(stats.bytes, c.live_bytes);

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
    CHECK_EQ(c.allocs, allocs_after_create);
    CHECK_EQ(c.frees, 0);
    fixture_close(&f);
    CHECK_EQ(c.frees, c.allocs);
    CHECK_EQ(c.live_bytes, 0);
}

/* Every allocation hwtimer_create makes may fail: ENOMEM, and nothing leaks. */
static void test_allocation_failure(void) {
    fixture f;
    hwtimer_config cfg;
    alloc_counter c = {0, 0, 0, 0};
    size_t needed, k;
    counting_config(&f, &cfg, &c);
    fixture_create(&f, &cfg);
    needed = c.allocs;
    fixture_close(&f);
    for (k = 1; k <= needed; k++) {
        hwtimer *t = NULL;
        memset(&c, 0, sizeof c);
        c.fail_at = k;
        CHECK_EQ(hwtimer_create(&t, &cfg), HWTIMER_ENOMEM);
        CHECK_EQ(c.live_bytes, 0);
        CHECK_EQ(c.frees, c.allocs);
    }
}

/* ---- a million timeouts ------------------------------------------------------------------------ */

typedef struct million_node {
    hwtimer_timeout to;
    uint64_t boundary;
    uint32_t runs;
} million_node;

typedef struct million_tally {
    const fixture *f;
    size_t fired, off_boundary;
} million_tally;

static void million_fn(hwtimer_timeout *to, void *arg) {
    million_tally *m = (million_tally *)arg;
    million_node *n = (million_node *)(void *)to;
    n->runs++;
    m->fired++;
    m->off_boundary += n->boundary != m->f->clock;
}

/* One hour of 1 ms ticks, one advance per tick, with 1M timeouts of random delays between
   1 s and 1 h: each fires exactly once, at its boundary. A correctness test only. */
static void test_million_timeouts(void) {
    enum { N = 1000000 };
    fixture f;
    million_tally m = {NULL, 0, 0};
    million_node *nodes = (million_node *)calloc(N, sizeof *nodes);
    uint64_t rng = 0xDEADBEEFull, now;
    size_t i, wrong_runs = 0;
    hwtimer_stats stats;
    if (nodes == NULL) {
        exit(1);
    }
    fixture_open(&f, 123456789, MS, 512);
    m.f = &f;
    for (i = 0; i < N; i++) {
        uint64_t delay = SEC + rng_below(&rng, HOUR - SEC + 1);
        CHECK_EQ(hwtimer_schedule(f.t, &nodes[i].to, delay, million_fn, &m), HWTIMER_OK);
        nodes[i].boundary = boundary_of(&f, f.start + delay);
    }
    CHECK_EQ(hwtimer_pending(f.t), N);
    for (now = tick_at(&f, 1); now <= f.start + HOUR; now += MS) {
        (void)advance_to(&f, now);
    }
    CHECK_EQ(m.fired, N);
    CHECK_EQ(m.off_boundary, 0);
    for (i = 0; i < N; i++) {
        wrong_runs += nodes[i].runs != 1;
    }
    CHECK_EQ(wrong_runs, 0);
    CHECK_EQ(hwtimer_pending(f.t), 0);
    hwtimer_stats_get(f.t, &stats);
    CHECK_EQ(stats.fired, N);
    fixture_close(&f);
    free(nodes);
}

int main(void) {
    RUN_TEST(test_idle_initialisers);
    RUN_TEST(test_config_default);
    RUN_TEST(test_create_with_defaults);
    RUN_TEST(test_config_errors);
    RUN_TEST(test_thread_backends);
    RUN_TEST(test_user_threads_table);
    RUN_TEST(test_documented_extensions);
    RUN_TEST(test_argument_errors);
    RUN_TEST(test_strerror);
    RUN_TEST(test_timeout_size);
    RUN_TEST(test_exact_boundary);
    RUN_TEST(test_order_across_ticks);
    RUN_TEST(test_jump_ten_years);
    RUN_TEST(test_now_going_backwards);
    RUN_TEST(test_delay_zero);
    RUN_TEST(test_deadline_in_the_past);
    RUN_TEST(test_max_delay_never_fires);
    RUN_TEST(test_overflow_clamp);
    RUN_TEST(test_schedule_pending_is_busy);
    RUN_TEST(test_cancel);
    RUN_TEST(test_reschedule_pending);
    RUN_TEST(test_reschedule_not_pending);
    RUN_TEST(test_reschedule_periodic);
    RUN_TEST(test_periodic_fixed_rate);
    RUN_TEST(test_periodic_jump_skips);
    RUN_TEST(test_periodic_shorter_than_tick);
    RUN_TEST(test_periodic_cancel_from_callback);
    RUN_TEST(test_periodic_reschedule_from_callback);
    RUN_TEST(test_rearm_from_callback);
    RUN_TEST(test_schedule_delay_zero_from_callback);
    RUN_TEST(test_cancel_peers_in_same_tick);
    RUN_TEST(test_cancel_peers_later_in_pass);
    RUN_TEST(test_callback_owns_its_node);
    RUN_TEST(test_callback_frees_its_node);
    RUN_TEST(test_pending_counts);
    RUN_TEST(test_max_pending);
    RUN_TEST(test_max_pending_one);
    RUN_TEST(test_states);
    RUN_TEST(test_node_moves_between_timers);
    RUN_TEST(test_stop);
    RUN_TEST(test_stop_hands_over_ownership);
    RUN_TEST(test_stop_from_callback);
    RUN_TEST(test_destroy_with_pending);
    RUN_TEST(test_next_expiry);
    RUN_TEST(test_poll_timeout_ms);
    RUN_TEST(test_poll);
    RUN_TEST(test_wheel_sizes);
    RUN_TEST(test_extreme_ticks);
    RUN_TEST(test_custom_allocator);
    RUN_TEST(test_allocation_failure);
    RUN_TEST(test_million_timeouts);
    return test_finish();
}
