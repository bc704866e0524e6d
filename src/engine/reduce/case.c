/* One case streamed into its slice of the statistics (reduce.h): the label map whole as one
 * class code per voxel, then each probability channel in slabs. Everything a voxel adds is
 * added by this one thread in file order, so a case's sums never depend on the thread count.
 *
 * Per channel j and voxel: the one-vs-rest fine-bin sums (cs_ubin_at on the precomputed edges:
 * the one bin rule), (p − y)², and −ln max(q, 1e-15) with q = p where y = 1, 1 − p where y = 0;
 * the logs are taken once per group of NLL_GROUP factors (as the row engine's NLL, scoring.c:
 * a product of 16 factors ≥ 1e-15 stays a normal double). Softmax: a running per-voxel max,
 * argmax (strictly greater: ties keep the first channel, as cs_dataset_prepare) and sum (in
 * channel order, as the CSV loader's row sum), which give the top-1 sums and the sum check once
 * the last channel is in. */
#include "engine/reduce/reduce_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calscope/metrics.h"
#include "calscope/ubin.h"

#define NLL_GROUP 16

/* Appends " (labels: L)" / " (probabilities: P)" to a reader's message, so that every refusal
 * names both files. */
cs_status rd_also(cs_error *err, const char *what, const char *other)
{
    size_t n = strlen(err->msg);
    if (err->code == CS_EINPUT && n < sizeof err->msg)
        snprintf(err->msg + n, sizeof err->msg - n, " (%s: %s)", what, other);
    return err->code;
}

typedef struct work {
    const rd_case_ctx *x;
    size_t ci;
    const cs_seg_case *c;
    const cs_seg_mapping *m;
    rd_shape sh;
    int wide;                 /* codes / argmax as uint32 instead of uint8 */
    int f16;                  /* the probabilities are float16 (the sum check says what that means) */
    void *code;               /* V class codes */
    double *vmax, *vsum;      /* softmax: running max and sum per voxel */
    void *arg;                /* softmax: running argmax per voxel */
    double *slab;
    uint8_t *ytab;            /* code -> y for the channel being read */
    /* progress */
    uint64_t weight, vals_total, vals_done, units_sent;
} work;

static inline uint32_t get(const void *a, int wide, uint64_t v)
{
    return wide ? ((const uint32_t *)a)[v] : ((const uint8_t *)a)[v];
}
static inline void put(void *a, int wide, uint64_t v, uint32_t x)
{
    if (wide) ((uint32_t *)a)[v] = x;
    else ((uint8_t *)a)[v] = (uint8_t)x;
}

/* Progress: the case's weight (its files' bytes) in proportion to the values read. */
static void advance(work *w, uint64_t n)
{
    const rd_case_ctx *x = w->x;
    w->vals_done += n;
    uint64_t units = w->vals_done >= w->vals_total ? w->weight
                   : (uint64_t)((double)w->weight * ((double)w->vals_done / (double)w->vals_total));
    if (units <= w->units_sent) return;
    uint64_t add = units - w->units_sent;
    uint64_t done = atomic_fetch_add(x->units_done, add) + add;
    w->units_sent = units;
    if (!x->progress_ppm || !x->units_total) return;
    int ppm = (int)((double)done / (double)x->units_total * 1e6);
    if (ppm > 1000000) ppm = 1000000;
    int cur = atomic_load(x->progress_ppm);
    while (cur < ppm && !atomic_compare_exchange_weak(x->progress_ppm, &cur, ppm)) {}
}

/* Progress and cancel, once per slab: the user's cancel, or a case before this one failed
 * (its error is the one reported, so this one's work is moot). */
static cs_status step(work *w, size_t n, cs_error *err)
{
    advance(w, n);
    const rd_case_ctx *x = w->x;
    if ((x->cancel && atomic_load(x->cancel)) || atomic_load(x->first_fail) < w->ci)
        return cs_error_set(err, CS_ECANCELLED, 0, 0, "cancelled");
    return CS_OK;
}

static cs_status read_labels(work *w, cs_vol *lv, cs_error *err)
{
    const cs_seg_mapping *m = w->m;
    uint64_t V = w->sh.voxels;
    double last = NAN;
    long last_code = -1;
    for (uint64_t v0 = 0; v0 < V;) {
        size_t n = V - v0 < CS_REDUCE_SLAB ? (size_t)(V - v0) : CS_REDUCE_SLAB;
        if (cs_vol_read(lv, w->slab, n, err) != CS_OK) return rd_also(err, "probabilities", w->c->probs);
        for (size_t i = 0; i < n; i++) {
            double y = w->slab[i];
            long code = y == last ? last_code : cs_seg_mapping_code(m, y);
            if (code < 0) {
                char vt[128], d[512], yt[40];
                rd_voxel_text(&w->sh, v0 + i, vt, sizeof vt);
                cs_seg_mapping_describe(m, d, sizeof d);
                cs_format_number(yt, sizeof yt, y);
                return cs_error_set(err, CS_EINPUT, 0, 0, "%s: label value %s at voxel %s is not in %s%s (probabilities: %s)",
                                    w->c->labels, yt, vt, d, m->kind == CS_SEG_REGIONS ? " and not 0" : "", w->c->probs);
            }
            last = y;
            last_code = code;
            put(w->code, w->wide, v0 + i, (uint32_t)code);
        }
        v0 += n;
        cs_status st = step(w, n, err);
        if (st != CS_OK) return st;
    }
    return CS_OK;
}

static cs_status out_of_range(const work *w, uint64_t v, size_t j, double p, cs_error *err)
{
    char vt[128], pt[40];
    rd_voxel_text(&w->sh, v, vt, sizeof vt);
    cs_format_number(pt, sizeof pt, p);
    if (isnan(p)) snprintf(pt, sizeof pt, "nan");
    return cs_error_set(err, CS_EINPUT, 0, 0, "%s: probability %s outside [0,1] at voxel %s, channel %zu (labels: %s)",
                        w->c->probs, pt, vt, j, w->c->labels);
}

/* The running sums of one channel. */
typedef struct acc {
    double sq, nllp, nlln, pp, pn;
    int npp, npn;
} acc;

/* Adds n checked values of one channel (voxels v0..) to its fine-bin sums and scores. Locals
 * and restrict pointers: the stores into the sums cannot alias the inputs, so nothing is
 * reloaded per voxel. c8 or c32 holds the voxels' class codes (the other is NULL). */
static inline void add_slab(const double *restrict s, size_t n, const uint8_t *restrict c8,
                            const uint32_t *restrict c32, const uint8_t *restrict ytab,
                            const double *restrict e, int F, uint64_t *restrict cnt,
                            double *restrict sp, uint64_t *restrict sy, acc *a)
{
    double sq = a->sq, nllp = a->nllp, nlln = a->nlln, pp = a->pp, pn = a->pn;
    int npp = a->npp, npn = a->npn;
    for (size_t i = 0; i < n; i++) {
        double p = s[i];
        unsigned y = ytab[c8 ? c8[i] : c32[i]];
        int b = cs_ubin_at(p, e, F);
        cnt[b]++;
        sp[b] += p;
        sy[b] += y;
        double d = p - (double)y;
        sq += d * d;
        if (y) {
            pp *= p > 1e-15 ? p : 1e-15;
            if (++npp == NLL_GROUP) { nllp -= log(pp); pp = 1.0; npp = 0; }
        } else {
            double q = 1.0 - p;
            pn *= q > 1e-15 ? q : 1e-15;
            if (++npn == NLL_GROUP) { nlln -= log(pn); pn = 1.0; npn = 0; }
        }
    }
    *a = (acc){ sq, nllp, nlln, pp, pn, npp, npn };
}

/* Softmax: channel j's values into the running max (strictly greater: the first channel keeps
 * a tie), argmax and sum of voxels v0... */
static void running(work *w, const double *restrict s, size_t n, uint64_t v0, size_t j)
{
    double *restrict mx = w->vmax + v0, *restrict sm = w->vsum + v0;
    uint8_t *a8 = w->wide ? NULL : (uint8_t *)w->arg + v0;
    uint32_t *a32 = w->wide ? (uint32_t *)w->arg + v0 : NULL;
    if (j == 0) {
        memcpy(mx, s, n * sizeof *s);
        memcpy(sm, s, n * sizeof *s);
        if (a8) memset(a8, 0, n);
        else memset(a32, 0, n * sizeof *a32);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        double p = s[i];
        if (p > mx[i]) {
            mx[i] = p;
            if (a8) a8[i] = (uint8_t)j;
            else a32[i] = (uint32_t)j;
        }
        sm[i] += p;
    }
}

/* Channel j: its one-vs-rest sums and scores, and the running softmax values. */
static cs_status read_channel(work *w, cs_vol *pv, size_t j, cs_error *err)
{
    const rd_case_ctx *x = w->x;
    cs_segstats *st = x->st;
    const cs_seg_mapping *m = w->m;
    int soft = m->kind == CS_SEG_SOFTMAX;
    for (size_t c = 0; c < m->n_values; c++)
        w->ytab[c] = soft ? m->class_of[c] == j : m->member[c * m->k + j];
    size_t base = cs_segstats_ci(st, w->ci, j, 0);
    acc a = { 0.0, 0.0, 0.0, 1.0, 1.0, 0, 0 };
    uint64_t V = w->sh.voxels;
    for (uint64_t v0 = 0; v0 < V;) {
        size_t n = V - v0 < CS_REDUCE_SLAB ? (size_t)(V - v0) : CS_REDUCE_SLAB;
        if (cs_vol_read(pv, w->slab, n, err) != CS_OK) return rd_also(err, "labels", w->c->labels);
        for (size_t i = 0; i < n; i++)
            if (!(w->slab[i] >= 0.0 && w->slab[i] <= 1.0)) return out_of_range(w, v0 + i, j, w->slab[i], err);
        if (w->wide)
            add_slab(w->slab, n, NULL, (const uint32_t *)w->code + v0, w->ytab, x->edges, st->fine,
                     st->cnt + base, st->sum_p + base, st->sum_y + base, &a);
        else
            add_slab(w->slab, n, (const uint8_t *)w->code + v0, NULL, w->ytab, x->edges, st->fine,
                     st->cnt + base, st->sum_p + base, st->sum_y + base, &a);
        if (soft) running(w, w->slab, n, v0, j);
        v0 += n;
        cs_status s = step(w, n, err);
        if (s != CS_OK) return s;
    }
    if (a.npp) a.nllp -= log(a.pp);
    if (a.npn) a.nlln -= log(a.pn);
    size_t si = w->ci * st->k + j;
    st->sq_err[si] = a.sq;
    st->nll_pos[si] = a.nllp;
    st->nll_neg[si] = a.nlln;
    return CS_OK;
}

/* Softmax, after the last channel: the sum check, then the top-1 sums. */
static cs_status finish_softmax(work *w, cs_error *err)
{
    const rd_case_ctx *x = w->x;
    cs_segstats *st = x->st;
    const int F = st->fine;
    double tol = x->o->sum_tol;
    uint64_t V = w->sh.voxels;
    for (uint64_t v = 0; v < V; v++) {
        double s = w->vsum[v];
        if (fabs(s - 1.0) <= tol) continue;
        char vt[128], sum[40], tt[40];
        rd_voxel_text(&w->sh, v, vt, sizeof vt);
        /* the CSV loader's wording and digits (load_row.c) */
        snprintf(sum, sizeof sum, "%.10g", s);
        if (strtod(sum, NULL) == 1.0 && s != 1.0) cs_format_number(sum, sizeof sum, s);
        cs_format_number(tt, sizeof tt, tol);
        char note[200] = "";
        if (w->f16) {
            char most[40];
            snprintf(most, sizeof most, "%.2g", (double)w->sh.channels * 0x1p-12);
            snprintf(note, sizeof note, "; float16 rounds each value to ~5e-4 (up to 2.4e-4 off), so %zu channels may miss 1 by"
                     " up to %s: raise --sum-tol", w->sh.channels, most);
        }
        return cs_error_set(err, CS_EINPUT, 0, 0, "%s: probabilities sum to %s, not 1 within %s at voxel %s%s (labels: %s)",
                            w->c->probs, sum, tt, vt, note, w->c->labels);
    }
    size_t base = cs_segstats_ti(st, w->ci, 0);
    uint64_t *tc = st->t_cnt + base, *tk = st->t_sum_correct + base;
    double *ts = st->t_sum_conf + base;
    for (uint64_t v = 0; v < V; v++) {
        double conf = w->vmax[v];
        int b = cs_ubin_at(conf, x->edges, F);
        tc[b]++;
        ts[b] += conf;
        tk[b] += get(w->arg, w->wide, v) == w->m->class_of[get(w->code, w->wide, v)];
    }
    return CS_OK;
}

/* *p holds at least `need` bytes: grown (not copied: its content is rewritten) when short. */
static int grow(void **p, size_t *cap, size_t need)
{
    if (*cap >= need && *p) return 0;
    free(*p);
    *p = malloc(need ? need : 1);
    *cap = *p ? need : 0;
    return *p ? 0 : -1;
}

void rd_scratch_free(rd_scratch *s)
{
    if (!s) return;
    for (int i = 0; i < RD_SCRATCH_BUFS; i++) free(s->buf[i]);
    memset(s, 0, sizeof *s);
}

/* The case's buffers from the worker's scratch, kept from case to case: a large volume's pages
 * are touched once per worker, not once per case. */
static cs_status allocate(work *w, rd_scratch *sc, cs_error *err)
{
    uint64_t V = w->sh.voxels;
    size_t es = w->wide ? 4 : 1;
    int soft = w->m->kind == CS_SEG_SOFTMAX;
    if (V > SIZE_MAX / 8)
        return cs_error_set(err, CS_ENOMEM, 0, 0, "%s: %llu voxels do not fit in memory", w->c->probs, (unsigned long long)V);
    size_t nv = (size_t)V;
    int bad = grow(&sc->buf[0], &sc->cap[0], nv * es) || grow(&sc->buf[1], &sc->cap[1], CS_REDUCE_SLAB * sizeof(double))
           || grow(&sc->buf[2], &sc->cap[2], w->m->n_values);
    if (!bad && soft)
        bad = grow(&sc->buf[3], &sc->cap[3], nv * sizeof(double)) || grow(&sc->buf[4], &sc->cap[4], nv * sizeof(double))
           || grow(&sc->buf[5], &sc->cap[5], nv * es);
    if (bad)
        return cs_error_set(err, CS_ENOMEM, 0, 0, "case '%s': out of memory for %llu voxels", w->c->name, (unsigned long long)V);
    w->code = sc->buf[0];
    w->slab = sc->buf[1];
    w->ytab = sc->buf[2];
    if (soft) {
        w->vmax = sc->buf[3];
        w->vsum = sc->buf[4];
        w->arg = sc->buf[5];
    }
    return CS_OK;
}

cs_status rd_reduce_case(const rd_case_ctx *x, size_t ci, rd_scratch *sc, cs_error *err)
{
    work w = { .x = x, .ci = ci, .c = &x->plan->cases[ci], .m = x->m };
    w.weight = w.c->probs_size + w.c->labels_size + 1;
    cs_vol *pv = NULL, *lv = NULL;
    cs_status st = cs_vol_open(w.c->probs, NULL, &pv, err);
    if (st != CS_OK) rd_also(err, "labels", w.c->labels);
    if (st == CS_OK && (st = cs_vol_open(w.c->labels, NULL, &lv, err)) != CS_OK) rd_also(err, "probabilities", w.c->probs);
    if (st == CS_OK)
        st = rd_check_pair(w.c, cs_vol_info_of(pv), cs_vol_info_of(lv), x->m, x->o->affine_tol, &w.sh, err);
    if (st == CS_OK) {
        w.f16 = cs_vol_info_of(pv)->dtype == CS_VDT_F16;
        w.wide = x->m->n_values > 256 || x->m->k > 256;
        w.vals_total = w.sh.voxels * (uint64_t)(w.sh.channels + 1);
        st = allocate(&w, sc, err);
    }
    if (st == CS_OK) st = read_labels(&w, lv, err);
    for (size_t j = 0; st == CS_OK && j < w.sh.channels; j++) st = read_channel(&w, pv, j, err);
    if (st == CS_OK && x->m->kind == CS_SEG_SOFTMAX) st = finish_softmax(&w, err);
    if (st == CS_OK) {
        x->st->voxels[ci] = w.sh.voxels;
        advance(&w, w.vals_total - w.vals_done);   /* the case's whole weight once done */
    }
    cs_vol_close(pv);
    cs_vol_close(lv);
    return st;
}
