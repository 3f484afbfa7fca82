/* The proof's C file: contracts (ACSL) for functions of hwtimer.h's [hwtimer:portability]
   and [hwtimer:ticks] sections. test/prove/extract.py replaces each `//@extract LINE` with
   the block of hwtimer.h that starts with that line, verbatim; test/prove/run.sh proves
   the result with Frama-C's WP. UMAX: UINT64_MAX. Every number here is a mathematical
   integer: a bound that holds here holds without wrapping. */
#include <stddef.h>
#include <stdint.h>

/* Two runs (run.sh): with __SIZEOF_INT128__ (the compiler's predefined macro), div_tick's
   multiply-high in halves; without it, the division compilers without __int128 run. */
#if defined(__SIZEOF_INT128__)
#define HWTIMER__MULHI_HALVES 1
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

/*@ axiomatic Division {
    lemma mul_mono: \forall integer a, b, c; 0 <= c && a <= b ==> a * c <= b * c;
    lemma mul_strict: \forall integer a, b, c; 0 < c && a < b ==> a * c < b * c;
    lemma div_bounds: \forall integer a, b; 0 <= a && 0 < b ==> (a / b) * b <= a < (a / b + 1) * b;
    lemma div_low: \forall integer a, b, k; 0 <= a && 0 < b && k * b <= a ==> k <= a / b;
    lemma div_high: \forall integer a, b, k; 0 <= a && 0 < b && a < (k + 1) * b ==> a / b <= k;
    lemma div_unique: \forall integer a, b, k; 0 <= a && 0 < b && k * b <= a < (k + 1) * b ==> a / b == k;
    }
    axiomatic MultiplyHigh {
    // hi(a, b): the high 64 bits of a * b
    logic integer hi(integer a, integer b) = (a * b) / TWO64;
    logic integer HALF = 4294967296;
    lemma halves_product: \forall integer a, b; 0 <= a && 0 <= b ==>
      a * b == (a / HALF) * (b / HALF) * TWO64 + ((a % HALF) * (b / HALF) + (a / HALF) * (b % HALF)) * HALF
               + (a % HALF) * (b % HALF);
    lemma halves_carry: \forall integer h, lh, ll, x; 0 <= lh && 0 <= ll && 0 <= x ==>
      h * TWO64 + (lh + x) * HALF + ll ==
        (h + lh / HALF) * TWO64 + (ll / HALF + lh % HALF + x) * HALF + ll % HALF;
    lemma halves_top: \forall integer h, mid, low; 0 <= h && 0 <= mid && 0 <= low < HALF ==>
      (h * TWO64 + mid * HALF + low) / TWO64 == h + mid / HALF;
    lemma mulhi: \forall integer a, b; 0 <= a < TWO64 && 0 <= b < TWO64 ==>
      hi(a, b) == (a / HALF) * (b / HALF) + ((a % HALF) * (b / HALF)) / HALF +
        (((a % HALF) * (b % HALF)) / HALF + ((a % HALF) * (b / HALF)) % HALF + (a / HALF) * (b % HALF)) / HALF;

    // hwtimer__div_tick: q = hi(n, UMAX / t) has q * t <= n (its correction never wraps)
    lemma inv_bounds: \forall integer t; 1 <= t ==> (UMAX / t) * t <= UMAX;
    lemma recip_low1: \forall integer n, t, q, i; 0 <= t && q * TWO64 <= n * i ==> (q * TWO64) * t <= (n * i) * t;
    lemma recip_low2: \forall integer n, t, i; 0 <= n && i * t <= UMAX ==> n * (i * t) <= n * UMAX;
    lemma recip_low3: \forall integer n, t, q, i; (q * TWO64) * t <= (n * i) * t && n * (i * t) <= n * UMAX ==> q * t <= n;
    lemma recip_low: \forall integer n, t; 1 <= t && 0 <= n < TWO64 ==> hi(n, UMAX / t) * t <= n;

    }
*/

/*@ assigns \nothing;
    ensures \result == (a + b <= UMAX ? a + b : UMAX); */
//@extract static uint64_t hwtimer__add_sat(uint64_t a, uint64_t b) {

/*@ requires n <= 127;
    assigns \nothing;
    ensures n >= 64 ==> \result == 0;
    ensures n < 64 ==> \result == x >> n; */
//@extract static uint64_t hwtimer__shr(uint64_t x, unsigned n) { return n < 64 ? x >> n : 0; }

/*@ requires n <= 127;
    assigns \nothing;
    ensures n >= 64 ==> \result == 0;
    ensures n < 64 ==> \result == (uint64_t)(x << n); */
//@extract static uint64_t hwtimer__shl(uint64_t x, unsigned n) { return n < 64 ? x << n : 0; }

#if defined(HWTIMER__MULHI_HALVES)
/*@ assigns \nothing;
    ensures \result == hi(a, b); */
//@extract static uint64_t hwtimer__mulhi64(uint64_t a, uint64_t b) {
#endif

/* The reciprocal's multiply-high and its correction: proved not to wrap; that it is n /
   tick_ns is tested (run.sh's halves test). The plain division compilers without
   __int128 use (the second run, __SIZEOF_INT128__ undefined): proved equal. */
#if defined(__SIZEOF_INT128__)
/*@ requires tick_ok(g);
    assigns \nothing; */
#else
/*@ requires tick_ok(g);
    assigns \nothing;
    ensures \result == n / g->tick_ns; */
#endif
//@extract HWTIMER__ALWAYS_INLINE uint64_t hwtimer__div_tick(const hwtimer__geometry *g, uint64_t n) {

#if !defined(__SIZEOF_INT128__) /* the division run: div_tick's contract is n / tick_ns */
/* The first tick boundary start + k * tick_ns at or after the deadline: never early
   (its boundary is at or after D), never a tick late (the one before is before D). */
/*@ requires tick_ok(g);
    assigns \nothing;
    ensures never_early: g->start + \result * g->tick_ns >= deadline;
    ensures never_late: \result == 0 || g->start + (\result - 1) * g->tick_ns < deadline;
    ensures \result == (deadline <= g->start ? 0 : (deadline - g->start - 1) / g->tick_ns + 1); */
//@extract HWTIMER__ALWAYS_INLINE uint64_t hwtimer__due_tick(const hwtimer__geometry *g, uint64_t deadline) {

/* A boundary's time, UMAX past the end. */
/*@ requires tick_ok(g);
    assigns \nothing;
    ensures g->start + tick * g->tick_ns <= UMAX ==> \result == g->start + tick * g->tick_ns;
    ensures g->start + tick * g->tick_ns > UMAX ==> \result == UMAX; */
//@extract static uint64_t hwtimer__tick_time(const hwtimer__geometry *g, uint64_t tick) {
#endif
