/* The class-naming rule (engine/classes.h) on its own, and through the lenses that name a
 * class (`class:C`, `group:`), which must follow the same rule as labels and selections. */
#include "support/cs_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/classes.h"
#include "calscope/metrics.h"
#include "engine/metrics/mx.h"

static int find(const cs_classmap *m, const char *tok, int *why)
{
    *why = 0;
    return cs_classmap_find(m, tok, strlen(tok), why);
}

static void test_rule(void **state)
{
    (void)state;
    int why;
    /* no name is a number: integers are positions */
    char pa[] = "cat", pb[] = "Dog", pc[] = "emu";
    char *const pets[] = { pa, pb, pc };
    cs_classmap *m = cs_classmap_of(pets, 3);
    assert_non_null(m);
    assert_int_equal(find(m, "dog", &why), 1);
    assert_int_equal(find(m, "1", &why), 1);
    assert_int_equal(find(m, "2.0", &why), 2);
    assert_int_equal(find(m, "#0", &why), 0);
    assert_int_equal(find(m, "3", &why), -1);
    assert_int_equal(why, CS_CLASS_RANGE);
    assert_int_equal(find(m, "-1", &why), -1);
    assert_int_equal(why, CS_CLASS_RANGE);
    assert_int_equal(find(m, "0.5", &why), -1);
    assert_int_equal(why, CS_CLASS_NOT_INT);
    assert_int_equal(find(m, "bird", &why), -1);
    assert_int_equal(why, CS_CLASS_UNKNOWN);
    assert_int_equal(find(m, "#3", &why), -1);
    assert_int_equal(why, CS_CLASS_POSITION);
    assert_int_equal(find(m, "#99999999999999999999999", &why), -1);
    assert_int_equal(why, CS_CLASS_POSITION);
    assert_true(cs_classmap_numbers_are_positions(m));
    assert_false(cs_classmap_out_of_order(m));
    cs_classmap_free(m);

    /* every name a number, out of order: names win, never positions */
    char na[] = "1", nb[] = "0", nc[] = "-0.5";
    char *const num[] = { na, nb, nc };
    m = cs_classmap_of(num, 3);
    assert_int_equal(find(m, "1", &why), 0);
    assert_int_equal(find(m, "1e0", &why), 0);
    assert_int_equal(find(m, "0", &why), 1);
    assert_int_equal(find(m, "-0", &why), 1);          /* -0 is 0 */
    assert_int_equal(find(m, "-.5", &why), 2);
    assert_int_equal(find(m, "2", &why), -1);
    assert_int_equal(why, CS_CLASS_NO_NUMBER);
    assert_int_equal(find(m, "#2", &why), 2);
    assert_int_equal(cs_classmap_find_number(m, 0.0, &why), 1);
    assert_false(cs_classmap_numbers_are_positions(m));
    assert_true(cs_classmap_out_of_order(m));
    assert_int_equal(cs_classmap_numbered(m), 3);
    char buf[300];
    assert_string_equal(cs_classmap_explain(m, CS_CLASS_NO_NUMBER, "2", 1, buf, sizeof buf),
                        "'2' names no class (the classes are named by numbers: 1, 0, -0.5)");
    cs_classmap_free(m);

    /* names exactly 0..K-1 in order: names and positions agree, and say "out of range" */
    char *const ord[] = { nb, na };
    m = cs_classmap_of(ord, 2);
    assert_int_equal(find(m, "1.0", &why), 1);
    assert_int_equal(find(m, "2", &why), -1);
    assert_int_equal(why, CS_CLASS_RANGE);
    assert_true(cs_classmap_numbers_are_positions(m));
    cs_classmap_free(m);

    /* mixed: a number that names no class is ambiguous */
    char *const mix[] = { pa, na };
    m = cs_classmap_of(mix, 2);
    assert_int_equal(find(m, "1", &why), 1);
    assert_int_equal(find(m, "0", &why), -1);
    assert_int_equal(why, CS_CLASS_AMBIGUOUS);
    assert_false(cs_classmap_out_of_order(m));        /* 1 is at position 1 */
    cs_classmap_free(m);

    /* adding: duplicates by text (ignoring case) or by value, and `#N` names */
    m = cs_classmap_new(0);
    assert_int_equal(cs_classmap_add(m, "a"), -1);
    assert_int_equal(cs_classmap_add(m, "7"), -1);
    assert_int_equal(cs_classmap_add(m, "A"), 0);
    assert_int_equal(cs_classmap_add(m, "7.00"), 1);
    assert_int_equal(cs_classmap_add(m, "#7"), CS_CLASSMAP_HASH_NAME);
    assert_int_equal(cs_classmap_add(m, "#"), -1);     /* no digits: an ordinary name */
    assert_int_equal(cs_classmap_size(m), 3);
    /* growing far past the hint keeps every name findable */
    static char names[5000][16];
    for (int i = 0; i < 5000; i++) {
        snprintf(names[i], sizeof names[i], "n%d", i);
        assert_int_equal(cs_classmap_add(m, names[i]), -1);
    }
    for (int i = 0; i < 5000; i += 7) assert_int_equal(find(m, names[i], &why), 3 + i);
    cs_classmap_free(m);
}

/* Columns named 1, 0, 2; rows [.7 .2 .1] y = column 0, [.1 .6 .3] y = column 1. With 10
 * uniform bins the class lens on column 0 is o = (.7, .1), t = (1, 0): gaps .3 and .1, ECE .2;
 * on column 1 it is o = (.2, .6), t = (0, 1): gaps .2 and .4, ECE .3. */
static double class_ece(const cs_dataset *d, const char *lens, cs_error *e)
{
    cs_settings s;
    cs_settings_default(&s);
    s.bins = 10;
    if (cs_settings_set_lens(&s, lens, e) != CS_OK) return -1;
    cs_prepared *p = cs_prepare(d, &s, e);
    if (!p) return -1;
    cs_result r;
    cs_status st = cs_evaluate(p, NULL, 0, CS_WANT_BINNED, NULL, &r, e);
    cs_prepared_free(p);
    if (st != CS_OK) return -1;
    double v = r.ece;
    cs_result_free(&r);
    return v;
}

static void test_lenses_follow_the_rule(void **state)
{
    (void)state;
    static const double prob[] = { 0.7, 0.2, 0.1, 0.1, 0.6, 0.3 };
    static const int32_t label[] = { 0, 1 };
    static const char *const names[] = { "1", "0", "2" };
    cs_dataset *d = cs_test_dataset(2, 3, prob, label);
    cs_test_set_class_names(d, names);
    cs_error e;
    assert_double_near(class_ece(d, "class:1", &e), 0.2, 1e-15);
    assert_double_near(class_ece(d, "class:#0", &e), 0.2, 1e-15);
    assert_double_near(class_ece(d, "class:0", &e), 0.3, 1e-15);
    assert_double_near(class_ece(d, "class:#1", &e), 0.3, 1e-15);
    assert_double_near(cs_dataset_class_index(d, "0"), 1, 0);
    assert_true(class_ece(d, "class:7", &e) < 0);
    assert_string_equal(e.msg, "--lens class: class '7' names no class (the classes are named by"
                               " numbers: 1, 0, 2)");
    assert_true(class_ece(d, "class:bird", &e) < 0);
    assert_string_equal(e.msg, "--lens class: unknown class 'bird' (3 classes)");
    /* group:1;0 puts column 0 and column 1 in groups 0 and 1 (column 2 the rest) */
    int32_t group_of[3];
    size_t ng;
    assert_int_equal(cs_mx_parse_groups(d, "1;0", group_of, &ng, &e), CS_OK);
    assert_int_equal(ng, 3);
    assert_int_equal(group_of[0], 0);
    assert_int_equal(group_of[1], 1);
    assert_int_equal(group_of[2], 2);
    assert_int_equal(cs_mx_parse_groups(d, "1;5", group_of, &ng, &e), CS_EUSAGE);
    assert_string_equal(e.msg, "--lens group: class '5' names no class (the classes are named by"
                               " numbers: 1, 0, 2)");
    cs_dataset_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rule),
        cmocka_unit_test(test_lenses_follow_the_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
