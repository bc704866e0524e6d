/* Input limits and files that change while they load.
 *
 *  - header, field and row limits: every refusal with its place and wording, through the libcsv
 *    path and the fast path (1 and 3 threads), at lowered limits (cs_load_buffer_limited) just
 *    over and just at each limit, then once at the real default limits with files of a few MB;
 *  - control bytes in a header stop the load at the first one (plain and gzip);
 *  - the dataset's row limit (32-bit row indices) checked directly on cs_dataset_prepare;
 *  - a file truncated, grown or rewritten from the progress callback is refused with
 *    "FILE: file changed while loading" — on the mapped fast path (where a shrink used to
 *    kill the process with SIGBUS), the mapped libcsv path, a mapped gzip file and the read()
 *    path (stdin), and a .npy pair (read(), either file) — and the SIGBUS guard hands foreign
 *    signals on and restores the handler.
 * Timing and memory figures live in `make bench`, not here. */
#include "support/cs_test.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "engine/load/load_internal.h"

/* ---- both paths at given limits ----------------------------------------------------------- */

typedef struct outcome {
    cs_dataset *d;
    cs_error err;
    cs_load_summary sum;
} outcome;

static void release(outcome *o)
{
    cs_dataset_free(o->d);
    cs_load_summary_free(&o->sum);
}

/* Loads through libcsv and through the fast path with 1, 2 and 3 threads (when it applies; 2
 * threads over numbers only fold the newline count into the parse), checks they agree, and
 * leaves the libcsv result in *o. */
static void load_lim(outcome *o, const char *text, size_t len, const cs_load_options *opt,
                     const csl_limits *lim)
{
    cs_load_options defaults;
    if (!opt) { cs_load_options_default(&defaults); opt = &defaults; }
    cs_load_tuning tc = {CSL_PATH_CSV, 0, 0, 0, 0, 0};
    o->d = cs_load_buffer_limited("t.csv", text, len, opt, &o->sum, &o->err, &tc, lim);
    for (int run = 0; run < 6; run++) {      /* 1, 2 and 3 threads, each scanner (load_scan.h) */
        int threads = run < 2 ? 1 : run < 4 ? 2 : 3;
        cs_load_tuning tf = {CSL_PATH_FAST, 0, threads, 0, 0, run % 2 ? CSL_SCAN_SWAR : CSL_SCAN_SSE2};
        outcome f;
        f.d = cs_load_buffer_limited("t.csv", text, len, opt, &f.sum, &f.err, &tf, lim);
        if (!f.d && f.err.code == CS_EUSAGE && strstr(f.err.msg, "fast path not applicable")) {
            cs_load_summary_free(&f.sum);
            continue;
        }
        if ((o->d == NULL) != (f.d == NULL))
            fail_msg("paths disagree: csv '%s' fast '%s'", o->err.msg, f.err.msg);
        assert_int_equal(o->err.code, f.err.code);
        assert_string_equal(o->err.msg, f.err.msg);
        assert_int_equal(o->err.line, f.err.line);
        assert_int_equal(o->err.col, f.err.col);
        if (o->d) {
            assert_int_equal(o->d->n, f.d->n);
            assert_memory_equal(o->d->prob, f.d->prob, o->d->n * o->d->k * sizeof(double));
        }
        release(&f);
    }
}

static csl_limits limits(size_t rows, size_t header, size_t field)
{
    csl_limits l;
    cs_load_limits_default(&l);
    if (rows) l.rows = rows;
    if (header) l.header = header;
    if (field) l.field = field;
    return l;
}

static void expect_refused_lim(const char *text, size_t len, const cs_load_options *opt,
                               const csl_limits *lim, long line, long col, const char *msg)
{
    outcome o;
    load_lim(&o, text, len, opt, lim);
    if (o.d) fail_msg("accepted, expected '%s'", msg);
    assert_int_equal(o.err.code, CS_EINPUT);
    assert_string_equal(o.err.msg, msg);
    assert_int_equal(o.err.line, line);
    assert_int_equal(o.err.col, col);
    release(&o);
}

static size_t expect_loaded_lim(const char *text, size_t len, const cs_load_options *opt,
                                const csl_limits *lim)
{
    outcome o;
    load_lim(&o, text, len, opt, lim);
    if (!o.d) fail_msg("refused: %s", o.err.msg);
    size_t n = o.d->n;
    release(&o);
    return n;
}

#define S(lit) lit, sizeof(lit) - 1

/* Refusals that share options and limits: text (with its length: it may hold NUL bytes), place
 * and message. */
typedef struct refusal {
    const char *text;
    size_t len;
    long line, col;
    const char *msg;
} refusal;

static void expect_refusals(const refusal *r, size_t n, const cs_load_options *opt,
                            const csl_limits *lim)
{
    for (size_t i = 0; i < n; i++)
        expect_refused_lim(r[i].text, r[i].len, opt, lim, r[i].line, r[i].col, r[i].msg);
}

/* ---- control bytes in the header ------------------------------------------------------------ */

static void test_header_control_bytes(void **state)
{
    (void)state;
    csl_limits def = limits(0, 0, 0);
    static const refusal bad[] = {
        {S("label,p\0_a,p_b\n0,0.5,0.5\n"), 1, 2,
         "t.csv:1:2: control byte \\x00 in the header (not a text CSV file?)"},
        /* placed after blank lines, in the third field, whatever the delimiter */
        {S("\n  \nlabel;p_a;p_b\x01\n0;0.5;0.5\n"), 3, 3,
         "t.csv:3:3: control byte \\x01 in the header (not a text CSV file?)"},
        {S("label,p_a,p_b\x7f\n0,0.5,0.5\n"), 1, 3,
         "t.csv:1:3: control byte \\x7f in the header (not a text CSV file?)"},
        {S("\0\0\0\0\0\0\0\0"), 1, 1,
         "t.csv:1:1: control byte \\x00 in the header (not a text CSV file?)"},
        /* a BOM is not a control byte; inside quotes a control byte is still refused */
        {S("\xEF\xBB\xBFlabel,\"p_\x02\",p_b\n0,0.5,0.5\n"), 1, 2,
         "t.csv:1:2: control byte \\x02 in the header (not a text CSV file?)"},
    };
    expect_refusals(bad, sizeof bad / sizeof *bad, NULL, &def);

    /* tab, CR, LF and a control byte chosen as the delimiter are fine */
    assert_int_equal(expect_loaded_lim(S("label\tp_a\tp_b\r\n0\t0.5\t0.5\r\n"), NULL, &def), 1);
    cs_load_options o;
    cs_load_options_default(&o);
    o.delimiter = '\x1f';
    assert_int_equal(expect_loaded_lim(S("label\x1fp_a\x1fp_b\n1\x1f" "0.5\x1f" "0.5\n"), &o, &def), 1);
    /* a data row may hold a control byte in an ignored column; without a header nothing is
     * a header byte */
    assert_int_equal(expect_loaded_lim(S("label,p,note\n0,0.5,a\x01z\n"), NULL, &def), 1);
    cs_load_options_default(&o);
    o.no_header = 1;
    expect_refused_lim(S("0,0.5\x01\n"), &o, &def, 1, 2,
                       "t.csv:1:2: non-numeric value '0.5\\x01' in column 'p'");
}

/* ---- header length -------------------------------------------------------------------------- */

static void test_header_limit(void **state)
{
    (void)state;
    csl_limits l = limits(0, 16, 0);
    /* the header must end (its LF) within the first 16 bytes */
    assert_int_equal(expect_loaded_lim(S("label,p_a,p_b,x\n0,0.5,0.5,y\n"), NULL, &l), 1);
    expect_refused_lim(S("label,p_a,p_b,xy\n0,0.5,0.5,y\n"), NULL, &l, 1, 4,
                       "t.csv:1:4: header longer than 16 bytes (the limit)");
    /* blank lines before the header count; the place is the header's line */
    expect_refused_lim(S("\n\n\n\n\n\nlabel,p_a,p_b\n0,0.5,0.5\n"), NULL, &l, 7, 3,
                       "t.csv:7:3: header longer than 16 bytes (the limit)");
    /* an open quote says so */
    expect_refused_lim(S("label,\"p_a,p_b\n0,0.5,0.5\n"), NULL, &l, 1, 2,
                       "t.csv:1:2: header longer than 16 bytes (the limit; a quote is still open"
                       " there)");
    /* a header-only file shorter than the limit is judged as before */
    expect_refused_lim(S("label,p_a,p_b"), NULL, &l, 1, 1,
                       "t.csv:1:1: header only, no data rows");
    /* without a header the first line is data: the header limit does not apply */
    cs_load_options o;
    cs_load_options_default(&o);
    o.no_header = 1;
    assert_int_equal(expect_loaded_lim(S("0,0.25,0.25,0.25,0.25\n1,0.25,0.25,0.25,0.25\n"), &o, &l), 2);
}

/* ---- field length --------------------------------------------------------------------------- */

static void test_field_limit(void **state)
{
    (void)state;
    csl_limits l = limits(0, 0, 8);
    /* at the limit: loads, on both paths */
    assert_int_equal(expect_loaded_lim(S("label,p,note\n0,0.5,12345678\n"), NULL, &l), 1);
    assert_int_equal(expect_loaded_lim(S("label,p,note\n0,0.5,\"12345678\"\n"), NULL, &l), 1);
    /* one byte over: a located refusal, whatever the column (ignored, number, header); a quoted
     * field spanning lines is placed at the line its row starts on */
    static const refusal over[] = {
        {S("label,p,note\n0,0.5,x\n1,0.5,123456789\n"), 3, 3,
         "t.csv:3:3: field longer than 8 bytes (the limit)"},
        {S("label,p,note\n0,0.5,x\n1,0.5,\"123456789\"\n"), 3, 3,
         "t.csv:3:3: field longer than 8 bytes (the limit)"},
        {S("label,p\n0,0.50000000\n"), 2, 2, "t.csv:2:2: field longer than 8 bytes (the limit)"},
        {S("label,p,notenote1\n0,0.5,x\n"), 1, 3,
         "t.csv:1:3: field longer than 8 bytes (the limit)"},
        /* a header column refused (the duplicate label) before the long field: the field
         * still comes first, as libcsv reads the whole header before judging its names (the
         * fast path, which judges column by column, must check the rest of the line) */
        {S("label,label,notenote1\n0,0,x\n"), 1, 3,
         "t.csv:1:3: field longer than 8 bytes (the limit)"},
        {S("label,p,note\n0,0.5,\"a\nb\nc\nd\"\n1,0.5,\"123\n5678\n\"\n"), 6, 3,
         "t.csv:6:3: field longer than 8 bytes (the limit)"},
    };
    expect_refusals(over, sizeof over / sizeof *over, NULL, &l);
    /* fatal even with --skip-bad-rows: the load stops at the field */
    cs_load_options o;
    cs_load_options_default(&o);
    o.skip_bad_rows = 1;
    expect_refused_lim(S("label,p,note\n7,0.5,x\n1,0.5,123456789\n0,0.5,x\n"), &o, &l, 3, 3,
                       "t.csv:3:3: field longer than 8 bytes (the limit)");
    /* a ragged row's extra fields are counted, not kept (and still must fit the limit) */
    outcome r;
    load_lim(&r, S("label,p\n0,0.5,a,b,c,d,e,f,g,h,i,j,k\n"), NULL, &l);
    assert_null(r.d);
    assert_string_equal(r.err.msg, "t.csv:2:3: ragged row: 13 fields, expected 2");
    release(&r);
}

/* ---- row count ------------------------------------------------------------------------------ */

static void test_row_limit(void **state)
{
    (void)state;
    csl_limits l = limits(3, 0, 0);
    assert_int_equal(expect_loaded_lim(S("label,p\n0,0.1\n\n1,0.2\n0,0.3\n\n"), NULL, &l), 3);
    /* blank lines are not rows; the place is the first row over the limit */
    expect_refused_lim(S("label,p\n0,0.1\n\n1,0.2\n0,0.3\n  \n1,0.4\n0,0.5\n"), NULL, &l, 7, 1,
                       "t.csv:7:1: more than 3 data rows (the limit)");
    /* bad rows count as rows, and --skip-bad-rows does not lift the limit */
    cs_load_options o;
    cs_load_options_default(&o);
    o.skip_bad_rows = 1;
    expect_refused_lim(S("label,p\n0,0.1\n9,0.2\n0,x\n1,0.4\n"), &o, &l, 5, 1,
                       "t.csv:5:1: more than 3 data rows (the limit)");
    /* headerless: the first line is a row */
    cs_load_options_default(&o);
    o.no_header = 1;
    expect_refused_lim(S("0,0.1\n1,0.2\n0,0.3\n1,0.4\n"), &o, &l, 4, 1,
                       "t.csv:4:1: more than 3 data rows (the limit)");
    /* a final line without LF is a row; CRLF and a blank CR tail are not extra rows */
    expect_refused_lim(S("label,p\r\n0,0.1\r\n1,0.2\r\n\r\n0,0.3\r\n1,0.4"), NULL, &l, 6, 1,
                       "t.csv:6:1: more than 3 data rows (the limit)");
    assert_int_equal(expect_loaded_lim(S("label,p\r\n0,0.1\r\n1,0.2\r\n0,0.3\r\n\r"), NULL, &l), 3);

    /* a longer file cut over 3 threads: the row over the limit is found in whichever chunk */
    size_t cap = 64 * 1024, len = 0;
    char *t = malloc(cap);
    assert_non_null(t);
    len += (size_t)snprintf(t, cap, "label,p\n");
    for (int i = 0; i < 3000; i++)
        len += (size_t)snprintf(t + len, cap - len, i % 7 == 3 ? "\n%d,0.%d\n" : "%d,0.%d\n",
                                i % 2, i % 10);
    for (size_t lim_rows = 1000; lim_rows <= 2500; lim_rows += 1500) {
        /* the line of row lim_rows + 1: the header, the rows, one blank line per 7 rows */
        size_t r = lim_rows;              /* 0-based index of the first row over */
        long line = 2 + (long)r + (long)((r + 4) / 7);
        char want[128];
        snprintf(want, sizeof want, "t.csv:%ld:1: more than %zu data rows (the limit)", line,
                 lim_rows);
        csl_limits lr = limits(lim_rows, 0, 0);
        expect_refused_lim(t, len, NULL, &lr, line, 1, want);
    }
    csl_limits l3000 = limits(3000, 0, 0);
    assert_int_equal(expect_loaded_lim(t, len, NULL, &l3000), 3000);
    free(t);
}

/* The dataset's own limit, checked before anything is read or allocated: no 2^31-row file is
 * needed to see it refuse. */
static void test_dataset_row_limit(void **state)
{
    (void)state;
    assert_int_equal(CS_DATASET_MAX_ROWS, 2147483647u);
    cs_dataset d;
    memset(&d, 0, sizeof d);
    char path[] = "big.csv";
    d.path = path;
    d.k = 2;
    d.n = CS_DATASET_MAX_ROWS + 1;    /* prob and label stay NULL: nothing may be touched */
    cs_error err;
    assert_int_equal(cs_dataset_prepare(&d, NULL, &err), CS_EINPUT);
    assert_string_equal(err.msg, "big.csv: 2147483648 rows, more than the 2147483647 a dataset"
                                 " may hold");
    assert_null(d.conf);
    assert_null(d.sample_rows);
    /* the loader's default limit is the same number */
    csl_limits l;
    cs_load_limits_default(&l);
    assert_int_equal(l.rows, CS_DATASET_MAX_ROWS);
    assert_int_equal(l.header, 4u << 20);
    assert_int_equal(l.field, 1u << 20);
}

/* ---- the default limits, with real files -------------------------------------------------- */

static char *gzip_bytes(const char *src, size_t n, size_t *out_len)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    assert_int_equal(deflateInit2(&z, 1, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
    size_t cap = deflateBound(&z, (uLong)n);
    char *out = malloc(cap);
    assert_non_null(out);
    z.next_in = (Bytef *)(uintptr_t)src;
    z.avail_in = (uInt)n;
    z.next_out = (Bytef *)out;
    z.avail_out = (uInt)cap;
    assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
    *out_len = z.total_out;
    deflateEnd(&z);
    return out;
}

static void expect_file_refused(const char *path, const char *suffix_msg)
{
    cs_error err;
    cs_load_summary sum;
    cs_dataset *d = cs_load_file(path, NULL, &sum, &err);
    if (d) fail_msg("%s accepted, expected '%s'", path, suffix_msg);
    char want[512];
    snprintf(want, sizeof want, "%s:%s", path, suffix_msg);
    assert_int_equal(err.code, CS_EINPUT);
    assert_string_equal(err.msg, want);
    cs_load_summary_free(&sum);
}

static void test_default_limits_files(void **state)
{
    (void)state;
    size_t big = CS_LOAD_MAX_HEADER_BYTES + 64, len;
    char *t = malloc(big + 64);
    assert_non_null(t);

    /* 8 MiB of NUL bytes, plain and gzipped: refused at the first byte */
    size_t nz = (size_t)8 << 20, gzlen;
    char *zeros = calloc(1, nz);
    assert_non_null(zeros);
    const char *nul_msg = "1:1: control byte \\x00 in the header (not a text CSV file?)";
    expect_file_refused(cs_test_tmpfile(".csv", zeros, nz), nul_msg);
    char *gz = gzip_bytes(zeros, nz, &gzlen);
    expect_file_refused(cs_test_tmpfile(".csv.gz", gz, gzlen), nul_msg);
    free(gz);
    free(zeros);

    /* a header that does not end within 4 MiB */
    len = (size_t)snprintf(t, big, "label,p_a,p_b,");
    memset(t + len, 'x', big - len - 1);
    t[big - 1] = '\n';
    expect_file_refused(cs_test_tmpfile(".csv", t, big),
                        "1:4: header longer than 4194304 bytes (the limit)");

    /* a field of exactly 1 MiB loads; one byte more is refused, plain and gzipped */
    for (int over = 0; over <= 1; over++) {
        len = (size_t)snprintf(t, big, "label,p,note\n0,0.5,x\n1,0.5,");
        size_t f = CS_LOAD_MAX_FIELD_BYTES + (size_t)over;
        memset(t + len, 'y', f);
        len += f;
        len += (size_t)snprintf(t + len, 64, "\n0,0.25,z\n");
        for (int zip = 0; zip <= 1; zip++) {
            const char *path;
            if (zip) {
                char *g = gzip_bytes(t, len, &gzlen);
                path = cs_test_tmpfile(".csv.gz", g, gzlen);
                free(g);
            } else {
                path = cs_test_tmpfile(".csv", t, len);
            }
            if (over) {
                expect_file_refused(path, "3:3: field longer than 1048576 bytes (the limit)");
            } else {
                cs_error err;
                cs_dataset *d = cs_load_file(path, NULL, NULL, &err);
                if (!d) fail_msg("%s refused: %s", path, err.msg);
                assert_int_equal(d->n, 3);
                cs_dataset_free(d);
            }
        }
    }
    free(t);
}

/* ---- files that change while they load ------------------------------------------------------ */

enum { ACT_TRUNCATE, ACT_APPEND, ACT_TOUCH, ACT_RAISE, ACT_NONE };

typedef struct change_ctx {
    const char *path;
    int action;
    off_t to;             /* ACT_TRUNCATE: new size */
    int calls;
} change_ctx;

/* Acts once, at the first progress call: on the fast path that is before the first byte is
 * read, on the libcsv paths right after the first block. No clock is involved. */
static void on_progress(void *ctx, double frac)
{
    (void)frac;
    change_ctx *c = ctx;
    if (c->calls++) return;
    switch (c->action) {
    case ACT_TRUNCATE:
        assert_int_equal(truncate(c->path, c->to), 0);
        break;
    case ACT_APPEND: {
        int fd = open(c->path, O_WRONLY | O_APPEND);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, "1,0.1,0.2,0.7\n", 14), 14);
        close(fd);
        break;
    }
    case ACT_TOUCH: {
        /* same size, same bytes, another modification time: an in-place rewrite */
        struct timespec ts[2] = {{0, UTIME_OMIT}, {1000000000, 123}};
        assert_int_equal(utimensat(AT_FDCWD, c->path, ts, 0), 0);
        break;
    }
    case ACT_RAISE:
        raise(SIGBUS);     /* a SIGBUS that is not the loader's */
        break;
    default:
        break;
    }
}

/* A quote-free K = 3 file of `rows` rows (about 16 bytes a row). */
static char *make_csv(size_t rows, size_t *len)
{
    size_t cap = rows * 32 + 64, n = 0;
    char *t = malloc(cap);
    assert_non_null(t);
    n += (size_t)snprintf(t, cap, "label,p_a,p_b,p_c\n");
    for (size_t i = 0; i < rows; i++) {
        unsigned a = (unsigned)(i * 7919u % 500u), b = (unsigned)(i * 104729u % 400u);
        n += (size_t)snprintf(t + n, cap - n, "%zu,%.3f,%.3f,%.3f\n", i % 3, a / 1000.0,
                              b / 1000.0, (1000u - a - b) / 1000.0);
    }
    *len = n;
    return t;
}

static const char *write_file(const char *suffix, const char *text, size_t len, int zip)
{
    if (!zip) return cs_test_tmpfile(suffix, text, len);
    size_t gl;
    char *g = gzip_bytes(text, len, &gl);
    const char *p = cs_test_tmpfile(suffix, g, gl);
    free(g);
    return p;
}

/* Loads path (or stdin redirected from it) with the action in the progress callback and
 * returns the outcome. */
static void load_changing(outcome *o, const char *path, int action, off_t to, int via_stdin)
{
    change_ctx c = {path, action, to, 0};
    cs_load_options opt;
    cs_load_options_default(&opt);
    opt.progress = on_progress;
    opt.progress_ctx = &c;
    if (via_stdin) {
        int saved = dup(STDIN_FILENO), fd = open(path, O_RDONLY);
        assert_true(saved >= 0 && fd >= 0);
        assert_int_equal(dup2(fd, STDIN_FILENO), STDIN_FILENO);
        close(fd);
        o->d = cs_load_file("-", &opt, &o->sum, &o->err);
        assert_int_equal(dup2(saved, STDIN_FILENO), STDIN_FILENO);
        close(saved);
    } else {
        o->d = cs_load_file(path, &opt, &o->sum, &o->err);
    }
    assert_true(c.calls >= 1);
}

static void expect_changed(const char *path, int action, off_t to, int via_stdin)
{
    outcome o;
    load_changing(&o, path, action, to, via_stdin);
    if (o.d) fail_msg("%s: a file changed while loading was used (%zu rows)", path, o.d->n);
    char want[512];
    snprintf(want, sizeof want, "%s: file changed while loading", via_stdin ? "-" : path);
    assert_int_equal(o.err.code, CS_EINPUT);
    assert_string_equal(o.err.msg, want);
    assert_int_equal(o.sum.rows_used, 0);
    assert_null(o.sum.skipped);
    release(&o);
}

static void test_file_shrinks_while_loading(void **state)
{
    (void)state;
    size_t len;
    char *t = make_csv(400000, &len);        /* ~6.4 MB: the fast path uses 2+ threads */
    /* the mapped fast path (the SIGBUS case), the mapped libcsv path, a mapped gzip file,
     * and stdin (read()); truncated to a page, to a few bytes inside the header, to nothing */
    const off_t sizes[] = {4096, 5, 0};
    for (int mode = 0; mode < 4; mode++) {
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
            if (mode == 1) setenv("CALSCOPE_LOADER", "csv", 1);
            const char *path = write_file(mode == 2 ? ".csv.gz" : ".csv", t, len, mode == 2);
            expect_changed(path, ACT_TRUNCATE, sizes[s], mode == 3);
            unsetenv("CALSCOPE_LOADER");
        }
    }
    free(t);
}

static void test_file_grows_or_is_rewritten(void **state)
{
    (void)state;
    size_t len;
    char *t = make_csv(400000, &len);
    for (int mode = 0; mode < 4; mode++) {
        for (int action = ACT_APPEND; action <= ACT_TOUCH; action++) {
            if (mode == 1) setenv("CALSCOPE_LOADER", "csv", 1);
            const char *path = write_file(mode == 2 ? ".csv.gz" : ".csv", t, len, mode == 2);
            expect_changed(path, action, 0, mode == 3);
            unsetenv("CALSCOPE_LOADER");
        }
    }
    /* replaced under its name by a rename: refused too (the name now means another file) */
    const char *path = write_file(".csv", t, len, 0);
    char moved[4200];
    snprintf(moved, sizeof moved, "%s.new", path);
    assert_int_equal(rename(path, moved), 0);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("label,p\n0,0.5\n", f);
    fclose(f);
    /* the open happened first: load the moved file's fd while its name points elsewhere */
    outcome o;
    int fd = open(moved, O_RDONLY);
    assert_true(fd >= 0);
    struct stat before;
    assert_int_equal(fstat(fd, &before), 0);
    o.d = cs_test_dataset_new(1, 2);
    memset(&o.sum, 0, sizeof o.sum);
    cs_error_clear(&o.err);
    o.d = cs_load_refuse_changed(path, fd, &before, 0, o.d, &o.sum, &o.err);
    assert_null(o.d);
    char want[4300];
    snprintf(want, sizeof want, "%s: file changed while loading", path);
    assert_string_equal(o.err.msg, want);
    close(fd);
    unlink(moved);
    /* an unchanged file under the same checks loads */
    path = write_file(".csv", t, len, 0);
    load_changing(&o, path, ACT_NONE, 0, 0);
    if (!o.d) fail_msg("%s", o.err.msg);
    assert_int_equal(o.d->n, 400000);
    release(&o);
    load_changing(&o, path, ACT_NONE, 0, 1);
    assert_non_null(o.d);
    assert_int_equal(o.d->n, 400000);
    release(&o);
    free(t);
}

/* ---- a .npy pair (read(), not mapped) that changes while it loads ------------------------- */

/* A .npy file of an array of doubles, shape (rows, cols) or (rows,) when cols is 0, holding
 * values[i] = f(i). */
static const char *write_npy(size_t rows, size_t cols, double (*f)(size_t))
{
    char dict[128];
    int dl = cols ? snprintf(dict, sizeof dict, "{'descr': '<f8', 'fortran_order': False, 'shape': (%zu, %zu), }", rows, cols)
                  : snprintf(dict, sizeof dict, "{'descr': '<f8', 'fortran_order': False, 'shape': (%zu,), }", rows);
    size_t hlen = ((size_t)dl + 1 + 10 + 63) / 64 * 64 - 10;   /* 10 + hlen: a multiple of 64 */
    size_t n = rows * (cols ? cols : 1), len = 10 + hlen + n * 8;
    unsigned char *b = malloc(len);
    assert_non_null(b);
    memcpy(b, "\x93NUMPY\x01\x00", 8);
    b[8] = (unsigned char)(hlen & 255);
    b[9] = (unsigned char)(hlen >> 8);
    memset(b + 10, ' ', hlen);
    memcpy(b + 10, dict, (size_t)dl);
    b[10 + hlen - 1] = '\n';
    for (size_t i = 0; i < n; i++) {
        double v = f(i);
        memcpy(b + 10 + hlen + i * 8, &v, 8);    /* little-endian machines only, as '<f8' says */
    }
    const char *path = cs_test_tmpfile(".npy", b, len);
    free(b);
    return path;
}

static double npy_prob(size_t i) { return i % 3 == 0 ? 0.5 : 0.25; }
static double npy_label(size_t i) { return (double)(i % 3); }

/* Loads probs with labels, the action applied to `changing` at the first progress call (after
 * the labels are read, before the first block of rows). */
static void load_npy_changing(outcome *o, const char *probs, const char *labels, const char *changing,
                              int action, off_t to)
{
    change_ctx c = {changing, action, to, 0};
    cs_load_options opt;
    cs_load_options_default(&opt);
    opt.labels = labels;
    opt.progress = on_progress;
    opt.progress_ctx = &c;
    o->d = cs_load_file(probs, &opt, &o->sum, &o->err);
    assert_true(c.calls >= 1);
}

static void test_npy_changes_while_loading(void **state)
{
    (void)state;
    const size_t rows = 200000;        /* several blocks of rows (progress between them) */
    for (int which = 0; which < 2; which++) {
        for (int action = ACT_TRUNCATE; action <= ACT_TOUCH; action++) {
            const char *probs = write_npy(rows, 3, npy_prob), *labels = write_npy(rows, 0, npy_label);
            const char *changing = which ? labels : probs;
            outcome o;
            load_npy_changing(&o, probs, labels, changing, action, 128 + 8 * 1000);
            if (o.d) fail_msg("%s: a file changed while loading was used (%zu rows)", changing, o.d->n);
            char want[512];
            snprintf(want, sizeof want, "%s: file changed while loading", changing);
            assert_int_equal(o.err.code, CS_EINPUT);
            assert_string_equal(o.err.msg, want);
            release(&o);
        }
    }
    /* unchanged: loads every row */
    const char *probs = write_npy(rows, 3, npy_prob), *labels = write_npy(rows, 0, npy_label);
    outcome o;
    load_npy_changing(&o, probs, labels, probs, ACT_NONE, 0);
    if (!o.d) fail_msg("%s", o.err.msg);
    assert_int_equal(o.d->n, rows);
    release(&o);
}

/* ---- the SIGBUS guard: restores the handler, hands foreign signals on ---------------------- */

static volatile sig_atomic_t foreign_bus;

static void count_bus(int sig, siginfo_t *si, void *uc)
{
    (void)sig; (void)si; (void)uc;
    foreign_bus++;
}

static void test_sigbus_guard_chains(void **state)
{
    (void)state;
    size_t len;
    char *t = make_csv(20000, &len);
    const char *path = write_file(".csv", t, len, 0);
    struct sigaction mine, old, now;
    memset(&mine, 0, sizeof mine);
    mine.sa_sigaction = count_bus;
    mine.sa_flags = SA_SIGINFO;
    sigemptyset(&mine.sa_mask);
    assert_int_equal(sigaction(SIGBUS, &mine, &old), 0);

    /* a SIGBUS raised during a load reaches the program's handler, and the load is unharmed */
    foreign_bus = 0;
    outcome o;
    load_changing(&o, path, ACT_RAISE, 0, 0);
    assert_int_equal(foreign_bus, 1);
    if (!o.d) fail_msg("%s", o.err.msg);
    assert_int_equal(o.d->n, 20000);
    release(&o);
    /* and the program's handler is in place again afterwards */
    assert_int_equal(sigaction(SIGBUS, NULL, &now), 0);
    assert_true(now.sa_flags & SA_SIGINFO);
    assert_ptr_equal((void *)(uintptr_t)now.sa_sigaction, (void *)(uintptr_t)count_bus);
    assert_int_equal(sigaction(SIGBUS, &old, NULL), 0);

    /* with the default action, a foreign SIGBUS during a load still ends the process */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGBUS, SIG_DFL);
        outcome c;
        load_changing(&c, path, ACT_RAISE, 0, 0);
        _exit(0);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGBUS);
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header_control_bytes),
        cmocka_unit_test(test_header_limit),
        cmocka_unit_test(test_field_limit),
        cmocka_unit_test(test_row_limit),
        cmocka_unit_test(test_dataset_row_limit),
        cmocka_unit_test(test_default_limits_files),
        cmocka_unit_test(test_file_shrinks_while_loading),
        cmocka_unit_test(test_file_grows_or_is_rewritten),
        cmocka_unit_test(test_npy_changes_while_loading),
        cmocka_unit_test(test_sigbus_guard_chains),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
