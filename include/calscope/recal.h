/* calscope engine: post-hoc recalibration preview (the methods of Riera i Marín & Galdran 2024,
 * "Model Calibration", a MICCAI tutorial; the comparison of Kirchenbauer, Oaks & Heim 2022,
 * "What is Your Metric Telling You?", §5).
 *
 * Eight methods, each fitted in milliseconds on a loaded file and applied to it, giving a new
 * cs_dataset (probabilities replaced; labels, ids, tta and case columns copied; path
 * "FILE+ts" ...) that is compared beside the loaded files like one more "method":
 *
 *   ts     temperature scaling: one scalar T minimising the NLL of softmax(s / T). s are the
 *          logits when the file has logit_ columns, else the log-probabilities ln max(p, 1e-300)
 *          (softmax(ln p / T) ∝ p^(1/T), so T = 1 gives back the file). Fitted by Newton on
 *          beta = 1/T, where the NLL is convex (its second derivative is the mean variance of
 *          s under the softmax), so Newton with a trust region cannot wander off.
 *   platt  binary files only: p1 = sigmoid(a·s + b), s = logit_1 − logit_0 (or ln p1 − ln p0),
 *          a, b by unregularised maximum likelihood (Newton / IRLS with step halving).
 *   hist   histogram binning: M uniform bins on the top-1 confidence ((i/M, (i+1)/M], 0 in bin
 *          0, as the metrics); a sample's confidence becomes the accuracy of its bin on the
 *          fitting rows (a bin with no fitting row leaves the confidence as it was).
 *   iso    isotonic regression (pool-adjacent-violators) of correctness on the top-1
 *          confidence, equal confidences pooled first, predictions interpolated linearly
 *          between the fitted points and clipped at the ends (scikit-learn's
 *          IsotonicRegression(out_of_bounds="clip"), as CalibratedClassifierCV uses it).
 *   vs     vector scaling: softmax(w ⊙ s + b), 2K parameters, mean NLL minimised (vector.c).
 *   ets    ensemble temperature scaling: w1·softmax(s/T) + w2·softmax(s) + w3/K, T the ts fit,
 *          w on the simplex minimising the squared error, solved exactly (ets.c).
 *   beta   binary files only: logit p' = a ln p − b ln(1 − p) + c, a, b >= 0 (beta.c).
 *   irova  one-vs-rest isotonic regression of every class's probability, rows renormalised;
 *          it may change the predicted class, as vs, platt and beta may: info->argmax_changed
 *          counts where (irova.c).
 *
 * Degenerate folds: methods with per-class parameters (vs) need every class among the fitting
 * samples of every model, else CS_EINPUT naming the class and the model; ts, platt, hist, iso
 * ets and beta (whose parameters are shared by the classes) fit whatever rows a model has;
 * irova's curve for a class absent from a model's fitting rows is 0 (rows renormalise the rest).
 *
 * Multiclass rescaling for hist and iso (they only model the top-1 confidence c -> c'): the
 * other classes are multiplied by (1 − c') / (1 − c), which keeps their proportions and the
 * row sum; when c = 1 the remainder 1 − c' is shared equally. So that the predicted class
 * (and hence the accuracy) does not change, c' is floored at p2 / (1 − c + p2), the value at
 * which the rescaled runner-up p2 would tie with it.
 *
 * Honest fitting: by default K-fold cross-fitting (K = 5): samples are dealt to folds in the
 * order of a seeded hash of their id (or of their row number when the file has no id column),
 * so folds are balanced, deterministic for a seed and independent of the row order; every
 * sample is recalibrated by the model fitted on the other K − 1 folds, so no sample is ever
 * scored by a model that saw it. Alternatively a fit mask (one model fitted on the masked rows
 * and applied to every row): the caller must then evaluate only the rows outside the mask —
 * cs_recal_split_mask and cs_dataset_subset do that for `--recal-split F`, cs_recal_column_mask
 * (or the split_fit option) for a named split column (`--recal-split-column`). Only samples (rows
 * with tta 0) are fitted on; every row is transformed (TTA observations by their id's fold).
 *
 * Threads: every function reads its inputs only; any thread may call them. */
#ifndef CALSCOPE_RECAL_H
#define CALSCOPE_RECAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "calscope/dataset.h"
#include "calscope/error.h"

typedef enum cs_recal_method {
    CS_RECAL_TS, CS_RECAL_PLATT, CS_RECAL_HIST, CS_RECAL_ISO, CS_RECAL_VS, CS_RECAL_ETS,
    CS_RECAL_BETA, CS_RECAL_IROVA, CS_RECAL_MS, CS_RECAL_DIR, CS_RECAL_COUNT
} cs_recal_method;

/* ms and dir (K² parameters) are offered up to this many classes (see docs/methods.md for the
 * measured fit times); above it they are a usage error naming vs and ts. */
#define CS_RECAL_DM_MAX_K 20

/* "ts", "platt", "hist", "iso", "vs", "ets", "beta", "irova", "ms", "dir"; NULL for an unknown id. */
const char *cs_recal_name(int method);
/* What the method is called in full ("temperature scaling", "matrix scaling (ODIR)"); NULL
 * for an unknown id. */
const char *cs_recal_title(int method);
/* Id of a name (also "temperature", "histogram", "isotonic", "vector"), or -1. */
int cs_recal_from_name(const char *name);
/* Whether `method` is fitted on a file of k classes: 1, or 0 with why it is not into why
 * ("binary files only: this file has 10 classes"; why may be NULL). platt and beta need
 * k == 2, ms and dir k <= CS_RECAL_DM_MAX_K; the others take any k. cs_recal_apply refuses
 * what this refuses. Any thread. */
int cs_recal_offered(int method, size_t k, char *why, size_t size);

#define CS_RECAL_MAX_FOLDS 32

typedef struct cs_recal_options {
    int folds;               /* K cross-fitting folds, 2..CS_RECAL_MAX_FOLDS (default 5) */
    uint64_t seed;           /* fold assignment */
    int bins;                /* hist: M, 1..100000 (default 15) */
    const uint8_t *fit_mask; /* NULL, or per dataset row 1 = fit on it (then no cross-fitting) */
    const char *split_fit;   /* NULL, or (without fit_mask) fit on the rows whose split column
                                value is this: the mask of cs_recal_column_mask (no cross-fitting;
                                "" = fit or train) */
    int threads;             /* ts passes; <= 0 all cores */
    const atomic_int *cancel; /* NULL, or raised: the fit stops with CS_ECANCELLED (polled
                                 before and after each fit and between ts passes) */
    int max_iter;            /* vs, beta, ms, dir: the iteration budget per model (ms, dir: per
                                fit, the inner cross-validation's included); <= 0 = 1000 */
} cs_recal_options;

/* Defaults above: 5 folds, seed 0, 15 bins, no mask, all cores, no cancel flag. */
void cs_recal_options_default(cs_recal_options *o);

typedef struct cs_recal_info {
    int method;
    int from_logits;         /* ts/platt: s are logits (1) or log-probabilities (0) */
    int folds;               /* models fitted for cross-fitting (0 with a fit mask) */
    size_t fit_rows;         /* samples fitted on (all samples when cross-fitting) */
    /* ts: param[m][0] = T of model m; platt: a, b. Model `folds` (index folds, or 0 with a
     * mask) is fitted on every fitting row — shown to the user, never applied when folds > 0. */
    double param[CS_RECAL_MAX_FOLDS + 1][2];
    int clamped;             /* ts: 1/T hit its bound [1e-4, 1e4] in some model */
    int passes;              /* ts: passes over all the fitting rows (after a 1/16 warm start) */
    /* vs, ets: the full parameters of every model, vec[m * n_vec + i] (models numbered as
     * param): vs w[0..K) then b[0..K); ets w1, w2, w3, T (param[m][0] is T too); beta a, b, c;
     * ms, dir W (K×K row-major, last row 0) then b[0..K) then the chosen λ, μ. malloc'd by cs_recal_apply, owned by whoever holds the info and
     * freed by cs_recal_info_clear (a struct copy shares it: clear one copy only). */
    double *vec;
    size_t n_vec;
    int iterations;          /* vs: the most minimiser iterations any model took */
    int unconverged;         /* set with the error when a model used up its iteration budget */
    size_t argmax_changed;   /* samples whose predicted class the recalibration changed (counted
                                for every method; ts, hist, iso and ets keep it by construction):
                                all samples when cross-fitting, the held-out ones with a mask */
} cs_recal_info;

/* Frees info->vec and sets it to NULL (info may be NULL). Any thread. */
void cs_recal_info_clear(cs_recal_info *info);

/* Fits `method` on d and applies it. Returns a new prepared dataset owned by the caller
 * (cs_dataset_free), with path "<d->path>+<name>" and logit NULL, or NULL with err:
 * CS_EUSAGE (platt or beta on a file with K > 2, bad options), CS_EEMPTY (no fitting row, or a
 * cross-fitting fold leaves nothing to fit on),  CS_EINPUT (vs: a class has no fitting row in
 * some model, or a model did not converge within its budget: info->unconverged is then set),
 * CS_ENOMEM. info may be NULL; on success the caller owns info->vec (cs_recal_info_clear), on
 * failure it is NULL. */
cs_dataset *cs_recal_apply(const cs_dataset *d, int method, const cs_recal_options *o,
                           cs_recal_info *info, cs_error *err);

/* Fit mask of a held-out split: row r is a fitting row iff a seeded hash of its id (or its row
 * number without an id column) falls below `fraction` of the hash range, so a file and its
 * recalibrations split the same way. Returns a malloc'd array of d->n bytes (caller frees) or
 * NULL when out of memory. */
uint8_t *cs_recal_split_mask(const cs_dataset *d, double fraction, uint64_t seed);

/* Fit mask of a named split column (d->split, loaded with cs_load_options.split_column): row r
 * is a fitting row iff its split value equals fit_value, compared case-insensitively; NULL or ""
 * means "fit" or "train". Returns a malloc'd array of d->n bytes (caller frees), or NULL with
 * err: CS_EUSAGE (d has no split column), CS_EINPUT (no sample would be fitted on, or none would
 * be left to evaluate; the message lists the column's values), CS_ENOMEM. */
uint8_t *cs_recal_column_mask(const cs_dataset *d, const char *fit_value, cs_error *err);
/* 1 when split value v is a fitting value: equal to fit_value case-insensitively, or with
 * fit_value NULL or "" to "fit" or "train". Pure; any thread. */
int cs_recal_is_fit_value(const char *v, const char *fit_value);

/* A copy of d with the rows r whose mask[r] == keep_value (mask NULL: every row), prepared,
 * with path "<d->path><suffix>" and the logits kept. Id, case, split and class name tables are
 * copied whole, and prepared under run's thread budget (NULL: the online cores; a budget of 1
 * starts no thread). Returns a dataset owned by the caller, or NULL with err (CS_ENOMEM,
 * CS_EEMPTY when no row is kept). */
cs_dataset *cs_dataset_subset(const cs_dataset *d, const uint8_t *mask, uint8_t keep_value,
                              const char *suffix, const struct cs_run *run, cs_error *err);

/* Isotonic (non-decreasing) least-squares fit by pool-adjacent-violators of y[0..n) with
 * weights w (NULL = 1) in the given order; writes the fitted values to out[0..n) (out may be
 * y). O(n); scratch is allocated inside. Returns CS_OK or CS_ENOMEM. */
cs_status cs_isotonic_pav(const double *y, const double *w, size_t n, double *out, cs_error *err);

/* Where methods move probability mass (Kirchenbauer et al. 2022, Fig. 2 and 4), on the samples the
 * selection expression keeps ("" = all): top[j] = mean (j+1)-th largest probability for j < n_top
 * (n_top <= min(K, CS_MASS_TOP_MAX); more are not filled), cls[c] = mean probability of class c
 * (K entries, may be NULL). Large inputs run on run's threads (NULL: the core count; the same
 * numbers on any). Returns CS_OK, CS_EUSAGE (bad selection), CS_EEMPTY, CS_ENOMEM or
 * CS_ECANCELLED (run's cancel); *n_out = samples used. Any thread. */
#define CS_MASS_TOP_MAX 16
cs_status cs_mass_profile(const cs_dataset *d, const char *select, size_t n_top, double *top,
                          double *cls, size_t *n_out, const struct cs_run *run, cs_error *err);

#endif
