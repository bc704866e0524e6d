/* The unit square of the reliability diagram and the heat map (frame.h). */
#include "chart/frame.h"

#include <math.h>
#include <string.h>

int ch_frame_round(double v, int n)
{
    int r = (int)floor(v * n + 0.5);
    return r < 0 ? 0 : r > n ? n : r;
}

void ch_frame_draw(ch_buf *b, const ch_glyphs *g, int px, int top, int W, int H,
                   const char *name, int name_dx)
{
    int axis_y = top + H;
    static const char *ylab[] = { ".25", ".5", ".75", "1" };
    for (int row = 0; row < H; row++) ch_buf_glyph(b, px - 1, top + row, g, CH_G_VLINE, CH_ROLE_AXIS);
    for (int t = 0; t < 4; t++) {
        int rr = ch_frame_round(0.25 * (t + 1), H) - 1;
        int sy = top + H - 1 - rr;
        ch_buf_glyph(b, px - 1, sy, g, CH_G_YTICK, CH_ROLE_AXIS);
        ch_buf_printf(b, px - 1 - (int)strlen(ylab[t]), sy, CH_ROLE_LABEL, "%s", ylab[t]);
    }
    ch_buf_glyph(b, px - 1, axis_y, g, CH_G_CORNER, CH_ROLE_AXIS);
    ch_buf_puts(b, px - 2, axis_y, 1, "0", CH_ROLE_LABEL, 0);
    for (int j = 0; j < W; j++) ch_buf_glyph(b, px + j, axis_y, g, CH_G_HLINE, CH_ROLE_AXIS);
    static const char *xlab[] = { "0", ".25", ".5", ".75", "1" };
    for (int t = 0; t <= 4; t++) {
        int cx = px - 1 + ch_frame_round(0.25 * t, W);
        if (t > 0) ch_buf_glyph(b, cx, axis_y, g, CH_G_XTICK, CH_ROLE_AXIS);
        int len = (int)strlen(xlab[t]);
        ch_buf_puts(b, cx - len / 2, axis_y + 1, len, xlab[t], CH_ROLE_LABEL, 0);
    }
    ch_buf_puts(b, px + W + name_dx, axis_y + 1, -1, name, CH_ROLE_LABEL, 0);
    /* the diagonal: in column j, the row holding the column's middle */
    for (int j = 0; j < W; j++) {
        int rr = (int)floor((j + 0.5) / W * H);
        rr = rr < 0 ? 0 : rr > H - 1 ? H - 1 : rr;
        ch_buf_glyph(b, px + j, top + H - 1 - rr, g, CH_G_DIAG, CH_ROLE_DIAGONAL);
    }
}
