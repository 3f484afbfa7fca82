/* test_internals.c - the header's pure helpers, called directly and compared with
   brute-force computations over random inputs:

     hwtimer__due_tick              deadline -> the tick of its boundary
     hwtimer__wheel_where           tick -> the level and slot it is filed in (and the
                                    levels: enough for the latest tick, at least one)
     hwtimer__bits_next             the first occupied slot at or after an index, from the
                                    bit tree hwtimer__bits_set keeps
     hwtimer__leeway_tick           a node's due tick e and leeway -> the tick its window's
                                    grid of 2^k ticks puts it at
     hwtimer__say, _say_number      a sentence for log_fn, cut at its buffer's size

   and the push to a later deadline (hwtimer__wheel_push_later): in every mode this build has (no
   threads; locks, a worker, shards), a push later of a node filed in a coarse slot, in
   either form, leaves its links, its place and every bit tree as they were, and the pass
   re-files it when it reaches that slot; a push earlier, or of a node in level 0, moves it
   at once. And the list of due nodes: kept in order of tick, a node behind those of its own
   tick (a filing in time order walks nothing).

   Each runs on a real timer (made by hwtimer_create on a fake clock) whose geometry the
   helpers read; the brute-force side uses only the geometry hwtimer.h documents (ticks per
   wheel rounded up to a power of two) and plain division and shifts. This file needs the
   implementation in this unit, which harness.h gives it. The helpers belong to one wheel:
   in the shards mode too, the timers here are ordinary ones. */
#undef HWTIMER_TEST_SHARDS
#include "harness.h"
#include "fixture.h"

enum { DRAWS = 200000 };

/* The private parts these tests read: a timer's first wheel, and its geometry. */
static hwtimer__wheel *wheel0(hwtimer *t) { return &hwtimer__shard_at(t, 0)->wheel; }
static const hwtimer__geometry *geometry(hwtimer *t) { return &wheel0(t)->geo; }

/* A value spread over every magnitude: a random number of low bits. */
static uint64_t draw_any(uint64_t *rng) {
    uint64_t v = test_rng_next(rng);
    unsigned bits = (unsigned)test_rng_below(rng, 65);
    return bits == 64 ? v : v & (((uint64_t)1 << bits) - 1);
}

/* ---- hwtimer__due_tick ------------------------------------------------------------------- */

/* ceil((D - S) / tick), 0 at or before S: the k of the boundary S + k*tick. */
static uint64_t due_tick_by_division(uint64_t start, uint64_t tick, uint64_t deadline) {
    if (deadline <= start) return 0;
    return (deadline - start) / tick + ((deadline - start) % tick != 0);
}

static void check_due_ticks(uint64_t start, uint64_t tick, uint64_t *rng) {
    fixture f;
    size_t i, wrong = 0, off_boundary = 0;
    fixture_open(&f, start, tick, 2); /* tick * width must fit in 64 bits */
    for (i = 0; i < DRAWS; i++) {
        uint64_t d = i % 4 ? start + draw_any(rng) : draw_any(rng), b;
        uint64_t k = hwtimer__due_tick(geometry(f.t), d);
        wrong += k != due_tick_by_division(start, tick, d);
        /* where a boundary exists, the tick is its k */
        if (test_boundary(start, tick, d, &b)) off_boundary += start + k * tick != b;
    }
    CHECK_EQ(wrong, 0);
    CHECK_EQ(off_boundary, 0);
    CHECK_EQ(hwtimer__due_tick(geometry(f.t), start), 0);
    CHECK_EQ(hwtimer__due_tick(geometry(f.t), start + 1), 1);
    CHECK_EQ(hwtimer__due_tick(geometry(f.t), start + tick), 1);
    fixture_close(&f);
}

static void test_due_tick(void) {
    uint64_t rng = 1;
    check_due_ticks(0, 1, &rng);
    check_due_ticks(7 * MS + 123, MS, &rng);
    check_due_ticks(draw_any(&rng), 3, &rng);
    check_due_ticks(UINT64_MAX / 2, 1000003, &rng);
    check_due_ticks(12345, (uint64_t)1 << 40, &rng);
    check_due_ticks(0, UINT64_MAX / 7, &rng);
}

/* ---- hwtimer__wheel_where ------------------------------------------------------------------ */

/* The level a tick goes to is the lowest whose digits above it agree with elapsed's (the
   tick is reached by cascading through the levels below); its slot is the tick's digit
   there. Returned as hwtimer.h's wheel index: HWTIMER__WHERE_WHEEL + level * width + slot. */
static uint32_t where_by_digits(uint64_t elapsed, uint64_t tick, unsigned bits) {
    unsigned level = 0;
    for (;;) {
        unsigned above = (level + 1) * bits;
        if (above >= 64 || (tick >> above) == (elapsed >> above)) break;
        level++;
    }
    return HWTIMER__WHERE_WHEEL + (level << bits) +
           (uint32_t)((tick >> (level * bits)) & (((uint64_t)1 << bits) - 1));
}

static void check_wheel_where(uint64_t tick_ns, uint32_t ticks_per_wheel, uint64_t *rng) {
    fixture f;
    size_t i, wrong = 0;
    uint64_t max_tick, saved;
    unsigned bits = 1;
    fixture_open(&f, 0, tick_ns, ticks_per_wheel);
    while (((uint32_t)1 << bits) < ticks_per_wheel) bits++;
    max_tick = hwtimer__due_tick(geometry(f.t), UINT64_MAX);
    saved = wheel0(f.t)->elapsed;
    for (i = 0; i < DRAWS; i++) {
        uint64_t elapsed = draw_any(rng) % max_tick;
        uint64_t tick = elapsed + 1 + draw_any(rng) % (max_tick - elapsed);
        wheel0(f.t)->elapsed = elapsed;
        wrong += hwtimer__wheel_where(wheel0(f.t), tick) != where_by_digits(elapsed, tick, bits);
    }
    wheel0(f.t)->elapsed = saved;
    CHECK_EQ(geometry(f.t)->bits, bits);
    CHECK_EQ(wrong, 0);
    fixture_close(&f);
}

/* The levels: just enough for the digits of the latest tick any deadline can have (its bit
   length, at least one bit: a timer whose clock starts at UINT64_MAX has only tick 0), so
   that every deadline has a place. */
static void check_levels(uint64_t start, uint64_t tick_ns, uint32_t ticks_per_wheel) {
    fixture f;
    uint64_t max_tick = due_tick_by_division(start, tick_ns, UINT64_MAX);
    unsigned bits = 1, length = 1;
    fixture_open(&f, start, tick_ns, ticks_per_wheel);
    while (((uint32_t)1 << bits) < ticks_per_wheel) bits++;
    while (length < 64 && max_tick >> length) length++;
    CHECK_EQ(geometry(f.t)->max_tick, max_tick);
    CHECK_EQ(geometry(f.t)->levels, (length + bits - 1) / bits);
    fixture_close(&f);
}

static void test_wheel_where(void) {
    uint64_t rng = 2;
    check_levels(0, 1, 2);            /* 64 levels of one bit */
    check_levels(0, 1, 512);          /* 8 levels of 9 bits: the last one has one */
    check_levels(0, MS, 512);         /* 45 bits: 5 levels */
    check_levels(UINT64_MAX - 1, 1, 8);
    check_levels(UINT64_MAX, MS, 8);  /* max_tick 0: one level */
    check_levels(UINT64_MAX, 1, 1u << 16);
    check_wheel_where(1, 2, &rng);
    check_wheel_where(MS, 8, &rng);
    check_wheel_where(MS, 512, &rng);
    check_wheel_where(3, 1000, &rng); /* rounded up to 1024 */
    check_wheel_where(100 * MS, 1u << 16, &rng);
    check_wheel_where((uint64_t)1 << 40, 64, &rng);
}

/* ---- hwtimer__bits_next ------------------------------------------------------------------------- */

/* The first set index at or after `from` in a plain array of flags, or width. */
static uint32_t next_set(const unsigned char *set, uint32_t width, uint32_t from) {
    while (from < width && !set[from]) from++;
    return from;
}

/* A level's bit tree is as small as it can be: layer k has a bit for each of 64^k slots,
   ceil(width / 64^(k+1)) words, up to the first layer of one word; the layers lie one after
   another, level_words in all. */
static void check_bit_tree_shape(const hwtimer__geometry *g) {
    uint64_t span = 64, words;
    uint32_t offset = 0;
    unsigned layer = 0;
    do {
        words = (g->width + span - 1) / span;
        CHECK(layer < g->bit_layers);
        CHECK_EQ(g->layer_words[layer], words);
        CHECK_EQ(g->layer_offset[layer], offset);
        offset += (uint32_t)words;
        layer++;
        span *= 64;
    } while (words > 1);
    CHECK_EQ(g->bit_layers, layer);
    CHECK_EQ(g->level_words, offset);
}

/* Marks and unmarks random slots of level 0, mirrored in a plain array, and asks for the
   next occupied slot from random places after each change. Leaves the level empty. */
static void check_next_occupied(uint32_t ticks_per_wheel, uint32_t density, uint64_t *rng) {
    fixture f;
    const hwtimer__geometry *g;
    uint64_t *lv;
    unsigned char *set;
    uint32_t width, i;
    size_t draw, wrong = 0;
    fixture_open(&f, 0, MS, ticks_per_wheel);
    g = geometry(f.t);
    width = g->width;
    check_bit_tree_shape(g);
    lv = wheel0(f.t)->occupied; /* level 0's bit tree */
    set = (unsigned char *)calloc_or_die(width, 1);
    for (draw = 0; draw < DRAWS / 4; draw++) {
        uint32_t slot = (uint32_t)test_rng_below(rng, width);
        uint32_t from = (uint32_t)test_rng_below(rng, width);
        int on = test_rng_below(rng, 100) < density;
        hwtimer__bits_set(g, lv, slot, on);
        set[slot] = (unsigned char)on;
        wrong += hwtimer__bits_next(g, lv, from) != next_set(set, width, from);
        wrong += hwtimer__bits_next(g, lv, slot) != next_set(set, width, slot);
    }
    for (i = 0; i < width; i++) {
        if (set[i]) hwtimer__bits_set(g, lv, i, 0);
    }
    CHECK_EQ(hwtimer__bits_next(g, lv, 0), width);
    CHECK_EQ(wrong, 0);
    free(set);
    fixture_close(&f);
}

static void test_level_next_occupied(void) {
    uint64_t rng = 3;
    check_next_occupied(2, 50, &rng);
    check_next_occupied(64, 50, &rng);       /* one word */
    check_next_occupied(512, 10, &rng);      /* two layers */
    check_next_occupied(1u << 13, 1, &rng);  /* three layers, sparse */
    check_next_occupied(1u << 13, 60, &rng); /* three layers, dense */
    check_next_occupied(1u << 18, 1, &rng);  /* four layers */
}

/* ---- hwtimer__leeway_tick ---------------------------------------------------------------- */

/* A leeway drawn over every magnitude; on a 1 ns tick its ticks are the leeway stored,
   hwtimer__leeway of the node. */
static void check_leeway_ticks(uint64_t start, uint64_t *rng) {
    fixture f;
    hwtimer_timeout to = HWTIMER_TIMEOUT_INIT;
    size_t i, wrong = 0;
    uint64_t last;
    fixture_open(&f, start, 1, 2);
    last = hwtimer__due_tick(geometry(f.t), UINT64_MAX);
    for (i = 0; i < DRAWS; i++) {
        uint64_t e = i % 8 == 0 ? last - test_rng_below(rng, 1000) : draw_any(rng), got;
        if (e > last) e %= last + 1; /* last < UINT64_MAX here */
        CHECK_EQ(hwtimer_timeout_set_leeway(&to, i % 16 ? draw_any(rng) | 1 : UINT64_MAX),
                 HWTIMER_OK);
        got = hwtimer__leeway_tick(wheel0(f.t), &to, e);
        wrong += got != test_leeway_grid_tick(e, hwtimer__leeway(&to), last);
        wrong += got < e || got - e > hwtimer__leeway(&to); /* in the window */
    }
    CHECK_EQ(wrong, 0);
    fixture_close(&f);
}

static void test_leeway_tick(void) {
    uint64_t rng = 3;
    fixture f;
    hwtimer_timeout to = HWTIMER_TIMEOUT_INIT;
    check_leeway_ticks(0, &rng);
    check_leeway_ticks((uint64_t)1 << 63, &rng); /* the last tick below 2^63 */
    check_leeway_ticks(UINT64_MAX - 5000, &rng);  /* every window runs into the last tick */
    fixture_open(&f, 0, MS, 512);
    CHECK_EQ(hwtimer_timeout_set_leeway(&to, 10 * MS), HWTIMER_OK);
    CHECK_EQ(hwtimer__leeway_tick(wheel0(f.t), &to, 0), 0);
    CHECK_EQ(hwtimer__leeway_tick(wheel0(f.t), &to, 22), 24); /* 2^3 <= 10 + 1 */
    CHECK_EQ(hwtimer__leeway_tick(wheel0(f.t), &to, 24), 24);
    CHECK_EQ(hwtimer_timeout_set_leeway(&to, 100 * MS), HWTIMER_OK);
    CHECK_EQ(hwtimer__leeway_tick(wheel0(f.t), &to, 22), 64); /* the memo follows the node */
    CHECK_EQ(hwtimer_timeout_set_leeway(&to, 7 * MS), HWTIMER_OK);
    CHECK_EQ(hwtimer__leeway_tick(wheel0(f.t), &to, 22), 24); /* 2^3 <= 7 + 1 */
    fixture_close(&f);
}

/* ---- pushing a deadline later ------------------------------------------------------------ */

/* Where a node is filed and every bit tree of its wheel: what a push later may not touch. */
typedef struct filing {
    struct hwtimer__link link;
    uint32_t where;
    size_t words;
    uint64_t bits[64];
} filing;

/* The wheel of t that files `to`. */
static hwtimer__wheel *wheel_of(hwtimer *t, const hwtimer_timeout *to) {
    return &hwtimer__shard_of(t, to)->wheel;
}

static void take_filing(hwtimer *t, const hwtimer_timeout *to, filing *f) {
    hwtimer__shard *s = hwtimer__shard_of(t, to);
    hwtimer__wheel *w = &s->wheel;
    hwtimer__lock(t, s->mutex); /* a worker may be in a pass */
    f->link = to->link;
    f->where = to->where;
    f->words = (size_t)w->geo.levels * w->geo.level_words;
    CHECK(f->words <= sizeof f->bits / sizeof f->bits[0]);
    memcpy(f->bits, w->occupied, f->words * sizeof(uint64_t)); /* levels in a row */
    hwtimer__unlock(t, s->mutex);
}

static int same_filing(const filing *a, const filing *b) {
    return a->link.next == b->link.next && a->link.prev == b->link.prev &&
           a->where == b->where && a->words == b->words &&
           memcmp(a->bits, b->bits, a->words * sizeof(uint64_t)) == 0;
}

static uint64_t refiled_of(hwtimer *t) {
    hwtimer_stats s;
    hwtimer_stats_get(t, &s);
    return s.refiled;
}

static void on_push_fire(hwtimer_timeout *to, void *arg) {
    (void)to;
    ++*(int *)arg;
}

/* One timer: 1 ms tick, 64 slots per level (slots of 64 ms in level 1, 4.096 s in level 2),
   on a fake clock at 0. A node due at 10 s waits in level 2's slot [8.192 s, 12.288 s). */
static void check_push_later(int worker, unsigned shards) {
    uint64_t clock = 0;
    hwtimer_config cfg;
    hwtimer *t;
    hwtimer_timeout far = HWTIMER_TIMEOUT_INIT, near = HWTIMER_TIMEOUT_INIT;
    filing before, after;
    int fired = 0;
    test_fake_config(&cfg, &clock, MS, 64);
    cfg.worker = worker;
    cfg.shards = shards;
    t = create_or_die(&cfg);
    CHECK_EQ(hwtimer_schedule_at(t, &far, 10 * SEC, on_push_fire, &fired), HWTIMER_OK);
    CHECK_EQ(hwtimer_schedule_at(t, &near, 20 * MS, on_push_fire, &fired), HWTIMER_OK);
    CHECK(far.where >= HWTIMER__WHERE_WHEEL + wheel_of(t, &far)->geo.width); /* coarse */
    /* later, both forms: only the deadline changes */
    take_filing(t, &far, &before);
    CHECK_EQ(hwtimer_reschedule_at(t, &far, 11 * SEC), HWTIMER_OK);
    CHECK_EQ(hwtimer_reschedule(t, &far, 13 * SEC), HWTIMER_OK); /* past the slot's end */
    take_filing(t, &far, &after);
    CHECK(same_filing(&before, &after));
    CHECK_EQ(hwtimer_timeout_deadline(&far), 13 * SEC);
    CHECK_EQ(hwtimer_timeout_due_in(t, &far), 13 * SEC);
    CHECK_EQ(hwtimer_pending(t), 2);
    CHECK_EQ(hwtimer_check(t), 0);
    /* a node in level 0 moves at once, later or earlier */
    take_filing(t, &near, &before);
    CHECK_EQ(hwtimer_reschedule_at(t, &near, 30 * MS), HWTIMER_OK);
    take_filing(t, &near, &after);
    CHECK(before.where != after.where);
    if (!worker) {
        /* the pass reaches the old slot: the node is re-filed by its deadline, exactly */
        CHECK_EQ(hwtimer_advance(t, 9 * SEC), 1); /* near ran */
        CHECK_EQ(refiled_of(t), 1);
        CHECK_EQ(hwtimer__wheel_where(wheel_of(t, &far), 13000), far.where);
        CHECK_EQ(hwtimer_advance(t, 13 * SEC - 1), 0);
        CHECK_EQ(hwtimer_advance(t, 13 * SEC), 1);
        CHECK_EQ(fired, 2);
    } else {
        /* earlier: moved at once, and the worker is woken for it */
        take_filing(t, &far, &before);
        CHECK_EQ(hwtimer_reschedule_at(t, &far, 5 * SEC), HWTIMER_OK);
        take_filing(t, &far, &after);
        CHECK(before.where != after.where);
    }
    CHECK_EQ(hwtimer_check(t), 0);
    hwtimer_destroy(t);
}

/* In every mode this build has; the worker and shards only with threads. */
static void test_push_later(void) {
    check_push_later(0, 0);
    if (!test_threads()) return;
    check_push_later(1, 0);
    check_push_later(0, 2);
    check_push_later(1, 2);
}

/* A re-filing is a node the pass finds past its slot's end: due at the next slot's first
   tick counts, at the slot's last tick does not (it is only moved down a level). */
static void test_refiled_at_the_slot_end(void) {
    fixture f;
    hwtimer_timeout past = HWTIMER_TIMEOUT_INIT, last = HWTIMER_TIMEOUT_INIT;
    hwtimer_stats s;
    int fired = 0;
    fixture_open(&f, 0, MS, 64); /* level 2's slot [8192, 12288) ms holds 10 s */
    CHECK_EQ(hwtimer_schedule_at(f.t, &past, 10 * SEC, on_push_fire, &fired), HWTIMER_OK);
    CHECK_EQ(hwtimer_schedule_at(f.t, &last, 10 * SEC, on_push_fire, &fired), HWTIMER_OK);
    CHECK_EQ(hwtimer_reschedule_at(f.t, &past, 12288 * MS), HWTIMER_OK);
    CHECK_EQ(hwtimer_reschedule_at(f.t, &last, 12287 * MS), HWTIMER_OK);
    CHECK_EQ(past.where, last.where); /* both left in the slot */
    CHECK_EQ(hwtimer_advance(f.t, 9 * SEC), 0);
    hwtimer_stats_get(f.t, &s);
    CHECK_EQ(s.refiled, 1);
    CHECK_EQ(s.cascaded, 1); /* `last` (a re-filing is not counted as a move down too) */
    CHECK_EQ(hwtimer_advance(f.t, 12287 * MS), 1);
    CHECK_EQ(hwtimer_advance(f.t, 12288 * MS), 1);
    CHECK_EQ(fired, 2);
    fixture_close(&f);
}

/* ---- hwtimer__say ------------------------------------------------------------------------ */

/* A sentence grows word by word and number by number, and one longer than its buffer is cut
   there, still ended by a NUL (the buffer's last byte). */
static void test_sentence_cut(void) {
    hwtimer__sentence msg = {"", 0};
    char words[400];
    memset(words, 'w', sizeof words - 1);
    words[sizeof words - 1] = '\0';
    hwtimer__say(&msg, "ran for ");
    hwtimer__say_number(&msg, 0);
    hwtimer__say(&msg, ", then ");
    hwtimer__say_number(&msg, UINT64_MAX);
    CHECK(strcmp(msg.text, "ran for 0, then 18446744073709551615") == 0);
    CHECK_EQ(msg.len, strlen(msg.text));
    hwtimer__say(&msg, words);
    CHECK_EQ(msg.len, sizeof msg.text - 1);
    CHECK_EQ(msg.text[sizeof msg.text - 1], '\0');
    CHECK_EQ(msg.text[sizeof msg.text - 2], 'w');
    hwtimer__say_number(&msg, 7); /* no room left: nothing changes */
    CHECK_EQ(msg.len, sizeof msg.text - 1);
    CHECK_EQ(msg.text[sizeof msg.text - 2], 'w');
}

/* ---- the list of due nodes -------------------------------------------------------------- */

/* Node `to`'s place in its wheel's list of due nodes (0: first), or -1. */
static int due_place(hwtimer *t, const hwtimer_timeout *to) {
    const hwtimer__wheel *w = wheel0(t);
    const struct hwtimer__link *l;
    int i = 0;
    for (l = w->due.next; l != &w->due; l = l->next, i++)
        if (l == &to->link) return i;
    return -1;
}

/* A node whose tick has passed waits in `due`, which keeps ticks in order by walking back
   from its tail past the later ones only: a node of the tail's tick goes behind it at once
   (filings in time order cost O(1), ties keep their order), one of an earlier tick goes in
   front. The pass then runs them in that order. */
static void test_due_order(void) {
    fixture f;
    hwtimer_timeout a = HWTIMER_TIMEOUT_INIT, b = HWTIMER_TIMEOUT_INIT, c = HWTIMER_TIMEOUT_INIT;
    int fired = 0;
    fixture_open(&f, 0, MS, 8);
    CHECK_EQ(hwtimer_advance(f.t, 10 * MS), 0); /* ticks up to 10 have passed */
    CHECK_EQ(hwtimer_schedule_at(f.t, &a, 5 * MS, on_push_fire, &fired), HWTIMER_OK);
    CHECK_EQ(hwtimer_schedule_at(f.t, &b, 5 * MS, on_push_fire, &fired), HWTIMER_OK);
    CHECK_EQ(due_place(f.t, &a), 0);
    CHECK_EQ(due_place(f.t, &b), 1); /* the same tick: behind a */
    CHECK_EQ(hwtimer_schedule_at(f.t, &c, 3 * MS, on_push_fire, &fired), HWTIMER_OK);
    CHECK_EQ(due_place(f.t, &c), 0); /* an earlier tick: in front of both */
    CHECK_EQ(due_place(f.t, &a), 1);
    CHECK_EQ(due_place(f.t, &b), 2);
    CHECK_EQ(hwtimer_check(f.t), 0);
    CHECK_EQ(hwtimer_advance(f.t, 10 * MS), 3);
    CHECK_EQ(fired, 3);
    fixture_close(&f);
}

int main(void) {
    RUN_TEST(test_due_tick);
    RUN_TEST(test_wheel_where);
    RUN_TEST(test_level_next_occupied);
    RUN_TEST(test_leeway_tick);
    RUN_TEST(test_due_order);
    RUN_TEST(test_push_later);
    RUN_TEST(test_refiled_at_the_slot_end);
    RUN_TEST(test_sentence_cut);
    return test_finish();
}
