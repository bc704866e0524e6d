/* The fast replicate paths and the thread budget of resampling.
 *
 * A bootstrap replicate is a multiset of samples. Its evaluation takes shortcuts the direct one
 * does not: the drivers sort each draw once (a counting pass) for all of its evaluations, and a
 * vector lens's grid puts a subset in cell order by counting against cell numbers made once
 * (metrics/grid.c) instead of sorting its keys. Here each replicate of an interval is made
 * again by hand — the same random stream, the drawn rows copied into a dataset of their own,
 * which is evaluated whole — and its values must be the driver's, on several lenses, with tied
 * probabilities and under a selection.
 *
 * The budget: a call given cs_run.threads 1 starts no thread at all (not in cs_evaluate's
 * passes, not in a replicate), counted with cs_helper_started, never timed. */
#include "support/cs_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calscope/catalogue.h"
#include "calscope/metrics.h"
#include "calscope/resample.h"
#include "calscope/thread.h"
#include "engine/metrics/mx.h"
#include "engine/metrics/smece.h"
#include "engine/resample/ci_internal.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;
static double urand(void) { return cs_test_xorshift(&rng); }

/* n rows of k classes, sharpened random probabilities rounded to multiples of 1/64 (ties in
 * the confidences and in the grid cells), labels drawn from them. */
static cs_dataset *tied_dataset(size_t n, size_t k)
{
    double *P = malloc(n * k * sizeof *P);
    int32_t *Y = malloc(n * sizeof *Y);
    assert_non_null(P);
    assert_non_null(Y);
    for (size_t i = 0; i < n; i++) {
        double s = 0.0;
        for (size_t j = 0; j < k; j++) s += P[i * k + j] = floor(pow(urand(), 3.0) * 64.0) + 1.0;
        double u = urand() * s, c = 0.0;
        Y[i] = (int32_t)(k - 1);
        for (size_t j = 0; j < k; j++) {
            c += P[i * k + j];
            if (u < c && Y[i] == (int32_t)(k - 1)) Y[i] = (int32_t)j;
            P[i * k + j] /= s;
        }
    }
    cs_dataset *d = cs_test_dataset(n, k, P, Y);
    free(P);
    free(Y);
    return d;
}

/* The dataset of the rows rows[idx[j]], j < m, in that order (repeats repeated). */
static cs_dataset *materialise(const cs_dataset *d, const uint32_t *rows, const uint32_t *idx, size_t m)
{
    double *P = malloc(m * d->k * sizeof *P);
    int32_t *Y = malloc(m * sizeof *Y);
    assert_non_null(P);
    assert_non_null(Y);
    for (size_t j = 0; j < m; j++) {
        uint32_t r = rows[idx[j]];
        memcpy(P + j * d->k, d->prob + (size_t)r * d->k, d->k * sizeof *P);
        Y[j] = d->label[r];
    }
    cs_dataset *x = cs_test_dataset(m, d->k, P, Y);
    free(P);
    free(Y);
    return x;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static void sort_u32(uint32_t *a, size_t n)
{
    qsort(a, n, sizeof *a, cmp_u32);
}

static cs_settings settings_of(const char *lens, const char *select)
{
    cs_settings s;
    cs_error e;
    cs_settings_default(&s);
    if (cs_settings_set_lens(&s, lens, &e) != CS_OK) fail_msg("lens %s: %s", lens, e.msg);
    snprintf(s.select, sizeof s.select, "%s", select);
    return s;
}

static int close_to(double a, double b)
{
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    return fabs(a - b) <= 1e-12 * fmax(1.0, fmax(fabs(a), fabs(b)));
}

/* Every replicate of the interval of `mask` (repeats R, seed) of d under lens and select, made
 * by hand as a dataset of the drawn rows and evaluated whole: the driver's resampled means
 * (boot_mean) must be the mean of these values. boot_size 0: draws of all n; else m of n
 * (--boot-size m), each value shrunk towards the whole sample's by sqrt(m/n) by hand, and
 * the metrics without m-out-of-n intervals left with none. */
static void replicates_match_m(const cs_dataset *d, const char *lens, const char *select, unsigned mask,
                               long boot_size)
{
    enum { R = 12 };
    const uint64_t seed = 7;
    cs_settings s = settings_of(lens, select);
    s.boot_size = boot_size;
    cs_error e;
    cs_prepared *p = cs_prepare(d, &s, &e);
    if (!p) fail_msg("cs_prepare: %s", e.msg);
    mask = cs_metrics_available(p, mask);
    const cs_run one = { .threads = 1 };
    cs_ci ci;
    if (cs_bootstrap_interval(p, mask, R, seed, CS_CI_PERCENTILE, &one, &ci, &e) != CS_OK)
        fail_msg("interval: %s", e.msg);
    size_t n = cs_prepared_count(p);
    size_t m_draw = boot_size > 0 && (size_t)boot_size < n ? (size_t)boot_size : n;
    assert_int_equal(ci.draw_size, m_draw);
    assert_int_equal(ci.units, n);
    uint32_t *idx = malloc(n * sizeof *idx);
    assert_non_null(idx);
    double sum[CS_METRIC_COUNT] = {0};
    size_t got[CS_METRIC_COUNT] = {0};
    cs_settings whole = s;
    whole.select[0] = '\0';   /* the drawn rows are the selected ones already */
    /* a replicate of 1,000 samples or more takes smooth ECE at the whole sample's bandwidth
     * (docs/metrics.md): the materialised draw is given that bandwidth */
    cs_result full;
    if (cs_evaluate(p, NULL, 0, CS_WANT_ALL, &one, &full, &e) != CS_OK) fail_msg("evaluate: %s", e.msg);
    if (n >= CS_SMECE_FIXED_BW_MIN && isfinite(full.smece_sigma)) whole.smece_sigma = full.smece_sigma;
    double shrink = sqrt((double)m_draw / (double)n), whole_value[CS_METRIC_COUNT];
    for (int m = 0; m < CS_METRIC_COUNT; m++) whole_value[m] = cs_metric_value(&full, m);
    cs_result_free(&full);
    for (int r = 0; r < R; r++) {
        cs_rng g;
        cs_rng_seed(&g, seed, STREAM_CI, 0, (uint64_t)r);
        cs_draw_with(&g, n, m_draw, idx);
        /* the multiset in sample order: tied values then keep the order a subset's rank
         * order gives them (equal-mass groups cut between ties) */
        sort_u32(idx, m_draw);
        cs_dataset *x = materialise(d, cs_prepared_rows(p), idx, m_draw);
        cs_prepared *px = cs_prepare(x, &whole, &e);
        if (!px) fail_msg("cs_prepare of the draw: %s", e.msg);
        cs_result res;
        if (cs_evaluate(px, NULL, 0, CS_WANT_ALL, &one, &res, &e) != CS_OK) fail_msg("evaluate: %s", e.msg);
        for (int m = 0; m < CS_METRIC_COUNT; m++) {
            double v = cs_metric_value(&res, m);
            if (m_draw < n) v = whole_value[m] + shrink * (v - whole_value[m]);
            if ((mask & CS_METRIC_BIT(m)) && isfinite(v)) {
                sum[m] += v;
                got[m]++;
            }
        }
        cs_result_free(&res);
        cs_prepared_free(px);
        cs_dataset_free(x);
    }
    for (int m = 0; m < CS_METRIC_COUNT; m++) {
        if (!(mask & CS_METRIC_BIT(m)) || !got[m]) continue;
        if (m_draw < n && !(cs_metric_mask_m_of_n(cs_prepared_settings(p)) & CS_METRIC_BIT(m))) {
            /* no interval from draws of m < n: said, never a number */
            assert_true(cs_ci_needs_full_draws(&ci, m));
            assert_true(isnan(ci.lo[m]) && isnan(ci.hi[m]) && isnan(ci.boot_mean[m]));
            continue;
        }
        assert_false(cs_ci_needs_full_draws(&ci, m));
        double mean = sum[m] / (double)got[m];
        if (!close_to(ci.boot_mean[m], mean))
            fail_msg("%s %s '%s': resampled mean %.17g, the materialised draws' %.17g",
                     cs_metric_name(m), lens, select, ci.boot_mean[m], mean);
    }
    free(idx);
    cs_prepared_free(p);
}

static void replicates_match(const cs_dataset *d, const char *lens, const char *select, unsigned mask)
{
    replicates_match_m(d, lens, select, mask, 0);
}

static void test_replicates_are_their_draws(void **state)
{
    (void)state;
    cs_dataset *d = tied_dataset(3000, 6);
    unsigned binned = CS_METRIC_BIT(CS_METRIC_ECE) | CS_METRIC_BIT(CS_METRIC_ACE) |
                      CS_METRIC_BIT(CS_METRIC_MCE) | CS_METRIC_BIT(CS_METRIC_ACCURACY) |
                      CS_METRIC_BIT(CS_METRIC_BRIER);
    replicates_match(d, "top1", "", CS_METRICS_DEFAULT);
    replicates_match(d, "top1", "conf > 0.3", CS_METRICS_DEFAULT);
    replicates_match(d, "topk:3", "", binned);
    replicates_match(d, "topk:3", "conf > 0.3", binned);
    replicates_match(d, "topk:2", "label != 1", binned);
    replicates_match(d, "full", "", binned);
    replicates_match(d, "classwise", "conf > 0.3", binned | CS_METRIC_BIT(CS_METRIC_SCE));
    cs_dataset_free(d);
}

/* m out of n (--boot-size 1000 of 3,000 samples): each replicate is its draw of 1,000
 * evaluated whole, shrunk by sqrt(1000/3000) towards the whole sample's value; MCE, ACE and SCE
 * have no interval, nor on a lens of several coordinates or classes any metric that reads the
 * lens (ECE there) while Brier and accuracy keep theirs. --boot-size above n draws all n (the
 * same as 0). */
static void test_m_of_n_replicates_are_their_draws(void **state)
{
    (void)state;
    cs_dataset *d = tied_dataset(3000, 6);
    replicates_match_m(d, "top1", "", CS_METRICS_DEFAULT | CS_METRIC_BIT(CS_METRIC_SCE), 1000);
    replicates_match_m(d, "top1", "conf > 0.3", CS_METRICS_DEFAULT, 1000);
    unsigned lensed = CS_METRIC_BIT(CS_METRIC_ECE) | CS_METRIC_BIT(CS_METRIC_MCE) |
                      CS_METRIC_BIT(CS_METRIC_BRIER) | CS_METRIC_BIT(CS_METRIC_ACCURACY);
    replicates_match_m(d, "topk:3", "", lensed, 1500);
    replicates_match_m(d, "classwise", "", lensed, 1500);
    replicates_match_m(d, "top1", "", CS_METRICS_DEFAULT, 5000);
    cs_dataset_free(d);
}

/* The grid of a subset by counting cell numbers gives the very bins of sorting its keys (the
 * path before the numbers): every field of every bin, bit for bit, on draws with repeats;
 * with the groups read from the packed copy of the coordinates in cell order (made by the
 * second grid of a problem) and without it (a problem too large to copy). */
static void test_grid_by_cells_is_the_sorted_grid(void **state)
{
    (void)state;
    cs_dataset *d = tied_dataset(2000, 5);
    static const char *lenses[] = {"topk:2", "topk:3", "full"};
    for (size_t l = 0; l < 3; l++)
        for (int packed = 0; packed < 2; packed++) {
            cs_settings s = settings_of(lenses[l], "");
            s.bins = 4;
            cs_error e;
            cs_mx_grid_pack_max(packed ? (size_t)64 << 20 : 0);
            cs_prepared *p = cs_prepare(d, &s, &e);
            assert_non_null(p);
            size_t n = cs_prepared_count(p);
            uint32_t *idx = malloc(n * sizeof *idx);
            assert_non_null(idx);
            /* a whole evaluation numbers the cells but makes no copy; the next grid does */
            cs_result w;
            assert_int_equal(cs_evaluate(p, NULL, 0, CS_WANT_BINNED, NULL, &w, &e), CS_OK);
            cs_result_free(&w);
            assert_true(p->grid_cell && !p->grid_rows);
            for (int r = 0; r < 5; r++) {
                cs_rng g;
                cs_rng_seed(&g, 11, STREAM_CI, 0, (uint64_t)r);
                cs_draw_with(&g, n, n, idx);
                cs_result a, b;
                cs_mx_grid_by_cells(0);
                assert_int_equal(cs_evaluate(p, idx, n, CS_WANT_BINNED, NULL, &a, &e), CS_OK);
                cs_mx_grid_by_cells(1);
                assert_int_equal(cs_evaluate(p, idx, n, CS_WANT_BINNED, NULL, &b, &e), CS_OK);
                assert_true(p->grid_cell && (p->grid_rows != NULL) == packed);
                assert_true(a.n_bins > 4);   /* a grid of several cells */
                assert_int_equal(a.n_bins, b.n_bins);
                assert_memory_equal(a.bins, b.bins, a.n_bins * sizeof *a.bins);
                assert_memory_equal(&a.ece, &b.ece, sizeof a.ece);
                cs_result_free(&a);
                cs_result_free(&b);
            }
            free(idx);
            cs_prepared_free(p);
        }
    cs_mx_grid_pack_max((size_t)64 << 20);
    cs_dataset_free(d);
}

/* n rows of k classes, in runs of 50: runs of rows with one value from 0.5 to 0.97 and the
 * rest below the first bin edge (every other pair of values in bin 0: the class-wise pass
 * skips their arithmetic) and runs with 12 values spread over the bins on classes 2 apart
 * (pairs across the bins: the pass bins them), so the skip turns on and off along the file;
 * labels drawn from the rows. */
static cs_dataset *mixed_dataset(size_t n, size_t k)
{
    double *P = malloc(n * k * sizeof *P);
    int32_t *Y = malloc(n * sizeof *Y);
    assert_non_null(P);
    assert_non_null(Y);
    for (size_t i = 0; i < n; i++) {
        double *g = P + i * k, s = 0.0;
        for (size_t j = 0; j < k; j++) g[j] = urand() * 1e-3;
        if ((i / 50) % 2 == 0) {
            g[(size_t)(urand() * (double)k) % k] = 0.1 + 3.0 * urand();
        } else {
            size_t at = (size_t)(urand() * (double)k) % k;
            for (size_t q = 0; q < 12; q++) g[(at + 2 * q) % k] = 0.05 + 10.0 * pow(urand(), 3.0);
        }
        for (size_t j = 0; j < k; j++) s += g[j];
        double u = urand(), c = 0.0;
        Y[i] = (int32_t)(k - 1);
        for (size_t j = 0; j < k; j++) {
            g[j] /= s;
            c += g[j];
            if (u < c && Y[i] == (int32_t)(k - 1)) Y[i] = (int32_t)j;
        }
    }
    cs_dataset *d = cs_test_dataset(n, k, P, Y);
    free(P);
    free(Y);
    return d;
}

/* The class-wise ECE (and on the classwise lens its bins) of the draw idx of p, bit for bit
 * those of the drawn rows copied into a dataset of their own, evaluated whole by binning
 * every value (cs_mx_cw_by_cells(0): a whole evaluation makes no cells, this makes sure). */
static void cw_draw_is_its_rows(cs_prepared *p, const cs_dataset *d, const cs_settings *s,
                                const uint32_t *idx, size_t m)
{
    const cs_run one = { .threads = 1 };
    unsigned want = CS_WANT_SCE | CS_WANT_BINNED;
    cs_error e;
    cs_result a, b;
    assert_int_equal(cs_evaluate(p, idx, m, want, &one, &a, &e), CS_OK);
    cs_settings whole = *s;
    whole.select[0] = '\0';
    cs_dataset *x = materialise(d, cs_prepared_rows(p), idx, m);
    cs_prepared *px = cs_prepare(x, &whole, &e);
    assert_non_null(px);
    cs_mx_cw_by_cells(0);
    assert_int_equal(cs_evaluate(px, NULL, 0, want, &one, &b, &e), CS_OK);
    cs_mx_cw_by_cells(1);
    assert_null(px->cw_cell);
    assert_memory_equal(&a.sce, &b.sce, sizeof a.sce);
    if (p->kind == CS_LENS_CLASSWISE) {
        assert_int_equal(a.n_bins, b.n_bins);
        assert_memory_equal(a.bins, b.bins, a.n_bins * sizeof *a.bins);
        assert_memory_equal(&a.ece, &b.ece, sizeof a.ece);
    }
    cs_result_free(&a);
    cs_result_free(&b);
    cs_prepared_free(px);
    cs_dataset_free(x);
}

/* A subset's class-wise pass reads the cells of every sample, made once per prepared problem
 * (metrics/classwise.c), instead of binning its values: the sums must be those of binning
 * them. On 201 classes (an odd count: a last class without a pair) with rows in and out of
 * bin 0, 2-byte cells (15 bins) and 4-byte ones (400 bins: K*M > 65536), the top1 lens's
 * class-wise ECE and the classwise lens's bins, with and without a selection; draws with
 * repeats, and a half-size subsample. */
static void test_classwise_cells_are_the_binned_sums(void **state)
{
    (void)state;
    cs_dataset *d = mixed_dataset(1500, 201);
    static const char *lenses[] = {"top1", "classwise"}, *selects[] = {"", "p[0] < 0.0002"};
    static const int bins[] = {15, 400};
    for (size_t l = 0; l < 2; l++)
        for (size_t q = 0; q < 2; q++)
            for (size_t b = 0; b < 2; b++) {
                cs_settings s = settings_of(lenses[l], selects[q]);
                s.bins = bins[b];
                cs_error e;
                cs_prepared *p = cs_prepare(d, &s, &e);
                if (!p) fail_msg("cs_prepare %s '%s': %s", lenses[l], selects[q], e.msg);
                size_t n = cs_prepared_count(p);
                assert_true(n > 300 && (q == 0 ? n == 1500 : n < 1500));
                uint32_t *idx = malloc(n * sizeof *idx);
                assert_non_null(idx);
                for (int r = 0; r < 4; r++) {
                    cs_rng g;
                    cs_rng_seed(&g, 13, STREAM_CI, 0, (uint64_t)r);
                    size_t m = r == 3 ? n / 2 : n;
                    cs_draw_with(&g, n, m, idx);
                    sort_u32(idx, m);
                    cw_draw_is_its_rows(p, d, &s, idx, m);
                    /* a draw of n samples makes the cells at once */
                    assert_non_null(p->cw_cell);
                    assert_int_equal(p->cw_cell_wide, bins[b] == 400);
                }
                free(idx);
                cs_prepared_free(p);
            }
    cs_dataset_free(d);
}

/* Subsets smaller than the problem bin their own items until, together, they would have
 * binned as many items as it has samples: the subset that gets there makes the cells. The
 * sums are the binned ones on both paths. */
static void test_classwise_cells_wait_for_subsets_worth_them(void **state)
{
    (void)state;
    cs_dataset *d = mixed_dataset(1000, 31);
    cs_settings s = settings_of("classwise", "");
    cs_error e;
    cs_prepared *p = cs_prepare(d, &s, &e);
    assert_non_null(p);
    const cs_run one = { .threads = 1 };
    cs_result r;
    assert_int_equal(cs_evaluate(p, NULL, 0, CS_WANT_SCE | CS_WANT_BINNED, &one, &r, &e), CS_OK);
    cs_result_free(&r);
    assert_null(p->cw_cell);   /* a whole evaluation makes none */
    uint32_t idx[300];
    for (int k = 0; k < 4; k++) {
        cs_rng g;
        cs_rng_seed(&g, 17, STREAM_CI, 0, (uint64_t)k);
        cs_draw_with(&g, 1000, 300, idx);
        sort_u32(idx, 300);
        cw_draw_is_its_rows(p, d, &s, idx, 300);
        if (k < 3) assert_null(p->cw_cell);   /* 300, 600, 900 items binned */
        else assert_non_null(p->cw_cell);     /* 1,200 would have been */
    }
    cs_prepared_free(p);
    cs_dataset_free(d);
}

/* A subset's value-order estimators (AECE, L2 CE, ECE_sweep, smooth ECE and its curve) read
 * its values from a copy kept in rank order, at the subset's ascending ranks, instead of
 * through the order: every number and every point of the curve must be those of the drawn
 * rows copied into a dataset of their own, evaluated whole, bit for bit. On the top1 lens and
 * a class lens (whose values are not the top-1 confidence), with tied values and a
 * selection; smooth ECE at a fixed bandwidth (a draw's search starts from the whole
 * problem's bandwidth, a whole evaluation from none). */
static void test_estimators_read_values_in_rank_order(void **state)
{
    (void)state;
    cs_dataset *d = tied_dataset(900, 4);
    static const char *lenses[] = {"top1", "class:1"}, *selects[] = {"", "conf > 0.4"};
    const unsigned want = CS_WANT_AECE | CS_WANT_L2CE | CS_WANT_SWEEP | CS_WANT_SMECE |
                          CS_WANT_SMECE_CURVE;
    const cs_run one = { .threads = 1 };
    for (size_t l = 0; l < 2; l++)
        for (size_t q = 0; q < 2; q++) {
            cs_settings s = settings_of(lenses[l], selects[q]);
            s.smece_sigma = 0.07;
            cs_error e;
            cs_prepared *p = cs_prepare(d, &s, &e);
            if (!p) fail_msg("cs_prepare %s '%s': %s", lenses[l], selects[q], e.msg);
            size_t n = cs_prepared_count(p);
            uint32_t *idx = malloc(n * sizeof *idx);
            assert_non_null(idx);
            for (int r = 0; r < 3; r++) {
                cs_rng g;
                cs_rng_seed(&g, 19, STREAM_CI, 0, (uint64_t)r);
                cs_draw_with(&g, n, n, idx);
                sort_u32(idx, n);
                cs_result a, b;
                assert_int_equal(cs_evaluate(p, idx, n, want, &one, &a, &e), CS_OK);
                cs_settings whole = s;
                whole.select[0] = '\0';
                cs_dataset *x = materialise(d, cs_prepared_rows(p), idx, n);
                cs_prepared *px = cs_prepare(x, &whole, &e);
                assert_non_null(px);
                assert_int_equal(cs_evaluate(px, NULL, 0, want, &one, &b, &e), CS_OK);
                assert_true(isfinite(a.smece) && isfinite(a.l2ce) && isfinite(a.ece_sweep));
                assert_memory_equal(&a.aece, &b.aece, sizeof a.aece);
                assert_memory_equal(&a.l2ce, &b.l2ce, sizeof a.l2ce);
                assert_memory_equal(&a.l2ce_debiased, &b.l2ce_debiased, sizeof a.l2ce_debiased);
                assert_memory_equal(&a.ece_sweep, &b.ece_sweep, sizeof a.ece_sweep);
                assert_memory_equal(&a.smece, &b.smece, sizeof a.smece);
                assert_int_equal(a.n_smece_curve, b.n_smece_curve);
                assert_memory_equal(a.smece_mu, b.smece_mu, a.n_smece_curve * sizeof *a.smece_mu);
                assert_memory_equal(a.smece_density, b.smece_density,
                                    a.n_smece_curve * sizeof *a.smece_density);
                cs_result_free(&a);
                cs_result_free(&b);
                cs_prepared_free(px);
                cs_dataset_free(x);
            }
            /* the copy in rank order was read: the lens's own (class:1) or top1's */
            assert_non_null(p->kind == CS_LENS_TOP1 ? (void *)p->vs_c : (void *)p->vs_v);
            free(idx);
            cs_prepared_free(p);
        }
    cs_dataset_free(d);
}

/* The caches a replicate builds on first use (the class-wise cells, the grid's cell numbers
 * and copy, the values in rank order) built by two replicates at once: an interval on two
 * threads gives the bits of one thread, each on a problem of its own (nothing built before).
 * Run under TSan it checks that the caches are read only as published under the lock. */
static void test_caches_built_by_two_threads(void **state)
{
    (void)state;
    cs_dataset *d = mixed_dataset(1200, 9);
    static const char *lenses[] = {"top1", "topk:3", "classwise"};
    const cs_run one = { .threads = 1 }, two = { .threads = 2 };
    for (size_t l = 0; l < 3; l++) {
        cs_settings s = settings_of(lenses[l], "");
        cs_error e;
        cs_ci a, b;
        cs_prepared *p = cs_prepare(d, &s, &e), *q = cs_prepare(d, &s, &e);
        assert_non_null(p);
        assert_non_null(q);
        unsigned mask = cs_metrics_available(p, CS_METRICS_DEFAULT | CS_METRIC_BIT(CS_METRIC_SCE));
        assert_int_equal(cs_bootstrap_interval(p, mask, 8, 5, CS_CI_PERCENTILE, &one, &a, &e), CS_OK);
        assert_int_equal(cs_bootstrap_interval(q, mask, 8, 5, CS_CI_PERCENTILE, &two, &b, &e), CS_OK);
        assert_memory_equal(a.boot_mean, b.boot_mean, sizeof a.boot_mean);
        assert_memory_equal(a.lo, b.lo, sizeof a.lo);
        assert_memory_equal(a.hi, b.hi, sizeof a.hi);
        cs_prepared_free(p);
        cs_prepared_free(q);
    }
    cs_dataset_free(d);
}

/* 300,000 samples: over every size at which a pass of cs_evaluate splits in two (the class-wise
 * ECE's side thread and the estimators' readers from 100,000, the bins' chunks from 262,144,
 * RECE-G's parts from 200,000, smooth ECE's moments from 100,000). */
static void test_budget_of_one_starts_no_thread(void **state)
{
    (void)state;
    cs_dataset *d = tied_dataset(300000, 4);
    cs_settings s = settings_of("top1", "");
    cs_error e;
    cs_prepared *p = cs_prepare(d, &s, &e);
    assert_non_null(p);
    const cs_run one = { .threads = 1 }, two = { .threads = 2 };
    cs_result r;
    size_t before = cs_helper_started();
    assert_int_equal(cs_evaluate(p, NULL, 0, CS_WANT_ALL, &one, &r, &e), CS_OK);
    cs_result_free(&r);
    cs_ci ci;
    assert_int_equal(cs_bootstrap_interval(p, CS_METRICS_DEFAULT, 2, 3, CS_CI_PERCENTILE, &one, &ci, &e), CS_OK);
    cs_compare c;
    assert_int_equal(cs_compare_rows(d, d, &s, CS_METRICS_DEFAULT, 2, 3, &one, &c, &e), CS_OK);
    assert_int_equal(cs_helper_started() - before, 0);
    /* the count sees threads: a budget of two starts some */
    before = cs_helper_started();
    assert_int_equal(cs_evaluate(p, NULL, 0, CS_WANT_ALL, &two, &r, &e), CS_OK);
    cs_result_free(&r);
    assert_true(cs_helper_started() - before >= 1);
    cs_prepared_free(p);
    cs_dataset_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replicates_are_their_draws),
        cmocka_unit_test(test_m_of_n_replicates_are_their_draws),
        cmocka_unit_test(test_grid_by_cells_is_the_sorted_grid),
        cmocka_unit_test(test_classwise_cells_are_the_binned_sums),
        cmocka_unit_test(test_classwise_cells_wait_for_subsets_worth_them),
        cmocka_unit_test(test_estimators_read_values_in_rank_order),
        cmocka_unit_test(test_caches_built_by_two_threads),
        cmocka_unit_test(test_budget_of_one_starts_no_thread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
