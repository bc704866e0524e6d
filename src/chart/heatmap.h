/* Charts of the Cases view (segmentation-style files; Barfoot et al. 2024, "Average Calibration
 * Error"):
 *
 *  - ch_heatmap: the dataset reliability histogram of one class — x the probability bin, y the
 *    observed-frequency bin, each cell shaded by how many cases fall in it with density glyphs
 *    (UTF-8 ░▒▓█, ASCII .:*#; a non-zero count never draws as nothing), the diagonal beneath and
 *    a mean curve over it (◆ / o), so it reads without colour.
 *  - ch_strip: a distribution of per-case values (e.g. ACE) as a dot plot over [0, vmax] with
 *    the mean and mean ± sd marked under the axis.
 *
 * Same conventions as chart.h: a rectangle of a ch_buf, a glyph table, no curses, no globals,
 * inputs borrowed. Any thread (one buffer per thread). */
#ifndef CALSCOPE_CHART_HEATMAP_H
#define CALSCOPE_CHART_HEATMAP_H

#include <stddef.h>
#include <stdint.h>

#include "chart/cells.h"

typedef struct ch_heatmap {
    const uint32_t *counts; /* m*m: counts[i*m + j], i = probability bin (x), j = frequency bin (y) */
    size_t m;               /* bins on each axis (uniform on [0,1]) */
    const double *curve;    /* m values, the mean frequency per probability bin (NAN = none), or NULL */
    const char *title;      /* first row, or NULL */
} ch_heatmap;

#define CH_HEATMAP_MIN_W 24
#define CH_HEATMAP_MIN_H 10

/* Layout: title, H plot rows, x axis, x tick labels, one legend row. The plot aims at W = 2H.
 * When bins outnumber cells, a cell sums the bins whose centres fall in it; when cells outnumber
 * bins, a cell shows the bin spanning its centre. Shade level: 1 for one case, else
 * 1 + ceil(3 ln(count) / ln(max)) (a log scale, said in the legend: "1..max cases (log)"). Returns
 * rows used, or -1 when the region is below the minimum (nothing drawn). */
int ch_heatmap_draw(ch_buf *b, int x0, int y0, int w, int h, const ch_heatmap *hm,
                    const ch_glyphs *g);

/* The density glyph (level 1..4) of the table: ░▒▓█ or .:*#; 0 for level 0 (blank). */
uint32_t ch_density_glyph(const ch_glyphs *g, int level);

typedef struct ch_strip {
    const double *v;        /* n values (NAN skipped) */
    size_t n;
    double mean, sd;        /* marked under the axis (NAN = not marked) */
    double vmax;            /* axis end; <= 0 or NAN = a round number above the largest value */
    const char *label;      /* printed before the axis end value ("ACE"), or NULL */
} ch_strip;

/* Dot plot: values fall into columns of [0, vmax]; a column with c values stacks c markers
 * upwards; when the fullest column does not fit, each marker stands for k cases (printed as
 * "* = k cases" between the tick labels) and a column stacks ceil(c / k). Rows: h-3 dot rows, the axis,
 * the mean/sd marks (├─┼─┤ / |-+-|), the tick labels. Returns rows used, -1 when w < 16 or h < 4. */
int ch_strip_draw(ch_buf *b, int x0, int y0, int w, int h, const ch_strip *s, const ch_glyphs *g);

#endif
