/* Smooth ECE with the kernel sums done exactly (see engine/metrics/smece.h for the definition). */
#include "engine/metrics/smece.h"

#include <math.h>
#include <stdlib.h>

#include "mx.h"
#include "smece_view.h"

/* The samples as (f, r / n), sorted by f then by weight: a total order on the values, so
 * every sum below is formed in an order that does not depend on the order of the rows. */
static int by_value(const void *a, const void *b)
{
    const img *x = a, *y = b;
    if (x->c != y->c) return (x->c > y->c) - (x->c < y->c);
    return (x->w > y->w) - (x->w < y->w);
}

/* p[0..n) filled with (f, r / n): sorted by (f, w), then equal f merged. Samples with the same
 * f share their kernel: one pair with the weights summed (in the sorted order), so repeated
 * values (a bootstrap draw, confidences of exactly 1) cost one image. Returns the number of
 * distinct values. */
static size_t sort_merge(img *p, size_t n, int ascending)
{
    if (!ascending) {
        qsort(p, n, sizeof *p, by_value);
    } else {
        /* already in value order (the metrics pass f sorted): only runs of equal values need
         * their weights ordered, which gives the same array as the sort */
        for (size_t i = 0, r; i < n; i = r) {
            for (r = i + 1; r < n && p[r].c == p[i].c; r++) {}
            if (r - i > 1) qsort(p + i, r - i, sizeof *p, by_value);
        }
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (k && p[k - 1].c == p[i].c) p[k - 1].w += p[i].w;
        else p[k++] = p[i];
    }
    return k;
}

/* What each sample weighs in a kernel sum: its residual (f - y) / n for the smooth ECE; its
 * label y / n and 1 / n for the smoothed reliability curve's numerator and density. */
typedef enum wkind { W_RESIDUAL, W_LABEL, W_ONE } wkind;

static img *pairs_of(const double *f, const double *y, size_t n, wkind kind, size_t *m)
{
    img *p = malloc((n ? n : 1) * sizeof *p);
    if (!p) return NULL;
    int ascending = 1;
    for (size_t i = 0; i < n; i++) {
        double w = kind == W_RESIDUAL ? f[i] - y[i] : kind == W_LABEL ? y[i] : 1.0;
        p[i] = (img){ f[i], w / (double)n };
        if (i && f[i] < f[i - 1]) ascending = 0;
    }
    *m = sort_merge(p, n, ascending);
    return p;
}

static img *sorted_pairs(const double *f, const double *y, size_t n, size_t *m)
{
    return pairs_of(f, y, n, W_RESIDUAL, m);
}

/* The smoothed residual and its derivative at t, one exp per image for both. */
static double g_and_slope(const view *v, double t, double s, double *slope)
{
    double sum = 0.0, dsum = 0.0, hi = t + CUT * s;
    int k;
    size_t q;
    for (cs_smece_lower(v, t - CUT * s, &k, &q); k < v->nseg; k++, q = k < v->nseg ? v->sg[k].a : 0) {
        const seg *g = &v->sg[k];
        for (; q < g->z; q++) {
            double c = centre(v, g, q);
            if (c > hi) goto done;
            double z = (t - c) / s, e = weight(v, g, q) * exp(-0.5 * z * z);
            sum += e;
            dsum -= z * e;
        }
    }
done:;
    double norm = s * sqrt(2.0 * M_PI);
    *slope = dsum / norm / s;
    return sum / norm;
}

/* The smoothed residual (1/n) sum r_i K_s(t, f_i), every term with its own exp. */
static double g_at(const view *v, double t, double s)
{
    double slope;
    return g_and_slope(v, t, s, &slope);
}

/* A zero of the smoothed residual in (a, b), g(a) and g(b) of opposite signs: Newton's method
 * from the secant point, every step kept inside the bracket (a step that would leave it, or a
 * flat slope, bisects instead), until the step or the bracket is below 1e-15. Newton rather
 * than false position: each evaluation gives the slope with the same exps, and a root takes
 * three or four evaluations instead of eight (the bootstrap's smooth ECE spends its time
 * here). Returns the root to 1e-15, or a zero found exactly. */
double cs_smece_root(cs_smece_gfn g, const void *ctx, double a, double fa, double b, double fb)
{
    double x = (a * fb - b * fa) / (fb - fa);
    if (!(x > a && x < b)) x = 0.5 * (a + b);
    for (int it = 0; it < 100; it++) {
        double d, fx = g(ctx, x, &d);
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

typedef struct gctx { const view *v; double s; } gctx;
static double g_of_view(const void *ctx, double t, double *slope)
{
    const gctx *c = ctx;
    return g_and_slope(c->v, t, c->s, slope);
}

/* Phi(u) - Phi(l) for l <= u, from the tail on the side that keeps the digits:
 * - both on one side of the centre: half the difference of the two tails A - B (B the far
 *   one). erfc is log-concave, so B / A <= erfc(d) for arguments d apart, which is below
 *   2^-55 from d = 6 on (erfc(6) = 2.2e-17): then A - B rounds to A, and B is not computed
 *   (6.01: margin for the rounding of the arguments and of erfc itself);
 * - across the centre: 1 - A/2 - B/2, and a tail whose argument is >= 6 (erfc <= 2.2e-17,
 *   below half an ulp of the difference from 1, which is in (0.5, 1]) changes nothing.
 * Bit for bit the value of the plain formulas; about a third fewer erfc calls when the
 * interval is wide against s (one smECE_s integral over all of [0, 1]). */
double cs_smece_phi_diff(double u, double l)
{
    const double r2 = M_SQRT1_2;
    if (l >= 0) {
        double xl = l * r2, xu = u * r2;
        return xu - xl >= 6.01 ? 0.5 * erfc(xl) : 0.5 * (erfc(xl) - erfc(xu));
    }
    if (u <= 0) {
        double xu = -u * r2, xl = -l * r2;
        return xl - xu >= 6.01 ? 0.5 * erfc(xu) : 0.5 * (erfc(xu) - erfc(xl));
    }
    double zu = u * r2, zl = -l * r2, r = 1.0;
    if (zu < 6.0) r -= 0.5 * erfc(zu);
    if (zl < 6.0) r -= 0.5 * erfc(zl);
    return r;
}

/* Integral of the smoothed residual over [a, b]: the images within CUT s of it, in centre
 * order, sum += w Phi-difference. The terms (two erfc each, most of smECE's cost) are
 * independent, so a long window computes them in blocks on two threads and adds them up in
 * the same order afterwards: the same sum, bit for bit, whatever the thread count. */
#define IBLOCK 65536u

typedef struct iwin {
    const view *v;
    int nrun;
    int k[MAXSEG];                 /* segment of each run */
    size_t qa[MAXSEG], off[MAXSEG + 1];
    double a, b, s;
    size_t base;                   /* first term of the current block pair */
    double *buf;                   /* 2 * IBLOCK terms */
} iwin;

/* Terms from..to-1 of the window (0 = its first image) into out. */
static void terms(const iwin *w, size_t from, size_t to, double *out)
{
    int r = 0;
    while (w->off[r + 1] <= from) r++;
    size_t q = w->qa[r] + (from - w->off[r]);
    for (size_t i = from; i < to; i++, q++) {
        if (i == w->off[r + 1]) {
            r++;
            q = w->qa[r];
        }
        const seg *g = &w->v->sg[w->k[r]];
        double c = centre(w->v, g, q);
        out[i - from] = weight(w->v, g, q) * cs_smece_phi_diff((w->b - c) / w->s, (w->a - c) / w->s);
    }
}

static void terms_block(void *ctx, size_t half)
{
    iwin *w = ctx;
    size_t from = w->base + half * IBLOCK, total = w->off[w->nrun];
    size_t to = from + IBLOCK < total ? from + IBLOCK : total;
    if (from < to) terms(w, from, to, w->buf + half * IBLOCK);
}

static double integral(const view *v, double a, double b, double s, int threads)
{
    double sum = 0.0, hi = b + CUT * s;
    iwin w = { .v = v, .a = a, .b = b, .s = s };
    int k;
    size_t q;
    /* the runs of the window: from the first image >= a - CUT s to the last <= hi */
    for (cs_smece_lower(v, a - CUT * s, &k, &q); k < v->nseg; k++, q = k < v->nseg ? v->sg[k].a : 0) {
        const seg *g = &v->sg[k];
        size_t lo = q, up = g->z;
        while (lo < up) {
            size_t mid = lo + (up - lo) / 2;
            if (centre(v, g, mid) <= hi) lo = mid + 1;
            else up = mid;
        }
        if (q < lo) {
            w.k[w.nrun] = k;
            w.qa[w.nrun] = q;
            w.off[w.nrun + 1] = w.off[w.nrun] + (lo - q);
            w.nrun++;
        }
        if (lo < g->z) break;      /* an image above hi: the window ends here */
    }
    size_t total = w.off[w.nrun];
    double one[256];
    if (total <= 2 * IBLOCK || !threads) {
        for (size_t i = 0; i < total; i += 256) {
            size_t z = i + 256 < total ? i + 256 : total;
            terms(&w, i, z, one);
            for (size_t j = 0; j < z - i; j++) sum += one[j];
        }
        return sum;
    }
    w.buf = malloc(2 * IBLOCK * sizeof *w.buf);
    for (w.base = 0; w.base < total; w.base += 2 * IBLOCK) {
        size_t z = w.base + 2 * IBLOCK < total ? w.base + 2 * IBLOCK : total;
        if (w.buf) {
            cs_mx_chunks(2, 1, terms_block, &w);
            for (size_t j = 0; j < z - w.base; j++) sum += w.buf[j];
        } else {
            /* no memory for the blocks: the same terms one short run at a time */
            for (size_t i = w.base; i < z; i += 256) {
                size_t e = i + 256 < z ? i + 256 : z;
                terms(&w, i, e, one);
                for (size_t j = 0; j < e - i; j++) sum += one[j];
            }
        }
    }
    free(w.buf);
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

/* The independent pieces of one smECE_s, on two threads when the sample is large: the exact
 * sums at near-zero grid points, the roots in the sign-change cells, the integrals between
 * consecutive roots. Each piece is computed exactly as alone and written to its own slot;
 * the caller combines them in order, so the number does not depend on the threads. */
#define PAR_PAIRS 50000u
typedef struct pieces {
    const view *v;
    double s;
    size_t G;
    double *g;
    const size_t *at;      /* grid indices of the pieces */
    double *z;             /* roots (one per sign-change cell) */
    const double *lo, *hi; /* integration intervals */
    double *val;           /* their integrals */
    int inner;             /* an integral may use two threads itself */
} pieces;

static double tgrid(size_t j, size_t G)
{
    return j == G ? 1.0 : (double)j / (double)G;
}

static void fix_piece(void *ctx, size_t i)
{
    pieces *x = ctx;
    x->g[x->at[i]] = g_at(x->v, tgrid(x->at[i], x->G), x->s);
}

/* The root in cell (t_{j-1}, t_j), where the grid changes sign (signs the grid gets right:
 * values near zero were redone from the exact sums), from the exact sums. */
static void root_piece(void *ctx, size_t i)
{
    pieces *x = ctx;
    size_t j = x->at[i];
    gctx c = { x->v, x->s };
    x->z[i] = cs_smece_root(g_of_view, &c, tgrid(j - 1, x->G), x->g[j - 1], tgrid(j, x->G), x->g[j]);
}

static void integral_piece(void *ctx, size_t i)
{
    pieces *x = ctx;
    x->val[i] = integral(x->v, x->lo[i], x->hi[i], x->s, x->inner);
}

static double at_sorted(const pairs *P, double sigma)
{
    size_t G = (size_t)ceil(8.0 / sigma);
    if (G < 64) G = 64;
    view v;
    double *g = malloc((G + 1) * sizeof *g);
    /* scratch for the pieces: indices, roots, interval ends and values (G + 2 each) */
    size_t *at = malloc((G + 2) * sizeof *at);
    double *buf = malloc(4 * (G + 2) * sizeof *buf);
    if (!g || !at || !buf || cs_smece_view(&v, P, sigma) != 0 || cs_smece_grid(&v, sigma, G, g) != 0) {
        free(g); free(at); free(buf);
        return NAN;
    }
    size_t n = P->n;
    int par = n >= PAR_PAIRS;
    pieces x = { &v, sigma, G, g, at, buf, buf + (G + 2), buf + 2 * (G + 2), buf + 3 * (G + 2), 1 };
    /* where the grid's value is within its rounding of zero, its sign is taken from the exact
     * sums, so a root on (or next to) a grid point is seen from both of its sides alike */
    double sc[4] = {0};   /* the threshold's scale, sum |w| over the images (4 chains) */
    for (int k = 0; k < v.nseg; k++) {
        size_t a = v.sg[k].a, z = v.sg[k].z, i0 = v.sg[k].odd ? n - z : a, i1 = v.sg[k].odd ? n - a : z;
        size_t i = i0;
        for (; i + 4 <= i1; i += 4)
            for (int c4 = 0; c4 < 4; c4++) sc[c4] += fabs(pair_w(P, i + c4));
        for (; i < i1; i++) sc[0] += fabs(pair_w(P, i));
    }
    double scale = (sc[0] + sc[1]) + (sc[2] + sc[3]);
    size_t na = 0;
    for (size_t j = 0; j <= G; j++)
        if (fabs(g[j]) <= 1e-9 * scale) at[na++] = j;
    cs_mx_chunks(na, par, fix_piece, &x);
    /* the cells where the sign changes (a zero on the grid is a root by itself) */
    na = 0;
    for (size_t j = 1; j <= G; j++)
        if (g[j] != 0.0 && g[j - 1] != 0.0 && (g[j - 1] < 0) != (g[j] < 0)) at[na++] = j;
    cs_mx_chunks(na, par, root_piece, &x);
    /* the roots in order; each one past the last starts a new interval */
    double *lo = buf + (G + 2), *hi = buf + 2 * (G + 2), a = 0.0;
    size_t ni = 0;
    for (size_t j = 1, r = 0; j <= G; j++) {
        double z;
        if (g[j] == 0.0) z = tgrid(j, G);
        else if (r < na && at[r] == j) z = buf[r++];
        else continue;
        if (z <= a) continue;
        lo[ni] = a;
        hi[ni++] = z;
        a = z;
    }
    if (a < 1.0) {
        lo[ni] = a;
        hi[ni++] = 1.0;
    }
    x.inner = !(par && ni >= 2);   /* one level of threads: across intervals or inside one */
    cs_mx_chunks(ni, par && ni >= 2, integral_piece, &x);
    double total = 0.0;
    for (size_t i = 0; i < ni; i++) total += fabs(x.val[i]);
    free(g);
    free(at);
    free(buf);
    return total;
}

/* smECE_s of the pairs: from their boxes when these answer for s (b may be NULL), else from
 * the per-pair sums. */
static double value_at(const pairs *P, const sbox *b, double s)
{
    return b && cs_sbox_fits(b, s) ? cs_sbox_smece(b, s) : at_sorted(P, s);
}

/* The boxes of P in *b, or NULL when they cannot be built (memory) or cannot answer for the
 * fixed bandwidth s (s > 0; 0: a search, which may try any): the per-pair sums then. */
static const sbox *boxes_of(const pairs *P, sbox *b, double s)
{
    if (s > 0 && !(s >= CS_SBOX_MIN_SIGMA && s <= CS_SBOX_MAX_SIGMA)) return NULL;
    if (cs_sbox_build(b, P) != 0) return NULL;
    return b;
}

double cs_smece_at_by(const double *f, const double *y, size_t n, double sigma, int boxes)
{
    if (n == 0 || !(sigma > 0)) return NAN;
    size_t m;
    img *p = sorted_pairs(f, y, n, &m);
    if (!p) return NAN;
    pairs P = { .p = p, .n = m };
    sbox b = {0};
    double v = value_at(&P, boxes ? boxes_of(&P, &b, sigma) : NULL, sigma);
    cs_sbox_free(&b);
    free(p);
    return v;
}

double cs_smece_at(const double *f, const double *y, size_t n, double sigma)
{
    return cs_smece_at_by(f, y, n, sigma, 1);
}

/* The search remembers the last bandwidth it tried: the bandwidth it returns is one of them
 * (the fixed point is the last point tried), and smECE there is not computed a second time. */
typedef struct hctx { const pairs *P; const sbox *b; int failed; double last_s, last_v; } hctx;
/* h(s) = s - smECE_s: negative where relplot's predicate holds. */
static double h_fn(const void *ctx, double s)
{
    hctx *c = (hctx *)ctx;
    double v = value_at(c->P, c->b, s);
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
 * s = smECE_s (smECE_s falls as s grows: smoothing further is an L1 contraction, so h rises
 * and the fixed point is unique), or eps when smECE_eps <= eps.
 * With a hint (a bandwidth near s*: the whole file's, for a bootstrap draw of it) the bracket
 * is first sought around the hint, steps of 1.25x, falling back on eps and mean |r|: the same
 * unique fixed point in about half the evaluations. */
/* The search on the pairs P of samples whose mean |r_i| is mr. */
static double auto_on_pairs(const pairs *P, double mr, double hint, double *sigma_out)
{
    sbox box = {0};
    hctx c = { P, boxes_of(P, &box, 0.0), 0, NAN, NAN };
    /* smECE_s <= mean |r_i| for every s (the kernel's mass on [0, 1] is 1), so p fails from
     * s = mean |r_i| up: the bracket's high end, where relplot starts from 1 */
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
    double v = c.failed ? NAN : s == c.last_s ? c.last_v : value_at(P, c.b, s);
    cs_sbox_free(&box);
    if (sigma_out && !isnan(v)) *sigma_out = s;
    return v;
}

static double auto_near(const double *f, const double *y, size_t n, double hint, double *sigma_out)
{
    if (sigma_out) *sigma_out = NAN;
    if (n == 0) return NAN;
    size_t m;
    img *p = sorted_pairs(f, y, n, &m);
    if (!p) return NAN;
    double mr = 0.0;
    for (size_t i = 0; i < n; i++) mr += fabs(f[i] - y[i]);
    mr /= (double)n;
    pairs P = { .p = p, .n = m };
    double v = auto_on_pairs(&P, mr, hint, sigma_out);
    free(p);
    return v;
}

double cs_smece_auto(const double *f, const double *y, size_t n, double *sigma_out)
{
    return auto_near(f, y, n, NAN, sigma_out);
}

double cs_smece_auto_near(const double *f, const double *y, size_t n, double hint,
                          double *sigma_out)
{
    return auto_near(f, y, n, hint, sigma_out);
}

double cs_mx_smece(const double *v, const uint8_t *t, const uint32_t *order, size_t n, double sigma,
                   double hint, void *work, double *sigma_out)
{
    if (sigma_out) *sigma_out = NAN;
    if (n == 0 || sigma < 0) return NAN;
    double *f = work;
    uint8_t *y = (uint8_t *)(f + n);
    for (size_t j = 0; j < n; j++) {
        f[j] = v[order[j]];
        y[j] = t[order[j]] ? 1 : 0;
    }
    return cs_mx_smece_sorted(work, n, sigma, hint, sigma_out, NULL, NULL);
}

double cs_mx_smece_sorted(void *work, size_t n, double sigma, double hint, double *sigma_out,
                          void (*before_write)(void *ctx), void *ctx)
{
    if (sigma_out) *sigma_out = NAN;
    if (n == 0 || sigma < 0) return NAN;
    double *f = work;
    uint8_t *y = (uint8_t *)(f + n);
    double mr = 0.0, ns = (double)n;
    size_t runs = 0, first = n;   /* first: where the first run of equal values starts */
    for (size_t j = 0; j < n; j++) {
        mr += fabs(f[j] - (double)y[j]);
        runs += j && f[j] == f[j - 1] && (j < 2 || f[j - 1] != f[j - 2]);
    }
    if (runs)
        for (size_t j = 1; j < n; j++)
            if (f[j] == f[j - 1]) { first = j - 1; break; }
    mr /= ns;
    size_t *mk = malloc((runs ? runs : 1) * sizeof *mk);
    double *mw = malloc((runs ? runs : 1) * sizeof *mw);
    if (!mk || !mw) { free(mk); free(mw); return NAN; }
    if (runs && before_write) before_write(ctx);   /* the merge below writes the block */
    /* in place: one pair per distinct value. A run of equal values is the array's sort by
     * (f, w) and merge: its y = 1 samples (w = (f - 1) / n, the smaller) then its y = 0 ones
     * (w = f / n), added from the first in that order. Before the first run every pair
     * would be copied onto itself: the pass starts there (10^6 distinct values but 4 on the
     * bench file: a pass over the samples saved). */
    size_t k = first, nm = 0;
    for (size_t i = first, r; i < n; i = r) {
        for (r = i + 1; r < n && f[r] == f[i]; r++) {}
        double c = f[i];
        if (r - i == 1) {
            uint8_t yi = y[i];
            f[k] = c;
            y[k++] = yi;
            continue;
        }
        size_t ones = 0;
        for (size_t q = i; q < r; q++) ones += y[q];
        double w1 = (c - 1.0) / ns, w0 = (c - 0.0) / ns, w = 0.0;
        for (size_t q = 0; q < r - i; q++) {
            double x = q < ones ? w1 : w0;
            w = q ? w + x : x;
        }
        mk[nm] = k;
        mw[nm++] = w;
        f[k] = c;
        y[k++] = 2;
    }
    pairs P = { NULL, f, y, ns, mk, mw, nm, k };
    double res;
    if (sigma > 0) {
        sbox box = {0};
        res = value_at(&P, boxes_of(&P, &box, sigma), sigma);
        cs_sbox_free(&box);
        if (sigma_out && !isnan(res)) *sigma_out = sigma;
    } else {
        res = auto_on_pairs(&P, mr, hint, sigma_out);
    }
    free(mk);
    free(mw);
    return res;
}

/* The samples' pairs for one of the curve's sums: from f, y (the public function) or from the
 * metrics' columns v[order[j]], t[order[j]] (in value order, no copies of the samples: the
 * dashboard's 10^6-row file keeps one array of pairs at a time). p has n entries. Returns
 * whether the values came ascending. */
typedef struct curve_src {
    const double *f, *y;                       /* or NULL, and: */
    const double *v; const uint8_t *t; const uint32_t *order;
    size_t n;
} curve_src;

static int fill_pairs(const curve_src *c, wkind k, img *p)
{
    int ascending = 1;
    for (size_t i = 0; i < c->n; i++) {
        double f = c->f ? c->f[i] : c->v[c->order[i]];
        double y = c->f ? c->y[i] : c->t[c->order[i]] ? 1.0 : 0.0;
        p[i] = (img){ f, (k == W_LABEL ? y : 1.0) / (double)c->n };
        if (i && f < p[i - 1].c) ascending = 0;
    }
    return ascending;
}

/* The kernel sums of the pairs with weights of kind k on the mesh, into g (points): from the
 * pairs' moments in boxes (smece_box.c; one pass over the pairs, then ~100 boxes a point), or
 * where they do not answer (s < 1/1024, values outside [0, 1]) image by image, restarted every
 * 16 points (one exp per 16 (image, point) pairs, each term's Gaussian to 2e-14 relative).
 * The weights are positive, so either way the sums keep their relative accuracy where the
 * density is more than 1e-3 of its peak (test_estimators compares with numpy's exp at every
 * term, to 1e-12). Image by image, a dashboard recompute on 10^6 distinct values at sigma
 * 0.094 took 4 s. */
static int curve_sums(const curve_src *c, wkind k, img *p, double s, size_t points, double *g)
{
    int asc = fill_pairs(c, k, p);
    pairs P = { .p = p, .n = sort_merge(p, c->n, asc) };
    sbox b = {0};
    if (cs_sbox_build(&b, &P) == 0 && cs_sbox_fits(&b, s)) {
        int rc = cs_sbox_sums(&b, s, points - 1, g);
        cs_sbox_free(&b);
        return rc;
    }
    cs_sbox_free(&b);
    view v;
    if (cs_smece_view(&v, &P, s) != 0) return -1;
    cs_smece_grid_direct(&v, s, points - 1, 16, g);
    return 0;
}

static int curve(const curve_src *c, double sigma, size_t points, double *mu, double *density)
{
    if (c->n == 0 || points < 2 || !(sigma > 0)) return -1;
    double *num = malloc(points * sizeof *num);
    img *p = num ? malloc(c->n * sizeof *p) : NULL;
    int rc = p ? 0 : -1;
    if (!rc) rc = curve_sums(c, W_LABEL, p, sigma, points, num);
    if (!rc) rc = curve_sums(c, W_ONE, p, sigma, points, density);
    if (!rc) {
        double norm = sigma * sqrt(2.0 * M_PI);
        for (size_t j = 0; j < points; j++) {
            /* relplot's mu = sum K y / (sum K + 1e-4) keeps its 1e-4 from dividing by zero;
             * here mu is NAN only where no image is within CUT sigma */
            mu[j] = density[j] > 0 ? num[j] / density[j] : NAN;
            density[j] /= norm;
        }
    }
    free(p);
    free(num);
    return rc;
}

int cs_smece_curve(const double *f, const double *y, size_t n, double sigma, size_t points,
                   double *mu, double *density)
{
    curve_src c = { f, y, NULL, NULL, NULL, n };
    return curve(&c, sigma, points, mu, density);
}

int cs_mx_smece_curve(const double *v, const uint8_t *t, const uint32_t *order, size_t n, double sigma,
                      size_t points, double *mu, double *density)
{
    curve_src c = { NULL, NULL, v, t, order, n };
    return curve(&c, sigma, points, mu, density);
}

/* ---- binned replicates ---------------------------------------------------------------------
 * A bootstrap replicate of a large file at a fixed bandwidth s: the samples' residual weights
 * (f - y) / n linearly binned onto the nodes k / M of [0, 1] (Fan & Marron 1994, "Fast
 * implementations of nonparametric curve estimators"; Wand 1994, "Fast computation of
 * multivariate kernel estimators"), a sample between nodes a and a + 1/M at fraction lam
 * giving (1 - lam) w to a and lam w to a + 1/M, and then the exact smooth ECE of the nodes
 * (the boxes' sums, roots and integrals above). One pass over the draw instead of the merge
 * and the moments of every distinct drawn value; the nodes are M + 1 <= 1 + per_sigma / s.
 * Linear binning keeps each sample's weight and first moment; the kernel sums of one sample
 * then move by at most lam (1 - lam) / (2 M^2) times the kernel's second derivative, so the
 * smoothed residual moves in L1 over t by at most
 *   sum |w_i| / (8 (M s)^2) * integral |x^2 - 1| phi(x) dx = 0.121 (1 / (M s))^2 mean |r_i|,
 * and smooth ECE (the L1 norm of that curve) by no more (docs/performance.md gives the
 * measured differences). */
static size_t binned_nodes(double sigma, size_t per_sigma)
{
    return (size_t)ceil((double)per_sigma / sigma);
}

int cs_mx_smece_binned(const double *f, const uint8_t *y, size_t n, double sigma,
                       size_t per_sigma, double *out)
{
    *out = NAN;
    if (n == 0 || !(sigma >= CS_SBOX_MIN_SIGMA && sigma <= CS_SBOX_MAX_SIGMA) || per_sigma == 0 ||
        !(f[0] >= 0.0 && f[n - 1] <= 1.0))   /* ascending: the boxes hold [0, 1] only */
        return 0;
    size_t M = binned_nodes(sigma, per_sigma);
    double *W = calloc(M + 1, sizeof *W);
    img *nodes = malloc((M + 1) * sizeof *nodes);
    if (!W || !nodes) goto done;
    double inv = 1.0 / (double)n, Md = (double)M;
    /* f ascending: a run of samples in one cell is summed in registers and stored once (the
     * stores to W[k] one after the other were a chain of dependent loads) */
    for (size_t i = 0; i < n;) {
        size_t k = (size_t)(f[i] * Md);
        if (k >= M) k = M - 1;
        double lo = 0.0, hi = 0.0;
        for (; i < n; i++) {
            double x = f[i] * Md;
            size_t c = (size_t)x;
            if ((c >= M ? M - 1 : c) != k) break;
            double w = (f[i] - (double)y[i]) * inv, lam = x - (double)k;
            lo += w - w * lam;
            hi += w * lam;
        }
        W[k] += lo;
        W[k + 1] += hi;
    }
    size_t m = 0;
    for (size_t k = 0; k <= M; k++)
        if (W[k] != 0.0) nodes[m++] = (img){ k == M ? 1.0 : (double)k / Md, W[k] };
    if (m == 0) {
        *out = 0.0;
        goto done;
    }
    pairs P = { .p = nodes, .n = m };
    sbox box = {0};
    *out = value_at(&P, boxes_of(&P, &box, sigma), sigma);
    cs_sbox_free(&box);
done:
    free(W);
    free(nodes);
    return 1;
}
