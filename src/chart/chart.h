/* Chart renderers: reliability diagram, curve with band, horizontal bar chart. Each draws into
 * a rectangle of a ch_buf (cells.h) using a glyph table, so the same picture goes to text
 * (`report --plot`) and to the dashboard. Pure functions of their inputs: no curses, no
 * globals, any thread (one buffer per thread). Inputs are borrowed, never kept. */
#ifndef CALSCOPE_CHART_CHART_H
#define CALSCOPE_CHART_CHART_H

#include <stddef.h>

#include "calscope/metrics.h"
#include "chart/cells.h"

/* Default thin-bin threshold: with fewer samples the accuracy of a bin has a standard error
 * that can exceed 0.1, so its bar is not to be trusted. */
#define CH_THIN_DEFAULT 20

typedef struct ch_reliability {
    const cs_bin *bins;   /* the estimator's bins (count 0 = empty, not drawn) */
    size_t n_bins;
    size_t thin;          /* bins with 0 < count < thin are flagged; 0 = CH_THIN_DEFAULT */
    const char *title;    /* first line, or NULL */
    int legend;           /* 1: draw the legend (beside the plot when it fits, else below) */
} ch_reliability;

/* Minimum region for a reliability diagram. */
#define CH_RELIABILITY_MIN_W 24
#define CH_RELIABILITY_MIN_H 10

/* Draws the diagram into the w x h region at (x0, y0): accuracy per bin as bars against the
 * diagonal, the gap to the bin's mean confidence shaded as over- or under-confidence, thin bins
 * flagged, [0,1] axes with ticks 0 .25 .5 .75 1, a count strip under the x axis, the legend.
 * When bins outnumber columns, neighbouring bins share a column (count-weighted means); bins
 * that overlap (kd-tree) are placed at their mean confidence. Returns the number of rows used,
 * or -1 when the region is below the minimum (nothing drawn). */
int ch_reliability_draw(ch_buf *b, int x0, int y0, int w, int h, const ch_reliability *r,
                        const ch_glyphs *g);

/* The plot rectangle ch_reliability_draw uses in a w x h region, relative to the region: the
 * bars' columns are px .. px+pw-1 and rows py .. py+ph-1 (the x axis is row py+ph, the count
 * strip row py+ph+2). For
 * overlays drawn on the diagram (curves, marks under the axis) and charts lined up under it. */
void ch_reliability_area(const ch_reliability *r, int w, int h, int *px, int *py, int *pw, int *ph);

#define CH_MAX_SERIES 4

typedef struct ch_series {
    const char *name;
    const double *y;      /* n values (NAN = missing point) */
    const double *lo, *hi;/* band, or NULL */
    int mark;             /* 1..CH_MAX_SERIES: the marker and role of this series, so one
                             metric keeps its glyph across charts; 0 = by position */
} ch_series;

typedef struct ch_curve {
    const char *title;    /* or NULL */
    const double *x;      /* n increasing x values shared by every series */
    size_t n;
    int log_x;            /* place x on a log scale (fractions, bin counts) */
    const char *x_label;  /* printed after the x tick labels, or NULL */
    const ch_series *series;
    size_t n_series;      /* 1..CH_MAX_SERIES; series i uses marker i and role SERIES1+i
                             unless it names its own (ch_series.mark) */
    double y_min, y_max;  /* NAN = automatic (from 0, or the data minimum when negative) */
} ch_curve;

#define CH_CURVE_MIN_W 30
#define CH_CURVE_MIN_H 8

/* Draws the series with their bands (layers: band, then lines, then markers at the data
 * points; series 1 on top) over y ticks and x labels at the data points, with a one-line legend. Returns the
 * rows used or -1 when the region is too small or n < 1. */
int ch_curve_draw(ch_buf *b, int x0, int y0, int w, int h, const ch_curve *c, const ch_glyphs *g);

typedef struct ch_bar {
    const char *label;
    double value;         /* NAN = not available ("n/a") */
    double lo, hi;        /* interval whisker, NAN = none */
    int stale;            /* drawn with CH_ROLE_STALE and a '~' before the value */
} ch_bar;

typedef struct ch_bars {
    const char *title;    /* or NULL */
    const ch_bar *bars;
    size_t n;
    double vmax;          /* scale end; <= 0 or NAN = the largest value or hi */
    int decimals;         /* digits after the point for the values, 0 = 4 */
} ch_bars;

/* One row per bar: label, a bar in eighth-cell steps (a non-zero value never draws as
 * nothing), the optional whisker, the value. Rows beyond h are dropped. Returns rows used,
 * or -1 when w < 20. */
int ch_bars_draw(ch_buf *b, int x0, int y0, int w, int h, const ch_bars *c, const ch_glyphs *g);

#endif
