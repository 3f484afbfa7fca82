/* floors.c - the floors under scenario 1's schedule and cancel: what filing the same
   nodes in hwtimer's wheel, and taking them out again, costs with no timer around it.

   The wheel is the header's own, and so is every step below: this file compiles the
   implementation static (as peer_hwtimer.c does) and calls its private wheel functions,
   so the lists, the list a node goes to, the bit tree and the stores are hwtimer's by
   construction. A change to the filing moves the floors with it; a renamed or reshaped
   function stops this build rather than leave a copy that measures something else.

   Schedule. Every node filed in a fresh wheel of scenario 1's geometry (1 ms tick, 512
   slots per level, the clock's zero at 0), in index order, written out inline as the
   inline arming (hwtimer__arm_inline) files one: its tick, then hwtimer__wheel_file_past,
   which finds the tick's slot, stores the deadline and the node's `where` and state (one
   word), links it into one of the slot's lists and marks the slot. Three ways:
   - the delay taken in ticks, as timeout.c's add and hwtimer_schedule_ticks take it (the
     deadline a multiply), storing what timeout.c's add stores: deadline, owner, list;
   - the deadline in nanoseconds divided into its tick (hwtimer__due_tick), as
     hwtimer_schedule_at takes it, storing the same;
   - and storing also the node's fields a schedule keeps under hwtimer's contract
     (hwtimer__arm_fill: callback, argument, period, owner) and the pending count.
   No argument checks, no call, no clock, no test of the node's state or the wheel's
   room: what is left of a schedule once everything that could be cut is cut. timeout.c's
   timeouts_add stores the deadline, the owner and the list as here; its callback is set
   once by timeout_init, outside the add, and it keeps no argument, period, state or count
   per schedule.

   Cancel. At N = 10^6 a cancel mostly waits for one cache line: the list neighbour it
   must write. To tell that wait from the timer's own instructions, the nodes are filed
   as a schedule files them (the third way), then taken out in index order, as the
   scenario cancels them: by hwtimer__wheel_unfile (the unlink, the neighbours' lines
   asked for first, the slot's bit cleared if it empties); then, filed again, by
   hwtimer__wheel_uncount, which also stores the node's state and the pending count, as
   any cancel must (two stores to lines already in cache, which still wait behind the
   neighbour's miss: x86 commits stores in order). */
#define _POSIX_C_SOURCE 200809L
#define HWTIMER_STATIC
#define HWTIMER_IMPLEMENTATION
#include "hwtimer.h"

#include "bench.h"

#include <stdlib.h>

/* A wheel with no timer: its geometry, lists and bit trees, as hwtimer_create sets up
   each of a timer's wheels. */
typedef struct floor_wheel {
    hwtimer__geometry geo;
    hwtimer__wheel wheel;
    struct hwtimer__link *lists;
    uint64_t *bits;
} floor_wheel;

static void floor_wheel_new(floor_wheel *f) {
    hwtimer__geometry_init(&f->geo, BENCH_MS, 512, 0);
    f->lists = (struct hwtimer__link *)bench_xcalloc((size_t)hwtimer__wheel_heads(&f->geo),
                                                    sizeof *f->lists);
    f->bits = (uint64_t *)bench_xcalloc((size_t)hwtimer__wheel_words(&f->geo), sizeof *f->bits);
    hwtimer__wheel_init(&f->wheel, &f->geo, f->lists, f->bits);
}

static void floor_wheel_free(floor_wheel *f) {
    free(f->lists);
    free(f->bits);
}

/* What the filing stores: */
enum {
    FLOOR_TICKS,    /* takes the delay in ticks (as timeout.c does), stores what its add does */
    FLOOR_DIVIDES,  /* ... takes nanoseconds and divides them into ticks, as hwtimer does */
    FLOOR_CONTRACT  /* ... and stores the node's fields that hwtimer's contract needs too */
};

/* Files nodes 0 .. n-1 in w, node i at delay_ms[i], as `what` says. Inlined into each
   caller with `what` a constant, so that each way is its own loop. */
static inline __attribute__((always_inline)) void floor_file(hwtimer__wheel *w, hwtimer_timeout *nodes,
                                                             const uint32_t *delay_ms,
                                                             size_t n, int what) {
    for (size_t i = 0; i < n; i++) {
        hwtimer_timeout *to = &nodes[i];
        uint64_t deadline = (uint64_t)delay_ms[i] * BENCH_MS, tick;
        tick = what == FLOOR_TICKS ? delay_ms[i] : hwtimer__due_tick(&w->geo, deadline);
        if (what == FLOOR_CONTRACT) {
            hwtimer__arm_fill(w, to, 0, bench_hwtimer_never_called, NULL);
            w->pending++;
        } else {
            hwtimer__store_relaxed_wheel(&to->wheel, w); /* the owner */
        }
        hwtimer__wheel_file_past(w, to, deadline, tick, HWTIMER__ONE_STORE, 0);
    }
}

static double schedule_floor(const uint32_t *delay_ms, size_t n, int what) {
    floor_wheel f;
    hwtimer_timeout *nodes = (hwtimer_timeout *)bench_xcalloc(n ? n : 1, sizeof *nodes);
    floor_wheel_new(&f);
    uint64_t t0 = bench_wall_ns();
    if (what == FLOOR_TICKS) {
        floor_file(&f.wheel, nodes, delay_ms, n, FLOOR_TICKS);
    } else if (what == FLOOR_DIVIDES) {
        floor_file(&f.wheel, nodes, delay_ms, n, FLOOR_DIVIDES);
    } else {
        floor_file(&f.wheel, nodes, delay_ms, n, FLOOR_CONTRACT);
    }
    uint64_t t1 = bench_wall_ns();
    floor_wheel_free(&f);
    free(nodes);
    return (double)(t1 - t0) / (double)(n ? n : 1);
}

void bench_schedule_floor_ns(const uint32_t *delay_ms, size_t n, double *ticks, double *divides,
                             double *full) {
    *ticks = schedule_floor(delay_ms, n, FLOOR_TICKS);
    *divides = schedule_floor(delay_ms, n, FLOOR_DIVIDES);
    *full = schedule_floor(delay_ms, n, FLOOR_CONTRACT);
}

void bench_cancel_floor_ns(const uint32_t *delay_ms, size_t n, double *bare, double *with_state) {
    floor_wheel f;
    hwtimer_timeout *nodes = (hwtimer_timeout *)bench_xcalloc(n ? n : 1, sizeof *nodes);
    hwtimer__wheel *w = &f.wheel;
    floor_wheel_new(&f);
    floor_file(w, nodes, delay_ms, n, FLOOR_CONTRACT);
    uint64_t t0 = bench_wall_ns();
    for (size_t i = 0; i < n; i++) {
        hwtimer__wheel_unfile(w, &nodes[i]);
    }
    uint64_t t1 = bench_wall_ns();
    hwtimer__wheel_init(w, &f.geo, f.lists, f.bits);
    floor_file(w, nodes, delay_ms, n, FLOOR_CONTRACT);
    uint64_t t2 = bench_wall_ns();
    for (size_t i = 0; i < n; i++) {
        hwtimer__wheel_uncount(w, &nodes[i], 1);
    }
    uint64_t t3 = bench_wall_ns();
    floor_wheel_free(&f);
    free(nodes);
    *bare = (double)(t1 - t0) / (double)(n ? n : 1);
    *with_state = (double)(t3 - t2) / (double)(n ? n : 1);
}
