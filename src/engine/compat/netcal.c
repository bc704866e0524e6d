/* netcal 1.3 (EFS-OpenSource/calibration-framework): ECE / ACE / MCE (bins=M).measure(P, y).
 *
 * Transcribed from netcal/metrics/Miscalibration.py (commit 69f24a5):
 *  - `_prepare_input` (chars ~18300-19400 of the file): `X = np.clip(X, eps, 1 - eps)` with eps =
 *    np.finfo(float).eps; then "on detection mode or binary classification": `if self.detection
 *    or len(np.unique(y)) <= 2: matched = np.array(y)` and X is left as given; otherwise
 *    `matched = np.argmax(X, axis=1) == y; X = np.max(X, axis=1, keepdims=True)` (top-1 of the
 *    clipped values). So when the labels take at most two values netcal measures X against the
 *    label values themselves: with a two-class file the working call is
 *    `measure(P[:, 1], y)` (positive-class calibration of column 1); with K >= 3 columns and
 *    two label values `measure(P, y)` raises ValueError in np.histogramdd ("The dimension of
 *    bins must be equal to the dimension of the sample x"), which we report instead of a number.
 *  - `_prepare_bins`: `np.linspace(0.0, 1.0, bins + 1)`; with equal_intervals=False
 *    `np.quantile(batch_X[:, dim], q=b)` with `quantile[0] = 0.; quantile[-1] = 1.`.
 *  - `binning`: `np.histogramdd` and `scipy.stats.binned_statistic_dd(..., 'mean')`: bins are
 *    [lo, hi) (np.digitize) with the last one closed; scipy (stats/_binned_statistic.py
 *    `_bin_numbers`) raises "The smallest edge difference is numerically 0." when two edges are
 *    equal, which happens for equal-mass edges from tied confidences.
 *  - `process`: deviation = |acc - conf| with empty bins 0 (sample_threshold = 1);
 *    ece = sum(deviation * n_b / N); ace = sum(deviation) / count_nonzero(n_b);
 *    mce = max(deviation) over all bins. */
#include "engine/compat/cx.h"
#include "engine/sort/sort.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* np.digitize(x, edges) - 1 for increasing edges: (number of edges <= x) - 1; the value equal
 * to the last edge goes to the last bin (scipy's on_edge shift; never reached after clipping). */
static int digitize_bin(const double *e, int M, double x)
{
    int lo = 0, hi = M + 1;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (e[mid] <= x) lo = mid + 1;
        else hi = mid;
    }
    int b = lo - 1;
    if (b >= M) b = M - 1;
    if (b < 0) b = 0;
    return b;
}

/* np.quantile(sorted values, q) with the default 'linear' method (numpy 1.24
 * lib/function_base.py: virtual index (n - 1) * q, _get_indexes, _get_gamma, _lerp). */
static double np_quantile(const double *s, size_t n, double q)
{
    double v = (double)(n - 1) * q;
    double prev = floor(v);
    size_t ip, in;
    if (v >= (double)(n - 1)) { ip = in = n - 1; prev = -1.0; }
    else if (v < 0) { ip = in = 0; prev = 0; }
    else { ip = (size_t)prev; in = ip + 1; }
    double g = v - prev;
    double a = s[ip], b = s[in];
    double d = b - a;
    double r = a + d * g;
    if (g >= 0.5) r = b - d * (1.0 - g);
    return r;
}

typedef struct nc_stats { double ece, ace, mce; } nc_stats;

/* tab: the library result whose bin table (allocated, M bins) receives this binning, or NULL. */
static int measure(const double *x, const double *matched, size_t n, const double *e, int M,
                   int *bin_out, nc_stats *st, cs_compat_lib_result *tab)
{
    double *cnt = calloc((size_t)M, sizeof *cnt), *sx = calloc((size_t)M, sizeof *sx),
           *sm = calloc((size_t)M, sizeof *sm);
    if (!cnt || !sx || !sm) { free(cnt); free(sx); free(sm); return -1; }
    for (size_t i = 0; i < n; i++) {
        int b = digitize_bin(e, M, x[i]);
        if (bin_out) bin_out[i] = b;
        cnt[b] += 1.0;
        sx[b] += x[i];
        sm[b] += matched[i];
    }
    double ece = 0, dsum = 0, mce = 0;
    int nonempty = 0;
    for (int b = 0; b < M; b++) {
        double dev = cnt[b] > 0 ? fabs(sm[b] / cnt[b] - sx[b] / cnt[b]) : 0.0;
        ece += dev * (cnt[b] / (double)n);
        dsum += dev;
        if (dev > mce) mce = dev;
        if (cnt[b] > 0) nonempty++;
        if (tab) cx_table_add(tab, (size_t)b, e[b], e[b + 1], cnt[b], sx[b], sm[b]);
    }
    /* binned_statistic_dd means, NaN for empty bins, then np.nan_to_num: 0 */
    if (tab) cx_table_finish(tab, CX_EMPTY_ZERO);
    st->ece = ece;
    st->ace = nonempty ? dsum / nonempty : NAN;
    st->mce = mce;
    free(cnt);
    free(sx);
    free(sm);
    return 0;
}

static cs_compat_rule mass_rule(const cx_in *in, size_t i, int lib_bin)
{
    (void)in; (void)i; (void)lib_bin;
    return CS_RULE_MASS_EDGES;
}

/* 1 when the measured samples' labels take at most 2 values: netcal then reads y as binary
 * outcomes. */
static int labels_binary(const cx_in *in)
{
    size_t n = in->n;
    int32_t l0 = n ? cx_label(in, 0) : 0, l1 = l0;
    int distinct = n ? 1 : 0;
    for (size_t i = 1; i < n && distinct < 3; i++) {
        int32_t l = cx_label(in, i);
        if (l == l0 || (distinct == 2 && l == l1)) continue;
        if (distinct == 1) { l1 = l; distinct = 2; }
        else distinct = 3;
    }
    return distinct <= 2;
}

/* Binary labels beside more than 2 columns: netcal raises; every metric says why. */
static void binary_with_columns(const cx_in *in, cs_compat_lib_result *o)
{
    o->applicable = 0;
    snprintf(o->call, sizeof o->call, "ECE(bins=%d).measure(P, y)", in->M);
    snprintf(o->semantics, sizeof o->semantics,
             "fails: the labels take at most 2 values, so netcal treats y as binary outcomes and keeps all %zu columns of P", in->k);
    for (int m = 0; m < CS_CM_COUNT; m++)
        if (!o->notes[m][0])
            cx_note(o, m, "netcal raises ValueError (np.histogramdd: the dimension of bins must equal the dimension of the sample): labels take <= 2 values with %zu columns", in->k);
}

/* The call a user would write and what it computes. */
static void describe_call(cs_compat_lib_result *o, int binary, int M)
{
    if (binary) {
        snprintf(o->call, sizeof o->call, "ECE(bins=%d).measure(P[:, 1], y)  (measure(P, y) raises for 0/1 labels)", M);
        snprintf(o->semantics, sizeof o->semantics,
                 "positive-class calibration of p[1] against the label value (labels take <= 2 values), clipped to [eps, 1-eps]; [lo,hi) bins, last closed");
    } else {
        snprintf(o->call, sizeof o->call, "ECE(bins=%d).measure(P, y); ACE(bins=%d); MCE(bins=%d)", M, M, M);
        snprintf(o->semantics, sizeof o->semantics,
                 "top-1 of P clipped to [eps, 1-eps]; [lo,hi) bins on np.linspace edges i*(1/M), last closed; ACE over non-empty bins, MCE over all bins");
    }
}

/* Each sample's value x (p[1], or the top-1 of P, clipped to [eps, 1-eps]) and outcome mt. */
static void netcal_values(const cx_in *in, int binary, double *x, double *mt)
{
    const double eps = DBL_EPSILON;
    for (size_t i = 0; i < in->n; i++) {
        if (binary) {
            double v = cx_p(in, i, 1);
            x[i] = v < eps ? eps : v > 1.0 - eps ? 1.0 - eps : v;
            mt[i] = (double)cx_label(in, i);
        } else {
            size_t best = 0;
            double bv = -1;
            for (size_t j = 0; j < in->k; j++) {
                double v = cx_p(in, i, j);
                v = v < eps ? eps : v > 1.0 - eps ? 1.0 - eps : v;
                if (v > bv) { bv = v; best = j; }
            }
            x[i] = bv;
            mt[i] = (int32_t)best == cx_label(in, i) ? 1.0 : 0.0;
        }
    }
}

/* The M uniform bins on np.linspace edges (e, M + 1 entries), their table and the samples a
 * bin apart from calscope's. 0, or -1 out of memory. */
static int uniform_bins(const cx_in *in, cs_compat_lib_result *o, int binary, const double *x,
                        const double *mt, double *e, int *bin, const char *what, nc_stats *u)
{
    int M = in->M;
    cx_linspace_f64(e, M);
    int utab = !in->classwise && !in->mass;
    if (utab && cx_table_new(o, (size_t)M, 0, "netcal's M bins of %s: [lo,hi) on np.linspace edges, the last closed; empty bins conf = acc = 0", what))
        return -1;
    if (in->classwise) cx_table_none(o, "netcal has no class-wise calibration error: the bins are calscope's");
    if (measure(x, mt, in->n, e, M, bin, u, utab ? o : NULL)) return -1;
    if (!in->classwise && !in->mass) {
        for (size_t i = 0; i < in->n; i++) {
            double v = binary ? cx_p(in, i, 1) : in->conf[i];
            int cb = cs_ubin(v, M);
            if (bin[i] != cb)
                cx_move(o, i, in, binary ? 1 : -1, v, cb, bin[i],
                        cx_left_closed_bin(v, M) == bin[i] ? CS_RULE_LEFT_CLOSED : CS_RULE_EDGE_ARITH);
        }
    }
    return 0;
}

/* np.quantile edges of x (sorted: scratch of n), outer edges 0 and 1, into e; *dup when two
 * edges coincide. 0, or -1 out of memory. */
static int mass_edges(const double *x, size_t n, int M, double *sorted, double *e, int *dup)
{
    memcpy(sorted, x, n * sizeof *x);
    cs_sort_doubles(sorted, n);
    double *q = malloc((size_t)(M + 1) * sizeof *q);
    if (!q) return -1;
    cx_linspace_f64(q, M);
    for (int j = 0; j <= M; j++) e[j] = np_quantile(sorted, n, q[j]);
    free(q);
    e[0] = 0.0;
    e[M] = 1.0;
    *dup = 0;
    for (int j = 0; j < M; j++) if (!(e[j + 1] - e[j] > 0)) *dup = 1;
    return 0;
}

/* The M equal-mass bins (edges in e, *dup from mass_edges): AECE, their table and moves, or
 * netcal's refusal of duplicate edges. 0, or -1 out of memory. */
static int mass_bins(const cx_in *in, cs_compat_lib_result *o, int binary, const double *x,
                     const double *mt, const double *e, int dup, int *bin, const char *what, nc_stats *m)
{
    int M = in->M;
    int mtab = in->mass && !in->classwise;
    if (dup) {
        cx_note(o, CS_CM_AECE, "netcal raises ValueError: duplicate equal-mass edges from tied confidences (scipy: the smallest edge difference is numerically 0)");
        if (mtab) cx_table_none(o, "netcal raises ValueError on duplicate equal-mass edges: the bins are calscope's");
        return 0;
    }
    if (mtab && cx_table_new(o, (size_t)M, 0, "netcal's M equal-mass bins of %s: [lo,hi) on np.quantile edges with the outer edges 0 and 1, the last closed; empty bins conf = acc = 0", what))
        return -1;
    if (measure(x, mt, in->n, e, M, bin, m, mtab ? o : NULL)) return -1;
    o->m[CS_CM_AECE] = m->ece;
    if (in->mass && !in->classwise && !binary && cx_mass_moves(o, in, bin, M, mass_rule)) return -1;
    return 0;
}

/* ECE, ACE, MCE as the settings ask: the equal-mass or uniform bins' (L1 only), or a note. */
static void netcal_numbers(const cx_in *in, cs_compat_lib_result *o, const nc_stats *u, const nc_stats *m,
                           int dup)
{
    if (in->classwise) {
        for (int k2 = CS_CM_ECE; k2 <= CS_CM_MCE; k2++) cx_note_settings(o, k2, "netcal has no class-wise calibration error");
    } else if (in->mass) {
        o->m[CS_CM_ECE] = m->ece;
        o->m[CS_CM_ACE] = m->ace;
        o->m[CS_CM_MCE] = m->mce;
        if (dup)
            for (int k2 = CS_CM_ECE; k2 <= CS_CM_MCE; k2++) cx_note(o, k2, "%s", o->notes[CS_CM_AECE]);
    } else {
        o->m[CS_CM_ECE] = u->ece;
        o->m[CS_CM_ACE] = u->ace;
        o->m[CS_CM_MCE] = u->mce;
    }
    if (in->l2 && !in->classwise && !(in->mass && dup)) {
        /* equal-mass bins too: netcal's ECE is L1 only */
        o->m[CS_CM_ECE] = NAN;
        cx_note_settings(o, CS_CM_ECE, "netcal has no L2 calibration error");
    }
}

int cx_netcal(const cx_in *in, cs_compat_lib_result *o)
{
    size_t n = in->n;
    int M = in->M;
    cx_note(o, CS_CM_SCE, "netcal has no class-wise ECE");
    cx_note(o, CS_CM_RMS, "netcal has no RMS calibration error");
    cx_note(o, CS_CM_RECE_G, "netcal has no RECE-G");
    cx_note(o, CS_CM_RECE_G_GAUSS, "netcal has no RECE-G");
    int binary = labels_binary(in);
    if (binary && in->k != 2) {
        binary_with_columns(in, o);
        return 0;
    }
    describe_call(o, binary, M);
    double *x = malloc((n ? n : 1) * sizeof *x), *mt = malloc((n ? n : 1) * sizeof *mt);
    double *e = malloc((size_t)(M + 1) * sizeof *e);
    int *bin = malloc((n ? n : 1) * sizeof *bin);
    double *sorted = malloc((n ? n : 1) * sizeof *sorted);
    int rc = !x || !mt || !e || !bin || !sorted ? -1 : 0;
    const char *what = binary ? "p[1] (labels take <= 2 values), clipped to [eps, 1-eps]"
                              : "the top-1 of P clipped to [eps, 1-eps]";
    nc_stats u, m = { NAN, NAN, NAN };
    int dup = 0;
    if (rc == 0) {
        netcal_values(in, binary, x, mt);
        rc = uniform_bins(in, o, binary, x, mt, e, bin, what, &u);
    }
    if (rc == 0) rc = mass_edges(x, n, M, sorted, e, &dup);
    if (rc == 0) rc = mass_bins(in, o, binary, x, mt, e, dup, bin, what, &m);
    if (rc == 0) netcal_numbers(in, o, &u, &m, dup);
    free(x); free(mt); free(e); free(bin); free(sorted);
    return rc;
}
