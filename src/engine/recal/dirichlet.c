/* calscope engine, recalibration: matrix scaling and Dirichlet calibration with ODIR (Kull,
 * Perello-Nieto, Kängsepp, Silva Filho, Song & Flach, 2019, "Beyond temperature scaling:
 * Obtaining well-calibrated multiclass probabilities with Dirichlet calibration").
 *
 * Both fit q = softmax(W s + b), W K×K and b of K: `ms` on the scores temperature scaling uses
 * (logits, else ln max(p, 1e-300)), `dir` on ln p with p clipped to [DBL_MIN, 1 − DBL_EPSILON]
 * (the reference implementation's clip_for_log). The objective is the reference
 * implementation's (github.com/dirichletcal/dirichlet_python at b03f65fc6582cad89497b977b3b33a3c4fe48e39,
 * dirichletcal/calib/multinomial.py `_objective`, `_get_weights` with ref_row=True, and the
 * reg_norm scaling of `fit`):
 *
 *   mean NLL + λ/(K(K−1)) Σ_{i≠j} W_ij² + μ/K Σ_i b_i²
 *
 * with the last row of (W | b) fixed at 0 (ref_row: the softmax does not change when a row is
 * added to every row, so (K−1)(K+1) parameters remain; the penalty is on the off-diagonal
 * entries of that representative). Started from the identity (W_ij = δ_ij − δ_{K−1,j}, b = 0:
 * the file itself when s = ln p), as the reference's initializer='identity'. One difference:
 * the reference clips the predicted probabilities to [ε, 1 − ε] inside its loss; here the loss
 * is the exact NLL (the same whenever no fitting row's probability of its label falls below
 * 2.2e-16).
 *
 * λ and μ are chosen from the grid DM_GRID × DM_GRID by an inner DM_INNER-fold cross-validation
 * on each model's fitting samples (inner fold of a sample: a seeded hash of its id, or of its
 * row number without ids, independent of the outer folds' hash): the pair with the lowest
 * pooled held-out NLL (the first in grid order, λ then μ ascending, on a tie), then one fit on
 * all the model's fitting samples.
 *
 * Fitted by L-BFGS (minimize.c) in scaled coordinates: column j of the scores divided by its
 * root mean square σ_j (W'_ij = W_ij σ_j, penalty λ' (W'_ij / σ_j)²), so that log-probabilities
 * of −700 and intercepts of 1 have gradients of one scale. Cost: each evaluation is one pass
 * over a model's fitting samples (2K(K+1) multiply-adds a row); a model costs DM_INNER ×
 * |grid|² + 1 fits (warm-started along the grid). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calscope/resample.h"
#include "calscope/run.h"
#include "recal_internal.h"

#define DM_GTOL 1e-8
#define DM_DEFAULT_ITER 1000
#define DM_INNER 3
static const double DM_GRID[] = { 1e-4, 1e-3, 1e-2, 1e-1, 1 };
#define DM_NGRID (sizeof DM_GRID / sizeof DM_GRID[0])

typedef struct dm_ctx {
    const double *s;         /* scaled scores s_j / σ_j, n*k */
    const double *inv_sd2;   /* 1 / σ_j² */
    const double *mc;        /* m_j / σ_j */
    const int32_t *label;
    const uint32_t *rows;    /* the samples fitted on */
    size_t n_rows, k;
    double lam, mu;          /* already divided by K(K−1) and K */
    double *z;               /* scratch, k */
    double *xx;              /* scratch, (k+1)² */
} dm_ctx;

/* z = W' s' + b' for one row, the last class 0; returns ln Σ exp z. */
static double dm_logits(const double *x, const double *s, size_t k, double *z)
{
    double mx = 0;
    for (size_t c = 0; c + 1 < k; c++) {
        const double *w = x + c * (k + 1);
        double v = w[k];
        for (size_t j = 0; j < k; j++) v += w[j] * s[j];
        z[c] = v;
        if (v > mx) mx = v;
    }
    z[k - 1] = 0;
    double sum = 0;
    for (size_t c = 0; c < k; c++) sum += exp(z[c] - mx);
    return mx + log(sum);
}

/* The penalised mean NLL, its gradient and (hess not NULL) its Hessian (np × np, row-major);
 * x = rows c < K−1 of (W' | b'). Per row the NLL's Hessian is (diag(p) − p pᵀ) ⊗ x̃ x̃ᵀ over the
 * free classes, x̃ = (s', 1). */
static double dm_objective2(const double *x, double *grad, double *hess, void *vctx)
{
    dm_ctx *c = vctx;
    size_t k = c->k, k1 = k + 1, np = (k - 1) * k1;
    memset(grad, 0, np * sizeof *grad);
    if (hess) memset(hess, 0, np * np * sizeof *hess);
    double L = 0, *xx = c->xx;
    for (size_t t = 0; t < c->n_rows; t++) {
        size_t r = c->rows[t], y = (size_t)c->label[r];
        const double *s = c->s + r * k;
        double lse = dm_logits(x, s, k, c->z);
        L += lse - c->z[y];
        for (size_t cl = 0; cl + 1 < k; cl++) {
            double e = (c->z[cl] = exp(c->z[cl] - lse)) - (cl == y);   /* z becomes p */
            double *g = grad + cl * k1;
            for (size_t j = 0; j < k; j++) g[j] += e * s[j];
            g[k] += e;
        }
        if (!hess) continue;
        for (size_t i = 0; i < k1; i++)
            for (size_t j = 0; j <= i; j++) xx[i * k1 + j] = (i < k ? s[i] : 1) * (j < k ? s[j] : 1);
        for (size_t a = 0; a + 1 < k; a++)
            for (size_t q = 0; q <= a; q++) {
                double A = (a == q ? c->z[a] : 0) - c->z[a] * c->z[q];
                double *h = hess + a * k1 * np + q * k1;
                for (size_t i = 0; i < k1; i++)        /* each block is symmetric: its lower half */
                    for (size_t j = 0; j <= i; j++) h[i * np + j] += A * xx[i * k1 + j];
            }
    }
    double inv = 1.0 / (double)c->n_rows;
    L *= inv;
    if (hess)          /* the lower halves of the lower blocks were summed: scale, mirror */
        for (size_t a = 0; a + 1 < k; a++)
            for (size_t q = 0; q <= a; q++)
                for (size_t i = 0; i < k1; i++)
                    for (size_t j = 0; j <= i; j++) {
                        double v = hess[(a * k1 + i) * np + q * k1 + j] *= inv;
                        hess[(a * k1 + j) * np + q * k1 + i] = v;       /* the block's upper half */
                        hess[(q * k1 + i) * np + a * k1 + j] = v;       /* the transposed block */
                        hess[(q * k1 + j) * np + a * k1 + i] = v;
                    }
    for (size_t cl = 0; cl + 1 < k; cl++) {
        const double *w = x + cl * k1;
        double *g = grad + cl * k1;
        for (size_t j = 0; j < k; j++) {
            g[j] *= inv;
            if (j == cl) continue;
            L += c->lam * w[j] * w[j] * c->inv_sd2[j];
            g[j] += 2 * c->lam * w[j] * c->inv_sd2[j];
            if (hess) hess[(cl * k1 + j) * np + cl * k1 + j] += 2 * c->lam * c->inv_sd2[j];
        }
        /* the raw intercept b_c = b'_c − Σ_j W'_cj m_j / σ_j (see dm_scale) carries μ's penalty */
        double braw = w[k];
        for (size_t j = 0; j < k; j++) braw -= w[j] * c->mc[j];
        g[k] = g[k] * inv + 2 * c->mu * braw;
        for (size_t j = 0; j < k; j++) g[j] -= 2 * c->mu * braw * c->mc[j];
        L += c->mu * braw * braw;
        if (hess)
            for (size_t i = 0; i < k1; i++)
                for (size_t j = 0; j < k1; j++) {
                    double vi = i < k ? -c->mc[i] : 1, vj = j < k ? -c->mc[j] : 1;
                    hess[(cl * k1 + i) * np + cl * k1 + j] += 2 * c->mu * vi * vj;
                }
    }
    return L;
}

/* Summed NLL (unpenalised) of the rows rows[0..n) under x. */
static double dm_nll_sum(const double *x, const double *s, const int32_t *label, const uint32_t *rows, size_t n,
                         size_t k, double *z)
{
    double L = 0;
    for (size_t t = 0; t < n; t++) {
        size_t r = rows[t];
        L += dm_logits(x, s + r * k, k, z) - z[label[r]];
    }
    return L;
}

/* The identity in scaled coordinates: W_ij = δ_ij − δ_{K−1,j}, b = 0, so W'_cj = W_cj σ_j and
 * b'_c = Σ_j W_cj m_j. */
static void dm_identity(double *x, const double *sd, const double *mean, size_t k)
{
    memset(x, 0, (k - 1) * (k + 1) * sizeof *x);
    for (size_t c = 0; c + 1 < k; c++) {
        x[c * (k + 1) + c] = sd[c];
        x[c * (k + 1) + k - 1] = -sd[k - 1];
        x[c * (k + 1) + k] = mean[c] - mean[k - 1];
    }
}

/* Inner fold of row r (a hash of its id, or of its row number). */
static unsigned dm_inner_fold(const cs_dataset *d, size_t r, uint64_t seed)
{
    uint64_t h;
    if (d->id) {
        h = 0xcbf29ce484222325ull;
        for (const char *p = d->id_names[d->id[r]]; *p; p++) h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
    } else {
        h = cs_splitmix64((uint64_t)r);
    }
    return (unsigned)(cs_splitmix64(h ^ cs_splitmix64(seed ^ 0x696e6e6572ull)) % DM_INNER);
}

typedef struct dm_fit {
    const cs_dataset *d;
    const cs_rc_plan *pl;
    const double *s, *sd, *inv_sd2, *mc;
    const double *mean;      /* m_j */
    const uint8_t *inner;    /* per row */
    int budget;
    uint32_t *rows, *held;   /* scratch, n_samples each */
    double *z, *xf;          /* scratch: k + (k+1)²; DM_INNER × np warm starts */
    cs_recal_info *info;
} dm_fit;

/* Minimises on rows[0..n) with (λ, μ) from x (overwritten); fails when it does not converge. */
static cs_status dm_minimise(dm_fit *f, size_t m, const uint32_t *rows, size_t n, double lam, double mu, double *x,
                             const char *method, cs_error *err)
{
    size_t k = f->d->k;
    dm_ctx c = { f->s, f->inv_sd2, f->mc, f->d->label, rows, n, k, lam / (double)(k * (k - 1)), mu / (double)k, f->z,
                 f->z + k };
    cs_rc_min_result res;
    cs_status st = cs_rc_newton(dm_objective2, &c, (k - 1) * (k + 1), x, f->budget, DM_GTOL, &res, err);
    if (st != CS_OK) return st;
    if (res.iterations > f->info->iterations) f->info->iterations = res.iterations;
    if (!res.converged) return cs_rc_unconverged(f->d, f->pl, m, method, f->budget, DM_GTOL, &res, f->info, err);
    return CS_OK;
}

/* The fitting samples of model m (inner fold `skip` left out, none when skip < 0) into rows;
 * the left-out ones into held. */
static size_t dm_rows(const dm_fit *f, size_t m, int skip, size_t *n_held)
{
    size_t n = 0, h = 0;
    for (size_t j = 0; j < f->d->n_samples; j++) {
        uint32_t r = f->d->sample_rows[j];
        if (!cs_rc_uses(f->pl, m, f->pl->group[r])) continue;
        if (skip >= 0 && f->inner[r] == (unsigned)skip) f->held[h++] = r;
        else f->rows[n++] = r;
    }
    if (n_held) *n_held = h;
    return n;
}

/* λ, μ of model m by the inner cross-validation (grid order, warm starts per inner fold). */
static cs_status dm_choose(dm_fit *f, size_t m, const char *method, double *lam, double *mu, cs_error *err)
{
    size_t k = f->d->k, np = (k - 1) * (k + 1);
    double loss[DM_NGRID][DM_NGRID] = { { 0 } };
    for (int fold = 0; fold < DM_INNER; fold++) {
        size_t nh, n = dm_rows(f, m, fold, &nh);
        double *x = f->xf + (size_t)fold * np;
        dm_identity(x, f->sd, f->mean, k);
        for (size_t a = 0; a < DM_NGRID; a++)
            for (size_t b = 0; b < DM_NGRID; b++) {
                cs_status st = dm_minimise(f, m, f->rows, n, DM_GRID[a], DM_GRID[b], x, method, err);
                if (st != CS_OK) return st;
                loss[a][b] += dm_nll_sum(x, f->s, f->d->label, f->held, nh, k, f->z);
            }
    }
    size_t ba = 0, bb = 0;
    for (size_t a = 0; a < DM_NGRID; a++)
        for (size_t b = 0; b < DM_NGRID; b++)
            if (loss[a][b] < loss[ba][bb]) { ba = a; bb = b; }
    *lam = DM_GRID[ba];
    *mu = DM_GRID[bb];
    return CS_OK;
}

/* Every model's inner fitting sets must see every class (the degenerate-fold rule: a class
 * absent from a fit has no finite optimum). */
static cs_status dm_need_every_class(dm_fit *f, const char *method, cs_error *err)
{
    const cs_dataset *d = f->d;
    for (size_t m = 0; m < f->pl->n_models; m++)
        for (int fold = 0; fold < DM_INNER; fold++) {
            size_t n = dm_rows(f, m, fold, NULL);
            for (size_t c = 0; c < d->k; c++) {
                size_t t = 0;
                while (t < n && (size_t)d->label[f->rows[t]] != c) t++;
                if (t < n) continue;
                char who[64], cls[64];
                cs_rc_model_name(f->pl, m, who, sizeof who);
                if (d->class_names && d->class_names[c]) snprintf(cls, sizeof cls, "'%.50s'", d->class_names[c]);
                else snprintf(cls, sizeof cls, "%zu", c);
                return cs_error_set(err, CS_EINPUT, 0, 0,
                                    "%s: %s needs every class among the fitting rows of every model, but class %s has "
                                    "none in inner cross-validation fold %d of %s (its parameters would have no finite "
                                    "optimum); use ts, hist or iso, or fewer folds",
                                    d->path ? d->path : "?", method, cls, fold + 1, who);
            }
        }
    return CS_OK;
}

/* Model m's parameters in raw coordinates into v: W (K×K, last row 0), b, λ, μ. */
static void dm_store(const double *x, const double *sd, const double *mean, size_t k, double lam, double mu, double *v)
{
    memset(v, 0, (k * k + k + 2) * sizeof *v);
    for (size_t c = 0; c + 1 < k; c++) {
        double b = x[c * (k + 1) + k];
        for (size_t j = 0; j < k; j++) {
            v[c * k + j] = x[c * (k + 1) + j] / sd[j];
            b -= v[c * k + j] * mean[j];
        }
        v[k * k + c] = b;
    }
    v[k * k + k] = lam;
    v[k * k + k + 1] = mu;
}

void cs_rc_dm_apply_row(const double *s, const double *v, size_t k, double *q)
{
    double mx = -INFINITY, sum = 0;
    for (size_t c = 0; c < k; c++) {
        double z = v[k * k + c];
        for (size_t j = 0; j < k; j++) z += v[c * k + j] * s[j];
        q[c] = z;
        if (z > mx) mx = z;
    }
    for (size_t c = 0; c < k; c++) sum += (q[c] = exp(q[c] - mx));
    for (size_t c = 0; c < k; c++) q[c] /= sum;
}

/* The scores of `dir`: ln p, p clipped to [DBL_MIN, 1 − DBL_EPSILON]. */
static void dir_scores(const cs_dataset *d, double *s)
{
    for (size_t i = 0; i < d->n * d->k; i++) {
        double p = d->prob[i];
        s[i] = log(p < DBL_MIN ? DBL_MIN : p > 1 - DBL_EPSILON ? 1 - DBL_EPSILON : p);
    }
}

/* Standardises the scores: s'_j = (s_j − m_j) / σ_j, m and σ the mean and deviation of column j
 * over the samples (σ = 1 when the column is constant). W s + b = W' s' + b' with
 * W'_cj = W_cj σ_j and b_c = b'_c − Σ_j W'_cj m_j / σ_j: the same model, far better conditioned.
 * Fills mean, sd, inv_sd2 = 1/σ² and mc = m/σ (k each). */
static void dm_scale(const cs_dataset *d, double *s, double *mean, double *sd, double *inv_sd2, double *mc)
{
    size_t k = d->k, n = d->n_samples ? d->n_samples : 1;
    for (size_t j = 0; j < k; j++) mean[j] = sd[j] = 0;
    for (size_t t = 0; t < d->n_samples; t++)
        for (size_t j = 0; j < k; j++) mean[j] += s[(size_t)d->sample_rows[t] * k + j];
    for (size_t j = 0; j < k; j++) mean[j] /= (double)n;
    for (size_t t = 0; t < d->n_samples; t++)
        for (size_t j = 0; j < k; j++) {
            double v = s[(size_t)d->sample_rows[t] * k + j] - mean[j];
            sd[j] += v * v;
        }
    for (size_t j = 0; j < k; j++) {
        sd[j] = sqrt(sd[j] / (double)n);
        if (!(sd[j] > 0)) sd[j] = 1;
        inv_sd2[j] = 1 / (sd[j] * sd[j]);
        mc[j] = mean[j] / sd[j];
    }
    for (size_t r = 0; r < d->n; r++)
        for (size_t j = 0; j < k; j++) s[r * k + j] = (s[r * k + j] - mean[j]) / sd[j];
}

/* The models are independent: one task each, on the caller's thread budget. */
typedef struct dm_job {
    const dm_fit *base;      /* shared and read-only but for the model's own rows of info->vec */
    const char *method;
    cs_status *st;           /* per model (CS_ECANCELLED until its task ran) */
    cs_error *err;
    int *iterations, *unconverged;
} dm_job;

/* Model m: λ, μ by the inner cross-validation, then the fit on all its rows, into info->vec.
 * Its own scratch and its own info for the counters, so tasks share nothing they write. */
static void dm_model_task(void *ctx, size_t m, int worker)
{
    (void)worker;
    dm_job *j = ctx;
    dm_fit f = *j->base;
    cs_recal_info own = { 0 };
    size_t k = f.d->k, np = (k - 1) * (k + 1), nv = k * k + k + 2, ns1 = f.d->n_samples ? f.d->n_samples : 1;
    f.info = &own;
    f.rows = malloc(ns1 * sizeof *f.rows);
    f.held = malloc(ns1 * sizeof *f.held);
    f.z = malloc((k + (k + 1) * (k + 1)) * sizeof *f.z);
    f.xf = malloc((DM_INNER + 1) * np * sizeof *f.xf);
    cs_error_clear(&j->err[m]);
    cs_status st;
    double lam = 0, mu = 0;
    if (!f.rows || !f.held || !f.z || !f.xf) st = cs_error_set(&j->err[m], CS_ENOMEM, 0, 0, "out of memory");
    else st = dm_choose(&f, m, j->method, &lam, &mu, &j->err[m]);
    if (st == CS_OK) {
        double *x = f.xf + DM_INNER * np;
        size_t n = dm_rows(&f, m, -1, NULL);
        dm_identity(x, f.sd, f.mean, k);
        st = dm_minimise(&f, m, f.rows, n, lam, mu, x, j->method, &j->err[m]);
        if (st == CS_OK) dm_store(x, f.sd, f.mean, k, lam, mu, j->base->info->vec + m * nv);
    }
    j->st[m] = st;
    j->iterations[m] = own.iterations;
    j->unconverged[m] = own.unconverged;
    free(f.rows);
    free(f.held);
    free(f.z);
    free(f.xf);
}

/* Fits every model of the plan into info->vec; the first failing model's error (by number, so
 * the message does not depend on the threads). */
static cs_status dm_fit_models(dm_fit *f, const cs_recal_options *o, const char *method, cs_error *err)
{
    size_t M = f->pl->n_models;
    cs_status *st = malloc(M * sizeof *st);
    cs_error *errs = malloc(M * sizeof *errs);
    int *iters = calloc(M, sizeof *iters), *unconv = calloc(M, sizeof *unconv);
    if (!st || !errs || !iters || !unconv) {
        free(st); free(errs); free(iters); free(unconv);
        return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
    }
    for (size_t m = 0; m < M; m++) st[m] = CS_ECANCELLED;
    dm_job j = { f, method, st, errs, iters, unconv };
    cs_parallel_for(o->threads, M, dm_model_task, &j, o->cancel);
    cs_status out = CS_OK;
    for (size_t m = 0; m < M; m++)
        if (iters[m] > f->info->iterations) f->info->iterations = iters[m];
    for (size_t m = 0; m < M && out == CS_OK; m++) {
        if (st[m] == CS_OK) continue;
        if (st[m] == CS_ECANCELLED) out = cs_error_set(err, CS_ECANCELLED, 0, 0, "cancelled");
        else {
            *err = errs[m];
            out = st[m];
            f->info->unconverged = unconv[m];
        }
    }
    free(st); free(errs); free(iters); free(unconv);
    return out;
}

/* ms and dir: scores s (n*k, raw; scaled in place for the fit, then recomputed to apply). */
static cs_status dm_run(const cs_dataset *d, const cs_rc_plan *pl, const cs_recal_options *o, int dir, double *out,
                        cs_recal_info *info, cs_error *err)
{
    const char *method = dir ? "dir" : "ms";
    size_t k = d->k, n1 = d->n ? d->n : 1, ns1 = d->n_samples ? d->n_samples : 1;
    size_t np = (k - 1) * (k + 1), nv = k * k + k + 2;
    cs_status st = cs_rc_need_every_class(d, pl, method, err);
    if (st != CS_OK) return st;
    dm_fit f = { .d = d, .pl = pl, .info = info };
    f.budget = o->max_iter > 0 ? o->max_iter : DM_DEFAULT_ITER;
    double *s = malloc(n1 * k * sizeof *s), *sd = malloc(4 * k * sizeof *sd);
    uint8_t *inner = malloc(n1);
    f.rows = malloc(ns1 * sizeof *f.rows);
    f.held = malloc(ns1 * sizeof *f.held);
    f.z = malloc((k + (k + 1) * (k + 1)) * sizeof *f.z);
    f.xf = malloc(DM_INNER * np * sizeof *f.xf);
    info->vec = calloc(pl->n_models * nv, sizeof *info->vec);
    if (!s || !sd || !inner || !f.rows || !f.held || !f.z || !f.xf || !info->vec) {
        st = cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
        goto done;
    }
    info->n_vec = nv;
    info->from_logits = !dir && d->logit != NULL;
    for (size_t r = 0; r < d->n; r++) inner[r] = (uint8_t)dm_inner_fold(d, r, o->seed);
    f.s = s;
    f.sd = sd;
    f.inv_sd2 = sd + k;
    f.mean = sd + 2 * k;
    f.mc = sd + 3 * k;
    f.inner = inner;
    st = dm_need_every_class(&f, method, err);
    if (st != CS_OK) goto done;
    if (dir) dir_scores(d, s);
    else cs_rc_scores(d, s);
    dm_scale(d, s, sd + 2 * k, sd, sd + k, sd + 3 * k);
    st = dm_fit_models(&f, o, method, err);
    if (st != CS_OK) goto done;
    if (dir) dir_scores(d, s);                    /* the raw scores again, to apply */
    else cs_rc_scores(d, s);
    for (size_t r = 0; r < d->n; r++)
        cs_rc_dm_apply_row(s + r * k, info->vec + cs_rc_model_of(pl, pl->group[r]) * nv, k, out + r * k);
done:
    free(s);
    free(sd);
    free(inner);
    free(f.rows);
    free(f.held);
    free(f.z);
    free(f.xf);
    return st;                       /* on failure cs_recal_apply frees info->vec */
}

cs_status cs_rc_ms(const cs_dataset *d, const cs_rc_plan *pl, const cs_recal_options *o, double *out,
                   cs_recal_info *info, cs_error *err)
{
    return dm_run(d, pl, o, 0, out, info, err);
}

cs_status cs_rc_dir(const cs_dataset *d, const cs_rc_plan *pl, const cs_recal_options *o, double *out,
                    cs_recal_info *info, cs_error *err)
{
    return dm_run(d, pl, o, 1, out, info, err);
}
