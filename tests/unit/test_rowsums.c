/* A file's summary (calscope/summarize.h) and what it is made of: the sums a full evaluation
 * takes over the probability rows, made row by row (engine/metrics/rowsums.h), and the
 * loader's one pass that makes them while it parses (engine/load/load_sums.h).
 *
 * The property: whatever the pieces the rows arrive in, the sums give the Brier score, NLL and
 * class-wise ECE of the whole matrix bit for bit, and the other values of all samples on the
 * top-1 lens need no probability at all (the dataset's prob is NULL, so a read would crash);
 * the summary of a file is then cs_measure of the whole load, bit for bit, and a request or a
 * file that needs the rows is handed back loaded whole. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "calscope/dataset.h"
#include "calscope/load.h"
#include "calscope/measure.h"
#include "calscope/metrics.h"
#include "calscope/summarize.h"
#include "engine/metrics/rowsums.h"
#include "engine/num/ubin.h"
#include "engine/load/load_internal.h"
#include "engine/load/load_sums.h"
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

/* What the sums stand for: the values cs_evaluate reads the probability rows for. */
#define FROM_SUMS (CS_WANT_BRIER | CS_WANT_NLL | CS_WANT_SCE)

/* The sums of d's rows: [0, s) added in pieces of 1, 7, 300, ... rows, then the rest at once. */
static cs_rowsums *sums_of(const cs_dataset *d, size_t s, int M)
{
    cs_rowsums *rs = cs_rowsums_new(d->k, M);
    assert_non_null(rs);
    static const size_t piece[] = {1, 7, 300, 1, 4096, 65536};
    for (size_t i = 0, j = 0; i < s; j++) {
        size_t m = piece[j % 6] < s - i ? piece[j % 6] : s - i;
        assert_int_equal(cs_rowsums_add(rs, d->prob + i * d->k, d->label + i, m), 0);
        i += m;
    }
    assert_int_equal(cs_rowsums_add(rs, d->prob + s * d->k, d->label + s, d->n - s), 0);
    assert_int_equal(cs_rowsums_rows(rs), d->n);
    return rs;
}

/* The values of d from its sums rs and from a copy of d that keeps no probability (NULL: a
 * read of one would crash), as a summary makes them. */
static cs_result summed_values(const cs_dataset *d, const cs_rowsums *rs, int M, unsigned want)
{
    cs_dataset *o = cs_test_dataset(d->n, d->k, d->prob, d->label);
    free(o->prob);
    o->prob = NULL;
    cs_result r = evaluate(o, M, want & ~FROM_SUMS);
    cs_settings s;
    cs_settings_default(&s);
    s.bins = M;
    cs_error e;
    double v[3];
    if (cs_rowsums_values(rs, &s, &v[0], &v[1], &v[2], &e) != CS_OK) fail_msg("values: %s", e.msg);
    if (want & CS_WANT_BRIER) r.brier = v[0];
    if (want & CS_WANT_NLL) r.nll = v[1];
    if (want & CS_WANT_SCE) r.sce = v[2];
    cs_dataset_free(o);
    return r;
}

/* Pieces that end at the start, inside the first NLL group, at and around the chunk of 65,536
 * rows, in the middle and at the end; below and above the side thread's 100,000 samples
 * (which, without the class-wise ECE, still makes the bins and RECE-G). */
static void test_sums_are_the_whole_matrix(void **state)
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
            cs_rowsums *rs = sums_of(d, s, M);
            cs_result r = summed_values(d, rs, M, want);
            char what[96];
            snprintf(what, sizeof what, "n %zu k %zu M %d, pieces up to row %zu", n, k, M, s);
            same_result(&r, &whole, what);
            cs_result_free(&r);
            cs_rowsums_free(rs);
        }
        cs_result_free(&whole);
        cs_dataset_free(d);
        free(prob);
        free(label);
    }
}

/* Sums made in two pieces that meet on a whole chunk append into the sums of all the rows;
 * pieces of another shape, or a first piece that ends inside a chunk, are refused. Sums under
 * other bins than the settings', or of no row, give no value, in words. */
static void test_append_and_refusals(void **state)
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

    cs_rowsums *a = cs_rowsums_new(k, 15), *b = cs_rowsums_new(k, 15), *w = cs_rowsums_new(k, 7);
    cs_rowsums *c = cs_rowsums_new(k, 15);
    assert_int_equal(cs_rowsums_add(c, prob, label, 100), 0);
    assert_int_equal(cs_rowsums_append(c, b), -1);              /* c ends inside a chunk */
    assert_int_equal(cs_rowsums_add(a, prob, label, cut), 0);
    assert_int_equal(cs_rowsums_add(b, prob + cut * k, label + cut, n - cut), 0);
    assert_int_equal(cs_rowsums_append(a, w), -1);              /* other bins */
    assert_int_equal(cs_rowsums_append(a, b), 0);
    assert_int_equal(cs_rowsums_rows(a), n);
    assert_int_equal(cs_rowsums_bins(a), 15);
    assert_int_equal(cs_rowsums_classes(a), k);
    cs_result r = summed_values(d, a, 15, CS_WANT_ALL);
    same_result(&r, &whole, "two pieces appended");
    cs_result_free(&r);

    cs_settings s;
    cs_settings_default(&s);
    s.bins = 10;
    cs_error e;
    double x = 0.0;
    assert_int_equal(cs_rowsums_values(a, &s, &x, NULL, NULL, &e), CS_EUSAGE);
    assert_string_equal(e.msg, "the rows were summed under 15 bins, not 10");
    cs_rowsums *none = cs_rowsums_new(k, 10);
    assert_int_equal(cs_rowsums_values(none, &s, &x, NULL, NULL, &e), CS_EEMPTY);
    assert_string_equal(e.msg, "no samples to measure");
    cs_rowsums_free(none);

    cs_rowsums_free(a);
    cs_rowsums_free(b);
    cs_rowsums_free(c);
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

/* Loads b on the fast path's two threads; bins > 0: summing, the sums into *sums. */
static cs_dataset *load(const buf *b, const cs_load_options *opt, int scan, int bins,
                        cs_rowsums **sums)
{
    cs_load_tuning t = {CSL_PATH_FAST, 0, 2, 0, 0, scan};
    cs_error e;
    cs_rowsums *rs = NULL;
    cs_dataset *d = cs_load_buffer_summed("p.csv", b->p, b->n, opt, &t, bins, NULL, &rs, &e);
    if (!d) fail_msg("load: %s", e.msg);
    if (sums) *sums = rs;
    else assert_null(rs);
    return d;
}

/* One file read on two threads keeping its rows and summing them, with both scanners: the
 * summing load has the rows and caches of the whole load and its values bit for bit; `summed`
 * says whether it summed (then it keeps no probability) or kept every row (loaded again:
 * blank or bad lines in the first chunk put the second thread's sums out of place). */
static void load_both_ways(const buf *b, const cs_load_options *opt, int summed, const char *what)
{
    for (int sc = 0; sc < 2; sc++) {
        int scan = sc ? CSL_SCAN_SWAR : CSL_SCAN_SSE2;
        cs_rowsums *rs = NULL;
        cs_dataset *a = load(b, opt, scan, 0, NULL), *o = load(b, opt, scan, 15, &rs);
        assert_int_equal(o->n, a->n);
        if ((rs != NULL) != summed || (rs && o->prob) || (!rs && !o->prob))
            fail_msg("%s: sums %s, prob %s; want %s", what, rs ? "made" : "none",
                     o->prob ? "kept" : "NULL", summed ? "summed" : "kept");
        if (rs) assert_int_equal(cs_rowsums_rows(rs), a->n);
        else assert_memory_equal(o->prob, a->prob, a->n * a->k * sizeof *a->prob);
        assert_memory_equal(o->label, a->label, a->n * sizeof *a->label);
        assert_memory_equal(o->conf, a->conf, a->n * sizeof *a->conf);
        assert_memory_equal(o->pred, a->pred, a->n * sizeof *a->pred);
        assert_memory_equal(o->correct, a->correct, a->n);
        cs_result ra = evaluate(a, 15, CS_WANT_ALL);
        cs_result ro = rs ? summed_values(a, rs, 15, CS_WANT_ALL) : evaluate(o, 15, CS_WANT_ALL);
        char w[96];
        snprintf(w, sizeof w, "%s, scan %d", what, sc);
        same_result(&ro, &ra, w);
        cs_result_free(&ra);
        cs_result_free(&ro);
        cs_rowsums_free(rs);
        cs_dataset_free(a);
        cs_dataset_free(o);
    }
}

/* Rows as %.12g: 6,000 of 10 classes (the second thread's rows are fewer than a chunk: the
 * first thread's sums go on over them) and 200,000 of 3 (the second thread starts its own
 * whole chunks). Variants: plain; blank lines and a line with spaces (read by the general row
 * reader) in the first chunk and the second; blank lines in the second only; bad rows skipped
 * in both; rows renormalised. */
static void test_load_in_one_pass(void **state)
{
    (void)state;
    static const struct { size_t n, k; int summed[5]; } sizes[] = {
        {6000, 10, {1, 1, 1, 1, 1}},
        {200000, 3, {1, 0, 1, 0, 1}},
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
            load_both_ways(&b, &opt, sizes[si].summed[variant], what);
            free(b.p);
        }
        free(prob);
        free(label);
    }
}

/* Loads that keep every row though they were asked to sum: a file with an id column (not the plain
 * layout), one thread. */
static void test_load_keeps_rows_where_it_cannot(void **state)
{
    (void)state;
    buf b = {0};
    put(&b, "id,label,p_0,p_1\n");
    for (int i = 0; i < 400; i++) put(&b, "r%d,%d,0.25,0.75\n", i, i % 2);
    cs_load_options opt;
    cs_load_options_default(&opt);
    cs_rowsums *rs = NULL;
    cs_dataset *d = load(&b, &opt, CSL_SCAN_SSE2, 15, &rs);
    assert_null(rs);
    assert_non_null(d->prob);
    cs_dataset_free(d);
    free(b.p);

    buf c = {0};
    put(&c, "label,p_0,p_1\n");
    for (int i = 0; i < 400; i++) put(&c, "%d,0.25,0.75\n", i % 2);
    cs_load_tuning t = {CSL_PATH_FAST, 0, 1, 0, 0, CSL_SCAN_SSE2};
    cs_error e;
    d = cs_load_buffer_summed("p.csv", c.p, c.n, &opt, &t, 15, NULL, &rs, &e);
    assert_non_null(d);
    assert_null(rs);
    assert_non_null(d->prob);
    cs_dataset_free(d);
    free(c.p);
}

/* ---- the summary ------------------------------------------------------------------------- */

/* A file of n rows of k classes (%.12g) at path; with_id: an id column first. */
static void write_file(const char *path, size_t n, size_t k, int with_id)
{
    double *prob = malloc(n * k * sizeof *prob);
    int32_t *label = malloc(n * sizeof *label);
    assert_non_null(prob);
    assert_non_null(label);
    fill_rows(prob, label, n, k, 15, 1);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "%slabel", with_id ? "id," : "");
    for (size_t c = 0; c < k; c++) fprintf(f, ",p_%zu", c);
    fputc('\n', f);
    for (size_t i = 0; i < n; i++) {
        if (with_id) fprintf(f, "r%zu,", i);
        fprintf(f, "%d", (int)label[i]);
        for (size_t c = 0; c < k; c++) fprintf(f, ",%.12g", prob[i * k + c]);
        fputc('\n', f);
    }
    assert_int_equal(fclose(f), 0);
    free(prob);
    free(label);
}

/* cs_measure of the whole load: the reference a summary must equal. */
static cs_measurement measured(const char *path, const cs_settings *s, unsigned parts)
{
    cs_error e;
    cs_load_summary sum;
    cs_dataset *d = cs_load_file(path, NULL, &sum, &e);
    if (!d) fail_msg("%s: %s", path, e.msg);
    cs_measure_request q;
    memset(&q, 0, sizeof q);
    q.parts = parts;
    q.want = CS_WANT_ALL;
    cs_measurement m;
    if (cs_measure(d, s, &q, NULL, &m, &e) != CS_OK) fail_msg("cs_measure: %s", e.msg);
    assert_non_null(d->prob);
    cs_dataset_free(d);
    cs_load_summary_free(&sum);
    return m;
}

/* A file of a label and probabilities only, read on two threads (12 MB: more than the 4 MiB a
 * load takes one thread for), at the default 15 bins and at 7 and 100: the summary summed every
 * row and holds cs_measure's values of the whole load bit for bit, the counts and the names. */
static void test_summary_is_the_measurement(void **state)
{
    (void)state;
    char path[] = "/tmp/calscope-summary-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    size_t n = 200000, k = 4;
    write_file(path, n, k, 0);
    static const int bins[] = {15, 7, 100};
    for (size_t bi = 0; bi < 3; bi++) {
        cs_settings s;
        cs_settings_default(&s);
        s.bins = bins[bi];
        cs_measurement m = measured(path, &s, CS_MEASURE_CASES);
        cs_summary sm;
        cs_dataset *rows = (cs_dataset *)1;
        cs_load_summary sum;
        cs_error e;
        cs_run run = { .threads = 2, .cancel = NULL, .progress_ppm = NULL };
        assert_int_equal(cs_summarize_file(path, NULL, &s, CS_MEASURE_CASES, &run, &sm, &rows, &sum, &e), CS_OK);
        assert_null(rows);
        assert_int_equal(sm.rows_summed, n);   /* the summing path was taken */
        assert_int_equal(sm.rows, n);
        assert_int_equal(sm.classes, k);
        assert_string_equal(sm.class_names[0], "0");
        assert_string_equal(sm.class_names[3], "3");
        assert_int_equal(sum.rows_used, n);
        assert_int_equal(m.selected, n);
        char what[64];
        snprintf(what, sizeof what, "summary of %zu x %zu at %d bins", n, k, bins[bi]);
        same_result(&sm.result, &m.result, what);
        assert_false(isnan(sm.result.sce));
        cs_summary_free(&sm);
        cs_load_summary_free(&sum);
        cs_measurement_free(&m);
    }
    unlink(path);
}

/* What needs the rows is not served by the sums: intervals, a curve, top-k bars or the Likert
 * table asked for, a selection, another lens — and a file with an id column; each comes back
 * loaded whole, with its probabilities. */
static void test_summary_hands_back_what_needs_rows(void **state)
{
    (void)state;
    char path[] = "/tmp/calscope-summary-XXXXXX", idpath[] = "/tmp/calscope-summary-id-XXXXXX";
    int fd = mkstemp(path), fdi = mkstemp(idpath);
    assert_true(fd >= 0 && fdi >= 0);
    close(fd);
    close(fdi);
    write_file(path, 200000, 3, 0);
    write_file(idpath, 200000, 3, 1);
    static const struct { unsigned parts; const char *select, *lens; int id; } asks[] = {
        {CS_MEASURE_CI, "", NULL, 0},     {CS_MEASURE_CURVE, "", NULL, 0},
        {CS_MEASURE_TOPK, "", NULL, 0},   {CS_MEASURE_LIKERT, "", NULL, 0},
        {0, "label == 1", NULL, 0},       {0, "", "class:1", 0},
        {0, "", "classwise", 0},          {CS_MEASURE_CASES, "", NULL, 1},
    };
    for (size_t i = 0; i < sizeof asks / sizeof *asks; i++) {
        cs_settings s;
        cs_settings_default(&s);
        cs_error e;
        snprintf(s.select, sizeof s.select, "%s", asks[i].select);
        if (asks[i].lens) assert_int_equal(cs_settings_set_lens(&s, asks[i].lens, &e), CS_OK);
        cs_summary sm;
        cs_dataset *rows = NULL;
        assert_int_equal(cs_summarize_file(asks[i].id ? idpath : path, NULL, &s, asks[i].parts,
                                           NULL, &sm, &rows, NULL, &e), CS_OK);
        if (!rows) fail_msg("request %zu was served by the sums", i);
        assert_non_null(rows->prob);
        assert_int_equal(rows->n, 200000);
        assert_int_equal(sm.rows_summed, 0);
        assert_null(sm.class_names);
        cs_dataset_free(rows);
    }
    /* a refusal of the load is the loader's, word for word */
    cs_settings s;
    cs_settings_default(&s);
    cs_summary sm;
    cs_dataset *rows = NULL;
    cs_error e;
    assert_int_equal(cs_summarize_file("/nonexistent/p.csv", NULL, &s, 0, NULL, &sm, &rows, NULL, &e),
                     CS_EINPUT);
    assert_null(rows);
    assert_string_equal(e.msg, "/nonexistent/p.csv: cannot open: No such file or directory");
    unlink(path);
    unlink(idpath);
}

int main(void)
{
    /* the summing path reads on two threads, whatever the machine's count */
    setenv("CALSCOPE_LOADER_THREADS", "2", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sums_are_the_whole_matrix),
        cmocka_unit_test(test_append_and_refusals),
        cmocka_unit_test(test_load_in_one_pass),
        cmocka_unit_test(test_load_keeps_rows_where_it_cannot),
        cmocka_unit_test(test_summary_is_the_measurement),
        cmocka_unit_test(test_summary_hands_back_what_needs_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
