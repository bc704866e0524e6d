/* calscope engine: RECE-M, the robust ECE with a per-sample mixture (SPEC §2, seed 000 eq. 7).
 *
 * Input: a long test-time-augmentation file (columns id and tta). For each id, the row with
 * tta == 0 is the sample: it gives c_j (its top-1 confidence) and acc_j (label == top-1 class).
 * ALL rows of the id, tta 0 included, are its T observations, each contributing its own top-1
 * confidence c_jt. (Seed 000 fits the mixture to "the observed values" of the augmented passes;
 * counting the clean pass as one of them means an id with no augmentation still has T = 1 and
 * is the SPEC's "every observation".)
 *
 * Bin weights over the M = s->bins uniform bins [i/M, (i+1)/M] (the edge rule does not
 * matter: the weights are masses of continuous distributions):
 *   kde  (CS_MIX_KDE):  w_i ∝ (1/T) Σ_t Normal(c_jt, s->sigma)([i/M, (i+1)/M])
 *   gmm3 (CS_MIX_GMM3): w_i ∝ G([i/M, (i+1)/M]; θ_j), θ_j a 3-component 1-D Gaussian mixture
 *        fitted by EM to the T confidences:
 *          init  means = the 1/6, 1/2, 5/6 quantiles of the c_jt with numpy's default rule
 *                (sorted x, position q·(T−1), linear interpolation); weights 1/3; every
 *                variance = the population variance (ddof 0, numpy's np.var) of the c_jt,
 *                floored at 1e-6;
 *          loop  (at most 200 times): M-step from the current responsibilities (variances
 *                floored at 1e-6; a component whose total responsibility is 0 keeps its mean
 *                and variance and gets weight 0), then E-step; stop when the log-likelihood
 *                changed by less than 1e-10 from the previous one (the first one being that
 *                of the initial parameters).
 *        T = 1 or identical observations need no guard beyond the floor: every component then
 *        sits on the value with variance 1e-6.
 *   both normalised to sum to 1 over the M bins.
 * RECE-M = Σ_i |Ã_i − C̃_i| / N over all M bins, C̃_i = Σ_j w_ji c_j, Ã_i = Σ_j w_ji acc_j,
 * N = number of selected samples. s->select is applied to the tta == 0 rows.
 *
 * Threads: cs_rece_m_prepare reads the dataset only; the prepared weights are immutable, so any
 * number of threads may call cs_rece_m_eval on them at once. */
#ifndef CALSCOPE_RECE_M_H
#define CALSCOPE_RECE_M_H

#include <stddef.h>
#include <stdint.h>

#include "calscope/dataset.h"
#include "calscope/error.h"
#include "calscope/metrics.h"

/* Per-sample bin weights of the selected samples, in dataset order of their tta == 0 rows
 * (the order of cs_prepared_rows for the same selection, so the same idx works for both). */
typedef struct cs_rece_m_weights {
    size_t n;          /* selected samples */
    size_t m;          /* bins */
    uint32_t *rows;    /* n: the tta == 0 dataset row of each sample */
    double *conf;      /* n: c_j */
    double *acc;       /* n: acc_j (0 or 1) */
    double *w;         /* n*m: normalised bin weights, row-major */
} cs_rece_m_weights;

/* Builds the weights for d under s (bins, sigma, mixture, select). Returns an owned struct
 * (free with cs_rece_m_weights_free) or NULL with err set: CS_EUSAGE when the file has no id or
 * tta column, bins < 1, sigma <= 0 (kde), or a bad selection; CS_EINPUT when an id has no
 * tta 0 row or several (the message names the id); CS_EEMPTY when the selection keeps no
 * sample; CS_ENOMEM.
 * The dataset must have been through cs_dataset_prepare. Any thread. */
cs_rece_m_weights *cs_rece_m_prepare(const cs_dataset *d, const cs_settings *s, cs_error *err);

/* RECE-M of the samples idx[0..n) of w (NULL idx = all samples, n ignored; entries may repeat,
 * as in a bootstrap). Returns NAN when there are no samples. Any thread. */
double cs_rece_m_eval(const cs_rece_m_weights *w, const uint32_t *idx, size_t n);

/* Frees w and its arrays. NULL is a no-op. */
void cs_rece_m_weights_free(cs_rece_m_weights *w);

/* Convenience: prepare + eval on all selected samples. *out = RECE-M on CS_OK; errors as
 * cs_rece_m_prepare. Any thread. */
cs_status cs_rece_m(const cs_dataset *d, const cs_settings *s, double *out, cs_error *err);

/* The 3-component EM fit described above, exposed for tests and the dashboard's per-sample
 * view: fits x[0..t) (t >= 1) and writes weights, means and variances (3 each). Returns the
 * number of EM iterations run. Pure function, any thread. */
int cs_gmm3_fit(const double *x, size_t t, double weight[3], double mean[3], double var[3]);

#endif
