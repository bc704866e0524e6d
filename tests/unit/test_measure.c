/* cs_measure (calscope/measure.h): the report and a direct call give the same bits; the
 * measurement is the hand-written sequence (prepare, evaluate, interval); the held-out split
 * fits on the mask and measures the rest; failures and empty parts. */
#include "support/cs_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calscope/catalogue.h"
#include "calscope/load.h"
#include "calscope/measure.h"
#include "calscope/methods.h"
#include "cli/report/report.h"

/* Runs `calscope report ARGS` in this process with stdout in a temporary file; returns its
 * text (malloc'd) and the exit status in *rc. */
static char *report_json(char **argv, int argc, int *rc)
{
    fflush(stdout);
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    int saved = dup(STDOUT_FILENO);
    assert_true(saved >= 0);
    assert_true(dup2(fileno(tmp), STDOUT_FILENO) >= 0);
    *rc = report_main(argc, argv);
    fflush(stdout);
    assert_true(dup2(saved, STDOUT_FILENO) >= 0);
    close(saved);
    long len = ftell(tmp);
    if (len < 0) len = lseek(fileno(tmp), 0, SEEK_END);
    assert_true(len > 0);
    char *text = calloc((size_t)len + 1, 1);
    assert_non_null(text);
    assert_int_equal(pread(fileno(tmp), text, (size_t)len, 0), len);
    fclose(tmp);
    return text;
}

/* The number after `"key": ` (or the n-th of `"key": [lo, hi]` for n = 0, 1) in the file's
 * "metrics" object; NAN for null. */
static double json_num(const char *text, const char *key, int n)
{
    const char *m = strstr(text, "\"metrics\": {");
    assert_non_null(m);
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *p = strstr(m, pat);
    if (!p) fail_msg("no %s in the report's JSON", key);
    p += strlen(pat);
    if (*p == '[') {
        p++;
        if (n == 1) p = strchr(p, ',') + 2;
    }
    if (strncmp(p, "null", 4) == 0) return NAN;
    return strtod(p, NULL);
}

/* Values of tests/oracles/reference.py (an independent numpy implementation), from
 * tests/expected/reference.json: top1, 10 uniform bins, tvd, sigma 0.1. */
typedef struct independent_value {
    const char *key;
    double value;
} independent_value;

static const independent_value reference_tta_top1_m10[] = {
    { "accuracy", 0.98 },                 { "ece", 0.018967549377792627 },
    { "ace", 0.1377197083351684 },        { "mce", 0.37299431062266236 },
    { "rece_g", 0.016214828520348477 },   { "rece_m", 0.01586033606442769 },
    { "brier", 0.03464383779180336 },     { "nll", 0.08506652834052854 },
    { NULL, 0 },
};
static const independent_value reference_gnb_top1_m10[] = {
    { "accuracy", 0.8508625486922649 },   { "ece", 0.13747205042026506 },
    { "ace", 0.2635630384179542 },        { "mce", 0.5129944324732778 },
    { "rece_g", 0.13690110503076003 },    { "brier", 0.2831259591421895 },
    { "nll", 2.7281094390864427 },        { NULL, 0 },
};
/* classwise, 15 uniform bins, tvd (RECE-G/M are top-1 only) */
static const independent_value reference_logreg_classwise[] = {
    { "accuracy", 0.9688369504730105 },   { "ece", 0.005354724766605574 },
    { "ace", 0.18199488974668665 },       { "mce", 0.5286399162652448 },
    { "brier", 0.05000980472499247 },     { "nll", 0.10809843769107359 },
    { NULL, 0 },
};

/* r's values agree with the independent reference within its tolerance, 1e-12. */
static void assert_reference_values(const cs_result *r, const independent_value *want, const char *what)
{
    for (const independent_value *w = want; w->key; w++) {
        int id = cs_metric_from_name(w->key);
        assert_true(id >= 0);
        double got = cs_metric_value(r, id);
        if (!(fabs(got - w->value) <= 1e-12))
            fail_msg("%s %s: calscope %.17g, independent reference %.17g", what, w->key, got, w->value);
    }
}

/* cs_measure's values are the independent reference's; the report's values and intervals (JSON,
 * %.17g: exact) are cs_measure's, bit for bit, RECE-M included (a long id/tta file). */
static void test_report_agrees_bit_for_bit(void **state)
{
    (void)state;
    static const char *const files[] = { "digits_tta.csv", "digits_gnb.csv" };
    for (size_t fi = 0; fi < 2; fi++) {
        char path[1024];
        snprintf(path, sizeof path, "%s", cs_test_sample(files[fi]));
        const char *args[] = { "report", "--format", "json", "--ci", "40", "--seed", "7", "--bins", "10",
                               "--threads", "2", path };
        char *argv[13] = { NULL };
        for (size_t i = 0; i < 12; i++) assert_non_null(argv[i] = strdup(args[i]));
        int rc;
        char *text = report_json(argv, 12, &rc);
        assert_int_equal(rc, 0);
        for (size_t i = 0; i < 12; i++) free(argv[i]);

        cs_dataset *d = cs_test_load_sample(files[fi]);
        cs_settings s;
        cs_settings_default(&s);
        s.bins = 10;
        cs_measure_request q;
        memset(&q, 0, sizeof q);
        q.parts = CS_MEASURE_CI;
        q.ci_repeats = 40;
        q.seed = 7;
        cs_run run = { .threads = 2, .cancel = NULL, .progress_ppm = NULL };
        cs_measurement m;
        cs_error err;
        assert_int_equal(cs_measure(d, &s, &q, &run, &m, &err), CS_OK);
        assert_true(m.evaluated && m.has_ci);
        assert_reference_values(&m.result, fi == 0 ? reference_tta_top1_m10 : reference_gnb_top1_m10, files[fi]);
        for (size_t i = 0; i < CS_METRIC_COUNT; i++) {
            const cs_metric_info *mi = cs_metric_at(i);
            double want = json_num(text, mi->key, -1);
            double got = cs_metric_value(&m.result, mi->id);
            if (!cs_test_same_bits(got, want))
                fail_msg("%s %s: measure %.17g, report %.17g", files[fi], mi->key, got, want);
            if (!(m.ci.metrics & CS_METRIC_BIT(mi->id))) continue;
            char ci_key[32];
            snprintf(ci_key, sizeof ci_key, "%s_ci", mi->key);
            assert_true(cs_test_same_bits(m.ci.lo[mi->id], json_num(text, ci_key, 0)));
            assert_true(cs_test_same_bits(m.ci.hi[mi->id], json_num(text, ci_key, 1)));
        }
        /* RECE-M: a number (and an interval) on the TTA file only */
        assert_int_equal(isfinite(m.result.rece_m), fi == 0);
        assert_int_equal(!!(m.ci.metrics & CS_METRIC_BIT(CS_METRIC_RECE_M)), fi == 0);
        cs_measurement_free(&m);
        cs_dataset_free(d);
        free(text);
    }
}

/* cs_measure is the hand-written sequence (prepare, evaluate everything, the interval), and its
 * values are the independent reference's. */
static void test_same_as_direct_calls(void **state)
{
    (void)state;
    cs_dataset *d = cs_test_load_sample("digits_logreg.csv");
    cs_settings s;
    cs_settings_default(&s);
    s.lens = CS_LENS_CLASSWISE;
    cs_error err;
    cs_run run = { .threads = 1, .cancel = NULL, .progress_ppm = NULL };

    cs_prepared *p = cs_prepare(d, &s, &err);
    assert_non_null(p);
    cs_result r;
    assert_int_equal(cs_evaluate(p, NULL, 0, CS_WANT_ALL, NULL, &r, &err), CS_OK);
    cs_ci ci;
    assert_int_equal(cs_bootstrap_interval(p, CS_METRICS_DEFAULT, 30, 11, CS_CI_PERCENTILE, &run, &ci, &err), CS_OK);

    cs_measure_request q;
    memset(&q, 0, sizeof q);
    q.parts = CS_MEASURE_CI;
    q.ci_repeats = 30;
    q.seed = 11;
    cs_measurement m;
    assert_int_equal(cs_measure(d, &s, &q, &run, &m, &err), CS_OK);
    assert_int_equal(m.selected, cs_prepared_count(p));
    assert_reference_values(&m.result, reference_logreg_classwise, "digits_logreg.csv classwise");
    for (int id = 0; id < CS_METRIC_COUNT; id++) {
        assert_true(cs_test_same_bits(cs_metric_value(&m.result, id), cs_metric_value(&r, id)));
        assert_true(cs_test_same_bits(m.ci.lo[id], ci.lo[id]));
        assert_true(cs_test_same_bits(m.ci.hi[id], ci.hi[id]));
    }
    assert_int_equal(m.result.n_bins, r.n_bins);
    assert_memory_equal(m.result.bins, r.bins, r.n_bins * sizeof *r.bins);
    assert_int_equal(m.has_cases, 0);   /* no case column: the part is absent, not an error */
    cs_measurement_free(&m);
    cs_result_free(&r);
    cs_prepared_free(p);
    cs_dataset_free(d);
}

static void test_failures(void **state)
{
    (void)state;
    cs_dataset *d = cs_test_load_sample("digits_gnb.csv");
    cs_settings s;
    cs_settings_default(&s);
    cs_measure_request q;
    memset(&q, 0, sizeof q);
    cs_measurement m;
    cs_error err;
    /* a selection that keeps nothing: CS_EEMPTY, nothing measured */
    snprintf(s.select, sizeof s.select, "conf > 2");
    assert_int_equal(cs_measure(d, &s, &q, NULL, &m, &err), CS_EEMPTY);
    assert_int_equal(m.selected, 0);
    assert_int_equal(m.evaluated, 0);
    cs_measurement_free(&m);
    /* settings that do not apply: the engine's usage error, verbatim */
    cs_settings_default(&s);
    assert_int_equal(cs_settings_set_lens(&s, "class:zebra", &err), CS_OK);
    assert_int_equal(cs_measure(d, &s, &q, NULL, &m, &err), CS_EUSAGE);
    assert_non_null(strstr(err.msg, "zebra"));
    assert_int_equal(m.evaluated, 0);
    cs_measurement_free(&m);
    /* a failing part after the values keeps the values: top-k with k = 0 */
    cs_settings_default(&s);
    int ks[1] = { 0 };
    q.parts = CS_MEASURE_TOPK;
    q.topk = ks;
    q.n_topk = 1;
    assert_int_equal(cs_measure(d, &s, &q, NULL, &m, &err), CS_EUSAGE);
    assert_int_equal(m.evaluated, 1);
    assert_true(isfinite(m.result.ece));
    assert_int_equal(m.has_topk, 0);
    cs_measurement_free(&m);
    cs_dataset_free(d);
}

/* --recal-split F: the fit mask is the seeded hash split, the recalibration is fitted on it
 * and cut to the other rows, and every row not fitted on is measured. */
static void test_held_out_split(void **state)
{
    (void)state;
    cs_dataset *d = cs_test_load_sample("breast_cancer_gnb.csv");
    cs_fit_split sp = { 0.5, 0, NULL, 3 };
    assert_int_equal(cs_fit_split_held_out(&sp), 1);
    cs_fit_split none = { 0, 0, NULL, 3 };
    assert_int_equal(cs_fit_split_held_out(&none), 0);
    cs_error err;
    uint8_t *mask = cs_fit_mask(d, &sp, &err);
    assert_non_null(mask);
    uint8_t *hash = cs_recal_split_mask(d, 0.5, 3);
    assert_memory_equal(mask, hash, d->n);
    size_t fit = 0;
    for (size_t r = 0; r < d->n; r++) fit += mask[r];
    assert_true(fit > 0 && fit < d->n);

    cs_recal_options ro;
    cs_recal_options_default(&ro);
    cs_recal_info info;
    cs_dataset *held = cs_recal_held_out(d, CS_RECAL_TS, &ro, mask, &info, &err);
    assert_non_null(held);
    assert_int_equal(held->n, d->n - fit);
    assert_int_equal(info.fit_rows, fit);
    /* the same as fitting with the mask and cutting by hand */
    ro.fit_mask = mask;
    cs_dataset *full = cs_recal_apply(d, CS_RECAL_TS, &ro, NULL, &err);
    assert_non_null(full);
    cs_dataset *cut = cs_dataset_subset(full, mask, 0, "", NULL, &err);
    assert_non_null(cut);
    assert_int_equal(cut->n, held->n);
    assert_memory_equal(cut->prob, held->prob, held->n * held->k * sizeof *held->prob);
    cs_dataset_free(cut);
    cs_dataset_free(full);
    cs_dataset_free(held);
    free(hash);
    free(mask);

    /* a split column on a file without one: the engine's usage error */
    cs_fit_split col = { 0, 1, NULL, 0 };
    assert_null(cs_fit_mask(d, &col, &err));
    assert_int_equal(err.code, CS_EUSAGE);
    cs_dataset_free(d);
}

/* The methods table measures each method as cs_measure does: its ECE and interval are a
 * single measurement's. */
static void test_methods_use_measure(void **state)
{
    (void)state;
    cs_dataset *a = cs_test_load_sample("breast_cancer_gnb.csv");
    cs_dataset *b = cs_test_load_sample("breast_cancer_logreg.csv");
    const cs_dataset *ds[2] = { a, b };
    cs_settings s;
    cs_settings_default(&s);
    cs_methods_options mo = { 0, 0, 25, 20, 5, CS_CI_PERCENTILE, 0 };
    cs_run run = { .threads = 1, .cancel = NULL, .progress_ppm = NULL };
    cs_methods t;
    cs_error err;
    assert_int_equal(cs_methods_run(ds, 2, &s, &mo, &run, &t, &err), CS_OK);
    for (size_t i = 0; i < 2; i++) {
        cs_measure_request q;
        memset(&q, 0, sizeof q);
        q.parts = CS_MEASURE_CI;
        q.ci_repeats = 25;
        q.seed = 5;
        cs_measurement m;
        assert_int_equal(cs_measure(ds[i], &s, &q, &run, &m, &err), CS_OK);
        assert_true(cs_test_same_bits(t.rows[i].v[CS_METHODS_COL_ECE], m.ci.value[CS_METRIC_ECE]));
        assert_true(cs_test_same_bits(t.rows[i].v[CS_METHODS_COL_ECE], m.result.ece));
        assert_true(cs_test_same_bits(t.rows[i].lo[CS_METHODS_COL_ECE], m.ci.lo[CS_METRIC_ECE]));
        assert_true(cs_test_same_bits(t.rows[i].hi[CS_METHODS_COL_ECE], m.ci.hi[CS_METRIC_ECE]));
        cs_measurement_free(&m);
    }
    cs_methods_free(&t);
    cs_dataset_free(a);
    cs_dataset_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_report_agrees_bit_for_bit),
        cmocka_unit_test(test_same_as_direct_calls),
        cmocka_unit_test(test_failures),
        cmocka_unit_test(test_held_out_split),
        cmocka_unit_test(test_methods_use_measure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
