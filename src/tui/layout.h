/* Screen layout: pure arithmetic from (view, columns, lines), unit-tested without a terminal.
 *
 *   row 0            view tabs
 *   rows 1 .. h-2-m  the view's body, split into panels a, b, c (w == 0: not shown)
 *   m rows           prompt / message lines (selection errors carry a caret line)
 *   row h-1          status line
 *
 * Panels are dropped (w = 0) as the terminal shrinks; below TUI_MIN_W x TUI_MIN_H the dashboard
 * only says "terminal too small". */
#ifndef CALSCOPE_TUI_LAYOUT_H
#define CALSCOPE_TUI_LAYOUT_H

#include "tui/state.h"

#define TUI_MIN_W 60
#define TUI_MIN_H 20

typedef struct tui_rect { int x, y, w, h; } tui_rect;

typedef struct tui_layout {
    int cols, lines;
    int too_small;
    tui_rect tabs, body, message, status;
    /* Reliability: a diagram, b metrics table, c confidence histogram (under a).
     * Top-k: a bars.  Variance: a size curve, b bins curve, c deviation table (beside a).
     * Classes: a per-class bars, b class table, c Likert panel.  Compare: a small diagrams,
     * b table.  Cases: a heat map, b ACE distribution, c case table. */
    tui_rect a, b, c;
} tui_layout;

/* Fills l for the view on a cols x lines screen with `message_lines` (0..4) lines above the
 * status line. */
void tui_layout_compute(tui_layout *l, tui_view view, int cols, int lines, int message_lines);

/* Nonzero when r lies inside the screen and does not overlap s (both with w,h > 0). */
int tui_rect_inside(const tui_rect *r, int cols, int lines);
int tui_rect_overlap(const tui_rect *r, const tui_rect *s);

/* The label of tab v on the top row as drawn ("[1 Reliability]" when active; other tabs by
 * their first 3 letters when the row is narrow), and the view whose tab covers column x (-1:
 * none), of the first n_views views: one rule for drawing the tabs and for clicking them. */
void tui_tab_label(tui_view v, tui_view active, int cols, int n_views, char *buf, size_t size);
int tui_tab_at(tui_view active, int cols, int n_views, int x);

#endif
