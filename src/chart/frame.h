/* The unit square two charts share: the reliability diagram (reliability.c) and the dataset
 * reliability heat map (heatmap.c) plot a value against a value, both in [0, 1], over the
 * diagonal of perfect calibration. */
#ifndef CALSCOPE_CHART_FRAME_H
#define CALSCOPE_CHART_FRAME_H

#include "chart/cells.h"

/* Columns left of the plot for the y axis and its tick labels ("  .75" and the axis). */
#define CH_FRAME_MARGIN 5

/* round(v * n) clamped to [0, n]: the cell edge nearest to the value v of a [0, 1] axis of n
 * cells. */
int ch_frame_round(double v, int n);

/* The frame of a W x H plot whose top-left cell is (px, top): the y axis left of it with
 * ticks at .25 .5 .75 1 (each on the row whose top edge is the value), the x axis under it
 * with ticks at 0 .25 .5 .75 1 (each on the column whose right edge is the value) and their
 * labels below, `name` (the x axis's, e.g. "conf") name_dx columns past the plot on the label
 * row, then the diagonal of perfect calibration, the bottom layer of the plot. Writes into b
 * only (whatever falls outside it is clipped); the caller's thread. */
void ch_frame_draw(ch_buf *b, const ch_glyphs *g, int px, int top, int W, int H,
                   const char *name, int name_dx);

#endif
