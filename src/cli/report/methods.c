/* `calscope report --compare` methods table (see methods.h).
 *
 * Rows are methods: the loaded files in argument order, then the recalibrations of the
 * reference file (--recal, in the order given; cross-fitted unless --recal-split or
 * --recal-split-column). Columns are
 * accuracy, ECE, ACE, MCE, AECE, RECE-G, SCE, Brier, NLL, smooth ECE, L2 CE (plug-in and
 * debiased), ECE_sweep and top-k ECE under the report's
 * settings, each with a bootstrap 95 % interval (cs_bootstrap_ci with --ci R, default 200, and
 * --seed: the same numbers a single-file report with the same flags prints) and, for every
 * method but the reference, the paired-bootstrap difference method − reference (cs_compare_run,
 * --repeats R, default 1000) with its interval; the difference is marked when the interval
 * excludes 0. With --recal-split F or --recal-split-column COL every method is measured on the
 * held-out rows only: the recalibrated file's fit mask (held_out_mask) chooses both the rows the
 * recalibrations are fitted on and the samples every method is measured on (cut_common: each
 * file on the partners of those samples, its own split column checked against the mask). */
#include "cli/report/methods.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "calscope/resample.h"
#include "calscope/measure.h"
#include "calscope/methods.h"
#include "calscope/metrics.h"
#include "chart/words.h"
#include "cli/report/rep.h"

/* Table columns: thirteen cs_metric ids, then top-k ECE. */
enum { COL_TOPK = CS_METHODS_COL_TOPK, NCOL = CS_METHODS_NCOL };

/* A method as the report names and builds it; its numbers are the engine's row for it
 * (rep_methods.res.rows[i], read in place). */
typedef struct rep_method {
    char *name;              /* path, or "<path>+ts" (owned) */
    const cs_dataset *d;     /* measured dataset (borrowed file, or owned when own != NULL) */
    const cs_dataset *file;  /* the loaded file it is (NULL for a recalibration) */
    cs_dataset *own;
    int recal;               /* cs_recal_method, or -1 for a file */
    cs_recal_info info;
} rep_method;

/* A recalibration whose fit spent its iteration budget: named with the reason, measured never. */
typedef struct rep_unconverged {
    char *name;              /* "<path>+vs" (owned) */
    char reason[1024];       /* the fit's message (a cs_error message) */
} rep_unconverged;

struct rep_methods {
    int multi;
    rep_unconverged *nc;     /* left out of every table (n_nc of them) */
    size_t n_nc;
    int ref_failed;          /* the reference (--reference N) is one of them: no comparison */
    size_t ref_nc;           /* ... nc[ref_nc] */
    size_t n;
    rep_method *m;
    size_t ref;
    int k;                   /* top-k column's k */
    size_t classes;
    size_t n_top;
    int ci_repeats, cmp_repeats;
    int ci_method;           /* cs_ci_method */
    uint64_t seed;
    double split;
    char split_column[128];  /* --recal-split-column, "" when not given */
    char split_fit[128];     /* its fitting value, "" = fit or train */
    cs_fit_split fit;        /* the engine's reading of the two (calscope/measure.h) */
    int held_out;            /* split > 0 or split_column: fit on a mask, measure the rest */
    uint8_t *ref_fit;        /* with held_out: the fit mask of the recalibrated file (its
                                split decides every method's held-out samples) */
    size_t left_out;         /* samples without a partner (rows skipped in another file) */
    int folds, bins;
    int verdict_metric;      /* --verdict-metric (default ece) */
    unsigned text_metrics;   /* --metrics: the text tables' columns (rep_text_shows_col) */
    int compat;              /* --compat given: it changes the file sections, not this table */
    double verdict_bins;     /* the small-sample rule's bins (cs_too_few_bins) */
    char select[CS_SPEC_MAX];
    char lens[CS_SPEC_MAX + 16];
    cs_methods res;          /* the engine's table (owned) */
};

int rep_methods_multi(const rep_methods *m)
{
    return m && m->multi;
}

const cs_compare *rep_methods_pair_of(const rep_methods *m, const cs_dataset *a, const cs_dataset *b)
{
    if (!m || m->multi || m->n != 2 || m->ref != 0 || !m->res.rows) return NULL;
    if (m->m[0].file != a || m->m[1].file != b || !m->res.rows[1].has_cmp) return NULL;
    return &m->res.rows[1].cmp;
}

int rep_methods_no_pairs(const rep_methods *m)
{
    return m && m->res.select_each;
}

void rep_methods_selection_text(FILE *out, const rep_methods *m)
{
    if (!m) return;
    char line[2 * CS_SPEC_MAX + 1200];
    if (m->left_out && m->m[m->ref].d) {
        char common[48];
        cs_methods_count(m->m[m->ref].d->n_samples, common, sizeof common);
        snprintf(line, sizeof line, "%zu sample%s without a partner (skipped rows) left out: every method is "
                 "measured on the %s samples all the files hold", m->left_out, m->left_out == 1 ? "" : "s", common);
        rep_wrap(out, line, 2);
        fputc('\n', out);
    }
    cs_methods_selection_line(&m->res, m->select, m->m[m->ref].name, line, sizeof line);
    if (line[0]) {
        rep_wrap(out, line, 2);
        fputc('\n', out);
    }
}

void rep_methods_selection_json(FILE *out, const rep_methods *m)
{
    fprintf(out, ", \"left_out\": %zu", m ? m->left_out : (size_t)0);
    fputs(", \"selection\": ", out);
    if (!m || !m->res.selected) {
        fputs("null", out);
        return;
    }
    fputs("{\"expr\": ", out);
    rep_json_str(out, m->select);
    fprintf(out, ", \"on\": \"%s\", \"samples\": ", m->res.select_each ? "each" : "reference");
    if (m->res.select_each) {
        /* each method's own count: no one set */
        fputs("null, \"method_samples\": [", out);
        for (size_t i = 0; i < m->n; i++) {
            if (i) fputs(", ", out);
            long long sel = cs_methods_row_selected(&m->res, i);
            if (sel >= 0) fprintf(out, "%lld", sel);
            else fputs("null", out);
        }
        fputc(']', out);
    } else {
        fprintf(out, "%zu", m->res.sel_samples);
    }
    fprintf(out, ", \"of\": %zu", m->res.sel_of);
    if (m->res.select_each) {
        fputs(", \"paired\": ", out);
        rep_json_str(out, CS_METHODS_EACH_NO_PAIRS);
    }
    fputc('}', out);
}

/* ---- the verdict ---- */

/* The verdict of a statistics pair: its table is A - B over cases, turned round to B - A. */
static cs_verdict case_verdict(const rep_compare *cmp)
{
    for (size_t i = 0; i < cmp->res.n_entries; i++) {
        const cs_compare_entry *e = &cmp->res.entries[i];
        if (e->metric == cmp->verdict_metric)
            return cs_verdict_make(e->metric, -e->diff, -e->hi, -e->lo, e->p_worse, e->equal, cmp->res.n_pairs, 1,
                                   0);
    }
    return cs_verdict_make(cmp->verdict_metric, NAN, NAN, NAN, NAN, 0, cmp->res.n_pairs, 1, 0);
}

void rep_compare_verdict_text(FILE *out, const rep_compare *cmp)
{
    char line[3000];
    if (cmp->by_case) {
        if (!cmp->done) return;
        cs_verdict v = case_verdict(cmp);
        cs_verdict_line(&v, cmp->b, cmp->a, line, sizeof line);
        rep_wrap(out, line, 2);
        return;
    }
    const rep_methods *t = cmp->methods;
    if (!t) return;
    for (size_t i = 0; i < t->n; i++) {
        if (i == t->ref) continue;
        if (t->res.select_each) {
            fprintf(out, "verdict: n/a; %s\n", CS_METHODS_EACH_NO_PAIRS);
            return;
        }
        cs_verdict v = cs_methods_verdict(&t->res, i, t->verdict_metric, t->verdict_bins);
        cs_verdict_line(&v, t->m[i].name, t->m[t->ref].name, line, sizeof line);
        rep_wrap(out, line, 2);
    }
}

static void verdict_json(FILE *out, const cs_verdict *v, const char *method)
{
    static const char *const kind[] = { "better", "worse", "no difference", "too few", "n/a" };
    fputc('{', out);
    if (method) {
        fputs("\"method\": ", out);
        rep_json_str(out, method);
        fputs(", ", out);
    }
    fprintf(out, "\"metric\": \"%s\", \"kind\": \"%s\", \"better\": %s, \"diff\": ", cs_metric_name(v->metric), kind[v->kind],
            v->kind == CS_VERDICT_BETTER ? "\"b\"" : v->kind == CS_VERDICT_WORSE ? "\"a\"" : "null");
    rep_json_num(out, v->diff);
    fputs(", \"lo\": ", out);
    rep_json_num(out, v->lo);
    fputs(", \"hi\": ", out);
    rep_json_num(out, v->hi);
    fputs(", \"p_better\": ", out);
    rep_json_num(out, v->p_better);
    fprintf(out, ", \"pairs\": %zu, \"min_pairs\": %zu, \"ci_excludes_diff\": %s}", v->pairs, v->min_pairs,
            v->misses ? "true" : "false");
}

void rep_compare_verdict_json(FILE *out, const rep_compare *cmp)
{
    fputs(", \"verdict\": ", out);
    const rep_methods *t = cmp->methods;
    cs_verdict v;
    if (cmp->by_case && cmp->done) v = case_verdict(cmp);
    else if (!cmp->by_case && t && t->n == 2 && !t->res.select_each) v = cs_methods_verdict(&t->res, 1 - t->ref, t->verdict_metric, t->verdict_bins);
    else {
        fputs("null", out);
        return;
    }
    verdict_json(out, &v, NULL);
}

void rep_methods_free(rep_methods *t)
{
    if (!t) return;
    for (size_t i = 0; i < t->n; i++) {
        free(t->m[i].name);
        cs_dataset_free(t->m[i].own);
        cs_recal_info_clear(&t->m[i].info);
    }
    free(t->m);
    free(t->ref_fit);
    for (size_t i = 0; i < t->n_nc; i++) free(t->nc[i].name);
    free(t->nc);
    cs_methods_free(&t->res);
    free(t);
}

static void say(const char *what, const cs_error *err)
{
    fprintf(stderr, "calscope: %s: %s\n", what, err->msg);
}

static int status_of(cs_status st)
{
    return st == CS_EUSAGE ? 2 : st == CS_EEMPTY ? 0 : 3;
}

static int worst(int a, int b)
{
    if (a == 3 || b == 3) return 3;
    return a > b ? a : b;
}

/* The fit mask of one file under --recal-split F (a seeded id hash) or --recal-split-column
 * (its split column): 1 = a fitting row; the evaluation keeps the rows where it is 0. On failure
 * returns NULL and, unless status is NULL (already reported), says why (a split column with no
 * fitting or no evaluation row is an input error) and raises *status. */
static uint8_t *held_out_mask(const rep_methods *t, const cs_dataset *d, const char *path, int *status,
                              cs_error *err)
{
    uint8_t *m = cs_fit_mask(d, &t->fit, err);
    if (t->fit.by_column) {
        if (!m && status) {
            char what[300];
            snprintf(what, sizeof what, "--recal-split-column %s%s%s", t->split_column, t->split_fit[0] ? "=" : "",
                     t->split_fit);
            say(what, err);
            *status = worst(*status, status_of(err->code));
        }
        return m;
    }
    if (!m && status) {
        say(path, err);
        *status = worst(*status, 3);
    }
    return m;
}

/* Pairs every method with the reference; prints and records each refusal. Returns 1 when all
 * pair. */
static int all_pair(const rep_methods *t, int *status, rep_pair_errors *pair)
{
    const cs_dataset *rd = t->m[t->ref].d;
    int ok = 1;
    for (size_t i = 0; i < t->n && rd; i++) {
        if (i == t->ref || !t->m[i].d) continue;
        cs_error err;
        cs_error_clear(&err);
        if (rd->stats || t->m[i].d->stats)   /* cases pair only two files at a time (cs_compare_run) */
            cs_error_set(&err, CS_EUSAGE, 0, 0, "%s: --compare pairs statistics files case by case two at a time; "
                         "a methods table of three or more is offered for prediction files only",
                         t->m[i].name);
        else if (cs_compare_pair(rd, t->m[i].d, NULL, NULL, &err) == CS_OK) continue;
        fprintf(stderr, "calscope: %s\n", err.msg);
        if (pair && pair->n < REP_PAIR_ERRORS) {
            snprintf(pair->path[pair->n], sizeof pair->path[0], "%s", t->m[i].name);
            snprintf(pair->msg[pair->n], sizeof pair->msg[0], "%s", err.msg);
            pair->n++;
        }
        *status = worst(*status, status_of(err.code));
        ok = 0;
    }
    return ok;
}

/* A table with room for n files and every recalibration, its settings taken from o (defaults
 * where a flag was not given); NULL when out of memory. */
static rep_methods *methods_new(const struct ss_opts *o, size_t n)
{
    const rep_methods_opts *mo = &o->methods;
    rep_methods *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->m = calloc(n + (size_t)mo->n_recal, sizeof *t->m);
    t->nc = calloc((size_t)mo->n_recal + 1, sizeof *t->nc);
    if (!t->m || !t->nc) { free(t->m); free(t->nc); free(t); return NULL; }
    t->ci_repeats = o->ci_repeats ? o->ci_repeats : CS_METHODS_CI_REPEATS;
    t->cmp_repeats = o->repeats ? o->repeats : CS_COMPARE_REPEATS;
    t->ci_method = o->ci_method;
    t->seed = o->seed;
    t->split = mo->split;
    snprintf(t->split_column, sizeof t->split_column, "%s", mo->split_column);
    snprintf(t->split_fit, sizeof t->split_fit, "%s", mo->split_fit);
    t->fit = (cs_fit_split){ t->split, t->split_column[0] != '\0', t->split_fit, t->seed };
    t->held_out = cs_fit_split_held_out(&t->fit);
    t->folds = mo->folds ? mo->folds : 5;
    t->bins = mo->bins ? mo->bins : 15;
    t->ref = mo->reference ? (size_t)mo->reference - 1 : 0;
    t->multi = n != 2 || mo->n_recal || t->ref != 0;
    snprintf(t->select, sizeof t->select, "%s", o->settings.select);
    t->verdict_metric = mo->verdict_metric_given ? mo->verdict_metric : CS_METRIC_ECE;
    t->verdict_bins = cs_too_few_bins(&o->settings);
    t->text_metrics = rep_text_metrics(mo);
    t->compat = o->compat >= 0;
    cs_settings_lens_name(&o->settings, t->lens, sizeof t->lens);
    return t;
}

/* the files, whole (cut_common cuts them to the samples they are measured on); with a
 * held-out split, the recalibrated file src's fit mask, which decides for every method */
static void add_files(rep_methods *t, cs_dataset *const *data, const char *const *paths, size_t n, size_t src,
                      int *status, cs_error *err)
{
    for (size_t i = 0; i < n; i++) {
        rep_method *me = &t->m[t->n++];
        me->recal = -1;
        me->name = strdup(paths[i]);
        me->d = me->file = data[i];
    }
    if (t->held_out && data[src]) t->ref_fit = held_out_mask(t, data[src], paths[src], status, err);
}

/* --recal all: a binary-only method is left out for a multiclass reference file, ms and dir
 * above the classes they are offered for */
static int recal_left_out(const rep_methods_opts *mo, int r, const cs_dataset *d)
{
    return mo->recal_all && d && !cs_recal_offered(mo->recal[r], d->k, NULL, 0);
}

/* Fit method me's recalibration on the reference file d into me->own, over all of d's rows
 * (NULL on failure, err says why); 0 when d's fit mask failed (said), which leaves me
 * untouched. */
static int fit_recal(const rep_methods *t, const struct ss_opts *o, rep_method *me, const cs_dataset *d,
                     cs_error *err)
{
    cs_recal_options ro;
    cs_recal_options_default(&ro);
    ro.folds = t->folds;
    ro.bins = t->bins;
    ro.seed = o->seed;
    ro.threads = o->threads;
    ro.max_iter = o->methods.max_iter;
    /* with a split: fitted on the file's fitting rows (a failure of its mask is reported
     * above) and applied to every row; cut_common keeps the held-out ones */
    if (t->held_out && !t->ref_fit) return 0;
    ro.fit_mask = t->held_out ? t->ref_fit : NULL;
    me->own = cs_recal_apply(d, me->recal, &ro, &me->info, err);
    return 1;
}

/* One recalibration r of the reference file src. */
static void add_recal(rep_methods *t, const struct ss_opts *o, cs_dataset *const *data, const char *const *paths,
                      size_t src, int r, int *status, cs_error *err)
{
    const rep_methods_opts *mo = &o->methods;
    if (recal_left_out(mo, r, data[src])) return;
    rep_method *me = &t->m[t->n++];
    me->recal = mo->recal[r];
    size_t len = strlen(paths[src]) + 8;
    me->name = malloc(len);
    if (me->name) snprintf(me->name, len, "%s+%s", paths[src], cs_recal_name(me->recal));
    if (!data[src]) return;
    if (!fit_recal(t, o, me, data[src], err)) return;
    /* a fit that spent its budget is named with the reason and left out of the tables (it is
     * no result); the comparison of the others goes on with the chosen reference, unless it is
     * the reference itself */
    if (!me->own && me->info.unconverged) {
        say(me->name ? me->name : "--recal", err);
        size_t at = t->n - 1;
        if (at == t->ref) { t->ref_failed = 1; t->ref_nc = t->n_nc; }
        else if (at < t->ref) t->ref--;   /* the reference keeps its method, now one row up */
        rep_unconverged *u = &t->nc[t->n_nc++];
        u->name = me->name;
        snprintf(u->reason, sizeof u->reason, "%s", err->msg);
        memset(me, 0, sizeof *me);
        t->n--;
        return;
    }
    /* a recalibration with no row to fit on failed on this input: exit 3, not 0 */
    if (!me->own) { say(me->name ? me->name : "--recal", err); *status = worst(*status, status_of(err->code == CS_EEMPTY ? CS_EINPUT : err->code)); }
    me->d = me->own;
}

/* Every method cut to the same samples of the recalibrated file src (when anything is to be
 * cut): those every method has a partner for (a file without ids read with --skip-bad-rows
 * pairs by data row position, and a row skipped in one file leaves its partners without one;
 * they are counted in t->left_out and said), and with a split its held-out samples, chosen by
 * src's split alone: a file whose split column disagrees is refused at the row. 0 on failure
 * (said, status set). */
static int cut_common(rep_methods *t, size_t src, int threads, int *status)
{
    const cs_dataset *rd = t->m[src].d, *ds[CS_METHODS_MAX];
    int skipped = 0;
    for (size_t i = 0; i < t->n && i < CS_METHODS_MAX; i++) {
        ds[i] = t->m[i].d;
        skipped |= ds[i] && ds[i]->row_pos != NULL;
    }
    if ((!t->held_out && !skipped) || !rd || t->n > CS_METHODS_MAX) return 1;
    if (t->held_out && !t->ref_fit) return 0;   /* its refusal is said */
    uint8_t *keep = malloc(rd->n ? rd->n : 1);
    cs_error err;
    cs_error_clear(&err);
    if (!keep) { fprintf(stderr, "calscope: out of memory\n"); *status = worst(*status, 3); return 0; }
    for (size_t r = 0; r < rd->n; r++) keep[r] = t->held_out ? !t->ref_fit[r] : 1;
    int ok = cs_methods_common(ds, t->n, src, keep, &t->left_out, &err) == CS_OK;
    if (!ok) { say("--compare", &err); *status = worst(*status, status_of(err.code)); }
    const cs_run run = { .threads = threads };
    const char *fit_value = t->split_fit[0] ? t->split_fit : NULL;
    for (size_t i = 0; ok && i < t->n; i++) {
        rep_method *me = &t->m[i];
        /* a file's own split column must agree with src's (a recalibration carries src's) */
        const uint8_t *check = t->fit.by_column && me->recal < 0 ? t->ref_fit : NULL;
        cs_dataset *cut = cs_methods_paired_cut(rd, keep, me->d, check, fit_value, &run, &err);
        if (!cut) {
            fprintf(stderr, "calscope: %s\n", err.msg);
            *status = worst(*status, status_of(err.code == CS_EEMPTY ? CS_EINPUT : err.code));
            ok = 0;
            break;
        }
        cs_dataset_free(me->own);
        me->own = cut;
    }
    free(keep);
    if (!ok) return 0;
    for (size_t i = 0; i < t->n; i++) t->m[i].d = t->m[i].own;
    if (t->left_out)
        fprintf(stderr, "calscope: --compare: %zu sample%s without a partner (skipped rows) left out: every method "
                "is measured on the %zu samples all the files hold\n", t->left_out, t->left_out == 1 ? "" : "s",
                t->m[src].d->n_samples);
    return 1;
}

/* No table built on an error: every method must have its name and data (a failure was
 * reported above or by the loader) and pair with the reference. */
static int methods_complete(rep_methods *t, int *status, rep_pair_errors *pair)
{
    for (size_t i = 0; i < t->n; i++)
        if (!t->m[i].name) return 0;
    int whole = 1;
    for (size_t i = 0; i < t->n; i++)
        if (!t->m[i].d) whole = 0;
    return all_pair(t, status, pair) && whole;
}

/* the table itself: one engine implementation (calscope/methods.h), shared with the
 * dashboard; this file only prints it. 0 on failure (said, status set). */
static int methods_table(rep_methods *t, const struct ss_opts *o, int *status, cs_error *err)
{
    const cs_dataset *ds[CS_METHODS_MAX];
    if (t->n > CS_METHODS_MAX) { *status = worst(*status, 2); return 0; }
    for (size_t i = 0; i < t->n; i++) ds[i] = t->m[i].d;
    const rep_methods_opts *mo = &o->methods;
    cs_methods_options mopt = { t->ref, mo->k, t->ci_repeats, t->cmp_repeats, t->seed, o->ci_method, mo->select_each };
    cs_run run = { .threads = o->threads, .cancel = NULL, .progress_ppm = NULL };
    cs_status mst = cs_methods_run(ds, t->n, &o->settings, &mopt, &run, &t->res, err);
    if (mst != CS_OK) { say("--compare", err); *status = worst(*status, status_of(mst)); return 0; }
    t->classes = t->res.classes;
    t->k = t->res.k;
    t->n_top = t->res.n_top;
    return 1;
}

/* each method's own failure, and its pairing's with the reference, named on stderr */
static void say_row_errors(const rep_methods *t, int *status)
{
    for (size_t i = 0; i < t->n; i++) {
        const rep_method *me = &t->m[i];
        const cs_method_row *row = &t->res.rows[i];
        if (!me->d) continue;
        if (row->status != CS_OK) { say(me->name, &row->err); *status = worst(*status, status_of(row->status)); }
        else if (i != t->ref && t->m[t->ref].d && row->diff_status != CS_OK) {
            char what[2100];
            snprintf(what, sizeof what, "--compare %s %s", t->m[t->ref].name, me->name);
            say(what, &row->diff_err);
            *status = worst(*status, status_of(row->diff_status));
        }
    }
}

rep_methods *rep_methods_run(const struct ss_opts *o, cs_dataset *const *data, const char *const *paths,
                             size_t n, int *status, rep_pair_errors *pair)
{
    *status = 0;
    rep_methods *t = methods_new(o, n);
    if (!t) return NULL;
    cs_error err;
    cs_error_clear(&err);
    size_t src = t->ref < n ? t->ref : 0;
    add_files(t, data, paths, n, src, status, &err);
    for (int r = 0; r < o->methods.n_recal; r++) add_recal(t, o, data, paths, src, r, status, &err);
    if (t->ref_failed) {   /* no reference, no comparison: said, in JSON errors, exit 3 */
        const rep_unconverged *u = &t->nc[t->ref_nc];
        char msg[1000];
        snprintf(msg, sizeof msg, "--reference %d: %.256s did not converge, so there is no reference to compare the "
                 "other methods with (give another --reference or a larger --recal-max-iter)", o->methods.reference,
                 u->name ? u->name : "the recalibration");
        fprintf(stderr, "calscope: %s\n", msg);
        if (pair && pair->n < REP_PAIR_ERRORS) {
            snprintf(pair->path[pair->n], sizeof pair->path[0], "%s", u->name ? u->name : "--reference");
            snprintf(pair->msg[pair->n], sizeof pair->msg[0], "%s", msg);
            pair->n++;
        }
        *status = worst(*status, 3);
        rep_methods_free(t);
        return NULL;
    }
    if (!methods_complete(t, status, pair) || !cut_common(t, src, o->threads, status) ||
        !methods_table(t, o, status, &err)) {
        rep_methods_free(t);
        return NULL;
    }
    if (t->res.select_each) fprintf(stderr, "calscope: --compare: %s\n", CS_METHODS_EACH_NO_PAIRS);
    say_row_errors(t, status);
    return t;
}

/* The engine's numbers of method me (read in place: the report keeps no copy). */
static const cs_method_row *row(const rep_methods *t, const rep_method *me)
{
    return &t->res.rows[me - t->m];
}

/* ---- the fitted parameters in one line ---- */

/* vs: the range of the scales and biases of model m (the JSON has them all). */
static void vs_summary(FILE *out, const cs_recal_info *in, size_t m, const char *on)
{
    size_t k = in->n_vec / 2;
    const double *x = in->vec + m * in->n_vec;
    double wlo = x[0], whi = x[0], blo = x[k], bhi = x[k];
    for (size_t i = 1; i < k; i++) {
        if (x[i] < wlo) wlo = x[i];
        if (x[i] > whi) whi = x[i];
        if (x[k + i] < blo) blo = x[k + i];
        if (x[k + i] > bhi) bhi = x[k + i];
    }
    fprintf(out, ", w in [%.4f, %.4f], b in [%.4f, %.4f] on %s (from %s; %d iterations at most)", wlo, whi, blo, bhi, on,
            in->from_logits ? "logits" : "log-probabilities", in->iterations);
}

/* ms, dir: K from the length of a model's parameters (K² + K + 2: W, b, λ, μ). */
static size_t dm_classes(size_t n_vec)
{
    size_t k = 2;
    while (k * k + k + 2 < n_vec) k++;
    return k;
}

/* ms, dir: the λ, μ model m chose (the JSON has W and b). */
static void dm_summary(FILE *out, const cs_recal_info *in, size_t m, const char *on, int dir)
{
    size_t k = dm_classes(in->n_vec);
    const double *x = in->vec + m * in->n_vec;
    fprintf(out, ", lambda = %g, mu = %g by inner cross-validation on %s (from %s; %d iterations at most)", x[k * k + k],
            x[k * k + k + 1], on, dir ? "ln p" : in->from_logits ? "logits" : "log-probabilities", in->iterations);
}

/* ---- rankings ---- */

static const char *col_name(int col)
{
    return cs_methods_col_name(col);
}

/* A column is 9 characters, or its name's width ("l2ce_debiased", "l2ce_debiased!"): the
 * values stay under their names. */
static int col_w(int col)
{
    int l = (int)strlen(col_name(col)) + 1;
    return col == COL_TOPK || l < 9 ? 9 : l;
}

static void ranks(const rep_methods *t, int col, int *rank)
{
    cs_methods_ranks(&t->res, col, rank);
}

static int ranking_differs(const rep_methods *t, int col)
{
    return cs_methods_ranking_differs(&t->res, col);
}

/* ---- JSON ---- */

static int excludes_zero(double lo, double hi)
{
    return cs_methods_excludes_zero(lo, hi);
}

/* "column": "split", "fit_values": ["fit", "train"] (members of an object) */
static void split_column_json(FILE *out, const rep_methods *t)
{
    fputs("\"column\": ", out);
    rep_json_str(out, t->split_column);
    fputs(", \"fit_values\": [", out);
    if (t->split_fit[0]) rep_json_str(out, t->split_fit);
    else fputs("\"fit\", \"train\"", out);
    fputc(']', out);
}

/* A model's parameter list: JSON array of vec[from .. from + n). */
static void json_nums(FILE *out, const double *v, size_t n)
{
    fputc('[', out);
    for (size_t i = 0; i < n; i++) {
        if (i) fputs(", ", out);
        rep_json_num(out, v[i]);
    }
    fputc(']', out);
}

/* vs: {"w": [...], "b": [...]} of model m; ets: {"w": [w1, w2, w3], "T": T}. */
static void vec_model_json(FILE *out, int method, const cs_recal_info *in, size_t m)
{
    if (method == CS_RECAL_BETA) {
        const double *x = in->vec + m * in->n_vec;
        fputs("{\"a\": ", out);
        rep_json_num(out, x[0]);
        fputs(", \"b\": ", out);
        rep_json_num(out, x[1]);
        fputs(", \"c\": ", out);
        rep_json_num(out, x[2]);
        fputc('}', out);
        return;
    }
    if (method == CS_RECAL_ETS) {
        const double *x = in->vec + m * in->n_vec;
        fputs("{\"w\": ", out);
        json_nums(out, x, 3);
        fputs(", \"T\": ", out);
        rep_json_num(out, x[3]);
        fputc('}', out);
        return;
    }
    if (method == CS_RECAL_MS || method == CS_RECAL_DIR) {
        size_t k = dm_classes(in->n_vec);
        const double *x = in->vec + m * in->n_vec;
        fputs("{\"W\": [", out);
        for (size_t c = 0; c < k; c++) {
            if (c) fputs(", ", out);
            json_nums(out, x + c * k, k);
        }
        fputs("], \"b\": ", out);
        json_nums(out, x + k * k, k);
        fputs(", \"lambda\": ", out);
        rep_json_num(out, x[k * k + k]);
        fputs(", \"mu\": ", out);
        rep_json_num(out, x[k * k + k + 1]);
        fputc('}', out);
        return;
    }
    size_t k = in->n_vec / 2;
    const double *x = in->vec + m * in->n_vec;
    fputs("{\"w\": ", out);
    json_nums(out, x, k);
    fputs(", \"b\": ", out);
    json_nums(out, x + k, k);
    fputc('}', out);
}

/* The full parameters of a vector-valued fit: "params" (the model on every fitting row) and,
 * when cross-fitted, "fold_params" (the model applied to each fold). */
static void vec_params_json(FILE *out, const rep_methods *t, const rep_method *me)
{
    size_t all = t->held_out ? 0 : (size_t)t->folds;
    if (me->recal == CS_RECAL_BETA) fputs(", \"scores\": \"probabilities\"", out);
    else if (me->recal == CS_RECAL_DIR) fputs(", \"scores\": \"ln p\"", out);
    else fprintf(out, ", \"scores\": \"%s\"", me->info.from_logits ? "logits" : "log-probabilities");
    if (me->recal != CS_RECAL_ETS) fprintf(out, ", \"iterations\": %d", me->info.iterations);
    fputs(", \"params\": ", out);
    vec_model_json(out, me->recal, &me->info, all);
    if (t->held_out) return;
    fputs(", \"fold_params\": [", out);
    for (int f = 0; f < t->folds; f++) {
        if (f) fputs(", ", out);
        vec_model_json(out, me->recal, &me->info, (size_t)f);
    }
    fputc(']', out);
}

static void recal_json(FILE *out, const rep_methods *t, const rep_method *me)
{
    fputs(", \"recal\": {\"method\": ", out);
    rep_json_str(out, cs_recal_name(me->recal));
    fputs(", \"fit\": ", out);
    rep_json_str(out, t->split_column[0] ? "split-column" : t->split > 0 ? "split" : "cross-fit");
    if (t->split_column[0]) {
        fputs(", \"split_column\": {", out);
        split_column_json(out, t);
        fputc('}', out);
    } else if (t->split > 0) {
        fputs(", \"split\": ", out);
        rep_json_num(out, t->split);
    } else {
        fprintf(out, ", \"folds\": %d", t->folds);
    }
    fprintf(out, ", \"fit_rows\": %zu", me->info.fit_rows);
    if (me->recal == CS_RECAL_TS || me->recal == CS_RECAL_PLATT) {
        fprintf(out, ", \"scores\": \"%s\"", me->info.from_logits ? "logits" : "log-probabilities");
        size_t all = t->held_out ? 0 : (size_t)t->folds;
        if (me->recal == CS_RECAL_TS) {
            fputs(", \"temperature\": ", out);
            rep_json_num(out, me->info.param[all][0]);
            if (!t->held_out) {
                fputs(", \"fold_temperatures\": [", out);
                for (int f = 0; f < t->folds; f++) {
                    if (f) fputs(", ", out);
                    rep_json_num(out, me->info.param[f][0]);
                }
                fputc(']', out);
            }
            fprintf(out, ", \"clamped\": %s", me->info.clamped ? "true" : "false");
        } else {
            fputs(", \"a\": ", out);
            rep_json_num(out, me->info.param[all][0]);
            fputs(", \"b\": ", out);
            rep_json_num(out, me->info.param[all][1]);
        }
    }
    if (me->recal == CS_RECAL_HIST) fprintf(out, ", \"bins\": %d", t->bins);
    fprintf(out, ", \"argmax_changed\": %zu", me->info.argmax_changed);
    if (me->info.vec) vec_params_json(out, t, me);
    fputc('}', out);
}

/* The verdict list of "compare_info": one verdict per non-reference method, or null when each
 * method picked its own selection (no shared verdict then). */
static void compare_verdicts_json(FILE *out, const rep_methods *t)
{
    if (t->res.select_each) {
        fputs("null", out);
        return;
    }
    fputc('[', out);
    for (size_t i = 0, first = 1; i < t->n; i++) {
        if (i == t->ref) continue;
        if (!first) fputs(", ", out);
        first = 0;
        cs_verdict v = cs_methods_verdict(&t->res, i, t->verdict_metric, t->verdict_bins);
        verdict_json(out, &v, t->m[i].name);
    }
    fputc(']', out);
}

static void compare_info_json(FILE *out, const rep_methods *t)
{
    fputs(",\n  \"compare_info\": {\"reference\": ", out);
    rep_json_str(out, t->m[t->ref].name);
    fprintf(out, ", \"repeats\": %d", t->cmp_repeats);
    rep_methods_selection_json(out, t);
    fputs(", \"verdict\": ", out);
    compare_verdicts_json(out, t);
    fputc('}', out);
}

/* the "compare" list (docs/json.md), one entry per metric and non-reference method,
 * a = the method */
static void compare_list_json(FILE *out, const rep_methods *t)
{
    const rep_method *ref = &t->m[t->ref];
    fputs(",\n  \"compare\": [", out);
    int first = 1;
    for (size_t i = 0; i < t->n; i++) {
        const rep_method *me = &t->m[i];
        if (!row(t, me)->has_diff) continue;
        for (int c = 0; c < NCOL; c++) {
            fputs(first ? "\n    {\"method\": " : ",\n    {\"method\": ", out);
            first = 0;
            rep_json_str(out, me->name);
            fprintf(out, ", \"metric\": \"%s\", ", col_name(c));
            const double v[] = { row(t, me)->v[c], row(t, ref)->v[c], row(t, me)->diff[c], row(t, me)->dlo[c], row(t, me)->dhi[c],
                                 row(t, me)->equal[c] ? NAN : row(t, me)->pbetter[c] };
            rep_json_fields(out, rep_compare_keys, v, 6);
            fprintf(out, ", \"equal\": %s}", row(t, me)->equal[c] ? "true" : "false");
        }
    }
    fputs(first ? "]" : "\n  ]", out);
}

/* which rows fitted the recalibrations: {"kind": "cross-fit"|"hash"|"column", ...} */
static void recal_split_json(FILE *out, const rep_methods *t)
{
    fputs(", \"recal_split\": {\"kind\": ", out);
    if (t->split_column[0]) {
        rep_json_str(out, "column");
        fputs(", ", out);
        split_column_json(out, t);
    } else if (t->split > 0) {
        rep_json_str(out, "hash");
        fputs(", \"fraction\": ", out);
        rep_json_num(out, t->split);
        fprintf(out, ", \"seed\": %llu", (unsigned long long)t->seed);
    } else {
        rep_json_str(out, "cross-fit");
        fprintf(out, ", \"folds\": %d, \"seed\": %llu", t->folds, (unsigned long long)t->seed);
    }
    fputc('}', out);
}

static void not_converged_json(FILE *out, const rep_methods *t)
{
    fputs(", \"not_converged\": [", out);
    for (size_t i = 0; i < t->n_nc; i++) {
        fputs(i ? ", {\"name\": " : "{\"name\": ", out);
        rep_json_str(out, t->nc[i].name);
        fputs(", \"reason\": ", out);
        rep_json_str(out, t->nc[i].reason);
        fputc('}', out);
    }
    fputs("]}", out);
}

/* Whether any method's interval or paired replicates took smooth ECE binned. */
static int any_smece_binned(const rep_methods *t)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->res.rows[i].smece_binned) return 1;
    return 0;
}

/* The paired comparisons' draws when they were m out of n (*units gets their pairs), else 0:
 * the same rule draws every method's, so the first such row speaks for all. */
static size_t m_of_n_draws(const rep_methods *t, size_t *units)
{
    for (size_t i = 0; i < t->n; i++) {
        const cs_method_row *r = &t->res.rows[i];
        if (r->has_cmp && r->cmp.draw_size < r->cmp.n_pairs) {
            *units = r->cmp.n_pairs;
            return r->cmp.draw_size;
        }
    }
    return 0;
}

/* "methods_info" (left open for "not_converged", which closes it) */
static void methods_info_json(FILE *out, const rep_methods *t)
{
    fputs(",\n  \"methods_info\": {\"reference\": ", out);
    rep_json_str(out, t->m[t->ref].name);
    fprintf(out, ", \"ci_repeats\": %d, \"ci_method\": \"%s\", \"compare_repeats\": %d, \"tie_rel\": %g, \"seed\": %llu, "
            "\"topk\": %d, \"lens\": ", t->ci_repeats, cs_ci_method_name(t->ci_method), t->cmp_repeats, CS_TIE_REL,
            (unsigned long long)t->seed, t->k);
    rep_json_str(out, t->lens);
    fputs(", \"evaluated_on\": ", out);
    rep_json_str(out, t->split_column[0] ? "held-out rows of --recal-split-column (split value not a fitting value)"
              : t->split > 0 ? "held-out rows of --recal-split" : "all rows (recalibrations cross-fitted)");
    recal_split_json(out, t);
    rep_smece_binned_json(out, any_smece_binned(t));
    size_t units = 0, draws = m_of_n_draws(t, &units);
    if (draws) fprintf(out, ", \"draw_size\": %zu", draws);   /* m out of n: docs/json.md */
    not_converged_json(out, t);
}

/* each metric's value and interval; NaN (null) when the method's row failed */
static void method_metrics_json(FILE *out, const rep_methods *t, const rep_method *me)
{
    fputs(",\n     \"metrics\": {", out);
    for (int c = 0; c < NCOL; c++) {
        fprintf(out, "%s\"%s\": ", c ? ", " : "", col_name(c));
        rep_json_num(out, row(t, me)->ok ? row(t, me)->v[c] : NAN);
        fprintf(out, ", \"%s_ci\": [", col_name(c));
        rep_json_num(out, row(t, me)->ok ? row(t, me)->lo[c] : NAN);
        fputs(", ", out);
        rep_json_num(out, row(t, me)->ok ? row(t, me)->hi[c] : NAN);
        fputc(']', out);
    }
    fputc('}', out);
}

/* the metrics whose interval does not contain the value (a biased statistic) */
static void ci_excludes_json(FILE *out, const rep_methods *t, const rep_method *me)
{
    fputs(",\n     \"ci_excludes_value\": [", out);
    for (int c = 0, first = 1; c < NCOL; c++) {
        if (!row(t, me)->ok || !row(t, me)->ci_excludes[c]) continue;
        fprintf(out, "%s\"%s\"", first ? "" : ", ", col_name(c));
        first = 0;
    }
    fputc(']', out);
}

static void vs_reference_json(FILE *out, const rep_methods *t, const rep_method *me)
{
    fprintf(out, ",\n     \"vs_reference\": {\"pairs\": %zu, \"too_few\": %s", row(t, me)->n_pairs,
            cs_too_few(row(t, me)->n_pairs, t->verdict_bins, row(t, me)->by_case) ? "true" : "false");
    for (int c = 0; c < NCOL; c++) {
        fprintf(out, ", \"%s\": {", col_name(c));
        const double v[] = { row(t, me)->diff[c], row(t, me)->dlo[c], row(t, me)->dhi[c], row(t, me)->equal[c] ? NAN : row(t, me)->pbetter[c] };
        rep_json_fields(out, rep_compare_keys + 2, v, 4);
        fprintf(out, ", \"equal\": %s, \"excludes_zero\": %s, \"ci_excludes_diff\": %s}",
                row(t, me)->equal[c] ? "true" : "false",
                excludes_zero(row(t, me)->dlo[c], row(t, me)->dhi[c]) ? "true" : "false",
                row(t, me)->diff_excludes[c] ? "true" : "false");
    }
    fputc('}', out);
}

static void methods_list_json(FILE *out, const rep_methods *t)
{
    fputs(",\n  \"methods\": [", out);
    for (size_t i = 0; i < t->n; i++) {
        const rep_method *me = &t->m[i];
        fputs(i ? ",\n    {\"name\": " : "\n    {\"name\": ", out);
        rep_json_str(out, me->name);
        fprintf(out, ", \"reference\": %s, \"rows\": %zu", i == t->ref ? "true" : "false", me->d ? me->d->n : 0);
        if (me->recal >= 0) recal_json(out, t, me);
        method_metrics_json(out, t, me);
        ci_excludes_json(out, t, me);
        if (row(t, me)->has_diff) vs_reference_json(out, t, me);
        fputc('}', out);
    }
    fputs("\n  ]", out);
}

/* "rankings": each metric's rank per method (null when unranked; none past 64 methods) */
static void rankings_json(FILE *out, const rep_methods *t)
{
    fputs(",\n  \"rankings\": {", out);
    int rank[64];
    for (int c = 0; c < NCOL && t->n <= 64; c++) {
        ranks(t, c, rank);
        fprintf(out, "%s\n    \"%s\": [", c ? "," : "", col_name(c));
        for (size_t i = 0; i < t->n; i++) {
            if (i) fputs(", ", out);
            if (rank[i]) fprintf(out, "%d", rank[i]);
            else fputs("null", out);
        }
        fputc(']', out);
    }
    fputs(",\n    \"differs_from_ece\": [", out);
    int first = 1;
    for (int c = 0; c < NCOL; c++) {
        if (c == 1 || !ranking_differs(t, c)) continue;
        fprintf(out, "%s\"%s\"", first ? "" : ", ", col_name(c));
        first = 0;
    }
    fputs("]}", out);
}

/* one method's probability mass: top-k means and class means, and their deltas from the
 * reference (empty or NaN where either side's mass failed) */
static void mass_method_json(FILE *out, const rep_methods *t, const rep_method *me, int first)
{
    const rep_method *ref = &t->m[t->ref];
    fputs(first ? "\n    {\"name\": " : ",\n    {\"name\": ", out);
    rep_json_str(out, me->name);
    fprintf(out, ", \"samples\": %zu, \"topk_mean\": [", row(t, me)->mass_ok ? row(t, me)->mass_n : 0);
    for (size_t j = 0; j < t->n_top; j++) {
        if (j) fputs(", ", out);
        rep_json_num(out, row(t, me)->mass_ok ? row(t, me)->top[j] : NAN);
    }
    fputs("], \"topk_delta\": [", out);
    for (size_t j = 0; j < t->n_top; j++) {
        if (j) fputs(", ", out);
        rep_json_num(out, row(t, me)->mass_ok && row(t, ref)->mass_ok ? row(t, me)->top[j] - row(t, ref)->top[j] : NAN);
    }
    fputs("], \"class_mean\": [", out);
    for (size_t c = 0; row(t, me)->mass_ok && c < me->d->k; c++) {
        if (c) fputs(", ", out);
        rep_json_num(out, row(t, me)->cls[c]);
    }
    fputs("], \"class_delta\": [", out);
    for (size_t c = 0; row(t, me)->mass_ok && row(t, ref)->mass_ok && c < me->d->k && c < ref->d->k; c++) {
        if (c) fputs(", ", out);
        rep_json_num(out, row(t, me)->cls[c] - row(t, ref)->cls[c]);
    }
    fputs("]}", out);
}

static void mass_json(FILE *out, const rep_methods *t)
{
    fputs(",\n  \"mass\": {\"reference\": ", out);
    rep_json_str(out, t->m[t->ref].name);
    fputs(", \"select\": ", out);
    rep_json_str(out, t->select);
    fputs(", \"methods\": [", out);
    for (size_t i = 0; i < t->n; i++) mass_method_json(out, t, &t->m[i], i == 0);
    fputs("\n  ]}", out);
}

void rep_methods_json(FILE *out, const rep_methods *t)
{
    if (t->multi) {
        compare_info_json(out, t);
        compare_list_json(out, t);
    }
    methods_info_json(out, t);
    methods_list_json(out, t);
    rankings_json(out, t);
    mass_json(out, t);
}

/* ---- text ---- */

static void fmt_num(char *buf, size_t size, double v)
{
    if (isfinite(v)) snprintf(buf, size, "%.4f", v);
    else snprintf(buf, size, "n/a");
}

/* A difference inside the tie band prints as 0 (not "-0.0000"): rounding noise has no sign. */
static double snap(double d)
{
    return fabs(d) <= CS_TIE_REL ? 0.0 : d;
}

/* A method's label in the text tables: its number in the legend, "[1]" for the first. */
static void method_label(char *buf, size_t size, size_t i)
{
    snprintf(buf, size, "[%zu]", i + 1);
}

/* The legend: one method per line, by number, with its full name (wrapped, never cut) and how a
 * recalibration was fitted. The tables refer to the methods by these numbers, so a long file
 * name costs lines here instead of columns in every table. */
static void methods_legend(FILE *out, const rep_methods *t)
{
    fprintf(out, "Methods (lens %s)\n", t->lens);
    if (t->compat) fputs("  calscope's own definitions: --compat changes each file's section above only\n", out);
    for (size_t i = 0; i < t->n; i++) {
        const rep_method *me = &t->m[i];
        char lab[24];
        char *line = NULL;
        size_t len = 0;
        FILE *o = open_memstream(&line, &len);   /* the line, then wrapped at 80 columns */
        if (!o) continue;
        method_label(lab, sizeof lab, i);
        fprintf(o, "  %-4s %s%s", lab, me->name, i == t->ref ? " (reference)" : "");
        if (me->recal >= 0) {
            fprintf(o, ": %s", cs_recal_title(me->recal));
            if (t->split_column[0])
                fprintf(o, ", fitted on the %zu rows whose %s is %s", me->info.fit_rows, t->split_column,
                        t->split_fit[0] ? t->split_fit : "fit or train");
            else if (t->split > 0) fprintf(o, ", fitted on the %zu fitting rows of --recal-split %g", me->info.fit_rows, t->split);
            else fprintf(o, ", %d-fold cross-fitted", t->folds);
            size_t all = t->held_out ? 0 : (size_t)t->folds;
            const char *on = t->held_out ? "the fitting rows" : "all rows";
            if (me->recal == CS_RECAL_TS)
                fprintf(o, ", T = %.4f on %s%s (from %s)", me->info.param[all][0], on, me->info.clamped ? " [at bound]" : "",
                        me->info.from_logits ? "logits" : "log-probabilities");
            else if (me->recal == CS_RECAL_PLATT)
                fprintf(o, ", a = %.4f, b = %.4f on %s (from %s)", me->info.param[all][0], me->info.param[all][1], on,
                        me->info.from_logits ? "logits" : "log-probabilities");
            else if (me->recal == CS_RECAL_HIST)
                fprintf(o, ", %d bins", t->bins);
            else if (me->recal == CS_RECAL_VS && me->info.vec)
                vs_summary(o, &me->info, all, on);
            else if (me->recal == CS_RECAL_IROVA)
                fputs(", renormalised", o);
            else if ((me->recal == CS_RECAL_MS || me->recal == CS_RECAL_DIR) && me->info.vec)
                dm_summary(o, &me->info, all, on, me->recal == CS_RECAL_DIR);
            else if (me->recal == CS_RECAL_BETA && me->info.vec) {
                const double *x = me->info.vec + all * me->info.n_vec;
                fprintf(o, ", logit p' = %.4f ln p - %.4f ln(1 - p) %c %.4f on %s (from probabilities)", x[0], x[1],
                        x[2] < 0 ? '-' : '+', fabs(x[2]), on);
            } else if (me->recal == CS_RECAL_ETS && me->info.vec) {
                const double *x = me->info.vec + all * me->info.n_vec;
                fprintf(o, ", w = (%.4f, %.4f, %.4f) for (softmax(s/T), the file, uniform), T = %.4f on %s (from %s)",
                        x[0], x[1], x[2], x[3], on, me->info.from_logits ? "logits" : "log-probabilities");
            }
            /* a method that moves classes separately can change the prediction: say how often */
            if (me->recal == CS_RECAL_IROVA || me->info.argmax_changed)
                fprintf(o, "; it changed the predicted class of %zu of %zu samples", me->info.argmax_changed,
                        me->d ? me->d->n_samples : 0);
        }
        fclose(o);
        rep_wrap(out, line, 7);
        free(line);
    }
    for (size_t i = 0; i < t->n_nc; i++) {
        char line[2400];
        snprintf(line, sizeof line, "  %.256s: NOT CONVERGED, left out of the tables: %.2048s", t->nc[i].name, t->nc[i].reason);
        rep_wrap(out, line, 4);
    }
    if (t->held_out) {
        char line[256];
        snprintf(line, sizeof line, "  every method is measured on the other %zu rows only (held out from the fit)",
                 t->m[t->ref].d ? t->m[t->ref].d->n : 0);
        rep_wrap(out, line, 2);
    }
}

static void col_header(char *h, size_t size, const rep_methods *t, int c)
{
    if (c == COL_TOPK) snprintf(h, size, "top%d_ece", t->k);
    else snprintf(h, size, "%s", col_name(c));
}

/* The shown columns from first on that fit REP_TEXT_WIDTH after a label column of lw; returns
 * one past the last (a wide table is printed as stacked blocks of columns). */
static int col_block_end(const rep_methods *t, int first, int lw)
{
    int width = 2 + lw, c = first, any = 0;
    for (; c < NCOL; c++) {
        if (!rep_text_shows_col(t->text_metrics, c)) continue;
        if (any && width + 1 + col_w(c) + 1 > REP_TEXT_WIDTH) break;   /* + 1: a ranking's "!" */
        width += 1 + col_w(c);
        any = 1;
    }
    return c;
}

/* One table of a number per method and shown column: values (ranks == NULL) or ranks. */
static void methods_grid(FILE *out, const rep_methods *t, int lw, int rk[][64])
{
    for (int first = 0; first < NCOL; ) {
        int end = col_block_end(t, first, lw);
        fprintf(out, "  %-*s", lw, "method");
        for (int c = first; c < end; c++) {
            if (!rep_text_shows_col(t->text_metrics, c)) continue;
            char h[24];
            col_header(h, sizeof h, t, c);
            if (rk && c != CS_METHODS_COL_ECE && ranking_differs(t, c)) strcat(h, "!");
            fprintf(out, " %*s", col_w(c), h);
        }
        fputc('\n', out);
        for (size_t i = 0; i < t->n && (!rk || t->n <= 64); i++) {
            const rep_method *me = &t->m[i];
            char lab[24];
            method_label(lab, sizeof lab, i);
            fprintf(out, "  %-*s", lw, lab);
            for (int c = first; c < end; c++) {
                if (!rep_text_shows_col(t->text_metrics, c)) continue;
                char b[32];
                if (rk && rk[c][i]) snprintf(b, sizeof b, "%d", rk[c][i]);
                else if (rk) snprintf(b, sizeof b, "-");
                else fmt_num(b, sizeof b, row(t, me)->ok ? row(t, me)->v[c] : NAN);
                fprintf(out, " %*s", col_w(c), b);
            }
            fputc('\n', out);
        }
        first = end;
        if (first < NCOL && col_block_end(t, first, lw) > first) fputc('\n', out);
    }
}

/* Per shown metric: each method's value [95% CI] and its paired difference to the reference. */
static void metric_blocks(FILE *out, const rep_methods *t, int lw, int *any_excl, int *any_dexcl,
                          const cs_method_row **few)
{
    for (int c = 0; c < NCOL; c++) {
        if (!rep_text_shows_col(t->text_metrics, c)) continue;
        if (c == COL_TOPK) fprintf(out, "  top-%d ECE\n", t->k);
        else fprintf(out, "  %s\n", col_name(c));
        for (size_t i = 0; i < t->n; i++) {
            const rep_method *me = &t->m[i];
            char v[32], lo[32], hi[32], lab[24];
            method_label(lab, sizeof lab, i);
            fmt_num(v, sizeof v, row(t, me)->ok ? row(t, me)->v[c] : NAN);
            fmt_num(lo, sizeof lo, row(t, me)->ok ? row(t, me)->lo[c] : NAN);
            fmt_num(hi, sizeof hi, row(t, me)->ok ? row(t, me)->hi[c] : NAN);
            int excl = row(t, me)->ok && row(t, me)->ci_excludes[c];
            *any_excl |= excl;
            if (row(t, me)->ok && !isfinite(row(t, me)->v[c]))
                fprintf(out, "    %-*s %6s (%s)", lw, lab, v, cs_methods_na_reason(c));
            else
                fprintf(out, "    %-*s %6s [%s, %s]%s", lw, lab, v, lo, hi, excl ? "!" : " ");
            const cs_method_row *r = row(t, me);
            if (r->has_diff && r->equal[c])
                fputs(" +0.0000 [+0.0000, +0.0000]   p_better =", out);
            else if (r->has_diff && !isfinite(r->diff[c]))   /* no number on either side */
                fprintf(out, isfinite(r->v[c]) ? " n/a (%s)" : " n/a", cs_methods_na_reason(c));
            else if (r->has_diff && !(isfinite(r->dlo[c]) && isfinite(r->dhi[c])))   /* m-out-of-n draws */
                fprintf(out, " %+.4f %s", r->diff[c], CS_NEEDS_FULL_DRAWS_TEXT);
            else if (r->has_diff && cs_too_few(r->n_pairs, t->verdict_bins, r->by_case)) {
                /* under the small-sample rule: neither "!" nor "*", the numbers decide nothing */
                *few = r;
                fprintf(out, " %+.4f [%+.4f, %+.4f]?  p_better %.3f", r->diff[c], r->dlo[c], r->dhi[c], r->pbetter[c]);
            } else if (r->has_diff) {
                *any_dexcl |= r->diff_excludes[c];
                fprintf(out, " %+.4f [%+.4f, %+.4f]%s%s p_better %.3f", r->diff[c], r->dlo[c], r->dhi[c],
                        r->diff_excludes[c] ? "!" : " ", excludes_zero(r->dlo[c], r->dhi[c]) ? "*" : " ", r->pbetter[c]);
            }
            else if (i == t->ref)
                fputs(" (reference)", out);
            else if (t->res.select_each)
                fputs(" no paired difference (--select-on each)", out);
            fputc('\n', out);
        }
    }
}

/* A mass table: n numbers per method (the reference's own, the others' differences to it), in
 * stacked blocks of columns that fit REP_TEXT_WIDTH. head(j) names column j. */
static void mass_table(FILE *out, const rep_methods *t, int lw, size_t n, int cls)
{
    const rep_method *ref = &t->m[t->ref];
    size_t per = (size_t)(REP_TEXT_WIDTH - 2 - lw) / 10;
    for (size_t first = 0; first < n; first += per) {
        size_t end = first + per < n ? first + per : n;
        fprintf(out, "%s  %-*s", first ? "\n" : "", lw, "method");
        for (size_t j = first; j < end; j++) {
            if (cls) fprintf(out, " %9.9s", ref->d->class_names ? ref->d->class_names[j] : "?");
            else fprintf(out, " %7s%-2zu", "k=", j + 1);
        }
        fputc('\n', out);
        for (size_t i = 0; i < t->n; i++) {
            const rep_method *me = &t->m[i];
            if (!row(t, me)->mass_ok || (cls && me->d->k != t->classes)) continue;
            char lab[24];
            method_label(lab, sizeof lab, i);
            fprintf(out, "  %-*s", lw, lab);
            for (size_t j = first; j < end; j++) {
                double mine = cls ? row(t, me)->cls[j] : row(t, me)->top[j];
                double theirs = cls ? row(t, ref)->cls[j] : row(t, ref)->top[j];
                fprintf(out, i == t->ref ? " %9.4f" : " %+9.4f", i == t->ref ? mine : snap(mine - theirs));
            }
            fputc('\n', out);
        }
    }
}

void rep_methods_text(FILE *out, const rep_methods *t)
{
    char biggest[24];
    method_label(biggest, sizeof biggest, t->n - 1);
    int lw = (int)strlen(biggest) < 6 ? 6 : (int)strlen(biggest);   /* "method" heads the column */
    methods_legend(out, t);
    fputc('\n', out);
    methods_grid(out, t, lw, NULL);

    char line[2048];
    if (t->res.select_each)
        snprintf(line, sizeof line, "  value [95%% %s bootstrap CI, R=%d], each on its own selection (no paired differences)",
                 cs_ci_method_name(t->ci_method), t->ci_repeats);
    else
        snprintf(line, sizeof line, "  value [95%% %s bootstrap CI, R=%d]; diff = method - reference, paired bootstrap "
                 "[95%% CI, R=%d]; * = the interval excludes 0; p_better = share of resamples where the method is "
                 "better; = : a tie, every resample within %g of the metric's scale (rounding noise)",
                 cs_ci_method_name(t->ci_method), t->ci_repeats, t->cmp_repeats, CS_TIE_REL);
    fputc('\n', out);
    rep_wrap(out, line, 2);
    int any_excl = 0, any_dexcl = 0;
    const cs_method_row *few = NULL;   /* a row under the small-sample rule, for its note */
    metric_blocks(out, t, lw, &any_excl, &any_dexcl, &few);
    if (any_excl) rep_ci_note(out, t->ci_method);
    if (any_dexcl) rep_paired_note(out);
    rep_smece_binned_note(out, any_smece_binned(t));
    size_t units = 0, draws = m_of_n_draws(t, &units);
    if (draws) rep_draws_line(out, draws, units);
    if (few) rep_too_few_note(out, few->n_pairs, cs_too_few_min(t->verdict_bins, few->by_case), few->by_case);

    /* agreement of definitions: rank of each method under each metric */
    snprintf(line, sizeof line, "  Rankings (1 = best; ties, within %g of the metric's scale, share a rank; ! = the "
             "metric orders some pair of methods the other way round from ECE)", CS_TIE_REL);
    fputc('\n', out);
    rep_wrap(out, line, 2);
    int rk[NCOL][64];
    for (int c = 0; c < NCOL && t->n <= 64; c++) ranks(t, c, rk[c]);
    methods_grid(out, t, lw, rk);

    /* where the mass goes */
    if (row(t, &t->m[t->ref])->mass_ok) {
        snprintf(line, sizeof line, "  Mass: mean k-th largest probability%s%s%s; other methods as the difference to "
                 "the reference", t->select[0] ? " (selection '" : "", t->select, t->select[0] ? "')" : "");
        fputc('\n', out);
        rep_wrap(out, line, 2);
        mass_table(out, t, lw, t->n_top, 0);
        if (t->select[0] && t->classes <= 20) {
            snprintf(line, sizeof line, "  Mass: mean probability of each class (selection '%s'); others as the "
                     "difference", t->select);
            fputc('\n', out);
            rep_wrap(out, line, 2);
            mass_table(out, t, lw, t->classes, 1);
        }
    }
    fputc('\n', out);
}

/* ---- CSV: one row per method ---- */


void rep_methods_csv(FILE *out, const rep_methods *t)
{
    fputs("method,recal,reference,rows", out);
    for (int c = 0; c < NCOL; c++) {
        const char *n = col_name(c);
        fprintf(out, ",%s,%s_lo,%s_hi,%s_diff,%s_diff_lo,%s_diff_hi,%s_p_better,%s_rank", n, n, n, n, n, n, n, n);
    }
    fputc('\n', out);
    int rk[NCOL][64];
    for (int c = 0; c < NCOL && t->n <= 64; c++) ranks(t, c, rk[c]);
    for (size_t i = 0; i < t->n; i++) {
        const rep_method *me = &t->m[i];
        rep_csv_field(out, me->name);
        fprintf(out, ",%s,%d,%zu", me->recal >= 0 ? cs_recal_name(me->recal) : "", i == t->ref, me->d ? me->d->n : 0);
        for (int c = 0; c < NCOL; c++) {
            rep_csv_num(out, row(t, me)->ok ? row(t, me)->v[c] : NAN);
            rep_csv_num(out, row(t, me)->ok ? row(t, me)->lo[c] : NAN);
            rep_csv_num(out, row(t, me)->ok ? row(t, me)->hi[c] : NAN);
            rep_csv_num(out, row(t, me)->has_diff ? row(t, me)->diff[c] : NAN);
            rep_csv_num(out, row(t, me)->has_diff ? row(t, me)->dlo[c] : NAN);
            rep_csv_num(out, row(t, me)->has_diff ? row(t, me)->dhi[c] : NAN);
            rep_csv_num(out, row(t, me)->has_diff && !row(t, me)->equal[c] ? row(t, me)->pbetter[c] : NAN);   /* empty for a tie */
            if (t->n <= 64 && rk[c][i]) fprintf(out, ",%d", rk[c][i]);
            else fputc(',', out);
        }
        fputc('\n', out);
    }
}
