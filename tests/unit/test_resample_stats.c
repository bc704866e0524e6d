/* The statistics around the resampling: ties from rounding noise (cs_metric_compare, method
 * rankings, paired comparisons), the places --compare's pairing refusals name, the interval
 * methods (BCa's formula worked by hand and with scipy's ndtr/ndtri, the grouped jackknife) and
 * the bins curve's samples-per-bin floor for stability claims. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calscope/resample.h"
#include "calscope/measure.h"
#include "calscope/load.h"
#include "calscope/methods.h"
#include "engine/resample/ci_internal.h"
#include "support/cs_test.h"

static double unif(cs_rng *r)
{
    return (double)(cs_rng_next(r) >> 11) / 9007199254740992.0;
}

/* n samples of 3 classes, random probabilities and labels; `noise` > 0 moves every
 * probability by up to that much (relative) and renormalises: the same model, rounded
 * differently. */
static cs_dataset *model(size_t n, uint64_t seed, double noise)
{
    cs_dataset *d = cs_test_dataset_new(n, 3);
    cs_rng r, q;
    cs_rng_seed(&r, seed, 1, 0, 0);
    cs_rng_seed(&q, seed, 2, 0, 0);
    for (size_t i = 0; i < n; i++) {
        double s = 0;
        for (int j = 0; j < 3; j++) {
            double v = 0.05 + unif(&r);
            v *= 1 + noise * (2 * unif(&q) - 1);
            d->prob[3 * i + j] = v;
            s += v;
        }
        for (int j = 0; j < 3; j++) d->prob[3 * i + j] /= s;
        d->label[i] = (int32_t)(unif(&r) * 3);
    }
    cs_test_prepare(d);
    return d;
}

static void test_tie_rule(void **state)
{
    (void)state;
    assert_double_near(cs_metric_tie_tol(0.5, 0.2), 1e-9, 0);
    assert_double_near(cs_metric_tie_tol(-30, 2), 30e-9, 1e-22);   /* scales with large values */
    assert_true(isnan(cs_metric_tie_tol(NAN, 1)));
    assert_int_equal(cs_metric_compare(CS_METRIC_ECE, 0.1, 0.1 + 1e-12), 0);
    assert_int_equal(cs_metric_compare(CS_METRIC_ECE, 0.1, 0.1 + 2e-9), 1);        /* lower wins */
    assert_int_equal(cs_metric_compare(CS_METRIC_ECE, 0.1 + 2e-9, 0.1), -1);
    assert_int_equal(cs_metric_compare(CS_METRIC_ACCURACY, 0.9, 0.8), 1);          /* higher wins */
    assert_int_equal(cs_metric_compare(CS_METRIC_NLL, 30, 30 + 2e-8), 0);          /* 30 · 1e-9 */
    assert_int_equal(cs_metric_compare(CS_METRIC_ECE, NAN, 0.1), 0);
    /* a paired interval of rounding noise excludes nothing; a real one does */
    assert_false(cs_methods_excludes_zero(1e-15, 3e-14));
    assert_false(cs_methods_excludes_zero(-3e-14, -1e-15));
    assert_true(cs_methods_excludes_zero(1e-6, 2e-6));
    assert_true(cs_methods_excludes_zero(-2e-6, -1e-6));
}

/* Rows 0 and 1 differ by rounding noise, row 2 is really better under ECE and worse under
 * Brier (where 0 and 1 are reversed by noise). */
static void test_rank_ties(void **state)
{
    (void)state;
    cs_method_row rows[3];
    memset(rows, 0, sizeof rows);
    const double ece[3] = { 0.05, 0.05 + 1e-14, 0.04 }, brier[3] = { 0.1, 0.1 - 1e-14, 0.2 };
    for (int i = 0; i < 3; i++) {
        rows[i].ok = 1;
        for (int c = 0; c < CS_METHODS_NCOL; c++) rows[i].v[c] = 0.3;
        rows[i].v[CS_METHODS_COL_ECE] = ece[i];
        rows[i].v[7] = brier[i];   /* the Brier column */
    }
    assert_string_equal(cs_methods_col_name(7), "brier");
    cs_methods t = { 3, rows, 0, 3, 2, 2, 0, 0, 0, 0, 0 };
    int rank[3];
    cs_methods_ranks(&t, CS_METHODS_COL_ECE, rank);
    assert_int_equal(rank[0], 2);
    assert_int_equal(rank[1], 2);
    assert_int_equal(rank[2], 1);
    cs_methods_ranks(&t, 7, rank);
    assert_int_equal(rank[0], 1);
    assert_int_equal(rank[1], 1);
    assert_int_equal(rank[2], 3);
    /* Brier orders 2 after 0 and 1 where ECE orders it first: a real disagreement */
    assert_true(cs_methods_ranking_differs(&t, 7));
    /* without row 2 the only "disagreement" is noise */
    t.n = 2;
    assert_false(cs_methods_ranking_differs(&t, 7));
    /* every column tied: everybody first */
    cs_methods_ranks(&t, 0, rank);
    assert_int_equal(rank[0], 1);
    assert_int_equal(rank[1], 1);
}

static void test_compare_noise_is_equal(void **state)
{
    (void)state;
    cs_dataset *a = model(800, 3, 0), *b = model(800, 3, 1e-14), *c = model(800, 3, 0.3);
    int differs = 0;
    for (size_t i = 0; i < 800 * 3; i++) differs += a->prob[i] != b->prob[i];
    assert_true(differs > 100);   /* the files really differ */
    cs_settings s;
    cs_settings_default(&s);
    cs_run run = { .threads = 2 };
    cs_compare cmp;
    cs_error err;
    assert_int_equal(cs_compare_run(a, b, &s, CS_METRICS_DEFAULT, 200, 4, &run, &cmp, &err), CS_OK);
    assert_int_equal(cmp.n_entries, 13);   /* every metric of the table but rece_m */
    for (size_t e = 0; e < cmp.n_entries; e++) {
        assert_true(cmp.entries[e].equal);
        assert_double_near(cmp.entries[e].p_better, 0, 0);
        assert_double_near(cmp.entries[e].p_equal, 1, 0);
    }
    /* a different model is not a tie */
    assert_int_equal(cs_compare_run(a, c, &s, CS_METRICS_DEFAULT, 200, 4, &run, &cmp, &err), CS_OK);
    for (size_t e = 0; e < cmp.n_entries; e++) {
        if (cmp.entries[e].metric == CS_METRIC_ACCURACY) continue;   /* may keep every argmax */
        assert_false(cmp.entries[e].equal);
        assert_true(cmp.entries[e].p_equal < 0.5);
        assert_double_near(cmp.entries[e].p_better + cmp.entries[e].p_equal <= 1, 1, 0);
    }
    cs_dataset_free(a);
    cs_dataset_free(b);
    cs_dataset_free(c);
}

/* The loader records each row's physical line and the header columns, on both paths. */
static void test_loader_places(void **state)
{
    (void)state;
    static const char text[] = "x,label,p_a,id,p_b\n"
                               "1,0,0.9,r1,0.1\n"
                               "\n"
                               "2,1,0.2,r2,0.8\n"
                               "3,5,0.5,r3,0.5\n"     /* label out of range: skipped */
                               "4,1,0.4,r4,0.6\n";
    for (int csv = 0; csv < 2; csv++) {
        if (csv) setenv("CALSCOPE_LOADER", "csv", 1);
        cs_load_options o;
        cs_load_options_default(&o);
        o.skip_bad_rows = 1;
        cs_error err;
        cs_dataset *d = cs_load_buffer("t.csv", text, sizeof text - 1, &o, NULL, &err);
        assert_non_null(d);
        assert_int_equal(d->n, 3);
        assert_non_null(d->line);
        assert_int_equal(d->line[0], 2);
        assert_int_equal(d->line[1], 4);
        assert_int_equal(d->line[2], 6);
        assert_int_equal(d->header_line, 1);
        assert_int_equal(d->label_col, 2);
        assert_int_equal(d->id_col, 4);
        assert_int_equal(d->class_col[0], 3);
        assert_int_equal(d->class_col[1], 5);
        cs_dataset_free(d);
    }
    unsetenv("CALSCOPE_LOADER");
}

static cs_dataset *load(const char *name, const char *text)
{
    cs_load_options o;
    cs_load_options_default(&o);
    cs_error err;
    cs_dataset *d = cs_load_buffer(name, text, strlen(text), &o, NULL, &err);
    assert_non_null(d);
    return d;
}

static void expect_pair_error(const cs_dataset *a, const cs_dataset *b, const char *msg, long line, long col)
{
    cs_error err;
    cs_error_clear(&err);
    assert_int_equal(cs_compare_pair(a, b, NULL, NULL, &err), CS_EINPUT);
    assert_string_equal(err.msg, msg);
    assert_int_equal(err.line, line);
    assert_int_equal(err.col, col);
}

static void test_pair_places(void **state)
{
    (void)state;
    cs_dataset *a = load("a.csv", "id,label,p_x,p_y\n7,0,0.9,0.1\n8,1,0.2,0.8\n9,1,0.3,0.7\n");
    cs_dataset *k3 = load("k3.csv", "label,id,p_x,p_y,p_z\n0,7,0.8,0.1,0.1\n1,8,0.1,0.8,0.1\n1,9,0.1,0.8,0.1\n");
    expect_pair_error(a, k3, "k3.csv:1:5: --compare: class 'z' has no partner: a.csv has 2 classes, k3.csv has 3", 1, 5);
    expect_pair_error(k3, a, "k3.csv:1:5: --compare: class 'z' has no partner: k3.csv has 3 classes, a.csv has 2", 1, 5);
    cs_dataset *miss = load("m.csv", "id,label,p_x,p_y\n9,1,0.3,0.7\n\n7,0,0.9,0.1\n6,1,0.2,0.8\n");
    expect_pair_error(a, miss, "a.csv:3:1: --compare: id '8' is not in m.csv", 3, 1);
    expect_pair_error(miss, a, "m.csv:5:1: --compare: id '6' is not in a.csv", 5, 1);
    cs_dataset *dup = load("d.csv", "id,label,p_x,p_y\n9,1,0.3,0.7\n7,0,0.9,0.1\n9,1,0.2,0.8\n8,1,0.2,0.8\n");
    expect_pair_error(a, dup, "d.csv:4:1: --compare: id '9' occurs twice (first on line 2)", 4, 1);
    cs_dataset *lab = load("l.csv", "p_x,p_y,id,label\n0.3,0.7,9,0\n0.9,0.1,7,0\n0.2,0.8,8,1\n");
    expect_pair_error(a, lab, "l.csv:2:4: --compare: label 'x' of id '9' differs from a.csv:4 (label 'y')", 2, 4);
    cs_dataset *r3 = load("r3.csv", "label,p_x,p_y\n0,0.9,0.1\n1,0.2,0.8\n1,0.3,0.7\n");
    cs_dataset *r4 = load("r4.csv", "label,p_x,p_y\n0,0.9,0.1\n1,0.2,0.8\n0,0.3,0.7\n1,0.5,0.5\n");
    expect_pair_error(r3, r4, "r4.csv:5: --compare: sample 4 has no partner: r3.csv has 3 samples, r4.csv has 4 "
                      "(no id column in both: samples pair in file order)", 5, 0);
    /* a has an id column, r4 none: by row, and the third labels differ */
    r4->n_samples = 3;   /* as if it had three rows */
    expect_pair_error(a, r4, "r4.csv:4:1: --compare: label 'x' of sample 3 differs from a.csv:4 (label 'y'); "
                      "no id column in both: samples pair in file order", 4, 1);
    /* a pairing that works maps every sample */
    uint32_t map[3];
    int by_id = -1;
    cs_error err;
    cs_dataset *perm = load("p.csv", "id,label,p_x,p_y\n9,1,0.3,0.7\n7,0,0.9,0.1\n8,1,0.2,0.8\n");
    assert_int_equal(cs_compare_pair(a, perm, map, &by_id, &err), CS_OK);
    assert_true(by_id);
    assert_int_equal(map[0], 1);
    assert_int_equal(map[1], 2);
    assert_int_equal(map[2], 0);
    /* a dataset that does not know its lines: the file alone */
    cs_dataset *h = cs_test_dataset_new(2, 3);
    cs_test_prepare(h);
    expect_pair_error(a, h, "test.csv: --compare: class '2' has no partner: a.csv has 2 classes, test.csv has 3", 0, 0);
    cs_dataset *all[] = { a, k3, miss, dup, lab, r3, r4, perm, h };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) cs_dataset_free(all[i]);
}

static void test_normal(void **state)
{
    (void)state;
    /* values from scipy.special.ndtri */
    assert_double_rel(cs_norm_ppf(0.975), 1.959963984540054, 0, 1e-14);
    assert_double_rel(cs_norm_ppf(0.025), -1.959963984540054, 0, 1e-14);
    assert_double_rel(cs_norm_ppf(0.3), -0.5244005127080409, 0, 1e-14);
    assert_double_rel(cs_norm_ppf(1e-10), -6.361340902404056, 0, 1e-14);
    assert_double_near(cs_norm_ppf(0.5), 0, 1e-16);
    assert_true(isinf(cs_norm_ppf(0)) && cs_norm_ppf(0) < 0);
    assert_true(isinf(cs_norm_ppf(1)) && cs_norm_ppf(1) > 0);
    for (double p = 0.001; p < 1; p += 0.0137) assert_double_rel(cs_norm_cdf(cs_norm_ppf(p)), p, 0, 1e-13);
}

/* BCa worked by hand: resamples 1..10 around theta 5 (4 below, 1 tied: share (4+5)/20 =
 * 0.45, z0 = ndtri(0.45)); jackknife 1,2,3,10 (u = 3,2,1,-6: Σu² 50, Σu³ -180, a =
 * -180/(6·50^1.5)); levels Φ(z0 + (z0 ∓ 1.96)/(1 − a(z0 ∓ 1.96))) and numpy's linear
 * percentiles at them (evaluated with scipy.special and numpy). */
static void test_bca_by_hand(void **state)
{
    (void)state;
    const double s[10] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 }, jack[4] = { 1, 2, 3, 10 };
    double lo, hi, z0, a;
    cs_ci_bca(s, 10, 5.0, jack, 4, &lo, &hi, &z0, &a);
    assert_double_rel(z0, -0.12566134685507402, 0, 1e-13);
    assert_double_rel(a, -0.08485281374238571, 0, 1e-14);
    assert_double_rel(lo, 1.035189740845561, 0, 1e-12);
    assert_double_rel(hi, 9.352661357903726, 0, 1e-12);
    /* every resample above theta: undefined (z0 = -inf), like scipy's nan */
    cs_ci_bca(s, 10, 0.5, jack, 4, &lo, &hi, &z0, &a);
    assert_true(isnan(lo) && isnan(hi));
    assert_true(isinf(z0));
    /* no skewness in the jackknife, theta at the median: the percentile interval */
    const double flat[3] = { 2, 2, 2 };
    cs_ci_bca(s, 10, 5.5, flat, 3, &lo, &hi, &z0, &a);
    assert_double_near(a, 0, 0);
    assert_double_near(z0, 0, 1e-15);
    assert_double_rel(lo, cs_quantile_sorted(s, 10, 0.025), 0, 1e-12);
    assert_double_rel(hi, cs_quantile_sorted(s, 10, 0.975), 0, 1e-12);
}

/* The methods on one prepared problem: the same resamples, the intervals as documented; BCa
 * with the grouped jackknife (N > 100) independent of the thread count. */
static void test_interval_methods(void **state)
{
    (void)state;
    cs_dataset *d = model(3000, 9, 0);
    cs_settings s;
    cs_settings_default(&s);
    cs_error err;
    cs_prepared *p = cs_prepare(d, &s, &err);
    assert_non_null(p);
    cs_ci pc, bc, b1, b3;
    cs_run r1 = { .threads = 1 }, r3 = { .threads = 3 };
    assert_int_equal(cs_bootstrap_interval(p, CS_METRICS_DEFAULT, 100, 5, CS_CI_PERCENTILE, &r3, &pc, &err), CS_OK);
    assert_int_equal(cs_bootstrap_interval(p, CS_METRICS_DEFAULT, 100, 5, CS_CI_BASIC, &r3, &bc, &err), CS_OK);
    assert_int_equal(cs_bootstrap_interval(p, CS_METRICS_DEFAULT, 100, 5, CS_CI_BCA, &r1, &b1, &err), CS_OK);
    assert_int_equal(cs_bootstrap_interval(p, CS_METRICS_DEFAULT, 100, 5, CS_CI_BCA, &r3, &b3, &err), CS_OK);
    assert_int_equal(b1.jack_groups, CS_CI_JACK_GROUPS);
    assert_int_equal(pc.jack_groups, 0);
    assert_int_equal(memcmp(b1.lo, b3.lo, sizeof b1.lo), 0);
    assert_int_equal(memcmp(b1.hi, b3.hi, sizeof b1.hi), 0);
    assert_int_equal(memcmp(b1.accel, b3.accel, sizeof b1.accel), 0);
    for (int m = 0; m < CS_METRIC_COUNT; m++) {
        if (!(pc.metrics & CS_METRIC_BIT(m))) continue;   /* RECE-M: only for id/tta files */
        /* the same resamples: the same value and bootstrap mean */
        assert_double_near(bc.value[m], pc.value[m], 0);
        assert_double_near(bc.boot_mean[m], pc.boot_mean[m], 0);
        /* basic = the percentile interval reflected about the value, clipped at 0 */
        assert_double_rel(bc.hi[m], 2 * pc.value[m] - pc.lo[m], 0, 1e-12);
        assert_double_rel(bc.lo[m], fmax(0, 2 * pc.value[m] - pc.hi[m]), 1e-15, 1e-12);
        assert_true(bc.lo[m] >= 0);
        assert_true(isfinite(b1.z0[m]) && isfinite(b1.accel[m]) && fabs(b1.accel[m]) < 0.5);
        assert_true(isnan(pc.z0[m]));
    }
    assert_double_near(pc.lo[CS_METRIC_ACCURACY] < pc.value[CS_METRIC_ACCURACY], 1, 0);
    cs_prepared_free(p);
    cs_dataset_free(d);
    assert_int_equal(cs_ci_method_from_name("bca"), CS_CI_BCA);
    assert_int_equal(cs_ci_method_from_name("BCa"), -1);
    assert_string_equal(cs_ci_method_name(CS_CI_BASIC), "basic");
}

static void test_excludes_value(void **state)
{
    (void)state;
    cs_ci ci;
    memset(&ci, 0, sizeof ci);
    ci.metrics = CS_METRIC_BIT(CS_METRIC_SCE) | CS_METRIC_BIT(CS_METRIC_ECE);
    ci.value[CS_METRIC_SCE] = 0.004182;
    ci.lo[CS_METRIC_SCE] = 0.004815;
    ci.hi[CS_METRIC_SCE] = 0.006712;
    ci.value[CS_METRIC_ECE] = 0.0072;
    ci.lo[CS_METRIC_ECE] = 0.0071;
    ci.hi[CS_METRIC_ECE] = 0.0166;
    assert_true(cs_ci_excludes_value(&ci, CS_METRIC_SCE));
    assert_false(cs_ci_excludes_value(&ci, CS_METRIC_ECE));
    ci.lo[CS_METRIC_SCE] = NAN;   /* undefined interval: no claim */
    assert_false(cs_ci_excludes_value(&ci, CS_METRIC_SCE));
    assert_false(cs_ci_excludes_value(&ci, CS_METRIC_BRIER));   /* not in the mask */
}

/* A bins curve with x = M and `rows` samples; every mean equal, so every neighbour agrees. */
static void flat_curve(cs_curve *c, cs_curve_point *pts, const double *m, size_t n, size_t rows, int kd)
{
    memset(c, 0, sizeof *c);
    memset(pts, 0, n * sizeof *pts);
    for (size_t i = 0; i < n; i++) {
        pts[i].x = m[i];
        pts[i].rows = rows;
        pts[i].stat[CS_METRIC_ECE].mean = 0.1;
        pts[i].stat[CS_METRIC_ECE].sd = 0.01;
    }
    c->kind = CS_CURVE_BINS;
    c->kdtree = kd;
    c->points = pts;
    c->n_points = n;
    c->n_samples = rows;
    c->metrics = CS_METRIC_BIT(CS_METRIC_ECE);
    cs_curve_mark_too_few(c, 0);
}

static void test_stable_floor(void **state)
{
    (void)state;
    cs_curve c;
    cs_curve_point pts[6];
    const double m[6] = { 20, 30, 50, 100, 500, 1000 };
    /* 4 samples: no point has 10 per bin, no claim */
    flat_curve(&c, pts, m, 6, 4, 0);
    cs_curve_flag_stable(&c, CS_METRIC_ECE);
    assert_int_equal(c.stable_first, -1);
    assert_int_equal(c.stable_last, -1);
    assert_true(c.stable_thin);
    /* 1000 samples: M <= 100 has >= 10 per bin; the claim stops there */
    flat_curve(&c, pts, m, 6, 1000, 0);
    cs_curve_flag_stable(&c, CS_METRIC_ECE);
    assert_int_equal(c.stable_first, 0);
    assert_int_equal(c.stable_last, 3);
    assert_true(c.stable_thin);
    /* 10 per bin exactly counts */
    flat_curve(&c, pts, m, 6, 10000, 0);
    cs_curve_flag_stable(&c, CS_METRIC_ECE);
    assert_int_equal(c.stable_last, 5);
    assert_false(c.stable_thin);
    /* kd-tree: gamma·N samples per cell */
    const double g[3] = { 0.5, 0.1, 0.001 };
    flat_curve(&c, pts, g, 3, 200, 1);
    cs_curve_flag_stable(&c, CS_METRIC_ECE);
    assert_int_equal(c.stable_first, 0);
    assert_int_equal(c.stable_last, 1);
    assert_true(c.stable_thin);
}

/* The small-sample rule at its boundary, worked by hand: 15 bins need 15 x 10 = 150 samples
 * (149 too few, 150 and 151 enough); 10 cases are the floor where cases are resampled (9 too
 * few); kd-tree cells of gamma 0.1 hold 0.1·N, so 100 samples (99 too few). */
static void test_too_few_rule(void **state)
{
    (void)state;
    assert_true(cs_too_few(149, 15, 0));
    assert_false(cs_too_few(150, 15, 0));
    assert_false(cs_too_few(151, 15, 0));
    assert_true(cs_too_few(9, 15, 1));          /* cases: the bins do not enter */
    assert_false(cs_too_few(10, 15, 1));
    assert_false(cs_too_few(11, 1000, 1));
    assert_true(cs_too_few(99, 1.0 / 0.1, 0));
    assert_false(cs_too_few(100, 1.0 / 0.1, 0));
    assert_int_equal(cs_too_few_min(15, 0), 150);
    assert_int_equal(cs_too_few_min(15, 1), 10);
    assert_int_equal(cs_too_few_min(1.0 / 0.1, 0), 100);
    cs_settings s;
    cs_settings_default(&s);
    assert_double_near(cs_too_few_bins(&s), 15, 0);
    s.binning = CS_BIN_KDTREE;
    s.gamma = 0.05;
    assert_double_near(cs_too_few_bins(&s), 20, 1e-12);
}

/* Cases resampled (a statistics file): a bins curve over 9 cases claims no stable range
 * however many voxels (1e6, 66,666 per bin at M=15), over 10 cases it does; a size curve over
 * 40 cases marks the subsets of fewer than 10 (ceil(0.1·40) = 4, ceil(0.2·40) = 8) and not
 * ceil(0.25·40) = 10. */
static void test_too_few_cases_curves(void **state)
{
    (void)state;
    cs_curve c;
    cs_curve_point pts[3];
    const double m[3] = { 5, 10, 15 };
    for (size_t cases = 9; cases <= 11; cases++) {
        flat_curve(&c, pts, m, 3, 1000000, 0);
        c.by_case = 1;
        c.n_cases = cases;
        cs_curve_mark_too_few(&c, 0);
        cs_curve_flag_stable(&c, CS_METRIC_ECE);
        assert_int_equal(c.stable_first, cases < 10 ? -1 : 0);
        assert_int_equal(c.stable_last, cases < 10 ? -1 : 2);
        assert_int_equal(c.stable_thin, cases < 10);
        for (int i = 0; i < 3; i++) assert_int_equal(pts[i].too_few, cases < 10);
    }
    cs_curve_point sp[4];
    memset(&c, 0, sizeof c);
    memset(sp, 0, sizeof sp);
    const size_t sub[4] = { 4, 8, 10, 40 };
    for (int i = 0; i < 4; i++) sp[i].rows = sub[i];
    c.kind = CS_CURVE_SIZE;
    c.by_case = 1;
    c.points = sp;
    c.n_points = 4;
    cs_curve_mark_too_few(&c, 15);
    assert_int_equal(c.too_few_min, 10);
    const int want[4] = { 1, 1, 0, 0 };
    for (int i = 0; i < 4; i++) assert_int_equal(sp[i].too_few, want[i]);
    /* rows: the same subsets at M = 15 need 150 rows each */
    c.by_case = 0;
    sp[3].rows = 150;
    sp[2].rows = 149;
    cs_curve_mark_too_few(&c, 15);
    assert_int_equal(c.too_few_min, 150);
    assert_true(sp[2].too_few);
    assert_false(sp[3].too_few);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tie_rule),
        cmocka_unit_test(test_rank_ties),
        cmocka_unit_test(test_compare_noise_is_equal),
        cmocka_unit_test(test_loader_places),
        cmocka_unit_test(test_pair_places),
        cmocka_unit_test(test_normal),
        cmocka_unit_test(test_bca_by_hand),
        cmocka_unit_test(test_interval_methods),
        cmocka_unit_test(test_excludes_value),
        cmocka_unit_test(test_stable_floor),
        cmocka_unit_test(test_too_few_rule),
        cmocka_unit_test(test_too_few_cases_curves),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
