/* include_order.c - the implementation included after system headers.

   stdio.h and stdlib.h come first, so hwtimer.h can no longer choose the feature macros
   those headers see. test/tools/matrix.sh builds this file with gcc and clang, -std=c99 and
   -std=c11 (strict: the C library then hides POSIX) and gnu99 or -D_POSIX_C_SOURCE (POSIX
   visible). Either it compiles and this program runs, or the compiler stops at exactly one
   error, hwtimer.h's #error saying what to do: never a cascade of unrelated errors. */
#include <stdio.h>
#include <stdlib.h>

#define HWTIMER_IMPLEMENTATION
#include "../../hwtimer.h"

#define TICK_NS 1000000u

static uint64_t read_fake_clock(void *ctx) { return *(const uint64_t *)ctx; }

static void count_run(hwtimer_timeout *to, void *arg) {
    (void)to;
    ++*(int *)arg;
}

/* One timeout 3 ticks ahead on a fake clock, through the default thread backend's locks:
   nothing one nanosecond before its boundary, one run at it. */
int main(void) {
    uint64_t clock = 0;
    hwtimer *t;
    hwtimer_config cfg;
    hwtimer_timeout to;
    int runs = 0;
    size_t early, on_time;

    hwtimer_timeout_init(&to);
    hwtimer_config_default(&cfg);
    cfg.tick_ns = TICK_NS;
    cfg.clock_fn = read_fake_clock;
    cfg.clock_ctx = &clock;
    cfg.threads = hwtimer_threads_default();
    if (hwtimer_create(&t, &cfg) != HWTIMER_OK ||
        hwtimer_schedule(t, &to, 3 * TICK_NS, count_run, &runs) != HWTIMER_OK) {
        puts("include_order: create or schedule failed");
        return EXIT_FAILURE;
    }
    early = hwtimer_advance(t, 3 * TICK_NS - 1);
    on_time = hwtimer_advance(t, 3 * TICK_NS);
    hwtimer_destroy(t);
    if (early != 0 || on_time != 1 || runs != 1) {
        printf("include_order: %u early, %u on time, %d runs (want 0, 1, 1)\n",
               (unsigned)early, (unsigned)on_time, runs);
        return EXIT_FAILURE;
    }
    puts("include_order: ok");
    return EXIT_SUCCESS;
}
