/* Confidence histogram (see histogram.h). */
#include "chart/histogram.h"

#include <math.h>
#include <stdlib.h>

int ch_histogram_draw(ch_buf *b, int x0, int y0, int w, int h, const ch_histogram *hst,
                      const ch_glyphs *g)
{
    int px = hst->plot_x > 0 ? hst->plot_x : 0;
    int pw = hst->plot_w > 0 ? hst->plot_w : w - px;
    if (px + pw > w) pw = w - px;
    if (pw < 4 || h < 2) return -1;
    int rows = h - 1;                       /* bar rows above the baseline */
    double *col = calloc((size_t)pw, sizeof *col);
    if (!col) return -1;
    for (size_t i = 0; i < hst->n_bins; i++) {
        const cs_bin *bin = &hst->bins[i];
        if (bin->count == 0) continue;
        double mid = 0.5 * (bin->lo + bin->hi);
        int c = (int)floor(mid * pw);
        if (c < 0) c = 0;
        if (c >= pw) c = pw - 1;
        col[c] += (double)bin->count;
    }
    /* Bins wider than a column fill the columns they span that hold no bin centre. */
    for (int c = 0; c < pw; c++) {
        if (col[c] > 0) continue;
        double x = (c + 0.5) / pw;
        for (size_t i = 0; i < hst->n_bins; i++) {
            const cs_bin *bin = &hst->bins[i];
            if (bin->count > 0 && x > bin->lo && x <= bin->hi) { col[c] = (double)bin->count; break; }
        }
    }
    double max = 0;
    for (int c = 0; c < pw; c++) if (col[c] > max) max = col[c];
    for (int c = 0; c < pw; c++) {
        ch_buf_glyph(b, x0 + px + c, y0 + rows, g, CH_G_HLINE, CH_ROLE_AXIS);
        if (col[c] <= 0 || max <= 0) continue;
        int eighths = (int)lround(col[c] / max * rows * 8);
        if (eighths < 1) eighths = 1;       /* never draw a non-zero count as nothing */
        for (int r = 0; r < rows && eighths > 0; r++) {
            int e = eighths >= 8 ? 8 : eighths;
            ch_buf_glyph(b, x0 + px + c, y0 + rows - 1 - r, g, (ch_glyph)(CH_G_VBAR1 + e - 1),
                         CH_ROLE_BAR);
            eighths -= e;
        }
    }
    if (px >= 4) {
        if (hst->title) ch_buf_puts(b, x0, y0, px - 1, hst->title, CH_ROLE_LABEL, !g->utf8);
        ch_buf_printf(b, x0, y0 + (hst->title ? 1 : 0), CH_ROLE_LABEL, "%*.0f", px - 1, max);
        ch_buf_printf(b, x0, y0 + rows, CH_ROLE_LABEL, "%*d", px - 1, 0);
    }
    free(col);
    return h;
}
