/* calscope engine, recalibration: internals shared by the files of src/engine/recal only. */
#ifndef CS_RECAL_INTERNAL_H
#define CS_RECAL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "calscope/recal.h"
#include "engine/sort/sort.h"

/* Which rows fit which model (see recal.c's header comment). */
typedef struct cs_rc_plan {
    size_t n_groups;   /* K folds, or 2 with a fit mask (0 = fit rows, 1 = the rest) */
    size_t n_models;   /* K + 1 (the last on every row, reported only), or 1 with a mask */
    uint8_t *group;    /* per dataset row (owned by the caller of the fits) */
    int cross;
} cs_rc_plan;

/* Model m is fitted on group g's samples. */
static inline int cs_rc_uses(const cs_rc_plan *p, size_t m, size_t g)
{
    if (!p->cross) return g == 0;
    return m == p->n_groups || g != m;
}

/* The model applied to a row of group g. */
static inline size_t cs_rc_model_of(const cs_rc_plan *p, size_t g)
{
    return p->cross ? g : 0;
}

/* q = p with its top-1 probability set to c_new (floored so the prediction stays) and the
 * others rescaled proportionally. q may not alias p. */
void cs_rc_rescale_top1(const double *p, double *q, size_t k, double c_new);

/* The fits: each writes the recalibrated probabilities of every row of d into out (n*k). Those
 * that fill info->vec leave it to cs_recal_apply to free when they fail. */
cs_status cs_rc_temperature(const cs_dataset *d, const cs_rc_plan *pl, const cs_recal_options *o,
                            double *out, cs_recal_info *info, cs_error *err);
cs_status cs_rc_platt(const cs_dataset *d, const cs_rc_plan *pl, double *out, cs_recal_info *info,
                      cs_error *err);
cs_status cs_rc_hist(const cs_dataset *d, const cs_rc_plan *pl, int bins, double *out, cs_error *err);
cs_status cs_rc_iso(const cs_dataset *d, const cs_rc_plan *pl, double *out, cs_error *err);
cs_status cs_rc_vs(const cs_dataset *d, const cs_rc_plan *pl, const cs_recal_options *o, double *out,
                   cs_recal_info *info, cs_error *err);
cs_status cs_rc_ets(const cs_dataset *d, const cs_rc_plan *pl, const cs_recal_options *o, double *out,
                    cs_recal_info *info, cs_error *err);
cs_status cs_rc_beta(const cs_dataset *d, const cs_rc_plan *pl, const cs_recal_options *o, double *out,
                     cs_recal_info *info, cs_error *err);

cs_status cs_rc_ms(const cs_dataset *d, const cs_rc_plan *pl, const cs_recal_options *o, double *out,
                   cs_recal_info *info, cs_error *err);
cs_status cs_rc_dir(const cs_dataset *d, const cs_rc_plan *pl, const cs_recal_options *o, double *out,
                    cs_recal_info *info, cs_error *err);

/* q = softmax(W s + b) for one row, v = W (k×k row-major), b (k) as ms/dir store them. */
void cs_rc_dm_apply_row(const double *s, const double *v, size_t k, double *q);

cs_status cs_rc_irova(const cs_dataset *d, const cs_rc_plan *pl, double *out, cs_error *err);

/* Scores less than this apart are pooled before an isotonic fit (iso, irova), as scikit-learn's
 * IsotonicRegression pools them (_make_unique, np.finfo(float64).resolution). Not a nicety: a
 * naive Bayes model's class probabilities spread over 1e-300 .. 1e-20, and ordered exactly they
 * give isotonic steps of 0 that renormalise to a probability of 0 for classes that occur
 * (irova on digits_gnb, a third held out: held-out NLL 0.81 exactly ordered, 0.50 pooled). */
#define CS_RC_ISO_POOL_EPS 1e-15

/* Isotonic fits (pool-adjacent-violators) of the outcomes y[r] (0/1) on the scores x[r·stride]
 * of the samples, one per applied model, each evaluated (linear interpolation, clipped at the
 * ends) at every row the model is applied to: val[r] for every row. Equal scores are pooled
 * first; with pool_eps > 0, sorted scores less than pool_eps above the first of a block join it
 * (scikit-learn's _make_unique, which uses 1e-15 for doubles). Returns CS_OK or CS_ENOMEM. */
cs_status cs_rc_iso_fit_rows(const cs_dataset *d, const cs_rc_plan *pl, const double *x, size_t stride,
                             const uint8_t *y, double pool_eps, double *val, cs_error *err);

/* Linear interpolation in (ux, fy)[0..n), clipped at the ends (ux strictly increasing). */
double cs_rc_interp(const double *ux, const double *fy, size_t n, double x);

/* Order-preserving 64-bit key of a probability (non-negative doubles sort as their bits). */
uint64_t cs_rc_prob_key(double x);

/* q = softmax(beta·s) for one row of k scores (q may not alias s). */
void cs_rc_softmax_scaled(const double *s, double beta, size_t k, double *q);

/* q = w[0]·softmax(s/T) + w[1]·softmax(s) + w[2]/k for one row; scratch holds k doubles. */
void cs_rc_ets_apply_row(const double *s, double T, const double *w, size_t k, double *q, double *scratch);

/* w = argmin wᵀGw − 2hᵀw over the simplex {w >= 0, Σw = 1}, exactly (G symmetric positive
 * semi-definite). */
void cs_rc_simplex_qp3(const double G[3][3], const double h[3], double w[3]);

/* q = softmax(w ⊙ s + b) for one row of k scores (q may not alias s). */
void cs_rc_vs_apply_row(const double *s, const double *w, const double *b, size_t k, double *q);

/* ---- shared by the parametric methods ---- */

/* The scores every parametric method reads (as temperature scaling): row r's logits, or its
 * log-probabilities ln max(p, 1e-300), written to s[r*k ..] for every row. */
void cs_rc_scores(const cs_dataset *d, double *s);

/* The degenerate-fold rule shared by the methods with per-class parameters: every model must
 * see every class among its fitting samples, else CS_EINPUT naming the method, the class and
 * the model ("cross-fitting fold F", or "the fitting rows"). */
cs_status cs_rc_need_every_class(const cs_dataset *d, const cs_rc_plan *pl, const char *method,
                                 cs_error *err);

/* The name of model m for messages: "cross-fitting fold 3", "the all-rows model" or "the fit". */
void cs_rc_model_name(const cs_rc_plan *pl, size_t m, char *buf, size_t size);

/* Objective for cs_rc_lbfgs: returns f(x) and writes its gradient to grad. */
typedef double (*cs_rc_objective)(const double *x, double *grad, void *ctx);

typedef struct cs_rc_min_result {
    int iterations;
    int converged;           /* gradient <= gtol, or stalled with the gradient below 1e-7 */
    int stalled;             /* no step lowered the objective */
    double f, gnorm;         /* final objective and largest gradient component */
} cs_rc_min_result;

/* The error of a fit that did not converge (see cs_rc_min_result), naming the method, its
 * budget, model m and the gradient reached; sets info->unconverged. Returns CS_EINPUT. */
cs_status cs_rc_unconverged(const cs_dataset *d, const cs_rc_plan *pl, size_t m, const char *method,
                            int budget, double gtol, const cs_rc_min_result *res, cs_recal_info *info,
                            cs_error *err);

/* Minimises fn from x (overwritten by the minimiser found) by L-BFGS with backtracking; see
 * minimize.c. Returns CS_OK (whether converged or not: see res) or CS_ENOMEM. */
cs_status cs_rc_lbfgs(cs_rc_objective fn, void *ctx, size_t n, double *x, int max_iter, double gtol,
                      cs_rc_min_result *res, cs_error *err);

/* Objective with its Hessian (n×n, row-major) when hess is not NULL. */
typedef double (*cs_rc_objective2)(const double *x, double *grad, double *hess, void *ctx);

/* Minimises fn from x by Newton's method (a small relative ridge, step halving); for few
 * parameters (the Hessian is n×n). Same result conventions as cs_rc_lbfgs. */
cs_status cs_rc_newton(cs_rc_objective2 fn, void *ctx, size_t n, double *x, int max_iter, double gtol,
                       cs_rc_min_result *res, cs_error *err);

#endif
