/* loop_poll.c - driving hwtimer from a plain poll() loop.

   The keep-alive server of keepalive.h (close connections quiet for IDLE_LIMIT) on one
   thread with poll(): the most portable loop there is, and the simplest glue. The timer
   is caller-driven with no locks (cfg.threads NULL): only the loop's thread touches it.

   The glue (between the GLUE markers): poll() sleeps for hwtimer_poll_timeout_ms(), which
   is -1 when nothing is pending (sleep until an event), and hwtimer_poll() runs what is
   due after every wake-up. A schedule made by the loop's own code needs nothing more: the
   timeout for the next poll() is computed after it. */
#include "../harness.h"
#include "../harness_threads.h"
#include "example_util.h"
#include "keepalive.h"

#define MAX_CONNS (CLIENTS + 16)
#define FIRST_CONN 2 /* fds[0]: the quit pipe, fds[1]: the listening socket */

typedef struct conn {
    int fd;
    nfds_t slot; /* its index in the server's fds[] */
    hwtimer_timeout idle;
} conn;

typedef struct server {
    keepalive_server *ka;
    hwtimer *timer;
    struct pollfd fds[FIRST_CONN + MAX_CONNS];
    conn *conns[FIRST_CONN + MAX_CONNS]; /* conns[i] owns fds[i] */
    nfds_t count;
} server;

/* Closing marks the slot free (fd -1, which poll skips); compact() reuses it later. */
static void conn_close(server *s, conn *c) {
    s->fds[c->slot].fd = -1;
    s->conns[c->slot] = NULL;
    close(c->fd);
    keepalive_closed(s->ka);
    free(c);
}

static void on_idle(hwtimer_timeout *to, void *arg) {
    server *s = (server *)arg;
    keepalive_idle_fired(s->ka, to);
    conn_close(s, HWTIMER_CONTAINER_OF(to, conn, idle));
}

static void conn_open(server *s, int fd) {
    conn *c = s->count < FIRST_CONN + MAX_CONNS ? (conn *)calloc(1, sizeof *c) : NULL;
    if (!c) {
        close(fd);
        return;
    }
    c->fd = fd;
    c->slot = s->count++;
    s->fds[c->slot].fd = fd;
    s->fds[c->slot].events = POLLIN;
    s->conns[c->slot] = c;
    keepalive_opened(s->ka);
    hwtimer_schedule(s->timer, &c->idle, IDLE_LIMIT, on_idle, s);
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

/* Moves the last connections into the slots closed ones left. */
static void compact(server *s) {
    nfds_t i = FIRST_CONN;
    while (i < s->count) {
        if (s->conns[i]) {
            i++;
            continue;
        }
        s->count--;
        s->fds[i] = s->fds[s->count];
        s->conns[i] = s->conns[s->count];
        if (s->conns[i]) s->conns[i]->slot = i;
    }
}

static void handle_events(server *s) {
    nfds_t i, count = s->count; /* connections accepted now wait for the next poll */
    int fd;
    if (s->fds[1].revents)
        while ((fd = keepalive_accept(s->ka->listen_fd)) >= 0) conn_open(s, fd);
    for (i = FIRST_CONN; i < count; i++)
        if (s->conns[i] && s->fds[i].revents) conn_read(s, s->conns[i]);
    compact(s);
}

/* hwtimer_stop hands back each pending timeout: each is a connection still open. */
static void close_unprocessed(hwtimer_timeout *to, void *arg) {
    conn_close((server *)arg, HWTIMER_CONTAINER_OF(to, conn, idle));
}

static void serve(void *arg) {
    server s;
    hwtimer_config cfg;
    memset(&s, 0, sizeof s);
    s.ka = (keepalive_server *)arg;
    keepalive_timer_config(&cfg);
    s.timer = create_or_die(&cfg);
    s.fds[0].fd = s.ka->quit_fd;
    s.fds[1].fd = s.ka->listen_fd;
    s.fds[0].events = s.fds[1].events = POLLIN;
    s.count = FIRST_CONN;
    while (!s.fds[0].revents) {
        /* GLUE: sleep until the timer's next expiry or an event, then run what is due */
        int n = poll(s.fds, s.count, hwtimer_poll_timeout_ms(s.timer));
        if (n == 0) {
            keepalive_timer_woke(s.ka, hwtimer_poll(s.timer));
        } else if (n > 0) {
            handle_events(&s);
            hwtimer_poll(s.timer);
        }
        /* END GLUE (n < 0 is EINTR: poll again) */
    }
    hwtimer_stop(s.timer, close_unprocessed, &s);
    hwtimer_destroy(s.timer);
}

static void test_poll_loop(void) {
    keepalive_run("poll", serve, 0, KEEPALIVE_REARM_BEFORE_SLEEP);
}

int main(void) {
    RUN_TIMED_TEST(test_poll_loop);
    return test_finish();
}
