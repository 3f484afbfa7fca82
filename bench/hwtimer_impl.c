/* hwtimer_impl.c - the hwtimer implementation the scenarios that call hwtimer directly
   share (producers.c, accuracy.c, idle_wakeups.c, leeway.c, bursts_and_clocks.c).
   peer_hwtimer.c and floors.c compile their own copies, static. */
#define _POSIX_C_SOURCE 200809L
#define HWTIMER_IMPLEMENTATION
#include "hwtimer.h"
