/* calscope engine: bootstrap variance curves, confidence intervals and paired comparison
 * (SPEC §3, seed 000 Fig. 1–2 / Table 1, seed 002 Fig. 7, 9).
 *
 * All four are pure functions of (prepared data, options): the same seed gives bit-identical
 * output for any thread count, because replicate `r` of point `p` always draws from the stream
 * cs_rng_seed(seed, stream, p, r) and writes its own slot; summaries are reduced in index order.
 *
 *   size curve   for each fraction f, R subsets of ceil(f·N) samples (without replacement by
 *                default, or with) -> per metric mean, population sd, 2.5/97.5 % quantiles
 *                (numpy "linear") and abs_dev = mean |metric(subset) − metric(all)|.
 *   bins curve   for each M (or gamma with kd-tree binning), R bootstrap resamples of N draws with
 *                replacement. Replicate r uses the same resampled indices for every M (common
 *                random numbers), so differences between points are not resampling noise.
 *                Stable range: see cs_curve.stable_first below.
 *   cs_ci        percentile 95 % interval (2.5/97.5 % quantiles) of each metric over R resamples
 *                with replacement.
 *   cs_compare   two files with the same samples; each resample draws one index list of pairs
 *                and evaluates A and B on it; reports metric(A) − metric(B).
 *
 * Control: every call takes a cs_run (threads, cancel flag, progress). Progress is published as
 * parts per million of replicates done, readable from any thread at any time. The cancel flag is
 * polled between replicates and inside cs_evaluate; a cancelled call returns CS_ECANCELLED and
 * no result. Threads: any thread may call these; the inputs are only read. */
#ifndef CALSCOPE_CURVES_H
#define CALSCOPE_CURVES_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "calscope/dataset.h"
#include "calscope/error.h"
#include "calscope/metrics.h"
#include "calscope/resample.h"

/* Metrics a curve / interval / comparison can follow. Bit (1u << id) in a metric mask. */
typedef enum cs_metric_id {
    CS_METRIC_ACCURACY, CS_METRIC_ECE, CS_METRIC_ACE, CS_METRIC_MCE, CS_METRIC_AECE,
    CS_METRIC_RECE_G, CS_METRIC_RECE_M, CS_METRIC_SCE, CS_METRIC_BRIER, CS_METRIC_NLL,
    CS_METRIC_COUNT
} cs_metric_id;

#define CS_METRIC_BIT(id) (1u << (id))
/* Every metric of the table (rece_m included: cs_metrics_available drops it where it cannot
 * be resampled -- files without id/tta -- as every interval, curve and comparison below does;
 * the bins curve keeps it only when it can at every M). */
#define CS_METRICS_DEFAULT 0x3ffu

/* JSON key ("ece", "rece_g", ...), or NULL for an unknown id. */
const char *cs_metric_name(int id);
/* Id of a JSON key, or -1. */
int cs_metric_from_name(const char *name);
/* The CS_WANT_* bits cs_evaluate needs for a metric mask. */
unsigned cs_metric_want(unsigned metric_mask);
/* mask without the metrics p cannot resample: rece_m unless p is a long TTA file whose
 * RECE-M weight rows are kept (cs_prepared_rece_m_kept). Any thread. */
unsigned cs_metrics_available(const cs_prepared *p, unsigned mask);
/* The metric's value in a cs_result. */
double cs_metric_value(const cs_result *r, int id);
/* 1 when lower is better (every error and scoring rule), 0 for accuracy. */
int cs_metric_lower_is_better(int id);

/* Threads, cancellation and progress of one call. Zero-initialise for "all cores, no cancel". */
typedef struct cs_run {
    int threads;                 /* <= 0: online core count */
    const atomic_int *cancel;    /* may be NULL */
    atomic_int *progress_ppm;    /* may be NULL; set to 0..1000000 (monotonic) as replicates end */
} cs_run;

#define CS_CURVE_MAX_POINTS 32

typedef enum cs_curve_kind { CS_CURVE_SIZE, CS_CURVE_BINS } cs_curve_kind;

/* Plain data (no pointers): copy it freely, e.g. into a backend request. */
typedef struct cs_curve_options {
    uint64_t seed;
    int repeats;                 /* R, default 20 (size) / 200 (bins) */
    int replace;                 /* size curve: draw with replacement (bins curve always does) */
    unsigned metrics;            /* metric mask (CS_METRIC_BIT), default CS_METRICS_DEFAULT */
    size_t n_points;
    /* size: fractions in (0,1]; bins: M values (integers >= 1) or, with kd-tree binning,
     * gamma values in (0,1]. */
    double x[CS_CURVE_MAX_POINTS];
    int stable_metric;           /* bins curve: metric whose stable range is flagged (default ece) */
} cs_curve_options;

/* Defaults: seed 0, repeats 20, without replacement, default metrics, fractions
 * 0.01 0.05 0.10 0.25 0.50 1.00. */
void cs_curve_options_size_default(cs_curve_options *o);
/* Defaults: seed 0, repeats 200, ece/ace/mce/rece_m, M = 5 10 15 20 30 50 100 200 500 1000 (for
 * kd-tree binning, pass kdtree = 1: gamma = 0.5 0.2 0.1 0.05 0.02 0.01 0.005 0.002 0.001). */
void cs_curve_options_bins_default(cs_curve_options *o, int kdtree);

typedef struct cs_curve_point {
    double x;                    /* fraction, M, or gamma */
    size_t rows;                 /* samples per replicate */
    double full[CS_METRIC_COUNT];    /* the metric on all samples (with this point's M) */
    cs_stat stat[CS_METRIC_COUNT];   /* over the replicates; only metrics in the mask are set */
} cs_curve_point;

typedef struct cs_curve {
    cs_curve_kind kind;
    int kdtree;                  /* bins curve over gamma */
    int repeats;
    int replace;
    unsigned metrics;
    size_t n_samples;            /* N, the prepared (selected) samples */
    size_t n_points;
    cs_curve_point *points;      /* owned */
    /* Bins curve only: the stable range of `stable_metric`, point indices first..last inclusive
     * (-1 when undefined). Rule: two neighbouring points agree when their means differ by no more
     * than the larger of their two bootstrap sds; the stable range is the longest run of
     * consecutive points in which every neighbouring pair agrees (the earliest on ties). A run
     * of one point is allowed, so a finite curve always has a range; read it as "M values in
     * which changing M moves the estimate by less than its own sampling noise". */
    int stable_metric;
    int stable_first, stable_last;
} cs_curve;

/* Size curve on a prepared problem (selection + lens done; bins from its settings). Returns a
 * curve owned by the caller (cs_curve_free), or NULL with err: CS_EUSAGE (bad options),
 * CS_EEMPTY, CS_ENOMEM, CS_ECANCELLED. */
cs_curve *cs_size_curve(const cs_prepared *p, const cs_curve_options *o, const cs_run *run,
                        cs_error *err);

/* Bins curve: prepares `d` under `s` once per point with bins (or gamma) replaced by the point's
 * value. Same returns as cs_size_curve. */
cs_curve *cs_bins_curve(const cs_dataset *d, const cs_settings *s, const cs_curve_options *o,
                        const cs_run *run, cs_error *err);

/* Sets c->stable_metric/first/last for `metric` by the rule above, from the points' means and
 * sds (cs_bins_curve calls it; exposed for other curves and for tests). */
void cs_curve_flag_stable(cs_curve *c, int metric);

void cs_curve_free(cs_curve *c);

/* Bootstrap percentile intervals. */
typedef struct cs_ci {
    unsigned metrics;
    int repeats;
    double value[CS_METRIC_COUNT];   /* on all samples */
    double lo[CS_METRIC_COUNT], hi[CS_METRIC_COUNT]; /* 2.5 / 97.5 % quantiles of the resamples */
} cs_ci;

/* Fills out for the metric mask from `repeats` resamples (N draws with replacement each).
 * Returns CS_OK, CS_EUSAGE, CS_EEMPTY, CS_ENOMEM or CS_ECANCELLED. */
cs_status cs_bootstrap_ci(const cs_prepared *p, unsigned metrics, int repeats, uint64_t seed,
                          const cs_run *run, cs_ci *out, cs_error *err);

/* Paired comparison of two files with the same samples. */
typedef struct cs_compare_entry {
    int metric;                  /* cs_metric_id; JSON key cs_metric_name(metric) */
    double a, b;                 /* on all paired samples */
    double diff;                 /* a − b */
    double lo, hi;               /* 2.5 / 97.5 % quantiles of the resampled a − b */
    double p_better;             /* share of resamples where A is strictly better (lower for
                                    errors and scoring rules, higher for accuracy) */
} cs_compare_entry;

typedef struct cs_compare {
    int by_id;                   /* samples were paired by the id column (else by row) */
    size_t n_pairs;              /* samples in both selections */
    int repeats;
    size_t n_entries;
    cs_compare_entry entries[CS_METRIC_COUNT];
} cs_compare;

/* Pairs the samples of a and b — by id when both files have an id column (every id must occur
 * once in each file), else by row (same sample count) — and checks that paired labels agree;
 * a mismatch is CS_EINPUT with a message naming the first offending id or row. Both are prepared
 * under `s`; a sample counts when both selections keep it. Then `repeats` resamples of the pairs
 * with replacement. Returns CS_OK, CS_EINPUT, CS_EUSAGE, CS_EEMPTY, CS_ENOMEM or CS_ECANCELLED. */
cs_status cs_compare_run(const cs_dataset *a, const cs_dataset *b, const cs_settings *s,
                         unsigned metrics, int repeats, uint64_t seed, const cs_run *run,
                         cs_compare *out, cs_error *err);

#endif
