/* peer_netty.c - Netty's io.netty.util.HashedWheelTimer, through NettyBench.java.

   The JVM runs as a child process (java cannot share ours); it prints one line per
   number, "R,<scenario>,<n>,<metric>,<value>,<unit>", and notes as "N,<scenario>,<text>",
   which join the tables under the "netty" column. meson passes the java binary and the
   class path (the compiled NettyBench.class and Debian's netty jar); without them, or if
   the JVM fails, Netty is skipped with a printed line. */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Java runs the same scenarios at these sizes at most: past 10^6 the JVM heap, not the
   timer, would dominate, and the run would stop being quick. */
#define NETTY_MAX_N 1000000u

static void skip_netty(const char *why) {
    printf("Netty HashedWheelTimer: skipped (%s).\n", why);
    for (int s = SCENARIO_SCHEDULE_CANCEL; s <= SCENARIO_MEMORY; s++) { /* NettyBench.java's */
        bench_note(s, "Netty HWT: skipped (%s)", why);
    }
}

#if defined(BENCH_JAVA) && defined(BENCH_JAVA_CLASSPATH) && defined(BENCH_JAVA_CLASS)

static void parse_line(char *line) {
    line[strcspn(line, "\r\n")] = '\0';
    if (line[0] == 'R' && line[1] == ',') {
        int scenario = 0;
        unsigned long long n = 0;
        double value = 0;
        char metric[64], unit[32];
        if (sscanf(line + 2, "%d,%llu,%63[^,],%lf,%31[^\n]", &scenario, &n, metric, &value, unit) == 5) {
            bench_record(scenario, "netty", n, metric, value, unit);
            return;
        }
    } else if (line[0] == 'N' && line[1] == ',') {
        int scenario = atoi(line + 2);
        const char *text = strchr(line + 2, ',');
        if (text) {
            bench_note(scenario, "Netty HWT: %s", text + 1);
            return;
        }
    }
    fprintf(stderr, "  java: %s\n", line);
}

static size_t size_list(const bench_options *o, char *buf, size_t size) {
    size_t used = 0, count = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < o->nsizes && used < size; i++) {
        if (o->sizes[i] <= NETTY_MAX_N) {
            used += (size_t)snprintf(buf + used, size - used, "%s%llu", count ? "," : "",
                                     (unsigned long long)o->sizes[i]);
            count++;
        }
    }
    return count;
}

void bench_netty_run(const bench_options *o) {
    char sizes[256], cmd[8192], line[1024];
    if (!o->java) {
        skip_netty("--no-java");
        return;
    }
    if (access(BENCH_JAVA_CLASS, R_OK) != 0) {
        skip_netty(BENCH_JAVA_CLASS " was not built");
        return;
    }
    size_list(o, sizes, sizeof sizes);
    snprintf(cmd, sizeof cmd,
             "'%s' -Xms2g -Xmx2g -XX:+AlwaysPreTouch -cp '%s' NettyBench --sizes %s --pairs %zu --accuracy %zu "
             "--accuracy-max-ms %u --idle-ms %llu --memory %zu",
             BENCH_JAVA, BENCH_JAVA_CLASSPATH, sizes, o->producer_pairs, o->accuracy_timers,
             o->accuracy_max_ms, (unsigned long long)(o->idle_ns / BENCH_MS), o->memory_timers);
    fprintf(stderr, "  Netty (java, about 20 s): %s\n", cmd);
    fflush(stdout);
    FILE *f = popen(cmd, "r");
    if (!f) {
        skip_netty("could not start java");
        return;
    }
    uint64_t t0 = bench_wall_ns();
    while (fgets(line, sizeof line, f)) {
        parse_line(line);
    }
    int status = pclose(f);
    if (status != 0) {
        printf("Netty HashedWheelTimer: java exited with status %d; its numbers may be partial.\n",
               status);
    }
    printf("Netty HashedWheelTimer: %s (JVM run %.1f s, N capped at 10^6).\n", BENCH_JAVA_CLASSPATH,
           (double)(bench_wall_ns() - t0) / 1e9);
}

#else

void bench_netty_run(const bench_options *o) {
    (void)o;
    skip_netty("meson found no java/javac or no netty jar");
}

#endif

/* Netty 4.1's worker moves a new timeout into bucket (calculated & mask) with
   remainingRounds = (calculated - tick) / wheel, calculated = deadline / tickDuration;
   each tick it walks its bucket, decrementing remainingRounds or, at 0, expiring. All
   timeouts here are scheduled at tick 0 with delays in whole ticks, so each is visited
   delay / wheel + 1 times. */
uint64_t bench_netty_simulated_visits(const uint32_t *delay_ms, size_t n, uint32_t wheel) {
    uint64_t visits = 0;
    for (size_t i = 0; i < n; i++) {
        visits += delay_ms[i] / wheel + 1;
    }
    return visits;
}
