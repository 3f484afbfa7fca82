/* report.c - the run's report: its opening lines (the machine, the libraries, the sizes),
   and every measured number, kept and written out three ways: a markdown table per
   scenario (peers side by side, with the ratio to the baseline), a CSV file, and an SVG
   chart of ns/op against N for scenarios 1 and 2. */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef BENCH_HAVE_LIBUV
#include <uv.h>
#endif
#ifdef BENCH_HAVE_LIBEVENT
#include <event2/event.h>
#endif

typedef struct result {
    int scenario;
    char peer[24];
    uint64_t n; /* 0: the row has no N */
    char metric[48];
    char unit[16];
    double value;
} result;

typedef struct peer_name {
    char key[24];
    char title[32];
} peer_name;

typedef struct note {
    int scenario;
    char text[640];
} note;

#define MAX_PEERS 16
static result *results;
static size_t nresults, results_cap;
static peer_name peers[MAX_PEERS];
static size_t npeers;
static note *notes;
static size_t nnotes, notes_cap;

static void copy_string(char *dst, size_t size, const char *src) {
    snprintf(dst, size, "%s", src);
}

static void *grow(void *array, size_t *cap, size_t elem) {
    size_t new_cap = *cap ? *cap * 2 : 64;
    void *p = realloc(array, new_cap * elem);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    *cap = new_cap;
    return p;
}

void bench_declare_peer(const char *key, const char *title) {
    for (size_t i = 0; i < npeers; i++) {
        if (strcmp(peers[i].key, key) == 0) {
            return;
        }
    }
    if (npeers < MAX_PEERS) {
        copy_string(peers[npeers].key, sizeof peers[npeers].key, key);
        copy_string(peers[npeers].title, sizeof peers[npeers].title, title);
        npeers++;
    }
}

void bench_record(int scenario, const char *peer, uint64_t n, const char *metric, double value,
                  const char *unit) {
    if (nresults == results_cap) {
        results = (result *)grow(results, &results_cap, sizeof *results);
    }
    result *r = &results[nresults++];
    r->scenario = scenario;
    copy_string(r->peer, sizeof r->peer, peer);
    r->n = n;
    copy_string(r->metric, sizeof r->metric, metric);
    copy_string(r->unit, sizeof r->unit, unit);
    r->value = value;
}

static const result *find(int scenario, const char *peer, uint64_t n, const char *metric) {
    for (size_t i = 0; i < nresults; i++) {
        const result *r = &results[i];
        if (r->scenario == scenario && r->n == n && strcmp(r->peer, peer) == 0 &&
            strcmp(r->metric, metric) == 0) {
            return r;
        }
    }
    return NULL;
}

int bench_lookup(int scenario, const char *peer, uint64_t n, const char *metric, double *value) {
    const result *r = find(scenario, peer, n, metric);
    if (r) {
        *value = r->value;
    }
    return r != NULL;
}

void bench_note(int scenario, const char *fmt, ...) {
    va_list ap;
    if (nnotes == notes_cap) {
        notes = (note *)grow(notes, &notes_cap, sizeof *notes);
    }
    notes[nnotes].scenario = scenario;
    va_start(ap, fmt);
    vsnprintf(notes[nnotes].text, sizeof notes[nnotes].text, fmt, ap);
    va_end(ap);
    nnotes++;
}

/* ---- the opening lines ---- */

void bench_print_environment(const bench_options *o) {
    char line[256], cpu[256] = "unknown CPU";
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0 && strchr(line, ':')) {
            snprintf(cpu, sizeof cpu, "%s", strchr(line, ':') + 2);
            cpu[strcspn(cpu, "\n")] = '\0';
            break;
        }
    }
    if (f) {
        fclose(f);
    }
    printf("# hwtimer benchmarks\n\n");
    printf("%s, %ld CPUs online; compiler %s; 1 ms tick everywhere; seed %#llx.\n", cpu,
           sysconf(_SC_NPROCESSORS_ONLN), __VERSION__, (unsigned long long)BENCH_SEED);
#ifdef BENCH_HAVE_LIBUV
    printf("libuv %s. ", uv_version_string());
#else
    printf("libuv: not built (meson found no libuv), its column is skipped. ");
#endif
#ifdef BENCH_HAVE_LIBEVENT
    printf("libevent %s.\n", event_get_version());
#else
    printf("libevent: not built (meson found no libevent), its column is skipped.\n");
#endif
#ifdef BENCH_HAVE_TIMEOUT_C
    printf("timeout.c: %s, built from %s.\n", bench_timeout_version(), BENCH_TIMEOUT_SRC);
#else
    printf("timeout.c: skipped (point bench/run at a checkout: bench/run --timeout-src DIR, "
           "or meson -Dtimeout_src=DIR).\n");
#endif
    f = fopen("/proc/loadavg", "r");
    if (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        printf("Load average at start: %s (other work on the machine skews the numbers).\n",
               line);
    }
    if (f) {
        fclose(f);
    }
    printf("Scenarios 1-3: N = ");
    for (size_t i = 0; i < o->nsizes; i++) {
        printf("%s%llu", i ? ", " : "", (unsigned long long)o->sizes[i]);
    }
    printf("; best of 3 runs for N <= 10^6, one run above.\n");
}

/* ---- markdown ---- */

static void format_value(char *buf, size_t size, double v) {
    double a = fabs(v);
    if (a >= 1e9) {
        snprintf(buf, size, "%.2fG", v / 1e9);
    } else if (a >= 1e6) {
        snprintf(buf, size, "%.2fM", v / 1e6);
    } else if (a >= 100 || v == floor(v)) {
        snprintf(buf, size, "%.0f", v);
    } else if (a >= 10) {
        snprintf(buf, size, "%.1f", v);
    } else {
        snprintf(buf, size, "%.2f", v);
    }
}

static void format_n(char *buf, size_t size, uint64_t n) {
    double e = log10((double)n);
    if (n > 0 && fabs(e - floor(e + 0.5)) < 1e-9) {
        snprintf(buf, size, "10^%d", (int)floor(e + 0.5));
    } else {
        snprintf(buf, size, "%llu", (unsigned long long)n);
    }
}

static int scenario_has_peer(int scenario, const char *key) {
    for (size_t i = 0; i < nresults; i++) {
        if (results[i].scenario == scenario && strcmp(results[i].peer, key) == 0) {
            return 1;
        }
    }
    return 0;
}

/* Moves rows with the same N together (smaller N first), keeping their order otherwise:
   a scenario may record all its N for one metric before the next metric. */
static void group_rows_by_n(const result **rows, size_t count) {
    for (size_t i = 1; i < count; i++) {
        const result *r = rows[i];
        size_t j = i;
        for (; j > 0 && rows[j - 1]->n > r->n; j--) {
            rows[j] = rows[j - 1];
        }
        rows[j] = r;
    }
}

/* The first result of each distinct (n, metric) row of a scenario: the rows of the first
   column in the order it recorded them, then any new ones of the next column, and so on;
   then grouped by N. */
static size_t scenario_rows(int scenario, const result **rows, size_t max) {
    size_t count = 0;
    for (size_t k = 0; k < nresults * npeers && count < max; k++) {
        const result *r = &results[k % nresults];
        int seen = 0;
        if (r->scenario != scenario || strcmp(r->peer, peers[k / nresults].key) != 0) {
            continue;
        }
        for (size_t j = 0; j < count && !seen; j++) {
            seen = rows[j]->n == r->n && strcmp(rows[j]->metric, r->metric) == 0;
        }
        if (!seen) {
            rows[count++] = r;
        }
    }
    group_rows_by_n(rows, count);
    return count;
}

static void print_cell(int scenario, const result *row, const char *peer, const char *baseline) {
    const result *r = find(scenario, peer, row->n, row->metric);
    const result *base = find(scenario, baseline, row->n, row->metric);
    char value[32];
    if (!r) {
        printf(" n/a |");
        return;
    }
    format_value(value, sizeof value, r->value);
    if (base && base != r && base->value != 0 && r->value != 0) {
        double ratio = r->value / base->value;
        printf(" %s (%.*f×) |", value, ratio < 10 ? 2 : ratio < 100 ? 1 : 0, ratio);
    } else {
        printf(" %s |", value);
    }
}

void bench_print_table(int scenario, const char *heading, const char *baseline) {
    const result *rows[256];
    size_t nrows = scenario_rows(scenario, rows, sizeof rows / sizeof rows[0]);
    int with_n = 0;
    printf("\n### %d. %s\n\n", scenario, heading);
    for (size_t i = 0; i < nrows; i++) {
        with_n |= rows[i]->n != 0;
    }
    if (nrows > 0) {
        const char *base_title = baseline;
        printf("|%s metric |", with_n ? " N |" : "");
        for (size_t p = 0; p < npeers; p++) {
            if (scenario_has_peer(scenario, peers[p].key)) {
                printf(" %s |", peers[p].title);
            }
            if (strcmp(peers[p].key, baseline) == 0) {
                base_title = peers[p].title;
            }
        }
        printf("\n|%s---|", with_n ? "---:|" : "");
        for (size_t p = 0; p < npeers; p++) {
            if (scenario_has_peer(scenario, peers[p].key)) {
                printf("---:|");
            }
        }
        printf("\n");
        for (size_t i = 0; i < nrows; i++) {
            char n[32];
            format_n(n, sizeof n, rows[i]->n);
            if (with_n) {
                printf("| %s ", n);
            }
            printf("| %s (%s) |", rows[i]->metric, rows[i]->unit);
            for (size_t p = 0; p < npeers; p++) {
                if (scenario_has_peer(scenario, peers[p].key)) {
                    print_cell(scenario, rows[i], peers[p].key, baseline);
                }
            }
            printf("\n");
        }
        printf("\n(×: value divided by %s's in the same row)\n", base_title);
    }
    for (size_t i = 0; i < nnotes; i++) {
        if (notes[i].scenario == scenario) {
            printf("- %s\n", notes[i].text);
        }
    }
    fflush(stdout);
}

/* ---- CSV ---- */

int bench_write_csv(const char *path) {
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return -1;
    }
    fprintf(f, "scenario,peer,n,metric,value,unit\n");
    for (size_t i = 0; i < nresults; i++) {
        const result *r = &results[i];
        const char *quote = strchr(r->metric, ',') ? "\"" : ""; /* metrics hold no '"' */
        fprintf(f, "%d,%s,%llu,%s%s%s,%.6g,%s\n", r->scenario, r->peer,
                (unsigned long long)r->n, quote, r->metric, quote, r->value, r->unit);
    }
    return fclose(f) == 0 ? 0 : -1;
}

/* ---- SVG: log-log ns/op against N, one panel per (scenario, metric) ---- */

typedef struct panel {
    int scenario;
    const char *metric;
    const char *title;
} panel;

static const panel chart_panels[] = {
    {1, "schedule", "1. schedule (RPC timeouts)"},
    {1, "cancel", "1. cancel (RPC timeouts)"},
    {2, "schedule+expire", "2. schedule + expire"},
};
/* one colour per declared peer (main.c declares ten), so no two lines share one */
static const char *const palette[] = {"#d62728", "#ff7f0e", "#bcbd22", "#1f77b4", "#2ca02c",
                                      "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f"};

#define PANEL_W 400.0
#define PANEL_H 300.0
#define MARGIN_L 60.0
#define MARGIN_T 40.0
#define PLOT_W (PANEL_W - MARGIN_L - 20.0)
#define PLOT_H (PANEL_H - MARGIN_T - 50.0)

typedef struct axes {
    double x0, x1, y0, y1; /* decades (log10) */
} axes;

static int panel_point(const result *r, const panel *pn) {
    return r->scenario == pn->scenario && r->n > 0 && r->value > 0 &&
           strcmp(r->metric, pn->metric) == 0;
}

static axes panel_axes(const panel *pn) {
    axes a = {1e9, -1e9, 1e9, -1e9};
    for (size_t i = 0; i < nresults; i++) {
        if (panel_point(&results[i], pn)) {
            double x = log10((double)results[i].n), y = log10(results[i].value);
            a.x0 = fmin(a.x0, floor(x));
            a.x1 = fmax(a.x1, ceil(x));
            a.y0 = fmin(a.y0, floor(y));
            a.y1 = fmax(a.y1, ceil(y));
        }
    }
    if (a.x1 <= a.x0) {
        a.x1 = a.x0 + 1;
    }
    if (a.y1 <= a.y0) {
        a.y1 = a.y0 + 1;
    }
    return a;
}

static double px(const axes *a, double ox, double n) {
    return ox + MARGIN_L + (log10(n) - a->x0) / (a->x1 - a->x0) * PLOT_W;
}

static double py(const axes *a, double v) {
    return MARGIN_T + PLOT_H - (log10(v) - a->y0) / (a->y1 - a->y0) * PLOT_H;
}

static void svg_grid(FILE *f, const axes *a, double ox, const panel *pn) {
    fprintf(f, "<text x='%.0f' y='22' font-size='14' font-weight='bold'>%s</text>\n",
            ox + MARGIN_L, pn->title);
    for (double d = a->x0; d <= a->x1 + 1e-9; d += 1) {
        double x = px(a, ox, pow(10, d));
        fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#ddd'/>\n", x,
                MARGIN_T, x, MARGIN_T + PLOT_H);
        fprintf(f, "<text x='%.1f' y='%.1f' font-size='11' text-anchor='middle'>1e%.0f</text>\n",
                x, MARGIN_T + PLOT_H + 16, d);
    }
    for (double d = a->y0; d <= a->y1 + 1e-9; d += 1) {
        double y = py(a, pow(10, d));
        fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#ddd'/>\n",
                ox + MARGIN_L, y, ox + MARGIN_L + PLOT_W, y);
        fprintf(f, "<text x='%.1f' y='%.1f' font-size='11' text-anchor='end'>%g</text>\n",
                ox + MARGIN_L - 4, y + 4, pow(10, d));
    }
    fprintf(f, "<text x='%.1f' y='%.1f' font-size='11' text-anchor='middle'>N (timers)</text>\n",
            ox + MARGIN_L + PLOT_W / 2, MARGIN_T + PLOT_H + 32);
    fprintf(f, "<text x='%.1f' y='%.1f' font-size='11' text-anchor='middle' "
               "transform='rotate(-90 %.1f %.1f)'>ns/op</text>\n",
            ox + 14, MARGIN_T + PLOT_H / 2, ox + 14, MARGIN_T + PLOT_H / 2);
}

static void svg_series(FILE *f, const axes *a, double ox, const panel *pn, size_t p) {
    const char *color = palette[p % (sizeof palette / sizeof palette[0])];
    int points = 0;
    for (size_t i = 0; i < nresults; i++) {
        const result *r = &results[i];
        if (!panel_point(r, pn) || strcmp(r->peer, peers[p].key) != 0) {
            continue;
        }
        fprintf(f, "%s%.1f,%.1f", points ? " " : "<polyline fill='none' stroke-width='2' points='",
                px(a, ox, (double)r->n), py(a, r->value));
        points++;
    }
    if (!points) {
        return;
    }
    fprintf(f, "' stroke='%s'/>\n", color);
    for (size_t i = 0; i < nresults; i++) {
        const result *r = &results[i];
        if (panel_point(r, pn) && strcmp(r->peer, peers[p].key) == 0) {
            fprintf(f, "<circle cx='%.1f' cy='%.1f' r='3' fill='%s'/>\n", px(a, ox, (double)r->n),
                    py(a, r->value), color);
        }
    }
}

static void svg_legend(FILE *f, double y) {
    double x = MARGIN_L;
    for (size_t p = 0; p < npeers; p++) {
        int shown = 0;
        for (size_t k = 0; k < sizeof chart_panels / sizeof chart_panels[0]; k++) {
            shown |= scenario_has_peer(chart_panels[k].scenario, peers[p].key);
        }
        if (!shown) {
            continue;
        }
        fprintf(f, "<rect x='%.0f' y='%.0f' width='14' height='4' fill='%s'/>\n", x, y - 4,
                palette[p % (sizeof palette / sizeof palette[0])]);
        fprintf(f, "<text x='%.0f' y='%.0f' font-size='12'>%s</text>\n", x + 18, y, peers[p].title);
        x += 30 + 7.0 * (double)strlen(peers[p].title);
    }
}

int bench_write_svg(const char *path) {
    size_t npanels = sizeof chart_panels / sizeof chart_panels[0];
    double width = PANEL_W * (double)npanels, height = PANEL_H + 50;
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return -1;
    }
    fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%.0f' height='%.0f' "
               "font-family='sans-serif'>\n<rect width='100%%' height='100%%' fill='white'/>\n",
            width, height);
    for (size_t k = 0; k < npanels; k++) {
        double ox = PANEL_W * (double)k;
        axes a = panel_axes(&chart_panels[k]);
        svg_grid(f, &a, ox, &chart_panels[k]);
        for (size_t p = 0; p < npeers; p++) {
            svg_series(f, &a, ox, &chart_panels[k], p);
        }
    }
    svg_legend(f, PANEL_H + 12);
    fprintf(f, "<text x='%.0f' y='%.0f' font-size='11' fill='#555'>ns per operation, log-log "
               "axes, lower is better. Netty: the caller's cost only (newTimeout/cancel "
               "enqueue; its worker thread does the bucket work).</text>\n",
            MARGIN_L, PANEL_H + 38);
    fprintf(f, "</svg>\n");
    return fclose(f) == 0 ? 0 : -1;
}
