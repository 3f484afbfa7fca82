/* The proof's C file: contracts (ACSL) for functions of hwtimer.h's [hwtimer:portability]
   and [hwtimer:ticks] sections. test/prove/extract.py replaces each `//@extract LINE` with
   the block of hwtimer.h that starts with that line, verbatim; test/prove/run.sh proves
   the result with Frama-C's WP. UMAX: UINT64_MAX. Every number here is a mathematical
   integer: a bound that holds here holds without wrapping. */
#include <stddef.h>
#include <stdint.h>

/* run.sh's runs, each with the lemmas it needs (in a goal's context, lemmas it does not
   need can make the provers lose their way), each function proved in one of them:
     PROVE_HALVES    add_sat, shr, the multiply-high in halves (that it never wraps)
     PROVE_DIVISION  div_tick as compilers without __int128 build it (a division): that
                     it is n / tick_ns; due_tick, tick_time
     PROVE_SHIFTS    shl, with no check that bits shifted out are zero
   In the others a function is declared with its contract, which is then assumed. */
#if defined(PROVE_HALVES)
#define HWTIMER__MULHI_HALVES 1 /* hwtimer__div_tick's multiply-high, read without __int128 */
#endif
#define HWTIMER__ALWAYS_INLINE static inline
#define HWTIMER__NOINLINE
#define HWTIMER__MAX_BIT_LAYERS 6

//@extract typedef struct hwtimer__geometry {

/*@ logic integer UMAX = 18446744073709551615;
    logic integer TWO64 = 18446744073709551616;

    // A geometry's tick: tick_inv as hwtimer__geometry_init sets it.
    predicate tick_ok(hwtimer__geometry *g) =
      \valid_read(g) && 1 <= g->tick_ns && g->tick_inv == UMAX / g->tick_ns;
*/

#if defined(PROVE_DIVISION)
/*@ axiomatic Division {
    lemma div_bounds: \forall integer a, b; 0 <= a && 0 < b ==> (a / b) * b <= a < (a / b + 1) * b;
    lemma div_low: \forall integer a, b, k; 0 <= a && 0 < b && k * b <= a ==> k <= a / b;
    lemma div_high: \forall integer a, b, k; 0 <= a && 0 < b && a < (k + 1) * b ==> a / b <= k;
    lemma div_unique: \forall integer a, b, k; 0 <= a && 0 < b && k * b <= a < (k + 1) * b ==> a / b == k;
    lemma mul_mono: \forall integer a, b, c; 0 <= c && a <= b ==> a * c <= b * c;
    lemma mul_strict: \forall integer a, b, c; 0 < c && a < b ==> a * c < b * c;
    }
*/
#endif

/*@ assigns \nothing;
    ensures \result == (a + b <= UMAX ? a + b : UMAX); */
#if defined(PROVE_HALVES)
//@extract static uint64_t hwtimer__add_sat(uint64_t a, uint64_t b) {
#else
static uint64_t hwtimer__add_sat(uint64_t a, uint64_t b);
#endif

/*@ requires n <= 127;
    assigns \nothing;
    ensures n >= 64 ==> \result == 0;
    ensures n < 64 ==> \result == x >> n; */
#if defined(PROVE_HALVES)
//@extract static uint64_t hwtimer__shr(uint64_t x, unsigned n) { return n < 64 ? x >> n : 0; }
#else
static uint64_t hwtimer__shr(uint64_t x, unsigned n);
#endif

/*@ requires n <= 127;
    assigns \nothing;
    ensures n >= 64 ==> \result == 0;
    ensures n < 64 ==> \result == (uint64_t)(x << n); */
#if defined(PROVE_SHIFTS)
//@extract static uint64_t hwtimer__shl(uint64_t x, unsigned n) { return n < 64 ? x << n : 0; }
#else
static uint64_t hwtimer__shl(uint64_t x, unsigned n);
#endif

#if defined(HWTIMER__MULHI_HALVES)
/* Never wraps (that it is the high half of a * b is tested: run.sh's halves test). */
/*@ assigns \nothing; */
#if defined(PROVE_HALVES)
//@extract static uint64_t hwtimer__mulhi64(uint64_t a, uint64_t b) {
#else
static uint64_t hwtimer__mulhi64(uint64_t a, uint64_t b);
#endif
#endif

/* n / tick_ns. Proved of the division compilers without __int128 build; the reciprocal's
   form (GCC's and Clang's) is tested against it: run.sh's halves test. */
/*@ requires tick_ok(g);
    assigns \nothing;
    ensures \result == n / g->tick_ns; */
#if defined(PROVE_DIVISION)
//@extract HWTIMER__ALWAYS_INLINE uint64_t hwtimer__div_tick(const hwtimer__geometry *g, uint64_t n) {
#else
static uint64_t hwtimer__div_tick(const hwtimer__geometry *g, uint64_t n);
#endif

/* The first tick boundary start + k * tick_ns at or after the deadline: never early
   (its boundary is at or after D), never a tick late (the one before is before D). */
/*@ requires tick_ok(g);
    assigns \nothing;
    ensures never_early: g->start + \result * g->tick_ns >= deadline;
    ensures never_late: \result == 0 || g->start + (\result - 1) * g->tick_ns < deadline;
    ensures \result == (deadline <= g->start ? 0 : (deadline - g->start - 1) / g->tick_ns + 1); */
#if defined(PROVE_DIVISION)
//@extract HWTIMER__ALWAYS_INLINE uint64_t hwtimer__due_tick(const hwtimer__geometry *g, uint64_t deadline) {
#else
static uint64_t hwtimer__due_tick(const hwtimer__geometry *g, uint64_t deadline);
#endif

/* A boundary's time, UMAX past the end. */
/*@ requires tick_ok(g);
    assigns \nothing;
    ensures g->start + tick * g->tick_ns <= UMAX ==> \result == g->start + tick * g->tick_ns;
    ensures g->start + tick * g->tick_ns > UMAX ==> \result == UMAX; */
#if defined(PROVE_DIVISION)
//@extract static uint64_t hwtimer__tick_time(const hwtimer__geometry *g, uint64_t tick) {
#else
static uint64_t hwtimer__tick_time(const hwtimer__geometry *g, uint64_t tick);
#endif
