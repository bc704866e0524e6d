/* calscope engine: where a method puts its probability mass (Kirchenbauer, Oaks &
 * Heim 2022, "What is Your Metric Telling You?", Fig. 2 and 4). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calscope/metrics.h"
#include "calscope/recal.h"

/* Rows are summed in fixed chunks (each chunk in row order, the chunks added in order), so
 * the profile is the same on any number of threads. */
#define MASS_CHUNK 65536u

typedef struct {
    const cs_dataset *d;
    const uint32_t *rows;
    size_t n, n_top;
    int with_cls;
    double *part;   /* per chunk: n_top top sums, then K class sums */
} mass_job;

static void mass_chunk(void *vctx, size_t c, int worker)
{
    (void)worker;
    const mass_job *j = vctx;
    size_t k = j->d->k, w = j->n_top + k;
    size_t a = c * MASS_CHUNK, z = a + MASS_CHUNK < j->n ? a + MASS_CHUNK : j->n;
    double *top = j->part + c * w, *cls = top + j->n_top, best[CS_MASS_TOP_MAX];
    for (size_t i = a; i < z; i++) {
        const double *g = j->d->prob + (size_t)j->rows[i] * k;
        size_t nb = 0;
        for (size_t q = 0; q < k; q++) {
            if (j->with_cls) cls[q] += g[q];
            /* insertion into the n_top largest so far (n_top is small) */
            if (j->n_top && (nb < j->n_top || g[q] > best[nb - 1])) {
                size_t at = nb < j->n_top ? nb++ : nb - 1;
                while (at > 0 && best[at - 1] < g[q]) { best[at] = best[at - 1]; at--; }
                best[at] = g[q];
            }
        }
        for (size_t t = 0; t < j->n_top; t++) top[t] += best[t];
    }
}

cs_status cs_mass_profile(const cs_dataset *d, const char *select, size_t n_top, double *top,
                          double *cls, size_t *n_out, const cs_run *run, cs_error *err)
{
    size_t k = d->k;
    *n_out = 0;
    if (n_top > k) n_top = k;
    if (n_top > CS_MASS_TOP_MAX) n_top = CS_MASS_TOP_MAX;
    cs_settings s;
    cs_settings_default(&s);
    if (select && strlen(select) >= sizeof s.select)
        return cs_error_set(err, CS_EUSAGE, 0, 0, "selection expression too long");
    if (select) strcpy(s.select, select);
    /* the selection is the metrics' own, so "y == 3" keeps exactly the samples the metrics
     * table measured */
    cs_prepared *p = cs_prepare(d, &s, err);
    if (!p) return err->code;
    size_t n = cs_prepared_count(p), nc = (n + MASS_CHUNK - 1) / MASS_CHUNK, w = n_top + k;
    mass_job j = { d, cs_prepared_rows(p), n, n_top, cls != NULL, calloc(nc ? nc * w : 1, sizeof(double)) };
    if (!j.part) {
        cs_prepared_free(p);
        return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
    }
    int threads = run && run->threads > 0 ? run->threads : 0;
    cs_parallel_for(n * k >= 1000000 ? threads : 1, nc, mass_chunk, &j, run ? run->cancel : NULL);
    for (size_t t = 0; t < n_top; t++) top[t] = 0;
    if (cls) for (size_t c = 0; c < k; c++) cls[c] = 0;
    for (size_t c = 0; c < nc; c++) {
        for (size_t t = 0; t < n_top; t++) top[t] += j.part[c * w + t];
        if (cls) for (size_t q = 0; q < k; q++) cls[q] += j.part[c * w + n_top + q];
    }
    for (size_t t = 0; t < n_top; t++) top[t] /= (double)n;
    if (cls) for (size_t c = 0; c < k; c++) cls[c] /= (double)n;
    *n_out = n;
    free(j.part);
    cs_prepared_free(p);
    if (run && run->cancel && atomic_load(run->cancel)) return cs_error_set(err, CS_ECANCELLED, 0, 0, "cancelled");
    return CS_OK;
}
