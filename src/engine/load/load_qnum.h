/* calscope engine, the fast path's number parser: a field whose end is known, or a number read
 * from its start.
 *
 * Digits are read eight at a time (SWAR: one 64-bit load, a digit test, three multiplies), and
 * the value is made exactly the way cs_load_parse_double makes its short decimals: significant
 * digits m <= 2^53 and a decimal exponent within +-22, so that (double)m and 10^|e| are exact
 * and one IEEE multiply or divide rounds correctly (the bits strtod gives). Whatever falls
 * outside that — more than 19 significant digits, a long exponent, a '+' sign, anything not a
 * plain decimal — returns 0 and the caller asks cs_load_parse_double, which decides. So the
 * values are bit-identical to the checker's by construction; tests compare against strtod.
 * csl_quick_num bounds a field whose end is known; csl_quick_num_at reads a number from its
 * start and says where it ends (rows of numbers only: load_fast.c quick_row_num).
 * Internal to src/engine/load. Thread-safe (no state). */
#ifndef CALSCOPE_LOAD_QNUM_H
#define CALSCOPE_LOAD_QNUM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "engine/load/load_internal.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

static const double csl_pow10_exact[23] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};
static const uint64_t csl_pow10_u64[20] = {
    1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull, 100000000ull,
    1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull, 10000000000000ull,
    100000000000000ull, 1000000000000000ull, 10000000000000000ull, 100000000000000000ull,
    1000000000000000000ull, 10000000000000000000ull,
};

/* m * 10^e10 rounded as strtod rounds it, when Clinger's fast path makes it exact: m <= 2^53
 * and |e10| <= 22, so (double)m and 10^|e10| are exact and one IEEE multiply or divide rounds
 * correctly. 1 with *x set, else 0 (the caller declines). The one place of that rule for the
 * quick parsers below. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline int csl_exact(uint64_t m, long e10, double *x)
{
    if (m > (UINT64_C(1) << 53) || e10 < -22 || e10 > 22) return 0;
    double v = (double)m;
    if (e10 < 0) v /= csl_pow10_exact[-e10];
    else if (e10 > 0) v *= csl_pow10_exact[e10];
    *x = v;
    return 1;
}

/* The value of the 8 ASCII digits of w, the first digit in the lowest byte (fast_float's
 * parse_eight_digits_unrolled). */
static inline uint64_t csl_eight_digits(uint64_t w)
{
    w -= 0x3030303030303030ull;
    w = w * 10 + (w >> 8);
    return (((w & 0x000000FF000000FFull) * (100 + (1000000ull << 32))) +
            (((w >> 16) & 0x000000FF000000FFull) * (1 + (10000ull << 32)))) >> 32;
}

/* All 8 bytes of w are ASCII digits (fast_float's is_made_of_eight_digits_fast; a carry out
 * of a byte >= 0xfa can only make a digit look like a non-digit, never the reverse). */
static inline int csl_is8digits(uint64_t w)
{
    return ((w & 0xF0F0F0F0F0F0F0F0ull) |
            (((w + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) >> 4)) == 0x3333333333333333ull;
}

/* The value of the n (1..16) digits at s, when they are all digits: 1 with *v set, else 0.
 * Two loads at most, each filled with leading '0's where it holds fewer than 8 of the digits,
 * so no byte is looked at one by one. Loads stay within [s, safe); n <= 8 needs s + 8 <= safe
 * (the caller checks). Little-endian only. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline int csl_digits16(const char *s, size_t n, uint64_t *v)
{
    uint64_t w, x;
    memcpy(&w, s, 8);
    if (n <= 8) {
        x = n == 8 ? w : (w << (8 * (8 - n))) | (0x3030303030303030ull >> (8 * n));
        if (!csl_is8digits(x)) return 0;
        *v = csl_eight_digits(x);
        return 1;
    }
    memcpy(&x, s + n - 8, 8);            /* the last 8, overlapping the first 8 by 16 - n */
    if (n < 16) {
        unsigned keep = 8 * (unsigned)(16 - n);     /* low bytes already in w: make them '0' */
        x = (x >> keep << keep) | (0x3030303030303030ull >> (64 - keep));
    }
    if (!csl_is8digits(w) || !csl_is8digits(x)) return 0;
    *v = csl_eight_digits(w) * csl_pow10_u64[n - 8] + csl_eight_digits(x);
    return 1;
}

/* How many of the bytes of w, from the lowest, are ASCII digits (0..8). Exact per byte. */
static inline unsigned csl_digit_run8(uint64_t w)
{
    uint64_t nd = ~csl_lt8(w ^ 0x3030303030303030ull, 10) & 0x8080808080808080ull;
    return nd ? (unsigned)__builtin_ctzll(nd) >> 3 : 8;
}

/* The value of the first r (1..8) bytes of w, all digits: the run moved to the top bytes with
 * '0's below it, then read as 8 digits. */
static inline uint64_t csl_run_value(uint64_t w, unsigned r)
{
    return csl_eight_digits(r == 8 ? w : (w << (8 * (8 - r))) | (0x3030303030303030ull >> (8 * r)));
}

/* The general form, digit by digit where needed: [-]digits[.digits][(e|E)[+-]d[d]] with up to
 * 19 significant digits. Same contract as csl_quick_num. */
static inline int csl_quick_num_general(const char *p, const char *b, const char *safe, double *out)
{
    int neg = p < b && *p == '-';
    p += neg;
    /* the exponent, read from the end: e5, e-5, e05, e-05 (as %g writes them) */
    const char *me = b;
    long e10 = 0;
    if (b - p >= 3) {
        /* a mantissa of at least one byte before the 'e': never looks before p */
        const char *x = (b[-2] | 0x20) == 'e' ? b - 2
                      : b - p >= 4 && (b[-3] | 0x20) == 'e' ? b - 3
                      : b - p >= 5 && (b[-4] | 0x20) == 'e' ? b - 4 : NULL;
        if (x) {
            const char *d = x + 1;
            int eneg = *d == '-';
            if (*d == '-' || *d == '+') d++;
            if (b - d < 1 || b - d > 2 || (unsigned)(d[0] - '0') >= 10u) return 0;
            long ev = d[0] - '0';
            if (b - d == 2) {
                if ((unsigned)(d[1] - '0') >= 10u) return 0;
                ev = ev * 10 + (d[1] - '0');
            }
            e10 = eneg ? -ev : ev;
            me = x;
        }
    }
    uint64_t m = 0;
    int nd = 0;
    const char *s = p;
    while (p < me && (unsigned)(*p - '0') < 10u) {
        if (m || *p != '0') {
            if (++nd > 19) return 0;
            m = m * 10 + (uint64_t)(*p - '0');
        }
        p++;
    }
    if (p == s && (p == me || *p != '.')) return 0;     /* no digits at all */
    const char *f = p;
    if (p == s && me - p == 1) return 0;                  /* "." alone */
    if (f < me) {
        if (*f != '.') return 0;
        const char *d = ++f;
        if (m == 0)
            while (d < me && *d == '0') d++;
        size_t n = (size_t)(me - d);
        if (n) {
            uint64_t v;
            if (nd + (int)n > 19) return 0;
            if (n <= 16 && (n > 8 || safe - d >= 8)) {
                if (!csl_digits16(d, n, &v)) return 0;
            } else {
                v = 0;
                for (const char *q = d; q < me; q++) {
                    if ((unsigned)(*q - '0') >= 10u) return 0;
                    v = v * 10 + (uint64_t)(*q - '0');
                }
            }
            m = m * csl_pow10_u64[n] + v;
        }
        e10 -= (long)(me - f);
    }
    if (m == 0) {
        *out = neg ? -0.0 : 0.0;
        return 1;
    }
    double v;
    if (!csl_exact(m, e10, &v)) return 0;
    *out = neg ? -v : v;
    return 1;
}

/* Parses exactly [p, b) as [-]digits[.digits][(e|E)[+-]d[d]] when the result is exact (see
 * above): 1 with *out set, else 0 (the field may still be a number: ask cs_load_parse_double).
 * Loads may read up to 16 bytes past the field's start but never at or past `safe`.
 * The common shapes of prediction files, "0.0001379047" and "7.22441884735e-06" (one integer
 * digit, a fraction of at most 15 digits, an optional short exponent), take a straight path:
 * two 8-byte loads find the fraction's digit run and give its value, and the exponent is read
 * after it. The fraction's leading zeros are digits of the run like any other (they add nothing
 * to the value): skipping them first, byte by byte, cost a mispredicted branch per field (0 to 3
 * zeros in %.12g probabilities) and a third of the parse; a fraction of 16 or more digits
 * (more than 3 leading zeros and 12 significant digits) takes the general form, which drops
 * them. Everything else takes csl_quick_num_general. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline int csl_quick_num(const char *p, const char *b, const char *safe, double *out)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    const char *p0 = p;
    int neg = p < b && *p == '-';
    p += neg;
    if (b - p == 1 && (unsigned)(p[0] - '0') < 10u) {    /* one digit: a label, 0 or 1 */
        double x = (double)(p[0] - '0');
        *out = neg ? -x : x;
        return 1;
    }
    if (b - p < 2 || (unsigned)(p[0] - '0') >= 10u || p[1] != '.')
        return csl_quick_num_general(p0, b, safe, out);
    uint64_t m = (uint64_t)(p[0] - '0');
    const char *f = p + 2;
    if (safe - f < 16) return csl_quick_num_general(p0, b, safe, out);
    uint64_t w1, w2;
    memcpy(&w1, f, 8);
    memcpy(&w2, f + 8, 8);
    unsigned r1 = csl_digit_run8(w1), n;
    uint64_t v;
    if (r1 < 8) {
        n = r1;
        v = r1 ? csl_run_value(w1, r1) : 0;
    } else {
        unsigned r2 = csl_digit_run8(w2);
        if (r2 == 8) return csl_quick_num_general(p0, b, safe, out);   /* 16 digits or more */
        n = 8 + r2;
        v = csl_eight_digits(w1) * csl_pow10_u64[r2] + (r2 ? csl_run_value(w2, r2) : 0);
    }
    /* n <= 15 digits after the point, one before it: m < 10^16 */
    m = m * csl_pow10_u64[n] + v;
    const char *q = f + n;
    if (q > b) return 0;                   /* cannot happen: b is not a digit */
    long e10 = -(long)(q - f);
    if (q < b) {
        if ((*q | 0x20) != 'e') return 0;
        q++;
        int eneg = 0;
        if (q < b && (*q == '-' || *q == '+')) { eneg = *q == '-'; q++; }
        if (b - q < 1 || b - q > 2 || (unsigned)(q[0] - '0') >= 10u) return 0;
        long ev = q[0] - '0';
        if (b - q == 2) {
            if ((unsigned)(q[1] - '0') >= 10u) return 0;
            ev = ev * 10 + (q[1] - '0');
        }
        e10 += eneg ? -ev : ev;
    }
    if (m == 0) {
        *out = neg ? -0.0 : 0.0;
        return 1;
    }
    double x;
    if (!csl_exact(m, e10, &x)) return 0;
    *out = neg ? -x : x;
    return 1;
#else
    (void)p; (void)b; (void)safe; (void)out;
    return 0;
#endif
}

/* Room csl_quick_num_at needs before `safe` to take a number at p. */
#define CSL_QUICK_AT_ROOM 32

#if defined(__SSE2__)
#define CSL_QNUM_SSE2 1
/* 5^-k modulo 2^64 (5 is odd, so it has an inverse), k = 0..16: for V = D * 10^k,
 * (V >> k) * 5^-k = D exactly, modulo 2^64 (V >> k = D * 5^k; printed by
 * `pow(5**k, -1, 2**64)` in Python). */
static const uint64_t csl_inv5[17] = {
    0x0000000000000001ull, 0xcccccccccccccccdull, 0x8f5c28f5c28f5c29ull, 0x1cac083126e978d5ull,
    0xd288ce703afb7e91ull, 0x5d4e8fb00bcbe61dull, 0x790fb65668c26139ull, 0xe5032477ae8d46a5ull,
    0xc767074b22e90e21ull, 0x8e47ce423a2e9c6dull, 0x4fa7f60d3ed61f49ull, 0x0fee64690c913975ull,
    0x3662e0e1cf503eb1ull, 0xa47a2cf9f6433fbdull, 0x54186f653140a659ull, 0x7738164770402145ull,
    0xe4a4d1417cd9a041ull,
};
/* 16 bytes 0xff then 16 bytes 0: the 16 bytes from index 16 - n keep the first n bytes. */
static const unsigned char csl_keep16[32] = {
    255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
};

/* The digit run at f (at most 15 digits; 16 bytes are loaded) with SSE2: 1 with *n its length
 * and *v its value, or 0 when all 16 bytes are digits. The same answer as the SWAR code of
 * csl_quick_num_at, in fewer instructions: one compare gives the run, the digits are kept and
 * paired up by three multiply-adds (10, 100, 10000) into the values of the two halves, V =
 * D * 10^(16 - n), and D comes out of V by an exact division (csl_inv5). */
static inline int csl_digits_sse2(const char *f, unsigned *n, uint64_t *v)
{
    __m128i d = _mm_sub_epi8(_mm_loadu_si128((const __m128i *)(const void *)f), _mm_set1_epi8('0'));
    __m128i is_digit = _mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8(9)), d);   /* d <= 9 */
    unsigned dig = (unsigned)_mm_movemask_epi8(is_digit);
    unsigned r = (unsigned)__builtin_ctz(~dig);            /* ~dig has bits 16..31 set: r <= 16 */
    if (r == 16) return 0;
    d = _mm_and_si128(d, _mm_loadu_si128((const __m128i *)(const void *)(csl_keep16 + 16 - r)));
    const __m128i z = _mm_setzero_si128();
    __m128i lo = _mm_madd_epi16(_mm_unpacklo_epi8(d, z), _mm_set1_epi32(0x0001000a));
    __m128i hi = _mm_madd_epi16(_mm_unpackhi_epi8(d, z), _mm_set1_epi32(0x0001000a));
    __m128i t = _mm_madd_epi16(_mm_packs_epi32(lo, hi), _mm_set1_epi32(0x00010064));
    t = _mm_madd_epi16(_mm_packs_epi32(t, t), _mm_set1_epi32(0x00012710));
    uint64_t h = (uint64_t)_mm_cvtsi128_si64(t);            /* the two halves' 8-digit values */
    uint64_t big = (h & 0xffffffffu) * 100000000u + (h >> 32);
    unsigned k = 16 - r;
    *n = r;
    *v = (big >> k) * csl_inv5[k];
    return 1;
}
#else
#define CSL_QNUM_SSE2 0
#endif

/* The digit run after a decimal point at f (16 bytes are loaded): 1 with *n its length
 * (0..15) and *v its value, or 0 when all 16 bytes are digits (then the caller declines).
 * kind (CSL_SCAN_*) picks SSE2 (csl_digits_sse2) or SWAR, with the same answers. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline int csl_frac_run(const char *f, int kind, unsigned *n, uint64_t *v)
{
    (void)kind;
#if CSL_QNUM_SSE2
    if (kind == CSL_SCAN_SSE2) return csl_digits_sse2(f, n, v);
#endif
    uint64_t w1, w2;
    memcpy(&w1, f, 8);
    memcpy(&w2, f + 8, 8);
    unsigned r1 = csl_digit_run8(w1);
    if (r1 < 8) {
        *n = r1;
        *v = r1 ? csl_run_value(w1, r1) : 0;
        return 1;
    }
    unsigned r2 = csl_digit_run8(w2);
    if (r2 == 8) return 0;                        /* 16 digits or more */
    *n = 8 + r2;
    *v = csl_eight_digits(w1) * csl_pow10_u64[r2] + (r2 ? csl_run_value(w2, r2) : 0);
    return 1;
}

/* The exponent at *q when there is one ('e' or 'E', an optional sign, one or two digits, as
 * %g writes them): adds it to *e10 and moves *q past it. Returns 0 for an 'e' without a digit
 * after it or with three digits (beyond the shortcut: the caller declines), else 1 (also when
 * there is no exponent: *q and *e10 unchanged). Reads at most 5 bytes from *q. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline int csl_exp_at(const char **q, long *e10)
{
    const char *e = *q;
    if ((*e | 0x20) != 'e') return 1;
    const char *d = e + 1;
    int eneg = *d == '-';
    d += *d == '-' || *d == '+';
    unsigned e0 = (unsigned)(d[0] - '0'), e1 = (unsigned)(d[1] - '0');
    if (e0 >= 10u) return 0;
    long ev = e0;
    *q = d + 1;
    if (e1 < 10u) {
        if ((unsigned)(d[2] - '0') < 10u) return 0;      /* 3 digits: beyond the shortcut */
        ev = ev * 10 + e1;
        *q = d + 2;
    }
    *e10 += eneg ? -ev : ev;
    return 1;
}

/* The number that starts at p, read as far as its grammar goes, without knowing where its
 * field ends: for a row of numbers, the number itself finds the field's end, so the line
 * needs no separate search for its delimiters (the caller checks that the byte returned is
 * the delimiter or the line's end: then [p, returned) was the whole field). The grammar and
 * the exactness rule are csl_quick_num's: [-]digits[.digits][(e|E)[+-]d[d]], at most 7
 * integer digits and 15 after the point, significant digits m <= 2^53 and a decimal exponent
 * within +-22 (Clinger: one correctly rounded multiply or divide, strtod's bits). Returns the
 * byte after the number with *out set, or NULL for anything else (not a number of that
 * shape, not exact by the shortcut, a third exponent digit, or fewer than CSL_QUICK_AT_ROOM
 * bytes before `safe`): then find the field's end and ask csl_quick_num and
 * cs_load_parse_double, which decide. Loads stay below `safe`. `kind` (CSL_SCAN_*, the load's
 * scanner) picks how the fraction's digits are read: SSE2 (csl_digits_sse2) or SWAR, with the
 * same answers (tests run both). Little-endian only (NULL elsewhere). */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline const char *csl_quick_num_at(const char *p, const char *safe, int kind, double *out)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (safe - p < CSL_QUICK_AT_ROOM) return NULL;
    int neg = *p == '-';
    p += neg;
    uint64_t m = (uint64_t)(unsigned char)p[0] - '0';
    if (m >= 10) return NULL;
    const char *q = p + 1;
    unsigned nd = 1;                              /* integer digits */
    if ((unsigned)(*q - '0') < 10u) {             /* more than one: a label of K > 10, ... */
        uint64_t w0;
        memcpy(&w0, p, 8);
        nd = csl_digit_run8(w0);
        if (nd == 8) return NULL;
        m = csl_run_value(w0, nd);
        q = p + nd;
    }
    long e10 = 0;
    if (*q == '.') {                              /* the fraction: its digit run, 16 bytes */
        const char *f = q + 1;
        uint64_t v;
        unsigned n;
        if (!csl_frac_run(f, kind, &n, &v)) return NULL;    /* 16 digits or more */
        if (nd + n > 19) return NULL;             /* m would not fit 64 bits */
        m = m * csl_pow10_u64[n] + v;
        q = f + n;
        e10 = -(long)n;
    }
    if (!csl_exp_at(&q, &e10)) return NULL;       /* e5, e-5, e+05 (as %g writes them) */
    if (m == 0) {
        *out = neg ? -0.0 : 0.0;
        return q;
    }
    double x;
    if (!csl_exact(m, e10, &x)) return NULL;
    *out = neg ? -x : x;
    return q;
#else
    (void)p; (void)safe; (void)kind; (void)out;
    return NULL;
#endif
}

/* Bytes k probabilities in a row must have before the end of the data (counted from the
 * delimiter before the first, or the row's start) for csl_quick_prob_at to read each of them
 * without a bound: a label before them moves at most CSL_QUICK_AT_ROOM bytes on, each
 * probability at most CSL_QUICK_PROB_STEP, and one reads at most CSL_QUICK_AT_ROOM bytes from
 * its start. */
#define CSL_QUICK_PROB_STEP 24
#define CSL_QUICK_PROB_ROOM(k) (2 * (size_t)CSL_QUICK_AT_ROOM + (size_t)(k) * CSL_QUICK_PROB_STEP)

/* csl_quick_num_at for a probability in a row that has CSL_QUICK_PROB_ROOM before the end of
 * the data (the caller checks once a row; no bound here): one integer digit, no sign. The
 * same answer as csl_quick_num_at wherever it answers (tests check it), and NULL for the rest
 * of what that one takes: a sign (a probability's only one is "-0", which the caller's
 * field-bounded parsers then read), two or more integer digits, a zero with an exponent
 * beyond +-22. It reads at most 22 bytes from p and returns at most p + 21. Without the bound, the sign and the integer digits' run, the
 * rows of probabilities parse ~20 % faster (1M x 10, %.12g: 110 -> 88 ms on one core). */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline const char *csl_quick_prob_at(const char *p, int kind, double *out)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t m = (uint64_t)(unsigned char)p[0] - '0';
    if (m >= 10) return NULL;
    const char *q = p + 1;
    long e10 = 0;
    if (*q == '.') {
        const char *f = q + 1;
        uint64_t v;
        unsigned n;
        if (!csl_frac_run(f, kind, &n, &v)) return NULL;    /* 16 digits or more */
        m = m * csl_pow10_u64[n] + v;                       /* 16 digits at most: no overflow */
        q = f + n;
        e10 = -(long)n;
    } else if ((unsigned)(*q - '0') < 10u) {
        return NULL;                                        /* two or more integer digits */
    }
    if (!csl_exp_at(&q, &e10)) return NULL;
    /* m == 0 needs no case of its own: 0 / 10^n and 0 * 10^n are +0 */
    if (!csl_exact(m, e10, out)) return NULL;
    return q;
#else
    (void)p; (void)kind; (void)out;
    return NULL;
#endif
}

#endif
