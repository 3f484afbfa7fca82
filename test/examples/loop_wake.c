/* loop_wake.c - other threads set timeouts that a sleeping poll() loop runs, with hwtimer.

   The problem: one thread runs an event loop and the timer's callbacks; other threads (a
   pool that runs requests, say) set timeouts on that timer: a deadline for the reply they
   wait for, a retry, a reminder. The loop sleeps as long as hwtimer_poll_timeout_ms()
   said, or forever (-1) when nothing was pending: a timeout another thread sets for 5 ms
   from now must not wait for that old wake-up.

   Build:  cc -I<dir of hwtimer.h> loop_wake.c -pthread

   How: the timer has locks (cfg.threads = hwtimer_threads_default()) and no worker
   (cfg.worker 0), so any thread may schedule while the loop alone runs the callbacks, in
   hwtimer_poll(). The glue is between the "glue" markers and on the lines tagged "glue":
   an eventfd in the loop's poll set, and cfg.wake_fn, which writes it. hwtimer calls
   wake_fn on the scheduling thread, with no lock held, when that schedule's deadline is
   earlier than what the loop was last told (or the loop was told nothing was pending), at
   most once per answer. The loop wakes, reads the eventfd and asks the timer again.
   (Since wake_fn tells of changes to an answer, the loop must ask once before it first
   sleeps: its first poll() does.)

   The demo: WORKERS threads each schedule JOBS timeouts, a few ms apart, each due 1 to
   40 ms later: first while the loop sleeps with nothing pending, then while it sleeps
   until a timeout an hour away. It checks that each ran once, on the loop's thread, none
   early and none much late, that the hour-away one did not run, and that the loop did
   not spin; then it prints a summary and exits 0 (or says what failed, 1). */
#define HWTIMER_IMPLEMENTATION
#include "hwtimer.h"

#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#define WORKERS 4
#define JOBS 25 /* per worker and phase */
#define PHASES 2 /* the loop sleeps: forever, then for an hour */

static hwtimer *timer;
static int wakefd;            /* glue: the eventfd that wakes the loop */
static pthread_t loop_thread; /* main's */

static void die(const char *what) {
    perror(what);
    exit(1);
}

static uint64_t now_ns(void) { /* CLOCK_MONOTONIC: the timer's default clock */
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * HWTIMER_SEC(1) + (uint64_t)ts.tv_nsec;
}

/* What the loop did, for the checks at the end. */
static struct {
    unsigned ran, wake_fn_calls;
    unsigned timer_wakeups, empty_wakeups; /* poll timed out; ... and nothing was due */
} seen;

/* A timeout a worker sets, and what its callback saw. */
struct job {
    hwtimer_timeout timeout;
    unsigned runs;
    int on_loop_thread;
    uint64_t ran_at;
};
static struct job jobs[PHASES * WORKERS * JOBS], far_away;

/* ---- glue: cfg.wake_fn, on the scheduling thread: end the loop's poll() -------------- */
static void wake_loop(void *ctx) {
    uint64_t one = 1;
    (void)ctx;
    if (write(wakefd, &one, sizeof one) < 0) {
        /* EAGAIN: the counter is full, so a wake-up is pending anyway */
    }
}

static void run_loop(unsigned until) { /* until that many jobs ran */
    struct pollfd pfd;
    pfd.fd = wakefd;
    pfd.events = POLLIN;
    while (seen.ran < until) {
        uint64_t calls;
        size_t ran;
        int n = poll(&pfd, 1, hwtimer_poll_timeout_ms(timer)); /* the timer's next expiry */
        if (n > 0 && read(wakefd, &calls, sizeof calls) > 0) /* resets the eventfd */
            seen.wake_fn_calls += (unsigned)calls;
        ran = hwtimer_poll(timer);
        /* ---- end of glue ---- */
        if (n == 0) seen.timer_wakeups++;
        if (n == 0 && ran == 0) seen.empty_wakeups++;
    }
}

static void on_job(hwtimer_timeout *to, void *arg) { /* in hwtimer_poll(), on the loop */
    struct job *j = HWTIMER_CONTAINER_OF(to, struct job, timeout);
    (void)arg;
    j->ran_at = now_ns();
    j->runs++;
    j->on_loop_thread = pthread_equal(pthread_self(), loop_thread);
    seen.ran++;
}

static void *worker(void *arg) { /* schedules its JOBS jobs, 2 to 12 ms apart */
    struct job *mine = (struct job *)arg;
    int i;
    for (i = 0; i < JOBS; i++) {
        unsigned k = (unsigned)(mine + i - jobs); /* this job's number */
        struct timespec pause;
        pause.tv_sec = 0;
        pause.tv_nsec = (long)HWTIMER_MS(2 + k * 7 % 11);
        nanosleep(&pause, NULL);
        if (hwtimer_schedule(timer, &mine[i].timeout, HWTIMER_MS(1 + k * 37 % 40), on_job,
                             NULL) != HWTIMER_OK)
            die("hwtimer_schedule");
    }
    return NULL;
}

/* ---- the checks -------------------------------------------------------------------- */

#define LATE_MEDIAN HWTIMER_MS(25) /* loose bounds: a busy machine may stall any thread */
#define LATE_WORST HWTIMER_MS(150)
#define EMPTY_WAKEUPS_MAX 20       /* a few are expected; a loop that spins has thousands */

static int failures;
#define FAIL(...) (printf("FAILED: " __VA_ARGS__), putchar('\n'), failures++)

static int by_value(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static int check(int far_away_pending) {
    static uint64_t late[PHASES * WORKERS * JOBS];
    size_t n = 0, i;
    for (i = 0; i < PHASES * WORKERS * JOBS; i++) {
        const struct job *j = &jobs[i];
        uint64_t deadline = hwtimer_timeout_deadline(&j->timeout);
        if (j->runs != 1) FAIL("job %zu ran %u times", i, j->runs);
        else if (!j->on_loop_thread) FAIL("job %zu ran on another thread", i);
        else if (j->ran_at < deadline)
            FAIL("job %zu ran %.2f ms early", i, (double)(deadline - j->ran_at) / 1e6);
        else late[n++] = j->ran_at - deadline;
    }
    qsort(late, n, sizeof *late, by_value);
    if (n && late[n / 2] > LATE_MEDIAN)
        FAIL("ran late: %.1f ms (median)", (double)late[n / 2] / 1e6);
    if (n && late[n - 1] > LATE_WORST)
        FAIL("ran late: %.1f ms (worst)", (double)late[n - 1] / 1e6);
    if (!far_away_pending || far_away.runs) FAIL("the timeout an hour away ran");
    if (seen.wake_fn_calls == 0) FAIL("wake_fn was never called");
    if (seen.empty_wakeups > EMPTY_WAKEUPS_MAX)
        FAIL("%u wake-ups ran nothing", seen.empty_wakeups);
    printf("wake: %zu timeouts from %d threads ran late by %.2f ms (median), %.2f ms (worst); "
           "wake_fn called %u times; %u timer wake-ups, %u ran nothing\n", n, WORKERS,
           n ? (double)late[n / 2] / 1e6 : 0.0, n ? (double)late[n - 1] / 1e6 : 0.0,
           seen.wake_fn_calls, seen.timer_wakeups, seen.empty_wakeups);
    return failures ? 1 : 0;
}

int main(void) {
    hwtimer_config cfg;
    pthread_t workers[WORKERS];
    int phase, w, far_away_pending;
    alarm(10); /* a watchdog: a demo that hangs is killed */
    loop_thread = pthread_self();
    wakefd = eventfd(0, EFD_NONBLOCK); /* glue */
    if (wakefd < 0) die("eventfd");
    hwtimer_config_default(&cfg);
    cfg.tick_ns = HWTIMER_MS(1);             /* the default tick is 100 ms */
    cfg.threads = hwtimer_threads_default(); /* glue: locks, so that any thread may schedule */
    cfg.wake_fn = wake_loop;                 /* glue */
    if (hwtimer_create(&timer, &cfg) != HWTIMER_OK) die("hwtimer_create");
    for (phase = 0; phase < PHASES; phase++) {
        if (phase == 1) /* from now on the loop sleeps for an hour, not forever */
            hwtimer_schedule(timer, &far_away.timeout, HWTIMER_SEC(3600), on_job, NULL);
        for (w = 0; w < WORKERS; w++)
            if (pthread_create(&workers[w], NULL, worker, &jobs[(phase * WORKERS + w) * JOBS]))
                die("pthread_create");
        run_loop((unsigned)((phase + 1) * WORKERS * JOBS));
        for (w = 0; w < WORKERS; w++) pthread_join(workers[w], NULL);
    }
    far_away_pending = hwtimer_cancel(timer, &far_away.timeout) == 1;
    hwtimer_destroy(timer);
    close(wakefd); /* glue */
    return check(far_away_pending);
}
