/* test_foreach.c - hwtimer_foreach visits exactly the pending timeouts, once each, wherever
   they are (every level of the wheel, the due list, a periodic timeout inside its own
   callback), returns how many (= hwtimer_pending), is 0 for NULL, and works on a timer with
   threads and with a worker. Its visitor asks hwtimer_is_pending and
   hwtimer_timeout_due_in about the node it visits and about another one (on a timer of
   shards, often one of another shard): the answers agree with the walk, and nothing
   deadlocks. */
#include "harness.h"
#include "fixture.h"
#include "probe.h"
#include "harness_threads.h"

enum { N = 400 };
static probe nodes[N];

/* What one hwtimer_foreach saw of `nodes`. */
typedef struct tally {
    unsigned seen[N];
    unsigned foreign;       /* visits of nodes not in `nodes` */
    unsigned wrong_arg;     /* hwtimer_timeout_arg is not the probe */
    unsigned not_pending;   /* a state other than pending, for a node not running */
    const hwtimer_timeout *running; /* the node whose callback runs, or NULL */
    hwtimer *timer;         /* the timer walked: the visitor asks it about nodes */
    unsigned asked[N];      /* the visitor asked about this node ... */
    unsigned said_pending[N]; /* ... and hwtimer_is_pending said 1 */
    unsigned due_in_disagrees; /* due_in finite for a node not pending, or the reverse */
    unsigned self_not_pending; /* hwtimer_is_pending is 0 for the node being visited */
} tally;

/* What the visitor asks: about the visited node, and about another one. */
static void ask_about(tally *t, const hwtimer_timeout *visited, size_t other) {
    int pending = hwtimer_is_pending(t->timer, &nodes[other].to);
    uint64_t due_in = hwtimer_timeout_due_in(t->timer, &nodes[other].to);
    t->self_not_pending += hwtimer_is_pending(t->timer, visited) != 1;
    t->asked[other] = 1;
    t->said_pending[other] = (unsigned)pending;
    t->due_in_disagrees += pending != (due_in != UINT64_MAX);
}

static void count_visit(hwtimer_timeout *to, void *ctx) {
    tally *t = (tally *)ctx;
    probe *p = HWTIMER_CONTAINER_OF(to, probe, to);
    if (p < nodes || p >= nodes + N) {
        t->foreign++;
        return;
    }
    t->seen[p - nodes]++;
    ask_about(t, to, ((size_t)(p - nodes) * 7 + 3) % N);
    t->wrong_arg += hwtimer_timeout_arg(to) != p;
    t->not_pending += to != t->running && hwtimer_timeout_state(to) != HWTIMER_PENDING;
}

/* One hwtimer_foreach: no node visited twice, none but `nodes`, each with its own arg and
   pending, and the count returned is the number of visits. Returns that count. */
static size_t tally_foreach(hwtimer *t, const hwtimer_timeout *running, tally *seen) {
    size_t i, n, visits = 0;
    memset(seen, 0, sizeof *seen);
    seen->running = running;
    seen->timer = t;
    n = hwtimer_foreach(t, count_visit, seen);
    CHECK_EQ(seen->foreign, 0);
    CHECK_EQ(seen->self_not_pending, 0);
    CHECK_EQ(seen->due_in_disagrees, 0);
    CHECK_EQ(seen->wrong_arg, 0);
    CHECK_EQ(seen->not_pending, 0);
    for (i = 0; i < N; i++) {
        CHECK(seen->seen[i] <= 1);
        visits += seen->seen[i];
        /* the walk is one moment of the timer: what the visitor heard is what it walked */
        if (seen->asked[i]) CHECK_EQ(seen->said_pending[i], seen->seen[i]);
    }
    CHECK_EQ(n, visits);
    return n;
}

/* The same while nothing else changes the timer: exactly the nodes pending on t are
   visited, and the count is hwtimer_pending. */
static size_t check_foreach(hwtimer *t, const hwtimer_timeout *running) {
    static tally seen;
    size_t i, n = tally_foreach(t, running, &seen);
    CHECK_EQ(n, hwtimer_pending(t));
    for (i = 0; i < N; i++) CHECK_EQ(seen.seen[i], (unsigned)hwtimer_is_pending(t, &nodes[i].to));
    return n;
}

/* Timeouts from a tick to years on a wheel of 8 slots fill every level: all visited, also
   after part of them ran or moved down and after cancels. */
static void test_every_level(void) {
    fixture f;
    uint64_t rng = 5;
    size_t i;
    open_with_probes(&f, nodes, N, 31, 8);
    CHECK_EQ(check_foreach(f.t, NULL), 0);
    for (i = 0; i < N; i++) {
        uint64_t delay = 1 + test_rng_below(&rng, 10 * YEAR >> (i % 40));
        CHECK_EQ(probe_schedule(&nodes[i], delay), HWTIMER_OK);
    }
    CHECK_EQ(check_foreach(f.t, NULL), N);
    (void)advance_to(&f, f.start + 5 * SEC);
    CHECK(hwtimer_pending(f.t) < N);
    CHECK(hwtimer_pending(f.t) > 0);
    (void)check_foreach(f.t, NULL);
    for (i = 0; i < N; i += 3) (void)probe_cancel(&nodes[i]);
    (void)check_foreach(f.t, NULL);
    (void)advance_to(&f, f.start + 3 * YEAR);
    (void)check_foreach(f.t, NULL);
    for (i = 0; i < N; i++) (void)probe_cancel(&nodes[i]);
    CHECK_EQ(check_foreach(f.t, NULL), 0);
    fixture_close(&f);
}

/* Timeouts waiting in the due list (a deadline already passed, and one scheduled from a
   callback) are visited too. */
static void act_schedule_peer_and_tally(probe *p) {
    act_schedule_peer(p);
    p->pending_seen[0] = check_foreach(p->f->t, &p->to);
}

static void test_due_list(void) {
    fixture f;
    open_with_probes(&f, nodes, N, 0, 8);
    CHECK_EQ(advance_to(&f, tick_at(&f, 100)), 0);
    CHECK_EQ(probe_schedule_at(&nodes[0], tick_at(&f, 3)), HWTIMER_OK); /* passed */
    CHECK_EQ(probe_schedule_at(&nodes[1], tick_at(&f, 100)), HWTIMER_OK); /* due now */
    CHECK_EQ(probe_schedule(&nodes[2], HOUR), HWTIMER_OK);
    CHECK_EQ(check_foreach(f.t, NULL), 3);

    nodes[0].action = act_schedule_peer_and_tally;
    nodes[0].peer[0] = &nodes[3];
    nodes[0].delay = 0; /* due at once: waits in the due list for the next advance */
    CHECK_EQ(advance_to(&f, f.clock), 2);
    CHECK_EQ(nodes[0].pending_seen[0], 3); /* nodes 1 (its boundary is later), 2 and 3 */
    CHECK_EQ(nodes[3].runs, 0);
    CHECK_EQ(check_foreach(f.t, NULL), 2);
    CHECK_EQ(advance_to(&f, tick_at(&f, 101)), 1);
    CHECK_EQ(check_foreach(f.t, NULL), 1);
    fixture_close(&f);
}

/* A periodic timeout inside its own callback is pending, so it is visited, once. */
static void act_tally(probe *p) {
    p->pending_seen[0] = check_foreach(p->f->t, &p->to);
}

static void test_periodic_in_own_callback(void) {
    fixture f;
    open_with_probes(&f, nodes, N, 0, 8);
    nodes[0].action = act_tally;
    CHECK_EQ(probe_schedule_periodic(&nodes[0], 2 * MS, 3 * MS), HWTIMER_OK);
    CHECK_EQ(probe_schedule(&nodes[1], 9 * MS), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, tick_at(&f, 2)), 1);
    CHECK_EQ(nodes[0].pending_seen[0], 2);
    CHECK_EQ(advance_to(&f, tick_at(&f, 5)), 1);
    CHECK_EQ(nodes[0].pending_seen[0], 2);
    CHECK_EQ(check_foreach(f.t, NULL), 2);
    fixture_close(&f);
}

/* NULL timer or visitor: 0, and no visit. */
static void test_null(void) {
    fixture f;
    static tally seen;
    open_with_probes(&f, nodes, N, 0, 8);
    CHECK_EQ(probe_schedule(&nodes[0], MS), HWTIMER_OK);
    memset(&seen, 0, sizeof seen);
    CHECK_EQ(hwtimer_foreach(NULL, count_visit, &seen), 0);
    CHECK_EQ(hwtimer_foreach(f.t, NULL, &seen), 0);
    CHECK_EQ(seen.seen[0], 0);
    CHECK_EQ(check_foreach(f.t, NULL), 1); /* and a NULL ctx is the visitor's business */
    fixture_close(&f);
}

/* With a worker (threaded modes): the timeouts still waiting are visited under the lock
   while the worker runs the others. */
static void test_worker(void) {
    hwtimer *t;
    size_t i;
    unsigned fired = 0;
    if (!test_threads()) return; /* a worker needs threads */
    t = worker_timer(MS, 64);
    probes_init(nodes, N, NULL);
    for (i = 0; i < N; i++) {
        uint64_t delay = i % 4 == 0 ? (1 + i % 20) * MS : HOUR + i * MS;
        CHECK_EQ(hwtimer_schedule(t, &nodes[i].to, delay, probe_fn, &nodes[i]), HWTIMER_OK);
    }
    for (i = 0; i < 20; i++) { /* while the worker fires */
        static tally seen;
        (void)tally_foreach(t, NULL, &seen);
        sleep_ns(MS / 2);
    }
    for (i = 0; i < N; i += 4) {
        CHECK(wait_for_count(&nodes[i].runs, 1, 5 * SEC));
    }
    for (i = 0; i < N; i++) fired += ATOMIC_GET(&nodes[i].runs);
    CHECK_EQ(fired, N / 4);
    CHECK_EQ(check_foreach(t, NULL), N - N / 4);
    CHECK_EQ(hwtimer_check(t), 0);
    hwtimer_destroy(t);
}

int main(void) {
    RUN_TEST(test_every_level);
    RUN_TEST(test_due_list);
    RUN_TEST(test_periodic_in_own_callback);
    RUN_TEST(test_null);
    RUN_TEST(test_worker);
    return test_finish();
}
