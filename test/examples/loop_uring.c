/* loop_uring.c - driving hwtimer from an io_uring loop (liburing).

   The keep-alive server of keepalive.h (close connections quiet for IDLE_LIMIT) on one
   thread with io_uring: readiness comes as IORING_OP_POLL_ADD completions, and the timer
   is one IORING_OP_TIMEOUT request in the ring. The loop only ever sleeps in
   io_uring_submit_and_wait.

   The glue (between the GLUE markers): the timer's default clock is CLOCK_MONOTONIC in ns,
   the clock of an IORING_TIMEOUT_ABS timeout, so hwtimer_next_expiry() is the timeout's
   time as it is. Before each sleep the loop re-arms when the next expiry has changed: it
   removes the timeout in flight (IORING_OP_TIMEOUT_REMOVE) and submits a new one, each
   tagged with a generation number so that the completion of a replaced one is ignored.
   When the current one completes with -ETIME, hwtimer_poll() runs what is due.

   Closing a connection that has a poll request in the ring: close() alone would not end
   the request (the ring holds its own reference to the socket), so conn_close shuts the
   socket down; the poll request then completes, and its completion closes and frees the
   connection.

   Needs a kernel with absolute timeouts and TIMEOUT_REMOVE (5.5) and the probe (5.6);
   where io_uring is missing or disabled, the test says so and is skipped (exit 77). */
#include "../harness.h"
#include "../harness_threads.h"
#include "example_util.h"
#include "keepalive.h"

#include <liburing.h>

/* user_data of the ring's requests: a conn pointer (even), one of these, or a timeout's
   tag: its generation, shifted, with the low bit set (odd, so never a pointer). */
enum { TAG_LISTEN = 2, TAG_QUIT = 4, TAG_REMOVE = 6 };
#define TIMEOUT_TAG(gen) (((gen) << 1) | 1u)

typedef struct conn {
    keepalive_conn kc; /* first: the shared code's part */
    int in_flight;     /* a poll request for it is in the ring */
    int closing;       /* shut down: the completion of that request frees it */
} conn;

typedef struct server {
    keepalive_fds fds; /* first: the hooks get it */
    struct io_uring ring;
    uint64_t armed;    /* the time of the timeout in flight; UINT64_MAX: none */
    uint64_t gen;      /* the generation of the timeout in flight */
    struct __kernel_timespec when;
    unsigned closing;  /* connections shut down, waiting for their completion */
    int quit;
} server;

/* A submission entry; a full submission queue is flushed to the kernel first. */
static struct io_uring_sqe *sqe_get(server *s) {
    struct io_uring_sqe *sqe = io_uring_get_sqe(&s->ring);
    if (!sqe) {
        io_uring_submit(&s->ring);
        sqe = io_uring_get_sqe(&s->ring);
    }
    if (!sqe) {
        fprintf(stderr, "fatal: io_uring submission queue full\n");
        exit(1);
    }
    return sqe;
}

/* GLUE: keep one IORING_TIMEOUT_ABS timeout in the ring at the timer's next expiry. */
static void uring_arm(server *s) {
    uint64_t next = hwtimer_next_expiry(s->fds.timer); /* UINT64_MAX: nothing pending */
    struct io_uring_sqe *sqe;
    if (next == s->armed) return;
    if (s->armed != UINT64_MAX) {
        sqe = sqe_get(s);
        io_uring_prep_timeout_remove(sqe, TIMEOUT_TAG(s->gen), 0);
        io_uring_sqe_set_data64(sqe, TAG_REMOVE);
    }
    s->armed = next;
    if (next == UINT64_MAX) return;
    s->gen++;
    s->when.tv_sec = (long long)(next / HWTIMER_SEC(1));
    s->when.tv_nsec = (long long)(next % HWTIMER_SEC(1));
    sqe = sqe_get(s);
    io_uring_prep_timeout(sqe, &s->when, 0, IORING_TIMEOUT_ABS);
    io_uring_sqe_set_data64(sqe, TIMEOUT_TAG(s->gen));
}

/* GLUE: a timeout completed. Only the current one firing (-ETIME) is a wake-up; a
   replaced one completes with -ECANCELED, or with -ETIME if it fired first. */
static void uring_timeout_done(server *s, uint64_t tag, int res) {
    if (tag != TIMEOUT_TAG(s->gen) || res != -ETIME) return;
    s->armed = UINT64_MAX;
    keepalive_timer_woke(s->fds.ka, hwtimer_poll(s->fds.timer));
}
/* END GLUE (and the loop in serve: uring_arm before each sleep) */

static void poll_fd(server *s, int fd, uint64_t tag) {
    struct io_uring_sqe *sqe = sqe_get(s);
    io_uring_prep_poll_add(sqe, fd, POLLIN);
    io_uring_sqe_set_data64(sqe, tag);
}

static uint64_t conn_tag(conn *c) {
    return (uint64_t)(uintptr_t)c;
}

static void conn_poll(server *s, conn *c) {
    poll_fd(s, c->kc.fd, conn_tag(c));
    c->in_flight = 1;
}

static int conn_watch(keepalive_fds *fds, keepalive_conn *kc) {
    conn_poll((server *)fds, (conn *)kc);
    return 0;
}

static void conn_free(conn *c) {
    close(c->kc.fd);
    free(c);
}

/* With a poll request in the ring, the peer sees the connection closed now (shutdown),
   and the request's completion closes the fd and frees it. */
static void conn_close(keepalive_fds *fds, keepalive_conn *kc) {
    server *s = (server *)fds;
    conn *c = (conn *)kc;
    keepalive_closed(fds->ka);
    if (!c->in_flight) {
        conn_free(c);
        return;
    }
    shutdown(kc->fd, SHUT_RDWR);
    c->closing = 1;
    s->closing++;
}

/* The completion of a connection's poll request. */
static void conn_ready(server *s, conn *c) {
    c->in_flight = 0;
    if (c->closing) {
        s->closing--;
        conn_free(c);
    } else if (keepalive_conn_read(&s->fds, &c->kc)) {
        conn_poll(s, c);
    }
}

/* The listening socket is readable: accept, and poll it again. */
static void accept_more(server *s) {
    keepalive_accept_all(&s->fds);
    poll_fd(s, s->fds.ka->listen_fd, TAG_LISTEN);
}

static void handle(server *s, uint64_t tag, int res) {
    if (tag & 1u) uring_timeout_done(s, tag, res);
    else if (tag == TAG_LISTEN) accept_more(s);
    else if (tag == TAG_QUIT) s->quit = 1;
    else if (tag != TAG_REMOVE) conn_ready(s, (conn *)(uintptr_t)tag);
}

static void handle_completions(server *s) {
    struct io_uring_cqe *cqe;
    while (io_uring_peek_cqe(&s->ring, &cqe) == 0) {
        uint64_t tag = io_uring_cqe_get_data64(cqe);
        int res = cqe->res;
        io_uring_cqe_seen(&s->ring, cqe);
        handle(s, tag, res);
    }
}

/* Whether this kernel's io_uring has what the glue uses; says why not when it has not. */
static int uring_usable(struct io_uring *ring) {
    struct io_uring_probe *probe = io_uring_get_probe_ring(ring);
    int ok = probe && io_uring_opcode_supported(probe, IORING_OP_TIMEOUT_REMOVE) &&
             io_uring_opcode_supported(probe, IORING_OP_POLL_ADD);
    if (probe) io_uring_free_probe(probe);
    if (!ok)
        printf("skipped: this kernel's io_uring lacks the probe, TIMEOUT_REMOVE or POLL_ADD\n");
    return ok;
}

static void serve(void *arg) {
    server *s = (server *)calloc_or_die(1, sizeof *s);
    hwtimer_config cfg;
    s->fds.ka = (keepalive_server *)arg;
    s->fds.conn_size = sizeof(conn);
    s->fds.watch = conn_watch;
    s->fds.close = conn_close;
    keepalive_timer_config(&cfg); /* the default clock: CLOCK_MONOTONIC, as the ring's */
    s->fds.timer = create_or_die(&cfg);
    if (io_uring_queue_init(256, &s->ring, 0) != 0) exit(1); /* checked in main */
    s->armed = UINT64_MAX;
    poll_fd(s, s->fds.ka->listen_fd, TAG_LISTEN);
    poll_fd(s, s->fds.ka->quit_fd, TAG_QUIT);
    while (!s->quit) {
        uring_arm(s); /* GLUE: the only call before the sleep */
        io_uring_submit_and_wait(&s->ring, 1);
        handle_completions(s);
    }
    keepalive_close_all(&s->fds);
    while (s->closing) { /* the shut-down connections' polls complete and free them */
        io_uring_submit_and_wait(&s->ring, 1);
        handle_completions(s);
    }
    hwtimer_destroy(s->fds.timer);
    io_uring_queue_exit(&s->ring);
    free(s);
}

static void test_uring_loop(void) {
    keepalive_run("io_uring", serve, KEEPALIVE_REARM_BEFORE_SLEEP);
}

int main(void) {
    struct io_uring ring;
    int rc = io_uring_queue_init(8, &ring, 0);
    if (rc != 0) {
        printf("skipped: io_uring is not available here (%s)\n", strerror(-rc));
        return 77;
    }
    rc = uring_usable(&ring);
    io_uring_queue_exit(&ring);
    if (!rc) return 77;
    RUN_TIMED_TEST(test_uring_loop);
    return test_finish();
}
