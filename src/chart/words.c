/* Word wrapping and shortest distinguishing names (see words.h). */
#include "chart/words.h"

#include <stdio.h>
#include <string.h>

/* Bytes of the first `cols` code points of s (UTF-8 continuation bytes take no column). */
static size_t bytes_for(const char *s, size_t len, int cols)
{
    size_t i = 0;
    int c = 0;
    while (i < len) {
        if (((unsigned char)s[i] & 0xC0) != 0x80) {
            if (c == cols) break;
            c++;
        }
        i++;
    }
    return i;
}

static int cols_of(const char *s, size_t len)
{
    int c = 0;
    for (size_t i = 0; i < len; i++) c += ((unsigned char)s[i] & 0xC0) != 0x80;
    return c;
}

static void put(char *out, size_t size, size_t *at, const char *s, size_t len)
{
    if (size == 0) return;
    for (size_t i = 0; i < len && *at + 1 < size; i++) out[(*at)++] = s[i];
    out[*at] = 0;
}

int ch_wrap(const char *text, int width, char *out, size_t size)
{
    if (width < 1) width = 1;
    size_t at = 0;
    if (size) out[0] = 0;
    int lines = 0;
    const char *p = text;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        do {                                   /* one source line, as many screen lines as it takes */
            size_t take = len;
            if (cols_of(p, len) > width) {
                size_t fit = bytes_for(p, len, width);
                size_t brk = 0;
                for (size_t i = fit; i > 0; i--)
                    if (p[i] == ' ') { brk = i; break; }       /* p[fit] == ' ' fits exactly */
                if (brk == 0)
                    for (size_t i = fit; i > 1; i--)
                        if (strchr("/_-,:", p[i - 1])) { brk = i; break; }
                take = brk ? brk : fit;
            }
            size_t keep = take;
            while (keep > 0 && p[keep - 1] == ' ') keep--;
            put(out, size, &at, p, keep);
            put(out, size, &at, "\n", 1);
            lines++;
            p += take;
            len -= take;
            while (len > 0 && *p == ' ') { p++; len--; }     /* no line starts with the break */
        } while (len > 0);
        if (!nl) break;
        p = nl + 1;
    }
    return lines;
}

static size_t common_prefix(const char *a, const char *b)
{
    size_t i = 0;
    while (a[i] && a[i] == b[i]) i++;
    return i;
}

static size_t common_suffix(const char *a, size_t la, const char *b, size_t lb)
{
    size_t i = 0;
    while (i < la && i < lb && a[la - 1 - i] == b[lb - 1 - i]) i++;
    return i;
}

/* The length of name i's method part (from its last '+': "+ets" of "digits.csv+ets") when
 * head '~' method in w columns, with at least one column of head, tells it from every other
 * name: each other name differs in that head or in that end. 0 when there is no such form. */
static size_t method_tail(const char *const *names, size_t n, size_t i, size_t w)
{
    const char *s = names[i];
    size_t len = strlen(s);
    const char *plus = strrchr(s, '+');
    if (!plus || plus[1] == '\0') return 0;
    size_t tail = len - (size_t)(plus - s);
    if (tail + 2 > w) return 0;
    size_t head = w - 1 - tail;
    for (size_t j = 0; j < n; j++) {
        if (j == i || strcmp(names[j], s) == 0) continue;
        size_t lj = strlen(names[j]);
        if (common_prefix(s, names[j]) < head) continue;
        if (common_suffix(s, len, names[j], lj) < tail) continue;
        return 0;
    }
    return tail;
}

void ch_short_names(const char *const *names, size_t n, int width, char **out, size_t out_size)
{
    if (width < 4) width = 4;
    size_t w = (size_t)width;
    for (size_t i = 0; i < n; i++) {
        const char *s = names[i];
        size_t len = strlen(s);
        if (len <= w) { snprintf(out[i], out_size, "%s", s); continue; }
        /* a method's name is never cut when the file's name can give way instead: "+e~" would
         * not say which method it is */
        size_t mtail = method_tail(names, n, i, w);
        if (mtail) {
            snprintf(out[i], out_size, "%.*s~%s", (int)(w - 1 - mtail), s, s + len - mtail);
            continue;
        }
        /* how much of the head and of the tail it takes to differ from every other name */
        size_t pre = 0, suf = 0;
        for (size_t j = 0; j < n; j++) {
            if (j == i || strcmp(names[j], s) == 0) continue;
            size_t lj = strlen(names[j]);
            size_t cp = common_prefix(s, names[j]), cs = common_suffix(s, len, names[j], lj);
            if (cp + 1 > pre) pre = cp + 1;
            if (cs + 1 > suf) suf = cs + 1;
        }
        if (pre <= w - 1) {                                     /* head~ */
            snprintf(out[i], out_size, "%.*s~", (int)(w - 1), s);
        } else if (suf <= w - 1) {                              /* head~tail */
            /* the end from a separator ("+platt", "_fold1.csv") when one is near enough,
             * else about half the width */
            size_t tail = 0;
            for (size_t t = suf; t <= w - 2 && t <= len && !tail; t++)
                if (strchr("+._-/", s[len - t])) tail = t;
            if (!tail) {
                tail = suf < (w - 1) / 2 ? (w - 1) / 2 : suf;
                if (tail > w - 2) tail = w - 2;
                if (tail < suf) tail = suf;
            }
            size_t head = w - 1 - tail;
            snprintf(out[i], out_size, "%.*s~%s", (int)head, s, s + len - tail);
        } else {                                                /* ~middle~ around the difference */
            size_t keep = w - 2, end = pre;                      /* s[pre - 1] is where it differs */
            if (end < keep) end = keep;
            if (end > len) end = len;
            snprintf(out[i], out_size, "~%.*s~", (int)keep, s + end - keep);
        }
    }
}
