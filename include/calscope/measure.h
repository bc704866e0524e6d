/* calscope engine: measure one file under one set of settings — the orchestration both front
 * ends share, so that `calscope report` and the dashboard's jobs cannot drift apart.
 *
 *   cs_measure      the values (cs_evaluate) and, as asked, the per-case metrics, the bootstrap
 *                   intervals, a variance curve, top-k ECE bars and the Likert table, in that
 *                   order, each under the same settings, seed and threads. RECE-M is one of the
 *                   values (and of the intervals where it can be resampled).
 *   cs_fit_mask     which rows fit a recalibration and which are held out to measure it on:
 *                   --recal-split F (a seeded hash of the ids) or --recal-split-column COL.
 *   cs_recal_held_out  a recalibration fitted on the fitting rows, cut to the held-out rows.
 *
 * The report calls cs_measure once per file with every part its flags ask for; a dashboard
 * job calls it with the one part it shows. Threads: any thread; the dataset is only read. */
#ifndef CALSCOPE_MEASURE_H
#define CALSCOPE_MEASURE_H

#include <stddef.h>
#include <stdint.h>

#include "calscope/cases.h"
#include "calscope/resample.h"
#include "calscope/dataset.h"
#include "calscope/error.h"
#include "calscope/likert.h"
#include "calscope/metrics.h"
#include "calscope/recal.h"

/* The parts of a measurement besides the values (bit mask). */
enum {
    CS_MEASURE_CASES  = 1u << 0,   /* per-case metrics; skipped on a file without a case column */
    CS_MEASURE_CI     = 1u << 1,   /* bootstrap intervals */
    CS_MEASURE_CURVE  = 1u << 2,   /* a size or bins variance curve */
    CS_MEASURE_TOPK   = 1u << 3,   /* top-k ECE bars */
    CS_MEASURE_LIKERT = 1u << 4    /* the Likert (confidence category) table */
};

#define CS_MEASURE_MAX_TOPK 32

/* What to measure. Plain data (pointers borrowed for the call); zero means the default. */
typedef struct cs_measure_request {
    unsigned parts;              /* CS_MEASURE_* */
    unsigned want;               /* cs_evaluate bits of the values; 0 = CS_WANT_ALL */
    uint64_t seed;               /* of the intervals (the curve has its own, curve.seed) */
    int ci_repeats;              /* CS_MEASURE_CI: resamples (> 0) */
    cs_ci_method ci_method;
    unsigned ci_metrics;         /* metric mask of the intervals; 0 = CS_METRICS_DEFAULT */
    cs_curve_kind curve_kind;    /* CS_MEASURE_CURVE */
    cs_curve_options curve;
    const int *topk;             /* CS_MEASURE_TOPK: the k of each bar, as used (1..K) */
    size_t n_topk;               /* <= CS_MEASURE_MAX_TOPK */
    const double *likert_cuts;   /* CS_MEASURE_LIKERT: NULL = the defaults */
    size_t n_likert_cuts;
} cs_measure_request;

/* What was measured. A has_ flag (or a non-NULL curve) says which parts are present: a part
 * with nothing to measure (CS_EEMPTY: no resample, no case column) is absent, not an error. */
typedef struct cs_measurement {
    size_t selected;             /* samples the selection kept */
    int evaluated;               /* result holds the values */
    cs_result result;            /* owned (cs_measurement_free) */
    int has_cases;
    cs_case_metrics cases;       /* owned */
    int has_ci;
    cs_ci ci;
    cs_curve *curve;             /* owned, or NULL */
    int has_topk;
    size_t n_topk;
    int topk_k[CS_MEASURE_MAX_TOPK];
    double topk_ece[CS_MEASURE_MAX_TOPK];
    int has_likert;
    cs_likert likert;
} cs_measurement;

/* Measures d under s: the values, then the parts q asks for, in the order of the enum above.
 * Returns CS_OK; CS_EEMPTY when the selection keeps no sample (out->selected = 0, nothing
 * measured); or the first failure (CS_EUSAGE for settings that do not apply to this file,
 * CS_EINPUT, CS_ENOMEM, CS_ECANCELLED when run->cancel is raised) with err set — the parts
 * measured before it stay in out. out is always initialised: free it with
 * cs_measurement_free. */
cs_status cs_measure(const cs_dataset *d, const cs_settings *s, const cs_measure_request *q,
                     const cs_run *run, cs_measurement *out, cs_error *err);
/* Frees what m owns and zeroes it (the struct is the caller's). NULL-safe. */
void cs_measurement_free(cs_measurement *m);

/* Whether measuring under s the parts `parts` (CS_MEASURE_*) reads nothing of the probability
 * rows but the sums a summary keeps (calscope/summarize.h): the values of all samples on the
 * top-1 lens, and per-case metrics (a file with a case column is never summed). A part or a
 * setting that reads the rows makes this 0: cs_summarize_file asks it, so a caller that
 * prints nothing else of the rows may hand it any request. Pure; any thread. */
int cs_measure_reads_only_sums(const cs_settings *s, unsigned parts);

/* Which rows fit a recalibration and which are held out to measure every method on. */
typedef struct cs_fit_split {
    double fraction;             /* > 0: --recal-split F, a seeded hash of the ids below F */
    int by_column;               /* 1: --recal-split-column: the loaded split column ... */
    const char *fit_value;       /* ... whose value is this (NULL or "" = fit or train) */
    uint64_t seed;               /* of the hash */
} cs_fit_split;

/* 1 when sp holds rows out of the fit (a fraction or a column), 0 for cross-fitting. */
int cs_fit_split_held_out(const cs_fit_split *sp);
/* The fit mask of d (d->n bytes, 1 = a fitting row; caller frees), or NULL with err:
 * cs_recal_column_mask's errors for a column, CS_ENOMEM ("out of memory") for a fraction. */
uint8_t *cs_fit_mask(const cs_dataset *d, const cs_fit_split *sp, cs_error *err);
/* `method` fitted on the rows of mask (cs_fit_mask of d) and applied, cut to the held-out
 * rows (mask 0): the dataset every method is measured on. Owned by the caller, or NULL with
 * err (cs_recal_apply's and cs_dataset_subset's errors). */
cs_dataset *cs_recal_held_out(const cs_dataset *d, int method, const cs_recal_options *o,
                              const uint8_t *mask, cs_recal_info *info, cs_error *err);

/* Paired comparison of a and b: two statistics files case by case (cs_segstats_compare, cases
 * are the unit of evidence), else the rows (cs_compare_rows, calscope/resample.h, whose contract
 * and returns it has). Any thread; the datasets are only read. */
cs_status cs_compare_run(const cs_dataset *a, const cs_dataset *b, const cs_settings *s,
                         unsigned metrics, int repeats, uint64_t seed, const cs_run *run,
                         cs_compare *out, cs_error *err);

#endif
