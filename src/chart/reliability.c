/* Reliability diagram renderer (chart.h). Layout, top to bottom: title, H plot rows, x axis,
 * x tick labels, count strip, legend (when not beside the plot). The plot aims at W = 2H so
 * it looks square (cells are about twice as tall as wide). */
#include "chart/chart.h"
#include "chart/frame.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MARGIN CH_FRAME_MARGIN
#define LEGEND_W 31
#define LEGEND_ROWS 6
#define CONF_W 6          /* "  conf" right of the x axis */

/* One plot column: the bins drawn in it, merged. */
typedef struct col {
    double count, conf_sum, acc_sum;
} col;

static int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

static void add_bin(col *c, const cs_bin *bin)
{
    c->count += (double)bin->count;
    c->conf_sum += (double)bin->count * bin->conf;
    c->acc_sum += (double)bin->count * bin->acc;
}

/* Interval layout when the bins are disjoint intervals in order (uniform and equal-mass
 * binning); otherwise (kd-tree cells overlap on the first coordinate) each bin sits at its mean
 * confidence. A bin too narrow to own a column centre joins the column of its midpoint, so no
 * non-empty bin vanishes. */
static void layout(const ch_reliability *r, col *cols, int W)
{
    int disjoint = 1;
    for (size_t i = 1; i < r->n_bins; i++)
        if (r->bins[i].lo < r->bins[i - 1].hi - 1e-12) { disjoint = 0; break; }
    for (size_t i = 0; i < r->n_bins; i++) {
        const cs_bin *bin = &r->bins[i];
        if (bin->count == 0 || !isfinite(bin->conf) || !isfinite(bin->acc)) continue;
        int placed = 0;
        if (disjoint) {
            for (int j = 0; j < W; j++) {
                double v = (j + 0.5) / W;
                /* bins are (lo, hi]; the first one also takes its lower edge */
                if ((v > bin->lo || (i == 0 && v >= bin->lo)) && v <= bin->hi) {
                    add_bin(&cols[j], bin);
                    placed = 1;
                }
            }
        }
        if (!placed) {
            double at = disjoint ? 0.5 * (bin->lo + bin->hi) : bin->conf;
            add_bin(&cols[clampi((int)floor(at * W), 0, W - 1)], bin);
        }
    }
}

static void put_legend_line(ch_buf *b, int x, int y, int w, const ch_glyphs *g, ch_glyph id,
                            ch_role role, const char *text)
{
    if (w < 3) return;
    ch_buf_glyph(b, x, y, g, id, role);
    ch_buf_puts(b, x + 2, y, w - 2, text, CH_ROLE_LABEL, 0);
}

/* The plot rectangle in a w x h region (see ch_reliability_area); *legend: 0 none, 1 right,
 * 2 below. Room for the "conf" label right of the x axis is kept whenever the plot can spare
 * it, so the label never falls off the edge. */
static void plot_area(const ch_reliability *r, int w, int h, int *px, int *py, int *pw, int *ph,
                      int *legend)
{
    int title = r->title != NULL;
    int H = h - (title + 3), W;
    *legend = 0;
    if (r->legend) {
        int wr = w - MARGIN - 3 - LEGEND_W;
        if (wr >= 16) { *legend = 1; W = wr; }
        else if (H - LEGEND_ROWS >= 6) { *legend = 2; H -= LEGEND_ROWS; W = w - MARGIN - 1; }
        else W = w - MARGIN - 1;
    } else {
        W = w - MARGIN - 1;
    }
    if (*legend != 1 && W - CONF_W >= 8 && W > w - MARGIN - CONF_W) W = w - MARGIN - CONF_W;
    if (W > 2 * H) W = 2 * H;
    *px = MARGIN;
    *py = title;
    *pw = W;
    *ph = H;
}

void ch_reliability_area(const ch_reliability *r, int w, int h, int *px, int *py, int *pw, int *ph)
{
    int legend;
    plot_area(r, w, h, px, py, pw, ph, &legend);
}

int ch_reliability_draw(ch_buf *b, int x0, int y0, int w, int h, const ch_reliability *r,
                        const ch_glyphs *g)
{
    if (w < CH_RELIABILITY_MIN_W || h < CH_RELIABILITY_MIN_H) return -1;
    size_t thin = r->thin ? r->thin : CH_THIN_DEFAULT;
    int title = r->title != NULL;
    int overhead = title + 3;
    int px, py, W, H, legend;
    plot_area(r, w, h, &px, &py, &W, &H, &legend);
    if (H < 4 || W < 8) return -1;

    col *cols = calloc((size_t)W, sizeof *cols);
    if (!cols) return -1;
    layout(r, cols, W);

    int y = y0;
    if (title) ch_buf_puts(b, x0, y++, w, r->title, CH_ROLE_TITLE, !g->utf8);
    int top = y, axis_y = top + H;
    px += x0;

    /* layers: the frame and its diagonal (frame.h), then bars over it, then thin flags */
    ch_frame_draw(b, g, px, top, W, H, "conf", 2);
    double max_count = 0;
    for (int j = 0; j < W; j++) if (cols[j].count > max_count) max_count = cols[j].count;
    for (int j = 0; j < W; j++) {
        const col *c = &cols[j];
        if (c->count <= 0) continue;
        double acc = c->acc_sum / c->count, conf = c->conf_sum / c->count;
        int na = ch_frame_round(acc, H), nc = ch_frame_round(conf, H);
        int lo = na < nc ? na : nc;
        for (int rr = 0; rr < lo; rr++) ch_buf_glyph(b, px + j, top + H - 1 - rr, g, CH_G_BAR, CH_ROLE_BAR);
        for (int rr = na; rr < nc; rr++) ch_buf_glyph(b, px + j, top + H - 1 - rr, g, CH_G_OVER, CH_ROLE_OVER);
        for (int rr = nc; rr < na; rr++) ch_buf_glyph(b, px + j, top + H - 1 - rr, g, CH_G_UNDER, CH_ROLE_UNDER);
        if (na == 0 && acc > 0) ch_buf_glyph(b, px + j, top + H - 1, g, CH_G_LOW, CH_ROLE_BAR);
        if (c->count < (double)thin) {
            int hi = na > nc ? na : nc;
            ch_buf_glyph(b, px + j, top + H - 1 - clampi(hi, 0, H - 1), g, CH_G_THIN, CH_ROLE_THIN);
        }
        /* count strip: eighth blocks relative to the fullest column, never empty when > 0 */
        int level = (int)ceil(8.0 * c->count / max_count);
        ch_buf_glyph(b, px + j, axis_y + 2, g, (ch_glyph)(CH_G_VBAR1 + clampi(level, 1, 8) - 1), CH_ROLE_COUNT);
    }
    ch_buf_puts(b, px - 2, axis_y + 2, 1, "n", CH_ROLE_LABEL, 0);

    if (legend) {
        char thin_txt[48], count_txt[48];
        snprintf(thin_txt, sizeof thin_txt, "thin bin (< %zu samples)", thin);
        snprintf(count_txt, sizeof count_txt, "samples per column (%s = %.0f)", g->utf8 ? "\u2588" : "8", max_count);
        int lx = legend == 1 ? px + W + 3 : x0;
        int ly = legend == 1 ? top : axis_y + 3;
        int lw = legend == 1 ? x0 + w - lx : w;
        put_legend_line(b, lx, ly + 0, lw, g, CH_G_BAR, CH_ROLE_BAR, "accuracy in the bin");
        put_legend_line(b, lx, ly + 1, lw, g, CH_G_DIAG, CH_ROLE_DIAGONAL, "perfect calibration");
        put_legend_line(b, lx, ly + 2, lw, g, CH_G_OVER, CH_ROLE_OVER, "over-confident: acc < conf");
        put_legend_line(b, lx, ly + 3, lw, g, CH_G_UNDER, CH_ROLE_UNDER, "under-confident: acc > conf");
        put_legend_line(b, lx, ly + 4, lw, g, CH_G_THIN, CH_ROLE_THIN, thin_txt);
        put_legend_line(b, lx, ly + 5, lw, g, CH_G_VBAR4, CH_ROLE_COUNT, count_txt);
    }
    free(cols);
    return overhead + H + (legend == 2 ? LEGEND_ROWS : 0);
}
