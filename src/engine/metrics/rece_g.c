/* RECE-G (Gupta, Basu & Arora 2023, "How Reliable are the Metrics Used for Assessing Reliability
 * in Medical Imaging?", eq. 6): each confidence c_j is spread over the M uniform bins by the mass
 * of Normal(c_j, sigma) on each bin interval, normalised over the M bins;
 * RECE-G = sum over ALL M bins of |A~_i - C~_i| / N.
 *
 * Interval masses are differences of normal tails taken on the side where they are accurate
 * (erfc of |z|), so a bin far in a tail is not lost to cancellation. Tails beyond 9 sigma
 * are taken as exactly 0 (the mass there is < 1.2e-19, far below double resolution of the
 * weights that matter).
 *
 * Speed: from BOX_MIN (2048) items on, the number comes from the box path (rece_g_box.c):
 * [0,1] cut into B boxes (80 at sigma 0.1), each weight a power series in the offset from its
 * box centre (Taylor / Hermite coefficients, truncation below 1e-17 of the weights), so one
 * pass over the items gathers per-box moments sum (t - v) s^p and the bins follow in
 * O(B M P) -- no normal tail per sample. It differs from the per-sample sums only at the
 * rounding level: against a long-double reference on the 1M x 10 bench file the box value is
 * off by 2.8e-16 relative, the per-sample sum by 6.3e-15 (class:1: 4.0e-15 and 1.3e-13; the
 * per-sample path adds a million terms into each bin). It is not taken (the per-sample path
 * below is) for fewer items, for sigma < 2/4096 (too many boxes), when the table would cost
 * more than the weights it replaces, or when a value lies outside [0,1]. The decision depends
 * on the item count, sigma and M only (and the values), so one multiset always takes one
 * path: the whole sample, a subset listing every row and a dataset made of those rows give
 * the same bits, and class-wise is still the mean of the class:C values bit for bit.
 *
 * Per sample (fewer items, or no plan): sum_i |D_i| with D_i = A~_i - C~_i accumulated
 * from per-sample rows w_ji (acc_j - c_j), cached in the prepared object when n*M doubles fit
 * in 48 MiB (bootstrap draws of fewer than BOX_MIN items reuse them); otherwise they are
 * computed on the fly. The smoothed curve keeps A~, C~ and W separately (boxes from
 * BOX_MIN items unless some bin's W is below 1e-9 of the items, else per sample).
 * Large inputs (>= 200k items) run in two threads on two fixed halves of the items (box
 * moments or row sums, added half 0 + half 1): the split is fixed by the item count, never by
 * the machine, so the result does not depend on the thread count. */
#include "mx.h"

#include <stdlib.h>
#include <string.h>

#define CACHE_BYTES (48u << 20)
#define PAR_MIN 200000u
/* From this many items the box path (rece_g_box.c) replaces the per-sample weights: making
 * its table costs ~0.28 ms at sigma 0.1, M = 15 (once per (sigma, M): later evaluations share
 * it), the weights ~0.12 us a sample, the box moments ~0.01 us (measured; docs/metrics.md,
 * "RECE-G on large samples"). */
#define BOX_MIN 2048u
/* Row stride of the cached RECE-G rows: M rounded up to a multiple of 8 (zero padding). */
#define DSTRIDE(M) (((size_t)(M) + 7u) & ~(size_t)7u)

/* Normal tail Q(a) = P(X > a), a >= 0, by a 7-term Taylor expansion around the nearest
 * node of a 1/64 grid on [0, 9] whose values come from erfc/exp. The remainder is below
 * 1e-19 absolute (|d| <= 1/128, the 8th term is He_7(a) phi(a) d^8 / 8!), so this agrees
 * with 0.5*erfc(a/sqrt 2) to rounding, at a fraction of its cost: RECE-G needs (M+1)
 * tails per sample. */
#define TAB_STEP 64
#define TAB_N (9 * TAB_STEP + 1)
static double tab[TAB_N][8];   /* Q(a0), then phi(a0)*(-1)^n He_n(a0)/(n+1)! for n = 0..6 */
static pthread_once_t tab_once = PTHREAD_ONCE_INIT;

static void tab_init(void)
{
    for (int i = 0; i < TAB_N; i++) {
        double a = (double)i / TAB_STEP;
        double phi = exp(-0.5 * a * a) * 0.39894228040143267794;
        double he[7] = {1.0, a, a * a - 1.0, a * a * a - 3.0 * a,
                        a * a * a * a - 6.0 * a * a + 3.0,
                        a * a * a * a * a - 10.0 * a * a * a + 15.0 * a,
                        a * a * a * a * a * a - 15.0 * a * a * a * a + 45.0 * a * a - 15.0};
        double fact = 1.0;
        tab[i][0] = 0.5 * erfc(a * 0.70710678118654752440);
        for (int n = 0; n <= 6; n++) {
            fact *= (double)(n + 1);
            tab[i][n + 1] = ((n & 1) ? -1.0 : 1.0) * he[n] * phi / fact;
        }
    }
}

/* Tail of the standard normal beyond |z| on the side of z's sign: Phi(z) for z <= 0,
 * 1 - Phi(z) for z > 0. Beyond 9 the tail is < 1.2e-19 and taken as 0. */
static inline double tail(double z)
{
    double a = fabs(z);
    if (a >= 9.0) return 0.0;
    int i = (int)(a * TAB_STEP + 0.5);
    double d = a - (double)i / TAB_STEP;
    const double *c = tab[i];
    /* Horner, n = 6 down to 1, written out: one dependent chain per tail, and the tails of
     * the M+1 edges of a sample are independent of each other */
    double poly = c[7];
    poly = poly * d + c[6];
    poly = poly * d + c[5];
    poly = poly * d + c[4];
    poly = poly * d + c[3];
    poly = poly * d + c[2];
    poly = poly * d + c[1];
    return c[0] - poly * d;
}

double cs_mx_normal_tail(double z)
{
    pthread_once(&tab_once, tab_init);
    return tail(z);
}

void cs_mx_gauss_weights(double c, double sigma, const double *e, int M, double *w)
{
    pthread_once(&tab_once, tab_init);
    if (M <= 64) {
        /* the same numbers, the M+1 edge tails first (independent: they overlap) */
        double z[65], q[65], Z = 0.0;
        for (int i = 0; i <= M; i++) {
            z[i] = (e[i] - c) / sigma;
            q[i] = tail(z[i]);
        }
        for (int i = 0; i < M; i++) {
            double zp = z[i], zn = z[i + 1], tp = q[i], tn = q[i + 1], m;
            if (zn <= 0) m = tn - tp;
            else if (zp >= 0) m = tp - tn;
            else m = 1.0 - tp - tn;
            w[i] = m > 0 ? m : 0.0;
            Z += w[i];
        }
        if (Z > 0) {
            double inv = 1.0 / Z;
            for (int i = 0; i < M; i++) w[i] *= inv;
            return;
        }
        /* else the fallback below (it recomputes Z = 0) */
    }
    double zp = (e[0] - c) / sigma, tp = tail(zp), Z = 0.0;
    for (int i = 0; i < M; i++) {
        double zn = (e[i + 1] - c) / sigma, tn = tail(zn), m;
        if (zn <= 0) m = tn - tp;           /* both below the mean: Phi(zn) - Phi(zp) */
        else if (zp >= 0) m = tp - tn;      /* both above: Q(zp) - Q(zn) */
        else m = 1.0 - tp - tn;             /* straddles the mean */
        w[i] = m > 0 ? m : 0.0;
        Z += w[i];
        zp = zn;
        tp = tn;
    }
    if (!(Z > 0)) {
        /* only for c outside [0,1] with a tiny sigma: fall back to the hard bin */
        for (int i = 0; i < M; i++) w[i] = 0.0;
        w[cs_ubin_at(c, e, M)] = 1.0;
        return;
    }
    double inv = 1.0 / Z;
    for (int i = 0; i < M; i++) w[i] *= inv;
}

typedef struct {
    const double *v;
    const uint8_t *t;
    const double *W;      /* cached weights or NULL */
    const uint32_t *items;
    size_t ni;
    const double *e;
    int M;
    double sigma;
    double *C, *A, *S;    /* M each, zeroed by the caller (S: weight sums, may be NULL) */
    const atomic_int *cancel;
    int cancelled;
} part;

static void *run_part(void *arg)
{
    part *q = arg;
    int M = q->M;
    double *w = q->W ? NULL : malloc((size_t)M * sizeof *w);
    if (!q->W && !w) { q->cancelled = -1; return NULL; }
    for (size_t j = 0; j < q->ni; j++) {
        if ((j & 4095) == 0 && cs_mx_cancelled(q->cancel)) { q->cancelled = 1; break; }
        uint32_t i = q->items[j];
        const double *wi;
        if (q->W) wi = q->W + (size_t)i * (size_t)M;
        else { cs_mx_gauss_weights(q->v[i], q->sigma, q->e, M, w); wi = w; }
        double c = q->v[i];
        for (int b = 0; b < M; b++) q->C[b] += wi[b] * c;
        if (q->S)
            for (int b = 0; b < M; b++) q->S[b] += wi[b];
        if (q->t[i])
            for (int b = 0; b < M; b++) q->A[b] += wi[b];
    }
    free(w);
    return NULL;
}

/* One scalar problem (values v, targets t indexed by sample). */
static cs_status rece_scalar(const double *v, const uint8_t *t, const double *W, size_t n_all,
                             const uint32_t *items, size_t ni, const cs_settings *s,
                             const atomic_int *cancel, double *out, double *curve_acc,
                             double *curve_conf, cs_error *err)
{
    (void)n_all;
    int M = s->bins;
    int want_curve = curve_acc && curve_conf;
    double *e = malloc((size_t)(M + 1) * sizeof *e);
    double *acc = calloc((size_t)M * (want_curve ? 6 : 4), sizeof *acc);
    if (!e || !acc) { free(e); free(acc); return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory (RECE-G)"); }
    cs_mx_edges(e, M);
    part pt[2];
    int np = ni >= PAR_MIN ? 2 : 1;
    size_t half = np == 2 ? ni / 2 : ni;
    for (int k = 0; k < np; k++) {
        pt[k] = (part){v, t, W, items + (k ? half : 0), k ? ni - half : half, e, M, s->sigma,
                       acc + (size_t)M * (size_t)(2 * k), acc + (size_t)M * (size_t)(2 * k + 1),
                       want_curve ? acc + (size_t)M * (size_t)(4 + k) : NULL, cancel, 0};
    }
    cs_mx_pair(run_part, &pt[0], np == 2 ? &pt[1] : NULL, 1);
    cs_status rc = CS_OK;
    for (int k = 0; k < np; k++) {
        if (pt[k].cancelled < 0) rc = cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory (RECE-G)");
        else if (pt[k].cancelled > 0 && rc == CS_OK)
            rc = cs_error_set(err, CS_ECANCELLED, 0, 0, "cancelled");
    }
    if (rc == CS_OK) {
        double sum = 0.0;
        for (int b = 0; b < M; b++) {
            double C = acc[b], A = acc[M + b];
            if (np == 2) { C += acc[2 * M + b]; A += acc[3 * M + b]; }
            sum += fabs(A - C);
            if (want_curve) {
                double S = acc[4 * M + b] + (np == 2 ? acc[5 * M + b] : 0.0);
                curve_acc[b] = S > 0 ? A / S : NAN;
                curve_conf[b] = S > 0 ? C / S : NAN;
            }
        }
        *out = sum / (double)ni;
    }
    free(e);
    free(acc);
    return rc;
}

static int box_curve(const double *v, const uint8_t *t, const uint32_t *items, size_t ni,
                     const cs_settings *s, const atomic_int *cancel, double *out,
                     double *curve_acc, double *curve_conf, cs_status *rc, cs_error *err);

cs_status cs_mx_rece_curve(const cs_prepared *cp, const uint32_t *items, size_t ni,
                           const atomic_int *cancel, double *out, double *curve_acc,
                           double *curve_conf, cs_error *err)
{
    cs_prepared *p = (cs_prepared *)cp;
    *out = NAN;
    if (p->vector || p->kind == CS_LENS_CLASSWISE)
        return cs_error_set(err, CS_EUSAGE, 0, 0, "RECE-G curve: scalar lenses only");
    cs_status rc;
    if (box_curve(p->v, p->t, items, ni, &p->s, cancel, out, curve_acc, curve_conf, &rc, err))
        return rc;
    const double *W;
    pthread_mutex_lock(&p->lock);
    W = p->rece_w;
    pthread_mutex_unlock(&p->lock);
    return rece_scalar(p->v, p->t, W, p->n, items, ni, &p->s, cancel, out, curve_acc, curve_conf,
                       err);
}

/* ---- RECE-G itself: D_i = sum_j w_ji (acc_j - c_j) = A~_i - C~_i, one M-vector per sample.
 * The per-sample rows d_j = w_j * (acc_j - c_j) are cached (rece_d) when n*M doubles fit in
 * CACHE_BYTES and the cache will be reused; on the fly they are formed by the same
 * expression, so cached and uncached give the same numbers. items NULL = all samples. */
typedef struct {
    const double *v;
    const uint8_t *t;
    const double *D;      /* cached rows or NULL */
    const uint32_t *items;
    size_t a, z;
    const double *e;
    int M;
    double sigma;
    double *acc;          /* M, zeroed by the caller */
    const atomic_int *cancel;
    int status;           /* 0, 1 cancelled, -1 ENOMEM */
} dpart;

static void *run_dpart(void *arg)
{
    dpart *q = arg;
    int M = q->M;
    /* a local accumulator (no aliasing with the rows: kept in L1, vectorised); the same
     * per-bin sequence of additions as accumulating into q->acc directly */
    double loc[64];
    double *acc = M <= 64 ? loc : q->acc;
    if (acc == loc)
        for (int b = 0; b < 64; b++) loc[b] = 0.0;
    double *w = q->D ? NULL : malloc((size_t)M * sizeof *w);
    if (!q->D && !w) { q->status = -1; return NULL; }
    if (q->D && acc == loc) {
        /* Cached rows, padded with zeros to whole 8-double cache lines: for each block of 8
         * bins, 8 accumulators in registers over a run of items (per bin the same
         * sequence of additions as item by item). */
        const double *D = q->D;
        const uint32_t *items = q->items;
        size_t Ms = DSTRIDE(M);
        for (size_t j0 = q->a; j0 < q->z; j0 += 4096) {
            if (cs_mx_cancelled(q->cancel)) { q->status = 1; break; }
            size_t j1 = j0 + 4096 < q->z ? j0 + 4096 : q->z;
            if (Ms == 16 && items) {
                /* the default M = 15: one pass, 16 accumulators, the rows of later items
                 * prefetched (a subset's rows are scattered; the sum is memory-bound) */
                double s0 = loc[0], s1 = loc[1], s2 = loc[2], s3 = loc[3], s4 = loc[4];
                double s5 = loc[5], s6 = loc[6], s7 = loc[7], s8 = loc[8], s9 = loc[9];
                double s10 = loc[10], s11 = loc[11], s12 = loc[12], s13 = loc[13];
                double s14 = loc[14], s15 = loc[15];
                for (size_t j = j0; j < j1; j++) {
                    if (j + 12 < j1) {
                        const double *f = D + (size_t)items[j + 12] * 16;
                        __builtin_prefetch(f);
                        __builtin_prefetch(f + 8);
                    }
                    const double *d = D + (size_t)items[j] * 16;
                    s0 += d[0]; s1 += d[1]; s2 += d[2]; s3 += d[3];
                    s4 += d[4]; s5 += d[5]; s6 += d[6]; s7 += d[7];
                    s8 += d[8]; s9 += d[9]; s10 += d[10]; s11 += d[11];
                    s12 += d[12]; s13 += d[13]; s14 += d[14]; s15 += d[15];
                }
                loc[0] = s0; loc[1] = s1; loc[2] = s2; loc[3] = s3; loc[4] = s4;
                loc[5] = s5; loc[6] = s6; loc[7] = s7; loc[8] = s8; loc[9] = s9;
                loc[10] = s10; loc[11] = s11; loc[12] = s12; loc[13] = s13;
                loc[14] = s14; loc[15] = s15;
                continue;
            }
            for (size_t b0 = 0; b0 < Ms; b0 += 8) {
                double s0 = loc[b0], s1 = loc[b0 + 1], s2 = loc[b0 + 2], s3 = loc[b0 + 3];
                double s4 = loc[b0 + 4], s5 = loc[b0 + 5], s6 = loc[b0 + 6], s7 = loc[b0 + 7];
                for (size_t j = j0; j < j1; j++) {
                    const double *d = D + (size_t)(items ? items[j] : (uint32_t)j) * Ms + b0;
                    s0 += d[0]; s1 += d[1]; s2 += d[2]; s3 += d[3];
                    s4 += d[4]; s5 += d[5]; s6 += d[6]; s7 += d[7];
                }
                loc[b0] = s0; loc[b0 + 1] = s1; loc[b0 + 2] = s2; loc[b0 + 3] = s3;
                loc[b0 + 4] = s4; loc[b0 + 5] = s5; loc[b0 + 6] = s6; loc[b0 + 7] = s7;
            }
        }
    }
    for (size_t j = q->a; j < q->z && !(q->D && acc == loc); j++) {
        if (((j - q->a) & 4095) == 0 && cs_mx_cancelled(q->cancel)) { q->status = 1; break; }
        uint32_t i = q->items ? q->items[j] : (uint32_t)j;
        if (q->D) {
            const double *di = q->D + (size_t)i * (size_t)DSTRIDE(M);
            for (int b = 0; b < M; b++) acc[b] += di[b];
        } else {
            cs_mx_gauss_weights(q->v[i], q->sigma, q->e, M, w);
            double tc = (double)q->t[i] - q->v[i];
            for (int b = 0; b < M; b++) acc[b] += w[b] * tc;
        }
    }
    if (acc == loc)
        for (int b = 0; b < M; b++) q->acc[b] = loc[b];
    free(w);
    return NULL;
}

static cs_status rece_d_scalar(const double *v, const uint8_t *t, const double *D,
                               const uint32_t *items, size_t ni, const cs_settings *s,
                               const atomic_int *cancel, double *out, cs_error *err)
{
    int M = s->bins;
    double eb[65], *e = M < 65 ? eb : malloc((size_t)(M + 1) * sizeof *e);
    double ab[128], *acc = M <= 64 ? ab : malloc((size_t)M * 2 * sizeof *acc);
    if (!e || !acc) {
        if (e != eb) free(e);
        if (acc != ab) free(acc);
        return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory (RECE-G)");
    }
    for (int b = 0; b < 2 * M; b++) acc[b] = 0.0;
    cs_mx_edges(e, M);
    /* two fixed halves of the canonical order on large inputs (by item count only) */
    int np = ni >= PAR_MIN ? 2 : 1;
    size_t half = np == 2 ? ni / 2 : ni;
    dpart pt[2];
    for (int k = 0; k < np; k++)
        pt[k] = (dpart){v, t, D, items, k ? half : 0, k ? ni : half, e, M, s->sigma,
                        acc + (size_t)M * (size_t)k, cancel, 0};
    cs_mx_pair(run_dpart, &pt[0], np == 2 ? &pt[1] : NULL, 1);
    cs_status rc = CS_OK;
    for (int k = 0; k < np; k++) {
        if (pt[k].status < 0) rc = cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory (RECE-G)");
        else if (pt[k].status > 0 && rc == CS_OK)
            rc = cs_error_set(err, CS_ECANCELLED, 0, 0, "cancelled");
    }
    if (rc == CS_OK) {
        double sum = 0.0;
        for (int b = 0; b < M; b++) sum += fabs(np == 2 ? acc[b] + acc[M + b] : acc[b]);
        *out = sum / (double)ni;
    }
    if (e != eb) free(e);
    if (acc != ab) free(acc);
    return rc;
}

/* ---- the box path (rece_g_box.c): per-box moments of f = t - v in one pass, in the canonical
 * item order, in the same two fixed halves as above from PAR_MIN on (added half 0 + half 1),
 * so the result depends on the multiset of items only. */
static size_t box_min = BOX_MIN;

void cs_mx_rece_box_min(size_t items)
{
    box_min = items;
}

typedef struct {
    const cs_mx_rgbox *x;
    const double *v;
    const uint8_t *t;
    const uint32_t *items;
    size_t a, z;
    double *G;            /* B x P1, zeroed by the caller */
    const atomic_int *cancel;
    int status;           /* 0, 1 cancelled, 2 a value outside [0,1] */
} bpart;

/* Adds f s^p, p < np, to the moments G of c's box (mx.h, cs_mx_rgbox); returns 1 (nothing
 * added) when c is outside [0,1] or NaN, where the expansion is not made. The plan's fields
 * come as arguments: the loops below keep them in locals (stores into the moments could
 * otherwise alias the plan and force reloads) and pass np as a constant where they are
 * specialised (the orders unroll). f s^p is formed as four chains of s^4 steps (a quarter of
 * the latency of one chain). The scalar and the class-wise passes both add through here, so
 * a class's moments are the same bits either way. */
static inline int box_add(double c, double f, double *G, double Bd, int B, const double *tq,
                          double twoB, int np)
{
    if (!(c >= 0.0 && c <= 1.0)) return 1;
    int b = (int)(c * Bd);
    if (b >= B) b = B - 1;
    double s = (c - tq[b]) * twoB, *g = G + (size_t)b * (size_t)np;
    double s2 = s * s, s4 = s2 * s2, f0 = f, f1 = f * s, f2 = f * s2, f3 = f1 * s2;
    int p = 0;
    for (; p + 4 <= np; p += 4) {
        g[p] += f0;
        g[p + 1] += f1;
        g[p + 2] += f2;
        g[p + 3] += f3;
        f0 *= s4;
        f1 *= s4;
        f2 *= s4;
        f3 *= s4;
    }
    if (p < np) g[p++] += f0;
    if (p < np) g[p++] += f1;
    if (p < np) g[p] += f2;
    return 0;
}

/* Items j0..j1-1 of a scalar problem into its moments. */
#define BPART_BODY(P1)                                                                      \
    const double *v = q->v, *tq = q->x->tq;                                                 \
    const uint8_t *t = q->t;                                                                \
    const uint32_t *items = q->items;                                                       \
    double *G = q->G, Bd = (double)q->x->B, twoB = q->x->twoB;                              \
    int B = q->x->B, bad = 0, np = (P1);                                                    \
    for (size_t j = j0; j < j1; j++) {                                                      \
        size_t i = items ? items[j] : j;                                                    \
        if (items && j + CS_MX_AHEAD < j1) {                                                \
            CS_MX_FETCH(&v[items[j + CS_MX_AHEAD]]);                                        \
            CS_MX_FETCH(&t[items[j + CS_MX_AHEAD]]);                                        \
        }                                                                                   \
        bad |= box_add(v[i], (double)t[i] - v[i], G, Bd, B, tq, twoB, np);                  \
    }                                                                                       \
    return bad;

static int bpart_run11(const bpart *q, size_t j0, size_t j1) { BPART_BODY(11) }
static int bpart_run(const bpart *q, size_t j0, size_t j1) { BPART_BODY(q->x->P1) }

static void *run_bpart(void *arg)
{
    bpart *q = arg;
    for (size_t j0 = q->a; j0 < q->z; j0 += 65536) {
        if (cs_mx_cancelled(q->cancel)) { q->status = 1; return NULL; }
        size_t j1 = j0 + 65536 < q->z ? j0 + 65536 : q->z;
        /* the usual order count (sigma >= 1/32: 11) unrolled */
        int bad = q->x->P1 == 11 ? bpart_run11(q, j0, j1) : bpart_run(q, j0, j1);
        if (bad) { q->status = 2; return NULL; }
    }
    return NULL;
}

/* RECE-G of a scalar problem by the box path. Returns 1 when it is done (*rc says how:
 * CS_OK with *out, or an error in err), 0 when the caller must take the per-sample path (too
 * few items, no plan for this sigma and M, a value outside [0,1]). */
static int box_scalar(const double *v, const uint8_t *t, const uint32_t *items, size_t ni,
                      const cs_settings *s, const atomic_int *cancel, double *out,
                      cs_status *rc, cs_error *err)
{
    if (ni < box_min || ni == 0) return 0;
    cs_mx_rgbox x;
    int r = cs_mx_rgbox_init(&x, s->sigma, s->bins, ni);
    if (r == 0) return 0;
    *rc = CS_OK;
    size_t per = r > 0 ? (size_t)x.B * (size_t)x.P1 : 0;
    double *G = r > 0 ? calloc(2 * per + (size_t)x.M, sizeof *G) : NULL;
    if (!G) {
        if (r > 0) cs_mx_rgbox_free(&x);
        *rc = cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory (RECE-G)");
        return 1;
    }
    int np = ni >= PAR_MIN ? 2 : 1;
    size_t half = np == 2 ? ni / 2 : ni;
    bpart pt[2];
    for (int k = 0; k < np; k++)
        pt[k] = (bpart){&x, v, t, items, k ? half : 0, k ? ni : half, G + (size_t)k * per, cancel, 0};
    cs_mx_pair(run_bpart, &pt[0], np == 2 ? &pt[1] : NULL, 1);
    int done = 1;
    for (int k = 0; k < np; k++) {
        if (pt[k].status == 2) done = 0;
        else if (pt[k].status == 1 && *rc == CS_OK)
            *rc = cs_error_set(err, CS_ECANCELLED, 0, 0, "cancelled");
    }
    if (done && *rc == CS_OK) {
        if (np == 2)
            for (size_t k = 0; k < per; k++) G[k] += G[per + k];
        *out = cs_mx_rgbox_gap(&x, G, G + 2 * per) / (double)ni;
    }
    free(G);
    cs_mx_rgbox_free(&x);
    return done;
}

/* The smoothed curve by the box path: three moment sets (f = 1, t, v: W~, A~, C~ per bin) in
 * one pass, the same halves as above. Returns 1 when done (*rc), 0 for the per-sample path:
 * as box_scalar, and also when some bin's weight W~_b is below 1e-9 of the items -- there the
 * ratios A~/W~, C~/W~ of a bin far from every value would rest on weights of ~1e-16 relative
 * accuracy in absolute terms, while the per-sample weights (normal tails) keep their relative
 * accuracy. */
typedef struct {
    bpart b;
    double *Gy, *Gc;      /* moments of t and of v; b.G holds those of 1 */
} cpart;

static void *run_cpart(void *arg)
{
    cpart *q = arg;
    const cs_mx_rgbox *x = q->b.x;
    const double *tq = x->tq, Bd = (double)x->B, twoB = x->twoB;
    int B = x->B, np = x->P1;
    for (size_t j0 = q->b.a; j0 < q->b.z; j0 += 65536) {
        if (cs_mx_cancelled(q->b.cancel)) { q->b.status = 1; return NULL; }
        size_t j1 = j0 + 65536 < q->b.z ? j0 + 65536 : q->b.z;
        int bad = 0;
        for (size_t j = j0; j < j1; j++) {
            size_t i = q->b.items ? q->b.items[j] : j;
            double c = q->b.v[i];
            bad |= box_add(c, 1.0, q->b.G, Bd, B, tq, twoB, np);
            if (q->b.t[i]) box_add(c, 1.0, q->Gy, Bd, B, tq, twoB, np);
            box_add(c, c, q->Gc, Bd, B, tq, twoB, np);
        }
        if (bad) { q->b.status = 2; return NULL; }
    }
    return NULL;
}

static int box_curve(const double *v, const uint8_t *t, const uint32_t *items, size_t ni,
                     const cs_settings *s, const atomic_int *cancel, double *out,
                     double *curve_acc, double *curve_conf, cs_status *rc, cs_error *err)
{
    if (!curve_acc || !curve_conf || ni < box_min || ni == 0) return 0;
    cs_mx_rgbox x;
    int r = cs_mx_rgbox_init(&x, s->sigma, s->bins, ni);
    if (r == 0) return 0;
    *rc = CS_OK;
    size_t per = r > 0 ? (size_t)x.B * (size_t)x.P1 : 0, M = r > 0 ? (size_t)x.M : 0;
    double *G = r > 0 ? calloc(6 * per + 3 * M, sizeof *G) : NULL;
    if (!G) {
        if (r > 0) cs_mx_rgbox_free(&x);
        *rc = cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory (RECE-G)");
        return 1;
    }
    int np = ni >= PAR_MIN ? 2 : 1;
    size_t half = np == 2 ? ni / 2 : ni;
    cpart pt[2];
    for (int k = 0; k < np; k++) {
        double *g = G + (size_t)k * 3 * per;
        pt[k] = (cpart){{&x, v, t, items, k ? half : 0, k ? ni : half, g, cancel, 0}, g + per, g + 2 * per};
    }
    cs_mx_pair(run_cpart, &pt[0], np == 2 ? &pt[1] : NULL, 1);
    int done = 1;
    for (int k = 0; k < np; k++) {
        if (pt[k].b.status == 2) done = 0;
        else if (pt[k].b.status == 1 && *rc == CS_OK)
            *rc = cs_error_set(err, CS_ECANCELLED, 0, 0, "cancelled");
    }
    if (done && *rc == CS_OK) {
        if (np == 2)
            for (size_t k = 0; k < 3 * per; k++) G[k] += G[3 * per + k];
        double *W = G + 6 * per, *A = W + M, *C = A + M;
        cs_mx_rgbox_gap(&x, G, W);
        cs_mx_rgbox_gap(&x, G + per, A);
        cs_mx_rgbox_gap(&x, G + 2 * per, C);
        for (size_t b = 0; b < M; b++)
            if (!(W[b] >= 1e-9 * (double)ni)) done = 0;
        if (done) {
            double sum = 0.0;
            for (size_t b = 0; b < M; b++) {
                sum += fabs(A[b] - C[b]);
                curve_acc[b] = A[b] / W[b];
                curve_conf[b] = C[b] / W[b];
            }
            *out = sum / (double)ni;
        }
    }
    free(G);
    cs_mx_rgbox_free(&x);
    return done;
}

/* RECE-G of one scalar problem without the cached rows: the box path, else per sample. */
static cs_status scalar_value(const double *v, const uint8_t *t, const uint32_t *items,
                              size_t ni, const cs_settings *s, const atomic_int *cancel,
                              double *out, cs_error *err)
{
    cs_status rc;
    if (box_scalar(v, t, items, ni, s, cancel, out, &rc, err)) return rc;
    return rece_d_scalar(v, t, NULL, items, ni, s, cancel, out, err);
}

/* Rows per chunk of the cache build (small enough that a 20k-sample cache is split in two) */
#define DC_ROWS 4096u
typedef struct { cs_prepared *p; double *D; const double *e; int M; } dcache_ctx;

static void dcache_chunk(void *vctx, size_t c)
{
    dcache_ctx *x = vctx;
    size_t M = (size_t)x->M, Ms = DSTRIDE(M), a = c * DC_ROWS;
    size_t z = a + DC_ROWS < x->p->n ? a + DC_ROWS : x->p->n;
    for (size_t i = a; i < z; i++) {
        double *di = x->D + i * Ms;
        cs_mx_gauss_weights(x->p->v[i], x->p->s.sigma, x->e, x->M, di);
        double tc = (double)x->p->t[i] - x->p->v[i];
        for (size_t b = 0; b < M; b++) di[b] = di[b] * tc;
        for (size_t b = M; b < Ms; b++) di[b] = 0.0;
    }
}

static const double *d_cache(cs_prepared *p)
{
    int M = p->s.bins;
    if ((double)p->n * (double)DSTRIDE(M) * sizeof(double) > (double)CACHE_BYTES) return NULL;
    pthread_mutex_lock(&p->lock);
    if (!p->rece_d && !p->rece_d_tried) {
        p->rece_d_tried = 1;
        double *e = malloc((size_t)(M + 1) * sizeof *e);
        /* 64-byte aligned rows of a multiple of 8 doubles: whole cache lines */
        size_t bytes = (p->n ? p->n : 1) * DSTRIDE(M) * sizeof(double);
        double *D = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
        if (e && D) {
            cs_mx_edges(e, M);
            dcache_ctx x = {p, D, e, M};
            /* rows are independent: two threads on a large cache cannot change a value */
            cs_mx_chunks((p->n + DC_ROWS - 1) / DC_ROWS, p->n * (size_t)M >= 300000,
                         dcache_chunk, &x);
            p->rece_d = D;
            D = NULL;
        }
        free(e);
        free(D);
    }
    const double *D = p->rece_d;
    pthread_mutex_unlock(&p->lock);
    return D;
}

const double *cs_mx_rece_rows(cs_prepared *p, size_t *stride)
{
    /* The fused subset walk (evaluate.c) adds these rows for subsets of up to CS_MX_CHUNK
     * items without asking cs_mx_rece_g; when the box path starts below that, one multiset
     * could get two paths (rows there, boxes in a full evaluation of the same rows), so the
     * walk is left without rows and every RECE-G goes through cs_mx_rece_g. */
    if (box_min <= CS_MX_CHUNK) return NULL;
    if (p->vector || p->kind == CS_LENS_CLASSWISE) return NULL;
    *stride = DSTRIDE(p->s.bins);
    return d_cache(p);
}

/* ---- class-wise RECE-G: the mean over the K classes of each class's one-vs-rest RECE-G.
 * Each class's number is what the scalar path gives on that class's column (class:C): the
 * box path's moments, or else rece_d_scalar's weights, formed by the same additions in item
 * order, in two fixed halves of the items from PAR_MIN on. The work goes sample by sample
 * over the probability rows (contiguous) with every class's accumulators beside (per class
 * M bin sums, or B x P1 box moments: 80 x 11 doubles at sigma 0.1), instead of one strided
 * column copy per class; the classes' numbers are then added in class order. Two threads:
 * the two item halves, or else the two halves of the classes. */
#define CW_MAX_ACC ((size_t)1 << 22)   /* accumulators (doubles); above: class by class */

typedef struct cwpart {
    const cs_prepared *p;
    const uint32_t *items;
    size_t a, z;          /* items a..z-1 */
    size_t c0, c1;        /* classes c0..c1-1 */
    const double *e;
    int M;
    const cs_mx_rgbox *x; /* the box plan, or NULL: weights per sample */
    double *acc;          /* (c1 - c0) x M bin sums, or (c1 - c0) x B x P1 moments; zeroed */
    uint8_t *bad;         /* (c1 - c0): the class has a value outside [0,1] (box path) */
    const atomic_int *cancel;
    int status;           /* 0, 1 cancelled, -1 ENOMEM */
} cwpart;

/* One probability row into every class's box moments (as box_scalar on the class column). */
#define CW_BOX_BODY(P1)                                                                     \
    const double *tq = q->x->tq;                                                            \
    double Bd = (double)q->x->B, twoB = q->x->twoB, *acc = q->acc;                          \
    int B = q->x->B, np = (P1);                                                             \
    uint8_t *bad = q->bad;                                                                  \
    for (size_t c = q->c0; c < q->c1; c++) {                                                \
        double v = g[c];                                                                    \
        bad[c - q->c0] |= (uint8_t)box_add(v, (double)(y == (int32_t)c) - v,                \
                                           acc + (c - q->c0) * per, Bd, B, tq, twoB, np);   \
    }

static void cw_box_row11(const cwpart *q, const double *g, int32_t y, size_t per) { CW_BOX_BODY(11) }
static void cw_box_row(const cwpart *q, const double *g, int32_t y, size_t per) { CW_BOX_BODY(q->x->P1) }

static void cw_run(void *ctx, size_t k)
{
    cwpart *q = (cwpart *)ctx + k;
    const cs_dataset *d = q->p->d;
    size_t K = d->k, M = (size_t)q->M;
    const cs_mx_rgbox *x = q->x;
    size_t per = x ? (size_t)x->B * (size_t)x->P1 : M;
    double *w = x ? NULL : malloc(M * sizeof *w);
    if (!x && !w) { q->status = -1; return; }
    for (size_t j = q->a; j < q->z; j++) {
        if (((j - q->a) & 1023) == 0 && cs_mx_cancelled(q->cancel)) { q->status = 1; break; }
        size_t r = q->p->rows[q->items ? q->items[j] : (uint32_t)j];
        const double *g = d->prob + r * K;
        int32_t y = d->label[r];
        if (x) {
            if (x->P1 == 11) cw_box_row11(q, g, y, per);
            else cw_box_row(q, g, y, per);
            continue;
        }
        for (size_t c = q->c0; c < q->c1; c++) {
            double v = g[c];
            cs_mx_gauss_weights(v, q->p->s.sigma, q->e, q->M, w);
            double tc = (double)(y == (int32_t)c) - v, *acc = q->acc + (c - q->c0) * M;
            for (size_t b = 0; b < M; b++) acc[b] += w[b] * tc;
        }
    }
    free(w);
}

/* Class c's values and targets as columns (v, t: n each) and its scalar RECE-G. */
static cs_status cw_column(const cs_prepared *p, size_t c, double *v, uint8_t *t,
                           const uint32_t *items, size_t ni, const atomic_int *cancel,
                           double *out, cs_error *err)
{
    const cs_dataset *d = p->d;
    size_t K = d->k;
    for (size_t i = 0; i < p->n; i++) {
        v[i] = d->prob[(size_t)p->rows[i] * K + c];
        t[i] = d->label[p->rows[i]] == (int32_t)c;
    }
    return scalar_value(v, t, items, ni, &p->s, cancel, out, err);
}

/* Too many accumulators for every class at once: class by class over a column copy (the
 * same numbers). */
static cs_status cw_by_column(const cs_prepared *p, const uint32_t *items, size_t ni, const atomic_int *cancel,
                              double *out, cs_error *err)
{
    size_t K = p->d->k;
    double *v = malloc(p->n * sizeof *v);
    uint8_t *t = malloc(p->n);
    if (!v || !t) { free(v); free(t); return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory (RECE-G)"); }
    cs_status rc = CS_OK;
    double total = 0.0;
    for (size_t c = 0; c < K && rc == CS_OK; c++) {
        double r;
        rc = cw_column(p, c, v, t, items, ni, cancel, &r, err);
        total += r;
    }
    free(v);
    free(t);
    if (rc == CS_OK) *out = total / (double)K;
    return rc;
}

/* Every class's accumulators in one pass over the items, in two parts: the two halves of the
 * items (each with its own accumulators, as rece_d_scalar splits them) or the two halves of
 * the classes. */
static cs_status cw_accumulate(const cs_prepared *p, const uint32_t *items, size_t ni, const atomic_int *cancel,
                               const double *e, const cs_mx_rgbox *px, size_t per, int halves, double *acc,
                               uint8_t *bad, cs_error *err)
{
    size_t K = p->d->k, M = (size_t)p->s.bins;
    cwpart pt[2];
    size_t half = ni / 2, ch = K / 2;
    for (int k = 0; k < 2; k++)
        pt[k] = halves ? (cwpart){ p, items, k ? half : 0, k ? ni : half, 0, K, e, (int)M, px,
                                   acc + (size_t)k * K * per, bad + (size_t)k * K, cancel, 0 }
                       : (cwpart){ p, items, 0, ni, k ? ch : 0, k ? K : ch, e, (int)M, px,
                                   acc + (k ? ch * per : 0), bad + (k ? ch : 0), cancel, 0 };
    cs_mx_chunks(2, ni * K >= 100000, cw_run, pt);
    cs_status rc = CS_OK;
    for (int k = 0; k < 2; k++) {
        if (pt[k].status < 0) rc = cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory (RECE-G)");
        else if (pt[k].status > 0 && rc == CS_OK) rc = cs_error_set(err, CS_ECANCELLED, 0, 0, "cancelled");
    }
    return rc;
}

/* Each class's RECE-G from its accumulators, their mean into *out. */
static cs_status cw_totals(const cs_prepared *p, const uint32_t *items, size_t ni, const atomic_int *cancel,
                           const cs_mx_rgbox *px, size_t per, int halves, double *acc, const uint8_t *bad,
                           double *out, cs_error *err)
{
    size_t K = p->d->k, M = (size_t)p->s.bins;
    double *v = NULL;
    uint8_t *t = NULL;
    cs_status rc = CS_OK;
    double total = 0.0, *D = acc + K * per * (halves ? 2 : 1);
    for (size_t c = 0; c < K && rc == CS_OK; c++) {
        double *a0 = acc + c * per, *a1 = acc + K * per + c * per;
        double sum = 0.0;
        if (px && (bad[c] || (halves && bad[K + c]))) {
            /* a value outside [0,1]: this class takes the per-sample path, as class:C does */
            if (!v) {
                v = malloc(p->n * sizeof *v);
                t = malloc(p->n);
                if (!v || !t) { rc = cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory (RECE-G)"); break; }
            }
            rc = cw_column(p, c, v, t, items, ni, cancel, &sum, err);
            total += sum;
            continue;
        }
        if (px) {
            if (halves)
                for (size_t k = 0; k < per; k++) a0[k] += a1[k];
            total += cs_mx_rgbox_gap(px, a0, D) / (double)ni;
            continue;
        }
        for (size_t b = 0; b < M; b++) sum += fabs(halves ? a0[b] + a1[b] : a0[b]);
        total += sum / (double)ni;
    }
    if (rc == CS_OK) *out = total / (double)K;
    free(v);
    free(t);
    return rc;
}

static cs_status rece_classwise(const cs_prepared *p, const uint32_t *items, size_t ni,
                                const atomic_int *cancel, double *out, cs_error *err)
{
    size_t K = p->d->k, M = (size_t)p->s.bins;
    int halves = ni >= PAR_MIN;   /* rece_d_scalar's and box_scalar's split of the items */
    cs_mx_rgbox x;
    int box = ni >= box_min && ni > 0 ? cs_mx_rgbox_init(&x, p->s.sigma, (int)M, ni) : 0;
    if (box < 0) return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory (RECE-G)");
    size_t per = box ? (size_t)x.B * (size_t)x.P1 : M;
    if ((double)K * (double)per * 2.0 > (double)CW_MAX_ACC) {
        if (box) cs_mx_rgbox_free(&x);
        return cw_by_column(p, items, ni, cancel, out, err);
    }
    double *e = malloc((M + 1) * sizeof *e);
    double *acc = calloc(K * per * (halves ? 2 : 1) + M, sizeof *acc);
    uint8_t *bad = calloc(K * (halves ? 2 : 1), 1);
    cs_status rc = CS_OK;
    if (!e || !acc || !bad) rc = cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory (RECE-G)");
    const cs_mx_rgbox *px = box ? &x : NULL;
    if (rc == CS_OK) {
        cs_mx_edges(e, (int)M);
        rc = cw_accumulate(p, items, ni, cancel, e, px, per, halves, acc, bad, err);
    }
    if (rc == CS_OK) rc = cw_totals(p, items, ni, cancel, px, per, halves, acc, bad, out, err);
    free(e);
    free(acc);
    free(bad);
    if (box) cs_mx_rgbox_free(&x);
    return rc;
}

cs_status cs_mx_rece_g(const cs_prepared *cp, const uint32_t *items, size_t ni,
                       const atomic_int *cancel, double *out, cs_error *err)
{
    cs_prepared *p = (cs_prepared *)cp;   /* lazy cache only, under the lock */
    *out = NAN;
    if (p->vector) return CS_OK;          /* defined for scalar lenses only */
    if (p->kind != CS_LENS_CLASSWISE) {
        /* the box path first: it needs no rows (and may not build them) */
        cs_status rc;
        if (box_scalar(p->v, p->t, items, ni, &p->s, cancel, out, &rc, err)) return rc;
        /* A cache is worth building only when it will be reused (subsets) or is cheap. */
        const double *D;
        if (items || p->n <= 65536) {
            D = d_cache(p);
        } else {
            pthread_mutex_lock(&p->lock);
            D = p->rece_d;
            pthread_mutex_unlock(&p->lock);
        }
        return rece_d_scalar(p->v, p->t, D, items, ni, &p->s, cancel, out, err);
    }
    return rece_classwise(p, items, ni, cancel, out, err);
}
