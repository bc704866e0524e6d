/* Scroll arithmetic (see scroll.h). */
#include "tui/scroll.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

int tui_scroll_move(tui_scroll *s, tui_scroll_table t, tui_scroll_motion m)
{
    int before = s->top[t], page = s->page[t] > 1 ? s->page[t] - 1 : 1;   /* a line of overlap */
    switch (m) {
    case TUI_SCROLL_UP: s->top[t]--; break;
    case TUI_SCROLL_DOWN: s->top[t]++; break;
    case TUI_SCROLL_PGUP: s->top[t] -= page; break;
    case TUI_SCROLL_PGDN: s->top[t] += page; break;
    case TUI_SCROLL_HOME: s->top[t] = 0; break;
    case TUI_SCROLL_END: s->top[t] = INT_MAX / 2; return 1;
    }
    if (s->top[t] < 0) s->top[t] = 0;
    return s->top[t] != before;
}

void tui_scroll_show(tui_scroll *s, tui_scroll_table t, int row)
{
    int page = s->page[t] > 0 ? s->page[t] : 1;
    if (row < s->top[t]) s->top[t] = row;
    else if (row >= s->top[t] + page) s->top[t] = row - page + 1;
}

int tui_scroll_window(tui_scroll *s, tui_scroll_table t, int total, int rows, int *shown,
                      int *marker)
{
    if (rows < 1) rows = 1;
    if (total < 0) total = 0;
    *marker = total > rows && rows >= 2;
    int fit = *marker ? rows - 1 : rows;
    int top = s->top[t];
    if (top > total - fit) top = total - fit;
    if (top < 0) top = 0;
    s->top[t] = top;
    s->page[t] = fit;
    *shown = total - top < fit ? total - top : fit;
    return top;
}

void tui_scroll_marker(char *buf, int width, int first, int shown, int total)
{
    const char *where = first == 0 ? "more below" : first + shown >= total ? "more above"
                                   : "more above and below";
    const char *arrow = first == 0 ? "v" : first + shown >= total ? "^" : "^v";
    char t[160];
    snprintf(t, sizeof t, "rows %d-%d of %d, %s (arrows PgUp PgDn Home End)", first + 1,
             first + shown, total, where);
    if ((int)strlen(t) > width)
        snprintf(t, sizeof t, "rows %d-%d of %d, %s", first + 1, first + shown, total, where);
    if ((int)strlen(t) > width)
        snprintf(t, sizeof t, "%d-%d/%d %s", first + 1, first + shown, total, arrow);
    snprintf(buf, (size_t)(width > 0 ? width : 0) + 1, "%s", t);
}
