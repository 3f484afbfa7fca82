/* loop_libevent.c - driving hwtimer from libevent's event_base_dispatch.

   The keep-alive server of keepalive.h (close connections quiet for IDLE_LIMIT) on one
   thread with libevent. The loop is libevent's own (event_base_dispatch), so there is no
   "before the sleep" where the glue could look at the timer: instead one libevent timer
   event stands for the whole wheel, and the wheel says when it must be moved.

   The glue (between the GLUE markers):
   - one timer event (evtimer) is kept at hwtimer_next_expiry(); when it fires,
     hwtimer_poll() runs what is due and the event is set again (or deleted: nothing
     pending);
   - cfg.wake_fn: hwtimer calls it when a schedule has a boundary earlier than the time the
     event was last set to, or when nothing was pending; it has libevent set the event
     again right after the current callback. That is all a new connection needs: no call
     after each schedule. A pushed-back deadline never calls it, so the event may fire
     before anything is due: the loop then runs nothing and sets the event again (an
     empty wake-up, counted by the test);
   - the loop asks once (tick_arm) before event_base_dispatch: wake_fn tells of changes
     to an answer, so there must have been one;
   - EVENT_BASE_FLAG_PRECISE_TIMER: libevent's default clock on Linux is the coarse one
     (CLOCK_MONOTONIC_COARSE, a jiffy of resolution) and its epoll sleeps are whole ms;
     with the flag it reads CLOCK_MONOTONIC, the timer's clock, and sleeps with a timerfd.
   The timer has no locks (cfg.threads NULL): every call comes from the loop's thread, so
   wake_fn also runs there (for schedules from other threads, see loop_libuv.c and
   loop_wake.c). */
#include "../harness.h"
#include "../harness_threads.h"
#include "example_util.h"
#include "keepalive.h"

#include <event2/event.h>

typedef struct conn {
    keepalive_conn kc; /* first: the shared code's part */
    keepalive_fds *fds;
    struct event *readable;
} conn;

typedef struct server {
    keepalive_fds fds; /* first: the hooks get it */
    struct event_base *base;
    struct event *tick, *rearm;
} server;

/* GLUE: set the timer event to the wheel's next expiry, or delete it (nothing pending). */
static void tick_arm(server *s) {
    uint64_t next = hwtimer_next_expiry(s->fds.timer), now, wait;
    struct timeval tv;
    if (next == UINT64_MAX) {
        evtimer_del(s->tick);
        return;
    }
    now = hwtimer_now(s->fds.timer);
    wait = next > now ? next - now + HWTIMER_US(1) - 1 : 0; /* whole us, rounded up */
    tv.tv_sec = (time_t)(wait / HWTIMER_SEC(1));
    tv.tv_usec = (suseconds_t)(wait % HWTIMER_SEC(1) / HWTIMER_US(1));
    evtimer_add(s->tick, &tv); /* replaces the time it was set to */
}

static void on_tick(evutil_socket_t fd, short what, void *arg) {
    server *s = (server *)arg;
    (void)fd;
    (void)what;
    keepalive_timer_woke(s->fds.ka, hwtimer_poll(s->fds.timer));
    tick_arm(s);
}

static void on_rearm(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    tick_arm((server *)arg);
}

/* cfg.wake_fn: a schedule needs the event earlier than it is set (or set at all). It runs
   inside that hwtimer_schedule call, so it only asks libevent to run on_rearm next. */
static void on_wake(void *ctx) {
    event_active(((server *)ctx)->rearm, 0, 0);
}
/* END GLUE (and in serve: the precise-timer base, the event, cfg.wake_fn) */

static void on_readable(evutil_socket_t fd, short what, void *arg) {
    conn *c = (conn *)arg;
    (void)fd;
    (void)what;
    keepalive_conn_read(c->fds, &c->kc);
}

static int conn_watch(keepalive_fds *fds, keepalive_conn *kc) {
    conn *c = (conn *)kc;
    c->fds = fds;
    c->readable =
        event_new(((server *)fds)->base, kc->fd, EV_READ | EV_PERSIST, on_readable, c);
    return c->readable ? event_add(c->readable, NULL) : -1;
}

static void conn_close(keepalive_fds *fds, keepalive_conn *kc) {
    conn *c = (conn *)kc;
    event_free(c->readable);
    close(kc->fd);
    keepalive_closed(fds->ka);
    free(c);
}

static void on_accept(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    keepalive_accept_all((keepalive_fds *)arg); /* each schedule may call on_wake */
}

static void on_quit(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    event_base_loopbreak((struct event_base *)arg);
}

static struct event_base *precise_base(void) {
    struct event_config *ec = event_config_new();
    struct event_base *base;
    event_config_set_flag(ec, EVENT_BASE_FLAG_PRECISE_TIMER);
    base = event_base_new_with_config(ec);
    event_config_free(ec);
    if (!base) {
        fprintf(stderr, "fatal: event_base_new_with_config\n");
        exit(1);
    }
    return base;
}

static void serve(void *arg) {
    server s;
    hwtimer_config cfg;
    struct event *accepting, *quitting;
    memset(&s, 0, sizeof s);
    s.fds.ka = (keepalive_server *)arg;
    s.fds.conn_size = sizeof(conn);
    s.fds.watch = conn_watch;
    s.fds.close = conn_close;
    s.base = precise_base();
    s.tick = evtimer_new(s.base, on_tick, &s);
    s.rearm = event_new(s.base, -1, 0, on_rearm, &s);
    keepalive_timer_config(&cfg);
    cfg.wake_fn = on_wake; /* GLUE */
    cfg.wake_ctx = &s;
    s.fds.timer = create_or_die(&cfg);
    accepting = event_new(s.base, s.fds.ka->listen_fd, EV_READ | EV_PERSIST, on_accept, &s);
    quitting = event_new(s.base, s.fds.ka->quit_fd, EV_READ, on_quit, s.base);
    event_add(accepting, NULL);
    event_add(quitting, NULL);
    tick_arm(&s); /* GLUE: wake_fn reports changes to an answer: the loop asks once first */
    event_base_dispatch(s.base);
    keepalive_close_all(&s.fds);
    hwtimer_destroy(s.fds.timer);
    event_free(accepting);
    event_free(quitting);
    event_free(s.tick);
    event_free(s.rearm);
    event_base_free(s.base);
}

static void test_libevent_loop(void) {
    keepalive_run("libevent", serve, KEEPALIVE_LAZY_REARM);
}

int main(void) {
    RUN_TIMED_TEST(test_libevent_loop);
    return test_finish();
}
