/* Opening a statistics file and recomputing the dashboard's views on it (target:
 * "opening a 200-case statistics file and every recompute of a view: <= 50 ms"), timed
 * through the engine API in one process, so the figures exclude process start-up.
 * bench/seg_bench.sh runs it on the 200-case file and puts the lines in its table.
 *
 *   bench_segstats [-r REPEATS] STATS
 *
 * Each case is run REPEATS times (default 15); one line per case, tab-separated:
 *
 *   case <TAB> best wall s <TAB> median wall s <TAB> best CPU s <TAB> what
 *
 * CPU is the process's CPU time (CLOCK_PROCESS_CPUTIME_ID: every thread), which a loaded machine
 * moves less than the wall clock. The view cases are what src/tui/model.c submits when a
 * setting changes, as cs_measure requests (the jobs in src/engine/jobs call cs_measure the same
 * way): the metrics job of the reliability view, the cases view, the classes view's K class
 * lenses, and the variance view's two curves at the dashboard's 20 repeats. A case that fails
 * prints NA and the message; the exit status is 0 unless the arguments are wrong. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "calscope/resample.h"
#include "calscope/dataset.h"
#include "calscope/error.h"
#include "calscope/load.h"
#include "calscope/measure.h"
#include "calscope/metrics.h"
#include "calscope/segmeasure.h"
#include "calscope/segstats.h"

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct ctx {
    const char *path;
    cs_dataset *d;        /* opened once for the view cases */
    cs_error err;
} ctx;

/* One measurement as a dashboard job makes it. Returns 0, or -1 with c->err set. */
static int measure(ctx *c, const cs_settings *s, const cs_measure_request *q)
{
    cs_run run = { .threads = 2, .cancel = NULL, .progress_ppm = NULL };
    cs_measurement m;
    cs_status st = cs_measure(c->d, s, q, &run, &m, &c->err);
    cs_measurement_free(&m);
    return st == CS_OK ? 0 : -1;
}

static int case_read(ctx *c)
{
    cs_segstats *st = NULL;
    if (cs_segstats_read(c->path, &st, &c->err) != CS_OK) return -1;
    cs_segstats_free(st);
    return 0;
}

/* What `calscope report` does with the file: load it and measure the values with the per-case
 * metrics (src/cli/report/report.c request()). */
static int case_report(ctx *c)
{
    cs_load_options opt;
    cs_load_options_default(&opt);
    cs_dataset *d = cs_load_file(c->path, &opt, NULL, &c->err);
    if (!d) return -1;
    cs_dataset *keep = c->d;
    c->d = d;
    cs_settings s;
    cs_settings_default(&s);
    cs_measure_request q = { .parts = CS_MEASURE_CASES, .want = CS_WANT_ALL };
    int rc = measure(c, &s, &q);
    c->d = keep;
    cs_dataset_free(d);
    return rc;
}

/* The reliability view's metrics job (every metric and the RECE-G curve) under a lens and M. */
static int metrics_view(ctx *c, const char *lens, int bins)
{
    cs_settings s;
    cs_settings_default(&s);
    if (cs_settings_set_lens(&s, lens, &c->err) != CS_OK) return -1;
    s.bins = bins;
    cs_measure_request q = { .want = CS_WANT_ALL | CS_WANT_RECE_CURVE };
    return measure(c, &s, &q);
}
static int case_view_top1(ctx *c) { return metrics_view(c, "top1", 15); }
static int case_view_classwise(ctx *c) { return metrics_view(c, "classwise", 15); }
static int case_view_top1_300(ctx *c) { return metrics_view(c, "top1", 300); }

static int case_view_cases(ctx *c)
{
    cs_settings s;
    cs_settings_default(&s);
    cs_measure_request q = { .parts = CS_MEASURE_CASES };
    return measure(c, &s, &q);
}

/* The classes view: one metrics job per class lens (class "#j" = position j). */
static int case_view_classes(ctx *c)
{
    for (size_t j = 0; j < c->d->k; j++) {
        cs_settings s;
        cs_settings_default(&s);
        s.lens = CS_LENS_CLASS;
        snprintf(s.lens_arg, sizeof s.lens_arg, "#%zu", j);
        cs_measure_request q = { .want = CS_WANT_ACCURACY | CS_WANT_BINNED };
        if (measure(c, &s, &q)) return -1;
    }
    return 0;
}

/* The selection of half the cases, then the metrics job (a selection is recomputed like any
 * setting; a statistics file selects on `case`). */
static int case_view_select(ctx *c)
{
    cs_settings s;
    cs_settings_default(&s);
    size_t n = c->d->n_cases < 8 ? c->d->n_cases : 8;
    size_t len = (size_t)snprintf(s.select, sizeof s.select, "case in {");
    for (size_t i = 0; i < n && len < sizeof s.select; i++)
        len += (size_t)snprintf(s.select + len, sizeof s.select - len, "%s%s", i ? ", " : "",
                                c->d->case_names[i]);
    if (len < sizeof s.select) snprintf(s.select + len, sizeof s.select - len, "}");
    cs_measure_request q = { .want = CS_WANT_ALL | CS_WANT_RECE_CURVE };
    return measure(c, &s, &q);
}

/* The variance view's curves over cases at the dashboard's 20 repeats (model.c submits both
 * at once, as two jobs). */
static int curve_view(ctx *c, int bins)
{
    cs_settings s;
    cs_settings_default(&s);
    cs_measure_request q = { .parts = CS_MEASURE_CURVE };
    q.curve_kind = bins ? CS_CURVE_BINS : CS_CURVE_SIZE;
    if (bins) cs_curve_options_bins_default(&q.curve, 0);
    else cs_curve_options_size_default(&q.curve);
    if (bins) cs_segstats_bins_list(c->d->stats, &q.curve);
    q.curve.repeats = 20;
    return measure(c, &s, &q);
}
static int case_view_size(ctx *c) { return curve_view(c, 0); }
static int case_view_bins(ctx *c) { return curve_view(c, 1); }

/* `c` on the dashboard: the metrics job with 1000 bootstrap resamples of the cases. */
static int case_view_ci(ctx *c)
{
    cs_settings s;
    cs_settings_default(&s);
    cs_measure_request q = { .parts = CS_MEASURE_CI, .want = CS_WANT_ALL | CS_WANT_RECE_CURVE,
                             .ci_repeats = 1000, .ci_method = CS_CI_PERCENTILE };
    return measure(c, &s, &q);
}

typedef struct bcase {
    const char *key, *what;
    int (*run)(ctx *c);
} bcase;

static const bcase cases[] = {
    { "read", "cs_segstats_read alone", case_read },
    { "report", "load + values + per-case metrics, as calscope report", case_report },
    { "view_top1", "reliability view: every metric, top1, M = 15", case_view_top1 },
    { "view_classwise", "reliability view: every metric, classwise, M = 15", case_view_classwise },
    { "view_top1_300", "reliability view: every metric, top1, M = 300", case_view_top1_300 },
    { "view_cases", "cases view: per-case metrics and histograms, M = 15", case_view_cases },
    { "view_classes", "classes view: one class lens per class", case_view_classes },
    { "view_select", "a selection of 8 cases, every metric", case_view_select },
    { "view_size_curve", "variance view: size curve over cases, 20 repeats", case_view_size },
    { "view_bins_curve", "variance view: bins curve (M dividing F), 20 repeats", case_view_bins },
    { "view_ci1000", "every metric with --ci 1000 over cases (2 threads)", case_view_ci },
};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int repeats = 15, a = 1;
    if (a + 1 < argc && !strcmp(argv[a], "-r")) {
        repeats = atoi(argv[a + 1]);
        a += 2;
    }
    if (a != argc - 1 || repeats < 1 || repeats > 1000) {
        fprintf(stderr, "usage: bench_segstats [-r REPEATS] STATS\n");
        return 2;
    }
    ctx c = { .path = argv[a] };
    cs_error_clear(&c.err);
    cs_load_options opt;
    cs_load_options_default(&opt);
    c.d = cs_load_file(c.path, &opt, NULL, &c.err);
    if (!c.d || !c.d->stats) {
        printf("open\tNA\tNA\tNA\t%s\n", c.d ? "not a statistics file" : c.err.msg);
        cs_dataset_free(c.d);
        return 0;
    }
    double *wall = malloc((size_t)repeats * sizeof *wall), *cpu = malloc((size_t)repeats * sizeof *cpu);
    if (!wall || !cpu) return 1;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int r = 0;
        for (; r < repeats; r++) {
            double w0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
            if (cases[i].run(&c)) break;
            cpu[r] = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
            wall[r] = clock_s(CLOCK_MONOTONIC) - w0;
        }
        if (r < repeats) {
            printf("%s\tNA\tNA\tNA\t%s: %s\n", cases[i].key, cases[i].what, c.err.msg);
            cs_error_clear(&c.err);
            continue;
        }
        qsort(wall, (size_t)repeats, sizeof *wall, cmp_double);
        qsort(cpu, (size_t)repeats, sizeof *cpu, cmp_double);
        printf("%s\t%.6f\t%.6f\t%.6f\t%s\n", cases[i].key, wall[0], wall[repeats / 2], cpu[0],
               cases[i].what);
        fflush(stdout);
    }
    free(wall);
    free(cpu);
    cs_dataset_free(c.d);
    return 0;
}
