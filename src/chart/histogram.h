/* Confidence histogram: how many samples each bin holds, drawn as vertical bars over [0,1] so it
 * lines up under a reliability diagram. Same conventions as chart.h: a ch_buf region, a glyph
 * table, no curses, no globals, inputs borrowed. */
#ifndef CALSCOPE_CHART_HISTOGRAM_H
#define CALSCOPE_CHART_HISTOGRAM_H

#include <stddef.h>

#include "calscope/metrics.h"
#include "chart/cells.h"

typedef struct ch_histogram {
    const cs_bin *bins;   /* bins with lo/hi on [0,1] and count */
    size_t n_bins;
    const char *title;    /* written in the left margin (first row), or NULL */
    int plot_x;           /* columns of the region before the [0,1] axis starts (margin) */
    int plot_w;           /* columns of the [0,1] axis; <= 0: the rest of the region */
} ch_histogram;

/* Draws the bars in the region (bottom row is the baseline), heights scaled to the largest
 * column, in eighth-cell steps; a non-zero count never draws as nothing. Each column shows the
 * bins whose centre falls in it (summed), or the bin spanning it when bins are wider than a
 * column. The largest count is printed in the margin. Returns rows used, -1 when too small. */
int ch_histogram_draw(ch_buf *b, int x0, int y0, int w, int h, const ch_histogram *hst,
                      const ch_glyphs *g);

#endif
