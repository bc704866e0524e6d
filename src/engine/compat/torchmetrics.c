/* torchmetrics 1.9.0: multiclass_calibration_error / binary_calibration_error.
 *
 * Transcribed from Lightning-AI/torchmetrics v1.9.0 (commit 700261d3683ba77517e9650043f62a8313027437)
 * src/torchmetrics/functional/classification/calibration_error.py, following the tensor dtypes;
 * every torch primitive is torchprim.c's (checked against torch itself; the numbers against
 * torchmetrics itself, tests/fixtures/torchmetrics_values.txt):
 *  - `binary_calibration_error`: `_binary_confusion_matrix_format(threshold=0.0,
 *    convert_to_labels=False)` only flattens and, when some value is outside [0, 1], applies a
 *    sigmoid (never here: calscope refuses such probabilities); no cast, so the tensor's dtype
 *    reaches `_ce_compute`;
 *  - `_binning_bucketize`: acc/conf/count of length len(bin_boundaries) = M + 1 (one more than
 *    the bins) in the dtype of the confidences; `indices = torch.bucketize(confidences,
 *    bin_boundaries, right=True) - 1`, so a bin is [lo, hi) and a confidence of exactly 1.0 lands
 *    in the extra bin M; sums by scatter_add_ in sample order; `nan_to_num(sum / count)` (an empty
 *    bin has conf = acc = 0); `prop_bin = count_bin / count_bin.sum()`.
 *  - `_ce_compute`: `bin_boundaries = torch.linspace(0, 1, n_bins + 1, dtype=confidences.dtype)`;
 *    l1 = torch.sum(|acc - conf| * prop); max = torch.max(|acc - conf|) over all M + 1 entries
 *    (empty ones are 0); l2 = torch.sum((acc - conf)^2 * prop), sqrt of it or 0.
 *  - `_multiclass_calibration_error_update`: `confidences, predictions = preds.max(dim=1)` in the
 *    dtype of preds (ties: the first class), then `confidences.float(), accuracies.float()`: the
 *    binning is float32 whatever the input dtype; only the argmax sees float64 values.
 *  - `_binary_calibration_error_update`: `confidences, accuracies = preds, target`: the
 *    probability of class 1 against the 0/1 target, in the dtype of preds — float32 for a model's
 *    output, float64 (float64 edges, sums and result) for `torch.tensor(P, dtype=torch.float64)`.
 * `f64` (--torch-dtype float64) says which tensors the user passes; the other dtype is computed
 * too (other_dtype): a random forest's k/100 passed as `torch.tensor(numpy array)` is float64,
 * and 0.3, 0.6 and 0.7 then sit below float64 edges 3 * 0.1 = 0.30000000000000004 ... while their
 * float32 values reach the float32 edges, so the two calls differ (0.034288 against 0.032179 on
 * tests/fixtures/breast_cancer_rf.csv at M = 10). */
#include "engine/compat/cx.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct tm_out { double l1, mx, rms; } tm_out;

/* _ce_compute for confidences / accuracies of type T: idx[i] gets sample i's bin; with tab the
 * M + 1 entries go to its table. One rounding per statement (see torchprim.c). */
#define TM_CE(NAME, T, LINSPACE, BUCKETIZE, SUM, ABS, SQRT)                                  \
static int NAME(const T *conf, const T *acc, size_t n, int M, int *idx, cs_compat_lib_result *tab, \
                tm_out *r)                                                                    \
{                                                                                             \
    size_t nb = (size_t)M + 1;                                                                \
    T *e = malloc(nb * sizeof *e), *cnt = calloc(nb, sizeof *cnt);                            \
    T *cs = calloc(nb, sizeof *cs), *as = calloc(nb, sizeof *as);                             \
    T *t1 = malloc(nb * sizeof *t1), *t2 = malloc(nb * sizeof *t2);                           \
    if (!e || !cnt || !cs || !as || !t1 || !t2) {                                             \
        free(e); free(cnt); free(cs); free(as); free(t1); free(t2);                           \
        return -1;                                                                            \
    }                                                                                         \
    LINSPACE(e, 0, 1, M + 1);                                                                 \
    for (size_t i = 0; i < n; i++) {                                                          \
        int b = BUCKETIZE(e, M + 1, conf[i]) - 1;                                             \
        if (b < 0) b = 0; /* only a negative value, which no probability is */                \
        idx[i] = b;                                                                           \
        cnt[b] += 1;                                                                          \
        cs[b] += conf[i];                                                                     \
        as[b] += acc[i];                                                                      \
    }                                                                                         \
    T total = SUM(cnt, nb), mx = 0;                                                           \
    for (size_t b = 0; b < nb; b++) {                                                         \
        T cb = cnt[b] > 0 ? cs[b] / cnt[b] : 0; /* nan_to_num(0 / 0) */                       \
        T ab = cnt[b] > 0 ? as[b] / cnt[b] : 0;                                               \
        T prop = cnt[b] / total;                                                              \
        T d = ab - cb;                                                                        \
        T ad = ABS(d);                                                                        \
        T d2 = d * d;                                                                         \
        t1[b] = ad * prop;                                                                    \
        t2[b] = d2 * prop;                                                                    \
        if (ad > mx) mx = ad;                                                                 \
        if (tab)                                                                              \
            tab->bins[b] = (cs_bin){ e[b], b < (size_t)M ? e[b + 1] : e[M], (size_t)cnt[b], cb, ab, ad }; \
    }                                                                                         \
    T l2 = SUM(t2, nb);                                                                       \
    r->l1 = SUM(t1, nb);                                                                      \
    r->mx = mx;                                                                               \
    r->rms = l2 > 0 ? SQRT(l2) : 0;                                                           \
    free(e); free(cnt); free(cs); free(as); free(t1); free(t2);                               \
    return 0;                                                                                 \
}

TM_CE(tm_ce_f32, float, cx_torch_linspace_f32, cx_torch_bucketize_right_f32, cx_torch_sum_f32, fabsf, sqrtf)
TM_CE(tm_ce_f64, double, cx_torch_linspace_f64, cx_torch_bucketize_right_f64, cx_torch_sum_f64, fabs, sqrt)

/* The confidences and accuracies torchmetrics forms from tensors of the given dtype, binned by
 * _ce_compute into r (idx[n] gets each sample's bin; tab, when not NULL, the bin table):
 *  - binary: p[1] and the 0/1 target as they are, so float64 tensors bin in float64;
 *  - multiclass: preds.max(dim=1) in the tensor's dtype (the first of equal maxima), then
 *    .float(): float32 binning whatever the dtype. */
static int tm_run(const cx_in *in, int binary, int f64, int *idx, cs_compat_lib_result *tab, tm_out *r)
{
    size_t n = in->n, k = in->k;
    int bin64 = binary && f64; /* the only float64 binning: binary on float64 tensors */
    float *c32 = NULL, *a32 = NULL;
    double *c64 = NULL, *a64 = NULL;
    int rc = -1;
    if (bin64) { c64 = malloc((n ? n : 1) * sizeof *c64); a64 = malloc((n ? n : 1) * sizeof *a64); }
    else { c32 = malloc((n ? n : 1) * sizeof *c32); a32 = malloc((n ? n : 1) * sizeof *a32); }
    if (bin64 ? !c64 || !a64 : !c32 || !a32) goto done;
    for (size_t i = 0; i < n; i++) {
        if (binary) {
            double p1 = cx_p(in, i, 1);
            int y1 = cx_label(in, i) == 1;
            if (bin64) { c64[i] = p1; a64[i] = y1; }
            else { c32[i] = (float)p1; a32[i] = (float)y1; }
            continue;
        }
        size_t best = 0;
        if (f64) {
            double bv = cx_p(in, i, 0);
            for (size_t j = 1; j < k; j++)
                if (cx_p(in, i, j) > bv) { bv = cx_p(in, i, j); best = j; }
            c32[i] = (float)bv;
        } else {
            float bv = (float)cx_p(in, i, 0);
            for (size_t j = 1; j < k; j++) {
                float pj = (float)cx_p(in, i, j);
                if (pj > bv) { bv = pj; best = j; }
            }
            c32[i] = bv;
        }
        a32[i] = (int32_t)best == cx_label(in, i) ? 1.0f : 0.0f;
    }
    rc = bin64 ? tm_ce_f64(c64, a64, n, in->M, idx, tab, r) : tm_ce_f32(c32, a32, n, in->M, idx, tab, r);
done:
    free(c32); free(a32); free(c64); free(a64);
    return rc;
}

/* Lists the samples whose torchmetrics bin idx[i] differs from calscope's, with the rule. */
static void record_moves(const cx_in *in, cs_compat_lib_result *o, int binary, int bin64, const int *idx)
{
    int M = in->M;
    for (size_t i = 0; i < in->n; i++) {
        double v = binary ? cx_p(in, i, 1) : in->conf[i];
        int cb = cs_ubin(v, M);
        if (idx[i] == cb) continue;
        cs_compat_rule rule = v == 1.0 ? CS_RULE_PHANTOM_ONE
                            : cx_left_closed_bin(v, M) == idx[i] ? CS_RULE_LEFT_CLOSED
                            : bin64 ? CS_RULE_EDGE_ARITH : CS_RULE_FLOAT32;
        cx_move(o, i, in, binary ? 1 : -1, v, cb, idx[i], rule);
    }
}

int cx_torchmetrics(const cx_in *in, cs_compat_lib_result *o, int binary)
{
    int M = in->M, f64 = in->torch_f64;
    size_t n = in->n, k = in->k;
    const char *dt = f64 ? "float64" : "float32";
    if (binary)
        snprintf(o->call, sizeof o->call,
                 "binary_calibration_error(%s probs[:, 1], target, n_bins=%d, norm='l1'|'max'|'l2')", dt, M);
    else
        snprintf(o->call, sizeof o->call,
                 "multiclass_calibration_error(%s probs, target, num_classes=%zu, n_bins=%d, norm='l1'|'max'|'l2')", dt, k, M);
    const char *none = binary ? "torchmetrics-binary has no such metric" : "torchmetrics has no such metric";
    cx_note(o, CS_CM_ACE, "%s", none);
    cx_note(o, CS_CM_AECE, "%s (uniform bins only)", none);
    cx_note(o, CS_CM_SCE, "%s (no class-wise calibration error)", none);
    cx_note(o, CS_CM_RECE_G, "%s", none);
    cx_note(o, CS_CM_RECE_G_GAUSS, "%s", none);
    if (binary && k != 2) {
        o->applicable = 0;
        snprintf(o->semantics, sizeof o->semantics,
                 "not applicable: binary_calibration_error needs a two-class file (p[1] and 0/1 targets)");
        for (int m = 0; m < CS_CM_COUNT; m++)
            if (!o->notes[m][0]) cx_note(o, m, "needs a two-class file");
        return 0;
    }
    if (in->classwise || in->mass) {
        /* torchmetrics bins the top-1 (or p[1]) value in uniform bins and nothing else */
        const char *why = in->classwise ? "no class-wise calibration error" : "uniform bins only";
        for (int m = CS_CM_ECE; m <= CS_CM_RMS; m++)
            if (m != CS_CM_ACE) cx_note_settings(o, m, "%s (%s)", none, why);
        snprintf(o->semantics, sizeof o->semantics, "%s", binary
                 ? "positive-class calibration in uniform bins only: nothing under these settings"
                 : "top-1 calibration in uniform bins only: nothing under these settings");
        cx_table_none(o, "torchmetrics has no %s calibration error: the bins are calscope's",
                      in->classwise ? "class-wise" : "equal-mass");
        return 0;
    }
    if (binary)
        snprintf(o->semantics, sizeof o->semantics, "positive-class calibration: %s p[1] against the 0/1 label (not top-1); [lo,hi) bins on %s torch.linspace edges, 1.0 in an extra bin, empty bins count 0 (also in the max)", dt, dt);
    else
        snprintf(o->semantics, sizeof o->semantics, "top-1 confidence (argmax of the %s probabilities, then float32) vs correctness; [lo,hi) bins on float32 torch.linspace edges, 1.0 in an extra bin M, empty bins count 0 (also in the max)", dt);

    int *idx = malloc((n ? n : 1) * sizeof *idx), *other_idx = malloc((n ? n : 1) * sizeof *other_idx);
    if (!idx || !other_idx) goto nomem;
    if (cx_table_new(o, (size_t)M + 1, 0, "torchmetrics' M + 1 bins of the %s %s: [lo,hi) on %s torch.linspace edges, the extra bin M holds 1.0; empty bins conf = acc = 0",
                     binary && f64 ? "float64" : "float32", binary ? "p[1] (positive class)" : "top-1 confidence",
                     binary && f64 ? "float64" : "float32"))
        goto nomem;
    tm_out r = { 0, 0, 0 }, other = { 0, 0, 0 };
    if (tm_run(in, binary, f64, idx, o, &r) || tm_run(in, binary, !f64, other_idx, NULL, &other)) goto nomem;
    record_moves(in, o, binary, binary && f64, idx);
    o->m[CS_CM_RMS] = r.rms;
    o->m[CS_CM_ECE] = in->l2 ? r.rms : r.l1;
    o->m[CS_CM_MCE] = r.mx;
    o->other_dtype_f64 = !f64;
    o->other_dtype[CS_CM_RMS] = other.rms;
    o->other_dtype[CS_CM_ECE] = in->l2 ? other.rms : other.l1;
    o->other_dtype[CS_CM_MCE] = other.mx;
    free(idx); free(other_idx);
    return 0;
nomem:
    free(idx); free(other_idx);
    return -1;
}
