/* sched.c - a deterministic scheduler behind struct hwtimer_threads.

   Every thread of an execution (the test's and the timer's) is a real POSIX thread, but
   only the one holding the token runs: the others wait on their own condition variable.
   The token moves only inside a hook call (lock, unlock, wait, broadcast, thread start and
   join), at ex_yield and ex_await, and when a thread ends. There the running thread
   builds the list of options (the threads that could go on, and "time passes" while a
   thread sleeps with a timeout), asks the plan which to take, records the decision, and
   hands the token over. Mutexes and condition variables are bookkeeping only: a thread
   that wants a taken mutex is simply not an option. See explore.c for the whole design. */
#define _POSIX_C_SOURCE 200809L
#include "sched.h"

#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { TS_RUN = 1, TS_LOCK, TS_COND, TS_JOIN, TS_AWAIT, TS_DONE };
enum {
    EX_TIME = EX_MAX_THREADS, /* the option "time passes" */
    EX_MAX_STEPS = 20000,     /* more decisions than that in one execution: a livelock */
    EX_FAIR = 40,             /* an enabled thread passed over this often runs next */
    EX_TRACE = 4096,
    EX_TRACE_SHOWN = 80
};
#define EX_START_NS 1000000000u /* the fake clock at the start (OS time) */

typedef struct ex_mutex {
    int owner; /* thread id, -1: free */
    int id;
    unsigned releases; /* times it was unlocked (or released by a wait) */
} ex_mutex;
typedef struct ex_cond {
    int id;
} ex_cond;
typedef struct ex_handle {
    int id;
} ex_handle;

typedef struct vthread {
    pthread_t real;
    pthread_cond_t go;
    int state;
    ex_mutex *mutex;      /* TS_LOCK: wanted; TS_COND: taken again when woken */
    const ex_cond *cond;  /* TS_COND */
    uint64_t wake_at;     /* TS_COND: OS time of the timeout, UINT64_MAX: none */
    int join;             /* TS_JOIN */
    int (*ready)(void *); /* TS_AWAIT */
    void *ready_arg;
    void (*fn)(void *);
    void *arg;
    int by_timer; /* started by the timer's thread_start */
    int frozen;   /* left behind by a simulated fork: never runs again */
    int urgent;   /* TS_AWAIT by ex_await_urgent: runs the moment it is ready */
    unsigned points; /* scheduling points it has reached (hook calls, yields, its end) */
    unsigned starved;
    unsigned priority; /* EX_PCT */
} vthread;

typedef struct ex_event {
    unsigned step;
    int thread;
    const char *op;
    int obj;
} ex_event;

static struct {
    pthread_mutex_t g;      /* held while deciding: the token changes hands under it */
    pthread_cond_t all_done;
    const ex_world *world;
    const ex_plan *plan;
    vthread th[EX_MAX_THREADS];
    int n, current, live;
    uint64_t os_time, offset, clock_seen;
    ex_decision *dec;
    size_t ndec, capdec;
    unsigned preemptions;
    uint64_t rng;
    unsigned time_priority;
    unsigned change_at[8];
    unsigned changes;
    int next_obj;
    ex_event trace[EX_TRACE];
    unsigned ntrace;
    int trace_live; /* print each event as it happens */
    char hint[512];
    int failing;
} ex;

/* ---- reports ---- */

static void ex_print_event(const ex_event *e) {
    fprintf(stderr, "  %5u: T%d %s", e->step, e->thread, e->op);
    if (e->obj >= 0) fprintf(stderr, " #%d", e->obj);
    fputc('\n', stderr);
}

static void ex_trace(const char *op, int obj) {
    ex_event *e = &ex.trace[ex.ntrace++ % EX_TRACE];
    e->step = (unsigned)ex.ndec;
    e->thread = ex.current;
    e->op = op;
    e->obj = obj;
    if (ex.trace_live) ex_print_event(e);
}

void ex_set_trace(int on) { ex.trace_live = on; }

static void ex_print_trace(void) {
    unsigned first = ex.ntrace > EX_TRACE_SHOWN ? ex.ntrace - EX_TRACE_SHOWN : 0, i;
    fprintf(stderr, "last %u of %u events (decision: thread op object):\n",
            ex.ntrace - first, ex.ntrace);
    for (i = first; i < ex.ntrace; i++) ex_print_event(&ex.trace[i % EX_TRACE]);
}

static void ex_print_threads(void) {
    static const char *names[] = {"?", "running", "wants mutex", "waits on cond", "joins",
                                  "awaits", "done"};
    int i;
    for (i = 0; i < ex.n; i++) {
        const vthread *v = &ex.th[i];
        fprintf(stderr, "  T%d (%s): %s%s", i, v->by_timer ? "timer" : "test",
                v->frozen ? "gone in the fork, was: " : "", names[v->state]);
        if (v->state == TS_LOCK) fprintf(stderr, " #%d held by T%d", v->mutex->id, v->mutex->owner);
        if (v->state == TS_COND) {
            fprintf(stderr, " #%d", v->cond->id);
            if (v->wake_at != UINT64_MAX) {
                fprintf(stderr, " until %llu ns", (unsigned long long)v->wake_at);
            }
        }
        fputc('\n', stderr);
    }
}

/* The schedule of the execution so far: enough to replay it up to here. */
static void ex_print_schedule(void) {
    static char text[1 << 16];
    ex_choices_format(ex.dec, ex.ndec, text, sizeof text);
    fprintf(stderr, "after %zu decisions (%u preemptions), fake clock %llu ns\n", ex.ndec,
            ex.preemptions, (unsigned long long)(ex.os_time + ex.offset));
    fprintf(stderr, "threads:\n");
    ex_print_threads();
    ex_print_trace();
    fprintf(stderr, "replay: explore --scenario %s --replay '%s'\n",
            ex.world ? ex.world->scenario : "?", text[0] ? text : "-");
    if (ex.hint[0]) fprintf(stderr, "    or: %s\n", ex.hint);
}

static void ex_report(void) {
    if (ex.failing++) return;
    fprintf(stderr, "scenario %s\n", ex.world ? ex.world->scenario : "?");
    ex_print_schedule();
}

void ex_fail(const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "\nFAIL: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    ex_report();
    fflush(stderr);
    _exit(1);
}

void ex_set_replay_hint(const char *hint) {
    snprintf(ex.hint, sizeof ex.hint, "%s", hint);
}

/* A crash (ASan, an assert, a segfault) prints the schedule that led to it too. */
static void ex_on_signal(int sig) {
    fprintf(stderr, "\nFAIL: signal %d\n", sig);
    ex_report();
    signal(sig, SIG_DFL);
    raise(sig);
}

#ifdef EX_ASAN
void __sanitizer_set_death_callback(void (*callback)(void));
#endif

static void ex_install_reporters(void) {
    static int done;
    if (done++) return;
    pthread_mutex_init(&ex.g, NULL);
    pthread_cond_init(&ex.all_done, NULL);
    signal(SIGSEGV, ex_on_signal);
    signal(SIGABRT, ex_on_signal);
    signal(SIGBUS, ex_on_signal);
#ifdef EX_ASAN
    __sanitizer_set_death_callback(ex_report);
#endif
}

/* ---- choices as text ---- */

void ex_choices_format(const ex_decision *d, size_t n, char *out, size_t size) {
    size_t i, used = 0;
    out[0] = 0;
    for (i = 0; i < n && used + 32 < size; i++) {
        if (!d[i].taken) continue;
        used += (size_t)snprintf(out + used, size - used, "%s%zu:%u", used ? "," : "", i,
                                 (unsigned)d[i].taken);
    }
}

static void ex_choices_reserve(ex_choice_list *l, size_t len) {
    if (len <= l->cap) return;
    l->cap = len * 2 + 64;
    l->idx = (uint8_t *)realloc(l->idx, l->cap);
    if (!l->idx) ex_fail("out of memory");
}

int ex_choices_parse(const char *text, ex_choice_list *out) {
    const char *p = text;
    out->len = 0;
    if (!strcmp(text, "-")) return 0;
    while (*p) {
        char *end;
        unsigned long at = strtoul(p, &end, 10), option;
        if (end == p || *end != ':') return -1;
        option = strtoul(end + 1, &end, 10);
        if (option == 0 || option > EX_MAX_THREADS) return -1;
        ex_choices_reserve(out, at + 1);
        while (out->len <= at) out->idx[out->len++] = 0;
        out->idx[at] = (uint8_t)option;
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') return -1;
    }
    return 0;
}

void ex_choices_set(ex_choice_list *l, size_t len, const ex_decision *d, size_t at,
                    uint8_t option) {
    size_t i;
    ex_choices_reserve(l, len);
    for (i = 0; i < at && i < len; i++) l->idx[i] = d[i].taken;
    l->idx[at] = option;
    l->len = at + 1;
}

void ex_choices_free(ex_choice_list *l) {
    free(l->idx);
    memset(l, 0, sizeof *l);
}

/* ---- deciding ---- */

static uint64_t ex_random(void) { /* xorshift64* */
    ex.rng ^= ex.rng >> 12;
    ex.rng ^= ex.rng << 25;
    ex.rng ^= ex.rng >> 27;
    return ex.rng * 2685821657736338717u;
}

static int ex_enabled(int id) {
    const vthread *v = &ex.th[id];
    if (v->frozen) return 0;
    switch (v->state) {
    case TS_RUN: return 1;
    case TS_LOCK: return v->mutex->owner < 0;
    case TS_JOIN: return ex.th[v->join].state == TS_DONE;
    case TS_AWAIT: return v->ready(v->ready_arg) != 0;
    default: return 0;
    }
}

static int ex_someone_sleeps(void) {
    int i;
    for (i = 0; i < ex.n; i++) {
        if (ex.th[i].state == TS_COND && ex.th[i].wake_at != UINT64_MAX && !ex.th[i].frozen) {
            return 1;
        }
    }
    return 0;
}

/* The options: the current thread first when it can go on (taking it is no preemption),
   then the other enabled threads, then "time passes". */
static unsigned ex_options(int *opts, int *cur_enabled) {
    unsigned n = 0;
    int i;
    *cur_enabled = ex_enabled(ex.current);
    if (*cur_enabled) opts[n++] = ex.current;
    for (i = 0; i < ex.n; i++) {
        if (i != ex.current && ex_enabled(i)) opts[n++] = i;
    }
    if (ex_someone_sleeps()) opts[n++] = EX_TIME;
    return n;
}

/* An enabled thread passed over EX_FAIR times runs now: without that, a thread that loops
   (a worker with work that is always due) would starve the others in every schedule the
   search tries by default, and report livelocks that no fair scheduler produces. */
static int ex_starving(const int *opts, unsigned n) {
    unsigned i;
    int worst = -1;
    for (i = 0; i < n; i++) {
        if (opts[i] == EX_TIME || opts[i] == ex.current) continue;
        if (ex.th[opts[i]].starved >= EX_FAIR &&
            (worst < 0 || ex.th[opts[i]].starved > ex.th[worst].starved)) {
            worst = opts[i];
        }
    }
    return worst;
}

static unsigned ex_priority(int opt) {
    return opt == EX_TIME ? ex.time_priority : ex.th[opt].priority;
}

static unsigned ex_highest(const int *opts, unsigned n) {
    unsigned i, best = 0;
    for (i = 1; i < n; i++) {
        if (ex_priority(opts[i]) > ex_priority(opts[best])) best = i;
    }
    return best;
}

/* PCT: the option of highest priority; at a change point, that one first drops below all
   (the initial priorities are at least the depth, change point c gives priority c). */
static unsigned ex_pct_pick(const int *opts, unsigned n) {
    unsigned c, best;
    for (c = 0; c < ex.changes; c++) {
        if (ex.change_at[c] != ex.ndec) continue;
        best = ex_highest(opts, n);
        if (opts[best] == EX_TIME) ex.time_priority = c;
        else ex.th[opts[best]].priority = c;
    }
    return ex_highest(opts, n);
}

static unsigned ex_plan_pick(const int *opts, unsigned n) {
    const ex_choice_list *p = ex.plan->prefix;
    if (ex.plan->kind == EX_PCT) return ex_pct_pick(opts, n);
    if (p && ex.ndec < p->len) {
        if (p->idx[ex.ndec] >= n) {
            ex_fail("replay diverged: decision %zu has %u options, the schedule takes %u",
                    ex.ndec, n, (unsigned)p->idx[ex.ndec]);
        }
        return p->idx[ex.ndec];
    }
    return 0;
}

static void ex_record(unsigned n, unsigned taken, int cur_enabled) {
    ex_decision *d;
    if (ex.ndec == ex.capdec) {
        ex.capdec = ex.capdec * 2 + 256;
        ex.dec = (ex_decision *)realloc(ex.dec, ex.capdec * sizeof *ex.dec);
        if (!ex.dec) ex_fail("out of memory");
    }
    d = &ex.dec[ex.ndec++];
    d->options = (uint8_t)n;
    d->taken = (uint8_t)taken;
    d->cur_enabled = (uint8_t)cur_enabled;
    d->preemptions_before = (uint16_t)ex.preemptions;
    if (cur_enabled && taken) ex.preemptions++;
}

/* A thread blocked on a mutex keeps its count while another holds it: a lock's waiter gets
   it in the end, so a thread that takes a lock again each time soon after releasing it (a
   worker whose periodic work is always due, with a pass between its locked sections) does
   not shut a waiter out in every schedule. */
static void ex_count_starvation(int chosen) {
    int i;
    for (i = 0; i < ex.n; i++) {
        if (i == chosen) {
            ex.th[i].starved = 0;
        } else if (ex_enabled(i)) {
            ex.th[i].starved++;
        } else if (ex.th[i].state != TS_LOCK || ex.th[i].frozen) {
            ex.th[i].starved = 0;
        }
    }
}

/* A thread in ex_await_urgent whose condition holds: it runs now, whatever the plan. */
static int ex_urgent(void) {
    int i;
    for (i = 0; i < ex.n; i++) {
        if (ex.th[i].urgent && ex.th[i].state == TS_AWAIT && ex_enabled(i)) return i;
    }
    return -1;
}

/* The next thread to run, or EX_TIME. */
static int ex_decide(void) {
    int opts[EX_MAX_THREADS + 1], cur_enabled, forced, chosen;
    unsigned n, taken;
    if (ex.ndec >= EX_MAX_STEPS) {
        ex_fail("livelock: %u decisions and the execution has not ended", EX_MAX_STEPS);
    }
    if (ex.world->check_step) ex.world->check_step();
    n = ex_options(opts, &cur_enabled);
    if (n == 0) ex_fail("deadlock: every thread is blocked and none waits with a timeout");
    forced = ex_urgent();
    if (forced < 0) forced = ex_starving(opts, n);
    if (forced >= 0) {
        ex_record(1, 0, 0);
        chosen = forced;
    } else {
        taken = ex_plan_pick(opts, n);
        ex_record(n, taken, cur_enabled);
        chosen = opts[taken];
    }
    ex_count_starvation(chosen);
    if (chosen == EX_TIME && n == 1 && ex.world->check_quiet) { /* nobody else can run */
        ex.world->check_quiet();
    }
    return chosen;
}

/* Time passes up to the earliest timeout; those sleepers wake (and want their mutex). */
static void ex_pass_time(void) {
    uint64_t earliest = UINT64_MAX;
    int i;
    for (i = 0; i < ex.n; i++) {
        if (ex.th[i].state == TS_COND && !ex.th[i].frozen && ex.th[i].wake_at < earliest) {
            earliest = ex.th[i].wake_at;
        }
    }
    if (earliest > ex.os_time) ex.os_time = earliest;
    for (i = 0; i < ex.n; i++) {
        if (ex.th[i].state == TS_COND && !ex.th[i].frozen && ex.th[i].wake_at <= ex.os_time) {
            ex.th[i].state = TS_LOCK;
        }
    }
    ex_trace("time passes", -1);
}

/* What a thread does as it gets the token: take the mutex it was waiting for. */
static void ex_resume(int me) {
    vthread *v = &ex.th[me];
    if (v->state == TS_LOCK) {
        if (v->mutex->owner >= 0) ex_fail("internal: T%d resumed on a held mutex", me);
        v->mutex->owner = me;
        ex_trace("has mutex", v->mutex->id);
    }
    if (v->state != TS_DONE) v->state = TS_RUN;
}

/* Waits (g held) until `me` has the token. A frozen thread gets it once more, at the end
   of the execution, only to exit. */
static void ex_wait_for_token(int me) {
    while (ex.current != me) pthread_cond_wait(&ex.th[me].go, &ex.g);
    if (ex.th[me].frozen) {
        pthread_mutex_unlock(&ex.g);
        pthread_exit(NULL);
    }
}

/* A scheduling point (g held): decide, hand the token over, wait to get it back. */
static void ex_switch(void) {
    int me = ex.current, next;
    ex.th[me].points++;
    for (;;) {
        next = ex_decide();
        if (next != EX_TIME) break;
        ex_pass_time();
    }
    if (next != me) {
        ex.current = next;
        pthread_cond_signal(&ex.th[next].go);
        if (ex.th[me].state == TS_DONE) return;
        ex_wait_for_token(me);
    }
    ex_resume(me);
}

/* ---- threads ---- */

static void *ex_trampoline(void *p) {
    int me = (int)(intptr_t)p;
    vthread *v = &ex.th[me];
    pthread_mutex_lock(&ex.g);
    ex_wait_for_token(me);
    pthread_mutex_unlock(&ex.g);
    v->fn(v->arg);
    pthread_mutex_lock(&ex.g);
    v->state = TS_DONE;
    ex_trace("ends", -1);
    if (--ex.live == 0) {
        pthread_cond_signal(&ex.all_done);
    } else {
        ex_switch();
    }
    pthread_mutex_unlock(&ex.g);
    return NULL;
}

/* A new thread, enabled, that runs when it is chosen (g held). */
static int ex_new_thread(void (*fn)(void *), void *arg, int by_timer) {
    int id = ex.n;
    vthread *v;
    if (id == EX_MAX_THREADS) ex_fail("more than %d threads", EX_MAX_THREADS);
    v = &ex.th[id];
    memset(v, 0, sizeof *v);
    pthread_cond_init(&v->go, NULL);
    v->state = TS_RUN;
    v->fn = fn;
    v->arg = arg;
    v->by_timer = by_timer;
    v->priority = (unsigned)(ex.plan->depth + ex_random() % 1000000u);
    ex.n++;
    ex.live++;
    if (pthread_create(&v->real, NULL, ex_trampoline, (void *)(intptr_t)id)) {
        ex_fail("pthread_create failed");
    }
    return id;
}

static void ex_block_on_join(int id) {
    ex.th[ex.current].state = TS_JOIN;
    ex.th[ex.current].join = id;
    ex_trace("joins", id);
    ex_switch();
}

/* ---- the hooks ---- */

static int ex_mutex_init(void *m) {
    ((ex_mutex *)m)->owner = -1;
    ((ex_mutex *)m)->id = ex.next_obj++;
    ((ex_mutex *)m)->releases = 0;
    return 0;
}
static void ex_mutex_destroy(void *m) {
    if (((ex_mutex *)m)->owner >= 0) ex_fail("a held mutex is destroyed");
}
static void ex_mutex_lock(void *p) {
    ex_mutex *m = (ex_mutex *)p;
    pthread_mutex_lock(&ex.g);
    if (m->owner == ex.current) ex_fail("T%d locks a mutex it holds", ex.current);
    ex.th[ex.current].state = TS_LOCK;
    ex.th[ex.current].mutex = m;
    ex_trace("lock", m->id);
    ex_switch();
    pthread_mutex_unlock(&ex.g);
}
static void ex_mutex_unlock(void *p) {
    ex_mutex *m = (ex_mutex *)p;
    pthread_mutex_lock(&ex.g);
    if (m->owner != ex.current) ex_fail("T%d unlocks a mutex it does not hold", ex.current);
    m->owner = -1;
    m->releases++;
    ex_trace("unlock", m->id);
    ex_switch();
    pthread_mutex_unlock(&ex.g);
}
static int ex_cond_init(void *c) {
    ((ex_cond *)c)->id = ex.next_obj++;
    return 0;
}
static void ex_cond_destroy(void *c) {
    int i;
    for (i = 0; i < ex.n; i++) {
        if (ex.th[i].state == TS_COND && ex.th[i].cond == c && !ex.th[i].frozen) {
            ex_fail("a waited-on cond is destroyed");
        }
    }
}
static void ex_cond_broadcast(void *c) {
    int i;
    pthread_mutex_lock(&ex.g);
    for (i = 0; i < ex.n; i++) {
        if (ex.th[i].state == TS_COND && ex.th[i].cond == c) ex.th[i].state = TS_LOCK;
    }
    ex_trace("broadcast", ((ex_cond *)c)->id);
    ex_switch();
    pthread_mutex_unlock(&ex.g);
}
static void ex_cond_wait(void *c, void *p, uint64_t timeout_ns) {
    ex_mutex *m = (ex_mutex *)p;
    vthread *v;
    pthread_mutex_lock(&ex.g);
    v = &ex.th[ex.current];
    if (m->owner != ex.current) ex_fail("T%d waits without holding the mutex", ex.current);
    m->owner = -1;
    m->releases++;
    v->state = TS_COND;
    v->cond = (const ex_cond *)c;
    v->mutex = m;
    v->wake_at = timeout_ns == UINT64_MAX ? UINT64_MAX
                 : timeout_ns > UINT64_MAX - ex.os_time ? UINT64_MAX - 1
                                                         : ex.os_time + timeout_ns;
    ex_trace(timeout_ns == UINT64_MAX ? "waits" : "waits with a timeout", ((ex_cond *)c)->id);
    ex_switch();
    pthread_mutex_unlock(&ex.g);
}
static int ex_thread_start(void *h, void (*fn)(void *), void *arg) {
    pthread_mutex_lock(&ex.g);
    ((ex_handle *)h)->id = ex_new_thread(fn, arg, 1);
    ex_trace("starts a thread", ((ex_handle *)h)->id);
    ex_switch();
    pthread_mutex_unlock(&ex.g);
    return 0;
}
static void ex_thread_join(void *h) {
    pthread_mutex_lock(&ex.g);
    ex_block_on_join(((ex_handle *)h)->id);
    pthread_mutex_unlock(&ex.g);
}
static void ex_thread_detach(void *h) {
    pthread_mutex_lock(&ex.g);
    ex_trace("detaches", ((ex_handle *)h)->id);
    pthread_mutex_unlock(&ex.g);
}
static void ex_thread_self(void *h) { ((ex_handle *)h)->id = ex.current; }
static int ex_thread_is_self(const void *h) { return ((const ex_handle *)h)->id == ex.current; }

static const hwtimer_threads ex_table = {
    "explore", sizeof(ex_mutex), sizeof(ex_cond), sizeof(ex_handle),
    ex_mutex_init, ex_mutex_destroy, ex_mutex_lock, ex_mutex_unlock,
    ex_cond_init, ex_cond_destroy, ex_cond_broadcast, ex_cond_wait,
    ex_thread_start, ex_thread_join, ex_thread_detach, ex_thread_self, ex_thread_is_self};

const hwtimer_threads *ex_threads(void) { return &ex_table; }

/* ---- for the code inside an execution ---- */

void ex_yield(void) {
    pthread_mutex_lock(&ex.g);
    ex_trace("yields", -1);
    ex_switch();
    pthread_mutex_unlock(&ex.g);
}

void ex_await(int (*ready)(void *), void *arg) {
    pthread_mutex_lock(&ex.g);
    ex.th[ex.current].state = TS_AWAIT;
    ex.th[ex.current].ready = ready;
    ex.th[ex.current].ready_arg = arg;
    ex_trace("awaits", -1);
    ex_switch();
    pthread_mutex_unlock(&ex.g);
}

void ex_await_urgent(int (*ready)(void *), void *arg) {
    pthread_mutex_lock(&ex.g);
    ex.th[ex.current].state = TS_AWAIT;
    ex.th[ex.current].urgent = 1;
    ex.th[ex.current].ready = ready;
    ex.th[ex.current].ready_arg = arg;
    ex_trace("awaits, urgent", -1);
    ex_switch();
    ex.th[ex.current].urgent = 0;
    pthread_mutex_unlock(&ex.g);
}

int ex_spawn(void (*fn)(void *), void *arg) {
    int id;
    pthread_mutex_lock(&ex.g);
    id = ex_new_thread(fn, arg, 0);
    ex_trace("spawns", id);
    ex_switch();
    pthread_mutex_unlock(&ex.g);
    return id;
}

void ex_join(int id) {
    pthread_mutex_lock(&ex.g);
    ex_block_on_join(id);
    pthread_mutex_unlock(&ex.g);
}

int ex_self(void) { return ex.current; }
int ex_is_done(int id) { return ex.th[id].state == TS_DONE; }
int ex_thread_count(void) { return ex.n; }
const void *ex_waits_on(int id) {
    return ex.th[id].state == TS_COND && !ex.th[id].frozen ? ex.th[id].cond : NULL;
}
int ex_mutex_is_free(const void *m) { return ((const ex_mutex *)m)->owner < 0; }
int ex_mutex_is_mine(const void *m) { return ((const ex_mutex *)m)->owner == ex.current; }
int ex_mutex_owner(const void *m) { return ((const ex_mutex *)m)->owner; }
unsigned ex_mutex_releases(const void *m) { return ((const ex_mutex *)m)->releases; }

/* What a fork leaves the child: only the calling thread. The others stop where they are,
   holding what they hold, and never run again. */
void ex_fork(void) {
    int i;
    pthread_mutex_lock(&ex.g);
    for (i = 0; i < ex.n; i++) {
        if (i == ex.current || ex.th[i].state == TS_DONE || ex.th[i].frozen) continue;
        ex.th[i].frozen = 1;
        ex.live--;
    }
    ex_trace("forks: the other threads are gone", -1);
    ex_switch();
    pthread_mutex_unlock(&ex.g);
}
int ex_is_frozen(int id) { return ex.th[id].frozen; }
unsigned ex_points(int id) { return ex.th[id].points; }
int ex_waits_forever(int id) {
    return ex.th[id].state == TS_COND && ex.th[id].wake_at == UINT64_MAX && !ex.th[id].frozen;
}
int ex_wants_mutex(int id) { return ex.th[id].state == TS_LOCK; }

int ex_thread_started_with(const void *arg) {
    int i;
    for (i = 0; i < ex.n; i++) {
        if (ex.th[i].by_timer && ex.th[i].arg == arg && ex.th[i].state != TS_DONE &&
            !ex.th[i].frozen) {
            return i;
        }
    }
    return -1;
}

uint64_t ex_clock(void *ctx) {
    uint64_t now = ex.os_time + ex.offset;
    (void)ctx;
    if (now > ex.clock_seen) ex.clock_seen = now;
    return now;
}
uint64_t ex_clock_seen(void) { return ex.clock_seen; }
uint64_t ex_clock_peek(void) { return ex.os_time + ex.offset; }
void ex_clock_jump(uint64_t ns) { ex.offset += ns; }

/* ---- one execution ---- */

const ex_decision *ex_decisions(size_t *count) {
    *count = ex.ndec;
    return ex.dec;
}
unsigned ex_max_preemptions(void) { return ex.preemptions; }

static void ex_reset(const ex_world *w, const ex_plan *plan) {
    unsigned c;
    ex.world = w;
    ex.plan = plan;
    ex.n = ex.live = 0;
    ex.current = 0;
    ex.os_time = EX_START_NS;
    ex.offset = ex.clock_seen = 0;
    ex.ndec = 0;
    ex.preemptions = 0;
    ex.ntrace = 0;
    ex.next_obj = 0;
    ex.rng = plan->seed * 0x9E3779B97F4A7C15u + 1;
    ex.time_priority = (unsigned)(plan->depth + ex_random() % 1000000u);
    ex.changes = plan->kind == EX_PCT && plan->depth > 1 ? plan->depth - 1 : 0;
    if (ex.changes > 8) ex.changes = 8;
    for (c = 0; c < ex.changes; c++) {
        ex.change_at[c] = (unsigned)(ex_random() % (plan->expected_len ? plan->expected_len : 1));
    }
}

static void ex_main_trampoline(void *arg) {
    (void)arg;
    ex.world->main_fn();
}

void ex_execute(const ex_world *w, const ex_plan *plan) {
    int i;
    ex_install_reporters();
    pthread_mutex_lock(&ex.g);
    ex_reset(w, plan);
    ex_new_thread(ex_main_trampoline, NULL, 0);
    pthread_cond_signal(&ex.th[0].go);
    while (ex.live > 0) pthread_cond_wait(&ex.all_done, &ex.g);
    pthread_mutex_unlock(&ex.g);
    for (i = 0; i < ex.n; i++) {
        if (ex.th[i].frozen) { /* it exits when it gets the token */
            pthread_mutex_lock(&ex.g);
            ex.current = i;
            pthread_cond_signal(&ex.th[i].go);
            pthread_mutex_unlock(&ex.g);
        }
        pthread_join(ex.th[i].real, NULL);
        pthread_cond_destroy(&ex.th[i].go);
    }
}
