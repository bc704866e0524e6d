/* calscope engine: where a method puts its probability mass (Kirchenbauer, Oaks &
 * Heim 2022, "What is Your Metric Telling You?", Fig. 2 and 4). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calscope/metrics.h"
#include "calscope/recal.h"

cs_status cs_mass_profile(const cs_dataset *d, const char *select, size_t n_top, double *top,
                          double *cls, size_t *n_out, cs_error *err)
{
    size_t k = d->k;
    *n_out = 0;
    if (n_top > k) n_top = k;
    cs_settings s;
    cs_settings_default(&s);
    if (select && strlen(select) >= sizeof s.select)
        return cs_error_set(err, CS_EUSAGE, 0, 0, "selection expression too long");
    if (select) strcpy(s.select, select);
    /* the selection is the metrics' own, so "y == 3" keeps exactly the samples the metrics
     * table measured */
    cs_prepared *p = cs_prepare(d, &s, err);
    if (!p) return err->code;
    size_t n = cs_prepared_count(p);
    const uint32_t *rows = cs_prepared_rows(p);
    double *best = malloc((n_top ? n_top : 1) * sizeof *best);
    if (!best) {
        cs_prepared_free(p);
        return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
    }
    for (size_t j = 0; j < n_top; j++) top[j] = 0;
    if (cls) for (size_t c = 0; c < k; c++) cls[c] = 0;
    for (size_t i = 0; i < n; i++) {
        const double *g = d->prob + (size_t)rows[i] * k;
        size_t nb = 0;
        for (size_t c = 0; c < k; c++) {
            if (cls) cls[c] += g[c];
            /* insertion into the n_top largest so far (n_top is small: at most 10 in use) */
            if (n_top && (nb < n_top || g[c] > best[nb - 1])) {
                size_t at = nb < n_top ? nb++ : nb - 1;
                while (at > 0 && best[at - 1] < g[c]) { best[at] = best[at - 1]; at--; }
                best[at] = g[c];
            }
        }
        for (size_t j = 0; j < n_top; j++) top[j] += best[j];
    }
    for (size_t j = 0; j < n_top; j++) top[j] /= (double)n;
    if (cls) for (size_t c = 0; c < k; c++) cls[c] /= (double)n;
    *n_out = n;
    free(best);
    cs_prepared_free(p);
    return CS_OK;
}
