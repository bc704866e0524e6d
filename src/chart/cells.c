/* Cell buffer and glyph tables (see cells.h). */
#include "chart/cells.h"

#include <langinfo.h>
#include <locale.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const ch_glyphs glyphs_utf8 = {
    "utf8", 1,
    {
        [CH_G_SPACE] = ' ',
        [CH_G_HLINE] = 0x2500, [CH_G_VLINE] = 0x2502, [CH_G_CORNER] = 0x2514,
        [CH_G_XTICK] = 0x252C, [CH_G_YTICK] = 0x2524,
        [CH_G_DIAG] = 0x2571,
        [CH_G_BAR] = 0x2588, [CH_G_LOW] = 0x2581,
        [CH_G_OVER] = 0x2591, [CH_G_UNDER] = 0x2593, [CH_G_THIN] = '!', [CH_G_BAND] = 0x2591,
        [CH_G_DOT] = 0x00B7,
        [CH_G_MARK1] = 0x25CF, [CH_G_MARK2] = 0x25C6, [CH_G_MARK3] = 0x25A0, [CH_G_MARK4] = 0x25B2,
        [CH_G_VBAR1] = 0x2581, [CH_G_VBAR2] = 0x2582, [CH_G_VBAR3] = 0x2583, [CH_G_VBAR4] = 0x2584,
        [CH_G_VBAR5] = 0x2585, [CH_G_VBAR6] = 0x2586, [CH_G_VBAR7] = 0x2587, [CH_G_VBAR8] = 0x2588,
        [CH_G_HBAR1] = 0x258F, [CH_G_HBAR2] = 0x258E, [CH_G_HBAR3] = 0x258D, [CH_G_HBAR4] = 0x258C,
        [CH_G_HBAR5] = 0x258B, [CH_G_HBAR6] = 0x258A, [CH_G_HBAR7] = 0x2589, [CH_G_HBAR8] = 0x2588,
        [CH_G_WHISKER_L] = 0x251C, [CH_G_WHISKER] = 0x2500, [CH_G_WHISKER_R] = 0x2524,
    },
};

/* ASCII keeps the same shapes apart: bars '#', gaps ':' (missing accuracy) and '+'
 * (surplus), so a pasted chart still reads. Partial cells round to '.'/':' so a non-zero
 * value never disappears; levels of a strip (eighths of its maximum) are the digits 1-8. */
static const ch_glyphs glyphs_ascii = {
    "ascii", 0,
    {
        [CH_G_SPACE] = ' ',
        [CH_G_HLINE] = '-', [CH_G_VLINE] = '|', [CH_G_CORNER] = '+',
        [CH_G_XTICK] = '+', [CH_G_YTICK] = '+',
        [CH_G_DIAG] = '/',
        [CH_G_BAR] = '#', [CH_G_LOW] = '_',
        [CH_G_OVER] = ':', [CH_G_UNDER] = '+', [CH_G_THIN] = '!', [CH_G_BAND] = ':',
        [CH_G_DOT] = '.',
        [CH_G_MARK1] = '*', [CH_G_MARK2] = 'o', [CH_G_MARK3] = 'x', [CH_G_MARK4] = '@',
        [CH_G_VBAR1] = '1', [CH_G_VBAR2] = '2', [CH_G_VBAR3] = '3', [CH_G_VBAR4] = '4',
        [CH_G_VBAR5] = '5', [CH_G_VBAR6] = '6', [CH_G_VBAR7] = '7', [CH_G_VBAR8] = '8',
        [CH_G_HBAR1] = '.', [CH_G_HBAR2] = '.', [CH_G_HBAR3] = '.', [CH_G_HBAR4] = ':',
        [CH_G_HBAR5] = ':', [CH_G_HBAR6] = ':', [CH_G_HBAR7] = ':', [CH_G_HBAR8] = '#',
        [CH_G_WHISKER_L] = '|', [CH_G_WHISKER] = '-', [CH_G_WHISKER_R] = '|',
    },
};

const ch_glyphs *ch_glyphs_utf8(void) { return &glyphs_utf8; }
const ch_glyphs *ch_glyphs_ascii(void) { return &glyphs_ascii; }

const ch_glyphs *ch_glyphs_pick(int force_ascii)
{
    if (!setlocale(LC_CTYPE, "")) return &glyphs_ascii;
    if (force_ascii) return &glyphs_ascii;
    const char *cs = nl_langinfo(CODESET);
    if (cs && (strcasecmp(cs, "UTF-8") == 0 || strcasecmp(cs, "utf8") == 0)) return &glyphs_utf8;
    return &glyphs_ascii;
}

ch_buf *ch_buf_new(int w, int h)
{
    if (w < 1 || h < 1) return NULL;
    ch_buf *b = malloc(sizeof *b);
    if (!b) return NULL;
    b->cells = malloc((size_t)w * (size_t)h * sizeof *b->cells);
    if (!b->cells) { free(b); return NULL; }
    b->w = w;
    b->h = h;
    ch_buf_clear(b);
    return b;
}

void ch_buf_free(ch_buf *b)
{
    if (!b) return;
    free(b->cells);
    free(b);
}

void ch_buf_clear(ch_buf *b)
{
    for (size_t i = 0; i < (size_t)b->w * (size_t)b->h; i++) {
        b->cells[i].cp = ' ';
        b->cells[i].role = CH_ROLE_TEXT;
    }
}

ch_cell *ch_buf_at(ch_buf *b, int x, int y)
{
    if (!b || x < 0 || y < 0 || x >= b->w || y >= b->h) return NULL;
    return &b->cells[(size_t)y * (size_t)b->w + (size_t)x];
}

void ch_buf_set(ch_buf *b, int x, int y, uint32_t cp, ch_role role)
{
    ch_cell *c = ch_buf_at(b, x, y);
    if (c) { c->cp = cp; c->role = (uint8_t)role; }
}

void ch_buf_glyph(ch_buf *b, int x, int y, const ch_glyphs *g, ch_glyph id, ch_role role)
{
    ch_buf_set(b, x, y, g->cp[id], role);
}

/* Decodes one UTF-8 sequence; malformed bytes decode as U+FFFD one byte at a time. */
static uint32_t utf8_next(const unsigned char **sp)
{
    const unsigned char *s = *sp;
    uint32_t c = s[0];
    int extra = 0;
    if (c < 0x80) { *sp = s + 1; return c; }
    if ((c & 0xE0) == 0xC0) { c &= 0x1F; extra = 1; }
    else if ((c & 0xF0) == 0xE0) { c &= 0x0F; extra = 2; }
    else if ((c & 0xF8) == 0xF0) { c &= 0x07; extra = 3; }
    else { *sp = s + 1; return 0xFFFD; }
    for (int i = 1; i <= extra; i++) {
        if ((s[i] & 0xC0) != 0x80) { *sp = s + 1; return 0xFFFD; }
        c = (c << 6) | (s[i] & 0x3F);
    }
    *sp = s + 1 + extra;
    return c;
}

int ch_text_width(const char *utf8)
{
    const unsigned char *s = (const unsigned char *)utf8;
    int n = 0;
    while (*s) { utf8_next(&s); n++; }
    return n;
}

int ch_buf_puts(ch_buf *b, int x, int y, int max_w, const char *utf8, ch_role role, int ascii_only)
{
    const unsigned char *s = (const unsigned char *)utf8;
    int n = 0;
    while (*s && (max_w < 0 || n < max_w) && x + n < b->w) {
        uint32_t c = utf8_next(&s);
        if (c < 0x20 || c == 0x7F) c = '?';
        if (ascii_only && c > 0x7E) c = '?';
        ch_buf_set(b, x + n, y, c, role);
        n++;
    }
    return n;
}

int ch_buf_printf(ch_buf *b, int x, int y, ch_role role, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    return ch_buf_puts(b, x, y, -1, tmp, role, 0);
}
