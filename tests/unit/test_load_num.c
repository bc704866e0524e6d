/* The loader's decimal parser must give exactly glibc strtod's bits (strtod is the independent
 * reference here), and refuse what is not a plain decimal. */
#include "support/cs_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/load/load_internal.h"

static void expect_same_as_strtod(const char *s)
{
    double got = -12345.0;
    int r = cs_load_parse_double(s, strlen(s), &got);
    double want = strtod(s, NULL);
    if (r != CSL_NUM_OK) fail_msg("'%s' refused (%d)", s, r);
    if (memcmp(&got, &want, sizeof got) != 0)
        fail_msg("'%s': got %.17g (%a), strtod %.17g (%a)", s, got, got, want, want);
}

static void test_edge_values(void **state)
{
    (void)state;
    static const char *cases[] = {
        "0", "-0", "+0", "0.0", "-0.0", "1", "1.", ".5", "0.5", "1.0", "0.1", "0.2", "0.3",
        "0.7", "0.333", "0.3333333333333333", "0.1234567890123456789", "9007199254740992",
        "9007199254740993", "9007199254740991", "1e22", "1e23", "1e-22", "1e-23", "123456789e-22",
        "4.9e-324", "2.2250738585072014e-308", "2.2250738585072011e-308", "1.7976931348623157e308",
        "1e-400", "0.000001", "1.5e-05", "5e-324", "00000000000000000000001.5",
        "0.00000000000000000000000000000001", "12345678901234567890123", "3.14159265358979323846",
        "1E5", "1e+5", "-1.25e-3", "0.99999999999999999999", "1.00000000000000000001",
        "7.038531e-26", "0.1000000000000000055511151231257827", "123.456e-10",
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) expect_same_as_strtod(cases[i]);
}

static unsigned long long rng_state = 88172645463325252ull;
static unsigned long long xorshift(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void test_random_values(void **state)
{
    (void)state;
    char buf[64];
    static const int prec[] = {1, 3, 6, 9, 12, 15, 17, 20};
    for (int i = 0; i < 200000; i++) {
        unsigned long long r = xorshift();
        double x;
        switch (i % 4) {
        case 0: x = (double)(r >> 11) / 9007199254740992.0; break;            /* [0,1) */
        case 1: x = ldexp((double)(r >> 11), (int)(r % 200) - 150); break;      /* wide range */
        case 2: x = (double)(r % 1000000) / 1e6; break;                          /* 6 decimals */
        default: memcpy(&x, &r, sizeof x); if (!isfinite(x)) x = 1.5; break;     /* any bits */
        }
        int pr = prec[(i / 4) % 8];
        switch ((i / 32) % 3) {
        case 0: snprintf(buf, sizeof buf, "%.*g", pr, x); break;
        case 1: snprintf(buf, sizeof buf, "%.*e", pr, x); break;
        default: snprintf(buf, sizeof buf, "%.*f", pr, fabs(x) < 1e6 ? x : 0.5); break;
        }
        expect_same_as_strtod(buf);
    }
    /* short decimal digit strings with varied exponents, the shortcut's territory and edges */
    for (int i = 0; i < 200000; i++) {
        unsigned long long r = xorshift();
        int digits = 1 + (int)(r % 19);
        unsigned long long m = xorshift() % 10000000000000000000ull;
        int e = (int)((xorshift() % 61)) - 30;
        unsigned long long div = 1;
        for (int j = digits; j < 19; j++) div *= 10;
        char ds[32];
        int n = snprintf(ds, sizeof ds, "%llu", m / div);
        int dot = (int)(xorshift() % (unsigned long long)(n + 1));
        snprintf(buf, sizeof buf, "%.*s.%se%d", dot, ds, ds + dot, e);
        expect_same_as_strtod(buf);
    }
}

/* Integers exactly halfway between two doubles (and their neighbours), 16 to 19 digits: the
 * exact long-double shortcut must hand the midpoints to strtod (round half to even) and get
 * the neighbours right itself. Also scaled by powers of ten, as %.17g sums are written. */
static void test_midpoints(void **state)
{
    (void)state;
    char buf[64];
    for (int i = 0; i < 100000; i++) {
        unsigned long long r = xorshift();
        int shift = (int)(r % 11);                            /* spacing 2^(1+shift) */
        unsigned long long lo = (1ull << (53 + shift)) + ((xorshift() >> 12) << (1 + shift));
        unsigned long long mid = lo + (1ull << shift);        /* halfway to the next double */
        for (int d = -1; d <= 1; d++) {
            snprintf(buf, sizeof buf, "%llu", mid + (unsigned long long)d);
            expect_same_as_strtod(buf);
            snprintf(buf, sizeof buf, "%llue-%d", mid + (unsigned long long)d, (int)(r % 28));
            expect_same_as_strtod(buf);
        }
    }
}

/* The statistics files' doubles: %.17g (and 16, 18, 19 significant digits) of random doubles
 * over the whole exponent range and densely over [1e-30, 1e30], where the Eisel-Lemire path
 * converts them; also the edges of its power table (|e| = 64, 65) and subnormals (strtod). */
static void test_seventeen_digits(void **state)
{
    (void)state;
    char buf[64];
    static const int prec[] = {17, 16, 18, 19};
    for (int i = 0; i < 400000; i++) {
        unsigned long long r = xorshift();
        double x;
        if (i % 2) {
            memcpy(&x, &r, sizeof x);
            if (!isfinite(x)) x = 0.75;
        } else {
            x = ldexp(1.0 + (double)(r >> 12) * 0x1p-52, (int)(xorshift() % 200) - 100);
        }
        snprintf(buf, sizeof buf, "%.*g", prec[(i / 2) % 4], x);
        expect_same_as_strtod(buf);
    }
    static const char *edges[] = {
        "1e-64", "1e64", "1e-65", "1e65", "18446744073709551615e-64", "18446744073709551615e64",
        "1844674407370955161e-64", "1844674407370955161e64", "9999999999999999999e-64",
        "9999999999999999999e-65", "1e-83", "9999999999999999999e-83", "1.7976931348623157e308",
        "1.7976931348623158e308", "4.9406564584124654e-324", "2.4703282292062328e-324",
        "2.2250738585072009e-308", "2.2250738585072014e-308", "1e-310", "1.99999999999999999",
        "9007199254740991.9", "9007199254740993.0", "0.99999999999999999", "99999999999999999e-17",
        "1.0000000000000000002", "0.30000000000000004", "0.1", "792.0084573874957",
        "0.67892770345724784", "0.00012345678901234567", "123456789012345678e-27",
    };
    for (size_t i = 0; i < sizeof edges / sizeof *edges; i++) expect_same_as_strtod(edges[i]);
}

/* Decimals exactly halfway between two doubles, m * 10^q with m < 2^64 (possible only for
 * -4 <= q <= 23, where 5^|q| fits the 54-bit odd significand), and their neighbours m +- 1:
 * round half to even must come out of the Eisel-Lemire path itself. */
static void test_decimal_midpoints(void **state)
{
    (void)state;
    char buf[64];
    for (int i = 0; i < 100000; i++) {
        int q = (int)(xorshift() % 28) - 4;       /* -4 .. 23 */
        unsigned long long p5 = 1;
        for (int j = 0; j < (q < 0 ? -q : q); j++) p5 *= 5;
        unsigned long long m;
        if (q >= 0) {
            /* u * 5^q odd with 54 bits, m = u * 2^s: m * 10^q = (u * 5^q) * 2^(q + s) */
            unsigned long long lo = (1ull << 53) / p5 + 1, hi = ((1ull << 54) - 1) / p5;
            unsigned long long u = lo + xorshift() % (hi - lo + 1);
            if (u % 2 == 0) u = u + 1 <= hi ? u + 1 : u - 1;
            m = u;
            /* past 2^53 (else the one-division shortcut takes it), within 19 digits */
            while (m <= (1ull << 53) || (m < 5000000000000000000ull && xorshift() % 2)) m <<= 1;
        } else {
            /* u odd with 54 bits, m = u * 5^-q: m * 10^q = u / 2^-q */
            unsigned long long u = ((1ull << 53) + xorshift() % (1ull << 53)) | 1ull;
            m = u * p5;
        }
        for (int d = -1; d <= 1; d++) {
            snprintf(buf, sizeof buf, "%llue%d", m + (unsigned long long)d, q);
            expect_same_as_strtod(buf);
        }
    }
}

/* Eight digits are read at a time: a non-digit at any place of the fraction, whatever its
 * byte, ends the number there (strict: refused; prefix: the length up to it). */
static void test_digit_words(void **state)
{
    (void)state;
    char buf[64];
    double v, w;
    for (int c = 1; c < 256; c++) {
        if (c >= '0' && c <= '9') continue;
        for (int at = 2; at < 22; at++) {
            memcpy(buf, "0.12345678901234567890123", 26);
            buf[at] = (char)c;
            if (cs_load_parse_double(buf, strlen(buf), &v) == CSL_NUM_OK && c != 'e' && c != 'E')
                fail_msg("byte %d at %d: accepted '%s'", c, at, buf);
            size_t n = cs_load_parse_double_prefix(buf, 25, &v);
            char *end;
            w = strtod(buf, &end);    /* the same prefix, as strtod reads it */
            if (c == 'e' || c == 'E' || c == '.' || c == '+' || c == '-') continue;
            if (n != (size_t)(end - buf) || memcmp(&v, &w, sizeof v) != 0)
                fail_msg("byte %d at %d: prefix %zu (%.17g), strtod %td (%.17g)", c, at, n, v,
                         end - buf, w);
        }
    }
    /* the prefix of a record's field: the number, then the separator */
    assert_int_equal(cs_load_parse_double_prefix("0.67892770345724784,2\n", 22, &v), 19);
    assert_true(v == 0.67892770345724784);
    assert_int_equal(cs_load_parse_double_prefix("1e5,", 4, &v), 3);
    assert_int_equal(cs_load_parse_double_prefix("1e,", 3, &v), 1);      /* 'e' not taken */
    assert_int_equal(cs_load_parse_double_prefix("nan,", 4, &v), 0);
    assert_int_equal(cs_load_parse_double_prefix("1e999,", 6, &v), 0);  /* not finite */
    assert_int_equal(cs_load_parse_double_prefix(",", 1, &v), 0);
}

static void test_refusals(void **state)
{
    (void)state;
    double v;
    struct { const char *s; int want; } cases[] = {
        {"", CSL_NUM_EMPTY}, {"abc", CSL_NUM_NONNUM}, {"0x1p-2", CSL_NUM_NONNUM},
        {" 0.5", CSL_NUM_NONNUM}, {"0.5 ", CSL_NUM_NONNUM}, {"1e", CSL_NUM_NONNUM},
        {"1e+", CSL_NUM_NONNUM}, {".", CSL_NUM_NONNUM}, {"-", CSL_NUM_NONNUM},
        {"1.2.3", CSL_NUM_NONNUM}, {"1,5", CSL_NUM_NONNUM}, {"nan", CSL_NUM_NONFINITE},
        {"NaN", CSL_NUM_NONFINITE}, {"-inf", CSL_NUM_NONFINITE}, {"Infinity", CSL_NUM_NONFINITE},
        {"1e400", CSL_NUM_NONFINITE}, {"-1e309", CSL_NUM_NONFINITE}, {"nanx", CSL_NUM_NONNUM},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int r = cs_load_parse_double(cases[i].s, strlen(cases[i].s), &v);
        if (r != cases[i].want) fail_msg("'%s': got %d, want %d", cases[i].s, r, cases[i].want);
    }
    /* the length bounds the field: a NUL-free prefix of a longer buffer */
    assert_int_equal(cs_load_parse_double("0.25,0.75", 4, &v), CSL_NUM_OK);
    assert_double_near(v, 0.25, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_edge_values),
        cmocka_unit_test(test_random_values),
        cmocka_unit_test(test_midpoints),
        cmocka_unit_test(test_seventeen_digits),
        cmocka_unit_test(test_decimal_midpoints),
        cmocka_unit_test(test_digit_words),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
