/* The sums of a full evaluation made row by row (see calscope/rowsums.h): the class-wise sums
 * by classwise.c's own pass (cs_mx_cw_rows), the Brier and NLL sums by scoring.c's chunk rule
 * kept as a running state: within a chunk of CS_MX_CHUNK rows the terms are added in order and
 * the label probabilities multiplied CS_MX_NLL_GROUP at a time (one log a group); a finished
 * chunk's two sums are kept, and the totals add them in chunk order, as cs_mx_scores does. */
#include "calscope/rowsums.h"

#include <stdlib.h>
#include <string.h>

#include "mx.h"

struct cs_rowsums {
    size_t k, M, rows;
    double *e;                /* the M + 1 uniform edges */
    size_t *cnt, *pos;        /* k * M: the class-wise sums (classwise.c) */
    double *sv;
    int skip;                 /* the class-wise pass's state */
    uint32_t *ix;             /* its scratch */
    /* Brier / NLL: the chunk being summed (at, sums, the open group's product) and the
     * finished chunks' sums */
    size_t at;
    double sb, sl, prod;
    double *cb, *cl;
    size_t nc, cap;
};

void cs_rowsums_free(cs_rowsums *s)
{
    if (!s) return;
    free(s->e); free(s->cnt); free(s->pos); free(s->sv); free(s->ix);
    free(s->cb); free(s->cl);
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
    s->sv = calloc(k * s->M, sizeof *s->sv);
    s->ix = malloc(cs_mx_cw_scratch(k) * sizeof *s->ix);
    if (!s->e || !s->cnt || !s->pos || !s->sv || !s->ix) {
        cs_rowsums_free(s);
        return NULL;
    }
    cs_mx_edges(s->e, bins);
    return s;
}

cs_rowsums *cs_rowsums_copy(const cs_rowsums *s)
{
    cs_rowsums *c = cs_rowsums_new(s->k, (int)s->M);
    if (!c) return NULL;
    size_t km = s->k * s->M;
    memcpy(c->cnt, s->cnt, km * sizeof *c->cnt);
    memcpy(c->pos, s->pos, km * sizeof *c->pos);
    memcpy(c->sv, s->sv, km * sizeof *c->sv);
    c->rows = s->rows;
    c->skip = s->skip;
    c->at = s->at;
    c->sb = s->sb;
    c->sl = s->sl;
    c->prod = s->prod;
    if (s->nc) {
        c->cb = malloc(s->nc * sizeof *c->cb);
        c->cl = malloc(s->nc * sizeof *c->cl);
        if (!c->cb || !c->cl) {
            cs_rowsums_free(c);
            return NULL;
        }
        memcpy(c->cb, s->cb, s->nc * sizeof *c->cb);
        memcpy(c->cl, s->cl, s->nc * sizeof *c->cl);
        c->nc = c->cap = s->nc;
    }
    return c;
}

/* Closes the chunk being summed (its last group's log taken by the caller). */
static int push_chunk(cs_rowsums *s)
{
    if (s->nc == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        double *b = realloc(s->cb, cap * sizeof *b);
        if (!b) return -1;
        s->cb = b;
        double *l = realloc(s->cl, cap * sizeof *l);
        if (!l) return -1;
        s->cl = l;
        s->cap = cap;
    }
    s->cb[s->nc] = s->sb;
    s->cl[s->nc] = s->sl;
    s->nc++;
    s->sb = s->sl = 0.0;
    s->at = 0;
    return 0;
}

int cs_rowsums_add(cs_rowsums *s, const double *g, const int32_t *y, size_t nr)
{
    size_t K = s->k;
    cs_mx_cw_rows(g, y, nr, K, s->e, s->M, &s->skip, s->ix, s->cnt, s->pos, s->sv);
    for (size_t i = 0; i < nr; i++) {
        double b, q;
        cs_mx_score_terms(g + i * K, y[i], K, &b, &q);
        s->sb += b;
        s->prod *= q;
        if (++s->at % CS_MX_NLL_GROUP == 0) {
            s->sl -= log(s->prod);
            s->prod = 1.0;
            if (s->at == CS_MX_CHUNK && push_chunk(s)) return -1;
        }
    }
    s->rows += nr;
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
                             const double **sv)
{
    *cnt = s->cnt;
    *pos = s->pos;
    *sv = s->sv;
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
