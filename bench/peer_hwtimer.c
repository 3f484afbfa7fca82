/* peer_hwtimer.c - hwtimer as a peer of the caller-driven scenarios, four ways:
     hwtimer         cfg.threads = NULL, fake clock: one thread, no locks (the baseline)
     hwtimer+lock    cfg.threads = hwtimer_threads_pthread(), fake clock, caller-driven
     hwtimer worker  cfg.worker = 1 on the real monotonic clock (schedule/cancel/reschedule
                     only: its clock cannot be moved to fire an hour of timeouts)
     hwtimer 64      the baseline with 64 slots per level (timeout.c's wheels) instead of 512
   All use a 1 ms tick, and the first three the default 512 slots per wheel level.

   hwtimer is compiled into this file with its functions static (HWTIMER_STATIC), as
   peer_timeout.c compiles timeout.c (TIMEOUT_PUBLIC static): the compiler may inline
   schedule, reschedule and cancel into the loops below as it may timeout.c's, as it would
   in a program that compiles hwtimer into the file of its loop. The scenarios with threads
   call the copy in hwtimer_impl.c. */
#define _POSIX_C_SOURCE 200809L
#define HWTIMER_STATIC
#define HWTIMER_IMPLEMENTATION
#include "hwtimer.h"

#include "bench.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct hw_peer {
    hwtimer *timer;
    hwtimer_timeout *nodes;
    uint64_t clock_ns; /* the fake clock (not used in worker mode) */
    size_t fired;
} hw_peer;

static uint64_t hw_fake_clock(void *ctx) {
    return *(const uint64_t *)ctx;
}

/* The fake clock of a worker, which reads it on its own thread. */
static uint64_t hw_shared_fake_clock(void *ctx) {
    return __atomic_load_n((const uint64_t *)ctx, __ATOMIC_RELAXED);
}

static void hw_on_fire(hwtimer_timeout *to, void *arg) {
    (void)to;
    ++*(size_t *)arg;
}

static void *hw_create_with(size_t n, const hwtimer_threads *threads, int worker,
                            uint32_t slots) {
    hw_peer *p = (hw_peer *)bench_xcalloc(1, sizeof *p);
    p->timer = worker ? bench_hwtimer_make(threads, 1, NULL, NULL, slots, 0)
                      : bench_hwtimer_make(threads, 0, hw_fake_clock, &p->clock_ns, slots, 0);
    p->nodes = (hwtimer_timeout *)bench_xcalloc(n ? n : 1, sizeof *p->nodes);
    /* Set up as the other peers' creates set up theirs (timeout_init, uv_timer_init,
       evtimer_assign), so that every peer's nodes have just been written when a timed run
       starts: zeroed memory needs no init, but would leave hwtimer's nodes colder. */
    for (size_t i = 0; i < n; i++) {
        hwtimer_timeout_init(&p->nodes[i]);
    }
    return p;
}

static void *hw_create(size_t n) {
    return hw_create_with(n, NULL, 0, 512);
}

static void *hw_create_locked(size_t n) {
    return hw_create_with(n, hwtimer_threads_pthread(), 0, 512);
}

static void *hw_create_worker(size_t n) {
    return hw_create_with(n, hwtimer_threads_pthread(), 1, 512);
}

static void *hw_create_64(size_t n) {
    return hw_create_with(n, NULL, 0, 64);
}

static void hw_destroy(void *ctx) {
    hw_peer *p = (hw_peer *)ctx;
    hwtimer_destroy(p->timer);
    free(p->nodes);
    free(p);
}

/* As the other peers schedule: a delay counted from the loop's time (the timer's time, the
   now of its last advance), here in ticks of 1 ms. */
static void hw_schedule(void *ctx, const uint32_t *delay_ms, size_t n) {
    hw_peer *p = (hw_peer *)ctx;
    hwtimer *t = p->timer;
    hwtimer_timeout *nodes = p->nodes;
    for (size_t i = 0; i < n; i++) {
        hwtimer_schedule_ticks(t, &nodes[i], delay_ms[i], hw_on_fire, &p->fired);
    }
}

/* The same from the clock, read on every call (hwtimer_schedule). */
static void hw_schedule_reading_clock(void *ctx, const uint32_t *delay_ms, size_t n) {
    hw_peer *p = (hw_peer *)ctx;
    hwtimer *t = p->timer;
    hwtimer_timeout *nodes = p->nodes;
    for (size_t i = 0; i < n; i++) {
        hwtimer_schedule(t, &nodes[i], delay_ms[i] * BENCH_MS, hw_on_fire, &p->fired);
    }
}

static void hw_cancel(void *ctx, size_t n) {
    hw_peer *p = (hw_peer *)ctx;
    hwtimer *t = p->timer;
    hwtimer_timeout *nodes = p->nodes;
    for (size_t i = 0; i < n; i++) {
        hwtimer_cancel(t, &nodes[i]);
    }
}

static void hw_cancel_order(void *ctx, const uint32_t *order, size_t n) {
    hw_peer *p = (hw_peer *)ctx;
    hwtimer *t = p->timer;
    hwtimer_timeout *nodes = p->nodes;
    for (size_t i = 0; i < n; i++) {
        hwtimer_cancel(t, &nodes[order[i]]);
    }
}

static void hw_reschedule(void *ctx, const uint32_t *delay_ms, size_t n, uint32_t extra_ms) {
    hw_peer *p = (hw_peer *)ctx;
    hwtimer *t = p->timer;
    hwtimer_timeout *nodes = p->nodes;
    for (size_t i = 0; i < n; i++) {
        hwtimer_reschedule(t, &nodes[i], (uint64_t)(delay_ms[i] + extra_ms) * BENCH_MS);
    }
}

static size_t hw_expire(void *ctx, uint64_t now_ms) {
    hw_peer *p = (hw_peer *)ctx;
    p->clock_ns = now_ms * BENCH_MS;
    return hwtimer_advance(p->timer, p->clock_ns);
}

static size_t hw_step(void *ctx, uint64_t end_ms) {
    hw_peer *p = (hw_peer *)ctx;
    size_t fired = 0;
    for (uint64_t ms = p->clock_ns / BENCH_MS + 1; ms <= end_ms; ms++) {
        p->clock_ns = ms * BENCH_MS;
        fired += hwtimer_advance(p->timer, p->clock_ns);
    }
    return fired;
}

static uint64_t hw_refiled(hwtimer *t) {
    hwtimer_stats s;
    hwtimer_stats_get(t, &s);
    return s.refiled;
}

/* Scenario 10: the loop's advance every millisecond, and hwtimer_reschedule_at from its
   cached time for every read. */
static void hw_keepalive(void *ctx, bench_keepalive *k) {
    hw_peer *p = (hw_peer *)ctx;
    uint64_t idle_ns = k->idle_ms * BENCH_MS, refiled = 0;
    for (size_t i = 0; i < k->n; i++) {
        hwtimer_schedule_at(p->timer, &p->nodes[i], k->first_ms[i] * BENCH_MS, hw_on_fire,
                            &p->fired);
    }
    BENCH_KEEPALIVE_LOOP(k,
                         (p->clock_ns = now_ms * BENCH_MS,
                          refiled = now_ms == k->warm_ms + 1 ? hw_refiled(p->timer) : refiled,
                          hwtimer_advance(p->timer, p->clock_ns)),
                         hwtimer_reschedule_at(p->timer, &p->nodes[i], p->clock_ns + idle_ns));
    k->fired = p->fired;
    k->refiled = hw_refiled(p->timer) - refiled;
}

/* Scenario 10 with the worker: its timer (made here, in place of the peer's, which runs on
   the real clock) runs on a fake clock that the reads move on, 1000 reads to the
   millisecond, far faster than real time. The worker sleeps on the OS's clock, so a sleep
   would outlast its fake wake-up; the reads wake it instead, as each read checks the clock
   against the worker's wake-up (a clock_fn of the user's may jump: see hwtimer.h's
   CLOCKS). So it wakes when the fake clock reaches its wake-up, give or take one read, and
   the wake-ups it counts are those of a worker on a real clock. */
static void hw_keepalive_worker(void *ctx, bench_keepalive *k) {
    hw_peer *p = (hw_peer *)ctx;
    uint64_t idle_ns = k->idle_ms * BENCH_MS, refiled = 0, wakeups = 0;
    hwtimer_stats s;
    hwtimer_destroy(p->timer);
    p->clock_ns = 0;
    p->timer = bench_hwtimer_make(hwtimer_threads_pthread(), 1, hw_shared_fake_clock,
                                  &p->clock_ns, 512, 0);
    for (size_t i = 0; i < k->n; i++) {
        hwtimer_schedule_at(p->timer, &p->nodes[i], k->first_ms[i] * BENCH_MS, hw_on_fire,
                            &p->fired);
    }
    BENCH_KEEPALIVE_LOOP(k,
                         (__atomic_store_n(&p->clock_ns, now_ms * BENCH_MS, __ATOMIC_RELAXED),
                          now_ms == k->warm_ms + 1
                              ? (hwtimer_stats_get(p->timer, &s), refiled = s.refiled,
                                 wakeups = s.wakeups)
                              : 0),
                         hwtimer_reschedule_at(p->timer, &p->nodes[i], now_ms * BENCH_MS + idle_ns));
    hwtimer_stats_get(p->timer, &s);
    k->fired = __atomic_load_n(&p->fired, __ATOMIC_RELAXED);
    k->refiled = s.refiled - refiled;
    k->wakeups = s.wakeups - wakeups;
}

static uint64_t hw_visits(void *ctx) {
    hwtimer_stats s;
    hwtimer_stats_get(((hw_peer *)ctx)->timer, &s);
    return s.fired + s.cascaded;
}

static size_t hw_node_bytes(void *ctx) {
    (void)ctx;
    return sizeof(hwtimer_timeout);
}

static size_t hw_overhead_bytes(void *ctx, size_t n) {
    hwtimer_stats s;
    (void)n;
    hwtimer_stats_get(((hw_peer *)ctx)->timer, &s);
    return s.bytes;
}

const bench_peer bench_peer_hwtimer = {
    "hwtimer", "hwtimer", hw_create, hw_destroy, NULL, hw_schedule, hw_cancel,
    hw_cancel_order, hw_reschedule, hw_expire, hw_step, hw_visits, hw_node_bytes,
    hw_overhead_bytes, NULL, hw_keepalive, hw_schedule_reading_clock,
};

const bench_peer bench_peer_hwtimer_64 = {
    "hwtimer_64", "hwtimer 64 slots", hw_create_64, hw_destroy, NULL, hw_schedule, hw_cancel,
    hw_cancel_order, hw_reschedule, hw_expire, hw_step, hw_visits, hw_node_bytes,
    hw_overhead_bytes, NULL, hw_keepalive, hw_schedule_reading_clock,
};

const bench_peer bench_peer_hwtimer_locked = {
    "hwtimer_lock", "hwtimer+lock", hw_create_locked, hw_destroy, NULL, hw_schedule,
    hw_cancel, hw_cancel_order, hw_reschedule, hw_expire, hw_step, hw_visits, hw_node_bytes,
    hw_overhead_bytes, NULL, hw_keepalive, hw_schedule_reading_clock,
};

const bench_peer bench_peer_hwtimer_worker = {
    "hwtimer_worker", "hwtimer worker", hw_create_worker, hw_destroy, NULL,
    hw_schedule_reading_clock, hw_cancel, hw_cancel_order, hw_reschedule, NULL, NULL, NULL,
    hw_node_bytes, hw_overhead_bytes,
    "worker mode runs on the real clock; its expiry is measured in scenarios 6-7",
    hw_keepalive_worker, NULL,
};

void bench_hwtimer_leeway_cost(const uint32_t *delay_ms, size_t n, uint64_t leeway_ns,
                               double *schedule_ns, double *cancel_ns) {
    hw_peer *p = (hw_peer *)hw_create(n);
    for (size_t i = 0; i < n; i++) {
        hwtimer_timeout_set_leeway(&p->nodes[i], leeway_ns);
    }
    uint64_t t0 = bench_wall_ns();
    hw_schedule(p, delay_ms, n);
    uint64_t t1 = bench_wall_ns();
    hw_cancel(p, n);
    uint64_t t2 = bench_wall_ns();
    hw_destroy(p);
    *schedule_ns = (double)(t1 - t0) / (double)(n ? n : 1);
    *cancel_ns = (double)(t2 - t1) / (double)(n ? n : 1);
}

static void hw_count_handed_back(hwtimer_timeout *to, void *arg) {
    (void)to;
    ++*(size_t *)arg;
}

double bench_hwtimer_stop_ns(const uint32_t *delay_ms, size_t n) {
    hw_peer *p = (hw_peer *)hw_create(n);
    size_t handed = 0;
    hw_schedule(p, delay_ms, n);
    uint64_t t0 = bench_wall_ns();
    int64_t stopped = hwtimer_stop(p->timer, hw_count_handed_back, &handed);
    uint64_t t1 = bench_wall_ns();
    if (stopped != (int64_t)n || handed != n) {
        fprintf(stderr, "FAIL hwtimer_stop: %lld stopped, %zu handed back, expected %zu\n",
                (long long)stopped, handed, n);
        exit(1);
    }
    hw_destroy(p);
    return (double)(t1 - t0) / (double)(n ? n : 1);
}
