/* calscope engine: a statistics file as an evaluator of the resampling engine
 * (engine/resample/evaluator.h): the active cases are the units a draw picks. Bootstrap
 * intervals, the size and bins curves (stats_resample.h) and the paired comparison
 * (cs_segstats_compare) are resample/'s drivers on it, so replicate r draws the same stream as
 * on a prediction file and a seed gives the same numbers for any thread count.
 *
 * A draw becomes case weights (how often each case was drawn); the replicate's statistics are
 * the weighted sums (seg_eval). A draw that holds no voxel gives a NAN row, not an error. */
#include "calscope/segmeasure.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/resample/ci_internal.h"
#include "engine/resample/evaluator.h"
#include "engine/measure/stats_resample.h"
#include "engine/segstats/segstats_internal.h"

/* The draw idx[0..k) as weights over the na active cases in *w (malloc'd; NULL when idx is:
 * every case once, as seg_eval takes it). CS_OK or CS_ENOMEM. */
static cs_status draw_weights(size_t na, const uint32_t *idx, size_t k, uint32_t **w)
{
    *w = NULL;
    if (!idx) return CS_OK;
    *w = calloc(na ? na : 1, sizeof **w);
    if (!*w) return CS_ENOMEM;
    for (size_t j = 0; j < k; j++) (*w)[idx[j]]++;
    return CS_OK;
}

/* The evaluator of a seg_prob (ctx): the metrics of mask on the drawn cases. */
static cs_status stats_eval(const void *ctx, const uint32_t *idx, size_t k, unsigned mask,
                            const atomic_int *cancel, double *row)
{
    const seg_prob *p = ctx;
    (void)cancel;   /* one weighted sum: quick */
    uint32_t *w;
    cs_result r;
    cs_error err;
    cs_status st = draw_weights(p->na, idx, k, &w);
    if (st == CS_OK) st = seg_eval(p, w, -1, cs_metric_want(mask), 0, &r, &err);
    for (int m = 0; m < CS_METRIC_COUNT; m++)
        row[m] = st == CS_OK && (mask & CS_METRIC_BIT(m)) ? cs_metric_value(&r, m) : NAN;
    if (st == CS_OK) cs_result_free(&r);
    free(w);
    return st == CS_EEMPTY ? CS_OK : st;
}

static cs_evaluator stats_evaluator(const seg_prob *p)
{
    return (cs_evaluator){ .n = p->na, .ctx = p, .eval = stats_eval };
}

/* A bins curve's evaluator: the cases pooled once at the finest M and coarsened to each M. */
typedef struct stats_points {
    const seg_prob *p;
    const int *M;
} stats_points;

static cs_status stats_eval_points(const void *ctx, const uint32_t *idx, size_t k, unsigned mask,
                                   const atomic_int *cancel, double *rows, size_t stride, size_t np)
{
    const stats_points *sp = ctx;
    cs_result r[CS_CURVE_MAX_POINTS];
    cs_error err;
    uint32_t *w = NULL;
    int cancelled = cancel && atomic_load_explicit(cancel, memory_order_relaxed);
    cs_status st = cancelled ? CS_ECANCELLED : draw_weights(sp->p->na, idx, k, &w);
    int evaluated = st == CS_OK;
    if (evaluated) st = seg_eval_bins(sp->p, w, sp->M, np, cs_metric_want(mask), r, &err);
    for (size_t pt = 0; pt < np; pt++)
        for (int m = 0; m < CS_METRIC_COUNT; m++)
            rows[pt * stride + (size_t)m] = st == CS_OK && (mask & CS_METRIC_BIT(m))
                                                ? cs_metric_value(&r[pt], m) : NAN;
    if (evaluated)
        for (size_t pt = 0; pt < np; pt++) cs_result_free(&r[pt]);
    free(w);
    return st == CS_EEMPTY || st == CS_ECANCELLED ? CS_OK : st;
}

static cs_status nomem(cs_error *err)
{
    return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
}

/* ---- intervals -------------------------------------------------------------------------- */

cs_status seg_interval(const seg_prob *p, unsigned mask, int repeats, uint64_t seed,
                       cs_ci_method method, const cs_run *run, cs_ci *out, cs_error *err)
{
    cs_evaluator ev = stats_evaluator(p);
    /* cases: every draw takes all of them */
    return cs_resample_interval(&ev, mask, repeats, seed, method, 0, NULL, run, out, err);
}

/* ---- curves ----------------------------------------------------------------------------- */

static cs_status check_curve(const seg_prob *p, const cs_curve_options *o, unsigned *mask,
                             cs_error *err)
{
    if (cs_curve_options_check(o, err) != CS_OK) return err->code;
    return seg_metric_mask(p->st, o->metrics, "curve", mask, err);
}

cs_curve *seg_size_curve(const seg_prob *p, const cs_curve_options *o, const cs_run *run,
                         cs_error *err)
{
    unsigned mask;
    if (check_curve(p, o, &mask, err) || cs_curve_fractions_check(o, err)) return NULL;
    if (p->na == 0) {
        cs_error_set(err, CS_EEMPTY, 0, 0, "no cases to resample");
        return NULL;
    }
    cs_evaluator ev = stats_evaluator(p);
    cs_curve *c = cs_resample_size_curve(&ev, o, mask, run, err);
    if (c) {
        c->by_case = 1;   /* a point's rows are the cases it draws */
        cs_curve_mark_too_few(c, 0);
    }
    return c;
}

/* The M of the curve: the default list keeps its divisors of F; an M asked for that does not
 * divide F is refused. */
static cs_status bins_points(const seg_prob *p, const cs_curve_options *o, int *M, size_t *n,
                             cs_error *err)
{
    cs_curve_options d;
    cs_curve_options_bins_default(&d, 0);
    int is_default = o->n_points == d.n_points &&
                     memcmp(o->x, d.x, d.n_points * sizeof *d.x) == 0;
    *n = 0;
    for (size_t i = 0; i < o->n_points; i++) {
        double v = o->x[i];
        if (!(v >= 1 && v <= 1e6 && v == floor(v)))
            return cs_error_set(err, CS_EUSAGE, 0, 0, "bins %g is not an integer >= 1", v);
        if (p->st->fine % (int)v == 0) M[(*n)++] = (int)v;
        else if (!is_default) return seg_check_bins(p->st, (int)v, err);
    }
    if (*n == 0) return seg_check_bins(p->st, (int)o->x[0], err);
    return CS_OK;
}

static size_t gcd(size_t a, size_t b)
{
    while (b) {
        size_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

cs_curve *seg_bins_curve(const seg_prob *p, const cs_curve_options *o, const cs_run *run,
                         cs_error *err)
{
    unsigned mask;
    int M[CS_CURVE_MAX_POINTS];
    size_t np;
    if (check_curve(p, o, &mask, err) || bins_points(p, o, M, &np, err)) return NULL;
    uint64_t voxels = 0;
    for (size_t a = 0; a < p->na; a++) voxels += p->vox[a];
    if (voxels == 0) {
        cs_error_set(err, CS_EEMPTY, 0, 0, "no samples to resample");
        return NULL;
    }
    /* the cases at L = lcm of the M (a divisor of F, as every M is): each replicate pools them
     * once there and coarsens to every M, instead of pooling a coarsened copy per M (at the
     * default list L = F and, with every case selected, the file's own arrays: no copy) */
    size_t L = 1;
    for (size_t i = 0; i < np; i++) L = L / gcd(L, (size_t)M[i]) * (size_t)M[i];
    seg_prob fine;
    cs_curve *c = NULL;
    uint8_t *keep = calloc(p->st->n_cases ? p->st->n_cases : 1, 1);
    if (!keep) { nomem(err); return NULL; }
    for (size_t a = 0; a < p->na; a++) keep[p->act[a]] = 1;
    int made = seg_prob_init(&fine, p->st, &p->s, (int)L, keep, err) == CS_OK;
    free(keep);
    if (!made) return NULL;
    fine.cls = p->cls;
    c = cs_curve_start(CS_CURVE_BINS, o, np, mask, (size_t)voxels, err);
    if (!c) goto done;
    for (size_t i = 0; i < np; i++) {
        c->points[i].x = M[i];
        c->points[i].rows = (size_t)voxels;
    }
    c->by_case = 1;
    c->n_cases = fine.na;
    cs_curve_mark_too_few(c, 0);
    stats_points sp = { &fine, M };
    cs_evaluator ev = { .n = fine.na, .ctx = &sp, .eval_points = stats_eval_points };
    if (cs_resample_bins_curve(&ev, c, o, run, err) != CS_OK) {
        cs_curve_free(c);
        c = NULL;
    }
done:
    seg_prob_free(&fine);
    return c;
}

/* ---- paired comparison ------------------------------------------------------------------ */

/* The line of a statistics file that names its classes (format: README "Statistics files"),
 * and the column of class j on it. */
#define CLASSES_LINE 5
#define CLASS_COL(j) ((j) + 3)

/* CS_OK when a and b have the same kind and classes, in order; else, as the per-sample compare
 * says it (cs_compare_pair), the first class without a partner at its column of the classes
 * line of the file that has it. */
static cs_status same_classes(const cs_segstats *a, const char *na, const cs_segstats *b,
                              const char *nb, cs_error *err)
{
    const cs_segstats *more = a->k > b->k ? a : b;
    const char *nm = more == a ? na : nb;
    size_t j = a->k < b->k ? a->k : b->k;
    if (a->k == b->k) {
        if (a->kind != b->kind)
            return cs_error_set(err, CS_EINPUT, 3, 2, "%s:3:2: --compare: %s holds %s channels, %s"
                                " %s (a paired comparison needs the same classes)", nb, na,
                                cs_segstats_kind_name(a->kind), nb, cs_segstats_kind_name(b->kind));
        for (j = 0; j < a->k && strcmp(a->class_names[j], b->class_names[j]) == 0; j++) {}
        if (j == a->k) return CS_OK;
        return cs_error_set(err, CS_EINPUT, CLASSES_LINE, (long)CLASS_COL(j), "%s:%d:%zu:"
                            " --compare: class '%.200s' has no partner: class %zu of %s is"
                            " '%.200s'", nb, CLASSES_LINE, CLASS_COL(j), b->class_names[j], j, na,
                            a->class_names[j]);
    }
    return cs_error_set(err, CS_EINPUT, CLASSES_LINE, (long)CLASS_COL(j), "%s:%d:%zu: --compare:"
                        " class '%.200s' has no partner: %s has %zu classes, %s has %zu", nm,
                        CLASSES_LINE, CLASS_COL(j), more->class_names[j], na, a->k, nb, b->k);
}

/* CS_OK when a and b hold the same case names (both ascending, segstats.h). */
static cs_status same_cases(const cs_segstats *a, const char *na, const cs_segstats *b,
                            const char *nb, cs_error *err)
{
    size_t i = 0, j = 0;
    while (i < a->n_cases || j < b->n_cases) {
        int c = i == a->n_cases ? 1 : j == b->n_cases ? -1
                                                      : strcmp(a->case_names[i], b->case_names[j]);
        if (c < 0)
            return cs_error_set(err, CS_EINPUT, 0, 0, "%s: case '%.200s' is not in %s (a paired"
                                " comparison needs the same cases)", na, a->case_names[i], nb);
        if (c > 0)
            return cs_error_set(err, CS_EINPUT, 0, 0, "%s: case '%.200s' is not in %s (a paired"
                                " comparison needs the same cases)", nb, b->case_names[j], na);
        i++;
        j++;
    }
    return CS_OK;
}

cs_status cs_segstats_compare(const cs_segstats *a, const char *name_a, const cs_segstats *b,
                              const char *name_b, const cs_settings *s, unsigned metrics,
                              int repeats, uint64_t seed, const cs_run *run, cs_compare *out,
                              cs_error *err)
{
    memset(out, 0, sizeof *out);
    size_t ca = 0, cb = 0;
    unsigned mask, mask_b;
    if (cs_resample_repeats_check(repeats, err) || seg_check_settings(a, s, &ca, err) ||
        seg_check_settings(b, s, &cb, err) || seg_metric_mask(a, metrics, "--compare", &mask, err) ||
        seg_metric_mask(b, metrics, "--compare", &mask_b, err) ||
        same_classes(a, name_a, b, name_b, err) || same_cases(a, name_a, b, name_b, err))
        return err->code;
    mask &= mask_b;
    uint8_t *keep = seg_select(a, s, err);   /* same names, same order: a's mask fits b */
    if (!keep) return err->code;
    seg_prob pa, pb;
    cs_status st = seg_prob_init(&pa, a, s, s->bins, keep, err);
    if (st) { free(keep); return st; }
    st = seg_prob_init(&pb, b, s, s->bins, keep, err);
    free(keep);
    if (st) { seg_prob_free(&pa); return st; }
    pa.cls = ca;
    pb.cls = cb;
    uint64_t va = 0, vb = 0;
    for (size_t i = 0; i < pa.na; i++) { va += pa.vox[i]; vb += pb.vox[i]; }
    if (va == 0 || vb == 0) {
        st = cs_error_set(err, CS_EEMPTY, 0, 0, "compare: no sample is selected in both files");
    } else {
        /* pair t is case t of both (same names, same order) */
        cs_evaluator ea = stats_evaluator(&pa), eb = stats_evaluator(&pb);
        st = cs_resample_compare(&ea, &eb, NULL, NULL, pa.na, mask, repeats, seed, 0, run, out, err);
        if (st == CS_OK) out->by_id = 1;
    }
    seg_prob_free(&pa);
    seg_prob_free(&pb);
    return st;
}
