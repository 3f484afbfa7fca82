/* loop_wake.c - a thread pool scheduling timeouts into a sleeping epoll loop.

   The problem: one thread runs the epoll loop and the timer's callbacks; worker threads
   (a pool that runs requests, say) set timeouts on that timer: a deadline for the work
   they hand back, a retry, a reminder. The loop sleeps in epoll_wait for as long as
   hwtimer_poll_timeout_ms() said, or forever (-1) when nothing was pending; a timeout
   a worker schedules for 5 ms from now must not wait for that old wake-up.

   How the timer is used: caller-driven with locks (cfg.threads = the POSIX backend), so
   any thread may schedule, and the loop alone advances. The glue (between the GLUE
   markers) is an eventfd the loop watches and cfg.wake_fn, which writes it: hwtimer calls
   wake_fn on the scheduling thread, with no lock held, when that schedule's boundary is
   earlier than what the loop was last told (or when it was told nothing was pending), at
   most once per answer. The loop wakes, reads the eventfd, and asks the timer again.

   The test (remote.h): 4 threads schedule 100 timeouts in all, each due 1 to 40 ms
   later, while the loop sleeps forever, then while it sleeps until a sentinel an hour
   away. Every timeout runs once, never early, within a tick and a few ms of its deadline
   (median; generous worst case), not at the loop's old wake-up. */
#include "../harness.h"
#include "../harness_threads.h"
#include "example_util.h"
#include "remote.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

typedef struct loop {
    hwtimer *timer;
    int epfd, wakefd, quit_pipe[2];
    unsigned wakes; /* atomic: wake_fn calls */
    test_thread thread;
} loop;

static char wake_marker, quit_marker; /* epoll's data.ptr */

/* GLUE: cfg.wake_fn, on any scheduling thread: make the loop's epoll_wait return. */
static void wake_loop(void *ctx) {
    loop *l = (loop *)ctx;
    uint64_t one = 1;
    ATOMIC_ADD(&l->wakes, 1u);
    if (write(l->wakefd, &one, sizeof one) < 0) {
        /* EAGAIN: the counter is full, so a wake-up is pending anyway */
    }
}

static void loop_main(void *arg) {
    loop *l = (loop *)arg;
    struct epoll_event events[2];
    int quit = 0;
    while (!quit) {
        /* GLUE: sleep as long as the timer says; a wake_fn write ends the sleep early */
        int n = epoll_wait(l->epfd, events, 2, hwtimer_poll_timeout_ms(l->timer)), i;
        for (i = 0; i < n; i++) {
            uint64_t count;
            if (events[i].data.ptr == &quit_marker) quit = 1;
            else if (read(l->wakefd, &count, sizeof count) < 0) continue; /* resets it */
        }
        hwtimer_poll(l->timer);
    }
}
/* END GLUE (and in loop_start: the eventfd in the epoll set, cfg.wake_fn) */

static void watch(loop *l, int fd, void *ptr) {
    struct epoll_event ev;
    ev.events = EPOLLIN;
    ev.data.ptr = ptr;
    epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev);
}

static void loop_start(loop *l) {
    hwtimer_config cfg;
    memset(l, 0, sizeof *l);
    hwtimer_config_default(&cfg);
    cfg.tick_ns = HWTIMER_MS(1);
    cfg.threads = hwtimer_threads_pthread(); /* locks: other threads schedule */
    cfg.wake_fn = wake_loop;                 /* GLUE */
    cfg.wake_ctx = l;
    l->timer = create_or_die(&cfg);
    l->epfd = epoll_create1(0);
    l->wakefd = eventfd(0, EFD_NONBLOCK);
    if (l->epfd < 0 || l->wakefd < 0 || pipe(l->quit_pipe) != 0) {
        perror("epoll_create1/eventfd/pipe");
        exit(1);
    }
    watch(l, l->wakefd, &wake_marker);
    watch(l, l->quit_pipe[0], &quit_marker);
    test_thread_start(&l->thread, loop_main, l);
}

static void loop_stop(loop *l) {
    CHECK_EQ(write(l->quit_pipe[1], "q", 1), 1);
    test_thread_join(&l->thread);
    hwtimer_destroy(l->timer);
    close(l->wakefd);
    close(l->quit_pipe[0]);
    close(l->quit_pipe[1]);
    close(l->epfd);
}

static void run(int with_sentinel) {
    loop l;
    loop_start(&l);
    remote_run("epoll + eventfd", l.timer, with_sentinel, &l.wakes);
    loop_stop(&l);
}

static void test_wake_a_loop_that_sleeps_forever(void) {
    run(0);
}

static void test_wake_a_loop_that_sleeps_an_hour(void) {
    run(1);
}

int main(void) {
    RUN_TIMED_TEST(test_wake_a_loop_that_sleeps_forever);
    RUN_TIMED_TEST(test_wake_a_loop_that_sleeps_an_hour);
    return test_finish();
}
