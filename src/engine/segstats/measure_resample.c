/* calscope engine: resampling cases of a statistics file — bootstrap intervals, the size and
 * bins curves (measure_resample.h) and the paired comparison (cs_segstats_compare).
 *
 * Replicate r draws its cases from the row engine's stream for the same use
 * (cs_rng_seed(seed, STREAM_*, point, r), ci_internal.h) and writes its own slot; summaries
 * are reduced in index order on the caller's thread, so a seed gives the same numbers for any
 * thread count. A draw becomes case weights (how often each case was drawn); the replicate's
 * statistics are the weighted sums (seg_eval). */
#include "calscope/segmeasure.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calscope/resample.h"
#include "engine/resample/ci_internal.h"
#include "engine/segstats/measure_resample.h"
#include "engine/segstats/segstats_internal.h"

/* ---- run state and per-thread scratch --------------------------------------------------- */

typedef cs_runner runner;

typedef struct scratch {
    uint32_t *idx, *w, *perm, *undo;
} scratch;

static void scratch_free(scratch *s, int threads)
{
    for (int t = 0; s && t < threads; t++) {
        free(s[t].idx);
        free(s[t].w);
        free(s[t].perm);
        free(s[t].undo);
    }
    free(s);
}

static scratch *scratch_new(int threads, size_t na)
{
    scratch *s = calloc((size_t)threads, sizeof *s);
    size_t n = na ? na : 1;
    for (int t = 0; s && t < threads; t++) {
        s[t].idx = malloc(n * sizeof(uint32_t));
        s[t].w = malloc(n * sizeof(uint32_t));
        s[t].perm = malloc(n * sizeof(uint32_t));
        s[t].undo = malloc(n * sizeof(uint32_t));
        if (!s[t].idx || !s[t].w || !s[t].perm || !s[t].undo) {
            scratch_free(s, threads);
            return NULL;
        }
        for (size_t i = 0; i < na; i++) s[t].perm[i] = (uint32_t)i;
    }
    return s;
}

/* The drawn cases idx[0..k) as weights over the na active cases. */
static const uint32_t *weights(scratch *s, size_t na, size_t k)
{
    memset(s->w, 0, (na ? na : 1) * sizeof *s->w);
    for (size_t j = 0; j < k; j++) s->w[s->idx[j]]++;
    return s->w;
}

/* The metrics of mask on the weighted cases into row[] (NAN elsewhere, and where the draw
 * holds no voxel). */
static void eval_row(runner *rn, const seg_prob *p, const uint32_t *w, unsigned mask, double *row)
{
    cs_result r;
    cs_error err;
    cs_status st = seg_eval(p, w, -1, cs_metric_want(mask), 0, &r, &err);
    for (int m = 0; m < CS_METRIC_COUNT; m++)
        row[m] = st == CS_OK && (mask & CS_METRIC_BIT(m)) ? cs_metric_value(&r, m) : NAN;
    if (st == CS_OK) cs_result_free(&r);
    else if (st != CS_EEMPTY) cs_runner_fail(rn, st);
}

static cs_status nomem(cs_error *err)
{
    return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
}

/* ---- intervals -------------------------------------------------------------------------- */

typedef struct ci_ctx {
    runner rn;
    const seg_prob *p;
    unsigned mask;
    uint64_t seed;
    scratch *sc;
    double *values;          /* [rep][metric] */
    const uint8_t *group;    /* jackknife: case groups */
    double *jack;            /* [group][metric] */
} ci_ctx;

static void ci_task(void *vctx, size_t i, int worker)
{
    ci_ctx *x = vctx;
    scratch *s = &x->sc[worker];
    cs_rng rng;
    cs_rng_seed(&rng, x->seed, STREAM_CI, 0, i);
    cs_draw_with(&rng, x->p->na, x->p->na, s->idx);
    eval_row(&x->rn, x->p, weights(s, x->p->na, x->p->na), x->mask, x->values + i * CS_METRIC_COUNT);
    cs_runner_tick(&x->rn);
}

/* Jackknife group g: every case whose group is not g, once. */
static void jack_task(void *vctx, size_t g, int worker)
{
    ci_ctx *x = vctx;
    scratch *s = &x->sc[worker];
    for (size_t a = 0; a < x->p->na; a++) s->w[a] = x->group[a] != g;
    eval_row(&x->rn, x->p, s->w, x->mask, x->jack + g * CS_METRIC_COUNT);
    cs_runner_tick(&x->rn);
}

cs_status seg_interval(const seg_prob *p, unsigned mask, int repeats, uint64_t seed,
                       cs_ci_method method, const cs_run *run, cs_ci *out, cs_error *err)
{
    memset(out, 0, sizeof *out);
    if (cs_resample_repeats_check(repeats, err)) return err->code;
    if (method < 0 || method >= CS_CI_METHOD_COUNT)
        return cs_error_set(err, CS_EUSAGE, 0, 0, "unknown interval method %d", (int)method);
    size_t R = (size_t)repeats, na = p->na;
    size_t G = method == CS_CI_BCA ? (na <= CS_CI_JACK_GROUPS ? na : CS_CI_JACK_GROUPS) : 0;
    ci_ctx x = { .p = p, .mask = mask, .seed = seed };
    cs_runner_init(&x.rn, run, R + 1 + G);
    x.values = malloc(R * CS_METRIC_COUNT * sizeof *x.values);
    x.sc = scratch_new(x.rn.threads, na);
    double *col = malloc(R * sizeof *col), *tmp = malloc(R * sizeof *tmp);
    double *jcol = malloc((G ? G : 1) * sizeof *jcol);
    x.jack = malloc((G ? G : 1) * CS_METRIC_COUNT * sizeof *x.jack);
    uint8_t *group = malloc(na ? na : 1);
    uint32_t *perm = malloc((na ? na : 1) * sizeof *perm);
    cs_status st;
    if (!x.values || !x.sc || !col || !tmp || !jcol || !x.jack || !group || !perm) {
        st = nomem(err);
        goto done;
    }
    eval_row(&x.rn, p, NULL, mask, out->value);
    cs_runner_tick(&x.rn);
    cs_parallel_for(x.rn.threads, R, ci_task, &x, x.rn.cancel);
    if (G && !cs_runner_cancelled(&x.rn)) {
        cs_jack_groups(na, G, seed, perm, group);
        x.group = group;
        cs_parallel_for(x.rn.threads, G, jack_task, &x, x.rn.cancel);
    }
    st = cs_runner_finish(&x.rn, err);
    if (st == CS_OK) {
        out->metrics = mask;
        out->repeats = repeats;
        out->method = method;
        out->jack_groups = G;
        cs_ci_finish(out, x.values, R, x.jack, G, col, tmp, jcol);
    }
done:
    scratch_free(x.sc, x.rn.threads);
    free(x.values);
    free(col);
    free(tmp);
    free(jcol);
    free(x.jack);
    free(group);
    free(perm);
    return st;
}

/* ---- curves ----------------------------------------------------------------------------- */

static cs_status check_curve(const seg_prob *p, const cs_curve_options *o, unsigned *mask,
                             cs_error *err)
{
    if (cs_curve_options_check(o, err) != CS_OK) return err->code;
    return seg_metric_mask(p->st, o->metrics, "curve", mask, err);
}

typedef struct curve_ctx {
    runner rn;
    const seg_prob *const *probs;   /* one for all points */
    const int *M;                    /* bins: the M of each point */
    const cs_curve_options *o;
    const cs_curve *c;
    unsigned mask;
    size_t R;
    scratch *sc;
    double *values;                  /* [point][rep][metric] */
} curve_ctx;

static void size_task(void *vctx, size_t i, int worker)
{
    curve_ctx *x = vctx;
    size_t pt = i / x->R, rep = i % x->R, na = x->probs[0]->na, k = x->c->points[pt].rows;
    double *row = x->values + i * CS_METRIC_COUNT;
    if (!x->o->replace && k == na) {
        /* every case once: the full value */
        memcpy(row, x->c->points[pt].full, CS_METRIC_COUNT * sizeof *row);
    } else {
        scratch *s = &x->sc[worker];
        cs_rng rng;
        cs_rng_seed(&rng, x->o->seed, STREAM_SIZE, pt, rep);
        if (x->o->replace) cs_draw_with(&rng, na, k, s->idx);
        else cs_draw_without(&rng, s->perm, na, k, s->undo, s->idx);
        eval_row(&x->rn, x->probs[0], weights(s, na, k), x->mask, row);
    }
    cs_runner_tick(&x->rn);
}

cs_curve *seg_size_curve(const seg_prob *p, const cs_curve_options *o, const cs_run *run,
                         cs_error *err)
{
    unsigned mask;
    if (check_curve(p, o, &mask, err)) return NULL;
    for (size_t i = 0; i < o->n_points; i++)
        if (!(o->x[i] > 0 && o->x[i] <= 1)) {
            cs_error_set(err, CS_EUSAGE, 0, 0, "fraction %g is not in (0, 1]", o->x[i]);
            return NULL;
        }
    if (p->na == 0) {
        cs_error_set(err, CS_EEMPTY, 0, 0, "no cases to resample");
        return NULL;
    }
    cs_curve *c = cs_curve_start(CS_CURVE_SIZE, o, o->n_points, mask, p->na, err);
    if (!c) return NULL;
    size_t R = (size_t)o->repeats;
    curve_ctx x = { .probs = &p, .o = o, .c = c, .mask = mask, .R = R };
    cs_runner_init(&x.rn, run, o->n_points * R + 1);
    x.values = malloc(o->n_points * R * CS_METRIC_COUNT * sizeof *x.values);
    x.sc = scratch_new(x.rn.threads, p->na);
    if (!x.values || !x.sc) {
        nomem(err);
        goto fail;
    }
    double full[CS_METRIC_COUNT];
    eval_row(&x.rn, p, NULL, mask, full);
    cs_runner_tick(&x.rn);
    for (size_t i = 0; i < o->n_points; i++) {
        c->points[i].x = o->x[i];
        c->points[i].rows = cs_subset_size(o->x[i], p->na);   /* cases, the unit */
        memcpy(c->points[i].full, full, sizeof full);
    }
    cs_parallel_for(x.rn.threads, o->n_points * R, size_task, &x, x.rn.cancel);
    if (cs_runner_finish(&x.rn, err) || cs_curve_reduce(c, x.values, R, err)) goto fail;
    scratch_free(x.sc, x.rn.threads);
    free(x.values);
    return c;
fail:
    scratch_free(x.sc, x.rn.threads);
    free(x.values);
    cs_curve_free(c);
    return NULL;
}

/* The metrics of mask on the weighted cases at every M of the bins curve into rows[pt]
 * (stride `stride` doubles; NAN where the draw holds no voxel). */
static void eval_bins_rows(runner *rn, const seg_prob *p, const uint32_t *w, const int *M,
                           size_t np, unsigned mask, double *rows, size_t stride)
{
    cs_result r[CS_CURVE_MAX_POINTS];
    cs_error err;
    cs_status st = seg_eval_bins(p, w, M, np, cs_metric_want(mask), r, &err);
    for (size_t pt = 0; pt < np; pt++)
        for (int m = 0; m < CS_METRIC_COUNT; m++)
            rows[pt * stride + (size_t)m] = st == CS_OK && (mask & CS_METRIC_BIT(m))
                                                ? cs_metric_value(&r[pt], m) : NAN;
    for (size_t pt = 0; pt < np; pt++) cs_result_free(&r[pt]);
    if (st != CS_OK && st != CS_EEMPTY) cs_runner_fail(rn, st);
}

static void bins_task(void *vctx, size_t rep, int worker)
{
    curve_ctx *x = vctx;
    scratch *s = &x->sc[worker];
    size_t na = x->probs[0]->na, np = x->c->n_points;
    double *row = x->values + rep * CS_METRIC_COUNT;
    if (cs_runner_cancelled(&x->rn)) {
        for (size_t pt = 0; pt < np; pt++)
            for (int m = 0; m < CS_METRIC_COUNT; m++) row[pt * x->R * CS_METRIC_COUNT + (size_t)m] = NAN;
        return;
    }
    cs_rng rng;
    /* one draw per replicate, shared by every M (common random numbers, as the row engine),
     * pooled once at the finest M and coarsened to the others */
    cs_rng_seed(&rng, x->o->seed, STREAM_BINS, 0, rep);
    cs_draw_with(&rng, na, na, s->idx);
    eval_bins_rows(&x->rn, x->probs[0], weights(s, na, na), x->M, np, x->mask, row,
                   x->R * CS_METRIC_COUNT);
    for (size_t pt = 0; pt < np; pt++) cs_runner_tick(&x->rn);
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
    const seg_prob *pp = &fine;
    cs_curve *c = NULL;
    size_t R = (size_t)o->repeats;
    curve_ctx x = { .probs = &pp, .o = o, .mask = mask, .R = R, .M = M };
    uint8_t *keep = calloc(p->st->n_cases ? p->st->n_cases : 1, 1);
    if (!keep) { nomem(err); return NULL; }
    for (size_t a = 0; a < p->na; a++) keep[p->act[a]] = 1;
    int made = seg_prob_init(&fine, p->st, &p->s, (int)L, keep, err) == CS_OK;
    free(keep);
    if (!made) return NULL;
    fine.cls = p->cls;
    c = cs_curve_start(CS_CURVE_BINS, o, np, mask, (size_t)voxels, err);
    if (!c) goto fail;
    x.c = c;
    cs_runner_init(&x.rn, run, np * (R + 1));
    x.values = malloc(np * R * CS_METRIC_COUNT * sizeof *x.values);
    x.sc = scratch_new(x.rn.threads, p->na);
    if (!x.values || !x.sc) {
        nomem(err);
        goto fail;
    }
    for (size_t i = 0; i < np; i++) {
        c->points[i].x = M[i];
        c->points[i].rows = (size_t)voxels;
    }
    eval_bins_rows(&x.rn, &fine, NULL, M, np, mask, x.values, CS_METRIC_COUNT);
    for (size_t i = 0; i < np; i++) {
        memcpy(c->points[i].full, x.values + i * CS_METRIC_COUNT, sizeof c->points[i].full);
        cs_runner_tick(&x.rn);
    }
    cs_parallel_for(x.rn.threads, R, bins_task, &x, x.rn.cancel);
    if (cs_runner_finish(&x.rn, err) || cs_curve_reduce(c, x.values, R, err)) goto fail;
    cs_curve_flag_stable(c, o->stable_metric);
    goto done;
fail:
    cs_curve_free(c);
    c = NULL;
done:
    scratch_free(x.sc, x.rn.threads);
    free(x.values);
    seg_prob_free(&fine);
    return c;
}

/* ---- paired comparison ------------------------------------------------------------------ */

typedef struct cmp_ctx {
    runner rn;
    const seg_prob *pa, *pb;
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
    cs_draw_with(&rng, x->pa->na, x->pa->na, s->idx);
    const uint32_t *w = weights(s, x->pa->na, x->pa->na);
    eval_row(&x->rn, x->pa, w, x->mask, x->va + i * CS_METRIC_COUNT);
    eval_row(&x->rn, x->pb, w, x->mask, x->vb + i * CS_METRIC_COUNT);
    cs_runner_tick(&x->rn);
}

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
    size_t R = (size_t)repeats;
    cmp_ctx x = { .pa = &pa, .pb = &pb, .mask = mask, .seed = seed };
    cs_runner_init(&x.rn, run, R + 1);
    x.va = malloc(R * CS_METRIC_COUNT * sizeof *x.va);
    x.vb = malloc(R * CS_METRIC_COUNT * sizeof *x.vb);
    x.sc = scratch_new(x.rn.threads, pa.na);
    double *col = malloc(R * sizeof *col), *tmp = malloc(R * sizeof *tmp);
    double fa[CS_METRIC_COUNT], fb[CS_METRIC_COUNT];
    uint64_t va = 0, vb = 0;
    for (size_t i = 0; i < pa.na; i++) { va += pa.vox[i]; vb += pb.vox[i]; }
    if (!x.va || !x.vb || !x.sc || !col || !tmp) {
        st = nomem(err);
        goto done;
    }
    if (va == 0 || vb == 0) {
        st = cs_error_set(err, CS_EEMPTY, 0, 0, "compare: no sample is selected in both files");
        goto done;
    }
    eval_row(&x.rn, &pa, NULL, mask, fa);
    eval_row(&x.rn, &pb, NULL, mask, fb);
    cs_runner_tick(&x.rn);
    cs_parallel_for(x.rn.threads, R, cmp_task, &x, x.rn.cancel);
    st = cs_runner_finish(&x.rn, err);
    if (st) goto done;
    out->by_id = 1;
    out->n_pairs = pa.na;
    out->repeats = repeats;
    for (int m = 0; m < CS_METRIC_COUNT; m++)
        if (mask & CS_METRIC_BIT(m))
            cs_compare_entry_fill(&out->entries[out->n_entries++], m, fa[m], fb[m], x.va, x.vb, R,
                                  col, tmp);
done:
    scratch_free(x.sc, x.rn.threads);
    free(x.va);
    free(x.vb);
    free(col);
    free(tmp);
    seg_prob_free(&pa);
    seg_prob_free(&pb);
    return st;
}
