/* test_schedule.c - schedule, cancel and reschedule of one-shot timeouts, their states,
   the pending count and max_pending, a node that moves between timers (and is refused by
   the one it is not pending on), and nodes freed right after cancel. */
#include "harness.h"
#include "fixture.h"
#include "probe.h"

/* Scheduling a pending timeout is EBUSY and changes nothing at all. */
static void test_schedule_pending_is_busy(void) {
    fixture f;
    probe p;
    int other_arg = 0;
    open_with_probes(&f, &p, 1, 2 * MS + 9, 8);
    other_fn_runs = 0;
    CHECK_EQ(probe_schedule(&p, 5 * MS), HWTIMER_OK);
    CHECK_EQ(hwtimer_schedule(f.t, &p.to, MS, other_fn, &other_arg), HWTIMER_EBUSY);
    CHECK_EQ(hwtimer_schedule_at(f.t, &p.to, f.clock, other_fn, &other_arg), HWTIMER_EBUSY);
    CHECK_EQ(hwtimer_schedule_periodic(f.t, &p.to, MS, MS, other_fn, &other_arg),
             HWTIMER_EBUSY);
    CHECK_EQ(hwtimer_timeout_deadline(&p.to), f.start + 5 * MS);
    CHECK_EQ(hwtimer_timeout_state(&p.to), HWTIMER_PENDING);
    CHECK_EQ(hwtimer_pending(f.t), 1);
    CHECK_EQ(advance_to(&f, tick_at(&f, 4)), 0);
    CHECK_EQ(advance_to(&f, tick_at(&f, 5)), 1);
    CHECK_EQ(other_fn_runs, 0);
    CHECK_EQ(p.runs, 1);
    CHECK_EQ(p.ran_at, tick_at(&f, 5));
    CHECK_EQ(advance_to(&f, tick_at(&f, 50)), 0); /* one-shot: once */
    CHECK_EQ(p.runs, 1);
    fixture_close(&f);
}

static void test_cancel(void) {
    fixture f;
    probe p[3];
    open_with_probes(&f, p, 3, 6 * MS, 8);
    CHECK_EQ(probe_cancel(&p[0]), 0); /* never scheduled */
    CHECK_EQ(probe_schedule(&p[0], 2 * MS), HWTIMER_OK);
    CHECK_EQ(probe_schedule(&p[1], 2 * MS), HWTIMER_OK);
    CHECK_EQ(probe_schedule(&p[2], 4 * MS), HWTIMER_OK);
    CHECK_EQ(hwtimer_pending(f.t), 3);
    CHECK_EQ(probe_cancel(&p[0]), 1);
    CHECK_EQ(hwtimer_timeout_state(&p[0].to), HWTIMER_CANCELLED);
    CHECK_EQ(hwtimer_pending(f.t), 2);
    CHECK_EQ(probe_cancel(&p[0]), 0);
    CHECK_EQ(hwtimer_pending(f.t), 2);
    CHECK_EQ(advance_to(&f, tick_at(&f, 2)), 1);
    CHECK_EQ(p[0].runs, 0);
    CHECK_EQ(p[1].runs, 1);
    CHECK_EQ(probe_cancel(&p[1]), 0); /* already ran */
    CHECK_EQ(hwtimer_timeout_state(&p[1].to), HWTIMER_EXPIRED);
    CHECK_EQ(probe_cancel(&p[2]), 1);
    CHECK_EQ(hwtimer_pending(f.t), 0);
    CHECK_EQ(hwtimer_next_expiry(f.t), UINT64_MAX);
    CHECK_EQ(advance_to(&f, tick_at(&f, 100)), 0);
    CHECK_EQ(p[2].runs, 0);
    /* a cancelled node can be scheduled again */
    CHECK_EQ(probe_schedule(&p[0], MS), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, tick_at(&f, 101)), 1);
    CHECK_EQ(p[0].runs, 1);
    fixture_close(&f);
}

/* A pending timeout moves to N + d (later or earlier), keeps its callback, fires once. */
static void test_reschedule_pending(void) {
    fixture f;
    probe p[2];
    open_with_probes(&f, p, 2, 8 * MS, 4);
    CHECK_EQ(probe_schedule(&p[0], 10 * MS), HWTIMER_OK);
    CHECK_EQ(probe_schedule(&p[1], 50 * MS), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, tick_at(&f, 3)), 0);
    CHECK_EQ(hwtimer_reschedule(f.t, &p[0].to, 10 * MS), HWTIMER_OK); /* later */
    CHECK_EQ(hwtimer_reschedule(f.t, &p[1].to, 2 * MS), HWTIMER_OK);  /* earlier */
    CHECK_EQ(hwtimer_timeout_deadline(&p[0].to), tick_at(&f, 13));
    CHECK_EQ(hwtimer_timeout_deadline(&p[1].to), tick_at(&f, 5));
    CHECK_EQ(hwtimer_pending(f.t), 2);
    CHECK_EQ(hwtimer_timeout_state(&p[0].to), HWTIMER_PENDING);
    CHECK_EQ(advance_to(&f, tick_at(&f, 4)), 0);
    CHECK_EQ(advance_to(&f, tick_at(&f, 5)), 1);
    CHECK_EQ(p[1].ran_at, tick_at(&f, 5));
    CHECK_EQ(advance_to(&f, tick_at(&f, 12)), 0); /* the old deadline 10 passed unnoticed */
    CHECK_EQ(advance_to(&f, tick_at(&f, 13)), 1);
    CHECK_EQ(p[0].ran_at, tick_at(&f, 13));
    CHECK_EQ(advance_to(&f, tick_at(&f, 60)), 0); /* p[1]'s old deadline 50 too */
    CHECK_EQ(p[0].runs + p[1].runs, 2);
    fixture_close(&f);
}

/* A timeout that is not pending (run, cancelled) is scheduled again with its last
   callback and argument; one never scheduled is EINVAL. */
static void test_reschedule_not_pending(void) {
    fixture f;
    probe p;
    hwtimer_timeout fresh = HWTIMER_TIMEOUT_INIT;
    open_with_probes(&f, &p, 1, 8 * MS, 4);
    other_fn_runs = 0;
    CHECK_EQ(hwtimer_reschedule(f.t, &fresh, MS), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_timeout_state(&fresh), HWTIMER_IDLE);

    CHECK_EQ(probe_schedule(&p, MS), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, tick_at(&f, 1)), 1);
    CHECK_EQ(hwtimer_reschedule(f.t, &p.to, 3 * MS), HWTIMER_OK);
    CHECK_EQ(hwtimer_timeout_state(&p.to), HWTIMER_PENDING);
    CHECK_EQ(hwtimer_pending(f.t), 1);
    CHECK_EQ(advance_to(&f, tick_at(&f, 3)), 0);
    CHECK_EQ(advance_to(&f, tick_at(&f, 4)), 1);
    CHECK_EQ(p.runs, 2); /* probe_fn with the probe as argument, as at first */

    CHECK_EQ(probe_schedule(&p, 5 * MS), HWTIMER_OK);
    CHECK_EQ(probe_cancel(&p), 1);
    CHECK_EQ(hwtimer_reschedule(f.t, &p.to, 2 * MS), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, tick_at(&f, 6)), 1);
    CHECK_EQ(p.runs, 3);
    CHECK_EQ(p.ran_at, tick_at(&f, 6));
    CHECK_EQ(other_fn_runs, 0);
    fixture_close(&f);
}

static void test_states(void) {
    fixture f;
    probe p;
    open_with_probe(&f, &p, 8, NULL);
    CHECK_EQ(hwtimer_timeout_state(&p.to), HWTIMER_IDLE);
    CHECK_EQ(probe_schedule(&p, MS), HWTIMER_OK);
    CHECK_EQ(hwtimer_timeout_state(&p.to), HWTIMER_PENDING);
    CHECK_EQ(advance_to(&f, tick_at(&f, 1)), 1);
    CHECK_EQ(p.state_seen, HWTIMER_EXPIRED); /* set before the callback is called */
    CHECK_EQ(p.deadline_seen, tick_at(&f, 1));
    CHECK_EQ(hwtimer_timeout_state(&p.to), HWTIMER_EXPIRED);
    CHECK_EQ(hwtimer_timeout_deadline(&p.to), tick_at(&f, 1));
    CHECK_EQ(probe_schedule(&p, 3 * MS), HWTIMER_OK);
    CHECK_EQ(hwtimer_timeout_state(&p.to), HWTIMER_PENDING);
    CHECK_EQ(hwtimer_timeout_deadline(&p.to), tick_at(&f, 4));
    CHECK_EQ(probe_cancel(&p), 1);
    CHECK_EQ(hwtimer_timeout_state(&p.to), HWTIMER_CANCELLED);
    CHECK_EQ(hwtimer_timeout_deadline(&p.to), tick_at(&f, 4));
    fixture_close(&f);
}

static void test_pending_counts(void) {
    enum { N = 100 };
    fixture f;
    probe p[N];
    size_t i;
    open_with_probes(&f, p, N, 0, 8);
    for (i = 0; i < N; i++) {
        CHECK_EQ(probe_schedule(&p[i], (i + 1) * MS), HWTIMER_OK);
        CHECK_EQ(hwtimer_pending(f.t), i + 1);
    }
    for (i = 0; i < N; i += 3) {
        CHECK_EQ(probe_cancel(&p[i]), 1); /* 34 cancelled: 0, 3, ..., 99 */
    }
    CHECK_EQ(hwtimer_pending(f.t), N - 34);
    CHECK_EQ(advance_to(&f, tick_at(&f, 50)), 50 - 17);
    CHECK_EQ(hwtimer_pending(f.t), N - 34 - 33);
    CHECK_EQ(advance_to(&f, tick_at(&f, N)), 33);
    CHECK_EQ(hwtimer_pending(f.t), 0);

    /* inside callbacks: a running one-shot is no longer pending */
    probes_init(p, 3, &f);
    for (i = 0; i < 3; i++) {
        p[i].action = act_note_pending;
        CHECK_EQ(probe_schedule(&p[i], MS), HWTIMER_OK);
    }
    CHECK_EQ(advance_to(&f, tick_at(&f, N + 1)), 3);
    CHECK_EQ(p[0].pending_seen[0] + p[1].pending_seen[0] + p[2].pending_seen[0], 2 + 1 + 0);
    fixture_close(&f);
}

static void test_max_pending(void) {
    fixture f;
    probe p[4];
    fixture_open_limited(&f, 0, MS, 8, 2);
    probes_init(p, 4, &f);
    CHECK_EQ(probe_schedule(&p[0], 5 * MS), HWTIMER_OK);
    CHECK_EQ(probe_schedule_periodic(&p[1], MS, MS), HWTIMER_OK);
    CHECK_EQ(probe_schedule(&p[2], MS), HWTIMER_EFULL);
    CHECK_EQ(hwtimer_schedule_at(f.t, &p[2].to, MS, probe_fn, &p[2]), HWTIMER_EFULL);
    CHECK_EQ(probe_schedule_periodic(&p[2], MS, MS), HWTIMER_EFULL);
    CHECK_EQ(hwtimer_timeout_state(&p[2].to), HWTIMER_IDLE);
    CHECK_EQ(hwtimer_pending(f.t), 2);
    CHECK_EQ(advance_to(&f, tick_at(&f, 3)), 1); /* the periodic keeps its place */
    CHECK_EQ(probe_schedule(&p[2], MS), HWTIMER_EFULL);
    CHECK_EQ(probe_cancel(&p[0]), 1);
    CHECK_EQ(probe_schedule(&p[2], MS), HWTIMER_OK); /* at once after a cancel */
    CHECK_EQ(probe_schedule(&p[3], MS), HWTIMER_EFULL);
    CHECK_EQ(advance_to(&f, tick_at(&f, 4)), 2);
    CHECK_EQ(probe_schedule(&p[3], MS), HWTIMER_OK); /* at once after a fire */
    CHECK_EQ(probe_cancel(&p[1]), 1);
    CHECK_EQ(probe_cancel(&p[3]), 1);
    CHECK_EQ(hwtimer_pending(f.t), 0);
    fixture_close(&f);
}

/* With a single place, a callback re-arms itself, or schedules another, at once: a
   fired one-shot no longer holds its place while its callback runs. */
static void test_max_pending_one(void) {
    fixture f;
    probe p[3];
    fixture_open_limited(&f, 0, MS, 8, 1);
    probes_init(p, 3, &f);
    p[0].action = act_rearm;
    p[0].delay = MS;
    p[0].repeats = 1;
    CHECK_EQ(probe_schedule(&p[0], MS), HWTIMER_OK);
    CHECK_EQ(probe_schedule(&p[1], MS), HWTIMER_EFULL);
    CHECK_EQ(advance_to(&f, tick_at(&f, 1)), 1);
    CHECK_EQ(p[0].result[0], HWTIMER_OK);
    CHECK_EQ(hwtimer_pending(f.t), 1);
    CHECK_EQ(probe_cancel(&p[0]), 1);

    p[2].action = act_schedule_peer;
    p[2].peer[0] = &p[1];
    p[2].delay = MS;
    CHECK_EQ(probe_schedule(&p[2], 2 * MS), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, tick_at(&f, 3)), 1);
    CHECK_EQ(p[2].result[0], HWTIMER_OK);
    CHECK_EQ(hwtimer_pending(f.t), 1);
    CHECK_EQ(advance_to(&f, tick_at(&f, 4)), 1);
    CHECK_EQ(p[1].runs, 1);
    CHECK_EQ(hwtimer_pending(f.t), 0);
    fixture_close(&f);
}

static void test_node_moves_between_timers(void) {
    fixture a, b;
    probe p;
    fixture_open(&a, 0, MS, 8);
    fixture_open(&b, 5 * MS, 2 * MS, 16);
    probe_init(&p, &a, 0);
    CHECK_EQ(hwtimer_schedule(a.t, &p.to, MS, probe_fn, &p), HWTIMER_OK);
    CHECK_EQ(hwtimer_schedule(b.t, &p.to, MS, probe_fn, &p), HWTIMER_EBUSY);
    CHECK_EQ(hwtimer_cancel(b.t, &p.to), HWTIMER_EINVAL); /* pending on the other one */
    CHECK_EQ(hwtimer_pending(a.t), 1);
    CHECK_EQ(hwtimer_pending(b.t), 0);
    CHECK_EQ(advance_to(&a, tick_at(&a, 1)), 1);

    p.f = &b;
    CHECK_EQ(hwtimer_schedule(b.t, &p.to, 3 * MS, probe_fn, &p), HWTIMER_OK);
    CHECK_EQ(hwtimer_cancel(a.t, &p.to), HWTIMER_EINVAL);
    CHECK_EQ(hwtimer_pending(a.t), 0);
    CHECK_EQ(hwtimer_pending(b.t), 1);
    CHECK_EQ(advance_to(&a, tick_at(&a, 100)), 0);
    CHECK_EQ(advance_to(&b, tick_at(&b, 1)), 0);
    CHECK_EQ(advance_to(&b, tick_at(&b, 2)), 1); /* b's boundaries: 5, 7, 9 ms */
    CHECK_EQ(p.ran_at, tick_at(&b, 2));
    CHECK_EQ(p.runs, 2);

    /* after a cancel on b it can go back to a */
    CHECK_EQ(hwtimer_schedule(b.t, &p.to, MS, probe_fn, &p), HWTIMER_OK);
    CHECK_EQ(hwtimer_cancel(b.t, &p.to), 1);
    p.f = &a;
    CHECK_EQ(hwtimer_schedule(a.t, &p.to, MS, probe_fn, &p), HWTIMER_OK);
    CHECK_EQ(advance_to(&b, tick_at(&b, 100)), 0);
    CHECK_EQ(advance_to(&a, tick_at(&a, 101)), 1);
    CHECK_EQ(p.runs, 3);
    fixture_close(&a);
    fixture_close(&b);
}

/* Pending on a: b refuses it with EBUSY (schedule) and EINVAL (cancel), and nothing on
   either timer changes. */
static void check_refused_elsewhere(fixture *a, fixture *b, probe *n) {
    snapshot on_a = take_snapshot(a->t, &n->to), on_b = take_snapshot(b->t, &n->to);
    CHECK_EQ(hwtimer_schedule(b->t, &n->to, MS, probe_fn, n), HWTIMER_EBUSY);
    CHECK_EQ(hwtimer_schedule_at(b->t, &n->to, 0, probe_fn, n), HWTIMER_EBUSY);
    CHECK_EQ(hwtimer_schedule_periodic(b->t, &n->to, MS, MS, probe_fn, n), HWTIMER_EBUSY);
    CHECK_EQ(hwtimer_reschedule(b->t, &n->to, MS), HWTIMER_EBUSY);
    CHECK_EQ(hwtimer_cancel(b->t, &n->to), HWTIMER_EINVAL);
    CHECK_UNCHANGED(on_a, a->t, &n->to);
    CHECK_UNCHANGED(on_b, b->t, &n->to);
}

static void test_node_on_two_timers(void) {
    fixture a, b, c;
    probe n;
    fixture_open(&a, 0, MS, 8);
    fixture_open(&b, 7 * SEC, 3 * MS, 16);
    probes_init(&n, 1, &a);
    CHECK_EQ(probe_schedule(&n, 10 * MS), HWTIMER_OK);
    check_refused_elsewhere(&a, &b, &n);
    CHECK_EQ(advance_to(&b, b.start + HOUR), 0); /* b never runs it */
    CHECK_EQ(advance_to(&a, a.start + 10 * MS), 1);
    CHECK_EQ(n.runs, 1);

    /* done on a: now it may go to b, and a refuses it */
    n.f = &b;
    CHECK_EQ(probe_schedule(&n, HOUR), HWTIMER_OK);
    check_refused_elsewhere(&b, &a, &n);
    /* b is destroyed with it pending: CANCELLED, and a may take it at once (a stale owner
       pointer into freed memory must not be followed: ASan) */
    fixture_close(&b);
    CHECK_EQ(hwtimer_timeout_state(&n.to), HWTIMER_CANCELLED);
    fixture_open(&c, 0, MS, 8); /* may get b's address */
    n.f = &a;
    CHECK_EQ(probe_schedule(&n, MS), HWTIMER_OK);
    check_refused_elsewhere(&a, &c, &n);
    CHECK_EQ(advance_to(&a, a.clock + MS), 1);
    CHECK_EQ(n.runs, 2);
    CHECK_EQ(n.early, 0);
    fixture_close(&c);
    fixture_close(&a);
}

/* Cancel frees a node for the caller at once: half are freed right after cancel while
   the rest (and new nodes that may reuse the freed memory) keep running through every
   level. Every survivor runs once, at or after its boundary; ASan sees any touch of a
   freed node. */
static void test_freed_after_cancel(void) {
    static probe *nodes[HEAP_PROBES];
    fixture r;
    size_t i, runs = 0;
    fixture_open(&r, 123, MS, 4);
    schedule_heap_probes(&r, nodes, HEAP_PROBES, 1);
    for (i = 0; i < HEAP_PROBES; i += 2) {
        CHECK_EQ(hwtimer_cancel(r.t, &nodes[i]->to), 1);
        free(nodes[i]);
        nodes[i] = NULL;
    }
    for (i = 0; i < HEAP_PROBES; i += 2) { /* refill: malloc may hand back the freed nodes */
        nodes[i] = (probe *)calloc_or_die(1, sizeof(probe));
        nodes[i]->f = &r;
        CHECK_EQ(probe_schedule(nodes[i], (i + 1) * HOUR), HWTIMER_OK);
    }
    CHECK_EQ(hwtimer_pending(r.t), HEAP_PROBES);
    for (i = 1; i <= 64; i++) (void)advance_to(&r, r.start + i * (11 * YEAR / 64) + i * i * MS);
    for (i = 0; i < HEAP_PROBES; i++) {
        runs += nodes[i]->runs;
        CHECK_EQ(nodes[i]->early, 0);
        free(nodes[i]);
    }
    CHECK_EQ(runs, HEAP_PROBES);
    CHECK_EQ(hwtimer_pending(r.t), 0);
    fixture_close(&r);
}

int main(void) {
    RUN_TEST(test_schedule_pending_is_busy);
    RUN_TEST(test_cancel);
    RUN_TEST(test_reschedule_pending);
    RUN_TEST(test_reschedule_not_pending);
    RUN_TEST(test_states);
    RUN_TEST(test_pending_counts);
    RUN_TEST(test_max_pending);
    RUN_TEST(test_max_pending_one);
    RUN_TEST(test_node_moves_between_timers);
    RUN_TEST(test_node_on_two_timers);
    RUN_TEST(test_freed_after_cancel);
    return test_finish();
}
