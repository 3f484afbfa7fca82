/* test_log.c - cfg.log_fn: the one warning hwtimer gives, a timer created while more than 64
   timers with a worker are alive in the process (each is a thread). Exactly once per such
   creation, in a sentence that names the count; not for the 64th; not again once timers were
   destroyed below the count; silent with log_fn NULL; caller-driven timers never count.
   A worker starts only at the first schedule or hwtimer_start, so these timers cost no
   thread. Worker timers need threads: the threaded modes only. */
#include "harness.h"
#include "fixture.h"

enum { MANY = 64, SLOTS = MANY + 8 };

typedef struct logged {
    unsigned calls;
    char last[512];
} logged;

static void note_log(void *ctx, const char *message) {
    logged *l = (logged *)ctx;
    l->calls++;
    strncpy(l->last, message, sizeof l->last - 1);
    l->last[sizeof l->last - 1] = '\0';
}

/* A timer (small: 2 slots a level) on this mode's threads that logs to l (NULL: no log_fn). */
static hwtimer *create_logging(int worker, logged *l) {
    hwtimer_config cfg;
    hwtimer_config_default(&cfg);
    cfg.tick_ns = MS;
    cfg.ticks_per_wheel = 2;
    cfg.threads = test_threads();
    cfg.worker = worker;
    cfg.log_fn = l ? note_log : NULL;
    cfg.log_ctx = l;
    return create_or_die(&cfg);
}

/* Creates t[from .. to-1] with a worker, checking that none of them logs. */
static void create_quietly(hwtimer **t, size_t from, size_t to, logged *l) {
    size_t i;
    for (i = from; i < to; i++) {
        unsigned before = l->calls;
        t[i] = create_logging(1, l);
        CHECK_EQ(l->calls, before);
    }
}

static void destroy_all(hwtimer **t, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) {
        hwtimer_destroy(t[i]);
        t[i] = NULL;
    }
}

/* The 64th is fine, the 65th logs once with a sentence naming 64; with five destroyed (60
   alive) four new ones are fine, and the next, the 65th again, logs once more. */
static void test_warns_past_64(void) {
    static hwtimer *t[SLOTS];
    logged l;
    size_t i;
    memset(&l, 0, sizeof l);
    create_quietly(t, 0, MANY, &l);
    CHECK_EQ(l.calls, 0);
    t[MANY] = create_logging(1, &l);
    CHECK_EQ(l.calls, 1);
    CHECK(strstr(l.last, "64") != NULL);
    CHECK(strlen(l.last) > 20);

    for (i = 0; i < 5; i++) {
        hwtimer_destroy(t[MANY - i]);
        t[MANY - i] = NULL;
    }
    create_quietly(t, MANY - 4, MANY, &l); /* 60 alive, then back to 64 */
    CHECK_EQ(l.calls, 1);
    t[MANY] = create_logging(1, &l);
    CHECK_EQ(l.calls, 2);
    destroy_all(t, MANY + 1);
}

/* With log_fn NULL the 65th is created silently (and without a crash). */
static void test_silent_without_log_fn(void) {
    static hwtimer *t[SLOTS];
    logged l;
    memset(&l, 0, sizeof l);
    create_quietly(t, 0, MANY, &l);
    t[MANY] = create_logging(1, NULL);
    CHECK(t[MANY] != NULL);
    CHECK_EQ(l.calls, 0);
    CHECK_EQ(hwtimer_start(t[MANY]), HWTIMER_OK); /* a working timer, thread and all */
    destroy_all(t, MANY + 1);
}

/* Caller-driven timers (with threads or without) are not counted: 64 workers and any
   number of them log nothing, and the 65th worker logs once. */
static void test_caller_driven_not_counted(void) {
    static hwtimer *t[SLOTS], *driven[20];
    logged l;
    size_t i;
    memset(&l, 0, sizeof l);
    create_quietly(t, 0, MANY, &l);
    for (i = 0; i < 20; i++) {
        driven[i] = create_logging(0, &l);
    }
    CHECK_EQ(l.calls, 0);
    t[MANY] = create_logging(1, &l);
    CHECK_EQ(l.calls, 1);
    destroy_all(driven, 20);
    destroy_all(t, MANY + 1);
}

int main(void) {
    REQUIRE_THREADS("test_log");
    RUN_TEST(test_warns_past_64);
    RUN_TEST(test_silent_without_log_fn);
    RUN_TEST(test_caller_driven_not_counted);
    return test_finish();
}
