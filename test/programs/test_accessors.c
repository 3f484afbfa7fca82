/* test_accessors.c - the read-only questions about a node and the header's small macros:
   hwtimer_is_pending, hwtimer_timeout_arg, hwtimer_timeout_period, hwtimer_timeout_due_in,
   HWTIMER_CONTAINER_OF, HWTIMER_US/MS/SEC and the version macros, each clause of the
   comment above its declaration in hwtimer.h. */
#include "harness.h"
#include "fixture.h"
#include "probe.h"

/* A probe whose callback records what the accessors say about its own node. */
typedef struct observed {
    probe p;
    int is_pending_seen;
    uint64_t due_in_seen;
    int check_seen; /* hwtimer_check from inside the callback */
} observed;

static void act_observe_self(probe *p) {
    observed *o = HWTIMER_CONTAINER_OF(p, observed, p);
    o->is_pending_seen = hwtimer_is_pending(p->f->t, &p->to);
    o->due_in_seen = hwtimer_timeout_due_in(p->f->t, &p->to);
    o->check_seen = hwtimer_check(p->f->t);
}

static void observed_open(fixture *f, observed *o, uint64_t start) {
    memset(o, 0, sizeof *o);
    open_with_probes(f, &o->p, 1, start, 8);
    o->p.action = act_observe_self;
}

/* ---- hwtimer_is_pending ---------------------------------------------------------------- */

/* Pending from schedule to run, cancel or stop; 0 for NULL and for another timer. */
static void test_is_pending_life(void) {
    fixture f, g;
    probe p;
    open_with_probes(&f, &p, 1, 0, 8);
    fixture_open(&g, 0, MS, 8);
    CHECK_EQ(hwtimer_is_pending(f.t, &p.to), 0); /* never scheduled */
    CHECK_EQ(probe_schedule(&p, 3 * MS), HWTIMER_OK);
    CHECK_EQ(hwtimer_is_pending(f.t, &p.to), 1);
    CHECK_EQ(hwtimer_is_pending(g.t, &p.to), 0); /* pending, but on f */
    CHECK_EQ(hwtimer_is_pending(NULL, &p.to), 0);
    CHECK_EQ(hwtimer_is_pending(f.t, NULL), 0);
    CHECK_EQ(hwtimer_check(f.t), 0);
    CHECK_EQ(advance_to(&f, tick_at(&f, 2)), 0);
    CHECK_EQ(hwtimer_is_pending(f.t, &p.to), 1);
    CHECK_EQ(advance_to(&f, tick_at(&f, 3)), 1);
    CHECK_EQ(hwtimer_is_pending(f.t, &p.to), 0); /* ran */

    CHECK_EQ(probe_schedule(&p, 3 * MS), HWTIMER_OK);
    CHECK_EQ(probe_cancel(&p), 1);
    CHECK_EQ(hwtimer_is_pending(f.t, &p.to), 0); /* cancelled */

    CHECK_EQ(hwtimer_schedule(g.t, &p.to, 3 * MS, probe_fn, &p), HWTIMER_OK);
    CHECK_EQ(hwtimer_is_pending(g.t, &p.to), 1); /* moved to g once not pending on f */
    CHECK_EQ(hwtimer_is_pending(f.t, &p.to), 0);
    CHECK_EQ(hwtimer_stop(g.t, NULL, NULL), 1);
    CHECK_EQ(hwtimer_is_pending(g.t, &p.to), 0); /* cancelled by stop */
    fixture_close(&g);
    fixture_close(&f);
}

/* Inside its own callback a periodic timeout is pending (it will run again), a one-shot is
   not (it will not). */
static void test_is_pending_in_own_callback(void) {
    fixture f;
    observed o;
    observed_open(&f, &o, 0);
    CHECK_EQ(probe_schedule_periodic(&o.p, 2 * MS, 5 * MS), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, tick_at(&f, 2)), 1);
    CHECK_EQ(o.is_pending_seen, 1);
    CHECK_EQ(o.check_seen, 0);
    CHECK_EQ(probe_cancel(&o.p), 1);

    o.is_pending_seen = -1;
    CHECK_EQ(probe_schedule(&o.p, 2 * MS), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, tick_at(&f, 4)), 1);
    CHECK_EQ(o.is_pending_seen, 0);
    CHECK_EQ(o.check_seen, 0);
    fixture_close(&f);
}

/* ---- hwtimer_timeout_arg and hwtimer_timeout_period ------------------------------------ */

/* What the last scheduling gave: arg and period, through cancel, run and reschedule. */
static void test_arg_and_period(void) {
    fixture f;
    hwtimer_timeout to = HWTIMER_TIMEOUT_INIT;
    int first, second;
    fixture_open(&f, 0, MS, 8);
    CHECK(hwtimer_timeout_arg(&to) == NULL); /* never scheduled */
    CHECK_EQ(hwtimer_timeout_period(&to), 0);
    CHECK(hwtimer_timeout_arg(NULL) == NULL);
    CHECK_EQ(hwtimer_timeout_period(NULL), 0);

    CHECK_EQ(hwtimer_schedule_periodic(f.t, &to, MS, 7 * MS, other_fn, &first), HWTIMER_OK);
    CHECK(hwtimer_timeout_arg(&to) == &first);
    CHECK_EQ(hwtimer_timeout_period(&to), 7 * MS);
    CHECK_EQ(hwtimer_reschedule(f.t, &to, 3 * MS), HWTIMER_OK); /* keeps both */
    CHECK(hwtimer_timeout_arg(&to) == &first);
    CHECK_EQ(hwtimer_timeout_period(&to), 7 * MS);
    CHECK_EQ(hwtimer_cancel(f.t, &to), 1); /* still the last scheduling's */
    CHECK(hwtimer_timeout_arg(&to) == &first);
    CHECK_EQ(hwtimer_timeout_period(&to), 7 * MS);

    CHECK_EQ(hwtimer_schedule(f.t, &to, MS, other_fn, &second), HWTIMER_OK);
    CHECK(hwtimer_timeout_arg(&to) == &second);
    CHECK_EQ(hwtimer_timeout_period(&to), 0); /* a one-shot now */
    CHECK_EQ(advance_to(&f, tick_at(&f, 1)), 1);
    CHECK(hwtimer_timeout_arg(&to) == &second); /* after its run too */
    CHECK_EQ(hwtimer_timeout_period(&to), 0);
    hwtimer_timeout_init(&to);
    CHECK(hwtimer_timeout_arg(&to) == NULL);
    fixture_close(&f);
}

/* A hwtimer_stop hand-back gets the stop's ctx as its arg; the node's own arg and period are
   still there to read (note_handed_back records them). */
static void test_arg_in_stop_hand_back(void) {
    fixture f;
    probe p;
    handed_back h;
    memset(&h, 0, sizeof h);
    open_with_probes(&f, &p, 1, 0, 8);
    CHECK_EQ(probe_schedule_periodic(&p, 5 * MS, 9 * MS), HWTIMER_OK);
    CHECK_EQ(hwtimer_stop(f.t, note_handed_back, &h), 1);
    CHECK_EQ(h.calls, 1);
    CHECK(h.ctx_seen == &h);
    CHECK(h.arg_seen == &p);
    CHECK_EQ(h.period_seen, 9 * MS);
    fixture_close(&f);
}

/* ---- hwtimer_timeout_due_in ------------------------------------------------------------- */

/* The time from the clock to the boundary, exact on the fake clock: a deadline inside a tick
   rounds up to its boundary; 0 once the boundary has passed, also before the advance that
   runs it. */
static void test_due_in_exact(void) {
    fixture f;
    probe p;
    const uint64_t start = 1000;
    open_with_probes(&f, &p, 1, start, 8);
    CHECK_EQ(probe_schedule(&p, 2 * MS + MS / 2), HWTIMER_OK); /* D = S + 2.5 ms */
    CHECK_EQ(hwtimer_timeout_due_in(f.t, &p.to), 3 * MS);     /* boundary S + 3 ms */
    f.clock = start + MS + 7;
    CHECK_EQ(hwtimer_timeout_due_in(f.t, &p.to), 2 * MS - 7);
    f.clock = tick_at(&f, 3) - 1;
    CHECK_EQ(hwtimer_timeout_due_in(f.t, &p.to), 1);
    f.clock = tick_at(&f, 3);
    CHECK_EQ(hwtimer_timeout_due_in(f.t, &p.to), 0);
    f.clock = tick_at(&f, 9) + 5;
    CHECK_EQ(hwtimer_timeout_due_in(f.t, &p.to), 0); /* passed, not yet advanced */
    CHECK_EQ(hwtimer_check(f.t), 0);

    /* a deadline on a boundary is that boundary; far deadlines on coarse levels too */
    CHECK_EQ(probe_cancel(&p), 1);
    CHECK_EQ(probe_schedule_at(&p, tick_at(&f, 20)), HWTIMER_OK);
    CHECK_EQ(hwtimer_timeout_due_in(f.t, &p.to), tick_at(&f, 20) - f.clock);
    CHECK_EQ(hwtimer_reschedule_at(f.t, &p.to, start + 3 * DAY + 1), HWTIMER_OK);
    CHECK_EQ(hwtimer_timeout_due_in(f.t, &p.to), boundary_of(&f, start + 3 * DAY + 1) - f.clock);
    fixture_close(&f);
}

/* UINT64_MAX: not pending (never, ran, cancelled), pending on another timer, NULL, and a
   deadline whose boundary is UINT64_MAX or lies past it. */
static void test_due_in_never(void) {
    fixture f, g;
    probe p;
    const uint64_t start = 1000;
    open_with_probes(&f, &p, 1, start, 8);
    fixture_open(&g, start, MS, 8);
    CHECK_EQ(hwtimer_timeout_due_in(f.t, &p.to), UINT64_MAX); /* never scheduled */
    CHECK_EQ(probe_schedule(&p, MS), HWTIMER_OK);
    CHECK_EQ(hwtimer_timeout_due_in(g.t, &p.to), UINT64_MAX); /* another timer's */
    CHECK_EQ(hwtimer_timeout_due_in(NULL, &p.to), UINT64_MAX);
    CHECK_EQ(hwtimer_timeout_due_in(f.t, NULL), UINT64_MAX);
    CHECK_EQ(advance_to(&f, tick_at(&f, 1)), 1);
    CHECK_EQ(hwtimer_timeout_due_in(f.t, &p.to), UINT64_MAX); /* ran */
    CHECK_EQ(probe_schedule(&p, MS), HWTIMER_OK);
    CHECK_EQ(probe_cancel(&p), 1);
    CHECK_EQ(hwtimer_timeout_due_in(f.t, &p.to), UINT64_MAX); /* cancelled */

    /* S = 1000, 1 ms tick: the boundary of UINT64_MAX would be S + k ms > UINT64_MAX */
    CHECK_EQ(boundary_of(&f, UINT64_MAX), UINT64_MAX);
    CHECK_EQ(probe_schedule_at(&p, UINT64_MAX), HWTIMER_OK);
    CHECK_EQ(hwtimer_is_pending(f.t, &p.to), 1);
    CHECK_EQ(hwtimer_timeout_due_in(f.t, &p.to), UINT64_MAX);
    CHECK_EQ(hwtimer_check(f.t), 0);
    fixture_close(&g);
    fixture_close(&f);

    /* S = 5, 1 ns tick: UINT64_MAX is a boundary itself, and a timeout there never runs */
    fixture_open(&f, 5, 1, 8);
    probe_init(&p, &f, 0);
    CHECK_EQ(boundary_of(&f, UINT64_MAX), UINT64_MAX);
    CHECK_EQ(probe_schedule_at(&p, UINT64_MAX), HWTIMER_OK);
    CHECK_EQ(hwtimer_timeout_due_in(f.t, &p.to), UINT64_MAX);
    fixture_close(&f);
}

/* Inside its own callback: a periodic timeout's next period (its deadline D + p rounded up
   to its boundary), from the clock of the run; a one-shot is not pending any more. */
static void test_due_in_in_own_callback(void) {
    fixture f;
    observed o;
    observed_open(&f, &o, 0);
    /* D = 2 ms, period 2.5 ms: the next deadline 4.5 ms runs at the boundary 5 ms */
    CHECK_EQ(probe_schedule_periodic(&o.p, 2 * MS, 2 * MS + MS / 2), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, tick_at(&f, 2)), 1);
    CHECK_EQ(o.due_in_seen, 3 * MS);
    CHECK_EQ(hwtimer_timeout_due_in(f.t, &o.p.to), 3 * MS); /* and after the run */
    CHECK_EQ(advance_to(&f, tick_at(&f, 5)), 1);            /* next: 7 ms, boundary 7 ms */
    CHECK_EQ(o.due_in_seen, 2 * MS);
    CHECK_EQ(probe_cancel(&o.p), 1);

    CHECK_EQ(probe_schedule(&o.p, MS), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, tick_at(&f, 6)), 1);
    CHECK_EQ(o.due_in_seen, UINT64_MAX);
    fixture_close(&f);
}

/* ---- macros ----------------------------------------------------------------------------- */

struct conn {
    int fd;
    char name[3];
    hwtimer_timeout idle;
    int reads;
};

static struct conn *conn_seen;

static void conn_idle(hwtimer_timeout *to, void *arg) {
    (void)arg;
    conn_seen = HWTIMER_CONTAINER_OF(to, struct conn, idle);
}

/* The callback's node turns back into the struct that embeds it. */
static void test_container_of(void) {
    fixture f;
    struct conn c;
    memset(&c, 0, sizeof c);
    CHECK(HWTIMER_CONTAINER_OF(&c.idle, struct conn, idle) == &c);
    CHECK(HWTIMER_CONTAINER_OF(&c.reads, struct conn, reads) == &c);
    fixture_open(&f, 0, MS, 8);
    conn_seen = NULL;
    CHECK_EQ(hwtimer_schedule(f.t, &c.idle, MS, conn_idle, NULL), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, tick_at(&f, 1)), 1);
    CHECK(conn_seen == &c);
    fixture_close(&f);
}

/* Durations as uint64_t nanoseconds, also past 32 bits from an int or a 32-bit argument. */
static void test_duration_macros(void) {
    uint32_t big = UINT32_MAX;
    CHECK_EQ(sizeof(HWTIMER_US(1)), sizeof(uint64_t));
    CHECK_EQ(sizeof(HWTIMER_MS(1)), sizeof(uint64_t));
    CHECK_EQ(sizeof(HWTIMER_SEC(1)), sizeof(uint64_t));
    CHECK_EQ(HWTIMER_US(3), 3000u);
    CHECK_EQ(HWTIMER_MS(250), 250000000u);
    CHECK_EQ(HWTIMER_SEC(30), 30000000000u);
    CHECK_EQ(HWTIMER_US(big), 4294967295000u);
    CHECK_EQ(HWTIMER_MS(big), 4294967295000000u);
    CHECK_EQ(HWTIMER_SEC(big), 4294967295000000000u);
    CHECK_EQ(HWTIMER_MS(1 + 1), 2000000u); /* the argument is parenthesized */
    CHECK_EQ(HWTIMER_SEC(1), 1000 * HWTIMER_MS(1));
    CHECK_EQ(HWTIMER_MS(1), 1000 * HWTIMER_US(1));
}

/* HWTIMER_VERSION is "MAJOR.MINOR.PATCH" of the three numbers. */
static void test_version(void) {
    char built[64];
    snprintf(built, sizeof built, "%d.%d.%d", HWTIMER_VERSION_MAJOR, HWTIMER_VERSION_MINOR,
             HWTIMER_VERSION_PATCH);
    CHECK(strcmp(built, HWTIMER_VERSION) == 0);
    CHECK(HWTIMER_VERSION_MAJOR >= 0 && HWTIMER_VERSION_MINOR >= 0 && HWTIMER_VERSION_PATCH >= 0);
#if !(HWTIMER_VERSION_MAJOR > 0 || HWTIMER_VERSION_MINOR > 0 || HWTIMER_VERSION_PATCH > 0)
    CHECK(0); /* the version macros must be usable in #if, and not all zero */
#endif
}

int main(void) {
    RUN_TEST(test_is_pending_life);
    RUN_TEST(test_is_pending_in_own_callback);
    RUN_TEST(test_arg_and_period);
    RUN_TEST(test_arg_in_stop_hand_back);
    RUN_TEST(test_due_in_exact);
    RUN_TEST(test_due_in_never);
    RUN_TEST(test_due_in_in_own_callback);
    RUN_TEST(test_container_of);
    RUN_TEST(test_duration_macros);
    RUN_TEST(test_version);
    return test_finish();
}
