/* Overlays on a [0,1] x [0,1] plot area already drawn by another renderer (the RECE-G
 * smoothed curve as points over a reliability diagram, relplot's smoothed curve as a line). Same conventions as chart.h: a ch_buf, a
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

/* A function of [0, 1] sampled on the mesh t_i = i / (n - 1) (n >= 2), drawn as a line over
 * the plot area: relplot's smoothed reliability curve (engine/metrics/smece.h cs_smece_curve).
 * Column j shows the mean of y over the mesh points in its range, weighted by the density
 * (the density is averaged), in the cell whose range holds it — the diagonal's rule, so
 * y(t) = t lies on the diagonal — and a run of cells joins it to the previous column's cell,
 * so a steep curve stays unbroken. The glyph is `heavy` where the column's density is at
 * least 1 (as dense as predictions spread evenly over
 * [0, 1]) and `light` below: relplot draws its line thicker and more opaque where the
 * density is higher. Nothing is drawn where y is NAN or the density is below 1% of the
 * densest column's (an extrapolation from far-off samples, which relplot's opacity hides
 * too). With strip_y >= 0 the density is also a strip on that row: eighth blocks of the
 * densest column's value, blank where the curve is not drawn.
 * Returns the number of columns with a point. */
int ch_smooth_draw(ch_buf *b, int px, int top, int W, int H, const double *y,
                   const double *density, size_t n, int strip_y, const ch_glyphs *g,
                   ch_glyph heavy, ch_glyph light, ch_role role);

#endif
