/* The status line's left part fitted to the screen: pure string work, unit-tested without a
 * terminal. UI thread only (no state). */
#ifndef CALSCOPE_TUI_STATUS_H
#define CALSCOPE_TUI_STATUS_H

#include <stddef.h>

/* A piece of the status line, and how readily it goes when the line is too long. */
typedef struct tui_status_part {
    const char *text;   /* UTF-8, one column per code point ("σ 0.1") */
    int drop;           /* 0 = always kept (file, lens, bins, ci, selection); n > 0 = dropped
                           n-th (1 first) when shortening the file name is not enough */
} tui_status_part;

/* Writes " FILE | part | part ..." into out in at most `width` columns: when it is too long the
 * file name is shortened first (its head and its extension kept around a '~', to no less than
 * 8 columns), then droppable parts go in their order, and last the line is cut with '>' at the
 * end. `file` is the name alone; `where` ("[1/2]") follows it and is never cut. */
void tui_status_fit(char *out, size_t size, int width, const char *file, const char *where,
                    const tui_status_part *parts, size_t n);

#endif
