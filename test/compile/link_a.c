/* link_a.c - one half of the two-translation-unit link test (see link_b.c).
   This unit holds the implementation. In the HWTIMER_STATIC variant link_b.c holds its
   own private copy too, and the program only links if neither exports a symbol. */
#define HWTIMER_IMPLEMENTATION
#include "../../hwtimer.h"

#include "link_common.h"

/* Uses only part of the API: with HWTIMER_STATIC, the unused functions must not warn. */
int link_a_run(void) {
    return link_roundtrip(3);
}
