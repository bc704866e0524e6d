/* The multi-method comparison table (see calscope/methods.h). Moved here from
 * src/cli/report/methods.c so that the report and the dashboard share one implementation. */
#include "calscope/methods.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calscope/measure.h"
#include "calscope/recal.h"

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

void cs_methods_free(cs_methods *t)
{
    if (!t) return;
    for (size_t i = 0; t->rows && i < t->n; i++) free(t->rows[i].cls);
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
    me->cmp = c;
    me->has_cmp = 1;
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
    if (d->stats || ref->stats || d->k != ref->k || d->row_sums || ref->row_sums) return CS_OK;   /* refused by the pairing */
    uint32_t *map = malloc(ref->k * sizeof *map);
    int moved = map ? cs_compare_class_map(ref, d, map) : -1;
    if (moved == 1) *view = cs_class_order_view(d, map, err);
    free(map);
    if (moved < 0 || (moved == 1 && !*view)) return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
    return CS_OK;
}

cs_status cs_methods_run(const cs_dataset *const *d, size_t n, const cs_settings *s,
                         const cs_methods_options *o, const cs_run *run, cs_methods *out,
                         cs_error *err)
{
    memset(out, 0, sizeof *out);
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
    cs_settings sk = *s;
    sk.lens = out->k == 1 ? CS_LENS_TOP1 : CS_LENS_TOPK;
    sk.topk = out->k;
    for (size_t i = 0; i < n; i++) {
        cs_method_row *me = &out->rows[i];
        cs_error_clear(&me->err);
        cs_error_clear(&me->diff_err);
        for (int c = 0; c < CS_METHODS_NCOL; c++)
            me->v[c] = me->lo[c] = me->hi[c] = me->diff[c] = me->dlo[c] = me->dhi[c] = me->pbetter[c] = NAN;
        if (!d[i]) { me->status = CS_EUSAGE; continue; }
        /* a method naming the reference's classes in another column order is read in the
         * reference's order, for all of its row (values, differences, mass) */
        cs_dataset *view = NULL;
        if (i != o->ref && ref && reference_order(d[i], ref, &view, &me->err) != CS_OK) {
            me->status = me->err.code;
            continue;
        }
        const cs_dataset *di = view ? view : d[i];
        me->status = measure(me, di, s, &sk, o, run);
        if (me->status == CS_OK && i != o->ref && ref)
            me->diff_status = paired(me, di, ref, s, &sk, o, run);
        if (cancelled(run) || me->status == CS_ECANCELLED || me->diff_status == CS_ECANCELLED) {
            cs_class_order_view_free(view);
            cs_methods_free(out);
            cs_error_set(err, CS_ECANCELLED, 0, 0, "cancelled");
            return CS_ECANCELLED;
        }
        me->k = d[i]->k;
        me->cls = calloc(d[i]->k, sizeof *me->cls);
        cs_error merr;
        cs_error_clear(&merr);
        if (me->cls && !d[i]->stats &&
            cs_mass_profile(di, s->select, out->n_top, me->top, me->cls, &me->mass_n, &merr) == CS_OK)
            me->mass_ok = 1;
        cs_class_order_view_free(view);
    }
    return CS_OK;
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
