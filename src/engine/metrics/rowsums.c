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

cs_rowsums *cs_rowsums_copy(const cs_rowsums *s)
{
    cs_rowsums *c = cs_rowsums_new(s->k, (int)s->M);
    if (!c) return NULL;
    size_t km = s->k * s->M;
    if (reserve(c, s->nc)) {
        cs_rowsums_free(c);
        return NULL;
    }
    memcpy(c->cnt, s->cnt, km * sizeof *c->cnt);
    memcpy(c->pos, s->pos, km * sizeof *c->pos);
    memcpy(c->sc, s->sc, km * sizeof *c->sc);
    if (s->nc) {
        memcpy(c->cb, s->cb, s->nc * sizeof *c->cb);
        memcpy(c->cl, s->cl, s->nc * sizeof *c->cl);
        memcpy(c->csv, s->csv, s->nc * km * sizeof *c->csv);
    }
    c->nc = s->nc;
    c->rows = s->rows;
    c->skip = s->skip;
    c->at = s->at;
    c->sb = s->sb;
    c->sl = s->sl;
    c->prod = s->prod;
    return c;
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

void cs_mx_rowsums_classwise(const cs_rowsums *s, const size_t **cnt, const size_t **pos,
                             double *sv)
{
    size_t km = s->k * s->M;
    *cnt = s->cnt;
    *pos = s->pos;
    memset(sv, 0, km * sizeof *sv);
    for (size_t c = 0; c < s->nc; c++) cs_mx_cw_add_chunk(sv, s->csv + c * km, km);
    if (s->at) cs_mx_cw_add_chunk(sv, s->sc, km);
}

void cs_mx_rowsums_scores(const cs_rowsums *s, double *brier_sum, double *nll_sum)
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
