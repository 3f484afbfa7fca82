/* loop_uring.c - close idle connections from an io_uring loop (liburing), with hwtimer.

   A keep-alive server closes each connection that has been quiet for IDLE_LIMIT (nginx's
   keepalive_timeout, Netty's IdleStateHandler) with one hwtimer timeout per connection:
   scheduled on accept, pushed back on every read, cancelled when the peer hangs up; when
   it fires, the connection is closed. Only the loop's thread uses the timer (no locks).

   Build:  cc -I<dir of hwtimer.h> loop_uring.c -luring -pthread    (-pthread: the clients)

   The loop only sleeps in io_uring_submit_and_wait: readiness comes as IORING_OP_POLL_ADD
   completions, and the timer is one IORING_OP_TIMEOUT in the ring.

   The glue, between the "glue" markers and on every line tagged "glue" (the timeout's
   fields, setup and dispatch): the timer's default clock is CLOCK_MONOTONIC in ns, the
   clock of an IORING_TIMEOUT_ABS timeout, so hwtimer_next_expiry() is that timeout's time
   as it is. Before each sleep the loop re-arms if the next expiry changed: it removes the
   timeout in flight (IORING_OP_TIMEOUT_REMOVE) and submits a new one, each tagged with a
   generation number so that a replaced one's completion is ignored. When the current one
   completes with -ETIME, hwtimer_poll() runs what is due.

   Closing a connection whose poll request is in the ring (its timeout fired): the ring
   holds the socket, so close() would not end the request. The callback shuts the socket
   down (the peer sees the close at once); the request then completes, and its completion
   closes and frees the connection.

   The demo (the second half of the file) serves clients on 127.0.0.1, checks what it saw,
   prints a summary and exits 0, or says what failed and exits 1.
   Where io_uring is not available (an old kernel, or disabled), it says so and exits 77. */
#define _GNU_SOURCE /* liburing.h needs GNU names (cpu_set_t) */
#define HWTIMER_IMPLEMENTATION
#include "hwtimer.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
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
    unsigned timer_wakeups, empty_wakeups; /* the timeout fired; ... and nothing was due */
} seen;

/* ---- the server --------------------------------------------------------------------- */

/* A request's user_data: a connection (a pointer: even), one of these, or a timeout's tag:
   its generation, shifted, with the low bit set (odd). */
enum { TAG_LISTEN = 2, TAG_REMOVE = 4 }; /* TAG_REMOVE: glue */
#define TIMEOUT_TAG(gen) (((gen) << 1) | 1u) /* glue */

struct conn {
    int fd;
    int closing;          /* shut down: the completion of its poll request frees it */
    hwtimer_timeout idle; /* fires when the connection has been quiet for IDLE_LIMIT */
};

struct server {
    hwtimer *timer;
    struct io_uring ring;
    int listen_fd;
    uint64_t armed; /* glue: the time of the timeout in flight; UINT64_MAX: none */
    uint64_t gen;   /* glue: the generation of the timeout in flight */
    struct __kernel_timespec when; /* glue: its time, which the ring reads at submission */
};

static struct io_uring_sqe *sqe_get(struct server *s) { /* flushes a full queue first (the
                                                            glue uses it too) */
    struct io_uring_sqe *sqe = io_uring_get_sqe(&s->ring);
    if (!sqe) io_uring_submit(&s->ring);
    if (!sqe && !(sqe = io_uring_get_sqe(&s->ring))) die("io_uring_get_sqe");
    return sqe;
}

/* ---- glue: one IORING_TIMEOUT_ABS timeout in the ring, at the timer's next expiry ---- */
static void uring_arm(struct server *s) { /* before each sleep */
    uint64_t next = hwtimer_next_expiry(s->timer); /* UINT64_MAX: nothing pending */
    struct io_uring_sqe *sqe;
    if (next == s->armed) return;
    if (s->armed != UINT64_MAX) {
        sqe = sqe_get(s);
        io_uring_prep_timeout_remove(sqe, TIMEOUT_TAG(s->gen), 0);
        io_uring_sqe_set_data64(sqe, TAG_REMOVE);
    }
    s->armed = next;
    if (next == UINT64_MAX) return;
    s->when.tv_sec = (long long)(next / HWTIMER_SEC(1));
    s->when.tv_nsec = (long long)(next % HWTIMER_SEC(1));
    sqe = sqe_get(s);
    io_uring_prep_timeout(sqe, &s->when, 0, IORING_TIMEOUT_ABS);
    io_uring_sqe_set_data64(sqe, TIMEOUT_TAG(++s->gen));
}

/* A timeout completed: the current one firing (-ETIME) is a wake-up; a replaced one
   completes with -ECANCELED (or -ETIME, if it fired first) and is ignored. */
static int uring_timer_due(struct server *s, uint64_t tag, int res) {
    if (tag != TIMEOUT_TAG(s->gen) || res != -ETIME) return 0;
    s->armed = UINT64_MAX; /* it is gone from the ring */
    return 1;              /* the caller runs hwtimer_poll() after the other completions */
}
/* ---- end of glue ---- */

static void poll_fd(struct server *s, int fd, uint64_t tag) {
    struct io_uring_sqe *sqe = sqe_get(s);
    io_uring_prep_poll_add(sqe, fd, POLLIN);
    io_uring_sqe_set_data64(sqe, tag);
}

static void conn_free(struct conn *c) {
    close(c->fd);
    free(c);
    seen.open--;
}

static void on_idle(hwtimer_timeout *to, void *arg) { /* its poll request is in the ring */
    struct conn *c = HWTIMER_CONTAINER_OF(to, struct conn, idle);
    (void)arg;
    seen.closed_idle++;
    shutdown(c->fd, SHUT_RDWR); /* the request completes, and conn_ready frees it */
    c->closing = 1;
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
        poll_fd(s, fd, (uint64_t)(uintptr_t)c);
        seen.accepted++;
        seen.open++;
        hwtimer_schedule(s->timer, &c->idle, IDLE_LIMIT, on_idle, s);
    }
    poll_fd(s, s->listen_fd, TAG_LISTEN);
}

static void conn_ready(struct server *s, struct conn *c) { /* its poll request completed */
    char buf[256];
    ssize_t n;
    if (c->closing) { /* shut down by on_idle */
        conn_free(c);
        return;
    }
    n = read(c->fd, buf, sizeof buf);
    if (n == 0 || (n < 0 && errno != EAGAIN)) { /* the peer hung up */
        hwtimer_cancel(s->timer, &c->idle);
        conn_free(c);
        return;
    }
    if (n > 0) hwtimer_reschedule(s->timer, &c->idle, IDLE_LIMIT); /* push it back */
    poll_fd(s, c->fd, (uint64_t)(uintptr_t)c);
}

static void serve(int listen_fd) {
    struct server s;
    hwtimer_config cfg;
    int err;
    memset(&s, 0, sizeof s);
    err = io_uring_queue_init(64, &s.ring, 0);
    if (err != 0) {
        printf("skipped: io_uring is not available here (%s)\n", strerror(-err));
        exit(77);
    }
    hwtimer_config_default(&cfg); /* its clock: CLOCK_MONOTONIC, the ring's */
    cfg.tick_ns = HWTIMER_MS(1);  /* the default tick is 100 ms */
    if (hwtimer_create(&s.timer, &cfg) != HWTIMER_OK) die("hwtimer_create");
    s.listen_fd = listen_fd;
    s.armed = UINT64_MAX; /* glue: no timeout in flight */
    poll_fd(&s, listen_fd, TAG_LISTEN);
    while (seen.accepted < CLIENTS || seen.open > 0) { /* the demo ends when all are gone */
        struct io_uring_cqe *cqe;
        int timer_due = 0; /* glue */
        uring_arm(&s); /* glue: the one call before the sleep */
        io_uring_submit_and_wait(&s.ring, 1);
        while (io_uring_peek_cqe(&s.ring, &cqe) == 0) {
            uint64_t tag = io_uring_cqe_get_data64(cqe);
            int res = cqe->res;
            io_uring_cqe_seen(&s.ring, cqe);
            if (tag & 1u) timer_due |= uring_timer_due(&s, tag, res); /* glue */
            else if (tag == TAG_LISTEN) accept_all(&s);
            else if (tag != TAG_REMOVE) conn_ready(&s, (struct conn *)(uintptr_t)tag);
        }
        if (timer_due) { /* glue: last, after the reads that push deadlines back */
            seen.timer_wakeups++;
            if (hwtimer_poll(s.timer) == 0) seen.empty_wakeups++;
        }
    }
    hwtimer_destroy(s.timer);
    io_uring_queue_exit(&s.ring);
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
    return check("io_uring", 0);
}
