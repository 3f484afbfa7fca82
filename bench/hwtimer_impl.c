/* hwtimer_impl.c - the hwtimer implementation the scenarios with threads call
   (scenario_threads.c, scenario_leeway.c). peer_hwtimer.c compiles its own copy, static. */
#define _POSIX_C_SOURCE 200809L
#define HWTIMER_IMPLEMENTATION
#include "hwtimer.h"
