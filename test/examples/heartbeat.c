/* heartbeat.c - a heartbeat per peer, at a fixed rate, on the timer's worker thread.

   The problem: a client keeps long connections to many peers and sends each a heartbeat
   every PERIOD (Dubbo: every 60 s; a connection that misses three is dropped or
   reconnected). A peer that goes away must stop beating at once. Dubbo does it with a
   HashedWheelTimer timeout per channel that re-arms itself on every run.

   How the timer is used: worker mode (cfg.worker = 1 and a thread backend in cfg.threads,
   here POSIX threads: see worker_timer() in harness_threads.h): callbacks run on the
   timer's own thread, the application only schedules and cancels.
   hwtimer_schedule_periodic runs each peer's beat at D0, D0 + p, D0 + 2p, ...: fixed
   rate, so a late run does not push the next one back and lateness does not add up over
   the periods (re-arming "p from now" in the callback would drift).
   Removing a peer is hwtimer_cancel: synchronous, so when it returns no beat of that peer
   is running or will run, and the peer's memory could be freed at once.

   The test: PEERS peers with first beats spread over one period, RUN_PERIODS periods; every
   fourth peer is removed halfway. Checked: beat n of a peer runs at >= D0 + n*p (never
   early); each peer beat once per deadline that passed before it was removed (a worker
   stalled by a busy machine may skip up to MAX_SKIPPED); the beats run as far past their
   period boundaries at the end as at the start (medians of the first and last 10 beats,
   within DRIFT_BOUND); a removed peer never beats after its cancel returned. */
#include "harness.h"
#include "harness_threads.h"
#include "example_util.h"

#define PEERS 200
#define PERIOD HWTIMER_MS(50)
#define TICK HWTIMER_MS(1)
#define RUN_PERIODS 30 /* 1.5 s */
#define MAX_BEATS (RUN_PERIODS + 2)
#define COMPARED_BEATS 10 /* the first and the last 10 beats */
#define DRIFT_BOUND HWTIMER_MS(2)
#define MAX_SKIPPED 3 /* periods a worker stalled by a busy machine may skip */

typedef struct peer {
    hwtimer_timeout beat;
    uint64_t first_deadline; /* D0 */
    unsigned beats;
    uint64_t beat_at[MAX_BEATS];
    uint64_t removed_at;
    unsigned beats_when_removed;
} peer;

/* The heartbeat: here it records when it ran; a client would send a ping on the channel. */
static void on_beat(hwtimer_timeout *to, void *arg) {
    peer *p = (peer *)arg;
    (void)to;
    if (p->beats < MAX_BEATS) p->beat_at[p->beats] = now_ns();
    p->beats++;
}

static void add_peers(hwtimer *t, peer *peers) {
    unsigned i;
    for (i = 0; i < PEERS; i++) {
        uint64_t offset = PERIOD * i / PEERS; /* spread the beats over the period */
        CHECK_EQ(hwtimer_schedule_periodic(t, &peers[i].beat, PERIOD + offset, PERIOD, on_beat,
                                           &peers[i]),
                 HWTIMER_OK);
        peers[i].first_deadline = hwtimer_timeout_deadline(&peers[i].beat);
    }
}

/* Every fourth peer goes away halfway through the run. */
static int removed_halfway(unsigned i) {
    return i % 4 == 0;
}

/* Cancel returns 1 (it was beating) and, being synchronous, the count is final now. */
static void remove_peer(hwtimer *t, peer *p) {
    CHECK_EQ(hwtimer_cancel(t, &p->beat), 1);
    p->removed_at = now_ns();
    p->beats_when_removed = p->beats;
}

/* Beat n runs at or after D0 + n*p (a skipped period only makes later beats later); one
   beat per deadline passed before the peer was removed, but for a few a stall skipped. */
static void check_beats(const peer *p) {
    unsigned n, due = (unsigned)((p->removed_at - p->first_deadline) / PERIOD) + 1;
    for (n = 0; n < p->beats && n < MAX_BEATS; n++)
        CHECK(p->beat_at[n] >= p->first_deadline + n * PERIOD);
    CHECK(p->beats <= due);
    CHECK(p->beats + MAX_SKIPPED >= due);
}

/* How far past one of its period boundaries (D0 + k*p) beat n ran. */
static uint64_t phase(const peer *p, unsigned n) {
    return (p->beat_at[n] - p->first_deadline) % PERIOD;
}

/* Fixed rate: the beats run as far past their boundaries at the end of the run as at the
   start. A timer that re-arms "p from now" slides later by its lateness every period. */
static void check_no_drift(const peer *peers) {
    uint64_t *first = (uint64_t *)calloc_or_die(PEERS * COMPARED_BEATS, sizeof *first);
    uint64_t *last = (uint64_t *)calloc_or_die(PEERS * COMPARED_BEATS, sizeof *last);
    uint64_t first_phase, last_phase;
    size_t count = 0;
    unsigned i, n;
    for (i = 0; i < PEERS; i++) {
        const peer *p = &peers[i];
        unsigned recorded = p->beats < MAX_BEATS ? p->beats : MAX_BEATS;
        if (removed_halfway(i) || recorded < 2 * COMPARED_BEATS) continue;
        for (n = 0; n < COMPARED_BEATS; n++, count++) {
            first[count] = phase(p, n);
            last[count] = phase(p, recorded - 1 - n);
        }
    }
    first_phase = median(first, count);
    last_phase = median(last, count);
    printf("beats ran %.3f ms past their boundary (median of the first %d), %.3f ms (last %d)\n",
           (double)first_phase / 1e6, COMPARED_BEATS, (double)last_phase / 1e6,
           COMPARED_BEATS);
    CHECK(count > 0);
    CHECK(last_phase < first_phase + DRIFT_BOUND);
    free(first);
    free(last);
}

static void test_peers_beat_at_fixed_rate(void) {
    hwtimer *t = worker_timer(TICK, 512);
    peer *peers = (peer *)calloc_or_die(PEERS, sizeof *peers);
    uint64_t start = now_ns();
    unsigned i;

    add_peers(t, peers);
    sleep_until(start + RUN_PERIODS / 2 * PERIOD);
    for (i = 0; i < PEERS; i++)
        if (removed_halfway(i)) remove_peer(t, &peers[i]);
    sleep_until(start + (RUN_PERIODS + 1) * PERIOD);
    for (i = 0; i < PEERS; i++)
        if (!removed_halfway(i)) remove_peer(t, &peers[i]);

    for (i = 0; i < PEERS; i++) check_beats(&peers[i]);
    check_no_drift(peers);

    /* The removed peers stay silent: nothing runs after a cancel returned. */
    sleep_ns(3 * PERIOD);
    for (i = 0; i < PEERS; i++) CHECK_EQ(peers[i].beats, peers[i].beats_when_removed);
    CHECK_EQ(hwtimer_pending(t), 0);
    hwtimer_destroy(t);
    free(peers);
}

int main(void) {
    RUN_TIMED_TEST(test_peers_beat_at_fixed_rate);
    return test_finish();
}
