/* fake_timer.h - a caller-driven timer on a fake clock, and SPEC's boundary arithmetic,
   for the tests that check exact firing times (test_badinput, test_netty_regress).
   Include after harness.h. */
#ifndef HWTIMER_TEST_FAKE_TIMER_H
#define HWTIMER_TEST_FAKE_TIMER_H

/* The timer keeps a pointer to `clock`: a fake_timer must not move while it is open. */
typedef struct fake_timer {
    uint64_t clock;       /* what the timer's clock reads */
    uint64_t start, tick; /* S and tick_ns */
    hwtimer *t;
} fake_timer;

/* A config for a timer on f's clock, starting at `start`, with this mode's threads. */
static inline void fake_timer_config(fake_timer *f, hwtimer_config *cfg, uint64_t start,
                                     uint64_t tick, uint32_t ticks_per_wheel) {
    f->clock = f->start = start;
    f->tick = tick;
    f->t = NULL;
    test_fake_config(cfg, &f->clock, tick, ticks_per_wheel);
}

/* Moves the clock to now and advances to it, as an event loop would. */
static inline size_t fake_timer_advance(fake_timer *f, uint64_t now) {
    f->clock = now;
    return hwtimer_advance(f->t, now);
}

/* SPEC's boundary of a deadline: the first S + k*tick >= D, or UINT64_MAX when there is
   none (such a timeout never fires). */
static inline uint64_t fake_timer_boundary(const fake_timer *f, uint64_t deadline) {
    uint64_t k;
    if (deadline <= f->start) return f->start;
    k = (deadline - f->start) / f->tick + ((deadline - f->start) % f->tick != 0);
    if (k > (UINT64_MAX - f->start) / f->tick) return UINT64_MAX;
    return f->start + k * f->tick;
}

#endif
