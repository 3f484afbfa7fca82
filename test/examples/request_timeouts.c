/* request_timeouts.c - a deadline per request, cancelled by the response.

   The problem: an RPC client sends requests from many threads and must fail each one that
   gets no response within TIMEOUT (Dubbo's DefaultFuture, Netty's ReadTimeoutHandler,
   Kafka's request purgatory). Nearly every deadline is cancelled because the response came
   first, and the response and the deadline race: each request must end exactly once,
   answered or timed out, never both.

   How the timer is used: worker mode (cfg.worker = 1 and a thread backend in cfg.threads,
   here POSIX threads: see worker_timer() in harness_threads.h), so any thread may
   schedule and cancel. The issuing thread
   schedules the request's deadline (the node is embedded in the request), then sends.
   The thread that gets the response calls hwtimer_cancel, and its result decides the race:
   1 means the deadline will never run, so the request is answered; 0 means the deadline
   already ran (cancel is synchronous: had it been running, cancel would have waited), so
   the response is late and dropped. Either way the timer is done with the node when
   cancel returns, and the responder frees the request right away.

   The test: ISSUERS threads send REQUESTS_PER_ISSUER requests each; RESPONDERS threads
   answer them after random delays in [0, 2 * TIMEOUT), so about half are late. Checked:
   every request ends exactly once; a deadline never runs before it is due; a response
   whose cancel returned before the deadline always won; the counts balance with the
   timer's own. */
#include "harness.h"
#include "harness_threads.h"

#include <pthread.h>

#define ISSUERS 4
#define REQUESTS_PER_ISSUER 250
#define REQUESTS (ISSUERS * REQUESTS_PER_ISSUER)
#define RESPONDERS 2
#define TIMEOUT HWTIMER_MS(20)
#define TICK HWTIMER_MS(1)
#define ISSUE_EVERY HWTIMER_MS(1)

/* What happened to one request; outlives the request itself. */
typedef struct outcome {
    unsigned answered, timed_out;
    uint64_t deadline, timed_out_at, cancel_returned_at;
} outcome;

typedef struct request {
    hwtimer_timeout deadline;
    outcome *out;
    uint64_t respond_at; /* when the simulated server's response arrives */
    struct request *next; /* in a responder's queue */
} request;

/* A responder's inbox: the requests it will answer, in the order of their responses. */
typedef struct inbox {
    pthread_mutex_t lock;
    request *head;
    int closed;
} inbox;

typedef struct client {
    hwtimer *timer;
    inbox inboxes[RESPONDERS];
    outcome outcomes[REQUESTS];
} client;

typedef struct issuer {
    client *cl;
    unsigned index;
    test_thread thread;
} issuer;

typedef struct responder {
    client *cl;
    inbox *in;
    test_thread thread;
} responder;

/* ---- the request path ------------------------------------------------------------------ */

static void on_deadline(hwtimer_timeout *to, void *arg) {
    request *r = (request *)arg;
    (void)to;
    r->out->timed_out_at = now_ns();
    r->out->timed_out++; /* the caller would get a TimeoutException here */
}

static void inbox_push(inbox *in, request *r) {
    request **at = &in->head;
    pthread_mutex_lock(&in->lock);
    while (*at && (*at)->respond_at <= r->respond_at) at = &(*at)->next;
    r->next = *at;
    *at = r;
    pthread_mutex_unlock(&in->lock);
}

/* The first request whose response is due, or NULL; *done: closed and nothing left. */
static request *inbox_pop_due(inbox *in, int *done) {
    request *r;
    pthread_mutex_lock(&in->lock);
    r = in->head;
    if (r && r->respond_at <= now_ns()) in->head = r->next;
    else r = NULL;
    *done = in->closed && !in->head;
    pthread_mutex_unlock(&in->lock);
    return r;
}

static uint32_t next_random(uint32_t *state) { /* xorshift32: the same run every time */
    *state ^= *state << 13;
    *state ^= *state >> 17;
    *state ^= *state << 5;
    return *state;
}

/* Arm the deadline first, then send: a response can never beat its own deadline's arming. */
static void send_request(client *cl, unsigned id, uint64_t response_delay) {
    request *r = (request *)calloc_or_die(1, sizeof *r);
    r->out = &cl->outcomes[id];
    CHECK_EQ(hwtimer_schedule(cl->timer, &r->deadline, TIMEOUT, on_deadline, r), HWTIMER_OK);
    r->out->deadline = hwtimer_timeout_deadline(&r->deadline);
    r->respond_at = now_ns() + response_delay;
    inbox_push(&cl->inboxes[id % RESPONDERS], r);
}

static void issuer_main(void *arg) {
    issuer *is = (issuer *)arg;
    uint32_t seed = 2463534242u + is->index;
    unsigned k;
    for (k = 0; k < REQUESTS_PER_ISSUER; k++) {
        send_request(is->cl, is->index * REQUESTS_PER_ISSUER + k,
                     next_random(&seed) % (2 * TIMEOUT));
        sleep_ns(ISSUE_EVERY);
    }
}

/* The response arrived; cancel decides the race with the deadline. */
static void on_response(client *cl, request *r) {
    int won = hwtimer_cancel(cl->timer, &r->deadline) == 1;
    /* read after the cancel: a thread may stall between a clock read and its call, long
       enough for the deadline to pass and run meanwhile */
    r->out->cancel_returned_at = now_ns();
    if (won) r->out->answered++;
    /* else 0: the deadline already ran (had it been running, cancel would have waited for
       it to return), and the late response is dropped */
    free(r); /* cancel has returned: the timer no longer refers to the node */
}

static void responder_main(void *arg) {
    responder *rs = (responder *)arg;
    int done = 0;
    while (!done) {
        request *r = inbox_pop_due(rs->in, &done);
        if (r) on_response(rs->cl, r);
        else if (!done) sleep_ns(HWTIMER_US(100));
    }
}

/* ---- the test -------------------------------------------------------------------------- */

static void run_traffic(client *cl) {
    issuer issuers[ISSUERS];
    responder responders[RESPONDERS];
    unsigned i;
    for (i = 0; i < RESPONDERS; i++) {
        pthread_mutex_init(&cl->inboxes[i].lock, NULL);
        responders[i].cl = cl;
        responders[i].in = &cl->inboxes[i];
        test_thread_start(&responders[i].thread, responder_main, &responders[i]);
    }
    for (i = 0; i < ISSUERS; i++) {
        issuers[i].cl = cl;
        issuers[i].index = i;
        test_thread_start(&issuers[i].thread, issuer_main, &issuers[i]);
    }
    for (i = 0; i < ISSUERS; i++) test_thread_join(&issuers[i].thread);
    for (i = 0; i < RESPONDERS; i++) {
        inbox *in = &cl->inboxes[i];
        pthread_mutex_lock(&in->lock);
        in->closed = 1;
        pthread_mutex_unlock(&in->lock);
        test_thread_join(&responders[i].thread);
        pthread_mutex_destroy(&in->lock);
    }
}

static void test_each_request_ends_exactly_once(void) {
    client *cl = (client *)calloc_or_die(1, sizeof *cl);
    unsigned answered = 0, timed_out = 0, i;
    hwtimer_stats stats;
    cl->timer = worker_timer(TICK, 512);
    run_traffic(cl);

    for (i = 0; i < REQUESTS; i++) {
        const outcome *o = &cl->outcomes[i];
        CHECK_EQ(o->answered + o->timed_out, 1);
        if (o->timed_out) CHECK(o->timed_out_at >= o->deadline);
        if (o->cancel_returned_at < o->deadline) CHECK_EQ(o->answered, 1);
        answered += o->answered;
        timed_out += o->timed_out;
    }
    hwtimer_stats_get(cl->timer, &stats);
    printf("%u requests: %u answered, %u timed out\n", REQUESTS, answered, timed_out);
    CHECK_EQ(answered + timed_out, REQUESTS);
    CHECK_EQ(stats.fired, timed_out);
    CHECK_EQ(hwtimer_pending(cl->timer), 0);
    /* delays are uniform over two timeouts: both endings must be common */
    CHECK(answered > REQUESTS / 5);
    CHECK(timed_out > REQUESTS / 5);
    hwtimer_destroy(cl->timer);
    free(cl);
}

int main(void) {
    RUN_TEST(test_each_request_ends_exactly_once);
    return test_finish();
}
