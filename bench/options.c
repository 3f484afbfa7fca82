/* options.c - hwtimer_bench's command line: the options, their defaults and sizes, and
   the scenarios chosen by name or number. */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const uint64_t default_sizes[] = {1000, 10000, 100000, 1000000, 10000000};
static const uint64_t keepalive_sizes[] = {100000, 1000000};

/* The options. bench/run --help prints this function's strings, read from this file, then
   the scenario table's lines from main.c, as usage_scenarios prints them: keep both to
   string literals (meson's bench_run_help test compares the two). */
static void usage(FILE *f) {
    fprintf(f, "usage: hwtimer_bench [--full] [--smoke] [--no-java] [--scenarios a,b,...] "
               "[--peers a,b] [--sizes n,...] [--out FILE.csv]\n"
               "  --full       add N = 10^7 to scenarios 1-3 and 10x the producer operations\n"
               "  --smoke      tiny sizes: checks callbacks, not speed (meson test)\n"
               "  --no-java    skip Netty's HashedWheelTimer\n"
               "  --scenarios  run only these, by name or number, e.g. reschedule,keepalive "
               "or 3,10\n"
               "  --peers      only these columns, e.g. hwtimer,heap,timeout_c (CSV keys)\n"
               "  --sizes      N values of scenarios 1-3 and 10, e.g. 1e4,1e6 (default "
               "10^3-10^6; 10^5 and 10^6 connections for 10)\n"
               "  --out FILE   CSV path; the SVG chart goes next to it (.svg)\n"
               "The scenarios, all by default (number, name, what it measures):\n");
}

/* One line per scenario, in the table's order. */
static void usage_scenarios(FILE *f, const bench_scenario *scenarios, size_t count) {
    for (size_t i = 0; i < count; i++) {
        fprintf(f, "  %2d %-18s %s\n", scenarios[i].number, scenarios[i].name,
                scenarios[i].description);
    }
}

static void set_defaults(bench_options *o, int full, int smoke) {
    memset(o, 0, sizeof *o);
    o->sizes = default_sizes;
    o->nsizes = smoke ? 1 : full ? 5 : 4;
    o->long_timers = smoke ? 10000 : 1000000;
    o->long_span_ms = 3600000;
    o->producer_pairs = smoke ? 10000 : full ? 20000000 : 2000000;
    o->accuracy_timers = smoke ? 1000 : 100000;
    o->accuracy_max_ms = smoke ? 100 : 1000;
    o->idle_ns = smoke ? 200 * BENCH_MS : 2000 * BENCH_MS;
    o->memory_timers = smoke ? 1000 : 1000000;
    o->leeway_timers = smoke ? 1000 : 10000;
    o->leeway_span_ms = smoke ? 1000 : 10000;
    o->leeway_cost_timers = smoke ? 1000 : 1000000;
    o->keepalive_sizes = smoke ? default_sizes : keepalive_sizes;
    o->nkeepalive = smoke ? 1 : 2;
    o->keepalive_warm_ms = smoke ? 2000 : BENCH_IDLE_MS;
    o->keepalive_span_ms = smoke ? 2000 : 2 * BENCH_IDLE_MS;
    o->java = !smoke;
    o->smoke = smoke;
}

/* Whether a comma-separated list holds item (len bytes). */
static int list_holds(const char *list, const char *item, size_t len) {
    for (const char *c = list; *c;) {
        size_t each = strcspn(c, ",");
        if (each == len && strncmp(c, item, len) == 0) {
            return 1;
        }
        c += each + (c[each] == ',');
    }
    return 0;
}

int bench_selected(const bench_options *o, const char *key) {
    return !o->peers || list_holds(o->peers, key, strlen(key));
}

/* Parses "1,expiry,10" into a mask of scenarios (bit k: scenario k); 0 and a message if
   an item is neither a scenario's name nor its number. */
static unsigned parse_scenarios(const char *list, const bench_scenario *scenarios,
                                size_t count) {
    unsigned mask = 0;
    if (!*list) {
        fprintf(stderr, "hwtimer_bench: --scenarios names none (--help lists them)\n");
    }
    for (const char *c = list; *c;) {
        size_t len = strcspn(c, ","), i;
        for (i = 0; i < count; i++) {
            char number[16];
            snprintf(number, sizeof number, "%d", scenarios[i].number);
            if ((strlen(scenarios[i].name) == len && strncmp(c, scenarios[i].name, len) == 0) ||
                (strlen(number) == len && strncmp(c, number, len) == 0)) {
                break;
            }
        }
        if (i == count) {
            fprintf(stderr, "hwtimer_bench: no scenario '%.*s' (--help lists them)\n", (int)len,
                    c);
            return 0;
        }
        mask |= 1u << scenarios[i].number;
        c += len + (c[len] == ',');
    }
    return mask;
}

/* Parses "1000,1e6" into sizes; returns how many. */
static size_t parse_sizes(const char *list, uint64_t *sizes, size_t max) {
    size_t count = 0;
    for (const char *c = list; *c && count < max;) {
        char *end;
        double v = strtod(c, &end);
        if (end == c || v < 1) {
            break;
        }
        sizes[count++] = (uint64_t)v;
        c = *end == ',' ? end + 1 : end;
    }
    return count;
}

int bench_parse_options(bench_options *o, int argc, char **argv,
                        const bench_scenario *scenarios, size_t count) {
    int full = 0, smoke = 0, no_java = 0;
    const char *chosen = NULL, *peers = NULL, *out = NULL, *sizes = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--full") == 0) {
            full = 1;
        } else if (strcmp(argv[i], "--smoke") == 0) {
            smoke = 1;
        } else if (strcmp(argv[i], "--no-java") == 0) {
            no_java = 1;
        } else if (strcmp(argv[i], "--scenarios") == 0 && i + 1 < argc) {
            chosen = argv[++i];
        } else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
            out = argv[++i];
        } else if (strcmp(argv[i], "--peers") == 0 && i + 1 < argc) {
            peers = argv[++i];
        } else if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc) {
            sizes = argv[++i];
        } else {
            int help = strcmp(argv[i], "--help") == 0;
            usage(help ? stdout : stderr);
            usage_scenarios(help ? stdout : stderr, scenarios, count);
            return help ? 0 : 2;
        }
    }
    set_defaults(o, full, smoke);
    o->peers = peers;
    o->java = o->java && !no_java && bench_selected(o, "netty");
    o->out = out ? out
                 : smoke ? BENCH_RESULTS_DIR "/smoke.csv" : BENCH_RESULTS_DIR "/latest.csv";
    for (size_t i = 0; i < count; i++) {
        o->scenarios |= 1u << scenarios[i].number;
    }
    if (chosen && !(o->scenarios = parse_scenarios(chosen, scenarios, count))) {
        return 2;
    }
    if (sizes) {
        size_t n = parse_sizes(sizes, o->given_sizes, BENCH_MAX_SIZES);
        if (n) {
            o->sizes = o->keepalive_sizes = o->given_sizes;
            o->nsizes = o->nkeepalive = n;
        }
    }
    return -1;
}
