/* Bootstrap variance curves, intervals and paired comparison: see include/calscope/resample.h.
 * The drivers (cs_resample_*, evaluator.h) run on any evaluator; the cs_* entry points of
 * curves.h wrap a prepared row dataset in the rows' evaluator (statistics files wrap theirs in
 * measure/stats_resample.c).
 *
 * Shape of every computation: a table values[task][metric], one row per replicate, filled by
 * cs_parallel_for in any order by any thread (each task writes only its own row and draws only
 * from its own counter-based stream), then reduced in index order on the caller's thread. That
 * is what makes the output independent of the thread count. */
#include "calscope/resample.h"

#include "ci_internal.h"
#include "engine/sort/sort.h"
#include "evaluator.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* RECE-M (recem): a metric only a long test-time-augmentation file has, resampled only when
 * its weight rows are kept (cs_prepared_rece_m_kept). Masks are cut to what the prepared
 * problem can give, so intervals and curves list RECE-M for such files only. (Smooth ECE is
 * resampled at every size: its bandwidth search works on the draw's moments in boxes,
 * smece_box.c, one pass over the draw.) */
unsigned cs_metrics_available(const cs_prepared *p, unsigned mask)
{
    return cs_prepared_rece_m_kept(p) ? mask : mask & ~CS_METRIC_BIT(CS_METRIC_RECE_M);
}

double cs_metric_tie_tol(double a, double b)
{
    if (!isfinite(a) || !isfinite(b))
        return NAN;
    double s = fmax(1.0, fmax(fabs(a), fabs(b)));
    return CS_TIE_REL * s;
}

int cs_metric_compare(int id, double a, double b)
{
    double tol = cs_metric_tie_tol(a, b);
    if (!(fabs(a - b) > tol))   /* also NAN */
        return 0;
    int a_lower = a < b;
    return a_lower == cs_metric_lower_is_better(id) ? 1 : -1;
}

void cs_curve_options_size_default(cs_curve_options *o)
{
    static const double f[] = { 0.01, 0.05, 0.10, 0.25, 0.50, 1.00 };
    memset(o, 0, sizeof *o);
    o->repeats = 20;
    o->metrics = CS_METRICS_DEFAULT;
    o->n_points = sizeof f / sizeof f[0];
    memcpy(o->x, f, sizeof f);
    o->stable_metric = CS_METRIC_ECE;
}

void cs_curve_options_bins_default(cs_curve_options *o, int kdtree)
{
    static const double m[] = { 5, 10, 15, 20, 30, 50, 100, 200, 500, 1000 };
    static const double g[] = { 0.5, 0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002, 0.001 };
    memset(o, 0, sizeof *o);
    o->repeats = 200;
    o->replace = 1;
    o->metrics = CS_METRIC_BIT(CS_METRIC_ECE) | CS_METRIC_BIT(CS_METRIC_ACE) |
                 CS_METRIC_BIT(CS_METRIC_MCE) | CS_METRIC_BIT(CS_METRIC_RECE_M);
    if (kdtree) {
        o->n_points = sizeof g / sizeof g[0];
        memcpy(o->x, g, sizeof g);
    } else {
        o->n_points = sizeof m / sizeof m[0];
        memcpy(o->x, m, sizeof m);
    }
    o->stable_metric = CS_METRIC_ECE;
}

void cs_curve_free(cs_curve *c)
{
    if (!c)
        return;
    free(c->points);
    free(c);
}

/* ---- shared run state ------------------------------------------------------------------- */

typedef cs_runner runner;

/* values[0..rows·CS_METRIC_COUNT) = NAN: rows of metrics with no value (not evaluated). */
static void no_values(double *values, size_t rows)
{
    for (size_t i = 0; i < rows * CS_METRIC_COUNT; i++) values[i] = NAN;
}

/* The row datasets' evaluator (evaluator.h): cs_evaluate on the prepared samples idx. */
static cs_status rows_eval(const void *ctx, const uint32_t *idx, size_t k, unsigned mask,
                           const atomic_int *cancel, double *row)
{
    if (!idx && !(mask & CS_EVAL_DRAW)) {   /* all samples: the caller's evaluation, if made */
        no_values(row, 1);
        if (cs_prepared_full_values(ctx, mask, row)) return CS_OK;
    }
    cs_result res;
    cs_error err;
    memset(&res, 0, sizeof res);
    const cs_run one = { .threads = 1, .cancel = cancel };   /* a driver's task: its budget is spent */
    unsigned want = cs_metric_want(mask & ~CS_EVAL_DRAW) | (mask & CS_EVAL_DRAW ? CS_WANT_DRAW : 0);
    cs_status st = cs_evaluate(ctx, idx, k, want, &one, &res, &err);
    for (int m = 0; m < CS_METRIC_COUNT; m++)
        row[m] = (st == CS_OK && (mask & CS_METRIC_BIT(m))) ? cs_metric_value(&res, m) : NAN;
    cs_result_free(&res);
    return st;
}

static cs_evaluator rows_evaluator(const cs_prepared *p)
{
    return (cs_evaluator){ .n = cs_prepared_count(p), .ctx = p, .eval = rows_eval,
                           .m_of_n = cs_metric_mask_m_of_n(cs_prepared_settings(p)) };
}

/* Evaluates the draw idx[0..k) and writes every metric of `mask` into row[]; NAN for the
 * others (all of them, without evaluating, when mask has no metric). An error fails the run. */
static cs_status eval_row(runner *rn, const cs_evaluator *ev, const uint32_t *idx, size_t k,
                          unsigned mask, double *row)
{
    if (!(mask & ~CS_EVAL_DRAW)) {
        no_values(row, 1);
        return CS_OK;
    }
    cs_status st = ev->eval(ev->ctx, idx, k, mask, rn->cancel, row);
    cs_runner_fail(rn, st);
    return st;
}


/* Per-thread index buffers. */
typedef struct scratch {
    uint32_t *perm;   /* identity 0..n-1 (without replacement only) */
    uint32_t *undo;
    uint32_t *idx;
    uint32_t *idx2;
    uint64_t *bits;   /* (n+63)/64 zero words (without replacement only) */
    uint32_t *cnt;    /* n counts (draws sorted by counting) or NULL */
} scratch;

static void scratch_free(scratch *s, int threads)
{
    if (!s)
        return;
    for (int t = 0; t < threads; t++) {
        free(s[t].perm);
        free(s[t].undo);
        free(s[t].idx);
        free(s[t].idx2);
        free(s[t].bits);
        free(s[t].cnt);
    }
    free(s);
}

/* A draw of k of n units with replacement, in ascending order (k == n: a counting pass over
 * cnt, n words; k < n, an m-out-of-n draw: a radix sort of the k; cnt NULL: left in draw
 * order). Every evaluation is a function of the multiset, and one in canonical order is used
 * as it is: the evaluations of one draw (both methods, both lenses) no longer sort it each. */
static void draw_with_sorted(cs_rng *rng, size_t n, size_t k, uint32_t *idx, uint32_t *cnt)
{
    cs_draw_with(rng, n, k, idx);
    if (k < n) {
        cs_sort_u32(idx, k, n < UINT32_MAX ? (uint32_t)n : UINT32_MAX);
        return;
    }
    if (!cnt) return;
    memset(cnt, 0, n * sizeof *cnt);
    for (size_t j = 0; j < k; j++) cnt[idx[j]]++;
    cs_sort_expand_counts(cnt, n, idx, k);
}

static scratch *scratch_new(int threads, size_t n_perm, size_t k, int two)
{
    scratch *s = calloc((size_t)threads, sizeof *s);
    if (!s)
        return NULL;
    for (int t = 0; t < threads; t++) {
        size_t kk = k ? k : 1;
        s[t].idx = malloc(kk * sizeof(uint32_t));
        s[t].idx2 = two ? malloc(kk * sizeof(uint32_t)) : NULL;
        s[t].cnt = malloc(kk * sizeof(uint32_t));   /* NULL: draws left unsorted */
        if (n_perm) {
            s[t].perm = malloc(n_perm * sizeof(uint32_t));
            s[t].undo = malloc(kk * sizeof(uint32_t));
            s[t].bits = calloc((n_perm + 63) / 64, sizeof(uint64_t));
        }
        if (!s[t].idx || (two && !s[t].idx2) ||
            (n_perm && (!s[t].perm || !s[t].undo || !s[t].bits))) {
            scratch_free(s, threads);
            return NULL;
        }
        for (size_t i = 0; i < n_perm; i++)
            s[t].perm[i] = (uint32_t)i;
    }
    return s;
}

/* ---- size curve ------------------------------------------------------------------------- */

typedef struct size_ctx {
    runner rn;
    const cs_evaluator *ev;
    const cs_curve_options *o;
    const cs_curve *c;
    size_t n;
    size_t R;
    scratch *sc;
    double *values;          /* [point][rep][metric] */
} size_ctx;

static void size_task(void *vctx, size_t i, int worker)
{
    size_ctx *x = vctx;
    size_t pt = i / x->R, rep = i % x->R;
    size_t k = x->c->points[pt].rows;
    scratch *s = &x->sc[worker];
    if (!x->o->replace && k == x->n) {
        /* Every row once, in some order: the multiset of the full evaluation, and results do
         * not depend on the order of idx, so the numbers are exactly those on all rows. */
        memcpy(x->values + i * CS_METRIC_COUNT, x->c->points[pt].full,
               CS_METRIC_COUNT * sizeof *x->values);
        cs_runner_tick(&x->rn);
        return;
    }
    cs_rng rng;
    cs_rng_seed(&rng, x->o->seed, STREAM_SIZE, pt, rep);
    if (x->o->replace)
        cs_draw_with(&rng, x->n, k, s->idx);
    else if ((x->n + 63) / 64 <= k + 2048)
        /* the same draw, already in the ascending order cs_evaluate works in */
        cs_draw_without_sorted(&rng, s->perm, x->n, k, s->undo, s->bits, s->idx);
    else
        cs_draw_without(&rng, s->perm, x->n, k, s->undo, s->idx);
    eval_row(&x->rn, x->ev, s->idx, k, x->o->metrics, x->values + i * CS_METRIC_COUNT);
    cs_runner_tick(&x->rn);
}

cs_curve *cs_size_curve(const cs_prepared *p, const cs_curve_options *o, const cs_run *run,
                        cs_error *err)
{
    if (cs_curve_options_check(o, err) != CS_OK || cs_curve_fractions_check(o, err) != CS_OK)
        return NULL;
    if (cs_prepared_count(p) == 0) {
        cs_error_set(err, CS_EEMPTY, 0, 0, "no samples to resample");
        return NULL;
    }
    cs_evaluator ev = rows_evaluator(p);
    size_t binned = cs_prepared_smece_binned(p);
    /* recem: the metrics this file has */
    cs_curve *c = cs_resample_size_curve(&ev, o, cs_metrics_available(p, o->metrics), run, err);
    if (c) cs_curve_mark_too_few(c, cs_prepared_too_few_bins(p));
    if (c) c->smece_binned = cs_prepared_smece_binned(p) > binned;
    return c;
}

cs_curve *cs_resample_size_curve(const cs_evaluator *ev, const cs_curve_options *o,
                                 unsigned mask, const cs_run *run, cs_error *err)
{
    size_t n = ev->n;
    cs_curve_options avail = *o;
    avail.metrics = mask;
    o = &avail;
    cs_curve *c = cs_curve_start(CS_CURVE_SIZE, o, o->n_points, o->metrics, n, err);
    if (!c)
        return NULL;
    size_t R = (size_t)o->repeats, kmax = 0;
    for (size_t i = 0; i < o->n_points; i++) {
        c->points[i].x = o->x[i];
        c->points[i].rows = cs_subset_size(o->x[i], n);
        if (c->points[i].rows > kmax)
            kmax = c->points[i].rows;
    }
    size_ctx x = { .ev = ev, .o = o, .c = c, .n = n, .R = R };
    cs_runner_init(&x.rn, run, o->n_points * R + 1);
    x.values = malloc(o->n_points * R * CS_METRIC_COUNT * sizeof *x.values);
    x.sc = scratch_new(x.rn.threads, o->replace ? 0 : n, kmax, 0);
    if (!x.values || !x.sc) {
        cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
        goto fail;
    }
    double full[CS_METRIC_COUNT];
    if (eval_row(&x.rn, ev, NULL, n, o->metrics, full) == CS_OK) {
        cs_runner_tick(&x.rn);
        for (size_t i = 0; i < o->n_points; i++)
            memcpy(c->points[i].full, full, sizeof full);
        cs_parallel_for(x.rn.threads, o->n_points * R, size_task, &x, x.rn.cancel);
    }
    if (cs_runner_finish(&x.rn, err) != CS_OK || cs_curve_reduce(c, x.values, R, err) != CS_OK)
        goto fail;
    scratch_free(x.sc, x.rn.threads);
    free(x.values);
    return c;
fail:
    scratch_free(x.sc, x.rn.threads);
    free(x.values);
    cs_curve_free(c);
    return NULL;
}

/* ---- bins curve ------------------------------------------------------------------------- */

typedef struct bins_ctx {
    runner rn;
    const cs_evaluator *ev;
    const cs_curve_options *o;
    unsigned mask;
    size_t n, R, np;
    scratch *sc;
    double *values;          /* [point][rep][metric] */
} bins_ctx;

static void bins_task(void *vctx, size_t rep, int worker)
{
    bins_ctx *x = vctx;
    scratch *s = &x->sc[worker];
    cs_rng rng;
    /* One draw per replicate, shared by every M: common random numbers across the curve, and
     * the draw is paid once instead of once per point. */
    cs_rng_seed(&rng, x->o->seed, STREAM_BINS, 0, rep);
    /* sorted once, so that the evaluations of every M take it as it is */
    draw_with_sorted(&rng, x->n, x->n, s->idx, s->cnt);
    double *rows = x->values + rep * CS_METRIC_COUNT;
    cs_runner_fail(&x->rn, x->ev->eval_points(x->ev->ctx, s->idx, x->n, x->mask, x->rn.cancel,
                                              rows, x->R * CS_METRIC_COUNT, x->np));
    for (size_t pt = 0; pt < x->np; pt++)
        cs_runner_tick(&x->rn);
}

cs_status cs_resample_bins_curve(const cs_evaluator *ev, cs_curve *c, const cs_curve_options *o,
                                 const cs_run *run, cs_error *err)
{
    bins_ctx x = { .ev = ev, .o = o, .mask = c->metrics, .n = ev->n, .R = (size_t)o->repeats,
                   .np = c->n_points };
    cs_runner_init(&x.rn, run, x.np * (x.R + 1));
    x.values = malloc(x.np * x.R * CS_METRIC_COUNT * sizeof *x.values);
    x.sc = scratch_new(x.rn.threads, 0, x.n, 0);
    cs_status st;
    if (!x.values || !x.sc) {
        st = cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
        goto done;
    }
    /* every point's value on all units, through the first replicate's rows (overwritten) */
    st = ev->eval_points(ev->ctx, NULL, x.n, x.mask, x.rn.cancel, x.values, CS_METRIC_COUNT, x.np);
    cs_runner_fail(&x.rn, st);
    for (size_t i = 0; i < x.np; i++) {
        memcpy(c->points[i].full, x.values + i * CS_METRIC_COUNT, sizeof c->points[i].full);
        cs_runner_tick(&x.rn);
    }
    if (st == CS_OK)
        cs_parallel_for(x.rn.threads, x.R, bins_task, &x, x.rn.cancel);
    st = cs_runner_finish(&x.rn, err);
    if (st == CS_OK)
        st = cs_curve_reduce(c, x.values, x.R, err);
    if (st == CS_OK)
        cs_curve_flag_stable(c, o->stable_metric);
done:
    scratch_free(x.sc, x.rn.threads);
    free(x.values);
    return st;
}

/* The row datasets' bins-curve evaluator: one prepared problem per point (its M or gamma). */
static cs_status rows_eval_points(const void *ctx, const uint32_t *idx, size_t k, unsigned mask,
                                  const atomic_int *cancel, double *rows, size_t stride, size_t np)
{
    cs_prepared *const *prep = ctx;
    cs_status first = CS_OK;
    for (size_t pt = 0; pt < np; pt++) {
        double *row = rows + pt * stride;
        if (cancel && atomic_load_explicit(cancel, memory_order_relaxed)) {
            for (int m = 0; m < CS_METRIC_COUNT; m++)
                row[m] = NAN;
            continue;
        }
        cs_status st = rows_eval(prep[pt], idx, k, mask, cancel, row);
        if (first == CS_OK) first = st;
    }
    return first;
}

/* ECE_sweep's bin count on all samples of p (the sweep ignores p's M, so any point's
 * preparation gives the same); NAN where the sweep is undefined or the evaluation failed. */
static double full_sweep_bins(const cs_prepared *p, const cs_run *run)
{
    cs_result res;
    cs_error err;
    memset(&res, 0, sizeof res);
    res.ece_sweep_bins = NAN;
    double b = cs_evaluate(p, NULL, cs_prepared_count(p), CS_WANT_SWEEP, run, &res, &err) == CS_OK
                   ? res.ece_sweep_bins : NAN;
    cs_result_free(&res);
    return b;
}

void cs_curve_mark_too_few(cs_curve *c, double bins)
{
    c->too_few_min = c->kind == CS_CURVE_SIZE ? cs_too_few_min(bins, c->by_case) : 0;
    for (size_t i = 0; i < c->n_points; i++) {
        cs_curve_point *pt = &c->points[i];
        size_t units = c->by_case && c->kind == CS_CURVE_BINS ? c->n_cases : pt->rows;
        double b = c->kind == CS_CURVE_SIZE ? bins : c->kdtree ? 1.0 / pt->x : pt->x;
        pt->too_few = cs_too_few(units, b, c->by_case);
    }
}

void cs_curve_flag_stable(cs_curve *c, int metric)
{
    c->stable_metric = -1;
    c->stable_first = c->stable_last = -1;
    if (metric < 0 || metric >= CS_METRIC_COUNT || !(c->metrics & CS_METRIC_BIT(metric)))
        return;
    c->stable_metric = metric;
    c->stable_thin = 0;
    int best_first = -1, best_len = 0, first = -1;
    for (size_t i = 0; i < c->n_points; i++) {
        const cs_stat *s = &c->points[i].stat[metric];
        if (c->kind == CS_CURVE_BINS && c->points[i].too_few) {
            c->stable_thin = 1;   /* too few samples or cases for a claim */
            first = -1;
            continue;
        }
        if (!isfinite(s->mean)) {
            first = -1;
            continue;
        }
        if (first >= 0) {
            const cs_stat *q = &c->points[i - 1].stat[metric];
            double tol = s->sd > q->sd ? s->sd : q->sd;
            if (!(fabs(s->mean - q->mean) <= tol))
                first = (int)i;
        } else {
            first = (int)i;
        }
        int len = (int)i - first + 1;
        if (len > best_len) {
            best_len = len;
            best_first = first;
        }
    }
    if (best_len > 0) {
        c->stable_first = best_first;
        c->stable_last = best_first + best_len - 1;
    }
}

/* What a bins curve refuses before any work: a file without probability rows, bad options,
 * a point that is not a bin count (or a gamma of kd-tree bins). */
static cs_status bins_curve_check(const cs_dataset *d, const cs_settings *s, const cs_curve_options *o,
                                  cs_error *err)
{
    if (cs_dataset_need_rows(d, "this bins curve", err) != CS_OK) return err->code;
    if (cs_curve_options_check(o, err) != CS_OK)
        return err->code;
    int kd = s->binning == CS_BIN_KDTREE;
    for (size_t i = 0; i < o->n_points; i++) {
        double v = o->x[i];
        if (kd ? !(v > 0 && v <= 1) : !(v >= 1 && v <= 1e6 && v == floor(v)))
            return cs_error_set(err, CS_EUSAGE, 0, 0,
                                kd ? "gamma %g is not in (0, 1]" : "bins %g is not an integer >= 1", v);
    }
    return CS_OK;
}

/* s with bins (or kd-tree bins' gamma) set to point x. */
static cs_settings at_point(const cs_settings *s, double x)
{
    cs_settings si = *s;
    if (s->binning == CS_BIN_KDTREE)
        si.gamma = x;
    else
        si.bins = (int)x;
    return si;
}

/* The curve over plan pl: one problem per point (its bins checked where it is made). */
static cs_curve *bins_curve_of(const cs_plan *pl, const cs_curve_options *o, const cs_run *run,
                               cs_error *err)
{
    const cs_settings *s = &pl->s;
    int kd = s->binning == CS_BIN_KDTREE;
    cs_curve *c = NULL;
    cs_prepared **prep = calloc(o->n_points, sizeof *prep);
    if (!prep) {
        cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < o->n_points; i++) {
        cs_settings si = at_point(s, o->x[i]);
        prep[i] = cs_prepare_planned(pl, &si, err);
        if (!prep[i])
            goto done;
    }
    size_t n = cs_prepared_count(prep[0]);
    cs_curve_options avail = *o;   /* recem: the metrics this file has, at every M */
    avail.metrics = o->metrics;
    for (size_t i = 0; i < o->n_points; i++)
        avail.metrics = cs_metrics_available(prep[i], avail.metrics);
    c = cs_curve_start(CS_CURVE_BINS, &avail, avail.n_points, avail.metrics, n, err);
    if (!c)
        goto done;
    c->kdtree = kd;
    for (size_t i = 0; i < o->n_points; i++) {
        c->points[i].x = o->x[i];
        c->points[i].rows = n;
    }
    cs_curve_mark_too_few(c, 0);
    cs_evaluator ev = { .n = n, .ctx = prep, .eval_points = rows_eval_points };
    if (cs_resample_bins_curve(&ev, c, &avail, run, err) != CS_OK) {
        cs_curve_free(c);
        c = NULL;
        goto done;
    }
    c->sweep_bins = full_sweep_bins(prep[0], run);
done:
    for (size_t i = 0; i < o->n_points; i++)
        cs_prepared_free(prep[i]);
    free(prep);
    return c;
}

cs_curve *cs_bins_curve(const cs_dataset *d, const cs_settings *s, const cs_curve_options *o,
                        const cs_run *run, cs_error *err)
{
    if (bins_curve_check(d, s, o, err) != CS_OK) return NULL;
    /* the plan of the first point: its settings are what the first problem is checked on */
    cs_settings s0 = at_point(s, o->x[0]);
    cs_plan *pl = cs_plan_new(d, &s0, err);
    if (!pl) return NULL;
    cs_curve *c = bins_curve_of(pl, o, run, err);
    cs_plan_free(pl);
    return c;
}

cs_curve *cs_bins_curve_planned(const cs_plan *pl, const cs_curve_options *o, const cs_run *run,
                                cs_error *err)
{
    if (bins_curve_check(pl->d, &pl->s, o, err) != CS_OK) return NULL;
    return bins_curve_of(pl, o, run, err);
}

/* ---- confidence intervals ---------------------------------------------------------------- */

typedef struct ci_ctx {
    runner rn;
    const cs_evaluator *ev;
    unsigned mask;
    uint64_t seed;
    size_t n, m;             /* units; units per draw (cs_boot_draw_size) */
    scratch *sc;
    double *values;          /* [rep][metric] */
} ci_ctx;

static void ci_task(void *vctx, size_t i, int worker)
{
    ci_ctx *x = vctx;
    scratch *s = &x->sc[worker];
    cs_rng rng;
    cs_rng_seed(&rng, x->seed, STREAM_CI, 0, i);
    draw_with_sorted(&rng, x->n, x->m, s->idx, s->cnt);
    eval_row(&x->rn, x->ev, s->idx, x->m, x->mask, x->values + i * CS_METRIC_COUNT);
    cs_runner_tick(&x->rn);
}

/* BCa's jackknife: task g evaluates every sample whose group is not g (in ascending order). */
typedef struct jack_ctx {
    runner *rn;
    const cs_evaluator *ev;
    unsigned mask;
    size_t n;
    const uint8_t *group;    /* n entries, 0..groups-1 */
    scratch *sc;
    double *values;          /* [group][metric] */
} jack_ctx;

static void jack_task(void *vctx, size_t g, int worker)
{
    jack_ctx *x = vctx;
    uint32_t *idx = x->sc[worker].idx;
    size_t k = 0;
    for (size_t i = 0; i < x->n; i++)
        if (x->group[i] != g)
            idx[k++] = (uint32_t)i;
    eval_row(x->rn, x->ev, idx, k, x->mask, x->values + g * CS_METRIC_COUNT);
    cs_runner_tick(x->rn);
}

void cs_jack_groups(size_t n, size_t G, uint64_t seed, uint32_t *perm, uint8_t *group)
{
    if (n == G) {
        for (size_t i = 0; i < n; i++)
            group[i] = (uint8_t)i;
    } else {
        /* a shuffle, then consecutive runs of it: run g = positions [g·n/G, (g+1)·n/G) */
        cs_rng rng;
        cs_rng_seed(&rng, seed, STREAM_JACK, 0, 0);
        for (size_t i = 0; i < n; i++)
            perm[i] = (uint32_t)i;
        for (size_t i = n - 1; i > 0; i--) {
            size_t j = (size_t)cs_rng_below(&rng, i + 1);
            uint32_t t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        for (size_t g = 0; g < G; g++)
            for (size_t i = g * n / G; i < (g + 1) * n / G; i++)
                group[perm[i]] = (uint8_t)g;
    }
}

/* Jackknife values of every metric: leave-one-out when n <= CS_CI_JACK_GROUPS, else leave out
 * one of CS_CI_JACK_GROUPS groups of a seeded random partition (sizes differ by at most one).
 * Returns the group count, 0 on ENOMEM (values then owned by nobody). */
static size_t jackknife(runner *rn, const cs_evaluator *ev, unsigned mask, size_t n, uint64_t seed,
                        scratch *sc, double **values)
{
    size_t G = n <= CS_CI_JACK_GROUPS ? n : CS_CI_JACK_GROUPS;
    uint8_t *group = malloc(n * sizeof *group);
    uint32_t *perm = n > G ? malloc(n * sizeof *perm) : NULL;
    *values = malloc(G * CS_METRIC_COUNT * sizeof **values);
    if (!group || (n > G && !perm) || !*values) {
        free(group);
        free(perm);
        free(*values);
        *values = NULL;
        return 0;
    }
    cs_jack_groups(n, G, seed, perm, group);
    free(perm);
    jack_ctx x = { rn, ev, mask, n, group, sc, *values };
    cs_parallel_for(rn->threads, G, jack_task, &x, rn->cancel);
    free(group);
    return G;
}

/* The method's interval of every metric from the resampled values[rep][metric]; col and tmp
 * hold R doubles, jcol G. */
void cs_ci_finish(cs_ci *out, const double *values, size_t R, const double *jack, size_t G,
                      double *col, double *tmp, double *jcol)
{
    for (int m = 0; m < CS_METRIC_COUNT; m++) {
        double v = out->value[m];
        out->z0[m] = out->accel[m] = NAN;
        if (!(out->metrics & CS_METRIC_BIT(m))) {
            out->lo[m] = out->hi[m] = out->boot_mean[m] = NAN;
            continue;
        }
        cs_stat st;
        for (size_t r = 0; r < R; r++)
            col[r] = values[r * CS_METRIC_COUNT + (size_t)m];
        cs_stat_compute(col, R, v, tmp, &st);   /* leaves tmp[0..count) sorted */
        out->boot_mean[m] = st.mean;
        if (out->method == CS_CI_BASIC) {
            /* reflected endpoints can leave the metric's range: clipped to it (every metric is
             * >= 0, accuracy <= 1) */
            out->lo[m] = fmax(2 * v - st.hi, 0.0);
            out->hi[m] = 2 * v - st.lo;
            if (m == CS_METRIC_ACCURACY) out->hi[m] = fmin(out->hi[m], 1.0);
        } else if (out->method == CS_CI_BCA) {
            for (size_t g = 0; g < G; g++)
                jcol[g] = jack[g * CS_METRIC_COUNT + (size_t)m];
            cs_ci_bca(tmp, st.count, v, jcol, G, &out->lo[m], &out->hi[m], &out->z0[m], &out->accel[m]);
        } else {
            out->lo[m] = st.lo;
            out->hi[m] = st.hi;
        }
    }
}

cs_status cs_bootstrap_interval(const cs_prepared *p, unsigned metrics, int repeats,
                                uint64_t seed, cs_ci_method method, const cs_run *run,
                                cs_ci *out, cs_error *err)
{
    cs_evaluator ev = rows_evaluator(p);
    size_t binned = cs_prepared_smece_binned(p);
    const cs_settings *s = cs_prepared_settings(p);
    size_t draw = cs_boot_draw_size(ev.n, s->boot_size, s->bins);
    /* recem: the metrics this file has */
    cs_status st = cs_resample_interval(&ev, cs_metrics_available(p, metrics), repeats, seed, method,
                                        draw, "no samples to resample", run, out, err);
    if (st == CS_OK) out->smece_binned = cs_prepared_smece_binned(p) > binned;
    return st;
}

/* The metrics a draw of m of n units evaluates: under m < n only those of ok, which have an
 * m-out-of-n interval (the others' intervals are NAN: cs_boot_shrink). */
static unsigned draw_mask(unsigned ok, unsigned mask, size_t m, size_t n)
{
    return m < n ? (mask & ok) | CS_EVAL_DRAW : mask;
}

cs_status cs_resample_interval(const cs_evaluator *ev, unsigned metrics, int repeats, uint64_t seed,
                               cs_ci_method method, size_t draw, const char *empty_msg,
                               const cs_run *run, cs_ci *out, cs_error *err)
{
    memset(out, 0, sizeof *out);
    if (cs_resample_repeats_check(repeats, err) != CS_OK)
        return err->code;
    if (method < 0 || method >= CS_CI_METHOD_COUNT)
        return cs_error_set(err, CS_EUSAGE, 0, 0, "unknown interval method %d", (int)method);
    ci_ctx x = { .ev = ev, .mask = metrics, .seed = seed, .n = ev->n };
    if (x.n == 0 && empty_msg)
        return cs_error_set(err, CS_EEMPTY, 0, 0, "%s", empty_msg);
    size_t R = (size_t)repeats;
    size_t G = method == CS_CI_BCA ? (x.n <= CS_CI_JACK_GROUPS ? x.n : CS_CI_JACK_GROUPS) : 0;
    x.m = method == CS_CI_BCA || draw == 0 || draw > x.n ? x.n : draw;   /* BCa's jackknife is on all n */
    x.mask = draw_mask(ev->m_of_n, metrics, x.m, x.n);
    cs_runner_init(&x.rn, run, R + 1 + G);
    x.values = malloc(R * CS_METRIC_COUNT * sizeof *x.values);
    /* the jackknife's subsets take up to n units */
    x.sc = scratch_new(x.rn.threads, 0, G ? x.n : x.m, 0);
    double *col = malloc(R * sizeof *col), *tmp = malloc(R * sizeof *tmp), *jack = NULL;
    double *jcol = malloc((G ? G : 1) * sizeof *jcol);
    cs_status st;
    if (!x.values || !x.sc || !col || !tmp || !jcol) {
        st = cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
        goto done;
    }
    if (eval_row(&x.rn, ev, NULL, x.n, metrics, out->value) == CS_OK) {
        cs_runner_tick(&x.rn);
        if (x.mask & ~CS_EVAL_DRAW) cs_parallel_for(x.rn.threads, R, ci_task, &x, x.rn.cancel);
        else no_values(x.values, R);   /* no metric has an interval from these draws */
        if (G && !cs_runner_cancelled(&x.rn) && jackknife(&x.rn, ev, metrics, x.n, seed, x.sc, &jack) == 0) {
            st = cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
            goto done;
        }
    }
    st = cs_runner_finish(&x.rn, err);
    if (st == CS_OK) {
        out->metrics = metrics;
        out->repeats = repeats;
        out->method = method;
        out->jack_groups = G;
        out->draw_size = x.m;
        out->units = x.n;
        out->m_of_n = ev->m_of_n;
        cs_boot_shrink(x.values, R, out->value, x.m, x.n, ev->m_of_n);
        cs_ci_finish(out, x.values, R, jack, G, col, tmp, jcol);
    }
done:
    scratch_free(x.sc, x.rn.threads);
    free(x.values);
    free(col);
    free(tmp);
    free(jack);
    free(jcol);
    return st;
}

cs_status cs_bootstrap_ci(const cs_prepared *p, unsigned metrics, int repeats, uint64_t seed,
                          const cs_run *run, cs_ci *out, cs_error *err)
{
    return cs_bootstrap_interval(p, metrics, repeats, seed, CS_CI_PERCENTILE, run, out, err);
}

/* ---- paired comparison ------------------------------------------------------------------ */

typedef struct cmp_ctx {
    runner rn;
    const cs_evaluator *a, *b;
    const uint32_t *ia, *ib;   /* NULL: pair t is unit t of both */
    size_t n, m;             /* pairs; pairs per draw (cs_boot_draw_size) */
    unsigned mask;
    uint64_t seed;
    scratch *sc;
    double *va, *vb;         /* [rep][metric] */
} cmp_ctx;

static void cmp_task(void *vctx, size_t i, int worker)
{
    cmp_ctx *x = vctx;
    scratch *s = &x->sc[worker];
    cs_rng rng;
    cs_rng_seed(&rng, x->seed, STREAM_COMPARE, 0, i);
    /* sorted: pairs in a's sample order (ia ascending) stay sorted through ia */
    draw_with_sorted(&rng, x->n, x->m, s->idx, s->cnt);
    for (size_t t = 0; t < x->m; t++) {
        uint32_t j = s->idx[t];
        if (x->ia && x->ib && t + 16 < x->m) {   /* scattered when m < n: fetch ahead */
            __builtin_prefetch(&x->ia[s->idx[t + 16]]);
            __builtin_prefetch(&x->ib[s->idx[t + 16]]);
        }
        s->idx[t] = x->ia ? x->ia[j] : j;
        s->idx2[t] = x->ib ? x->ib[j] : j;
    }
    if (eval_row(&x->rn, x->a, s->idx, x->m, x->mask, x->va + i * CS_METRIC_COUNT) == CS_OK)
        eval_row(&x->rn, x->b, s->idx2, x->m, x->mask, x->vb + i * CS_METRIC_COUNT);
    else
        for (int m = 0; m < CS_METRIC_COUNT; m++)
            x->vb[i * CS_METRIC_COUNT + (size_t)m] = NAN;
    cs_runner_tick(&x->rn);
}

void cs_compare_entry_fill(cs_compare_entry *e, int m, double fa, double fb, const double *va_all,
                           const double *vb_all, size_t R, double *col, double *tmp)
{
    size_t better = 0, worse = 0, tied = 0, valid = 0;
    for (size_t r = 0; r < R; r++) {
        double va = va_all[r * CS_METRIC_COUNT + (size_t)m];
        double vb = vb_all[r * CS_METRIC_COUNT + (size_t)m];
        col[r] = va - vb;
        if (isfinite(va) && isfinite(vb)) {
            /* differences inside the tie band are rounding noise, not "better" */
            int c = cs_metric_compare(m, va, vb);
            valid++;
            better += c > 0;
            worse += c < 0;
            tied += c == 0;
        }
    }
    cs_stat stat;
    e->metric = m;
    e->a = fa;
    e->b = fb;
    e->diff = fa - fb;
    cs_stat_compute(col, R, e->diff, tmp, &stat);
    e->lo = stat.lo;
    e->hi = stat.hi;
    e->p_better = valid ? (double)better / (double)valid : NAN;
    e->p_equal = valid ? (double)tied / (double)valid : NAN;
    e->p_worse = valid ? (double)worse / (double)valid : NAN;
    e->equal = valid && tied == valid && isfinite(e->diff) && cs_metric_compare(m, fa, fb) == 0;
}

/* b naming a's classes in another order is read in a's order (pair.c): *view receives that
 * view of b, or stays NULL when b's order is a's. */
static cs_status class_order_b(const cs_dataset *a, const cs_dataset *b, cs_dataset **view, cs_error *err)
{
    uint32_t *cls = malloc((a->k ? a->k : 1) * sizeof *cls);
    int moved = cls ? cs_compare_class_map(a, b, cls) : -1;
    if (moved == 1 && !(*view = cs_class_order_view(b, cls, err))) moved = -1;
    free(cls);
    if (moved < 0) return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
    return CS_OK;
}

/* The pairs both preparations kept: ia[t] in pa and ib[t] in pb are one sample, in a's
 * order; *n receives their count. a_to_b maps a's rows to b's (UINT32_MAX: no partner);
 * b_prep (b_rows entries) is scratch. */
static cs_status paired_indices(const cs_prepared *pa, const cs_prepared *pb, const uint32_t *a_to_b,
                                uint32_t *b_prep, size_t b_rows, uint32_t **ia, uint32_t **ib, size_t *n,
                                cs_error *err)
{
    size_t na = cs_prepared_count(pa), nb = cs_prepared_count(pb);
    const uint32_t *ra = cs_prepared_rows(pa), *rb = cs_prepared_rows(pb);
    for (size_t i = 0; i < b_rows; i++)
        b_prep[i] = UINT32_MAX;
    for (size_t i = 0; i < nb; i++)
        b_prep[rb[i]] = (uint32_t)i;
    *ia = malloc((na ? na : 1) * sizeof **ia);
    *ib = malloc((na ? na : 1) * sizeof **ib);
    if (!*ia || !*ib) return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
    for (size_t i = 0; i < na; i++) {
        uint32_t rowb = a_to_b[ra[i]];
        if (rowb != UINT32_MAX && b_prep[rowb] != UINT32_MAX) {
            (*ia)[*n] = (uint32_t)i;
            (*ib)[*n] = b_prep[rowb];
            (*n)++;
        }
    }
    if (*n == 0) return cs_error_set(err, CS_EEMPTY, 0, 0, "compare: no sample is selected in both files");
    return CS_OK;
}

/* 1 when pair t is sample t of both problems, every sample paired (rows paired by row, no
 * selection): the draws then need no mapping through ia and ib. */
static int identity_pairs(const uint32_t *ia, const uint32_t *ib, size_t n, size_t na, size_t nb)
{
    if (n != na || n != nb) return 0;
    for (size_t t = 0; t < n; t++)
        if (ia[t] != t || ib[t] != t) return 0;
    return 1;
}

cs_status cs_compare_rows(const cs_dataset *a, const cs_dataset *b, const cs_settings *s,
                          unsigned metrics, int repeats, uint64_t seed, const cs_run *run,
                          cs_compare *out, cs_error *err)
{
    if (cs_dataset_need_rows(a->stats ? a : b, "a paired comparison with a prediction file", err) != CS_OK) {
        memset(out, 0, sizeof *out);
        return err->code;
    }
    memset(out, 0, sizeof *out);
    if (cs_resample_repeats_check(repeats, err) != CS_OK)
        return err->code;
    cs_prepared *pa = NULL, *pb = NULL;
    uint32_t *a_to_b = malloc((a->n ? a->n : 1) * sizeof *a_to_b);
    uint32_t *b_prep = malloc((b->n ? b->n : 1) * sizeof *b_prep);
    uint32_t *ia = NULL, *ib = NULL;
    size_t n = 0;
    cs_dataset *b_view = NULL;
    cs_status st;
    if (!a_to_b || !b_prep) {
        st = cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
        goto done;
    }
    if ((st = cs_compare_pair(a, b, a_to_b, &out->by_id, err)) != CS_OK) goto done;
    if ((st = class_order_b(a, b, &b_view, err)) != CS_OK) goto done;
    if (b_view) b = b_view;
    if (!(pa = cs_prepare(a, s, err)) || !(pb = cs_prepare(b, s, err))) {
        st = err->code;
        goto done;
    }
    metrics = cs_metrics_available(pa, cs_metrics_available(pb, metrics));   /* recem */
    if ((st = paired_indices(pa, pb, a_to_b, b_prep, b->n, &ia, &ib, &n, err)) != CS_OK) goto done;
    cs_evaluator ea = rows_evaluator(pa), eb = rows_evaluator(pb);
    int same = identity_pairs(ia, ib, n, cs_prepared_count(pa), cs_prepared_count(pb));
    st = cs_resample_compare(&ea, &eb, same ? NULL : ia, same ? NULL : ib, n, metrics, repeats, seed,
                             cs_boot_draw_size(n, s->boot_size, s->bins), run, out, err);
    if (st == CS_OK) out->smece_binned = cs_prepared_smece_binned(pa) + cs_prepared_smece_binned(pb) > 0;
done:
    free(ia);
    free(ib);
    free(a_to_b);
    free(b_prep);
    cs_prepared_free(pa);
    cs_prepared_free(pb);
    cs_class_order_view_free(b_view);
    return st;
}

/* The values on all n pairs of a (units ia) and of b (units ib), one task each. */
typedef struct {
    runner *rn;
    const cs_evaluator *ev;
    const uint32_t *idx;
    size_t n;
    unsigned mask;
    double *row;
    cs_status st;
} value_job;

static void value_task(void *vctx, size_t i, int worker)
{
    (void)worker;
    value_job *j = (value_job *)vctx + i;
    j->st = eval_row(j->rn, j->ev, j->idx, j->n, j->mask, j->row);
}

static cs_status both_values(runner *rn, const cs_evaluator *a, const uint32_t *ia,
                             const cs_evaluator *b, const uint32_t *ib, size_t n, unsigned mask,
                             double *fa, double *fb)
{
    value_job j[2] = {{rn, a, ia, n, mask, fa, CS_ECANCELLED}, {rn, b, ib, n, mask, fb, CS_ECANCELLED}};
    cs_parallel_for(rn->threads, 2, value_task, j, rn->cancel);
    return j[0].st != CS_OK ? j[0].st : j[1].st;
}

cs_status cs_resample_compare(const cs_evaluator *a, const cs_evaluator *b, const uint32_t *ia,
                              const uint32_t *ib, size_t n, unsigned mask, int repeats,
                              uint64_t seed, size_t draw, const cs_run *run, cs_compare *out,
                              cs_error *err)
{
    size_t R = (size_t)repeats;
    cmp_ctx x = { .a = a, .b = b, .ia = ia, .ib = ib, .n = n, .m = draw == 0 || draw > n ? n : draw,
                  .seed = seed };
    x.mask = draw_mask(a->m_of_n & b->m_of_n, mask, x.m, x.n);
    cs_runner_init(&x.rn, run, R + 1);
    x.va = malloc(R * CS_METRIC_COUNT * sizeof *x.va);
    x.vb = malloc(R * CS_METRIC_COUNT * sizeof *x.vb);
    x.sc = scratch_new(x.rn.threads, 0, x.m, 1);
    double *col = malloc(R * sizeof *col), *tmp = malloc(R * sizeof *tmp);
    cs_status st;
    if (!x.va || !x.vb || !x.sc || !col || !tmp) {
        st = cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
        goto done;
    }
    double fa[CS_METRIC_COUNT], fb[CS_METRIC_COUNT];
    if (both_values(&x.rn, a, ia, b, ib, x.n, mask, fa, fb) == CS_OK) {
        cs_runner_tick(&x.rn);
        if (x.mask & ~CS_EVAL_DRAW) {
            cs_parallel_for(x.rn.threads, R, cmp_task, &x, x.rn.cancel);
        } else {   /* no metric has an interval from these draws */
            no_values(x.va, R);
            no_values(x.vb, R);
        }
    }
    st = cs_runner_finish(&x.rn, err);
    if (st != CS_OK)
        goto done;
    out->n_pairs = x.n;
    out->repeats = repeats;
    out->draw_size = x.m;
    out->m_of_n = a->m_of_n & b->m_of_n;
    cs_boot_shrink(x.va, R, fa, x.m, x.n, out->m_of_n);
    cs_boot_shrink(x.vb, R, fb, x.m, x.n, out->m_of_n);
    for (int m = 0; m < CS_METRIC_COUNT; m++) {
        if (!(mask & CS_METRIC_BIT(m)))
            continue;
        cs_compare_entry_fill(&out->entries[out->n_entries++], m, fa[m], fb[m], x.va, x.vb, R,
                              col, tmp);
    }
done:
    scratch_free(x.sc, x.rn.threads);
    free(x.va);
    free(x.vb);
    free(col);
    free(tmp);
    return st;
}
