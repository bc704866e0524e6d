/* Dataset reliability histogram heat map and per-case dot plot (see heatmap.h). */
#include "chart/heatmap.h"
#include "chart/frame.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MARGIN CH_FRAME_MARGIN

static int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

uint32_t ch_density_glyph(const ch_glyphs *g, int level)
{
    static const uint32_t utf8[5] = { 0, 0x2591, 0x2592, 0x2593, 0x2588 };
    static const uint32_t ascii[5] = { 0, '.', ':', '*', '#' };
    level = clampi(level, 0, 4);
    return g->utf8 ? utf8[level] : ascii[level];
}

/* For an axis of m bins drawn in n cells: the bins each cell shows, [first[c], last[c]].
 * A bin belongs to the cell holding its centre; a cell holding no centre shows the bin that
 * spans the cell's centre. */
static void axis_map(size_t m, int n, int *first, int *last)
{
    for (int c = 0; c < n; c++) first[c] = -1, last[c] = -1;
    for (size_t i = 0; i < m; i++) {
        int c = clampi((int)floor(((double)i + 0.5) / (double)m * n), 0, n - 1);
        if (first[c] < 0) first[c] = (int)i;
        last[c] = (int)i;
    }
    for (int c = 0; c < n; c++)
        if (first[c] < 0) {
            int i = clampi((int)floor(((double)c + 0.5) / n * (double)m), 0, (int)m - 1);
            first[c] = last[c] = i;
        }
}

int ch_heatmap_draw(ch_buf *b, int x0, int y0, int w, int h, const ch_heatmap *hm,
                    const ch_glyphs *g)
{
    if (w < CH_HEATMAP_MIN_W || h < CH_HEATMAP_MIN_H || hm->m == 0 || !hm->counts) return -1;
    int title = hm->title != NULL;
    int H = h - title - 3;
    int W = w - MARGIN - 1;
    if (W > 2 * H) W = 2 * H;
    if (H < 4 || W < 8) return -1;
    int *fx = malloc(sizeof(int) * (size_t)(2 * W + 2 * H));
    double *cell = calloc((size_t)W * (size_t)H, sizeof *cell);
    if (!fx || !cell) { free(fx); free(cell); return -1; }
    int *lx = fx + W, *fy = lx + W, *ly = fy + H;
    axis_map(hm->m, W, fx, lx);
    axis_map(hm->m, H, fy, ly);
    size_t m = hm->m;
    double max = 0;
    for (int cx = 0; cx < W; cx++)
        for (int cy = 0; cy < H; cy++) {
            double s = 0;
            for (int i = fx[cx]; i <= lx[cx]; i++)
                for (int j = fy[cy]; j <= ly[cy]; j++) s += hm->counts[(size_t)i * m + (size_t)j];
            cell[(size_t)cx * (size_t)H + (size_t)cy] = s;
            if (s > max) max = s;
        }

    int y = y0;
    if (title) ch_buf_puts(b, x0, y++, w, hm->title, CH_ROLE_TITLE, !g->utf8);
    int top = y, axis_y = top + H, px = x0 + MARGIN;
    /* layers: the frame and its diagonal, shaded cells, mean curve */
    ch_frame_draw(b, g, px, top, W, H, "p", 1);
    for (int cx = 0; cx < W; cx++)
        for (int cy = 0; cy < H; cy++) {
            double s = cell[(size_t)cx * (size_t)H + (size_t)cy];
            if (s <= 0) continue;
            /* log scale: at 1800 cases one crowded cell holds hundreds and a linear ramp
             * draws every other cell at the lowest level. Level 1 is one case; (1, max] is
             * cut in three equal steps of ln(count) */
            int level = s <= 1 ? 1 : clampi(1 + (int)ceil(3.0 * log(s) / log(max)), 2, 4);
            ch_buf_set(b, px + cx, top + H - 1 - cy, ch_density_glyph(g, level), CH_ROLE_BAR);
        }
    if (hm->curve)
        for (size_t i = 0; i < m; i++) {
            double v = hm->curve[i];
            if (!isfinite(v)) continue;
            int cx = clampi((int)floor(((double)i + 0.5) / (double)m * W), 0, W - 1);
            int cy = clampi((int)floor(v * H), 0, H - 1);
            ch_buf_glyph(b, px + cx, top + H - 1 - cy, g, CH_G_MARK2, CH_ROLE_SERIES1);
        }

    /* legend: the density ramp with its count range, the curve and the diagonal glyphs */
    int gx = x0, gy = axis_y + 2;
    for (int lv = 1; lv <= 4; lv++) ch_buf_set(b, gx + lv - 1, gy, ch_density_glyph(g, lv), CH_ROLE_BAR);
    char txt[64];
    if (max <= 1) snprintf(txt, sizeof txt, " 1 case");
    else snprintf(txt, sizeof txt, " 1..%.0f cases (log)", max);
    gx += 4 + ch_buf_puts(b, gx + 4, gy, -1, txt, CH_ROLE_LABEL, 0) + 2;
    if (hm->curve) {
        ch_buf_glyph(b, gx, gy, g, CH_G_MARK2, CH_ROLE_SERIES1);
        gx += 1 + ch_buf_puts(b, gx + 1, gy, -1, " mean", CH_ROLE_LABEL, 0) + 2;
    }
    ch_buf_glyph(b, gx, gy, g, CH_G_DIAG, CH_ROLE_DIAGONAL);
    ch_buf_puts(b, gx + 1, gy, -1, x0 + w - gx >= 12 ? " calibrated" : " diag", CH_ROLE_LABEL, 0);
    free(fx);
    free(cell);
    return title + H + 3;
}

/* A round axis end above v: 1, 2, 2.5 or 5 times a power of ten. */
static double nice_above(double v)
{
    if (!(v > 0)) return 1;
    double p = pow(10, floor(log10(v)));
    static const double steps[] = { 1, 2, 2.5, 5, 10 };
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
        if (steps[i] * p >= v) return steps[i] * p;
    return 10 * p;
}

int ch_strip_draw(ch_buf *b, int x0, int y0, int w, int h, const ch_strip *s, const ch_glyphs *g)
{
    if (w < 16 || h < 4) return -1;
    double vmax = s->vmax;
    if (!(vmax > 0)) {
        double hi = 0;
        for (size_t i = 0; i < s->n; i++) if (isfinite(s->v[i]) && s->v[i] > hi) hi = s->v[i];
        if (isfinite(s->mean) && isfinite(s->sd) && s->mean + s->sd > hi) hi = s->mean + s->sd;
        vmax = nice_above(hi);
    }
    int W = w - 2, rows = h - 3;
    int *col = calloc((size_t)W, sizeof *col);
    if (!col) return -1;
    for (size_t i = 0; i < s->n; i++) {
        if (!isfinite(s->v[i])) continue;
        col[clampi((int)floor(s->v[i] / vmax * W), 0, W - 1)]++;
    }
    /* Many cases (1800 in 30 columns) would fill every column to the top: then each marker
     * stands for k cases (k the smallest that fits the fullest column), the column height is
     * its count / k rounded up (one value never vanishes), and the scale is printed. */
    int most = 0;
    for (int c = 0; c < W; c++) if (col[c] > most) most = col[c];
    int k = most > rows ? (most + rows - 1) / rows : 1;
    int px = x0 + 1, axis_y = y0 + rows;
    for (int c = 0; c < W; c++) {
        int n = (col[c] + k - 1) / k;
        for (int r = 0; r < rows && r < n; r++)
            ch_buf_glyph(b, px + c, axis_y - 1 - r, g, CH_G_MARK1, CH_ROLE_SERIES1);
        ch_buf_glyph(b, px + c, axis_y, g, CH_G_HLINE, CH_ROLE_AXIS);
    }
    ch_buf_glyph(b, px - 1, axis_y, g, CH_G_CORNER, CH_ROLE_AXIS);
    if (isfinite(s->mean)) {
        int cm = clampi((int)floor(s->mean / vmax * W), 0, W - 1);
        if (isfinite(s->sd) && s->sd > 0) {
            int cl = clampi((int)floor((s->mean - s->sd) / vmax * W), 0, W - 1);
            int cr = clampi((int)floor((s->mean + s->sd) / vmax * W), 0, W - 1);
            for (int c = cl; c <= cr; c++) ch_buf_glyph(b, px + c, axis_y + 1, g, CH_G_WHISKER, CH_ROLE_BAND);
            ch_buf_glyph(b, px + cl, axis_y + 1, g, CH_G_WHISKER_L, CH_ROLE_BAND);
            ch_buf_glyph(b, px + cr, axis_y + 1, g, CH_G_WHISKER_R, CH_ROLE_BAND);
        }
        ch_buf_set(b, px + cm, axis_y + 1, g->utf8 ? 0x253C : '+', CH_ROLE_SERIES2);
    }
    char end[32];
    snprintf(end, sizeof end, "%s%g", s->label ? s->label : "", vmax);
    ch_buf_puts(b, px - 1, axis_y + 2, 1, "0", CH_ROLE_LABEL, 0);
    int ew = (int)strlen(end);
    ch_buf_puts(b, px + W - ew, axis_y + 2, ew, end, CH_ROLE_LABEL, 0);
    if (k > 1) {                                     /* the scale, between the tick labels */
        char scale[48];
        int sw = snprintf(scale, sizeof scale, " = %d cases", k);
        if (sw + 1 <= W - ew - 3) {
            ch_buf_glyph(b, px + 1, axis_y + 2, g, CH_G_MARK1, CH_ROLE_SERIES1);
            ch_buf_puts(b, px + 2, axis_y + 2, sw, scale, CH_ROLE_LABEL, 0);
        }
    }
    free(col);
    return h;
}
