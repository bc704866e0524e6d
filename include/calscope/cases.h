/* calscope engine: per-case metrics for segmentation-style files (JSON "cases", docs/json.md;
 * Barfoot, Garcia Peraza Herrera, Glocker & Vercauteren 2024, "Average Calibration Error: A
 * Differentiable Loss for Improved Reliability in Image Segmentation").
 *
 * With a `case` column every row is a pixel / voxel of one case (image). The selection and the
 * lens are applied once (cs_prepare); then ECE / ACE / MCE are computed per case on that
 * case's selected samples with cs_evaluate (under the chosen lens, binning and distance), and
 * aggregated over the cases as the mean and the population sd. With --lens classwise the
 * per-case values are the class-wise (one-vs-rest, averaged over classes) ones, so the means
 * are the paper's mL1-ECE / mL1-ACE / mL1-MCE. The pooled values (all selected samples as one
 * set) are given beside them. Cases with no selected sample are left out everywhere; a per-case
 * value that is NAN is left out of the mean and sd.
 *
 * Dataset reliability histogram (Barfoot et al. 2024, Fig. 2): per class c an M×M count matrix;
 * cell [i][j] counts the cases whose observed frequency of c (fraction of labels == c) among their
 * selected pixels with p_c in probability bin i falls in frequency bin j. Bins are the uniform
 * ones of the metrics: bin i = (i/M, (i+1)/M], 0 in bin 0, edges i/M in double. A case with no
 * pixel in bin i is not counted in row i. The histogram does not depend on the lens. It is
 * dense (K*M*M counts, printed whole in JSON), so K*M*M is bounded by CS_CASE_HIST_MAX_CELLS:
 * above it cs_case_metrics_compute refuses (CS_EUSAGE) before allocating anything.
 *
 * Ownership: cs_case_metrics owns its arrays; cs_case_metrics_free releases them.
 * Threads: reads the dataset only; any thread (cancel polled between cases). */
#ifndef CALSCOPE_CASES_H
#define CALSCOPE_CASES_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "calscope/dataset.h"
#include "calscope/error.h"
#include "calscope/metrics.h"

#define CS_CASE_HIST_MAX_CELLS (1u << 24)   /* 64 MiB of counts */

typedef struct cs_case_stat { double mean, sd; } cs_case_stat;

typedef struct cs_case_metrics {
    size_t n_cases;          /* cases measured (with at least one selected sample) */
    int32_t *case_index;     /* n_cases: index into d->case_names, ascending */
    size_t *count;           /* n_cases: selected samples of each case */
    double *ece, *ace, *mce; /* n_cases: per-case values */
    cs_case_stat ece_stat, ace_stat, mce_stat;  /* mean and population sd over the cases */
    double pooled_ece, pooled_ace, pooled_mce;  /* all selected samples as one set */
    size_t k, m;             /* classes, bins of the histogram */
    uint32_t *hist;          /* k*m*m: hist[(c*m + i)*m + j] */
} cs_case_metrics;

/* Fills out (zeroed first). Returns CS_OK, or an error with err set: CS_EUSAGE when the file
 * has no case column or for bad settings / selection, CS_EEMPTY when the selection keeps no
 * sample, CS_ENOMEM, CS_ECANCELLED (cancel may be NULL). On error out holds nothing to free
 * (freeing it anyway is harmless). */
cs_status cs_case_metrics_compute(const cs_dataset *d, const cs_settings *s,
                                  const atomic_int *cancel, cs_case_metrics *out, cs_error *err);
/* The same for a measurement that has prepared its settings once: pl's dataset and settings,
 * p the problem cs_prepare_planned(pl, NULL) made (neither is changed). Any thread. */
cs_status cs_case_metrics_planned(const cs_plan *pl, const cs_prepared *p, const atomic_int *cancel,
                                  cs_case_metrics *out, cs_error *err);

/* Mean and population sd of the non-NAN values of v[0..n) (NAN, NAN when there are none): the
 * per-case summary. Any thread. */
cs_case_stat cs_case_stat_of(const double *v, size_t n);

/* CS_OK when a K*M*M histogram fits CS_CASE_HIST_MAX_CELLS, else CS_EUSAGE with the message
 * that names the largest M that fits ("PATH: ..."). Shared with the statistics-file path
 * (calscope/segmeasure.h), so both refuse alike. Any thread. */
cs_status cs_case_hist_check(size_t k, size_t m, const char *path, cs_error *err);

/* Releases the arrays and zeroes the struct (not freed itself). NULL is a no-op. */
void cs_case_metrics_free(cs_case_metrics *cm);

#endif
