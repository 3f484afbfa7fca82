/* test_kafka.c - Kafka's TimerTest (kafka.utils.timer), translated to caller-driven mode.

   Kafka builds its timer with tickMs = 1 and wheelSize = 3 and checks two things:
   - testAlreadyExpiredTask: tasks added with delays -5 .. -1 run at once (on the first
     advanceClock). Here: deadlines already in the past (hwtimer_schedule_at) and delay 0,
     which all run on the first advance.
   - testTaskExpiration: tasks with delays 0..4 (once), 10..99 (twice), 100..499 (once),
     585 in all, each run exactly once, and the output sorted by delay equals the ids. Kafka
     only checks that each ran; on a fake clock we can check more: each ran at its own
     boundary, and in order of boundary. It is run three ways: one tick per advance, one
     jump over everything, and an event loop that sleeps until hwtimer_next_expiry (the
     counterpart of Kafka's `while (timer.advanceClock(...))`).
   Here the ticks_per_wheel of 3 is rounded up to 4 by the timer; only behaviour is checked. */
#include "harness.h"
#include "fixture.h"

/* Delays in whole ms from a start on a boundary, so a task's boundary is start + delay. */
typedef struct task {
    hwtimer_timeout to;
    int id;          /* Kafka's id: its delay in ms (negative: already expired) */
    int runs;
    uint64_t ran_at; /* the clock when it ran */
} task;

/* The timer on its fake clock, and the order in which tasks ran (Kafka's `output`). */
typedef struct bench {
    fixture f;
    task **output;
    size_t outputs, capacity;
} bench;

static void bench_open(bench *b, uint64_t start, size_t capacity) {
    fixture_open(&b->f, start, MS, 3);
    b->output = (task **)calloc_or_die(capacity, sizeof *b->output);
    b->outputs = 0;
    b->capacity = capacity;
}

static void bench_close(bench *b) {
    fixture_close(&b->f);
    free(b->output);
}

static void task_run(hwtimer_timeout *to, void *arg) {
    bench *b = (bench *)arg;
    task *k = (task *)(void *)to; /* `to` is the task's first member */
    k->runs++;
    k->ran_at = b->f.clock;
    if (b->outputs < b->capacity) {
        b->output[b->outputs++] = k;
    }
}

static void test_already_expired_task(void) {
    enum { N = 5 };
    task past[N], zero[N];
    bench b;
    const uint64_t start = 1000 * MS, now = start + 20 * MS;
    int i;
    bench_open(&b, start, 2 * N);
    b.f.clock = now; /* the clock has moved on; the timer has not advanced yet */
    for (i = 0; i < N; i++) {
        hwtimer_timeout_init(&past[i].to);
        hwtimer_timeout_init(&zero[i].to);
        past[i].id = i - N;
        past[i].runs = zero[i].runs = 0;
        CHECK_EQ(hwtimer_schedule_at(b.f.t, &past[i].to, now - (uint64_t)(N - i) * MS, task_run,
                                     &b), HWTIMER_OK);
        CHECK_EQ(hwtimer_schedule(b.f.t, &zero[i].to, 0, task_run, &b), HWTIMER_OK);
    }
    CHECK_EQ(hwtimer_pending(b.f.t), 2 * N);
    CHECK_EQ(advance_to(&b.f, now), 2 * N);
    for (i = 0; i < N; i++) {
        CHECK_EQ(past[i].runs, 1);
        CHECK_EQ(zero[i].runs, 1);
    }
    /* and once more after the timer has passed those ticks */
    for (i = 0; i < N; i++) {
        CHECK_EQ(hwtimer_schedule_at(b.f.t, &past[i].to, start + (uint64_t)i * MS, task_run, &b),
                 HWTIMER_OK);
    }
    CHECK_EQ(advance_to(&b.f, now), N);
    for (i = 0; i < N; i++) {
        CHECK_EQ(past[i].runs, 2);
    }
    CHECK_EQ(hwtimer_pending(b.f.t), 0);
    bench_close(&b);
}

/* Kafka's 585 tasks: 0..4 once, 10..99 twice, 100..499 once. */
enum { TASKS = 5 + 2 * 90 + 400, LAST_DELAY = 499 };

static size_t make_tasks(task *tasks) {
    size_t n = 0;
    int d;
    for (d = 0; d < 500; d++) {
        int copies = d < 5 ? 1 : d < 10 ? 0 : d < 100 ? 2 : 1;
        for (; copies > 0; copies--) {
            hwtimer_timeout_init(&tasks[n].to);
            tasks[n].id = d;
            tasks[n].runs = 0;
            tasks[n].ran_at = 0;
            n++;
        }
    }
    return n;
}

/* Adds the tasks in a shuffled (fixed-seed) order: Kafka's "randomly submit requests". */
static void submit_shuffled(bench *b, task *tasks, size_t n) {
    size_t order[TASKS], i;
    uint64_t rng = 0x2545F4914F6CDD1Dull;
    for (i = 0; i < n; i++) {
        order[i] = i;
    }
    for (i = n - 1; i > 0; i--) {
        size_t j, tmp;
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        j = (size_t)(rng % (i + 1));
        tmp = order[i];
        order[i] = order[j];
        order[j] = tmp;
    }
    for (i = 0; i < n; i++) {
        task *k = &tasks[order[i]];
        CHECK_EQ(hwtimer_schedule(b->f.t, &k->to, (uint64_t)k->id * MS, task_run, b), HWTIMER_OK);
    }
    CHECK_EQ(hwtimer_pending(b->f.t), n);
}

/* Every task ran once; the output is in order of delay (Kafka: ids.sorted == output). */
static void check_all_ran_in_order(const bench *b, const task *tasks, size_t n) {
    size_t i;
    CHECK_EQ(b->outputs, n);
    for (i = 0; i < n; i++) {
        CHECK_EQ(tasks[i].runs, 1);
    }
    for (i = 1; i < b->outputs; i++) {
        CHECK(b->output[i - 1]->id <= b->output[i]->id);
    }
    CHECK_EQ(hwtimer_pending(b->f.t), 0);
}

static void check_each_ran_at_its_boundary(const task *tasks, size_t n, uint64_t start) {
    size_t i;
    for (i = 0; i < n; i++) {
        CHECK_EQ(tasks[i].ran_at, start + (uint64_t)tasks[i].id * MS);
    }
}

static void test_task_expiration_tick_by_tick(void) {
    static task tasks[TASKS];
    bench b;
    const uint64_t start = 7 * MS;
    uint64_t now;
    size_t n = make_tasks(tasks), fired = 0;
    CHECK_EQ(n, 585);
    bench_open(&b, start, n);
    submit_shuffled(&b, tasks, n);
    for (now = start; now <= start + LAST_DELAY * MS; now += MS) {
        fired += advance_to(&b.f, now);
    }
    CHECK_EQ(fired, n);
    check_all_ran_in_order(&b, tasks, n);
    check_each_ran_at_its_boundary(tasks, n, start);
    bench_close(&b);
}

static void test_task_expiration_one_jump(void) {
    static task tasks[TASKS];
    bench b;
    const uint64_t start = 7 * MS;
    size_t n = make_tasks(tasks);
    bench_open(&b, start, n);
    submit_shuffled(&b, tasks, n);
    CHECK_EQ(advance_to(&b.f, start + 2000 * MS), n);
    check_all_ran_in_order(&b, tasks, n);
    bench_close(&b);
}

/* An event loop: advance to hwtimer_next_expiry until nothing is pending. It never
   overshoots a boundary, so each task still runs exactly at its own; and it needs at most
   one wake-up per occupied tick plus the moves between wheel levels, not one per tick. */
static void test_task_expiration_event_loop(void) {
    static task tasks[TASKS];
    bench b;
    const uint64_t start = 7 * MS;
    size_t n = make_tasks(tasks), wakeups = 0, fired = 0;
    bench_open(&b, start, n);
    submit_shuffled(&b, tasks, n);
    while (hwtimer_pending(b.f.t) > 0 && wakeups < 2000) {
        uint64_t next = hwtimer_next_expiry(b.f.t);
        CHECK(next <= start + LAST_DELAY * MS);
        if (wakeups > 0 && next <= b.f.clock) {
            CHECK(next > b.f.clock); /* right after an advance: no progress possible */
            break;
        }
        fired += advance_to(&b.f, next);
        wakeups++;
    }
    CHECK(wakeups < 2000);
    CHECK_EQ(fired, n);
    check_all_ran_in_order(&b, tasks, n);
    check_each_ran_at_its_boundary(tasks, n, start);
    bench_close(&b);
}

int main(void) {
    RUN_TEST(test_already_expired_task);
    RUN_TEST(test_task_expiration_tick_by_tick);
    RUN_TEST(test_task_expiration_one_jump);
    RUN_TEST(test_task_expiration_event_loop);
    return test_finish();
}
