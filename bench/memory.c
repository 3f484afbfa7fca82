/* memory.c - scenario 8, memory per pending timeout: every caller-driven peer with
   10^6 timeouts pending (scenario 1's delays): the bytes of a node, the bytes the timer
   holds beyond the nodes, per timeout, and their sum. */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"

int scenario_memory(const bench_options *o, const uint32_t *delay_ms) {
    size_t n = o->memory_timers;
    for (size_t k = 0; k < bench_ncaller_peers; k++) {
        const bench_peer *p = bench_caller_peers[k];
        if (!bench_selected(o, p->key)) {
            continue;
        }
        if (p == &bench_peer_hwtimer_locked || p == &bench_peer_hwtimer_worker) {
            continue; /* the same nodes; a mutex, condition variable and thread more */
        }
        void *ctx = p->create(n);
        p->schedule(ctx, delay_ms, n);
        size_t node = p->node_bytes(ctx), overhead = p->overhead_bytes(ctx, n);
        bench_record(SCENARIO_MEMORY, p->key, n, "node", (double)node, "bytes");
        bench_record(SCENARIO_MEMORY, p->key, n, "structure / N", (double)overhead / (double)n,
                     "bytes");
        bench_record(SCENARIO_MEMORY, p->key, n, "per pending timeout",
                     (double)node + (double)overhead / (double)n, "bytes");
        p->cancel(ctx, n);
        p->destroy(ctx);
    }
    bench_note(SCENARIO_MEMORY, "hwtimer+lock and hwtimer worker: the same node and levels, "
                                "plus a mutex, a condition variable and a thread handle.");
    bench_note(SCENARIO_MEMORY, "node: sizeof the per-timeout struct the user embeds or "
                                "allocates (libevent: event_get_struct_event_size()). "
                                "structure: what the timer holds beyond the nodes "
                                "(hwtimer_stats.bytes; the heap arrays of pointers; libuv's "
                                "uv_loop_t, its heap being intrusive; timeout.c's struct "
                                "timeouts, four wheels of 64 list heads).");
    bench_print_table(SCENARIO_MEMORY, "Memory per pending timeout (lower is better)",
                      BENCH_BASELINE);
    return 0;
}
