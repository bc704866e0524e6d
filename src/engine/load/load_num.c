/* Strict decimal conversion for the loader.
 *
 * glibc strtod costs more than the whole tokeniser, so short decimals take an exact shortcut:
 * when the significant digits form an integer m <= 2^53 and the decimal exponent e is within
 * +-22, both m and 10^|e| are exact doubles and one IEEE multiply or divide rounds correctly,
 * which is what a correctly rounded strtod returns. Everything else goes to strtod.
 * The grammar is checked here, not by strtod, so hex floats and leading spaces are refused. */
#include "engine/load/load_internal.h"

#include <errno.h>
#include <float.h>
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

/* The 17-digit doubles of a statistics file (%.17g) have m > 2^53, past the shortcut above.
 * On x87's 64-bit-significand long double, m < 2^64 and 10^e (|e| <= 27: 5^27 < 2^64) are
 * exact, and one multiply or divide rounds x correctly to 64 bits. Rounding that again to 53
 * bits is correct unless the 64-bit result lies exactly halfway between two doubles (its low 11
 * bits 0x400): the exact x is on the same side of every double midpoint as its rounding
 * otherwise. That case, and other platforms, go to strtod. Returns 1 when *out is set. */
static int extended_convert(uint64_t m, long e10, double *out)
{
#if LDBL_MANT_DIG == 64 && (defined(__x86_64__) || defined(__i386__))
    static const long double pow10_ext[28] = {
        1e0L, 1e1L, 1e2L, 1e3L, 1e4L, 1e5L, 1e6L, 1e7L, 1e8L, 1e9L, 1e10L, 1e11L, 1e12L, 1e13L,
        1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L, 1e20L, 1e21L, 1e22L, 1e23L, 1e24L, 1e25L,
        1e26L, 1e27L,
    };
    if (e10 < -27 || e10 > 27) return 0;
    long double x = e10 < 0 ? (long double)m / pow10_ext[-e10] : (long double)m * pow10_ext[e10];
    uint64_t sig;
    memcpy(&sig, &x, sizeof sig);   /* x86 extended: the explicit 64-bit significand first */
    if ((sig & 0x7ff) == 0x400) return 0;
    *out = (double)x;
    return 1;
#else
    (void)m; (void)e10; (void)out;
    return 0;
#endif
}

int cs_load_parse_double(const char *s, size_t len, double *out)
{
    if (len == 0) return CSL_NUM_EMPTY;
    size_t i = 0;
    int neg = 0;
    if (s[0] == '+' || s[0] == '-') { neg = s[0] == '-'; i = 1; }

    uint64_t m = 0;
    int nd = 0;            /* significant digits held in m (at most 19) */
    int lost = 0;          /* a nonzero digit did not fit in m */
    long e10 = 0;
    size_t digits = 0;
    while (i < len && s[i] >= '0' && s[i] <= '9') {
        unsigned d = (unsigned)(s[i] - '0');
        digits++;
        if (m == 0 && d == 0) {
            /* leading zero */
        } else if (nd < 19) {
            m = m * 10 + d;
            nd++;
        } else {
            e10++;
            if (d) lost = 1;
        }
        i++;
    }
    if (i < len && s[i] == '.') {
        i++;
        while (i < len && s[i] >= '0' && s[i] <= '9') {
            unsigned d = (unsigned)(s[i] - '0');
            digits++;
            if (m == 0 && d == 0) {
                e10--;
            } else if (nd < 19) {
                m = m * 10 + d;
                nd++;
                e10--;
            } else if (d) {
                lost = 1;
            }
            i++;
        }
    }
    if (digits == 0)
        return nonfinite_word(s, len) ? CSL_NUM_NONFINITE : CSL_NUM_NONNUM;
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        int eneg = 0;
        if (i < len && (s[i] == '+' || s[i] == '-')) { eneg = s[i] == '-'; i++; }
        size_t start = i;
        long ev = 0;
        while (i < len && s[i] >= '0' && s[i] <= '9') {
            if (ev < 100000) ev = ev * 10 + (s[i] - '0');
            i++;
        }
        if (i == start) return CSL_NUM_NONNUM;
        e10 += eneg ? -ev : ev;
    }
    if (i != len) return CSL_NUM_NONNUM;

    if (m == 0) {
        *out = neg ? -0.0 : 0.0;
        return CSL_NUM_OK;
    }
    if (!lost && m <= (UINT64_C(1) << 53) && e10 >= -22 && e10 <= 22) {
        double v = (double)m;
        v = e10 < 0 ? v / pow10_exact[-e10] : v * pow10_exact[e10];
        *out = neg ? -v : v;
        return CSL_NUM_OK;
    }
    double v;
    if (!lost && extended_convert(m, e10, &v)) {
        *out = neg ? -v : v;
        return CSL_NUM_OK;
    }
    return slow_convert(s, len, out);
}
