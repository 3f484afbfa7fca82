/* loop_libuv.c - close idle connections from a libuv loop, with hwtimer.

   A keep-alive server closes each connection that has been quiet for IDLE_LIMIT (nginx's
   keepalive_timeout, Netty's IdleStateHandler) with one hwtimer timeout per connection:
   scheduled on accept, pushed back on every read, cancelled when the peer hangs up; when
   it fires, the connection is closed. Only the loop's thread uses the timer (no locks).

   Build:  cc -I<dir of hwtimer.h> loop_libuv.c -luv -pthread    (-pthread: the demo's clients)

   The glue, between the "glue" markers and on every line tagged "glue" (its fields, its
   setup in serve()): one uv_timer_t stands for the whole wheel.
   - Time: the timer's clock is uv_hrtime() (cfg.clock_fn), and uv_now() is the loop's
     cached time: the same clock in whole ms, read once per iteration. So uv_now() * 1e6
     is a "now" that is never ahead of the timer's clock and costs no clock read: the loop
     passes it to hwtimer_advance, and a read pushes its deadline back from it with
     hwtimer_reschedule_at, as libuv's own timers count from uv_now(). That time can be
     older than the data a callback reads (more so when an iteration ran long), and the
     idle timeout then closes up to that much early, as a libuv timer would; the demo
     measures the age and allows it. A new connection's first timeout uses
     hwtimer_schedule, which reads the clock: libuv accepts until the backlog is empty,
     and a connection made meanwhile can be newer than uv_now() by any amount.
   - A uv_prepare_t, which runs just before the loop sleeps, sets the uv timer to
     hwtimer_next_expiry() (whole ms from uv_now(), rounded up) when that changed, or stops
     it (nothing pending). So the loop's own schedules need nothing more.
   - When the uv timer fires, hwtimer_advance(timer, uv_now() * 1e6) runs what is due.
   For schedules from other threads, add cfg.threads, a uv_async_t, and a cfg.wake_fn that
   calls uv_async_send (loop_wake.c does the same with an eventfd).

   The demo (the second half of the file) serves clients on 127.0.0.1, checks what it saw,
   prints a summary and exits 0, or says what failed and exits 1. */
#define HWTIMER_IMPLEMENTATION
#include "hwtimer.h"

#include <arpa/inet.h>
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
#include <uv.h>

#define IDLE_LIMIT HWTIMER_MS(200) /* close a connection quiet for this long */
#define CLIENTS 20

static void die(const char *what) {
    perror(what);
    exit(1);
}

/* What the loop did, for the checks at the end. */
static struct {
    unsigned accepted, open, closed_idle;
    unsigned timer_wakeups, empty_wakeups; /* the uv timer fired; ... and nothing was due */
    uint64_t cached_lag; /* how far uv_now() was behind the clock at a read, at most */
} seen;

/* ---- the server --------------------------------------------------------------------- */

struct server {
    hwtimer *timer;
    uv_loop_t loop;
    uv_tcp_t listener;
    uv_timer_t tick;           /* glue: the uv timer that stands for the wheel */
    uv_prepare_t before_sleep; /* glue: sets it before the loop sleeps */
    uint64_t armed; /* glue: the next expiry the uv timer is set for; UINT64_MAX: stopped */
};

struct conn {
    uv_tcp_t tcp;
    struct server *s;
    hwtimer_timeout idle; /* fires when the connection has been quiet for IDLE_LIMIT */
    char buf[256];
};

/* ---- glue: one uv timer at the wheel's next expiry, on the loop's cached time -------- */
static uint64_t uv_clock(void *ctx) { /* cfg.clock_fn */
    (void)ctx;
    return uv_hrtime();
}

static uint64_t loop_now(const uv_loop_t *loop) { /* the cached time, on the timer's clock */
    return uv_now(loop) * HWTIMER_MS(1);
}

static void on_tick(uv_timer_t *handle) {
    struct server *s = HWTIMER_CONTAINER_OF(handle, struct server, tick);
    size_t ran;
    s->armed = UINT64_MAX;
    ran = hwtimer_advance(s->timer, loop_now(handle->loop));
    seen.timer_wakeups++;
    if (ran == 0) seen.empty_wakeups++;
}

static void before_sleep(uv_prepare_t *handle) { /* every iteration, before the poll */
    struct server *s = HWTIMER_CONTAINER_OF(handle, struct server, before_sleep);
    uint64_t next = hwtimer_next_expiry(s->timer), now = loop_now(handle->loop);
    if (next == s->armed) return;
    s->armed = next;
    if (next == UINT64_MAX) uv_timer_stop(&s->tick);
    else uv_timer_start(&s->tick, on_tick,
                        next > now ? (next - now + HWTIMER_MS(1) - 1) / HWTIMER_MS(1) : 0, 0);
}
/* ---- end of glue ---- */

static void conn_free(uv_handle_t *handle) { /* the last of a connection */
    struct server *s = HWTIMER_CONTAINER_OF(handle, struct conn, tcp)->s;
    free(HWTIMER_CONTAINER_OF(handle, struct conn, tcp));
    if (--seen.open > 0 || seen.accepted < CLIENTS) return;
    uv_close((uv_handle_t *)&s->listener, NULL); /* the demo is over: close the rest, */
    uv_close((uv_handle_t *)&s->tick, NULL);     /* and uv_run returns (glue: these two) */
    uv_close((uv_handle_t *)&s->before_sleep, NULL);
}

static void conn_close(struct conn *c) {
    hwtimer_cancel(c->s->timer, &c->idle); /* (nothing to do when it is the one that fired) */
    uv_close((uv_handle_t *)&c->tcp, conn_free); /* closes the socket now */
}

static void on_idle(hwtimer_timeout *to, void *arg) {
    (void)arg;
    seen.closed_idle++;
    conn_close(HWTIMER_CONTAINER_OF(to, struct conn, idle));
}

static void conn_buffer(uv_handle_t *handle, size_t suggested, uv_buf_t *buf) {
    struct conn *c = HWTIMER_CONTAINER_OF(handle, struct conn, tcp);
    (void)suggested;
    *buf = uv_buf_init(c->buf, sizeof c->buf);
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf) {
    struct conn *c = HWTIMER_CONTAINER_OF(stream, struct conn, tcp);
    uint64_t now = loop_now(stream->loop), lag = uv_hrtime() - now;
    (void)buf;
    if (nread > 0) { /* push it back, from the cached time: no clock read */
        hwtimer_reschedule_at(c->s->timer, &c->idle, now + IDLE_LIMIT);
        if (lag > seen.cached_lag) seen.cached_lag = lag; /* (for the demo's check) */
    } else if (nread < 0) { /* UV_EOF (the peer hung up), or an error */
        conn_close(c);
    }
}

static void on_connection(uv_stream_t *listener, int status) {
    struct server *s = HWTIMER_CONTAINER_OF(listener, struct server, listener);
    struct conn *c = status == 0 ? (struct conn *)calloc(1, sizeof *c) : NULL;
    if (!c) return;
    c->s = s;
    uv_tcp_init(&s->loop, &c->tcp);
    seen.open++; /* (conn_free counts it out) */
    if (uv_accept(listener, (uv_stream_t *)&c->tcp) != 0) {
        uv_close((uv_handle_t *)&c->tcp, conn_free);
        return;
    }
    seen.accepted++;
    uv_read_start((uv_stream_t *)&c->tcp, conn_buffer, on_read);
    hwtimer_schedule(s->timer, &c->idle, IDLE_LIMIT, on_idle, s); /* reads the clock */
}

static void serve(int listen_fd) {
    struct server s;
    hwtimer_config cfg;
    memset(&s, 0, sizeof s);
    hwtimer_config_default(&cfg);
    cfg.tick_ns = HWTIMER_MS(1); /* the default tick is 100 ms */
    cfg.clock_fn = uv_clock;     /* glue */
    if (hwtimer_create(&s.timer, &cfg) != HWTIMER_OK) die("hwtimer_create");
    s.armed = UINT64_MAX; /* glue: stopped */
    if (uv_loop_init(&s.loop) != 0) die("uv_loop_init");
    uv_timer_init(&s.loop, &s.tick);                 /* glue */
    uv_prepare_init(&s.loop, &s.before_sleep);       /* glue */
    uv_prepare_start(&s.before_sleep, before_sleep); /* glue */
    uv_tcp_init(&s.loop, &s.listener);
    if (uv_tcp_open(&s.listener, listen_fd) != 0 || /* (the listener owns it now) */
        uv_listen((uv_stream_t *)&s.listener, CLIENTS, on_connection) != 0)
        die("uv_listen");
    uv_run(&s.loop, UV_RUN_DEFAULT); /* until the last connection is gone */
    hwtimer_destroy(s.timer);
    if (uv_loop_close(&s.loop) != 0) die("uv_loop_close");
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
    serve(listen_fd); /* (which closes listen_fd) */
    pthread_join(client_thread, NULL);
    printf("libuv: at a read, uv_now() was up to %.2f ms behind the clock\n",
           (double)seen.cached_lag / 1e6);
    return check("libuv", seen.cached_lag);
}
