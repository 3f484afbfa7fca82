/* hwtimer.h 1.2.2 - a hierarchical hashed wheel timer for C, in one header.   Unlicense (public domain)

   In *one* C or C++ file, define HWTIMER_IMPLEMENTATION before you include this file; every
   other file just includes it:

       #define HWTIMER_IMPLEMENTATION
       #include "hwtimer.h"

   It compiles as C99 or later and as C++. Under a strict -std=c99 or -std=c11 (which hides
   POSIX) the file that defines HWTIMER_IMPLEMENTATION includes hwtimer.h before any system
   header (it then defines _POSIX_C_SOURCE 200809L) or is compiled with
   -D_POSIX_C_SOURCE=200809L; else one #error says so. In the default modes (gnu99 ...
   gnu17, C++) any order works and no feature-test macro is defined: names your C library
   hides behind one (glibc's accept4 needs _GNU_SOURCE) need it before your first #include.

QUICK START

   A connection's idle timeout, driven by a poll loop.

       #define HWTIMER_IMPLEMENTATION
       #include "hwtimer.h"
       #include <poll.h>
       #include <stdio.h>

       struct conn { int fd; hwtimer_timeout idle; };

       static void on_idle(hwtimer_timeout *to, void *arg) {
           struct conn *c = HWTIMER_CONTAINER_OF(to, struct conn, idle);
           printf("connection %d idle\n", c->fd);  // a one-shot callback may free c
           (void)arg;
       }

       int main(void) {
           struct conn c = {3, HWTIMER_TIMEOUT_INIT};
           hwtimer_config cfg;
           hwtimer *t;
           hwtimer_config_default(&cfg);
           cfg.tick_ns = HWTIMER_MS(1);       // the default tick is 100 ms (Netty's)
           if (hwtimer_create(&t, &cfg) != HWTIMER_OK) return 1;
           hwtimer_schedule(t, &c.idle, HWTIMER_MS(250), on_idle, NULL);
           while (hwtimer_pending(t) > 0) {   // your event loop
               poll(NULL, 0, hwtimer_poll_timeout_ms(t));  // your fds go here
               hwtimer_poll(t);               // runs every callback that is due
           }
           hwtimer_destroy(t);
           return 0;
       }

CONTENTS (search for a heading, or for a tag such as [hwtimer:wheel])

   QUICK START                  the program above
   WHAT IT IS                   what it is for, what it costs
   TIME                         deadlines, ticks and when a callback runs
   EVENT LOOPS                  driving it from your loop: sleeping, wake-ups, cached time
   CLOCKS                       the default clock, your own, and suspended machines
   THREADS                      no threads, locks, or a worker; your own locks; shards
   OPTIONS                      the macros to define before including
   VERSIONS                     the version macros and what 1.x promises
   the declarations             types, then each function with its rules and error codes
   the implementation           THE DESIGN (for maintainers), then the sections
     [hwtimer:portability] [hwtimer:data] [hwtimer:ticks] [hwtimer:wheel] [hwtimer:check]
     [hwtimer:locking] [hwtimer:loop] [hwtimer:nodes] [hwtimer:pass] [hwtimer:platform]
     [hwtimer:lifecycle] [hwtimer:stop] [hwtimer:worker] [hwtimer:entries] [hwtimer:public]
   [hwtimer:license], [hwtimer:history]  the license; the version history, newest first

WHAT IT IS

   A timer for many timeouts that are mostly cancelled or pushed back before they fire (RPC
   deadlines, retries, heartbeats, leases, idle connections): Netty's HashedWheelTimer made
   hierarchical, like Kafka's and Linux's. Schedule, reschedule and cancel are O(1) and
   never allocate: the node (hwtimer_timeout) lives in your own struct. Empty ticks cost
   nothing: a loop or a worker sleeps until the next tick with work. Exact to the tick,
   never early (TIME); caller-driven or with a worker thread (THREADS). One timer holds
   millions of timeouts: share one, not one per connection.

TIME

   Every time is in nanoseconds of the timer's clock (CLOCKS). hwtimer_create reads it
   once: that is the timer's start S; tick boundaries lie at S + k*tick_ns. A timeout
   scheduled at clock time N with delay d has the deadline D = N + d (UINT64_MAX on
   overflow: never early, in practice never run); the _at forms take D itself. Its callback
   runs once, at the first tick boundary B >= D, never before D (with a leeway, at a
   boundary in [B, B + leeway]: hwtimer_timeout_set_leeway). So it runs up to one tick
   late. In which order: hwtimer_advance, and THREADS.

EVENT LOOPS

   - Sleep for hwtimer_poll_timeout_ms (poll, epoll_wait) or until hwtimer_next_expiry
     (absolute: a TFD_TIMER_ABSTIME timerfd, IORING_TIMEOUT_ABS, clock_nanosleep), then
     call hwtimer_poll. A wake-up may run nothing (see hwtimer_next_expiry).
   - A callback may run well after its deadline if the loop was busy
     (hwtimer_timeout_deadline; stats.late_max_ns and late_runs count it).
   - Many timeouts due at once (a burst, a loop that was busy) run in one call. To go back
     to your fds sooner, call hwtimer_advance_max with a bound: the rest stay due and run
     first at the next call (meanwhile poll_timeout_ms is 0).
   - Cached time (libuv's uv_now, a frame time): pass it to hwtimer_advance and the _at
     forms, or count in ticks from it (hwtimer_schedule_ticks), and the timer reads no
     clock. It must be the timer's clock or a rounded-down reading of it: a time ahead
     runs timeouts early. A deadline built from it for something newer than the loop's
     pass (a connection accepted late in a burst) starts that much early: schedule that
     one with a form that reads the clock.
   - A loop that sleeps in a library (libevent, libuv) keeps one library timer at
     hwtimer_next_expiry and sets cfg.wake_fn, so that a schedule the loop does not see
     (another thread, a library callback) wakes it ("Waking the loop" at
     hwtimer_next_expiry).
   Recipes that run: test/examples/loop_*.c (poll, epoll + timerfd, io_uring, libevent,
   libuv, a worker beside your loop).

CLOCKS

   The timer's clock is cfg.clock_fn, any clock in nanoseconds; NULL: CLOCK_MONOTONIC on
   POSIX, QueryPerformanceCounter on Windows. Your own makes tests exact (a fake clock you
   move, then hwtimer_advance) or shares the loop's time (libuv's uv_hrtime). A clock that
   steps back runs nothing early (hwtimer_advance).

   Suspend. With a clock that counts it (Linux's CLOCK_BOOTTIME), a caller-driven loop
   sleeps on a CLOCK_BOOTTIME timerfd set to hwtimer_next_expiry with TFD_TIMER_ABSTIME
   (it fires at resume if that time passed meanwhile). A worker sleeps on CLOCK_MONOTONIC
   (POSIX threads), which does not count a suspend: a timeout can be late by what the
   worker still had to sleep at the suspend. With a clock_fn of your own that counts it,
   the first schedule or reschedule after resume sees that clock past the worker's wake-up
   time and wakes the worker at once; with the default clock nothing wakes it early.

   Coarse. cfg.coarse_clock = 1 (no clock_fn) reads Linux's CLOCK_MONOTONIC_COARSE, which
   costs less than CLOCK_MONOTONIC and lags it: the kernel moves it on once a tick, so by
   up to its resolution G (clock_getres: 4 ms at HZ=250) when its tick runs on time, and
   by more when the tick runs late, as it often does on a busy or virtual machine. That
   coarse clock is the timer's clock, and never early holds on it, always. A deadline from
   a delay also gets G added, so that a timeout is never early on CLOCK_MONOTONIC either
   while the coarse clock lags by at most G, and may run up to G later. When it lags more,
   a timeout can run early on CLOCK_MONOTONIC by the excess: if you need the promise on
   CLOCK_MONOTONIC whatever the load, leave coarse_clock off.
   hwtimer_next_expiry adds G (and _poll_timeout_ms counts to it from CLOCK_MONOTONIC),
   so that a loop that sleeps on CLOCK_MONOTONIC until then finds the coarse clock at the
   boundary (one wake-up, no spin; where the coarse clock lags more, G after
   CLOCK_MONOTONIC's now); the worker sleeps likewise.

THREADS

   - No threads (cfg.threads NULL, the default): one thread makes every call; no lock.
   - Locks (cfg.threads set, cfg.worker 0): your loop runs the callbacks (cfg.wake_fn:
     EVENT LOOPS).
   - A worker (cfg.threads set, cfg.worker nonzero): a thread of the timer's own runs the
     callbacks at B or as soon after as the OS allows; an earlier schedule wakes it.
   With threads, any function may be called from any thread and from callbacks (but see
   hwtimer_stop and hwtimer_cancel). Callbacks run with no lock held, one at a time per
   timer; one that blocks delays every later timeout of its timer. Threads need GCC's or
   MSVC's atomics (not tcc) and a target with an 8-byte compare-and-swap (every 64-bit one,
   x86 from the i586 on, ARMv7), so that a 64-bit value another thread reads comes out
   whole; else hwtimer_create refuses cfg.threads and says why.

   A worker and a lock of yours that its callbacks take (test/examples/loop_worker.c):
   1. A callback decides under your lock whether its run is still wanted: a one-shot is
      no longer pending once its callback is claimed, so another thread may arm it again
      (hwtimer_is_pending says 1) or cancel it before the callback gets your lock. A
      periodic timeout stays pending while its callback runs (hwtimer_is_pending is 1
      there): use a flag of yours that the canceller clears under the lock.
   2. Under your lock, cancel with hwtimer_try_cancel, never hwtimer_cancel, which waits
      for a running callback that waits for your lock (log_fn hears of it after a second).
      HWTIMER_ERUNNING: the callback runs and takes your lock next; clear your flag.
   3. Schedule and reschedule never wait for a callback: call them holding your lock.
   4. Tear a struct down with hwtimer_retire on each of its nodes, not holding your lock:
      it waits for a running callback, and then no thread can arm the node again (each
      gets HWTIMER_ERETIRED). Free the struct once no other thread can reach it. In one of
      the timer's callbacks it never waits (callbacks run one at a time): the callback of
      a one-shot may retire its struct's nodes and free it.

   Many producers: shards. Every call takes the timer's one lock: two threads that schedule
   and cancel at once get less done than one alone. cfg.shards = n (2 .. 64) gives the
   timer n wheels, each with its own lock, under the same rules: one pending count, one
   next_expiry, one worker (or loop) that runs every wheel's callbacks in order of B. A
   thread arms a node the timer has not held yet in its own wheel (threads are numbered as
   they first arm on any timer of shards; thread k uses wheel k mod n), where it stays for
   every later call from any thread. Use as many as threads that arm at once. The cost: a
   thread alone is a little slower; memory for n wheels; hwtimer_pending, _next_expiry,
   _poll_timeout_ms, _foreach, _stop, _check and a pass take every wheel's lock;
   max_pending adds a count all wheels share (leave it 0 where producers must scale).

OPTIONS (define before including, in the implementation file unless noted)

   HWTIMER_STATIC        every function static to the including file (all files); the
                         compiler may then inline schedule, reschedule and cancel
   HWTIMER_NO_THREADS    no thread code: caller-driven from one thread (all files)
   HWTIMER_NO_PTHREADS   leave the POSIX threads backend out
   HWTIMER_PTHREADS      build the POSIX threads backend on _WIN32 too (mingw winpthreads)
   HWTIMER_C11_THREADS   build the C11 <threads.h> backend (C11 or later)
   HWTIMER_NO_DEFAULT_CLOCK  no platform clock: hwtimer_config.clock_fn is required
   HWTIMER_ASSERT(x)     internal invariant checks (default: assert(x))
   HWTIMER_MALLOC(ctx,size), HWTIMER_FREE(ctx,ptr)  malloc/free unless cfg.alloc_fn is set
   HWTIMER_SLOT_LISTS    lists per slot, a power of two (default 4): 1 saves 3/4 of the
                         memory and makes expiring big timers several times slower
   HWTIMER_LOCK_SPINS    tries of a taken lock, with exponential backoff, before sleeping
                         on it; POSIX and C11 backends (default 30; 0: sleep at once)
   HWTIMER_C11_MAX_WAIT_NS  longest single wait of the C11 backend (default 15 s): it
                         waits on the wall clock, and one stepped back delays a wake-up
                         by at most this much.

VERSIONS

   Semantic versioning (HWTIMER_VERSION, _MAJOR, _MINOR, _PATCH): every name, signature
   and rule documented here holds for all 1.x releases; a 1.x release may add functions,
   config fields (zero keeps the behaviour of a config filled before the field existed)
   and counters, and may make things faster.

LICENSE: see the end of the file ([hwtimer:license]).
*/
#ifndef HWTIMER_H_INCLUDED
#define HWTIMER_H_INCLUDED

/* Only under a strict -std, if the file set none: elsewhere it would hide names. */
#if defined(HWTIMER_IMPLEMENTATION) && defined(__STRICT_ANSI__) && !defined(_WIN32) &&   \
    !defined(__APPLE__) && !defined(_POSIX_C_SOURCE) && !defined(_XOPEN_SOURCE) &&       \
    !defined(_GNU_SOURCE) && !defined(_DEFAULT_SOURCE) && !defined(_BSD_SOURCE)
#define _POSIX_C_SOURCE 200809L /* clock_gettime, CLOCK_MONOTONIC, pthread_condattr_setclock */
#endif

#include <stddef.h>
#include <stdint.h>

/* The version (VERSIONS). */
#define HWTIMER_VERSION_MAJOR 1
#define HWTIMER_VERSION_MINOR 2
#define HWTIMER_VERSION_PATCH 2
#define HWTIMER_VERSION "1.2.2"

/* Durations in nanoseconds, as uint64_t: HWTIMER_MS(250), HWTIMER_SEC(30).
   HWTIMER_CONTAINER_OF(to, struct conn, idle): the struct conn * whose member `idle` is
   *to. In C++ only for standard-layout classes (offsetof); else pass the object as arg.
   C++ gets the same casts written as C++ casts (clean under -Wold-style-cast). */
#ifdef __cplusplus
#define HWTIMER_US(x) (static_cast<uint64_t>(x) * 1000u)
#define HWTIMER_MS(x) (static_cast<uint64_t>(x) * 1000000u)
#define HWTIMER_SEC(x) (static_cast<uint64_t>(x) * 1000000000u)
#define HWTIMER_CONTAINER_OF(ptr, type, member)                                          \
    (static_cast<type *>(static_cast<void *>(                                           \
        const_cast<char *>(reinterpret_cast<const volatile char *>(ptr)) -              \
        offsetof(type, member))))
#else
#define HWTIMER_US(x) ((uint64_t)(x) * 1000u)
#define HWTIMER_MS(x) ((uint64_t)(x) * 1000000u)
#define HWTIMER_SEC(x) ((uint64_t)(x) * 1000000000u)
#define HWTIMER_CONTAINER_OF(ptr, type, member) \
    ((type *)(void *)((char *)(ptr) - offsetof(type, member)))
#endif

#ifdef HWTIMER_STATIC
#if defined(__GNUC__) || defined(__clang__)
#define HWTIMER_DEF static __attribute__((unused))
#else
#define HWTIMER_DEF static
#endif
#else
#define HWTIMER_DEF extern
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Types ---- */

typedef struct hwtimer hwtimer;                 /* opaque */
typedef struct hwtimer_timeout hwtimer_timeout; /* embed it in your own struct */
typedef struct hwtimer_threads hwtimer_threads; /* a table of thread hooks */

/* A callback: runs once per firing with the node and the arg given at scheduling. */
typedef void (*hwtimer_fn)(hwtimer_timeout *to, void *arg);

/* Timeout states (hwtimer_timeout_state). */
enum { HWTIMER_IDLE = 0, HWTIMER_PENDING, HWTIMER_EXPIRED, HWTIMER_CANCELLED, HWTIMER_RETIRED };

/* Error codes (negative): every function that can fail returns one. */
enum {
    HWTIMER_OK = 0,
    HWTIMER_EINVAL = -1,   /* bad argument */
    HWTIMER_ENOMEM = -2,   /* allocation failed (hwtimer_create) */
    HWTIMER_EFULL = -3,    /* max_pending reached */
    HWTIMER_ESTOPPED = -4, /* the timer was stopped */
    HWTIMER_EBUSY = -5,    /* the timeout is already pending */
    HWTIMER_EWORKER = -6,  /* not allowed from this timer's own callback (stop) */
    HWTIMER_ETHREAD = -7,  /* the thread backend failed */
    HWTIMER_ERUNNING = -8, /* its callback runs now on another thread (hwtimer_try_cancel) */
    HWTIMER_ERETIRED = -9  /* the timeout was retired (hwtimer_retire); init it to use it again */
};

/* Private. hwtimer__u64: a 64-bit field that another thread may read without a lock is 8-byte
   aligned, so that one instruction reads it whole (the i386 ABI aligns a uint64_t in a
   struct to 4 bytes only); other compilers align it so already. */
#if defined(__GNUC__) || defined(__clang__)
typedef uint64_t hwtimer__u64 __attribute__((aligned(8)));
#else
typedef uint64_t hwtimer__u64;
#endif
struct hwtimer__wheel;
struct hwtimer__link {
    struct hwtimer__link *next, *prev;
};

/* A timeout node: put one in your own struct; zero-filled, it is idle. Its fields are
   private (read them with hwtimer_timeout_state, _deadline, _arg, _period). At most 64
   bytes on 64-bit targets. */
struct hwtimer_timeout {
    struct hwtimer__link link; /* first: a link converts to its node */
    uint32_t where;            /* which list holds it while pending (HWTIMER__WHERE_*) */
    uint8_t state;             /* HWTIMER_IDLE ... HWTIMER_RETIRED */
    uint8_t leeway_exp;        /* leeway = leeway_digits * 10^leeway_exp ns */
    uint16_t leeway_digits;
    hwtimer__u64 deadline;     /* D of the last scheduling */
    struct hwtimer__wheel *wheel; /* the wheel it was last scheduled in */
    hwtimer__u64 period;       /* 0: one-shot */
    hwtimer_fn fn;
    void *arg;
};

/* A static initializer: a zero-filled (idle) node. */
#define HWTIMER_TIMEOUT_INIT {{NULL, NULL}, 0, 0, 0, 0, 0, NULL, 0, NULL, NULL}

/* Thread hooks for another threading library; every hook is required. The timer's one
   allocation holds mutex_size, cond_size and thread_size bytes (aligned for any type) for
   each mutex, condition variable and thread. */
struct hwtimer_threads {
    const char *name;
    size_t mutex_size, cond_size, thread_size;
    int (*mutex_init)(void *mutex); /* 0 on success, as cond_init and thread_start */
    void (*mutex_destroy)(void *mutex);
    void (*mutex_lock)(void *mutex);
    void (*mutex_unlock)(void *mutex);
    int (*cond_init)(void *cond);
    void (*cond_destroy)(void *cond);
    void (*cond_broadcast)(void *cond);
    /* Waits on cond (mutex held) until a broadcast or about timeout_ns (UINT64_MAX: no
       limit); it may return early. */
    void (*cond_wait)(void *cond, void *mutex, uint64_t timeout_ns);
    int (*thread_start)(void *thread, void (*fn)(void *arg), void *arg);
    void (*thread_join)(void *thread);
    void (*thread_detach)(void *thread);
    void (*thread_self)(void *thread);          /* record the calling thread in *thread */
    int (*thread_is_self)(const void *thread);  /* nonzero: the caller is that thread */
};

/* What hwtimer_create needs; start from hwtimer_config_default(). A zero in any field but
   tick_ns and ticks_per_wheel means the default, or none. */
typedef struct hwtimer_config {
    uint64_t tick_ns;         /* default 100 ms */
    uint32_t ticks_per_wheel; /* default 512; rounded up to a power of two */
    size_t max_pending;       /* 0: unlimited */
    uint64_t (*clock_fn)(void *clock_ctx); /* NULL: the platform's monotonic clock (CLOCKS) */
    void *clock_ctx;
    const hwtimer_threads *threads; /* NULL: no locks, use from one thread only */
    int worker; /* nonzero: a worker thread runs the callbacks (needs threads) */
    void *(*alloc_fn)(size_t size, void *alloc_ctx); /* NULL: malloc */
    void (*free_fn)(void *ptr, void *alloc_ctx);     /* NULL: free */
    void *alloc_ctx;
    void (*wake_fn)(void *wake_ctx); /* "Waking the loop" at hwtimer_next_expiry; NULL: never */
    void *wake_ctx;
    /* log_fn (NULL: silent; hwtimer never prints) hears an English sentence, valid during
       the call only, no lock of the timer held, for these four things and nothing else:
       - a refusal by hwtimer_create: the field and the rule, a failed allocation and its
         size, a threads backend that could not make a lock;
       - a worker's callback that ran longer than max(100 ms, tick_ns), at most once a
         second per timer (the worker then reads the clock around each callback);
       - a timer with a worker created while 64 or more others are alive in the process;
       - a hwtimer_cancel or hwtimer_retire that has waited a second for a callback (a
         deadlock, most likely), once per call. */
    void (*log_fn)(void *log_ctx, const char *message);
    void *log_ctx;
    unsigned shards; /* 0 or 1: one wheel; 2 .. 64: that many, each with its own lock
                        (THREADS: shards); needs threads */
    /* 1: a cheaper clock that may lag, deadlines lengthened to match (CLOCKS): without a
       clock_fn of yours, the platform's coarse monotonic clock (Linux's
       CLOCK_MONOTONIC_COARSE; elsewhere the default clock, and nothing changes). Never
       early holds on that clock. It lags the monotonic clock by its granularity G
       (clock_getres) when the kernel's tick is on time: every deadline made from a delay
       is G later, so that none runs before its delay has passed on the monotonic clock
       while the lag is at most G, and a timeout may run up to G later than with the
       default clock. When the tick runs late the coarse clock lags more, and a timeout
       can run early on the monotonic clock by the excess (CLOCKS: Coarse). hwtimer_now
       returns the coarse reading. Ignored when clock_fn is set. */
    int coarse_clock;
} hwtimer_config;

/* Counters (hwtimer_stats_get). */
typedef struct hwtimer_stats {
    uint64_t wakeups;  /* times the worker returned from its wait */
    uint64_t passes;   /* advance passes run (by advance/poll or the worker) */
    uint64_t fired;    /* callbacks run */
    uint64_t cascaded; /* timeouts moved down a level */
    size_t pending;    /* same as hwtimer_pending */
    size_t bytes;      /* memory hwtimer_create allocated */
    uint64_t refiled;  /* pushed later, then filed again by a pass (at most once a push) */
    /* Lateness: a callback's run minus its deadline D, the run's time being the `now` of
       the advance that ran it (or of the one before it, if later) or the worker's clock
       reading when its pass began. */
    uint64_t late_max_ns; /* the most a callback ran after its deadline */
    uint64_t late_runs;   /* callbacks that ran more than tick_ns + their leeway late */
} hwtimer_stats;

/* ---- Creating and destroying ---- */

/* Fills *cfg with the defaults (each field names its own). */
HWTIMER_DEF void hwtimer_config_default(hwtimer_config *cfg);

/* Creates a timer (cfg NULL: the defaults) in *out; its start S is now (TIME). The only
   call that allocates (one block). HWTIMER_EINVAL: out NULL, tick_ns 0, ticks_per_wheel 0
   or > 2^30, tick_ns times the rounded wheel size overflows 64 bits, worker without
   threads, an incomplete threads table, threads under HWTIMER_NO_THREADS, without GCC's
   or MSVC's atomics and thread-locals (tcc) or on a target without an 8-byte
   compare-and-swap (i386, ARMv5, 32-bit MIPS and PowerPC), only one of alloc_fn and
   free_fn, no clock under HWTIMER_NO_DEFAULT_CLOCK, shards > 64, shards > 1 without
   threads. HWTIMER_ENOMEM,
   HWTIMER_ETHREAD (a lock or condition variable could not be made). On error *out is NULL
   (log_fn hears why). */
HWTIMER_DEF int hwtimer_create(hwtimer **out, const hwtimer_config *cfg);

/* Stops the timer (as hwtimer_stop with no `unprocessed`) and frees it; then it refers to
   none of its nodes. NULL: no-op. From one of its callbacks: every pending node is
   cancelled before destroy returns (free them then); the memory is freed when the
   callback's advance (or the worker) returns. */
HWTIMER_DEF void hwtimer_destroy(hwtimer *t);

/* The built-in thread backends, or NULL for one not compiled in. _default prefers POSIX
   threads, then Win32, then C11. */
HWTIMER_DEF const hwtimer_threads *hwtimer_threads_default(void);
HWTIMER_DEF const hwtimer_threads *hwtimer_threads_pthread(void);
HWTIMER_DEF const hwtimer_threads *hwtimer_threads_c11(void);
HWTIMER_DEF const hwtimer_threads *hwtimer_threads_win32(void);

/* ---- Timeouts ---- */

/* Makes *to a fresh idle node (as zero-filling it). Never on a pending node. */
HWTIMER_DEF void hwtimer_timeout_init(hwtimer_timeout *to);

/* Schedules fn(to, arg) to run once, for the deadline D = now + delay_ns (TIME). O(1).
   Errors, and then nothing changes: HWTIMER_EINVAL (t, to or fn NULL), HWTIMER_ERETIRED
   (to was retired: hwtimer_retire), HWTIMER_ESTOPPED, HWTIMER_EBUSY (to is pending, here
   or on another timer), HWTIMER_EFULL (max_pending), HWTIMER_ETHREAD (the worker could not
   start). A node may be scheduled again from its
   own callback, and on another timer once not pending. */
HWTIMER_DEF int hwtimer_schedule(hwtimer *t, hwtimer_timeout *to, uint64_t delay_ns,
                                 hwtimer_fn fn, void *arg);

/* hwtimer_schedule with the deadline D itself; same errors. It reads no clock (for a
   cached time: EVENT LOOPS), but once with a worker and a clock_fn of yours (CLOCKS). */
HWTIMER_DEF int hwtimer_schedule_at(hwtimer *t, hwtimer_timeout *to, uint64_t deadline_ns,
                                    hwtimer_fn fn, void *arg);
/* hwtimer_schedule with D = T + ticks * tick_ns (at most UINT64_MAX), T the timer's time:
   the `now` of the last hwtimer_advance (from a callback, of the pass under way; with a
   worker, of its last pass; S before any), as libuv counts from uv_now. It reads no
   clock: the cheapest arming (Cached time in EVENT LOOPS). Errors as hwtimer_schedule. */
HWTIMER_DEF int hwtimer_schedule_ticks(hwtimer *t, hwtimer_timeout *to, uint64_t ticks,
                                       hwtimer_fn fn, void *arg);

/* Runs fn for D = now + delay_ns, then D+p, D+2p, ... (fixed rate, no drift): after a run
   for D in advance(t, now) (a worker: now = the clock when the run started), the next
   deadline is the first D + k*p after now; missed periods are skipped. It stays pending
   until cancelled, even while its callback runs. period_ns 0: HWTIMER_EINVAL; other
   errors as hwtimer_schedule. */
HWTIMER_DEF int hwtimer_schedule_periodic(hwtimer *t, hwtimer_timeout *to, uint64_t delay_ns,
                                          uint64_t period_ns, hwtimer_fn fn, void *arg);

/* hwtimer_schedule_periodic with its first deadline D given (as hwtimer_schedule_at). */
HWTIMER_DEF int hwtimer_schedule_periodic_at(hwtimer *t, hwtimer_timeout *to,
                                             uint64_t deadline_ns, uint64_t period_ns,
                                             hwtimer_fn fn, void *arg);

/* A pending timeout gets the deadline now + delay_ns (same callback, arg and period; O(1)).
   Pushed later while due ticks_per_wheel ticks or more ahead, it only stores the deadline.
   Moved earlier, it wakes the loop or the worker as a schedule does; later, neither. Not
   pending: scheduled again with its last callback, arg and period. HWTIMER_EINVAL: t or to
   NULL, or to never scheduled (the first arming is a schedule: it names the callback).
   HWTIMER_ERETIRED: to was retired. HWTIMER_EBUSY: pending on another timer. Else as
   hwtimer_schedule. */
HWTIMER_DEF int hwtimer_reschedule(hwtimer *t, hwtimer_timeout *to, uint64_t delay_ns);

/* hwtimer_reschedule with the new deadline D given (as hwtimer_schedule_at). */
HWTIMER_DEF int hwtimer_reschedule_at(hwtimer *t, hwtimer_timeout *to, uint64_t deadline_ns);

/* 1 if the timeout was pending on t and now will never run; 0 if not (never scheduled,
   cancelled, run or running); HWTIMER_EINVAL for NULL t or to, or a node pending on
   another timer. A periodic timeout cancelled in its own callback returns 1 and is not
   re-armed.
   Synchronous: on any thread but the one running the timeout's callback, it waits for that
   callback to return (as Linux's del_timer_sync); then you may free `to`. So never cancel
   while holding a lock that callback may wait for, nor across two timers in a cycle. A
   callback on timer A that schedules its node on timer B must not touch the node once
   another thread may cancel it on B and free it: that cancel does not wait for A's
   callback.
   Once a one-shot's callback is called, the timer never touches the node unless it is
   scheduled again: the callback may free or reuse it.
   A cancel that has waited a second (by the timer's clock) for the callback tells log_fn
   once, naming the likely cause, then goes on waiting. */
HWTIMER_DEF int hwtimer_cancel(hwtimer *t, hwtimer_timeout *to);

/* hwtimer_cancel that never waits for a callback: what to call while holding a lock of
   yours that callbacks take. 1 if `to` was pending on t and now never runs; 0 if it was
   not pending and its callback is not running on another thread; HWTIMER_ERUNNING if its
   callback runs now on another thread (the worker, or a thread in hwtimer_advance): then
   `to` is not pending any more either (an arming the callback made is cancelled, a
   periodic timeout is not re-armed), and once that callback returns the timer never
   touches `to` again unless the callback itself arms it. The callback, which is about to
   take your lock, must then see for itself that it is no longer wanted (a flag of yours
   that the canceller set under the lock; THREADS). It may take the timer's lock, never
   waits on a callback. From `to`'s own callback it is hwtimer_cancel. HWTIMER_EINVAL: t
   or to NULL, or `to` pending on another timer. */
HWTIMER_DEF int hwtimer_try_cancel(hwtimer *t, hwtimer_timeout *to);

/* Cancels `to` as hwtimer_cancel does (it waits for a callback running on another thread;
   1 if it was pending on t, else 0) and retires it: from then on every arming of `to`
   (every schedule and reschedule form, on any timer, from any thread, its own running
   callback included) fails with HWTIMER_ERETIRED and changes nothing, until
   hwtimer_timeout_init(to). hwtimer_timeout_state(to) is then HWTIMER_RETIRED. When it
   returns, `to` is not pending, its callback is not running, and no later call can arm
   it: the struct that holds it can be torn down while other threads may still call the
   arming functions on it (each gets HWTIMER_ERETIRED), and freed once none of them can
   reach it any more (as Linux's timer_shutdown_sync). A node never scheduled can be
   retired (0). From its own callback it does not wait for itself. It waits for callbacks
   as hwtimer_cancel does, with the same rule on locks and the same sentence to log_fn.
   HWTIMER_EINVAL: t or to NULL, or `to` pending on another timer (then nothing changes). */
HWTIMER_DEF int hwtimer_retire(hwtimer *t, hwtimer_timeout *to);

/* HWTIMER_IDLE (never scheduled, or reset by hwtimer_timeout_init), HWTIMER_PENDING,
   HWTIMER_EXPIRED (its callback was claimed, before it is called; a periodic node is
   PENDING again once re-armed), HWTIMER_CANCELLED (by a cancel, stop or destroy) or
   HWTIMER_RETIRED (hwtimer_retire); HWTIMER_EINVAL for NULL. Safe to ask at any moment,
   from any thread. */
HWTIMER_DEF int hwtimer_timeout_state(const hwtimer_timeout *to);

/* The deadline D of the last scheduling (0 if never scheduled, or NULL): a callback's own
   time (re-arming at D + interval with hwtimer_schedule_at does not drift). It, _arg and
   _period read the node without a lock: from any thread, each value whole (a 64-bit one
   too, on 32-bit targets), but while another thread arms or moves the node it may be the
   value from just before or just after that call. */
HWTIMER_DEF uint64_t hwtimer_timeout_deadline(const hwtimer_timeout *to);

/* 1 while `to` is pending on t as hwtimer_pending counts it, else 0 (also for NULL). */
HWTIMER_DEF int hwtimer_is_pending(hwtimer *t, const hwtimer_timeout *to);

/* The arg and the period (0: one-shot) of the last scheduling; NULL / 0 if never
   scheduled, or NULL (a hwtimer_stop hand-back gets the stop's ctx: the node's arg is
   here). No lock: see hwtimer_timeout_deadline. */
HWTIMER_DEF void *hwtimer_timeout_arg(const hwtimer_timeout *to);
HWTIMER_DEF uint64_t hwtimer_timeout_period(const hwtimer_timeout *to);

/* The time from now (the timer's clock) to the boundary at which `to` will run (the one
   its leeway chose; inside a periodic's own callback, its next period's): 0 once it has
   passed; UINT64_MAX if `to` is not pending on t, t or to is NULL, or the boundary is at
   or past UINT64_MAX. */
HWTIMER_DEF uint64_t hwtimer_timeout_due_in(hwtimer *t, const hwtimer_timeout *to);

/* Lets `to` run at any tick boundary in [B, B + leeway_ns] instead of at B (never before
   D), so that nearby deadlines share a pass and a worker or loop wakes less often (Apple's
   dispatch leeway, Linux's timer slack): with B = tick e and n = floor(leeway_ns /
   tick_ns), at the first tick at or after e that is a multiple of 2^k, the largest power
   of two <= n + 1 (past the last tick a deadline can have, that tick). With a 1 ms tick:
   10 ms rounds up to a multiple of 8 ms, 100 ms to one of 64 ms. It counts as due at that
   tick for ordering, and stays until set again (zero-filled: 0). Stored as up to 65535
   times a power of ten ns, rounded down (four significant digits exact). HWTIMER_EBUSY:
   `to` is pending; HWTIMER_EINVAL: to NULL. */
HWTIMER_DEF int hwtimer_timeout_set_leeway(hwtimer_timeout *to, uint64_t leeway_ns);

/* ---- Time and driving ---- */

/* How many timeouts are pending (scheduled, not yet run, not cancelled), exact at all
   times: a cancel, or a one-shot's callback claimed, frees a place under max_pending at
   once. 0 for NULL. */
HWTIMER_DEF size_t hwtimer_pending(hwtimer *t);

/* Calls visit(to, ctx) once for each timeout hwtimer_pending counts, in no set order, and
   returns how many; O(pending + occupied slots). The visitor may call the accessors that
   take no timer, and hwtimer_is_pending and hwtimer_timeout_due_in on t; no other
   function of t. With threads the walk holds t's locks: it sees one moment, other
   threads' calls wait. NULL t or visit: 0. */
HWTIMER_DEF size_t hwtimer_foreach(hwtimer *t, hwtimer_fn visit, void *ctx);

/* The timer's clock, in ns (0 for NULL). */
HWTIMER_DEF uint64_t hwtimer_now(hwtimer *t);

/* Caller-driven mode: runs every pending timeout whose boundary B <= now, in order of B
   (ties in any order), and returns how many callbacks ran. Any gap works, at the cost of
   the occupied slots only; a now below the previous one does nothing (but runs what
   hwtimer_advance_max left due, at the previous one). What a callback schedules or
   reschedules runs in a later call. From the timer's callback, in worker
   mode, or NULL t: 0. With threads, a call during another thread's pass waits for it. */
HWTIMER_DEF size_t hwtimer_advance(hwtimer *t, uint64_t now_ns);

/* hwtimer_advance running at most max_callbacks callbacks (0: no limit, exactly
   hwtimer_advance), in the order hwtimer_advance would run them; returns how many ran (a
   periodic timeout's run counts as one). The timeouts it leaves due stay pending and
   counted, keep their order, and run first at the next hwtimer_advance, _advance_max or
   hwtimer_poll, whatever its `now` (a `now` below the last one counts as the last one);
   while any is left, hwtimer_next_expiry is at most the `now` it ran at and
   hwtimer_poll_timeout_ms is 0. So a loop bounds the time it spends in the timer when many
   timeouts fall due at once (EVENT LOOPS). The call that leaves some sets aside every
   timeout due by then at O(1) each, as a pass would reach them (a burst in one slot is
   walked whole by the first call). From the timer's callback, in worker mode, or NULL t:
   0. */
HWTIMER_DEF size_t hwtimer_advance_max(hwtimer *t, uint64_t now_ns, size_t max_callbacks);

/* hwtimer_advance(t, hwtimer_now(t)). */
HWTIMER_DEF size_t hwtimer_poll(hwtimer *t);

/* When to call advance next, an absolute time on the timer's clock: UINT64_MAX when
   nothing is pending (or the next boundary is at or past UINT64_MAX, or t is NULL), else
   never later than the next boundary B with work (plus G with cfg.coarse_clock: CLOCKS;
   at most the last `now` while hwtimer_advance_max left timeouts due). Earlier only
   where the first timeouts must still move to a finer level or were pushed later: such a
   wake-up runs nothing but makes progress, at most once per ticks_per_wheel ticks,
   whatever their number.

   Waking the loop (cfg.wake_fn, caller-driven). A schedule or reschedule (any form, any
   thread, outside advance) whose boundary is before the last answer of
   hwtimer_next_expiry or hwtimer_poll_timeout_ms, or made while it was "nothing pending",
   calls wake_fn(wake_ctx) to wake the loop (an eventfd write, uv_async_send):
   - at most once per answer (none before the first): then none until the loop asks again;
   - never inside advance (a callback's schedule, or another thread's during a pass), nor
     with a worker, nor for a push later of a timeout hwtimer_advance_max left due (the
     loop was told it is due);
   - with threads, on the scheduling thread once the timer's lock is released; without,
     in the scheduling call once the node is filed. It may call the timer's functions.
   A cancel never calls it: the loop wakes for nothing and asks again. */
HWTIMER_DEF uint64_t hwtimer_next_expiry(hwtimer *t);

/* hwtimer_next_expiry as a poll/epoll_wait timeout from now: -1 when nothing is pending,
   and only then (not for deadlines that never come), else milliseconds rounded up (0 when
   due), at most INT_MAX. -1 for NULL. Like hwtimer_next_expiry's, its result is the loop's
   answer in "Waking the loop". */
HWTIMER_DEF int hwtimer_poll_timeout_ms(hwtimer *t);

/* Worker mode: starts the worker now rather than at the first schedule. HWTIMER_OK (also
   when running, and caller-driven), HWTIMER_ESTOPPED after stop, HWTIMER_ETHREAD if the
   thread could not start, HWTIMER_EINVAL for NULL. */
HWTIMER_DEF int hwtimer_start(hwtimer *t);

/* Stops the timer for good: joins the worker (or waits for another thread's advance to
   finish its callback), cancels every pending timeout, hands each to `unprocessed` if not
   NULL (no lock held: it may free the node), and returns how many. Then schedules get
   HWTIMER_ESTOPPED; a second stop returns 0. From one of the timer's callbacks:
   HWTIMER_EWORKER, nothing changes. HWTIMER_EINVAL for NULL. */
HWTIMER_DEF int64_t hwtimer_stop(hwtimer *t, hwtimer_fn unprocessed, void *ctx);

/* A short English description of an error code ("unknown error" for others). */
HWTIMER_DEF const char *hwtimer_strerror(int err);

/* Fills *out with the timer's counters (zeroes for NULL t). */
HWTIMER_DEF void hwtimer_stats_get(hwtimer *t, hwtimer_stats *out);

/* Call in the child after fork(): re-creates t's locks and condition variables and, with a
   worker, starts a new one for the inherited timeouts; nothing pending is lost, and a
   callback the worker was running at the fork counts as done (a periodic one is
   re-armed). Fork while no other thread is inside a call to t; the worker may be anywhere
   with the POSIX backend (its fork() waits while the worker holds a lock of t: never fork
   from the foreach visitor of a timer with a worker); with the C11 backend alone, fork
   while the worker sleeps or from its callback. Forked in a worker's callback, that thread
   goes on as the child's worker. Without threads: nothing to do. HWTIMER_EINVAL: t NULL;
   HWTIMER_ETHREAD: a lock or the worker could not be made. */
HWTIMER_DEF int hwtimer_fork_child(hwtimer *t);

/* Checks every internal invariant of t's wheels, for tests and debugging (O(pending +
   occupied slots + bitmap words)): 0, or the first one broken (below). From a callback
   only the count is checked. 0 for NULL. */
enum {
    HWTIMER_CHECK_LINKS = -101,  /* a list's next/prev links disagree */
    HWTIMER_CHECK_BITMAP = -102, /* an occupancy bit says otherwise than the slot's lists */
    HWTIMER_CHECK_SLOT = -103,   /* a node is in a slot its due tick does not allow */
    HWTIMER_CHECK_BEHIND = -104, /* a slot at or behind its level's position is occupied */
    HWTIMER_CHECK_ORDER = -105,  /* the list of due nodes is not sorted by due tick */
    HWTIMER_CHECK_NODE = -106,   /* a filed node is not pending on this timer (as after
                                    hwtimer_timeout_init on a pending node) */
    HWTIMER_CHECK_COUNT = -107,  /* the nodes filed (and a periodic one inside its callback)
                                    are not hwtimer_pending */
    HWTIMER_CHECK_NEAR = -108,   /* a filing owed `due` or a wake-up would skip it */
    HWTIMER_CHECK_WAITERS = -109 /* a cancel's wait is still listed with no cancel waiting */
};
HWTIMER_DEF int hwtimer_check(hwtimer *t);

#ifdef __cplusplus
}
#endif
#endif /* HWTIMER_H_INCLUDED */

/* ====================
   IMPLEMENTATION
   ====================

THE DESIGN (for maintainers: read this before the code; the sections: CONTENTS)

   The structure. The geometry: the tick and the levels, fixed at create. A wheel
   (hwtimer__wheel): slots and bit trees, the lists `due` and `ready`, a pending count; no
   lock, thread, clock, callback or log. The timer (struct hwtimer): the front end over
   1 .. 64 wheels: config, clock, threads, worker, the loop's answers, log, counters. A shard
   is a wheel and what its lock guards: the callback of its node that runs, the cancels
   waiting for it, the timer's last answer. One wheel's lock is the timer's; with cfg.shards
   each has its own (which a node uses: THREADS); `wheel` names a node's: one lock orders
   every call on it.

   Locks. The timer's, then its wheels' in order. Schedule, reschedule and cancel take only
   the node's wheel's; the calls THREADS lists under shards take the timer's, then every
   wheel's. A pass holds the timer's lock except while a callback runs (then none) and runs
   the wheels' steps in tick order, each under its wheel's lock, so that callbacks run in
   order of B across wheels. A thread holding a wheel's lock takes the timer's only after
   releasing it.

   Reads without a lock. Every field read by a thread that does not hold the lock its
   writer holds is listed here; nothing else is read that way. Each goes through the
   portability section's atomic functions, so it is read whole on every target (a 64-bit
   value too, on 32-bit ones, where a plain load is two), and each either is checked again
   under the lock before anything depends on it, or is a value the caller only reports.

     field              read without the lock by          written (under)       ordering
     node.state         hwtimer__is_armed (claiming a     the node's wheel's    acquire /
                        shard, cancel's "another         lock                  release
                        timer's?", set_leeway),
                        hwtimer__is_retired, _state
     node.wheel         hwtimer__shard_of (cancel,        the wheel's lock;     acquire /
                        is_pending, due_in), claiming     the first claim by    relaxed,
                        a shard, hwtimer_cancel's         compare-and-swap      CAS acq_rel
                        inline test (no threads)
     node.period        hwtimer__is_armed, _period        the wheel's lock      relaxed
     node.deadline      hwtimer_timeout_deadline          the wheel's lock      relaxed
     node.arg           hwtimer_timeout_arg               the wheel's lock      relaxed
     pass.last_now      hwtimer_schedule_ticks (a         the timer's lock      relaxed
                        wheel's lock held)
     t->stopped         an arming (a wheel's lock),       the timer's lock      acquire /
                        hwtimer_start                                           release
     t->worker.running  hwtimer__start_worker            the timer's lock      acquire /
                                                                                release
     pass.thread        a cancel (a wheel's lock), via    the timer's lock      see below
                        threads->thread_is_self
     counters           shared_pending, wakes_running and the two process-wide counts:
                        atomic read-modify-writes, never a plain access

   Why each is enough. A stale state or wheel sends the caller to a shard, whose lock it
   then takes and under which it asks again (hwtimer__is_pending_in,
   hwtimer__is_pending_elsewhere, the arming's refusals): the answer is the one of the
   moment the lock was taken, as if the call came a little earlier or later. RETIRED is
   left only by hwtimer_timeout_init, which the node's owner calls once no other thread
   arms it, so a reader that sees it may refuse at once; one that misses it finds it under
   the lock. Acquire on the state pairs with the release that stored it, so that a thread
   that reads a state reads the deadline, period and arg stored before it. The period is
   read without the lock only for whether it is zero, with the state EXPIRED: it changes
   only when the node is armed again, which a caller that acts on it checks under the lock.
   The deadline, period and arg the accessors return are values of the last arming, or of
   the one before if another thread arms the node at that moment; relaxed is enough for a
   value that is only reported, and its 8-byte alignment (hwtimer__u64) makes the
   load one access. The timer's time read by hwtimer_schedule_ticks may be the `now` of
   the pass before the one that just began: the deadline then counts from a time the timer
   was given, never from a mix of two (a torn time on a 32-bit target was 2^32 ns early).
   A stale `stopped` lets an arming into a wheel that stop has not emptied yet, which stop
   then cancels and hands back; once stop has emptied a wheel (under its lock), every
   later arming there sees `stopped`. A stale `running` only sends hwtimer__start_worker to
   the timer's lock, where it reads it again. pass.thread is written by hwtimer__pass_begin
   before the pass sets any wheel's run.node under that wheel's lock, and a cancel reads it
   only after it has seen run.node name its node under the same lock: the lock orders the
   two. Everything else a thread reads without a lock is fixed once hwtimer_create returns
   (the config, the geometry, the hooks; arms_inline too, which changes only without
   threads, where one thread makes every call), or is its own (the thread-locals, the worker's
   log.quiet_until).

   Waking. The loop (or the worker) was last told a time, the earliest next work of every
   wheel, found with all their locks held. Each wheel keeps a copy; a filing before it
   marks the wheel, and once the wheel's lock is released the timer's decides: a sleeping
   worker is woken, or wake_fn is called ("Waking the loop"). Only filings at a tick up to
   notice_upto are compared at all.

   Time (TIME) is counted in ticks: D is due at tick e = ceil((D-S)/tick_ns). `elapsed` is
   the tick up to which the wheel has been processed.

   There are L levels of W = ticks_per_wheel slots (rounded up to a power of two >= 2;
   b = log2 W bits of the tick per level), L just enough for the largest tick a uint64_t
   deadline can have. A timeout due at tick e goes to level (the highest bit in which e and
   `elapsed` differ) / b, in the slot of e's digit at that level: level 0 holds the
   timeouts due in the current rotation of W ticks, level 1 those due in the current
   rotation of W*W ticks but not this one, and so on: everything in a lower level is due
   before anything in a higher one. With W = 512 the largest tick has 45 bits with a 1 ms
   tick, 38 with 100 ms: L = 5 for both.

                   512 slots x 1 ms              512 slots x 100 ms
       level    slot width   level span       slot width   level span
         0      1 ms         512 ms           100 ms       51.2 s
         1      512 ms       4.4 min          51.2 s       7.3 h
         2      4.4 min      37.3 h           7.3 h        155 days
         3      37.3 h       2.2 years        155 days     218 years
         4      2.2 years    1115 years       218 years    111,000 years

   (uint64_t time ends 584 years after the clock's zero.)

   To advance to tick `target`, repeat: find the first occupied slot after elapsed's
   position in the lowest non-empty level; if it starts after target, stop; else set
   elapsed to its start and empty it: a level-0 slot's timeouts run; a higher slot's are
   re-filed relative to the new elapsed, into a lower level (or run, if due now). Every
   occupied slot is visited once, in time order, and no empty one is.

   The wheel and its front end. A wheel knows ticks, never time, locks or callbacks; the
   front end (the timer) turns time into ticks, runs callbacks and decides whom to wake. At
   their boundary are three ticks of the wheel, each with one writer:

     due_upto     written by the wheel: the pass's target from hwtimer__wheel_begin to
                  _end, else elapsed. A node filed at a tick up to it goes to `due`, in tick
                  order, and runs at the start of the next pass: its slot would lie at or
                  before elapsed, where no step looks.
     watch_upto   written by the front end (hwtimer__wheel_watch): the last tick whose
                  filing the front end must hear of, because it comes before the answer
                  the loop or the worker was given ("Waking"). hwtimer__wheel_file returns 1
                  for such a filing; 0 once the answer is spent or nobody listens.
     notice_upto  the greater of the two, kept by hwtimer__wheel_watch and _begin. A filing
                  at a tick past it goes straight to its slot and is reported to nobody:
                  the inline arming relies on that, and tests only this one tick.

   The promise: a node filed at tick e is collected by the first pass whose target
   reaches e (unless a bound cuts that pass: then it waits in `left`), never by one whose
   target lies before e (its slot starts at or before e, and a coarse slot re-files what
   is not due yet). Outside a pass, hwtimer__wheel_next_tick is never later than the
   earliest e; during one it may name a node of `due` while a slot before the target is
   still to come, and both are due already. A watched filing is reported. hwtimer_check
   tests notice_upto against both limits (CHECK_NEAR) and watch_upto against the front
   end's answer; test/programs/test_wheel.c drives a wheel alone against all of it.

   The fast path. Without threads, schedule, reschedule and cancel run inline in the
   caller and take no lock. An arming is inline when three answers are yes, each asked
   where its data is: the timer's (arms_inline: no threads and not stopped; room under
   max_pending; for a count of ticks, a count whose deadline fits), the node's (IDLE or
   CANCELLED, and no leeway or the leeway of the wheel's memo: one test of a 4-byte word,
   hwtimer__node_arms_inline) and the wheel's (the tick lies past notice_upto). A
   reschedule is inline when it is a push later that the wheel takes by storing the
   deadline; a cancel when the node is filed in the wheel. Everything else takes the
   general way, which handles every case: the fast path is a shortcut for the commonest
   ones and never decides anything the general way would decide differently.

   Each slot is HWTIMER_SLOT_LISTS lists. A node goes to the first while it is
   empty, else to the one its address picks (one per MiB): a sparse slot stays in one
   place, a busy one spreads, and neighbours in memory stay neighbours in a list, so a
   cancel's writes mostly hit cached lines. Emptying a slot walks its lists in step, each
   from both ends, prefetching: eight chains of cache misses overlap instead of one. A
   node's fields come in the order a cancel and a re-filing read them, so a cancel touches
   one of its (up to two) cache lines.

   Leeway (the rule: hwtimer_timeout_set_leeway). The grid point is (e + 2^k - 1) &
   ~(2^k - 1): one add and one and. Every window of n + 1 ticks holds one, so nodes of one
   leeway need at most one pass per 2^k > (n + 1) / 2 ticks; a grid is also every coarser
   one's, so different leeways share passes. A node whose 2^k is at least a level's slot
   width lands on a slot start there and never moves below it. The mask (a division and a
   bit scan) is remembered for the last leeway seen. Not the roundest tick of the window:
   finding it costs a bit scan on every filing.

   Pushing a deadline later (lazy re-filing). Most reschedules push an idle timeout later.
   When the node waits in a coarse level (as one due W ticks or more ahead does) and no
   pass is under way, the reschedule only stores the new deadline: its slot starts at or
   before the new boundary, and the pass files every node of a coarse slot by its deadline
   anyway. Every other move files at once: earlier (it may have to wake), from level 0 or
   `due`, or during a pass (it must wait for the next one). The cost: hwtimer_next_expiry's
   early wake-ups (so a level-0 node is moved at once); a re-filing (stats.refiled) only
   when a pass reaches a coarse slot a node was pushed past: never more often than pushes.

   Bounded passes (hwtimer_advance_max). A pass that reaches its bound sets aside, in each
   wheel still in it, what it would still run: `ready`, then each slot up to the target
   emptied as its steps would, appended to the wheel's `left` list. The wheels then end
   at the target as usual, so every other rule holds. The next pass begins (what was due
   waits in `ready`, new filings in `due`), runs the `left` lists first, then its steps.
   A pass cut while it ran `left` appends its own rest after the rest of `left`: a wheel's
   `left` is in run order, but across wheels the order is by pass, then by B. So each cut
   is a generation (numbered past every slot's `where`, counting up from
   hwtimer__left_where until every `left` list is empty again), and the lists are merged
   by generation, then tick. A wheel's last generation keeps `where` _LIST (its number in
   the wheel): its nodes get the number in `where` only when a later one is appended, so
   a burst drained by many bounded calls is not walked again. A push later leaves a
   numbered node in `left` as in a coarse slot; reached past its pass's target, it is
   filed instead of run.

   Trade-offs. Memory: (L*W + 2)*HWTIMER_SLOT_LISTS list heads of 16 bytes plus bitmaps,
   161 KiB for 512 slots and 5 levels, allocated once. A timeout moves down at most L-1
   times (plus its re-filings), each time with its due tick recomputed from its deadline (a
   multiply-high: the 64-byte node has no room for it). Wide levels (Netty's 512) re-file
   less than narrow ones (timeout.c's 64) but spread a level's timeouts over more lists, so
   a cancel's neighbours lie further apart in memory: it asks for their lines first (a
   store asks as it leaves the store buffer: a cold line holds up the stores behind).
   Timeouts filed during a pass, or due at or before the last tick advanced to, wait in
   `due`, sorted by due tick (inserted from the tail: O(1) unless the clock steps back),
   and run at the start of the next advance.

   Invariants: the rules above, one per code of hwtimer_check (at its declaration), which
   tests each; HWTIMER_ASSERT where they are relied on.
*/
#if defined(HWTIMER_IMPLEMENTATION) && !defined(HWTIMER_IMPLEMENTATION_DONE)
#define HWTIMER_IMPLEMENTATION_DONE

#include <limits.h>
#include <string.h>

#ifndef HWTIMER_ASSERT
#include <assert.h>
#define HWTIMER_ASSERT(x) assert(x)
#endif

#if !defined(HWTIMER_MALLOC) || !defined(HWTIMER_FREE)
#include <stdlib.h>
#define HWTIMER_MALLOC(ctx, size) ((void)(ctx), malloc(size))
#define HWTIMER_FREE(ctx, ptr) ((void)(ctx), free(ptr))
#endif

#ifndef HWTIMER_LOCK_SPINS
#define HWTIMER_LOCK_SPINS 30
#endif
#ifndef HWTIMER_C11_MAX_WAIT_NS
#define HWTIMER_C11_MAX_WAIT_NS 15000000000u
#endif

/* Which backends are compiled in. */
#if defined(HWTIMER_NO_THREADS)
#define HWTIMER__HAVE_THREADS 0
#else
#define HWTIMER__HAVE_THREADS 1
#if defined(_WIN32)
#define HWTIMER__WIN32 1
#endif
#if !defined(HWTIMER_NO_PTHREADS) && (!defined(_WIN32) || defined(HWTIMER_PTHREADS))
#define HWTIMER__PTHREAD 1
#endif
#if defined(HWTIMER_C11_THREADS)
#define HWTIMER__C11 1
#endif
#endif

#if !defined(_WIN32) && (defined(HWTIMER__PTHREAD) || !defined(HWTIMER_NO_DEFAULT_CLOCK))
#include <time.h>
/* (glibc: __USE_XOPEN2K is what declares clock_gettime and pthread_condattr_setclock) */
#if !defined(CLOCK_MONOTONIC) || (defined(__GLIBC__) && !defined(__USE_XOPEN2K))
#define HWTIMER__TIME_HIDDEN
#error "hwtimer.h: clock_gettime/CLOCK_MONOTONIC are hidden: a system header came first under strict -std=c99/c11. Include hwtimer.h first in the file that defines HWTIMER_IMPLEMENTATION, or compile with -D_POSIX_C_SOURCE=200809L or -std=gnu99."
#endif
#endif
#if defined(HWTIMER__C11) && !defined(HWTIMER__TIME_HIDDEN)
#include <time.h>
#if !defined(TIME_UTC) /* C11's, beside timespec_get */
#define HWTIMER__TIME_HIDDEN
#error "hwtimer.h: HWTIMER_C11_THREADS needs C11's timespec_get: compile with -std=c11 or later."
#endif
#endif
#if !defined(HWTIMER__TIME_HIDDEN)

/* ====================
   [hwtimer:portability] Portability: bit scans, inlining hints, atomics, thread-locals
   ==================== */

#if defined(_WIN32) && (defined(HWTIMER__WIN32) || !defined(HWTIMER_NO_DEFAULT_CLOCK))
/* Keep <windows.h>'s min, max, near and far from a file that had none. */
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#define HWTIMER__DEFINED_NOMINMAX
#endif
#if !defined(near) && !defined(far)
#define HWTIMER__UNDEF_NEAR_FAR
#endif
#include <windows.h>
#ifdef HWTIMER__DEFINED_NOMINMAX
#undef NOMINMAX
#endif
#ifdef HWTIMER__UNDEF_NEAR_FAR
#undef near
#undef far
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* HWTIMER__HOT: the inline hint on the hot entry points (schedule, reschedule, cancel),
   given only under OPTIONS' HWTIMER_STATIC, where every function is local to its file.
   With external linkage it is empty: C++ would then want an inline function's definition
   in every file that calls it, and clang warns at C99's extern inline. */
#if !defined(HWTIMER_STATIC)
#define HWTIMER__HOT
#elif defined(_MSC_VER) && !defined(__cplusplus)
#define HWTIMER__HOT __inline /* MSVC's C before C11 knows only this spelling */
#else
#define HWTIMER__HOT inline
#endif

/* Bit scans and inlining hints: GCC's and Clang's builtins, MSVC's intrinsics, or else
   portable C (slower scans, no hints). hwtimer__ctz64 is the index of x's lowest set bit,
   hwtimer__msb64 that of its highest; x must not be 0, for which neither is defined.
   HWTIMER__PREFETCH_NODE asks for the lines of a node's first and last bytes: a node that
   does not start a cache line may span two, and a walk's visit may read both. */

#if defined(__GNUC__) || defined(__clang__)
static unsigned hwtimer__ctz64(uint64_t x) { return (unsigned)__builtin_ctzll(x); }
static unsigned hwtimer__msb64(uint64_t x) { return 63u - (unsigned)__builtin_clzll(x); }
#define HWTIMER__ALWAYS_INLINE static inline __attribute__((always_inline))
#define HWTIMER__NOINLINE __attribute__((noinline))
#define HWTIMER__PREFETCH_NODE(p)                                                          \
    (__builtin_prefetch(p), __builtin_prefetch((const char *)(p) + sizeof(hwtimer_timeout) - 1))
#define HWTIMER__PREFETCH_WRITE(p) __builtin_prefetch((p), 1)
#elif defined(_MSC_VER)
#include <intrin.h>
static unsigned hwtimer__ctz64(uint64_t x) {
    unsigned long i;
    _BitScanForward64(&i, x);
    return (unsigned)i;
}
static unsigned hwtimer__msb64(uint64_t x) {
    unsigned long i;
    _BitScanReverse64(&i, x);
    return (unsigned)i;
}
#define HWTIMER__ALWAYS_INLINE static __forceinline
#define HWTIMER__NOINLINE __declspec(noinline)
#define HWTIMER__PREFETCH_NODE(p) ((void)(p))
#define HWTIMER__PREFETCH_WRITE(p) ((void)(p))
#else
static unsigned hwtimer__msb64(uint64_t x) {
    unsigned n = 0;
    while (x >>= 1) n++;
    return n;
}
static unsigned hwtimer__ctz64(uint64_t x) { return hwtimer__msb64(x & (~x + 1)); } /* lowest bit */
#define HWTIMER__ALWAYS_INLINE static
#define HWTIMER__NOINLINE
#define HWTIMER__PREFETCH_NODE(p) ((void)(p))
#define HWTIMER__PREFETCH_WRITE(p) ((void)(p))
#endif

/* Atomic accesses. Every field that one thread reads while another may write it, without
   the lock that orders the two, is read and written through the functions below, one pair
   per type; "Reads without a lock" in THE DESIGN lists each such field and argues why the
   ordering chosen for it is enough. Three kinds:
   - load/store (acquire/release): a flag or a pointer whose reader then relies on what the
     writer stored before it (a node's state, its wheel; the timer's stopped, the worker's
     running);
   - load64/store64 (relaxed): a 64-bit value read only for itself (a deadline, a period,
     the timer's time), which must come out whole: on a 32-bit target a plain load of a
     uint64_t is two loads, and may take one half from the old value and one from the new.
     The fields are 8-byte aligned (hwtimer__u64: the i386 ABI aligns a uint64_t in a
     struct to 4 bytes only, and an access that crosses a cache line is not atomic);
   - ATOMIC_ADD: counters kept without a lock; CAS_PTR: a node's first claim by a wheel.
   GCC and Clang give all of them for every type with their __atomic builtins; a 64-bit
   one only where the target has an 8-byte compare-and-swap (__GCC_HAVE_SYNC_COMPARE_AND_SWAP_8:
   x86 from the i586 on, ARMv7, every 64-bit target), else HWTIMER__WHOLE64 is 0 and
   hwtimer_create refuses threads. MSVC: volatile accesses ordered by a fence (a compiler
   barrier on x86 and x64, whose loads and stores are already acquire and release; a dmb
   on ARM and ARM64), and the Interlocked functions for 64 bits on 32-bit targets. A
   compiler with neither (tcc) gets plain accesses, and hwtimer_create refuses threads:
   then one thread makes every call. */
#if defined(__GNUC__) || defined(__clang__)
#define HWTIMER__ATOMICS 1
#define HWTIMER__LOAD_BODY(type, p) return __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define HWTIMER__STORE_BODY(type, p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define HWTIMER__STORE_RELAXED_BODY(type, p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define HWTIMER__LOAD_RELAXED_BODY(type, p) return __atomic_load_n((p), __ATOMIC_RELAXED)
#if defined(__GCC_HAVE_SYNC_COMPARE_AND_SWAP_8) || UINTPTR_MAX > 0xFFFFFFFFu
#define HWTIMER__WHOLE64 1
#define HWTIMER__LOAD64_BODY(p) HWTIMER__LOAD_RELAXED_BODY(uint64_t, p)
#define HWTIMER__STORE64_BODY(p, v) HWTIMER__STORE_RELAXED_BODY(uint64_t, p, v)
#else
#define HWTIMER__WHOLE64 0
#endif
#define HWTIMER__ATOMIC_ADD(p, v) __atomic_add_fetch((p), (v), __ATOMIC_RELAXED)
#define HWTIMER__ATOMIC_ADD_SYNC(p, v) __atomic_add_fetch((p), (v), __ATOMIC_ACQ_REL)
#define HWTIMER__HAVE_THREAD_LOCAL 1
#define HWTIMER__THREAD_LOCAL __thread
#define HWTIMER__CAS_PTR(p, expected, desired)                                          \
    __atomic_compare_exchange_n((p), &(expected), (desired), 0, __ATOMIC_ACQ_REL,       \
                                __ATOMIC_ACQUIRE)
#elif defined(_MSC_VER)
#define HWTIMER__ATOMICS 1
#if defined(_M_ARM64) || defined(_M_ARM64EC)
#define HWTIMER__FENCE() __dmb(_ARM64_BARRIER_ISH)
#elif defined(_M_ARM)
#define HWTIMER__FENCE() __dmb(_ARM_BARRIER_ISH)
#else
#define HWTIMER__FENCE() _ReadWriteBarrier()
#endif
#define HWTIMER__LOAD_BODY(type, p)                                                     \
    type v_ = *(const volatile type *)(p);                                              \
    HWTIMER__FENCE();                                                                   \
    return v_
#define HWTIMER__STORE_BODY(type, p, v)                                                 \
    HWTIMER__FENCE();                                                                   \
    *(volatile type *)(p) = (v)
#define HWTIMER__STORE_RELAXED_BODY(type, p, v) *(volatile type *)(p) = (v)
#define HWTIMER__LOAD_RELAXED_BODY(type, p) return *(const volatile type *)(p)
#define HWTIMER__WHOLE64 1
#if defined(_WIN64)
#define HWTIMER__LOAD64_BODY(p) return *(const volatile uint64_t *)(p)
#define HWTIMER__STORE64_BODY(p, v) *(volatile uint64_t *)(p) = (v)
#else /* an 8-byte compare-and-swap reads and writes 8 bytes at once */
#define HWTIMER__LOAD64_BODY(p)                                                         \
    return (uint64_t)_InterlockedCompareExchange64((__int64 volatile *)(uintptr_t)(p), 0, 0)
#define HWTIMER__STORE64_BODY(p, v)                                                     \
    __int64 old_ = *(const volatile __int64 *)(p);                                      \
    while (_InterlockedCompareExchange64((__int64 volatile *)(p), (__int64)(v), old_) != old_) \
        old_ = *(const volatile __int64 *)(p)
#endif
#define HWTIMER__ATOMIC_ADD(p, v) (_InterlockedExchangeAdd((p), (v)) + (v))
#define HWTIMER__ATOMIC_ADD_SYNC(p, v) HWTIMER__ATOMIC_ADD(p, v) /* a full barrier */
#define HWTIMER__HAVE_THREAD_LOCAL 1
#define HWTIMER__THREAD_LOCAL __declspec(thread)
#define HWTIMER__CAS_PTR(p, expected, desired)                                          \
    (_InterlockedCompareExchangePointer((void *volatile *)(p), (desired), (expected)) ==  \
     (void *)(expected))
#else
#define HWTIMER__ATOMICS 0
#define HWTIMER__WHOLE64 0
#define HWTIMER__ATOMIC_ADD(p, v) (*(p) += (v))
#define HWTIMER__ATOMIC_ADD_SYNC(p, v) (*(p) += (v))
#define HWTIMER__HAVE_THREAD_LOCAL 0
#define HWTIMER__THREAD_LOCAL
#define HWTIMER__CAS_PTR(p, expected, desired) (*(p) = (desired), 1) /* never used */
#endif
#if !HWTIMER__ATOMICS
#define HWTIMER__LOAD_BODY(type, p) return *(p)
#define HWTIMER__STORE_BODY(type, p, v) *(p) = (v)
#define HWTIMER__STORE_RELAXED_BODY(type, p, v) *(p) = (v)
#define HWTIMER__LOAD_RELAXED_BODY(type, p) return *(p)
#endif
#if !HWTIMER__WHOLE64 /* threads are refused: no other thread reads these, plain is enough */
#define HWTIMER__LOAD64_BODY(p) return *(p)
#define HWTIMER__STORE64_BODY(p, v) *(p) = (v)
#endif
/* The functions, defined only for the types read without a lock and only in the orders
   used: hwtimer__load_T (acquire) and hwtimer__store_T (release) for a node's state (u8),
   the timer's `stopped` and the worker's `running` (int); for a node's wheel, an acquire
   load and a relaxed store (its first claim is CAS_PTR's). hwtimer__wheel_ptr names the
   pointer type so that the bodies' qualifiers and casts apply to the pointer itself. */
#define HWTIMER__ACQUIRE_LOAD(name, type)                                               \
    HWTIMER__ALWAYS_INLINE type hwtimer__load_##name(type const *p) {                   \
        HWTIMER__LOAD_BODY(type, p);                                                    \
    }
#define HWTIMER__RELEASE_STORE(name, type)                                              \
    HWTIMER__ALWAYS_INLINE void hwtimer__store_##name(type *p, type v) {                \
        HWTIMER__STORE_BODY(type, p, v);                                                \
    }
typedef struct hwtimer__wheel *hwtimer__wheel_ptr;
HWTIMER__ACQUIRE_LOAD(u8, uint8_t)
HWTIMER__RELEASE_STORE(u8, uint8_t)
HWTIMER__ACQUIRE_LOAD(int, int)
HWTIMER__RELEASE_STORE(int, int)
HWTIMER__ACQUIRE_LOAD(wheel, hwtimer__wheel_ptr)
HWTIMER__ALWAYS_INLINE void hwtimer__store_relaxed_wheel(hwtimer__wheel_ptr *p,
                                                         hwtimer__wheel_ptr v) {
    HWTIMER__STORE_RELAXED_BODY(hwtimer__wheel_ptr, p, v);
}
#undef HWTIMER__ACQUIRE_LOAD
#undef HWTIMER__RELEASE_STORE

/* hwtimer__load64 and hwtimer__store64 (relaxed): a node's deadline and period, the
   timer's time. They take an 8-byte aligned uint64_t (hwtimer__u64): on i386, where a
   uint64_t may be aligned to 4 bytes only, an atomic access to it is a call into the
   atomics library instead of one instruction. */
HWTIMER__ALWAYS_INLINE uint64_t hwtimer__load64(const hwtimer__u64 *p) {
    HWTIMER__LOAD64_BODY(p);
}
HWTIMER__ALWAYS_INLINE void hwtimer__store64(hwtimer__u64 *p, uint64_t v) {
    HWTIMER__STORE64_BODY(p, v);
}

/* A node's arg, read without a lock by hwtimer_timeout_arg, which only returns it:
   relaxed order is enough, and a pointer is one access on every target. */
typedef void *hwtimer__ptr;
HWTIMER__ALWAYS_INLINE void *hwtimer__load_arg(hwtimer__ptr const *p) {
    HWTIMER__LOAD_RELAXED_BODY(hwtimer__ptr, p);
}
HWTIMER__ALWAYS_INLINE void hwtimer__store_arg(hwtimer__ptr *p, void *v) {
    HWTIMER__STORE_RELAXED_BODY(hwtimer__ptr, p, v);
}

/* x >> n and x << n for any n below 128, 0 once n >= 64 (every bit shifted out), where a
   shift in C by 64 or more is undefined. hwtimer__slot_start needs them: on the top level,
   the position of the digit above a level's, level * bits + bits, may reach or pass 64. */
static uint64_t hwtimer__shr(uint64_t x, unsigned n) { return n < 64 ? x >> n : 0; }
static uint64_t hwtimer__shl(uint64_t x, unsigned n) { return n < 64 ? x << n : 0; }

/* a + b, or UINT64_MAX if that overflows: a deadline past the end of uint64_t time stays at
   its end. */
static uint64_t hwtimer__add_sat(uint64_t a, uint64_t b) {
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Stores a node's state with release order: a thread that reads the state without the
   lock then also reads the fields stored before it ("Reads without a lock" in THE DESIGN). */
static void hwtimer__set_state(hwtimer_timeout *to, int state) {
    hwtimer__store_u8(&to->state, (uint8_t)state);
}

/* A message for cfg.log_fn, built without stdio; what does not fit in `text` is dropped,
   and the text stays NUL-terminated. */
typedef struct hwtimer__sentence {
    char text[256];
    size_t len;
} hwtimer__sentence;

static void hwtimer__say(hwtimer__sentence *msg, const char *words) {
    while (*words && msg->len + 1 < sizeof msg->text) msg->text[msg->len++] = *words++;
    msg->text[msg->len] = '\0';
}

static void hwtimer__say_number(hwtimer__sentence *msg, uint64_t v) {
    char digits[21];
    size_t n = sizeof digits - 1;
    digits[n] = '\0';
    do {
        digits[--n] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v);
    hwtimer__say(msg, digits + n);
}

/* ====================
   [hwtimer:data] Data: a node's place, the geometry, a wheel, its shard, the timer
   ==================== */

/* The values of hwtimer_timeout.where, which says which list holds a pending node. NONE is
   0, so that a zero-filled node is in no list. */
enum {
    HWTIMER__WHERE_NONE = 0,
    HWTIMER__WHERE_LIST = 1, /* `due`, `ready`, or `left` in the wheel's last generation */
    HWTIMER__WHERE_WHEEL = 2 /* slot s of level l is WHERE_WHEEL + (l << bits) + s; the
                                values past the last slot's number generations of `left` */
};

#define HWTIMER__MAX_BIT_LAYERS 6 /* a level of 2^30 slots, the most, needs 5: 64^5 = 2^30 */
#define HWTIMER__MAX_SHARDS 64    /* a bit each in a pass's mask of wheels */
#define HWTIMER__LINE 64          /* each part of a timer's block starts a cache line */

/* With a worker and a cfg.log_fn, a callback that runs longer than SLOW_CALLBACK_NS (or a
   tick, if that is longer) is reported, at most once per SLOW_REPORT_EVERY_NS: every
   timeout due meanwhile runs that much late. */
#define HWTIMER__SLOW_CALLBACK_NS 100000000u
#define HWTIMER__SLOW_REPORT_EVERY_NS 1000000000u

#ifndef HWTIMER_SLOT_LISTS
#define HWTIMER_SLOT_LISTS 4
#endif
/* A power of two, so that a node's list is chosen by masking its address
   (hwtimer__slot_append). */
#if HWTIMER_SLOT_LISTS < 1 || (HWTIMER_SLOT_LISTS & (HWTIMER_SLOT_LISTS - 1))
#error "hwtimer.h: HWTIMER_SLOT_LISTS must be a power of two"
#undef HWTIMER_SLOT_LISTS /* a valid value, so that the #error is the only error */
#define HWTIMER_SLOT_LISTS 4
#endif

/* The geometry ("The structure" in THE DESIGN): the tick and the levels, fixed at create;
   every wheel holds a copy. */
typedef struct hwtimer__geometry {
    uint64_t tick_ns;
    uint64_t tick_inv; /* floor(UINT64_MAX / tick_ns), to divide by multiply-high */
    uint64_t start;    /* S: the clock at create, tick 0's boundary */
    uint64_t max_tick; /* the tick a deadline of UINT64_MAX is due at: no tick is later */
    uint32_t width;    /* W: slots per level, a power of two >= 2 */
    uint32_t mask;     /* width - 1 */
    unsigned bits;     /* b = log2(width): the bits of a tick that each level takes */
    unsigned levels;   /* L */
    unsigned bit_layers;  /* the layers of each level's bit tree (hwtimer__level_bits) */
    size_t level_words;   /* the 64-bit words of one level's bit tree, all layers */
    /* Indexed by the highest bit (0 .. 63) in which a tick differs from elapsed: the
       `where` of slot 0 of the level the tick goes to, and the shift of that level's digit
       in a tick (level * bits). Tables, so that a filing does no division by bits. */
    uint32_t level_where[64];
    unsigned char level_shift[64];
    uint32_t layer_words[HWTIMER__MAX_BIT_LAYERS];  /* the words in each layer of a tree */
    uint32_t layer_offset[HWTIMER__MAX_BIT_LAYERS]; /* where each layer starts in it */
} hwtimer__geometry;

/* The last leeway a wheel turned into ticks (hwtimer__leeway_tick), kept because turning
   one costs a division and a bit scan, and successive filings mostly carry the same one. */
typedef struct hwtimer__leeway_memo {
    uint32_t key;  /* that leeway's hwtimer__leeway_key; 0 (no leeway) before the first */
    uint64_t mask; /* 2^k - 1, for the grid of 2^k ticks ("Leeway" in THE DESIGN) */
} hwtimer__leeway_memo;

/* A wheel ("The structure" in THE DESIGN): ticks, slots and lists, no lock, clock or
   callback. A pass works on it in steps: hwtimer__wheel_begin with the pass's target, then
   each step hwtimer__wheel_next_step finds (the ready nodes, or a slot to collect), then
   hwtimer__wheel_end. */
typedef struct hwtimer__wheel {
    hwtimer__geometry geo; /* a copy of the timer's: read at an offset, not through a
                              pointer, by every filing */
    struct hwtimer__link *lists; /* the heads, HWTIMER_SLOT_LISTS per `where` from
                                    lists[where * HWTIMER_SLOT_LISTS]; those of NONE and
                                    LIST unused */
    uint64_t *occupied;          /* the bit trees: level l's at occupied[l * level_words] */
    uint64_t elapsed; /* the tick up to which the wheel has been processed: every slot up to
                         it has been emptied, and a filing finds its slot relative to it */
    /* The three limits of the wheel's contract with its front end ("The wheel and its
       front end" in THE DESIGN). A filing at a tick up to due_upto goes to `due`, not to
       a slot: it is the target of the pass under way, else elapsed; the wheel writes it.
       A filing at a tick up to watch_upto is reported to the filer, which asked for that
       (hwtimer__wheel_watch). notice_upto is the greater of the two: a filing past it
       needs nothing but its slot, which is what makes the inline arming possible. */
    uint64_t notice_upto;
    uint64_t due_upto;
    uint64_t watch_upto;
    size_t pending;       /* nodes armed here: filed, or held out of every list by the front
                             end (a periodic node whose callback runs) */
    int collecting;       /* 1 from hwtimer__wheel_begin to hwtimer__wheel_end */
    hwtimer__leeway_memo memo;
    struct hwtimer__link due;   /* filed at a tick up to due_upto, sorted by tick: the next
                                   pass runs them first */
    struct hwtimer__link ready; /* the nodes of the step under way, in the order they run */
    struct hwtimer__link left;  /* the due nodes bounded passes set aside, in the order they
                                   run; the next pass runs them first ("Bounded passes") */
    uint32_t left_gen;          /* the generation of the nodes at the end of `left` whose
                                   `where` is still WHERE_LIST: the wheel's last */
    uint64_t cascaded;          /* nodes moved down a level, re-filings included */
    uint64_t refiled;           /* of those, nodes re-filed because a push later took their
                                   tick past the end of the slot they waited in */
} hwtimer__wheel;

/* A pass's step in one wheel: run the ready nodes due at `tick`, or collect the slot of
   `level` and `slot`, which starts at `tick`. */
typedef struct hwtimer__step {
    uint64_t tick;
    int runs_ready; /* 1: the ready nodes; 0: the slot */
    unsigned level;
    uint32_t slot;
} hwtimer__step;

/* What a callback did to its own node while it ran (hwtimer__run_node). */
typedef enum hwtimer__fate {
    HWTIMER__UNTOUCHED,
    HWTIMER__REARMED,       /* scheduled or rescheduled: pending again, filed */
    HWTIMER__CANCELLED
} hwtimer__fate;

/* The node whose callback runs now in a shard: EXPIRED, in no list, and no lock held while
   the callback runs. When it returns, the pass acts on its fate: REARMED, a cancel waiting
   for the callback cancels the new arming (hwtimer__cancel_for_waiter); UNTOUCHED and
   periodic, it is filed again for its first period after `now`; otherwise the pass never
   touches the node again: once the callback has returned, the node's owner may free it
   (after hwtimer_cancel, or a one-shot's callback itself). */
typedef struct hwtimer__running {
    hwtimer_timeout *node; /* or NULL */
    int periodic;          /* kept here so that the pass need not read a node that may be
                              freed */
    hwtimer__fate fate;
    uint64_t now;          /* the `now` its periodic re-arm counts from */
} hwtimer__running;

/* A cancel that waits for its node's running callback to return, on the cancelling
   thread's stack, listed in the shard's cancel_waits. `hit` is set when the pass, as the
   callback returns, cancels for it the arming the callback made. */
typedef struct hwtimer__cancel_wait {
    hwtimer_timeout *to;
    int hit;
    struct hwtimer__cancel_wait *next;
} hwtimer__cancel_wait;

/* A wheel's copy of the timer's last answer to the loop or the worker ("Waking" in THE
   DESIGN): no work before `time`, or none at all. */
typedef struct hwtimer__answer {
    uint64_t time;
    int none;  /* nothing was pending in any wheel */
    int armed; /* 1 while a filing before `time` must wake someone: a worker or a wake_fn
                  listens, and no filing has woken it since the answer was given */
} hwtimer__answer;

typedef struct hwtimer__shard {
    hwtimer__wheel wheel; /* first, so that a node's `wheel` also points to its shard */
    void *mutex;          /* the wheel's lock */
    void *done_cond;      /* cancels wait on it for a callback */
    unsigned waiters;     /* cancels listed in cancel_waits: each waits on done_cond, or is
                             about to, or tells log_fn it waits long */
    int wake_now;         /* a filing called for a wake-up, made once the lock is released */
    hwtimer__running run;
    hwtimer__cancel_wait *cancel_waits;
    hwtimer__answer answer; /* the timer's last answer, as this wheel's filings see it */
    uint64_t wake_by_clock; /* the worker sleeps until then (else UINT64_MAX) */
} hwtimer__shard;

/* The pass under way: at most one per timer. */
typedef struct hwtimer__pass_state {
    int on;
    void *thread;       /* the thread that runs it and its callbacks */
    hwtimer__u64 last_now; /* the `now` of the last advance: the timer's time (S before any) */
    uint64_t last_tick; /* last_now's tick, from which hwtimer_schedule_ticks counts */
    uint64_t ticks_room; /* the most ticks hwtimer_schedule_ticks may count ahead of
                            last_now before the deadline passes UINT64_MAX */
    int left;           /* 1 while nodes a bounded pass set aside wait in a `left` list */
    uint32_t left_gen;  /* the generation (a `where` past every slot's) of the next nodes a
                           bounded pass sets aside */
} hwtimer__pass_state;

typedef struct hwtimer__worker_state {
    int mode;     /* cfg.worker: a worker runs the passes */
    int running;  /* its thread was started (atomic: read without the lock) */
    int sleeping; /* it waits on wake_cond for its answer's time */
    int counted;  /* counted in hwtimer__live_workers */
    void *thread;
    void *wake_cond;
} hwtimer__worker_state;

/* The loop that drives a caller-driven timer. */
typedef struct hwtimer__loop_state {
    void (*wake_fn)(void *);
    void *wake_ctx;
    int none;      /* the last answer said nothing was pending */
    int left;      /* the last answer said a bounded pass left timeouts due: the loop must
                      advance again before it sleeps */
    int wake_owed; /* a wake_fn call is owed to the last answer: none was made since */
    long wakes_running;     /* wake-ups under way with no lock held: the timer is not freed
                               while one runs */
} hwtimer__loop_state;

typedef struct hwtimer__log_state {
    void (*fn)(void *, const char *);
    void *ctx;
    uint64_t slow_ns;     /* a callback that runs longer is reported; 0: never */
    uint64_t quiet_until; /* no report before this time */
} hwtimer__log_state;

struct hwtimer {
    uint64_t (*clock_fn)(void *);
    void *clock_ctx;
    uint64_t (*delay_clock)(void *); /* what a delay counts from: clock_fn + clock_lag */
    uint64_t clock_lag; /* G: how far clock_fn may lag the monotonic clock (coarse_clock) */
    uint64_t (*wait_clock)(void *); /* with coarse_clock, the monotonic clock; else NULL */
    int own_clock;   /* clock_fn is the user's, not the clock the OS waits on */
    unsigned shards; /* max(1, cfg.shards) wheels, after the struct (hwtimer__shard_at) */
    const hwtimer_threads *threads; /* NULL: no locks */
    void *mutex;     /* the timer's lock: the pass, the loop's answers, the worker */
    void *done_cond; /* advance and stop wait on it for a pass to end */
    unsigned waiters;
    size_t max_pending; /* a wheel's limit: cfg.max_pending with one wheel, else SIZE_MAX */
    /* 1 while the timer has no threads and is not stopped: the entry points may then arm a
       node in wheel 0 inline ("The fast path" in THE DESIGN). Without threads one thread
       makes every call, so it is read and written plainly; with threads it is 0 for good. */
    int arms_inline;

    long shared_limit;   /* with shards: cfg.max_pending (at most LONG_MAX), 0 if none */
    long shared_pending; /* with a shared_limit: the nodes pending in all wheels (atomic) */
    int stopped;         /* atomic: read by entries under a wheel's lock */
    int destroy_deferred; /* hwtimer_destroy was called from a callback */
    hwtimer__pass_state pass;
    hwtimer__worker_state worker;
    hwtimer__loop_state loop;
    hwtimer__log_state log;
    hwtimer_stats stats; /* wakeups, passes, fired, lateness (a wheel counts its moves) */
    void (*free_fn)(void *, void *);
    void *alloc_ctx;
    void *block;        /* what alloc_fn returned: the timer is aligned within it */
    hwtimer *fork_next; /* on hwtimer__fork_list */
};

/* The timer's block: the struct, then its shards, each starting a cache line of its own,
   so that threads working in different shards do not write to one line. */
#define HWTIMER__ROUND_LINE(n) (((n) + HWTIMER__LINE - 1) & ~(size_t)(HWTIMER__LINE - 1))
#define HWTIMER__SHARDS_AT HWTIMER__ROUND_LINE(sizeof(hwtimer))
#define HWTIMER__SHARD_STRIDE HWTIMER__ROUND_LINE(sizeof(hwtimer__shard))

static hwtimer__shard *hwtimer__shard_at(const hwtimer *t, unsigned i) {
    return (hwtimer__shard *)(void *)((char *)(uintptr_t)t + HWTIMER__SHARDS_AT +
                                      (size_t)i * HWTIMER__SHARD_STRIDE);
}

/* ====================
   [hwtimer:ticks] Ticks: deadlines to ticks and back, leeway, the slot of a tick

   Arithmetic on the geometry; its one write is a wheel's leeway memo.
   ==================== */

#if defined(HWTIMER__MULHI_HALVES)
/* The high 64 bits of a * b from 32-bit halves, for the proof's build (test/prove), whose
   reader has no __int128; test/prove checks it equal to the __int128 product. */
static uint64_t hwtimer__mulhi64(uint64_t a, uint64_t b) {
    uint64_t al = a % 4294967296u, ah = a / 4294967296u, bl = b % 4294967296u,
             bh = b / 4294967296u, lh = al * bh, mid = al * bl / 4294967296u +
             lh % 4294967296u + ah * bl;
    return ah * bh + lh / 4294967296u + mid / 4294967296u;
}
#endif

/* n / tick_ns (t below). Every filing and re-filing computes a node's tick from its
   deadline (the node has no room to keep it: "Trade-offs" in THE DESIGN), so where there is
   a 128-bit product it replaces the 64-bit division, which costs tens of cycles, by a
   multiply-high, q = floor(n * tick_inv / 2^64). Why q is floor(n / t) or one less: with
   tick_inv = floor((2^64 - 1) / t), t * tick_inv lies in [2^64 - t, 2^64), so
   n * tick_inv / 2^64 lies in (n / t - 1, n / t] for any n < 2^64. The remainder
   n - q * t then does not wrap (q * t <= n) and is below 2t: one comparison adds the one
   that may be missing. Without a 128-bit type (32-bit targets, MSVC) it divides. */
HWTIMER__ALWAYS_INLINE uint64_t hwtimer__div_tick(const hwtimer__geometry *g, uint64_t n) {
#if defined(__SIZEOF_INT128__) || defined(HWTIMER__MULHI_HALVES)
#if defined(HWTIMER__MULHI_HALVES)
    uint64_t q = hwtimer__mulhi64(n, g->tick_inv);
#else
    uint64_t q = (uint64_t)(__extension__((unsigned __int128)n * g->tick_inv) >> 64);
#endif
    return q + (n - q * g->tick_ns >= g->tick_ns);
#else
    return n / g->tick_ns;
#endif
}

/* The tick a deadline D is due at: the first boundary at or after it, e = ceil((D - S) / t)
   ("Time" in THE DESIGN), or 0 for a deadline at or before S. For m = D - S >= 1 the
   ceiling is computed as floor((m - 1) / t) + 1, which is equal and, unlike
   (m + t - 1) / t, cannot overflow when m is near UINT64_MAX. */
HWTIMER__ALWAYS_INLINE uint64_t hwtimer__due_tick(const hwtimer__geometry *g, uint64_t deadline) {
    return deadline <= g->start ? 0 : hwtimer__div_tick(g, deadline - g->start - 1) + 1;
}

/* The time of tick `tick`'s boundary, S + tick * t, or UINT64_MAX if that lies past the end
   of uint64_t time. The test is exact: tick <= floor((UINT64_MAX - S) / t) exactly when
   tick * t <= UINT64_MAX - S, so it saturates every tick that overflows and no other. */
static uint64_t hwtimer__tick_time(const hwtimer__geometry *g, uint64_t tick) {
    return tick > (UINT64_MAX - g->start) / g->tick_ns ? UINT64_MAX : g->start + tick * g->tick_ns;
}

/* A node's leeway in ns: leeway_digits * 10^leeway_exp, a form that keeps round numbers
   exact in the 3 bytes beside the state. No overflow: it is at most the leeway_ns that
   hwtimer_timeout_set_leeway was given, rounded down. */
static uint64_t hwtimer__leeway(const hwtimer_timeout *to) {
    uint64_t v = to->leeway_digits;
    unsigned e;
    for (e = 0; e < to->leeway_exp; e++) v *= 10u;
    return v;
}

/* A compile-time check (a negative array size fails it): the state, leeway_exp and
   leeway_digits form one 4-byte word right after `where`. The inline arming tests state
   and leeway with one load of that word (hwtimer__node_arms_inline) and stores `where`,
   state and leeway with one 8-byte store (hwtimer__pending_word). */
typedef char hwtimer__state_and_leeway_share_a_word
    [offsetof(hwtimer_timeout, leeway_exp) == offsetof(hwtimer_timeout, state) + 1 &&
     offsetof(hwtimer_timeout, leeway_digits) == offsetof(hwtimer_timeout, state) + 2 &&
     offsetof(hwtimer_timeout, state) == offsetof(hwtimer_timeout, where) + 4 ? 1 : -1];

/* 1 on a little-endian target, where the state, the first byte of its word in memory, is
   the word's low byte. It is known at compile time: the tests of it cost nothing. */
static int hwtimer__little_endian(void) {
    const uint32_t one = 1;
    return *(const unsigned char *)&one;
}
/* The mask of that word's leeway bytes: every bit but the state's byte. */
static uint32_t hwtimer__leeway_bits(void) {
    return hwtimer__little_endian() ? ~(uint32_t)0xFFu : ~((uint32_t)0xFFu << 24);
}

/* The 8 bytes of a node from its `where` on (`where`, then the word of state and leeway)
   as they read for a node PENDING in slot `where` with the leeway whose key is `key`
   (hwtimer__leeway_key: its state byte is 0). The inline arming stores them in one store.
   `where` comes first in memory: on a little-endian target it is the low half and the
   state the low byte of the high half; on a big-endian one, `where` is the high half and
   the state the top byte of the low half. */
static uint64_t hwtimer__pending_word(uint32_t where, uint32_t key) {
    if (hwtimer__little_endian()) { /* `where` first */
        return where | (uint64_t)(key | HWTIMER_PENDING) << 32;
    }
    return (uint64_t)where << 32 | key | (uint64_t)HWTIMER_PENDING << 24;
}

/* The 4-byte word of a node's state and leeway, read with one load. */
static uint32_t hwtimer__state_word(const hwtimer_timeout *to) {
    uint32_t word;
    memcpy(&word, (const unsigned char *)to + offsetof(hwtimer_timeout, state), sizeof word);
    return word;
}
/* The key of a node's leeway, by which the wheel's memo knows it: the word with the state
   byte cleared, so the exponent and digits. It is 0 exactly when the node has no leeway
   (set_leeway stores digits of 0 only with an exponent of 0). Callers read it before they
   store the node's state: a 4-byte load that overlaps a 1-byte store still in the store
   buffer cannot take its value from that store, and waits until the store completes. */
static uint32_t hwtimer__leeway_key(const hwtimer_timeout *to) {
    return hwtimer__state_word(to) & hwtimer__leeway_bits();
}

/* Makes the wheel's memo that of `to`'s leeway ("Leeway" in THE DESIGN): with the leeway
   n = floor(leeway / t) whole ticks, the mask 2^k - 1 of the largest power of two
   2^k <= n + 1. Out of line because it is the rare case: it runs only when a node's leeway
   is not the last one the wheel saw, and costs a division and a bit scan. */
static HWTIMER__NOINLINE void hwtimer__set_leeway_memo(hwtimer__wheel *w,
                                                       const hwtimer_timeout *to) {
    uint64_t n = hwtimer__div_tick(&w->geo, hwtimer__leeway(to));
    HWTIMER_ASSERT(n < UINT64_MAX); /* a node keeps at most 18446e15 ns: n + 1 never wraps */
    w->memo.mask = ((uint64_t)1 << hwtimer__msb64(n + 1)) - 1;
    w->memo.key = hwtimer__leeway_key(to);
}

/* The tick a node due at tick e runs at with the memo's leeway: e rounded up to a multiple
   of 2^k, (e + 2^k - 1) & ~(2^k - 1) ("Leeway" in THE DESIGN). If the rounding wraps or
   passes max_tick, the result is max_tick: the latest tick a deadline can have, which the
   levels are sized for (hwtimer__geometry_init). */
HWTIMER__ALWAYS_INLINE uint64_t hwtimer__leeway_grid(const hwtimer__wheel *w, uint64_t e) {
    uint64_t up = e + w->memo.mask;
    if (up < e || (up & ~w->memo.mask) > w->geo.max_tick) return w->geo.max_tick;
    return up & ~w->memo.mask;
}

/* The same for `to`'s own leeway: if the memo holds another, it is made `to`'s first. It
   writes the memo, so the wheel's lock is held (or there are no threads). */
HWTIMER__ALWAYS_INLINE uint64_t hwtimer__leeway_tick(hwtimer__wheel *w, const hwtimer_timeout *to,
                                                     uint64_t e) {
    if (hwtimer__leeway_key(to) != w->memo.key) hwtimer__set_leeway_memo(w, to);
    return hwtimer__leeway_grid(w, e);
}

/* The tick a node with this deadline runs at: its due tick, moved onto its leeway's grid
   if it has a leeway (a node without one, the common case, costs one test of its key). It
   is computed again at every filing and re-filing: the node has no room to keep it
   ("Trade-offs" in THE DESIGN). May write the wheel's memo: the wheel's lock is held. */
HWTIMER__ALWAYS_INLINE uint64_t hwtimer__node_tick(hwtimer__wheel *w, const hwtimer_timeout *to,
                                                   uint64_t deadline) {
    uint64_t e = hwtimer__due_tick(&w->geo, deadline);
    if (hwtimer__leeway_key(to)) return hwtimer__leeway_tick(w, to, e);
    return e;
}

/* A periodic node's next deadline, at a fixed rate: the first d + k * p, k >= 1, strictly
   after `now`. The deadlines stay on the grid of the first, however late a callback runs,
   and periods missed while the timer was late are skipped, not run in a burst. UINT64_MAX
   if that deadline lies past the end of uint64_t time. p > 0. */
static uint64_t hwtimer__next_period(uint64_t d, uint64_t p, uint64_t now) {
    uint64_t k = now >= d ? (now - d) / p + 1 : 1;
    return k > (UINT64_MAX - d) / p ? UINT64_MAX : d + k * p;
}

/* The `where` of the slot a node due at `tick` is filed in, for tick > elapsed (see THE
   DESIGN). bit is the highest bit in which tick and elapsed differ; the level is
   bit / bits, and the slot is tick's digit at that level. Its shift, level * bits, is at
   most bit <= 63, so it is defined. Above bit the two ticks agree, and at bit tick has the
   1: tick's digit there is greater than elapsed's, so the slot lies after elapsed's
   position in its level, in the current rotation. That keeps the slots at or behind the
   position empty, which hwtimer__bits_next relies on. */
HWTIMER__ALWAYS_INLINE uint32_t hwtimer__wheel_where(const hwtimer__wheel *w, uint64_t tick) {
    const hwtimer__geometry *g = &w->geo;
    unsigned bit = hwtimer__msb64(tick ^ w->elapsed);
    uint32_t slot = (uint32_t)(tick >> g->level_shift[bit]) & g->mask;
    HWTIMER_ASSERT(tick > w->elapsed && bit / g->bits < g->levels);
    return g->level_where[bit] + slot;
}

/* The first tick of slot `slot` of the level whose digit is at `shift`, in the current
   rotation: elapsed's bits above the digit, the slot as the digit, zeros below. `slot`
   lies after elapsed's position in the level (hwtimer__wheel_where). On the top level
   shift + bits may reach 64, where hwtimer__shr and _shl give 0: one rotation spans every
   tick. */
HWTIMER__ALWAYS_INLINE uint64_t hwtimer__slot_start(const hwtimer__wheel *w, unsigned shift,
                                                    uint32_t slot) {
    unsigned up = shift + w->geo.bits;
    return hwtimer__shl(hwtimer__shr(w->elapsed, up), up) | hwtimer__shl(slot, shift);
}

/* The `where` of slot `slot` of level `level`. */
static uint32_t hwtimer__slot_where(const hwtimer__geometry *g, unsigned level, uint32_t slot) {
    return HWTIMER__WHERE_WHEEL + ((uint32_t)level << g->bits) + slot;
}

/* The `where` of the first generation in a `left` list, past every slot's ("Bounded
   passes" in THE DESIGN): later generations count up from it. */
static uint32_t hwtimer__left_where(const hwtimer__geometry *g) {
    return hwtimer__slot_where(g, g->levels, 0);
}

/* b of THE DESIGN: log2 of ticks_per_wheel rounded up to a power of two, and at least 1,
   so that W >= 2. */
static unsigned hwtimer__wheel_bits(uint64_t ticks_per_wheel) {
    return ticks_per_wheel <= 2 ? 1 : hwtimer__msb64(ticks_per_wheel - 1) + 1;
}

/* Fills the geometry of a tick of tick_ns and S = start. The levels are just enough for
   every tick up to max_tick to have a digit in one: ceil((msb(max_tick) + 1) / bits) (the
   | 1 keeps msb's argument nonzero), so that (levels - 1) * bits <= msb(max_tick) < 64.
   The tables by bit cover all 64 bits. A level's bit tree is a layer of a bit per slot,
   then layers of a bit per word of the layer below, up to a layer of one word. */
static void hwtimer__geometry_init(hwtimer__geometry *g, uint64_t tick_ns,
                                   uint32_t ticks_per_wheel, uint64_t start) {
    unsigned layer;
    uint32_t words, offset = 0;
    memset(g, 0, sizeof *g);
    g->tick_ns = tick_ns;
    g->tick_inv = UINT64_MAX / tick_ns;
    g->start = start;
    g->bits = hwtimer__wheel_bits(ticks_per_wheel);
    g->width = (uint32_t)1 << g->bits;
    g->mask = g->width - 1;
    g->max_tick = hwtimer__due_tick(g, UINT64_MAX);
    g->levels = (hwtimer__msb64(g->max_tick | 1) + g->bits) / g->bits; /* ceil(tick bits / bits) */
    for (layer = 0; layer < 64; layer++) {
        unsigned level = layer / g->bits;
        g->level_where[layer] = hwtimer__slot_where(g, level, 0);
        g->level_shift[layer] = (unsigned char)(level * g->bits);
    }
    for (layer = 0, words = g->width; words > 1; layer++) { /* width >= 2: one layer at least */
        words = (words + 63) / 64;
        g->layer_words[layer] = words;
        g->layer_offset[layer] = offset;
        offset += words;
    }
    g->bit_layers = layer;
    g->level_words = offset;
}

/* ====================
   [hwtimer:wheel] The wheel: lists, the bit tree, filing, a pass's steps, walks

   Functions of a wheel, never of a timer; they run with the wheel's lock held (or with no
   threads).
   ==================== */

/* Circular doubly linked lists with a sentinel head: an empty list's head links to itself,
   so no operation tests for NULL. */
static void hwtimer__list_init(struct hwtimer__link *head) { head->next = head->prev = head; }
static int hwtimer__list_empty(const struct hwtimer__link *head) { return head->next == head; }
/* Appends n at the end of the list whose head is given (appending after a known head reads
   one pointer fewer than inserting after a node). n's two links are stored by separate
   statements, each beside the store it pairs with, rather than together: the filing is
   then a chain of independent stores, which measured faster than one combined store
   built from both. */
static void hwtimer__list_append(struct hwtimer__link *head, struct hwtimer__link *n) {
    struct hwtimer__link *last = head->prev;
    n->prev = last;
    last->next = n;
    n->next = head;
    head->prev = n;
}
/* Leaves n's own links as they were: `where` and the state say whether a node is linked. */
static int hwtimer__list_unlink(struct hwtimer__link *n) {
    struct hwtimer__link *next = n->next, *prev = n->prev;
    prev->next = next;
    next->prev = prev;
    return next == prev; /* n was alone: its list is empty now */
}
/* Moves every node of `from` to the end of `to`. */
static void hwtimer__list_splice(struct hwtimer__link *to, struct hwtimer__link *from) {
    if (hwtimer__list_empty(from)) return;
    from->next->prev = to->prev;
    to->prev->next = from->next;
    from->prev->next = to;
    to->prev = from->prev;
    hwtimer__list_init(from);
}
/* A link is its node's first field, so it converts to its node. */
static hwtimer_timeout *hwtimer__node(struct hwtimer__link *l) { return (hwtimer_timeout *)l; }

/* Level `level`'s bit tree. Layer 0 has a bit per slot, set while the slot is occupied; each
   layer above has a bit per word of the layer below, set while that word is nonzero, so a
   search passes 64 empty words with one test. */
static uint64_t *hwtimer__level_bits(const hwtimer__wheel *w, unsigned level) {
    return w->occupied + (size_t)level * w->geo.level_words;
}

/* Sets (on) or clears slot pos's bit, and the bits above it that change with it. Setting a
   bit in a word that was nonzero, or clearing one in a word that stays nonzero, leaves the
   layer above as it was, so the climb stops there, usually at layer 0. */
HWTIMER__ALWAYS_INLINE void hwtimer__bits_set(const hwtimer__geometry *g, uint64_t *bits,
                                              uint64_t pos, int on) {
    unsigned layer;
    for (layer = 0; layer < g->bit_layers; layer++, pos >>= 6) {
        uint64_t *word = &bits[g->layer_offset[layer] + (pos >> 6)];
        uint64_t was = *word, bit = (uint64_t)1 << (pos & 63);
        *word = on ? was | bit : was & ~bit;
        if (on ? was : *word) break;
    }
}

/* The first occupied slot at index `from` or after, or width if there is none (`from` may
   be width). It tests the bits from `from` on in their layer-0 word; if none is set, it
   climbs a layer to find the next nonzero word after that one, and so on, then descends
   through the lowest set bit of each word below. It does not wrap around to the slots
   before `from`: callers start one past elapsed's position in the level, and the slots at
   or behind it are empty (a filing goes after it: hwtimer__wheel_where), or start at 0. */
static uint32_t hwtimer__bits_next(const hwtimer__geometry *g, const uint64_t *bits,
                                   uint32_t from) {
    unsigned layer = 0;
    uint64_t pos = from;
    for (;;) {
        uint64_t w = pos >> 6;
        if (w < g->layer_words[layer]) {
            uint64_t word = bits[g->layer_offset[layer] + w] & (UINT64_MAX << (pos & 63));
            if (word) {
                pos = (w << 6) | hwtimer__ctz64(word);
                break;
            }
        }
        if (++layer == g->bit_layers) return g->width;
        pos = w + 1;
    }
    while (layer-- > 0) pos = (pos << 6) | hwtimer__ctz64(bits[g->layer_offset[layer] + pos]);
    return (uint32_t)pos;
}

/* The lists of the slot at `where` (hwtimer__slot_where). */
HWTIMER__ALWAYS_INLINE struct hwtimer__link *hwtimer__slot_lists(const hwtimer__wheel *w,
                                                                 uint32_t where) {
    return &w->lists[(size_t)where * HWTIMER_SLOT_LISTS];
}

/* 1 if the slot's lists from index `first` on are all empty. The tests are or-ed into one
   branch: a branch per list would mispredict as the lists in use vary from slot to slot. */
HWTIMER__ALWAYS_INLINE int hwtimer__slot_empty_from(const struct hwtimer__link *lists,
                                                    unsigned first) {
    unsigned k;
    int occupied = 0;
    for (k = first; k < HWTIMER_SLOT_LISTS; k++) occupied |= !hwtimer__list_empty(&lists[k]);
    return !occupied;
}

/* Walks visit a slot's lists in turn, a node from each end of each list at a time, so that
   the cache misses of up to 2 * HWTIMER_SLOT_LISTS chains of nodes overlap ("Each slot" in
   THE DESIGN). A visit may unlink, re-link or free the node it is given. */
typedef void (*hwtimer__visit_fn)(void *ctx, hwtimer_timeout *to);

/* One list being walked: the next nodes to visit from each end; front is NULL once done. */
typedef struct hwtimer__walk { struct hwtimer__link *front, *back; } hwtimer__walk;

/* Visits the walk's next node from each end (one node if the ends meet); returns 0 if the
   walk was already done. Both neighbours are read before the visits, because a visit may
   re-link or free its node, after which its links mean nothing; they are prefetched then,
   so that their misses overlap the visits. The walk is done when front and back were one
   node, or adjacent: every node has then been visited once. */
HWTIMER__ALWAYS_INLINE int hwtimer__walk_step(hwtimer__walk *w, hwtimer__visit_fn visit,
                                              void *ctx) {
    struct hwtimer__link *front = w->front, *back = w->back, *next, *prev;
    if (!front) return 0;
    next = front->next;
    prev = back->prev;
    HWTIMER__PREFETCH_NODE(next);
    HWTIMER__PREFETCH_NODE(prev);
    visit(ctx, hwtimer__node(front));
    if (front != back) visit(ctx, hwtimer__node(back));
    w->front = front == back || next == back ? NULL : next;
    w->back = prev;
    return 1;
}

/* Visits every node of lists[0 .. n), in turn (hwtimer__walk_step). The heads are left as
   they were, stale once a visit re-links a node: the caller empties or splices them. */
HWTIMER__ALWAYS_INLINE void hwtimer__walk_lists(struct hwtimer__link *lists, unsigned n,
                                                hwtimer__visit_fn visit, void *ctx) {
    hwtimer__walk walk[HWTIMER_SLOT_LISTS];
    unsigned k, walks = 0;
    int more;
    for (k = 0; k < n; k++) {
        if (hwtimer__list_empty(&lists[k])) continue;
        walk[walks].front = lists[k].next;
        walk[walks].back = lists[k].prev;
        walks++;
    }
    if (walks == 1) { /* one list, the usual case: a loop of its own, no turn over walks */
        hwtimer__walk one = walk[0];
        while (hwtimer__walk_step(&one, visit, ctx)) continue;
        return;
    }
    do {
        more = 0;
        for (k = 0; k < walks; k++) more |= hwtimer__walk_step(&walk[k], visit, ctx);
    } while (more);
}

/* Sets (on) or clears the occupancy bit of the slot at `where`. */
HWTIMER__ALWAYS_INLINE void hwtimer__slot_bit(hwtimer__wheel *w, uint32_t where, int on) {
    uint32_t id = where - HWTIMER__WHERE_WHEEL;
    hwtimer__bits_set(&w->geo, hwtimer__level_bits(w, id >> w->geo.bits), id & w->geo.mask, on);
}

/* Marks the slot whose first list is `head` occupied. Only the first node of an empty slot
   needs it, so it is out of line, and it comes last in a filing: the common filing keeps
   nothing alive across a call, and the rare one ends with it. */
static HWTIMER__NOINLINE void hwtimer__mark_slot(hwtimer__wheel *w, struct hwtimer__link *head) {
    hwtimer__slot_bit(w, (uint32_t)((size_t)(head - w->lists) / HWTIMER_SLOT_LISTS), 1);
}

/* Links a node into a list of the slot at `where` ("Each slot" in THE DESIGN); the caller
   stores the node's `where`. While the slot's first list is empty the node goes there, so
   a slot of one node has it in the first list, where hwtimer__wheel_collect looks for a
   lone node. Otherwise the list is chosen by the MiB of the node's address (its bits from
   HWTIMER__LIST_RUN_BITS up): nodes allocated near one another share a list, so a node's
   neighbours in its list are mostly its neighbours in memory, and a cancel's writes to
   their links mostly hit lines already cached. A slot may be occupied with its first list
   empty (its node there was cancelled): the node filed there then marks the slot again,
   which is harmless. */
#define HWTIMER__LIST_RUN_BITS 20
HWTIMER__ALWAYS_INLINE void hwtimer__slot_append(hwtimer__wheel *w, hwtimer_timeout *to,
                                                 uint32_t where) {
    struct hwtimer__link *head = hwtimer__slot_lists(w, where);
    int first = hwtimer__list_empty(head);
    if (!first) head += ((uintptr_t)to >> HWTIMER__LIST_RUN_BITS) & (HWTIMER_SLOT_LISTS - 1);
    hwtimer__list_append(head, &to->link);
    if (first) hwtimer__mark_slot(w, head);
}

/* Files a node in slot `where` and stores its `where`; its state is the caller's. */
HWTIMER__ALWAYS_INLINE void hwtimer__file_in_slot(hwtimer__wheel *w, hwtimer_timeout *to,
                                                  uint32_t where) {
    to->where = where;
    hwtimer__slot_append(w, to, where);
}

/* The tick a listed node runs at, computed from its deadline and leeway. */
HWTIMER__ALWAYS_INLINE uint64_t hwtimer__listed_tick(hwtimer__wheel *w, struct hwtimer__link *l) {
    return hwtimer__node_tick(w, hwtimer__node(l), hwtimer__node(l)->deadline);
}

/* How a filing stores a node's `where` and state. The inline arming (no threads, so no
   other thread reads the node) stores `where`, the state and the leeway's key, which share
   8 bytes, in one store; every other filing stores the state with release order, for the
   threads that read it without the lock. */
typedef enum hwtimer__place_store {
    HWTIMER__FIELD_BY_FIELD,
    HWTIMER__ONE_STORE
} hwtimer__place_store;

/* Makes a node in no list PENDING at `deadline`, in the slot of its tick e, which lies past
   notice_upto (so nothing need be noticed: see the wheel's contract in THE DESIGN). With
   HWTIMER__ONE_STORE, `key` is the node's leeway key (hwtimer__leeway_key), stored back
   unchanged. The caller counts the node in `pending`. */
HWTIMER__ALWAYS_INLINE void hwtimer__wheel_file_past(hwtimer__wheel *w, hwtimer_timeout *to,
                                                     uint64_t deadline, uint64_t e,
                                                     hwtimer__place_store how, uint32_t key) {
    uint32_t where = hwtimer__wheel_where(w, e);
    HWTIMER_ASSERT(e > w->notice_upto);
    hwtimer__store64(&to->deadline, deadline);
    if (how == HWTIMER__ONE_STORE) {
        uint64_t word = hwtimer__pending_word(where, key);
        memcpy(&to->where, &word, sizeof word);
    } else {
        hwtimer__set_state(to, HWTIMER_PENDING);
        to->where = where;
    }
    hwtimer__slot_append(w, to, where);
}

/* The same for a tick at or before notice_upto, out of line since it is the rarer case: a
   tick after due_upto still goes to its slot; one at or before it goes to `due`, after the
   last node due no later (so nodes of one tick keep their filing order), found from the
   tail, since new deadlines are mostly the latest. Returns 1 if the tick is watched, so
   that the front end may wake whoever sleeps past it. */
static HWTIMER__NOINLINE int hwtimer__file_noticed(hwtimer__wheel *w, hwtimer_timeout *to,
                                                   uint64_t deadline, uint64_t tick) {
    hwtimer__store64(&to->deadline, deadline);
    hwtimer__set_state(to, HWTIMER_PENDING);
    if (tick > w->due_upto) {
        hwtimer__file_in_slot(w, to, hwtimer__wheel_where(w, tick));
    } else {
        struct hwtimer__link *pos = w->due.prev;
        while (pos != &w->due && hwtimer__listed_tick(w, pos) > tick) pos = pos->prev;
        to->where = HWTIMER__WHERE_LIST;
        hwtimer__list_append(pos->next, &to->link); /* after pos: before its successor */
    }
    return tick <= w->watch_upto;
}

/* Files a node that is in no list, PENDING at `deadline`, by one of the two above, and
   puts its tick (with its leeway) in *tick. Returns 1 if the tick is watched (see
   hwtimer__file_noticed). The tick is computed before the state is stored, because it
   reads the leeway from the word the state is stored in (hwtimer__leeway_key). The caller
   counts the node in `pending`. */
HWTIMER__ALWAYS_INLINE int hwtimer__wheel_file(hwtimer__wheel *w, hwtimer_timeout *to,
                                               uint64_t deadline, uint64_t *tick) {
    *tick = hwtimer__node_tick(w, to, deadline);
    if (*tick <= w->notice_upto) return hwtimer__file_noticed(w, to, deadline, *tick);
    hwtimer__wheel_file_past(w, to, deadline, *tick, HWTIMER__FIELD_BY_FIELD, 0);
    return 0;
}

/* A node that was alone in its list left it. If that list was a slot's (not `due`,
   `ready` or `left`, whose `where` is WHERE_LIST or a generation past every slot's) and
   all the slot's lists are empty now, the slot's bit is cleared. Out of line because it is
   the rarer end of a cancel, whose common end is two pointer stores. */
static HWTIMER__NOINLINE void hwtimer__unmark_if_empty(hwtimer__wheel *w, uint32_t where) {
    if (where >= HWTIMER__WHERE_WHEEL && where < hwtimer__left_where(&w->geo) &&
        hwtimer__slot_empty_from(hwtimer__slot_lists(w, where), 0)) {
        hwtimer__slot_bit(w, where, 0);
    }
}

/* Takes a filed node out of its list; its slot can become empty only if the node was
   alone in its list. The node's `where` is left as it was: it is read only while the node
   is PENDING, and every filing stores it. The neighbours' lines, which the unlink writes,
   are asked for first, so that their misses overlap ("Trade-offs" in THE DESIGN). */
HWTIMER__ALWAYS_INLINE void hwtimer__wheel_unfile(hwtimer__wheel *w, hwtimer_timeout *to) {
    HWTIMER__PREFETCH_WRITE(to->link.next);
    HWTIMER__PREFETCH_WRITE(to->link.prev);
    if (hwtimer__list_unlink(&to->link)) hwtimer__unmark_if_empty(w, to->where);
}

/* Makes a node pending in w CANCELLED and uncounts it; if it is `filed`, takes it out of
   its list too. The unfiling comes last, so that its rare out-of-line end
   (hwtimer__unmark_if_empty) is the last thing done. */
HWTIMER__ALWAYS_INLINE void hwtimer__wheel_uncount(hwtimer__wheel *w, hwtimer_timeout *to,
                                                   int filed) {
    HWTIMER_ASSERT(w->pending > 0);
    hwtimer__set_state(to, HWTIMER_CANCELLED);
    w->pending--;
    if (filed) hwtimer__wheel_unfile(w, to);
}

/* Cancels `to` if it is filed and PENDING in w: 1, else 0 (nothing changed). The usual
   cancel, inline both in hwtimer_cancel without threads and under a wheel's lock. A node
   PENDING in w is filed: the one pending node held out of the lists, a periodic node whose
   callback runs, is EXPIRED. */
HWTIMER__ALWAYS_INLINE int hwtimer__wheel_cancel(hwtimer__wheel *w, hwtimer_timeout *to) {
    if (to->wheel != w || to->state != HWTIMER_PENDING) return 0;
    hwtimer__wheel_uncount(w, to, 1);
    return 1;
}

/* A push later that leaves the node where it is ("Pushing a deadline later" in THE
   DESIGN): it stores the new deadline and returns 1 if the node is PENDING in a coarse
   slot or in a numbered generation of `left` (every such `where` is at least WHERE_WHEEL +
   width), the deadline does not move earlier, and no pass is under way. The node's slot
   then starts at or before its new tick, and whatever takes it out files it by its
   deadline (hwtimer__visit_refile, hwtimer__run_left_head), so it runs neither early nor
   late. A node in level 0 must move: a level-0 slot runs its nodes without reading their
   deadlines. During a pass every move files at once, so that a tick up to the pass's
   target waits in `due` for the next pass. 0: nothing changed, the caller moves it. */
HWTIMER__ALWAYS_INLINE int hwtimer__wheel_push_later(const hwtimer__wheel *w, hwtimer_timeout *to,
                                                     uint64_t deadline) {
    int may = to->state == HWTIMER_PENDING && to->where >= HWTIMER__WHERE_WHEEL + w->geo.width &&
              deadline >= to->deadline && !w->collecting;
    if (may) hwtimer__store64(&to->deadline, deadline);
    return may;
}

/* Gives a filed PENDING node a new deadline if its new tick lies past notice_upto: stores
   the deadline, moves the node to the tick's slot if that is another, and returns the tick
   (nonzero, being past notice_upto). Returns 0 and changes nothing if the tick is at or
   before notice_upto: the caller then unfiles the node and files it again, so that the
   filing takes the noticed way (hwtimer__wheel_file). */
HWTIMER__ALWAYS_INLINE uint64_t hwtimer__wheel_move(hwtimer__wheel *w, hwtimer_timeout *to,
                                                    uint64_t deadline) {
    uint64_t tick = hwtimer__node_tick(w, to, deadline);
    uint32_t where;
    if (tick <= w->notice_upto) return 0;
    where = hwtimer__wheel_where(w, tick);
    hwtimer__store64(&to->deadline, deadline);
    if (where != to->where) {
        hwtimer__wheel_unfile(w, to);
        hwtimer__file_in_slot(w, to, where);
    }
    return tick;
}

/* Sets watch_upto, the last tick whose filing the front end must hear of, and with it
   notice_upto, the greater of watch_upto and due_upto: up to it a filing takes the noticed
   way (hwtimer__file_noticed). */
static void hwtimer__wheel_watch(hwtimer__wheel *w, uint64_t upto) {
    w->watch_upto = upto;
    w->notice_upto = upto > w->due_upto ? upto : w->due_upto;
}

/* Makes *step the slot `slot` of level `level`, which starts at `tick`; returns 1 if that
   tick is at or before `upto` (the pass's target), so that the pass takes the step. */
HWTIMER__ALWAYS_INLINE int hwtimer__slot_step(hwtimer__step *step, unsigned level,
                                              uint32_t slot, uint64_t tick, uint64_t upto) {
    step->runs_ready = 0;
    step->level = level;
    step->slot = slot;
    step->tick = tick;
    return tick <= upto;
}

/* Finds the slot THE DESIGN's advance empties next: the first occupied slot after
   elapsed's position in the lowest level that has one. That is the earliest, since a
   lower level's occupied slots all start before a higher level's. Makes *step that slot
   and returns 1 if it starts at or before `upto`; 0 if it starts later or every level is
   empty. Out of line: hwtimer__next_slot handles the usual cases without it. */
static HWTIMER__NOINLINE int hwtimer__climb_to_slot(const hwtimer__wheel *w, hwtimer__step *step,
                                                    uint64_t upto) {
    const hwtimer__geometry *g = &w->geo;
    unsigned level;
    for (level = 0; level < g->levels; level++) {
        unsigned shift = level * g->bits;
        uint32_t pos = (uint32_t)(hwtimer__shr(w->elapsed, shift) & g->mask);
        uint32_t slot = hwtimer__bits_next(g, hwtimer__level_bits(w, level), pos + 1);
        if (slot < g->width) {
            return hwtimer__slot_step(step, level, slot, hwtimer__slot_start(w, shift, slot), upto);
        }
    }
    return 0;
}

/* The same, with a pass's usual cases inline. `word` is the layer-0 word of level 0's bits
   that holds the slot after elapsed's position, with the bits before that slot cleared
   (level 0's tree is first in `occupied`, and its layer 0 first in the tree); it reads as
   empty if elapsed is at the rotation's last slot. If it has a bit, that slot is the next:
   level 0 comes first. If it has none and `upto` lies in the current rotation no further
   than the word's last slot (the idle tick of a loop that advances often), no slot starts
   by `upto`: the slots up to it are in this empty word, and every occupied slot of a
   higher level starts after the rotation. Else the bit trees are climbed. */
HWTIMER__ALWAYS_INLINE int hwtimer__next_slot(const hwtimer__wheel *w, hwtimer__step *step,
                                              uint64_t upto) {
    uint32_t from = ((uint32_t)w->elapsed & w->geo.mask) + 1, slot;
    uint64_t word = from < w->geo.width ? w->occupied[from >> 6] & (UINT64_MAX << (from & 63)) : 0;
    if (!word) {
        if ((upto >> w->geo.bits) == (w->elapsed >> w->geo.bits) &&
            (upto & w->geo.mask) <= (from | 63u)) {
            return 0;
        }
        return hwtimer__climb_to_slot(w, step, upto);
    }
    slot = (from & ~63u) | hwtimer__ctz64(word);
    return hwtimer__slot_step(step, 0, slot, (w->elapsed & ~(uint64_t)w->geo.mask) | slot, upto);
}

/* Puts in *tick the tick of the wheel's next work and returns 1, or returns 0 if there is
   none: elapsed if nodes wait in `ready` or `left` (they are due), else the tick of the
   first node of `due` (sorted, and filed up to due_upto, which is elapsed between passes),
   else the start of the next occupied slot. That slot may be a coarse one whose nodes only
   move down, so the tick may be early, never late: a pass then moves them and runs
   nothing. */
static int hwtimer__wheel_next_tick(hwtimer__wheel *w, uint64_t *tick) {
    hwtimer__step step;
    if (!hwtimer__list_empty(&w->ready) || !hwtimer__list_empty(&w->left)) *tick = w->elapsed;
    else if (!hwtimer__list_empty(&w->due)) *tick = hwtimer__listed_tick(w, w->due.next);
    else if (hwtimer__next_slot(w, &step, UINT64_MAX)) *tick = step.tick;
    else return 0;
    return 1;
}

/* A pass to tick `target` begins. due_upto becomes the target, and notice_upto with it, so
   that a filing during the pass at a tick up to the target waits in `due` for the next
   pass (the pass may already be past its slot). The nodes that were in `due` move to
   `ready`, to run first. */
static void hwtimer__wheel_begin(hwtimer__wheel *w, uint64_t target) {
    w->collecting = 1;
    w->due_upto = target;
    hwtimer__wheel_watch(w, w->watch_upto);
    hwtimer__list_splice(&w->ready, &w->due);
}

/* Finds the pass's next step here and returns 1: the ready nodes if there are any (due at
   or before elapsed, so before any slot), else the next occupied slot that starts at or
   before the target. 0 if there is none. */
HWTIMER__ALWAYS_INLINE int hwtimer__wheel_next_step(hwtimer__wheel *w, hwtimer__step *step) {
    if (!hwtimer__list_empty(&w->ready)) {
        step->runs_ready = 1;
        step->tick = hwtimer__listed_tick(w, w->ready.next);
        return 1;
    }
    return hwtimer__next_slot(w, step, w->due_upto);
}

/* The pass ends here. If it reached its target (`reached`), elapsed moves to the target:
   every slot up to it has been emptied. If a stop or destroy cut the pass short, elapsed
   stays at the last slot emptied, since slots before the target may still hold nodes. */
static void hwtimer__wheel_end(hwtimer__wheel *w, int reached) {
    if (reached) w->elapsed = w->due_upto;
    w->collecting = 0;
}

/* What the visits of a slot being emptied need: the wheel, and how many ticks the slot
   spans (for a coarse one, to tell a re-filing from a move down). */
typedef struct hwtimer__collect { hwtimer__wheel *w; uint64_t span; } hwtimer__collect;

/* Visits a node of a level-0 slot: it goes to `ready` without its tick being computed,
   since it is due at the slot's tick (no node waits in level 0 pushed later:
   hwtimer__wheel_push_later). Also the due case of hwtimer__visit_refile. */
static void hwtimer__visit_to_ready(void *ctx, hwtimer_timeout *to) {
    to->where = HWTIMER__WHERE_LIST;
    hwtimer__list_append(&((hwtimer__collect *)ctx)->w->ready, &to->link);
}

/* Visits a node of a coarse slot, elapsed now at the slot's start: if its tick is at or
   before elapsed it goes to `ready`; else it is filed by its tick, in a lower level, or
   past this slot if a push later took its tick there. It counts as a move down, and as a
   re-filing if its tick lies past the slot's end. */
HWTIMER__ALWAYS_INLINE void hwtimer__visit_refile(void *ctx, hwtimer_timeout *to) {
    hwtimer__collect *c = (hwtimer__collect *)ctx;
    hwtimer__wheel *w = c->w;
    uint64_t tick = hwtimer__node_tick(w, to, to->deadline);
    if (tick <= w->elapsed) {
        hwtimer__visit_to_ready(ctx, to);
        return;
    }
    if (tick - w->elapsed >= c->span) w->refiled++;
    hwtimer__file_in_slot(w, to, hwtimer__wheel_where(w, tick));
    w->cascaded++;
}

/* Takes a slot step: elapsed moves to the slot's start, and each of the slot's nodes goes
   to `ready` or, from a coarse slot, to a lower level or a later slot. None goes back to
   this slot, which now starts at elapsed, where no filing goes: the walk never meets a
   node it re-filed. Then the slot's lists are emptied and its bit cleared. The walk covers
   only the first list if the others are empty. A level-0 slot's only node is returned
   instead, in no list, to run at once without a trip through `ready`; else NULL. */
HWTIMER__ALWAYS_INLINE hwtimer_timeout *hwtimer__wheel_collect(hwtimer__wheel *w,
                                                               const hwtimer__step *step) {
    const hwtimer__geometry *g = &w->geo;
    struct hwtimer__link *lists =
        hwtimer__slot_lists(w, hwtimer__slot_where(g, step->level, step->slot));
    hwtimer__collect c;
    hwtimer_timeout *alone = NULL;
    unsigned k, used;
    w->elapsed = step->tick;
    HWTIMER_ASSERT(!hwtimer__slot_empty_from(lists, 0));
    c.w = w;
    used = hwtimer__slot_empty_from(lists, 1) ? 1 : HWTIMER_SLOT_LISTS;
    if (step->level > 0) {
        c.span = (uint64_t)1 << (step->level * g->bits); /* level * bits <= msb(max_tick) */
        hwtimer__walk_lists(lists, used, hwtimer__visit_refile, &c);
    } else if (used == 1 && lists[0].next == lists[0].prev) {
        alone = hwtimer__node(lists[0].next);
    } else {
        hwtimer__walk_lists(lists, used, hwtimer__visit_to_ready, &c);
    }
    for (k = 0; k < used; k++) hwtimer__list_init(&lists[k]);
    hwtimer__bits_set(g, hwtimer__level_bits(w, step->level), step->slot, 0);
    return alone;
}

/* Takes the first node of `ready` or `left` (not empty) out of its list, and returns it.
   Its `where` is left as it was: the node is about to run, or to be filed again. */
static hwtimer_timeout *hwtimer__wheel_take(hwtimer__wheel *w, struct hwtimer__link *list) {
    hwtimer_timeout *to = hwtimer__node(list->next);
    HWTIMER_ASSERT(to->wheel == w && to->state == HWTIMER_PENDING &&
                   (to->where == HWTIMER__WHERE_LIST ||
                    (list == &w->left && to->where >= hwtimer__left_where(&w->geo))));
    hwtimer__list_unlink(&to->link);
    (void)w;
    return to;
}
static hwtimer_timeout *hwtimer__wheel_take_ready(hwtimer__wheel *w) {
    return hwtimer__wheel_take(w, &w->ready);
}

/* The generation of a node in `left`: its `where`, or the wheel's last (left_gen) if its
   `where` is still WHERE_LIST. */
static uint32_t hwtimer__left_gen_of(const hwtimer__wheel *w, const hwtimer_timeout *to) {
    return to->where == HWTIMER__WHERE_LIST ? w->left_gen : to->where;
}

/* A bounded pass stops here ("Bounded passes" in THE DESIGN): what it would still run, up
   to its target, goes to `left` in the order it would run (the ready nodes, then each
   slot's, as the steps would empty them) as generation `gen`, and the pass ends at its
   target. Before the new generation is appended, the nodes of the wheel's last one (still
   WHERE_LIST) get its number in `where`; only then, so that a pass that sets nothing aside
   walks none of them. */
static HWTIMER__NOINLINE void hwtimer__wheel_set_aside(hwtimer__wheel *w, uint32_t gen) {
    hwtimer__step step;
    struct hwtimer__link *l;
    if (hwtimer__list_empty(&w->ready) && !hwtimer__next_slot(w, &step, w->due_upto)) {
        hwtimer__wheel_end(w, 1);
        return;
    }
    for (l = w->left.prev; l != &w->left && hwtimer__node(l)->where == HWTIMER__WHERE_LIST;
         l = l->prev) {
        hwtimer__node(l)->where = w->left_gen;
    }
    w->left_gen = gen;
    hwtimer__list_splice(&w->left, &w->ready);
    while (hwtimer__next_slot(w, &step, w->due_upto)) {
        hwtimer_timeout *alone = hwtimer__wheel_collect(w, &step);
        if (alone) { /* in no list: after the rest, as it would have run */
            alone->where = HWTIMER__WHERE_LIST;
            hwtimer__list_append(&w->left, &alone->link);
        }
        hwtimer__list_splice(&w->left, &w->ready);
    }
    hwtimer__wheel_end(w, 1);
}

/* The number of list heads a wheel needs (HWTIMER_SLOT_LISTS per `where` up to the last
   slot's, those of NONE and LIST included), and of words in its bit trees: the sizes
   hwtimer_create allocates. */
static uint64_t hwtimer__wheel_heads(const hwtimer__geometry *g) {
    return ((uint64_t)g->levels * g->width + HWTIMER__WHERE_WHEEL) * HWTIMER_SLOT_LISTS;
}
static uint64_t hwtimer__wheel_words(const hwtimer__geometry *g) {
    return (uint64_t)g->levels * g->level_words;
}

/* A walk over every node of a wheel (hwtimer__wheel_walk). Without `out`, each node is
   handed to fn (hwtimer_foreach). With `out` (stop), each is made CANCELLED and the lists
   are moved onto out's HWTIMER_SLOT_LISTS lists, a slot's list k onto out[k] and `due`,
   `ready` and `left` onto out[0], to be handed back once no lock is held. `visited` counts
   the nodes. */
typedef struct hwtimer__nodes_walk {
    hwtimer_fn fn;
    void *ctx;
    size_t visited;
    struct hwtimer__link *out;
} hwtimer__nodes_walk;

static void hwtimer__visit_node(void *ctx, hwtimer_timeout *to) {
    hwtimer__nodes_walk *walk = (hwtimer__nodes_walk *)ctx;
    if (walk->out) hwtimer__set_state(to, HWTIMER_CANCELLED);
    else walk->fn(to, walk->ctx);
    walk->visited++;
}

/* Walks every filed node: `due`, `ready`, `left`, then each occupied slot. A list is
   spliced into `out` only after its walk, which reads its links. */
static void hwtimer__wheel_walk(hwtimer__wheel *w, hwtimer__nodes_walk *walk) {
    const hwtimer__geometry *g = &w->geo;
    struct hwtimer__link *out = walk->out;
    unsigned l, k;
    hwtimer__walk_lists(&w->due, 1, hwtimer__visit_node, walk);
    hwtimer__walk_lists(&w->ready, 1, hwtimer__visit_node, walk);
    hwtimer__walk_lists(&w->left, 1, hwtimer__visit_node, walk);
    if (out) hwtimer__list_splice(out, &w->due);
    if (out) hwtimer__list_splice(out, &w->ready);
    if (out) hwtimer__list_splice(out, &w->left);
    for (l = 0; l < g->levels; l++) {
        const uint64_t *bits = hwtimer__level_bits(w, l);
        uint32_t slot;
        for (slot = hwtimer__bits_next(g, bits, 0); slot < g->width;
             slot = hwtimer__bits_next(g, bits, slot + 1)) {
            struct hwtimer__link *lists =
                hwtimer__slot_lists(w, hwtimer__slot_where(g, l, slot));
            hwtimer__walk_lists(lists, HWTIMER_SLOT_LISTS, hwtimer__visit_node, walk);
            for (k = 0; out && k < HWTIMER_SLOT_LISTS; k++)
                hwtimer__list_splice(&out[k], &lists[k]);
        }
    }
}

/* Cancels every node of the wheel into `out` and returns how many. No pass is under way and
   no pending node is held out of the lists: every pending node is filed, as the count
   asserts. The slots are all empty then, so the bit trees are cleared at once. */
static size_t hwtimer__wheel_cancel_all(hwtimer__wheel *w, struct hwtimer__link *out) {
    hwtimer__nodes_walk walk = {NULL, NULL, 0, out};
    hwtimer__wheel_walk(w, &walk);
    memset(w->occupied, 0, (size_t)hwtimer__wheel_words(&w->geo) * sizeof(uint64_t));
    HWTIMER_ASSERT(walk.visited == w->pending);
    w->pending = 0;
    return walk.visited;
}

static void hwtimer__init_out(struct hwtimer__link *out) {
    unsigned k;
    for (k = 0; k < HWTIMER_SLOT_LISTS; k++) hwtimer__list_init(&out[k]);
}

/* Hands each node of `out` to fn (hwtimer_stop). */
static void hwtimer__hand_back(struct hwtimer__link *out, hwtimer_fn fn, void *ctx) {
    hwtimer__nodes_walk walk = {fn, ctx, 0, NULL};
    if (fn) hwtimer__walk_lists(out, HWTIMER_SLOT_LISTS, hwtimer__visit_node, &walk);
}

/* An empty wheel on `lists` (hwtimer__wheel_heads of them) and `occupied`
   (hwtimer__wheel_words). The heads of NONE and LIST are never used and left as they are. */
static void hwtimer__wheel_init(hwtimer__wheel *w, const hwtimer__geometry *g,
                                struct hwtimer__link *lists, uint64_t *occupied) {
    size_t i, heads = (size_t)hwtimer__wheel_heads(g);
    memset(w, 0, sizeof *w);
    w->geo = *g;
    w->lists = lists;
    w->occupied = occupied;
    for (i = HWTIMER__WHERE_WHEEL * HWTIMER_SLOT_LISTS; i < heads; i++) {
        hwtimer__list_init(&lists[i]);
    }
    memset(occupied, 0, (size_t)hwtimer__wheel_words(g) * sizeof(uint64_t));
    hwtimer__list_init(&w->due);
    hwtimer__list_init(&w->ready);
    hwtimer__list_init(&w->left);
}

/* ====================
   [hwtimer:check] The invariant check: a wheel against hwtimer_check's codes

   Run on each wheel, its lock held; it changes nothing but the leeway memo.
   ==================== */

/* 0 if a node due at `tick` may wait in the slot at `slot_where`, else 1. It may if that is
   its tick's slot, or a coarse slot that starts at or before its tick, where a push later
   leaves it. A tick at or before elapsed may wait in no slot: it would be behind every
   step. */
static int hwtimer__check_slot(const hwtimer__wheel *w, uint32_t slot_where, uint64_t tick) {
    const hwtimer__geometry *g = &w->geo;
    uint32_t id = slot_where - HWTIMER__WHERE_WHEEL;
    if (tick <= w->elapsed) return 1;
    if (hwtimer__wheel_where(w, tick) == slot_where) return 0;
    return id < g->width || hwtimer__slot_start(w, (id >> g->bits) * g->bits, id & g->mask) > tick;
}

/* 1 if a node's `where` is right for the list at `head`. Outside `left` it must be
   `slot_where`: the slot's `where`, or WHERE_LIST for `due` and `ready`. In `left` the
   generations run in order: a node has WHERE_LIST (the wheel's last generation, so every
   node after it has WHERE_LIST too), or a generation below the wheel's last, no smaller
   than the node's before it, which must not be WHERE_LIST. */
static int hwtimer__check_where(const hwtimer__wheel *w, const struct hwtimer__link *head,
                                uint32_t slot_where, const hwtimer_timeout *to) {
    const struct hwtimer__link *prev = to->link.prev;
    uint32_t before;
    if (head != &w->left) return to->where == slot_where;
    if (to->where == HWTIMER__WHERE_LIST) return 1; /* the last generation, then only it */
    /* (a NULL link is hwtimer__check_list's to report: this test must not follow it) */
    before = prev == head || !prev ? 0 : ((const hwtimer_timeout *)(const void *)prev)->where;
    return to->where >= hwtimer__left_where(&w->geo) && before != HWTIMER__WHERE_LIST &&
           to->where >= before && to->where < w->left_gen;
}

/* Checks one list: each node PENDING in w with a `where` right for the list (else
   HWTIMER_CHECK_NODE), links that agree and no more nodes than w->pending, so that a list
   corrupted into a cycle ends the walk (LINKS), a slot's nodes allowed in it (SLOT), `due`
   sorted by tick (ORDER). Adds the nodes to *n; returns 0 or the first failure's code.
   `slot_where`: the slot's `where`, or WHERE_LIST. */
static int hwtimer__check_list(hwtimer__wheel *w, const struct hwtimer__link *head,
                               uint32_t slot_where, size_t *n) {
    const struct hwtimer__link *l;
    uint64_t last_tick = 0;
    size_t steps = 0;
    for (l = head->next; l != head; l = l->next) {
        const hwtimer_timeout *to = (const hwtimer_timeout *)(const void *)l;
        uint64_t tick;
        /* the node first: one made anew by hwtimer_timeout_init while filed (a common
           mistake) has NULL links, which the link test would follow */
        if (to->wheel != w || to->state != HWTIMER_PENDING ||
            !hwtimer__check_where(w, head, slot_where, to)) {
            return HWTIMER_CHECK_NODE;
        }
        if (!l->prev || !l->next || l->prev->next != l || l->next->prev != l ||
            ++steps > w->pending) {
            return HWTIMER_CHECK_LINKS;
        }
        tick = hwtimer__node_tick(w, to, to->deadline);
        if (slot_where >= HWTIMER__WHERE_WHEEL && hwtimer__check_slot(w, slot_where, tick)) {
            return HWTIMER_CHECK_SLOT;
        }
        if (head == &w->due && tick < last_tick) return HWTIMER_CHECK_ORDER;
        last_tick = tick;
    }
    *n += steps;
    return 0;
}

/* Checks level l: each bit of an upper layer set exactly when its word below is nonzero
   (BITMAP), no occupied slot at or behind elapsed's position (BEHIND), a node in each
   marked slot (BITMAP), and each marked slot's lists. Only marked slots are walked, so a
   slot with nodes but no bit fails the count in hwtimer__wheel_check. */
static int hwtimer__check_level(hwtimer__wheel *w, unsigned l, size_t *n) {
    const hwtimer__geometry *g = &w->geo;
    const uint64_t *bits = hwtimer__level_bits(w, l);
    uint32_t pos = (uint32_t)(hwtimer__shr(w->elapsed, l * g->bits) & g->mask), slot, word;
    unsigned layer, k;
    for (layer = 0; layer + 1 < g->bit_layers; layer++) {
        for (word = 0; word < g->layer_words[layer]; word++) {
            int nonzero = bits[g->layer_offset[layer] + word] != 0;
            uint64_t up = bits[g->layer_offset[layer + 1] + (word >> 6)];
            if (nonzero != (int)((up >> (word & 63)) & 1u)) return HWTIMER_CHECK_BITMAP;
        }
    }
    slot = hwtimer__bits_next(g, bits, 0);
    if (slot <= pos) return HWTIMER_CHECK_BEHIND;
    for (; slot < g->width; slot = hwtimer__bits_next(g, bits, slot + 1)) {
        uint32_t where = hwtimer__slot_where(g, l, slot);
        const struct hwtimer__link *lists = hwtimer__slot_lists(w, where);
        if (hwtimer__slot_empty_from(lists, 0)) return HWTIMER_CHECK_BITMAP;
        for (k = 0; k < HWTIMER_SLOT_LISTS; k++) {
            int err = hwtimer__check_list(w, &lists[k], where, n);
            if (err) return err;
        }
    }
    return 0;
}

/* Checks every invariant of one wheel (its lock held): 0, or the first failure's code (one
   of hwtimer_check's). n: its pending nodes held out of the lists (a periodic node whose
   callback runs), which the count includes. */
static int hwtimer__wheel_check(hwtimer__wheel *w, size_t n) {
    unsigned l;
    int err = hwtimer__check_list(w, &w->due, HWTIMER__WHERE_LIST, &n);
    if (!err) err = hwtimer__check_list(w, &w->ready, HWTIMER__WHERE_LIST, &n);
    if (!err) err = hwtimer__check_list(w, &w->left, HWTIMER__WHERE_LIST, &n);
    for (l = 0; !err && l < w->geo.levels; l++) err = hwtimer__check_level(w, l, &n);
    if (!err && n != w->pending) err = HWTIMER_CHECK_COUNT;
    if (!err && (w->notice_upto < w->due_upto || w->notice_upto < w->watch_upto)) {
        err = HWTIMER_CHECK_NEAR;
    }
    return err;
}

/* ====================
   [hwtimer:locking] Locking, and which wheel a node is in

   The lock order and who takes which lock: "Locks" in THE DESIGN. Without threads
   (t->threads NULL) the lock functions do nothing. Which wheel a node is in is asked both
   under that wheel's lock and without it ("Reads without a lock" in THE DESIGN): an
   answer read without it only tells the caller which lock to take and ask again under.
   ==================== */

HWTIMER__ALWAYS_INLINE void hwtimer__lock(const hwtimer *t, void *mutex) {
    if (t->threads) t->threads->mutex_lock(mutex);
}
HWTIMER__ALWAYS_INLINE void hwtimer__unlock(const hwtimer *t, void *mutex) {
    if (t->threads) t->threads->mutex_unlock(mutex);
}

/* Takes a wheel's lock, for a thread that holds the timer's (the lock order). With one
   wheel, the wheel's lock is the timer's itself (hwtimer__carve points s->mutex at it),
   which the caller already holds: there is nothing to take, nor to release in
   hwtimer__unlock_wheel. */
static void hwtimer__lock_wheel(const hwtimer *t, hwtimer__shard *s) {
    if (s->mutex != t->mutex) hwtimer__lock(t, s->mutex);
}
static void hwtimer__unlock_wheel(const hwtimer *t, hwtimer__shard *s) {
    if (s->mutex != t->mutex) hwtimer__unlock(t, s->mutex);
}
/* Every wheel's lock, in index order (the lock order), the timer's held; released in
   reverse. */
static void hwtimer__lock_wheels(const hwtimer *t) {
    unsigned i;
    for (i = 0; i < t->shards; i++) hwtimer__lock_wheel(t, hwtimer__shard_at(t, i));
}
static void hwtimer__unlock_wheels(const hwtimer *t) {
    unsigned i = t->shards;
    while (i > 0) hwtimer__unlock_wheel(t, hwtimer__shard_at(t, --i));
}

/* The timer's lock and every wheel's: one moment of the whole timer. */
static void hwtimer__lock_all(const hwtimer *t) {
    hwtimer__lock(t, t->mutex);
    hwtimer__lock_wheels(t);
}
static void hwtimer__unlock_all(const hwtimer *t) {
    hwtimer__unlock_wheels(t);
    hwtimer__unlock(t, t->mutex);
}

/* Waits on `cond`, `mutex` held, until another thread signals it; the caller tests its
   condition again in a loop. hwtimer_advance_max and hwtimer__stop wait so for a pass
   under way to end (t->done_cond). `waiters` counts the threads waiting, so that
   hwtimer__signal broadcasts only when one does: passes end and callbacks return far more
   often than anyone waits for them. A cancel waits for a callback in
   hwtimer__wait_for_callback instead, which may wake to tell log_fn. */
static void hwtimer__wait(const hwtimer *t, void *cond, void *mutex, unsigned *waiters) {
    ++*waiters;
    t->threads->cond_wait(cond, mutex, UINT64_MAX);
    --*waiters;
}
static void hwtimer__signal(const hwtimer *t, void *cond, unsigned waiters) {
    if (waiters) t->threads->cond_broadcast(cond);
}

/* Is the caller inside a callback of t's pass under way (t's lock held)? With threads:
   is it the thread that runs the pass, which calls into t only from its callbacks? Without
   threads every call made during a pass comes from one of its callbacks. hwtimer__stop
   refuses such a call, hwtimer__destroy defers its freeing, hwtimer_advance_max runs no
   pass. */
static int hwtimer__in_own_callback(const hwtimer *t) {
    return t->pass.on && (!t->threads || t->threads->thread_is_self(t->pass.thread));
}

/* Retired (hwtimer_retire): a state only hwtimer_timeout_init leaves, so a thread that reads
   it without the lock may act on it (see "Reads without a lock" in THE DESIGN). */
static int hwtimer__is_retired(const hwtimer_timeout *to) {
    return hwtimer__load_u8(&to->state) == HWTIMER_RETIRED;
}

/* Is `to` armed in the wheel it names: PENDING, or EXPIRED with a period (a periodic node
   stays armed, in no list, while its callback runs)? Read without the lock ("Reads without
   a lock" in THE DESIGN): a caller that acts on the answer asks again under it. */
static int hwtimer__is_armed(const hwtimer_timeout *to) {
    int state = hwtimer__load_u8(&to->state);
    return state == HWTIMER_PENDING || (state == HWTIMER_EXPIRED && hwtimer__load64(&to->period));
}

/* Is `to` pending in wheel w, as hwtimer_is_pending answers (w's lock held)? */
HWTIMER__ALWAYS_INLINE int hwtimer__is_pending_in(const hwtimer__wheel *w,
                                                  const hwtimer_timeout *to) {
    return to->wheel == w && hwtimer__is_armed(to);
}
/* Is `to` armed in a wheel other than w (w's lock held)? A node keeps the wheel of t that
   first armed it (hwtimer__shard_to_arm), so for the shard found for it this means that it
   is armed on another timer now: hwtimer__cancel_general's HWTIMER_EINVAL. */
HWTIMER__ALWAYS_INLINE int hwtimer__is_pending_elsewhere(const hwtimer__wheel *w,
                                                         const hwtimer_timeout *to) {
    return to->wheel != w && hwtimer__is_armed(to);
}

/* The shard of t whose wheel is w, or NULL when w is no wheel of t (another timer's, or
   NULL). A wheel is the first member of its shard, and the shards lie at a fixed stride
   after the timer, so the test is a subtraction and a comparison: an address before
   shard 0 wraps around to a large offset and fails it too. */
static hwtimer__shard *hwtimer__shard_named(const hwtimer *t, const hwtimer__wheel *w) {
    uintptr_t at = (uintptr_t)w - (uintptr_t)(void *)hwtimer__shard_at(t, 0);
    if (at >= (uintptr_t)t->shards * HWTIMER__SHARD_STRIDE) return NULL;
    return hwtimer__shard_at(t, (unsigned)(at / HWTIMER__SHARD_STRIDE));
}

/* The shard of t that holds `to` or held it last; NULL if `to` names no wheel of t.
   `wheel` is read without a lock ("Reads without a lock" in THE DESIGN): the caller takes
   the shard's lock and asks again under it (hwtimer__is_pending_in, _elsewhere). */
static hwtimer__shard *hwtimer__shard_of(const hwtimer *t, const hwtimer_timeout *to) {
    return hwtimer__shard_named(t, hwtimer__load_wheel(&to->wheel));
}

/* Threads are numbered as they first arm a node on a timer with shards, across all such
   timers: thread k claims the nodes it is the first to arm on a timer of n shards for wheel
   k mod n (THREADS: shards), so that threads that arm at once mostly take different
   locks. */
static long hwtimer__threads_seen;
static HWTIMER__THREAD_LOCAL unsigned hwtimer__thread_number; /* 0: not numbered yet */

/* The shard whose lock an arming or a retire of `to` takes. A node that names a wheel of
   t stays in it. Otherwise the calling thread's wheel claims it with a compare-and-swap on
   `wheel`: two threads that arm the same unclaimed node at once must agree on one wheel,
   or each would arm it under a different lock; the thread that loses reads the winner's
   wheel on its next round. A node armed on another timer gets shard 0, under whose lock
   the arming refuses it (HWTIMER_EBUSY) and the retire too (HWTIMER_EINVAL). With one
   wheel there is nothing to choose. */
static hwtimer__shard *hwtimer__shard_to_arm(const hwtimer *t, hwtimer_timeout *to) {
    hwtimer__shard *mine;
    if (t->shards == 1) return hwtimer__shard_at(t, 0);
    if (!hwtimer__thread_number) {
        hwtimer__thread_number = (unsigned)HWTIMER__ATOMIC_ADD(&hwtimer__threads_seen, 1);
    }
    mine = hwtimer__shard_at(t, hwtimer__thread_number % t->shards);
    for (;;) {
        struct hwtimer__wheel *named = hwtimer__load_wheel(&to->wheel);
        hwtimer__shard *s = hwtimer__shard_named(t, named);
        if (s) return s;
        if (hwtimer__is_armed(to)) return hwtimer__shard_at(t, 0);
        if (HWTIMER__CAS_PTR(&to->wheel, named, &mine->wheel)) return mine;
    }
}

/* The timer whose hwtimer_foreach visitor this thread is running, or NULL. foreach holds
   every lock of that timer while the visitor runs, and the visitor may call
   hwtimer_is_pending and hwtimer_timeout_due_in on it: the locks are not recursive, so
   taking one again would deadlock. */
static HWTIMER__THREAD_LOCAL const hwtimer *hwtimer__visiting;

/* Takes s's lock unless this thread runs t's foreach visitor and so holds it already:
   1 if it took it (the caller then releases it). Without thread-locals there are no
   threads (hwtimer_create refuses them), and taking a lock does nothing. */
static int hwtimer__lock_unless_visiting(const hwtimer *t, hwtimer__shard *s) {
    if (HWTIMER__HAVE_THREAD_LOCAL && hwtimer__visiting == t) return 0;
    hwtimer__lock(t, s->mutex);
    return 1;
}

/* ====================
   [hwtimer:loop] The front end, 1: the loop's answers and wake_fn

   What the loop or the worker was last told, and how a filing before it wakes them:
   "Waking" in THE DESIGN; the rule the loop sees: "Waking the loop" at
   hwtimer_next_expiry. The timer's lock guards the answer (t->loop, t->worker); each
   wheel's lock guards the wheel's copy of it (s->answer, s->wake_by_clock), so that a
   filing compares itself with the answer under its own wheel's lock alone.
   ==================== */

/* The last tick whose filing in s the wheel must report: the watch_upto that
   hwtimer__wheel_watch is given (s's lock held). 0 once the answer is spent, or when
   nobody listens; every tick when the answer was "nothing pending"; else up to the
   answer's own tick. That bound includes the answer's tick, whose filing does not come
   before the answer: the wheel's test stays one comparison of ticks, and
   hwtimer__note_filing, which hears of the filing, compares times and lets it go. */
static uint64_t hwtimer__wake_upto(const hwtimer__shard *s) {
    if (!s->answer.armed) return 0;
    return s->answer.none ? UINT64_MAX : hwtimer__due_tick(&s->wheel.geo, s->answer.time);
}

/* Wakes whoever the last answer left waiting (no lock held on entry): a sleeping worker,
   or the loop through wake_fn. Each wheel spends its copy of the answer apart, so the
   decision is taken again under the timer's lock: the worker is broadcast to only while
   it sleeps, and marked awake so that other wake-ups of the same sleep do not broadcast
   again; wake_fn is called at most once per answer (wake_owed), and never during a pass,
   after which the loop asks for a new answer anyway. wake_fn is called after the lock is
   released, since it may call the timer's functions.
   `counted`: the caller counted this wake-up in wakes_running before it released the
   wheel's lock (hwtimer__unlock_and_wake). Another thread may destroy the timer before
   this function takes the timer's lock, and hwtimer__finish_destroy frees it only once
   wakes_running is 0. So the decrement is the last access to t: fn and ctx are copies. */
static void hwtimer__wake(hwtimer *t, int counted) {
    void (*fn)(void *) = NULL;
    void *ctx = NULL;
    hwtimer__lock(t, t->mutex);
    if (t->worker.mode && t->worker.sleeping) {
        t->threads->cond_broadcast(t->worker.wake_cond);
        t->worker.sleeping = 0; /* no more broadcasts until it sleeps again */
    } else if (!t->worker.mode && t->loop.wake_owed && !t->pass.on) {
        t->loop.wake_owed = 0;
        fn = t->loop.wake_fn;
        ctx = t->loop.wake_ctx;
    }
    hwtimer__unlock(t, t->mutex);
    if (counted) HWTIMER__ATOMIC_ADD_SYNC(&t->loop.wakes_running, -1); /* the last touch */
    if (fn) fn(ctx);
}

/* Has the timer's clock, read as `now` (0: not read), passed the time the worker is to
   wake at (s's lock held)? The worker measures its sleep on the monotonic clock, but the
   timer's clock may be the user's and count time the monotonic one does not (a suspend:
   CLOCKS). An arming that reads the timer's clock past wake_by_clock knows that the worker
   oversleeps, whatever tick it files, and hwtimer__note_filing wakes it. wake_by_clock is
   UINT64_MAX unless a worker sleeps on the answer. */
HWTIMER__ALWAYS_INLINE int hwtimer__clock_past(const hwtimer__shard *s, uint64_t now) {
    return now && s->wake_by_clock != UINT64_MAX && now >= s->wake_by_clock;
}

/* A node was filed in s at `tick` (s's lock held) by an arming that read the clock as
   `now` (0: not read). The filing spends the answer if the answer is armed (someone
   listens and no filing has spent it yet), no pass is collecting the wheel, and the filing
   comes before the answer: its tick's boundary is earlier, or the answer was "nothing
   pending", or the timer's clock has passed the worker's wake-up (hwtimer__clock_past). A
   filing during a pass calls for nothing: the worker asks for a new answer after each
   pass, the loop after hwtimer_advance returns.
   Spending the answer disarms this wheel's copy and ends the wheel's reports (watch_upto
   0), so that later filings here go straight to their slots. The wake-up itself is made
   at once without threads; with threads only once s's lock is released
   (hwtimer__unlock_and_wake), since it takes the timer's lock, which comes before a
   wheel's in the lock order. */
static void hwtimer__note_filing(hwtimer *t, hwtimer__shard *s, uint64_t tick, uint64_t now) {
    if (!s->answer.armed || s->wheel.collecting) return;
    if (!s->answer.none && !hwtimer__clock_past(s, now) &&
        hwtimer__tick_time(&s->wheel.geo, tick) >= s->answer.time) {
        return;
    }
    s->answer.armed = 0;
    hwtimer__wheel_watch(&s->wheel, 0);
    if (t->threads) s->wake_now = 1;
    else hwtimer__wake(t, 0);
}

/* Releases s's lock, then makes the wake-up that a filing under it called for (wake_now).
   The wake-up is counted in wakes_running while s's lock is still held: a destroy on
   another thread first sets `stopped`, then takes every wheel's lock to empty it, so it
   either finds the count raised, or comes first, and then this thread's arming found the
   timer stopped and filed nothing. hwtimer__finish_destroy frees the timer only once the
   count is back to 0 (hwtimer__wake). */
static void hwtimer__unlock_and_wake(hwtimer *t, hwtimer__shard *s) {
    int wake = s->wake_now;
    if (wake) {
        s->wake_now = 0;
        HWTIMER__ATOMIC_ADD_SYNC(&t->loop.wakes_running, 1);
    }
    hwtimer__unlock(t, s->mutex);
    if (wake) hwtimer__wake(t, 1);
}

/* Gives the loop or the worker its answer (t's lock held) and returns it: the time at
   which a pass next has work, UINT64_MAX if none (a coarse slot's start counts: its nodes
   must move down). Every wheel's lock is taken at once, so that the answer is one moment
   of the whole timer: a filing in any wheel comes either before it (and the answer
   counts it) or after (and is compared with the new answer). Each wheel gets a copy and
   watches the ticks up to it (hwtimer__wake_upto), so that a later filing decides under
   its own wheel's lock alone whether it calls for a wake-up. The copy is armed only if
   someone listens: a worker, or a loop with a wake_fn. A new answer owes the loop one
   wake_fn call (wake_owed). */
static uint64_t hwtimer__give_answer(hwtimer *t) {
    uint64_t next = UINT64_MAX, tick;
    int none = 1, left = 0;
    unsigned i;
    hwtimer__lock_wheels(t);
    for (i = 0; i < t->shards; i++) {
        hwtimer__wheel *w = &hwtimer__shard_at(t, i)->wheel;
        if (hwtimer__wheel_next_tick(w, &tick) && hwtimer__tick_time(&w->geo, tick) < next) {
            next = hwtimer__tick_time(&w->geo, tick);
        }
        if (w->pending) none = 0;
        if (!hwtimer__list_empty(&w->left)) left = 1;
    }
    for (i = 0; i < t->shards; i++) {
        hwtimer__shard *s = hwtimer__shard_at(t, i);
        s->answer.time = next;
        s->answer.none = none;
        s->answer.armed = t->worker.mode || t->loop.wake_fn;
        s->wake_by_clock = t->worker.mode ? next : UINT64_MAX;
        hwtimer__wheel_watch(&s->wheel, hwtimer__wake_upto(s));
    }
    hwtimer__unlock_wheels(t);
    t->loop.none = none;
    t->loop.left = left;
    t->loop.wake_owed = t->loop.wake_fn && !t->worker.mode;
    return next;
}

/* The loop's answer, for hwtimer_next_expiry and hwtimer_poll_timeout_ms (t's lock held).
   *left says whether a bounded pass left timeouts due; the answer then shows them due
   already (a time at or before the last `now`) and is returned as it is. With a coarse
   clock (clock_lag G) the answer has G added: the loop sleeps on the monotonic clock,
   which the coarse clock lags by up to G, so when the monotonic clock reaches next + G the
   coarse clock has reached next and the pass has work. Told next itself, the loop would
   wake to a coarse clock still short of it, run nothing, and ask again and again until
   the coarse clock got there (CLOCKS). While the coarse clock lags by more than G, so
   that the monotonic clock has passed next + G already, the answer is G after the
   monotonic clock's now: the loop sleeps a little rather than spinning. */
static uint64_t hwtimer__loop_answer(hwtimer *t, int *left) {
    uint64_t next = hwtimer__give_answer(t), monotonic;
    *left = t->loop.left;
    if (next == UINT64_MAX || *left || !t->clock_lag) return next;
    next = hwtimer__add_sat(next, t->clock_lag);
    monotonic = t->wait_clock(NULL);
    return next > monotonic ? next : monotonic + t->clock_lag;
}

/* ====================
   [hwtimer:nodes] The front end, 2: arming, moving and cancelling one node

   Each function here works on a node of wheel s with s's lock held (or without threads,
   where there are no locks). A node's callback runs with no lock held (hwtimer__run_node);
   what its own callback or another thread does to the node meanwhile is recorded in
   s->run.fate, which the pass reads when the callback returns (hwtimer__running).
   ==================== */

/* n nodes of t stopped being pending: with a shared limit (shards and max_pending), their
   places in the one count all wheels share (shared_pending) are given back. */
static void hwtimer__release_shared(hwtimer *t, size_t n) {
    if (t->shared_limit) HWTIMER__ATOMIC_ADD(&t->shared_pending, -(long)n);
}

/* Why `to` cannot be armed in w now (w's lock held), or HWTIMER_OK, after which the node
   holds its place under the shared limit: the caller arms it and cannot fail. `stopped`
   is written under the timer's lock, not w's, so it is read with acquire: an arming that
   still reads 0 is one that stop cancels when it empties w ("Reads without a lock" in THE
   DESIGN). The shared count is raised first and compared after, so that two wheels that
   arm at once cannot both take the last place; the one that finds it taken gives its
   increment back. */
HWTIMER__ALWAYS_INLINE int hwtimer__arm_refusal(hwtimer *t, const hwtimer__wheel *w,
                                                const hwtimer_timeout *to) {
    if (hwtimer__load_int(&t->stopped)) return HWTIMER_ESTOPPED;
    if (hwtimer__is_armed(to)) return HWTIMER_EBUSY;
    if (w->pending >= t->max_pending) return HWTIMER_EFULL;
    if (t->shared_limit && HWTIMER__ATOMIC_ADD(&t->shared_pending, 1) > t->shared_limit) {
        HWTIMER__ATOMIC_ADD(&t->shared_pending, -1);
        return HWTIMER_EFULL;
    }
    return HWTIMER_OK;
}

/* Stores what an armed node runs (callback, argument, period) and the wheel it is armed
   in. The caller counts it in w->pending and files it, each arming its own way. These
   stores come before the filing, whose release store of the state PENDING publishes them
   to a thread that reads the state without the lock; arg, period and wheel are read
   without a lock themselves, so they are stored with atomics, each whole. */
HWTIMER__ALWAYS_INLINE void hwtimer__arm_fill(hwtimer__wheel *w, hwtimer_timeout *to,
                                              uint64_t period, hwtimer_fn fn, void *arg) {
    to->fn = fn;
    hwtimer__store_arg(&to->arg, arg);         /* read without a lock: hwtimer_timeout_arg */
    hwtimer__store64(&to->period, period); /* ... hwtimer__is_armed, hwtimer_timeout_period */
    hwtimer__store_relaxed_wheel(&to->wheel, w); /* read without a lock: hwtimer__shard_of */
}

/* Gives `to`, armed in s, a new deadline: the reschedule of a pending node. The cheapest
   way that is right is taken: the push later that only stores the deadline
   (hwtimer__wheel_push_later; "Pushing a deadline later" in THE DESIGN); else, for a filed
   node whose new tick lies past notice_upto, a move to its new slot that no one need hear
   of (hwtimer__wheel_move); else the one general filing, which may put the node in `due`
   and report it as watched. A periodic node inside its own callback is EXPIRED and in no
   list: it is filed by the new deadline, and its fate becomes REARMED so that the
   callback's return does not re-arm it by its period as well. `now` is the clock as the
   caller read it (0: not read): a move that is not watched calls for a wake-up only if
   that clock has passed the worker's wake-up (hwtimer__clock_past). */
HWTIMER__ALWAYS_INLINE void hwtimer__move_locked(hwtimer *t, hwtimer__shard *s,
                                                 hwtimer_timeout *to, uint64_t now,
                                                 uint64_t deadline) {
    hwtimer__wheel *w = &s->wheel;
    uint64_t tick = UINT64_MAX; /* kept by a push later, which comes before no answer */
    int noticed = 0;
    if (to == s->run.node) s->run.fate = HWTIMER__REARMED;
    if (!hwtimer__wheel_push_later(w, to, deadline)) {
        tick = to->state == HWTIMER_PENDING ? hwtimer__wheel_move(w, to, deadline) : 0;
        if (!tick) { /* in no list (a periodic node in its callback), or its tick noticed */
            if (to->state == HWTIMER_PENDING) hwtimer__wheel_unfile(w, to);
            noticed = hwtimer__wheel_file(w, to, deadline, &tick);
        }
    }
    if (noticed || hwtimer__clock_past(s, now)) hwtimer__note_filing(t, s, tick, now);
}

/* Is `to` a periodic node inside its own callback in s that the callback has neither
   re-armed nor cancelled yet (fate UNTOUCHED)? Such a node is pending, counted in s, but
   in no list until the callback returns (hwtimer__rearm_periodic). */
static int hwtimer__running_unfiled(const hwtimer__shard *s, const hwtimer_timeout *to) {
    return to && to == s->run.node && s->run.periodic && s->run.fate == HWTIMER__UNTOUCHED;
}

/* The rarer half of hwtimer__cancel_locked, out of line to keep the inline cancel small:
   `to` is not a filed PENDING node of s. A periodic node inside its own callback is still
   pending, in no list: it is cancelled through its fate (CANCELLED: the callback's return
   does not re-arm it) and uncounted at once, its place under max_pending freed
   (hwtimer_pending is exact). Any other such node is not pending in s. 1 if it was
   cancelled, else 0. */
static HWTIMER__NOINLINE int hwtimer__cancel_unusual(hwtimer *t, hwtimer__shard *s,
                                                     hwtimer_timeout *to) {
    if (!hwtimer__running_unfiled(s, to)) return 0;
    s->run.fate = HWTIMER__CANCELLED;
    hwtimer__wheel_uncount(&s->wheel, to, 0);
    hwtimer__release_shared(t, 1);
    return 1;
}

/* Cancels `to` if it is pending in s (s's lock held): 1, else 0. A filed node, the usual
   case, is cancelled inline (hwtimer__wheel_cancel), its fields read plainly, since a node
   of s changes only under s's lock. A filed node whose callback is running was re-armed
   by that callback; its fate stays REARMED, so the callback's return does not re-arm it
   by its period. */
HWTIMER__ALWAYS_INLINE int hwtimer__cancel_locked(hwtimer *t, hwtimer__shard *s,
                                                  hwtimer_timeout *to) {
    if (hwtimer__wheel_cancel(&s->wheel, to)) {
        hwtimer__release_shared(t, 1);
        return 1;
    }
    return hwtimer__cancel_unusual(t, s, to);
}

/* The callback of `to` armed its node again and has returned (s's lock held again, in
   hwtimer__run_node). If a cancel waits for that callback, the new arming is cancelled
   here, for the waiter, which then returns 1 (`hit`). The waiter could not do it in time
   itself: a filing made during a pass waits for the next pass, but a worker begins that
   pass at once and, while work is due, releases the timer's lock (with one wheel, the
   wheel's too) only to run callbacks:

       CPU0: hwtimer_cancel(t, to)          CPU1: the worker
       lock; run.node == to: wait on        fn(to): hwtimer_schedule(t, to, 0, ...)
         done_cond (lock released)          lock; run.node = NULL; broadcast
                                            the pass ends; the answer is due: a pass
                                            run.node = to; unlock; fn(to) again
       wakes with the lock: run.node == to,
         waits again ...

   A callback that always re-arms itself would keep CPU0 waiting for ever. Cancelled here,
   under the lock held since the callback returned, the node runs again only if another
   thread arms it, and the waiter finds the callback done. Only a listed waiter's node is
   read: a callback that re-armed and then cancelled its node may have freed it. */
static void hwtimer__cancel_for_waiter(hwtimer *t, hwtimer__shard *s, hwtimer_timeout *to) {
    hwtimer__cancel_wait *waiter;
    for (waiter = s->cancel_waits; waiter; waiter = waiter->next) {
        if (waiter->to == to) {
            waiter->hit |= hwtimer__cancel_locked(t, s, to);
            return;
        }
    }
}

/* When a node pending in s will run (s's lock held): its tick's boundary, its leeway
   applied; for a periodic node inside its own callback, that of its next period. */
static uint64_t hwtimer__run_time(hwtimer__shard *s, const hwtimer_timeout *to) {
    uint64_t deadline = to->deadline;
    if (hwtimer__running_unfiled(s, to)) {
        deadline = hwtimer__next_period(deadline, to->period, s->run.now);
    }
    return hwtimer__tick_time(&s->wheel.geo, hwtimer__node_tick(&s->wheel, to, deadline));
}

/* ====================
   [hwtimer:pass] The front end, 3: the pass, and the callbacks it runs

   A pass holds the timer's lock throughout, except while a callback runs, and runs the
   wheels' steps in order of B across wheels ("Locks" in THE DESIGN). With shards it takes
   a wheel's lock for one step of that wheel at a time, so that an arming or a cancel waits
   for a step at most, never for the whole pass. While a callback runs with no lock held,
   t->pass.on keeps other passes out, the wheels still collect (a filing at a tick up to
   the target waits in `due` for a later pass), and s->run names the running node.
   ==================== */

/* Files a periodic node whose callback returned without re-arming or cancelling it, for
   its first period after `now` (fixed rate: hwtimer__next_period); s's lock held. During
   a pass hwtimer__note_filing lets the filing go (the wheel is collecting); outside one,
   from hwtimer__abandon_pass, it is heard as any filing. */
static void hwtimer__rearm_periodic(hwtimer *t, hwtimer__shard *s, hwtimer_timeout *to,
                                    uint64_t now) {
    uint64_t tick, deadline = hwtimer__next_period(to->deadline, to->period, now);
    if (hwtimer__wheel_file(&s->wheel, to, deadline, &tick)) hwtimer__note_filing(t, s, tick, 0);
}

/* A callback that started at `started` (the timer's clock) has returned; no lock is held.
   If it ran longer than log.slow_ns, log_fn hears of it, at most once per
   HWTIMER__SLOW_REPORT_EVERY_NS. Only a worker's callbacks are timed (log.slow_ns is set
   in worker mode), so only the worker's thread touches log.quiet_until. */
static void hwtimer__time_callback(hwtimer *t, uint64_t started) {
    uint64_t ended = t->clock_fn(t->clock_ctx);
    hwtimer__sentence msg;
    if (ended < started || ended - started <= t->log.slow_ns || ended < t->log.quiet_until) return;
    t->log.quiet_until = ended + HWTIMER__SLOW_REPORT_EVERY_NS;
    msg.len = 0;
    hwtimer__say(&msg, "hwtimer: a callback ran for ");
    hwtimer__say_number(&msg, (ended - started) / 1000000u);
    hwtimer__say(&msg, " ms on the worker thread, longer than ");
    hwtimer__say_number(&msg, t->log.slow_ns / 1000000u);
    hwtimer__say(&msg, " ms: every timeout due meanwhile ran up to that much late (keep callbacks "
                     "short, hand slow work to another thread; said at most once a second)");
    t->log.fn(t->log.ctx, msg.text);
}

/* Counts a node's run at `now` in hwtimer_stats' lateness: late_max_ns, and late_runs for
   a run more than a tick and the node's leeway after D. The leeway is worked out only for
   a run more than a tick late, since it costs a loop of multiplications and most runs are
   within a tick. now - D does not wrap: a node runs only once its boundary B <= now, and
   D <= B. */
HWTIMER__ALWAYS_INLINE void hwtimer__count_late(hwtimer *t, const hwtimer__wheel *w,
                                                const hwtimer_timeout *to, uint64_t now) {
    uint64_t late = now - to->deadline;
    HWTIMER_ASSERT(now >= to->deadline);
    if (late > t->stats.late_max_ns) t->stats.late_max_ns = late;
    if (late > w->geo.tick_ns && late - w->geo.tick_ns > hwtimer__leeway(to)) t->stats.late_runs++;
}

/* Runs the callback of `to`, a node of s due in this pass and taken out of its list (t's
   and s's locks held; released while the callback runs, held again on return). The node
   becomes EXPIRED. A one-shot stops being pending at once (uncounted, its shared place
   given back); a periodic node stays pending, in no list, until its callback returns. fn,
   arg and the period are read first: once the callback runs, another thread may arm the
   node again, and a one-shot's callback may free it.
   The callback runs with no lock held, so that it may call the timer's functions and take
   locks of the user's that other threads hold while they call the timer (THREADS), and so
   that other threads arm and cancel meanwhile. What holds the pass together meanwhile:
   pass.on (no other pass begins), the wheels still collecting (a filing up to the target
   waits in `due`), and s->run, which names the node (hwtimer__running): an arming of it
   sets run.fate to REARMED, a cancel of it while periodic to CANCELLED, and a cancel on
   another thread waits on done_cond, which is signalled once run.node is cleared.
   On return, by the fate: REARMED, the node is filed again and a cancel waiting for the
   callback cancels that arming (hwtimer__cancel_for_waiter); UNTOUCHED and periodic, it
   is re-armed by its period from run.now; else the node is not read again. A periodic
   node's period counts from the clock read as its callback started when a worker runs it,
   else from the pass's `now` (hwtimer_schedule_periodic). */
HWTIMER__ALWAYS_INLINE void hwtimer__run_node(hwtimer *t, hwtimer__shard *s, hwtimer_timeout *to,
                                            uint64_t now) {
    hwtimer_fn fn = to->fn;
    void *arg = to->arg;
    int periodic = to->period != 0;
    uint64_t started = 0;
    hwtimer__set_state(to, HWTIMER_EXPIRED);
    if (!periodic) {
        s->wheel.pending--;
        hwtimer__release_shared(t, 1);
    }
    s->run.node = to;
    s->run.periodic = periodic;
    s->run.fate = HWTIMER__UNTOUCHED;
    t->stats.fired++;
    hwtimer__count_late(t, &s->wheel, to, now);
    if ((periodic && t->worker.mode) || t->log.slow_ns) started = t->clock_fn(t->clock_ctx);
    s->run.now = periodic && t->worker.mode ? started : now;
    hwtimer__unlock_wheel(t, s);
    hwtimer__unlock(t, t->mutex);
    fn(to, arg);
    if (t->log.slow_ns) hwtimer__time_callback(t, started);
    hwtimer__lock(t, t->mutex);
    hwtimer__lock_wheel(t, s);
    s->run.node = NULL;
    if (s->run.fate == HWTIMER__REARMED) {
        hwtimer__cancel_for_waiter(t, s, to);
    } else if (periodic && s->run.fate == HWTIMER__UNTOUCHED) {
        hwtimer__rearm_periodic(t, s, to, s->run.now);
    }
    hwtimer__signal(t, s->done_cond, s->waiters);
}

/* Runs the step of s that hwtimer__next_step has just found, with s's lock held since
   then, so that the step is still what the wheel holds; at most `limit` callbacks
   (limit >= 1), and returns how many ran. A slot step empties the slot first
   (hwtimer__wheel_collect): a level-0 slot's nodes go to `ready`, a coarse slot's move
   down a level or to `ready`. A level-0 slot's only node is returned to run at once,
   which spares it a trip through `ready`: the usual case of a sparse wheel. A `ready`
   step runs only the nodes due at its tick, so that with shards another wheel's step at a
   tick before the next ready node's runs first (order of B across wheels).
   `stopped` is read again after every callback, which ran with no lock held: a stop or a
   destroy, from that callback or from another thread, ends the pass. */
static size_t hwtimer__run_step(hwtimer *t, hwtimer__shard *s, const hwtimer__step *step,
                                uint64_t now, size_t limit) {
    hwtimer__wheel *w = &s->wheel;
    hwtimer_timeout *alone = step->runs_ready ? NULL : hwtimer__wheel_collect(w, step);
    size_t ran;
    if (alone) {
        hwtimer__run_node(t, s, alone, now);
        return 1;
    }
    for (ran = 0; ran < limit && !hwtimer__load_int(&t->stopped) &&
                  !hwtimer__list_empty(&w->ready);
         ran++) {
        if (step->runs_ready && hwtimer__listed_tick(w, w->ready.next) > step->tick) break;
        hwtimer__run_node(t, s, hwtimer__wheel_take_ready(w), now);
    }
    return ran;
}

/* Finds the next step of wheel s in the pass (t's and s's locks held): 1, *step set; or
   0, and the pass ends in s (hwtimer__wheel_end): at its target when no step is left, or
   where it stands when the timer stopped, since its nodes are then cancelled, not run. */
static int hwtimer__next_step(hwtimer *t, hwtimer__shard *s, hwtimer__step *step) {
    int stopped = hwtimer__load_int(&t->stopped);
    if (!stopped && hwtimer__wheel_next_step(&s->wheel, step)) return 1;
    hwtimer__wheel_end(&s->wheel, !stopped);
    return 0;
}

/* The index of the wheel in `on` (bit i: wheel i) whose step comes first, ties to the
   lowest index (the timeouts of one boundary run in any order); n if `on` is empty. */
static unsigned hwtimer__earliest(const hwtimer__step *step, uint64_t on, unsigned n) {
    unsigned i, first = n;
    for (i = 0; i < n; i++) {
        if ((on >> i & 1) && (first == n || step[i].tick < step[first].tick)) first = i;
    }
    return first;
}

/* Sets the timer's time to `now`: S at create, then each pass's `now`. last_now is read
   without a lock (hwtimer__ticks_ahead: "Reads without a lock" in THE DESIGN), so it is
   stored whole; last_tick and ticks_room serve only the inline arming, which runs without
   threads. ticks_room is the most ticks a count may add to `now` without passing
   UINT64_MAX. */
static void hwtimer__set_time(hwtimer *t, const hwtimer__geometry *g, uint64_t now) {
    hwtimer__store64(&t->pass.last_now, now); /* read without a lock: hwtimer__ticks_ahead */
    t->pass.last_tick = hwtimer__due_tick(g, now);
    t->pass.ticks_room = hwtimer__div_tick(g, UINT64_MAX - now);
}

/* Does a wheel of t hold timeouts a bounded pass left (t's lock held)? pass.left may say
   so after other threads cancelled all of them; this asks the lists. */
static int hwtimer__any_left(const hwtimer *t) {
    unsigned i;
    int left = 0;
    for (i = 0; i < t->shards && !left; i++) {
        hwtimer__shard *s = hwtimer__shard_at(t, i);
        hwtimer__lock_wheel(t, s);
        left = !hwtimer__list_empty(&s->wheel.left);
        hwtimer__unlock_wheel(t, s);
    }
    return left;
}

/* Begins a pass up to `now` (t's lock held, no pass under way): 0 if none runs, because
   `now` is before the timer's time (a clock that stepped back, or an older cached time:
   the timer's time and the wheels never go back) or because the timer stopped. Else it
   sets the timer's time, the target (the last tick whose boundary is at or before
   `now`) and pass.on, and records the pass's thread, which a cancel compares with its own
   to tell whether it is called from one of the pass's callbacks ("Reads without a lock"
   in THE DESIGN). */
static int hwtimer__pass_begin(hwtimer *t, uint64_t now, uint64_t *target) {
    const hwtimer__geometry *g = &hwtimer__shard_at(t, 0)->wheel.geo;
    if (now < t->pass.last_now || hwtimer__load_int(&t->stopped)) return 0;
    hwtimer__set_time(t, g, now);
    HWTIMER_ASSERT(now >= g->start); /* last_now starts at S */
    *target = hwtimer__div_tick(g, now - g->start);
    t->pass.on = 1;
    if (t->threads) t->threads->thread_self(t->pass.thread);
    t->stats.passes++;
    return 1;
}

/* The place of a `left` list's first node in the order they run: its generation (the
   bounded pass that set it aside), then its tick, so that the nodes of one generation run
   in order of B across wheels, as a pass runs them ("Bounded passes" in THE DESIGN). */
typedef struct hwtimer__left_key {
    uint32_t gen;
    uint64_t tick;
} hwtimer__left_key;

/* The key of the first node of w's `left` list (w's lock held, the list not empty). */
static hwtimer__left_key hwtimer__left_head(hwtimer__wheel *w) {
    hwtimer__left_key key;
    key.gen = hwtimer__left_gen_of(w, hwtimer__node(w->left.next));
    key.tick = hwtimer__listed_tick(w, w->left.next);
    return key;
}

static int hwtimer__left_before(hwtimer__left_key a, hwtimer__left_key b) {
    return a.gen < b.gen || (a.gen == b.gen && a.tick < b.tick);
}

/* The wheel whose `left` list's first node runs first, and that node's key; NULL when
   every such list is empty. t's lock held; each wheel's is taken in turn, so the answer
   may be stale once it is released: hwtimer__run_left checks it again under the wheel's
   lock. */
static hwtimer__shard *hwtimer__first_left(hwtimer *t, hwtimer__left_key *key) {
    hwtimer__shard *first = NULL;
    unsigned i;
    for (i = 0; i < t->shards; i++) {
        hwtimer__shard *s = hwtimer__shard_at(t, i);
        hwtimer__lock_wheel(t, s);
        if (!hwtimer__list_empty(&s->wheel.left)) {
            hwtimer__left_key head = hwtimer__left_head(&s->wheel);
            if (!first || hwtimer__left_before(head, *key)) {
                first = s;
                *key = head;
            }
        }
        hwtimer__unlock_wheel(t, s);
    }
    return first;
}

/* Takes the first node of s's `left` list and runs it (t's and s's locks held): 1 if a
   callback ran. A node pushed past the pass's target since it was set aside (a push later
   leaves a node of `left` in place, as in a coarse slot) is not due: it is filed by its
   deadline instead and counted as a re-filing, as a coarse slot's node would be. */
static int hwtimer__run_left_head(hwtimer *t, hwtimer__shard *s, uint64_t now) {
    hwtimer__wheel *w = &s->wheel;
    hwtimer_timeout *to = hwtimer__wheel_take(w, &w->left);
    uint64_t tick;
    if (hwtimer__node_tick(w, to, to->deadline) > w->due_upto) {
        hwtimer__wheel_file(w, to, to->deadline, &tick); /* in a pass: no wake-up to make */
        w->cascaded++;
        w->refiled++;
        return 0;
    }
    hwtimer__run_node(t, s, to, now);
    return 1;
}

/* Runs what bounded passes left, first and in order, at most `limit` callbacks (t's lock
   held, the pass begun in every wheel); returns how many ran. Since the pass has begun,
   what these callbacks arm up to the target waits in `due` and runs in a later call. With
   one wheel, its `left` list is in run order already and its lock is the timer's. With
   shards the lists are merged by key: the first node is found with each wheel's lock in
   turn, then run only if it is still the first of its wheel under that wheel's lock,
   since another thread may have cancelled or moved it meanwhile. Once all are empty, the
   generations count from the first again. */
static HWTIMER__NOINLINE size_t hwtimer__run_left(hwtimer *t, uint64_t now, size_t limit) {
    size_t ran = 0;
    if (t->shards == 1) { /* one list: its order is the order they run in */
        hwtimer__shard *s = hwtimer__shard_at(t, 0);
        while (ran < limit && !hwtimer__load_int(&t->stopped) &&
               !hwtimer__list_empty(&s->wheel.left)) {
            ran += (size_t)hwtimer__run_left_head(t, s, now);
        }
    }
    while (ran < limit && !hwtimer__load_int(&t->stopped)) {
        hwtimer__left_key key = {0, 0};
        hwtimer__shard *s = hwtimer__first_left(t, &key);
        hwtimer__wheel *w;
        if (!s) { /* none left: the generations count from the first again */
            t->pass.left = 0;
            t->pass.left_gen = hwtimer__left_where(&hwtimer__shard_at(t, 0)->wheel.geo);
            break;
        }
        w = &s->wheel;
        hwtimer__lock_wheel(t, s);
        if (!hwtimer__list_empty(&w->left)) {
            hwtimer__left_key head = hwtimer__left_head(w);
            if (head.gen == key.gen && head.tick == key.tick) {
                ran += (size_t)hwtimer__run_left_head(t, s, now);
            }
        }
        hwtimer__unlock_wheel(t, s);
    }
    return ran;
}

/* A bounded pass has run its limit (t's lock held): each wheel in `on`, still in the
   pass, sets aside what the pass would still run there, up to its target, as the next
   generation (hwtimer__wheel_set_aside), and ends at the target; if the timer stopped, it
   ends where it stands instead. A generation's number is used up only if some wheel set
   something aside. Past UINT32_MAX generations, which only a `left` list that is never
   emptied reaches, the last ones share a number and run in order of B across wheels. */
static HWTIMER__NOINLINE void hwtimer__pass_cut(hwtimer *t, uint64_t on) {
    unsigned i;
    int set_aside = 0;
    for (i = 0; i < t->shards; i++) {
        hwtimer__shard *s = hwtimer__shard_at(t, i);
        if (!(on >> i & 1)) continue;
        hwtimer__lock_wheel(t, s);
        if (hwtimer__load_int(&t->stopped)) {
            hwtimer__wheel_end(&s->wheel, 0);
        } else {
            struct hwtimer__link *last = s->wheel.left.prev;
            hwtimer__wheel_set_aside(&s->wheel, t->pass.left_gen);
            set_aside |= s->wheel.left.prev != last;
        }
        hwtimer__unlock_wheel(t, s);
    }
    if (set_aside) {
        t->pass.left = 1;
        if (t->pass.left_gen < UINT32_MAX) t->pass.left_gen++;
    }
}

/* Runs the steps of the wheels in `on` (bit i: wheel i, whose step is step[i]) in order of
   B across them, until `limit` callbacks ran (*ran counts them); returns the wheels still
   in the pass. t's lock held; a wheel's lock is taken for one step, so that armings and
   cancels in the other wheels go on meanwhile. A wheel's step was found under its lock,
   released since, and another thread may have cancelled the nodes it named: the step is
   found again under the lock and runs only if it is still at the tick chosen. Else it
   lies later (a filing during a pass never makes a step earlier: up to the target it
   waits in `due`), another wheel's step may come first, and the choice is made again. */
static uint64_t hwtimer__run_wheels(hwtimer *t, hwtimer__step *step, uint64_t on, uint64_t now,
                                    size_t limit, size_t *ran) {
    while (on && *ran < limit) {
        unsigned i = hwtimer__earliest(step, on, t->shards);
        hwtimer__shard *s = hwtimer__shard_at(t, i);
        uint64_t found = step[i].tick;
        hwtimer__lock_wheel(t, s);
        if (!hwtimer__next_step(t, s, &step[i])) {
            on &= ~((uint64_t)1 << i);
        } else if (step[i].tick == found) { /* else it moved later: choose again */
            *ran += hwtimer__run_step(t, s, &step[i], now, limit - *ran);
            if (*ran < limit && !hwtimer__next_step(t, s, &step[i])) on &= ~((uint64_t)1 << i);
        }
        hwtimer__unlock_wheel(t, s);
    }
    return on;
}

/* Begins the pass at `target` in every wheel (t's lock held, each wheel's in turn) and, if
   `find`, finds each wheel's first step: returns the wheels that have one (bit i: wheel
   i). hwtimer__pass_bounded begins every wheel before `left` runs, so that what those
   callbacks arm waits in `due`, and finds the steps after it. */
static uint64_t hwtimer__begin_wheels(hwtimer *t, hwtimer__step *step, uint64_t target,
                                      int find) {
    uint64_t on = 0;
    unsigned i;
    for (i = 0; i < t->shards; i++) {
        hwtimer__shard *s = hwtimer__shard_at(t, i);
        hwtimer__lock_wheel(t, s);
        hwtimer__wheel_begin(&s->wheel, target);
        if (find && hwtimer__next_step(t, s, &step[i])) on |= (uint64_t)1 << i;
        hwtimer__unlock_wheel(t, s);
    }
    return on;
}

/* Ends the pass (t's lock held) and wakes the threads waiting for it to end
   (hwtimer_advance_max, hwtimer__stop). */
static void hwtimer__pass_end(hwtimer *t) {
    t->pass.on = 0;
    hwtimer__signal(t, t->done_cond, t->waiters);
}

/* One pass up to `now` that runs everything due (t's lock held; no timeouts left by a
   bounded pass, else hwtimer__pass_bounded runs); returns how many callbacks ran. The pass
   of hwtimer_advance and of the worker, which never bounds its passes. With one wheel the
   steps run in a plain loop: there is no order across wheels to keep, and the wheel's
   lock is the timer's. */
static size_t hwtimer__pass(hwtimer *t, uint64_t now) {
    hwtimer__step step[HWTIMER__MAX_SHARDS];
    uint64_t target;
    size_t ran = 0;
    if (!hwtimer__pass_begin(t, now, &target)) return 0;
    if (t->shards == 1) { /* what the loops do with one wheel, without choosing one */
        hwtimer__shard *s = hwtimer__shard_at(t, 0);
        hwtimer__wheel_begin(&s->wheel, target);
        while (hwtimer__next_step(t, s, &step[0])) {
            ran += hwtimer__run_step(t, s, &step[0], now, SIZE_MAX);
        }
    } else {
        hwtimer__run_wheels(t, step, hwtimer__begin_wheels(t, step, target, 1), now, SIZE_MAX,
                            &ran);
    }
    hwtimer__pass_end(t);
    return ran;
}

/* A pass that runs at most `limit` callbacks, what bounded passes left first ("Bounded
   passes" in THE DESIGN); t's lock held. While some are left, a `now` before the timer's
   time counts as the timer's time, so that they still run (hwtimer_advance_max). Every
   wheel begins the pass before `left` runs; the steps are found after it, since those
   callbacks may change the wheels, and a limit spent on `left` needs none. The wheels
   still in the pass at the limit set aside the rest (hwtimer__pass_cut). */
static HWTIMER__NOINLINE size_t hwtimer__pass_bounded(hwtimer *t, uint64_t now, size_t limit) {
    hwtimer__step step[HWTIMER__MAX_SHARDS];
    uint64_t on, target;
    size_t ran = 0;
    if (t->pass.left && now < t->pass.last_now && hwtimer__any_left(t)) now = t->pass.last_now;
    if (!hwtimer__pass_begin(t, now, &target)) return 0;
    (void)hwtimer__begin_wheels(t, step, target, 0); /* every wheel, before `left` runs */
    if (t->pass.left) ran = hwtimer__run_left(t, now, limit);
    if (ran < limit) { /* (else every wheel is still in the pass) */
        unsigned i;
        for (i = 0, on = 0; i < t->shards; i++) {
            hwtimer__shard *s = hwtimer__shard_at(t, i);
            hwtimer__lock_wheel(t, s);
            if (hwtimer__next_step(t, s, &step[i])) on |= (uint64_t)1 << i;
            hwtimer__unlock_wheel(t, s);
        }
        on = hwtimer__run_wheels(t, step, on, now, limit, &ran);
    } else {
        on = ((uint64_t)2 << (t->shards - 1)) - 1;
    }
    if (on) hwtimer__pass_cut(t, on);
    hwtimer__pass_end(t);
    return ran;
}

/* In a child after fork(): a pass was under way on a thread the child does not have
   (hwtimer_fork_child; every lock held). That thread held no lock of t at the fork, since
   the fork handlers had taken them all, so it was running a callback (the pass holds the
   timer's lock at every other moment). That callback counts as done: its node is
   forgotten, a periodic one its callback left untouched is re-armed for its next period,
   and the wheels stop collecting short of the target. What `ready` still holds runs first
   in the next pass. */
static void hwtimer__abandon_pass(hwtimer *t) {
    unsigned i;
    for (i = 0; i < t->shards; i++) {
        hwtimer__shard *s = hwtimer__shard_at(t, i);
        hwtimer_timeout *to = s->run.node;
        int rearm = hwtimer__running_unfiled(s, to);
        s->wheel.collecting = 0;
        s->run.node = NULL;
        if (rearm) hwtimer__rearm_periodic(t, s, to, s->run.now);
    }
    t->pass.on = 0;
}

/* ====================
   [hwtimer:platform] Platform: the clock, then the POSIX, C11 and Win32 thread backends
   ==================== */

#if !defined(HWTIMER_NO_DEFAULT_CLOCK)
#if defined(_WIN32)
static uint64_t hwtimer__platform_clock(void *ctx) {
    LARGE_INTEGER freq, count;
    uint64_t f, c;
    (void)ctx;
    QueryPerformanceFrequency(&freq);
    QueryPerformanceCounter(&count);
    f = (uint64_t)freq.QuadPart;
    c = (uint64_t)count.QuadPart;
    /* split so that c * 1e9 cannot overflow */
    return (c / f) * 1000000000u + (c % f) * 1000000000u / f;
}
#else /* (<time.h> is included above) */
static uint64_t hwtimer__platform_clock(void *ctx) {
    struct timespec ts;
    (void)ctx;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#endif
#define HWTIMER__DEFAULT_CLOCK hwtimer__platform_clock
#define HWTIMER__HAVE_DEFAULT_CLOCK 1
#else
#define HWTIMER__DEFAULT_CLOCK NULL
#define HWTIMER__HAVE_DEFAULT_CLOCK 0
#endif

/* cfg.coarse_clock: Linux's CLOCK_MONOTONIC_COARSE (the kernel tick's time, read without
   a system call), which lags CLOCK_MONOTONIC by up to its resolution G while the kernel's
   tick runs on time; elsewhere the default clock, and G = 0. A delay counts from
   hwtimer__coarse_clock_ahead, the coarse reading plus G (its ctx points at G), so that no
   deadline is early on CLOCK_MONOTONIC while the lag is within G. Nothing bounds the lag
   when the tick runs late (common on a virtual machine): G is the lag of a tick on time,
   not a guarantee, so the promise on CLOCK_MONOTONIC is only as good as it (CLOCKS). */
#if !defined(HWTIMER_NO_DEFAULT_CLOCK) && !defined(_WIN32) && defined(CLOCK_MONOTONIC_COARSE)
static uint64_t hwtimer__coarse_clock(void *ctx) {
    struct timespec ts;
    (void)ctx;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
static uint64_t hwtimer__coarse_clock_ahead(void *ctx) {
    return hwtimer__coarse_clock(NULL) + *(const uint64_t *)ctx;
}
static uint64_t hwtimer__coarse_lag(void) {
    struct timespec res;
    if (clock_getres(CLOCK_MONOTONIC_COARSE, &res) != 0) return 0;
    return (uint64_t)res.tv_sec * 1000000000u + (uint64_t)res.tv_nsec;
}
#define HWTIMER__COARSE_CLOCK hwtimer__coarse_clock
#define HWTIMER__COARSE_CLOCK_AHEAD hwtimer__coarse_clock_ahead
#else
static uint64_t hwtimer__coarse_lag(void) { return 0; }
#define HWTIMER__COARSE_CLOCK HWTIMER__DEFAULT_CLOCK
#define HWTIMER__COARSE_CLOCK_AHEAD HWTIMER__DEFAULT_CLOCK
#endif

/* A backend's thread: its handle, and the entry point its trampoline calls. The three
   native thread APIs want entry points of three signatures, so each backend's trampoline
   adapts them to the one the timer uses. */
#define HWTIMER__THREAD_RECORD(native) \
    struct {                           \
        native handle;                 \
        void (*fn)(void *);            \
        void *arg;                     \
    }

#if defined(HWTIMER__PTHREAD) || defined(HWTIMER__C11)
#include <time.h>
/* Moves *ts forward by ns. */
static void hwtimer__timespec_add(struct timespec *ts, uint64_t ns) {
    uint64_t nsec = (uint64_t)ts->tv_nsec + ns % 1000000000u;
    ts->tv_sec += (time_t)(ns / 1000000000u + nsec / 1000000000u);
    ts->tv_nsec = (long)(nsec % 1000000000u);
}

/* Tries to take m up to HWTIMER_LOCK_SPINS times before the caller blocks on it: 1 if it
   got the lock. The timer's locks are held briefly, and blocking costs two kernel round
   trips (the sleep and the wake-up), so a few tries usually pay. Between tries it pauses
   1, 2, 4, ... 64 times: each try takes the lock's cache line, which the holder needs back
   to unlock, so the tries back off. */
static int hwtimer__lock_spinning(void *m, int (*try_lock)(void *)) {
    unsigned i, j, n = HWTIMER_LOCK_SPINS; /* with LOCK_SPINS 0, `i < 0` would warn */
    for (i = 0; i < n; i++) {
        if (try_lock(m)) return 1;
        for (j = 0; j < 1u << (i < 6 ? i : 6); j++) {
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
            __builtin_ia32_pause();
#endif
        }
    }
    return 0;
}
#endif

#ifdef HWTIMER__PTHREAD
#include <pthread.h>
typedef HWTIMER__THREAD_RECORD(pthread_t) hwtimer__pthread;

static int hwtimer__pt_mutex_init(void *m) {
    return pthread_mutex_init((pthread_mutex_t *)m, NULL) ? -1 : 0;
}
static void hwtimer__pt_mutex_destroy(void *m) { pthread_mutex_destroy((pthread_mutex_t *)m); }
static int hwtimer__pt_mutex_try(void *m) {
    return pthread_mutex_trylock((pthread_mutex_t *)m) == 0;
}
static void hwtimer__pt_mutex_lock(void *m) {
    if (!hwtimer__lock_spinning(m, hwtimer__pt_mutex_try)) pthread_mutex_lock((pthread_mutex_t *)m);
}
static void hwtimer__pt_mutex_unlock(void *m) { pthread_mutex_unlock((pthread_mutex_t *)m); }

static int hwtimer__pt_cond_init(void *c) {
    pthread_condattr_t attr;
    int err;
    if (pthread_condattr_init(&attr)) return -1;
#if !defined(__APPLE__)
    /* Wait on the monotonic clock: a wall-clock step must not stretch or cut a sleep. */
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
#endif
    err = pthread_cond_init((pthread_cond_t *)c, &attr);
    pthread_condattr_destroy(&attr);
    return err ? -1 : 0;
}
static void hwtimer__pt_cond_destroy(void *c) { pthread_cond_destroy((pthread_cond_t *)c); }
static void hwtimer__pt_cond_broadcast(void *c) { pthread_cond_broadcast((pthread_cond_t *)c); }

static void hwtimer__pt_cond_wait(void *c, void *m, uint64_t timeout_ns) {
    struct timespec ts;
    if (timeout_ns == UINT64_MAX) {
        pthread_cond_wait((pthread_cond_t *)c, (pthread_mutex_t *)m);
        return;
    }
    /* at most 2^52 ns (~52 days), so that tv_sec cannot overflow even a 32-bit time_t; the
       worker waits again after a wait cut short */
    if (timeout_ns > ((uint64_t)1 << 52)) timeout_ns = (uint64_t)1 << 52;
#if defined(__APPLE__) /* no pthread_condattr_setclock: a relative wait, free of the wall clock */
    memset(&ts, 0, sizeof ts);
    hwtimer__timespec_add(&ts, timeout_ns);
    pthread_cond_timedwait_relative_np((pthread_cond_t *)c, (pthread_mutex_t *)m, &ts);
#else
    clock_gettime(CLOCK_MONOTONIC, &ts);
    hwtimer__timespec_add(&ts, timeout_ns);
    pthread_cond_timedwait((pthread_cond_t *)c, (pthread_mutex_t *)m, &ts);
#endif
}

static void *hwtimer__pt_trampoline(void *p) {
    hwtimer__pthread *th = (hwtimer__pthread *)p;
    th->fn(th->arg);
    return NULL;
}
static int hwtimer__pt_thread_start(void *p, void (*fn)(void *), void *arg) {
    hwtimer__pthread *th = (hwtimer__pthread *)p;
    th->fn = fn;
    th->arg = arg;
    return pthread_create(&th->handle, NULL, hwtimer__pt_trampoline, th) ? -1 : 0;
}
static void hwtimer__pt_thread_join(void *p) {
    pthread_join(((hwtimer__pthread *)p)->handle, NULL);
}
static void hwtimer__pt_thread_detach(void *p) { pthread_detach(((hwtimer__pthread *)p)->handle); }
static void hwtimer__pt_thread_self(void *p) { ((hwtimer__pthread *)p)->handle = pthread_self(); }
static int hwtimer__pt_thread_is_self(const void *p) {
    return pthread_equal(((const hwtimer__pthread *)p)->handle, pthread_self());
}

static const hwtimer_threads hwtimer__pthread_table = {
    "pthread", sizeof(pthread_mutex_t), sizeof(pthread_cond_t), sizeof(hwtimer__pthread),
    hwtimer__pt_mutex_init, hwtimer__pt_mutex_destroy, hwtimer__pt_mutex_lock,
    hwtimer__pt_mutex_unlock, hwtimer__pt_cond_init, hwtimer__pt_cond_destroy,
    hwtimer__pt_cond_broadcast, hwtimer__pt_cond_wait, hwtimer__pt_thread_start,
    hwtimer__pt_thread_join, hwtimer__pt_thread_detach, hwtimer__pt_thread_self,
    hwtimer__pt_thread_is_self};
#define HWTIMER__PTHREAD_TABLE (&hwtimer__pthread_table)
#else
#define HWTIMER__PTHREAD_TABLE NULL
#endif /* HWTIMER__PTHREAD */

/* fork() and the worker. A worker may be inside any of the timer's functions when another
   thread forks, so pthread_atfork's handlers have the forking thread take every lock of
   every timer with a worker before the fork, and release them after it, in the parent and
   in the child alike: no child inherits a wheel half changed. Timers without a worker are
   not listed: the rules at hwtimer_fork_child keep other threads out of them at the fork.
   hwtimer_fork_child then makes the child's locks and worker. */
#if defined(HWTIMER__PTHREAD) && !defined(_WIN32)
static pthread_mutex_t hwtimer__fork_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t hwtimer__fork_once = PTHREAD_ONCE_INIT;
static hwtimer *hwtimer__fork_list;

static void hwtimer__fork_prepare(void) {
    hwtimer *t;
    pthread_mutex_lock(&hwtimer__fork_mutex);
    for (t = hwtimer__fork_list; t; t = t->fork_next) hwtimer__lock_all(t);
}

static void hwtimer__fork_release(void) { /* in the parent, and in the child */
    hwtimer *t;
    for (t = hwtimer__fork_list; t; t = t->fork_next) hwtimer__unlock_all(t);
    pthread_mutex_unlock(&hwtimer__fork_mutex);
}

static void hwtimer__fork_handlers(void) {
    pthread_atfork(hwtimer__fork_prepare, hwtimer__fork_release, hwtimer__fork_release);
}

static void hwtimer__fork_list_add(hwtimer *t) {
    if (!t->worker.mode) return; /* (a worker has threads) */
    pthread_once(&hwtimer__fork_once, hwtimer__fork_handlers);
    pthread_mutex_lock(&hwtimer__fork_mutex);
    t->fork_next = hwtimer__fork_list;
    hwtimer__fork_list = t;
    pthread_mutex_unlock(&hwtimer__fork_mutex);
}

/* Takes t off the list, where hwtimer_create put every timer with a worker. */
static void hwtimer__fork_list_remove(hwtimer *t) {
    hwtimer **p;
    if (!t->worker.mode) return;
    pthread_mutex_lock(&hwtimer__fork_mutex);
    for (p = &hwtimer__fork_list; *p != t; p = &(*p)->fork_next) continue;
    *p = t->fork_next;
    pthread_mutex_unlock(&hwtimer__fork_mutex);
}
#else /* no fork() */
static void hwtimer__fork_list_add(hwtimer *t) { (void)t; }
static void hwtimer__fork_list_remove(hwtimer *t) { (void)t; }
#endif

#ifdef HWTIMER__C11
#include <threads.h>
typedef HWTIMER__THREAD_RECORD(thrd_t) hwtimer__c11thread;

static int hwtimer__c11_mutex_init(void *m) {
    return mtx_init((mtx_t *)m, mtx_plain) == thrd_success ? 0 : -1;
}
static void hwtimer__c11_mutex_destroy(void *m) { mtx_destroy((mtx_t *)m); }
static int hwtimer__c11_mutex_try(void *m) { return mtx_trylock((mtx_t *)m) == thrd_success; }
static void hwtimer__c11_mutex_lock(void *m) {
    if (!hwtimer__lock_spinning(m, hwtimer__c11_mutex_try)) mtx_lock((mtx_t *)m);
}
static void hwtimer__c11_mutex_unlock(void *m) { mtx_unlock((mtx_t *)m); }
static int hwtimer__c11_cond_init(void *c) { return cnd_init((cnd_t *)c) == thrd_success ? 0 : -1; }
static void hwtimer__c11_cond_destroy(void *c) { cnd_destroy((cnd_t *)c); }
static void hwtimer__c11_cond_broadcast(void *c) { cnd_broadcast((cnd_t *)c); }

static void hwtimer__c11_cond_wait(void *c, void *m, uint64_t timeout_ns) {
    struct timespec ts;
    if (timeout_ns == UINT64_MAX) {
        cnd_wait((cnd_t *)c, (mtx_t *)m);
        return;
    }
    /* C11 waits on TIME_UTC, the wall clock: a cap bounds how far a step of it back can
       delay a wake-up (the worker waits again after a wait cut short) */
    if (timeout_ns > (uint64_t)HWTIMER_C11_MAX_WAIT_NS) timeout_ns = HWTIMER_C11_MAX_WAIT_NS;
    timespec_get(&ts, TIME_UTC);
    hwtimer__timespec_add(&ts, timeout_ns);
    cnd_timedwait((cnd_t *)c, (mtx_t *)m, &ts);
}

static int hwtimer__c11_trampoline(void *p) {
    hwtimer__c11thread *th = (hwtimer__c11thread *)p;
    th->fn(th->arg);
    return 0;
}
static int hwtimer__c11_thread_start(void *p, void (*fn)(void *), void *arg) {
    hwtimer__c11thread *th = (hwtimer__c11thread *)p;
    th->fn = fn;
    th->arg = arg;
    return thrd_create(&th->handle, hwtimer__c11_trampoline, th) == thrd_success ? 0 : -1;
}
static void hwtimer__c11_thread_join(void *p) {
    thrd_join(((hwtimer__c11thread *)p)->handle, NULL);
}
static void hwtimer__c11_thread_detach(void *p) { thrd_detach(((hwtimer__c11thread *)p)->handle); }
static void hwtimer__c11_thread_self(void *p) {
    ((hwtimer__c11thread *)p)->handle = thrd_current();
}
static int hwtimer__c11_thread_is_self(const void *p) {
    return thrd_equal(((const hwtimer__c11thread *)p)->handle, thrd_current());
}

static const hwtimer_threads hwtimer__c11_table = {
    "c11", sizeof(mtx_t), sizeof(cnd_t), sizeof(hwtimer__c11thread),
    hwtimer__c11_mutex_init, hwtimer__c11_mutex_destroy, hwtimer__c11_mutex_lock,
    hwtimer__c11_mutex_unlock, hwtimer__c11_cond_init, hwtimer__c11_cond_destroy,
    hwtimer__c11_cond_broadcast, hwtimer__c11_cond_wait, hwtimer__c11_thread_start,
    hwtimer__c11_thread_join, hwtimer__c11_thread_detach, hwtimer__c11_thread_self,
    hwtimer__c11_thread_is_self};
#define HWTIMER__C11_TABLE (&hwtimer__c11_table)
#else
#define HWTIMER__C11_TABLE NULL
#endif /* HWTIMER__C11 */

#ifdef HWTIMER__WIN32
typedef struct hwtimer__w32thread {
    HANDLE handle;
    void (*fn)(void *);
    void *arg;
    DWORD id;
} hwtimer__w32thread;

static int hwtimer__w32_mutex_init(void *m) {
    InitializeSRWLock((PSRWLOCK)m);
    return 0;
}
/* (SRW locks and condition variables need no destroying) */
static void hwtimer__w32_destroy(void *object) { (void)object; }
static void hwtimer__w32_mutex_lock(void *m) { AcquireSRWLockExclusive((PSRWLOCK)m); }
static void hwtimer__w32_mutex_unlock(void *m) { ReleaseSRWLockExclusive((PSRWLOCK)m); }
static int hwtimer__w32_cond_init(void *c) {
    InitializeConditionVariable((PCONDITION_VARIABLE)c);
    return 0;
}
static void hwtimer__w32_cond_broadcast(void *c) {
    WakeAllConditionVariable((PCONDITION_VARIABLE)c);
}
static void hwtimer__w32_cond_wait(void *c, void *m, uint64_t timeout_ns) {
    DWORD ms = INFINITE;
    if (timeout_ns != UINT64_MAX) {
        /* rounded up, so that a wait never ends before its time and then spins; kept
           below INFINITE, which would mean for ever */
        uint64_t rounded = timeout_ns / 1000000u + (timeout_ns % 1000000u != 0);
        ms = rounded >= (uint64_t)INFINITE ? INFINITE - 1 : (DWORD)rounded;
    }
    SleepConditionVariableSRW((PCONDITION_VARIABLE)c, (PSRWLOCK)m, ms, 0);
}
static DWORD WINAPI hwtimer__w32_trampoline(LPVOID p) {
    hwtimer__w32thread *th = (hwtimer__w32thread *)p;
    th->fn(th->arg);
    return 0;
}
static int hwtimer__w32_thread_start(void *p, void (*fn)(void *), void *arg) {
    hwtimer__w32thread *th = (hwtimer__w32thread *)p;
    th->fn = fn;
    th->arg = arg;
    th->handle = CreateThread(NULL, 0, hwtimer__w32_trampoline, th, 0, &th->id);
    return th->handle ? 0 : -1;
}
static void hwtimer__w32_thread_join(void *p) {
    hwtimer__w32thread *th = (hwtimer__w32thread *)p;
    WaitForSingleObject(th->handle, INFINITE);
    CloseHandle(th->handle);
}
static void hwtimer__w32_thread_detach(void *p) { CloseHandle(((hwtimer__w32thread *)p)->handle); }
/* By id: GetCurrentThread returns a pseudo-handle that names whichever thread uses it. */
static void hwtimer__w32_thread_self(void *p) {
    ((hwtimer__w32thread *)p)->id = GetCurrentThreadId();
}
static int hwtimer__w32_thread_is_self(const void *p) {
    return ((const hwtimer__w32thread *)p)->id == GetCurrentThreadId();
}

static const hwtimer_threads hwtimer__win32_table = {
    "win32", sizeof(SRWLOCK), sizeof(CONDITION_VARIABLE), sizeof(hwtimer__w32thread),
    hwtimer__w32_mutex_init, hwtimer__w32_destroy, hwtimer__w32_mutex_lock,
    hwtimer__w32_mutex_unlock, hwtimer__w32_cond_init, hwtimer__w32_destroy,
    hwtimer__w32_cond_broadcast, hwtimer__w32_cond_wait, hwtimer__w32_thread_start,
    hwtimer__w32_thread_join, hwtimer__w32_thread_detach, hwtimer__w32_thread_self,
    hwtimer__w32_thread_is_self};
#define HWTIMER__WIN32_TABLE (&hwtimer__win32_table)
#else
#define HWTIMER__WIN32_TABLE NULL
#endif /* HWTIMER__WIN32 */

/* ====================
   [hwtimer:lifecycle] Creating a timer: its config checked, its block laid out, its clock
   ==================== */

/* Tells cfg->log_fn, if set, why hwtimer_create refuses: "hwtimer_create: ", `what`, the
   number *value if `value` is not NULL, then `rule`. */
static void hwtimer__tell_refusal(const hwtimer_config *cfg, const char *what,
                                  const uint64_t *value, const char *rule) {
    hwtimer__sentence msg = {"", 0};
    if (!cfg || !cfg->log_fn) return;
    hwtimer__say(&msg, "hwtimer_create: ");
    hwtimer__say(&msg, what);
    if (value) hwtimer__say_number(&msg, *value);
    hwtimer__say(&msg, rule);
    cfg->log_fn(cfg->log_ctx, msg.text);
}

/* The first hook or size of a threads table that is NULL or 0, or NULL. */
#define HWTIMER__NEED(f) if (!th->f) return #f
static const char *hwtimer__threads_missing(const hwtimer_threads *th) {
    HWTIMER__NEED(mutex_size); HWTIMER__NEED(cond_size); HWTIMER__NEED(thread_size);
    HWTIMER__NEED(mutex_init); HWTIMER__NEED(mutex_destroy); HWTIMER__NEED(mutex_lock);
    HWTIMER__NEED(mutex_unlock); HWTIMER__NEED(cond_init); HWTIMER__NEED(cond_destroy);
    HWTIMER__NEED(cond_broadcast); HWTIMER__NEED(cond_wait); HWTIMER__NEED(thread_start);
    HWTIMER__NEED(thread_join); HWTIMER__NEED(thread_detach); HWTIMER__NEED(thread_self);
    HWTIMER__NEED(thread_is_self);
    return NULL;
}

/* A rule of the config: broken, and the sentence that says so. */
typedef struct hwtimer__rule {
    int broken;
    const char *what;
    const uint64_t *value;
    const char *rule;
} hwtimer__rule;

/* HWTIMER_OK, or HWTIMER_EINVAL after telling cfg.log_fn the first rule it breaks. */
static int hwtimer__check_config(const hwtimer_config *cfg) {
    uint64_t per_wheel = cfg->ticks_per_wheel, shards = cfg->shards;
    uint64_t width = (uint64_t)1 << hwtimer__wheel_bits(per_wheel);
    const char *missing = cfg->threads ? hwtimer__threads_missing(cfg->threads) : NULL;
    hwtimer__sentence table = {"", 0}; /* read when told: filled below */
    unsigned i;
    const hwtimer__rule rules[] = {
        {cfg->tick_ns == 0, "tick_ns is 0: it must be at least 1 ns (start from "
         "hwtimer_config_default, which sets 100 ms)", NULL, ""},
        {per_wheel == 0 || per_wheel > ((uint64_t)1 << 30), "ticks_per_wheel is ", &per_wheel,
         ": it must be 1 .. 2^30 (hwtimer_config_default sets 512)"},
        {cfg->tick_ns > UINT64_MAX / width, "tick_ns is ", &cfg->tick_ns,
         ": times the wheel's slots (ticks_per_wheel rounded up to a power of two) that "
         "overflows 64 bits of nanoseconds; make either smaller"},
        {cfg->alloc_fn && !cfg->free_fn, "alloc_fn is set but free_fn is NULL", NULL,
         ": set both or neither"},
        {!cfg->alloc_fn && cfg->free_fn, "free_fn is set but alloc_fn is NULL", NULL,
         ": set both or neither"},
        {!cfg->clock_fn && !HWTIMER__HAVE_DEFAULT_CLOCK, "clock_fn is NULL and this build "
         "has no platform clock (HWTIMER_NO_DEFAULT_CLOCK): set clock_fn", NULL, ""},
        {cfg->worker && !cfg->threads, "worker is set but threads is NULL: a worker needs a "
         "threads backend (cfg.threads = hwtimer_threads_default())", NULL, ""},
        {cfg->threads && !HWTIMER__HAVE_THREADS, "threads is set but this build has no "
         "thread code (HWTIMER_NO_THREADS): set threads to NULL", NULL, ""},
        {cfg->threads && !HWTIMER__ATOMICS, "threads is set but this compiler has "
         "neither GCC's nor MSVC's atomics and thread-locals, which threads need: set threads "
         "to NULL", NULL, ""},
        {cfg->threads && !HWTIMER__WHOLE64, "threads is set but this target has no 8-byte "
         "compare-and-swap, so another thread could read half of a 64-bit deadline: set "
         "threads to NULL", NULL, ""},
        {missing != NULL, table.text, NULL,
         " is missing (NULL or 0): every hook and size is required"},
        {shards > HWTIMER__MAX_SHARDS, "shards is ", &shards, ": it must be at most 64"},
        {shards > 1 && !cfg->threads, "shards is ", &shards,
         " but threads is NULL: shards need a threads backend"}};
    hwtimer__say(&table, "threads is a table whose ");
    hwtimer__say(&table, missing ? missing : "");
    for (i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        if (!rules[i].broken) continue;
        hwtimer__tell_refusal(cfg, rules[i].what, rules[i].value, rules[i].rule);
        return HWTIMER_EINVAL;
    }
    return HWTIMER_OK;
}

/* The thread objects, in order: the timer's lock, its conditions (a pass done, the worker's
   wake-up), then with several wheels each wheel's lock and condition. */
static unsigned hwtimer__thread_objects(unsigned shards) { return shards > 1 ? 3 + 2 * shards : 3; }
static int hwtimer__is_mutex(unsigned k) { return k == 0 || (k > 2 && k % 2 == 1); }

/* The field of t that points at thread object k. */
static void **hwtimer__thread_object(hwtimer *t, unsigned k) {
    if (k < 3) return k == 0 ? &t->mutex : k == 1 ? &t->done_cond : &t->worker.wake_cond;
    if (hwtimer__is_mutex(k)) return &hwtimer__shard_at(t, (k - 3) / 2)->mutex;
    return &hwtimer__shard_at(t, (k - 3) / 2)->done_cond;
}

/* Destroys thread objects 0 .. n-1, last first. */
static void hwtimer__unmake_thread_objects(hwtimer *t, unsigned n) {
    while (n-- > 0) {
        (hwtimer__is_mutex(n) ? t->threads->mutex_destroy : t->threads->cond_destroy)(
            *hwtimer__thread_object(t, n));
    }
}

/* Makes the thread objects; undoes what it made on failure. */
static int hwtimer__make_thread_objects(hwtimer *t) {
    unsigned k;
    if (!t->threads) return HWTIMER_OK;
    for (k = 0; k < hwtimer__thread_objects(t->shards); k++) {
        void *object = *hwtimer__thread_object(t, k);
        if ((hwtimer__is_mutex(k) ? t->threads->mutex_init : t->threads->cond_init)(object)) {
            hwtimer__unmake_thread_objects(t, k);
            return HWTIMER_ETHREAD;
        }
    }
    return HWTIMER_OK;
}

/* A walk over a timer's block (hwtimer__carve). */
typedef struct hwtimer__block {
    char *timer; /* where the timer lies, or NULL: the walk only measures */
    size_t size; /* from the timer to the end of the last part */
    int fits;    /* 0 once the size overflowed a size_t */
} hwtimer__block;

/* Takes the next n bytes of the block (NULL when only measuring). */
static void *hwtimer__take(hwtimer__block *b, uint64_t n) {
    char *part = b->timer ? b->timer + b->size : NULL;
    b->fits = b->fits && n <= SIZE_MAX - b->size - 2 * HWTIMER__LINE;
    if (b->fits) b->size = HWTIMER__ROUND_LINE(b->size + (size_t)n);
    return part;
}

/* Lays out a timer's block: the timer, its wheels, their lists and bit trees, the thread
   objects, the threads, a line to align the timer. With t NULL it only measures; else (t
   and its wheels zero-filled) it points each part's owner at it and empties the wheels.
   The block's size, or 0 if that overflows a size_t. */
static size_t hwtimer__carve(hwtimer *t, const hwtimer__geometry *g, const hwtimer_threads *th,
                             unsigned shards) {
    uint64_t heads = hwtimer__wheel_heads(g);
    uint64_t words = hwtimer__wheel_words(g);
    hwtimer__block b = {(char *)t, HWTIMER__SHARDS_AT + shards * HWTIMER__SHARD_STRIDE, 1};
    struct hwtimer__link *lists =
        (struct hwtimer__link *)hwtimer__take(&b, shards * heads * sizeof(struct hwtimer__link));
    uint64_t *bits = (uint64_t *)hwtimer__take(&b, shards * words * sizeof(uint64_t));
    unsigned i, k;
    for (k = 0; th && k < hwtimer__thread_objects(shards); k++) {
        void *object = hwtimer__take(&b, hwtimer__is_mutex(k) ? th->mutex_size : th->cond_size);
        if (t) *hwtimer__thread_object(t, k) = object;
    }
    for (k = 0; th && k < 2; k++) { /* the worker's thread, then the pass's */
        void *thread = hwtimer__take(&b, th->thread_size);
        if (t) *(k == 0 ? &t->worker.thread : &t->pass.thread) = thread;
    }
    hwtimer__take(&b, HWTIMER__LINE); /* to align the timer */
    for (i = 0; t && i < shards; i++) {
        hwtimer__shard *s = hwtimer__shard_at(t, i);
        hwtimer__wheel_init(&s->wheel, g, lists + (size_t)(i * heads), bits + (size_t)(i * words));
        if (!s->mutex) s->mutex = t->mutex;
        if (!s->done_cond) s->done_cond = t->done_cond;
        s->wake_by_clock = UINT64_MAX;
    }
    return b.fits ? b.size : 0;
}

/* Timers with a worker alive (per file under HWTIMER_STATIC) beyond which log_fn hears. */
#define HWTIMER__MANY_WORKERS 64
static long hwtimer__live_workers;

static void hwtimer__count_worker(hwtimer *t) {
    t->worker.counted = 1;
    if (HWTIMER__ATOMIC_ADD(&hwtimer__live_workers, 1) > HWTIMER__MANY_WORKERS && t->log.fn) {
        t->log.fn(t->log.ctx, "hwtimer: this timer was created while 64 or more other timers "
                              "with a worker thread were alive (each is a thread); share one "
                              "timer among many timeouts instead");
    }
}

/* The free_fn of a timer without one. */
static void hwtimer__free(void *block, void *ctx) {
    (void)ctx; /* HWTIMER_FREE may ignore its ctx */
    HWTIMER_FREE(ctx, block);
}

/* The timer's clock: cfg.clock_fn, else the platform's, coarse if asked for. */
static uint64_t (*hwtimer__clock_of(const hwtimer_config *cfg))(void *) {
    uint64_t (*fn)(void *) = HWTIMER__DEFAULT_CLOCK;
    if (cfg->clock_fn) fn = cfg->clock_fn;
    else if (cfg->coarse_clock) fn = HWTIMER__COARSE_CLOCK;
    return fn;
}

/* The clock, and what a delay counts from: the clock, or with a coarse one the clock plus
   its lag G, so that no deadline comes before its delay on the monotonic clock while the
   coarse clock lags by at most G (ctx: G). */
static void hwtimer__choose_clock(hwtimer *t, const hwtimer_config *cfg) {
    t->clock_fn = hwtimer__clock_of(cfg);
    t->clock_ctx = cfg->clock_ctx;
    t->delay_clock = t->clock_fn;
    if (!cfg->clock_fn && cfg->coarse_clock) {
        t->clock_lag = hwtimer__coarse_lag();
        t->clock_ctx = &t->clock_lag;
        t->delay_clock = HWTIMER__COARSE_CLOCK_AHEAD;
        t->wait_clock = HWTIMER__DEFAULT_CLOCK;
    }
}

/* Fills a new timer's fields from its checked config. */
static void hwtimer__configure(hwtimer *t, const hwtimer_config *cfg, unsigned shards) {
    hwtimer__choose_clock(t, cfg);
    t->own_clock = cfg->clock_fn != NULL;
    t->shards = shards;
    t->threads = cfg->threads;
    t->max_pending = cfg->max_pending && shards == 1 ? cfg->max_pending : SIZE_MAX;
    t->arms_inline = !t->threads;
    if (cfg->max_pending && shards > 1) { /* (shards have threads: no inline arming) */
        t->shared_limit = cfg->max_pending > (size_t)LONG_MAX ? LONG_MAX : (long)cfg->max_pending;
    }
    t->worker.mode = cfg->worker != 0;
    t->loop.wake_fn = cfg->wake_fn;
    t->loop.wake_ctx = cfg->wake_ctx;
    t->log.fn = cfg->log_fn;
    t->log.ctx = cfg->log_ctx;
    if (t->worker.mode && t->log.fn) {
        t->log.slow_ns = cfg->tick_ns > HWTIMER__SLOW_CALLBACK_NS ? cfg->tick_ns
                                                                   : HWTIMER__SLOW_CALLBACK_NS;
    }
    t->free_fn = cfg->free_fn ? cfg->free_fn : hwtimer__free;
    t->alloc_ctx = cfg->alloc_ctx;
}

/* Creates a timer from a checked config. */
static int hwtimer__create(hwtimer **out, const hwtimer_config *cfg) {
    unsigned shards = cfg->shards > 1 ? cfg->shards : 1;
    uint64_t (*clock_fn)(void *) = hwtimer__clock_of(cfg);
    hwtimer__geometry g;
    size_t size;
    char *block;
    hwtimer *t;
    hwtimer__geometry_init(&g, cfg->tick_ns, cfg->ticks_per_wheel, clock_fn(cfg->clock_ctx));
    size = hwtimer__carve(NULL, &g, cfg->threads, shards);
    if (!size) {
        hwtimer__tell_refusal(cfg, "the wheel of this ticks_per_wheel and tick_ns needs more "
                              "memory than size_t can count", NULL, "");
        return HWTIMER_ENOMEM;
    }
    block = (char *)(cfg->alloc_fn ? cfg->alloc_fn(size, cfg->alloc_ctx)
                                   : HWTIMER_MALLOC(cfg->alloc_ctx, size));
    if (!block) {
        uint64_t bytes = size;
        hwtimer__tell_refusal(cfg, "allocating ", &bytes, " bytes failed (the allocator "
                              "returned NULL)");
        return HWTIMER_ENOMEM;
    }
    t = (hwtimer *)(void *)(block + (HWTIMER__LINE - (uintptr_t)block % HWTIMER__LINE) %
                                        HWTIMER__LINE);
    memset(t, 0, HWTIMER__SHARDS_AT + shards * HWTIMER__SHARD_STRIDE); /* the timer, its wheels */
    t->block = block;
    t->stats.bytes = size;
    hwtimer__set_time(t, &g, g.start);
    t->pass.left_gen = hwtimer__left_where(&g);
    hwtimer__configure(t, cfg, shards);
    hwtimer__carve(t, &g, cfg->threads, shards);
    if (hwtimer__make_thread_objects(t)) {
        hwtimer__tell_refusal(cfg, "the threads backend could not make a mutex or a condition "
                              "variable (mutex_init or cond_init failed)", NULL, "");
        t->free_fn(block, t->alloc_ctx);
        return HWTIMER_ETHREAD;
    }
    if (t->worker.mode) hwtimer__count_worker(t);
    *out = t;
    return HWTIMER_OK;
}

/* Visits every node pending in s, for hwtimer_foreach (every lock held): the filed ones,
   then a periodic node inside its own callback, pending but in no list. */
static void hwtimer__visit_shard(hwtimer__shard *s, hwtimer__nodes_walk *walk) {
    size_t before = walk->visited;
    hwtimer__wheel_walk(&s->wheel, walk);
    if (hwtimer__running_unfiled(s, s->run.node)) hwtimer__visit_node(walk, s->run.node);
    HWTIMER_ASSERT(walk->visited - before == s->wheel.pending);
    (void)before;
}

/* ====================
   [hwtimer:stop] Stopping and destroying a timer

   Stop: no arming is let in once `stopped` is set (the arming's refusal reads it under the
   wheel's lock); the worker is joined, a pass under way is waited for, every node is
   cancelled and handed back. Destroy: stop, then free the block once no wake-up that
   another thread began still runs (wakes_running). From one of the timer's callbacks stop
   is refused (HWTIMER_EWORKER), and destroy stops and empties the timer at once but leaves
   the freeing to the end of the pass.
   ==================== */

/* Marks t stopped (t's lock held): every later arming takes the general way, which refuses
   it. Only a timer without threads ever arms inline, and only its one thread reads
   arms_inline then; with threads it is already 0 and is not written, so that no thread
   that reads it races with this store. */
static void hwtimer__set_stopped(hwtimer *t) {
    hwtimer__store_int(&t->stopped, 1);
    if (!t->threads) t->arms_inline = 0;
}

/* Cancels every pending node of t and puts the filed ones on `out`, to be handed back with
   no lock held; returns how many those were (t's lock held, t stopped). The wheels' locks
   are taken one at a time: `stopped` was set first, so an arming that takes a wheel's lock
   after this emptied the wheel is refused, and one that came before is cancelled here. A
   periodic node inside its own callback (only when a callback destroys the timer) is
   cancelled by its fate, neither handed back nor counted: its callback is running. */
static size_t hwtimer__cancel_all(hwtimer *t, struct hwtimer__link *out) {
    size_t n = 0, k;
    unsigned i;
    hwtimer__init_out(out);
    for (i = 0; i < t->shards; i++) {
        hwtimer__shard *s = hwtimer__shard_at(t, i);
        hwtimer__lock_wheel(t, s);
        if (hwtimer__running_unfiled(s, s->run.node)) hwtimer__cancel_locked(t, s, s->run.node);
        k = hwtimer__wheel_cancel_all(&s->wheel, out);
        hwtimer__release_shared(t, k);
        hwtimer__unlock_wheel(t, s);
        n += k;
    }
    return n;
}

/* Frees a stopped timer that no worker or pass uses any more, once no wake-up that
   another thread began still runs: such a thread counted itself in wakes_running under a
   wheel's lock, before stop emptied that wheel, and may not have taken the timer's lock
   yet (hwtimer__unlock_and_wake). While the count is not 0 this takes and releases the
   timer's lock, so that it sleeps while the wake-up holds the lock instead of spinning. */
static void hwtimer__finish_destroy(hwtimer *t) {
    hwtimer__fork_list_remove(t);
    while (HWTIMER__ATOMIC_ADD_SYNC(&t->loop.wakes_running, 0) != 0) {
        hwtimer__lock(t, t->mutex); /* waits while the wake-up holds it */
        hwtimer__unlock(t, t->mutex);
    }
    if (t->worker.counted) HWTIMER__ATOMIC_ADD(&hwtimer__live_workers, -1);
    if (t->threads) hwtimer__unmake_thread_objects(t, hwtimer__thread_objects(t->shards));
    t->free_fn(t->block, t->alloc_ctx);
}

/* hwtimer_stop (its rules at its declaration). `stopped` is set first, under t's lock, so
   that no pass begins and no arming is let in from then on. A worker is woken and joined
   with t's lock released, since it needs that lock to end its pass and leave its loop;
   then a pass under way on another thread (caller-driven) is waited for; then every node
   is cancelled, each wheel under its lock, and handed back with no lock held, so that
   `unprocessed` may schedule the node on another timer or free it. */
static int64_t hwtimer__stop(hwtimer *t, hwtimer_fn unprocessed, void *ctx) {
    struct hwtimer__link out[HWTIMER_SLOT_LISTS];
    size_t n;
    int err;
    hwtimer__lock(t, t->mutex);
    err = hwtimer__in_own_callback(t) ? HWTIMER_EWORKER : HWTIMER_OK;
    if (err || t->stopped) {
        hwtimer__unlock(t, t->mutex);
        return err;
    }
    hwtimer__set_stopped(t);
    if (t->worker.running) {
        t->threads->cond_broadcast(t->worker.wake_cond);
        hwtimer__unlock(t, t->mutex);
        t->threads->thread_join(t->worker.thread);
        hwtimer__lock(t, t->mutex);
        hwtimer__store_int(&t->worker.running, 0);
    }
    while (t->pass.on) hwtimer__wait(t, t->done_cond, t->mutex, &t->waiters);
    n = hwtimer__cancel_all(t, out);
    hwtimer__unlock(t, t->mutex);
    hwtimer__hand_back(out, unprocessed, ctx);
    return (int64_t)n;
}

/* hwtimer_destroy. From the timer's own callback the timer cannot be freed under the pass
   that runs it: it is stopped and emptied now, and the pass's end (hwtimer_advance_max, or
   the worker as it exits) frees it. */
static void hwtimer__destroy(hwtimer *t) {
    struct hwtimer__link out[HWTIMER_SLOT_LISTS]; /* (from a callback: handed back to none) */
    hwtimer__lock(t, t->mutex);
    if (hwtimer__in_own_callback(t)) {
        t->destroy_deferred = 1;
        hwtimer__set_stopped(t);
        hwtimer__cancel_all(t, out);
        hwtimer__unlock(t, t->mutex);
        return;
    }
    hwtimer__unlock(t, t->mutex);
    hwtimer__stop(t, NULL, NULL);
    hwtimer__finish_destroy(t);
}

/* ====================
   [hwtimer:worker] The worker thread
   ==================== */

/* How long the worker waits on the monotonic clock for the timer's clock, read as `now`,
   to reach `next` (> now). Without a lag, next - now. A coarse clock (clock_lag G)
   reaches `next` at most G after the monotonic clock does, so the wait ends when the
   monotonic clock reaches next + G: one wait, rather than a spin of short ones while the
   coarse clock catches up. While the coarse clock lags by more than G, so that next + G
   has passed already on the monotonic clock, the wait is G. */
static uint64_t hwtimer__wait_ns(const hwtimer *t, uint64_t next, uint64_t now) {
    uint64_t until, monotonic;
    if (!t->clock_lag) return next - now;
    until = hwtimer__add_sat(next, t->clock_lag);
    monotonic = t->wait_clock(NULL);
    return until > monotonic ? until - monotonic : t->clock_lag;
}

/* The worker's loop, which holds t's lock except while it sleeps or a callback runs: it
   gives itself an answer, runs a pass if the answer is due, else sleeps until the
   answer's time, or until a filing before it (hwtimer__wake) or stop wakes it. Its passes
   are not bounded, so it never leaves timeouts in `left`. If one of its callbacks
   destroyed the timer, the worker frees it as it leaves, after detaching its own thread,
   which no one will join. */
static void hwtimer__worker_main(void *arg) {
    hwtimer *t = (hwtimer *)arg;
    int destroy;
    hwtimer__lock(t, t->mutex);
    while (!t->stopped) {
        /* The clock is read after the answer, not before: the answer takes every wheel's
           lock and may wait for it, and a `now` read before that wait would have the
           worker sleep next - now from after it, past `next`; no filing would wake it,
           and the timeout due at `next` would run late by the wait. */
        uint64_t next = hwtimer__give_answer(t);
        uint64_t now = t->clock_fn(t->clock_ctx);
        /* A clock that stepped back: a pass at the timer's time runs what is due by then,
           where hwtimer__pass_begin would refuse `now` and the worker would spin. */
        if (now < t->pass.last_now) now = t->pass.last_now;
        if (next <= now) {
            hwtimer__pass(t, now);
            continue;
        }
        t->worker.sleeping = 1;
        t->threads->cond_wait(t->worker.wake_cond, t->mutex,
                              next == UINT64_MAX ? UINT64_MAX : hwtimer__wait_ns(t, next, now));
        t->worker.sleeping = 0;
        t->stats.wakeups++;
    }
    destroy = t->destroy_deferred;
    hwtimer__unlock(t, t->mutex);
    if (destroy) {
        t->threads->thread_detach(t->worker.thread);
        hwtimer__finish_destroy(t);
    }
}

/* Starts the worker thread unless it runs (t's lock held): 0, or -1 if the thread could
   not start. `running` is stored with release: hwtimer__start_worker reads it without the
   lock. */
static int hwtimer__start_worker_locked(hwtimer *t) {
    if (t->worker.running) return 0;
    if (t->threads->thread_start(t->worker.thread, hwtimer__worker_main, t)) return -1;
    hwtimer__store_int(&t->worker.running, 1);
    return 0;
}

/* Starts the worker, in worker mode, if it does not run yet: for every arming the general
   way, before it takes its wheel's lock (this takes the timer's, which comes first in the
   lock order), and for hwtimer_start. `running` is read without the lock first, so that
   the usual call, the worker running, takes no lock; a stale 0 only sends the caller to
   the lock, under which it reads `running` again. After stop it starts nothing and returns
   HWTIMER_OK: the arming is then refused under its wheel's lock, and hwtimer_start tests
   `stopped` itself. */
HWTIMER__ALWAYS_INLINE int hwtimer__start_worker(hwtimer *t) {
    int err = HWTIMER_OK;
    if (!t->worker.mode || hwtimer__load_int(&t->worker.running)) return HWTIMER_OK;
    hwtimer__lock(t, t->mutex);
    if (!t->stopped && hwtimer__start_worker_locked(t)) err = HWTIMER_ETHREAD;
    hwtimer__unlock(t, t->mutex);
    return err;
}

/* ====================
   [hwtimer:entries] The entry points' paths: schedule, reschedule, cancel

   Without threads the usual schedule, reschedule and cancel run inline in the caller and
   take no lock ("The fast path" in THE DESIGN). Everything else takes the general way,
   out of line: the clock read once, before any lock; the node's shard chosen and its lock
   taken; the body; the lock released, then the wake-up a filing called for made.
   ==================== */

/* How an arming's `when` counts: a deadline (the _at forms), a delay from the clock (the
   forms without a suffix), or a number of ticks from the timer's time (_ticks). */
typedef enum hwtimer__form { HWTIMER__DEADLINE, HWTIMER__DELAY, HWTIMER__TICKS } hwtimer__form;

/* The deadline `ticks` ticks after the timer's time (hwtimer_schedule_ticks), UINT64_MAX
   if that does not fit; the timer's time is read without a lock ("Reads without a lock"
   in THE DESIGN). */
static uint64_t hwtimer__ticks_ahead(const hwtimer *t, uint64_t ticks) {
    uint64_t tick_ns = hwtimer__shard_at(t, 0)->wheel.geo.tick_ns;
    if (ticks > UINT64_MAX / tick_ns) return UINT64_MAX;
    return hwtimer__add_sat(hwtimer__load64(&t->pass.last_now), ticks * tick_ns);
}

/* An arming the general way once it holds the lock of the node's shard
   (hwtimer__lock_to_arm): that shard, the clock as read before the lock (0 if not read),
   and the deadline. */
typedef struct hwtimer__locked_arming {
    hwtimer__shard *s;
    uint64_t now;
    uint64_t deadline;
} hwtimer__locked_arming;

/* Begins an arming the general way: HWTIMER_OK with the lock of the shard that arms `to`
   held, else the error with no lock held. Before the lock, to keep its hold short: the
   clock is read if the form is a delay (which counts from clock_lag after the reading:
   CLOCKS), or if a worker sleeps on another clock than the timer's, the user's
   (hwtimer__clock_past); `when` becomes a deadline; and the worker is started if it does
   not run yet, which takes the timer's lock, not to be taken while a wheel's is held. A
   retired node is refused before the lock, since RETIRED is left only by
   hwtimer_timeout_init ("Reads without a lock" in THE DESIGN), and again under it, since
   the lock orders a retire and an arming that race. */
HWTIMER__ALWAYS_INLINE int hwtimer__lock_to_arm(hwtimer *t, hwtimer_timeout *to, uint64_t when,
                                                hwtimer__form form, hwtimer__locked_arming *a) {
    int read_clock = form == HWTIMER__DELAY || (t->worker.mode && t->own_clock);
    int err;
    a->now = read_clock ? t->clock_fn(t->clock_ctx) : 0;
    if (form == HWTIMER__DELAY) {
        a->deadline = hwtimer__add_sat(hwtimer__add_sat(a->now, t->clock_lag), when);
    } else {
        a->deadline = form == HWTIMER__TICKS ? hwtimer__ticks_ahead(t, when) : when;
    }
    if (hwtimer__is_retired(to)) return HWTIMER_ERETIRED;
    err = hwtimer__start_worker(t);
    if (err) return err;
    a->s = hwtimer__shard_to_arm(t, to);
    hwtimer__lock(t, a->s->mutex);
    if (to->state != HWTIMER_RETIRED) return HWTIMER_OK;
    hwtimer__unlock(t, a->s->mutex);
    return HWTIMER_ERETIRED;
}

/* Arms `to` in the locked shard a->s with a callback, an argument and a period, unless
   hwtimer__arm_refusal refuses (its error). When `to` is the node whose callback is
   running, its fate becomes REARMED: the callback's return then does not re-arm it by its
   period, and lets a waiting cancel cancel this arming (hwtimer__cancel_for_waiter). A
   watched filing, or a clock past the worker's wake-up, goes to hwtimer__note_filing. */
HWTIMER__ALWAYS_INLINE int hwtimer__arm_locked(hwtimer *t, const hwtimer__locked_arming *a,
                                               hwtimer_timeout *to, uint64_t period,
                                               hwtimer_fn fn, void *arg) {
    hwtimer__shard *s = a->s;
    uint64_t tick;
    int err = hwtimer__arm_refusal(t, &s->wheel, to);
    if (err) return err;
    if (to == s->run.node) s->run.fate = HWTIMER__REARMED;
    hwtimer__arm_fill(&s->wheel, to, period, fn, arg);
    s->wheel.pending++;
    if (hwtimer__wheel_file(&s->wheel, to, a->deadline, &tick) || hwtimer__clock_past(s, a->now)) {
        hwtimer__note_filing(t, s, tick, a->now);
    }
    return HWTIMER_OK;
}

/* A schedule the general way: the shard's lock taken, the node armed, the lock released
   and the wake-up made that the filing called for. */
static HWTIMER__NOINLINE int hwtimer__arm_general(hwtimer *t, hwtimer_timeout *to, uint64_t when,
                                                  hwtimer__form form, uint64_t period,
                                                  hwtimer_fn fn, void *arg) {
    hwtimer__locked_arming a;
    int err = hwtimer__lock_to_arm(t, to, when, form, &a);
    if (err) return err;
    err = hwtimer__arm_locked(t, &a, to, period, fn, arg);
    hwtimer__unlock_and_wake(t, a.s);
    return err;
}

/* A reschedule the general way: a node pending in the locked wheel gets the new deadline
   (hwtimer__move_locked); one that is not pending is armed again with its own callback,
   argument and period; one that was never armed has no callback to run and is refused.
   Out of line with few arguments, so that the inline reschedule calls it without building
   a frame of its own. */
static HWTIMER__NOINLINE int hwtimer__reschedule_general(hwtimer *t, hwtimer_timeout *to,
                                                         uint64_t when, hwtimer__form form) {
    hwtimer__locked_arming a;
    int err = hwtimer__lock_to_arm(t, to, when, form, &a);
    if (err) return err;
    if (hwtimer__is_pending_in(&a.s->wheel, to)) {
        hwtimer__move_locked(t, a.s, to, a.now, a.deadline);
    } else if (!to->fn) {
        err = HWTIMER_EINVAL;
    } else {
        err = hwtimer__arm_locked(t, &a, to, to->period, to->fn, to->arg);
    }
    hwtimer__unlock_and_wake(t, a.s);
    return err;
}

/* The wheel of a timer without threads, which has exactly one: the inline paths' wheel. Its
   address is a constant offset from the timer's, so that finding it loads nothing. */
HWTIMER__ALWAYS_INLINE hwtimer__wheel *hwtimer__only_wheel(const hwtimer *t) {
    return &hwtimer__shard_at(t, 0)->wheel;
}

/* A reschedule without threads that the inline push later could not do. A node pending in
   the wheel is moved (hwtimer__move_locked, with no clock: without threads there is no
   worker to wake by it); any other takes the general way, which arms it again with its
   own callback or refuses it. */
static HWTIMER__NOINLINE int hwtimer__reschedule_unthreaded(hwtimer *t, hwtimer_timeout *to,
                                                            uint64_t deadline) {
    hwtimer__shard *s = hwtimer__shard_at(t, 0);
    if (!hwtimer__is_pending_in(&s->wheel, to)) {
        return hwtimer__reschedule_general(t, to, deadline, HWTIMER__DEADLINE);
    }
    hwtimer__move_locked(t, s, to, 0, deadline);
    return HWTIMER_OK;
}

/* The timer's half of the fast path's permission ("The fast path" in THE DESIGN): no
   threads and not stopped (arms_inline), room in the wheel under max_pending, and, for a
   count of ticks, a count whose deadline fits in 64 bits. The wheel's count is read only
   once arms_inline said there are no threads: with threads other threads write it. */
HWTIMER__ALWAYS_INLINE int hwtimer__timer_arms_inline(const hwtimer *t, uint64_t when,
                                                      hwtimer__form form) {
    return t->arms_inline && hwtimer__only_wheel(t)->pending < t->max_pending &&
           (form != HWTIMER__TICKS || when <= t->pass.ticks_room);
}

/* The node's half, asked only once the timer's half said yes (so without threads, and a
   plain read is safe). A node may be armed inline when its state is IDLE or CANCELLED (not
   PENDING or EXPIRED: it is armed, or running; not RETIRED: refused) and, unless
   `leeway_too`, its leeway is zero. One test of the 4-byte word that holds the state byte
   and the leeway's three bytes answers both questions:

       state s          (s ^ 1) + 3     & 1010b
       IDLE      0      4   0100b       0
       PENDING   1      3   0011b       2
       EXPIRED   2      6   0110b       2
       CANCELLED 3      5   0101b       0
       RETIRED   4      8   1000b       8

   The sum stays below 16, so nothing carries out of the state's byte into the leeway's; the
   mask also covers the leeway's bytes unless `leeway_too`. The static assertion below ties
   the table to the state values. */
typedef char hwtimer__node_test_knows_the_states
    [HWTIMER_IDLE == 0 && HWTIMER_PENDING == 1 && HWTIMER_EXPIRED == 2 &&
     HWTIMER_CANCELLED == 3 && HWTIMER_RETIRED == 4 ? 1 : -1];
typedef char hwtimer__node_test_sum_fits_the_state_byte[(4 ^ 1) + 3 < 16 ? 1 : -1];
HWTIMER__ALWAYS_INLINE int hwtimer__node_arms_inline(const hwtimer_timeout *to, int leeway_too) {
    uint32_t one = hwtimer__little_endian() ? 1u : 1u << 24; /* the state byte's 1 in the word */
    uint32_t leeway = leeway_too ? 0 : hwtimer__leeway_bits();
    return (((hwtimer__state_word(to) ^ one) + 3u * one) & (leeway | 10u * one)) == 0;
}

/* The inline arming, both halves of the permission given, with the node's leeway key (0:
   no leeway, else the wheel's memo holds its grid). Its tick must lie past notice_upto
   (see the wheel's contract in THE DESIGN), else it takes the general way, with `when`
   made a deadline so that the clock is not read twice. For a count of ticks the tick is
   the timer's tick plus the count, no division; hwtimer__timer_arms_inline saw that it
   fits. No fate is written: a callback's own node comes here only once the callback
   cancelled it (a running node is EXPIRED), and its fate CANCELLED already keeps the
   return from re-arming it; REARMED would add only hwtimer__cancel_for_waiter, which has
   no waiter to serve without threads. */
HWTIMER__ALWAYS_INLINE int hwtimer__arm_inline(hwtimer *t, hwtimer_timeout *to, uint64_t when,
                                               hwtimer__form form, uint64_t period,
                                               hwtimer_fn fn, void *arg, uint32_t key) {
    hwtimer__wheel *w = hwtimer__only_wheel(t);
    uint64_t e;
    if (form == HWTIMER__TICKS) {
        e = t->pass.last_tick + when;
        when = t->pass.last_now + when * w->geo.tick_ns;
    } else {
        if (form == HWTIMER__DELAY) when = hwtimer__add_sat(t->delay_clock(t->clock_ctx), when);
        e = hwtimer__due_tick(&w->geo, when);
    }
    if (key) e = hwtimer__leeway_grid(w, e);
    if (e <= w->notice_upto) {
        return hwtimer__arm_general(t, to, when, HWTIMER__DEADLINE, period, fn, arg);
    }
    hwtimer__arm_fill(w, to, period, fn, arg);
    w->pending++;
    /* last: when the slot was empty the filing ends with its marking (hwtimer__mark_slot),
       so nothing here is kept alive across that call */
    hwtimer__wheel_file_past(w, to, when, e, HWTIMER__ONE_STORE, key);
    return HWTIMER_OK;
}

/* The armings hwtimer__arm does not make inline. A node whose leeway is not the memo's
   makes the memo its own, then is armed inline: the wheel keeps the grid of one leeway,
   the last seen, since working out a grid costs a division. Everything the fast path's
   permission refuses takes the general way. */
static HWTIMER__NOINLINE int hwtimer__arm_other(hwtimer *t, hwtimer_timeout *to, uint64_t when,
                                                hwtimer__form form, uint64_t period,
                                                hwtimer_fn fn, void *arg) {
    if (hwtimer__timer_arms_inline(t, when, form) && hwtimer__node_arms_inline(to, 1)) {
        hwtimer__set_leeway_memo(hwtimer__only_wheel(t), to);
        return hwtimer__arm_inline(t, to, when, form, period, fn, arg, hwtimer__leeway_key(to));
    }
    return hwtimer__arm_general(t, to, when, form, period, fn, arg);
}

/* The schedule forms. Without threads the usual armings are inline and call nothing but
   the clock: a node with no leeway (one test of its state word), then one with the leeway
   the wheel saw last (its grid in the memo). The rest goes to hwtimer__arm_other. */
HWTIMER__ALWAYS_INLINE int hwtimer__arm(hwtimer *t, hwtimer_timeout *to, uint64_t when,
                                        hwtimer__form form, uint64_t period, hwtimer_fn fn,
                                        void *arg) {
    if (!t || !to || !fn) return HWTIMER_EINVAL;
    if (hwtimer__timer_arms_inline(t, when, form)) {
        if (hwtimer__node_arms_inline(to, 0)) {
            return hwtimer__arm_inline(t, to, when, form, period, fn, arg, 0);
        }
        if (hwtimer__node_arms_inline(to, 1) &&
            hwtimer__leeway_key(to) == hwtimer__only_wheel(t)->memo.key) {
            return hwtimer__arm_inline(t, to, when, form, period, fn, arg, hwtimer__leeway_key(to));
        }
    }
    return hwtimer__arm_other(t, to, when, form, period, fn, arg);
}

/* The reschedule forms (a deadline or a delay). Without threads the usual one, an idle
   timeout pushed later while it waits in a coarse level, is one store, inline. A stopped
   timer has no pending node, so the push later fails and the general way refuses. */
HWTIMER__ALWAYS_INLINE int hwtimer__reschedule(hwtimer *t, hwtimer_timeout *to, uint64_t when,
                                               hwtimer__form form) {
    hwtimer__wheel *w;
    if (!t || !to) return HWTIMER_EINVAL;
    if (t->threads) return hwtimer__reschedule_general(t, to, when, form);
    if (form == HWTIMER__DELAY) when = hwtimer__add_sat(t->delay_clock(t->clock_ctx), when);
    w = hwtimer__only_wheel(t); /* after the clock's call: nothing is kept across it */
    return to->wheel == w && hwtimer__wheel_push_later(w, to, when)
               ? HWTIMER_OK
               : hwtimer__reschedule_unthreaded(t, to, when);
}

/* What a cancel that finds the callback of its node running on another thread does. */
typedef enum hwtimer__cancel_kind {
    HWTIMER__CANCEL_WAIT,  /* hwtimer_cancel: waits for it to return */
    HWTIMER__CANCEL_TRY,   /* hwtimer_try_cancel: returns HWTIMER_ERUNNING */
    HWTIMER__CANCEL_RETIRE /* hwtimer_retire: retires the node, then waits */
} hwtimer__cancel_kind;

/* Is the callback of `to` running on another thread than the caller's (s's lock held)?
   pass.thread is read under s's lock, after run.node, which the pass set under it after
   writing pass.thread: the lock orders the two ("Reads without a lock" in THE DESIGN). */
static int hwtimer__runs_elsewhere(const hwtimer *t, const hwtimer__shard *s,
                                   const hwtimer_timeout *to) {
    return s->run.node == to && t->threads && !t->threads->thread_is_self(t->pass.thread);
}

/* How long a synchronous cancel waits for a callback before it tells log_fn. */
#define HWTIMER__CANCEL_PATIENCE_NS 1000000000u

/* Tells log_fn that a cancel has waited a second for a callback (no lock held). */
static void hwtimer__tell_long_wait(const hwtimer *t, hwtimer__cancel_kind kind) {
    hwtimer__sentence msg = {"", 0};
    hwtimer__say(&msg, kind == HWTIMER__CANCEL_RETIRE ? "hwtimer: hwtimer_retire"
                                                      : "hwtimer: hwtimer_cancel");
    hwtimer__say(&msg, " has waited 1 s for a callback on another thread and goes on waiting: "
                       "if this thread holds a lock the callback takes, they wait for each "
                       "other for ever (under such a lock, cancel with hwtimer_try_cancel, "
                       "which never waits)");
    t->log.fn(t->log.ctx, msg.text);
}

/* Waits for the callback of `to`, which runs on another thread (s's lock held, the cancel
   listed in s->cancel_waits). With a log_fn it waits a second at most at a time, so that
   it can tell log_fn, once (`*told`), when the timer's clock says it has waited a second
   since `began`; a clock that does not move (a fake one) never tells. */
static void hwtimer__wait_for_callback(hwtimer *t, hwtimer__shard *s, hwtimer__cancel_kind kind,
                                       uint64_t began, int *told) {
    int watch = t->log.fn && !*told;
    uint64_t now;
    t->threads->cond_wait(s->done_cond, s->mutex, watch ? HWTIMER__CANCEL_PATIENCE_NS : UINT64_MAX);
    if (!watch) return;
    now = t->clock_fn(t->clock_ctx);
    /* (a clock that stepped back below `began` has not waited a second either) */
    if (now < hwtimer__add_sat(began, HWTIMER__CANCEL_PATIENCE_NS)) return;
    *told = 1;
    hwtimer__unlock(t, s->mutex); /* log_fn is called with no lock of the timer held */
    hwtimer__tell_long_wait(t, kind);
    hwtimer__lock(t, s->mutex);
}

/* Takes `me` out of s's list of waiting cancels (s's lock held). */
static void hwtimer__unlist_wait(hwtimer__shard *s, hwtimer__cancel_wait *me) {
    hwtimer__cancel_wait **link = &s->cancel_waits;
    while (*link != me) link = &(*link)->next;
    *link = me->next;
    s->waiters--;
}

/* A cancel the general way, of each kind: with threads, and without them whatever
   hwtimer_cancel does not cancel inline. The shard is found without a lock and checked
   under it: a node that names no wheel of t is pending on another timer (HWTIMER_EINVAL)
   or not at all (0), and one that names another wheel once the lock is held was armed on
   another timer meanwhile. A retire finds its shard as an arming does (the node may never
   have been armed on t), so that a retire and an arming that race take the same lock.
   A cancel that finds the callback of `to` running on another thread waits for it on
   done_cond, since hwtimer_cancel is synchronous: once it returns, the callback has
   returned and the node may be freed. The cancel is listed in s->cancel_waits meanwhile,
   so that an arming the callback makes is cancelled as it returns
   (hwtimer__cancel_for_waiter, which sets `me.hit`). Each wake-up cancels and looks
   again, since another thread may have armed the node and a pass run it again meanwhile.
   A retire marks the node RETIRED before it waits, so that the callback cannot arm it
   again. hwtimer_try_cancel waits for nothing: HWTIMER_ERUNNING. */
static HWTIMER__NOINLINE int hwtimer__cancel_general(hwtimer *t, hwtimer_timeout *to,
                                                     hwtimer__cancel_kind kind) {
    hwtimer__shard *s = kind == HWTIMER__CANCEL_RETIRE ? hwtimer__shard_to_arm(t, to)
                                                        : hwtimer__shard_of(t, to);
    hwtimer__cancel_wait me;
    uint64_t began = 0;
    int cancelled = 0, waiting = 0, told = 0;
    if (!s) return hwtimer__is_armed(to) ? HWTIMER_EINVAL : 0; /* another timer's, or none */
    hwtimer__lock(t, s->mutex);
    if (hwtimer__is_pending_elsewhere(&s->wheel, to)) { /* armed on another timer meanwhile */
        hwtimer__unlock(t, s->mutex);
        return HWTIMER_EINVAL;
    }
    for (;;) {
        cancelled |= hwtimer__cancel_locked(t, s, to);
        if (kind == HWTIMER__CANCEL_RETIRE) hwtimer__set_state(to, HWTIMER_RETIRED);
        if (!hwtimer__runs_elsewhere(t, s, to)) break;
        if (kind == HWTIMER__CANCEL_TRY) {
            hwtimer__unlock(t, s->mutex);
            return HWTIMER_ERUNNING;
        }
        if (!waiting) {
            me.to = to;
            me.hit = 0;
            me.next = s->cancel_waits;
            s->cancel_waits = &me;
            s->waiters++;
            waiting = 1;
            if (t->log.fn) began = t->clock_fn(t->clock_ctx);
        }
        hwtimer__wait_for_callback(t, s, kind, began, &told);
    }
    if (waiting) {
        hwtimer__unlist_wait(s, &me);
        cancelled |= me.hit;
    }
    hwtimer__unlock(t, s->mutex);
    return cancelled;
}

/* ====================
   [hwtimer:public] The public functions, in the order the API declares them
   ==================== */

HWTIMER_DEF void hwtimer_config_default(hwtimer_config *cfg) {
    if (!cfg) return;
    memset(cfg, 0, sizeof *cfg);
    cfg->tick_ns = 100000000u;
    cfg->ticks_per_wheel = 512;
}

HWTIMER_DEF int hwtimer_create(hwtimer **out, const hwtimer_config *cfg) {
    hwtimer_config defaults;
    int err;
    if (!out) {
        hwtimer__tell_refusal(cfg, "out is NULL: pass the address of a hwtimer pointer", NULL, "");
        return HWTIMER_EINVAL;
    }
    *out = NULL;
    if (!cfg) {
        hwtimer_config_default(&defaults);
        cfg = &defaults;
    }
    err = hwtimer__check_config(cfg);
    if (!err) err = hwtimer__create(out, cfg);
    if (!err) hwtimer__fork_list_add(*out);
    return err;
}

HWTIMER_DEF void hwtimer_destroy(hwtimer *t) {
    if (t) hwtimer__destroy(t);
}

HWTIMER_DEF const hwtimer_threads *hwtimer_threads_default(void) {
    const hwtimer_threads *th = hwtimer_threads_pthread();
    if (!th) th = hwtimer_threads_win32();
    if (!th) th = hwtimer_threads_c11();
    return th;
}

HWTIMER_DEF const hwtimer_threads *hwtimer_threads_pthread(void) { return HWTIMER__PTHREAD_TABLE; }

HWTIMER_DEF const hwtimer_threads *hwtimer_threads_c11(void) { return HWTIMER__C11_TABLE; }

HWTIMER_DEF const hwtimer_threads *hwtimer_threads_win32(void) { return HWTIMER__WIN32_TABLE; }

HWTIMER_DEF void hwtimer_timeout_init(hwtimer_timeout *to) { if (to) memset(to, 0, sizeof *to); }

HWTIMER_DEF HWTIMER__HOT int hwtimer_schedule(hwtimer *t, hwtimer_timeout *to,
                                              uint64_t delay_ns, hwtimer_fn fn, void *arg) {
    return hwtimer__arm(t, to, delay_ns, HWTIMER__DELAY, 0, fn, arg);
}

HWTIMER_DEF HWTIMER__HOT int hwtimer_schedule_at(hwtimer *t, hwtimer_timeout *to,
                                                 uint64_t deadline_ns, hwtimer_fn fn, void *arg) {
    return hwtimer__arm(t, to, deadline_ns, HWTIMER__DEADLINE, 0, fn, arg);
}

HWTIMER_DEF HWTIMER__HOT int hwtimer_schedule_ticks(hwtimer *t, hwtimer_timeout *to,
                                                    uint64_t ticks, hwtimer_fn fn, void *arg) {
    return hwtimer__arm(t, to, ticks, HWTIMER__TICKS, 0, fn, arg);
}

HWTIMER_DEF int hwtimer_schedule_periodic(hwtimer *t, hwtimer_timeout *to, uint64_t delay_ns,
                                          uint64_t period_ns, hwtimer_fn fn, void *arg) {
    if (!period_ns) return HWTIMER_EINVAL;
    return hwtimer__arm(t, to, delay_ns, HWTIMER__DELAY, period_ns, fn, arg);
}

HWTIMER_DEF int hwtimer_schedule_periodic_at(hwtimer *t, hwtimer_timeout *to,
                                             uint64_t deadline_ns, uint64_t period_ns,
                                             hwtimer_fn fn, void *arg) {
    if (!period_ns) return HWTIMER_EINVAL;
    return hwtimer__arm(t, to, deadline_ns, HWTIMER__DEADLINE, period_ns, fn, arg);
}

HWTIMER_DEF HWTIMER__HOT int hwtimer_reschedule(hwtimer *t, hwtimer_timeout *to,
                                                uint64_t delay_ns) {
    return hwtimer__reschedule(t, to, delay_ns, HWTIMER__DELAY);
}

HWTIMER_DEF HWTIMER__HOT int hwtimer_reschedule_at(hwtimer *t, hwtimer_timeout *to,
                                                   uint64_t deadline_ns) {
    return hwtimer__reschedule(t, to, deadline_ns, HWTIMER__DEADLINE);
}

HWTIMER_DEF HWTIMER__HOT int hwtimer_cancel(hwtimer *t, hwtimer_timeout *to) {
    if (!t || !to) return HWTIMER_EINVAL;
    /* Without threads a filed node is cancelled inline; there are no shards, so no count
       shared between wheels to give its place back to. */
    if (!t->threads && hwtimer__wheel_cancel(hwtimer__only_wheel(t), to)) return 1;
    return hwtimer__cancel_general(t, to, HWTIMER__CANCEL_WAIT);
}

HWTIMER_DEF int hwtimer_try_cancel(hwtimer *t, hwtimer_timeout *to) {
    if (!t || !to) return HWTIMER_EINVAL;
    return hwtimer__cancel_general(t, to, HWTIMER__CANCEL_TRY);
}

HWTIMER_DEF int hwtimer_retire(hwtimer *t, hwtimer_timeout *to) {
    if (!t || !to) return HWTIMER_EINVAL;
    return hwtimer__cancel_general(t, to, HWTIMER__CANCEL_RETIRE);
}

HWTIMER_DEF int hwtimer_timeout_state(const hwtimer_timeout *to) {
    return to ? (int)hwtimer__load_u8(&to->state) : (int)HWTIMER_EINVAL;
}

HWTIMER_DEF uint64_t hwtimer_timeout_deadline(const hwtimer_timeout *to) {
    return to ? hwtimer__load64(&to->deadline) : 0;
}

HWTIMER_DEF int hwtimer_is_pending(hwtimer *t, const hwtimer_timeout *to) {
    hwtimer__shard *s;
    int pending, locked;
    if (!t || !to || !(s = hwtimer__shard_of(t, to))) return 0;
    locked = hwtimer__lock_unless_visiting(t, s);
    pending = hwtimer__is_pending_in(&s->wheel, to);
    if (locked) hwtimer__unlock(t, s->mutex);
    return pending;
}

HWTIMER_DEF void *hwtimer_timeout_arg(const hwtimer_timeout *to) {
    return to ? hwtimer__load_arg(&to->arg) : NULL;
}

HWTIMER_DEF uint64_t hwtimer_timeout_period(const hwtimer_timeout *to) {
    return to ? hwtimer__load64(&to->period) : 0;
}

HWTIMER_DEF uint64_t hwtimer_timeout_due_in(hwtimer *t, const hwtimer_timeout *to) {
    hwtimer__shard *s;
    uint64_t now, at = UINT64_MAX;
    int locked;
    if (!t || !to || !(s = hwtimer__shard_of(t, to))) return UINT64_MAX;
    now = t->clock_fn(t->clock_ctx);
    locked = hwtimer__lock_unless_visiting(t, s);
    if (hwtimer__is_pending_in(&s->wheel, to)) at = hwtimer__run_time(s, to);
    if (locked) hwtimer__unlock(t, s->mutex);
    return at == UINT64_MAX ? UINT64_MAX : at > now ? at - now : 0;
}

HWTIMER_DEF int hwtimer_timeout_set_leeway(hwtimer_timeout *to, uint64_t leeway_ns) {
    unsigned exp = 0;
    if (!to) return HWTIMER_EINVAL;
    if (hwtimer__is_armed(to)) return HWTIMER_EBUSY;
    for (; leeway_ns > 0xFFFFu; exp++) leeway_ns /= 10u;
    to->leeway_exp = (uint8_t)exp;
    to->leeway_digits = (uint16_t)leeway_ns;
    return HWTIMER_OK;
}

HWTIMER_DEF size_t hwtimer_pending(hwtimer *t) {
    hwtimer_stats stats;
    hwtimer_stats_get(t, &stats);
    return stats.pending;
}

HWTIMER_DEF size_t hwtimer_foreach(hwtimer *t, hwtimer_fn visit, void *ctx) {
    hwtimer__nodes_walk walk = {visit, ctx, 0, NULL};
    const hwtimer *outer;
    unsigned i;
    if (!t || !visit) return 0;
    hwtimer__lock_all(t);
    outer = hwtimer__visiting;
    if (HWTIMER__HAVE_THREAD_LOCAL) hwtimer__visiting = t;
    for (i = 0; i < t->shards; i++) hwtimer__visit_shard(hwtimer__shard_at(t, i), &walk);
    if (HWTIMER__HAVE_THREAD_LOCAL) hwtimer__visiting = outer;
    hwtimer__unlock_all(t);
    return walk.visited;
}

HWTIMER_DEF uint64_t hwtimer_now(hwtimer *t) { return t ? t->clock_fn(t->clock_ctx) : 0; }

HWTIMER_DEF size_t hwtimer_advance(hwtimer *t, uint64_t now_ns) {
    return hwtimer_advance_max(t, now_ns, 0);
}

HWTIMER_DEF size_t hwtimer_advance_max(hwtimer *t, uint64_t now_ns, size_t max_callbacks) {
    size_t ran = 0;
    int destroy;
    if (!t) return 0;
    hwtimer__lock(t, t->mutex);
    if (!t->worker.mode && !hwtimer__in_own_callback(t)) {
        while (t->pass.on) hwtimer__wait(t, t->done_cond, t->mutex, &t->waiters);
        ran = max_callbacks || t->pass.left
                  ? hwtimer__pass_bounded(t, now_ns, max_callbacks ? max_callbacks : SIZE_MAX)
                  : hwtimer__pass(t, now_ns);
    }
    destroy = t->destroy_deferred && !t->pass.on;
    hwtimer__unlock(t, t->mutex);
    if (destroy) hwtimer__finish_destroy(t);
    return ran;
}

HWTIMER_DEF size_t hwtimer_poll(hwtimer *t) { return t ? hwtimer_advance(t, hwtimer_now(t)) : 0; }

HWTIMER_DEF uint64_t hwtimer_next_expiry(hwtimer *t) {
    uint64_t next;
    int left;
    if (!t) return UINT64_MAX;
    hwtimer__lock(t, t->mutex);
    next = hwtimer__loop_answer(t, &left);
    hwtimer__unlock(t, t->mutex);
    return next;
}

HWTIMER_DEF int hwtimer_poll_timeout_ms(hwtimer *t) {
    uint64_t next, now, ms;
    int none, left;
    if (!t) return -1;
    hwtimer__lock(t, t->mutex);
    next = hwtimer__loop_answer(t, &left);
    none = t->loop.none;
    hwtimer__unlock(t, t->mutex);
    if (none) return -1;
    if (left) return 0;
    now = t->wait_clock ? t->wait_clock(NULL) : hwtimer_now(t); /* (the answer's scale) */
    if (next <= now) return 0;
    ms = (next - now) / 1000000u + ((next - now) % 1000000u != 0);
    return ms > (uint64_t)INT_MAX ? INT_MAX : (int)ms;
}

HWTIMER_DEF int hwtimer_start(hwtimer *t) {
    if (!t) return HWTIMER_EINVAL;
    return hwtimer__load_int(&t->stopped) ? HWTIMER_ESTOPPED : hwtimer__start_worker(t);
}

HWTIMER_DEF int64_t hwtimer_stop(hwtimer *t, hwtimer_fn unprocessed, void *ctx) {
    if (!t) return HWTIMER_EINVAL;
    return hwtimer__stop(t, unprocessed, ctx);
}

HWTIMER_DEF const char *hwtimer_strerror(int err) {
    static const char *const text[] = {"success", "invalid argument", "out of memory",
        "too many pending timeouts (max_pending)", "the timer was stopped",
        "the timeout is already pending", "not allowed from the timer's own callback",
        "the thread backend failed", "the timeout's callback runs now on another thread",
        "the timeout was retired"};
    return err <= 0 && err >= HWTIMER_ERETIRED ? text[-err] : "unknown error";
}

HWTIMER_DEF void hwtimer_stats_get(hwtimer *t, hwtimer_stats *out) {
    unsigned i;
    if (!out) return;
    memset(out, 0, sizeof *out);
    if (!t) return;
    hwtimer__lock_all(t);
    *out = t->stats;
    for (i = 0; i < t->shards; i++) {
        const hwtimer__wheel *w = &hwtimer__shard_at(t, i)->wheel;
        out->cascaded += w->cascaded - w->refiled; /* (see hwtimer__visit_refile) */
        out->refiled += w->refiled;
        out->pending += w->pending;
    }
    hwtimer__unlock_all(t);
}

HWTIMER_DEF int hwtimer_fork_child(hwtimer *t) {
    size_t pending = 0;
    unsigned i;
    int err, worker_forked;
    if (!t) return HWTIMER_EINVAL;
    if (!t->threads) return HWTIMER_OK;
    err = hwtimer__make_thread_objects(t); /* over the parent's copies, which may be held */
    if (err) return err;
    hwtimer__lock_all(t);
    worker_forked = t->worker.mode && hwtimer__in_own_callback(t);
    if (!worker_forked) hwtimer__store_int(&t->worker.running, 0); /* it does not exist here */
    t->worker.sleeping = 0;
    t->waiters = 0;
    t->loop.wakes_running = 0; /* nor do the threads that were waking it */
    for (i = 0; i < t->shards; i++) {
        hwtimer__shard *s = hwtimer__shard_at(t, i);
        s->waiters = 0;
        s->cancel_waits = NULL; /* nor those waiting in a cancel */
        pending += s->wheel.pending;
    }
    if (t->pass.on && !t->threads->thread_is_self(t->pass.thread)) hwtimer__abandon_pass(t);
    if (t->worker.mode && !t->stopped && pending && hwtimer__start_worker_locked(t)) {
        err = HWTIMER_ETHREAD;
    }
    hwtimer__unlock_all(t);
    return err;
}

HWTIMER_DEF int hwtimer_check(hwtimer *t) {
    size_t n = 0;
    unsigned i;
    int err = 0;
    if (!t) return 0;
    hwtimer__lock_all(t);
    for (i = 0; i < t->shards && !err; i++) {
        hwtimer__shard *s = hwtimer__shard_at(t, i);
        err = hwtimer__wheel_check(&s->wheel, hwtimer__running_unfiled(s, s->run.node) ? 1u : 0u);
        if (!err && s->wheel.pending > t->max_pending) err = HWTIMER_CHECK_COUNT;
        if (!err && s->wheel.watch_upto < hwtimer__wake_upto(s)) err = HWTIMER_CHECK_NEAR;
        /* every cancel counted in waiters is listed until it unlists itself, so a list
           with none counted holds a cancel that has returned: its frame is gone */
        if (!err && s->cancel_waits && !s->waiters) err = HWTIMER_CHECK_WAITERS;
        n += s->wheel.pending;
    }
    if (!err && t->shared_limit && HWTIMER__ATOMIC_ADD(&t->shared_pending, 0) != (long)n) {
        err = HWTIMER_CHECK_COUNT;
    }
    hwtimer__unlock_all(t);
    return err;
}

#ifdef __cplusplus
}
#endif
#endif /* !HWTIMER__TIME_HIDDEN */
#endif /* HWTIMER_IMPLEMENTATION */

/*
====================
LICENSE (Unlicense)   [hwtimer:license]

This is free and unencumbered software released into the public domain.

Anyone is free to copy, modify, publish, use, compile, sell, or distribute this
software, either in source code form or as a compiled binary, for any purpose,
commercial or non-commercial, and by any means.

In jurisdictions that recognize copyright laws, the author or authors of this
software dedicate any and all copyright interest in the software to the public
domain. We make this dedication for the benefit of the public at large and to
the detriment of our heirs and successors. We intend this dedication to be an
overt act of relinquishment in perpetuity of all present and future rights to
this software under copyright law.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS
FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS BE
LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF
CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE
SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.
====================
*/

/*
====================
VERSION HISTORY   [hwtimer:history]   (newest first)

   1.2.2 (2026-12-02)  no change of behaviour: cfg.coarse_clock's promise as it holds (never
                       early on the coarse clock; on CLOCK_MONOTONIC while it lags by at most
                       G); more of the tick arithmetic proved
   1.2.1 (2026-12-02)  no change of behaviour: the implementation explained in full sentences,
                       THE DESIGN with the wheel's contract and the fast path's conditions,
                       stop and destroy in one section
   1.2.0 (2026-12-02)  hwtimer_try_cancel, hwtimer_retire (HWTIMER_ERUNNING, _ERETIRED,
                       HWTIMER_RETIRED); hwtimer_advance_max; cfg.coarse_clock; stats
                       late_max_ns and late_runs; 64-bit values read whole on 32-bit targets
                       (threads refused without an 8-byte compare-and-swap); MSVC atomics
                       acquire/release on ARM; a cancel waiting 1 s tells log_fn;
                       hwtimer_check: CHECK_WAITERS, a code for a node inited while pending;
                       the C++ duration macros clean under -Wold-style-cast; a CMake package
   1.1.5 (2026-11-29)  no threads without atomics; one #error per build mistake; LOCK_SPINS 0
   1.1.4 (2026-11-29)  a cancel prefetches both list neighbours; a slot's lists by MiB
   1.1.3 (2026-11-29)  inline scheduling with the wheel's last leeway; a list append's
                       links stored apart
   1.1.2 (2026-11-29)  a cancel prefetches its next list neighbour
   1.1.1 (2026-11-28)  version macros; expiring many timers at once and advancing over idle
                       ticks do less
   1.1.0 (2026-11-27)  hwtimer_schedule_ticks; schedule and cancel inline without threads
   1.0.1 (2026-11-27)  restructured: a wheel type, the timer its front end
   1.0.0 (2026-11-26)  stable API (VERSIONS)
   0.1.0 - 0.3.0       (2026-11-21 .. 24) before it
====================
*/
