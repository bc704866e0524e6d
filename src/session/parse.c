/* argv for both front ends, through the flag table (flags.h). Hand-written rather than
 * getopt_long so that `--flag=value` and `--flag value` both work, options may follow files,
 * and every bad value gets a message naming the flag. Then the rules between flags: no flag is
 * accepted and then ignored (docs/flags.md, "No flag is accepted and then ignored"). */
#include "session/flags.h"

#include "calscope/follow.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "calscope/catalogue.h"
#include "calscope/reduce.h"
#include "calscope/version.h"

int ss_usage_error(unsigned front, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("calscope: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs(front == SS_DASH ? "\nTry `calscope --help`.\n" : front == SS_REDUCE ? "\nTry `calscope reduce --help`.\n"
          : "\nTry `calscope report --help`.\n", stderr);
    return 2;
}

const char *ss_mixture_unused(int mixture_given, int any_loaded, int any_tta)
{
    return mixture_given && any_loaded && !any_tta
        ? "--mixture needs an id/tta long file (it only changes RECE-M); no FILE has id and tta columns"
        : NULL;
}

const char *ss_seg_unused(const ss_opts *o, int any_loaded, int any_manifest)
{
    if (!any_loaded || any_manifest) return NULL;
    return o->label_values ? "--label-values maps the channels of volumes; no FILE is a manifest (case,probs,labels)"
         : o->regions ? "--regions maps the channels of volumes; no FILE is a manifest (case,probs,labels)"
         : o->fine ? "--fine sets the statistics of volumes; no FILE is a manifest (case,probs,labels)"
         : o->affine_tol_given ? "--affine-tol checks volumes; no FILE is a manifest (case,probs,labels)"
         : NULL;   /* --prob-suffix: refused by the loader, which knows a folder when it sees one */
}

const char *ss_rows_unused(const ss_opts *o, int any_loaded, int any_prob_rows)
{
    if (!any_loaded || any_prob_rows) return NULL;
    return o->load.renormalize
        ? "--renormalize rescales rows of class probabilities; no FILE has them (logits, a binary p column and statistics files have no row to rescale)"
        : o->sum_tol_given
        ? "--sum-tol checks that rows of class probabilities sum to 1; no FILE has them (logits, a binary p column and statistics files have no row sum to check)"
        : NULL;
}

/* Why metric id has no number here: "n/a on --lens L (its catalogue `only`)" when the lens
 * gives it none, else "n/a on statistics files (...)". Into buf; returns buf. */
static const char *metric_na(const ss_opts *o, int id, char *buf, size_t size)
{
    char lens[CS_SPEC_MAX + 16];
    if (cs_metric_lens_gives(id, &o->settings)) {
        snprintf(buf, size, "n/a on statistics files (not exact from statistics)");
    } else {
        cs_settings_lens_name(&o->settings, lens, sizeof lens);
        snprintf(buf, size, "n/a on --lens %s (%s)", lens, cs_metric_info_of(id)->only);
    }
    return buf;
}

const char *ss_sigma_unused(const ss_opts *o, int any_loaded, int any_rows, int any_tta, char *buf, size_t size)
{
    char na[CS_SPEC_MAX + 96];
    if (!any_loaded) return NULL;
    if (o->sigma_given && !any_tta && !(any_rows && cs_metric_lens_gives(CS_METRIC_RECE_G, &o->settings))) {
        snprintf(buf, size, "--sigma changes RECE-G and RECE-M only: RECE-G is %s, and RECE-M needs an id/tta "
                 "long file, which no FILE is", metric_na(o, CS_METRIC_RECE_G, na, sizeof na));
        return buf;
    }
    if (o->smece_sigma_given && !(any_rows && cs_metric_lens_gives(CS_METRIC_SMECE, &o->settings))) {
        snprintf(buf, size, "--smece-sigma changes smECE only, which is %s", metric_na(o, CS_METRIC_SMECE, na, sizeof na));
        return buf;
    }
    return NULL;
}

void ss_opts_init(ss_opts *o, unsigned front)
{
    ss_check_fn keep = o->check_fn;
    memset(o, 0, sizeof *o);
    o->front = front;
    o->check_fn = keep;
    cs_settings_default(&o->settings);
    cs_load_options_default(&o->load);
    o->format = SS_FORMAT_TEXT;
    o->compat = -1;
    o->affine_tol = CS_REDUCE_AFFINE_TOL_DEFAULT;
    o->memory_mb = -1;
    o->settle = CS_FOLLOW_SETTLE_DEFAULT;
}

void ss_follow_options(const ss_opts *o, cs_follow_options *fo)
{
    cs_follow_options_default(fo);
    fo->order = o->follow_by_mtime ? CS_FOLLOW_BY_MTIME : CS_FOLLOW_BY_NAME;
    if (o->settle_given) fo->settle = o->settle;
    fo->labels = o->load.labels;
}

void ss_opts_free(ss_opts *o)
{
    free(o->checks);
    free(o->check_text);
    free(o->files);
    o->checks = NULL;
    o->check_text = NULL;
    o->files = NULL;
}

/* The list's values against its kind: fractions in (0, 1], bins whole 1..CS_BINS_MAX, gamma
 * (kd-tree binning) in (0, 1]. Messages echo the value as the user wrote it. */
static int check_curve_list(const ss_opts *o)
{
    int kd = o->settings.binning == CS_BIN_KDTREE;
    for (size_t i = 0; i < o->n_curve_x; i++) {
        double v = o->curve_x[i];
        int n = o->curve_tok_len[i];
        const char *t = o->curve_tok[i];
        if (o->curve_list_flag == 1) {
            if (!(v > 0 && v <= 1)) return ss_usage_error(o->front, "--fractions: '%.*s' is not a fraction in (0, 1] (or a percentage)", n, t);
        } else if (kd) {
            if (!(v > 0 && v <= 1)) return ss_usage_error(o->front, "--bins-list: '%.*s' is not a gamma in (0, 1] (--binning kdtree)", n, t);
        } else if (!(v >= 1 && v <= CS_BINS_MAX && v == floor(v))) {
            return ss_usage_error(o->front, "--bins-list: '%.*s' is not a whole number of bins between 1 and %d", n, t, CS_BINS_MAX);
        }
    }
    return 0;
}

/* The methods table: --recal implies --compare; at least two methods. */
static int check_methods(ss_opts *o)
{
    ss_methods_opts *mo = &o->methods;
    int recal_flags = mo->folds || mo->bins || mo->max_iter || mo->split > 0 || mo->split_column[0];
    if (recal_flags && !mo->n_recal)
        return ss_usage_error(o->front, "--recal-folds, --recal-bins, --recal-max-iter, --recal-split and --recal-split-column need --recal");
    if (mo->split > 0 && mo->split_column[0])
        return ss_usage_error(o->front, "--recal-split and --recal-split-column both choose the fitting rows: give one");
    if (mo->max_iter) {
        int iterative = 0;                     /* only vs, beta, ms and dir fit to an iteration budget */
        for (int i = 0; i < mo->n_recal; i++)
            iterative |= mo->recal[i] == CS_RECAL_VS || mo->recal[i] == CS_RECAL_BETA || mo->recal[i] == CS_RECAL_MS ||
                         mo->recal[i] == CS_RECAL_DIR;
        if (!iterative)
            return ss_usage_error(o->front, "--recal-max-iter: no method in --recal iterates (only vs, beta, ms and dir do)");
    }
    if (mo->bins) {
        int binned = 0;                        /* only hist has bins of its own */
        for (int i = 0; i < mo->n_recal; i++) binned |= mo->recal[i] == CS_RECAL_HIST;
        if (!binned) return ss_usage_error(o->front, "--recal-bins: no method in --recal has bins (only hist does)");
    }
    if (mo->folds && (mo->split_column[0] || mo->split > 0))
        return ss_usage_error(o->front, "--recal-folds: a held-out split (--recal-split, --recal-split-column) fits once on its fitting rows, there are no folds");
    if (mo->split_column[0]) o->load.split_column = mo->split_column;   /* every FILE needs it */
    if (mo->n_recal) o->compare = 1;
    if ((mo->reference || mo->k) && !o->compare) return ss_usage_error(o->front, "--reference and --compare-k need --compare or --recal");
    if (mo->k && o->front == SS_REPORT && o->format == SS_FORMAT_TEXT &&
        !(mo->text_metrics_given && (mo->text_metrics & SS_METRICS_TOPK_BIT)))
        return ss_usage_error(o->front, "--compare-k sets the k of topk_ece, which the text tables do not show: add topk_ece to --metrics, or use --format json or csv");
    if (mo->select_on_given && !o->compare)
        return ss_usage_error(o->front, "--select-on needs --compare or --recal (it says where a comparison's selection is evaluated)");
    if (mo->verdict_metric_given && !o->compare)
        return ss_usage_error(o->front, "--verdict-metric needs --compare or --recal");
    if (mo->text_metrics_given && !o->compare)
        return ss_usage_error(o->front, "--metrics needs --compare or --recal (it chooses the comparison's text columns)");
    if (mo->text_metrics_given && o->format != SS_FORMAT_TEXT)
        return ss_usage_error(o->front, "--metrics chooses the text tables' metrics; JSON and CSV always carry every metric");
    if (mo->select_on_given && !o->select_given)
        return ss_usage_error(o->front, "--select-on needs --select (it says where the selection is evaluated)");
    if (!o->compare) return 0;
    size_t methods = o->n_files + (size_t)mo->n_recal;
    if (methods < 2)
        return ss_usage_error(o->front, "--compare needs two or more files (A and B), or a file and --recal");
    if (mo->reference && (size_t)mo->reference > methods)
        return ss_usage_error(o->front, "--reference %d: there are only %zu methods (files first, then recalibrations)", mo->reference, methods);
    return 0;
}

/* Rules of both front ends: a loading flag that would change nothing. */
static int check_loading(const ss_opts *o)
{
    if (o->label_col_given && !o->load.no_header)
        return ss_usage_error(o->front, "--label-col needs --no-header (with a header the label column is found by its name)");
    if (o->sum_tol_given && o->load.renormalize)
        return ss_usage_error(o->front, "--sum-tol and --renormalize: --renormalize divides every row by its sum, so no tolerance applies; give one");
    return 0;
}

/* --follow's rules: its flags need it, and it needs one JSON line per file. */
static int check_follow(const ss_opts *o)
{
    const char *needs = o->order_given ? "--order" : o->settle_given ? "--settle" : o->idle_exit_given ? "--idle-exit"
                      : o->max_files ? "--max-files" : o->fail_fast ? "--fail-fast" : NULL;
    if (!o->follow) {
        if (needs) return ss_usage_error(o->front, "%s needs --follow DIR", needs);
        if (o->format == SS_FORMAT_NDJSON)
            return ss_usage_error(o->front, "--format ndjson needs --follow DIR (one JSON line per file as it arrives); use --format json");
        return 0;
    }
    if (o->n_files) return ss_usage_error(o->front, "--follow takes its files from the folder: '%s' is one too many", o->files[0]);
    if (o->format != SS_FORMAT_NDJSON)
        return ss_usage_error(o->front, "--follow prints one JSON line per file: it needs --format ndjson");
    if (o->compare || o->methods.n_recal) return ss_usage_error(o->front, "--follow measures each file on its own: --compare and --recal compare files; run them on the files the run wrote");
    if (o->plot) return ss_usage_error(o->front, "--plot: --follow prints JSON lines only");
    const char *vol = o->label_values ? "--label-values" : o->regions ? "--regions" : o->fine ? "--fine"
                    : o->affine_tol_given ? "--affine-tol" : o->probs_dir ? "--probs" : o->prob_suffix ? "--prob-suffix" : NULL;
    if (vol) return ss_usage_error(o->front, "%s: --follow takes prediction files (CSV, .npy, .npz), not segmentation volumes", vol);
    if (o->fail_fast && !o->n_checks) return ss_usage_error(o->front, "--fail-fast needs --check (it ends at the first failed check)");
    return 0;
}

/* The dashboard's --follow: the folder gives the files, --order and --settle need it. */
static int check_dash_follow(const ss_opts *o)
{
    const char *needs = o->order_given ? "--order" : o->settle_given ? "--settle" : NULL;
    if (!o->follow && needs) return ss_usage_error(o->front, "%s needs --follow DIR", needs);
    if (o->follow && o->n_files)
        return ss_usage_error(o->front, "--follow takes its files from the folder: '%s' is one too many", o->files[0]);
    return 0;
}

/* The report's rules between flags. The dashboard has none of these: its keys reach kd-tree
 * binning (so --gamma), curves and comparisons (so --seed, --threads) later. */
static int check_report(ss_opts *o)
{
    if (check_follow(o)) return 2;
    if (o->curve_list_flag == 1 && o->curve != 1) return ss_usage_error(o->front, "--fractions needs --curve size");
    if (o->curve_list_flag == 2 && o->curve != 2) return ss_usage_error(o->front, "--bins-list needs --curve bins");
    if (o->replace && o->curve != 1) return ss_usage_error(o->front, "--replace needs --curve size");
    if (o->true_ece_given && o->curve != 1) return ss_usage_error(o->front, "--true-ece needs --curve size");
    if (o->true_ece_given && (o->settings.lens != CS_LENS_TOP1 || o->settings.distance != CS_DIST_TVD))
        return ss_usage_error(o->front, "--true-ece is a top-1 ECE: it needs --lens top1 and --distance tvd");
    if (check_curve_list(o)) return 2;
    if (check_methods(o)) return 2;
    /* after check_methods: --recal implies --compare */
    if (o->repeats && !o->curve && !o->compare) return ss_usage_error(o->front, "--repeats needs --curve, --compare or --recal");
    if (o->ci_method_given && !o->ci_repeats && !o->compare)
        return ss_usage_error(o->front, "--ci-method needs --ci, --compare or --recal");
    if (o->boot_size_given && !o->ci_repeats && !o->compare)
        return ss_usage_error(o->front, "--boot-size needs --ci, --compare or --recal");
    /* relplot alone measures one class's probability (its smooth and binned ECE of p[C]) */
    if (o->compat >= 0 && o->settings.lens == CS_LENS_CLASS && o->compat != CS_COMPAT_RELPLOT)
        return ss_usage_error(o->front, "--compat with --lens class:C needs --compat relplot (the other libraries measure top1 or classwise only)");
    if (o->compat >= 0 && o->settings.lens != CS_LENS_TOP1 && o->settings.lens != CS_LENS_CLASSWISE &&
        o->settings.lens != CS_LENS_CLASS)
        return ss_usage_error(o->front, "--compat needs --lens top1 or classwise (the libraries measure nothing else)");
    if (o->compat >= 0 && o->settings.binning == CS_BIN_KDTREE)
        return ss_usage_error(o->front, "--compat needs --binning uniform or mass (no library has kd-tree bins)");
    if (o->torch_dtype_given && o->compat != SS_COMPAT_ALL && o->compat != CS_COMPAT_TORCHMETRICS
        && o->compat != CS_COMPAT_TORCHMETRICS_BINARY)
        return ss_usage_error(o->front, "--torch-dtype needs --compat torchmetrics, torchmetrics-binary or all (only torchmetrics gets torch tensors)");
    if (o->likert && (o->settings.lens == CS_LENS_CLASSWISE || o->settings.lens == CS_LENS_GROUP))
        return ss_usage_error(o->front, "--likert: the classwise and group lenses have no single first coordinate; "
                              "use top1, topk, class or full");
    int resampled = o->ci_repeats || o->curve || o->compare;
    if (o->seed_given && !resampled)
        return ss_usage_error(o->front, "--seed needs --ci, --curve, --compare or --recal (nothing else is random)");
    if (o->threads_given && !resampled)
        return ss_usage_error(o->front, "--threads needs --ci, --curve, --compare or --recal (nothing else runs on worker threads)");
    if (o->gamma_given && o->settings.binning != CS_BIN_KDTREE)
        return ss_usage_error(o->front, "--gamma needs --binning kdtree (it is the kd-tree's cell size)");
    if (check_loading(o)) return 2;
    char why[1024];   /* what the lens alone decides: before any file is read (and with --follow) */
    if (ss_sigma_unused(o, 1, 1, 1, why, sizeof why)) return ss_usage_error(o->front, "%s", why);
    if (o->ascii && !o->plot)
        return ss_usage_error(o->front, "--ascii needs --plot (only the plot draws glyphs)");
    if (o->format == SS_FORMAT_CSV && o->curve)
        return ss_usage_error(o->front, "--curve has no CSV form (one row per file); use --format text or json");
    if (o->format == SS_FORMAT_CSV && o->compare) {
        /* --format csv with --compare is the methods table, one row per method */
        const char *lost = o->n_topk ? "--topk-bars" : o->likert ? (o->n_likert_cuts ? "--likert-cuts" : "--likert")
                         : o->compat >= 0 ? "--compat" : NULL;
        if (lost)
            return ss_usage_error(o->front, "%s is not in --format csv with --compare (one row per method); use --format text or json", lost);
    }
    return 0;
}

/* `calscope reduce`'s rules: one source of cases, one mapping, no flag that changes nothing. */
static int check_reduce(const ss_opts *o)
{
    unsigned f = o->front;
    if (o->merge) {
        const char *lost = o->fine ? "--fine" : o->label_values ? "--label-values" : o->regions ? "--regions"
                         : o->probs_dir ? "--probs" : o->load.labels ? "--labels" : o->prob_suffix ? "--prob-suffix"
                         : o->sum_tol_given ? "--sum-tol" : o->affine_tol_given ? "--affine-tol"
                         : o->threads_given ? "--threads" : NULL;
        if (lost) return ss_usage_error(f, "--merge sums statistics files as they are: %s changes nothing there", lost);
        if (o->n_files == 0) return ss_usage_error(f, "--merge needs the statistics files to sum");
        return 0;
    }
    if (o->label_values && o->regions)
        return ss_usage_error(f, "--label-values and --regions both map the channels: give one");
    if (o->regions && o->sum_tol_given)
        return ss_usage_error(f, "--sum-tol: with --regions the channels are independent sigmoids, which need not sum to 1");
    if (o->probs_dir || o->load.labels) {
        if (!o->probs_dir || !o->load.labels) return ss_usage_error(f, "--probs DIR and --labels DIR go together");
        if (o->n_files) return ss_usage_error(f, "'%s' and --probs/--labels both give the cases: give one", o->files[0]);
        return 0;
    }
    if (o->prob_suffix) return ss_usage_error(f, "--prob-suffix needs --probs DIR and --labels DIR");
    if (o->n_files == 0) return ss_usage_error(f, "no MANIFEST given (or --probs DIR --labels DIR)");
    if (o->n_files > 1)
        return ss_usage_error(f, "one MANIFEST at a time ('%s', '%s'); --merge sums statistics files", o->files[0], o->files[1]);
    return 0;
}

/* A flag given again that the table does not mark repeatable. */
static int flag_twice(unsigned front, const ss_flag *f)
{
    if (strcmp(f->name, "--select") == 0)
        return ss_usage_error(front, "--select given twice (write one expression: A and B)");
    return ss_usage_error(front, "%s given twice", f->name);
}

/* A FILE argument; the dashboard holds at most SS_DASH_MAX_FILES and reads stdin once. */
static int add_file(ss_opts *o, const char *a)
{
    if (o->front == SS_DASH) {
        if (o->n_files == SS_DASH_MAX_FILES) return ss_usage_error(o->front, "too many files (at most %d)", SS_DASH_MAX_FILES);
        for (size_t f = 0; f < o->n_files && strcmp(a, "-") == 0; f++)
            if (strcmp(o->files[f], "-") == 0) return ss_usage_error(o->front, "-: standard input can be read only once");
    }
    o->files[o->n_files++] = a;
    return 0;
}

int ss_parse(int argc, char **argv, unsigned front, ss_opts *o)
{
    ss_opts_init(o, front);
    o->files = calloc((size_t)argc + 1, sizeof *o->files);
    if (!o->files) return ss_usage_error(front, "out of memory");

    /* a flag the table does not mark repeatable is given once: a second value would silently
     * replace the first (--select 'A' --select 'B' measures B only) */
    size_t n_table;
    const ss_flag *table = ss_flags(&n_table);
    unsigned char given[SS_FLAGS_MAX] = { 0 };
    (void)n_table;   /* at most SS_FLAGS_MAX (flags.c asserts it) */
    int only_files = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (only_files || a[0] != '-' || strcmp(a, "-") == 0) {
            if (add_file(o, a)) return 2;
            continue;
        }
        if (strcmp(a, "--") == 0) { only_files = 1; continue; }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) { ss_help(stdout, front); return SS_EXIT_HELP; }
        if (strcmp(a, "--version") == 0) { puts("calscope " CALSCOPE_VERSION); return SS_EXIT_HELP; }

        char flag[64];
        const char *val = NULL, *eq = strchr(a, '=');
        size_t fl = eq ? (size_t)(eq - a) : strlen(a);
        if (fl >= sizeof flag) return ss_usage_error(front, "unknown option '%s'", a);
        memcpy(flag, a, fl);
        flag[fl] = '\0';
        if (eq) val = eq + 1;
        if (strcmp(flag, "--no-colour") == 0) strcpy(flag, "--no-color");   /* either spelling */

        const ss_flag *f = ss_flag_find(flag);
        if (!f || !f->parse || !(f->fronts & front)) return ss_usage_error(front, "unknown option '%s'", flag);
        if (!f->metavar) {
            if (val) return ss_usage_error(front, "%s takes no value", flag);
        } else if (!val) {
            if (i + 1 >= argc) return ss_usage_error(front, "%s needs a value", flag);
            val = argv[++i];
        }
        if (!f->repeatable && given[f - table]++) return flag_twice(front, f);
        int rc = f->parse(o, val);
        if (rc) return rc;
    }
    if (front == SS_REDUCE) return check_reduce(o);
    /* --probs DIR --labels DIR: the folder of probabilities is one more FILE (a folder FILE with
     * --labels DIR is a folder pair, which is how the `:` line writes it) */
    if (o->probs_dir) {
        if (!o->load.labels) return ss_usage_error(front, "--probs DIR needs --labels DIR (the folder of label maps)");
        if (add_file(o, o->probs_dir)) return 2;
        o->probs_dir = NULL;
    }
    if (o->n_files == 0 && !o->follow) return ss_usage_error(front, "no FILE given");
    o->load.seg_prob_suffix = o->prob_suffix;
    /* a manifest among the files is reduced when loaded, with the volume flags */
    if (o->label_values && o->regions)
        return ss_usage_error(front, "--label-values and --regions both map the channels: give one");
    o->load.seg_label_values = o->label_values;
    o->load.seg_regions = o->regions;
    o->load.seg_fine = o->fine;
    if (o->affine_tol_given) o->load.seg_affine_tol = o->affine_tol;
    if (o->threads_given) o->load.seg_threads = o->threads;
    if (front == SS_REPORT) return check_report(o);
    if (check_dash_follow(o)) return 2;
    return check_loading(o);
}
