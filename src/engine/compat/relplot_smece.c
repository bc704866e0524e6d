/* relplot's smooth ECE on its grids (engine/metrics/smece.h cs_smece_relplot), float64 throughout.
 *
 * Transcribed from src/relplot/metrics.py and kernels.py (apple/ml-calibration, commit 18ff21a):
 *  - smooth_ece(f, y, s): t = np.linspace(0, 1, max(round(10 / s), 200)) (config.smECE_mesh_pts);
 *    ReflectedGaussianKernel(s).smooth(f, f - y, t, eps=1e-4): ys = apply(f, r, t),
 *    dens = apply(f, 1, t) + eps, ys /= dens; returns sum(|ys| * dens) / sum(dens).
 *  - GaussianKernel.apply: E = max(2000, round(20 / s)) // 2 + 1 grid points;
 *    smooth_round_to_grid splits each sample's value between its two grid neighbours
 *    (bins = int(f * (E - 1)) clipped to E - 2, frac = f * (E - 1) - bins); the reflected
 *    convolve pads with the mirror images of the grid at both ends, convolves ('valid') with
 *    kernel_ev(E) = exp(-(u - .5)^2 / (2 s^2)) / (sqrt(2 pi) s) on u = linspace(0, 1, E) and
 *    keeps [E // 2, E // 2 + E); interpolate() reads it back linearly at t.
 *  - smECE: search_param (see smece.c cs_smece_auto), 10 bisection steps, eps 0.001.
 * Python's round() is round-half-even on the exact double: nearbyint() in the default mode. */
#include "engine/metrics/smece.h"
#include "engine/compat/cx.h"

#include <math.h>
#include <stdlib.h>

/* kernels.py interpolate(t, y): y holds B values on i / (B - 1). */
static double interp(const double *yv, size_t B, double t)
{
    double bucket = 1.0 / (double)(B - 1);
    long ind = (long)(t * (double)(B - 1));
    if (ind < 0) ind = 0;
    if (ind > (long)B - 2) ind = (long)B - 2;
    double res = (t - (double)ind * bucket) / bucket;
    return yv[ind] * (1.0 - res) + yv[ind + 1] * res;
}

/* GaussianKernel.apply with the reflected convolve, at the T points t: out[T]. */
static int apply(const double *f, const double *w, size_t n, double s, const double *t, size_t T,
                 double *out)
{
    long E = (long)fmax(2000.0, nearbyint(20.0 / s));
    E = E / 2 + 1;
    double *values = calloc((size_t)E, sizeof *values), *ker = malloc((size_t)E * sizeof *ker),
           *ext = malloc((size_t)(3 * E - 2) * sizeof *ext), *sm = malloc((size_t)E * sizeof *sm),
           *u = malloc((size_t)E * sizeof *u);
    if (!values || !ker || !ext || !sm || !u) {
        free(values); free(ker); free(ext); free(sm); free(u);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {   /* smooth_round_to_grid */
        double x = f[i] * (double)(E - 1);
        long b = (long)x;
        if (b < 0) b = 0;
        if (b > E - 2) b = E - 2;
        double frac = x - (double)b;
        values[b] += (1.0 - frac) * w[i];
        values[b + 1] += frac * w[i];
    }
    cx_linspace_f64(u, (int)(E - 1));
    double var = s * s, norm = sqrt(2.0 * M_PI) * s;
    for (long j = 0; j < E; j++) ker[j] = exp(-(u[j] - 0.5) * (u[j] - 0.5) / (2.0 * var)) / norm;
    /* [flip(values)[:-1], values, flip(values)[1:]] */
    for (long j = 0; j < E - 1; j++) ext[j] = values[E - 1 - j];
    for (long j = 0; j < E; j++) ext[E - 1 + j] = values[j];
    for (long j = 0; j < E - 1; j++) ext[2 * E - 1 + j] = values[E - 2 - j];
    /* np.convolve(ext, ker, 'valid')[k] = sum_j ker[j] ext[k + E - 1 - j], k from E // 2 */
    for (long i = 0; i < E; i++) {
        long k = E / 2 + i;
        double acc = 0.0;
        for (long j = 0; j < E; j++) acc += ext[k + E - 1 - j] * ker[j];
        sm[i] = acc;
    }
    for (size_t i = 0; i < T; i++) out[i] = interp(sm, (size_t)E, t[i]);
    free(values); free(ker); free(ext); free(sm); free(u);
    return 0;
}

/* metrics.py smooth_ece(f, y, s). */
static double smooth_ece(const double *f, const double *r, const double *one, size_t n, double s)
{
    size_t T = (size_t)fmax(nearbyint(10.0 / s), 200.0);
    double *t = malloc(T * sizeof *t), *ys = malloc(T * sizeof *ys), *dens = malloc(T * sizeof *dens);
    double v = NAN;
    if (t && ys && dens) {
        cx_linspace_f64(t, (int)(T - 1));
        if (apply(f, r, n, s, t, T, ys) == 0 && apply(f, one, n, s, t, T, dens) == 0) {
            double num = 0.0, den = 0.0;
            for (size_t i = 0; i < T; i++) {
                dens[i] += 0.0001;
                double rs = ys[i] / dens[i];
                num += fabs(rs) * dens[i];
                den += dens[i];
            }
            v = num / den;
        }
    }
    free(t); free(ys); free(dens);
    return v;
}

double cs_smece_relplot(const double *f, const double *y, size_t n, double sigma, double *sigma_out)
{
    if (sigma_out) *sigma_out = NAN;
    if (n == 0) return NAN;
    double *r = malloc(n * sizeof *r), *one = malloc(n * sizeof *one);
    if (!r || !one) {
        free(r); free(one);
        return NAN;
    }
    for (size_t i = 0; i < n; i++) {
        r[i] = f[i] - y[i];
        one[i] = 1.0;
    }
    double s = sigma;
    if (!(s > 0)) {   /* search_param(check_smooth_ece, start=1, refine=10) */
        double v1 = smooth_ece(f, r, one, n, 1.0);
        if (1.0 < v1) s = 1.0;
        else {
            double start = 1.0, end = 0.0;
            for (int it = 0; it < 10; it++) {
                double mid = (start + end) / 2.0;
                if (mid < CS_SMECE_EPS || mid < smooth_ece(f, r, one, n, mid)) end = mid;
                else start = mid;
            }
            s = start;
        }
    }
    double v = smooth_ece(f, r, one, n, s);
    free(r); free(one);
    if (sigma_out && !isnan(v)) *sigma_out = s;
    return v;
}
