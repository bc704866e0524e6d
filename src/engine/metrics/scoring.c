/* Proper scoring rules on the full probability vector, whatever the lens:
 * Brier = mean over samples of sum_j (g_j - y_j)^2, NLL = -mean ln max(g_y, 1e-15).
 * Per-sample terms are cached on first use so resampling costs O(subset), not O(subset*K). */
#include "mx.h"

#include <stdlib.h>

typedef struct { const cs_prepared *p; size_t a, z; double *b, *l; } job;

static void *run(void *arg)
{
    job *j = arg;
    const cs_dataset *d = j->p->d;
    size_t K = d->k;
    for (size_t i = j->a; i < j->z; i++) {
        size_t r = j->p->rows[i];
        const double *g = d->prob + r * K;
        int32_t y = d->label[r];
        double sum = 0.0;
        for (size_t c = 0; c < K; c++) {
            double dlt = g[c] - (c == (size_t)y ? 1.0 : 0.0);
            sum += dlt * dlt;
        }
        j->b[i] = sum;
        j->l[i] = -log(g[y] > 1e-15 ? g[y] : 1e-15);
    }
    return NULL;
}

/* Per-sample terms; two threads on large inputs (each term is independent of the split). */
static int build(cs_prepared *p)
{
    size_t n = p->n;
    double *b = malloc(n * sizeof *b), *l = malloc(n * sizeof *l);
    if (!b || !l) { free(b); free(l); return -1; }
    job j[2] = {{p, 0, n / 2, b, l}, {p, n / 2, n, b, l}};
    pthread_t th;
    if (n * p->d->k >= 1000000 && pthread_create(&th, NULL, run, &j[1]) == 0) {
        run(&j[0]);
        pthread_join(th, NULL);
    } else {
        j[0].z = n;
        run(&j[0]);
    }
    p->brier = b;
    p->nll = l;
    return 0;
}

cs_status cs_mx_scores(const cs_prepared *cp, const uint32_t *items, size_t ni, unsigned want,
                       double *brier, double *nll, cs_error *err)
{
    cs_prepared *p = (cs_prepared *)cp;   /* lazy cache only, under the lock */
    pthread_mutex_lock(&p->lock);
    int rc = p->brier ? 0 : build(p);
    pthread_mutex_unlock(&p->lock);
    if (rc) return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory (scores)");
    double sb = 0.0, sl = 0.0;
    for (size_t j = 0; j < ni; j++) {
        sb += p->brier[items[j]];
        sl += p->nll[items[j]];
    }
    if (want & CS_WANT_BRIER) *brier = sb / (double)ni;
    if (want & CS_WANT_NLL) *nll = sl / (double)ni;
    return CS_OK;
}
