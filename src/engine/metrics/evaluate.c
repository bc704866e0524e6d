/* cs_evaluate: binning + metrics over a subset of prepared samples.
 *
 * Order independence: the items are put in ascending order first (cs_mx_canonical; idx NULL
 * = all samples in order, never materialised by the uniform scalar path, scores and RECE-G),
 * and every sum runs in that order (equal-mass groups: in rank order, which is the same
 * canonical order), so a multiset gives bit-identical numbers however idx is permuted.
 *
 * Bin tables (cs_result.bins):
 * - uniform, scalar lens: all M bins, empty ones with count 0 and conf/acc/gap NAN;
 * - mass: the non-empty groups (when N < M the last groups are empty and left out), lo/hi
 *   the smallest/largest value in the group;
 * - kdtree: the leaves in pre-order, lo/hi the range of the first coordinate;
 * - uniform grid on a vector lens: the non-empty cells in lexicographic cell order, lo/hi
 *   the cell's interval on the first coordinate;
 * - classwise: uniform and mass bins pooled over classes (bin i of every class together);
 *   no table for kdtree (the trees differ per class).
 * conf/acc are mean first coordinates; gap is the bin's distance under the settings.
 * ACE/MCE with l2 are the mean / max of the per-bin Euclidean gaps. */
#include "mx.h"
#include "engine/metrics/estimators.h"
#include "engine/metrics/smece.h"

#include <stdlib.h>
#include <string.h>

static cs_status nomem(cs_error *err, const char *what)
{
    return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory (%s)", what);
}

/* The stable order of the lens's values (top1 = 0) or of the top-1 confidence (top1 = 1) and
 * its inverse, built on first use. rank NULL: the inverse is not wanted (a full evaluation
 * reads the order only), and it is then not built: n 32-bit words less at the peak. */
static int lazy_order(cs_prepared *p, int top1, const double **v, const uint8_t **t,
                      const uint32_t **order, const uint32_t **rank)
{
    int rc = 0;
    uint32_t **po, **pr;
    pthread_mutex_lock(&p->lock);
    if (!top1 || p->kind == CS_LENS_TOP1) {
        *v = p->v; *t = p->t;
        po = &p->order_v; pr = &p->rank_v;
    } else {
        if (!p->v1) {
            double *v1 = malloc(p->n * sizeof *v1);
            uint8_t *t1 = malloc(p->n);
            if (!v1 || !t1) { free(v1); free(t1); rc = -1; }
            else {
                for (size_t i = 0; i < p->n; i++) {
                    v1[i] = p->d->conf[p->rows[i]];
                    t1[i] = p->d->correct[p->rows[i]];
                }
                p->v1 = v1;
                p->t1 = t1;
            }
        }
        *v = p->v1; *t = p->t1;
        po = &p->order_c; pr = &p->rank_c;
    }
    if (!rc && !*po) rc = cs_sort_order(*v, p->n, po, NULL);
    if (!rc && rank && !*pr) {
        uint32_t *r = malloc((p->n ? p->n : 1) * sizeof *r);
        if (!r) rc = -1;
        else {
            for (size_t i = 0; i < p->n; i++) r[(*po)[i]] = (uint32_t)i;
            *pr = r;
        }
    }
    *order = *po;
    if (rank) *rank = *pr;
    pthread_mutex_unlock(&p->lock);
    return rc;
}

/* lazy_order(p, 0, ...) without the rank, and when this call is the one that sorts (the
 * order was not built yet), the lens's values in that order in sorted[0..n) too (from the
 * sort's own keys: cs_sort_order_values), *got = 1; otherwise sorted is untouched, *got = 0.
 * 0, or -1 out of memory. */
static int lazy_order_values(cs_prepared *p, const double **v, const uint8_t **t,
                             const uint32_t **order, double *sorted, int *got,
                             cs_sort_share *share)
{
    int rc = 0;
    *got = 0;
    pthread_mutex_lock(&p->lock);
    *v = p->v;
    *t = p->t;
    if (!p->order_v) {
        rc = cs_sort_order_values_shared(p->v, p->n, &p->order_v, sorted, share);
        *got = rc == 0;
    }
    *order = p->order_v;
    pthread_mutex_unlock(&p->lock);
    return rc;
}

/* The values and targets of lazy_order(p, top1) in their rank order (vs[r] = v[order[r]]),
 * built on first use: a subset's AECE groups and its estimators' block read them in sequence
 * instead of through order[]. The top1 lens's own values are its top-1 confidences: one copy. */
static int lazy_sorted_vt(cs_prepared *p, int top1, const double **vs, const uint8_t **ts)
{
    const double *v; const uint8_t *t; const uint32_t *o;
    if (lazy_order(p, top1, &v, &t, &o, NULL) != 0) return -1;
    int c = top1 || p->kind == CS_LENS_TOP1;
    double **pv = c ? &p->vs_c : &p->vs_v;
    uint8_t **pt = c ? &p->ts_c : &p->ts_v;
    pthread_mutex_lock(&p->lock);
    if (!*pv) {
        double *a = malloc((p->n ? p->n : 1) * sizeof *a);
        uint8_t *b = malloc(p->n ? p->n : 1);
        if (a && b) {
            for (size_t k = 0; k < p->n; k++) {
                a[k] = v[o[k]];
                b[k] = t[o[k]];
            }
            *pv = a;
            *pt = b;
            a = NULL;
            b = NULL;
        }
        free(a);
        free(b);
    }
    *vs = *pv;
    *ts = *pt;
    pthread_mutex_unlock(&p->lock);
    return *vs ? 0 : -1;
}

const uint32_t *cs_mx_order_v(cs_prepared *p)
{
    const double *v; const uint8_t *t; const uint32_t *o;
    return lazy_order(p, 0, &v, &t, &o, NULL) ? NULL : o;
}

const uint32_t *cs_mx_rank_v(cs_prepared *p)
{
    const double *v; const uint8_t *t; const uint32_t *o, *r;
    return lazy_order(p, 0, &v, &t, &o, &r) ? NULL : r;
}

/* Items sorted by value through the precomputed ranks: a counting pass, not a sort. */
static uint32_t *mass_order(const uint32_t *items, size_t ni, const uint32_t *order,
                            const uint32_t *rank, size_t n_all)
{
    uint32_t *k = malloc(ni * sizeof *k);
    if (!k) return NULL;
    for (size_t j = 0; j < ni; j++) k[j] = rank[items[j]];
    if (cs_sort_u32(k, ni, (uint32_t)n_all) != 0) { free(k); return NULL; }
    for (size_t j = 0; j < ni; j++) k[j] = order[k[j]];
    return k;
}

static size_t *mass_starts(size_t ni, int M, size_t *ng)
{
    size_t G = (size_t)M < ni ? (size_t)M : ni;   /* empty groups (N < M) are left out */
    size_t *st = malloc((G + 1) * sizeof *st);
    if (!st) return NULL;
    for (size_t g = 0; g <= G; g++) st[g] = g < G ? cs_mx_split_start(ni, (size_t)M, g) : ni;
    *ng = G;
    return st;
}

static double get_v(const void *ctx, uint32_t i, size_t j)
{
    (void)j;
    return ((const double *)ctx)[i];
}

static double get_vec(const void *ctx, uint32_t i, size_t j)
{
    return cs_mx_coord(ctx, i, j);
}

/* Scalar problem (v, t by sample index) under mass or kdtree; bins malloc'd. */
static cs_status scalar_adaptive(const cs_settings *s, const double *v, const uint8_t *t,
                                 const uint32_t *items, size_t ni, const uint32_t *order_all,
                                 const uint32_t *rank_all, size_t n_all, cs_bin **bins,
                                 size_t *nb, cs_error *err)
{
    uint32_t *order = NULL;
    size_t *starts = NULL, ng = 0;
    if (s->binning == CS_BIN_MASS) {
        order = mass_order(items, ni, order_all, rank_all, n_all);
        starts = order ? mass_starts(ni, s->bins, &ng) : NULL;
    } else {
        if (cs_mx_kdtree(items, ni, 1, get_v, v, s->gamma, &order, &starts, &ng) != 0)
            order = NULL;
    }
    cs_bin *b = order && starts ? malloc((ng ? ng : 1) * sizeof *b) : NULL;
    if (!b) { free(order); free(starts); return nomem(err, "bins"); }
    cs_mx_scalar_groups(s, v, t, order, starts, ng, b);
    free(order);
    free(starts);
    *bins = b;
    *nb = ng;
    return CS_OK;
}

/* ---- classwise ---- */

/* See mx.h: the one place the uniform class-wise sums become values, whoever made them. */
cs_status cs_mx_cw_values(const cs_settings *s, size_t K, size_t M, const size_t *cnt,
                          const size_t *pos, const double *sv, size_t ni, cs_mx_agg *agg,
                          cs_bin **bins, size_t *nb, cs_error *err)
{
    cs_mx_agg sum = {0, 0, 0};
    double *e = malloc((M + 1) * sizeof *e);
    cs_bin *cb = malloc(M * sizeof *cb), *pool = bins ? malloc(M * sizeof *pool) : NULL;
    if (!e || !cb || (bins && !pool)) {
        free(e); free(cb); free(pool);
        return nomem(err, "classwise");
    }
    cs_mx_edges(e, (int)M);
    for (size_t c = 0; c < K; c++) {
        for (size_t b = 0; b < M; b++) {
            size_t n = cnt[c * M + b];
            cb[b].count = n;
            cb[b].conf = n ? sv[c * M + b] / (double)n : NAN;
            cb[b].acc = n ? (double)pos[c * M + b] / (double)n : NAN;
            cb[b].gap = n ? cs_mx_scalar_gap(s, cb[b].conf, cb[b].acc) : NAN;
        }
        cs_mx_agg a = cs_mx_aggregate(s, cb, M, ni);
        sum.ece += a.ece; sum.ace += a.ace; sum.mce += a.mce;
    }
    if (bins) {
        for (size_t b = 0; b < M; b++) {
            size_t n = 0, np = 0;
            double s1 = 0.0;
            for (size_t c = 0; c < K; c++) {
                n += cnt[c * M + b]; np += pos[c * M + b]; s1 += sv[c * M + b];
            }
            pool[b].lo = e[b];
            pool[b].hi = e[b + 1];
            pool[b].count = n;
            pool[b].conf = n ? s1 / (double)n : NAN;
            pool[b].acc = n ? (double)np / (double)n : NAN;
            pool[b].gap = n ? cs_mx_scalar_gap(s, pool[b].conf, pool[b].acc) : NAN;
        }
        *bins = pool;
        *nb = M;
    }
    free(e); free(cb);
    *agg = sum;
    return CS_OK;
}

/* Uniform class-wise bins: one pass of sums over every class (cs_mx_classwise_sums), then
 * their values (cs_mx_cw_values); sum receives the per-class totals. */
static cs_status classwise_uniform(const cs_prepared *p, const cs_settings *s, const uint32_t *items, size_t ni,
                                   const atomic_int *cancel, cs_mx_agg *sum, cs_bin **bins, size_t *nb,
                                   cs_error *err)
{
    size_t K = p->d->k, M = (size_t)s->bins;
    double *e = malloc((M + 1) * sizeof *e);
    size_t *cnt = calloc(K * M, sizeof *cnt), *pos = calloc(K * M, sizeof *pos);
    double *sv = calloc(K * M, sizeof *sv);
    if (!e || !cnt || !pos || !sv) {
        free(e); free(cnt); free(pos); free(sv);
        return nomem(err, "classwise");
    }
    cs_mx_edges(e, (int)M);
    int ur = cs_mx_classwise_sums(p, items, ni, e, M, cancel, cnt, pos, sv);
    cs_status rc = ur == 0 ? cs_mx_cw_values(s, K, M, cnt, pos, sv, ni, sum, bins, nb, err)
                 : ur < 0 ? nomem(err, "classwise")
                          : cs_error_set(err, CS_ECANCELLED, 0, 0, "cancelled");
    free(e); free(cnt); free(pos); free(sv);
    return rc;
}

/* Class c's scalar bins over the items: v and t receive the class's column (probability,
 * is-this-label); under mass binning the items are ordered by that column first. */
static cs_status class_bins(const cs_prepared *p, const cs_settings *s, size_t c, double *v, uint8_t *t,
                            const uint32_t *items, size_t ni, cs_bin **cb, size_t *ncb, cs_error *err)
{
    const cs_dataset *d = p->d;
    size_t K = d->k;
    for (size_t i = 0; i < p->n; i++) {
        v[i] = d->prob[(size_t)p->rows[i] * K + c];
        t[i] = d->label[p->rows[i]] == (int32_t)c;
    }
    if (s->binning != CS_BIN_MASS) return scalar_adaptive(s, v, t, items, ni, NULL, NULL, p->n, cb, ncb, err);
    /* the rows in a stable order of this class's value, and each row's place in it */
    uint32_t *order = NULL, *rank = NULL;
    if (cs_sort_order(v, p->n, &order, &rank) != 0) return nomem(err, "classwise");
    cs_status rc = scalar_adaptive(s, v, t, items, ni, order, rank, p->n, cb, ncb, err);
    free(order);
    free(rank);
    return rc;
}

/* Adds one class's bins to the pooled mass table: group g of every class together. */
static void pool_add(cs_bin *pool, double *pv, double *pt, const cs_bin *cb, size_t ncb)
{
    for (size_t g = 0; g < ncb; g++) {
        pool[g].count += cb[g].count;
        pv[g] += cb[g].conf * (double)cb[g].count;
        pt[g] += cb[g].acc * (double)cb[g].count;
        if (cb[g].lo < pool[g].lo) pool[g].lo = cb[g].lo;
        if (cb[g].hi > pool[g].hi) pool[g].hi = cb[g].hi;
    }
}

/* The pooled table's values; empty groups are dropped. Returns the groups kept. */
static size_t pool_finish(const cs_settings *s, cs_bin *pool, const double *pv, const double *pt, size_t G)
{
    size_t used = 0;
    for (size_t g = 0; g < G; g++)
        if (pool[g].count) {
            double n = (double)pool[g].count;
            pool[used] = pool[g];
            pool[used].conf = pv[g] / n;
            pool[used].acc = pt[g] / n;
            pool[used].gap = cs_mx_scalar_gap(s, pool[used].conf, pool[used].acc);
            used++;
        }
    return used;
}

/* Adaptive (mass, kd-tree) class-wise bins: each class binned on its own column; under mass
 * binning with bins asked for, a pooled table of group g of every class. */
static cs_status classwise_adaptive(const cs_prepared *p, const cs_settings *s, const uint32_t *items, size_t ni,
                                    const atomic_int *cancel, cs_mx_agg *sum, cs_bin **bins, size_t *nb,
                                    cs_error *err)
{
    size_t K = p->d->k, G = (size_t)s->bins;
    double *v = malloc(p->n * sizeof *v);
    uint8_t *t = malloc(p->n);
    cs_bin *pool = (bins && s->binning == CS_BIN_MASS) ? calloc(G, sizeof *pool) : NULL;
    double *pv = pool ? calloc(G, sizeof *pv) : NULL, *pt = pool ? calloc(G, sizeof *pt) : NULL;
    if (!v || !t || (pool && (!pv || !pt)) ||
        (bins && s->binning == CS_BIN_MASS && !pool)) {
        free(v); free(t); free(pool); free(pv); free(pt);
        return nomem(err, "classwise");
    }
    for (size_t g = 0; g < G && pool; g++) { pool[g].lo = INFINITY; pool[g].hi = -INFINITY; }
    cs_status rc = CS_OK;
    for (size_t c = 0; c < K && rc == CS_OK; c++) {
        if (cs_mx_cancelled(cancel)) { rc = cs_error_set(err, CS_ECANCELLED, 0, 0, "cancelled"); break; }
        cs_bin *cb = NULL;
        size_t ncb = 0;
        rc = class_bins(p, s, c, v, t, items, ni, &cb, &ncb, err);
        if (rc != CS_OK) break;
        cs_mx_agg a = cs_mx_aggregate(s, cb, ncb, ni);
        sum->ece += a.ece; sum->ace += a.ace; sum->mce += a.mce;
        if (pool) pool_add(pool, pv, pt, cb, ncb);
        free(cb);
    }
    size_t used = pool ? pool_finish(s, pool, pv, pt, G) : 0;
    free(v); free(t); free(pv); free(pt);
    if (rc != CS_OK) { free(pool); return rc; }
    if (bins) { *bins = pool; *nb = used; }
    return CS_OK;
}

static cs_status classwise(const cs_prepared *p, const cs_settings *s, const uint32_t *items,
                           size_t ni, const atomic_int *cancel, cs_mx_agg *agg, cs_bin **bins,
                           size_t *nb, cs_error *err)
{
    size_t K = p->d->k;
    cs_mx_agg sum = {0, 0, 0};
    cs_status rc = s->binning == CS_BIN_UNIFORM ? classwise_uniform(p, s, items, ni, cancel, &sum, bins, nb, err)
                                                : classwise_adaptive(p, s, items, ni, cancel, &sum, bins, nb, err);
    if (rc != CS_OK) return rc;
    agg->ece = sum.ece / (double)K;
    agg->ace = sum.ace / (double)K;
    agg->mce = sum.mce / (double)K;
    return CS_OK;
}

/* Uniform scalar bins from their sums (count, sum of v, sum of t per bin) -> out. */
static cs_status uniform_finish(const cs_settings *s, size_t ni, const double *e,
                                const size_t *cnt, const double *sv, const size_t *st,
                                cs_result *out, cs_error *err)
{
    size_t M = (size_t)s->bins;
    cs_bin *bins = malloc(M * sizeof *bins);
    if (!bins) return nomem(err, "bins");
    for (size_t b = 0; b < M; b++) {
        size_t n = cnt[b];
        bins[b].count = n;
        bins[b].lo = e[b];
        bins[b].hi = e[b + 1];
        bins[b].conf = n ? sv[b] / (double)n : NAN;
        bins[b].acc = n ? (double)st[b] / (double)n : NAN;
        bins[b].gap = n ? cs_mx_scalar_gap(s, bins[b].conf, bins[b].acc) : NAN;
    }
    cs_mx_agg a = cs_mx_aggregate(s, bins, M, ni);
    out->ece = a.ece; out->ace = a.ace; out->mce = a.mce;
    out->bins = bins;
    out->n_bins = M;
    return CS_OK;
}

cs_status cs_mx_binned(const cs_prepared *cp, const uint32_t *items, size_t ni,
                       const atomic_int *cancel, cs_result *out, cs_error *err)
{
    cs_prepared *p = (cs_prepared *)cp;   /* lazy caches only */
    const cs_settings *s = &p->s;
    cs_bin *bins = NULL;
    size_t nb = 0;
    cs_status rc = CS_OK;
    cs_mx_agg a;
    if (!items && (p->vector || s->binning != CS_BIN_UNIFORM)) {
        /* NULL items (all samples) are read directly only by the uniform paths, scalar and
         * class-wise (whose subsets read cells made once: a whole evaluation makes none) */
        uint32_t *all = malloc((ni ? ni : 1) * sizeof *all);
        if (!all) return nomem(err, "bins");
        for (size_t j = 0; j < ni; j++) all[j] = (uint32_t)j;
        rc = cs_mx_binned(cp, all, ni, cancel, out, err);
        free(all);
        return rc;
    }
    if (p->kind == CS_LENS_CLASSWISE) {
        rc = classwise(p, s, items, ni, cancel, &a, &bins, &nb, err);
        if (rc != CS_OK) return rc;
        out->ece = a.ece; out->ace = a.ace; out->mce = a.mce;
        out->bins = bins; out->n_bins = nb;
        return CS_OK;
    }
    if (s->binning == CS_BIN_UNIFORM && !p->vector) {
        size_t M = (size_t)s->bins;
        double *sv = calloc(M, sizeof *sv), *e = malloc((M + 1) * sizeof *e);
        size_t *st = calloc(M, sizeof *st), *cnt = calloc(M, sizeof *cnt);
        if (!sv || !e || !st || !cnt) { free(sv); free(e); free(st); free(cnt); return nomem(err, "bins"); }
        cs_mx_edges(e, (int)M);
        int ur = cs_mx_uniform_sums(p, items, ni, e, (int)M, cnt, sv, st, cancel);
        rc = ur < 0 ? nomem(err, "bins")
             : ur > 0 ? cs_error_set(err, CS_ECANCELLED, 0, 0, "cancelled")
             : uniform_finish(s, ni, e, cnt, sv, st, out, err);
        free(sv); free(e); free(st); free(cnt);
        return rc;
    } else if (s->binning == CS_BIN_UNIFORM) {
        rc = cs_mx_vector_grid(p, items, ni, &bins, &nb, err);
    } else if (!p->vector) {
        const double *v; const uint8_t *t; const uint32_t *o = NULL, *r = NULL;
        if (s->binning == CS_BIN_MASS && lazy_order(p, 0, &v, &t, &o, &r) != 0)
            return nomem(err, "ranks");
        rc = scalar_adaptive(s, p->v, p->t, items, ni, o, r, p->n, &bins, &nb, err);
    } else {
        uint32_t *order = NULL;
        size_t *starts = NULL, ng = 0;
        if (s->binning == CS_BIN_MASS) {
            const double *v; const uint8_t *t; const uint32_t *o, *r;
            if (lazy_order(p, 0, &v, &t, &o, &r) != 0) return nomem(err, "ranks");
            order = mass_order(items, ni, o, r, p->n);
            starts = order ? mass_starts(ni, s->bins, &ng) : NULL;
        } else if (cs_mx_kdtree(items, ni, p->dim, get_vec, p, s->gamma, &order, &starts, &ng) != 0) {
            order = NULL;
        }
        bins = order && starts ? malloc((ng ? ng : 1) * sizeof *bins) : NULL;
        if (!bins || cs_mx_vector_groups(p, order, starts, ng, bins) != 0) {
            free(order); free(starts); free(bins);
            return nomem(err, "bins");
        }
        free(order);
        free(starts);
        nb = ng;
    }
    if (rc != CS_OK) return rc;
    a = cs_mx_aggregate(s, bins, nb, ni);
    out->ece = a.ece; out->ace = a.ace; out->mce = a.mce;
    out->bins = bins;
    out->n_bins = nb;
    return CS_OK;
}

/* AECE from the top-1 values and targets v[order[j]], t[order[j]] in value order (order
 * NULL: v, t are in that order already): the array_split groups, tvd. */
static cs_status aece_groups(const cs_prepared *p, const double *v, const uint8_t *t,
                             const uint32_t *order, size_t ni, double *out, cs_error *err)
{
    cs_settings s = p->s;
    s.binning = CS_BIN_MASS;
    s.distance = CS_DIST_TVD;
    size_t ng = 0, *starts = mass_starts(ni, s.bins, &ng);
    cs_bin *b = starts ? malloc((ng ? ng : 1) * sizeof *b) : NULL;
    if (!b) { free(starts); return nomem(err, "bins"); }
    cs_mx_scalar_groups(&s, v, t, order, starts, ng, b);
    *out = cs_mx_aggregate(&s, b, ng, ni).ece;
    free(starts);
    free(b);
    return CS_OK;
}

/* Top-1 equal-mass ECE: the subset in value order comes from the precomputed ranks
 * (cs_mx_by_rank: a bitmap or counting pass, no sort), then the array_split groups. */
static cs_status aece(const cs_prepared *cp, const uint32_t *items, size_t ni,
                      cs_mx_scratch *sc, double *out, cs_error *err)
{
    cs_prepared *p = (cs_prepared *)cp;
    const double *v; const uint8_t *t; const uint32_t *o, *r = NULL;
    if (lazy_order(p, 1, &v, &t, &o, items ? &r : NULL) != 0) return nomem(err, "ranks");
    const uint32_t *order = cs_mx_by_rank(sc, items, ni, o, r, p->n);
    if (!order) return nomem(err, "bins");
    return aece_groups(p, v, t, order, ni, out, err);
}

/* The bandwidth a draw's smooth-ECE search starts from: the whole problem's s* (computed
 * here once, under the lock, when a draw comes before any whole evaluation; v, t in the
 * order o). Only a start: the draw's fixed point is unique (smece.c), the hint saves half
 * the search. NAN for a whole evaluation or when none could be had. */
static double smece_hint(cs_prepared *p, const uint32_t *items, const double *v,
                         const uint8_t *t, const uint32_t *o)
{
    if (!items) return NAN;
    pthread_mutex_lock(&p->lock);
    if (p->smece_hint == 0) {   /* the whole evaluation's own path, on the columns */
        double s = NAN;
        void *work = malloc((p->n ? p->n : 1) * (sizeof(double) + 1));
        if (work && isnan(cs_mx_smece(v, t, o, p->n, 0.0, NAN, work, &s))) s = NAN;
        free(work);
        p->smece_hint = isnan(s) ? -1 : s;
    }
    double h = p->smece_hint;
    pthread_mutex_unlock(&p->lock);
    return h > 0 ? h : NAN;
}

/* Whether a draw's smooth ECE is taken at the whole problem's bandwidth s* instead of its own
 * fixed point: a bootstrap replicate (a draw of all n samples with replacement) of a problem
 * of at least CS_SMECE_FIXED_BW_MIN samples. The search costs several smooth ECEs per
 * replicate (the bracket and false position, each a kernel-sum grid); at s* it is one. The
 * interval then leaves out the bandwidth choice's own spread, which shrinks as n grows: s*
 * moves little between replicates of a large sample. A subsample of fewer samples (size
 * curves) keeps its own search: its s* is not the whole problem's. */
static int resample_at_whole_bandwidth(const cs_prepared *p, const uint32_t *items, size_t ni,
                                       unsigned want)
{
    return items && (ni == p->n || (want & CS_WANT_DRAW)) && p->n >= CS_SMECE_FIXED_BW_MIN;
}

/* Whether the items (ni of them, in value order through order) repeat a sample: a draw with
 * replacement, not a permutation of all samples (a paired comparison's whole evaluation of
 * the second file), whose smooth ECE must stay the exact one. The same sample repeated is
 * adjacent in value order (ties are ordered by rank). */
static int order_repeats(const uint32_t *order, size_t ni)
{
    for (size_t j = 1; j < ni; j++)
        if (order[j] == order[j - 1]) return 1;
    return 0;
}

/* cs_mx_smece_bin_replicates (tests and measurements): 0 keeps every replicate exact. */
static int smece_bin_replicates = 1;

void cs_mx_smece_bin_replicates(int on)
{
    smece_bin_replicates = on;
}

/* A large bootstrap replicate's smooth ECE at the fixed bandwidth sig from its samples
 * linearly binned (cs_mx_smece_binned; docs/performance.md: method, threshold and measured
 * error). 1 and *out when it answered, 0 for the exact path. */
static int smece_binned(cs_prepared *p, const uint32_t *items, size_t ni, unsigned want,
                        const uint32_t *order, const double *fs, const uint8_t *ts, double sig,
                        double *out)
{
    if (!smece_bin_replicates || !(sig > 0) || !items || (ni != p->n && !(want & CS_WANT_DRAW)) ||
        ni < CS_SMECE_BINNED_MIN ||
        !order_repeats(order, ni))
        return 0;
    if (!cs_mx_smece_binned(fs, ts, ni, sig, CS_SMECE_BIN_PER_SIGMA, out)) return 0;
    atomic_fetch_add_explicit(&p->smece_binned, 1, memory_order_relaxed);
    return 1;
}

/* The class-wise ECE (uniform bins, tvd, whatever the settings) as a job of its own, for a
 * second thread from SCE_SIDE_MIN samples (cs_evaluate). On that thread the job also makes
 * the Brier score and NLL first (scores: out's brier and nll, on that thread alone), then the
 * bins (binned: out's ece, ace, mce and bin table) and RECE-G last (rece: out->rece_g), each
 * with its own status, so that the calling thread goes straight to the sort and the
 * estimators, the longest part (1M x 10: the scores on two threads first were 3.5 ms of the
 * report's wall clock, the side thread's work ~8 ms shorter than the sort and estimators).
 * The fields each writes are its own. */
#define SCE_SIDE_MIN 100000u
typedef struct sce_job {
    const cs_prepared *p;
    const uint32_t *items;
    size_t ni;
    const atomic_int *cancel;
    cs_status rc;
    double sce;
    cs_error err;
    cs_result *out;          /* side thread only: */
    unsigned scores;         /* CS_WANT_BRIER | CS_WANT_NLL it makes first, or 0 */
    int binned, rece;        /* the parts it makes besides the class-wise ECE */
    int dup;                 /* sce_is_ece: the class-wise ECE is the bins' */
    int cw;                  /* side thread only: it makes the class-wise ECE */
    cs_status rc_s, rc_b, rc_r;
    cs_error err_s, err_b, err_r;
    /* the calling thread's sort, which the side thread helps with once its own parts are
     * done (cs_sort_help: its buckets claimed one at a time; the order is the same) */
    cs_sort_share sort;
} sce_job;

static void *sce_run(void *arg)
{
    sce_job *j = arg;
    cs_settings s = j->p->s;
    s.binning = CS_BIN_UNIFORM;
    s.distance = CS_DIST_TVD;
    cs_mx_agg a;
    /* the uniform class-wise pass reads NULL items as all samples in order: no n-word
     * identity array */
    j->rc = classwise(j->p, &s, j->items, j->ni, j->cancel, &a, NULL, NULL, &j->err);
    if (j->rc == CS_OK) j->sce = a.ece;
    return NULL;
}

/* Whether the class-wise ECE is the bins' ECE itself: the classwise lens with uniform bins
 * and tvd makes the very pass sce_run would make again (the same sums, the same mean). */
static int sce_is_ece(const cs_prepared *p, unsigned want)
{
    return (want & CS_WANT_BINNED) && (want & CS_WANT_SCE) && p->kind == CS_LENS_CLASSWISE &&
           p->s.binning == CS_BIN_UNIFORM && p->s.distance == CS_DIST_TVD;
}

static void *side_run(void *arg)
{
    sce_job *j = arg;
    if (j->scores) {
        j->rc_s = cs_mx_scores(j->p, j->items, j->ni, j->scores, 0, &j->out->brier, &j->out->nll,
                               &j->err_s);
        if (j->rc_s != CS_OK) return NULL;   /* the first error of the one-thread order */
    }
    if (j->binned) {
        j->rc_b = cs_mx_binned(j->p, j->items, j->ni, j->cancel, j->out, &j->err_b);
        if (j->dup) {   /* sce_is_ece: the class-wise ECE comes with the bins */
            j->rc = j->rc_b;
            j->sce = j->out->ece;
            if (j->rc != CS_OK) j->err = j->err_b;
        }
    }
    if (j->cw && !(j->binned && j->dup)) sce_run(j);
    if (j->rece) j->rc_r = cs_mx_rece_g(j->p, j->items, j->ni, j->cancel, &j->out->rece_g, &j->err_r);
    cs_sort_help(&j->sort);
    return NULL;
}

/* ---- smooth ECE, L2 CE, ECE_sweep -------------------------------------------------------
 * On the top1 and class:C lenses only (one value and a 0/1 target per sample, what their
 * papers define them on); NAN on the others. They read the items' pairs in value order,
 * gathered once into one scratch block (the gather through the order is a random read per
 * sample: it was made three times, for AECE, smooth ECE and L2 CE / ECE_sweep). with_aece:
 * the top1 lens's AECE from that block too (its groups are the same values in the same
 * order as aece() reads through the order: the same sums). */

/* AECE (with_aece), the L2 CE and ECE_sweep of the block in value order: what reads the block
 * as it is, on a second thread beside smooth ECE, which writes the block only where two values
 * are equal (it merges them in place) and then first waits for this job (join_sorted). */
typedef struct sorted_job {
    const cs_prepared *p;
    const double *fs;
    const uint8_t *ts;
    size_t ni;
    unsigned want;
    int with_aece;
    cs_result *out;
    cs_status rc;
    cs_error err;
    cs_mx_helper th;   /* its thread, while it runs (not joined yet) */
} sorted_job;

static void *sorted_run(void *arg)
{
    sorted_job *j = arg;
    const cs_prepared *p = j->p;
    j->rc = CS_OK;
    if (j->with_aece && (j->rc = aece_groups(p, j->fs, j->ts, NULL, j->ni, &j->out->aece, &j->err)) != CS_OK)
        return NULL;
    if (j->want & CS_WANT_L2CE)
        cs_mx_l2ce(j->fs, j->ts, j->ni, p->s.bins, &j->out->l2ce, &j->out->l2ce_debiased);
    /* ECE_sweep's norm is the distance's: tvd p = 1, l2 p = 2 (the paper's l_p); kd-tree
     * cells and the other distances have no sweep */
    if ((j->want & CS_WANT_SWEEP) && p->s.binning != CS_BIN_KDTREE &&
        (p->s.distance == CS_DIST_TVD || p->s.distance == CS_DIST_L2)) {
        int b;
        j->out->ece_sweep = cs_mx_ece_sweep(j->fs, j->ts, j->ni, p->s.binning == CS_BIN_MASS,
                                            p->s.distance == CS_DIST_L2 ? 2.0 : 1.0, &b);
        j->out->ece_sweep_bins = b;
    }
    return NULL;
}

/* The values (unless the sort left them there: have_f) and targets in value order into the
 * block, half h of them: through the order, a random read a sample, or for a subset from the
 * values and targets kept in rank order (vs, ts at its ascending ranks: reads in sequence);
 * the two halves on two threads on a large sample (cs_mx_chunks; ~2 ms at 10^6 on one, the
 * other core idle). */
typedef struct gather_job {
    const double *v;
    const uint8_t *t;
    const uint32_t *order;
    const double *vs;       /* with ranks: */
    const uint8_t *ts_r;
    const uint32_t *ranks;
    double *fs;
    uint8_t *ts;
    int have_f;
    size_t ni;
} gather_job;

static void gather_half(void *ctx, size_t h)
{
    const gather_job *g = ctx;
    size_t a = h ? g->ni / 2 : 0, z = h ? g->ni : g->ni / 2;
    if (g->ranks)
        for (size_t j = a; j < z; j++) {
            if (j + CS_MX_AHEAD < z) {
                CS_MX_FETCH(&g->vs[g->ranks[j + CS_MX_AHEAD]]);
                CS_MX_FETCH(&g->ts_r[g->ranks[j + CS_MX_AHEAD]]);
            }
            g->fs[j] = g->vs[g->ranks[j]];
            g->ts[j] = g->ts_r[g->ranks[j]] ? 1 : 0;
        }
    else if (g->have_f)
        for (size_t j = a; j < z; j++) g->ts[j] = g->t[g->order[j]] ? 1 : 0;
    else
        for (size_t j = a; j < z; j++) {
            g->fs[j] = g->v[g->order[j]];
            g->ts[j] = g->t[g->order[j]] ? 1 : 0;
        }
}

/* Waits for the job's thread, if it runs (smooth ECE's before_write, and after it). */
static void join_sorted(void *arg)
{
    sorted_job *j = arg;
    cs_mx_helper_join(&j->th);
}

/* From this many samples the block's readers run beside smooth ECE (a thread costs ~0.1 ms;
 * they take ~4 ms at 10^6 samples). */
#define SORTED_SIDE_MIN 100000u

static cs_status scalar_estimators(const cs_prepared *cp, const uint32_t *items, size_t ni,
                                   unsigned want, int with_aece, int helper, cs_mx_scratch *sc,
                                   cs_sort_share *share, cs_result *out, cs_error *err)
{
    cs_prepared *p = (cs_prepared *)cp;
    if (p->vector || (p->kind != CS_LENS_TOP1 && p->kind != CS_LENS_CLASS)) return CS_OK;
    /* One scratch block of ni doubles and ni bytes: the values and targets in value order
     * for AECE, the L2 CE and ECE_sweep, then smooth ECE's pairs made from them in place
     * (9 bytes a sample at the peak, where copies of the values and targets as doubles plus
     * (value, weight) pairs took 32). All samples, not sorted yet: the sort's scratch first,
     * which it leaves holding the sorted values. */
    double *work = malloc((ni ? ni : 1) * (sizeof *work + 1));
    if (!work) return nomem(err, "estimators");
    const double *v; const uint8_t *t; const uint32_t *o, *r = NULL;
    int have_f = 0;
    if (items ? lazy_order(p, 0, &v, &t, &o, &r) != 0
              : lazy_order_values(p, &v, &t, &o, work, &have_f, share) != 0) {
        free(work);
        return nomem(err, "ranks");
    }
    /* a subset: its ascending ranks, read in the values kept in rank order. order is then
     * those ranks (a repeated sample is equal neighbours in either), mapped to the samples
     * themselves only for the curve below */
    const double *vs = NULL;
    const uint8_t *ts_r = NULL;
    uint32_t *ranks = items && lazy_sorted_vt(p, 0, &vs, &ts_r) == 0
                          ? cs_mx_ranks_sorted(sc, items, ni, r, p->n) : NULL;
    const uint32_t *order = ranks ? ranks : cs_mx_by_rank(sc, items, ni, o, r, p->n);
    if (!order) {
        free(work);
        return nomem(err, "estimators");
    }
    cs_status rc = CS_OK;
    double *fs = work;
    uint8_t *ts = (uint8_t *)(work + ni);
    gather_job g = { .v = v, .t = t, .order = order, .vs = vs, .ts_r = ts_r, .ranks = ranks,
                     .fs = fs, .ts = ts, .have_f = have_f, .ni = ni };
    cs_mx_chunks(2, helper && ni >= SORTED_SIDE_MIN, gather_half, &g);
    int smooth = (want & (CS_WANT_SMECE | CS_WANT_SMECE_CURVE)) != 0;
    sorted_job sj = { .p = p, .fs = fs, .ts = ts, .ni = ni, .want = want, .with_aece = with_aece,
                      .out = out, .rc = CS_OK };
    int beside = helper && smooth && ni >= SORTED_SIDE_MIN && cs_mx_helper_start(&sj.th, sorted_run, &sj);
    if (!beside) {   /* in the one-thread order, before smooth ECE turns the block into pairs */
        sorted_run(&sj);
        if (sj.rc != CS_OK) {
            *err = sj.err;
            free(work);
            return sj.rc;
        }
    }
    /* last: it turns the block into its pairs (where values repeat) */
    if (smooth) {
        double sig = p->s.smece_sigma > 0 ? p->s.smece_sigma : 0.0, used;
        double hint = sig > 0 ? NAN : smece_hint(p, items, v, t, o);
        if (resample_at_whole_bandwidth(p, items, ni, want) && hint > 0) {
            sig = hint;
            hint = NAN;
        }
        if (smece_binned(p, items, ni, want, order, fs, ts, sig, &out->smece)) used = sig;
        else out->smece = cs_mx_smece_sorted(work, ni, sig, hint, &used, join_sorted, &sj);
        if (!items && sig == 0 && !isnan(out->smece)) {   /* the whole problem's: later draws' hint */
            pthread_mutex_lock(&p->lock);
            p->smece_hint = used;
            pthread_mutex_unlock(&p->lock);
        }
        out->smece_sigma = isnan(out->smece) ? NAN : used;
        if (isnan(out->smece)) rc = nomem(err, "smooth ECE");
    }
    if (beside) {
        join_sorted(&sj);
        if (sj.rc != CS_OK) {   /* AECE's error comes first, as in the one-thread order */
            rc = sj.rc;
            *err = sj.err;
        }
    }
    /* the picture of that smooth ECE: relplot's curve at the same bandwidth */
    if (rc == CS_OK && (want & CS_WANT_SMECE_CURVE)) {
        size_t G = CS_SMECE_CURVE_POINTS;
        if (ranks)   /* the ranks are read: the samples in their place */
            for (size_t j = 0; j < ni; j++) ranks[j] = o[ranks[j]];
        out->smece_mu = malloc(G * sizeof *out->smece_mu);
        out->smece_density = malloc(G * sizeof *out->smece_density);
        if (!out->smece_mu || !out->smece_density ||
            cs_mx_smece_curve(v, t, order, ni, out->smece_sigma, G, out->smece_mu, out->smece_density) != 0)
            rc = nomem(err, "smooth reliability curve");
        else out->n_smece_curve = G;
    }
    free(work);
    return rc;
}

/* ---- one walk for a subset --------------------------------------------------------------
 * A subset of a scalar lens (not classwise) of at most CS_MX_CHUNK items (one chunk: the
 * uniform sums are plain sequences, RECE-G a single part) with M <= 64: the uniform-bin sums,
 * the RECE-G row sums and the AECE rank bitmap are formed in one pass over the canonical
 * items instead of three. Per bin the additions are the same, in the same order, as in
 * cs_mx_uniform_sums, cs_mx_rece_g and aece (cs_mx_by_rank's bitmap), so the numbers are
 * identical; each metric that cannot take part here is left to its own path. */
#define FUSE_MAXM 64

/* AECE from the bitmap of the subset's ranks (no repeats): the ranks in ascending order are
 * the subset in value order, cut into the array_split groups (as cs_mx_scalar_groups). */
static void group_close(const cs_settings *s, cs_bin *b, size_t c, double sv, size_t st,
                        double lo, double hi)
{
    b->count = c;
    if (c == 0) {
        b->lo = b->hi = b->conf = b->acc = b->gap = NAN;
        return;
    }
    b->lo = lo;
    b->hi = hi;
    b->conf = sv / (double)c;
    b->acc = (double)st / (double)c;
    b->gap = cs_mx_scalar_gap(s, b->conf, b->acc);
}

static double aece_from_bits(const cs_prepared *p, const uint64_t *bits, size_t W, size_t ni,
                             const double *vs, const uint8_t *ts)
{
    cs_settings s = p->s;
    s.binning = CS_BIN_MASS;
    s.distance = CS_DIST_TVD;
    size_t M = (size_t)s.bins, G = M < ni ? M : ni;
    size_t starts[FUSE_MAXM + 1];
    cs_bin b[FUSE_MAXM];
    for (size_t g = 0; g <= G; g++) starts[g] = g < G ? cs_mx_split_start(ni, M, g) : ni;
    size_t g = 0, st = 0, rem;
    double sv = 0.0, lo = INFINITY, hi = -INFINITY;
    /* rem: items still to come in group g (empty groups closed on the way) */
    while (g < G && (rem = starts[g + 1] - starts[g]) == 0) {
        group_close(&s, &b[g], 0, 0, 0, 0, 0);
        g++;
    }
    for (size_t w = 0; w < W && g < G; w++) {
        uint64_t m = bits[w];
        while (m) {
            size_t r = w * 64 + (size_t)__builtin_ctzll(m);
            m &= m - 1;
            double x = vs[r];
            sv += x;
            st += ts[r];
            if (x < lo) lo = x;
            if (x > hi) hi = x;
            if (--rem == 0) {
                group_close(&s, &b[g], starts[g + 1] - starts[g], sv, st, lo, hi);
                g++;
                sv = 0.0; st = 0; lo = INFINITY; hi = -INFINITY;
                while (g < G && (rem = starts[g + 1] - starts[g]) == 0) {
                    group_close(&s, &b[g], 0, 0, 0, 0, 0);
                    g++;
                }
                if (g == G) break;
            }
        }
    }
    return cs_mx_aggregate(&s, b, G, ni).ece;
}

/* Items j0..j1-1 of the walk; `all` (a constant at each call): D with 16-double rows, ub and
 * rank are all there. The 16 RECE-G sums stay in registers over the block. */
static inline __attribute__((always_inline)) void
walk_block(const uint32_t *items, size_t j0, size_t j1, size_t ni, const double *D, size_t Ms,
           int all, const double *v, const uint8_t *t, const uint16_t *ub, size_t *cnt,
           double *sv, size_t *st, const uint32_t *rank, uint64_t *bits, double *acc)
{
    int d16 = all || (D && Ms == 16);
    double s0 = acc[0], s1 = acc[1], s2 = acc[2], s3 = acc[3], s4 = acc[4], s5 = acc[5];
    double s6 = acc[6], s7 = acc[7], s8 = acc[8], s9 = acc[9], s10 = acc[10], s11 = acc[11];
    double s12 = acc[12], s13 = acc[13], s14 = acc[14], s15 = acc[15];
    for (size_t j = j0; j < j1; j++) {
        uint32_t i = items[j];
        if ((all || ub || rank) && j + CS_MX_AHEAD < ni) {
            uint32_t ia = items[j + CS_MX_AHEAD];
            if (all || ub) {
                CS_MX_FETCH(&ub[ia]);
                CS_MX_FETCH(&v[ia]);
                CS_MX_FETCH(&t[ia]);
            }
            if (all || rank) CS_MX_FETCH(&rank[ia]);
        }
        if (all || D) {
            /* a subset's rows are scattered: fetch those of later items ahead */
            if (j + 16 < ni) {
                const double *f = D + (size_t)items[j + 16] * Ms;
                __builtin_prefetch(f);
                if (all || Ms > 8) __builtin_prefetch(f + 8);
            }
            const double *d = D + (size_t)i * Ms;
            if (d16) {
                s0 += d[0]; s1 += d[1]; s2 += d[2]; s3 += d[3];
                s4 += d[4]; s5 += d[5]; s6 += d[6]; s7 += d[7];
                s8 += d[8]; s9 += d[9]; s10 += d[10]; s11 += d[11];
                s12 += d[12]; s13 += d[13]; s14 += d[14]; s15 += d[15];
            } else {
                for (size_t b = 0; b < Ms; b++) acc[b] += d[b];
            }
        }
        if (all || ub) {
            uint32_t b = ub[i];
            cnt[b]++;
            sv[b] += v[i];
            st[b] += t[i];
        }
        if (all || rank) {
            uint32_t r = rank[i];
            bits[r >> 6] |= 1ull << (r & 63u);
        }
    }
    if (d16) {
        acc[0] = s0; acc[1] = s1; acc[2] = s2; acc[3] = s3; acc[4] = s4; acc[5] = s5;
        acc[6] = s6; acc[7] = s7; acc[8] = s8; acc[9] = s9; acc[10] = s10; acc[11] = s11;
        acc[12] = s12; acc[13] = s13; acc[14] = s14; acc[15] = s15;
    }
}

/* Returns the CS_WANT_* flags it computed into out (0: nothing, take the usual paths), or
 * sets *rc on an error. strict: items are strictly ascending (no repeats). */
static unsigned fused_walk(cs_prepared *p, const uint32_t *items, size_t ni, unsigned want,
                           int strict, cs_mx_scratch *sc, const atomic_int *cancel,
                           cs_result *out, cs_status *rc, cs_error *err)
{
    want &= ~CS_WANT_ACCURACY;   /* made here only beside the bins (below) */
    *rc = CS_OK;
    int M = p->s.bins;
    if (!items || ni > CS_MX_CHUNK || p->vector || p->kind == CS_LENS_CLASSWISE ||
        M > FUSE_MAXM)
        return 0;
    const uint16_t *ub = NULL;
    const double *D = NULL;
    size_t Ms = 0;
    const uint32_t *rank = NULL, *order = NULL;
    const double *va = NULL, *vs = NULL;
    const uint8_t *ta = NULL, *ts = NULL;
    uint64_t *bits = NULL;
    size_t W = (p->n + 63) / 64;
    if ((want & CS_WANT_BINNED) && p->s.binning == CS_BIN_UNIFORM) ub = cs_mx_ubin_cache(p);
    if (want & CS_WANT_RECE_G) D = cs_mx_rece_rows(p, &Ms);
    if ((want & CS_WANT_AECE) && strict && W <= ni + 2048 &&
        lazy_order(p, 1, &va, &ta, &order, &rank) == 0 && lazy_sorted_vt(p, 1, &vs, &ts) == 0)
        bits = cs_mx_scratch_bits(sc, W);
    if (!bits) rank = NULL;
    if (!ub && !D && !rank) return 0;
    size_t cnt[FUSE_MAXM] = {0}, st[FUSE_MAXM] = {0};
    double sv[FUSE_MAXM] = {0}, acc[FUSE_MAXM] = {0};
    int all16 = D && Ms == 16 && ub && rank;
    for (size_t j0 = 0; j0 < ni; j0 += 4096) {
        if (cs_mx_cancelled(cancel)) {
            *rc = cs_error_set(err, CS_ECANCELLED, 0, 0, "cancelled");
            return 0;
        }
        size_t j1 = j0 + 4096 < ni ? j0 + 4096 : ni;
        if (all16)   /* the usual case, with the tests folded away */
            walk_block(items, j0, j1, ni, D, 16, 1, p->v, p->t, ub, cnt, sv, st, rank, bits, acc);
        else
            walk_block(items, j0, j1, ni, D, Ms, 0, p->v, p->t, ub, cnt, sv, st, rank, bits, acc);
    }
    unsigned done = 0;
    if (D) {
        double sum = 0.0;
        for (int b = 0; b < M; b++) sum += fabs(acc[b]);
        out->rece_g = sum / (double)ni;
        done |= CS_WANT_RECE_G;
    }
    if (rank) {
        out->aece = aece_from_bits(p, bits, W, ni, vs, ts);
        done |= CS_WANT_AECE;
    }
    if (ub) {
        double e[FUSE_MAXM + 1];
        cs_mx_edges(e, M);
        *rc = uniform_finish(&p->s, ni, e, cnt, sv, st, out, err);
        if (*rc != CS_OK) return 0;
        done |= CS_WANT_BINNED;
        if (p->kind == CS_LENS_TOP1) {   /* the targets are the top-1 hits: their count */
            size_t hits = 0;
            for (int b = 0; b < M; b++) hits += st[b];
            out->accuracy = (double)hits / (double)ni;
            done |= CS_WANT_ACCURACY;
        }
    }
    return done;
}

void cs_result_reset(cs_result *r)
{
    memset(r, 0, sizeof *r);
    r->accuracy = r->ece = r->ace = r->mce = NAN;
    r->rece_g = r->rece_m = r->brier = r->nll = r->aece = r->sce = NAN;
    r->smece = r->smece_sigma = r->l2ce = r->l2ce_debiased = NAN;
    r->ece_sweep = r->ece_sweep_bins = NAN;
}

/* ---- cs_evaluate, in steps ------------------------------------------------------------------- */

/* The samples idx[0..ni) checked — some, not too many, each in range — and how they are
 * ordered: *sorted ascending, *strict strictly ascending (a
 * draw without replacement in canonical order). idx NULL: all samples, in order. */
static cs_status check_samples(const cs_prepared *p, const uint32_t *idx, size_t ni, int *sorted,
                               int *strict, cs_error *err)
{
    *sorted = 1;
    *strict = 0;
    if (ni == 0) return cs_error_set(err, CS_EEMPTY, 0, 0, "no samples to measure");
    if (ni > UINT32_MAX) return cs_error_set(err, CS_EUSAGE, 0, 0, "too many samples");
    if (!idx) return CS_OK;
    /* strictly ascending: the last is the largest; otherwise one branch-free pass for the
     * largest and "ascending" */
    size_t up = 1;
    while (up < ni && idx[up - 1] < idx[up]) up++;
    uint32_t mx = idx[ni - 1];
    if (up < ni) {
        unsigned desc = 0;
        uint32_t prev = 0;
        mx = 0;
        for (size_t j = 0; j < ni; j++) {
            uint32_t x = idx[j];
            mx = x > mx ? x : mx;
            desc |= x < prev;
            prev = x;
        }
        *sorted = !desc;
    } else {
        *strict = 1;
    }
    if (mx >= p->n)
        for (size_t j = 0; j < ni; j++)
            if (idx[j] >= p->n)
                return cs_error_set(err, CS_EUSAGE, 0, 0, "sample index %u out of range (%zu)",
                                    idx[j], p->n);
    return CS_OK;
}

/* The share of the items (NULL: all samples) whose prediction is right. */
static double accuracy_of(const cs_prepared *p, const uint32_t *items, size_t ni)
{
    size_t c = 0;
    const uint8_t *cor = p->d->correct;
    if (items && p->kind == CS_LENS_TOP1) {   /* the lens's targets are the hits: one read */
        for (size_t j = 0; j < ni; j++) {
            if (j + CS_MX_AHEAD < ni) CS_MX_FETCH(&p->t[items[j + CS_MX_AHEAD]]);
            c += p->t[items[j]];
        }
    } else if (items)
        for (size_t j = 0; j < ni; j++) {
            if (j + CS_MX_AHEAD < ni) CS_MX_FETCH(&p->rows[items[j + CS_MX_AHEAD]]);
            c += cor[p->rows[items[j]]];
        }
    else
        for (size_t j = 0; j < ni; j++) c += cor[p->rows[j]];
    return (double)c / (double)ni;
}

/* The class-wise ECE's job over the items; its thread parts are set by start_side. */
static void sce_job_init(sce_job *sj, const cs_prepared *p, const uint32_t *items, size_t ni,
                         const atomic_int *cancel, cs_result *out, int dup)
{
    memset(sj, 0, sizeof *sj);
    sj->p = p;
    sj->items = items;
    sj->ni = ni;
    sj->cancel = cancel;
    sj->rc = sj->rc_s = sj->rc_b = sj->rc_r = CS_OK;
    sj->sce = NAN;
    sj->out = out;
    sj->dup = dup;
    cs_sort_share_init(&sj->sort);
}

/* The class-wise ECE reads the whole probability matrix and nothing the passes of the calling
 * thread write: on a large sample, when the caller's budget has a helper, it runs on a second
 * thread, with the scores before it and the bins and RECE-G after it there, beside the sort
 * and the scalar estimators here; without the class-wise ECE, the bins and RECE-G still go
 * there. Returns 1 when that thread runs (join it: finish_sce). */
static int start_side(sce_job *sj, cs_mx_helper *th, unsigned want, int helper)
{
    unsigned there = CS_WANT_SCE | CS_WANT_BINNED | CS_WANT_RECE_G;   /* the side thread's parts */
    if (!(helper && (want & there) && sj->ni >= SCE_SIDE_MIN)) return 0;
    sj->cw = (want & CS_WANT_SCE) != 0;
    sj->scores = want & (CS_WANT_BRIER | CS_WANT_NLL);
    sj->binned = (want & CS_WANT_BINNED) != 0;
    sj->rece = (want & CS_WANT_RECE_G) != 0;
    int side = cs_mx_helper_start(th, side_run, sj);
    if (!side) {
        sj->scores = 0;
        sj->binned = sj->rece = 0;
    }
    return side;
}

/* The Brier score and NLL on the calling thread (when the side thread does not make them). */
static cs_status scores_here(const cs_prepared *p, const uint32_t *items, size_t ni,
                             unsigned want, const sce_job *sj, cs_result *out, cs_error *err)
{
    if (sj->scores || !(want & (CS_WANT_BRIER | CS_WANT_NLL))) return CS_OK;
    return cs_mx_scores(p, items, ni, want, 1, &out->brier, &out->nll, err);
}

/* The class-wise ECE's outcome: the side thread joined (its scores' or bins' error is the
 * first the one-thread order meets, and becomes *rc and *before), or the ECE made here (the
 * bins' own when they are it); then, when nothing failed before it, its value or error. */
static void finish_sce(sce_job *sj, int side, cs_mx_helper *th, unsigned want, cs_status *rc,
                       cs_status *before, cs_error *err)
{
    if (side) {
        cs_sort_share_close(&sj->sort);   /* the side thread waits for a sort to help with */
        cs_mx_helper_join(th);
        if (sj->scores && sj->rc_s != CS_OK) {   /* the scores come first */
            *before = *rc = sj->rc_s;
            *err = sj->err_s;
            sj->rece = 0;
        } else if (sj->binned && sj->rc_b != CS_OK) {   /* then the bins */
            *before = *rc = sj->rc_b;
            *err = sj->err_b;
        }
    } else if (*before == CS_OK && (want & CS_WANT_SCE)) {
        if (sj->dup) sj->sce = sj->out->ece;   /* the bins were made, without an error (before) */
        else sce_run(sj);
    }
    if (*before == CS_OK && (want & CS_WANT_SCE)) {
        if (sj->rc != CS_OK) {
            *rc = sj->rc;
            *err = sj->err;
        } else {
            sj->out->sce = sj->sce;
        }
    }
}

/* RECE-G (the side thread's, or made here), RECE-M and the RECE-G curve, after rc (the
 * first error so far). Returns the first error. */
static cs_status rece_parts(const cs_prepared *p, const uint32_t *items, size_t ni, unsigned want,
                            cs_mx_scratch *sc, const atomic_int *cancel, const sce_job *sj,
                            cs_status rc, cs_result *out, cs_error *err)
{
    if (sj->rece) {
        if (rc != CS_OK) out->rece_g = NAN;   /* not reached in the one-thread order */
        else if (sj->rc_r != CS_OK) {
            rc = sj->rc_r;
            *err = sj->err_r;
        }
    } else if (rc == CS_OK && (want & CS_WANT_RECE_G)) {
        rc = cs_mx_rece_g(p, items, ni, cancel, &out->rece_g, err);
    }
    if (rc == CS_OK && (want & CS_WANT_RECE_M)) rc = cs_mx_rece_m(p, items, ni, cancel, &out->rece_m, err);
    /* the curve reads an explicit array */
    const uint32_t *arr = items;
    if (rc == CS_OK && !arr && (want & CS_WANT_RECE_CURVE) && !(arr = cs_mx_identity(sc, ni)))
        rc = nomem(err, "evaluate");
    if (rc == CS_OK && (want & CS_WANT_RECE_CURVE) && !p->vector && p->kind != CS_LENS_CLASSWISE) {
        size_t M = (size_t)p->s.bins;
        out->rece_acc = malloc(M * sizeof *out->rece_acc);
        out->rece_conf = malloc(M * sizeof *out->rece_conf);
        double rg;
        if (!out->rece_acc || !out->rece_conf) rc = nomem(err, "RECE-G curve");
        else rc = cs_mx_rece_curve(p, arr, ni, cancel, &rg, out->rece_acc, out->rece_conf, err);
        if (rc == CS_OK) out->n_rece = M;
    }
    return rc;
}

static cs_status evaluate(const cs_prepared *p, const uint32_t *idx, size_t n, unsigned want,
                          const cs_run *run, cs_result *out, cs_error *err)
{
    const atomic_int *cancel = run ? run->cancel : NULL;
    int helper = !run || run->threads != 1;   /* the caller's budget has a thread beside it */
    cs_result_reset(out);
    size_t ni = idx ? n : p->n;
    int sorted, strict;
    cs_status rc = check_samples(p, idx, ni, &sorted, &strict, err);
    if (rc != CS_OK) return rc;
    /* Scratch from the prepared object's pool: no large allocation per call. items: the
     * subset in canonical (ascending) order, or NULL for all samples in order. */
    cs_mx_scratch *sc = cs_mx_scratch_get((cs_prepared *)p);
    const uint32_t *items = idx && sorted ? idx : NULL;
    if (!sc || (idx && !sorted && !(items = cs_mx_canonical(sc, idx, ni, p->n)))) {
        cs_mx_scratch_put((cs_prepared *)p, sc);
        return nomem(err, "evaluate");
    }
    out->n = ni;
    /* The same numbers with the side thread or without; an error is the first one the
     * one-thread order (scores, bins, AECE, class-wise ECE, the estimators, RECE-G) would
     * meet. fused_walk takes at most CS_MX_CHUNK items, fewer than SCE_SIDE_MIN: it has
     * nothing to do beside the thread. */
    sce_job sj;
    sce_job_init(&sj, p, items, ni, cancel, out, sce_is_ece(p, want));
    cs_mx_helper sth;
    int side = start_side(&sj, &sth, want, helper);
    rc = scores_here(p, items, ni, want, &sj, out, err);
    unsigned fused = 0;
    if (rc == CS_OK)
        fused = fused_walk((cs_prepared *)p, items, ni, want, strict, sc, cancel, out, &rc, err);
    want &= ~fused;
    if (rc == CS_OK && (want & CS_WANT_ACCURACY)) out->accuracy = accuracy_of(p, items, ni);
    if (rc == CS_OK && !side && (want & CS_WANT_BINNED)) rc = cs_mx_binned(p, items, ni, cancel, out, err);
    /* the top1 lens's AECE from the estimators' values in value order when they are gathered
     * anyway (the same groups: see scalar_estimators) */
    unsigned est = want & (CS_WANT_SMECE | CS_WANT_SMECE_CURVE | CS_WANT_L2CE | CS_WANT_SWEEP);
    int aece_in_est = (want & CS_WANT_AECE) && est && !p->vector && p->kind == CS_LENS_TOP1;
    if (rc == CS_OK && (want & CS_WANT_AECE) && !aece_in_est) rc = aece(p, items, ni, sc, &out->aece, err);
    cs_status before = rc;   /* what the one-thread order meets before the class-wise ECE */
    cs_error est_err;
    cs_status est_rc = CS_OK;
    if (rc == CS_OK && est)
        est_rc = scalar_estimators(p, items, ni, want, aece_in_est, helper, sc, &sj.sort, out, &est_err);
    finish_sce(&sj, side, &sth, want, &rc, &before, err);
    if (rc == CS_OK && est_rc != CS_OK) {
        rc = est_rc;
        *err = est_err;
    }
    rc = rece_parts(p, items, ni, want, sc, cancel, &sj, rc, out, err);
    if (rc == CS_OK && cs_mx_cancelled(cancel)) rc = cs_error_set(err, CS_ECANCELLED, 0, 0, "cancelled");
    cs_mx_scratch_put((cs_prepared *)p, sc);
    cs_sort_share_destroy(&sj.sort);
    if (rc != CS_OK) {
        cs_result_free(out);
        double nn = NAN;
        out->accuracy = out->ece = out->ace = out->mce = nn;
    }
    return rc;
}

/* A full evaluation's metrics kept on p: those whose every CS_WANT bit want had. The values
 * do not depend on what else was wanted, nor on threads (see the top of this file). */
static void keep_full(cs_prepared *p, unsigned want, const cs_result *r)
{
    unsigned made = 0;
    pthread_mutex_lock(&p->lock);
    for (int m = 0; m < CS_METRIC_COUNT; m++) {
        unsigned w = cs_metric_want(CS_METRIC_BIT(m));
        if (w && !(w & ~want)) {
            p->full_value[m] = cs_metric_value(r, m);
            made |= CS_METRIC_BIT(m);
        }
    }
    p->full_metrics = made;
    pthread_mutex_unlock(&p->lock);
}

int cs_prepared_full_values(const cs_prepared *cp, unsigned mask, double *row)
{
    cs_prepared *p = (cs_prepared *)cp;   /* the lock only */
    pthread_mutex_lock(&p->lock);
    int have = (mask & ~p->full_metrics) == 0;
    for (int m = 0; have && m < CS_METRIC_COUNT; m++)
        if (mask & CS_METRIC_BIT(m)) row[m] = p->full_value[m];
    pthread_mutex_unlock(&p->lock);
    return have;
}

cs_status cs_evaluate(const cs_prepared *p, const uint32_t *idx, size_t n, unsigned want,
                      const cs_run *run, cs_result *out, cs_error *err)
{
    /* every helper of its passes comes out of the caller's budget (mx.h) */
    cs_mx_budget budget;
    cs_mx_budget *prev = cs_mx_budget_enter(&budget, run);
    cs_status rc = evaluate(p, idx, n, want, run, out, err);
    cs_mx_budget_leave(prev);
    if (rc == CS_OK && !idx && !(want & CS_WANT_DRAW)) keep_full((cs_prepared *)p, want, out);
    return rc;
}
