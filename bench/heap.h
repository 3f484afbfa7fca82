/* heap.h - the textbook baseline: an intrusive binary min-heap of timer nodes.

   The node lives in the caller's struct (like hwtimer_timeout); the heap is an array of
   node pointers, and every node remembers its slot, so cancel and reschedule are
   O(log n) without a search. This is the structure libevent uses (min_heap.h) and the
   one most hand-written event loops start from. The array is sized once by heap_init,
   so no operation allocates: the same promise hwtimer makes, which spares the heap the
   cost of growing. */
#ifndef HWTIMER_BENCH_HEAP_H
#define HWTIMER_BENCH_HEAP_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct heap_node {
    uint64_t deadline;
    size_t slot; /* index in heap.items while queued */
} heap_node;

typedef struct heap {
    heap_node **items;
    size_t count, capacity;
} heap;

/* Returns 0 on success, -1 when the array cannot be allocated. */
static inline int heap_init(heap *h, size_t capacity) {
    h->items = (heap_node **)malloc((capacity ? capacity : 1) * sizeof *h->items);
    h->count = 0;
    h->capacity = capacity;
    return h->items ? 0 : -1;
}

static inline void heap_free(heap *h) {
    free(h->items);
    h->items = NULL;
    h->count = h->capacity = 0;
}

static inline void heap__place(heap *h, size_t slot, heap_node *x) {
    h->items[slot] = x;
    x->slot = slot;
}

static inline void heap__sift_up(heap *h, size_t slot, heap_node *x) {
    while (slot > 0) {
        size_t parent = (slot - 1) / 2;
        if (h->items[parent]->deadline <= x->deadline) {
            break;
        }
        heap__place(h, slot, h->items[parent]);
        slot = parent;
    }
    heap__place(h, slot, x);
}

static inline void heap__sift_down(heap *h, size_t slot, heap_node *x) {
    for (;;) {
        size_t child = 2 * slot + 1;
        if (child >= h->count) {
            break;
        }
        if (child + 1 < h->count && h->items[child + 1]->deadline < h->items[child]->deadline) {
            child++;
        }
        if (x->deadline <= h->items[child]->deadline) {
            break;
        }
        heap__place(h, slot, h->items[child]);
        slot = child;
    }
    heap__place(h, slot, x);
}

/* Moves x from slot up or down, whichever its (changed) deadline needs. */
static inline void heap__resift(heap *h, size_t slot, heap_node *x) {
    if (slot > 0 && x->deadline < h->items[(slot - 1) / 2]->deadline) {
        heap__sift_up(h, slot, x);
    } else {
        heap__sift_down(h, slot, x);
    }
}

/* The caller keeps count below capacity (one slot per node it owns). */
static inline void heap_push(heap *h, heap_node *x) {
    heap__sift_up(h, h->count++, x);
}

static inline heap_node *heap_top(const heap *h) {
    return h->count ? h->items[0] : NULL;
}

static inline void heap_remove(heap *h, heap_node *x) {
    heap_node *last = h->items[--h->count];
    if (last != x) {
        heap__resift(h, x->slot, last);
    }
}

static inline heap_node *heap_pop(heap *h) {
    heap_node *top = h->items[0];
    heap_remove(h, top);
    return top;
}

/* Changes the deadline of a queued node. */
static inline void heap_update(heap *h, heap_node *x, uint64_t deadline) {
    x->deadline = deadline;
    heap__resift(h, x->slot, x);
}

#endif
