/* bench_floor.c - the memory floor under scenario 1's cancel: what unlinking the same
   nodes costs with no timer at all.

   At N = 10^6 a cancel mostly waits for one cache line: the list neighbour it must write.
   To tell that wait from the timer's own instructions, this builds the lists hwtimer
   builds for scenario 1 (64-byte nodes in one array, a 1 ms tick and 512-slot levels, so a
   node's slot is its delay in ms >> 9; four lists per slot, filled as hwtimer__level_push
   fills them) and times a bare doubly linked unlink of every node in index order, as the
   scenario cancels them. */
#include "bench.h"

#include <stdlib.h>

#define FLOOR_LISTS 4u  /* HWTIMER_SLOT_LISTS' default */
#define FLOOR_SLOT_SHIFT 9u /* log2 of 512 slots: 1 ms ticks, level 1 */

typedef struct floor_node {
    struct floor_node *next, *prev;
    unsigned char rest[48]; /* the other fields of a 64-byte hwtimer_timeout */
} floor_node;

static void append(floor_node *head, floor_node *n) {
    n->prev = head->prev;
    n->next = head;
    head->prev->next = n;
    head->prev = n;
}

double bench_cancel_floor_ns(const uint32_t *delay_ms, size_t n) {
    size_t slots = ((size_t)BENCH_MAX_FAKE_MS >> FLOOR_SLOT_SHIFT) + 1;
    floor_node *heads = (floor_node *)bench_xcalloc(slots * FLOOR_LISTS, sizeof *heads);
    floor_node *nodes = (floor_node *)bench_xcalloc(n ? n : 1, sizeof *nodes);
    unsigned turn = 0;
    for (size_t i = 0; i < slots * FLOOR_LISTS; i++) {
        heads[i].next = heads[i].prev = &heads[i];
    }
    for (size_t i = 0; i < n; i++) {
        floor_node *lists = &heads[(size_t)(delay_ms[i] >> FLOOR_SLOT_SHIFT) * FLOOR_LISTS];
        floor_node *head = lists->next == lists ? lists : &lists[turn++ % FLOOR_LISTS];
        append(head, &nodes[i]);
    }
    uint64_t t0 = bench_wall_ns();
    for (size_t i = 0; i < n; i++) {
        nodes[i].prev->next = nodes[i].next;
        nodes[i].next->prev = nodes[i].prev;
    }
    uint64_t t1 = bench_wall_ns();
    free(nodes);
    free(heads);
    return (double)(t1 - t0) / (double)(n ? n : 1);
}
