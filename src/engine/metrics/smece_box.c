/* Smooth ECE from the moments of the pairs in boxes: one pass over the samples, then every
 * bandwidth of the search in time that does not depend on n (see smece_view.h, sbox).
 *
 * The expansion (the fast Gauss transform's Hermite series). A pair at f = T + s d, T a box's
 * centre, enters the smoothed residual through its Gaussian, which is, with x = (t - T) / s,
 *   exp(-(x - d)^2 / 2) = exp(-x^2 / 2) sum_p He_p(x) d^p / p!
 * (the generating function of the probabilists' Hermite polynomials), and its integral through
 *   Phi(x - d) = Phi(x) - sum_{p >= 1} He_{p-1}(x) phi(x) d^p / p!
 * (Taylor in d: Phi^(p) = (-1)^(p-1) He_{p-1} phi). So a box enters only through
 *   a_p = sum over its pairs of w d^p / p!,   p = 0 .. NP-1,
 * and the kernel sums at any point, their slope and the integrals between the roots cost a few
 * products per box. Truncation: by Cramer's inequality |He_p(x)| exp(-x^2/4) <= 1.0865 sqrt(p!),
 * the terms left out are below 1.09 |w| |d|^p / sqrt(p!) each; boxes no wider than s / 2 keep
 * |d| <= 1/4, and at p = NP = 18 that is 1.1e-19 |w| (the terms fall by 4 sqrt(p) from one to
 * the next). The sums are then those of every image of every pair (smece.c) to rounding.
 *
 * The moments are kept once at the finest box width h0 = 1/2048 about the fine centres, as
 * sums of w u^p with u = (f - t_q) / h0 in [-1/2, 1/2]; a bandwidth s takes boxes of 2^k fine
 * ones, the widest with H = h0 2^k <= s / 2 (s >= 2 h0 = 1/1024: the search's floor
 * CS_SMECE_EPS = 0.001 is above it), their moments about the coarse centres by the binomial
 * shift of each fine box's. The images of the reflected kernel are the boxes' images: box
 * centre T goes to 2k + T with the same moments, or 2k - T with (-1)^p a_p. */
#include "smece_view.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "mx.h"

#define LOG2B0 11
#define B0 (1u << LOG2B0)
_Static_assert(B0 == CS_SBOX_BOXES, "the boxes of smece_view.h");

/* Two lanes of SSE2 registers for the moments and the kernel sums (1), or the scalar loops
 * (0): cs_sbox_lanes, for the tests that compare the two bit for bit. */
static int sbox_lanes = 1;

void cs_sbox_lanes(int on)
{
    sbox_lanes = on;
}

/* The moments of pairs [from, to) into the box list of *l (room for one entry per pair and
 * per box, whichever is fewer): a run of pairs in one box (the pairs are in value order) is
 * summed in registers, two chains of powers (even and odd) to halve the dependent
 * multiplies. 0, or -1 when a value is not in [0, 1] (no box holds it). */
typedef struct blist { size_t n; uint16_t *q; double *m; } blist;

static int moments_of(const pairs *P, size_t from, size_t to, blist *l)
{
    l->n = 0;
    for (size_t i = from; i < to;) {
        double f0 = pair_f(P, i);
        if (!(f0 >= 0.0 && f0 <= 1.0)) return -1;
        size_t q = f0 >= 1.0 ? B0 - 1 : (size_t)(f0 * B0);
        double hi = q == B0 - 1 ? 2.0 : (double)(q + 1) / B0;   /* the last box takes 1 */
        double tq = (double)q + 0.5, acc[NP] = {0};
#if defined(__SSE2__)
        /* the even and odd chains side by side in the two lanes of one register, the 18 sums
         * in 9 registers (in an array in memory each sum's add waited for the store of the
         * one before: 7 ms of the report's CPU). The same operations in the same order. */
        if (sbox_lanes) {
        __m128d a0 = _mm_setzero_pd(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0;
        __m128d a7 = a0, a8 = a0;
        for (; i < to; i++) {
            double f = pair_f(P, i);
            if (!(f < hi)) break;      /* ascending: the run ends at the first f past its box */
            double u = f * B0 - tq, e = pair_w(P, i);
            __m128d u2 = _mm_set1_pd(u * u), x = _mm_set_pd(e * u, e);
            a0 = _mm_add_pd(a0, x); x = _mm_mul_pd(x, u2);
            a1 = _mm_add_pd(a1, x); x = _mm_mul_pd(x, u2);
            a2 = _mm_add_pd(a2, x); x = _mm_mul_pd(x, u2);
            a3 = _mm_add_pd(a3, x); x = _mm_mul_pd(x, u2);
            a4 = _mm_add_pd(a4, x); x = _mm_mul_pd(x, u2);
            a5 = _mm_add_pd(a5, x); x = _mm_mul_pd(x, u2);
            a6 = _mm_add_pd(a6, x); x = _mm_mul_pd(x, u2);
            a7 = _mm_add_pd(a7, x); x = _mm_mul_pd(x, u2);
            a8 = _mm_add_pd(a8, x);
        }
        _Static_assert(NP == 18, "nine pairs of chains");
        _mm_storeu_pd(acc + 0, a0); _mm_storeu_pd(acc + 2, a1); _mm_storeu_pd(acc + 4, a2);
        _mm_storeu_pd(acc + 6, a3); _mm_storeu_pd(acc + 8, a4); _mm_storeu_pd(acc + 10, a5);
        _mm_storeu_pd(acc + 12, a6); _mm_storeu_pd(acc + 14, a7); _mm_storeu_pd(acc + 16, a8);
        } else
#endif
        for (; i < to; i++) {
            double f = pair_f(P, i);
            if (!(f < hi)) break;      /* ascending: the run ends at the first f past its box */
            double u = f * B0 - tq, u2 = u * u, e = pair_w(P, i), eo = e * u;
            for (int p = 0; p < NP; p += 2) {
                acc[p] += e;
                acc[p + 1] += eo;
                e *= u2;
                eo *= u2;
            }
        }
        l->q[l->n] = (uint16_t)q;
        memcpy(l->m + l->n * NP, acc, sizeof acc);
        l->n++;
    }
    return 0;
}

typedef struct half_job {
    const pairs *P;
    size_t cut;
    blist l[2];
    int rc[2];
} half_job;

static void half_moments(void *ctx, size_t h)
{
    half_job *j = ctx;
    j->rc[h] = moments_of(j->P, h ? j->cut : 0, h ? j->P->n : j->cut, &j->l[h]);
}

int cs_sbox_build(sbox *b, const pairs *P)
{
    /* two halves fixed by n (not by the threads), a box the cut splits added in one order:
     * the same moments whether a second thread ran or not */
    size_t cut = P->n / 2, c0 = cut < B0 ? cut : B0, c1 = P->n - cut < B0 ? P->n - cut : B0;
    b->q = malloc((c0 + c1 + 1) * sizeof *b->q);
    b->m = malloc((c0 + c1 + 1) * NP * sizeof *b->m);
    b->n = 0;
    b->ok = 0;
    if (!b->q || !b->m) {
        cs_sbox_free(b);
        return -1;
    }
    half_job j = { P, cut, { { 0, b->q, b->m }, { 0, b->q + c0, b->m + c0 * NP } }, { 0, 0 } };
    cs_mx_chunks(2, P->n >= 100000, half_moments, &j);
    b->ok = j.rc[0] == 0 && j.rc[1] == 0;
    if (!b->ok) return 0;
    /* the second half's list after the first's */
    size_t n = j.l[0].n, from = 0;
    if (n && j.l[1].n && j.l[1].q[0] == b->q[n - 1]) {
        for (int p = 0; p < NP; p++) b->m[(n - 1) * NP + p] += j.l[1].m[p];
        from = 1;
    }
    for (size_t i = from; i < j.l[1].n; i++, n++) {
        b->q[n] = j.l[1].q[i];
        memmove(b->m + n * NP, j.l[1].m + i * NP, NP * sizeof *b->m);
    }
    b->n = n;
    return 0;
}

void cs_sbox_free(sbox *b)
{
    free(b->m);
    free(b->q);
    b->m = NULL;
    b->q = NULL;
    b->n = 0;
    b->ok = 0;
}

int cs_sbox_fits(const sbox *b, double s)
{
    return b->ok && s >= CS_SBOX_MIN_SIGMA && s <= CS_SBOX_MAX_SIGMA;
}

/* ---- one bandwidth ------------------------------------------------------------------------ */

typedef struct bimg { double T; double a[NP]; } bimg;   /* an image box: centre, a_p */

typedef struct bview {
    bimg *im;
    size_t n;
    double s, reach;   /* reach: CUT s + H / 2, the farthest a box's pair can matter */
} bview;

/* The images of the coarse boxes of width H = h0 2^k within reach of [0, 1], in centre
 * order. 0 or -1 (out of memory). */
static int bview_make(bview *v, const sbox *b, double s)
{
    int k = 0;
    while (k < LOG2B0 && ldexp(1.0, k + 1 - LOG2B0) <= 0.5 * s) k++;
    size_t per = (size_t)1 << k;
    double H = ldexp(1.0, k - LOG2B0), rho = 1.0 / (B0 * s);
    /* the coarse boxes that hold pairs, in order (the fine list is ascending, so is q >> k) */
    bimg *box = malloc((b->n ? b->n : 1) * sizeof *box);
    if (!box) return -1;
    /* inverse factorials, and each fine box's moments moved to its coarse centre:
     *   (alpha + rho u)^p / p! = sum_j alpha^(p-j) / (p-j)! rho^j u^j / j!  */
    double ifact[NP];
    ifact[0] = 1.0;
    for (int p = 1; p < NP; p++) ifact[p] = ifact[p - 1] / (double)p;
    size_t nb = 0;
    for (size_t i = 0; i < b->n; i++) {
        size_t q = b->q[i], Q = q >> k;
        double T = ((double)Q + 0.5) * H;
        if (!nb || box[nb - 1].T != T) {
            box[nb].T = T;
            memset(box[nb].a, 0, sizeof box[nb].a);
            nb++;
        }
        bimg *d = &box[nb - 1];
        const double *mq = b->m + i * NP;
        double vj[NP], pr = 1.0;
        for (int j = 0; j < NP; j++, pr *= rho) vj[j] = mq[j] * pr * ifact[j];
        if (per == 1) {
            for (int p = 0; p < NP; p++) d->a[p] += vj[p];
            continue;
        }
        double alpha = (((double)q + 0.5) / B0 - T) / s, ap[NP];
        ap[0] = 1.0;
        for (int p = 1; p < NP; p++) ap[p] = ap[p - 1] * alpha;
        for (int p = 0; p < NP; p++) {
            double sum = 0.0;
            for (int j = 0; j <= p; j++) sum += ap[p - j] * ifact[p - j] * vj[j];
            d->a[p] += sum;
        }
    }
    double reach = CUT * s + 0.5 * H;
    long j0 = (long)floor(-reach), j1 = (long)floor(1.0 + reach);
    v->im = malloc((nb ? nb : 1) * (size_t)(j1 - j0 + 1) * sizeof *v->im);
    if (!v->im) { free(box); return -1; }
    v->n = 0;
    v->s = s;
    v->reach = reach;
    for (long j = j0; j <= j1; j++) {
        int odd = (int)(((j % 2) + 2) % 2);
        for (size_t i = 0; i < nb; i++) {
            const bimg *src = &box[odd ? nb - 1 - i : i];   /* centre order inside [j, j + 1] */
            double c = odd ? (double)(j + 1) - src->T : (double)j + src->T;
            if (c < -reach || c > 1.0 + reach) continue;
            bimg *d = &v->im[v->n++];
            d->T = c;
            for (int p = 0; p < NP; p++) d->a[p] = odd && (p & 1) ? -src->a[p] : src->a[p];
        }
    }
    free(box);
    return 0;
}

/* First image with centre >= x. */
static size_t bview_lower(const bview *v, double x)
{
    size_t lo = 0, hi = v->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v->im[mid].T < x) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* One image box's terms at t: s0 = sum a_p He_p(x), s1 = sum a_p He_{p+1}(x), x = (t - T)/s,
 * and the Gaussian e = exp(-x^2/2). He_{p+1} = x He_p - p He_{p-1}. */
static inline void box_terms(const bimg *b, double t, double s, double *s0o, double *s1o,
                             double *eo)
{
    double x = (t - b->T) / s, hp = 1.0, h = x, s0 = b->a[0], s1 = b->a[0] * x;
    for (int p = 1; p < NP; p++) {
        double hn = x * h - (double)p * hp;
        s0 += b->a[p] * h;
        s1 += b->a[p] * hn;
        hp = h;
        h = hn;
    }
    *s0o = s0;
    *s1o = s1;
    *eo = exp(-0.5 * x * x);
}

/* The smoothed residual at t up to its positive factor 1 / (n s sqrt(2 pi)) (the sign grid
 * and the roots need no more), and its slope in t with the same factor. Boxes two at a time
 * in the lanes of SSE2 registers (box_terms' operations lane by lane: the recurrence is a
 * chain of dependent multiplies, so two boxes side by side cost about what one did), then
 * added to the sums one box after the other in centre order, as before. */
static inline double bview_g_of(const bview *v, double t, double *slope, const int with_slope)
{
    double sum = 0.0, dsum = 0.0;
    size_t i = bview_lower(v, t - v->reach), end = i;
    while (end < v->n && v->im[end].T <= t + v->reach) end++;
#if defined(__SSE2__)
    const __m128d sv = _mm_set1_pd(v->s), tv = _mm_set1_pd(t), mh = _mm_set1_pd(-0.5);
    for (; sbox_lanes && i + 2 <= end; i += 2) {
        const bimg *b0 = &v->im[i], *b1 = &v->im[i + 1];
        __m128d x = _mm_div_pd(_mm_sub_pd(tv, _mm_set_pd(b1->T, b0->T)), sv);
        __m128d a = _mm_set_pd(b1->a[0], b0->a[0]);
        __m128d hp = _mm_set1_pd(1.0), h = x, s0 = a, s1 = _mm_mul_pd(a, x);
        for (int p = 1; p < NP; p++) {
            __m128d hn = _mm_sub_pd(_mm_mul_pd(x, h), _mm_mul_pd(_mm_set1_pd((double)p), hp));
            a = _mm_set_pd(b1->a[p], b0->a[p]);
            s0 = _mm_add_pd(s0, _mm_mul_pd(a, h));
            if (with_slope) s1 = _mm_add_pd(s1, _mm_mul_pd(a, hn));
            hp = h;
            h = hn;
        }
        double q[2], r0[2], r1[2];
        _mm_storeu_pd(q, _mm_mul_pd(_mm_mul_pd(mh, x), x));
        _mm_storeu_pd(r0, s0);
        _mm_storeu_pd(r1, s1);
        double e0 = exp(q[0]), e1 = exp(q[1]);
        sum += e0 * r0[0];
        sum += e1 * r0[1];
        if (with_slope) {
            dsum += e0 * r1[0];
            dsum += e1 * r1[1];
        }
    }
#endif
    for (; i < end; i++) {
        double s0, s1, e;
        box_terms(&v->im[i], t, v->s, &s0, &s1, &e);
        sum += e * s0;
        if (with_slope) dsum += e * s1;
    }
    if (with_slope) *slope = -dsum / v->s;
    return sum;
}

/* The kernel sums at t, and their slope when slope is not NULL. The grid asks for the sums
 * alone (most of smooth ECE's time in a bootstrap replicate): the slope's chain is then left
 * out, and the sums are the same operations in the same order either way. */
static double bview_g(const bview *v, double t, double *slope)
{
    return slope ? bview_g_of(v, t, slope, 1) : bview_g_of(v, t, NULL, 0);
}

static double g_of_boxes(const void *ctx, double t, double *slope)
{
    return bview_g(ctx, t, slope);
}

/* Integral over [lo, hi] of (1/n) sum r_i K_s(t, f_i): per image box
 *   a_0 (Phi(xb) - Phi(xa)) - sum_{p >= 1} a_p (He_{p-1}(xb) phi(xb) - He_{p-1}(xa) phi(xa)). */
static double bview_integral(const bview *v, double lo, double hi)
{
    const double isq2pi = 0.39894228040143267794;
    double sum = 0.0;
    for (size_t i = bview_lower(v, lo - v->reach); i < v->n && v->im[i].T <= hi + v->reach; i++) {
        const bimg *b = &v->im[i];
        double xa = (lo - b->T) / v->s, xb = (hi - b->T) / v->s;
        double ea = fabs(xa) < 40.0 ? exp(-0.5 * xa * xa) * isq2pi : 0.0;
        double eb = fabs(xb) < 40.0 ? exp(-0.5 * xb * xb) * isq2pi : 0.0;
        double corr = 0.0;
        if (ea != 0.0 || eb != 0.0) {
            double hpa = 0.0, ha = 1.0, hpb = 0.0, hb = 1.0;   /* He_{p-1} at p = 1 */
            for (int p = 1; p < NP; p++) {
                corr += b->a[p] * (hb * eb - ha * ea);
                double na = xa * ha - (double)(p - 1) * hpa, nb = xb * hb - (double)(p - 1) * hpb;
                hpa = ha; ha = na;
                hpb = hb; hb = nb;
            }
        }
        sum += b->a[0] * cs_smece_phi_diff(xb, xa) - corr;
    }
    return sum;
}

/* The kernel sums g[0..G] at t = j / G (1 at j = G). Each point is bview_g of its own, so a
 * long grid is shared with a second thread: the search's floor s = 0.001 takes 8,001 points
 * (5 of the 10 ms smooth ECE took on the bench file's report, one thread, the other idle). The
 * pieces of GRID_PIECE points alternate between the threads: the points near the pairs cost
 * the most (more boxes within reach), and the pairs of a calibrated model crowd one end. The
 * same value at each point whichever thread makes it. */
#define GRID_PIECE 64
#define GRID_SHARED 1024

typedef struct grid_job { const bview *v; size_t G; double *g; size_t first; } grid_job;

static void *grid_pieces(void *arg)
{
    grid_job *j = arg;
    for (size_t a = j->first * GRID_PIECE; a <= j->G; a += 2 * GRID_PIECE) {
        size_t z = a + GRID_PIECE <= j->G + 1 ? a + GRID_PIECE : j->G + 1;
        for (size_t i = a; i < z; i++)
            j->g[i] = bview_g(j->v, i == j->G ? 1.0 : (double)i / (double)j->G, NULL);
    }
    return NULL;
}

static void grid_sums(const bview *v, size_t G, double *g)
{
    grid_job a = { v, G, g, 0 }, b = { v, G, g, 1 };
    cs_mx_pair(grid_pieces, &a, &b, G >= GRID_SHARED);
}

int cs_sbox_sums(const sbox *b, double s, size_t G, double *g)
{
    bview v;
    if (bview_make(&v, b, s) != 0) return -1;
    grid_sums(&v, G, g);
    free(v.im);
    return 0;
}

double cs_sbox_smece(const sbox *b, double s)
{
    bview v;
    if (bview_make(&v, b, s) != 0) return NAN;
    /* the sign changes on the grid of step s/8 that the per-pair path uses, then the roots
     * and the integrals between them */
    size_t G = (size_t)ceil(8.0 / s);
    if (G < 64) G = 64;
    double *g = malloc((G + 1) * sizeof *g);
    if (!g) { free(v.im); return NAN; }
    grid_sums(&v, G, g);
    double total = 0.0, a = 0.0;
    for (size_t j = 1; j <= G; j++) {
        double t1 = j == G ? 1.0 : (double)j / (double)G, z;
        if (g[j] == 0.0) z = t1;
        else if (g[j - 1] != 0.0 && (g[j - 1] < 0) != (g[j] < 0))
            z = cs_smece_root(g_of_boxes, &v, (double)(j - 1) / (double)G, g[j - 1], t1, g[j]);
        else continue;
        if (z <= a) continue;
        total += fabs(bview_integral(&v, a, z));
        a = z;
    }
    if (a < 1.0) total += fabs(bview_integral(&v, a, 1.0));
    free(g);
    free(v.im);
    return total;
}
