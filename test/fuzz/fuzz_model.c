/* fuzz_model.c - libFuzzer target: hwtimer against the reference model of model.h.

   The fuzz input is the sequence of choices the randomized test (test_model.c) draws from
   its PRNG: the same model, operations and checks, with libFuzzer picking every choice.
   Read front to back, an input is

     config      tick (a table of useful ones, or any up to 2^36 ns), wheel size, start
                 clock S, whether advances may jump to the end of time, node count,
                 max_pending, wake_fn, no threads or shards
     operations  one byte each (its value modulo 102) picks the kind, then its own
                 arguments: schedule, schedule_periodic and reschedule in their relative
                 and _at forms (each maybe after a set_leeway), set_leeway on any node,
                 cancel, advance (forwards, backwards, by years, to UINT64_MAX), a
                 bounded advance (hwtimer_advance_max, a drawn bound), an event
                 loop that sleeps until next_expiry, a push of a pending deadline later
                 or earlier, keep-alive rounds (the clock steps, reads push idle timeouts
                 to the clock + their length, the loop advances), a clock that wanders,
                 poll, queries (with a hwtimer_foreach walk), NULL arguments,
                 re-initializing a node, a node pending on another timer;
                 100 = stop (or: the next callback destroys the timer, which ends the
                 episode), 101 = destroy this timer and create the next one (the nodes
                 and their leeways carry over). Callbacks draw their own mutations of the
                 timer from the input as they run.

   A choice among n takes as few bytes as n needs (one for up to 256, little-endian), a
   value of b bits takes ceil(b/8) bytes; once the input runs out, every choice is 0 and the
   episode ends. A divergence from the model prints the report of model.h and aborts, so
   libFuzzer saves the input; FUZZ_MODEL_VERBOSE=1 prints every operation of a replayed
   input. Run by test/fuzz/run.sh; `fuzz_model FILE...` replays inputs (suite 'fuzz'). */
#include "harness.h"
#include "model.h"

#include <stdlib.h>

/* ------------------------------------------------------------------------- the input */

static struct {
    const uint8_t *data;
    size_t left;
    int dry; /* a choice found the input empty */
} input;

/* The next `bytes` bytes of the input, little-endian; zeros past its end. */
static uint64_t take_bytes(unsigned bytes) {
    uint64_t v = 0;
    unsigned i;
    for (i = 0; i < bytes; i++) {
        if (input.left == 0) {
            input.dry = 1;
            break;
        }
        v |= (uint64_t)*input.data++ << (8 * i);
        input.left--;
    }
    return v;
}

static uint64_t draw_below(uint64_t n) {
    unsigned bytes = 0;
    uint64_t span;
    if (n <= 1) return 0;
    for (span = n - 1; span; span >>= 8) bytes++;
    return take_bytes(bytes) % n;
}

static uint64_t draw_bits(unsigned bits) {
    uint64_t v = take_bytes((bits + 7) / 8);
    return bits < 64 ? v & ((UINT64_C(1) << bits) - 1) : v;
}

static const char *model_origin(void) { return "fuzz input"; }

static void model_print_rerun(void) {
    fprintf(stderr, "  rerun: FUZZ_MODEL_VERBOSE=1 fuzz_model <the crash file>\n");
}

/* ------------------------------------------------------------------------- episodes */

enum { OP_NEXT_TIMER = MODEL_OP_STOP + 1 };

/* Operations until the input runs out or asks for the next timer. */
static void fuzz_episode(void) {
    episode_begin();
    for (;;) {
        unsigned r = (unsigned)draw_below(OP_NEXT_TIMER + 1);
        if (input.dry || r == OP_NEXT_TIMER) break;
        model_step(r);
        if (episode_over()) break; /* a callback destroyed the timer */
    }
    episode_end();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *verbose = getenv("FUZZ_MODEL_VERBOSE");
    input.data = data;
    input.left = size;
    input.dry = 0;
    sim_reset();
    sim.verbose = verbose && *verbose == '1';
    if (setjmp(sim.diverged)) {
        sim_abandon();
        abort(); /* libFuzzer keeps the input that got here */
    }
    while (!input.dry && input.left > 0) fuzz_episode();
    return 0;
}
