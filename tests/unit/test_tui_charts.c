/* Unit tests of the dashboard's own charts: the dataset reliability heat map, the per-case dot
 * plot and the point overlay (chart/heatmap.h, chart/overlay.h), on fixed buffers. */
#include "support/cs_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "chart/heatmap.h"
#include "chart/overlay.h"

static int count_cp(const ch_buf *b, uint32_t cp)
{
    int n = 0;
    for (int i = 0; i < b->w * b->h; i++) n += b->cells[i].cp == cp;
    return n;
}

/* Row of the buffer as a string (UTF-8), for messages and substring checks. */
static int row_has(const ch_buf *b, int y, const char *text)
{
    ch_buf *one = ch_buf_new(b->w, 1);
    memcpy(one->cells, b->cells + (size_t)y * (size_t)b->w, (size_t)b->w * sizeof *one->cells);
    char *s = ch_buf_to_string(one);
    int ok = s && strstr(s, text) != NULL;
    free(s);
    ch_buf_free(one);
    return ok;
}

static void test_heatmap_cells(void **state)
{
    (void)state;
    /* m = 4 bins: 20 cases in cell (0,0), 1 case in (3,3), 2 in (2,1), 5 in (1,2); 4 bins on 16
     * columns and 8 rows: every bin spans 4 columns and 2 rows. Levels on the log scale,
     * 1 + ceil(3 ln n / ln 20): 1 -> 1, 2 -> 2 (0.69), 5 -> 3 (1.61), 20 -> 4 (3); a linear
     * ramp, ceil(4 n / 20), would draw 2 and 5 at level 1 like the single case. */
    uint32_t counts[16] = { 0 };
    counts[0 * 4 + 0] = 20;
    counts[3 * 4 + 3] = 1;
    counts[2 * 4 + 1] = 2;
    counts[1 * 4 + 2] = 5;
    double curve[4] = { 0.1, NAN, 0.3, 0.9 };
    ch_heatmap hm = { counts, 4, curve, "title" };
    const ch_glyphs *g = ch_glyphs_utf8();
    ch_buf *b = ch_buf_new(24, 12);       /* W = 16, H = 8 (title + 8 + axis + labels + legend) */
    assert_int_equal(ch_heatmap_draw(b, 0, 0, 24, 12, &hm, g), 12);
    assert_true(row_has(b, 0, "title"));
    /* full density for the largest cell; the single case still drawn (level 1 = ░) */
    assert_int_equal(count_cp(b, 0x2588) >= 4 * 2 - 1, 1);     /* █, minus the curve marker */
    assert_true(count_cp(b, 0x2591) >= 4 * 2 - 1);              /* ░ at (3,3) */
    assert_true(count_cp(b, 0x2592) >= 4 * 2 - 1);              /* 2 cases -> level 2 ▒ */
    assert_true(count_cp(b, 0x2593) >= 4 * 2);                  /* 5 cases -> level 3 ▓ */
    /* the top-right cell (bin 3,3) is ░, not blank: row 1 (first plot row), last columns */
    ch_cell *c = ch_buf_at(b, 5 + 15, 1);
    assert_true(c->cp == 0x2591 || c->cp == 0x25C6);
    /* three mean markers (the NAN bin has none) */
    assert_int_equal(count_cp(b, 0x25C6), 3);                   /* the legend's is past 24 columns */
    /* legend names the count range */
    assert_true(row_has(b, 11, "1..20 cases (log)"));
    ch_buf_free(b);

    /* ASCII: only ASCII, density .:*# */
    b = ch_buf_new(24, 12);
    assert_int_equal(ch_heatmap_draw(b, 0, 0, 24, 12, &hm, ch_glyphs_ascii()), 12);
    for (int i = 0; i < b->w * b->h; i++) assert_true(b->cells[i].cp < 128);
    assert_true(count_cp(b, '#') >= 7);
    assert_true(count_cp(b, ':') >= 7);
    assert_true(row_has(b, 11, ".:*#"));
    ch_buf_free(b);

    /* too small: nothing drawn */
    b = ch_buf_new(20, 8);
    assert_int_equal(ch_heatmap_draw(b, 0, 0, 20, 8, &hm, g), -1);
    assert_int_equal(count_cp(b, ' '), 20 * 8);
    ch_buf_free(b);
}

static void test_heatmap_many_bins(void **state)
{
    (void)state;
    /* m = 100 bins on fewer cells: one case in every diagonal cell, all must show */
    size_t m = 100;
    uint32_t *counts = calloc(m * m, sizeof *counts);
    for (size_t i = 0; i < m; i++) counts[i * m + i] = 1;
    ch_heatmap hm = { counts, m, NULL, NULL };
    ch_buf *b = ch_buf_new(40, 20);       /* H = 17, W = 34 */
    assert_int_equal(ch_heatmap_draw(b, 0, 0, 40, 20, &hm, ch_glyphs_ascii()), 20);
    int marked = 0;
    for (int x = 5; x < 5 + 34; x++)
        for (int y = 0; y < 17; y++) {
            uint32_t cp = ch_buf_at(b, x, y)->cp;
            if (cp == '.' || cp == ':' || cp == '*' || cp == '#') { marked++; break; }
        }
    assert_int_equal(marked, 34);         /* every column holds part of the diagonal */
    free(counts);
    ch_buf_free(b);
}

static void test_strip(void **state)
{
    (void)state;
    double v[5] = { 0.012, 0.025, 0.027, 0.155, NAN };   /* off the column edges */
    ch_strip s = { v, 5, 0.055, 0.03, 0.2, "ACE " };
    ch_buf *b = ch_buf_new(22, 6);        /* W = 20 columns of 0.01 */
    assert_int_equal(ch_strip_draw(b, 0, 0, 22, 6, &s, ch_glyphs_ascii()), 6);
    /* 0.025 and 0.027 share column 2: stacked two high; 0.15 in column 15 */
    assert_int_equal(ch_buf_at(b, 1 + 2, 2)->cp, '*');
    assert_int_equal(ch_buf_at(b, 1 + 2, 1)->cp, '*');
    assert_int_equal(ch_buf_at(b, 1 + 1, 2)->cp, '*');
    assert_int_equal(ch_buf_at(b, 1 + 15, 2)->cp, '*');
    assert_int_equal(count_cp(b, '*'), 4);                     /* the NAN is skipped */
    /* mean .055 at column 5 ('+'), mean -/+ sd from column 2 to 8 */
    assert_int_equal(ch_buf_at(b, 1 + 5, 4)->cp, '+');
    assert_int_equal(ch_buf_at(b, 1 + 2, 4)->cp, '|');
    assert_int_equal(ch_buf_at(b, 1 + 8, 4)->cp, '|');
    assert_true(row_has(b, 5, "ACE 0.2"));
    ch_buf_free(b);
    /* automatic end: a round number above max(values, mean + sd) */
    s.vmax = 0;
    b = ch_buf_new(22, 6);
    ch_strip_draw(b, 0, 0, 22, 6, &s, ch_glyphs_ascii());
    assert_true(row_has(b, 5, "ACE 0.2"));
    ch_buf_free(b);
}

/* 1800 cases: the columns are scaled to the rows instead of a wall of full columns */
static void test_strip_many(void **state)
{
    (void)state;
    enum { N = 1800 };
    static double v[N];
    for (int i = 0; i < N; i++) v[i] = i < 1500 ? 0.1075 : i < 1799 ? 0.0575 : 0.1875;   /* mid-column */
    ch_strip s = { v, N, NAN, NAN, 0.2, "ACE " };
    ch_buf *b = ch_buf_new(42, 8);        /* W = 40 columns of 0.005, 5 dot rows */
    assert_int_equal(ch_strip_draw(b, 0, 0, 42, 8, &s, ch_glyphs_ascii()), 8);
    /* the fullest column (1500 at column 21) fits 5 rows: k = 300 cases a marker; 299 cases
     * at column 11 stack ceil(299/300) = 1, and the lone case at column 37 still shows */
    int h21 = 0, h11 = 0, h37 = 0;
    for (int y = 0; y < 5; y++) {
        h21 += ch_buf_at(b, 1 + 21, y)->cp == '*';
        h11 += ch_buf_at(b, 1 + 11, y)->cp == '*';
        h37 += ch_buf_at(b, 1 + 37, y)->cp == '*';
    }
    assert_int_equal(h21, 5);
    assert_int_equal(h11, 1);
    assert_int_equal(h37, 1);
    for (int y = 0; y < 5; y++)              /* no overflow marks in the dot rows */
        for (int x = 0; x < 42; x++) {
            uint32_t cp = ch_buf_at(b, x, y)->cp;
            assert_true(cp == ' ' || cp == '*');
        }
    assert_true(row_has(b, 7, "* = 300 cases"));
    assert_true(row_has(b, 7, "ACE 0.2"));
    ch_buf_free(b);
}

static void test_points(void **state)
{
    (void)state;
    ch_buf *b = ch_buf_new(30, 12);
    double x[4] = { 0.0, 0.5, 0.99, NAN }, y[4] = { 0.0, 0.5, 1.0, 0.5 };
    int n = ch_points_draw(b, 5, 1, 20, 10, x, y, 4, ch_glyphs_ascii(), CH_G_MARK1, CH_ROLE_SERIES1);
    assert_int_equal(n, 3);
    assert_int_equal(ch_buf_at(b, 5 + 0, 1 + 9)->cp, '*');     /* (0,0): bottom-left cell */
    assert_int_equal(ch_buf_at(b, 5 + 10, 1 + 5)->cp, '*');    /* (.5,.5): row 5 from bottom */
    assert_int_equal(ch_buf_at(b, 5 + 19, 1)->cp, '*');        /* (.99,1): top-right */
    assert_int_equal(ch_buf_at(b, 5 + 10, 1 + 5)->role, CH_ROLE_SERIES1);
    assert_int_equal(count_cp(b, '*'), 3);
    ch_buf_free(b);
}

/* relplot's smoothed curve as a line (ch_smooth_draw), 10 x 5 cells, the density strip two rows
 * under: worked cell by cell. Mesh t_i = i/10: column j holds mesh point j (the last also
 * t = 1), its row is floor(5 y). */
static void test_smooth_line(void **state)
{
    (void)state;
    const ch_glyphs *g = ch_glyphs_ascii();
    enum { N = 11 };
    double y[N], d[N];
    /* y = t; density 2 (heavy '*') left of .5, 0.5 (light '.') from .5: strip levels 8 and 2;
     * the last column is the density-weighted mean of y(.9) and y(1), .95 */
    for (int i = 0; i < N; i++) { y[i] = i / 10.0; d[i] = i < 5 ? 2.0 : 0.5; }
    ch_buf *b = ch_buf_new(10, 7);
    assert_int_equal(ch_smooth_draw(b, 0, 0, 10, 5, y, d, N, 6, g, CH_G_MARK1, CH_G_DOT, CH_ROLE_SERIES1), 10);
    char *txt = ch_buf_to_string(b);
    assert_string_equal(txt, "        ..\n"
                             "      ..\n"
                             "    *.\n"
                             "  **\n"
                             "**\n"
                             "\n"
                             "8888822222\n");
    free(txt);
    assert_int_equal(ch_buf_at(b, 0, 4)->role, CH_ROLE_SERIES1);
    assert_int_equal(ch_buf_at(b, 0, 6)->role, CH_ROLE_COUNT);
    ch_buf_free(b);

    /* a step at .5 is one unbroken line (the run up in column 5); no estimate at t = .2
     * (NAN) and too little density at t = 0, .1 (below 1% of the densest column): no point,
     * and a blank strip where the density is that low */
    for (int i = 0; i < N; i++) { y[i] = i < 5 ? 0.0 : 1.0; d[i] = i < 2 ? 0.005 : 1.0; }
    y[2] = NAN;
    b = ch_buf_new(10, 7);
    assert_int_equal(ch_smooth_draw(b, 0, 0, 10, 5, y, d, N, 6, g, CH_G_MARK1, CH_G_DOT, CH_ROLE_SERIES1), 7);
    txt = ch_buf_to_string(b);
    assert_string_equal(txt, "     *****\n"
                             "     *\n"
                             "     *\n"
                             "     *\n"
                             "   **\n"
                             "\n"
                             "  88888888\n");
    free(txt);
    ch_buf_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_heatmap_cells),
        cmocka_unit_test(test_heatmap_many_bins),
        cmocka_unit_test(test_strip),
        cmocka_unit_test(test_strip_many),
        cmocka_unit_test(test_points),
        cmocka_unit_test(test_smooth_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
