/* explore.c - systematic exploration of hwtimer's thread interleavings.

   WHAT IT DOES
   Stress tests find what the OS scheduler happens to produce. This test instead runs the
   timer's threads (workers) and the test's threads one at a time under a deterministic
   scheduler (sched.c), which is a struct hwtimer_threads: every lock, unlock, wait,
   broadcast, thread start and join of the timer is a point where the scheduler may switch
   threads, and so are the ex_yield() calls the scenarios place between API calls and inside
   every callback (one before its body: a cancel, stop or reschedule can land while it
   runs). Each thread is a real POSIX thread, but only the one holding the token runs, so an
   execution is a function of its choices alone, and the list of choices replays it.

   Time is a fake clock: OS time moves only when the scheduler takes "time passes", which
   wakes the earliest timed waiter (a worker's sleep) at its deadline. That option is there
   whenever a thread sleeps with a timeout, so a worker can also wake while other threads
   are mid-call. A scenario can make the clock jump without OS time moving (ex_clock_jump),
   as a suspend or a test clock does: sleeps measured in OS time then oversleep.

   SEARCH
   - Bounded exhaustive: every schedule with at most B preemptions (CHESS's bound: a switch
     away from a thread that could go on is a preemption, a switch where it blocks is free).
     Stateless: each schedule runs from scratch, and the search backtracks on the recorded
     decisions.
   - PCT: N schedules with random thread priorities and depth-1 random priority change
     points (Burckhardt et al. 2010), for what is too big to enumerate.
   A thread that could run but was passed over 40 times in a row runs next (fairness): a
   worker whose work is always due would otherwise starve the rest in every schedule the
   search tries, and report livelocks that no fair OS scheduler produces. A thread blocked
   on a mutex keeps its count while others hold it (a waiter gets the lock in the end):
   a timer of shards' worker gives its own lock up for every pass and takes it back after,
   and a thread that waits for that lock would otherwise be passed over only a few times
   in a row, again and again.

   WHAT IS CHECKED
   A ledger entry per node (the hwtimer_timeout lives apart, so that it can be freed right
   after its cancel while the entry stays) counts armings, runs, cancels, hand-backs. A
   freed node is poisoned and kept until the execution ends, so that a timer that still
   reads it reads garbage the checks notice; under ASan its memory is also unaddressable.
   - After every scheduling decision, for each timer whose mutex is free: hwtimer_pending is
     exact (it equals the live nodes that are PENDING plus the periodic ones whose callback
     runs, EXPIRED with a period), so a freed node still counted shows; and after each
     locked section, hwtimer_check (every invariant of the wheel) holds.
   - In every callback: at most one run per arming; never two at once; never after
     hwtimer_cancel returned or after the node was freed.
   - After each hwtimer_cancel from another thread than the callback's: the callback is
     not running; most scenarios then free the node at once (under ASan, a later touch by
     the timer is a crash, which prints the schedule too).
   - hwtimer_try_cancel from another thread never waits: 1 (the node never runs), 0 (a
     one-shot that ran), or HWTIMER_ERUNNING (its callback runs: once it returns nothing
     runs again, a periodic one is not re-armed); hwtimer_retire returns with the callback
     not running and the node RETIRED, and every arming begun after it returned (another
     thread's reschedule, a periodic callback's own) is refused.
   - After each stop: it returned the number it handed back, each handed-back node is live
     and CANCELLED, no callback runs, hwtimer_pending is 0; at the end every arming was
     run, cancelled or handed back, exactly once.
   - wake_fn: never with the timer's lock held, never inside advance or a callback, never
     more often than the loop was told a time.
   - fork: after ex_fork (the other threads never run again, holding what they hold) and
     hwtimer_fork_child, the child runs what was pending and the periodic goes on.
     fork_each_point forks at each scheduling point of the worker in turn (asleep, waiting
     for a lock, holding it at a clock read, in a pass, in a callback; on a timer of
     shards also between the shards' steps and in its answer), fork_in_callback from a
     callback on the worker; every arming runs once, at or after its deadline.
   - Every callback on a worker runs at or after its deadline (the fake clock).
   - Liveness. Deadlock: every thread blocked, none with a timeout. Lost wake-up: every
     thread blocked, and a worker sleeps although work is due by the clock the timer last
     read, an event loop sleeps past work due earlier than the time it was told (wake_fn
     not called), or a thread waits on done_cond although no callback and no pass is under
     way.
     Livelock: 20000 decisions without the execution ending (a cancel starved forever).
   Expected failures: three scenarios must fail (each runs in a child process, which must
   exit 1 or die of a signal): the cross-timer cancel cycle hwtimer.h warns of, and two
   known gaps (see those scenarios): a node moved to another timer by its own callback and
   cancelled there, and hwtimer_foreach/hwtimer_check reading a node its one-shot callback
   freed.

   WHAT IT CANNOT SEE
   - Lock-free reads. hwtimer_timeout_state and hwtimer_timeout_deadline, and the state
     read of a node pending on another timer (hwtimer__is_pending_elsewhere: under this
     timer's lock, not the owner's), are atomic loads, not scheduling points: no switch can
     fall between such a load and the hook call that follows it. They are covered from both
     sides: the hook call right after the read is a point, so every order of the writer's
     locked section against "read, then lock" is explored (the load sees the value before
     or after the writer's section, never a torn one); and the per-decision check itself
     reads every node's state lock-free at every point and holds it against the pending
     count, so a state that is wrong at any point between two hooks shows. What stays
     unseen is a reordering by the CPU or the compiler (release/acquire pairs, a plain
     field such as `owner` read under another timer's lock): the TSan runs of the stress
     suites are for that.
   - Inside a locked section: the hooks are the points, so a thread that holds a lock is
     switched away from only at a broadcast or thread start it makes there. Others see
     (and the checks read) the state between sections, hardly ever mid-section; a fork
     (ex_fork) leaves a worker holding the lock only at those points too, and at the
     clock reads of fork_each_point (its clock is a scheduling point). A real fork never
     comes mid-section, with a list half relinked: hwtimer.h's fork handlers take every
     worker's lock first (test_fork forks real processes at varied moments of passes).
   - Plain data races in general: one thread runs at a time, so a race shows only through
     its effect on the checks.
   - Spurious wake-ups, and a timed wait that ends while others could run without "time
     passes" being taken: a waiter wakes only by a broadcast or at its deadline, on the
     fake OS clock.
   - Only what the scenarios do: timers of 8 slots and a 1 ms tick, a few nodes and threads;
     with --shards 2 (the CI's second run) every timer is a timer of 2 shards, whose checks
     read every shard (pending, invariants, next expiry, running node, locks held). The
     compare-and-swap that claims a fresh node for a shard is a lock-free step, not a
     scheduling point (the model test and the TSan stress runs cover it).

   RUNNING
   explore                      the CI run (meson test --suite explore): each scenario
                                with its own bound, then 500-2000 PCT schedules, seed 1
   explore --list               the scenarios
   explore --scenario NAME [--bound B] [--max-runs N] [--pct N --seed S --depth D]
   explore --shards N ...       every timer a group of N shards (cfg.shards): the CI runs
                                the search again with 2, each bounded search capped at
                                3000 schedules (--max-runs; never the scenarios that
                                must fail: they search until they fail)
   explore --scenario fork_each_point --fork-point K   only the fork at the worker's K-th
                                point (a failure's replay line names K)
   A long run (hours; a new seed each time):
       explore --bound 4 --max-runs 2000000 --pct 200000 --seed "$RANDOM"
   A failure prints the event trace, and its schedule as "decision:option,..." (option 0,
   the default, left out) with the command that replays it:
       explore --scenario NAME --replay 'CHOICES'  (add --trace to print every event)
   A PCT failure also replays by its seed: --pct-seed S --depth D --len L.
   Against another copy of the header (a planted bug), build with its directory first, from
   the repository root:
       cc -std=gnu99 -g -fsanitize=address -I/tmp/plant -I. test/explore/explore.c
          test/explore/sched.c -lpthread */
#define _POSIX_C_SOURCE 200809L
#define HWTIMER_IMPLEMENTATION
#include "hwtimer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sched.h"

#define MS 1000000u
#define HOUR (3600u * 1000u * (uint64_t)MS)

enum { MAX_TIMERS = 2, MAX_NODES = 6, FREE_IT = 1, KEEP_IT = 0 };

/* ---------------------------------------------------------------------------------
   The world of one execution: timers, and a ledger entry per node
   --------------------------------------------------------------------------------- */

typedef struct node node;
typedef void (*node_body)(node *n);

/* What the test knows of a node. The hwtimer_timeout itself is allocated apart, so that it
   can be freed right after its cancel while the ledger stays. */
struct node {
    hwtimer_timeout *to; /* NULL once freed */
    const void *stale;   /* the address it had */
    void *quarantined;   /* freed and poisoned (node_free) */
    int timer;
    uint64_t period;
    node_body body; /* what its callback does */
    int peer;       /* the other node a body acts on */
    int armed;      /* armings not yet run, cancelled or handed back */
    int inexact;    /* rescheduled: `armed` is only an upper bound */
    int runs, running, runner; /* running: callbacks under way */
    int moved; /* armed on another timer by its callback: two runs may overlap */
    int quiet; /* a cancel returned and it was not armed since: it must not run */
    int handed_back;
    int result; /* what its body got */
    int done;   /* its body finished */
    int retired; /* hwtimer_retire returned: every later arming must be refused */
};

static struct {
    hwtimer *t[MAX_TIMERS];
    int alive[MAX_TIMERS]; /* created and not destroyed */
    int worker[MAX_TIMERS];
    uint64_t start[MAX_TIMERS];
    int stopped[MAX_TIMERS];
    unsigned checked_at[MAX_TIMERS]; /* ex_mutex_releases at the last hwtimer_check */
    node nodes[MAX_NODES];
    int nnodes;
    int test_threads[EX_MAX_THREADS];
    int ntest;
    struct event_loop { /* the loop that drives a caller-driven timer with wake_fn */
        union { char bytes[64]; void *p; uint64_t u; long double ld; } mutex, cond;
        int thread, woken, stop, in_advance;
        uint64_t sleeps_until; /* the time its sleep ends (UINT64_MAX: never), 0: awake */
        unsigned reports, wakes;
    } loop;
} w;

static int node_index(const node *n) { return (int)(n - w.nodes); }
static hwtimer *timer_of(const node *n) { return w.t[n->timer]; }

static unsigned explore_shards; /* --shards N: every timer a timer of N shards */

static void config_for_explore(hwtimer_config *cfg, int worker) {
    hwtimer_config_default(cfg);
    cfg->tick_ns = MS;
    cfg->ticks_per_wheel = 8;
    cfg->clock_fn = ex_clock;
    cfg->threads = ex_threads();
    cfg->worker = worker;
    cfg->shards = explore_shards;
}

/* A timer's wheels and what their locks guard, for the checks, which read them directly
   (hwtimer.h is included with its implementation). */
static unsigned parts_of(const hwtimer *t) { return t->shards; }
static hwtimer__shard *part_of(const hwtimer *t, unsigned k) { return hwtimer__shard_at(t, k); }

/* No lock of t's is held: its state (every wheel's) is consistent. */
static int timer_is_free(hwtimer *t) {
    unsigned k;
    if (!ex_mutex_is_free(t->mutex)) return 0;
    for (k = 0; k < parts_of(t); k++) {
        if (!ex_mutex_is_free(part_of(t, k)->mutex)) return 0;
    }
    return 1;
}

static int timer_lock_is_mine(hwtimer *t) {
    unsigned k;
    if (ex_mutex_is_mine(t->mutex)) return 1;
    for (k = 0; k < parts_of(t); k++) {
        if (ex_mutex_is_mine(part_of(t, k)->mutex)) return 1;
    }
    return 0;
}

static size_t timer_pending_now(hwtimer *t) {
    size_t n = 0;
    unsigned k;
    for (k = 0; k < parts_of(t); k++) n += part_of(t, k)->wheel.pending;
    return n;
}

static uint64_t timer_next_now(hwtimer *t) {
    uint64_t next = UINT64_MAX, tick;
    unsigned k;
    for (k = 0; k < parts_of(t); k++) {
        hwtimer__wheel *wh = &part_of(t, k)->wheel;
        if (hwtimer__wheel_next_tick(wh, &tick) && hwtimer__tick_time(&wh->geo, tick) < next) {
            next = hwtimer__tick_time(&wh->geo, tick);
        }
    }
    return next;
}

/* The node whose callback runs on t (in any wheel), or NULL. */
static hwtimer_timeout *timer_running(hwtimer *t) {
    unsigned k;
    for (k = 0; k < parts_of(t); k++) {
        if (part_of(t, k)->run.node) return part_of(t, k)->run.node;
    }
    return NULL;
}

/* hwtimer_check without its lock hooks (their calls would be scheduling points): only
   when every lock of t is free, from the one thread that runs now. */
static int check_unlocked(hwtimer *t) {
    const hwtimer_threads *threads = t->threads;
    int invariant;
    t->threads = NULL;
    invariant = hwtimer_check(t);
    t->threads = threads;
    return invariant;
}

/* Locked sections of t's (and of each wheel's own lock) that have ended. */
static unsigned timer_releases(hwtimer *t) {
    unsigned n = ex_mutex_releases(t->mutex);
    unsigned k;
    for (k = 0; k < parts_of(t); k++) {
        if (part_of(t, k)->mutex != t->mutex) n += ex_mutex_releases(part_of(t, k)->mutex);
    }
    return n;
}

static void timer_create_with(int i, const hwtimer_config *cfg) {
    int err;
    w.start[i] = ex_clock(NULL); /* what create reads: no time passes inside it */
    err = hwtimer_create(&w.t[i], cfg);
    if (err) ex_fail("hwtimer_create: %s", hwtimer_strerror(err));
    w.alive[i] = 1;
    w.worker[i] = cfg->worker;
}

static void timer_open(int i, int worker) {
    hwtimer_config cfg;
    config_for_explore(&cfg, worker);
    timer_create_with(i, &cfg);
}

static void node_fire(hwtimer_timeout *to, void *arg);

/* The nodes' memory: node i at the same address in every execution, so that a schedule
   replays exactly (a busy slot picks a node's list by its address; malloc under ASan would
   hand out a new address each time). */
static hwtimer_timeout node_memory[MAX_NODES];

#ifdef EX_ASAN
void __asan_poison_memory_region(void const volatile *addr, size_t size);
void __asan_unpoison_memory_region(void const volatile *addr, size_t size);
#define EX_POISON(p, n) __asan_poison_memory_region(p, n)
#define EX_UNPOISON(p, n) __asan_unpoison_memory_region(p, n)
#else
#define EX_POISON(p, n) ((void)(p), (void)(n))
#define EX_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

static node *node_new(int timer, node_body body) {
    node *n = &w.nodes[w.nnodes++];
    memset(n, 0, sizeof *n);
    n->to = &node_memory[node_index(n)];
    memset(n->to, 0, sizeof *n->to);
    n->stale = n->to;
    n->timer = timer;
    n->body = body;
    return n;
}

/* What a freed node holds: garbage that looks like a periodic node whose callback runs
   (EXPIRED, a nonzero period), so that a timer that still reads it acts on it visibly. */
static void poison(hwtimer_timeout *to) {
    memset(to, 0x5A, sizeof *to);
    to->state = HWTIMER_EXPIRED;
}

/* Frees the node: its memory is poisoned and kept until the execution ends. A timer that
   still reads it sees the poison, which the checks notice, and a write to it shows at the
   end; under ASan any access to it is reported at once. */
static void node_free(node *n) {
    poison(n->to);
    n->quarantined = n->to;
    EX_POISON(n->to, sizeof *n->to);
    n->to = NULL;
}

/* An arming is counted before the call: the callback may run before the call returns. */
static int node_arm(node *n, uint64_t delay, uint64_t period) {
    int quiet = n->quiet, err;
    n->quiet = 0;
    n->armed++;
    n->period = period;
    err = period ? hwtimer_schedule_periodic(timer_of(n), n->to, delay, period, node_fire, n)
                 : hwtimer_schedule(timer_of(n), n->to, delay, node_fire, n);
    if (err) {
        n->armed--;
        n->quiet = quiet;
    }
    return err;
}

static void check_poison_intact(const node *n) {
    hwtimer_timeout intact;
    poison(&intact);
    if (n->quarantined) EX_UNPOISON(n->quarantined, sizeof intact);
    if (n->quarantined && memcmp(n->quarantined, &intact, sizeof intact)) {
        ex_fail("node %d was written to after it was freed", node_index(n));
    }
}

static int node_schedule(node *n, uint64_t delay) { return node_arm(n, delay, 0); }

static void node_must_schedule(node *n, uint64_t delay, uint64_t period) {
    int err = node_arm(n, delay, period);
    if (err) ex_fail("node %d: schedule: %s", node_index(n), hwtimer_strerror(err));
}

static int node_reschedule(node *n, uint64_t delay) {
    int err;
    n->quiet = 0;
    n->armed++;
    n->inexact = 1;
    err = hwtimer_reschedule(timer_of(n), n->to, delay);
    if (err) ex_fail("node %d: reschedule: %s", node_index(n), hwtimer_strerror(err));
    return err;
}

/* Cancels on timer `timer`; from another thread than its callback's, checks that the
   callback is not running, and frees the node at once if asked. Returns what
   hwtimer_cancel returned: HWTIMER_EINVAL only for a node pending on another timer. */
static int node_cancel_on(node *n, int timer, int free_it) {
    int own = n->running && n->runner == ex_self();
    int r = hwtimer_cancel(w.t[timer], n->to);
    if (n->timer != timer) return r; /* it moved: not pending here (0) or pending there */
    if (r < 0) ex_fail("node %d: cancel: %s", node_index(n), hwtimer_strerror(r));
    if (r == 1) n->armed--;
    if (!own && n->running) {
        ex_fail("node %d: hwtimer_cancel returned while its callback runs on T%d",
                node_index(n), n->runner);
    }
    n->quiet = 1;
    if (free_it) node_free(n);
    return r;
}

static int node_cancel(node *n, int free_it) { return node_cancel_on(n, n->timer, free_it); }

static void node_fire(hwtimer_timeout *to, void *arg) {
    node *n = (node *)arg;
    int i = node_index(n);
    if (!n->to) ex_fail("node %d: its callback runs after it was freed", i);
    if (n->to != to) ex_fail("node %d: its callback gets another node", i);
    if (n->running && !n->moved) ex_fail("node %d: its callback runs twice at once", i);
    if (n->quiet) ex_fail("node %d: its callback runs after hwtimer_cancel returned", i);
    if (!n->period && n->armed < 1) ex_fail("node %d: runs more often than it was armed", i);
    if (!n->period) n->armed--;
    /* At or after its deadline, on a worker (advance runs at the time it is given); while
       its state is EXPIRED, the deadline is the one that fired (an arming since moved it) */
    if (w.worker[n->timer] && hwtimer_timeout_state(to) == HWTIMER_EXPIRED &&
        ex_clock_peek() < hwtimer_timeout_deadline(to)) {
        ex_fail("node %d: runs at %llu ns, before its deadline %llu ns", i,
                (unsigned long long)ex_clock_peek(),
                (unsigned long long)hwtimer_timeout_deadline(to));
    }
    n->running++;
    n->runner = ex_self();
    n->runs++;
    ex_yield(); /* a cancel, stop or reschedule may come while it runs */
    if (n->body) n->body(n);
    n->running--;
}

static int node_ran(void *arg) { return ((node *)arg)->runs > 0; }
static int node_is_done(void *arg) { return ((node *)arg)->done; }

/* ---- stop and the end of an execution ---- */

static int64_t handed_back_count;

static void hand_back(hwtimer_timeout *to, void *ctx) {
    int i;
    (void)ctx;
    for (i = 0; i < w.nnodes; i++) {
        node *n = &w.nodes[i];
        if (n->to != to) continue;
        if (hwtimer_timeout_state(to) != HWTIMER_CANCELLED) {
            ex_fail("node %d: handed back by stop in state %d", i, hwtimer_timeout_state(to));
        }
        n->handed_back++;
        n->armed--;
        n->quiet = 1;
        handed_back_count++;
        return;
    }
    ex_fail("stop hands back %p, a freed or unknown node", (void *)to);
}

/* Stops timer i and checks what it hands back. */
static void timer_stop(int i) {
    int64_t r;
    int k;
    handed_back_count = 0;
    r = hwtimer_stop(w.t[i], hand_back, NULL);
    if (w.stopped[i] && r != 0) ex_fail("timer %d: a second stop returned %lld", i, (long long)r);
    if (r < 0) ex_fail("timer %d: stop: %s", i, hwtimer_strerror((int)r));
    if (r != handed_back_count) {
        ex_fail("timer %d: stop returned %lld and handed back %lld", i, (long long)r,
                (long long)handed_back_count);
    }
    w.stopped[i] = 1;
    for (k = 0; k < w.nnodes; k++) {
        if (w.nodes[k].timer == i && w.nodes[k].running) {
            ex_fail("timer %d: stop returned while node %d's callback runs", i, k);
        }
    }
    if (hwtimer_pending(w.t[i]) != 0) ex_fail("timer %d: pending after stop", i);
}

static void timer_destroy(int i) {
    w.alive[i] = 0; /* from here on the checks leave it alone */
    hwtimer_destroy(w.t[i]);
}

static void spawn(void (*fn)(void *), void *arg) {
    w.test_threads[w.ntest++] = ex_spawn(fn, arg);
}

/* Joins the test threads, stops and destroys the live timers, and checks the ledger:
   every arming was run, cancelled or handed back, once. */
static void world_end(void) {
    int i;
    for (i = 0; i < w.ntest; i++) ex_join(w.test_threads[i]);
    for (i = 0; i < MAX_TIMERS; i++) {
        if (!w.alive[i]) continue;
        timer_stop(i);
        timer_destroy(i);
    }
    for (i = 0; i < w.nnodes; i++) {
        node *n = &w.nodes[i];
        if (n->handed_back > 1) ex_fail("node %d: handed back %d times", i, n->handed_back);
        if (n->armed != 0 && !(n->inexact && n->armed > 0)) {
            ex_fail("node %d: %d armings neither ran, nor were cancelled or handed back", i,
                    n->armed);
        }
        check_poison_intact(n);
        if (n->to) node_free(n);
    }
}

/* ---------------------------------------------------------------------------------
   The checks the scheduler runs
   --------------------------------------------------------------------------------- */

/* Pending as the nodes tell it: PENDING, or a periodic one whose callback runs. */
static size_t pending_by_nodes(int timer) {
    size_t count = 0;
    int i;
    for (i = 0; i < w.nnodes; i++) {
        const node *n = &w.nodes[i];
        int state;
        if (n->timer != timer || !n->to) continue;
        state = hwtimer_timeout_state(n->to);
        if (state == HWTIMER_PENDING) count++;
        if (state == HWTIMER_EXPIRED && hwtimer_timeout_period(n->to)) count++;
    }
    return count;
}

static const node *freed_node_at(const void *p) {
    int i;
    for (i = 0; i < w.nnodes; i++) {
        if (!w.nodes[i].to && w.nodes[i].stale == p) return &w.nodes[i];
    }
    return NULL;
}

/* At every decision, for each timer whose mutex is free (its state is consistent). */
static void check_step(void) {
    int i;
    for (i = 0; i < MAX_TIMERS; i++) {
        hwtimer *t = w.t[i];
        size_t expected;
        int invariant;
        if (!w.alive[i] || !timer_is_free(t)) continue;
        expected = pending_by_nodes(i);
        if (timer_pending_now(t) != expected) {
            ex_fail("timer %d: hwtimer_pending is %zu, the nodes say %zu", i,
                    timer_pending_now(t), expected);
        }
        /* hwtimer_check (without its lock hooks) once per locked section that ended: the
           wheel changes only under the lock. Not while `running` names a node freed
           after its callback returned: hwtimer_check reads it (sc_inspect_vs_freeing). */
        if (timer_releases(t) == w.checked_at[i] || freed_node_at(timer_running(t))) continue;
        w.checked_at[i] = timer_releases(t);
        invariant = check_unlocked(t);
        if (invariant) ex_fail("timer %d: hwtimer_check finds invariant %d broken", i, invariant);
    }
}

/* The event loop sleeps past work that is due: a schedule that should have called
   wake_fn did not (lower levels run before higher ones, so work due before the time the
   loop was told means a timeout armed with an earlier boundary). */
static void check_loop_asleep(hwtimer *t) {
    uint64_t next;
    if (!w.loop.sleeps_until || ex_waits_on(w.loop.thread) != &w.loop.cond) return;
    next = timer_next_now(t);
    if (next < w.loop.sleeps_until) {
        ex_fail("lost wake-up: the loop sleeps until %llu ns, work is due at %llu ns, and "
                "wake_fn was not called", (unsigned long long)w.loop.sleeps_until,
                (unsigned long long)next);
    }
}

/* Every thread is blocked and time is about to pass: is anyone asleep who should not be? */
static void check_quiet(void) {
    int i, k;
    for (i = 0; i < MAX_TIMERS; i++) {
        hwtimer *t = w.t[i];
        int worker;
        unsigned p;
        if (!w.alive[i] || !timer_is_free(t)) continue;
        for (k = 0; k < ex_thread_count(); k++) {
            int waits = ex_waits_on(k) == t->done_cond && !t->pass.on && !timer_running(t);
            for (p = 0; p < parts_of(t); p++) { /* a wheel's own: a cancel's */
                hwtimer__shard *q = part_of(t, p);
                waits |= q->done_cond != t->done_cond && ex_waits_on(k) == q->done_cond &&
                         !q->run.node;
            }
            if (waits) {
                ex_fail("lost wake-up: T%d waits for a callback or pass of timer %d to "
                        "end, and none is under way", k, i);
            }
        }
        worker = w.worker[i] ? ex_thread_started_with(t) : -1;
        if (worker >= 0 && ex_waits_on(worker) == t->worker.wake_cond &&
            timer_next_now(t) <= ex_clock_seen()) {
            ex_fail("lost wake-up: the worker of timer %d sleeps, work was due at %llu ns and "
                    "the clock read %llu ns", i, (unsigned long long)timer_next_now(t),
                    (unsigned long long)ex_clock_seen());
        }
        if (!w.worker[i]) check_loop_asleep(t);
    }
}

/* ---------------------------------------------------------------------------------
   Scenarios
   --------------------------------------------------------------------------------- */

/* A node on timer 0, armed with delay. */
static node *armed_node(node_body body, uint64_t delay, uint64_t period) {
    node *n = node_new(0, body);
    node_must_schedule(n, delay, period);
    return n;
}

/* cancel vs the worker firing: the canceller frees the node at once */
static void cancel_and_free_first(void *arg) {
    ex_yield();
    node_cancel(&w.nodes[*(int *)arg], FREE_IT);
}
static void sc_cancel_vs_fire(void) {
    static int first = 0;
    timer_open(0, 1);
    armed_node(NULL, MS, 0);
    spawn(cancel_and_free_first, &first);
    world_end();
}

/* a callback that re-arms itself at once, always, vs a cancel that must wait for it */
static void rearm_now(node *n) { node_must_schedule(n, 0, 0); }
static void cancel_after_first_run(void *arg) {
    node *n = (node *)arg;
    ex_await(node_ran, n);
    if (node_cancel(n, FREE_IT) != 1) ex_fail("cancel of an always re-armed node did not return 1");
}
static void sc_rearm_vs_waiting_cancel(void) {
    timer_open(0, 1);
    spawn(cancel_after_first_run, armed_node(rearm_now, MS, 0));
    world_end();
}

/* a periodic node cancels itself in its second run, then time goes on */
static void cancel_self_on_second_run(node *n) {
    if (n->runs != 2) return;
    n->result = node_cancel(n, KEEP_IT);
    n->done = 1;
}
static void sc_periodic_cancel_self(void) {
    node *p, *later;
    timer_open(0, 1);
    p = armed_node(cancel_self_on_second_run, MS, MS);
    ex_await(node_is_done, p);
    later = armed_node(NULL, 3 * MS, 0); /* time passes: the periodic must stay quiet */
    ex_await(node_ran, later);
    if (p->result != 1) ex_fail("a periodic cancelling itself got %d, not 1", p->result);
    if (p->runs != 2) ex_fail("the periodic ran %d times", p->runs);
    world_end();
}

/* a periodic node cancelled by another thread, while it runs or between runs */
static void cancel_periodic(void *arg) {
    node *n = (node *)arg;
    ex_await(node_ran, n);
    ex_yield();
    if (node_cancel(n, FREE_IT) != 1) ex_fail("cancel of a periodic did not return 1");
}
static void sc_periodic_cancel_other(void) {
    timer_open(0, 1);
    spawn(cancel_periodic, armed_node(NULL, MS, MS));
    world_end();
}

/* stop vs a schedule from another thread vs a running callback */
static void stop_timer0(void *arg) {
    (void)arg;
    ex_yield();
    timer_stop(0);
}
static void schedule_late(void *arg) {
    int err;
    ex_yield();
    err = node_schedule((node *)arg, 2 * MS);
    if (err != HWTIMER_OK && err != HWTIMER_ESTOPPED) {
        ex_fail("schedule racing stop: %s", hwtimer_strerror(err));
    }
}
static void sc_stop_vs_schedule_vs_callback(void) {
    timer_open(0, 1);
    armed_node(NULL, MS, 0);
    armed_node(NULL, HOUR, 0);
    spawn(stop_timer0, NULL);
    spawn(schedule_late, node_new(0, NULL));
    world_end();
}

/* the same with a caller-driven timer: stop vs another thread's advance in a callback */
static void advance_timer0(void *arg) {
    (void)arg;
    hwtimer_advance(w.t[0], w.start[0] + 2 * MS);
}
static void sc_stop_vs_advance(void) {
    timer_open(0, 0);
    armed_node(NULL, MS, 0);
    armed_node(NULL, HOUR, 0);
    spawn(advance_timer0, NULL);
    spawn(stop_timer0, NULL);
    world_end();
}

/* destroy from a callback, on the worker and in another thread's advance */
static void destroy_timer0(node *n) {
    timer_destroy(0);
    n->done = 1;
}
static int timer0_thread_ended(void *arg) {
    (void)arg;
    return ex_thread_started_with(w.t[0]) < 0;
}
/* The node pending at the destroy is freed once the destroy returned, or only once the
   worker that frees the timer has ended. */
static void destroy_from_callback(int free_pending_at_once) {
    node *a;
    timer_open(0, 1);
    armed_node(NULL, 2 * MS, 0); /* pending at the destroy: dropped */
    a = armed_node(destroy_timer0, MS, 0);
    ex_await(node_is_done, a);
    if (free_pending_at_once) node_free(&w.nodes[0]);
    ex_await(timer0_thread_ended, NULL);
    w.nodes[0].armed = 0;
    world_end();
}
static void sc_destroy_from_callback(void) { destroy_from_callback(0); }

/* The same, freeing the dropped node as soon as the destroy returned: the destroy must
   have let go of every pending node before it returned (the worker once cancelled them
   only as it freed the timer, after the node was freed). */
static void sc_destroy_then_free(void) { destroy_from_callback(1); }
static void sc_destroy_from_advance(void) {
    timer_open(0, 0);
    armed_node(NULL, HOUR, 0); /* pending at the destroy: dropped */
    armed_node(destroy_timer0, MS, 0);
    spawn(advance_timer0, NULL);
    ex_join(w.test_threads[0]); /* the advance returned: the timer is freed */
    w.nodes[0].armed = 0;
    world_end();
}

/* reschedule vs firing, then a cancel that frees */
static void reschedule_then_cancel(void *arg) {
    node *n = (node *)arg;
    ex_yield();
    node_reschedule(n, 2 * MS);
    ex_yield();
    node_cancel(n, FREE_IT);
}
static void sc_reschedule_vs_fire(void) {
    timer_open(0, 1);
    spawn(reschedule_then_cancel, armed_node(NULL, MS, 0));
    world_end();
}

/* A callback whose cancel of `peer` returned 1 stopped it for good; one that got 0 came
   too late (the peer ran) or too early (the peer was armed later: it ran or was handed back). */
static void check_cancel_won(const node *n, const node *peer) {
    int outcome = peer->runs + peer->handed_back;
    if (n->done && outcome != (n->result == 1 ? 0 : 1)) {
        ex_fail("node %d's cancel of node %d returned %d, and node %d then ran %d times and "
                "was handed back %d times", node_index(n), node_index(peer), n->result,
                node_index(peer), peer->runs, peer->handed_back);
    }
}

/* two callbacks of one timer, due in the same tick, each cancelling the other */
static void cancel_peer(node *n) {
    n->result = node_cancel(&w.nodes[n->peer], KEEP_IT);
    n->done = 1;
}
static int either_done(void *arg) {
    (void)arg;
    return w.nodes[0].done || w.nodes[1].done;
}
static void sc_callbacks_cancel_each_other(void) {
    node *a, *b;
    timer_open(0, 1);
    a = armed_node(cancel_peer, MS, 0);
    b = armed_node(cancel_peer, MS, 0);
    a->peer = 1;
    b->peer = 0;
    ex_await(either_done, NULL);
    world_end();
    check_cancel_won(a, b);
    check_cancel_won(b, a);
}

/* Timers 0 and 1 with a node each (nodes 0 and 1), due in 1 ms, each the other's peer. */
static void two_timers_two_nodes(node_body body0, node_body body1) {
    node *a, *b;
    timer_open(0, 1);
    timer_open(1, 1);
    a = armed_node(body0, MS, 0);
    b = node_new(1, body1);
    node_must_schedule(b, MS, 0);
    a->peer = 1;
    b->peer = 0;
}

/* two timers: a callback on one cancels a node of the other, no cycle: no deadlock */
static void sc_cross_timer_cancel(void) {
    two_timers_two_nodes(cancel_peer, NULL);
    ex_await(node_is_done, &w.nodes[0]);
    world_end();
    check_cancel_won(&w.nodes[0], &w.nodes[1]);
}

/* two timers cancelling each other's running callbacks: the deadlock hwtimer.h warns of
   for hwtimer_cancel ("or cancel across two timers in a cycle"); the search must find it */
static void sc_cross_timer_cycle(void) {
    two_timers_two_nodes(cancel_peer, cancel_peer);
    ex_await(node_is_done, &w.nodes[0]);
    ex_await(node_is_done, &w.nodes[1]);
    world_end();
}

/* a callback moves its node to another timer while another thread cancels it on the
   first (hwtimer_cancel reads the state of a node pending on another timer without that
   timer's lock), then on the second */
static void move_to_timer1(node *n) {
    if (n->timer == 1) return;
    n->timer = 1;
    n->moved = 1;
    node_must_schedule(n, MS, 0);
}
static int node_not_running(void *arg) { return !((node *)arg)->running; }
static void cancel_on_both(node *n, int wait_for_callback) {
    ex_yield();
    if (node_cancel_on(n, 0, KEEP_IT) == 1) return; /* before it ran: it never moves */
    if (wait_for_callback) ex_await(node_not_running, n);
    node_cancel_on(n, 1, FREE_IT);
}
static void cancel_on_both_waiting(void *arg) { cancel_on_both((node *)arg, 1); }
static void cancel_on_both_at_once(void *arg) { cancel_on_both((node *)arg, 0); }
static void move_while(void (*canceller)(void *)) {
    timer_open(0, 1);
    timer_open(1, 1);
    spawn(canceller, armed_node(move_to_timer1, MS, 0));
    world_end();
}
static void sc_move_between_timers(void) { move_while(cancel_on_both_waiting); }

/* The same without waiting for the callback: a cancel on the second timer returns 1 while
   the callback that moved the node still runs on the first timer's worker, so the node
   cannot be freed then, though hwtimer_cancel documents that it can. A known gap: the
   search must find it (when hwtimer.h closes it, this scenario's expect_fail becomes 0). */
static void sc_move_then_cancel(void) { move_while(cancel_on_both_at_once); }

/* A periodic node is pending while its callback runs (hwtimer_schedule_periodic), so its
   callback cannot arm it on another timer: EBUSY (it once could, and was then filed on
   both timers). */
static void periodic_moves(node *n) {
    if (n->done) return;
    n->result = hwtimer_schedule(w.t[1], n->to, HOUR, node_fire, n);
    n->done = 1;
}
static void sc_periodic_move(void) {
    node *n;
    timer_open(0, 1);
    timer_open(1, 1);
    n = armed_node(periodic_moves, MS, MS);
    ex_await(node_is_done, n);
    if (n->result != HWTIMER_EBUSY) {
        ex_fail("a periodic node, from its own callback, was armed on another timer: %s",
                hwtimer_strerror(n->result));
    }
    world_end();
}

/* ---- wake_fn: an event loop drives a caller-driven timer ---- */

static void loop_lock(void) { ex_threads()->mutex_lock(&w.loop.mutex); }
static void loop_unlock(void) { ex_threads()->mutex_unlock(&w.loop.mutex); }

/* Called by the timer: at most once per time the loop was told, without the timer's lock,
   never from inside advance. */
static void loop_wake(void *ctx) {
    int i;
    (void)ctx;
    if (timer_lock_is_mine(w.t[0])) ex_fail("wake_fn is called with the timer's lock held");
    if (w.loop.in_advance && ex_self() == w.loop.thread) {
        ex_fail("wake_fn is called inside advance");
    }
    for (i = 0; i < w.nnodes; i++) {
        if (w.nodes[i].running && w.nodes[i].runner == ex_self()) {
            ex_fail("wake_fn is called from a callback");
        }
    }
    if (++w.loop.wakes > w.loop.reports) {
        ex_fail("wake_fn is called %u times, the loop was told a time %u times", w.loop.wakes,
                w.loop.reports);
    }
    loop_lock();
    w.loop.woken = 1;
    ex_threads()->cond_broadcast(&w.loop.cond);
    loop_unlock();
}

/* advance, ask when to come back, sleep until then or until woken */
static void loop_main(void *arg) {
    hwtimer *t = w.t[0];
    (void)arg;
    loop_lock();
    while (!w.loop.stop) {
        uint64_t next, now;
        loop_unlock();
        w.loop.in_advance = 1;
        hwtimer_advance(t, ex_clock(NULL));
        w.loop.in_advance = 0;
        w.loop.reports++; /* counted first: the wake for this report may come before it returns */
        next = hwtimer_next_expiry(t);
        loop_lock();
        now = ex_clock(NULL);
        if (!w.loop.woken && !w.loop.stop && next > now) {
            w.loop.sleeps_until = next;
            ex_threads()->cond_wait(&w.loop.cond, &w.loop.mutex,
                                    next == UINT64_MAX ? UINT64_MAX : next - now);
            w.loop.sleeps_until = 0;
        }
        w.loop.woken = 0;
    }
    loop_unlock();
}

static void loop_start(void) {
    const hwtimer_threads *th = ex_threads();
    hwtimer_config cfg;
    if (th->mutex_init(&w.loop.mutex) || th->cond_init(&w.loop.cond)) ex_fail("loop init");
    config_for_explore(&cfg, 0);
    cfg.wake_fn = loop_wake;
    timer_create_with(0, &cfg);
    w.loop.thread = ex_spawn(loop_main, NULL);
}

static void loop_stop(void) {
    loop_lock();
    w.loop.stop = 1;
    ex_threads()->cond_broadcast(&w.loop.cond);
    loop_unlock();
    ex_join(w.loop.thread);
}

/* schedules from another thread, later then earlier than the loop was told, and a
   reschedule earlier: each must wake the loop */
static void arm_for_the_loop(void *arg) {
    (void)arg;
    node_must_schedule(&w.nodes[0], 3 * MS, 0);
    ex_yield();
    node_must_schedule(&w.nodes[1], MS, 0);
    ex_yield();
    node_reschedule(&w.nodes[2], 2 * MS);
}
static int all_ran(void *arg) {
    int i;
    (void)arg;
    for (i = 0; i < w.nnodes; i++) {
        if (!w.nodes[i].runs) return 0;
    }
    return 1;
}
static void sc_wake_fn(void) {
    loop_start();
    node_new(0, NULL);
    node_new(0, NULL);
    node_must_schedule(node_new(0, NULL), HOUR, 0);
    spawn(arm_for_the_loop, NULL);
    ex_await(all_ran, NULL);
    loop_stop();
    world_end();
}

/* ---- hwtimer_fork_child ---- */

/* The run the worker had claimed at the fork is over for the child (hwtimer_fork_child):
   in the ledger too. The worker stopped inside the callback, or before it entered it (just
   after the unlock that precedes it), or after it left (in the lock that follows it).
   Inside the callback its body may have stopped in a call of the timer's (an arming, a
   cancel), made or not: each node's armings are then what its state says (the scenarios
   that fork keep at most one arming per node). */
static int node_pending_by_state(const node *n) {
    int state = hwtimer_timeout_state(n->to);
    return state == HWTIMER_PENDING || (state == HWTIMER_EXPIRED && n->period);
}
static void ledger_after_fork_by(int timer, int worker) {
    int i, in_body = 0;
    for (i = 0; i < w.nnodes; i++) {
        node *n = &w.nodes[i];
        if (!n->to || n->to != timer_running(w.t[timer])) continue;
        if (n->running) {
            n->running = 0;
            in_body = 1;
        } else if (!ex_wants_mutex(worker)) {
            n->runs++; /* claimed, never entered: counted as run */
            if (!n->period) n->armed--;
        }
    }
    for (i = 0; in_body && i < w.nnodes; i++) {
        node *n = &w.nodes[i];
        if (n->to && n->timer == timer) n->armed = node_pending_by_state(n);
    }
}

/* The child of a fork at this point: only the calling thread goes on. */
static void fork_here(int timer) {
    int err;
    int worker = ex_thread_started_with(w.t[timer]);
    ex_fork();
    if (worker >= 0) ledger_after_fork_by(timer, worker);
    err = hwtimer_fork_child(w.t[timer]);
    if (err) ex_fail("hwtimer_fork_child: %s", hwtimer_strerror(err));
}
static int ran_again(void *arg) {
    const node *n = (const node *)arg;
    return n->runs > n->result;
}
static void sc_fork_child(void) {
    node *periodic, *once;
    timer_open(0, 1);
    periodic = armed_node(NULL, MS, MS);
    once = armed_node(NULL, 2 * MS, 0);
    armed_node(NULL, HOUR, 0);
    ex_yield(); /* the worker may be anywhere: asleep, in a pass, in a callback */
    ex_yield();
    fork_here(0);
    periodic->result = periodic->runs;
    ex_await(node_ran, once);            /* nothing pending is lost */
    ex_await(ran_again, periodic);       /* and the new worker runs the periodic on */
    world_end();
}


/* The fork at every point of the worker. Execution K forks the moment the worker reaches
   its K-th scheduling point after the main thread armed the nodes (ex_await_urgent), so
   the search runs K = 0, 1, 2 ... until the worker goes idle first. The timer's clock is
   a point too (clock_point): the worker reads it holding the lock, after its answer and
   mid-pass once it has claimed a periodic node, so the fork also leaves it holding the
   lock there, pass marks set, and not only at the lock hooks around its sections. The
   nodes give the worker every kind of pass: a periodic node that cancels itself from its
   third run, a one-shot whose callback re-arms it once, a one-shot at 3 ms, one an hour
   away, and one whose callback arms a fresh node (on a timer of shards it goes to the
   worker's own shard, which may be out of its pass: a wake-up of the worker, from it). In the child every arming left runs exactly once, at or after its deadline
   (node_fire), the periodic goes on until it cancels itself, and the new worker sleeps
   with nothing left; a lost node or a hung worker is a deadlock (every thread blocked). */
static unsigned fork_point;     /* K, of the execution under way (--fork-point) */
static unsigned long fork_point_reached; /* executions that forked at point K */

static uint64_t clock_point(void *ctx) {
    ex_yield();
    return ex_clock(ctx);
}

/* Where the forks of the search left the parent's worker (a fork counts in each that
   applies), for the summary. */
enum { AT_ASLEEP, AT_WANTS_LOCK, AT_HOLDS_LOCK, AT_IN_PASS, AT_IN_CALLBACK, AT_KINDS };
static const char *const at_names[AT_KINDS] = {"asleep", "wants a lock", "holds a lock",
                                               "in a pass", "callback claimed"};
static unsigned long fork_states[AT_KINDS];

static void note_fork_state(hwtimer *t, int worker) {
    int holds = 0, in_pass = t->pass.on;
    unsigned k;
    if (ex_mutex_owner(t->mutex) == worker) holds = 1;
    for (k = 0; k < parts_of(t); k++) holds |= ex_mutex_owner(part_of(t, k)->mutex) == worker;
    fork_states[AT_ASLEEP] += ex_waits_on(worker) == t->worker.wake_cond;
    fork_states[AT_WANTS_LOCK] += (unsigned long)ex_wants_mutex(worker);
    fork_states[AT_HOLDS_LOCK] += (unsigned long)holds;
    fork_states[AT_IN_PASS] += (unsigned long)in_pass;
    fork_states[AT_IN_CALLBACK] += timer_running(t) != NULL;
}

static void cancel_self_from_third_run(node *n) {
    if (n->runs >= 3) node_cancel(n, KEEP_IT);
}
static void rearm_once(node *n) {
    if (n->runs == 1) node_must_schedule(n, MS, 0);
}
static void arm_peer_once(node *n) { /* on a timer of shards: the worker's own shard */
    if (n->runs == 1) node_must_schedule(&w.nodes[n->peer], 0, 0);
}

typedef struct fork_target {
    int worker;
    unsigned point;
} fork_target;
static int fork_due(void *arg) {
    const fork_target *f = (const fork_target *)arg;
    return ex_points(f->worker) >= f->point || ex_waits_forever(f->worker);
}
static int all_settled(void *arg) {
    int i;
    (void)arg;
    for (i = 0; i < w.nnodes; i++) {
        if (w.nodes[i].armed) return 0;
    }
    return 1;
}
static void sc_fork_each_point(void) {
    hwtimer_config cfg;
    fork_target f;
    node *arms_peer;
    config_for_explore(&cfg, 1);
    cfg.clock_fn = clock_point;
    timer_create_with(0, &cfg);
    armed_node(cancel_self_from_third_run, MS, 2 * MS);
    armed_node(rearm_once, 2 * MS, 0);
    armed_node(NULL, 3 * MS, 0);
    armed_node(NULL, HOUR, 0);
    arms_peer = node_new(0, arm_peer_once);
    arms_peer->peer = node_index(node_new(0, NULL));
    node_must_schedule(arms_peer, 2 * MS, 0);
    f.worker = ex_thread_started_with(w.t[0]);
    if (f.worker < 0) ex_fail("no worker after the first arming");
    f.point = ex_points(f.worker) + fork_point;
    ex_await_urgent(fork_due, &f);
    if (ex_points(f.worker) >= f.point) {
        fork_point_reached++;
        note_fork_state(w.t[0], f.worker);
        fork_here(0);
    }
    ex_await(all_settled, NULL);
    world_end();
}

/* A callback forks, and its child calls hwtimer_fork_child from it: the worker of the
   child is the thread that forked, which goes on with its pass when the callback returns
   (no second worker). Another thread of the child then waits for the rest to run. */
static void child_checks(void *arg) {
    (void)arg;
    ex_await(all_settled, NULL);
    timer_stop(0);
    timer_destroy(0);
}
static int main_armed_all; /* the main thread is out of its calls of the timer */
static int main_is_out(void *arg) {
    (void)arg;
    return main_armed_all;
}
static void fork_from_callback(node *n) {
    int err;
    if (n->runs != 1) return;
    ex_await(main_is_out, NULL);
    ex_fork();
    err = hwtimer_fork_child(w.t[0]);
    if (err) ex_fail("hwtimer_fork_child: %s", hwtimer_strerror(err));
    ex_spawn(child_checks, NULL);
}
static void sc_fork_in_callback(void) {
    main_armed_all = 0;
    timer_open(0, 1);
    armed_node(cancel_self_from_third_run, MS, MS);
    armed_node(fork_from_callback, 2 * MS, 0);
    armed_node(NULL, 2 * MS, 0);
    armed_node(NULL, 3 * MS, 0);
    main_armed_all = 1;
    ex_await(all_settled, NULL); /* in the parent; the child ends in child_checks */
    world_end();
}


/* A one-shot callback frees its own node (allowed: the timer never touches a one-shot
   node after its callback), while another thread inspects the timer with hwtimer_foreach
   and hwtimer_check. Between the callback's return and the worker taking the lock again,
   the timer's `running` still names the freed node: neither may read it (the timer decides
   whether its running node is a pending periodic from its own fields, running_periodic). */
static void free_own_node(node *n) { node_free(n); }
static void visit_live_only(hwtimer_timeout *to, void *ctx) {
    (void)ctx;
    if (freed_node_at(to)) ex_fail("hwtimer_foreach visits a freed node");
}
static void inspect_timer0(void *arg) {
    int invariant;
    ex_await(node_ran, arg);
    ex_yield();
    hwtimer_foreach(w.t[0], visit_live_only, NULL);
    invariant = hwtimer_check(w.t[0]);
    if (invariant) ex_fail("hwtimer_check finds invariant %d broken", invariant);
}
static void sc_inspect_vs_freeing(void) {
    timer_open(0, 1);
    spawn(inspect_timer0, armed_node(free_own_node, MS, 0));
    world_end();
}

/* a worker asleep until a far deadline, the clock jumps past it, then a schedule */
static void sc_clock_jump(void) {
    node *due_now;
    timer_open(0, 1);
    armed_node(NULL, HOUR, 0);
    ex_yield(); /* the worker goes to sleep, or not yet */
    ex_clock_jump(2 * HOUR);
    due_now = armed_node(NULL, 0, 0);
    ex_await(node_ran, due_now);
    ex_await(node_ran, &w.nodes[0]);
    world_end();
}

/* ---- pushing deadlines later (lazy re-filing) ---- */

static int push_stop_begun; /* sc_push_later_vs_stop: its stop was called */

/* A read on a connection: pushes its timeout to the clock + delay, as a loop with a cached
   time does (hwtimer_reschedule_at), or by hwtimer_reschedule. Counted as an arming (it may
   arm again a node that just ran). Only a timer being stopped may refuse it. */
static void node_push(node *n, uint64_t delay, int absolute) {
    int quiet = n->quiet, err;
    n->quiet = 0;
    n->armed++;
    n->inexact = 1;
    err = absolute ? hwtimer_reschedule_at(timer_of(n), n->to, ex_clock(NULL) + delay)
                   : hwtimer_reschedule(timer_of(n), n->to, delay);
    if (err == HWTIMER_ESTOPPED && push_stop_begun) {
        n->armed--;
        n->quiet = quiet;
    } else if (err) {
        ex_fail("node %d: push: %s", node_index(n), hwtimer_strerror(err));
    }
}

/* Reads on nodes 0 and 1, due in one coarse slot (level 1: 8 slots of 1 ms), pushed later
   while the worker re-files that slot; then node 2, far off, is moved earlier: it must wake
   the worker. */
static void read_twice_then_hurry(void *arg) {
    (void)arg;
    node_push(&w.nodes[0], 20 * MS, 1);
    ex_yield();
    node_push(&w.nodes[1], 21 * MS, 0);
    ex_yield();
    node_push(&w.nodes[0], 30 * MS, 0);
    node_push(&w.nodes[2], MS, 1);
}
static void sc_push_later_vs_worker(void) {
    timer_open(0, 1);
    armed_node(NULL, 17 * MS, 0);
    armed_node(NULL, 18 * MS, 0);
    armed_node(NULL, HOUR, 0);
    spawn(read_twice_then_hurry, NULL);
    ex_await(all_ran, NULL);
    world_end();
}

/* A push of node 0 later vs a cancel that frees node 1, its neighbour in the same coarse
   slot, vs the worker's pass re-filing that slot. */
static void push_node0(void *arg) {
    (void)arg;
    ex_yield();
    node_push(&w.nodes[0], 20 * MS, 1);
}
static void cancel_and_free_node1(void *arg) {
    (void)arg;
    ex_yield();
    node_cancel(&w.nodes[1], FREE_IT);
}
static void sc_push_later_vs_cancel(void) {
    timer_open(0, 1);
    armed_node(NULL, 17 * MS, 0);
    armed_node(NULL, 17 * MS, 0);
    spawn(push_node0, NULL);
    spawn(cancel_and_free_node1, NULL);
    world_end();
}

/* Pushes later vs stop: what stop hands back is exactly what was pending, wherever a push
   left it. */
static void push_both(void *arg) {
    (void)arg;
    node_push(&w.nodes[0], 20 * MS, 1);
    ex_yield();
    node_push(&w.nodes[1], 30 * MS, 0);
}
static void stop_timer0_begun(void *arg) {
    (void)arg;
    ex_yield();
    push_stop_begun = 1;
    timer_stop(0);
}
static void sc_push_later_vs_stop(void) {
    push_stop_begun = 0;
    timer_open(0, 1);
    armed_node(NULL, 17 * MS, 0);
    armed_node(NULL, 18 * MS, 0);
    spawn(push_both, NULL);
    spawn(stop_timer0_begun, NULL);
    world_end();
}

/* An event loop with wake_fn: another thread pushes node 0 later (no wake-up is owed for
   it), then moves node 1 earlier than the loop was told (one is): the loop may wake at
   node 0's old slot and re-file it, and must not sleep past node 1. */
static void push_then_hurry(void *arg) {
    (void)arg;
    node_push(&w.nodes[0], 20 * MS, 1);
    ex_yield();
    node_push(&w.nodes[0], 30 * MS, 0);
    ex_yield();
    node_push(&w.nodes[1], 2 * MS, 1);
}
static void sc_push_later_wake_fn(void) {
    loop_start();
    node_must_schedule(node_new(0, NULL), 17 * MS, 0);
    node_must_schedule(node_new(0, NULL), HOUR, 0);
    spawn(push_then_hurry, NULL);
    ex_await(all_ran, NULL);
    loop_stop();
    world_end();
}


/* ---- try_cancel and retire --------------------------------------------------------- */

/* The node's callback is neither under way nor about to be called (claimed by the pass,
   not yet in node_fire). */
static int callback_over(void *arg) {
    node *n = (node *)arg;
    return !n->running && timer_running(timer_of(n)) != n->to;
}

/* hwtimer_try_cancel from another thread, at any point against the worker running the
   node's callback: 1 (it was pending: it never runs), 0 (a one-shot that ran: it is not
   running now) or HWTIMER_ERUNNING (its callback runs now: it does not wait, and once the
   callback returns nothing runs again, a periodic one is not re-armed). Then the node is
   freed. */
static void try_cancel_any_time(void *arg) {
    node *n = (node *)arg;
    int r;
    ex_yield();
    r = hwtimer_try_cancel(timer_of(n), n->to);
    if (r == HWTIMER_ERUNNING) {
        if (n->period) n->armed--; /* a periodic one was pending, and is no more */
        ex_await(callback_over, n);
    } else if (r == 1) {
        n->armed--;
    } else if (r != 0 || n->period) {
        ex_fail("node %d: try_cancel returned %d", node_index(n), r);
    }
    if (n->running) ex_fail("node %d: runs after try_cancel returned %d and it ended", node_index(n), r);
    n->quiet = 1;
    node_free(n);
}
static void sc_try_cancel_vs_callback(void) {
    timer_open(0, 1);
    spawn(try_cancel_any_time, armed_node(NULL, MS, 0));
    world_end();
}
static void sc_try_cancel_vs_periodic(void) {
    timer_open(0, 1);
    spawn(try_cancel_any_time, armed_node(NULL, MS, MS));
    world_end();
}

/* Retires a node from another thread: when it returns the callback is not running, the
   node is RETIRED and nothing of it is pending; every arming after that is refused. */
static void retire_node(node *n) {
    int r = hwtimer_retire(timer_of(n), n->to);
    if (r != 0 && r != 1) ex_fail("node %d: retire returned %d", node_index(n), r);
    if (n->running) ex_fail("node %d: retire returned while its callback runs", node_index(n));
    if (hwtimer_timeout_state(n->to) != HWTIMER_RETIRED) {
        ex_fail("node %d: state %d after retire", node_index(n), hwtimer_timeout_state(n->to));
    }
    n->armed = 0; /* whatever was armed is cancelled */
    n->quiet = 1;
    n->retired = 1;
}

/* A reschedule of a node that another thread may retire: refused if retire had returned
   before it began; an arming it made before retire took the node is cancelled by retire
   (so it counts only while retire has not returned). */
static void reschedule_unless_retired(node *n) {
    int retired_before = n->retired, quiet = n->quiet, err;
    n->armed++; /* counted before the call, as node_arm does: it may run before it returns */
    n->inexact = 1;
    n->quiet = 0;
    err = hwtimer_reschedule(timer_of(n), n->to, MS);
    if (retired_before && err != HWTIMER_ERETIRED) {
        ex_fail("node %d: a reschedule after retire returned gave %d", node_index(n), err);
    }
    if (err != HWTIMER_OK && err != HWTIMER_ERETIRED) {
        ex_fail("node %d: reschedule: %s", node_index(n), hwtimer_strerror(err));
    }
    if (err != HWTIMER_OK && !n->retired) { /* refused: as before (retire resets both) */
        n->armed--;
        n->quiet = quiet;
    }
}

/* retire vs another thread's reschedules of the node (before, during, after its run) */
static void reschedule_twice(void *arg) {
    node *n = (node *)arg;
    int k;
    for (k = 0; k < 2; k++) {
        ex_yield();
        reschedule_unless_retired(n);
    }
}
static void retire_any_time(void *arg) {
    ex_yield();
    retire_node((node *)arg);
}
static void sc_retire_vs_reschedule(void) {
    node *n;
    timer_open(0, 1);
    n = armed_node(NULL, MS, 0);
    spawn(reschedule_twice, n);
    spawn(retire_any_time, n);
    world_end();
}

/* retire vs a periodic callback that reschedules itself at every run */
static void reschedule_self(node *n) { reschedule_unless_retired(n); }
static void retire_after_first_run(void *arg) {
    node *n = (node *)arg;
    ex_await(node_ran, n);
    retire_node(n);
}
static void sc_retire_vs_periodic_rearming(void) {
    timer_open(0, 1);
    spawn(retire_after_first_run, armed_node(reschedule_self, MS, MS));
    world_end();
}

typedef struct scenario {
    const char *name;
    void (*fn)(void);
    unsigned bound;    /* preemption bound of the CI run */
    unsigned pct_runs; /* PCT schedules of the CI run */
    int expect_fail;   /* the search must find a failure (a documented deadlock, a known gap) */
    int each_point;    /* searched once per fork point K = 0, 1, ... (sc_fork_each_point) */
} scenario;

static const scenario scenarios[] = {
    {"cancel_vs_fire", sc_cancel_vs_fire, 3, 500, 0, 0},
    {"rearm_vs_waiting_cancel", sc_rearm_vs_waiting_cancel, 2, 2000, 0, 0},
    {"periodic_cancel_self", sc_periodic_cancel_self, 3, 500, 0, 0},
    {"periodic_cancel_other", sc_periodic_cancel_other, 1, 2000, 0, 0},
    {"stop_vs_schedule_vs_callback", sc_stop_vs_schedule_vs_callback, 1, 2000, 0, 0},
    {"stop_vs_advance", sc_stop_vs_advance, 3, 500, 0, 0},
    {"destroy_from_callback", sc_destroy_from_callback, 3, 500, 0, 0},
    {"destroy_from_advance", sc_destroy_from_advance, 3, 500, 0, 0},
    {"reschedule_vs_fire", sc_reschedule_vs_fire, 2, 2000, 0, 0},
    {"callbacks_cancel_each_other", sc_callbacks_cancel_each_other, 3, 500, 0, 0},
    {"cross_timer_cancel", sc_cross_timer_cancel, 2, 2000, 0, 0},
    {"move_between_timers", sc_move_between_timers, 1, 2000, 0, 0},
    {"clock_jump", sc_clock_jump, 3, 500, 0, 0},
    {"wake_fn", sc_wake_fn, 2, 1000, 0, 0},
    {"fork_child", sc_fork_child, 1, 1000, 0, 0},
    {"fork_each_point", sc_fork_each_point, 1, 0, 0, 1},
    {"fork_in_callback", sc_fork_in_callback, 2, 1000, 0, 0},
    {"destroy_from_callback_then_free", sc_destroy_then_free, 3, 500, 0, 0},
    {"periodic_moved_by_its_callback", sc_periodic_move, 2, 500, 0, 0},
    {"cross_timer_cycle_deadlocks", sc_cross_timer_cycle, 2, 0, 1, 0},
    {"move_then_cancel_at_once", sc_move_then_cancel, 2, 0, 1, 0},
    {"inspect_vs_freeing_callback", sc_inspect_vs_freeing, 2, 0, 0, 0},
    {"push_later_vs_worker", sc_push_later_vs_worker, 1, 1000, 0, 0},
    {"push_later_vs_cancel", sc_push_later_vs_cancel, 1, 1000, 0, 0},
    {"push_later_vs_stop", sc_push_later_vs_stop, 1, 500, 0, 0},
    {"push_later_wake_fn", sc_push_later_wake_fn, 1, 2000, 0, 0},
    {"try_cancel_vs_callback", sc_try_cancel_vs_callback, 3, 500, 0, 0},
    {"try_cancel_vs_periodic", sc_try_cancel_vs_periodic, 2, 500, 0, 0},
    {"retire_vs_reschedule", sc_retire_vs_reschedule, 1, 2000, 0, 0},
    {"retire_vs_periodic_rearming", sc_retire_vs_periodic_rearming, 2, 500, 0, 0},
};
enum { NSCENARIOS = sizeof scenarios / sizeof scenarios[0] };

/* ---------------------------------------------------------------------------------
   Driving the search
   --------------------------------------------------------------------------------- */

static const scenario *current_scenario;

static void world_main(void) {
    EX_UNPOISON(node_memory, sizeof node_memory);
    memset(&w, 0, sizeof w);
    hwtimer__threads_seen = 0; /* threads take shards in the order they first arm: the same
                                  order in every execution of a schedule */
    current_scenario->fn();
}

/* The scenario as its replay command names it: with the options that shape it. */
static ex_world world_of(const scenario *s) {
    static char name[128];
    ex_world wd;
    int used = snprintf(name, sizeof name, "%s", s->name);
    if (s->each_point && used > 0 && (size_t)used < sizeof name) {
        used += snprintf(name + used, sizeof name - (size_t)used, " --fork-point %u", fork_point);
    }
    if (explore_shards && used > 0 && (size_t)used < sizeof name) {
        snprintf(name + used, sizeof name - (size_t)used, " --shards %u", explore_shards);
    }
    wd.scenario = name;
    wd.main_fn = world_main;
    wd.check_step = check_step;
    wd.check_quiet = check_quiet;
    return wd;
}

typedef struct search_stats {
    unsigned long runs;
    size_t max_decisions;
    int complete;
} search_stats;

/* The next schedule of the bounded search: the last decision that has an untried option
   within the bound takes it; 0 when every schedule was run. */
static int next_schedule(const ex_decision *d, size_t n, unsigned bound, ex_choice_list *prefix) {
    size_t i = n;
    while (i-- > 0) {
        unsigned cost = d[i].cur_enabled ? 1u : 0u;
        if (d[i].taken + 1u < d[i].options && d[i].preemptions_before + cost <= bound) {
            ex_choices_set(prefix, n, d, i, (uint8_t)(d[i].taken + 1u));
            return 1;
        }
    }
    return 0;
}

static void note_decisions(search_stats *st) {
    size_t n;
    ex_decisions(&n);
    if (n > st->max_decisions) st->max_decisions = n;
}

static search_stats search_bounded(const scenario *s, unsigned bound, unsigned long max_runs) {
    ex_choice_list prefix = {NULL, 0, 0};
    ex_plan plan;
    ex_world wd = world_of(s);
    search_stats st = {0, 0, 0};
    memset(&plan, 0, sizeof plan);
    plan.kind = EX_DFS;
    plan.prefix = &prefix;
    ex_set_replay_hint("");
    for (;;) {
        const ex_decision *d;
        size_t n;
        ex_execute(&wd, &plan);
        st.runs++;
        note_decisions(&st);
        d = ex_decisions(&n);
        if (!next_schedule(d, n, bound, &prefix)) {
            st.complete = 1;
            break;
        }
        if (max_runs && st.runs >= max_runs) break;
    }
    ex_choices_free(&prefix);
    return st;
}

static void pct_plan(ex_plan *plan, uint64_t seed, unsigned depth, unsigned len) {
    memset(plan, 0, sizeof *plan);
    plan->kind = EX_PCT;
    plan->seed = seed;
    plan->depth = depth;
    plan->expected_len = len;
}

static search_stats search_pct(const scenario *s, unsigned long runs, uint64_t seed,
                               unsigned depth, unsigned len) {
    ex_plan plan;
    ex_world wd = world_of(s);
    search_stats st = {0, 0, 0};
    char hint[256];
    unsigned long r;
    for (r = 0; r < runs; r++) {
        pct_plan(&plan, seed + r, depth, len);
        snprintf(hint, sizeof hint, "explore --scenario %s --pct-seed %llu --depth %u --len %u",
                 s->name, (unsigned long long)(seed + r), depth, len);
        ex_set_replay_hint(hint);
        ex_execute(&wd, &plan);
        st.runs++;
        note_decisions(&st);
    }
    return st;
}


typedef struct options {
    const char *only;
    int bound; /* -1: the scenario's own */
    unsigned long max_runs;
    long pct_runs; /* -1: the scenario's own */
    uint64_t seed;
    unsigned depth;
    const char *replay;
    int pct_seed_given;
    uint64_t pct_seed;
    unsigned len;
    int fork_point_given;
    unsigned fork_point;
} options;

static double seconds_since(const struct timespec *t0) {
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/* A scenario searched once per fork point: K = 0, 1, ... until no schedule of the search
   reaches point K (the worker went idle before it), or only K with --fork-point. */
static void explore_each_point(const scenario *s, const options *o, unsigned bound,
                               const struct timespec *t0) {
    unsigned long runs = 0, forks = 0;
    size_t decisions = 0;
    int complete = 1, i;
    unsigned k = o->fork_point_given ? o->fork_point : 0;
    memset(fork_states, 0, sizeof fork_states);
    for (;; k++) {
        search_stats b;
        fork_point = k;
        fork_point_reached = 0;
        b = search_bounded(s, bound, o->max_runs);
        runs += b.runs;
        forks += fork_point_reached;
        complete &= b.complete;
        if (b.max_decisions > decisions) decisions = b.max_decisions;
        if (!fork_point_reached || o->fork_point_given) break;
    }
    printf("%-30s bound %u: %7lu schedules%s, forks at worker points 0-%u: %lu, "
           "<= %4zu decisions, %6.1f s\n",
           s->name, bound, runs, complete ? " (all)" : " (capped)",
           fork_point_reached ? k : k - 1, forks, decisions, seconds_since(t0));
    printf("%-30s the worker at those forks:", "");
    for (i = 0; i < AT_KINDS; i++) printf("%s %s %lu", i ? "," : "", at_names[i], fork_states[i]);
    printf("\n");
    fflush(stdout);
}

/* The bounded search, then PCT with a length taken from it. */
static void explore_scenario(const scenario *s, const options *o) {
    struct timespec t0;
    unsigned bound = o->bound >= 0 ? (unsigned)o->bound : s->bound;
    unsigned long pct = o->pct_runs >= 0 ? (unsigned long)o->pct_runs : s->pct_runs;
    search_stats b, p;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    current_scenario = s;
    if (s->each_point) {
        explore_each_point(s, o, bound, &t0);
        return;
    }
    b = search_bounded(s, bound, o->max_runs);
    p = search_pct(s, pct, o->seed, o->depth, (unsigned)b.max_decisions);
    printf("%-30s bound %u: %7lu schedules%s, PCT %5lu (depth %u, seed %llu), "
           "<= %4zu decisions, %6.1f s\n",
           s->name, bound, b.runs, b.complete ? " (all)" : " (capped)", p.runs, o->depth,
           (unsigned long long)o->seed, b.max_decisions > p.max_decisions ? b.max_decisions
                                                                          : p.max_decisions,
           seconds_since(&t0));
    fflush(stdout);
}

/* A scenario that must fail: searched in a child process, which must exit 1. Its search
   is never capped by --max-runs: it ends at the failure. */
static int explore_expecting_failure(const scenario *s, const options *given) {
    options uncapped = *given, *o = &uncapped;
    pid_t pid;
    int status;
    uncapped.max_runs = 0;
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid == 0) {
        explore_scenario(s, o);
        _exit(0);
    }
    if (pid < 0 || waitpid(pid, &status, 0) != pid) return 1;
    if ((WIFEXITED(status) && WEXITSTATUS(status) == 1) || WIFSIGNALED(status)) { /* ASan */
        printf("%-30s found, as expected (the schedule is above)\n", s->name);
        return 0;
    }
    printf("%-30s NOT found: the search missed a known failure (or it was fixed)\n", s->name);
    return 1;
}

static const scenario *find_scenario(const char *name) {
    int i;
    for (i = 0; i < NSCENARIOS; i++) {
        if (!strcmp(scenarios[i].name, name)) return &scenarios[i];
    }
    fprintf(stderr, "no scenario %s (--list)\n", name);
    exit(2);
}

static int parse_options(int argc, char **argv, options *o) {
    int i;
    memset(o, 0, sizeof *o);
    o->bound = -1;
    o->pct_runs = -1;
    o->seed = 1;
    o->depth = 3;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--trace")) {
            ex_set_trace(1);
            continue;
        }
        if (!strcmp(a, "--list")) {
            int k;
            for (k = 0; k < NSCENARIOS; k++) printf("%s\n", scenarios[k].name);
            exit(0);
        }
        if (!v) return -1;
        i++;
        if (!strcmp(a, "--scenario")) o->only = v;
        else if (!strcmp(a, "--bound")) o->bound = atoi(v);
        else if (!strcmp(a, "--max-runs")) o->max_runs = strtoul(v, NULL, 10);
        else if (!strcmp(a, "--pct")) o->pct_runs = strtol(v, NULL, 10);
        else if (!strcmp(a, "--seed")) o->seed = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--depth")) o->depth = (unsigned)atoi(v);
        else if (!strcmp(a, "--replay")) o->replay = v;
        else if (!strcmp(a, "--len")) o->len = (unsigned)atoi(v);
        else if (!strcmp(a, "--shards")) explore_shards = (unsigned)atoi(v);
        else if (!strcmp(a, "--fork-point")) {
            o->fork_point = (unsigned)atoi(v);
            o->fork_point_given = 1;
        }
        else if (!strcmp(a, "--pct-seed")) {
            o->pct_seed = strtoull(v, NULL, 10);
            o->pct_seed_given = 1;
        } else {
            return -1;
        }
    }
    return 0;
}

/* One schedule again, from its choices or its PCT seed. */
static int replay_one(const scenario *s, const options *o) {
    ex_choice_list choices = {NULL, 0, 0};
    ex_plan plan;
    ex_world wd;
    current_scenario = s;
    fork_point = o->fork_point;
    if (o->pct_seed_given) {
        pct_plan(&plan, o->pct_seed, o->depth, o->len);
    } else {
        memset(&plan, 0, sizeof plan);
        plan.kind = EX_DFS;
        if (ex_choices_parse(o->replay, &choices)) {
            fprintf(stderr, "bad schedule: %s\n", o->replay);
            return 2;
        }
        plan.prefix = &choices;
    }
    wd = world_of(s);
    ex_set_replay_hint("");
    ex_execute(&wd, &plan);
    ex_choices_free(&choices);
    printf("%s: the schedule passes\n", s->name);
    return 0;
}

int main(int argc, char **argv) {
    options o;
    int i, failed = 0;
    if (parse_options(argc, argv, &o)) {
        fprintf(stderr, "usage: explore [--list] [--scenario NAME] [--bound B] [--max-runs N]"
                        " [--pct N] [--seed S] [--depth D] [--replay CHOICES]"
                        " [--pct-seed S --len L] [--shards N] [--fork-point K] [--trace]\n");
        return 2;
    }
    if (o.replay || o.pct_seed_given) {
        if (!o.only) {
            fprintf(stderr, "--replay and --pct-seed need --scenario\n");
            return 2;
        }
        return replay_one(find_scenario(o.only), &o);
    }
    for (i = 0; i < NSCENARIOS; i++) {
        const scenario *s = &scenarios[i];
        if (o.only && strcmp(o.only, s->name)) continue;
        if (s->expect_fail) failed |= explore_expecting_failure(s, &o);
        else explore_scenario(s, &o);
    }
    return failed;
}
