/* Top-k ECE bars: one descending sort of every selected row, shared by all k. The sort runs
 * in two threads for large inputs (each thread owns a fixed half of the rows, so the result
 * is the same whatever the machine). */
#include "calscope/topk.h"

#include <stdlib.h>
#include <string.h>

#include "mx.h"

typedef struct {
    const cs_dataset *d;
    const uint32_t *rows;
    size_t n, kk;
    double *out;
    int32_t *pos;
} sort_job;

static void *run_sort(void *arg)
{
    sort_job *j = arg;
    cs_mx_sort_rows(j->d, j->rows, j->n, j->kk, j->out, j->pos);
    return NULL;
}

cs_status cs_topk_bars(const cs_dataset *d, const cs_settings *base, const int *ks, size_t nk,
                       const atomic_int *cancel, double *ece_out, cs_error *err)
{
    if (cs_dataset_need_rows(d, "top-k ECE bars", err) != CS_OK ||
        cs_dataset_need_probs(d, "top-k ECE bars", err) != CS_OK) return err->code;
    for (size_t i = 0; i < nk; i++) {
        if (ks[i] < 1) return cs_error_set(err, CS_EUSAGE, 0, 0, "top-k bars: k must be >= 1 (got %d)", ks[i]);
        ece_out[i] = NAN;
    }
    cs_settings s1 = *base;
    s1.lens = CS_LENS_TOP1;
    s1.topk = 1;
    s1.lens_arg[0] = '\0';
    cs_prepared *p1 = cs_prepare(d, &s1, err);
    if (!p1) return err->code;
    size_t n = p1->n, K = d->k, kmax = 1;
    cs_status rc = CS_OK;
    for (size_t i = 0; i < nk; i++) {
        size_t k = (size_t)ks[i] > K ? K : (size_t)ks[i];
        if (k > kmax) kmax = k;
        if (k == 1) {
            cs_result r;
            rc = cs_evaluate(p1, NULL, 0, CS_WANT_BINNED, &(cs_run){ .threads = 1, .cancel = cancel }, &r, err);
            if (rc != CS_OK) goto done;
            ece_out[i] = r.ece;
            cs_result_free(&r);
        }
    }
    if (kmax > 1) {
        double *S = malloc(n * kmax * sizeof *S);
        int32_t *pos = malloc(n * sizeof *pos);
        if (!S || !pos) { free(S); free(pos); rc = cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory (top-k)"); goto done; }
        size_t half = n / 2;
        sort_job jb[2] = {{d, p1->rows, half, kmax, S, pos},
                          {d, p1->rows + half, n - half, kmax, S + half * kmax, pos + half}};
        cs_mx_pair(run_sort, &jb[0], &jb[1], n * K >= 1000000);

        for (size_t i = 0; i < nk && rc == CS_OK; i++) {
            size_t k = (size_t)ks[i] > K ? K : (size_t)ks[i];
            if (k == 1) continue;
            if (cs_mx_cancelled(cancel)) { rc = cs_error_set(err, CS_ECANCELLED, 0, 0, "cancelled"); break; }
            /* A prepared view over the shared sorted buffer (rows borrowed from p1). */
            cs_prepared q;
            cs_mx_prepared_init(&q);
            q.d = d;
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
                if (rc == CS_OK) ece_out[i] = res.ece;
                cs_result_free(&res);
            } else {
                rc = cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory (top-k)");
            }
            free(items);
            free(q.v); free(q.t); free(q.rem); free(q.hot);
            free(q.order_v); free(q.rank_v);
            pthread_mutex_destroy(&q.lock);
        }
        free(S);
        free(pos);
    }
done:
    cs_prepared_free(p1);
    return rc;
}
