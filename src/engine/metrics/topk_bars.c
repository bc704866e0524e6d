/* Top-k ECE bars: one descending sort of every selected row (cs_mx_sort_rows), shared by
 * all k. */
#include "calscope/topk.h"

#include <stdlib.h>
#include <string.h>

#include "mx.h"

/* The top-1 bars: p1's binned ECE. */
static cs_status top1_bar(cs_prepared *p1, const atomic_int *cancel, double *ece, cs_error *err)
{
    cs_result r;
    cs_status rc = cs_evaluate(p1, NULL, 0, CS_WANT_BINNED, &(cs_run){ .threads = 1, .cancel = cancel }, &r, err);
    if (rc != CS_OK) return rc;
    *ece = r.ece;
    cs_result_free(&r);
    return CS_OK;
}

/* The bar of k > 1: a prepared view of lens topk:k over the shared sorted buffer S (kmax
 * coordinates a sample, the target's place in pos; rows borrowed from p1), binned. */
static cs_status topk_bar(const cs_prepared *p1, const cs_settings *base, size_t k, const double *S,
                          size_t kmax, const int32_t *pos, const atomic_int *cancel, double *ece,
                          cs_error *err)
{
    size_t n = p1->n;
    cs_prepared q;
    cs_mx_prepared_init(&q);
    q.d = p1->d;
    q.s = *base;
    q.s.lens = CS_LENS_TOPK;
    q.s.topk = (int)k;
    q.kind = CS_LENS_TOPK;
    q.k_eff = (int)k;
    q.n = n;
    q.rows = p1->rows;
    q.vector = 1;
    q.dim = k + 1;
    q.nrow = k;
    q.obase = S;
    q.ostride = kmax;
    q.sorted_desc = 1;
    q.v = malloc(n * sizeof *q.v);
    q.t = malloc(n);
    q.rem = malloc(n * sizeof *q.rem);
    q.hot = malloc(n * sizeof *q.hot);
    uint32_t *items = malloc(n * sizeof *items);
    cs_status rc;
    if (q.v && q.t && q.rem && q.hot && items) {
        for (size_t r = 0; r < n; r++) {
            const double *o = S + r * kmax;
            double sum = 0.0;
            for (size_t j = 0; j < k; j++) sum += o[j];
            q.rem[r] = 1.0 - sum;
            q.hot[r] = pos[r] < (int32_t)k ? pos[r] : (int32_t)k;
            q.v[r] = o[0];
            q.t[r] = q.hot[r] == 0;
            items[r] = (uint32_t)r;
        }
        cs_result res;
        memset(&res, 0, sizeof res);
        rc = cs_mx_binned(&q, items, n, cancel, &res, err);
        if (rc == CS_OK) *ece = res.ece;
        cs_result_free(&res);
    } else {
        rc = cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory (top-k)");
    }
    free(items);
    free(q.v); free(q.t); free(q.rem); free(q.hot);
    free(q.order_v); free(q.rank_v);
    free(q.grid_cell); free(q.grid_c0);   /* the counted grid's cache (cs_mx_vector_grid) */
    free(q.grid_pos); free(q.grid_rows); free(q.grid_hot);
    pthread_mutex_destroy(&q.lock);
    return rc;
}

/* The bars of k > 1 (up to kmax): every selected row sorted once, in two halves. */
static cs_status topk_bars_sorted(const cs_prepared *p1, const cs_settings *base, const int *ks,
                                  size_t nk, size_t kmax, const atomic_int *cancel, double *ece_out,
                                  cs_error *err)
{
    size_t n = p1->n, K = p1->d->k;
    double *S = malloc(n * kmax * sizeof *S);
    int32_t *pos = malloc(n * sizeof *pos);
    if (!S || !pos) { free(S); free(pos); return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory (top-k)"); }
    cs_mx_sort_rows(p1->d, p1->rows, n, kmax, S, pos);
    cs_status rc = CS_OK;
    for (size_t i = 0; i < nk && rc == CS_OK; i++) {
        size_t k = (size_t)ks[i] > K ? K : (size_t)ks[i];
        if (k == 1) continue;
        if (cs_mx_cancelled(cancel)) { rc = cs_error_set(err, CS_ECANCELLED, 0, 0, "cancelled"); break; }
        rc = topk_bar(p1, base, k, S, kmax, pos, cancel, &ece_out[i], err);
    }
    free(S);
    free(pos);
    return rc;
}

/* k < 1 refused; every bar NAN until measured. */
static cs_status check_bars(const int *ks, size_t nk, double *ece_out, cs_error *err)
{
    for (size_t i = 0; i < nk; i++) {
        if (ks[i] < 1) return cs_error_set(err, CS_EUSAGE, 0, 0, "top-k bars: k must be >= 1 (got %d)", ks[i]);
        ece_out[i] = NAN;
    }
    return CS_OK;
}

/* Every bar from p1, the top-1 problem of base's selection. */
static cs_status bars_of(cs_prepared *p1, const cs_settings *base, const int *ks, size_t nk,
                         const atomic_int *cancel, double *ece_out, cs_error *err)
{
    size_t K = p1->d->k, kmax = 1;
    for (size_t i = 0; i < nk; i++) {
        size_t k = (size_t)ks[i] > K ? K : (size_t)ks[i];
        if (k > kmax) kmax = k;
        if (k == 1) {
            cs_status rc = top1_bar(p1, cancel, &ece_out[i], err);
            if (rc != CS_OK) return rc;
        }
    }
    return kmax > 1 ? topk_bars_sorted(p1, base, ks, nk, kmax, cancel, ece_out, err) : CS_OK;
}

/* base on the top-1 lens: the problem the bars share. */
static cs_settings top1_of(const cs_settings *base)
{
    cs_settings s1 = *base;
    s1.lens = CS_LENS_TOP1;
    s1.topk = 1;
    s1.lens_arg[0] = '\0';
    return s1;
}

cs_status cs_topk_bars(const cs_dataset *d, const cs_settings *base, const int *ks, size_t nk,
                       const atomic_int *cancel, double *ece_out, cs_error *err)
{
    if (cs_dataset_need_rows(d, "top-k ECE bars", err) != CS_OK) return err->code;
    if (check_bars(ks, nk, ece_out, err) != CS_OK) return err->code;
    cs_settings s1 = top1_of(base);
    cs_prepared *p1 = cs_prepare(d, &s1, err);
    if (!p1) return err->code;
    cs_status rc = bars_of(p1, base, ks, nk, cancel, ece_out, err);
    cs_prepared_free(p1);
    return rc;
}

cs_status cs_topk_bars_planned(const cs_plan *pl, const int *ks, size_t nk, const atomic_int *cancel,
                               double *ece_out, cs_error *err)
{
    if (cs_dataset_need_rows(pl->d, "top-k ECE bars", err) != CS_OK) return err->code;
    if (check_bars(ks, nk, ece_out, err) != CS_OK) return err->code;
    cs_settings s1 = top1_of(&pl->s);
    cs_prepared *p1 = cs_prepare_planned(pl, &s1, err);
    if (!p1) return err->code;
    cs_status rc = bars_of(p1, &pl->s, ks, nk, cancel, ece_out, err);
    cs_prepared_free(p1);
    return rc;
}
