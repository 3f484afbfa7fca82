/* main.c - a parent project's program: one timeout on hwtimer's worker thread.

   Built by test/subproject/run.sh with nothing but meson's dependency('hwtimer'), so it
   links only if that dependency carries the threads flags worker mode needs;
   test/adopt/run.sh builds it (as app.c) with each of the README's build snippets. Exits 0
   when the timeout fired exactly once, on the worker (this thread never advances the
   timer). */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#define HWTIMER_IMPLEMENTATION
#include "hwtimer.h"

#include <stdio.h>
#include <time.h>

#define TICK_NS 1000000u /* 1 ms */
#define DELAY_NS (5 * TICK_NS)
#define WAIT_LIMIT_MS 5000 /* a loaded machine may stall the worker for a while */

static void on_fire(hwtimer_timeout *to, void *arg) {
    (void)to;
    ++*(int *)arg;
}

/* Sleeps 1 ms at a time until nothing is pending; 0 if it still is after WAIT_LIMIT_MS. */
static int wait_until_idle(hwtimer *t) {
    const struct timespec one_ms = {0, 1000000};
    int waited;
    for (waited = 0; hwtimer_pending(t) != 0; waited++) {
        if (waited == WAIT_LIMIT_MS) return 0;
        nanosleep(&one_ms, NULL);
    }
    return 1;
}

int main(void) {
    hwtimer *t;
    hwtimer_config cfg;
    hwtimer_timeout to;
    int fired = 0, idle, err;
    int64_t left;

    hwtimer_timeout_init(&to);
    hwtimer_config_default(&cfg);
    cfg.tick_ns = TICK_NS;
    cfg.threads = hwtimer_threads_default();
    cfg.worker = 1;
    if ((err = hwtimer_create(&t, &cfg)) != HWTIMER_OK ||
        (err = hwtimer_schedule(t, &to, DELAY_NS, on_fire, &fired)) != HWTIMER_OK) {
        fprintf(stderr, "parent: %s\n", hwtimer_strerror(err));
        return 1;
    }
    idle = wait_until_idle(t);
    left = hwtimer_stop(t, NULL, NULL); /* joins the worker: `fired` is final after it */
    hwtimer_destroy(t);
    if (!idle || left != 0 || fired != 1) {
        fprintf(stderr, "parent: fired %d times, %lld left pending\n", fired, (long long)left);
        return 1;
    }
    puts("parent: the timeout fired once on hwtimer's worker");
    return 0;
}
