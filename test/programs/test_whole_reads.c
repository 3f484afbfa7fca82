/* test_whole_reads.c - the 64-bit values a thread reads while another thread writes them
   come out whole, on every target: built once per threaded mode and once more with -m32
   (test/meson.build), where a uint64_t is two 32-bit words and a plain load may take one
   word of the old value and one of the new.

   - hwtimer_schedule_ticks counts from the timer's time, which another thread's advance
     moves: one thread advances the timer in steps of 2^32 - 10^6 ns, so that both words of
     the time change at every step, while another schedules `ticks` ahead and checks that
     the deadline it got is ticks * tick_ns after one of the times the timer was given, and
     not before the last time it saw given. A torn time is 2^32 ns off: the timeout would
     run 4.3 s early;
   - hwtimer_timeout_deadline while another thread moves the node between two deadlines
     whose high and low words both differ (0x5_FFFFFFF0 and 0x6_00000010): every read is
     one of the two;
   - hwtimer_timeout_period while another thread arms the node again and again with the
     periods 2^32 and 2^32 - 1: every read is one of the two.

   Each part runs for the time given as the program's first argument, in ms (default 1000),
   or until it has seen a torn value. On a target where such loads are atomic anyway (64-bit)
   the test cannot fail for this reason; it still checks the values. */
#include "harness.h"
#include "harness_threads.h"

#define TICK 1000u                              /* 1 us: 2^32 ticks do not overflow */
#define STEP ((uint64_t)0xFFFFFFFFu - 999999u)  /* 2^32 - 10^6: both words change */
#define AHEAD 1000u                             /* hwtimer_schedule_ticks' ticks */
#define DEADLINE_A ((uint64_t)0x5FFFFFFF0u)
#define DEADLINE_B ((uint64_t)0x600000010u)
#define PERIOD_A ((uint64_t)1 << 32)
#define PERIOD_B (((uint64_t)1 << 32) - 1)

static uint64_t run_ms = 1000;

static void nothing(hwtimer_timeout *to, void *arg) {
    (void)to;
    (void)arg;
}

/* What the writer threads share with the reader. */
typedef struct shared {
    hwtimer *t;
    hwtimer_timeout node;
    uint64_t given;   /* atomic: the last time hwtimer_advance returned from */
    unsigned stop;    /* atomic: the reader is done */
    unsigned writes;  /* atomic: how many writes the writer made */
} shared;

static shared *make_shared(uint64_t *clock) {
    hwtimer_config cfg;
    shared *sh = (shared *)calloc_or_die(1, sizeof *sh);
    *clock = 0;
    test_fake_config(&cfg, clock, TICK, 256);
    sh->t = create_or_die(&cfg);
    return sh;
}

static void free_shared(shared *sh) {
    hwtimer_destroy(sh->t);
    free(sh);
}

/* ---- the timer's time, read by hwtimer_schedule_ticks ------------------------------------ */

static void advance_in_steps(void *arg) {
    shared *sh = (shared *)arg;
    uint64_t now = 0;
    while (!ATOMIC_GET(&sh->stop)) {
        now += STEP;
        hwtimer_advance(sh->t, now);
        ATOMIC_SET(&sh->given, now);
        ATOMIC_ADD(&sh->writes, 1u);
    }
}

static void test_schedule_ticks_whole_time(void) {
    uint64_t clock, deadline, seen, base, schedules = 0, torn = 0;
    uint64_t end = now_ns() + run_ms * MS;
    shared *sh = make_shared(&clock);
    test_thread writer;
    test_thread_start(&writer, advance_in_steps, sh);
    while (now_ns() < end && !torn) {
        int k;
        for (k = 0; k < 1000; k++) {
            seen = ATOMIC_GET(&sh->given);
            CHECK_EQ(hwtimer_schedule_ticks(sh->t, &sh->node, AHEAD, nothing, NULL), HWTIMER_OK);
            deadline = hwtimer_timeout_deadline(&sh->node); /* this thread's own scheduling */
            hwtimer_cancel(sh->t, &sh->node);
            base = deadline - (uint64_t)AHEAD * TICK;
            schedules++;
            if (base % STEP != 0 || base < seen) {
                if (!torn++) {
                    fprintf(stderr, "schedule_ticks counted from 0x%llx, after the timer was "
                            "given 0x%llx (every time it is given is a multiple of 0x%llx)\n",
                            (unsigned long long)base, (unsigned long long)seen,
                            (unsigned long long)STEP);
                }
            }
        }
    }
    ATOMIC_SET(&sh->stop, 1u);
    test_thread_join(&writer);
    printf("schedule_ticks: %llu schedules against %u advances, %llu torn\n",
           (unsigned long long)schedules, ATOMIC_GET(&sh->writes), (unsigned long long)torn);
    CHECK_EQ(torn, 0);
    CHECK(ATOMIC_GET(&sh->writes) > 0);
    free_shared(sh);
}

/* ---- a node's deadline, read by hwtimer_timeout_deadline --------------------------------- */

static void move_between_deadlines(void *arg) {
    shared *sh = (shared *)arg;
    while (!ATOMIC_GET(&sh->stop)) {
        CHECK_EQ(hwtimer_reschedule_at(sh->t, &sh->node, DEADLINE_B), HWTIMER_OK);
        CHECK_EQ(hwtimer_reschedule_at(sh->t, &sh->node, DEADLINE_A), HWTIMER_OK);
        ATOMIC_ADD(&sh->writes, 2u);
    }
}

/* Reads the node's value with `read` while `writer` runs on another thread, for run_ms or
   until a value other than a and b comes out: how many such torn values it saw. */
static uint64_t read_while_written(shared *sh, void (*writer)(void *),
                                   uint64_t (*read)(const hwtimer_timeout *), uint64_t a,
                                   uint64_t b, const char *what) {
    uint64_t reads = 0, torn = 0, v;
    uint64_t end = now_ns() + run_ms * MS;
    test_thread thread;
    test_thread_start(&thread, writer, sh);
    while (now_ns() < end && !torn) {
        int k;
        for (k = 0; k < 1000; k++, reads++) {
            v = read(&sh->node);
            if (v != a && v != b && !torn++) {
                fprintf(stderr, "hwtimer_timeout_%s read 0x%llx\n", what, (unsigned long long)v);
            }
        }
    }
    ATOMIC_SET(&sh->stop, 1u);
    test_thread_join(&thread);
    printf("%s: %llu reads against %u writes, %llu torn\n", what, (unsigned long long)reads,
           ATOMIC_GET(&sh->writes), (unsigned long long)torn);
    CHECK(ATOMIC_GET(&sh->writes) > 0);
    return torn;
}

static void test_deadline_whole(void) {
    uint64_t clock;
    shared *sh = make_shared(&clock);
    CHECK_EQ(hwtimer_schedule_at(sh->t, &sh->node, DEADLINE_A, nothing, NULL), HWTIMER_OK);
    CHECK_EQ(read_while_written(sh, move_between_deadlines, hwtimer_timeout_deadline, DEADLINE_A,
                                DEADLINE_B, "deadline"), 0);
    CHECK_EQ(hwtimer_cancel(sh->t, &sh->node), 1);
    free_shared(sh);
}

/* ---- a node's period, read by hwtimer_timeout_period ------------------------------------- */

static void arm_with_two_periods(void *arg) {
    shared *sh = (shared *)arg;
    while (!ATOMIC_GET(&sh->stop)) {
        CHECK_EQ(hwtimer_cancel(sh->t, &sh->node), 1);
        CHECK_EQ(hwtimer_schedule_periodic_at(sh->t, &sh->node, DEADLINE_B, PERIOD_B, nothing,
                                              NULL), HWTIMER_OK);
        CHECK_EQ(hwtimer_cancel(sh->t, &sh->node), 1);
        CHECK_EQ(hwtimer_schedule_periodic_at(sh->t, &sh->node, DEADLINE_A, PERIOD_A, nothing,
                                              NULL), HWTIMER_OK);
        ATOMIC_ADD(&sh->writes, 2u);
    }
}

static void test_period_whole(void) {
    uint64_t clock;
    shared *sh = make_shared(&clock);
    CHECK_EQ(hwtimer_schedule_periodic_at(sh->t, &sh->node, DEADLINE_A, PERIOD_A, nothing, NULL),
             HWTIMER_OK);
    CHECK_EQ(read_while_written(sh, arm_with_two_periods, hwtimer_timeout_period, PERIOD_A,
                                PERIOD_B, "period"), 0);
    free_shared(sh);
}

int main(int argc, char **argv) {
    REQUIRE_THREADS("test_whole_reads");
    if (argc > 1) run_ms = strtoull(argv[1], NULL, 10);
    printf("%u-bit pointers, %llu ms a part\n", (unsigned)(sizeof(void *) * 8),
           (unsigned long long)run_ms);
    RUN_TEST(test_deadline_whole);
    RUN_TEST(test_period_whole);
    RUN_TEST(test_schedule_ticks_whole_time);
    return test_finish();
}
