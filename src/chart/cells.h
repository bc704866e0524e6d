/* Chart cell buffer: a grid of (glyph, style role) cells that chart renderers fill and that
 * front ends copy out — to plain text for `report --plot` (ch_buf_write) or to curses in the
 * dashboard (one cell -> one cchar_t; the dashboard maps roles to attributes).
 *
 * Glyphs are Unicode code points chosen from a glyph table (UTF-8 or ASCII) picked once at
 * start-up; renderers index the table instead of testing flags. Every glyph is one column wide.
 * Ownership: a ch_buf owns its cells; ch_buf_free releases them. No curses, no globals,
 * no threads: a buffer belongs to whoever created it. */
#ifndef CALSCOPE_CHART_CELLS_H
#define CALSCOPE_CHART_CELLS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* What a cell is, so a theme can colour it; every chart must still read without colour. */
typedef enum ch_role {
    CH_ROLE_TEXT = 0,  /* plain text, blank cells */
    CH_ROLE_TITLE,
    CH_ROLE_AXIS,      /* axis lines and ticks */
    CH_ROLE_LABEL,     /* tick labels, bar labels, values */
    CH_ROLE_DIAGONAL,  /* perfect-calibration line */
    CH_ROLE_BAR,       /* accuracy bars, bar-chart bars */
    CH_ROLE_OVER,      /* over-confidence gap (accuracy below confidence) */
    CH_ROLE_UNDER,     /* under-confidence gap (accuracy above confidence) */
    CH_ROLE_BAND,      /* confidence band of a curve */
    CH_ROLE_SERIES1,   /* curve series 1..4 (markers and their legend entries) */
    CH_ROLE_SERIES2,
    CH_ROLE_SERIES3,
    CH_ROLE_SERIES4,
    CH_ROLE_THIN,      /* thin-bin flag */
    CH_ROLE_COUNT,     /* count strip */
    CH_ROLE_WARNING,
    CH_ROLE_STALE,     /* a value being recomputed (the dashboard dims it) */
    CH_ROLE_N
} ch_role;

/* Glyph identifiers; a ch_glyphs table maps each to a code point. */
typedef enum ch_glyph {
    CH_G_SPACE = 0,
    CH_G_HLINE, CH_G_VLINE, CH_G_CORNER, CH_G_XTICK, CH_G_YTICK,
    CH_G_DIAG,         /* perfect calibration */
    CH_G_BAR,          /* full accuracy cell */
    CH_G_LOW,          /* a non-zero value too small for one cell (never drawn as nothing) */
    CH_G_OVER, CH_G_UNDER, CH_G_THIN, CH_G_BAND,
    CH_G_DOT,          /* a curve between its data points */
    CH_G_MARK1, CH_G_MARK2, CH_G_MARK3, CH_G_MARK4,
    CH_G_VBAR1, CH_G_VBAR2, CH_G_VBAR3, CH_G_VBAR4,   /* lower 1/8 .. 8/8 blocks */
    CH_G_VBAR5, CH_G_VBAR6, CH_G_VBAR7, CH_G_VBAR8,
    CH_G_HBAR1, CH_G_HBAR2, CH_G_HBAR3, CH_G_HBAR4,   /* left 1/8 .. 8/8 blocks */
    CH_G_HBAR5, CH_G_HBAR6, CH_G_HBAR7, CH_G_HBAR8,
    CH_G_WHISKER_L, CH_G_WHISKER, CH_G_WHISKER_R,     /* interval whisker on a bar */
    CH_G_N
} ch_glyph;

typedef struct ch_glyphs {
    const char *name;          /* "utf8" or "ascii" */
    int utf8;
    uint32_t cp[CH_G_N];
} ch_glyphs;

/* The two built-in tables (static storage). */
const ch_glyphs *ch_glyphs_utf8(void);
const ch_glyphs *ch_glyphs_ascii(void);

/* Calls setlocale(LC_CTYPE, "") (never LC_ALL: a decimal-comma LC_NUMERIC would break strtod)
 * and returns the UTF-8 table when nl_langinfo(CODESET) is UTF-8 and force_ascii is 0, the
 * ASCII table otherwise. Call once at start-up from the main thread. */
const ch_glyphs *ch_glyphs_pick(int force_ascii);

typedef struct ch_cell {
    uint32_t cp;   /* Unicode code point, one column wide */
    uint8_t role;  /* ch_role */
} ch_cell;

typedef struct ch_buf {
    int w, h;
    ch_cell *cells;  /* h rows of w cells, row 0 at the top; owned */
} ch_buf;

/* Returns a blank w x h buffer (spaces, CH_ROLE_TEXT) owned by the caller, or NULL when out of
 * memory or w/h < 1. */
ch_buf *ch_buf_new(int w, int h);
void ch_buf_free(ch_buf *b);
void ch_buf_clear(ch_buf *b);

/* Cell access; out-of-range coordinates are ignored (get returns NULL), so renderers may clip. */
ch_cell *ch_buf_at(ch_buf *b, int x, int y);
void ch_buf_set(ch_buf *b, int x, int y, uint32_t cp, ch_role role);
void ch_buf_glyph(ch_buf *b, int x, int y, const ch_glyphs *g, ch_glyph id, ch_role role);

/* Writes UTF-8 text starting at (x, y), one code point per cell, clipped at max_w cells
 * (or at the buffer edge when max_w < 0). Code points outside ASCII are replaced by '?' when
 * ascii_only is set. Returns the number of cells written. */
int ch_buf_puts(ch_buf *b, int x, int y, int max_w, const char *utf8, ch_role role, int ascii_only);

/* printf-style ch_buf_puts (ASCII content expected; at most 255 bytes). */
int ch_buf_printf(ch_buf *b, int x, int y, ch_role role, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* Number of code points in a UTF-8 string (= cells it takes). */
int ch_text_width(const char *utf8);

/* Plain-text writer: each row encoded as UTF-8, trailing blanks trimmed, '\n' after each row;
 * trailing blank rows are dropped. Returns 0, or -1 on a write error. */
int ch_buf_write(const ch_buf *b, FILE *out);

/* The same into a malloc'd NUL-terminated string (caller frees), or NULL when out of memory. */
char *ch_buf_to_string(const ch_buf *b);

#endif
