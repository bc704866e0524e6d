/* MONAI CalibrationErrorMetric (from the ACE-DLIRIS paper code).
 *
 * Transcribed from Project-MONAI/MONAI monai/metrics/calibration.py (commit 0688959):
 *  - `calibration_binning` (lines ~30-110): `boundaries = torch.linspace(start=0.0, end=1.0 +
 *    torch.finfo(torch.float32).eps, steps=num_bins + 1)` (float32), inputs `.float()`,
 *    `bin_idx = torch.bucketize(values_p, boundaries[1:], right=right)` with right=False by
 *    default, i.e. the number of upper edges strictly below the value: bins (lo, hi] (the
 *    docstring says [left, right), the code does the opposite), `clamp(max=num_bins - 1)`;
 *    counts and sums by scatter_add_ in float32; means `sum / counts.clamp(min=1)`; empty bins
 *    set to NaN.
 *  - `_compute_tensor`: expected = nansum(|p - gt| * counts) / sum(counts); average =
 *    nanmean(|p - gt|) (non-empty bins); maximum = max over non-empty bins; one value per
 *    (batch, channel), then `metric_reduction="mean"` over channels.
 * A classifier's probabilities go in as y_pred of shape (1, K, N) with the one-hot labels as y
 * (class-wise, the metric's own use); with --lens top1 as one channel: conf against correct. */
#include "engine/compat/cx.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct mo_stats { float ece, ace, mce; } mo_stats;

/* torch.bucketize(v, upper, right=False) clamped to M - 1 */
static int mo_bin(const float *upper, int M, float v)
{
    int lo = 0, hi = M;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (upper[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return lo > M - 1 ? M - 1 : lo;
}

/* upper = edges + 1, so upper[b - 1] is bin b's lower edge (edges[0] = 0 for b = 0).
 * tab: the result whose bin table (M bins) receives this channel's bins (pooled: summed over
 * the class channels, means taken later), or NULL. */
static int channel(const float *upper, int M, const float *v, const float *gt, size_t n,
                   int *bin_out, mo_stats *st, cs_compat_lib_result *tab, int pooled)
{
    float *cnt = calloc((size_t)M, sizeof *cnt), *sp = calloc((size_t)M, sizeof *sp),
          *sg = calloc((size_t)M, sizeof *sg);
    if (!cnt || !sp || !sg) { free(cnt); free(sp); free(sg); return -1; }
    for (size_t i = 0; i < n; i++) {
        int b = mo_bin(upper, M, v[i]);
        if (bin_out) bin_out[i] = b;
        cnt[b] += 1.0f;
        sp[b] += v[i];
        sg[b] += gt[i];
    }
    float num = 0, den = 0, dsum = 0, mx = -INFINITY;
    int ne = 0;
    for (int b = 0; b < M; b++) {
        den += cnt[b];
        if (tab && pooled) cx_table_add(tab, (size_t)b, upper[b - 1], upper[b], cnt[b], sp[b], sg[b]);
        else if (tab) {
            /* sum / counts.clamp(min=1) in float32, then NaN for the empty bins */
            float mp = sp[b] / cnt[b], mg = sg[b] / cnt[b];
            tab->bins[b] = cnt[b] > 0 ? (cs_bin){ upper[b - 1], upper[b], (size_t)cnt[b], mp, mg, fabsf(mp - mg) }
                                      : (cs_bin){ upper[b - 1], upper[b], 0, NAN, NAN, NAN };
        }
        if (cnt[b] == 0) continue;
        float d = fabsf(sp[b] / cnt[b] - sg[b] / cnt[b]);
        num += d * cnt[b];
        dsum += d;
        ne++;
        if (d > mx) mx = d;
    }
    st->ece = num / den;
    st->ace = ne ? dsum / (float)ne : NAN;
    st->mce = ne ? mx : NAN;
    free(cnt); free(sp); free(sg);
    return 0;
}

/* The working arrays: the bins' upper edges (M, float32), n values and targets, each
 * sample's bin, and its bin per class (n * k). */
typedef struct mbuf {
    const float *upper;
    float *v, *gt;
    int *bin, *cbin;
} mbuf;

static void describe(const cx_in *in, cs_compat_lib_result *o)
{
    snprintf(o->call, sizeof o->call,
             "CalibrationErrorMetric(num_bins=%d, calibration_reduction='expected'|'average'|'maximum')(y_pred (1,K,N), y one-hot)", in->M);
    snprintf(o->semantics, sizeof o->semantics, "%s",
             in->classwise ? "class-wise: each class column one-vs-rest in float32, mean over channels; (lo,hi] bins on float32 linspace(0, 1+eps32) edges, empty bins skipped"
                           : "top-1 confidence vs correctness as one float32 channel; (lo,hi] bins on float32 linspace(0, 1+eps32) edges, empty bins skipped");
    cx_note(o, CS_CM_RMS, "MONAI has no RMS calibration error");
    cx_note(o, CS_CM_AECE, "MONAI has only uniform bins");
    cx_note(o, CS_CM_RECE_G, "MONAI has no RECE-G");
    cx_note(o, CS_CM_RECE_G_GAUSS, "MONAI has no RECE-G");
}

/* The top-1 channel (and the bin table), the samples a bin apart from calscope's. 0, or -1
 * out of memory. */
static int top1_channel(const cx_in *in, cs_compat_lib_result *o, const mbuf *b, mo_stats *top)
{
    size_t n = in->n;
    int M = in->M;
    for (size_t i = 0; i < n; i++) {
        b->v[i] = (float)in->conf[i];
        b->gt[i] = in->correct[i] ? 1.0f : 0.0f;
    }
    int tab_top = !in->mass && !in->classwise, tab_cw = !in->mass && in->classwise;
    if (in->mass) cx_table_none(o, "MONAI has only uniform bins: the bins are calscope's");
    else if (cx_table_new(o, (size_t)M, tab_cw, "%s", tab_cw
                          ? "MONAI's bins (lo,hi] on float32 linspace(0, 1+eps32) edges, each class channel one-vs-rest in float32, bin j of every channel pooled; empty bins NaN"
                          : "MONAI's bins (lo,hi] of the float32 top-1 confidence on float32 linspace(0, 1+eps32) edges; empty bins NaN (skipped)"))
        return -1;
    if (channel(b->upper, M, b->v, b->gt, n, b->bin, top, tab_top ? o : NULL, 0)) return -1;
    if (!in->classwise && !in->mass)
        for (size_t i = 0; i < n; i++) {
            int cb = cs_ubin(in->conf[i], M);
            if (b->bin[i] != cb) cx_move(o, i, in, -1, in->conf[i], cb, b->bin[i], CS_RULE_FLOAT32);
        }
    return 0;
}

/* Every class channel one-vs-rest, the means over channels in *cw; the class values a bin
 * apart from calscope's. 0, or -1 out of memory. */
static int class_channels(const cx_in *in, cs_compat_lib_result *o, const mbuf *b, mo_stats *cw)
{
    size_t n = in->n, k = in->k;
    int M = in->M, tab_cw = !in->mass && in->classwise;
    float se = 0, sa = 0, sm = 0;
    for (size_t c = 0; c < k; c++) {
        for (size_t i = 0; i < n; i++) {
            b->v[i] = (float)cx_p(in, i, c);
            b->gt[i] = cx_label(in, i) == (int32_t)c ? 1.0f : 0.0f;
        }
        mo_stats st;
        if (channel(b->upper, M, b->v, b->gt, n, b->bin, &st, tab_cw ? o : NULL, 1)) return -1;
        for (size_t i = 0; i < n; i++) b->cbin[i * k + c] = b->bin[i];
        se += st.ece;
        sa += st.ace;
        sm += st.mce;
    }
    if (tab_cw) cx_table_finish(o, CX_EMPTY_NAN);
    cw->ece = se / (float)k;
    cw->ace = sa / (float)k;
    cw->mce = sm / (float)k;
    o->m[CS_CM_SCE] = cw->ece;
    if (in->classwise && !in->mass)
        for (size_t i = 0; i < n; i++)
            for (size_t c = 0; c < k; c++) {
                double pv = cx_p(in, i, c);
                int cb = cs_ubin(pv, M);
                if (b->cbin[i * k + c] != cb) cx_move(o, i, in, (int)c, pv, cb, b->cbin[i * k + c], CS_RULE_FLOAT32);
            }
    return 0;
}

/* ECE, ACE and MCE as the settings ask (top-1 or class-wise), or why MONAI has none. */
static void monai_numbers(const cx_in *in, cs_compat_lib_result *o, const mo_stats *top, const mo_stats *cw)
{
    const mo_stats *x = in->classwise ? cw : top;
    if (in->mass) {
        for (int m = CS_CM_ECE; m <= CS_CM_MCE; m++) cx_note_settings(o, m, "MONAI has only uniform bins");
    } else if (in->l2) {
        cx_note_settings(o, CS_CM_ECE, "MONAI has no L2 calibration error");
        o->m[CS_CM_ACE] = x->ace;
        o->m[CS_CM_MCE] = x->mce;
    } else {
        o->m[CS_CM_ECE] = x->ece;
        o->m[CS_CM_ACE] = x->ace;
        o->m[CS_CM_MCE] = x->mce;
    }
}

int cx_monai(const cx_in *in, cs_compat_lib_result *o)
{
    size_t n = in->n, k = in->k;
    int M = in->M;
    describe(in, o);
    float *edges = malloc((size_t)(M + 1) * sizeof *edges);
    mbuf b = { edges ? edges + 1 : NULL, malloc((n ? n : 1) * sizeof *b.v), malloc((n ? n : 1) * sizeof *b.gt),
               malloc((n ? n : 1) * sizeof *b.bin), malloc((n ? n : 1) * k * sizeof *b.cbin) };
    int rc = !edges || !b.v || !b.gt || !b.bin || !b.cbin ? -1 : 0;
    mo_stats top, cw;
    if (rc == 0) {
        cx_torch_linspace_f32(edges, 0.0f, 1.0f + FLT_EPSILON, M + 1);
        rc = top1_channel(in, o, &b, &top);
    }
    if (rc == 0) rc = class_channels(in, o, &b, &cw);
    if (rc == 0) monai_numbers(in, o, &top, &cw);
    free(edges); free(b.v); free(b.gt); free(b.bin); free(b.cbin);
    return rc;
}
