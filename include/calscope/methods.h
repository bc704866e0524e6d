/* calscope engine: the multi-method comparison table (docs/compare.md).
 *
 * Rows are methods (datasets with the same samples: files, recalibrations); columns are
 * accuracy, ECE, ACE, MCE, AECE, RECE-G, SCE, Brier, NLL under the given settings and the ECE
 * of the top-k lens. Each value may carry a bootstrap 95 % interval (cs_bootstrap_ci), every
 * method but the reference gets the paired-bootstrap difference method − reference
 * (cs_compare_run) with its interval, and every method its mass profile (cs_mass_profile).
 * Rankings by each column and whether a column orders some pair the other way round from ECE.
 *
 * One implementation for `calscope report --compare` (src/cli/report/methods.c prints it) and the
 * dashboard's Compare view (a CS_JOB_METHODS backend job). No printing, no curses.
 * Threads: any thread; the datasets are only read. */
#ifndef CALSCOPE_METHODS_H
#define CALSCOPE_METHODS_H

#include <stddef.h>
#include <stdint.h>

#include "calscope/resample.h"
#include "calscope/dataset.h"
#include "calscope/error.h"
#include "calscope/metrics.h"

#define CS_METHODS_NCOL 14       /* thirteen cs_metric ids, then the top-k ECE */
#define CS_METHODS_COL_ECE 1
#define CS_METHODS_COL_TOPK 13
#define CS_METHODS_MASS_TOP 10
#define CS_METHODS_MAX 64
/* Resamples of each value's interval when none are asked for (`report --compare`'s --ci
 * default; the dashboard's methods job uses it when its intervals are off). */
#define CS_METHODS_CI_REPEATS 200

typedef struct cs_methods_options {
    size_t ref;                  /* index of the reference method */
    int k;                       /* k of the top-k column (0 = 3; clamped to the class count) */
    int ci_repeats;              /* bootstrap resamples of each value's interval; 0 = no interval
                                    (lo, hi NAN) */
    int cmp_repeats;             /* paired-bootstrap resamples (0 = CS_COMPARE_REPEATS) */
    uint64_t seed;
    cs_ci_method ci_method;      /* the intervals' method (0 = percentile) */
    int select_each;             /* 0 (--select-on reference): the selection is evaluated once,
                                    on the reference's samples, and every number of the table
                                    is computed on those samples of every method (matched by id,
                                    else by row); 1 (--select-on each): each method keeps its
                                    own selection for its values, and there are no paired
                                    differences (CS_METHODS_EACH_NO_PAIRS says why) */
} cs_methods_options;

/* Why `--select-on each` has no paired differences (a row's diff_err then holds it). */
#define CS_METHODS_EACH_NO_PAIRS                                                                 \
    "no paired differences with --select-on each: each method keeps its own samples, and a "    \
    "paired difference needs one set (--select-on reference, the default)"

typedef struct cs_method_row {
    cs_status status;            /* of the values (CS_OK = ok) */
    cs_error err;
    int ok;
    size_t samples;              /* the samples its values are on (after any selection) */
    cs_bin *bins;                /* owned: the bins of its ECE (a reliability diagram), n_bins */
    size_t n_bins;
    double v[CS_METHODS_NCOL], lo[CS_METHODS_NCOL], hi[CS_METHODS_NCOL];
    cs_status diff_status;       /* of the paired difference */
    cs_error diff_err;           /* why there is none when has_diff is 0 (also with diff_status
                                    CS_OK: CS_METHODS_EACH_NO_PAIRS) */
    int has_diff;
    size_t n_pairs;
    int by_case;                 /* the pairs are cases (two statistics files, resampled by case):
                                    the small-sample rule counts cases */
    double diff[CS_METHODS_NCOL], dlo[CS_METHODS_NCOL], dhi[CS_METHODS_NCOL], pbetter[CS_METHODS_NCOL];
    int equal[CS_METHODS_NCOL];  /* the paired difference is rounding noise (cs_compare_entry.equal) */
    int diff_excludes[CS_METHODS_NCOL]; /* the paired interval does not contain the difference
                                           (cs_methods_interval_misses) */
    cs_compare cmp;              /* the whole paired comparison reference − method (every default
                                  * metric, as cs_compare_run gives it), when has_cmp: a front end
                                  * that also shows the two-file table reads it instead of
                                  * resampling the same pairs again */
    int has_cmp;
    int smece_binned;            /* its interval's or its paired replicates' smooth ECE was
                                  * binned (cs_ci.smece_binned, cs_compare.smece_binned) */
    int ci_excludes[CS_METHODS_NCOL]; /* the value's interval does not contain it (cs_ci_excludes_value) */
    int mass_ok;
    size_t mass_n;
    double top[CS_METHODS_MASS_TOP];  /* mean (j+1)-th largest probability, j < n_top */
    double *cls;                 /* owned: mean probability per class (the dataset's K) */
    size_t k;                    /* classes of the dataset (length of cls) */
} cs_method_row;

typedef struct cs_methods {
    size_t n;                    /* methods (rows) */
    cs_method_row *rows;         /* owned */
    size_t ref;
    int k;                       /* the top-k column's k */
    size_t classes;              /* K of the reference (else of the first measured method) */
    size_t n_top;                /* min(classes, CS_METHODS_MASS_TOP) */
    int cmp_repeats;             /* resamples of the paired differences (front ends state it) */
    /* The selection's rule, for front ends to state (none when the selection is blank). */
    int selected;                /* the settings' selection is not blank */
    int select_each;             /* cs_methods_options.select_each as applied */
    size_t sel_samples;          /* --select-on reference: the samples every method is measured
                                    on (the reference's selection); 0 otherwise */
    size_t sel_of;               /* the reference's samples before the selection */
} cs_methods;

/* Measures every method d[0..n) (d[i] NULL: a method without data, row not ok) under s.
 * Per-method failures are recorded in the rows (status / diff_status with their messages).
 * With a selection and o->select_each 0, it is evaluated on the reference's samples and every
 * method is cut to the paired samples (a method that does not pair with the reference gets the
 * pairing error as its status; a selection that keeps no sample of the reference fails every
 * row with CS_EEMPTY).
 * Returns CS_OK, CS_EUSAGE (n == 0, n > CS_METHODS_MAX, ref >= n), CS_ENOMEM or CS_ECANCELLED
 * (run->cancel raised; out then holds nothing). The caller frees out with cs_methods_free. */
cs_status cs_methods_run(const cs_dataset *const *d, size_t n, const cs_settings *s,
                         const cs_methods_options *o, const cs_run *run, cs_methods *out,
                         cs_error *err);

/* The samples every method of a comparison is measured on, before any selection: the
 * reference d[ref]'s samples that every method d[i] (NULL: skipped) pairs with (cs_compare_pair;
 * files without ids read with --skip-bad-rows pair by data row position, and a row skipped in
 * one file leaves its partners without one). keep (d[ref]->n bytes, the caller's, e.g. 1 or the
 * held-out rows of a split) is cleared at the reference's samples without a partner somewhere;
 * *left_out receives how many samples of all the methods are not among the common ones.
 * Returns CS_OK, a pairing refusal (cs_compare_pair's, in err) or CS_ENOMEM. Any thread. */
cs_status cs_methods_common(const cs_dataset *const *d, size_t n, size_t ref, uint8_t *keep, size_t *left_out,
                            cs_error *err);

/* Method x cut to its partners of the reference's samples with ref_keep 1 (cs_compare_pair: by
 * id, else by row; test-time observations follow their sample; x == ref: ref's own rows). With
 * ref_fit (the reference's fit mask, calscope/measure.h cs_fit_mask) and a split column in x,
 * x's split must agree with the reference's at every paired sample (a fitting value,
 * cs_recal_is_fit_value with fit_value, on both sides, or on neither): the first pair that
 * does not is refused with CS_EINPUT, "X:LINE:COL: --compare: split 'fit' of id '0' (a
 * fitting row) differs from REF:2 (split 'test', held out): ...". The cut dataset is the
 * caller's (cs_dataset_free); NULL with err (the pairing's error, the refusal, CS_ENOMEM,
 * CS_EEMPTY when nothing is kept). Any thread; the datasets are only read. */
cs_dataset *cs_methods_paired_cut(const cs_dataset *ref, const uint8_t *ref_keep, const cs_dataset *x,
                                  const uint8_t *ref_fit, const char *fit_value, const cs_run *run,
                                  cs_error *err);

/* The one line that says which samples the table is on, for both front ends, in buf (always
 * terminated; "" when no selection): "selection: EXPR on the reference (REF): 561 of 1,797
 * samples, the same for every method", or with select_each "selection: EXPR on each method's
 * own samples (561, 429 of 1,797); values only, no paired differences". ref_name names the
 * reference (a path as the user gave it). Any thread. */
void cs_methods_selection_line(const cs_methods *t, const char *expr, const char *ref_name, char *buf,
                               size_t size);

/* The samples method i's values are on (rows[i].samples), 0 when its selection keeps none
 * (status CS_EEMPTY), -1 when it has no values for another reason (a pairing or input error).
 * Any thread; t is only read. */
long long cs_methods_row_selected(const cs_methods *t, size_t i);

/* n with its digits grouped by three ("1,797"), in buf (always terminated). Any thread. */
void cs_methods_count(size_t n, char *buf, size_t size);

/* Frees what t owns (the struct itself is the caller's). NULL-safe. */
void cs_methods_free(cs_methods *t);

/* The cs_metric id of a column (the top-k column gives CS_METRIC_ECE). */
int cs_methods_col_metric(int col);
/* "accuracy", "ece", ..., "topk_ece". Static string. */
const char *cs_methods_col_name(int col);
int cs_methods_lower_better(int col);

/* rank[i] = 1 + the number of methods better under column col by more than the tie band
 * (cs_metric_compare: methods within it share a rank); 0 when the method has no value. rank
 * has t->n entries. */
void cs_methods_ranks(const cs_methods *t, int col, int *rank);

/* 1 when column col orders some pair of methods the other way round from ECE, both beyond the
 * tie band (a tie under one metric is not a disagreement). */
int cs_methods_ranking_differs(const cs_methods *t, int col);

/* 1 when v, lo and hi are finite and v lies outside [lo, hi] by more than the tie band
 * cs_metric_tie_tol(lo, hi): a percentile interval of a biased statistic (or of a difference of
 * two) that misses its own estimate. Front ends mark it "!" with a footnote. */
int cs_methods_interval_misses(double v, double lo, double hi);   /* pure */

/* Why a column has no number ("n/a" beside it): where the metric has one (the catalogue's
 * words, e.g. "top1/class:C only"), else "undefined on these samples". Static string; pure. */
const char *cs_methods_na_reason(int col);

/* ---- the verdict: one line saying which of two methods is better calibrated ---------------- */

/* Too few pairs under the small-sample rule (cs_too_few, calscope/metrics.h: fewer than 10
 * paired samples per bin, or fewer than 10 paired cases) and the verdict is "too few
 * samples/cases to say". */

typedef enum cs_verdict_kind {
    CS_VERDICT_BETTER,           /* the method is better than the reference (interval excludes 0) */
    CS_VERDICT_WORSE,            /* the reference is better */
    CS_VERDICT_NO_DIFFERENCE,    /* the interval holds 0, misses the difference itself ("!"), or
                                    the difference is a tie */
    CS_VERDICT_TOO_FEW,          /* too few pairs for a binned error to say anything */
    CS_VERDICT_NA                /* no number: the metric has none here, or no paired difference */
} cs_verdict_kind;

typedef struct cs_verdict {
    cs_verdict_kind kind;
    int metric;                  /* cs_metric id */
    double diff, lo, hi;         /* method - reference and its paired 95 % interval */
    double p_better;             /* share of resamples where the method is better; NAN on a tie
                                    (equal: the table reads "=", JSON null) */
    size_t pairs;                /* paired samples (or cases) */
    int by_case;                 /* pairs are cases (statistics files) */
    int misses;                  /* the interval misses the difference ("!") */
    size_t min_pairs;            /* fewer pairs than this: CS_VERDICT_TOO_FEW (cs_too_few_min) */
} cs_verdict;

/* The verdict on metric `metric` from a paired difference method - reference (diff, its
 * interval lo..hi, p_better of the method, equal when a tie, `pairs` pairs; NAN diff: none).
 * Too few by cs_too_few(pairs, bins, by_case): bins is the settings' cs_too_few_bins. Pure. */
cs_verdict cs_verdict_make(int metric, double diff, double lo, double hi, double p_better, int equal,
                           size_t pairs, int by_case, double bins);
/* "verdict: METHOD is better calibrated than REF; ECE -0.0507 [-0.0621, -0.0152], P(better)
 * 1.000, 1,797 paired samples" (or "no significant difference between METHOD and REF; ...",
 * "too few paired samples to say (fewer than 150); ...", "n/a; ECE has no paired difference
 * here (reason)", "n/a; MCE -0.1330 has no interval from draws of fewer than all samples
 * (--boot-size full)", "n/a for METHOD; no paired samples") into buf, always terminated. Any thread. */
void cs_verdict_line(const cs_verdict *v, const char *method, const char *ref, char *buf, size_t size);
/* The verdict of row i of t (not the reference) on metric (CS_VERDICT_NA when the table has no
 * such column or the row no paired difference). Any thread; t is only read. */
cs_verdict cs_methods_verdict(const cs_methods *t, size_t i, int metric, double bins);

/* 1 when [lo, hi] is finite and excludes 0 by more than the tie band cs_metric_tie_tol(lo, hi)
 * (an interval of rounding noise excludes nothing). */
int cs_methods_excludes_zero(double lo, double hi);

#endif
