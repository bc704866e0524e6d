/* Smooth ECE with the kernel sums done exactly (see calscope/smece.h for the definition). */
#include "calscope/smece.h"

#include <math.h>
#include <stdlib.h>

/* Images farther than CUT * sigma from a point are left out of its kernel sum: their weight is
 * below exp(-CUT^2 / 2) = 3e-18 of the peak, under the last bit of any sum they join. */
#define CUT 9.0

typedef struct img { double c, w; } img;   /* an image's centre and its weight r_i / n */

/* The samples as (f, r / n), sorted by f then by weight: a total order on the values, so
 * every sum below is formed in an order that does not depend on the order of the rows. */
static int by_value(const void *a, const void *b)
{
    const img *x = a, *y = b;
    if (x->c != y->c) return (x->c > y->c) - (x->c < y->c);
    return (x->w > y->w) - (x->w < y->w);
}

/* Samples with the same f share their kernel: one pair with the weights summed (in the sorted
 * order), so repeated values (a bootstrap draw, confidences of exactly 1) cost one image.
 * *m gets the number of distinct values. */
static img *sorted_pairs(const double *f, const double *y, size_t n, size_t *m)
{
    img *p = malloc((n ? n : 1) * sizeof *p);
    if (!p) return NULL;
    for (size_t i = 0; i < n; i++) p[i] = (img){ f[i], (f[i] - y[i]) / (double)n };
    qsort(p, n, sizeof *p, by_value);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (k && p[k - 1].c == p[i].c) p[k - 1].w += p[i].w;
        else p[k++] = p[i];
    }
    *m = k;
    return p;
}

/* All images 2k + f and 2k - f of the sorted pairs with their centre in [-CUT s, 1 + CUT s],
 * in centre order without a sort: the images of unit interval [j, j+1] are j + f (j even,
 * f ascending) or j + 1 - f (j odd, f descending). */
static img *images(const img *p, size_t n, double s, size_t *count)
{
    double W = CUT * s;
    long j0 = (long)floor(-W), j1 = (long)floor(1.0 + W);
    size_t m = 0;
    img *im = malloc((n * (size_t)(j1 - j0 + 1) + 1) * sizeof *im);
    if (!im) return NULL;
    for (long j = j0; j <= j1; j++) {
        int odd = (int)(((j % 2) + 2) % 2);
        for (size_t q = 0; q < n; q++) {
            const img *x = &p[odd ? n - 1 - q : q];
            double c = odd ? (double)(j + 1) - x->c : (double)j + x->c;
            if (c >= -W && c <= 1.0 + W) im[m++] = (img){ c, x->w };
        }
    }
    *count = m;
    return im;
}

/* First image with centre >= x. */
static size_t lower(const img *im, size_t m, double x)
{
    size_t lo = 0, hi = m;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (im[mid].c < x) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* The smoothed residual (1/n) sum r_i K_s(t, f_i), every term with its own exp. */
static double g_at(const img *im, size_t m, double t, double s)
{
    double sum = 0.0, hi = t + CUT * s;
    for (size_t j = lower(im, m, t - CUT * s); j < m && im[j].c <= hi; j++) {
        double z = (t - im[j].c) / s;
        sum += im[j].w * exp(-0.5 * z * z);
    }
    return sum / (s * sqrt(2.0 * M_PI));
}

/* The smoothed residual (up to its positive factor) on the grid t_j = j / G, j = 0..G, only
 * to find where it changes sign: each image's Gaussian over the grid points it reaches by the
 * recurrence e_{j+1} = e_j q_j, q_{j+1} = q_j exp(-a^2) (a = 1 / (G s)), one exp per image
 * and not per point (relative error below 1e-13). Values this close to zero are redone from
 * the exact sums by the caller; the roots and the integrals always are. The step is s/8: a
 * coarser s/2 missed a pair of sign changes on breast_cancer_logreg class:1 (smECE 7e-7 low). */
static void grid(const img *im, size_t m, double s, size_t G, double *g)
{
    double a = 1.0 / ((double)G * s), r = exp(-a * a), W = CUT * s;
    for (size_t j = 0; j <= G; j++) g[j] = 0.0;
    for (size_t k = 0; k < m; k++) {
        double lo = ceil((im[k].c - W) * (double)G), hi = floor((im[k].c + W) * (double)G);
        if (lo < 0) lo = 0;
        if (hi > (double)G) hi = (double)G;
        if (lo > hi) continue;
        double d = (lo / (double)G - im[k].c) / s;
        double e = exp(-0.5 * d * d), q = exp(-(d * a + 0.5 * a * a)), w = im[k].w;
        for (size_t j = (size_t)lo; j <= (size_t)hi; j++) {
            g[j] += w * e;
            e *= q;
            q *= r;
        }
    }
}

/* Phi(u) - Phi(l) for l <= u, from the tail on the side that keeps the digits. */
static double phi_diff(double u, double l)
{
    const double r2 = M_SQRT1_2;
    if (l >= 0) return 0.5 * (erfc(l * r2) - erfc(u * r2));
    if (u <= 0) return 0.5 * (erfc(-u * r2) - erfc(-l * r2));
    return 1.0 - 0.5 * erfc(u * r2) - 0.5 * erfc(-l * r2);
}

/* Integral of the smoothed residual over [a, b]. */
static double integral(const img *im, size_t m, double a, double b, double s)
{
    double sum = 0.0;
    for (size_t j = lower(im, m, a - CUT * s); j < m && im[j].c <= b + CUT * s; j++)
        sum += im[j].w * phi_diff((b - im[j].c) / s, (a - im[j].c) / s);
    return sum;
}

/* A zero of fn in (a, b), fa and fb of opposite signs: false position with the Illinois
 * halving (superlinear, the bracket always kept), until the bracket or the step is below
 * 1e-15. Returns the last point tried, or a zero found exactly. */
typedef double (*fn_t)(const void *ctx, double x);
static double illinois(fn_t fn, const void *ctx, double a, double fa, double b, double fb)
{
    int side = 0;
    double x = 0.5 * (a + b);
    for (int it = 0; it < 100 && b - a > 1e-15; it++) {
        double nx = (a * fb - b * fa) / (fb - fa);
        if (!(nx > a && nx < b)) nx = 0.5 * (a + b);
        if (fabs(nx - x) < 1e-16 && it > 0) break;
        x = nx;
        double fx = fn(ctx, x);
        if (fx == 0.0) return x;
        if ((fx < 0) == (fa < 0)) {
            a = x; fa = fx;
            if (side == -1) fb *= 0.5;
            side = -1;
        } else {
            b = x; fb = fx;
            if (side == 1) fa *= 0.5;
            side = 1;
        }
    }
    return x;
}

/* The smoothed residual and its derivative at t, one exp per image for both. */
static double g_and_slope(const img *im, size_t m, double t, double s, double *slope)
{
    double sum = 0.0, dsum = 0.0, hi = t + CUT * s;
    for (size_t j = lower(im, m, t - CUT * s); j < m && im[j].c <= hi; j++) {
        double z = (t - im[j].c) / s, e = im[j].w * exp(-0.5 * z * z);
        sum += e;
        dsum -= z * e;
    }
    double k = 1.0 / (s * sqrt(2.0 * M_PI));
    *slope = dsum * k / s;
    return sum * k;
}

/* A zero of the smoothed residual in (a, b), g(a) and g(b) of opposite signs: Newton's method
 * from the secant point, every step kept inside the bracket (a step that would leave it, or a
 * flat slope, bisects instead), until the step or the bracket is below 1e-15. Newton rather
 * than false position: each evaluation gives the slope with the same exps, and the roots
 * converge in three or four evaluations instead of eight (the bootstrap's smooth ECE spends its
 * time here). Returns the last point tried, or a zero found exactly. */
static double root_in(const img *im, size_t m, double s, double a, double fa, double b, double fb)
{
    double x = (a * fb - b * fa) / (fb - fa);
    if (!(x > a && x < b)) x = 0.5 * (a + b);
    for (int it = 0; it < 100; it++) {
        double d, fx = g_and_slope(im, m, x, s, &d);
        if (fx == 0.0) return x;
        if ((fx < 0) == (fa < 0)) { a = x; fa = fx; }
        else b = x;
        double nx = d != 0.0 ? x - fx / d : a;
        if (fabs(nx - x) < 1e-15 || b - a < 1e-15) return x;   /* x is the root to 1e-15 */
        if (!(nx > a && nx < b)) nx = 0.5 * (a + b);
        x = nx;
    }
    return x;
}

static double at_sorted(const img *p, size_t n, double sigma)
{
    size_t m, G = (size_t)ceil(8.0 / sigma);
    if (G < 64) G = 64;
    img *im = images(p, n, sigma, &m);
    double *g = im ? malloc((G + 1) * sizeof *g) : NULL;
    if (!g) {
        free(im);
        return NAN;
    }
    grid(im, m, sigma, G, g);
    /* where the grid's value is within its rounding of zero, its sign is taken from the exact
     * sums, so a root on (or next to) a grid point is seen from both of its sides alike */
    double scale = 0.0;
    for (size_t k = 0; k < m; k++) scale += fabs(im[k].w);
    for (size_t j = 0; j <= G; j++)
        if (fabs(g[j]) <= 1e-9 * scale) g[j] = g_at(im, m, j == G ? 1.0 : (double)j / (double)G, sigma);
    double total = 0.0, a = 0.0;
    for (size_t j = 1; j <= G; j++) {
        double t0 = (double)(j - 1) / (double)G, t1 = j == G ? 1.0 : (double)j / (double)G, z;
        if (g[j] == 0.0) z = t1;                   /* a root on the grid */
        else if (g[j - 1] == 0.0 || (g[j - 1] < 0) == (g[j] < 0)) continue;
        else {
            /* the sign changes in (t_{j-1}, t_j) (signs the grid gets right: values near zero
             * were redone above): the root from the exact sums */
            z = root_in(im, m, sigma, t0, g[j - 1], t1, g[j]);
        }
        if (z <= a) continue;
        total += fabs(integral(im, m, a, z, sigma));
        a = z;
    }
    if (a < 1.0) total += fabs(integral(im, m, a, 1.0, sigma));
    free(g);
    free(im);
    return total;
}

double cs_smece_at(const double *f, const double *y, size_t n, double sigma)
{
    if (n == 0 || !(sigma > 0)) return NAN;
    size_t m;
    img *p = sorted_pairs(f, y, n, &m);
    double v = p ? at_sorted(p, m, sigma) : NAN;
    free(p);
    return v;
}

typedef struct hctx { const img *p; size_t n; int failed; double last_s, last_v; } hctx;
/* h(s) = s - smECE_s: negative where relplot's predicate holds. The last smECE_s is kept:
 * the search usually ends on the point it tried last. */
static double h_fn(const void *ctx, double s)
{
    hctx *c = (hctx *)ctx;
    double v = at_sorted(c->p, c->n, s);
    if (isnan(v)) c->failed = 1;
    c->last_s = s;
    c->last_v = v;
    return s - v;
}

/* relplot's automatic bandwidth (metrics.py smECE, search_param): the predicate
 * p(a) = a < eps or a < smECE_a is tried at 1 (p(1): s* = 1); otherwise relplot bisects
 * [0, 1] ten times, keeping p true at the low end and false at the high end, and returns the
 * high end (a multiple of 1/1024). Here the same predicate on the same bracket (from eps, where
 * relplot's predicate starts being decided by smECE), narrowed to 1e-15 by false position
 * instead of ten halvings: s* is the smallest s >= eps with s >= smECE_s, i.e. the fixed point
 * s = smECE_s (smECE_s falls as s grows: smoothing further is an L1 contraction, so h below
 * rises and the fixed point is unique), or eps when smECE_eps <= eps.
 * With a hint (a bandwidth near s*: the whole file's, for a bootstrap draw of it) the bracket
 * is first sought around the hint, steps of 1.25x, falling back on eps and mean |r|: the same
 * unique fixed point in about half the evaluations. */
static double auto_search(const double *f, const double *y, size_t n, double hint,
                          double *sigma_out)
{
    if (sigma_out) *sigma_out = NAN;
    if (n == 0) return NAN;
    size_t m;
    img *p = sorted_pairs(f, y, n, &m);
    if (!p) return NAN;
    hctx c = { p, m, 0, NAN, NAN };
    /* smECE_s <= mean |r_i| for every s (the kernel's mass on [0, 1] is 1), so p fails from
     * s = mean |r_i| up: the bracket's high end, where relplot starts from 1 */
    double mr = 0.0;
    for (size_t i = 0; i < n; i++) mr += fabs(f[i] - y[i]);
    mr /= (double)n;
    double s;
    if (mr >= 1.0) {
        s = 1.0;   /* smECE_s < s for every s < 1: relplot's halvings never leave 1 */
    } else if (mr <= CS_SMECE_EPS) {
        s = CS_SMECE_EPS;
    } else {
        double lo = CS_SMECE_EPS, hi = mr, hlo = NAN, hhi = NAN;
        if (hint > CS_SMECE_EPS && hint < mr) {
            double x = hint, hx = h_fn(&c, x);
            if (hx < 0) {   /* s* above the hint: step up */
                lo = x; hlo = hx;
                for (x *= 1.25; x < mr; x *= 1.25) {
                    if ((hx = h_fn(&c, x)) >= 0) { hi = x; hhi = hx; break; }
                    lo = x; hlo = hx;
                }
            } else {        /* at or below the hint: step down */
                hi = x; hhi = hx;
                for (x /= 1.25; x > CS_SMECE_EPS; x /= 1.25) {
                    if ((hx = h_fn(&c, x)) < 0) { lo = x; hlo = hx; break; }
                    hi = x; hhi = hx;
                }
            }
        }
        if (isnan(hlo)) hlo = h_fn(&c, lo);
        if (lo == CS_SMECE_EPS && hlo >= 0) s = CS_SMECE_EPS;
        else {
            if (isnan(hhi)) hhi = h_fn(&c, hi);
            s = hhi <= 0 ? hi : illinois(h_fn, &c, lo, hlo, hi, hhi);
        }
    }
    double v = c.failed ? NAN : c.last_s == s ? c.last_v : at_sorted(p, m, s);
    free(p);
    if (sigma_out && !isnan(v)) *sigma_out = s;
    return v;
}

double cs_smece_auto(const double *f, const double *y, size_t n, double *sigma_out)
{
    return auto_search(f, y, n, NAN, sigma_out);
}

double cs_smece_auto_near(const double *f, const double *y, size_t n, double hint,
                          double *sigma_out)
{
    return auto_search(f, y, n, hint, sigma_out);
}
