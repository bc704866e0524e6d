/* Metrics from a statistics file against the row engine on the same voxels: values, bin
 * tables, per-case metrics and histograms for every exact lens / M / distance; selections on
 * cases; refusals with their messages; resampling over cases (deterministic, thread-count
 * independent, and exact on identical cases); paired comparison. */
#include "support/cs_test.h"
#include "support/seg_data.h"
#include "support/seg_kernel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calscope/measure.h"
#include "calscope/segmeasure.h"

static void settings(cs_settings *s, const char *lens, int M, const char *dist)
{
    cs_error err;
    cs_settings_default(s);
    assert_int_equal(cs_settings_set_lens(s, lens, &err), CS_OK);
    assert_int_equal(cs_settings_set_distance(s, dist, &err), CS_OK);
    s->bins = M;
}

static void same_double(double a, double b, const char *what)
{
    if (isnan(a) && isnan(b)) return;
    if (!(fabs(a - b) <= 1e-12)) fail_msg("%s: rows %.17g, statistics %.17g", what, a, b);
}

static void same_result(const cs_result *r, const cs_result *g)
{
    assert_int_equal(r->n, g->n);
    same_double(r->accuracy, g->accuracy, "accuracy");
    same_double(r->ece, g->ece, "ece");
    same_double(r->ace, g->ace, "ace");
    same_double(r->mce, g->mce, "mce");
    same_double(r->brier, g->brier, "brier");
    same_double(r->nll, g->nll, "nll");
    same_double(r->sce, g->sce, "sce");
    assert_true(isnan(g->aece) && isnan(g->rece_g) && isnan(g->rece_m));
    assert_int_equal(r->n_bins, g->n_bins);
    for (size_t b = 0; b < r->n_bins; b++) {
        assert_int_equal(r->bins[b].count, g->bins[b].count);
        assert_true(r->bins[b].lo == g->bins[b].lo && r->bins[b].hi == g->bins[b].hi);
        same_double(r->bins[b].conf, g->bins[b].conf, "bin conf");
        same_double(r->bins[b].acc, g->bins[b].acc, "bin acc");
        same_double(r->bins[b].gap, g->bins[b].gap, "bin gap");
    }
}

static void same_cases(const cs_case_metrics *r, const cs_case_metrics *g)
{
    assert_int_equal(r->n_cases, g->n_cases);
    for (size_t i = 0; i < r->n_cases; i++) {
        assert_int_equal(r->case_index[i], g->case_index[i]);
        assert_int_equal(r->count[i], g->count[i]);
        same_double(r->ece[i], g->ece[i], "case ece");
        same_double(r->ace[i], g->ace[i], "case ace");
        same_double(r->mce[i], g->mce[i], "case mce");
    }
    same_double(r->ece_stat.mean, g->ece_stat.mean, "ece mean");
    same_double(r->ece_stat.sd, g->ece_stat.sd, "ece sd");
    same_double(r->ace_stat.mean, g->ace_stat.mean, "ace mean");
    same_double(r->ace_stat.sd, g->ace_stat.sd, "ace sd");
    same_double(r->mce_stat.mean, g->mce_stat.mean, "mce mean");
    same_double(r->mce_stat.sd, g->mce_stat.sd, "mce sd");
    same_double(r->pooled_ece, g->pooled_ece, "pooled ece");
    same_double(r->pooled_ace, g->pooled_ace, "pooled ace");
    same_double(r->pooled_mce, g->pooled_mce, "pooled mce");
    assert_int_equal(r->k, g->k);
    assert_int_equal(r->m, g->m);
    assert_memory_equal(r->hist, g->hist, r->k * r->m * r->m * sizeof *r->hist);
}

/* Both engines under one setting; returns how many histogram cells were non-zero. */
static size_t compare_one(const cs_dataset *d, const cs_segstats *st, const cs_settings *s)
{
    cs_measure_request q;
    memset(&q, 0, sizeof q);
    q.parts = CS_MEASURE_CASES;
    cs_run run = { .threads = 1, .cancel = NULL, .progress_ppm = NULL };
    cs_measurement r, g;
    cs_error err;
    assert_int_equal(cs_measure(d, s, &q, &run, &r, &err), CS_OK);
    cs_status rc = cs_segstats_measure(st, s, &q, &run, &g, &err);
    if (rc) fail_msg("%s", err.msg);
    assert_int_equal(r.selected, g.selected);
    assert_true(r.has_cases && g.has_cases);
    same_result(&r.result, &g.result);
    same_cases(&r.cases, &g.cases);
    size_t nz = 0;
    for (size_t i = 0; i < g.cases.k * g.cases.m * g.cases.m; i++) nz += g.cases.hist[i] != 0;
    cs_measurement_free(&r);
    cs_measurement_free(&g);
    return nz;
}

static void test_exact_against_rows(void **state)
{
    (void)state;
    cs_test_seg *g = cs_test_seg_random(6, 4, 150, 11, 0);
    cs_segstats *st = cs_test_seg_stats(g, 300);
    cs_dataset *d = cs_test_seg_dataset(g);
    const char *lenses[] = { "top1", "classwise", "class:c2", "class:0" };
    const int Ms[] = { 5, 10, 15, 20, 30, 50, 100, 300 };
    const char *dists[] = { "tvd", "l2", "max", "interval:0.2,0.8" };
    size_t runs = 0;
    for (size_t l = 0; l < 4; l++)
        for (size_t m = 0; m < 8; m++)
            for (size_t x = 0; x < 4; x++) {
                cs_settings s;
                settings(&s, lenses[l], Ms[m], dists[x]);
                assert_true(compare_one(d, st, &s) > 0);
                runs++;
            }
    assert_int_equal(runs, 128);
    /* selections on cases */
    const char *sel[] = { "case in {case01, case03}", "case != case02 and case != CASE04",
                          "case == case05" };
    for (size_t i = 0; i < 3; i++) {
        cs_settings s;
        settings(&s, "classwise", 15, "tvd");
        snprintf(s.select, sizeof s.select, "%s", sel[i]);
        compare_one(d, st, &s);
        settings(&s, "top1", 10, "l2");
        snprintf(s.select, sizeof s.select, "%s", sel[i]);
        compare_one(d, st, &s);
    }
    cs_dataset_free(d);
    cs_segstats_free(st);
    cs_test_seg_free(g);
}

/* The values hold after a write/read round trip too (what `report STATS` measures). */
static void test_exact_after_round_trip(void **state)
{
    (void)state;
    cs_test_seg *g = cs_test_seg_random(3, 3, 200, 5, 0);
    cs_segstats *st = cs_test_seg_stats(g, 60);
    cs_dataset *d = cs_test_seg_dataset(g);
    const char *path = cs_test_tmpfile(".stats.csv.gz", "", 0);
    cs_error err;
    assert_int_equal(cs_segstats_write(st, path, &err), CS_OK);
    cs_segstats *back = NULL;
    assert_int_equal(cs_segstats_read(path, &back, &err), CS_OK);
    cs_settings s;
    settings(&s, "classwise", 20, "tvd");
    compare_one(d, back, &s);
    settings(&s, "top1", 60, "tvd");
    compare_one(d, back, &s);
    cs_segstats_free(back);
    cs_dataset_free(d);
    cs_segstats_free(st);
    cs_test_seg_free(g);
}

/* Regions, worked by hand: A = {1,2}, B = {2}; voxels (pA, pB, label) (.9,.1,1) (.2,.2,0)
 * (.6,.7,2); F = M = 10. */
static void test_regions_by_hand(void **state)
{
    (void)state;
    const double pa[] = { 0.9, 0.2, 0.6 }, pb[] = { 0.1, 0.2, 0.7 };
    const int32_t lab[] = { 1, 0, 2 };
    const uint8_t member[] = { 0, 0, 1, 0, 1, 1 };
    const double *planes[] = { pa, pb };
    cs_segstats *st = cs_segstats_new(10, CS_SEG_REGIONS, 2, (const char *const[]){ "A", "B" },
                                      "A=1,2;B=2", 1);
    st->case_names[0] = strdup("x");
    cs_test_seg_add_voxels(st, 0, planes, lab, member, 3);
    cs_settings s;
    settings(&s, "classwise", 10, "tvd");
    cs_measure_request q;
    memset(&q, 0, sizeof q);
    cs_measurement m;
    cs_error err;
    assert_int_equal(cs_segstats_measure(st, &s, &q, NULL, &m, &err), CS_OK);
    /* A: gaps .1 .2 .4 -> .7/3; B: gaps .1 .2 .3 -> .6/3 */
    assert_double_near(m.result.ece, (0.7 / 3 + 0.6 / 3) / 2, 1e-15);
    assert_double_near(m.result.mce, (0.4 + 0.3) / 2, 1e-15);
    assert_double_near(m.result.brier, (0.01 + 0.04 + 0.16 + 0.01 + 0.04 + 0.09) / 3, 1e-15);
    assert_double_near(m.result.nll, (-log(0.9) - log(0.8) - log(0.6) - log(0.9) - log(0.8) -
                                      log(0.7)) / 3, 1e-15);
    assert_true(isnan(m.result.accuracy));
    cs_measurement_free(&m);
    settings(&s, "class:B", 10, "tvd");
    assert_int_equal(cs_segstats_measure(st, &s, &q, NULL, &m, &err), CS_OK);
    assert_double_near(m.result.ece, 0.6 / 3, 1e-15);
    cs_measurement_free(&m);
    settings(&s, "top1", 10, "tvd");
    assert_int_equal(cs_segstats_measure(st, &s, &q, NULL, &m, &err), CS_EUSAGE);
    assert_string_equal(err.msg, "top-1 is undefined for independent sigmoid regions; use --lens"
                                 " classwise or class:C");
    cs_measurement_free(&m);
    cs_segstats_free(st);
}

static void expect_refusal(const cs_segstats *st, const cs_settings *s, const cs_measure_request *q,
                           const char *msg)
{
    cs_measurement m;
    cs_error err;
    assert_int_equal(cs_segstats_measure(st, s, q, NULL, &m, &err), CS_EUSAGE);
    assert_string_equal(err.msg, msg);
    assert_int_equal(m.evaluated, 0);
    cs_measurement_free(&m);
}

static void test_refusals(void **state)
{
    (void)state;
    cs_test_seg *g = cs_test_seg_random(3, 3, 40, 3, 0);
    cs_segstats *st = cs_test_seg_stats(g, 300);
    cs_measure_request q;
    memset(&q, 0, sizeof q);
    cs_settings s;
    cs_error err;
    settings(&s, "top1", 7, "tvd");
    expect_refusal(st, &s, &q, "--bins 7 does not divide the statistics' fine resolution 300 (use"
                   " one of 1 2 3 4 5 6 10 12 15 20 25 30 50 60 75 100 150 300)");
    settings(&s, "top1", 15, "tvd");
    s.binning = CS_BIN_MASS;
    expect_refusal(st, &s, &q, "--binning mass: equal-mass bins need the voxels' order; a"
                   " statistics file keeps per-bin sums");
    s.binning = CS_BIN_KDTREE;
    expect_refusal(st, &s, &q, "--binning kdtree: k-d-tree cells need the voxels' order; a"
                   " statistics file keeps per-bin sums");
    settings(&s, "topk:2", 15, "tvd");
    expect_refusal(st, &s, &q, "--lens topk:2: a vector lens needs each voxel's probability"
                   " vector; a statistics file keeps per-bin sums per class (use --lens top1,"
                   " classwise or class:C)");
    settings(&s, "full", 15, "tvd");
    expect_refusal(st, &s, &q, "--lens full: a vector lens needs each voxel's probability"
                   " vector; a statistics file keeps per-bin sums per class (use --lens top1,"
                   " classwise or class:C)");
    settings(&s, "class:dog", 15, "tvd");
    expect_refusal(st, &s, &q, "--lens class: unknown class 'dog' (3 classes)");
    settings(&s, "top1", 15, "tvd");
    snprintf(s.select, sizeof s.select, "case == case01 and conf > 0.5");
    expect_refusal(st, &s, &q, "selection: a statistics file keeps per-bin sums per case; only"
                   " `case` conditions apply");
    snprintf(s.select, sizeof s.select, "case == nope");
    cs_measurement m;
    assert_int_equal(cs_segstats_measure(st, &s, &q, NULL, &m, &err), CS_EUSAGE);
    assert_non_null(strstr(err.msg, "selection: unknown case 'nope'"));
    s.select[0] = '\0';
    q.parts = CS_MEASURE_CI;
    q.ci_repeats = 10;
    q.ci_metrics = CS_METRIC_BIT(CS_METRIC_ECE) | CS_METRIC_BIT(CS_METRIC_RECE_G);
    expect_refusal(st, &s, &q, "--ci: rece_g cannot be computed from a statistics file (its kernel"
                   " needs each voxel's confidence; a statistics file keeps per-bin sums)");
    q.ci_metrics = CS_METRIC_BIT(CS_METRIC_RECE_M);
    expect_refusal(st, &s, &q, "--ci: rece_m cannot be computed from a statistics file (it needs"
                   " test-time augmentation rows; a statistics file keeps per-bin sums)");
    q.ci_metrics = CS_METRIC_BIT(CS_METRIC_AECE);
    expect_refusal(st, &s, &q, "--ci: aece cannot be computed from a statistics file (equal-mass"
                   " bins need the voxels' order; a statistics file keeps per-bin sums)");
    q.parts = CS_MEASURE_LIKERT;
    expect_refusal(st, &s, &q, "the Likert table needs each voxel's confidence; a statistics file"
                   " keeps per-bin sums");
    int k2 = 2;
    q.parts = CS_MEASURE_TOPK;
    q.topk = &k2;
    q.n_topk = 1;
    expect_refusal(st, &s, &q, "top-k bars need each voxel's probability vector; a statistics file"
                   " keeps per-bin sums per class");
    memset(&q, 0, sizeof q);
    q.parts = CS_MEASURE_CURVE;
    q.curve_kind = CS_CURVE_BINS;
    cs_curve_options_bins_default(&q.curve, 0);
    q.curve.repeats = 5;
    q.curve.n_points = 2;
    q.curve.x[0] = 10;
    q.curve.x[1] = 7;
    q.curve.metrics = CS_METRIC_BIT(CS_METRIC_ECE);
    assert_int_equal(cs_segstats_measure(st, &s, &q, NULL, &m, &err), CS_EUSAGE);
    assert_string_equal(err.msg, "--bins 7 does not divide the statistics' fine resolution 300"
                        " (use one of 1 2 3 4 5 6 10 12 15 20 25 30 50 60 75 100 150 300)");
    assert_null(m.curve);
    cs_measurement_free(&m);
    /* a selection keeping only empty cases: nothing to measure */
    uint8_t keep[3] = { 0, 1, 0 };
    cs_segstats *one = cs_segstats_subset(st, keep);
    one->voxels[0] = 0;
    memset(one->cnt, 0, 3 * 300 * sizeof *one->cnt);
    memset(one->t_cnt, 0, 300 * sizeof *one->t_cnt);
    memset(&q, 0, sizeof q);
    assert_int_equal(cs_segstats_measure(one, &s, &q, NULL, &m, &err), CS_EEMPTY);
    assert_int_equal(m.selected, 0);
    cs_measurement_free(&m);
    cs_segstats_free(one);
    cs_segstats_free(st);
    cs_test_seg_free(g);
}

/* The resampling rules both engines take from one place (resample/curve_build.c): the same
 * request refused with the same words by the rows of a file and by its statistics. */
static void both_refuse(const cs_dataset *d, const cs_segstats *st, const cs_settings *s,
                        const cs_measure_request *q, const char *msg)
{
    cs_measurement m;
    cs_error err;
    assert_int_equal(cs_measure(d, s, q, NULL, &m, &err), CS_EUSAGE);
    assert_string_equal(err.msg, msg);
    assert_null(m.curve);
    assert_int_equal(m.has_ci, 0);
    cs_measurement_free(&m);
    assert_int_equal(cs_segstats_measure(st, s, q, NULL, &m, &err), CS_EUSAGE);
    assert_string_equal(err.msg, msg);
    assert_null(m.curve);
    assert_int_equal(m.has_ci, 0);
    cs_measurement_free(&m);
}

static void test_resampling_rules_shared(void **state)
{
    (void)state;
    cs_test_seg *g = cs_test_seg_random(4, 3, 60, 5, 0);
    cs_segstats *st = cs_test_seg_stats(g, 300);
    cs_dataset *d = cs_test_seg_dataset(g);
    cs_settings s;
    settings(&s, "top1", 15, "tvd");
    cs_measure_request q;
    for (int kind = 0; kind < 2; kind++) {
        memset(&q, 0, sizeof q);
        q.parts = CS_MEASURE_CURVE;
        q.curve_kind = kind ? CS_CURVE_BINS : CS_CURVE_SIZE;
        if (kind) cs_curve_options_bins_default(&q.curve, 0);
        else cs_curve_options_size_default(&q.curve);
        q.curve.repeats = 5;
        q.curve.metrics = CS_METRIC_BIT(CS_METRIC_ECE);
        cs_curve_options ok = q.curve;
        q.curve.n_points = 0;
        both_refuse(d, st, &s, &q, "a curve needs 1 to 32 points");
        q.curve.n_points = CS_CURVE_MAX_POINTS + 1;
        both_refuse(d, st, &s, &q, "a curve needs 1 to 32 points");
        q.curve = ok;
        q.curve.metrics = 0;
        both_refuse(d, st, &s, &q, "no metric selected for the curve");
        q.curve = ok;
        q.curve.repeats = 0;
        both_refuse(d, st, &s, &q, "repeats must be between 1 and 1000000 (got 0)");
        q.curve.repeats = 1000001;
        both_refuse(d, st, &s, &q, "repeats must be between 1 and 1000000 (got 1000001)");
    }
    memset(&q, 0, sizeof q);
    q.parts = CS_MEASURE_CI;
    q.ci_metrics = CS_METRIC_BIT(CS_METRIC_ECE);
    q.ci_repeats = 1000001;     /* (0 or less asks for no interval: cs_measure_request) */
    both_refuse(d, st, &s, &q, "repeats must be between 1 and 1000000 (got 1000001)");
    /* the paired comparisons: rows (cs_compare_run) and cases (cs_segstats_compare) */
    cs_compare cmp;
    cs_error err;
    assert_int_equal(cs_compare_run(d, d, &s, CS_METRICS_DEFAULT, 0, 1, NULL, &cmp, &err), CS_EUSAGE);
    assert_string_equal(err.msg, "repeats must be between 1 and 1000000 (got 0)");
    assert_int_equal(cs_segstats_compare(st, "a", st, "b", &s, CS_METRICS_DEFAULT, 0, 1, NULL, &cmp,
                                         &err), CS_EUSAGE);
    assert_string_equal(err.msg, "repeats must be between 1 and 1000000 (got 0)");
    cs_dataset_free(d);
    cs_segstats_free(st);
    cs_test_seg_free(g);
}

static void run_ci(const cs_segstats *st, const cs_settings *s, int threads, cs_ci_method method,
                   cs_measurement *m)
{
    cs_measure_request q;
    memset(&q, 0, sizeof q);
    q.parts = CS_MEASURE_CI;
    q.ci_repeats = 64;
    q.ci_method = method;
    q.seed = 42;
    q.ci_metrics = CS_METRICS_DEFAULT;
    cs_run run = { .threads = threads, .cancel = NULL, .progress_ppm = NULL };
    cs_error err;
    cs_status rc = cs_segstats_measure(st, s, &q, &run, m, &err);
    if (rc) fail_msg("%s", err.msg);
    assert_true(m->has_ci);
}

static void test_bootstrap_cases(void **state)
{
    (void)state;
    cs_test_seg *g = cs_test_seg_random(9, 4, 50, 21, 0);
    cs_segstats *st = cs_test_seg_stats(g, 300);
    cs_settings s;
    settings(&s, "classwise", 15, "tvd");
    for (int method = 0; method < CS_CI_METHOD_COUNT; method++) {
        cs_measurement a, b, c;
        run_ci(st, &s, 1, (cs_ci_method)method, &a);
        run_ci(st, &s, 2, (cs_ci_method)method, &b);
        run_ci(st, &s, 1, (cs_ci_method)method, &c);
        assert_memory_equal(&a.ci, &b.ci, sizeof a.ci);   /* threads do not matter */
        assert_memory_equal(&a.ci, &c.ci, sizeof a.ci);   /* deterministic */
        /* exact metrics only: accuracy ece ace mce sce brier nll */
        assert_int_equal(a.ci.metrics, CS_METRIC_BIT(CS_METRIC_ACCURACY) | CS_METRIC_BIT(CS_METRIC_ECE) |
                         CS_METRIC_BIT(CS_METRIC_ACE) | CS_METRIC_BIT(CS_METRIC_MCE) | CS_METRIC_BIT(CS_METRIC_SCE) |
                         CS_METRIC_BIT(CS_METRIC_BRIER) | CS_METRIC_BIT(CS_METRIC_NLL));
        assert_double_near(a.ci.value[CS_METRIC_ECE], a.result.ece, 0);
        assert_true(a.ci.lo[CS_METRIC_BRIER] < a.ci.hi[CS_METRIC_BRIER]);
        if (method == CS_CI_BCA) assert_int_equal(a.ci.jack_groups, 9);
        cs_measurement_free(&a);
        cs_measurement_free(&b);
        cs_measurement_free(&c);
    }
    cs_segstats_free(st);
    cs_test_seg_free(g);

    /* Property: with every case the same, every resample is the full value. */
    g = cs_test_seg_random(7, 3, 80, 4, 1);
    st = cs_test_seg_stats(g, 60);
    const char *lenses[] = { "top1", "classwise", "class:1" };
    for (size_t l = 0; l < 3; l++) {
        settings(&s, lenses[l], 12, "tvd");
        cs_measurement a;
        run_ci(st, &s, 2, CS_CI_PERCENTILE, &a);
        for (int id = 0; id < CS_METRIC_COUNT; id++) {
            if (!(a.ci.metrics & CS_METRIC_BIT(id))) continue;
            assert_double_near(a.ci.lo[id], a.ci.value[id], 1e-12);
            assert_double_near(a.ci.hi[id], a.ci.value[id], 1e-12);
            assert_double_near(a.ci.boot_mean[id], a.ci.value[id], 1e-12);
        }
        cs_measurement_free(&a);
    }
    cs_segstats_free(st);
    cs_test_seg_free(g);
}

static cs_curve *run_curve(const cs_segstats *st, const cs_settings *s, cs_curve_kind kind,
                           int threads)
{
    cs_measure_request q;
    memset(&q, 0, sizeof q);
    q.parts = CS_MEASURE_CURVE;
    q.curve_kind = kind;
    if (kind == CS_CURVE_SIZE) cs_curve_options_size_default(&q.curve);
    else cs_curve_options_bins_default(&q.curve, 0);
    q.curve.repeats = 30;
    q.curve.seed = 9;
    cs_run run = { .threads = threads, .cancel = NULL, .progress_ppm = NULL };
    cs_measurement m;
    cs_error err;
    cs_status rc = cs_segstats_measure(st, s, &q, &run, &m, &err);
    if (rc) fail_msg("%s", err.msg);
    cs_curve *c = m.curve;
    m.curve = NULL;
    cs_measurement_free(&m);
    return c;
}

static void test_curves_over_cases(void **state)
{
    (void)state;
    cs_test_seg *g = cs_test_seg_random(20, 3, 30, 8, 0);
    cs_segstats *st = cs_test_seg_stats(g, 300);
    cs_settings s;
    settings(&s, "top1", 10, "tvd");
    cs_curve *a = run_curve(st, &s, CS_CURVE_SIZE, 1), *b = run_curve(st, &s, CS_CURVE_SIZE, 2);
    assert_int_equal(a->n_points, 6);
    assert_int_equal(a->n_samples, 20);              /* cases */
    assert_int_equal(a->points[0].rows, 1);          /* 1 % of 20 cases: 1 case */
    assert_int_equal(a->points[2].rows, 2);          /* 10 %: 2 cases */
    assert_int_equal(a->points[5].rows, 20);
    /* all cases without replacement: the full value, no spread */
    assert_double_near(a->points[5].stat[CS_METRIC_ECE].mean, a->points[5].full[CS_METRIC_ECE], 1e-15);
    assert_double_near(a->points[5].stat[CS_METRIC_ECE].sd, 0, 1e-15);
    assert_true(a->points[1].stat[CS_METRIC_ECE].sd > 0);
    for (size_t i = 0; i < a->n_points; i++)
        assert_memory_equal(&a->points[i], &b->points[i], sizeof a->points[i]);
    cs_curve_free(a);
    cs_curve_free(b);
    a = run_curve(st, &s, CS_CURVE_BINS, 1);
    b = run_curve(st, &s, CS_CURVE_BINS, 2);
    /* the default M list keeps the divisors of 300: 5 10 15 20 30 50 100 */
    assert_int_equal(a->n_points, 7);
    assert_double_near(a->points[6].x, 100, 0);
    uint64_t voxels = 0;
    for (size_t c = 0; c < st->n_cases; c++) voxels += st->voxels[c];
    assert_int_equal(a->n_samples, voxels);          /* voxels: the stability rule counts them */
    assert_int_equal(a->points[0].rows, voxels);
    for (size_t i = 0; i < a->n_points; i++)
        assert_memory_equal(&a->points[i], &b->points[i], sizeof a->points[i]);
    assert_int_equal(a->stable_first, b->stable_first);
    assert_true(isnan(a->sweep_bins));                 /* no sweep on statistics */
    cs_curve_free(a);
    cs_curve_free(b);
    cs_segstats_free(st);
    cs_test_seg_free(g);
}

static void test_compare(void **state)
{
    (void)state;
    cs_test_seg *ga = cs_test_seg_random(8, 3, 60, 1, 0), *gb = cs_test_seg_random(8, 3, 60, 2, 0);
    cs_segstats *a = cs_test_seg_stats(ga, 300), *b = cs_test_seg_stats(gb, 300);
    cs_settings s;
    settings(&s, "classwise", 15, "tvd");
    cs_compare c1, c2, self;
    cs_error err;
    cs_run r1 = { .threads = 1, .cancel = NULL, .progress_ppm = NULL };
    cs_run r2 = { .threads = 2, .cancel = NULL, .progress_ppm = NULL };
    assert_int_equal(cs_segstats_compare(a, "A", b, "B", &s, 0, 100, 3, &r1, &c1, &err), CS_OK);
    assert_int_equal(cs_segstats_compare(a, "A", b, "B", &s, 0, 100, 3, &r2, &c2, &err), CS_OK);
    assert_memory_equal(&c1, &c2, sizeof c1);
    assert_int_equal(c1.n_pairs, 8);
    assert_int_equal(c1.by_id, 1);
    assert_int_equal(c1.n_entries, 7);
    /* the entries' values are the files' own values */
    cs_measure_request q;
    memset(&q, 0, sizeof q);
    cs_measurement ma, mb;
    assert_int_equal(cs_segstats_measure(a, &s, &q, NULL, &ma, &err), CS_OK);
    assert_int_equal(cs_segstats_measure(b, &s, &q, NULL, &mb, &err), CS_OK);
    for (size_t i = 0; i < c1.n_entries; i++) {
        if (c1.entries[i].metric != CS_METRIC_ECE) continue;
        assert_double_near(c1.entries[i].a, ma.result.ece, 0);
        assert_double_near(c1.entries[i].b, mb.result.ece, 0);
        assert_true(c1.entries[i].lo <= c1.entries[i].diff + 1e-12 || c1.entries[i].hi >= c1.entries[i].diff);
    }
    cs_measurement_free(&ma);
    cs_measurement_free(&mb);
    /* a file against itself: every resample tied */
    assert_int_equal(cs_segstats_compare(a, "A", a, "A2", &s, 0, 50, 3, &r2, &self, &err), CS_OK);
    for (size_t i = 0; i < self.n_entries; i++) assert_int_equal(self.entries[i].equal, 1);
    /* different case sets */
    uint8_t keep[8] = { 1, 1, 1, 0, 1, 1, 1, 1 };
    cs_segstats *fewer = cs_segstats_subset(b, keep);
    assert_int_equal(cs_segstats_compare(a, "A.csv", fewer, "B.csv", &s, 0, 10, 3, &r1, &c1, &err),
                     CS_EINPUT);
    assert_string_equal(err.msg, "A.csv: case 'case03' is not in B.csv (a paired comparison needs"
                                 " the same cases)");
    assert_int_equal(cs_segstats_compare(fewer, "B.csv", a, "A.csv", &s, 0, 10, 3, &r1, &c1, &err),
                     CS_EINPUT);
    assert_string_equal(err.msg, "A.csv: case 'case03' is not in B.csv (a paired comparison needs"
                                 " the same cases)");
    assert_int_equal(cs_segstats_compare(a, "A", b, "B", &s, CS_METRIC_BIT(CS_METRIC_RECE_G), 10, 3,
                                         &r1, &c1, &err), CS_EUSAGE);
    /* different classes, as the per-sample compare says it: the first class without a partner
     * at its column of line 5 (classes,K,NAME_0,...) of the file that has it */
    cs_test_seg *g4 = cs_test_seg_random(8, 4, 60, 3, 0);
    cs_segstats *four = cs_test_seg_stats(g4, 300);
    assert_int_equal(cs_segstats_compare(a, "A.csv", four, "B.csv", &s, 0, 10, 3, &r1, &c1, &err),
                     CS_EINPUT);
    assert_string_equal(err.msg, "B.csv:5:6: --compare: class 'c3' has no partner: A.csv has 3"
                                 " classes, B.csv has 4");
    strcpy(b->class_names[2], "cx");
    assert_int_equal(cs_segstats_compare(a, "A.csv", b, "B.csv", &s, 0, 10, 3, &r1, &c1, &err),
                     CS_EINPUT);
    assert_string_equal(err.msg, "B.csv:5:5: --compare: class 'cx' has no partner: class 2 of"
                                 " A.csv is 'c2'");
    strcpy(b->class_names[2], "c2");
    b->kind = CS_SEG_REGIONS;   /* its top-1 arrays stay: only the kind is compared here */
    assert_int_equal(cs_segstats_compare(a, "A.csv", b, "B.csv", &s, 0, 10, 3, &r1, &c1, &err),
                     CS_EINPUT);
    assert_string_equal(err.msg, "B.csv:3:2: --compare: A.csv holds softmax channels, B.csv"
                                 " regions (a paired comparison needs the same classes)");
    b->kind = CS_SEG_SOFTMAX;
    cs_segstats_free(four);
    cs_test_seg_free(g4);
    cs_segstats_free(fewer);
    cs_segstats_free(a);
    cs_segstats_free(b);
    cs_test_seg_free(ga);
    cs_test_seg_free(gb);
}

/* Progress reaches 1e6 on a finished run; a raised cancel flag ends a resampling part with
 * CS_ECANCELLED and no result. */
static void test_progress_and_cancel(void **state)
{
    (void)state;
    cs_test_seg *g = cs_test_seg_random(5, 3, 40, 6, 0);
    cs_segstats *st = cs_test_seg_stats(g, 60);
    cs_settings s;
    settings(&s, "top1", 10, "tvd");
    cs_measure_request q;
    memset(&q, 0, sizeof q);
    q.parts = CS_MEASURE_CI;
    q.ci_repeats = 20;
    atomic_int cancel = 0, ppm = -1;
    cs_run run = { .threads = 2, .cancel = &cancel, .progress_ppm = &ppm };
    cs_measurement m;
    cs_error err;
    assert_int_equal(cs_segstats_measure(st, &s, &q, &run, &m, &err), CS_OK);
    assert_int_equal(atomic_load(&ppm), 1000000);
    cs_measurement_free(&m);
    atomic_store(&cancel, 1);
    assert_int_equal(cs_segstats_measure(st, &s, &q, &run, &m, &err), CS_ECANCELLED);
    assert_string_equal(err.msg, "cancelled");
    assert_int_equal(m.has_ci, 0);
    cs_measurement_free(&m);
    q.parts = CS_MEASURE_CURVE;
    q.curve_kind = CS_CURVE_SIZE;
    cs_curve_options_size_default(&q.curve);
    assert_int_equal(cs_segstats_measure(st, &s, &q, &run, &m, &err), CS_ECANCELLED);
    assert_null(m.curve);
    cs_measurement_free(&m);
    cs_compare c;
    assert_int_equal(cs_segstats_compare(st, "A", st, "B", &s, 0, 10, 1, &run, &c, &err),
                     CS_ECANCELLED);
    cs_segstats_free(st);
    cs_test_seg_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_against_rows),
        cmocka_unit_test(test_exact_after_round_trip),
        cmocka_unit_test(test_regions_by_hand),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_resampling_rules_shared),
        cmocka_unit_test(test_bootstrap_cases),
        cmocka_unit_test(test_curves_over_cases),
        cmocka_unit_test(test_compare),
        cmocka_unit_test(test_progress_and_cancel),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
