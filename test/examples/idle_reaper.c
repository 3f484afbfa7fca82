/* idle_reaper.c - close idle TCP connections from an epoll loop that drives the timer.

   The problem (keepalive.h): a server holds many keep-alive connections and must close the
   ones that have been quiet for IDLE_LIMIT (Netty's IdleStateHandler, nginx's
   keepalive_timeout, the long-connection management of a comet push server). One timeout
   per connection, pushed back on every read, is the textbook use of a timer wheel: it is
   pushed back far more often than it fires, so the push-back must be cheap.

   How the timer is used:
   - Caller-driven, one thread, no locks (cfg.threads = NULL): the server's epoll loop owns
     the timer. epoll_wait sleeps for hwtimer_poll_timeout_ms() and hwtimer_poll() runs
     whatever is due after each wake-up. With no connection nothing is pending, the timeout
     is -1 and the loop sleeps until the next event.
   - Each connection embeds its hwtimer_timeout (keepalive_conn). A read calls
     hwtimer_reschedule(), which only moves the node: the timer allocates nothing per
     connection or read. The callback closes and frees the connection (a one-shot callback
     may free its own node).
   - At shutdown hwtimer_stop hands back the pending timeouts: the connections still open.

   The test: keepalive.h's, with 300 connections, a 10 ms tick and a 300 ms idle limit.
   Also checked: the loop sleeps with -1 exactly when there is no connection, and the
   timer allocates once, in hwtimer_create. */
#define CLIENTS 300
#define TICK HWTIMER_MS(10)
#define TICKS_PER_WHEEL 1024u /* a rotation of the finest wheel: 10.24 s */
#define IDLE_LIMIT HWTIMER_MS(300)

#include "harness.h"
#include "harness_threads.h"
#include "example_util.h"
#include "keepalive.h"

typedef struct server {
    keepalive_epoll ep;
    int quit;
    unsigned allocations;   /* by the timer's allocator */
    unsigned waits_forever; /* epoll_wait with -1 */
    unsigned bad_waits;     /* -1 with a connection open, or a timeout with none */
} server;

/* epoll's data.ptr: a connection, or one of these two markers. */
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

/* Records whether the loop's sleep agrees with its connections: -1 exactly when none. */
static void note_wait(server *s, int timeout_ms) {
    int forever = timeout_ms == -1;
    s->waits_forever += (unsigned)forever;
    if (forever != (ATOMIC_GET(&s->ep.fds.ka->live) == 0)) s->bad_waits++;
}

static void loop(server *s) {
    hwtimer *timer = s->ep.fds.timer;
    struct epoll_event events[64];
    while (!s->quit) {
        int timeout_ms = hwtimer_poll_timeout_ms(timer), n, i;
        note_wait(s, timeout_ms);
        n = epoll_wait(s->ep.epfd, events, 64, timeout_ms);
        for (i = 0; i < n; i++) {
            void *p = events[i].data.ptr;
            if (p == &listener_marker) keepalive_accept_all(&s->ep.fds);
            else if (p == &quit_marker) s->quit = 1;
            else keepalive_conn_read(&s->ep.fds, (keepalive_conn *)p);
        }
        /* after the events: a callback may free a connection that has an event above */
        if (n == 0) keepalive_timer_woke(s->ep.fds.ka, hwtimer_poll(timer));
        else if (n > 0) hwtimer_poll(timer);
    }
}

static void serve(void *arg) {
    server s;
    hwtimer_config cfg;
    keepalive_server *ka = (keepalive_server *)arg;
    memset(&s, 0, sizeof s);
    keepalive_timer_config(&cfg); /* threads NULL: only the loop's thread uses the timer */
    cfg.alloc_fn = counting_alloc;
    cfg.free_fn = plain_free;
    cfg.alloc_ctx = &s;
    keepalive_epoll_init(&s.ep, ka, create_or_die(&cfg));
    keepalive_epoll_add(&s.ep, ka->listen_fd, &listener_marker);
    keepalive_epoll_add(&s.ep, ka->quit_fd, &quit_marker);
    loop(&s);
    keepalive_close_all(&s.ep.fds);
    hwtimer_destroy(s.ep.fds.timer);
    close(s.ep.epfd);
    /* it slept with -1 before the first connection and after the last */
    CHECK(s.waits_forever >= 2);
    CHECK_EQ(s.bad_waits, 0);
    CHECK_EQ(s.allocations, 1); /* hwtimer_create's block, nothing per connection or read */
}

static void test_idle_connections_are_reaped(void) {
    keepalive_run("idle_reaper (epoll_wait)", serve, KEEPALIVE_REARM_BEFORE_SLEEP);
}

int main(void) {
    RUN_TIMED_TEST(test_idle_connections_are_reaped);
    return test_finish();
}
