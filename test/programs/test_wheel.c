/* test_wheel.c - the wheel (hwtimer__wheel) driven alone: no timer, clock, lock or
   callback, only a geometry and a wheel made by the functions hwtimer_create makes them
   with (hwtimer__geometry_init, hwtimer__wheel_init on lists and bit trees of
   hwtimer__wheel_heads and _words), and the functions the front end calls on a wheel:

     filing        hwtimer__arm_fill, then hwtimer__wheel_file (or, past notice_upto,
                   hwtimer__wheel_file_past, the inline arming's, in either form)
     moving        hwtimer__wheel_push_later, else hwtimer__wheel_move, else
                   hwtimer__wheel_unfile and hwtimer__wheel_file (hwtimer__move_locked)
     removing      hwtimer__wheel_uncount (a cancel), hwtimer__wheel_cancel_all (stop)
     watching      hwtimer__wheel_watch (the answer given to the loop)
     a pass        hwtimer__wheel_begin, then step by step hwtimer__wheel_next_step and
                   hwtimer__wheel_collect or the ready nodes (hwtimer__wheel_take_ready),
                   hwtimer__wheel_end; the `left` list first (hwtimer__wheel_take); a
                   bounded pass's cut (hwtimer__wheel_set_aside)
     asking        hwtimer__wheel_next_tick
     checking      hwtimer__wheel_check

   Everything is compared with a reference that knows only THE DESIGN: each node's due tick
   by division (and the leeway grid), the level of a tick by the highest bit in which it and
   `elapsed` differ, its slot by its digit there, a slot's start by clearing the digits
   below its level; which list each node is in (a slot by the tick it was filed at, `due`,
   `ready`, `left`, or none). After every operation: the check says 0; every node is where
   the reference says, with the `where` the reference computes; `due` and `ready` in tick
   order (`due`'s ties in filing order); `left` in the order it was set aside; the counts,
   the counters of moves down, and the upto fields' rules (below); the wheel's next tick
   equals the brute-force one (the earliest slot start, or `due`'s first tick, or `elapsed`
   with nodes ready or left) and is never after the earliest pending tick unless it is due
   at once (by due_upto). In a pass, every step is the one the reference expects (the ready
   nodes, else the next occupied slot by the target, its level and slot), every node comes
   out exactly at its tick, in tick order, never before, once, and every node due by the
   target comes out unless a callback touched it.

   The upto fields (hwtimer__wheel's comments, hwtimer__wheel_watch, _begin, _end, the
   check's NEAR): notice_upto is always the greater of due_upto and watch_upto; due_upto is
   elapsed outside a pass and the target in one; a filing at a tick <= due_upto goes to
   `due` (a node filed during a pass waits for the next one), any other to its slot;
   hwtimer__wheel_file says 1 exactly for a tick <= watch_upto; hwtimer__wheel_move changes
   nothing and says 0 for a tick <= notice_upto (the front end then files anew: it is
   reported), else moves the node to its slot.

   Directed tests file nodes over every level of several geometries, up to the latest tick
   a deadline can have (the top level, at the 2^64 edge with a 1 ns tick), and advance tick
   by tick to each; the randomized one (fixed seeds) mixes filings, cancels, moves, watches,
   passes to random targets with callbacks' operations between their steps, bounded passes'
   cuts, and stops. The check is shown to catch a wheel broken in each way it has a code
   for (all but WAITERS, the timer's): each broken in one thing, then mended. */
#undef HWTIMER_TEST_SHARDS
#include "harness.h"

/* Where the reference says a node is. */
enum {
    PLACE_NONE = 0,
    PLACE_SLOT,
    PLACE_DUE,
    PLACE_READY,
    PLACE_LEFT,
    PLACE_HELD /* out of every list, pending */
};

typedef struct ref_node {
    hwtimer_timeout *to;
    int place;
    uint64_t tick;     /* its due tick, by the reference's arithmetic */
    uint64_t filed;    /* PLACE_SLOT: the tick its slot was chosen by (a push later keeps it) */
    uint64_t seq;      /* the order of filings: ties in `due` keep it */
    uint32_t gen;      /* PLACE_LEFT: the generation it was set aside in */
    uint64_t leeway_n; /* floor(leeway / tick_ns) */
    int eligible;      /* due by the target of the pass under way, untouched since it began */
    int emptied;       /* scratch: in the slot being emptied */
    int mark;          /* scratch: set aside by the cut under way */
} ref_node;

typedef struct model {
    hwtimer__geometry geo;
    hwtimer__wheel w;
    struct hwtimer__link *lists;
    uint64_t *bits;
    /* the geometry by the reference's own arithmetic */
    uint64_t start, tick_ns, max_tick, width;
    unsigned b, levels;
    /* the nodes, spread over 8 MiB (a slot's list is chosen by address, one per MiB) */
    unsigned char *pool;
    ref_node *r;
    size_t n;
    /* the reference's wheel */
    uint64_t elapsed;
    int in_pass;
    uint64_t target;
    size_t live; /* pending: in a list, or PLACE_HELD */
    uint64_t seq, cascaded, refiled;
    size_t *left_q; /* `left`, in order */
    size_t left_n;
    uint32_t last_gen; /* the generation of `left`'s last nodes, whose `where` is _LIST */
    uint32_t next_gen; /* the front end's pass.left_gen ... */
    int left_flag;     /* ... and pass.left */
    /* the pass under way, or the last one */
    uint64_t last_out;
    size_t fired;
    uint64_t cut_count, live_sum; /* the randomized test's report */
    ref_node **seen; /* scratch: a list's nodes */
    /* the randomized test's: callbacks' operations and cuts between steps, per thousand */
    unsigned callback_ops, cuts;
    uint64_t rng;
} model;

static void never_runs(hwtimer_timeout *to, void *arg) {
    (void)to;
    (void)arg;
}

static ref_node *ref_of(const hwtimer_timeout *to) { return (ref_node *)to->arg; }

/* ---- the reference's arithmetic ---------------------------------------------------------- */

/* The level of a tick after elapsed (THE DESIGN): the highest bit in which they differ,
   over b; the digits above it agree with elapsed's. (test_internals checks the header's
   hwtimer__wheel_where against the digits themselves.) */
static unsigned level_of(uint64_t elapsed, uint64_t tick, unsigned b) {
    uint64_t x = tick ^ elapsed;
    unsigned bit = 0, half;
    for (half = 32; half > 0; half /= 2) {
        if (x >> half) {
            x >>= half;
            bit += half;
        }
    }
    return bit / b;
}

/* The start of the slot a node filed at tick `filed` waits in: its digits below its level
   cleared. */
static uint64_t slot_start_of(const model *m, uint64_t filed) {
    unsigned shift = level_of(m->elapsed, filed, m->b) * m->b;
    return filed >> shift << shift;
}

/* Its `where`: HWTIMER__WHERE_WHEEL + level * width + its digit at that level. */
static uint32_t where_of(const model *m, uint64_t filed) {
    unsigned level = level_of(m->elapsed, filed, m->b);
    return HWTIMER__WHERE_WHEEL + ((uint32_t)level << m->b) +
           (uint32_t)((filed >> (level * m->b)) & (m->width - 1));
}

/* ceil((D - S) / tick), 0 at or before S, then up to the node's leeway grid. */
static uint64_t ref_tick(const model *m, const ref_node *r, uint64_t deadline) {
    uint64_t e = 0;
    if (deadline > m->start) {
        e = (deadline - m->start) / m->tick_ns + ((deadline - m->start) % m->tick_ns != 0);
    }
    return r->leeway_n ? test_leeway_grid_tick(e, r->leeway_n, m->max_tick) : e;
}

/* A deadline whose tick (without leeway) is `tick` <= max_tick, anywhere in its tick. */
static uint64_t deadline_for(model *m, uint64_t tick) {
    uint64_t lo, hi;
    if (tick == 0) return m->start - test_rng_below(&m->rng, m->start < 1000 ? m->start : 1000);
    lo = m->start + (tick - 1) * m->tick_ns + 1;
    hi = tick > (UINT64_MAX - m->start) / m->tick_ns ? UINT64_MAX : m->start + tick * m->tick_ns;
    return lo + test_rng_below(&m->rng, hi - lo + 1);
}

/* ---- the model: a wheel and its reference -------------------------------------------------- */

static void model_open(model *m, uint64_t tick_ns, uint32_t per_wheel, uint64_t start,
                       size_t nodes, uint64_t seed) {
    size_t i, stride = (sizeof(hwtimer_timeout) + 63) / 64 * 64;
    unsigned bit_length = 0;
    memset(m, 0, sizeof *m);
    m->rng = seed;
    m->start = start;
    m->tick_ns = tick_ns;
    m->max_tick = UINT64_MAX - start == 0 ? 0
                  : (UINT64_MAX - start) / tick_ns + ((UINT64_MAX - start) % tick_ns != 0);
    m->width = 2;
    m->b = 1;
    while (m->width < per_wheel) {
        m->width <<= 1;
        m->b++;
    }
    while (bit_length < 64 && (m->max_tick >> bit_length)) bit_length++;
    m->levels = bit_length ? (bit_length + m->b - 1) / m->b : 1;
    /* what hwtimer_create does for each wheel (hwtimer__create, hwtimer__carve) */
    hwtimer__geometry_init(&m->geo, tick_ns, per_wheel, start);
    m->lists = (struct hwtimer__link *)calloc_or_die((size_t)hwtimer__wheel_heads(&m->geo),
                                                     sizeof *m->lists);
    m->bits = (uint64_t *)calloc_or_die((size_t)hwtimer__wheel_words(&m->geo), sizeof *m->bits);
    hwtimer__wheel_init(&m->w, &m->geo, m->lists, m->bits);
    CHECK_EQ(m->geo.width, m->width);
    CHECK_EQ(m->geo.bits, m->b);
    CHECK_EQ(m->geo.levels, m->levels);
    CHECK_EQ(m->geo.max_tick, m->max_tick);
    m->next_gen = hwtimer__left_where(&m->geo);
    m->n = nodes;
    m->pool = (unsigned char *)calloc_or_die((size_t)8 << 20, 1);
    m->r = (ref_node *)calloc_or_die(nodes, sizeof *m->r);
    m->left_q = (size_t *)calloc_or_die(nodes, sizeof *m->left_q);
    m->seen = (ref_node **)calloc_or_die(nodes + 1, sizeof *m->seen);
    CHECK(nodes / 8 * stride <= ((size_t)1 << 20));
    for (i = 0; i < nodes; i++) {
        m->r[i].to = (hwtimer_timeout *)(void *)(m->pool + ((i % 8) << 20) + i / 8 * stride);
    }
}

static void model_close(model *m) {
    free(m->lists);
    free(m->bits);
    free(m->pool);
    free(m->r);
    free(m->left_q);
    free(m->seen);
}

/* The nodes of a list, in order (at most m->n + 1: a cycle that misses its head stops). */
static size_t list_refs(const model *m, struct hwtimer__link *head, ref_node **out) {
    struct hwtimer__link *l;
    size_t k = 0;
    for (l = head->next; l != head && l && k <= m->n; l = l->next) {
        out[k++] = ref_of(hwtimer__node(l));
    }
    return k;
}

static void left_remove(model *m, const ref_node *r) {
    size_t i, j;
    for (i = j = 0; i < m->left_n; i++) {
        if (&m->r[m->left_q[i]] != r) m->left_q[j++] = m->left_q[i];
    }
    CHECK_EQ(j + 1, m->left_n);
    m->left_n = j;
}

/* The earliest slot start of the nodes in slots (with its level and digit): 0 if none. */
static int earliest_slot(const model *m, uint64_t *start, unsigned *level, uint32_t *slot) {
    size_t i;
    int found = 0;
    for (i = 0; i < m->n; i++) {
        const ref_node *r = &m->r[i];
        unsigned l;
        uint64_t s;
        if (r->place != PLACE_SLOT) continue;
        l = level_of(m->elapsed, r->filed, m->b);
        s = r->filed >> (l * m->b) << (l * m->b);
        if (!found || s < *start) {
            *start = s;
            if (level) *level = l;
            if (slot) *slot = (uint32_t)((r->filed >> (l * m->b)) & (m->width - 1));
            found = 1;
        }
    }
    return found;
}

/* Every rule, after every operation. */
static void verify(model *m) {
    hwtimer__wheel *w = &m->w;
    ref_node **seen = m->seen;
    size_t i, k, held = 0, live = 0, n_slot = 0, n_due = 0, n_ready = 0, n_left = 0;
    uint64_t min_tick = UINT64_MAX, expect = 0, tick = 0;
    int have = 0, got;
    CHECK_EQ(w->elapsed, m->elapsed);
    CHECK_EQ(w->collecting, m->in_pass);
    CHECK_EQ(w->due_upto, m->in_pass ? m->target : m->elapsed);
    CHECK_EQ(w->notice_upto, w->due_upto > w->watch_upto ? w->due_upto : w->watch_upto);
    CHECK_EQ(w->cascaded, m->cascaded);
    CHECK_EQ(w->refiled, m->refiled);
    CHECK_EQ(w->left_gen, m->last_gen);
    for (i = 0; i < m->n; i++) {
        const ref_node *r = &m->r[i];
        const hwtimer_timeout *to = r->to;
        if (r->place == PLACE_NONE) continue;
        live++;
        if (r->tick < min_tick && r->place != PLACE_HELD) min_tick = r->tick;
        CHECK_EQ(to->state, HWTIMER_PENDING);
        CHECK(to->wheel == w);
        CHECK_EQ(ref_tick(m, r, to->deadline), r->tick);
        switch (r->place) {
        case PLACE_SLOT:
            n_slot++;
            CHECK(r->filed > m->elapsed && r->filed <= r->tick);
            CHECK_EQ(to->where, where_of(m, r->filed));
            break;
        case PLACE_DUE:
            n_due++;
            CHECK(r->tick <= w->due_upto);
            CHECK_EQ(to->where, HWTIMER__WHERE_LIST);
            break;
        case PLACE_READY:
            n_ready++;
            CHECK(m->in_pass && r->tick <= m->elapsed);
            CHECK_EQ(to->where, HWTIMER__WHERE_LIST);
            break;
        case PLACE_LEFT:
            n_left++;
            CHECK_EQ(to->where, r->gen == m->last_gen ? (uint32_t)HWTIMER__WHERE_LIST : r->gen);
            break;
        default:
            held++;
        }
    }
    CHECK_EQ(live, m->live);
    CHECK_EQ(w->pending, m->live);
    CHECK_EQ(hwtimer__wheel_check(w, held), 0);
    /* `due`: by tick, ties in filing order */
    k = list_refs(m, &w->due, seen);
    CHECK_EQ(k, n_due);
    for (i = 0; i < k && i < n_due; i++) {
        CHECK_EQ(seen[i]->place, PLACE_DUE);
        if (i > 0) {
            CHECK(seen[i - 1]->tick < seen[i]->tick ||
                  (seen[i - 1]->tick == seen[i]->tick && seen[i - 1]->seq < seen[i]->seq));
        }
    }
    /* `ready`: by tick */
    k = list_refs(m, &w->ready, seen);
    CHECK_EQ(k, n_ready);
    for (i = 0; i < k && i < n_ready; i++) {
        CHECK_EQ(seen[i]->place, PLACE_READY);
        if (i > 0) CHECK(seen[i - 1]->tick <= seen[i]->tick);
    }
    /* `left`: as it was set aside */
    k = list_refs(m, &w->left, seen);
    CHECK_EQ(k, n_left);
    CHECK_EQ(k, m->left_n);
    for (i = 0; i < k && i < m->left_n; i++) CHECK(seen[i] == &m->r[m->left_q[i]]);
    /* the next tick with work: brute force */
    if (n_ready || n_left) {
        have = 1;
        expect = m->elapsed;
    } else if (n_due) {
        have = 1;
        for (i = 0, expect = UINT64_MAX; i < m->n; i++) {
            if (m->r[i].place == PLACE_DUE && m->r[i].tick < expect) expect = m->r[i].tick;
        }
    } else {
        have = earliest_slot(m, &expect, NULL, NULL);
    }
    got = hwtimer__wheel_next_tick(w, &tick);
    CHECK_EQ(got, have);
    if (got && have) {
        CHECK_EQ(tick, expect);
        /* never after the earliest pending node, unless due at once (by due_upto: in a
           pass, filings wait in `due` while slots by the target are still to come) */
        CHECK(tick <= min_tick || tick <= w->due_upto);
    }
}

/* ---- the front end's calls, checked -------------------------------------------------------- */

/* hwtimer__wheel_file on a node the front end has counted: its tick, the answer (watched
   exactly up to watch_upto), and its place (`due` up to due_upto, else its slot). */
static void file_checked(model *m, ref_node *r, uint64_t deadline) {
    hwtimer__wheel *w = &m->w;
    uint64_t tick = 0, expect = ref_tick(m, r, deadline);
    uint64_t watch = w->watch_upto, due = w->due_upto;
    int watched = hwtimer__wheel_file(w, r->to, deadline, &tick);
    CHECK_EQ(tick, expect);
    CHECK_EQ(watched, expect <= watch);
    CHECK_EQ(r->to->deadline, deadline);
    r->tick = expect;
    r->seq = ++m->seq;
    r->eligible = 0;
    if (expect <= due) {
        r->place = PLACE_DUE;
    } else {
        r->place = PLACE_SLOT;
        r->filed = expect;
    }
}

/* An arming (hwtimer__arm_general, or past notice_upto sometimes hwtimer__arm_inline's
   hwtimer__wheel_file_past, in either form). */
static void arm(model *m, ref_node *r, uint64_t deadline) {
    hwtimer__wheel *w = &m->w;
    uint64_t expect = ref_tick(m, r, deadline), pick = test_rng_next(&m->rng);
    CHECK_EQ(r->place, PLACE_NONE);
    hwtimer__arm_fill(w, r->to, 0, never_runs, r);
    w->pending++;
    m->live++;
    if (expect > w->notice_upto && pick % 2) {
        hwtimer__wheel_file_past(w, r->to, deadline, expect,
                                 pick / 2 % 2 ? HWTIMER__ONE_STORE : HWTIMER__FIELD_BY_FIELD,
                                 hwtimer__leeway_key(r->to));
        CHECK_EQ(r->to->deadline, deadline);
        r->tick = expect;
        r->seq = ++m->seq;
        r->eligible = 0;
        r->place = PLACE_SLOT;
        r->filed = expect;
    } else {
        file_checked(m, r, deadline);
    }
}

/* A cancel (hwtimer__cancel_locked of a filed node). */
static void cancel(model *m, ref_node *r) {
    hwtimer__wheel_uncount(&m->w, r->to, 1);
    CHECK_EQ(r->to->state, HWTIMER_CANCELLED);
    if (r->place == PLACE_LEFT) left_remove(m, r);
    r->place = PLACE_NONE;
    r->eligible = 0;
    m->live--;
}

/* A reschedule of a pending node (hwtimer__move_locked): a push later where the node may
   stay (a coarse slot, or `left` past its last generation, no pass under way), else a move
   to its new slot past notice_upto, else filed anew. */
static void move(model *m, ref_node *r, uint64_t deadline) {
    hwtimer__wheel *w = &m->w;
    hwtimer_timeout *to = r->to;
    uint64_t old = to->deadline, expect = ref_tick(m, r, deadline), notice = w->notice_upto;
    uint32_t where = to->where;
    int may = !m->in_pass && deadline >= old &&
              ((r->place == PLACE_SLOT && level_of(m->elapsed, r->filed, m->b) > 0) ||
               (r->place == PLACE_LEFT && r->gen != m->last_gen));
    int pushed = hwtimer__wheel_push_later(w, to, deadline);
    uint64_t tick;
    CHECK_EQ(pushed, may);
    if (pushed) {
        CHECK_EQ(to->deadline, deadline);
        CHECK_EQ(to->where, where);
        r->tick = expect;
        return;
    }
    tick = hwtimer__wheel_move(w, to, deadline);
    CHECK_EQ(tick, expect > notice ? expect : 0);
    r->eligible = 0;
    if (r->place == PLACE_LEFT) left_remove(m, r);
    if (tick) {
        CHECK_EQ(to->deadline, deadline);
        r->tick = tick;
        r->place = PLACE_SLOT;
        r->filed = tick;
    } else {
        CHECK_EQ(to->deadline, old); /* nothing changed */
        CHECK_EQ(to->where, where);
        hwtimer__wheel_unfile(w, to);
        file_checked(m, r, deadline);
    }
}

/* A node comes out to run (hwtimer__run_node): it must be due by the pass's target and
   pending since the pass began. */
static void fire(model *m, ref_node *r) {
    CHECK_EQ(r->place, PLACE_HELD);
    CHECK(r->eligible);
    CHECK(r->tick <= m->target);
    hwtimer__set_state(r->to, HWTIMER_EXPIRED);
    m->w.pending--;
    m->live--;
    r->place = PLACE_NONE;
    r->eligible = 0;
    m->fired++;
}

/* ... in a step at `tick`: exactly at its tick, in order. */
static void fire_in_step(model *m, ref_node *r, uint64_t tick) {
    CHECK_EQ(r->tick, tick);
    CHECK(r->tick >= m->last_out);
    m->last_out = r->tick;
    fire(m, r);
}

/* ---- random choices ------------------------------------------------------------------------ */

/* A tick for a filing, from elapsed: past (`due`), near, far, at a level's boundary, any,
   or the latest. */
static uint64_t draw_tick(model *m) {
    uint64_t e = m->elapsed, room = m->max_tick - e, pick = test_rng_below(&m->rng, 100);
    uint64_t v = test_rng_next(&m->rng);
    unsigned bits = (unsigned)test_rng_below(&m->rng, 65);
    uint64_t any = bits == 64 ? v : v & (((uint64_t)1 << bits) - 1);
    if (room == 0 || pick < 10) return e - test_rng_below(&m->rng, e < 5 ? e + 1 : 5);
    if (pick < 40) return e + 1 + test_rng_below(&m->rng, room < m->width ? room : m->width);
    if (pick < 60) {
        uint64_t span = m->width * m->width;
        return e + 1 + test_rng_below(&m->rng, room < span ? room : span);
    }
    if (pick < 72) { /* the next boundary of a level, or a tick either side of it */
        unsigned shift = (unsigned)test_rng_below(&m->rng, m->levels) * m->b;
        uint64_t up = shift ? (e >> shift) + 1 : e + 1, t;
        if (shift && up > (UINT64_MAX >> shift)) return m->max_tick;
        t = (shift ? up << shift : up) + test_rng_below(&m->rng, 3) - 1;
        return t <= e ? e + 1 : t > m->max_tick ? m->max_tick : t;
    }
    if (pick < 95) return e + 1 + any % room;
    return m->max_tick - test_rng_below(&m->rng, 2);
}

/* A random node: PLACE_NONE (want_out), or pending in a list; NULL if none. */
static ref_node *draw_node(model *m, int want_out) {
    size_t i, at = (size_t)test_rng_below(&m->rng, m->n);
    for (i = 0; i < m->n; i++) {
        ref_node *r = &m->r[(at + i) % m->n];
        if (want_out ? r->place == PLACE_NONE : r->place != PLACE_NONE && r->place != PLACE_HELD) return r;
    }
    return NULL;
}

/* A leeway, often none: up to four digits times a power of ten, stored exactly. */
static void draw_leeway(model *m, ref_node *r) {
    uint64_t digits = test_rng_below(&m->rng, 65536), ns;
    unsigned exp = (unsigned)test_rng_below(&m->rng, 13);
    if (test_rng_below(&m->rng, 4)) digits = 0;
    for (ns = digits; exp > 0; exp--) ns *= 10u;
    CHECK_EQ(hwtimer_timeout_set_leeway(r->to, ns), HWTIMER_OK);
    r->leeway_n = ns / m->tick_ns;
}

/* What the front end may do to the wheel at any time, a callback too: arm, cancel,
   reschedule, or give the loop an answer. */
static void random_op(model *m) {
    hwtimer__wheel *w = &m->w;
    uint64_t pick = test_rng_below(&m->rng, 100), tick;
    ref_node *r;
    if (pick < 55) {
        r = draw_node(m, 1);
        if (!r) return;
        if (test_rng_below(&m->rng, 8) == 0) draw_leeway(m, r);
        arm(m, r, deadline_for(m, draw_tick(m)));
    } else if (pick < 67) {
        r = draw_node(m, 0);
        if (r) cancel(m, r);
    } else if (pick < 93) {
        r = draw_node(m, 0);
        if (!r) return;
        if (pick < 82) { /* later: what most reschedules do */
            uint64_t d = r->to->deadline, add;
            if (test_rng_below(&m->rng, 4) == 0) {
                add = test_rng_next(&m->rng) >> test_rng_below(&m->rng, 64);
            } else {
                add = test_rng_below(&m->rng, 4 * m->width * m->tick_ns);
            }
            move(m, r, d > UINT64_MAX - add ? UINT64_MAX : d + add);
        } else {
            move(m, r, deadline_for(m, draw_tick(m)));
        }
    } else {
        /* as hwtimer__give_answer: up to the next tick with work, or none (everything), or
           nothing (a filing called for a wake-up: hwtimer__note_filing), or any */
        switch (test_rng_below(&m->rng, 4)) {
        case 0:
            hwtimer__wheel_watch(w, hwtimer__wheel_next_tick(w, &tick) ? tick : UINT64_MAX);
            break;
        case 1: hwtimer__wheel_watch(w, 0); break;
        case 2: hwtimer__wheel_watch(w, m->elapsed + test_rng_below(&m->rng, 2 * m->width)); break;
        default: hwtimer__wheel_watch(w, test_rng_next(&m->rng));
        }
    }
}

static int roll(model *m, unsigned per_mille) {
    return per_mille && test_rng_below(&m->rng, 1000) < per_mille;
}

/* ---- a pass, a step at a time ------------------------------------------------------------- */

/* The reference empties the slot starting at S (level `level`): its nodes due by S to
   `ready` (or, in a cut, marked to be set aside), the others filed again by their tick
   after the new elapsed, counted as moves down (and re-filings past the slot's end). The
   number of nodes that were in it. */
static size_t ref_collect(model *m, uint64_t s, unsigned level, int cut) {
    uint64_t span = (uint64_t)1 << (level * m->b);
    size_t i, n = 0;
    for (i = 0; i < m->n; i++) {
        ref_node *r = &m->r[i];
        r->emptied = r->place == PLACE_SLOT && slot_start_of(m, r->filed) == s;
        n += (size_t)r->emptied;
    }
    m->elapsed = s;
    for (i = 0; i < m->n; i++) {
        ref_node *r = &m->r[i];
        if (!r->emptied) continue;
        r->emptied = 0;
        if (r->tick <= s) {
            CHECK_EQ(r->tick, s);
            r->place = cut ? PLACE_LEFT : PLACE_READY;
            r->mark = cut;
        } else {
            CHECK(level > 0); /* none waits in level 0 pushed later */
            r->filed = r->tick;
            m->cascaded++;
            if (r->tick - s >= span) m->refiled++;
        }
    }
    return n;
}

/* A bounded pass stops (hwtimer__pass_cut): the wheel sets aside what the pass would still
   run, in the order it would: `ready`, then each slot's by the target. */
static void cut(model *m) {
    hwtimer__wheel *w = &m->w;
    ref_node **ready = (ref_node **)calloc_or_die(m->n + 1, sizeof *ready);
    ref_node **left = (ref_node **)calloc_or_die(m->n + 1, sizeof *left);
    size_t i, n_ready = list_refs(m, &w->ready, ready), before = m->left_n, n_left, expected;
    uint64_t s = 0, last = 0; /* (set by earliest_slot before use; gcc -O3 cannot tell) */
    unsigned level;
    int anything = n_ready > 0 || (earliest_slot(m, &s, NULL, NULL) && s <= m->target);
    for (i = 0; i < n_ready; i++) ready[i]->place = PLACE_LEFT;
    while (earliest_slot(m, &s, &level, NULL) && s <= m->target) ref_collect(m, s, level, 1);
    for (i = 0, expected = n_ready; i < m->n; i++) expected += (size_t)m->r[i].mark;
    hwtimer__wheel_set_aside(w, m->next_gen);
    m->cut_count++;
    m->in_pass = 0;
    m->elapsed = m->target;
    if (anything) m->last_gen = m->next_gen;
    n_left = list_refs(m, &w->left, left);
    CHECK_EQ(n_left, before + expected);
    for (i = 0; i < n_left && i < before + expected; i++) {
        ref_node *r = left[i];
        if (i < before) {
            CHECK(r == &m->r[m->left_q[i]]);
            continue;
        }
        if (i < before + n_ready) {
            CHECK(r == ready[i - before]); /* `ready` first, as it was */
        } else {
            CHECK(r->mark); /* then the slots', in order of tick */
            CHECK(r->tick >= last);
            last = r->tick;
            r->mark = 0;
        }
        r->gen = m->next_gen;
        m->left_q[m->left_n++] = (size_t)(r - m->r);
    }
    for (i = 0; i < m->n; i++) {
        CHECK(!m->r[i].mark);
        m->r[i].mark = 0;
        m->r[i].eligible = 0;
    }
    if (m->left_n > before) {
        m->left_flag = 1;
        if (m->next_gen < UINT32_MAX) m->next_gen++;
    }
    free(ready);
    free(left);
    verify(m);
}

/* The step the reference expects: the ready nodes, else the earliest slot by the target. */
static int expect_step(model *m, hwtimer__step *step) {
    size_t i;
    int ready = 0;
    for (i = 0; i < m->n; i++) {
        if (m->r[i].place == PLACE_READY && (!ready || m->r[i].tick < step->tick)) {
            step->tick = m->r[i].tick;
            ready = 1;
        }
    }
    if (ready) {
        step->runs_ready = 1;
        return 1;
    }
    step->runs_ready = 0;
    return earliest_slot(m, &step->tick, &step->level, &step->slot) && step->tick <= m->target;
}

/* A pass to `target` begins (hwtimer__wheel_begin): `due` to `ready`. */
static void pass_begin(model *m, uint64_t target) {
    size_t i;
    CHECK(target >= m->elapsed);
    for (i = 0; i < m->n; i++) {
        ref_node *r = &m->r[i];
        r->eligible = r->place != PLACE_NONE && r->tick <= target;
        if (r->place == PLACE_DUE) r->place = PLACE_READY;
    }
    m->in_pass = 1;
    m->target = target;
    m->fired = 0;
    m->last_out = 0;
    hwtimer__wheel_begin(&m->w, target);
    verify(m);
}

/* The rest of the pass, as hwtimer__pass_bounded runs one wheel: what bounded passes left
   first (a node pushed past the target since is filed instead), then step by step; between
   any two nodes, maybe a callback's operation or a cut. */
static void pass_finish(model *m) {
    hwtimer__wheel *w = &m->w;
    hwtimer__step step, expect;
    size_t i;
    memset(&expect, 0, sizeof expect); /* (set before use; gcc -O3 cannot tell) */
    if (m->left_flag) {
        while (m->left_n > 0) {
            ref_node *r;
            if (roll(m, m->callback_ops)) {
                random_op(m);
                verify(m);
                continue;
            }
            if (roll(m, m->cuts)) {
                cut(m);
                return;
            }
            r = ref_of(hwtimer__wheel_take(w, &w->left));
            CHECK(r == &m->r[m->left_q[0]]);
            left_remove(m, r);
            r->place = PLACE_HELD;
            verify(m);
            if (r->tick > w->due_upto) { /* hwtimer__run_left_head */
                file_checked(m, r, r->to->deadline);
                w->cascaded++;
                w->refiled++;
                m->cascaded++;
                m->refiled++;
                CHECK_EQ(r->place, PLACE_SLOT);
            } else {
                fire(m, r);
            }
            verify(m);
        }
        m->left_flag = 0;
        m->next_gen = hwtimer__left_where(&m->geo);
    }
    for (;;) {
        hwtimer_timeout *alone;
        int have, got;
        if (roll(m, m->callback_ops)) {
            random_op(m);
            verify(m);
        }
        if (roll(m, m->cuts)) {
            cut(m);
            return;
        }
        have = expect_step(m, &expect);
        got = hwtimer__wheel_next_step(w, &step);
        CHECK_EQ(got, have);
        if (!got || !have) break;
        CHECK_EQ(step.runs_ready, expect.runs_ready);
        CHECK_EQ(step.tick, expect.tick);
        if (!step.runs_ready) {
            size_t n;
            CHECK_EQ(step.level, expect.level);
            CHECK_EQ(step.slot, expect.slot);
            n = ref_collect(m, step.tick, step.level, 0);
            alone = hwtimer__wheel_collect(w, &step);
            if (alone) { /* a level-0 slot's only node, in no list */
                ref_node *r = ref_of(alone);
                CHECK(step.level == 0 && n == 1);
                CHECK_EQ(r->place, PLACE_READY);
                r->place = PLACE_HELD;
                verify(m);
                fire_in_step(m, r, step.tick);
                verify(m);
                continue;
            }
            verify(m);
        }
        while (!hwtimer__list_empty(&w->ready)) { /* hwtimer__run_step */
            ref_node *r;
            if (step.runs_ready && hwtimer__listed_tick(w, w->ready.next) > step.tick) break;
            r = ref_of(hwtimer__wheel_take_ready(w));
            CHECK_EQ(r->place, PLACE_READY);
            r->place = PLACE_HELD;
            verify(m);
            fire_in_step(m, r, step.tick);
            verify(m);
            if (roll(m, m->callback_ops)) {
                random_op(m);
                verify(m);
            }
        }
    }
    hwtimer__wheel_end(w, 1);
    m->in_pass = 0;
    m->elapsed = m->target;
    for (i = 0; i < m->n; i++) {
        CHECK(!m->r[i].eligible); /* every node due by the target came out */
        m->r[i].eligible = 0;
    }
    verify(m);
}

static void pass(model *m, uint64_t target) {
    pass_begin(m, target);
    pass_finish(m);
}

/* hwtimer_stop's hwtimer__wheel_cancel_all: every filed node cancelled into `out`. */
static void cancel_all(model *m) {
    struct hwtimer__link out[HWTIMER_SLOT_LISTS];
    size_t i, k, n, handed = 0;
    hwtimer__init_out(out);
    n = hwtimer__wheel_cancel_all(&m->w, out);
    CHECK_EQ(n, m->live);
    for (k = 0; k < HWTIMER_SLOT_LISTS; k++) {
        struct hwtimer__link *l;
        for (l = out[k].next; l != &out[k] && handed <= m->n; l = l->next, handed++) {
            ref_node *r = ref_of(hwtimer__node(l));
            CHECK(r->place != PLACE_NONE && r->place != PLACE_HELD);
            CHECK_EQ(r->to->state, HWTIMER_CANCELLED);
            r->place = PLACE_NONE;
        }
    }
    CHECK_EQ(handed, n);
    for (i = 0; i < m->n; i++) CHECK_EQ(m->r[i].place, PLACE_NONE);
    for (i = 0; i < (size_t)hwtimer__wheel_words(&m->geo); i++) CHECK_EQ(m->bits[i], 0);
    m->live = 0;
    m->left_n = 0;
    m->left_flag = 0;
    m->next_gen = hwtimer__left_where(&m->geo);
    verify(m);
}

/* ---- directed: every level, tick by tick ------------------------------------------------- */

static int by_value(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Ticks over every level from elapsed 0: each level's first two and last two, one between,
   and the latest tick (the top level's last). */
static size_t level_ticks(model *m, uint64_t *ticks) {
    size_t k = 0;
    unsigned level;
    ticks[k++] = 0;
    for (level = 0; level < m->levels; level++) {
        unsigned above = (level + 1) * m->b;
        uint64_t lo = level ? (uint64_t)1 << (level * m->b) : 1;
        uint64_t hi = above >= 64 ? UINT64_MAX : ((uint64_t)1 << above) - 1;
        if (hi > m->max_tick) hi = m->max_tick;
        if (lo > hi) continue; /* (a geometry whose latest tick is 0) */
        ticks[k++] = lo;
        ticks[k++] = lo + (lo < hi);
        ticks[k++] = hi - (hi > lo);
        ticks[k++] = hi;
        ticks[k++] = lo + test_rng_below(&m->rng, hi - lo + 1);
    }
    ticks[k++] = m->max_tick;
    qsort(ticks, k, sizeof *ticks, by_value);
    return k;
}

static void walk_levels(uint64_t tick_ns, uint32_t per_wheel, uint64_t start) {
    model m;
    uint64_t ticks[6 * 64 + 2];
    size_t i, j, k, done;
    unsigned level;
    model_open(&m, tick_ns, per_wheel, start, 6 * 64 + 2, 42);
    k = level_ticks(&m, ticks);
    for (i = 0; i < k; i++) arm(&m, &m.r[i], deadline_for(&m, ticks[i]));
    verify(&m);
    /* each level holds nodes, the latest tick the top one */
    for (level = 0; level < m.levels; level++) {
        size_t in_level = 0;
        for (i = 0; i < k; i++) {
            uint32_t where = m.r[i].to->where;
            in_level += where >= HWTIMER__WHERE_WHEEL &&
                        (where - HWTIMER__WHERE_WHEEL) >> m.b == level;
        }
        CHECK(in_level > 0 || m.max_tick == 0);
    }
    if (m.max_tick > 0) {
        CHECK_EQ((m.r[k - 1].to->where - HWTIMER__WHERE_WHEEL) >> m.b, m.levels - 1);
    }
    /* up to a tick before each, then to it: nothing early, everything at its tick */
    for (i = 0, done = 0; i < k; i = j) {
        uint64_t t = ticks[i];
        for (j = i; j < k && ticks[j] == t; j++) continue;
        if (t > m.elapsed) {
            pass(&m, t - 1);
            CHECK_EQ(m.fired, 0);
        }
        pass(&m, t);
        CHECK_EQ(m.fired, j - done);
        done = j;
    }
    CHECK_EQ(m.live, 0);
    CHECK(m.max_tick < 2 || m.cascaded > 0);
    /* again from 0, in one pass to the end: every node in tick order */
    hwtimer__wheel_init(&m.w, &m.geo, m.lists, m.bits);
    m.elapsed = m.cascaded = m.refiled = 0;
    for (i = 0; i < k; i++) arm(&m, &m.r[k - 1 - i], deadline_for(&m, ticks[k - 1 - i]));
    verify(&m);
    pass(&m, m.max_tick);
    CHECK_EQ(m.fired, k);
    CHECK_EQ(m.live, 0);
    model_close(&m);
}

static void test_every_level(void) {
    walk_levels(1, 2, 0);          /* 64 levels of 2 slots */
    walk_levels(1, 8, 0);          /* 22 levels: the top one has one bit, bit 63 */
    walk_levels(1, 64, 0);         /* one word of bits a level */
    walk_levels(1, 100, 0);        /* 128 slots: two words */
    walk_levels(1, 512, 0);        /* hwtimer_config_default's width */
    walk_levels(1, 4096, 0);       /* two layers of bits */
    walk_levels(1000000, 512, 12345); /* 1 ms ticks: 45 bits, 5 levels */
    walk_levels(3, 16, UINT64_MAX / 2);
    walk_levels(UINT64_MAX / 8, 4, 0); /* 8 ticks */
    walk_levels(1, 2, UINT64_MAX); /* only tick 0: one level, everything due */
}

/* ---- directed: the upto fields -------------------------------------------------------------- */

static void test_upto_fields(void) {
    model m;
    hwtimer__wheel *w = &m.w;
    ref_node *a, *b, *c, *d, *e, *f, *g;
    model_open(&m, 1, 8, 0, 16, 7);
    a = &m.r[0], b = &m.r[1], c = &m.r[2], d = &m.r[3], e = &m.r[4], f = &m.r[5], g = &m.r[6];
    CHECK(w->notice_upto == 0 && w->due_upto == 0 && w->watch_upto == 0);
    arm(&m, a, deadline_for(&m, 0)); /* due now: `due`, and watched (0 <= watch_upto 0) */
    CHECK_EQ(a->place, PLACE_DUE);
    arm(&m, b, deadline_for(&m, 5));
    CHECK_EQ(b->place, PLACE_SLOT);
    arm(&m, g, deadline_for(&m, 3));
    verify(&m);
    /* the loop was told tick 20: filings by then are reported (arm checks the answer),
       later ones are not */
    hwtimer__wheel_watch(w, 20);
    CHECK_EQ(w->notice_upto, 20);
    arm(&m, c, deadline_for(&m, 20));
    CHECK_EQ(c->place, PLACE_SLOT);
    arm(&m, d, deadline_for(&m, 21));
    CHECK_EQ(d->place, PLACE_SLOT);
    verify(&m);
    /* a move into the watched ticks changes nothing in hwtimer__wheel_move (the front end
       files it anew, and hears that it is watched); one past them from level 0 moves at
       once; one later in a coarse slot is pushed, left where it is */
    move(&m, d, deadline_for(&m, 10));
    CHECK_EQ(d->tick, 10);
    move(&m, g, deadline_for(&m, 60));
    CHECK_EQ(g->tick, 60);
    CHECK_EQ(g->filed, 60);
    move(&m, c, deadline_for(&m, 100));
    CHECK_EQ(c->tick, 100);
    CHECK_EQ(c->filed, 20);
    verify(&m);
    /* a pass to 30: filings by it wait in `due` for the next pass, watched or not */
    pass_begin(&m, 30);
    CHECK_EQ(w->due_upto, 30);
    CHECK_EQ(w->notice_upto, 30);
    arm(&m, e, deadline_for(&m, 25));
    CHECK_EQ(e->place, PLACE_DUE);
    arm(&m, f, deadline_for(&m, 15));
    CHECK_EQ(f->place, PLACE_DUE);
    hwtimer__wheel_watch(w, 0); /* notice_upto stays due_upto */
    CHECK_EQ(w->notice_upto, 30);
    hwtimer__wheel_watch(w, 40);
    CHECK_EQ(w->notice_upto, 40);
    verify(&m);
    pass_finish(&m); /* a (0), b (5), d (10); c re-filed from its coarse slot */
    CHECK_EQ(m.fired, 3);
    CHECK(a->place == PLACE_NONE && b->place == PLACE_NONE && d->place == PLACE_NONE);
    CHECK(e->place == PLACE_DUE && f->place == PLACE_DUE && c->place == PLACE_SLOT && g->place == PLACE_SLOT);
    CHECK_EQ(c->filed, 100);
    CHECK_EQ(w->elapsed, 30);
    CHECK_EQ(w->due_upto, 30);
    /* after it, a filing at or before elapsed goes to `due`, in order of tick */
    hwtimer__wheel_watch(w, 0);
    CHECK_EQ(w->notice_upto, 30);
    arm(&m, a, deadline_for(&m, 30));
    arm(&m, b, deadline_for(&m, 15));
    CHECK(a->place == PLACE_DUE && b->place == PLACE_DUE);
    verify(&m);
    pass(&m, 30); /* f, b (15, in filing order), e (25), a (30) */
    CHECK_EQ(m.fired, 4);
    CHECK_EQ(m.live, 2);
    model_close(&m);
}

/* ---- directed: the check catches a broken wheel --------------------------------------------- */

static void test_check_catches(void) {
    model m;
    hwtimer__wheel *w = &m.w;
    hwtimer_timeout *a, *b, *c, *d, *e;
    struct hwtimer__link *saved;
    uint64_t deadline, elapsed;
    uint8_t state;
    model_open(&m, 1, 8, 0, 16, 9);
    pass(&m, 2);
    arm(&m, &m.r[0], deadline_for(&m, 3)); /* level 0, in slot 3 ... */
    arm(&m, &m.r[1], deadline_for(&m, 3)); /* ... with another (another MiB: another list) */
    arm(&m, &m.r[2], deadline_for(&m, 100)); /* level 2 */
    arm(&m, &m.r[3], deadline_for(&m, 1)); /* `due`: 1, then 2 */
    arm(&m, &m.r[4], deadline_for(&m, 2));
    a = m.r[0].to, b = m.r[1].to, c = m.r[2].to, d = m.r[3].to, e = m.r[4].to;
    CHECK_EQ(m.r[3].place, PLACE_DUE);
    CHECK(w->due.next == &d->link && d->link.next == &e->link);
    verify(&m);
    /* a link that does not point back */
    saved = b->link.prev;
    b->link.prev = &b->link;
    CHECK_EQ(hwtimer__wheel_check(w, 0), HWTIMER_CHECK_LINKS);
    b->link.prev = saved;
    CHECK_EQ(hwtimer__wheel_check(w, 0), 0);
    /* a node made anew while filed */
    state = a->state;
    a->state = HWTIMER_IDLE;
    CHECK_EQ(hwtimer__wheel_check(w, 0), HWTIMER_CHECK_NODE);
    a->state = state;
    CHECK_EQ(hwtimer__wheel_check(w, 0), 0);
    /* a level-0 node whose tick moved (none waits there pushed later), a coarse one whose
       tick is before its slot's start */
    deadline = a->deadline;
    a->deadline = 4;
    CHECK_EQ(hwtimer__wheel_check(w, 0), HWTIMER_CHECK_SLOT);
    a->deadline = deadline;
    deadline = c->deadline;
    c->deadline = 50;
    CHECK_EQ(hwtimer__wheel_check(w, 0), HWTIMER_CHECK_SLOT);
    c->deadline = 1000; /* later than its slot's start: allowed (a push later) */
    CHECK_EQ(hwtimer__wheel_check(w, 0), 0);
    c->deadline = deadline;
    /* an occupancy bit of an empty slot */
    hwtimer__bits_set(&m.geo, hwtimer__level_bits(w, 0), 6, 1);
    CHECK_EQ(hwtimer__wheel_check(w, 0), HWTIMER_CHECK_BITMAP);
    hwtimer__bits_set(&m.geo, hwtimer__level_bits(w, 0), 6, 0);
    CHECK_EQ(hwtimer__wheel_check(w, 0), 0);
    /* elapsed past an occupied slot */
    elapsed = w->elapsed;
    w->elapsed = 3;
    CHECK_EQ(hwtimer__wheel_check(w, 0), HWTIMER_CHECK_BEHIND);
    w->elapsed = elapsed;
    CHECK_EQ(hwtimer__wheel_check(w, 0), 0);
    /* `due` out of order */
    deadline = d->deadline;
    d->deadline = 2 + 1;
    CHECK_EQ(hwtimer__wheel_check(w, 0), HWTIMER_CHECK_ORDER);
    d->deadline = deadline;
    CHECK_EQ(hwtimer__wheel_check(w, 0), 0);
    /* a count that disagrees, or a node said held out that is not */
    w->pending++;
    CHECK_EQ(hwtimer__wheel_check(w, 0), HWTIMER_CHECK_COUNT);
    w->pending--;
    CHECK_EQ(hwtimer__wheel_check(w, 1), HWTIMER_CHECK_COUNT);
    /* notice_upto below due_upto, or below watch_upto */
    w->notice_upto = w->due_upto - 1;
    CHECK_EQ(hwtimer__wheel_check(w, 0), HWTIMER_CHECK_NEAR);
    w->notice_upto = w->due_upto;
    w->watch_upto = w->due_upto + 1;
    CHECK_EQ(hwtimer__wheel_check(w, 0), HWTIMER_CHECK_NEAR);
    hwtimer__wheel_watch(w, w->watch_upto);
    verify(&m);
    model_close(&m);
    /* two layers of bits: a word's bit with no bit above it */
    model_open(&m, 1, 4096, 0, 8, 11);
    arm(&m, &m.r[0], deadline_for(&m, 3000));
    verify(&m);
    m.bits[m.geo.layer_offset[0] + 1] |= 1; /* slot 64: its layer-1 bit is clear */
    CHECK_EQ(hwtimer__wheel_check(w, 0), HWTIMER_CHECK_BITMAP);
    m.bits[m.geo.layer_offset[0] + 1] &= ~(uint64_t)1;
    verify(&m);
    model_close(&m);
}

/* ---- randomized ---------------------------------------------------------------------------- */

/* A target from elapsed: the same tick, a few ticks on, a rotation or two, a pending node's
   tick or the one before, any distance (of a random bit length), or the end. */
static uint64_t draw_target(model *m) {
    uint64_t e = m->elapsed, room = m->max_tick - e, pick = test_rng_below(&m->rng, 1000);
    ref_node *r;
    if (pick < 450) return e + test_rng_below(&m->rng, room < 4 ? room + 1 : 4);
    if (pick < 750) {
        return e + test_rng_below(&m->rng, room < 2 * m->width ? room + 1 : 2 * m->width);
    }
    if (pick < 800 && (r = draw_node(m, 0)) != NULL && r->tick > e) {
        return r->tick - test_rng_below(&m->rng, 2);
    }
    if (pick < 990) {
        uint64_t span = m->width * m->width * m->width;
        return e + test_rng_below(&m->rng, room < span ? room + 1 : span);
    }
    if (pick < 999) {
        unsigned bits = (unsigned)test_rng_below(&m->rng, 64);
        uint64_t v = test_rng_next(&m->rng) & (((uint64_t)1 << bits) - 1);
        return e + (v < room ? v : room);
    }
    return m->max_tick;
}

static void random_run(uint64_t tick_ns, uint32_t per_wheel, uint64_t start, size_t ops,
                       uint64_t seed) {
    model m;
    size_t i;
    uint64_t cascaded = 0, passes = 0, fired = 0;
    model_open(&m, tick_ns, per_wheel, start, 128, seed);
    m.callback_ops = 150;
    m.cuts = 4;
    for (i = 0; i < ops; i++) {
        uint64_t pick = test_rng_below(&m.rng, 1000);
        if (pick < 700) {
            random_op(&m);
            verify(&m);
        } else if (pick < 999) {
            pass(&m, draw_target(&m));
            passes++;
            fired += m.fired;
        } else {
            cancel_all(&m);
        }
        m.live_sum += m.live;
        if (m.elapsed == m.max_tick && test_rng_below(&m.rng, 4) == 0) {
            /* at the end of time: a new wheel */
            cancel_all(&m);
            cascaded += m.cascaded;
            hwtimer__wheel_init(&m.w, &m.geo, m.lists, m.bits);
            m.elapsed = m.cascaded = m.refiled = 0;
            m.last_gen = 0;
            verify(&m);
        }
    }
    cascaded += m.cascaded;
    printf("%u levels of %llu slots: %zu operations, %llu passes (%llu cut), %llu nodes run, "
           "%llu moves down, %.1f nodes pending on average\n", m.levels,
           (unsigned long long)m.width, ops, (unsigned long long)passes,
           (unsigned long long)m.cut_count, (unsigned long long)fired,
           (unsigned long long)cascaded, (double)m.live_sum / (double)ops);
    CHECK(cascaded > 0 && m.cut_count > 0);
    model_close(&m);
}

static void test_random(void) {
    random_run(1, 8, 0, 30000, 1);
    random_run(1, 2, 0, 25000, 2);
    random_run(1, 64, 0, 30000, 3);
    random_run(1, 512, 0, 30000, 4);
    random_run(1000000, 512, 12345, 30000, 5); /* 1 ms ticks */
    random_run(7, 100, (uint64_t)1 << 40, 30000, 6);
    random_run(1, 4096, 0, 25000, 7);
}

int main(void) {
    RUN_TEST(test_every_level);
    RUN_TEST(test_upto_fields);
    RUN_TEST(test_check_catches);
    RUN_TEST(test_random);
    return test_finish();
}
