/* calscope engine, resampling internals: the interval formulas of the drivers (ci_methods.c,
 * curves.c), the rules of a curve (curve_build.c) and the run state (runner.c), for curves.c's
 * drivers (evaluator.h) and the checks the statistics files' evaluator makes before calling them
 * (measure/stats_resample.c). Pure functions, any thread, unless said otherwise. */
#ifndef CALSCOPE_CI_INTERNAL_H
#define CALSCOPE_CI_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "calscope/resample.h"

/* The random streams of the resampling calls (cs_rng_seed's `stream`): one per use, so that
 * "replicate r of the interval" is one stream whatever the evaluator (rows or cases). */
enum { STREAM_SIZE = 1, STREAM_BINS = 2, STREAM_CI = 3, STREAM_COMPARE = 4, STREAM_JACK = 5 };

/* Standard normal cdf Φ and its inverse (Acklam's rational approximation refined by one
 * Halley step on erfc: about 1e-15 relative). cs_norm_ppf(0) = -INFINITY, (1) = +INFINITY. */
double cs_norm_cdf(double x);
double cs_norm_ppf(double p);

/* BCa 95 % interval from the finite resampled values sorted[0..n) (ascending), the estimate
 * theta and the jackknife values jack[0..g): *z0, *a and the interval (NAN when z0 is
 * infinite, i.e. every resample lies on one side of theta). a is 0 when every jackknife value
 * is the same (no skewness to measure). */
void cs_ci_bca(const double *sorted, size_t n, double theta, const double *jack, size_t g,
               double *lo, double *hi, double *z0, double *a);

/* The jackknife partition of BCa: group[i] = i when n == G (leave-one-out), else a seeded
 * shuffle (stream STREAM_JACK) cut into G consecutive runs (sizes differ by at most one).
 * perm is scratch for n entries (unused when n == G); G <= 256. */
void cs_jack_groups(size_t n, size_t G, uint64_t seed, uint32_t *perm, uint8_t *group);

/* The method's interval of every metric of out->metrics (out->value and out->method set)
 * from the resampled values[rep][metric] (R resamples) and, for BCa, the jackknife values
 * jack[group][metric] (G groups); col and tmp hold R doubles, jcol G. */
void cs_ci_finish(cs_ci *out, const double *values, size_t R, const double *jack, size_t G,
                  double *col, double *tmp, double *jcol);

/* Entry e of metric m of a paired comparison from the values on all pairs (fa, fb) and the
 * resampled va/vb[rep][metric] (R resamples); col and tmp hold R doubles. */
void cs_compare_entry_fill(cs_compare_entry *e, int m, double fa, double fb, const double *va,
                           const double *vb, size_t R, double *col, double *tmp);

/* ---- curve_build.c ---- */
/* Most resamples one call may ask for (intervals, curves, comparisons). */
#define CS_RESAMPLE_REPEATS_MAX 1000000
/* CS_OK, or CS_EUSAGE "repeats must be between 1 and 1000000 (got R)" in err. */
cs_status cs_resample_repeats_check(int repeats, cs_error *err);
/* CS_OK when o has 1..CS_CURVE_MAX_POINTS points, a metric and a repeat count the rule above
 * takes; else CS_EUSAGE with the reason in err. o->x is the caller's to check (fractions,
 * bin counts or gammas). */
cs_status cs_curve_options_check(const cs_curve_options *o, cs_error *err);
/* CS_OK when every x of o is a size curve's fraction in (0, 1]; else CS_EUSAGE naming it. */
cs_status cs_curve_fractions_check(const cs_curve_options *o, cs_error *err);
/* A new curve of n_points points (zeroed; x, rows and full are the caller's to fill) for the
 * metrics `metrics` over n_samples samples, with o's repeats and replacement (a bins curve
 * always draws with replacement) and no stable range yet. NULL with CS_ENOMEM in err. The
 * caller frees it with cs_curve_free. */
cs_curve *cs_curve_start(cs_curve_kind kind, const cs_curve_options *o, size_t n_points,
                         unsigned metrics, size_t n_samples, cs_error *err);
/* Every point's statistics (cs_stat_compute against the point's full value) from the
 * resampled values[point][rep][metric] of R resamples a point; the metrics c does not hold get
 * NAN statistics. CS_OK or CS_ENOMEM. */
cs_status cs_curve_reduce(cs_curve *c, const double *values, size_t R, cs_error *err);

/* The run state of one parallel resampling call (runner.c): threads, cancel, progress in
 * parts per million of `total` units, and the first hard error of a task (not cancellation).
 * init and finish on the calling thread; cancelled, tick and fail from any task. */
typedef struct cs_runner {
    const atomic_int *cancel;
    atomic_int *progress;
    cs_run part;             /* run's threads, cancel and part of progress (run.h) */
    int threads;             /* run->threads, or the core count; at most CS_THREADS_MAX */
    size_t total;            /* progress units */
    atomic_size_t done;
    atomic_int failed;
} cs_runner;
void cs_runner_init(cs_runner *rn, const cs_run *run, size_t total);
int cs_runner_cancelled(const cs_runner *rn);
/* One unit done: progress moves forward through the run's part, never back. */
void cs_runner_tick(cs_runner *rn);
/* Records st when it is the first hard error. */
void cs_runner_fail(cs_runner *rn, cs_status st);
/* After the parallel part: the call's status (the error, cancelled, or CS_OK with progress 1). */
cs_status cs_runner_finish(cs_runner *rn, cs_error *err);

#endif
