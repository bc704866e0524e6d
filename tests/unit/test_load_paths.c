/* The two loader paths must agree exactly: same arrays bit for bit, same messages, same
 * counts — whatever the libcsv feed size and however many threads the fast path uses. */
#include "support/cs_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include "engine/load/load_internal.h"

typedef struct outcome {
    cs_dataset *d;
    cs_error err;
    cs_load_summary sum;
} outcome;

static void run_scan(outcome *o, const char *text, size_t len, const cs_load_options *opt,
                     int path, size_t block, int threads, int scan)
{
    cs_load_tuning t = {path, block, threads, 0, 0, scan};
    o->d = cs_load_buffer_tuned("p.csv", text, len, opt, &o->sum, &o->err, &t);
    if (!o->d && o->err.code == CS_EUSAGE) fail_msg("path %d not applicable: %s", path, o->err.msg);
}

static void same(const outcome *a, const outcome *b);
static void release(outcome *o);

/* One load; on the fast path with both scanners (load_scan.h), which must agree bit for bit
 * and message for message (the SSE2 result is kept). */
static void run(outcome *o, const char *text, size_t len, const cs_load_options *opt, int path,
                size_t block, int threads)
{
    run_scan(o, text, len, opt, path, block, threads, CSL_SCAN_SSE2);
    if (path != CSL_PATH_FAST) return;
    outcome w;
    run_scan(&w, text, len, opt, path, block, threads, CSL_SCAN_SWAR);
    same(o, &w);
    release(&w);
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
    assert_int_equal(a->sum.rows_renormalized, b->sum.rows_renormalized);
    assert_int_equal(a->sum.n_skipped_messages, b->sum.n_skipped_messages);
    for (size_t i = 0; i < a->sum.n_skipped_messages; i++)
        assert_string_equal(a->sum.skipped[i], b->sum.skipped[i]);
    if (!a->d) return;
    const cs_dataset *x = a->d, *y = b->d;
    assert_int_equal(x->n, y->n);
    assert_int_equal(x->k, y->k);
    assert_memory_equal(x->prob, y->prob, x->n * x->k * sizeof(double));
    assert_memory_equal(x->label, y->label, x->n * sizeof(int32_t));
    assert_int_equal(x->logit == NULL, y->logit == NULL);
    if (x->logit) assert_memory_equal(x->logit, y->logit, x->n * x->k * sizeof(double));
    assert_int_equal(x->id == NULL, y->id == NULL);
    if (x->id) {
        assert_memory_equal(x->id, y->id, x->n * sizeof(int32_t));
        assert_int_equal(x->n_ids, y->n_ids);
        for (size_t i = 0; i < x->n_ids; i++) assert_string_equal(x->id_names[i], y->id_names[i]);
    }
    assert_int_equal(x->tta == NULL, y->tta == NULL);
    if (x->tta) assert_memory_equal(x->tta, y->tta, x->n * sizeof(int32_t));
    assert_int_equal(x->case_id == NULL, y->case_id == NULL);
    if (x->case_id) {
        assert_memory_equal(x->case_id, y->case_id, x->n * sizeof(int32_t));
        assert_int_equal(x->n_cases, y->n_cases);
        for (size_t i = 0; i < x->n_cases; i++) assert_string_equal(x->case_names[i], y->case_names[i]);
    }
    assert_int_equal(x->split == NULL, y->split == NULL);
    if (x->split) {
        assert_memory_equal(x->split, y->split, x->n * sizeof(int32_t));
        assert_int_equal(x->n_splits, y->n_splits);
        for (size_t i = 0; i < x->n_splits; i++) assert_string_equal(x->split_names[i], y->split_names[i]);
    }
}

static void release(outcome *o)
{
    cs_dataset_free(o->d);
    cs_load_summary_free(&o->sum);
}

static unsigned long long rs = 0x9E3779B97F4A7C15ull;
static unsigned long long rnd(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return rs;
}

/* A logit file with numbers in many spellings: the fast path's quick scanner, its general
 * splitter and strtod all get exercised, and every value is checked against strtod. */
static char *random_logit_file(size_t rows, size_t *len)
{
    size_t cap = rows * 160 + 64, o = 0;
    char *b = malloc(cap);
    assert_non_null(b);
    o += (size_t)snprintf(b, cap, "label,logit_a,logit_b,logit_c,note\n");
    for (size_t i = 0; i < rows; i++) {
        o += (size_t)snprintf(b + o, cap - o, "%d", (int)(rnd() % 3));
        for (int j = 0; j < 3; j++) {
            double x = ((double)(rnd() >> 11) / 9007199254740992.0 - 0.5) * pow(10, (int)(rnd() % 9) - 4);
            int prec = 1 + (int)(rnd() % 18);
            switch (rnd() % 6) {
            case 0: o += (size_t)snprintf(b + o, cap - o, ",%.*g", prec, x); break;
            case 1: o += (size_t)snprintf(b + o, cap - o, ",%.*e", prec, x); break;
            case 2: o += (size_t)snprintf(b + o, cap - o, ",%.*f", prec, x); break;
            case 3: o += (size_t)snprintf(b + o, cap - o, ", %.*g ", prec, x); break;
            case 4: o += (size_t)snprintf(b + o, cap - o, ",%+.*g", prec, x); break;
            default: o += (size_t)snprintf(b + o, cap - o, ",%.*E", prec, x); break;
            }
        }
        o += (size_t)snprintf(b + o, cap - o, ",n%zu\n", i % 7);
    }
    *len = o;
    return b;
}

static void test_random_numbers_bit_identical(void **state)
{
    (void)state;
    size_t len;
    char *text = random_logit_file(20000, &len);
    cs_load_options opt;
    cs_load_options_default(&opt);
    outcome c, f1, f2;
    run(&c, text, len, &opt, CSL_PATH_CSV, 0, 0);
    run(&f1, text, len, &opt, CSL_PATH_FAST, 0, 1);
    run(&f2, text, len, &opt, CSL_PATH_FAST, 0, 2);
    if (!c.d) fail_msg("%s", c.err.msg);
    same(&c, &f1);
    same(&c, &f2);
    /* the logits are exactly what strtod reads from the same text */
    const char *p = strchr(text, '\n') + 1;
    for (size_t i = 0; i < c.d->n; i++) {
        char *e;
        strtol(p, &e, 10);
        for (int j = 0; j < 3; j++) {
            assert_int_equal(*e, ',');
            double want = strtod(e + 1, &e);
            e += strspn(e, " ");
            double got = c.d->logit[i * 3 + (size_t)j];
            if (memcmp(&got, &want, sizeof got) != 0)
                fail_msg("row %zu col %d: %.17g vs strtod %.17g", i, j, got, want);
        }
        p = strchr(p, '\n') + 1;
    }
    release(&c);
    release(&f1);
    release(&f2);
    free(text);
}

/* A file with good rows, blank lines and bad rows of every kind spread through it. */
static char *mixed_file(size_t rows, size_t *len, int crlf)
{
    size_t cap = rows * 64 + 64, o = 0;
    char *b = malloc(cap);
    assert_non_null(b);
    const char *nl = crlf ? "\r\n" : "\n";
    o += (size_t)snprintf(b, cap, "label,p_a,p_b,p_c,tta,id%s", nl);   /* an id a row */
    static const char *bad[] = {"1,0.2,0.3", "1,x,0.5,0.5,0", "1,,0.5,0.5,0", "1,nan,0.5,0.5,0",
                                "1,1.5,0,0,0", "1,0.2,0.2,0.2,0", "3,0.2,0.3,0.5,0",
                                "0.5,0.2,0.3,0.5,0", "zz,0.2,0.3,0.5,0", "1,0.2,0.3,0.5,-2", "",
                                "  ", "1, 0.2 ,0.3,0.5,1", "b,0.2,0.3,0.5,0", "1,0.2,0.3,0.5,0,9"};
    for (size_t i = 0; i < rows; i++) {
        unsigned long long r = rnd();
        const char *bad_row = bad[(r / 10) % 15];
        if (r % 10 == 0 && strspn(bad_row, " ") == strlen(bad_row))   /* a blank line */
            o += (size_t)snprintf(b + o, cap - o, "%s%s", bad_row, nl);
        else if (r % 10 == 0)
            o += (size_t)snprintf(b + o, cap - o, "%s,i%zu%s", bad_row, i, nl);
        else   /* 1 in 8 a tta 1 on a row of its own id: no tta 0 row, a bad row too */
            o += (size_t)snprintf(b + o, cap - o, "%d,%.3f,%.3f,%.3f,%d,i%zu%s", (int)(r % 3),
                                  (double)(r % 500) / 1000, 0.25, 0.75 - (double)(r % 500) / 1000,
                                  (int)((r >> 20) % 8 == 0), i, nl);
    }
    *len = o;
    return b;
}

static void test_mixed_file_all_paths(void **state)
{
    (void)state;
    for (int crlf = 0; crlf <= 1; crlf++)
        for (int skip = 0; skip <= 1; skip++) {
            size_t len;
            char *text = mixed_file(3000, &len, crlf);
            cs_load_options opt;
            cs_load_options_default(&opt);
            opt.skip_bad_rows = skip;
            outcome c, f;
            run(&c, text, len, &opt, CSL_PATH_CSV, 0, 0);
            assert_true(c.sum.rows_rejected > 100);
            if (skip) assert_non_null(c.d);
            for (int th = 1; th <= 5; th++) {
                run(&f, text, len, &opt, CSL_PATH_FAST, 0, th);
                same(&c, &f);
                release(&f);
            }
            release(&c);
            free(text);
        }
}

/* A split column (split_column option) among id and case columns, with blank, padded and
 * empty values: both paths, strict and skipping, any feed size, intern the same strings in
 * the same order. */
static char *split_file(size_t rows, size_t *len)
{
    size_t cap = rows * 64 + 64, o = 0;
    char *b = malloc(cap);
    assert_non_null(b);
    o += (size_t)snprintf(b, cap, "id,label,p_a,p_b,Fold,case,note\n");
    static const char *val[] = {"fit", "eval", " fit", "eval ", "Train", "", "test", "f\t1"};
    for (size_t i = 0; i < rows; i++) {
        unsigned long long r = rnd();
        if (r % 97 == 0) { o += (size_t)snprintf(b + o, cap - o, "\n"); continue; }
        const char *v = val[(r >> 8) % 8];
        if ((r >> 12) % 50) v = val[(r >> 8) % 2];    /* mostly fit / eval */
        o += (size_t)snprintf(b + o, cap - o, "s%zu,%d,%.3f,%.3f,%s,c%d,n\n", i, (int)(r % 2),
                              (double)(r % 1000) / 1000, 1.0 - (double)(r % 1000) / 1000, v,
                              (int)((r >> 30) % 5));
    }
    *len = o;
    return b;
}

static void test_split_column_paths(void **state)
{
    (void)state;
    size_t len;
    char *text = split_file(4000, &len);
    for (int skip = 0; skip <= 1; skip++) {
        cs_load_options opt;
        cs_load_options_default(&opt);
        opt.skip_bad_rows = skip;
        opt.split_column = "fold";
        outcome c, f;
        run(&c, text, len, &opt, CSL_PATH_CSV, 0, 0);
        assert_true(c.sum.rows_rejected > 0);      /* some rows have an empty split value */
        if (skip) {
            assert_non_null(c.d);
            assert_non_null(c.d->split);
            assert_true(c.d->n_splits >= 5);
            assert_string_equal(c.d->split_names[c.d->split[0]], c.d->split[0] ? "eval" : "fit");
        } else {
            assert_null(c.d);
        }
        for (int th = 1; th <= 3; th++) {
            run(&f, text, len, &opt, CSL_PATH_FAST, 0, th);
            same(&c, &f);
            release(&f);
        }
        for (size_t block = 7; block < 300; block += 97) {
            run(&f, text, len, &opt, CSL_PATH_CSV, block, 0);
            same(&c, &f);
            release(&f);
        }
        release(&c);
    }
    free(text);
}

/* A long TTA file whose ids break the checks across rows now and then (a label that differs
 * from the id's tta 0 row, a second tta 0 row, an id without one), with classes named by numbers
 * out of order: both paths, strict and skipping, any feed size, give the same rows and messages. */
static char *tta_file(size_t ids, size_t *len)
{
    size_t cap = ids * 4 * 64 + 64, o = 0;
    char *b = malloc(cap);
    assert_non_null(b);
    o += (size_t)snprintf(b, cap, "id,tta,label,p_2,p_0,p_1\n");
    for (size_t i = 0; i < ids; i++) {
        unsigned long long r = rnd();
        int label = (int)(r % 3), t0 = (r >> 8) % 53 != 0;      /* 1 in 53 has no tta 0 row */
        for (int t = t0 ? 0 : 1; t < 4; t++) {
            int l = label, tt = t;
            if (t == 2 && (r >> 16) % 41 == 0) l = (label + 1) % 3;   /* label differs */
            if (t == 3 && (r >> 24) % 37 == 0) tt = 0;                /* a second tta 0 row */
            double a = (double)((r >> (t * 4)) % 900) / 1000;
            o += (size_t)snprintf(b + o, cap - o, "s%zu,%d,%d,%.3f,%.3f,%.3f\n", i, tt, l, a, 0.1,
                                  0.9 - a);
        }
    }
    *len = o;
    return b;
}

static void test_tta_checks_paths(void **state)
{
    (void)state;
    size_t len;
    char *text = tta_file(3000, &len);
    for (int skip = 0; skip <= 1; skip++) {
        cs_load_options opt;
        cs_load_options_default(&opt);
        opt.skip_bad_rows = skip;
        outcome c, f;
        run(&c, text, len, &opt, CSL_PATH_CSV, 0, 0);
        assert_true(c.sum.rows_rejected > 50);
        assert_non_null(c.sum.class_note);
        if (skip) assert_non_null(c.d);
        else assert_null(c.d);
        for (int th = 1; th <= 2; th++) {
            run(&f, text, len, &opt, CSL_PATH_FAST, 0, th);
            same(&c, &f);
            assert_string_equal(c.sum.class_note, f.sum.class_note);
            release(&f);
        }
        run(&f, text, len, &opt, CSL_PATH_CSV, 4093, 0);
        same(&c, &f);
        release(&f);
        release(&c);
    }
    free(text);
}

/* libcsv's own test style: every feed size from 1 byte up gives the same result. */
static void test_every_block_size(void **state)
{
    (void)state;
    static const char *texts[] = {
        "\xEF\xBB\xBF" "id,label,p_a,p_b\r\n\"s,1\",1,0.25,0.75\r\n\r\ns2,0,\"0.5\",0.5\r\ns3,1,0.5,x\r\n",
        "label;p_a;p_b\n1;0.25;0.75\n\n\n0;0.5;0.5\n1;\"a\nb\";0.5\n2;0.5;0.5",
        "label,p_a,p_b\n1,0.25,\"0.75\n",
    };
    for (int skip = 0; skip <= 1; skip++)
        for (size_t t = 0; t < sizeof texts / sizeof *texts; t++) {
            cs_load_options opt;
            cs_load_options_default(&opt);
            opt.skip_bad_rows = skip;
            size_t len = strlen(texts[t]);
            outcome ref;
            run(&ref, texts[t], len, &opt, CSL_PATH_CSV, 0, 0);
            for (size_t block = 1; block <= len + 1; block++) {
                outcome o;
                run(&o, texts[t], len, &opt, CSL_PATH_CSV, block, 0);
                same(&ref, &o);
                release(&o);
            }
            release(&ref);
        }
}

/* A quote anywhere makes the fast path step aside; auto mode then still loads it. */
static void test_fast_path_steps_aside(void **state)
{
    (void)state;
    const char *t = "label,p_a,p_b\n1,0.25,0.75\n0,\"0.5\",0.5\n";
    cs_load_options opt;
    cs_load_options_default(&opt);
    cs_error err;
    cs_load_tuning tf = {CSL_PATH_FAST, 0, 1, 0, 0, 0};
    assert_null(cs_load_buffer_tuned("q.csv", t, strlen(t), &opt, NULL, &err, &tf));
    assert_int_equal(err.code, CS_EUSAGE);
    cs_load_tuning ta = {CSL_PATH_AUTO, 0, 1, 0, 0, 0};
    cs_dataset *d = cs_load_buffer_tuned("q.csv", t, strlen(t), &opt, NULL, &err, &ta);
    assert_non_null(d);
    assert_int_equal(ta.used_path, CSL_PATH_CSV);
    cs_dataset_free(d);
    /* a lone CR (not CRLF) too */
    t = "label,p_a,p_b\r1,0.25,0.75\r";
    assert_null(cs_load_buffer_tuned("q.csv", t, strlen(t), &opt, NULL, &err, &tf));
    d = cs_load_buffer_tuned("q.csv", t, strlen(t), &opt, NULL, &err, &ta);
    assert_non_null(d);
    assert_int_equal(d->n, 1);
    cs_dataset_free(d);
    /* and a plain file really takes the fast path in auto mode */
    t = "label,p_a,p_b\n1,0.25,0.75\n";
    d = cs_load_buffer_tuned("q.csv", t, strlen(t), &opt, NULL, &err, &ta);
    assert_non_null(d);
    assert_int_equal(ta.used_path, CSL_PATH_FAST);
    cs_dataset_free(d);
}

/* text gzip'd by zlib at level 6 (malloc'd, *n bytes). */
static unsigned char *gzip_text(const char *text, size_t len, size_t *n)
{
    size_t cap = len + len / 100 + 1024;
    unsigned char *out = malloc(cap);
    assert_non_null(out);
    z_stream z;
    memset(&z, 0, sizeof z);
    assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
    z.next_in = (Bytef *)(uintptr_t)text;
    z.avail_in = (uInt)len;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
    *n = z.total_out;
    deflateEnd(&z);
    return out;
}

/* The gzip'd text loaded in auto mode, inflated `step` bytes at a time: it must take the path
 * `want`, say gzip, and give what the plain text gives on the fast path (`plain`). */
static void same_as_plain_gz(const outcome *plain, const unsigned char *gz, size_t n,
                             const cs_load_options *opt, size_t step, int want)
{
    outcome g;
    cs_load_tuning t = { .path = CSL_PATH_AUTO, .block = step, .threads = 2 };
    g.d = cs_load_buffer_tuned("p.csv", gz, n, opt, &g.sum, &g.err, &t);
    if (t.used_path != want) fail_msg("step %zu: path %d, not %d", step, t.used_path, want);
    assert_int_equal(g.sum.gzip, 1);
    same(plain, &g);
    release(&g);
}

/* A gzip'd CSV the fast path can read is inflated whole and read by it: the same dataset,
 * counts and messages as the plain file, bit for bit, whatever the inflate step, so with
 * lines cut across steps at every offset (a small file at every step from 1 byte up, a
 * mixed file of good, blank and bad rows, CRLF or LF, strict or skipping, at steps around
 * its line lengths). A quote sends it to the libcsv path, as it sends a plain file. */
static void test_gzip_takes_fast_path(void **state)
{
    (void)state;
    cs_load_options opt;
    cs_load_options_default(&opt);
    const char *small = "\nlabel,p_a,p_b\n1,0.25,0.75\n\n0,0.5,0.5\n1,1e-1,0.9\n0,0.125,0.875";
    size_t slen = strlen(small), n;
    unsigned char *gz = gzip_text(small, slen, &n);
    outcome p;
    run(&p, small, slen, &opt, CSL_PATH_FAST, 0, 1);
    assert_non_null(p.d);
    assert_int_equal(p.d->n, 4);
    for (size_t step = 1; step <= slen + 1; step++) same_as_plain_gz(&p, gz, n, &opt, step, CSL_PATH_FAST);
    release(&p);
    free(gz);

    for (int crlf = 0; crlf <= 1; crlf++)
        for (int skip = 0; skip <= 1; skip++) {
            size_t len;
            char *text = mixed_file(3000, &len, crlf);
            opt.skip_bad_rows = skip;
            gz = gzip_text(text, len, &n);
            run(&p, text, len, &opt, CSL_PATH_FAST, 0, 2);
            assert_true(p.sum.rows_rejected > 100);
            static const size_t steps[] = { 1, 7, 19, 20, 21, 22, 23, 24, 25, 31, 97, 4096, 0 };
            for (size_t i = 0; i < sizeof steps / sizeof *steps; i++)
                same_as_plain_gz(&p, gz, n, &opt, steps[i], CSL_PATH_FAST);
            release(&p);
            free(gz);
            free(text);
        }
    opt.skip_bad_rows = 0;

    const char *quoted = "label,p_a,p_b\n1,0.25,0.75\n0,\"0.5\",0.5\n";
    gz = gzip_text(quoted, strlen(quoted), &n);
    run(&p, quoted, strlen(quoted), &opt, CSL_PATH_CSV, 0, 0);
    same_as_plain_gz(&p, gz, n, &opt, 0, CSL_PATH_CSV);
    same_as_plain_gz(&p, gz, n, &opt, 3, CSL_PATH_CSV);
    release(&p);
    free(gz);
}

/* The most bytes of inflated text cs_load_gz_stream holds for gz[0..n) at `step` bytes a step
 * (its own count of its buffer), and its outcome in *r (the parse freed). */
static size_t gz_held(const unsigned char *gz, size_t n, const cs_load_options *opt,
                      const csl_limits *lim, size_t step, int *r)
{
    csl_limits deflim;
    if (!lim) { cs_load_limits_default(&deflim); lim = &deflim; }
    csl_parsed ps;
    cs_status st;
    cs_error err;
    cs_error_clear(&err);
    size_t held = 0;
    *r = cs_load_gz_stream("p.csv", gz, n, 0, opt, lim, step, CSL_SCAN_AUTO, 1, &ps, &st, &err,
                           &held);
    if (*r == CSL_DONE) cs_load_parsed_free(&ps);
    return held;
}

/* The longest line of text[0..len), its LF counted. */
static size_t longest_line(const char *text, size_t len)
{
    size_t most = 0, cur = 0;
    for (size_t i = 0; i < len; i++) {
        cur++;
        if (text[i] == '\n') { if (cur > most) most = cur; cur = 0; }
    }
    return cur > most ? cur : most;
}

/* A gzip'd CSV is read as it is inflated: the text held at once is two buffers (the step being
 * parsed, the next one being inflated), each a step and the partial line carried (doubling from
 * one step: under twice the step and the longest line), not the file, whatever its size: 40,000
 * rows (about 1 MB) with 4 KiB steps hold under 17 KB. */
static void test_gzip_stream_holds_a_step(void **state)
{
    (void)state;
    cs_load_options opt;
    cs_load_options_default(&opt);
    opt.skip_bad_rows = 1;
    size_t len, n;
    char *text = mixed_file(40000, &len, 0);
    unsigned char *gz = gzip_text(text, len, &n);
    size_t line = longest_line(text, len);
    assert_true(len > 800000);
    static const size_t steps[] = { 1, 7, 23, 64, 4096 };
    for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
        int r;
        size_t held = gz_held(gz, n, &opt, NULL, steps[i], &r);
        assert_int_equal(r, CSL_DONE);
        if (held > 4 * (steps[i] + line))
            fail_msg("step %zu: %zu bytes held, more than 4 x (%zu + %zu)", steps[i], held, steps[i], line);
    }
    outcome p;       /* and the numbers are the plain file's, at a step that cuts most lines */
    run(&p, text, len, &opt, CSL_PATH_FAST, 0, 1);
    same_as_plain_gz(&p, gz, n, &opt, 4096, CSL_PATH_FAST);
    release(&p);
    free(gz);
    free(text);
}

/* A bad row on a line cut by the steps is named by its own line and column, whatever the cut:
 * line 42 (a non-number in column 3) and line 60 (two fields where three are due). */
static void test_gzip_stream_error_place(void **state)
{
    (void)state;
    char text[4096];
    size_t o = (size_t)snprintf(text, sizeof text, "label,p_a,p_b\n");
    for (int l = 2; l <= 70; l++)
        o += (size_t)snprintf(text + o, sizeof text - o, "%s\n", l == 42 ? "1,0.25,zz" : l == 60 ? "0,0.5"
                              : l == 50 ? "" : "1,0.25,0.75");
    size_t n;
    unsigned char *gz = gzip_text(text, o, &n);
    cs_load_options opt;
    cs_load_options_default(&opt);
    const char *want = "p.csv:42:3: non-numeric value 'zz' in column 'p_b' (and 1 more bad row)";
    for (size_t step = 1; step <= o + 1; step++) {
        outcome g;
        cs_load_tuning t = { .path = CSL_PATH_FAST, .block = step, .threads = 1 };
        g.d = cs_load_buffer_tuned("p.csv", gz, n, &opt, &g.sum, &g.err, &t);
        assert_null(g.d);
        if (strcmp(g.err.msg, want) != 0) fail_msg("step %zu: '%s'", step, g.err.msg);
        assert_int_equal(g.err.line, 42);
        release(&g);
    }
    opt.skip_bad_rows = 1;
    for (size_t step = 1; step <= o + 1; step += 5) {
        outcome g;
        cs_load_tuning t = { .path = CSL_PATH_FAST, .block = step, .threads = 1 };
        g.d = cs_load_buffer_tuned("p.csv", gz, n, &opt, &g.sum, &g.err, &t);
        assert_non_null(g.d);
        assert_int_equal(g.d->n, 66);
        assert_int_equal(g.sum.blank_lines, 1);
        assert_int_equal(g.sum.n_skipped_messages, 2);
        assert_string_equal(g.sum.skipped[0], "p.csv:42:3: non-numeric value 'zz' in column 'p_b'");
        outcome p;   /* the libcsv path over the plain text: its own tokeniser, the same words */
        run(&p, text, o, &opt, CSL_PATH_CSV, 0, 1);
        same(&p, &g);
        assert_string_equal(g.sum.skipped[1], "p.csv:60:3: ragged row: 2 fields, expected 3");
        release(&p);
        release(&g);
    }
    free(gz);
}

/* The row limit over a stream of steps: refused at the first row past it, named by its line
 * (blank lines before it counted), as the plain file on the fast path refuses it, at every
 * step; one row fewer loads. */
static void test_gzip_stream_row_limit(void **state)
{
    (void)state;
    char text[2048];
    size_t o = (size_t)snprintf(text, sizeof text, "label,p_a,p_b\n\n");
    for (int r = 0; r < 30; r++)
        o += (size_t)snprintf(text + o, sizeof text - o, r == 7 ? "\n1,0.5,0.5\n" : "1,0.5,0.5\n");
    size_t n;
    unsigned char *gz = gzip_text(text, o, &n);
    cs_load_options opt;
    cs_load_options_default(&opt);
    csl_limits lim;
    cs_load_limits_default(&lim);
    lim.rows = 25;           /* row 26 is on line 29: header on 2, a blank line before row 8 */
    outcome p;
    cs_load_tuning tp = { .path = CSL_PATH_FAST, .threads = 1 };
    p.d = cs_load_buffer_limited("p.csv", text, o, &opt, &p.sum, &p.err, &tp, &lim);
    assert_null(p.d);
    assert_string_equal(p.err.msg, "p.csv:29:1: more than 25 data rows (the limit)");
    for (size_t step = 1; step <= o + 1; step++) {
        outcome g;
        cs_load_tuning t = { .path = CSL_PATH_FAST, .block = step, .threads = 1 };
        g.d = cs_load_buffer_limited("p.csv", gz, n, &opt, &g.sum, &g.err, &t, &lim);
        assert_null(g.d);
        if (strcmp(g.err.msg, p.err.msg) != 0) fail_msg("step %zu: '%s'", step, g.err.msg);
        release(&g);
    }
    release(&p);
    lim.rows = 30;
    cs_load_tuning t = { .path = CSL_PATH_FAST, .block = 3, .threads = 1 };
    cs_error err;
    cs_dataset *d = cs_load_buffer_limited("p.csv", gz, n, &opt, NULL, &err, &t, &lim);
    assert_non_null(d);
    assert_int_equal(d->n, 30);
    cs_dataset_free(d);
    free(gz);
}

/* A line that never ends (a gzip bomb of one field) is given up on once the partial line
 * carried passes the longest line the header allows ((3 + 2) x (field limit + 1) bytes): the
 * text held stays under four times that and the step (two buffers), and the libcsv path then
 * refuses the field with its place, as it refuses the plain file. */
static void test_gzip_stream_endless_line(void **state)
{
    (void)state;
    size_t len = 200000, n;
    char *text = malloc(len);
    assert_non_null(text);
    size_t o = (size_t)snprintf(text, len, "label,p_a,p_b\n1,0.5,0.5\n0,");
    memset(text + o, '7', len - o);
    unsigned char *gz = gzip_text(text, len, &n);
    cs_load_options opt;
    cs_load_options_default(&opt);
    csl_limits lim;
    cs_load_limits_default(&lim);
    lim.field = 100;
    size_t line_max = 5 * (lim.field + 1);
    static const size_t steps[] = { 1, 64, 1000 };
    for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
        int r;
        size_t held = gz_held(gz, n, &opt, &lim, steps[i], &r);
        assert_int_equal(r, CSL_BAIL);
        if (held > 4 * (steps[i] + line_max))
            fail_msg("step %zu: %zu bytes held", steps[i], held);
    }
    outcome p, g;
    cs_load_tuning tp = { .path = CSL_PATH_CSV, .threads = 1 };
    p.d = cs_load_buffer_limited("p.csv", text, len, &opt, &p.sum, &p.err, &tp, &lim);
    cs_load_tuning tg = { .path = CSL_PATH_AUTO, .block = 64, .threads = 1 };
    g.d = cs_load_buffer_limited("p.csv", gz, n, &opt, &g.sum, &g.err, &tg, &lim);
    assert_null(g.d);
    assert_int_equal(tg.used_path, CSL_PATH_CSV);
    assert_string_equal(g.err.msg, p.err.msg);
    assert_string_equal(g.err.msg, "p.csv:3:2: field longer than 100 bytes (the limit)");
    release(&p);
    release(&g);
    free(gz);
    free(text);
}

/* Resident kB of this process's mappings of `path`, from /proc/self/smaps (exact: the kernel
 * walks the page tables), or -1 when the file is not mapped. */
static long mapping_rss_kb(const char *path)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f) return -1;
    char line[4096];
    long kb = -1;
    int in = 0;
    size_t pl = strlen(path);
    while (fgets(line, sizeof line, f)) {
        size_t n = strlen(line);
        if (n && line[n - 1] == '\n') line[--n] = '\0';
        long v;
        if (strchr(line, '-') && strchr(line, '-') < strchr(line, ' ') && strchr(line, ' '))
            in = n >= pl && strcmp(line + n - pl, path) == 0;   /* a mapping's header line */
        else if (in && sscanf(line, "Rss: %ld kB", &v) == 1)
            kb = (kb < 0 ? 0 : kb) + v;
    }
    fclose(f);
    return kb;
}

/* Progress callback: the Rss of the file's mapping when the loader reports it has read all of
 * it (the final call, always made, fraction 1). */
typedef struct rss_probe {
    const char *path;
    long final_kb;
} rss_probe;

static void rss_at_end(void *ctx, double fraction)
{
    rss_probe *p = ctx;
    if (fraction >= 1.0) p->final_kb = mapping_rss_kb(p->path);
}

/* cs_load_file maps the file and drops the pages it has read, so peak memory is the arrays
 * being filled, not the arrays plus the whole file. Measured: when the loader has read every
 * byte (its final progress call), at most half of the file's pages are resident in its mapping
 * (each of the fast path's chunks, 13 MB here, holds back at most the part read since its last
 * release, rounded out to the 2 MB folios the page cache may map a file in: with 4 MB chunks that
 * rounding alone left 4.5 of 8.6 MB resident) — while the same load over a mapping not marked file-backed holds them all (the
 * control: the measurement does see read pages). The result equals loading the same bytes from
 * a buffer, also when the fast path gives up late in the file (a quote after several MiB) and
 * libcsv re-reads pages that were already dropped. */
static void test_file_mapping_releases_pages(void **state)
{
    (void)state;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    size_t threads = cpus < 2 ? 2 : (cpus > 8 ? 8 : (size_t)cpus);   /* the fast path's count */
    size_t rows = threads * 660000, cap = rows * 40 + 64, len = 0;   /* ~13 MB per thread */
    char *text = malloc(cap);
    assert_non_null(text);
    len += (size_t)snprintf(text, cap, "label,p_a,p_b,p_c\n");
    for (size_t i = 0; i < rows; i++) {
        unsigned a = (unsigned)(i * 7919u % 1000u), b = (unsigned)(i * 104729u % (1000u - a));
        len += (size_t)snprintf(text + len, cap - len, "%zu,0.%03u,0.%03u,%.3f\n", i % 3, a, b,
                                (1000u - a - b) / 1000.0);
    }
    cs_load_options opt;
    cs_load_options_default(&opt);
    for (int late_quote = 0; late_quote < 2; late_quote++) {
        if (late_quote) {
            char *q = strstr(text + len - 200, "\n") + 1;   /* quote the label of a late row */
            assert_int_equal(q[1], ',');
            memmove(q + 2, q, (size_t)(text + len - q));
            q[0] = '"'; q[1] = q[2]; q[2] = '"';
            len += 2;
        }
        const char *path = cs_test_tmpfile(".csv", text, len);
        long file_kb = (long)(len / 1024);
        rss_probe probe = { path, -1 };
        cs_load_options popt = opt;
        popt.progress = rss_at_end;
        popt.progress_ctx = &probe;
        if (!late_quote) {
            /* control: the same bytes through a mapping of the file that is not marked
             * file-backed keep every page the loader read */
            int fd = open(path, O_RDONLY);
            assert_true(fd >= 0);
            void *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
            assert_true(map != MAP_FAILED);
            close(fd);
            cs_error err;
            cs_load_tuning t = { CSL_PATH_FAST, 0, 0, 0, 0, 0 };
            cs_dataset *d = cs_load_buffer_tuned(path, map, len, &popt, NULL, &err, &t);
            assert_non_null(d);
            cs_dataset_free(d);
            munmap(map, len);
            if (!(probe.final_kb >= file_kb * 9 / 10))
                fail_msg("control: %ld kB of a %ld kB file resident at the end", probe.final_kb, file_kb);
            probe.final_kb = -1;
        }
        outcome a, b;
        run(&b, text, len, &opt, CSL_PATH_AUTO, 0, 0);
        a.d = cs_load_file(path, &popt, &a.sum, &a.err);
        assert_non_null(a.d);
        assert_int_equal(a.d->n, rows);
        same(&a, &b);
        release(&a);
        release(&b);
        if (!late_quote && !(probe.final_kb >= 0 && probe.final_kb <= file_kb / 2))
            fail_msg("%ld kB of a %ld kB file still resident when the loader had read it all",
                     probe.final_kb, file_kb);
    }
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_numbers_bit_identical),
        cmocka_unit_test(test_mixed_file_all_paths),
        cmocka_unit_test(test_split_column_paths),
        cmocka_unit_test(test_tta_checks_paths),
        cmocka_unit_test(test_every_block_size),
        cmocka_unit_test(test_fast_path_steps_aside),
        cmocka_unit_test(test_gzip_takes_fast_path),
        cmocka_unit_test(test_gzip_stream_holds_a_step),
        cmocka_unit_test(test_gzip_stream_error_place),
        cmocka_unit_test(test_gzip_stream_row_limit),
        cmocka_unit_test(test_gzip_stream_endless_line),
        cmocka_unit_test(test_file_mapping_releases_pages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
