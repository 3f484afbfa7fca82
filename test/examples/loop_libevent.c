/* loop_libevent.c - close idle connections from a libevent loop, with hwtimer.

   A keep-alive server closes each connection that has been quiet for IDLE_LIMIT (nginx's
   keepalive_timeout, Netty's IdleStateHandler) with one hwtimer timeout per connection:
   scheduled on accept, pushed back on every read, cancelled when the peer hangs up; when
   it fires, the connection is closed. Only the loop's thread uses the timer (no locks).

   Build:  cc -I<dir of hwtimer.h> loop_libevent.c -levent -pthread    (-pthread: the clients)

   The loop is libevent's (event_base_dispatch), so there is no "before the sleep" where
   the glue could look at the timer: one libevent timer event stands for the whole wheel,
   and the wheel says when that event must move. The glue, between the "glue" markers
   and on every line tagged "glue" (its fields, its setup in serve()):
   - the event (tick) is kept at hwtimer_next_expiry(); when it fires, hwtimer_poll() runs
     what is due and the event is set again (or deleted: nothing pending);
   - cfg.wake_fn: hwtimer calls it inside a schedule whose deadline is earlier than the
     time the event was last set to (or when nothing was pending), and it sets the event
     again. A pushed-back deadline does not call it, so the event may fire before anything
     is due: the loop then runs nothing and sets the event again (an empty wake-up);
   - the loop asks once (tick_arm) before event_base_dispatch: wake_fn tells of changes to
     an answer, so there must have been one;
   - EVENT_BASE_FLAG_PRECISE_TIMER: without it libevent reads a coarse clock and sleeps in
     whole ms.

   The demo (the second half of the file) serves clients on 127.0.0.1, checks what it saw,
   prints a summary and exits 0, or says what failed and exits 1. */
#define HWTIMER_IMPLEMENTATION
#include "hwtimer.h"

#include <arpa/inet.h>
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
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
    unsigned timer_wakeups, empty_wakeups; /* the timer event fired; ... and nothing was due */
} seen;

/* ---- the server --------------------------------------------------------------------- */

struct server {
    hwtimer *timer;
    struct event_base *base;
    struct event *tick; /* glue: the timer event that stands for the wheel */
};

struct conn {
    int fd;
    struct server *s;
    struct event *readable;
    hwtimer_timeout idle; /* fires when the connection has been quiet for IDLE_LIMIT */
};

/* ---- glue: the timer event at the wheel's next expiry -------------------------------- */
static void tick_arm(struct server *s) {
    uint64_t next = hwtimer_next_expiry(s->timer), now, wait;
    struct timeval tv;
    if (next == UINT64_MAX) { /* nothing pending */
        evtimer_del(s->tick);
        return;
    }
    now = hwtimer_now(s->timer);
    wait = next > now ? next - now + HWTIMER_US(1) - 1 : 0; /* whole us, rounded up */
    tv.tv_sec = (time_t)(wait / HWTIMER_SEC(1));
    tv.tv_usec = (suseconds_t)(wait % HWTIMER_SEC(1) / HWTIMER_US(1));
    evtimer_add(s->tick, &tv); /* replaces the time it was set to */
}

static void on_tick(evutil_socket_t fd, short what, void *arg) {
    struct server *s = (struct server *)arg;
    size_t ran = hwtimer_poll(s->timer);
    (void)fd;
    (void)what;
    seen.timer_wakeups++;
    if (ran == 0) seen.empty_wakeups++;
    tick_arm(s);
}

static void on_wake(void *ctx) { /* cfg.wake_fn: a schedule needs the event earlier */
    tick_arm((struct server *)ctx);
}
/* ---- end of glue ---- */

static void conn_close(struct conn *c) {
    hwtimer_cancel(c->s->timer, &c->idle); /* (nothing to do when it is the one that fired) */
    event_free(c->readable);
    close(c->fd);
    if (--seen.open == 0 && seen.accepted == CLIENTS) event_base_loopbreak(c->s->base);
    free(c);
}

static void on_idle(hwtimer_timeout *to, void *arg) {
    (void)arg;
    seen.closed_idle++;
    conn_close(HWTIMER_CONTAINER_OF(to, struct conn, idle));
}

static void on_readable(evutil_socket_t fd, short what, void *arg) {
    struct conn *c = (struct conn *)arg;
    char buf[256];
    ssize_t n = read(fd, buf, sizeof buf);
    (void)what;
    if (n > 0) hwtimer_reschedule(c->s->timer, &c->idle, IDLE_LIMIT); /* push it back */
    else if (n == 0 || errno != EAGAIN) conn_close(c);                /* the peer hung up */
}

static void on_accept(evutil_socket_t listen_fd, short what, void *arg) {
    struct server *s = (struct server *)arg;
    int fd;
    (void)what;
    while ((fd = accept(listen_fd, NULL, NULL)) >= 0) {
        struct conn *c = (struct conn *)calloc(1, sizeof *c);
        if (!c || fcntl(fd, F_SETFL, O_NONBLOCK) != 0 ||
            !(c->readable = event_new(s->base, fd, EV_READ | EV_PERSIST, on_readable, c))) {
            free(c);
            close(fd);
            continue;
        }
        c->fd = fd;
        c->s = s;
        event_add(c->readable, NULL);
        seen.accepted++;
        seen.open++;
        hwtimer_schedule(s->timer, &c->idle, IDLE_LIMIT, on_idle, s); /* may call on_wake */
    }
}

static void serve(int listen_fd) {
    struct server s;
    hwtimer_config cfg;
    struct event *accepting;
    struct event_config *ec = event_config_new();
    event_config_set_flag(ec, EVENT_BASE_FLAG_PRECISE_TIMER); /* glue: CLOCK_MONOTONIC, us */
    s.base = event_base_new_with_config(ec);
    event_config_free(ec);
    if (!s.base) die("event_base_new_with_config");
    s.tick = evtimer_new(s.base, on_tick, &s); /* glue */
    hwtimer_config_default(&cfg);
    cfg.tick_ns = HWTIMER_MS(1); /* the default tick is 100 ms */
    cfg.wake_fn = on_wake;       /* glue */
    cfg.wake_ctx = &s;           /* glue */
    if (hwtimer_create(&s.timer, &cfg) != HWTIMER_OK) die("hwtimer_create");
    accepting = event_new(s.base, listen_fd, EV_READ | EV_PERSIST, on_accept, &s);
    event_add(accepting, NULL);
    tick_arm(&s); /* glue: ask once before the loop first sleeps */
    event_base_dispatch(s.base); /* until the last connection is closed */
    hwtimer_destroy(s.timer);
    event_free(accepting);
    event_free(s.tick); /* glue */
    event_base_free(s.base);
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
    return check("libevent", 0);
}
