/* gnu_mode.c - the implementation file of an ordinary program in the compiler's default
   (GNU) mode keeps every name its platform gives it.

   hwtimer.h comes first, then the program uses names that POSIX alone does not declare:
   MAP_ANONYMOUS (mmap), usleep. Built by meson in gnu99, gnu11 and gnu17 (the default modes
   of gcc and clang): if the header defined a feature-test macro there, these names would
   be hidden and this file would not compile. It also runs: a 1 ms timeout on the platform
   clock, driven by a usleep loop. */
#define HWTIMER_IMPLEMENTATION
#include "../../hwtimer.h"

#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

static void count_run(hwtimer_timeout *to, void *arg) {
    (void)to;
    ++*(int *)arg;
}

int main(void) {
    void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    hwtimer_timeout *to;
    hwtimer_config cfg;
    hwtimer *t;
    int runs = 0, polls = 0;

    if (page == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    to = (hwtimer_timeout *)page; /* an anonymous page is zero-filled: an idle node */
    hwtimer_config_default(&cfg);
    cfg.tick_ns = HWTIMER_MS(1);
    if (hwtimer_create(&t, &cfg) != HWTIMER_OK ||
        hwtimer_schedule(t, to, HWTIMER_MS(1), count_run, &runs) != HWTIMER_OK) {
        fprintf(stderr, "could not create the timer or schedule\n");
        return 1;
    }
    while (hwtimer_pending(t) > 0 && polls++ < 5000) {
        usleep(500);
        hwtimer_poll(t);
    }
    hwtimer_destroy(t);
    munmap(page, 4096);
    printf("%d run(s) after %d polls\n", runs, polls);
    printf("%d passed, %d failed\n", runs == 1, runs != 1);
    return runs == 1 ? 0 : 1;
}
