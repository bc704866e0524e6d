/* Selection parser: every operator on a hand-made 8-row dataset, every error with its caret. */
#include "support/cs_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calscope/select.h"

#define NR 8
#define K 3

/* Rows (probabilities cat, dog, bird), label, case. conf / pred worked by hand:
 *   r0 .7 .2 .1    y0 a    conf .7  pred 0
 *   r1 .2 .5 .3    y2 b    conf .5  pred 1
 *   r2 .1 .1 .8    y2 a    conf .8  pred 2
 *   r3 .33 .33 .34 y1 17   conf .34 pred 2
 *   r4 .96 .02 .02 y0 b    conf .96 pred 0
 *   r5 .4 .4 .2    y1 17   conf .4  pred 0  (tie: first maximal index)
 *   r6 .3 .66 .04  y1 ć    conf .66 pred 1
 *   r7 .6 .33 .07  y0 b    conf .6  pred 0 */
static cs_dataset *make_dataset(int with_case)
{
    static const double prob[NR * K] = {
        0.7, 0.2, 0.1,   0.2, 0.5, 0.3,    0.1, 0.1, 0.8,    0.33, 0.33, 0.34,
        0.96, 0.02, 0.02, 0.4, 0.4, 0.2,   0.3, 0.66, 0.04,  0.6, 0.33, 0.07 };
    static const int32_t label[NR] = { 0, 2, 2, 1, 0, 1, 1, 0 };
    static const int32_t cases[NR] = { 0, 1, 0, 2, 1, 2, 3, 1 };
    static const char *const names[K] = { "cat", "dog", "bird" };
    static const char *const case_names[4] = { "a", "b", "17", "\xc4\x87" };
    cs_dataset *d = cs_test_dataset(NR, K, prob, label);
    cs_test_set_class_names(d, names);
    if (with_case) cs_test_set_cases(d, 4, case_names, cases);
    return d;
}

/* Compiles expr, checks the mask of matching rows ("10100000") via match and filter. */
static void check_mask(cs_dataset *d, const char *expr, const char *want)
{
    cs_error err;
    cs_error_clear(&err);
    cs_select *s = cs_select_compile(expr, d, &err);
    if (!s) fail_msg("'%s' did not compile: %s", expr, err.msg);
    char got[NR + 1];
    for (size_t r = 0; r < NR; r++) got[r] = cs_select_match(s, d, r) ? '1' : '0';
    got[NR] = '\0';
    if (strcmp(got, want) != 0) fail_msg("'%s' selects %s, want %s", expr, got, want);

    uint32_t rows[NR], out[NR];
    for (uint32_t r = 0; r < NR; r++) rows[r] = r;
    size_t m = cs_select_filter(s, d, rows, NR, out);
    size_t j = 0;
    for (uint32_t r = 0; r < NR; r++)
        if (want[r] == '1') { assert_true(j < m); assert_int_equal(out[j], r); j++; }
    assert_int_equal(m, j);
    /* in place gives the same */
    assert_int_equal(cs_select_filter(s, d, rows, NR, rows), m);
    assert_memory_equal(rows, out, m * sizeof *out);
    assert_int_equal(cs_select_is_all(s), strspn(expr, " \t") == strlen(expr));
    cs_select_free(s);
}

static void test_label_conditions(void **state)
{
    (void)state;
    cs_dataset *d = make_dataset(1);
    check_mask(d, "y == 2", "01100000");
    check_mask(d, "y == bird", "01100000");
    check_mask(d, "label == BIRD", "01100000");
    check_mask(d, "LABEL==\"bird\"", "01100000");
    check_mask(d, "Y != 2", "10011111");
    check_mask(d, "y in {0, bird}", "11101001");
    check_mask(d, "y IN {2}", "01100000");
    check_mask(d, "y in {cat,dog,bird}", "11111111");
    cs_dataset_free(d);
}

static void test_pred_conditions(void **state)
{
    (void)state;
    cs_dataset *d = make_dataset(1);
    check_mask(d, "pred == cat", "10001101");   /* r5 is a tie 0.4/0.4: first index wins */
    check_mask(d, "pred != 0", "01110010");
    check_mask(d, "pred in {1, 2}", "01110010");
    check_mask(d, "Pred == 'dog'", "01000010");
    cs_dataset_free(d);
}

static void test_output_conditions(void **state)
{
    (void)state;
    cs_dataset *d = make_dataset(1);
    /* conf: .7 .5 .8 .34 .96 .4 .66 .6 */
    check_mask(d, "conf > 0.95", "00001000");
    check_mask(d, "conf>0.95", "00001000");
    check_mask(d, "conf >= 0.8", "00101000");
    check_mask(d, "conf > 0.8", "00001000");
    check_mask(d, "conf < 0.4", "00010000");
    check_mask(d, "conf <= 0.4", "00010100");
    check_mask(d, "conf == 0.5", "01000000");
    check_mask(d, "conf != 0.5", "10111111");
    check_mask(d, "CONF > 5e-1", "10101011");
    /* a subnormal is a number (strtod says ERANGE on it): every conf is above it */
    check_mask(d, "conf > 1e-320", "11111111");
    check_mask(d, "p[bird] >= 4.9e-324", "11111111");
    /* p[bird]: .1 .3 .8 .34 .02 .2 .04 .07 */
    check_mask(d, "p[2] >= 0.3", "01110000");
    check_mask(d, "p[bird] > 0.3", "00110000");
    check_mask(d, "p['bird'] < 0.05", "00001010");
    check_mask(d, "p [ dog ] < 0.1", "00001000");
    cs_dataset_free(d);
}

static void test_intervals(void **state)
{
    (void)state;
    cs_dataset *d = make_dataset(1);
    /* conf: .7 .5 .8 .34 .96 .4 .66 .6 */
    check_mask(d, "conf in [0.33, 0.66)", "01010101");
    check_mask(d, "conf in [0.33, 0.66]", "01010111");
    check_mask(d, "conf in (0.4, 0.66]", "01000011");
    check_mask(d, "conf in (0.4,0.6)", "01000000");
    check_mask(d, "conf in [0.4, 0.4]", "00000100");
    check_mask(d, "conf in [0.4, 0.4)", "00000000");
    /* p[cat]: .7 .2 .1 .33 .96 .4 .3 .6 */
    check_mask(d, "p[cat] in [0, 0.33)", "01100010");
    check_mask(d, "p[0] in (0.33, 1]", "10001101");
    cs_dataset_free(d);
}

static void test_case_and_conjunction(void **state)
{
    (void)state;
    cs_dataset *d = make_dataset(1);
    /* cases: a b a 17 b 17 ć b */
    check_mask(d, "case == 17", "00010100");
    check_mask(d, "case in {a, b}", "11101001");
    check_mask(d, "case != a", "01011111");
    check_mask(d, "CASE == A", "10100000");      /* case-insensitive fallback, unambiguous */
    check_mask(d, "case == \xc4\x87", "00000010");
    check_mask(d, "y == 2 and conf > 0.6", "00100000");
    check_mask(d, "Y == 1 AND pred == 0 And conf in [0.3,0.5]", "00000100");
    check_mask(d, "case == b and y == cat and p[dog] >= 0.33", "00000001");
    check_mask(d, "", "11111111");
    check_mask(d, "  \t ", "11111111");
    cs_dataset_free(d);
}

/* Compiles a bad expression; checks the code, column, reason and the caret line. */
static void check_error(cs_dataset *d, const char *expr, long col, const char *reason)
{
    cs_error err;
    cs_error_clear(&err);
    cs_select *s = cs_select_compile(expr, d, &err);
    if (s) { cs_select_free(s); fail_msg("'%s' compiled, want an error", expr); }
    assert_int_equal(err.code, CS_EUSAGE);
    if (err.col != col) fail_msg("'%s': col %ld, want %ld (%s)", expr, err.col, col, err.msg);
    char want_head[512];
    snprintf(want_head, sizeof want_head, "selection: %s", reason);
    if (strncmp(err.msg, want_head, strlen(want_head)) != 0)
        fail_msg("'%s': message\n%s\nwant it to start with\n%s", expr, err.msg, want_head);
    /* second line: two spaces + the expression; third: two spaces, col-1 spaces, caret */
    const char *l2 = strchr(err.msg, '\n');
    assert_non_null(l2);
    l2++;
    const char *l3 = strchr(l2, '\n');
    assert_non_null(l3);
    l3++;
    char line2[600], line3[600];
    snprintf(line2, sizeof line2, "  %s\n", expr);
    assert_int_equal(strncmp(l2, line2, strlen(line2)), 0);
    int n = snprintf(line3, sizeof line3, "  %*s^", (int)(col - 1), "");
    assert_true(n > 0);
    if (strcmp(l3, line3) != 0) fail_msg("'%s': caret line '%s', want '%s'", expr, l3, line3);
}

static void test_errors(void **state)
{
    (void)state;
    cs_dataset *d = make_dataset(1);
    /* unexpected token */
    check_error(d, "foo == 3", 1, "unexpected 'foo'");
    check_error(d, "and y == 1", 1, "unexpected 'and'");
    check_error(d, "y == 1 and == 2", 12, "unexpected '=='");
    /* expected operator */
    check_error(d, "y 3", 3, "expected an operator (==, != or in) after 'y', got '3'");
    check_error(d, "y = 1", 3, "expected an operator");
    check_error(d, "conf", 5, "expected an operator (<, <=, >, >=, ==, != or in) after 'conf', got end");
    check_error(d, "p[dog] 0.5", 8, "expected an operator (<, <=, >, >=, ==, != or in) after 'p[dog]'");
    check_error(d, "y < 1", 3, "operator '<' does not apply to 'y'");
    check_error(d, "conf in {1}", 9, "expected '[' or '(' after 'in'");
    check_error(d, "p 2 > 0.1", 3, "expected '[' after 'p'");
    check_error(d, "p[2 > 0.1", 5, "expected ']'");
    /* bad number */
    check_error(d, "conf > abc", 8, "bad number 'abc'");
    check_error(d, "conf > 0.5x", 8, "bad number '0.5x'");
    check_error(d, "conf > nan", 8, "bad number 'nan'");
    check_error(d, "conf > 1e999", 8, "bad number '1e999'");
    check_error(d, "conf > 0x1p-1", 8, "bad number '0x1p-1'");   /* no hex: as in a data file */
    check_error(d, "conf >", 7, "expected a number, got end of expression");
    check_error(d, "conf in [0.1, x]", 15, "bad number 'x'");
    /* unterminated set / interval */
    check_error(d, "y in {1,2", 6, "unterminated set: missing '}'");
    check_error(d, "y in {1,", 6, "unterminated set: missing '}'");
    check_error(d, "y in {", 6, "unterminated set: missing '}'");
    check_error(d, "y in {1 2}", 9, "expected ',' or '}' in set, got '2'");
    check_error(d, "conf in [0.3, 0.6", 9, "unterminated interval: missing ']' or ')'");
    check_error(d, "conf in (0.3", 9, "unterminated interval");
    check_error(d, "conf in [0.1 0.2]", 14, "expected ',' in interval, got '0.2'");
    check_error(d, "conf in [0.1, 0.2}", 18, "expected ']' or ')' to close the interval");
    check_error(d, "y == 'cat", 6, "unterminated quoted name");
    /* unknown class / out of range / unknown case */
    check_error(d, "y == dog2", 6, "unknown class 'dog2'");
    check_error(d, "pred in {cat, fish}", 15, "unknown class 'fish'");
    check_error(d, "y == 3", 6, "class 3 out of range: the file has 3 classes (0..2)");
    check_error(d, "y == -1", 6, "class -1 out of range");
    check_error(d, "p[5] > 0.1", 3, "class 5 out of range");
    check_error(d, "case == zz", 9, "unknown case 'zz'");
    check_error(d, "case in {a, 18}", 13, "unknown case '18'");
    /* empty set, trailing input, and at end */
    check_error(d, "y in {}", 6, "empty set");
    check_error(d, "y == 1 conf > 0.5", 8, "trailing input 'conf': expected 'and' or end of expression");
    check_error(d, "y == 1 )", 8, "trailing input ')'");
    check_error(d, "y == 1 and", 8, "'and' at end of expression");
    check_error(d, "y == 1 AND  ", 8, "'and' at end of expression");
    /* interval lo > hi: caret under lo */
    check_error(d, "conf in [0.7, 0.3]", 10, "interval lower bound 0.7 is above its upper bound 0.3");
    /* columns count characters, not bytes: ć is two bytes, one column */
    check_error(d, "case == \xc4\x87 x", 11, "trailing input 'x'");
    check_error(d, "y == \xc4\x87", 6, "unknown class '\xc4\x87'");
    cs_dataset_free(d);

    /* the exact full message, spelled out once */
    d = make_dataset(1);
    cs_error err;
    assert_null(cs_select_compile("y == 1 and", d, &err));
    assert_string_equal(err.msg,
                        "selection: 'and' at end of expression: expected a condition after it\n"
                        "  y == 1 and\n"
                        "         ^");
    assert_int_equal(err.line, 0);
    cs_dataset_free(d);

    /* case without a case column */
    d = make_dataset(0);
    check_error(d, "y == 1 and case == a", 12, "the file has no case column");
    check_mask(d, "y == 1", "00010110");
    cs_dataset_free(d);
}

/* Without cs_dataset_prepare, conf/pred come from the probabilities directly. */
/* Classes named by numbers out of column order: a class in an expression is
 * matched to the names first, exactly as labels are when the file loads (engine/classes.h).
 * The same 8 rows with the columns named 2, 0, 1: `y == 2` is the first column. */
static void test_classes_named_by_numbers(void **state)
{
    (void)state;
    cs_dataset *d = make_dataset(0);
    static const char *const numbered[K] = { "2", "0", "1" };
    cs_test_set_class_names(d, numbered);
    /* labels 0 2 2 1 0 1 1 0 are columns; the class named 2 is column 0 */
    check_mask(d, "y == 2", "10001001");
    check_mask(d, "y == 2.0", "10001001");
    check_mask(d, "y == #0", "10001001");
    check_mask(d, "y == 0", "00010110");          /* column 1 */
    check_mask(d, "y in {1, 0}", "01110110");     /* columns 2 and 1 */
    check_mask(d, "pred == 2", "10001101");       /* pred column 0: rows 0 4 5 7 */
    check_mask(d, "p[2] > 0.5", "10001001");      /* column 0 above .5: .7 .96 .6 */
    check_mask(d, "p[#1] >= 0.5", "01000010");    /* column 1: .5 .66 */
    check_error(d, "y == 3", 6, "class '3' names no class (the classes are named by numbers: 2, 0, 1)");
    check_error(d, "p[#3] > 0", 3, "class '#3' is past the last class, #2");
    /* some names numbers, some not: a number is never guessed as a position */
    static const char *const mixed[K] = { "cat", "1", "bird" };
    cs_test_set_class_names(d, mixed);
    check_mask(d, "y == 1", "00010110");
    check_mask(d, "y == CAT", "10001001");
    check_error(d, "y == 2", 6, "class '2' names no class, and is not read as a position because"
                                " some class names are numbers (classes: cat, 1, bird)");
    check_mask(d, "y == #2", "01100000");
    cs_dataset_free(d);
}

static void test_unprepared(void **state)
{
    (void)state;
    cs_dataset *d = make_dataset(1);
    free(d->conf); d->conf = NULL;
    free(d->pred); d->pred = NULL;
    check_mask(d, "pred == 0 and conf in [0.4, 0.7]", "10000101");
    cs_dataset_free(d);
}

/* cs_select_check_syntax: the grammar alone. An expression malformed in form gets exactly the
 * message (and column) cs_select_compile gives on a loaded dataset; names it cannot resolve
 * without one, and a case condition without a case column, pass. */
static void test_syntax_only(void **state)
{
    (void)state;
    cs_dataset *d = make_dataset(0);
    static const char *const bad_form[] = {
        "garbage ((", "foo == 3", "y == 1 and == 2", "y 3", "conf", "y < 1", "p[2 > 0.1",
        "conf > abc", "conf >", "y in {1,2", "y in {1 2}", "conf in [0.3, 0.6", "conf in [0.6, 0.3]",
        "y == 'cat", "y == 1 and", "conf > 0.5 conf", "conf = 0.5",
    };
    for (size_t i = 0; i < sizeof bad_form / sizeof *bad_form; i++) {
        cs_error loaded, alone;
        cs_error_clear(&loaded);
        cs_error_clear(&alone);
        assert_null(cs_select_compile(bad_form[i], d, &loaded));
        assert_int_equal(cs_select_check_syntax(bad_form[i], &alone), CS_EUSAGE);
        if (strcmp(loaded.msg, alone.msg) != 0 || loaded.col != alone.col)
            fail_msg("'%s': alone '%s' (col %ld), loaded '%s' (col %ld)", bad_form[i], alone.msg, alone.col,
                     loaded.msg, loaded.col);
    }
    cs_error err;
    cs_error_clear(&err);
    assert_string_equal((cs_select_check_syntax("garbage ((", &err), err.msg),
                        "selection: unexpected 'garbage': expected a condition on y, label, pred, conf, "
                        "p[CLASS] or case\n  garbage ((\n  ^");
    static const char *const good_form[] = {
        "", "  ", "y == fish", "pred in {fish, 99}", "p[unknown] > 0.5", "case == zz",
        "case in {a, 'b c'} and conf in (0.1, 0.9]", "y == 1 and conf >= 0",
    };
    for (size_t i = 0; i < sizeof good_form / sizeof *good_form; i++) {
        cs_error_clear(&err);
        if (cs_select_check_syntax(good_form[i], &err) != CS_OK)
            fail_msg("'%s' refused: %s", good_form[i], err.msg);
    }
    cs_dataset_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_label_conditions),
        cmocka_unit_test(test_pred_conditions),
        cmocka_unit_test(test_output_conditions),
        cmocka_unit_test(test_intervals),
        cmocka_unit_test(test_case_and_conjunction),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_unprepared),
        cmocka_unit_test(test_classes_named_by_numbers),
        cmocka_unit_test(test_syntax_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
