/* The backend's "screen first" figures (`make bench` runs it through bench/run.sh: cheap
 * jobs before long ones, and `q` never waiting for a job). A measurement, not a test: the exit
 * status is 0 whatever the timings.
 *
 *   bench_backend FILE.csv
 *
 * On a pool of the online core count, as the dashboard runs it:
 *   1. a metrics recompute (the Reliability view's job: every metric, the RECE-G and smooth
 *      curves) on an idle backend, median of 3;
 *   2. the same recompute while a 2000-repeat size curve runs (the Variance view's job), median
 *      of 3 — target: at most 2 x the idle figure (before the cheap-before-long rule it waited
 *      for the curve: 137 s on the same file in the dashboard);
 *   3. cs_backend_shutdown as `q` calls it (waiting at most CS_BACKEND_QUIT_WAIT_MS) with that
 *      curve and a compat job running — target: 500 ms.
 * Prints rows "case | value | target | met?". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "calscope/backend.h"
#include "calscope/jobs/compat.h"
#include "calscope/jobs/curve.h"
#include "calscope/jobs/metrics.h"
#include "calscope/load.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void row(const char *what, const char *value, const char *target, const char *met)
{
    printf("%-58s %10s %16s  %s\n", what, value, target, met);
}

/* Seconds from submitting a metrics recompute on slot 1 to its delivery, or -1. */
static double recompute(cs_backend *b, const cs_dataset *d, int bins)
{
    cs_settings s;
    cs_settings_default(&s);
    s.bins = bins;
    cs_error err;
    cs_metrics_job *j = cs_metrics_job_new(d, &s, &err);
    if (!j) return -1;
    j->want = CS_WANT_ALL | CS_WANT_RECE_CURVE | CS_WANT_SMECE_CURVE;
    double t0 = now();
    if (!cs_backend_submit(b, 1, &j->base, &err)) return -1;
    for (;;) {
        cs_job *r = cs_backend_wait(b, 600000);
        if (!r) return -1;
        int mine = r->slot == 1;
        int ok = r->status == CS_OK;
        cs_job_free(r);
        if (mine) return ok ? now() - t0 : -1;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median3(cs_backend *b, const cs_dataset *d)
{
    double t[3];
    for (int i = 0; i < 3; i++) {
        t[i] = recompute(b, d, 15 + i);   /* a settings change each time, as `+` makes */
        if (t[i] < 0) return -1;
    }
    qsort(t, 3, sizeof t[0], cmp_double);
    return t[1];
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: bench_backend FILE.csv\n");
        return 2;
    }
    cs_load_options lo;
    cs_load_options_default(&lo);
    cs_error err;
    cs_dataset *d = cs_load_file(argv[1], &lo, NULL, &err);
    if (!d) {
        printf("backend bench: %s\n", err.msg);
        return 0;
    }
    cs_backend *b = cs_backend_new(0, &err);
    if (!b) {
        printf("backend bench: %s\n", err.msg);
        return 0;
    }
    char v[32], t[48];
    double idle = median3(b, d);

    cs_settings s;
    cs_settings_default(&s);
    cs_curve_options o;
    cs_curve_options_size_default(&o);
    o.repeats = 2000;
    cs_curve_job *cj = cs_curve_job_new(CS_CURVE_SIZE, d, &s, &o, &err);
    if (!cj || !cs_backend_submit(b, 2, &cj->base, &err)) {
        printf("backend bench: %s\n", err.msg);
        return 0;
    }
    while (cs_backend_progress(b, 2) <= 0) {      /* the curve runs (it publishes progress) */
        struct timespec ts = { 0, 2000000 };
        nanosleep(&ts, NULL);
    }
    double loaded = median3(b, d);
    int curve_ran = cs_backend_busy(b, 2);

    printf("\nbackend bench: %s (%zu x %zu), %d workers\n", argv[1], d->n, d->k, cs_backend_workers(b));
    row("case", "value", "target", "met?");
    snprintf(v, sizeof v, "%.3f", idle);
    row("backend metrics recompute, idle (s, median of 3)", idle < 0 ? "n/a" : v, "-", "-");
    snprintf(v, sizeof v, "%.3f", loaded);
    snprintf(t, sizeof t, "<= %.3f", 2 * idle);
    row("backend metrics recompute beside a 2000-repeat size curve (s)", loaded < 0 ? "n/a" : v,
        idle < 0 ? "<= 2 x idle" : t,
        idle > 0 && loaded >= 0 && loaded <= 2 * idle ? (curve_ran ? "yes" : "yes (curve ended)")
                                                      : "no");

    /* quit: the curve and a compat job (one engine call with no cancel point) running */
    cs_compat_job *xj = cs_compat_job_new(d, &s, &err);
    if (xj && cs_backend_submit(b, 3, &xj->base, &err)) {
        struct timespec ts = { 0, 300000000 };    /* let it get into cs_compat_run */
        nanosleep(&ts, NULL);
    }
    double q0 = now();
    int stopped = cs_backend_shutdown(b, CS_BACKEND_QUIT_WAIT_MS);
    double quit_ms = (now() - q0) * 1e3;
    snprintf(v, sizeof v, "%.0f", quit_ms);
    char note[64];
    snprintf(note, sizeof note, "%s%s", quit_ms <= 500 ? "yes" : "no",
             stopped ? "" : " (a job was left to the exit)");
    row("backend shutdown as `q` calls it, curve + compat running (ms)", v, "<= 500", note);
    fflush(stdout);
    /* A job left running reads d: exit without freeing (as the dashboard does). */
    if (stopped) {
        cs_backend_free(b);
        cs_dataset_free(d);
    }
    return 0;
}
