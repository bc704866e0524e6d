/* calscope engine, resampling internals: the interval formulas of cs_bootstrap_interval
 * (ci_methods.c), kept apart from the resampling machinery in curves.c. Pure functions; any
 * thread. */
#ifndef CALSCOPE_CI_INTERNAL_H
#define CALSCOPE_CI_INTERNAL_H

#include <stddef.h>

/* Standard normal cdf Φ and its inverse (Acklam's rational approximation refined by one
 * Halley step on erfc: about 1e-15 relative). cs_norm_ppf(0) = -INFINITY, (1) = +INFINITY. */
double cs_norm_cdf(double x);
double cs_norm_ppf(double p);

/* BCa 95 % interval from the finite resampled values sorted[0..n) (ascending), the estimate
 * theta and the jackknife values jack[0..g): *z0, *a and the interval (NAN when z0 is
 * infinite, i.e. every resample lies on one side of theta). a is 0 when every jackknife value
 * is the same (no skewness to measure). */
void cs_ci_bca(const double *sorted, size_t n, double theta, const double *jack, size_t g,
               double *lo, double *hi, double *z0, double *a);

#endif
