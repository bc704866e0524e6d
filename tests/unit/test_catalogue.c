/* The metric catalogue (calscope/catalogue.h): one entry per metric, unique names, lookups in
 * any case, values read from the right field, and the report's --check reading it. */
#include "support/cs_test.h"

#include <math.h>
#include <string.h>

#include "calscope/catalogue.h"
#include "calscope/resample.h"
#include "cli/report/rep.h"

static void test_every_metric_once(void **state)
{
    (void)state;
    int seen[CS_METRIC_COUNT] = {0};
    for (size_t i = 0; i < CS_METRIC_COUNT; i++) {
        const cs_metric_info *m = cs_metric_at(i);
        assert_non_null(m);
        assert_true(m->id >= 0 && m->id < CS_METRIC_COUNT);
        seen[m->id]++;
        assert_ptr_equal(cs_metric_info_of(m->id), m);
        assert_int_equal(cs_metric_from_name(m->key), m->id);
        assert_string_equal(cs_metric_name(m->id), m->key);
        assert_true(m->want != 0);
        assert_true(m->help[0] != '\0');
        for (size_t j = 0; j < i; j++) {
            const cs_metric_info *o = cs_metric_at(j);
            assert_true(strcmp(o->key, m->key) != 0);
            assert_true(strcasecmp(o->label, m->label) != 0);
        }
    }
    for (int id = 0; id < CS_METRIC_COUNT; id++) assert_int_equal(seen[id], 1);
    assert_null(cs_metric_at(CS_METRIC_COUNT));
    assert_null(cs_metric_info_of(CS_METRIC_COUNT));
    assert_null(cs_metric_info_of(-1));
    assert_null(cs_metric_name(CS_METRIC_COUNT));
    assert_int_equal(cs_metric_from_name("ECE"), -1);   /* exact: the JSON key only */
}

/* The table order is the report's JSON key order (the golden outputs depend on it). */
static void test_table_order(void **state)
{
    (void)state;
    char keys[128];
    cs_metric_keys(keys, sizeof keys);
    assert_string_equal(keys, "accuracy ece ace mce rece_g rece_m brier nll aece sce smece l2ce l2ce_debiased ece_sweep");
    char small[12];
    cs_metric_keys(small, sizeof small);
    assert_string_equal(small, "accuracy");   /* whole keys only */
}

static void test_lookup_any_case(void **state)
{
    (void)state;
    static const struct { const char *text; int id; } cases[] = {
        { "ece", CS_METRIC_ECE }, { "ECE", CS_METRIC_ECE }, { "Ece", CS_METRIC_ECE },
        { "RECE-G", CS_METRIC_RECE_G }, { "rece_g", CS_METRIC_RECE_G }, { "Rece-M", CS_METRIC_RECE_M },
        { "ACCURACY", CS_METRIC_ACCURACY }, { "Brier", CS_METRIC_BRIER }, { "NLL", CS_METRIC_NLL },
        { "aece", CS_METRIC_AECE }, { "SCE", CS_METRIC_SCE },
        { "smECE", CS_METRIC_SMECE }, { "L2CE", CS_METRIC_L2CE }, { "l2ce-debiased", CS_METRIC_L2CE_DEBIASED },
        { "L2CE-deb", CS_METRIC_L2CE_DEBIASED }, { "ECE_SWEEP", CS_METRIC_ECE_SWEEP }, { "ECEsweep", CS_METRIC_ECE_SWEEP },
        { "l2ce_deb", -1 }, { "smec", -1 },
        { "ec", -1 }, { "eces", -1 }, { "", -1 }, { "rece", -1 }, { "rece g", -1 }, { "ace_", -1 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        assert_int_equal(cs_metric_lookup(cases[i].text, strlen(cases[i].text)), cases[i].id);
    /* only the first len bytes count */
    assert_int_equal(cs_metric_lookup("ece<=0.1", 3), CS_METRIC_ECE);
    /* every dashboard label finds its metric */
    for (size_t i = 0; i < CS_METRIC_COUNT; i++)
        assert_int_equal(cs_metric_lookup(cs_metric_at(i)->label, strlen(cs_metric_at(i)->label)),
                         cs_metric_at(i)->id);
}

static void test_values_and_wants(void **state)
{
    (void)state;
    cs_result r;
    memset(&r, 0, sizeof r);
    r.accuracy = 1; r.ece = 2; r.ace = 3; r.mce = 4; r.rece_g = 5; r.rece_m = 6;
    r.brier = 7; r.nll = 8; r.aece = 9; r.sce = 10;
    r.smece = 11; r.l2ce = 12; r.l2ce_debiased = 13; r.ece_sweep = 14;
    assert_true(cs_metric_value(&r, CS_METRIC_ACCURACY) == 1);
    assert_true(cs_metric_value(&r, CS_METRIC_ECE) == 2);
    assert_true(cs_metric_value(&r, CS_METRIC_ACE) == 3);
    assert_true(cs_metric_value(&r, CS_METRIC_MCE) == 4);
    assert_true(cs_metric_value(&r, CS_METRIC_RECE_G) == 5);
    assert_true(cs_metric_value(&r, CS_METRIC_RECE_M) == 6);
    assert_true(cs_metric_value(&r, CS_METRIC_BRIER) == 7);
    assert_true(cs_metric_value(&r, CS_METRIC_NLL) == 8);
    assert_true(cs_metric_value(&r, CS_METRIC_AECE) == 9);
    assert_true(cs_metric_value(&r, CS_METRIC_SCE) == 10);
    assert_true(cs_metric_value(&r, CS_METRIC_SMECE) == 11);
    assert_true(cs_metric_value(&r, CS_METRIC_L2CE) == 12);
    assert_true(cs_metric_value(&r, CS_METRIC_L2CE_DEBIASED) == 13);
    assert_true(cs_metric_value(&r, CS_METRIC_ECE_SWEEP) == 14);
    assert_true(isnan(cs_metric_value(&r, CS_METRIC_COUNT)));

    assert_int_equal(cs_metric_want(CS_METRIC_BIT(CS_METRIC_MCE)), CS_WANT_BINNED);
    assert_int_equal(cs_metric_want(CS_METRIC_BIT(CS_METRIC_ACCURACY) | CS_METRIC_BIT(CS_METRIC_SCE)),
                     CS_WANT_ACCURACY | CS_WANT_SCE);
    assert_int_equal(cs_metric_want(CS_METRICS_DEFAULT), CS_WANT_ALL);
    assert_int_equal(cs_metric_lower_is_better(CS_METRIC_ACCURACY), 0);
    for (int id = 1; id < CS_METRIC_COUNT; id++) assert_int_equal(cs_metric_lower_is_better(id), 1);
    /* RECE-M is the one metric that needs an id/tta file */
    for (size_t i = 0; i < CS_METRIC_COUNT; i++)
        assert_int_equal(!!(cs_metric_at(i)->needs & CS_NEEDS_TTA), cs_metric_at(i)->id == CS_METRIC_RECE_M);
    /* the newer estimators are defined on one value and a 0/1 target: top1 and class:C */
    for (size_t i = 0; i < CS_METRIC_COUNT; i++)
        assert_int_equal(!!(cs_metric_at(i)->needs & CS_NEEDS_SCALAR), cs_metric_at(i)->id >= CS_METRIC_SMECE);
    assert_int_equal(cs_metric_want(CS_METRIC_BIT(CS_METRIC_L2CE) | CS_METRIC_BIT(CS_METRIC_L2CE_DEBIASED)),
                     CS_WANT_L2CE);
}

/* Where a lens gives a metric a number, as the estimators do (the report's n/a lines and its
 * --sigma / --smece-sigma refusals read it): RECE-G on the scalar lenses and classwise, the
 * newer estimators on the scalar lenses only (topk:1 is top1), the rest everywhere. */
static void test_lens_gives(void **state)
{
    (void)state;
    static const char *const lenses[] = { "top1", "topk:1", "class:0", "classwise", "topk:2", "full", "group:0;1" };
    static const int rece_g[] = { 1, 1, 1, 1, 0, 0, 0 }, smece[] = { 1, 1, 1, 0, 0, 0, 0 };
    for (size_t l = 0; l < sizeof lenses / sizeof lenses[0]; l++) {
        cs_settings s;
        cs_error err;
        cs_settings_default(&s);
        assert_int_equal(cs_settings_set_lens(&s, lenses[l], &err), CS_OK);
        assert_int_equal(cs_metric_lens_gives(CS_METRIC_RECE_G, &s), rece_g[l]);
        assert_int_equal(cs_metric_lens_gives(CS_METRIC_SMECE, &s), smece[l]);
        assert_int_equal(cs_metric_lens_gives(CS_METRIC_ECE_SWEEP, &s), smece[l]);
        assert_int_equal(cs_metric_lens_gives(CS_METRIC_ECE, &s), 1);
        assert_int_equal(cs_metric_lens_gives(CS_METRIC_RECE_M, &s), 1);
    }
    assert_int_equal(cs_metric_lens_gives(CS_METRIC_COUNT, NULL), 0);
}

/* --check reads the catalogue: any case, '-' for '_', and the known names in the message. */
/* Which metrics keep an interval from m-out-of-n draws: on the scalar lenses those with
 * m_of_n; on a lens of several coordinates or classes only those that do not read the lens. */
static void test_m_of_n_by_lens(void **state)
{
    (void)state;
    unsigned plain = CS_METRIC_BIT(CS_METRIC_ACCURACY) | CS_METRIC_BIT(CS_METRIC_BRIER) |
                     CS_METRIC_BIT(CS_METRIC_NLL) | CS_METRIC_BIT(CS_METRIC_AECE);
    unsigned lensed = CS_METRIC_BIT(CS_METRIC_ECE) | CS_METRIC_BIT(CS_METRIC_RECE_G) |
                      CS_METRIC_BIT(CS_METRIC_SMECE) | CS_METRIC_BIT(CS_METRIC_L2CE) |
                      CS_METRIC_BIT(CS_METRIC_L2CE_DEBIASED) | CS_METRIC_BIT(CS_METRIC_ECE_SWEEP);
    unsigned never = CS_METRIC_BIT(CS_METRIC_ACE) | CS_METRIC_BIT(CS_METRIC_MCE) |
                     CS_METRIC_BIT(CS_METRIC_SCE) | CS_METRIC_BIT(CS_METRIC_RECE_M);
    cs_settings s;
    cs_settings_default(&s);
    assert_int_equal(cs_metric_mask_m_of_n(&s), plain | lensed);
    s.lens = CS_LENS_CLASS;
    assert_int_equal(cs_metric_mask_m_of_n(&s), plain | lensed);
    s.lens = CS_LENS_TOPK;
    s.topk = 1;
    assert_int_equal(cs_metric_mask_m_of_n(&s), plain | lensed);
    s.topk = 2;
    assert_int_equal(cs_metric_mask_m_of_n(&s), plain);
    s.lens = CS_LENS_CLASSWISE;
    assert_int_equal(cs_metric_mask_m_of_n(&s), plain);
    s.lens = CS_LENS_GROUP;
    assert_int_equal(cs_metric_mask_m_of_n(&s), plain);
    s.lens = CS_LENS_FULL;
    assert_int_equal(cs_metric_mask_m_of_n(&s), plain);
    assert_int_equal((plain | lensed | never), (1u << CS_METRIC_COUNT) - 1);
}

static void test_check_names(void **state)
{
    (void)state;
    rep_check c;
    char msg[256];
    assert_int_equal(rep_check_parse("RECE-G <= 0.1", &c, msg, sizeof msg), 0);
    assert_int_equal(c.metric, CS_METRIC_RECE_G);
    assert_int_equal(rep_check_parse("Brier>0", &c, msg, sizeof msg), 0);
    assert_int_equal(c.metric, CS_METRIC_BRIER);
    assert_int_equal(rep_check_parse("ecex<0.1", &c, msg, sizeof msg), -1);
    assert_string_equal(msg, "unknown metric 'ecex' (known: accuracy ece ace mce rece_g rece_m brier nll aece sce smece l2ce l2ce_debiased ece_sweep)");
    assert_int_equal(rep_check_parse("<0.1", &c, msg, sizeof msg), -1);
    assert_string_equal(msg, "unknown metric '' (known: accuracy ece ace mce rece_g rece_m brier nll aece sce smece l2ce l2ce_debiased ece_sweep)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_metric_once),
        cmocka_unit_test(test_table_order),
        cmocka_unit_test(test_lookup_any_case),
        cmocka_unit_test(test_values_and_wants),
        cmocka_unit_test(test_m_of_n_by_lens),
        cmocka_unit_test(test_lens_gives),
        cmocka_unit_test(test_check_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
