/* Metrics engine: hand-worked values and properties (definitions: docs/metrics.md).
 * Expected values are worked by hand in the comments, or come from an independent numpy
 * implementation of the documented formulas run once with /usr/bin/python3 (the script is in the
 * comment at the end of this file). */
#include "support/cs_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calscope/dataset.h"
#include "calscope/metrics.h"
#include "calscope/topk.h"
#include "engine/num/ubin.h"
#include "engine/metrics/mx.h"

/* Classes named c0, c1...: some lenses below name them ("class:c1", "group:c0,c1"). */
static cs_dataset *mkds(size_t n, size_t k, const double *prob, const int32_t *label)
{
    cs_dataset *d = cs_test_dataset(n, k, prob, label);
    char (*num)[24] = calloc(k, sizeof *num);
    const char **names = calloc(k, sizeof *names);
    assert_non_null(num);
    assert_non_null(names);
    for (size_t j = 0; j < k; j++) {
        snprintf(num[j], sizeof num[j], "c%zu", j);
        names[j] = num[j];
    }
    cs_test_set_class_names(d, names);
    free(names);
    free(num);
    return d;
}

/* D1: 4 classes, 5 rows, chosen for the edge conventions. */
static const double D1P[] = {
    0.3, 0.3, 0.2, 0.2,     /* conf 0.3 on a decimal edge; tie -> pred 0; y=1 wrong */
    0.7, 0.1, 0.1, 0.1,     /* conf 0.7 on an edge; correct */
    1.0, 0.0, 0.0, 0.0,     /* conf exactly 1.0 -> last bin; correct */
    0.25, 0.25, 0.25, 0.25, /* four-way tie -> pred 0; y=0 correct */
    0.1, 0.65, 0.15, 0.1,   /* pred 1, y=2 wrong */
};
static const int32_t D1Y[] = {1, 0, 0, 0, 2};

/* D2: 12 rows x 5 classes (numpy default_rng(7) Dirichlet, 2 decimals). */
static const double D2P[] = {
    0.21, 0.3, 0.17, 0.26, 0.06, 0.48, 0.0, 0.4, 0.08, 0.04, 0.11, 0.07, 0.19, 0.23, 0.4,
    0.04, 0.59, 0.14, 0.07, 0.16, 0.02, 0.01, 0.28, 0.18, 0.51, 0.17, 0.19, 0.43, 0.19, 0.02,
    0.09, 0.3, 0.19, 0.42, 0.0, 0.15, 0.04, 0.06, 0.51, 0.24, 0.46, 0.21, 0.27, 0.02, 0.04,
    0.08, 0.37, 0.39, 0.04, 0.12, 0.27, 0.02, 0.02, 0.22, 0.47, 0.42, 0.11, 0.2, 0.12, 0.15,
};
static const int32_t D2Y[] = {4, 0, 2, 2, 1, 1, 0, 2, 4, 0, 2, 4};

typedef struct { const char *lens, *binning, *distance; int bins; double gamma, sigma; } cfg;

static cs_settings mkset(cfg c)
{
    cs_settings s;
    cs_error e;
    cs_settings_default(&s);
    if (c.lens) assert_int_equal(cs_settings_set_lens(&s, c.lens, &e), CS_OK);
    if (c.binning) assert_int_equal(cs_settings_set_binning(&s, c.binning, &e), CS_OK);
    if (c.distance) assert_int_equal(cs_settings_set_distance(&s, c.distance, &e), CS_OK);
    if (c.bins) s.bins = c.bins;
    if (c.gamma > 0) s.gamma = c.gamma;
    if (c.sigma > 0) s.sigma = c.sigma;
    return s;
}

static cs_result run(const cs_dataset *d, cfg c, unsigned want)
{
    cs_settings s = mkset(c);
    cs_error e;
    cs_prepared *p = cs_prepare(d, &s, &e);
    if (!p) fail_msg("cs_prepare: %s", e.msg);
    cs_result r;
    cs_status st = cs_evaluate(p, NULL, 0, want, NULL, &r, &e);
    if (st != CS_OK) fail_msg("cs_evaluate: %s", e.msg);
    cs_prepared_free(p);
    return r;
}

static void test_top1_uniform_edges(void **state)
{
    (void)state;
    cs_dataset *d = mkds(5, 4, D1P, D1Y);
    cs_result r = run(d, (cfg){.bins = 10}, CS_WANT_ALL);
    /* conf .3(y wrong, tie->pred 0) .7(ok) 1.0(ok) .25(ok) .65(wrong); M=10:
     * bin 2 (.2,.3]: {.3,.25} conf .275 acc .5 gap .225
     * bin 6 (.6,.7]: {.7,.65} conf .675 acc .5 gap .175
     * bin 9 (.9,1]: {1.0}    conf 1    acc 1  gap 0
     * ECE = .4*.225 + .4*.175 = .16; ACE = .4/3; MCE = .225; acc = 3/5 */
    assert_double_near(r.ece, 0.16, 1e-15);
    assert_double_near(r.ace, 0.4 / 3, 1e-15);
    assert_double_near(r.mce, 0.225, 1e-15);
    assert_double_near(r.accuracy, 0.6, 1e-15);
    assert_int_equal(r.n, 5);
    assert_int_equal(r.n_bins, 10);
    assert_int_equal(r.bins[2].count, 2);
    assert_int_equal(r.bins[3].count, 0);   /* 0.3 is NOT in (0.3, 0.4] */
    assert_int_equal(r.bins[6].count, 2);   /* 0.7 in (0.6, 0.7] */
    assert_int_equal(r.bins[7].count, 0);
    assert_int_equal(r.bins[9].count, 1);   /* 1.0 in the last bin */
    assert_true(isnan(r.bins[0].conf) && isnan(r.bins[0].acc));
    assert_double_near(r.bins[2].lo, 0.2, 0);
    assert_double_near(r.bins[2].hi, 0.3, 0);
    assert_double_near(r.bins[2].conf, 0.275, 1e-15);
    assert_double_near(r.bins[2].acc, 0.5, 0);
    /* Brier: .09+.49+.04+.04=.66; .49+.03=.52? no: (.7-1)^2=.09 +3*.01=.12; 0; .5625+.1875=.75;
     * .01+.4225+.7225+.01=1.165; sum 2.695 / 5 = .539 */
    assert_double_near(r.brier, 0.539, 1e-15);
    /* NLL = -(ln .3 + ln .7 + ln 1 + ln .25 + ln .15)/5 */
    assert_double_near(r.nll, -(log(0.3) + log(0.7) + log(0.25) + log(0.15)) / 5, 1e-15);
    /* AECE, M=10 > N=5: five singleton groups in value order .25(1) .3(0) .65(0) .7(1) 1(1):
     * (.75 + .3 + .65 + .3 + 0)/5 = .4 */
    assert_double_near(r.aece, 0.4, 1e-15);
    /* SCE (M=10 classwise): numpy 0.185 */
    assert_double_near(r.sce, 0.185, 1e-15);
    assert_true(isnan(r.rece_m));
    cs_result_free(&r);

    /* l2: sqrt(.4*.225^2 + .4*.175^2) = sqrt(.0325); ACE/MCE unchanged for a scalar lens */
    r = run(d, (cfg){.bins = 10, .distance = "l2"}, CS_WANT_BINNED);
    assert_double_near(r.ece, sqrt(0.0325), 1e-15);
    assert_double_near(r.mce, 0.225, 1e-15);
    assert_true(isnan(r.accuracy) && isnan(r.brier) && isnan(r.rece_g));
    cs_result_free(&r);
    /* max = tvd for a scalar lens */
    r = run(d, (cfg){.bins = 10, .distance = "max"}, CS_WANT_BINNED);
    assert_double_near(r.ece, 0.16, 1e-15);
    cs_result_free(&r);
    /* interval:0.4,0.6 on acc: bins have acc .5 .5 1 -> gaps 0 0 .4; ECE = .2*.4 = .08 */
    r = run(d, (cfg){.bins = 10, .distance = "interval:0.4,0.6"}, CS_WANT_BINNED);
    assert_double_near(r.ece, 0.08, 1e-15);
    assert_double_near(r.mce, 0.4, 1e-15);
    cs_result_free(&r);
    /* M = 1: one bin, |mean conf - acc| = |(.3+.7+1+.25+.65)/5 - .6| = |.58 - .6| = .02 */
    r = run(d, (cfg){.bins = 1}, CS_WANT_BINNED);
    assert_double_near(r.ece, 0.02, 1e-15);
    assert_int_equal(r.n_bins, 1);
    cs_result_free(&r);
    cs_dataset_free(d);
}

static void test_top1_mass_and_kdtree(void **state)
{
    (void)state;
    cs_dataset *d = mkds(5, 4, D1P, D1Y);
    /* mass M=2 on conf sorted .25(1) .3(0) .65(0) | .7(1) 1(1): sizes 3,2 (larger first);
     * gaps |1.2/3 - 1/3| = 1/15 and |.85 - 1| = .15 -> ECE = .6/15 + .4*.15 = .1 */
    cs_result r = run(d, (cfg){.bins = 2, .binning = "mass"}, CS_WANT_BINNED | CS_WANT_AECE);
    assert_double_near(r.ece, 0.1, 1e-15);
    assert_double_near(r.aece, 0.1, 1e-15);
    assert_int_equal(r.n_bins, 2);
    assert_int_equal(r.bins[0].count, 3);
    assert_double_near(r.bins[0].lo, 0.25, 0);
    assert_double_near(r.bins[0].hi, 0.65, 0);
    cs_result_free(&r);
    /* N < M: empty groups are left out */
    r = run(d, (cfg){.bins = 10, .binning = "mass"}, CS_WANT_BINNED);
    assert_int_equal(r.n_bins, 5);
    assert_double_near(r.ece, 0.4, 1e-15);
    cs_result_free(&r);
    cs_dataset_free(d);

    d = mkds(12, 5, D2P, D2Y);
    /* numpy: mass M=3 -> 0.365 / ACE .365 / MCE .445; M=15 -> 0.45166.. */
    r = run(d, (cfg){.bins = 3, .binning = "mass"}, CS_WANT_BINNED);
    assert_double_near(r.ece, 0.365, 1e-15);
    assert_double_near(r.mce, 0.445, 1e-15);
    cs_result_free(&r);
    r = run(d, (cfg){.bins = 15, .binning = "mass"}, CS_WANT_BINNED);
    assert_double_near(r.ece, 0.45166666666666666, 1e-15);
    cs_result_free(&r);
    /* kd-tree on the 1-D confidence, gamma .3 (min size round(3.6) = 4): numpy 5 leaves,
     * ECE .365, ACE .36833.., MCE .53667.. */
    r = run(d, (cfg){.binning = "kdtree", .gamma = 0.3}, CS_WANT_BINNED);
    assert_int_equal(r.n_bins, 5);
    assert_double_near(r.ece, 0.365, 1e-15);
    assert_double_near(r.ace, 0.36833333333333335, 1e-15);
    assert_double_near(r.mce, 0.5366666666666667, 1e-15);
    cs_result_free(&r);
    cs_dataset_free(d);
}

static void test_kdtree_min_size_half_even(void **state)
{
    (void)state;
    /* 10 binary rows, p1 = .05 .15 ... .95 (distinct): class:1 lens, kd-tree.
     * gamma .25: round(2.5) = 2 (half to even) -> nodes of >= 2 split -> 10 singletons.
     * (round-half-up would give 3 and leave pairs.) gamma .35: round(3.5) = 4 -> split
     * while >= 4: 10 -> 5|5 (mean .5), 5 -> {.05,.15}|{.25,.35,.45} (mean .25; .25 goes high),
     * 3 stays: leaves 2,3,2,3 -> 4 bins. */
    double P[20];
    int32_t Y[10];
    for (int i = 0; i < 10; i++) {
        P[2 * i + 1] = 0.05 + 0.1 * i;
        P[2 * i] = 1 - P[2 * i + 1];
        Y[i] = i % 2;
    }
    cs_dataset *d = mkds(10, 2, P, Y);
    cs_result r = run(d, (cfg){.lens = "class:1", .binning = "kdtree", .gamma = 0.25}, CS_WANT_BINNED);
    assert_int_equal(r.n_bins, 10);
    cs_result_free(&r);
    r = run(d, (cfg){.lens = "class:1", .binning = "kdtree", .gamma = 0.35}, CS_WANT_BINNED);
    assert_int_equal(r.n_bins, 4);
    size_t want[] = {2, 3, 2, 3};
    for (int b = 0; b < 4; b++) {
        assert_int_equal(r.bins[b].count, want[b]);
        assert_true(r.bins[b].count < 4);   /* every leaf below round(gamma N) */
    }
    cs_result_free(&r);
    cs_dataset_free(d);
}

static void test_class_and_classwise(void **state)
{
    (void)state;
    cs_dataset *d = mkds(5, 4, D1P, D1Y);
    /* class:1 values .3 .1 0 .25 .65, y1 = 1 0 0 0 0, M=10:
     * bin0 {.1, 0}: conf .05 acc 0; bin2 {.3,.25}: .275 vs .5; bin6 {.65}: .65 vs 0
     * ECE = .4*.05 + .4*.225 + .2*.65 = .24 */
    cs_result r = run(d, (cfg){.lens = "class:1", .bins = 10}, CS_WANT_BINNED);
    assert_double_near(r.ece, 0.24, 1e-15);
    assert_double_near(r.mce, 0.65, 1e-15);
    cs_result_free(&r);
    /* class by name */
    r = run(d, (cfg){.lens = "class:c1", .bins = 10}, CS_WANT_BINNED);
    assert_double_near(r.ece, 0.24, 1e-15);
    cs_result_free(&r);
    /* classwise = mean of class:c (numpy: ECE .185, ACE .21128472.., MCE .38125) */
    r = run(d, (cfg){.lens = "classwise", .bins = 10}, CS_WANT_BINNED | CS_WANT_SCE);
    assert_double_near(r.ece, 0.185, 1e-15);
    assert_double_near(r.ace, 0.21128472222222222, 1e-15);
    assert_double_near(r.mce, 0.38125, 1e-15);
    assert_double_near(r.sce, 0.185, 1e-15);  /* SCE: classwise uniform with the same M */
    cs_result_free(&r);
    double sum = 0;
    for (int c = 0; c < 4; c++) {
        char lens[32];
        snprintf(lens, sizeof lens, "class:%d", c);
        r = run(d, (cfg){.lens = lens, .bins = 7, .binning = "mass"}, CS_WANT_BINNED);
        sum += r.ece;
        cs_result_free(&r);
    }
    r = run(d, (cfg){.lens = "classwise", .bins = 7, .binning = "mass"}, CS_WANT_BINNED);
    assert_double_near(r.ece, sum / 4, 1e-15);
    cs_result_free(&r);
    cs_dataset_free(d);

    /* binary file: class:1 = positive-class ECE. p1 = .2 .4 .9, y = 0 1 1, M=5:
     * bins (.0,.2]: {.2} gap .2; (.2,.4]: {.4} gap .6; (.8,1]: {.9} gap .1 -> (.2+.6+.1)/3 = .3 */
    const double B[] = {0.8, 0.2, 0.6, 0.4, 0.1, 0.9};
    const int32_t BY[] = {0, 1, 1};
    d = mkds(3, 2, B, BY);
    r = run(d, (cfg){.lens = "class:1", .bins = 5}, CS_WANT_BINNED);
    assert_double_near(r.ece, 0.3, 1e-15);
    cs_result_free(&r);
    cs_dataset_free(d);
}

static void test_vector_lenses(void **state)
{
    (void)state;
    cs_dataset *d = mkds(5, 4, D1P, D1Y);
    /* topk:2 on D1 (ties: lower class first). Rows -> o = [s1, s2, rem], t:
     * r0 [.3,.3,.4] y=1 at rank 1 -> t=[0,1,0]; r1 [.7,.1,.2] y=0 -> [1,0,0];
     * r2 [1,0,0] -> [1,0,0]; r3 [.25,.25,.5] y=0 -> [1,0,0];
     * r4 [.65,.15,.2] (classes 1, 2) y=2 at rank 1 -> [0,1,0]
     * grid M=10 over (s1, s2), .1 in bin 0 (the edge 1/10 is the double 0.1):
     * {r0,r3} (2,2): o [.275,.275,.45] t [.5,.5,0] tvd .45; {r1} (6,0): tvd .3;
     * {r4} (6,1): tvd .5(.65+.85+.2) = .85; {r2} (9,0): 0.
     * ECE = .4*.45 + .2*.3 + .2*.85 = .41; ACE = 1.6/4 = .4; MCE = .85 (numpy agrees). */
#define TOP2_ECE 0.41
#define TOP2_ACE 0.4
#define TOP2_MCE 0.85
    cs_result r = run(d, (cfg){.lens = "topk:2", .bins = 10}, CS_WANT_BINNED);
    assert_int_equal(r.n_bins, 4);
    assert_double_near(r.ece, TOP2_ECE, 1e-15);
    assert_double_near(r.ace, TOP2_ACE, 1e-15);
    assert_double_near(r.mce, TOP2_MCE, 1e-15);
    assert_double_near(r.bins[0].lo, 0.2, 0);   /* cell (2,2) comes first */
    assert_int_equal(r.bins[0].count, 2);
    cs_result_free(&r);
    cs_dataset_free(d);

    d = mkds(12, 5, D2P, D2Y);
    struct { cfg c; double ece, ace, mce; size_t nb; } cases[] = {
        {{.lens = "group:0,1;2,3,4", .bins = 5}, 0.24083333333333334, 0.29437500000000005, 0.65, 4},
        {{.lens = "group:c0,c1", .bins = 5}, 0.24083333333333334, 0.29437500000000005, 0.65, 4},
        {{.lens = "group:0,1;2,3,4", .bins = 5, .distance = "l2"}, 0.4605114909894577, 0.4163091174235799, 0.9192388155425119, 4},
        {{.lens = "group:0,1;2,3,4", .bins = 5, .distance = "max"}, 0.24083333333333337, 0.29437500000000005, 0.65, 4},
        {{.lens = "group:0,1", .binning = "kdtree", .gamma = 0.5}, 0.24083333333333334, 0.29437500000000005, 0.65, 4},
        {{.lens = "group:0,1", .binning = "kdtree", .gamma = 0.5, .distance = "l2"}, 0.4605114909894577, 0.4163091174235799, 0.9192388155425119, 4},
        {{.lens = "full", .binning = "kdtree", .gamma = 0.5}, 0.5941666666666667, 0.6091666666666667, 0.8275, 3},
        {{.lens = "full", .binning = "kdtree", .gamma = 0.5, .distance = "l2"}, 0.6414057911251573, 0.6366075077292266, 0.8279719198137097, 3},
        {{.lens = "full", .binning = "kdtree", .gamma = 0.5, .distance = "max"}, 0.4691666666666667, 0.4948333333333334, 0.6125, 3},
        {{.lens = "topk:2", .binning = "kdtree", .gamma = 0.5}, 0.5558333333333333, 0.5309444444444444, 0.752, 3},
        {{.lens = "topk:2", .binning = "kdtree", .gamma = 0.5, .distance = "l2"}, 0.7392096004066326, 0.6842250405917446, 0.9397361331778193, 3},
        {{.lens = "topk:2", .binning = "kdtree", .gamma = 0.5, .distance = "max"}, 0.5558333333333333, 0.5309444444444444, 0.752, 3},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        r = run(d, cases[i].c, CS_WANT_BINNED);
        print_message("case %zu: %s %s %s\n", i, cases[i].c.lens,
                      cases[i].c.binning ? cases[i].c.binning : "uniform",
                      cases[i].c.distance ? cases[i].c.distance : "tvd");
        assert_double_near(r.ece, cases[i].ece, 1e-14);
        assert_double_near(r.ace, cases[i].ace, 1e-14);
        assert_double_near(r.mce, cases[i].mce, 1e-14);
        assert_int_equal(r.n_bins, cases[i].nb);
        cs_result_free(&r);
    }
    cs_dataset_free(d);
}

static void assert_same(const cs_result *a, const cs_result *b)
{
    /* bit-identical, NAN == NAN */
    const double *x = &a->accuracy, *y = &b->accuracy;
    double av[] = {a->accuracy, a->ece, a->ace, a->mce, a->rece_g, a->brier, a->nll, a->aece, a->sce};
    double bv[] = {b->accuracy, b->ece, b->ace, b->mce, b->rece_g, b->brier, b->nll, b->aece, b->sce};
    (void)x; (void)y;
    for (size_t i = 0; i < sizeof av / sizeof av[0]; i++) {
        if (isnan(av[i]) && isnan(bv[i])) continue;
        if (memcmp(&av[i], &bv[i], sizeof av[i]) != 0)
            fail_msg("metric %zu differs: %.17g vs %.17g", i, av[i], bv[i]);
    }
    assert_int_equal(a->n_bins, b->n_bins);
}

static void test_identities(void **state)
{
    (void)state;
    cs_dataset *d = mkds(12, 5, D2P, D2Y);
    const char *binnings[] = {"uniform", "mass", "kdtree"};
    for (int b = 0; b < 3; b++) {
        /* topk:1 == top1 under every binning */
        cs_result r1 = run(d, (cfg){.lens = "top1", .binning = binnings[b], .bins = 4, .gamma = 0.2}, CS_WANT_ALL);
        cs_result rk = run(d, (cfg){.lens = "topk:1", .binning = binnings[b], .bins = 4, .gamma = 0.2}, CS_WANT_ALL);
        assert_same(&r1, &rk);
        cs_result_free(&r1);
        cs_result_free(&rk);
    }
    const char *dists[] = {"tvd", "l2", "max"};
    for (int b = 0; b < 3; b += 2)
        for (int k = 0; k < 3; k++) {
            /* singleton groups == full */
            cs_result g = run(d, (cfg){.lens = "group:0;1;2;3;4", .binning = binnings[b], .bins = 3, .gamma = 0.2, .distance = dists[k]}, CS_WANT_BINNED);
            cs_result f = run(d, (cfg){.lens = "full", .binning = binnings[b], .bins = 3, .gamma = 0.2, .distance = dists[k]}, CS_WANT_BINNED);
            assert_double_near(g.ece, f.ece, 1e-15);
            assert_double_near(g.mce, f.mce, 1e-15);
            assert_int_equal(g.n_bins, f.n_bins);
            cs_result_free(&g);
            cs_result_free(&f);
        }
    /* topk:K with K >= classes == topk:5 (clamped) */
    cs_result a = run(d, (cfg){.lens = "topk:5", .binning = "kdtree", .gamma = 0.3}, CS_WANT_BINNED);
    cs_result b2 = run(d, (cfg){.lens = "topk:99", .binning = "kdtree", .gamma = 0.3}, CS_WANT_BINNED);
    assert_same(&a, &b2);
    cs_result_free(&a);
    cs_result_free(&b2);
    cs_dataset_free(d);
}

/* xorshift64*: deterministic synthetic data */
static uint64_t rng_state = 88172645463325252ull;
static double urand(void) { return cs_test_xorshift_star(&rng_state); }

static cs_dataset *synth(size_t n, size_t k, double sharp)
{
    double *P = malloc(n * k * sizeof *P);
    int32_t *Y = malloc(n * sizeof *Y);
    for (size_t i = 0; i < n; i++) {
        double s = 0;
        for (size_t j = 0; j < k; j++) { P[i * k + j] = pow(urand(), sharp); s += P[i * k + j]; }
        for (size_t j = 0; j < k; j++) P[i * k + j] /= s;
        double u = urand(), c = 0;
        Y[i] = (int32_t)(k - 1);
        for (size_t j = 0; j < k; j++) { c += P[i * k + j]; if (u < c) { Y[i] = (int32_t)j; break; } }
    }
    cs_dataset *d = mkds(n, k, P, Y);
    free(P);
    free(Y);
    return d;
}

static void test_order_independence(void **state)
{
    (void)state;
    cs_dataset *d = synth(3000, 5, 4.0);
    cfg cfgs[] = {
        {.lens = "top1"}, {.lens = "top1", .binning = "mass"}, {.lens = "top1", .binning = "kdtree"},
        {.lens = "class:2", .distance = "l2"}, {.lens = "classwise"}, {.lens = "classwise", .binning = "mass"},
        {.lens = "topk:3"}, {.lens = "topk:3", .binning = "kdtree"}, {.lens = "topk:2", .binning = "mass"},
        {.lens = "group:0,1;2"}, {.lens = "full", .binning = "kdtree", .distance = "max"},
        {.lens = "full", .bins = 4},
    };
    size_t n = 3000, m = 2000;
    uint32_t *idx = malloc(m * sizeof *idx), *perm = malloc(m * sizeof *perm);
    for (size_t i = 0; i < m; i++) idx[i] = (uint32_t)(urand() * (double)n);   /* with repeats */
    for (size_t i = 0; i < m; i++) perm[i] = idx[i];
    for (size_t i = m - 1; i > 0; i--) {
        size_t j = (size_t)(urand() * (double)(i + 1));
        uint32_t t = perm[i]; perm[i] = perm[j]; perm[j] = t;
    }
    uint32_t *ident = malloc(n * sizeof *ident);
    for (size_t i = 0; i < n; i++) ident[n - 1 - i] = (uint32_t)i;   /* reversed: all rows */
    for (size_t c = 0; c < sizeof cfgs / sizeof cfgs[0]; c++) {
        cs_settings s = mkset(cfgs[c]);
        cs_error e;
        cs_prepared *p = cs_prepare(d, &s, &e);
        assert_non_null(p);
        cs_result a, b, all, rev;
        assert_int_equal(cs_evaluate(p, idx, m, CS_WANT_ALL, NULL, &a, &e), CS_OK);
        assert_int_equal(cs_evaluate(p, perm, m, CS_WANT_ALL, NULL, &b, &e), CS_OK);
        assert_same(&a, &b);
        assert_int_equal(cs_evaluate(p, NULL, 0, CS_WANT_ALL, NULL, &all, &e), CS_OK);
        assert_int_equal(cs_evaluate(p, ident, n, CS_WANT_ALL, NULL, &rev, &e), CS_OK);
        assert_same(&all, &rev);
        /* 0 <= ECE <= MCE, ACE <= MCE (not l2: its ECE is an RMS) */
        assert_true(all.ece >= 0 && all.ace <= all.mce + 1e-15);
        if (s.distance != CS_DIST_L2) assert_true(all.ece <= all.mce + 1e-15);
        cs_result_free(&a); cs_result_free(&b); cs_result_free(&all); cs_result_free(&rev);
        cs_prepared_free(p);
    }
    free(idx); free(perm); free(ident);
    cs_dataset_free(d);
}

static void test_calibrated_gives_zero(void **state)
{
    (void)state;
    /* 10 rows, binary: 5 with p1 = .8 of which 4 have y=1; 5 with p1 = .4 of which 2 have
     * y=1. class:1 and top1 (conf .8 -> 4/5 correct; conf .6 = 1-.4 -> 3/5 correct) are
     * calibrated bin by bin. */
    double P[20];
    int32_t Y[10];
    for (int i = 0; i < 10; i++) {
        double p1 = i < 5 ? 0.8 : 0.4;
        P[2 * i] = 1 - p1;
        P[2 * i + 1] = p1;
        Y[i] = i < 5 ? (i < 4) : (i < 7);
    }
    cs_dataset *d = mkds(10, 2, P, Y);
    const char *lenses[] = {"top1", "class:1", "classwise", "full"};
    for (int l = 0; l < 4; l++) {
        cs_result r = run(d, (cfg){.lens = lenses[l], .bins = 10}, CS_WANT_BINNED);
        assert_double_near(r.ece, 0.0, 1e-15);
        assert_double_near(r.mce, 0.0, 1e-15);
        cs_result_free(&r);
    }
    cs_result r = run(d, (cfg){.lens = "top1", .binning = "mass", .bins = 2}, CS_WANT_BINNED);
    assert_double_near(r.ece, 0.0, 1e-15);
    cs_result_free(&r);
    cs_dataset_free(d);
}

static void test_rece_g(void **state)
{
    (void)state;
    cs_dataset *d = mkds(12, 5, D2P, D2Y);
    /* numpy with math.erfc, formula of Gupta et al. 2023 eq. 6 (ref script) */
    cs_result r = run(d, (cfg){.bins = 15, .sigma = 0.1}, CS_WANT_RECE_G);
    assert_double_near(r.rece_g, 0.365, 1e-14);
    cs_result_free(&r);
    r = run(d, (cfg){.lens = "class:2", .bins = 10, .sigma = 0.05}, CS_WANT_RECE_G);
    assert_double_near(r.rece_g, 0.3577347860770901, 1e-14);
    cs_result_free(&r);
    r = run(d, (cfg){.lens = "classwise", .bins = 15, .sigma = 0.1}, CS_WANT_RECE_G);
    assert_double_near(r.rece_g, 0.21914471349234055, 1e-14);
    cs_result_free(&r);
    r = run(d, (cfg){.lens = "full"}, CS_WANT_RECE_G);
    assert_true(isnan(r.rece_g));   /* vector lens */
    cs_result_free(&r);
    cs_dataset_free(d);

    d = mkds(5, 4, D1P, D1Y);
    r = run(d, (cfg){.bins = 10, .sigma = 0.2}, CS_WANT_RECE_G);
    assert_double_near(r.rece_g, 0.1040780754510221, 1e-14);
    cs_result_free(&r);
    cs_dataset_free(d);

    /* sigma -> 0: RECE-G -> uniform ECE when no value sits near an edge */
    d = synth(2000, 3, 3.0);
    for (size_t i = 0; i < d->n; i++) {
        /* keep values off edges: move any conf within 1e-3/15 of a multiple of 1/15 inwards */
        double x = d->conf[i] * 15, f = x - floor(x);
        if (f < 1e-3) d->conf[i] += 2e-3 / 15;
        else if (f > 1 - 1e-3) d->conf[i] -= 2e-3 / 15;
    }
    r = run(d, (cfg){.bins = 15, .sigma = 1e-6}, CS_WANT_RECE_G | CS_WANT_BINNED);
    assert_double_near(r.rece_g, r.ece, 1e-12);
    cs_result_free(&r);
    cs_dataset_free(d);
}

/* RECE-G smoothed curve (CS_WANT_RECE_CURVE): per bin A~_i/W_i and C~_i/W_i, checked against
 * a direct erfc computation of the normalised Gaussian bin masses. */
static void test_rece_curve(void **state)
{
    (void)state;
    cs_dataset *d = mkds(12, 5, D2P, D2Y);
    const int M = 10;
    const double sigma = 0.1;
    cs_result r = run(d, (cfg){.bins = M, .sigma = sigma}, CS_WANT_RECE_G | CS_WANT_RECE_CURVE);
    assert_non_null(r.rece_acc);
    assert_non_null(r.rece_conf);
    assert_int_equal(r.n_rece, M);
    double A[10] = {0}, C[10] = {0}, S[10] = {0}, gap = 0;
    for (size_t j = 0; j < d->n; j++) {
        double c = d->conf[j], w[10], Z = 0;
        for (int i = 0; i < M; i++) {
            double lo = (double)i / M, hi = (double)(i + 1) / M;
            w[i] = 0.5 * (erfc((lo - c) / (sigma * sqrt(2.0))) - erfc((hi - c) / (sigma * sqrt(2.0))));
            Z += w[i];
        }
        for (int i = 0; i < M; i++) {
            w[i] /= Z;
            A[i] += w[i] * d->correct[j];
            C[i] += w[i] * c;
            S[i] += w[i];
        }
    }
    for (int i = 0; i < M; i++) {
        assert_double_near(r.rece_acc[i], A[i] / S[i], 1e-12);
        assert_double_near(r.rece_conf[i], C[i] / S[i], 1e-12);
        gap += fabs(A[i] - C[i]);
    }
    assert_double_near(r.rece_g, gap / (double)d->n, 1e-12);   /* the same weights as RECE-G */
    cs_result_free(&r);
    assert_null(r.rece_acc);

    /* not part of CS_WANT_ALL; refused quietly (NULL) for classwise and vector lenses */
    r = run(d, (cfg){.bins = M}, CS_WANT_ALL);
    assert_null(r.rece_acc);
    cs_result_free(&r);
    r = run(d, (cfg){.lens = "classwise", .bins = M}, CS_WANT_RECE_CURVE);
    assert_null(r.rece_acc);
    cs_result_free(&r);
    r = run(d, (cfg){.lens = "full", .bins = M}, CS_WANT_RECE_CURVE);
    assert_null(r.rece_conf);
    cs_result_free(&r);

    cs_dataset_free(d);

    /* sigma -> 0: the curve is the binned reliability diagram, NAN on empty bins (values kept
     * off the bin edges, where the kernel splits a sample between two bins) */
    d = synth(2000, 3, 3.0);
    for (size_t i = 0; i < d->n; i++) {
        double x = d->conf[i] * 15, f = x - floor(x);
        if (f < 1e-3) d->conf[i] += 2e-3 / 15;
        else if (f > 1 - 1e-3) d->conf[i] -= 2e-3 / 15;
    }
    r = run(d, (cfg){.bins = 15, .sigma = 1e-6}, CS_WANT_BINNED | CS_WANT_RECE_CURVE);
    assert_int_equal(r.n_rece, 15);
    for (size_t i = 0; i < r.n_bins; i++) {
        if (r.bins[i].count == 0) { assert_true(isnan(r.rece_acc[i])); continue; }
        assert_double_near(r.rece_acc[i], r.bins[i].acc, 1e-9);
        assert_double_near(r.rece_conf[i], r.bins[i].conf, 1e-9);
    }
    cs_result_free(&r);
    cs_dataset_free(d);
}

static void test_topk_bars(void **state)
{
    (void)state;
    cs_dataset *d = mkds(5, 4, D1P, D1Y);
    cs_settings s = mkset((cfg){.bins = 10, .lens = "classwise"});   /* base lens ignored */
    int ks[] = {1, 2, 4, 9};
    double ece[4];
    cs_error e;
    assert_int_equal(cs_topk_bars(d, &s, ks, 4, NULL, ece, &e), CS_OK);
    assert_double_near(ece[0], 0.16, 1e-15);
    assert_double_near(ece[1], TOP2_ECE, 1e-15);
    cs_result r = run(d, (cfg){.lens = "topk:4", .bins = 10}, CS_WANT_BINNED);
    assert_double_near(ece[2], r.ece, 0);
    assert_double_near(ece[3], r.ece, 0);   /* 9 > K clamps to K */
    cs_result_free(&r);
    int bad[] = {0};
    assert_int_equal(cs_topk_bars(d, &s, bad, 1, NULL, ece, &e), CS_EUSAGE);
    cs_dataset_free(d);

    /* on a bigger file, bars equal cs_prepare(topk:k) for every binning */
    d = synth(500, 12, 5.0);
    const char *binnings[] = {"uniform", "mass", "kdtree"};
    int ks2[] = {2, 3, 5, 12};
    for (int b = 0; b < 3; b++) {
        s = mkset((cfg){.binning = binnings[b], .bins = 6, .gamma = 0.1});
        double out[4];
        assert_int_equal(cs_topk_bars(d, &s, ks2, 4, NULL, out, &e), CS_OK);
        for (int i = 0; i < 4; i++) {
            char lens[32];
            snprintf(lens, sizeof lens, "topk:%d", ks2[i]);
            r = run(d, (cfg){.lens = lens, .binning = binnings[b], .bins = 6, .gamma = 0.1}, CS_WANT_BINNED);
            assert_double_near(out[i], r.ece, 0);
            cs_result_free(&r);
        }
    }
    cs_dataset_free(d);
}

/* From 100,000 samples the class-wise ECE runs on a second thread beside the sort and the
 * scalar estimators (evaluate.c), and the bins and RECE-G after it there: the same number as
 * the classwise lens's ECE (uniform bins, tvd; there the class-wise ECE is taken from the
 * bins, not made twice), and the bins and RECE-G the same bits as without the class-wise
 * ECE (no second thread: made on the calling thread); a raised cancel flag still stops the
 * call. */
static void test_sce_beside(void **state)
{
    (void)state;
    cs_dataset *d = synth(120000, 4, 3.0);
    cs_result top = run(d, (cfg){.lens = "top1"}, CS_WANT_ALL);
    cs_result cw = run(d, (cfg){.lens = "classwise"}, CS_WANT_ALL);
    assert_false(isnan(top.sce));
    assert_true(top.sce == cw.ece);
    assert_true(top.sce == cw.sce);
    const char *lenses[] = { "top1", "classwise", "class:2" };
    for (int l = 0; l < 3; l++) {
        cs_result a = run(d, (cfg){.lens = lenses[l]}, CS_WANT_ALL);
        cs_result b = run(d, (cfg){.lens = lenses[l]}, CS_WANT_ALL & ~(unsigned)CS_WANT_SCE);
        cs_result c = run(d, (cfg){.lens = lenses[l]}, CS_WANT_SCE);
        assert_memory_equal(&a.ece, &b.ece, sizeof a.ece);
        assert_memory_equal(&a.ace, &b.ace, sizeof a.ace);
        assert_memory_equal(&a.mce, &b.mce, sizeof a.mce);
        assert_memory_equal(&a.rece_g, &b.rece_g, sizeof a.rece_g);
        assert_false(isnan(a.rece_g));
        assert_memory_equal(&a.sce, &c.sce, sizeof a.sce);
        /* the scores: made on the side thread first (a), here without it (b) */
        assert_memory_equal(&a.brier, &b.brier, sizeof a.brier);
        assert_memory_equal(&a.nll, &b.nll, sizeof a.nll);
        assert_int_equal(a.n_bins, b.n_bins);
        assert_memory_equal(a.bins, b.bins, a.n_bins * sizeof *a.bins);
        cs_result_free(&a);
        cs_result_free(&b);
        cs_result_free(&c);
    }
    /* and they are the scores, summed here row by row */
    double sb = 0.0, sl = 0.0;
    for (size_t i = 0; i < d->n; i++) {
        const double *g = d->prob + i * d->k;
        for (size_t c = 0; c < d->k; c++) {
            double t = g[c] - (d->label[i] == (int32_t)c);
            sb += t * t;
        }
        sl -= log(g[d->label[i]] > 1e-15 ? g[d->label[i]] : 1e-15);
    }
    assert_true(fabs(top.brier - sb / (double)d->n) < 1e-12);
    assert_true(fabs(top.nll - sl / (double)d->n) < 1e-12);
    cs_settings s = mkset((cfg){.lens = "top1"});
    cs_error e;
    cs_prepared *p = cs_prepare(d, &s, &e);
    atomic_int cancel = 1;
    cs_result r;
    assert_int_equal(cs_evaluate(p, NULL, 0, CS_WANT_ALL, &(cs_run){ .threads = 0, .cancel = &cancel }, &r, &e), CS_ECANCELLED);
    cs_prepared_free(p);
    cs_result_free(&top);
    cs_result_free(&cw);
    cs_dataset_free(d);
}

/* The class-wise ECE's row pass (classwise.c cw_bins / cw_sums: two classes' bins at a time,
 * a pair both in bin 0 skipped in blocks where nearly all are) against the class:C lenses,
 * whose uniform bins come from the scalar pass one value at a time: SCE is the mean of their
 * ECEs bit for bit, and the pooled table's counts and hits are their sums. Odd and even class
 * counts (the pair loop's tail), values 0, 1, exactly on the bin edges and one ulp either
 * side, M = 1 (one bin: no table path), 7, 15 and 100; items NULL (all) and a subset. shape
 * 1: nearly every value at or below e_1 (0, e_1 itself, below it), the next double above e_1
 * among them, and rows 1000-1499 mixed: the pass goes into its skipping blocks and out. */
static void test_sce_rowwise_matches_classes(void **state)
{
    (void)state;
    static const size_t KK[] = { 2, 3, 5, 10, 41 };
    static const int MM[] = { 1, 7, 15, 100 };
    uint64_t seed = 4242;
    for (int shape = 0; shape < 2; shape++)
    for (size_t ki = 0; ki < 5; ki++)
        for (size_t mi = 0; mi < 4; mi++) {
            size_t n = 3001, k = KK[ki];
            int M = MM[mi];
            cs_dataset *d = cs_test_dataset_new(n, k);
            for (size_t i = 0; i < n * k; i++) {
                seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                uint64_t r = seed >> 20;
                double edge = cs_ubin_edge((int)(r % (uint64_t)(M + 1)), M);
                size_t row = i / k;
                if (shape == 1 && (row < 1000 || row >= 1500) && (r >> 40) % 256 != 0) {
                    double e1 = cs_ubin_edge(1, M);
                    switch ((r >> 12) % 4) {
                    case 0: d->prob[i] = 0.0; break;
                    case 1: d->prob[i] = e1; break;
                    case 2: d->prob[i] = e1 * (double)(r % 1000) / 1000.0; break;
                    default: d->prob[i] = (r >> 30) % 50 == 0 ? nextafter(e1, 2.0) : e1 * 0.5; break;
                    }
                    continue;
                }
                switch ((r >> 12) % 6) {
                case 0: d->prob[i] = 0.0; break;
                case 1: d->prob[i] = 1.0; break;
                case 2: d->prob[i] = edge; break;
                case 3: d->prob[i] = nextafter(edge, 2.0) > 1.0 ? 1.0 : nextafter(edge, 2.0); break;
                case 4: d->prob[i] = nextafter(edge, -1.0) < 0.0 ? 0.0 : nextafter(edge, -1.0); break;
                default: d->prob[i] = (double)(r >> 8) * 0x1.0p-36; break;
                }
            }
            for (size_t i = 0; i < n; i++) d->label[i] = (int32_t)((seed >> (i % 40)) % k);
            cs_test_prepare(d);
            cs_result cw = run(d, (cfg){.lens = "classwise", .bins = M}, CS_WANT_BINNED | CS_WANT_SCE);
            assert_int_equal(cw.n_bins, (size_t)M);
            double total = 0.0;
            size_t *cnt = calloc((size_t)M, sizeof *cnt);
            double *hits = calloc((size_t)M, sizeof *hits);
            assert_non_null(cnt);
            assert_non_null(hits);
            for (size_t c = 0; c < k; c++) {
                char lens[32];
                snprintf(lens, sizeof lens, "class:%zu", c);
                cs_result rc = run(d, (cfg){.lens = lens, .bins = M}, CS_WANT_BINNED);
                total += rc.ece;
                for (int b = 0; b < M; b++) {
                    cnt[b] += rc.bins[b].count;
                    if (rc.bins[b].count) hits[b] += rc.bins[b].acc * (double)rc.bins[b].count;
                }
                cs_result_free(&rc);
            }
            if (!(cw.sce == total / (double)k) || !(cw.ece == cw.sce))
                fail_msg("K %zu M %d: sce %.17g ece %.17g, mean of classes %.17g", k, M, cw.sce,
                         cw.ece, total / (double)k);
            for (int b = 0; b < M; b++) {
                assert_int_equal(cw.bins[b].count, cnt[b]);
                if (cnt[b]) assert_double_near(cw.bins[b].acc * (double)cnt[b], hits[b], 1e-6);
            }
            /* a subset (every third sample): the items path of the same pass */
            size_t ns = 0;
            uint32_t *idx = malloc(n * sizeof *idx);
            assert_non_null(idx);
            for (size_t i = 0; i < n; i += 3) idx[ns++] = (uint32_t)i;
            cs_settings st = mkset((cfg){.lens = "classwise", .bins = M});
            cs_error e;
            cs_prepared *p = cs_prepare(d, &st, &e);
            assert_non_null(p);
            cs_result sub;
            assert_int_equal(cs_evaluate(p, idx, ns, CS_WANT_SCE, NULL, &sub, &e), CS_OK);
            cs_prepared_free(p);
            cs_dataset *ds = cs_test_dataset_new(ns, k);
            for (size_t j = 0; j < ns; j++) {
                memcpy(ds->prob + j * k, d->prob + (size_t)idx[j] * k, k * sizeof *ds->prob);
                ds->label[j] = d->label[idx[j]];
            }
            cs_test_prepare(ds);
            cs_result whole = run(ds, (cfg){.lens = "classwise", .bins = M}, CS_WANT_SCE);
            assert_true(sub.sce == whole.sce);
            cs_result_free(&sub);
            cs_result_free(&whole);
            cs_dataset_free(ds);
            free(idx);
            free(cnt);
            free(hits);
            cs_result_free(&cw);
            cs_dataset_free(d);
        }
}

static void test_empty_and_errors(void **state)
{
    (void)state;
    cs_dataset *d = mkds(5, 4, D1P, D1Y);
    cs_settings s = mkset((cfg){0});
    cs_error e;
    cs_prepared *p = cs_prepare(d, &s, &e);
    cs_result r;
    assert_int_equal(cs_evaluate(p, (const uint32_t[]){0}, 0, CS_WANT_ALL, NULL, &r, &e), CS_EEMPTY);
    uint32_t oob = 5;
    assert_int_equal(cs_evaluate(p, &oob, 1, CS_WANT_ALL, NULL, &r, &e), CS_EUSAGE);
    atomic_int cancel = 1;
    assert_int_equal(cs_evaluate(p, NULL, 0, CS_WANT_ALL, &(cs_run){ .threads = 0, .cancel = &cancel }, &r, &e), CS_ECANCELLED);
    cs_prepared_free(p);

    /* a selection that keeps nothing: no rows are samples (every row a tta > 0 observation) */
    cs_dataset *t = mkds(5, 4, D1P, D1Y);
    free(t->sample_rows);
    t->sample_rows = NULL;
    free(t->conf); t->conf = NULL;
    free(t->pred); t->pred = NULL;
    free(t->correct); t->correct = NULL;
    t->tta = malloc(5 * sizeof *t->tta);
    for (int i = 0; i < 5; i++) t->tta[i] = 1;
    assert_int_equal(cs_dataset_prepare(t, NULL, &e), CS_OK);
    assert_null(cs_prepare(t, &s, &e));
    assert_int_equal(e.code, CS_EEMPTY);
    cs_dataset_free(t);

    /* with the real selection parser: a contradiction keeps nothing */
    s = mkset((cfg){0});
    snprintf(s.select, sizeof s.select, "pred == 0 and pred == 1");
    p = cs_prepare(d, &s, &e);
    if (p || e.code != CS_EEMPTY) {
        cs_prepared_free(p);
        if (e.code == CS_EUSAGE && strstr(e.msg, "not supported")) skip();   /* placeholder */
        fail_msg("expected CS_EEMPTY, got %d: %s", e.code, e.msg);
    }
    assert_non_null(strstr(e.msg, "keeps no"));

    struct { const char *lens; } badlens[] = {{"class:7"}, {"class:nope"}, {"group:0,9"},
                                              {"group:0,1;1,2"}, {"group:0,1,2,3"}, {"group:0,,1"}};
    for (size_t i = 0; i < sizeof badlens / sizeof badlens[0]; i++) {
        s = mkset((cfg){.lens = badlens[i].lens});
        assert_null(cs_prepare(d, &s, &e));
        assert_int_equal(e.code, CS_EUSAGE);
    }
    cs_dataset_free(d);
}

static void test_settings_parsers(void **state)
{
    (void)state;
    cs_settings s;
    cs_error e;
    cs_settings_default(&s);
    assert_int_equal(s.bins, 15);
    assert_double_near(s.sigma, 0.1, 0);
    assert_double_near(s.gamma, 0.1, 0);
    const char *bad_lens[] = {"", "top2", "topk:", "topk:0", "topk:-1", "topk:2x", "class:", "group:", "fullx", NULL};
    for (int i = 0; bad_lens[i]; i++) {
        assert_int_equal(cs_settings_set_lens(&s, bad_lens[i], &e), CS_EUSAGE);
        assert_int_equal(e.code, CS_EUSAGE);
        assert_true(strlen(e.msg) > 0);
    }
    assert_int_equal(cs_settings_set_lens(&s, "topk:5", &e), CS_OK);
    assert_int_equal(s.lens, CS_LENS_TOPK);
    assert_int_equal(s.topk, 5);
    assert_int_equal(cs_settings_set_lens(&s, "group:a,b;c", &e), CS_OK);
    assert_string_equal(s.lens_arg, "a,b;c");
    assert_int_equal(cs_settings_set_binning(&s, "equal", &e), CS_EUSAGE);
    assert_int_equal(cs_settings_set_binning(&s, "mass", &e), CS_OK);
    const char *bad_dist[] = {"l1", "interval:", "interval:0.2", "interval:0.5,0.2", "interval:-1,0.5",
                              "interval:0.1,2", "interval:a,b", "interval:0.1,0.2,0.3", NULL};
    for (int i = 0; bad_dist[i]; i++)
        assert_int_equal(cs_settings_set_distance(&s, bad_dist[i], &e), CS_EUSAGE);
    assert_int_equal(cs_settings_set_distance(&s, "interval:0.33,0.66", &e), CS_OK);
    assert_double_near(s.interval_lo, 0.33, 0);
    assert_double_near(s.interval_hi, 0.66, 0);
    assert_int_equal(cs_settings_set_mixture(&s, "gmm2", &e), CS_EUSAGE);
    assert_int_equal(cs_settings_set_mixture(&s, "gmm3", &e), CS_OK);
    const char *bad_bins[] = {"0", "-3", "1.5", "", "x", "1000001", NULL};
    for (int i = 0; bad_bins[i]; i++) assert_int_equal(cs_settings_set_bins(&s, bad_bins[i], &e), CS_EUSAGE);
    const char *bad_gamma[] = {"0", "1.5", "-0.1", "nan", "0.1x", NULL};
    for (int i = 0; bad_gamma[i]; i++) assert_int_equal(cs_settings_set_gamma(&s, bad_gamma[i], &e), CS_EUSAGE);
    const char *bad_sigma[] = {"0", "-1", "inf", "", NULL};
    for (int i = 0; bad_sigma[i]; i++) assert_int_equal(cs_settings_set_sigma(&s, bad_sigma[i], &e), CS_EUSAGE);
    assert_int_equal(cs_settings_set_bins(&s, "20", &e), CS_OK);
    assert_int_equal(cs_settings_set_sigma(&s, "0.05", &e), CS_OK);
    s.bins = 0;
    assert_int_equal(cs_settings_validate(&s, &e), CS_EUSAGE);
}

static int cmp_desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

static void test_internal_helpers(void **state)
{
    (void)state;
    /* row sort (radix path for K > 64, insertion buffer for small k) against qsort */
    cs_dataset *d = synth(300, 150, 6.0);
    for (int r = 0; r < 10; r++) d->prob[r * 150 + 7] = d->prob[r * 150 + 9];   /* ties */
    size_t kks[] = {3, 20, 150};
    double *ref = malloc(150 * sizeof *ref);
    for (int t = 0; t < 3; t++) {
        size_t kk = kks[t];
        double *out = malloc(300 * kk * sizeof *out);
        int32_t *pos = malloc(300 * sizeof *pos);
        cs_mx_sort_rows(d, d->sample_rows, 300, kk, out, pos);
        for (size_t i = 0; i < 300; i++) {
            memcpy(ref, d->prob + i * 150, 150 * sizeof *ref);
            qsort(ref, 150, sizeof *ref, cmp_desc);
            assert_memory_equal(out + i * kk, ref, kk * sizeof *ref);
            /* label position: classes strictly above, plus equal ones with a lower index */
            double gy = d->prob[i * 150 + (size_t)d->label[i]];
            int32_t want = 0;
            for (int j = 0; j < 150; j++)
                want += d->prob[i * 150 + j] > gy || (d->prob[i * 150 + j] == gy && j < d->label[i]);
            assert_int_equal(pos[i], want < (int32_t)kk ? want : (int32_t)kk);
        }
        free(out);
        free(pos);
    }
    free(ref);
    cs_dataset_free(d);

    /* normal tail table against erfc: Phi(z) = erfc(-z/sqrt2)/2 */
    double worst = 0, worst_rel = 0;
    for (int i = -100000; i <= 100000; i++) {
        double z = i * 9.5e-5 + 1e-7 * (i % 7);
        double want = 0.5 * erfc(fabs(z) / sqrt(2.0));
        double got = cs_mx_normal_tail(z);
        double dd = fabs(got - want);
        if (dd > worst) worst = dd;
        if (want > 1e-300 && fabs(z) < 9 && dd / want > worst_rel) worst_rel = dd / want;
    }
    assert_true(worst < 2e-16);
    assert_true(worst_rel < 1e-13);

    /* stable order of doubles (ties by index), including -0 and equal values */
    double v[] = {0.5, 0.25, -0.0, 0.5, 0.0, 1.0, 0.25};
    uint32_t *o, *rk;
    assert_int_equal(cs_sort_order(v, 7, &o, &rk), 0);
    uint32_t want_o[] = {2, 4, 1, 6, 0, 3, 5};
    for (int i = 0; i < 7; i++) {
        assert_int_equal(o[i], want_o[i]);
        assert_int_equal(rk[o[i]], i);
    }
    free(o);
    free(rk);
    /* array_split sizes: 10 into 4 -> 3,3,2,2 */
    assert_int_equal(cs_mx_split_start(10, 4, 1), 3);
    assert_int_equal(cs_mx_split_start(10, 4, 2), 6);
    assert_int_equal(cs_mx_split_start(10, 4, 3), 8);
    /* uniform bin edges decided on the doubles: 0.1, 0.3, 0.7 stay below; 0 and 1 */
    double e[11];
    cs_mx_edges(e, 10);
    assert_int_equal(cs_ubin_at(0.0, e, 10), 0);
    assert_int_equal(cs_ubin_at(0.1, e, 10), 0);
    assert_int_equal(cs_ubin_at(nextafter(0.1, 1), e, 10), 1);
    assert_int_equal(cs_ubin_at(0.3, e, 10), 2);
    assert_int_equal(cs_ubin_at(0.7, e, 10), 6);
    assert_int_equal(cs_ubin_at(nextafter(0.7, 1), e, 10), 7);
    assert_int_equal(cs_ubin_at(1.0, e, 10), 9);
    assert_int_equal(cs_ubin_at(5e-324, e, 10), 0);
}

/* Class-wise RECE-G is the mean over the classes of each class's one-vs-rest RECE-G (the
 * class:C lens), bit for bit, whichever way it goes: item halves on a large file, class
 * halves on a small one, M within and above 64 (the row-wise pass with every class's
 * accumulators reads the same weights in the same item order as the column per class). */
static void test_rece_g_classwise_is_mean(void **state)
{
    (void)state;
    static const size_t N[] = { 3000, 210000 };
    static const size_t KK[] = { 7, 3 };
    uint64_t seed = 99;
    for (int t = 0; t < 2; t++) {
        size_t n = N[t], k = KK[t];
        cs_dataset *d = cs_test_dataset_new(n, k);
        for (size_t i = 0; i < n; i++) {
            double sum = 0.0, *row = d->prob + i * k;
            for (size_t c = 0; c < k; c++) {
                seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                row[c] = (double)((seed >> 20) % 1000 + 1);
                sum += row[c];
            }
            for (size_t c = 0; c < k; c++) row[c] /= sum;
            d->label[i] = (int32_t)((seed >> 40) % k);
        }
        cs_test_prepare(d);
        for (int bins = 15; bins <= 100; bins += 85) {
            cs_result r = run(d, (cfg){.lens = "classwise", .bins = bins}, CS_WANT_RECE_G);
            double total = 0.0;
            for (size_t c = 0; c < k; c++) {
                char lens[32];
                snprintf(lens, sizeof lens, "class:%zu", c);
                cs_result rc = run(d, (cfg){.lens = lens, .bins = bins}, CS_WANT_RECE_G);
                total += rc.rece_g;
                cs_result_free(&rc);
            }
            if (!(r.rece_g == total / (double)k))
                fail_msg("n %zu M %d: classwise %.17g, mean of classes %.17g", n, bins, r.rece_g, total / (double)k);
            cs_result_free(&r);
        }
        cs_dataset_free(d);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_top1_uniform_edges),
        cmocka_unit_test(test_top1_mass_and_kdtree),
        cmocka_unit_test(test_kdtree_min_size_half_even),
        cmocka_unit_test(test_class_and_classwise),
        cmocka_unit_test(test_vector_lenses),
        cmocka_unit_test(test_identities),
        cmocka_unit_test(test_order_independence),
        cmocka_unit_test(test_calibrated_gives_zero),
        cmocka_unit_test(test_rece_g),
        cmocka_unit_test(test_rece_g_classwise_is_mean),
        cmocka_unit_test(test_rece_curve),
        cmocka_unit_test(test_topk_bars),
        cmocka_unit_test(test_sce_beside),
        cmocka_unit_test(test_sce_rowwise_matches_classes),
        cmocka_unit_test(test_empty_and_errors),
        cmocka_unit_test(test_settings_parsers),
        cmocka_unit_test(test_internal_helpers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Reference script (independent numpy implementation of docs/metrics.md; run once):

import numpy as np, math
from fractions import Fraction
P=np.array([[0.3,0.3,0.2,0.2],[0.7,0.1,0.1,0.1],[1.0,0,0,0],[0.25,0.25,0.25,0.25],[0.1,0.65,0.15,0.1]])
y=np.array([1,0,0,0,2])
N,K=P.shape
Y=np.eye(K)[y]
def ubin(x,M):
    # (i/M,(i+1)/M], exact via Fractions
    # edges are the doubles i/M (correctly rounded division), compared as doubles
    for i in range(M):
        if x <= (i+1)/M and (i==0 or x > i/M): return i
    return M-1
def ece_scalar(v,t,M,dist='tvd'):
    b=np.array([ubin(x,M) for x in v]); out=[]
    for i in range(M):
        m=b==i
        if m.sum(): out.append((m.sum(), abs(v[m].mean()-t[m].mean())))
    w=np.array([c for c,_ in out])/len(v); g=np.array([d for _,d in out])
    e = math.sqrt((w*g*g).sum()) if dist=='l2' else (w*g).sum()
    return e, g.mean(), g.max()
print("nll", -np.mean(np.log(np.maximum(P[np.arange(N),y],1e-15))))
print("brier", np.mean(((P-Y)**2).sum(1)))
conf=P.max(1); pred=P.argmax(1); c=(pred==y).astype(float)
print("top1 M10", ece_scalar(conf,c,10), "l2", ece_scalar(conf,c,10,'l2')[0])
for k in range(K): print("class",k, ece_scalar(P[:,k],Y[:,k],10))
print("classwise", np.mean([ece_scalar(P[:,k],Y[:,k],10) for k in range(K)],axis=0))
# SCE with M=15
print("sce15", np.mean([ece_scalar(P[:,k],Y[:,k],15)[0] for k in range(K)]))
# top-k lens (k=2), ties by lower index first
def topk(P,y,k):
    idx=np.argsort(-P,axis=1,kind='stable')[:,:k]
    o=np.take_along_axis(P,idx,1); t=(idx==y[:,None]).astype(float)
    return np.hstack([o,1-o.sum(1,keepdims=True)]), np.hstack([t,1-t.sum(1,keepdims=True)])
def dist(a,b,d):
    x=np.abs(a-b)
    return {'tvd':0.5*x.sum(),'l2':math.sqrt((x*x).sum()),'max':x.max()}[d]
def grid(O,T,M,d):
    keys=[tuple(ubin(x,M) for x in row[:-1]) for row in O]
    out=[]
    for key in sorted(set(keys)):
        m=np.array([kk==key for kk in keys])
        out.append((m.sum(), dist(O[m].mean(0),T[m].mean(0),d)))
    w=np.array([c for c,_ in out])/len(O); g=np.array([x for _,x in out])
    e = math.sqrt((w*g*g).sum()) if d=='l2' else (w*g).sum()
    return e, g.mean(), g.max(), len(out)
def kd(O,T,gamma,d):
    n=len(O); ms=round(n*gamma); leaves=[]
    def split(ix):
        if len(ix) < ms: leaves.append(ix); return
        X=O[ix]; ax=np.argmax(X.var(0)); thr=X[:,ax].mean(); low=X[:,ax]<thr
        if low.sum()==0 or low.sum()==len(ix): leaves.append(ix); return
        split(ix[low]); split(ix[~low])
    split(np.arange(n))
    out=[(len(l), dist(O[l].mean(0),T[l].mean(0),d)) for l in leaves]
    w=np.array([c for c,_ in out])/n; g=np.array([x for _,x in out])
    e = math.sqrt((w*g*g).sum()) if d=='l2' else (w*g).sum()
    return e, g.mean(), g.max(), len(out)
O,T=topk(P,y,2)
for d in ['tvd','l2','max']:
    print("top2 grid M10",d, grid(O,T,10,d))
    print("top2 kd g0.2",d, kd(O,T,0.2,d))
    print("full grid M4",d, grid(P,Y,4,d))
    print("full kd g0.3",d, kd(P,Y,0.3,d))
print("=== D2")
rng=np.random.default_rng(7)
A=np.round(rng.dirichlet([1,1,1,1,1]*1,size=12)*100)/100
A[:,4]=np.round(1-A[:,:4].sum(1),2)
A=np.clip(A,0,1)
A=A/ A.sum(1,keepdims=True)  # may not be short decimals; print repr
y2=rng.integers(0,5,size=12)
for r,l in zip(A,y2): print("{" + ", ".join(repr(float(x)) for x in r) + "},", l)
Y2=np.eye(5)[y2]
g=[[0,1],[2,3,4]]
G=np.stack([A[:,gg].sum(1) for gg in g],1); GT=np.stack([Y2[:,gg].sum(1) for gg in g],1)
for d in ['tvd','l2','max']:
    print("group grid M5",d, grid(G,GT,5,d))
    print("group kd g0.5",d, kd(G,GT,0.5,d))
    print("full kd g0.5",d, kd(A,Y2,0.5,d))
    O,T=topk(A,y2,2); print("top2 kd g0.5",d,kd(O,T,0.5,d))
conf=A.max(1); c=(A.argmax(1)==y2).astype(float)
def mass(v,t,M):
    o=np.argsort(v,kind='stable'); out=[]
    for grp in np.array_split(o,M):
        if len(grp): out.append((len(grp), abs(v[grp].mean()-t[grp].mean())))
    w=np.array([a for a,_ in out])/len(v); gg=np.array([b for _,b in out]); return (w*gg).sum(), gg.mean(), gg.max()
print("top1 mass M3", mass(conf,c,3))
print("top1 mass M15", mass(conf,c,15))
print("top1 kd1d g0.3", kd(conf[:,None],c[:,None],0.3,'max'))
def Phi(z): return 0.5*math.erfc(-z/math.sqrt(2))
def rece(v,t,M,s):
    C=np.zeros(M);Acc=np.zeros(M)
    for cj,aj in zip(v,t):
        w=np.array([Phi(((i+1)/M-cj)/s)-Phi((i/M-cj)/s) for i in range(M)]); w/=w.sum()
        C+=w*cj; Acc+=w*aj
    return np.abs(Acc-C).sum()/len(v)
print("rece top1 M15 s0.1", rece(conf,c,15,0.1))
print("rece class2 M10 s0.05", rece(A[:,2],Y2[:,2],10,0.05))
print("rece classwise M15 s0.1", np.mean([rece(A[:,k],Y2[:,k],15,0.1) for k in range(5)]))
print("rece top1 D1 M10 s0.2", rece(P.max(1),(P.argmax(1)==y).astype(float),10,0.2))

*/
