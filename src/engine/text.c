/* Escaping user text for a terminal, JSON and CSV (see calscope/text.h). */
#include "calscope/text.h"

#include <string.h>

/* Length of the valid UTF-8 character at s (1..4), or 0 when the byte at s is not the start of
 * one. Checks overlong forms, surrogates and the upper limit as RFC 3629 does. */
static size_t utf8_char(const unsigned char *s, size_t left)
{
    unsigned char c = s[0];
    if (c < 0x80) return 1;
    if (c < 0xc2 || c > 0xf4) return 0;                      /* stray continuation, overlong */
    size_t n = c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
    if (left < n) return 0;
    unsigned char lo = 0x80, hi = 0xbf;                      /* range of the second byte */
    if (c == 0xe0) lo = 0xa0;
    else if (c == 0xed) hi = 0x9f;
    else if (c == 0xf0) lo = 0x90;
    else if (c == 0xf4) hi = 0x8f;
    if (s[1] < lo || s[1] > hi) return 0;
    for (size_t i = 2; i < n; i++)
        if ((s[i] & 0xc0) != 0x80) return 0;
    return n;
}

/* Length of the valid, printable UTF-8 character at s (1..4), or 0 when the byte at s must be
 * escaped on a terminal: C0 controls, DEL, the C1 controls U+0080..U+009F (c2 80..c2 9f) and
 * every byte that is not part of valid UTF-8. */
static size_t printable_char(const unsigned char *s, size_t left)
{
    if (s[0] < 0x20 || s[0] == 0x7f) return 0;
    if (s[0] == 0xc2 && left >= 2 && s[1] < 0xa0) return 0;
    return utf8_char(s, left);
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

/* Length (2 or 3) of the UTF-8 character at s when it is one a reader cannot see or tells from
 * a plain space — the no-break and other Unicode spaces, soft hyphen, the zero-width and direction
 * marks, line and paragraph separators, word joiner, the byte-order mark — with its code point in
 * *cp; else 0. */
static size_t invisible_char(const unsigned char *s, size_t left, unsigned *cp)
{
    if (left >= 2 && s[0] == 0xc2 && (s[1] == 0xa0 || s[1] == 0xad)) {
        *cp = s[1];
        return 2;
    }
    if (left < 3 || (s[2] & 0xc0) != 0x80) return 0;
    unsigned c = ((unsigned)(s[0] & 0x0f) << 12) | ((unsigned)(s[1] & 0x3f) << 6) | (s[2] & 0x3fu);
    if ((s[0] & 0xf0) != 0xe0 || (s[1] & 0xc0) != 0x80) return 0;
    if ((c >= 0x2000 && c <= 0x200f) || (c >= 0x2028 && c <= 0x202f) || (c >= 0x205f && c <= 0x2064) ||
        c == 0x3000 || c == 0xfeff) {
        *cp = c;
        return 3;
    }
    return 0;
}

void cs_load_excerpt(char *buf, size_t cap, const char *p, size_t len)
{
    const size_t limit = 40;
    const unsigned char *u = (const unsigned char *)p;
    size_t o = 0, i = 0;
    while (i < len && i < limit && o + 7 < cap) {
        unsigned char c = u[i];
        unsigned cp;
        size_t n = invisible_char(u + i, len - i, &cp);
        if (n) {
            o += (size_t)snprintf(buf + o, cap - o, "\\u%04x", cp);
            i += n;
        } else if (c < 0x20 || c == 0x7f) {
            o += (size_t)snprintf(buf + o, cap - o, "\\x%02x", c);
            i++;
        } else {
            buf[o++] = (char)c;
            i++;
        }
    }
    if (i < len) {
        /* do not cut a UTF-8 sequence in half */
        while (o > 0 && ((unsigned char)buf[o - 1] & 0xc0) == 0x80) o--;
        if (o > 0 && ((unsigned char)buf[o - 1] & 0xc0) == 0xc0) o--;
        if (o + 4 < cap) { memcpy(buf + o, "...", 3); o += 3; }
    }
    buf[o < cap ? o : cap - 1] = '\0';
}

char *cs_text_count(char *buf, size_t cap, unsigned long long v)
{
    char digits[32], grouped[40];
    int n = snprintf(digits, sizeof digits, "%llu", v);
    size_t o = 0;
    for (int i = 0; i < n; i++) {
        if (i && (n - i) % 3 == 0) grouped[o++] = ',';
        grouped[o++] = digits[i];
    }
    grouped[o] = '\0';
    snprintf(buf, cap, "%s", grouped);
    return buf;
}

/* A byte outside valid UTF-8 as the UTF-8 form of its Latin-1 reading (0xff -> c3 bf). */
static void put_latin1(FILE *out, unsigned char b)
{
    fputc(0xc0 | (b >> 6), out);
    fputc(0x80 | (b & 0x3f), out);
}

void cs_text_json(FILE *out, const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t len = strlen(s);
    fputc('"', out);
    for (size_t i = 0; i < len;) {
        size_t n = utf8_char(u + i, len - i);
        unsigned char c = u[i];
        if (n == 0) fprintf(out, "\\u%04x", c);               /* its Latin-1 reading */
        else if (c == '"' || c == '\\') fprintf(out, "\\%c", c);
        else if (c == '\n') fputs("\\n", out);
        else if (c == '\r') fputs("\\r", out);
        else if (c == '\t') fputs("\\t", out);
        else if (c < 0x20 || c == 0x7f) fprintf(out, "\\u%04x", c);
        else fwrite(u + i, 1, n, out);
        i += n ? n : 1;
    }
    fputc('"', out);
}

void cs_text_utf8(FILE *out, const char *s, size_t len)
{
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < len;) {
        size_t n = utf8_char(u + i, len - i);
        if (n) fwrite(u + i, 1, n, out);
        else put_latin1(out, u[i]);
        i += n ? n : 1;
    }
}
