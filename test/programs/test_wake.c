/* test_wake.c - cfg.wake_fn on a fake clock, caller-driven: when the timer calls it and when
   not, as hwtimer.h documents at hwtimer_config.wake_fn ("Waking the loop"). The loop's
   answer is hwtimer_next_expiry or hwtimer_poll_timeout_ms; a scheduling (any form) whose
   boundary is earlier than the answer, or any scheduling after an answer that said nothing
   was pending, calls wake_fn, at most once per answer, never from inside advance, with no
   lock held. test_wake_threads.c has the cross-thread and worker cases. */
#include "harness.h"
#include "fixture.h"
#include "probe.h"

typedef struct waker {
    unsigned calls; /* atomic */
    hwtimer *t;
    int reenter;           /* call the timer back from wake_fn */
    size_t pending_seen;   /* hwtimer_pending from inside wake_fn */
    uint64_t expiry_seen;  /* hwtimer_next_expiry from inside wake_fn */
} waker;

static void note_wake(void *ctx) {
    waker *w = (waker *)ctx;
    ATOMIC_ADD(&w->calls, 1u);
    if (w->reenter) { /* with the timer's lock held, these would never return */
        w->pending_seen = hwtimer_pending(w->t);
        w->expiry_seen = hwtimer_next_expiry(w->t);
    }
}

/* A fixture (1 ms tick, S = 0) whose timer calls note_wake(w), with n probes. */
static void open_with_waker(fixture *f, waker *w, probe *p, size_t n) {
    hwtimer_config cfg;
    memset(w, 0, sizeof *w);
    fixture_config(f, &cfg, 0, MS, 64);
    cfg.wake_fn = note_wake;
    cfg.wake_ctx = w;
    fixture_create(f, &cfg);
    w->t = f->t;
    probes_init(p, n, f);
}

static unsigned wakes(const waker *w) {
    return ATOMIC_GET(&w->calls);
}

/* Before the loop's first answer the timer has told it nothing, so nothing needs waking. */
static void test_not_before_first_answer(void) {
    fixture f;
    waker w;
    probe p[3];
    open_with_waker(&f, &w, p, 3);
    CHECK_EQ(probe_schedule(&p[0], 50 * MS), HWTIMER_OK);
    CHECK_EQ(probe_schedule_at(&p[1], 20 * MS), HWTIMER_OK);
    CHECK_EQ(hwtimer_reschedule(f.t, &p[0].to, MS), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, tick_at(&f, 1)), 1); /* advance is no answer */
    CHECK_EQ(probe_schedule(&p[2], MS), HWTIMER_OK);
    CHECK_EQ(wakes(&w), 0);
    fixture_close(&f);
}

/* An answer that nothing was pending (next_expiry UINT64_MAX, poll_timeout_ms -1): the first
   scheduling after it wakes the loop, however far; a second does not. */
static void test_after_nothing_pending(void) {
    fixture f;
    waker w;
    probe p[3];
    open_with_waker(&f, &w, p, 3);
    CHECK_EQ(hwtimer_next_expiry(f.t), UINT64_MAX);
    CHECK_EQ(probe_schedule(&p[0], 10 * YEAR), HWTIMER_OK);
    CHECK_EQ(wakes(&w), 1);
    CHECK_EQ(probe_schedule(&p[1], MS), HWTIMER_OK); /* earlier, but the same answer */
    CHECK_EQ(wakes(&w), 1);

    CHECK_EQ(probe_cancel(&p[0]), 1);
    CHECK_EQ(probe_cancel(&p[1]), 1);
    CHECK_EQ(hwtimer_poll_timeout_ms(f.t), -1);
    CHECK_EQ(hwtimer_schedule_periodic_at(f.t, &p[2].to, HOUR, HOUR, probe_fn, &p[2]),
             HWTIMER_OK);
    CHECK_EQ(wakes(&w), 2);
    fixture_close(&f);
}

/* ---- every scheduling form, against an answer ------------------------------------------- */

/* Schedules p with deadline d by one form. */
typedef int (*arm_form)(probe *p, uint64_t d);

static int by_schedule(probe *p, uint64_t d) {
    return probe_schedule(p, d - p->f->clock);
}
static int by_schedule_at(probe *p, uint64_t d) {
    return probe_schedule_at(p, d);
}
static int by_periodic(probe *p, uint64_t d) {
    return probe_schedule_periodic(p, d - p->f->clock, HOUR);
}
static int by_periodic_at(probe *p, uint64_t d) {
    return hwtimer_schedule_periodic_at(p->f->t, &p->to, d, HOUR, probe_fn, p);
}
static int by_reschedule(probe *p, uint64_t d) {
    return hwtimer_reschedule(p->f->t, &p->to, d - p->f->clock);
}
static int by_reschedule_at(probe *p, uint64_t d) {
    return hwtimer_reschedule_at(p->f->t, &p->to, d);
}

static const arm_form forms[] = {by_schedule, by_schedule_at, by_periodic, by_periodic_at,
                                 by_reschedule, by_reschedule_at};
enum { FORMS = sizeof forms / sizeof forms[0] };

/* One form against an answer of 50 ms (a probe pending there): a boundary later than or
   equal to the answer does not wake; the first earlier one does, once; a second earlier one
   before a new answer does not. The reschedule forms move a pending node (the first probe)
   and re-arm one that ran. */
static void check_form(arm_form arm, int use_poll_timeout) {
    fixture f;
    waker w;
    probe p[4];
    open_with_waker(&f, &w, p, 4);
    CHECK_EQ(probe_schedule(&p[3], 50 * MS), HWTIMER_OK); /* what the loop is told */
    if (arm == by_reschedule || arm == by_reschedule_at) {
        CHECK_EQ(probe_schedule(&p[0], 80 * MS), HWTIMER_OK); /* moved while pending */
        CHECK_EQ(probe_schedule(&p[1], 49 * MS), HWTIMER_OK); /* re-armed once it ran */
        CHECK_EQ(probe_cancel(&p[1]), 1);
        CHECK_EQ(probe_schedule(&p[2], 80 * MS), HWTIMER_OK);
    }
    if (use_poll_timeout) {
        CHECK_EQ(hwtimer_poll_timeout_ms(f.t), 50);
    } else {
        CHECK_EQ(hwtimer_next_expiry(f.t), 50 * MS);
    }
    if (arm == by_reschedule || arm == by_reschedule_at) {
        CHECK_EQ(arm(&p[0], 70 * MS), HWTIMER_OK);           /* later */
        CHECK_EQ(arm(&p[0], 49 * MS + MS / 2), HWTIMER_OK);  /* boundary 50: equal */
        CHECK_EQ(wakes(&w), 0);
        CHECK_EQ(arm(&p[0], 20 * MS), HWTIMER_OK);           /* earlier */
        CHECK_EQ(wakes(&w), 1);
        CHECK_EQ(arm(&p[1], 10 * MS), HWTIMER_OK);           /* earlier again, same answer */
        CHECK_EQ(arm(&p[2], 5 * MS), HWTIMER_OK);
        CHECK_EQ(wakes(&w), 1);
    } else {
        CHECK_EQ(arm(&p[0], 70 * MS), HWTIMER_OK);
        CHECK_EQ(arm(&p[1], 49 * MS + MS / 2), HWTIMER_OK);
        CHECK_EQ(wakes(&w), 0);
        CHECK_EQ(arm(&p[2], 20 * MS), HWTIMER_OK);
        CHECK_EQ(wakes(&w), 1);
        CHECK_EQ(probe_cancel(&p[2]), 1);
        CHECK_EQ(arm(&p[2], 10 * MS), HWTIMER_OK);
        CHECK_EQ(wakes(&w), 1);
    }
    /* a new answer (5 or 10 ms): earlier than that wakes again */
    (void)hwtimer_next_expiry(f.t);
    CHECK_EQ(probe_cancel(&p[3]), 1);
    CHECK_EQ(arm(&p[3], 2 * MS), HWTIMER_OK);
    CHECK_EQ(wakes(&w), 2);
    CHECK_EQ(hwtimer_check(f.t), 0);
    fixture_close(&f);
}

static void test_each_form_next_expiry(void) {
    size_t i;
    for (i = 0; i < FORMS; i++) check_form(forms[i], 0);
}

static void test_each_form_poll_timeout(void) {
    size_t i;
    for (i = 0; i < FORMS; i++) check_form(forms[i], 1);
}

/* ---- never from inside advance ---------------------------------------------------------- */

/* Schedules its peer with a deadline already passed (boundary 1 ms) and moves its second
   peer to 2 ms: both earlier than the answer of 5 ms. */
static void act_schedule_earlier(probe *p) {
    p->result[0] = probe_schedule_at(p->peer[0], MS);
    p->result[1] = hwtimer_reschedule_at(p->f->t, &p->peer[1]->to, 2 * MS);
}

static void test_not_from_advance(void) {
    fixture f;
    waker w;
    probe p[3];
    open_with_waker(&f, &w, p, 3);
    p[0].action = act_schedule_earlier;
    p[0].peer[0] = &p[1];
    p[0].peer[1] = &p[2];
    CHECK_EQ(probe_schedule(&p[0], 5 * MS), HWTIMER_OK);
    CHECK_EQ(probe_schedule(&p[2], 100 * MS), HWTIMER_OK);
    CHECK_EQ(hwtimer_next_expiry(f.t), 5 * MS);
    CHECK_EQ(advance_to(&f, tick_at(&f, 5)), 1);
    CHECK_EQ(p[0].result[0], HWTIMER_OK);
    CHECK_EQ(p[0].result[1], HWTIMER_OK);
    CHECK_EQ(wakes(&w), 0); /* the loop asks again when advance returns */
    CHECK(hwtimer_next_expiry(f.t) <= f.clock);
    CHECK_EQ(advance_to(&f, tick_at(&f, 6)), 2);
    CHECK_EQ(wakes(&w), 0);
    fixture_close(&f);
}

/* A cancel never wakes the loop (it wakes for nothing, and asks again). */
static void test_cancel_never_wakes(void) {
    fixture f;
    waker w;
    probe p[2];
    open_with_waker(&f, &w, p, 2);
    CHECK_EQ(probe_schedule(&p[0], 5 * MS), HWTIMER_OK);
    CHECK_EQ(probe_schedule(&p[1], 50 * MS), HWTIMER_OK);
    CHECK_EQ(hwtimer_next_expiry(f.t), 5 * MS);
    CHECK_EQ(probe_cancel(&p[0]), 1);
    CHECK_EQ(probe_cancel(&p[1]), 1);
    CHECK_EQ(wakes(&w), 0);
    fixture_close(&f);
}

/* ---- no lock held ------------------------------------------------------------------------ */

/* wake_fn may call the timer: it runs with no lock of the timer held (with threads a held
   lock would make these calls hang), and sees the scheduling that woke it. */
static void test_wake_fn_may_call_timer(void) {
    fixture f;
    waker w;
    probe p[2];
    open_with_waker(&f, &w, p, 2);
    w.reenter = 1;
    CHECK_EQ(probe_schedule(&p[0], 50 * MS), HWTIMER_OK);
    CHECK_EQ(hwtimer_next_expiry(f.t), 50 * MS);
    CHECK_EQ(probe_schedule(&p[1], 7 * MS + 1), HWTIMER_OK);
    CHECK_EQ(wakes(&w), 1);
    CHECK_EQ(w.pending_seen, 2);
    CHECK_EQ(w.expiry_seen, 8 * MS);
    fixture_close(&f);
}

int main(void) {
    RUN_TEST(test_not_before_first_answer);
    RUN_TEST(test_after_nothing_pending);
    RUN_TEST(test_each_form_next_expiry);
    RUN_TEST(test_each_form_poll_timeout);
    RUN_TEST(test_not_from_advance);
    RUN_TEST(test_cancel_never_wakes);
    RUN_TEST(test_wake_fn_may_call_timer);
    return test_finish();
}
