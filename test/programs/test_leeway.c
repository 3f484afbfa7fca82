/* test_leeway.c - hwtimer_timeout_set_leeway: its errors, a node keeps its leeway until it is
   set again or re-initialized, the window rule with exact ticks (the first multiple at or
   after e of the largest power of two <= floor(L / tick) + 1), never before D nor after
   B + L, the stored rounding up to the largest leeway, and what leeway is for: fewer
   passes. */
#include "harness.h"
#include "fixture.h"
#include "probe.h"

/* ---- the rule, computed here the slow way ---------------------------------------------- */

/* The tick a timeout with this deadline and leeway runs at, as hwtimer.h documents
   (test_leeway_grid_tick), for the early ticks used here: never near the last one.
   (floor(leeway / tick) of the leeway as stored equals that of the leeway given whenever
   the leeway keeps its digits down to a tenth of a tick, as every leeway below 65535
   ticks does.) */
static uint64_t chosen_tick(const fixture *f, uint64_t deadline, uint64_t leeway) {
    uint64_t e = (boundary_of(f, deadline) - f->start) / f->tick;
    return test_leeway_grid_tick(e, leeway / f->tick, UINT64_MAX);
}

/* Never before D, never after B + L, and exactly at the tick the rule names. */
static void check_ran_in_window(const fixture *f, const probe *p, uint64_t leeway) {
    uint64_t d = hwtimer_timeout_deadline(&p->to);
    CHECK_EQ(p->runs, 1);
    CHECK_EQ(p->early, 0);
    CHECK(p->ran_at >= d);
    CHECK(p->ran_at <= boundary_of(f, d) + leeway);
    CHECK_EQ(p->ran_at, tick_at(f, chosen_tick(f, d, leeway)));
}

static int set_leeway(probe *p, uint64_t leeway) {
    return hwtimer_timeout_set_leeway(&p->to, leeway);
}

/* One probe on a fresh 1 ms timer (S = 0), with this leeway, scheduled at `deadline`. */
static void open_scheduled(fixture *f, probe *p, uint32_t slots, uint64_t leeway,
                           uint64_t deadline) {
    open_with_probe(f, p, slots, NULL);
    CHECK_EQ(set_leeway(p, leeway), HWTIMER_OK);
    CHECK_EQ(probe_schedule_at(p, deadline), HWTIMER_OK);
}

/* ---- errors and what the node keeps ---------------------------------------------------- */

static void act_set_own_leeway(probe *p) {
    p->result[0] = set_leeway(p, p->delay);
}

/* HWTIMER_EINVAL for NULL; HWTIMER_EBUSY while pending, also for a periodic timeout inside its
   own callback, and the refused leeway does not apply; allowed once not pending. */
static void test_errors(void) {
    fixture f;
    probe p;
    CHECK_EQ(hwtimer_timeout_set_leeway(NULL, MS), HWTIMER_EINVAL);
    open_with_probe(&f, &p, 512, NULL);
    CHECK_EQ(probe_schedule_at(&p, 21 * MS + MS / 2), HWTIMER_OK);
    CHECK_EQ(set_leeway(&p, 10 * MS), HWTIMER_EBUSY);
    CHECK_EQ(hwtimer_timeout_due_in(f.t, &p.to), 22 * MS); /* still no leeway */
    CHECK_EQ(advance_to(&f, tick_at(&f, 22)), 1);
    CHECK_EQ(set_leeway(&p, 10 * MS), HWTIMER_OK); /* ran: not pending */

    p.action = act_set_own_leeway;
    p.delay = 50 * MS;
    p.result[0] = 1;
    CHECK_EQ(probe_schedule_periodic(&p, MS, 100 * MS), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, tick_at(&f, 23)), 0); /* 23 .. 33: a multiple of 8 */
    CHECK_EQ(advance_to(&f, tick_at(&f, 24)), 1);
    CHECK_EQ(p.ran_at, tick_at(&f, 24));
    CHECK_EQ(p.result[0], HWTIMER_EBUSY);
    CHECK_EQ(probe_cancel(&p), 1);
    CHECK_EQ(set_leeway(&p, 0), HWTIMER_OK); /* cancelled: not pending */
    fixture_close(&f);
}

/* The leeway stays through any number of schedulings (relative, absolute, reschedule, and
   from another timer); hwtimer_timeout_init and a zero-filled node mean 0. */
static void test_kept_and_reset(void) {
    fixture f;
    probe p;
    hwtimer_timeout fresh = HWTIMER_TIMEOUT_INIT;
    open_with_probe(&f, &p, 512, NULL);
    CHECK_EQ(set_leeway(&p, 10 * MS), HWTIMER_OK);
    CHECK_EQ(probe_schedule_at(&p, 21 * MS + MS / 2), HWTIMER_OK); /* 22 .. 32: 24 */
    CHECK_EQ(hwtimer_timeout_due_in(f.t, &p.to), 24 * MS);
    CHECK_EQ(advance_to(&f, tick_at(&f, 24)), 1);
    CHECK_EQ(probe_schedule(&p, 21 * MS + MS / 2), HWTIMER_OK); /* 46 .. 56: 48 */
    CHECK_EQ(hwtimer_timeout_due_in(f.t, &p.to), 24 * MS);
    CHECK_EQ(hwtimer_reschedule(f.t, &p.to, 90 * MS + 1), HWTIMER_OK); /* 115 .. 125 */
    CHECK_EQ(hwtimer_timeout_due_in(f.t, &p.to), 96 * MS);              /* 120 */
    CHECK_EQ(advance_to(&f, tick_at(&f, 120)), 1);
    CHECK_EQ(hwtimer_reschedule_at(f.t, &p.to, tick_at(&f, 250)), HWTIMER_OK); /* 250..260 */
    CHECK_EQ(hwtimer_timeout_due_in(f.t, &p.to), tick_at(&f, 256) - f.clock);
    CHECK_EQ(probe_cancel(&p), 1);

    hwtimer_timeout_init(&p.to);
    CHECK_EQ(probe_schedule_at(&p, tick_at(&f, 250)), HWTIMER_OK);
    CHECK_EQ(hwtimer_timeout_due_in(f.t, &p.to), tick_at(&f, 250) - f.clock);
    CHECK_EQ(hwtimer_schedule_at(f.t, &fresh, tick_at(&f, 250) - 1, other_fn, NULL), HWTIMER_OK);
    CHECK_EQ(hwtimer_timeout_due_in(f.t, &fresh), tick_at(&f, 250) - f.clock);
    CHECK_EQ(hwtimer_check(f.t), 0);
    fixture_close(&f);
}

/* ---- the window rule -------------------------------------------------------------------- */

/* Tick 1 ms, D = 21.5 ms, so e = 22: each leeway gives one tick, reported by next_expiry
   and due_in, and the timeout runs there and not a tick before. n = floor(L / 1 ms). */
static void test_window_rule(void) {
    static const struct {
        uint64_t leeway, tick;
    } cases[] = {
        {0, 22},               /* no leeway: e */
        {999 * US, 22},        /* less than a tick: e */
        {2 * MS - 1, 22},      /* n = 1: multiples of 2, 22 is one */
        {3 * MS, 24},          /* n = 3: of 4 */
        {7 * MS - 1, 24},      /* n = 6: still of 4 */
        {7 * MS, 24},          /* n = 7: of 8 */
        {15 * MS, 32},         /* n = 15: of 16 */
        {100 * MS, 64},        /* n = 100: of 64 */
        {200 * MS, 128},       /* n = 200: of 128 */
    };
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fixture f;
        probe p;
        uint64_t at;
        int before = test__checks_failed;
        open_scheduled(&f, &p, 512, cases[i].leeway, 21 * MS + MS / 2);
        at = tick_at(&f, cases[i].tick);
        CHECK_EQ(chosen_tick(&f, 21 * MS + MS / 2, cases[i].leeway), cases[i].tick);
        CHECK_EQ(hwtimer_next_expiry(f.t), at);
        CHECK_EQ(hwtimer_timeout_due_in(f.t, &p.to), at);
        CHECK_EQ(advance_to(&f, at - f.tick), 0);
        CHECK_EQ(hwtimer_timeout_due_in(f.t, &p.to), f.tick);
        CHECK_EQ(advance_to(&f, at), 1);
        check_ran_in_window(&f, &p, cases[i].leeway);
        if (test__checks_failed != before) {
            fprintf(stderr, "  (leeway %llu ns)\n", (unsigned long long)cases[i].leeway);
        }
        fixture_close(&f);
    }
}

/* A leeway that covers a level's slot width puts the timeout on the start of one of its
   slots, and it runs from there without moving below that level; without leeway the same
   deadline moves down. Wheel of 8 slots: level 1 slots are 8 ticks wide, level 2 ones
   64; 64 starts a level-2 slot, 512 a level-3 one. */
static void test_no_cascade(void) {
    static const struct {
        uint64_t deadline, leeway, tick, cascades;
    } cases[] = {
        {59 * MS + 1, 10 * MS, 64, 0},   /* 60 .. 70: a multiple of 8 */
        {59 * MS + 1, 0, 60, 1},         /* level 1 slot 56 .. 63: moves down once */
        {500 * MS + 1, 20 * MS, 512, 0}, /* 501 .. 521: of 16 */
        {505 * MS + 1, 70 * MS, 512, 0}, /* 506 .. 576: of 64, a level-2 start */
        {500 * MS + 1, 0, 501, 2},       /* level 2, then 1, then runs */
    };
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fixture f;
        probe p;
        hwtimer_stats st;
        open_scheduled(&f, &p, 8, cases[i].leeway, cases[i].deadline);
        CHECK_EQ(hwtimer_timeout_due_in(f.t, &p.to), tick_at(&f, cases[i].tick));
        CHECK_EQ(advance_to(&f, tick_at(&f, cases[i].tick) - 1), 0);
        CHECK_EQ(advance_to(&f, tick_at(&f, cases[i].tick)), 1);
        check_ran_in_window(&f, &p, cases[i].leeway);
        hwtimer_stats_get(f.t, &st);
        CHECK_EQ(st.cascaded, cases[i].cascades);
        fixture_close(&f);
    }
}

/* ---- random deadlines and leeways ------------------------------------------------------- */

enum { N = 1000 };
static probe nodes[N];
static uint64_t leeway_of[N];

/* N probes with random deadlines over `span` after S, and random leeways below max_leeway,
   or with `fixed` all max_leeway. */
static void schedule_with_leeways(fixture *f, uint64_t span, uint64_t max_leeway, int fixed,
                                  uint64_t seed) {
    size_t i;
    probes_init(nodes, N, f);
    for (i = 0; i < N; i++) {
        uint64_t d = f->start + 1 + test_rng_below(&seed, span);
        leeway_of[i] = fixed ? max_leeway : test_rng_below(&seed, max_leeway);
        CHECK_EQ(set_leeway(&nodes[i], leeway_of[i]), HWTIMER_OK);
        CHECK_EQ(probe_schedule_at(&nodes[i], d), HWTIMER_OK);
    }
    CHECK_EQ(hwtimer_check(f->t), 0);
}

/* The earliest tick a node that has not run will run at. */
static uint64_t earliest_unrun(const fixture *f) {
    uint64_t best = UINT64_MAX;
    size_t i;
    for (i = 0; i < N; i++) {
        if (nodes[i].runs == 0) {
            uint64_t at = tick_at(f, chosen_tick(f, hwtimer_timeout_deadline(&nodes[i].to),
                                                 leeway_of[i]));
            if (at < best) best = at;
        }
    }
    return best;
}

/* Drives the timer as an event loop does: sleep until next_expiry (never later than the
   earliest chosen boundary), advance. Returns how many passes ran at least one callback. */
static unsigned drive_loop(fixture *f) {
    unsigned busy_passes = 0, wakeups = 0;
    while (hwtimer_pending(f->t) > 0 && wakeups++ < 10 * N) {
        uint64_t next = hwtimer_next_expiry(f->t);
        CHECK(next <= earliest_unrun(f));
        CHECK(next > f->clock);
        if (next <= f->clock) break;
        busy_passes += advance_to(f, next) > 0;
    }
    CHECK_EQ(hwtimer_pending(f->t), 0);
    return busy_passes;
}

static void check_all_ran_in_window(const fixture *f) {
    size_t i;
    for (i = 0; i < N; i++) check_ran_in_window(f, &nodes[i], leeway_of[i]);
}

/* Any deadlines and leeways: each runs in its window, at the tick the rule names. */
static void test_random_windows(void) {
    fixture f;
    fixture_open(&f, 333, MS, 8);
    schedule_with_leeways(&f, 2 * SEC, 300 * MS, 0, 99);
    (void)drive_loop(&f);
    check_all_ran_in_window(&f);
    /* the fixture checks order by deadline; with leeway the order is by chosen boundary,
       which the ticks checked above already pin down */
    f.out_of_order = 0;
    fixture_close(&f);
}

/* In one long advance the timeouts run in order of the boundary chosen for them. */
static void test_order_by_chosen_boundary(void) {
    fixture f;
    size_t i;
    uint64_t last = 0;
    fixture_open(&f, 0, MS, 8);
    schedule_with_leeways(&f, SEC, 100 * MS, 0, 7);
    run_log_reset();
    CHECK_EQ(advance_to(&f, 2 * SEC), N);
    CHECK_EQ(run_logged, N);
    for (i = 0; i < run_logged; i++) {
        size_t k = (size_t)(run_log[i] - nodes);
        uint64_t at = chosen_tick(&f, hwtimer_timeout_deadline(&nodes[k].to), leeway_of[k]);
        CHECK(at >= last);
        last = at;
    }
    f.out_of_order = 0; /* by deadline: see test_random_windows */
    fixture_close(&f);
}

/* What leeway is for: 1000 timeouts over 1 s with 100 ms of leeway on a 1 ms tick run in at
   most 2 * (1000 / 100) + 1 passes that do work (without leeway: one per distinct tick). */
static void test_batching(void) {
    fixture f;
    unsigned busy;
    fixture_open(&f, 0, MS, 512);
    schedule_with_leeways(&f, SEC, 100 * MS, 1, 2024);
    busy = drive_loop(&f);
    printf("batching: %u passes ran callbacks for %d timeouts (bound %d)\n", busy, N,
           2 * (1000 / 100) + 1);
    CHECK(busy <= 2 * (1000 / 100) + 1);
    check_all_ran_in_window(&f);
    f.out_of_order = 0; /* by deadline: see test_random_windows */
    fixture_close(&f);
}

/* ---- how the leeway is stored ----------------------------------------------------------- */

/* On a timer whose tick is `tick`, a timeout due at tick 1 moves to tick 2 exactly when
   n = floor(leeway / tick) >= 1: when the leeway as stored is at least one tick. */
static int keeps_a_tick(uint64_t leeway, uint64_t tick) {
    fixture f;
    probe p;
    int moved;
    fixture_open(&f, 0, tick, 512);
    probe_init(&p, &f, 0);
    CHECK_EQ(set_leeway(&p, leeway), HWTIMER_OK);
    CHECK_EQ(probe_schedule_at(&p, 1), HWTIMER_OK);
    moved = hwtimer_timeout_due_in(f.t, &p.to) == 2 * tick;
    CHECK_EQ(probe_cancel(&p), 1);
    fixture_close(&f);
    return moved;
}

/* Four significant digits and round values are kept exactly; others are rounded down, by
   at most 0.02%, never up. */
static void test_stored_rounding(void) {
    static const uint64_t exact[] = {1, 65535, 1 * US, 10 * MS, 1500 * MS, 4321 * 100000,
                                     HOUR, 9999 * SEC};
    static const uint64_t rounded[] = {65536, 123456789, 99999999, 1234567, 18446744073u,
                                       65535 * 10 + 9};
    size_t i;
    for (i = 0; i < sizeof exact / sizeof exact[0]; i++) {
        CHECK(keeps_a_tick(exact[i], exact[i]));
        CHECK(!keeps_a_tick(exact[i], exact[i] + 1));
    }
    for (i = 0; i < sizeof rounded / sizeof rounded[0]; i++) {
        uint64_t l = rounded[i];
        CHECK(keeps_a_tick(l, l - l / 5000)); /* lost at most 0.02% */
        CHECK(!keeps_a_tick(l, l + 1));       /* never more */
    }
}

/* The largest leeway a node keeps (UINT64_MAX given, 18446e15 ns kept) on a 1 ns tick, where
   n = floor(L / tick) is the leeway itself: the grid is 2^63 (the largest power of two
   <= n + 1), so a timeout due at tick 5 runs at tick 2^63, not a tick before. */
static void test_largest_leeway(void) {
    const uint64_t grid = (uint64_t)1 << 63;
    fixture f;
    probe p;
    fixture_open(&f, 0, 1, 512);
    probe_init(&p, &f, 0);
    CHECK_EQ(set_leeway(&p, UINT64_MAX), HWTIMER_OK);
    CHECK_EQ(probe_schedule_at(&p, 5), HWTIMER_OK);
    CHECK_EQ(hwtimer_timeout_due_in(f.t, &p.to), grid);
    CHECK_EQ(advance_to(&f, grid - 1), 0);
    CHECK_EQ(p.runs, 0);
    CHECK_EQ(advance_to(&f, grid), 1);
    CHECK_EQ(p.runs, 1);
    CHECK_EQ(p.ran_at, grid);
    fixture_close(&f);
}

int main(void) {
    RUN_TEST(test_errors);
    RUN_TEST(test_kept_and_reset);
    RUN_TEST(test_window_rule);
    RUN_TEST(test_no_cascade);
    RUN_TEST(test_random_windows);
    RUN_TEST(test_order_by_chosen_boundary);
    RUN_TEST(test_batching);
    RUN_TEST(test_stored_rounding);
    RUN_TEST(test_largest_leeway);
    return test_finish();
}
