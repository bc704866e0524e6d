/* The flag table (flags.h): each flag's parser and printer beside its help text, so that
 * parsing, `--help`, the man page, the docs/flags.md reference and the dashboard's `:` line cannot
 * drift apart. Parsers print their usage error (ss_usage_error) and return 2. */
#include "session/flags.h"

#include "calscope/catalogue.h"
#include "calscope/reduce.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { SEC_METRIC = SS_SEC_METRIC, SEC_OUTPUT = SS_SEC_OUTPUT, SEC_INPUT = SS_SEC_INPUT,
       SEC_RESAMPLING = SS_SEC_RESAMPLING, SEC_VOLUMES = SS_SEC_VOLUMES, SEC_FOLLOW = SS_SEC_FOLLOW,
       SEC_OTHER = SS_SEC_OTHER };

static int bad(const ss_opts *o, const cs_error *err)
{
    return ss_usage_error(o->front, "%s", err->msg);
}

#define ENGINE_SETTER(fn, setter)                                                               \
    static int fn(ss_opts *o, const char *v)                                                    \
    {                                                                                           \
        cs_error err;                                                                           \
        cs_error_clear(&err);                                                                   \
        return setter(&o->settings, v, &err) == CS_OK ? 0 : bad(o, &err);                       \
    }
ENGINE_SETTER(p_lens, cs_settings_set_lens)
ENGINE_SETTER(p_bins, cs_settings_set_bins)
ENGINE_SETTER(p_binning, cs_settings_set_binning)
ENGINE_SETTER(p_distance, cs_settings_set_distance)
#undef ENGINE_SETTER

static int p_gamma(ss_opts *o, const char *v)
{
    cs_error err;
    cs_error_clear(&err);
    if (cs_settings_set_gamma(&o->settings, v, &err) != CS_OK) return bad(o, &err);
    o->gamma_given = 1;
    return 0;
}

static int p_sigma(ss_opts *o, const char *v)
{
    cs_error err;
    cs_error_clear(&err);
    if (cs_settings_set_sigma(&o->settings, v, &err) != CS_OK) return bad(o, &err);
    o->sigma_given = 1;
    return 0;
}

static int p_smece_sigma(ss_opts *o, const char *v)
{
    cs_error err;
    cs_error_clear(&err);
    if (cs_settings_set_smece_sigma(&o->settings, v, &err) != CS_OK) return bad(o, &err);
    o->smece_sigma_given = 1;
    return 0;
}

static int p_boot_size(ss_opts *o, const char *v)
{
    cs_error err;
    cs_error_clear(&err);
    if (cs_settings_set_boot_size(&o->settings, v, &err) != CS_OK) return bad(o, &err);
    o->boot_size_given = 1;
    return 0;
}

static int p_mixture(ss_opts *o, const char *v)
{
    cs_error err;
    cs_error_clear(&err);
    if (cs_settings_set_mixture(&o->settings, v, &err) != CS_OK) return bad(o, &err);
    o->mixture_given = 1;
    return 0;
}

/* The --select help text states the longest expression, SELECT_MAX_TEXT, as a literal. */
#define SELECT_MAX_TEXT "511"
_Static_assert(sizeof ((cs_settings *)0)->select - 1 == 511, "--select's help text states the limit");

static int p_select(ss_opts *o, const char *v)
{
    size_t len = strlen(v);
    if (len >= sizeof o->settings.select)
        return ss_usage_error(o->front, "--select: expression too long: %zu characters, at most %zu", len,
                              sizeof o->settings.select - 1);
    strcpy(o->settings.select, v);
    o->select_given = 1;
    return 0;
}

static int p_format(ss_opts *o, const char *v)
{
    if (strcmp(v, "text") == 0) o->format = SS_FORMAT_TEXT;
    else if (strcmp(v, "json") == 0) o->format = SS_FORMAT_JSON;
    else if (strcmp(v, "csv") == 0) o->format = SS_FORMAT_CSV;
    else if (strcmp(v, "ndjson") == 0) o->format = SS_FORMAT_NDJSON;
    else return ss_usage_error(o->front, "--format: '%s' is not text, json, csv or ndjson", v);
    return 0;
}

static int p_plot(ss_opts *o, const char *v) { (void)v; o->plot = 1; return 0; }
static int p_ascii(ss_opts *o, const char *v) { (void)v; o->ascii = 1; return 0; }
static int p_no_color(ss_opts *o, const char *v) { (void)v; o->no_color = 1; return 0; }
static int p_no_mouse(ss_opts *o, const char *v) { (void)v; o->no_mouse = 1; return 0; }
static int p_renormalize(ss_opts *o, const char *v) { (void)v; o->load.renormalize = 1; return 0; }
static int p_skip_bad_rows(ss_opts *o, const char *v) { (void)v; o->load.skip_bad_rows = 1; return 0; }
static int p_no_header(ss_opts *o, const char *v) { (void)v; o->load.no_header = 1; return 0; }
/* --labels: a .npy label file, or the folder of label maps beside --probs DIR (argv: the text
 * lives on) */
static int p_labels(ss_opts *o, const char *v) { o->load.labels = v; return 0; }
static int p_npy_logits(ss_opts *o, const char *v) { (void)v; o->load.npy_logits = 1; return 0; }
static int p_replace(ss_opts *o, const char *v) { (void)v; o->replace = 1; return 0; }
static int p_compare(ss_opts *o, const char *v) { (void)v; o->compare = 1; return 0; }
static int p_likert(ss_opts *o, const char *v) { (void)v; o->likert = 1; return 0; }

static int p_check(ss_opts *o, const char *v)
{
    const char **n = realloc(o->check_text, (o->n_checks + 1) * sizeof *n);
    if (!n) return ss_usage_error(o->front, "out of memory");
    o->check_text = n;
    if (o->check_fn) {
        int rc = o->check_fn(o, v);     /* appends to o->checks */
        if (rc) return rc;
    }
    o->check_text[o->n_checks++] = v;
    return 0;
}

static int p_sum_tol(ss_opts *o, const char *v)
{
    cs_error err;
    cs_error_clear(&err);
    if (cs_parse_sum_tol(v, &o->load.sum_tol, &err) != CS_OK) return bad(o, &err);
    o->sum_tol_given = 1;
    return 0;
}

static int p_label_col(ss_opts *o, const char *v)
{
    long l;
    if (!cs_parse_whole(v, 1, 1000000, &l)) return ss_usage_error(o->front, "--label-col: '%s' is not a column number (1, 2, ...)", v);
    o->load.label_col = (int)l;
    o->label_col_given = 1;
    return 0;
}

static int p_delimiter(ss_opts *o, const char *v)
{
    if (strcmp(v, ",") == 0 || strcmp(v, "comma") == 0) o->load.delimiter = ',';
    else if (strcmp(v, ";") == 0 || strcmp(v, "semicolon") == 0) o->load.delimiter = ';';
    else if (strcmp(v, "\t") == 0 || strcmp(v, "tab") == 0 || strcmp(v, "\\t") == 0) o->load.delimiter = '\t';
    else return ss_usage_error(o->front, "--delimiter: '%s' is not , ; or tab", v);
    return 0;
}

int ss_parse_seed(const char *v, uint64_t *out)
{
    char *end;
    const char *d = v && *v == '+' ? v + 1 : v;      /* a '+' as cs_parse_whole allows */
    if (!d || !(*d >= '0' && *d <= '9')) return 0;
    errno = 0;
    unsigned long long s = strtoull(v, &end, 10);
    if (*end || errno == ERANGE) return 0;
    *out = (uint64_t)s;
    return 1;
}

static int p_seed(ss_opts *o, const char *v)
{
    if (!ss_parse_seed(v, &o->seed)) return ss_usage_error(o->front, "--seed: '%s' is not a non-negative integer", v);
    o->seed_given = 1;
    return 0;
}

static int p_threads(ss_opts *o, const char *v)
{
    cs_error err;
    cs_error_clear(&err);
    if (cs_parse_threads(v, &o->threads, &err) != CS_OK) return bad(o, &err);
    o->threads_given = 1;
    return 0;
}

/* The dashboard's --ci 0 means "off" (its `i` key turns intervals on); the report has no off. */
static int p_ci(ss_opts *o, const char *v)
{
    cs_error err;
    cs_error_clear(&err);
    long lo = o->front == SS_DASH ? 0 : 1;
    return cs_parse_resamples("--ci", v, lo, &o->ci_repeats, &err) == CS_OK ? 0 : bad(o, &err);
}

static int p_ci_method(ss_opts *o, const char *v)
{
    int m = cs_ci_method_from_name(v);
    if (m < 0) return ss_usage_error(o->front, "--ci-method: '%s' is not percentile, basic or bca", v);
    o->ci_method = m;
    o->ci_method_given = 1;
    return 0;
}

static int p_repeats(ss_opts *o, const char *v)
{
    cs_error err;
    cs_error_clear(&err);
    return cs_parse_resamples("--repeats", v, 1, &o->repeats, &err) == CS_OK ? 0 : bad(o, &err);
}

static int p_curve(ss_opts *o, const char *v)
{
    if (strcmp(v, "size") == 0) o->curve = 1;
    else if (strcmp(v, "bins") == 0) o->curve = 2;
    else return ss_usage_error(o->front, "--curve: '%s' is not size or bins", v);
    return 0;
}

/* --fractions 0.01,0.1,1 (or 1%,10%,100%) / --bins-list 5,10,15 (gamma values with kd-tree
 * binning). Each value keeps its token for messages and the printer; the ranges are checked
 * against the curve kind and the binning once every flag is read (parse.c). */
static int parse_list(ss_opts *o, const char *flag, const char *val)
{
    int fractions = strcmp(flag, "--fractions") == 0;
    o->n_curve_x = 0;
    const char *p = val;
    for (;;) {
        size_t len = strcspn(p, ",");
        char tok[64];
        if (len == 0 || len >= sizeof tok) return ss_usage_error(o->front, "%s: bad number '%.*s' in '%s'", flag, (int)(len < sizeof tok ? len : sizeof tok - 1), p, val);
        memcpy(tok, p, len);
        tok[len] = '\0';
        double v;
        int pct = fractions && len > 1 && tok[len - 1] == '%';
        if (pct) tok[len - 1] = '\0';
        if (!cs_parse_number(tok, &v)) return ss_usage_error(o->front, "%s: bad number '%.*s' in '%s'", flag, (int)len, p, val);
        if (pct) v /= 100;
        if (o->n_curve_x >= CS_CURVE_MAX_POINTS) return ss_usage_error(o->front, "%s: at most %d values", flag, CS_CURVE_MAX_POINTS);
        o->curve_tok[o->n_curve_x] = p;
        o->curve_tok_len[o->n_curve_x] = (int)len;
        o->curve_x[o->n_curve_x++] = v;
        if (p[len] == '\0') break;
        p += len + 1;
    }
    o->curve_list_flag = fractions ? 1 : 2;
    return 0;
}
static int p_fractions(ss_opts *o, const char *v) { return parse_list(o, "--fractions", v); }
static int p_bins_list(ss_opts *o, const char *v) { return parse_list(o, "--bins-list", v); }

/* --topk-bars 1,2,3,5,10,full */
static int p_topk_bars(ss_opts *o, const char *val)
{
    o->n_topk = 0;
    const char *p = val;
    for (;;) {
        size_t len = strcspn(p, ",");
        char tok[16];
        long k = 0;
        if (len == 4 && strncmp(p, "full", 4) == 0) k = 0;
        else {
            if (len == 0 || len >= sizeof tok) return ss_usage_error(o->front, "--topk-bars: bad k '%.*s' in '%s' (a whole number k >= 1, or full)", (int)(len < sizeof tok ? len : sizeof tok - 1), p, val);
            memcpy(tok, p, len);
            tok[len] = '\0';
            if (!cs_parse_whole(tok, 1, 100000, &k)) return ss_usage_error(o->front, "--topk-bars: bad k '%s' in '%s' (a whole number k >= 1, or full)", tok, val);
        }
        if (o->n_topk >= SS_TOPK_MAX) return ss_usage_error(o->front, "--topk-bars: at most %d values", SS_TOPK_MAX);
        o->topk[o->n_topk++] = (int)k;
        if (p[len] == '\0') break;
        p += len + 1;
    }
    return 0;
}

/* --likert-cuts 0,0.2,0.8,1 */
static int p_likert_cuts(ss_opts *o, const char *val)
{
    o->n_likert_cuts = 0;
    const char *p = val, *prev = NULL;
    int prev_len = 0;
    for (;;) {
        size_t len = strcspn(p, ",");
        char tok[64];
        double v;
        if (len >= sizeof tok) return ss_usage_error(o->front, "--likert-cuts: bad number '%.*s' in '%s'", (int)(sizeof tok - 1), p, val);
        memcpy(tok, p, len);
        tok[len] = '\0';
        if (!cs_parse_number(tok, &v)) return ss_usage_error(o->front, "--likert-cuts: bad number '%s' in '%s'", tok, val);
        if (v < 0 || v > 1) return ss_usage_error(o->front, "--likert-cuts: '%s' is not in [0, 1]", tok);
        if (o->n_likert_cuts >= CS_LIKERT_MAX + 1) return ss_usage_error(o->front, "--likert-cuts: at most %d cut points", CS_LIKERT_MAX + 1);
        if (o->n_likert_cuts && !(v > o->likert_cuts[o->n_likert_cuts - 1]))
            return ss_usage_error(o->front, "--likert-cuts: cut points must increase ('%.*s' then '%s')", prev_len, prev, tok);
        o->likert_cuts[o->n_likert_cuts++] = v;
        prev = p;
        prev_len = (int)len;
        if (p[len] != ',') break;
        p += len + 1;
    }
    if (o->n_likert_cuts < 2) return ss_usage_error(o->front, "--likert-cuts: need at least 2 cut points, got '%s'", val);
    o->likert = 1;
    return 0;
}

static int p_compat(ss_opts *o, const char *v)
{
    if (strcmp(v, "all") == 0) o->compat = SS_COMPAT_ALL;
    else if ((o->compat = cs_compat_from_name(v)) < 0)
        return ss_usage_error(o->front, "--compat: '%s' is not all, torchmetrics, torchmetrics-binary, netcal, relplot, verified, robustcal or monai", v);
    return 0;
}

static int p_torch_dtype(ss_opts *o, const char *v)
{
    if (strcmp(v, "float32") == 0) o->torch_f64 = 0;
    else if (strcmp(v, "float64") == 0) o->torch_f64 = 1;
    else return ss_usage_error(o->front, "--torch-dtype: '%s' is not float32 or float64", v);
    o->torch_dtype_given = 1;
    return 0;
}

/* ---- the methods table's flags ----------------------------------------------------------- */

static int whole(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno == ERANGE || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

/* "ts, platt, hist, iso or vs": the method names for --recal's messages. */
static void recal_names(char *b, size_t n)
{
    size_t pos = 0;
    b[0] = '\0';
    for (int m = 0; m < CS_RECAL_COUNT && pos < n; m++)
        pos += (size_t)snprintf(b + pos, n - pos, "%s%s", m == 0 ? "" : m + 1 == CS_RECAL_COUNT ? " or " : ", ",
                                cs_recal_name(m));
}

static int p_recal(ss_opts *o, const char *val)
{
    ss_methods_opts *mo = &o->methods;
    mo->n_recal = 0;
    mo->recal_all = 0;
    if (strcmp(val, "all") == 0) {
        /* every method, in id order; the binary-only ones are left out for a multiclass file
         * when the table is built (the file is not loaded yet) */
        for (int m = 0; m < CS_RECAL_COUNT; m++) mo->recal[mo->n_recal++] = m;
        mo->recal_all = 1;
        return 0;
    }
    char buf[128];
    if (strlen(val) >= sizeof buf) return ss_usage_error(o->front, "--recal: list too long");
    strcpy(buf, val);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int m = cs_recal_from_name(t);
        if (m < 0) {
            char names[160];
            recal_names(names, sizeof names);
            return ss_usage_error(o->front, "--recal: '%s' is not %s (or all)", t, names);
        }
        for (int i = 0; i < mo->n_recal; i++)
            if (mo->recal[i] == m) return ss_usage_error(o->front, "--recal: '%s' is given twice", t);
        mo->recal[mo->n_recal++] = m;
    }
    if (!mo->n_recal) return ss_usage_error(o->front, "--recal: empty list");
    return 0;
}

/* A whole-number flag lo..hi: "FLAG: 'V' is not WHAT" otherwise. */
static int whole_flag(ss_opts *o, const char *flag, const char *v, long lo, long hi, int *out, const char *what)
{
    long l;
    if (whole(v, lo, hi, &l)) return ss_usage_error(o->front, "%s: '%s' is not %s", flag, v, what);
    *out = (int)l;
    return 0;
}

static int p_reference(ss_opts *o, const char *v)
{
    return whole_flag(o, "--reference", v, 1, 100000, &o->methods.reference, "a method number (1 = the first file)");
}

static int p_compare_k(ss_opts *o, const char *v)
{
    return whole_flag(o, "--compare-k", v, 1, 100000, &o->methods.k, "a k >= 1");
}

static int p_recal_folds(ss_opts *o, const char *v)
{
    char what[64];
    snprintf(what, sizeof what, "a fold count in 2..%d", CS_RECAL_MAX_FOLDS);
    return whole_flag(o, "--recal-folds", v, 2, CS_RECAL_MAX_FOLDS, &o->methods.folds, what);
}

static int p_recal_bins(ss_opts *o, const char *v)
{
    return whole_flag(o, "--recal-bins", v, 1, 100000, &o->methods.bins, "a bin count in 1..100000");
}

static int p_select_on(ss_opts *o, const char *v)
{
    if (strcmp(v, "reference") == 0) o->methods.select_each = 0;
    else if (strcmp(v, "each") == 0) o->methods.select_each = 1;
    else return ss_usage_error(o->front, "--select-on: '%s' is not reference or each", v);
    o->methods.select_on_given = 1;
    return 0;
}

/* --metrics LIST: comma-separated metric names (and topk_ece) the text tables show. */
static int p_metrics(ss_opts *o, const char *v)
{
    unsigned mask = 0;
    for (const char *p = v; ; ) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        int id = cs_metric_lookup(p, len);
        if (len == 8 && strncmp(p, "topk_ece", 8) == 0) mask |= SS_METRICS_TOPK_BIT;
        else if (id < 0 || id == CS_METRIC_RECE_M) {
            char keys[160];
            cs_metric_keys(keys, sizeof keys);
            return ss_usage_error(o->front, "--metrics: '%.*s' is not a metric of the comparison (one of: %s topk_ece but rece_m)",
                                  (int)len, p, keys);
        } else mask |= 1u << id;
        if (!end) break;
        p = end + 1;
    }
    o->methods.text_metrics = mask;
    o->methods.text_metrics_given = 1;
    return 0;
}

static int p_verdict_metric(ss_opts *o, const char *v)
{
    int id = cs_metric_lookup(v, strlen(v));
    if (id == CS_METRIC_ACCURACY)
        return ss_usage_error(o->front, "--verdict-metric: accuracy is not a calibration error; give ece, ace, mce, ...");
    if (id < 0 || id == CS_METRIC_RECE_M) {
        char keys[160];
        cs_metric_keys(keys, sizeof keys);
        return ss_usage_error(o->front, "--verdict-metric: '%s' is not a metric of the comparison (one of: %s but accuracy and rece_m)", v, keys);
    }
    o->methods.verdict_metric = id;
    o->methods.verdict_metric_given = 1;
    return 0;
}

static int p_recal_max_iter(ss_opts *o, const char *v)
{
    return whole_flag(o, "--recal-max-iter", v, 1, 100000, &o->methods.max_iter, "an iteration count in 1..100000");
}

static int p_recal_split(ss_opts *o, const char *val)
{
    double v;
    if (!cs_parse_number(val, &v) || !(v > 0 && v < 1))
        return ss_usage_error(o->front, "--recal-split: '%s' is not a fitting fraction in (0, 1)", val);
    o->methods.split = v;
    return 0;
}

static int p_recal_split_column(ss_opts *o, const char *val)
{
    ss_methods_opts *mo = &o->methods;
    const char *eq = strchr(val, '=');
    size_t cl = eq ? (size_t)(eq - val) : strlen(val);
    if (cl == 0) return ss_usage_error(o->front, "--recal-split-column: '%s' names no column (COL or COL=FITVALUE)", val);
    if (eq && !eq[1]) return ss_usage_error(o->front, "--recal-split-column: '%s' has an empty fitting value", val);
    if (cl >= sizeof mo->split_column || (eq && strlen(eq + 1) >= sizeof mo->split_fit))
        return ss_usage_error(o->front, "--recal-split-column: '%s' is too long", val);
    memcpy(mo->split_column, val, cl);
    mo->split_column[cl] = '\0';
    snprintf(mo->split_fit, sizeof mo->split_fit, "%s", eq ? eq + 1 : "");
    return 0;
}

/* ---- calscope reduce ---------------------------------------------------------------------- */

static int p_out(ss_opts *o, const char *v)
{
    if (!v[0]) return ss_usage_error(o->front, "-o: empty file name (- is standard output)");
    o->out_path = v;
    return 0;
}

static int p_fine(ss_opts *o, const char *v)
{
    char what[64];
    snprintf(what, sizeof what, "a fine resolution in 1..%d", CS_SEGSTATS_FINE_MAX);
    return whole_flag(o, "--fine", v, 1, CS_SEGSTATS_FINE_MAX, &o->fine, what);
}

/* The mapping flags are parsed here (a bad token is a usage error naming it) and again by the
 * command, which keeps the result. */
static int p_label_values(ss_opts *o, const char *v)
{
    cs_error err;
    cs_error_clear(&err);
    cs_seg_mapping *m = NULL;
    if (cs_seg_mapping_values(v, &m, &err) != CS_OK) return bad(o, &err);
    cs_seg_mapping_free(m);
    o->label_values = v;
    return 0;
}

static int p_regions(ss_opts *o, const char *v)
{
    cs_error err;
    cs_error_clear(&err);
    cs_seg_mapping *m = NULL;
    if (cs_seg_mapping_regions(v, &m, &err) != CS_OK) return bad(o, &err);
    cs_seg_mapping_free(m);
    o->regions = v;
    return 0;
}

static int p_probs(ss_opts *o, const char *v) { o->probs_dir = v; return 0; }
static int p_prob_suffix(ss_opts *o, const char *v) { o->prob_suffix = v; return 0; }
static int p_merge(ss_opts *o, const char *v) { (void)v; o->merge = 1; return 0; }

static int p_memory(ss_opts *o, const char *v)
{
    return whole_flag(o, "--memory", v, 0, 1 << 20, &o->memory_mb, "a size in MiB, 0..1048576");
}

/* --true-ece X: known only for synthetic files (tools/make_bias_sample.py writes it). */
static int p_true_ece(ss_opts *o, const char *v)
{
    double t;
    if (!cs_parse_number(v, &t) || !(t >= 0 && t <= 1))
        return ss_usage_error(o->front, "--true-ece: '%s' is not an ECE in [0, 1]", v);
    o->true_ece = t;
    o->true_ece_given = 1;
    return 0;
}

static int p_affine_tol(ss_opts *o, const char *v)
{
    double t;
    if (!cs_parse_number(v, &t) || !(t >= 0))
        return ss_usage_error(o->front, "--affine-tol: '%s' is not a tolerance >= 0", v);
    o->affine_tol = t;
    o->affine_tol_given = 1;
    return 0;
}

/* ---- --follow ------------------------------------------------------------------------------ */

static int p_follow(ss_opts *o, const char *v)
{
    if (!v[0]) return ss_usage_error(o->front, "--follow: empty folder name");
    o->follow = v;
    return 0;
}

static int p_order(ss_opts *o, const char *v)
{
    if (strcmp(v, "name") == 0) o->follow_by_mtime = 0;
    else if (strcmp(v, "mtime") == 0) o->follow_by_mtime = 1;
    else return ss_usage_error(o->front, "--order: '%s' is not name or mtime", v);
    o->order_given = 1;
    return 0;
}

/* A number of seconds in [0, one day]. */
static int seconds_flag(ss_opts *o, const char *flag, const char *v, double *out)
{
    double t;
    if (!cs_parse_number(v, &t) || !(t >= 0 && t <= 86400))
        return ss_usage_error(o->front, "%s: '%s' is not a number of seconds in 0..86400", flag, v);
    *out = t;
    return 0;
}

static int p_settle(ss_opts *o, const char *v)
{
    if (seconds_flag(o, "--settle", v, &o->settle)) return 2;
    o->settle_given = 1;
    return 0;
}

static int p_idle_exit(ss_opts *o, const char *v)
{
    if (seconds_flag(o, "--idle-exit", v, &o->idle_exit)) return 2;
    o->idle_exit_given = 1;
    return 0;
}

static int p_max_files(ss_opts *o, const char *v)
{
    long l;
    if (!cs_parse_whole(v, 1, 100000000, &l))
        return ss_usage_error(o->front, "--max-files: '%s' is not a file count in 1..100000000", v);
    o->max_files = l;
    return 0;
}

static int p_fail_fast(ss_opts *o, const char *v) { (void)v; o->fail_fast = 1; return 0; }

/* ---- printers: the value that reproduces o, "" to leave the flag out --------------------- */

#define PR(fn) static void fn(const ss_opts *o, size_t i, char *b, size_t n)
#define SAY(...) snprintf(b, n, __VA_ARGS__)

static int resampled(const ss_opts *o) { return o->ci_repeats || o->curve || o->compare || o->methods.n_recal; }
static void num(char *b, size_t n, double v) { cs_format_number(b, n, v); }

/* The settings that decide every number are always written, so the line stays right if a
 * default ever changes; the rest only when they differ from the default. */
PR(q_lens) { (void)i; cs_settings_lens_name(&o->settings, b, n); }
PR(q_bins) { (void)i; SAY("%d", o->settings.bins); }
PR(q_binning) { (void)i; SAY("%s", ss_binning_name(o->settings.binning)); }
PR(q_gamma) { (void)i; if (o->settings.binning == CS_BIN_KDTREE) num(b, n, o->settings.gamma); else SAY("%s", ""); }
/* the report refuses --sigma and --smece-sigma where their metrics are n/a (ss_sigma_unused):
 * a lens without RECE-G writes --sigma only when it was changed (RECE-M may use it), a lens
 * without smECE never writes --smece-sigma */
PR(q_sigma)
{
    (void)i;
    cs_settings d;
    cs_settings_default(&d);
    if (cs_metric_lens_gives(CS_METRIC_RECE_G, &o->settings) || o->settings.sigma != d.sigma) num(b, n, o->settings.sigma);
    else SAY("%s", "");
}
PR(q_smece_sigma)
{
    (void)i;
    if (o->settings.smece_sigma > 0 && cs_metric_lens_gives(CS_METRIC_SMECE, &o->settings)) num(b, n, o->settings.smece_sigma);
    else SAY("%s", "");
}
PR(q_boot_size)
{
    (void)i;
    if (o->settings.boot_size == CS_BOOT_SIZE_FULL) SAY("%s", "full");
    else if (o->settings.boot_size > 0) SAY("%ld", o->settings.boot_size);
    else SAY("%s", "");
}
PR(q_mixture) { (void)i; SAY("%s", o->settings.mixture != CS_MIX_KDE ? ss_mixture_name(o->settings.mixture) : ""); }
PR(q_distance) { (void)i; ss_distance_name(&o->settings, b, n); }
static int select_blank(const ss_opts *o)
{
    int blank = 1;
    for (const char *c = o->settings.select; *c; c++) blank &= *c == ' ' || *c == '\t';
    return blank;
}
PR(q_select) { (void)i; SAY("%s", select_blank(o) ? "" : o->settings.select); }
PR(q_format)
{
    (void)i;
    SAY("%s", o->format == SS_FORMAT_JSON ? "json" : o->format == SS_FORMAT_CSV ? "csv"
              : o->format == SS_FORMAT_NDJSON ? "ndjson" : "");
}
PR(q_plot) { (void)i; SAY("%s", o->plot ? "on" : ""); }
PR(q_ascii) { (void)i; SAY("%s", o->ascii && o->plot ? "on" : ""); }   /* the report's --ascii needs --plot */
PR(q_check) { SAY("%s", i < o->n_checks ? o->check_text[i] : ""); }
PR(q_sum_tol)
{
    (void)i;
    cs_load_options d;
    cs_load_options_default(&d);
    if (o->load.sum_tol != d.sum_tol && !o->load.renormalize) num(b, n, o->load.sum_tol);
    else SAY("%s", "");
}
PR(q_renormalize) { (void)i; SAY("%s", o->load.renormalize ? "on" : ""); }
PR(q_skip_bad_rows) { (void)i; SAY("%s", o->load.skip_bad_rows ? "on" : ""); }
PR(q_no_header) { (void)i; SAY("%s", o->load.no_header ? "on" : ""); }
PR(q_labels) { (void)i; SAY("%s", o->load.labels ? o->load.labels : ""); }
PR(q_npy_logits) { (void)i; SAY("%s", o->load.npy_logits ? "on" : ""); }
PR(q_label_col) { (void)i; if (o->load.no_header && o->load.label_col > 1) SAY("%d", o->load.label_col); else SAY("%s", ""); }
PR(q_delimiter)
{
    (void)i;
    char d = o->load.delimiter;
    SAY("%s", d == ',' ? "," : d == ';' ? ";" : d == '\t' ? "tab" : "");
}
PR(q_ci) { (void)i; if (o->ci_repeats > 0) SAY("%d", o->ci_repeats); else SAY("%s", ""); }
PR(q_ci_method)
{
    (void)i;
    SAY("%s", o->ci_method && (o->ci_repeats > 0 || o->compare || o->methods.n_recal) ? cs_ci_method_name(o->ci_method) : "");
}
PR(q_curve) { (void)i; SAY("%s", o->curve == 1 ? "size" : o->curve == 2 ? "bins" : ""); }
static void tokens(const ss_opts *o, int which, char *b, size_t n)
{
    b[0] = '\0';
    if (o->curve_list_flag != which) return;
    size_t pos = 0;
    for (size_t k = 0; k < o->n_curve_x && pos < n; k++)
        pos += (size_t)snprintf(b + pos, n - pos, "%s%.*s", k ? "," : "", o->curve_tok_len[k], o->curve_tok[k]);
}
PR(q_fractions) { (void)i; tokens(o, 1, b, n); }
PR(q_bins_list) { (void)i; tokens(o, 2, b, n); }
PR(q_repeats) { (void)i; if (o->repeats && (o->curve || o->compare || o->methods.n_recal)) SAY("%d", o->repeats); else SAY("%s", ""); }
PR(q_replace) { (void)i; SAY("%s", o->replace ? "on" : ""); }
PR(q_compare) { (void)i; SAY("%s", o->compare && !o->methods.n_recal ? "on" : ""); }   /* --recal implies it */
PR(q_recal)
{
    (void)i;
    b[0] = '\0';
    size_t pos = 0;
    if (o->methods.recal_all) { SAY("%s", "all"); return; }
    for (int k = 0; k < o->methods.n_recal && pos < n; k++)
        pos += (size_t)snprintf(b + pos, n - pos, "%s%s", k ? "," : "", cs_recal_name(o->methods.recal[k]));
}
PR(q_recal_folds) { (void)i; if (o->methods.folds) SAY("%d", o->methods.folds); else SAY("%s", ""); }
PR(q_recal_bins) { (void)i; if (o->methods.bins) SAY("%d", o->methods.bins); else SAY("%s", ""); }
PR(q_recal_max_iter) { (void)i; if (o->methods.max_iter) SAY("%d", o->methods.max_iter); else SAY("%s", ""); }
PR(q_recal_split) { (void)i; if (o->methods.split > 0) num(b, n, o->methods.split); else SAY("%s", ""); }
PR(q_recal_split_column)
{
    (void)i;
    const ss_methods_opts *mo = &o->methods;
    SAY("%s%s%s", mo->split_column, mo->split_fit[0] ? "=" : "", mo->split_fit);
}
PR(q_reference) { (void)i; if (o->methods.reference) SAY("%d", o->methods.reference); else SAY("%s", ""); }
/* the default (reference) is left out; `each` only where a comparison and a selection are */
PR(q_select_on) { (void)i; SAY("%s", o->methods.select_each && o->compare && !select_blank(o) ? "each" : ""); }
PR(q_verdict_metric) { (void)i; SAY("%s", o->methods.verdict_metric_given && o->compare ? cs_metric_name(o->methods.verdict_metric) : ""); }
PR(q_metrics)
{
    (void)i;
    char buf[256] = "";
    for (int id = 0; o->methods.text_metrics_given && id < 31; id++)
        if (o->methods.text_metrics & (1u << id))
            snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", buf[0] ? "," : "", cs_metric_name(id));
    if (o->methods.text_metrics_given && (o->methods.text_metrics & SS_METRICS_TOPK_BIT))
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%stopk_ece", buf[0] ? "," : "");
    SAY("%s", buf);
}
PR(q_compare_k) { (void)i; if (o->methods.k) SAY("%d", o->methods.k); else SAY("%s", ""); }
PR(q_topk_bars)
{
    (void)i;
    b[0] = '\0';
    size_t pos = 0;
    for (size_t k = 0; k < o->n_topk && pos < n; k++) {
        if (o->topk[k]) pos += (size_t)snprintf(b + pos, n - pos, "%s%d", k ? "," : "", o->topk[k]);
        else pos += (size_t)snprintf(b + pos, n - pos, "%sfull", k ? "," : "");
    }
}
PR(q_likert) { (void)i; SAY("%s", o->likert && !o->n_likert_cuts ? "on" : ""); }
PR(q_likert_cuts)
{
    (void)i;
    b[0] = '\0';
    size_t pos = 0;
    for (size_t k = 0; k < o->n_likert_cuts && pos < n; k++) {
        char v[40];
        num(v, sizeof v, o->likert_cuts[k]);
        pos += (size_t)snprintf(b + pos, n - pos, "%s%s", k ? "," : "", v);
    }
}
/* --seed and --threads only where the command has something random: the report refuses them
 * otherwise */
PR(q_seed) { (void)i; if (resampled(o) && (o->seed_given || o->seed)) SAY("%llu", (unsigned long long)o->seed); else SAY("%s", ""); }
PR(q_prob_suffix) { (void)i; SAY("%s", o->prob_suffix ? o->prob_suffix : ""); }
PR(q_fine) { (void)i; if (o->fine) SAY("%d", o->fine); else SAY("%s", ""); }
PR(q_label_values) { (void)i; SAY("%s", o->label_values ? o->label_values : ""); }
PR(q_regions) { (void)i; SAY("%s", o->regions ? o->regions : ""); }
PR(q_true_ece) { (void)i; if (o->true_ece_given) num(b, n, o->true_ece); else SAY("%s", ""); }
PR(q_affine_tol) { (void)i; if (o->affine_tol_given) num(b, n, o->affine_tol); else SAY("%s", ""); }
PR(q_threads) { (void)i; if (resampled(o) && o->threads_given) SAY("%d", o->threads); else SAY("%s", ""); }
PR(q_compat)
{
    (void)i;
    SAY("%s", o->compat == SS_COMPAT_ALL ? "all" : o->compat >= 0 ? cs_compat_name((cs_compat_lib)o->compat) : "");
}
PR(q_torch_dtype) { (void)i; SAY("%s", o->torch_dtype_given ? (o->torch_f64 ? "float64" : "float32") : ""); }
PR(q_no_color) { (void)i; SAY("%s", o->no_color ? "on" : ""); }
PR(q_no_mouse) { (void)i; SAY("%s", o->no_mouse ? "on" : ""); }
#undef PR
#undef SAY

/* ---- the table --------------------------------------------------------------------------- */

#define R SS_REPORT
#define D SS_DASH
#define RD (SS_REPORT | SS_DASH)
#define X SS_REDUCE

static const ss_flag table[] = {
    { "--lens", "L", RD, SEC_METRIC, p_lens, q_lens, 0,
      "top1|topk:K|class:C|classwise|group:A,B;C,D|full (default top1)", NULL },
    { "--bins", "M", RD, SEC_METRIC, p_bins, q_bins, 0, "number of bins, 1..1000 (default 15)", NULL },
    { "--binning", "B", RD, SEC_METRIC, p_binning, q_binning, 0,
      "uniform|mass|kdtree (default uniform; mass = equal-mass bins)", NULL },
    { "--gamma", "G", RD, SEC_METRIC, p_gamma, q_gamma, 0,
      "kd-tree: split while a cell holds >= G*N samples (default 0.1)", NULL },
    { "--sigma", "S", RD, SEC_METRIC, p_sigma, q_sigma, 0,
      "RECE-G / RECE-M Gaussian kernel sd, 1e-6..10 (default 0.1)", NULL },
    { "--smece-sigma", "S", RD, SEC_METRIC, p_smece_sigma, q_smece_sigma, 0,
      "smooth ECE bandwidth, 0.001..1 (default: relplot's automatic\n"
      "fixed point sigma = smECE_sigma)", NULL },
    { "--mixture", "X", RD, SEC_METRIC, p_mixture, q_mixture, 0,
      "RECE-M mixture kde|gmm3 (default kde; needs an id/tta long file)", NULL },
    { "--distance", "D", RD, SEC_METRIC, p_distance, q_distance, 0,
      "tvd|l2|max|interval:L,H (default tvd)", NULL },
    { "--select", "'EXPR'", RD, SEC_METRIC, p_select, q_select, 0,
      "keep the samples matching EXPR, e.g. 'conf > 0.9 and y in {3,5}'\n"
      "(y, pred, conf, p[C], case; == != < <= > >= in; joined with and;\n"
      "at most " SELECT_MAX_TEXT " characters)", NULL },

    { "--format", "F", R, SEC_OUTPUT, p_format, q_format, 0,
      "text|json|csv|ndjson (default text); ndjson: with --follow, one\n"
      "JSON object per file as it arrives", NULL },
    { "--plot", NULL, R, SEC_OUTPUT, p_plot, q_plot, 0,
      "text reliability diagram after the table, 80 columns (on stdout;\n"
      "with --format json|csv it goes to stderr so stdout stays parseable)", NULL },
    { "--ascii", NULL, RD, SEC_OUTPUT, p_ascii, q_ascii, 0,
      "ASCII glyphs for --plot even when the locale is UTF-8",
      "ASCII glyphs even when the locale is UTF-8" },
    { "--check", "'M OP V'", R, SEC_OUTPUT, p_check, q_check, 1,
      "gate, repeatable: exit 1 when metric M of any file fails, e.g.\n"
      "--check 'ece<=0.05' --check 'accuracy>=0.9' (OP: <= < >= >;\n"
      "M, any case: accuracy ece ace mce rece_g rece_m brier nll aece sce\n"
      "smece l2ce l2ce_debiased ece_sweep)", NULL },
    { "--no-color", NULL, D, SEC_OUTPUT, p_no_color, q_no_color, 0,
      "monochrome theme (also when NO_COLOR is set)", NULL },
    { "--no-mouse", NULL, D, SEC_OUTPUT, p_no_mouse, q_no_mouse, 0,
      "leave the mouse to the terminal (no tab clicks, no wheel scrolling)", NULL },

    { "--sum-tol", "T", RD | X, SEC_INPUT, p_sum_tol, q_sum_tol, 0,
      "probability rows must sum to 1 within T (default 0.001; reduce:\n"
      "the softmax channels of each voxel)", NULL },
    { "--renormalize", NULL, RD, SEC_INPUT, p_renormalize, q_renormalize, 0,
      "divide each probability row by its sum", NULL },
    { "--skip-bad-rows", NULL, RD, SEC_INPUT, p_skip_bad_rows, q_skip_bad_rows, 0,
      "load the good rows and report the bad ones (default: refuse the file)", NULL },
    { "--no-header", NULL, RD, SEC_INPUT, p_no_header, q_no_header, 0,
      "the file has no header: --label-col is the label, the rest are p_0..", NULL },
    { "--label-col", "N", RD, SEC_INPUT, p_label_col, q_label_col, 0,
      "1-based label column for --no-header (default 1)", NULL },
    { "--delimiter", "C", RD, SEC_INPUT, p_delimiter, q_delimiter, 0,
      ", ; or tab (default: sniffed from the first line)", NULL },
    { "--labels", "FILE|DIR", RD | X, SEC_INPUT, p_labels, q_labels, 0,
      "the labels (N integers 0..K-1, a .npy file) for .npy prediction files:\n"
      "each FILE.npy is then an N x K array of probabilities, classes 0..K-1;\n"
      "reduce: the DIR of label maps CASE.nii|.nii.gz|.npz|.npy (with --probs)", NULL },
    { "--npy-logits", NULL, RD, SEC_INPUT, p_npy_logits, q_npy_logits, 0,
      "the .npy prediction files hold logits (softmax applied), not probabilities;\n"
      "an .npz: read its member 'logits'", NULL },

    { "--ci", "R", RD, SEC_RESAMPLING, p_ci, q_ci, 0,
      "bootstrap 95% intervals of every metric from R resamples (at most\n"
      "100000; CSV: <metric>_lo, <metric>_hi columns)",
      "bootstrap intervals in the metrics table from R resamples (0 = off,\n"
      "the default; at most 100000; `i` turns them on and off)" },
    { "--ci-method", "M", RD, SEC_RESAMPLING, p_ci_method, q_ci_method, 0,
      "percentile|basic|bca (default percentile; ! marks an interval that\n"
      "misses its value: a biased metric; bca = bias-corrected, accelerated)", NULL },
    { "--boot-size", "N", RD, SEC_RESAMPLING, p_boot_size, q_boot_size, 0,
      "samples per bootstrap draw of the intervals and comparisons: auto\n"
      "(default: all up to max(30000, 2000 x bins); of more, that many,\n"
      "m out of n, and no MCE/ACE/SCE interval), full, or N >= 1000", NULL },
    { "--curve", "size|bins", R, SEC_RESAMPLING, p_curve, q_curve, 0,
      "variance curve: metric against sample fraction / number of bins", NULL },
    { "--fractions", "LIST", R, SEC_RESAMPLING, p_fractions, q_fractions, 0,
      "size curve fractions (default 0.01,0.05,0.1,0.25,0.5,1; 5% also works)", NULL },
    { "--bins-list", "LIST", R, SEC_RESAMPLING, p_bins_list, q_bins_list, 0,
      "bins curve M values (default 5,10,15,20,30,50,100,200,500,1000;\n"
      "gamma values with --binning kdtree)", NULL },
    { "--true-ece", "X", R, SEC_RESAMPLING, p_true_ece, q_true_ece, 0,
      "the file's true top-1 ECE (synthetic files: FILE.truth.json of\n"
      "tools/make_bias_sample.py); the size curve adds each metric's bias = mean - X", NULL },
    { "--repeats", "R", RD, SEC_RESAMPLING, p_repeats, q_repeats, 0,
      "subsets per point (default 20 size, 200 bins; 1000 for --compare;\n"
      "at most 100000)",
      "variance curve repeats (default 20; at most 100000)" },
    { "--replace", NULL, R, SEC_RESAMPLING, p_replace, q_replace, 0,
      "size curve draws with replacement (default: without, as in the RECE paper)", NULL },
    { "--compare", NULL, R, SEC_RESAMPLING, p_compare, q_compare, 0,
      "files with the same samples (paired by id, else by row): two files\n"
      "A B give metric(A) - metric(B) with a bootstrap interval (--repeats);\n"
      "any number add a methods table (value, 95% CI with --ci R (default 200),\n"
      "paired difference to the reference), rankings and probability mass", NULL },
    { "--recal", "LIST", R, SEC_RESAMPLING, p_recal, q_recal, 0,
      "post-hoc recalibrations of the reference file as more methods:\n"
      "ts,platt,hist,iso,vs,ets,beta,irova,ms,dir (temperature, Platt\n"
      "(binary), histogram binning, isotonic, vector scaling, ensemble\n"
      "temperature scaling, beta (binary), one-vs-rest isotonic, matrix\n"
      "scaling and Dirichlet calibration with ODIR (up to 20 classes)) or\n"
      "all; 5-fold cross-fitted (implies --compare)", NULL },
    { "--recal-folds", "K", R, SEC_RESAMPLING, p_recal_folds, q_recal_folds, 0,
      "cross-fitting folds (default 5)", NULL },
    { "--recal-bins", "M", R, SEC_RESAMPLING, p_recal_bins, q_recal_bins, 0,
      "histogram binning's bins (default 15)", NULL },
    { "--recal-max-iter", "N", R, SEC_RESAMPLING, p_recal_max_iter, q_recal_max_iter, 0,
      "iteration budget of each fit of vs, beta, ms and dir (default\n"
      "1000); a fit that spends it is reported as not converged, not\n"
      "measured", NULL },
    { "--recal-split", "F", R, SEC_RESAMPLING, p_recal_split, q_recal_split, 0,
      "fit on a seeded id-hash fraction F of the rows instead, and measure\n"
      "every method on the other rows only", NULL },
    { "--recal-split-column", "COL[=FIT]", R, SEC_RESAMPLING, p_recal_split_column, q_recal_split_column, 0,
      "fit on the rows whose column COL is FIT (default: fit or train,\n"
      "any case) instead, and measure every method on the other rows\n"
      "only (every FILE must have the column COL)", NULL },
    { "--reference", "N", R, SEC_RESAMPLING, p_reference, q_reference, 0,
      "method N (1 = first file; files, then recalibrations) is the reference", NULL },
    { "--select-on", "WHOSE", RD, SEC_RESAMPLING, p_select_on, q_select_on, 0,
      "reference|each: a comparison's --select is evaluated once, on the\n"
      "reference's samples, and every method is measured on those samples\n"
      "(default reference); each: every method on its own selection, values\n"
      "only (no paired differences)", NULL },
    { "--verdict-metric", "M", RD, SEC_RESAMPLING, p_verdict_metric, q_verdict_metric, 0,
      "the metric of the comparison's verdict line (default ece; any of\n"
      "its metrics but accuracy): which method is better calibrated, by\n"
      "the paired difference method - reference", NULL },
    { "--metrics", "LIST", R, SEC_RESAMPLING, p_metrics, q_metrics, 0,
      "the metrics the comparison's text tables show, comma-separated\n"
      "(default ece,ace,mce,brier,nll,smece; also accuracy, aece, rece_g,\n"
      "sce, l2ce, l2ce_debiased, ece_sweep, topk_ece); JSON and CSV keep all", NULL },
    { "--compare-k", "K", R, SEC_RESAMPLING, p_compare_k, q_compare_k, 0,
      "k of the table's top-k ECE column (default 3)", NULL },
    { "--topk-bars", "LIST", R, SEC_RESAMPLING, p_topk_bars, q_topk_bars, 0,
      "top-k ECE bars for k in LIST, e.g. 1,2,3,5,10,full (each k once;\n"
      "full and k > K are K; CSV: topk_<k> columns)", NULL },
    { "--likert", NULL, R, SEC_RESAMPLING, p_likert, q_likert, 0,
      "Likert view: confidence categories [0,0.33) [0.33,0.66)\n"
      "[0.66,1], each with its sample count and its ECE under the interval\n"
      "distance interval:lo,hi (on the lens's first coordinate; top1, topk,\n"
      "class or full lens; --bins/--binning/--select apply)", NULL },
    { "--likert-cuts", "LIST", R, SEC_RESAMPLING, p_likert_cuts, q_likert_cuts, 0,
      "Likert view with these cut points, e.g. 0,0.2,0.8,1 (implies --likert;\n"
      "2 to 17 increasing values in [0, 1]; the last category includes its top)", NULL },
    { "--seed", "N", RD, SEC_RESAMPLING, p_seed, q_seed, 0,
      "random seed, any 64-bit unsigned value (default 0); needs --ci,\n"
      "--curve, --compare or --recal",
      "random seed, any 64-bit unsigned value (default 0; `e` steps it)" },
    { "--threads", "N", RD | X, SEC_RESAMPLING, p_threads, q_threads, 0,
      "worker threads (0 = all cores, at most 256); the report needs\n"
      "one of --ci, --curve, --compare or --recal; reduce: cases at once",
      "worker threads (0 = all cores, at most 256)" },
    { "--compat", "NAME|all", R, SEC_RESAMPLING, p_compat, q_compat, 0,
      "the numbers library NAME would report (torchmetrics, torchmetrics-binary,\n"
      "netcal, relplot, verified, robustcal, monai): its edge side, float32\n"
      "edges, 1.0/0/empty-bin and equal-mass rules, and its own bin table; `all`\n"
      "shows every library beside calscope and the samples that change bin\n"
      "(CSV: <lib>_ece/_ace/_mce/_moved columns) (top1/classwise lens;\n"
      "relplot also class:C, with its smooth ECE)", NULL },
    { "--torch-dtype", "T", R, SEC_RESAMPLING, p_torch_dtype, q_torch_dtype, 0,
      "float32 (default: a model's output) or float64 (torch.tensor(P,\n"
      "dtype=torch.float64)): the tensors --compat torchmetrics gets", NULL },

    { "-o", "STATS", X, SEC_VOLUMES, p_out, NULL, 0,
      "write the statistics file to STATS (default -, standard output;\n"
      "a name ending in .gz is gzip-compressed; written whole or not at all)", NULL },
    { "--fine", "F", RD | X, SEC_VOLUMES, p_fine, q_fine, 0,
      "fine bins of the statistics, 1..100000 (default 300: every bin count\n"
      "5, 10, 15, 20, 25, 30, 50, 100 divides it)", NULL },
    { "--label-values", "LIST", RD | X, SEC_VOLUMES, p_label_values, q_label_values, 0,
      "softmax channel c is label value c of LIST, e.g. 0,1,2,4 or\n"
      "bg=0,NCR=1,ED=2,ET=4 (default 0..C-1, C from the first case)", NULL },
    { "--regions", "SPEC", RD | X, SEC_VOLUMES, p_regions, q_regions, 0,
      "independent sigmoid channels, one per region, e.g. 'WT=1,2,4;TC=1,4;ET=4'\n"
      "(y = 1 where the label is one of the region's values; no top-1)", NULL },
    /* no printer: the `:` line writes the folder among the FILEs (a folder FILE with --labels DIR
     * is a folder pair) */
    { "--probs", "DIR", RD | X, SEC_VOLUMES, p_probs, NULL, 0,
      "probability files CASE[SUFFIX].nii|.nii.gz|.npz|.npy, paired by\n"
      "stem with --labels DIR instead of a manifest", NULL },
    { "--prob-suffix", "S", RD | X, SEC_VOLUMES, p_prob_suffix, q_prob_suffix, 0,
      "probability files are CASE + S, e.g. _prob (CASE_prob.nii.gz) or .npz\n"
      "(nnU-Net's CASE.npz beside its CASE.nii.gz)", NULL },
    { "--affine-tol", "T", RD | X, SEC_VOLUMES, p_affine_tol, q_affine_tol, 0,
      "refuse a case whose two affines differ by more than T (default 0.001)", NULL },
    { "--memory", "MB", X, SEC_VOLUMES, p_memory, NULL, 0,
      "MiB the cases in flight share for label maps, running values and buffers\n"
      "(default 48); a larger case runs alone, read a slab ahead by a helper thread", NULL },
    { "--merge", NULL, X, SEC_VOLUMES, p_merge, NULL, 0,
      "sum the statistics files given (shards of one test set) into -o STATS", NULL },

    { "--follow", "DIR|'DIR/GLOB'", RD, SEC_FOLLOW, p_follow, NULL, 0,
      "watch a training run: measure each prediction file (CSV, .csv.gz,\n"
      ".npy with --labels) the folder gets, once, when complete, and print\n"
      "it as one JSON line (--format ndjson); files already there first",
      "watch a training run: each complete prediction file of the folder is\n"
      "the next epoch (Trend view 7; Left/Right step through the epochs)" },
    { "--order", "name|mtime", RD, SEC_FOLLOW, p_order, NULL, 0,
      "the order of the files already there: natural order of the names\n"
      "(epoch_2 before epoch_10, the default) or modification time", NULL },
    { "--settle", "SECONDS", RD, SEC_FOLLOW, p_settle, NULL, 0,
      "a CSV written in place is complete when it ends with a newline and\n"
      "has not changed for SECONDS (default 1); a renamed-in file at once", NULL },
    { "--idle-exit", "SECONDS", R, SEC_FOLLOW, p_idle_exit, NULL, 0,
      "end after SECONDS without a new file (status 0, or 1 when a\n"
      "--check failed)", NULL },
    { "--max-files", "N", R, SEC_FOLLOW, p_max_files, NULL, 0, "end after N files", NULL },
    { "--fail-fast", NULL, R, SEC_FOLLOW, p_fail_fast, NULL, 0,
      "end with status 1 at the first file that fails a --check", NULL },
    { "--help", NULL, RD | X, SEC_OTHER, NULL, NULL, 0, "this text", NULL },
    { "--version", NULL, RD | X, SEC_OTHER, NULL, NULL, 0, "print the version", NULL },
};

#undef R
#undef D
#undef RD
#undef X

_Static_assert(sizeof table / sizeof table[0] <= SS_FLAGS_MAX, "ss_parse counts each flag's uses in SS_FLAGS_MAX");

const ss_flag *ss_flags(size_t *count)
{
    *count = sizeof table / sizeof table[0];
    return table;
}

const ss_flag *ss_flag_find(const char *name)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i].name, name) == 0) return &table[i];
    return NULL;
}
