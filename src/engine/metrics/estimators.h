/* calscope engine: the binned estimators built to be less biased than ECE, on pairs (f_i, y_i)
 * (f in [0, 1], y in {0, 1}) sorted by f ascending (ties in a fixed order: calscope's stable
 * sort of the lens value, so equal values keep their row order).
 *
 * Pure functions of their arguments: any thread. Nothing is kept or allocated. */
#ifndef CALSCOPE_ESTIMATORS_H
#define CALSCOPE_ESTIMATORS_H

#include <stddef.h>

/* Kumar, Liang & Ma 2019 (verified_calibration, calibration/utils.py): over min(M, n)
 * equal-mass groups (numpy array_split of the sorted pairs, calscope's equal-mass rule),
 *   plug-in:  l2ce = sqrt( sum_b n_b/n (fbar_b - ybar_b)^2 )                 (plugin_ce, p=2)
 *   debiased: sqrt(max(0, sum_b n_b/n [(fbar_b - ybar_b)^2 - ybar_b (1 - ybar_b) / (n_b - 1)]))
 *             a group of fewer than 2 pairs adds 0                (unbiased_square_ce, unbiased_l2_ce)
 * The debiased sum is the closed form: no resampling. *debiased_sq (may be NULL) gets the sum
 * before the clip and the root: the unbiased estimate of the squared binned L2 error. NAN for
 * n == 0. */
void cs_l2ce(const double *f, const double *y, size_t n, int M, double *plugin, double *debiased,
             double *debiased_sq);

/* Roelofs, Cain, Shlens & Mozer 2022, ECE_sweep (google-research caltrain,
 * calibration_metrics.py em_monotonic_sweep / ew_monotonic_sweep / _calc_ece_postbin):
 * b = 2, 3, ..., n - 1 bins are tried in turn and the sweep stops at the first b whose
 * non-empty bins' mean y are not non-decreasing (equal means are monotone); the bins of the
 * b before it (1 bin when b = 2 already fails) give
 *   ece_sweep = ( sum_b n_b/n |ybar_b - fbar_b|^p )^(1/p).
 * mass: sorted position i is in bin floor(i b / n) (exact integers; caltrain computes it in
 * floating point after an unstable argsort); else equal width bins by calscope's one uniform
 * rule (engine/num/ubin.h: (i/b, (i+1)/b], caltrain uses floor(f b), [i/b, (i+1)/b)).
 * *bins_out gets the chosen b. NAN (and 0) for n == 0. */
double cs_ece_sweep(const double *f, const double *y, size_t n, int mass, double p, int *bins_out);

#endif
