/* peer_libevent.c - libevent's timers (evtimer_add/evtimer_del) as a peer.

   Fairness of the clock. event_add computes a deadline from the base's cached time,
   which libevent keeps only while its loop runs callbacks (outside them, every event_add
   reads the monotonic clock). hwtimer runs on a fake clock here, so libevent gets its
   cache: each scenario's timed body runs inside one loop callback (in_loop below:
   event_base_once with a zero timeout, then one EVLOOP_ONCE pass), where the cached time
   stays frozen at the moment the callback began, and event_base_update_cache_time is not
   needed.
   Fake time 0 maps to that cached time minus 100 s: every relative timeout is passed as
   (delay - 100 s), which libevent accepts. Deadlines keep their exact spacing and order,
   so the heap does exactly the work it would do for the real delays, but all of them are
   already overdue when the callback returns: expiry is then one event_base_loop(
   EVLOOP_NONBLOCK) pass that runs every timer in deadline order, as hwtimer_advance(now
   past all) does. libevent cannot step a fake clock one tick at a time, so it sits out
   scenario 4; its heap (min_heap.h) is the binary heap's algorithm. */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct ev_peer {
    struct event_base *base;
    unsigned char *events; /* n events of event_get_struct_event_size() bytes */
    size_t event_size;
    size_t n;
    size_t fired;
} ev_peer;

static struct event *ev_at(ev_peer *p, size_t i) {
    return (struct event *)(void *)(p->events + i * p->event_size);
}

static void ev_on_fire(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    ++*(size_t *)arg;
}

static void *lev_create(size_t n) {
    ev_peer *p = (ev_peer *)bench_xcalloc(1, sizeof *p);
    p->base = event_base_new();
    if (!p->base) {
        fprintf(stderr, "event_base_new failed\n");
        exit(2);
    }
    p->event_size = event_get_struct_event_size();
    p->events = (unsigned char *)bench_xcalloc(n ? n : 1, p->event_size);
    p->n = n;
    for (size_t i = 0; i < n; i++) {
        evtimer_assign(ev_at(p, i), p->base, ev_on_fire, &p->fired);
    }
    return p;
}

static void lev_destroy(void *ctx) {
    ev_peer *p = (ev_peer *)ctx;
    for (size_t i = 0; i < p->n; i++) {
        evtimer_del(ev_at(p, i));
    }
    event_base_free(p->base);
    free(p->events);
    free(p);
}

typedef struct ev_job {
    bench_body_fn body;
    void *arg;
} ev_job;

static void ev_run_job(evutil_socket_t fd, short what, void *arg) {
    ev_job *job = (ev_job *)arg;
    (void)fd;
    (void)what;
    job->body(job->arg);
}

static void lev_in_loop(void *ctx, bench_body_fn body, void *arg) {
    ev_peer *p = (ev_peer *)ctx;
    ev_job job = {body, arg};
    struct timeval now = {0, 0};
    if (event_base_once(p->base, -1, EV_TIMEOUT, ev_run_job, &job, &now) != 0) {
        fprintf(stderr, "event_base_once failed\n");
        exit(2);
    }
    event_base_loop(p->base, EVLOOP_ONCE);
}

/* The relative timeout that puts fake time ms at (cached time - 100 s + ms). */
static struct timeval ev_fake_timeout(uint64_t ms) {
    int64_t rel = (int64_t)ms - (int64_t)BENCH_MAX_FAKE_MS;
    struct timeval tv;
    tv.tv_sec = (time_t)(rel >= 0 ? rel / 1000 : -((-rel + 999) / 1000));
    tv.tv_usec = (suseconds_t)((rel - (int64_t)tv.tv_sec * 1000) * 1000);
    return tv;
}

static void lev_schedule(void *ctx, const uint32_t *delay_ms, size_t n) {
    ev_peer *p = (ev_peer *)ctx;
    for (size_t i = 0; i < n; i++) {
        struct timeval tv = ev_fake_timeout(delay_ms[i]);
        evtimer_add(ev_at(p, i), &tv);
    }
}

static void lev_cancel(void *ctx, size_t n) {
    ev_peer *p = (ev_peer *)ctx;
    for (size_t i = 0; i < n; i++) {
        evtimer_del(ev_at(p, i));
    }
}

static void lev_cancel_order(void *ctx, const uint32_t *order, size_t n) {
    ev_peer *p = (ev_peer *)ctx;
    for (size_t i = 0; i < n; i++) {
        evtimer_del(ev_at(p, order[i]));
    }
}

/* evtimer_add on a pending event moves it in the heap: libevent's reschedule. */
static void lev_reschedule(void *ctx, const uint32_t *delay_ms, size_t n, uint32_t extra_ms) {
    ev_peer *p = (ev_peer *)ctx;
    for (size_t i = 0; i < n; i++) {
        struct timeval tv = ev_fake_timeout((uint64_t)delay_ms[i] + extra_ms);
        evtimer_add(ev_at(p, i), &tv);
    }
}

static size_t lev_expire(void *ctx, uint64_t now_ms) {
    ev_peer *p = (ev_peer *)ctx;
    size_t before = p->fired;
    (void)now_ms; /* below BENCH_MAX_FAKE_MS: every deadline is overdue on the real clock */
    event_base_loop(p->base, EVLOOP_NONBLOCK);
    return p->fired - before;
}

static size_t lev_node_bytes(void *ctx) {
    return ((ev_peer *)ctx)->event_size;
}

/* libevent's min_heap is an array of event pointers whose capacity doubles from 8. */
static size_t lev_overhead_bytes(void *ctx, size_t n) {
    size_t capacity = 8;
    (void)ctx;
    while (capacity < n) {
        capacity *= 2;
    }
    return capacity * sizeof(struct event *);
}

const bench_peer bench_peer_libevent = {
    "libevent", "libevent", lev_create, lev_destroy, lev_in_loop, lev_schedule, lev_cancel,
    lev_cancel_order, lev_reschedule, lev_expire, NULL, NULL, lev_node_bytes,
    lev_overhead_bytes,
    "its loop reads the real clock, so libevent cannot step a fake hour (its min_heap is "
    "the binary heap's algorithm)",
    NULL,
    NULL,
};
