/* idle_reaper.c - close idle TCP connections from an epoll loop that drives the timer.

   The problem: a server holds many keep-alive connections and must close the ones that
   have been quiet for IDLE_LIMIT (Netty's IdleStateHandler, nginx's keepalive_timeout, the
   long-connection management of a comet push server). One timeout per connection, pushed
   back on every read, is the textbook use of a timer wheel: it is pushed back far more
   often than it fires, so the push-back must be cheap.

   How the timer is used:
   - Caller-driven, one thread, no locks (cfg.threads = NULL): the server's epoll loop owns
     the timer. epoll_wait sleeps for hwtimer_poll_timeout_ms() and hwtimer_poll() runs
     whatever is due after each wake-up. With no connection nothing is pending, the timeout
     is -1 and the loop sleeps until the next event.
   - Each connection embeds its hwtimer_timeout. A read calls hwtimer_reschedule(), which
     only moves the node: the timer allocates nothing per connection or read. The callback
     closes and frees the connection (a one-shot callback may free its own node).
   - At shutdown hwtimer_stop hands back the pending timeouts: the connections still open.

   The test: the server runs on its own thread on 127.0.0.1 (an ephemeral port); the main
   thread opens up to 300 connections. Half of them talk every 50 ms for the whole run, the
   others talk for 0 to 4 rounds and then go quiet. Checked: exactly the quiet ones are
   closed (the client reads EOF), each at >= IDLE_LIMIT after its last message and, in the
   median, less than a tick plus a little past it (at worst WORST_SLACK, for a busy
   machine); the loop runs each close at or after its deadline; the talkers are never
   closed; the loop never wakes with no event and nothing due, and sleeps with -1 whenever
   there is no connection; the timer allocates once, in hwtimer_create. */
#include "../harness.h"
#include "../harness_threads.h"
#include "example_util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stddef.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#define IDLE_LIMIT (300 * MS)
#define TICK (10 * MS)
/* One rotation of the finest wheel is TICK * 1024 = 10.24 s, longer than the whole run.
   Only where a rotation boundary is crossed may a timeout have to move down from a coarser
   level, the one case where hwtimer_next_expiry wakes the loop before anything is due. */
#define TICKS_PER_WHEEL 1024u
/* Lateness tolerated on top of a tick. Typical (the median): the loop's wake-up, seen by
   the loop (deadline to callback); the client sees two threads' wake-ups and the loopback
   stack too (its last send to its EOF). Worst: any thread may wait for a CPU on a busy
   machine. */
#define LOOP_TYPICAL_SLACK (5 * MS)
#define CLIENT_TYPICAL_SLACK (10 * MS)
#define WORST_SLACK (100 * MS)
#define CLIENTS_WANTED 300
#define TALK_EVERY (50 * MS)
#define TALK_ROUNDS 20 /* the run: 1 s of talking */
#define QUIET_AFTER_MAX 5 /* a quiet client talks 0 .. QUIET_AFTER_MAX-1 rounds */

/* ---- the server ------------------------------------------------------------------------ */

typedef struct server {
    int epfd, listen_fd, quit_pipe[2];
    uint16_t port;
    hwtimer *timer;
    uint64_t started;
    unsigned allocations;
    test_thread thread;
    /* What the loop observed. Atomics: the test reads them while the loop runs. */
    unsigned live;          /* open connections */
    unsigned wakeups;       /* epoll_wait returns (EINTR aside) */
    unsigned idle_wakeups;  /* ... with no event and no callback run */
    unsigned waits_forever; /* waits with timeout -1 */
    unsigned bad_waits;     /* -1 with a connection open, or a timeout with none */
    unsigned closed_idle;
    /* The loop's own view of each idle close: time since the deadline (loop only). */
    uint64_t close_delays[CLIENTS_WANTED];
    unsigned close_delay_count;
    unsigned closed_early; /* before the deadline */
} server;

typedef struct conn {
    int fd;
    server *srv;
    hwtimer_timeout idle; /* fires when the connection has been quiet for IDLE_LIMIT */
} conn;

/* epoll's data.ptr: a conn, or one of these two markers. */
static char listener_marker, quit_marker;

/* The timer's allocator, counted: hwtimer_create allocates once, and nothing else may. */
static void *counting_alloc(size_t size, void *ctx) {
    ((server *)ctx)->allocations++;
    return malloc(size);
}

static void plain_free(void *ptr, void *ctx) {
    (void)ctx;
    free(ptr);
}

static void conn_close(conn *c) {
    epoll_ctl(c->srv->epfd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    ATOMIC_ADD(&c->srv->live, -1u);
    free(c);
}

/* For the test: how long after its deadline the loop closed an idle connection. */
static void note_idle_close(server *srv, const hwtimer_timeout *to) {
    uint64_t now = now_ns(), deadline = hwtimer_timeout_deadline(to);
    if (now < deadline) srv->closed_early++;
    else if (srv->close_delay_count < CLIENTS_WANTED)
        srv->close_delays[srv->close_delay_count++] = now - deadline;
    ATOMIC_ADD(&srv->closed_idle, 1u);
}

/* The idle timeout fired: nothing was read for IDLE_LIMIT. */
static void on_idle(hwtimer_timeout *to, void *arg) {
    conn *c = (conn *)arg;
    note_idle_close(c->srv, to);
    conn_close(c); /* frees the node too: the timer no longer refers to it */
}

static void conn_open(server *srv, int fd) {
    struct epoll_event ev;
    conn *c = (conn *)calloc(1, sizeof *c);
    if (!c || fcntl(fd, F_SETFL, O_NONBLOCK) != 0) {
        free(c);
        close(fd);
        return;
    }
    c->fd = fd;
    c->srv = srv;
    ev.events = EPOLLIN;
    ev.data.ptr = c;
    epoll_ctl(srv->epfd, EPOLL_CTL_ADD, fd, &ev);
    ATOMIC_ADD(&srv->live, 1u);
    hwtimer_schedule(srv->timer, &c->idle, IDLE_LIMIT, on_idle, c);
}

static void accept_all(server *srv) {
    for (;;) {
        int fd = accept(srv->listen_fd, NULL, NULL);
        if (fd >= 0) {
            conn_open(srv, fd);
        } else if (errno != EINTR && errno != ECONNABORTED) {
            return; /* EAGAIN: the backlog is empty; EMFILE and the like: next wake-up */
        }
    }
}

/* Reads what is there. Activity pushes the idle deadline back; EOF or an error closes. */
static void conn_read(conn *c) {
    char buf[256];
    int active = 0;
    for (;;) {
        ssize_t n = read(c->fd, buf, sizeof buf);
        if (n > 0) {
            active = 1;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            break;
        } else { /* 0: the peer closed; or ECONNRESET and the like */
            hwtimer_cancel(c->srv->timer, &c->idle);
            conn_close(c);
            return;
        }
    }
    if (active) hwtimer_reschedule(c->srv->timer, &c->idle, IDLE_LIMIT);
}

/* Records whether the loop's sleep agrees with its connections: -1 exactly when none. */
static void note_wait(server *srv, int timeout_ms) {
    int forever = timeout_ms == -1;
    if (forever) ATOMIC_ADD(&srv->waits_forever, 1u);
    if (forever != (ATOMIC_GET(&srv->live) == 0)) ATOMIC_ADD(&srv->bad_waits, 1u);
}

static void server_main(void *arg) {
    server *srv = (server *)arg;
    struct epoll_event events[64];
    int quit = 0;
    while (!quit) {
        int timeout_ms = hwtimer_poll_timeout_ms(srv->timer);
        int n, i;
        size_t fired;
        note_wait(srv, timeout_ms);
        n = epoll_wait(srv->epfd, events, 64, timeout_ms);
        if (n < 0) {
            if (errno == EINTR) continue;
            perror("epoll_wait");
            return;
        }
        ATOMIC_ADD(&srv->wakeups, 1u);
        for (i = 0; i < n; i++) {
            void *p = events[i].data.ptr;
            if (p == &listener_marker) accept_all(srv);
            else if (p == &quit_marker) quit = 1;
            else conn_read((conn *)p);
        }
        fired = hwtimer_poll(srv->timer);
        if (n == 0 && fired == 0) ATOMIC_ADD(&srv->idle_wakeups, 1u);
    }
}

static int listen_loopback(uint16_t *port) {
    struct sockaddr_in addr;
    socklen_t len = sizeof addr;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0 ||
        listen(fd, SOMAXCONN) != 0 || getsockname(fd, (struct sockaddr *)&addr, &len) != 0 ||
        fcntl(fd, F_SETFL, O_NONBLOCK) != 0) {
        perror("listen on 127.0.0.1");
        exit(1);
    }
    *port = ntohs(addr.sin_port);
    return fd;
}

static void watch(server *srv, int fd, void *marker) {
    struct epoll_event ev;
    ev.events = EPOLLIN;
    ev.data.ptr = marker;
    epoll_ctl(srv->epfd, EPOLL_CTL_ADD, fd, &ev);
}

static void server_start(server *srv) {
    hwtimer_config cfg;
    hwtimer_config_default(&cfg); /* threads NULL: only the loop's thread uses the timer */
    cfg.tick_ns = TICK;
    cfg.ticks_per_wheel = TICKS_PER_WHEEL;
    cfg.alloc_fn = counting_alloc;
    cfg.free_fn = plain_free;
    cfg.alloc_ctx = srv;
    srv->timer = create_or_die(&cfg);
    srv->started = now_ns();
    srv->listen_fd = listen_loopback(&srv->port);
    srv->epfd = epoll_create1(0);
    if (srv->epfd < 0 || pipe(srv->quit_pipe) != 0) {
        perror("epoll_create1/pipe");
        exit(1);
    }
    watch(srv, srv->listen_fd, &listener_marker);
    watch(srv, srv->quit_pipe[0], &quit_marker);
    test_thread_start(&srv->thread, server_main, srv);
}

/* hwtimer_stop hands back each pending timeout: each is a connection still open. */
static void close_unprocessed(hwtimer_timeout *to, void *ctx) {
    conn *c = (conn *)(void *)((char *)to - offsetof(conn, idle));
    (void)ctx;
    conn_close(c);
}

static void server_stop(server *srv) {
    CHECK_EQ(write(srv->quit_pipe[1], "q", 1), 1);
    test_thread_join(&srv->thread);
    hwtimer_stop(srv->timer, close_unprocessed, NULL);
    hwtimer_destroy(srv->timer);
    close(srv->listen_fd);
    close(srv->quit_pipe[0]);
    close(srv->quit_pipe[1]);
    close(srv->epfd);
}

/* ---- the clients (the test's side) ----------------------------------------------------- */

typedef struct client {
    int fd;
    int talker;         /* talks every round for the whole run */
    int quiet_after;    /* a quiet one: the rounds it talks before it goes quiet */
    uint64_t last_sent; /* taken before connect/send, so never after the server saw it */
    uint64_t eof_at;    /* 0: still open */
} client;

/* Up to CLIENTS_WANTED, as many as the descriptor limit allows (two per connection). */
static int client_count(void) {
    struct rlimit lim;
    rlim_t need = 2 * CLIENTS_WANTED + 32;
    if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return 16;
    if (lim.rlim_cur < need) {
        lim.rlim_cur = lim.rlim_max < need ? lim.rlim_max : need;
        setrlimit(RLIMIT_NOFILE, &lim);
        getrlimit(RLIMIT_NOFILE, &lim);
    }
    return lim.rlim_cur >= need ? CLIENTS_WANTED : (int)((lim.rlim_cur - 32) / 2);
}

static void client_connect(client *c, uint16_t port) {
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(port);
    c->last_sent = now_ns();
    c->fd = socket(AF_INET, SOCK_STREAM, 0);
    if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
        perror("connect to 127.0.0.1");
        exit(1);
    }
}

static void client_talk(client *c) {
    c->last_sent = now_ns();
    if (send(c->fd, "x", 1, MSG_NOSIGNAL) != 1) c->eof_at = now_ns(); /* EPIPE: closed */
}

/* Waits until `until` for EOF on the open clients, recording when each was closed. */
static void watch_for_eof(client *clients, int count, uint64_t until) {
    struct pollfd *fds = (struct pollfd *)calloc_or_die((size_t)count, sizeof *fds);
    uint64_t now;
    while ((now = now_ns()) < until) {
        int i, ready;
        for (i = 0; i < count; i++) {
            fds[i].fd = clients[i].eof_at ? -1 : clients[i].fd; /* -1: poll skips it */
            fds[i].events = POLLIN;
        }
        ready = poll(fds, (nfds_t)count, (int)((until - now + MS - 1) / MS));
        now = now_ns();
        for (i = 0; ready > 0 && i < count; i++) {
            char byte;
            if (fds[i].fd >= 0 && fds[i].revents && recv(clients[i].fd, &byte, 1, 0) <= 0)
                clients[i].eof_at = now; /* 0: EOF; -1: reset */
        }
    }
    free(fds);
}

static int client_speaks(const client *c, int round) {
    return !c->eof_at && (c->talker || round < c->quiet_after);
}

/* Every TALK_EVERY: the talkers and the not-yet-quiet ones send a byte. */
static void run_clients(client *clients, int count) {
    uint64_t round_end = now_ns();
    int round, i;
    for (round = 0; round < TALK_ROUNDS; round++) {
        for (i = 0; i < count; i++)
            if (client_speaks(&clients[i], round)) client_talk(&clients[i]);
        round_end += TALK_EVERY;
        watch_for_eof(clients, count, round_end);
    }
}

/* Lateness past the due time: typically under a tick plus a little, always bounded. */
static void reaper_check_lateness(const char *view, uint64_t *late, size_t count,
                           uint64_t typical_slack) {
    uint64_t typical = median(late, count), worst = count ? late[count - 1] : 0;
    printf("%s: late by %.1f ms (median), %.1f ms (worst); tick %llu ms\n", view,
           (double)typical / (double)MS, (double)worst / (double)MS,
           (unsigned long long)(TICK / MS));
    CHECK(typical < TICK + typical_slack);
    CHECK(worst < TICK + WORST_SLACK);
}

/* The talkers are open; each quiet one was closed IDLE_LIMIT after its last message. */
static void check_closed_exactly_the_quiet_ones(const client *clients, int count) {
    uint64_t *late = (uint64_t *)calloc_or_die((size_t)count, sizeof *late);
    size_t closed = 0;
    int i;
    for (i = 0; i < count; i++) {
        const client *c = &clients[i];
        if (c->talker) {
            CHECK(c->eof_at == 0);
            continue;
        }
        CHECK(c->eof_at != 0);
        if (c->eof_at == 0) continue;
        CHECK(c->eof_at - c->last_sent >= IDLE_LIMIT);
        late[closed++] = c->eof_at - c->last_sent - IDLE_LIMIT;
    }
    reaper_check_lateness("closed after the idle limit, seen by the client", late, closed,
                   CLIENT_TYPICAL_SLACK);
    free(late);
}

static void close_talkers(client *clients, int count) {
    int i;
    for (i = 0; i < count; i++)
        if (clients[i].talker) close(clients[i].fd);
}

static void wait_until_no_connections(server *srv) {
    uint64_t give_up = now_ns() + 2 * SEC;
    while (ATOMIC_GET(&srv->live) != 0 && now_ns() < give_up) sleep_ns(1 * MS);
    CHECK_EQ(ATOMIC_GET(&srv->live), 0);
}

static void test_idle_connections_are_reaped(void) {
    server srv;
    int count = client_count(), talkers = 0, i;
    client *clients = (client *)calloc_or_die((size_t)count, sizeof *clients);
    unsigned wakeups, rotations;
    memset(&srv, 0, sizeof srv);
    server_start(&srv);

    for (i = 0; i < count; i++) {
        clients[i].talker = i % 2 == 0;
        clients[i].quiet_after = (i / 2) % QUIET_AFTER_MAX;
        talkers += clients[i].talker;
        client_connect(&clients[i], srv.port);
    }
    run_clients(clients, count);
    check_closed_exactly_the_quiet_ones(clients, count);
    CHECK_EQ(ATOMIC_GET(&srv.closed_idle), count - talkers);
    CHECK_EQ(ATOMIC_GET(&srv.live), talkers);

    /* The talkers hang up; the server closes them and sleeps with -1: no more wake-ups. */
    close_talkers(clients, count);
    wait_until_no_connections(&srv);
    wakeups = ATOMIC_GET(&srv.wakeups);
    sleep_ns(200 * MS);
    CHECK_EQ(ATOMIC_GET(&srv.wakeups), wakeups);

    rotations = (unsigned)((now_ns() - srv.started) / (TICK * TICKS_PER_WHEEL));
    printf("%d connections, %u loop wake-ups, %u with nothing to do, %u waits with -1\n",
           count, wakeups, ATOMIC_GET(&srv.idle_wakeups), ATOMIC_GET(&srv.waits_forever));
    CHECK(ATOMIC_GET(&srv.idle_wakeups) <= rotations);
    /* it slept with -1 before the first connection and after the last */
    CHECK(ATOMIC_GET(&srv.waits_forever) >= 2);
    CHECK_EQ(ATOMIC_GET(&srv.bad_waits), 0);

    server_stop(&srv);
    CHECK_EQ(srv.closed_early, 0);
    reaper_check_lateness("closed after the deadline, seen by the loop", srv.close_delays,
                   srv.close_delay_count, LOOP_TYPICAL_SLACK);
    CHECK_EQ(srv.allocations, 1); /* hwtimer_create's block, nothing per connection or read */
    for (i = 0; i < count; i++)
        if (!clients[i].talker) close(clients[i].fd);
    free(clients);
}

int main(void) {
    RUN_TIMED_TEST(test_idle_connections_are_reaped);
    return test_finish();
}
