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

/* Files whose names the shown one is told apart from (the dashboard opens at most 8). */
#define TUI_STATUS_MAX_FILES 16

/* What the status line's left part shows: the files (names alone; the active one is shown,
 * shortened so that it stays told apart from the others), where it is ("[1/2]", never cut),
 * the parts, and the mark of a cut ("\xe2\x80\xa6" in UTF-8, "~" in ASCII: never a character
 * a selection could end with, so `sel conf >` cut cannot read as an operator). */
typedef struct tui_status_in {
    const char *const *files;
    size_t n_files, active;
    const char *where;
    const char *cut;
    const tui_status_part *parts;
    size_t n;
} tui_status_in;

/* Writes " FILE [i/n] | part | part ..." into out in at most `width` columns: when it is too
 * long the file name is shortened first, to no less than 8 columns — head '~' extension when
 * no other file has that head and extension, else the shortest form that tells it from the
 * others (chart/words.h ch_short_names) — then droppable parts go in their order, and last
 * the line is cut with in->cut at the end. */
void tui_status_fit(char *out, size_t size, int width, const tui_status_in *in);

#endif
