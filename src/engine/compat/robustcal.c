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

/* The working arrays: linspace and adaptive edges (M + 1), n outcomes, values and scratch,
 * each sample's bin, and its bin per class (n * k). */
typedef struct rbuf {
    double *e, *ea, *acc, *v, *scratch;
    int *bin, *cbin;
} rbuf;

/* robustcal's numbers as calscope names them. */
typedef struct rnums {
    double ece_u, mce_u, ece_a, sce, ace_cw;
} rnums;

static void describe(const cx_in *in, cs_compat_lib_result *o)
{
    snprintf(o->call, sizeof o->call,
             "ECELoss/MCELoss/AdaptiveECELoss/SCELoss().loss(probs, labels, n_bins=%d, logits=False); GECELoss().loss(..., sigma=%g)",
             in->M, in->sigma);
    snprintf(o->semantics, sizeof o->semantics,
             "top-1 (class-wise for SCE); (lo,hi] bins on np.linspace edges, 0 in no bin; adaptive edges sorted[i*floor(N/M)] with a strict lower edge; GECE sums only bins with a hard member (Student-t df=3 kernel)");
    cx_note(o, CS_CM_ACE, "robustcal has no mean-over-bins ACE (its ACELoss is the adaptive class-wise ECE: --lens classwise --binning mass)");
    cx_note(o, CS_CM_RMS, "robustcal has no RMS calibration error");
}

/* The bin table of the loss the settings report (none for l2). 0, or -1 out of memory. */
static int open_table(const cx_in *in, cs_compat_lib_result *o)
{
    int tab_cw = !in->l2 && in->classwise;
    if (in->l2) {
        cx_table_none(o, "robustcal has no L2 calibration error: the bins are calscope's");
        return 0;
    }
    return cx_table_new(o, (size_t)in->M, tab_cw, "%s", tab_cw
                        ? (in->mass ? "robustcal ACELoss: each class's adaptive bins (lo,hi] on sorted[i*floor(N/M)], bin j of every class pooled (lo / hi the widest over classes); values at or below a class's first edge are in no bin"
                                    : "robustcal SCELoss: (lo,hi] on np.linspace edges, bin j of every class pooled; a value of exactly 0 is in no bin")
                        : (in->mass ? "robustcal AdaptiveECELoss: (lo,hi] on sorted[i*floor(N/M)] with a strict lower edge (the minimum is in no bin); empty bins conf = acc = 0"
                                    : "robustcal ECELoss: (lo,hi] on np.linspace edges (0 would be in no bin); empty bins conf = acc = 0")) ? -1 : 0;
}

/* Top-1: ECELoss and MCELoss on linspace bins, AdaptiveECELoss; the samples a bin apart from
 * calscope's. 0, or -1 out of memory. */
static int top1_losses(const cx_in *in, cs_compat_lib_result *o, const rbuf *b, rnums *r)
{
    size_t n = in->n;
    int M = in->M, tab_top = !in->l2 && !in->classwise;
    for (size_t i = 0; i < n; i++) b->acc[i] = in->correct[i] ? 1.0 : 0.0;
    if (ce(in->conf, b->acc, n, b->e, M, b->bin, &r->ece_u, &r->mce_u, tab_top && !in->mass ? o : NULL)) return -1;
    if (!in->classwise && !in->mass)
        for (size_t i = 0; i < n; i++) {
            int cb = cs_ubin(in->conf[i], M);
            if (b->bin[i] != cb)
                cx_move(o, i, in, -1, in->conf[i], cb, b->bin[i],
                        in->conf[i] == 0.0 ? CS_RULE_ZERO_NO_BIN : CS_RULE_EDGE_ARITH);
        }
    adaptive_edges(in->conf, n, M, b->ea, b->scratch);
    if (ce(in->conf, b->acc, n, b->ea, M, b->bin, &r->ece_a, NULL, tab_top && in->mass ? o : NULL)) return -1;
    o->m[CS_CM_AECE] = r->ece_a;
    if (in->mass && !in->classwise && cx_mass_moves(o, in, b->bin, M, mass_rule)) return -1;
    return 0;
}

/* Class-wise: SCELoss (uniform) and ACELoss (adaptive per class); the class values a bin
 * apart from calscope's. 0, or -1 out of memory. */
static int classwise_losses(const cx_in *in, cs_compat_lib_result *o, const rbuf *b, rnums *r)
{
    size_t n = in->n, k = in->k;
    int M = in->M, tab_cw = !in->l2 && in->classwise;
    double sce = 0, ace_cw = 0;
    for (size_t c = 0; c < k; c++) {
        for (size_t i = 0; i < n; i++) {
            b->v[i] = cx_p(in, i, c);
            b->acc[i] = cx_label(in, i) == (int32_t)c ? 1.0 : 0.0;
        }
        double u, a;
        if (ce(b->v, b->acc, n, b->e, M, b->bin, &u, NULL, tab_cw && !in->mass ? o : NULL)) return -1;
        for (size_t i = 0; i < n; i++) b->cbin[i * k + c] = b->bin[i];
        adaptive_edges(b->v, n, M, b->ea, b->scratch);
        if (ce(b->v, b->acc, n, b->ea, M, NULL, &a, NULL, tab_cw && in->mass ? o : NULL)) return -1;
        sce += u;
        ace_cw += a;
    }
    r->sce = sce / (double)k;
    r->ace_cw = ace_cw / (double)k;
    if (!in->l2) cx_table_finish(o, CX_EMPTY_ZERO);   /* bin_acc / bin_conf start at 0 */
    o->m[CS_CM_SCE] = r->sce;
    if (in->classwise && !in->mass)
        for (size_t i = 0; i < n; i++)
            for (size_t c = 0; c < k; c++) {
                double pv = cx_p(in, i, c);
                int cb = cs_ubin(pv, M), lb = b->cbin[i * k + c];
                if (lb != cb)
                    cx_move(o, i, in, (int)c, pv, cb, lb, pv == 0.0 ? CS_RULE_ZERO_NO_BIN : CS_RULE_EDGE_ARITH);
            }
    return 0;
}

/* ECE and MCE as the settings ask, or why robustcal has none. */
static void robustcal_numbers(const cx_in *in, cs_compat_lib_result *o, const rnums *r)
{
    if (in->l2) {
        cx_note_settings(o, CS_CM_ECE, "robustcal has no L2 calibration error");
        cx_note_settings(o, CS_CM_MCE, "robustcal has no L2 calibration error");
    } else if (in->classwise) {
        o->m[CS_CM_ECE] = in->mass ? r->ace_cw : r->sce;
        cx_note_settings(o, CS_CM_MCE, "robustcal has no class-wise MCE");
    } else if (in->mass) {
        o->m[CS_CM_ECE] = r->ece_a;
        cx_note_settings(o, CS_CM_MCE, "robustcal has no adaptive MCE");
    } else {
        o->m[CS_CM_ECE] = r->ece_u;
        o->m[CS_CM_MCE] = r->mce_u;
    }
}

int cx_robustcal(const cx_in *in, cs_compat_lib_result *o)
{
    size_t n = in->n, k = in->k;
    int M = in->M;
    describe(in, o);
    rbuf b = { malloc((size_t)(M + 1) * sizeof *b.e), malloc((size_t)(M + 1) * sizeof *b.ea),
               malloc((n ? n : 1) * sizeof *b.acc), malloc((n ? n : 1) * sizeof *b.v),
               malloc((n ? n : 1) * sizeof *b.scratch), malloc((n ? n : 1) * sizeof *b.bin),
               malloc((n ? n : 1) * k * sizeof *b.cbin) };
    int rc = !b.e || !b.ea || !b.acc || !b.v || !b.scratch || !b.bin || !b.cbin ? -1 : 0;
    rnums r = { NAN, NAN, NAN, NAN, NAN };
    if (rc == 0) {
        cx_linspace_f64(b.e, M);
        rc = open_table(in, o);
    }
    if (rc == 0) rc = top1_losses(in, o, &b, &r);
    if (rc == 0) rc = classwise_losses(in, o, &b, &r);
    double rt, rg;
    if (rc == 0 && (gece(in, b.e, 0, &rt) || gece(in, b.e, 1, &rg))) rc = -1;
    if (rc == 0) {
        o->m[CS_CM_RECE_G] = rt;
        o->m[CS_CM_RECE_G_GAUSS] = rg;
        robustcal_numbers(in, o, &r);
    }
    free(b.e); free(b.ea); free(b.acc); free(b.v); free(b.scratch); free(b.bin); free(b.cbin);
    return rc;
}
