/* Layout arithmetic (see layout.h). */
#include "tui/layout.h"

#include <stdio.h>
#include <string.h>

/* What a square [0,1] chart needs beside its plot: rows for the title, axis, labels and count
 * strip; columns for the y labels (5) and the label right of the x axis ("  samples/bin" under
 * the diagram, "  conf" in it; chart/reliability.c). */
enum { DIAGRAM_ROWS = 4, DIAGRAM_COLS = 18 };

static tui_rect rect(int x, int y, int w, int h)
{
    tui_rect r = { x, y, w > 0 ? w : 0, h > 0 ? h : 0 };
    if (r.w == 0 || r.h == 0) r.w = r.h = 0;
    return r;
}

void tui_layout_compute(tui_layout *l, tui_view view, int cols, int lines, int message_lines)
{
    memset(l, 0, sizeof *l);
    l->cols = cols;
    l->lines = lines;
    if (cols < TUI_MIN_W || lines < TUI_MIN_H) { l->too_small = 1; return; }
    if (message_lines < 0) message_lines = 0;
    if (message_lines > 4) message_lines = 4;

    l->tabs = rect(0, 0, cols, 1);
    l->status = rect(0, lines - 1, cols, 1);
    l->message = rect(0, lines - 1 - message_lines, cols, message_lines);
    int body_h = lines - 2 - message_lines;
    l->body = rect(0, 1, cols, body_h);
    const tui_rect B = l->body;

    switch (view) {
    case TUI_VIEW_RELIABILITY: {
        /* the diagram grows with the terminal up to the width its square plot uses
         * (2 columns per row, y labels, "conf"); the histogram grows with it */
        int side = cols >= 76 ? 36 : 30;
        int main_w = cols - side;
        int hist_h = B.h >= 40 ? B.h / 6 : B.h >= 20 ? 5 : B.h >= 16 ? 4 : 0;
        int square = 2 * (B.h - hist_h - DIAGRAM_ROWS) + DIAGRAM_COLS;
        if (main_w > (square > 56 ? square : 56)) main_w = square > 56 ? square : 56;
        l->a = rect(B.x, B.y, main_w, B.h - hist_h);
        l->c = rect(B.x, B.y + B.h - hist_h, main_w, hist_h);
        l->b = rect(B.x + main_w + 1, B.y, cols - main_w - 1, B.h);
        break;
    }
    case TUI_VIEW_TOPK:
        l->a = rect(B.x, B.y, cols, B.h);
        break;
    case TUI_VIEW_VARIANCE: {
        int side = cols >= 78 ? 28 : 0;
        int top = B.h / 2;
        l->a = rect(B.x, B.y, cols - side, top);
        l->c = rect(B.x + cols - side, B.y, side, top);
        l->b = rect(B.x, B.y + top, cols, B.h - top);
        break;
    }
    case TUI_VIEW_CLASSES: {
        int left = cols >= 76 ? cols / 2 + 4 : cols;
        int bars_h = B.h * 3 / 5;
        l->a = rect(B.x, B.y, left, bars_h);
        l->b = rect(B.x, B.y + bars_h, left, B.h - bars_h);
        l->c = rect(B.x + left + 1, B.y, cols - left - 1, B.h);
        break;
    }
    case TUI_VIEW_COMPARE: {
        int top = B.h * 11 / 20;
        if (top < 10 && B.h >= 15) top = 10;    /* room for a small reliability diagram */
        l->a = rect(B.x, B.y, cols, top);
        l->b = rect(B.x, B.y + top, cols, B.h - top);
        break;
    }
    case TUI_VIEW_CASES: {
        int left = cols >= 76 ? 44 : cols / 2 + 4;
        int square = 2 * (B.h - DIAGRAM_ROWS) + DIAGRAM_COLS;   /* the heat map grows too */
        if (cols >= 76 && square > left) left = square < cols / 2 ? square : cols / 2 > 44 ? cols / 2 : 44;
        l->a = rect(B.x, B.y, left, B.h);
        l->b = rect(B.x + left + 1, B.y, cols - left - 1, B.h / 2);
        l->c = rect(B.x + left + 1, B.y + B.h / 2, cols - left - 1, B.h - B.h / 2);
        break;
    }
    case TUI_VIEW_TREND: {
        /* the chart of the chosen metric on top, the table of epochs under it */
        int top = B.h >= 20 ? 9 : B.h / 2;
        l->a = rect(B.x, B.y, cols, top);
        l->b = rect(B.x, B.y + top, cols, B.h - top);
        break;
    }
    default:
        l->a = B;
        break;
    }
}

int tui_rect_inside(const tui_rect *r, int cols, int lines)
{
    if (r->w == 0 || r->h == 0) return 1;
    return r->x >= 0 && r->y >= 0 && r->x + r->w <= cols && r->y + r->h <= lines;
}

int tui_rect_overlap(const tui_rect *r, const tui_rect *s)
{
    if (r->w == 0 || r->h == 0 || s->w == 0 || s->h == 0) return 0;
    return r->x < s->x + s->w && s->x < r->x + r->w && r->y < s->y + s->h && s->y < r->y + r->h;
}

void tui_tab_label(tui_view v, tui_view active, int cols, int n_views, char *buf, size_t size)
{
    int full = 0;
    for (int i = 0; i < n_views; i++) full += (int)strlen(tui_view_name((tui_view)i)) + 4;
    int shorten = full + 8 > cols;       /* narrow: other tabs by their first 3 letters */
    int len = shorten && v != active ? 3 : 31;
    snprintf(buf, size, " %d %.*s ", (int)v + 1, len, tui_view_name(v));
    if (v == active && size > 2 && buf[0]) { buf[0] = '['; buf[strlen(buf) - 1] = ']'; }
}

int tui_tab_at(tui_view active, int cols, int n_views, int x)
{
    int at = 0;
    for (int v = 0; v < n_views; v++) {
        char t[48];
        tui_tab_label((tui_view)v, active, cols, n_views, t, sizeof t);
        int w = (int)strlen(t);
        if (x >= at && x < at + w && x < cols) return v;
        at += w;
    }
    return -1;
}
