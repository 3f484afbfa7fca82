/* fixture.h - a caller-driven timer on a fake clock, with a counting allocator: the
   fixture every test that checks exact firing times shares. Include after harness.h.

   The timer reads the fixture's clock, so the test decides what time it is and every
   expectation is exact ("ran at boundary B", not "ran within 5 ms"). Every byte the
   timer allocates goes through the fixture's counter, and fixture_close checks that all
   of it came back. */
#ifndef HWTIMER_TEST_FIXTURE_H
#define HWTIMER_TEST_FIXTURE_H

#include "units.h"

/* ---- memory: a counting allocator that may refuse -------------------------------------- */

typedef union alloc_header {
    size_t size;
    uint64_t align_u64;
    long double align_ld;
    void *align_ptr;
} alloc_header;

typedef struct alloc_counter {
    unsigned allocs, frees; /* atomic: a worker may free the timer */
    size_t live_bytes;      /* atomic */
    size_t last_size;       /* of the last request, granted or not */
    unsigned fail_at;       /* the 1-based allocation that fails; 0: none */
    int refuse;             /* refuse every allocation */
} alloc_counter;

static inline void *counting_alloc(size_t size, void *ctx) {
    alloc_counter *c = (alloc_counter *)ctx;
    alloc_header *h;
    c->last_size = size;
    if (c->refuse || (c->fail_at != 0 && ATOMIC_GET(&c->allocs) + 1 == c->fail_at)) {
        c->fail_at = 0;
        return NULL;
    }
    if (size > SIZE_MAX - sizeof *h) return NULL;
    h = (alloc_header *)malloc(sizeof *h + size);
    if (h == NULL) return NULL;
    h->size = size;
    ATOMIC_ADD(&c->allocs, 1u);
    ATOMIC_ADD(&c->live_bytes, size);
    return h + 1;
}

static inline void counting_free(void *ptr, void *ctx) {
    alloc_counter *c = (alloc_counter *)ctx;
    alloc_header *h;
    if (ptr == NULL) return;
    h = (alloc_header *)ptr - 1;
    ATOMIC_ADD(&c->frees, 1u);
    ATOMIC_SUB(&c->live_bytes, h->size);
    free(h);
}

/* ---- the fixture ------------------------------------------------------------------------ */

/* The timer keeps pointers to `clock` and `mem`: a fixture must not move while it is open. */
typedef struct fixture {
    uint64_t clock; /* what the timer's clock reads */
    uint64_t start; /* S: the clock reading at hwtimer_create */
    uint64_t tick;
    hwtimer *t;
    alloc_counter mem;
    uint64_t pass_last_boundary; /* of the last probe run in the current advance */
    unsigned out_of_order;       /* probe runs before an earlier boundary's, in one pass */
} fixture;

/* A config for a timer on f's clock, starting at `start`, with this mode's threads and
   f's counting allocator. */
static inline void fixture_config(fixture *f, hwtimer_config *cfg, uint64_t start,
                                  uint64_t tick, uint32_t ticks_per_wheel) {
    memset(f, 0, sizeof *f);
    f->clock = f->start = start;
    f->tick = tick;
    test_fake_config(cfg, &f->clock, tick, ticks_per_wheel);
    cfg->alloc_fn = counting_alloc;
    cfg->free_fn = counting_free;
    cfg->alloc_ctx = &f->mem;
}

static inline void fixture_create(fixture *f, const hwtimer_config *cfg) {
    f->t = create_or_die(cfg);
}

static inline void fixture_open(fixture *f, uint64_t start, uint64_t tick,
                                uint32_t ticks_per_wheel) {
    hwtimer_config cfg;
    fixture_config(f, &cfg, start, tick, ticks_per_wheel);
    fixture_create(f, &cfg);
}

/* The same, with at most max_pending timeouts pending (0: no limit). */
static inline void fixture_open_limited(fixture *f, uint64_t start, uint64_t tick,
                                        uint32_t ticks_per_wheel, size_t max_pending) {
    hwtimer_config cfg;
    fixture_config(f, &cfg, start, tick, ticks_per_wheel);
    cfg.max_pending = max_pending;
    fixture_create(f, &cfg);
}

/* Destroys the timer: its invariants held to the end, every byte it took comes back, and
   every pass ran in order. */
static inline void fixture_close(fixture *f) {
    CHECK_EQ(hwtimer_check(f->t), 0);
    hwtimer_destroy(f->t);
    f->t = NULL;
    CHECK_EQ(ATOMIC_GET(&f->mem.frees), ATOMIC_GET(&f->mem.allocs));
    CHECK_EQ(ATOMIC_GET(&f->mem.live_bytes), 0);
    CHECK_EQ(f->out_of_order, 0);
}

/* Moves the clock and advances to it, as an event loop would. */
static inline size_t advance_to(fixture *f, uint64_t now) {
    f->clock = now;
    f->pass_last_boundary = 0;
    return hwtimer_advance(f->t, now);
}

/* The k-th tick boundary after S. */
static inline uint64_t tick_at(const fixture *f, uint64_t k) {
    return f->start + k * f->tick;
}

/* When a timeout with this deadline fires, as hwtimer.h documents: the first boundary
   S + k*tick >= D, or UINT64_MAX when there is none (the timeout never fires). */
static inline uint64_t boundary_of(const fixture *f, uint64_t deadline) {
    uint64_t b;
    return test_boundary(f->start, f->tick, deadline, &b) ? b : UINT64_MAX;
}

#endif
