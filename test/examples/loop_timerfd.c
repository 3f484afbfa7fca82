/* loop_timerfd.c - driving hwtimer from an epoll loop through a timerfd.

   The keep-alive server of keepalive.h (close connections quiet for IDLE_LIMIT) on one
   thread with epoll, where the timer is just one more file descriptor: epoll_wait always
   waits with -1 and a timerfd wakes it. Useful when the loop's sleep is not yours to
   compute (a library owns epoll_wait), or to get nanosecond wake-ups instead of
   epoll_wait's milliseconds. The timer is caller-driven with no locks (cfg.threads NULL).

   The glue (between the GLUE markers): the timer's default clock is CLOCK_MONOTONIC in ns,
   so hwtimer_next_expiry() is directly an absolute time for a CLOCK_MONOTONIC timerfd
   (TFD_TIMER_ABSTIME): no conversion, no "now" to read. Before each epoll_wait the loop
   sets the timerfd again when the next expiry has changed (UINT64_MAX: nothing pending,
   disarm). When it fires, hwtimer_poll() runs what is due. */
#include "../harness.h"
#include "../harness_threads.h"
#include "example_util.h"
#include "keepalive.h"

#include <sys/timerfd.h>

typedef struct server {
    keepalive_epoll ep;
    int tfd;
    uint64_t armed; /* the time the timerfd is set to; UINT64_MAX: disarmed */
    int quit;
} server;

/* epoll's data.ptr: a connection, or one of these markers. */
static char listener_marker, quit_marker, timerfd_marker;

/* GLUE: keep the timerfd set to the timer's next expiry (absolute CLOCK_MONOTONIC ns). */
static void timerfd_arm(server *s) {
    uint64_t next = hwtimer_next_expiry(s->ep.fds.timer); /* UINT64_MAX: nothing pending */
    struct itimerspec its;
    if (next == s->armed) return;
    memset(&its, 0, sizeof its); /* all zero disarms */
    if (next != UINT64_MAX) {
        its.it_value.tv_sec = (time_t)(next / HWTIMER_SEC(1));
        its.it_value.tv_nsec = (long)(next % HWTIMER_SEC(1));
        if (next == 0) its.it_value.tv_nsec = 1; /* 0 would disarm: any past time fires */
    }
    timerfd_settime(s->tfd, TFD_TIMER_ABSTIME, &its, NULL);
    s->armed = next;
}

/* GLUE: the timerfd is readable: it fired, and a one-shot timerfd is now disarmed. */
static void timerfd_fired(server *s) {
    uint64_t expirations;
    if (read(s->tfd, &expirations, sizeof expirations) != sizeof expirations) return;
    s->armed = UINT64_MAX;
    keepalive_timer_woke(s->ep.fds.ka, hwtimer_poll(s->ep.fds.timer));
}
/* END GLUE (and the loop in serve: timerfd_arm before each epoll_wait) */

/* Handles one wake-up's events. The timerfd goes last: a callback may close (free) a
   connection that has an event later in the same batch. */
static void handle(server *s, const struct epoll_event *events, int count) {
    int i, timer_fired = 0;
    for (i = 0; i < count; i++) {
        void *ptr = events[i].data.ptr;
        if (ptr == &timerfd_marker) timer_fired = 1;
        else if (ptr == &listener_marker) keepalive_accept_all(&s->ep.fds);
        else if (ptr == &quit_marker) s->quit = 1;
        else keepalive_conn_read(&s->ep.fds, (keepalive_conn *)ptr);
    }
    if (timer_fired) timerfd_fired(s);
}

static void serve(void *arg) {
    server s;
    hwtimer_config cfg;
    keepalive_server *ka = (keepalive_server *)arg;
    struct epoll_event events[64];
    memset(&s, 0, sizeof s);
    keepalive_timer_config(&cfg); /* the default clock: CLOCK_MONOTONIC, as the timerfd */
    keepalive_epoll_init(&s.ep, ka, create_or_die(&cfg));
    s.tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
    if (s.tfd < 0) {
        perror("timerfd_create");
        exit(1);
    }
    s.armed = UINT64_MAX;
    keepalive_epoll_add(&s.ep, s.tfd, &timerfd_marker);
    keepalive_epoll_add(&s.ep, ka->listen_fd, &listener_marker);
    keepalive_epoll_add(&s.ep, ka->quit_fd, &quit_marker);
    while (!s.quit) {
        timerfd_arm(&s); /* GLUE: the only call before the sleep */
        handle(&s, events, epoll_wait(s.ep.epfd, events, 64, -1));
    }
    keepalive_close_all(&s.ep.fds);
    hwtimer_destroy(s.ep.fds.timer);
    close(s.tfd);
    close(s.ep.epfd);
}

static void test_timerfd_loop(void) {
    keepalive_run("epoll + timerfd", serve, KEEPALIVE_REARM_BEFORE_SLEEP);
}

int main(void) {
    RUN_TIMED_TEST(test_timerfd_loop);
    return test_finish();
}
