/* calscope engine, recalibration: ensemble temperature scaling (Zhang, Kailkhura & Han, 2020,
 * "Mix-n-Match: Ensemble and Compositional Methods for Uncertainty Calibration in Deep
 * Learning"): q = w1·softmax(s/T) + w2·softmax(s) + w3/K, on the scores temperature scaling
 * uses (logits, else log-probabilities, where softmax(s) is the file itself), with T each
 * model's temperature-scaling fit (the ts method's, NLL) and w on the simplex minimising the
 * squared error Σ ||q − onehot(y)||² over the model's fitting samples, as the paper's code fits
 * it (there by SLSQP on the mean squared error).
 *
 * The weights' problem is a quadratic in three variables on the simplex: with V the three
 * vectors of a row, the objective is wᵀGw − 2hᵀw + n, G = Σ VᵀV and h = Σ V[y]. Its minimum
 * lies in the relative interior of one face (the whole simplex, an edge or a vertex), so the
 * exact solution is the best of: the equality-constrained minimum over each face, kept when it
 * is feasible. No iterations, nothing to converge.
 *
 * Cost: the temperature fit, then one pass a model over its fitting samples (two softmaxes a
 * row) for G and h, then one pass to apply. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "recal_internal.h"

void cs_rc_softmax_scaled(const double *s, double beta, size_t k, double *q)
{
    double mx = -INFINITY, sum = 0;
    for (size_t i = 0; i < k; i++) if (s[i] > mx) mx = s[i];
    for (size_t i = 0; i < k; i++) sum += (q[i] = exp(beta * (s[i] - mx)));
    for (size_t i = 0; i < k; i++) q[i] /= sum;
}

void cs_rc_ets_apply_row(const double *s, double T, const double *w, size_t k, double *q, double *scratch)
{
    cs_rc_softmax_scaled(s, 1.0 / T, k, q);
    cs_rc_softmax_scaled(s, 1.0, k, scratch);
    for (size_t i = 0; i < k; i++) q[i] = w[0] * q[i] + w[1] * scratch[i] + w[2] / (double)k;
}

static double quad(const double G[3][3], const double h[3], const double w[3])
{
    double f = 0;
    for (int i = 0; i < 3; i++) {
        f -= 2 * h[i] * w[i];
        for (int j = 0; j < 3; j++) f += w[i] * G[i][j] * w[j];
    }
    return f;
}

/* Considers candidate w: kept in best when feasible and lower. */
static void consider(const double G[3][3], const double h[3], const double w[3], double best[3], double *fbest)
{
    for (int i = 0; i < 3; i++) if (!(w[i] >= 0)) return;
    double f = quad(G, h, w);
    if (f < *fbest) {
        *fbest = f;
        memcpy(best, w, 3 * sizeof *w);
    }
}

void cs_rc_simplex_qp3(const double G[3][3], const double h[3], double w[3])
{
    double fbest = INFINITY, c[3];
    /* vertices */
    for (int i = 0; i < 3; i++) {
        c[0] = c[1] = c[2] = 0;
        c[i] = 1;
        consider(G, h, c, w, &fbest);
    }
    /* edges: w_i = t, w_j = 1 − t; f(t) = a t² + b t + const */
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++) {
            double a = G[i][i] - 2 * G[i][j] + G[j][j];
            double b = 2 * (G[i][j] - G[j][j]) - 2 * (h[i] - h[j]);
            if (!(a > 0)) continue;
            double t = -b / (2 * a);
            if (!(t > 0 && t < 1)) continue;
            c[0] = c[1] = c[2] = 0;
            c[i] = t;
            c[j] = 1 - t;
            consider(G, h, c, w, &fbest);
        }
    /* the interior: minimise wᵀGw − 2hᵀw subject to Σw = 1 by the KKT system
     * [2G 1; 1ᵀ 0] [w; ν] = [2h; 1], solved by Gaussian elimination with partial pivoting */
    double A[4][5];
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) A[i][j] = 2 * G[i][j];
        A[i][3] = 1;
        A[i][4] = 2 * h[i];
    }
    for (int j = 0; j < 3; j++) A[3][j] = 1;
    A[3][3] = 0;
    A[3][4] = 1;
    double scale = fabs(G[0][0]) + fabs(G[1][1]) + fabs(G[2][2]) + 1e-300;
    for (int col = 0; col < 4; col++) {
        int piv = col;
        for (int r = col + 1; r < 4; r++) if (fabs(A[r][col]) > fabs(A[piv][col])) piv = r;
        if (fabs(A[piv][col]) <= 1e-13 * scale) return;     /* singular: a face above holds it */
        for (int q = 0; q < 5; q++) { double t = A[col][q]; A[col][q] = A[piv][q]; A[piv][q] = t; }
        for (int r = 0; r < 4; r++) {
            if (r == col) continue;
            double f = A[r][col] / A[col][col];
            for (int q = col; q < 5; q++) A[r][q] -= f * A[col][q];
        }
    }
    for (int i = 0; i < 3; i++) c[i] = A[i][4] / A[i][i];
    consider(G, h, c, w, &fbest);
}

cs_status cs_rc_ets(const cs_dataset *d, const cs_rc_plan *pl, const cs_recal_options *o, double *out,
                    cs_recal_info *info, cs_error *err)
{
    size_t k = d->k, M = pl->n_models;
    /* T of every model (info->param[m][0]); the probabilities it writes are not needed */
    cs_status st = cs_rc_temperature(d, pl, o, out, info, err);
    if (st != CS_OK) return st;
    double *s = malloc((d->n ? d->n : 1) * k * sizeof *s), *v = malloc(2 * k * sizeof *v);
    info->vec = calloc(M * 4, sizeof *info->vec);
    if (!s || !v || !info->vec) {
        free(s);
        free(v);
        free(info->vec);
        info->vec = NULL;
        return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
    }
    info->n_vec = 4;
    cs_rc_scores(d, s);
    double *v1 = v, *v2 = v + k, ik = 1.0 / (double)k;
    for (size_t m = 0; m < M; m++) {
        double T = info->param[m][0], G[3][3] = { { 0 } }, h[3] = { 0 };
        for (size_t j = 0; j < d->n_samples; j++) {
            size_t r = d->sample_rows[j];
            if (!cs_rc_uses(pl, m, pl->group[r])) continue;
            cs_rc_softmax_scaled(s + r * k, 1.0 / T, k, v1);
            cs_rc_softmax_scaled(s + r * k, 1.0, k, v2);
            double g11 = 0, g12 = 0, g22 = 0;
            for (size_t c = 0; c < k; c++) {
                g11 += v1[c] * v1[c];
                g12 += v1[c] * v2[c];
                g22 += v2[c] * v2[c];
            }
            size_t y = (size_t)d->label[r];
            G[0][0] += g11;
            G[0][1] += g12;
            G[1][1] += g22;
            G[0][2] += ik;              /* Σ_c v1[c] / K, the rows summing to 1 */
            G[1][2] += ik;
            G[2][2] += ik;
            h[0] += v1[y];
            h[1] += v2[y];
            h[2] += ik;
        }
        G[1][0] = G[0][1];
        G[2][0] = G[0][2];
        G[2][1] = G[1][2];
        double *x = info->vec + m * 4;
        cs_rc_simplex_qp3((const double (*)[3])G, h, x);
        x[3] = T;
    }
    for (size_t r = 0; r < d->n; r++) {
        const double *x = info->vec + cs_rc_model_of(pl, pl->group[r]) * 4;
        cs_rc_ets_apply_row(s + r * k, x[3], x, k, out + r * k, v);
    }
    free(s);
    free(v);
    return CS_OK;
}
