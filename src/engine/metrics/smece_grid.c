/* Smooth ECE: the view of the kernel's reflected images over the sorted pairs, and the grid
 * of the smoothed residual that only locates its sign changes (see smece_view.h). */
#include "smece_view.h"

#include <math.h>
#include <stdlib.h>

/* First position of segment g with centre >= x (g->z when none). */
static size_t seg_lower(const view *v, const seg *g, double x)
{
    size_t lo = g->a, hi = g->z;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (centre(v, g, mid) < x) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

int cs_smece_view(view *v, const pairs *P, double s)
{
    double W = CUT * s;
    long j0 = (long)floor(-W), j1 = (long)floor(1.0 + W);
    v->P = P;
    v->n = P->n;
    size_t n = P->n;
    v->nseg = 0;
    if (j1 - j0 + 1 > MAXSEG) return -1;
    for (long j = j0; j <= j1; j++) {
        seg g = { j, (int)(((j % 2) + 2) % 2), 0, n };
        /* the kept run: centre >= -W from seg_lower, centre <= 1 + W up to the first above */
        g.a = seg_lower(v, &g, -W);
        size_t lo = g.a, hi = n;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (centre(v, &g, mid) <= 1.0 + W) lo = mid + 1;
            else hi = mid;
        }
        g.z = lo;
        if (g.a < g.z) v->sg[v->nseg++] = g;
    }
    return 0;
}

void cs_smece_lower(const view *v, double x, int *k, size_t *q)
{
    for (*k = 0; *k < v->nseg; (*k)++) {
        const seg *g = &v->sg[*k];
        if (centre(v, g, g->z - 1) >= x) {
            *q = seg_lower(v, g, x);
            return;
        }
    }
    *q = 0;
}

/* The smoothed residual (up to its positive factor) on the grid t_j = j / G, j = 0..G, only
 * to find where it changes sign. Each image c is taken to its nearest grid index q with
 * x = (c - q/G) / s (|x| <= u/2, u = 1/(G s) <= 1/8), so that at t_j, m = j - q,
 *   exp(-(t_j - c)^2 / 2s^2) = exp(-m^2 u^2 / 2) exp(m u x) exp(-x^2 / 2)
 * and exp(m u x) (|m u x| < 0.58 inside the CUT window) is its Taylor series to NT = 14
 * terms (remainder below 6e-15 of the weight: the sign test below needs 1e-9). The images then enter only through the moments
 *   mu[q][p] = sum over the images at q of w exp(-x^2/2) x^p,
 * and the grid is a short convolution of the moments: one exp and NT products per sample
 * where the recurrence over the grid cost ~18 G s products per image (145 at G s = 8). The
 * images' moments are the pairs' (f in [0, 1]) moved by whole grid steps: image j + f sits at
 * q + jG with the same x, image j + 1 - f at (j+1)G - q with -x (moment p times (-1)^p).
 * Absolute error below 1e-14 of sum |w|: grid values within 1e-9 of it are redone from the
 * exact sums by the caller, so the signs used are those of the exact sums and the numbers do
 * not depend on this approximation. Returns 0 or -1 (out of memory). */
#define NT 14
static int grid_moments(const view *v, double s, size_t G, double *g)
{
    const pairs *P = v->P;
    size_t n = v->n;
    double u = 1.0 / ((double)G * s);
    long R = (long)ceil(CUT / u) + 1;          /* grid steps an image reaches */
    size_t nq = G + 1, ne = G + 1 + 2 * (size_t)R;
    double *mu = calloc(nq * NT, sizeof *mu);  /* pairs' moments, q = 0..G */
    double *me = calloc(ne * NT, sizeof *me);  /* images' moments, q = -R..G+R */
    double *cf = malloc((size_t)(2 * R + 1) * NT * sizeof *cf);
    if (!mu || !me || !cf) {
        free(mu); free(me); free(cf);
        return -1;
    }
    /* the pairs are in value order, so q does not decrease: a run of equal q is summed in
     * registers and stored once */
    for (size_t i = 0; i < n;) {
        /* nearest index (f in [0, 1]; clamped for anything else) */
        double f0 = pair_f(P, i) * (double)G, qd = floor(f0 + 0.5), acc[NT] = {0};
        if (qd < 0) qd = 0;
        if (qd > (double)G) qd = (double)G;
        double qlo = qd == 0 ? -INFINITY : qd - 0.5, qhi = qd == (double)G ? INFINITY : qd + 0.5;
        for (; i < n; i++) {
            double fg = pair_f(P, i) * (double)G;
            if (!(fg >= qlo && fg < qhi)) break;
            /* exp(-x^2/2) for x^2/2 <= 1/512 by its series to y^7 (remainder below 1e-21);
             * two chains of powers (even and odd): half the dependent multiplies */
            double x = (fg - qd) * u, y = 0.5 * x * x;
            double e = pair_w(P, i) * (1.0 - y * (1.0 - y * 0.5 * (1.0 - y * (1.0 / 3) * (1.0 - y * 0.25 * (1.0 - y * 0.2 *
                                 (1.0 - y * (1.0 / 6) * (1.0 - y * (1.0 / 7))))))));
            double eo = e * x, x2 = x * x;
            for (int k = 0; k < NT; k += 2) {
                acc[k] += e;
                acc[k + 1] += eo;
                e *= x2;
                eo *= x2;
            }
        }
        double *m = mu + (size_t)qd * NT;
        for (int k = 0; k < NT; k++) m[k] += acc[k];
    }
    for (int k = 0; k < v->nseg; k++) {
        long j = v->sg[k].j;
        int odd = v->sg[k].odd;
        long shift = odd ? (j + 1) * (long)G : j * (long)G;
        for (size_t q = 0; q < nq; q++) {
            long qq = odd ? shift - (long)q : shift + (long)q;
            if (qq < -R || qq > (long)G + R) continue;
            double *dst = me + (size_t)(qq + R) * NT;
            const double *src = mu + q * NT;
            for (int t = 0; t < NT; t++) dst[t] += (odd && (t & 1)) ? -src[t] : src[t];
        }
    }
    for (long m = -R; m <= R; m++) {
        double mu_ = (double)m * u, c = exp(-0.5 * mu_ * mu_), *row = cf + (size_t)(m + R) * NT;
        for (int t = 0; t < NT; t++) {
            row[t] = c;
            c *= mu_ / (double)(t + 1);
        }
    }
    for (size_t j = 0; j <= G; j++) {
        double sum = 0.0;
        for (long m = -R; m <= R; m++) {
            const double *mm = me + (size_t)((long)j - m + R) * NT, *row = cf + (size_t)(m + R) * NT;
            for (int t = 0; t < NT; t++) sum += row[t] * mm[t];
        }
        g[j] = sum;
    }
    free(mu);
    free(me);
    free(cf);
    return 0;
}

/* The same grid image by image: each image's Gaussian over the grid points it reaches by the
 * recurrence e_{j+1} = e_j q_j, q_{j+1} = q_j exp(-a^2) (a = 1 / (G s)), one exp per image
 * and not per point (relative error below 1e-13; it grows with the square of the run, so with
 * restart > 0 it starts again from exact exps every `restart` points: 16 keeps each term's
 * Gaussian to 2e-14, what the smoothed reliability curve needs). About 18 G s products per image: cheaper
 * than the moments' fixed (G + 1)(2R + 1) NT for a few thousand samples (a bootstrap draw). */
void cs_smece_grid_direct(const view *v, double s, size_t G, size_t restart, double *g)
{
    double a = 1.0 / ((double)G * s), r = exp(-a * a), W = CUT * s;
    for (size_t j = 0; j <= G; j++) g[j] = 0.0;
    for (int k = 0; k < v->nseg; k++) {
        const seg *sg = &v->sg[k];
        for (size_t q0 = sg->a; q0 < sg->z; q0++) {
            double c = centre(v, sg, q0);
            double lo = ceil((c - W) * (double)G), hi = floor((c + W) * (double)G);
            if (lo < 0) lo = 0;
            if (hi > (double)G) hi = (double)G;
            if (lo > hi) continue;
            double d = (lo / (double)G - c) / s;
            double e = exp(-0.5 * d * d), q = exp(-(d * a + 0.5 * a * a)), w = weight(v, sg, q0);
            size_t since = 0;
            for (size_t j = (size_t)lo; j <= (size_t)hi; j++, since++) {
                if (restart && since == restart) {   /* exact again: the error stays short */
                    d = ((double)j / (double)G - c) / s;
                    e = exp(-0.5 * d * d);
                    q = exp(-(d * a + 0.5 * a * a));
                    since = 0;
                }
                g[j] += w * e;
                e *= q;
                q *= r;
            }
        }
    }
}

/* The grid by whichever way costs less here (both give the exact sums' signs, see
 * grid_moments). */
int cs_smece_grid(const view *v, double s, size_t G, double *g)
{
    size_t images = 0;
    for (int k = 0; k < v->nseg; k++) images += v->sg[k].z - v->sg[k].a;
    double R = ceil(CUT * (double)G * s) + 1;
    double direct = (double)images * (2.0 * CUT * s * (double)G + 1.0) * 3.0;
    double moments = (double)v->n * (NT + 8) + (double)(G + 1) * (2.0 * R + 1.0) * NT * 2.0 +
                     (double)v->nseg * (double)(G + 1) * NT;
    if (direct <= moments) {
        cs_smece_grid_direct(v, s, G, 0, g);
        return 0;
    }
    return grid_moments(v, s, G, g);
}

