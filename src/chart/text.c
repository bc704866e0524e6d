/* Plain-text writer for cell buffers (`report --plot`, golden tests). Roles are dropped: the
 * glyphs alone must carry the meaning: series differ by glyph as well as colour. */
#include "chart/cells.h"

#include <stdlib.h>
#include <string.h>

static size_t utf8_put(uint32_t c, char *out)
{
    if (c < 0x80) { out[0] = (char)c; return 1; }
    if (c < 0x800) {
        out[0] = (char)(0xC0 | (c >> 6));
        out[1] = (char)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        out[0] = (char)(0xE0 | (c >> 12));
        out[1] = (char)(0x80 | ((c >> 6) & 0x3F));
        out[2] = (char)(0x80 | (c & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (c >> 18));
    out[1] = (char)(0x80 | ((c >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((c >> 6) & 0x3F));
    out[3] = (char)(0x80 | (c & 0x3F));
    return 4;
}

/* Row y without its trailing blanks, or -1 for a blank row. */
static int row_end(const ch_buf *b, int y)
{
    int e = b->w - 1;
    while (e >= 0 && b->cells[(size_t)y * (size_t)b->w + (size_t)e].cp == ' ') e--;
    return e;
}

static int last_row(const ch_buf *b)
{
    int y = b->h - 1;
    while (y >= 0 && row_end(b, y) < 0) y--;
    return y;
}

/* Encodes rows 0..last into out (which must hold 4*w+1 bytes per row) and returns the length. */
static size_t encode(const ch_buf *b, char *out)
{
    size_t len = 0;
    int last = last_row(b);
    for (int y = 0; y <= last; y++) {
        int e = row_end(b, y);
        for (int x = 0; x <= e; x++) len += utf8_put(b->cells[(size_t)y * (size_t)b->w + (size_t)x].cp, out + len);
        out[len++] = '\n';
    }
    out[len] = '\0';
    return len;
}

char *ch_buf_to_string(const ch_buf *b)
{
    char *out = malloc((size_t)b->h * ((size_t)b->w * 4 + 1) + 1);
    if (!out) return NULL;
    encode(b, out);
    return out;
}

int ch_buf_write(const ch_buf *b, FILE *out)
{
    char *s = ch_buf_to_string(b);
    if (!s) return -1;
    size_t len = strlen(s);
    int rc = fwrite(s, 1, len, out) == len ? 0 : -1;
    free(s);
    return rc;
}
