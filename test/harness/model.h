/* model.h - the naive reference model of hwtimer and the checks that compare a timer with
   it, shared by the randomized test (test_model.c) and the fuzzer (fuzz_model.c).

   The model is a plain array of timeout records on a fake clock: deadline D, leeway,
   boundary B, period, arg, state and a pending flag. B is the boundary the timeout runs
   at: without a leeway the first S + k*tick >= D; with one, the tick the header's rule
   picks in the node's window (see hwtimer_timeout_set_leeway), found by search (the
   leeway stored as hwtimer.h stores it, the largest power of two that fits the window by
   trying them from 2^63 down, then its first multiple), all computed exactly; a B beyond
   UINT64_MAX never fires. No wheel and no cleverness: every question is answered by a
   linear scan, so the model is obviously right.

   A run is a series of episodes. Each creates a timer with a drawn tick, wheel size,
   start clock S and max_pending, applies drawn operations (schedule, schedule_periodic
   and reschedule in their relative and absolute (_at) forms, set_leeway before an
   arming and on any node, pending or inside a callback, cancel, advance forwards,
   backwards and by years, bounded advances (hwtimer_advance_max with a drawn bound: see
   "leftovers" below), a clock that wanders away from the advances, an event loop
   that sleeps until next_expiry, pushes of pending deadlines later or earlier by a tick,
   a rotation, a coarse slot or any amount, and keep-alive rounds: the clock steps on,
   reads push idle timeouts to the clock + their length, the loop advances or sleeps),
   makes a node pending on another timer (this one must refuse it), sometimes stops the
   timer with an `unprocessed` callback or has its next callback destroy it (every pending
   node cancelled at once, no other callback run), and destroys it. Leeways are drawn as 0, a few ns, about a tick, many
   ticks, near UINT64_MAX, log-uniform and round decimals, and stay with a node across
   schedulings and timers. Callbacks mutate the timer as drawn: re-arm themselves,
   schedule others with delay 0, cancel others that are due in the same pass, cancel
   themselves, set leeways, walk the timer with hwtimer_foreach. Half the episodes give
   the timer a cfg.wake_fn, as a loop that sleeps until its last answer does. In the
   threaded modes a fifth of the timers have no threads (cfg.threads NULL: the paths without
   a lock), and half the others are timers of 2-4 shards (cfg.shards), and each
   operation and callback acts as one of several threads (the thread number that picks a
   fresh node's shard is drawn), so nodes spread over the shards and every check above
   holds across them: firing order over shards, counts, max_pending, wake_fn.

   A push later may leave a timeout where it is filed (see "Pushing a deadline later" in
   hwtimer.h): the model knows nothing of that, so every check above holds for pushed
   timeouts as for any (never early, at the boundary of the newest deadline, in order, the
   counts, due_in, foreach, stop's hand-back); next_expiry may be earlier than the next B,
   and the event loop checks that each wake-up there makes progress. hwtimer_stats.refiled
   never exceeds the pushes later, a push later outside a pass leaves a node filed in a
   coarse slot where it is (its links and place: the one look inside hwtimer), and a model
   that keeps the old boundary of a pushed timeout is caught (MODEL_IGNORES_PUSH).

   hwtimer_stats' late_max_ns and late_runs are checked against the model's own count
   (each run's now minus its D; late past tick + the stored leeway) with the queries and
   at the end of each episode.

   Ties in B may run in any order, so the model does not predict the firing order: it
   follows the real one and checks every callback as it happens (pending, due at its
   chosen B, in order of B, not armed during this pass), then applies the callback's
   mutations in the same order. After each pass it checks that nothing due was left,
   and after every operation the return value, the pending count, next_expiry and, for
   the nodes the operation touched plus two more in turn, state, deadline,
   hwtimer_is_pending, _timeout_arg, _timeout_period and _timeout_due_in; and the calls
   to wake_fn: after each answer the loop got (next_expiry, poll_timeout_ms), exactly one
   for the first arming outside a pass whose B is before the time answered (any arming,
   if the answer was that nothing was pending), none for anything else. due_in shows
   the boundary the timer chose: it must be a tick boundary in the node's window
   [max(D, first boundary), first boundary + leeway], then exactly the model's B (for a
   periodic timeout inside its own callback, the B of its next period). hwtimer_foreach
   (in queries and callbacks) and stop's hand-back must visit exactly the pending set.

   Where the choices come from is up to the file that includes this one: it defines the
   four functions declared below (test_model: a seeded PRNG; fuzz_model: the fuzz input).
   Then it calls sim_reset(), and for each episode episode_begin(), model_step() per
   operation (none once episode_over(): a callback destroyed the timer) and episode_end().
   A divergence prints what differed and the last operations and longjmps to sim.diverged,
   which the driver must have set. */
#ifndef HWTIMER_TEST_MODEL_H
#define HWTIMER_TEST_MODEL_H

#include "harness.h"

#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>

#if defined(__MINGW_PRINTF_FORMAT) /* mingw-w64: gnu_printf with __USE_MINGW_ANSI_STDIO */
#define MODEL_PRINTF(f, a) __attribute__((format(__MINGW_PRINTF_FORMAT, f, a)))
#elif defined(__GNUC__) || defined(__clang__)
#define MODEL_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define MODEL_PRINTF(f, a)
#endif

/* MAX_WAKEUPS: empty wake-ups an event loop may make before something runs, beyond one per
   node (each timeout pushed later may add one, where its old coarse slot is re-filed). */
enum { MAX_NODES = 256, LOG_SIZE = 24, MAX_WAKEUPS = 200 };
#define NS_PER_YEAR 31557600000000000u

/* ------------------------------------------------------------------------- choices */

/* Defined by the driver. */
static uint64_t draw_below(uint64_t n);  /* a choice in 0 .. n-1; 0 when n is 0 */
static uint64_t draw_bits(unsigned bits); /* a value below 2^bits, 1 <= bits <= 64 */
static const char *model_origin(void);   /* names the run in a divergence: "seed 42" */
static void model_print_rerun(void);     /* tells how to reproduce a divergence */

static int draw_percent(unsigned p) { return draw_below(100) < p; }

/* Log-uniform: every bit length up to max_bits is equally likely, so a nanosecond and
   a century both come up. */
static uint64_t draw_log_bits(unsigned max_bits) {
    unsigned bits = (unsigned)draw_below(max_bits + 1u);
    return bits == 0 ? 0 : draw_bits(bits);
}

/* ------------------------------------------------------------------------- arithmetic */

static uint64_t sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
static uint64_t sat_sub(uint64_t a, uint64_t b) { return a < b ? 0 : a - b; }
static uint64_t sat_mul(uint64_t a, uint64_t b) {
    return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

/* v - 1, v or v + 1: off-by-one probes around an interesting value. */
static uint64_t around(uint64_t v) {
    switch (draw_below(3)) {
    case 0: return sat_sub(v, 1);
    case 1: return v;
    default: return sat_add(v, 1);
    }
}

/* ------------------------------------------------------------------------- the model */

typedef struct model_timeout {
    int ever;              /* scheduled at least once: reschedule has a callback to reuse */
    int pending;
    int state;             /* what hwtimer_timeout_state must report */
    uint64_t deadline;     /* D of the last scheduling (0 before any) */
    uint64_t boundary;     /* B, the boundary it runs at; valid unless `never` */
    int never;             /* B lies beyond UINT64_MAX: it never fires */
    uint64_t period;       /* 0: one-shot */
    void *arg;             /* the arg of the last scheduling */
    uint64_t leeway_asked; /* the leeway last set (0 before any) */
    uint64_t leeway;       /* that leeway as the node stores it */
    uint64_t armed_pass;   /* the advance pass that last armed it; 0: armed outside passes */
    int retired;           /* hwtimer_retire: every arming refused until hwtimer_timeout_init */
    uint64_t left_gen;     /* left due by a bounded advance: that call's generation (0: not) */
} model_timeout;

typedef struct model {
    uint64_t start, tick; /* S and tick_ns */
    uint64_t max_tick;    /* the tick of the latest deadline, UINT64_MAX */
    uint64_t last_now;    /* now of the last advance that was not a no-op (S before any) */
    size_t max_pending, pending;
    int stopped;
    uint64_t left_gens;  /* generations of left timeouts made so far */
    int left_moved;      /* a left timeout was pushed later since `left` was last empty */
    uint64_t late_max, late_runs; /* hwtimer_stats' lateness, as the model counts it */
    model_timeout to[MAX_NODES];
} model;

/* Set by the self-checks: a model that ignores the tick grid, or the leeway, must be
   caught. */
enum { MODEL_EXACT, MODEL_IGNORES_GRID, MODEL_IGNORES_LEEWAY, MODEL_NEVER_WAKES,
       MODEL_IGNORES_PUSH, MODEL_IGNORES_BOUND, MODEL_LATE_WITHOUT_LEEWAY };
static int model_sabotage;

/* The tick a deadline is due at: the first k >= 0 with S + k*tick >= d. */
static uint64_t model_due_tick(const model *m, uint64_t d) {
    uint64_t gap;
    if (d <= m->start) return 0;
    gap = d - m->start;
    return gap / m->tick + (gap % m->tick != 0);
}

/* The time of tick k, S + k*tick. Returns 0 when it is beyond UINT64_MAX. */
static int model_tick_time(const model *m, uint64_t k, uint64_t *b) {
    if (k > (UINT64_MAX - m->start) / m->tick) return 0;
    *b = m->start + k * m->tick;
    return 1;
}

/* A leeway as hwtimer.h stores it: the largest multiple of the smallest power of ten that
   leaves at most 65535 of it, at or below the leeway asked for. */
static uint64_t model_stored_leeway(uint64_t asked) {
    uint64_t unit = 1;
    while (asked / unit > 65535u) unit *= 10u;
    return asked / unit * unit;
}

/* The tick a node with this (stored) leeway runs at for deadline d: the grid tick of its
   window, e .. e + floor(leeway / tick). */
static uint64_t model_run_tick(const model *m, uint64_t leeway, uint64_t d) {
    uint64_t e = model_due_tick(m, d);
    if (model_sabotage == MODEL_IGNORES_LEEWAY || leeway / m->tick == 0) return e;
    return test_leeway_grid_tick(e, leeway / m->tick, m->max_tick);
}

/* B for deadline d and a leeway. Returns 0 when it is beyond UINT64_MAX. */
static int model_boundary(const model *m, uint64_t d, uint64_t leeway, uint64_t *b) {
    if (model_sabotage == MODEL_IGNORES_GRID) {
        *b = d;
        return 1;
    }
    return model_tick_time(m, model_run_tick(m, leeway, d), b);
}

/* The first boundary strictly after x, saturated to UINT64_MAX. */
static uint64_t model_boundary_after(const model *m, uint64_t x) {
    uint64_t b;
    if (x == UINT64_MAX || !model_boundary(m, x + 1, 0, &b)) return UINT64_MAX;
    return b;
}

static int model_due(const model_timeout *mt, uint64_t now) {
    return mt->pending && !mt->never && mt->boundary <= now;
}

/* Arms a node with the callback arg `arg`; its leeway is the one it has. */
static void model_arm(model *m, int id, uint64_t deadline, uint64_t period, void *arg,
                      uint64_t pass) {
    model_timeout *mt = &m->to[id];
    if (!mt->pending) m->pending++;
    mt->ever = 1;
    mt->pending = 1;
    mt->state = HWTIMER_PENDING;
    mt->deadline = deadline;
    mt->period = period;
    mt->arg = arg;
    mt->armed_pass = pass;
    mt->left_gen = 0;
    mt->never = !model_boundary(m, deadline, mt->leeway, &mt->boundary);
}

static void model_disarm(model *m, int id, int state) {
    model_timeout *mt = &m->to[id];
    if (mt->pending) m->pending--;
    mt->pending = 0;
    mt->state = state;
    mt->left_gen = 0;
}

/* What hwtimer_timeout_init gives: a node as if never scheduled, with no leeway. */
static void model_forget(model *m, int id) {
    model_timeout *mt = &m->to[id];
    memset(mt, 0, sizeof *mt);
    mt->state = HWTIMER_IDLE;
    mt->arg = NULL;
}

/* A periodic run for deadline d at `now`: the first d + k*p (k >= 1) strictly after now,
   UINT64_MAX when that overflows. */
static uint64_t model_next_period(uint64_t d, uint64_t p, uint64_t now) {
    uint64_t k = now >= d ? (now - d) / p + 1 : 1;
    if (k > (UINT64_MAX - d) / p) return UINT64_MAX;
    return d + k * p;
}

/* Argument errors come first, then retired, stopped, busy, full (the order hwtimer.h lists
   them). */
static int model_schedule_result(const model *m, int id) {
    if (m->to[id].retired) return HWTIMER_ERETIRED;
    if (m->stopped) return HWTIMER_ESTOPPED;
    if (m->to[id].pending) return HWTIMER_EBUSY;
    if (m->max_pending && m->pending >= m->max_pending) return HWTIMER_EFULL;
    return HWTIMER_OK;
}

static int model_reschedule_result(const model *m, int id) {
    if (m->to[id].retired) return HWTIMER_ERETIRED;
    if (!m->to[id].ever) return HWTIMER_EINVAL;
    if (m->to[id].pending) return HWTIMER_OK;
    return model_schedule_result(m, id);
}

/* The smallest B of the pending timeouts that ever fire; 0 when none does. */
static int model_min_boundary(const model *m, int n, uint64_t *out) {
    int i, found = 0;
    for (i = 0; i < n; i++) {
        const model_timeout *mt = &m->to[i];
        if (!mt->pending || mt->never) continue;
        if (!found || mt->boundary < *out) *out = mt->boundary;
        found = 1;
    }
    return found;
}

/* ------------------------------------------------------------------------- the world */

typedef struct node {
    hwtimer_timeout to;
    int id;
} node;

typedef struct log_entry {
    uint64_t op, clock, a, b;
    const char *what;
    int id;
    long long result;
} log_entry;

static struct {
    int verbose, quiet;
    /* the timer under test and what it works on */
    hwtimer *t;
    uint64_t clock;
    uint32_t ticks_per_wheel;
    int n; /* nodes in use this episode */
    model m;
    node nodes[MAX_NODES];
    unsigned char dirty[MAX_NODES]; /* touched since the last check */
    /* the advance pass in progress */
    int far_jumps; /* this episode may jump to the end of time */
    int in_pass, in_callback, pass_noop;
    int running; /* the node whose callback runs */
    uint64_t pass_id, pass_now, pass_last_boundary;
    size_t pass_runs;
    size_t pass_bound; /* hwtimer_advance_max's bound (0: none, hwtimer_advance) */
    size_t next_bound; /* the bound of the advance about to begin, for its note */
    uint64_t pass_left_gen, pass_left_boundary; /* of the last left timeout it ran */
    /* a walk of the pending set: hwtimer_stop's hand-back or hwtimer_foreach */
    int hand_back_open;
    /* the stop operation may leave the timer to the next callback, which destroys it: the
       pass stops, and once advance returns the episode is over (sim.t NULL) */
    int destroy_in_callback, destroyed;
    jmp_buf episode_over;
    unsigned char visited[MAX_NODES];
    size_t visited_count;
    int next_checked; /* the node the next check_world looks at anyway */
    /* the loop that drives the timer, when the episode gave it a wake_fn */
    int wake_loop;
    unsigned shards;       /* cfg.shards of this episode (0: one wheel) */
    int answer_out;        /* an answer is out that no wake_fn call has answered yet */
    int arming_stays_left; /* the arming pushes a left timeout later in place: no wake */
    int arming_stays_left_was;
    int answer_none;       /* ... it said nothing was pending */
    uint64_t answer;       /* ... the time it said */
    uint64_t wakes, wakes_seen; /* wake_fn calls, and those already checked */
    /* counters and diagnostics */
    uint64_t op, episode, callbacks, log_count;
    struct { /* what the run exercised: a run that never saw EFULL did not test it */
        uint64_t armed, armed_in_pass, refused[16], cancelled, cancelled_due, periodic_runs,
            noop_advances, handed_back, at_end_of_time;
        /* leeways set, and refused as EBUSY; armings whose window held more than one
           tick, and of those the ones that run later than their first boundary */
        uint64_t leeway_set, leeway_busy, armed_wide, armed_moved;
        /* boundaries seen through due_in (of a periodic inside its callback); walks */
        uint64_t due_in_seen, due_in_rearm, foreach_walks;
        /* armings that had to wake the loop; that found an answer out but did not */
        uint64_t woke, did_not_wake;
        /* episodes on a timer of shards, and their armings in a shard other than shard 0 */
        uint64_t sharded_episodes, armed_off_shard0;
        /* reschedules of a pending node to a later deadline (of which those outside a pass
           that left it in its coarse slot), and to an earlier one; keep-alive rounds;
           re-filings the timers counted (stats.refiled) */
        uint64_t pushed_later, pushed_in_place, pushed_earlier, keepalive_rounds, refiled;
        /* episodes of a timer without threads in a build with them; timers destroyed by
           one of their callbacks */
        uint64_t unthreaded_episodes, destroyed_in_callback;
        uint64_t other_timer; /* nodes made pending on another timer */
        /* cancels by hwtimer_try_cancel, and retirements (of those, of a pending node) */
        uint64_t try_cancels, retired, retired_pending;
        /* bounded advances, those that left timeouts due, the timeouts left, and runs of
           them (of which runs of a later generation than another's left) */
        uint64_t bounded, cut, left, left_runs, left_later_gen;
    } seen;
    uint64_t episode_pushes; /* pushed_later in this episode: stats.refiled's bound */
    log_entry log[LOG_SIZE];
    jmp_buf diverged;
} sim;

static void note(const char *what, int id, uint64_t a, uint64_t b, long long result) {
    log_entry *e = &sim.log[sim.log_count++ % LOG_SIZE];
    e->op = sim.op;
    e->clock = sim.clock;
    e->what = what;
    e->id = id;
    e->a = a;
    e->b = b;
    e->result = result;
    if (id >= 0) sim.dirty[id] = 1;
    if (sim.verbose)
        printf("op %llu clock %llu: %s node %d %llu %llu -> %lld\n", (unsigned long long)sim.op,
               (unsigned long long)sim.clock, what, id, (unsigned long long)a,
               (unsigned long long)b, result);
}

static void print_log(void) {
    uint64_t i = sim.log_count > LOG_SIZE ? sim.log_count - LOG_SIZE : 0;
    fprintf(stderr, "  last operations (op, clock, what, node, args -> result):\n");
    for (; i < sim.log_count; i++) {
        const log_entry *e = &sim.log[i % LOG_SIZE];
        fprintf(stderr, "    op %llu clock %llu: %s node %d %llu %llu -> %lld\n",
                (unsigned long long)e->op, (unsigned long long)e->clock, e->what, e->id,
                (unsigned long long)e->a, (unsigned long long)e->b, e->result);
    }
}

static void diverge(const char *fmt, ...) MODEL_PRINTF(1, 2);
static void diverge(const char *fmt, ...) {
    va_list ap;
    if (!sim.quiet) {
        fprintf(stderr, "DIVERGENCE (%s, op %llu, episode %llu): ", model_origin(),
                (unsigned long long)sim.op, (unsigned long long)sim.episode);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fprintf(stderr, "\n  timer: tick %llu ns, ticks_per_wheel %u, start %llu, max_pending %zu, "
                        "%d nodes%s; clock %llu, last advance %llu\n",
                (unsigned long long)sim.m.tick, sim.ticks_per_wheel,
                (unsigned long long)sim.m.start, sim.m.max_pending, sim.n,
                sim.m.stopped ? ", stopped" : "", (unsigned long long)sim.clock,
                (unsigned long long)sim.m.last_now);
        print_log();
        model_print_rerun();
    }
    longjmp(sim.diverged, 1);
}

static void expect_result(const char *what, int id, long long got, long long want) {
    if (got != want) diverge("%s on node %d returned %lld, the model says %lld", what, id, got, want);
}

/* Arming inside a pass is remembered: such a timeout must wait for a later pass. */
static uint64_t arming_pass(void) { return sim.in_pass ? sim.pass_id : 0; }

/* ------------------------------------------------------------------------- the loop */

/* cfg.wake_fn of the episodes that have a loop: counted, checked where it may be called. */
static void on_wake(void *ctx) {
    if (ctx != &sim) diverge("wake_fn got ctx %p, not the config's", ctx);
    if (sim.in_pass) diverge("wake_fn was called inside an advance");
    sim.wakes++;
}

/* The timer answered the loop (next_expiry, poll_timeout_ms) with `answer`. */
static void loop_asked(uint64_t answer) {
    sim.answer_out = sim.wake_loop;
    sim.answer = answer;
    sim.answer_none = sim.m.pending == 0;
}

/* wake_fn calls node `id`'s arming (done, and applied to the model) must have made: one if
   it is outside a pass, an answer is out, and the node runs before the time answered (B
   beyond UINT64_MAX: at UINT64_MAX) or the answer was that nothing was pending. That one
   answers the answer. */
static uint64_t model_wakes_for(int id) {
    const model_timeout *mt = &sim.m.to[id];
    uint64_t at = mt->never ? UINT64_MAX : mt->boundary;
    if (sim.in_pass || !sim.answer_out || sim.arming_stays_left) return 0;
    if ((!sim.answer_none && at >= sim.answer) || model_sabotage == MODEL_NEVER_WAKES) {
        sim.seen.did_not_wake++;
        return 0;
    }
    sim.answer_out = 0;
    sim.seen.woke++;
    return 1;
}

/* wake_fn was called `want` times since the last look. */
static void check_wakes(const char *what, int id, uint64_t want) {
    uint64_t got = sim.wakes - sim.wakes_seen;
    sim.wakes_seen = sim.wakes;
    if (got != want)
        diverge("%s on node %d: wake_fn called %llu times, the model says %llu", what, id,
                (unsigned long long)got, (unsigned long long)want);
}

/* ------------------------------------------------------------------------- checks */

/* Which of our nodes `to` is (a callback's, a visitor's): O(1), since walks call it for
   every pending node. */
static int node_index(const hwtimer_timeout *to) {
    uintptr_t at = (uintptr_t)to, first = (uintptr_t)&sim.nodes[0].to;
    uintptr_t i = (at - first) / sizeof(node);
    if (at < first || i >= (uintptr_t)sim.n || &sim.nodes[i].to != to)
        diverge("a callback got a node %p that is not one of ours", (const void *)to);
    return (int)i;
}

/* What the last scheduling gave: deadline, period and arg (readable in a foreach visitor). */
static void check_scheduling(int id) {
    const model_timeout *mt = &sim.m.to[id];
    const hwtimer_timeout *to = &sim.nodes[id].to;
    uint64_t deadline = hwtimer_timeout_deadline(to), period = hwtimer_timeout_period(to);
    void *arg = hwtimer_timeout_arg(to);
    if (deadline != mt->deadline)
        diverge("node %d: deadline %llu, the model says %llu", id, (unsigned long long)deadline,
                (unsigned long long)mt->deadline);
    if (period != mt->period)
        diverge("node %d: period %llu, the model says %llu", id, (unsigned long long)period,
                (unsigned long long)mt->period);
    if (arg != mt->arg) diverge("node %d: arg %p, the model says %p", id, arg, mt->arg);
}

static void check_node(int id) {
    const model_timeout *mt = &sim.m.to[id];
    int state = hwtimer_timeout_state(&sim.nodes[id].to);
    if (state != mt->state) diverge("node %d: state %d, the model says %d", id, state, mt->state);
    check_scheduling(id);
}

static void check_all_nodes(int count) {
    int i;
    for (i = 0; i < count; i++) check_node(i);
}

/* A periodic timeout inside its own callback that the callback left alone: pending, and
   re-armed by its period when the callback returns. */
static int rearms_after_callback(int id) {
    const model_timeout *mt = &sim.m.to[id];
    return sim.in_callback && id == sim.running && mt->period && mt->pending &&
           mt->armed_pass != sim.pass_id;
}

/* The deadline of node id's next run: its D, or the next period's if it re-arms. */
static uint64_t next_run_deadline(int id) {
    const model_timeout *mt = &sim.m.to[id];
    if (rearms_after_callback(id))
        return model_next_period(mt->deadline, mt->period, sim.pass_now);
    return mt->deadline;
}

/* The boundary of node id's next run, if pending. Returns 0 when there is none, or it lies
   beyond UINT64_MAX. */
static int next_run_boundary(int id, uint64_t *at) {
    const model_timeout *mt = &sim.m.to[id];
    if (!mt->pending) return 0;
    if (rearms_after_callback(id))
        return model_boundary(&sim.m, next_run_deadline(id), mt->leeway, at);
    *at = mt->boundary;
    return !mt->never;
}

/* A boundary the timer chose for node id (seen through due_in) must be a tick boundary in
   the node's window: at or after D and after the first boundary B at or after D, and at
   most the leeway asked for after B. */
static void check_window(int id, uint64_t at) {
    uint64_t d = next_run_deadline(id), first = UINT64_MAX, leeway = sim.m.to[id].leeway_asked;
    int first_exists = model_tick_time(&sim.m, model_due_tick(&sim.m, d), &first);
    int on_grid = at >= sim.m.start && (at - sim.m.start) % sim.m.tick == 0;
    if (!first_exists || !on_grid || at < d || at < first || at - first > leeway)
        diverge("node %d: due_in puts its boundary at %llu, outside its window: a tick "
                "boundary in [max(D %llu, B %llu), B + leeway %llu]%s",
                id, (unsigned long long)at, (unsigned long long)d, (unsigned long long)first,
                (unsigned long long)leeway, first_exists ? "" : " (B beyond UINT64_MAX)");
    sim.seen.due_in_seen++;
    sim.seen.due_in_rearm += rearms_after_callback(id) != 0;
}

/* due_in is the time from the clock to the boundary of the next run, 0 once it has passed,
   UINT64_MAX when not pending, or when the boundary is UINT64_MAX or lies past it (the
   sentinel of hwtimer_next_expiry); the boundary it shows must lie in the window, then be
   exactly the tick the model picked. */
static void check_due_in(int id) {
    uint64_t got = hwtimer_timeout_due_in(sim.t, &sim.nodes[id].to), at = 0, want = UINT64_MAX;
    if (next_run_boundary(id, &at) && at != UINT64_MAX) want = sat_sub(at, sim.clock);
    if (got != 0 && got != UINT64_MAX && sim.m.to[id].pending) check_window(id, sim.clock + got);
    if (got != want)
        diverge("node %d: due_in %llu, the model says %llu (clock %llu, leeway %llu stored as "
                "%llu, so boundary %llu)",
                id, (unsigned long long)got, (unsigned long long)want,
                (unsigned long long)sim.clock, (unsigned long long)sim.m.to[id].leeway_asked,
                (unsigned long long)sim.m.to[id].leeway, (unsigned long long)at);
}

/* is_pending and due_in: "will it run, and when?" (also inside callbacks). */
static void check_will_run(int id) {
    int pending = hwtimer_is_pending(sim.t, &sim.nodes[id].to);
    if (pending != sim.m.to[id].pending)
        diverge("node %d: hwtimer_is_pending %d, the model says %d", id, pending,
                sim.m.to[id].pending);
    check_due_in(id);
}

/* Everything about node id: state, scheduling, is_pending and due_in. */
static void check_node_fully(int id) {
    check_node(id);
    check_will_run(id);
    sim.dirty[id] = 0;
}

/* The nodes the operation touched, and two more in turn, so that every node is looked at
   now and then. */
static void check_nodes(void) {
    int i;
    for (i = 0; i < MAX_NODES; i++)
        if (sim.dirty[i]) check_node_fully(i);
    for (i = 0; i < 2; i++) {
        sim.next_checked = (sim.next_checked + 1) % sim.n;
        check_node_fully(sim.next_checked);
    }
}

/* A walk over the pending set (stop's hand-back, hwtimer_foreach) visits each pending node
   once and nothing else, and returns how many it visited. */
static void walk_begin(void) {
    memset(sim.visited, 0, sizeof sim.visited);
    sim.visited_count = 0;
}

static void walk_visit(const char *walk, int id) {
    if (sim.visited[id]) diverge("%s visited node %d twice", walk, id);
    if (!sim.m.to[id].pending) diverge("%s visited node %d, which was not pending", walk, id);
    sim.visited[id] = 1;
    sim.visited_count++;
}

static void walk_end(const char *walk, long long got) {
    if (got != (long long)sim.visited_count)
        diverge("%s returned %lld, but visited %zu nodes", walk, got, sim.visited_count);
    if (sim.visited_count != sim.m.pending)
        diverge("%s visited %zu nodes, but %zu are pending", walk, sim.visited_count,
                sim.m.pending);
}

static void on_visit(hwtimer_timeout *to, void *ctx) {
    int id = node_index(to);
    if (ctx != sim.visited) diverge("foreach's visitor got ctx %p, not foreach's", ctx);
    walk_visit("hwtimer_foreach", id);
    check_scheduling(id);
    /* the visitor may ask is_pending and due_in, of any node: as outside, no deadlock */
    check_will_run(id);
    check_will_run((id + 1) % sim.n);
}

static void check_foreach(void) {
    walk_begin();
    walk_end("hwtimer_foreach", (long long)hwtimer_foreach(sim.t, on_visit, sim.visited));
    sim.seen.foreach_walks++;
}

/* ------------------------------------------------------------------------- leftovers

   hwtimer_advance_max leaves the timeouts it did not run due, each of the generation of
   the call that left it. They run first at the next call whatever its now (a now behind
   the last counts as the last), in order of generation, then of B. One pushed later
   outside a pass stays where it is if its `where` holds its generation (as in a coarse
   slot; a wheel's last generation is still _LIST, and moves as any due node): it still
   runs with its generation if due, else the pass that reaches it files it (then it is
   not left any more: the model looks, at the end of each pass, at which nodes the
   timer's `left` lists hold). Pushes perturb the order within a generation (a node
   keeps its place in its wheel's list, with a new B), so the order of B is checked only
   while no left timeout was pushed. */

/* Does the timer hold timeouts left by a bounded advance (its wheels' `left` lists)? */
static int timer_holds_left(void) {
    unsigned i, wheels = sim.shards ? sim.shards : 1;
    for (i = 0; i < wheels; i++)
        if (!hwtimer__list_empty(&hwtimer__shard_at(sim.t, i)->wheel.left)) return 1;
    return 0;
}

/* Is node id left, and due by `now`: one the timer must still hold, to run first? */
static int left_due_by(int id, uint64_t now) {
    const model_timeout *mt = &sim.m.to[id];
    return mt->left_gen && model_due(mt, now);
}

static int any_left_due_by(uint64_t now, int except) {
    int i;
    for (i = 0; i < sim.n; i++)
        if (i != except && left_due_by(i, now)) return 1;
    return 0;
}

/* Marks in `in_left` the nodes in the timer's `left` lists. */
static void timer_left_nodes(unsigned char *in_left) {
    unsigned i, wheels = sim.shards ? sim.shards : 1;
    memset(in_left, 0, MAX_NODES);
    for (i = 0; i < wheels; i++) {
        const struct hwtimer__link *head = &hwtimer__shard_at(sim.t, i)->wheel.left, *l;
        for (l = head->next; l != head; l = l->next)
            in_left[node_index((const hwtimer_timeout *)(const void *)l)] = 1;
    }
}

/* After a pass: a left node the pass filed (pushed past its target) is not left any more;
   once none is, the order of B holds again. */
static void sync_left(void) {
    static unsigned char in_left[MAX_NODES];
    int i, any = 0;
    timer_left_nodes(in_left);
    for (i = 0; i < sim.n; i++) {
        model_timeout *mt = &sim.m.to[i];
        if (!mt->left_gen) continue;
        if (!in_left[i]) {
            if (model_due(mt, sim.m.last_now))
                diverge("node %d, left due, is no longer in a `left` list", i);
            mt->left_gen = 0;
        }
        any |= mt->left_gen != 0;
    }
    if (!any) sim.m.left_moved = 0;
}

/* The bounded advance that just returned ran its bound: what it would still have run is
   left, of a new generation. */
static void model_leave_due(void) {
    int i, left = 0;
    if (model_sabotage == MODEL_IGNORES_BOUND) return;
    for (i = 0; i < sim.n; i++) {
        model_timeout *mt = &sim.m.to[i];
        if (mt->left_gen || !model_due(mt, sim.pass_now) || mt->armed_pass == sim.pass_id)
            continue;
        if (!left) sim.m.left_gens++;
        mt->left_gen = sim.m.left_gens;
        left++;
    }
    sim.seen.cut++;
    sim.seen.left += (uint64_t)left;
}

/* A callback runs node id: a left one before any other, of the oldest generation first
   (and, while none was pushed, in order of B within it); any other only once none left is
   due, in order of B among those. */
static void check_run_order(int id) {
    const model_timeout *mt = &sim.m.to[id];
    int i;
    if (!mt->left_gen) {
        for (i = 0; i < sim.n; i++)
            if (i != id && left_due_by(i, sim.pass_now))
                diverge("node %d ran while node %d, left due by a bounded advance (B %llu), "
                        "still waits: left timeouts run first", id, i,
                        (unsigned long long)sim.m.to[i].boundary);
        if (mt->boundary < sim.pass_last_boundary)
            diverge("node %d ran out of order: B %llu after B %llu", id,
                    (unsigned long long)mt->boundary, (unsigned long long)sim.pass_last_boundary);
        sim.pass_last_boundary = mt->boundary;
        return;
    }
    for (i = 0; i < sim.n; i++) {
        const model_timeout *other = &sim.m.to[i];
        if (i == id || !left_due_by(i, sim.pass_now)) continue;
        if (other->left_gen < mt->left_gen)
            diverge("node %d, left by bounded call %llu, ran before node %d, left by call %llu",
                    id, (unsigned long long)mt->left_gen, i, (unsigned long long)other->left_gen);
        if (!sim.m.left_moved && other->left_gen == mt->left_gen && other->boundary < mt->boundary)
            diverge("node %d (left, B %llu) ran before node %d (left by the same call, B %llu)",
                    id, (unsigned long long)mt->boundary, i, (unsigned long long)other->boundary);
    }
    sim.seen.left_runs++;
    sim.seen.left_later_gen += sim.pass_left_gen && mt->left_gen > sim.pass_left_gen;
    sim.pass_left_gen = mt->left_gen;
    sim.pass_left_boundary = mt->boundary;
}

/* hwtimer_stats' lateness: a run's now minus its D; late_runs past tick + leeway. */
static void model_count_late(const model_timeout *mt) {
    uint64_t late = sim.pass_now - mt->deadline; /* (B <= now, D <= B) */
    uint64_t leeway = model_sabotage == MODEL_LATE_WITHOUT_LEEWAY ? 0 : mt->leeway;
    uint64_t allowed = sat_add(sim.m.tick, leeway);
    if (late > sim.m.late_max) sim.m.late_max = late;
    sim.m.late_runs += late > allowed;
}

static void check_lateness(const hwtimer_stats *stats) {
    if (stats->late_max_ns != sim.m.late_max || stats->late_runs != sim.m.late_runs)
        diverge("stats: late_max_ns %llu, late_runs %llu; the model says %llu, %llu",
                (unsigned long long)stats->late_max_ns, (unsigned long long)stats->late_runs,
                (unsigned long long)sim.m.late_max, (unsigned long long)sim.m.late_runs);
}

static void check_pending(void) {
    size_t got = hwtimer_pending(sim.t);
    if (got != sim.m.pending)
        diverge("hwtimer_pending %zu, the model has %zu pending", got, sim.m.pending);
}

/* next_expiry: UINT64_MAX when nothing is pending, otherwise never later than the earliest
   B. With no B at all (every pending boundary beyond UINT64_MAX) hwtimer.h allows any time:
   the wheel may still want wake-ups to cascade; the event-loop operation checks progress. */
static void check_next_expiry(void) {
    uint64_t got = hwtimer_next_expiry(sim.t), min_b = 0;
    loop_asked(got);
    if (sim.m.pending == 0 && got != UINT64_MAX)
        diverge("hwtimer_next_expiry %llu, but nothing is pending", (unsigned long long)got);
    if (any_left_due_by(sim.m.last_now, -1) && !timer_holds_left())
        diverge("timeouts are left due by a bounded advance, but the timer holds none");
    if (timer_holds_left()) { /* due now: at most the last now */
        if (got > sim.m.last_now)
            diverge("hwtimer_next_expiry %llu with timeouts left due, after the last now %llu",
                    (unsigned long long)got, (unsigned long long)sim.m.last_now);
    } else if (model_min_boundary(&sim.m, sim.n, &min_b) && got > min_b)
        diverge("hwtimer_next_expiry %llu is later than the earliest boundary %llu",
                (unsigned long long)got, (unsigned long long)min_b);
}

/* poll_timeout_ms is next_expiry as a relative timeout from the clock, rounded up. */
static void check_poll_timeout(void) {
    int got = hwtimer_poll_timeout_ms(sim.t), want;
    uint64_t expiry = hwtimer_next_expiry(sim.t);
    loop_asked(expiry); /* (both calls answered; the same time) */
    want = sim.m.pending == 0 ? -1 : timer_holds_left() ? 0 : test_ms_until(expiry, sim.clock);
    if (got != want)
        diverge("hwtimer_poll_timeout_ms %d, expected %d (next_expiry %llu)", got, want,
                (unsigned long long)expiry);
}

/* The wheel's own invariants, as hwtimer_check sees them. */
static void check_invariants(void) {
    int broken = hwtimer_check(sim.t);
    if (broken != 0) diverge("hwtimer_check %d: an invariant of the wheel is broken", broken);
}

static void check_world(void) {
    check_wakes("the last operation", -1, 0); /* anything but an arming that checked */
    check_invariants();
    check_pending();
    check_next_expiry();
    check_nodes();
}

/* ------------------------------------------------------------------------- random inputs */

static int random_node(void) { return (int)draw_below((uint64_t)sim.n); }

/* A random node for which keep(id) holds, or any node when none does. */
static int random_node_where(int (*keep)(int id)) {
    int i, seen = 0, pick = random_node();
    for (i = 0; i < sim.n; i++)
        if (keep(i) && draw_below((uint64_t)++seen) == 0) pick = i;
    return pick;
}

static int is_pending(int id) { return sim.m.to[id].pending; }
static int is_not_pending(int id) { return !sim.m.to[id].pending; }
static int fires(int id) { return sim.m.to[id].pending && !sim.m.to[id].never; }

/* Still to run in the current pass (a callback that cancels it must stop it). */
static int runs_this_pass(int id) {
    return id != sim.running && model_due(&sim.m.to[id], sim.pass_now) &&
           sim.m.to[id].armed_pass != sim.pass_id;
}

/* The boundary of some pending timeout that fires, or the next boundary. */
static uint64_t random_pending_boundary(void) {
    int id = random_node_where(fires);
    if (fires(id)) return sim.m.to[id].boundary;
    return model_boundary_after(&sim.m, sim.m.last_now);
}

static uint64_t random_delay(void) {
    uint64_t tick = sim.m.tick;
    switch (draw_below(10)) {
    case 0: return 0;
    case 1: return 1 + draw_below(10);
    case 2: return around(sat_mul(tick, draw_below(4)));
    case 3: return around(sat_mul(tick, draw_below(2u * (uint64_t)sim.ticks_per_wheel + 2)));
    case 4: return around(sat_mul(tick, draw_log_bits(24))); /* upper wheel levels */
    case 5: return draw_log_bits(64);
    case 6: return UINT64_MAX;
    case 7: return around(UINT64_MAX - sim.clock); /* clock + delay right at overflow */
    case 8: return around(sat_sub(random_pending_boundary(), sim.clock)); /* tie with another */
    default: return draw_log_bits(40);
    }
}

static uint64_t random_deadline(void) {
    switch (draw_below(7)) {
    case 0: return sat_add(sim.clock, random_delay());
    case 1: return sat_sub(sim.m.last_now, draw_log_bits(40)); /* already past */
    case 2: return around(random_pending_boundary());
    case 3: return UINT64_MAX;
    case 4: return sat_sub(sim.m.start, draw_log_bits(30)); /* before the timer started */
    case 5: return draw_bits(64);
    default: return around(sim.m.last_now);
    }
}

static uint64_t random_period(void) {
    static const uint64_t fixed[] = {1, 2, 3, UINT64_MAX, UINT64_MAX / 2, NS_PER_YEAR};
    switch (draw_below(6)) {
    case 0: return fixed[draw_below(sizeof fixed / sizeof fixed[0])];
    case 1: return sat_sub(around(sim.m.tick), 1) + 1; /* tick - 1 .. tick + 1, never 0 */
    case 2: return sat_mul(sim.m.tick, 1 + draw_below(2u * (uint64_t)sim.ticks_per_wheel));
    case 3: return sat_add(draw_log_bits(64), 1);
    case 4: return 1 + draw_log_bits(30);
    default: return 1 + draw_below(1000);
    }
}

/* Leeways: none, a few ns, about a tick, many ticks, near UINT64_MAX, log-uniform, and
   round decimals at the edge of what a node stores exactly (65535 or 65536 times 10^k). */
static uint64_t random_leeway(void) {
    uint64_t tick = sim.m.tick, power = 1, digits;
    unsigned k;
    switch (draw_below(9)) {
    case 0:
    case 1: return 0;
    case 2: return 1 + draw_below(1000);
    case 3: return around(sat_mul(tick, 1 + draw_below(2)));
    case 4: return around(sat_mul(tick, draw_below(4u * (uint64_t)sim.ticks_per_wheel + 2)));
    case 5: return UINT64_MAX - draw_log_bits(16);
    case 6:
        digits = 65535 + draw_below(2);
        for (k = (unsigned)draw_below(16); k > 0; k--) power *= 10u;
        return around(sat_mul(digits, power));
    default: return draw_log_bits(64);
    }
}

/* The arg a scheduling gives: usually the node's own, sometimes another or NULL, so that
   hwtimer_timeout_arg and the callbacks show which scheduling it came from. */
static void *random_arg(int id) {
    switch (draw_below(4)) {
    case 0: return NULL;
    case 1: return &sim.nodes[(id + 1) % MAX_NODES];
    default: return &sim.nodes[id];
    }
}

/* Most episodes stay far from the end of time: once an advance reaches UINT64_MAX every
   later one is a no-op or a repeat, and the rest of the episode would test little. Only
   `far_jumps` episodes jump more than about nine years at once. */
static int reachable(uint64_t target) {
    return sim.far_jumps || target <= sat_add(sim.m.last_now, UINT64_C(1) << 58);
}

static uint64_t random_jump(void) {
    uint64_t last = sim.m.last_now, tick = sim.m.tick;
    switch (draw_below(16)) {
    case 0: return last;
    case 1: return sat_add(last, 1);
    case 2: return model_boundary_after(&sim.m, last); /* exactly on a boundary */
    case 3: return sat_sub(model_boundary_after(&sim.m, last), 1);
    case 4:
    case 5: return around(random_pending_boundary());
    case 6:
    case 7: return sat_add(last, sat_mul(tick, 1 + draw_below(2u * (uint64_t)sim.ticks_per_wheel)));
    case 8: return sat_add(last, sat_mul(tick, draw_log_bits(24)));
    case 9: return sat_add(last, draw_log_bits(40));
    case 10: return sat_sub(last, 1 + draw_log_bits(40)); /* backwards: a no-op */
    case 11: return sim.clock;
    case 12: return sat_add(last, sat_mul(NS_PER_YEAR, 1 + draw_below(3)));
    case 13: return draw_percent(10) ? UINT64_MAX : sat_add(last, draw_log_bits(64));
    default: return sat_add(last, draw_log_bits(20));
    }
}

static uint64_t random_now(void) {
    uint64_t target = random_jump();
    return reachable(target) ? target : sat_add(sim.m.last_now, draw_log_bits(40));
}

static uint64_t random_start(void) {
    switch (draw_below(12)) {
    case 0: return 0;
    case 1: return (UINT64_C(1) << 63) + draw_log_bits(40);
    case 2: return (UINT64_C(1) << 63) - draw_log_bits(40);
    case 3: return UINT64_MAX - draw_log_bits(20); /* the clock is about to run out */
    case 4: return UINT64_MAX - draw_log_bits(44);
    case 5:
    case 6: return draw_log_bits(64);
    default: return draw_log_bits(40);
    }
}

/* ------------------------------------------------------------------------- operations */

static void on_fire(hwtimer_timeout *to, void *arg);

/* How an arming gives its deadline: a delay from the clock, or D itself (the _at forms). */
enum { ARM_RELATIVE, ARM_ABSOLUTE, ARM_TICKS };

/* The timer's time, which hwtimer_schedule_ticks counts from: the now of the pass under way
   (from a callback), else of the last advance that was not a no-op. */
static uint64_t timer_time(void) {
    return sim.in_pass && !sim.pass_noop ? sim.pass_now : sim.m.last_now;
}

static uint64_t deadline_of(int form, uint64_t when) {
    if (form == ARM_TICKS) return sat_add(timer_time(), sat_mul(when, sim.m.tick));
    return form == ARM_ABSOLUTE ? when : sat_add(sim.clock, when);
}

/* Counts the armings a leeway made wider than one tick, and those it moved. */
static void count_leeway(int id) {
    const model_timeout *mt = &sim.m.to[id];
    uint64_t first;
    if (mt->leeway < sim.m.tick) return;
    sim.seen.armed_wide++;
    sim.seen.armed_moved += !mt->never && model_boundary(&sim.m, mt->deadline, 0, &first) &&
                            first != mt->boundary;
}

/* Records an arming call, compares its result, and arms the model when it succeeded. */
static void check_arm(const char *what, int id, int got, int want, uint64_t deadline,
                      uint64_t period, void *arg) {
    note(what, id, deadline, period, got);
    expect_result(what, id, got, want);
    if (want != HWTIMER_OK) {
        sim.seen.refused[-want & 15]++;
        check_wakes(what, id, 0);
        return;
    }
    sim.seen.armed++;
    sim.seen.armed_in_pass += sim.in_pass != 0;
    sim.seen.armed_off_shard0 +=
        sim.shards && sim.nodes[id].to.wheel != &hwtimer__shard_at(sim.t, 0)->wheel;
    model_arm(&sim.m, id, deadline, period, arg, arming_pass());
    count_leeway(id);
    check_wakes(what, id, model_wakes_for(id));
}

/* hwtimer_schedule (when = a delay), hwtimer_schedule_at (when = D) or
   hwtimer_schedule_ticks (when = ticks from the timer's time). */
static void op_schedule(int id, int form, uint64_t when) {
    static const char *const names[] = {"schedule", "schedule_at", "schedule_ticks"};
    hwtimer_timeout *to = &sim.nodes[id].to;
    int want = model_schedule_result(&sim.m, id);
    void *arg = random_arg(id);
    int got = form == ARM_ABSOLUTE ? hwtimer_schedule_at(sim.t, to, when, on_fire, arg)
              : form == ARM_TICKS  ? hwtimer_schedule_ticks(sim.t, to, when, on_fire, arg)
                                   : hwtimer_schedule(sim.t, to, when, on_fire, arg);
    check_arm(names[form], id, got, want, deadline_of(form, when), 0, arg);
}

static void op_schedule_periodic(int id, int form, uint64_t when, uint64_t period) {
    hwtimer_timeout *to = &sim.nodes[id].to;
    int want = period == 0 ? HWTIMER_EINVAL : model_schedule_result(&sim.m, id);
    void *arg = random_arg(id);
    int got = form == ARM_ABSOLUTE
                  ? hwtimer_schedule_periodic_at(sim.t, to, when, period, on_fire, arg)
                  : hwtimer_schedule_periodic(sim.t, to, when, period, on_fire, arg);
    check_arm(form == ARM_ABSOLUTE ? "schedule_periodic_at" : "schedule_periodic", id, got, want,
              deadline_of(form, when), period, arg);
}

/* Was `to` filed in a coarse slot of its timer (level 1 or up)? The one place the model
   looks inside hwtimer: such a node pushed later must stay where it is. */
static int filed_coarse(const hwtimer_timeout *to) {
    return hwtimer_timeout_state(to) == HWTIMER_PENDING &&
           to->where >= HWTIMER__WHERE_WHEEL + to->wheel->geo.width;
}

/* Keeps the period and arg (and callback) of the last scheduling, pending or not. A pending
   node's move is counted: later (what may be left where it is filed, and re-filed later:
   stats.refiled's bound; from a callback too, as a shard whose pass has ended takes it so
   while the timer's pass goes on), or earlier. A push later outside a pass of a node filed
   in a coarse slot touches no list: its links and place stay as they were. */
static void op_reschedule(int id, int form, uint64_t when) {
    hwtimer_timeout *to = &sim.nodes[id].to;
    model_timeout *mt = &sim.m.to[id];
    int want = model_reschedule_result(&sim.m, id), pending = mt->pending;
    uint64_t deadline = deadline_of(form, when), old_boundary = mt->boundary;
    int old_never = mt->never, coarse = pending && filed_coarse(to);
    struct hwtimer__link links = to->link;
    uint32_t where = to->where;
    int got = form == ARM_ABSOLUTE ? hwtimer_reschedule_at(sim.t, to, when)
                               : hwtimer_reschedule(sim.t, to, when);
    int later = pending && deadline >= mt->deadline;
    uint64_t left_gen = mt->left_gen;
    sim.arming_stays_left = left_gen && later && !sim.in_pass && coarse;
    check_arm(form == ARM_ABSOLUTE ? "reschedule_at" : "reschedule", id, got, want, deadline,
              mt->period, mt->arg);
    sim.arming_stays_left_was = sim.arming_stays_left;
    sim.arming_stays_left = 0;
    if (!pending) return;
    if (sim.arming_stays_left_was) { /* left in place, as in a coarse slot */
        mt->left_gen = left_gen;
        sim.m.left_moved = 1;
    }
    if (later && !sim.in_pass && coarse) {
        if (to->where != where || to->link.next != links.next || to->link.prev != links.prev)
            diverge("node %d, filed in a coarse slot, was moved by a push later", id);
        sim.seen.pushed_in_place++;
    }
    sim.seen.pushed_later += (uint64_t)later;
    sim.episode_pushes += (uint64_t)later;
    sim.seen.pushed_earlier += !later;
    if (later && model_sabotage == MODEL_IGNORES_PUSH) { /* the old boundary */
        mt->boundary = old_boundary;
        mt->never = old_never;
    }
}

/* Refused while the node is pending (a periodic inside its own callback too); otherwise
   the node keeps the leeway, as stored, through its next schedulings. */
static void op_set_leeway(int id, uint64_t leeway) {
    model_timeout *mt = &sim.m.to[id];
    int want = mt->pending ? HWTIMER_EBUSY : HWTIMER_OK;
    int got = hwtimer_timeout_set_leeway(&sim.nodes[id].to, leeway);
    note("set_leeway", id, leeway, model_stored_leeway(leeway), got);
    expect_result("set_leeway", id, got, want);
    if (want != HWTIMER_OK) {
        sim.seen.leeway_busy++;
        return;
    }
    sim.seen.leeway_set++;
    mt->leeway_asked = leeway;
    mt->leeway = model_stored_leeway(leeway);
}

/* hwtimer_cancel, or hwtimer_try_cancel, which answers as it on one thread: a callback
   runs on this thread, so none runs on another. */
static void op_cancel(int id) {
    int want = sim.m.to[id].pending, try_it = draw_percent(25);
    int got = try_it ? hwtimer_try_cancel(sim.t, &sim.nodes[id].to)
                     : hwtimer_cancel(sim.t, &sim.nodes[id].to);
    note(try_it ? "try_cancel" : "cancel", id, 0, 0, got);
    expect_result(try_it ? "try_cancel" : "cancel", id, got, want);
    sim.seen.try_cancels += (uint64_t)try_it;
    if (!want) return;
    sim.seen.cancelled++;
    sim.seen.cancelled_due += sim.in_pass && runs_this_pass(id);
    model_disarm(&sim.m, id, HWTIMER_CANCELLED);
}

/* hwtimer_retire: a cancel (1 if pending), then RETIRED, and every arming of the node is
   refused (on this timer and on others) until op_forget inits it. Drawn on any node:
   never scheduled, pending, run, inside its own callback, retired already. */
static void op_retire(int id) {
    model_timeout *mt = &sim.m.to[id];
    int want = mt->pending;
    int got = hwtimer_retire(sim.t, &sim.nodes[id].to);
    note("retire", id, 0, 0, got);
    expect_result("retire", id, got, want);
    sim.seen.retired++;
    sim.seen.retired_pending += (uint64_t)want;
    if (want) sim.seen.cancelled_due += sim.in_pass && runs_this_pass(id);
    model_disarm(&sim.m, id, HWTIMER_RETIRED);
    mt->retired = 1;
    check_node(id);
}

/* Random values are drawn one statement at a time: the order in which a call's arguments
   are evaluated is unspecified, and a seed must give the same run with every compiler. */
static int random_form(void) { return draw_percent(40) ? ARM_ABSOLUTE : ARM_RELATIVE; }

static uint64_t random_when(int form) {
    return form == ARM_ABSOLUTE ? random_deadline() : random_delay();
}

/* Ticks for hwtimer_schedule_ticks: none, a few, about a rotation or two, upper levels, any
   (past the last tick). */
static uint64_t random_ticks(void) {
    switch (draw_below(6)) {
    case 0: return 0;
    case 1: return 1 + draw_below(4);
    case 2: return draw_below(2u * (uint64_t)sim.ticks_per_wheel + 2);
    case 3: return draw_log_bits(24);
    case 4: return draw_log_bits(64);
    default: return UINT64_MAX;
    }
}

static void op_random_reschedule(int id) {
    int form = random_form();
    op_reschedule(id, form, random_when(form));
}

/* How far a push moves a deadline: within a tick, a few ticks, about a rotation of level 0,
   about a slot of level 1 or a few, or any amount. */
static uint64_t random_shift(void) {
    uint64_t tick = sim.m.tick, width = sim.ticks_per_wheel;
    switch (draw_below(6)) {
    case 0: return draw_below(tick + 1);
    case 1: return sat_mul(tick, 1 + draw_below(4));
    case 2: return around(sat_mul(tick, width));
    case 3: return around(sat_mul(sat_mul(tick, width), 1 + draw_below(2 * width)));
    case 4: return draw_log_bits(64);
    default: return sat_mul(tick, draw_log_bits(24));
    }
}

/* Moves a pending node's deadline later (mostly) or earlier, in either form (the relative
   one from the clock: a deadline behind it becomes the clock). */
static void op_push(int id) {
    int form = random_form();
    uint64_t d = sim.m.to[id].deadline, shift = random_shift();
    d = draw_percent(80) ? sat_add(d, shift) : sat_sub(d, shift);
    op_reschedule(id, form, form == ARM_ABSOLUTE ? d : sat_sub(d, sim.clock));
}

/* Any arming, in either form; a node that is not pending may get a new leeway first. */
static void forget_node(int id);

/* An arming of any form; a retired node is made anew first half of the time (as a program
   that reuses its struct would), else its arming is refused. */
static void op_random_arm(int id) {
    int form;
    uint64_t when;
    if (sim.m.to[id].retired && !sim.m.to[id].pending && draw_percent(50)) forget_node(id);
    if (!sim.m.to[id].pending && draw_percent(30)) op_set_leeway(id, random_leeway());
    form = random_form();
    when = random_when(form);
    switch (draw_below(6)) {
    case 0: op_schedule(id, ARM_TICKS, random_ticks()); break;
    case 1:
    case 2: op_schedule(id, form, when); break;
    case 3: op_schedule_periodic(id, form, when, draw_percent(3) ? 0 : random_period()); break;
    default: op_reschedule(id, form, when); break;
    }
}

/* A pass runs from pass_begin to pass_end; on_fire checks each callback in between. */
static void pass_begin(uint64_t now) {
    note("advance", -1, now, sim.m.last_now, (long long)sim.next_bound);
    if (!sim.m.stopped && now < sim.m.last_now && timer_holds_left())
        now = sim.m.last_now; /* left timeouts run whatever the now */
    sim.pass_id++;
    sim.in_pass = 1;
    sim.pass_now = now;
    sim.pass_noop = sim.m.stopped || now < sim.m.last_now;
    sim.pass_last_boundary = 0;
    sim.pass_left_gen = 0;
    sim.pass_runs = 0;
    sim.pass_bound = 0;
}

static void pass_end(size_t got) {
    int i, cut;
    sim.in_pass = 0;
    note("advance returned", -1, sim.pass_now, sim.pass_runs, (long long)got);
    if (got != sim.pass_runs)
        diverge("hwtimer_advance(%llu) returned %zu, but %zu callbacks ran",
                (unsigned long long)sim.pass_now, got, sim.pass_runs);
    if (sim.pass_bound && got > sim.pass_bound)
        diverge("hwtimer_advance_max(%llu, %zu) ran %zu callbacks",
                (unsigned long long)sim.pass_now, sim.pass_bound, got);
    if (sim.pass_noop) {
        sim.seen.noop_advances++;
        return;
    }
    sim.m.last_now = sim.pass_now;
    cut = sim.pass_bound && got == sim.pass_bound;
    if (cut && !sim.destroyed) model_leave_due();
    if (!sim.destroyed) sync_left();
    for (i = 0; i < sim.n; i++) {
        const model_timeout *mt = &sim.m.to[i];
        if (model_due(mt, sim.pass_now) && mt->armed_pass != sim.pass_id && !(cut && mt->left_gen))
            diverge("node %d (D %llu, B %llu) was due at %llu but did not run", i,
                    (unsigned long long)mt->deadline, (unsigned long long)mt->boundary,
                    (unsigned long long)sim.pass_now);
    }
    check_all_nodes(sim.n);
    if (sim.destroyed) { /* the timer is gone: the rest of the operation with it */
        sim.t = NULL;
        longjmp(sim.episode_over, 1);
    }
}

static void op_advance(uint64_t now) {
    pass_begin(now);
    pass_end(hwtimer_advance(sim.t, now));
}

/* A bound for hwtimer_advance_max: none (0), one, a few, about the nodes, or many. */
static size_t random_bound(void) {
    switch (draw_below(6)) {
    case 0: return 0;
    case 1: return 1;
    case 2:
    case 3: return 1 + (size_t)draw_below(4);
    case 4: return 1 + (size_t)draw_below((uint64_t)sim.n);
    default: return 1 + (size_t)draw_log_bits(10);
    }
}

static void op_advance_max(uint64_t now) {
    size_t bound = random_bound();
    sim.next_bound = bound;
    pass_begin(now);
    sim.next_bound = 0;
    sim.pass_bound = bound;
    sim.seen.bounded++;
    pass_end(hwtimer_advance_max(sim.t, now, bound));
}

static void op_poll(void) {
    if (!reachable(sim.clock)) return;
    pass_begin(sim.clock);
    pass_end(hwtimer_poll(sim.t));
}

/* An event loop: sleep until next_expiry, advance, repeat until something ran on 1-3
   wake-ups. Every wake-up that runs nothing must move next_expiry strictly later, and
   there are at most MAX_WAKEUPS + one per node of them before something runs: so the loop
   reaches every boundary, pushed timeouts or not. */
static void op_event_loop(void) {
    int empty = 0, ran_on = 0, runs_wanted = 1 + (int)draw_below(3);
    while (ran_on < runs_wanted) {
        uint64_t expiry = hwtimer_next_expiry(sim.t), after;
        loop_asked(expiry);
        if (expiry == UINT64_MAX || !reachable(expiry)) return;
        op_advance(expiry > sim.m.last_now ? expiry : sim.m.last_now);
        check_next_expiry();
        if (sim.pass_runs > 0) {
            ran_on++;
            empty = 0;
            continue;
        }
        if (++empty > MAX_WAKEUPS + sim.n)
            diverge("an event loop woke %d times at next_expiry without running anything",
                    empty);
        after = hwtimer_next_expiry(sim.t);
        loop_asked(after);
        if (after <= expiry)
            diverge("no progress: advance to next_expiry %llu ran nothing, and next_expiry "
                    "is now %llu", (unsigned long long)expiry, (unsigned long long)after);
    }
}

/* A length for keep-alive's idle timeouts: a few ticks, about a rotation of level 0 (on
   either side of the coarse levels), a few slots of level 1, or any. */
static uint64_t random_idle_length(void) {
    uint64_t tick = sim.m.tick, width = sim.ticks_per_wheel;
    switch (draw_below(4)) {
    case 0: return sat_mul(tick, 1 + draw_below(8));
    case 1: return around(sat_mul(tick, width));
    case 2: return sat_mul(sat_mul(tick, width), 1 + draw_below(8));
    default: return draw_log_bits(40);
    }
}

/* Keep-alive, as a server keeps idle timeouts: a few connections (nodes first .. first +
   count - 1, those pending), and from the loop's time (mostly) rounds in which the clock
   steps on, each connection is read or not, a read pushing its timeout to the clock + the
   idle length (reschedule_at from the clock as the loop caches it, or reschedule), and
   the loop polls or sleeps until next_expiry. */
static void op_keepalive(void) {
    uint64_t length = random_idle_length(), step;
    int rounds = 1 + (int)draw_below(16), first = random_node();
    int count = 1 + (int)draw_below(8), k;
    step = sat_add(length / (1 + draw_below((uint64_t)rounds)), sim.m.tick); /* rounds span it */
    if (draw_percent(80)) sim.clock = sim.m.last_now;
    while (rounds-- > 0) {
        if (!reachable(sat_add(sim.clock, step))) return;
        sim.clock = sat_add(sim.clock, step);
        note("clock", -1, sim.clock, 0, 0);
        for (k = 0; k < count && first + k < sim.n; k++) {
            int id = first + k, form = random_form();
            if (!sim.m.to[id].pending || draw_percent(25)) continue;
            op_reschedule(id, form, form == ARM_ABSOLUTE ? sat_add(sim.clock, length) : length);
        }
        if (draw_percent(75)) {
            op_poll();
        } else {
            op_event_loop();
        }
        sim.seen.keepalive_rounds++;
    }
}

static void op_move_clock(void) {
    switch (draw_below(8)) {
    case 0:
    case 1: sim.clock = sim.m.last_now; break;
    case 2: sim.clock = sat_add(sim.m.last_now, draw_log_bits(30)); break; /* ahead of advance */
    case 3: sim.clock = sat_sub(sim.m.last_now, draw_log_bits(30)); break; /* behind it */
    case 4: sim.clock = sat_add(sim.clock, draw_log_bits(40)); break;
    case 5: sim.clock = around(model_boundary_after(&sim.m, sim.m.last_now)); break;
    case 6: sim.clock = sat_sub(sim.m.start, draw_log_bits(20)); break; /* behind the start */
    default:
        sim.clock = draw_percent(20) ? UINT64_MAX - draw_log_bits(16) : sat_add(sim.clock, draw_log_bits(20));
        break;
    }
    note("clock", -1, sim.clock, 0, 0);
}

/* A timeout is re-filed only if it was pushed later (outside a pass) since it was filed. */
static void check_refiled(const hwtimer_stats *stats) {
    if (stats->refiled > sim.episode_pushes)
        diverge("stats.refiled %llu, but only %llu pushes later were made",
                (unsigned long long)stats->refiled, (unsigned long long)sim.episode_pushes);
}

static void op_queries(void) {
    uint64_t now = hwtimer_now(sim.t);
    hwtimer_stats stats;
    if (now != sim.clock)
        diverge("hwtimer_now %llu, the clock reads %llu", (unsigned long long)now,
                (unsigned long long)sim.clock);
    check_poll_timeout();
    hwtimer_stats_get(sim.t, &stats);
    if (stats.pending != sim.m.pending)
        diverge("stats.pending %zu, the model has %zu", stats.pending, sim.m.pending);
    check_refiled(&stats);
    check_lateness(&stats);
    check_foreach();
}

/* NULL arguments are HWTIMER_EINVAL whatever the node's state, and change nothing. */
static void op_bad_arguments(void) {
    int id = random_node();
    hwtimer_timeout *to = &sim.nodes[id].to;
    note("bad arguments", id, 0, 0, 0);
    expect_result("schedule(fn NULL)", id, hwtimer_schedule(sim.t, to, 1, NULL, NULL), HWTIMER_EINVAL);
    expect_result("schedule(to NULL)", id, hwtimer_schedule(sim.t, NULL, 1, on_fire, NULL),
                  HWTIMER_EINVAL);
    expect_result("schedule_at(t NULL)", id, hwtimer_schedule_at(NULL, to, 1, on_fire, NULL),
                  HWTIMER_EINVAL);
    expect_result("reschedule(t NULL)", id, hwtimer_reschedule(NULL, to, 1), HWTIMER_EINVAL);
    expect_result("cancel(to NULL)", id, hwtimer_cancel(sim.t, NULL), HWTIMER_EINVAL);
    expect_result("cancel(t NULL)", id, hwtimer_cancel(NULL, to), HWTIMER_EINVAL);
    expect_result("schedule_periodic_at(t NULL)", id,
                  hwtimer_schedule_periodic_at(NULL, to, 1, 1, on_fire, NULL), HWTIMER_EINVAL);
    expect_result("reschedule_at(t NULL)", id, hwtimer_reschedule_at(NULL, to, 1), HWTIMER_EINVAL);
    expect_result("set_leeway(to NULL)", id, hwtimer_timeout_set_leeway(NULL, 1), HWTIMER_EINVAL);
    expect_result("is_pending(t NULL)", id, hwtimer_is_pending(NULL, to), 0);
    expect_result("is_pending(to NULL)", id, hwtimer_is_pending(sim.t, NULL), 0);
    expect_result("foreach(t NULL)", id, (long long)hwtimer_foreach(NULL, on_visit, NULL), 0);
    expect_result("foreach(visit NULL)", id, (long long)hwtimer_foreach(sim.t, NULL, NULL), 0);
    if (hwtimer_timeout_due_in(NULL, to) != UINT64_MAX ||
        hwtimer_timeout_due_in(sim.t, NULL) != UINT64_MAX || hwtimer_timeout_arg(NULL) != NULL ||
        hwtimer_timeout_period(NULL) != 0)
        diverge("due_in, arg or period of NULL is not UINT64_MAX, NULL, 0");
}

/* Re-initializes node id, not pending: it is IDLE, never scheduled, not retired. */
static void forget_node(int id) {
    if (draw_percent(50)) {
        hwtimer_timeout_init(&sim.nodes[id].to);
    } else {
        memset(&sim.nodes[id].to, 0, sizeof sim.nodes[id].to);
    }
    model_forget(&sim.m, id);
    note("forget", id, 0, 0, 0);
}

static void op_forget(void) {
    int id = random_node_where(is_not_pending);
    if (!sim.m.to[id].pending) forget_node(id);
}

/* A node pending on another timer: this one refuses to schedule (EBUSY), reschedule (EBUSY)
   or cancel it (EINVAL), does not count it, and says it is not pending here; its leeway is
   refused (EBUSY). Cancelled on its own timer, it keeps that scheduling's deadline, period
   and arg (a reschedule here reuses them). */
static void op_other_timer(void) {
    int id = random_node_where(is_not_pending), form = random_form();
    hwtimer_timeout *to = &sim.nodes[id].to;
    model_timeout *mt = &sim.m.to[id];
    hwtimer *other;
    hwtimer_config cfg;
    uint64_t when = random_when(form), period = draw_percent(30) ? random_period() : 0;
    void *arg = random_arg(id);
    int err;
    if (mt->pending || mt->retired) return;
    test_fake_config(&cfg, &sim.clock, sim.m.tick, 4);
    err = hwtimer_create(&other, &cfg);
    expect_result("hwtimer_create (another timer)", -1, err, HWTIMER_OK);
    if (form == ARM_ABSOLUTE)
        err = period ? hwtimer_schedule_periodic_at(other, to, when, period, on_fire, arg)
                     : hwtimer_schedule_at(other, to, when, on_fire, arg);
    else
        err = period ? hwtimer_schedule_periodic(other, to, when, period, on_fire, arg)
                     : hwtimer_schedule(other, to, when, on_fire, arg);
    note("schedule on another timer", id, deadline_of(form, when), period, err);
    expect_result("schedule on another timer", id, err, HWTIMER_OK);
    expect_result("schedule here", id, hwtimer_schedule(sim.t, to, 1, on_fire, arg),
                  sim.m.stopped ? HWTIMER_ESTOPPED : HWTIMER_EBUSY);
    expect_result("reschedule_at here", id, hwtimer_reschedule_at(sim.t, to, sim.clock),
                  sim.m.stopped ? HWTIMER_ESTOPPED : HWTIMER_EBUSY);
    expect_result("cancel here", id, hwtimer_cancel(sim.t, to), HWTIMER_EINVAL);
    expect_result("is_pending here", id, hwtimer_is_pending(sim.t, to), 0);
    expect_result("set_leeway", id, hwtimer_timeout_set_leeway(to, 1), HWTIMER_EBUSY);
    expect_result("state", id, hwtimer_timeout_state(to), HWTIMER_PENDING);
    if (hwtimer_timeout_due_in(sim.t, to) != UINT64_MAX)
        diverge("node %d, pending on another timer, is due in %llu here", id,
                (unsigned long long)hwtimer_timeout_due_in(sim.t, to));
    check_pending();
    expect_result("cancel on the other timer", id, hwtimer_cancel(other, to), 1);
    hwtimer_destroy(other);
    mt->ever = 1;
    mt->state = HWTIMER_CANCELLED;
    mt->deadline = deadline_of(form, when);
    mt->period = period;
    mt->arg = arg;
    sim.seen.other_timer++;
}

static void on_unprocessed(hwtimer_timeout *to, void *ctx);

/* stop hands back exactly the pending set, each CANCELLED; a second stop returns 0. */
static void op_stop(void) {
    int64_t got;
    int i;
    walk_begin();
    sim.hand_back_open = 1;
    got = hwtimer_stop(sim.t, on_unprocessed, &sim);
    sim.hand_back_open = 0;
    note("stop", -1, sim.visited_count, 0, (long long)got);
    walk_end("hwtimer_stop", got);
    for (i = 0; i < sim.n; i++)
        if (sim.m.to[i].pending) model_disarm(&sim.m, i, HWTIMER_CANCELLED);
    sim.m.stopped = 1;
    expect_result("second stop", -1, hwtimer_stop(sim.t, on_unprocessed, &sim), 0);
    check_all_nodes(sim.n);
}

/* ------------------------------------------------------------------------- callbacks */

static int node_id(const hwtimer_timeout *to, const void *arg) {
    int id = node_index(to);
    if (arg != sim.m.to[id].arg)
        diverge("node %d's callback got arg %p, not the %p of its scheduling", id, arg,
                sim.m.to[id].arg);
    return id;
}

static void on_unprocessed(hwtimer_timeout *to, void *ctx) {
    int id = node_index(to);
    note("handed back", id, 0, 0, hwtimer_timeout_state(to));
    if (!sim.hand_back_open) diverge("node %d was handed back outside hwtimer_stop", id);
    if (ctx != &sim) diverge("stop's unprocessed callback got ctx %p, not stop's", ctx);
    walk_visit("hwtimer_stop", id);
    if (hwtimer_timeout_state(to) != HWTIMER_CANCELLED)
        diverge("stop handed back node %d in state %d, not CANCELLED", id,
                hwtimer_timeout_state(to));
    check_scheduling(id); /* its own arg, for the callback that gets stop's */
    sim.seen.handed_back++;
}

static void check_run_allowed(int id) {
    const model_timeout *mt = &sim.m.to[id];
    if (!sim.in_pass) diverge("node %d ran outside hwtimer_advance", id);
    if (sim.in_callback) diverge("node %d ran inside another callback", id);
    if (sim.pass_noop)
        diverge("node %d ran in advance(%llu), below the previous now %llu: a no-op", id,
                (unsigned long long)sim.pass_now, (unsigned long long)sim.m.last_now);
    if (!mt->pending) diverge("node %d ran, but it is not pending (state %d)", id, mt->state);
    if (mt->never)
        diverge("node %d ran, but its boundary lies beyond UINT64_MAX (D %llu)", id,
                (unsigned long long)mt->deadline);
    if (mt->boundary > sim.pass_now)
        diverge("node %d ran early: B %llu > now %llu (D %llu)", id,
                (unsigned long long)mt->boundary, (unsigned long long)sim.pass_now,
                (unsigned long long)mt->deadline);
    if (mt->armed_pass == sim.pass_id)
        diverge("node %d was armed during this pass and ran in the same pass", id);
    check_run_order(id);
    if (hwtimer_timeout_state(&sim.nodes[id].to) != HWTIMER_EXPIRED)
        diverge("node %d runs in state %d, not EXPIRED", id,
                hwtimer_timeout_state(&sim.nodes[id].to));
}

/* Stop from one of the timer's own callbacks is refused and changes nothing. */
static void check_stop_refused(void) {
    int64_t got = hwtimer_stop(sim.t, on_unprocessed, &sim);
    note("stop from callback", -1, 0, 0, (long long)got);
    expect_result("stop from a callback", -1, got, HWTIMER_EWORKER);
    check_pending();
}

/* The header documents advance from a callback as returning 0 (no nested pass). */
static void check_advance_refused(void) {
    size_t got = draw_percent(50) ? hwtimer_advance(sim.t, UINT64_MAX)
                                  : hwtimer_advance_max(sim.t, UINT64_MAX, random_bound());
    note("advance from callback", -1, UINT64_MAX, 0, (long long)got);
    expect_result("advance from a callback", -1, (long long)got, 0);
}

/* Inside a callback: the running node (a periodic one is pending, due at its next
   period), another node, and the walk of the pending set. */
static void check_from_callback(int self) {
    check_will_run(self);
    check_will_run(random_node());
    check_foreach();
}

static void mutate_from_callback(int self) {
    int rounds = (int)draw_below(4);
    while (rounds-- > 0) {
        switch (draw_below(14)) {
        case 0:
        case 1: op_random_arm(self); break; /* the usual way to re-arm */
        case 2: op_schedule(random_node(), ARM_RELATIVE, 0); break; /* must wait for the next pass */
        case 3: op_cancel(random_node_where(runs_this_pass)); break; /* then it must not run */
        case 4: op_cancel(self); break;
        case 5: op_random_reschedule(random_node()); break;
        case 6: op_random_arm(random_node()); break;
        case 7: check_stop_refused(); break;
        case 8: check_advance_refused(); break;
        case 9: op_set_leeway(draw_percent(50) ? self : random_node(), random_leeway()); break;
        case 10: check_from_callback(self); break;
        case 11: op_push(draw_percent(50) ? self : random_node_where(is_pending)); break;
        case 12:
            if (draw_percent(25)) op_retire(draw_percent(30) ? self : random_node());
            break;
        default: check_pending(); break;
        }
    }
}

/* On a timer of shards, the operation (or callback) that follows comes from one of several
   threads as far as the timer knows: a node it has not held goes to that thread's shard. */
static void pick_shard(void) {
    if (sim.shards) hwtimer__thread_number = 1 + (unsigned)draw_below(2 * sim.shards);
}

/* hwtimer_destroy from a callback: every pending node is cancelled at once (a periodic one
   running its callback too: it is not re-armed), no other callback runs in this pass, and
   the timer is freed when the pass returns. */
static void destroy_from_callback(void) {
    int i;
    note("destroy from a callback", sim.running, 0, 0, 0);
    hwtimer_destroy(sim.t);
    sim.destroy_in_callback = 0;
    sim.destroyed = 1;
    for (i = 0; i < sim.n; i++)
        if (sim.m.to[i].pending) model_disarm(&sim.m, i, HWTIMER_CANCELLED);
    sim.m.stopped = 1;
    check_all_nodes(sim.n);
    sim.seen.destroyed_in_callback++;
}

static void on_fire(hwtimer_timeout *to, void *arg) {
    int id = node_id(to, arg), rearms;
    pick_shard();
    model_timeout *mt = &sim.m.to[id];
    uint64_t ran_period = mt->period, next_deadline;
    check_run_allowed(id);
    note("run", id, mt->deadline, mt->boundary, (long long)sim.pass_now);
    model_count_late(mt);
    sim.pass_runs++;
    sim.callbacks++;
    sim.seen.periodic_runs += ran_period != 0;
    if (!ran_period) model_disarm(&sim.m, id, HWTIMER_EXPIRED);
    sim.in_callback = 1;
    sim.running = id;
    if (sim.destroyed) diverge("node %d ran after its timer was destroyed from a callback", id);
    mutate_from_callback(id);
    if (sim.destroy_in_callback) destroy_from_callback();
    rearms = rearms_after_callback(id);
    next_deadline = next_run_deadline(id);
    sim.running = -1;
    sim.in_callback = 0;
    /* A periodic timeout the callback neither cancelled nor re-armed moves on by its period. */
    if (rearms) model_arm(&sim.m, id, next_deadline, mt->period, mt->arg, sim.pass_id);
}

/* ------------------------------------------------------------------------- episodes */

/* Operation r of the mix, r < MODEL_OP_MIX: the share of each kind is its range of r. */
enum { MODEL_OP_MIX = 100, MODEL_OP_STOP = MODEL_OP_MIX };

static void model_op(unsigned r) {
    if (r < 25) op_random_arm(random_node());
    else if (r < 30) { /* two in a row: the second finds the answer answered */
        op_random_arm(random_node());
        op_random_arm(random_node());
    }
    else if (r < 40) op_cancel(draw_percent(50) ? random_node_where(is_pending) : random_node());
    else if (r < 52) op_advance(random_now());
    else if (r < 59) op_advance_max(random_now());
    else if (r < 64) op_push(random_node_where(is_pending));
    else if (r < 69) op_event_loop();
    else if (r < 77) op_move_clock();
    else if (r < 80) op_keepalive();
    else if (r < 84) op_poll();
    else if (r < 90) op_queries();
    else if (r < 94) op_set_leeway(random_node(), random_leeway()); /* EBUSY if pending */
    else if (r < 96) op_bad_arguments();
    else if (r < 97) op_forget();
    else if (r < 98) op_retire(draw_percent(50) ? random_node_where(is_pending) : random_node());
    else op_other_timer();
}

static void episode_begin(void) {
    static const uint64_t ticks[] = {1, 3, 1000, 1000000, 100000000, 7919, UINT64_C(1) << 40};
    static const uint32_t wheels[] = {1, 2, 3, 4, 8, 64, 512, 4096};
    static const int sizes[] = {1, 4, 16, 64, 256};
    hwtimer_config cfg;
    int err;
    sim.episode++;
    sim.m.tick = draw_percent(85) ? ticks[draw_below(sizeof ticks / sizeof ticks[0])]
                                 : 1 + draw_log_bits(36);
    sim.ticks_per_wheel = wheels[draw_below(sizeof wheels / sizeof wheels[0])];
    sim.m.start = random_start();
    sim.m.max_tick = model_due_tick(&sim.m, UINT64_MAX);
    sim.far_jumps = draw_percent(15);
    sim.m.last_now = sim.m.start;
    sim.m.stopped = 0;
    sim.clock = sim.m.start;
    sim.n = sizes[draw_below(sizeof sizes / sizeof sizes[0])];
    sim.m.max_pending = draw_percent(25) ? (size_t)(1 + draw_below((uint64_t)sim.n)) : 0;
    test_fake_config(&cfg, &sim.clock, sim.m.tick, sim.ticks_per_wheel);
    cfg.max_pending = sim.m.max_pending;
    sim.wake_loop = draw_percent(50);
    sim.answer_out = 0;
    if (sim.wake_loop) {
        cfg.wake_fn = on_wake;
        cfg.wake_ctx = &sim;
    }
    /* in a build with threads a fifth of the timers have none (cfg.threads NULL: no lock,
       no waits), and half the others spread their nodes over 2-4 shards */
    if (cfg.threads && draw_percent(20)) cfg.threads = NULL;
    sim.seen.unthreaded_episodes += cfg.threads == NULL && test_threads() != NULL;
    sim.shards = cfg.threads && draw_percent(50) ? 2 + (unsigned)draw_below(3) : 0;
    cfg.shards = sim.shards;
    sim.seen.sharded_episodes += sim.shards != 0;
    sim.episode_pushes = 0;
    sim.m.late_max = sim.m.late_runs = 0;
    sim.m.left_gens = 0;
    sim.m.left_moved = 0;
    sim.destroy_in_callback = sim.destroyed = 0;
    err = hwtimer_create(&sim.t, &cfg);
    note("create", -1, sim.m.tick, sim.m.start, err);
    expect_result("hwtimer_create", -1, err, HWTIMER_OK);
}

/* Destroy cancels whatever is pending; the nodes keep their last callback and period,
   so the next episode may reschedule them on its new timer. */
static void episode_end(void) {
    int i;
    hwtimer_stats stats;
    if (sim.t) { /* (not if a callback destroyed it) */
        hwtimer_stats_get(sim.t, &stats);
        check_refiled(&stats);
        check_lateness(&stats);
        sim.seen.refiled += stats.refiled;
        note("destroy", -1, 0, 0, 0);
        hwtimer_destroy(sim.t);
        sim.t = NULL;
    }
    for (i = 0; i < sim.n; i++)
        if (sim.m.to[i].pending) model_disarm(&sim.m, i, HWTIMER_CANCELLED);
    check_all_nodes(MAX_NODES);
}

/* The episode's timer is gone: a callback destroyed it. The driver ends the episode. */
static int episode_over(void) { return sim.t == NULL; }

/* Operation r (below MODEL_OP_MIX, or MODEL_OP_STOP), then the checks every operation ends
   with. The stop operation stops the timer, or leaves it to the next callback to destroy.
   Once a callback destroyed the timer, the operation ends as the advance returns (and the
   driver, seeing episode_over, calls no more). */
static void model_step(unsigned r) {
    pick_shard();
    if (setjmp(sim.episode_over)) {
        sim.op++;
        return;
    }
    if (r != MODEL_OP_STOP) {
        model_op(r);
    } else if (draw_percent(30)) {
        sim.destroy_in_callback = 1;
        note("the next callback destroys the timer", -1, 0, 0, 0);
    } else {
        op_stop();
    }
    check_world();
    sim.seen.at_end_of_time += sim.m.last_now == UINT64_MAX;
    sim.op++;
}

static void sim_reset(void) {
    int i;
    memset(&sim, 0, sizeof sim);
    sim.running = -1;
    for (i = 0; i < MAX_NODES; i++) {
        sim.nodes[i].id = i;
        model_forget(&sim.m, i);
    }
}

/* After a divergence outside a callback the timer is consistent and can be freed; inside
   one, its advance is still on the stack and it is left alone. */
static void sim_abandon(void) {
    if (sim.t && !sim.in_pass) hwtimer_destroy(sim.t);
    sim.t = NULL;
}


#endif
