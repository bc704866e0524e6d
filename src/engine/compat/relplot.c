/* relplot (apple/ml-calibration): binnedECE(conf, correct, nbins=M).
 *
 * Transcribed from src/relplot/metrics.py (commit 34cdad3):
 *  - `binning(f, y, bin_size, shift=0)` (lines 18-25): `bi = ((f + shift) / bin_size)
 *    .astype(int)` (truncation of f / (1/M), its own arithmetic: the edges are never formed),
 *    `r = f - y`, `bins_cnt = int((shift + 1) / bin_size) + 1` (one more than M, so f = 1.0 has
 *    a bin of its own), `np.add.at(bins, bi, r)`.
 *  - `binnedECE(f, y, nbins)` (lines 96-98): `np.abs(bins).sum() / len(f)`.
 *  - `multiclass_logits_to_confidences(..., probs=True)`: f = max prob, y = (argmax == label).
 * Only an ECE exists; ACE, MCE, equal-mass and class-wise variants do not.
 * smECE / smECE_sigma (metrics.py): relplot_smece.c, on the same (f, y); on --lens class:C
 * f = p[C], y = (label == C), the binary use relplot documents. */
#include "engine/compat/cx.h"
#include "engine/metrics/smece.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Why relplot's smECE is above the definition's, in o->smece_note, with calscope's exact number
 * beside it (at --smece-sigma when given, else at its own sigma*). relplot's grid
 * (relplot_smece.c) mirrors every node but the two end ones, so a value within one grid step
 * (1/(E - 1)) of 0 or 1 keeps only part of its kernel inside [0, 1] (exactly 0 or 1: half), and
 * smooth_ece divides by the sum of that density — the lost mass counts those samples as
 * fractions of one. tests/oracles/relplot_gap.py applies the deviations to the definition one at a time:
 * the grid alone moves the 4th digit; the end nodes take breast_cancer_gnb (top-1) from 0.0557
 * to 0.0434 divided by 0.5385 = 0.0806; relplot's mesh sums give its 0.0803, to 1e-15; with the
 * end nodes mirrored the same sums give 0.0556. relplot's bandwidth search then stops at its own
 * larger number (sigma 0.081, not 0.0565). */
static int smece_gap_note(const cx_in *in, const double *y, cs_compat_lib_result *o)
{
    double sigma = NAN;
    double exact = in->smece_sigma > 0 ? cs_smece_at(in->conf, y, in->n, in->smece_sigma)
                                       : cs_smece_auto(in->conf, y, in->n, &sigma);
    if (isnan(exact)) return -1;
    long E = (long)fmax(2000.0, nearbyint(20.0 / o->smece_sigma)) / 2 + 1; /* kernels.py apply */
    size_t near = 0, at = 0;
    for (size_t i = 0; i < in->n; i++) {
        double x = in->conf[i] * (double)(E - 1);
        if (x < 1.0 || x > (double)(E - 2)) near++;   /* some of its weight on an end node */
        if (in->conf[i] == 0.0 || in->conf[i] == 1.0) at++;
    }
    char at_sigma[48] = "";
    if (!(in->smece_sigma > 0)) snprintf(at_sigma, sizeof at_sigma, " (sigma* %.6f)", sigma);
    snprintf(o->smece_note, sizeof o->smece_note,
             "calscope's %.6f%s is the definition: relplot's grid does not mirror its end nodes, so %zu of %zu values within 1/%ld of 0 or 1 (%zu exactly) keep only part of their kernel, and its normaliser counts them as fractions of a sample",
             exact, at_sigma, near, in->n, E - 1, at);
    return 0;
}

int cx_relplot(const cx_in *in, cs_compat_lib_result *o)
{
    int M = in->M;
    size_t n = in->n;
    snprintf(o->call, sizeof o->call, "relplot.binnedECE(conf, correct, nbins=%d)", M);
    snprintf(o->semantics, sizeof o->semantics,
             "top-1 confidence; bin int(f / (1/M)) so [lo,hi) by its own arithmetic, 1.0 in an extra bin; |sum of residuals| per bin / N");
    cx_note(o, CS_CM_ACE, "relplot has no ACE");
    cx_note(o, CS_CM_MCE, "relplot has no MCE");
    cx_note(o, CS_CM_RMS, "relplot has no RMS calibration error");
    cx_note(o, CS_CM_AECE, "relplot has no equal-mass ECE");
    cx_note(o, CS_CM_SCE, "relplot has no class-wise ECE");
    cx_note(o, CS_CM_RECE_G, "relplot has no RECE-G (its smooth ECE is another metric)");
    cx_note(o, CS_CM_RECE_G_GAUSS, "relplot has no RECE-G");
    if (!in->classwise) {
        double *y = malloc((n ? n : 1) * sizeof *y);
        if (!y) return -1;
        for (size_t i = 0; i < n; i++) y[i] = in->correct[i] ? 1.0 : 0.0;
        o->smece = cs_smece_relplot(in->conf, y, n, in->smece_sigma, &o->smece_sigma);
        if (isnan(o->smece) && n) {
            free(y);
            return -1;
        }
        int rc = n ? smece_gap_note(in, y, o) : 0;
        free(y);
        if (rc) return -1;
    } else {
        snprintf(o->smece_note, sizeof o->smece_note, "relplot's smECE is top-1 or one class (--lens class:C)");
    }
    if (in->classwise || in->mass || in->l2) {
        cx_note_settings(o, CS_CM_ECE, "relplot's binnedECE is top-1, uniform, L1 only");
        cx_table_none(o, "relplot's binnedECE is top-1, uniform, L1 only: the bins are calscope's");
        return 0;
    }
    double bin_size = 1.0 / (double)M;
    long cnt = (long)((0.0 + 1.0) / bin_size) + 1;
    double *bins = calloc((size_t)cnt, sizeof *bins);
    /* the table: members and sums of f and y per bin (relplot itself keeps only sum(f - y)) */
    double *tc = calloc((size_t)cnt, sizeof *tc), *tf = calloc((size_t)cnt, sizeof *tf),
           *ty = calloc((size_t)cnt, sizeof *ty);
    if (!bins || !tc || !tf || !ty ||
        cx_table_new(o, (size_t)cnt, 0, "relplot's bins int(f / (1/M)) of the top-1 confidence: [lo,hi) by its own arithmetic, the extra bin M holds 1.0; relplot sums f - y per bin, so an empty bin has gap 0 and no conf / acc")) {
        free(bins); free(tc); free(tf); free(ty);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        double f = in->conf[i];
        long bi = (long)((f + 0.0) / bin_size);
        if (bi >= cnt) bi = cnt - 1; /* cannot happen for f <= 1 (division is monotonic) */
        bins[bi] += f - (in->correct[i] ? 1.0 : 0.0);
        tc[bi] += 1.0;
        tf[bi] += f;
        ty[bi] += in->correct[i] ? 1.0 : 0.0;
        int cb = cs_ubin(f, M);
        if ((int)bi != cb) {
            cs_compat_rule r = f == 1.0 ? CS_RULE_PHANTOM_ONE
                             : cx_left_closed_bin(f, M) == (int)bi ? CS_RULE_LEFT_CLOSED : CS_RULE_EDGE_ARITH;
            cx_move(o, i, in, -1, f, cb, (int)bi, r);
        }
    }
    double s = 0;
    for (long b = 0; b < cnt; b++) {
        s += fabs(bins[b]);
        /* bin b holds the f with int(f / bin_size) == b; the last one (b = M) only 1.0 */
        double lo = b < M ? (double)b * bin_size : 1.0, hi = b < M ? (double)(b + 1) * bin_size : 1.0;
        if (hi > 1.0) hi = 1.0;
        cx_table_add(o, (size_t)b, lo, hi, tc[b], tf[b], ty[b]);
    }
    cx_table_finish(o, CX_EMPTY_GAP0);
    /* the gap relplot weighs: |sum(f - y)| / count, the same number up to rounding */
    for (long b = 0; b < cnt; b++)
        if (o->bins[b].count) o->bins[b].gap = fabs(bins[b]) / (double)o->bins[b].count;
    free(bins); free(tc); free(tf); free(ty);
    o->m[CS_CM_ECE] = s / (double)n;
    return 0;
}
