/* The fast paths of cs_evaluate (src/engine/metrics/fast.c, scoring.c, rece_g.c) on inputs
 * large enough to use them: several sum chunks (CS_MX_CHUNK), the two-thread split, the
 * bitmap / counting / radix canonical orders, the RECE-G row cache. Every number must be
 * bit-identical whichever path forms it. */
#include "support/cs_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calscope/catalogue.h"
#include "calscope/dataset.h"
#include "calscope/metrics.h"
#include "engine/metrics/mx.h"

static uint64_t st = 0x9e3779b97f4a7c15ull;
static double urand(void) { return cs_test_xorshift_star(&st); }

/* n x k synthetic probabilities (6 decimals, so values tie often) and labels; rows listed in
 * `rows` (or all) of the source are copied when src is given. */
static cs_dataset *mk(size_t n, size_t k, const cs_dataset *src, const uint32_t *rows)
{
    cs_dataset *d = cs_test_dataset_new(n, k);
    for (size_t i = 0; i < n; i++) {
        if (src) {
            memcpy(d->prob + i * k, src->prob + (size_t)rows[i] * k, k * sizeof *d->prob);
            d->label[i] = src->label[rows[i]];
            continue;
        }
        double s = 0;
        for (size_t j = 0; j < k; j++) s += (d->prob[i * k + j] = pow(urand(), 3.0) + 1e-3);
        double rest = 1.0;
        for (size_t j = 0; j + 1 < k; j++) {
            d->prob[i * k + j] = round(d->prob[i * k + j] / s * 1e6) / 1e6;
            rest -= d->prob[i * k + j];
        }
        d->prob[i * k + k - 1] = rest > 0 ? rest : 0;
        double u = urand(), c = 0;
        d->label[i] = (int32_t)(k - 1);
        for (size_t j = 0; j < k; j++) {
            c += d->prob[i * k + j];
            if (u < c) { d->label[i] = (int32_t)j; break; }
        }
    }
    cs_test_prepare(d);
    return d;
}

static void same(const cs_result *a, const cs_result *b, const char *what)
{
    double av[] = {a->accuracy, a->ece, a->ace, a->mce, a->rece_g, a->brier, a->nll, a->aece, a->sce};
    double bv[] = {b->accuracy, b->ece, b->ace, b->mce, b->rece_g, b->brier, b->nll, b->aece, b->sce};
    for (size_t i = 0; i < sizeof av / sizeof av[0]; i++) {
        if (isnan(av[i]) && isnan(bv[i])) continue;
        if (memcmp(&av[i], &bv[i], sizeof av[i]) != 0)
            fail_msg("%s: metric %zu differs: %.17g vs %.17g", what, i, av[i], bv[i]);
    }
    assert_int_equal(a->n_bins, b->n_bins);
    for (size_t i = 0; i < a->n_bins; i++) {
        assert_int_equal(a->bins[i].count, b->bins[i].count);
        assert_memory_equal(&a->bins[i].conf, &b->bins[i].conf, sizeof(double));
    }
}

static cs_result ev(const cs_prepared *p, const uint32_t *idx, size_t n, unsigned want)
{
    cs_result r;
    cs_error e;
    assert_int_equal(cs_evaluate(p, idx, n, want, NULL, &r, &e), CS_OK);
    return r;
}

/* the newer estimators (smooth ECE, L2 CE, ECE_sweep) take no part in the fast paths checked
 * here and would only make these 500000-row evaluations slow */
static const unsigned WANT = CS_WANT_ALL & ~(unsigned)(CS_WANT_SCE | CS_WANT_SMECE | CS_WANT_L2CE | CS_WANT_SWEEP);

/* All rows: NULL (nothing materialised, terms on the fly) == reversed == shuffled. An odd
 * n: the last of the uniform pass's 8192-sample blocks ends with a bin alone, not a pair. */
static void test_full_paths(void **state)
{
    (void)state;
    size_t n = 300001, k = 4;
    cs_dataset *d = mk(n, k, NULL, NULL);
    uint32_t *rev = malloc(n * sizeof *rev), *shuf = malloc(n * sizeof *shuf);
    for (size_t i = 0; i < n; i++) rev[i] = shuf[i] = (uint32_t)(n - 1 - i);
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = (size_t)(urand() * (double)(i + 1));
        uint32_t t = shuf[i]; shuf[i] = shuf[j]; shuf[j] = t;
    }
    const char *lenses[] = {"top1", "class:1"};
    for (int l = 0; l < 2; l++) {
        cs_settings s;
        cs_settings_default(&s);
        cs_error e;
        assert_int_equal(cs_settings_set_lens(&s, lenses[l], &e), CS_OK);
        cs_prepared *p = cs_prepare(d, &s, &e);
        assert_non_null(p);
        cs_result a = ev(p, NULL, 0, WANT), b = ev(p, rev, n, WANT), c = ev(p, shuf, n, WANT);
        cs_result a2 = ev(p, NULL, 0, WANT);   /* after the caches exist */
        same(&a, &b, lenses[l]);
        same(&a, &c, lenses[l]);
        same(&a, &a2, lenses[l]);
        cs_result_free(&a); cs_result_free(&b); cs_result_free(&c); cs_result_free(&a2);
        cs_prepared_free(p);
    }
    free(rev);
    free(shuf);
    cs_dataset_free(d);
}

/* A subset (several chunks, above the RECE-G split) == the dataset made of its rows. */
static void test_subset_equals_subdataset(void **state)
{
    (void)state;
    size_t n = 500000, k = 3, m = 0;
    cs_dataset *d = mk(n, k, NULL, NULL);
    uint32_t *rows = malloc(n * sizeof *rows), *idx = malloc(n * sizeof *idx);
    for (size_t i = 0; i < n; i++)
        if (urand() < 0.45) rows[m++] = (uint32_t)i;
    for (size_t i = 0; i < m; i++) idx[i] = rows[m - 1 - i];
    cs_dataset *sub = mk(m, k, d, rows);
    cs_settings s;
    cs_settings_default(&s);
    cs_error e;
    cs_prepared *p = cs_prepare(d, &s, &e), *q = cs_prepare(sub, &s, &e);
    assert_non_null(p);
    assert_non_null(q);
    cs_result a = ev(p, idx, m, WANT), b = ev(q, NULL, 0, WANT);
    same(&a, &b, "subset");
    cs_result_free(&a);
    cs_result_free(&b);
    cs_prepared_free(p);
    cs_prepared_free(q);
    cs_dataset_free(sub);
    cs_dataset_free(d);
    free(rows);
    free(idx);
}

/* The top1 lens's AECE alone (its own groups, read through the order) and beside the scalar
 * estimators (from the block of values they gather in value order): bit for bit, on all
 * samples and on a subset with repeats (the bootstrap's), with M that divides n and not;
 * and the estimators' numbers the same whether AECE rides along or not. */
static void test_aece_beside_estimators(void **state)
{
    (void)state;
    size_t n = 70001, k = 4;
    cs_dataset *d = mk(n, k, NULL, NULL);
    uint32_t *idx = malloc(n * sizeof *idx);
    assert_non_null(idx);
    for (size_t i = 0; i < n; i++) idx[i] = (uint32_t)(urand() * (double)n);
    static const int MM[] = { 15, 7, 1 };
    const unsigned est = CS_WANT_SMECE | CS_WANT_L2CE | CS_WANT_SWEEP;
    for (int mi = 0; mi < 3; mi++)
        for (int sub = 0; sub < 2; sub++) {
            cs_settings s;
            cs_settings_default(&s);
            s.bins = MM[mi];
            cs_error e;
            cs_prepared *p = cs_prepare(d, &s, &e);
            assert_non_null(p);
            const uint32_t *ix = sub ? idx : NULL;
            size_t ni = sub ? n : 0;
            cs_result a = ev(p, ix, ni, CS_WANT_AECE), b = ev(p, ix, ni, CS_WANT_AECE | est);
            cs_result c = ev(p, ix, ni, est);
            assert_false(isnan(a.aece));
            if (memcmp(&a.aece, &b.aece, sizeof a.aece) != 0)
                fail_msg("M %d sub %d: aece %.17g alone, %.17g with the estimators", MM[mi], sub,
                         a.aece, b.aece);
            assert_memory_equal(&b.smece, &c.smece, sizeof b.smece);
            assert_memory_equal(&b.l2ce, &c.l2ce, sizeof b.l2ce);
            assert_memory_equal(&b.ece_sweep, &c.ece_sweep, sizeof b.ece_sweep);
            cs_result_free(&a);
            cs_result_free(&b);
            cs_result_free(&c);
            cs_prepared_free(p);
        }
    free(idx);
    cs_dataset_free(d);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* The three canonical-order paths give the sorted multiset. */
static void test_canonical_paths(void **state)
{
    (void)state;
    cs_mx_scratch s;
    memset(&s, 0, sizeof s);
    struct { size_t N, ni; int dups; } cases[] = {
        {50000, 500, 0}, {50000, 50000, 0}, {50000, 50000, 1}, {50000, 3000, 1},
        {1000000, 100, 1}, {1000000, 100, 0}, {70, 1, 0}, {64, 64, 0}, {65, 200, 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t N = cases[c].N, ni = cases[c].ni;
        uint32_t *idx = malloc(ni * sizeof *idx), *ref = malloc(ni * sizeof *ref);
        uint32_t *perm = malloc(N * sizeof *perm);
        for (size_t i = 0; i < N; i++) perm[i] = (uint32_t)i;
        for (size_t i = 0; i < ni; i++) {
            if (cases[c].dups) {
                idx[i] = (uint32_t)(urand() * (double)N);
            } else {
                size_t j = i + (size_t)(urand() * (double)(N - i));
                uint32_t t = perm[i]; perm[i] = perm[j]; perm[j] = t;
                idx[i] = perm[i];
            }
            ref[i] = idx[i];
        }
        qsort(ref, ni, sizeof *ref, cmp_u32);
        const uint32_t *got = cs_mx_canonical(&s, idx, ni, N);
        assert_non_null(got);
        assert_memory_equal(got, ref, ni * sizeof *ref);
        free(idx);
        free(ref);
        free(perm);
    }
    free(s.items); free(s.ord); free(s.bits); free(s.cnt);
}

/* Bootstrap-style subsets with repeats, permuted: identical numbers (counting and radix). */
static void test_repeats(void **state)
{
    (void)state;
    size_t n = 200000, k = 5;
    cs_dataset *d = mk(n, k, NULL, NULL);
    cs_settings s;
    cs_settings_default(&s);
    cs_error e;
    cs_prepared *p = cs_prepare(d, &s, &e);
    assert_non_null(p);
    size_t sizes[] = {n, 1000};
    for (int z = 0; z < 2; z++) {
        size_t m = sizes[z];
        uint32_t *a = malloc(m * sizeof *a), *b = malloc(m * sizeof *b);
        for (size_t i = 0; i < m; i++) a[i] = b[i] = (uint32_t)(urand() * (double)n);
        for (size_t i = m - 1; i > 0; i--) {
            size_t j = (size_t)(urand() * (double)(i + 1));
            uint32_t t = b[i]; b[i] = b[j]; b[j] = t;
        }
        cs_result ra = ev(p, a, m, WANT), rb = ev(p, b, m, WANT);
        same(&ra, &rb, "repeats");
        cs_result_free(&ra);
        cs_result_free(&rb);
        free(a);
        free(b);
    }
    cs_prepared_free(p);
    cs_dataset_free(d);
}

/* A full evaluation keeps its values on the problem (cs_prepared_full_values): only the
 * metrics it made, bit for bit; a subset's evaluation changes nothing kept. */
static void test_kept_full_values(void **state)
{
    (void)state;
    size_t n = 3000;
    cs_dataset *d = mk(n, 4, NULL, NULL);
    cs_settings s;
    cs_settings_default(&s);
    cs_error e;
    cs_prepared *p = cs_prepare(d, &s, &e);
    assert_non_null(p);
    unsigned ece = CS_METRIC_BIT(CS_METRIC_ECE), brier = CS_METRIC_BIT(CS_METRIC_BRIER);
    double row[CS_METRIC_COUNT];
    assert_int_equal(cs_prepared_full_values(p, ece, row), 0);   /* nothing made yet */
    cs_result binned = ev(p, NULL, 0, CS_WANT_BINNED);
    row[CS_METRIC_ECE] = -1;
    assert_int_equal(cs_prepared_full_values(p, ece | CS_METRIC_BIT(CS_METRIC_MCE), row), 1);
    assert_memory_equal(&row[CS_METRIC_ECE], &binned.ece, sizeof binned.ece);
    assert_int_equal(cs_prepared_full_values(p, ece | brier, row), 0);   /* Brier not made */
    uint32_t idx[100];
    for (size_t i = 0; i < 100; i++) idx[i] = (uint32_t)(i * 7);
    cs_result sub = ev(p, idx, 100, CS_WANT_ALL);
    assert_int_equal(cs_prepared_full_values(p, ece, row), 1);
    assert_memory_equal(&row[CS_METRIC_ECE], &binned.ece, sizeof binned.ece);
    assert_int_equal(cs_prepared_full_values(p, brier, row), 0);
    cs_result all = ev(p, NULL, 0, CS_WANT_ALL);
    assert_int_equal(cs_prepared_full_values(p, (1u << CS_METRIC_COUNT) - 1, row), 1);
    for (int m = 0; m < CS_METRIC_COUNT; m++) {
        double v = cs_metric_value(&all, m);
        if (!(isnan(v) && isnan(row[m]))) assert_memory_equal(&row[m], &v, sizeof v);
    }
    cs_result_free(&binned);
    cs_result_free(&sub);
    cs_result_free(&all);
    cs_prepared_free(p);
    cs_dataset_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_paths),
        cmocka_unit_test(test_subset_equals_subdataset),
        cmocka_unit_test(test_aece_beside_estimators),
        cmocka_unit_test(test_canonical_paths),
        cmocka_unit_test(test_repeats),
        cmocka_unit_test(test_kept_full_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
