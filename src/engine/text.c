/* Escaping user text for a terminal (see calscope/text.h). */
#include "calscope/text.h"

#include <stdio.h>
#include <string.h>

/* Length of the valid, printable UTF-8 character at s (1..4), or 0 when the byte at s must be
 * escaped. Checks overlong forms, surrogates and the upper limit as RFC 3629 does. */
static size_t printable_char(const unsigned char *s, size_t left)
{
    unsigned char c = s[0];
    if (c >= 0x20 && c < 0x7f) return 1;
    if (c < 0xc2 || c > 0xf4) return 0;                      /* controls, DEL, stray bytes */
    size_t n = c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
    if (left < n) return 0;
    unsigned char lo = 0x80, hi = 0xbf;                      /* range of the second byte */
    if (c == 0xc2) hi = 0xbf, lo = 0xa0;                     /* U+0080..U+009F are C1 controls */
    else if (c == 0xe0) lo = 0xa0;
    else if (c == 0xed) hi = 0x9f;
    else if (c == 0xf0) lo = 0x90;
    else if (c == 0xf4) hi = 0x8f;
    if (s[1] < lo || s[1] > hi) return 0;
    for (size_t i = 2; i < n; i++)
        if ((s[i] & 0xc0) != 0x80) return 0;
    return n;
}

size_t cs_text_escape(char *buf, size_t cap, const char *s, size_t len, unsigned flags)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t o = 0, i = 0;
    while (i < len) {
        size_t n = printable_char(u + i, len - i);
        if (n == 0 && u[i] == '\n' && (flags & CS_TEXT_KEEP_NEWLINES)) n = 1;
        if (n) {
            if (o + n >= cap) break;
            memcpy(buf + o, u + i, n);
            o += n;
            i += n;
        } else {
            if (o + 4 >= cap) break;
            snprintf(buf + o, cap - o, "\\x%02x", u[i]);
            o += 4;
            i++;
        }
    }
    buf[o] = '\0';
    return o;
}

void cs_load_excerpt(char *buf, size_t cap, const char *p, size_t len)
{
    const size_t limit = 40;
    size_t o = 0, i = 0;
    for (; i < len && i < limit && o + 5 < cap; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c < 0x20 || c == 0x7f) o += (size_t)snprintf(buf + o, cap - o, "\\x%02x", c);
        else buf[o++] = (char)c;
    }
    if (i < len) {
        /* do not cut a UTF-8 sequence in half */
        while (o > 0 && ((unsigned char)buf[o - 1] & 0xc0) == 0x80) o--;
        if (o > 0 && ((unsigned char)buf[o - 1] & 0xc0) == 0xc0) o--;
        if (o + 4 < cap) { memcpy(buf + o, "...", 3); o += 3; }
    }
    buf[o < cap ? o : cap - 1] = '\0';
}
