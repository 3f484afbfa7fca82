/* test_bounded.c - hwtimer_advance_max: at most n callbacks a call, in the order
   hwtimer_advance runs them; the timeouts it leaves due stay pending and counted, keep
   their order and run first at the next call whatever its `now` (meanwhile next_expiry is
   at most that now and poll_timeout_ms 0); a periodic run counts as one; 0 means no limit;
   from a callback and in worker mode it returns 0, as hwtimer_advance does. In the shards
   mode the nodes are spread over the wheels (the thread number that picks a fresh node's
   wheel is set before each arming), so that the order holds across them. */
#include "harness.h"
#include "fixture.h"
#include "probe.h"

/* The next arming of a fresh node goes to wheel k mod shards (hwtimer__shard_to_arm). */
static void arm_as_thread(unsigned k) {
    hwtimer__thread_number = 1 + k;
}

enum { N = 300 };

/* The order of the runs, as probe ids, from the probes' run log. */
static void logged_ids(int *ids, size_t *n) {
    size_t i;
    for (i = 0; i < run_logged; i++) ids[i] = run_log[i]->id;
    *n = run_logged;
}

/* N probes due over 40 ticks (many ties, several levels of an 8-slot wheel), spread over
   the wheels, with an arming order drawn from `seed`. */
static void schedule_burst(fixture *f, probe *p, uint64_t seed) {
    uint64_t rng = seed;
    size_t i;
    probes_init(p, N, f);
    for (i = 0; i < N; i++) {
        arm_as_thread((unsigned)test_rng_below(&rng, 7));
        CHECK_EQ(probe_schedule(&p[i], MS + test_rng_below(&rng, 40 * MS)), HWTIMER_OK);
    }
}

/* The same timeouts run in the same order whether one advance runs them or bounded calls
   with drawn bounds do, each call's count bounded and exact, the pending count exact
   after each, and every boundary in order across the calls (one `now` for all). */
static void test_order_kept(void) {
    static probe p[N];
    static int want[N], got[N];
    size_t nwant, ngot, ran, total = 0, left = N;
    uint64_t rng = 99, seed;
    fixture f;
    for (seed = 1; seed <= 4; seed++) {
        open_with_probes(&f, p, 0, 0, 8);
        schedule_burst(&f, p, seed);
        run_log_reset();
        CHECK_EQ(advance_to(&f, 50 * MS), N);
        logged_ids(want, &nwant);
        fixture_close(&f);

        open_with_probes(&f, p, 0, 0, 8);
        schedule_burst(&f, p, seed);
        run_log_reset();
        f.clock = 50 * MS;
        f.pass_last_boundary = 0;
        total = 0;
        left = N;
        while (left > 0) {
            size_t bound = 1 + (size_t)test_rng_below(&rng, 40);
            ran = hwtimer_advance_max(f.t, 50 * MS, bound);
            CHECK_EQ(ran, bound < left ? bound : left);
            total += ran;
            left -= ran;
            CHECK_EQ(hwtimer_pending(f.t), left);
            CHECK_EQ(hwtimer_check(f.t), 0);
            if (ran == 0) break;
        }
        CHECK_EQ(total, N);
        logged_ids(got, &ngot);
        CHECK_EQ(ngot, nwant);
        CHECK(memcmp(got, want, sizeof want) == 0);
        fixture_close(&f); /* (no run before an earlier boundary's: out_of_order) */
    }
}

/* 0 is no limit: hwtimer_advance itself. */
static void test_zero_is_unlimited(void) {
    static probe p[N];
    fixture f;
    open_with_probes(&f, p, 0, 0, 8);
    schedule_burst(&f, p, 7);
    f.clock = 50 * MS;
    CHECK_EQ(hwtimer_advance_max(f.t, 50 * MS, 0), N);
    CHECK_EQ(hwtimer_pending(f.t), 0);
    CHECK_EQ(hwtimer_advance_max(NULL, 50 * MS, 3), 0);
    fixture_close(&f);
}

/* What is left runs first at the next call, whatever its now (one behind the last here),
   before a timeout armed meanwhile with an earlier boundary; meanwhile next_expiry is at
   most the now given and poll_timeout_ms is 0 with the clock behind it. */
static void test_left_run_first(void) {
    enum { K = 10 };
    probe p[K + 1];
    size_t i;
    fixture f;
    open_with_probes(&f, p, K + 1, 0, 8);
    for (i = 0; i < K; i++) {
        arm_as_thread((unsigned)i);
        CHECK_EQ(probe_schedule(&p[i], 5 * MS), HWTIMER_OK);
    }
    CHECK_EQ(hwtimer_advance_max(f.t, 10 * MS, 3), 3);
    CHECK_EQ(hwtimer_pending(f.t), K - 3);
    CHECK(hwtimer_next_expiry(f.t) <= 10 * MS);
    CHECK_EQ(hwtimer_poll_timeout_ms(f.t), 0); /* the clock reads 0: behind */
    arm_as_thread(3);
    CHECK_EQ(probe_schedule_at(&p[K], 1 * MS), HWTIMER_OK); /* B = 1 ms, before theirs */
    run_log_reset();
    CHECK_EQ(hwtimer_advance_max(f.t, 2 * MS, 4), 4); /* a now behind the last */
    for (i = 0; i < run_logged; i++) CHECK(run_log[i] != &p[K]);
    CHECK_EQ(p[K].runs, 0);
    CHECK_EQ(hwtimer_poll_timeout_ms(f.t), 0);
    CHECK_EQ(hwtimer_advance_max(f.t, 0, 0), K - 7 + 1); /* the rest, then the new one */
    CHECK(run_log[run_logged - 1] == &p[K]);
    CHECK_EQ(f.out_of_order, 1); /* its B before theirs: left first, by the rule */
    f.out_of_order = 0;
    CHECK_EQ(probe_runs(p, K + 1), K + 1);
    CHECK_EQ(hwtimer_next_expiry(f.t), UINT64_MAX);
    CHECK_EQ(hwtimer_poll_timeout_ms(f.t), -1);
    fixture_close(&f);
}

/* Left timeouts can be cancelled (they never run) and moved later. One of the last
   generation a wheel set aside moves at once; one of an older generation stays in its
   place, as in a coarse slot (next_expiry may be earlier then, as the header allows),
   and the call that reaches it files it by its deadline instead of running it (a
   re-filing). After that next_expiry and poll_timeout_ms follow it. */
static void test_left_cancel_and_move(void) {
    probe p[5];
    fixture f;
    hwtimer_stats stats;
    int i;
    open_with_probes(&f, p, 5, 0, 64); /* 26 ticks ahead lie in the finest level */
    for (i = 0; i < 4; i++) CHECK_EQ(probe_schedule(&p[i], (uint64_t)(i + 2) * MS), HWTIMER_OK);
    f.clock = 6 * MS;
    CHECK_EQ(hwtimer_advance_max(f.t, 6 * MS, 1), 1); /* p[0]; p[1..3] left */
    CHECK_EQ(hwtimer_pending(f.t), 3);
    CHECK_EQ(probe_cancel(&p[1]), 1);
    CHECK_EQ(hwtimer_pending(f.t), 2);
    CHECK_EQ(hwtimer_reschedule(f.t, &p[2].to, 20 * MS), HWTIMER_OK); /* moved at once */
    CHECK_EQ(hwtimer_timeout_due_in(f.t, &p[2].to), 20 * MS);
    CHECK_EQ(hwtimer_check(f.t), 0);
    CHECK_EQ(hwtimer_advance_max(f.t, 6 * MS, 1), 1); /* p[3] */
    CHECK_EQ(p[3].runs, 1);
    CHECK_EQ(p[2].runs, 0);
    CHECK_EQ(hwtimer_next_expiry(f.t), 26 * MS);
    CHECK_EQ(hwtimer_poll_timeout_ms(f.t), 20);
    f.clock = 26 * MS;
    CHECK_EQ(hwtimer_poll(f.t), 1);
    CHECK_EQ(p[2].runs, 1);
    CHECK_EQ(p[1].runs, 0);
    hwtimer_stats_get(f.t, &stats);
    CHECK_EQ(stats.refiled, 0);
    fixture_close(&f);

    /* an older generation: p[1..3] left, then p[4] (armed meanwhile, due) after them */
    open_with_probes(&f, p, 5, 0, 64);
    for (i = 0; i < 4; i++) CHECK_EQ(probe_schedule(&p[i], (uint64_t)(i + 2) * MS), HWTIMER_OK);
    f.clock = 6 * MS;
    CHECK_EQ(hwtimer_advance_max(f.t, 6 * MS, 1), 1); /* p[0] */
    CHECK_EQ(probe_schedule_at(&p[4], MS), HWTIMER_OK);
    CHECK_EQ(hwtimer_advance_max(f.t, 6 * MS, 1), 1); /* p[1]; p[4] set aside after p[2..3] */
    CHECK_EQ(hwtimer_reschedule(f.t, &p[3].to, 20 * MS), HWTIMER_OK); /* stays in place */
    CHECK_EQ(hwtimer_timeout_due_in(f.t, &p[3].to), 20 * MS);
    CHECK_EQ(hwtimer_check(f.t), 0);
    CHECK_EQ(hwtimer_advance_max(f.t, 6 * MS, 2), 2); /* p[2], p[3] filed, p[4] */
    CHECK_EQ(p[2].runs + p[4].runs, 2);
    CHECK_EQ(p[3].runs, 0);
    hwtimer_stats_get(f.t, &stats);
    CHECK_EQ(stats.refiled, 1);
    CHECK_EQ(hwtimer_next_expiry(f.t), 26 * MS);
    CHECK_EQ(hwtimer_poll_timeout_ms(f.t), 20);
    f.clock = 26 * MS;
    CHECK_EQ(hwtimer_poll(f.t), 1);
    CHECK_EQ(p[3].runs, 1);
    CHECK_EQ(f.out_of_order, 1); /* p[4]'s B (1 ms) after p[2]'s (4 ms): left first */
    f.out_of_order = 0;
    fixture_close(&f);
}

/* A periodic run counts as one: a bound of 1 runs it once a call, re-armed for the first
   period after the call's now. */
static void test_periodic_counts_one(void) {
    probe p[3];
    fixture f;
    open_with_probes(&f, p, 3, 0, 8);
    CHECK_EQ(probe_schedule_periodic(&p[0], MS, MS), HWTIMER_OK);
    CHECK_EQ(probe_schedule(&p[1], MS), HWTIMER_OK);
    CHECK_EQ(probe_schedule(&p[2], MS), HWTIMER_OK);
    f.clock = 10 * MS;
    CHECK_EQ(hwtimer_advance_max(f.t, 10 * MS, 1), 1);
    CHECK_EQ(hwtimer_advance_max(f.t, 10 * MS, 1), 1);
    CHECK_EQ(hwtimer_advance_max(f.t, 10 * MS, 1), 1);
    CHECK_EQ(probe_runs(p, 3), 3);
    CHECK_EQ(p[0].runs, 1);
    CHECK_EQ(hwtimer_pending(f.t), 1);
    CHECK_EQ(hwtimer_timeout_deadline(&p[0].to), 11 * MS);
    CHECK_EQ(hwtimer_advance_max(f.t, 10 * MS, 1), 0);
    fixture_close(&f);
}

/* What a left timeout's callback schedules runs in a later call, as a callback's always
   does. */
static void act_schedule_peer_now(probe *p) {
    p->result[0] = probe_schedule(p->peer[0], 0);
}
static void test_left_callback_schedules_later(void) {
    probe p[4];
    fixture f;
    open_with_probes(&f, p, 4, 0, 8);
    CHECK_EQ(probe_schedule(&p[0], MS), HWTIMER_OK);
    CHECK_EQ(probe_schedule(&p[1], MS), HWTIMER_OK);
    p[1].action = act_schedule_peer_now;
    p[1].peer[0] = &p[3];
    f.clock = 2 * MS;
    CHECK_EQ(hwtimer_advance_max(f.t, 2 * MS, 1), 1); /* p[0]; p[1] left */
    CHECK_EQ(hwtimer_advance_max(f.t, 2 * MS, 5), 1); /* p[1]; p[3] waits */
    CHECK_EQ(p[1].result[0], HWTIMER_OK);
    CHECK_EQ(p[3].runs, 0);
    CHECK_EQ(hwtimer_advance_max(f.t, 2 * MS, 5), 1);
    CHECK_EQ(p[3].runs, 1);
    fixture_close(&f);
}

/* From a callback: 0, as hwtimer_advance. */
static void act_advance_max(probe *p) {
    p->result[0] = (int)hwtimer_advance_max(p->f->t, UINT64_MAX, 5);
}
static void test_from_callback(void) {
    probe p[2];
    fixture f;
    open_with_probes(&f, p, 2, 0, 8);
    p[0].action = act_advance_max;
    p[0].result[0] = -1;
    CHECK_EQ(probe_schedule(&p[0], MS), HWTIMER_OK);
    CHECK_EQ(probe_schedule(&p[1], MS), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, MS), 2);
    CHECK_EQ(p[0].result[0], 0);
    fixture_close(&f);
}

/* Worker mode: 0, as hwtimer_advance; the worker runs everything itself. */
static void test_worker_returns_zero(void) {
    hwtimer *t;
    probe p;
    test_u64 clock = 5 * MS;
    if (!test_threads()) return;
    t = test_fake_worker(&clock, MS, 8);
    probe_init(&p, NULL, 0);
    CHECK_EQ(hwtimer_schedule_at(t, &p.to, 1 * MS, probe_fn, &p), HWTIMER_OK);
    CHECK_EQ(hwtimer_advance_max(t, 10 * MS, 1), 0);
    CHECK_EQ(hwtimer_stop(t, NULL, NULL) + ATOMIC_GET(&p.runs), 1);
    hwtimer_destroy(t);
}

/* Stop hands back left timeouts with the rest; destroy frees them (fixture_close). */
static void test_stop_with_left(void) {
    probe p[5];
    handed_back h;
    fixture f;
    int i;
    memset(&h, 0, sizeof h);
    open_with_probes(&f, p, 5, 0, 8);
    for (i = 0; i < 5; i++) CHECK_EQ(probe_schedule(&p[i], (uint64_t)(i + 1) * MS), HWTIMER_OK);
    CHECK_EQ(hwtimer_advance_max(f.t, 10 * MS, 2), 2);
    CHECK_EQ(hwtimer_stop(f.t, note_handed_back, &h), 3);
    CHECK_EQ(h.calls, 3);
    CHECK_EQ(h.not_cancelled, 0);
    CHECK_EQ(hwtimer_advance_max(f.t, 10 * MS, 2), 0);
    fixture_close(&f);
}

int main(void) {
    RUN_TEST(test_order_kept);
    RUN_TEST(test_zero_is_unlimited);
    RUN_TEST(test_left_run_first);
    RUN_TEST(test_left_cancel_and_move);
    RUN_TEST(test_periodic_counts_one);
    RUN_TEST(test_left_callback_schedules_later);
    RUN_TEST(test_from_callback);
    RUN_TEST(test_worker_returns_zero);
    RUN_TEST(test_stop_with_left);
    return test_finish();
}
