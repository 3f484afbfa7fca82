/* test_stress.c - threads schedule, reschedule, cancel and free nodes while callbacks fire.

   OPERATORS threads run against one timer with a 1 ms tick and delays of 0-5 ms, so firing
   and cancelling race all the time: first with callbacks on the worker thread, then
   caller-driven with another thread calling hwtimer_poll in a loop; then both again on a
   timer of 3 shards (cfg.shards: the operators arm their own nodes in their own shards, a
   shared node stays in the shard that first armed it); each for a quarter of --seconds N
   (default 6).
   Nodes are malloc'd and freed the moment hwtimer_cancel returns (sometimes kept a while
   in a quarantine first, to see that nothing runs them any more): a timer that touches a
   node after cancel returned is a use-after-free under ASan, and a wrong count otherwise.

   Kinds of nodes:
     one-shot         owned by one operator; its callback sometimes re-arms it and pokes
                      the shared nodes; some start 60 s away ("far": known to be pending,
                      so the owner may move them to 0-5 ms, and the final stop hands back
                      those still far).
     periodic-other   owned; cancelled by its owner: cancel must return 1, even while the
                      callback runs, and it never runs afterwards.
     periodic-self    owned; its callback cancels it after a few runs; exactly one of that
                      cancel and the owner's returns 1, and it never runs afterwards.
     fire-and-forget  scheduled and forgotten; its callback frees it (hwtimer.h allows that), or
                      stop hands it back and the hand-back frees it.
     shared           a static array every operator and callback schedules and cancels.

   Checks. Per owned node, every time its owner's cancel returns (nothing pending, callback
   not running): armings == runs + successful cancels, counted with atomics by the
   callbacks and the owner. Over the run: one-shot armings == runs + cancels + handed back
   by the final stop, for owned and fire-and-forget nodes, and for shared ones up to the
   armings a cancel ended beside the one it counted (see check_balance); stop's count equals the
   nodes it handed back; hwtimer_pending is 0 at the end; every run the test counted is
   in hwtimer_stats.fired and nothing else is. Threads report violations to an atomic
   counter (CHECK is for the main thread). */
#include "harness.h"
#include "harness_threads.h"

#define OPERATORS 4
#define SLOTS 64       /* owned nodes per operator */
#define QUARANTINE 8   /* cancelled nodes an operator keeps a while before freeing them */
#define SHARED 16
#define MAX_DELAY (5 * MS)
#define FAR_DELAY (60 * SEC)
#define SLOW_CALLBACK (200 * US) /* one in 16 one-shot callbacks takes this long */
#define ALIVE 0x600dF00Du
#define FREED 0xDEADBEEFu

enum kind { ONE_SHOT, PERIODIC_OTHER, PERIODIC_SELF, FIRE_AND_FORGET, SHARED_NODE };

typedef struct stress stress;

typedef struct snode {
    hwtimer_timeout to; /* first: a handed-back node converts to its snode */
    stress *s;
    enum kind kind;
    unsigned magic;   /* ALIVE while allocated */
    int far;          /* owner only: scheduled FAR_DELAY away and not moved since */
    unsigned armed;   /* atomic: armings since the owner's last check */
    unsigned runs;    /* atomic */
    unsigned cancels; /* atomic: cancels that returned 1 */
    unsigned handed;  /* times the final stop handed it back */
    unsigned dead;    /* atomic: its owner is done with it; it must not run */
    unsigned self_cancel_after; /* periodic-self: runs before it cancels itself */
    unsigned self_cancelled;    /* atomic */
} snode;

/* Totals, all atomic. "armed" counts armings (a schedule, or a reschedule of a node that
   was not pending); "cancelled" counts cancels that returned 1. */
typedef struct totals {
    uint64_t armed, runs, cancelled, handed;
} totals;

struct stress {
    hwtimer *t;
    totals one_shot;  /* owned one-shot nodes */
    totals periodic;  /* owned periodic nodes (runs are any number per arming) */
    totals forgotten; /* fire-and-forget */
    totals shared;
    uint64_t violations;
    uint64_t callback_rng; /* callbacks run one at a time, on the thread running the pass */
    snode shared_nodes[SHARED];
};

/* ---- small tools -------------------------------------------------------------------- */

static unsigned dice(uint64_t *rng, unsigned sides) {
    return (unsigned)(test_rng_next(rng) >> 33) % sides;
}

static uint64_t random_delay(uint64_t *rng) {
    return test_rng_next(rng) % (MAX_DELAY + 1);
}

static void violation(stress *s, const snode *n, const char *what) {
    if (ATOMIC_ADD(&s->violations, 1u) < 10) {
        fprintf(stderr, "violation: %s (node kind %d)\n", what, n ? (int)n->kind : -1);
    }
}

static void count(uint64_t *counter) {
    ATOMIC_ADD(counter, 1u);
}

/* Every callback starts here: the node must be allocated and its owner not done with it. */
static void check_may_run(snode *n) {
    if (n->magic != ALIVE) violation(n->s, n, "callback ran on a freed node");
    if (ATOMIC_GET(&n->dead)) violation(n->s, n, "callback ran after its owner's cancel returned");
}

static snode *node_new(stress *s, enum kind kind) {
    snode *n = (snode *)calloc_or_die(1, sizeof *n);
    n->s = s;
    n->kind = kind;
    n->magic = ALIVE;
    return n;
}

static void node_free(snode *n) {
    n->magic = FREED;
    free(n);
}

/* ---- shared nodes: anyone schedules and cancels them -------------------------------- */

static void shared_run(hwtimer_timeout *to, void *arg);

static void shared_schedule(stress *s, uint64_t *rng) {
    snode *n = &s->shared_nodes[dice(rng, SHARED)];
    if (hwtimer_schedule(s->t, &n->to, random_delay(rng), shared_run, n) == HWTIMER_OK) {
        count(&s->shared.armed);
    }
}

static void shared_cancel(stress *s, uint64_t *rng) {
    snode *n = &s->shared_nodes[dice(rng, SHARED)];
    if (hwtimer_cancel(s->t, &n->to) == 1) count(&s->shared.cancelled);
}

static void shared_poke(stress *s, uint64_t *rng) {
    if (dice(rng, 2)) {
        shared_schedule(s, rng);
    } else {
        shared_cancel(s, rng);
    }
}

static void shared_run(hwtimer_timeout *to, void *arg) {
    snode *n = (snode *)arg;
    stress *s = n->s;
    (void)to;
    count(&s->shared.runs);
    if (dice(&s->callback_rng, 4) == 0) shared_poke(s, &s->callback_rng);
}

/* ---- owned nodes: callbacks --------------------------------------------------------- */

static void one_shot_run(hwtimer_timeout *to, void *arg) {
    snode *n = (snode *)arg;
    stress *s = n->s;
    int rearm = 0;
    check_may_run(n);
    ATOMIC_ADD(&n->runs, 1u);
    count(&s->one_shot.runs);
    /* Re-arm from its own callback, sometimes after a while: a cancel that came meanwhile
       waits for the callback and must then cancel the new arming too. */
    if (dice(&s->callback_rng, 16) == 0) {
        uint64_t until = now_ns() + SLOW_CALLBACK;
        while (now_ns() < until) {
        }
        rearm = 1;
    }
    if (rearm || dice(&s->callback_rng, 4) == 0) {
        if (hwtimer_reschedule(s->t, to, random_delay(&s->callback_rng)) == HWTIMER_OK) {
            ATOMIC_ADD(&n->armed, 1u);
            count(&s->one_shot.armed);
        } else {
            violation(s, n, "re-arm from the callback failed");
        }
    }
    if (dice(&s->callback_rng, 8) == 0) shared_poke(s, &s->callback_rng);
}

static void periodic_run(hwtimer_timeout *to, void *arg) {
    snode *n = (snode *)arg;
    stress *s = n->s;
    check_may_run(n);
    if (ATOMIC_GET(&n->self_cancelled)) violation(s, n, "periodic ran after cancelling itself");
    count(&s->periodic.runs);
    if (ATOMIC_ADD(&n->runs, 1u) + 1 == n->self_cancel_after && n->kind == PERIODIC_SELF) {
        if (hwtimer_cancel(s->t, to) == 1) { /* 0: its owner's cancel got there first */
            ATOMIC_ADD(&n->cancels, 1u);
            count(&s->periodic.cancelled);
        }
        ATOMIC_SET(&n->self_cancelled, 1u); /* by itself or by its owner: it never runs again */
    }
}

static void forgotten_run(hwtimer_timeout *to, void *arg) {
    snode *n = (snode *)arg;
    (void)to;
    if (n->magic != ALIVE) violation(n->s, n, "fire-and-forget ran twice");
    count(&n->s->forgotten.runs);
    node_free(n); /* as hwtimer.h documents: a one-shot callback may free its own node */
}

/* ---- owned nodes: the owner's side -------------------------------------------------- */

/* Arms a node that is not pending: schedule the first time, reschedule when reused. */
static void owner_arm(stress *s, snode *n, uint64_t *rng, int reuse) {
    uint64_t delay = random_delay(rng);
    totals *tot = n->kind == ONE_SHOT ? &s->one_shot : &s->periodic;
    int rc;
    n->far = n->kind == ONE_SHOT && dice(rng, 8) == 0;
    if (n->far) delay = FAR_DELAY;
    if (reuse) {
        rc = hwtimer_reschedule(s->t, &n->to, delay);
    } else if (n->kind == ONE_SHOT) {
        rc = hwtimer_schedule(s->t, &n->to, delay, one_shot_run, n);
    } else {
        rc = hwtimer_schedule_periodic(s->t, &n->to, delay, 1 * MS + dice(rng, 3) * MS,
                                       periodic_run, n);
    }
    if (rc != HWTIMER_OK) {
        violation(s, n, "arming failed");
        return;
    }
    ATOMIC_ADD(&n->armed, 1u);
    count(&tot->armed);
}

static snode *owner_create(stress *s, uint64_t *rng) {
    static const enum kind kinds[] = {ONE_SHOT, ONE_SHOT, ONE_SHOT, ONE_SHOT,
                                      ONE_SHOT, PERIODIC_OTHER, PERIODIC_SELF};
    snode *n = node_new(s, kinds[dice(rng, sizeof kinds / sizeof kinds[0])]);
    n->self_cancel_after = 1 + dice(rng, 4);
    owner_arm(s, n, rng, 0);
    return n;
}

static void forget(stress *s, uint64_t *rng) {
    snode *n = node_new(s, FIRE_AND_FORGET);
    count(&s->forgotten.armed); /* before: its callback may run and free it at once */
    if (hwtimer_schedule(s->t, &n->to, random_delay(rng), forgotten_run, n) != HWTIMER_OK) {
        violation(s, n, "fire-and-forget schedule failed");
    }
}

/* The owner cancels its node. When cancel returns, nothing is pending and no callback runs,
   so the node's counts are final: every arming ran or was cancelled (once, for periodic). */
static void owner_cancel(stress *s, snode *n) {
    int rc = hwtimer_cancel(s->t, &n->to);
    totals *tot = n->kind == ONE_SHOT ? &s->one_shot : &s->periodic;
    if (rc == 1) {
        ATOMIC_ADD(&n->cancels, 1u);
        count(&tot->cancelled);
    } else if (rc != 0) {
        violation(s, n, "cancel failed");
    }
    if (n->kind == PERIODIC_OTHER && rc != 1) violation(s, n, "periodic cancel did not return 1");
    if (n->kind == ONE_SHOT ? ATOMIC_GET(&n->armed) != ATOMIC_GET(&n->runs) + ATOMIC_GET(&n->cancels)
                            : ATOMIC_GET(&n->cancels) != 1) {
        violation(s, n, "armings != runs + cancels after cancel returned");
    }
    if (hwtimer_timeout_state(&n->to) == HWTIMER_PENDING) violation(s, n, "pending after cancel");
    ATOMIC_SET(&n->dead, 1u);
}

/* Ready for another life: nothing runs it now, so the counts can start again. */
static void owner_reuse(stress *s, snode *n, uint64_t *rng) {
    ATOMIC_SET(&n->armed, 0u);
    ATOMIC_SET(&n->runs, 0u);
    ATOMIC_SET(&n->cancels, 0u);
    ATOMIC_SET(&n->self_cancelled, 0u);
    ATOMIC_SET(&n->dead, 0u);
    owner_arm(s, n, rng, 1);
}

/* ---- operators ---------------------------------------------------------------------- */

typedef struct operator {
    stress *s;
    uint64_t rng;
    unsigned quit; /* atomic */
    uint64_t ops;
    snode *slots[SLOTS];
    snode *quarantine[QUARANTINE];
    unsigned quarantine_runs[QUARANTINE]; /* runs when it went in */
    unsigned quarantine_next;
    test_thread thread;
} operator;

/* Frees a node after it sat in quarantine: it must not have run meanwhile. */
static void release(operator *op, unsigned i) {
    snode *n = op->quarantine[i];
    if (!n) return;
    if (ATOMIC_GET(&n->runs) != op->quarantine_runs[i]) violation(op->s, n, "ran in quarantine");
    node_free(n);
    op->quarantine[i] = NULL;
}

static void quarantine(operator *op, snode *n) {
    unsigned i = op->quarantine_next++ % QUARANTINE;
    release(op, i);
    op->quarantine[i] = n;
    op->quarantine_runs[i] = ATOMIC_GET(&n->runs);
}

/* Cancel, then free at once (mostly), keep in quarantine, or reuse. */
static void cancel_slot(operator *op, unsigned i) {
    snode *n = op->slots[i];
    unsigned what = dice(&op->rng, 8);
    owner_cancel(op->s, n);
    if (what < 2) {
        owner_reuse(op->s, n, &op->rng);
        return;
    }
    op->slots[i] = NULL;
    if (what == 2) {
        quarantine(op, n);
    } else {
        node_free(n);
    }
}

/* Moves a node that is known to be pending: a far one-shot, or a periodic-other. */
static void move_slot(operator *op, unsigned i) {
    snode *n = op->slots[i];
    if (!n->far && n->kind != PERIODIC_OTHER) return;
    if (hwtimer_reschedule(op->s->t, &n->to, random_delay(&op->rng)) != HWTIMER_OK) {
        violation(op->s, n, "reschedule of a pending node failed");
    }
    n->far = 0;
}

static void operate_once(operator *op) {
    unsigned i = dice(&op->rng, SLOTS), what = dice(&op->rng, 16);
    if (!op->slots[i]) {
        if (what < 3) {
            forget(op->s, &op->rng);
        } else {
            op->slots[i] = owner_create(op->s, &op->rng);
        }
    } else if (what < 8) {
        cancel_slot(op, i);
    } else if (what < 11) {
        move_slot(op, i);
    } else if (what < 13) {
        shared_poke(op->s, &op->rng);
    } /* else leave it alone */
}

/* An operator pauses 1 ms after about every PACE operations, so a slot is visited every
   millisecond or two: about as long as the delays, and half of the one-shots fire before
   their owner comes back to cancel them. Flat out, every node would be cancelled long
   before its deadline and firing would never race with cancelling. */
#define PACE 32

static void operator_main(void *arg) {
    operator *op = (operator *)arg;
    while (!ATOMIC_GET(&op->quit)) {
        operate_once(op);
        op->ops++;
        if (dice(&op->rng, PACE) == 0) sleep_ns(1 * MS);
    }
}

/* After the operators ended: cancel and free what they left, except far nodes, which the
   final stop must hand back. Returns how many far nodes are left in the slots. */
static unsigned operator_clean_up(operator *op) {
    unsigned i, far = 0;
    for (i = 0; i < QUARANTINE; i++) release(op, i);
    for (i = 0; i < SLOTS; i++) {
        snode *n = op->slots[i];
        if (!n) continue;
        if (n->far) {
            far++;
            continue;
        }
        owner_cancel(op->s, n);
        node_free(n);
        op->slots[i] = NULL;
    }
    return far;
}

/* ---- the final stop ----------------------------------------------------------------- */

static void hand_back(hwtimer_timeout *to, void *ctx) {
    snode *n = (snode *)to;
    stress *s = (stress *)ctx;
    if (hwtimer_timeout_state(to) != HWTIMER_CANCELLED) violation(s, n, "handed back, not cancelled");
    n->handed++;
    switch (n->kind) {
    case ONE_SHOT:
        if (!n->far) violation(s, n, "stop handed back a node its owner cancelled");
        count(&s->one_shot.handed);
        break;
    case FIRE_AND_FORGET:
        count(&s->forgotten.handed);
        node_free(n);
        break;
    case SHARED_NODE:
        count(&s->shared.handed);
        break;
    default:
        violation(s, n, "stop handed back a periodic node its owner cancelled");
    }
}

/* The far nodes were handed back once each, never ran, and can go. */
static void free_far_nodes(operator *op) {
    unsigned i;
    for (i = 0; i < SLOTS; i++) {
        snode *n = op->slots[i];
        if (!n) continue;
        CHECK_EQ(n->handed, 1);
        CHECK_EQ(ATOMIC_GET(&n->runs), 0);
        node_free(n);
        op->slots[i] = NULL;
    }
}

/* armings == runs + cancels + handed back; a periodic arming ends only by a cancel or
   stop, whatever its runs, so for those runs_end_armings is 0.
   A shared node is armed by any thread, so a cancel may end two of its armings and still
   return 1 (hwtimer_cancel says whether, not how many): it cancels the arming it finds
   pending while the node's callback runs, waits for the callback, and then cancels what
   was armed meanwhile too (by the callback or another thread: the node must be idle when
   the cancel returns). With two_per_cancel, each cancel counted may have ended one arming
   more: 0 <= armings - (runs + cancels + handed back) <= cancels. */
static void check_balance(const char *name, const totals *t, int runs_end_armings,
                          int two_per_cancel) {
    uint64_t armed = ATOMIC_GET(&t->armed), runs = ATOMIC_GET(&t->runs);
    uint64_t cancelled = ATOMIC_GET(&t->cancelled), handed = ATOMIC_GET(&t->handed);
    uint64_t ended_by_runs = runs_end_armings ? runs : 0;
    uint64_t ended = ended_by_runs + cancelled + handed;
    printf("  %-16s armed %7llu = ran %7llu + cancelled %7llu + handed back %4llu", name,
           (unsigned long long)armed, (unsigned long long)ended_by_runs,
           (unsigned long long)cancelled, (unsigned long long)handed);
    if (!two_per_cancel || armed == ended) {
        printf("\n");
        CHECK_EQ(armed, ended);
        return;
    }
    printf(" + %llu ended by a cancel that ended two\n",
           (unsigned long long)(armed > ended ? armed - ended : 0));
    CHECK(armed > ended && armed - ended <= cancelled);
}

/* ---- a run -------------------------------------------------------------------------- */

static double seconds = 6.0;
static int use_worker;
static unsigned use_shards;

static void init_shared(stress *s) {
    unsigned i;
    for (i = 0; i < SHARED; i++) {
        s->shared_nodes[i].s = s;
        s->shared_nodes[i].kind = SHARED_NODE;
        s->shared_nodes[i].magic = ALIVE;
    }
}

static void run_operators(stress *s, operator *ops) {
    unsigned i;
    uint64_t total_ops = 0;
    for (i = 0; i < OPERATORS; i++) {
        ops[i].s = s;
        ops[i].rng = 0x9E3779B97F4A7C15ull * (i + 1);
        test_thread_start(&ops[i].thread, operator_main, &ops[i]);
    }
    sleep_ns((uint64_t)(seconds / 4 * (double)SEC));
    for (i = 0; i < OPERATORS; i++) ATOMIC_SET(&ops[i].quit, 1u);
    for (i = 0; i < OPERATORS; i++) {
        test_thread_join(&ops[i].thread);
        total_ops += ops[i].ops;
    }
    printf("  %llu operations by %d threads in %.1f s\n", (unsigned long long)total_ops,
           OPERATORS, seconds / 4);
}

/* With the operators gone and their nodes cancelled, the shared and fire-and-forget nodes
   fire within milliseconds (re-arming each other less and less): then exactly the far
   nodes are pending. */
static void check_settles(stress *s, size_t far) {
    uint64_t give_up = now_ns() + 3 * SEC;
    while (hwtimer_pending(s->t) != far && now_ns() < give_up) sleep_ns(1 * MS);
    CHECK_EQ(hwtimer_pending(s->t), far);
}

/* Arms shared and fire-and-forget nodes once more, so that stop races with their firing. */
static void last_burst(stress *s) {
    uint64_t rng = 777;
    unsigned i;
    for (i = 0; i < 4 * SHARED; i++) {
        shared_poke(s, &rng);
        forget(s, &rng);
    }
}

static void test_stress(void) {
    static stress s;
    static operator ops[OPERATORS];
    hwtimer_config cfg;
    hwtimer_stats stats;
    test_poller poller;
    unsigned i, far = 0;
    int64_t stopped;
    uint64_t runs_seen;
    memset(&s, 0, sizeof s);
    memset(ops, 0, sizeof ops);
    init_shared(&s);
    s.callback_rng = 12345;
    real_config(&cfg, use_worker, 1 * MS, 512);
    cfg.shards = use_shards;
    s.t = create_or_die(&cfg);
    if (!use_worker) test_poller_start(&poller, s.t, 50 * US);

    run_operators(&s, ops);
    for (i = 0; i < OPERATORS; i++) far += operator_clean_up(&ops[i]);
    check_settles(&s, far);
    last_burst(&s);
    stopped = hwtimer_stop(s.t, hand_back, &s);
    if (!use_worker) test_poller_stop(&poller);

    CHECK_EQ(ATOMIC_GET(&s.violations), 0);
    CHECK_EQ(s.one_shot.handed, far);
    CHECK_EQ(stopped, s.one_shot.handed + s.forgotten.handed + s.shared.handed);
    for (i = 0; i < OPERATORS; i++) free_far_nodes(&ops[i]);
    check_balance("one-shot", &s.one_shot, 1, 0); /* armed by its owner and its callback */
    check_balance("periodic", &s.periodic, 0, 0); /* each arming ends cancelled, once */
    check_balance("fire-and-forget", &s.forgotten, 1, 0);
    check_balance("shared", &s.shared, 1, 1);
    CHECK_EQ(hwtimer_pending(s.t), 0);
    hwtimer_stats_get(s.t, &stats);
    runs_seen = s.one_shot.runs + s.periodic.runs + s.forgotten.runs + s.shared.runs;
    CHECK_EQ(stats.fired, runs_seen);
    printf("  %llu callbacks ran (%llu periodic)\n", (unsigned long long)runs_seen,
           (unsigned long long)s.periodic.runs);
    hwtimer_destroy(s.t);
}

static void parse_args(int argc, char **argv) {
    int i;
    for (i = 1; i + 1 < argc; i++) {
        if (strcmp(argv[i], "--seconds") == 0) seconds = strtod(argv[++i], NULL);
    }
    if (!(seconds > 0)) seconds = 6.0;
}

int main(int argc, char **argv) {
    static const unsigned shard_counts[] = {0, 3};
    unsigned k;
    parse_args(argc, argv);
    for (k = 0; k < 2; k++) {
        use_shards = shard_counts[k];
        for (use_worker = 1; use_worker >= 0; use_worker--) {
            printf("%s%s:\n", use_shards ? "3 shards, " : "",
                   use_worker ? "callbacks on the worker thread" : "caller-driven, a thread polls");
            RUN_TEST(test_stress);
        }
    }
    return test_finish();
}
