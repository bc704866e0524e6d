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

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define NLL_GROUP CS_MX_NLL_GROUP

/* Brier term and the clipped probability of the label of row r (cs_mx_score_terms). */
static inline void terms(const cs_dataset *d, size_t r, double *b, double *l)
{
    cs_mx_score_terms(d->prob + r * d->k, d->label[r], d->k, b, l);
}

/* The terms of rows r0 and r1 at once, each in its own SSE2 lane: the same operations in the
 * same class order as terms() (g_c - 0.0 is g_c bit for bit, -0.0 too, so subtracting the
 * label's 1 through a mask is the two loops around y), without terms()'s loop exits at an
 * unpredictable y, and two rows' dependent additions side by side. */
static inline void terms2(const cs_dataset *d, size_t r0, size_t r1, double *b, double *l)
{
#if defined(__SSE2__)
    size_t K = d->k;
    const double *g0 = d->prob + r0 * K, *g1 = d->prob + r1 * K;
    int32_t y0 = d->label[r0], y1 = d->label[r1];
    __m128i yv = _mm_set_epi32(y1, y1, y0, y0), cv = _mm_setzero_si128(), inc = _mm_set1_epi32(1);
    __m128d one = _mm_set1_pd(1.0), sum = _mm_setzero_pd();
    for (size_t c = 0; c < K; c++) {
        __m128d x = _mm_loadh_pd(_mm_load_sd(g0 + c), g1 + c);
        __m128d lab = _mm_and_pd(_mm_castsi128_pd(_mm_cmpeq_epi32(yv, cv)), one);
        __m128d dc = _mm_sub_pd(x, lab);
        sum = _mm_add_pd(sum, _mm_mul_pd(dc, dc));
        cv = _mm_add_epi32(cv, inc);
    }
    _mm_storel_pd(&b[0], sum);
    _mm_storeh_pd(&b[1], sum);
    l[0] = g0[y0] > 1e-15 ? g0[y0] : 1e-15;
    l[1] = g1[y1] > 1e-15 ? g1[y1] : 1e-15;
#else
    terms(d, r0, &b[0], &l[0]);
    terms(d, r1, &b[1], &l[1]);
#endif
}

typedef struct {
    const cs_prepared *p;
    const uint32_t *items;   /* NULL: all samples, terms on the fly */
    size_t ni;
    double *b, *l;           /* cache build: b the terms (p->score); sums: per chunk */
    int build;
} job;

static void chunk(void *vctx, size_t c)
{
    job *j = vctx;
    const cs_prepared *p = j->p;
    size_t a = c * CS_MX_CHUNK, z = a + CS_MX_CHUNK < j->ni ? a + CS_MX_CHUNK : j->ni;
    if (j->build) {
        /* one row at a time (terms): test_metrics_fast compares these cached terms with the
         * paired ones the full pass below sums, bit for bit */
        for (size_t i = a; i < z; i++) terms(p->d, p->rows[i], &j->b[2 * i], &j->b[2 * i + 1]);
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
                if (q + CS_MX_AHEAD < z) {
                    CS_MX_FETCH(&p->score[2 * (size_t)j->items[q + CS_MX_AHEAD]]);
                }
                const double *tq = &p->score[2 * (size_t)j->items[q]];
                sb += tq[0];
                prod *= tq[1];
            }
        } else {
            size_t i = g0;
            for (; i + 2 <= g1; i += 2) {
                double tb[2], tq[2];
                terms2(p->d, p->rows[i], p->rows[i + 1], tb, tq);
                sb += tb[0];
                prod *= tq[0];
                sb += tb[1];
                prod *= tq[1];
            }
            if (i < g1) {
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
    double *b = malloc((n ? 2 * n : 1) * sizeof *b);
    if (!b) return -1;
    job j = {p, NULL, n, b, NULL, 1};
    cs_mx_chunks((n + CS_MX_CHUNK - 1) / CS_MX_CHUNK, n * p->d->k >= 1000000, chunk, &j);
    p->score = b;
    return 0;
}

cs_status cs_mx_scores(const cs_prepared *cp, const uint32_t *items, size_t ni, unsigned want,
                       int split, double *brier, double *nll, cs_error *err)
{
    cs_prepared *p = (cs_prepared *)cp;   /* lazy cache only, under the lock */
    if (items) {
        pthread_mutex_lock(&p->lock);
        int rc = p->score ? 0 : build(p);
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
    cs_mx_chunks(nc, split && (items ? ni >= 8 * CS_MX_CHUNK : ni * p->d->k >= 1000000), chunk, &j);
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
