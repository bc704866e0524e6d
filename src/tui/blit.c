/* Cell buffer -> curses (see blit.h). */
#include "tui/blit.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <wchar.h>

#include "calscope/text.h"

#include "tui/theme.h"
#include "tui/tui_curses.h"

void tui_blit(const ch_buf *b, int y, int x, int stale)
{
    if (!b) return;
    for (int r = 0; r < b->h; r++) {
        int sy = y + r;
        if (sy < 0 || sy >= LINES) continue;
        for (int c = 0; c < b->w; c++) {
            int sx = x + c;
            if (sx < 0 || sx >= COLS) continue;
            const ch_cell *cell = &b->cells[(size_t)r * (size_t)b->w + (size_t)c];
            int role = stale ? CH_ROLE_STALE : cell->role;
            attr_t a = tui_theme_attr(role);
            if (stale) a |= A_DIM;
            wchar_t wc[2] = { (wchar_t)(cell->cp ? cell->cp : ' '), 0 };
            cchar_t cc;
            setcchar(&cc, wc, a, tui_theme_pair(role), NULL);
            mvadd_wch(sy, sx, &cc);
        }
    }
}

int tui_text(int y, int x, int max_w, int role, const char *text)
{
    if (y < 0 || y >= LINES || x >= COLS) return 0;
    int room = COLS - x;
    if (max_w >= 0 && max_w < room) room = max_w;
    if (room <= 0) return 0;
    attr_t a = tui_theme_attr(role);
    short pair = tui_theme_pair(role);
    /* User text (file names, selections, messages quoting them) reaches the screen only here
     * and in chart titles: control bytes are shown as \xNN, as in the loader's messages. */
    char shown[4096];
    cs_text_escape(shown, sizeof shown, text, strnlen(text, sizeof shown), 0);
    /* Decode UTF-8 one code point per cell (our strings hold only one-column characters). */
    mbstate_t ms = { 0 };
    const char *s = shown;
    int n = 0;
    move(y, x);
    while (*s && n < room) {
        wchar_t wc;
        size_t len = mbrtowc(&wc, s, 8, &ms);
        if (len == (size_t)-1 || len == (size_t)-2) { wc = '?'; len = 1; ms = (mbstate_t){ 0 }; }
        if (len == 0) break;
        wchar_t ws[2] = { wc, 0 };
        cchar_t cc;
        setcchar(&cc, ws, a, pair, NULL);
        mvadd_wch(y, x + n, &cc);
        s += len;
        n++;
    }
    return n;
}

int tui_textf(int y, int x, int max_w, int role, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return tui_text(y, x, max_w, role, buf);
}
