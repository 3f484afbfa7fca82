/* loop_timerfd.c - driving hwtimer from an epoll loop through a timerfd.

   The keep-alive server of keepalive.h (close connections quiet for IDLE_LIMIT) on one
   thread with epoll, where the timer is just one more file descriptor: epoll_wait always
   waits with -1 and a timerfd wakes it. Useful when the loop's sleep is not yours to
   compute (a library owns epoll_wait), or to get nanosecond wake-ups instead of
   epoll_wait's milliseconds.

   The glue (between the GLUE markers): the timer's default clock is CLOCK_MONOTONIC in ns,
   so hwtimer_next_expiry() is directly an absolute time for a CLOCK_MONOTONIC timerfd
   (TFD_TIMER_ABSTIME): no conversion, no "now" to read. Before each epoll_wait the loop
   re-arms the timerfd when the next expiry has changed (UINT64_MAX: nothing pending,
   disarm). When it fires, hwtimer_poll() runs what is due. */
#include "../harness.h"
#include "../harness_threads.h"
#include "example_util.h"
#include "keepalive.h"

#include <sys/epoll.h>
#include <sys/timerfd.h>

typedef struct conn {
    int fd;
    hwtimer_timeout idle;
} conn;

typedef struct server {
    keepalive_server *ka;
    hwtimer *timer;
    int epfd, tfd;
    uint64_t armed; /* the time the timerfd is set to; UINT64_MAX: disarmed */
    int quit;
} server;

/* epoll's data.ptr: a conn, or one of these markers. */
static char listener_marker, quit_marker, timerfd_marker;

/* GLUE: keep the timerfd set to the timer's next expiry (absolute CLOCK_MONOTONIC ns). */
static void timerfd_arm(server *s) {
    uint64_t next = hwtimer_next_expiry(s->timer); /* UINT64_MAX: nothing pending */
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
    keepalive_timer_woke(s->ka, hwtimer_poll(s->timer));
}
/* END GLUE (and the loop in serve: timerfd_arm before each epoll_wait) */

static void watch(server *s, int fd, void *ptr) {
    struct epoll_event ev;
    ev.events = EPOLLIN;
    ev.data.ptr = ptr;
    epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev);
}

static void conn_close(server *s, conn *c) {
    epoll_ctl(s->epfd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    keepalive_closed(s->ka);
    free(c);
}

static void on_idle(hwtimer_timeout *to, void *arg) {
    server *s = (server *)arg;
    keepalive_idle_fired(s->ka, to);
    conn_close(s, HWTIMER_CONTAINER_OF(to, conn, idle));
}

static void accept_all(server *s) {
    int fd;
    while ((fd = keepalive_accept(s->ka->listen_fd)) >= 0) {
        conn *c = (conn *)calloc(1, sizeof *c);
        if (!c) {
            close(fd);
            continue;
        }
        c->fd = fd;
        watch(s, fd, c);
        keepalive_opened(s->ka);
        hwtimer_schedule(s->timer, &c->idle, IDLE_LIMIT, on_idle, s);
    }
}

static void conn_read(server *s, conn *c) {
    int got = keepalive_drain(c->fd);
    if (got > 0) {
        hwtimer_reschedule(s->timer, &c->idle, IDLE_LIMIT);
    } else if (got < 0) {
        hwtimer_cancel(s->timer, &c->idle);
        conn_close(s, c);
    }
}

/* Handles one wake-up's events. The timerfd goes last: a callback may close (free) a
   connection that has an event later in the same batch. */
static void handle(server *s, const struct epoll_event *events, int count) {
    int i, timer_fired = 0;
    for (i = 0; i < count; i++) {
        void *ptr = events[i].data.ptr;
        if (ptr == &timerfd_marker) timer_fired = 1;
        else if (ptr == &listener_marker) accept_all(s);
        else if (ptr == &quit_marker) s->quit = 1;
        else conn_read(s, (conn *)ptr);
    }
    if (timer_fired) timerfd_fired(s);
}

/* hwtimer_stop hands back each pending timeout: each is a connection still open. */
static void close_unprocessed(hwtimer_timeout *to, void *arg) {
    conn_close((server *)arg, HWTIMER_CONTAINER_OF(to, conn, idle));
}

static void serve(void *arg) {
    server s;
    hwtimer_config cfg;
    struct epoll_event events[64];
    memset(&s, 0, sizeof s);
    s.ka = (keepalive_server *)arg;
    keepalive_timer_config(&cfg); /* the default clock: CLOCK_MONOTONIC, as the timerfd */
    s.timer = create_or_die(&cfg);
    s.epfd = epoll_create1(0);
    s.tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
    if (s.epfd < 0 || s.tfd < 0) {
        perror("epoll_create1/timerfd_create");
        exit(1);
    }
    s.armed = UINT64_MAX;
    watch(&s, s.tfd, &timerfd_marker);
    watch(&s, s.ka->listen_fd, &listener_marker);
    watch(&s, s.ka->quit_fd, &quit_marker);
    while (!s.quit) {
        timerfd_arm(&s); /* GLUE: the only call before the sleep */
        handle(&s, events, epoll_wait(s.epfd, events, 64, -1));
    }
    hwtimer_stop(s.timer, close_unprocessed, &s);
    hwtimer_destroy(s.timer);
    close(s.tfd);
    close(s.epfd);
}

static void test_timerfd_loop(void) {
    keepalive_run("epoll + timerfd", serve, 0, KEEPALIVE_REARM_BEFORE_SLEEP);
}

int main(void) {
    RUN_TIMED_TEST(test_timerfd_loop);
    return test_finish();
}
