/* keepalive.h - idle_reaper.c's problem, its epoll server's common part, and its test.

   The problem: a keep-alive server on 127.0.0.1 closes each connection that has been quiet
   for IDLE_LIMIT (Netty's IdleStateHandler, nginx's keepalive_timeout). One hwtimer
   timeout per connection, pushed back on every read, closed when it fires. (The loop_*
   recipes solve the same problem, each on its own, as programs to copy.)

   What the example provides: serve(srv), run on its own thread. It adopts srv->listen_fd
   (a listening, non-blocking socket), builds its timer with keepalive_timer_config, and
   runs its epoll loop until srv->quit_fd (the read end of a pipe) becomes readable; then
   it closes every connection and destroys its timer. It reports what its loop saw through
   the keepalive_* calls below.

   The test (keepalive_run): CLIENTS connections; half of them talk every TALK_EVERY for
   the whole run, the others talk 0 to QUIET_AFTER_MAX-1 times and go quiet. Checked:
   - every quiet connection is closed once (the client reads EOF) and no talker is;
   - none early: the loop runs each close at or after its deadline, and each client sees
     EOF no sooner than IDLE_LIMIT after its last message;
   - lateness: the median under a tick plus a little, the worst under WORST_SLACK;
   - empty wake-ups (the timer woke the loop and advance ran nothing) are counted and
     bounded. A loop that sets its timer before every sleep wakes empty only where a
     timeout had to move down from a coarser level first: at most one per rotation of the
     finest wheel crossed, plus one;
   - with no connection left the loop sleeps: its timer does not wake it again.
   Include after harness.h, harness_threads.h and example_util.h. */
#ifndef HWTIMER_EXAMPLE_KEEPALIVE_H
#define HWTIMER_EXAMPLE_KEEPALIVE_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

/* An example may set its own IDLE_LIMIT, TICK, TICKS_PER_WHEEL and CLIENTS first. */
#ifndef IDLE_LIMIT
#define IDLE_LIMIT HWTIMER_MS(200)
#endif
#ifndef TICK
#define TICK HWTIMER_MS(1)
#endif
#ifndef TICKS_PER_WHEEL
#define TICKS_PER_WHEEL 512u /* a rotation of the finest wheel: 512 ms at 1 ms */
#endif
#ifndef CLIENTS
#define CLIENTS 100
#endif
#define TALK_EVERY HWTIMER_MS(50)
#define TALK_ROUNDS 16 /* the run: 0.8 s of talking */
#define QUIET_AFTER_MAX 5
/* Lateness tolerated on top of a tick. Typical (the median): the loop's own wake-up, seen by
   the loop (deadline to callback); the client sees two threads' wake-ups and the loopback
   stack too (its last send to its EOF). Worst: any thread may wait for a CPU on a busy
   machine. */
#define LOOP_TYPICAL_SLACK HWTIMER_MS(5)
#define CLIENT_TYPICAL_SLACK HWTIMER_MS(10)
#define WORST_SLACK HWTIMER_MS(100)

/* How the loop sets its timer: before every sleep (the kind whose empty wake-ups the
   test bounds, see the top). */
enum keepalive_rearm { KEEPALIVE_REARM_BEFORE_SLEEP };

/* What the server saw. The counters are atomics: the test reads them while the loop runs. */
typedef struct keepalive_server {
    int listen_fd, quit_fd;
    uint64_t started;
    unsigned live;          /* open connections */
    unsigned closed_idle;   /* closed by their idle timeout */
    unsigned timer_wakeups; /* the loop woke because its timer said so */
    unsigned empty_wakeups; /* ... and advance ran nothing */
    /* Written by the loop only, read after it has stopped: */
    uint64_t close_delays[CLIENTS]; /* each idle close: time past its deadline */
    unsigned close_delay_count;
    unsigned closed_early; /* closes run before their deadline */
} keepalive_server;

/* ---- for the example: the timer, and what the loop reports ------------------------- */

static inline void keepalive_timer_config(hwtimer_config *cfg) {
    hwtimer_config_default(cfg);
    cfg->tick_ns = TICK;
    cfg->ticks_per_wheel = TICKS_PER_WHEEL;
}

static inline void keepalive_opened(keepalive_server *srv) {
    ATOMIC_ADD(&srv->live, 1u);
}

static inline void keepalive_closed(keepalive_server *srv) {
    ATOMIC_ADD(&srv->live, -1u);
}

/* Call from the idle callback: `to` fired. Compares the real clock with its deadline. */
static inline void keepalive_idle_fired(keepalive_server *srv, const hwtimer_timeout *to) {
    uint64_t now = now_ns(), deadline = hwtimer_timeout_deadline(to);
    if (now < deadline) srv->closed_early++;
    else if (srv->close_delay_count < CLIENTS)
        srv->close_delays[srv->close_delay_count++] = now - deadline;
    ATOMIC_ADD(&srv->closed_idle, 1u);
}

/* Call when the loop woke because its timer was due, with what advance then ran. */
static inline void keepalive_timer_woke(keepalive_server *srv, size_t fired) {
    ATOMIC_ADD(&srv->timer_wakeups, 1u);
    if (fired == 0) ATOMIC_ADD(&srv->empty_wakeups, 1u);
}

/* Reads and discards what is there: 1 something was read, 0 nothing, -1 the peer closed
   (EOF, or an error such as ECONNRESET). */
static inline int keepalive__drain(int fd) {
    char buf[256];
    int active = 0;
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n > 0) active = 1;
        else if (n < 0 && errno == EINTR) continue;
        else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return active;
        else return -1;
    }
}

/* Accepts one connection, non-blocking; -1 when the backlog is empty (or on EMFILE and
   the like: the next wake-up tries again). */
static inline int keepalive__accept(int listen_fd) {
    for (;;) {
        int fd = accept(listen_fd, NULL, NULL);
        if (fd >= 0) {
            if (fcntl(fd, F_SETFL, O_NONBLOCK) == 0) return fd;
            close(fd);
        } else if (errno != EINTR && errno != ECONNABORTED) {
            return -1;
        }
    }
}

/* ---- the server's side: an epoll loop's connections ---------------------------------
   A connection is an fd and its idle timeout; accepting schedules the timeout, a read
   pushes it back, EOF cancels it, and when it fires the connection is closed. The example
   embeds a keepalive_epoll first in its server struct; epoll's data.ptr is a connection
   (or a marker the example chooses for its other descriptors). */
#include <sys/epoll.h>

typedef struct keepalive_conn {
    int fd;
    hwtimer_timeout idle; /* fires when the connection has been quiet for IDLE_LIMIT */
} keepalive_conn;

typedef struct keepalive_fds {
    keepalive_server *ka;
    hwtimer *timer;
} keepalive_fds;

typedef struct keepalive_epoll {
    keepalive_fds fds; /* first: the calls below get it */
    int epfd;
} keepalive_epoll;

static inline void keepalive_epoll_add(keepalive_epoll *e, int fd, void *ptr) {
    struct epoll_event ev;
    ev.events = EPOLLIN;
    ev.data.ptr = ptr;
    epoll_ctl(e->epfd, EPOLL_CTL_ADD, fd, &ev);
}

static void keepalive__close(keepalive_fds *fds, keepalive_conn *c) {
    epoll_ctl(((keepalive_epoll *)fds)->epfd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    keepalive_closed(fds->ka);
    free(c);
}

/* The idle timeout fired: nothing was read for IDLE_LIMIT. */
static void keepalive__on_idle(hwtimer_timeout *to, void *arg) {
    keepalive_fds *fds = (keepalive_fds *)arg;
    keepalive_idle_fired(fds->ka, to);
    keepalive__close(fds, HWTIMER_CONTAINER_OF(to, keepalive_conn, idle)); /* frees the node */
}

/* The listening socket is readable: accept every waiting connection. */
static inline void keepalive_accept_all(keepalive_fds *fds) {
    int fd;
    while ((fd = keepalive__accept(fds->ka->listen_fd)) >= 0) {
        keepalive_conn *c = (keepalive_conn *)calloc(1, sizeof *c);
        if (!c) {
            close(fd);
            continue;
        }
        c->fd = fd;
        keepalive_epoll_add((keepalive_epoll *)fds, fd, c);
        keepalive_opened(fds->ka);
        hwtimer_schedule(fds->timer, &c->idle, IDLE_LIMIT, keepalive__on_idle, fds);
    }
}

/* c->fd is readable: activity pushes the idle deadline back; EOF or an error closes.
   Returns 0 when it closed c. */
static inline int keepalive_conn_read(keepalive_fds *fds, keepalive_conn *c) {
    int got = keepalive__drain(c->fd);
    if (got > 0) {
        hwtimer_reschedule(fds->timer, &c->idle, IDLE_LIMIT);
    } else if (got < 0) {
        hwtimer_cancel(fds->timer, &c->idle);
        keepalive__close(fds, c);
        return 0;
    }
    return 1;
}

static void keepalive__close_unprocessed(hwtimer_timeout *to, void *arg) {
    keepalive__close((keepalive_fds *)arg, HWTIMER_CONTAINER_OF(to, keepalive_conn, idle));
}

/* At shutdown: hwtimer_stop hands back each pending timeout, each a connection still
   open, and it is closed. */
static inline void keepalive_close_all(keepalive_fds *fds) {
    hwtimer_stop(fds->timer, keepalive__close_unprocessed, fds);
}

static inline void keepalive_epoll_init(keepalive_epoll *e, keepalive_server *ka,
                                        hwtimer *timer) {
    e->fds.ka = ka;
    e->fds.timer = timer;
    e->epfd = epoll_create1(0);
    if (e->epfd < 0) {
        perror("epoll_create1");
        exit(1);
    }
}

/* ---- the clients (the test's side) --------------------------------------------------- */

typedef struct keepalive_client {
    int fd;
    int talker;         /* talks every round for the whole run */
    int quiet_after;    /* a quiet one: the rounds it talks before it goes quiet */
    uint64_t last_sent; /* taken before connect/send, so never after the server saw it */
    uint64_t eof_at;    /* 0: still open */
} keepalive_client;

static int keepalive__listen(uint16_t *port) {
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

static void keepalive__connect(keepalive_client *c, uint16_t port) {
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

static void keepalive__talk(keepalive_client *c) {
    c->last_sent = now_ns();
    if (send(c->fd, "x", 1, MSG_NOSIGNAL) != 1) c->eof_at = now_ns(); /* EPIPE: closed */
}

/* Waits until `until` for EOF on the open clients, recording when each was closed. */
static void keepalive__watch_for_eof(keepalive_client *clients, uint64_t until) {
    struct pollfd fds[CLIENTS];
    uint64_t now;
    while ((now = now_ns()) < until) {
        int i, ready;
        for (i = 0; i < CLIENTS; i++) {
            fds[i].fd = clients[i].eof_at ? -1 : clients[i].fd; /* -1: poll skips it */
            fds[i].events = POLLIN;
        }
        ready = poll(fds, CLIENTS, (int)((until - now + HWTIMER_MS(1) - 1) / HWTIMER_MS(1)));
        now = now_ns();
        for (i = 0; ready > 0 && i < CLIENTS; i++) {
            char byte;
            if (fds[i].fd >= 0 && fds[i].revents && recv(clients[i].fd, &byte, 1, 0) <= 0)
                clients[i].eof_at = now; /* 0: EOF; -1: reset */
        }
    }
}

static int keepalive__speaks(const keepalive_client *c, int round) {
    return !c->eof_at && (c->talker || round < c->quiet_after);
}

/* Every TALK_EVERY: the talkers and the not-yet-quiet ones send a byte. */
static void keepalive__run_clients(keepalive_client *clients) {
    uint64_t round_end = now_ns();
    int round, i;
    for (round = 0; round < TALK_ROUNDS; round++) {
        for (i = 0; i < CLIENTS; i++)
            if (keepalive__speaks(&clients[i], round)) keepalive__talk(&clients[i]);
        round_end += TALK_EVERY;
        keepalive__watch_for_eof(clients, round_end);
    }
}

/* The talkers are open; each quiet one was closed once, IDLE_LIMIT after its last
   message. */
static void keepalive__check_clients(const char *recipe, const keepalive_client *clients) {
    uint64_t late[CLIENTS];
    size_t closed = 0;
    int i;
    for (i = 0; i < CLIENTS; i++) {
        const keepalive_client *c = &clients[i];
        if (c->talker) {
            CHECK(c->eof_at == 0);
        } else {
            CHECK(c->eof_at != 0);
            if (c->eof_at == 0) continue;
            CHECK(c->eof_at >= c->last_sent + IDLE_LIMIT);
            late[closed++] = c->eof_at > c->last_sent + IDLE_LIMIT
                                 ? c->eof_at - c->last_sent - IDLE_LIMIT
                                 : 0;
        }
    }
    check_lateness(recipe, "closes seen by the client", late, closed,
                   TICK + CLIENT_TYPICAL_SLACK, TICK + WORST_SLACK);
}

static void keepalive__wait_until_no_connections(keepalive_server *srv) {
    uint64_t give_up = now_ns() + HWTIMER_SEC(2);
    while (ATOMIC_GET(&srv->live) != 0 && now_ns() < give_up) sleep_ns(HWTIMER_MS(1));
    CHECK_EQ(ATOMIC_GET(&srv->live), 0);
}

/* Once every connection is gone nothing is pending: the loop's timer stays quiet. Then the
   empty wake-ups, against the bound the top of the file explains. */
static void keepalive__check_sleeps(const char *recipe, keepalive_server *srv) {
    unsigned wakeups = ATOMIC_GET(&srv->timer_wakeups), empty, bound;
    uint64_t elapsed;
    sleep_ns(IDLE_LIMIT + HWTIMER_MS(20));
    CHECK_EQ(ATOMIC_GET(&srv->timer_wakeups), wakeups);
    wakeups = ATOMIC_GET(&srv->timer_wakeups);
    sleep_ns(HWTIMER_MS(200));
    CHECK_EQ(ATOMIC_GET(&srv->timer_wakeups), wakeups);
    empty = ATOMIC_GET(&srv->empty_wakeups);
    elapsed = now_ns() - srv->started;
    bound = (unsigned)(elapsed / (TICK * TICKS_PER_WHEEL)) + 1;
    printf("%s: %u timer wake-ups, %u empty (bound %u)\n", recipe, wakeups, empty, bound);
    CHECK(empty <= bound);
}

/* Each connection takes two descriptors in this process (client and server side). */
static void keepalive__enough_descriptors(void) {
    struct rlimit lim = {0, 0};
    rlim_t need = 2 * CLIENTS + 32;
    if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < need) {
        lim.rlim_cur = lim.rlim_max < need ? lim.rlim_max : need;
        setrlimit(RLIMIT_NOFILE, &lim);
        getrlimit(RLIMIT_NOFILE, &lim);
    }
    if (lim.rlim_cur < need) {
        fprintf(stderr, "fatal: %d connections need %lu descriptors\n", CLIENTS,
                (unsigned long)need);
        exit(1);
    }
}

/* Runs the whole test against serve(srv) on its own thread; see the top of the file. */
static void keepalive_run(const char *recipe, void (*serve)(void *srv),
                          enum keepalive_rearm rearm) {
    keepalive_server srv;
    keepalive_client clients[CLIENTS];
    int quit_pipe[2], i;
    uint16_t port;
    test_thread loop;
    (void)rearm; /* the one kind there is */
    keepalive__enough_descriptors();
    memset(&srv, 0, sizeof srv);
    memset(clients, 0, sizeof clients);
    srv.listen_fd = keepalive__listen(&port);
    if (pipe(quit_pipe) != 0) {
        perror("pipe");
        exit(1);
    }
    srv.quit_fd = quit_pipe[0];
    srv.started = now_ns();
    test_thread_start(&loop, serve, &srv);

    for (i = 0; i < CLIENTS; i++) {
        clients[i].talker = i % 2 == 0;
        clients[i].quiet_after = (i / 2) % QUIET_AFTER_MAX;
        keepalive__connect(&clients[i], port);
    }
    keepalive__run_clients(clients);
    keepalive__check_clients(recipe, clients);
    CHECK_EQ(ATOMIC_GET(&srv.closed_idle), CLIENTS / 2);
    CHECK_EQ(ATOMIC_GET(&srv.live), CLIENTS / 2);

    for (i = 0; i < CLIENTS; i++) close(clients[i].fd); /* the talkers hang up */
    keepalive__wait_until_no_connections(&srv);
    keepalive__check_sleeps(recipe, &srv);

    CHECK_EQ(write(quit_pipe[1], "q", 1), 1);
    test_thread_join(&loop);
    CHECK_EQ(srv.closed_early, 0);
    check_lateness(recipe, "closes seen by the loop", srv.close_delays, srv.close_delay_count,
                   TICK + LOOP_TYPICAL_SLACK, TICK + WORST_SLACK);
    close(srv.listen_fd);
    close(quit_pipe[0]);
    close(quit_pipe[1]);
}

#endif
