/* cancel_floor.c - the memory floor under scenario 1's cancel: what unlinking the same
   nodes costs with no timer at all.

   At N = 10^6 a cancel mostly waits for one cache line: the list neighbour it must write.
   To tell that wait from the timer's own instructions, this builds the lists hwtimer
   builds for scenario 1 (64-byte nodes in one array, a 1 ms tick and 512-slot levels, so a
   node's slot is its delay in ms >> 9; four lists per slot, filled as hwtimer__file_in_wheel
   fills them) and times a bare doubly linked unlink of every node in index order, as the
   scenario cancels them; then the same with the two stores any cancel must add, the node's
   state and the timer's pending count (two stores to lines already in cache, which still
   wait behind the neighbour's miss: x86 commits stores in order). */
#include "bench.h"

#include <stdlib.h>

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
        nodes[i].prev->next = nodes[i].next;
        nodes[i].next->prev = nodes[i].prev;
    }
    uint64_t t1 = bench_wall_ns();
    link_like_hwtimer(heads, slots, nodes, delay_ms, n);
    uint64_t t2 = bench_wall_ns();
    for (size_t i = 0; i < n; i++) {
        nodes[i].state = 3;
        pending = pending - 1;
        nodes[i].prev->next = nodes[i].next;
        nodes[i].next->prev = nodes[i].prev;
    }
    uint64_t t3 = bench_wall_ns();
    free(nodes);
    free(heads);
    *bare = (double)(t1 - t0) / (double)(n ? n : 1);
    *with_state = (double)(t3 - t2) / (double)(n ? n : 1);
}
