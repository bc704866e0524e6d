/* calscope engine: the resampling engine (src/engine/resample/) — counter-based random streams
 * and draws, and on them bootstrap variance curves, confidence intervals and paired comparison.
 *
 * Random streams (docs/metrics.md, "Variance curves"). Every random stream is counter-based:
 * the generator for replicate `rep` of curve point `point` is seeded from a hash of (seed,
 * stream, point, rep), never from a thread, so any split of the replicates over threads gives
 * bit-identical results. The generator is splitmix64 (Steele, Lea & Flood 2014); bounded
 * integers use Lemire's multiply-and-reject method, so they are exact (unbiased) and identical
 * on every platform. These primitives are pure functions of their arguments. (cs_parallel_for,
 * which runs a task function on up to `threads` threads, is in calscope/run.h, included here.)
 *
 * Curves, intervals and comparison (Gupta, Basu & Arora 2023, "How Reliable are the Metrics
 * Used for Assessing Reliability in Medical Imaging?", Fig. 1–2 / Table 1; Kirchenbauer, Oaks &
 * Heim 2022, "What is Your Metric Telling You?", Fig. 7, 9).
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
#ifndef CALSCOPE_RESAMPLE_H
#define CALSCOPE_RESAMPLE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "calscope/catalogue.h"
#include "calscope/dataset.h"
#include "calscope/error.h"
#include "calscope/metrics.h"
#include "calscope/run.h"

/* ---- random streams and draws (resample.c) ---- */

typedef struct cs_rng {
    uint64_t state;
} cs_rng;

/* Seeds the stream for (seed, stream, point, rep); `stream` separates unrelated uses (curves,
 * intervals, comparisons) that share a user seed. */
void cs_rng_seed(cs_rng *r, uint64_t seed, uint64_t stream, uint64_t point, uint64_t rep);
/* Next 64 random bits. */
uint64_t cs_rng_next(cs_rng *r);
/* What cs_rng_next draws from the state z (splitmix64's step: the mix of z + the golden
 * gamma): a 64-bit hash of z, for seeds made from names or indices (recalibration's folds).
 * Pure; any thread. */
uint64_t cs_splitmix64(uint64_t z);
/* Uniform integer in [0, bound), bound >= 1, unbiased. */
uint64_t cs_rng_below(cs_rng *r, uint64_t bound);

/* Rows in a subset of fraction f of n rows: ceil(f·n), with f·n first snapped to the nearest
 * integer when it lies within 1e-9·max(1, f·n) of it — in double, 0.07*100 is 7.000000000000001
 * and a plain ceil would give 8. Clamped to [1, n] for f > 0 and n > 0; 0 when f <= 0 or n == 0. */
size_t cs_subset_size(double fraction, size_t n);

/* Draws k of n indices without replacement into out[0..k) by a partial Fisher–Yates shuffle of
 * `perm`, which must hold the identity 0..n-1 on entry and holds it again on return (the swaps are
 * undone in reverse order), so a caller reuses one perm per thread at O(k) cost per draw.
 * `undo` is scratch for k entries. Requires k <= n <= UINT32_MAX. */
void cs_draw_without(cs_rng *r, uint32_t *perm, size_t n, size_t k, uint32_t *undo, uint32_t *out);
/* The same draw as cs_draw_without (same generator use, the same k indices) written to out[0..k)
 * in ascending order, the order cs_evaluate would put it in anyway. `bits` holds (n+63)/64 words,
 * all zero on entry and again on return; the output pass reads all of them, so this pays when
 * k is not far below n/64. */
void cs_draw_without_sorted(cs_rng *r, uint32_t *perm, size_t n, size_t k, uint32_t *undo,
                            uint64_t *bits, uint32_t *out);
/* Draws k indices uniformly from 0..n-1 with replacement. */
void cs_draw_with(cs_rng *r, size_t n, size_t k, uint32_t *out);

/* Draws of large samples: m out of n. A percentile or basic interval's draw and a paired
 * comparison's draw of n samples take m = cs_boot_draw_size(n, …) of them with replacement,
 * and when m < n each replicate's deviation from the value on all n is shrunk by sqrt(m/n):
 * θ' = θ̂ + sqrt(m/n)·(θ*_m − θ̂) — the m-out-of-n bootstrap (Bickel, Götze & van Zwet 1997,
 * "Resampling fewer than n observations: gains, losses, and remedies for losses"). For a
 * metric whose spread shrinks as 1/sqrt(n) — a sum over samples, or over bins weighted by
 * their counts, also where a bin is calibrated and |gap| has a kink — the shrunk spread
 * estimates the spread at n, and a replicate costs m, not n. θ' is a convex combination of
 * two values of the metric, so it stays in the metric's range. Metrics whose sparse bins
 * are far noisier at m than at n (catalogue.h, m_of_n 0: MCE, ACE, SCE, RECE-M; and on a
 * lens of several coordinates or classes, every metric that reads the lens:
 * cs_metric_mask_m_of_n) get no interval from such draws: NAN, said by the front ends with
 * --boot-size full as the way to one. Automatic (--boot-size auto): m = n up to max(CS_BOOT_DRAW_MIN, CS_BOOT_PER_BIN·M)
 * samples (M the bins), that many above. BCa (its jackknife is on all n), size and bins
 * curves and statistics files' cases always draw n of n. */
#define CS_BOOT_DRAW_MIN 30000
#define CS_BOOT_PER_BIN 2000
/* Samples per draw of an interval or paired comparison of n samples under boot_size (a
 * cs_settings.boot_size) and M bins. Pure; any thread. */
size_t cs_boot_draw_size(size_t n, long boot_size, int bins);
/* values[r·CS_METRIC_COUNT + m] (r < R) shrunk towards full[m] by sqrt(k/n) as above for the
 * metrics of ok (cs_metric_mask_m_of_n), and NAN for the others; nothing when k >= n.
 * Non-finite values stay as they are. Any thread; values is the caller's. */
void cs_boot_shrink(double *values, size_t R, const double *full, size_t k, size_t n, unsigned ok);

/* Quantile q in [0,1] of sorted[0..n), numpy's default rule ("linear", type 7 of Hyndman & Fan):
 * h = (n−1)·q, result = x[⌊h⌋] + (h − ⌊h⌋)·(x[⌊h⌋+1] − x[⌊h⌋]). NAN when n == 0. */
double cs_quantile_sorted(const double *sorted, size_t n, double q);

/* Summary of a metric over R replicates. */
typedef struct cs_stat {
    double mean;       /* NAN when no replicate gave a finite value */
    double sd;         /* population sd (divide by the count) */
    double lo, hi;     /* 2.5 % and 97.5 % quantiles (cs_quantile_sorted) */
    double abs_dev;    /* mean |value − reference| (NAN when the reference is NAN) */
    size_t count;      /* replicates with a finite value (non-finite ones are left out) */
} cs_stat;

/* Summarises values[0..n) (read only; `scratch` holds n doubles) against `reference`. The sum is
 * taken in index order, so the result depends only on the values, never on the thread count.
 * On return scratch[0..out->count) holds the finite values in ascending order. */
void cs_stat_compute(const double *values, size_t n, double reference, double *scratch,
                     cs_stat *out);

/* ---- curves, intervals, paired comparison (curves.c, ci_methods.c, curve_build.c, runner.c) ---- */


/* Metric ids, masks and the catalogue: calscope/catalogue.h. */
/* Every metric of the table (rece_m included: cs_metrics_available drops it where it cannot be
 * resampled -- files without id/tta -- as every interval, curve and comparison below does; the
 * bins curve keeps rece_m only when it can at every M). */
#define CS_METRICS_DEFAULT 0x3fffu

/* mask without the metrics p cannot resample: rece_m unless p is a long TTA file whose
 * RECE-M weight rows are kept (cs_prepared_rece_m_kept). Any thread. */
unsigned cs_metrics_available(const cs_prepared *p, unsigned mask);

/* Ties. Two values of a metric are tied when they differ by no more than
 * CS_TIE_REL · max(1, |a|, |b|): 1e-9 of the metric's scale (every metric here is of order 1;
 * NLL and Brier larger values scale the band with them). Why 1e-9: the same predictions written
 * as probabilities and as logits differ by a few ulps per value, and a metric (a mean of N
 * terms, each of order 1) then differs by about 1e-16·N at worst — under 1e-9 up to several
 * million rows; while any real difference (moving one sample among N ≤ 1e8) changes a mean by
 * far more. Differences inside the band are rounding noise: rankings treat them as ties and a
 * paired bootstrap whose every difference is inside it reports equal (cs_compare_entry). */
#define CS_TIE_REL 1e-9
/* The tie band of a and b (NAN when either is not finite). */
double cs_metric_tie_tol(double a, double b);
/* +1 when a is better than b under metric id by more than the band, -1 when worse, 0 when tied
 * (or either is not finite). */
int cs_metric_compare(int id, double a, double b);


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
    int too_few;                 /* a replicate draws too few samples or cases under the
                                    small-sample rule (cs_too_few): no claim from this point */
} cs_curve_point;

typedef struct cs_curve {
    cs_curve_kind kind;
    int kdtree;                  /* bins curve over gamma */
    int repeats;
    int replace;
    unsigned metrics;
    size_t n_samples;            /* N, the prepared (selected) samples (voxels: statistics files) */
    int by_case;                 /* the units resampled are cases (statistics files): a size
                                    curve's rows are cases per replicate */
    size_t n_cases;              /* by_case: the cases a bins curve's replicate draws */
    size_t too_few_min;          /* size curve: the fewest rows (cases by_case) per replicate
                                    the small-sample rule accepts (cs_too_few_min) */
    int smece_binned;            /* size curve: its full-size draws (with replacement) took
                                    smooth ECE binned, as cs_ci's */
    size_t n_points;
    cs_curve_point *points;      /* owned */
    /* Bins curve only: the stable range of `stable_metric`, point indices first..last inclusive
     * (-1 when undefined). Rule: only points not too_few take part (the small-sample rule:
     * 10 samples per bin, N/M or gamma·N for kd-tree cells; 10 cases by_case); two neighbouring such
     * points agree when their means differ by no more than the larger of their two bootstrap
     * sds; the stable range is the longest run of consecutive points in which every neighbouring
     * pair agrees (the earliest on ties). A run of one point is allowed; with no point dense
     * enough there is no range (stable_first -1, stable_thin 1). Read it as "M values in which
     * changing M moves the estimate by less than its own sampling noise". */
    int stable_metric;
    int stable_first, stable_last;
    int stable_thin;             /* 1 when points were left out as too_few (then no range, or a
                                    range over the dense points only) */
    /* Bins curve only: the bin count ECE_sweep chooses on all N samples under the curve's
     * binning (the report's ece_sweep_bins), so a user can set it beside the stable range.
     * NAN where the sweep is undefined (kd-tree cells, distances other than tvd/l2, the size
     * curve, statistics datasets). */
    double sweep_bins;
} cs_curve;

/* Sets every point's too_few by the small-sample rule (cs_too_few): by_case, the cases a
 * replicate draws (a size curve's rows, else n_cases); else a point's rows over its bins
 * (a bins curve's M, or 1/gamma for kd-tree cells; a size curve's `bins`, cs_too_few_bins of
 * its settings). The caller owns c; any thread that owns it. */
void cs_curve_mark_too_few(cs_curve *c, double bins);

/* Size curve on a prepared problem (selection + lens done; bins from its settings). Returns a
 * curve owned by the caller (cs_curve_free), or NULL with err: CS_EUSAGE (bad options),
 * CS_EEMPTY, CS_ENOMEM, CS_ECANCELLED. */
cs_curve *cs_size_curve(const cs_prepared *p, const cs_curve_options *o, const cs_run *run,
                        cs_error *err);

/* Bins curve: prepares `d` under `s` once per point with bins (or gamma) replaced by the point's
 * value. Same returns as cs_size_curve. */
cs_curve *cs_bins_curve(const cs_dataset *d, const cs_settings *s, const cs_curve_options *o,
                        const cs_run *run, cs_error *err);
/* The same for a measurement that has prepared its settings once: every point's problem is
 * made from pl (its selection, classes) with only the bins (or gamma) changed. */
cs_curve *cs_bins_curve_planned(const cs_plan *pl, const cs_curve_options *o, const cs_run *run,
                                cs_error *err);

/* Sets c->stable_metric/first/last for `metric` by the rule above, from the points' means and
 * sds (cs_bins_curve calls it; exposed for other curves and for tests). */
void cs_curve_flag_stable(cs_curve *c, int metric);

void cs_curve_free(cs_curve *c);

/* Bootstrap 95 % intervals, three ways (Efron & Tibshirani 1993, ch. 13-14):
 *   percentile  the 2.5 / 97.5 % quantiles q of the resampled values (the default). For a
 *               biased statistic — a binned ECE is biased upwards, and a resample (with its
 *               repeated rows) more so — the whole interval can lie above the estimate.
 *   basic       [2θ̂ − q97.5, 2θ̂ − q2.5]: the percentile interval reflected about θ̂, which
 *               removes the bootstrap's estimate of the bias; clipped to the metric's range
 *               (every metric >= 0, accuracy <= 1).
 *   bca         bias-corrected and accelerated: quantiles at Φ(z0 + (z0 + zα)/(1 − a(z0 + zα)))
 *               with z0 = Φ⁻¹(share of resamples below θ̂, ties counting half) and the
 *               acceleration a = Σ u³ / (6 (Σ u²)^1.5), u = mean(θ₍ⱼ₎) − θ₍ⱼ₎ over jackknife
 *               values θ₍ⱼ₎ (scipy.stats.bootstrap's formulas). The jackknife leaves out one
 *               sample at a time when N <= CS_CI_JACK_GROUPS, else one of CS_CI_JACK_GROUPS
 *               groups (a seeded random partition into near-equal groups: the grouped
 *               jackknife, which estimates the same skewness at the cost of that many
 *               evaluations instead of N). Undefined (NAN) when every resample lies on one side
 *               of θ̂ (z0 infinite): then the bias is larger than the resampling spread. */
typedef enum cs_ci_method { CS_CI_PERCENTILE, CS_CI_BASIC, CS_CI_BCA, CS_CI_METHOD_COUNT } cs_ci_method;

#define CS_CI_JACK_GROUPS 100

/* "percentile", "basic", "bca"; NULL for an unknown one. */
const char *cs_ci_method_name(int method);
/* The method of a name, or -1. */
int cs_ci_method_from_name(const char *name);

typedef struct cs_ci {
    unsigned metrics;
    int repeats;
    cs_ci_method method;
    double value[CS_METRIC_COUNT];   /* on all samples */
    double lo[CS_METRIC_COUNT], hi[CS_METRIC_COUNT]; /* the method's interval (NAN: undefined) */
    double boot_mean[CS_METRIC_COUNT]; /* mean of the resampled values; minus value = the bias */
    double z0[CS_METRIC_COUNT], accel[CS_METRIC_COUNT]; /* bca only, else NAN */
    size_t jack_groups;              /* bca: jackknife groups (N when leave-one-out), else 0 */
    size_t draw_size;                /* samples per draw: N, or m < N (cs_boot_draw_size) */
    size_t units;                    /* N */
    unsigned m_of_n;                 /* the metrics an m < N draw gives an interval
                                      * (cs_metric_mask_m_of_n of the settings) */
    int smece_binned;                /* smooth ECE's replicates were binned (engine/metrics/smece.h
                                      * CS_SMECE_BINNED_MIN), not exact */
} cs_ci;

/* 1 when metric id has a finite interval that does not contain its value: the sign of a
 * biased statistic (see above), shown as a marker by the front ends. */
int cs_ci_excludes_value(const cs_ci *ci, int id);
/* 1 when metric id has no interval because the draws took fewer than all samples and the
 * metric has no m-out-of-n interval (catalogue.h, m_of_n): the front ends say --boot-size
 * full. The same for a paired comparison's entry: cs_compare_needs_full_draws. Pure. */
int cs_ci_needs_full_draws(const cs_ci *ci, int id);

/* Fills out for the metric mask from `repeats` resamples (N draws with replacement each), the
 * interval by `method`. Returns CS_OK, CS_EUSAGE, CS_EEMPTY, CS_ENOMEM or CS_ECANCELLED. */
cs_status cs_bootstrap_interval(const cs_prepared *p, unsigned metrics, int repeats,
                                uint64_t seed, cs_ci_method method, const cs_run *run,
                                cs_ci *out, cs_error *err);
/* cs_bootstrap_interval with the percentile method. */
cs_status cs_bootstrap_ci(const cs_prepared *p, unsigned metrics, int repeats, uint64_t seed,
                          const cs_run *run, cs_ci *out, cs_error *err);

/* Paired comparison of two files with the same samples. */
typedef struct cs_compare_entry {
    int metric;                  /* cs_metric_id; JSON key cs_metric_name(metric) */
    double a, b;                 /* on all paired samples */
    double diff;                 /* a − b */
    double lo, hi;               /* 2.5 / 97.5 % quantiles of the resampled a − b */
    double p_better;             /* share of resamples where A is better by more than the tie
                                    band (lower for errors and scoring rules, higher for
                                    accuracy; cs_metric_compare) */
    double p_equal;              /* share of resamples where A and B are tied (within the band) */
    double p_worse;              /* share of resamples where B is better (1 - p_better - p_equal
                                    when every resample has both values) */
    int equal;                   /* 1 when a, b and every resample are tied: the difference is
                                    rounding noise; front ends show "=" instead of p_better */
} cs_compare_entry;

typedef struct cs_compare {
    int by_id;                   /* samples were paired by the id column (else by row) */
    size_t n_pairs;              /* samples in both selections */
    int repeats;
    size_t draw_size;            /* pairs per draw: n_pairs, or m < n_pairs (cs_boot_draw_size) */
    unsigned m_of_n;             /* the metrics an m < n_pairs draw gives an interval, as cs_ci's */
    size_t n_entries;
    cs_compare_entry entries[CS_METRIC_COUNT];
    int smece_binned;            /* smooth ECE's replicates were binned, as cs_ci's */
} cs_compare;

int cs_compare_needs_full_draws(const cs_compare *c, int id);
/* What the front ends say beside such a metric: "no interval from draws of m < n; --boot-size full". */
#define CS_NEEDS_FULL_DRAWS_TEXT "n/a: --boot-size full"


/* Pairs the samples of a and b (a is "A", usually the reference) — by id when both files have
 * an id column (every id must occur once in each file), else by row (same sample count; by data
 * row position when either has cs_dataset.row_pos, rows skipped by --skip-bad-rows counted, and
 * then a sample whose partner was skipped or cut has none: UINT32_MAX in a_to_b) — and
 * checks that they have the same number of classes and that paired labels agree. On a mismatch
 * returns CS_EINPUT with err naming the place "FILE:LINE:COL: --compare: reason" when the
 * datasets know their lines (cs_dataset.line): the header column of the first class without a
 * partner, the first id of a missing from b (then of b missing from a), the second occurrence
 * of a repeated id, the first sample without a partner, or b's label of the first pair whose
 * labels differ. a_to_b (a->n entries, may be NULL) gets the paired row of b for each sample
 * row of a (UINT32_MAX elsewhere); *by_id whether ids paired them. CS_ENOMEM as usual. */
cs_status cs_compare_pair(const cs_dataset *a, const cs_dataset *b, uint32_t *a_to_b, int *by_id,
                          cs_error *err);

/* --compare of two files that name the same classes in another column order (resample/pair.c; cs_compare_pair and cs_compare_run do it themselves, and the methods table
 * reads every method in the reference's order): b is
 * read in a's class order. cs_compare_class_map fills map[j] (a->k entries) with b's column of
 * a's class j and returns 1 when b names exactly a's classes, once each, in another order; 0
 * when the order is the same or the names differ (classes then pair by column), -1 when out of
 * memory. cs_class_order_view makes b seen through such a map: its own probabilities, logits,
 * labels, class names and conf / pred / correct in a's order, every other array b's (so it must
 * not outlive b); NULL with err when out of memory. Free it with cs_class_order_view_free only
 * (never cs_dataset_free). Any thread; a and b are only read. */
int cs_compare_class_map(const cs_dataset *a, const cs_dataset *b, uint32_t *map);
cs_dataset *cs_class_order_view(const cs_dataset *b, const uint32_t *map, cs_error *err);
void cs_class_order_view_free(cs_dataset *v);

/* Resamples of a paired comparison when none are asked for (`report --compare`'s --repeats
 * default, the methods table's and the dashboard's Compare view). */
#define CS_COMPARE_REPEATS 1000

/* The row engine of cs_compare_run (calscope/measure.h, which also takes statistics files):
 * pairs a and b with cs_compare_pair (its errors are returned as they are). Both are prepared
 * under `s`; a sample counts when both selections keep it. Then `repeats` resamples of the pairs
 * with replacement. A statistics dataset is refused (cs_dataset_need_rows). Returns CS_OK,
 * CS_EINPUT, CS_EUSAGE, CS_EEMPTY, CS_ENOMEM or CS_ECANCELLED. */
cs_status cs_compare_rows(const cs_dataset *a, const cs_dataset *b, const cs_settings *s,
                          unsigned metrics, int repeats, uint64_t seed, const cs_run *run,
                          cs_compare *out, cs_error *err);

#endif
