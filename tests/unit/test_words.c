/* Unit tests of the text fitting shared by the dashboard and the report (chart/words.h) and of
 * the dashboard's scroll arithmetic (tui/scroll.h): wrapping never cuts a word that fits on a
 * line, short names stay distinct, a scrolled window never runs past its table. */
#include "support/cs_test.h"

#include <stdio.h>
#include <string.h>

#include "chart/words.h"
#include "tui/scroll.h"
#include "tui/status.h"

static void test_wrap_at_spaces(void **state)
{
    (void)state;
    char out[256];
    /* the load error of a missing file at 30 columns: breaks between words only */
    int n = ch_wrap("data.csv:3:7: bad number 'x' in column p_1", 20, out, sizeof out);
    assert_string_equal(out, "data.csv:3:7: bad\nnumber 'x' in column\np_1\n");
    assert_int_equal(n, 3);
    /* a line that fits is kept; newlines of the text are kept */
    n = ch_wrap("one\ntwo three", 10, out, sizeof out);
    assert_string_equal(out, "one\ntwo three\n");
    assert_int_equal(n, 2);
    /* exactly the width */
    n = ch_wrap("abcde fghij", 5, out, sizeof out);
    assert_string_equal(out, "abcde\nfghij\n");
    assert_int_equal(n, 2);
}

static void test_wrap_long_word(void **state)
{
    (void)state;
    char out[256];
    /* a path longer than the line breaks after a '/' */
    int n = ch_wrap("open /very/long/directory/name.csv: No such file", 16, out, sizeof out);
    assert_string_equal(out, "open\n/very/long/\ndirectory/\nname.csv: No\nsuch file\n");
    assert_int_equal(n, 5);
    /* nothing to break at: cut at the width */
    n = ch_wrap("abcdefghij", 4, out, sizeof out);
    assert_string_equal(out, "abcd\nefgh\nij\n");
    assert_int_equal(n, 3);
    /* UTF-8 counts columns, not bytes */
    n = ch_wrap("\xc3\x97\xc3\x97\xc3\x97 ab", 3, out, sizeof out);
    assert_string_equal(out, "\xc3\x97\xc3\x97\xc3\x97\nab\n");
    /* a small buffer truncates and stays terminated */
    char small[6];
    ch_wrap("abc def ghi", 3, small, sizeof small);
    assert_string_equal(small, "abc\nd");
}

static void short_names(const char *const *names, size_t n, int w, char out[][64])
{
    char *p[8];
    for (size_t i = 0; i < n; i++) p[i] = out[i];
    ch_short_names(names, n, w, p, 64);
}

static void test_short_names(void **state)
{
    (void)state;
    char out[8][64];
    /* the symptom: three methods cut to the same 17 columns */
    const char *const m[] = { "breast_cancer__lr", "breast_cancer__lr+ts", "breast_cancer__lr+platt" };
    short_names(m, 3, 18, out);
    assert_string_equal(out[0], "breast_cancer__lr");     /* fits: whole */
    assert_string_equal(out[1], "breast_cancer_~+ts");    /* the heads agree: the ends differ */
    assert_string_equal(out[2], "breast_canc~+platt");    /* ... from the separator */
    /* no separator near the end: (12 - 1) / 2 = 5 columns of it */
    const char *const t[] = { "experimentnumberoneABC", "experimentnumberoneXYZ" };
    short_names(t, 2, 12, out);
    assert_string_equal(out[0], "experi~neABC");
    assert_string_equal(out[1], "experi~neXYZ");
    /* the dashboard's file and its +ts in 14 columns */
    const char *const d[] = { "digits_gnb.csv", "digits_gnb.csv+ts" };
    short_names(d, 2, 14, out);
    assert_string_equal(out[0], "digits_gnb.csv");
    assert_string_equal(out[1], "digits_gnb~+ts");
    /* a method's name is kept whole and the file's gives way, where the heads alone would
     * tell them apart only by "+e~" and "+m~" */
    const char *const r[] = { "digits_logreg.csv", "digits_logreg.csv+ets", "digits_logreg.csv+irova",
                              "digits_logreg.csv+ms", "digits_gnb.csv+ets" };
    short_names(r, 5, 20, out);
    assert_string_equal(out[0], "digits_logreg.csv");
    assert_string_equal(out[1], "digits_logreg.c~+ets");
    assert_string_equal(out[2], "digits_logreg~+irova");
    assert_string_equal(out[3], "digits_logreg.csv+ms");   /* fits */
    assert_string_equal(out[4], "digits_gnb.csv+ets");
    short_names(r, 5, 13, out);
    assert_string_equal(out[0], "digits_l~.csv");           /* no method: the end from '.' */
    assert_string_equal(out[1], "digits_l~+ets");           /* "digits_l" is not "digits_g" */
    assert_string_equal(out[2], "digits~+irova");
    assert_string_equal(out[3], "digits_lo~+ms");
    assert_string_equal(out[4], "digits_g~+ets");
    /* no room for a head that tells the files apart beside the method ("digits_l~+ets" is 13
     * columns): the head that does, as before */
    const char *const q[] = { "digits_logreg.csv+ets", "digits_gnb.csv+ets" };
    short_names(q, 2, 12, out);
    assert_string_equal(out[0], "digits_logr~");
    assert_string_equal(out[1], "digits_gnb.~");
    /* heads that differ within the width: head~ */
    const char *const f[] = { "digits_logreg_fold1.csv", "digits_gnb_fold1.csv", "digits_rf.csv" };
    short_names(f, 3, 12, out);
    assert_string_equal(out[0], "digits_logr~");
    assert_string_equal(out[1], "digits_gnb_~");
    assert_string_equal(out[2], "digits_rf.c~");
    /* the same head and tail: around the first difference */
    const char *const g[] = { "run_aaaaaaaa_A_bbbbbbbb.csv", "run_aaaaaaaa_B_bbbbbbbb.csv" };
    short_names(g, 2, 10, out);
    assert_string_equal(out[0], "~aaaaaa_A~");
    assert_string_equal(out[1], "~aaaaaa_B~");
    /* names that fit are untouched, equal names stay equal */
    const char *const e[] = { "a.csv", "a.csv", "b.csv" };
    short_names(e, 3, 8, out);
    assert_string_equal(out[0], "a.csv");
    assert_string_equal(out[1], "a.csv");
    assert_string_equal(out[2], "b.csv");
}

/* Every rendering of a set of names is distinct and fits, for names differing anywhere. */
static void test_short_names_distinct(void **state)
{
    (void)state;
    char base[] = "experiment_2026_model_variant_seed_00_calibrated.csv";
    size_t len = strlen(base);
    for (int w = 4; w <= 40; w++)
        for (size_t pos = 0; pos < len; pos += 3) {
            char a[64], b[64], c[64];
            snprintf(a, sizeof a, "%s", base);
            snprintf(b, sizeof b, "%s", base);
            snprintf(c, sizeof c, "%s+ts", base);
            b[pos] = b[pos] == 'Q' ? 'R' : 'Q';
            const char *const n[] = { a, b, c };
            char out[3][64];
            short_names(n, 3, w, out);
            for (int i = 0; i < 3; i++) assert_true((int)strlen(out[i]) <= w);
            if (w >= 12) {   /* room for the '~' marks and the place that differs */
                assert_string_not_equal(out[0], out[1]);
                assert_string_not_equal(out[0], out[2]);
                assert_string_not_equal(out[1], out[2]);
            }
        }
}

static void test_scroll_window(void **state)
{
    (void)state;
    tui_scroll s;
    memset(&s, 0, sizeof s);
    int shown, marker;
    /* 1800 cases in 10 rows: 9 rows and the marker */
    int first = tui_scroll_window(&s, TUI_SCROLL_CASES, 1800, 10, &shown, &marker);
    assert_int_equal(first, 0);
    assert_int_equal(shown, 9);
    assert_true(marker);
    assert_true(tui_scroll_move(&s, TUI_SCROLL_CASES, TUI_SCROLL_PGDN));
    first = tui_scroll_window(&s, TUI_SCROLL_CASES, 1800, 10, &shown, &marker);
    assert_int_equal(first, 8);                        /* a page less one line of overlap */
    tui_scroll_move(&s, TUI_SCROLL_CASES, TUI_SCROLL_END);
    first = tui_scroll_window(&s, TUI_SCROLL_CASES, 1800, 10, &shown, &marker);
    assert_int_equal(first, 1791);
    assert_int_equal(shown, 9);
    assert_false(tui_scroll_move(&s, TUI_SCROLL_CASES, TUI_SCROLL_DOWN) &&
                 tui_scroll_window(&s, TUI_SCROLL_CASES, 1800, 10, &shown, &marker) != 1791);
    tui_scroll_move(&s, TUI_SCROLL_CASES, TUI_SCROLL_HOME);
    assert_int_equal(s.top[TUI_SCROLL_CASES], 0);
    assert_false(tui_scroll_move(&s, TUI_SCROLL_CASES, TUI_SCROLL_UP));
    /* a table that fits: no marker, every row */
    first = tui_scroll_window(&s, TUI_SCROLL_CLASSES, 10, 10, &shown, &marker);
    assert_int_equal(first, 0);
    assert_int_equal(shown, 10);
    assert_false(marker);
    /* a position past a shrunken table is pulled back */
    s.top[TUI_SCROLL_CLASSES] = 50;
    first = tui_scroll_window(&s, TUI_SCROLL_CLASSES, 12, 8, &shown, &marker);
    assert_int_equal(first, 5);
    assert_int_equal(shown, 7);
    /* show: a selected row below the window scrolls it */
    tui_scroll_show(&s, TUI_SCROLL_CLASSES, 0);
    assert_int_equal(s.top[TUI_SCROLL_CLASSES], 0);
    tui_scroll_show(&s, TUI_SCROLL_CLASSES, 9);
    assert_int_equal(s.top[TUI_SCROLL_CLASSES], 3);
}

static void test_scroll_marker(void **state)
{
    (void)state;
    char buf[128];
    tui_scroll_marker(buf, 80, 0, 9, 1800);
    assert_string_equal(buf, "rows 1-9 of 1800, more below (arrows PgUp PgDn Home End)");
    tui_scroll_marker(buf, 39, 8, 9, 1800);
    assert_string_equal(buf, "rows 9-17 of 1800, more above and below");
    tui_scroll_marker(buf, 34, 1791, 9, 1800);
    assert_string_equal(buf, "rows 1792-1800 of 1800, more above");
    tui_scroll_marker(buf, 20, 8, 9, 1800);
    assert_string_equal(buf, "9-17/1800 ^v");
    tui_scroll_marker(buf, 5, 8, 9, 1800);
    assert_string_equal(buf, "9-17/");
}

/* tui_status_fit with where "[1/2]" */
static void status_fit(char *out, size_t size, int width, const char *const *files, size_t nf,
                       size_t active, const char *cut, const tui_status_part *parts, size_t n)
{
    tui_status_in in = { files, nf, active, "[1/2]", cut, parts, n };
    tui_status_fit(out, size, width, &in);
}

static void test_status_fit(void **state)
{
    (void)state;
    char out[256];
    const char *ell = "\xe2\x80\xa6";
    const tui_status_part parts[] = {
        { "top1", 0 }, { "M 15 uniform", 0 }, { "\xcf\x83 0.1", 3 }, { "tvd", 2 }, { "seed 0", 1 },
        { "ci 200", 0 }, { "sel p_0 > 0.5", 0 },
    };
    size_t n = sizeof parts / sizeof parts[0];
    const char *a[] = { "a.csv" }, *lng[] = { "a_rather_long_experiment_file_name_v2.csv" },
               *dl[] = { "digits_logreg_logits.csv" };
    /* all fits: unchanged */
    status_fit(out, sizeof out, 200, a, 1, 0, ell, parts, n);
    assert_string_equal(out, " a.csv [1/2] | top1 | M 15 uniform | \xcf\x83 0.1 | tvd | seed 0 | ci 200 | sel p_0 > 0.5");
    /* 80 columns less " ready ": the name shortens to 8, then seed and distance go;
     * the selection and ci stay */
    status_fit(out, sizeof out, 72, lng, 1, 0, ell, parts, n);
    assert_string_equal(out, " a_r~.csv [1/2] | top1 | M 15 uniform | \xcf\x83 0.1 | ci 200 | sel p_0 > 0.5");
    /* shortening the name just enough is all it takes */
    status_fit(out, sizeof out, 72, dl, 1, 0, ell, parts, n - 1);
    assert_string_equal(out, " digits~.csv [1/2] | top1 | M 15 uniform | \xcf\x83 0.1 | tvd | seed 0 | ci 200");
    /* nothing left to drop: cut, with a mark no selection ends with (before: '>', which read
     * as the selection's operator: "sel conf > >") */
    status_fit(out, sizeof out, 30, lng, 1, 0, ell, parts, n);
    assert_string_equal(out, " a_r~.csv [1/2] | top1 | M 15\xe2\x80\xa6");
    const tui_status_part sel[] = { { "top1", 0 }, { "sel conf > 0.9", 0 } };
    status_fit(out, sizeof out, 27, a, 1, 0, ell, sel, 2);
    assert_string_equal(out, " a.csv [1/2] | top1 | sel \xe2\x80\xa6");   /* 27 columns */
    status_fit(out, sizeof out, 31, a, 1, 0, "~", sel, 2);
    assert_string_equal(out, " a.csv [1/2] | top1 | sel conf~");
    /* two files alike but for their ends: the shown one's form is its own (before, both read
     * "resnet50~.csv") */
    const char *rn[] = { "resnet50_cifar10_seed1.csv", "resnet50_cifar10_seed2.csv" };
    const tui_status_part few[] = { { "top1", 0 }, { "M 15 uniform", 0 }, { "ci 200", 0 } };
    status_fit(out, sizeof out, 52, rn, 2, 0, ell, few, 3);
    assert_string_equal(out, " res~_seed1.csv [1/2] | top1 | M 15 uniform | ci 200");
    status_fit(out, sizeof out, 52, rn, 2, 1, ell, few, 3);
    assert_string_equal(out, " res~_seed2.csv [1/2] | top1 | M 15 uniform | ci 200");
    /* one file with that head and end among others: head~extension is still unambiguous */
    const char *ok2[] = { "resnet50_cifar10_seed1.csv", "vgg16_cifar10_seed1.csv" };
    status_fit(out, sizeof out, 52, ok2, 2, 0, ell, few, 3);
    assert_string_equal(out, " resnet50_~.csv [1/2] | top1 | M 15 uniform | ci 200");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wrap_at_spaces),
        cmocka_unit_test(test_wrap_long_word),
        cmocka_unit_test(test_short_names),
        cmocka_unit_test(test_short_names_distinct),
        cmocka_unit_test(test_scroll_window),
        cmocka_unit_test(test_scroll_marker),
        cmocka_unit_test(test_status_fit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
