/* The statistics object and its file: the tests' reference accumulation (support/seg_kernel.h) on hand-worked voxels, write/read
 * round trips (plain and gzip) bit for bit, every read refusal with its message, merge of
 * shards equal to the whole byte for byte, merge refusals, subsets. */
#include "support/cs_test.h"
#include "support/seg_data.h"
#include "support/seg_kernel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <limits.h>
#include <sys/resource.h>
#include <zlib.h>

#include "calscope/segstats.h"
#include "engine/segstats/segstats_internal.h"
#include "engine/gz/gz.h"

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? cap * 2 : 65536;
            buf = realloc(buf, cap + 1);
            assert_non_null(buf);
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        if (!got) break;
        n += got;
    }
    fclose(f);
    buf[n] = '\0';
    *len = n;
    return buf;
}

static const char *write_tmp(const cs_segstats *st, const char *suffix)
{
    const char *path = cs_test_tmpfile(suffix, "", 0);
    cs_error err;
    assert_int_equal(cs_segstats_write(st, path, &err), CS_OK);
    return path;
}

static void assert_same_stats(const cs_segstats *a, const cs_segstats *b)
{
    assert_int_equal(a->fine, b->fine);
    assert_int_equal(a->kind, b->kind);
    assert_int_equal(a->k, b->k);
    assert_string_equal(a->mapping, b->mapping);
    for (size_t j = 0; j < a->k; j++) assert_string_equal(a->class_names[j], b->class_names[j]);
    assert_int_equal(a->n_cases, b->n_cases);
    for (size_t c = 0; c < a->n_cases; c++) {
        assert_string_equal(a->case_names[c], b->case_names[c]);
        assert_string_equal(a->probs_in[c].path, b->probs_in[c].path);
        assert_string_equal(a->labels_in[c].path, b->labels_in[c].path);
        assert_int_equal(a->probs_in[c].size, b->probs_in[c].size);
        assert_int_equal(a->labels_in[c].size, b->labels_in[c].size);
        assert_int_equal(a->voxels[c], b->voxels[c]);
    }
    size_t nb = a->n_cases * a->k * (size_t)a->fine, nt = a->n_cases * (size_t)a->fine;
    size_t ns = a->n_cases * a->k;
    assert_memory_equal(a->cnt, b->cnt, nb * sizeof *a->cnt);
    assert_memory_equal(a->sum_p, b->sum_p, nb * sizeof *a->sum_p);   /* bit for bit */
    assert_memory_equal(a->sum_y, b->sum_y, nb * sizeof *a->sum_y);
    assert_true((a->t_cnt == NULL) == (b->t_cnt == NULL));
    if (a->t_cnt) {
        assert_memory_equal(a->t_cnt, b->t_cnt, nt * sizeof *a->t_cnt);
        assert_memory_equal(a->t_sum_conf, b->t_sum_conf, nt * sizeof *a->t_sum_conf);
        assert_memory_equal(a->t_sum_correct, b->t_sum_correct, nt * sizeof *a->t_sum_correct);
    }
    assert_memory_equal(a->sq_err, b->sq_err, ns * sizeof *a->sq_err);
    assert_memory_equal(a->nll_pos, b->nll_pos, ns * sizeof *a->nll_pos);
    assert_memory_equal(a->nll_neg, b->nll_neg, ns * sizeof *a->nll_neg);
}

/* Four voxels, K = 2, F = 4 (edges .25 .5 .75): values on the edges fall in the bin they
 * close, 0 in bin 0. Worked by hand. */
static void test_kernel_by_hand(void **state)
{
    (void)state;
    const double p0[] = { 0.25, 0.5, 1.0, 0.0 }, p1[] = { 0.75, 0.5, 0.0, 1.0 };
    const int32_t lab[] = { 1, 0, 0, 0 };
    const double *planes[] = { p0, p1 };
    cs_segstats *st = cs_segstats_new(4, CS_SEG_SOFTMAX, 2, (const char *const[]){ "bg", "fg" },
                                      "0,1", 1);
    assert_non_null(st);
    cs_test_seg_add_voxels(st, 0, planes, lab, NULL, 4);
    assert_int_equal(st->voxels[0], 4);
    /* class 0: .25 -> bin 0 (y 0), .5 -> bin 1 (y 1), 1 -> bin 3 (y 1), 0 -> bin 0 (y 1) */
    assert_int_equal(st->cnt[cs_segstats_ci(st, 0, 0, 0)], 2);
    assert_int_equal(st->sum_y[cs_segstats_ci(st, 0, 0, 0)], 1);
    assert_double_near(st->sum_p[cs_segstats_ci(st, 0, 0, 0)], 0.25, 0);
    assert_int_equal(st->cnt[cs_segstats_ci(st, 0, 0, 1)], 1);
    assert_int_equal(st->cnt[cs_segstats_ci(st, 0, 0, 2)], 0);
    assert_int_equal(st->cnt[cs_segstats_ci(st, 0, 0, 3)], 1);
    /* class 1: .75 -> bin 2 (y 1), .5 -> bin 1, 0 -> bin 0, 1 -> bin 3 (y 0) */
    assert_int_equal(st->cnt[cs_segstats_ci(st, 0, 1, 2)], 1);
    assert_int_equal(st->sum_y[cs_segstats_ci(st, 0, 1, 2)], 1);
    assert_int_equal(st->sum_y[cs_segstats_ci(st, 0, 1, 3)], 0);
    /* top-1: .75 (correct, bin 2), .5 tie -> class 0 (correct, bin 1), 1 (correct, bin 3),
     * 1 for class 1 (wrong, bin 3) */
    assert_int_equal(st->t_cnt[cs_segstats_ti(st, 0, 1)], 1);
    assert_int_equal(st->t_sum_correct[cs_segstats_ti(st, 0, 1)], 1);
    assert_int_equal(st->t_cnt[cs_segstats_ti(st, 0, 2)], 1);
    assert_int_equal(st->t_cnt[cs_segstats_ti(st, 0, 3)], 2);
    assert_int_equal(st->t_sum_correct[cs_segstats_ti(st, 0, 3)], 1);
    assert_double_near(st->t_sum_conf[cs_segstats_ti(st, 0, 3)], 2.0, 0);
    /* scores: class 0 squared errors .0625 + .25 + 0 + 1; nll_pos class 0 = -ln .5 - ln 1
     * - ln 1e-15; class 1 nll_pos = -ln .75 */
    assert_double_near(st->sq_err[0], 0.0625 + 0.25 + 0 + 1, 1e-15);
    assert_double_near(st->nll_pos[0], -log(0.5) - log(1e-15), 1e-12);
    assert_double_near(st->nll_pos[1], -log(0.75), 1e-15);
    assert_double_near(st->nll_neg[0], -log(0.75), 1e-15);
    assert_double_near(st->nll_neg[1], -log(0.5) - log(1e-15) - 0, 1e-12);
    cs_segstats_free(st);
}

/* At the default F = 300, values exactly on edges fall in the bin they close (bin i is (i/F,
 * (i+1)/F]): 0.25 = 75/300 in fine bin 74, 0.5 in 149, 1 in 299, 0 in 0; 0.25's float16 neighbours
 * (0.25 - 2^-13 and 0.25 + 2^-12) in bins 74 and 75. */
static void test_kernel_edges_at_300(void **state)
{
    (void)state;
    const double p0[] = { 0.25, 0.5, 1.0, 0.0, 0.25 - 0x1p-13, 0.25 + 0x1p-12 };
    double p1[6];
    for (int i = 0; i < 6; i++) p1[i] = 1 - p0[i];
    const int32_t lab[] = { 0, 0, 0, 0, 0, 0 };
    const double *planes[] = { p0, p1 };
    cs_segstats *st = cs_segstats_new(300, CS_SEG_SOFTMAX, 2, (const char *const[]){ "a", "b" },
                                      "0,1", 1);
    cs_test_seg_add_voxels(st, 0, planes, lab, NULL, 6);
    const size_t bin[] = { 74, 149, 299, 0, 75 }, count[] = { 2, 1, 1, 1, 1 };
    for (int i = 0; i < 5; i++) assert_int_equal(st->cnt[cs_segstats_ci(st, 0, 0, bin[i])], count[i]);
    uint64_t total = 0;
    for (size_t i = 0; i < 300; i++) total += st->cnt[cs_segstats_ci(st, 0, 0, i)];
    assert_int_equal(total, 6);
    cs_segstats_free(st);
}

/* Regions: label values {0, 1, 2}; region A = {1, 2}, B = {2}. No top-1 arrays. */
static void test_kernel_regions(void **state)
{
    (void)state;
    const double pa[] = { 0.9, 0.2, 0.6 }, pb[] = { 0.1, 0.2, 0.7 };
    const int32_t lab[] = { 1, 0, 2 };     /* label indices */
    const uint8_t member[] = { 0, 0, /* 0 */ 1, 0, /* 1 */ 1, 1 /* 2 */ };
    const double *planes[] = { pa, pb };
    cs_segstats *st = cs_segstats_new(10, CS_SEG_REGIONS, 2, (const char *const[]){ "A", "B" },
                                      "A=1,2;B=2", 1);
    assert_non_null(st);
    assert_null(st->t_cnt);
    cs_test_seg_add_voxels(st, 0, planes, lab, member, 3);
    assert_int_equal(st->sum_y[cs_segstats_ci(st, 0, 0, 8)], 1);   /* .9 in (.8, .9] */
    assert_int_equal(st->sum_y[cs_segstats_ci(st, 0, 0, 1)], 0);   /* .2 in (.1, .2] */
    assert_int_equal(st->sum_y[cs_segstats_ci(st, 0, 0, 5)], 1);   /* .6 in (.5, .6] */
    assert_int_equal(st->sum_y[cs_segstats_ci(st, 0, 1, 6)], 1);   /* .7 in (.6, .7] */
    assert_int_equal(st->sum_y[cs_segstats_ci(st, 0, 1, 0)], 0);   /* .1 in (0, .1] */
    assert_double_near(st->sq_err[1], 0.01 + 0.04 + 0.09, 1e-15);
    assert_double_near(st->nll_pos[1], -log(0.7), 1e-15);
    assert_double_near(st->nll_neg[1], -log(0.9) - log(0.8), 1e-15);
    cs_segstats_free(st);
}

static void test_round_trip(void **state)
{
    (void)state;
    cs_test_seg *g = cs_test_seg_random(5, 4, 200, 1, 0);
    cs_segstats *st = cs_test_seg_stats(g, 300);
    const char *suffixes[] = { ".stats.csv", ".stats.csv.gz" };
    for (int i = 0; i < 2; i++) {
        const char *path = write_tmp(st, suffixes[i]);
        assert_int_equal(cs_segstats_sniff(path), 1);
        cs_segstats *back = NULL;
        cs_error err;
        assert_int_equal(cs_segstats_read(path, &back, &err), CS_OK);
        assert_same_stats(st, back);
        /* and the file it writes is the same file */
        const char *again = write_tmp(back, suffixes[i]);
        size_t la, lb;
        char *a = slurp(path, &la), *b = slurp(again, &lb);
        assert_int_equal(la, lb);
        assert_memory_equal(a, b, la);
        free(a);
        free(b);
        cs_segstats_free(back);
    }
    /* gzip really compresses: the .gz starts with the gzip magic */
    const char *gz = write_tmp(st, ".gz");
    size_t n;
    char *bytes = slurp(gz, &n);
    assert_true(n > 2 && (unsigned char)bytes[0] == 0x1f && (unsigned char)bytes[1] == 0x8b);
    free(bytes);
    cs_segstats_free(st);
    cs_test_seg_free(g);
}

/* Names with commas, quotes and spaces survive; a line break is refused on writing. */
static void test_round_trip_text(void **state)
{
    (void)state;
    cs_segstats *st = cs_segstats_new(3, CS_SEG_REGIONS, 2, (const char *const[]){ "WT", "TC" },
                                      "WT=1,2;TC=1", 2);
    st->case_names[0] = strdup(" a");
    st->case_names[1] = strdup("b,\"c\"");
    st->probs_in[0].path = strdup("dir with space/x.npz");
    st->labels_in[1].path = strdup("");
    cs_error err;
    const char *path = write_tmp(st, ".csv");
    cs_segstats *back = NULL;
    assert_int_equal(cs_segstats_read(path, &back, &err), CS_OK);
    assert_string_equal(back->mapping, "WT=1,2;TC=1");
    assert_string_equal(back->case_names[0], " a");
    assert_string_equal(back->case_names[1], "b,\"c\"");
    assert_string_equal(back->probs_in[0].path, "dir with space/x.npz");
    assert_string_equal(back->probs_in[1].path, "");
    cs_segstats_free(back);
    free(st->case_names[1]);
    st->case_names[1] = strdup("b\nc");
    assert_int_equal(cs_segstats_write(st, "/tmp/never-written.csv", &err), CS_EINPUT);
    assert_string_equal(err.msg, "/tmp/never-written.csv: a case name contains a line break,"
                                 " which a statistics file cannot hold");
    assert_int_equal(cs_segstats_write(st, "/nonexistent-dir/x.csv", &err), CS_EINPUT);
    free(st->case_names[1]);
    st->case_names[1] = strdup("b");
    assert_int_equal(cs_segstats_write(st, "/nonexistent-dir/x.csv", &err), CS_EINPUT);
    assert_string_equal(err.msg, "/nonexistent-dir/x.csv: cannot write: No such file or directory");
    cs_segstats_free(st);
}

/* A valid two-case file of F = 4, K = 2 to edit. */
#define HEAD "# calscope-stats 1\nfine,4\nkind,softmax\nmapping,\"bg=0,fg=1\"\nclasses,2,bg,fg\n" \
             "cases,2\ncase,0,a,2,pa,10,la,5\ncase,1,b,1,pb,11,lb,6\n"
#define BODY "c,0,0,0,1,0.25,0\nc,0,0,3,1,1,1\nc,0,1,0,1,0,0\nc,0,1,2,1,0.75,1\n" \
             "t,0,2,1,0.75,1\nt,0,3,1,1,1\ns,0,0,1.0625,0,34.5\ns,0,1,0.0625,0.28,0\n" \
             "c,1,0,1,1,0.5,1\nc,1,1,1,1,0.5,0\ns,1,0,0.25,0.69314718055994529,0\n" \
             "s,1,1,0.25,0,0.69314718055994529\nt,1,1,1,0.5,1\n"

static cs_status read_text(const char *text, cs_segstats **out, cs_error *err)
{
    const char *path = cs_test_tmpfile(".csv", text, strlen(text));
    cs_status s = cs_segstats_read(path, out, err);
    /* the message names the temporary file: replace it with "F" for the comparisons */
    size_t n = strlen(path);
    if (s && strncmp(err->msg, path, n) == 0) memmove(err->msg + 1, err->msg + n, strlen(err->msg + n) + 1), err->msg[0] = 'F';
    return s;
}

static void expect_error(const char *text, const char *msg)
{
    cs_segstats *st = (cs_segstats *)1;
    cs_error err;
    assert_int_equal(read_text(text, &st, &err), CS_EINPUT);
    assert_null(st);
    assert_string_equal(err.msg, msg);
}

/* HEAD BODY with the first `from` replaced by `to` (static storage). */
static const char *swapped(const char *from, const char *to)
{
    static char buf[2048];
    const char *text = HEAD BODY, *at = strstr(text, from);
    assert_non_null(at);
    snprintf(buf, sizeof buf, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    return buf;
}

/* What makes a damaged file detectable: every line ends with its line break, every case has its
 * K 's' records, every sum lies where its bin or its case's voxels put it, every voxel has one
 * class, the class names are distinct and the mapping's. Each refusal by its message. */
static void test_read_incomplete_or_edited(void **state)
{
    (void)state;
    char cut[2048];
    snprintf(cut, sizeof cut, "%s", HEAD BODY);
    cut[strlen(cut) - 1] = '\0';   /* the last line without its line break */
    expect_error(cut, "F:21:1: the file ends inside this line, without its line break (a truncated"
                      " file?)");
    cut[strlen(cut) - 3] = '\0';   /* ... and cut inside its last number */
    expect_error(cut, "F:21:1: the file ends inside this line, without its line break (a truncated"
                      " file?)");
    /* each edit of HEAD BODY (its first FROM becomes TO) and the refusal */
    static const struct { const char *from, *to, *msg; } edits[] = {
        { "s,1,1,0.25,0,0.69314718055994529\n", "",
          "F:8:1: case 'b': no 's' record for class 'fg' (every case has one per class: a"
          " truncated or edited file?)" },
        { "s,0,1,0.0625,0.28,0", "s,0,1,0.0625,1e308,0",
          "F:16:5: NLL_POS 1e+308 is more than the case's 2 voxels can give (at most -ln 1e-15 ="
          " 34.5388 each)" },
        { "s,0,0,1.0625,0,34.5", "s,0,0,2.5,0,34.5",
          "F:15:4: SQ 2.5 is more than the case's 2 voxels can give (at most 1 each)" },
        { "s,0,0,1.0625,0,34.5", "s,0,0,1.0625,0,69",
          "F:7:1: case 'a': class 'bg': its 's' record's NLL_NEG 69 is more than"
          " 34.538776394910684, what its 1 voxels not of class 'bg' can give" },
        { "s,1,1,0.25,0,", "s,1,1,0.25,0.5,",
          "F:8:1: case 'b': class 'fg': its 's' record's NLL_POS 0.5 is more than 0, what its 0"
          " voxels of class 'fg' can give" },
        { "c,0,0,3,1,1,1", "c,0,0,3,1,0.5,1",
          "F:10:6: sum 0.5 is not what 1 values in fine bin 3 (0.75, 1] add up to" },
        { "t,0,2,1,0.75,1", "t,0,2,1,0.9,1",
          "F:13:5: sum 0.90000000000000002 is not what 1 values in fine bin 2 (0.5, 0.75] add"
          " up to" },
        { "classes,2,bg,fg", "classes,2,bg,bg",
          "F:5:4: class name 'bg' is given twice (also column 3): class names must be distinct" },
        { "classes,2,bg,fg", "classes,2,bg,tumour",
          "F:5:4: class 1 is 'tumour', but the mapping 'bg=0,fg=1' (line 4) names it 'fg'" },
        { "\"bg=0,fg=1\"", "\"bg=0,fg=1,x=2\"",
          "F:5:2: 2 classes, but the mapping 'bg=0,fg=1,x=2' (line 4) names 3" },
        { "\"bg=0,fg=1\"", "bg",
          "F:4:2: the mapping is not one reduce writes: --label-values: 'bg' is not an integer"
          " label value (in 'bg')" },
    };
    for (size_t e = 0; e < sizeof edits / sizeof edits[0]; e++)
        expect_error(swapped(edits[e].from, edits[e].to), edits[e].msg);
    /* both classes labelled in a one-voxel case (its scores moved to match) */
    char two[2048];
    snprintf(two, sizeof two, "%s", swapped("c,1,1,1,1,0.5,0", "c,1,1,1,1,0.5,1"));
    char *sfg = strstr(two, "s,1,1,0.25,0,0.69314718055994529");
    memcpy(sfg, "s,1,1,0.25,0.69314718055994529,0", 32);
    expect_error(two, "F:8:4: case 'b': its classes' labelled voxels add up to 2, not its 1 voxels"
                      " (each voxel has one class: an edited file?)");
}

static void test_read_valid_and_errors(void **state)
{
    (void)state;
    cs_segstats *st = NULL;
    cs_error err;
    assert_int_equal(read_text(HEAD BODY, &st, &err), CS_OK);
    assert_int_equal(st->fine, 4);
    assert_int_equal(st->n_cases, 2);
    assert_int_equal(st->cnt[cs_segstats_ci(st, 0, 1, 2)], 1);
    assert_double_near(st->nll_neg[0], 34.5, 0);
    cs_segstats_free(st);

    /* the same file with CRLF line ends (the fast path takes them as the general one does) and
     * a count spelled with 20 digits (outside the writer's spelling: the general path reads it)
     * gives the same object */
    char crlf[2048], *w = crlf;
    for (const char *p = HEAD BODY; *p; p++) {
        if (*p == '\n') *w++ = '\r';
        *w++ = *p;
    }
    *w = '\0';
    char *at = strstr(crlf, "c,0,1,2,1,0.75,1");
    memmove(at + 28, at + 9, strlen(at + 9) + 1);   /* the count "1" becomes 20 digits */
    memcpy(at + 8, "00000000000000000001", 20);
    cs_segstats *a = NULL, *b = NULL;
    assert_int_equal(read_text(HEAD BODY, &a, &err), CS_OK);
    if (read_text(crlf, &b, &err) != CS_OK) fail_msg("%s", err.msg);
    assert_same_stats(a, b);
    cs_segstats_free(a);
    cs_segstats_free(b);

    expect_error("a,b\n", "F:1:1: not a calscope statistics file (the first line is not"
                          " '# calscope-stats 1')");
    expect_error("# calscope-stats 2\n", "F:1:1: statistics format version '2' is not supported"
                                         " (this calscope reads version 1)");
    expect_error("# calscope-stats 1\n", "F:2:1: the file ends inside the header (expected a"
                                         " 'fine' line)");
    expect_error("# calscope-stats 1\nfine,0\n", "F:2:2: fine resolution 0 outside 1..100000");
    expect_error("# calscope-stats 1\nfine,x\n", "F:2:2: 'x' is not a count (a non-negative integer)");
    expect_error("# calscope-stats 1\nfine,4,5\n", "F:2:1: expected a 'fine' line with 2 fields");
    expect_error("# calscope-stats 1\nfine,4\nkind,sigmoid\n",
                 "F:3:2: 'sigmoid' is not a kind (softmax or regions)");
    expect_error("# calscope-stats 1\nfine,4\nkind,softmax\nmapping,\"0,1\nclasses,2,a,b\n",
                 "F:4:2: a quoted field is not closed");
    expect_error("# calscope-stats 1\nfine,4\nkind,softmax\nmapping,\"0,1\"x\n",
                 "F:4:2: text after a closing quote");
    expect_error("# calscope-stats 1\nfine,4\nkind,softmax\nmapping,0\nclasses,2,a\n",
                 "F:5:1: expected 2 class names after the count, found 1");
    expect_error("# calscope-stats 1\nfine,4\nkind,softmax\nmapping,0\nclasses,0\n",
                 "F:5:2: class count outside 1..65536");
    expect_error("# calscope-stats 1\nfine,4\nkind,softmax\nmapping,a=0\nclasses,1,a\ncases,9999\n",
                 "F:6:2: more cases than the rest of the file can hold (each takes at least 29"
                 " bytes, its case line and an 's' record per class; 9999 take 289971, 0 bytes"
                 " follow)");
    expect_error(HEAD "c,0,0,4,1,0.9,1\n" BODY, "F:9:4: bin 4 outside 0..3 (the fine resolution)");
    expect_error(HEAD "c,2,0,0,1,0.1,1\n" BODY, "F:9:2: case 2 outside 0..1 (as declared in the header)");
    expect_error(HEAD "c,0,2,0,1,0.1,1\n" BODY, "F:9:3: class 2 outside 0..1 (as declared in the header)");
    expect_error(HEAD "c,0,0,0,1,0.1\n" BODY, "F:9:1: a 'c' record has 7 fields, found 6");
    expect_error(HEAD "c,0,0,0,0,0,0\n" BODY, "F:9:5: a bin record with count 0 (only non-empty bins"
                                         " are written)");
    expect_error(HEAD "c,0,0,0,1,1.5,0\n" BODY, "F:9:6: sum 1.5 exceeds the bin's count 1");
    expect_error(HEAD "c,0,0,0,1,-0.5,0\n" BODY, "F:9:6: '-0.5' is not a sum (a finite non-negative"
                                            " number)");
    expect_error(HEAD "c,0,0,0,1,nan,0\n" BODY, "F:9:6: 'nan' is not a sum (a finite non-negative"
                                           " number)");
    expect_error(HEAD "c,0,0,0,1,0.5,2\n" BODY, "F:9:7: '2' exceeds the bin's count");
    expect_error(HEAD "c,0,0,0,1,0.2,1\nc,0,0,0,1,0.2,1\n" BODY, "F:10:1: a second record for the"
                                                          " same case, class and bin");
    expect_error(HEAD "s,0,0,1,1,1\ns,0,0,1,1,1\n" BODY, "F:10:1: a second scores record for the same"
                                                  " case and class");
    expect_error(HEAD "x,0\n" BODY, "F:9:1: 'x' is not a record type (c, t or s)");
    expect_error(HEAD "c,0,0,0,1,0.5,1,\n" BODY, "F:9:1: a 'c' record has 7 fields, found 8");
    expect_error(HEAD "c,00000000000000000000001,0,0,1,0.5,1\n" BODY,
                 "F:9:2: '00000000000000000000001' is not a count (a non-negative integer)");
    expect_error(HEAD "c,0,0,0,1,0.5,99999999999999999999\n" BODY,
                 "F:9:7: '99999999999999999999' is not a count (a non-negative integer)");
    /* a truncated file: too short for its cases' records; a line missing: the counts do not
     * add up to the case's voxels */
    expect_error(HEAD "c,0,0,0,1,0.25,0\n", "F:6:2: more cases than the rest of the file can hold"
                 " (each takes at least 41 bytes, its case line and an 's' record per class; 2"
                 " take 82, 61 bytes follow)");
    expect_error(HEAD "s,0,0,1.0625,0,34.5\ns,0,1,0.0625,0.28,0\n"
                 "s,1,0,0.25,0.69314718055994529,0\ns,1,1,0.25,0,0.69314718055994529\n",
                 "F:6:2: the records of 2 cases of 2 classes take at least 128 bytes, but 106"
                 " bytes follow the case lines (a truncated file?)");
    expect_error(swapped("c,0,0,3,1,1,1\n", ""), "F:7:4: case 'a': the class 'bg' bin counts add"
                 " up to 1, not the case's 2 voxels (a truncated or edited file?)");
    char trunc[1024];
    snprintf(trunc, sizeof trunc, "%s%s", HEAD, BODY);
    trunc[strlen(trunc) - strlen("t,1,1,1,0.5,1\n")] = '\0';
    expect_error(trunc, "F:8:4: case 'b': the top-1 bin counts add up to 0, not the case's 1"
                        " voxels (a truncated or edited file?)");
    expect_error("# calscope-stats 1\nfine,4\nkind,regions\nmapping,a=1\nclasses,1,a\ncases,1\n"
                 "case,0,a,1,p,1,l,1\nt,0,0,1,0.1,0\nc,0,0,0,1,0.1,0\ns,0,0,0,0,0\n",
                 "F:8:1: a top-1 record in a regions file"
                 " (top-1 is undefined for independent sigmoid regions)");
    expect_error("# calscope-stats 1\nfine,4\nkind,softmax\nmapping,a=0\nclasses,1,a\ncases,2\n"
                 "case,0,b,0,p,1,l,1\ncase,1,a,0,p,1,l,1\n" "s,0,0,0,0,0\ns,1,0,0,0,0\n",
                 "F:8:3: case 'a' after 'b': case names must be unique and in ascending order");
    expect_error("# calscope-stats 1\nfine,4\nkind,softmax\nmapping,a=0\nclasses,1,a\ncases,2\n"
                 "case,0,b,0,p,1,l,1\ncase,0,c,0,p,1,l,1\n" "s,0,0,0,0,0\ns,1,0,0,0,0\n",
                 "F:8:2: case lines must be numbered in order: expected 1");
    expect_error("# calscope-stats 1\nfine,4\nkind,softmax\nmapping,a=0\nclasses,1,a\ncases,1\n"
                 "case,0,,0,p,1,l,1\n" "s,0,0,0,0,0\ns,1,0,0,0,0\n", "F:7:3: a case needs a name");

    /* broken gzip: cut short, and not deflate data at all; a directory */
    cs_test_seg *g = cs_test_seg_random(3, 3, 300, 9, 0);
    cs_segstats *big = cs_test_seg_stats(g, 300);
    const char *gz = write_tmp(big, ".csv.gz");
    size_t n;
    char *bytes = slurp(gz, &n);
    const char *cut = cs_test_tmpfile(".csv.gz", bytes, n / 2);
    assert_int_equal(cs_segstats_read(cut, &st, &err), CS_EINPUT);
    char want[256];
    snprintf(want, sizeof want, "%s: cannot read: the gzip stream ends early (a truncated file?)", cut);
    assert_string_equal(err.msg, want);
    free(bytes);
    cs_segstats_free(big);
    cs_test_seg_free(g);
    const char *bad = cs_test_tmpfile(".gz", "\x1f\x8b\x08\x00garbage-garbage-garbage", 27);
    assert_int_equal(cs_segstats_read(bad, &st, &err), CS_EINPUT);
    snprintf(want, sizeof want, "%s: cannot read: invalid code lengths set", bad);
    assert_string_equal(err.msg, want);
    assert_int_equal(cs_segstats_read("/", &st, &err), CS_EINPUT);
    assert_string_equal(err.msg, "/: cannot read: Is a directory");

    assert_int_equal(cs_segstats_read("/nonexistent/s.csv", &st, &err), CS_EINPUT);
    assert_string_equal(err.msg, "/nonexistent/s.csv: cannot open: No such file or directory");
    assert_int_equal(cs_segstats_sniff("/nonexistent/s.csv"), 0);
    assert_int_equal(cs_segstats_sniff(cs_test_tmpfile(".csv", "p_0,label\n", 10)), 0);
}

/* A gzip bomb shaped as a statistics file: a whole header, then `mib` MiB of blank lines, gzip'd
 * by zlib at level 9 a MiB at a time (a few hundred KB; malloc'd, *n bytes). */
static unsigned char *bomb_gz(size_t mib, size_t *n)
{
    static const char head[] = "# calscope-stats 1\nfine,4\nkind,softmax\nmapping,a=0\nclasses,1,a\ncases,1\n";
    size_t cap = mib * 8192 + 65536, block = (size_t)1 << 20;
    unsigned char *out = malloc(cap), *lines = malloc(block);
    assert_non_null(out);
    assert_non_null(lines);
    memset(lines, '\n', block);
    z_stream z;
    memset(&z, 0, sizeof z);
    assert_int_equal(deflateInit2(&z, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
    z.next_out = out;
    z.avail_out = (uInt)cap;
    z.next_in = (Bytef *)(uintptr_t)head;
    z.avail_in = (uInt)(sizeof head - 1);
    assert_int_equal(deflate(&z, Z_NO_FLUSH), Z_OK);
    for (size_t i = 0; i < mib; i++) {
        z.next_in = lines;
        z.avail_in = (uInt)block;
        assert_int_equal(deflate(&z, i + 1 == mib ? Z_FINISH : Z_NO_FLUSH), i + 1 == mib ? Z_STREAM_END : Z_OK);
        assert_int_equal(z.avail_in, 0);
    }
    *n = z.total_out;
    deflateEnd(&z);
    free(lines);
    return out;
}

/* A statistics file read into memory has a byte budget: a gzip bomb (256 MiB of text in a few
 * hundred KB) is refused, with the file named, once its text passes the budget (1 MiB here),
 * and the read grows the process by far less than the bomb (getrusage: a reader without the
 * budget holds the 256 MiB). The budget of a mapped gzip file is also at most what its
 * compressed bytes can inflate to, 1032 each (cs_gz_most_inflated, the .nii.gz reader's rule). */
static void test_read_refuses_a_bomb(void **state)
{
    (void)state;
    size_t n;
    unsigned char *gz = bomb_gz(256, &n);
    assert_true(n < ((size_t)1 << 20));
    const char *path = cs_test_tmpfile(".stats.csv.gz", gz, n);
    free(gz);
    struct rusage before, after;
    getrusage(RUSAGE_SELF, &before);
    cs_segstats *st = NULL;
    cs_error err;
    assert_int_equal(cs_segstats_read_within(path, (uint64_t)1 << 20, &st, &err), CS_EINPUT);
    getrusage(RUSAGE_SELF, &after);
    assert_null(st);
    char want[512];
    snprintf(want, sizeof want, "%s: cannot read: more than 1048576 bytes of text, the most a"
             " statistics file read into memory may hold (a gzip bomb?)", path);
    assert_string_equal(err.msg, want);
    long grew_kb = after.ru_maxrss - before.ru_maxrss;
    if (grew_kb > 64 * 1024) fail_msg("the refused bomb grew the process by %ld KB", grew_kb);
    assert_true(cs_gz_most_inflated(1000) == 1032000ull);
    assert_true(cs_gz_most_inflated(ULLONG_MAX / 1000) == ULLONG_MAX);
}

static cs_segstats *shard(const cs_segstats *st, size_t from, size_t to)
{
    uint8_t keep[64] = { 0 };
    for (size_t c = from; c < to; c++) keep[c] = 1;
    cs_segstats *s = cs_segstats_subset(st, keep);
    assert_non_null(s);
    return s;
}

static void test_merge(void **state)
{
    (void)state;
    cs_test_seg *g = cs_test_seg_random(7, 3, 60, 2, 0);
    cs_segstats *whole = cs_test_seg_stats(g, 60);
    /* shards out of order and uneven; one empty */
    cs_segstats *parts[4] = { shard(whole, 4, 7), shard(whole, 0, 1), shard(whole, 3, 3),
                              shard(whole, 1, 4) };
    const char *names[4] = { "s1", "s2", "s3", "s4" };
    cs_segstats *merged = NULL;
    cs_error err;
    assert_int_equal(cs_segstats_merge((const cs_segstats *const *)parts, names, 4, &merged, &err),
                     CS_OK);
    assert_same_stats(whole, merged);
    size_t la, lb;
    const char *pa = write_tmp(whole, ".csv"), *pb = write_tmp(merged, ".csv");
    char *a = slurp(pa, &la), *b = slurp(pb, &lb);
    assert_int_equal(la, lb);
    assert_memory_equal(a, b, la);
    free(a);
    free(b);
    cs_segstats_free(merged);

    /* a case in two shards */
    cs_segstats *twice[2] = { shard(whole, 0, 3), shard(whole, 2, 5) };
    assert_int_equal(cs_segstats_merge((const cs_segstats *const *)twice, names, 2, &merged, &err),
                     CS_EINPUT);
    assert_null(merged);
    assert_string_equal(err.msg, "case 'case02' is in both s1 and s2");
    /* headers that differ */
    cs_segstats *other = cs_test_seg_stats(g, 30);
    const cs_segstats *pair[2] = { parts[0], other };
    assert_int_equal(cs_segstats_merge(pair, names, 2, &merged, &err), CS_EINPUT);
    assert_string_equal(err.msg, "s1 and s2 cannot be merged: fine resolution 60 vs 30");
    cs_segstats_free(other);
    other = shard(whole, 0, 1);
    free(other->mapping);
    other->mapping = strdup("0,1,4");
    pair[1] = other;
    assert_int_equal(cs_segstats_merge(pair, names, 2, &merged, &err), CS_EINPUT);
    assert_string_equal(err.msg, "s1 and s2 cannot be merged: mapping 'c0=0,c1=1,c2=2' vs '0,1,4'");
    free(other->mapping);
    other->mapping = strdup("c0=0,c1=1,c2=2");
    strcpy(other->class_names[1], "xx");
    assert_int_equal(cs_segstats_merge(pair, names, 2, &merged, &err), CS_EINPUT);
    assert_string_equal(err.msg, "s1 and s2 cannot be merged: class 1 is 'c1' vs 'xx'");
    other->kind = CS_SEG_REGIONS;
    assert_int_equal(cs_segstats_merge(pair, names, 2, &merged, &err), CS_EINPUT);
    assert_string_equal(err.msg, "s1 and s2 cannot be merged: kind softmax vs regions");
    assert_int_equal(cs_segstats_merge(pair, names, 0, &merged, &err), CS_EUSAGE);
    other->kind = CS_SEG_SOFTMAX;
    cs_segstats_free(other);
    for (int i = 0; i < 4; i++) cs_segstats_free(parts[i]);
    for (int i = 0; i < 2; i++) cs_segstats_free(twice[i]);
    cs_segstats_free(whole);
    cs_test_seg_free(g);
}

/* 200 cases F = 300, K = 4 (one random case copied, renamed case000..): a file large enough for
 * the reader's two threads. Caller frees. */
static cs_segstats *stats_200(void)
{
    cs_test_seg *g = cs_test_seg_random(1, 4, 20000, 3, 0);
    cs_segstats *one = cs_test_seg_stats(g, 300);
    cs_segstats *st = cs_segstats_new(300, CS_SEG_SOFTMAX, 4, (const char *const *)one->class_names,
                                      one->mapping, 200);
    for (size_t c = 0; c < 200; c++) {
        assert_int_equal(cs_segstats_copy_case(st, c, one, 0), 0);
        char name[16];
        snprintf(name, sizeof name, "case%03zu", c);
        free(st->case_names[c]);
        st->case_names[c] = strdup(name);
    }
    cs_segstats_free(one);
    cs_test_seg_free(g);
    return st;
}

/* Opening a 200-case F = 300, K = 4 file: printed, not asserted (tests do not time). */
static void test_open_time_report(void **state)
{
    (void)state;
    cs_segstats *st = stats_200();
    const char *path = write_tmp(st, ".csv");
    if (getenv("CS_SEGSTATS_KEEP")) {   /* a copy for timing by hand */
        cs_error werr;
        assert_int_equal(cs_segstats_write(st, getenv("CS_SEGSTATS_KEEP"), &werr), CS_OK);
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    cs_segstats *back = NULL;
    cs_error err;
    assert_int_equal(cs_segstats_read(path, &back, &err), CS_OK);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    size_t len;
    free(slurp(path, &len));
    print_message("[ info     ] 200-case F=300 K=4 statistics file (%zu bytes) read in %.1f ms\n",
                  len, (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
    assert_same_stats(st, back);
    cs_segstats_free(back);
    cs_segstats_free(st);
}

/* The text with line `at` (0-based) of `lines` replaced by `with` (NULL: a copy of line
 * `from` inserted before line `at`), as a file. */
static const char *edited(const char *text, const size_t *start, size_t at, const char *with, size_t from)
{
    size_t len = strlen(text), a = start[at];
    char *out = malloc(len + 256);
    assert_non_null(out);
    memcpy(out, text, a);
    size_t n = a;
    if (with) {
        n += (size_t)sprintf(out + n, "%s", with);
        a = start[at + 1];
    } else {
        memcpy(out + n, text + start[from], start[from + 1] - start[from]);
        n += start[from + 1] - start[from];
    }
    memcpy(out + n, text + a, len - a);
    n += len - a;
    const char *path = cs_test_tmpfile(".csv", out, n);
    free(out);
    return path;
}

/* A large file is read by two threads over blocks of cases; a line either cannot take sends
 * the whole file back to one thread, whose verdict and line numbers hold: a CRLF line late in
 * the file is accepted (the arrays are zeroed before the re-read, else its record would be "a
 * second record"), a late duplicate and a late case's record moved early are refused at the
 * line one thread names, a broken sum late likewise. */
static void test_two_threads_fall_back(void **state)
{
    (void)state;
    cs_segstats *st = stats_200();
    size_t len;
    char *text = slurp(write_tmp(st, ".csv"), &len);
    size_t n = 0, cap = 1 << 16, *start = malloc(cap * sizeof *start);
    assert_non_null(start);
    start[n++] = 0;
    for (size_t i = 0; i < len; i++)
        if (text[i] == '\n') {
            if (n == cap) assert_non_null(start = realloc(start, (cap *= 2) * sizeof *start));
            start[n++] = i + 1;
        }
    size_t lines = n - 1, late = lines * 4 / 5, early = lines / 3;
    while (text[start[late]] != 'c') late++;
    while (text[start[early]] != 'c') early++;
    assert_true(len > (2u << 20));
    char line[256], msg[512];
    cs_segstats *back = NULL;
    cs_error err;

    size_t ll = start[late + 1] - start[late] - 1;
    memcpy(line, text + start[late], ll);
    strcpy(line + ll, "\r\n");
    const char *path = edited(text, start, late, line, 0);
    if (cs_segstats_read(path, &back, &err) != CS_OK) fail_msg("%s", err.msg);
    assert_same_stats(st, back);
    cs_segstats_free(back);

    path = edited(text, start, late, NULL, late);   /* the copy is line late+1, 1-based */
    assert_int_equal(cs_segstats_read(path, &back, &err), CS_EINPUT);
    snprintf(msg, sizeof msg, "%s:%zu:1: a second record for the same case, class and bin", path, late + 2);
    assert_string_equal(err.msg, msg);

    path = edited(text, start, early, NULL, late);  /* the original is now line late+2 */
    assert_int_equal(cs_segstats_read(path, &back, &err), CS_EINPUT);
    snprintf(msg, sizeof msg, "%s:%zu:1: a second record for the same case, class and bin", path, late + 2);
    assert_string_equal(err.msg, msg);

    memcpy(line, text + start[late], ll);
    line[ll] = '\0';
    char *comma = strrchr(line, ',');
    strcpy(comma, ",x\n");
    path = edited(text, start, late, line, 0);
    assert_int_equal(cs_segstats_read(path, &back, &err), CS_EINPUT);
    snprintf(msg, sizeof msg, "%s:%zu:7: 'x' is not a count (a non-negative integer)", path, late + 1);
    assert_string_equal(err.msg, msg);
    free(start);
    free(text);
    cs_segstats_free(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_refuses_a_bomb),   /* first: it measures the peak RSS */
        cmocka_unit_test(test_kernel_by_hand),
        cmocka_unit_test(test_kernel_edges_at_300),
        cmocka_unit_test(test_kernel_regions),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_round_trip_text),
        cmocka_unit_test(test_read_valid_and_errors),
        cmocka_unit_test(test_read_incomplete_or_edited),
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_open_time_report),
        cmocka_unit_test(test_two_threads_fall_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
