/* test_callbacks.c - callbacks that use their timer: re-arm themselves, schedule and
   cancel peers in the same pass, own (overwrite, reuse, free) their node, and destroy the
   timer, caller-driven and on the worker. */
#include "harness.h"
#include "harness_threads.h"
#include "fixture.h"
#include "probe.h"

/* A one-shot re-arms itself (schedule or reschedule) from its callback; re-arming with
   delay 0 does not run it again in the same pass, however long the pass. */
static void test_rearm_from_callback(void) {
    fixture f;
    probe p;
    open_with_probe(&f, &p, 4, act_rearm);
    p.delay = MS;
    p.repeats = 4;
    CHECK_EQ(probe_schedule(&p, MS), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, tick_at(&f, 1)), 1);
    CHECK_EQ(p.result[0], HWTIMER_OK);
    CHECK_EQ(advance_to(&f, tick_at(&f, 2)), 1);
    CHECK_EQ(advance_to(&f, tick_at(&f, 3)), 1);
    CHECK_EQ(advance_to(&f, tick_at(&f, 4)), 1);
    CHECK_EQ(advance_to(&f, tick_at(&f, 5)), 1);
    CHECK_EQ(advance_to(&f, tick_at(&f, 6)), 0);
    CHECK_EQ(p.runs, 5);
    CHECK_EQ(hwtimer_pending(f.t), 0);

    p.delay = 0;
    p.repeats = 1000;
    CHECK_EQ(probe_schedule(&p, 0), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, tick_at(&f, 6) + YEAR), 1);
    CHECK_EQ(hwtimer_pending(f.t), 1);
    CHECK_EQ(advance_to(&f, tick_at(&f, 6) + YEAR), 1); /* same now: due, so it runs */
    CHECK_EQ(p.runs, 7);

    p.action = act_reschedule_self;
    p.delay = 2 * MS;
    p.repeats = 1;
    CHECK_EQ(probe_cancel(&p), 1);
    CHECK_EQ(probe_schedule(&p, MS), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, f.clock + MS), 1);
    CHECK_EQ(p.result[0], HWTIMER_OK);
    CHECK_EQ(advance_to(&f, f.clock + MS), 0);
    CHECK_EQ(advance_to(&f, f.clock + MS), 1);
    CHECK_EQ(p.runs, 9);
    fixture_close(&f);
}

/* A callback schedules another timeout with delay 0: it waits for the next advance. */
static void test_schedule_delay_zero_from_callback(void) {
    fixture f;
    probe p[2];
    open_with_probes(&f, p, 2, 0, 4);
    p[0].action = act_schedule_peer;
    p[0].peer[0] = &p[1];
    p[0].delay = 0;
    CHECK_EQ(probe_schedule(&p[0], 3 * MS), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, tick_at(&f, 100)), 1);
    CHECK_EQ(p[0].result[0], HWTIMER_OK);
    CHECK_EQ(p[1].runs, 0);
    CHECK_EQ(hwtimer_pending(f.t), 1);
    CHECK_EQ(advance_to(&f, tick_at(&f, 100)), 1);
    CHECK_EQ(p[1].runs, 1);
    CHECK_EQ(p[1].ran_at, tick_at(&f, 100));
    fixture_close(&f);
}

/* The first of three timeouts due in the same tick cancels the other two: they do not
   run, both cancels return 1, and the pending count drops by exactly 2. */
static void test_cancel_peers_in_same_tick(void) {
    fixture f;
    probe p[3];
    size_t i, ran = 0;
    open_with_probes(&f, p, 3, 0, 4);
    for (i = 0; i < 3; i++) {
        p[i].action = act_cancel_peers;
        p[i].peer[0] = &p[(i + 1) % 3];
        p[i].peer[1] = &p[(i + 2) % 3];
        CHECK_EQ(probe_schedule(&p[i], 7 * MS), HWTIMER_OK);
    }
    CHECK_EQ(advance_to(&f, tick_at(&f, 7)), 1);
    for (i = 0; i < 3; i++) {
        if (p[i].runs == 1) {
            ran++;
            CHECK_EQ(p[i].result[0], 1);
            CHECK_EQ(p[i].result[1], 1);
            CHECK_EQ(p[i].pending_seen[0] - p[i].pending_seen[1], 2);
            CHECK_EQ(p[i].pending_seen[1], 0);
        }
    }
    CHECK_EQ(ran, 1);
    CHECK_EQ(hwtimer_pending(f.t), 0);
    CHECK_EQ(advance_to(&f, tick_at(&f, 50)), 0);
    fixture_close(&f);
}

/* In one long jump, an early callback cancels one due later in the same pass (it must not
   run) and tries to cancel one that already ran (0). */
static void test_cancel_peers_later_in_pass(void) {
    fixture f;
    probe p[4];
    open_with_probes(&f, p, 4, 0, 4);
    p[1].action = act_cancel_peers;
    p[1].peer[0] = &p[0]; /* ran before */
    p[1].peer[1] = &p[2]; /* due later in this pass */
    p[1].peer[2] = &p[3]; /* due after this pass */
    CHECK_EQ(probe_schedule(&p[0], 1 * MS), HWTIMER_OK);
    CHECK_EQ(probe_schedule(&p[1], 3 * MS), HWTIMER_OK);
    CHECK_EQ(probe_schedule(&p[2], 90 * MS), HWTIMER_OK);
    CHECK_EQ(probe_schedule(&p[3], 900 * MS), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, tick_at(&f, 100)), 2);
    CHECK_EQ(p[1].result[0], 0);
    CHECK_EQ(p[1].result[1], 1);
    CHECK_EQ(p[1].result[2], 1);
    CHECK_EQ(p[1].pending_seen[0], 2);
    CHECK_EQ(p[1].pending_seen[1], 0);
    CHECK_EQ(p[2].runs + p[3].runs, 0);
    CHECK_EQ(hwtimer_pending(f.t), 0);
    CHECK_EQ(advance_to(&f, tick_at(&f, 1000)), 0);
    fixture_close(&f);
}

/* A one-shot's callback owns its node: cancelling it returns 0, and it may overwrite,
   reuse or free it; the timer never touches it again. Several share one slot, so the
   timer must have let go of each node before calling it. */
static void test_callback_owns_its_node(void) {
    enum { N = 4 };
    fixture f;
    probe p[N];
    size_t i;
    open_with_probes(&f, p, N, 0, 4);
    for (i = 0; i < N; i++) {
        p[i].action = act_scribble;
        CHECK_EQ(probe_schedule(&p[i], 5 * MS), HWTIMER_OK);
    }
    CHECK_EQ(advance_to(&f, tick_at(&f, 5)), N);
    CHECK_EQ(advance_to(&f, tick_at(&f, 5000)), 0);
    for (i = 0; i < N; i++) {
        CHECK_EQ(p[i].runs, 1);
        CHECK_EQ(p[i].state_seen, HWTIMER_EXPIRED);
        CHECK(all_bytes_are(&p[i].to, sizeof p[i].to, 0xA5));
    }

    /* reuse as a fresh node and schedule it again */
    probes_init(p, N, &f);
    for (i = 0; i < N; i++) {
        p[i].action = act_reuse;
        p[i].delay = MS;
        CHECK_EQ(probe_schedule(&p[i], MS), HWTIMER_OK);
    }
    CHECK_EQ(advance_to(&f, tick_at(&f, 5001)), N);
    CHECK_EQ(hwtimer_pending(f.t), N);
    for (i = 0; i < N; i++) {
        p[i].action = act_cancel_self;
    }
    CHECK_EQ(advance_to(&f, tick_at(&f, 5002)), N);
    for (i = 0; i < N; i++) {
        CHECK_EQ(p[i].runs, 2);
        CHECK_EQ(p[i].result[0], 0); /* a running one-shot is not pending */
    }
    fixture_close(&f);
}

static void free_own_node(hwtimer_timeout *to, void *arg) {
    int *freed = (int *)arg;
    (*freed)++;
    free(to);
}

static void test_callback_frees_its_node(void) {
    enum { N = 8 };
    fixture f;
    int freed = 0;
    size_t i;
    fixture_open(&f, 0, MS, 4);
    for (i = 0; i < N; i++) {
        hwtimer_timeout *to = (hwtimer_timeout *)malloc(sizeof *to);
        if (to == NULL) {
            exit(1);
        }
        hwtimer_timeout_init(to);
        CHECK_EQ(hwtimer_schedule(f.t, to, (i % 2 + 1) * MS, free_own_node, &freed), HWTIMER_OK);
    }
    CHECK_EQ(advance_to(&f, tick_at(&f, 1)), N / 2);
    CHECK_EQ(advance_to(&f, tick_at(&f, 9)), N / 2);
    CHECK_EQ(freed, N);
    CHECK_EQ(hwtimer_pending(f.t), 0);
    fixture_close(&f);
}

/* Deferred: inside the callback the timer is stopped but alive (a schedule says ESTOPPED,
   nothing is freed yet); the rest of the pass does not run; when advance returns the
   timer is freed and every other node is CANCELLED. `periodic` picks the destroyer's
   kind. */
static void check_destroy_from_callback(int periodic) {
    enum { N = 4 };
    fixture r;
    probe n[N];
    size_t i;
    open_with_probes(&r, n, N, 0, 8);
    n[0].action = act_destroy;
    n[0].target = &r;
    if (periodic) {
        CHECK_EQ(hwtimer_schedule_periodic(r.t, &n[0].to, MS, MS, probe_fn, &n[0]), HWTIMER_OK);
    } else {
        CHECK_EQ(probe_schedule(&n[0], MS), HWTIMER_OK);
    }
    CHECK_EQ(probe_schedule(&n[1], MS), HWTIMER_OK); /* same tick, may run first */
    CHECK_EQ(probe_schedule(&n[2], 2 * MS), HWTIMER_OK);
    CHECK_EQ(probe_schedule(&n[3], HOUR), HWTIMER_OK);
    CHECK_EQ(hwtimer_advance(r.t, r.start + 2 * MS), 1 + n[1].runs);
    r.t = NULL;
    CHECK_EQ(n[0].runs, 1);
    CHECK_EQ(n[0].frees_seen, 0);
    CHECK_EQ(n[0].result[0], HWTIMER_ESTOPPED);
    CHECK(r.mem.allocs > 0);
    CHECK_EQ(r.mem.frees, r.mem.allocs);
    CHECK_EQ(r.out_of_order, 0);
    CHECK_EQ(n[2].runs + n[3].runs, 0);
    for (i = 0; i < N; i++) {
        if (n[i].runs == 0 || (periodic && i == 0))
            CHECK_EQ(hwtimer_timeout_state(&n[i].to), HWTIMER_CANCELLED);
    }
}

static void test_destroy_from_callback(void) {
    check_destroy_from_callback(0);
    check_destroy_from_callback(1);
}

/* hwtimer_advance from the callback that destroyed its timer: 0 (a callback's advance runs
   nothing), and it frees nothing: the timer is the pass's until the outer advance returns,
   which frees it. */
static void act_destroy_then_advance(probe *p) {
    act_destroy(p);
    p->result[1] = (int)hwtimer_advance(p->target->t, UINT64_MAX);
    p->frees_seen += ATOMIC_GET(&p->target->mem.frees);
}

static void test_advance_after_destroy_from_callback(void) {
    fixture r;
    probe n;
    open_with_probes(&r, &n, 1, 0, 8);
    n.action = act_destroy_then_advance;
    n.target = &r;
    CHECK_EQ(probe_schedule(&n, MS), HWTIMER_OK);
    CHECK_EQ(hwtimer_advance(r.t, r.start + MS), 1);
    CHECK_EQ(n.result[1], 0);
    CHECK_EQ(n.frees_seen, 0);
    CHECK(r.mem.allocs > 0);
    CHECK_EQ(r.mem.frees, r.mem.allocs);
}

/* The backend's hooks, counting the threads started and those handed back (atomic: the
   worker detaches itself). */
static struct {
    const hwtimer_threads *real;
    unsigned started, detached, joined;
} seen;

static int seen_start(void *th, void (*fn)(void *), void *arg) {
    int err = seen.real->thread_start(th, fn, arg);
    if (!err) ATOMIC_ADD(&seen.started, 1u);
    return err;
}

static void seen_detach(void *th) {
    seen.real->thread_detach(th);
    ATOMIC_ADD(&seen.detached, 1u);
}

static void seen_join(void *th) {
    seen.real->thread_join(th);
    ATOMIC_ADD(&seen.joined, 1u);
}

/* On the worker: the worker frees the timer when its pass ends (ASan checks no leak) and
   detaches its own thread, which no one is left to join; an advance from its callback (on
   a worker-mode timer, and after destroy) does nothing. */
static void test_destroy_from_worker_callback(void) {
    hwtimer_threads th;
    hwtimer_config cfg;
    fixture r;
    probe n[2];
    memset(&seen, 0, sizeof seen);
    seen.real = test_wrap_threads(&th);
    th.thread_start = seen_start;
    th.thread_detach = seen_detach;
    th.thread_join = seen_join;
    fixture_config(&r, &cfg, 0, MS, 8);
    cfg.clock_fn = NULL;
    cfg.threads = &th;
    cfg.worker = 1;
    r.t = create_or_die(&cfg);
    probes_init(n, 2, NULL); /* the real clock: no fixture */
    n[0].action = act_destroy_then_advance;
    n[0].target = &r;
    CHECK_EQ(hwtimer_schedule(r.t, &n[1].to, HOUR, probe_fn, &n[1]), HWTIMER_OK);
    CHECK_EQ(hwtimer_schedule(r.t, &n[0].to, MS, probe_fn, &n[0]), HWTIMER_OK);
    CHECK(wait_for_count(&r.mem.frees, ATOMIC_GET(&r.mem.allocs), 5 * SEC));
    CHECK_EQ(n[0].frees_seen, 0);
    CHECK_EQ(n[0].result[0], HWTIMER_ESTOPPED);
    CHECK_EQ(n[0].result[1], 0);
    CHECK_EQ(n[0].runs, 1);
    CHECK_EQ(n[1].runs, 0);
    CHECK_EQ(hwtimer_timeout_state(&n[1].to), HWTIMER_CANCELLED);
    CHECK(wait_for_count(&seen.detached, 1, 5 * SEC));
    CHECK_EQ(ATOMIC_GET(&seen.started), 1);
    CHECK_EQ(ATOMIC_GET(&seen.joined), 0);
}

int main(void) {
    RUN_TEST(test_rearm_from_callback);
    RUN_TEST(test_schedule_delay_zero_from_callback);
    RUN_TEST(test_cancel_peers_in_same_tick);
    RUN_TEST(test_cancel_peers_later_in_pass);
    RUN_TEST(test_callback_owns_its_node);
    RUN_TEST(test_callback_frees_its_node);
    RUN_TEST(test_destroy_from_callback);
    RUN_TEST(test_advance_after_destroy_from_callback);
    if (test_threads()) { /* a worker thread needs a backend */
        RUN_TEST(test_destroy_from_worker_callback);
    }
    return test_finish();
}
