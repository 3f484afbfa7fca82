/* link_common.h - what both units of the link test run: a timeout through its life on a
   fake clock. Static, so each unit compiles its own copy against its view of hwtimer.h. */
#ifndef LINK_COMMON_H
#define LINK_COMMON_H

int link_a_run(void);

static uint64_t link_clock(void *ctx) {
    return *(const uint64_t *)ctx;
}

static void link_count(hwtimer_timeout *to, void *arg) {
    (void)to;
    ++*(int *)arg;
}

/* 0 when a timeout of `ticks` ticks fires exactly at its boundary, else the failed step. */
static int link_roundtrip(uint64_t ticks) {
    uint64_t now = 0;
    int runs = 0, failed = 0;
    hwtimer *t = NULL;
    hwtimer_timeout to = HWTIMER_TIMEOUT_INIT;
    hwtimer_config cfg;
    hwtimer_config_default(&cfg);
    cfg.tick_ns = 1000;
    cfg.clock_fn = link_clock;
    cfg.clock_ctx = &now;
    if (hwtimer_create(&t, &cfg) != HWTIMER_OK) {
        return 1;
    }
    if (hwtimer_schedule(t, &to, ticks * 1000, link_count, &runs) != HWTIMER_OK) {
        failed = 2;
    } else if (hwtimer_advance(t, ticks * 1000 - 1) != 0 || runs != 0) {
        failed = 3;
    } else if (hwtimer_advance(t, ticks * 1000) != 1 || runs != 1) {
        failed = 4;
    }
    hwtimer_destroy(t);
    return failed;
}

#endif
