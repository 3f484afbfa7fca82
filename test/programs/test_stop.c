/* test_stop.c - stop and destroy: stop hands back what was pending (and its ownership),
   refuses everything after, is refused from a callback, and runs twice harmlessly;
   destroy cancels whatever is pending in any list; nodes freed right after either. */
#include "harness.h"
#include "fixture.h"
#include "probe.h"

/* A caller-driven timer has nothing to start: hwtimer_start is OK until the timer stops. */
static void test_start_caller_driven(void) {
    fixture f;
    fixture_open(&f, 0, MS, 8);
    CHECK_EQ(hwtimer_start(f.t), HWTIMER_OK);
    CHECK_EQ(hwtimer_stop(f.t, NULL, NULL), 0);
    CHECK_EQ(hwtimer_start(f.t), HWTIMER_ESTOPPED);
    fixture_close(&f);
}

static void test_stop(void) {
    enum { N = 6 };
    fixture f;
    probe p[N];
    handed_back h;
    size_t i;
    memset(&h, 0, sizeof h);
    open_with_probes(&f, p, N, 0, 4);
    for (i = 0; i < N - 1; i++) {
        CHECK_EQ(probe_schedule(&p[i], (i + 1) * 10 * MS), HWTIMER_OK);
    }
    CHECK_EQ(probe_schedule_periodic(&p[N - 1], 5 * MS, 5 * MS), HWTIMER_OK);
    CHECK_EQ(probe_schedule(&p[2], MS), HWTIMER_EBUSY);
    CHECK_EQ(probe_cancel(&p[1]), 1);
    CHECK_EQ(advance_to(&f, tick_at(&f, 10)), 2); /* p[0]; the periodic once (a jump) */
    CHECK_EQ(hwtimer_pending(f.t), 4);

    CHECK_EQ(hwtimer_stop(f.t, note_handed_back, &h), 4);
    CHECK_EQ(h.calls, 4);
    CHECK_EQ(h.not_cancelled, 0);
    CHECK(h.ctx_seen == &h);
    for (i = 0; i < N; i++) {
        CHECK_EQ(handed_back_times(&h, &p[i].to), (i >= 2) ? 1 : 0);
        if (i >= 2) {
            CHECK_EQ(hwtimer_timeout_state(&p[i].to), HWTIMER_CANCELLED);
        }
    }
    CHECK_EQ(hwtimer_pending(f.t), 0);
    CHECK_EQ(hwtimer_next_expiry(f.t), UINT64_MAX);
    CHECK_EQ(hwtimer_poll_timeout_ms(f.t), -1);
    CHECK_EQ(advance_to(&f, tick_at(&f, 1000)), 0);
    for (i = 0; i < N; i++) {
        CHECK_EQ(probe_cancel(&p[i]), 0);
    }

    CHECK_EQ(probe_schedule(&p[1], MS), HWTIMER_ESTOPPED);
    CHECK_EQ(probe_schedule_periodic(&p[1], MS, MS), HWTIMER_ESTOPPED);
    CHECK_EQ(hwtimer_schedule_at(f.t, &p[1].to, MS, probe_fn, &p[1]), HWTIMER_ESTOPPED);
    CHECK_EQ(hwtimer_reschedule(f.t, &p[3].to, MS), HWTIMER_ESTOPPED);
    CHECK_EQ(hwtimer_reschedule(f.t, &p[0].to, MS), HWTIMER_ESTOPPED);
    CHECK_EQ(hwtimer_pending(f.t), 0);
    CHECK_EQ(hwtimer_stop(f.t, note_handed_back, &h), 0);
    CHECK_EQ(h.calls, 4);
    fixture_close(&f);
}

/* Stop without a callback still cancels and counts; handed-back nodes may be freed in
   the callback (AddressSanitizer sees any later access). */
static void free_unprocessed(hwtimer_timeout *to, void *ctx) {
    (*(int *)ctx)++;
    free(to);
}

static void test_stop_hands_over_ownership(void) {
    fixture f;
    probe p[3];
    int freed = 0;
    size_t i;
    open_with_probes(&f, p, 3, 0, 4);
    for (i = 0; i < 3; i++) {
        CHECK_EQ(probe_schedule(&p[i], (i + 1) * HOUR), HWTIMER_OK);
    }
    CHECK_EQ(hwtimer_stop(f.t, NULL, NULL), 3);
    for (i = 0; i < 3; i++) {
        CHECK_EQ(hwtimer_timeout_state(&p[i].to), HWTIMER_CANCELLED);
    }
    fixture_close(&f);

    /* Enough nodes that slots hold several lists each: every one handed back once (a node
       freed twice or visited after its free is an ASan failure). */
    fixture_open(&f, 0, MS, 4);
    for (i = 0; i < 2000; i++) {
        hwtimer_timeout *to = (hwtimer_timeout *)calloc(1, sizeof *to);
        if (to == NULL) {
            exit(1);
        }
        CHECK_EQ(hwtimer_schedule(f.t, to, (i * 37 % 2000) * MS, other_fn, NULL), HWTIMER_OK);
    }
    CHECK_EQ(hwtimer_stop(f.t, free_unprocessed, &freed), 2000);
    CHECK_EQ(freed, 2000);
    fixture_close(&f);
}

/* Stop from one of the timer's own callbacks is EWORKER and changes nothing. */
static void test_stop_from_callback(void) {
    fixture f;
    probe p[2];
    open_with_probes(&f, p, 2, 0, 8);
    p[0].action = act_stop;
    CHECK_EQ(probe_schedule(&p[0], MS), HWTIMER_OK);
    CHECK_EQ(probe_schedule(&p[1], 5 * MS), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, tick_at(&f, 1)), 1);
    CHECK_EQ(p[0].result[0], HWTIMER_EWORKER);
    CHECK_EQ(hwtimer_pending(f.t), 1);
    CHECK_EQ(hwtimer_timeout_state(&p[1].to), HWTIMER_PENDING);
    CHECK_EQ(probe_schedule(&p[0], 2 * MS), HWTIMER_OK);
    p[0].action = NULL;
    CHECK_EQ(advance_to(&f, tick_at(&f, 5)), 2);
    CHECK_EQ(p[1].runs, 1);
    CHECK_EQ(hwtimer_stop(f.t, NULL, NULL), 0);
    fixture_close(&f);
}

/* After a stop everything is refused or a no-op, and further stops return 0 and hand
   back nothing. */
static void check_stopped(fixture *r, probe *n) {
    handed_back h;
    memset(&h, 0, sizeof h);
    CHECK_EQ(hwtimer_stop(r->t, note_handed_back, &h), 0);
    CHECK_EQ(hwtimer_stop(r->t, note_handed_back, &h), 0);
    CHECK_EQ(h.calls, 0);
    CHECK_EQ(probe_schedule(n, MS), HWTIMER_ESTOPPED);
    CHECK_EQ(hwtimer_schedule_at(r->t, &n->to, 0, probe_fn, n), HWTIMER_ESTOPPED);
    CHECK_EQ(hwtimer_schedule_periodic(r->t, &n->to, MS, MS, probe_fn, n), HWTIMER_ESTOPPED);
    CHECK_EQ(hwtimer_start(r->t), HWTIMER_ESTOPPED);
    CHECK_EQ(hwtimer_cancel(r->t, &n->to), 0);
    CHECK_EQ(hwtimer_pending(r->t), 0);
    CHECK_EQ(hwtimer_next_expiry(r->t), UINT64_MAX);
    CHECK_EQ(hwtimer_poll_timeout_ms(r->t), -1);
    CHECK_EQ(advance_to(r, UINT64_MAX), 0);
    CHECK_EQ(hwtimer_poll(r->t), 0);
}

static void test_stop_twice(void) {
    fixture r;
    probe n[3];
    handed_back h;
    memset(&h, 0, sizeof h);
    open_with_probes(&r, n, 3, 0, 8);
    check_stopped(&r, &n[0]); /* never used */
    fixture_close(&r);

    fixture_open(&r, 0, MS, 8);
    CHECK_EQ(probe_schedule(&n[0], MS), HWTIMER_OK);
    CHECK_EQ(hwtimer_schedule_periodic(r.t, &n[1].to, MS, MS, probe_fn, &n[1]), HWTIMER_OK);
    CHECK_EQ(hwtimer_stop(r.t, note_handed_back, &h), 2);
    CHECK_EQ(h.calls, 2);
    CHECK_EQ(h.not_cancelled, 0);
    CHECK_EQ(hwtimer_reschedule(r.t, &n[1].to, MS), HWTIMER_ESTOPPED);
    check_stopped(&r, &n[2]);
    CHECK_EQ(n[0].runs + n[1].runs, 0);
    fixture_close(&r);
}

/* Destroy with timeouts in every list a node can be in (wheel levels, the due list of
   deadlines already past, periodic ones): all CANCELLED, no byte kept, and the nodes work
   on the next timer. */
static void test_destroy_with_pending(void) {
    enum { N = 64 };
    fixture r;
    probe n[N];
    size_t i, runs = 0;
    open_with_probes(&r, n, N, 0, 2);
    CHECK_EQ(advance_to(&r, r.start + SEC), 0);
    for (i = 0; i < N; i++) {
        uint64_t deadline = i < 8 ? i * MS : r.start + ((uint64_t)1 << (i % 44 + 20));
        if (i % 5 == 4) {
            CHECK_EQ(hwtimer_schedule_periodic(r.t, &n[i].to, i * MS, MS, probe_fn, &n[i]),
                     HWTIMER_OK);
        } else {
            CHECK_EQ(hwtimer_schedule_at(r.t, &n[i].to, deadline, probe_fn, &n[i]), HWTIMER_OK);
        }
    }
    CHECK_EQ(hwtimer_pending(r.t), N);
    fixture_close(&r);
    for (i = 0; i < N; i++) {
        CHECK_EQ(hwtimer_timeout_state(&n[i].to), HWTIMER_CANCELLED);
        CHECK_EQ(n[i].runs, 0);
    }
    fixture_open(&r, 0, MS, 2);
    for (i = 0; i < N; i++) CHECK_EQ(hwtimer_reschedule(r.t, &n[i].to, MS), HWTIMER_OK);
    CHECK_EQ(advance_to(&r, r.start + MS), N);
    for (i = 0; i < N; i++) runs += n[i].runs;
    CHECK_EQ(runs, N);
    fixture_close(&r);

    fixture_open(&r, 0, MS, 4); /* and destroy with nothing ever scheduled */
    fixture_close(&r);
}

/* Nodes handed back by stop (with no callback) and nodes left pending at destroy belong
   to the caller as soon as the call returns: freed at once, then the timer is used. */
static void test_freed_after_stop_and_destroy(void) {
    static probe *nodes[HEAP_PROBES];
    fixture r;
    size_t i, pending;
    fixture_open(&r, 0, MS, 8);
    schedule_heap_probes(&r, nodes, HEAP_PROBES, 2);
    (void)advance_to(&r, r.start + HOUR);
    pending = hwtimer_pending(r.t);
    CHECK(pending > 0 && pending < HEAP_PROBES);
    CHECK_EQ(hwtimer_stop(r.t, NULL, NULL), pending);
    for (i = 0; i < HEAP_PROBES; i++) free(nodes[i]);
    CHECK_EQ(advance_to(&r, r.start + 20 * YEAR), 0);
    CHECK_EQ(hwtimer_next_expiry(r.t), UINT64_MAX);
    fixture_close(&r);

    fixture_open(&r, 0, MS, 8);
    schedule_heap_probes(&r, nodes, HEAP_PROBES, 3);
    fixture_close(&r);
    for (i = 0; i < HEAP_PROBES; i++) {
        CHECK_EQ(hwtimer_timeout_state(&nodes[i]->to), HWTIMER_CANCELLED);
        free(nodes[i]);
    }
}

int main(void) {
    RUN_TEST(test_start_caller_driven);
    RUN_TEST(test_stop);
    RUN_TEST(test_stop_hands_over_ownership);
    RUN_TEST(test_stop_from_callback);
    RUN_TEST(test_stop_twice);
    RUN_TEST(test_destroy_with_pending);
    RUN_TEST(test_freed_after_stop_and_destroy);
    return test_finish();
}
