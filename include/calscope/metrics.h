/* calscope engine: calibration metrics (definitions: docs/metrics.md).
 *
 * A metric is selection -> lens -> estimator (binning) -> distance. The work is split in two
 * so that resampling never redoes the per-row work:
 *
 *   cs_plan *pl = cs_plan_new(dataset, settings, err);     checked, selected, resolved, once
 *   cs_prepared *p = cs_prepare_planned(pl, NULL, err);    the lens, per variant of the settings
 *   cs_evaluate(p, idx, n, want, &result, err);             binning + metrics, per subset
 *
 * `idx` indexes the prepared (selected) samples 0..p->n-1 and may repeat entries (bootstrap);
 * NULL means all of them in order. Every number is independent of the order of idx.
 *
 * Threads: cs_prepare reads the dataset only. A cs_prepared is immutable after cs_prepare, so
 * any number of threads may call cs_evaluate on it at once, each with its own result. */
#ifndef CALSCOPE_METRICS_H
#define CALSCOPE_METRICS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "calscope/dataset.h"
#include "calscope/error.h"
#include "calscope/run.h"

typedef enum cs_lens_kind {
    CS_LENS_TOP1, CS_LENS_TOPK, CS_LENS_CLASS, CS_LENS_CLASSWISE, CS_LENS_GROUP, CS_LENS_FULL
} cs_lens_kind;

typedef enum cs_binning { CS_BIN_UNIFORM, CS_BIN_MASS, CS_BIN_KDTREE } cs_binning;

typedef enum cs_distance { CS_DIST_TVD, CS_DIST_L2, CS_DIST_MAX, CS_DIST_INTERVAL } cs_distance;

typedef enum cs_mixture { CS_MIX_KDE, CS_MIX_GMM3 } cs_mixture;

#define CS_SPEC_MAX 512

/* Everything that determines a number. Plain data: copy it freely (it owns no memory). */
typedef struct cs_settings {
    cs_lens_kind lens;
    int topk;                    /* K of topk:K */
    char lens_arg[CS_SPEC_MAX];  /* class:C -> "C" (engine/classes.h); group -> "A,B;C,D" */
    cs_binning binning;
    int bins;                    /* M, default 15 */
    double gamma;                /* kd-tree max bin fraction, default 0.1 */
    double sigma;                /* RECE-G / RECE-M kernel sd, default 0.1 */
    cs_distance distance;
    double interval_lo, interval_hi; /* for CS_DIST_INTERVAL */
    cs_mixture mixture;          /* RECE-M mixture, default kde */
    double smece_sigma;          /* smooth ECE bandwidth; 0 (the default) = automatic (smece.h) */
    char select[CS_SPEC_MAX];    /* selection expression, "" = all samples */
    long boot_size;              /* --boot-size: samples per bootstrap draw of an interval or a
                                    paired comparison; 0 (the default) = automatic,
                                    CS_BOOT_SIZE_FULL = all (calscope/resample.h,
                                    cs_boot_draw_size) */
} cs_settings;

/* Fills the documented defaults: top1, uniform, 15 bins, gamma 0.1, sigma 0.1, tvd, kde, no
 * selection. */
void cs_settings_default(cs_settings *s);

/* Parsers for the command-line spellings (docs/flags.md). Return CS_OK, or CS_EUSAGE with a
 * message. */
cs_status cs_settings_set_lens(cs_settings *s, const char *text, cs_error *err);     /* top1|topk:K|class:C|classwise|group:..|full */
cs_status cs_settings_set_binning(cs_settings *s, const char *text, cs_error *err);  /* uniform|mass|kdtree */
cs_status cs_settings_set_distance(cs_settings *s, const char *text, cs_error *err); /* tvd|l2|max|interval:L,H */
cs_status cs_settings_set_mixture(cs_settings *s, const char *text, cs_error *err);  /* kde|gmm3 */

/* Documented limits of the settings (docs/flags.md, "Limits"), enforced by the parsers below and by
 * cs_settings_validate, so both front ends and library callers get the same bounds.
 * M: the default bins curve spans 5..1000, and costs that grow with M alone (RECE-G/RECE-M weights,
 * the per-case K*M*M histogram) stay bounded. sigma is on the confidence scale [0, 1]: below
 * 1e-6 RECE-G equals ECE to the printed digits, above 10 the kernel is flat over [0, 1], and
 * far outside the range the Gaussian masses underflow. */
#define CS_BINS_MAX 1000
#define CS_SIGMA_MIN 1e-6
#define CS_SIGMA_MAX 10.0
/* --smece-sigma: relplot's own range (its search floor 0.001 and ceiling 1). */
#define CS_SMECE_SIGMA_MIN 0.001
#define CS_SMECE_SIGMA_MAX 1.0

/* Strict numeric parsers for --bins (integer 1..CS_BINS_MAX), --gamma (0 < G <= 1) and
 * --sigma (CS_SIGMA_MIN..CS_SIGMA_MAX). Return CS_OK, or CS_EUSAGE with a message that starts
 * with the flag ("--bins: ..."); s is unchanged on error. */
cs_status cs_settings_set_bins(cs_settings *s, const char *text, cs_error *err);
cs_status cs_settings_set_gamma(cs_settings *s, const char *text, cs_error *err);
cs_status cs_settings_set_sigma(cs_settings *s, const char *text, cs_error *err);
/* --smece-sigma S: CS_SMECE_SIGMA_MIN..CS_SMECE_SIGMA_MAX. */
cs_status cs_settings_set_smece_sigma(cs_settings *s, const char *text, cs_error *err);
/* --boot-size auto|full|N: N a whole number CS_BOOT_SIZE_MIN..CS_BOOT_SIZE_MAX. */
#define CS_BOOT_SIZE_FULL (-1L)
#define CS_BOOT_SIZE_MIN 1000L
#define CS_BOOT_SIZE_MAX 4294967295L
cs_status cs_settings_set_boot_size(cs_settings *s, const char *text, cs_error *err);

/* Upper bounds of the resampling counts both front ends accept: --ci R and --repeats R. */
#define CS_RESAMPLES_MAX 100000

/* A number as the command line spells it, by the data loader's rule: the whole string a
 * decimal, finite, no blank and no hex float (0x1p-1 is refused, as in a data file); a value
 * that underflows to a subnormal or zero (1e-320) is accepted as strtod gives it. Returns 1 and
 * sets *out, or 0. Any thread. */
int cs_parse_number(const char *text, double *out);
/* Writes v as the shortest decimal that reads back to the same double ("0.001", "1e-320",
 * "1.0000000000000002"), so a number in a message or a flag means exactly the value used. */
void cs_format_number(char *out, size_t size, double v);
/* A whole number lo..hi written in decimal (an optional '+', no blanks). Returns 1 and sets
 * *out, or 0. Any thread. */
int cs_parse_whole(const char *text, long lo, long hi, long *out);

/* The front ends' shared flag parsers (message "FLAG: ..." naming the range, CS_EUSAGE):
 * --threads N (0 = all cores, at most CS_THREADS_MAX), --ci R / --repeats R (lo..
 * CS_RESAMPLES_MAX; flag is the name to print) and --sum-tol T ([0, 1)). *out is unchanged on
 * error. Any thread. */
cs_status cs_parse_threads(const char *text, int *out, cs_error *err);
cs_status cs_parse_resamples(const char *flag, const char *text, long lo, int *out, cs_error *err);
cs_status cs_parse_sum_tol(const char *text, double *out, cs_error *err);

/* Checks a settings struct filled by hand (ranges above, lens/distance arguments).
 * cs_plan_new calls it, once per measurement. Returns CS_OK or CS_EUSAGE. */
cs_status cs_settings_validate(const cs_settings *s, cs_error *err);
/* The part of cs_settings_validate that a variant of checked settings can change: bins, gamma
 * and the interval distance's ends (same messages, same order). CS_OK or CS_EUSAGE. */
cs_status cs_settings_check_scoring(const cs_settings *s, cs_error *err);
/* Test hook: how many times cs_settings_validate has run in this process. Any thread. */
unsigned long cs_settings_validate_count(void);

/* Writes the lens in its command-line spelling ("top1", "topk:5", "class:cat", ...). */
void cs_settings_lens_name(const cs_settings *s, char *buf, size_t size);

/* Which metrics cs_evaluate computes (bit mask). */
enum {
    CS_WANT_ACCURACY = 1u << 0,
    CS_WANT_BINNED   = 1u << 1,  /* ece, ace, mce and the bin table, under the chosen settings */
    CS_WANT_RECE_G   = 1u << 2,
    CS_WANT_RECE_M   = 1u << 3,  /* needs an id/tta long file; NAN otherwise (rece_m.h) */
    CS_WANT_BRIER    = 1u << 4,
    CS_WANT_NLL      = 1u << 5,
    CS_WANT_AECE     = 1u << 6,  /* top-1 equal-mass ECE with the same M, whatever the binning */
    CS_WANT_SCE      = 1u << 7,  /* class-wise (uniform, M bins) ECE, whatever the lens */
    /* top1 and class:C only (NAN on other lenses): */
    CS_WANT_SMECE    = 1u << 9,  /* smooth ECE and its bandwidth (smece.h) */
    CS_WANT_L2CE     = 1u << 10, /* plug-in and debiased L2 CE over M equal-mass bins */
    CS_WANT_SWEEP    = 1u << 11, /* ECE_sweep and its bin count (--binning uniform|mass) */
    CS_WANT_ALL      = 0xeffu,
    /* Not in CS_WANT_ALL: the RECE-G smoothed reliability curve, rece_acc / rece_conf below
     * (scalar lenses except classwise; left NULL otherwise). */
    CS_WANT_RECE_CURVE = 1u << 8,
    /* Not in CS_WANT_ALL: relplot's smoothed reliability curve at smECE's bandwidth,
     * smece_mu / smece_density below (top1 and class:C; left NULL otherwise). Implies
     * CS_WANT_SMECE (the bandwidth is smECE's). */
    CS_WANT_SMECE_CURVE = 1u << 12,
    /* Not a metric: the items are a bootstrap draw of fewer than all samples standing for all
     * of them (an m-out-of-n draw, calscope/resample.h), so smooth ECE takes them as it takes
     * a draw of all: at the whole problem's bandwidth, linearly binned from
     * CS_SMECE_BINNED_MIN items. */
    CS_WANT_DRAW = 1u << 13
};

/* One bin of the estimator. For scalar lenses lo/hi are the bin's interval on the first
 * coordinate; for kd-tree / grid bins on vector lenses they are the bounds of the first
 * coordinate. conf/acc are the mean first coordinate of the lensed output / target. */
typedef struct cs_bin {
    double lo, hi;
    size_t count;
    double conf, acc;
    double gap;              /* d(mean output, mean target) for this bin under the distance */
} cs_bin;

typedef struct cs_result {
    size_t n;                /* samples measured (after selection) */
    double accuracy;
    double ece, ace, mce;    /* under the chosen lens / binning / distance */
    double rece_g, rece_m;
    double brier, nll;
    double aece, sce;
    double smece, smece_sigma;   /* smooth ECE and the bandwidth it used */
    double l2ce, l2ce_debiased;  /* Kumar et al.'s plug-in and debiased L2 CE */
    double ece_sweep, ece_sweep_bins; /* Roelofs et al.'s ECE_sweep and its bin count */
    cs_bin *bins;            /* owned; for classwise: the bins pooled over classes */
    size_t n_bins;
    /* With CS_WANT_RECE_CURVE: per uniform bin i of the M, the kernel-weighted accuracy
     * A~_i/W_i and confidence C~_i/W_i of RECE-G (W_i = sum of the samples' weights on bin i;
     * NAN where W_i is 0). Owned, n_rece (= M) each, or NULL. */
    double *rece_acc, *rece_conf;
    size_t n_rece;
    /* With CS_WANT_SMECE_CURVE: relplot's smoothed accuracy mu(t_j) and the smoothed density
     * of the values at t_j = j / (n_smece_curve - 1), bandwidth smece_sigma (engine/metrics/smece.h
     * cs_smece_curve; mu NAN where no sample reaches). Owned, n_smece_curve
     * (= CS_SMECE_CURVE_POINTS) each, or NULL. */
    double *smece_mu, *smece_density;
    size_t n_smece_curve;
} cs_result;

/* Empties r: every metric NAN ("not measured"), no bins. The one list of a result's values that
 * every producer (cs_evaluate, the statistics engine) starts from. Any thread. */
void cs_result_reset(cs_result *r);

/* Releases result->bins and the curves (the struct itself belongs to the caller). */
void cs_result_free(cs_result *r);

/* Selection + lens applied to the dataset's samples. Opaque except for n. */
typedef struct cs_prepared cs_prepared;

/* Returns a prepared problem owned by the caller, or NULL with err set: CS_EUSAGE for a bad
 * lens argument or selection expression (message with a caret line), CS_EEMPTY when the
 * selection keeps no sample, CS_ENOMEM. The dataset must outlive the result. A plan of its
 * own (cs_plan_new, cs_prepare_planned): a caller preparing the same settings more than once
 * keeps a cs_plan instead. */
cs_prepared *cs_prepare(const cs_dataset *d, const cs_settings *s, cs_error *err);

/* The settings of one measurement, prepared once against one dataset: validated, the
 * selection compiled and applied, the class names of --lens class / group resolved. Built by
 * cs_plan_new; every part of the measurement (values, cases, intervals, curves, top-k bars,
 * the Likert table, --compat) reads it and none re-validates, re-compiles or re-resolves.
 * The fields are read-only for everyone but cs_plan_new; a caller may copy the struct to
 * narrow rows/n to a subset of them (the Likert table's categories) for a prepare. */
typedef struct cs_plan {
    const cs_dataset *d;        /* borrowed: the dataset outlives the plan */
    cs_settings s;              /* validated */
    int all;                    /* blank selection: every sample, rows = d->sample_rows */
    const uint32_t *rows;       /* the dataset rows the selection keeps, ascending */
    size_t n;                   /* their count; 0: cs_prepare_planned refuses (CS_EEMPTY) */
    int cls;                    /* --lens class: the class's column; else -1 */
    int32_t *group_of;          /* --lens group: each class's group (d->k entries); else NULL */
    size_t n_groups;
    uint32_t *owned_rows;       /* rows when the plan allocated them (a selection), else NULL */
} cs_plan;

/* Prepares s against d, in the order cs_prepare has always refused: a dataset without rows,
 * settings out of range (cs_settings_validate), a one-pass dataset under anything but all
 * of its samples on the top-1 lens, an unprepared dataset, a bad selection (message with a
 * caret line), an unknown class of --lens class or group. A selection that keeps no sample
 * is a plan with n = 0 (its classes unresolved), which cs_prepare_planned refuses with
 * CS_EEMPTY, before any class, as cs_prepare always has. Returns a plan owned by the caller
 * (cs_plan_free), or NULL with err set. Reads the dataset only: any thread. */
cs_plan *cs_plan_new(const cs_dataset *d, const cs_settings *s, cs_error *err);
void cs_plan_free(cs_plan *pl);   /* NULL is a no-op */

/* The problem of plan pl under settings s: NULL for pl->s, or a variant of pl->s that keeps
 * its selection and changes only what is scored — bins, gamma, the distance and its interval
 * (checked here, cs_settings_check_scoring), the lens narrowed to top1. Borrows pl's rows:
 * the plan (and its rows) must outlive the result. NULL with err set (CS_EUSAGE, CS_ENOMEM).
 * Any thread; any number at once on one plan. */
cs_prepared *cs_prepare_planned(const cs_plan *pl, const cs_settings *s, cs_error *err);

size_t cs_prepared_count(const cs_prepared *p);
/* The settings p was prepared under (p's own copy: valid while p lives). Any thread. */
const cs_settings *cs_prepared_settings(const cs_prepared *p);
/* How many evaluations of p so far took smooth ECE from linearly binned samples (bootstrap
 * draws of all of at least CS_SMECE_BINNED_MIN samples, below). Any thread (a count kept with
 * atomic adds); the resampling calls read it before and after their draws. */
size_t cs_prepared_smece_binned(const cs_prepared *p);
/* The metrics of mask (CS_METRIC_BIT ids, calscope/catalogue.h) on all of p's samples as the
 * last full evaluation of p made them (cs_evaluate with idx NULL keeps its values on p) into
 * row[0..CS_METRIC_COUNT): 1, row[m] set for m in mask; 0 when none has made every metric of
 * mask yet (row untouched). A resampling driver's value on all samples after the caller's own
 * evaluation costs nothing. Any thread. */
int cs_prepared_full_values(const cs_prepared *p, unsigned mask, double *row);
/* From this many samples a bootstrap draw of all of them takes smooth ECE at the fixed
 * bandwidth from its samples linearly binned onto CS_SMECE_BIN_PER_SIGMA cells per bandwidth
 * (engine/metrics/smece.c; docs/performance.md has the measured error): one pass over the
 * draw instead of the merge and moments of every drawn value. The value on all samples stays
 * exact; below it the replicates are exact too. */
#define CS_SMECE_BINNED_MIN 20000
#define CS_SMECE_BIN_PER_SIGMA 64
/* The dataset row of each prepared sample (length cs_prepared_count), in dataset order. */
const uint32_t *cs_prepared_rows(const cs_prepared *p);
/* 1 when the prepared file is a long test-time-augmentation file (id and tta columns), the
 * only kind on which CS_WANT_RECE_M gives a number. Any thread. */
int cs_prepared_has_tta(const cs_prepared *p);
/* 1 when, besides, RECE-M's n x M weight rows are kept in memory after the first evaluation
 * (they fit in the larger of 48 MiB and the file's probability matrix), so that resampling
 * RECE-M costs what resampling RECE-G does. Otherwise every evaluation remakes the rows of
 * its items (T erfc per bin edge and observation): right, but too slow to repeat hundreds
 * of times, so intervals and curves leave RECE-M out. Any thread. */
int cs_prepared_rece_m_kept(const cs_prepared *p);
void cs_prepared_free(cs_prepared *p);

/* Computes the `want` metrics on the samples idx[0..n) of p (NULL idx = all, n ignored then).
 * Metrics not asked for are NAN. run (may be NULL: no cancel, no budget) is the caller's run
 * context: run->cancel is polled, and when raised the call returns CS_ECANCELLED; on a large
 * sample (100,000 or more) the class-wise ECE and the sorted estimators run on one helper
 * thread (cs_helper_start) beside the caller unless run->threads is 1 — a caller inside
 * cs_parallel_for, whose tasks spend the budget, passes 1. The numbers are the same either
 * way. Returns CS_OK, CS_EEMPTY (n == 0), CS_ENOMEM or CS_ECANCELLED. out is the caller's
 * (cs_result_free). Any thread, any number at once on one p. */
cs_status cs_evaluate(const cs_prepared *p, const uint32_t *idx, size_t n, unsigned want,
                      const cs_run *run, cs_result *out, cs_error *err);

/* ---- the small-sample rule: when a resampled number is too few units to claim anything ----
 *
 * One rule for every claim made from resampling: the stable range of a bins curve, a size
 * curve's points, the comparison's verdict and its paired intervals and P(better).
 *  - Samples (rows, or voxels pooled into bins): fewer than CS_TOO_FEW_PER_BIN per bin on
 *    average. Below that a bin's accuracy moves in steps of 0.1 or more and its gap is mostly
 *    binomial noise, so every M looks equally "stable" and any difference is noise.
 *  - Cases, when the case is the unit of resampling (statistics files): fewer than
 *    CS_TOO_FEW_CASES. A bootstrap over n cases has only C(2n-1, n) distinct resamples (35 for
 *    4 cases, 126 for 5, 92,378 for 10; Efron & Tibshirani 1993, "An Introduction to the
 *    Bootstrap"), so 1000 replicates repeat a few dozen values, and its spread underestimates
 *    the sampling spread by the factor sqrt((n-1)/n) (13 % at 4 cases, 5 % at 10): the
 *    interval looks tight and P(better) reads 1.000 on the evidence of a handful of patients. */
#define CS_TOO_FEW_PER_BIN 10
#define CS_TOO_FEW_CASES 10

/* 1 when `units` are too few under the rule: by_case, units are cases (fewer than
 * CS_TOO_FEW_CASES); else units are samples spread over `bins` bins (M; 1/gamma for kd-tree
 * cells; 0 or less counts as one bin), too few when units / bins < CS_TOO_FEW_PER_BIN.
 * Pure; any thread. */
int cs_too_few(size_t units, double bins, int by_case);
/* The fewest units the rule accepts, for messages ("fewer than 150"): CS_TOO_FEW_CASES, or
 * CS_TOO_FEW_PER_BIN x bins rounded up. Pure; any thread. */
size_t cs_too_few_min(double bins, int by_case);
/* The bins the rule spreads samples over under settings s: M, or 1/gamma for kd-tree cells
 * (gamma·N is a cell's size). Pure; any thread. */
double cs_too_few_bins(const cs_settings *s);
/* cs_too_few_bins of the settings p was prepared under. Any thread. */
double cs_prepared_too_few_bins(const cs_prepared *p);

#endif
