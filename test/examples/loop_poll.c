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
#define FIRST_CONN 2 /* pfds[0]: the quit pipe, pfds[1]: the listening socket */

typedef struct conn {
    keepalive_conn kc; /* first: the shared code's part */
    nfds_t slot;       /* its index in the server's pfds[] */
} conn;

typedef struct server {
    keepalive_fds fds; /* first: the hooks get it */
    struct pollfd pfds[FIRST_CONN + MAX_CONNS];
    conn *conns[FIRST_CONN + MAX_CONNS]; /* conns[i] owns pfds[i] */
    nfds_t count;
} server;

static int conn_watch(keepalive_fds *fds, keepalive_conn *kc) {
    server *s = (server *)fds;
    conn *c = (conn *)kc;
    if (s->count == FIRST_CONN + MAX_CONNS) return -1;
    c->slot = s->count++;
    s->pfds[c->slot].fd = kc->fd;
    s->pfds[c->slot].events = POLLIN;
    s->conns[c->slot] = c;
    return 0;
}

/* Closing marks the slot free (fd -1, which poll skips); compact() reuses it later. */
static void conn_close(keepalive_fds *fds, keepalive_conn *kc) {
    server *s = (server *)fds;
    conn *c = (conn *)kc;
    s->pfds[c->slot].fd = -1;
    s->conns[c->slot] = NULL;
    close(kc->fd);
    keepalive_closed(fds->ka);
    free(c);
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
        s->pfds[i] = s->pfds[s->count];
        s->conns[i] = s->conns[s->count];
        if (s->conns[i]) s->conns[i]->slot = i;
    }
}

static void handle_events(server *s) {
    nfds_t i, count = s->count; /* connections accepted now wait for the next poll */
    if (s->pfds[1].revents) keepalive_accept_all(&s->fds);
    for (i = FIRST_CONN; i < count; i++)
        if (s->conns[i] && s->pfds[i].revents) keepalive_conn_read(&s->fds, &s->conns[i]->kc);
    compact(s);
}

static void serve(void *arg) {
    server s;
    hwtimer_config cfg;
    memset(&s, 0, sizeof s);
    s.fds.ka = (keepalive_server *)arg;
    s.fds.conn_size = sizeof(conn);
    s.fds.watch = conn_watch;
    s.fds.close = conn_close;
    keepalive_timer_config(&cfg);
    s.fds.timer = create_or_die(&cfg);
    s.pfds[0].fd = s.fds.ka->quit_fd;
    s.pfds[1].fd = s.fds.ka->listen_fd;
    s.pfds[0].events = s.pfds[1].events = POLLIN;
    s.count = FIRST_CONN;
    while (!s.pfds[0].revents) {
        /* GLUE: sleep until the timer's next expiry or an event, then run what is due */
        int n = poll(s.pfds, s.count, hwtimer_poll_timeout_ms(s.fds.timer));
        if (n == 0) {
            keepalive_timer_woke(s.fds.ka, hwtimer_poll(s.fds.timer));
        } else if (n > 0) {
            handle_events(&s);
            hwtimer_poll(s.fds.timer);
        }
        /* END GLUE (n < 0 is EINTR: poll again) */
    }
    keepalive_close_all(&s.fds);
    hwtimer_destroy(s.fds.timer);
}

static void test_poll_loop(void) {
    keepalive_run("poll", serve, KEEPALIVE_REARM_BEFORE_SLEEP);
}

int main(void) {
    RUN_TIMED_TEST(test_poll_loop);
    return test_finish();
}
