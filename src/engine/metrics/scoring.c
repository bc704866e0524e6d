/* Proper scoring rules on the full probability vector, whatever the lens:
 * Brier = mean over samples of sum_j (g_j - y_j)^2, NLL = -mean ln max(g_y, 1e-15).
 *
 * Subsets read per-sample terms cached on first use, so resampling costs O(subset), not
 * O(subset*K). A full evaluation (items NULL) computes the terms on the fly instead of
 * building the cache (one pass over the matrix, no 2n-double allocation), with the same
 * expression, so both give the same terms. NLL sums ln of products of 16 consecutive terms
 * (one log per 16 samples; the product's rounding, <= 15 ulp, is ~1e-16 per sample in ln);
 * the cache holds max(g_y, 1e-15). Sums are chunked (mx.h, CS_MX_CHUNK): each chunk
 * sums its terms in canonical order, the chunks are added in order; large inputs run the
 * chunks on two threads, which cannot change the result. */
#include "mx.h"

#include <stdlib.h>

#define NLL_GROUP 16   /* divides CS_MX_CHUNK: groups never straddle chunks */

/* Brier term and the clipped probability of the label, q = max(g_y, 1e-15). */
static inline void terms(const cs_dataset *d, size_t r, double *b, double *l)
{
    size_t K = d->k;
    const double *g = d->prob + r * K;
    int32_t y = d->label[r];
    /* sum_c (g_c - y_c)^2 in class order, without a per-class branch (g_c - 0 == g_c) */
    double sum = 0.0, gy = g[y] - 1.0;
    size_t c = 0;
    for (; c < (size_t)y; c++) sum += g[c] * g[c];
    sum += gy * gy;
    for (c++; c < K; c++) sum += g[c] * g[c];
    *b = sum;
    *l = g[y] > 1e-15 ? g[y] : 1e-15;
}

typedef struct {
    const cs_prepared *p;
    const uint32_t *items;   /* NULL: all samples, terms on the fly */
    size_t ni;
    double *b, *l;           /* cache build: per sample; sums: per chunk */
    int build;
} job;

static void chunk(void *vctx, size_t c)
{
    job *j = vctx;
    const cs_prepared *p = j->p;
    size_t a = c * CS_MX_CHUNK, z = a + CS_MX_CHUNK < j->ni ? a + CS_MX_CHUNK : j->ni;
    if (j->build) {
        for (size_t i = a; i < z; i++) terms(p->d, p->rows[i], &j->b[i], &j->l[i]);
        return;
    }
    /* ln: one log per group of NLL_GROUP consecutive canonical positions, of the product
     * of their q (>= 1e-15 each, so the product of 16 stays a normal double) */
    double sb = 0.0, sl = 0.0;
    for (size_t g0 = a; g0 < z; g0 += NLL_GROUP) {
        size_t g1 = g0 + NLL_GROUP < z ? g0 + NLL_GROUP : z;
        double prod = 1.0;
        if (j->items) {
            for (size_t q = g0; q < g1; q++) {
                sb += p->brier[j->items[q]];
                prod *= p->nll[j->items[q]];
            }
        } else {
            for (size_t i = g0; i < g1; i++) {
                double tb, tq;
                terms(p->d, p->rows[i], &tb, &tq);
                sb += tb;
                prod *= tq;
            }
        }
        sl -= log(prod);
    }
    j->b[c] = sb;
    j->l[c] = sl;
}

static int build(cs_prepared *p)
{
    size_t n = p->n;
    double *b = malloc(n * sizeof *b), *l = malloc(n * sizeof *l);
    if (!b || !l) { free(b); free(l); return -1; }
    job j = {p, NULL, n, b, l, 1};
    cs_mx_chunks((n + CS_MX_CHUNK - 1) / CS_MX_CHUNK, n * p->d->k >= 1000000, chunk, &j);
    p->brier = b;
    p->nll = l;
    return 0;
}

cs_status cs_mx_scores(const cs_prepared *cp, const uint32_t *items, size_t ni, unsigned want,
                       double *brier, double *nll, cs_error *err)
{
    cs_prepared *p = (cs_prepared *)cp;   /* lazy cache only, under the lock */
    if (items) {
        pthread_mutex_lock(&p->lock);
        int rc = p->brier ? 0 : build(p);
        pthread_mutex_unlock(&p->lock);
        if (rc) return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory (scores)");
    }
    size_t nc = (ni + CS_MX_CHUNK - 1) / CS_MX_CHUNK;
    double pb[64], pl[64];
    double *b = nc <= 64 ? pb : malloc(nc * sizeof *b), *l = nc <= 64 ? pl : malloc(nc * sizeof *l);
    if (!b || !l) {
        if (b != pb) free(b);
        if (l != pl) free(l);
        return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory (scores)");
    }
    job j = {p, items, ni, b, l, 0};
    /* terms on the fly read the K-wide rows: worth a second thread sooner than cached sums */
    cs_mx_chunks(nc, items ? ni >= 8 * CS_MX_CHUNK : ni * p->d->k >= 1000000, chunk, &j);
    double sb = 0.0, sl = 0.0;
    for (size_t c = 0; c < nc; c++) {
        sb += b[c];
        sl += l[c];
    }
    if (b != pb) free(b);
    if (l != pl) free(l);
    if (want & CS_WANT_BRIER) *brier = sb / (double)ni;
    if (want & CS_WANT_NLL) *nll = sl / (double)ni;
    return CS_OK;
}
