/* robustcal: the RECE paper's code (MayankGupta73/Robust-Calibration).
 *
 * Transcribed from calibration_library/metrics.py (commit 42f559e):
 *  - `CELoss.compute_bin_boundaries` (lines ~17-37): uniform edges `np.linspace(0, 1, n_bins
 *    + 1)` (i * (1/M)); adaptive edges `bin_n = int(n_data / n_bins)`, edges
 *    `probabilities_sort[i * bin_n]` for i < M, then 1.0.
 *  - `compute_bins` (lines ~66-80): `in_bin = np.greater(conf, lower) * np.less_equal(conf,
 *    upper)`: bins (lo, hi] with a strict lower edge, so a value of exactly 0 (class-wise) or
 *    at/below the first adaptive edge (the minimum) is in no bin; `bin_prop = np.mean(in_bin)`
 *    (count / N, so dropped samples still count in N); score |mean conf - mean acc|.
 *  - ECELoss: dot(bin_prop, bin_score); MCELoss: max(bin_score); AdaptiveECELoss: the same dot
 *    on adaptive edges; SCELoss: per class `probabilities[:, i]` against `labels == i`, summed
 *    and divided by the number of columns; ACELoss (TACELoss with threshold 0): the adaptive
 *    edges of each class column, averaged the same way.
 *  - GECELoss (`GaussianCELoss.compute_bins`, lines ~225-262, and `GECELoss.loss`): for each
 *    sample `g = cdf(uppers) - cdf(lowers)` of `t(loc=conf, scale=sigma, df=3)` (the default
 *    distr_name "t") or `norm` ("gaussian"); all-zero g falls back to the sample's hard bin;
 *    `bin_conf_gaussian += conf * g / sum(g)`, likewise the accuracy; `bin_score[i]` is set
 *    only `if self.bin_prop[i] > 0` (bins with a hard member); GECE = sum(bin_score) / N.
 * Inputs are probabilities (`logits=False`). */
#include "engine/compat/cx.h"
#include "engine/sort/sort.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* (lo, hi] bin among edges e[0..nb]: -1 when v <= e[0] (in no bin) or v > e[nb]. */
static int open_closed_bin(const double *e, int nb, double v)
{
    if (!(v > e[0]) || v > e[nb]) return -1;
    int lo = 1, hi = nb; /* first upper edge >= v */
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (e[mid] >= v) hi = mid;
        else lo = mid + 1;
    }
    return lo - 1;
}

/* dot(bin_prop, bin_score) for values v / accuracies a on edges e; bins written to bin_out;
 * tab: the result whose bin table (nb bins) receives these bins, or NULL. */
static int ce(const double *v, const double *a, size_t n, const double *e, int nb, int *bin_out,
              double *ece, double *mce, cs_compat_lib_result *tab)
{
    double *c = calloc((size_t)nb, sizeof *c), *sv = calloc((size_t)nb, sizeof *sv),
           *sa = calloc((size_t)nb, sizeof *sa);
    if (!c || !sv || !sa) { free(c); free(sv); free(sa); return -1; }
    for (size_t i = 0; i < n; i++) {
        int b = open_closed_bin(e, nb, v[i]);
        if (bin_out) bin_out[i] = b;
        if (b < 0) continue;
        c[b] += 1;
        sv[b] += v[i];
        sa[b] += a[i];
    }
    double s = 0, mx = 0;
    for (int b = 0; b < nb; b++) {
        if (tab) cx_table_add(tab, (size_t)b, e[b], e[b + 1], c[b], sv[b], sa[b]);
        if (c[b] > 0) {
            double sc = fabs(sv[b] / c[b] - sa[b] / c[b]);
            s += (c[b] / (double)n) * sc;
            if (sc > mx) mx = sc;
        }
    }
    *ece = s;
    if (mce) *mce = mx;
    free(c); free(sv); free(sa);
    return 0;
}

/* compute_bin_boundaries(probabilities): sorted[i * int(N / M)], then 1.0 */
static int adaptive_edges(const double *v, size_t n, int M, double *e, double *scratch)
{
    memcpy(scratch, v, n * sizeof *v);
    cs_sort_doubles(scratch, n);
    size_t bn = n / (size_t)M;
    for (int i = 0; i < M; i++) e[i] = scratch[(size_t)i * bn];
    e[M] = 1.0;
    return 0;
}

static double t3_cdf(double z)
{
    /* Student-t with 3 degrees of freedom in closed form: 1/2 + (x/(1+x^2) + atan x)/pi with
     * x = z/sqrt(3); agrees with scipy.stats.t.cdf(z, df=3) to about 1e-16. */
    double x = z / sqrt(3.0);
    return 0.5 + (x / (1.0 + x * x) + atan(x)) / M_PI;
}

static double norm_cdf(double z) { return 0.5 * erfc(-z / sqrt(2.0)); }

static int gece(const cx_in *in, const double *e, int gauss, double *out)
{
    int M = in->M;
    size_t n = in->n;
    double sigma = in->sigma;
    double *cg = calloc((size_t)M, sizeof *cg), *ag = calloc((size_t)M, sizeof *ag);
    double *g = malloc((size_t)M * sizeof *g);
    size_t *hard = calloc((size_t)M, sizeof *hard);
    if (!cg || !ag || !g || !hard) { free(cg); free(ag); free(g); free(hard); return -1; }
    for (size_t i = 0; i < n; i++) {
        double c = in->conf[i], a = in->correct[i] ? 1.0 : 0.0;
        int hb = open_closed_bin(e, M, c);
        if (hb >= 0) hard[hb]++;
        double s = 0;
        for (int b = 0; b < M; b++) {
            double zu = (e[b + 1] - c) / sigma, zl = (e[b] - c) / sigma;
            g[b] = gauss ? norm_cdf(zu) - norm_cdf(zl) : t3_cdf(zu) - t3_cdf(zl);
            s += g[b];
        }
        if (s == 0) {
            /* sample_bin_map defaults to 0 for a sample in no bin */
            memset(g, 0, (size_t)M * sizeof *g);
            g[hb >= 0 ? hb : 0] = 1.0;
            s = 1.0;
        }
        for (int b = 0; b < M; b++) {
            double w = g[b] / s;
            cg[b] += c * w;
            ag[b] += a * w;
        }
    }
    double sum = 0;
    for (int b = 0; b < M; b++)
        if (hard[b] > 0) sum += fabs(cg[b] - ag[b]);
    *out = sum / (double)n;
    free(cg); free(ag); free(g); free(hard);
    return 0;
}

static cs_compat_rule mass_rule(const cx_in *in, size_t i, int lib_bin)
{
    (void)in; (void)i;
    return lib_bin < 0 ? CS_RULE_MASS_DROPPED : CS_RULE_MASS_EDGES;
}

int cx_robustcal(const cx_in *in, cs_compat_lib_result *o)
{
    size_t n = in->n, k = in->k;
    int M = in->M;
    snprintf(o->call, sizeof o->call,
             "ECELoss/MCELoss/AdaptiveECELoss/SCELoss().loss(probs, labels, n_bins=%d, logits=False); GECELoss().loss(..., sigma=%g)",
             M, in->sigma);
    snprintf(o->semantics, sizeof o->semantics,
             "top-1 (class-wise for SCE); (lo,hi] bins on np.linspace edges, 0 in no bin; adaptive edges sorted[i*floor(N/M)] with a strict lower edge; GECE sums only bins with a hard member (Student-t df=3 kernel)");
    cx_note(o, CS_CM_ACE, "robustcal has no mean-over-bins ACE (its ACELoss is the adaptive class-wise ECE: --lens classwise --binning mass)");
    cx_note(o, CS_CM_RMS, "robustcal has no RMS calibration error");

    double *e = malloc((size_t)(M + 1) * sizeof *e), *ea = malloc((size_t)(M + 1) * sizeof *ea);
    double *acc = malloc((n ? n : 1) * sizeof *acc), *v = malloc((n ? n : 1) * sizeof *v);
    double *scratch = malloc((n ? n : 1) * sizeof *scratch);
    int *bin = malloc((n ? n : 1) * sizeof *bin);
    int *cbin = malloc((n ? n : 1) * k * sizeof *cbin);
    if (!e || !ea || !acc || !v || !scratch || !bin || !cbin) goto nomem;
    cx_linspace_f64(e, M);
    for (size_t i = 0; i < n; i++) acc[i] = in->correct[i] ? 1.0 : 0.0;

    double ece_u, mce_u, ece_a;
    int tab_top = !in->l2 && !in->classwise, tab_cw = !in->l2 && in->classwise;
    if (in->l2) cx_table_none(o, "robustcal has no L2 calibration error: the bins are calscope's");
    else if (cx_table_new(o, (size_t)M, tab_cw, "%s", tab_cw
                          ? (in->mass ? "robustcal ACELoss: each class's adaptive bins (lo,hi] on sorted[i*floor(N/M)], bin j of every class pooled (lo / hi the widest over classes); values at or below a class's first edge are in no bin"
                                      : "robustcal SCELoss: (lo,hi] on np.linspace edges, bin j of every class pooled; a value of exactly 0 is in no bin")
                          : (in->mass ? "robustcal AdaptiveECELoss: (lo,hi] on sorted[i*floor(N/M)] with a strict lower edge (the minimum is in no bin); empty bins conf = acc = 0"
                                      : "robustcal ECELoss: (lo,hi] on np.linspace edges (0 would be in no bin); empty bins conf = acc = 0")))
        goto nomem;
    if (ce(in->conf, acc, n, e, M, bin, &ece_u, &mce_u, tab_top && !in->mass ? o : NULL)) goto nomem;
    if (!in->classwise && !in->mass)
        for (size_t i = 0; i < n; i++) {
            int cb = cs_ubin(in->conf[i], M);
            if (bin[i] != cb)
                cx_move(o, i, in, -1, in->conf[i], cb, bin[i],
                        in->conf[i] == 0.0 ? CS_RULE_ZERO_NO_BIN : CS_RULE_EDGE_ARITH);
        }
    adaptive_edges(in->conf, n, M, ea, scratch);
    if (ce(in->conf, acc, n, ea, M, bin, &ece_a, NULL, tab_top && in->mass ? o : NULL)) goto nomem;
    o->m[CS_CM_AECE] = ece_a;
    if (in->mass && !in->classwise && cx_mass_moves(o, in, bin, M, mass_rule)) goto nomem;

    /* class-wise: SCELoss (uniform) and ACELoss (adaptive per class) */
    double sce = 0, ace_cw = 0;
    for (size_t c = 0; c < k; c++) {
        for (size_t i = 0; i < n; i++) {
            v[i] = cx_p(in, i, c);
            acc[i] = cx_label(in, i) == (int32_t)c ? 1.0 : 0.0;
        }
        double a, b;
        if (ce(v, acc, n, e, M, bin, &a, NULL, tab_cw && !in->mass ? o : NULL)) goto nomem;
        for (size_t i = 0; i < n; i++) cbin[i * k + c] = bin[i];
        adaptive_edges(v, n, M, ea, scratch);
        if (ce(v, acc, n, ea, M, NULL, &b, NULL, tab_cw && in->mass ? o : NULL)) goto nomem;
        sce += a;
        ace_cw += b;
    }
    sce /= (double)k;
    ace_cw /= (double)k;
    if (!in->l2) cx_table_finish(o, CX_EMPTY_ZERO);   /* bin_acc / bin_conf start at 0 */
    o->m[CS_CM_SCE] = sce;
    if (in->classwise && !in->mass)
        for (size_t i = 0; i < n; i++)
            for (size_t c = 0; c < k; c++) {
                double pv = cx_p(in, i, c);
                int cb = cs_ubin(pv, M), lb = cbin[i * k + c];
                if (lb != cb)
                    cx_move(o, i, in, (int)c, pv, cb, lb, pv == 0.0 ? CS_RULE_ZERO_NO_BIN : CS_RULE_EDGE_ARITH);
            }

    double rt, rg;
    if (gece(in, e, 0, &rt) || gece(in, e, 1, &rg)) goto nomem;
    o->m[CS_CM_RECE_G] = rt;
    o->m[CS_CM_RECE_G_GAUSS] = rg;

    if (in->l2) {
        cx_note_settings(o, CS_CM_ECE, "robustcal has no L2 calibration error");
        cx_note_settings(o, CS_CM_MCE, "robustcal has no L2 calibration error");
    } else if (in->classwise) {
        o->m[CS_CM_ECE] = in->mass ? ace_cw : sce;
        cx_note_settings(o, CS_CM_MCE, "robustcal has no class-wise MCE");
    } else if (in->mass) {
        o->m[CS_CM_ECE] = ece_a;
        cx_note_settings(o, CS_CM_MCE, "robustcal has no adaptive MCE");
    } else {
        o->m[CS_CM_ECE] = ece_u;
        o->m[CS_CM_MCE] = mce_u;
    }
    free(e); free(ea); free(acc); free(v); free(scratch); free(bin); free(cbin);
    return 0;
nomem:
    free(e); free(ea); free(acc); free(v); free(scratch); free(bin); free(cbin);
    return -1;
}
