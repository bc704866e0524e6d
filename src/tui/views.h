/* The six views and the helpers they share. Each view draws its panels of the layout from the
 * model's latest results (never computing a metric itself), dimming and marking stale ones.
 * UI thread only. */
#ifndef CALSCOPE_TUI_VIEWS_H
#define CALSCOPE_TUI_VIEWS_H

#include "chart/cells.h"
#include "tui/layout.h"
#include "tui/model.h"
#include "tui/state.h"

typedef struct tui_ctx {
    tui_state *st;
    tui_model *m;
    const ch_glyphs *g;
} tui_ctx;

void tui_view_reliability(const tui_ctx *c, const tui_layout *l);
void tui_view_topk(const tui_ctx *c, const tui_layout *l);
void tui_view_variance(const tui_ctx *c, const tui_layout *l);
void tui_view_classes(const tui_ctx *c, const tui_layout *l);
void tui_view_compare(const tui_ctx *c, const tui_layout *l);
void tui_view_cases(const tui_ctx *c, const tui_layout *l);
struct tui_trend;
void tui_view_trend(const tui_ctx *c, const struct tui_trend *t, const tui_layout *l);
/* The method picker over the current view (view_picker.c). */
void tui_draw_picker(const tui_ctx *c, const tui_layout *l);

/* ---- shared helpers (view_common.c) ---- */

/* When the file is not loaded, draws its loading bar or its error in r and returns 1. */
int tui_draw_file_state(const tui_ctx *c, size_t file, const tui_rect *r);

/* When a job failed, draws its message in r and returns 1 (also for NULL: "computing"). */
int tui_draw_response_state(const tui_ctx *c, const cs_job *resp, const tui_rect *r,
                            const char *what);

/* Draws a "stale" mark at the right end of row y of r. */
void tui_draw_stale_mark(const tui_rect *r, int y);

/* The "more" marker of a scrolled table at row y of r (nothing when marker is 0; scroll.h). */
void tui_draw_scroll_marker(const tui_rect *r, int y, int first, int shown, int total, int marker);

/* A progress bar of width w at (y, x) for fraction p. */
void tui_draw_progress(const tui_ctx *c, int y, int x, int w, double p);

/* Formats a metric value in a fixed width of 7 ("0.0123", "   n/a"). */
void tui_fmt_value(char *buf, size_t size, double v);

/* The one rule for a number in a table cell, right-aligned in `width` columns: 4 decimals,
 * 1 from 1000 on, and "n/a" for a missing number (NaN: a metric undefined here), never a raw
 * "nan". buf holds at least width + 1 bytes (more when the number is wider). */
void tui_fmt_cell(char *buf, size_t size, int width, double v);

/* Writes a possibly multi-line message into r, one line per row, with the role. Returns rows. */
int tui_draw_lines(const tui_rect *r, int y, int role, const char *text);

/* Base name of a path (for titles). */
const char *tui_basename(const char *path);

#endif
