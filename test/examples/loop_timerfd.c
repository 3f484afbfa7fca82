/* loop_timerfd.c - close idle connections from an epoll loop, with hwtimer and a timerfd.

   A keep-alive server closes each connection that has been quiet for IDLE_LIMIT (nginx's
   keepalive_timeout, Netty's IdleStateHandler) with one hwtimer timeout per connection:
   scheduled on accept, pushed back on every read, cancelled when the peer hangs up; when
   it fires, the connection is closed. Only the loop's thread uses the timer (no locks).

   Build:  cc -I<dir of hwtimer.h> loop_timerfd.c -pthread    (-pthread: the demo's clients)

   Here the timer is one more file descriptor: epoll_wait always waits with -1 and a
   timerfd wakes it. Useful when the sleep is not yours to compute (a library owns
   epoll_wait), or for wake-ups finer than epoll_wait's milliseconds.

   The glue, between the "glue" markers and on every line tagged "glue" (the timerfd's
   fields, setup and dispatch): the timer's default clock is CLOCK_MONOTONIC in ns, so
   hwtimer_next_expiry() is an absolute time for a CLOCK_MONOTONIC timerfd as it is
   (TFD_TIMER_ABSTIME). Before each epoll_wait the loop sets the timerfd again if the next
   expiry changed (UINT64_MAX: nothing pending, disarm); when the timerfd fires,
   hwtimer_poll() runs what is due.

   The demo (the second half of the file) serves clients on 127.0.0.1, checks what it saw,
   prints a summary and exits 0, or says what failed and exits 1. */
#define HWTIMER_IMPLEMENTATION
#include "hwtimer.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define IDLE_LIMIT HWTIMER_MS(200) /* close a connection quiet for this long */
#define CLIENTS 20

static void die(const char *what) {
    perror(what);
    exit(1);
}

/* What the loop did, for the checks at the end. */
static struct {
    unsigned accepted, open, closed_idle;
    unsigned timer_wakeups, empty_wakeups; /* the timerfd fired; ... and nothing was due */
} seen;

/* ---- the server --------------------------------------------------------------------- */

struct conn {
    int fd;
    hwtimer_timeout idle; /* fires when the connection has been quiet for IDLE_LIMIT */
};

struct server {
    hwtimer *timer;
    int epfd, listen_fd;
    int tfd;        /* glue: the timerfd */
    uint64_t armed; /* glue: the time the timerfd is set to; UINT64_MAX: disarmed */
};

static char listener_marker, timerfd_marker; /* epoll's data.ptr: these, or a conn (glue:
                                                 the timerfd's) */

static void watch(struct server *s, int fd, void *ptr) {
    struct epoll_event ev;
    ev.events = EPOLLIN;
    ev.data.ptr = ptr;
    if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) die("epoll_ctl");
}

/* ---- glue: keep the timerfd at the timer's next expiry (absolute CLOCK_MONOTONIC ns) ---- */
static void timerfd_arm(struct server *s) { /* before each epoll_wait */
    uint64_t next = hwtimer_next_expiry(s->timer); /* UINT64_MAX: nothing pending */
    struct itimerspec its;
    if (next == s->armed) return;
    memset(&its, 0, sizeof its); /* all zero: disarm */
    if (next != UINT64_MAX) {
        its.it_value.tv_sec = (time_t)(next / HWTIMER_SEC(1));
        its.it_value.tv_nsec = (long)(next % HWTIMER_SEC(1));
        if (next == 0) its.it_value.tv_nsec = 1; /* 0 would disarm; any past time fires */
    }
    timerfd_settime(s->tfd, TFD_TIMER_ABSTIME, &its, NULL);
    s->armed = next;
}

static size_t timerfd_fired(struct server *s) { /* the timerfd is readable */
    uint64_t expirations;
    if (read(s->tfd, &expirations, sizeof expirations) < 0) return 0;
    s->armed = UINT64_MAX; /* it fired, so it is disarmed */
    return hwtimer_poll(s->timer);
}
/* ---- end of glue ---- */

static void conn_close(struct server *s, struct conn *c) {
    hwtimer_cancel(s->timer, &c->idle); /* (nothing to do when it is the one that fired) */
    epoll_ctl(s->epfd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    free(c);
    seen.open--;
}

static void on_idle(hwtimer_timeout *to, void *arg) {
    seen.closed_idle++;
    conn_close((struct server *)arg, HWTIMER_CONTAINER_OF(to, struct conn, idle));
}

static void accept_all(struct server *s) {
    int fd;
    while ((fd = accept(s->listen_fd, NULL, NULL)) >= 0) {
        struct conn *c = (struct conn *)calloc(1, sizeof *c);
        if (!c || fcntl(fd, F_SETFL, O_NONBLOCK) != 0) {
            free(c);
            close(fd);
            continue;
        }
        c->fd = fd;
        watch(s, fd, c);
        seen.accepted++;
        seen.open++;
        hwtimer_schedule(s->timer, &c->idle, IDLE_LIMIT, on_idle, s);
    }
}

static void on_readable(struct server *s, struct conn *c) {
    char buf[256];
    ssize_t n = read(c->fd, buf, sizeof buf);
    if (n > 0) hwtimer_reschedule(s->timer, &c->idle, IDLE_LIMIT); /* push it back */
    else if (n == 0 || errno != EAGAIN) conn_close(s, c);           /* the peer hung up */
}

static void serve(int listen_fd) {
    struct server s;
    hwtimer_config cfg;
    struct epoll_event events[64];
    hwtimer_config_default(&cfg); /* its clock: CLOCK_MONOTONIC, the timerfd's */
    cfg.tick_ns = HWTIMER_MS(1);  /* the default tick is 100 ms */
    if (hwtimer_create(&s.timer, &cfg) != HWTIMER_OK) die("hwtimer_create");
    s.listen_fd = listen_fd;
    s.epfd = epoll_create1(0);
    s.tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK); /* glue */
    if (s.epfd < 0 || s.tfd < 0) die("epoll_create1, timerfd_create");
    s.armed = UINT64_MAX; /* glue: disarmed */
    watch(&s, listen_fd, &listener_marker);
    watch(&s, s.tfd, &timerfd_marker); /* glue */
    while (seen.accepted < CLIENTS || seen.open > 0) { /* the demo ends when all are gone */
        int n, i, timer_fired = 0; /* glue: timer_fired */
        timerfd_arm(&s); /* glue: the one call before the sleep */
        n = epoll_wait(s.epfd, events, 64, -1);
        for (i = 0; i < n; i++) {
            void *ptr = events[i].data.ptr;
            if (ptr == &timerfd_marker) timer_fired = 1; /* glue */
            else if (ptr == &listener_marker) accept_all(&s);
            else on_readable(&s, (struct conn *)ptr);
        }
        if (timer_fired) { /* glue, last: a callback may free a connection with an event above */
            seen.timer_wakeups++;
            if (timerfd_fired(&s) == 0) seen.empty_wakeups++;
        }
    }
    hwtimer_destroy(s.timer);
    close(s.tfd); /* glue */
    close(s.epfd);
}

/* ---- the demo: clients on 127.0.0.1 (a thread), and the checks --------------------
   CLIENTS clients: the even ones talk every TALK_EVERY, the odd ones send 0 to 4 bytes and
   go quiet. Checked: every quiet connection was closed and no talker was, none before
   IDLE_LIMIT after its last byte and none much later, and the loop did not spin. */

#define TALK_EVERY HWTIMER_MS(50)
#define ROUNDS 16                  /* 0.8 s of talking */
#define LATE_MEDIAN HWTIMER_MS(25) /* loose bounds: a busy machine may stall any thread */
#define LATE_WORST HWTIMER_MS(150)
#define EMPTY_WAKEUPS_MAX 20       /* a few are expected; a loop that spins has thousands */

struct client {
    int fd;
    uint64_t last_sent; /* read before each send: never after the server saw it */
    uint64_t closed_at; /* when it saw the server close (0: open) */
};
static struct client clients[CLIENTS];
static struct sockaddr_in server_addr;
static int failures;
#define FAIL(...) (printf("FAILED: " __VA_ARGS__), putchar('\n'), failures++)

static uint64_t now_ns(void) { /* CLOCK_MONOTONIC: the timer's default clock */
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * HWTIMER_SEC(1) + (uint64_t)ts.tv_nsec;
}

static int listen_on_loopback(void) { /* 127.0.0.1, on a port the kernel picks */
    socklen_t len = sizeof server_addr;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    server_addr.sin_family = AF_INET;
    server_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || bind(fd, (struct sockaddr *)&server_addr, sizeof server_addr) != 0 ||
        listen(fd, CLIENTS) != 0 ||
        getsockname(fd, (struct sockaddr *)&server_addr, &len) != 0 ||
        fcntl(fd, F_SETFL, O_NONBLOCK) != 0)
        die("listen on 127.0.0.1");
    return fd;
}

static int rounds_talked(int i) { /* the even ones talk throughout, the odd ones 0 to 4 */
    return i % 2 == 0 ? ROUNDS : i / 2 % 5;
}

static void *run_clients(void *unused) {
    uint64_t round_end, now;
    int round, i;
    (void)unused;
    for (i = 0; i < CLIENTS; i++) {
        clients[i].last_sent = now_ns();
        clients[i].fd = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(clients[i].fd, (struct sockaddr *)&server_addr, sizeof server_addr) != 0)
            die("connect to 127.0.0.1");
    }
    for (round = 0, round_end = now_ns(); round < ROUNDS; round++) {
        for (i = 0; i < CLIENTS; i++) {
            if (clients[i].closed_at || round >= rounds_talked(i)) continue;
            clients[i].last_sent = now_ns();
            send(clients[i].fd, "x", 1, MSG_NOSIGNAL);
        }
        for (round_end += TALK_EVERY; (now = now_ns()) < round_end;) { /* watch for closes */
            struct pollfd p[CLIENTS];
            for (i = 0; i < CLIENTS; i++) {
                p[i].fd = clients[i].closed_at ? -1 : clients[i].fd;
                p[i].events = POLLIN;
            }
            poll(p, CLIENTS, (int)((round_end - now) / HWTIMER_MS(1)) + 1);
            for (i = 0; i < CLIENTS; i++) /* the server never writes: readable is closed */
                if (p[i].revents) clients[i].closed_at = now_ns();
        }
    }
    for (i = 0; i < CLIENTS; i++) close(clients[i].fd); /* the talkers hang up */
    return NULL;
}

static int by_value(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* cached_lag: how far behind the clock a loop's cached time was (0: the loop reads it) */
static int check(const char *recipe, uint64_t cached_lag) {
    uint64_t late[CLIENTS];
    size_t n = 0;
    int i;
    for (i = 0; i < CLIENTS; i++) {
        const struct client *c = &clients[i];
        uint64_t due = c->last_sent + IDLE_LIMIT;
        if (rounds_talked(i) == ROUNDS) {
            if (c->closed_at) FAIL("talker %d was closed", i);
        } else if (!c->closed_at) {
            FAIL("quiet client %d was not closed", i);
        } else if (c->closed_at + cached_lag < due) {
            FAIL("client %d was closed %.2f ms early", i, (double)(due - c->closed_at) / 1e6);
        } else {
            late[n++] = c->closed_at > due ? c->closed_at - due : 0;
        }
    }
    qsort(late, n, sizeof *late, by_value);
    if (seen.closed_idle != CLIENTS / 2)
        FAIL("%u connections closed idle, not %d", seen.closed_idle, CLIENTS / 2);
    if (n && late[n / 2] > LATE_MEDIAN)
        FAIL("closed late: %.1f ms (median)", (double)late[n / 2] / 1e6);
    if (n && late[n - 1] > LATE_WORST)
        FAIL("closed late: %.1f ms (worst)", (double)late[n - 1] / 1e6);
    if (seen.empty_wakeups > EMPTY_WAKEUPS_MAX)
        FAIL("%u wake-ups ran nothing", seen.empty_wakeups);
    printf("%s: %u connections, %u closed idle, late by %.2f ms (median), %.2f ms (worst); "
           "%u timer wake-ups, %u ran nothing\n", recipe, seen.accepted, seen.closed_idle,
           n ? (double)late[n / 2] / 1e6 : 0.0, n ? (double)late[n - 1] / 1e6 : 0.0,
           seen.timer_wakeups, seen.empty_wakeups);
    return failures ? 1 : 0;
}

int main(void) {
    pthread_t client_thread;
    int listen_fd = listen_on_loopback();
    alarm(10); /* a watchdog: a demo that hangs is killed */
    if (pthread_create(&client_thread, NULL, run_clients, NULL) != 0) die("pthread_create");
    serve(listen_fd);
    pthread_join(client_thread, NULL);
    close(listen_fd);
    return check("epoll + timerfd", 0);
}
