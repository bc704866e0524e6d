/* calscope engine, the fast path's byte scanner: where the delimiters and line ends are.
 *
 * One pass over each byte: a window of 64 bytes becomes one 64-bit mask of its structural bytes
 * (the delimiter, LF, CR and the double quote), and the tokeniser walks the set bits, so a field
 * boundary costs a count-trailing-zeros, not a look at every byte. Two ways to make the mask,
 * chosen at run time so that tests can run both on the same input and compare:
 *   - CSL_SCAN_SSE2: 16 bytes per compare (SSE2 is part of x86-64; guarded by __SSE2__);
 *   - CSL_SCAN_SWAR: 8 bytes per 64-bit word (portable C, csl_eq8).
 * Both give the same mask bit for bit (the SWAR tests are exact, see csl_eq8); the last bytes of
 * the data (fewer than a window) are looked at one by one, so no load ever reads past the end.
 * Internal to src/engine/load (load_fast.c and the loader tests). Nothing is allocated; a
 * csl_scan is one thread's cursor (each chunk's thread has its own), the functions keep no
 * other state. */
#ifndef CALSCOPE_LOAD_SCAN_H
#define CALSCOPE_LOAD_SCAN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "engine/load/load_internal.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#define CSL_HAVE_SSE2 1
#else
#define CSL_HAVE_SSE2 0
#endif

/* The 0x80 bits of a csl_eq8 mask gathered into the low 8 bits, byte i -> bit i. */
static inline uint64_t csl_gather8(uint64_t m)
{
    return ((m >> 7) * 0x0102040810204080ull) >> 56;
}

/* Set bits of x (without -mpopcnt, __builtin_popcount is a library call). */
static inline unsigned csl_popcount64(uint64_t x)
{
    x = x - ((x >> 1) & 0x5555555555555555ull);
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
    return (unsigned)((x * 0x0101010101010101ull) >> 56);
}

typedef struct csl_scan {
    int kind;              /* CSL_SCAN_SSE2 or CSL_SCAN_SWAR (never AUTO here) */
    unsigned char delim;
    const char *end;       /* end of the data: no load reaches past it */
    const char *win;       /* the window the mask describes */
    uint64_t mask;         /* structural bytes of [win, win + 64) not yet handed out */
} csl_scan;

/* The mask of the 64 bytes at w: bit i set when w[i] is the delimiter, LF, CR or '"'. Bytes at
 * or past s->end count as not structural. */
static inline uint64_t csl_scan_mask(const csl_scan *s, const char *w)
{
    uint64_t m = 0;
    if (s->end - w >= 64) {
#if CSL_HAVE_SSE2
        if (s->kind == CSL_SCAN_SSE2) {
            const __m128i d = _mm_set1_epi8((char)s->delim), lf = _mm_set1_epi8('\n'),
                          cr = _mm_set1_epi8('\r'), qu = _mm_set1_epi8('"');
            for (int i = 0; i < 4; i++) {
                __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(w + 16 * i));
                __m128i x = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, d), _mm_cmpeq_epi8(v, lf)),
                                         _mm_or_si128(_mm_cmpeq_epi8(v, cr), _mm_cmpeq_epi8(v, qu)));
                m |= (uint64_t)(unsigned)_mm_movemask_epi8(x) << (16 * i);
            }
            return m;
        }
#endif
        for (int i = 0; i < 8; i++) {
            uint64_t v;
            memcpy(&v, w + 8 * i, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
            v = __builtin_bswap64(v);
#endif
            uint64_t x = csl_eq8(v, s->delim) | csl_eq8(v, '\n') | csl_eq8(v, '\r') | csl_eq8(v, '"');
            m |= csl_gather8(x) << (8 * i);
        }
        return m;
    }
    for (size_t i = 0; w + i < s->end; i++) {
        unsigned char b = (unsigned char)w[i];
        if (b == s->delim || b == '\n' || b == '\r' || b == '"') m |= (uint64_t)1 << i;
    }
    return m;
}

/* Starts (or restarts) the scan at p: the next csl_scan_next returns the first structural byte
 * at or after p. */
static inline void csl_scan_at(csl_scan *s, const char *p)
{
    s->win = p;
    s->mask = p < s->end ? csl_scan_mask(s, p) : 0;
}

/* The next structural byte before `bound` (bound <= s->end), or NULL when there is none: then
 * the scan stands at bound's window. */
static inline const char *csl_scan_next(csl_scan *s, const char *bound)
{
    while (!s->mask) {
        if (bound - s->win <= 64) return NULL;
        s->win += 64;
        s->mask = csl_scan_mask(s, s->win);
    }
    const char *q = s->win + __builtin_ctzll(s->mask);
    if (q >= bound) return NULL;
    s->mask &= s->mask - 1;
    return q;
}

/* How many bytes of [p, e) equal b: with SSE2 16 bytes a step into byte counters (a match
 * compares to -1, subtracted), summed by psadbw every 255 steps before a counter can wrap;
 * with SWAR 8 bytes a step; the tail byte by byte. A header of 100,000 names is counted this
 * way (the fields of the header line, the delimiter sniffer's counts). */
static inline size_t csl_count_byte(int kind, const char *p, const char *e, unsigned char b)
{
    size_t n = 0;
    (void)kind;
#if CSL_HAVE_SSE2
    if (kind == CSL_SCAN_SSE2) {
        const __m128i v = _mm_set1_epi8((char)b), zero = _mm_setzero_si128();
        while (e - p >= 16) {
            __m128i acc = zero;
            for (int i = 0; i < 255 && e - p >= 16; i++, p += 16)
                acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)p), v));
            __m128i s = _mm_sad_epu8(acc, zero);
            n += (size_t)_mm_cvtsi128_si32(s) + (size_t)_mm_cvtsi128_si32(_mm_srli_si128(s, 8));
        }
    }
#endif
    for (uint64_t w; e - p >= 8; p += 8) {
        memcpy(&w, p, 8);
        n += csl_count8(csl_eq8(w, b));
    }
    for (; p < e; p++) n += (unsigned char)*p == b;
    return n;
}

/* The first byte of [p, e) that is not plain header text -- a control byte (below 0x20), DEL
 * or a double quote -- or e. *nonblank is set when a byte other than a space is passed over
 * (left alone otherwise). 16 bytes a step with SSE2, 8 with SWAR, the tail byte by byte. */
static inline const char *csl_plain_text(int kind, const char *p, const char *e, int *nonblank)
{
    (void)kind;
#if CSL_HAVE_SSE2
    if (kind == CSL_SCAN_SSE2) {
        const __m128i ctl = _mm_set1_epi8(0x1f), del = _mm_set1_epi8(0x7f),
                      qu = _mm_set1_epi8('"'), sp = _mm_set1_epi8(' ');
        for (; e - p >= 16; p += 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
            __m128i x = _mm_or_si128(_mm_cmpeq_epi8(_mm_min_epu8(v, ctl), v),
                                     _mm_or_si128(_mm_cmpeq_epi8(v, del), _mm_cmpeq_epi8(v, qu)));
            unsigned stop = (unsigned)_mm_movemask_epi8(x);
            unsigned space = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, sp));
            unsigned before = stop ? ((1u << __builtin_ctz(stop)) - 1u) : 0xffffu;
            if (~space & before) *nonblank = 1;
            if (stop) return p + __builtin_ctz(stop);
        }
    }
#endif
    for (uint64_t w; e - p >= 8; p += 8) {
        memcpy(&w, p, 8);
        if (csl_lt8(w, 0x20) | csl_eq8(w, 0x7f) | csl_eq8(w, '"')) break;
        if (w != 0x2020202020202020ull) *nonblank = 1;
    }
    for (; p < e; p++) {
        unsigned char c = (unsigned char)*p;
        if (c < 0x20 || c == 0x7f || c == '"') return p;
        if (c != ' ') *nonblank = 1;
    }
    return p;
}

/* LF in [p, e) with the longest line checked on the way (64 bytes a step with SSE2, 8 with
 * SWAR, the tail byte by byte): *start is where the current line
 * began (updated past every LF); *bail is set, and counting stops, at the first line that does
 * not end within line_max bytes of its start (LF at or beyond start + line_max), which is where
 * the parse pass would give up too. The caller checks the unterminated tail. */
static inline size_t csl_count_lf(int kind, const char *p, const char *e, const char **start,
                                  size_t line_max, int *bail)
{
    size_t n = 0;
    const char *st = *start;
    (void)kind;                                   /* SWAR only where SSE2 is not compiled in */
#if CSL_HAVE_SSE2
    if (kind == CSL_SCAN_SSE2) {
        /* 64 bytes a step: one 64-bit mask of the LFs, then as the SWAR loop below */
        const __m128i lf = _mm_set1_epi8('\n');
        for (; e - p >= 64; p += 64) {
            uint64_t m = 0;
            for (int i = 0; i < 4; i++)
                m |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(
                         _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * i)), lf)) << (16 * i);
            if (!m) {
                if ((size_t)(p + 64 - st) > line_max) { *bail = 1; *start = st; return n; }
                continue;
            }
            if ((size_t)(p + __builtin_ctzll(m) - st) >= line_max) { *bail = 1; *start = st; return n; }
            n += csl_popcount64(m);
            st = p + (63 - __builtin_clzll(m)) + 1;
        }
    }
#endif
    for (; e - p >= 8; p += 8) {
        uint64_t v;
        memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        v = __builtin_bswap64(v);
#endif
        uint64_t m = csl_gather8(csl_eq8(v, '\n'));
        if (!m) {
            if ((size_t)(p + 8 - st) > line_max) { *bail = 1; *start = st; return n; }
            continue;
        }
        if ((size_t)(p + __builtin_ctzll(m) - st) >= line_max) { *bail = 1; *start = st; return n; }
        n += csl_popcount64(m);
        st = p + (63 - __builtin_clzll(m)) + 1;
    }
    for (; p < e; p++) {
        if (*p != '\n') continue;
        if ((size_t)(p - st) >= line_max) { *bail = 1; *start = st; return n; }
        n++;
        st = p + 1;
    }
    *start = st;
    return n;
}

#endif
