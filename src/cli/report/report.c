/* `calscope report`: parse options, load and measure each FILE in turn, print the chosen
 * format, then apply the --check gates.
 *
 * Several files: each is loaded and measured on its own; a rejected file is reported on
 * stderr (and under "errors" in JSON) while the others are still printed, and the exit status
 * is then 3 (2 if the settings do not apply to a file, e.g. an unknown class name; input errors
 * win over usage errors, both over failed checks). Each dataset is freed as soon as it has
 * been measured, so many large files do not pile up in memory. */
#include "cli/report/report.h"

#include <stdlib.h>
#include <string.h>

#include "calscope/resample.h"
#include "calscope/measure.h"
#include "calscope/segmeasure.h"
#include "calscope/likert.h"
#include "calscope/segstats.h"
#include "calscope/summarize.h"
#include "calscope/load.h"
#include "calscope/topk.h"
#include "cli/report/rep.h"

/* Records an engine failure for f: usage (2) or input (3) as the status says. */
static void fail(rep_file *f, const cs_error *err)
{
    if (err->code == CS_EUSAGE) f->usage_error = 1;   /* wins over loaded == 0 (report_main) */
    else f->loaded = 0;
    if (strncmp(err->msg, f->path, strlen(f->path)) == 0) snprintf(f->error, sizeof f->error, "%s", err->msg);
    else snprintf(f->error, sizeof f->error, "%s: %s", f->path, err->msg);
    fprintf(stderr, "calscope: %s\n", f->error);
}

int rep_topk_used(int k, size_t classes)
{
    return k > 0 && (size_t)k < classes ? k : (int)classes;
}

/* The parts of a measurement the options ask for (CS_MEASURE_*): the per-case table always. */
static unsigned parts_asked(const rep_opts *o)
{
    unsigned parts = CS_MEASURE_CASES;
    if (o->ci_repeats) parts |= CS_MEASURE_CI;
    if (o->curve) parts |= CS_MEASURE_CURVE;
    if (o->n_topk) parts |= CS_MEASURE_TOPK;
    if (o->likert) parts |= CS_MEASURE_LIKERT;
    return parts;
}

/* What cs_measure is asked for under the report's flags: the values always; the per-case
 * metrics of a file with a case column; --ci, --curve, --topk-bars, --likert. topk (32 ints)
 * receives each --topk-bars k as used on d (rep_topk_used), once, in the order given:
 * 10,full on a 10-class file is one bar. */
static cs_measure_request request(const rep_opts *o, const cs_dataset *d, int *topk)
{
    cs_measure_request q;
    memset(&q, 0, sizeof q);
    q.parts = parts_asked(o);
    q.want = CS_WANT_ALL;
    q.seed = o->seed;
    if (o->ci_repeats) {
        q.ci_repeats = o->ci_repeats;
        q.ci_method = (cs_ci_method)o->ci_method;
        q.ci_metrics = CS_METRICS_DEFAULT;
    }
    if (o->curve) {
        q.curve_kind = o->curve == 1 ? CS_CURVE_SIZE : CS_CURVE_BINS;
        if (o->curve == 1) cs_curve_options_size_default(&q.curve);
        else cs_curve_options_bins_default(&q.curve, o->settings.binning == CS_BIN_KDTREE);
        q.curve.seed = o->seed;
        if (o->repeats) q.curve.repeats = o->repeats;
        if (o->replace) q.curve.replace = 1;
        if (o->n_curve_x) {
            q.curve.n_points = o->n_curve_x;
            memcpy(q.curve.x, o->curve_x, o->n_curve_x * sizeof q.curve.x[0]);
        } else if (o->curve == 2 && d->stats) {
            cs_segstats_bins_list(d->stats, &q.curve);   /* the M that are exact: divisors of F */
        }
    }
    if (o->n_topk) {
        for (size_t i = 0; i < o->n_topk; i++) {
            int k = rep_topk_used(o->topk[i], d->k);
            size_t j = 0;
            while (j < q.n_topk && topk[j] != k) j++;
            if (j == q.n_topk) topk[q.n_topk++] = k;
        }
        q.topk = topk;
    }
    if (o->likert) {
        q.likert_cuts = o->n_likert_cuts ? o->likert_cuts : NULL;
        q.n_likert_cuts = o->n_likert_cuts;
    }
    return q;
}

/* --compat: every library's numbers for this file; with one NAME its numbers replace ece,
 * ace, mce, aece, sce and rece_g (so --check and every format follow that library). */
static void compat_run(const rep_opts *o, rep_file *f, const cs_dataset *d)
{
    if (o->compat < 0) return;
    cs_error err;
    cs_error_clear(&err);
    unsigned mask = o->compat == REP_COMPAT_ALL ? CS_COMPAT_ALL_MASK : 1u << o->compat;
    if (o->torch_f64) mask |= CS_COMPAT_TORCH_F64;
    cs_status st = cs_compat_run(d, &o->settings, mask, &f->compat, &err);
    if (st != CS_OK) {
        if (st != CS_EEMPTY) fail(f, &err);
        return;
    }
    f->has_compat = 1;
    if (o->compat != REP_COMPAT_ALL) {
        const cs_compat_lib_result *l = &f->compat.lib[o->compat];
        cs_compat_apply(&f->compat, (cs_compat_lib)o->compat, &f->m.result);
        if (!l->applicable)
            fprintf(stderr, "calscope: %s: --compat %s: %s\n", f->path, cs_compat_name(l->lib), l->semantics);
    }
}

/* A summary's values into f, as a measurement of all samples (calscope/summarize.h). */
static void take_summary(rep_file *f, cs_summary *sm)
{
    f->loaded = 1;
    f->rows = sm->rows;
    f->classes = sm->classes;
    f->samples = sm->rows;
    f->m.selected = sm->rows;
    f->m.evaluated = 1;
    f->m.result = sm->result;
    memset(&sm->result, 0, sizeof sm->result);
    cs_summary_free(sm);
}

/* Loads one file: its summary when the report reads nothing of its rows itself after
 * measuring them (--compare keeps them for the methods table, --compat hands them to each
 * library) and the engine finds that the parts asked for need only the sums; else the
 * dataset. Returns the dataset to measure, or NULL: summarized into f, or refused (f says
 * why). */
static cs_dataset *load(const rep_opts *o, rep_file *f, int keep)
{
    cs_error err;
    cs_error_clear(&err);
    cs_dataset *d = NULL;
    if (keep || o->compat >= 0) {
        d = cs_load_file(f->path, &o->load, &f->sum, &err);
    } else {
        cs_summary sm;
        cs_run run = { .threads = o->threads, .cancel = NULL, .progress_ppm = NULL };
        cs_status st = cs_summarize_file(f->path, &o->load, &o->settings, parts_asked(o), &run,
                                         &sm, &d, &f->sum, &err);
        if (st == CS_OK && !d) {
            take_summary(f, &sm);
            return NULL;
        }
    }
    if (!d) {
        if (!err.msg[0]) snprintf(err.msg, sizeof err.msg, "cannot load the file");
        /* the loader's usage errors (options that cannot apply to this file) stay usage errors */
        if (err.code != CS_EUSAGE) err.code = CS_EINPUT;
        fail(f, &err);
    }
    return d;
}

/* Loads and measures one file. Returns the dataset when keep is set (for --compare), else
 * frees it and returns NULL. */
static cs_dataset *measure(const rep_opts *o, rep_file *f, int keep)
{
    cs_dataset *d = load(o, f, keep);
    if (!d) return NULL;
    f->loaded = 1;
    /* without --compare nothing pairs the rows: their line numbers go */
    if (!keep) cs_dataset_drop_lines(d);
    f->rows = d->n;
    f->classes = d->k;
    f->samples = d->n_samples;
    f->tta = d->id && d->tta;
    if (d->stats) {
        f->stats_fine = d->stats->fine;
        f->stats_regions = d->stats->kind == CS_SEG_REGIONS;
        f->stats_cases = d->stats->n_cases;
    }

    cs_error err;
    cs_error_clear(&err);
    int topk[CS_MEASURE_MAX_TOPK];
    cs_measure_request q = request(o, d, topk);
    cs_run run = { .threads = o->threads, .cancel = NULL, .progress_ppm = NULL };
    cs_status st = cs_measure(d, &o->settings, &q, &run, &f->m, &err);
    if (st == CS_EEMPTY && !f->m.evaluated) {
        fprintf(stderr, "calscope: %s: the selection '%s' kept no sample\n", f->path, o->settings.select);
    } else if (st != CS_OK) {
        fail(f, &err);
    }
    /* a part that failed after the values leaves them measured: --compat still runs */
    if (f->m.evaluated) compat_run(o, f, d);
    if (keep && f->loaded && !f->usage_error) return d;
    cs_dataset_free(d);
    return NULL;
}

void rep_measure_file(const rep_opts *o, rep_file *f)
{
    cs_dataset_free(measure(o, f, 0));
}

void rep_file_release(rep_file *f)
{
    cs_measurement_free(&f->m);
    cs_load_summary_free(&f->sum);
    cs_compat_report_free(&f->compat);
}

/* The paired comparison of the first two files, into cmp. The methods table's row for B
 * resampled these very pairs: its comparison is the table's (one computation, one answer). */
static void pair_compare(const rep_opts *o, cs_dataset *const *kept, const rep_methods *mt, int stats_pair,
                         rep_compare *cmp)
{
    cs_error err;
    cs_error_clear(&err);
    cs_run run = { .threads = o->threads, .cancel = NULL, .progress_ppm = NULL };
    const cs_compare *done = rep_methods_pair_of(mt, kept[0], kept[1]);
    cs_status st = CS_OK;
    if (done) cmp->res = *done;
    else st = cs_compare_run(kept[0], kept[1], &o->settings, CS_METRICS_DEFAULT,
                             o->repeats ? o->repeats : CS_COMPARE_REPEATS, o->seed, &run, &cmp->res, &err);
    if (st == CS_OK) {
        cmp->done = 1;
        return;
    }
    /* two statistics files have no methods table to have said it; otherwise the table's row
     * for B failed the same way and was reported */
    if (stats_pair) fprintf(stderr, "calscope: %s\n", err.msg);
    cmp->status = st == CS_EUSAGE ? 2 : st == CS_EEMPTY ? 0 : 3;
}

/* --compare: the methods table (returned; NULL without one) and the two-file comparison in
 * cmp. Two statistics files get the paired comparison over their cases only (there are no
 * rows for the methods table to recalibrate or profile). */
static rep_methods *compare_files(const rep_opts *o, cs_dataset *const *kept, const rep_file *files,
                                  rep_compare *cmp, int *mt_status)
{
    int stats_pair = o->compare && o->n_files == 2 && kept[0] && kept[1] && kept[0]->stats && kept[1]->stats;
    rep_methods *mt = o->compare && !stats_pair ? rep_methods_run(o, kept, o->files, o->n_files, mt_status, &cmp->pair) : NULL;
    cmp->methods = mt;
    cmp->by_case = stats_pair;
    cmp->verdict_metric = o->methods.verdict_metric_given ? o->methods.verdict_metric : CS_METRIC_ECE;
    cmp->text_metrics = rep_text_metrics(&o->methods);
    cmp->bins = cs_too_few_bins(&o->settings);
    /* the two-file table only when the methods table could be built (the files pair): a
     * failure was said once there */
    if (stats_pair || (mt && !rep_methods_multi(mt) && !rep_methods_no_pairs(mt) && kept[0] && kept[1]))
        pair_compare(o, kept, mt, stats_pair, cmp);
    cmp->a = files[0].path;
    cmp->b = o->n_files > 1 ? files[1].path : "";
    return mt;
}

/* --mixture without an id/tta file, segmentation flags without a segmentation input,
 * --renormalize / --sum-tol without rows of probabilities, --sigma / --smece-sigma where their
 * metrics are n/a: the flag table's rules (ss_mixture_unused, ss_seg_unused, ss_rows_unused,
 * ss_sigma_unused) said as a usage error, and then no output. Returns 1 when a flag went
 * unused. */
static int flag_unused(const rep_opts *o, const rep_file *files)
{
    int loaded = 0, tta = 0, manifest = 0, prob_rows = 0, rows = 0;
    for (size_t i = 0; i < o->n_files; i++) {
        loaded |= files[i].loaded;
        tta |= files[i].loaded && files[i].tta;
        manifest |= files[i].sum.manifest_cases > 0;
        prob_rows |= files[i].loaded && files[i].sum.prob_rows;
        rows |= files[i].loaded && !files[i].stats_fine;
    }
    char buf[1024];
    const char *why = ss_mixture_unused(o->mixture_given, loaded, tta);
    if (!why) why = ss_seg_unused(o, loaded, manifest);
    if (!why) why = ss_rows_unused(o, loaded, prob_rows);
    if (!why) why = ss_sigma_unused(o, loaded, rows, tta, buf, sizeof buf);
    return why ? rep_usage_error("%s", why) != 0 : 0;
}

static void print_text(const rep_opts *o, rep_file *files, const rep_compare *cmp, const rep_methods *mt,
                       const ch_glyphs *g)
{
    for (size_t i = 0; i < o->n_files; i++) {
        rep_out_text(stdout, o, &files[i], 1);
        if (o->plot && files[i].loaded && !files[i].usage_error) rep_out_plot(stdout, o, &files[i], g);
    }
    if (o->compare) rep_compare_verdict_text(stdout, cmp);   /* the answer first */
    rep_methods_selection_text(stdout, mt);   /* which samples every number below is on */
    if (o->compare && !rep_methods_multi(mt)) rep_out_compare_text(stdout, cmp);
    if (mt) rep_methods_text(stdout, mt);
}

/* The chosen format on stdout; machine formats keep stdout parseable: their plots go to
 * stderr. */
static void print_report(const rep_opts *o, rep_file *files, rep_compare *cmp, const rep_methods *mt)
{
    const ch_glyphs *g = ch_glyphs_pick(o->ascii);
    switch ((int)o->format) {
    case REP_JSON: rep_out_json(stdout, o, files, o->n_files, o->compare ? cmp : NULL); break;
    case REP_CSV:
        if (mt) rep_methods_csv(stdout, mt);   /* --compare: one row per method instead */
        else rep_out_csv(stdout, o, files, o->n_files);
        break;
    case REP_TEXT: print_text(o, files, cmp, mt, g); break;
    }
    if (o->plot && o->format != REP_TEXT)
        for (size_t i = 0; i < o->n_files; i++)
            if (files[i].loaded && !files[i].usage_error) rep_out_plot(stderr, o, &files[i], g);
}

/* Input errors (3) win over usage errors (2), both over failed checks (1). */
static int exit_status(const rep_opts *o, const rep_file *files, int unused, size_t failed, const rep_compare *cmp,
                       int mt_status)
{
    int input_err = 0, usage_err = unused;
    for (size_t i = 0; i < o->n_files; i++) {
        if (files[i].usage_error) usage_err = 1;
        else if (!files[i].loaded) input_err = 1;
    }
    if (input_err || cmp->status == 3 || mt_status == 3) return 3;
    if (usage_err || cmp->status == 2 || mt_status == 2) return 2;
    return failed ? 1 : 0;
}

/* Measures every file; --compare keeps every dataset in kept until the output is written
 * (the methods table reads them). */
static void measure_all(const rep_opts *o, rep_file *files, cs_dataset **kept)
{
    for (size_t i = 0; i < o->n_files; i++) {
        files[i].path = o->files[i];
        cs_dataset *d = measure(o, &files[i], o->compare);
        if (o->compare) kept[i] = d;
        else cs_dataset_free(d);
    }
}

/* Runs the report once its files and kept arrays exist; frees what it measured. */
static int report_files(const rep_opts *o, rep_file *files, cs_dataset **kept)
{
    measure_all(o, files, kept);
    rep_compare cmp = { 0 };
    int mt_status = 0;
    rep_methods *mt = compare_files(o, kept, files, &cmp, &mt_status);
    int unused = flag_unused(o, files);
    if (!unused) print_report(o, files, &cmp, mt);
    fflush(stdout);
    size_t failed = unused ? 0 : rep_checks_run(o, files, o->n_files);
    int rc = exit_status(o, files, unused, failed, &cmp, mt_status);
    for (size_t i = 0; i < o->n_files; i++) rep_file_release(&files[i]);
    /* a write error on stdout or stderr is reported by main (exit 3) */
    rep_methods_free(mt);
    for (size_t i = 0; i < o->n_files; i++) cs_dataset_free(kept[i]);
    return rc;
}

int report_main(int argc, char **argv)
{
    rep_opts o;
    int rc = rep_parse_args(argc, argv, &o);
    if (rc) {
        rep_opts_free(&o);
        return rc == REP_EXIT_HELP ? 0 : rc;
    }
    if (o.follow) {   /* a training run's folder, file by file (follow.c) */
        rc = rep_follow_main(&o);
        rep_opts_free(&o);
        return rc;
    }
    rep_file *files = calloc(o.n_files, sizeof *files);
    cs_dataset **kept = files ? calloc(o.n_files + 2, sizeof *kept) : NULL;
    if (!kept) {
        fputs("calscope: out of memory\n", stderr);
        rc = 3;
    } else {
        rc = report_files(&o, files, kept);
    }
    free(kept);
    free(files);
    rep_opts_free(&o);
    return rc;
}
