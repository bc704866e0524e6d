/* torchmetrics: multiclass_calibration_error / binary_calibration_error.
 *
 * Transcribed from Lightning-AI/torchmetrics src/torchmetrics/functional/classification/
 * calibration_error.py (commit 660df0d):
 *  - lines 29-56 `_binning_bucketize`: acc/conf/count arrays of length len(bin_boundaries) =
 *    M + 1 (one more than the bins), `indices = torch.bucketize(confidences, bin_boundaries,
 *    right=True) - 1` so a bin is [lo, hi) and a confidence of exactly 1.0 lands in the extra
 *    bin M; sums by scatter_add_, `nan_to_num(sum / count)` (an empty bin has conf = acc = 0),
 *    `prop_bin = count_bin / count_bin.sum()`.
 *  - lines 59-100 `_ce_compute`: `bin_boundaries = torch.linspace(0, 1, n_bins + 1,
 *    dtype=torch.float)`; l1 = sum(|acc - conf| * prop); max = max(|acc - conf|) over all M + 1
 *    entries (empty ones are 0); l2 = sqrt(sum((acc - conf)^2 * prop)) or 0.
 *  - `_multiclass_calibration_error_update`: `confidences, predictions = preds.max(dim=1)`,
 *    `accuracies = predictions.eq(target)`, both `.float()`; a user's probabilities are a
 *    float32 tensor, so the max and the argmax are taken on float32 values.
 *  - `_binary_calibration_error_update`: `confidences, accuracies = preds, target`: the
 *    probability of class 1 against the 0/1 target (positive-class calibration).
 * Everything is float32 and sums are sequential (scatter_add_ on CPU), as here. */
#include "engine/compat/cx.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Number of edges <= v (torch.bucketize(right=True)). */
static int upper_count_f(const float *e, int n, float v)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (e[mid] <= v) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

int cx_torchmetrics(const cx_in *in, cs_compat_lib_result *o, int binary)
{
    int M = in->M;
    size_t n = in->n, k = in->k;
    if (binary)
        snprintf(o->call, sizeof o->call,
                 "binary_calibration_error(probs[:, 1], target, n_bins=%d, norm='l1'|'max'|'l2')", M);
    else
        snprintf(o->call, sizeof o->call,
                 "multiclass_calibration_error(probs, target, num_classes=%zu, n_bins=%d, norm='l1'|'max'|'l2')", k, M);
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
    snprintf(o->semantics, sizeof o->semantics, "%s", binary
             ? "positive-class calibration: float32 p[1] against the 0/1 label (not top-1); [lo,hi) bins on float32 edges, 1.0 in an extra bin, empty bins count 0 (also in the max)"
             : "top-1 float32 confidence vs correctness; [lo,hi) bins on float32 torch.linspace edges, 1.0 in an extra bin M, empty bins count 0 (also in the max)");

    float *e = malloc((size_t)(M + 1) * sizeof *e);
    float *cnt = calloc((size_t)(M + 1), sizeof *cnt);
    float *csum = calloc((size_t)(M + 1), sizeof *csum);
    float *asum = calloc((size_t)(M + 1), sizeof *asum);
    if (!e || !cnt || !csum || !asum) { free(e); free(cnt); free(csum); free(asum); return -1; }
    cx_linspace_f32(e, 0.0f, 1.0f, M + 1);

    for (size_t i = 0; i < n; i++) {
        float c;
        float a;
        double v;
        if (binary) {
            v = cx_p(in, i, 1);
            c = (float)v;
            a = cx_label(in, i) == 1 ? 1.0f : 0.0f;
        } else {
            size_t best = 0;
            float bv = (float)cx_p(in, i, 0);
            for (size_t j = 1; j < k; j++) {
                float pj = (float)cx_p(in, i, j);
                if (pj > bv) { bv = pj; best = j; }
            }
            c = bv;
            a = (int32_t)best == cx_label(in, i) ? 1.0f : 0.0f;
            v = in->conf[i];
        }
        int idx = upper_count_f(e, M + 1, c) - 1;
        if (idx < 0) idx = 0;
        cnt[idx] += 1.0f;
        csum[idx] += c;
        asum[idx] += a;
        if (in->classwise || in->mass) continue;
        int cb = cx_cs_ubin(v, M);
        if (idx != cb) {
            cs_compat_rule r = v == 1.0 ? CS_RULE_PHANTOM_ONE
                             : cx_left_closed_bin(v, M) == idx ? CS_RULE_LEFT_CLOSED : CS_RULE_FLOAT32;
            cx_move(o, i, in, binary ? 1 : -1, v, cb, idx, r);
        }
    }
    int table = !in->classwise && !in->mass;
    if (table && cx_table_new(o, (size_t)M + 1, 0, "%s",
                              binary ? "torchmetrics' M + 1 bins of float32 p[1] (positive class): [lo,hi) on float32 torch.linspace edges, the extra bin M holds 1.0; empty bins conf = acc = 0"
                                     : "torchmetrics' M + 1 bins of the float32 top-1 confidence: [lo,hi) on float32 torch.linspace edges, the extra bin M holds 1.0; empty bins conf = acc = 0")) {
        free(e); free(cnt); free(csum); free(asum);
        return -1;
    }
    if (!table)
        cx_table_none(o, "torchmetrics has no %s calibration error: the bins are calscope's",
                      in->classwise ? "class-wise" : "equal-mass");
    float total = 0.0f;
    for (int b = 0; b <= M; b++) total += cnt[b];
    float l1 = 0.0f, mx = 0.0f, l2 = 0.0f;
    for (int b = 0; b <= M; b++) {
        float conf_b = cnt[b] > 0 ? csum[b] / cnt[b] : 0.0f;
        float acc_b = cnt[b] > 0 ? asum[b] / cnt[b] : 0.0f;
        float prop = cnt[b] / total;
        float d = acc_b - conf_b;
        l1 += fabsf(d) * prop;
        if (fabsf(d) > mx) mx = fabsf(d);
        l2 += d * d * prop;
        if (table)
            o->bins[b] = (cs_bin){ e[b], b < M ? e[b + 1] : e[M], (size_t)cnt[b], conf_b, acc_b, fabsf(d) };
    }
    float rms = l2 > 0.0f ? sqrtf(l2) : 0.0f;
    free(e);
    free(cnt);
    free(csum);
    free(asum);

    o->m[CS_CM_RMS] = rms;
    if (in->classwise) {
        cx_note(o, CS_CM_ECE, "%s (no class-wise calibration error)", none);
        cx_note(o, CS_CM_MCE, "%s (no class-wise calibration error)", none);
    } else if (in->mass) {
        cx_note(o, CS_CM_ECE, "%s (uniform bins only)", none);
        cx_note(o, CS_CM_MCE, "%s (uniform bins only)", none);
    } else {
        o->m[CS_CM_ECE] = in->l2 ? rms : l1;
        o->m[CS_CM_MCE] = mx;
    }
    return 0;
}
