/* Point overlay on a [0,1] x [0,1] plot area already drawn by another renderer (e.g. the
 * RECE-G smoothed curve over a reliability diagram). Same conventions as chart.h: a ch_buf, a
 * glyph table, no curses, no globals, inputs borrowed; any thread. */
#ifndef CALSCOPE_CHART_OVERLAY_H
#define CALSCOPE_CHART_OVERLAY_H

#include <stddef.h>

#include "chart/cells.h"

/* Marks each point (x[i], y[i]) in the plot area whose bottom-left cell is (px, top + H - 1)
 * with glyph id in role: column floor(x * W), row round(y * H) - 1 from the bottom (the cell a
 * bar of height y tops out in; y below half a cell sits on the bottom row), clamped to the
 * area. Points with a non-finite coordinate are skipped. Returns the number drawn. */
int ch_points_draw(ch_buf *b, int px, int top, int W, int H, const double *x, const double *y,
                   size_t n, const ch_glyphs *g, ch_glyph id, ch_role role);

#endif
