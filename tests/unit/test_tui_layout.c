/* Unit tests of the dashboard layout: every panel inside the screen, no overlaps, the minimum
 * size, and the diagram's room at 80x24. */
#include "support/cs_test.h"

#include "chart/chart.h"
#include "tui/layout.h"

static void check_one(tui_view v, int cols, int lines, int msg)
{
    tui_layout l;
    tui_layout_compute(&l, v, cols, lines, msg);
    assert_false(l.too_small);
    const tui_rect *all[] = { &l.tabs, &l.body, &l.message, &l.status };
    for (size_t i = 0; i < 4; i++) assert_true(tui_rect_inside(all[i], cols, lines));
    assert_int_equal(l.status.y, lines - 1);
    assert_int_equal(l.tabs.y, 0);
    assert_false(tui_rect_overlap(&l.tabs, &l.body));
    assert_false(tui_rect_overlap(&l.body, &l.status));
    assert_false(tui_rect_overlap(&l.body, &l.message));
    const tui_rect *p[] = { &l.a, &l.b, &l.c };
    assert_true(l.a.w > 0 && l.a.h > 0);
    for (size_t i = 0; i < 3; i++) {
        assert_true(tui_rect_inside(p[i], cols, lines));
        if (p[i]->w) {
            /* panels lie inside the body */
            assert_true(p[i]->y >= l.body.y && p[i]->y + p[i]->h <= l.body.y + l.body.h);
        }
        for (size_t j = i + 1; j < 3; j++) assert_false(tui_rect_overlap(p[i], p[j]));
    }
}

static void test_all_views_all_sizes(void **state)
{
    (void)state;
    static const int sizes[][2] = { { 60, 20 }, { 61, 21 }, { 79, 23 }, { 80, 24 }, { 100, 30 },
                                    { 132, 43 }, { 250, 80 } };
    for (int v = 0; v < TUI_VIEW_COUNT; v++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            for (int msg = 0; msg <= 3; msg++) check_one((tui_view)v, sizes[s][0], sizes[s][1], msg);
}

static void test_too_small(void **state)
{
    (void)state;
    tui_layout l;
    tui_layout_compute(&l, TUI_VIEW_RELIABILITY, TUI_MIN_W - 1, 40, 0);
    assert_true(l.too_small);
    tui_layout_compute(&l, TUI_VIEW_RELIABILITY, 200, TUI_MIN_H - 1, 0);
    assert_true(l.too_small);
    tui_layout_compute(&l, TUI_VIEW_RELIABILITY, TUI_MIN_W, TUI_MIN_H, 0);
    assert_false(l.too_small);
}

static void test_reliability_room(void **state)
{
    (void)state;
    tui_layout l;
    tui_layout_compute(&l, TUI_VIEW_RELIABILITY, 80, 24, 0);
    /* a diagram of about 36 x 18 with the table (>= 32 columns for intervals) beside it */
    assert_true(l.a.w >= 40 && l.a.h >= 16);
    assert_true(l.b.w >= 32);
    assert_true(l.c.h >= 4);
    tui_layout_compute(&l, TUI_VIEW_RELIABILITY, 60, 20, 2);
    assert_true(l.a.w >= CH_RELIABILITY_MIN_W && l.a.h >= CH_RELIABILITY_MIN_H);
    assert_true(l.b.w >= 25);
    /* the variance curves keep their minimum at 60x20 */
    tui_layout_compute(&l, TUI_VIEW_VARIANCE, 60, 20, 0);
    assert_true(l.a.w >= CH_CURVE_MIN_W && l.a.h >= CH_CURVE_MIN_H);
    assert_true(l.b.w >= CH_CURVE_MIN_W && l.b.h >= CH_CURVE_MIN_H);
}

/* The diagram grows with the terminal, keeps its square plot, and always has room for "conf". */
static void test_charts_grow(void **state)
{
    (void)state;
    tui_layout l;
    ch_reliability shape = { NULL, 0, 0, "", 0 };
    int px, py, W, H;
    /* 200x60: body 58 rows, histogram 58/6 = 9, diagram 49 rows: plot 45 rows, 90 columns */
    tui_layout_compute(&l, TUI_VIEW_RELIABILITY, 200, 60, 0);
    ch_reliability_area(&shape, l.a.w, l.a.h, &px, &py, &W, &H);
    assert_int_equal(l.c.h, 9);
    assert_int_equal(H, 45);
    assert_int_equal(W, 90);
    assert_true(l.b.w >= 36);                         /* the table keeps its side */
    assert_true(px + W + 2 + 11 <= l.c.w);            /* "samples/bin" under it, whole */
    /* the Cases heat map grows too */
    tui_layout_compute(&l, TUI_VIEW_CASES, 200, 60, 0);
    assert_true(l.a.w >= 100);
    /* at every size the "conf" label fits right of the plot */
    static const int sizes[][2] = { { 60, 20 }, { 80, 24 }, { 100, 30 }, { 132, 43 }, { 200, 60 },
                                    { 250, 80 }, { 90, 60 } };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        tui_layout_compute(&l, TUI_VIEW_RELIABILITY, sizes[i][0], sizes[i][1], 0);
        ch_reliability_area(&shape, l.a.w, l.a.h, &px, &py, &W, &H);
        assert_true(px + W + 2 + 4 <= l.a.w);
        assert_true(W <= 2 * H);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_views_all_sizes),
        cmocka_unit_test(test_too_small),
        cmocka_unit_test(test_reliability_room),
        cmocka_unit_test(test_charts_grow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
