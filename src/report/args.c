/* Option parsing for `calscope report` (SPEC §5). Hand-written rather than getopt_long so that
 * `--flag=value` and `--flag value` both work, options may follow files, and every bad value
 * gets a message naming the flag. */
#include "report/rep.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "calscope/version.h"

static const char usage_text[] =
"Usage: calscope report [OPTIONS] FILE...\n"
"Prints the calibration metrics of prediction files (CSV, .csv.gz; \"-\" reads stdin).\n"
"\n"
"Metric settings:\n"
"  --lens L            top1|topk:K|class:C|classwise|group:A,B;C,D|full (default top1)\n"
"  --bins M            number of bins, 1..1000 (default 15)\n"
"  --binning B         uniform|mass|kdtree (default uniform; mass = equal-mass bins)\n"
"  --gamma G           kd-tree: split while a cell holds >= G*N samples (default 0.1)\n"
"  --sigma S           RECE-G / RECE-M Gaussian kernel sd, 1e-6..10 (default 0.1)\n"
"  --mixture X         RECE-M mixture kde|gmm3 (default kde; needs an id/tta long file)\n"
"  --distance D        tvd|l2|max|interval:L,H (default tvd)\n"
"  --select 'EXPR'     keep the samples matching EXPR, e.g. 'conf > 0.9 and y in {3,5}'\n"
"                      (y, pred, conf, p[C], case; == != < <= > >= in; joined with and)\n"
"\n"
"Output:\n"
"  --format F          text|json|csv (default text)\n"
"  --plot              text reliability diagram after the table, 80 columns (on stdout;\n"
"                      with --format json|csv it goes to stderr so stdout stays parseable)\n"
"  --ascii             ASCII glyphs for --plot even when the locale is UTF-8\n"
"  --check 'M OP V'    gate, repeatable: exit 1 when metric M of any file fails, e.g.\n"
"                      --check 'ece<=0.05' --check 'accuracy>=0.9' (OP: <= < >= >;\n"
"                      M, any case: accuracy ece ace mce rece_g rece_m brier nll aece sce)\n"
"\n"
"Input:\n"
"  --sum-tol T         probability rows must sum to 1 within T (default 0.001)\n"
"  --renormalize       divide each probability row by its sum\n"
"  --skip-bad-rows     load the good rows and report the bad ones (default: refuse the file)\n"
"  --no-header         the file has no header: --label-col is the label, the rest are p_0..\n"
"  --label-col N       1-based label column for --no-header (default 1)\n"
"  --delimiter C       , ; or tab (default: sniffed from the first line)\n"
"\n";

/* Split in three: ISO C limits a string literal to 4095 characters (-Woverlength-strings). */
static const char usage_text2[] =
"Resampling (deterministic for a --seed whatever --threads):\n"
"  --ci R              bootstrap 95% intervals of every metric from R resamples (at most\n"
"                      100000; CSV: <metric>_lo, <metric>_hi columns)\n"
"  --ci-method M       percentile|basic|bca (default percentile; ! marks an interval that\n"
"                      misses its value: a biased metric; bca = bias-corrected, accelerated)\n"
"  --curve size|bins   variance curve: metric against sample fraction / number of bins\n"
"  --fractions LIST    size curve fractions (default 0.01,0.05,0.1,0.25,0.5,1; 5% also works)\n"
"  --bins-list LIST    bins curve M values (default 5,10,15,20,30,50,100,200,500,1000;\n"
"                      gamma values with --binning kdtree)\n"
"  --repeats R         subsets per point (default 20 size, 200 bins; 1000 for --compare;\n"
"                      at most 100000)\n"
"  --replace           size curve draws with replacement (default: without, as seed 000)\n"
"  --compare           files with the same samples (paired by id, else by row): two files\n"
"                      A B give metric(A) - metric(B) with a bootstrap interval (--repeats);\n"
"                      any number add a methods table (value, 95% CI with --ci R (default 200),\n"
"                      paired difference to the reference), rankings and probability mass\n"
"  --recal LIST        post-hoc recalibrations of the reference file as more methods:\n"
"                      ts,platt,hist,iso (temperature, Platt (binary), histogram binning,\n"
"                      isotonic); 5-fold cross-fitted (implies --compare)\n"
"  --recal-folds K     cross-fitting folds (default 5)   --recal-bins M   hist bins (15)\n"
"  --recal-split F     fit on a seeded id-hash fraction F of the rows instead, and measure\n"
"                      every method on the other rows only\n""  --recal-split-column COL[=FIT]\n"
"                      fit on the rows whose column COL is FIT (default: fit or train,\n"
"                      any case) instead, and measure every method on the other rows\n"
"                      only (every FILE must have the column COL)\n"
"  --reference N       method N (1 = first file; files, then recalibrations) is the reference\n"
"  --compare-k K       k of the table's top-k ECE column (default 3)\n"
"  --topk-bars LIST    top-k ECE bars for k in LIST, e.g. 1,2,3,5,10,full (each k once;\n"
"                      full and k > K are K; CSV: topk_<k> columns)\n"
"  --likert            Likert view (seed 002 5.3): confidence categories [0,0.33) [0.33,0.66)\n"
"                      [0.66,1], each with its sample count and its ECE under the interval\n"
"                      distance interval:lo,hi (on the lens's first coordinate; top1, topk,\n"
"                      class or full lens; --bins/--binning/--select apply)\n"
"  --likert-cuts LIST  Likert view with these cut points, e.g. 0,0.2,0.8,1 (implies --likert;\n"
"                      2 to 17 increasing values in [0, 1]; the last category includes its top)\n"
"  --seed N            random seed (default 0)     --threads N   worker threads (0 = all\n"
"                      cores, at most 256); both need --ci, --curve, --compare or --recal\n"
"  --compat NAME|all   the numbers library NAME would report (torchmetrics, torchmetrics-binary,\n"
"                      netcal, relplot, verified, robustcal, monai): its edge side, float32\n"
"                      edges, 1.0/0/empty-bin and equal-mass rules, and its own bin table; `all`\n"
"                      shows every library beside calscope and the samples that change bin\n"
"                      (CSV: <lib>_ece/_ace/_mce/_moved columns) (top1/classwise lens)\n"
"  --torch-dtype T     float32 (default: a model's output) or float64 (torch.tensor(P,\n"
"                      dtype=torch.float64)): the tensors --compat torchmetrics gets\n"
"\n"
"  -h, --help          this text          --version   print the version\n";

static const char usage_text3[] =
"\n"
"Metrics: accuracy; ece = sum over bins of n_b/N * gap (with --binning mass it is the\n"
"adaptive ECE, with --lens classwise the class-wise ECE / SCE); ACE = mean over non-empty bins\n"
"(seed 003), not Nixon's adaptive ECE; mce = max over non-empty bins; rece_g = Gaussian-\n"
"smoothed ECE summed over all M bins (seed 000 eq. 6); rece_m = its TTA-mixture form (null\n"
"without id/tta); brier = mean squared error summed over classes; nll = mean -ln p[y]\n"
"(clipped at 1e-15); aece = top-1 equal-mass ECE; sce = class-wise uniform ECE.\n"
"\n"
"Several files are reported one after the other; a rejected file is reported on stderr and\n"
"the others still appear (JSON lists it under \"errors\"), and the exit status is then 3.\n"
"Exit status: 0 ok, 1 a --check failed, 2 usage error, 3 input error (file unreadable or\n"
"rejected). Errors read `calscope: FILE:LINE:COL: reason`.\n";

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
int rep_usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("calscope: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\nTry `calscope report --help`.\n", stderr);
    return 2;
}

void rep_opts_free(rep_opts *o)
{
    free(o->checks);
    free(o->files);
    o->checks = NULL;
    o->files = NULL;
}

/* Flags that take a value. */
static const char *const valued[] = {
    "--lens", "--bins", "--binning", "--gamma", "--sigma", "--mixture", "--distance", "--select",
    "--format", "--check", "--sum-tol", "--label-col", "--delimiter", "--seed", "--threads",
    "--ci", "--ci-method", "--curve", "--fractions", "--bins-list", "--repeats", "--topk-bars", "--recal", "--reference", "--compare-k", "--recal-folds", "--recal-bins", "--recal-split", "--recal-split-column", "--compat", "--likert-cuts", "--torch-dtype", NULL,
};

static int in_list(const char *const *list, const char *s)
{
    for (size_t i = 0; list[i]; i++) if (strcmp(list[i], s) == 0) return 1;
    return 0;
}

/* --fractions 0.01,0.1,1 (or 1%,10%,100%) / --bins-list 5,10,15 (gamma values with kd-tree
 * binning). Each value keeps its token for messages; the ranges are checked against the curve
 * kind and the binning once every flag is read (check_curve_list). */
static int parse_list(rep_opts *o, const char *flag, const char *val)
{
    int fractions = strcmp(flag, "--fractions") == 0;
    o->n_curve_x = 0;
    const char *p = val;
    for (;;) {
        size_t len = strcspn(p, ",");
        char tok[64];
        if (len == 0 || len >= sizeof tok) return rep_usage_error("%s: bad number '%.*s' in '%s'", flag, (int)(len < sizeof tok ? len : sizeof tok - 1), p, val);
        memcpy(tok, p, len);
        tok[len] = '\0';
        double v;
        int pct = fractions && len > 1 && tok[len - 1] == '%';
        if (pct) tok[len - 1] = '\0';
        if (!cs_parse_number(tok, &v)) return rep_usage_error("%s: bad number '%.*s' in '%s'", flag, (int)len, p, val);
        if (pct) v /= 100;
        if (o->n_curve_x >= CS_CURVE_MAX_POINTS) return rep_usage_error("%s: at most %d values", flag, CS_CURVE_MAX_POINTS);
        o->curve_tok[o->n_curve_x] = p;
        o->curve_tok_len[o->n_curve_x] = (int)len;
        o->curve_x[o->n_curve_x++] = v;
        if (p[len] == '\0') break;
        p += len + 1;
    }
    o->curve_list_flag = fractions ? 1 : 2;
    return 0;
}

/* The list's values against its kind: fractions in (0, 1], bins whole 1..CS_BINS_MAX, gamma
 * (kd-tree binning) in (0, 1]. Messages echo the value as the user wrote it. */
static int check_curve_list(const rep_opts *o)
{
    int kd = o->settings.binning == CS_BIN_KDTREE;
    for (size_t i = 0; i < o->n_curve_x; i++) {
        double v = o->curve_x[i];
        int n = o->curve_tok_len[i];
        const char *t = o->curve_tok[i];
        if (o->curve_list_flag == 1) {
            if (!(v > 0 && v <= 1)) return rep_usage_error("--fractions: '%.*s' is not a fraction in (0, 1] (or a percentage)", n, t);
        } else if (kd) {
            if (!(v > 0 && v <= 1)) return rep_usage_error("--bins-list: '%.*s' is not a gamma in (0, 1] (--binning kdtree)", n, t);
        } else if (!(v >= 1 && v <= CS_BINS_MAX && v == floor(v))) {
            return rep_usage_error("--bins-list: '%.*s' is not a whole number of bins between 1 and %d", n, t, CS_BINS_MAX);
        }
    }
    return 0;
}

/* --topk-bars 1,2,3,5,10,full */
static int parse_topk(rep_opts *o, const char *val)
{
    o->n_topk = 0;
    const char *p = val;
    for (;;) {
        size_t len = strcspn(p, ",");
        char tok[16];
        long k = 0;
        if (len == 4 && strncmp(p, "full", 4) == 0) k = 0;
        else {
            if (len == 0 || len >= sizeof tok) return rep_usage_error("--topk-bars: bad k '%.*s' in '%s' (a whole number k >= 1, or full)", (int)(len < sizeof tok ? len : sizeof tok - 1), p, val);
            memcpy(tok, p, len);
            tok[len] = '\0';
            if (!cs_parse_whole(tok, 1, 100000, &k)) return rep_usage_error("--topk-bars: bad k '%s' in '%s' (a whole number k >= 1, or full)", tok, val);
        }
        if (o->n_topk >= sizeof o->topk / sizeof o->topk[0]) return rep_usage_error("--topk-bars: at most %zu values", sizeof o->topk / sizeof o->topk[0]);
        o->topk[o->n_topk++] = (int)k;
        if (p[len] == '\0') break;
        p += len + 1;
    }
    return 0;
}

/* --likert-cuts 0,0.2,0.8,1 */
static int parse_likert_cuts(rep_opts *o, const char *val)
{
    o->n_likert_cuts = 0;
    const char *p = val, *prev = NULL;
    int prev_len = 0;
    for (;;) {
        size_t len = strcspn(p, ",");
        char tok[64];
        double v;
        if (len >= sizeof tok) return rep_usage_error("--likert-cuts: bad number '%.*s' in '%s'", (int)(sizeof tok - 1), p, val);
        memcpy(tok, p, len);
        tok[len] = '\0';
        if (!cs_parse_number(tok, &v)) return rep_usage_error("--likert-cuts: bad number '%s' in '%s'", tok, val);
        if (v < 0 || v > 1) return rep_usage_error("--likert-cuts: '%s' is not in [0, 1]", tok);
        if (o->n_likert_cuts >= CS_LIKERT_MAX + 1) return rep_usage_error("--likert-cuts: at most %d cut points", CS_LIKERT_MAX + 1);
        if (o->n_likert_cuts && !(v > o->likert_cuts[o->n_likert_cuts - 1]))
            return rep_usage_error("--likert-cuts: cut points must increase ('%.*s' then '%s')", prev_len, prev, tok);
        o->likert_cuts[o->n_likert_cuts++] = v;
        prev = p;
        prev_len = (int)len;
        if (p[len] != ',') break;
        p += len + 1;
    }
    if (o->n_likert_cuts < 2) return rep_usage_error("--likert-cuts: need at least 2 cut points, got '%s'", val);
    o->likert = 1;
    return 0;
}

static int apply(rep_opts *o, const char *flag, const char *val)
{
    cs_error err;
    cs_error_clear(&err);
    long l;
    int mr = rep_methods_flag(o, flag, val);   /* --recal, --reference, ... (methods.c) */
    if (mr >= 0) return mr;
    if (strcmp(flag, "--lens") == 0) {
        if (cs_settings_set_lens(&o->settings, val, &err) != CS_OK) return rep_usage_error("%s", err.msg);
    } else if (strcmp(flag, "--bins") == 0) {
        if (cs_settings_set_bins(&o->settings, val, &err) != CS_OK) return rep_usage_error("%s", err.msg);
    } else if (strcmp(flag, "--binning") == 0) {
        if (cs_settings_set_binning(&o->settings, val, &err) != CS_OK) return rep_usage_error("%s", err.msg);
    } else if (strcmp(flag, "--gamma") == 0) {
        if (cs_settings_set_gamma(&o->settings, val, &err) != CS_OK) return rep_usage_error("%s", err.msg);
        o->gamma_given = 1;
    } else if (strcmp(flag, "--sigma") == 0) {
        if (cs_settings_set_sigma(&o->settings, val, &err) != CS_OK) return rep_usage_error("%s", err.msg);
    } else if (strcmp(flag, "--mixture") == 0) {
        if (cs_settings_set_mixture(&o->settings, val, &err) != CS_OK) return rep_usage_error("%s", err.msg);
        o->mixture_given = 1;
    } else if (strcmp(flag, "--distance") == 0) {
        if (cs_settings_set_distance(&o->settings, val, &err) != CS_OK) return rep_usage_error("%s", err.msg);
    } else if (strcmp(flag, "--select") == 0) {
        if (strlen(val) >= sizeof o->settings.select) return rep_usage_error("--select: expression too long");
        strcpy(o->settings.select, val);
        o->select_given = 1;
    } else if (strcmp(flag, "--format") == 0) {
        if (strcmp(val, "text") == 0) o->format = REP_TEXT;
        else if (strcmp(val, "json") == 0) o->format = REP_JSON;
        else if (strcmp(val, "csv") == 0) o->format = REP_CSV;
        else return rep_usage_error("--format: '%s' is not text, json or csv", val);
    } else if (strcmp(flag, "--check") == 0) {
        char msg[256];
        rep_check c;
        if (rep_check_parse(val, &c, msg, sizeof msg)) return rep_usage_error("--check '%s': %s", val, msg);
        rep_check *n = realloc(o->checks, (o->n_checks + 1) * sizeof *n);
        if (!n) return rep_usage_error("out of memory");
        o->checks = n;
        o->checks[o->n_checks++] = c;
    } else if (strcmp(flag, "--sum-tol") == 0) {
        if (cs_parse_sum_tol(val, &o->load.sum_tol, &err) != CS_OK) return rep_usage_error("%s", err.msg);
        o->sum_tol_given = 1;
    } else if (strcmp(flag, "--label-col") == 0) {
        if (!cs_parse_whole(val, 1, 1000000, &l)) return rep_usage_error("--label-col: '%s' is not a column number (1, 2, ...)", val);
        o->load.label_col = (int)l;
        o->label_col_given = 1;
    } else if (strcmp(flag, "--delimiter") == 0) {
        if (strcmp(val, ",") == 0 || strcmp(val, "comma") == 0) o->load.delimiter = ',';
        else if (strcmp(val, ";") == 0 || strcmp(val, "semicolon") == 0) o->load.delimiter = ';';
        else if (strcmp(val, "\t") == 0 || strcmp(val, "tab") == 0 || strcmp(val, "\\t") == 0) o->load.delimiter = '\t';
        else return rep_usage_error("--delimiter: '%s' is not , ; or tab", val);
    } else if (strcmp(flag, "--seed") == 0) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(val, &end, 10);
        if (end == val || *end || errno == ERANGE || val[0] == '-') return rep_usage_error("--seed: '%s' is not a non-negative integer", val);
        o->seed = (uint64_t)v;
        o->seed_given = 1;
    } else if (strcmp(flag, "--threads") == 0) {
        if (cs_parse_threads(val, &o->threads, &err) != CS_OK) return rep_usage_error("%s", err.msg);
        o->threads_given = 1;
    } else if (strcmp(flag, "--ci") == 0) {
        if (cs_parse_resamples("--ci", val, 1, &o->ci_repeats, &err) != CS_OK) return rep_usage_error("%s", err.msg);
    } else if (strcmp(flag, "--ci-method") == 0) {
        int m = cs_ci_method_from_name(val);
        if (m < 0) return rep_usage_error("--ci-method: '%s' is not percentile, basic or bca", val);
        o->ci_method = m;
        o->ci_method_given = 1;
    } else if (strcmp(flag, "--repeats") == 0) {
        if (cs_parse_resamples("--repeats", val, 1, &o->repeats, &err) != CS_OK) return rep_usage_error("%s", err.msg);
    } else if (strcmp(flag, "--curve") == 0) {
        if (strcmp(val, "size") == 0) o->curve = 1;
        else if (strcmp(val, "bins") == 0) o->curve = 2;
        else return rep_usage_error("--curve: '%s' is not size or bins", val);
    } else if (strcmp(flag, "--fractions") == 0 || strcmp(flag, "--bins-list") == 0) {
        return parse_list(o, flag, val);
    } else if (strcmp(flag, "--topk-bars") == 0) {
        return parse_topk(o, val);
    } else if (strcmp(flag, "--compat") == 0) {
        if (strcmp(val, "all") == 0) o->compat = REP_COMPAT_ALL;
        else if ((o->compat = cs_compat_from_name(val)) < 0)
            return rep_usage_error("--compat: '%s' is not all, torchmetrics, torchmetrics-binary, netcal, relplot, verified, robustcal or monai", val);
    } else if (strcmp(flag, "--likert-cuts") == 0) {
        return parse_likert_cuts(o, val);
    } else if (strcmp(flag, "--torch-dtype") == 0) {
        if (strcmp(val, "float32") == 0) o->torch_f64 = 0;
        else if (strcmp(val, "float64") == 0) o->torch_f64 = 1;
        else return rep_usage_error("--torch-dtype: '%s' is not float32 or float64", val);
        o->torch_dtype_given = 1;
    }
    return 0;
}

/* No flag is accepted and then ignored: a flag that would change nothing under the others is
 * a usage error (README "Flags that need another"). Runs after rep_methods_check (--recal
 * implies --compare). */
static int refuse_unused(const rep_opts *o)
{
    int resampled = o->ci_repeats || o->curve || o->compare;
    if (o->seed_given && !resampled)
        return rep_usage_error("--seed needs --ci, --curve, --compare or --recal (nothing else is random)");
    if (o->threads_given && !resampled)
        return rep_usage_error("--threads needs --ci, --curve, --compare or --recal (nothing else runs on worker threads)");
    if (o->gamma_given && o->settings.binning != CS_BIN_KDTREE)
        return rep_usage_error("--gamma needs --binning kdtree (it is the kd-tree's cell size)");
    if (o->label_col_given && !o->load.no_header)
        return rep_usage_error("--label-col needs --no-header (with a header the label column is found by its name)");
    if (o->sum_tol_given && o->load.renormalize)
        return rep_usage_error("--sum-tol and --renormalize: --renormalize divides every row by its sum, so no tolerance applies; give one");
    if (o->torch_dtype_given && o->compat != REP_COMPAT_ALL && o->compat != CS_COMPAT_TORCHMETRICS
        && o->compat != CS_COMPAT_TORCHMETRICS_BINARY)
        return rep_usage_error("--torch-dtype needs --compat torchmetrics, torchmetrics-binary or all (only torchmetrics gets torch tensors)");
    if (o->ascii && !o->plot)
        return rep_usage_error("--ascii needs --plot (only the plot draws glyphs)");
    if (o->format == REP_CSV && o->curve)
        return rep_usage_error("--curve has no CSV form (one row per file); use --format text or json");
    if (o->format == REP_CSV && o->compare) {
        /* --format csv with --compare is the methods table, one row per method */
        const char *lost = o->n_topk ? "--topk-bars" : o->likert ? (o->n_likert_cuts ? "--likert-cuts" : "--likert")
                         : o->compat >= 0 ? "--compat" : NULL;
        if (lost)
            return rep_usage_error("%s is not in --format csv with --compare (one row per method); use --format text or json", lost);
    }
    return 0;
}

int rep_parse_args(int argc, char **argv, rep_opts *o)
{
    memset(o, 0, sizeof *o);
    cs_settings_default(&o->settings);
    cs_load_options_default(&o->load);
    o->format = REP_TEXT;
    o->compat = -1;
    o->files = calloc((size_t)argc + 1, sizeof *o->files);
    if (!o->files) return rep_usage_error("out of memory");

    int only_files = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (only_files || a[0] != '-' || strcmp(a, "-") == 0) { o->files[o->n_files++] = a; continue; }
        if (strcmp(a, "--") == 0) { only_files = 1; continue; }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) { fputs(usage_text, stdout); fputs(usage_text2, stdout); fputs(usage_text3, stdout); return REP_EXIT_HELP; }
        if (strcmp(a, "--version") == 0) { puts("calscope " CALSCOPE_VERSION); return REP_EXIT_HELP; }

        char flag[64];
        const char *val = NULL, *eq = strchr(a, '=');
        size_t fl = eq ? (size_t)(eq - a) : strlen(a);
        if (fl >= sizeof flag) return rep_usage_error("unknown option '%s'", a);
        memcpy(flag, a, fl);
        flag[fl] = '\0';
        if (eq) val = eq + 1;

        if (strcmp(flag, "--plot") == 0 || strcmp(flag, "--ascii") == 0 || strcmp(flag, "--renormalize") == 0
            || strcmp(flag, "--skip-bad-rows") == 0 || strcmp(flag, "--no-header") == 0
            || strcmp(flag, "--replace") == 0 || strcmp(flag, "--compare") == 0
            || strcmp(flag, "--likert") == 0) {
            if (val) return rep_usage_error("%s takes no value", flag);
            if (strcmp(flag, "--replace") == 0) o->replace = 1;
            else if (strcmp(flag, "--likert") == 0) o->likert = 1;
            else if (strcmp(flag, "--compare") == 0) o->compare = 1;
            else if (flag[2] == 'p') o->plot = 1;
            else if (flag[2] == 'a') o->ascii = 1;
            else if (flag[2] == 'r') o->load.renormalize = 1;
            else if (flag[2] == 's') o->load.skip_bad_rows = 1;
            else o->load.no_header = 1;
            continue;
        }
        if (!in_list(valued, flag)) return rep_usage_error("unknown option '%s'", flag);
        if (!val) {
            if (i + 1 >= argc) return rep_usage_error("%s needs a value", flag);
            val = argv[++i];
        }
        int rc = apply(o, flag, val);
        if (rc) return rc;
    }
    if (o->n_files == 0) return rep_usage_error("no FILE given");
    if (o->curve_list_flag == 1 && o->curve != 1) return rep_usage_error("--fractions needs --curve size");
    if (o->curve_list_flag == 2 && o->curve != 2) return rep_usage_error("--bins-list needs --curve bins");
    if (o->replace && o->curve != 1) return rep_usage_error("--replace needs --curve size");
    if (check_curve_list(o)) return 2;
    if (rep_methods_check(o)) return 2;   /* --compare file counts, --recal (methods.c) */
    /* after rep_methods_check: --recal implies --compare */
    if (o->repeats && !o->curve && !o->compare) return rep_usage_error("--repeats needs --curve, --compare or --recal");
    if (o->ci_method_given && !o->ci_repeats && !o->compare)
        return rep_usage_error("--ci-method needs --ci, --compare or --recal");
    if (o->compat >= 0 && o->settings.lens != CS_LENS_TOP1 && o->settings.lens != CS_LENS_CLASSWISE)
        return rep_usage_error("--compat needs --lens top1 or classwise (the libraries measure nothing else)");
    if (o->compat >= 0 && o->settings.binning == CS_BIN_KDTREE)
        return rep_usage_error("--compat needs --binning uniform or mass (no library has kd-tree bins)");
    if (o->likert && (o->settings.lens == CS_LENS_CLASSWISE || o->settings.lens == CS_LENS_GROUP))
        return rep_usage_error("--likert: the classwise and group lenses have no single first coordinate; "
                           "use top1, topk, class or full");
    return refuse_unused(o);
}
