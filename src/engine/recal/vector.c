/* calscope engine, recalibration: vector scaling (Guo, Pleiss, Sun & Weinberger, 2017, "On
 * Calibration of Modern Neural Networks"): q = softmax(w ⊙ s + b), a scale and a bias per
 * class on the scores s (logits, else log-probabilities, as temperature scaling), fitted by
 * minimising the mean NLL of the fitting samples by Newton's method (K <= 32) or L-BFGS (larger
 * K) from w = 1, b = 0 (the file
 * itself when s are its log-probabilities). The NLL is convex in (w, b) (a log-sum-exp of
 * linear functions minus a linear one). It is invariant to adding a constant to every b; the
 * representative reported (and applied) has Σb = 0.
 *
 * Conditioning: log-probabilities reach −690 (a probability of 1e-300) while the fitted scales
 * can be a few hundredths, so in the raw coordinates the gradient's scale parts are hundreds of
 * times its bias parts and a gradient tolerance means little. The fit runs on the standardised
 * scores s' = (s − μ_c) / σ_c (class means and deviations over the samples), where
 * w ⊙ s + b = w' ⊙ s' + b' with w = w' / σ, b = b' − w' μ / σ: the same model, and the same
 * optimum, reached in far fewer iterations and with a gradient tolerance that is scale-free.
 *
 * Cost: each objective evaluation is one pass over the model's fitting samples (n·K
 * exponentials); a fit takes some tens to a few hundred of them, for each of the K + 1 models. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recal_internal.h"

#define VS_GTOL 1e-8
#define VS_DEFAULT_ITER 1000
#define VS_NEWTON_MAX_K 32   /* Newton up to here (a 2K × 2K Hessian, K² work a row), L-BFGS above */

typedef struct vs_ctx {
    const double *s;         /* scores, n*k */
    const int32_t *label;
    const uint32_t *rows;    /* the model's fitting samples */
    size_t n_rows, k;
    double *z;               /* scratch, k */
} vs_ctx;

/* Mean NLL of softmax(w ⊙ s + b), its gradient and (hess not NULL) its Hessian; x = (w[0..k),
 * b[0..k)). Per row the Hessian in z is diag(p) − p pᵀ, and dz_c/dw_c = s_c, dz_c/db_c = 1. */
static double vs_nll_hess(const double *x, double *grad, double *hess, void *vctx)
{
    vs_ctx *c = vctx;
    size_t n2 = 2 * c->k;
    if (hess) memset(hess, 0, n2 * n2 * sizeof *hess);
    size_t k = c->k;
    const double *w = x, *b = x + k;
    double *gw = grad, *gb = grad + k, *z = c->z, L = 0;
    memset(grad, 0, 2 * k * sizeof *grad);
    for (size_t j = 0; j < c->n_rows; j++) {
        size_t r = c->rows[j];
        const double *s = c->s + r * k;
        double mx = -INFINITY, sum = 0;
        for (size_t i = 0; i < k; i++) {
            z[i] = w[i] * s[i] + b[i];
            if (z[i] > mx) mx = z[i];
        }
        for (size_t i = 0; i < k; i++) sum += (z[i] = exp(z[i] - mx));
        size_t y = c->label[r];
        L += log(sum) - log(z[y]);
        for (size_t i = 0; i < k; i++) {
            double e = z[i] / sum - (i == y);
            gw[i] += e * s[i];
            gb[i] += e;
        }
        if (!hess) continue;
        for (size_t a = 0; a < k; a++) {
            double pa = z[a] / sum;
            for (size_t q = 0; q <= a; q++) {
                double A = (a == q ? pa : 0) - pa * z[q] / sum;
                hess[a * n2 + q] += s[a] * s[q] * A;                 /* w_a, w_q */
                hess[(k + a) * n2 + k + q] += A;                     /* b_a, b_q */
                hess[(k + a) * n2 + q] += s[q] * A;                  /* b_a, w_q */
                if (q != a) hess[(k + q) * n2 + a] += s[a] * A;      /* b_q, w_a */
            }
        }
    }
    double inv = 1.0 / (double)c->n_rows;
    for (size_t i = 0; i < 2 * k; i++) grad[i] *= inv;
    if (hess)       /* the lower triangle was summed: scale it and mirror it */
        for (size_t a = 0; a < n2; a++)
            for (size_t q = 0; q <= a; q++) hess[q * n2 + a] = hess[a * n2 + q] *= inv;
    return L * inv;
}

static double vs_nll(const double *x, double *grad, void *vctx)
{
    return vs_nll_hess(x, grad, NULL, vctx);
}

void cs_rc_vs_apply_row(const double *s, const double *w, const double *b, size_t k, double *q)
{
    double mx = -INFINITY, sum = 0;
    for (size_t i = 0; i < k; i++) {
        q[i] = w[i] * s[i] + b[i];
        if (q[i] > mx) mx = q[i];
    }
    for (size_t i = 0; i < k; i++) sum += (q[i] = exp(q[i] - mx));
    for (size_t i = 0; i < k; i++) q[i] /= sum;
}

/* sn = (s − mu) / sd per class, mu and sd over the samples (sd 1 when a class's scores are
 * constant). */
static void standardise(const cs_dataset *d, const double *s, double *mu, double *sd, double *sn)
{
    size_t k = d->k, n = d->n_samples;
    for (size_t i = 0; i < k; i++) mu[i] = sd[i] = 0;
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < k; i++) mu[i] += s[(size_t)d->sample_rows[j] * k + i];
    for (size_t i = 0; i < k; i++) mu[i] /= (double)(n ? n : 1);
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < k; i++) {
            double e = s[(size_t)d->sample_rows[j] * k + i] - mu[i];
            sd[i] += e * e;
        }
    for (size_t i = 0; i < k; i++) {
        sd[i] = sqrt(sd[i] / (double)(n ? n : 1));
        if (!(sd[i] > 0)) sd[i] = 1;
    }
    for (size_t r = 0; r < d->n; r++)
        for (size_t i = 0; i < k; i++) sn[r * k + i] = (s[r * k + i] - mu[i]) / sd[i];
}

/* The fitting samples of model m. */
static size_t model_rows(const cs_dataset *d, const cs_rc_plan *pl, size_t m, uint32_t *rows)
{
    size_t n = 0;
    for (size_t j = 0; j < d->n_samples; j++) {
        uint32_t r = d->sample_rows[j];
        if (cs_rc_uses(pl, m, pl->group[r])) rows[n++] = r;
    }
    return n;
}

cs_status cs_rc_vs(const cs_dataset *d, const cs_rc_plan *pl, const cs_recal_options *o, double *out,
                   cs_recal_info *info, cs_error *err)
{
    size_t k = d->k, M = pl->n_models, np = 2 * k;
    cs_status st = cs_rc_need_every_class(d, pl, "vs", err);
    if (st != CS_OK) return st;
    double *s = malloc((d->n ? d->n : 1) * k * sizeof *s), *z = malloc(4 * k * sizeof *z);
    double *sn = malloc((d->n ? d->n : 1) * k * sizeof *sn), *mu = z + k, *sd = z + 2 * k;
    uint32_t *rows = malloc((d->n_samples ? d->n_samples : 1) * sizeof *rows);
    info->vec = calloc(M * np, sizeof *info->vec);
    if (!s || !sn || !z || !rows || !info->vec) {
        st = cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
        goto done;
    }
    info->n_vec = np;
    info->from_logits = d->logit != NULL;
    cs_rc_scores(d, s);
    standardise(d, s, mu, sd, sn);
    int budget = o->max_iter > 0 ? o->max_iter : VS_DEFAULT_ITER;
    for (size_t m = 0; m < M; m++) {
        if (o->cancel && atomic_load_explicit(o->cancel, memory_order_relaxed)) {
            st = cs_error_set(err, CS_ECANCELLED, 0, 0, "cancelled");
            goto done;
        }
        double *x = info->vec + m * np;
        for (size_t i = 0; i < k; i++) {                 /* w = 1, b = 0: the identity */
            x[i] = sd[i];
            x[k + i] = mu[i];
        }
        vs_ctx c = { sn, d->label, rows, model_rows(d, pl, m, rows), k, z };
        cs_rc_min_result res;
        st = k <= VS_NEWTON_MAX_K ? cs_rc_newton(vs_nll_hess, &c, np, x, budget, VS_GTOL, &res, err)
                                  : cs_rc_lbfgs(vs_nll, &c, np, x, budget, VS_GTOL, &res, err);
        if (st != CS_OK) goto done;
        if (res.iterations > info->iterations) info->iterations = res.iterations;
        double bmean = 0;
        for (size_t i = 0; i < k; i++) {                 /* back to the raw scores */
            x[i] /= sd[i];
            x[k + i] -= x[i] * mu[i];
            bmean += x[k + i] / (double)k;
        }
        for (size_t i = 0; i < k; i++) x[k + i] -= bmean;   /* the representative with Σb = 0 */
        if (!res.converged) {
            st = cs_rc_unconverged(d, pl, m, "vs", budget, VS_GTOL, &res, info, err);
            goto done;
        }
    }
    for (size_t r = 0; r < d->n; r++) {
        const double *x = info->vec + cs_rc_model_of(pl, pl->group[r]) * np;
        cs_rc_vs_apply_row(s + r * k, x, x + k, k, out + r * k);
    }
done:
    free(s);
    free(sn);
    free(z);
    free(rows);
    return st;                       /* on failure cs_recal_apply frees info->vec */
}
