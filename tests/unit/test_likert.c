/* Likert view: per-interval counts and inter-interval ECE, worked by hand. */
#include "support/cs_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calscope/likert.h"

/* K = 3, top-1 lens, M = 5 uniform bins (0,.2] (.2,.4] (.4,.6] (.6,.8] (.8,1].
 *   s1 [.34 .33 .33] y0 conf .34 right   s2 [.4 .3 .3]   y1 conf .4 wrong
 *   s3 [.5 .25 .25]  y1 conf .5 wrong    s4 [.7 .2 .1]   y0 conf .7 right
 *   s5 [.9 .05 .05]  y1 conf .9 wrong    s6 [1 0 0]      y0 conf 1  right
 *   s7 [.66 .2 .14]  y2 conf .66 wrong */
static cs_dataset *make(void)
{
    static const double prob[7 * 3] = {
        .34, .33, .33,  .4, .3, .3,  .5, .25, .25,  .7, .2, .1,  .9, .05, .05,  1, 0, 0,  .66, .2, .14 };
    static const int32_t label[7] = { 0, 1, 1, 0, 1, 0, 2 };
    cs_dataset *d = cs_test_dataset(7, 3, prob, label);
    cs_test_set_class_names(d, (const char *const[]){ "a", "b", "c" });
    return d;
}

static void base(cs_settings *s)
{
    cs_settings_default(s);
    s->bins = 5;
}

static void test_default_cuts(void **state)
{
    (void)state;
    cs_dataset *d = make();
    cs_settings s;
    base(&s);
    cs_likert lk;
    cs_error err;
    assert_int_equal(cs_likert_compute(d, &s, NULL, 0, NULL, &lk, &err), CS_OK);
    assert_int_equal(lk.n, 3);
    /* low [0, .33): no top-1 confidence of 3 classes is below 1/3 */
    assert_int_equal(lk.iv[0].count, 0);
    assert_true(isnan(lk.iv[0].ece));
    assert_false(lk.iv[0].hi_closed);
    /* medium [.33, .66): s1 .34, s2 .4 in bin 1 (acc .5, inside [.33,.66] -> 0); s3 .5 in bin 2
     * (acc 0 -> .33 - 0 = .33). ECE = (2*0 + 1*.33)/3 = .11 */
    assert_int_equal(lk.iv[1].count, 3);
    assert_double_near(lk.iv[1].ece, 0.33 / 3, 1e-12);
    /* high [.66, 1]: s7 .66 (the boundary belongs here), s4 .7 in bin 3 (acc .5);
     * s5 .9, s6 1.0 (closed end) in bin 4 (acc .5); each bin .66 - .5 = .16. ECE = .16 */
    assert_int_equal(lk.iv[2].count, 4);
    assert_true(lk.iv[2].hi_closed);
    assert_double_near(lk.iv[2].lo, 0.66, 0);
    assert_double_near(lk.iv[2].ece, 0.66 - 0.5, 1e-12);
    cs_dataset_free(d);
}

static void test_base_selection_and_cuts(void **state)
{
    (void)state;
    cs_dataset *d = make();
    cs_settings s;
    base(&s);
    cs_likert lk;
    cs_error err;
    /* without s7: high = s4 .7 (acc 1, inside [.66,1] -> 0, n1), bin 4 as before .16 (n2)
     * ECE = 2*.16/3 */
    strcpy(s.select, "y != c");
    assert_int_equal(cs_likert_compute(d, &s, NULL, 0, NULL, &lk, &err), CS_OK);
    assert_int_equal(lk.iv[1].count, 3);
    assert_int_equal(lk.iv[2].count, 3);
    assert_double_near(lk.iv[2].ece, 2 * (0.66 - 0.5) / 3, 1e-12);

    /* cuts 0, .5, 1: [0,.5) = s1, s2 in bin 1, acc .5 = h -> 0;
     * [.5, 1] = s3 bin 2 acc 0 (.5 - 0 = .5), s4 s7 bin 3 acc .5, s5 s6 bin 4 acc .5 -> .5/5 */
    s.select[0] = '\0';
    const double cuts[3] = { 0, 0.5, 1 };
    assert_int_equal(cs_likert_compute(d, &s, cuts, 3, NULL, &lk, &err), CS_OK);
    assert_int_equal(lk.n, 2);
    assert_int_equal(lk.iv[0].count, 2);
    assert_double_near(lk.iv[0].ece, 0.0, 1e-12);
    assert_int_equal(lk.iv[1].count, 5);
    assert_double_near(lk.iv[1].ece, 0.1, 1e-12);

    /* class lens: the coordinate is p[a]; p[a] in [.5, 1]: s3 .5 (y1: t 0), s4 .7 (t 1),
     * s5 .9 (t 0), s6 1 (t 1), s7 .66 (t 0): bin 2 {.5:0} -> .5; bin 3 {.7:1, .66:0} t .5 -> 0;
     * bin 4 {.9:0, 1:1} t .5 -> 0. ECE = .5/5 = .1. [0, .5): s1 .34 (t1), s2 .4 (t0) bin 1,
     * t .5 -> 0 */
    strcpy(s.lens_arg, "a");
    s.lens = CS_LENS_CLASS;
    assert_int_equal(cs_likert_compute(d, &s, cuts, 3, NULL, &lk, &err), CS_OK);
    assert_int_equal(lk.iv[0].count, 2);
    assert_int_equal(lk.iv[1].count, 5);
    assert_double_near(lk.iv[1].ece, 0.1, 1e-12);
    cs_dataset_free(d);
}

static void test_errors(void **state)
{
    (void)state;
    cs_dataset *d = make();
    cs_settings s;
    base(&s);
    cs_likert lk;
    cs_error err;
    const double bad[3] = { 0, 0.5, 0.5 };
    assert_int_equal(cs_likert_compute(d, &s, bad, 3, NULL, &lk, &err), CS_EUSAGE);
    assert_non_null(strstr(err.msg, "must increase"));
    assert_int_equal(cs_likert_compute(d, &s, bad, 1, NULL, &lk, &err), CS_EUSAGE);
    strcpy(s.select, "y == 1 and");
    assert_int_equal(cs_likert_compute(d, &s, NULL, 0, NULL, &lk, &err), CS_EUSAGE);
    assert_int_equal(err.col, 8);    /* the caret points into the user's own expression */
    s.select[0] = '\0';
    s.lens = CS_LENS_CLASSWISE;
    assert_int_equal(cs_likert_compute(d, &s, NULL, 0, NULL, &lk, &err), CS_EUSAGE);
    cs_dataset_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_cuts),
        cmocka_unit_test(test_base_selection_and_cuts),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
