/* Golden-text tests of the chart cell buffers at fixed sizes (charts render into a cell buffer;
 * a reliability diagram fits 80x24), plus the
 * properties the goldens cannot show: no non-empty bin vanishes, small regions are refused,
 * ASCII tables stay ASCII. */
#include "support/cs_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chart/chart.h"

static const char REL_UTF8_40X20[] =
    "   1┤                  ▓▓▓▓\n"
    "    │                  ████\n"
    "    │                ╱╱████\n"
    " .75┤             ░░░░░████\n"
    "    │            ╱░░░░░████\n"
    "  .5┤         █████████████\n"
    "    │        ╱█████████████\n"
    "    │    !!!!!█████████████\n"
    " .25┤    ░░░░░█████████████\n"
    "    │  ╱╱██████████████████\n"
    "    │╱╱  ██████████████████\n"
    "   0└─────┬────┬─────┬────┬\n"
    "    0    .25  .5    .75   1  conf\n"
    "   n     ▁▁▁▁▁▂▂▂▂▃▃▃▃▃████\n"
    "█ accuracy in the bin\n"
    "╱ perfect calibration\n"
    "░ over-confident: acc < conf\n"
    "▓ under-confident: acc > conf\n"
    "! thin bin (< 20 samples)\n"
    "▄ samples per column (█ = 200)\n";

static const char REL_ASCII_72X16[] =
    "T\n"
    "   1+                   +++++   # accuracy in the bin\n"
    "    |                   #####   / perfect calibration\n"
    "    |                  /#####   : over-confident: acc < conf\n"
    " .75+                // #####   + under-confident: acc > conf\n"
    "    |          !!!!:::::#####   ! thin bin (< 50 samples)\n"
    "    |          ++++:::::#####   4 samples per column (8 = 200)\n"
    "  .5+          ##############\n"
    "    |     !!!!!##############\n"
    "    |     :::::##############\n"
    " .25+    /:::::##############\n"
    "    |  // ###################\n"
    "    |//   ###################\n"
    "   0+-----+-----+-----+-----+\n"
    "    0    .25   .5    .75    1  conf\n"
    "   n      1111122223333388888\n";

/* 7 plot rows = 6 row steps: 3 tick intervals of 0.1, one label every other row, each on its
 * value's row (0.2 at x=0.01, 0.1 at x=0.1, 0.05 = 1 row up at x=1). */
static const char CURVE_ASCII_40X10[] =
    "  0.3 +:::\n"
    "      |::::::::\n"
    "  0.2 +*...:::::::::\n"
    "      |::::........:::::::\n"
    "  0.1 +::::::::::::....*.......:::::\n"
    "      |o...............o..............*\n"
    "    0 +\n"
    "      ++---------------+--------------+\n"
    "     0.01             0.1             1\n"
    "* ece  o rece_g  : 95% band\n";

static const char BARS_UTF8_30X5[] =
    "top-k\n"
    " k=1 █████████├█▎─┤     0.050\n"
    " k=2 ███████            0.031\n"
    "k=10 ▎                  ~0.001\n"
    "full                    n/a\n";

static void expect_text(const ch_buf *b, const char *want)
{
    char *got = ch_buf_to_string(b);
    assert_non_null(got);
    if (strcmp(got, want) != 0) {
        printf("--- want\n%s--- got\n%s---\n", want, got);
        free(got);
        fail_msg("chart text differs from the golden text");
    }
    free(got);
}

/* Five uniform bins: an empty one, a thin over-confident one, a slightly under-confident one,
 * an over-confident one and a large under-confident one. */
static void five_bins(cs_bin *bins)
{
    for (int i = 0; i < 5; i++) {
        bins[i].lo = i / 5.0;
        bins[i].hi = (i + 1) / 5.0;
        bins[i].count = 0;
        bins[i].conf = bins[i].acc = bins[i].gap = NAN;
    }
    bins[1].count = 5;   bins[1].conf = 0.3;  bins[1].acc = 0.2;
    bins[2].count = 40;  bins[2].conf = 0.5;  bins[2].acc = 0.55;
    bins[3].count = 60;  bins[3].conf = 0.7;  bins[3].acc = 0.5;
    bins[4].count = 200; bins[4].conf = 0.93; bins[4].acc = 0.97;
}

static void test_reliability_utf8_legend_below(void **state)
{
    (void)state;
    cs_bin bins[5];
    five_bins(bins);
    ch_buf *b = ch_buf_new(40, 20);
    ch_reliability r = { bins, 5, 0, NULL, 1 };
    assert_int_equal(ch_reliability_draw(b, 0, 0, 40, 20, &r, ch_glyphs_utf8()), 20);
    expect_text(b, REL_UTF8_40X20);
    ch_buf_free(b);
}

static void test_reliability_ascii_legend_beside(void **state)
{
    (void)state;
    cs_bin bins[5];
    five_bins(bins);
    ch_buf *b = ch_buf_new(72, 16);
    ch_reliability r = { bins, 5, 50, "T", 1 };
    assert_int_equal(ch_reliability_draw(b, 0, 0, 72, 16, &r, ch_glyphs_ascii()), 16);
    expect_text(b, REL_ASCII_72X16);
    /* roles travel with the glyphs: the top-right cell of the last bin is an under-confidence gap */
    const ch_cell *c = ch_buf_at(b, 5 + 23, 1);
    assert_non_null(c);
    assert_int_equal(c->cp, '+');
    assert_int_equal(c->role, CH_ROLE_UNDER);
    ch_buf_free(b);
}

static void test_reliability_too_small(void **state)
{
    (void)state;
    cs_bin bins[5];
    five_bins(bins);
    ch_buf *b = ch_buf_new(80, 24);
    ch_reliability r = { bins, 5, 0, NULL, 1 };
    assert_int_equal(ch_reliability_draw(b, 0, 0, CH_RELIABILITY_MIN_W - 1, 20, &r, ch_glyphs_ascii()), -1);
    assert_int_equal(ch_reliability_draw(b, 0, 0, 40, CH_RELIABILITY_MIN_H - 1, &r, ch_glyphs_ascii()), -1);
    char *s = ch_buf_to_string(b);
    assert_string_equal(s, "");   /* nothing drawn */
    free(s);
    ch_buf_free(b);
}

/* Count-strip cells (row under the tick labels) that are not blank. */
static int strip_cells(ch_buf *b, int row)
{
    int n = 0;
    for (int x = 5; x < b->w; x++) n += ch_buf_at(b, x, row)->cp != ' ';
    return n;
}

static void test_reliability_many_bins_share_columns(void **state)
{
    (void)state;
    enum { M = 200 };
    cs_bin bins[M];
    for (int i = 0; i < M; i++) {
        bins[i].lo = (double)i / M;
        bins[i].hi = (double)(i + 1) / M;
        bins[i].count = (size_t)(i % 2 ? 3 : 0);   /* every other bin empty */
        bins[i].conf = (i + 0.5) / M;
        bins[i].acc = bins[i].conf;
        bins[i].gap = 0;
    }
    ch_buf *b = ch_buf_new(40, 20);
    ch_reliability r = { bins, M, 0, NULL, 0 };
    assert_true(ch_reliability_draw(b, 0, 0, 40, 20, &r, ch_glyphs_ascii()) > 0);
    /* without legend: H = 17, W = 40 - 5 - 6 = 29 (room kept for "conf"); every column
     * holds a non-empty bin */
    assert_int_equal(strip_cells(b, 19), 29);
    /* the axis label right of the axis, whole: columns 5 + 29 + 2 .. 39 of the label row */
    char label[5] = { 0 };
    for (int i = 0; i < 4; i++) label[i] = (char)ch_buf_at(b, 36 + i, 18)->cp;
    assert_string_equal(label, "conf");
    ch_buf_free(b);
}

static void test_reliability_narrow_bin_never_vanishes(void **state)
{
    (void)state;
    /* equal-mass style: one huge bin and one bin far narrower than a column */
    cs_bin bins[2] = {
        { 0.0, 0.95, 1000, 0.5, 0.5, 0.0 },
        { 0.951, 0.952, 2, 0.9515, 0.01, 0.9415 },
    };
    ch_buf *b = ch_buf_new(45, 20);
    ch_reliability r = { bins, 2, 0, NULL, 0 };
    assert_true(ch_reliability_draw(b, 0, 0, 45, 20, &r, ch_glyphs_ascii()) > 0);
    /* W = 45 - 5 - 6 = 34: the narrow bin lands in column floor(0.9515*34) = 32; accuracy 0.01 rounds to
     * no cell, so it shows as the low glyph on the bottom row, with a thin flag above the gap */
    assert_int_equal(ch_buf_at(b, 5 + 32, 16)->cp, '_');
    int thin = 0;
    for (int y = 0; y < 17; y++) thin += ch_buf_at(b, 5 + 32, y)->cp == '!';
    assert_int_equal(thin, 1);
    ch_buf_free(b);
}

static void test_curve_ascii(void **state)
{
    (void)state;
    double x[] = { 0.01, 0.1, 1 };
    double y[] = { 0.2, 0.1, 0.05 }, lo[] = { 0.1, 0.06, 0.04 }, hi[] = { 0.3, 0.14, 0.06 };
    double y2[] = { 0.06, 0.05, 0.05 };
    ch_series s[2] = { { "ece", y, lo, hi, 0 }, { "rece_g", y2, NULL, NULL, 0 } };
    ch_curve c = { NULL, x, 3, 1, "fraction", s, 2, NAN, NAN };
    ch_buf *b = ch_buf_new(40, 10);
    assert_int_equal(ch_curve_draw(b, 0, 0, 40, 10, &c, ch_glyphs_ascii()), 10);
    expect_text(b, CURVE_ASCII_40X10);
    ch_buf_free(b);
    c.log_x = 1;
    x[0] = 0;  /* log scale needs positive x */
    b = ch_buf_new(40, 10);
    assert_int_equal(ch_curve_draw(b, 0, 0, 40, 10, &c, ch_glyphs_ascii()), -1);
    ch_buf_free(b);
}

/* A series that names its marker keeps it whatever its position (RECE-M is '@' in both
 * variance charts), in the plot and in the legend, and no other marker appears. */
static void test_curve_series_mark(void **state)
{
    (void)state;
    double x[] = { 0.01, 0.1, 1 };
    double y[] = { 0.2, 0.1, 0.05 }, y2[] = { 0.3, 0.27, 0.25 };   /* no shared cell */
    ch_series s[2] = { { "ece", y, NULL, NULL, 1 }, { "rece_m", y2, NULL, NULL, 4 } };
    ch_curve c = { NULL, x, 3, 1, "frac", s, 2, NAN, NAN };   /* no letter o */
    ch_buf *b = ch_buf_new(40, 10);
    assert_int_equal(ch_curve_draw(b, 0, 0, 40, 10, &c, ch_glyphs_ascii()), 10);
    char *text = ch_buf_to_string(b);
    assert_non_null(text);
    assert_non_null(strstr(text, "@ rece_m"));       /* the legend */
    assert_null(strstr(text, "o rece_m"));
    int at = 0, o = 0;
    for (const char *p = text; *p; p++) { at += *p == '@'; o += *p == 'o'; }
    assert_int_equal(at, 3 + 1);                     /* three points and the legend */
    assert_int_equal(o, 0);                          /* marker 2 is nobody's */
    free(text);
    ch_buf_free(b);
}

static void test_bars_utf8(void **state)
{
    (void)state;
    ch_bar bars[] = {
        { "k=1", 0.05, 0.04, 0.06, 0 },
        { "k=2", 0.031, NAN, NAN, 0 },
        { "k=10", 0.001, NAN, NAN, 1 },   /* tiny and stale: still drawn, marked '~' */
        { "full", NAN, NAN, NAN, 0 },
    };
    ch_bars bc = { "top-k", bars, 4, 0.08, 3 };
    ch_buf *b = ch_buf_new(30, 5);
    assert_int_equal(ch_bars_draw(b, 0, 0, 30, 5, &bc, ch_glyphs_utf8()), 5);
    expect_text(b, BARS_UTF8_30X5);
    assert_int_equal(ch_buf_at(b, 5, 3)->role, CH_ROLE_STALE);
    ch_buf_free(b);
}

static void test_ascii_table_is_ascii(void **state)
{
    (void)state;
    const ch_glyphs *g = ch_glyphs_ascii();
    for (int i = 0; i < CH_G_N; i++) {
        assert_true(g->cp[i] >= 0x20);
        assert_true(g->cp[i] < 0x7F);
    }
    const ch_glyphs *u = ch_glyphs_utf8();
    for (int i = 1; i < CH_G_N; i++) assert_true(u->cp[i] > 0x20);
}

static void test_buf_text(void **state)
{
    (void)state;
    ch_buf *b = ch_buf_new(6, 3);
    /* clipped at the edge, multi-byte glyphs take one cell, ASCII mode replaces them */
    assert_int_equal(ch_buf_puts(b, 2, 0, -1, "abcdef", CH_ROLE_LABEL, 0), 4);
    assert_int_equal(ch_buf_puts(b, 0, 1, 3, "\xe2\x96\x88x\xe2\x94\x80yz", CH_ROLE_LABEL, 0), 3);
    assert_int_equal(ch_buf_puts(b, 0, 2, -1, "\xe2\x96\x88!", CH_ROLE_LABEL, 1), 2);
    ch_buf_set(b, 99, 99, 'q', CH_ROLE_TEXT);   /* out of range: ignored */
    assert_null(ch_buf_at(b, -1, 0));
    char *s = ch_buf_to_string(b);
    assert_string_equal(s, "  abcd\n\xe2\x96\x88x\xe2\x94\x80\n?!\n");
    free(s);
    assert_int_equal(ch_text_width("\xe2\x96\x88\xe2\x96\x88" "a"), 3);
    ch_buf_clear(b);
    s = ch_buf_to_string(b);
    assert_string_equal(s, "");   /* blank rows are dropped */
    free(s);
    ch_buf_free(b);
    assert_null(ch_buf_new(0, 5));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buf_text),
        cmocka_unit_test(test_ascii_table_is_ascii),
        cmocka_unit_test(test_reliability_utf8_legend_below),
        cmocka_unit_test(test_reliability_ascii_legend_beside),
        cmocka_unit_test(test_reliability_too_small),
        cmocka_unit_test(test_reliability_many_bins_share_columns),
        cmocka_unit_test(test_reliability_narrow_bin_never_vanishes),
        cmocka_unit_test(test_curve_ascii),
        cmocka_unit_test(test_curve_series_mark),
        cmocka_unit_test(test_bars_utf8),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
