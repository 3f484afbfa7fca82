#define HWTIMER_IMPLEMENTATION
#include "hwtimer.h"
#include <poll.h>
#include <stdio.h>

/* A connection with two timeouts; the nodes live in it, so nothing is allocated. */
struct conn { int fd, retries; hwtimer *timer; hwtimer_timeout idle, retry; };

static void on_retry(hwtimer_timeout *to, void *arg) {
    struct conn *c = HWTIMER_CONTAINER_OF(to, struct conn, retry);
    printf("connection %d: retry %d\n", c->fd, ++c->retries);
    hwtimer_schedule(c->timer, to, HWTIMER_MS(20), on_retry, arg); /* again in 20 ms */
}

static void on_idle(hwtimer_timeout *to, void *arg) {
    struct conn *c = HWTIMER_CONTAINER_OF(to, struct conn, idle);
    printf("connection %d: idle for 50 ms, closed\n", c->fd);
    hwtimer_cancel(c->timer, &c->retry); /* its other timeout will never run */
    (void)arg;
}

int main(void) {
    struct conn c = {3, 0, NULL, HWTIMER_TIMEOUT_INIT, HWTIMER_TIMEOUT_INIT};
    hwtimer_config cfg;
    hwtimer_config_default(&cfg);
    cfg.tick_ns = HWTIMER_MS(1); /* the default tick is 100 ms */
    if (hwtimer_create(&c.timer, &cfg) != HWTIMER_OK) return 1;
    hwtimer_schedule(c.timer, &c.idle, HWTIMER_MS(50), on_idle, NULL);
    hwtimer_schedule(c.timer, &c.retry, HWTIMER_MS(20), on_retry, NULL);
    while (hwtimer_pending(c.timer) > 0) {                 /* your event loop */
        poll(NULL, 0, hwtimer_poll_timeout_ms(c.timer));  /* add your fds here */
        hwtimer_poll(c.timer);                            /* runs what is due */
    }
    hwtimer_destroy(c.timer);
    return 0;
}
