/* calscope engine: smooth ECE (Błasiok & Nakkiran 2023, "Smooth ECE: principled reliability
 * diagrams via kernel smoothing"), as relplot (apple/ml-calibration) defines it.
 *
 * On pairs (f_i, y_i) (f in [0, 1], y in {0, 1}), with the residuals r_i = f_i - y_i and the
 * Gaussian kernel reflected at 0 and 1,
 *   K_s(t, f) = sum over integers k of phi_s(t - f - 2k) + phi_s(t + f - 2k),
 * the smooth ECE at bandwidth s is
 *   smECE_s = integral over [0, 1] of | (1/n) sum_i r_i K_s(t, f_i) | dt
 * (relplot: the smoothed residual times the smoothed density, over the density's mass, which
 * is 1 for the reflected kernel). The automatic bandwidth is relplot's fixed point
 * s* = smECE_s* (at least 0.001); smECE is then smECE_s*.
 *
 * Two computations:
 *  - cs_smece_at / cs_smece_auto: the kernel sums of every image of every sample (those
 *    farther than 9 s are below 3e-18 of the peak), the integral exactly between the sign
 *    changes of the smoothed residual (normal cdf differences), the sign changes found on a
 *    grid of step s/8 and refined to 1e-15. Two sign changes closer than s/8 can be missed
 *    (the curve barely crosses zero between them): the integral is then low by the area of
 *    that dip. The sums come from the samples' moments in boxes (a Hermite expansion, terms
 *    left out below 1e-19 of the weights: one pass over the samples, then every bandwidth in
 *    time independent of n), or sample by sample for s < 1/1024 or values outside [0, 1].
 *  - cs_smece_relplot: relplot's own discretised number (its grids, float64), for
 *    --compat relplot.
 *
 * Pure functions of their arguments (the order of the pairs changes only the last bits):
 * any thread; on 100,000 pairs and more they use a second thread of their own for the
 * moments (the result does not depend on it). f and y are n doubles each, not kept. */
#ifndef CALSCOPE_SMECE_H
#define CALSCOPE_SMECE_H

#include <stddef.h>

/* relplot's search floor: smECE's eps (metrics.py smECE(f, y, eps=0.001)). */
#define CS_SMECE_EPS 0.001
/* From this many samples a bootstrap replicate's smooth ECE is taken at the whole sample's
 * automatic bandwidth instead of searching its own (metrics/evaluate.c); from
 * CS_SMECE_BINNED_MIN (calscope/metrics.h) from its samples linearly binned at that bandwidth
 * (cs_mx_smece_binned in mx.h). */
#ifndef CS_SMECE_FIXED_BW_MIN
#define CS_SMECE_FIXED_BW_MIN 1000
#endif

/* smECE_sigma, exactly. NAN when n == 0, sigma > 10 or memory ran out. */
double cs_smece_at(const double *f, const double *y, size_t n, double sigma);
/* smECE at the automatic bandwidth; *sigma_out (may be NULL) gets s*. NAN as above. */
double cs_smece_auto(const double *f, const double *y, size_t n, double *sigma_out);
/* The same s* and smECE, the search started near hint (a bandwidth close to s*, e.g. the whole
 * file's for a bootstrap draw; NAN or out of range: no hint). Same value as cs_smece_auto to
 * the root's 1e-15, in about half the time. */
double cs_smece_auto_near(const double *f, const double *y, size_t n, double hint,
                          double *sigma_out);
/* relplot's number: sigma > 0 is smECE_sigma(f, y, sigma), sigma == 0 smECE(f, y) with its
 * 10-step bandwidth search; *sigma_out (may be NULL) gets the bandwidth used. NAN as above. */
double cs_smece_relplot(const double *f, const double *y, size_t n, double sigma, double *sigma_out);

/* relplot's smoothed reliability diagram (diagrams.py prepare_rel_diagram, the picture its
 * rel_diagram draws), on its mesh of CS_SMECE_CURVE_POINTS points t_j = j / (points - 1):
 *   mu(t)      = sum_i K_s(t, f_i) y_i / sum_i K_s(t, f_i)   (Nadaraya-Watson of y itself)
 *   density(t) = (1/n) sum_i K_s(t, f_i)                      (integrates to 1 over [0, 1])
 * with K_s the reflected Gaussian above. relplot smooths y directly: prepare_rel_diagram fits
 * KernelSmoother(ReflectedGaussianKernel(sigma)) to (f, y), not wrapped in its
 * CenteredRegressor (which would smooth y - f and add t back: another curve); sigma is
 * smECE's own bandwidth (kde_bandwidth=None), the density its kernel's kde of f. It draws mu
 * thicker and more opaque where the density is higher.
 * Not taken from relplot: its grids (here every image of every sample is summed, from their
 * moments in boxes: 1e-12 relative where the density is above 1e-3 of its peak), the 1e-4 its smoother adds to the denominator and the 1e-5 its
 * kde adds, its boundary correction (dividing by the kde of a uniform grid, which is 1 for the
 * reflected kernel), and the default mu of rel_diagram, a mean of 200 random bootstrap fits
 * (the point estimate is what relplot draws with plot_confidence_band=False).
 * mu[j] is NAN where no sample's kernel reaches t_j (every image farther than 9 sigma; the
 * density there is 0). Fills mu and density (points doubles each, the caller's). Returns 0,
 * or -1 when n == 0, points < 2, sigma <= 0 or memory ran out. Any thread. */
#define CS_SMECE_CURVE_POINTS 200   /* relplot's config.plot_mesh_pts */
int cs_smece_curve(const double *f, const double *y, size_t n, double sigma, size_t points,
                   double *mu, double *density);

#endif
