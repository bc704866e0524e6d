/* calscope engine: RECE-M, the robust ECE with a per-sample mixture (Gupta, Basu & Arora 2023,
 * "How Reliable are the Metrics Used for Assessing Reliability in Medical Imaging?", eq. 7).
 *
 * Input: a long test-time-augmentation file (columns id and tta). For each id, the row with
 * tta == 0 is the sample: it gives c_j (its top-1 confidence) and acc_j (label == top-1 class).
 * ALL rows of the id, tta 0 included, are its T observations, each contributing its own top-1
 * confidence c_jt. (The paper fits the mixture to "the observed values" of the augmented passes;
 * counting the clean pass as one of them means an id with no augmentation still has T = 1 and
 * is what "every observation" means here.)
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
 * RECE-M is one of cs_evaluate's metrics (CS_WANT_RECE_M, cs_result.rece_m): the samples of a
 * prepared long file are its selected tta 0 rows (cs_prepared_rows), each carrying its
 * mixture, so intervals and curves resample ids exactly as they resample samples for RECE-G.
 * cs_evaluate gives NAN for a file without id/tta columns (cs_prepared_has_tta), and
 * CS_EINPUT when an id has no tta 0 row or several (the message names the id).
 * Implementation: src/engine/metrics/rece_m.c. */
#ifndef CALSCOPE_RECE_M_H
#define CALSCOPE_RECE_M_H

#include <stddef.h>

/* The 3-component EM fit described above (rece_m.c uses it per sample; exposed for tests):
 * fits x[0..t) (t >= 1) and writes weights, means and variances (3 each). Returns the number
 * of EM iterations run, or -1 when out of memory (t > 64 needs scratch). Pure function, any
 * thread. */
int cs_gmm3_fit(const double *x, size_t t, double weight[3], double mean[3], double var[3]);

#endif
