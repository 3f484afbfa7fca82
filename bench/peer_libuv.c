/* peer_libuv.c - libuv's timers (uv_timer_start/uv_timer_stop) as a peer.

   Fairness of the clock. libuv computes a deadline as loop->time + timeout, where
   loop->time is the loop's cached time (uv_now), refreshed only by uv_update_time and
   uv_run. hwtimer runs on a fake clock here, so libuv gets the same: a fresh loop's cached
   time is set to 0 (loop->time is a field of the public uv_loop_t), which makes the
   deadlines equal to hwtimer's and means no clock is read while scheduling.
   To expire, uv_run(UV_RUN_NOWAIT) refreshes loop->time from the real monotonic clock
   (time since boot, which bench_libuv_wait_uptime makes sure is past every deadline), so
   every timer is overdue and runs in that one pass, in deadline order, exactly as after
   hwtimer_advance(now past all). The pass also makes one epoll_wait(timeout 0) call
   (about a microsecond, on N >= 1000 timers). libuv cannot step a fake clock one tick at a
   time (uv_run always reads the real clock), so it sits out scenario 4; its heap is a
   binary heap, which the "binary heap" column measures there. */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <uv.h>

typedef struct uv_peer {
    uv_loop_t loop;
    uv_timer_t *timers;
    size_t n;
    size_t fired;
} uv_peer;

static void uv_on_fire(uv_timer_t *timer) {
    ++*(size_t *)timer->data;
}

/* On a machine booted less than 100 s ago the real clock would not yet be past the fake
   deadlines; wait (once, untimed) until it is. */
static void bench_libuv_wait_uptime(void) {
    uint64_t up_ms = uv_hrtime() / BENCH_MS;
    if (up_ms < BENCH_MAX_FAKE_MS) {
        fprintf(stderr, "libuv: waiting %.1f s for the monotonic clock to pass %u ms\n",
                (double)(BENCH_MAX_FAKE_MS - up_ms) / 1e3, BENCH_MAX_FAKE_MS);
        bench_sleep_ns((BENCH_MAX_FAKE_MS - up_ms) * BENCH_MS);
    }
}

static void *luv_create(size_t n) {
    uv_peer *p = (uv_peer *)bench_xcalloc(1, sizeof *p);
    bench_libuv_wait_uptime();
    if (uv_loop_init(&p->loop) != 0) {
        fprintf(stderr, "uv_loop_init failed\n");
        exit(2);
    }
    p->timers = (uv_timer_t *)bench_xcalloc(n ? n : 1, sizeof *p->timers);
    p->n = n;
    for (size_t i = 0; i < n; i++) {
        uv_timer_init(&p->loop, &p->timers[i]);
        p->timers[i].data = &p->fired;
    }
    p->loop.time = 0; /* the frozen cached clock: see the top of the file */
    return p;
}

static void luv_destroy(void *ctx) {
    uv_peer *p = (uv_peer *)ctx;
    for (size_t i = 0; i < p->n; i++) {
        uv_close((uv_handle_t *)&p->timers[i], NULL);
    }
    uv_run(&p->loop, UV_RUN_DEFAULT); /* completes the closes */
    if (uv_loop_close(&p->loop) != 0) {
        fprintf(stderr, "uv_loop_close: handles still open\n");
    }
    free(p->timers);
    free(p);
}

static void luv_schedule(void *ctx, const uint32_t *delay_ms, size_t n) {
    uv_peer *p = (uv_peer *)ctx;
    uv_timer_t *timers = p->timers;
    for (size_t i = 0; i < n; i++) {
        uv_timer_start(&timers[i], uv_on_fire, delay_ms[i], 0);
    }
}

static void luv_cancel(void *ctx, size_t n) {
    uv_peer *p = (uv_peer *)ctx;
    uv_timer_t *timers = p->timers;
    for (size_t i = 0; i < n; i++) {
        uv_timer_stop(&timers[i]);
    }
}

static void luv_cancel_order(void *ctx, const uint32_t *order, size_t n) {
    uv_peer *p = (uv_peer *)ctx;
    uv_timer_t *timers = p->timers;
    for (size_t i = 0; i < n; i++) {
        uv_timer_stop(&timers[order[i]]);
    }
}

/* uv_timer_start on an active timer stops and restarts it: libuv's reschedule. */
static void luv_reschedule(void *ctx, const uint32_t *delay_ms, size_t n, uint32_t extra_ms) {
    uv_peer *p = (uv_peer *)ctx;
    uv_timer_t *timers = p->timers;
    for (size_t i = 0; i < n; i++) {
        uv_timer_start(&timers[i], uv_on_fire, (uint64_t)delay_ms[i] + extra_ms, 0);
    }
}

static size_t luv_expire(void *ctx, uint64_t now_ms) {
    uv_peer *p = (uv_peer *)ctx;
    size_t before = p->fired;
    (void)now_ms; /* below BENCH_MAX_FAKE_MS: every deadline is overdue on the real clock */
    uv_run(&p->loop, UV_RUN_NOWAIT);
    return p->fired - before;
}

/* Scenario 10: uv_timer_start on the active timer from the loop's cached time, which the
   loop moves on every millisecond (loop->time, as uv_update_time would). Its advance runs
   nothing: uv_run would read the real clock, and nothing is due in this scenario (the
   fired count checks that) -- so libuv pays no advance here, the others do. */
static void luv_keepalive(void *ctx, bench_keepalive *k) {
    uv_peer *p = (uv_peer *)ctx;
    for (size_t i = 0; i < k->n; i++) {
        uv_timer_start(&p->timers[i], uv_on_fire, k->first_ms[i], 0);
    }
    BENCH_KEEPALIVE_LOOP(k, p->loop.time = now_ms,
                         uv_timer_start(&p->timers[i], uv_on_fire, k->idle_ms, 0));
    k->fired = p->fired;
}

static size_t luv_node_bytes(void *ctx) {
    (void)ctx;
    return sizeof(uv_timer_t);
}

/* libuv's timer heap is intrusive (links inside uv_timer_t): nothing beyond the loop. */
static size_t luv_overhead_bytes(void *ctx, size_t n) {
    (void)ctx;
    (void)n;
    return sizeof(uv_loop_t);
}

const bench_peer bench_peer_libuv = {
    "libuv", "libuv", luv_create, luv_destroy, NULL, luv_schedule, luv_cancel,
    luv_cancel_order, luv_reschedule, luv_expire, NULL, NULL, luv_node_bytes,
    luv_overhead_bytes,
    "uv_run reads the real clock, so libuv cannot step a fake hour (its heap is the "
    "binary heap's algorithm)",
    luv_keepalive,
    NULL,
};
