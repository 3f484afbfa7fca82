/* test_periodic.c - periodic timeouts: fixed rate, skipped runs after a jump, periods
   shorter than a tick, reschedule (from outside and from the callback), cancel from the
   callback. */
#include "harness.h"
#include "fixture.h"
#include "probe.h"

/* Rescheduling a periodic timeout (pending or cancelled) keeps its period. */
static void test_reschedule_periodic(void) {
    fixture f;
    probe p;
    open_with_probe(&f, &p, 4, NULL);
    CHECK_EQ(probe_schedule_periodic(&p, 2 * MS, 3 * MS), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, tick_at(&f, 2)), 1);
    CHECK_EQ(hwtimer_timeout_deadline(&p.to), tick_at(&f, 5));
    CHECK_EQ(hwtimer_reschedule(f.t, &p.to, 7 * MS), HWTIMER_OK);
    CHECK_EQ(hwtimer_timeout_deadline(&p.to), tick_at(&f, 9));
    CHECK_EQ(hwtimer_pending(f.t), 1);
    CHECK_EQ(advance_to(&f, tick_at(&f, 8)), 0);
    CHECK_EQ(advance_to(&f, tick_at(&f, 9)), 1);
    CHECK_EQ(hwtimer_timeout_deadline(&p.to), tick_at(&f, 12));
    CHECK_EQ(advance_to(&f, tick_at(&f, 12)), 1);

    CHECK_EQ(probe_cancel(&p), 1);
    CHECK_EQ(advance_to(&f, tick_at(&f, 20)), 0);
    CHECK_EQ(hwtimer_reschedule(f.t, &p.to, MS), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, tick_at(&f, 21)), 1);
    CHECK_EQ(advance_to(&f, tick_at(&f, 24)), 1); /* still every 3 ms */
    CHECK_EQ(p.runs, 5);
    CHECK_EQ(hwtimer_pending(f.t), 1);
    fixture_close(&f);
}

/* Fixed rate: runs for D, D+p, D+2p, ... each at its own boundary, also when p is not a
   multiple of the tick, and stays pending (even while its callback runs). */
static void test_periodic_fixed_rate(void) {
    fixture f;
    probe p;
    uint64_t k, now;
    const uint64_t period = 2 * MS + MS / 2;
    open_with_probes(&f, &p, 1, 1 * MS + 77, 4);
    p.action = act_note_pending;
    CHECK_EQ(probe_schedule_periodic(&p, 3 * MS, period), HWTIMER_OK);
    k = 0;
    for (now = tick_at(&f, 1); now <= tick_at(&f, 60); now += f.tick) {
        uint64_t due = boundary_of(&f, f.start + 3 * MS + k * period);
        CHECK_EQ(advance_to(&f, now), now == due ? 1 : 0);
        if (now == due) {
            k++;
            CHECK_EQ(p.ran_at, due);
            CHECK_EQ(p.pending_seen[0], 1);
            CHECK_EQ(hwtimer_timeout_deadline(&p.to), f.start + 3 * MS + k * period);
            CHECK_EQ(hwtimer_timeout_state(&p.to), HWTIMER_PENDING);
        }
    }
    CHECK_EQ((uint64_t)p.runs, k);
    CHECK(k >= 20);
    CHECK_EQ(hwtimer_pending(f.t), 1);
    fixture_close(&f);
}

/* A jump over several periods runs it once; its next deadline is the first D + k*p
   strictly after now, so the missed runs are skipped, not made up. */
static void test_periodic_jump_skips(void) {
    fixture f;
    probe p;
    open_with_probe(&f, &p, 4, NULL);
    CHECK_EQ(probe_schedule_periodic(&p, 2 * MS, 10 * MS), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, tick_at(&f, 37)), 1); /* D = 2, jump past 12, 22, 32 */
    CHECK_EQ(p.runs, 1);
    CHECK_EQ(hwtimer_timeout_deadline(&p.to), tick_at(&f, 42));
    CHECK_EQ(advance_to(&f, tick_at(&f, 41)), 0);
    CHECK_EQ(advance_to(&f, tick_at(&f, 42)), 1);
    CHECK_EQ(hwtimer_timeout_deadline(&p.to), tick_at(&f, 52)); /* now == D+k*p: next one */
    CHECK_EQ(advance_to(&f, tick_at(&f, 52) + 10 * YEAR), 1);
    CHECK_EQ(p.runs, 3);
    CHECK(hwtimer_timeout_deadline(&p.to) > f.clock);
    CHECK(hwtimer_timeout_deadline(&p.to) <= f.clock + 10 * MS);
    fixture_close(&f);
}

/* A period shorter than the tick runs once per tick, never twice in one pass. */
static void test_periodic_shorter_than_tick(void) {
    fixture f;
    probe p;
    uint64_t k;
    open_with_probe(&f, &p, 8, NULL);
    CHECK_EQ(probe_schedule_periodic(&p, MS, 300 * US), HWTIMER_OK);
    for (k = 1; k <= 20; k++) {
        CHECK_EQ(advance_to(&f, tick_at(&f, k)), 1);
        CHECK(hwtimer_timeout_deadline(&p.to) > tick_at(&f, k));
    }
    CHECK_EQ(p.runs, 20);
    fixture_close(&f);
}

/* Cancelling a periodic timeout from its own callback returns 1 and ends it. */
static void test_periodic_cancel_from_callback(void) {
    fixture f;
    probe p;
    open_with_probe(&f, &p, 8, act_cancel_self);
    CHECK_EQ(probe_schedule_periodic(&p, MS, MS), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, tick_at(&f, 1)), 1);
    CHECK_EQ(p.result[0], 1);
    CHECK_EQ(p.pending_seen[0], 1);
    CHECK_EQ(p.pending_seen[1], 0);
    CHECK_EQ(hwtimer_pending(f.t), 0);
    CHECK_EQ(advance_to(&f, tick_at(&f, 10)), 0);
    CHECK_EQ(p.runs, 1);
    CHECK_EQ(hwtimer_timeout_state(&p.to), HWTIMER_CANCELLED);
    fixture_close(&f);
}

/* A periodic timeout is pending while its callback runs: scheduling it there is EBUSY, and
   rescheduling it there sets its next deadline to N + d, from which its period goes on. */
static void act_periodic_moves_itself(probe *p) {
    if (p->repeats > 0) {
        p->repeats--;
        p->result[0] = probe_schedule(p, MS);
        p->result[1] = hwtimer_reschedule(p->f->t, &p->to, p->delay);
    }
}

static void test_periodic_reschedule_from_callback(void) {
    fixture f;
    probe p;
    open_with_probe(&f, &p, 4, act_periodic_moves_itself);
    p.delay = 5 * MS;
    p.repeats = 1;
    CHECK_EQ(probe_schedule_periodic(&p, 2 * MS, 10 * MS), HWTIMER_OK);
    CHECK_EQ(advance_to(&f, tick_at(&f, 2)), 1);
    CHECK_EQ(p.result[0], HWTIMER_EBUSY);
    CHECK_EQ(p.result[1], HWTIMER_OK);
    CHECK_EQ(hwtimer_timeout_deadline(&p.to), tick_at(&f, 7));
    CHECK_EQ(hwtimer_pending(f.t), 1);
    CHECK_EQ(advance_to(&f, tick_at(&f, 6)), 0);
    CHECK_EQ(advance_to(&f, tick_at(&f, 7)), 1);
    CHECK_EQ(advance_to(&f, tick_at(&f, 16)), 0);
    CHECK_EQ(advance_to(&f, tick_at(&f, 17)), 1);
    CHECK_EQ(p.runs, 3);
    fixture_close(&f);
}

int main(void) {
    RUN_TEST(test_reschedule_periodic);
    RUN_TEST(test_periodic_fixed_rate);
    RUN_TEST(test_periodic_jump_skips);
    RUN_TEST(test_periodic_shorter_than_tick);
    RUN_TEST(test_periodic_cancel_from_callback);
    RUN_TEST(test_periodic_reschedule_from_callback);
    return test_finish();
}
