/* Compat mode: hand-made inputs that each isolate one library rule, with the number each
 * library gives worked by hand from its rule (arithmetic in the comments). Float32 libraries
 * (torchmetrics, MONAI) are compared to 1e-6, the others to 1e-12. */
#include "support/cs_test.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calscope/compat.h"
#include "engine/compat/cx.h"

static void run(const cs_dataset *d, int bins, cs_lens_kind lens, cs_binning binning, cs_compat_report *r)
{
    cs_settings s;
    cs_settings_default(&s);
    s.bins = bins;
    s.lens = lens;
    s.binning = binning;
    cs_error err;
    cs_error_clear(&err);
    assert_int_equal(cs_compat_run(d, &s, CS_COMPAT_ALL_MASK, r, &err), CS_OK);
}

#define LIB(r, l) (&(r).lib[CS_COMPAT_##l])

/* One bin of a library's table: count exactly, conf / acc / gap to tol (NAN = must be NAN). */
static void check_bin(const cs_compat_lib_result *o, size_t b, size_t count, double conf, double acc,
                      double gap, double tol)
{
    assert_non_null(o->bins);
    assert_true(b < o->n_bins);
    const cs_bin *t = &o->bins[b];
    assert_int_equal(t->count, count);
    const double got[3] = { t->conf, t->acc, t->gap }, want[3] = { conf, acc, gap };
    for (int i = 0; i < 3; i++) {
        if (isnan(want[i])) assert_true(isnan(got[i]));
        else assert_double_near(got[i], want[i], tol);
    }
}

/* Inner edge, M = 4 (edges .25 .5 .75 exact in float32 and float64, so only the edge side
 * matters). Top-1 (conf, correct): r0 (.5,1) r1 (.5,1) r2 (.9,1) r3 (.7,0) r4 (.4,1).
 * calscope (lo,hi]: bin1 {.5,.5,.4}: conf 1.4/3, acc 1 -> gap 1.6/3, weight 3/5 -> .32;
 *   bin2 {.7}: gap .7 -> .14; bin3 {.9}: .1 -> .02; ECE = .48, MCE = .7,
 *   ACE = (1.6/3 + .7 + .1)/3 = .44444...
 * [lo,hi) (torchmetrics, netcal, relplot int(f/.25)): bin1 {.4}: gap .6 -> .12;
 *   bin2 {.5,.5,.7}: conf 1.7/3, acc 2/3 -> .1 * 3/5 = .06; bin3 {.9}: .02; ECE = .20;
 *   MCE = .6; netcal ACE = (.6 + .1 + .1)/3 = .26667. verified (lo,hi] on i/M,
 *   robustcal (lo,hi] on i*(1/4), MONAI (lo,hi] on float32 edges (.5 <= .5+2^-24): .48.
 * Moved: rows 0 and 1 for the [lo,hi) libraries, none for the others. */
static void test_inner_edge(void **state)
{
    (void)state;
    static const double p[] = { .5, .3, .2,  .25, .5, .25,  .1, .9, 0,  .2, .1, .7,  .3, .3, .4 };
    static const int32_t y[] = { 0, 1, 1, 0, 2 };
    cs_dataset *d = cs_test_dataset(5, 3, p, y);
    cs_compat_report r;
    run(d, 4, CS_LENS_TOP1, CS_BIN_UNIFORM, &r);
    assert_double_near(r.calscope[CS_CM_ECE], .48, 1e-12);
    assert_double_near(LIB(r, TORCHMETRICS)->m[CS_CM_ECE], .20, 1e-6);
    assert_double_near(LIB(r, TORCHMETRICS)->m[CS_CM_MCE], .6, 1e-6);
    assert_double_near(LIB(r, NETCAL)->m[CS_CM_ECE], .20, 1e-12);
    assert_double_near(LIB(r, NETCAL)->m[CS_CM_ACE], .8 / 3, 1e-12);
    assert_double_near(LIB(r, NETCAL)->m[CS_CM_MCE], .6, 1e-12);
    assert_double_near(LIB(r, RELPLOT)->m[CS_CM_ECE], .20, 1e-12);
    assert_double_near(LIB(r, VERIFIED)->m[CS_CM_ECE], .48, 1e-12);
    assert_double_near(LIB(r, ROBUSTCAL)->m[CS_CM_ECE], .48, 1e-12);
    assert_double_near(LIB(r, ROBUSTCAL)->m[CS_CM_MCE], .7, 1e-12);
    assert_double_near(LIB(r, MONAI)->m[CS_CM_ECE], .48, 1e-6);
    assert_double_near(LIB(r, MONAI)->m[CS_CM_ACE], (1.6 / 3 + .7 + .1) / 3, 1e-6);
    assert_true(isnan(LIB(r, TORCHMETRICS_BINARY)->m[CS_CM_ECE])); /* K = 3 */
    assert_int_equal(LIB(r, TORCHMETRICS)->moved, 2);
    assert_int_equal(LIB(r, TORCHMETRICS)->examples[0].row, 0);
    assert_int_equal(LIB(r, TORCHMETRICS)->examples[0].cs_bin, 1);
    assert_int_equal(LIB(r, TORCHMETRICS)->examples[0].lib_bin, 2);
    assert_int_equal(LIB(r, TORCHMETRICS)->examples[0].rule, CS_RULE_LEFT_CLOSED);
    assert_int_equal(LIB(r, NETCAL)->moved, 2);
    assert_int_equal(LIB(r, RELPLOT)->moved, 2);
    assert_int_equal(LIB(r, VERIFIED)->moved, 0);
    assert_int_equal(LIB(r, ROBUSTCAL)->moved, 0);
    assert_int_equal(LIB(r, MONAI)->moved, 0);
    assert_int_equal(r.lib[CS_COMPAT_TORCHMETRICS].moved_flag[0], 1);
    assert_int_equal(r.lib[CS_COMPAT_TORCHMETRICS].moved_flag[2], 0);
    /* bin tables. [lo,hi): bin0 {} bin1 {.4} bin2 {.5 .5 .7} bin3 {.9}, torchmetrics and relplot
     * also the extra bin 4 {} at [1, 1]. torchmetrics fills empty bins with 0, relplot has gap 0
     * and no conf / acc, netcal 0 (nan_to_num). (lo,hi]: bin0 {} bin1 {.5 .5 .4} bin2 {.7}
     * bin3 {.9}; empty: verified gap 0 (no conf / acc), robustcal 0, MONAI NaN. Counts sum to 5. */
    const cs_compat_lib_result *tm = LIB(r, TORCHMETRICS), *rp = LIB(r, RELPLOT), *nc = LIB(r, NETCAL);
    assert_int_equal(tm->n_bins, 5);
    assert_int_equal(rp->n_bins, 5);
    assert_int_equal(nc->n_bins, 4);
    check_bin(tm, 0, 0, 0, 0, 0, 0);
    check_bin(tm, 1, 1, .4, 1, .6, 1e-6);
    check_bin(tm, 2, 3, 1.7 / 3, 2.0 / 3, .1, 1e-6);
    check_bin(tm, 3, 1, .9, 1, .1, 1e-6);
    check_bin(tm, 4, 0, 0, 0, 0, 0);
    assert_true(tm->bins[4].lo == 1.0 && tm->bins[4].hi == 1.0);
    assert_true(tm->bins[1].lo == .25 && tm->bins[1].hi == .5);
    check_bin(rp, 0, 0, NAN, NAN, 0, 0);
    check_bin(rp, 2, 3, 1.7 / 3, 2.0 / 3, .1, 1e-12);
    check_bin(rp, 4, 0, NAN, NAN, 0, 0);
    check_bin(nc, 0, 0, 0, 0, 0, 0);
    check_bin(nc, 2, 3, 1.7 / 3, 2.0 / 3, .1, 1e-12);
    check_bin(LIB(r, VERIFIED), 0, 0, NAN, NAN, 0, 0);
    check_bin(LIB(r, VERIFIED), 1, 3, 1.4 / 3, 1, 1.6 / 3, 1e-12);
    check_bin(LIB(r, VERIFIED), 2, 1, .7, 0, .7, 1e-12);
    check_bin(LIB(r, ROBUSTCAL), 0, 0, 0, 0, 0, 0);
    check_bin(LIB(r, ROBUSTCAL), 1, 3, 1.4 / 3, 1, 1.6 / 3, 1e-12);
    check_bin(LIB(r, MONAI), 0, 0, NAN, NAN, NAN, 0);
    check_bin(LIB(r, MONAI), 1, 3, 1.4 / 3, 1, 1.6 / 3, 1e-6);
    check_bin(LIB(r, MONAI), 3, 1, .9, 1, .1, 1e-6);
    assert_true(LIB(r, MONAI)->bins[3].hi == 1.0 + 0x1p-23);   /* float32 1 + eps32 */
    for (int l = 0; l < CS_COMPAT_COUNT; l++) {
        if (l == CS_COMPAT_TORCHMETRICS_BINARY) {
            assert_null(r.lib[l].bins);   /* K = 3: cannot measure */
            assert_true(r.lib[l].bins_note[0] != 0);
            continue;
        }
        assert_int_equal(r.lib[l].bins_counted, 5);
        assert_int_equal(r.lib[l].bins_pooled, 0);
    }
    cs_compat_report_free(&r);
    cs_dataset_free(d);
}

/* Exactly 1.0, M = 4: r0 [1 0 0] y1 (conf 1, wrong), r1 [.8 .1 .1] y0 (right),
 * r2 [.1 .2 .7] y2 (right). calscope: bin3 {1(0), .8(1)}: conf .9 acc .5 -> .4 * 2/3;
 *   bin2 {.7}: .3 * 1/3; ECE = (.8 + .3)/3 = .36667.
 * torchmetrics / relplot: 1.0 alone in the extra bin 4: gap 1 -> 1/3; bin3 {.8 right}:
 *   .2/3; bin2 .3/3; ECE = 1.5/3 = .5; torchmetrics MCE = 1.
 * netcal clips 1 to 1-eps (bin 3): .36667 up to eps; verified/robustcal/MONAI: .36667. */
static void test_exactly_one(void **state)
{
    (void)state;
    static const double p[] = { 1, 0, 0,  .8, .1, .1,  .1, .2, .7 };
    static const int32_t y[] = { 1, 0, 2 };
    cs_dataset *d = cs_test_dataset(3, 3, p, y);
    cs_compat_report r;
    run(d, 4, CS_LENS_TOP1, CS_BIN_UNIFORM, &r);
    assert_double_near(r.calscope[CS_CM_ECE], 1.1 / 3, 1e-12);
    assert_double_near(LIB(r, TORCHMETRICS)->m[CS_CM_ECE], .5, 1e-6);
    assert_double_near(LIB(r, TORCHMETRICS)->m[CS_CM_MCE], 1, 1e-6);
    assert_double_near(LIB(r, RELPLOT)->m[CS_CM_ECE], .5, 1e-12);
    assert_double_near(LIB(r, NETCAL)->m[CS_CM_ECE], 1.1 / 3, 1e-12);
    assert_double_near(LIB(r, VERIFIED)->m[CS_CM_ECE], 1.1 / 3, 1e-12);
    assert_double_near(LIB(r, ROBUSTCAL)->m[CS_CM_ECE], 1.1 / 3, 1e-12);
    assert_double_near(LIB(r, MONAI)->m[CS_CM_ECE], 1.1 / 3, 1e-6);
    assert_int_equal(LIB(r, TORCHMETRICS)->moved, 1);
    assert_int_equal(LIB(r, TORCHMETRICS)->examples[0].lib_bin, 4);
    assert_int_equal(LIB(r, TORCHMETRICS)->examples[0].rule, CS_RULE_PHANTOM_ONE);
    assert_int_equal(LIB(r, RELPLOT)->examples[0].rule, CS_RULE_PHANTOM_ONE);
    assert_int_equal(LIB(r, NETCAL)->moved, 0);
    /* the extra bin [1, 1] holds the wrong 1.0 alone: gap 1; bin 3 keeps .8 (right): gap .2 */
    check_bin(LIB(r, TORCHMETRICS), 4, 1, 1, 0, 1, 1e-6);
    check_bin(LIB(r, TORCHMETRICS), 3, 1, .8, 1, .2, 1e-6);
    check_bin(LIB(r, RELPLOT), 4, 1, 1, 0, 1, 1e-12);
    check_bin(LIB(r, VERIFIED), 3, 2, .9, .5, .4, 1e-12);
    cs_compat_report_free(&r);
    cs_dataset_free(d);
}

/* Exactly 0 in a class-wise column, M = 4, K = 2: r0 [1 0] y0, r1 [0 1] y0, r2 [.5 .5] y1.
 * calscope class 0 (values 1, 0, .5; targets 1, 1, 0): bin3 {1,t1}: 0; bin0 {0,t1}: 1 * 1/3;
 *   bin1 {.5,t0}: .5 * 1/3 -> .5. class 1 (0, 1, .5; targets 0, 0, 1): bin0 0; bin3 1/3;
 *   bin1 .5/3 -> .5. SCE = .5 (verified marginal and MONAI the same).
 * robustcal SCELoss: 0 is in no (lo,hi] bin, weights stay /N: class 0 = .5/3 = 1/6,
 *   class 1 = 1/3 + 1/6 = .5 -> (1/6 + 1/2)/2 = 1/3. Moved: r1 (class 0), r0 (class 1). */
static void test_zero_classwise(void **state)
{
    (void)state;
    static const double p[] = { 1, 0,  0, 1,  .5, .5 };
    static const int32_t y[] = { 0, 0, 1 };
    cs_dataset *d = cs_test_dataset(3, 2, p, y);
    cs_compat_report r;
    run(d, 4, CS_LENS_CLASSWISE, CS_BIN_UNIFORM, &r);
    assert_double_near(r.calscope[CS_CM_ECE], .5, 1e-12);
    assert_double_near(LIB(r, ROBUSTCAL)->m[CS_CM_ECE], 1.0 / 3, 1e-12);
    assert_double_near(LIB(r, ROBUSTCAL)->m[CS_CM_SCE], 1.0 / 3, 1e-12);
    assert_double_near(LIB(r, VERIFIED)->m[CS_CM_ECE], .5, 1e-12);
    assert_double_near(LIB(r, MONAI)->m[CS_CM_ECE], .5, 1e-6);
    assert_int_equal(LIB(r, ROBUSTCAL)->moved, 2);
    assert_int_equal(LIB(r, ROBUSTCAL)->examples[0].row, 0);
    assert_int_equal(LIB(r, ROBUSTCAL)->examples[0].cls, 1);
    assert_int_equal(LIB(r, ROBUSTCAL)->examples[0].lib_bin, -1);
    assert_int_equal(LIB(r, ROBUSTCAL)->examples[0].rule, CS_RULE_ZERO_NO_BIN);
    assert_true(isnan(LIB(r, TORCHMETRICS)->m[CS_CM_ECE])); /* no class-wise error */
    /* pooled tables (bin j of both classes): robustcal drops the two zeros, so it counts 4 of
     * N*K = 6: bin1 {.5 t0, .5 t1}: gap 0; bin3 {1 t1, 1 t0}: conf 1 acc .5. MONAI and verified
     * keep the zeros in bin0 {0 t1, 0 t0}: conf 0 acc .5; bin2 is empty (MONAI NaN). */
    const cs_compat_lib_result *rc = LIB(r, ROBUSTCAL);
    assert_int_equal(rc->bins_pooled, 1);
    assert_int_equal(rc->bins_counted, 4);
    check_bin(rc, 0, 0, 0, 0, 0, 0);
    check_bin(rc, 1, 2, .5, .5, 0, 1e-12);
    check_bin(rc, 3, 2, 1, .5, .5, 1e-12);
    assert_int_equal(LIB(r, MONAI)->bins_counted, 6);
    check_bin(LIB(r, MONAI), 0, 2, 0, .5, .5, 1e-6);
    check_bin(LIB(r, MONAI), 2, 0, NAN, NAN, NAN, 0);
    assert_int_equal(LIB(r, VERIFIED)->bins_counted, 6);
    check_bin(LIB(r, VERIFIED), 0, 2, 0, .5, .5, 1e-12);
    check_bin(LIB(r, VERIFIED), 2, 0, NAN, NAN, 0, 0);
    assert_null(LIB(r, TORCHMETRICS)->bins);
    assert_non_null(strstr(LIB(r, TORCHMETRICS)->bins_note, "class-wise"));
    assert_null(LIB(r, NETCAL)->bins);
    assert_null(LIB(r, RELPLOT)->bins);
    cs_compat_report_free(&r);
    cs_dataset_free(d);
}

/* Ties at an equal-mass boundary, M = 2: top-1 r0 (.6,1) r1 (.7,0) r2 (.7,1) r3 (.9,1).
 * calscope array_split: {r0,r1} conf .65 acc .5 -> .15 * 1/2; {r2,r3} conf .8 acc 1 -> .2 *
 *   1/2; AECE = .175.
 * verified get_ece_em: midpoint (.7+.7)/2 = .7, bins (0,.7] (.7,1]: {r0,r1,r2} conf 2/3 acc
 *   2/3 -> 0; {r3} .1 * 1/4 -> .025. r2 moved (tie).
 * robustcal AdaptiveECELoss: bin_n = 2, edges .6 .7 1: r0 (the minimum) in no bin;
 *   (.6,.7] {r1,r2} conf .7 acc .5 -> .2 * 2/4 = .1; (.7,1] {r3} .025 -> .125. Moved r0
 *   (dropped) and r2 (its bin matches calscope's first group, the first of a 1-1 tie).
 * netcal quantile edges: q=.5 -> (4-1)*.5 = 1.5 between s[1] = s[2] = .7 -> .7; edges 0 .7 1:
 *   [0,.7) {r0} .4 * 1/4 = .1; [.7,1] {r1,r2,r3} conf 2.3/3 acc 2/3 -> .1 * 3/4 = .075;
 *   AECE = .175. Moved r1 (its bin is mostly calscope's second group). */
static void test_mass_ties(void **state)
{
    (void)state;
    static const double p[] = { .6, .3, .1,  .7, .2, .1,  .2, .7, .1,  .05, .05, .9 };
    static const int32_t y[] = { 0, 1, 1, 2 };
    cs_dataset *d = cs_test_dataset(4, 3, p, y);
    cs_compat_report r;
    run(d, 2, CS_LENS_TOP1, CS_BIN_MASS, &r);
    assert_double_near(r.calscope[CS_CM_ECE], .175, 1e-12);
    assert_double_near(LIB(r, VERIFIED)->m[CS_CM_ECE], .025, 1e-12);
    assert_double_near(LIB(r, ROBUSTCAL)->m[CS_CM_ECE], .125, 1e-12);
    assert_double_near(LIB(r, NETCAL)->m[CS_CM_ECE], .175, 1e-12);
    assert_true(isnan(LIB(r, TORCHMETRICS)->m[CS_CM_ECE]));
    assert_int_equal(LIB(r, VERIFIED)->moved, 1);
    assert_int_equal(LIB(r, VERIFIED)->examples[0].row, 2);
    assert_int_equal(LIB(r, VERIFIED)->examples[0].rule, CS_RULE_MASS_TIE);
    assert_int_equal(LIB(r, ROBUSTCAL)->moved, 2);
    assert_int_equal(LIB(r, ROBUSTCAL)->examples[0].row, 0);
    assert_int_equal(LIB(r, ROBUSTCAL)->examples[0].rule, CS_RULE_MASS_DROPPED);
    assert_int_equal(LIB(r, NETCAL)->moved, 1);
    assert_int_equal(LIB(r, NETCAL)->examples[0].row, 1);
    /* equal-mass tables. verified: (0,.7] {.6 .7 .7} conf = acc = 2/3; (.7,1] {.9}.
     * robustcal: (.6,.7] {.7(0) .7(1)} conf .7 acc .5; (.7,1] {.9}; the minimum .6 is in no
     * bin: 3 of 4 counted. netcal: [0,.7) {.6(1)} gap .4; [.7,1] {.7 .7 .9}. No table for the
     * uniform-only libraries. */
    const cs_compat_lib_result *v = LIB(r, VERIFIED), *rc = LIB(r, ROBUSTCAL), *nc = LIB(r, NETCAL);
    assert_int_equal(v->n_bins, 2);
    check_bin(v, 0, 3, 2.0 / 3, 2.0 / 3, 0, 1e-12);
    check_bin(v, 1, 1, .9, 1, .1, 1e-12);
    assert_true(v->bins[0].lo == 0 && v->bins[0].hi == .7 && v->bins[1].lo == .7 && v->bins[1].hi == 1);
    assert_int_equal(rc->n_bins, 2);
    assert_int_equal(rc->bins_counted, 3);
    check_bin(rc, 0, 2, .7, .5, .2, 1e-12);
    check_bin(rc, 1, 1, .9, 1, .1, 1e-12);
    assert_true(rc->bins[0].lo == .6 && rc->bins[0].hi == .7);
    check_bin(nc, 0, 1, .6, 1, .4, 1e-12);
    check_bin(nc, 1, 3, 2.3 / 3, 2.0 / 3, .1, 1e-12);
    assert_null(LIB(r, TORCHMETRICS)->bins);
    assert_null(LIB(r, RELPLOT)->bins);
    assert_null(LIB(r, MONAI)->bins);
    assert_non_null(strstr(LIB(r, MONAI)->bins_note, "uniform"));
    cs_compat_report_free(&r);
    cs_dataset_free(d);
}

/* K = 3 but the labels take two values (0, 1): netcal keeps the 3 columns and fails
 * (np.histogramdd dimension mismatch), verified's marginal mode asserts labels span 0..K-1,
 * torchmetrics-binary needs K = 2. Top-1 M = 4: (.6,1) (.7,1) (.5,0): bin1 {.5}: .5/3;
 * bin2 {.6,.7}: conf .65 acc 1 -> .35 * 2/3; ECE = .4 for verified and robustcal;
 * torchmetrics puts .5 (on an edge) with .6 and .7 in [.5,.75): |1.8 - 2|/3 = .066667. */
static void test_two_label_values(void **state)
{
    (void)state;
    static const double p[] = { .6, .3, .1,  .2, .7, .1,  .5, .4, .1 };
    static const int32_t y[] = { 0, 1, 1 };
    cs_dataset *d = cs_test_dataset(3, 3, p, y);
    cs_compat_report r;
    run(d, 4, CS_LENS_TOP1, CS_BIN_UNIFORM, &r);
    assert_int_equal(LIB(r, NETCAL)->applicable, 0);
    assert_true(isnan(LIB(r, NETCAL)->m[CS_CM_ECE]));
    assert_non_null(strstr(LIB(r, NETCAL)->notes[CS_CM_ECE], "raises ValueError"));
    assert_true(isnan(LIB(r, VERIFIED)->m[CS_CM_SCE]));
    assert_non_null(strstr(LIB(r, VERIFIED)->notes[CS_CM_SCE], "AssertionError"));
    assert_int_equal(LIB(r, TORCHMETRICS_BINARY)->applicable, 0);
    assert_double_near(LIB(r, VERIFIED)->m[CS_CM_ECE], .4, 1e-12);
    assert_double_near(LIB(r, ROBUSTCAL)->m[CS_CM_ECE], .4, 1e-12);
    assert_double_near(LIB(r, TORCHMETRICS)->m[CS_CM_ECE], .2 / 3, 1e-6);
    assert_null(LIB(r, NETCAL)->bins);            /* netcal raises: no table, and why */
    assert_non_null(strstr(LIB(r, NETCAL)->bins_note, "cannot measure"));
    cs_compat_report_free(&r);
    cs_dataset_free(d);
}

/* float32 rounding of 0.3 with M = 10, K = 4:
 * r0 [.3 .25 .25 .2] y0 right; r1 [.299999999 .2500000005 .25 .2000000005] y1 wrong (pred 0);
 * r2 [.1 .8 .05 .05] y2 wrong; r3 [.05 .05 .05 .85] y3 right.
 * calscope: bin2 {.3, .299999999}: conf .2999999995 acc .5 -> .2000000005 * 1/2; bin7 {.8
 *   wrong}: .8/4; bin8 {.85}: .15/4; ECE = .10000000025 + .2 + .0375 = .33750000025.
 * torchmetrics: torch.linspace float32 edge 3 = 0.1f*3 = 0.30000001192... = float32(0.3), and
 *   float32(.299999999) is also 0.30000001192 (it is above the midpoint .2999999970 between
 *   the float32 neighbours), so both sit on edge 3 and go to [.3,.4) (bin 3); edge 8 =
 *   fma(-0.1f, 2, 1) (torch's fused scalar formula for the upper half) rounds to float32(.8),
 *   so .8 goes to bin 8 with .85.
 *   bin3: conf .30000001 acc .5 -> .19999999 * 1/2; bin8: conf (.80000001 + .85000002)/2 acc
 *   .5 -> .32500002 * 1/2; ECE = .0999999940 + .1625000085 = .2625 (float32).
 * Moves: r0 edge side, r1 float32 (below .3 as a double), r2 edge side (.8 = 8/10). */
static void test_float32_point3(void **state)
{
    (void)state;
    static const double p[] = { .3, .25, .25, .2,  .299999999, .2500000005, .25, .2000000005,
                                .1, .8, .05, .05,  .05, .05, .05, .85 };
    static const int32_t y[] = { 0, 1, 2, 3 };
    cs_dataset *d = cs_test_dataset(4, 4, p, y);
    cs_compat_report r;
    run(d, 10, CS_LENS_TOP1, CS_BIN_UNIFORM, &r);
    assert_double_near(r.calscope[CS_CM_ECE], .33750000025, 1e-12);
    assert_double_near(LIB(r, TORCHMETRICS)->m[CS_CM_ECE], .2625, 1e-6);
    assert_int_equal(LIB(r, TORCHMETRICS)->moved, 3);
    assert_int_equal(LIB(r, TORCHMETRICS)->examples[0].rule, CS_RULE_LEFT_CLOSED);
    assert_int_equal(LIB(r, TORCHMETRICS)->examples[1].rule, CS_RULE_FLOAT32);
    assert_int_equal(LIB(r, TORCHMETRICS)->examples[1].cs_bin, 2);
    assert_int_equal(LIB(r, TORCHMETRICS)->examples[1].lib_bin, 3);
    assert_int_equal(LIB(r, TORCHMETRICS)->examples[2].rule, CS_RULE_LEFT_CLOSED);
    /* np.linspace edge 3 = 3 * 0.1 = 0.30000000000000004 > 0.3: netcal's [lo,hi) keeps .3 in
     * bin 2, but edge 8 = 8 * 0.1 = 0.8 exactly moves .8 up: one move, rule edge side */
    assert_int_equal(LIB(r, NETCAL)->moved, 1);
    assert_int_equal(LIB(r, NETCAL)->examples[0].row, 2);
    /* MONAI: float32(.3) equals its float32 edge and (lo,hi] keeps it in bin 2 */
    assert_int_equal(LIB(r, MONAI)->moved, 0);
    assert_double_near(LIB(r, MONAI)->m[CS_CM_ECE], .3375, 1e-6);
    cs_compat_report_free(&r);
    cs_dataset_free(d);
}

/* No edge values, no 1.0, no ties: every library's ECE is calscope's up to float32 rounding,
 * and nothing moves. */
static void test_all_agree(void **state)
{
    (void)state;
    static const double p[] = { .41, .3, .29,  .2, .62, .18,  .07, .06, .87,  .55, .25, .2,
                                .03, .93, .04,  .33, .36, .31 };
    static const int32_t y[] = { 0, 0, 2, 1, 1, 2 };
    cs_dataset *d = cs_test_dataset(6, 3, p, y);
    cs_compat_report r;
    run(d, 4, CS_LENS_TOP1, CS_BIN_UNIFORM, &r);
    double want = r.calscope[CS_CM_ECE];
    for (int l = 0; l < CS_COMPAT_COUNT; l++) {
        if (l == CS_COMPAT_TORCHMETRICS_BINARY) continue;
        assert_double_near(r.lib[l].m[CS_CM_ECE], want, 1e-6);
        assert_int_equal(r.lib[l].moved, 0);
    }
    assert_double_near(r.lib[CS_COMPAT_NETCAL].m[CS_CM_ECE], want, 1e-12);
    assert_double_near(r.lib[CS_COMPAT_RELPLOT].m[CS_CM_ECE], want, 1e-12);
    cs_compat_report_free(&r);
    cs_dataset_free(d);
}

/* A raised cancel flag stops the run before the first library: CS_ECANCELLED, nothing left to
 * free, and the same call without the flag runs every library. */
static void test_cancelled(void **state)
{
    (void)state;
    static const double p[] = { .41, .3, .29,  .2, .62, .18,  .07, .06, .87 };
    static const int32_t y[] = { 0, 0, 2 };
    cs_dataset *d = cs_test_dataset(3, 3, p, y);
    cs_settings s;
    cs_settings_default(&s);
    atomic_int cancel = 1;
    cs_compat_report r;
    cs_error err;
    cs_error_clear(&err);
    assert_int_equal(cs_compat_run_cancellable(d, &s, CS_COMPAT_ALL_MASK, &cancel, &r, &err), CS_ECANCELLED);
    assert_string_equal(err.msg, "cancelled");
    assert_null(r.rows);
    for (int l = 0; l < CS_COMPAT_COUNT; l++) assert_null(r.lib[l].moved_flag);
    atomic_store(&cancel, 0);
    assert_int_equal(cs_compat_run_cancellable(d, &s, CS_COMPAT_ALL_MASK, &cancel, &r, &err), CS_OK);
    assert_non_null(r.rows);
    for (int l = 0; l < CS_COMPAT_COUNT; l++) assert_non_null(r.lib[l].moved_flag);
    cs_compat_report_free(&r);
    cs_dataset_free(d);
}

static void test_names_and_usage(void **state)
{
    (void)state;
    for (int l = 0; l < CS_COMPAT_COUNT; l++)
        assert_int_equal(cs_compat_from_name(cs_compat_name((cs_compat_lib)l)), l);
    assert_int_equal(cs_compat_from_name("sklearn"), -1);
    static const double p[] = { .6, .4,  .3, .7 };
    static const int32_t y[] = { 0, 1 };
    cs_dataset *d = cs_test_dataset(2, 2, p, y);
    cs_settings s;
    cs_settings_default(&s);
    s.lens = CS_LENS_FULL;
    cs_compat_report r;
    cs_error err;
    assert_int_equal(cs_compat_run(d, &s, CS_COMPAT_ALL_MASK, &r, &err), CS_EUSAGE);
    cs_compat_report_free(&r);
    cs_dataset_free(d);
}

/* The emulated torch primitives against torch itself: tests/fixtures/torch_prims.txt holds
 * FNV-1a hashes of what torch 1.13 (AVX2) gives (tests/oracles/torchmetrics_check.py prims; the e2e test
 * test_torchmetrics.sh regenerates it live when torch is installed). Each line hashes 10
 * consecutive M (or n); the probes and inputs are built exactly as the tool builds them. */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ULL;
    return h;
}

#define PRIM_PROBES(T, NEXT, BUCKETIZE)                                                     \
    for (int i = 0; i <= M; i++) {                                                      \
        T v[4] = { NEXT(e[i], -INFINITY), e[i], NEXT(e[i], INFINITY), (T)((double)i / M) }; \
        for (int j = 0; j < 4; j++) { int32_t b = BUCKETIZE(e, M + 1, v[j]); h = fnv(h, &b, 4); } \
    }                                                                                   \
    for (int q = 0; q < 122; q++) {                                                     \
        T v = q <= 100 ? (T)((double)q / 100) : (T)((double)(q - 101) / 20);           \
        int32_t b = BUCKETIZE(e, M + 1, v);                                             \
        h = fnv(h, &b, 4);                                                              \
    }

static double sum_input(long j)
{
    uint64_t u = (uint64_t)j * 2654435761ULL % 4294967296ULL;
    return (double)u / 4294967296.0 * ldexp(1.0, (int)(j % 11) - 5);
}

static uint64_t prim_hash(const char *kind, const char *dt, int first, int last)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    int f32 = strcmp(dt, "f32") == 0;
    float ef[1002], xf[1002];
    double ed[1002], xd[1002];
    for (int M = first; M <= last; M++) {
        if (strcmp(kind, "sum") == 0) {
            for (long j = 0; j < M; j++) { xf[j] = (float)sum_input(j); xd[j] = sum_input(j); }
            if (f32) { float s = cx_torch_sum_f32(xf, (size_t)M); h = fnv(h, &s, 4); }
            else { double s = cx_torch_sum_f64(xd, (size_t)M); h = fnv(h, &s, 8); }
            continue;
        }
        float end = strcmp(kind, "monai_linspace") == 0 ? 1.0f + FLT_EPSILON : 1.0f;
        if (f32) cx_torch_linspace_f32(ef, 0.0f, end, M + 1);
        else cx_torch_linspace_f64(ed, 0.0, 1.0, M + 1);
        if (strcmp(kind, "bucketize") != 0) {
            h = f32 ? fnv(h, ef, (size_t)(M + 1) * 4) : fnv(h, ed, (size_t)(M + 1) * 8);
        } else if (f32) {
            const float *e = ef;
            PRIM_PROBES(float, nextafterf, cx_torch_bucketize_right_f32)
        } else {
            const double *e = ed;
            PRIM_PROBES(double, nextafter, cx_torch_bucketize_right_f64)
        }
    }
    return h;
}

static void test_torch_primitives(void **state)
{
    (void)state;
    FILE *f = fopen("tests/fixtures/torch_prims.txt", "r");
    if (!f) fail_msg("tests/fixtures/torch_prims.txt: cannot open (run the tests from the repository root)");
    char line[256], kind[32], dt[8];
    int first, last, lines = 0, bad = 0;
    unsigned long long want;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#') continue;
        assert_int_equal(sscanf(line, "%31s %7s %d-%d %llx", kind, dt, &first, &last, &want), 5);
        uint64_t got = prim_hash(kind, dt, first, last);
        if (got != want) {
            print_error("%s %s M/n %d-%d: emulation differs from torch\n", kind, dt, first, last);
            bad++;
        }
        lines++;
    }
    fclose(f);
    /* 100 groups each of linspace f32/f64, MONAI's linspace, bucketize f32/f64; 101 of sum f32/f64 */
    assert_int_equal(lines, 5 * 100 + 2 * 101);
    assert_int_equal(bad, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inner_edge),
        cmocka_unit_test(test_exactly_one),
        cmocka_unit_test(test_zero_classwise),
        cmocka_unit_test(test_mass_ties),
        cmocka_unit_test(test_two_label_values),
        cmocka_unit_test(test_float32_point3),
        cmocka_unit_test(test_all_agree),
        cmocka_unit_test(test_cancelled),
        cmocka_unit_test(test_names_and_usage),
        cmocka_unit_test(test_torch_primitives),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
