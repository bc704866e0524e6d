/* Horizontal bar chart renderer (chart.h): top-k ECE bars, per-file comparisons. Horizontal
 * bars keep labels and values on the same line, which reads better in text than columns. */
#include "chart/chart.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define LABEL_MAX 14

int ch_bars_draw(ch_buf *b, int x0, int y0, int w, int h, const ch_bars *c, const ch_glyphs *g)
{
    if (w < 20 || h < 1) return -1;
    int dec = c->decimals > 0 ? c->decimals : 4;
    int y = y0;
    if (c->title) ch_buf_puts(b, x0, y++, w, c->title, CH_ROLE_TITLE, !g->utf8);

    int lw = 0, vw = 3;
    double vmax = c->vmax;
    int auto_max = !(vmax > 0);
    if (auto_max) vmax = 0;
    for (size_t i = 0; i < c->n; i++) {
        const ch_bar *bar = &c->bars[i];
        int l = bar->label ? ch_text_width(bar->label) : 0;
        if (l > lw) lw = l;
        char tmp[64];
        int n = isfinite(bar->value) ? snprintf(tmp, sizeof tmp, "%.*f", dec, bar->value) + bar->stale : 3;
        if (n > vw) vw = n;
        if (auto_max) {
            if (isfinite(bar->value) && bar->value > vmax) vmax = bar->value;
            if (isfinite(bar->hi) && bar->hi > vmax) vmax = bar->hi;
        }
    }
    if (lw > LABEL_MAX) lw = LABEL_MAX;
    if (!(vmax > 0)) vmax = 1;
    int bx = x0 + lw + 1, bw = w - lw - 1 - vw - 1;
    if (bw < 4) return -1;

    for (size_t i = 0; i < c->n && y < y0 + h; i++, y++) {
        const ch_bar *bar = &c->bars[i];
        ch_role role = bar->stale ? CH_ROLE_STALE : CH_ROLE_BAR;
        if (bar->label) {
            int l = ch_text_width(bar->label);
            if (l > lw) l = lw;
            ch_buf_puts(b, bx - 1 - l, y, l, bar->label, CH_ROLE_LABEL, !g->utf8);
        }
        char val[64];
        if (!isfinite(bar->value)) {
            snprintf(val, sizeof val, "n/a");
        } else {
            double v = bar->value < 0 ? 0 : bar->value > vmax ? vmax : bar->value;
            long eighths = lround(v / vmax * bw * 8);
            if (eighths == 0 && bar->value > 0) eighths = 1;
            int full = (int)(eighths / 8), part = (int)(eighths % 8);
            for (int j = 0; j < full; j++) ch_buf_glyph(b, bx + j, y, g, CH_G_HBAR8, role);
            if (part) ch_buf_glyph(b, bx + full, y, g, (ch_glyph)(CH_G_HBAR1 + part - 1), role);
            snprintf(val, sizeof val, "%s", bar->stale ? "~" : "");
            size_t l = strlen(val);
            snprintf(val + l, sizeof val - l, "%.*f", dec, bar->value);
        }
        if (isfinite(bar->lo) && isfinite(bar->hi) && bar->hi >= bar->lo) {
            int c0 = (int)floor(fmax(0, fmin(bar->lo, vmax)) / vmax * bw);
            int c1 = (int)floor(fmax(0, fmin(bar->hi, vmax)) / vmax * bw);
            if (c1 >= bw) c1 = bw - 1;
            if (c0 >= bw) c0 = bw - 1;
            for (int j = c0 + 1; j < c1; j++) {
                ch_cell *cell = ch_buf_at(b, bx + j, y);
                if (cell && cell->cp == ' ') ch_buf_glyph(b, bx + j, y, g, CH_G_WHISKER, CH_ROLE_AXIS);
            }
            ch_buf_glyph(b, bx + c0, y, g, CH_G_WHISKER_L, CH_ROLE_AXIS);
            ch_buf_glyph(b, bx + c1, y, g, CH_G_WHISKER_R, CH_ROLE_AXIS);
        }
        ch_buf_puts(b, bx + bw + 1, y, vw, val, bar->stale ? CH_ROLE_STALE : CH_ROLE_LABEL, 0);
    }
    return y - y0;
}
