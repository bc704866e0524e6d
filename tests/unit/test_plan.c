/* cs_plan (calscope/metrics.h): a measurement checks its settings, compiles its selection and
 * resolves its lens class once, counted by the engine's test hooks (never timed); an invalid
 * setting is refused once with its message; every part measured from the plan has the bits
 * the part's own public function gives; the Likert table's band keeps exactly the rows of the
 * selection text it stands for. */
#include "support/cs_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calscope/load.h"
#include "calscope/measure.h"
#include "calscope/select.h"
#include "calscope/topk.h"

/* The three counters of the engine's test hooks. */
typedef struct counts {
    unsigned long validations, compilations, class_finds;
} counts;

static counts now(void)
{
    return (counts){ cs_settings_validate_count(), cs_select_compile_count(), cs_dataset_class_find_count() };
}

static void assert_counts(counts before, unsigned long v, unsigned long c, unsigned long f, const char *what)
{
    counts after = now();
    if (after.validations - before.validations != v || after.compilations - before.compilations != c ||
        after.class_finds - before.class_finds != f)
        fail_msg("%s: %lu validations, %lu compilations, %lu class lookups; want %lu, %lu, %lu", what,
                 after.validations - before.validations, after.compilations - before.compilations,
                 after.class_finds - before.class_finds, v, c, f);
}

/* seg_cases.csv under --lens class:organ and a selection: the settings that every part reads. */
static void organ_settings(cs_settings *s)
{
    cs_settings_default(s);
    s->bins = 10;
    s->lens = CS_LENS_CLASS;
    snprintf(s->lens_arg, sizeof s->lens_arg, "organ");
    snprintf(s->select, sizeof s->select, "y != lesion");
}

static const int topk[] = { 1, 2, 3 };
static const double likert_cuts[] = { 0.0, 0.2, 0.5, 1.0 };

/* Every part a measurement has: cases, intervals, a bins curve, top-k bars, the Likert table. */
static cs_measure_request every_part(void)
{
    cs_measure_request q;
    memset(&q, 0, sizeof q);
    q.parts = CS_MEASURE_CASES | CS_MEASURE_CI | CS_MEASURE_CURVE | CS_MEASURE_TOPK | CS_MEASURE_LIKERT;
    q.ci_repeats = 10;
    q.seed = 3;
    q.curve_kind = CS_CURVE_BINS;
    cs_curve_options_bins_default(&q.curve, 0);
    q.curve.repeats = 5;
    q.curve.n_points = 3;
    q.curve.x[0] = 5;
    q.curve.x[1] = 10;
    q.curve.x[2] = 20;
    q.topk = topk;
    q.n_topk = 3;
    q.likert_cuts = likert_cuts;
    q.n_likert_cuts = 4;
    return q;
}

/* One measurement with every part: one validation, one compilation of the selection, one
 * lookup of the class, whatever the number of parts, curve points and Likert categories. */
static void test_measurement_prepares_once(void **state)
{
    (void)state;
    cs_dataset *d = cs_test_load_sample("seg_cases.csv");
    cs_settings s;
    organ_settings(&s);
    cs_measure_request q = every_part();
    cs_error err;
    cs_error_clear(&err);
    cs_measurement m;
    counts before = now();
    assert_int_equal(cs_measure(d, &s, &q, &(cs_run){ .threads = 1 }, &m, &err), CS_OK);
    assert_counts(before, 1, 1, 1, "cs_measure with every part");
    assert_true(m.has_cases && m.has_ci && m.curve && m.has_topk && m.has_likert);
    cs_measurement_free(&m);
    cs_dataset_free(d);
}

/* Each part from the plan has the bits of the part's own public function (which prepares its
 * settings itself): the plan changes who checks, not what is measured. */
static void test_parts_equal_their_own_functions(void **state)
{
    (void)state;
    cs_dataset *d = cs_test_load_sample("seg_cases.csv");
    cs_settings s;
    organ_settings(&s);
    cs_measure_request q = every_part();
    cs_error err;
    cs_error_clear(&err);
    cs_measurement m;
    assert_int_equal(cs_measure(d, &s, &q, &(cs_run){ .threads = 1 }, &m, &err), CS_OK);

    cs_case_metrics cm;
    assert_int_equal(cs_case_metrics_compute(d, &s, NULL, &cm, &err), CS_OK);
    assert_int_equal(cm.n_cases, m.cases.n_cases);
    for (size_t c = 0; c < cm.n_cases; c++) {
        assert_true(cs_test_same_bits(cm.ece[c], m.cases.ece[c]));
        assert_int_equal(cm.count[c], m.cases.count[c]);
    }
    assert_true(cs_test_same_bits(cm.pooled_ece, m.cases.pooled_ece));
    assert_memory_equal(cm.hist, m.cases.hist, cm.k * cm.m * cm.m * sizeof *cm.hist);
    cs_case_metrics_free(&cm);

    double bars[3];
    assert_int_equal(cs_topk_bars(d, &s, topk, 3, NULL, bars, &err), CS_OK);
    for (size_t i = 0; i < 3; i++) assert_true(cs_test_same_bits(bars[i], m.topk_ece[i]));

    cs_likert lk;
    assert_int_equal(cs_likert_compute(d, &s, likert_cuts, 4, NULL, &lk, &err), CS_OK);
    assert_int_equal(lk.n, m.likert.n);
    size_t counted = 0;
    for (size_t i = 0; i < lk.n; i++) {
        assert_int_equal(lk.iv[i].count, m.likert.iv[i].count);
        assert_true(cs_test_same_bits(lk.iv[i].ece, m.likert.iv[i].ece));
        counted += lk.iv[i].count;
    }
    assert_int_equal(counted, m.selected);   /* the categories split the selection */

    cs_curve *c = cs_bins_curve(d, &s, &q.curve, &(cs_run){ .threads = 1 }, &err);
    assert_non_null(c);
    assert_int_equal(c->n_points, m.curve->n_points);
    for (size_t i = 0; i < c->n_points; i++)
        assert_true(cs_test_same_bits(c->points[i].stat[CS_METRIC_ECE].mean,
                                      m.curve->points[i].stat[CS_METRIC_ECE].mean));
    cs_curve_free(c);
    cs_measurement_free(&m);
    cs_dataset_free(d);
}

/* An invalid setting is refused once, with its message, before any selection is compiled;
 * an unknown class after the selection, looked up once. */
static void test_refused_once(void **state)
{
    (void)state;
    cs_dataset *d = cs_test_load_sample("seg_cases.csv");
    cs_measure_request q = every_part();
    cs_settings s;
    cs_error err;
    cs_measurement m;

    organ_settings(&s);
    s.bins = 0;
    cs_error_clear(&err);
    counts before = now();
    assert_int_equal(cs_measure(d, &s, &q, NULL, &m, &err), CS_EUSAGE);
    assert_string_equal(err.msg, "bins must be between 1 and 1000 (got 0)");
    assert_counts(before, 1, 0, 0, "bins 0");
    assert_false(m.evaluated);
    cs_measurement_free(&m);

    organ_settings(&s);
    snprintf(s.lens_arg, sizeof s.lens_arg, "spleen");
    cs_error_clear(&err);
    before = now();
    assert_int_equal(cs_measure(d, &s, &q, NULL, &m, &err), CS_EUSAGE);
    assert_string_equal(err.msg, "--lens class: unknown class 'spleen' (3 classes)");
    assert_counts(before, 1, 1, 1, "class:spleen");
    cs_measurement_free(&m);

    /* a selection keeping nothing is named before the class, which is not looked up */
    snprintf(s.select, sizeof s.select, "conf > 2");
    cs_error_clear(&err);
    before = now();
    assert_int_equal(cs_measure(d, &s, &q, NULL, &m, &err), CS_EEMPTY);
    assert_non_null(strstr(err.msg, "the selection 'conf > 2' keeps no sample"));
    assert_counts(before, 1, 1, 0, "empty selection");
    cs_measurement_free(&m);
    cs_dataset_free(d);
}

/* A plan's variants: bins checked where they change, the selection and the class reused; a
 * variant that changes the selection is refused. */
static void test_plan_variants(void **state)
{
    (void)state;
    cs_dataset *d = cs_test_load_sample("seg_cases.csv");
    cs_settings s;
    organ_settings(&s);
    cs_error err;
    cs_error_clear(&err);
    counts before = now();
    cs_plan *pl = cs_plan_new(d, &s, &err);
    assert_non_null(pl);
    assert_int_equal(pl->cls, 1);
    assert_true(pl->n > 0 && pl->n < d->n_samples);
    cs_settings v = s;
    v.bins = 1001;
    assert_null(cs_prepare_planned(pl, &v, &err));
    assert_string_equal(err.msg, "bins must be between 1 and 1000 (got 1001)");
    v.bins = 7;
    cs_prepared *p = cs_prepare_planned(pl, &v, &err);
    assert_non_null(p);
    assert_int_equal(cs_prepared_count(p), pl->n);
    assert_memory_equal(cs_prepared_rows(p), pl->rows, pl->n * sizeof *pl->rows);
    cs_prepared_free(p);
    assert_counts(before, 1, 1, 1, "a plan and two variants");
    snprintf(v.select, sizeof v.select, "y == bg");
    assert_null(cs_prepare_planned(pl, &v, &err));
    assert_int_equal(err.code, CS_EUSAGE);
    cs_plan_free(pl);
    cs_dataset_free(d);
}

/* cs_select_band_filter keeps exactly the rows of the text "conf in [lo, hi]" / "p[c] in
 * [lo, hi)", bands picked on the data's own values (ties at the ends). */
static void test_band_is_the_text(void **state)
{
    (void)state;
    cs_dataset *d = cs_test_load_sample("digits_gnb.csv");
    uint32_t *a = malloc(d->n_samples * sizeof *a), *b = malloc(d->n_samples * sizeof *b);
    assert_non_null(a);
    assert_non_null(b);
    for (int cls = -1; cls < 3; cls++) {
        for (size_t t = 0; t < 6; t++) {
            uint32_t r0 = d->sample_rows[(t * 97) % d->n_samples], r1 = d->sample_rows[(t * 389 + 5) % d->n_samples];
            double x0 = cls < 0 ? d->conf[r0] : d->prob[(size_t)r0 * d->k + (size_t)cls];
            double x1 = cls < 0 ? d->conf[r1] : d->prob[(size_t)r1 * d->k + (size_t)cls];
            double lo = x0 < x1 ? x0 : x1, hi = x0 < x1 ? x1 : x0;
            int closed = (int)(t % 2);
            char text[200], coord[16];
            snprintf(coord, sizeof coord, cls < 0 ? "conf" : "p[%d]", cls);
            snprintf(text, sizeof text, "%s in [%.17g, %.17g%c", coord, lo, hi, closed ? ']' : ')');
            cs_error err;
            cs_select *sel = cs_select_compile(text, d, &err);
            assert_non_null(sel);
            size_t na = cs_select_filter(sel, d, d->sample_rows, d->n_samples, a);
            cs_select_free(sel);
            cs_select_band band = { .cls = cls, .lo = lo, .hi = hi, .hi_closed = closed };
            size_t nb = cs_select_band_filter(&band, d, d->sample_rows, d->n_samples, b);
            assert_int_equal(na, nb);
            assert_memory_equal(a, b, na * sizeof *a);
        }
    }
    free(a);
    free(b);
    cs_dataset_free(d);
}

/* Fails unless each Likert category has as many samples as the selection text
 * "COORD in [lo, hi)" ("hi]" for the last category) keeps. */
static void expect_text_counts(const cs_dataset *d, const cs_likert *lk, const char *coord)
{
    uint32_t rows[64];
    assert_true(d->n_samples <= 64);
    cs_error err;
    for (size_t i = 0; i < lk->n; i++) {
        char text[200];
        snprintf(text, sizeof text, "%s in [%.17g, %.17g%c", coord, lk->iv[i].lo, lk->iv[i].hi,
                 lk->iv[i].hi_closed ? ']' : ')');
        cs_select *sel = cs_select_compile(text, d, &err);
        if (!sel) fail_msg("'%s': %s", text, err.msg);
        size_t want = cs_select_filter(sel, d, d->sample_rows, d->n_samples, rows);
        cs_select_free(sel);
        if (lk->iv[i].count != want)
            fail_msg("category %zu: %zu samples, the text '%s' keeps %zu", i, lk->iv[i].count, text, want);
    }
}

/* The Likert categories are on the lens's own column, and mean what the same condition means
 * in --select: with classes named by numbers out of column order ("2", "0", "1") the full
 * lens's first coordinate is column 0, which --select writes p[#0] or p[2] (the class named
 * 2), and --lens class:0 is column 1, p[0] or p[#1]. 40 rows, row i as r = i % 10 (4 each):
 * a = r/10, b = (7r mod 10)/20; column 0 = a(1 - b), column 1 = b:
 *   r        0    1     2    3     4    5     6    7     8    9
 *   col 0    0  .065  .16  .285  .24  .375  .54  .385  .56  .765
 *   col 1    0  .35   .2   .05   .4   .25   .1   .45   .3   .15
 * cuts 0, .2, .5, 1: column 0 has r 0-2 | 3 4 5 7 | 6 8 9 -> 12, 16, 12 samples;
 * column 1 has r 0 3 6 9 | 1 2 4 5 7 8 | none -> 16, 24, 0. */
static void test_likert_band_is_the_lens_column(void **state)
{
    (void)state;
    enum { N = 40, K = 3 };
    double prob[N * K];
    int32_t label[N];
    for (size_t i = 0; i < N; i++) {
        double a = (double)(i % 10) / 10.0, b = (double)((i * 7) % 10) / 20.0;
        prob[i * K] = a * (1 - b);
        prob[i * K + 1] = b;
        prob[i * K + 2] = 1 - prob[i * K] - b;
        label[i] = (int32_t)(i % K);
    }
    cs_dataset *d = cs_test_dataset(N, K, prob, label);
    static const char *const names[K] = { "2", "0", "1" };
    cs_test_set_class_names(d, names);
    cs_settings s;
    cs_settings_default(&s);
    s.lens = CS_LENS_FULL;
    s.bins = 4;
    cs_error err;
    cs_error_clear(&err);
    cs_likert lk;
    assert_int_equal(cs_likert_compute(d, &s, likert_cuts, 4, NULL, &lk, &err), CS_OK);
    assert_int_equal(lk.n, 3);
    static const size_t full_want[3] = { 12, 16, 12 };
    for (size_t i = 0; i < 3; i++) assert_int_equal(lk.iv[i].count, full_want[i]);
    expect_text_counts(d, &lk, "p[#0]");
    expect_text_counts(d, &lk, "p[2]");

    s.lens = CS_LENS_CLASS;
    snprintf(s.lens_arg, sizeof s.lens_arg, "0");
    assert_int_equal(cs_likert_compute(d, &s, likert_cuts, 4, NULL, &lk, &err), CS_OK);
    static const size_t class_want[3] = { 16, 24, 0 };
    for (size_t i = 0; i < 3; i++) assert_int_equal(lk.iv[i].count, class_want[i]);
    expect_text_counts(d, &lk, "p[0]");
    expect_text_counts(d, &lk, "p[#1]");
    cs_dataset_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_measurement_prepares_once),
        cmocka_unit_test(test_parts_equal_their_own_functions),
        cmocka_unit_test(test_refused_once),
        cmocka_unit_test(test_plan_variants),
        cmocka_unit_test(test_band_is_the_text),
        cmocka_unit_test(test_likert_band_is_the_lens_column),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
