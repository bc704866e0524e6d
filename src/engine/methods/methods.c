/* The multi-method comparison table (see calscope/methods.h). Moved here from
 * src/cli/report/methods.c so that the report and the dashboard share one implementation. */
#include "calscope/methods.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calscope/catalogue.h"
#include "calscope/measure.h"
#include "calscope/recal.h"
#include "calscope/select.h"

static const int col_metric[CS_METHODS_COL_TOPK] = {
    CS_METRIC_ACCURACY, CS_METRIC_ECE, CS_METRIC_ACE, CS_METRIC_MCE, CS_METRIC_AECE,
    CS_METRIC_RECE_G, CS_METRIC_SCE, CS_METRIC_BRIER, CS_METRIC_NLL, CS_METRIC_SMECE,
    CS_METRIC_L2CE, CS_METRIC_L2CE_DEBIASED, CS_METRIC_ECE_SWEEP
};

int cs_methods_col_metric(int col)
{
    return col >= 0 && col < CS_METHODS_COL_TOPK ? col_metric[col] : CS_METRIC_ECE;
}

const char *cs_methods_col_name(int col)
{
    return col == CS_METHODS_COL_TOPK ? "topk_ece" : cs_metric_name(cs_methods_col_metric(col));
}

int cs_methods_lower_better(int col)
{
    return col == CS_METHODS_COL_TOPK ? 1 : cs_metric_lower_is_better(col_metric[col]);
}

int cs_methods_excludes_zero(double lo, double hi)
{
    /* beyond the tie band: an interval of rounding noise around 0 excludes nothing */
    double tol = cs_metric_tie_tol(lo, hi);
    return isfinite(lo) && isfinite(hi) && (lo > tol || hi < -tol);
}

int cs_methods_interval_misses(double v, double lo, double hi)
{
    double tol = cs_metric_tie_tol(lo, hi);
    return isfinite(v) && isfinite(lo) && isfinite(hi) && (v < lo - tol || v > hi + tol);
}

const char *cs_methods_na_reason(int col)
{
    const cs_metric_info *mi = col == CS_METHODS_COL_TOPK ? NULL : cs_metric_info_of(cs_methods_col_metric(col));
    return mi && mi->only ? mi->only : "undefined on these samples";
}

void cs_methods_free(cs_methods *t)
{
    if (!t) return;
    for (size_t i = 0; t->rows && i < t->n; i++) {
        free(t->rows[i].cls);
        free(t->rows[i].bins);
    }
    free(t->rows);
    t->rows = NULL;
    t->n = 0;
}

static int cancelled(const cs_run *run)
{
    return run && run->cancel && atomic_load(run->cancel);
}

/* Value (and interval) of every column with settings s, the top-k column with sk: two
 * measurements (cs_measure, as a single-file report makes them), the values read from the
 * interval's own when there is one. */
static cs_status measure(cs_method_row *me, const cs_dataset *d, const cs_settings *s,
                         const cs_settings *sk, const cs_methods_options *o, const cs_run *run)
{
    /* a statistics dataset has no top-k lens (its column stays n/a) */
    for (int pass = 0; pass < (d->stats ? 1 : 2); pass++) {
        cs_measure_request q;
        memset(&q, 0, sizeof q);
        q.want = pass ? CS_WANT_BINNED : CS_WANT_ALL;
        if (o->ci_repeats > 0) {
            q.parts = CS_MEASURE_CI;
            q.ci_repeats = o->ci_repeats;
            q.ci_method = o->ci_method;
            q.ci_metrics = pass ? CS_METRIC_BIT(CS_METRIC_ECE) : CS_METRICS_DEFAULT;
            q.seed = o->seed;
        }
        cs_measurement m;
        cs_status st = cs_measure(d, pass ? sk : s, &q, run, &m, &me->err);
        for (int c = pass ? CS_METHODS_COL_TOPK : 0; st == CS_OK && c < (pass ? CS_METHODS_NCOL : CS_METHODS_COL_TOPK); c++) {
            int id = cs_methods_col_metric(c);
            if (m.has_ci) {
                me->v[c] = m.ci.value[id];
                me->lo[c] = m.ci.lo[id];
                me->hi[c] = m.ci.hi[id];
                me->ci_excludes[c] = cs_ci_excludes_value(&m.ci, id);
            } else {
                me->v[c] = cs_metric_value(&m.result, id);
                me->lo[c] = me->hi[c] = NAN;
            }
        }
        if (st == CS_OK && m.has_ci) me->smece_binned |= m.ci.smece_binned;
        if (!pass && st == CS_OK) {
            /* the row keeps the diagram of the samples it is on (taken, not copied) */
            me->samples = m.selected;
            me->bins = m.result.bins;
            me->n_bins = m.result.n_bins;
            m.result.bins = NULL;
            m.result.n_bins = 0;
        }
        cs_measurement_free(&m);
        if (st != CS_OK) return st;
    }
    me->ok = 1;
    return CS_OK;
}

/* The paired differences' resamples (0 asks for the default). */
static int cmp_repeats(const cs_methods_options *o)
{
    return o->cmp_repeats > 0 ? o->cmp_repeats : CS_COMPARE_REPEATS;
}

/* Column col of a row from the entry of reference − method: the row shows method − reference,
 * so the difference and its interval turn round and P(method better) is the entry's p_worse. */
static void take_diff(cs_method_row *me, int col, const cs_compare_entry *e)
{
    me->diff[col] = -e->diff;
    me->dlo[col] = -e->hi;
    me->dhi[col] = -e->lo;
    me->pbetter[col] = e->p_worse;
    me->equal[col] = e->equal;
    me->diff_excludes[col] = !e->equal && cs_methods_interval_misses(me->diff[col], me->dlo[col], me->dhi[col]);
}

/* Paired difference method − reference. Computed as reference − method (cs_compare_run with
 * the reference as A, the report's two-file table and the dashboard's Compare view): the pairs
 * are then drawn in the reference's sample order, so every method is resampled on the same
 * samples for one seed, and each number is the one `report --compare REF METHOD` prints. */
static cs_status paired(cs_method_row *me, const cs_dataset *d, const cs_dataset *ref,
                        const cs_settings *s, const cs_settings *sk, const cs_methods_options *o,
                        const cs_run *run)
{
    int repeats = cmp_repeats(o);
    cs_compare c;
    cs_status st = cs_compare_run(ref, d, s, CS_METRICS_DEFAULT, repeats, o->seed, run, &c, &me->diff_err);
    if (st != CS_OK) return st;
    me->n_pairs = c.n_pairs;
    me->by_case = ref->stats && d->stats;   /* cs_compare_run pairs statistics files by case */
    me->cmp = c;
    me->has_cmp = 1;
    me->smece_binned |= c.smece_binned;
    for (size_t e = 0; e < c.n_entries; e++)
        for (int col = 0; col < CS_METHODS_COL_TOPK; col++)
            if (col_metric[col] == c.entries[e].metric) take_diff(me, col, &c.entries[e]);
    if (!d->stats) {   /* statistics: no top-k lens */
        st = cs_compare_run(ref, d, sk, CS_METRIC_BIT(CS_METRIC_ECE), repeats, o->seed, run, &c, &me->diff_err);
        if (st != CS_OK) return st;
        take_diff(me, CS_METHODS_COL_TOPK, &c.entries[0]);
    }
    me->has_diff = 1;
    return CS_OK;
}

/* *view: d seen in ref's class order when d names ref's classes in another column order (free
 * it with cs_class_order_view_free), else NULL. CS_OK or CS_ENOMEM in err. */
static cs_status reference_order(const cs_dataset *d, const cs_dataset *ref, cs_dataset **view, cs_error *err)
{
    *view = NULL;
    if (d->stats || ref->stats || d->k != ref->k) return CS_OK;   /* refused by the pairing */
    uint32_t *map = malloc(ref->k * sizeof *map);
    int moved = map ? cs_compare_class_map(ref, d, map) : -1;
    if (moved == 1) *view = cs_class_order_view(d, map, err);
    free(map);
    if (moved < 0 || (moved == 1 && !*view)) return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
    return CS_OK;
}

/* ---- one sample set: the selection evaluated on the reference ---------------------------- */

static int blank(const char *expr)
{
    for (const char *c = expr; *c; c++)
        if (*c != ' ' && *c != '\t') return 0;
    return 1;
}

/* The reference's rows the selection keeps (ref->n bytes, 1 = kept; malloc'd), their count in
 * *kept; NULL with err on a bad expression or out of memory. */
static uint8_t *reference_keep(const cs_dataset *ref, const char *expr, size_t *kept, cs_error *err)
{
    cs_select *sel = cs_select_compile(expr, ref, err);
    uint8_t *keep = calloc(ref->n ? ref->n : 1, 1);
    uint32_t *rows = malloc((ref->n_samples ? ref->n_samples : 1) * sizeof *rows);
    if (sel && keep && rows) {
        *kept = cs_select_filter(sel, ref, ref->sample_rows, ref->n_samples, rows);
        for (size_t j = 0; j < *kept; j++) keep[rows[j]] = 1;
    } else {
        if (sel) cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
        free(keep);
        keep = NULL;
    }
    cs_select_free(sel);
    free(rows);
    return keep;
}

/* Test-time observations (tta > 0) follow their sample: kept when a kept sample has their id
 * (without an id column nothing links them, and nothing reads them). */
static cs_status keep_observations(const cs_dataset *x, uint8_t *mask, cs_error *err)
{
    if (!x->tta) return CS_OK;
    uint8_t *id_kept = x->id ? calloc(x->n_ids ? x->n_ids : 1, 1) : NULL;
    if (x->id && !id_kept) return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
    for (size_t r = 0; id_kept && r < x->n; r++)
        if (x->tta[r] == 0 && mask[r]) id_kept[x->id[r]] = 1;
    for (size_t r = 0; r < x->n; r++)
        if (x->tta[r] != 0) mask[r] = id_kept ? id_kept[x->id[r]] : 0;
    free(id_kept);
    return CS_OK;
}

static const char *path_of(const cs_dataset *d)
{
    return d->path ? d->path : "(unnamed)";
}

/* x's split column against the reference's fit mask at the pair (ra of ref, rx of x): CS_OK
 * when both say fit or both say held out, else the refusal at x's row. */
static cs_status split_agrees(const cs_dataset *ref, const uint8_t *ref_fit, uint32_t ra, const cs_dataset *x,
                              uint32_t rx, const char *fit_value, int by_id, cs_error *err)
{
    const char *v = x->split_names[x->split[rx]] ? x->split_names[x->split[rx]] : "";
    if (cs_recal_is_fit_value(v, fit_value) == (ref_fit[ra] != 0)) return CS_OK;
    const char *rv = ref->split && ref->split_names[ref->split[ra]] ? ref->split_names[ref->split[ra]] : "";
    char at[600] = "", in_ref[600], which[300];
    long line = x->line ? (long)x->line[rx] : 0, lr = ref->line ? (long)ref->line[ra] : 0;
    if (line > 0 && x->split_col > 0) snprintf(at, sizeof at, ":%ld:%ld", line, x->split_col);
    else if (line > 0) snprintf(at, sizeof at, ":%ld", line);
    if (lr > 0) snprintf(in_ref, sizeof in_ref, "%s:%ld", path_of(ref), lr);
    else snprintf(in_ref, sizeof in_ref, "%s", path_of(ref));
    if (by_id) snprintf(which, sizeof which, "of id '%s'", x->id_names[x->id[rx]]);
    else snprintf(which, sizeof which, "of data row %zu", (size_t)(x->row_pos ? x->row_pos[rx] : rx) + 1);
    return cs_error_set(err, CS_EINPUT, line, x->split_col,
                        "%s%s: --compare: split '%s' %s (%s) differs from %s (split '%s', %s): the "
                        "reference's split decides which samples are fitted on and which every method "
                        "is measured on", path_of(x), at, v, which, ref_fit[ra] ? "held out" : "a fitting row",
                        in_ref, rv, ref_fit[ra] ? "a fitting row" : "held out");
}

cs_dataset *cs_methods_paired_cut(const cs_dataset *ref, const uint8_t *ref_keep, const cs_dataset *x,
                                  const uint8_t *ref_fit, const char *fit_value, const cs_run *run,
                                  cs_error *err)
{
    uint8_t *mask = calloc(x->n ? x->n : 1, 1);
    uint32_t *a_to_b = x == ref ? NULL : malloc((ref->n ? ref->n : 1) * sizeof *a_to_b);
    cs_dataset *sub = NULL;
    int by_id = 0;
    if (!mask || (x != ref && !a_to_b)) {
        cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
    } else if (x == ref || cs_compare_pair(ref, x, a_to_b, &by_id, err) == CS_OK) {
        cs_status st = CS_OK;
        for (size_t j = 0; j < ref->n_samples && st == CS_OK; j++) {
            uint32_t r = ref->sample_rows[j], rx = x == ref ? r : a_to_b[r];
            if (rx == UINT32_MAX) continue;   /* no partner in x: left out of the comparison */
            if (ref_fit && x != ref && x->split)
                st = split_agrees(ref, ref_fit, r, x, rx, fit_value, by_id, err);
            if (ref_keep[r]) mask[rx] = 1;
        }
        if (st == CS_OK && keep_observations(x, mask, err) == CS_OK)
            sub = cs_dataset_subset(x, mask, 1, "", run, err);
    }
    free(mask);
    free(a_to_b);
    return sub;
}

cs_status cs_methods_common(const cs_dataset *const *d, size_t n, size_t ref, uint8_t *keep, size_t *left_out,
                            cs_error *err)
{
    const cs_dataset *rd = d[ref];
    uint32_t *a_to_b = malloc((rd->n ? rd->n : 1) * sizeof *a_to_b);
    uint8_t *lone = calloc(rd->n ? rd->n : 1, 1);   /* a sample some method has no partner for */
    cs_status st = a_to_b && lone ? CS_OK : cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
    for (size_t i = 0; i < n && st == CS_OK; i++) {
        if (i == ref || !d[i]) continue;
        if ((st = cs_compare_pair(rd, d[i], a_to_b, NULL, err)) != CS_OK) break;
        for (size_t j = 0; j < rd->n_samples; j++)
            if (a_to_b[rd->sample_rows[j]] == UINT32_MAX) lone[rd->sample_rows[j]] = 1;
    }
    if (st == CS_OK) {
        /* every method holds one partner of each common sample: the rest of its samples are out */
        size_t common = 0, out = 0;
        for (size_t j = 0; j < rd->n_samples; j++) {
            uint32_t r = rd->sample_rows[j];
            common += !lone[r];
            if (lone[r]) keep[r] = 0;
        }
        for (size_t i = 0; i < n; i++)
            if (d[i]) out += d[i]->n_samples - common;
        *left_out = out;
    }
    free(a_to_b);
    free(lone);
    return st;
}

/* Every method cut to the reference's selection: sub[i] owned (NULL where that method failed,
 * its row's status and err set; a bad expression fails every row). Returns CS_OK, or CS_ENOMEM
 * when the selection could not be evaluated. */
static cs_status cut_to_reference(const cs_dataset *const *d, size_t n, const char *expr, cs_methods *out,
                                  cs_dataset **sub, const cs_run *run, cs_error *err)
{
    const cs_dataset *ref = d[out->ref];
    cs_error serr;
    cs_error_clear(&serr);
    uint8_t *keep = reference_keep(ref, expr, &out->sel_samples, &serr);
    if (!keep && serr.code == CS_ENOMEM) return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
    /* a bad expression: every row fails with its message, as a measurement would */
    for (size_t i = 0; !keep && i < n; i++)
        if (d[i]) {
            out->rows[i].err = serr;
            out->rows[i].status = serr.code;
        }
    if (!keep) return CS_OK;
    for (size_t i = 0; i < n; i++) {
        cs_method_row *me = &out->rows[i];
        if (!d[i]) continue;
        if (out->sel_samples == 0)   /* cs_prepare's words, and whose samples they are */
            me->status = cs_error_set(&me->err, CS_EEMPTY, 0, 0, "%s: the selection '%s' keeps no sample%s",
                                      ref->path ? ref->path : "reference", expr,
                                      i == out->ref ? "" : " (it is evaluated on the reference)");
        else if (!(sub[i] = cs_methods_paired_cut(ref, keep, d[i], NULL, NULL, run, &me->err)))
            me->status = me->err.code;
    }
    free(keep);
    return CS_OK;
}

/* ---- the table ------------------------------------------------------------------------- */

/* The part of one method's progress its measurement takes, the rest going to its paired
 * differences: in proportion to the replicates each evaluates (an interval's draw is one
 * evaluation, a paired draw two, each step's second pass a top-k ECE, cheap). Each method
 * owns 1/n of the job, so the job's progress runs once from 0 to 1 through every step. */
static double measure_share(const cs_methods_options *o, int has_pair)
{
    if (!has_pair) return 1.0;
    double m = o->ci_repeats > 0 ? (double)o->ci_repeats : 1.0;
    double p = 2.0 * (double)cmp_repeats(o);
    return m / (m + p);
}

static void row_init(cs_method_row *me)
{
    cs_error_clear(&me->err);
    cs_error_clear(&me->diff_err);
    for (int c = 0; c < CS_METHODS_NCOL; c++)
        me->v[c] = me->lo[c] = me->hi[c] = me->diff[c] = me->dlo[c] = me->dhi[c] = me->pbetter[c] = NAN;
}

/* Row i: values, the paired difference (unless pairs is 0) and the mass profile. Returns
 * CS_ECANCELLED when cancelled, else CS_OK (failures stay in the row). */
static cs_status method_row(cs_methods *out, size_t i, const cs_dataset *x, const cs_dataset *ref, int pairs,
                            const cs_settings *s, const cs_settings *sk, const cs_methods_options *o,
                            const cs_run *run)
{
    cs_method_row *me = &out->rows[i];
    int has_pair = i != out->ref && ref && pairs;
    double split = measure_share(o, has_pair), n = (double)out->n;
    cs_run mrun = cs_run_part(run, (double)i / n, ((double)i + split) / n);
    cs_run prun = cs_run_part(run, ((double)i + split) / n, ((double)i + 1) / n);
    me->status = measure(me, x, s, sk, o, &mrun);
    if (me->status == CS_OK && has_pair)
        me->diff_status = paired(me, x, ref, s, sk, o, &prun);
    else if (i != out->ref && !pairs)
        cs_error_set(&me->diff_err, CS_EUSAGE, 0, 0, "%s", CS_METHODS_EACH_NO_PAIRS);
    if (cancelled(run) || me->status == CS_ECANCELLED || me->diff_status == CS_ECANCELLED) return CS_ECANCELLED;
    cs_run_progress_at(&prun, 1.0);   /* a row without pairs ends its part too */
    me->k = x->k;
    me->cls = calloc(x->k, sizeof *me->cls);
    cs_error merr;
    cs_error_clear(&merr);
    if (me->cls && !x->stats &&
        cs_mass_profile(x, s->select, out->n_top, me->top, me->cls, &me->mass_n, run, &merr) == CS_OK)
        me->mass_ok = 1;
    return CS_OK;
}

static void free_all(cs_dataset **sub, size_t n)
{
    for (size_t i = 0; i < n; i++) cs_dataset_free(sub[i]);
}

cs_status cs_methods_run(const cs_dataset *const *d, size_t n, const cs_settings *s,
                         const cs_methods_options *o, const cs_run *run, cs_methods *out,
                         cs_error *err)
{
    memset(out, 0, sizeof *out);
    if (n == 0 || n > CS_METHODS_MAX || o->ref >= n) {
        cs_error_set(err, CS_EUSAGE, 0, 0, "methods: %zu methods, reference %zu", n, o->ref);
        return CS_EUSAGE;
    }
    out->rows = calloc(n, sizeof *out->rows);
    if (!out->rows) {
        cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
        return CS_ENOMEM;
    }
    out->n = n;
    out->ref = o->ref;
    out->cmp_repeats = cmp_repeats(o);
    const cs_dataset *ref = d[o->ref];
    out->classes = ref ? ref->k : 0;
    for (size_t i = 0; i < n && !out->classes; i++) if (d[i]) out->classes = d[i]->k;
    out->k = o->k > 0 ? o->k : 3;
    if (out->classes && (size_t)out->k > out->classes) out->k = (int)out->classes;
    out->n_top = out->classes < CS_METHODS_MASS_TOP ? out->classes : CS_METHODS_MASS_TOP;
    for (size_t i = 0; i < n; i++) row_init(&out->rows[i]);

    /* one sample set: the methods cut to the reference's selection, then measured with none
     * (a statistics reference keeps whole cases, the same in every file: nothing to cut) */
    out->selected = !blank(s->select);
    out->select_each = out->selected && o->select_each;
    out->sel_of = out->selected && ref ? ref->n_samples : 0;
    int cut = out->selected && !o->select_each && ref && !ref->stats;
    cs_dataset *sub[CS_METHODS_MAX] = { 0 };
    cs_settings s1 = *s;
    if (cut) {
        cs_status st = cut_to_reference(d, n, s->select, out, sub, run, err);
        if (st != CS_OK) {
            cs_methods_free(out);
            return st;
        }
        s1.select[0] = '\0';
    }
    cs_settings sk = s1;
    sk.lens = out->k == 1 ? CS_LENS_TOP1 : CS_LENS_TOPK;
    sk.topk = out->k;
    const cs_dataset *ref1 = cut ? sub[o->ref] : ref;
    for (size_t i = 0; i < n; i++) {
        const cs_dataset *x = cut ? sub[i] : d[i];
        if (!x) {
            if (!d[i] || !cut) out->rows[i].status = CS_EUSAGE;
            continue;
        }
        /* a method naming the reference's classes in another column order is read in the
         * reference's order, for all of its row (values, differences, mass) */
        cs_dataset *view = NULL;
        if (i != o->ref && ref1 && reference_order(x, ref1, &view, &out->rows[i].err) != CS_OK) {
            out->rows[i].status = out->rows[i].err.code;
            continue;
        }
        cs_status st = method_row(out, i, view ? view : x, ref1, !out->select_each, &s1, &sk, o, run);
        cs_class_order_view_free(view);
        if (st == CS_ECANCELLED) {
            free_all(sub, n);
            cs_methods_free(out);
            cs_error_set(err, CS_ECANCELLED, 0, 0, "cancelled");
            return CS_ECANCELLED;
        }
    }
    free_all(sub, n);
    return CS_OK;
}

void cs_methods_count(size_t n, char *buf, size_t size)
{
    char digits[32];
    int len = snprintf(digits, sizeof digits, "%zu", n), o = 0;
    char out[48];
    for (int i = 0; i < len; i++) {
        if (i && (len - i) % 3 == 0) out[o++] = ',';
        out[o++] = digits[i];
    }
    out[o] = '\0';
    snprintf(buf, size, "%s", out);
}

long long cs_methods_row_selected(const cs_methods *t, size_t i)
{
    const cs_method_row *r = &t->rows[i];
    if (r->ok) return (long long)r->samples;
    return r->status == CS_EEMPTY ? 0 : -1;   /* a selection that keeps none kept 0 */
}

void cs_methods_selection_line(const cs_methods *t, const char *expr, const char *ref_name, char *buf,
                               size_t size)
{
    buf[0] = '\0';
    if (!t->selected || size == 0) return;
    char of[48], kept[48];
    if (!t->select_each) {
        cs_methods_count(t->sel_samples, kept, sizeof kept);
        cs_methods_count(t->sel_of, of, sizeof of);
        snprintf(buf, size, "selection: %s on the reference (%s): %s of %s samples, the same for every method",
                 expr, ref_name, kept, of);
        return;
    }
    size_t len = (size_t)snprintf(buf, size, "selection: %s on each method's own samples (", expr);
    for (size_t i = 0; i < t->n && len < size; i++) {
        long long sel = cs_methods_row_selected(t, i);
        cs_methods_count(sel < 0 ? 0 : (size_t)sel, kept, sizeof kept);
        len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "", sel >= 0 ? kept : "n/a");
    }
    cs_methods_count(t->sel_of, of, sizeof of);
    if (len < size) snprintf(buf + len, size - len, " of %s); values only, no paired differences", of);
}

/* +1 when method i is better than j under col beyond the tie band, -1 worse, 0 tied or
 * either has no value. */
static int better(const cs_methods *t, int col, size_t i, size_t j)
{
    if (!t->rows[i].ok || !t->rows[j].ok) return 0;
    return cs_metric_compare(cs_methods_col_metric(col), t->rows[i].v[col], t->rows[j].v[col]);
}

void cs_methods_ranks(const cs_methods *t, int col, int *rank)
{
    for (size_t i = 0; i < t->n; i++) {
        rank[i] = 0;
        if (!t->rows[i].ok || !isfinite(t->rows[i].v[col])) continue;
        rank[i] = 1;
        for (size_t j = 0; j < t->n; j++)
            if (j != i && better(t, col, j, i) > 0) rank[i]++;
    }
}

int cs_methods_ranking_differs(const cs_methods *t, int col)
{
    for (size_t i = 0; i < t->n; i++)
        for (size_t j = 0; j < t->n; j++)
            if (better(t, col, i, j) > 0 && better(t, CS_METHODS_COL_ECE, j, i) > 0) return 1;
    return 0;
}

/* ---- the verdict ---- */

cs_verdict cs_verdict_make(int metric, double diff, double lo, double hi, double p_better, int equal,
                           size_t pairs, int by_case, double bins)
{
    cs_verdict v = { CS_VERDICT_NA, metric, diff, lo, hi, p_better, pairs, by_case, 0,
                     cs_too_few_min(bins, by_case) };
    if (!isfinite(diff)) return v;
    if (equal) v.p_better = NAN;   /* a tie has no better side: the table's row reads "=" */
    if (!equal && !(isfinite(lo) && isfinite(hi))) return v;   /* no interval (m-out-of-n draws) */
    v.misses = !equal && cs_methods_interval_misses(diff, lo, hi);
    if (cs_too_few(pairs, bins, by_case)) v.kind = CS_VERDICT_TOO_FEW;
    else if (equal || v.misses || !cs_methods_excludes_zero(lo, hi))
        v.kind = CS_VERDICT_NO_DIFFERENCE;   /* an interval beside its own estimate decides nothing */
    else {
        /* the interval is on one side of 0: the side says which is better */
        int method_lower = hi < 0;
        v.kind = method_lower == cs_metric_lower_is_better(metric) ? CS_VERDICT_BETTER : CS_VERDICT_WORSE;
    }
    return v;
}

cs_verdict cs_methods_verdict(const cs_methods *t, size_t i, int metric, double bins)
{
    int col = -1;
    for (int c = 0; c < CS_METHODS_COL_TOPK; c++)
        if (cs_methods_col_metric(c) == metric) col = c;
    const cs_method_row *r = &t->rows[i];
    if (col < 0 || !r->has_diff)
        return cs_verdict_make(metric, NAN, NAN, NAN, NAN, 0, r->n_pairs, r->by_case, bins);
    return cs_verdict_make(metric, r->diff[col], r->dlo[col], r->dhi[col], r->pbetter[col], r->equal[col],
                           r->n_pairs, r->by_case, bins);
}

void cs_verdict_line(const cs_verdict *v, const char *method, const char *ref, char *buf, size_t size)
{
    const cs_metric_info *mi = cs_metric_info_of(v->metric);
    const char *label = mi ? mi->label : "?";
    const char *unit = v->by_case ? "cases" : "samples";
    char pairs[48], numbers[200], pb[32];
    cs_methods_count(v->pairs, pairs, sizeof pairs);
    if (v->kind == CS_VERDICT_NA && v->pairs == 0) {   /* named: one such line per method */
        snprintf(buf, size, "verdict: n/a for %s; no paired %s", method, unit);
        return;
    }
    if (v->kind == CS_VERDICT_NA && isfinite(v->diff)) {   /* a difference without its interval */
        snprintf(buf, size, "verdict: n/a; %s %+.4f has no interval from draws of fewer than all "
                 "%s (--boot-size full)", label, v->diff + 0.0, unit);
        return;
    }
    if (v->kind == CS_VERDICT_NA) {
        snprintf(buf, size, "verdict: n/a; %s has no paired difference here (%s)", label,
                 mi && mi->only ? mi->only : "undefined on these samples");
        return;
    }
    /* a tie has no P(better), as the table's row has none */
    if (isfinite(v->p_better)) snprintf(pb, sizeof pb, "%.3f", v->p_better);
    else snprintf(pb, sizeof pb, "n/a (a tie)");
    /* + 0.0: a tie's -0 (a difference turned round) prints as +0.0000 */
    snprintf(numbers, sizeof numbers, "%s %+.4f [%+.4f, %+.4f]%s, P(better) %s, %s paired %s", label,
             v->kind == CS_VERDICT_NO_DIFFERENCE && fabs(v->diff) <= CS_TIE_REL ? 0.0 : v->diff + 0.0, v->lo + 0.0, v->hi + 0.0,
             v->misses ? "!" : "", pb, pairs, unit);
    if (v->kind == CS_VERDICT_BETTER || v->kind == CS_VERDICT_WORSE)
        snprintf(buf, size, "verdict: %s is better calibrated than %s; %s", v->kind == CS_VERDICT_BETTER ? method : ref,
                 v->kind == CS_VERDICT_BETTER ? ref : method, numbers);
    else if (v->kind == CS_VERDICT_NO_DIFFERENCE)
        snprintf(buf, size, "verdict: no significant difference between %s and %s; %s", method, ref, numbers);
    else
        snprintf(buf, size, "verdict: too few paired %s to say (fewer than %zu); %s", unit, v->min_pairs, numbers);
}
