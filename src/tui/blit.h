/* Copies a chart cell buffer to curses (one cell -> one cchar_t, role -> theme attributes).
 * UI thread only. */
#ifndef CALSCOPE_TUI_BLIT_H
#define CALSCOPE_TUI_BLIT_H

#include "chart/cells.h"

/* Draws b with its top-left cell at screen (y, x), clipped to the screen. `stale` dims every
 * cell (a result being recomputed). */
void tui_blit(const ch_buf *b, int y, int x, int stale);

/* Writes UTF-8 / ASCII text at (y, x) with a role's attributes, at most max_w cells
 * (< 0: to the screen edge). Returns cells written. */
int tui_text(int y, int x, int max_w, int role, const char *text);

/* printf-style tui_text. */
int tui_textf(int y, int x, int max_w, int role, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

#endif
