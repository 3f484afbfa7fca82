/* test_absolute.c - the forms that read no clock: hwtimer_schedule_at,
   hwtimer_schedule_periodic_at and hwtimer_reschedule_at (the same errors as their relative
   forms, firing at the first boundary at or after the deadline given), and
   hwtimer_schedule_ticks (ticks counted from the timer's time). */
#include "harness.h"
#include "fixture.h"
#include "probe.h"

enum { PERIOD_MS = 5 };

/* ---- the three forms, so that every clause is checked for each ------------------------- */

typedef struct form {
    const char *name;
    /* arms p at deadline d on t */
    int (*arm)(hwtimer *t, probe *p, uint64_t d);
    /* makes p ready for a first arm (reschedule_at needs a node scheduled before) */
    void (*prepare)(probe *p);
} form;

static int arm_schedule_at(hwtimer *t, probe *p, uint64_t d) {
    return hwtimer_schedule_at(t, &p->to, d, probe_fn, p);
}
static int arm_periodic_at(hwtimer *t, probe *p, uint64_t d) {
    return hwtimer_schedule_periodic_at(t, &p->to, d, PERIOD_MS * MS, probe_fn, p);
}
static int arm_reschedule_at(hwtimer *t, probe *p, uint64_t d) {
    return hwtimer_reschedule_at(t, &p->to, d);
}

static void prepare_nothing(probe *p) {
    (void)p;
}
/* Scheduled once and cancelled: reschedule_at arms it again with its callback. */
static void prepare_scheduled_once(probe *p) {
    CHECK_EQ(probe_schedule(p, HOUR), HWTIMER_OK);
    CHECK_EQ(probe_cancel(p), 1);
}

static const form forms[] = {
    {"hwtimer_schedule_at", arm_schedule_at, prepare_nothing},
    {"hwtimer_schedule_periodic_at", arm_periodic_at, prepare_nothing},
    {"hwtimer_reschedule_at", arm_reschedule_at, prepare_scheduled_once},
};
#define FORMS (sizeof forms / sizeof forms[0])

/* Runs check(form) for each form, naming the form of a failure. */
static void for_each_form(void (*check)(const form *fm)) {
    size_t i;
    for (i = 0; i < FORMS; i++) {
        int before = test__checks_failed;
        check(&forms[i]);
        if (test__checks_failed != before) fprintf(stderr, "  (form: %s)\n", forms[i].name);
    }
}

/* ---- errors ----------------------------------------------------------------------------- */

/* A 1 ms timer (S = 0) and a probe ready for the form's first arm; returns a snapshot of
   both, to show that a refused call changes nothing. */
static snapshot open_prepared(fixture *f, probe *p, const form *fm) {
    open_with_probes(f, p, 1, 0, 8);
    fm->prepare(p);
    return take_snapshot(f->t, &p->to);
}

/* HWTIMER_EINVAL for a NULL timer or node, and nothing changes. */
static void check_null_arguments(const form *fm) {
    fixture f;
    probe p;
    snapshot before = open_prepared(&f, &p, fm);
    CHECK_EQ(fm->arm(NULL, &p, 5 * MS), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_reschedule_at(f.t, NULL, 5 * MS), HWTIMER_EINVAL);
    CHECK_UNCHANGED(before, f.t, &p.to);
    fixture_close(&f);
}

/* HWTIMER_EBUSY for a node pending here or on another timer; nothing changes. (For
   reschedule_at a node pending here is not an error: it moves, see test_reschedule_at.) */
static void check_busy(const form *fm) {
    fixture f, g;
    probe p;
    snapshot before;
    open_with_probes(&f, &p, 1, 0, 8);
    fixture_open(&g, 0, MS, 8);
    fm->prepare(&p);
    CHECK_EQ(probe_schedule(&p, 3 * MS), HWTIMER_OK);
    before = take_snapshot(f.t, &p.to);
    CHECK_EQ(fm->arm(g.t, &p, 5 * MS), HWTIMER_EBUSY);
    if (fm->arm != arm_reschedule_at) CHECK_EQ(fm->arm(f.t, &p, 5 * MS), HWTIMER_EBUSY);
    CHECK_UNCHANGED(before, f.t, &p.to);
    CHECK_EQ(hwtimer_pending(g.t), 0);
    fixture_close(&g);
    fixture_close(&f);
}

/* HWTIMER_EFULL once max_pending are pending; nothing changes. */
static void check_full(const form *fm) {
    fixture f;
    probe p[2];
    snapshot before;
    fixture_open_limited(&f, 0, MS, 8, 1);
    probes_init(p, 2, &f);
    fm->prepare(&p[1]);
    CHECK_EQ(probe_schedule(&p[0], 3 * MS), HWTIMER_OK);
    before = take_snapshot(f.t, &p[1].to);
    CHECK_EQ(fm->arm(f.t, &p[1], 5 * MS), HWTIMER_EFULL);
    CHECK_UNCHANGED(before, f.t, &p[1].to);
    CHECK_EQ(probe_cancel(&p[0]), 1);
    CHECK_EQ(fm->arm(f.t, &p[1], 5 * MS), HWTIMER_OK); /* room again */
    fixture_close(&f);
}

/* HWTIMER_ESTOPPED after hwtimer_stop; nothing changes. */
static void check_stopped(const form *fm) {
    fixture f;
    probe p;
    snapshot before = open_prepared(&f, &p, fm);
    CHECK_EQ(hwtimer_stop(f.t, NULL, NULL), 0);
    before = take_snapshot(f.t, &p.to); /* as stopped */
    CHECK_EQ(fm->arm(f.t, &p, 5 * MS), HWTIMER_ESTOPPED);
    CHECK_UNCHANGED(before, f.t, &p.to);
    fixture_close(&f);
}

static void test_errors(void) {
    for_each_form(check_null_arguments);
    for_each_form(check_busy);
    for_each_form(check_full);
    for_each_form(check_stopped);
}

/* The errors only some forms have: a NULL callback, a period of 0, a reschedule_at of a node
   never scheduled. */
static void test_errors_of_some_forms(void) {
    fixture f;
    probe p;
    snapshot before;
    open_with_probes(&f, &p, 1, 0, 8);
    before = take_snapshot(f.t, &p.to);
    CHECK_EQ(hwtimer_schedule_at(f.t, &p.to, 5 * MS, NULL, &p), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_schedule_periodic_at(f.t, &p.to, 5 * MS, MS, NULL, &p), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_schedule_periodic_at(f.t, &p.to, 5 * MS, 0, probe_fn, &p), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_reschedule_at(f.t, &p.to, 5 * MS), HWTIMER_EINVAL); /* never scheduled */
    CHECK_EQ(hwtimer_reschedule_at(NULL, &p.to, 5 * MS), HWTIMER_EINVAL);
    CHECK_UNCHANGED(before, f.t, &p.to);
    CHECK_EQ(hwtimer_timeout_state(&p.to), HWTIMER_IDLE);
    fixture_close(&f);
}

/* ---- firing ----------------------------------------------------------------------------- */

/* Each form runs at the first boundary at or after D: deadlines anywhere inside ticks, on
   boundaries, and far ones on coarse levels, by both stepping and an event loop. */
static void check_fires_at_boundary(const form *fm) {
    enum { N = 300 };
    static probe p[N];
    fixture f;
    uint64_t rng = 12345;
    size_t i;
    open_with_probes(&f, p, N, 777, 8);
    for (i = 0; i < N; i++) {
        uint64_t d = f.start + 1 + test_rng_below(&rng, 300 * MS);
        if (i % 5 == 0) d = tick_at(&f, 1 + i); /* exactly on a boundary */
        fm->prepare(&p[i]);
        /* a periodic one ends at its first run: that run is what this checks */
        if (fm->arm == arm_periodic_at) p[i].action = act_cancel_self;
        CHECK_EQ(fm->arm(f.t, &p[i], d), HWTIMER_OK);
        CHECK_EQ(hwtimer_timeout_deadline(&p[i].to), d);
    }
    CHECK_EQ(hwtimer_check(f.t), 0);
    drain_by_next_expiry(&f, p, N, 4 * N);
    fixture_close(&f);
}

static void test_fires_at_boundary(void) {
    for_each_form(check_fires_at_boundary);
}

/* A periodic_at runs at D, D+p, D+2p ... each at its boundary. */
static void test_periodic_at_fixed_rate(void) {
    fixture f;
    probe p;
    uint64_t k, now;
    const uint64_t d = 3 * MS + 300 * US, period = 2 * MS + MS / 2;
    open_with_probes(&f, &p, 1, 50, 8);
    CHECK_EQ(hwtimer_schedule_periodic_at(f.t, &p.to, f.start + d, period, probe_fn, &p),
             HWTIMER_OK);
    CHECK_EQ(hwtimer_timeout_period(&p.to), period);
    k = 0;
    for (now = tick_at(&f, 1); now <= tick_at(&f, 40); now += f.tick) {
        uint64_t due = boundary_of(&f, f.start + d + k * period);
        CHECK_EQ(advance_to(&f, now), now == due ? 1 : 0);
        if (now == due) k++;
    }
    CHECK_EQ((uint64_t)p.runs, k);
    CHECK(k >= 14);
    fixture_close(&f);
}

/* A deadline at or before the time advanced to runs in the next advance; reschedule_at
   moves a pending node earlier and later, keeping its callback. */
static void test_reschedule_at(void) {
    fixture f;
    probe p[2];
    open_with_probes(&f, p, 2, 0, 8);
    CHECK_EQ(advance_to(&f, tick_at(&f, 10)), 0);
    CHECK_EQ(probe_schedule_at(&p[0], tick_at(&f, 4)), HWTIMER_OK); /* in the past */
    CHECK(hwtimer_next_expiry(f.t) <= f.clock);
    CHECK_EQ(advance_to(&f, f.clock), 1);
    CHECK_EQ(p[0].ran_at, tick_at(&f, 10));

    CHECK_EQ(probe_schedule_at(&p[1], tick_at(&f, 100)), HWTIMER_OK);
    CHECK_EQ(hwtimer_reschedule_at(f.t, &p[1].to, tick_at(&f, 30) - 1), HWTIMER_OK);
    CHECK_EQ(hwtimer_timeout_deadline(&p[1].to), tick_at(&f, 30) - 1);
    CHECK_EQ(hwtimer_reschedule_at(f.t, &p[1].to, tick_at(&f, 20) + 1), HWTIMER_OK);
    CHECK_EQ(hwtimer_pending(f.t), 1);
    CHECK_EQ(hwtimer_check(f.t), 0);
    CHECK_EQ(advance_to(&f, tick_at(&f, 20)), 0);
    CHECK_EQ(advance_to(&f, tick_at(&f, 21)), 1);
    CHECK_EQ(p[1].ran_at, tick_at(&f, 21));
    fixture_close(&f);
}

/* ---- no clock read ---------------------------------------------------------------------- */

/* The fixture's clock, counted. */
typedef struct counted_clock {
    fixture *f;
    unsigned reads; /* atomic: any thread may read the clock */
} counted_clock;

static uint64_t counted_clock_read(void *ctx) {
    counted_clock *c = (counted_clock *)ctx;
    ATOMIC_ADD(&c->reads, 1u);
    return test_fake_clock(&c->f->clock);
}

/* A fixture whose clock counts its reads (from 0 once created), with n probes. */
static void counted_fixture(fixture *f, counted_clock *c, uint64_t start, probe *p, size_t n) {
    hwtimer_config cfg;
    fixture_config(f, &cfg, start, MS, 8);
    c->f = f;
    c->reads = 0;
    cfg.clock_fn = counted_clock_read;
    cfg.clock_ctx = c;
    fixture_create(f, &cfg);
    probes_init(p, n, f);
    ATOMIC_SET(&c->reads, 0u);
}

/* Caller-driven (with this mode's threads or none), the _at forms never call clock_fn: not
   to arm, not to re-arm a cancelled node, not to move a pending one. The relative forms do,
   which shows the count works. */
static void test_no_clock_read(void) {
    fixture f;
    counted_clock c;
    probe p[3];
    counted_fixture(&f, &c, 5 * SEC, p, 3);
    CHECK_EQ(probe_schedule_at(&p[0], f.clock + 3 * MS), HWTIMER_OK);
    CHECK_EQ(hwtimer_schedule_periodic_at(f.t, &p[1].to, f.clock + 2 * MS, 4 * MS, probe_fn,
                                          &p[1]), HWTIMER_OK);
    CHECK_EQ(hwtimer_reschedule_at(f.t, &p[0].to, f.clock + 9 * DAY), HWTIMER_OK); /* moves */
    CHECK_EQ(hwtimer_reschedule_at(f.t, &p[0].to, f.clock + 1 * MS), HWTIMER_OK);
    CHECK_EQ(probe_cancel(&p[1]), 1);
    CHECK_EQ(hwtimer_reschedule_at(f.t, &p[1].to, f.clock + 6 * MS), HWTIMER_OK); /* re-arms */
    CHECK_EQ(ATOMIC_GET(&c.reads), 0);

    CHECK_EQ(probe_schedule(&p[2], MS), HWTIMER_OK);
    CHECK(ATOMIC_GET(&c.reads) > 0);
    CHECK_EQ(advance_to(&f, tick_at(&f, 1)), 2); /* p[0] and p[2] */
    CHECK_EQ(advance_to(&f, tick_at(&f, 6)), 1);
    fixture_close(&f);
}

/* A callback that arms its peer `delay` ticks from the timer's time (the pass's now). */
static void act_schedule_peer_ticks(probe *p) {
    p->result[0] = hwtimer_schedule_ticks(p->f->t, &p->peer[0]->to, p->delay, probe_fn,
                                          p->peer[0]);
}

/* hwtimer_schedule_ticks: its deadline is the timer's time + ticks * tick_ns, the time being
   S before any advance, then the now of the last one that was not a no-op (from a callback,
   of the pass under way); it reads no clock; past the last tick it clamps to UINT64_MAX;
   its errors are schedule's. */
static void test_schedule_ticks(void) {
    fixture f;
    counted_clock c;
    probe p[4];
    uint64_t tenths;
    counted_fixture(&f, &c, 5 * SEC + 300, p, 4);
    f.clock += 7 * MS; /* not advanced yet: the timer's time is S */
    CHECK_EQ(hwtimer_schedule_ticks(f.t, &p[0].to, 3, probe_fn, &p[0]), HWTIMER_OK);
    CHECK_EQ(hwtimer_timeout_deadline(&p[0].to), f.start + 3 * MS);
    CHECK_EQ(hwtimer_schedule_ticks(f.t, &p[0].to, 3, probe_fn, &p[0]), HWTIMER_EBUSY);
    CHECK_EQ(hwtimer_schedule_ticks(f.t, &p[1].to, 0, probe_fn, &p[1]), HWTIMER_OK); /* S */
    CHECK_EQ(hwtimer_schedule_ticks(NULL, &p[2].to, 1, probe_fn, &p[2]), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_schedule_ticks(f.t, NULL, 1, probe_fn, &p[2]), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_schedule_ticks(f.t, &p[2].to, 1, NULL, &p[2]), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_schedule_ticks(f.t, &p[2].to, UINT64_MAX, probe_fn, &p[2]), HWTIMER_OK);
    CHECK_EQ(hwtimer_timeout_deadline(&p[2].to), UINT64_MAX);
    CHECK_EQ(ATOMIC_GET(&c.reads), 0);
    /* a now between boundaries: the deadline counts from it, and runs at the boundary after */
    CHECK_EQ(advance_to(&f, f.start + 2 * MS + 500), 1); /* p[1] */
    CHECK_EQ(hwtimer_schedule_ticks(f.t, &p[1].to, 4, probe_fn, &p[1]), HWTIMER_OK);
    CHECK_EQ(hwtimer_timeout_deadline(&p[1].to), f.start + 6 * MS + 500);
    CHECK_EQ(advance_to(&f, tick_at(&f, 6)), 1); /* p[0] (at 3), not p[1] */
    CHECK_EQ(p[1].runs, 1);
    CHECK_EQ(advance_to(&f, tick_at(&f, 7)), 1);
    CHECK_EQ(p[1].runs, 2);
    CHECK_EQ(p[1].early, 0);
    /* from a callback: the now of the pass under way */
    p[0].action = act_schedule_peer_ticks;
    p[0].peer[0] = &p[3];
    p[0].delay = 2;
    CHECK_EQ(probe_schedule_at(&p[0], tick_at(&f, 9)), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, tick_at(&f, 10) + 1), 1);
    CHECK_EQ(p[0].result[0], HWTIMER_OK);
    CHECK_EQ(hwtimer_timeout_deadline(&p[3].to), tick_at(&f, 12) + 1);
    CHECK_EQ(advance_to(&f, tick_at(&f, 12)), 0);
    CHECK_EQ(advance_to(&f, tick_at(&f, 13)), 1);
    CHECK_EQ(p[3].early, 0);
    /* near the end of time, nows between boundaries: a deadline past UINT64_MAX is
       UINT64_MAX, never one that wrapped around (whichever fraction of a tick now has) */
    for (tenths = 19; tenths >= 11; tenths--) {
        uint64_t now = UINT64_MAX - tenths * (MS / 10), k;
        CHECK_EQ(advance_to(&f, now), 0);
        for (k = 1; k <= 3; k++) {
            CHECK_EQ(hwtimer_schedule_ticks(f.t, &p[1].to, k, probe_fn, &p[1]), HWTIMER_OK);
            CHECK_EQ(hwtimer_timeout_deadline(&p[1].to),
                     k * MS <= UINT64_MAX - now ? now + k * MS : UINT64_MAX);
            CHECK_EQ(probe_cancel(&p[1]), 1);
        }
    }
    CHECK_EQ(probe_cancel(&p[2]), 1);
    fixture_close(&f);
}

int main(void) {
    RUN_TEST(test_errors);
    RUN_TEST(test_errors_of_some_forms);
    RUN_TEST(test_fires_at_boundary);
    RUN_TEST(test_periodic_at_fixed_rate);
    RUN_TEST(test_reschedule_at);
    RUN_TEST(test_no_clock_read);
    RUN_TEST(test_schedule_ticks);
    return test_finish();
}
