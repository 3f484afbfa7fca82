/* util.c - clocks, sleeping, the seeded random delays, checked allocation. */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t read_clock(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t bench_wall_ns(void) {
    return read_clock(CLOCK_MONOTONIC);
}

uint64_t bench_cpu_ns(void) {
    return read_clock(CLOCK_PROCESS_CPUTIME_ID);
}

void bench_sleep_ns(uint64_t ns) {
    struct timespec ts;
    ts.tv_sec = (time_t)(ns / 1000000000u);
    ts.tv_nsec = (long)(ns % 1000000000u);
    while (nanosleep(&ts, &ts) != 0) {
        /* interrupted: sleep the rest */
    }
}

uint64_t bench_rand_next(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Writes to every page, so the kernel maps them now: a timed loop must not pay the page
   faults of fresh memory (an application's structs are long since touched). */
void bench_prefault(void *p, size_t bytes) {
    volatile unsigned char *c = (volatile unsigned char *)p;
    for (size_t i = 0; i < bytes; i += 4096) {
        c[i] = c[i];
    }
}

/* Zeroed and starting on a cache line (64 bytes), so that every peer's array of nodes
   lies the same way in every run: calloc's 16-byte alignment put the start anywhere in a
   line, as the heap's history had it, and with it how many lines each node spans. The
   zeroing writes every page, which maps them all now (as bench_prefault does). */
void *bench_xcalloc(size_t count, size_t size) {
    size_t bytes = count * size;
    void *p = NULL;
    if ((size && count > (size_t)-1 / size) || posix_memalign(&p, 64, bytes ? bytes : 1) != 0) {
        fprintf(stderr, "out of memory (%zu x %zu bytes)\n", count, size);
        exit(2);
    }
    return memset(p, 0, bytes);
}

uint32_t *bench_delays_ms(size_t n, uint32_t lo_ms, uint32_t hi_ms, uint64_t seed) {
    uint32_t *d = (uint32_t *)bench_xcalloc(n ? n : 1, sizeof *d);
    uint64_t span = (uint64_t)hi_ms - lo_ms + 1;
    for (size_t i = 0; i < n; i++) {
        d[i] = lo_ms + (uint32_t)(bench_rand_next(&seed) % span);
    }
    return d;
}

uint32_t *bench_permutation(size_t n, uint64_t seed) {
    uint32_t *order = (uint32_t *)bench_xcalloc(n ? n : 1, sizeof *order);
    for (size_t i = 0; i < n; i++) {
        order[i] = (uint32_t)i;
    }
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)(bench_rand_next(&seed) % i);
        uint32_t swap = order[i - 1];
        order[i - 1] = order[j];
        order[j] = swap;
    }
    return order;
}
