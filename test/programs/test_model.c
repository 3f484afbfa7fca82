/* test_model.c - randomized differential test: hwtimer against a naive reference model.

   The model, the operations and every check live in model.h (shared with the fuzzer,
   fuzz_model.c); this file draws the operations from a seeded PRNG. The run is a series
   of episodes of up to 3000 operations each, 40% of them with a stop at a random place.

   Usage: test_model [--ops N] [--seed S] [--verbose]
   A divergence prints the seed, the operation index, what differed and the last
   operations, then the test fails. --verbose prints every operation. */
#include "harness.h"
#include "model.h"

#include <time.h>

#define DEFAULT_OPS 1000000u
#define DEFAULT_SEED 20240601u

/* ------------------------------------------------------------------------- PRNG */

static uint64_t rng_state, rng_seed;

static uint64_t draw_below(uint64_t n) { return test_rng_below(&rng_state, n); }
static uint64_t draw_bits(unsigned bits) { return test_rng_next(&rng_state) >> (64u - bits); }

static const char *model_origin(void) {
    static char text[40];
    snprintf(text, sizeof text, "seed %llu", (unsigned long long)rng_seed);
    return text;
}

static void model_print_rerun(void) {
    fprintf(stderr, "  rerun: test_model --seed %llu --ops %llu --verbose\n",
            (unsigned long long)rng_seed, (unsigned long long)sim.op + 1);
}

static void sim_seed(uint64_t seed) {
    sim_reset();
    rng_state = rng_seed = seed;
}

/* ------------------------------------------------------------------------- episodes */

static void run_episodes(uint64_t ops) {
    while (sim.op < ops) {
        uint64_t length = 1 + draw_below(3000), stop_at, i;
        if (length > ops - sim.op) length = ops - sim.op;
        stop_at = draw_percent(40) ? draw_below(length) : length;
        episode_begin();
        for (i = 0; i < length && !episode_over(); i++)
            model_step(i == stop_at ? MODEL_OP_STOP : (unsigned)draw_below(MODEL_OP_MIX));
        episode_end();
    }
}

/* ------------------------------------------------------------------------- tests */

static uint64_t opt_ops = DEFAULT_OPS, opt_seed = DEFAULT_SEED;
static int opt_verbose;

/* The checks must be able to fail: a model with this sabotage diverges within 20000
   operations. */
static int catches(int sabotage) {
    static int caught;
    sim_seed(opt_seed);
    sim.quiet = 1;
    model_sabotage = sabotage;
    caught = 0;
    if (setjmp(sim.diverged)) {
        caught = 1;
    } else {
        run_episodes(20000);
    }
    model_sabotage = MODEL_EXACT;
    sim_abandon();
    return caught;
}

/* A model that ignores the tick grid (B = D) is caught. */
static void test_detects_a_wrong_model(void) { CHECK(catches(MODEL_IGNORES_GRID)); }

/* A model that ignores leeways (B = the first boundary) is caught. */
static void test_detects_a_model_without_leeway(void) { CHECK(catches(MODEL_IGNORES_LEEWAY)); }

/* A model that expects no wake_fn call is caught. */
static void test_detects_a_model_that_never_wakes(void) { CHECK(catches(MODEL_NEVER_WAKES)); }

/* A model that runs a timeout pushed later at its old boundary is caught. */
static void test_detects_a_model_that_ignores_pushes(void) { CHECK(catches(MODEL_IGNORES_PUSH)); }

/* A model that expects hwtimer_advance_max to leave nothing due is caught. */
static void test_detects_a_model_that_ignores_bounds(void) { CHECK(catches(MODEL_IGNORES_BOUND)); }

/* A model that counts late runs without their leeway is caught. */
static void test_detects_a_model_with_wrong_lateness(void) {
    CHECK(catches(MODEL_LATE_WITHOUT_LEEWAY));
}

static void print_summary(double seconds) {
    const uint64_t *refused = sim.seen.refused;
    printf("model: %llu operations, %llu callbacks checked, %llu episodes, %.2f s CPU (%.0f ops/s)\n",
           (unsigned long long)sim.op, (unsigned long long)sim.callbacks,
           (unsigned long long)sim.episode, seconds, seconds > 0 ? (double)sim.op / seconds : 0.0);
    printf("model: armed %llu (%llu from callbacks); refused: EINVAL %llu, EFULL %llu, "
           "ESTOPPED %llu, EBUSY %llu; cancelled %llu (%llu due in the same pass); "
           "periodic runs %llu; no-op advances %llu; handed back by stop %llu; "
           "operations after advancing to UINT64_MAX %llu\n",
           (unsigned long long)sim.seen.armed, (unsigned long long)sim.seen.armed_in_pass,
           (unsigned long long)refused[-HWTIMER_EINVAL], (unsigned long long)refused[-HWTIMER_EFULL],
           (unsigned long long)refused[-HWTIMER_ESTOPPED],
           (unsigned long long)refused[-HWTIMER_EBUSY], (unsigned long long)sim.seen.cancelled,
           (unsigned long long)sim.seen.cancelled_due, (unsigned long long)sim.seen.periodic_runs,
           (unsigned long long)sim.seen.noop_advances, (unsigned long long)sim.seen.handed_back,
           (unsigned long long)sim.seen.at_end_of_time);
    printf("model: leeways set %llu (%llu refused EBUSY); armed with a window of more than "
           "one tick %llu (%llu moved later); boundaries seen through due_in %llu (%llu of a "
           "periodic inside its callback); foreach walks %llu\n",
           (unsigned long long)sim.seen.leeway_set, (unsigned long long)sim.seen.leeway_busy,
           (unsigned long long)sim.seen.armed_wide, (unsigned long long)sim.seen.armed_moved,
           (unsigned long long)sim.seen.due_in_seen, (unsigned long long)sim.seen.due_in_rearm,
           (unsigned long long)sim.seen.foreach_walks);
    printf("model: armings that woke the loop (wake_fn) %llu; that found an answer out and "
           "did not %llu\n",
           (unsigned long long)sim.seen.woke, (unsigned long long)sim.seen.did_not_wake);
    printf("model: episodes on a timer of shards %llu (armings outside shard 0: %llu); on a "
           "timer without threads in a build with them %llu; timers destroyed by a callback "
           "%llu; nodes made pending on another timer %llu\n",
           (unsigned long long)sim.seen.sharded_episodes,
           (unsigned long long)sim.seen.armed_off_shard0,
           (unsigned long long)sim.seen.unthreaded_episodes,
           (unsigned long long)sim.seen.destroyed_in_callback,
           (unsigned long long)sim.seen.other_timer);
    printf("model: try_cancel %llu; retired %llu (%llu pending); armings refused as retired "
           "%llu\n",
           (unsigned long long)sim.seen.try_cancels, (unsigned long long)sim.seen.retired,
           (unsigned long long)sim.seen.retired_pending,
           (unsigned long long)refused[-HWTIMER_ERETIRED]);
    printf("model: pending deadlines pushed later %llu (%llu left in their coarse slot), "
           "moved earlier %llu; keep-alive rounds %llu; re-filed by a pass "
           "after a push (stats.refiled) %llu\n",
           (unsigned long long)sim.seen.pushed_later, (unsigned long long)sim.seen.pushed_in_place,
           (unsigned long long)sim.seen.pushed_earlier,
           (unsigned long long)sim.seen.keepalive_rounds, (unsigned long long)sim.seen.refiled);
    printf("model: bounded advances %llu (%llu left timeouts due: %llu in all); runs of left "
           "timeouts %llu (%llu after one of an older call's)\n",
           (unsigned long long)sim.seen.bounded, (unsigned long long)sim.seen.cut,
           (unsigned long long)sim.seen.left, (unsigned long long)sim.seen.left_runs,
           (unsigned long long)sim.seen.left_later_gen);
}

static void test_random_operations(void) {
    clock_t began;
    double seconds;
    sim_seed(opt_seed);
    sim.verbose = opt_verbose;
    printf("model: seed %llu, %llu operations\n", (unsigned long long)opt_seed,
           (unsigned long long)opt_ops);
    fflush(stdout);
    began = clock();
    if (setjmp(sim.diverged)) {
        sim_abandon();
        CHECK_EQ(sim.op, opt_ops); /* the run stopped at the divergence */
        return;
    }
    run_episodes(opt_ops);
    seconds = (double)(clock() - began) / CLOCKS_PER_SEC;
    print_summary(seconds);
}

static uint64_t parse_number(const char *text) {
    char *end;
    unsigned long long v = strtoull(text, &end, 0);
    if (*text == '\0' || *end != '\0') {
        fprintf(stderr, "test_model: not a number: %s\n", text);
        exit(2);
    }
    return (uint64_t)v;
}

static void parse_args(int argc, char **argv) {
    int i;
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--ops") == 0 && i + 1 < argc) {
            opt_ops = parse_number(argv[++i]);
        } else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
            opt_seed = parse_number(argv[++i]);
        } else if (strcmp(argv[i], "--verbose") == 0) {
            opt_verbose = 1;
        } else {
            fprintf(stderr, "usage: %s [--ops N] [--seed S] [--verbose]\n", argv[0]);
            exit(2);
        }
    }
}

int main(int argc, char **argv) {
    parse_args(argc, argv);
    RUN_TEST(test_detects_a_wrong_model);
    RUN_TEST(test_detects_a_model_without_leeway);
    RUN_TEST(test_detects_a_model_that_never_wakes);
    RUN_TEST(test_detects_a_model_that_ignores_pushes);
    RUN_TEST(test_detects_a_model_that_ignores_bounds);
    RUN_TEST(test_detects_a_model_with_wrong_lateness);
    RUN_TEST(test_random_operations);
    return test_finish();
}
