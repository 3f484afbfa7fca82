/* The proof's C file: contracts (ACSL) for functions of hwtimer.h's [hwtimer:portability]
   and [hwtimer:ticks] sections. test/prove/extract.py replaces each `//@extract LINE` with
   the block of hwtimer.h that starts with that line, verbatim; test/prove/run.sh proves
   the result with Frama-C's WP. UMAX: UINT64_MAX. Every number here is a mathematical
   integer: a bound that holds here holds without wrapping. */
#include <stddef.h>
#include <stdint.h>

/* run.sh's runs, each with the lemmas it needs (in a goal's context, lemmas it does not
   need can make the provers lose their way), each function proved in one of them:
     PROVE_HALVES    add_sat, shr, the multiply-high in halves (that it never wraps; that
                     it is the high half of a * b: with R_MULHI, run mulhi)
     PROVE_DIVISION  div_tick as compilers without __int128 build it (a division): that
                     it is n / tick_ns; due_tick, tick_time
     PROVE_RECIPROCAL  div_tick as GCC and Clang build it (a multiply-high and one
                     correction; HWTIMER__MULHI_HALVES selects the multiply-high in
                     halves): that it is n / tick_ns and never wraps, and the lemmas this
                     rests on (more runs: RECIP_LEMMAS, see the section)
     PROVE_SHIFTS    shl, with no check that bits shifted out are zero
     PROVE_WHERE     msb64, wheel_where (its level, where and range), and the lemmas
                     these rest on (more runs: see the section)
     PROVE_GRID      (with PROVE_WHERE's definitions) set_leeway_memo, leeway_grid and
                     slot_start, each in a run of its own, and their lemmas, among them
                     collected: a node filed in a slot is reached at or before its tick
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

#if defined(PROVE_RECIPROCAL) || defined(R_MULHI)
/* The reciprocal division (hwtimer__div_tick with a multiply-high), as hwtimer.h's
   comment on it argues: with inv = floor(UMAX / t), t * inv lies in [2^64 - t, 2^64), so
   q = floor(n * inv / 2^64) has q * t <= n < q * t + 2t, and n / t is q, or q + 1 when
   n - q * t >= t. Its arithmetic as lemmas, proved by WP (RECIP_LEMMAS: run.sh's runs
   mulhi, lemma_mulhi_* and lemma_recip_*, each with only the lemmas its goals rest on;
   R_ macros choose them), axioms in the runs that use them (reciprocal: recip_div).
   Nothing here is assumed that a run does not prove.
   The provers find a lemma's instance only by terms of the goal (triggers), and lose
   their way among products that match each other's terms. So each lemma is stated on
   the terms of the goals that use it; a step that combines facts takes them as
   hypotheses (recip_low_sum, mulhi_carry), and a lemma of the same variables then puts
   it together with the lemmas that prove those facts; and the hypotheses that make a
   step's instance are named predicates (low, high, near), which are what the provers
   match. */
#if defined(RECIP_LEMMAS)
#define RECIP_LEMMA lemma
#else
#define RECIP_LEMMA axiom
#endif
/*@ logic integer TWO32 = 4294967296;
    // What the reciprocal's q (below: the high half of n * v, v = floor(UMAX / t))
    // satisfies, as lemmas' hypotheses: the provers find a lemma's instance by such a
    // predicate where arithmetic terms would not do.
    predicate low(integer n, integer t, integer v, integer q) =
      0 <= n && 0 < t && 0 <= v && t * v < TWO64 && 0 <= q && q * TWO64 <= n * v;
    predicate high(integer n, integer t, integer v, integer q) =
      0 <= n < TWO64 && 0 < t && TWO64 - t <= t * v && n * v < (q + 1) * TWO64;
    predicate near(integer n, integer t, integer q) = 0 <= n && 0 < t && q * t <= n < q * t + 2 * t;
*/
/*@ axiomatic Reciprocal {
#if defined(R_CARRY)
    // the high 64 bits of a * b, once it is written as the sum below (hwtimer__mulhi64's
    // terms): what the sum has below 2^32 does not reach them
    RECIP_LEMMA mulhi_carry: \forall integer a, b; 0 <= a < TWO64 && 0 <= b < TWO64 ==>
      a * b == ((a / TWO32) * (b / TWO32) + ((a % TWO32) * (b / TWO32)) / TWO32) * TWO64 +
        (((a % TWO32) * (b % TWO32)) / TWO32 + ((a % TWO32) * (b / TWO32)) % TWO32 +
         (a / TWO32) * (b % TWO32)) * TWO32 + ((a % TWO32) * (b % TWO32)) % TWO32 ==>
      (a * b) / TWO64 == (a / TWO32) * (b / TWO32) + ((a % TWO32) * (b / TWO32)) / TWO32 +
        (((a % TWO32) * (b % TWO32)) / TWO32 + ((a % TWO32) * (b / TWO32)) % TWO32 +
         (a / TWO32) * (b % TWO32)) / TWO32;
#endif
#if defined(R_RING)
    // a * b from the 32-bit halves of a and b: the high halves' product, the middle
    // products split at 2^32, and the low halves' product
    RECIP_LEMMA mulhi_ring: \forall integer a, b; 0 <= a && 0 <= b ==>
      a * b == ((a / TWO32) * (b / TWO32) + ((a % TWO32) * (b / TWO32)) / TWO32) * TWO64 +
        (((a % TWO32) * (b % TWO32)) / TWO32 + ((a % TWO32) * (b / TWO32)) % TWO32 +
         (a / TWO32) * (b % TWO32)) * TWO32 + ((a % TWO32) * (b % TWO32)) % TWO32;
#endif
#if defined(R_MULHI)
    // hwtimer__mulhi64's value: the high half of the product
    RECIP_LEMMA mulhi_halves: \forall integer a, b; 0 <= a < TWO64 && 0 <= b < TWO64 ==>
      (a * b) / TWO64 == (a / TWO32) * (b / TWO32) + ((a % TWO32) * (b / TWO32)) / TWO32 +
        (((a % TWO32) * (b % TWO32)) / TWO32 + ((a % TWO32) * (b / TWO32)) % TWO32 +
         (a / TWO32) * (b % TWO32)) / TWO32;
#endif
#if defined(R_LOW_T)
    // q * t <= n for q with q * 2^64 <= n * inv, where t * inv < 2^64 (low): the two
    // products that show it, and their sum (below). The first is stated on the two
    // hypotheses it needs: with all of low's, the provers take seconds over it.
    RECIP_LEMMA recip_low_t: \forall integer n, t, v, q; 0 < t && q * TWO64 <= n * v ==>
      (q * TWO64) * t <= (n * v) * t;
#endif
#if defined(R_LOW_N)
    RECIP_LEMMA recip_low_n: \forall integer n, t, v, q; low(n, t, v, q) ==>
      n * (t * v) <= n * TWO64;
#endif
#if defined(R_HIGH_T)
    // n < (q + 2) * t for q with n * inv < (q + 1) * 2^64, where t * inv >= 2^64 - t and
    // n < 2^64 (high): the three products that show it, and their sum
    RECIP_LEMMA recip_high_t: \forall integer n, t, v, q; high(n, t, v, q) ==>
      (n * v) * t < ((q + 1) * TWO64) * t;
#endif
#if defined(R_HIGH_N)
    RECIP_LEMMA recip_high_n: \forall integer n, t, v, q; high(n, t, v, q) ==>
      n * (TWO64 - t) <= n * (t * v);
#endif
#if defined(R_PARTS)
    // n / t against q and q + 1, from where n lies between multiples of t (near)
    RECIP_LEMMA recip_near_high1: \forall integer n, t, q; near(n, t, q) ==> n / t <= q + 1;
    RECIP_LEMMA recip_near_low: \forall integer n, t, q; near(n, t, q) ==> q <= n / t;
    RECIP_LEMMA recip_near_low1: \forall integer n, t, q; near(n, t, q) && q * t + t <= n ==>
      q + 1 <= n / t;
    RECIP_LEMMA recip_near_high: \forall integer n, t, q; near(n, t, q) && n < q * t + t ==>
      n / t <= q;
    // the third product for high, and the sums for low and high
    RECIP_LEMMA recip_high_nt: \forall integer n, t, v, q; high(n, t, v, q) ==>
      n * t < TWO64 * t;
    RECIP_LEMMA recip_low_sum: \forall integer n, t, v, q; low(n, t, v, q) ==>
      (q * TWO64) * t <= (n * v) * t ==> n * (t * v) <= n * TWO64 ==> q * t <= n;
    RECIP_LEMMA recip_high_sum: \forall integer n, t, v, q; high(n, t, v, q) ==>
      (n * v) * t < ((q + 1) * TWO64) * t ==> n * (TWO64 - t) <= n * (t * v) ==>
      n * t < TWO64 * t ==> n < q * t + 2 * t;
#endif
#if defined(R_INV)
    // inv = floor(UMAX / t) makes t * inv lie in [2^64 - t, 2^64), and q, the high half
    // of n * inv, is low and high
    RECIP_LEMMA recip_inv: \forall integer n, t, v;
      0 <= n < TWO64 && 0 < t < TWO64 && v == UMAX / t ==>
      low(n, t, v, (n * v) / TWO64) && high(n, t, v, (n * v) / TWO64);
#endif
#if defined(R_STEPS)
    RECIP_LEMMA recip_low: \forall integer n, t, v, q; low(n, t, v, q) ==> q * t <= n;
    RECIP_LEMMA recip_high: \forall integer n, t, v, q; high(n, t, v, q) ==> n < q * t + 2 * t;
    // n / t is q, or q + 1 when n - q * t >= t
    RECIP_LEMMA recip_near: \forall integer n, t, q; near(n, t, q) ==>
      n / t == q + (n - q * t >= t ? 1 : 0);
#endif
#if defined(R_Q)
    // so q is floor(n / t) or one less
    RECIP_LEMMA recip_q: \forall integer n, t, v;
      0 <= n < TWO64 && 0 < t < TWO64 && v == UMAX / t ==>
      low(n, t, v, (n * v) / TWO64) ==> high(n, t, v, (n * v) / TWO64) ==>
      near(n, t, (n * v) / TWO64);
#endif
#if defined(R_DIV)
    // hwtimer__div_tick's reciprocal form: q * t does not wrap nor exceed n, and one
    // comparison makes q the quotient
    RECIP_LEMMA recip_div: \forall integer n, t, v;
      0 <= n < TWO64 && 0 < t < TWO64 && v == UMAX / t ==>
      ((n * v) / TWO64) * t <= n && n < ((n * v) / TWO64) * t + 2 * t &&
      n / t == (n * v) / TWO64 + (n - ((n * v) / TWO64) * t >= t ? 1 : 0);
#endif
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
/* Never wraps (run halves), and is the high half of the 128-bit product a * b (run
   mulhi, on lemma mulhi_halves: in a run of its own, as with that lemma in context the
   provers lose their way on the overflow goals). That it equals the __int128
   product's high half, which GCC's and Clang's builds use, is tested: run.sh's halves
   test. */
/*@ assigns \nothing;
    ensures mulhi_value: \result == (a * b) / TWO64; */
#if defined(PROVE_HALVES)
//@extract static uint64_t hwtimer__mulhi64(uint64_t a, uint64_t b) {
#else
static uint64_t hwtimer__mulhi64(uint64_t a, uint64_t b);
#endif
#endif

/* n / tick_ns. Proved of both forms: the division compilers without __int128 build
   (PROVE_DIVISION), and the reciprocal's (GCC's and Clang's, PROVE_RECIPROCAL) with the
   multiply-high in halves, whose contract (the high half of n * tick_inv) is proved in
   PROVE_HALVES. What remains only tested is that the __int128 product's high half, which
   those compilers use, equals that multiply-high: run.sh's halves test. */
/*@ requires tick_ok(g);
    assigns \nothing;
    ensures \result == n / g->tick_ns; */
#if defined(PROVE_DIVISION) || (defined(PROVE_RECIPROCAL) && !defined(RECIP_LEMMAS))
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

/* ---- The wheel: the level and slot of a tick (PROVE_WHERE) ---- */
#if defined(PROVE_WHERE)

//@extract struct hwtimer__link {
//@extract typedef struct hwtimer__leeway_memo {
//@extract typedef struct hwtimer__wheel {

/* Bits: 2^k and the highest set bit (defined), and what >>, <<, &, |, ^ of 64-bit values
   and the conversion to uint64_t are in arithmetic: machine facts WP's model leaves
   abstract. Axioms to WP, each proved in Why3 as a lemma of the same name in
   test/prove/bits.mlw, on Why3's 64-bit words (bv.BV64) with pow2 Why3's Pow2int.pow2 and
   msb defined there by halving (pow2_0, pow2_s and msb_def are proved of them, which shows
   these definitions consistent); run.sh proves them every run and fails if an axiom here
   has no such lemma. What stays assumed is the link: that WP's integer >>, <<, &, | and ^
   of values in [0, 2^64) are the C operations on 64-bit words as Why3's bv theory models
   them, and that each lemma there reads its axiom here right (a reader's check: bits.mlw
   quotes each axiom verbatim above its lemma, and run.sh fails when a quote and its axiom
   differ, so that an axiom cannot change without its lemma being looked at). Each run has only the ones it needs (WHERE_ONLY and the A_
   and L_ macros: the provers lose their way in a context of unneeded quantified facts);
   the ones from shl on are in no run that does not ask for them. */
/*@ axiomatic Bits {
    logic integer pow2(integer k);
    logic integer msb(integer x);
#if !defined(WHERE_ONLY) || defined(A_DEF)
    axiom pow2_0: pow2(0) == 1;
    axiom pow2_s: \forall integer k; 0 <= k ==> pow2(k + 1) == 2 * pow2(k);
    axiom msb_def: \forall integer x; 0 < x ==> 0 <= msb(x) && pow2(msb(x)) <= x < pow2(msb(x) + 1);
#endif
#if !defined(WHERE_ONLY) || defined(A_POW2)
    axiom pow2_64: pow2(64) == TWO64;
    axiom pow2_le: \forall integer a, b; 0 <= a <= b ==> 0 < pow2(a) <= pow2(b);
#endif
#if !defined(WHERE_ONLY) || defined(A_SHR)
    axiom shr: \forall integer x, k; 0 <= x < TWO64 && 0 <= k < 64 ==> (x >> k) == x / pow2(k);
#endif
#if !defined(WHERE_ONLY) || defined(A_AND)
    axiom and_le: \forall integer x, m; 0 <= x < TWO64 && 0 <= m < TWO64 ==> 0 <= (x & m) <= m;
#endif
#if !defined(WHERE_ONLY) || defined(A_XOR)
    axiom xor64: \forall integer x, y; 0 <= x < TWO64 && 0 <= y < TWO64 ==>
      0 <= (x ^ y) < TWO64 && (x != y ==> 0 < (x ^ y));
    axiom xor_below: \forall integer x, y, k; 0 <= k <= 64 && 0 <= x < pow2(k) && 0 <= y < pow2(k) ==>
      0 <= (x ^ y) < pow2(k) && (x != y ==> (x ^ y) != 0);
#endif
#if defined(A_SHL)
    // a left shift whose result fits: a multiplication
    axiom shl: \forall integer x, k; 0 <= x && 0 <= k < 64 && x * pow2(k) < TWO64 ==>
      (x << k) == x * pow2(k) && (uint64_t)(x << k) == x * pow2(k);
#endif
#if defined(A_WRAP)
    // the conversion of a sum of two 64-bit values that passed 2^64: it wraps once
    axiom wrap: \forall integer x; TWO64 <= x < 2 * TWO64 ==> (uint64_t)x == x - TWO64;
#endif
#if defined(A_AND_NOT)
    // & ~(2^k - 1) clears the k low bits (in either operand order: Qed orders `&`'s
    // operands its own way, and the provers match terms as they are written)
    axiom and_not_mask: \forall integer a, b, k; 0 <= a < TWO64 && 0 <= b < TWO64 && 0 <= k < 64 ==>
      (b == (uint64_t)~(pow2(k) - 1) ==> (a & b) == (a / pow2(k)) * pow2(k)) &&
      (a == (uint64_t)~(pow2(k) - 1) ==> (a & b) == (b / pow2(k)) * pow2(k));
#endif
#if defined(A_ADD)
    // 2^(a + b) == 2^a * 2^b, an induction on pow2_s (stated with c for a + b: the
    // provers then use it on the powers at hand, and make no new ones without end)
    axiom pow2_add: \forall integer a, b, c; 0 <= a && 0 <= b && c == a + b ==> pow2(c) == pow2(a) * pow2(b);
#endif
#if defined(A_OR)
    // | of values with no bit in common: a sum (in either operand order, as and_not_mask)
    axiom or_disjoint: \forall integer a, b, k; 0 <= a < TWO64 && 0 <= b < TWO64 && 0 <= k <= 64 ==>
      (a < pow2(k) && b % pow2(k) == 0 ==> (a | b) == a + b) &&
      (b < pow2(k) && a % pow2(k) == 0 ==> (a | b) == a + b);
#endif
#if defined(A_XOR_SHR)
    // x != y differ first at bit msb(x ^ y), one of the 64, where the greater has the 1: shifted right
    // past that bit the two are equal, shifted by at most it the greater stays greater
    // (stated for either order: Qed orders ^'s operands its own way)
    axiom xor_shr: \forall integer x, y, k; 0 <= x < TWO64 && 0 <= y < TWO64 && x != y && 0 <= k ==>
      0 <= msb(x ^ y) < 64 && (msb(x ^ y) < k ==> x / pow2(k) == y / pow2(k)) &&
      (k <= msb(x ^ y) && y < x ==> y / pow2(k) < x / pow2(k)) &&
      (k <= msb(x ^ y) && x < y ==> x / pow2(k) < y / pow2(k));
#endif
    }
*/

/* The wheel's geometry as hwtimer__geometry_init sets it (with ticks_per_wheel at most
   2^30, as hwtimer_create requires): W = 2^bits slots a level, `levels` levels of bits
   bits each, enough for max_tick; level_shift and level_where by the highest differing
   bit. In parts, by the memory each part reads. */
/*@ predicate geo_slots(hwtimer__geometry *g) =
      1 <= g->bits <= 30 && g->width == pow2(g->bits) && g->mask == g->width - 1 &&
      1 <= g->levels && 2 + g->levels * g->width <= 4294967295;
    predicate geo_shift(hwtimer__geometry *g) =
      \forall integer b; 0 <= b < 64 ==> g->level_shift[b] == (b / g->bits) * g->bits;
    predicate geo_where(hwtimer__geometry *g) =
      \forall integer b; 0 <= b < 64 && b / g->bits < g->levels ==>
        g->level_where[b] == 2 + (b / g->bits) * g->width;
    predicate geo_ok(hwtimer__geometry *g) =
      \valid_read(g) && geo_slots(g) && geo_shift(g) && geo_where(g) &&
      g->max_tick < pow2(g->levels * g->bits);
*/

/* Lemmas, stated on the terms hwtimer__wheel_where's goals hold so that the provers find
   their instances: proved by WP (WHERE_LEMMAS, run.sh's runs lemma_*, each with only what
   it needs), axioms in the other runs. digit, a machine fact as Bits' are (wheel_where's
   where and range and its sum's overflow check rest on it), is an axiom to WP in every
   run (WP's provers do not match `&`'s operands, which Qed orders either way, against a
   bit fact) and is proved in Why3: the lemma digit of test/prove/bits.mlw, on a 64-bit
   word x, with the uint32_t cast read as the value mod 2^32. In this file `axiom` is kept
   for such facts: run.sh fails if one has no lemma of its name in bits.mlw. */
#if defined(WHERE_LEMMAS)
#define WHERE_LEMMA lemma
#else
#define WHERE_LEMMA axiom
#endif
/*@ axiomatic Where {
#if !defined(WHERE_ONLY) || defined(L_MSB)
    WHERE_LEMMA msb_lt: \forall integer x, k; 0 <= k && 0 < x < pow2(k) ==> msb(x) < k;
    WHERE_LEMMA msb_lt64: \forall integer x; 0 < x < TWO64 ==> msb(x) < 64;
#endif
#if !defined(WHERE_ONLY) || defined(L_ARITH)
    WHERE_LEMMA div_lt: \forall integer a, b, n; 0 <= a < n * b && 0 < b ==> a / b < n;
    WHERE_LEMMA mul_le: \forall integer a, b, w; 0 <= w && a <= b ==> a * w <= b * w;
#endif
#if !defined(WHERE_ONLY) || defined(L_XOR)
    WHERE_LEMMA xor_u64: \forall integer x, y; 0 <= x < TWO64 && 0 <= y < TWO64 ==>
      msb((uint64_t)(x ^ y)) == msb(x ^ y) && (x != y ==> (uint64_t)(x ^ y) != 0);
#endif
#if !defined(WHERE_ONLY) || defined(L_DIGIT)
    // a tick's digit at level b / bits: what the slot computation reads
    axiom digit{L}: \forall hwtimer__geometry *g, integer x, b;
      geo_slots(g) && geo_shift(g) && 0 <= x < TWO64 && 0 <= b < 64 ==>
      (((uint32_t)(x >> g->level_shift[b])) & g->mask) == (x / pow2((b / g->bits) * g->bits)) % g->width;
#endif
#if !defined(WHERE_ONLY) || defined(L_LEVEL)
    // two ticks below 2^(levels * bits) differ first in one of the wheel's levels
    WHERE_LEMMA level{L}: \forall hwtimer__geometry *g, integer x, y;
      geo_slots(g) && 0 <= x < TWO64 && 0 <= y < TWO64 && x < pow2(g->levels * g->bits) &&
      y < pow2(g->levels * g->bits) && x != y ==> msb((uint64_t)(x ^ y)) / g->bits < g->levels;
#endif
#if !defined(WHERE_ONLY) || defined(L_ROOM)
    // a level's slots: after the two lists, before the last level's end
    WHERE_LEMMA room{L}: \forall hwtimer__geometry *g, integer b;
      geo_slots(g) && geo_where(g) && 0 <= b < 64 && b / g->bits < g->levels ==>
      2 <= g->level_where[b] && g->level_where[b] + g->width <= 2 + g->levels * g->width;
#endif
    }
*/

/* HWTIMER_ASSERT: proved to hold where it is reached (then assumed, as it aborts). */
/*@ requires c != 0;
    assigns \nothing;
    ensures c != 0; */
void proof_assert(int c);
#define HWTIMER_ASSERT(x) proof_assert(x)

/* The compiler's builtin, as GCC and Clang document it (assumed). */
/*@ requires x != 0;
    assigns \nothing;
    ensures \result == 63 - msb(x); */
int __builtin_clzll(unsigned long long x);

/*@ requires x != 0;
    assigns \nothing;
    ensures \result == msb(x); */
#if !defined(WHERE_LEMMAS)
//@extract static unsigned hwtimer__msb64(uint64_t x) { return 63u - (unsigned)__builtin_clzll(x); }
#else
static unsigned hwtimer__msb64(uint64_t x);
#endif

/* A tick after elapsed (and at most max_tick, as every due tick and leeway grid point
   is): its level l = (the highest bit in which it differs from elapsed) / bits is one of
   the wheel's, and its `where` is level l's slot of the tick's digit there. */
/*@ requires \valid_read(w) && geo_ok(&w->geo);
    requires w->elapsed < tick <= w->geo.max_tick;
    assigns \nothing;
    ensures level: msb(tick ^ w->elapsed) / w->geo.bits < w->geo.levels;
    ensures where: \let l = msb(tick ^ w->elapsed) / w->geo.bits;
      \result == 2 + l * w->geo.width + (tick / pow2(l * w->geo.bits)) % w->geo.width;
    ensures range: 2 <= \result < 2 + w->geo.levels * w->geo.width; */
#if !defined(WHERE_LEMMAS)
//@extract HWTIMER__ALWAYS_INLINE uint32_t hwtimer__wheel_where(const hwtimer__wheel *w, uint64_t tick) {
#else
static uint32_t hwtimer__wheel_where(const hwtimer__wheel *w, uint64_t tick);
#endif

/* ---- Where a node runs: the leeway grid and a slot's first tick (PROVE_GRID, with
   PROVE_WHERE's definitions) ---- */
#if defined(PROVE_GRID)

/* A memo's mask as hwtimer__set_leeway_memo makes it: 2^k - 1 for a grid of 2^k ticks
   (what hwtimer__leeway_grid requires of the memo). */
/*@ predicate grid_mask(integer m, integer k) = 0 <= k < 64 && m == pow2(k) - 1; */

/* The first tick of slot `slot` at digit position `shift` (level * bits for the wheel's
   levels) in elapsed's rotation: elapsed's digits above, the slot, zeros below. */
/*@ logic integer slot_first(integer elapsed, integer shift, integer bits, integer slot) =
      (elapsed / pow2(shift + bits)) * pow2(shift + bits) + slot * pow2(shift); */

/* Lemmas of the grid's and the slots' arithmetic: proved by WP (WHERE_LEMMAS, run.sh's
   runs lemma_grid, lemma_divp, lemma_round, lemma_levels and lemma_collected, each group
   with the facts its proofs need), axioms in the runs that use them. Stated so that the
   provers find their instances: they choose their own patterns, from terms without + or
   *, so every quantified variable stands alone in some term (a sum inside pow2 is a
   variable c == a + b), and products are written as the goals write them. */
/*@ axiomatic Grid {
#if defined(L_FLOOR)
    // rounding down to a multiple of p: by less than p, onto a multiple
    WHERE_LEMMA floor_mul: \forall integer x, p; 0 <= x && 0 < p ==>
      0 <= (x / p) * p && x - p < (x / p) * p <= x && ((x / p) * p) % p == 0;
#endif
#if defined(L_SCALE)
    // a mask of at most a / b ticks of b ns spans at most a ns
    WHERE_LEMMA scale: \forall integer k, a, b; 0 <= a && 0 < b && 0 <= k && pow2(k) <= a / b + 1 ==>
      (pow2(k) - 1) * b <= a;
#endif
#if defined(L_TIME)
    // a tick e due at D (due_tick: start + e * t >= D) moved to r, e <= r <= e + m, by a
    // mask m of at most the leeway l in time: r's boundary is never before D, and at
    // most l after e's
    WHERE_LEMMA leeway_time: \forall integer start, t, d, e, r, m, l;
      0 < t && 0 <= e <= r <= e + m && 0 <= m && m * t <= l && start + e * t >= d ==>
      start + r * t >= d && r * t <= e * t + l;
#endif
#if defined(L_DIGIT_BELOW)
    // a digit d < 2^b at position s: below 2^(s + b) (c for s + b, as in pow2_add)
    WHERE_LEMMA digit_below: \forall integer s, b, c, d; 0 <= s && 0 <= b && c == s + b && 0 <= d < pow2(b) ==>
      0 <= d * pow2(s) < pow2(b) * pow2(s) && pow2(b) * pow2(s) == pow2(c);
#endif
#if defined(L_DIV_POW2)
    // x >> a >> b == x >> (a + b) for 64-bit x, in divisions (from shr and WP's own
    // lsr_add below 64, from the bounds at and past it)
    WHERE_LEMMA div_le: \forall integer x, p; 0 <= x && 0 < p ==> 0 <= x / p <= x;
    WHERE_LEMMA div_pow2_low: \forall integer x, a, b, c; 0 <= x < TWO64 && 0 <= a && 0 <= b && c == a + b &&
      c < 64 ==> (x / pow2(a)) / pow2(b) == x / pow2(c);
    WHERE_LEMMA div_small: \forall integer x, p; 0 <= x < p ==> x / p == 0;
    WHERE_LEMMA div_below: \forall integer x, p, q; 0 <= x < p * q && 0 < p ==> x / p < q;
    WHERE_LEMMA pow2_past: \forall integer a, b, c; 0 <= a && 0 <= b && c == a + b && c >= 64 ==>
      TWO64 <= pow2(c) == pow2(a) * pow2(b);
    WHERE_LEMMA div_pow2_high: \forall integer x, a, b, c; 0 <= x < TWO64 && 0 <= a && 0 <= b && c == a + b &&
      c >= 64 ==> x / pow2(c) == 0 && x / pow2(a) < pow2(b) && (x / pow2(a)) / pow2(b) == 0;
    WHERE_LEMMA div_pow2: \forall integer x, a, b, c; 0 <= x < TWO64 && 0 <= a && 0 <= b && c == a + b ==>
      (x / pow2(a)) / pow2(b) == x / pow2(c);
#endif
#if defined(L_ROUND_DIGIT)
    // x's digits above position up, then its digit at sh (up = sh + bits), then zeros:
    // x rounded down to a multiple of 2^sh
    WHERE_LEMMA mod_split: \forall integer a, w, p, u; 0 <= a && 0 < w && 0 < p && u == p * w ==>
      (a / w) * u + (a % w) * p == a * p;
    WHERE_LEMMA round_digit: \forall integer x, sh, bits, up; 0 <= x < TWO64 && 0 <= sh && 0 <= bits &&
      up == sh + bits ==> x / pow2(up) == (x / pow2(sh)) / pow2(bits) &&
      (x / pow2(up)) * pow2(up) + ((x / pow2(sh)) % pow2(bits)) * pow2(sh) == (x / pow2(sh)) * pow2(sh);
#endif
#if defined(L_FLOOR_LT)
    // y's multiple of p lies after x if y / p does after x / p
    WHERE_LEMMA floor_lt: \forall integer x, y, p; 0 <= x && 0 <= y && 0 < p && x / p < y / p ==>
      x < (y / p) * p;
#endif
#if defined(L_COLLECTED)
    // (^ only in lemmas that hold for either order of its operands: Qed orders them its
    // own way, and a lemma on t ^ e may then read to the provers as one on e ^ t)
    WHERE_LEMMA level_bounds: \forall integer b, bits; 0 <= b && 1 <= bits ==>
      0 <= (b / bits) * bits <= b < (b / bits) * bits + bits;
    WHERE_LEMMA floor_same: \forall integer x, y, p; 0 < p && x / p == y / p ==> (x / p) * p == (y / p) * p;
    // slot_first's definition, as Qed writes its terms
    WHERE_LEMMA slot_first_def: \forall integer e, sh, bits, s;
      slot_first(e, sh, bits, s) == (e / pow2(sh + bits)) * pow2(sh + bits) + s * pow2(sh);
    // The first tick of the slot of t's digit at sh, in the rotation of an e that agrees
    // with t above the level: t rounded down to a multiple of 2^sh
    WHERE_LEMMA slot_first_tick: \forall integer e, t, sh, bits; 0 <= e < TWO64 && 0 <= t < TWO64 &&
      0 <= sh && 1 <= bits && e / pow2(sh + bits) == t / pow2(sh + bits) ==>
      slot_first(e, sh, bits, (t / pow2(sh)) % pow2(bits)) == (t / pow2(sh)) * pow2(sh);
    // The same for a t > e that agrees with e above the level and is greater from the
    // level's digit up: after e, at or before t, less than 2^sh before it
    WHERE_LEMMA collected_at: \forall integer e, t, sh, bits; 0 <= e < t < TWO64 && 0 <= sh && 1 <= bits &&
      e / pow2(sh + bits) == t / pow2(sh + bits) && e / pow2(sh) < t / pow2(sh) ==>
      \let start = slot_first(e, sh, bits, (t / pow2(sh)) % pow2(bits));
      e < start <= t && t - start < pow2(sh) && (sh == 0 ==> start == t);
    // xor_shr at the level of msb(x ^ y): the two agree above the level, and the greater
    // is greater from the level's digit up (either order, as xor_shr)
    WHERE_LEMMA level_digits: \forall integer x, y, bits; 0 <= x < TWO64 && 0 <= y < TWO64 && x != y &&
      1 <= bits ==>
      \let sh = (msb(x ^ y) / bits) * bits;
      0 <= msb(x ^ y) && x / pow2(sh + bits) == y / pow2(sh + bits) &&
      (y < x ==> y / pow2(sh) < x / pow2(sh)) && (x < y ==> x / pow2(sh) < y / pow2(sh));
    // Collected at or before its tick: wheel_where files t > e (elapsed) in level
    // l = msb(t ^ e) / bits, in the slot of t's digit there. The slot's first tick lies
    // after elapsed (the slot is not one a pass has emptied), at or before t (the pass that
    // empties it moves elapsed to it, never past t), and less than 2^(l * bits) before t,
    // so that filed again from there the node goes to a lower level, or runs (t is the
    // slot's first tick, always so on level 0). As start <= t <= max_tick, it is also
    // hwtimer__slot_start's precondition fits for that slot.
    WHERE_LEMMA collected: \forall integer e, t, bits; 0 <= e < t < TWO64 && 1 <= bits ==>
      \let sh = (msb(t ^ e) / bits) * bits;
      \let start = slot_first(e, sh, bits, (t / pow2(sh)) % pow2(bits));
      e < start <= t && t - start < pow2(sh) && (sh == 0 ==> start == t);
#endif
    }
*/

/* The node: only passed on to the functions below, never read here. */
typedef struct hwtimer_timeout hwtimer_timeout;

/* A node's leeway in ns (hwtimer__leeway reads it from the node). */
/*@ axiomatic Leeway {
    logic integer leeway_ns{L}(hwtimer_timeout *to);
    }
*/

/* Declared, not proved: hwtimer__leeway multiplies the node's digits by 10 exponent times,
   and what bounds that is an invariant of the node, not of the function:
   hwtimer_timeout_set_leeway stores digits at most 65535, with an exponent 0, or else a
   multiple of 10 at most the leeway it was given, so below UMAX (which ends in 5).
   ASSUMED: its result is below UMAX. hwtimer__leeway_key reads the node's word with
   memcpy: only that it writes nothing is used. */
/*@ assigns \nothing;
    ensures \result == leeway_ns(to) && \result < UMAX; */
static uint64_t hwtimer__leeway(const hwtimer_timeout *to);
/*@ assigns \nothing; */
static uint32_t hwtimer__leeway_key(const hwtimer_timeout *to);

/* The mask: with n = floor(leeway / tick_ns), 2^k - 1 for the largest 2^k <= n + 1, so
   the grid moves a tick by at most n ticks, at most the leeway in time. */
/*@ requires \valid(w) && tick_ok(&w->geo);
    assigns w->memo;
    ensures memo_mask: w->memo.mask == pow2(msb(leeway_ns{Pre}(to) / w->geo.tick_ns + 1)) - 1;
    ensures memo_grid: grid_mask(w->memo.mask, msb(leeway_ns{Pre}(to) / w->geo.tick_ns + 1));
    ensures memo_ticks: w->memo.mask <= leeway_ns{Pre}(to) / w->geo.tick_ns;
    ensures memo_within: w->memo.mask * w->geo.tick_ns <= leeway_ns{Pre}(to);
    ensures memo_largest: leeway_ns{Pre}(to) / w->geo.tick_ns < 2 * w->memo.mask + 2; */
//@extract static HWTIMER__NOINLINE void hwtimer__set_leeway_memo(hwtimer__wheel *w,

/* e moved up onto the grid of 2^k ticks, by at most the mask, or max_tick where that
   point wraps or lies past it. */
/*@ requires \valid_read(w) && e <= w->geo.max_tick;
    requires \exists integer k; grid_mask(w->memo.mask, k);
    assigns \nothing;
    ensures grid_after: e <= \result;
    ensures grid_within: \result <= e + w->memo.mask;
    ensures grid_max: \result <= w->geo.max_tick;
    ensures grid_point: \forall integer k; grid_mask(w->memo.mask, k) ==>
      \result == w->geo.max_tick || \result % pow2(k) == 0; */
//@extract HWTIMER__ALWAYS_INLINE uint64_t hwtimer__leeway_grid(const hwtimer__wheel *w, uint64_t e) {

/* Any digit position below 64 (the wheel's are level * bits, and (levels - 1) * bits <=
   msb(max_tick) < 64: hwtimer__geometry_init), any slot of the level, as long as the start
   is a tick (the lemma collected shows it is for the slot wheel_where files a tick in).
   On the top level, where shift + bits >= 64, the rotation spans every tick: the start is
   the slot's digit alone. */
/*@ requires \valid_read(w) && geo_slots(&w->geo);
    requires shift < 64 && slot < w->geo.width;
    requires fits: slot_first(w->elapsed, shift, w->geo.bits, slot) <= UMAX;
    assigns \nothing;
    ensures start: shift + w->geo.bits < 64 ==> \result == slot_first(w->elapsed, shift, w->geo.bits, slot);
    ensures top: shift + w->geo.bits >= 64 ==>
      \result == slot * pow2(shift) == slot_first(w->elapsed, shift, w->geo.bits, slot); */
//@extract HWTIMER__ALWAYS_INLINE uint64_t hwtimer__slot_start(const hwtimer__wheel *w, unsigned shift,
#endif /* PROVE_GRID */
#endif /* PROVE_WHERE */
