/* test_check.c - hwtimer_check seen failing: a real timer, its wheel broken behind its back
   in each way hwtimer_check names, and the exact code it must return for each:

     HWTIMER_CHECK_LINKS    a list's next/prev disagree, or a list longer than pending
     HWTIMER_CHECK_NODE     a filed node owned by another timer, not PENDING, or whose
                            `where` names another list; a pending node made anew by
                            hwtimer_timeout_init (a common mistake), without a crash
     HWTIMER_CHECK_SLOT     a node in a slot its due tick does not allow (behind elapsed, a
                            coarse slot that starts after its tick, another level-0 slot)
     HWTIMER_CHECK_BEHIND   an occupancy bit at or behind its level's position
     HWTIMER_CHECK_ORDER    the due list out of order
     HWTIMER_CHECK_BITMAP   a word of the bit tree without its bit in the layer above, or a
                            bit for a slot whose lists are empty
     HWTIMER_CHECK_COUNT    the nodes filed are not the pending count, or pending is over
                            max_pending; on a timer of shards also the count its wheels
                            share (cfg.max_pending), and one wheel's own count
     HWTIMER_CHECK_NEAR     a filing that needs the due list or a wake-up would go straight
                            to the wheel, or the wheel watches fewer ticks than the loop's
                            answer needs
     HWTIMER_CHECK_WAITERS  a cancel's wait listed while no cancel waits

   Each corruption is undone right after, and the check must then be 0 again, so that the
   timer is destroyed whole. hwtimer_check(NULL) is 0, a healthy timer gives 0 wherever its
   nodes are, also from inside a periodic callback. The model test and the fuzzer rely on
   this function to catch a broken wheel: here it is seen to catch each kind.

   The corruptions reach the timer's private parts: all of that goes through the helpers of
   the first section, and nothing else here names a private field. This file compiles the
   implementation itself (harness.h), as the helpers read its types; the timers are ordinary
   ones of one wheel in every mode (a timer of shards is made explicitly for the shared
   count). */
#undef HWTIMER_TEST_SHARDS
#include "harness.h"
#include "fixture.h"

/* ---- the private parts this file touches ------------------------------------------------- */

/* Shard k of a timer, and its wheel (a timer of one wheel: shard 0). */
static hwtimer__shard *shard_of(hwtimer *t, unsigned k) { return hwtimer__shard_at(t, k); }
static hwtimer__wheel *wheel_of(hwtimer *t, unsigned k) { return &shard_of(t, k)->wheel; }

/* The head of list k of `slot` in `level` (shard 0's wheel). */
static struct hwtimer__link *slot_list(hwtimer *t, unsigned level, uint32_t slot, unsigned k) {
    hwtimer__wheel *w = wheel_of(t, 0);
    return &hwtimer__slot_lists(w, HWTIMER__WHERE_WHEEL + (level << w->geo.bits) + slot)[k];
}

/* Word w of layer `layer` of level `level`'s occupancy bit tree. */
static uint64_t *bit_word(hwtimer *t, unsigned level, unsigned layer, uint32_t w) {
    hwtimer__wheel *wheel = wheel_of(t, 0);
    return &hwtimer__level_bits(wheel, level)[wheel->geo.layer_offset[layer] + w];
}

static unsigned bit_layers(hwtimer *t) { return wheel_of(t, 0)->geo.bit_layers; }

/* The level and slot a filed node waits in, from its `where`. */
static unsigned level_of(hwtimer *t, const hwtimer_timeout *to) {
    return (to->where - HWTIMER__WHERE_WHEEL) >> wheel_of(t, 0)->geo.bits;
}
static uint32_t slot_of(hwtimer *t, const hwtimer_timeout *to) {
    return (to->where - HWTIMER__WHERE_WHEEL) & wheel_of(t, 0)->geo.mask;
}

static struct hwtimer__link *due_list(hwtimer *t) { return &wheel_of(t, 0)->due; }
static size_t *pending_field(hwtimer *t, unsigned k) { return &wheel_of(t, k)->pending; }
static size_t *max_pending_field(hwtimer *t) { return &t->max_pending; }
static uint64_t *notice_field(hwtimer *t) { return &wheel_of(t, 0)->notice_upto; }
static uint64_t *watch_field(hwtimer *t) { return &wheel_of(t, 0)->watch_upto; }
static uint64_t due_upto_of(hwtimer *t) { return wheel_of(t, 0)->due_upto; }
static uint64_t wake_upto_of(hwtimer *t) { return hwtimer__wake_upto(shard_of(t, 0)); }

/* A node's private fields (the node's layout is public; its fields are the timer's). */
static struct hwtimer__link *link_of(hwtimer_timeout *to) { return &to->link; }
static uint32_t *where_field(hwtimer_timeout *to) { return &to->where; }
static uint8_t *state_field(hwtimer_timeout *to) { return &to->state; }
static struct hwtimer__wheel **wheel_field(hwtimer_timeout *to) { return &to->wheel; }
static uint64_t *deadline_field(hwtimer_timeout *to) { return &to->deadline; }

/* The cancels waiting for a callback of shard 0, and how many it counts. */
static hwtimer__cancel_wait **cancel_waits_field(hwtimer *t) { return &shard_of(t, 0)->cancel_waits; }
static unsigned *waiters_field(hwtimer *t) { return &shard_of(t, 0)->waiters; }

/* A timer of shards with max_pending: the count of its wheels' pending nodes they share. */
static long *shared_count(hwtimer *t) { return &t->shared_pending; }

/* ---- the setup ----------------------------------------------------------------------------- */

/* 1 ms ticks, 512 slots a level (two layers of bit tree: 8 words under 1), started at 0. */
enum { WIDTH = 512 };

static void nothing_fn(hwtimer_timeout *to, void *arg) {
    (void)to;
    (void)arg;
}

/* Schedules `to` at tick k of f's timer (its boundary, started at 0). */
static void at_tick(fixture *f, hwtimer_timeout *to, uint64_t k) {
    CHECK_EQ(hwtimer_schedule_at(f->t, to, k * MS, nothing_fn, NULL), HWTIMER_OK);
}

/* A timer on f's clock advanced to tick 10 (nothing pending yet). */
static void open_at_tick_10(fixture *f) {
    fixture_open(f, 0, MS, WIDTH);
    CHECK_EQ(advance_to(f, 10 * MS), 0);
}

/* The check must say `code` now, and 0 once `undo` put things back. */
#define CHECK_BROKEN(f, code, undo)                                                    \
    do {                                                                               \
        CHECK_EQ(hwtimer_check((f)->t), (code));                                       \
        undo;                                                                          \
        CHECK_EQ(hwtimer_check((f)->t), 0);                                            \
    } while (0)

/* ---- healthy ------------------------------------------------------------------------------- */

static int check_in_callback = -1;

static void check_from_callback(hwtimer_timeout *to, void *arg) {
    fixture *f = (fixture *)arg;
    check_in_callback = hwtimer_check(f->t); /* the node is pending, in no list */
    CHECK_EQ(hwtimer_cancel(f->t, to), 1);
}

/* A one-shot beside the periodic node, due at its tick: whichever of the two runs first,
   the other waits in the ready list while it checks. */
static int check_beside = -1;

static void check_from_beside(hwtimer_timeout *to, void *arg) {
    (void)to;
    check_beside = hwtimer_check(((fixture *)arg)->t);
}

/* NULL is 0; so is a healthy timer, empty, with nodes in the due list, in level 0 and in
   coarse levels, and from inside a periodic callback (pending, filed nowhere) with a node of
   its tick in the ready list, or from that node's callback with the periodic one there. */
static void test_healthy(void) {
    fixture f;
    hwtimer_timeout due = HWTIMER_TIMEOUT_INIT, near = HWTIMER_TIMEOUT_INIT,
                    far = HWTIMER_TIMEOUT_INIT, farther = HWTIMER_TIMEOUT_INIT,
                    periodic = HWTIMER_TIMEOUT_INIT, beside = HWTIMER_TIMEOUT_INIT;
    CHECK_EQ(hwtimer_check(NULL), 0);
    open_at_tick_10(&f);
    CHECK_EQ(hwtimer_check(f.t), 0);
    at_tick(&f, &due, 5); /* already passed: the due list */
    at_tick(&f, &near, 20);
    at_tick(&f, &far, 5000);
    at_tick(&f, &farther, (uint64_t)1 << 40);
    CHECK_EQ(hwtimer_check(f.t), 0);
    CHECK_EQ(hwtimer_schedule_periodic_at(f.t, &periodic, 15 * MS, MS, check_from_callback, &f),
             HWTIMER_OK);
    CHECK_EQ(hwtimer_schedule_at(f.t, &beside, 15 * MS, check_from_beside, &f), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, 15 * MS), 3); /* `due`, then the periodic one and `beside` */
    CHECK_EQ(check_in_callback, 0);
    CHECK_EQ(check_beside, 0);
    CHECK_EQ(hwtimer_pending(f.t), 3);
    fixture_close(&f);
}

/* ---- each way of breaking it --------------------------------------------------------------- */

/* A list's links: a node whose prev is not the node before it, a node whose next does not
   link back, and a list that holds more nodes than the timer counts as pending. */
static void test_links(void) {
    fixture f;
    hwtimer_timeout first = HWTIMER_TIMEOUT_INIT, n[3];
    struct hwtimer__link *x, *y, *x_prev, *y_prev;
    unsigned i;
    fixture_open(&f, 0, MS, WIDTH);
    at_tick(&f, &first, 20); /* alone in the slot: its first list */
    for (i = 0; i < 3; i++) {
        hwtimer_timeout_init(&n[i]);
        at_tick(&f, &n[i], 20); /* a list the node's address picks */
    }
    /* two of them armed one after the other in one list (nodes close in memory share it) */
    x = link_of(&n[0])->next == link_of(&n[1]) ? link_of(&n[0]) : link_of(&n[1]);
    y = x->next;
    CHECK(y == link_of(&n[1]) || y == link_of(&n[2]));
    x_prev = x->prev;
    x->prev = y;
    CHECK_BROKEN(&f, HWTIMER_CHECK_LINKS, x->prev = x_prev);
    y_prev = y->prev; /* x */
    y->prev = y;
    CHECK_BROKEN(&f, HWTIMER_CHECK_LINKS, y->prev = y_prev);
    x->prev = NULL; /* a NULL link is reported, not followed */
    CHECK_BROKEN(&f, HWTIMER_CHECK_LINKS, x->prev = x_prev);
    y_prev = y->next;
    y->next = NULL;
    CHECK_BROKEN(&f, HWTIMER_CHECK_LINKS, y->next = y_prev);
    *pending_field(f.t, 0) = 1; /* fewer than that list holds */
    CHECK_BROKEN(&f, HWTIMER_CHECK_LINKS, *pending_field(f.t, 0) = 4);
    fixture_close(&f);
}

/* A filed node that is not pending in this wheel: another wheel, another state, or a
   `where` that names another list than the one it is in. */
static void test_node(void) {
    fixture f;
    hwtimer_timeout a = HWTIMER_TIMEOUT_INIT;
    struct hwtimer__wheel *wheel;
    uint32_t where;
    fixture_open(&f, 0, MS, WIDTH);
    at_tick(&f, &a, 20);
    wheel = *wheel_field(&a);
    *wheel_field(&a) = NULL;
    CHECK_BROKEN(&f, HWTIMER_CHECK_NODE, *wheel_field(&a) = wheel);
    *state_field(&a) = HWTIMER_EXPIRED;
    CHECK_BROKEN(&f, HWTIMER_CHECK_NODE, *state_field(&a) = HWTIMER_PENDING);
    where = *where_field(&a);
    *where_field(&a) = where + 1;
    CHECK_BROKEN(&f, HWTIMER_CHECK_NODE, *where_field(&a) = where);
    fixture_close(&f);
}

/* The common mistake: hwtimer_timeout_init on a pending node (its links NULL, its state
   IDLE, while its neighbours still point at it). The check returns a code, CHECK_NODE where
   it meets the node first, and never follows the NULL links: a node alone in its slot, one
   between two others in a list (CHECK_LINKS: its left neighbour comes first), and one in
   the due list. */
static void test_init_while_pending(void) {
    fixture f;
    hwtimer_timeout alone = HWTIMER_TIMEOUT_INIT, row[3], due = HWTIMER_TIMEOUT_INIT, saved;
    hwtimer_timeout *middle;
    unsigned i;
    open_at_tick_10(&f);
    at_tick(&f, &alone, 20);
    for (i = 0; i < 3; i++) {
        hwtimer_timeout_init(&row[i]);
        at_tick(&f, &row[i], 30);
    }
    at_tick(&f, &due, 5); /* passed: the due list */
    saved = alone;
    hwtimer_timeout_init(&alone);
    CHECK_BROKEN(&f, HWTIMER_CHECK_NODE, alone = saved);
    /* the one whose both neighbours are nodes of the row */
    middle = &row[0];
    for (i = 0; i < 3; i++) {
        if (link_of(&row[i])->prev != slot_list(f.t, 0, 30, 0) &&
            link_of(&row[i])->next != slot_list(f.t, 0, 30, 0)) {
            middle = &row[i];
        }
    }
    saved = *middle;
    hwtimer_timeout_init(middle);
    /* the walk meets its left neighbour first, whose next node does not link back */
    CHECK_BROKEN(&f, HWTIMER_CHECK_LINKS, *middle = saved);
    saved = due;
    hwtimer_timeout_init(&due);
    CHECK_BROKEN(&f, HWTIMER_CHECK_NODE, due = saved);
    fixture_close(&f);
}

/* A cancel's wait still listed when no cancel waits (one that returned without taking
   itself off the list: its frame is gone). */
static void test_waiters(void) {
    fixture f;
    hwtimer__cancel_wait stale;
    fixture_open(&f, 0, MS, WIDTH);
    memset(&stale, 0, sizeof stale);
    *cancel_waits_field(f.t) = &stale;
    CHECK_BROKEN(&f, HWTIMER_CHECK_WAITERS, *cancel_waits_field(f.t) = NULL);
    /* listed and counted: a cancel that waits */
    *cancel_waits_field(f.t) = &stale;
    *waiters_field(f.t) = 1;
    CHECK_EQ(hwtimer_check(f.t), 0);
    *cancel_waits_field(f.t) = NULL;
    *waiters_field(f.t) = 0;
    fixture_close(&f);
}

/* A node in a slot its due tick does not allow: its tick already passed, a level-0 slot
   that is not its tick's, a coarse slot that starts after its tick. And what it allows: a
   coarse slot that starts at or before the tick (a push later leaves a node there), another
   deadline of the same tick in level 0. */
static void test_slot(void) {
    fixture f;
    hwtimer_timeout near = HWTIMER_TIMEOUT_INIT, far = HWTIMER_TIMEOUT_INIT;
    open_at_tick_10(&f);
    at_tick(&f, &near, 20);
    at_tick(&f, &far, 5000); /* level 1, the slot that starts at tick 9 * 512 = 4608 */
    CHECK_EQ(level_of(f.t, &near), 0);
    CHECK_EQ(level_of(f.t, &far), 1);
    CHECK_EQ(slot_of(f.t, &far), 9);
    *deadline_field(&near) = 5 * MS;
    CHECK_BROKEN(&f, HWTIMER_CHECK_SLOT, *deadline_field(&near) = 20 * MS);
    *deadline_field(&near) = 21 * MS;
    CHECK_BROKEN(&f, HWTIMER_CHECK_SLOT, *deadline_field(&near) = 20 * MS);
    *deadline_field(&near) = 19 * MS + 1; /* the same tick */
    CHECK_EQ(hwtimer_check(f.t), 0);
    *deadline_field(&far) = 4607 * MS;
    CHECK_BROKEN(&f, HWTIMER_CHECK_SLOT, *deadline_field(&far) = 4608 * MS);
    CHECK_EQ(hwtimer_reschedule_at(f.t, &far, 6000 * MS), HWTIMER_OK);
    CHECK_EQ(slot_of(f.t, &far), 9); /* pushed later: it waits on in the slot of tick 4608 */
    CHECK_EQ(hwtimer_check(f.t), 0);
    fixture_close(&f);
}

/* An occupied slot at or behind its level's position (the pass has gone by it). */
static void test_behind(void) {
    fixture f;
    open_at_tick_10(&f);
    CHECK_EQ(bit_layers(f.t), 2);
    *bit_word(f.t, 0, 0, 0) |= (uint64_t)1 << 3;
    *bit_word(f.t, 0, 1, 0) |= 1u; /* the layer above agrees */
    CHECK_BROKEN(&f, HWTIMER_CHECK_BEHIND,
                 (*bit_word(f.t, 0, 0, 0) = 0, *bit_word(f.t, 0, 1, 0) = 0));
    *bit_word(f.t, 0, 0, 0) |= (uint64_t)1 << 10; /* its position itself */
    *bit_word(f.t, 0, 1, 0) |= 1u;
    CHECK_BROKEN(&f, HWTIMER_CHECK_BEHIND,
                 (*bit_word(f.t, 0, 0, 0) = 0, *bit_word(f.t, 0, 1, 0) = 0));
    *bit_word(f.t, 0, 0, 0) |= 1u; /* slot 0, where no tick after the position can be */
    *bit_word(f.t, 0, 1, 0) |= 1u;
    CHECK_BROKEN(&f, HWTIMER_CHECK_BEHIND,
                 (*bit_word(f.t, 0, 0, 0) = 0, *bit_word(f.t, 0, 1, 0) = 0));
    fixture_close(&f);
}

/* The due list (nodes due at ticks already passed) out of order. */
static void test_order(void) {
    fixture f;
    hwtimer_timeout a = HWTIMER_TIMEOUT_INIT, b = HWTIMER_TIMEOUT_INIT;
    open_at_tick_10(&f);
    at_tick(&f, &b, 6);
    at_tick(&f, &a, 3); /* filed before b */
    CHECK(due_list(f.t)->next == link_of(&a));
    *deadline_field(&a) = 7 * MS;
    CHECK_BROKEN(&f, HWTIMER_CHECK_ORDER, *deadline_field(&a) = 3 * MS);
    fixture_close(&f);
}

/* The bit tree against the lists: a layer-0 word whose bit in layer 1 is clear, and a slot
   marked occupied (both layers agreeing) whose lists are empty. */
static void test_bitmap(void) {
    fixture f;
    hwtimer_timeout a = HWTIMER_TIMEOUT_INIT;
    fixture_open(&f, 0, MS, WIDTH);
    at_tick(&f, &a, 100); /* word 1 of layer 0 */
    CHECK_EQ(*bit_word(f.t, 0, 1, 0), 2u);
    *bit_word(f.t, 0, 1, 0) = 0;
    CHECK_BROKEN(&f, HWTIMER_CHECK_BITMAP, *bit_word(f.t, 0, 1, 0) = 2u);
    *bit_word(f.t, 0, 0, 1) |= (uint64_t)1 << 40; /* slot 104: nothing there */
    CHECK(slot_list(f.t, 0, 104, 0)->next == slot_list(f.t, 0, 104, 0));
    CHECK_BROKEN(&f, HWTIMER_CHECK_BITMAP, *bit_word(f.t, 0, 0, 1) &= ~((uint64_t)1 << 40));
    fixture_close(&f);
}

/* The count: a pending count that is not the nodes filed, and one over max_pending. */
static void test_count(void) {
    fixture f;
    hwtimer_timeout a = HWTIMER_TIMEOUT_INIT, b = HWTIMER_TIMEOUT_INIT;
    fixture_open_limited(&f, 0, MS, WIDTH, 2);
    at_tick(&f, &a, 20);
    at_tick(&f, &b, 5000);
    ++*pending_field(f.t, 0);
    CHECK_BROKEN(&f, HWTIMER_CHECK_COUNT, --*pending_field(f.t, 0));
    *max_pending_field(f.t) = 1;
    CHECK_BROKEN(&f, HWTIMER_CHECK_COUNT, *max_pending_field(f.t) = 2);
    fixture_close(&f);
}

static unsigned woken;
static void count_wake(void *ctx) {
    (void)ctx;
    woken++;
}

/* A filing that would skip what it must notice: the due list (ticks up to the last one
   advanced to) or the loop's wake-up (ticks before the time the loop was told), or a wheel
   that watches fewer ticks than its loop's answer needs. */
static void test_near(void) {
    fixture f;
    hwtimer_config cfg;
    hwtimer_timeout a = HWTIMER_TIMEOUT_INIT;
    uint64_t notice;
    fixture_config(&f, &cfg, 0, MS, WIDTH);
    cfg.wake_fn = count_wake;
    fixture_create(&f, &cfg);
    CHECK_EQ(advance_to(&f, 10 * MS), 0);
    CHECK_EQ(due_upto_of(f.t), 10);
    notice = *notice_field(f.t);
    *notice_field(f.t) = 9;
    CHECK_BROKEN(&f, HWTIMER_CHECK_NEAR, *notice_field(f.t) = notice);
    at_tick(&f, &a, 100);
    CHECK_EQ(hwtimer_next_expiry(f.t), 100 * MS); /* an answer: filings before it wake */
    CHECK_EQ(wake_upto_of(f.t), 100);
    notice = *notice_field(f.t);
    *notice_field(f.t) = 50; /* past due_upto, before the answer */
    CHECK_BROKEN(&f, HWTIMER_CHECK_NEAR, *notice_field(f.t) = notice);
    *watch_field(f.t) = 50; /* the wheel would not report a filing before the answer */
    CHECK_BROKEN(&f, HWTIMER_CHECK_NEAR, *watch_field(f.t) = 100);
    CHECK_EQ(woken, 0);
    fixture_close(&f);
}

/* A timer of shards with max_pending: its wheels share one count of their pending nodes,
   which must be theirs; a wheel's count that is not its nodes (the first's, the last's) is
   the timer's failure. */
static void test_shared_count(void) {
    fixture f;
    hwtimer_config cfg;
    hwtimer_timeout a = HWTIMER_TIMEOUT_INIT, b = HWTIMER_TIMEOUT_INIT;
    long counted;
    if (!test_threads()) return; /* shards need threads */
    fixture_config(&f, &cfg, 0, MS, WIDTH);
    cfg.shards = 2;
    cfg.max_pending = 10;
    fixture_create(&f, &cfg);
    at_tick(&f, &a, 20);
    at_tick(&f, &b, 5000);
    CHECK_EQ(hwtimer_check(f.t), 0);
    counted = *shared_count(f.t);
    CHECK_EQ(counted, 2);
    *shared_count(f.t) = 3;
    CHECK_BROKEN(&f, HWTIMER_CHECK_COUNT, *shared_count(f.t) = counted);
    ++*pending_field(f.t, 0); /* (the first wheel's failure ends the check there) */
    CHECK_BROKEN(&f, HWTIMER_CHECK_COUNT, --*pending_field(f.t, 0));
    ++*pending_field(f.t, 1);
    CHECK_BROKEN(&f, HWTIMER_CHECK_COUNT, --*pending_field(f.t, 1));
    fixture_close(&f);
}

int main(void) {
    RUN_TEST(test_healthy);
    RUN_TEST(test_links);
    RUN_TEST(test_node);
    RUN_TEST(test_init_while_pending);
    RUN_TEST(test_waiters);
    RUN_TEST(test_slot);
    RUN_TEST(test_behind);
    RUN_TEST(test_order);
    RUN_TEST(test_bitmap);
    RUN_TEST(test_count);
    RUN_TEST(test_near);
    RUN_TEST(test_shared_count);
    return test_finish();
}
