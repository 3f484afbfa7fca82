/* link_b.c - the other half of the link test. Normally it includes hwtimer.h for the
   declarations only and calls the implementation in link_a.c. With HWTIMER_STATIC both
   units build their own private implementation, which must not clash at link time. */
#ifdef HWTIMER_STATIC
#define HWTIMER_IMPLEMENTATION
#endif
#include "../../hwtimer.h"

#include <stdio.h>

#include "link_common.h"

int main(void) {
    int a = link_a_run();
    int b = link_roundtrip(5);
    int ok = a == 0 && b == 0;
    if (!ok) {
        fprintf(stderr, "link test: unit a %d, unit b %d\n", a, b);
    }
    printf("%d passed, %d failed\n", ok ? 1 : 0, ok ? 0 : 1);
    return ok ? 0 : 1;
}
