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
 * Truncation: with rho = r / sigma <= RHO_MAX, Cramer's bound |He_n(u)| e^{-u^2/4} <=
 * 1.0865 sqrt(n!) makes m_b's omitted terms at most 2 * 0.4335 rho^p / (p sqrt((p-1)!)) each,
 * which fixes the first P tried; 1/Z converges much faster (its complex zeros are > 3 sigma
 * units away for every box centre in [0,1]), and the quotient's computed coefficients of
 * orders P+1..P+XTRA must add up to <= TOL on |s| <= 1, else P grows (and past P_MAX the
 * caller keeps the per-sample path). TOL = 1e-17 absolute on weights that sum to 1. */
#include "mx.h"

#include <stdlib.h>

#define RHO_MAX 0.25      /* r / sigma: sets B = ceil(1 / (2 sigma RHO_MAX)) */
#define TOL 1e-17
#define P_MAX 40
#define XTRA 4            /* orders beyond P whose computed coefficients are checked */
#define B_MAX 4096
#define COEF_MAX ((size_t)1 << 22)   /* doubles in the coefficient table (32 MiB) */

/* The first P for which Cramer's bound on m_b's omitted terms (orders > P, summed) is below
 * TOL * zmin. */
static int cramer_order(double rho, double zmin)
{
    for (int P = 1; P <= P_MAX; P++) {
        double sum = 0.0, lf = 0.0;   /* lf = log((p-1)!) */
        for (int p = 1; p <= P + 60; p++) {
            if (p > 1) lf += log((double)(p - 1));
            if (p > P) sum += 0.867 * exp((double)p * log(rho) - 0.5 * lf) / (double)p;
        }
        if (sum <= TOL * zmin) return P;
    }
    return P_MAX + 1;
}

/* k_n(u) = He_n(u) phi(u) / n!, n = 0..n_max-1, by k_{n+1} = (u k_n - k_{n-1}) / (n+1). */
static void hermite_k(double u, int n_max, double *k)
{
    double phi = exp(-0.5 * u * u) * 0.39894228040143267794;
    k[0] = phi;
    if (n_max > 1) k[1] = u * phi;
    for (int n = 1; n + 1 < n_max; n++) k[n + 1] = (u * k[n] - k[n - 1]) / (double)(n + 1);
}

/* Coefficients of every bin of box q to order PX (PX+1 each, in s) into w (M x (PX+1));
 * scratch holds (M+1) * PX + 2 * (PX + 1) doubles. Returns 0, or -1 when Z(t_q) is not > 0. */
static int box_coefs(double t, double sigma, const double *e, int M, int PX, double rho,
                     double *w, double *scratch)
{
    int P1 = PX + 1;
    double *k = scratch;                    /* (M+1) x PX: k_n at each edge */
    double *z = scratch + (size_t)(M + 1) * (size_t)PX;   /* P1: Z's series */
    double *a = z + P1;                     /* P1: one bin's m series */
    double Z0 = 0.0, zp = (e[0] - t) / sigma, tp = cs_mx_normal_tail(zp);
    for (int i = 0; i <= M; i++) hermite_k((e[i] - t) / sigma, PX, k + (size_t)i * (size_t)PX);
    /* constant terms: cs_mx_gauss_weights at c = t (tails on the accurate side) */
    for (int b = 0; b < M; b++) {
        double zn = (e[b + 1] - t) / sigma, tn = cs_mx_normal_tail(zn), m;
        if (zn <= 0) m = tn - tp;
        else if (zp >= 0) m = tp - tn;
        else m = 1.0 - tp - tn;
        w[(size_t)b * (size_t)P1] = m > 0 ? m : 0.0;
        Z0 += w[(size_t)b * (size_t)P1];
        zp = zn;
        tp = tn;
    }
    if (!(Z0 > 0)) return -1;
    double inv = 1.0 / Z0;
    z[0] = Z0;
    const double *k0 = k, *kM = k + (size_t)M * (size_t)PX;
    for (int p = 1; p <= PX; p++) z[p] = -(kM[p - 1] - k0[p - 1]) / (double)p;
    for (int b = 0; b < M; b++) {
        double *wb = w + (size_t)b * (size_t)P1;
        const double *kl = k + (size_t)b * (size_t)PX, *kh = kl + PX;
        for (int p = 1; p <= PX; p++) a[p] = -(kh[p - 1] - kl[p - 1]) / (double)p;
        wb[0] *= inv;
        for (int p = 1; p <= PX; p++) {
            double acc = a[p];
            for (int j = 1; j <= p; j++) acc -= z[j] * wb[p - j];
            wb[p] = acc * inv;
        }
        /* from powers of d = rho s to powers of s */
        double f = rho;
        for (int p = 1; p <= PX; p++, f *= rho) wb[p] *= f;
    }
    return 0;
}

int cs_mx_rgbox_init(cs_mx_rgbox *x, double sigma, int M, size_t ni)
{
    x->coef = NULL;
    x->tq = NULL;
    if (!(sigma > 0) || M < 1) return 0;
    double nb = ceil(1.0 / (2.0 * sigma * RHO_MAX));
    if (nb > B_MAX) return 0;
    int B = nb < 1 ? 1 : (int)nb;
    double rho = 1.0 / (2.0 * (double)B * sigma);
    double *e = malloc((size_t)(M + 1) * sizeof *e);
    double *tq = malloc((size_t)B * sizeof *tq);
    if (!e || !tq) { free(e); free(tq); return -1; }
    cs_mx_edges(e, M);
    double zmin = 1.0;
    for (int q = 0; q < B; q++) {
        tq[q] = ((double)q + 0.5) / (double)B;
        double z = cs_mx_normal_tail(-(1.0 - tq[q]) / sigma);   /* Phi(-(1-t)/sigma) */
        double Z = 1.0 - z - cs_mx_normal_tail(-tq[q] / sigma);
        if (Z < zmin) zmin = Z;
    }
    int P = zmin > 0 ? cramer_order(rho, zmin) : P_MAX + 1;
    int ok = 0;
    double *coef = NULL, *scratch = NULL;
    for (; P <= P_MAX; P++) {
        int PX = P + XTRA, P1 = PX + 1;
        size_t need = (size_t)B * (size_t)M * (size_t)P1;
        /* the table's work (B M P^2) must stay below the per-sample weights it replaces
         * (ni (M+1) normal tails, each ~20 flops), and its memory bounded */
        if (need > COEF_MAX || (double)need * (double)PX > 20.0 * (double)ni * (double)(M + 1))
            break;
        free(coef);
        free(scratch);
        coef = malloc(need * sizeof *coef);
        scratch = malloc(((size_t)(M + 1) * (size_t)PX + 2 * (size_t)P1) * sizeof *scratch);
        if (!coef || !scratch) { free(coef); free(scratch); free(e); free(tq); return -1; }
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
    if (!ok) { free(coef); free(tq); return 0; }
    /* keep orders 0..P only (compacted in place: rows only move down) */
    int PX1 = P + XTRA + 1, P1 = P + 1;
    for (size_t r = 0; r < (size_t)B * (size_t)M; r++)
        for (int p = 0; p < P1; p++) coef[r * (size_t)P1 + (size_t)p] = coef[r * (size_t)PX1 + (size_t)p];
    x->B = B;
    x->P1 = P1;
    x->M = M;
    x->twoB = 2.0 * (double)B;
    x->tq = tq;
    x->coef = coef;
    return 1;
}

void cs_mx_rgbox_free(cs_mx_rgbox *x)
{
    free(x->coef);
    free(x->tq);
    x->coef = NULL;
    x->tq = NULL;
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
