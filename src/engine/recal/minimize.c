/* calscope engine, recalibration: a small limited-memory BFGS minimiser (Nocedal & Wright,
 * 2006, "Numerical Optimization", Algorithm 7.4 for the two-loop recursion) for the smooth
 * convex objectives of the parametric methods (vector scaling's NLL, beta calibration's).
 *
 * Steps: the two-loop direction from the last MEM pairs (the first step scaled to unit length),
 * an Armijo backtracking line search (c1 = 1e-4, halving), and a pair kept only when its
 * curvature s·y is positive, so the implicit Hessian stays positive definite (a step must lower
 * the objective strictly: one that leaves it equal is rounding, not progress). It stops when the
 * largest gradient component is at most gtol (converged), when no step lowers the objective
 * any more (converged when the gradient is below STALL_GTOL: the objective cannot be resolved
 * further in doubles), or when the iteration budget is spent (not converged). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "recal_internal.h"

#define MEM 10
#define STALL_GTOL 1e-7

static double max_abs(const double *v, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++) if (fabs(v[i]) > m) m = fabs(v[i]);
    return m;
}

static double dot(const double *a, const double *b, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

/* The result's last fields and the convergence verdict (see the header comment). */
static void finish(cs_rc_min_result *res, int it, double f, double gtol)
{
    res->iterations = it;
    res->f = f;
    res->converged = isfinite(f) && (res->gnorm <= gtol || (res->stalled && res->gnorm <= STALL_GTOL));
}

/* d = −H·g by the two-loop recursion over the stored pairs (oldest first at index head). */
static void direction(const double *g, size_t n, double *const *S, double *const *Y, const double *rho,
                      int used, int head, double *alpha, double *d)
{
    for (size_t i = 0; i < n; i++) d[i] = -g[i];
    for (int j = used - 1; j >= 0; j--) {
        int at = (head + j) % MEM;
        alpha[at] = rho[at] * dot(S[at], d, n);
        for (size_t i = 0; i < n; i++) d[i] -= alpha[at] * Y[at][i];
    }
    if (used > 0) {
        int last = (head + used - 1) % MEM;
        double gamma = dot(S[last], Y[last], n) / dot(Y[last], Y[last], n);
        for (size_t i = 0; i < n; i++) d[i] *= gamma;
    }
    for (int j = 0; j < used; j++) {
        int at = (head + j) % MEM;
        double beta = rho[at] * dot(Y[at], d, n);
        for (size_t i = 0; i < n; i++) d[i] += (alpha[at] - beta) * S[at][i];
    }
}

cs_status cs_rc_lbfgs(cs_rc_objective fn, void *ctx, size_t n, double *x, int max_iter, double gtol,
                      cs_rc_min_result *res, cs_error *err)
{
    memset(res, 0, sizeof *res);
    double *buf = malloc((size_t)(2 * MEM + 4) * n * sizeof *buf);
    if (!buf) return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
    double *S[MEM], *Y[MEM], rho[MEM], alpha[MEM];
    for (int j = 0; j < MEM; j++) { S[j] = buf + (size_t)j * n; Y[j] = buf + (size_t)(MEM + j) * n; }
    double *g = buf + (size_t)2 * MEM * n, *d = g + n, *xn = d + n, *gn = xn + n;
    double f = fn(x, g, ctx);
    int used = 0, head = 0, it = 0;
    res->gnorm = max_abs(g, n);
    while (res->gnorm > gtol && isfinite(f)) {
        if (it >= max_iter) break;
        it++;
        direction(g, n, S, Y, rho, used, head, alpha, d);
        double slope = dot(g, d, n);
        if (!(slope < 0)) {                   /* not a descent direction: restart from −g */
            used = head = 0;
            for (size_t i = 0; i < n; i++) d[i] = -g[i];
            slope = dot(g, d, n);
        }
        double t = used ? 1.0 : 1.0 / sqrt(-slope), fn_new = f;
        int ok = 0;
        for (int h = 0; h < 60; h++, t /= 2) {
            for (size_t i = 0; i < n; i++) xn[i] = x[i] + t * d[i];
            fn_new = fn(xn, gn, ctx);
            if (fn_new <= f + 1e-4 * t * slope && fn_new < f) { ok = 1; break; }
        }
        if (!ok) {
            res->stalled = 1;
            break;
        }
        /* the new pair: s = x_new − x, y = g_new − g */
        int at = used < MEM ? (head + used) % MEM : head;
        for (size_t i = 0; i < n; i++) {
            S[at][i] = xn[i] - x[i];
            Y[at][i] = gn[i] - g[i];
        }
        double sy = dot(S[at], Y[at], n);
        if (sy > 1e-300 * dot(Y[at], Y[at], n) && sy > 0) {
            rho[at] = 1.0 / sy;
            if (used < MEM) used++;
            else head = (head + 1) % MEM;
        }
        memcpy(x, xn, n * sizeof *x);
        memcpy(g, gn, n * sizeof *g);
        f = fn_new;
        res->gnorm = max_abs(g, n);
    }
    finish(res, it, f, gtol);
    free(buf);
    return CS_OK;
}

/* Solves (H + lambda·I) d = −g by Cholesky in place (H is n×n, row-major, overwritten).
 * Returns 0, or -1 when the matrix is not positive definite. */
static int damped_solve(double *H, const double *g, size_t n, double lambda, double *d)
{
    for (size_t i = 0; i < n; i++) H[i * n + i] += lambda;
    for (size_t j = 0; j < n; j++) {
        double v = H[j * n + j];
        for (size_t q = 0; q < j; q++) v -= H[j * n + q] * H[j * n + q];
        if (!(v > 0)) return -1;
        H[j * n + j] = sqrt(v);
        for (size_t i = j + 1; i < n; i++) {
            double u = H[i * n + j];
            for (size_t q = 0; q < j; q++) u -= H[i * n + q] * H[j * n + q];
            H[i * n + j] = u / H[j * n + j];
        }
    }
    for (size_t i = 0; i < n; i++) {
        double u = -g[i];
        for (size_t q = 0; q < i; q++) u -= H[i * n + q] * d[q];
        d[i] = u / H[i * n + i];
    }
    for (size_t i = n; i-- > 0;) {
        double u = d[i];
        for (size_t q = i + 1; q < n; q++) u -= H[q * n + i] * d[q];
        d[i] = u / H[i * n + i];
    }
    return 0;
}

cs_status cs_rc_newton(cs_rc_objective2 fn, void *ctx, size_t n, double *x, int max_iter, double gtol,
                       cs_rc_min_result *res, cs_error *err)
{
    memset(res, 0, sizeof *res);
    double *buf = malloc((4 * n + 2 * n * n) * sizeof *buf);
    if (!buf) return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
    double *g = buf, *d = g + n, *xn = d + n, *gn = xn + n, *H = gn + n, *Hc = H + n * n;
    double f = fn(x, g, H, ctx);
    int it = 0;
    res->gnorm = max_abs(g, n);
    while (res->gnorm > gtol && isfinite(f) && it < max_iter) {
        it++;
        /* a ridge relative to the diagonal: the Hessian is singular along directions the model
         * does not depend on (vector scaling's common bias shift) */
        double tr = 0;
        for (size_t i = 0; i < n; i++) tr += H[i * n + i];
        double lambda = 1e-12 * (tr / (double)n) + 1e-300;
        /* a step that the line search cannot use (a near-singular Hessian gives a huge one) is
         * retried with a larger ridge, towards a scaled gradient step (Levenberg-Marquardt) */
        int ok = 0;
        for (int tries = 0; tries < 40 && !ok; tries++, lambda *= 100) {
            memcpy(Hc, H, n * n * sizeof *H);
            if (damped_solve(Hc, g, n, lambda, d) != 0) continue;
            double slope = dot(g, d, n), t = 1, fn_new;
            if (!(slope < 0)) continue;
            for (int h = 0; h < 30; h++, t /= 2) {
                for (size_t i = 0; i < n; i++) xn[i] = x[i] + t * d[i];
                fn_new = fn(xn, gn, NULL, ctx);
                if (fn_new <= f + 1e-4 * t * slope && fn_new < f) { ok = 1; break; }
            }
        }
        if (!ok) { res->stalled = 1; break; }
        memcpy(x, xn, n * sizeof *x);
        f = fn(x, g, H, ctx);
        res->gnorm = max_abs(g, n);
    }
    finish(res, it, f, gtol);
    free(buf);
    return CS_OK;
}
