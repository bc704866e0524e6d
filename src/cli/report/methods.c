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
 * held-out rows only: one fit mask per file (held_out_mask) chooses both the rows the
 * recalibrations are fitted on and the rows every method is measured on. */
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
    cs_dataset *own;
    int recal;               /* cs_recal_method, or -1 for a file */
    cs_recal_info info;
} rep_method;

struct rep_methods {
    int multi;
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
    int folds, bins;
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
    if (m->m[0].d != a || m->m[1].d != b || !m->res.rows[1].has_cmp) return NULL;
    return &m->res.rows[1].cmp;
}

void rep_methods_free(rep_methods *t)
{
    if (!t) return;
    for (size_t i = 0; i < t->n; i++) {
        free(t->m[i].name);
        cs_dataset_free(t->m[i].own);
    }
    free(t->m);
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
        if (cs_compare_pair(rd, t->m[i].d, NULL, NULL, &err) == CS_OK) continue;
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

rep_methods *rep_methods_run(const struct ss_opts *o, cs_dataset *const *data, const char *const *paths,
                             size_t n, int *status, rep_pair_errors *pair)
{
    const rep_methods_opts *mo = &o->methods;
    *status = 0;
    rep_methods *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->m = calloc(n + (size_t)mo->n_recal, sizeof *t->m);
    if (!t->m) { free(t); return NULL; }
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
    cs_settings_lens_name(&o->settings, t->lens, sizeof t->lens);
    cs_error err;
    cs_error_clear(&err);

    /* the files; with a held-out split each is cut to its held-out rows */
    for (size_t i = 0; i < n; i++) {
        rep_method *me = &t->m[t->n++];
        me->recal = -1;
        me->name = strdup(paths[i]);
        me->d = data[i];
        if (data[i] && t->held_out) {
            uint8_t *mask = held_out_mask(t, data[i], paths[i], status, &err);
            me->own = mask ? cs_dataset_subset(data[i], mask, 0, "", &err) : NULL;
            if (mask && !me->own) { say(paths[i], &err); *status = worst(*status, 3); }
            free(mask);
            me->d = me->own;
        }
    }
    /* the recalibrations of the reference file (the reference must be a file for that) */
    size_t src = t->ref < n ? t->ref : 0;
    for (int r = 0; r < mo->n_recal; r++) {
        rep_method *me = &t->m[t->n++];
        me->recal = mo->recal[r];
        size_t len = strlen(paths[src]) + 8;
        me->name = malloc(len);
        if (me->name) snprintf(me->name, len, "%s+%s", paths[src], cs_recal_name(me->recal));
        if (!data[src]) continue;
        cs_recal_options ro;
        cs_recal_options_default(&ro);
        ro.folds = t->folds;
        ro.bins = t->bins;
        ro.seed = o->seed;
        ro.threads = o->threads;
        if (t->held_out) {
            /* the reference file's own cut (a failure is reported above): the rows it keeps out
             * of the fit are the rows every method is measured on */
            uint8_t *mask = held_out_mask(t, data[src], paths[src], NULL, &err);
            if (!mask) continue;
            me->own = cs_recal_held_out(data[src], me->recal, &ro, mask, &me->info, &err);
            free(mask);
        } else {
            me->own = cs_recal_apply(data[src], me->recal, &ro, &me->info, &err);
        }
        /* a recalibration with no row to fit on failed on this input: exit 3, not 0 */
        if (!me->own) { say(me->name ? me->name : "--recal", &err); *status = worst(*status, status_of(err.code == CS_EEMPTY ? CS_EINPUT : err.code)); }
        me->d = me->own;
    }
    for (size_t i = 0; i < t->n; i++)
        if (!t->m[i].name) { rep_methods_free(t); return NULL; }
    /* no table built on an error: every method must have its data (a failure was reported
     * above or by the loader) and pair with the reference */
    int whole = 1;
    for (size_t i = 0; i < t->n; i++)
        if (!t->m[i].d) whole = 0;
    if (!all_pair(t, status, pair) || !whole) { rep_methods_free(t); return NULL; }

    /* the table itself: one engine implementation (calscope/methods.h), shared with the
     * dashboard; this file only prints it */
    const cs_dataset *ds[CS_METHODS_MAX];
    if (t->n > CS_METHODS_MAX) { rep_methods_free(t); *status = worst(*status, 2); return NULL; }
    for (size_t i = 0; i < t->n; i++) ds[i] = t->m[i].d;
    cs_methods_options mopt = { t->ref, mo->k, t->ci_repeats, t->cmp_repeats, t->seed, o->ci_method };
    cs_run run = { o->threads, NULL, NULL };
    cs_status mst = cs_methods_run(ds, t->n, &o->settings, &mopt, &run, &t->res, &err);
    if (mst != CS_OK) { say("--compare", &err); *status = worst(*status, status_of(mst)); rep_methods_free(t); return NULL; }
    t->classes = t->res.classes;
    t->k = t->res.k;
    t->n_top = t->res.n_top;
    for (size_t i = 0; i < t->n; i++) {
        rep_method *me = &t->m[i];
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
    return t;
}

/* The engine's numbers of method me (read in place: the report keeps no copy). */
static const cs_method_row *row(const rep_methods *t, const rep_method *me)
{
    return &t->res.rows[me - t->m];
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
    fputc('}', out);
}

void rep_methods_json(FILE *out, const rep_methods *t)
{
    const rep_method *ref = &t->m[t->ref];
    if (t->multi) {
        /* the "compare" list (docs/json.md), one entry per metric and non-reference method,
         * a = the method */
        fputs(",\n  \"compare_info\": {\"reference\": ", out);
        rep_json_str(out, ref->name);
        fprintf(out, ", \"repeats\": %d}", t->cmp_repeats);
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
    fputs(",\n  \"methods_info\": {\"reference\": ", out);
    rep_json_str(out, ref->name);
    fprintf(out, ", \"ci_repeats\": %d, \"ci_method\": \"%s\", \"compare_repeats\": %d, \"tie_rel\": %g, \"seed\": %llu, "
            "\"topk\": %d, \"lens\": ", t->ci_repeats, cs_ci_method_name(t->ci_method), t->cmp_repeats, CS_TIE_REL,
            (unsigned long long)t->seed, t->k);
    rep_json_str(out, t->lens);
    fputs(", \"evaluated_on\": ", out);
    rep_json_str(out, t->split_column[0] ? "held-out rows of --recal-split-column (split value not a fitting value)"
              : t->split > 0 ? "held-out rows of --recal-split" : "all rows (recalibrations cross-fitted)");
    /* which rows fitted the recalibrations: {"kind": "cross-fit"|"hash"|"column", ...} */
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
    fputs("},\n  \"methods\": [", out);
    for (size_t i = 0; i < t->n; i++) {
        const rep_method *me = &t->m[i];
        fputs(i ? ",\n    {\"name\": " : "\n    {\"name\": ", out);
        rep_json_str(out, me->name);
        fprintf(out, ", \"reference\": %s, \"rows\": %zu", i == t->ref ? "true" : "false", me->d ? me->d->n : 0);
        if (me->recal >= 0) recal_json(out, t, me);
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
        /* the metrics whose interval does not contain the value (a biased statistic) */
        fputs("},\n     \"ci_excludes_value\": [", out);
        for (int c = 0, first = 1; c < NCOL; c++) {
            if (!row(t, me)->ok || !row(t, me)->ci_excludes[c]) continue;
            fprintf(out, "%s\"%s\"", first ? "" : ", ", col_name(c));
            first = 0;
        }
        fputc(']', out);
        if (row(t, me)->has_diff) {
            fprintf(out, ",\n     \"vs_reference\": {\"pairs\": %zu", row(t, me)->n_pairs);
            for (int c = 0; c < NCOL; c++) {
                fprintf(out, ", \"%s\": {", col_name(c));
                const double v[] = { row(t, me)->diff[c], row(t, me)->dlo[c], row(t, me)->dhi[c], row(t, me)->equal[c] ? NAN : row(t, me)->pbetter[c] };
                rep_json_fields(out, rep_compare_keys + 2, v, 4);
                fprintf(out, ", \"equal\": %s, \"excludes_zero\": %s}", row(t, me)->equal[c] ? "true" : "false",
                        excludes_zero(row(t, me)->dlo[c], row(t, me)->dhi[c]) ? "true" : "false");
            }
            fputc('}', out);
        }
        fputc('}', out);
    }
    fputs("\n  ],\n  \"rankings\": {", out);
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
    fputs("]},\n  \"mass\": {\"reference\": ", out);
    rep_json_str(out, ref->name);
    fputs(", \"select\": ", out);
    rep_json_str(out, t->select);
    fputs(", \"methods\": [", out);
    for (size_t i = 0; i < t->n; i++) {
        const rep_method *me = &t->m[i];
        fputs(i ? ",\n    {\"name\": " : "\n    {\"name\": ", out);
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
    fputs("\n  ]}", out);
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

void rep_methods_text(FILE *out, const rep_methods *t)
{
    const rep_method *ref = &t->m[t->ref];
    size_t w = 8;
    for (size_t i = 0; i < t->n; i++) if (strlen(t->m[i].name) > w) w = strlen(t->m[i].name);
    if (w > 40) w = 40;
    /* names in the tables: the shortest that still tell the methods apart (chart/words.h, as
     * in the dashboard); the lines above the tables give them in full */
    char sname[CS_METHODS_MAX][48];
    {
        const char *full[CS_METHODS_MAX];
        char *dst[CS_METHODS_MAX];
        for (size_t i = 0; i < t->n && i < CS_METHODS_MAX; i++) { full[i] = t->m[i].name; dst[i] = sname[i]; }
        ch_short_names(full, t->n < CS_METHODS_MAX ? t->n : CS_METHODS_MAX, (int)w, dst, sizeof sname[0]);
    }
    fprintf(out, "Methods (lens %s; reference: %s)\n", t->lens, ref->name);
    for (size_t i = 0; i < t->n; i++) {
        const rep_method *me = &t->m[i];
        if (me->recal < 0) continue;
        fprintf(out, "  %s: %s", me->name,
                me->recal == CS_RECAL_TS ? "temperature scaling" : me->recal == CS_RECAL_PLATT ? "Platt scaling"
                : me->recal == CS_RECAL_HIST ? "histogram binning" : "isotonic regression");
        if (t->split_column[0])
            fprintf(out, ", fitted on the %zu rows whose %s is %s", me->info.fit_rows, t->split_column,
                    t->split_fit[0] ? t->split_fit : "fit or train");
        else if (t->split > 0) fprintf(out, ", fitted on the %zu fitting rows of --recal-split %g", me->info.fit_rows, t->split);
        else fprintf(out, ", %d-fold cross-fitted", t->folds);
        size_t all = t->held_out ? 0 : (size_t)t->folds;
        const char *on = t->held_out ? "the fitting rows" : "all rows";
        if (me->recal == CS_RECAL_TS)
            fprintf(out, ", T = %.4f on %s%s (from %s)", me->info.param[all][0], on, me->info.clamped ? " [at bound]" : "",
                    me->info.from_logits ? "logits" : "log-probabilities");
        else if (me->recal == CS_RECAL_PLATT)
            fprintf(out, ", a = %.4f, b = %.4f on %s (from %s)", me->info.param[all][0], me->info.param[all][1], on,
                    me->info.from_logits ? "logits" : "log-probabilities");
        else if (me->recal == CS_RECAL_HIST)
            fprintf(out, ", %d bins", t->bins);
        fputc('\n', out);
    }
    if (t->held_out)
        fprintf(out, "  every method is measured on the other %zu rows only (held out from the fit)\n", ref->d ? ref->d->n : 0);

    /* compact table: values, and the rank among the methods */
    fprintf(out, "\n  %-*s", (int)w, "method");
    for (int c = 0; c < NCOL; c++) {
        char h[16];
        if (c == COL_TOPK) snprintf(h, sizeof h, "top%d_ece", t->k);
        else snprintf(h, sizeof h, "%s", col_name(c));
        fprintf(out, " %*s", col_w(c), h);
    }
    fputc('\n', out);
    for (size_t i = 0; i < t->n; i++) {
        const rep_method *me = &t->m[i];
        fprintf(out, "  %-*s", (int)w, sname[i]);
        for (int c = 0; c < NCOL; c++) {
            char b[32];
            fmt_num(b, sizeof b, row(t, me)->ok ? row(t, me)->v[c] : NAN);
            fprintf(out, " %*s", col_w(c), b);
        }
        fputs(i == t->ref ? "  (reference)\n" : "\n", out);
    }

    /* per metric: value [95% CI], and the paired difference to the reference */
    fprintf(out, "\n  value [95%% %s bootstrap CI, R=%d]; diff = method - reference, paired bootstrap [95%% CI, R=%d];\n"
                 "  * = the interval excludes 0; p_better = share of resamples where the method is better;\n"
                 "  = : a tie, every resample within %g of the metric's scale (rounding noise)\n",
            cs_ci_method_name(t->ci_method), t->ci_repeats, t->cmp_repeats, CS_TIE_REL);
    int any_excl = 0;
    for (int c = 0; c < NCOL; c++) {
        if (c == COL_TOPK) fprintf(out, "  top-%d ECE\n", t->k);
        else fprintf(out, "  %s\n", col_name(c));
        for (size_t i = 0; i < t->n; i++) {
            const rep_method *me = &t->m[i];
            char v[32], lo[32], hi[32];
            fmt_num(v, sizeof v, row(t, me)->ok ? row(t, me)->v[c] : NAN);
            fmt_num(lo, sizeof lo, row(t, me)->ok ? row(t, me)->lo[c] : NAN);
            fmt_num(hi, sizeof hi, row(t, me)->ok ? row(t, me)->hi[c] : NAN);
            int excl = row(t, me)->ok && row(t, me)->ci_excludes[c];
            any_excl |= excl;
            fprintf(out, "    %-*s %8s [%s, %s]%s", (int)w, sname[i], v, lo, hi, excl ? "!" : " ");
            if (row(t, me)->has_diff && row(t, me)->equal[c])
                fputs("  +0.0000 [+0.0000, +0.0000]   p_better =", out);
            else if (row(t, me)->has_diff)
                fprintf(out, "  %+.4f [%+.4f, %+.4f]%s p_better %.3f", row(t, me)->diff[c], row(t, me)->dlo[c], row(t, me)->dhi[c],
                        excludes_zero(row(t, me)->dlo[c], row(t, me)->dhi[c]) ? " *" : "  ", row(t, me)->pbetter[c]);
            else if (i == t->ref)
                fputs("  (reference)", out);
            fputc('\n', out);
        }
    }

    if (any_excl) rep_ci_note(out, t->ci_method);

    /* agreement of definitions: rank of each method under each metric */
    fprintf(out, "\n  Rankings (1 = best; ties, within %g of the metric's scale, share a rank; ! = the metric\n"
                 "  orders some pair of methods the other way round from ECE)\n  %-*s", CS_TIE_REL, (int)w, "method");
    for (int c = 0; c < NCOL; c++) {
        char h[20];
        if (c == COL_TOPK) snprintf(h, sizeof h, "top%d_ece", t->k);
        else snprintf(h, sizeof h, "%s", col_name(c));
        if (c != 1 && ranking_differs(t, c)) strcat(h, "!");
        fprintf(out, " %*s", col_w(c), h);
    }
    fputc('\n', out);
    int rk[NCOL][64];
    for (int c = 0; c < NCOL && t->n <= 64; c++) ranks(t, c, rk[c]);
    for (size_t i = 0; i < t->n && t->n <= 64; i++) {
        fprintf(out, "  %-*s", (int)w, sname[i]);
        for (int c = 0; c < NCOL; c++) {
            if (rk[c][i]) fprintf(out, " %*d", col_w(c), rk[c][i]);
            else fprintf(out, " %*s", col_w(c), "-");
        }
        fputc('\n', out);
    }

    /* where the mass goes */
    if (row(t, ref)->mass_ok) {
        fprintf(out, "\n  Mass: mean k-th largest probability%s%s%s; other methods as the difference to the reference\n",
                t->select[0] ? " (selection '" : "", t->select, t->select[0] ? "')" : "");
        fprintf(out, "  %-*s", (int)w, "method");
        for (size_t j = 0; j < t->n_top; j++) fprintf(out, " %8s%zu", "k=", j + 1);
        fputc('\n', out);
        for (size_t i = 0; i < t->n; i++) {
            const rep_method *me = &t->m[i];
            if (!row(t, me)->mass_ok) continue;
            fprintf(out, "  %-*s", (int)w, sname[i]);
            for (size_t j = 0; j < t->n_top; j++)
                fprintf(out, i == t->ref ? " %9.4f" : " %+9.4f", i == t->ref ? row(t, me)->top[j] : snap(row(t, me)->top[j] - row(t, ref)->top[j]));
            fputc('\n', out);
        }
        if (t->select[0] && t->classes <= 20) {
            fprintf(out, "\n  Mass: mean probability of each class (selection '%s'); others as the difference\n", t->select);
            fprintf(out, "  %-*s", (int)w, "method");
            for (size_t c = 0; c < t->classes; c++) fprintf(out, " %8.8s", ref->d->class_names ? ref->d->class_names[c] : "?");
            fputc('\n', out);
            for (size_t i = 0; i < t->n; i++) {
                const rep_method *me = &t->m[i];
                if (!row(t, me)->mass_ok || me->d->k != t->classes) continue;
                fprintf(out, "  %-*s", (int)w, sname[i]);
                for (size_t c = 0; c < t->classes; c++)
                    fprintf(out, i == t->ref ? " %8.4f" : " %+8.4f", i == t->ref ? row(t, me)->cls[c] : snap(row(t, me)->cls[c] - row(t, ref)->cls[c]));
                fputc('\n', out);
            }
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
