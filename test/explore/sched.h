/* sched.h - a deterministic scheduler behind struct hwtimer_threads (see explore.c for
   the design, what it can and cannot see, and how to replay a schedule). */
#ifndef EXPLORE_SCHED_H
#define EXPLORE_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "hwtimer.h"

enum { EX_MAX_THREADS = 8 };

/* Built with AddressSanitizer? */
#if defined(__SANITIZE_ADDRESS__)
#define EX_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EX_ASAN 1
#endif
#endif

/* How the choices of one execution are made. */
enum { EX_DFS, EX_PCT };

typedef struct ex_choice_list {
    uint8_t *idx; /* the option taken at each decision (0: the default) */
    size_t len, cap;
} ex_choice_list;

typedef struct ex_plan {
    int kind;               /* EX_DFS (prefix, then defaults) or EX_PCT */
    const ex_choice_list *prefix; /* EX_DFS: the choices to take first */
    uint64_t seed;          /* EX_PCT */
    unsigned depth;         /* EX_PCT: priority change points + 1 */
    unsigned expected_len;  /* EX_PCT: decisions an execution takes, about */
} ex_plan;

/* One decision as it was taken, for the search to backtrack on. */
typedef struct ex_decision {
    uint8_t options;   /* how many choices there were */
    uint8_t taken;     /* which */
    uint8_t cur_enabled; /* option 0 was "the current thread goes on": others preempt it */
    uint16_t preemptions_before;
} ex_decision;

typedef struct ex_world {
    const char *scenario;      /* for the report */
    void (*main_fn)(void);     /* runs as thread 0 */
    void (*check_step)(void);  /* at every decision: the world's invariants */
    void (*check_quiet)(void); /* every thread blocked, before time passes: lost wake-ups */
} ex_world;

/* Runs one execution to its end (every thread finished). On a broken check, a deadlock
   or a livelock it prints the failure with the schedule that replays it and exits 1. */
void ex_execute(const ex_world *w, const ex_plan *plan);

/* The decisions of the last execution. */
const ex_decision *ex_decisions(size_t *count);
unsigned ex_max_preemptions(void); /* preemptions the last execution used */

/* The thread hooks, for hwtimer_config.threads. */
const hwtimer_threads *ex_threads(void);

/* For the code that runs inside an execution. */
void ex_yield(void);                                   /* a scheduling point */
void ex_await(int (*ready)(void *), void *arg);        /* blocks until ready(arg) */
/* Blocks until ready(arg), and runs at the first scheduling point where it holds, whatever
   the plan: a decision with one option (the search does not branch on it). */
void ex_await_urgent(int (*ready)(void *), void *arg);
int ex_spawn(void (*fn)(void *), void *arg);           /* a test thread; its id */
void ex_join(int id);
int ex_self(void);
int ex_is_done(int id);
int ex_thread_started_with(const void *arg);           /* id of a thread_start(fn, arg), or -1 */
int ex_thread_count(void);
const void *ex_waits_on(int id);                       /* its cond in cond_wait, or NULL */
int ex_mutex_is_free(const void *mutex);
int ex_mutex_is_mine(const void *mutex);               /* the calling thread holds it */
int ex_mutex_owner(const void *mutex);                 /* the thread that holds it, or -1 */
unsigned ex_mutex_releases(const void *mutex); /* unlocks so far: a locked section ended */
void ex_fork(void);        /* as in a forked child: the other threads never run again */
int ex_is_frozen(int id);  /* left behind by ex_fork */
int ex_wants_mutex(int id); /* stopped in a lock hook, before it took the mutex */
unsigned ex_points(int id); /* scheduling points thread id has reached so far */
int ex_waits_forever(int id); /* in cond_wait without a timeout (and not frozen) */
uint64_t ex_clock(void *ctx);                          /* the fake clock, a clock_fn */
uint64_t ex_clock_seen(void);                          /* the latest time ex_clock returned */
uint64_t ex_clock_peek(void); /* the fake clock now, without counting as a read */
void ex_clock_jump(uint64_t ns); /* the clock jumps forward; OS timeouts do not move */
void ex_fail(const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 1, 2), noreturn))
#endif
    ;

/* Schedules as text ("decision:option,..."), for replay. */
void ex_choices_format(const ex_decision *d, size_t n, char *out, size_t size);
int ex_choices_parse(const char *text, ex_choice_list *out);
void ex_choices_set(ex_choice_list *l, size_t len, const ex_decision *d, size_t at,
                    uint8_t option);
void ex_choices_free(ex_choice_list *l);

/* Said in the failure report after the schedule: another way to run this execution
   again (a PCT seed), or "" for none. */
void ex_set_replay_hint(const char *hint);

/* Prints every event as it happens (for a replay). */
void ex_set_trace(int on);

#endif
