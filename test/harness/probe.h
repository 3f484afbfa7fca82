/* probe.h - a timeout embedded in a record of what happened to it, the callbacks' actions
   on the timer, and the checks built on them (exact firing, event loops, refused calls
   that change nothing). Include after fixture.h. */
#ifndef HWTIMER_TEST_PROBE_H
#define HWTIMER_TEST_PROBE_H

typedef struct probe probe;
typedef void (*probe_action)(probe *p);

struct probe {
    hwtimer_timeout to; /* first, embedded, as hwtimer.h intends */
    fixture *f;         /* its fake clock and timer, or NULL on a real clock */
    int id;
    unsigned runs;          /* atomic: a worker may run it */
    int early;              /* ran before its boundary */
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
    fixture *target;        /* for act_destroy: the timer it destroys */
    unsigned frees_seen;    /* for act_destroy: the target's frees right after destroy */
};

static unsigned long run_seq;

/* Every probe run in order, for the ordering checks. */
#define RUN_LOG_CAP 4096
static probe *run_log[RUN_LOG_CAP];
static size_t run_logged;

static inline void run_log_reset(void) {
    run_logged = 0;
}

/* When this probe must fire, from the deadline the timer reports. */
static inline uint64_t probe_boundary(const probe *p) {
    return boundary_of(p->f, hwtimer_timeout_deadline(&p->to));
}

/* On a fake clock: never before the boundary, and in order of boundary within a pass. */
static inline void probe_note_clock(probe *p) {
    fixture *f = p->f;
    uint64_t b = probe_boundary(p);
    p->ran_at = f->clock;
    p->early |= f->clock < b;
    f->out_of_order += b < f->pass_last_boundary;
    f->pass_last_boundary = b;
}

static inline void probe_fn(hwtimer_timeout *to, void *arg) {
    probe *p = (probe *)arg;
    CHECK(to == &p->to);
    ATOMIC_ADD(&p->runs, 1u);
    if (p->f == NULL) { /* a real clock, maybe a worker thread: only counted */
        if (p->action != NULL) p->action(p);
        return;
    }
    probe_note_clock(p);
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
static inline void other_fn(hwtimer_timeout *to, void *arg) {
    (void)to;
    (void)arg;
    other_fn_runs++;
}

static inline void probe_init(probe *p, fixture *f, int id) {
    memset(p, 0, sizeof *p);
    hwtimer_timeout_init(&p->to);
    p->f = f;
    p->id = id;
}

static inline void probes_init(probe *p, size_t n, fixture *f) {
    size_t i;
    for (i = 0; i < n; i++) {
        probe_init(&p[i], f, (int)i);
    }
}

/* The common setup: a 1 ms timer started at `start`, and n fresh probes on it. */
static inline void open_with_probes(fixture *f, probe *p, size_t n, uint64_t start,
                                    uint32_t ticks_per_wheel) {
    fixture_open(f, start, MS, ticks_per_wheel);
    probes_init(p, n, f);
}

/* One probe on a 1 ms timer started at 0, whose callback runs `action`. */
static inline void open_with_probe(fixture *f, probe *p, uint32_t ticks_per_wheel,
                                   probe_action action) {
    open_with_probes(f, p, 1, 0, ticks_per_wheel);
    p->action = action;
}

static inline int probe_schedule(probe *p, uint64_t delay) {
    return hwtimer_schedule(p->f->t, &p->to, delay, probe_fn, p);
}

static inline int probe_schedule_at(probe *p, uint64_t deadline) {
    return hwtimer_schedule_at(p->f->t, &p->to, deadline, probe_fn, p);
}

static inline int probe_schedule_periodic(probe *p, uint64_t delay, uint64_t period) {
    return hwtimer_schedule_periodic(p->f->t, &p->to, delay, period, probe_fn, p);
}

static inline int probe_cancel(probe *p) {
    return hwtimer_cancel(p->f->t, &p->to);
}

static inline size_t probe_runs(const probe *p, size_t n) {
    size_t i, runs = 0;
    for (i = 0; i < n; i++) runs += p[i].runs;
    return runs;
}

/* Schedules each probe with a random delay in [lo, lo + span), in nanoseconds, so
   deadlines fall anywhere inside ticks. */
static inline void schedule_random(probe *p, size_t n, uint64_t *rng, uint64_t lo,
                                   uint64_t span) {
    size_t i;
    for (i = 0; i < n; i++) {
        CHECK_EQ(probe_schedule(&p[i], lo + test_rng_below(rng, span)), HWTIMER_OK);
    }
}
/* Advances one tick at a time up to `last` and checks each probe ran once, exactly at
   the boundary of its deadline. */
static inline void step_and_check_exact(fixture *f, probe *p, size_t n, uint64_t last) {
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
static inline uint64_t earliest_unrun_boundary(const probe *p, size_t n) {
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
   and checks what hwtimer.h promises: next_expiry is never later than the next boundary
   and is always in the future right after an advance, so every wake-up makes progress
   and each probe runs exactly at its boundary. max_wakeups bounds the wake-ups: an answer
   that is merely "the next tick" would need millions. */
static inline void drain_by_next_expiry(fixture *f, probe *p, size_t n, size_t max_wakeups) {
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

static inline void act_cancel_peers(probe *p) {
    size_t i;
    p->pending_seen[0] = hwtimer_pending(p->f->t);
    for (i = 0; i < 3; i++) {
        if (p->peer[i] != NULL) {
            p->result[i] = probe_cancel(p->peer[i]);
        }
    }
    p->pending_seen[1] = hwtimer_pending(p->f->t);
}

static inline void act_rearm(probe *p) {
    if (p->repeats > 0) {
        p->repeats--;
        p->result[0] = probe_schedule(p, p->delay);
    }
}

static inline void act_reschedule_self(probe *p) {
    if (p->repeats > 0) {
        p->repeats--;
        p->result[0] = hwtimer_reschedule(p->f->t, &p->to, p->delay);
    }
}

static inline void act_schedule_peer(probe *p) {
    p->result[0] = probe_schedule(p->peer[0], p->delay);
}

static inline void act_cancel_self(probe *p) {
    p->pending_seen[0] = hwtimer_pending(p->f->t);
    p->result[0] = probe_cancel(p);
    p->pending_seen[1] = hwtimer_pending(p->f->t);
}

static inline void act_stop(probe *p) {
    p->result[0] = (int)hwtimer_stop(p->f->t, NULL, NULL);
}

static inline void act_note_pending(probe *p) {
    p->pending_seen[0] = hwtimer_pending(p->f->t);
}

/* Overwrites its own node: the timer must neither read nor write it afterwards. */
static inline void act_scribble(probe *p) {
    memset(&p->to, 0xA5, sizeof p->to);
}

/* Reuses its own node as a brand-new one and schedules it again. */
static inline void act_reuse(probe *p) {
    memset(&p->to, 0, sizeof p->to);
    p->result[0] = probe_schedule(p, p->delay);
}

static inline int all_bytes_are(const void *mem, size_t size, unsigned char value) {
    const unsigned char *b = (const unsigned char *)mem;
    size_t i;
    for (i = 0; i < size; i++) {
        if (b[i] != value) {
            return 0;
        }
    }
    return 1;
}

/* Destroys the target's timer from inside a callback, then tries to schedule on it. */
static inline void act_destroy(probe *p) {
    hwtimer *t = p->target->t;
    hwtimer_destroy(t);
    p->frees_seen = ATOMIC_GET(&p->target->mem.frees);
    p->result[0] = hwtimer_schedule(t, &p->to, MS, probe_fn, p);
}

/* ---- probes on the heap ----------------------------------------------------------------- */

enum { HEAP_PROBES = 600 };

/* Heap probes on every level of a small wheel: deadlines from a tick to a decade. The
   caller frees them. */
static inline void schedule_heap_probes(fixture *f, probe **p, size_t count, uint64_t seed) {
    size_t i;
    for (i = 0; i < count; i++) {
        uint64_t delay = test_rng_next(&seed) >> 3;
        p[i] = (probe *)calloc_or_die(1, sizeof(probe));
        probe_init(p[i], f, (int)i);
        CHECK_EQ(probe_schedule(p[i], 1 + delay % (10 * YEAR >> (i % 40))), HWTIMER_OK);
    }
}

/* ---- refused calls change nothing ------------------------------------------------------- */

typedef struct snapshot {
    size_t pending;
    int state;
    uint64_t deadline, next_expiry;
} snapshot;

static inline snapshot take_snapshot(hwtimer *t, const hwtimer_timeout *to) {
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

#endif
