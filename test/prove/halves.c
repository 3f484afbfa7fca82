/* test/prove/run.sh's test of what the proof leaves out: that hwtimer.h's multiply-high
   in 32-bit halves (HWTIMER__MULHI_HALVES, the form the proof reads) equals the __int128
   product's high half that GCC and Clang builds use. The proof shows the halves to be
   the high half of a * b, and hwtimer__div_tick in that form to be n / tick_ns; this
   checks div_tick against n / tick_ns as well, a check of what the proof states: edge
   values, then 20 million random pairs (xorshift, fixed seed). And what the proof assumes
   of the compiler's __builtin_clzll (ticks.c: that hwtimer__msb64 is msb, the highest set
   bit): hwtimer__msb64 against a loop, for every power of two, its neighbours and the
   random values. */
#define HWTIMER_IMPLEMENTATION
#define HWTIMER_NO_THREADS
#define HWTIMER__MULHI_HALVES 1
#include "../../hwtimer.h"
#include <stdio.h>

static uint64_t rng = 0x9E3779B97F4A7C15u;
static uint64_t next(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    /* a random width too: small values and ones near a power of two are where carries are */
    return rng >> (rng % 64 < 16 ? rng % 64 : 0);
}

static int check(uint64_t a, uint64_t b) {
    uint64_t hi = (uint64_t)((unsigned __int128)a * b >> 64), t = b ? b : 1, n = a;
    hwtimer__geometry g;
    if (hwtimer__mulhi64(a, b) != hi) {
        printf("FAIL: hwtimer__mulhi64(%llu, %llu) != %llu\n", (unsigned long long)a,
               (unsigned long long)b, (unsigned long long)hi);
        return 1;
    }
    g.tick_ns = t;
    g.tick_inv = UINT64_MAX / t;
    if (hwtimer__div_tick(&g, n) != n / t) {
        printf("FAIL: hwtimer__div_tick(%llu) with tick %llu != %llu\n", (unsigned long long)n,
               (unsigned long long)t, (unsigned long long)(n / t));
        return 1;
    }
    return 0;
}

/* The highest set bit by halving, as bits.mlw defines msb. */
static unsigned msb_loop(uint64_t x) {
    unsigned n = 0;
    while (x >>= 1) n++;
    return n;
}

static int check_msb(uint64_t x) {
    if (x == 0 || hwtimer__msb64(x) == msb_loop(x)) return 0;
    printf("FAIL: hwtimer__msb64(%llu) = %u, the highest set bit is %u\n", (unsigned long long)x,
           hwtimer__msb64(x), msb_loop(x));
    return 1;
}

int main(void) {
    static const uint64_t edge[] = {0, 1, 2, 3, 0xFFFFFFFFu, 0x100000000u, 0x100000001u,
                                    0x7FFFFFFFFFFFFFFFu, 0x8000000000000000u, UINT64_MAX - 1,
                                    UINT64_MAX, 1000000, 100000000, 999999999, 1000000007};
    size_t i, j, n = sizeof edge / sizeof edge[0];
    long k;
    for (i = 0; i < n; i++)
        for (j = 0; j < n; j++)
            if (check(edge[i], edge[j]) || check(edge[i] - (edge[i] > 0), edge[j])) return 1;
    for (k = 0; k < 64; k++) {
        uint64_t p = (uint64_t)1 << k;
        if (check_msb(p) || check_msb(p - 1) || check_msb(p + 1) || check_msb(p | (p - 1)))
            return 1;
    }
    for (k = 0; k < 20000000; k++) {
        uint64_t a = next(), b = next();
        if (check(a, b) || check_msb(a) || check_msb(b)) return 1;
    }
    printf("halves: hwtimer__mulhi64 = the __int128 product's high half, hwtimer__div_tick = "
           "n / tick_ns: %zu edge pairs and 20000000 random ones; hwtimer__msb64 = the "
           "highest set bit: 256 values at powers of two and 40000000 random ones\n", n * n * 2);
    return 0;
}
