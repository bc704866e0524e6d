/* calscope engine, statistics-file metrics internals (src/engine/measure/stats*.c only).
 *
 * A seg_prob is a statistics object cut to the selected ("active") cases and coarsened to M
 * bins once: per active case the M-bin sums of every class, of top-1 and the scores. A
 * measurement is then a weighted sum of cases (weights 1 for the values, bootstrap counts for
 * a resample) followed by the row engine's own bin and aggregate functions (engine/metrics
 * gap.c), so each number is computed by the rule the row engine uses.
 * Threads: a seg_prob is immutable after seg_prob_init; seg_eval may run on many threads. */
#ifndef CALSCOPE_SEG_MEASURE_INTERNAL_H
#define CALSCOPE_SEG_MEASURE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "calscope/metrics.h"
#include "calscope/segstats.h"

typedef struct seg_prob {
    const cs_segstats *st;
    cs_settings s;           /* validated: lens top1 / class / classwise, uniform bins */
    size_t cls;              /* class lens: the class */
    size_t k, M;
    size_t na;               /* active cases */
    size_t *act;             /* na: index of each active case in st */
    uint64_t *cnt, *sy;      /* na*k*M: [a][j][b] */
    double *sp;
    uint64_t *tcnt, *tsy;    /* na*M (softmax; NULL for regions) */
    double *tsc;
    double *sq, *nll;        /* na: the case's Σ_j squared error and its NLL sum (kind rule) */
    uint64_t *vox;           /* na */
    int borrowed;            /* cnt..tsc are st's own arrays (every case active, M == F) */
} seg_prob;

/* Coarsens st's cases with keep[c] != 0 (keep NULL = all) to M bins (M divides st->fine,
 * checked by the caller) under s. Returns CS_OK or CS_ENOMEM. */
cs_status seg_prob_init(seg_prob *p, const cs_segstats *st, const cs_settings *s, int M,
                        const uint8_t *keep, cs_error *err);
void seg_prob_free(seg_prob *p);

/* The values of a weighted sum of active cases: w[a] copies of case a (w NULL = each once);
 * or, with only >= 0, case `only` alone. want: CS_WANT_* bits (the exact ones are computed,
 * the rest NAN). with_bins: fill out->bins (owned). Returns CS_OK, CS_EEMPTY (no voxel) or
 * CS_ENOMEM. */
cs_status seg_eval(const seg_prob *p, const uint32_t *w, long only, unsigned want, int with_bins,
                   cs_result *out, cs_error *err);

/* The values of one weighted sum (w as seg_eval; NULL = each active case once) at each of
 * M[0..n) bins, every M[i] dividing p->M: the cases are pooled once at p->M and the pooled
 * sums coarsened to each M (the bins curve; seg_eval at M[i] pools cases already coarsened,
 * so the two agree up to the order of floating-point additions). out: n results, no bins.
 * Returns CS_OK, CS_EEMPTY (no voxel) or CS_ENOMEM. */
cs_status seg_eval_bins(const seg_prob *p, const uint32_t *w, const int *M, size_t n,
                        unsigned want, cs_result *out, cs_error *err);

/* The metric mask resampling may use: `asked` (0, CS_METRICS_DEFAULT or the bins curve's
 * default mask = the exact default set) checked. CS_EUSAGE naming the metric and why when an
 * inexact one (aece, rece_g, rece_m) is asked for by name; `what` names the part ("--ci"). */
cs_status seg_metric_mask(const cs_segstats *st, unsigned asked, const char *what,
                          unsigned *mask, cs_error *err);

/* Settings checks shared by measure and compare: the lens, binning and M a statistics file
 * can answer; *cls gets the class of a class lens. CS_EUSAGE with the reason otherwise. */
cs_status seg_check_settings(const cs_segstats *st, const cs_settings *s, size_t *cls,
                             cs_error *err);
/* CS_OK when M divides st->fine, else CS_EUSAGE "--bins M does not divide ...". */
cs_status seg_check_bins(const cs_segstats *st, int M, cs_error *err);

/* The selection of s as a keep mask over st's cases (st->n_cases bytes, caller frees; all 1
 * for an empty selection), or NULL with err (CS_EUSAGE: a bad expression, or a condition on
 * anything but `case`; CS_ENOMEM). */
uint8_t *seg_select(const cs_segstats *st, const cs_settings *s, cs_error *err);

#endif
