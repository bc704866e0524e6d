/* Curve-with-band renderer (chart.h): variance curves (metric against sample fraction or
 * number of bins) with their bootstrap bands. Layout: title, H plot rows, x axis, x labels,
 * legend line. */
#include "chart/chart.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define YLAB_W 7   /* "0.1234" + the axis */

/* 0-based marker of series s: its own (ch_series.mark), else its position. */
static int mark_of(const ch_curve *c, size_t s)
{
    int m = c->series[s].mark;
    return m >= 1 && m <= CH_MAX_SERIES ? m - 1 : (int)s;
}

static double tx(const ch_curve *c, double x) { return c->log_x ? log(x) : x; }

/* A 1-2-2.5-5 step at least `raw`, so tick labels stay short. */
static double nice_step(double raw)
{
    if (!(raw > 0)) return 1;
    double p = pow(10, floor(log10(raw)));
    static const double m[] = { 1, 2, 2.5, 5, 10 };
    for (int i = 0; i < 5; i++) if (m[i] * p >= raw * (1 - 1e-9)) return m[i] * p;
    return 10 * p;
}

static void y_range(const ch_curve *c, int nt, double *lo, double *hi)
{
    double mn = INFINITY, mx = -INFINITY;
    for (size_t s = 0; s < c->n_series; s++) {
        const ch_series *se = &c->series[s];
        for (size_t i = 0; i < c->n; i++) {
            const double v[3] = { se->y[i], se->lo ? se->lo[i] : NAN, se->hi ? se->hi[i] : NAN };
            for (int k = 0; k < 3; k++)
                if (isfinite(v[k])) { if (v[k] < mn) mn = v[k]; if (v[k] > mx) mx = v[k]; }
        }
    }
    if (!isfinite(mn)) { mn = 0; mx = 1; }
    *lo = isfinite(c->y_min) ? c->y_min : (mn >= 0 ? 0 : mn);
    if (isfinite(c->y_max)) *hi = c->y_max;
    else {
        double step = nice_step((mx - *lo) / nt);
        *hi = *lo + nt * step;
    }
    if (!(*hi > *lo)) *hi = *lo + 1;
}

/* Value at fractional position t in [0,1] of the transformed x range, linearly interpolated
 * between the neighbouring data points; NAN where either neighbour is missing. */
static double interp(const ch_curve *c, const double *v, double t)
{
    if (!v) return NAN;
    if (c->n == 1) return v[0];
    double x0 = tx(c, c->x[0]), x1 = tx(c, c->x[c->n - 1]);
    double xv = x0 + t * (x1 - x0);
    for (size_t i = 0; i + 1 < c->n; i++) {
        double a = tx(c, c->x[i]), bb = tx(c, c->x[i + 1]);
        if (xv >= a - 1e-12 && xv <= bb + 1e-12) {
            double f = bb > a ? (xv - a) / (bb - a) : 0;
            return v[i] + f * (v[i + 1] - v[i]);
        }
    }
    return NAN;
}

static int col_of(const ch_curve *c, size_t i, int W)
{
    if (c->n == 1) return W / 2;
    double x0 = tx(c, c->x[0]), x1 = tx(c, c->x[c->n - 1]);
    double t = x1 > x0 ? (tx(c, c->x[i]) - x0) / (x1 - x0) : 0;
    return (int)floor(t * (W - 1) + 0.5);
}

int ch_curve_draw(ch_buf *b, int x0, int y0, int w, int h, const ch_curve *c, const ch_glyphs *g)
{
    if (w < CH_CURVE_MIN_W || h < CH_CURVE_MIN_H || c->n < 1 || c->n_series < 1) return -1;
    if (c->log_x) for (size_t i = 0; i < c->n; i++) if (!(c->x[i] > 0)) return -1;
    size_t ns = c->n_series > CH_MAX_SERIES ? CH_MAX_SERIES : c->n_series;
    int title = c->title != NULL;
    int H = h - title - 3, W = w - YLAB_W - 1;
    if (H < 3) return -1;
    /* As many tick intervals (about 4) as divide the H-1 row steps, so every tick label sits
     * exactly on its value's row and the labels are evenly spaced. */
    int nt = 4;
    static const int pref[] = { 4, 3, 5, 2, 6 };
    for (size_t i = 0; i < sizeof pref / sizeof pref[0]; i++)
        if ((H - 1) % pref[i] == 0) { nt = pref[i]; break; }
    double ylo, yhi;
    y_range(c, nt, &ylo, &yhi);

    int y = y0;
    if (title) ch_buf_puts(b, x0, y++, w, c->title, CH_ROLE_TITLE, !g->utf8);
    int top = y, axis_y = top + H, px = x0 + YLAB_W;
#define ROW(v) (top + H - 1 - (int)floor(((v) - ylo) / (yhi - ylo) * (H - 1) + 0.5))

    for (int r = 0; r < H; r++) ch_buf_glyph(b, px - 1, top + r, g, CH_G_VLINE, CH_ROLE_AXIS);
    for (int t = 0; t <= nt; t++) {
        double v = ylo + t * (yhi - ylo) / nt;
        int ry = ROW(v);
        char lab[16];
        snprintf(lab, sizeof lab, "%.4g", v);
        ch_buf_glyph(b, px - 1, ry, g, CH_G_YTICK, CH_ROLE_AXIS);
        ch_buf_puts(b, px - 2 - (int)strlen(lab), ry, YLAB_W - 2, lab, CH_ROLE_LABEL, 0);
    }
    ch_buf_glyph(b, px - 1, axis_y, g, CH_G_CORNER, CH_ROLE_AXIS);
    for (int j = 0; j < W; j++) ch_buf_glyph(b, px + j, axis_y, g, CH_G_HLINE, CH_ROLE_AXIS);
    int next_free = x0;
    for (size_t i = 0; i < c->n; i++) {
        int cx = px + col_of(c, i, W);
        ch_buf_glyph(b, cx, axis_y, g, CH_G_XTICK, CH_ROLE_AXIS);
        char lab[24];
        snprintf(lab, sizeof lab, "%g", c->x[i]);
        int len = (int)strlen(lab), sx = cx - len / 2;
        if (sx + len > px + W) sx = px + W - len;
        if (sx < x0) sx = x0;
        if (sx >= next_free) { ch_buf_puts(b, sx, axis_y + 1, len, lab, CH_ROLE_LABEL, 0); next_free = sx + len + 1; }
    }

    /* bands first, then the lines, then the markers on top */
    for (size_t s = 0; s < ns; s++) {
        const ch_series *se = &c->series[s];
        if (!se->lo || !se->hi) continue;
        for (int j = 0; j < W; j++) {
            double t = W > 1 ? (double)j / (W - 1) : 0;
            double lo = interp(c, se->lo, t), hi = interp(c, se->hi, t);
            if (!isfinite(lo) || !isfinite(hi)) continue;
            int r0 = ROW(hi), r1 = ROW(lo);
            for (int ry = r0; ry <= r1; ry++)
                if (ry >= top && ry < axis_y) ch_buf_glyph(b, px + j, ry, g, CH_G_BAND, CH_ROLE_BAND);
        }
    }
    /* the first series is the main one: drawn last so it stays visible where they meet */
    for (size_t s = ns; s-- > 0;) {
        for (int j = 0; j < W; j++) {
            double v = interp(c, c->series[s].y, W > 1 ? (double)j / (W - 1) : 0);
            int ry = isfinite(v) ? ROW(v) : -1;
            if (ry >= top && ry < axis_y) ch_buf_glyph(b, px + j, ry, g, CH_G_DOT, (ch_role)(CH_ROLE_SERIES1 + mark_of(c, s)));
        }
    }
    for (size_t s = ns; s-- > 0;) {
        for (size_t i = 0; i < c->n; i++) {
            double v = c->series[s].y[i];
            int ry = isfinite(v) ? ROW(v) : -1;
            if (ry >= top && ry < axis_y)
                ch_buf_glyph(b, px + col_of(c, i, W), ry, g, (ch_glyph)(CH_G_MARK1 + mark_of(c, s)), (ch_role)(CH_ROLE_SERIES1 + mark_of(c, s)));
        }
    }
#undef ROW

    int lx = x0, ly = axis_y + 2;
    for (size_t s = 0; s < ns; s++) {
        const char *name = c->series[s].name ? c->series[s].name : "";
        if (lx + 3 + ch_text_width(name) > x0 + w) break;
        ch_buf_glyph(b, lx, ly, g, (ch_glyph)(CH_G_MARK1 + mark_of(c, s)), (ch_role)(CH_ROLE_SERIES1 + mark_of(c, s)));
        lx += 2 + ch_buf_puts(b, lx + 2, ly, -1, name, CH_ROLE_LABEL, !g->utf8) + 2;
    }
    int band = 0;
    for (size_t s = 0; s < ns; s++) band |= c->series[s].lo && c->series[s].hi;
    if (band && lx + 12 <= x0 + w) {
        ch_buf_glyph(b, lx, ly, g, CH_G_BAND, CH_ROLE_BAND);
        lx += 2 + ch_buf_puts(b, lx + 2, ly, -1, "95% band", CH_ROLE_LABEL, 0) + 2;
    }
    if (c->x_label && lx + ch_text_width(c->x_label) + 4 <= x0 + w)
        ch_buf_printf(b, lx, ly, CH_ROLE_LABEL, "x: %s", c->x_label);
    return title + H + 3;
}
