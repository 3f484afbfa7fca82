/* test_retire.c - hwtimer_try_cancel and hwtimer_retire on one thread, on a fake clock, in
   every mode (their races with other threads: test_sync.c, the explorer):

   - try_cancel: 1 for a pending timeout, which then never runs; 0 for one not pending; from
     the timeout's own callback it is hwtimer_cancel (a periodic one is not re-armed);
     HWTIMER_EINVAL for a node pending on another timer, which it leaves pending;
   - retire: cancels (1 if pending, else 0, a node never scheduled too), the state is
     HWTIMER_RETIRED, and every arming then fails with HWTIMER_ERETIRED and changes nothing:
     each schedule and reschedule form, with and without a leeway, on this timer and on
     another, and from the node's own callback; hwtimer_timeout_init makes it usable again;
   - retire from a periodic timeout's own callback: not re-armed, and the callback's own
     re-arming after it is refused;
   - a node pending on another timer is not retired (HWTIMER_EINVAL, nothing changes);
   - hwtimer_retire and hwtimer_try_cancel count exactly: hwtimer_pending and hwtimer_check
     after each. */
#include "harness.h"
#include "fixture.h"
#include "probe.h"

/* Every arming form on t, each of which must be refused as retired. */
static void check_every_arming_refused(hwtimer *t, probe *p) {
    snapshot before = take_snapshot(t, &p->to);
    CHECK_EQ(hwtimer_schedule(t, &p->to, MS, probe_fn, p), HWTIMER_ERETIRED);
    CHECK_EQ(hwtimer_schedule_at(t, &p->to, 5 * MS, probe_fn, p), HWTIMER_ERETIRED);
    CHECK_EQ(hwtimer_schedule_ticks(t, &p->to, 3, probe_fn, p), HWTIMER_ERETIRED);
    CHECK_EQ(hwtimer_schedule_periodic(t, &p->to, MS, MS, probe_fn, p), HWTIMER_ERETIRED);
    CHECK_EQ(hwtimer_schedule_periodic_at(t, &p->to, MS, MS, probe_fn, p), HWTIMER_ERETIRED);
    CHECK_EQ(hwtimer_reschedule(t, &p->to, MS), HWTIMER_ERETIRED);
    CHECK_EQ(hwtimer_reschedule_at(t, &p->to, 7 * MS), HWTIMER_ERETIRED);
    CHECK_UNCHANGED(before, t, &p->to);
    CHECK_EQ(hwtimer_timeout_state(&p->to), HWTIMER_RETIRED);
    CHECK_EQ(hwtimer_is_pending(t, &p->to), 0);
}

static void test_try_cancel(void) {
    fixture f, g;
    probe p[2];
    open_with_probes(&f, p, 2, 0, 64);
    fixture_open(&g, 0, MS, 64);
    CHECK_EQ(hwtimer_try_cancel(f.t, &p[0].to), 0); /* never scheduled */
    CHECK_EQ(probe_schedule(&p[0], 3 * MS), HWTIMER_OK);
    CHECK_EQ(probe_schedule(&p[1], 3 * MS), HWTIMER_OK);
    CHECK_EQ(hwtimer_try_cancel(f.t, &p[0].to), 1);
    CHECK_EQ(hwtimer_timeout_state(&p[0].to), HWTIMER_CANCELLED);
    CHECK_EQ(hwtimer_try_cancel(f.t, &p[0].to), 0); /* not pending any more */
    CHECK_EQ(hwtimer_pending(f.t), 1);
    CHECK_EQ(hwtimer_check(f.t), 0);
    /* pending on f: another timer's try_cancel refuses it and leaves it pending */
    CHECK_EQ(hwtimer_try_cancel(g.t, &p[1].to), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_is_pending(f.t, &p[1].to), 1);
    CHECK_EQ(advance_to(&f, 10 * MS), 1);
    CHECK_EQ(p[0].runs, 0);
    CHECK_EQ(p[1].runs, 1);
    CHECK_EQ(hwtimer_try_cancel(f.t, &p[1].to), 0); /* ran */
    fixture_close(&g);
    fixture_close(&f);
}

/* Advances one tick at a time up to `ms` (a periodic timeout runs once per advance). */
static void advance_by_ticks(fixture *f, uint64_t ms) {
    uint64_t k;
    for (k = 1; k <= ms; k++) advance_to(f, k * MS);
}

/* A periodic callback that try-cancels itself on its second run: 1, and no third run. */
static void try_cancel_self_second_run(probe *p) {
    if (p->runs == 2) p->result[0] = hwtimer_try_cancel(p->f->t, &p->to);
}

/* A periodic probe every tick whose callback runs `action`, advanced over 10 ticks: it must
   have run twice, its action's first call returned 1, and nothing is pending. */
static void run_periodic_twice(fixture *f, probe *p, probe_action action) {
    open_with_probe(f, p, 64, action);
    CHECK_EQ(probe_schedule_periodic(p, MS, MS), HWTIMER_OK);
    advance_by_ticks(f, 10);
    CHECK_EQ(p->runs, 2);
    CHECK_EQ(p->result[0], 1);
    CHECK_EQ(hwtimer_pending(f->t), 0);
}

static void test_try_cancel_own_callback(void) {
    fixture f;
    probe p;
    run_periodic_twice(&f, &p, try_cancel_self_second_run);
    fixture_close(&f);
}

static void test_retire_refuses_every_arming(void) {
    fixture f, g;
    probe p[3];
    open_with_probes(&f, p, 3, 0, 64);
    fixture_open(&g, 0, MS, 64);
    /* never scheduled: 0, and retired */
    CHECK_EQ(hwtimer_retire(f.t, &p[0].to), 0);
    check_every_arming_refused(f.t, &p[0]);
    check_every_arming_refused(g.t, &p[0]);
    /* pending: 1, it never runs, and it is refused from then on */
    CHECK_EQ(probe_schedule_at(&p[1], 4 * MS), HWTIMER_OK);
    CHECK_EQ(hwtimer_retire(f.t, &p[1].to), 1);
    CHECK_EQ(hwtimer_pending(f.t), 0);
    CHECK_EQ(hwtimer_check(f.t), 0);
    check_every_arming_refused(f.t, &p[1]);
    CHECK_EQ(hwtimer_retire(f.t, &p[1].to), 0); /* twice: still retired */
    CHECK_EQ(hwtimer_timeout_state(&p[1].to), HWTIMER_RETIRED);
    /* with a leeway (the inline arming tests the state and the leeway together) */
    CHECK_EQ(hwtimer_timeout_set_leeway(&p[2].to, 8 * MS), HWTIMER_OK);
    CHECK_EQ(probe_schedule(&p[2], 20 * MS), HWTIMER_OK);
    CHECK_EQ(hwtimer_cancel(f.t, &p[2].to), 1);
    CHECK_EQ(hwtimer_retire(f.t, &p[2].to), 0);
    check_every_arming_refused(f.t, &p[2]);
    CHECK_EQ(advance_to(&f, 100 * MS), 0);
    CHECK_EQ(probe_runs(p, 3), 0);
    /* hwtimer_timeout_init makes a retired node usable again */
    hwtimer_timeout_init(&p[1].to);
    CHECK_EQ(hwtimer_timeout_state(&p[1].to), HWTIMER_IDLE);
    CHECK_EQ(probe_schedule(&p[1], MS), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, 101 * MS), 1);
    CHECK_EQ(p[1].runs, 1);
    fixture_close(&g);
    fixture_close(&f);
}

/* A periodic callback that retires itself on its second run, then tries to arm itself. */
static void retire_self_second_run(probe *p) {
    if (p->runs != 2) return;
    p->result[0] = hwtimer_retire(p->f->t, &p->to);
    p->result[1] = hwtimer_reschedule(p->f->t, &p->to, MS);
    p->result[2] = hwtimer_schedule(p->f->t, &p->to, MS, probe_fn, p);
}

static void test_retire_own_periodic_callback(void) {
    fixture f;
    probe p;
    run_periodic_twice(&f, &p, retire_self_second_run);
    CHECK_EQ(p.result[1], HWTIMER_ERETIRED);
    CHECK_EQ(p.result[2], HWTIMER_ERETIRED);
    CHECK_EQ(hwtimer_timeout_state(&p.to), HWTIMER_RETIRED);
    advance_by_ticks(&f, 20);
    CHECK_EQ(p.runs, 2);
    fixture_close(&f);
}

/* A one-shot callback that re-arms itself, then retires itself: 1 (the re-arming). */
static void rearm_then_retire(probe *p) {
    if (p->runs != 1) return;
    p->result[0] = hwtimer_schedule(p->f->t, &p->to, MS, probe_fn, p);
    p->result[1] = hwtimer_retire(p->f->t, &p->to);
}

static void test_retire_own_one_shot_callback(void) {
    fixture f;
    probe p;
    open_with_probe(&f, &p, 64, rearm_then_retire);
    CHECK_EQ(probe_schedule(&p, MS), HWTIMER_OK);
    advance_to(&f, 10 * MS);
    CHECK_EQ(p.runs, 1);
    CHECK_EQ(p.result[0], HWTIMER_OK);
    CHECK_EQ(p.result[1], 1);
    CHECK_EQ(hwtimer_pending(f.t), 0);
    CHECK_EQ(hwtimer_timeout_state(&p.to), HWTIMER_RETIRED);
    fixture_close(&f);
}

static void test_retire_pending_elsewhere(void) {
    fixture f, g;
    probe p;
    open_with_probes(&f, &p, 1, 0, 64);
    fixture_open(&g, 0, MS, 64);
    CHECK_EQ(probe_schedule(&p, 5 * MS), HWTIMER_OK);
    {
        snapshot before = take_snapshot(f.t, &p.to);
        CHECK_EQ(hwtimer_retire(g.t, &p.to), HWTIMER_EINVAL);
        CHECK_UNCHANGED(before, f.t, &p.to);
    }
    CHECK_EQ(hwtimer_timeout_state(&p.to), HWTIMER_PENDING);
    CHECK_EQ(advance_to(&f, 10 * MS), 1);
    fixture_close(&g);
    fixture_close(&f);
}

int main(void) {
    RUN_TEST(test_try_cancel);
    RUN_TEST(test_try_cancel_own_callback);
    RUN_TEST(test_retire_refuses_every_arming);
    RUN_TEST(test_retire_own_periodic_callback);
    RUN_TEST(test_retire_own_one_shot_callback);
    RUN_TEST(test_retire_pending_elsewhere);
    return test_finish();
}
