/* loop_libuv.c - driving hwtimer from a libuv loop.

   The keep-alive server of keepalive.h (close connections quiet for IDLE_LIMIT) on a libuv
   loop, and timeouts scheduled into that loop from other threads (remote.h).

   The glue (between the GLUE markers), a uv_driver: one uv_timer_t stands for the whole
   wheel, whatever the number of timeouts.
   - Time: the timer's clock is uv_hrtime() (cfg.clock_fn; CLOCK_MONOTONIC in ns on
     Linux, and safe on any thread). uv_now() is the loop's cached time: the same clock in
     whole ms, read once per loop iteration. So uv_now() * 1e6 is a "now" on the timer's
     clock that is never ahead of it and costs no clock read: the loop passes it to
     hwtimer_advance and builds deadlines from it with the absolute forms
     (hwtimer_reschedule_at), as libuv's own timers count from uv_now(). libuv reads
     the time when the poll returns, so the data a read callback gets usually arrived
     before it, and a deadline so built is about 2 ms early at most (1 ms of truncation,
     and the coarse clock libuv reads when its resolution is 1 ms or better); but data
     that came while the iteration ran long is newer, and an idle timeout counted from
     uv_now then closes up to that much early, as a libuv timer would. (The test measures
     that age at every read: keepalive_time_lag.) An accept is worse: libuv accepts until
     the backlog is empty, and a connection made while that loop ran (a burst, or a loop
     thread that lost its CPU) is newer than uv_now by any amount, so the new
     connection's timeout is scheduled with hwtimer_schedule, which reads the clock.
   - A uv_prepare_t runs just before the loop sleeps: it sets the uv timer to
     hwtimer_next_expiry() (rounded up to whole ms from uv_now()) when that has changed,
     or stops it when nothing is pending. So a schedule or reschedule made by the loop's
     own callbacks needs nothing more.
   - cfg.wake_fn calls uv_async_send: a schedule from another thread (cfg.threads set)
     that needs the loop earlier than it sleeps wakes it, and the prepare handle re-arms.
     (hwtimer calls it for the loop's own schedules too: then it costs one extra,
     harmless loop iteration.)
   - When the uv timer fires, hwtimer_advance(timer, uv_now() * 1e6) runs what is due. */
#include "../harness.h"
#include "../harness_threads.h"
#include "example_util.h"
#include "keepalive.h"
#include "remote.h"

#include <uv.h>

/* ---- GLUE: one hwtimer on one uv loop ---------------------------------------------- */

typedef struct uv_driver {
    hwtimer *timer;
    uv_timer_t tick;
    uv_prepare_t before_sleep;
    uv_async_t wake;
    uint64_t armed; /* the next expiry the uv timer is set for; UINT64_MAX: stopped */
    unsigned wakes; /* atomic: wake_fn calls */
    keepalive_server *report; /* NULL: the remote test, which counts no wake-ups */
} uv_driver;

static uint64_t uv_clock(void *ctx) { /* cfg.clock_fn: any thread */
    (void)ctx;
    return uv_hrtime();
}

/* The loop's cached time on the timer's clock (see the top). */
static uint64_t loop_now(const uv_loop_t *loop) {
    return uv_now(loop) * HWTIMER_MS(1);
}

static void on_tick(uv_timer_t *handle) {
    uv_driver *d = HWTIMER_CONTAINER_OF(handle, uv_driver, tick);
    size_t fired;
    d->armed = UINT64_MAX;
    fired = hwtimer_advance(d->timer, loop_now(handle->loop));
    if (d->report) keepalive_timer_woke(d->report, fired);
}

/* Every iteration, before the loop sleeps: the uv timer at the wheel's next expiry. */
static void before_sleep(uv_prepare_t *handle) {
    uv_driver *d = HWTIMER_CONTAINER_OF(handle, uv_driver, before_sleep);
    uint64_t next = hwtimer_next_expiry(d->timer), now = loop_now(handle->loop);
    if (next == d->armed) return;
    d->armed = next;
    if (next == UINT64_MAX) uv_timer_stop(&d->tick);
    else uv_timer_start(&d->tick, on_tick,
                        next > now ? (next - now + HWTIMER_MS(1) - 1) / HWTIMER_MS(1) : 0, 0);
}

static void on_wake(uv_async_t *handle) {
    (void)handle; /* nothing to do: before_sleep runs before the loop sleeps again */
}

static void wake_loop(void *ctx) { /* cfg.wake_fn: any thread, no lock held */
    uv_driver *d = (uv_driver *)ctx;
    ATOMIC_ADD(&d->wakes, 1u);
    uv_async_send(&d->wake);
}

static void uv_driver_init(uv_driver *d, uv_loop_t *loop, keepalive_server *report) {
    hwtimer_config cfg;
    keepalive_timer_config(&cfg); /* a 1 ms tick */
    cfg.clock_fn = uv_clock;
    cfg.threads = hwtimer_threads_pthread(); /* other threads may schedule */
    cfg.wake_fn = wake_loop;
    cfg.wake_ctx = d;
    d->timer = create_or_die(&cfg);
    d->armed = UINT64_MAX;
    d->report = report;
    uv_timer_init(loop, &d->tick);
    uv_prepare_init(loop, &d->before_sleep);
    uv_prepare_start(&d->before_sleep, before_sleep);
    uv_async_init(loop, &d->wake, on_wake);
}

/* Closes the handles; hwtimer_destroy once uv_run has returned. */
static void uv_driver_close(uv_driver *d) {
    uv_close((uv_handle_t *)&d->tick, NULL);
    uv_close((uv_handle_t *)&d->before_sleep, NULL);
    uv_close((uv_handle_t *)&d->wake, NULL);
}
/* END GLUE */

/* ---- the server ----------------------------------------------------------------------- */

typedef struct app {
    uv_loop_t loop;
    uv_driver driver;
    uv_poll_t quit;
    uv_tcp_t listener;
    int listening;
} app;

typedef struct conn {
    uv_tcp_t tcp;
    app *a;
    hwtimer_timeout idle;
    char buf[256];
} conn;

static void conn_free(uv_handle_t *handle) {
    free(HWTIMER_CONTAINER_OF(handle, conn, tcp));
}

static void conn_close(conn *c) {
    keepalive_closed(c->a->driver.report);
    uv_close((uv_handle_t *)&c->tcp, conn_free); /* the socket is closed now */
}

static void on_idle(hwtimer_timeout *to, void *arg) {
    conn *c = (conn *)arg;
    keepalive_idle_fired(c->a->driver.report, to);
    conn_close(c);
}

static void conn_alloc(uv_handle_t *handle, size_t suggested, uv_buf_t *buf) {
    conn *c = HWTIMER_CONTAINER_OF(handle, conn, tcp);
    (void)suggested;
    *buf = uv_buf_init(c->buf, sizeof c->buf);
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf) {
    conn *c = HWTIMER_CONTAINER_OF(stream, conn, tcp);
    hwtimer *timer = c->a->driver.timer;
    (void)buf;
    if (nread > 0) {
        keepalive_time_lag(c->a->driver.report, uv_hrtime() - loop_now(stream->loop)); /* test */
        hwtimer_reschedule_at(timer, &c->idle, loop_now(stream->loop) + IDLE_LIMIT);
    } else if (nread < 0) { /* UV_EOF, or an error */
        hwtimer_cancel(timer, &c->idle);
        conn_close(c);
    }
}

static void on_connection(uv_stream_t *listener, int status) {
    app *a = HWTIMER_CONTAINER_OF(listener, app, listener);
    conn *c = status == 0 ? (conn *)calloc(1, sizeof *c) : NULL;
    if (!c) return;
    c->a = a;
    uv_tcp_init(&a->loop, &c->tcp);
    if (uv_accept(listener, (uv_stream_t *)&c->tcp) != 0) {
        uv_close((uv_handle_t *)&c->tcp, conn_free);
        return;
    }
    keepalive_opened(a->driver.report);
    uv_read_start((uv_stream_t *)&c->tcp, conn_alloc, on_read);
    /* Not loop_now: it is the time the loop read before this accept loop began, and a
       burst of connections (or a thread that lost its CPU) can make it older than the
       connection by any amount. hwtimer_schedule reads the timer's clock. */
    hwtimer_schedule(a->driver.timer, &c->idle, IDLE_LIMIT, on_idle, c);
}

/* hwtimer_stop hands back each pending timeout: each is a connection still open. */
static void close_unprocessed(hwtimer_timeout *to, void *arg) {
    (void)arg;
    conn_close(HWTIMER_CONTAINER_OF(to, conn, idle));
}

/* The quit pipe is readable: close every handle, and uv_run returns. */
static void on_quit(uv_poll_t *handle, int status, int events) {
    app *a = HWTIMER_CONTAINER_OF(handle, app, quit);
    (void)status;
    (void)events;
    hwtimer_stop(a->driver.timer, close_unprocessed, NULL);
    if (a->listening) uv_close((uv_handle_t *)&a->listener, NULL);
    uv_close((uv_handle_t *)&a->quit, NULL);
    uv_driver_close(&a->driver);
}

/* A loop with the driver; a server too when listen_fd >= 0. */
static void app_init(app *a, int quit_fd, int listen_fd, keepalive_server *report) {
    memset(a, 0, sizeof *a);
    uv_loop_init(&a->loop);
    uv_driver_init(&a->driver, &a->loop, report);
    uv_poll_init(&a->loop, &a->quit, quit_fd);
    uv_poll_start(&a->quit, UV_READABLE, on_quit);
    if (listen_fd >= 0) {
        uv_tcp_init(&a->loop, &a->listener);
        uv_tcp_open(&a->listener, listen_fd);
        uv_listen((uv_stream_t *)&a->listener, SOMAXCONN, on_connection);
        a->listening = 1;
    }
}

static void app_run(void *arg) {
    app *a = (app *)arg;
    uv_run(&a->loop, UV_RUN_DEFAULT);
    hwtimer_destroy(a->driver.timer);
    CHECK_EQ(uv_loop_close(&a->loop), 0);
}

static void serve(void *arg) {
    keepalive_server *ka = (keepalive_server *)arg;
    app *a = (app *)calloc_or_die(1, sizeof *a);
    app_init(a, ka->quit_fd, ka->listen_fd, ka);
    app_run(a);
    free(a);
}

static void test_libuv_keepalive(void) {
    keepalive_run("libuv", serve, KEEPALIVE_REARM_BEFORE_SLEEP);
}

/* Timeouts scheduled by other threads into the sleeping loop (remote.h). */
static void run_remote(int with_sentinel) {
    app *a = (app *)calloc_or_die(1, sizeof *a);
    int quit_pipe[2];
    test_thread loop;
    if (pipe(quit_pipe) != 0) {
        perror("pipe");
        exit(1);
    }
    app_init(a, quit_pipe[0], -1, NULL);
    test_thread_start(&loop, app_run, a);
    remote_run("libuv", a->driver.timer, with_sentinel, &a->driver.wakes);
    CHECK_EQ(write(quit_pipe[1], "q", 1), 1);
    test_thread_join(&loop);
    close(quit_pipe[0]);
    close(quit_pipe[1]);
    free(a);
}

static void test_libuv_wake_from_threads(void) {
    run_remote(0);
}

static void test_libuv_wake_before_far_wakeup(void) {
    run_remote(1);
}

int main(void) {
    RUN_TIMED_TEST(test_libuv_keepalive);
    RUN_TIMED_TEST(test_libuv_wake_from_threads);
    RUN_TIMED_TEST(test_libuv_wake_before_far_wakeup);
    return test_finish();
}
