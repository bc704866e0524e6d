/* The fast path's byte scanner and number parser (load_scan.h, load_qnum.h), each against an
 * independent reference, and whole loads of random files with the awkward features in them
 * through the libcsv path and the fast path with both scanners:
 *  - the SSE2 and the SWAR structural masks equal a byte-by-byte mask, at every offset, and at
 *    the end of the data (no load past it);
 *  - the vector newline count and its long-line rule equal a byte-by-byte count;
 *  - the quick number parser gives strtod's bits whenever it answers, answers for the numbers
 *    a %g / %f writer produces, and declines what is not a plain decimal;
 *  - random files (fields ending exactly at 16- and 64-byte boundaries, CRLF, a last line
 *    without a line end, empty fields, long lines, bad values with their messages, blank
 *    lines) load bit for bit and message for message the same way on every path. */
#include "support/cs_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/load/load_internal.h"
#include "engine/load/load_qnum.h"
#include "engine/load/load_scan.h"

static unsigned long long rs = 0x9E3779B97F4A7C15ull;
static unsigned long long rnd(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return rs;
}

/* ---- structural masks ------------------------------------------------------------------- */

static uint64_t naive_mask(const char *w, const char *end, unsigned char delim)
{
    uint64_t m = 0;
    for (int i = 0; i < 64 && w + i < end; i++) {
        unsigned char b = (unsigned char)w[i];
        if (b == delim || b == '\n' || b == '\r' || b == '"') m |= (uint64_t)1 << i;
    }
    return m;
}

static void test_masks_agree(void **state)
{
    (void)state;
    static const char alphabet[] = ",;\t\n\r\"0123456789.e-x \x80\xff\x2c\x0a";
    enum { N = 4096 };
    /* the data sits at the very end of a heap block, so a load past it would be caught by ASan */
    for (int round = 0; round < 40; round++) {
        size_t len = 1 + (size_t)(rnd() % N);
        char *buf = malloc(len);
        assert_non_null(buf);
        for (size_t i = 0; i < len; i++)
            buf[i] = rnd() % 3 ? alphabet[rnd() % (sizeof alphabet - 1)] : (char)(rnd() & 0xff);
        unsigned char delim = ",;\t|"[round % 4];
        for (size_t off = 0; off < len; off += 1 + rnd() % 7) {
            uint64_t want = naive_mask(buf + off, buf + len, delim);
            for (int kind = CSL_SCAN_SWAR; kind <= CSL_SCAN_SSE2; kind++) {
                csl_scan s = {kind, delim, buf + len, NULL, 0};
                if (csl_scan_mask(&s, buf + off) != want)
                    fail_msg("kind %d delim %d offset %zu of %zu: mask differs", kind, delim, off, len);
            }
        }
        /* walking the structural bytes one by one gives every one of them, in order */
        for (int kind = CSL_SCAN_SWAR; kind <= CSL_SCAN_SSE2; kind++) {
            csl_scan s = {kind, delim, buf + len, NULL, 0};
            csl_scan_at(&s, buf);
            const char *q, *want = buf;
            while ((q = csl_scan_next(&s, buf + len))) {
                while (want < q) {
                    unsigned char b = (unsigned char)*want;
                    assert_false(b == delim || b == '\n' || b == '\r' || b == '"');
                    want++;
                }
                assert_ptr_equal(q, want);
                want++;
            }
            for (; want < buf + len; want++) {
                unsigned char b = (unsigned char)*want;
                assert_false(b == delim || b == '\n' || b == '\r' || b == '"');
            }
        }
        free(buf);
    }
}

/* ---- counting a byte, and plain header text --------------------------------------------- */

/* csl_count_byte and csl_plain_text with both kinds against a look at every byte, from every
 * offset to every end (the SSE2 counters are summed every 255 steps: buffers past 4080 bytes
 * cross that), the data at the very end of a heap block so ASan sees a load past it. */
static void test_count_and_plain_text_agree(void **state)
{
    (void)state;
    static const char alphabet[] = ", ;\t\n\r\"\x7f\x1f\x20\x80\xffp_01";
    for (int round = 0; round < 24; round++) {
        size_t len = 1 + (size_t)(rnd() % (round < 4 ? 9000 : 300));
        char *buf = malloc(len);
        assert_non_null(buf);
        int sparse = round % 3;        /* 0: any byte; else mostly plain name bytes */
        for (size_t i = 0; i < len; i++) {
            unsigned long long r = rnd();
            buf[i] = sparse && r % 40 ? "p_0123456789 x,"[r % 15]
                                      : alphabet[(r >> 8) % (sizeof alphabet - 1)];
        }
        unsigned char b = ",;\t\""[round % 4];
        for (size_t off = 0; off < len; off += 1 + rnd() % 13) {
            size_t end = off + (size_t)(rnd() % (len - off + 1));
            size_t want = 0;
            for (size_t i = off; i < end; i++) want += (unsigned char)buf[i] == b;
            const char *stop = buf + end;
            int want_nb = 0;
            for (const char *q = buf + off; q < buf + end; q++) {
                unsigned char c = (unsigned char)*q;
                if (c < 0x20 || c == 0x7f || c == '"') { stop = q; break; }
                if (c != ' ') want_nb = 1;
            }
            for (int kind = CSL_SCAN_SWAR; kind <= CSL_SCAN_SSE2; kind++) {
                size_t got = csl_count_byte(kind, buf + off, buf + end, b);
                if (got != want)
                    fail_msg("kind %d byte %d [%zu, %zu): %zu counted, %zu there", kind, b, off, end, got, want);
                int nb = 0;
                assert_ptr_equal(csl_plain_text(kind, buf + off, buf + end, &nb), stop);
                assert_int_equal(nb, want_nb);
                nb = 1;                                 /* only ever set, never cleared */
                csl_plain_text(kind, buf + off, buf + end, &nb);
                assert_int_equal(nb, 1);
            }
        }
        free(buf);
    }
    /* nothing but the byte: every SSE2 counter reaches 255 before it is summed */
    enum { ALL = 16 * 255 * 3 + 21 };
    char *buf = malloc(ALL);
    assert_non_null(buf);
    memset(buf, ',', ALL);
    for (int kind = CSL_SCAN_SWAR; kind <= CSL_SCAN_SSE2; kind++)
        assert_int_equal(csl_count_byte(kind, buf, buf + ALL, ','), ALL);
    free(buf);
}

/* ---- newline count and the long-line rule ------------------------------------------------ */

static size_t naive_count(const char *p, const char *e, const char **start, size_t line_max, int *bail)
{
    size_t n = 0;
    for (; p < e; p++) {
        if (*p != '\n') continue;
        if ((size_t)(p - *start) >= line_max) { *bail = 1; return n; }
        n++;
        *start = p + 1;
    }
    return n;
}

static void test_newline_count_agrees(void **state)
{
    (void)state;
    for (int round = 0; round < 300; round++) {
        size_t len = (size_t)(rnd() % 3000);
        char *buf = malloc(len + 1);
        assert_non_null(buf);
        size_t every = 1 + (size_t)(rnd() % 200);
        for (size_t i = 0; i < len; i++) buf[i] = rnd() % every ? 'a' : '\n';
        size_t line_max = 1 + (size_t)(rnd() % 300);
        const char *s0 = buf;
        int b0 = 0;
        size_t want = naive_count(buf, buf + len, &s0, line_max, &b0);
        if (!b0 && (size_t)(buf + len - s0) > line_max) b0 = 1;
        for (int kind = CSL_SCAN_SWAR; kind <= CSL_SCAN_SSE2; kind++) {
            const char *s1 = buf;
            int b1 = 0;
            /* in two windows, as count_chunk feeds it */
            size_t cut = len ? (size_t)(rnd() % len) : 0;
            size_t got = csl_count_lf(kind, buf, buf + cut, &s1, line_max, &b1);
            if (!b1) got += csl_count_lf(kind, buf + cut, buf + len, &s1, line_max, &b1);
            if (!b1 && (size_t)(buf + len - s1) > line_max) b1 = 1;
            assert_int_equal(b0, b1);
            if (!b0) {
                assert_int_equal(want, got);
                assert_ptr_equal(s0, s1);
            }
        }
        free(buf);
    }
}

/* ---- the quick number parser ------------------------------------------------------------- */

/* When the quick parser answers, it answers strtod's bits; returns whether it answered. The text
 * is parsed twice: at the end of a heap block with nothing loadable after it (the loads are
 * checked against `safe`, and ASan sees any past it), and as a field followed by a delimiter
 * and digits, with room to load (the straight path: a digit run must stop at the field's end).
 * Both must give the same answer. */
static int quick_one(const char *s, int room, double *got)
{
    size_t n = strlen(s);
    static const char tail[] = ",99999999999999999999999999999999";
    char *buf = malloc(n + sizeof tail);
    assert_non_null(buf);
    memcpy(buf, s, n);
    memcpy(buf + n, tail, sizeof tail);
    int ok = csl_quick_num(buf, buf + n, room ? buf + n + sizeof tail - 1 : buf + n, got);
    free(buf);
    return ok;
}

static int quick_vs_strtod(const char *s)
{
    size_t n = strlen(s);
    char *buf = malloc(n + 1);
    assert_non_null(buf);
    memcpy(buf, s, n + 1);
    double got, got2;
    int ok = csl_quick_num(buf, buf + n, buf + n, &got);
    int ok2 = quick_one(s, 1, &got2);
    if (ok != ok2) fail_msg("'%s': answered %d without room to load, %d with", s, ok, ok2);
    if (ok && memcmp(&got, &got2, sizeof got) != 0) fail_msg("'%s': two answers", s);
    if (ok) {
        char *end;
        double want = strtod(buf, &end);
        if (end != buf + n) fail_msg("'%s': quick parser took what strtod does not", s);
        if (memcmp(&got, &want, sizeof got) != 0)
            fail_msg("'%s': quick %.17g (%a), strtod %.17g (%a)", s, got, got, want, want);
        /* and what the checker's parser says */
        double chk;
        assert_int_equal(cs_load_parse_double(buf, n, &chk), CSL_NUM_OK);
        assert_memory_equal(&chk, &got, sizeof got);
    }
    free(buf);
    return ok;
}

static void test_quick_number_edges(void **state)
{
    (void)state;
    static const char *taken[] = {
        "0", "-0", "0.0", "-0.0", "1", "1.", ".5", "-.5", "0.5", "1.0", "0.1", "0.2", "0.3", "0.7",
        "9007199254740992", "0.692024788668", "7.22441884735e-06", "1e22", "1e-22", "1E5", "1e+5",
        "1e05", "1e-05", "-1.25e-3", "00.5", "0.000137904786283", "0.00000722441884735",
        "12.5", "123456789012.5", "0.1234567890123456", "0.12345678", "0.123456789",
        "0.1234567", "5.e3", "1.5e-21", "3.0e0",
        /* leading zeros of the fraction are digits of the run (15 fit the straight path, 16 or
         * more take the general one, which drops them) */
        "0.000123456789012", "-0.000123456789012", "0.0001234567890123", "0.000000000000001",
        "0.0000000000000001", "0.000000000000000", "0.0000000000000000", "0.00000000",
        "0.0000000", "0.00000000e-05", "0.00012345678e-05", "9.00000000000000", "0.00000001",
    };
    for (size_t i = 0; i < sizeof taken / sizeof *taken; i++)
        if (!quick_vs_strtod(taken[i])) fail_msg("'%s' not taken by the quick parser", taken[i]);
    /* declined: not a plain decimal, or not exact by the shortcut (the checker's parser then
     * decides, with its own tests in test_load_num.c) */
    static const char *declined[] = {
        "", "-", ".", "-.", "+1", " 1", "1 ", "e5", "1e", "1e+", "1e123", "1e-100", "0x10",
        "nan", "inf", "1.2.3", "1..2", "1,5", "9007199254740993", "1e23", "1.5e-23",
        "12345678901234567890", "0.12345678901234567890", "1-2", "--1", "1e5e5", "1.5ee5",
        "12e", "0.5e", "1e-", "0.99999999999999989",
    };
    for (size_t i = 0; i < sizeof declined / sizeof *declined; i++)
        if (quick_vs_strtod(declined[i])) fail_msg("'%s' taken by the quick parser", declined[i]);
}

static void test_quick_number_random(void **state)
{
    (void)state;
    char buf[80];
    size_t tries = 0, taken = 0, common = 0, common_taken = 0;
    for (int i = 0; i < 400000; i++) {
        unsigned long long r = rnd();
        double x;
        switch (i % 5) {
        case 0: x = (double)(r >> 11) / 9007199254740992.0; break;                 /* [0,1) */
        case 1: x = ldexp((double)(r >> 11), (int)(r % 120) - 100); break;           /* wide */
        case 2: x = (double)(r % 1000000) / 1e6; break;
        case 3: x = exp(-(double)(r % 4000) / 100.0); break;                       /* tiny probs */
        default: x = ((double)(r >> 11) / 9007199254740992.0 - 0.5) * 1e4; break;
        }
        int prec = 1 + (int)(rnd() % 17), style = (int)(rnd() % 4);
        switch (style) {
        case 0: snprintf(buf, sizeof buf, "%.*g", prec, x); break;
        case 1: snprintf(buf, sizeof buf, "%.*e", prec, x); break;
        case 2: snprintf(buf, sizeof buf, "%.*f", prec, x); break;
        default: snprintf(buf, sizeof buf, "%.*E", prec, x); break;
        }
        tries++;
        int ok = quick_vs_strtod(buf);
        taken += (size_t)ok;
        /* what prediction files hold: %.12g or fewer digits of a probability >= 1e-9 */
        if (style == 0 && prec <= 12 && x >= 1e-9 && x <= 1.0) {
            common++;
            common_taken += (size_t)ok;
        }
    }
    /* every %.12g probability down to 1e-9 is exact by the shortcut: the quick parser takes all */
    assert_true(common > 10000);
    assert_int_equal(common, common_taken);
    assert_true(taken > tries / 2);
}

/* csl_quick_num_at on s followed by `term` and room to load: when it answers, it read exactly
 * the number (the byte it returns is the terminator, for the terminators that end a field)
 * and answered strtod's bits for it, and csl_quick_num took the same field with the same
 * bits; a prefix it reads before any other byte is itself a number with strtod's bits.
 * Returns whether it answered. */
static int quick_at_one(const char *s, char term)
{
    size_t n = strlen(s);
    char *buf = malloc(n + 1 + CSL_QUICK_AT_ROOM);
    assert_non_null(buf);
    memcpy(buf, s, n);
    buf[n] = term;
    memset(buf + n + 1, '7', CSL_QUICK_AT_ROOM);     /* digits after: the run must stop */
    double got, got2;
    const char *q = csl_quick_num_at(buf, buf + n + 1 + CSL_QUICK_AT_ROOM, CSL_SCAN_SSE2, &got);
    /* the portable digit run (SWAR) gives the same answer as the SSE2 one */
    const char *q2 = csl_quick_num_at(buf, buf + n + 1 + CSL_QUICK_AT_ROOM, CSL_SCAN_SWAR, &got2);
    if (q != q2) fail_msg("'%s' + '%c': SSE2 and SWAR stop at different bytes", s, term);
    if (q && memcmp(&got, &got2, sizeof got) != 0)
        fail_msg("'%s' + '%c': SSE2 %a, SWAR %a", s, term, got, got2);
    if (q) {
        size_t used = (size_t)(q - buf);
        char *t = malloc(used + 1);
        assert_non_null(t);
        memcpy(t, buf, used);
        t[used] = '\0';
        char *end;
        double want = strtod(t, &end);
        if (end != t + used) fail_msg("'%s' + '%c': took '%s', which strtod does not", s, term, t);
        if (memcmp(&got, &want, sizeof got) != 0)
            fail_msg("'%s' + '%c': %.17g (%a), strtod %.17g (%a)", s, term, got, got, want, want);
        if (term == ',' || term == '\n' || term == '\r') {
            if (used != n) fail_msg("'%s' + '%c': stopped after %zu bytes", s, term, used);
            double f;
            assert_int_equal(csl_quick_num(buf, buf + n, buf + n + 1 + CSL_QUICK_AT_ROOM, &f), 1);
            assert_memory_equal(&f, &got, sizeof got);
        }
        free(t);
    }
    /* the reader of a probability in a row with room (csl_quick_prob_at): where it answers,
     * the same byte and bits as csl_quick_num_at with either digit run; it declines only a
     * sign, two or more integer digits, or a zero with an exponent beyond +-22 */
    for (int kind = CSL_SCAN_SWAR; kind <= CSL_SCAN_SSE2; kind++) {
        double pg;
        const char *pq = csl_quick_prob_at(buf, kind, &pg);
        if (pq) {
            if (pq != q) fail_msg("'%s' + '%c': the probability reader stops elsewhere", s, term);
            if (memcmp(&pg, &got, sizeof got) != 0)
                fail_msg("'%s' + '%c': the probability reader %a, csl_quick_num_at %a", s, term,
                         pg, got);
            if ((size_t)(pq - buf) > 21) fail_msg("'%s': moved %zu bytes on", s, (size_t)(pq - buf));
        } else if (q && !(buf[0] == '-' || (buf[1] >= '0' && buf[1] <= '9') || got == 0.0)) {
            fail_msg("'%s' + '%c': declined by the probability reader", s, term);
        }
    }
    /* without the room, it declines (the caller then bounds the field itself) */
    assert_null(csl_quick_num_at(buf, buf + CSL_QUICK_AT_ROOM - 1, CSL_SCAN_SSE2, &got));
    assert_null(csl_quick_num_at(buf, buf + CSL_QUICK_AT_ROOM - 1, CSL_SCAN_SWAR, &got));
    free(buf);
    return q != NULL;
}

static void test_quick_number_at(void **state)
{
    (void)state;
    static const char *taken[] = {
        "0", "-0", "1", "7", "12", "999", "1234567", "0.5", "-0.5", "0.0", "1.", "5.e3", "00.5",
        "0.692024788668", "7.22441884735e-06", "7.22441884735E-06", "1e22", "1e-22", "1e+5",
        "1e05", "1.5e-21", "0.000137904786283", "0.000123456789012", "9.00000000000000",
        "0.12345678", "0.123456789", "0.1234567", "123.456", "1234567.12345678", "9e9",
        "0.000000000000000", "9007199.254740992", "0e-50", "0.0e+99", "0.123456789012345e-05",
    };
    static const char terms[] = {',', '\n', '\r', ';', '\t', ' ', 'x', '"'};
    for (size_t i = 0; i < sizeof taken / sizeof *taken; i++)
        for (size_t t = 0; t < sizeof terms; t++)
            if (!quick_at_one(taken[i], terms[t])) fail_msg("'%s' not taken", taken[i]);
    /* declined: not of the shape, or not exact by the shortcut (the field-bounded parsers
     * then decide) */
    static const char *declined[] = {
        "", "-", ".", ".5", "-.5", "+1", " 1", "e5", "12345678", "12345678.5", "1e123", "1e-100",
        "0.0000000000000001", "0.0001234567890123", "9007199254740993", "1e23", "1.5e-23",
        "0.12345678901234567890", "nan", "inf", "--1", "1e", "1e+", "1e-", "0.5e",
        "1234567.123456789012", "0.99999999999999989", "9007199254740.992",
    };
    for (size_t i = 0; i < sizeof declined / sizeof *declined; i++)
        if (quick_at_one(declined[i], ',')) fail_msg("'%s' taken", declined[i]);
    /* what it reads of a field that is not a number is a number all the same (the caller then
     * sees that its byte is not the delimiter) */
    static const char *prefixes[] = {"0.5x", "1.5.3", "1e5e5", "0.5 ", "1-2", "0,5", "1.5ee5"};
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++) quick_at_one(prefixes[i], 'x');
    /* %g / %e / %f numbers of every precision: strtod's bits whenever it answers, and all of
     * the %.12g probabilities down to 1e-4 (no exponent, at most 15 digits after the point)
     * and of the %.12g values with an exponent */
    char buf[80];
    size_t common = 0, common_taken = 0;
    for (int i = 0; i < 200000; i++) {
        unsigned long long r = rnd();
        double x;
        switch (i % 4) {
        case 0: x = (double)(r >> 11) / 9007199254740992.0; break;
        case 1: x = ldexp((double)(r >> 11), (int)(r % 120) - 100); break;
        case 2: x = exp(-(double)(r % 4000) / 100.0); break;
        default: x = ((double)(r >> 11) / 9007199254740992.0 - 0.5) * 1e4; break;
        }
        int prec = 1 + (int)(rnd() % 17), style = (int)(rnd() % 4);
        switch (style) {
        case 0: snprintf(buf, sizeof buf, "%.*g", prec, x); break;
        case 1: snprintf(buf, sizeof buf, "%.*e", prec, x); break;
        case 2: snprintf(buf, sizeof buf, "%.*f", prec, x); break;
        default: snprintf(buf, sizeof buf, "%.*E", prec, x); break;
        }
        int ok = quick_at_one(buf, "\n,\r"[i % 3]);
        if (style == 0 && prec <= 12 && x >= 1e-9 && x <= 1.0) {
            common++;
            common_taken += (size_t)ok;
        }
    }
    assert_true(common > 5000);
    assert_int_equal(common, common_taken);
}

/* ---- whole files ------------------------------------------------------------------------- */

typedef struct outcome {
    cs_dataset *d;
    cs_error err;
    cs_load_summary sum;
} outcome;

static void load(outcome *o, const char *text, size_t len, const cs_load_options *opt, int path,
                 int threads, int scan)
{
    cs_load_tuning t = {path, 0, threads, 0, 0, scan};
    o->d = cs_load_buffer_tuned("r.csv", text, len, opt, &o->sum, &o->err, &t);
    if (!o->d && o->err.code == CS_EUSAGE) fail_msg("path %d not applicable: %s", path, o->err.msg);
}

static void same(const outcome *a, const outcome *b)
{
    if ((a->d == NULL) != (b->d == NULL)) fail_msg("'%s' vs '%s'", a->err.msg, b->err.msg);
    assert_string_equal(a->err.msg, b->err.msg);
    assert_int_equal(a->err.line, b->err.line);
    assert_int_equal(a->err.col, b->err.col);
    assert_int_equal(a->sum.rows_read, b->sum.rows_read);
    assert_int_equal(a->sum.rows_rejected, b->sum.rows_rejected);
    assert_int_equal(a->sum.blank_lines, b->sum.blank_lines);
    assert_int_equal(a->sum.n_skipped_messages, b->sum.n_skipped_messages);
    for (size_t i = 0; i < a->sum.n_skipped_messages; i++)
        assert_string_equal(a->sum.skipped[i], b->sum.skipped[i]);
    if (!a->d) return;
    assert_int_equal(a->d->n, b->d->n);
    assert_int_equal(a->d->k, b->d->k);
    assert_memory_equal(a->d->prob, b->d->prob, a->d->n * a->d->k * sizeof(double));
    assert_memory_equal(a->d->label, b->d->label, a->d->n * sizeof(int32_t));
    assert_memory_equal(a->d->line, b->d->line, a->d->n * sizeof(uint32_t));
    /* the per-row caches (made by the fast path's parse threads, by the finisher on the libcsv
     * path): the same, and what the rule says, worked out here row by row */
    assert_memory_equal(a->d->conf, b->d->conf, a->d->n * sizeof(double));
    assert_memory_equal(a->d->pred, b->d->pred, a->d->n * sizeof(int32_t));
    assert_memory_equal(a->d->correct, b->d->correct, a->d->n);
    assert_int_equal(a->d->n_samples, b->d->n_samples);
    assert_memory_equal(a->d->sample_rows, b->d->sample_rows, a->d->n_samples * sizeof(uint32_t));
    for (size_t i = 0; i < b->d->n; i++) {
        const double *g = b->d->prob + i * b->d->k;
        size_t best = 0;
        for (size_t j = 1; j < b->d->k; j++)
            if (g[j] > g[best]) best = j;           /* ties: the first maximal class */
        assert_true(b->d->conf[i] == g[best]);
        assert_int_equal(b->d->pred[i], (int32_t)best);
        assert_int_equal(b->d->correct[i], b->d->label[i] == (int32_t)best);
    }
}

static void release(outcome *o)
{
    cs_dataset_free(o->d);
    cs_load_summary_free(&o->sum);
}

/* A number of exactly `width` bytes (>= 1) for a probability near x: padded with trailing
 * zeros after a decimal point, so fields can be made to end where a test wants them to. */
static size_t put_width(char *b, double x, size_t width)
{
    char t[64];
    int n = snprintf(t, sizeof t, "%.*f", width > 2 ? (int)width - 2 : 0, x);
    if ((size_t)n > width) n = snprintf(t, sizeof t, "%.0f", x);
    memcpy(b, t, (size_t)n);
    if ((size_t)n < width) {
        /* "0" -> "0.000", "0.5" -> "0.500" */
        size_t o = (size_t)n;
        if (!memchr(t, '.', (size_t)n) && width - o >= 2) b[o++] = '.';
        char pad = memchr(b, '.', o) ? '0' : ' ';
        while (o < width) b[o++] = pad;
        return width;
    }
    return (size_t)n;
}

/* Random 3-class files with the features the scanners must get right. */
static char *awkward_file(size_t rows, size_t *len, int crlf, int last_nl)
{
    size_t cap = rows * 700 + 256, o = 0;
    char *b = malloc(cap);
    assert_non_null(b);
    const char *nl = crlf ? "\r\n" : "\n";
    o += (size_t)snprintf(b, cap, "label,p_0,p_1,p_2,note%s", nl);
    for (size_t i = 0; i < rows; i++) {
        unsigned long long r = rnd();
        int kind = (int)(r % 40);
        double a = (double)((r >> 8) % 1000) / 1000.0, c = 0.25;
        double bb = 1.0 - a - c;
        if (bb < 0) { bb = 0; a = 0.75; }
        size_t line0 = o;
        o += (size_t)snprintf(b + o, cap - o, "%d,", (int)((r >> 20) % 3));
        if (kind == 0) {
            o = line0;                                                 /* blank line */
        } else if (kind == 1) {
            o += (size_t)snprintf(b + o, cap - o, ",%.3f,%.3f,x", a, 1 - a);   /* empty field */
        } else if (kind == 2) {
            o += (size_t)snprintf(b + o, cap - o, "%.3f,abc,%.3f,x", a, 1 - a); /* not a number */
        } else if (kind == 3) {
            o += (size_t)snprintf(b + o, cap - o, "%.3f,%.3f,%.3f", a, bb, c);  /* ragged */
        } else if (kind == 4) {
            o += (size_t)snprintf(b + o, cap - o, "%.3f,%.3f,%.3f,x,y", a, bb, c);   /* ragged */
        } else if (kind == 5) {
            o += (size_t)snprintf(b + o, cap - o, "1.5,%.3f,%.3f,x", bb, c);   /* out of range */
        } else if (kind == 6) {
            o += (size_t)snprintf(b + o, cap - o, "%.3f,%.3f,%.3f,", a + 0.1, bb, c);   /* sum */
        } else {
            /* a good row; the first probability ends exactly at a 16- or 64-byte boundary of
             * the file, or fields are long (numbers of 17 digits, padded notes) */
            size_t want = (size_t)(r >> 32) % 2 ? 16 : 64;
            size_t to = ((o + want) / want) * want;
            size_t w = to - o;
            if (w < 1 || w > 40) w = 5;
            o += put_width(b + o, a, w);
            o += (size_t)snprintf(b + o, cap - o, kind % 3 ? ",%.17g,%.12g," : ",%.3f,%.3e,", bb, c);
            size_t note = kind % 5 == 0 ? (size_t)(r >> 40) % 300 : (size_t)(r >> 40) % 3;
            for (size_t k = 0; k < note; k++) b[o++] = (char)('a' + k % 26);
        }
        if (i + 1 < rows || last_nl) o += (size_t)snprintf(b + o, cap - o, "%s", nl);
    }
    *len = o;
    return b;
}

/* The outcome c (the reference, usually libcsv's) against loads of the same bytes by `path` on
 * `threads` threads with each scanner. */
static void same_with_both_scanners(const outcome *c, const char *text, size_t len,
                                    const cs_load_options *opt, int path, int threads)
{
    for (int kind = CSL_SCAN_SWAR; kind <= CSL_SCAN_SSE2; kind++) {
        outcome f;
        load(&f, text, len, opt, path, threads, kind);
        same(c, &f);
        release(&f);
    }
}

/* text through libcsv (the reference), then the fast path on 1-3 threads with both scanners:
 * the same outcome every time; more than min_rows rows read; a bad row refuses the file
 * (skip 0, the message names it) or is skipped (skip 1). */
static void same_on_every_path(const char *text, size_t len, int skip, double sum_tol, size_t min_rows)
{
    cs_load_options opt;
    cs_load_options_default(&opt);
    opt.skip_bad_rows = skip;
    opt.sum_tol = sum_tol;
    outcome c;
    load(&c, text, len, &opt, CSL_PATH_CSV, 0, 0);
    assert_true(c.sum.rows_read > min_rows);
    if (skip) assert_non_null(c.d);
    else assert_non_null(strstr(c.err.msg, "r.csv:"));
    for (int th = 1; th <= 3; th++)
        same_with_both_scanners(&c, text, len, &opt, CSL_PATH_FAST, th);
    release(&c);
}

/* Rows written with 3 decimals whose numbers sum to 1.001 or 0.999 exactly (double sums
 * 1.0010000000000001, 0.9990000000000001) load on every path (libcsv, the fast path on 1-3
 * threads with both scanners, in a file large enough for two threads), and a row at 1.0015
 * is refused the same way on each (engine/num/rowsum.h). */
static void test_three_decimal_sums_all_paths(void **state)
{
    (void)state;
    size_t rows = 300000, cap = rows * 24 + 64, len = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    len += (size_t)snprintf(text + len, cap - len, "label,p_0,p_1,p_2\n");
    static const char *const row[] = { "0.334,0.334,0.333", "0.333,0.333,0.333", "0.5,0.25,0.25",
                                       "0.001,0.999,0.001" };
    for (size_t i = 0; i < rows; i++)
        len += (size_t)snprintf(text + len, cap - len, "%zu,%s\n", i % 3, row[i % 4]);
    cs_load_options opt;
    cs_load_options_default(&opt);
    outcome c;
    load(&c, text, len, &opt, CSL_PATH_CSV, 0, 0);
    if (!c.d) fail_msg("%s", c.err.msg);
    assert_int_equal(c.d->n, rows);
    for (int th = 1; th <= 3; th++) same_with_both_scanners(&c, text, len, &opt, CSL_PATH_FAST, th);
    release(&c);
    /* one row at 1.0015 near the end: refused with its place on every path */
    len = (size_t)snprintf(text, cap, "label,p_0,p_1,p_2\n");
    for (size_t i = 0; i < rows; i++)
        len += (size_t)snprintf(text + len, cap - len, "%zu,%s\n", i % 3,
                                i == rows - 5 ? "0.3345,0.334,0.333" : row[i % 4]);
    load(&c, text, len, &opt, CSL_PATH_CSV, 0, 0);
    assert_null(c.d);
    char want[96];
    snprintf(want, sizeof want, "r.csv:%zu:2: probabilities sum to 1.0015, not 1 within 0.001", rows - 3);
    assert_string_equal(c.err.msg, want);
    for (int th = 1; th <= 3; th++) same_with_both_scanners(&c, text, len, &opt, CSL_PATH_FAST, th);
    release(&c);
    free(text);
}

static void test_random_files_all_paths(void **state)
{
    (void)state;
    for (int round = 0; round < 24; round++) {
        int crlf = round % 2, last_nl = (round / 2) % 2, skip = (round / 4) % 2;
        size_t len;
        char *text = awkward_file(200 + (size_t)(rnd() % 2000), &len, crlf, last_nl);
        same_on_every_path(text, len, skip, round % 3 ? 1e-3 : 0.2, 100);
        free(text);
    }
}

/* A field of a numbers-only file: mostly %.12g, and every shape the quick reader of such rows
 * (quick_row_num) must take, pass on or refuse exactly as the checker does. */
static size_t numeric_field(char *b, size_t cap, double x, unsigned long long r)
{
    switch ((r >> 8) % 24) {
    case 0: return (size_t)snprintf(b, cap, "%.17g", x);          /* 17 digits: parse_double */
    case 1: return (size_t)snprintf(b, cap, "%.3e", x);
    case 2: return (size_t)snprintf(b, cap, "%.6E", x);
    case 3: return (size_t)snprintf(b, cap, "%.20f", x);          /* 20 digits after the point */
    case 4: return (size_t)snprintf(b, cap, " %.12g", x);         /* spaces: libcsv trims */
    case 5: return (size_t)snprintf(b, cap, "%.12g\t", x);
    case 6: return (size_t)snprintf(b, cap, "%.5f", x);
    case 7: return (size_t)snprintf(b, cap, "%.15f", x);          /* 15 digits: the longest run */
    case 8: return (size_t)snprintf(b, cap, "%.16f", x);          /* 16: the general form */
    case 9: return (size_t)snprintf(b, cap, "%.12ge0", x);        /* a needless exponent */
    case 10: return (size_t)snprintf(b, cap, "%.4fe+00", x);
    case 11: return (size_t)snprintf(b, cap, "%.12g000", x);      /* trailing zeros */
    case 12: return (size_t)snprintf(b, cap, "%se-400", x < 0.5 ? "1" : "0");   /* underflow */
    default: return (size_t)snprintf(b, cap, "%.12g", x);
    }
}

/* Random numbers-only files (label, k probabilities): good rows in every number shape, fields
 * ending at 16- and 64-byte boundaries, blank lines, and bad rows of every kind. */
static char *numeric_file(size_t rows, size_t k, size_t *len, int crlf, int last_nl, int layout)
{
    size_t cap = rows * (k + 1) * 48 + 64 * k + 256, o = 0;
    char *b = malloc(cap);
    assert_non_null(b);
    const char *nl = crlf ? "\r\n" : "\n";
    /* layout 0: label, p_0 .. p_{k-1} (the reader's own loop); 1: the label last; 2: logits;
     * 3: the classes out of order (p_1, p_0, p_2, ...) */
    if (layout != 1) o += (size_t)snprintf(b, cap, "label,");
    for (size_t j = 0; j < k; j++)
        o += (size_t)snprintf(b + o, cap - o, "%s%s_%zu", j ? "," : "", layout == 2 ? "logit" : "p",
                              layout == 3 && j < 2 ? 1 - j : j);
    o += (size_t)snprintf(b + o, cap - o, "%s%s", layout == 1 ? ",label" : "", nl);
    double p[64];
    for (size_t i = 0; i < rows; i++) {
        unsigned long long r = rnd();
        int kind = (int)(r % 50);
        double sum = 0;
        for (size_t j = 0; j < k; j++) {
            p[j] = (double)(rnd() % 100000) * (j % 3 == 0 ? 1e-9 : 1.0);
            sum += p[j];
        }
        for (size_t j = 0; j < k; j++) p[j] = sum > 0 ? p[j] / sum : 1.0 / (double)k;
        if (kind == 0) {                                              /* blank line */
            if (r & 256) o += (size_t)snprintf(b + o, cap - o, "  ");
        } else {
            /* the label: an index (two digits when k > 10), or a bad one */
            const char *bad_label[] = {"99", "1.5", "-1", "x", "", "1e0", "01"};
            char lab[32];
            if (kind == 1) snprintf(lab, sizeof lab, "%s", bad_label[(r >> 8) % 7]);
            else snprintf(lab, sizeof lab, "%zu", (size_t)((r >> 20) % k));
            if (layout != 1) o += (size_t)snprintf(b + o, cap - o, "%s", lab);
            size_t nf = k;
            if (kind == 2) nf = k - 1;                                /* ragged */
            if (kind == 3) nf = k + 1;
            for (size_t j = 0; j < nf; j++) {
                if (j || layout != 1) b[o++] = ',';
                unsigned long long f = rnd();
                double x = j < k ? p[j] : 0.0;
                if (kind == 4 && j == k / 2) {
                    const char *bad[] = {"", "abc", "0.5x", "0.5e", "1.5", "nan", "-inf",
                                         "0.5e123", "1..5", "+-1", "0x1p-3", "-0.25"};
                    o += (size_t)snprintf(b + o, cap - o, "%s", bad[(f >> 8) % 12]);
                } else if (kind == 5 && j == 0) {
                    o += (size_t)snprintf(b + o, cap - o, "%.12g", x + 0.1);     /* sum */
                } else if (kind >= 6 && kind < 10 && j == 0) {
                    /* ends at a 16- or 64-byte boundary of the file */
                    size_t want = kind % 2 ? 16 : 64, to = ((o + want) / want) * want;
                    size_t w = to - o;
                    o += put_width(b + o, x, w >= 3 && w <= 40 ? w : 3);
                } else {
                    unsigned long long shape = kind < 25 ? f : (f & ~0xff00ull) | 0x1700;
                    o += numeric_field(b + o, cap - o, x, shape);
                }
            }
            if (layout == 1) o += (size_t)snprintf(b + o, cap - o, ",%s", lab);
        }
        if (i + 1 < rows || last_nl) o += (size_t)snprintf(b + o, cap - o, "%s", nl);
    }
    *len = o;
    char *exact = realloc(b, o);           /* the data ends its heap block: ASan sees any */
    assert_non_null(exact);                /* load past it */
    return exact;
}

static void test_numeric_files_all_paths(void **state)
{
    (void)state;
    for (int round = 0; round < 64; round++) {
        int crlf = round % 2, last_nl = (round / 2) % 2, skip = (round / 4) % 2;
        size_t k = round % 16 < 8 ? 3 : 12;         /* 12: labels of two digits */
        int layout = round < 32 ? 0 : (round / 8) % 4;
        size_t len;
        char *text = numeric_file(100 + (size_t)(rnd() % 1500), k, &len, crlf, last_nl, layout);
        same_on_every_path(text, len, skip, round % 3 ? 1e-3 : 0.2, 50);
        free(text);
    }
}

/* Numbers-only rows at the very end of the data, where a number has less room after it than
 * the quick reader needs (it then bounds the field first), with every line end. */
static void test_numeric_rows_at_the_end(void **state)
{
    (void)state;
    static const char *tails[] = {
        "1,0.25,0.75", "1,0.25,0.75\n", "1,0.25,0.75\r\n", "1,0.25,0.75\r", "1,0.250000,7.5e-01",
        "1,0.25,0.75\n\n", "1,0.25,0.75\n  ", "0,1,0", "0,1e0,0e0\n", "1,0.25,0.75x",
        "1,0.25,", "1,0.25", "1,0.25,0.75,", "1,0.25,abc", "1,1.5,0.75\n",
    };
    for (size_t i = 0; i < sizeof tails / sizeof *tails; i++)
        for (size_t pad = 0; pad < 40; pad++) {
            /* rows before it, so that the tail sits 0..39 bytes after a 64-byte window */
            char text[512];
            size_t o = (size_t)snprintf(text, sizeof text, "label,p_0,p_1\n");
            for (size_t j = 0; j < 3; j++)
                o += (size_t)snprintf(text + o, sizeof text - o, "0,0.5,0.5\n");
            o += (size_t)snprintf(text + o, sizeof text - o, "0,%.*f,0.5\n", (int)(pad % 20 + 1),
                                  0.5);
            o += (size_t)snprintf(text + o, sizeof text - o, "%s", tails[i]);
            cs_load_options opt;
            cs_load_options_default(&opt);
            opt.sum_tol = 0.01;
            opt.skip_bad_rows = (int)(pad / 20);
            /* at the very end of a heap block: ASan sees any load past the data */
            char *data = malloc(o);
            assert_non_null(data);
            memcpy(data, text, o);
            outcome c;
            load(&c, data, o, &opt, CSL_PATH_CSV, 0, 0);
            same_with_both_scanners(&c, data, o, &opt, CSL_PATH_FAST, 1);
            release(&c);
            free(data);
        }
}

/* The load of `text` (o bytes, copied to the end of a heap block: ASan sees a load past it)
 * by libcsv, then by the fast path on 1 and 2 threads with both scanners: the same outcome,
 * `rows` rows, and the value `x` in row 1, class k - 1. */
static void same_at_the_end(const char *text, size_t o, size_t rows, double x)
{
    char *data = malloc(o);
    assert_non_null(data);
    memcpy(data, text, o);
    cs_load_options opt;
    cs_load_options_default(&opt);
    opt.sum_tol = 0.1;
    outcome c;
    load(&c, data, o, &opt, CSL_PATH_CSV, 0, 0);
    if (!c.d) fail_msg("%zu bytes: %s", o, c.err.msg);
    assert_int_equal(c.d->n, rows);
    assert_true(c.d->prob[2 * c.d->k - 1] == x);
    for (int th = 1; th <= 2; th++) same_with_both_scanners(&c, data, o, &opt, CSL_PATH_FAST, th);
    release(&c);
    free(data);
}

/* Rows of probabilities are read without a bound (csl_quick_prob_at) only while the row has
 * CSL_QUICK_PROB_ROOM(k) bytes before the end of the data. Rows whose last fields are the
 * longest numbers that reader takes (21 bytes each: the most it moves on) start at every
 * distance from the end of the data up to well past that threshold: as the last row (its
 * first fields narrower), or before a last row of narrower fields. */
static void test_numeric_prob_room(void **state)
{
    (void)state;
    static const size_t ks[] = {3, 12};
    for (size_t t = 0; t < 2; t++) {
        size_t k = ks[t], row = 1 + 22 * k, cap = 64 + 16 * k + 3 * row + 64 * k + 256, head = 0;
        const char *field = k == 3 ? "0.333333333333333e+00" : "0.083333333333333e+00";
        double x = strtod(field, NULL);
        char *text = malloc(cap);
        assert_non_null(text);
        head += (size_t)snprintf(text, cap, "label");
        for (size_t j = 0; j < k; j++) head += (size_t)snprintf(text + head, cap - head, ",p_%zu", j);
        text[head++] = '\n';
        head += (size_t)snprintf(text + head, cap - head, "0");
        for (size_t j = 0; j < k; j++) head += (size_t)snprintf(text + head, cap - head, ",%s", field);
        text[head++] = '\n';
        /* the last row: its first nn fields w bytes wide, the others the longest */
        for (size_t nn = 0; nn <= k; nn++)
            for (size_t w = 4; w <= 21; w++)
                for (size_t lf = 0; lf < 2; lf++) {
                    size_t o = head;
                    text[o++] = '1';
                    for (size_t j = 0; j < k; j++) {
                        text[o++] = ',';
                        if (j < nn) o += put_width(text + o, 1.0 / (double)k, w);
                        else o += (size_t)snprintf(text + o, cap - o, "%s", field);
                    }
                    char last[48] = {0};               /* the last field, terminated */
                    memcpy(last, text + o - (nn == k ? w : 21), nn == k ? w : 21);
                    if (lf) text[o++] = '\n';
                    same_at_the_end(text, o, 2, strtod(last, NULL));
                }
        /* a row of the longest numbers, then a last row of k fields of 4..40 bytes */
        for (size_t dist = row + 1 + k + 1 + 4 * k; dist <= row + 1 + k + 39 * k; dist++)
            for (size_t lf = 0; lf < 2; lf++) {
                size_t widths = dist - row - 1 - k - lf, w = widths / k, extra = widths % k;
                size_t o = head;
                text[o++] = '1';
                for (size_t j = 0; j < k; j++) o += (size_t)snprintf(text + o, cap - o, ",%s", field);
                text[o++] = '\n';
                size_t last = o;
                text[o++] = '0';
                for (size_t j = 0; j < k; j++) {
                    text[o++] = ',';
                    o += put_width(text + o, 1.0 / (double)k, w + (j < extra));
                }
                if (lf) text[o++] = '\n';
                assert_int_equal(o - last + row, dist);    /* the second row starts at dist */
                same_at_the_end(text, o, 3, x);
            }
        /* a row with the room whose first probability is too long for that reader (the bounded
         * parsers take it, and may move any distance on), then the others at the very end: they
         * must be read with a bound (a fuzzer found the reader going past the data here) */
        for (size_t w = 17; w <= 200; w += 7)
            for (size_t lf = 0; lf < 2; lf++) {
                size_t o = head;
                text[o++] = '1';
                o += (size_t)snprintf(text + o, cap - o, ",0.5");      /* 0.5 in w bytes */
                memset(text + o, '0', w - 3);
                o += w - 3;
                for (size_t j = 1; j < k; j++)
                    o += (size_t)snprintf(text + o, cap - o, ",%s", j + 1 < k ? "0" : "0.5");
                if (lf) text[o++] = '\n';
                same_at_the_end(text, o, 2, 0.5);
            }
        free(text);
    }
    /* rows of 100 classes, without room for all their numbers, read 64 at a time: in the last
     * row the second block (classes 64-99) has the room, but its first number is too long for
     * the unbounded reader, and the others are at the very end of the data */
    size_t k = 100, cap = 8192, head = 0;
    char *text = malloc(cap), *row = malloc(cap);
    assert_non_null(text);
    assert_non_null(row);
    head += (size_t)snprintf(text, cap, "label");
    for (size_t j = 0; j < k; j++) head += (size_t)snprintf(text + head, cap - head, ",p_%zu", j);
    text[head++] = '\n';
    for (size_t w = 900; w <= 1250; w += 50)
        for (size_t lf = 0; lf < 2; lf++) {
            size_t n = (size_t)snprintf(row, cap, "1");
            for (size_t j = 0; j < k; j++) {
                if (j == 64) {                                     /* 0.5 in w bytes */
                    n += (size_t)snprintf(row + n, cap - n, ",0.5");
                    memset(row + n, '0', w - 3);
                    n += w - 3;
                } else {
                    n += (size_t)snprintf(row + n, cap - n, ",%s", j + 1 < k ? "0" : "0.5");
                }
            }
            size_t o = head;
            for (int r = 0; r < 2; r++) {                         /* the row twice */
                memcpy(text + o, row, n);
                o += n;
                if (r == 0 || lf) text[o++] = '\n';
            }
            same_at_the_end(text, o, 2, 0.5);
        }
    free(row);
    free(text);
}

/* Two threads over numbers fold the newline count into the parse: the second chunk's rows go
 * after the most rows the first chunk's bytes could hold. Short bad lines ("1,2": fewer bytes
 * than a row of 6 fields needs) can outnumber those rows many times over; a fuzzer found the
 * second thread's rows then placed past the first chunk's lines, out of the room reserved. */
static void test_numeric_fold_short_lines(void **state)
{
    (void)state;
    for (int variant = 0; variant < 4; variant++) {
        size_t cap = 1 << 16, o = 0;
        char *text = malloc(cap);
        assert_non_null(text);
        o += (size_t)snprintf(text, cap, "label,p_0,p_1,p_2,p_3,p_4\n");
        size_t bad = variant % 2 ? 2000 : 300, good = 200;
        for (size_t i = 0; i < bad; i++)
            o += (size_t)snprintf(text + o, cap - o, i % 7 ? "1,2\n" : "\n");
        for (size_t i = 0; i < good; i++)
            o += (size_t)snprintf(text + o, cap - o, "%zu,0.2,0.2,0.2,0.2,0.2\n", i % 5);
        if (variant >= 2)                           /* the bad lines in the second half too */
            for (size_t i = 0; i < bad; i++) o += (size_t)snprintf(text + o, cap - o, "1,2\n");
        char *data = realloc(text, o);
        assert_non_null(data);
        cs_load_options opt;
        cs_load_options_default(&opt);
        for (int skip = 0; skip < 2; skip++) {
            opt.skip_bad_rows = skip;
            outcome c;
            load(&c, data, o, &opt, CSL_PATH_CSV, 0, 0);
            if (skip) assert_int_equal(c.d->n, good);
            same_with_both_scanners(&c, data, o, &opt, CSL_PATH_FAST, 2);
            release(&c);
        }
        free(data);
    }
}

/* The folded count leaves the long-line check of the first chunk to its parse: a field past
 * the 1 MiB limit in the first chunk, in the second, or at the cut between them, is refused
 * on two threads with libcsv's message, with either scanner; a long line within the limit
 * loads. */
static void test_numeric_fold_long_line(void **state)
{
    (void)state;
    size_t longf = CS_LOAD_MAX_FIELD_BYTES + 1;
    for (int where = 0; where < 4; where++) {
        size_t rows = 60000, cap = rows * 16 + longf + 256, o = 0;
        char *text = malloc(cap);
        assert_non_null(text);
        o += (size_t)snprintf(text, cap, "label,p_0,p_1\n");
        /* the long line after a tenth of the rows (first chunk), after nine tenths (second),
         * or right at the middle of the bytes (where the cut is looked for) */
        size_t at = where == 0 ? rows / 10 : where == 1 ? rows * 9 / 10 : rows / 2 - 3000;
        for (size_t i = 0; i < rows; i++) {
            if (i == at) {
                /* "0.5000...": a field of exactly the limit (3: it fits), or a byte more */
                size_t f = where == 3 ? CS_LOAD_MAX_FIELD_BYTES : longf;
                o += (size_t)snprintf(text + o, cap - o, "1,0.5");
                memset(text + o, '0', f - 3);
                o += f - 3;
                o += (size_t)snprintf(text + o, cap - o, ",0.5\n");
            }
            o += (size_t)snprintf(text + o, cap - o, "%zu,0.25,0.75\n", i % 2);
        }
        cs_load_options opt;
        cs_load_options_default(&opt);
        outcome c;
        load(&c, text, o, &opt, CSL_PATH_CSV, 0, 0);
        if (where == 3) {
            if (!c.d) fail_msg("refused: %s", c.err.msg);
            assert_int_equal(c.d->n, rows + 1);
        } else {
            char want[96];
            snprintf(want, sizeof want, "r.csv:%zu:2: field longer than %zu bytes (the limit)",
                     at + 2, (size_t)CS_LOAD_MAX_FIELD_BYTES);
            assert_string_equal(c.err.msg, want);
        }
        same_with_both_scanners(&c, text, o, &opt, CSL_PATH_AUTO, 2);
        release(&c);
        free(text);
    }
}

/* A numbers-only file with a quote or a lone CR anywhere is left to libcsv whole (the fast
 * path gives up), and reads as libcsv reads it. */
static void test_numeric_quotes_fall_back(void **state)
{
    (void)state;
    static const char *cases[] = {
        "label,p_0,p_1\n0,0.25,0.75\n1,\"0.5\",0.5\n",
        "label,p_0,p_1\n0,0.25,0.75\n1,0.5,0.5\"\n",
        "label,p_0,p_1\n0,0.25,0.75\n1,0.5\r,0.5\n",
        "label,p_0,p_1\n0,0.25,0.75\r1,0.5,0.5\n",
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        /* a quote past the first 64 KiB, which the up-front look does not see */
        size_t n = strlen(cases[i]), rows = 70000 / 10 + 1, len = 0;
        char *text = malloc(rows * 10 + n + 64);
        assert_non_null(text);
        len = (size_t)sprintf(text, "label,p_0,p_1\n");
        for (size_t j = 0; j < rows; j++) len += (size_t)sprintf(text + len, "0,0.5,0.5\n");
        const char *body = strchr(cases[i], '\n') + 1;
        memcpy(text + len, body, strlen(body));
        len += strlen(body);
        cs_load_options opt;
        cs_load_options_default(&opt);
        for (int kind = CSL_SCAN_SWAR; kind <= CSL_SCAN_SSE2; kind++) {
            cs_load_tuning t = {CSL_PATH_FAST, 0, 1, 0, 0, kind};
            cs_error err;
            cs_load_summary sum;
            cs_dataset *d = cs_load_buffer_tuned("r.csv", text, len, &opt, &sum, &err, &t);
            assert_null(d);
            assert_int_equal(err.code, CS_EUSAGE);
            cs_load_summary_free(&sum);
        }
        outcome c, a;
        load(&c, text, len, &opt, CSL_PATH_CSV, 0, 0);
        load(&a, text, len, &opt, CSL_PATH_AUTO, 0, 0);
        same(&c, &a);
        release(&c);
        release(&a);
        free(text);
    }
}

/* A refused row's message is the same, with its line and column, whichever path and scanner
 * read it; checked against the words written out here. */
static void test_messages_with_place(void **state)
{
    (void)state;
    static const struct { const char *text; const char *msg; } cases[] = {
        {"label,p_0,p_1\n0,0.25,0.75\n1,0.5,0.5\r\n1,0.5,abc\n",
         "r.csv:4:3: non-numeric value 'abc' in column 'p_1'"},
        {"label,p_0,p_1\n0,0.25,0.75\n\n1,,0.5\n", "r.csv:4:2: empty field in column 'p_0'"},
        {"label,p_0,p_1\n0,0.0000000000000000000000000000000000000000025,1.5",
         "r.csv:2:3: probability outside [0,1] '1.5' in column 'p_1'"},
        {"label,p_0,p_1\r\n0,0.25,0.75\r\n1,0.5,0.5,9\r\n", "r.csv:3:4: ragged row: 4 fields, expected 3"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cs_load_options opt;
        cs_load_options_default(&opt);
        outcome c;
        load(&c, cases[i].text, strlen(cases[i].text), &opt, CSL_PATH_CSV, 0, 0);
        assert_null(c.d);
        assert_string_equal(c.err.msg, cases[i].msg);
        same_with_both_scanners(&c, cases[i].text, strlen(cases[i].text), &opt, CSL_PATH_FAST, 1);
        release(&c);
    }
}

/* Headers, from 2 to 400 columns: names with spaces and tabs around them, names across the
 * scanner's 64-byte windows, ignored columns, each delimiter (given and sniffed), a quote or a
 * CR in the header (the fast path gives the file to libcsv), duplicates and mixed kinds (the
 * refusal): the same columns, class names and messages on every path and scanner. */
static void test_headers_all_paths(void **state)
{
    (void)state;
    for (int round = 0; round < 160; round++) {
        char delim = ",;\t"[round % 3];
        size_t k = 2 + (size_t)(rnd() % (round % 4 ? 12 : 400)), cap = 64 * k + 4096, o = 0;
        char *text = malloc(cap), *note = malloc(k);
        assert_non_null(text);
        assert_non_null(note);
        int trouble = (int)(rnd() % 8);     /* 0: a duplicate; 1: a quote; 2: a CR; 3: a logit */
        size_t at = (size_t)(rnd() % k);
        o += (size_t)snprintf(text + o, cap - o, "%slabel", rnd() % 2 ? " " : "");
        for (size_t j = 0; j < k; j++) {
            unsigned long long r = rnd();
            const char *pad = r % 5 == 0 ? (delim == '\t' ? "  " : " \t ")
                              : r % 5 == 1 ? (delim == '\t' ? " " : "\t") : "";
            note[j] = r % 11 == 0;
            if (note[j]) o += (size_t)snprintf(text + o, cap - o, "%cnote%zu", delim, j);   /* ignored */
            size_t width = (r >> 8) % 40;   /* a long class name now and then: windows cross */
            if (trouble == 0 && j == at && j > 0)
                o += (size_t)snprintf(text + o, cap - o, "%c%sp_%zu%s", delim, pad, j - 1, pad);
            else if (trouble == 1 && j == at)
                o += (size_t)snprintf(text + o, cap - o, "%c\"p_%zu\"", delim, j);
            else if (trouble == 2 && j == at)
                o += (size_t)snprintf(text + o, cap - o, "%cp_%zu\r", delim, j);
            else if (trouble == 3 && j == at)
                o += (size_t)snprintf(text + o, cap - o, "%clogit_%zu", delim, j);
            else if (width > 30)
                o += (size_t)snprintf(text + o, cap - o, "%c%sprob_%0*zu%s", delim, pad,
                                      (int)width, j, pad);          /* still the number j */
            else
                o += (size_t)snprintf(text + o, cap - o, "%c%sp_%zu%s", delim, pad, j, pad);
        }
        o += (size_t)snprintf(text + o, cap - o, "\n");
        for (size_t row = 0; row < 3; row++) {
            o += (size_t)snprintf(text + o, cap - o, "%zu", row % k);
            for (size_t j = 0; j < k; j++) {
                if (note[j]) o += (size_t)snprintf(text + o, cap - o, "%cx", delim);
                o += (size_t)snprintf(text + o, cap - o, "%c%s", delim, j == row % k ? "1" : "0");
            }
            o += (size_t)snprintf(text + o, cap - o, "\n");
        }
        cs_load_options opt;
        cs_load_options_default(&opt);
        opt.delimiter = round % 2 ? delim : 0;
        outcome c;
        load(&c, text, o, &opt, CSL_PATH_CSV, 0, 0);
        /* (a sniffed delimiter may be the tab of the padding: then only the paths agree) */
        if (opt.delimiter && trouble == 0 && at > 0) assert_non_null(strstr(c.err.msg, "duplicate column"));
        if (opt.delimiter && trouble == 3 && !strstr(c.err.msg, "mixes logit and probability")) fail_msg("round %d: %s", round, c.err.msg);
        for (int kind = CSL_SCAN_SWAR; kind <= CSL_SCAN_SSE2; kind++) {
            outcome f;
            /* the fast path itself, but where it gives a quote or a CR in the header to libcsv */
            load(&f, text, o, &opt, trouble == 1 || trouble == 2 ? CSL_PATH_AUTO : CSL_PATH_FAST, 1, kind);
            same(&c, &f);
            assert_int_equal(c.sum.n_ignored, f.sum.n_ignored);
            for (size_t i = 0; i < c.sum.n_ignored; i++)
                assert_string_equal(c.sum.ignored_columns[i], f.sum.ignored_columns[i]);
            if (c.d) {
                assert_int_equal(c.d->label_col, f.d->label_col);
                for (size_t j = 0; j < c.d->k; j++) {
                    assert_string_equal(c.d->class_names[j], f.d->class_names[j]);
                    assert_int_equal(c.d->class_col[j], f.d->class_col[j]);
                }
            }
            release(&f);
        }
        if (opt.delimiter && trouble >= 4 && !c.d) fail_msg("round %d: %s", round, c.err.msg);
        release(&c);
        free(text);
        free(note);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_masks_agree),
        cmocka_unit_test(test_count_and_plain_text_agree),
        cmocka_unit_test(test_headers_all_paths),
        cmocka_unit_test(test_newline_count_agrees),
        cmocka_unit_test(test_quick_number_edges),
        cmocka_unit_test(test_quick_number_random),
        cmocka_unit_test(test_random_files_all_paths),
        cmocka_unit_test(test_three_decimal_sums_all_paths),
        cmocka_unit_test(test_messages_with_place),
        cmocka_unit_test(test_quick_number_at),
        cmocka_unit_test(test_numeric_files_all_paths),
        cmocka_unit_test(test_numeric_rows_at_the_end),
        cmocka_unit_test(test_numeric_prob_room),
        cmocka_unit_test(test_numeric_quotes_fall_back),
        cmocka_unit_test(test_numeric_fold_short_lines),
        cmocka_unit_test(test_numeric_fold_long_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
