/* A run's trend (calscope/trend.h): each epoch keeps its measurement's values, intervals and
 * bins, copied (the measurement and the dataset are freed at once), and nothing that grows with
 * the rows: 200 epochs of a 100-row file and of a 20,000-row file hold the same bytes, counted. */
#include "support/cs_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calscope/measure.h"
#include "calscope/trend.h"

/* An epoch's generated predictions: n rows, 3 classes, confidence growing with the epoch. */
static cs_dataset *epoch_data(size_t n, int epoch)
{
    double *p = malloc(n * 3 * sizeof *p);
    int32_t *y = malloc(n * sizeof *y);
    assert_non_null(p);
    assert_non_null(y);
    uint64_t s = 0x9e3779b97f4a7c15ULL * (uint64_t)(epoch + 1);
    for (size_t i = 0; i < n; i++) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        int c = (int)(s % 3);
        double top = 0.4 + 0.55 * (double)(epoch % 50) / 50.0 * (double)((s >> 8) % 100) / 100.0;
        for (int k = 0; k < 3; k++) p[i * 3 + k] = k == c ? top : (1 - top) / 2;
        y[i] = (int32_t)((s >> 20) % 4 == 0 ? (c + 1) % 3 : c);
    }
    cs_dataset *d = cs_test_dataset(n, 3, p, y);
    free(p);
    free(y);
    return d;
}

/* 200 epochs of n rows (every 7th a gap, the first 3 with intervals) into t; checks that each
 * epoch holds its measurement's numbers. */
static void run_epochs(cs_trend *t, size_t n)
{
    cs_settings s;
    cs_settings_default(&s);
    cs_error err;
    for (int e = 0; e < 200; e++) {
        char path[64];
        snprintf(path, sizeof path, "runs/epoch_%d.csv", e + 1);
        if (e % 7 == 6) {
            assert_int_equal(cs_trend_add_gap(t, path, "runs/epoch_x.csv:2:3: ragged row", &err), CS_OK);
            continue;
        }
        cs_dataset *d = epoch_data(n, e);
        cs_measure_request q;
        memset(&q, 0, sizeof q);
        q.want = CS_WANT_ALL;
        if (e < 3) {
            q.parts = CS_MEASURE_CI;
            q.ci_repeats = 10;
            q.seed = 1;
        }
        cs_measurement m;
        assert_int_equal(cs_measure(d, &s, &q, NULL, &m, &err), CS_OK);
        assert_int_equal(cs_trend_add(t, path, &m, &err), CS_OK);
        const cs_trend_epoch *k = &t->epoch[t->n - 1];
        for (int id = 0; id < CS_METRIC_COUNT; id++) {
            double v = cs_metric_value(&m.result, id);
            assert_true(memcmp(&v, &k->value[id], sizeof v) == 0);
        }
        assert_int_equal(k->has_ci, e < 3);
        if (e < 3) assert_true(k->lo[CS_METRIC_ECE] == m.ci.lo[CS_METRIC_ECE] && k->hi[CS_METRIC_ECE] == m.ci.hi[CS_METRIC_ECE]);
        else assert_true(isnan(k->lo[CS_METRIC_ECE]));
        assert_int_equal(k->n_bins, m.result.n_bins);
        assert_memory_equal(k->bins, m.result.bins, m.result.n_bins * sizeof *k->bins);
        assert_int_equal(k->samples, n);
        cs_measurement_free(&m);
        cs_dataset_free(d);
    }
}

static void test_summaries_only(void **state)
{
    (void)state;
    cs_trend small = { 0 }, big = { 0 };
    run_epochs(&small, 100);
    run_epochs(&big, 20000);
    assert_int_equal(small.n, 200);
    /* what is kept: the array, each path (and message), each epoch's 15 bins */
    size_t want = small.cap * sizeof(cs_trend_epoch);
    for (size_t i = 0; i < small.n; i++) {
        want += strlen(small.epoch[i].path) + 1;
        if (small.epoch[i].message) want += strlen(small.epoch[i].message) + 1;
        else want += 15 * sizeof(cs_bin);
    }
    assert_int_equal(cs_trend_bytes(&small), want);
    /* 200 times more rows, the same bytes: no row is kept */
    assert_int_equal(cs_trend_bytes(&big), cs_trend_bytes(&small));
    /* and a figure: about 1.4 KB an epoch at 15 bins */
    assert_true(cs_trend_bytes(&small) / 200 < 2048);
    cs_trend_free(&small);
    cs_trend_free(&big);
    assert_null(small.epoch);
}

static void test_best_and_gaps(void **state)
{
    (void)state;
    cs_trend t = { 0 };
    cs_error err;
    assert_int_equal(cs_trend_best(&t, CS_METRIC_ECE), -1);
    cs_measurement m;
    memset(&m, 0, sizeof m);
    cs_result_reset(&m.result);
    m.evaluated = 1;
    const double ece[] = { 0.3, 0.1, 0.2, 0.1 }, acc[] = { 0.5, 0.7, 0.9, 0.6 };
    for (int i = 0; i < 4; i++) {
        m.result.ece = ece[i];
        m.result.accuracy = acc[i];
        char p[16];
        snprintf(p, sizeof p, "e%d.csv", i);
        assert_int_equal(cs_trend_add(&t, p, &m, &err), CS_OK);
        if (i == 1) assert_int_equal(cs_trend_add_gap(&t, "broken.csv", "broken.csv: empty file", &err), CS_OK);
    }
    /* order: e0 e1 broken e2 e3 */
    assert_int_equal(cs_trend_best(&t, CS_METRIC_ECE), 1);        /* lowest, the first of a tie */
    assert_int_equal(cs_trend_best(&t, CS_METRIC_ACCURACY), 3);   /* highest */
    assert_int_equal(cs_trend_best(&t, CS_METRIC_RECE_M), -1);    /* NAN everywhere */
    assert_string_equal(t.epoch[2].message, "broken.csv: empty file");
    assert_true(isnan(t.epoch[2].value[CS_METRIC_ECE]));
    assert_int_equal(cs_trend_best(&t, 999), -1);
    cs_trend_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_summaries_only),
        cmocka_unit_test(test_best_and_gaps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
