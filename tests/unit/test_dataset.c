/* The dataset's per-row caches (calscope/dataset.h): conf / pred / correct / sample_rows worked
 * by hand on a small file (ties go to the first maximal class, tta > 0 rows are not samples),
 * and the three-step form a loader uses while parsing (rows in any chunks, any order) giving
 * the same arrays as the one-shot cs_dataset_prepare, also on a matrix large enough for its
 * two threads; and the caller's thread budget: a budget of one starts no helper (counted with
 * cs_helper_started, never timed), in cs_dataset_prepare, cs_dataset_subset and a load. */
#include "support/cs_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calscope/dataset.h"
#include "calscope/load.h"
#include "engine/load/load_internal.h"
#include "calscope/recal.h"
#include "calscope/run.h"
#include "calscope/thread.h"

static void test_by_hand(void **state)
{
    (void)state;
    /* rows: (0.2 0.5 0.3) y1, (0.4 0.4 0.2) y1 (tie: class 0), (0.1 0.1 0.8) y2, tta 0 1 0 */
    cs_dataset *d = cs_test_dataset_new(3, 3);
    const double P[] = { 0.2, 0.5, 0.3, 0.4, 0.4, 0.2, 0.1, 0.1, 0.8 };
    memcpy(d->prob, P, sizeof P);
    d->label[0] = 1;
    d->label[1] = 1;
    d->label[2] = 2;
    d->tta = calloc(3, sizeof *d->tta);
    assert_non_null(d->tta);
    d->tta[1] = 1;
    cs_test_prepare(d);
    assert_true(d->conf[0] == 0.5 && d->conf[1] == 0.4 && d->conf[2] == 0.8);
    assert_int_equal(d->pred[0], 1);
    assert_int_equal(d->pred[1], 0);
    assert_int_equal(d->pred[2], 2);
    assert_int_equal(d->correct[0], 1);
    assert_int_equal(d->correct[1], 0);
    assert_int_equal(d->correct[2], 1);
    assert_int_equal(d->n_samples, 2);
    assert_int_equal(d->sample_rows[0], 0);
    assert_int_equal(d->sample_rows[1], 2);
    cs_dataset_free(d);
}

static void fill(cs_dataset *d, uint64_t seed)
{
    for (size_t i = 0; i < d->n; i++) {
        for (size_t j = 0; j < d->k; j++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            d->prob[i * d->k + j] = (double)((seed >> 33) % 50) / 50.0;   /* many ties */
        }
        d->label[i] = (int32_t)((seed >> 20) % d->k);
    }
}

static void test_chunks_equal_one_shot(void **state)
{
    (void)state;
    static const size_t N[] = { 1000, 300000 };   /* the second: two threads (n * k >= 2e6) */
    for (int t = 0; t < 2; t++) {
        size_t n = N[t], k = 7;
        cs_dataset *a = cs_test_dataset_new(n, k), *b = cs_test_dataset_new(n, k);
        fill(a, 5);
        fill(b, 5);
        cs_test_prepare(a);
        cs_error err;
        assert_int_equal(cs_dataset_prepare_alloc(b, &err), CS_OK);
        /* chunks of uneven sizes, last first, as two parse workers might finish them */
        size_t cut1 = n / 3, cut2 = n / 3 + 7;
        cs_dataset_prepare_rows(b, cut2, n - cut2);
        cs_dataset_prepare_rows(b, 0, cut1);
        cs_dataset_prepare_rows(b, cut1, cut2 - cut1);
        cs_dataset_prepare_finish(b, NULL);
        assert_memory_equal(a->conf, b->conf, n * sizeof *a->conf);
        assert_memory_equal(a->pred, b->pred, n * sizeof *a->pred);
        assert_memory_equal(a->correct, b->correct, n);
        assert_int_equal(a->n_samples, n);
        assert_int_equal(b->n_samples, n);
        assert_memory_equal(a->sample_rows, b->sample_rows, n * sizeof *a->sample_rows);
        for (size_t i = 0; i < n; i++) {   /* first maximal index */
            const double *g = a->prob + i * k;
            for (size_t j = 0; j < k; j++) {
                assert_true(g[j] <= a->conf[i]);
                if ((int32_t)j < a->pred[i]) assert_true(g[j] < a->conf[i]);
            }
        }
        cs_dataset_free(a);
        cs_dataset_free(b);
    }
}

/* Rows of 64 values or more find their largest value in vector lanes first: the same index
 * and value as the rule written out (the first j with g[j] > every g before it) on rows of
 * every width around the lanes' tail, with ties, -0 and +0, a NaN anywhere (the first value
 * too), infinities and one-hot rows. */
static void test_wide_rows_first_max(void **state)
{
    (void)state;
    static const size_t K[] = { 63, 64, 65, 66, 67, 100, 1001 };
    uint64_t seed = 99;
    for (size_t t = 0; t < sizeof K / sizeof *K; t++) {
        size_t k = K[t], n = 12 * 40;
        cs_dataset *d = cs_test_dataset_new(n, k);
        for (size_t i = 0; i < n; i++) {
            double *g = d->prob + i * k;
            int shape = (int)(i % 12);
            for (size_t j = 0; j < k; j++) {
                seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                g[j] = shape < 4 ? (double)((seed >> 33) % 7) / 7.0 : (double)(seed >> 11) / 9007199254740992.0;
            }
            size_t at = (size_t)(seed >> 40) % k;
            if (shape == 4) { memset(g, 0, k * sizeof *g); g[at] = 1.0; }          /* one-hot */
            if (shape == 5) { for (size_t j = 0; j < k; j++) g[j] = j % 2 ? 0.0 : -0.0; }
            if (shape == 6) g[at] = NAN;
            if (shape == 7) g[0] = NAN;
            if (shape == 8) { g[at] = NAN; g[(at + 1) % k] = 2.0; }
            if (shape == 9) g[at] = INFINITY;
            if (shape == 10) g[k - 1] = 5.0;                       /* the max in the tail */
            if (shape == 11) { g[at] = 3.0; g[k - 1 - at / 2] = 3.0; }   /* two maxima */
            d->label[i] = (int32_t)(at);
        }
        cs_test_prepare(d);
        for (size_t i = 0; i < n; i++) {
            const double *g = d->prob + i * k;
            size_t best = 0;
            for (size_t j = 1; j < k; j++)
                if (g[j] > g[best]) best = j;
            if (d->pred[i] != (int32_t)best)
                fail_msg("k %zu, row %zu (shape %zu): class %d, the rule says %zu", k, i, i % 12,
                         d->pred[i], best);
            assert_memory_equal(&d->conf[i], &g[best], sizeof(double));
            assert_int_equal(d->correct[i], d->label[i] == (int32_t)best);
        }
        cs_dataset_free(d);
    }
}

/* Every row a sample (no tta column): sample_rows is the identity, made in two halves on two
 * threads from 2^18 rows; with a tta column, the tta 0 rows in order. */
static void test_sample_rows(void **state)
{
    (void)state;
    size_t n = 300001;
    cs_dataset *d = cs_test_dataset_new(n, 2);
    for (size_t i = 0; i < n; i++) {
        d->prob[2 * i] = 0.25;
        d->prob[2 * i + 1] = 0.75;
        d->label[i] = (int32_t)(i % 2);
    }
    cs_test_prepare(d);
    assert_int_equal(d->n_samples, n);
    for (size_t i = 0; i < n; i++)
        if (d->sample_rows[i] != i) fail_msg("sample_rows[%zu] = %u", i, d->sample_rows[i]);
    cs_dataset_free(d);

    d = cs_test_dataset_new(7, 2);
    d->tta = calloc(7, sizeof *d->tta);
    assert_non_null(d->tta);
    for (size_t i = 0; i < 7; i++) {
        d->prob[2 * i] = 0.5;
        d->prob[2 * i + 1] = 0.5;
        d->tta[i] = (int32_t)(i % 3);   /* rows 0, 3, 6 are the clean ones */
    }
    cs_test_prepare(d);
    assert_int_equal(d->n_samples, 3);
    assert_int_equal(d->sample_rows[0], 0);
    assert_int_equal(d->sample_rows[1], 3);
    assert_int_equal(d->sample_rows[2], 6);
    cs_dataset_free(d);
}

/* 300,000 x 7 rows: large enough for both of the caches' two-thread steps (n * k >= 2e6 for
 * conf/pred/correct, n >= 2^18 for sample_rows). With a budget of one, none is started; with
 * two, both are (when the machine can start a thread at all); the arrays are the same. */
static void test_budget_of_one_starts_no_helper(void **state)
{
    (void)state;
    size_t n = 300000, k = 7;
    cs_dataset *one = cs_test_dataset_new(n, k), *two = cs_test_dataset_new(n, k);
    fill(one, 11);
    fill(two, 11);
    cs_error err;
    const cs_run run1 = { .threads = 1 }, run2 = { .threads = 2 };
    size_t before = cs_helper_started();
    assert_int_equal(cs_dataset_prepare(one, &run1, &err), CS_OK);
    assert_int_equal(cs_helper_started() - before, 0);
    before = cs_helper_started();
    assert_int_equal(cs_dataset_prepare(two, &run2, &err), CS_OK);
    assert_int_equal(cs_helper_started() - before, 2);
    assert_memory_equal(one->conf, two->conf, n * sizeof *one->conf);
    assert_memory_equal(one->pred, two->pred, n * sizeof *one->pred);
    assert_memory_equal(one->correct, two->correct, n);
    assert_memory_equal(one->sample_rows, two->sample_rows, n * sizeof *one->sample_rows);

    /* a subset is prepared under its caller's budget too (every row kept: large again) */
    before = cs_helper_started();
    cs_dataset *sub = cs_dataset_subset(one, NULL, 0, "", &run1, &err);
    assert_non_null(sub);
    assert_int_equal(cs_helper_started() - before, 0);
    assert_memory_equal(sub->conf, one->conf, n * sizeof *one->conf);
    cs_dataset_free(sub);
    cs_dataset_free(one);
    cs_dataset_free(two);
}

/* A load with one thread (CALSCOPE_LOADER_THREADS=1 for the file's loaders) prepares its
 * dataset under that budget: no helper for the parse nor for the caches, on both paths. */
static void test_load_of_one_thread_starts_no_helper(void **state)
{
    (void)state;
    size_t rows = 300000;
    char *buf = malloc(rows * 16 + 32);
    assert_non_null(buf);
    size_t len = (size_t)sprintf(buf, "label,p_0,p_1\n");
    for (size_t i = 0; i < rows; i++)
        len += (size_t)sprintf(buf + len, "%zu,%.3f,%.3f\n", i % 2, (double)(i % 1000) / 1000,
                               1.0 - (double)(i % 1000) / 1000);
    static const int paths[] = { CSL_PATH_FAST, CSL_PATH_CSV };
    for (int p = 0; p < 2; p++) {
        cs_load_tuning t = { .path = paths[p], .threads = 1 };
        cs_error err;
        size_t before = cs_helper_started();
        cs_dataset *d = cs_load_buffer_tuned("t.csv", buf, len, NULL, NULL, &err, &t);
        assert_non_null(d);
        assert_int_equal(t.used_path, paths[p]);
        assert_int_equal(d->n_samples, rows);
        assert_int_equal(cs_helper_started() - before, 0);
        cs_dataset_free(d);
    }
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_by_hand),
        cmocka_unit_test(test_chunks_equal_one_shot),
        cmocka_unit_test(test_wide_rows_first_max),
        cmocka_unit_test(test_sample_rows),
        cmocka_unit_test(test_budget_of_one_starts_no_helper),
        cmocka_unit_test(test_load_of_one_thread_starts_no_helper),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
