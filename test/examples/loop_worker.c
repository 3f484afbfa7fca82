/* loop_worker.c - timeouts on hwtimer's worker thread, an epoll loop on yours, and the
   rules for the lock you share between them.

   A keep-alive server with three timeouts per connection: `idle` closes a connection quiet
   for IDLE_LIMIT and is pushed back on every read, and `age` closes one open for
   AGE_LIMIT, however busy (gRPC's MAX_CONNECTION_IDLE and MAX_CONNECTION_AGE); `deadline`
   gives up on a request that the client did not complete within REQUEST_LIMIT, without
   closing the connection (an RPC deadline): every byte a client sends starts a request,
   and its next byte completes it, which cancels the deadline. The timer has a worker
   (cfg.worker = 1): a thread of its own runs the callbacks, which close connections and
   time requests out, while the loop's thread accepts and reads them and cancels the
   deadlines of the requests it completes. Two threads touch a connection, so one lock of
   yours (conns_lock) guards the table of connections and every struct conn in it.

   Build:  cc -I<dir of hwtimer.h> loop_worker.c -pthread

   The rules, each marked "rule N" where the code follows it:
   1. A callback decides under your lock whether its run is still wanted. A one-shot's
      callback is claimed (its node is no longer pending) just before it runs; between that
      moment and the callback taking your lock, another thread may arm the node again (here
      a read's hwtimer_reschedule of `idle`) or cancel it (rule 2). So the callback takes
      your lock, then asks hwtimer_is_pending(t, its node), 1 meaning it was armed again
      after the claim, and a flag of yours that the canceller cleared (here `awaiting`). A
      periodic timeout stays pending while its callback runs, so hwtimer_is_pending is 1
      there whatever happened: a periodic callback relies on your flag alone.
   2. Under your lock, cancel with hwtimer_try_cancel, never hwtimer_cancel. hwtimer_cancel
      waits while the node's callback runs on the worker, and that callback waits for your
      lock: a deadlock (log_fn, if set, says so after a second). hwtimer_try_cancel never
      waits: 1 or 0 as hwtimer_cancel, or HWTIMER_ERUNNING when the callback runs now and
      is about to take your lock; clear your flag under the lock, and the callback then
      does nothing (rule 1).
   3. hwtimer_schedule and hwtimer_reschedule never wait for a callback: they take only the
      timer's own lock, which no callback holds. Call them holding your lock, also the one
      the callbacks take.
   4. Tear a struct down with hwtimer_retire on each of its nodes, after unlocking: it
      waits for a node's callback running on another thread (which may wait for your lock),
      and once it returns no thread can arm the node again (each gets HWTIMER_ERETIRED),
      so a thread that still holds the struct cannot bring a timeout back to life in memory
      you are about to free. On the worker, in a callback, it never waits (one callback
      runs at a time). Free the struct once no other thread can reach it.
   5. How the loop learns that the worker closed a connection: from the table, under your
      lock. epoll carries a slot and its generation, never a pointer the worker may free, so
      an event for a connection the worker closed finds the slot empty or reused and is
      ignored. The worker also writes an eventfd for a loop that must act at once (here: to
      end the demo when the last connection is gone).

   The glue is between the "glue" markers and on the lines tagged "glue". The demo (the second half
   of the file) serves clients on 127.0.0.1, checks what it saw, prints a summary and exits
   0, or says what failed and exits 1. */
#define HWTIMER_IMPLEMENTATION
#include "hwtimer.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define IDLE_LIMIT HWTIMER_MS(200)   /* close a connection quiet for this long */
#define AGE_LIMIT HWTIMER_MS(600)    /* close a connection open for this long, busy or not */
#define REQUEST_LIMIT HWTIMER_MS(80) /* give up on a request not completed in this time */
#define CLIENTS 20
#define MAX_CONNS 64

static void die(const char *what) {
    perror(what);
    exit(1);
}

/* What the server did, for the checks at the end (conns_lock held). */
static struct {
    unsigned accepted, open, freed;
    unsigned closed_idle, closed_age, closed_by_peer;
    unsigned rearmed_after_claim; /* rule 1: an idle callback found its node armed again */
    unsigned requests, completed, timed_out; /* requests begun, completed, given up on */
    unsigned try_cancel_running;  /* rule 2: try_cancel found the deadline's callback running */
    unsigned deadline_unwanted;   /* rule 1: deadline callbacks that found themselves unwanted */
    unsigned closed_early;        /* an idle close less than IDLE_LIMIT after a read */
    unsigned stale_events;        /* rule 5: an event for a connection already closed */
    int provoked;                 /* the demo provoked rule 1's race (provoke_rule_1) */
    int provoked_2;               /* ... and rule 2's (provoke_rule_2): */
    int provoked_2_unwanted;      /* its callback found itself unwanted, */
    int provoked_2_ran;           /* or gave the completed request up (never) */
} seen;

/* ---- glue: the connections, which the loop's thread and the worker share ------------- */

struct conn {
    int fd;
    int closed;         /* taken out of the table: by the worker, or by the loop */
    uint32_t slot;      /* its place in the table */
    uint64_t last_read; /* the timer's clock before the last reschedule (the demo's check) */
    int awaiting;       /* a request is in flight: its deadline is wanted (rules 1, 2) */
    int provoked;       /* the demo's: provoke_rule_2 completed its request */
    hwtimer_timeout idle, age, deadline;
};

struct server {
    hwtimer *timer;
    int epfd, listen_fd;
    int closed_fd;                 /* an eventfd: the worker closed a connection (rule 5) */
    pthread_mutex_t conns_lock;    /* yours: the table and every struct conn in it */
    struct conn *conns[MAX_CONNS]; /* the table: NULL, or the connection in that slot */
    uint32_t gen[MAX_CONNS];       /* each slot's generation, one more at every reuse */
};

/* epoll's data: a connection's slot and generation, or one of these */
#define TAG_LISTEN UINT64_MAX
#define TAG_CLOSED (UINT64_MAX - 1)
#define CONN_TAG(slot, gen) ((uint64_t)(gen) << 32 | (slot))

static void watch(struct server *s, int fd, uint64_t tag) {
    struct epoll_event ev;
    ev.events = EPOLLIN;
    ev.data.u64 = tag;
    if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) die("epoll_ctl");
}

/* Takes c out of the table and closes its socket (conns_lock held). Then only the thread
   that did this can reach c, and it frees c with conn_free. */
static void conn_unlink(struct server *s, struct conn *c) {
    c->closed = 1;
    s->conns[c->slot] = NULL;
    epoll_ctl(s->epfd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    seen.open--;
}

/* Frees a connection that conn_unlink took out of the table: conns_lock NOT held (rule 4),
   since a retire waits for the node's running callback, and that callback may be waiting
   for conns_lock. Once the three retires returned, the timer refers to none of the nodes
   and nothing can arm them again. */
static void conn_free(struct server *s, struct conn *c) {
    hwtimer_retire(s->timer, &c->idle);
    hwtimer_retire(s->timer, &c->age);
    hwtimer_retire(s->timer, &c->deadline);
    free(c);
    pthread_mutex_lock(&s->conns_lock);
    seen.freed++;
    pthread_mutex_unlock(&s->conns_lock);
}

/* A callback's first step: takes conns_lock and returns 1 if c is still open, else unlocks
   and returns 0: the loop closed it, and its conn_free waits for this callback (rule 4). */
static int lock_if_open(struct server *s, struct conn *c) {
    pthread_mutex_lock(&s->conns_lock);
    if (!c->closed) return 1;
    pthread_mutex_unlock(&s->conns_lock);
    return 0;
}

/* A callback's last step (conns_lock held): closes c, frees it, and tells the loop through
   the eventfd (rule 5). conn_free retires the three nodes: the one whose callback this is
   does not wait for itself, and the others' callbacks cannot be running (the worker runs
   one at a time), so no retire waits here (rule 4). */
static void close_on_worker(struct server *s, struct conn *c) {
    uint64_t one = 1;
    conn_unlink(s, c);
    pthread_mutex_unlock(&s->conns_lock);
    conn_free(s, c);
    if (write(s->closed_fd, &one, sizeof one) < 0) {
        /* EAGAIN: the counter is full, so the loop will wake anyway */
    }
}

/* `idle` fired, on the worker thread. */
static void on_idle(hwtimer_timeout *to, void *arg) {
    struct server *s = (struct server *)arg;
    struct conn *c = HWTIMER_CONTAINER_OF(to, struct conn, idle);
    if (!lock_if_open(s, c)) return;
    if (hwtimer_is_pending(s->timer, to)) { /* rule 1: a read armed it again after the claim */
        seen.rearmed_after_claim++;
        pthread_mutex_unlock(&s->conns_lock);
        return;
    }
    if (hwtimer_now(s->timer) < c->last_read + IDLE_LIMIT) seen.closed_early++; /* (never) */
    seen.closed_idle++;
    close_on_worker(s, c);
}

/* `deadline` fired, on the worker thread: the request was not completed in time. The
   connection stays open. Unless the loop completed the request meanwhile: its try_cancel
   then found this callback running (rule 2) and cleared `awaiting` (rule 1). */
static void on_deadline(hwtimer_timeout *to, void *arg) {
    struct server *s = (struct server *)arg;
    struct conn *c = HWTIMER_CONTAINER_OF(to, struct conn, deadline);
    if (!lock_if_open(s, c)) return;
    if (hwtimer_is_pending(s->timer, to) || !c->awaiting) { /* rule 1 */
        seen.deadline_unwanted++;
        seen.provoked_2_unwanted |= c->provoked; /* (the demo) */
        c->provoked = 0;
        pthread_mutex_unlock(&s->conns_lock);
        return;
    }
    seen.provoked_2_ran |= c->provoked; /* (the demo: never) */
    c->awaiting = 0; /* the request is given up on (an RPC would answer "deadline exceeded") */
    seen.timed_out++;
    pthread_mutex_unlock(&s->conns_lock);
}

/* The loop completes c's request (conns_lock held): its deadline is cancelled under the
   lock with hwtimer_try_cancel (rule 2), while the worker may be running that deadline's
   callback, or closing c in another callback (which waits for conns_lock). */
static void complete_request(struct server *s, struct conn *c) {
    int rc;
    if (!c->awaiting) return;
    c->awaiting = 0; /* rule 1: a deadline callback that gets the lock now does nothing */
    seen.completed++;
    rc = hwtimer_try_cancel(s->timer, &c->deadline);
    if (rc == HWTIMER_ERUNNING) seen.try_cancel_running++;
    else if (rc < 0) die("hwtimer_try_cancel");
}

/* The loop begins a request on c (conns_lock held): its deadline (rule 3). */
static void begin_request(struct server *s, struct conn *c) {
    c->awaiting = 1;
    seen.requests++;
    if (hwtimer_schedule(s->timer, &c->deadline, REQUEST_LIMIT, on_deadline, s) != HWTIMER_OK)
        die("hwtimer_schedule");
}

/* `age` fired, on the worker thread. Nothing arms it again, so no claim to check. */
static void on_age(hwtimer_timeout *to, void *arg) {
    struct server *s = (struct server *)arg;
    struct conn *c = HWTIMER_CONTAINER_OF(to, struct conn, age);
    if (!lock_if_open(s, c)) return;
    seen.closed_age++;
    close_on_worker(s, c);
}

static void accept_all(struct server *s) {
    int fd;
    while ((fd = accept(s->listen_fd, NULL, NULL)) >= 0) {
        struct conn *c = (struct conn *)calloc(1, sizeof *c);
        uint32_t slot = 0;
        if (!c || fcntl(fd, F_SETFL, O_NONBLOCK) != 0) {
            free(c);
            close(fd);
            continue;
        }
        c->fd = fd;
        pthread_mutex_lock(&s->conns_lock);
        while (slot < MAX_CONNS && s->conns[slot]) slot++;
        if (slot == MAX_CONNS) { /* full */
            pthread_mutex_unlock(&s->conns_lock);
            free(c);
            close(fd);
            continue;
        }
        c->slot = slot;
        s->conns[slot] = c;
        watch(s, fd, CONN_TAG(slot, ++s->gen[slot]));
        seen.accepted++;
        seen.open++;
        c->last_read = hwtimer_now(s->timer);
        /* rule 3: they wait for no callback, so conns_lock may be held (the first one also
           starts the worker thread) */
        if (hwtimer_schedule(s->timer, &c->idle, IDLE_LIMIT, on_idle, s) != HWTIMER_OK ||
            hwtimer_schedule(s->timer, &c->age, AGE_LIMIT, on_age, s) != HWTIMER_OK)
            die("hwtimer_schedule");
        pthread_mutex_unlock(&s->conns_lock);
    }
}

static void on_readable(struct server *s, uint64_t tag) {
    uint32_t slot = (uint32_t)tag, gen = (uint32_t)(tag >> 32);
    struct conn *c;
    char buf[256];
    ssize_t n;
    pthread_mutex_lock(&s->conns_lock);
    c = slot < MAX_CONNS && s->gen[slot] == gen ? s->conns[slot] : NULL;
    if (!c) { /* rule 5: the worker closed it (and the slot may hold a newer one) */
        seen.stale_events++;
        pthread_mutex_unlock(&s->conns_lock);
        return;
    }
    n = read(c->fd, buf, sizeof buf);
    if (n > 0) {
        c->last_read = hwtimer_now(s->timer);
        /* rule 3: holding conns_lock. If `idle` was just claimed, this arms it again as a
           schedule, and its callback sees that (rule 1). */
        if (hwtimer_reschedule(s->timer, &c->idle, IDLE_LIMIT) != HWTIMER_OK)
            die("hwtimer_reschedule");
        /* the byte completes the request in flight, if any, else begins one */
        if (c->awaiting) complete_request(s, c);
        else begin_request(s, c);
    } else if (n == 0 || errno != EAGAIN) { /* the peer hung up */
        seen.closed_by_peer++;
        conn_unlink(s, c);
        pthread_mutex_unlock(&s->conns_lock);
        conn_free(s, c); /* rule 4: after unlocking */
        return;
    }
    pthread_mutex_unlock(&s->conns_lock);
}
/* ---- end of glue ---- */

/* The demo provokes rule 1's race once, on the first connection, as a byte read just
   between the claim of `idle` and its callback's lock would: holding conns_lock, it makes
   `idle` due at once and waits until the worker has claimed it (its callback then waits for
   conns_lock), then does what on_readable does with a byte. The callback must find its
   node armed again and leave the connection open: one that closed it would count in
   closed_early (a close right after a read). It runs at the first accept, when every other
   timeout is 200 ms away or more: a callback already waiting for conns_lock would keep the
   worker from claiming `idle` (this wait under the lock is the demo's, never the glue's). */
static void provoke_rule_1(struct server *s) {
    struct timespec pause = {0, 100000}; /* 0.1 ms */
    struct conn *c;
    pthread_mutex_lock(&s->conns_lock);
    c = s->conns[0];
    if (c) {
        if (hwtimer_reschedule(s->timer, &c->idle, 0) != HWTIMER_OK) die("hwtimer_reschedule");
        while (hwtimer_is_pending(s->timer, &c->idle)) nanosleep(&pause, NULL); /* claimed */
        c->last_read = hwtimer_now(s->timer);
        if (hwtimer_reschedule(s->timer, &c->idle, IDLE_LIMIT) != HWTIMER_OK)
            die("hwtimer_reschedule");
        seen.provoked = 1;
    }
    pthread_mutex_unlock(&s->conns_lock);
}

/* The demo provokes rule 2's case once, on the first connection that has a request in
   flight: holding conns_lock, it makes the request's deadline due at once and waits until
   the worker has claimed it (its callback then waits for conns_lock), then completes the
   request as on_readable does. hwtimer_cancel here would wait for ever; try_cancel must
   return HWTIMER_ERUNNING at once, and the callback must find itself unwanted. It runs
   once rule 1's callback is done, early, when no other timeout is due; should the worker
   still be in a callback that waits for conns_lock (a busy machine), the deadline is not
   claimed within 50 ms: then it lets the lock go and tries again at the next read (this
   wait under the lock is the demo's, never the glue's). */
static void provoke_rule_2(struct server *s) {
    struct timespec pause = {0, 100000}; /* 0.1 ms */
    struct conn *c = NULL;
    uint32_t slot;
    int tries = 500;
    pthread_mutex_lock(&s->conns_lock);
    for (slot = 0; slot < MAX_CONNS && !c; slot++)
        if (s->conns[slot] && s->conns[slot]->awaiting) c = s->conns[slot];
    if (c && seen.rearmed_after_claim) {
        if (hwtimer_reschedule(s->timer, &c->deadline, 0) != HWTIMER_OK) die("hwtimer_reschedule");
        while (hwtimer_is_pending(s->timer, &c->deadline) && --tries) nanosleep(&pause, NULL);
        if (tries) { /* claimed: its callback waits for conns_lock */
            unsigned running = seen.try_cancel_running;
            complete_request(s, c);
            c->provoked = seen.try_cancel_running > running;
            seen.provoked_2 = 1;
        }
    }
    pthread_mutex_unlock(&s->conns_lock);
}

static int demo_over(struct server *s) { /* every client came and every connection is gone */
    int over;
    pthread_mutex_lock(&s->conns_lock);
    over = seen.accepted == CLIENTS && seen.freed == CLIENTS;
    pthread_mutex_unlock(&s->conns_lock);
    return over;
}

static size_t serve(int listen_fd) { /* returns how many timeouts were pending at the end */
    static struct server s;
    hwtimer_config cfg;
    struct epoll_event events[64];
    size_t pending;
    hwtimer_config_default(&cfg);
    cfg.tick_ns = HWTIMER_MS(1);             /* the default tick is 100 ms */
    cfg.threads = hwtimer_threads_default(); /* glue: locks, */
    cfg.worker = 1;                          /* glue: and a thread that runs the callbacks */
    if (hwtimer_create(&s.timer, &cfg) != HWTIMER_OK) die("hwtimer_create");
    if (pthread_mutex_init(&s.conns_lock, NULL) != 0) die("pthread_mutex_init"); /* glue */
    s.listen_fd = listen_fd;
    s.epfd = epoll_create1(0);
    s.closed_fd = eventfd(0, EFD_NONBLOCK); /* glue: the worker's word to the loop (rule 5) */
    if (s.epfd < 0 || s.closed_fd < 0) die("epoll_create1, eventfd");
    watch(&s, listen_fd, TAG_LISTEN);
    watch(&s, s.closed_fd, TAG_CLOSED); /* glue */
    while (!demo_over(&s)) {
        int n = epoll_wait(s.epfd, events, 64, -1), i; /* the loop never asks the timer */
        for (i = 0; i < n; i++) {
            uint64_t tag = events[i].data.u64, count;
            if (tag == TAG_LISTEN) {
                accept_all(&s);
                if (!seen.provoked) provoke_rule_1(&s); /* (the demo) */
            } else if (tag == TAG_CLOSED) { /* glue: reset it; demo_over reads the table */
                if (read(s.closed_fd, &count, sizeof count) < 0) continue;
            } else {
                on_readable(&s, tag);
                if (!seen.provoked_2) provoke_rule_2(&s); /* (the demo) */
            }
        }
    }
    pending = hwtimer_pending(s.timer);
    hwtimer_destroy(s.timer); /* joins the worker */
    pthread_mutex_destroy(&s.conns_lock);
    close(s.closed_fd);
    close(s.epfd);
    return pending;
}

/* ---- the demo: clients on 127.0.0.1 (a thread), and the checks --------------------
   CLIENTS clients, by i % 4: TALKER talks every TALK_EVERY to the end (the age limit
   closes it); QUIET sends 0 to 4 bytes, then nothing (the idle limit closes it); HANGS_UP
   talks, then hangs up itself (the loop closes it); EDGE sends a byte every IDLE_LIMIT,
   at the edge of the idle limit (either limit may close it; rule 1's race, a byte that
   comes just as `idle` was claimed, can happen there, and provoke_rule_1 makes it happen
   once for sure). Checked: each connection closed as its kind says, none early and none
   much late, the race seen and survived, every connection freed, no timeout left. */

enum { TALKER, QUIET, HANGS_UP, EDGE };
#define TALK_EVERY HWTIMER_MS(50)
#define ROUNDS 20                  /* 1 s of talking */
#define HANG_UP_ROUND 6            /* HANGS_UP hangs up after 0.3 s */
#define LATE_MEDIAN HWTIMER_MS(25) /* loose bounds: a busy machine may stall any thread */
#define LATE_WORST HWTIMER_MS(150)

struct client {
    int fd;
    uint64_t connected; /* read before connect: never after the server accepted */
    uint64_t last_sent; /* read before each send: never after the server saw it */
    uint64_t closed_at; /* when it saw the server close (0: open) */
    int hung_up;        /* it closed first */
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

static int sends_in_round(int i, int round) {
    switch (i % 4) {
    case TALKER: return 1;
    case QUIET: return round < i / 4 % 5;
    case HANGS_UP: return round < HANG_UP_ROUND;
    default: return round % (int)(IDLE_LIMIT / TALK_EVERY) == 0; /* EDGE */
    }
}

static void *run_clients(void *unused) {
    uint64_t round_end, now;
    int round, i;
    (void)unused;
    for (i = 0; i < CLIENTS; i++) {
        clients[i].connected = clients[i].last_sent = now_ns();
        clients[i].fd = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(clients[i].fd, (struct sockaddr *)&server_addr, sizeof server_addr) != 0)
            die("connect to 127.0.0.1");
    }
    for (round = 0, round_end = now_ns(); round < ROUNDS; round++) {
        for (i = 0; i < CLIENTS; i++) {
            struct client *c = &clients[i];
            if (c->closed_at || c->hung_up) continue;
            if (i % 4 == HANGS_UP && round == HANG_UP_ROUND) {
                close(c->fd);
                c->hung_up = 1;
            } else if (sends_in_round(i, round)) {
                c->last_sent = now_ns();
                send(c->fd, "x", 1, MSG_NOSIGNAL);
            }
        }
        for (round_end += TALK_EVERY; (now = now_ns()) < round_end;) { /* watch for closes */
            struct pollfd p[CLIENTS];
            for (i = 0; i < CLIENTS; i++) {
                p[i].fd = clients[i].closed_at || clients[i].hung_up ? -1 : clients[i].fd;
                p[i].events = POLLIN;
            }
            poll(p, CLIENTS, (int)((round_end - now) / HWTIMER_MS(1)) + 1);
            for (i = 0; i < CLIENTS; i++) /* the server never writes: readable is closed */
                if (p[i].revents) clients[i].closed_at = now_ns();
        }
    }
    for (i = 0; i < CLIENTS; i++)
        if (!clients[i].hung_up) close(clients[i].fd);
    return NULL;
}

static int by_value(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static int check(size_t pending_at_end) {
    uint64_t late[CLIENTS];
    size_t n = 0;
    int i, kind_count = CLIENTS / 4;
    for (i = 0; i < CLIENTS; i++) {
        const struct client *c = &clients[i];
        uint64_t due = i % 4 == TALKER ? c->connected + AGE_LIMIT : c->last_sent + IDLE_LIMIT;
        if (i % 4 == HANGS_UP) {
            if (c->closed_at) FAIL("client %d was closed before it hung up", i);
        } else if (!c->closed_at) {
            FAIL("client %d (kind %d) was not closed", i, i % 4);
        } else if (i % 4 == TALKER || i % 4 == QUIET) {
            if (c->closed_at < due)
                FAIL("client %d was closed %.2f ms early", i, (double)(due - c->closed_at) / 1e6);
            else late[n++] = c->closed_at - due;
        }
    }
    qsort(late, n, sizeof *late, by_value);
    if (n && late[n / 2] > LATE_MEDIAN)
        FAIL("closed late: %.1f ms (median)", (double)late[n / 2] / 1e6);
    if (n && late[n - 1] > LATE_WORST)
        FAIL("closed late: %.1f ms (worst)", (double)late[n - 1] / 1e6);
    if (seen.closed_by_peer != (unsigned)kind_count)
        FAIL("%u connections closed by their peer, not %d", seen.closed_by_peer, kind_count);
    if (seen.closed_idle < (unsigned)kind_count || seen.closed_age < (unsigned)kind_count)
        FAIL("%u closed idle and %u old: want at least %d each", seen.closed_idle,
             seen.closed_age, kind_count);
    if (seen.closed_idle + seen.closed_age + seen.closed_by_peer != CLIENTS)
        FAIL("%u connections closed, not %d", seen.closed_idle + seen.closed_age +
             seen.closed_by_peer, CLIENTS);
    if (seen.freed != seen.accepted || seen.open != 0)
        FAIL("%u accepted, %u freed, %u open", seen.accepted, seen.freed, seen.open);
    if (!seen.provoked || seen.rearmed_after_claim == 0)
        FAIL("no idle callback found its node armed again after its claim (rule 1)");
    if (seen.closed_early) FAIL("%u idle closes came less than IDLE_LIMIT after a read",
                                seen.closed_early);
    if (!seen.provoked_2 || seen.try_cancel_running == 0)
        FAIL("try_cancel never found a deadline's callback running (rule 2)");
    if (seen.provoked_2 && (!seen.provoked_2_unwanted || seen.provoked_2_ran))
        FAIL("the deadline callback that try_cancel found running did not find itself "
             "unwanted (rule 1)");
    if (seen.completed == 0 || seen.timed_out == 0)
        FAIL("%u requests completed and %u timed out: want some of each", seen.completed,
             seen.timed_out);
    if (pending_at_end) FAIL("%zu timeouts still pending at the end", pending_at_end);
    printf("worker: %u connections: %u closed idle, %u old, %u by the peer; late by %.2f ms "
           "(median), %.2f ms (worst); idle callbacks that found their node armed again: %u; "
           "events for closed connections: %u; requests %u: %u completed, %u timed out, %u "
           "completed while the deadline's callback ran\n", seen.accepted, seen.closed_idle,
           seen.closed_age, seen.closed_by_peer, n ? (double)late[n / 2] / 1e6 : 0.0,
           n ? (double)late[n - 1] / 1e6 : 0.0, seen.rearmed_after_claim, seen.stale_events,
           seen.requests, seen.completed, seen.timed_out, seen.try_cancel_running);
    return failures ? 1 : 0;
}

int main(void) {
    pthread_t client_thread;
    size_t pending_at_end;
    int listen_fd = listen_on_loopback();
    alarm(10); /* a watchdog: a demo that hangs (a deadlock) is killed */
    if (pthread_create(&client_thread, NULL, run_clients, NULL) != 0) die("pthread_create");
    pending_at_end = serve(listen_fd);
    pthread_join(client_thread, NULL);
    close(listen_fd);
    return check(pending_at_end);
}
