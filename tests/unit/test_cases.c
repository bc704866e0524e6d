/* Per-case metrics and the dataset reliability histogram on a hand-made 3-case file. */
#include "support/cs_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calscope/cases.h"

/* K = 2, p = [p0, 1 - p0]; rows interleaved across cases; case "D" has no row.
 *   A: (.9,y0) (.8,y0) (.3,y1) (.4,y0)     B: (.6,y1) (.5,y0) (.2,y1)     C: (.95,y1) (.1,y1) */
typedef struct row { int c; int y; double p0; } row;
static const row ROWS[] = {
    { 0, 0, .9 }, { 1, 1, .6 }, { 0, 0, .8 }, { 2, 1, .95 }, { 1, 0, .5 },
    { 0, 1, .3 }, { 2, 1, .1 }, { 0, 0, .4 }, { 1, 1, .2 },
};
#define NR (sizeof ROWS / sizeof ROWS[0])

static cs_dataset *make(int with_case)
{
    cs_dataset *d = cs_test_dataset_new(NR, 2);
    cs_test_set_class_names(d, (const char *const[]){ "bg", "fg" });
    int32_t case_id[NR];
    for (size_t r = 0; r < NR; r++) {
        d->prob[r * 2] = ROWS[r].p0;
        d->prob[r * 2 + 1] = 1 - ROWS[r].p0;
        d->label[r] = ROWS[r].y;
        case_id[r] = ROWS[r].c;
    }
    if (with_case) cs_test_set_cases(d, 4, (const char *const[]){ "A", "B", "C", "D" }, case_id);
    cs_test_prepare(d);
    return d;
}

static void settings(cs_settings *s, cs_lens_kind lens)
{
    cs_settings_default(s);
    s->lens = lens;
    s->bins = 2;
}

/* Expected values by hand, M = 2 bins [0, .5] (.5, 1], and checked once with numpy
 * (/tmp script: per case, binned(v, t) = sum n_b|mean v - mean t| / N, mean gap, max gap):
 * top1
 *   A: confs .9 .8 .7 .6 all in bin 1, mean .75, accuracy 3/4 -> 0, 0, 0
 *   B: bin 0 {.5 correct (tie -> class 0)} gap .5; bin 1 {.6 wrong, .8 right} gap |.7-.5| = .2
 *      ECE (.5 + 2*.2)/3 = .3, ACE (.5+.2)/2 = .35, MCE .5
 *   C: bin 1 {.95 wrong, .9 right}: |.925 - .5| = .425 for all three
 *   mean ECE (0+.3+.425)/3 = .241666.., ACE (0+.35+.425)/3 = .258333.., MCE (0+.5+.425)/3 = .308333..
 *   sd (numpy std, ddof 0): .17834112132527244, .18521758975744054, .2201640802270484
 *   pooled: bin 0 {B .5 right} .5; bin 1: 8 samples, conf 6.25/8 = .78125, acc 5/8 -> .15625
 *      ECE (.5 + 8*.15625)/9 = 1.75/9, ACE (.5+.15625)/2 = .328125, MCE .5
 * classwise (per case, per class one-vs-rest, averaged over the 2 classes)
 *   A: class 0 bins {.3:0,.4:1} |.35-.5| = .15, {.9:1,.8:1} |.85-1| = .15;
 *      class 1 {.1:0,.2:0} .15, {.7:1,.6:0} .15  -> .15 .15 .15
 *   B: class 0 {.5:1,.2:0} .15 (n2), {.6:0} .6 -> ECE .3 ACE .375 MCE .6;
 *      class 1 {.4:1,.5:0} .05 (n2), {.8:1} .2 -> ECE .1 ACE .125 MCE .2  -> .2 .25 .4
 *   C: class 0 {.1:0} .1, {.95:0} .95; class 1 {.05:1} .95, {.9:1} .1 -> .525 .525 .95
 *   mL1-ECE (.15+.2+.525)/3 = .291666.., mL1-ACE .925/3, mL1-MCE 1.5/3 = .5
 *   sd .1662494778605, .15855247992033702, .334165627596057 */
static void test_top1(void **state)
{
    (void)state;
    cs_dataset *d = make(1);
    cs_settings s;
    settings(&s, CS_LENS_TOP1);
    cs_case_metrics cm;
    cs_error err;
    assert_int_equal(cs_case_metrics_compute(d, &s, NULL, &cm, &err), CS_OK);
    assert_int_equal(cm.n_cases, 3);                 /* D has no row */
    assert_int_equal(cm.case_index[0], 0);
    assert_int_equal(cm.case_index[2], 2);
    assert_int_equal(cm.count[0], 4);
    assert_int_equal(cm.count[1], 3);
    assert_int_equal(cm.count[2], 2);
    assert_double_near(cm.ece[0], 0.0, 1e-12);
    assert_double_near(cm.ece[1], 0.3, 1e-12);
    assert_double_near(cm.ace[1], 0.35, 1e-12);
    assert_double_near(cm.mce[1], 0.5, 1e-12);
    assert_double_near(cm.ece[2], 0.425, 1e-12);
    assert_double_near(cm.ece_stat.mean, 0.725 / 3, 1e-12);
    assert_double_near(cm.ace_stat.mean, 0.775 / 3, 1e-12);
    assert_double_near(cm.mce_stat.mean, 0.925 / 3, 1e-12);
    assert_double_near(cm.ece_stat.sd, 0.17834112132527244, 1e-12);
    assert_double_near(cm.ace_stat.sd, 0.18521758975744054, 1e-12);
    assert_double_near(cm.mce_stat.sd, 0.2201640802270484, 1e-12);
    assert_double_near(cm.pooled_ece, 1.75 / 9, 1e-12);
    assert_double_near(cm.pooled_ace, 0.328125, 1e-12);
    assert_double_near(cm.pooled_mce, 0.5, 1e-12);

    /* Histogram, by hand (probability bin i, frequency bin j; frequency .5 is in bin 0):
     * class 0: A {.3:0,.4:1} f .5 -> [0][0]; {.9,.8} f 1 -> [1][1]
     *          B {.5:1,.2:0} f .5 -> [0][0]; {.6:0} f 0 -> [1][0]
     *          C {.1:0} f 0 -> [0][0];        {.95:0} f 0 -> [1][0]      => [[3,0],[2,1]]
     * class 1: A {.1,.2} f 0 -> [0][0]; {.7:1,.6:0} f .5 -> [1][0]
     *          B {.4:1,.5:0} f .5 -> [0][0]; {.8:1} f 1 -> [1][1]
     *          C {.05:1} f 1 -> [0][1]; {.9:1} f 1 -> [1][1]             => [[2,1],[1,2]] */
    static const uint32_t want[2 * 2 * 2] = { 3, 0, 2, 1,   2, 1, 1, 2 };
    assert_int_equal(cm.k, 2);
    assert_int_equal(cm.m, 2);
    for (int i = 0; i < 8; i++)
        if (cm.hist[i] != want[i]) fail_msg("hist[%d] = %u, want %u", i, cm.hist[i], want[i]);
    cs_case_metrics_free(&cm);
    assert_null(cm.hist);
    cs_dataset_free(d);
}

static void test_classwise(void **state)
{
    (void)state;
    cs_dataset *d = make(1);
    cs_settings s;
    settings(&s, CS_LENS_CLASSWISE);
    cs_case_metrics cm;
    cs_error err;
    assert_int_equal(cs_case_metrics_compute(d, &s, NULL, &cm, &err), CS_OK);
    assert_int_equal(cm.n_cases, 3);
    assert_double_near(cm.ece[0], 0.15, 1e-12);
    assert_double_near(cm.ace[1], 0.25, 1e-12);
    assert_double_near(cm.mce[1], 0.4, 1e-12);
    assert_double_near(cm.mce[2], 0.95, 1e-12);
    assert_double_near(cm.ece_stat.mean, 0.875 / 3, 1e-12);
    assert_double_near(cm.ace_stat.mean, 0.925 / 3, 1e-12);
    assert_double_near(cm.mce_stat.mean, 0.5, 1e-12);
    assert_double_near(cm.ece_stat.sd, 0.1662494778605, 1e-12);
    assert_double_near(cm.ace_stat.sd, 0.15855247992033702, 1e-12);
    assert_double_near(cm.mce_stat.sd, 0.334165627596057, 1e-12);
    /* pooled classwise (numpy, same script on all 9 rows) */
    assert_double_near(cm.pooled_ece, 0.1388888888888889, 1e-12);
    assert_double_near(cm.pooled_ace, 0.140625, 1e-12);
    assert_double_near(cm.pooled_mce, 0.23125, 1e-12);
    cs_case_metrics_free(&cm);
    cs_dataset_free(d);
}

static void test_selection_and_errors(void **state)
{
    (void)state;
    cs_dataset *d = make(1);
    cs_settings s;
    settings(&s, CS_LENS_TOP1);
    cs_case_metrics cm;
    cs_error err;
    /* only C and B: values as above, mean (.3 + .425)/2, sd |.425 - .3|/2 */
    strcpy(s.select, "case in {C, B}");
    assert_int_equal(cs_case_metrics_compute(d, &s, NULL, &cm, &err), CS_OK);
    assert_int_equal(cm.n_cases, 2);
    assert_int_equal(cm.case_index[0], 1);
    assert_double_near(cm.ece_stat.mean, 0.3625, 1e-12);
    assert_double_near(cm.ece_stat.sd, 0.0625, 1e-12);
    cs_case_metrics_free(&cm);

    strcpy(s.select, "conf > 0.99");
    assert_int_equal(cs_case_metrics_compute(d, &s, NULL, &cm, &err), CS_EEMPTY);
    strcpy(s.select, "case == Z");
    assert_int_equal(cs_case_metrics_compute(d, &s, NULL, &cm, &err), CS_EUSAGE);
    assert_non_null(strstr(err.msg, "unknown case 'Z'"));
    cs_dataset_free(d);

    d = make(0);
    s.select[0] = '\0';
    assert_int_equal(cs_case_metrics_compute(d, &s, NULL, &cm, &err), CS_EUSAGE);
    assert_non_null(strstr(err.msg, "case column"));
    cs_case_metrics_free(&cm);
    cs_dataset_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_top1),
        cmocka_unit_test(test_classwise),
        cmocka_unit_test(test_selection_and_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
