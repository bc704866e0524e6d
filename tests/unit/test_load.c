/* Loader behaviour: every rejection reason with its position and wording, summaries,
 * skip-bad-rows, formats (BOM, CRLF, delimiters, quotes, gzip), logits, the binary shorthand,
 * class names, id/tta/case, headerless files, progress and cancel. Each input is loaded through
 * both the fast path and the libcsv path where the fast path applies. */
#include "support/cs_test.h"

#include <dirent.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "engine/load/load_internal.h"
#include "engine/num/rowsum.h"

/* Loads text through the libcsv path, and through the fast path (1 and 3 threads) when that
 * path accepts the input; checks the results agree bit for bit and message for message. */
static cs_dataset *load_opt(const char *text, size_t len, const cs_load_options *opt,
                            cs_load_summary *sum, cs_error *err)
{
    cs_load_tuning tc = {CSL_PATH_CSV, 0, 0, 0, 0, 0};
    cs_dataset *d = cs_load_buffer_tuned("t.csv", text, len, opt, sum, err, &tc);
    for (int run = 0; run < 4; run++) {      /* 1 and 3 threads, each scanner (load_scan.h) */
        int threads = run < 2 ? 1 : 3;
        cs_load_tuning tf = {CSL_PATH_FAST, 0, threads, 0, 0, run % 2 ? CSL_SCAN_SWAR : CSL_SCAN_SSE2};
        cs_load_summary s2;
        cs_error e2;
        cs_dataset *f = cs_load_buffer_tuned("t.csv", text, len, opt, &s2, &e2, &tf);
        if (!f && e2.code == CS_EUSAGE && strstr(e2.msg, "fast path not applicable")) {
            cs_load_summary_free(&s2);
            continue;
        }
        if ((d == NULL) != (f == NULL)) fail_msg("paths disagree: csv '%s' fast '%s'", err->msg, e2.msg);
        assert_int_equal(err->code, e2.code);
        assert_string_equal(err->msg, e2.msg);
        assert_int_equal(err->line, e2.line);
        assert_int_equal(err->col, e2.col);
        if (sum) {
            assert_int_equal(sum->rows_read, s2.rows_read);
            assert_int_equal(sum->rows_used, s2.rows_used);
            assert_int_equal(sum->rows_rejected, s2.rows_rejected);
            assert_int_equal(sum->blank_lines, s2.blank_lines);
            assert_int_equal(sum->n_skipped_messages, s2.n_skipped_messages);
            for (size_t i = 0; i < sum->n_skipped_messages; i++)
                assert_string_equal(sum->skipped[i], s2.skipped[i]);
            assert_int_equal(sum->class_note == NULL, s2.class_note == NULL);
            if (sum->class_note) assert_string_equal(sum->class_note, s2.class_note);
        }
        if (d) {
            assert_int_equal(d->n, f->n);
            assert_int_equal(d->k, f->k);
            assert_memory_equal(d->prob, f->prob, d->n * d->k * sizeof(double));
            assert_memory_equal(d->label, f->label, d->n * sizeof(int32_t));
            assert_int_equal(d->logit == NULL, f->logit == NULL);
            if (d->logit) assert_memory_equal(d->logit, f->logit, d->n * d->k * sizeof(double));
            assert_int_equal(d->split == NULL, f->split == NULL);
            if (d->split) {
                assert_memory_equal(d->split, f->split, d->n * sizeof(int32_t));
                assert_int_equal(d->n_splits, f->n_splits);
                for (size_t i = 0; i < d->n_splits; i++)
                    assert_string_equal(d->split_names[i], f->split_names[i]);
            }
        }
        cs_dataset_free(f);
        cs_load_summary_free(&s2);
    }
    return d;
}

static cs_dataset *load_text(const char *text, cs_load_summary *sum, cs_error *err)
{
    cs_load_options o;
    cs_load_options_default(&o);
    return load_opt(text, strlen(text), &o, sum, err);
}

static void expect_refused(const char *text, long line, long col, const char *msg)
{
    cs_error err;
    cs_load_summary sum;
    cs_dataset *d = load_text(text, &sum, &err);
    if (d) fail_msg("accepted, expected '%s'", msg);
    assert_int_equal(err.code, CS_EINPUT);
    if (strcmp(err.msg, msg) != 0) fail_msg("message\n  got:  %s\n  want: %s", err.msg, msg);
    assert_int_equal(err.line, line);
    assert_int_equal(err.col, col);
    cs_load_summary_free(&sum);
}

/* ---- one test per rejection reason ------------------------------------------------------- */

static void test_row_reasons(void **state)
{
    (void)state;
    expect_refused("label,p_a,p_b\n0,0.3,0.7\n1,0.4\n", 3, 3,
                   "t.csv:3:3: ragged row: 2 fields, expected 3");
    expect_refused("label,p_a,p_b\n0,0.3,0.7,9\n", 2, 4, "t.csv:2:4: ragged row: 4 fields, expected 3");
    expect_refused("label,p_a,p_b\n0,0.3,0.7\n1,abc,0.6\n", 3, 2,
                   "t.csv:3:2: non-numeric value 'abc' in column 'p_a'");
    expect_refused("label,p_a,p_b\n0,0.3,0.7\n1,0.4,\n", 3, 3, "t.csv:3:3: empty field in column 'p_b'");
    expect_refused("label,p_a,p_b\n1,NaN,0.6\n", 2, 2, "t.csv:2:2: NaN or infinite value 'NaN' in column 'p_a'");
    expect_refused("label,logit_a,logit_b\n1,2,inf\n", 2, 3,
                   "t.csv:2:3: NaN or infinite value 'inf' in column 'logit_b'");
    expect_refused("label,p_a,p_b\n1,1.2,-0.2\n", 2, 2, "t.csv:2:2: probability outside [0,1] '1.2' in column 'p_a'");
    expect_refused("label,p_a,p_b\n1,0.2,-0.2\n", 2, 3, "t.csv:2:3: probability outside [0,1] '-0.2' in column 'p_b'");
    expect_refused("label,p_a,p_b,p_c\n1,0.3,0.3,0.3\n", 2, 2, "t.csv:2:2: probabilities sum to 0.9, not 1 within 0.001");
    expect_refused("label,p_a,p_b\n2,0.4,0.6\n", 2, 1, "t.csv:2:1: label '2' out of range 0..1");
    expect_refused("label,p_a,p_b\n-1,0.4,0.6\n", 2, 1, "t.csv:2:1: label '-1' out of range 0..1");
    expect_refused("label,p_a,p_b\n1.5,0.4,0.6\n", 2, 1, "t.csv:2:1: label '1.5' is not an integer");
    expect_refused("y,p_cat,p_dog\nbird,0.4,0.6\n", 2, 1,
                   "t.csv:2:1: unknown class name 'bird' (classes: cat, dog)");
    expect_refused("label,p_a,p_b,tta,id\n0,0.4,0.6,x,a\n", 2, 4, "t.csv:2:4: tta 'x' is not an integer >= 0");
    expect_refused("label,p_a,p_b,id\n0,0.4,0.6,\n", 2, 4, "t.csv:2:4: empty field in column 'id'");
    /* the excerpt is cut and control bytes are escaped */
    expect_refused("label,p_a,p_b\n0,0.4\x01z,0.6\n", 2, 2,
                   "t.csv:2:2: non-numeric value '0.4\\x01z' in column 'p_a'");
    expect_refused("label,p_a,p_b\n0,0123456789012345678901234567890123456789xyz,0.6\n", 2, 2,
                   "t.csv:2:2: non-numeric value '0123456789012345678901234567890123456789...'"
                   " in column 'p_a'");
}

static void test_file_reasons(void **state)
{
    (void)state;
    expect_refused("label,p_a,p_b,P_A\n0,0.3,0.7,0.3\n", 1, 4,
                   "t.csv:1:4: duplicate column 'P_A' (class already given by column 2)");
    expect_refused("label,p_a,p_b,y\n0,0.3,0.7,0\n", 1, 4,
                   "t.csv:1:4: duplicate column 'y' (same meaning as column 1)");
    expect_refused("p_a,p_b\n0.3,0.7\n", 1, 1, "t.csv:1:1: no label column (name one label, y, target or true)");
    expect_refused("label,foo\n0,0.3\n", 1, 1,
                   "t.csv:1:1: no probability columns (want p_<class>, prob_<class> or logit_<class>"
                   " columns, or one p, prob or score column)");
    expect_refused("label,p_a,logit_b\n0,0.3,0.7\n", 1, 3,
                   "t.csv:1:3: column 'logit_b' mixes logit and probability columns (give one kind)");
    expect_refused("label,p,p_b\n0,0.3,0.7\n", 1, 3,
                   "t.csv:1:3: column 'p_b' mixes per-class columns with the binary column 'p'");
    expect_refused("label,p_a\n0,0.3\n", 1, 2,
                   "t.csv:1:2: only one class column 'p_a' (need two or more, or name it p, prob or"
                   " score for a binary file)");
    expect_refused("label,p_a,p_b,tta\n0,0.3,0.7,0\n1,0.4,0.6,1\n", 1, 4,
                   "t.csv:1:4: a tta column needs an id column (the rows of one sample share an id;"
                   " tta 0 is its clean prediction)");
    expect_refused("", 1, 1, "t.csv:1:1: empty file");
    expect_refused("\n\n", 1, 1, "t.csv:1:1: empty file (only blank lines)");
    expect_refused("label,p_a,p_b\n", 1, 1, "t.csv:1:1: header only, no data rows");
    expect_refused("\nlabel,p_a,p_b\n\n", 2, 1, "t.csv:2:1: header only, no data rows");
    expect_refused("label,p_a,p_b\n0,0.3,0.7\n1,\"0.4,0.6\n", 3, 2,
                   "t.csv:3:2: unterminated quote: the file ends inside a quoted field");
    expect_refused("label,p_a,p_b\n0,0.3,0.7\n1,0\"4,0.6\n", 3, 2,
                   "t.csv:3:2: malformed quoting: a quote inside an unquoted field or text after a"
                   " closing quote");
}

static void test_strict_counts_further_rows(void **state)
{
    (void)state;
    /* lines: 1 header, 2 good, 3 bad, 4 blank, 5 bad, 6 bad, 7 good */
    const char *t = "label,p_a,p_b\n0,0.3,0.7\n1,x,0.6\n\n2,0.5,0.5\n1,0.9,0.9\n0,0.5,0.5\n";
    cs_error err;
    cs_load_summary sum;
    assert_null(load_text(t, &sum, &err));
    assert_string_equal(err.msg, "t.csv:3:2: non-numeric value 'x' in column 'p_a' (and 2 more bad rows)");
    assert_int_equal(sum.rows_read, 5);
    assert_int_equal(sum.rows_used, 0);
    assert_int_equal(sum.rows_rejected, 3);
    assert_int_equal(sum.blank_lines, 1);
    assert_int_equal(sum.n_skipped_messages, 3);
    assert_string_equal(sum.skipped[1], "t.csv:5:1: label '2' out of range 0..1");
    assert_string_equal(sum.skipped[2], "t.csv:6:2: probabilities sum to 1.8, not 1 within 0.001");
    cs_load_summary_free(&sum);
    expect_refused("label,p_a,p_b\n1,x,0.6\n0,y,0.5\n", 2, 2,
                   "t.csv:2:2: non-numeric value 'x' in column 'p_a' (and 1 more bad row)");
}

static void test_skip_bad_rows(void **state)
{
    (void)state;
    const char *t = "label,p_a,p_b\n0,0.3,0.7\n1,x,0.6\n\n2,0.5,0.5\n1,0.9,0.9\n0,0.5,0.5\n";
    cs_load_options o;
    cs_load_options_default(&o);
    o.skip_bad_rows = 1;
    cs_error err;
    cs_load_summary sum;
    cs_dataset *d = load_opt(t, strlen(t), &o, &sum, &err);
    assert_non_null(d);
    assert_int_equal(d->n, 2);
    assert_double_near(d->prob[0], 0.3, 0);
    assert_double_near(d->prob[2], 0.5, 0);
    assert_int_equal(d->label[1], 0);
    assert_int_equal(sum.rows_read, 5);
    assert_int_equal(sum.rows_used, 2);
    assert_int_equal(sum.rows_rejected, 3);
    assert_int_equal(sum.n_skipped_messages, 3);
    assert_string_equal(sum.skipped[0], "t.csv:3:2: non-numeric value 'x' in column 'p_a'");
    cs_dataset_free(d);
    cs_load_summary_free(&sum);

    /* more bad rows than messages kept */
    char big[8192];
    size_t o2 = (size_t)snprintf(big, sizeof big, "label,p_a,p_b\n0,0.5,0.5\n");
    for (int i = 0; i < 30; i++) o2 += (size_t)snprintf(big + o2, sizeof big - o2, "0,2,0.5\n");
    d = load_opt(big, o2, &o, &sum, &err);
    assert_non_null(d);
    assert_int_equal(sum.rows_rejected, 30);
    assert_int_equal(sum.n_skipped_messages, CS_LOAD_MAX_SKIP_MESSAGES);
    assert_string_equal(sum.skipped[CS_LOAD_MAX_SKIP_MESSAGES - 1],
                        "t.csv:22:2: probability outside [0,1] '2' in column 'p_a'");
    cs_dataset_free(d);
    cs_load_summary_free(&sum);

    /* every row bad: refused even when skipping */
    assert_null(load_opt("label,p_a,p_b\n0,2,0\n", 20, &o, &sum, &err));
    assert_int_equal(err.code, CS_EINPUT);
    assert_non_null(strstr(err.msg, "no usable rows: all 1 data rows were rejected"));
    cs_load_summary_free(&sum);
}

/* engine/num/rowsum.h: the rule's edge, worked by hand. The double sums below are what the
 * loader forms in class order from the written numbers. */
static void test_row_sum_rule(void **state)
{
    (void)state;
    double s = 0.334 + 0.334 + 0.333;                  /* 1.001 as written */
    assert_true(s > 1.001);                            /* 1.0010000000000001 */
    assert_true(cs_row_sum_ok(s, 3, 1e-3));
    assert_false(cs_row_sum_ok(s, 3, 1e-4));
    assert_true(cs_row_sum_ok(0.333 + 0.333 + 0.333, 3, 1e-3));   /* 0.999 */
    assert_false(cs_row_sum_ok(0.3345 + 0.334 + 0.333, 3, 1e-3));  /* 1.0015 */
    assert_true(cs_row_sum_ok(0.1 + 0.2 + 0.7, 3, 0));           /* 1 as written */
    assert_true(cs_row_sum_ok(1.0, 2, 0));
    assert_false(cs_row_sum_ok(1.0 + 0x1p-25, 4, 0));              /* 3e-8 off: refused */
    assert_false(cs_row_sum_ok(1.0 + 0x1p-45, 4, 0));              /* beyond 4 * 2^-53 */
    assert_true(cs_row_sum_ok(1.0 + 0x1p-52, 4, 0));               /* within it */
    assert_false(cs_row_sum_ok(0.9, 10, 1e-3));
    assert_false(cs_row_sum_ok(NAN, 3, 1e-3));
    assert_false(cs_row_sum_ok(INFINITY, 3, 1e-3));
}

static void test_sum_tolerance_and_renormalize(void **state)
{
    (void)state;
    cs_error err;
    cs_load_summary sum;
    /* rounding to 3 digits passes the default 1e-3 */
    cs_dataset *d = load_text("label,p_a,p_b,p_c\n0,0.333,0.333,0.333\n", &sum, &err);
    assert_non_null(d);
    assert_double_near(d->prob[0], 0.333, 0);     /* used as written */
    cs_dataset_free(d);
    cs_load_summary_free(&sum);

    cs_load_options o;
    cs_load_options_default(&o);
    o.sum_tol = 1e-4;
    const char *t = "label,p_a,p_b,p_c\n0,0.333,0.333,0.333\n";
    assert_null(load_opt(t, strlen(t), &o, &sum, &err));
    assert_string_equal(err.msg, "t.csv:2:2: probabilities sum to 0.999, not 1 within 0.0001");
    cs_load_summary_free(&sum);

    /* the tolerance is on the numbers as written: 0.334 + 0.334 + 0.333 is 1.001 exactly, within
     * 1e-3, though its double sum is 1.0010000000000001 (it was refused: "sum to 1.001, not 1
     * within 0.001"); 1.0015 is not, nor 1.001 at 1e-4 */
    d = load_text("label,p_a,p_b,p_c\n0,0.334,0.334,0.333\n1,0.333,0.334,0.334\n", &sum, &err);
    assert_non_null(d);
    assert_int_equal(d->n, 2);
    cs_dataset_free(d);
    cs_load_summary_free(&sum);
    t = "label,p_a,p_b,p_c\n0,0.3345,0.334,0.333\n";
    assert_null(load_text(t, &sum, &err));
    assert_string_equal(err.msg, "t.csv:2:2: probabilities sum to 1.0015, not 1 within 0.001");
    cs_load_summary_free(&sum);
    cs_load_options_default(&o);
    o.sum_tol = 1e-4;
    t = "label,p_a,p_b,p_c\n0,0.334,0.334,0.333\n";
    assert_null(load_opt(t, strlen(t), &o, &sum, &err));
    assert_string_equal(err.msg, "t.csv:2:2: probabilities sum to 1.001, not 1 within 0.0001");
    cs_load_summary_free(&sum);
    /* --sum-tol 0: 0.1 + 0.2 + 0.7 is 1 as written (1.0000000000000002 in doubles) */
    o.sum_tol = 0;
    t = "label,p_a,p_b,p_c\n0,0.1,0.2,0.7\n";
    d = load_opt(t, strlen(t), &o, &sum, &err);
    assert_non_null(d);
    cs_dataset_free(d);
    cs_load_summary_free(&sum);

    cs_load_options_default(&o);
    o.renormalize = 1;
    t = "label,p_a,p_b\n0,0.2,0.6\n1,0.25,0.75\n";
    d = load_opt(t, strlen(t), &o, &sum, &err);
    assert_non_null(d);
    assert_double_near(d->prob[0], 0.25, 1e-15);     /* 0.2/0.8 */
    assert_double_near(d->prob[1], 0.75, 1e-15);
    assert_double_near(d->prob[2], 0.25, 0);
    assert_int_equal(sum.rows_renormalized, 1);
    cs_dataset_free(d);
    cs_load_summary_free(&sum);

    t = "label,p_a,p_b\n0,0,0\n";
    assert_null(load_opt(t, strlen(t), &o, &sum, &err));
    assert_string_equal(err.msg, "t.csv:2:2: probabilities sum to 0, cannot renormalize");
    cs_load_summary_free(&sum);
    t = "label,p_a,p_b\n0,1.5,0\n";
    assert_null(load_opt(t, strlen(t), &o, &sum, &err));
    assert_string_equal(err.msg, "t.csv:2:2: probability outside [0,1] '1.5' in column 'p_a'");
    cs_load_summary_free(&sum);
}

/* ---- formats ------------------------------------------------------------------------------ */

static void check_two_rows(cs_dataset *d, const cs_error *err)
{
    if (!d) fail_msg("refused: %s", err->msg);
    assert_int_equal(d->n, 2);
    assert_int_equal(d->k, 2);
    assert_double_near(d->prob[0], 0.25, 0);
    assert_double_near(d->prob[1], 0.75, 0);
    assert_double_near(d->prob[2], 0.5, 0);
    assert_int_equal(d->label[0], 1);
    assert_int_equal(d->label[1], 0);
    assert_string_equal(d->class_names[0], "a");
    assert_string_equal(d->class_names[1], "b");
    cs_dataset_free(d);
}

static void test_formats(void **state)
{
    (void)state;
    static const char *texts[] = {
        "label,p_a,p_b\n1,0.25,0.75\n0,0.5,0.5\n",
        "label,p_a,p_b\n1,0.25,0.75\n0,0.5,0.5",              /* no final newline */
        "\xEF\xBB\xBFlabel,p_a,p_b\n1,0.25,0.75\n0,0.5,0.5\n",  /* BOM */
        "label,p_a,p_b\r\n1,0.25,0.75\r\n0,0.5,0.5\r\n",        /* CRLF */
        "label;p_a;p_b\n1;0.25;0.75\n0;0.5;0.5\n",              /* semicolon */
        "label\tp_a\tp_b\n1\t0.25\t0.75\n0\t0.5\t0.5\n",        /* tab */
        "LABEL , P_a , PROB_b\n 1 , 0.25 ,0.75 \n0,0.5,0.5\n", /* case, spaces */
        "\"label\",\"p_a\",\"p_b\"\n\"1\",\"0.25\",0.75\n0,\"0.5\",0.5\n",     /* quoted */
        "label,p_a,p_b,note\n1,0.25,0.75,\"a, \"\"quoted\"\"\nnote\"\n0,0.5,0.5,x\n",
    };
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        cs_error err;
        cs_load_summary sum;
        check_two_rows(load_text(texts[i], &sum, &err), &err);
        cs_load_summary_free(&sum);
    }
    /* the quoted newline counts as a line: the bad row after it is on line 5 */
    expect_refused("label,p_a,p_b,note\n1,0.25,0.75,\"a\nb\"\n0,0.5,0.5,x\n0,2,0,y\n", 5, 2,
                   "t.csv:5:2: probability outside [0,1] '2' in column 'p_a'");
    /* CRLF line numbers */
    expect_refused("label,p_a,p_b\r\n\r\n1,0.25,0.75\r\n0,x,0.5\r\n", 4, 2,
                   "t.csv:4:2: non-numeric value 'x' in column 'p_a'");
    /* explicit delimiter overrides the sniffer */
    cs_load_options o;
    cs_load_options_default(&o);
    o.delimiter = ';';
    cs_error err;
    const char *t = "label;p_a;p_b;x,y,z,w\n1;0.25;0.75;q\n0;0.5;0.5;q\n";
    check_two_rows(load_opt(t, strlen(t), &o, NULL, &err), &err);
}

static size_t gzip_bytes(const char *text, unsigned char *out, size_t cap)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
    z.next_in = (Bytef *)(uintptr_t)text;
    z.avail_in = (uInt)strlen(text);
    z.next_out = out;
    z.avail_out = (uInt)cap;
    assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
    size_t n = z.total_out;
    deflateEnd(&z);
    return n;
}

static void test_gzip(void **state)
{
    (void)state;
    const char *t = "label;p_a;p_b\n1;0.25;0.75\n0;0.5;0.5\n";
    unsigned char gz[512];
    size_t n = gzip_bytes(t, gz, sizeof gz);
    cs_error err;
    cs_load_summary sum;
    cs_load_options o;
    cs_load_options_default(&o);
    check_two_rows(cs_load_buffer("t.csv", gz, n, &o, &sum, &err), &err);
    assert_int_equal(sum.gzip, 1);
    cs_load_summary_free(&sum);

    /* from a file whose name does not say gzip, in 1-byte feed blocks */
    const char *path = cs_test_tmpfile(".csv", gz, n);
    check_two_rows(cs_load_file(path, &o, NULL, &err), &err);
    for (size_t block = 1; block < 8; block++) {
        cs_load_tuning tc = {CSL_PATH_CSV, block, 0, 0, 0, 0};
        check_two_rows(cs_load_buffer_tuned("t.csv", gz, n, &o, NULL, &err, &tc), &err);
    }

    /* two concatenated members are one stream (gzip(1) semantics) */
    unsigned char two[1024];
    size_t n1 = gzip_bytes("label;p_a;p_b\n1;0.25;0.75\n", two, sizeof two);
    size_t n2 = gzip_bytes("0;0.5;0.5\n", two + n1, sizeof two - n1);
    check_two_rows(cs_load_buffer("t.csv", two, n1 + n2, &o, NULL, &err), &err);

    /* truncated and corrupted */
    assert_null(cs_load_buffer("t.csv.gz", gz, n - 5, &o, NULL, &err));
    assert_int_equal(err.code, CS_EINPUT);
    assert_string_equal(err.msg, "t.csv.gz:4:1: corrupt gzip data: truncated (unexpected end of file)");
    gz[n - 6] ^= 0x55;     /* CRC */
    assert_null(cs_load_buffer("t.csv.gz", gz, n, &o, NULL, &err));
    assert_string_equal(err.msg, "t.csv.gz:4:1: corrupt gzip data: incorrect data check");
}

static void test_unreadable(void **state)
{
    (void)state;
    cs_error err;
    assert_null(cs_load_file("/nonexistent/dir/x.csv", NULL, NULL, &err));
    assert_int_equal(err.code, CS_EINPUT);
    assert_string_equal(err.msg, "/nonexistent/dir/x.csv: cannot open: No such file or directory");
    assert_null(cs_load_file("/tmp", NULL, NULL, &err));
    assert_string_equal(err.msg, "/tmp: cannot read: Is a directory");
    const char *path = cs_test_tmpfile(".csv", "", 0);
    assert_null(cs_load_file(path, NULL, NULL, &err));
    assert_non_null(strstr(err.msg, ": empty file"));
}

/* ---- columns -------------------------------------------------------------------------------- */

static void test_logits(void **state)
{
    (void)state;
    cs_error err;
    cs_load_summary sum;
    cs_dataset *d = load_text("label,logit_a,logit_b,logit_c\n2,1,1,1\n0,2,0,0\n1,1000,0,-1000\n",
                              &sum, &err);
    if (!d) fail_msg("%s", err.msg);
    assert_int_equal(sum.from_logits, 1);
    assert_non_null(d->logit);
    /* equal logits: 1/3 each */
    for (int j = 0; j < 3; j++) assert_double_near(d->prob[j], 1.0 / 3.0, 1e-16);
    /* [2,0,0]: e^2/(e^2+2) = 0.78699397... (e^2 = 7.38905609893065) */
    assert_double_near(d->prob[3], 7.38905609893065 / 9.38905609893065, 1e-14);
    assert_double_near(d->prob[4], 1.0 / 9.38905609893065, 1e-14);
    /* a naive exp(1000) overflows; max-subtraction gives [1, e^-1000, 0] */
    assert_double_near(d->prob[6], 1.0, 0);
    assert_double_near(d->prob[7], 0.0, 1e-300);
    assert_double_near(d->logit[6], 1000.0, 0);
    assert_double_near(d->logit[8], -1000.0, 0);
    assert_double_near(d->logit[3], 2.0, 0);
    assert_int_equal(d->pred[1], 0);
    cs_dataset_free(d);
    cs_load_summary_free(&sum);
}

static void test_binary_and_class_names(void **state)
{
    (void)state;
    cs_error err;
    cs_dataset *d = load_text("target,score\n1,0.8\n0,0.25\n", NULL, &err);
    if (!d) fail_msg("%s", err.msg);
    assert_int_equal(d->k, 2);
    assert_string_equal(d->class_names[0], "0");
    assert_string_equal(d->class_names[1], "1");
    assert_double_near(d->prob[0], 1.0 - 0.8, 0);
    assert_double_near(d->prob[1], 0.8, 0);
    assert_double_near(d->prob[2], 0.75, 0);
    assert_int_equal(d->label[0], 1);
    assert_int_equal(d->correct[0], 1);
    cs_dataset_free(d);
    expect_refused("label,p\n2,0.5\n", 2, 1, "t.csv:2:1: label '2' out of range 0..1");

    /* class names: exact, then case-insensitive; numeric labels are indices; 1.0 == 1 */
    d = load_text("true,prob_cat,prob_dog,prob_emu\ndog,0.2,0.7,0.1\nEMU,0.1,0.1,0.8\n0,1,0,0\n1.0,0,1,0\n",
                  NULL, &err);
    if (!d) fail_msg("%s", err.msg);
    assert_int_equal(d->label[0], 1);
    assert_int_equal(d->label[1], 2);
    assert_int_equal(d->label[2], 0);
    assert_int_equal(d->label[3], 1);
    cs_dataset_free(d);
}

/* ---- which class a label names (engine/classes.h) --------------------------------------- */

/* Loads text (both paths), checks the labels and the class note (NULL = none). */
static void expect_labels(const char *text, size_t n, const int32_t *want, const char *note)
{
    cs_error err;
    cs_load_summary sum;
    cs_dataset *d = load_text(text, &sum, &err);
    if (!d) fail_msg("refused: %s", err.msg);
    assert_int_equal(d->n, n);
    assert_memory_equal(d->label, want, n * sizeof *want);
    if (!note) {
        if (sum.class_note) fail_msg("unexpected class note '%s'", sum.class_note);
    } else {
        if (!sum.class_note) fail_msg("no class note, want '%s'", note);
        assert_string_equal(sum.class_note, note);
    }
    cs_dataset_free(d);
    cs_load_summary_free(&sum);
}

static void test_label_names_versus_positions(void **state)
{
    (void)state;
    /* digit names out of index order; a perfect classifier is 100 % accurate */
    const char *issue = "label,p_1,p_0\n1,0.9,0.1\n0,0.2,0.8\n";
    cs_error err;
    cs_load_summary sum;
    cs_dataset *d = load_text(issue, &sum, &err);
    if (!d) fail_msg("%s", err.msg);
    assert_int_equal(d->label[0], 0);      /* '1' is the column p_1, the first one */
    assert_int_equal(d->label[1], 1);
    assert_int_equal(d->correct[0], 1);
    assert_int_equal(d->correct[1], 1);
    assert_non_null(sum.class_note);
    assert_string_equal(sum.class_note, "named by numbers other than 0..1 in column order"
                                        " (p_1, p_0): labels match names, not positions");
    cs_dataset_free(d);
    cs_load_summary_free(&sum);
    /* the same with letters, and letters read by position when no name is a number */
    expect_labels("label,p_b,p_a\nb,0.9,0.1\na,0.2,0.8\n", 2, (const int32_t[]){0, 1}, NULL);
    expect_labels("label,p_cat,p_dog\n1,0.1,0.9\nCAT,0.8,0.2\n0,0.8,0.2\n", 3,
                  (const int32_t[]){1, 0, 0}, NULL);
    /* names 0..K-1 in order: names and positions agree, 1.0 and 1e0 are 1, no note */
    expect_labels("label,p_0,p_1,p_2\n2,0.1,0.1,0.8\n1.0,0.1,0.8,0.1\n1e0,0.1,0.8,0.1\n", 3,
                  (const int32_t[]){2, 1, 1}, NULL);
    expect_refused("label,p_0,p_1\n2,0.4,0.6\n", 2, 1, "t.csv:2:1: label '2' out of range 0..1");
    /* p_0,p_5: label 5 is class 5 (index 1); 1 names no class */
    expect_labels("label,p_0,p_5\n5,0.1,0.9\n0,0.8,0.2\n5.0,0.1,0.9\n", 3,
                  (const int32_t[]){1, 0, 1},
                  "named by numbers other than 0..1 in column order (p_0, p_5): labels match"
                  " names, not positions");
    expect_refused("label,p_0,p_5\n5,0.1,0.9\n1,0.8,0.2\n", 3, 1,
                   "t.csv:3:1: label '1' names no class (the classes are named by numbers: 0, 5)");
    /* some names numbers, some not: a number that names no class is not guessed as a position */
    expect_labels("label,p_cat,p_1\n1,0.1,0.9\ncat,0.8,0.2\n", 2, (const int32_t[]){1, 0}, NULL);
    expect_labels("label,p_1,p_cat\n1,0.9,0.1\ncat,0.2,0.8\n", 2, (const int32_t[]){0, 1},
                  "named by numbers other than 0..1 in column order (p_1, p_cat): labels match"
                  " names, not positions");
    expect_refused("label,p_cat,p_1\n1,0.1,0.9\n0,0.8,0.2\n", 3, 1,
                   "t.csv:3:1: label '0' names no class, and is not read as a position because"
                   " some class names are numbers (classes: cat, 1)");
    /* `#N` is always a position */
    expect_labels("label,p_1,p_0\n#0,0.9,0.1\n#1,0.2,0.8\n", 2, (const int32_t[]){0, 1},
                  "named by numbers other than 0..1 in column order (p_1, p_0): labels match"
                  " names, not positions");
    expect_refused("label,p_1,p_0\n#2,0.9,0.1\n", 2, 1, "t.csv:2:1: label '#2' is past the last class, #1");
    expect_refused("label,p_#1,p_0\n0,0.9,0.1\n", 1, 2,
                   "t.csv:1:2: column 'p_#1': a class name cannot be '#' and digits (that spells a"
                   " class position)");
    /* the same class twice: same text ignoring case, or the same number */
    expect_refused("label,p_1,p_1.0\n1,0.9,0.1\n", 1, 3,
                   "t.csv:1:3: duplicate column 'p_1.0' (class already given by column 2)");
    expect_refused("label,p_x,p_0,p_X\n1,0.9,0.1,0\n", 1, 4,
                   "t.csv:1:4: duplicate column 'p_X' (class already given by column 2)");
    /* logits follow the same rule */
    expect_labels("label,logit_1,logit_0\n1,3,-1\n0,0,2\n", 2, (const int32_t[]){0, 1},
                  "named by numbers other than 0..1 in column order (logit_1, logit_0): labels"
                  " match names, not positions");
    /* a quoted label (libcsv path only) follows the same rule */
    d = load_text("label,p_1,p_0\n\"1\",0.9,0.1\n", NULL, &err);
    if (!d) fail_msg("%s", err.msg);
    assert_int_equal(d->label[0], 0);
    cs_dataset_free(d);
}

/* Many classes: the duplicate check is a hash; it must still find the one duplicate
 * and name both columns, among 100,000. */
static void test_many_classes_duplicates(void **state)
{
    (void)state;
    const size_t k = 100000;
    for (int dup = 0; dup <= 2; dup++) {
        size_t cap = k * 16 + 64, o = 0;
        char *b = malloc(cap);
        assert_non_null(b);
        o += (size_t)snprintf(b + o, cap - o, "label");
        for (size_t j = 0; j < k; j++) {
            if (dup == 1 && j == k - 1) o += (size_t)snprintf(b + o, cap - o, ",p_C%zu", (size_t)4321);
            else if (dup == 2 && j == k - 1) o += (size_t)snprintf(b + o, cap - o, ",p_77.0");
            else if (dup == 2) o += (size_t)snprintf(b + o, cap - o, ",p_%zu", j);
            else o += (size_t)snprintf(b + o, cap - o, ",p_c%zu", j);
        }
        o += (size_t)snprintf(b + o, cap - o, "\n%s", dup == 2 ? "99998" : "c99998");
        for (size_t j = 0; j < k; j++) o += (size_t)snprintf(b + o, cap - o, ",%s", j == k - 2 ? "1" : "0");
        o += (size_t)snprintf(b + o, cap - o, "\n");
        cs_load_options opt;
        cs_load_options_default(&opt);
        cs_error err;
        cs_dataset *d = load_opt(b, o, &opt, NULL, &err);
        char want[160];
        if (dup == 0) {
            if (!d) fail_msg("%s", err.msg);
            assert_int_equal(d->k, k);
            assert_int_equal(d->label[0], (int32_t)(k - 2));
            assert_int_equal(d->correct[0], 1);
            cs_dataset_free(d);
        } else {
            assert_null(d);
            if (dup == 1)
                snprintf(want, sizeof want, "t.csv:1:%zu: duplicate column 'p_C4321' (class already"
                         " given by column 4323)", k + 1);
            else
                snprintf(want, sizeof want, "t.csv:1:%zu: duplicate column 'p_77.0' (class already"
                         " given by column 79)", k + 1);
            assert_string_equal(err.msg, want);
        }
        free(b);
    }
}

/* spaces around a value count the same, quoted or not */
static void test_spaces_inside_quotes(void **state)
{
    (void)state;
    cs_error err;
    cs_load_summary sum;
    cs_dataset *plain = load_text("id,label,p_a,p_b\ns1, 1 , 0.3,0.7\t\n", NULL, &err);
    if (!plain) fail_msg("%s", err.msg);
    cs_dataset *quoted = load_text("\" id\",\"label \",\" p_a\",p_b\n\"s1 \",\" 1\",\" 0.3\",\"0.7\t\"\n",
                                   &sum, &err);
    if (!quoted) fail_msg("%s", err.msg);
    assert_int_equal(sum.n_ignored, 0);
    assert_int_equal(quoted->k, 2);
    assert_memory_equal(quoted->prob, plain->prob, 2 * sizeof(double));
    assert_double_near(quoted->prob[0], 0.3, 0);
    assert_int_equal(quoted->label[0], 1);
    assert_string_equal(quoted->id_names[0], "s1");
    assert_string_equal(plain->id_names[0], "s1");
    cs_dataset_free(plain);
    cs_dataset_free(quoted);
    cs_load_summary_free(&sum);
    /* spaces inside a number are still not a number */
    expect_refused("label,p_a,p_b\n1,\"0. 3\",0.7\n", 2, 2,
                   "t.csv:2:2: non-numeric value '0. 3' in column 'p_a'");
}

/* issues 15.2 and 15.3: the rows of an id in a long TTA file, checked across rows, located */
static void test_tta_rows_of_an_id(void **state)
{
    (void)state;
    expect_refused("id,tta,label,p_a,p_b\n1,0,a,0.9,0.1\n1,1,b,0.8,0.2\n2,0,b,0.3,0.7\n", 3, 3,
                   "t.csv:3:3: label 'b' differs from the label 'a' of id '1' at tta 0 (line 2)");
    expect_refused("id,tta,label,p_a,p_b\n1,0,a,0.9,0.1\n\n1,0,a,0.8,0.2\n", 4, 2,
                   "t.csv:4:2: id '1' has more than one tta 0 row (the first is on line 2)");
    expect_refused("label,tta,id,p_a,p_b\na,0,1,0.9,0.1\nb,2,x y,0.3,0.7\nb,1,x y,0.3,0.7\n", 3, 3,
                   "t.csv:3:3: id 'x y' has no tta 0 row (the clean prediction) (and 1 more bad row)");
    /* skipping: each such row is reported at its line and left out; the rest is used */
    cs_load_options opt;
    cs_load_options_default(&opt);
    opt.skip_bad_rows = 1;
    const char *t = "id,tta,label,p_a,p_b\n1,0,a,0.9,0.1\n1,1,b,0.8,0.2\n1,2,a,0.6,0.4\n"
                    "2,1,a,0.5,0.5\n1,0,a,0.7,0.3\n3,0,b,0.2,0.8\n2,2,a,0.5,0.5\n";
    cs_error err;
    cs_load_summary sum;
    cs_dataset *d = load_opt(t, strlen(t), &opt, &sum, &err);
    if (!d) fail_msg("%s", err.msg);
    assert_int_equal(sum.rows_read, 7);
    assert_int_equal(sum.rows_rejected, 4);
    assert_int_equal(sum.rows_used, 3);
    assert_int_equal(sum.n_skipped_messages, 4);
    assert_string_equal(sum.skipped[0], "t.csv:3:3: label 'b' differs from the label 'a' of id '1' at tta 0 (line 2)");
    assert_string_equal(sum.skipped[1], "t.csv:5:1: id '2' has no tta 0 row (the clean prediction)");
    assert_string_equal(sum.skipped[2], "t.csv:6:2: id '1' has more than one tta 0 row (the first is on line 2)");
    assert_string_equal(sum.skipped[3], "t.csv:8:1: id '2' has no tta 0 row (the clean prediction)");
    assert_int_equal(d->n, 3);
    assert_int_equal(d->tta[0], 0);
    assert_int_equal(d->tta[1], 2);
    assert_int_equal(d->tta[2], 0);
    assert_double_near(d->prob[2], 0.6, 0);
    assert_int_equal(d->n_samples, 2);
    cs_dataset_free(d);
    cs_load_summary_free(&sum);
    /* a bad tta 0 row that is skipped leaves its id without one: reported, not dropped silently */
    t = "id,tta,label,p_a,p_b\n1,0,a,0.9,x\n1,1,a,0.8,0.2\n";
    d = load_opt(t, strlen(t), &opt, &sum, &err);
    assert_null(d);
    assert_int_equal(sum.rows_rejected, 2);
    assert_string_equal(sum.skipped[1], "t.csv:3:1: id '1' has no tta 0 row (the clean prediction)");
    cs_load_summary_free(&sum);
}

static void test_id_tta_case(void **state)
{
    (void)state;
    cs_error err;
    cs_load_summary sum;
    cs_dataset *d = load_text("id,tta,case,label,p_a,p_b,extra,more\n"
                              "s1,0,vol1,0,0.5,0.5,q,r\n"
                              "s1,1,vol1,0,0.6,0.4,q,r\n"
                              "s2,0,vol2,1,0.1,0.9,q,r\n"
                              "s1,2,vol2,0,0.7,0.3,q,r\n", &sum, &err);
    if (!d) fail_msg("%s", err.msg);
    assert_int_equal(d->n_ids, 2);
    assert_string_equal(d->id_names[0], "s1");
    assert_string_equal(d->id_names[1], "s2");
    int32_t want_id[] = {0, 0, 1, 0}, want_tta[] = {0, 1, 0, 2}, want_case[] = {0, 0, 1, 1};
    assert_memory_equal(d->id, want_id, sizeof want_id);
    assert_memory_equal(d->tta, want_tta, sizeof want_tta);
    assert_memory_equal(d->case_id, want_case, sizeof want_case);
    assert_int_equal(d->n_cases, 2);
    assert_string_equal(d->case_names[1], "vol2");
    assert_int_equal(d->n_samples, 2);        /* tta == 0 rows */
    assert_int_equal(sum.n_ignored, 2);
    assert_string_equal(sum.ignored_columns[0], "extra");
    assert_string_equal(sum.ignored_columns[1], "more");
    cs_dataset_free(d);
    cs_load_summary_free(&sum);
}

/* split_column: a named column kept per row as an interned string (fit / eval ...). */
static void expect_refused_opt(const char *text, const cs_load_options *o, long line, long col,
                               const char *msg)
{
    cs_error err;
    cs_load_summary sum;
    cs_dataset *d = load_opt(text, strlen(text), o, &sum, &err);
    if (d) fail_msg("accepted, expected '%s'", msg);
    assert_int_equal(err.code, CS_EINPUT);
    if (strcmp(err.msg, msg) != 0) fail_msg("message\n  got:  %s\n  want: %s", err.msg, msg);
    assert_int_equal(err.line, line);
    assert_int_equal(err.col, col);
    cs_load_summary_free(&sum);
}

static void test_split_column(void **state)
{
    (void)state;
    cs_load_options o;
    cs_load_options_default(&o);
    o.split_column = "split";                 /* matched case-insensitively */
    cs_error err;
    cs_load_summary sum;
    const char *t = "id,label,p_a,p_b,Split,note\n"
                    "s1,0,0.5,0.5,fit,x\n"
                    "s2,1,0.4,0.6,eval,x\n"
                    "s3,1,0.2,0.8, fit ,x\n"      /* trimmed like every unquoted field */
                    "s4,0,0.9,0.1,test,x\n"
                    "s5,0,0.7,0.3,eval,x\n";
    cs_dataset *d = load_opt(t, strlen(t), &o, &sum, &err);
    if (!d) fail_msg("%s", err.msg);
    assert_int_equal(d->n, 5);
    assert_non_null(d->split);
    int32_t want[] = {0, 1, 0, 2, 1};
    assert_memory_equal(d->split, want, sizeof want);
    assert_int_equal(d->n_splits, 3);
    assert_string_equal(d->split_names[0], "fit");
    assert_string_equal(d->split_names[1], "eval");
    assert_string_equal(d->split_names[2], "test");
    assert_int_equal(sum.n_ignored, 1);      /* the split column is not "ignored" */
    assert_string_equal(sum.ignored_columns[0], "note");
    cs_dataset_free(d);
    cs_load_summary_free(&sum);

    /* not asked for: an ordinary ignored column, no per-row array */
    d = load_text(t, &sum, &err);
    if (!d) fail_msg("%s", err.msg);
    assert_null(d->split);
    assert_null(d->split_names);
    assert_int_equal(d->n_splits, 0);
    assert_int_equal(sum.n_ignored, 2);
    assert_string_equal(sum.ignored_columns[0], "Split");
    cs_dataset_free(d);
    cs_load_summary_free(&sum);

    /* a quoted value (the fast path steps aside) reads the same */
    t = "label,p_a,p_b,split\n0,0.5,0.5,\"fit\"\n1,0.4,0.6,eval\n";
    d = load_opt(t, strlen(t), &o, NULL, &err);
    if (!d) fail_msg("%s", err.msg);
    int32_t want2[] = {0, 1};
    assert_memory_equal(d->split, want2, sizeof want2);
    assert_string_equal(d->split_names[0], "fit");
    cs_dataset_free(d);

    /* refusals: missing column, empty value, duplicate, a column that already means something */
    expect_refused_opt("label,p_a,p_b,fold\n0,0.4,0.6,fit\n", &o, 1, 1,
                       "t.csv:1:1: no split column 'split' in the header");
    expect_refused_opt("\n\nlabel,p_a,p_b\n0,0.4,0.6\n", &o, 3, 1,
                       "t.csv:3:1: no split column 'split' in the header");
    expect_refused_opt("label,p_a,p_b,split\n0,0.4,0.6,fit\n1,0.3,0.7,\n0,0.5,0.5,\n", &o, 3, 4,
                       "t.csv:3:4: empty field in column 'split' (and 1 more bad row)");
    expect_refused_opt("label,split,p_a,p_b,SPLIT\n0,fit,0.4,0.6,eval\n", &o, 1, 5,
                       "t.csv:1:5: duplicate column 'SPLIT' (same meaning as column 2)");
    cs_load_options oc = o;
    oc.split_column = "Case";
    expect_refused_opt("label,p_a,p_b,case\n0,0.4,0.6,v1\n", &oc, 1, 4,
                       "t.csv:1:4: column 'case' cannot be the split column: it already has a"
                       " meaning (label, probability, id, tta or case)");

    /* skip_bad_rows: the row with no split value is skipped and counted */
    cs_load_options os = o;
    os.skip_bad_rows = 1;
    t = "label,p_a,p_b,split\n0,0.4,0.6,fit\n1,0.3,0.7,\n0,0.5,0.5,eval\n";
    d = load_opt(t, strlen(t), &os, &sum, &err);
    if (!d) fail_msg("%s", err.msg);
    assert_int_equal(d->n, 2);
    int32_t want3[] = {0, 1};
    assert_memory_equal(d->split, want3, sizeof want3);
    assert_int_equal(sum.rows_rejected, 1);
    assert_string_equal(sum.skipped[0], "t.csv:3:4: empty field in column 'split'");
    cs_dataset_free(d);
    cs_load_summary_free(&sum);

    /* usage errors: an empty name, or a headerless file */
    cs_load_options ou = o;
    ou.split_column = "";
    assert_null(cs_load_buffer("t.csv", "label,p_a,p_b\n0,0.4,0.6\n", 24, &ou, NULL, &err));
    assert_int_equal(err.code, CS_EUSAGE);
    ou.split_column = "split";
    ou.no_header = 1;
    assert_null(cs_load_buffer("t.csv", "0,0.4,0.6\n", 10, &ou, NULL, &err));
    assert_int_equal(err.code, CS_EUSAGE);
    assert_non_null(strstr(err.msg, "needs a header row"));
}

static void test_headerless(void **state)
{
    (void)state;
    cs_load_options o;
    cs_load_options_default(&o);
    o.no_header = 1;
    o.label_col = 3;
    cs_error err;
    cs_load_summary sum;
    const char *t = "0.25,0.75,1\n0.5,0.5,0\n0.5,x,0\n";
    assert_null(load_opt(t, strlen(t), &o, &sum, &err));
    assert_string_equal(err.msg, "t.csv:3:2: non-numeric value 'x' in column 'p_1'");
    cs_load_summary_free(&sum);
    t = "0.25,0.75,1\n0.5,0.5,0\n";
    cs_dataset *d = load_opt(t, strlen(t), &o, &sum, &err);
    if (!d) fail_msg("%s", err.msg);
    assert_int_equal(d->n, 2);
    assert_int_equal(d->k, 2);
    assert_string_equal(d->class_names[1], "1");
    assert_double_near(d->prob[1], 0.75, 0);
    assert_int_equal(d->label[0], 1);
    assert_int_equal(sum.rows_read, 2);
    cs_dataset_free(d);
    cs_load_summary_free(&sum);
    /* two columns: the binary shorthand */
    o.label_col = 1;
    t = "1,0.8\n0,0.3\n";
    d = load_opt(t, strlen(t), &o, NULL, &err);
    if (!d) fail_msg("%s", err.msg);
    assert_double_near(d->prob[1], 0.8, 0);
    assert_double_near(d->prob[2], 0.7, 0);
    cs_dataset_free(d);
    o.label_col = 4;
    assert_null(load_opt(t, strlen(t), &o, NULL, &err));
    assert_string_equal(err.msg, "t.csv:1:1: label column 4 does not exist (the first row has 2 fields)");
}

/* ---- progress and cancel ------------------------------------------------------------------ */

typedef struct prog {
    int calls;
    double last;
    int bad_order;
    atomic_int *cancel_at_first;
} prog;

static void on_progress(void *ctx, double f)
{
    prog *p = ctx;
    if (f < p->last || f < 0 || f > 1) p->bad_order = 1;
    p->last = f;
    p->calls++;
    if (p->cancel_at_first) atomic_store(p->cancel_at_first, 1);
}

static void test_progress_and_cancel(void **state)
{
    (void)state;
    const char *t = "label,p_a,p_b\n1,0.25,0.75\n0,0.5,0.5\n";
    for (int path = CSL_PATH_CSV; path <= CSL_PATH_FAST; path++) {
        cs_load_options o;
        cs_load_options_default(&o);
        prog p = {0, 0.0, 0, NULL};
        o.progress = on_progress;
        o.progress_ctx = &p;
        cs_error err;
        cs_load_tuning tu = {path, 0, 0, 0, 0, 0};
        cs_dataset *d = cs_load_buffer_tuned("t.csv", t, strlen(t), &o, NULL, &err, &tu);
        assert_non_null(d);
        assert_int_equal(tu.used_path, path);
        assert_true(p.calls >= 1);
        assert_double_near(p.last, 1.0, 0);
        assert_false(p.bad_order);
        cs_dataset_free(d);

        /* a flag raised before loading */
        atomic_int cancel = 1;
        o.cancel = &cancel;
        o.progress = NULL;
        assert_null(cs_load_buffer_tuned("t.csv", t, strlen(t), &o, NULL, &err, &tu));
        assert_int_equal(err.code, CS_ECANCELLED);

        /* raised by the progress callback during the load */
        atomic_store(&cancel, 0);
        prog p2 = {0, 0.0, 0, &cancel};
        o.progress = on_progress;
        o.progress_ctx = &p2;
        assert_null(cs_load_buffer_tuned("t.csv", t, strlen(t), &o, NULL, &err, &tu));
        assert_int_equal(err.code, CS_ECANCELLED);
    }
}

/* ---- samples/broken: every file refused with default options, on both paths --------------- */

static void test_broken_samples(void **state)
{
    (void)state;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", cs_test_sample("broken"));
    DIR *dp = opendir(dir);
    assert_non_null(dp);
    struct dirent *de;
    int n = 0;
    while ((de = readdir(dp))) {
        if (de->d_name[0] == '.') continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        cs_error err;
        cs_load_summary sum;
        cs_dataset *d = cs_load_file(path, NULL, &sum, &err);
        if (d) fail_msg("%s was accepted", path);
        if (err.code != CS_EINPUT) fail_msg("%s: code %d: %s", path, err.code, err.msg);
        if (strncmp(err.msg, path, strlen(path)) != 0) fail_msg("%s: message '%s'", path, err.msg);
        cs_load_summary_free(&sum);
        n++;
    }
    closedir(dp);
    assert_true(n >= 15);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_row_reasons),
        cmocka_unit_test(test_file_reasons),
        cmocka_unit_test(test_strict_counts_further_rows),
        cmocka_unit_test(test_skip_bad_rows),
        cmocka_unit_test(test_row_sum_rule),
        cmocka_unit_test(test_sum_tolerance_and_renormalize),
        cmocka_unit_test(test_formats),
        cmocka_unit_test(test_gzip),
        cmocka_unit_test(test_unreadable),
        cmocka_unit_test(test_logits),
        cmocka_unit_test(test_binary_and_class_names),
        cmocka_unit_test(test_label_names_versus_positions),
        cmocka_unit_test(test_many_classes_duplicates),
        cmocka_unit_test(test_spaces_inside_quotes),
        cmocka_unit_test(test_tta_rows_of_an_id),
        cmocka_unit_test(test_id_tta_case),
        cmocka_unit_test(test_split_column),
        cmocka_unit_test(test_headerless),
        cmocka_unit_test(test_progress_and_cancel),
        cmocka_unit_test(test_broken_samples),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
