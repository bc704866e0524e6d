/* Scroll positions of the dashboard's tables that can be longer than their panel (the Classes
 * table, the Cases table, the compat panel's moved samples, the Compare view's files table and
 * its methods and rankings panels: one position each). Pure arithmetic, no curses: keys
 * move a position, the view clamps it to what it has when it draws, and says what lies
 * outside the window ("more" marker). Kept apart from the model so views and key
 * handlers share it without touching how results are stored. UI thread only. */
#ifndef CALSCOPE_TUI_SCROLL_H
#define CALSCOPE_TUI_SCROLL_H

typedef enum tui_scroll_table {
    TUI_SCROLL_CLASSES, TUI_SCROLL_CASES, TUI_SCROLL_COMPAT, TUI_SCROLL_METHODS, TUI_SCROLL_RANKS,
    TUI_SCROLL_FILES, TUI_SCROLL_N
} tui_scroll_table;

typedef struct tui_scroll {
    int top[TUI_SCROLL_N];   /* first row shown (may be past the end until the next draw) */
    int page[TUI_SCROLL_N];  /* rows shown at the last draw (what PgUp/PgDn move by) */
} tui_scroll;

/* The motions the keys ask for. */
typedef enum tui_scroll_motion {
    TUI_SCROLL_UP, TUI_SCROLL_DOWN, TUI_SCROLL_PGUP, TUI_SCROLL_PGDN, TUI_SCROLL_HOME, TUI_SCROLL_END
} tui_scroll_motion;

/* Moves table t; returns 1 when the position changed (END always counts: the length is known
 * only when drawing). */
int tui_scroll_move(tui_scroll *s, tui_scroll_table t, tui_scroll_motion m);

/* Makes row `row` visible in table t (used when a key selects a row, as c/C do the class). */
void tui_scroll_show(tui_scroll *s, tui_scroll_table t, int row);

/* The window of a table of `total` rows drawn in `rows` screen rows: when it does not fit, the
 * last screen row is kept for the marker, so *shown rows are drawn from the returned first
 * row. Clamps the stored position and records the page size. *marker is 1 when a marker line
 * is due (tui_scroll_marker writes it). */
int tui_scroll_window(tui_scroll *s, tui_scroll_table t, int total, int rows, int *shown,
                      int *marker);

/* The marker line of a window: "rows 9-16 of 1800, more below (arrows PgUp PgDn Home End)",
 * shortened to fit `width` columns ("9-16/1800 v"). buf holds at least width + 1 bytes. */
void tui_scroll_marker(char *buf, int width, int first, int shown, int total);

#endif
