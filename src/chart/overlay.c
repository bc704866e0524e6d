/* Overlays on a [0,1] x [0,1] plot area (see overlay.h). */
#include "chart/overlay.h"

#include <math.h>

static int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

int ch_points_draw(ch_buf *b, int px, int top, int W, int H, const double *x, const double *y,
                   size_t n, const ch_glyphs *g, ch_glyph id, ch_role role)
{
    if (W < 1 || H < 1) return 0;
    int drawn = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x[i]) || !isfinite(y[i])) continue;
        int cx = clampi((int)floor(x[i] * W), 0, W - 1);
        int cy = clampi((int)floor(y[i] * H + 0.5) - 1, 0, H - 1);
        ch_buf_glyph(b, px + cx, top + H - 1 - cy, g, id, role);
        drawn++;
    }
    return drawn;
}

/* The mesh function v at x in [0, 1], linear between its two neighbours (NAN when either is). */
static double at(const double *v, size_t n, double x)
{
    double pos = x * (double)(n - 1);
    size_t i = (size_t)floor(pos);
    if (i >= n - 1) return v[n - 1];
    double fr = pos - (double)i;
    return v[i] + fr * (v[i + 1] - v[i]);
}

/* Column j of W: the mesh points in its range [j/W, (j+1)/W) (t = 1 in the last), y averaged
 * with the density as weight and the density averaged, so a narrow kernel's mass between two
 * column centres (a file with every prediction at exactly 0 or 1) still shows; a column
 * without a mesh point (W > n) takes the values at its centre. */
static void column(const double *y, const double *density, size_t n, int j, int W, double *v,
                   double *d)
{
    size_t lo = (size_t)ceil((double)j / W * (double)(n - 1));
    size_t hi = j + 1 == W ? n - 1 : (size_t)ceil((double)(j + 1) / W * (double)(n - 1)) - 1;
    double sd = 0.0, sw = 0.0, sy = 0.0;
    size_t k = 0;
    for (size_t i = lo; i <= hi && i < n; i++, k++) {
        sd += density[i];
        if (isfinite(y[i]) && density[i] > 0) { sw += density[i]; sy += density[i] * y[i]; }
    }
    if (k == 0) {
        *v = at(y, n, (j + 0.5) / W);
        *d = at(density, n, (j + 0.5) / W);
        return;
    }
    *d = sd / (double)k;
    *v = sw > 0 ? sy / sw : NAN;
}

int ch_smooth_draw(ch_buf *b, int px, int top, int W, int H, const double *y,
                   const double *density, size_t n, int strip_y, const ch_glyphs *g,
                   ch_glyph heavy, ch_glyph light, ch_role role)
{
    if (W < 1 || H < 1 || n < 2) return 0;
    int drawn = 0, prev = -1;
    double dmax = 0.0, v, d;
    for (int j = 0; j < W; j++) {
        column(y, density, n, j, W, &v, &d);
        if (d > dmax) dmax = d;
    }
    for (int j = 0; j < W; j++) {
        column(y, density, n, j, W, &v, &d);
        if (strip_y >= 0 && dmax > 0 && d >= 0.01 * dmax) {
            int level = clampi((int)ceil(8.0 * d / dmax), 1, 8);
            ch_buf_glyph(b, px + j, strip_y, g, (ch_glyph)(CH_G_VBAR1 + level - 1), CH_ROLE_COUNT);
        }
        /* where the strip is blank the curve is an extrapolation from far-off samples:
         * relplot's line is transparent there too (its opacity is 0.3 x the density) */
        if (!isfinite(v) || !(d >= 0.01 * dmax)) { prev = -1; continue; }
        int rr = clampi((int)floor(v * H), 0, H - 1);
        ch_glyph id = d >= 1.0 ? heavy : light;
        /* from the cell next to the previous column's up (or down) to this one */
        int from = prev < 0 ? rr : prev < rr ? prev + 1 : prev > rr ? prev - 1 : rr;
        int lo = from < rr ? from : rr, hi = from < rr ? rr : from;
        for (int r = lo; r <= hi; r++) ch_buf_glyph(b, px + j, top + H - 1 - r, g, id, role);
        prev = rr;
        drawn++;
    }
    return drawn;
}
