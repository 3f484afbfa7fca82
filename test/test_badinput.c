/* test_badinput.c - bad input, all of it: nothing crashes, leaks or loses a timeout.

   Every public function is fed NULLs, zero and maximal values, out-of-range configs and
   broken thread hooks; nodes are misused across two timers, freed right after cancel,
   handed back by a stop that runs twice, left pending at destroy, and the timer is
   destroyed from its own callback; the clock goes backwards and jumps years. Each case
   checks the error code SPEC or hwtimer.h documents for it, that a refused call changed
   nothing (pending count, node state and deadline, next expiry), and that every timeout
   that should run ran exactly once and never before its boundary. Run it under ASan: the
   freed nodes and the deferred destroy are only meaningful there (meson's asan build).

   Timers run on a fake clock and are caller-driven, except the worker cases, which need
   a thread backend and run only in the threaded modes. */
#include "harness.h"
#include "harness_threads.h"
#include "fake_timer.h"

#include <limits.h>

#define HOUR (3600 * SEC)
#define YEAR (365 * 24 * HOUR)

/* ---- memory: a counting allocator that may refuse ------------------------------------ */

typedef struct alloc_count {
    unsigned allocs, frees; /* atomic: a worker may free the timer */
    size_t last_size;
    int refuse;
} alloc_count;

static void *count_alloc(size_t size, void *ctx) {
    alloc_count *c = (alloc_count *)ctx;
    c->last_size = size;
    if (c->refuse) return NULL;
    ATOMIC_ADD(&c->allocs, 1u);
    return malloc(size);
}

static void count_free(void *ptr, void *ctx) {
    ATOMIC_ADD(&((alloc_count *)ctx)->frees, 1u);
    free(ptr);
}

/* ---- rig: a caller-driven timer on a fake clock, and nodes that count their runs ----- */

typedef struct rig {
    fake_timer f;
    alloc_count mem;
    uint64_t pass_last_boundary; /* of the last callback in the current advance */
    unsigned out_of_order;       /* callbacks that ran before an earlier boundary's */
} rig;

static void rig_config(rig *r, hwtimer_config *cfg, uint64_t start, uint64_t tick,
                       uint32_t ticks_per_wheel) {
    memset(r, 0, sizeof *r);
    fake_timer_config(&r->f, cfg, start, tick, ticks_per_wheel);
    cfg->alloc_fn = count_alloc;
    cfg->free_fn = count_free;
    cfg->alloc_ctx = &r->mem;
}

static void rig_open(rig *r, uint64_t start, uint64_t tick, uint32_t ticks_per_wheel) {
    hwtimer_config cfg;
    rig_config(r, &cfg, start, tick, ticks_per_wheel);
    r->f.t = create_or_die(&cfg);
}

/* Destroys the timer: every byte it took comes back, and every pass ran in order. */
static void rig_close(rig *r) {
    hwtimer_destroy(r->f.t);
    r->f.t = NULL;
    CHECK_EQ(ATOMIC_GET(&r->mem.frees), ATOMIC_GET(&r->mem.allocs));
    CHECK_EQ(r->out_of_order, 0);
}

static size_t rig_advance(rig *r, uint64_t now) {
    r->pass_last_boundary = 0;
    return fake_timer_advance(&r->f, now);
}

static uint64_t rig_boundary(const rig *r, uint64_t deadline) {
    return fake_timer_boundary(&r->f, deadline);
}

typedef struct node {
    hwtimer_timeout to; /* first: the node converts to its record */
    rig *r;             /* its fake clock, or NULL on the real clock */
    unsigned runs;      /* atomic */
    int early;          /* ran before its boundary */
    hwtimer *destroy;   /* a timer the callback destroys, or NULL */
    alloc_count *destroy_mem;   /* that timer's allocator */
    unsigned frees_in_callback; /* its frees, seen inside the callback after destroy */
    int after_destroy;          /* what a schedule on it returned then */
} node;

/* On a fake clock: never before the boundary, and in order of boundary within a pass. */
static void note_run(rig *r, node *n) {
    uint64_t b = rig_boundary(r, hwtimer_timeout_deadline(&n->to));
    n->early |= r->f.clock < b;
    r->out_of_order += b < r->pass_last_boundary;
    r->pass_last_boundary = b;
}

static void node_run(hwtimer_timeout *to, void *arg) {
    node *n = (node *)arg;
    CHECK(to == &n->to);
    ATOMIC_ADD(&n->runs, 1u);
    if (n->r) note_run(n->r, n);
    if (n->destroy) {
        hwtimer_destroy(n->destroy);
        n->frees_in_callback = ATOMIC_GET(&n->destroy_mem->frees);
        n->after_destroy = hwtimer_schedule(n->destroy, to, MS, node_run, n);
    }
}

static void nodes_init(node *n, size_t count, rig *r) {
    size_t i;
    memset(n, 0, count * sizeof *n);
    for (i = 0; i < count; i++) n[i].r = r;
}

static int node_schedule(node *n, uint64_t delay) {
    return hwtimer_schedule(n->r->f.t, &n->to, delay, node_run, n);
}

/* What a refused call must leave alone. */
typedef struct snapshot {
    size_t pending;
    int state;
    uint64_t deadline, next_expiry;
} snapshot;

static snapshot take_snapshot(hwtimer *t, const hwtimer_timeout *to) {
    snapshot s;
    s.pending = hwtimer_pending(t);
    s.state = hwtimer_timeout_state(to);
    s.deadline = hwtimer_timeout_deadline(to);
    s.next_expiry = hwtimer_next_expiry(t);
    return s;
}

#define CHECK_UNCHANGED(before, t, to)                                          \
    do {                                                                        \
        snapshot check__now = take_snapshot((t), (to));                         \
        CHECK_EQ(check__now.pending, (before).pending);                         \
        CHECK_EQ(check__now.state, (before).state);                             \
        CHECK_EQ(check__now.deadline, (before).deadline);                       \
        CHECK_EQ(check__now.next_expiry, (before).next_expiry);                 \
    } while (0)

/* ---- NULL everywhere ---------------------------------------------------------------- */

/* Each scheduling call with a NULL t, to or fn is EINVAL, whether the node is idle or
   pending (argument errors come first), and changes nothing. */
static void check_null_scheduling(rig *r, node *n) {
    hwtimer *t = r->f.t;
    hwtimer_timeout *to = &n->to;
    snapshot before = take_snapshot(t, to);
    CHECK_EQ(hwtimer_schedule(NULL, to, MS, node_run, n), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_schedule(t, NULL, MS, node_run, n), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_schedule(t, to, MS, NULL, n), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_schedule_at(NULL, to, MS, node_run, n), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_schedule_at(t, NULL, MS, node_run, n), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_schedule_at(t, to, MS, NULL, n), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_schedule_periodic(NULL, to, MS, MS, node_run, n), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_schedule_periodic(t, NULL, MS, MS, node_run, n), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_schedule_periodic(t, to, MS, MS, NULL, n), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_schedule_periodic(t, to, MS, 0, node_run, n), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_reschedule(NULL, to, MS), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_reschedule(t, NULL, MS), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_cancel(NULL, to), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_cancel(t, NULL), HWTIMER_EINVAL);
    CHECK_UNCHANGED(before, t, to);
}

/* The calls that take only a timer or only a node, with NULL: their documented results. */
static void check_null_queries(void) {
    hwtimer_stats stats;
    hwtimer_config_default(NULL);
    hwtimer_destroy(NULL);
    hwtimer_timeout_init(NULL);
    CHECK_EQ(hwtimer_create(NULL, NULL), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_timeout_state(NULL), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_timeout_deadline(NULL), 0);
    CHECK_EQ(hwtimer_pending(NULL), 0);
    CHECK_EQ(hwtimer_now(NULL), 0);
    CHECK_EQ(hwtimer_advance(NULL, UINT64_MAX), 0);
    CHECK_EQ(hwtimer_poll(NULL), 0);
    CHECK_EQ(hwtimer_next_expiry(NULL), UINT64_MAX);
    CHECK_EQ(hwtimer_poll_timeout_ms(NULL), -1);
    CHECK_EQ(hwtimer_start(NULL), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_stop(NULL, node_run, NULL), HWTIMER_EINVAL);
    memset(&stats, 0xff, sizeof stats);
    hwtimer_stats_get(NULL, &stats);
    CHECK_EQ(stats.wakeups + stats.passes + stats.fired + stats.cascaded, 0);
    CHECK_EQ(stats.pending + stats.bytes, 0);
}

static unsigned null_arg_runs;

static void null_arg_run(hwtimer_timeout *to, void *arg) {
    CHECK(to != NULL && arg == NULL);
    null_arg_runs++;
}

static void test_null_arguments(void) {
    rig r;
    node n[2];
    hwtimer_stats_get(NULL, NULL);
    check_null_queries();
    rig_open(&r, 5 * SEC, MS, 8);
    nodes_init(n, 2, &r);
    CHECK_EQ(node_schedule(&n[1], 3 * MS), HWTIMER_OK);
    check_null_scheduling(&r, &n[0]); /* an idle node */
    check_null_scheduling(&r, &n[1]); /* a pending one */
    hwtimer_stats_get(r.f.t, NULL);
    /* a NULL arg is the caller's business: the callback gets it back */
    null_arg_runs = 0;
    CHECK_EQ(hwtimer_schedule(r.f.t, &n[0].to, MS, null_arg_run, NULL), HWTIMER_OK);
    CHECK_EQ(rig_advance(&r, r.f.start + 3 * MS), 2);
    CHECK_EQ(null_arg_runs + n[1].runs, 2);
    rig_close(&r);
}

/* strerror names every code and says "unknown error" for anything else. */
static void test_strerror_any_int(void) {
    static const int unknown[] = {1, 2, -8, -100, INT_MIN, INT_MAX};
    const char *seen[8];
    int code, i, j;
    for (code = 0; code >= HWTIMER_ETHREAD; code--) {
        const char *text = hwtimer_strerror(code);
        CHECK(text != NULL && *text != '\0' && strcmp(text, "unknown error") != 0);
        seen[-code] = text;
        for (j = 0; j < -code; j++) CHECK(strcmp(seen[j], text) != 0);
    }
    for (i = 0; i < (int)(sizeof unknown / sizeof unknown[0]); i++)
        CHECK(strcmp(hwtimer_strerror(unknown[i]), "unknown error") == 0);
}

/* ---- configs out of range ------------------------------------------------------------- */

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
static void check_refused(const hwtimer_config *cfg, const rig *r) {
    unsigned before = r->mem.allocs;
    CHECK_EQ(try_create(cfg), HWTIMER_EINVAL);
    CHECK_EQ(r->mem.allocs, before);
}

static void test_config_values(void) {
    hwtimer_config cfg;
    rig r;
    rig_config(&r, &cfg, 0, MS, 512);
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
    rig r;
    rig_config(&r, &cfg, 0, MS, ticks_per_wheel);
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
    check_tick_limit(512, 512);
    check_tick_limit(513, 1024);
    check_tick_limit(1u << 20, 1u << 20);
}

/* The largest legal wheel, 2^30 slots, is accepted: it only fails for lack of memory (it
   needs over 32 GiB), here from an allocator that refuses, before anything is touched. */
static void test_largest_wheel(void) {
    hwtimer_config cfg;
    rig r;
    rig_config(&r, &cfg, 0, 1, 1u << 30);
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
    rig r;
    rig_config(&r, &cfg, 0, MS, 8);
    cfg.free_fn = NULL;
    check_refused(&cfg, &r);
    cfg.free_fn = count_free;
    cfg.alloc_fn = NULL;
    CHECK_EQ(try_create(&cfg), HWTIMER_EINVAL);
    CHECK_EQ(r.mem.frees, 0);
}

/* ---- thread hooks: incomplete tables and hooks that fail ---------------------------- */

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

/* A thread table to break: this mode's, or the default one in mode 1 (NULL in mode 0). */
static const hwtimer_threads *real_threads(void) {
    return test_threads() ? test_threads() : hwtimer_threads_default();
}

static void test_incomplete_thread_tables(void) {
    hwtimer_threads th;
    hwtimer_config cfg;
    rig r;
    int i;
    rig_config(&r, &cfg, 0, MS, 8);
    if (!real_threads()) { /* HWTIMER_NO_THREADS: any table is refused */
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
    cfg.worker = 1; /* a worker needs threads */
    check_refused(&cfg, &r);
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
    rig r;
    int which;
    if (!real_threads()) return;
    memset(&faulty, 0, sizeof faulty);
    faulty.real = real_threads();
    th = faulty_table();
    rig_config(&r, &cfg, 0, MS, 8);
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
static void test_worker_cannot_start(void) {
    hwtimer_threads th;
    hwtimer_config cfg;
    rig r;
    node n;
    snapshot before;
    memset(&faulty, 0, sizeof faulty);
    faulty.real = test_threads();
    th = faulty_table();
    rig_config(&r, &cfg, 0, MS, 8);
    cfg.clock_fn = NULL; /* the worker sleeps on the real clock */
    cfg.threads = &th;
    cfg.worker = 1;
    r.f.t = create_or_die(&cfg);
    nodes_init(&n, 1, NULL);
    faulty.fail_thread = 1;
    before = take_snapshot(r.f.t, &n.to);
    CHECK_EQ(hwtimer_start(r.f.t), HWTIMER_ETHREAD);
    CHECK_EQ(hwtimer_schedule(r.f.t, &n.to, MS, node_run, &n), HWTIMER_ETHREAD);
    CHECK_EQ(hwtimer_schedule_periodic(r.f.t, &n.to, MS, MS, node_run, &n), HWTIMER_ETHREAD);
    CHECK_UNCHANGED(before, r.f.t, &n.to);
    CHECK_EQ(hwtimer_timeout_state(&n.to), HWTIMER_IDLE);
    faulty.fail_thread = 0;
    CHECK_EQ(hwtimer_schedule(r.f.t, &n.to, MS, node_run, &n), HWTIMER_OK);
    CHECK(wait_for_count(&n.runs, 1, 5 * SEC));
    rig_close(&r);
}

/* ---- one node, two timers -------------------------------------------------------------- */

/* Pending on a: b refuses it with EBUSY (schedule) and EINVAL (cancel), and nothing on
   either timer changes. */
static void check_refused_elsewhere(rig *a, rig *b, node *n) {
    snapshot on_a = take_snapshot(a->f.t, &n->to), on_b = take_snapshot(b->f.t, &n->to);
    CHECK_EQ(hwtimer_schedule(b->f.t, &n->to, MS, node_run, n), HWTIMER_EBUSY);
    CHECK_EQ(hwtimer_schedule_at(b->f.t, &n->to, 0, node_run, n), HWTIMER_EBUSY);
    CHECK_EQ(hwtimer_schedule_periodic(b->f.t, &n->to, MS, MS, node_run, n), HWTIMER_EBUSY);
    CHECK_EQ(hwtimer_reschedule(b->f.t, &n->to, MS), HWTIMER_EBUSY);
    CHECK_EQ(hwtimer_cancel(b->f.t, &n->to), HWTIMER_EINVAL);
    CHECK_UNCHANGED(on_a, a->f.t, &n->to);
    CHECK_UNCHANGED(on_b, b->f.t, &n->to);
}

static void test_node_on_two_timers(void) {
    rig a, b, c;
    node n;
    rig_open(&a, 0, MS, 8);
    rig_open(&b, 7 * SEC, 3 * MS, 16);
    nodes_init(&n, 1, &a);
    CHECK_EQ(node_schedule(&n, 10 * MS), HWTIMER_OK);
    check_refused_elsewhere(&a, &b, &n);
    CHECK_EQ(rig_advance(&b, b.f.start + HOUR), 0); /* b never runs it */
    CHECK_EQ(rig_advance(&a, a.f.start + 10 * MS), 1);
    CHECK_EQ(n.runs, 1);

    /* done on a: now it may go to b, and a refuses it */
    n.r = &b;
    CHECK_EQ(node_schedule(&n, HOUR), HWTIMER_OK);
    check_refused_elsewhere(&b, &a, &n);
    /* b is destroyed with it pending: CANCELLED, and a may take it at once (a stale owner
       pointer into freed memory must not be followed: ASan) */
    rig_close(&b);
    CHECK_EQ(hwtimer_timeout_state(&n.to), HWTIMER_CANCELLED);
    rig_open(&c, 0, MS, 8); /* may get b's address */
    n.r = &a;
    CHECK_EQ(node_schedule(&n, MS), HWTIMER_OK);
    check_refused_elsewhere(&a, &c, &n);
    CHECK_EQ(rig_advance(&a, a.f.clock + MS), 1);
    CHECK_EQ(n.runs, 2);
    CHECK_EQ(n.early, 0);
    rig_close(&c);
    rig_close(&a);
}

/* ---- nodes freed right after cancel, stop and destroy ----------------------------------- */

enum { HEAP_NODES = 600 };

/* Heap nodes on every level of a small wheel: deadlines from a tick to a decade. */
static void heap_nodes_schedule(rig *r, node **nodes, size_t count, uint64_t seed) {
    size_t i;
    for (i = 0; i < count; i++) {
        uint64_t delay = (seed = seed * 6364136223846793005u + 1442695040888963407u) >> 3;
        nodes[i] = (node *)calloc_or_die(1, sizeof(node));
        nodes[i]->r = r;
        CHECK_EQ(node_schedule(nodes[i], 1 + delay % (10 * YEAR >> (i % 40))), HWTIMER_OK);
    }
}

/* Cancel frees a node for the caller at once: half are freed right after cancel while
   the rest (and new nodes that may reuse the freed memory) keep running through every
   level. Every survivor runs once, at or after its boundary; ASan sees any touch of a
   freed node. */
static void test_freed_after_cancel(void) {
    static node *nodes[HEAP_NODES];
    rig r;
    size_t i, runs = 0;
    rig_open(&r, 123, MS, 4);
    heap_nodes_schedule(&r, nodes, HEAP_NODES, 1);
    for (i = 0; i < HEAP_NODES; i += 2) {
        CHECK_EQ(hwtimer_cancel(r.f.t, &nodes[i]->to), 1);
        free(nodes[i]);
        nodes[i] = NULL;
    }
    for (i = 0; i < HEAP_NODES; i += 2) { /* refill: malloc may hand back the freed nodes */
        nodes[i] = (node *)calloc_or_die(1, sizeof(node));
        nodes[i]->r = &r;
        CHECK_EQ(node_schedule(nodes[i], (i + 1) * HOUR), HWTIMER_OK);
    }
    CHECK_EQ(hwtimer_pending(r.f.t), HEAP_NODES);
    for (i = 1; i <= 64; i++) (void)rig_advance(&r, r.f.start + i * (11 * YEAR / 64) + i * i * MS);
    for (i = 0; i < HEAP_NODES; i++) {
        runs += nodes[i]->runs;
        CHECK_EQ(nodes[i]->early, 0);
        free(nodes[i]);
    }
    CHECK_EQ(runs, HEAP_NODES);
    CHECK_EQ(hwtimer_pending(r.f.t), 0);
    rig_close(&r);
}

/* Nodes handed back by stop (with no callback) and nodes left pending at destroy belong
   to the caller as soon as the call returns: freed at once, then the timer is used. */
static void test_freed_after_stop_and_destroy(void) {
    static node *nodes[HEAP_NODES];
    rig r;
    size_t i, pending;
    rig_open(&r, 0, MS, 8);
    heap_nodes_schedule(&r, nodes, HEAP_NODES, 2);
    (void)rig_advance(&r, r.f.start + HOUR);
    pending = hwtimer_pending(r.f.t);
    CHECK(pending > 0 && pending < HEAP_NODES);
    CHECK_EQ(hwtimer_stop(r.f.t, NULL, NULL), pending);
    for (i = 0; i < HEAP_NODES; i++) free(nodes[i]);
    CHECK_EQ(rig_advance(&r, r.f.start + 20 * YEAR), 0);
    CHECK_EQ(hwtimer_next_expiry(r.f.t), UINT64_MAX);
    rig_close(&r);

    rig_open(&r, 0, MS, 8);
    heap_nodes_schedule(&r, nodes, HEAP_NODES, 3);
    rig_close(&r);
    for (i = 0; i < HEAP_NODES; i++) {
        CHECK_EQ(hwtimer_timeout_state(&nodes[i]->to), HWTIMER_CANCELLED);
        free(nodes[i]);
    }
}

/* ---- stop twice, destroy with pending ------------------------------------------------- */

static void count_handed_back(hwtimer_timeout *to, void *ctx) {
    (void)to;
    (*(unsigned *)ctx)++;
}

/* After a stop everything is refused or a no-op, and further stops return 0 and hand
   back nothing. */
static void check_stopped(rig *r, node *n) {
    unsigned handed = 0;
    CHECK_EQ(hwtimer_stop(r->f.t, count_handed_back, &handed), 0);
    CHECK_EQ(hwtimer_stop(r->f.t, count_handed_back, &handed), 0);
    CHECK_EQ(handed, 0);
    CHECK_EQ(node_schedule(n, MS), HWTIMER_ESTOPPED);
    CHECK_EQ(hwtimer_schedule_at(r->f.t, &n->to, 0, node_run, n), HWTIMER_ESTOPPED);
    CHECK_EQ(hwtimer_schedule_periodic(r->f.t, &n->to, MS, MS, node_run, n), HWTIMER_ESTOPPED);
    CHECK_EQ(hwtimer_start(r->f.t), HWTIMER_ESTOPPED);
    CHECK_EQ(hwtimer_cancel(r->f.t, &n->to), 0);
    CHECK_EQ(hwtimer_pending(r->f.t), 0);
    CHECK_EQ(hwtimer_next_expiry(r->f.t), UINT64_MAX);
    CHECK_EQ(hwtimer_poll_timeout_ms(r->f.t), -1);
    CHECK_EQ(rig_advance(r, UINT64_MAX), 0);
    CHECK_EQ(hwtimer_poll(r->f.t), 0);
}

static void test_stop_twice(void) {
    rig r;
    node n[3];
    unsigned handed = 0;
    rig_open(&r, 0, MS, 8);
    nodes_init(n, 3, &r);
    check_stopped(&r, &n[0]); /* never used */
    rig_close(&r);

    rig_open(&r, 0, MS, 8);
    CHECK_EQ(node_schedule(&n[0], MS), HWTIMER_OK);
    CHECK_EQ(hwtimer_schedule_periodic(r.f.t, &n[1].to, MS, MS, node_run, &n[1]), HWTIMER_OK);
    CHECK_EQ(hwtimer_stop(r.f.t, count_handed_back, &handed), 2);
    CHECK_EQ(handed, 2);
    CHECK_EQ(hwtimer_reschedule(r.f.t, &n[1].to, MS), HWTIMER_ESTOPPED);
    check_stopped(&r, &n[2]);
    CHECK_EQ(n[0].runs + n[1].runs, 0);
    rig_close(&r);
}

/* Destroy with timeouts in every list a node can be in (wheel levels, the due list of
   deadlines already past, periodic ones): all CANCELLED, no byte kept, and the nodes work
   on the next timer. */
static void test_destroy_with_pending(void) {
    enum { N = 64 };
    rig r;
    node n[N];
    size_t i, runs = 0;
    rig_open(&r, 0, MS, 2);
    nodes_init(n, N, &r);
    CHECK_EQ(rig_advance(&r, r.f.start + SEC), 0);
    for (i = 0; i < N; i++) {
        uint64_t deadline = i < 8 ? i * MS : r.f.start + ((uint64_t)1 << (i % 44 + 20));
        if (i % 5 == 4) {
            CHECK_EQ(hwtimer_schedule_periodic(r.f.t, &n[i].to, i * MS, MS, node_run, &n[i]),
                     HWTIMER_OK);
        } else {
            CHECK_EQ(hwtimer_schedule_at(r.f.t, &n[i].to, deadline, node_run, &n[i]), HWTIMER_OK);
        }
    }
    CHECK_EQ(hwtimer_pending(r.f.t), N);
    rig_close(&r);
    for (i = 0; i < N; i++) {
        CHECK_EQ(hwtimer_timeout_state(&n[i].to), HWTIMER_CANCELLED);
        CHECK_EQ(n[i].runs, 0);
    }
    rig_open(&r, 0, MS, 2);
    for (i = 0; i < N; i++) CHECK_EQ(hwtimer_reschedule(r.f.t, &n[i].to, MS), HWTIMER_OK);
    CHECK_EQ(rig_advance(&r, r.f.start + MS), N);
    for (i = 0; i < N; i++) runs += n[i].runs;
    CHECK_EQ(runs, N);
    rig_close(&r);
}

/* ---- destroy from a callback ------------------------------------------------------------ */

/* Deferred: inside the callback the timer is stopped but alive (a schedule says ESTOPPED,
   nothing is freed yet); the rest of the pass does not run; when advance returns the
   timer is freed and every other node is CANCELLED. `periodic` picks the destroyer's
   kind. */
static void check_destroy_from_callback(int periodic) {
    enum { N = 4 };
    rig r;
    node n[N];
    size_t i;
    rig_open(&r, 0, MS, 8);
    nodes_init(n, N, &r);
    n[0].destroy = r.f.t;
    n[0].destroy_mem = &r.mem;
    if (periodic) {
        CHECK_EQ(hwtimer_schedule_periodic(r.f.t, &n[0].to, MS, MS, node_run, &n[0]), HWTIMER_OK);
    } else {
        CHECK_EQ(node_schedule(&n[0], MS), HWTIMER_OK);
    }
    CHECK_EQ(node_schedule(&n[1], MS), HWTIMER_OK); /* same tick, may run first */
    CHECK_EQ(node_schedule(&n[2], 2 * MS), HWTIMER_OK);
    CHECK_EQ(node_schedule(&n[3], HOUR), HWTIMER_OK);
    CHECK_EQ(hwtimer_advance(r.f.t, r.f.start + 2 * MS), 1 + n[1].runs);
    r.f.t = NULL;
    CHECK_EQ(n[0].runs, 1);
    CHECK_EQ(n[0].frees_in_callback, 0);
    CHECK_EQ(n[0].after_destroy, HWTIMER_ESTOPPED);
    CHECK(r.mem.allocs > 0);
    CHECK_EQ(r.mem.frees, r.mem.allocs);
    CHECK_EQ(r.out_of_order, 0);
    CHECK_EQ(n[2].runs + n[3].runs, 0);
    for (i = 0; i < N; i++) {
        if (n[i].runs == 0 || (periodic && i == 0))
            CHECK_EQ(hwtimer_timeout_state(&n[i].to), HWTIMER_CANCELLED);
    }
}

static void test_destroy_from_callback(void) {
    check_destroy_from_callback(0);
    check_destroy_from_callback(1);
}

/* On the worker: the worker frees the timer when its pass ends (ASan checks no leak). */
static void test_destroy_from_worker_callback(void) {
    hwtimer_config cfg;
    rig r;
    node n[2];
    rig_config(&r, &cfg, 0, MS, 8);
    cfg.clock_fn = NULL;
    cfg.threads = test_threads();
    cfg.worker = 1;
    r.f.t = create_or_die(&cfg);
    nodes_init(n, 2, NULL); /* the real clock: no rig */
    n[0].destroy = r.f.t;
    n[0].destroy_mem = &r.mem;
    CHECK_EQ(hwtimer_schedule(r.f.t, &n[1].to, HOUR, node_run, &n[1]), HWTIMER_OK);
    CHECK_EQ(hwtimer_schedule(r.f.t, &n[0].to, MS, node_run, &n[0]), HWTIMER_OK);
    CHECK(wait_for_count(&r.mem.frees, ATOMIC_GET(&r.mem.allocs), 5 * SEC));
    CHECK_EQ(n[0].frees_in_callback, 0);
    CHECK_EQ(n[0].after_destroy, HWTIMER_ESTOPPED);
    CHECK_EQ(n[0].runs, 1);
    CHECK_EQ(n[1].runs, 0);
    CHECK_EQ(hwtimer_timeout_state(&n[1].to), HWTIMER_CANCELLED);
}

/* ---- the clock goes backwards, jumps years ---------------------------------------------- */

/* A clock behind the last advance, or behind the start: deadlines computed from it may be
   past already; they run at the next advance that is not itself behind, never early. */
static void test_clock_backwards(void) {
    rig r;
    node n[3];
    rig_open(&r, HOUR, MS, 8);
    nodes_init(n, 3, &r);
    CHECK_EQ(rig_advance(&r, r.f.start + 10 * SEC), 0);
    r.f.clock = r.f.start + 5 * SEC; /* stepped back 5 s */
    CHECK_EQ(node_schedule(&n[0], SEC), HWTIMER_OK);
    CHECK_EQ(hwtimer_timeout_deadline(&n[0].to), r.f.start + 6 * SEC);
    r.f.clock = r.f.start - 30 * 60 * SEC; /* and behind the start */
    CHECK_EQ(node_schedule(&n[1], 0), HWTIMER_OK);
    CHECK_EQ(node_schedule(&n[2], 30 * 60 * SEC + 5 * SEC), HWTIMER_OK); /* S + 5 s */
    CHECK_EQ(hwtimer_poll(r.f.t), 0);                 /* behind: a no-op */
    CHECK_EQ(rig_advance(&r, r.f.start + 9 * SEC), 0); /* still behind the last advance */
    CHECK(hwtimer_next_expiry(r.f.t) <= r.f.start + 10 * SEC);
    CHECK_EQ(rig_advance(&r, r.f.start + 10 * SEC), 3);
    CHECK_EQ(n[0].runs + n[1].runs + n[2].runs, 3);
    CHECK_EQ(n[0].early + n[1].early + n[2].early, 0);
    CHECK_EQ(hwtimer_next_expiry(r.f.t), UINT64_MAX);
    rig_close(&r);
}

/* Jumps of years over nodes spread across a decade: each jump runs exactly those whose
   boundary it passed, in order of boundary; none is lost or run twice. */
static size_t runs_of(const node *n, size_t count) {
    size_t i, runs = 0;
    for (i = 0; i < count; i++) runs += n[i].runs;
    return runs;
}

static void test_clock_jumps_years(void) {
    enum { N = 500 };
    static node n[N];
    rig r;
    size_t i, jump, due, ran_before;
    rig_open(&r, 42, MS, 16);
    nodes_init(n, N, &r);
    for (i = 0; i < N; i++)
        CHECK_EQ(node_schedule(&n[i], (i * 7919 % N) * (YEAR / 50) + i), HWTIMER_OK);
    for (jump = 1; jump <= 4; jump++) {
        uint64_t now = r.f.start + jump * 3 * YEAR;
        for (due = 0, i = 0; i < N; i++)
            due += rig_boundary(&r, hwtimer_timeout_deadline(&n[i].to)) <= now;
        ran_before = runs_of(n, N);
        CHECK_EQ(rig_advance(&r, now), due - ran_before);
        CHECK_EQ(runs_of(n, N), due);
    }
    for (i = 0; i < N; i++) {
        CHECK_EQ(n[i].runs, 1);
        CHECK_EQ(n[i].early, 0);
    }
    rig_close(&r);
}

/* A worker on a clock that steps back an hour and then forward a year (real clock plus
   an offset). Stepped back, the worker must not run a timeout its clock says is an hour
   away; stepped forward, a schedule that is due at once wakes it, and everything that
   became due runs. Nothing runs before its deadline on the timer's clock, taken as the
   highest reading so far: like advance, the worker never moves time backwards, so a
   deadline computed from the stepped-back clock that the clock had already passed
   counts as reached. */
static uint64_t offset_clock_ns; /* atomic */
static uint64_t highest_reading; /* atomic */

static uint64_t offset_clock(void *ctx) {
    uint64_t now = now_ns() + ATOMIC_GET(&offset_clock_ns), seen = ATOMIC_GET(&highest_reading);
    (void)ctx;
    while (now > seen && !__atomic_compare_exchange_n(&highest_reading, &seen, now, 0,
                                                      __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
        /* seen was reloaded: try again while now is still higher */
    }
    return now;
}

typedef struct watched {
    hwtimer_timeout to;
    unsigned runs; /* atomic */
    unsigned early;
} watched;

static void watched_run(hwtimer_timeout *to, void *arg) {
    watched *w = (watched *)arg;
    (void)offset_clock(NULL);
    w->early += ATOMIC_GET(&highest_reading) < hwtimer_timeout_deadline(to);
    ATOMIC_ADD(&w->runs, 1u);
}

static void test_worker_clock_steps(void) {
    hwtimer_config cfg;
    hwtimer *t;
    watched a, b, c;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    memset(&c, 0, sizeof c);
    ATOMIC_SET(&offset_clock_ns, 2 * YEAR);
    real_config(&cfg, 1, MS, 64);
    cfg.clock_fn = offset_clock;
    t = create_or_die(&cfg);
    ATOMIC_SET(&offset_clock_ns, 2 * YEAR + 2 * HOUR); /* S + 2 h: room to step back */
    CHECK_EQ(hwtimer_schedule(t, &a.to, SEC, watched_run, &a), HWTIMER_OK);
    ATOMIC_SET(&offset_clock_ns, 2 * YEAR + HOUR);
    sleep_ns(400 * MS);
    CHECK_EQ(ATOMIC_GET(&a.runs), 0); /* an hour early on the timer's clock */
    CHECK_EQ(hwtimer_schedule(t, &b.to, 50 * MS, watched_run, &b), HWTIMER_OK);
    CHECK(wait_for_count(&b.runs, 1, 5 * SEC));
    CHECK_EQ(ATOMIC_GET(&a.runs), 0);
    ATOMIC_SET(&offset_clock_ns, 3 * YEAR);
    CHECK_EQ(hwtimer_schedule(t, &c.to, 0, watched_run, &c), HWTIMER_OK);
    CHECK(wait_for_count(&c.runs, 1, 5 * SEC));
    CHECK(wait_for_count(&a.runs, 1, 5 * SEC));
    CHECK_EQ(a.early + b.early + c.early, 0);
    CHECK_EQ(hwtimer_pending(t), 0);
    hwtimer_destroy(t);
}

/* ---- the end of time -------------------------------------------------------------------- */

/* A timer created when the clock is about to run out: deadlines clamp to UINT64_MAX, the
   last boundaries still fire, those past UINT64_MAX never do, and periods that would
   overflow leave their timeout pending but never due. */
static void test_end_of_time(void) {
    rig r;
    node n[5];
    rig_open(&r, UINT64_MAX - 10 * MS - 3, MS, 4);
    nodes_init(n, 5, &r);
    CHECK_EQ(node_schedule(&n[0], UINT64_MAX), HWTIMER_OK); /* D clamps to UINT64_MAX */
    CHECK_EQ(hwtimer_timeout_deadline(&n[0].to), UINT64_MAX);
    CHECK_EQ(hwtimer_schedule_at(r.f.t, &n[1].to, r.f.start + 10 * MS, node_run, &n[1]), HWTIMER_OK);
    CHECK_EQ(hwtimer_schedule_periodic(r.f.t, &n[2].to, 0, UINT64_MAX, node_run, &n[2]), HWTIMER_OK);
    CHECK_EQ(hwtimer_schedule_at(r.f.t, &n[3].to, 0, node_run, &n[3]), HWTIMER_OK); /* long past */
    CHECK_EQ(hwtimer_schedule_periodic(r.f.t, &n[4].to, MS, 1, node_run, &n[4]), HWTIMER_OK);
    CHECK_EQ(rig_advance(&r, UINT64_MAX), 4);
    CHECK_EQ(n[0].runs, 0); /* its boundary lies past UINT64_MAX */
    CHECK_EQ(n[1].runs + n[2].runs + n[3].runs + n[4].runs, 4);
    CHECK_EQ(hwtimer_timeout_deadline(&n[2].to), UINT64_MAX); /* the next period overflowed */
    CHECK_EQ(hwtimer_pending(r.f.t), 3);                        /* n[0], n[2], n[4] */
    CHECK_EQ(rig_advance(&r, UINT64_MAX), 0);
    CHECK_EQ(hwtimer_poll_timeout_ms(r.f.t), 0); /* the clock reads UINT64_MAX (hwtimer.h) */
    CHECK_EQ(hwtimer_cancel(r.f.t, &n[2].to), 1);
    CHECK_EQ(n[0].early + n[1].early + n[2].early + n[3].early + n[4].early, 0);
    CHECK_EQ(hwtimer_stop(r.f.t, NULL, NULL), 2);
    rig_close(&r);
}

int main(void) {
    RUN_TEST(test_null_arguments);
    RUN_TEST(test_strerror_any_int);
    RUN_TEST(test_config_values);
    RUN_TEST(test_tick_times_wheel_overflow);
    RUN_TEST(test_largest_wheel);
    RUN_TEST(test_allocator_pairs);
    RUN_TEST(test_incomplete_thread_tables);
    RUN_TEST(test_sync_objects_fail);
    RUN_TEST(test_node_on_two_timers);
    RUN_TEST(test_freed_after_cancel);
    RUN_TEST(test_freed_after_stop_and_destroy);
    RUN_TEST(test_stop_twice);
    RUN_TEST(test_destroy_with_pending);
    RUN_TEST(test_destroy_from_callback);
    RUN_TEST(test_clock_backwards);
    RUN_TEST(test_clock_jumps_years);
    RUN_TEST(test_end_of_time);
    if (test_threads()) { /* a worker thread needs a backend */
        RUN_TEST(test_worker_cannot_start);
        RUN_TEST(test_destroy_from_worker_callback);
        RUN_TEST(test_worker_clock_steps);
    }
    return test_finish();
}
