/* Point overlay (see overlay.h). */
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
