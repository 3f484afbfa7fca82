/* peer_heap.c - the textbook binary min-heap (heap.h) as a peer, on a fake clock.
   Its timer node carries a callback and an argument like hwtimer's, and a firing calls
   it through the pointer, so both pay the same for running a callback. */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"
#include "heap.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct heap_timer {
    heap_node node; /* first: a node converts to its timer */
    void (*fn)(struct heap_timer *timer, void *arg);
    void *arg;
} heap_timer;

typedef struct heap_peer {
    heap queue;
    heap_timer *timers;
    uint64_t now_ms;
    size_t fired;
} heap_peer;

static void heap_on_fire(heap_timer *timer, void *arg) {
    (void)timer;
    ++*(size_t *)arg;
}

static void *hp_create(size_t n) {
    heap_peer *p = (heap_peer *)bench_xcalloc(1, sizeof *p);
    if (heap_init(&p->queue, n) != 0) {
        fprintf(stderr, "heap_init: out of memory\n");
        exit(2);
    }
    bench_prefault(p->queue.items, n * sizeof *p->queue.items);
    p->timers = (heap_timer *)bench_xcalloc(n ? n : 1, sizeof *p->timers);
    return p;
}

static void hp_destroy(void *ctx) {
    heap_peer *p = (heap_peer *)ctx;
    heap_free(&p->queue);
    free(p->timers);
    free(p);
}

static void hp_schedule(void *ctx, const uint32_t *delay_ms, size_t n) {
    heap_peer *p = (heap_peer *)ctx;
    heap_timer *timers = p->timers;
    for (size_t i = 0; i < n; i++) {
        heap_timer *x = &timers[i];
        x->node.deadline = p->now_ms + delay_ms[i];
        x->fn = heap_on_fire;
        x->arg = &p->fired;
        heap_push(&p->queue, &x->node);
    }
}

static void hp_cancel(void *ctx, size_t n) {
    heap_peer *p = (heap_peer *)ctx;
    heap_timer *timers = p->timers;
    for (size_t i = 0; i < n; i++) {
        heap_remove(&p->queue, &timers[i].node);
    }
}

static void hp_cancel_order(void *ctx, const uint32_t *order, size_t n) {
    heap_peer *p = (heap_peer *)ctx;
    heap_timer *timers = p->timers;
    for (size_t i = 0; i < n; i++) {
        heap_remove(&p->queue, &timers[order[i]].node);
    }
}

static void hp_reschedule(void *ctx, const uint32_t *delay_ms, size_t n, uint32_t extra_ms) {
    heap_peer *p = (heap_peer *)ctx;
    heap_timer *timers = p->timers;
    for (size_t i = 0; i < n; i++) {
        heap_update(&p->queue, &timers[i].node, p->now_ms + delay_ms[i] + extra_ms);
    }
}

/* Runs every timer due at or before now_ms, earliest first. */
static size_t hp_run_due(heap_peer *p) {
    size_t fired = 0;
    heap_node *top;
    while ((top = heap_top(&p->queue)) != NULL && top->deadline <= p->now_ms) {
        heap_timer *x = (heap_timer *)(void *)heap_pop(&p->queue);
        x->fn(x, x->arg);
        fired++;
    }
    return fired;
}

static size_t hp_expire(void *ctx, uint64_t now_ms) {
    heap_peer *p = (heap_peer *)ctx;
    p->now_ms = now_ms;
    return hp_run_due(p);
}

static size_t hp_step(void *ctx, uint64_t end_ms) {
    heap_peer *p = (heap_peer *)ctx;
    size_t fired = 0;
    while (p->now_ms < end_ms) {
        p->now_ms++;
        fired += hp_run_due(p);
    }
    return fired;
}

/* Scenario 10: heap_update of the pending node to the loop's time + the idle timeout. */
static void hp_keepalive(void *ctx, bench_keepalive *k) {
    heap_peer *p = (heap_peer *)ctx;
    for (size_t i = 0; i < k->n; i++) {
        heap_timer *x = &p->timers[i];
        x->node.deadline = k->first_ms[i];
        x->fn = heap_on_fire;
        x->arg = &p->fired;
        heap_push(&p->queue, &x->node);
    }
    BENCH_KEEPALIVE_LOOP(k, (p->now_ms = now_ms, hp_run_due(p)),
                         heap_update(&p->queue, &p->timers[i].node, now_ms + k->idle_ms));
    k->fired = p->fired;
}

static size_t hp_node_bytes(void *ctx) {
    (void)ctx;
    return sizeof(heap_timer);
}

static size_t hp_overhead_bytes(void *ctx, size_t n) {
    (void)n;
    return ((heap_peer *)ctx)->queue.capacity * sizeof(heap_node *);
}

const bench_peer bench_peer_heap = {
    "heap", "binary heap", hp_create, hp_destroy, NULL, hp_schedule, hp_cancel,
    hp_cancel_order, hp_reschedule, hp_expire, hp_step, NULL, hp_node_bytes,
    hp_overhead_bytes, NULL, hp_keepalive, NULL,
};
