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

#include <stdlib.h>
#include <string.h>

static cs_status nomem(cs_error *err, const char *what)
{
    return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory (%s)", what);
}

static int lazy_order(cs_prepared *p, int top1, const double **v, const uint8_t **t,
                      const uint32_t **order, const uint32_t **rank)
{
    int rc = 0;
    pthread_mutex_lock(&p->lock);
    if (!top1 || p->kind == CS_LENS_TOP1) {
        if (!p->order_v) rc = cs_mx_order(p->v, p->n, &p->order_v, &p->rank_v);
        *v = p->v; *t = p->t; *order = p->order_v; *rank = p->rank_v;
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
        if (!rc && !p->order_c) rc = cs_mx_order(p->v1, p->n, &p->order_c, &p->rank_c);
        *v = p->v1; *t = p->t1; *order = p->order_c; *rank = p->rank_c;
    }
    pthread_mutex_unlock(&p->lock);
    return rc;
}

const uint32_t *cs_mx_order_v(cs_prepared *p)
{
    const double *v; const uint8_t *t; const uint32_t *o, *r;
    return lazy_order(p, 0, &v, &t, &o, &r) ? NULL : o;
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
    if (cs_mx_radix_sort_keys(k, ni, (uint32_t)n_all) != 0) { free(k); return NULL; }
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

/* ---- uniform grid on a vector lens ---- */
typedef struct { const uint32_t *off, *coord, *cell; } gridkey;

static int cmp_grid(uint32_t a, uint32_t b, const void *vctx)
{
    const gridkey *g = vctx;
    uint32_t ia = g->off[a], ea = g->off[a + 1], ib = g->off[b], eb = g->off[b + 1];
    for (;; ia++, ib++) {
        if (ia == ea) return ib == eb ? 0 : -1;   /* b has a non-zero cell where a has 0 */
        if (ib == eb) return 1;
        if (g->coord[ia] != g->coord[ib]) return g->coord[ia] < g->coord[ib] ? 1 : -1;
        if (g->cell[ia] != g->cell[ib]) return g->cell[ia] < g->cell[ib] ? -1 : 1;
    }
}

static cs_status vector_grid(const cs_prepared *p, const uint32_t *items, size_t ni,
                             cs_bin **bins, size_t *nb, cs_error *err)
{
    int M = p->s.bins;
    size_t kc = p->dim - 1;   /* the last coordinate is implied by the others */
    double *e = malloc((size_t)(M + 1) * sizeof *e);
    uint32_t *off = malloc((ni + 1) * sizeof *off);
    uint32_t *pos = malloc(ni * sizeof *pos);
    uint32_t *coord = NULL, *cell = NULL, *order = NULL;
    size_t *starts = NULL;
    cs_bin *b = NULL;
    cs_status rc = CS_OK;
    if (!e || !off || !pos) { rc = nomem(err, "grid"); goto out; }
    cs_mx_edges(e, M);
    /* Sparse keys: only cells > 0 are stored (a probability vector has few such coords). */
    size_t tot = 0;
    for (size_t q = 0; q < ni; q++) {
        off[q] = (uint32_t)tot;
        for (size_t j = 0; j < kc && M > 1; j++) {
            if (cs_mx_coord(p, items[q], j) > e[1]) tot++;
            else if (p->sorted_desc) break;   /* the rest are smaller still */
        }
    }
    off[ni] = (uint32_t)tot;
    coord = malloc((tot ? tot : 1) * sizeof *coord);
    cell = malloc((tot ? tot : 1) * sizeof *cell);
    if (!coord || !cell) { rc = nomem(err, "grid"); goto out; }
    for (size_t q = 0, w = 0; q < ni; q++) {
        pos[q] = (uint32_t)q;
        for (size_t j = 0; j < kc && M > 1; j++) {
            double x = cs_mx_coord(p, items[q], j);
            if (x > e[1]) { coord[w] = (uint32_t)j; cell[w] = (uint32_t)cs_mx_ubin(x, e, M); w++; }
            else if (p->sorted_desc) break;
        }
    }
    gridkey gk = {off, coord, cell};
    if (cs_mx_msort(pos, ni, cmp_grid, &gk) != 0) { rc = nomem(err, "grid"); goto out; }
    size_t ng = 0;
    for (size_t q = 0; q < ni; q++)
        if (q == 0 || cmp_grid(pos[q - 1], pos[q], &gk) != 0) ng++;
    starts = malloc((ng + 1) * sizeof *starts);
    order = malloc(ni * sizeof *order);
    b = malloc((ng ? ng : 1) * sizeof *b);
    if (!starts || !order || !b) { rc = nomem(err, "grid"); goto out; }
    for (size_t q = 0, g = 0; q < ni; q++) {
        if (q == 0 || cmp_grid(pos[q - 1], pos[q], &gk) != 0) starts[g++] = q;
        order[q] = items[pos[q]];
    }
    starts[ng] = ni;
    if (cs_mx_vector_groups(p, order, starts, ng, b) != 0) { rc = nomem(err, "grid"); goto out; }
    for (size_t g = 0; g < ng; g++) {
        uint32_t first = pos[starts[g]];
        uint32_t c0 = (off[first] < off[first + 1] && coord[off[first]] == 0) ? cell[off[first]] : 0;
        b[g].lo = e[c0];
        b[g].hi = e[c0 + 1];
    }
    *bins = b;
    *nb = ng;
    b = NULL;
out:
    free(e); free(off); free(pos); free(coord); free(cell); free(order); free(starts); free(b);
    return rc;
}

/* ---- classwise ---- */
static cs_status classwise(const cs_prepared *p, const cs_settings *s, const uint32_t *items,
                           size_t ni, const atomic_int *cancel, cs_mx_agg *agg, cs_bin **bins,
                           size_t *nb, cs_error *err)
{
    const cs_dataset *d = p->d;
    size_t K = d->k, M = (size_t)s->bins;
    cs_mx_agg sum = {0, 0, 0};
    if (s->binning == CS_BIN_UNIFORM) {
        double *e = malloc((M + 1) * sizeof *e);
        size_t *cnt = calloc(K * M, sizeof *cnt), *pos = calloc(K * M, sizeof *pos);
        double *sv = calloc(K * M, sizeof *sv);
        cs_bin *cb = malloc(M * sizeof *cb), *pool = bins ? malloc(M * sizeof *pool) : NULL;
        if (!e || !cnt || !pos || !sv || !cb || (bins && !pool)) {
            free(e); free(cnt); free(pos); free(sv); free(cb); free(pool);
            return nomem(err, "classwise");
        }
        cs_mx_edges(e, (int)M);
        for (size_t j = 0; j < ni; j++) {
            if ((j & 1023) == 0 && cs_mx_cancelled(cancel)) {
                free(e); free(cnt); free(pos); free(sv); free(cb); free(pool);
                return cs_error_set(err, CS_ECANCELLED, 0, 0, "cancelled");
            }
            size_t r = p->rows[items[j]];
            const double *g = d->prob + r * K;
            size_t y = (size_t)d->label[r];
            for (size_t c = 0; c < K; c++) {
                size_t b = (size_t)cs_mx_ubin(g[c], e, (int)M);
                cnt[c * M + b]++;
                sv[c * M + b] += g[c];
                if (c == y) pos[c * M + b]++;
            }
        }
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
        free(e); free(cnt); free(pos); free(sv); free(cb);
    } else {
        double *v = malloc(p->n * sizeof *v);
        uint8_t *t = malloc(p->n);
        uint32_t *its = malloc(ni * sizeof *its);
        size_t G = M;   /* pooled table for mass: group g of every class */
        cs_bin *pool = (bins && s->binning == CS_BIN_MASS) ? calloc(G, sizeof *pool) : NULL;
        double *pv = pool ? calloc(G, sizeof *pv) : NULL, *pt = pool ? calloc(G, sizeof *pt) : NULL;
        if (!v || !t || !its || (pool && (!pv || !pt)) ||
            (bins && s->binning == CS_BIN_MASS && !pool)) {
            free(v); free(t); free(its); free(pool); free(pv); free(pt);
            return nomem(err, "classwise");
        }
        for (size_t g = 0; g < G && pool; g++) { pool[g].lo = INFINITY; pool[g].hi = -INFINITY; }
        cs_status rc = CS_OK;
        for (size_t c = 0; c < K && rc == CS_OK; c++) {
            if (cs_mx_cancelled(cancel)) { rc = cs_error_set(err, CS_ECANCELLED, 0, 0, "cancelled"); break; }
            for (size_t i = 0; i < p->n; i++) {
                v[i] = d->prob[(size_t)p->rows[i] * K + c];
                t[i] = d->label[p->rows[i]] == (int32_t)c;
            }
            cs_bin *cb = NULL;
            size_t ncb = 0;
            if (s->binning == CS_BIN_MASS) {
                /* stable sort of the (canonically ordered) items by this class's value */
                memcpy(its, items, ni * sizeof *its);
                uint32_t *order = NULL, *rank = NULL;
                if (cs_mx_order(v, p->n, &order, &rank) != 0) { rc = nomem(err, "classwise"); break; }
                rc = scalar_adaptive(s, v, t, items, ni, order, rank, p->n, &cb, &ncb, err);
                free(order);
                free(rank);
            } else {
                rc = scalar_adaptive(s, v, t, items, ni, NULL, NULL, p->n, &cb, &ncb, err);
            }
            if (rc != CS_OK) break;
            cs_mx_agg a = cs_mx_aggregate(s, cb, ncb, ni);
            sum.ece += a.ece; sum.ace += a.ace; sum.mce += a.mce;
            for (size_t g = 0; pool && g < ncb; g++) {
                pool[g].count += cb[g].count;
                pv[g] += cb[g].conf * (double)cb[g].count;
                pt[g] += cb[g].acc * (double)cb[g].count;
                if (cb[g].lo < pool[g].lo) pool[g].lo = cb[g].lo;
                if (cb[g].hi > pool[g].hi) pool[g].hi = cb[g].hi;
            }
            free(cb);
        }
        size_t used = 0;
        for (size_t g = 0; pool && g < G; g++)
            if (pool[g].count) {
                double n = (double)pool[g].count;
                pool[used] = pool[g];
                pool[used].conf = pv[g] / n;
                pool[used].acc = pt[g] / n;
                pool[used].gap = cs_mx_scalar_gap(s, pool[used].conf, pool[used].acc);
                used++;
            }
        free(v); free(t); free(its); free(pv); free(pt);
        if (rc != CS_OK) { free(pool); return rc; }
        if (bins) { *bins = pool; *nb = used; }
    }
    agg->ece = sum.ece / (double)K;
    agg->ace = sum.ace / (double)K;
    agg->mce = sum.mce / (double)K;
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
    if (!items && (p->kind == CS_LENS_CLASSWISE || p->vector || s->binning != CS_BIN_UNIFORM)) {
        /* NULL items (all samples) are read directly only by the uniform scalar path */
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
        bins = malloc(M * sizeof *bins);
        double *sv = calloc(M, sizeof *sv), *e = malloc((M + 1) * sizeof *e);
        size_t *st = calloc(M, sizeof *st);
        if (!bins || !sv || !e || !st) { free(bins); free(sv); free(e); free(st); return nomem(err, "bins"); }
        cs_mx_edges(e, (int)M);
        size_t *cnt = calloc(M, sizeof *cnt);
        int ur = cnt ? cs_mx_uniform_sums(p, items, ni, e, (int)M, cnt, sv, st, cancel) : -1;
        if (ur != 0) {
            free(bins); free(sv); free(e); free(st); free(cnt);
            return ur < 0 ? nomem(err, "bins") : cs_error_set(err, CS_ECANCELLED, 0, 0, "cancelled");
        }
        for (size_t b = 0; b < M; b++) bins[b].count = cnt[b];
        free(cnt);
        for (size_t b = 0; b < M; b++) {
            size_t n = bins[b].count;
            bins[b].lo = e[b];
            bins[b].hi = e[b + 1];
            bins[b].conf = n ? sv[b] / (double)n : NAN;
            bins[b].acc = n ? (double)st[b] / (double)n : NAN;
            bins[b].gap = n ? cs_mx_scalar_gap(s, bins[b].conf, bins[b].acc) : NAN;
        }
        nb = M;
        free(sv); free(e); free(st);
    } else if (s->binning == CS_BIN_UNIFORM) {
        rc = vector_grid(p, items, ni, &bins, &nb, err);
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

/* Top-1 equal-mass ECE: the subset in value order comes from the precomputed ranks
 * (cs_mx_by_rank: a bitmap or counting pass, no sort), then the array_split groups. */
static cs_status aece(const cs_prepared *cp, const uint32_t *items, size_t ni,
                      cs_mx_scratch *sc, double *out, cs_error *err)
{
    cs_prepared *p = (cs_prepared *)cp;
    const double *v; const uint8_t *t; const uint32_t *o, *r;
    if (lazy_order(p, 1, &v, &t, &o, &r) != 0) return nomem(err, "ranks");
    cs_settings s = p->s;
    s.binning = CS_BIN_MASS;
    s.distance = CS_DIST_TVD;
    const uint32_t *order = cs_mx_by_rank(sc, items, ni, o, r, p->n);
    size_t ng = 0, *starts = order ? mass_starts(ni, s.bins, &ng) : NULL;
    cs_bin *b = starts ? malloc((ng ? ng : 1) * sizeof *b) : NULL;
    if (!b) { free(starts); return nomem(err, "bins"); }
    cs_mx_scalar_groups(&s, v, t, order, starts, ng, b);
    *out = cs_mx_aggregate(&s, b, ng, ni).ece;
    free(starts);
    free(b);
    return CS_OK;
}

cs_status cs_evaluate(const cs_prepared *p, const uint32_t *idx, size_t n, unsigned want,
                      const atomic_int *cancel, cs_result *out, cs_error *err)
{
    memset(out, 0, sizeof *out);
    out->accuracy = out->ece = out->ace = out->mce = NAN;
    out->rece_g = out->rece_m = out->brier = out->nll = out->aece = out->sce = NAN;
    size_t ni = idx ? n : p->n;
    if (ni == 0) return cs_error_set(err, CS_EEMPTY, 0, 0, "no samples to measure");
    if (ni > UINT32_MAX) return cs_error_set(err, CS_EUSAGE, 0, 0, "too many samples");
    int sorted = 1;
    if (idx) {
        /* range check and "already ascending" in one branch-free pass */
        uint32_t mx = 0, prev = 0;
        unsigned desc = 0;
        for (size_t j = 0; j < ni; j++) {
            uint32_t x = idx[j];
            mx = x > mx ? x : mx;
            desc |= x < prev;
            prev = x;
        }
        sorted = !desc;
        if (mx >= p->n)
            for (size_t j = 0; j < ni; j++)
                if (idx[j] >= p->n)
                    return cs_error_set(err, CS_EUSAGE, 0, 0,
                                        "sample index %u out of range (%zu)", idx[j], p->n);
    }
    /* Scratch from the prepared object's pool: no large allocation per call. items: the
     * subset in canonical (ascending) order, or NULL for all samples in order. */
    cs_mx_scratch *sc = cs_mx_scratch_get((cs_prepared *)p);
    const uint32_t *items = idx && sorted ? idx : NULL;
    if (!sc || (idx && !sorted && !(items = cs_mx_canonical(sc, idx, ni, p->n)))) {
        cs_mx_scratch_put((cs_prepared *)p, sc);
        return nomem(err, "evaluate");
    }
    out->n = ni;
    cs_status rc = CS_OK;
    if (want & CS_WANT_ACCURACY) {
        size_t c = 0;
        const uint8_t *cor = p->d->correct;
        if (items)
            for (size_t j = 0; j < ni; j++) c += cor[p->rows[items[j]]];
        else
            for (size_t j = 0; j < ni; j++) c += cor[p->rows[j]];
        out->accuracy = (double)c / (double)ni;
    }
    if (rc == CS_OK && (want & (CS_WANT_BRIER | CS_WANT_NLL)))
        rc = cs_mx_scores(p, items, ni, want, &out->brier, &out->nll, err);
    if (rc == CS_OK && (want & CS_WANT_BINNED)) rc = cs_mx_binned(p, items, ni, cancel, out, err);
    if (rc == CS_OK && (want & CS_WANT_AECE)) rc = aece(p, items, ni, sc, &out->aece, err);
    /* the remaining paths (but RECE-G) read an explicit array */
    const uint32_t *arr = items;
    if (rc == CS_OK && !arr && (want & (CS_WANT_SCE | CS_WANT_RECE_CURVE)) &&
        !(arr = cs_mx_identity(sc, ni)))
        rc = nomem(err, "evaluate");
    if (rc == CS_OK && (want & CS_WANT_SCE)) {
        cs_settings s = p->s;
        s.binning = CS_BIN_UNIFORM;
        s.distance = CS_DIST_TVD;
        cs_mx_agg a;
        rc = classwise(p, &s, arr, ni, cancel, &a, NULL, NULL, err);
        if (rc == CS_OK) out->sce = a.ece;
    }
    if (rc == CS_OK && (want & CS_WANT_RECE_G)) rc = cs_mx_rece_g(p, items, ni, cancel, &out->rece_g, err);
    if (rc == CS_OK && (want & CS_WANT_RECE_CURVE) && !p->vector && p->kind != CS_LENS_CLASSWISE) {
        size_t M = (size_t)p->s.bins;
        out->rece_acc = malloc(M * sizeof *out->rece_acc);
        out->rece_conf = malloc(M * sizeof *out->rece_conf);
        double rg;
        if (!out->rece_acc || !out->rece_conf) rc = nomem(err, "RECE-G curve");
        else rc = cs_mx_rece_curve(p, arr, ni, cancel, &rg, out->rece_acc, out->rece_conf, err);
        if (rc == CS_OK) out->n_rece = M;
    }
    if (rc == CS_OK && cs_mx_cancelled(cancel)) rc = cs_error_set(err, CS_ECANCELLED, 0, 0, "cancelled");
    cs_mx_scratch_put((cs_prepared *)p, sc);
    if (rc != CS_OK) {
        cs_result_free(out);
        double nn = NAN;
        out->accuracy = out->ece = out->ace = out->mce = nn;
    }
    return rc;
}
