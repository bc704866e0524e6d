/* Strict decimal conversion for the loader and the statistics reader.
 *
 * glibc strtod costs more than the whole tokeniser, so decimals of at most 19 significant
 * digits are converted here, exactly (what a correctly rounded strtod returns):
 *  - m <= 2^53 and |e| <= 22: m and 10^|e| are exact doubles and one IEEE multiply or divide
 *    rounds correctly (Clinger);
 *  - otherwise, for e within the table of tools/gen/gen_pow5_table.py: the Eisel-Lemire algorithm
 *    (Lemire, "Number parsing at a gigabyte per second", 2021, as fast_float implements it,
 *    which Mushtak and Lemire proved needs no fallback for m < 2^64): one or two 64x128-bit
 *    products with a truncated power of five give the 54 top bits of m * 10^e and whether the
 *    value is exactly halfway (round half to even). The %.17g sums of a statistics file
 *    (m > 2^53) take this path; tests/unit/test_load_num.c checks it bit for bit against strtod.
 * Everything else (more than 19 digits, exponents outside the table) goes to strtod.
 * The grammar is checked here, not by strtod, so hex floats and leading spaces are refused.
 * Digits are read eight at a time where eight are there (little-endian word tests). */
#include "engine/num/num.h"
#include "engine/num/pow5_table.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double pow10_exact[23] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

static int word_is(const char *s, size_t len, const char *w)
{
    size_t n = strlen(w);
    if (len != n) return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (c != w[i]) return 0;
    }
    return 1;
}

static int nonfinite_word(const char *s, size_t len)
{
    if (len && (s[0] == '+' || s[0] == '-')) { s++; len--; }
    return word_is(s, len, "nan") || word_is(s, len, "inf") || word_is(s, len, "infinity");
}

static int slow_convert(const char *s, size_t len, double *out)
{
    char small[128];
    char *buf = len < sizeof small ? small : malloc(len + 1);
    if (!buf) return CSL_NUM_NONNUM;    /* cannot happen in practice; refuse rather than guess */
    memcpy(buf, s, len);
    buf[len] = '\0';
    errno = 0;
    char *end;
    double v = strtod(buf, &end);
    int whole = (size_t)(end - buf) == len;
    if (buf != small) free(buf);
    if (!whole) return CSL_NUM_NONNUM;
    if (!isfinite(v)) return CSL_NUM_NONFINITE;    /* overflow: ERANGE with HUGE_VAL */
    *out = v;                                      /* underflow keeps strtod's tiny value */
    return CSL_NUM_OK;
}

#if defined(__SIZEOF_INT128__) && (defined(__GNUC__) || defined(__clang__))
#define CSL_EISEL_LEMIRE 1
/* floor(q * log2(5)) + q + 63 for |q| <= 64 (fast_float's detail::power; 217706 / 2^16 is
 * log2(10) closely enough over this range), written without a right shift of a negative
 * number. */
static int power2_of(int q)
{
    long v = 217706L * q;
    return (int)(v >= 0 ? v / 65536 : -((-v + 65535) / 65536)) + 63;
}

/* m * 10^e10 rounded to the nearest double, ties to even, for m in [1, 2^64) and e10 in the
 * table's range (the result is then a normal double: no subnormal, no overflow). */
static double eisel_lemire(uint64_t m, int e10)
{
    __extension__ typedef unsigned __int128 u128;
    int lz = __builtin_clzll(m);
    m <<= lz;
    const uint64_t *t = csl_pow5_128[e10 - CSL_POW5_MIN];
    u128 first = (u128)m * t[0];
    uint64_t hi = (uint64_t)(first >> 64), lo = (uint64_t)first;
    if ((hi & 0x1ff) == 0x1ff) {          /* the bits below the 55 kept ones are all ones: the */
        uint64_t add = (uint64_t)(((u128)m * t[1]) >> 64);   /* second word decides */
        lo += add;
        if (add > lo) hi++;
    }
    unsigned upper = (unsigned)(hi >> 63), shift = upper + 9;   /* keep 54 bits: 53 + round */
    uint64_t mant = hi >> shift;
    int p2 = power2_of(e10) + (int)upper - lz + 1023;
    /* exactly halfway with an even result: nothing but zeros was dropped (possible only
     * where 5^e10 fits a word, -4 <= e10 <= 23): round down */
    if (lo <= 1 && e10 >= -4 && e10 <= 23 && (mant & 3) == 1 && (mant << shift) == hi)
        mant &= ~(uint64_t)1;
    mant = (mant + (mant & 1)) >> 1;
    if (mant >= (UINT64_C(2) << 52)) {    /* rounded up to the next power of two */
        mant = UINT64_C(1) << 52;
        p2++;
    }
    uint64_t bits = (mant & ~(UINT64_C(1) << 52)) | ((uint64_t)p2 << 52);
    double v;
    memcpy(&v, &bits, sizeof v);
    return v;
}
#else
#define CSL_EISEL_LEMIRE 0   /* no 128-bit product: strtod does these */
#endif

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define CSL_SWAR_DIGITS 1
/* 1 when the 8 bytes of w (a little-endian load) are all ASCII digits. */
static inline int eight_digits(uint64_t w)
{
    return csl_lt8(w ^ UINT64_C(0x3030303030303030), 10) == UINT64_C(0x8080808080808080);
}

/* The value of 8 ASCII digits (eight_digits(w)), first byte most significant: pairs, then
 * quadruples, then the two halves, each step one multiply (fast_float's
 * parse_eight_digits_unrolled). */
static inline uint64_t eight_digits_value(uint64_t w)
{
    w -= UINT64_C(0x3030303030303030);
    w = (w * 10) + (w >> 8);
    w = (((w & UINT64_C(0x000000ff000000ff)) * UINT64_C(0x000f424000000064)) +
         (((w >> 16) & UINT64_C(0x000000ff000000ff)) * UINT64_C(0x0000271000000001))) >> 32;
    return w & 0xffffffffu;
}
#else
#define CSL_SWAR_DIGITS 0
#endif

/* A decimal's digits as read: value m * 10^e10 when nothing was lost. */
typedef struct decimal {
    uint64_t m;
    long e10;
    int neg;
    int lost;              /* a nonzero digit did not fit in m (more than 19 significant) */
    size_t digits;         /* digits in the mantissa (0: not a number) */
    size_t end;            /* bytes of the grammar [+-]digits[.digits][e[+-]digits] read */
} decimal;

/* Reads the grammar from s as far as it goes (at most len bytes). An exponent marker without
 * digits is not part of it (end stops before the 'e'). */
static void scan(const char *s, size_t len, decimal *d)
{
    size_t i = 0;
    d->m = 0;
    d->e10 = 0;
    d->neg = 0;
    d->lost = 0;
    d->digits = 0;
    if (len && (s[0] == '+' || s[0] == '-')) { d->neg = s[0] == '-'; i = 1; }
    uint64_t m = 0;
    int nd = 0;            /* significant digits held in m (at most 19) */
    long e10 = 0;
    size_t digits = 0;
    while (i < len && s[i] >= '0' && s[i] <= '9') {
        unsigned dg = (unsigned)(s[i] - '0');
        digits++;
        if (m == 0 && dg == 0) {
            /* leading zero */
        } else if (nd < 19) {
            m = m * 10 + dg;
            nd++;
        } else {
            e10++;
            if (dg) d->lost = 1;
        }
        i++;
    }
    if (i < len && s[i] == '.') {
        i++;
        for (;;) {
#if CSL_SWAR_DIGITS
            if (m != 0 && nd <= 11 && len - i >= 8) {
                uint64_t w;
                memcpy(&w, s + i, 8);
                if (eight_digits(w)) {
                    m = m * 100000000u + eight_digits_value(w);
                    nd += 8;
                    e10 -= 8;
                    digits += 8;
                    i += 8;
                    continue;
                }
            }
#endif
            if (i >= len || s[i] < '0' || s[i] > '9') break;
            unsigned dg = (unsigned)(s[i] - '0');
            digits++;
            if (m == 0 && dg == 0) {
                e10--;
            } else if (nd < 19) {
                m = m * 10 + dg;
                nd++;
                e10--;
            } else if (dg) {
                d->lost = 1;
            }
            i++;
        }
    }
    d->digits = digits;
    if (digits && i < len && (s[i] == 'e' || s[i] == 'E')) {
        size_t j = i + 1;
        int eneg = 0;
        if (j < len && (s[j] == '+' || s[j] == '-')) { eneg = s[j] == '-'; j++; }
        size_t start = j;
        long ev = 0;
        while (j < len && s[j] >= '0' && s[j] <= '9') {
            if (ev < 100000) ev = ev * 10 + (s[j] - '0');
            j++;
        }
        if (j > start) {
            e10 += eneg ? -ev : ev;
            i = j;
        }
    }
    d->m = m;
    d->e10 = e10;
    d->end = i;
}

/* The value of a scanned decimal whose text is s[0..d->end). */
static int convert(const decimal *d, const char *s, double *out)
{
    if (d->m == 0) {
        *out = d->neg ? -0.0 : 0.0;
        return CSL_NUM_OK;
    }
    double v;
    if (!d->lost && d->m <= (UINT64_C(1) << 53) && d->e10 >= -22 && d->e10 <= 22) {
        v = (double)d->m;
        v = d->e10 < 0 ? v / pow10_exact[-d->e10] : v * pow10_exact[d->e10];
#if CSL_EISEL_LEMIRE
    } else if (!d->lost && d->e10 >= CSL_POW5_MIN && d->e10 <= CSL_POW5_MAX) {
        v = eisel_lemire(d->m, (int)d->e10);
#endif
    } else {
        return slow_convert(s, d->end, out);
    }
    *out = d->neg ? -v : v;
    return CSL_NUM_OK;
}

int cs_load_parse_double(const char *s, size_t len, double *out)
{
    if (len == 0) return CSL_NUM_EMPTY;
    decimal d;
    scan(s, len, &d);
    if (d.digits == 0)
        return nonfinite_word(s, len) ? CSL_NUM_NONFINITE : CSL_NUM_NONNUM;
    if (d.end != len) return CSL_NUM_NONNUM;
    return convert(&d, s, out);
}

size_t cs_load_parse_double_prefix(const char *s, size_t len, double *out)
{
    decimal d;
    scan(s, len, &d);
    if (d.digits == 0 || convert(&d, s, out) != CSL_NUM_OK) return 0;
    return d.end;
}
