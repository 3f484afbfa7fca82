/* test_netty_regress.c - regression tests named after bugs Netty's HashedWheelTimer had,
   each rebuilt from the issue's own scenario and checked against what hwtimer.h documents:

   #1115   millions of timeouts, some put in the wrong bucket and expired a tick off
   #7760   a Long.MAX_VALUE delay overflowed and fired at once, over and over
   #8277   a tick below 1 ms made the worker busy-spin (its sleep rounded to 0 ms)
   #14081  stop() returned the unprocessed timeouts without cancelling them
   #14959  a timeout cancelled while its own tick was being expired was subtracted from
           pendingTimeouts twice, so maxPendingTimeouts let more in

   The caller-driven cases run on a fake clock in every mode; the worker cases (the way
   Netty runs) need a thread backend and run in the threaded modes only. */
#include "harness.h"
#include "harness_threads.h"
#include "fixture.h"

/* A timeout that counts its runs (count_runs, harness_threads.h). */
typedef struct counted {
    hwtimer_timeout to;
    unsigned runs;
} counted;

static unsigned runs_of(counted *c, size_t count) {
    unsigned runs = 0;
    size_t i;
    for (i = 0; i < count; i++) runs += ATOMIC_GET(&c[i].runs);
    return runs;
}

/* ---- #1115: millions of timeouts, each in the right bucket ------------------------------ */

/* Netty #1115: with millions of timeouts, newTimeout() racing the worker's tick put some in
   a bucket whose round count made them expire while their deadline was still ahead.
   Here: timeouts keep arriving while the time advances, at arbitrary points inside ticks
   (a caller of newTimeout does not wait for a tick), with delays from 1 ns to hours, and
   the advances come in uneven steps (a late worker covers several ticks at once). Each
   timeout must run in exactly the advance that first reaches its boundary: not one
   earlier (its boundary is above the previous now) and not one later. */
typedef struct wide_node {
    hwtimer_timeout to;
    uint64_t boundary;
    unsigned runs;
} wide_node;

typedef struct wide_run {
    fixture f;
    uint64_t prev_now;      /* the now of the advance before the current one */
    uint64_t last_boundary; /* of the previous callback in this advance */
    size_t fired, early, late, out_of_order;
} wide_run;

static void wide_fire(hwtimer_timeout *to, void *arg) {
    wide_run *w = (wide_run *)arg;
    wide_node *n = (wide_node *)(void *)to;
    n->runs++;
    w->fired++;
    w->early += n->boundary > w->f.clock;
    w->late += n->boundary <= w->prev_now;
    w->out_of_order += n->boundary < w->last_boundary;
    w->last_boundary = n->boundary;
}

static void wide_advance(wide_run *w, uint64_t now) {
    w->last_boundary = 0;
    (void)advance_to(&w->f, now);
    w->prev_now = now;
}

/* count timeouts, one or two per step from the start (so all are scheduled well within
   `span`: about one per ms), each due by S + span. */
static void run_millions(size_t count, uint64_t span) {
    wide_run w;
    wide_node *nodes = (wide_node *)calloc_or_die(count, sizeof *nodes);
    uint64_t rng = 1115, end;
    size_t scheduled = 0, i, wrong_deadline = 0, runs_not_one = 0;
    memset(&w, 0, sizeof w);
    fixture_open(&w.f, 987654321, MS, 512); /* Netty's defaults but a 1 ms tick */
    w.prev_now = w.f.start;
    end = w.f.start + span + 2 * MS;
    while (w.f.clock < end) {
        uint64_t r = test_rng_next(&rng), now = w.f.clock + 1 + r % (3 * MS); /* a step */
        size_t batch = 1 + (size_t)(r >> 62 & 1);
        w.f.clock = now; /* the clock moves; schedules see it before the advance */
        for (i = 0; i < batch && scheduled < count; i++, scheduled++) {
            wide_node *n = &nodes[scheduled];
            uint64_t delay = 1 + test_rng_next(&rng) % (w.f.start + span - now); /* D <= S + span */
            CHECK_EQ(hwtimer_schedule(w.f.t, &n->to, delay, wide_fire, &w), HWTIMER_OK);
            n->boundary = boundary_of(&w.f, now + delay);
            wrong_deadline += hwtimer_timeout_deadline(&n->to) != now + delay;
        }
        wide_advance(&w, now);
    }
    for (i = 0; i < count; i++) runs_not_one += nodes[i].runs != 1;
    CHECK_EQ(scheduled, count);
    CHECK_EQ(w.fired, count);
    CHECK_EQ(runs_not_one, 0);
    CHECK_EQ(wrong_deadline, 0);
    CHECK_EQ(w.early, 0);
    CHECK_EQ(w.late, 0);
    CHECK_EQ(w.out_of_order, 0);
    CHECK_EQ(hwtimer_pending(w.f.t), 0);
    fixture_close(&w.f);
    free(nodes);
}

/* Two million over three hours; with locks (the threaded modes) a tenth over 20 minutes,
   as locking changes the cost, not the bucket arithmetic. */
static void test_netty_1115_millions_each_in_its_bucket(void) {
    if (test_threads()) {
        run_millions(200000, HOUR / 3);
    } else {
        run_millions(2000000, 3 * HOUR);
    }
}

/* ---- #7760: Long.MAX_VALUE delays ----------------------------------------------------- */

/* Netty #7760: newTimeout(task, Long.MAX_VALUE, SECONDS) overflowed the deadline and ran
   at once. Java's toNanos saturates that to Long.MAX_VALUE ns, so INT64_MAX ns is the
   faithful delay; UINT64_MAX ns is this API's own maximum. Neither may run early, and
   next_expiry must stay ahead of now, so an event loop that sleeps until it makes
   progress instead of spinning. INT64_MAX ns (292 years) fires exactly at its boundary;
   UINT64_MAX clamps D to UINT64_MAX, whose boundary (the start is chosen so) lies past
   the end of time: it never fires. */
static void check_huge_delays(uint64_t start) {
    fixture f;
    counted c[2];
    uint64_t b_int64, last = 0;
    int wakeups = 0;
    memset(c, 0, sizeof c);
    fixture_open(&f, start, 100 * MS, 512); /* Netty's defaults */
    CHECK_EQ(hwtimer_schedule(f.t, &c[0].to, UINT64_MAX, count_runs, &c[0].runs), HWTIMER_OK);
    CHECK_EQ(hwtimer_schedule(f.t, &c[1].to, INT64_MAX, count_runs, &c[1].runs), HWTIMER_OK);
    CHECK_EQ(hwtimer_timeout_deadline(&c[0].to), UINT64_MAX);
    CHECK_EQ(boundary_of(&f, UINT64_MAX), UINT64_MAX); /* never */
    b_int64 = boundary_of(&f, start + INT64_MAX);
    CHECK(hwtimer_next_expiry(f.t) > f.clock);
    CHECK(hwtimer_poll_timeout_ms(f.t) > 0);
    CHECK_EQ(advance_to(&f, start + 3 * SEC), 0); /* Netty's test waited 3 s */
    CHECK_EQ(advance_to(&f, start + 100 * YEAR), 0);
    /* an event loop: sleep until next_expiry, advance, until the 292-year one has run */
    while (ATOMIC_GET(&c[1].runs) == 0 && wakeups < 1000) {
        uint64_t next = hwtimer_next_expiry(f.t);
        CHECK(next > last && next > f.clock);
        if (next <= last || next <= f.clock) break;
        last = next;
        CHECK(next <= b_int64);
        (void)advance_to(&f, next);
        wakeups++;
    }
    CHECK_EQ(c[1].runs, 1);
    CHECK_EQ(f.clock, b_int64); /* exactly at its boundary */
    CHECK(wakeups <= 16);       /* a few cascades, not a spin */
    CHECK_EQ(advance_to(&f, UINT64_MAX), 0);
    CHECK_EQ(c[0].runs, 0);
    CHECK_EQ(hwtimer_pending(f.t), 1);
    CHECK_EQ(hwtimer_timeout_state(&c[0].to), HWTIMER_PENDING);
    fixture_close(&f);
}

static void test_netty_7760_max_delays_never_early(void) {
    check_huge_delays(1000000000000000u + 7);  /* eleven days of uptime, odd */
    check_huge_delays((UINT64_C(1) << 62) + 3); /* a clock a quarter of the way to the end */
}

/* On the worker, as in Netty's test: nothing runs, the worker does not wake for them,
   and stop hands both back. Each schedule may wake it once, as any filing before its
   answer does: the worker, started by the first, may answer "nothing pending" before that
   one is filed, and then c[0]'s UINT64_MAX before c[1] is. So at most 2 in 500 ms, where a
   worker that woke every tick would wake 5 times. */
static void test_netty_7760_worker(void) {
    hwtimer *t = worker_timer(100 * MS, 512);
    counted c[2];
    hwtimer_stats stats;
    memset(c, 0, sizeof c);
    CHECK_EQ(hwtimer_schedule(t, &c[0].to, UINT64_MAX, count_runs, &c[0].runs), HWTIMER_OK);
    CHECK_EQ(hwtimer_schedule(t, &c[1].to, INT64_MAX, count_runs, &c[1].runs), HWTIMER_OK);
    sleep_ns(500 * MS);
    hwtimer_stats_get(t, &stats);
    CHECK_EQ(runs_of(c, 2), 0);
    CHECK(stats.wakeups <= 2);
    CHECK_EQ(hwtimer_timeout_state(&c[1].to), HWTIMER_PENDING);
    CHECK_EQ(hwtimer_stop(t, NULL, NULL), 2);
    hwtimer_destroy(t);
}

/* ---- #8277: a tick below 1 ms ---------------------------------------------------------- */

/* Netty #8277: waitForNextTick converted its sleep to whole milliseconds, so a 100 us tick
   slept 0 ms: a busy spin. Here the worker sleeps until the next boundary that has work:
   idle for a second it does not wake at all (one spurious wake-up allowed), and with one
   timeout 500 ms away it wakes only a handful of times (a cascade or two), then runs it
   on time. */
static uint64_t ran_at_ns; /* atomic */

static void note_time(hwtimer_timeout *to, void *arg) {
    ATOMIC_SET(&ran_at_ns, now_ns());
    count_runs(to, arg);
}

static void test_netty_8277_sub_ms_tick_no_spin(void) {
    hwtimer *t = worker_timer(100 * US, 512);
    hwtimer_stats before, after;
    counted c;
    uint64_t scheduled_at, idle_wakeups;
    memset(&c, 0, sizeof c);
    CHECK_EQ(hwtimer_start(t), HWTIMER_OK);
    sleep_ns(50 * MS); /* let it settle into its sleep */
    hwtimer_stats_get(t, &before);
    sleep_ns(1 * SEC);
    hwtimer_stats_get(t, &after);
    idle_wakeups = after.wakeups - before.wakeups;
    CHECK(idle_wakeups <= 1);
    CHECK(after.passes - before.passes <= 1);

    before = after;
    scheduled_at = now_ns();
    CHECK_EQ(hwtimer_schedule(t, &c.to, 500 * MS, note_time, &c.runs), HWTIMER_OK);
    CHECK(wait_for_count(&c.runs, 1, 5 * SEC));
    hwtimer_stats_get(t, &after);
    printf("#8277: 100 us tick: %llu wake-ups idle for 1 s; %llu wake-ups for a timeout 500 ms "
           "away, run %.1f ms after scheduling\n",
           (unsigned long long)idle_wakeups, (unsigned long long)(after.wakeups - before.wakeups),
           (double)(ATOMIC_GET(&ran_at_ns) - scheduled_at) / (double)MS);
    CHECK(after.wakeups - before.wakeups <= 8);
    CHECK(ATOMIC_GET(&ran_at_ns) - scheduled_at >= 500 * MS);
    hwtimer_destroy(t);
}

/* ---- #14081: stop cancels what it hands back ---------------------------------------------- */

/* Netty #14081: stop() returned the unprocessed timeouts still in their initial state:
   not cancelled, so a caller could not tell them from live ones. Every node stop hands
   back must be CANCELLED (in the callback already), a later cancel returns 0 and it never
   runs. The nodes: Netty's five 5-second timeouts, plus a periodic one and one whose
   deadline is already past (the due list). */
enum { STOP_NODES = 7 };

static void schedule_stop_nodes(hwtimer *t, counted *c) {
    int i;
    memset(c, 0, STOP_NODES * sizeof *c);
    for (i = 0; i < 5; i++)
        CHECK_EQ(hwtimer_schedule(t, &c[i].to, 5 * SEC, count_runs, &c[i].runs), 0);
    CHECK_EQ(hwtimer_schedule_periodic(t, &c[5].to, SEC, SEC, count_runs, &c[5].runs), 0);
    CHECK_EQ(hwtimer_schedule_at(t, &c[6].to, 0, count_runs, &c[6].runs), 0);
}

static void check_handed_back(hwtimer *t, counted *c, const handed_back *h) {
    int i;
    CHECK_EQ(h->calls, STOP_NODES);
    CHECK_EQ(h->not_cancelled, 0);
    for (i = 0; i < STOP_NODES; i++) {
        CHECK_EQ(hwtimer_timeout_state(&c[i].to), HWTIMER_CANCELLED);
        CHECK_EQ(hwtimer_cancel(t, &c[i].to), 0);
        CHECK_EQ(hwtimer_reschedule(t, &c[i].to, MS), HWTIMER_ESTOPPED);
    }
    CHECK_EQ(hwtimer_pending(t), 0);
}

static void test_netty_14081_stop_cancels_what_it_returns(void) {
    fixture f;
    counted c[STOP_NODES];
    handed_back h;
    memset(&h, 0, sizeof h);
    fixture_open(&f, 5 * SEC, MS, 512);
    CHECK_EQ(advance_to(&f, f.start + 10 * MS), 0);
    schedule_stop_nodes(f.t, c);
    CHECK_EQ(hwtimer_stop(f.t, note_handed_back, &h), STOP_NODES);
    check_handed_back(f.t, c, &h);
    CHECK_EQ(advance_to(&f, f.start + HOUR), 0);
    CHECK_EQ(runs_of(c, STOP_NODES), 0);
    fixture_close(&f);
}

static void test_netty_14081_worker(void) {
    hwtimer *t = worker_timer(10 * MS, 512);
    counted c[STOP_NODES];
    handed_back h;
    memset(&h, 0, sizeof h);
    schedule_stop_nodes(t, c);
    /* the past one runs (a wait, not a sleep: the worker may start late on a loaded
       machine), and it is not handed back */
    CHECK(wait_for_count(&c[6].runs, 1, 5 * SEC));
    CHECK_EQ(hwtimer_schedule_at(t, &c[6].to, UINT64_MAX, count_runs, &c[6].runs), HWTIMER_OK);
    CHECK_EQ(hwtimer_stop(t, note_handed_back, &h), STOP_NODES);
    check_handed_back(t, c, &h);
    sleep_ns(100 * MS);
    CHECK_EQ(runs_of(c, STOP_NODES), 1);
    hwtimer_destroy(t);
}

/* ---- #14959: pending counted once when cancelled in its own tick ------------------------ */

/* Netty #14959: eleven timeouts with the same 200 ms delay; the first one's task blocks,
   and meanwhile the other ten, already moved to the bucket being expired, are cancelled.
   Netty subtracted them from pendingTimeouts twice, and maxPendingTimeouts let more in.
   Here the first callback to run is the blocker; the count must be exact at once (no
   second decrement a tick later), and max_pending = 11 then admits exactly eleven. */
enum { SAME_TICK = 11 };

typedef struct same_tick {
    counted c[SAME_TICK];
    hwtimer *t;
    int first;         /* the index of the first to run, -1 before */
    int cancel_inside; /* the blocker cancels the others itself (caller-driven) */
    unsigned started, release; /* atomics (worker: the main thread cancels) */
    int cancelled;     /* how many cancels returned 1 */
    size_t pending_after;
} same_tick;

static void cancel_the_others(same_tick *s) {
    int i;
    for (i = 0; i < SAME_TICK; i++)
        if (i != s->first) s->cancelled += hwtimer_cancel(s->t, &s->c[i].to);
}

static void same_tick_run(hwtimer_timeout *to, void *arg) {
    same_tick *s = (same_tick *)arg;
    int me = (int)(((counted *)(void *)to) - s->c);
    count_runs(to, &s->c[me].runs);
    if (s->first >= 0) return; /* a cancelled one ran: runs_of catches it */
    s->first = me;
    if (s->cancel_inside) {
        cancel_the_others(s);
        s->pending_after = hwtimer_pending(s->t);
        return;
    }
    ATOMIC_SET(&s->started, 1u);
    (void)wait_for_count(&s->release, 1, 5 * SEC); /* Netty's Thread.sleep(1000) */
}

static void same_tick_schedule(same_tick *s) {
    int i;
    for (i = 0; i < SAME_TICK; i++)
        CHECK_EQ(hwtimer_schedule(s->t, &s->c[i].to, 200 * MS, same_tick_run, s), HWTIMER_OK);
}

/* After the eleven: the count is exact, and max_pending admits eleven, not a twelfth. */
static void check_max_pending_exact(hwtimer *t) {
    counted again[SAME_TICK + 1];
    int i;
    memset(again, 0, sizeof again);
    CHECK_EQ(hwtimer_pending(t), 0);
    for (i = 0; i < SAME_TICK; i++)
        CHECK_EQ(hwtimer_schedule(t, &again[i].to, HOUR, count_runs, &again[i].runs), HWTIMER_OK);
    CHECK_EQ(hwtimer_schedule(t, &again[SAME_TICK].to, HOUR, count_runs, &again[SAME_TICK].runs),
             HWTIMER_EFULL);
    CHECK_EQ(hwtimer_pending(t), SAME_TICK);
    CHECK_EQ(hwtimer_stop(t, NULL, NULL), SAME_TICK);
}

static void test_netty_14959_cancelled_in_its_tick_counted_once(void) {
    fixture f;
    same_tick s;
    memset(&s, 0, sizeof s);
    s.first = -1;
    s.cancel_inside = 1;
    fixture_open_limited(&f, 3 * SEC, 100 * MS, 512, SAME_TICK);
    s.t = f.t;
    same_tick_schedule(&s);
    CHECK_EQ(advance_to(&f, f.start + 200 * MS), 1);
    CHECK_EQ(s.cancelled, SAME_TICK - 1);
    CHECK_EQ(s.pending_after, 0);
    CHECK_EQ(runs_of(s.c, SAME_TICK), 1);
    CHECK_EQ(advance_to(&f, f.start + 2 * SEC), 0); /* Netty's next-tick decrement */
    check_max_pending_exact(f.t);
    fixture_close(&f);
}

/* Netty's exact scenario: the worker blocks in the first callback, another thread cancels
   the other ten meanwhile. */
static void test_netty_14959_worker(void) {
    hwtimer_config cfg;
    same_tick s;
    memset(&s, 0, sizeof s);
    s.first = -1;
    real_config(&cfg, 1, 100 * MS, 512);
    cfg.max_pending = SAME_TICK;
    s.t = create_or_die(&cfg);
    same_tick_schedule(&s);
    CHECK(wait_for_count(&s.started, 1, 5 * SEC));
    cancel_the_others(&s); /* the worker sits in callback s.first */
    ATOMIC_SET(&s.release, 1u);
    CHECK_EQ(s.cancelled, SAME_TICK - 1);
    sleep_ns(300 * MS); /* Netty's Thread.sleep(2000), then pendingTimeouts() */
    CHECK_EQ(runs_of(s.c, SAME_TICK), 1);
    check_max_pending_exact(s.t);
    hwtimer_destroy(s.t);
}

int main(void) {
    RUN_TEST(test_netty_1115_millions_each_in_its_bucket);
    RUN_TEST(test_netty_7760_max_delays_never_early);
    RUN_TEST(test_netty_14081_stop_cancels_what_it_returns);
    RUN_TEST(test_netty_14959_cancelled_in_its_tick_counted_once);
    if (test_threads()) { /* the worker cases */
        RUN_TEST(test_netty_7760_worker);
        RUN_TEST(test_netty_8277_sub_ms_tick_no_spin);
        RUN_TEST(test_netty_14081_worker);
        RUN_TEST(test_netty_14959_worker);
    }
    return test_finish();
}
