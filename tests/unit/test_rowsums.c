/* The one-pass report (engine/metrics/rowsums.h): the sums of the first rows made as they
 * are read, the dataset that keeps only the other rows' probabilities, and the load that makes
 * such a dataset.
 *
 * The property: whatever the split between the summed rows and the kept ones, and however the
 * summed rows arrive (one at a time or in blocks), cs_evaluate of all samples on the top-1 lens
 * gives every value and bin of the whole matrix bit for bit. The summed rows' probabilities are
 * overwritten with NaN in the one-pass dataset, so a read of any of them would show. And every
 * other use of such a dataset is refused with its reason. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calscope/compat.h"
#include "calscope/dataset.h"
#include "calscope/load.h"
#include "calscope/metrics.h"
#include "calscope/recal.h"
#include "engine/metrics/rowsums.h"
#include "calscope/topk.h"
#include "engine/num/ubin.h"
#include "engine/load/load_internal.h"
#include "engine/load/load_scan.h"
#include "support/cs_test.h"

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static double unit(void)
{
    return (double)(next() >> 11) * 0x1.0p-53;
}

/* Softmax-like rows (a few classes large, the rest down to 1e-12), with one-hot rows, exact
 * bin edges of M, -0.0 and +0.0 among them (edges: unless rows must sum to 1, `sums`); labels
 * mostly the largest class. */
static void fill_rows(double *prob, int32_t *label, size_t n, size_t k, int M, int sums)
{
    for (size_t i = 0; i < n; i++) {
        double *g = prob + i * k, s = 0.0;
        int kind = (int)(next() % 16);
        for (size_t c = 0; c < k; c++) {
            double u = unit();
            g[c] = kind == 0 ? 0.0 : u < 0.3 ? exp(-28.0 * unit()) : u * u;
            s += g[c];
        }
        size_t top = next() % k;
        if (kind == 0) g[top] = 1.0;
        else for (size_t c = 0; c < k; c++) g[c] /= s;
        if (kind == 1 && !sums) g[next() % k] = cs_ubin_edge((int)(next() % (uint64_t)(M + 1)), M);
        if (kind == 2) g[top] = g[top] == 0.0 ? -0.0 : g[top];
        label[i] = (int32_t)(next() % 4 ? (size_t)(next() % k) : top);
    }
}

static void fill(double *prob, int32_t *label, size_t n, size_t k, int M)
{
    fill_rows(prob, label, n, k, M, 0);
}

static cs_result evaluate(const cs_dataset *d, int M, unsigned want)
{
    cs_settings s;
    cs_settings_default(&s);
    s.bins = M;
    cs_error e;
    cs_prepared *p = cs_prepare(d, &s, &e);
    if (!p) fail_msg("cs_prepare: %s", e.msg);
    cs_result r;
    if (cs_evaluate(p, NULL, 0, want, NULL, &r, &e) != CS_OK) fail_msg("cs_evaluate: %s", e.msg);
    cs_prepared_free(p);
    return r;
}

static void same_result(const cs_result *a, const cs_result *b, const char *what)
{
    const double *x[] = {&a->accuracy, &a->ece, &a->ace, &a->mce, &a->rece_g, &a->rece_m,
                         &a->brier, &a->nll, &a->aece, &a->sce, &a->smece, &a->smece_sigma,
                         &a->l2ce, &a->l2ce_debiased, &a->ece_sweep, &a->ece_sweep_bins};
    const double *y[] = {&b->accuracy, &b->ece, &b->ace, &b->mce, &b->rece_g, &b->rece_m,
                         &b->brier, &b->nll, &b->aece, &b->sce, &b->smece, &b->smece_sigma,
                         &b->l2ce, &b->l2ce_debiased, &b->ece_sweep, &b->ece_sweep_bins};
    for (size_t i = 0; i < sizeof x / sizeof *x; i++)
        if (memcmp(x[i], y[i], sizeof(double)) != 0)
            fail_msg("%s: value %zu: %.17g one pass, %.17g whole", what, i, *x[i], *y[i]);
    assert_int_equal(a->n_bins, b->n_bins);
    assert_memory_equal(a->bins, b->bins, a->n_bins * sizeof *a->bins);
}

/* The one-pass copy of d: rows [0, s) summed in pieces of 1, 7, 300, ... rows, then their
 * probabilities overwritten with NaN. */
static cs_dataset *one_pass_of(const cs_dataset *d, size_t s, int M)
{
    cs_dataset *o = cs_test_dataset(d->n, d->k, d->prob, d->label);
    cs_rowsums *rs = cs_rowsums_new(d->k, M);
    assert_non_null(rs);
    static const size_t piece[] = {1, 7, 300, 1, 4096, 65536};
    for (size_t i = 0, j = 0; i < s; j++) {
        size_t m = piece[j % 6] < s - i ? piece[j % 6] : s - i;
        assert_int_equal(cs_rowsums_add(rs, o->prob + i * d->k, o->label + i, m), 0);
        i += m;
    }
    assert_int_equal(cs_rowsums_rows(rs), s);
    for (size_t i = 0; i < s * d->k; i++) o->prob[i] = NAN;
    o->rows_summed = s;
    o->row_sums = rs;
    o->free_row_sums = cs_rowsums_free;
    return o;
}

/* Splits at the start, inside the first NLL group, at and around the chunk of 65,536 rows, in
 * the middle and at the end; below and above the class-wise side thread's 100,000 samples. */
static void test_continued_sums_are_the_whole_matrix(void **state)
{
    (void)state;
    static const struct { size_t n, k; int M; } cases[] = {
        {1, 2, 15}, {17, 3, 7}, {1000, 41, 15}, {5000, 2, 1}, {70001, 10, 15}, {140000, 10, 100},
    };
    for (size_t ci = 0; ci < sizeof cases / sizeof *cases; ci++) {
        size_t n = cases[ci].n, k = cases[ci].k;
        int M = cases[ci].M;
        double *prob = malloc(n * k * sizeof *prob);
        int32_t *label = malloc(n * sizeof *label);
        assert_non_null(prob);
        assert_non_null(label);
        fill(prob, label, n, k, M);
        cs_dataset *d = cs_test_dataset(n, k, prob, label);
        unsigned want = CS_WANT_ALL | CS_WANT_RECE_CURVE;
        cs_result whole = evaluate(d, M, want);
        assert_false(isnan(whole.sce));
        size_t splits[] = {0, 1, 15, n / 2, 65535, 65536, 65537, n - 1, n};
        for (size_t si = 0; si < sizeof splits / sizeof *splits; si++) {
            size_t s = splits[si];
            if (s > n) continue;
            cs_dataset *o = one_pass_of(d, s, M);
            cs_result r = evaluate(o, M, want);
            char what[96];
            snprintf(what, sizeof what, "n %zu k %zu M %d, first %zu rows summed", n, k, M, s);
            same_result(&r, &whole, what);
            /* Brier and NLL alone (no class-wise ECE: no side thread), then the class-wise
             * ECE alone */
            cs_result b = evaluate(o, M, CS_WANT_BRIER | CS_WANT_NLL);
            assert_memory_equal(&b.brier, &whole.brier, sizeof b.brier);
            assert_memory_equal(&b.nll, &whole.nll, sizeof b.nll);
            cs_result c = evaluate(o, M, CS_WANT_SCE);
            assert_memory_equal(&c.sce, &whole.sce, sizeof c.sce);
            cs_result_free(&b);
            cs_result_free(&c);
            cs_result_free(&r);
            cs_dataset_free(o);
        }
        cs_result_free(&whole);
        cs_dataset_free(d);
        free(prob);
        free(label);
    }
}

/* A copy goes on alone (the dataset's sums stay as they were: two datasets on the same sums,
 * one of them evaluated after a copy of its sums took more rows, give the same values), and
 * sums made in two pieces that meet on a whole chunk append into the sums of all the rows. */
static void test_copy_and_append(void **state)
{
    (void)state;
    size_t n = 70000, k = 3, cut = CS_ROWSUMS_CHUNK;
    double *prob = malloc(n * k * sizeof *prob);
    int32_t *label = malloc(n * sizeof *label);
    assert_non_null(prob);
    assert_non_null(label);
    fill(prob, label, n, k, 15);
    cs_dataset *d = cs_test_dataset(n, k, prob, label);
    cs_result whole = evaluate(d, 15, CS_WANT_ALL);

    cs_dataset *o = one_pass_of(d, 100, 15);
    cs_rowsums *c = cs_rowsums_copy(o->row_sums);
    assert_non_null(c);
    assert_int_equal(cs_rowsums_add(c, prob + 100 * k, label + 100, 5000), 0);
    assert_int_equal(cs_rowsums_rows(o->row_sums), 100);
    assert_int_equal(cs_rowsums_rows(c), 5100);
    cs_result r = evaluate(o, 15, CS_WANT_ALL);
    same_result(&r, &whole, "after a copy took more rows");
    cs_result_free(&r);
    assert_int_equal(cs_rowsums_append(c, o->row_sums), -1);   /* c ends inside a chunk */
    cs_rowsums_free(c);
    cs_dataset_free(o);

    cs_rowsums *a = cs_rowsums_new(k, 15), *b = cs_rowsums_new(k, 15), *w = cs_rowsums_new(k, 7);
    assert_int_equal(cs_rowsums_add(a, prob, label, cut), 0);
    assert_int_equal(cs_rowsums_add(b, prob + cut * k, label + cut, n - cut), 0);
    assert_int_equal(cs_rowsums_append(a, w), -1);              /* other bins */
    assert_int_equal(cs_rowsums_append(a, b), 0);
    assert_int_equal(cs_rowsums_rows(a), n);
    assert_int_equal(cs_rowsums_bins(a), 15);
    assert_int_equal(cs_rowsums_classes(a), k);
    o = cs_test_dataset(n, k, prob, label);
    free(o->prob);
    o->prob = NULL;   /* every row summed: nothing kept (a one-pass load's) */
    o->rows_summed = n;
    o->row_sums = a;
    o->free_row_sums = cs_rowsums_free;
    r = evaluate(o, 15, CS_WANT_ALL);
    same_result(&r, &whole, "two pieces appended");
    cs_result_free(&r);
    cs_dataset_free(o);
    cs_rowsums_free(b);
    cs_rowsums_free(w);
    assert_null(cs_rowsums_new(1, 15));
    assert_null(cs_rowsums_new(3, 0));
    assert_null(cs_rowsums_new(3, CS_BINS_MAX + 1));
    cs_rowsums_free(NULL);
    cs_result_free(&whole);
    cs_dataset_free(d);
    free(prob);
    free(label);
}

/* Everything but all samples on the top-1 lens with the sums' bins is refused, in words. */
static void test_other_uses_are_refused(void **state)
{
    (void)state;
    size_t n = 500, k = 3;
    double prob[1500];
    int32_t label[500];
    fill(prob, label, n, k, 15);
    cs_dataset *d = cs_test_dataset(n, k, prob, label);
    cs_dataset *o = one_pass_of(d, 200, 15);
    const char *tail = ": the file was loaded in one pass for a report, and the probabilities of "
                       "its first 200 rows were summed, not kept";
    char want[256];
    cs_error e;
    cs_settings s;

    cs_settings_default(&s);
    assert_int_equal(cs_settings_set_lens(&s, "class:1", &e), CS_OK);
    assert_null(cs_prepare(o, &s, &e));
    snprintf(want, sizeof want, "a lens other than top1%s", tail);
    assert_string_equal(e.msg, want);
    assert_int_equal(e.code, CS_EUSAGE);

    cs_settings_default(&s);
    snprintf(s.select, sizeof s.select, "label == 1");
    assert_null(cs_prepare(o, &s, &e));
    snprintf(want, sizeof want, "a selection%s", tail);
    assert_string_equal(e.msg, want);

    cs_settings_default(&s);
    cs_prepared *p = cs_prepare(o, &s, &e);
    assert_non_null(p);
    uint32_t idx[3] = {0, 5, 300};
    cs_result r;
    assert_int_equal(cs_evaluate(p, idx, 3, CS_WANT_ALL, NULL, &r, &e), CS_EUSAGE);
    snprintf(want, sizeof want, "a subset of the samples%s", tail);
    assert_string_equal(e.msg, want);
    cs_prepared_free(p);

    /* other bins than the sums': the class-wise ECE cannot be made */
    cs_settings_default(&s);
    s.bins = 10;
    p = cs_prepare(o, &s, &e);
    assert_non_null(p);
    assert_int_equal(cs_evaluate(p, NULL, 0, CS_WANT_SCE, NULL, &r, &e), CS_EUSAGE);
    assert_string_equal(e.msg, "the file was loaded with its class-wise sums for 15 bins, not 10");
    cs_prepared_free(p);

    cs_settings_default(&s);
    int ks[1] = {2};
    double ece[1];
    assert_int_equal(cs_topk_bars(o, &s, ks, 1, NULL, ece, &e), CS_EUSAGE);
    snprintf(want, sizeof want, "top-k ECE bars%s", tail);
    assert_string_equal(e.msg, want);

    cs_compat_report cr;
    assert_int_equal(cs_compat_run(o, &s, CS_COMPAT_ALL_MASK, &cr, &e), CS_EUSAGE);
    snprintf(want, sizeof want, "--compat%s", tail);
    assert_string_equal(e.msg, want);

    cs_recal_options ro;
    cs_recal_options_default(&ro);
    cs_recal_info info;
    assert_null(cs_recal_apply(o, CS_RECAL_TS, &ro, &info, &e));
    snprintf(want, sizeof want, "recalibration%s", tail);
    assert_string_equal(e.msg, want);

    assert_int_equal(cs_dataset_need_probs(d, "x", &e), CS_OK);
    cs_dataset_free(o);
    cs_dataset_free(d);
}

/* ---- the load ---------------------------------------------------------------------------- */

typedef struct { char *p; size_t n, cap; } buf;
static void put(buf *b, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int m = vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
        va_end(ap);
        if ((size_t)m < b->cap - b->n) { b->n += (size_t)m; return; }
        b->cap = 2 * b->cap + (size_t)m + 64;
        b->p = realloc(b->p, b->cap);
        assert_non_null(b->p);
    }
}

static cs_dataset *load(const buf *b, const cs_load_options *opt, int scan)
{
    cs_load_tuning t = {CSL_PATH_FAST, 0, 2, 0, 0, scan};
    cs_error e;
    cs_dataset *d = cs_load_buffer_tuned("p.csv", b->p, b->n, opt, NULL, &e, &t);
    if (!d) fail_msg("load: %s", e.msg);
    return d;
}

/* One file read on two threads with and without the one-pass sums, with both scanners: the
 * one-pass dataset has the rows and caches of the whole load and the same values bit for bit;
 * `mode` says what it kept: 1 the second thread's rows (it never reached a whole chunk of
 * 65,536 rows: the sums of the first thread's rows are continued over them), 2 nothing (every
 * row summed: prob NULL), 0 everything (loaded again: blank or bad lines in the first chunk
 * put the second thread's sums out of place). */
static void load_both_ways(const buf *b, const cs_load_options *base, size_t k, int mode,
                           const char *what)
{
    cs_load_options one = *base;
    one.row_sums_bins = 15;
    for (int sc = 0; sc < 2; sc++) {
        int scan = sc ? CSL_SCAN_SWAR : CSL_SCAN_SSE2;
        cs_dataset *a = load(b, base, scan), *o = load(b, &one, scan);
        assert_int_equal(a->rows_summed, 0);
        assert_null(a->row_sums);
        assert_int_equal(o->n, a->n);
        size_t s = o->rows_summed;
        int got = s == 0 ? 0 : s == o->n ? 2 : 1;
        if (got != mode || (mode == 1 && s < o->n / 4) || (mode == 2 && o->prob))
            fail_msg("%s: %zu of %zu rows summed (prob %s), want mode %d", what, s, o->n,
                     o->prob ? "kept" : "NULL", mode);
        if (s) assert_int_equal(cs_rowsums_rows(o->row_sums), s);
        assert_memory_equal(o->label, a->label, a->n * sizeof *a->label);
        assert_memory_equal(o->conf, a->conf, a->n * sizeof *a->conf);
        assert_memory_equal(o->pred, a->pred, a->n * sizeof *a->pred);
        assert_memory_equal(o->correct, a->correct, a->n);
        if (s < o->n)
            assert_memory_equal(o->prob + s * k, a->prob + s * k, (a->n - s) * k * sizeof *a->prob);
        cs_result ra = evaluate(a, 15, CS_WANT_ALL), ro = evaluate(o, 15, CS_WANT_ALL);
        char w[96];
        snprintf(w, sizeof w, "%s, scan %d", what, sc);
        same_result(&ro, &ra, w);
        cs_result_free(&ra);
        cs_result_free(&ro);
        cs_dataset_free(a);
        cs_dataset_free(o);
    }
}

/* Rows as %.12g: 6,000 of 10 classes (the second thread's rows are fewer than a chunk) and
 * 200,000 of 3 (the second thread starts its own whole chunks). Variants: plain; blank lines
 * and a line with spaces (read by the general row reader) in the first chunk and the second;
 * blank lines in the second only; bad rows skipped in both; rows renormalised. */
static void test_load_in_one_pass(void **state)
{
    (void)state;
    static const struct { size_t n, k; int mode[5]; } sizes[] = {
        {6000, 10, {1, 1, 1, 1, 1}},
        {200000, 3, {2, 0, 2, 0, 2}},
    };
    for (size_t si = 0; si < 2; si++) {
        size_t n = sizes[si].n, k = sizes[si].k;
        double *prob = malloc(n * k * sizeof *prob);
        int32_t *label = malloc(n * sizeof *label);
        assert_non_null(prob);
        assert_non_null(label);
        fill_rows(prob, label, n, k, 15, 1);
        for (size_t i = 0; i < n; i++)   /* "-0" as a probability */
            if (prob[i * k + 1] == 0.0) prob[i * k + 1] = -0.0;
        for (int variant = 0; variant < 5; variant++) {
            buf b = {0};
            put(&b, "label");
            for (size_t c = 0; c < k; c++) put(&b, ",p_%zu", c);
            put(&b, "\n");
            size_t early = n / 8, late = n - n / 8;   /* in the first chunk, in the second */
            for (size_t i = 0; i < n; i++) {
                if ((variant == 1 && (i == early || i == late)) || (variant == 2 && i == late))
                    put(&b, "\n   \n");
                if (variant == 3 && (i == early || i == late)) {
                    put(&b, "1,0.5,0.6");
                    for (size_t c = 2; c < k; c++) put(&b, ",0");
                    put(&b, "\n");
                }
                double scale = variant == 4 && i % 3 == 0 ? 0.97 : 1.0;
                put(&b, variant == 1 && i % 997 == 5 ? " %d" : "%d", (int)label[i]);
                for (size_t c = 0; c < k; c++) put(&b, ",%.12g", prob[i * k + c] * scale);
                put(&b, "\n");
            }
            cs_load_options opt;
            cs_load_options_default(&opt);
            opt.skip_bad_rows = variant == 3;
            opt.renormalize = variant == 4;
            char what[64];
            snprintf(what, sizeof what, "%zu x %zu, variant %d", n, k, variant);
            load_both_ways(&b, &opt, k, sizes[si].mode[variant], what);
            free(b.p);
        }
        free(prob);
        free(label);
    }
}

/* Loads that keep every row whatever row_sums_bins says: one thread, a file with an id column
 * (not the plain layout). */
static void test_load_keeps_rows_where_it_cannot(void **state)
{
    (void)state;
    buf b = {0};
    put(&b, "id,label,p_0,p_1\n");
    for (int i = 0; i < 400; i++) put(&b, "r%d,%d,0.25,0.75\n", i, i % 2);
    cs_load_options opt;
    cs_load_options_default(&opt);
    opt.row_sums_bins = 15;
    cs_dataset *d = load(&b, &opt, CSL_SCAN_SSE2);
    assert_int_equal(d->rows_summed, 0);
    assert_null(d->row_sums);
    cs_dataset_free(d);
    free(b.p);

    buf c = {0};
    put(&c, "label,p_0,p_1\n");
    for (int i = 0; i < 400; i++) put(&c, "%d,0.25,0.75\n", i % 2);
    cs_load_tuning t = {CSL_PATH_FAST, 0, 1, 0, 0, CSL_SCAN_SSE2};
    cs_error e;
    d = cs_load_buffer_tuned("p.csv", c.p, c.n, &opt, NULL, &e, &t);
    assert_non_null(d);
    assert_int_equal(d->rows_summed, 0);
    cs_dataset_free(d);
    free(c.p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_continued_sums_are_the_whole_matrix),
        cmocka_unit_test(test_copy_and_append),
        cmocka_unit_test(test_other_uses_are_refused),
        cmocka_unit_test(test_load_in_one_pass),
        cmocka_unit_test(test_load_keeps_rows_where_it_cannot),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
