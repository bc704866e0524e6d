/* calscope engine, recalibration: beta calibration (Kull, Silva Filho & Flach, 2017, "Beta
 * calibration: a well-founded and easily implemented improvement on logistic calibration for
 * binary classifiers"), the paper's "abm" model, binary files only:
 *
 *     logit p' = a ln p − b ln(1 − p) + c,   a, b >= 0,
 *
 * p the file's probability of class 1 (also for a logit file: the model is one of
 * probabilities), clipped to [ε, 1 − ε] with ε = DBL_EPSILON as the reference implementation
 * (betacal, github.com/betacal/python, _beta_calibration) clips it. As there, a logistic
 * regression on the features (ln p, −ln(1 − p)) is fitted first; when a comes out negative it
 * is refitted on −ln(1 − p) alone (a = 0), else when b comes out negative on ln p alone
 * (b = 0). betacal fits it with scikit-learn's LogisticRegression(C=99999999999), whose penalty
 * is negligible; here the unpenalised mean logistic loss is minimised by Newton's method.
 *
 * Cost: a few Newton iterations (3×3 systems) a model, each one pass over its fitting rows. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recal_internal.h"

#define BETA_GTOL 1e-10
#define BETA_DEFAULT_ITER 1000

typedef struct beta_ctx {
    const double *f1, *f2;   /* features ln p and −ln(1 − p), per row */
    const int32_t *label;
    const uint32_t *rows;
    size_t n_rows;
    int use1, use2;          /* which features the model has (the intercept always) */
} beta_ctx;

/* Unpacks the free parameters x into (a, b, c). */
static void unpack(const beta_ctx *c, const double *x, double *a, double *b, double *ic)
{
    size_t i = 0;
    *a = c->use1 ? x[i++] : 0;
    *b = c->use2 ? x[i++] : 0;
    *ic = x[i];
}

/* Mean logistic loss, gradient and Hessian over the free parameters. */
static double beta_loss(const double *x, double *grad, double *hess, void *vctx)
{
    const beta_ctx *c = vctx;
    size_t n = (size_t)(c->use1 + c->use2) + 1;
    double a, b, ic, L = 0;
    unpack(c, x, &a, &b, &ic);
    memset(grad, 0, n * sizeof *grad);
    if (hess) memset(hess, 0, n * n * sizeof *hess);
    for (size_t j = 0; j < c->n_rows; j++) {
        size_t r = c->rows[j];
        double z = a * c->f1[r] + b * c->f2[r] + ic;
        int y = c->label[r] == 1;
        L += (z > 0 ? z : 0) + log1p(exp(-fabs(z))) - (y ? z : 0);
        double p = z >= 0 ? 1 / (1 + exp(-z)) : exp(z) / (1 + exp(z)), e = p - y, w = p * (1 - p);
        double v[3];
        size_t i = 0;
        if (c->use1) v[i++] = c->f1[r];
        if (c->use2) v[i++] = c->f2[r];
        v[i] = 1;
        for (size_t q = 0; q < n; q++) {
            grad[q] += e * v[q];
            if (hess) for (size_t u = 0; u < n; u++) hess[q * n + u] += w * v[q] * v[u];
        }
    }
    double inv = 1.0 / (double)c->n_rows;
    for (size_t q = 0; q < n; q++) grad[q] *= inv;
    if (hess) for (size_t q = 0; q < n * n; q++) hess[q] *= inv;
    return L * inv;
}

/* One logistic fit with the features c says, from zero. */
static cs_status fit_once(beta_ctx *c, int budget, double abc[3], cs_rc_min_result *res, cs_error *err)
{
    double x[3] = { 0, 0, 0 };
    size_t n = (size_t)(c->use1 + c->use2) + 1;
    cs_status st = cs_rc_newton(beta_loss, c, n, x, budget, BETA_GTOL, res, err);
    unpack(c, x, &abc[0], &abc[1], &abc[2]);
    return st;
}

cs_status cs_rc_beta(const cs_dataset *d, const cs_rc_plan *pl, const cs_recal_options *o, double *out,
                     cs_recal_info *info, cs_error *err)
{
    size_t M = pl->n_models, n = d->n ? d->n : 1;
    double *f = malloc(2 * n * sizeof *f);
    uint32_t *rows = malloc((d->n_samples ? d->n_samples : 1) * sizeof *rows);
    info->vec = calloc(M * 3, sizeof *info->vec);
    cs_status st = CS_OK;
    if (!f || !rows || !info->vec) {
        st = cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
        goto done;
    }
    info->n_vec = 3;
    double *f1 = f, *f2 = f + n;
    for (size_t r = 0; r < d->n; r++) {
        double p = d->prob[r * 2 + 1];
        p = p < DBL_EPSILON ? DBL_EPSILON : p > 1 - DBL_EPSILON ? 1 - DBL_EPSILON : p;
        f1[r] = log(p);
        f2[r] = -log1p(-p);
    }
    int budget = o->max_iter > 0 ? o->max_iter : BETA_DEFAULT_ITER;
    for (size_t m = 0; m < M; m++) {
        size_t nr = 0;
        for (size_t j = 0; j < d->n_samples; j++)
            if (cs_rc_uses(pl, m, pl->group[d->sample_rows[j]])) rows[nr++] = d->sample_rows[j];
        beta_ctx c = { f1, f2, d->label, rows, nr, 1, 1 };
        double *abc = info->vec + m * 3;
        cs_rc_min_result res;
        if ((st = fit_once(&c, budget, abc, &res, err)) != CS_OK) goto done;
        /* betacal's rule for a negative coefficient: refit without that feature */
        if (res.converged && (abc[0] < 0 || abc[1] < 0)) {
            c.use1 = !(abc[0] < 0);
            c.use2 = abc[0] < 0;
            if ((st = fit_once(&c, budget, abc, &res, err)) != CS_OK) goto done;
        }
        if (res.iterations > info->iterations) info->iterations = res.iterations;
        if (!res.converged) {
            st = cs_rc_unconverged(d, pl, m, "beta", budget, BETA_GTOL, &res, info, err);
            goto done;
        }
    }
    for (size_t r = 0; r < d->n; r++) {
        const double *abc = info->vec + cs_rc_model_of(pl, pl->group[r]) * 3;
        double z = abc[0] * f1[r] + abc[1] * f2[r] + abc[2];      /* a ln p − b ln(1 − p) + c */
        out[r * 2 + 1] = 1 / (1 + exp(-z));
        out[r * 2] = 1 / (1 + exp(z));
    }
done:
    free(f);
    free(rows);
    return st;                       /* on failure cs_recal_apply frees info->vec */
}
