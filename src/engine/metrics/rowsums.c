/* The sums of a full evaluation made row by row (see engine/metrics/rowsums.h), under the chunk rule
 * of the metrics (mx.h): within a chunk of CS_MX_CHUNK rows the class-wise sums are classwise.c's
 * own pass (cs_mx_cw_rows), the Brier terms are added in order and the label probabilities
 * multiplied CS_MX_NLL_GROUP at a time (one log a group); a finished chunk's sums are kept,
 * and the totals add them in chunk order, as cs_mx_classwise_sums and cs_mx_scores do. So
 * sums made in chunks by separate threads join (cs_rowsums_append) into the same bits. */
#include "engine/metrics/rowsums.h"

#include <stdlib.h>
#include <string.h>

#include "mx.h"

_Static_assert(CS_ROWSUMS_CHUNK == CS_MX_CHUNK, "the sums keep the metrics' chunk rule");

struct cs_rowsums {
    size_t k, M, rows;
    double *e;                /* the M + 1 uniform edges */
    size_t *cnt, *pos;        /* k * M: the class-wise counts (classwise.c), all rows */
    int skip;                 /* the class-wise pass's state */
    uint32_t *ix;             /* its scratch */
    /* The chunk being summed (at rows of CS_MX_CHUNK): its class-wise sums sc (k * M), the
     * Brier and NLL sums and the open NLL group's product; then the finished chunks' sums
     * (nc of them: scores cb, cl and class-wise csv, k * M each), which the totals add in
     * chunk order, as cs_mx_scores and cs_mx_classwise_sums do. */
    size_t at;
    double *sc, sb, sl, prod;
    double *cb, *cl, *csv;
    size_t nc, cap;
};

void cs_rowsums_free(cs_rowsums *s)
{
    if (!s) return;
    free(s->e); free(s->cnt); free(s->pos); free(s->ix); free(s->sc);
    free(s->cb); free(s->cl); free(s->csv);
    free(s);
}

cs_rowsums *cs_rowsums_new(size_t k, int bins)
{
    if (k < 2 || bins < 1 || bins > CS_BINS_MAX || k > SIZE_MAX / ((size_t)bins * 8)) return NULL;
    cs_rowsums *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->k = k;
    s->M = (size_t)bins;
    s->prod = 1.0;
    s->e = malloc((s->M + 1) * sizeof *s->e);
    s->cnt = calloc(k * s->M, sizeof *s->cnt);
    s->pos = calloc(k * s->M, sizeof *s->pos);
    s->sc = calloc(k * s->M, sizeof *s->sc);
    s->ix = malloc(cs_mx_cw_scratch(k) * sizeof *s->ix);
    if (!s->e || !s->cnt || !s->pos || !s->sc || !s->ix) {
        cs_rowsums_free(s);
        return NULL;
    }
    cs_mx_edges(s->e, bins);
    return s;
}

/* Room for `n` finished chunks. */
static int reserve(cs_rowsums *s, size_t n)
{
    if (n <= s->cap) return 0;
    size_t cap = s->cap ? s->cap : 16, km = s->k * s->M;
    while (cap < n) cap *= 2;
    double *b = realloc(s->cb, cap * sizeof *b);
    if (!b) return -1;
    s->cb = b;
    double *l = realloc(s->cl, cap * sizeof *l);
    if (!l) return -1;
    s->cl = l;
    double *v = realloc(s->csv, cap * km * sizeof *v);
    if (!v) return -1;
    s->csv = v;
    s->cap = cap;
    return 0;
}

/* Closes the chunk being summed (its last group's log taken by the caller). */
static int push_chunk(cs_rowsums *s)
{
    size_t km = s->k * s->M;
    if (reserve(s, s->nc + 1)) return -1;
    s->cb[s->nc] = s->sb;
    s->cl[s->nc] = s->sl;
    memcpy(s->csv + s->nc * km, s->sc, km * sizeof *s->sc);
    memset(s->sc, 0, km * sizeof *s->sc);
    s->nc++;
    s->sb = s->sl = 0.0;
    s->at = 0;
    return 0;
}

int cs_rowsums_add(cs_rowsums *s, const double *g, const int32_t *y, size_t nr)
{
    size_t K = s->k;
    for (size_t i = 0; i < nr;) {
        /* the rows up to the end of the chunk being summed */
        size_t m = CS_MX_CHUNK - s->at < nr - i ? CS_MX_CHUNK - s->at : nr - i;
        cs_mx_cw_rows(g + i * K, y + i, m, K, s->e, s->M, &s->skip, s->ix, s->cnt, s->pos, s->sc);
        for (size_t r = i; r < i + m; r++) {
            double b, q;
            cs_mx_score_terms(g + r * K, y[r], K, &b, &q);
            s->sb += b;
            s->prod *= q;
            if (++s->at % CS_MX_NLL_GROUP == 0) {
                s->sl -= log(s->prod);
                s->prod = 1.0;
            }
        }
        if (s->at == CS_MX_CHUNK && push_chunk(s)) return -1;
        i += m;
        s->rows += m;
    }
    return 0;
}

int cs_rowsums_append(cs_rowsums *s, const cs_rowsums *t)
{
    size_t km = s->k * s->M;
    if (s->at || t->k != s->k || t->M != s->M || reserve(s, s->nc + t->nc)) return -1;
    for (size_t i = 0; i < km; i++) {
        s->cnt[i] += t->cnt[i];
        s->pos[i] += t->pos[i];
    }
    if (t->nc) {
        memcpy(s->cb + s->nc, t->cb, t->nc * sizeof *s->cb);
        memcpy(s->cl + s->nc, t->cl, t->nc * sizeof *s->cl);
        memcpy(s->csv + s->nc * km, t->csv, t->nc * km * sizeof *s->csv);
    }
    s->nc += t->nc;
    memcpy(s->sc, t->sc, km * sizeof *s->sc);
    s->at = t->at;
    s->sb = t->sb;
    s->sl = t->sl;
    s->prod = t->prod;
    s->rows += t->rows;
    return 0;
}

size_t cs_rowsums_rows(const cs_rowsums *s)
{
    return s->rows;
}

int cs_rowsums_bins(const cs_rowsums *s)
{
    return (int)s->M;
}

size_t cs_rowsums_classes(const cs_rowsums *s)
{
    return s->k;
}

/* The class-wise sums so far, k * M each, as cs_mx_classwise_sums leaves them: the counts
 * borrowed, the sums of values added up into sv (the caller's). */
static void classwise_sums(const cs_rowsums *s, const size_t **cnt, const size_t **pos,
                           double *sv)
{
    size_t km = s->k * s->M;
    *cnt = s->cnt;
    *pos = s->pos;
    memset(sv, 0, km * sizeof *sv);
    for (size_t c = 0; c < s->nc; c++) cs_mx_cw_add_chunk(sv, s->csv + c * km, km);
    if (s->at) cs_mx_cw_add_chunk(sv, s->sc, km);
}

/* The Brier and NLL sums so far, the chunks' added in order as cs_mx_scores adds them
 * (divide by the rows for the scores). */
static void score_sums(const cs_rowsums *s, double *brier_sum, double *nll_sum)
{
    double sb = 0.0, sl = 0.0;
    for (size_t c = 0; c < s->nc; c++) {
        sb += s->cb[c];
        sl += s->cl[c];
    }
    if (s->at) {   /* the last chunk, its last group closed here (the state stays as it is) */
        double l = s->sl;
        if (s->at % CS_MX_NLL_GROUP) l -= log(s->prod);
        sb += s->sb;
        sl += l;
    }
    *brier_sum = sb;
    *nll_sum = sl;
}

cs_status cs_rowsums_values(const cs_rowsums *rs, const cs_settings *s, double *brier,
                            double *nll, double *sce, cs_error *err)
{
    size_t K = rs->k, M = rs->M, n = rs->rows;
    if (s->bins < 1 || (size_t)s->bins != M)
        return cs_error_set(err, CS_EUSAGE, 0, 0, "the rows were summed under %zu bins, not %d", M,
                            s->bins);
    if (n == 0) return cs_error_set(err, CS_EEMPTY, 0, 0, "no samples to measure");
    double sb, sl;
    score_sums(rs, &sb, &sl);
    if (brier) *brier = sb / (double)n;
    if (nll) *nll = sl / (double)n;
    if (!sce) return CS_OK;
    /* the class-wise ECE as cs_evaluate makes it: uniform bins, tvd, the mean over classes */
    cs_settings cw = *s;
    cw.binning = CS_BIN_UNIFORM;
    cw.distance = CS_DIST_TVD;
    const size_t *cnt, *pos;
    double *sv = malloc(K * M * sizeof *sv);
    if (!sv) return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory (classwise)");
    classwise_sums(rs, &cnt, &pos, sv);
    cs_mx_agg a;
    cs_status rc = cs_mx_cw_values(&cw, K, M, cnt, pos, sv, n, &a, NULL, NULL, err);
    if (rc == CS_OK) *sce = a.ece / (double)K;
    free(sv);
    return rc;
}
