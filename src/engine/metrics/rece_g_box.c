/* RECE-G on large samples without a weight per sample (the fast-Gauss-transform idea).
 *
 * [0,1] is cut into B boxes of width h, centres t_q; a sample in box q is c = t_q + r s with
 * r = h/2, |s| <= 1. Each normalised weight w_b(c) = m_b(c) / Z(c) is analytic in s, so
 *     w_b(t_q + r s) = sum_{p=0..P} coef[q][b][p] s^p   (+ a remainder below TOL),
 * and D_b = sum_i w_b(c_i) f_i = sum_q sum_p coef[q][b][p] G[q][p] with the per-box moments
 * G[q][p] = sum_{i in q} f_i s_i^p (f_i = y_i - c_i for RECE-G). The moments take one pass
 * over the data (no erfc); the rest is O(B M P) per evaluation, independent of N.
 *
 * Coefficients (d = r s / sigma, u_e = (e - t_q) / sigma, He = probabilists' Hermite):
 *     Phi(u - d) = Phi(u) - sum_{p>=1} d^p / p! He_{p-1}(u) phi(u),
 * so m_b's series has the constant m_b(t_q) -- the difference of normal tails taken on the
 * accurate side, exactly as cs_mx_gauss_weights does at c = t_q -- and, for p >= 1,
 * -(k_{p-1}(u_{b+1}) - k_{p-1}(u_b)) / p with k_n(u) = He_n(u) phi(u) / n!; Z's series is
 * the same at the outer edges (the inner ones telescope). w_b = m_b / Z by power-series
 * division, O(P^2) per bin per box.
 *
 * Truncation: with rho = r / sigma <= RHO_MAX (1/4), Cramer's bound |He_n(u)| e^{-u^2/4} <=
 * 1.0865 sqrt(n!) makes m_b's omitted terms at most 2 * 0.4335 rho^p / (p sqrt((p-1)!)) each,
 * which fixes the first P tried. 1/Z has no such bound here (it converges fast in practice:
 * Z >= Phi(1/sigma) - 1/2 on [0,1] and the zeros of Phi nearest the real axis are ~3.4 units
 * off it), so the quotient is checked as computed: its coefficients of orders P+1..P+XTRA
 * must add up to <= TOL on |s| <= 1 for every bin and box, else P grows (and past P_MAX the
 * caller keeps the per-sample path). TOL = 1e-17 absolute on weights that sum to 1; the unit
 * test compares the series with the per-sample weights at 9 points of every box. */
#include "mx.h"

#include <stdlib.h>
#include <string.h>

/* r / sigma: RHO_FINE (P1 = 11 orders) while that takes at most B_FINE boxes (sigma >=
 * 1/32), else at most RHO_MAX (P1 = 17) with at least B_FINE boxes. Fewer orders make the
 * pass over the data cheaper (class-wise at K = 300: 0.25 -> 0.0625 took its moments from
 * ~145 to ~105 ms); more boxes cost memory (B x P1 doubles per class) and table work
 * (1/32: 10 orders, no faster). */
#define RHO_FINE 0.0625
#define B_FINE 256
#define RHO_MAX 0.25
#define TOL 1e-17
#define P_MAX 40
#define XTRA 4            /* orders beyond P whose computed coefficients are checked */
#define B_MAX 4096
#define COEF_MAX ((size_t)1 << 22)   /* doubles in the coefficient table (32 MiB) */

/* The first P for which Cramer's bound on m_b's omitted terms (orders > P, summed) is below
 * TOL * zmin. */
static int cramer_order(double rho, double zmin)
{
    double term[P_MAX + 62], lf = 0.0;   /* lf = log((p-1)!) */
    for (int p = 1; p <= P_MAX + 61; p++) {
        if (p > 1) lf += log((double)(p - 1));
        term[p] = 0.867 * exp((double)p * log(rho) - 0.5 * lf) / (double)p;
    }
    double tail = 0.0;   /* orders P+1 .. P_MAX+61 */
    for (int p = P_MAX + 61; p > P_MAX + 1; p--) tail += term[p];
    int P = P_MAX + 1;
    for (int Q = P_MAX; Q >= 1; Q--) {   /* tail of orders > Q */
        tail += term[Q + 1];
        if (tail <= TOL * zmin) P = Q;
        else break;
    }
    return P;
}

/* k_n(u) = He_n(u) phi(u) / n!, n = 0..n_max-1, by k_{n+1} = (u k_n - k_{n-1}) / (n+1). */
static void hermite_k(double u, int n_max, double *k)
{
    double phi = exp(-0.5 * u * u) * 0.39894228040143267794;
    static const double inv[P_MAX + XTRA + 1] = {
        1.0, 1.0, 1.0 / 2, 1.0 / 3, 1.0 / 4, 1.0 / 5, 1.0 / 6, 1.0 / 7, 1.0 / 8, 1.0 / 9,
        1.0 / 10, 1.0 / 11, 1.0 / 12, 1.0 / 13, 1.0 / 14, 1.0 / 15, 1.0 / 16, 1.0 / 17,
        1.0 / 18, 1.0 / 19, 1.0 / 20, 1.0 / 21, 1.0 / 22, 1.0 / 23, 1.0 / 24, 1.0 / 25,
        1.0 / 26, 1.0 / 27, 1.0 / 28, 1.0 / 29, 1.0 / 30, 1.0 / 31, 1.0 / 32, 1.0 / 33,
        1.0 / 34, 1.0 / 35, 1.0 / 36, 1.0 / 37, 1.0 / 38, 1.0 / 39, 1.0 / 40, 1.0 / 41,
        1.0 / 42, 1.0 / 43, 1.0 / 44};
    k[0] = phi;
    if (n_max > 1) k[1] = u * phi;
    for (int n = 1; n + 1 < n_max; n++) k[n + 1] = (u * k[n] - k[n - 1]) * inv[n + 1];
}

/* Coefficients of every bin of box q to order PX (PX+1 each, in s) into w (M x (PX+1));
 * scratch holds (M+1) * PX + (PX+1) * (M+1) doubles. Returns 0, or -1 when Z(t_q) is not
 * > 0. The division runs over all bins at once for each order (independent chains). */
static int box_coefs(double t, double sigma, const double *e, int M, int PX, double rho,
                     double *w, double *scratch)
{
    size_t P1 = (size_t)PX + 1, Mz = (size_t)M;
    double *k = scratch;                             /* (M+1) x PX: k_n at each edge */
    double *W = scratch + (Mz + 1) * (size_t)PX;     /* P1 x M: w's series, order-major */
    double *z = W + P1 * Mz;                         /* P1: Z's series */
    double Z0 = 0.0, zp = (e[0] - t) / sigma, tp = cs_mx_normal_tail(zp);
    for (int i = 0; i <= M; i++) hermite_k((e[i] - t) / sigma, PX, k + (size_t)i * (size_t)PX);
    /* constant terms: cs_mx_gauss_weights at c = t (tails on the accurate side) */
    for (size_t b = 0; b < Mz; b++) {
        double zn = (e[b + 1] - t) / sigma, tn = cs_mx_normal_tail(zn), m;
        if (zn <= 0) m = tn - tp;
        else if (zp >= 0) m = tp - tn;
        else m = 1.0 - tp - tn;
        W[b] = m > 0 ? m : 0.0;
        Z0 += W[b];
        zp = zn;
        tp = tn;
    }
    if (!(Z0 > 0)) return -1;
    double inv = 1.0 / Z0;
    const double *k0 = k, *kM = k + Mz * (size_t)PX;
    for (size_t p = 1; p < P1; p++) z[p] = -(kM[p - 1] - k0[p - 1]) / (double)p;
    for (size_t b = 0; b < Mz; b++) W[b] *= inv;
    for (size_t p = 1; p < P1; p++) {
        double *wp = W + p * Mz;
        for (size_t b = 0; b < Mz; b++)
            wp[b] = -(k[(b + 1) * (size_t)PX + p - 1] - k[b * (size_t)PX + p - 1]) / (double)p;
        /* per bin acc = a_p - z_1 w_{p-1} - ... - z_p w_0 in that order; four bins at a time
         * in registers (four independent chains) */
        size_t c = 0;
        for (; c + 4 <= Mz; c += 4) {
            double a0 = wp[c], a1 = wp[c + 1], a2 = wp[c + 2], a3 = wp[c + 3];
            for (size_t j = 1; j <= p; j++) {
                double zj = z[j];
                const double *wq = W + (p - j) * Mz + c;
                a0 -= zj * wq[0];
                a1 -= zj * wq[1];
                a2 -= zj * wq[2];
                a3 -= zj * wq[3];
            }
            wp[c] = a0; wp[c + 1] = a1; wp[c + 2] = a2; wp[c + 3] = a3;
        }
        for (; c < Mz; c++) {
            double a0 = wp[c];
            for (size_t j = 1; j <= p; j++) a0 -= z[j] * W[(p - j) * Mz + c];
            wp[c] = a0;
        }
        for (size_t b = 0; b < Mz; b++) wp[b] *= inv;
    }
    /* from powers of d = rho s to powers of s, bin-major */
    for (size_t b = 0; b < Mz; b++) {
        double f = 1.0;
        for (size_t p = 0; p < P1; p++, f *= rho) w[b * P1 + p] = p ? W[p * Mz + b] * f : W[b];
    }
    return 0;
}

/* The plan of (sigma, M), independent of the item count: 1 made, 0 none (the bound cannot be
 * met within P_MAX or the memory cap), -1 ENOMEM. */
static int make_plan(cs_mx_rgbox *x, double **out, double sigma, int M, int B, const double *tq,
                     int P)
{
    double rho = 1.0 / (2.0 * (double)B * sigma);
    double *e = malloc((size_t)(M + 1) * sizeof *e);
    if (!e) return -1;
    cs_mx_edges(e, M);
    int ok = 0;
    double *coef = NULL, *scratch = NULL;
    for (; P <= P_MAX; P++) {
        int PX = P + XTRA, P1 = PX + 1;
        size_t need = (size_t)B * (size_t)M * (size_t)P1;
        if (need > COEF_MAX) break;
        free(coef);
        free(scratch);
        coef = malloc(need * sizeof *coef);
        scratch = malloc(((size_t)(M + 1) * (size_t)PX + (size_t)P1 * (size_t)(M + 1)) * sizeof *scratch);
        if (!coef || !scratch) { ok = -1; break; }
        int fine = 1;
        for (int q = 0; q < B && fine; q++) {
            double *cq = coef + (size_t)q * (size_t)M * (size_t)P1;
            if (box_coefs(tq[q], sigma, e, M, PX, rho, cq, scratch) < 0) { fine = -1; break; }
            for (int b = 0; b < M && fine; b++) {
                double tail = 0.0;
                for (int p = P + 1; p <= PX; p++) tail += fabs(cq[(size_t)b * (size_t)P1 + p]);
                if (!(tail <= TOL)) fine = 0;
            }
        }
        if (fine < 0) break;
        if (fine) { ok = 1; break; }
    }
    free(scratch);
    free(e);
    if (ok <= 0) { free(coef); return ok; }
    /* keep orders 0..P only (compacted in place: rows only move down) */
    int PX1 = P + XTRA + 1, P1 = P + 1;
    for (size_t r = 0; r < (size_t)B * (size_t)M; r++)
        for (int p = 0; p < P1; p++) coef[r * (size_t)P1 + (size_t)p] = coef[r * (size_t)PX1 + (size_t)p];
    x->B = B;
    x->P1 = P1;
    x->M = M;
    x->twoB = 2.0 * (double)B;
    x->coef = *out = coef;
    return 1;
}

/* The last plan made, kept for the next evaluation with the same (sigma, M) (bootstrap draws,
 * size-curve subsets: the plan is then a lookup): its table and box centres are shared
 * read-only, counted by references (the cache holds one, every plan handed out one); the
 * last reference frees them. */
typedef struct shared_coef {
    atomic_int refs;
    double *coef, *tq;
} shared_coef;
static pthread_mutex_t last_lock = PTHREAD_MUTEX_INITIALIZER;
static double last_sigma;
static cs_mx_rgbox last;   /* last.shared NULL: none */

static void release(shared_coef *sc)
{
    if (sc && atomic_fetch_sub(&sc->refs, 1) == 1) {
        free(sc->coef);
        free(sc->tq);
        free(sc);
    }
}

/* The table's work (B M P^2 for the division) must stay below that of the per-sample weights
 * it replaces (ni (M+1) normal tails, ~20 flops each). */
static int worth(int B, int M, int P1, size_t ni)
{
    return (double)B * (double)M * (double)P1 * (double)(P1 + XTRA) <=
           20.0 * (double)ni * (double)(M + 1);
}

int cs_mx_rgbox_init(cs_mx_rgbox *x, double sigma, int M, size_t ni)
{
    memset(x, 0, sizeof *x);
    if (!(sigma > 0) || M < 1) return 0;
    pthread_mutex_lock(&last_lock);
    int hit = last.shared && last_sigma == sigma && last.M == M;
    if (hit) {
        *x = last;
        atomic_fetch_add(&last.shared->refs, 1);
    }
    pthread_mutex_unlock(&last_lock);
    if (hit) {
        if (worth(x->B, M, x->P1, ni)) return 1;
        cs_mx_rgbox_free(x);
        return 0;
    }
    double nb = ceil(1.0 / (2.0 * sigma * RHO_FINE));
    if (nb > B_FINE) nb = fmax(B_FINE, ceil(1.0 / (2.0 * sigma * RHO_MAX)));
    if (nb > B_MAX) return 0;
    int B = nb < 1 ? 1 : (int)nb;
    double *tq = malloc((size_t)B * sizeof *tq);
    if (!tq) return -1;
    double zmin = 1.0;
    for (int q = 0; q < B; q++) {
        tq[q] = ((double)q + 0.5) / (double)B;
        double z = cs_mx_normal_tail(-(1.0 - tq[q]) / sigma);   /* Phi(-(1-t)/sigma) */
        double Z = 1.0 - z - cs_mx_normal_tail(-tq[q] / sigma);
        if (Z < zmin) zmin = Z;
    }
    int P = zmin > 0 ? cramer_order(1.0 / (2.0 * (double)B * sigma), zmin) : P_MAX + 1;
    /* P only grows from here, and the work with it: not worth it now, not later (the same
     * answer as the final test below would give, without making the table) */
    if (P > P_MAX || !worth(B, M, P + 1, ni)) { free(tq); return 0; }
    double *coef = NULL;
    int r = make_plan(x, &coef, sigma, M, B, tq, P);
    shared_coef *sc = r > 0 ? malloc(sizeof *sc) : NULL;
    if (r <= 0 || !sc) {
        free(coef);
        free(tq);
        memset(x, 0, sizeof *x);
        return r < 0 || (r > 0 && !sc) ? -1 : 0;
    }
    atomic_init(&sc->refs, 2);   /* the cache and x */
    sc->coef = coef;
    sc->tq = tq;
    x->tq = tq;
    x->shared = sc;
    pthread_mutex_lock(&last_lock);
    shared_coef *old = last.shared;
    last = *x;
    last_sigma = sigma;
    pthread_mutex_unlock(&last_lock);
    release(old);
    if (worth(B, M, x->P1, ni)) return 1;
    cs_mx_rgbox_free(x);
    return 0;
}

void cs_mx_rgbox_free(cs_mx_rgbox *x)
{
    release(x->shared);   /* the table and centres always belong to a shared block */
    memset(x, 0, sizeof *x);
}

double cs_mx_rgbox_gap(const cs_mx_rgbox *x, const double *G, double *D)
{
    size_t M = (size_t)x->M, P1 = (size_t)x->P1;
    for (size_t b = 0; b < M; b++) D[b] = 0.0;
    for (size_t q = 0; q < (size_t)x->B; q++) {
        const double *g = G + q * P1;
        int empty = 1;
        for (size_t p = 0; p < P1 && empty; p++) empty = g[p] == 0.0;
        if (empty) continue;   /* adds only zeros: skipping it changes no bit */
        const double *cq = x->coef + q * M * P1;
        for (size_t b = 0; b < M; b++) {
            const double *c = cq + b * P1;
            double s = 0.0;
            for (size_t p = 0; p < P1; p++) s += c[p] * g[p];
            D[b] += s;
        }
    }
    double sum = 0.0;
    for (size_t b = 0; b < M; b++) sum += fabs(D[b]);
    return sum;
}
