/* calscope engine, recalibration: one-vs-rest isotonic regression (Zadrozny & Elkan, 2002,
 * "Transforming classifier scores into accurate multiclass probability estimates"): for every
 * class c an isotonic regression of 1[y = c] on p_c over the fitting samples (the same fit as
 * iso's, interpolated and clipped at the ends as scikit-learn's
 * IsotonicRegression(out_of_bounds="clip"), with its pooling of scores within 1e-15), then each row renormalised to sum 1. A row whose
 * fitted values are all 0 becomes uniform, 1/K each (as scikit-learn's CalibratedClassifierCV
 * does). Unlike iso, which only moves the top-1 confidence, the classes are fitted separately,
 * so the predicted class can change (cs_recal_apply counts where: info->argmax_changed).
 *
 * Cost: K sorts of the samples and K isotonic fits a model (O(K·n log n)). */
#include <stdlib.h>
#include <string.h>

#include "recal_internal.h"


cs_status cs_rc_irova(const cs_dataset *d, const cs_rc_plan *pl, double *out, cs_error *err)
{
    size_t k = d->k, n = d->n ? d->n : 1;
    uint8_t *y = malloc(n);
    double *val = malloc(n * sizeof *val);
    cs_status st = CS_OK;
    if (!y || !val) {
        st = cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
        goto done;
    }
    for (size_t c = 0; c < k && st == CS_OK; c++) {
        for (size_t r = 0; r < d->n; r++) y[r] = (uint8_t)((size_t)d->label[r] == c);
        st = cs_rc_iso_fit_rows(d, pl, d->prob + c, k, y, CS_RC_ISO_POOL_EPS, val, err);
        for (size_t r = 0; st == CS_OK && r < d->n; r++) out[r * k + c] = val[r];
    }
    if (st != CS_OK) goto done;
    for (size_t r = 0; r < d->n; r++) {
        double *q = out + r * k, sum = 0;
        for (size_t c = 0; c < k; c++) sum += q[c];
        for (size_t c = 0; c < k; c++) q[c] = sum > 0 ? q[c] / sum : 1.0 / (double)k;
    }
done:
    free(y);
    free(val);
    return st;
}
