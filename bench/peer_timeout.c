/* peer_timeout.c - William Ahern's timeout.c, a "tickless" hierarchical timing wheel, as a
   peer of the caller-driven scenarios.

   Nothing of timeout.c is in this repository: meson's timeout_src option (bench/run
   --timeout-src DIR, or BENCH_TIMEOUT_SRC=DIR) points at a checkout, and this file
   compiles its timeout.c into itself the way timeout.c's own benchmarks do
   (TIMEOUT_PUBLIC static, then #include "timeout.c"), so the compiler may inline it as it
   inlines hwtimer. Its defines are its Makefile's defaults: WHEEL_BIT 6 and WHEEL_NUM 4,
   four wheels of 64 slots covering 2^24 ticks (4.6 hours of 1 ms ticks, enough for every
   scenario here), intervals, callbacks and relative access compiled in. meson adds the
   checkout as a system include directory, so timeout.c is held to its own warnings, not
   to this project's.

   timeout.c counts abstract ticks and reads no clock: here a tick is 1 ms, as for every
   other peer, and its clock is the tick number (timeouts_update(T, now_ms)). A timeout
   is due once the clock reaches its expiry. timeouts_update moves due timeouts to an
   expired queue, and the caller takes them with timeouts_get and runs their callbacks
   itself (timeout.c stores a callback but never calls it): one update past every
   deadline hands them back in wheel order, not in deadline order. Its reschedule is
   timeouts_add on a pending timeout, which takes it out first. */
#define _POSIX_C_SOURCE 200809L
#define TIMEOUT_PUBLIC static
#include "timeout.c" /* includes timeout.h */

#include "bench.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct to_peer {
    struct timeouts *wheel;
    struct timeout *nodes;
    size_t fired;
} to_peer;

/* The type of the callbacks stored in timeout_cb's unprototyped fn. */
typedef void (*to_callback)(struct timeout *node, void *arg);

static void to_on_fire(struct timeout *node, void *arg) {
    (void)node;
    ++*(size_t *)arg;
}

static void *to_create(size_t n) {
    to_peer *p = (to_peer *)bench_xcalloc(1, sizeof *p);
    int err = 0;
    p->wheel = timeouts_open(TIMEOUT_mHZ, &err); /* hz only labels the ticks */
    if (!p->wheel) {
        fprintf(stderr, "timeouts_open: error %d\n", err);
        exit(2);
    }
    p->nodes = (struct timeout *)bench_xcalloc(n ? n : 1, sizeof *p->nodes);
    for (size_t i = 0; i < n; i++) {
        timeout_init(&p->nodes[i], 0); /* relative, one-shot */
    }
    return p;
}

static void to_destroy(void *ctx) {
    to_peer *p = (to_peer *)ctx;
    timeouts_close(p->wheel);
    free(p->nodes);
    free(p);
}

/* The callback is stored with every schedule, as hwtimer_schedule stores its fn and arg.
   (Not with timeout_setcb: that macro's parameter `fn` also replaces the member name.) */
static void to_schedule(void *ctx, const uint32_t *delay_ms, size_t n) {
    to_peer *p = (to_peer *)ctx;
    struct timeouts *wheel = p->wheel;
    struct timeout *nodes = p->nodes;
    for (size_t i = 0; i < n; i++) {
        nodes[i].callback.fn = to_on_fire;
        nodes[i].callback.arg = &p->fired;
        timeouts_add(wheel, &nodes[i], delay_ms[i]);
    }
}

static void to_cancel(void *ctx, size_t n) {
    to_peer *p = (to_peer *)ctx;
    struct timeouts *wheel = p->wheel;
    struct timeout *nodes = p->nodes;
    for (size_t i = 0; i < n; i++) {
        timeouts_del(wheel, &nodes[i]);
    }
}

static void to_cancel_order(void *ctx, const uint32_t *order, size_t n) {
    to_peer *p = (to_peer *)ctx;
    struct timeouts *wheel = p->wheel;
    struct timeout *nodes = p->nodes;
    for (size_t i = 0; i < n; i++) {
        timeouts_del(wheel, &nodes[order[i]]);
    }
}

static void to_reschedule(void *ctx, const uint32_t *delay_ms, size_t n, uint32_t extra_ms) {
    to_peer *p = (to_peer *)ctx;
    struct timeouts *wheel = p->wheel;
    struct timeout *nodes = p->nodes;
    for (size_t i = 0; i < n; i++) {
        timeouts_add(wheel, &nodes[i], (timeout_t)delay_ms[i] + extra_ms);
    }
}

/* Moves the clock to now_ms and runs every callback due. */
static size_t to_advance(to_peer *p, uint64_t now_ms) {
    struct timeout *due;
    size_t fired = 0;
    timeouts_update(p->wheel, now_ms);
    while ((due = timeouts_get(p->wheel)) != NULL) {
        ((to_callback)due->callback.fn)(due, due->callback.arg);
        fired++;
    }
    return fired;
}

static size_t to_expire(void *ctx, uint64_t now_ms) {
    return to_advance((to_peer *)ctx, now_ms);
}

static size_t to_step(void *ctx, uint64_t end_ms) {
    to_peer *p = (to_peer *)ctx;
    size_t fired = 0;
    for (uint64_t ms = p->wheel->curtime + 1; ms <= end_ms; ms++) {
        fired += to_advance(p, ms);
    }
    return fired;
}

/* Scenario 10: timeouts_add on the pending timeout, relative to its clock (the loop's). */
static void to_keepalive(void *ctx, bench_keepalive *k) {
    to_peer *p = (to_peer *)ctx;
    for (size_t i = 0; i < k->n; i++) {
        p->nodes[i].callback.fn = to_on_fire;
        p->nodes[i].callback.arg = &p->fired;
        timeouts_add(p->wheel, &p->nodes[i], k->first_ms[i]);
    }
    BENCH_KEEPALIVE_LOOP(k, to_advance(p, now_ms),
                         timeouts_add(p->wheel, &p->nodes[i], k->idle_ms));
    k->fired = p->fired;
}

static size_t to_node_bytes(void *ctx) {
    (void)ctx;
    return sizeof(struct timeout);
}

static size_t to_overhead_bytes(void *ctx, size_t n) {
    (void)ctx;
    (void)n;
    return sizeof(struct timeouts);
}

const bench_peer bench_peer_timeout = {
    "timeout_c", "timeout.c", to_create, to_destroy, NULL, to_schedule, to_cancel,
    to_cancel_order, to_reschedule, to_expire, to_step, NULL, to_node_bytes,
    to_overhead_bytes, NULL, to_keepalive, NULL,
};

const char *bench_timeout_version(void) {
    static char version[64];
    snprintf(version, sizeof version, "%s %#x", timeout_vendor(), (unsigned)timeout_version());
    return version;
}
