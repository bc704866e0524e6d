/* calscope engine: what the resampling engine draws from, and its drivers.
 *
 * An evaluator is a problem prepared once — the selected samples of a row dataset under its
 * settings (cs_prepared, curves.c), or the active cases of a statistics file coarsened to M bins
 * (measure/stats_resample.c) — made of `n` units that a draw picks. eval puts the metrics of
 * one weighted draw into a metric row: the units idx[0..k), each as often as it appears (idx
 * NULL: every unit once, k = n). The drivers below (curves.c) own everything else: the random
 * streams (ci_internal.h), the draws, the thread split and the summaries, so an interval, a
 * curve or a paired comparison means the same on rows and on statistics files.
 *
 * Threads: eval and eval_points are called from any number of threads at once (the problem is
 * only read); the drivers are called from any thread. */
#ifndef CALSCOPE_EVALUATOR_H
#define CALSCOPE_EVALUATOR_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "calscope/resample.h"

/* A bit of eval's mask beside the metrics' (CS_METRIC_BIT): the draw is m < n units standing
 * for all n (an m-out-of-n draw, calscope/resample.h). Only row evaluators get it. */
#define CS_EVAL_DRAW (1u << 31)

typedef struct cs_evaluator {
    size_t n;                /* units a draw picks from: samples, or cases */
    const void *ctx;         /* the prepared problem (borrowed) */
    unsigned m_of_n;         /* the metrics an m < n draw gives an interval (cs_metric_mask_m_of_n;
                                0 for evaluators that always draw n) */
    /* The metrics of mask on the draw into row[0..CS_METRIC_COUNT), NAN for the others and
     * where the draw has no value. Returns CS_OK, or the error that fails the whole call. */
    cs_status (*eval)(const void *ctx, const uint32_t *idx, size_t k, unsigned mask,
                      const atomic_int *cancel, double *row);
    /* A bins curve's evaluator: the same at each of its np points, point pt's row at
     * rows + pt * stride. NULL for other evaluators. */
    cs_status (*eval_points)(const void *ctx, const uint32_t *idx, size_t k, unsigned mask,
                             const atomic_int *cancel, double *rows, size_t stride, size_t np);
} cs_evaluator;

/* Bootstrap interval of the metrics of mask: `repeats` draws of `draw` units with replacement
 * (0 or more than n: n; fewer: m out of n, cs_boot_draw_size; BCa always n), and BCa's
 * jackknife. Fills out as cs_bootstrap_interval does (calscope/resample.h), with its returns;
 * empty_msg: the CS_EEMPTY message when ev->n is 0 (NULL: no such check). */
cs_status cs_resample_interval(const cs_evaluator *ev, unsigned mask, int repeats, uint64_t seed,
                               cs_ci_method method, size_t draw, const char *empty_msg,
                               const cs_run *run, cs_ci *out, cs_error *err);

/* Size curve of the metrics of mask at o's fractions of the n units (o checked by the
 * caller). NULL with err on failure. Free with cs_curve_free. */
cs_curve *cs_resample_size_curve(const cs_evaluator *ev, const cs_curve_options *o,
                                 unsigned mask, const cs_run *run, cs_error *err);

/* Bins curve: c (cs_curve_start; each point's x and rows set) gets every point's full value
 * and statistics from o->repeats draws of n units with replacement, each evaluated at every
 * point (ev->eval_points), then its stable range. CS_OK or the error (c is the caller's). */
cs_status cs_resample_bins_curve(const cs_evaluator *ev, cs_curve *c, const cs_curve_options *o,
                                 const cs_run *run, cs_error *err);

/* Paired comparison: pair t is unit ia[t] of a and ib[t] of b (ia, ib NULL: unit t of both),
 * n pairs; `repeats` draws of `draw` pairs with replacement (0 or more than n: n; fewer: m
 * out of n). Fills out's entries (metrics of mask), n_pairs, draw_size and repeats; by_id is
 * the caller's. */
cs_status cs_resample_compare(const cs_evaluator *a, const cs_evaluator *b, const uint32_t *ia,
                              const uint32_t *ib, size_t n, unsigned mask, int repeats,
                              uint64_t seed, size_t draw, const cs_run *run, cs_compare *out,
                              cs_error *err);

#endif
