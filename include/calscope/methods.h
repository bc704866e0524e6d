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
} cs_methods_options;

typedef struct cs_method_row {
    cs_status status;            /* of the values (CS_OK = ok) */
    cs_error err;
    int ok;
    double v[CS_METHODS_NCOL], lo[CS_METHODS_NCOL], hi[CS_METHODS_NCOL];
    cs_status diff_status;       /* of the paired difference */
    cs_error diff_err;
    int has_diff;
    size_t n_pairs;
    double diff[CS_METHODS_NCOL], dlo[CS_METHODS_NCOL], dhi[CS_METHODS_NCOL], pbetter[CS_METHODS_NCOL];
    int equal[CS_METHODS_NCOL];  /* the paired difference is rounding noise (cs_compare_entry.equal) */
    cs_compare cmp;              /* the whole paired comparison reference − method (every default
                                  * metric, as cs_compare_run gives it), when has_cmp: a front end
                                  * that also shows the two-file table reads it instead of
                                  * resampling the same pairs again */
    int has_cmp;
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
} cs_methods;

/* Measures every method d[0..n) (d[i] NULL: a method without data, row not ok) under s.
 * Per-method failures are recorded in the rows (status / diff_status with their messages).
 * Returns CS_OK, CS_EUSAGE (n == 0, n > CS_METHODS_MAX, ref >= n), CS_ENOMEM or CS_ECANCELLED
 * (run->cancel raised; out then holds nothing). The caller frees out with cs_methods_free. */
cs_status cs_methods_run(const cs_dataset *const *d, size_t n, const cs_settings *s,
                         const cs_methods_options *o, const cs_run *run, cs_methods *out,
                         cs_error *err);

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

/* 1 when [lo, hi] is finite and excludes 0 by more than the tie band cs_metric_tie_tol(lo, hi)
 * (an interval of rounding noise excludes nothing). */
int cs_methods_excludes_zero(double lo, double hi);

#endif
