/* verified_calibration (p-lambda/verified_calibration): get_ece, get_ece_em and the marginal
 * (class-wise) lower_bound_scaling_ce(p=1, debias=False, mode='marginal').
 *
 * Transcribed from calibration/utils.py (the version with get_ece_em and np.array_split):
 *  - `get_equal_prob_bins`: `[i * 1.0 / num_bins for i in range(1, num_bins + 1)]`: upper
 *    edges i/M by one division, the same doubles as calscope's.
 *  - `get_equal_bins`: sorted probs, `num_bins = min(num_bins, len)`, `np.array_split`, edges
 *    at the midpoint `(last_prob + next_first_prob) / 2.0` between consecutive chunks, 1.0
 *    appended, then `sorted(list(set(bins)))` (duplicate edges from ties merge bins).
 *  - `fast_bin`: `np.searchsorted(bins, probs)` (side='left'): bin j is (bins[j-1], bins[j]],
 *    0 in bin 0; a tie at a chunk boundary has the tied value as its midpoint edge, so all of
 *    it stays in the lower bin.
 *  - `plugin_ce(binned, power=1)`: sum over bins of len/N * |mean(prob) - mean(label)|, empty
 *    bins 0.
 *  - `_get_ce`: top-label uses argmax / max and `correct = (preds == labels)`; marginal builds
 *    `get_labels_one_hot`, which asserts `np.min(labels) == 0` and `np.max(labels) == k - 1`
 *    (AssertionError otherwise), then averages the K one-vs-rest errors.
 * debias=True (the default of lower_bound_scaling_ce) draws random resamples for p=1, so the
 * deterministic plug-in (debias=False, get_ece's default) is what compat reproduces. */
#include "engine/compat/cx.h"
#include "engine/sort/sort.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* get_equal_bins: writes the upper edges (last 1.0) and returns how many. */
static int equal_bins(const double *v, size_t n, int M, double *out, double *scratch)
{
    memcpy(scratch, v, n * sizeof *v);
    cs_sort_doubles(scratch, n);
    size_t nb = (size_t)M > n ? n : (size_t)M;
    size_t q = nb ? n / nb : 0, r = nb ? n % nb : 0;
    int ne = 0;
    size_t start = 0;
    for (size_t g = 0; g + 1 < nb; g++) {
        size_t len = q + (g < r);
        double last = scratch[start + len - 1], next = scratch[start + len];
        out[ne++] = (last + next) / 2.0;
        start += len;
    }
    out[ne++] = 1.0;
    cs_sort_doubles(out, (size_t)ne);
    int u = 0;
    for (int i = 0; i < ne; i++)
        if (u == 0 || out[i] != out[u - 1]) out[u++] = out[i];
    return u;
}

/* np.searchsorted(bins, p, side='left') */
static int left_bin(const double *b, int nb, double p)
{
    int lo = 0, hi = nb;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (b[mid] < p) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* plugin_ce with power 1 over the bins `b` (upper edges); bin_out may be NULL; tab: the result
 * whose bin table (at least nb bins) receives these bins, or NULL. */
static int ce_1d(const double *p, const double *lab, size_t n, const double *b, int nb,
                 int *bin_out, double *ce, cs_compat_lib_result *tab)
{
    double *c = calloc((size_t)nb + 1, sizeof *c), *sp = calloc((size_t)nb + 1, sizeof *sp),
           *sl = calloc((size_t)nb + 1, sizeof *sl);
    if (!c || !sp || !sl) { free(c); free(sp); free(sl); return -1; }
    for (size_t i = 0; i < n; i++) {
        int j = left_bin(b, nb, p[i]);
        if (bin_out) bin_out[i] = j;
        c[j] += 1;
        sp[j] += p[i];
        sl[j] += lab[i];
    }
    double s = 0;
    for (int j = 0; j <= nb; j++)
        if (c[j] > 0) s += (c[j] / (double)n) * fabs(sp[j] / c[j] - sl[j] / c[j]);
    /* bin j is (b[j-1], b[j]], bin 0 takes everything up to b[0] (probabilities are >= 0);
     * slot nb (above the last edge 1.0) never fills */
    for (int j = 0; tab && j < nb; j++) cx_table_add(tab, (size_t)j, j ? b[j - 1] : 0.0, b[j], c[j], sp[j], sl[j]);
    *ce = s;
    free(c); free(sp); free(sl);
    return 0;
}

static cs_compat_rule mass_rule(const cx_in *in, size_t i, int lib_bin)
{
    /* Without ties the midpoint edges reproduce array_split's chunks exactly, so a sample
     * only moves when a run of equal values straddles a chunk boundary: the midpoint is
     * then the tied value itself and (lo, hi] keeps the whole run in the lower bin. */
    (void)in; (void)i; (void)lib_bin;
    return CS_RULE_MASS_TIE;
}

/* The working arrays of one measurement: n values and labels, a scratch of n, the uniform
 * and equal-mass edges (M + 1), each sample's bin. */
typedef struct vbuf {
    double *p, *lab, *scratch, *ub, *eb;
    int *bin;
} vbuf;

static void describe(cs_compat_lib_result *o, int M)
{
    snprintf(o->call, sizeof o->call,
             "get_ece(probs, labels, num_bins=%d); get_ece_em(...); lower_bound_scaling_ce(probs, labels, p=1, debias=False, num_bins=%d, mode='marginal')",
             M, M);
    snprintf(o->semantics, sizeof o->semantics,
             "top-label plug-in ECE; (lo,hi] bins on edges i/M (as calscope); equal-mass edges at midpoints between np.array_split chunks, de-duplicated");
    cx_note(o, CS_CM_ACE, "verified_calibration has no ACE");
    cx_note(o, CS_CM_MCE, "verified_calibration has no MCE");
    cx_note(o, CS_CM_RMS, "verified_calibration's L2 estimators are debiased/equal-mass (not compared)");
    cx_note(o, CS_CM_RECE_G, "verified_calibration has no RECE-G");
    cx_note(o, CS_CM_RECE_G_GAUSS, "verified_calibration has no RECE-G");
}

/* The top-label ECE on uniform (*ece_u) and equal-mass (*ece_m) bins, the table of the one
 * reported (none for l2) and the samples a bin apart from calscope's. 0, or -1 out of memory. */
static int top_label(const cx_in *in, cs_compat_lib_result *o, const vbuf *b, double *ece_u, double *ece_m)
{
    size_t n = in->n;
    int M = in->M;
    int top = !in->classwise && !in->l2, tab_u = top && !in->mass, tab_m = top && in->mass;
    if (in->l2) cx_table_none(o, "verified_calibration's L2 estimators are not compared: the bins are calscope's");
    if (tab_u && cx_table_new(o, (size_t)M, 0, "verified's M bins of the top-1 confidence: (lo,hi] on edges i/M (as calscope's); empty bins weigh 0 and have no conf / acc"))
        return -1;
    if (tab_m && cx_table_new(o, (size_t)M, 0, "verified's equal-mass bins of the top-1 confidence (get_ece_em): (lo,hi] with edges at the midpoints between np.array_split chunks, de-duplicated"))
        return -1;
    for (size_t i = 0; i < n; i++) b->lab[i] = in->correct[i] ? 1.0 : 0.0;
    if (ce_1d(in->conf, b->lab, n, b->ub, M, b->bin, ece_u, tab_u ? o : NULL)) return -1;
    if (!in->classwise && !in->mass)
        for (size_t i = 0; i < n; i++) {
            int cb = cs_ubin(in->conf[i], M);
            if (b->bin[i] != cb) cx_move(o, i, in, -1, in->conf[i], cb, b->bin[i], CS_RULE_EDGE_ARITH);
        }
    int ne = equal_bins(in->conf, n, M, b->eb, b->scratch);
    if (ce_1d(in->conf, b->lab, n, b->eb, ne, b->bin, ece_m, tab_m ? o : NULL)) return -1;
    if (top) cx_table_finish(o, CX_EMPTY_GAP0);
    o->m[CS_CM_AECE] = *ece_m;
    if (in->mass && !in->classwise && cx_mass_moves(o, in, b->bin, ne + 1, mass_rule)) return -1;
    return 0;
}

/* The marginal (class-wise) calibration error on uniform (*sce_u) and equal-mass (*sce_m)
 * bins, NAN with a note when the labels do not span 0..K-1 (the library asserts so). 0, or
 * -1 out of memory. */
static int marginal(const cx_in *in, cs_compat_lib_result *o, const vbuf *b, double *sce_u, double *sce_m)
{
    size_t n = in->n, k = in->k;
    int M = in->M;
    int32_t lmin = INT32_MAX, lmax = INT32_MIN;
    for (size_t i = 0; i < n; i++) {
        int32_t l = cx_label(in, i);
        if (l < lmin) lmin = l;
        if (l > lmax) lmax = l;
    }
    *sce_u = *sce_m = NAN;
    if (lmin != 0 || lmax != (int32_t)k - 1) {
        cx_note(o, CS_CM_SCE, "verified_calibration raises AssertionError in get_labels_one_hot: the labels must include 0 and K-1 (they span %d..%d)",
                (int)lmin, (int)lmax);
        if (in->classwise && !in->l2) cx_table_none(o, "verified_calibration raises AssertionError (marginal mode): the bins are calscope's");
        return 0;
    }
    int cw = in->classwise && !in->l2;
    if (cw && cx_table_new(o, (size_t)M, 1, in->mass
                           ? "verified's marginal equal-mass bins, bin j of every class pooled (each class has its own midpoint edges: lo / hi the widest over classes)"
                           : "verified's marginal bins (lo,hi] on edges i/M, bin j of every class pooled; empty bins weigh 0 and have no conf / acc"))
        return -1;
    double su = 0, sm = 0;
    for (size_t c = 0; c < k; c++) {
        for (size_t i = 0; i < n; i++) {
            b->p[i] = cx_p(in, i, c);
            b->lab[i] = cx_label(in, i) == (int32_t)c ? 1.0 : 0.0;
        }
        double u, m;
        if (ce_1d(b->p, b->lab, n, b->ub, M, NULL, &u, cw && !in->mass ? o : NULL)) return -1;
        int ne2 = equal_bins(b->p, n, M, b->eb, b->scratch);
        if (ce_1d(b->p, b->lab, n, b->eb, ne2, NULL, &m, cw && in->mass ? o : NULL)) return -1;
        su += u;
        sm += m;
    }
    if (cw) cx_table_finish(o, CX_EMPTY_GAP0);
    *sce_u = su / (double)k;
    *sce_m = sm / (double)k;
    o->m[CS_CM_SCE] = *sce_u;
    return 0;
}

int cx_verified(const cx_in *in, cs_compat_lib_result *o)
{
    size_t n = in->n;
    int M = in->M;
    describe(o, M);
    vbuf b = { malloc((n ? n : 1) * sizeof *b.p), malloc((n ? n : 1) * sizeof *b.lab),
               malloc((n ? n : 1) * sizeof *b.scratch), malloc((size_t)(M + 1) * sizeof *b.ub),
               malloc((size_t)(M + 1) * sizeof *b.eb), malloc((n ? n : 1) * sizeof *b.bin) };
    int rc = !b.p || !b.lab || !b.scratch || !b.ub || !b.eb || !b.bin ? -1 : 0;
    double ece_u = NAN, ece_m = NAN, sce_u = NAN, sce_m = NAN;
    if (rc == 0) {
        for (int i = 1; i <= M; i++) b.ub[i - 1] = (double)i * 1.0 / (double)M;
        rc = top_label(in, o, &b, &ece_u, &ece_m);
    }
    if (rc == 0) rc = marginal(in, o, &b, &sce_u, &sce_m);
    if (rc == 0) {
        if (in->l2) {
            cx_note_settings(o, CS_CM_ECE, "verified_calibration's L2 estimators are not compared");
        } else if (in->classwise) {
            o->m[CS_CM_ECE] = in->mass ? sce_m : sce_u;
            if (isnan(o->m[CS_CM_ECE])) cx_note(o, CS_CM_ECE, "%s", o->notes[CS_CM_SCE]);
        } else {
            o->m[CS_CM_ECE] = in->mass ? ece_m : ece_u;
        }
    }
    free(b.p); free(b.lab); free(b.scratch); free(b.ub); free(b.eb); free(b.bin);
    return rc;
}
