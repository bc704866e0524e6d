/* Unit tests of the session layer's flag table (src/session): every flag round-trips (parse ->
 * render -> parse gives the same options, and rendering again gives the same line), every usage
 * error is checked verbatim for the front end that prints it, and --help, the man page and the
 * flag reference in docs/flags.md list what the table holds. */
#include "support/cs_test.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "session/flags.h"

/* ---- running the parser with stderr captured --------------------------------------------- */

static char err_text[4096];

/* Parses argv (NULL-terminated, argv[0] included) for `front`; the usage error, if any, lands
 * in err_text. */
static int parse_v(unsigned front, ss_opts *o, const char *const *argv)
{
    int argc = 0;
    while (argv[argc]) argc++;
    fflush(stderr);
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    int saved = dup(STDERR_FILENO);
    dup2(fileno(tmp), STDERR_FILENO);
    memset(o, 0, sizeof *o);
    int rc = ss_parse(argc, (char **)(uintptr_t)argv, front, o);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    rewind(tmp);
    size_t n = fread(err_text, 1, sizeof err_text - 1, tmp);
    err_text[n] = '\0';
    fclose(tmp);
    return rc;
}

/* Splits a rendered command line into words as sh would: bare words, '...' (with '\'' inside)
 * and $'...' with \xNN, \' and \\. Words point into `store`; returns the count. */
static int split_words(const char *line, char *store, char **words, int max)
{
    int n = 0;
    const char *p = line;
    char *w = store;
    while (*p) {
        while (*p == ' ') p++;
        if (!*p) break;
        assert_true(n < max);
        words[n++] = w;
        while (*p && *p != ' ') {
            if (p[0] == '$' && p[1] == '\'') {
                for (p += 2; *p && *p != '\''; p++) {
                    if (*p == '\\' && p[1] == 'x') {
                        char hex[3] = { p[2], p[3], 0 };
                        *w++ = (char)strtol(hex, NULL, 16);
                        p += 3;
                    } else if (*p == '\\') {
                        *w++ = *++p;
                    } else {
                        *w++ = *p;
                    }
                }
                assert_int_equal(*p, '\'');
                p++;
            } else if (*p == '\'') {
                for (p++; *p && *p != '\''; p++) *w++ = *p;
                assert_int_equal(*p, '\'');
                p++;
            } else if (*p == '\\') {
                *w++ = *++p;
                p++;
            } else {
                *w++ = *p++;
            }
        }
        *w++ = '\0';
    }
    words[n] = NULL;
    return n;
}

/* The options that decide what the report does, compared field by field. */
static void assert_same_opts(const ss_opts *a, const ss_opts *b)
{
    const cs_settings *x = &a->settings, *y = &b->settings;
    assert_int_equal(x->lens, y->lens);
    assert_int_equal(x->topk, y->topk);
    assert_string_equal(x->lens_arg, y->lens_arg);
    assert_int_equal(x->binning, y->binning);
    assert_int_equal(x->bins, y->bins);
    assert_true(x->gamma == y->gamma);
    assert_true(x->sigma == y->sigma);
    assert_true(x->smece_sigma == y->smece_sigma);
    assert_int_equal(x->distance, y->distance);
    assert_true(x->interval_lo == y->interval_lo && x->interval_hi == y->interval_hi);
    assert_int_equal(x->mixture, y->mixture);
    assert_string_equal(x->select, y->select);
    assert_true(x->boot_size == y->boot_size);
    assert_true(a->load.sum_tol == b->load.sum_tol);
    assert_int_equal(a->load.renormalize, b->load.renormalize);
    assert_int_equal(a->load.skip_bad_rows, b->load.skip_bad_rows);
    assert_int_equal(a->load.no_header, b->load.no_header);
    assert_int_equal(a->load.label_col, b->load.label_col);
    assert_int_equal(a->load.delimiter, b->load.delimiter);
    assert_true((a->load.labels == NULL) == (b->load.labels == NULL));
    if (a->load.labels) assert_string_equal(a->load.labels, b->load.labels);
    assert_int_equal(a->load.npy_logits, b->load.npy_logits);
    assert_int_equal(a->format, b->format);
    assert_int_equal(a->plot, b->plot);
    assert_int_equal(a->ascii, b->ascii);
    assert_true(a->seed == b->seed);
    assert_int_equal(a->threads, b->threads);
    assert_int_equal(a->ci_repeats, b->ci_repeats);
    assert_int_equal(a->ci_method, b->ci_method);
    assert_int_equal(a->curve, b->curve);
    assert_int_equal(a->n_curve_x, b->n_curve_x);
    for (size_t i = 0; i < a->n_curve_x; i++) assert_true(a->curve_x[i] == b->curve_x[i]);
    assert_int_equal(a->curve_list_flag, b->curve_list_flag);
    assert_int_equal(a->repeats, b->repeats);
    assert_int_equal(a->replace, b->replace);
    assert_int_equal(a->compare, b->compare);
    assert_int_equal(a->n_topk, b->n_topk);
    for (size_t i = 0; i < a->n_topk; i++) assert_int_equal(a->topk[i], b->topk[i]);
    assert_int_equal(a->likert, b->likert);
    assert_int_equal(a->n_likert_cuts, b->n_likert_cuts);
    for (size_t i = 0; i < a->n_likert_cuts; i++) assert_true(a->likert_cuts[i] == b->likert_cuts[i]);
    const ss_methods_opts *m = &a->methods, *n = &b->methods;
    assert_int_equal(m->n_recal, n->n_recal);
    for (int i = 0; i < m->n_recal; i++) assert_int_equal(m->recal[i], n->recal[i]);
    assert_int_equal(m->reference, n->reference);
    assert_int_equal(m->k, n->k);
    assert_int_equal(m->folds, n->folds);
    assert_int_equal(m->bins, n->bins);
    assert_int_equal(m->max_iter, n->max_iter);
    assert_int_equal(m->recal_all, n->recal_all);
    assert_true(m->split == n->split);
    assert_string_equal(m->split_column, n->split_column);
    assert_string_equal(m->split_fit, n->split_fit);
    assert_int_equal(m->select_each, n->select_each);
    assert_int_equal(m->verdict_metric, n->verdict_metric);
    assert_int_equal(m->verdict_metric_given, n->verdict_metric_given);
    assert_int_equal(m->text_metrics, n->text_metrics);
    assert_int_equal(m->text_metrics_given, n->text_metrics_given);
    assert_int_equal(a->compat, b->compat);
    assert_int_equal(a->torch_f64, b->torch_f64);
    assert_int_equal(a->torch_dtype_given, b->torch_dtype_given);
    assert_int_equal(a->n_checks, b->n_checks);
    for (size_t i = 0; i < a->n_checks; i++) assert_string_equal(a->check_text[i], b->check_text[i]);
    assert_int_equal(a->n_files, b->n_files);
    for (size_t i = 0; i < a->n_files; i++) assert_string_equal(a->files[i], b->files[i]);
}

/* Command lines that use every report flag between them. */
static const char *const report_cases[][24] = {
    { "report", "a.csv", NULL },
    { "report", "--lens", "topk:3", "--bins", "20", "--binning", "kdtree", "--gamma", "0.25",
      "--sigma", "0.05", "--distance", "interval:0.2,0.4", "a.csv", NULL },
    { "report", "--lens=group:0,1;2,3", "--select", "conf > 0.9 and y in {1,2}", "--format", "json",
      "--plot", "--ascii", "--check", "ece<=0.05", "--check", "ACCURACY >= 0.9", "my file.csv", NULL },
    { "report", "--lens", "class:it's", "--distance", "l2", "--mixture", "gmm3", "--format", "csv",
      "--no-header", "--label-col", "3", "--delimiter", ";", "--skip-bad-rows", "-", NULL },
    { "report", "--sum-tol", "1e-320", "--delimiter", "tab", "--distance", "max", "a\x1b[31mb's\\.csv", NULL },
    { "report", "--renormalize", "--ci", "300", "--ci-method", "bca", "--seed", "18446744073709551615",
      "--threads", "3", "--topk-bars", "1,2,full", "--likert", "a.csv", NULL },
    { "report", "--curve", "size", "--fractions", "0.1,50%,1", "--repeats", "7", "--replace",
      "--likert-cuts", "0,0.25,0.75,1", "--binning", "mass", "a.csv", NULL },
    { "report", "--curve", "bins", "--bins-list", "5,10,1000", "--compat", "all", "--lens", "classwise", "a.csv", NULL },
    { "report", "--curve", "bins", "--binning", "kdtree", "--bins-list", "0.05,0.5", "--lens", "full", "a.csv", NULL },
    { "report", "--compare", "--repeats", "50", "--reference", "2", "--compare-k", "4", "--ci-method", "basic",
      "--compat", "netcal", "--format", "json", "a.csv", "b.csv", NULL },
    { "report", "--recal", "iso,hist", "--recal-folds", "3", "--recal-bins", "20", "--seed", "0", "a.csv", NULL },
    { "report", "--recal", "hist", "--recal-split", "0.3", "a.csv", NULL },
    { "report", "--recal", "platt", "--recal-split-column", "role=fit", "--", "-x.csv", NULL },
    { "report", "--recal", "all", "--recal-max-iter", "40", "a.csv", NULL },
    { "report", "--recal", "ts", "--recal-split-column", "split", "a.csv", NULL },
    { "report", "--compare", "--select", "conf > 0.9", "--select-on", "each", "--verdict-metric", "RECE-G", "--metrics", "brier,ece", "a.csv", "b.csv", NULL },
    { "report", "--compat", "torchmetrics-binary", "--torch-dtype", "float64", "a.csv", NULL },
    { "report", "--labels", "my y.npy", "--npy-logits", "a.npy", "b.npy", NULL },
    { "report", "--label-values", "bg=0,NCR=1,ED=2,ET=4", "--fine", "600", "--affine-tol", "0.01", "m.csv", NULL },
    { "report", "--regions", "WT=1,2,4;TC=1,4;ET=4", "m.csv", NULL },
    { "report", "--curve", "size", "--true-ece", "0.0253", "synthetic_bias.csv", NULL },
    { "report", "--probs", "pred dir", "--labels", "labelsTs", "--prob-suffix", "_prob", NULL },
    { "report", "--ci", "20", "--boot-size", "full", "a.csv", NULL },
    { "report", "--compare", "--boot-size", "40000", "a.csv", "b.csv", NULL },
    { "report", "--smece-sigma", "0.05", "--lens", "class:1", "--compat", "relplot", "a.csv", NULL },
};

static void round_trip(unsigned front, const char *const *argv, char *line, size_t size)
{
    ss_opts a, b;
    int rc = parse_v(front, &a, argv);
    if (rc != 0) fprintf(stderr, "parse failed: %s", err_text);
    assert_int_equal(rc, 0);
    ss_render(&a, line, size);
    char store[4096], *words[64];
    int n = split_words(line, store, words, 63);
    assert_true(n >= 2);
    assert_string_equal(words[0], "calscope");
    assert_string_equal(words[1], "report");
    rc = parse_v(SS_REPORT, &b, (const char *const *)(words + 1));
    if (rc != 0) fprintf(stderr, "reparse of '%s' failed: %s", line, err_text);
    assert_int_equal(rc, 0);
    if (front == SS_REPORT) assert_same_opts(&a, &b);
    else {
        /* the dashboard's own flags (--no-color, a dashboard --ascii) are not the report's */
        b.no_color = a.no_color;
        a.ascii = b.ascii;
        assert_same_opts(&a, &b);
    }
    char again[4096];
    ss_render(&b, again, sizeof again);
    assert_string_equal(again, line);           /* rendering is a fixed point */
    ss_opts_free(&a);
    ss_opts_free(&b);
}

/* ---- each flag writes its own field ------------------------------------------------------- */

/* The round trip cannot see a flag whose parser writes another flag's field (it prints that
 * field, and reading the line back writes it again). Here each flag's parser runs alone on
 * zeroed options, and the result must be zeroed options with exactly the fields written below,
 * byte for byte. */
typedef struct flag_field {
    const char *name, *value;
    void (*expect)(ss_opts *o, const char *value);
} flag_field;

#define EXPECT(fn, body) static void fn(ss_opts *o, const char *v) { (void)v; body; }
EXPECT(e_lens, o->settings.lens = CS_LENS_CLASSWISE)
EXPECT(e_bins, o->settings.bins = 20)
EXPECT(e_binning, o->settings.binning = CS_BIN_MASS)
EXPECT(e_gamma, o->settings.gamma = 0.25; o->gamma_given = 1)
EXPECT(e_sigma, o->settings.sigma = 0.2; o->sigma_given = 1)
EXPECT(e_smece_sigma, o->settings.smece_sigma = 0.05; o->smece_sigma_given = 1)
EXPECT(e_mixture, o->settings.mixture = CS_MIX_GMM3; o->mixture_given = 1)
EXPECT(e_distance, o->settings.distance = CS_DIST_L2)
EXPECT(e_select, strcpy(o->settings.select, "conf > 0.5"); o->select_given = 1)
EXPECT(e_format, o->format = SS_FORMAT_JSON)
EXPECT(e_plot, o->plot = 1)
EXPECT(e_ascii, o->ascii = 1)
EXPECT(e_no_color, o->no_color = 1)
EXPECT(e_no_mouse, o->no_mouse = 1)
EXPECT(e_sum_tol, o->load.sum_tol = 0.01; o->sum_tol_given = 1)
EXPECT(e_renormalize, o->load.renormalize = 1)
EXPECT(e_skip_bad_rows, o->load.skip_bad_rows = 1)
EXPECT(e_no_header, o->load.no_header = 1)
EXPECT(e_label_col, o->load.label_col = 3; o->label_col_given = 1)
EXPECT(e_delimiter, o->load.delimiter = ';')
EXPECT(e_labels, o->load.labels = v)
EXPECT(e_npy_logits, o->load.npy_logits = 1)
EXPECT(e_ci, o->ci_repeats = 50)
EXPECT(e_ci_method, o->ci_method = CS_CI_BCA; o->ci_method_given = 1)
EXPECT(e_boot_size, o->settings.boot_size = 20000; o->boot_size_given = 1)
EXPECT(e_curve, o->curve = 2)
EXPECT(e_fractions, o->curve_x[0] = 0.1; o->curve_x[1] = 0.5; o->n_curve_x = 2;
       o->curve_tok[0] = v; o->curve_tok[1] = v + 4; o->curve_tok_len[0] = 3;
       o->curve_tok_len[1] = 3; o->curve_list_flag = 1)
EXPECT(e_bins_list, o->curve_x[0] = 5; o->curve_x[1] = 10; o->n_curve_x = 2;
       o->curve_tok[0] = v; o->curve_tok[1] = v + 2; o->curve_tok_len[0] = 1;
       o->curve_tok_len[1] = 2; o->curve_list_flag = 2)
EXPECT(e_true_ece, o->true_ece = 0.03; o->true_ece_given = 1)
EXPECT(e_repeats, o->repeats = 7)
EXPECT(e_replace, o->replace = 1)
EXPECT(e_compare, o->compare = 1)
EXPECT(e_recal, o->methods.recal[0] = CS_RECAL_ISO; o->methods.recal[1] = CS_RECAL_TS;
       o->methods.n_recal = 2)
EXPECT(e_recal_folds, o->methods.folds = 3)
EXPECT(e_recal_bins, o->methods.bins = 20)
EXPECT(e_recal_max_iter, o->methods.max_iter = 50)
EXPECT(e_recal_split, o->methods.split = 0.3)
EXPECT(e_recal_split_column, strcpy(o->methods.split_column, "role");
       strcpy(o->methods.split_fit, "fit"))
EXPECT(e_reference, o->methods.reference = 2)
EXPECT(e_compare_k, o->methods.k = 4)
EXPECT(e_select_on, o->methods.select_each = 1; o->methods.select_on_given = 1)
EXPECT(e_verdict_metric, o->methods.verdict_metric = CS_METRIC_MCE; o->methods.verdict_metric_given = 1)
EXPECT(e_metrics, o->methods.text_metrics = 1u << CS_METRIC_NLL | 1u << CS_METRIC_ECE | SS_METRICS_TOPK_BIT;
       o->methods.text_metrics_given = 1)
EXPECT(e_topk_bars, o->topk[0] = 1; o->topk[1] = 2; o->topk[2] = 0; o->n_topk = 3)
EXPECT(e_likert, o->likert = 1)
EXPECT(e_likert_cuts, o->likert_cuts[0] = 0; o->likert_cuts[1] = 0.25; o->likert_cuts[2] = 1;
       o->n_likert_cuts = 3; o->likert = 1)
EXPECT(e_seed, o->seed = 9; o->seed_given = 1)
EXPECT(e_threads, o->threads = 3; o->threads_given = 1)
EXPECT(e_compat, o->compat = CS_COMPAT_NETCAL)
EXPECT(e_torch_dtype, o->torch_f64 = 1; o->torch_dtype_given = 1)
EXPECT(e_out, o->out_path = v)
EXPECT(e_fine, o->fine = 600)
EXPECT(e_label_values, o->label_values = v)
EXPECT(e_regions, o->regions = v)
EXPECT(e_probs, o->probs_dir = v)
EXPECT(e_prob_suffix, o->prob_suffix = v)
EXPECT(e_affine_tol, o->affine_tol = 0.01; o->affine_tol_given = 1)
EXPECT(e_memory, o->memory_mb = 64)
EXPECT(e_merge, o->merge = 1)
EXPECT(e_follow, o->follow = v)
EXPECT(e_order, o->follow_by_mtime = 1; o->order_given = 1)
EXPECT(e_settle, o->settle = 2.5; o->settle_given = 1)
EXPECT(e_idle_exit, o->idle_exit = 0.25; o->idle_exit_given = 1)
EXPECT(e_max_files, o->max_files = 12)
EXPECT(e_fail_fast, o->fail_fast = 1)

static const flag_field flag_fields[] = {
    { "--lens", "classwise", e_lens },           { "--bins", "20", e_bins },
    { "--binning", "mass", e_binning },          { "--gamma", "0.25", e_gamma },
    { "--sigma", "0.2", e_sigma },               { "--smece-sigma", "0.05", e_smece_sigma },
    { "--mixture", "gmm3", e_mixture },          { "--distance", "l2", e_distance },
    { "--select", "conf > 0.5", e_select },      { "--format", "json", e_format },
    { "--plot", NULL, e_plot },                  { "--ascii", NULL, e_ascii },
    { "--no-color", NULL, e_no_color },          { "--no-mouse", NULL, e_no_mouse },
    { "--sum-tol", "0.01", e_sum_tol },          { "--renormalize", NULL, e_renormalize },
    { "--skip-bad-rows", NULL, e_skip_bad_rows }, { "--no-header", NULL, e_no_header },
    { "--label-col", "3", e_label_col },         { "--delimiter", ";", e_delimiter },
    { "--labels", "y.npy", e_labels },           { "--npy-logits", NULL, e_npy_logits },
    { "--ci", "50", e_ci },                      { "--ci-method", "bca", e_ci_method },
    { "--boot-size", "20000", e_boot_size },
    { "--curve", "bins", e_curve },              { "--fractions", "0.1,50%", e_fractions },
    { "--bins-list", "5,10", e_bins_list },      { "--true-ece", "0.03", e_true_ece },
    { "--repeats", "7", e_repeats },             { "--replace", NULL, e_replace },
    { "--compare", NULL, e_compare },            { "--recal", "iso,ts", e_recal },
    { "--recal-folds", "3", e_recal_folds },     { "--recal-bins", "20", e_recal_bins },
    { "--recal-split", "0.3", e_recal_split },   { "--recal-split-column", "role=fit", e_recal_split_column },
    { "--reference", "2", e_reference },         { "--compare-k", "4", e_compare_k },
    { "--topk-bars", "1,2,full", e_topk_bars },  { "--likert", NULL, e_likert },
    { "--likert-cuts", "0,0.25,1", e_likert_cuts }, { "--seed", "9", e_seed },
    { "--threads", "3", e_threads },             { "--compat", "netcal", e_compat },
    { "--torch-dtype", "float64", e_torch_dtype }, { "-o", "out.csst", e_out },
    { "--fine", "600", e_fine },                 { "--label-values", "bg=0,NCR=1,ED=2,ET=4", e_label_values },
    { "--regions", "WT=1,2,4;TC=1,4;ET=4", e_regions }, { "--probs", "pred", e_probs },
    { "--prob-suffix", "_prob", e_prob_suffix }, { "--affine-tol", "0.01", e_affine_tol },
    { "--memory", "64", e_memory },              { "--merge", NULL, e_merge },
    { "--recal-max-iter", "50", e_recal_max_iter },
    { "--select-on", "each", e_select_on },      { "--verdict-metric", "mce", e_verdict_metric },
    { "--metrics", "nll,ECE,topk_ece", e_metrics },
    { "--follow", "runs/", e_follow },           { "--order", "mtime", e_order },
    { "--settle", "2.5", e_settle },             { "--idle-exit", "0.25", e_idle_exit },
    { "--max-files", "12", e_max_files },        { "--fail-fast", NULL, e_fail_fast },
};

static const flag_field *flag_field_of(const char *name)
{
    for (size_t i = 0; i < sizeof flag_fields / sizeof flag_fields[0]; i++)
        if (strcmp(flag_fields[i].name, name) == 0) return &flag_fields[i];
    return NULL;
}

/* --check keeps its text in an array it allocates (and, with a check function, parses it): the
 * text must be the value, once; then both sides drop the array for the byte comparison. */
static void take_check_text(ss_opts *o, const char *value)
{
    assert_int_equal(o->n_checks, 1);
    assert_ptr_equal(o->check_text[0], value);
    free(o->check_text);
    o->check_text = NULL;
    o->n_checks = 0;
}

static void test_each_flag_writes_its_own_field(void **state)
{
    (void)state;
    size_t nf;
    const ss_flag *t = ss_flags(&nf);
    for (size_t i = 0; i < nf; i++) {
        if (!t[i].parse) continue;                      /* --help, --version */
        const char *value = strcmp(t[i].name, "--check") == 0 ? "ece<=0.05" : NULL;
        const flag_field *f = flag_field_of(t[i].name);
        if (!f && !value) fail_msg("%s: no expected field in flag_fields (test_flags.c)", t[i].name);
        if (f) value = f->value;
        static ss_opts got, want;                       /* static: ss_opts is large */
        memset(&got, 0, sizeof got);
        memset(&want, 0, sizeof want);
        got.front = want.front = (t[i].fronts & SS_REPORT) ? SS_REPORT : SS_DASH;
        if (t[i].parse(&got, value) != 0) fail_msg("%s %s: refused", t[i].name, value ? value : "");
        if (f) f->expect(&want, value);
        else take_check_text(&got, value);
        const unsigned char *g = (const unsigned char *)&got, *w = (const unsigned char *)&want;
        for (size_t b = 0; b < sizeof got; b++)
            if (g[b] != w[b])
                fail_msg("%s %s: wrote byte %zu of ss_opts, which the flag's field does not cover",
                         t[i].name, value ? value : "", b);
    }
}

static void test_every_report_flag_round_trips(void **state)
{
    (void)state;
    size_t nf;
    const ss_flag *t = ss_flags(&nf);
    int seen[128] = { 0 };
    assert_true(nf < 128);
    for (size_t c = 0; c < sizeof report_cases / sizeof report_cases[0]; c++) {
        char line[4096];
        round_trip(SS_REPORT, report_cases[c], line, sizeof line);
        char padded[4100];
        snprintf(padded, sizeof padded, "%s ", line);
        for (size_t i = 0; i < nf; i++) {
            char word[80];
            snprintf(word, sizeof word, " %s ", t[i].name);
            if (strstr(padded, word)) seen[i] = 1;
        }
    }
    /* every flag the report parses is rendered by some case above */
    for (size_t i = 0; i < nf; i++) {
        if (!t[i].print || !(t[i].fronts & SS_REPORT)) continue;
        if (!seen[i]) fprintf(stderr, "no round trip renders %s\n", t[i].name);
        assert_true(seen[i]);
    }
}

static void test_exact_lines(void **state)
{
    (void)state;
    char line[4096];
    round_trip(SS_REPORT, report_cases[0], line, sizeof line);
    /* the settings that decide every number are always written */
    assert_string_equal(line, "calscope report --lens top1 --bins 15 --binning uniform --sigma 0.1 "
                              "--distance tvd a.csv");
    round_trip(SS_REPORT, report_cases[2], line, sizeof line);
    /* but not --sigma at its default on a lens without RECE-G: the report would refuse it there */
    assert_string_equal(line, "calscope report --lens 'group:0,1;2,3' --bins 15 --binning uniform "
                              "--distance tvd --select 'conf > 0.9 and y in {1,2}' "
                              "--format json --plot --ascii --check 'ece<=0.05' "
                              "--check 'ACCURACY >= 0.9' 'my file.csv'");
    round_trip(SS_REPORT, report_cases[4], line, sizeof line);
    assert_string_equal(line, "calscope report --lens top1 --bins 15 --binning uniform --sigma 0.1 "
                              "--distance max --sum-tol 1e-320 --delimiter tab "
                              "$'a\\x1b[31mb\\'s\\\\.csv'");
    round_trip(SS_REPORT, report_cases[12], line, sizeof line);
    /* a file that starts with '-' after `--` */
    assert_non_null(strstr(line, "--recal platt --recal-split-column role=fit -- -x.csv"));
    /* --smece-sigma only when given (the automatic bandwidth is the default) */
    round_trip(SS_REPORT, report_cases[sizeof report_cases / sizeof report_cases[0] - 1], line, sizeof line);
    assert_non_null(strstr(line, " --smece-sigma 0.05 "));
    /* one quoting rule */
    char q[64] = "";
    ss_shell_quote(q, sizeof q, "it's");
    assert_string_equal(q, "'it'\\''s'");
    q[0] = 0;
    ss_shell_quote(q, sizeof q, "a_b.csv");
    assert_string_equal(q, "a_b.csv");
    q[0] = 0;
    ss_shell_quote(q, sizeof q, "");
    assert_string_equal(q, "''");
}

/* The dashboard parses its subset; what it parsed renders as a report line that reparses to
 * the same settings. */
static void test_dashboard_flags_round_trip(void **state)
{
    (void)state;
    const char *argv[] = { "calscope", "--lens", "class:2", "--bins=30", "--binning", "mass", "--sigma", "0.2",
                     "--distance", "interval:0.1,0.9", "--mixture", "gmm3", "--select", "y == 1",
                     "--ci", "250", "--ci-method", "bca", "--seed", "4294967296", "--sum-tol", "0.01",
                     "--skip-bad-rows", "--no-header", "--label-col", "2", "--delimiter", ",",
                     "--ascii", "--no-colour", "a.csv", "b.csv", NULL };
    char line[4096];
    round_trip(SS_DASH, argv, line, sizeof line);
    ss_opts o;
    assert_int_equal(parse_v(SS_DASH, &o, argv), 0);
    assert_int_equal(o.no_color, 1);
    assert_int_equal(o.methods.select_each, 0);
    assert_int_equal(o.ascii, 1);
    assert_true(o.seed == 4294967296ull);        /* one --seed range: any uint64 */
    ss_opts_free(&o);
    /* the dashboard takes --select-on with no selection or comparison yet: its keys reach both */
    const char *each[] = { "calscope", "--select-on", "each", "a.csv", NULL };
    assert_int_equal(parse_v(SS_DASH, &o, each), 0);
    assert_int_equal(o.methods.select_each, 1);
    ss_opts_free(&o);
    /* --ci 0 is "off" in the dashboard only */
    const char *off[] = { "calscope", "--ci", "0", "a.csv", NULL };
    assert_int_equal(parse_v(SS_DASH, &o, off), 0);
    assert_int_equal(o.ci_repeats, 0);
    ss_opts_free(&o);
    /* --gamma and --seed alone are fine here: keys reach kd-tree binning and the curves */
    const char *later[] = { "calscope", "--gamma", "0.3", "--seed", "5", "--threads", "2", "a.csv", NULL };
    assert_int_equal(parse_v(SS_DASH, &o, later), 0);
    assert_true(o.settings.gamma == 0.3);
    ss_opts_free(&o);
    const char *help[] = { "calscope", "--version", NULL };
    assert_int_equal(parse_v(SS_DASH, &o, help), SS_EXIT_HELP);
    ss_opts_free(&o);
}

/* ---- usage errors, verbatim -------------------------------------------------------------- */

static const char RH[] = "\nTry `calscope report --help`.\n";
static const char DH[] = "\nTry `calscope --help`.\n";
static const char XH[] = "\nTry `calscope reduce --help`.\n";

static void expect_error(unsigned front, const char *want, const char *const *argv)
{
    ss_opts o;
    int rc = parse_v(front, &o, argv);
    ss_opts_free(&o);
    char full[1024];
    snprintf(full, sizeof full, "calscope: %s%s", want, front == SS_DASH ? DH : front == SS_REDUCE ? XH : RH);
    assert_int_equal(rc, 2);
    assert_string_equal(err_text, full);
}

#define REP(want, ...) do { const char *v_[] = { "report", __VA_ARGS__, NULL }; expect_error(SS_REPORT, want, v_); } while (0)
#define DASH(want, ...) do { const char *v_[] = { "calscope", __VA_ARGS__, NULL }; expect_error(SS_DASH, want, v_); } while (0)
#define RED(want, ...) do { const char *v_[] = { "reduce", __VA_ARGS__, NULL }; expect_error(SS_REDUCE, want, v_); } while (0)

/* `calscope reduce`: its own flags and rules (one source of cases, one mapping, nothing that
 * changes nothing); the mapping flags name the bad token. */
static void test_reduce_flags(void **state)
{
    (void)state;
    ss_opts o;
    const char *ok[] = { "reduce", "-o", "s.csv", "--fine", "600", "--threads", "2", "--label-values", "0,1,2,4",
                         "--sum-tol", "0.01", "--affine-tol=0.5", "m.csv", NULL };
    assert_int_equal(parse_v(SS_REDUCE, &o, ok), 0);
    assert_string_equal(o.out_path, "s.csv");
    assert_int_equal(o.fine, 600);
    assert_int_equal(o.threads, 2);
    assert_string_equal(o.label_values, "0,1,2,4");
    assert_true(o.load.sum_tol == 0.01 && o.affine_tol == 0.5);
    ss_opts_free(&o);
    const char *dirs[] = { "reduce", "--probs", "P", "--labels", "L", "--prob-suffix", "_prob", "--regions", "WT=1,2,4;ET=4", NULL };
    assert_int_equal(parse_v(SS_REDUCE, &o, dirs), 0);
    assert_string_equal(o.probs_dir, "P");
    assert_string_equal(o.load.labels, "L");
    assert_string_equal(o.prob_suffix, "_prob");
    ss_opts_free(&o);
    const char *merge[] = { "reduce", "--merge", "-o", "-", "a.csv", "b.csv", NULL };
    assert_int_equal(parse_v(SS_REDUCE, &o, merge), 0);
    assert_int_equal(o.merge, 1);
    assert_int_equal(o.n_files, 2);
    ss_opts_free(&o);

    RED("--label-values: 'x' is not an integer label value (in '0,x')", "--label-values", "0,x", "m.csv");
    RED("--regions: 'WT' is not NAME=VALUE,VALUE,... (in 'WT')", "--regions", "WT", "m.csv");
    RED("--fine: '0' is not a fine resolution in 1..100000", "--fine", "0", "m.csv");
    RED("--affine-tol: '-1' is not a tolerance >= 0", "--affine-tol", "-1", "m.csv");
    RED("-o: empty file name (- is standard output)", "-o", "", "m.csv");
    RED("unknown option '--bins'", "--bins", "15", "m.csv");            /* a report flag */
    REP("unknown option '--merge'", "--merge", "a.csv");                 /* a reduce flag */
    REP("--probs DIR needs --labels DIR (the folder of label maps)", "--probs", "P");
    REP("--label-values and --regions both map the channels: give one", "--label-values", "0,1", "--regions", "A=1",
        "m.csv");
    RED("--label-values and --regions both map the channels: give one", "--label-values", "0,1", "--regions", "A=1", "m.csv");
    RED("--sum-tol: with --regions the channels are independent sigmoids, which need not sum to 1",
        "--regions", "A=1", "--sum-tol", "0.1", "m.csv");
    RED("--probs DIR and --labels DIR go together", "--probs", "P");
    RED("'m.csv' and --probs/--labels both give the cases: give one", "--probs", "P", "--labels", "L", "m.csv");
    RED("--prob-suffix needs --probs DIR and --labels DIR", "--prob-suffix", "_p", "m.csv");
    RED("one MANIFEST at a time ('a.csv', 'b.csv'); --merge sums statistics files", "a.csv", "b.csv");
    RED("--merge sums statistics files as they are: --fine changes nothing there", "--merge", "--fine", "10", "a.csv");
    RED("--merge sums statistics files as they are: --threads changes nothing there", "--merge", "--threads", "2", "a.csv");
    RED("--merge needs the statistics files to sum", "--merge");
    {
        const char *v_[] = { "reduce", NULL };
        expect_error(SS_REDUCE, "no MANIFEST given (or --probs DIR --labels DIR)", v_);
    }
}

static void test_errors_verbatim(void **state)
{
    (void)state;
    /* the generic ones, the same words in both front ends with their own --help pointer */
    REP("unknown option '--no-such-flag'", "--no-such-flag", "a.csv");
    REP("unknown option '--no-such-flag'", "--no-such-flag=3", "a.csv");
    DASH("unknown option '--bogus'", "--bogus", "a.csv");
    /* --select-on: one parser for both front ends; the report refuses it where it does nothing */
    REP("--select-on: 'both' is not reference or each", "--select-on", "both", "--compare", "a.csv", "b.csv");
    DASH("--select-on: 'both' is not reference or each", "--select-on", "both", "a.csv", "b.csv");
    REP("--select-on needs --compare or --recal (it says where a comparison's selection is evaluated)",
        "--select-on", "each", "--select", "conf > 0.9", "a.csv");
    REP("--select-on needs --select (it says where the selection is evaluated)", "--select-on", "reference",
        "--compare", "a.csv", "b.csv");
    REP("--verdict-metric needs --compare or --recal", "--verdict-metric", "ace", "a.csv");
    REP("--verdict-metric: accuracy is not a calibration error; give ece, ace, mce, ...", "--compare",
        "--verdict-metric", "Accuracy", "a.csv", "b.csv");
    REP("--verdict-metric: 'rece_m' is not a metric of the comparison (one of: accuracy ece ace mce rece_g rece_m "
        "brier nll aece sce smece l2ce l2ce_debiased ece_sweep but accuracy and rece_m)", "--compare",
        "--verdict-metric", "rece_m", "a.csv", "b.csv");
    REP("--metrics needs --compare or --recal (it chooses the comparison's text columns)", "--metrics", "ece", "a.csv");
    REP("--metrics chooses the text tables' metrics; JSON and CSV always carry every metric", "--compare",
        "--format", "json", "--metrics", "ece", "a.csv", "b.csv");
    REP("--metrics: 'rece_m' is not a metric of the comparison (one of: accuracy ece ace mce rece_g rece_m "
        "brier nll aece sce smece l2ce l2ce_debiased ece_sweep topk_ece but rece_m)", "--compare",
        "--metrics", "ece,rece_m", "a.csv", "b.csv");
    REP("--metrics: '' is not a metric of the comparison (one of: accuracy ece ace mce rece_g rece_m "
        "brier nll aece sce smece l2ce l2ce_debiased ece_sweep topk_ece but rece_m)", "--compare",
        "--metrics", "ece,", "a.csv", "b.csv");
    DASH("unknown option '--metrics'", "--metrics", "ece", "a.csv");   /* report-only flag */
    DASH("unknown option '--curve'", "--curve", "size", "a.csv");     /* report-only flag */
    REP("unknown option '--no-color'", "--no-color", "a.csv");          /* dashboard-only flag */
    REP("--bins needs a value", "a.csv", "--bins");
    DASH("--bins needs a value", "a.csv", "--bins");
    REP("--plot takes no value", "--plot=yes", "a.csv");
    DASH("--renormalize takes no value", "--renormalize=1", "a.csv");
    {
        const char *v_[] = { "report", NULL };
        expect_error(SS_REPORT, "no FILE given", v_);
        const char *d_[] = { "calscope", NULL };
        expect_error(SS_DASH, "no FILE given", d_);
    }
    DASH("too many files (at most 8)", "1", "2", "3", "4", "5", "6", "7", "8", "9");
    DASH("-: standard input can be read only once", "-", "-");
    /* values */
    REP("--lens: unknown lens 'bogus' (top1|topk:K|class:C|classwise|group:A,B;C,D|full)", "--lens", "bogus", "a.csv");
    REP("--bins: need a whole number between 1 and 1000, got '1001'", "--bins", "1001", "a.csv");
    DASH("--bins: need a whole number between 1 and 1000, got '0'", "--bins", "0", "a.csv");
    REP("--binning: unknown scheme 'bogus' (uniform|mass|kdtree)", "--binning", "bogus", "a.csv");
    REP("--gamma: need a number in (0, 1], got '0'", "--gamma", "0", "--binning", "kdtree", "a.csv");
    DASH("--sigma: need a number in [1e-06, 10], got '1e300'", "--sigma", "1e300", "a.csv");
    REP("--mixture: unknown mixture 'bogus' (kde|gmm3)", "--mixture", "bogus", "a.csv");
    REP("--distance: interval needs 0 <= L <= H <= 1, got 'interval:0.6,0.5'", "--distance", "interval:0.6,0.5", "a.csv");
    REP("--format: 'xml' is not text, json, csv or ndjson", "--format", "xml", "a.csv");
    /* --follow and the flags that need it */
    REP("--order needs --follow DIR", "--order", "mtime", "a.csv");
    REP("--settle needs --follow DIR", "--settle", "2", "a.csv");
    REP("--idle-exit needs --follow DIR", "--idle-exit", "2", "a.csv");
    REP("--max-files needs --follow DIR", "--max-files", "2", "a.csv");
    REP("--fail-fast needs --follow DIR", "--fail-fast", "--check", "ece<=0.1", "a.csv");
    REP("--format ndjson needs --follow DIR (one JSON line per file as it arrives); use --format json",
        "--format", "ndjson", "a.csv");
    REP("--follow takes its files from the folder: 'a.csv' is one too many", "--follow", "runs", "--format", "ndjson", "a.csv");
    REP("--follow prints one JSON line per file: it needs --format ndjson", "--follow", "runs");
    REP("--follow prints one JSON line per file: it needs --format ndjson", "--follow", "runs", "--format", "json");
    REP("--follow measures each file on its own: --compare and --recal compare files; run them on the files the run wrote",
        "--follow", "runs", "--format", "ndjson", "--recal", "ts");
    REP("--plot: --follow prints JSON lines only", "--follow", "runs", "--format", "ndjson", "--plot");
    REP("--fine: --follow takes prediction files (CSV, .npy, .npz), not segmentation volumes",
        "--follow", "runs", "--format", "ndjson", "--fine", "100");
    REP("--regions: --follow takes prediction files (CSV, .npy, .npz), not segmentation volumes",
        "--follow", "runs", "--format", "ndjson", "--regions", "WT=1");
    REP("--fail-fast needs --check (it ends at the first failed check)", "--follow", "runs", "--format", "ndjson", "--fail-fast");
    REP("--order: 'size' is not name or mtime", "--follow", "runs", "--format", "ndjson", "--order", "size");
    REP("--settle: '-1' is not a number of seconds in 0..86400", "--follow", "runs", "--format", "ndjson", "--settle", "-1");
    REP("--idle-exit: 'soon' is not a number of seconds in 0..86400", "--follow", "runs", "--format", "ndjson", "--idle-exit", "soon");
    REP("--max-files: '0' is not a file count in 1..100000000", "--follow", "runs", "--format", "ndjson", "--max-files", "0");
    REP("--follow: empty folder name", "--follow", "", "--format", "ndjson");
    /* the dashboard's --follow: the folder gives the files; --order and --settle need it; the
     * report's ending flags are not the dashboard's (q ends it) */
    DASH("--follow takes its files from the folder: 'a.csv' is one too many", "--follow", "runs", "a.csv");
    DASH("--order needs --follow DIR", "--order", "mtime", "a.csv");
    DASH("--settle needs --follow DIR", "--settle", "2", "a.csv");
    DASH("--settle: '-1' is not a number of seconds in 0..86400", "--follow", "runs", "--settle", "-1");
    DASH("unknown option '--idle-exit'", "--follow", "runs", "--idle-exit", "2");
    DASH("--follow: empty folder name", "--follow", "");
    DASH("--sum-tol: need a tolerance in [0, 1), got '1'", "--sum-tol", "1", "a.csv");
    REP("--label-col: '0' is not a column number (1, 2, ...)", "--label-col", "0", "--no-header", "a.csv");
    REP("--delimiter: ':' is not , ; or tab", "--delimiter", ":", "a.csv");
    /* one --seed rule for both (the dashboard stopped at 2^32 - 1 with another message) */
    REP("--seed: '-1' is not a non-negative integer", "--seed", "-1", "--ci", "5", "a.csv");
    DASH("--seed: '-1' is not a non-negative integer", "--seed", "-1", "a.csv");
    DASH("--seed: '18446744073709551616' is not a non-negative integer", "--seed", "18446744073709551616", "a.csv");
    DASH("--seed: '1.5' is not a non-negative integer", "--seed", "1.5", "a.csv");
    DASH("--seed: ' 5' is not a non-negative integer", "--seed", " 5", "a.csv");
    {
        uint64_t seed = 0;
        assert_int_equal(ss_parse_seed("+7", &seed), 1);
        assert_true(seed == 7);
        assert_int_equal(ss_parse_seed("", &seed), 0);
        assert_int_equal(ss_parse_seed("7x", &seed), 0);
    }
    DASH("--threads: need a whole number between 0 (all cores) and 256, got '1024'", "--threads", "1024", "a.csv");
    REP("--ci: need a whole number between 1 and 100000, got '0'", "--ci", "0", "a.csv");
    DASH("--ci: need a whole number between 0 and 100000, got '100001'", "--ci", "100001", "a.csv");
    DASH("--ci-method: 'jackknife' is not percentile, basic or bca", "--ci-method", "jackknife", "a.csv");
    DASH("--repeats: need a whole number between 1 and 100000, got '0'", "--repeats", "0", "a.csv");
    REP("--curve: 'bogus' is not size or bins", "--curve", "bogus", "a.csv");
    REP("--fractions: bad number 'x' in '0.5,x'", "--curve", "size", "--fractions", "0.5,x", "a.csv");
    REP("--fractions: '150%' is not a fraction in (0, 1] (or a percentage)", "--curve", "size", "--fractions", "150%", "a.csv");
    REP("--bins-list: '2' is not a gamma in (0, 1] (--binning kdtree)", "--curve", "bins", "--binning", "kdtree", "--bins-list", "0.1,2", "a.csv");
    REP("--topk-bars: bad k 'fool' in '1,fool' (a whole number k >= 1, or full)", "--topk-bars", "1,fool", "a.csv");
    REP("--likert-cuts: cut points must increase ('0.5' then '0.5')", "--likert-cuts", "0,0.5,0.5,1", "a.csv");
    REP("--compat: 'sklearn' is not all, torchmetrics, torchmetrics-binary, netcal, relplot, verified, robustcal or monai", "--compat", "sklearn", "a.csv");
    REP("--recal: 'ts' is given twice", "--recal", "ts,ts", "a.csv");
    REP("--reference: '0' is not a method number (1 = the first file)", "--reference", "0", "--recal", "ts", "a.csv");
    REP("--recal-folds: '1' is not a fold count in 2..32", "--recal-folds", "1", "--recal", "ts", "a.csv");
    REP("--recal-split: '1' is not a fitting fraction in (0, 1)", "--recal-split", "1", "--recal", "ts", "a.csv");
    REP("--recal-split-column: 'c=' has an empty fitting value", "--recal-split-column", "c=", "--recal", "ts", "a.csv");
    REP("--select: expression too long: 535 characters, at most 511", "--select",
        "conf > 0.5 and conf > 0.5 and conf > 0.5 and conf > 0.5 and conf > 0.5 and conf > 0.5 and "
        "conf > 0.5 and conf > 0.5 and conf > 0.5 and conf > 0.5 and conf > 0.5 and conf > 0.5 and "
        "conf > 0.5 and conf > 0.5 and conf > 0.5 and conf > 0.5 and conf > 0.5 and conf > 0.5 and "
        "conf > 0.5 and conf > 0.5 and conf > 0.5 and conf > 0.5 and conf > 0.5 and conf > 0.5 and "
        "conf > 0.5 and conf > 0.5 and conf > 0.5 and conf > 0.5 and conf > 0.5 and conf > 0.5 and "
        "conf > 0.5 and conf > 0.5 and conf > 0.5 and conf > 0.5 and conf > 0.5 and conf > 0.5", "a.csv");
    /* a flag the table does not mark repeatable, given twice: the second would replace the first */
    REP("--select given twice (write one expression: A and B)", "--select", "y == 0", "--select", "conf > 0.5", "a.csv");
    DASH("--select given twice (write one expression: A and B)", "--select=y == 0", "a.csv", "--select", "conf > 0.5");
    REP("--bins given twice", "--bins", "10", "--bins=20", "a.csv");
    DASH("--bins given twice", "--bins", "10", "--bins", "10", "a.csv");
    REP("--labels given twice", "--labels", "a.npy", "--labels", "b.npy", "p.npy");
    REP("--plot given twice", "--plot", "--plot", "a.csv");
    DASH("--renormalize given twice", "--renormalize", "--renormalize", "a.csv");
    RED("--fine given twice", "--fine", "10", "--fine", "20", "m.csv");
    RED("--labels given twice", "--probs", "P", "--labels", "L", "--labels", "M");
    /* rules between flags: no flag accepted and then ignored */
    REP("--seed needs --ci, --curve, --compare or --recal (nothing else is random)", "--seed", "3", "a.csv");
    REP("--threads needs --ci, --curve, --compare or --recal (nothing else runs on worker threads)", "--threads", "2", "a.csv");
    REP("--gamma needs --binning kdtree (it is the kd-tree's cell size)", "--gamma", "0.2", "a.csv");
    REP("--smece-sigma changes smECE only, which is n/a on --lens classwise (top1/class:C only)",
        "--smece-sigma", "0.1", "--lens", "classwise", "a.csv");
    REP("--smece-sigma changes smECE only, which is n/a on --lens topk:2 (top1/class:C only)",
        "--lens", "topk:2", "--smece-sigma", "0.1", "--follow", "runs", "--format", "ndjson");
    REP("--label-col needs --no-header (with a header the label column is found by its name)", "--label-col", "2", "a.csv");
    DASH("--label-col needs --no-header (with a header the label column is found by its name)", "--label-col", "2", "a.csv");
    DASH("--sum-tol and --renormalize: --renormalize divides every row by its sum, so no tolerance applies; give one",
         "--sum-tol", "0.01", "--renormalize", "a.csv");
    REP("--ascii needs --plot (only the plot draws glyphs)", "--ascii", "a.csv");
    REP("--replace needs --curve size", "--replace", "a.csv");
    REP("--repeats needs --curve, --compare or --recal", "--repeats", "5", "a.csv");
    REP("--ci-method needs --ci, --compare or --recal", "--ci-method", "bca", "a.csv");
    REP("--boot-size needs --ci, --compare or --recal", "--boot-size", "full", "a.csv");
    REP("--compare needs two or more files (A and B), or a file and --recal", "--compare", "a.csv");
    REP("--reference 3: there are only 2 methods (files first, then recalibrations)", "--reference", "3", "--recal", "ts", "a.csv");
    REP("--compat needs --lens top1 or classwise (the libraries measure nothing else)", "--compat", "netcal", "--lens", "full", "a.csv");
    REP("--torch-dtype: 'half' is not float32 or float64", "--torch-dtype", "half", "a.csv");
    REP("--torch-dtype needs --compat torchmetrics, torchmetrics-binary or all (only torchmetrics gets torch tensors)", "--compat", "netcal", "--torch-dtype", "float64", "a.csv");
    REP("--curve has no CSV form (one row per file); use --format text or json", "--format", "csv", "--curve", "size", "a.csv");
    REP("--likert is not in --format csv with --compare (one row per method); use --format text or json",
        "--format", "csv", "--likert", "--recal", "ts", "a.csv");
}

/* ---- documents --------------------------------------------------------------------------- */

static char *render_to_string(void (*fn)(FILE *))
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    fn(f);
    fclose(f);
    return buf;
}
static void help_report(FILE *f) { ss_help(f, SS_REPORT); }
static void help_dash(FILE *f) { ss_help(f, SS_DASH); }
static void help_reduce(FILE *f) { ss_help(f, SS_REDUCE); }

/* --mixture against the loaded files: the one rule both front ends apply (a dashboard that took
 * --mixture gmm3 on a file without id/tta columns where the report refused it fails this). */
static void test_mixture_unused(void **state)
{
    (void)state;
    const char *want = "--mixture needs an id/tta long file (it only changes RECE-M); no FILE has id "
                       "and tta columns";
    assert_string_equal(ss_mixture_unused(1, 1, 0), want);
    assert_null(ss_mixture_unused(1, 1, 1));   /* a file has id/tta: RECE-M uses it */
    assert_null(ss_mixture_unused(1, 0, 0));   /* nothing loaded: the load errors say why */
    assert_null(ss_mixture_unused(0, 1, 0));   /* not given */
}

/* --renormalize and --sum-tol against the loaded files: the one rule both front ends apply. */
static void test_rows_unused(void **state)
{
    (void)state;
    ss_opts o;
    const char *renorm[] = { "calscope", "--renormalize", "a.csv", NULL };
    assert_int_equal(parse_v(SS_DASH, &o, renorm), 0);
    assert_string_equal(ss_rows_unused(&o, 1, 0), "--renormalize rescales rows of class probabilities; no FILE "
                        "has them (logits, a binary p column and statistics files have no row to rescale)");
    assert_null(ss_rows_unused(&o, 1, 1));   /* a FILE has rows of probabilities */
    assert_null(ss_rows_unused(&o, 0, 0));   /* nothing loaded: the load errors say why */
    ss_opts_free(&o);
    const char *tol[] = { "report", "--sum-tol", "0.01", "a.csv", NULL };
    assert_int_equal(parse_v(SS_REPORT, &o, tol), 0);
    assert_string_equal(ss_rows_unused(&o, 1, 0), "--sum-tol checks that rows of class probabilities sum to 1; no "
                        "FILE has them (logits, a binary p column and statistics files have no row sum to check)");
    assert_null(ss_rows_unused(&o, 1, 1));
    ss_opts_free(&o);
    const char *none[] = { "report", "a.csv", NULL };
    assert_int_equal(parse_v(SS_REPORT, &o, none), 0);
    assert_null(ss_rows_unused(&o, 1, 0));   /* not given */
    ss_opts_free(&o);
}

/* --sigma and --smece-sigma against the lens and the loaded files (the report's rule). */
static void test_sigma_unused(void **state)
{
    (void)state;
    ss_opts o;
    char buf[1024];
    const char *group[] = { "report", "--sigma", "0.3", "--lens", "group:0;1", "a.csv", NULL };
    assert_int_equal(parse_v(SS_REPORT, &o, group), 0);   /* an id/tta FILE may still use it */
    assert_string_equal(ss_sigma_unused(&o, 1, 1, 0, buf, sizeof buf),
                        "--sigma changes RECE-G and RECE-M only: RECE-G is n/a on --lens group:0;1 "
                        "(top1/class:C/classwise only), and RECE-M needs an id/tta long file, which no FILE is");
    assert_null(ss_sigma_unused(&o, 1, 1, 1, buf, sizeof buf));   /* RECE-M uses it */
    assert_null(ss_sigma_unused(&o, 0, 0, 0, buf, sizeof buf));   /* nothing loaded */
    ss_opts_free(&o);
    const char *stats[] = { "report", "--sigma", "0.3", "s.csv", NULL };
    assert_int_equal(parse_v(SS_REPORT, &o, stats), 0);
    assert_string_equal(ss_sigma_unused(&o, 1, 0, 0, buf, sizeof buf),
                        "--sigma changes RECE-G and RECE-M only: RECE-G is n/a on statistics files (not exact "
                        "from statistics), and RECE-M needs an id/tta long file, which no FILE is");
    assert_null(ss_sigma_unused(&o, 1, 1, 0, buf, sizeof buf));   /* a FILE of rows: RECE-G on top1 */
    ss_opts_free(&o);
    const char *classwise[] = { "report", "--sigma", "0.3", "--lens", "classwise", "a.csv", NULL };
    assert_int_equal(parse_v(SS_REPORT, &o, classwise), 0);
    assert_null(ss_sigma_unused(&o, 1, 1, 0, buf, sizeof buf));   /* RECE-G is classwise too */
    ss_opts_free(&o);
    const char *smece[] = { "report", "--smece-sigma", "0.05", "--lens", "class:1", "s.csv", NULL };
    assert_int_equal(parse_v(SS_REPORT, &o, smece), 0);
    assert_string_equal(ss_sigma_unused(&o, 1, 0, 1, buf, sizeof buf),
                        "--smece-sigma changes smECE only, which is n/a on statistics files (not exact from statistics)");
    assert_null(ss_sigma_unused(&o, 1, 1, 0, buf, sizeof buf));
    ss_opts_free(&o);
    /* the dashboard keeps both: its lens changes at a key; its ':' line leaves out what the
     * lens on screen has no use for, so the report runs it */
    const char *dash[] = { "calscope", "--smece-sigma", "0.05", "--lens", "classwise", "a.csv", NULL };
    assert_int_equal(parse_v(SS_DASH, &o, dash), 0);
    char line[4096];
    ss_render(&o, line, sizeof line);
    assert_string_equal(line, "calscope report --lens classwise --bins 15 --binning uniform --sigma 0.1 --distance tvd a.csv");
    ss_opts_free(&o);
    const char *dash_group[] = { "calscope", "--sigma", "0.3", "--lens", "group:0;1", "a.csv", NULL };
    assert_int_equal(parse_v(SS_DASH, &o, dash_group), 0);
    ss_render(&o, line, sizeof line);   /* changed: RECE-M of an id/tta file may use it */
    assert_string_equal(line, "calscope report --lens 'group:0;1' --bins 15 --binning uniform --sigma 0.3 --distance tvd a.csv");
    ss_opts_free(&o);
}

/* The follow's options from --order, --settle and --labels, the same for both front ends:
 * the defaults when none is given, each flag's value when given (--settle 0 included). */
static void test_follow_options(void **state)
{
    (void)state;
    static const unsigned fronts[2] = { SS_REPORT, SS_DASH };
    for (int f = 0; f < 2; f++) {
        const char *plain[] = { "calscope", "--follow", "runs", "--format", "ndjson", NULL };
        const char *given[] = { "calscope", "--follow", "runs", "--order", "mtime", "--settle", "2.5",
                                "--labels", "l.npy", "--format", "ndjson", NULL };
        const char *zero[] = { "calscope", "--follow", "runs", "--settle", "0", "--format", "ndjson", NULL };
        if (fronts[f] == SS_DASH) plain[3] = given[9] = zero[5] = NULL;   /* no --format */
        ss_opts o;
        cs_follow_options fo;
        memset(&fo, 0xff, sizeof fo);
        assert_int_equal(parse_v(fronts[f], &o, plain), 0);
        ss_follow_options(&o, &fo);
        assert_int_equal(fo.order, CS_FOLLOW_BY_NAME);
        assert_double_near(fo.settle, 1.0, 0);
        assert_int_equal(fo.poll, 0);
        assert_null(fo.labels);
        ss_opts_free(&o);
        assert_int_equal(parse_v(fronts[f], &o, given), 0);
        ss_follow_options(&o, &fo);
        assert_int_equal(fo.order, CS_FOLLOW_BY_MTIME);
        assert_double_near(fo.settle, 2.5, 0);
        assert_int_equal(fo.poll, 0);
        assert_non_null(fo.labels);
        assert_string_equal(fo.labels, "l.npy");
        ss_opts_free(&o);
        assert_int_equal(parse_v(fronts[f], &o, zero), 0);
        ss_follow_options(&o, &fo);
        assert_double_near(fo.settle, 0.0, 0);
        ss_opts_free(&o);
    }
}

static void test_help_and_man_list_the_table(void **state)
{
    (void)state;
    char *rep = render_to_string(help_report), *dash = render_to_string(help_dash), *red = render_to_string(help_reduce);
    char *man = render_to_string(ss_man);
    size_t n;
    const ss_flag *t = ss_flags(&n);
    for (size_t i = 0; i < n; i++) {
        char key[80], roff[160];
        snprintf(key, sizeof key, "  %s%s", strcmp(t[i].name, "--help") == 0 ? "-h, " : "", t[i].name);
        /* a flag is in the --help of exactly the front ends that accept it */
        assert_int_equal(strstr(rep, key) != NULL, (t[i].fronts & SS_REPORT) != 0);
        assert_int_equal(strstr(dash, key) != NULL, (t[i].fronts & SS_DASH) != 0);
        assert_int_equal(strstr(red, key) != NULL, (t[i].fronts & SS_REDUCE) != 0);
        /* the man page has every flag, hyphens as \- */
        size_t k = 0;
        for (const char *p = t[i].name; *p && k + 3 < sizeof roff; p++) {
            if (*p == '-') { roff[k++] = '\\'; roff[k++] = '-'; }
            else roff[k++] = *p;
        }
        roff[k] = '\0';
        char tp[200];
        snprintf(tp, sizeof tp, ".TP\n.B %s%s", strcmp(t[i].name, "--help") == 0 ? "\\-h, " : "", roff);
        assert_non_null(strstr(man, tp));
    }
    /* plain names, no paper references, in what the user reads */
    assert_null(strstr(rep, "seed 0"));
    assert_null(strstr(dash, "seed 0"));
    assert_null(strstr(man, "seed 0"));
    assert_int_equal(strncmp(man, ".TH CALSCOPE 1 ", 15), 0);
    free(rep);
    free(dash);
    free(red);
    free(man);
}

/* docs/flags.md holds the table's reference between two markers: it must be what ss_readme
 * renders now (regenerate with `make readme-flags`). Run from the source tree's root. */
static void test_readme_matches_table(void **state)
{
    (void)state;
    FILE *f = fopen("docs/flags.md", "r");
    if (!f) {
        fprintf(stderr, "docs/flags.md not found: run the unit tests from the source tree's root\n");
        fail();
    }
    char *readme = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&readme, &len);
    char chunk[4096];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) fwrite(chunk, 1, got, m);
    fclose(f);
    fclose(m);
    const char *begin = "<!-- flags: generated by `make readme-flags` from src/session/flags.c -->\n";
    const char *end = "<!-- flags: end -->\n";
    char *b = strstr(readme, begin), *e = b ? strstr(b, end) : NULL;
    assert_non_null(b);
    assert_non_null(e);
    b += strlen(begin);
    char *want = render_to_string(ss_readme);
    size_t have = (size_t)(e - b);
    if (have != strlen(want) || memcmp(b, want, have) != 0)
        fprintf(stderr, "docs/flags.md's flag reference differs from the flag table: run `make readme-flags`\n");
    assert_int_equal(have, strlen(want));
    assert_memory_equal(b, want, have);
    free(want);
    free(readme);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_flag_writes_its_own_field),
        cmocka_unit_test(test_every_report_flag_round_trips),
        cmocka_unit_test(test_exact_lines),
        cmocka_unit_test(test_dashboard_flags_round_trip),
        cmocka_unit_test(test_errors_verbatim),
        cmocka_unit_test(test_reduce_flags),
        cmocka_unit_test(test_mixture_unused),
        cmocka_unit_test(test_rows_unused),
        cmocka_unit_test(test_sigma_unused),
        cmocka_unit_test(test_follow_options),
        cmocka_unit_test(test_help_and_man_list_the_table),
        cmocka_unit_test(test_readme_matches_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
