/* The one gzip reader (engine/gz) as the CSV loader's source uses it (engine/load's gzip source
 * over a descriptor or a mapped buffer): every stream written by zlib at levels 1, 6 and 9, by
 * igzip and as concatenated members is read, with the input cut into pieces of every size from
 * 2 bytes (the loader looks at the magic in its first read) to the whole file, to zlib's gzread bytes exactly; a stream cut at every length is
 * "truncated", whatever the cut splits (header, deflate data, trailer), except where a member
 * ends; bytes after the last member are refused; a flipped CRC or length byte is "incorrect data
 * check" at every split; a corrupt deflate stream takes zlib's own words. Run from the
 * repository root. */
#include "support/cs_test.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "engine/gz/gz.h"
#include "engine/load/load_internal.h"

#if defined(__GNUC__) && defined(__x86_64__)
#include <cpuid.h>
#endif

#define FIX "tests/fixtures/vol/"

static unsigned char *file_bytes(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(*n + 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, *n, f), *n);
    fclose(f);
    return b;
}

/* zlib's reading of a gzip file: the independent reference. */
static unsigned char *zlib_all(const char *path, size_t *n)
{
    gzFile g = gzopen(path, "rb");
    assert_non_null(g);
    size_t cap = 1 << 16;
    unsigned char *b = malloc(cap);
    *n = 0;
    int k;
    while ((k = gzread(g, b + *n, (unsigned)(cap - *n))) > 0) {
        *n += (size_t)k;
        if (cap - *n < 4096) b = realloc(b, cap *= 2);
        assert_non_null(b);
    }
    assert_int_equal(k, 0);
    gzclose(g);
    return b;
}

/* One gzip member of text by zlib's gzip writer at level `level` (as calscope's writers use it),
 * into out (its length). */
static size_t zlib_member(const unsigned char *text, size_t len, int level, unsigned char *out, size_t cap)
{
    const char *path = cs_test_tmpfile(".gz", "", 0);
    char mode[4] = {'w', 'b', (char)('0' + level), 0};
    gzFile g = gzopen(path, mode);
    assert_non_null(g);
    assert_int_equal(gzwrite(g, text, (unsigned)len), (int)len);
    assert_int_equal(gzclose(g), Z_OK);
    size_t n;
    unsigned char *b = file_bytes(path, &n);
    assert_true(n <= cap);
    memcpy(out, b, n);
    free(b);
    return n;
}

/* Everything the loader's gzip source hands out for the gzip bytes gz[0..n), read from a
 * descriptor `cap` bytes at a time (7-byte output pieces); *msg the error, NULL if none. */
static unsigned char *through_source(const unsigned char *gz, size_t n, size_t cap, size_t *out_len,
                                     const char **msg, char *msg_buf, size_t msg_cap)
{
    const char *path = cs_test_tmpfile(".gz", gz, n);
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    int is_gz = 0;
    csl_src *s = cs_load_src_gunzip_if(cs_load_src_fd(fd, cap), 7, &is_gz);
    assert_non_null(s);
    assert_int_equal(is_gz, 1);
    size_t room = 1 << 16, have = 0;
    unsigned char *out = malloc(room);
    const void *p;
    size_t k;
    int r;
    while ((r = cs_load_src_next(s, &p, &k)) > 0) {
        if (have + k > room) out = realloc(out, room = 2 * (have + k));
        assert_non_null(out);
        memcpy(out + have, p, k);
        have += k;
    }
    *msg = NULL;
    if (r < 0) {
        snprintf(msg_buf, msg_cap, "%s", cs_load_src_error(s));
        *msg = msg_buf;
    }
    cs_load_src_free(s);
    close(fd);
    *out_len = have;
    return out;
}

/* The text the streams below hold: CSV-like lines, some repetition (matches) and some noise. */
static unsigned char *sample_text(size_t *len)
{
    *len = 3000;
    unsigned char *t = malloc(*len);
    assert_non_null(t);
    uint32_t x = 12345;
    for (size_t i = 0; i < *len; i++) {
        x = x * 1103515245u + 12345u;
        t[i] = i % 37 == 36 ? '\n' : (unsigned char)("0123456789.,"[(x >> 16) % 12]);
    }
    return t;
}

/* Streams of zlib at levels 1, 6, 9, of three concatenated members, and of igzip (a fixture
 * igzip wrote): split at every input size, the bytes are zlib's gzread bytes. */
static void test_source_split_everywhere(void **state)
{
    (void)state;
    size_t tlen;
    unsigned char *text = sample_text(&tlen), gz[3][8192];
    size_t glen[3];
    const int levels[3] = {1, 6, 9};
    for (int l = 0; l < 3; l++) glen[l] = zlib_member(text, tlen, levels[l], gz[l], sizeof gz[l]);
    unsigned char three[3 * 8192];     /* level 1 + level 9 + level 6: three members */
    memcpy(three, gz[0], glen[0]);
    memcpy(three + glen[0], gz[2], glen[2]);
    memcpy(three + glen[0] + glen[2], gz[1], glen[1]);
    size_t three_len = glen[0] + glen[1] + glen[2];
    size_t ig_len;
    unsigned char *ig = file_bytes(FIX "n1_igzip.nii.gz", &ig_len);
    size_t ig_want_len;
    unsigned char *ig_want = zlib_all(FIX "n1_igzip.nii.gz", &ig_want_len);

    struct { const unsigned char *gz; size_t n; const unsigned char *want; size_t want_len; size_t copies; } cases[] = {
        {gz[0], glen[0], text, tlen, 1}, {gz[1], glen[1], text, tlen, 1}, {gz[2], glen[2], text, tlen, 1},
        {three, three_len, text, tlen, 3}, {ig, ig_len, ig_want, ig_want_len, 1},
    };
    char mb[256];
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        for (size_t cap = 2; cap <= cases[c].n; cap++) {   /* 2: the magic is looked at in the first read */
            size_t have;
            const char *msg;
            unsigned char *out = through_source(cases[c].gz, cases[c].n, cap, &have, &msg, mb, sizeof mb);
            if (msg) fail_msg("case %zu, input pieces of %zu bytes: %s", c, cap, msg);
            int same = have == cases[c].want_len * cases[c].copies;
            for (size_t i = 0; same && i < cases[c].copies; i++)
                same = memcmp(out + i * cases[c].want_len, cases[c].want, cases[c].want_len) == 0;
            if (!same) fail_msg("case %zu, input pieces of %zu bytes: %zu bytes differ from zlib's", c, cap, have);
            free(out);
        }
    }
    free(ig);
    free(ig_want);
    free(text);
}

/* A stream cut at every length is refused as truncated, whatever the cut splits; a cut where a
 * member ends is the end of the data; bytes after the last member are refused. */
static void test_source_cut_everywhere(void **state)
{
    (void)state;
    size_t tlen;
    unsigned char *text = sample_text(&tlen), two[2 * 8192];
    size_t n1 = zlib_member(text, tlen, 6, two, sizeof two);
    size_t n2 = zlib_member(text, 500, 9, two + n1, sizeof two - n1);
    char mb[256];
    for (size_t cut = 2; cut < n1 + n2; cut++) {
        size_t have;
        const char *msg;
        unsigned char *out = through_source(two, cut, 64, &have, &msg, mb, sizeof mb);
        if (cut == n1) {
            assert_null(msg);
            assert_int_equal(have, tlen);
        } else if (!msg || strcmp(msg, "corrupt gzip data: truncated (unexpected end of file)") != 0) {
            fail_msg("cut at %zu of %zu: %s", cut, n1 + n2, msg ? msg : "accepted");
        }
        free(out);
    }
    memcpy(two + n1 + n2, "xyz", 3);
    size_t have;
    const char *msg;
    free(through_source(two, n1 + n2 + 3, 64, &have, &msg, mb, sizeof mb));
    assert_non_null(msg);
    assert_string_equal(msg, "corrupt gzip data: trailing garbage after the compressed stream");
    free(text);
}

/* Each byte of the trailer (CRC-32, then the length) flipped: "incorrect data check" at every
 * split, after the member's bytes were handed out. */
static void test_source_trailer_flips(void **state)
{
    (void)state;
    size_t tlen;
    unsigned char *text = sample_text(&tlen), gz[8192];
    size_t n = zlib_member(text, tlen, 9, gz, sizeof gz);
    char mb[256];
    for (size_t at = n - 8; at < n; at++) {
        gz[at] ^= 0x40;
        for (size_t cap = 2; cap <= n; cap += (cap < 40 ? 1 : 97)) {
            size_t have;
            const char *msg;
            free(through_source(gz, n, cap, &have, &msg, mb, sizeof mb));
            if (!msg || strcmp(msg, "corrupt gzip data: incorrect data check") != 0)
                fail_msg("trailer byte %zu flipped, pieces of %zu: %s", at, cap, msg ? msg : "accepted");
        }
        gz[at] ^= 0x40;
    }
    free(text);
}

/* A corrupt deflate stream in memory is worded by zlib itself; through a descriptor (a pipe:
 * nothing to read again) by ISA-L's code. */
static void test_corrupt_words(void **state)
{
    (void)state;
    static const unsigned char bad[] = "\x1f\x8b\x08\x00garbage-garbage-garbage";
    assert_string_equal(cs_gz_zlib_words(bad, 27), "invalid code lengths set");
    size_t tlen;
    unsigned char *text = sample_text(&tlen), gz[8192];
    size_t n = zlib_member(text, tlen, 6, gz, sizeof gz);
    assert_null(cs_gz_zlib_words(gz, n));            /* a sound stream: no words */
    assert_null(cs_gz_zlib_words(gz, n / 2));        /* cut short: no corruption either */
    int is_gz = 0;
    csl_src *s = cs_load_src_gunzip_if(cs_load_src_mem(bad, 27), 0, &is_gz);
    assert_non_null(s);
    const void *p;
    size_t k;
    assert_int_equal(cs_load_src_next(s, &p, &k), -1);
    assert_string_equal(cs_load_src_error(s), "corrupt gzip data: invalid code lengths set");
    cs_load_src_free(s);
    char mb[256];
    size_t have;
    const char *msg;
    free(through_source(bad, 27, 4096, &have, &msg, mb, sizeof mb));
    assert_non_null(msg);
    assert_string_equal(msg, "corrupt gzip data: invalid block type");
    free(text);
}

/* Which vector-register states are in use (XGETBV with ECX = 1: bit 2 the upper halves of
 * YMM0-15, bit 6 those of ZMM0-15); -1 where the CPU cannot say. */
static long long upper_state_in_use(void)
{
#if defined(__GNUC__) && defined(__x86_64__)
    unsigned a, b, c, d;
    if (!__get_cpuid_count(0xD, 1, &a, &b, &c, &d) || !(a & 4u)) return -1;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(1u));
    return (long long)(lo & ((1u << 2) | (1u << 6)));
#else
    return -1;
#endif
}

/* Reading leaves no upper vector-register state in use: ISA-L's AVX-512 CRC-32 returns with it
 * dirty, which made every legacy-SSE instruction after an inflate 2-3x slower (engine/gz). */
static void test_leaves_vector_state_clean(void **state)
{
    (void)state;
    if (upper_state_in_use() < 0) skip();
    size_t len;
    unsigned char *text = sample_text(&len), gz[8192], out[4096];
    size_t n = zlib_member(text, len, 6, gz, sizeof gz);
    cs_gz *g = cs_gz_open(cs_test_tmpfile(".gz", gz, n));
    assert_non_null(g);
    size_t got;
    const char *why = NULL;
    assert_int_equal(cs_gz_read(g, out, 1000, &got, &why), 0);   /* the first part, then the rest */
    assert_int_equal(upper_state_in_use(), 0);
    assert_int_equal(cs_gz_read(g, out + 1000, sizeof out - 1000, &got, &why), 0);
    assert_int_equal(upper_state_in_use(), 0);
    assert_int_equal(got, len - 1000);
    assert_memory_equal(out, text, len);
    cs_gz_close(g);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_source_split_everywhere),
        cmocka_unit_test(test_source_cut_everywhere),
        cmocka_unit_test(test_source_trailer_flips),
        cmocka_unit_test(test_corrupt_words),
        cmocka_unit_test(test_leaves_vector_state_clean),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
