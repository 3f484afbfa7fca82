/* example_util.h - what the examples on the real clock share: sleeping until a time, and
   the median of measured delays. Include after harness.h and harness_threads.h.

   Medians, not means or maxima, carry the examples' tight timing checks: the examples run
   on shared machines where a thread now and then waits tens of milliseconds for a CPU, and
   such a stall moves a mean or a maximum but not a median. */
#ifndef HWTIMER_EXAMPLE_UTIL_H
#define HWTIMER_EXAMPLE_UTIL_H

static inline void sleep_until(uint64_t when) {
    uint64_t now = now_ns();
    if (when > now) sleep_ns(when - now);
}

static int example__compare_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The median of values[0..count) (sorts them); 0 for none. */
static inline uint64_t median(uint64_t *values, size_t count) {
    if (count == 0) return 0;
    qsort(values, count, sizeof *values, example__compare_u64);
    return values[count / 2];
}

#endif
