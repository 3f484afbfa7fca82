/* floors.c - the floors under scenario 1's schedule and cancel: what filing and unlinking
   the same nodes costs with no timer at all.

   Schedule. bench_schedule_floor_ns files every node as hwtimer files it, written out
   inline: the deadline (nanoseconds) turned into a tick by a multiply-high division, as
   hwtimer's API takes nanoseconds (a second run takes the delay in ticks, as timeout.c's
   add does, with no division), the level from the
   highest bit in which the tick differs from the wheel's position, the slot, one of the
   slot's four lists (the first while the slot is empty, then in turn), the occupancy bit,
   and the node's fields any schedule under hwtimer's contract must store: deadline,
   callback, argument, period, owner, state, where it is filed, and the pending count. No
   argument checks, no function call, no clock: what is left of a schedule once everything
   that could be cut is cut. timeout.c's timeouts_add stores the deadline, the owner and
   the list as here; its callback is set once by timeout_init, outside the add, and it
   keeps no argument, period, state or count per schedule.

   Cancel. At N = 10^6 a cancel mostly waits for one cache line: the list neighbour it must write.
   To tell that wait from the timer's own instructions, this builds the lists hwtimer
   builds for scenario 1 (64-byte nodes in one array, a 1 ms tick and 512-slot levels, so a
   node's slot is its delay in ms >> 9; four lists per slot, filled as hwtimer__file_in_wheel
   fills them) and times a bare doubly linked unlink of every node in index order, as the
   scenario cancels them; then the same with the two stores any cancel must add, the node's
   state and the timer's pending count (two stores to lines already in cache, which still
   wait behind the neighbour's miss: x86 commits stores in order). Both ask for the next
   neighbour's line first, with a prefetch for writing, as hwtimer's cancel does: a store
   asks for its line only as it leaves the store buffer, so without it each miss starts
   late. */
#include "bench.h"

#include <stdlib.h>
#include <string.h>

#define FLOOR_LISTS 4u  /* HWTIMER_SLOT_LISTS' default */
#define FLOOR_SLOT_SHIFT 9u /* log2 of 512 slots: 1 ms ticks, level 1 */

typedef struct floor_node {
    struct floor_node *next, *prev;
    unsigned char state;
    unsigned char rest[47]; /* the other fields of a 64-byte hwtimer_timeout */
} floor_node;

static void append(floor_node *head, floor_node *n) {
    n->prev = head->prev;
    n->next = head;
    head->prev->next = n;
    head->prev = n;
}

/* Links n nodes as hwtimer links scenario 1's; heads has room for every slot's lists. */
static void link_like_hwtimer(floor_node *heads, size_t slots, floor_node *nodes,
                              const uint32_t *delay_ms, size_t n) {
    unsigned turn = 0;
    for (size_t i = 0; i < slots * FLOOR_LISTS; i++) {
        heads[i].next = heads[i].prev = &heads[i];
    }
    for (size_t i = 0; i < n; i++) {
        floor_node *lists = &heads[(size_t)(delay_ms[i] >> FLOOR_SLOT_SHIFT) * FLOOR_LISTS];
        floor_node *head = lists->next == lists ? lists : &lists[turn++ % FLOOR_LISTS];
        append(head, &nodes[i]);
    }
}

void bench_cancel_floor_ns(const uint32_t *delay_ms, size_t n, double *bare, double *with_state) {
    size_t slots = ((size_t)BENCH_MAX_FAKE_MS >> FLOOR_SLOT_SHIFT) + 1;
    floor_node *heads = (floor_node *)bench_xcalloc(slots * FLOOR_LISTS, sizeof *heads);
    floor_node *nodes = (floor_node *)bench_xcalloc(n ? n : 1, sizeof *nodes);
    volatile size_t pending = n; /* a store per node, as the timer's count */
    link_like_hwtimer(heads, slots, nodes, delay_ms, n);
    uint64_t t0 = bench_wall_ns();
    for (size_t i = 0; i < n; i++) {
        __builtin_prefetch(nodes[i].next, 1);
        nodes[i].prev->next = nodes[i].next;
        nodes[i].next->prev = nodes[i].prev;
    }
    uint64_t t1 = bench_wall_ns();
    link_like_hwtimer(heads, slots, nodes, delay_ms, n);
    uint64_t t2 = bench_wall_ns();
    for (size_t i = 0; i < n; i++) { /* the links read before the state's store, as hwtimer does */
        floor_node *next = nodes[i].next, *prev = nodes[i].prev;
        __builtin_prefetch(next, 1);
        nodes[i].state = 3;
        pending = pending - 1;
        prev->next = next;
        next->prev = prev;
    }
    uint64_t t3 = bench_wall_ns();
    free(nodes);
    free(heads);
    *bare = (double)(t1 - t0) / (double)(n ? n : 1);
    *with_state = (double)(t3 - t2) / (double)(n ? n : 1);
}

/* ---- the schedule floor ---- */

typedef struct floor_link {
    struct floor_link *next, *prev;
} floor_link;

typedef struct floor_full_node { /* an hwtimer_timeout's fields, in its order */
    floor_link link;
    uint32_t where;
    uint8_t state, pad[3];
    uint64_t deadline;
    void *owner;
    uint64_t period;
    void (*fn)(void *, void *);
    void *arg;
} floor_full_node;

static void floor_fn(void *to, void *arg) {
    (void)to;
    (void)arg;
}

#define FLOOR_TICK_NS 1000000u /* 1 ms, as scenario 1 */

__extension__ typedef unsigned __int128 floor_u128; /* as hwtimer divides (x86-64, gcc/clang) */

/* What the filing does: */
enum {
    FLOOR_TICKS,    /* takes the delay in ticks (as timeout.c does), stores what its add does */
    FLOOR_DIVIDES,  /* ... takes nanoseconds and divides them into ticks, as hwtimer does */
    FLOOR_CONTRACT  /* ... and stores the node's fields that hwtimer's contract needs too */
};

static double schedule_floor(const uint32_t *delay_ms, size_t n, int what) {
    enum { LEVELS = 5, WIDTH = 512 };
    size_t heads_n = (size_t)LEVELS * WIDTH * FLOOR_LISTS;
    floor_link *heads = (floor_link *)bench_xcalloc(heads_n, sizeof *heads);
    floor_full_node *nodes = (floor_full_node *)bench_xcalloc(n ? n : 1, sizeof *nodes);
    uint64_t occupied[LEVELS][WIDTH / 64] = {{0}};
    const uint64_t start = 1000000000u, tick_inv = UINT64_MAX / FLOOR_TICK_NS, elapsed = 0;
    volatile size_t sink, pending = 0; /* a load and a store per node, as the timer's count */
    unsigned turn = 0;
    for (size_t i = 0; i < heads_n; i++) heads[i].next = heads[i].prev = &heads[i];
    memset(nodes, 1, (n ? n : 1) * sizeof *nodes); /* the pages exist, as a user's nodes do */
    uint64_t t0 = bench_wall_ns();
    for (size_t i = 0; i < n; i++) {
        floor_full_node *to = &nodes[i];
        uint64_t deadline, tick;
        if (what == FLOOR_TICKS) {
            deadline = tick = delay_ms[i];
        } else {
            uint64_t gap = (uint64_t)delay_ms[i] * FLOOR_TICK_NS;
            deadline = start + gap;
            uint64_t rem; /* as hwtimer__due_tick divides */
            tick = (uint64_t)(((floor_u128)gap * tick_inv) >> 64);
            rem = gap - tick * FLOOR_TICK_NS;
            if (rem >= FLOOR_TICK_NS) { /* the estimate may be one less */
                tick++;
                rem -= FLOOR_TICK_NS;
            }
            tick += rem != 0; /* the boundary at or after it */
        }
        unsigned level = (unsigned)(63 - __builtin_clzll((tick ^ elapsed) | 1)) / 9u;
        unsigned slot = (unsigned)(tick >> (level * 9u)) & (WIDTH - 1);
        floor_link *lists = &heads[((size_t)level * WIDTH + slot) * FLOOR_LISTS];
        floor_link *head = lists->next == lists ? lists : &lists[turn++ % FLOOR_LISTS];
        to->owner = heads;
        to->deadline = deadline;
        to->where = (uint32_t)(head - heads);
        if (what == FLOOR_CONTRACT) {
            to->fn = floor_fn;
            to->arg = NULL;
            to->period = 0;
            to->state = 1;
            pending = pending + 1;
        }
        to->link.prev = head->prev; /* append */
        to->link.next = head;
        head->prev->next = &to->link;
        head->prev = &to->link;
        occupied[level][slot >> 6] |= (uint64_t)1 << (slot & 63);
    }
    uint64_t t1 = bench_wall_ns();
    sink = pending + (size_t)occupied[1][0];
    (void)sink;
    free(nodes);
    free(heads);
    return (double)(t1 - t0) / (double)(n ? n : 1);
}

void bench_schedule_floor_ns(const uint32_t *delay_ms, size_t n, double *ticks, double *divides,
                             double *full) {
    *ticks = schedule_floor(delay_ms, n, FLOOR_TICKS);
    *divides = schedule_floor(delay_ms, n, FLOOR_DIVIDES);
    *full = schedule_floor(delay_ms, n, FLOOR_CONTRACT);
}
