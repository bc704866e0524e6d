/* Smooth ECE and relplot's smoothed reliability curve, the kernel sums done exactly (see
 * calscope/smece.h for the definitions). */
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

/* What each sample weighs in a kernel sum: its residual (f - y) / n for the smooth ECE; its
 * label y / n and 1 / n for the smoothed reliability curve's numerator and density. */
typedef enum weight { W_RESIDUAL, W_LABEL, W_ONE } weight;

static double weight_of(weight k, double f, double y, size_t n)
{
    return (k == W_RESIDUAL ? f - y : k == W_LABEL ? y : 1.0) / (double)n;
}

/* Samples with the same f share their kernel: one pair with the weights summed (in the sorted
 * order), so repeated values (a bootstrap draw, confidences of exactly 1) cost one image.
 * *m gets the number of distinct values. */
static img *sorted_pairs(const double *f, const double *y, size_t n, weight kind, size_t *m)
{
    img *p = malloc((n ? n : 1) * sizeof *p);
    if (!p) return NULL;
    for (size_t i = 0; i < n; i++) p[i] = (img){ f[i], weight_of(kind, f[i], y[i], n) };
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

/* The kernel sum (up to its positive factor 1 / (s sqrt(2 pi))) on the grid t_j = j / G,
 * j = 0..G: each image's Gaussian over the grid points it reaches by the recurrence
 * e_{j+1} = e_j q_j, q_{j+1} = q_j exp(-a^2) (a = 1 / (G s)), one exp per image and not per
 * point. The recurrence's relative error grows with the square of its length; with restart > 0
 * it starts again from exact exps every `restart` points (16: below 2e-14), with 0 it runs
 * on (relative error below 1e-13 at the smooth ECE's step s/8). The smooth ECE uses it only to
 * find where the smoothed residual changes sign: values this close to zero are redone from
 * the exact sums by the caller; the roots and the integrals always are. Its step is s/8: a
 * coarser s/2 missed a pair of sign changes on breast_cancer_logreg class:1 (smECE 7e-7 low). */
static void grid(const img *im, size_t m, double s, size_t G, size_t restart, double *g)
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
        size_t since = 0;
        for (size_t j = (size_t)lo; j <= (size_t)hi; j++, since++) {
            if (restart && since == restart) {
                d = ((double)j / (double)G - im[k].c) / s;
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

typedef struct gctx { const img *im; size_t m; double s; } gctx;
static double g_fn(const void *ctx, double t)
{
    const gctx *c = ctx;
    return g_at(c->im, c->m, t, c->s);
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
    grid(im, m, sigma, G, 0, g);
    gctx c = { im, m, sigma };
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
            /* the sign changes in (t_{j-1}, t_j): the root from the exact sums */
            double g0 = g_at(im, m, t0, sigma), g1 = g_at(im, m, t1, sigma);
            if (g0 == 0.0) z = t0;
            else if (g1 == 0.0) z = t1;
            else if ((g0 < 0) != (g1 < 0)) z = illinois(g_fn, &c, t0, g0, t1, g1);
            else z = fabs(g0) < fabs(g1) ? t0 : t1;   /* both within rounding of zero */
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
    img *p = sorted_pairs(f, y, n, W_RESIDUAL, &m);
    double v = p ? at_sorted(p, m, sigma) : NAN;
    free(p);
    return v;
}

typedef struct hctx { const img *p; size_t n; int failed; } hctx;
/* h(s) = s - smECE_s: negative where relplot's predicate holds. */
static double h_fn(const void *ctx, double s)
{
    hctx *c = (hctx *)ctx;
    double v = at_sorted(c->p, c->n, s);
    if (isnan(v)) c->failed = 1;
    return s - v;
}

/* relplot's automatic bandwidth (metrics.py smECE, search_param): the predicate
 * p(a) = a < eps or a < smECE_a is tried at 1 (p(1): s* = 1); otherwise relplot bisects
 * [0, 1] ten times, keeping p true at the low end and false at the high end, and returns the
 * high end (a multiple of 1/1024). Here the same predicate on the same bracket (from eps, where
 * relplot's predicate starts being decided by smECE), narrowed to 1e-15 by false position
 * instead of ten halvings: s* is the smallest s >= eps with s >= smECE_s, i.e. the fixed point
 * s = smECE_s (smECE_s falls as s grows), or eps when smECE_eps <= eps. */
double cs_smece_auto(const double *f, const double *y, size_t n, double *sigma_out)
{
    if (sigma_out) *sigma_out = NAN;
    if (n == 0) return NAN;
    size_t m;
    img *p = sorted_pairs(f, y, n, W_RESIDUAL, &m);
    if (!p) return NAN;
    hctx c = { p, m, 0 };
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
        double he = h_fn(&c, CS_SMECE_EPS);
        if (he >= 0) s = CS_SMECE_EPS;
        else {
            double hh = h_fn(&c, mr);
            s = hh <= 0 ? mr : illinois(h_fn, &c, CS_SMECE_EPS, he, mr, hh);
        }
    }
    double v = c.failed ? NAN : at_sorted(p, m, s);
    free(p);
    if (sigma_out && !isnan(v)) *sigma_out = s;
    return v;
}

/* The images of the pairs (f_i, w_i) with weights of kind k, or NULL when out of memory. */
static img *images_of(const double *f, const double *y, size_t n, weight k, double s, size_t *count)
{
    size_t m;
    img *p = sorted_pairs(f, y, n, k, &m);
    img *im = p ? images(p, m, s, count) : NULL;
    free(p);
    return im;
}

int cs_smece_curve(const double *f, const double *y, size_t n, double sigma, size_t points,
                   double *mu, double *density)
{
    if (n == 0 || points < 2 || !(sigma > 0)) return -1;
    size_t ml, m1;
    img *lab = images_of(f, y, n, W_LABEL, sigma, &ml);
    img *one = lab ? images_of(f, y, n, W_ONE, sigma, &m1) : NULL;
    if (!one) {
        free(lab);
        return -1;
    }
    /* Both sums on the mesh by grid(), its recurrence restarted every 16 points: one exp per
     * 16 (image, point) pairs, every term's Gaussian to 2e-14 relative, and the weights are
     * positive, so the sums keep that (test_estimators compares with numpy's exp at every
     * term, to 1e-12). Exps at every pair (g_at) took 10 s instead of 4 for a dashboard
     * recompute on 10^6 distinct values at sigma 0.094. */
    size_t G = points - 1;
    double *num = malloc(points * sizeof *num);
    if (!num) {
        free(lab);
        free(one);
        return -1;
    }
    grid(lab, ml, sigma, G, 16, num);
    grid(one, m1, sigma, G, 16, density);
    double norm = sigma * sqrt(2.0 * M_PI);
    for (size_t j = 0; j < points; j++) {
        /* relplot's mu = sum K y / (sum K + 1e-4) keeps its 1e-4 from dividing by zero; here
         * mu is NAN only where no image is within CUT sigma */
        mu[j] = density[j] > 0 ? num[j] / density[j] : NAN;
        density[j] /= norm;
    }
    free(num);
    free(lab);
    free(one);
    return 0;
}
