/* One case streamed into its slice of the statistics (reduce.h): the label map whole as one
 * class code per voxel, then each probability channel in slabs (stream.c: read on this thread or
 * by a helper thread a slab ahead; budget.c decides when the case may start and which).
 * Each slab has two stages: this thread bins it (the fine-bin sums, (p − y)², the running
 * softmax values and, in the last channel, the top-1 sums) and writes each voxel's y beside it;
 * then the stream's after stage (score_slab: the NLL) runs on the reader thread when the case
 * has one, on this thread otherwise. Every sum is added by one stage, in file order, so a
 * case's sums never depend on the thread count or on which thread ran a stage.
 *
 * The binning runs in vector lanes (lanes.c: the same bits) where the CPU has AVX2 and the layout
 * is one segmentation pipelines write; channel_slab and top1_slab are the rules, and do the rest.
 *
 * Per channel j and voxel: the one-vs-rest fine-bin sums (cs_ubin_at on the precomputed edges:
 * the one bin rule), (p − y)², and −ln max(q, 1e-15) with q = p where y = 1, 1 − p where y = 0;
 * the logs are taken once per group of NLL_GROUP factors (as the row engine's NLL, scoring.c:
 * a product of 16 factors ≥ 1e-15 stays a normal double). Softmax: a running per-voxel max and
 * argmax (strictly greater: ties keep the first channel, as cs_dataset_prepare), which give the
 * top-1 sums once the last channel is in, and a running sum for the sum check.
 *
 * Memory per voxel, kept small without changing a number (reduce.h):
 *   - the class code and the argmax share one byte (a nibble each) when both fit in 4 bits;
 *   - the running max is a float when the values are float16/float32 without scaling: every
 *     value is then a float, and so is their max, exactly;
 *   - the running sum is a 16-bit fixed-point number (steps of 2^-15, 1.99997 at most, where
 *     it stays) when C·2^-15 <= tol/4, else a float, rounded at each channel. The decision
 *     must be the CSV loader's, cs_row_sum_ok on the double sum s in channel order (|s − 1| <=
 *     tol, and a few units of its last place more: engine/num/rowsum.h). The
 *     16-bit sum f is within C·(2^-16 + 2^-50) < C·2^-15 of s (C roundings to the step, the
 *     rest double rounding); the float sum within C·2^-23·(|f| + 1) (C roundings to float and
 *     C to double, each ≤ 2^-24 of a partial sum, partial sums ≤ the total as values are
 *     ≥ 0). So a voxel whose f passes with that margin (twice the bound, for the float) passes
 *     exactly; valid float32 maps, within ~1e-7 of 1, do so at the default 1e-3 for up to 8
 *     classes on the 16-bit sum. A saturated 16-bit sum is never sure. Any other voxel (near
 *     the tolerance edge, or failing) sends the case to an exact check (exact_sums): the
 *     probabilities are read again and the double sums formed in channel order for a window
 *     of voxels from the first such voxel, in the memory the running max used, until the
 *     first voxel that fails exactly — whose sum the message prints — or the end. A case of valid maps, whose sums are within float noise of 1,
 *     never pays for it; --sum-tol 0 does (every voxel is near the edge: up to 2 more reads). */
#include "engine/reduce/reduce_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "calscope/metrics.h"
#include "engine/num/rowsum.h"
#include "engine/num/ubin.h"

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

/* How class codes and argmaxes are stored: one byte per voxel holding both (code in the low
 * nibble, argmax in the high one), or separate uint8 / uint32 arrays. */
enum { CELL_PACK, CELL_U8, CELL_U32 };

typedef struct work {
    const rd_case_ctx *x;
    size_t ci;
    const cs_seg_case *c;
    const cs_seg_mapping *m;
    rd_shape sh;
    int cells;                /* CELL_*: codes / argmaxes layout */
    int fmax;                 /* the running max is a float (float16/float32 values, unscaled) */
    int f16;                  /* the probabilities are float16 (the sum check says what that means) */
    int s16;                  /* the running sum is 16-bit fixed point (else a float) */
    void *code;               /* V class codes (CELL_PACK: with the argmax) */
    void *vmax;               /* softmax: running max per voxel, float (fmax) or double */
    void *vsum;               /* softmax: running sum per voxel, uint16_t (s16) or float */
    void *arg;                /* softmax, CELL_U8 / CELL_U32: running argmax per voxel */
    void *map;                /* the mapping the four arrays above are in (allocate) */
    size_t map_size;
    rd_stream *in;            /* the case's values, in slabs */
    uint64_t bytes;           /* what the budget admitted for the case (case_bytes) */
    uint8_t *ytab;            /* code -> y for the channel being read */
    size_t slab;              /* values of a slab (rd_slab) */
    uint64_t unsure;          /* softmax: the first voxel whose running sum is not sure, or UINT64_MAX */
    int refused;              /* a value was refused: 1 a label, 2 a probability (else 0) */
    struct chan_score {       /* the after stage's (score_slab): the channel's running scores */
        double sq, nllp, nlln, pp, pn;    /* pp / pn: products of the pending NLL factors */
        int npp, npn;
    } score;
    /* progress */
    uint64_t weight, vals_total, vals_done, units_sent;
} work;

static inline uint32_t code_at(const work *w, int cells, uint64_t v)
{
    if (cells == CELL_U32) return ((const uint32_t *)w->code)[v];
    uint32_t b = ((const uint8_t *)w->code)[v];
    return cells == CELL_PACK ? b & 15u : b;
}
static inline uint32_t arg_at(const work *w, int cells, uint64_t v)
{
    if (cells == CELL_PACK) return (uint32_t)((const uint8_t *)w->code)[v] >> 4;
    return cells == CELL_U32 ? ((const uint32_t *)w->arg)[v] : ((const uint8_t *)w->arg)[v];
}
static inline void arg_put(work *w, int cells, uint64_t v, uint32_t j)
{
    if (cells == CELL_PACK) {
        uint8_t *b = (uint8_t *)w->code + v;
        *b = (uint8_t)((*b & 15u) | (j << 4));
    } else if (cells == CELL_U32) ((uint32_t *)w->arg)[v] = j;
    else ((uint8_t *)w->arg)[v] = (uint8_t)j;
}
/* the running max of voxel v as a double (exact either way) */
static inline double max_at(const work *w, int fmax, uint64_t v)
{
    return fmax ? (double)((const float *)w->vmax)[v] : ((const double *)w->vmax)[v];
}
static inline void max_put(work *w, int fmax, uint64_t v, double p)
{
    if (fmax) ((float *)w->vmax)[v] = (float)p;
    else ((double *)w->vmax)[v] = p;
}

static inline void sum_put(work *w, int s16, uint64_t v, size_t j, double p)
{
    if (s16) {
        uint16_t *u = (uint16_t *)w->vsum + v;
        *u = rd_s16_of(j ? (double)*u * RD_S16_STEP + p : p);
    } else {
        float *f = (float *)w->vsum + v;
        *f = (float)(j ? (double)*f + p : p);
    }
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

static cs_status read_labels(work *w, cs_error *err)
{
    const cs_seg_mapping *m = w->m;
    uint64_t V = w->sh.voxels;
    /* the codes of the label values 0..255, what label maps hold: one look-up a voxel */
    int16_t small[256];
    for (int b = 0; b < 256; b++) small[b] = (int16_t)cs_seg_mapping_code(m, (double)b);
    double block[RD_BLOCK];
    for (uint64_t v0 = 0; v0 < V;) {
        size_t n = V - v0 < w->slab ? (size_t)(V - v0) : w->slab;
        rd_values vals;
        if (rd_stream_next(w->in, n, &vals, NULL, err) != CS_OK) return rd_also(err, "probabilities", w->c->probs);
        for (size_t i = 0; i < n; i++) {
            if (i % RD_BLOCK == 0) rd_values_block(&vals, i, block);
            double y = block[i % RD_BLOCK];
            long code = y >= 0.0 && y < 256.0 && (double)(int)y == y ? small[(int)y] : cs_seg_mapping_code(m, y);
            if (code < 0) {
                char vt[128], d[512], yt[40];
                rd_voxel_text(&w->sh, v0 + i, vt, sizeof vt);
                cs_seg_mapping_describe(m, d, sizeof d);
                if (y == floor(y) && fabs(y) < 1e15) snprintf(yt, sizeof yt, "%.0f", y);   /* 300, not 3e+02 */
                else cs_format_number(yt, sizeof yt, y);
                w->refused = 1;
                return cs_error_set(err, CS_EINPUT, 0, 0, "%s: label value %s at voxel %s is not in %s%s (probabilities: %s)",
                                    w->c->labels, yt, vt, d, m->kind == CS_SEG_REGIONS ? " and not 0" : "", w->c->probs);
            }
            if (w->cells == CELL_U32) ((uint32_t *)w->code)[v0 + i] = (uint32_t)code;
            else ((uint8_t *)w->code)[v0 + i] = (uint8_t)code;   /* CELL_PACK: argmax 0 */
        }
        v0 += n;
        cs_status st = step(w, n, err);
        if (st != CS_OK) return st;
    }
    return CS_OK;
}

static cs_status out_of_range(work *w, uint64_t v, size_t j, double p, cs_error *err)
{
    char vt[128], pt[40];
    w->refused = 2;
    rd_voxel_text(&w->sh, v, vt, sizeof vt);
    cs_format_number(pt, sizeof pt, p);
    if (isnan(p)) snprintf(pt, sizeof pt, "nan");
    return cs_error_set(err, CS_EINPUT, 0, 0, "%s: probability %s outside [0,1] at voxel %s, channel %zu (labels: %s)",
                        w->c->probs, pt, vt, j, w->c->labels);
}

/* n values of channel j from voxel v0 (in vals): the fine-bin sums, the running softmax values,
 * and each voxel's y in ys for the scores (score_slab). `cells`, `fmax` and `s16` are w's,
 * passed as constants by read_channel so that each layout gets its own loop (always inlined:
 * GCC otherwise made one loop that tests the three at every voxel). */
__attribute__((always_inline)) static inline cs_status
channel_slab(work *w, size_t j, uint64_t v0, const double *vals, uint8_t *ys, size_t n, const int cells, const int fmax,
             const int s16, cs_error *err)
{
    cs_segstats *st = w->x->st;
    const int F = st->fine;
    const double *e = w->x->edges;
    const int soft = w->m->kind == CS_SEG_SOFTMAX;
    size_t base = cs_segstats_ci(st, w->ci, j, 0);
    uint64_t *cnt = st->cnt + base, *sy = st->sum_y + base;
    double *sp = st->sum_p + base;
    for (size_t i = 0; i < n; i++) {
        double p = vals[i];
        uint64_t v = v0 + i;
        if (!(p >= 0.0 && p <= 1.0)) return out_of_range(w, v, j, p, err);
        unsigned y = w->ytab[code_at(w, cells, v)];
        ys[i] = (uint8_t)y;
        int b = cs_ubin_at(p, e, F);
        cnt[b]++;
        sp[b] += p;
        sy[b] += y;
        if (!soft) continue;
        if (j == 0) {
            max_put(w, fmax, v, p);
            arg_put(w, cells, v, 0);
        } else if (p > max_at(w, fmax, v)) {
            max_put(w, fmax, v, p);
            arg_put(w, cells, v, (uint32_t)j);
        }
        sum_put(w, s16, v, j, p);
    }
    return CS_OK;
}

/* The after stage of the case's stream (stream.c; the helper thread's when the case has one):
 * channel j's (p − y)² and −ln max(q, 1e-15), in voxel order from slab to slab, written to the
 * statistics at the channel's last slab. The labels' slabs have nothing to score. */
static void score_slab(void *arg, size_t part, uint64_t v0, const rd_values *vals, const uint8_t *ys)
{
    work *w = arg;
    if (part == 0) return;
    struct chan_score a = w->score;
    if (v0 == 0) a = (struct chan_score){ .pp = 1.0, .pn = 1.0 };
    size_t n = vals->n;
    double block[RD_BLOCK];
    for (size_t b = 0; b < n; b += RD_BLOCK) {
        size_t bn = rd_values_block(vals, b, block);
        const uint8_t *yb = ys + b;
        for (size_t i = 0; i < bn; i++) {
            double p = block[i];
            unsigned y = yb[i];
            double d = p - (double)y;
            a.sq += d * d;
            if (y) {
                a.pp *= p > 1e-15 ? p : 1e-15;
                if (++a.npp == NLL_GROUP) { a.nllp -= log(a.pp); a.pp = 1.0; a.npp = 0; }
            } else {
                double q = 1.0 - p;
                a.pn *= q > 1e-15 ? q : 1e-15;
                if (++a.npn == NLL_GROUP) { a.nlln -= log(a.pn); a.pn = 1.0; a.npn = 0; }
            }
        }
    }
    w->score = a;
    if (v0 + n < w->sh.voxels) return;
    if (a.npp) a.nllp -= log(a.pp);
    if (a.npn) a.nlln -= log(a.pn);
    cs_segstats *st = w->x->st;
    size_t si = w->ci * st->k + (part - 1);
    st->sq_err[si] = a.sq;
    st->nll_pos[si] = a.nllp;
    st->nll_neg[si] = a.nlln;
}

/* Whether the case's layout is one the lanes do (lanes.c): softmax with a float max, a 16-bit sum
 * and code and argmax in one byte, or regions with a byte a code. */
static int lanes_fit(const work *w)
{
    if (w->m->kind == CS_SEG_SOFTMAX) return w->cells == CELL_PACK && w->fmax && w->s16;
    return w->cells == CELL_U8;
}

/* The first voxel in [v, end) whose running sum does not pass with the margin of its rounding
 * (see the top of this file), or end. */
static uint64_t next_unsure(const work *w, uint64_t v, uint64_t end)
{
    double tol = w->x->o->sum_tol, C = (double)w->sh.channels;
    if (w->s16) {
        const uint16_t *u = w->vsum;
        for (; v < end; v++)
            if (u[v] == 65535 || !(fabs((double)u[v] * RD_S16_STEP - 1.0) + C * RD_S16_STEP <= tol)) break;
        return v;
    }
    const float *fs = w->vsum;
    double c = C * 0x1p-22;
    for (; v < end; v++) {
        double f = (double)fs[v];
        if (!(fabs(f - 1.0) + c * (fabs(f) + 1.0) <= tol)) break;
    }
    return v;
}

/* Softmax, voxels [v0, v0 + n) once the last channel is in: their top-1 sums (in voxel order,
 * slab after slab) and the first voxel whose running sum does not pass with the margin of its
 * rounding (next_unsure). Made while the slab's per-voxel values are in the cache, beside the
 * reader. */
static void top1_slab(work *w, uint64_t v0, size_t n)
{
    const rd_case_ctx *x = w->x;
    cs_segstats *st = x->st;
    const int F = st->fine;
    size_t base = cs_segstats_ti(st, w->ci, 0);
    uint64_t *tc = st->t_cnt + base, *tk = st->t_sum_correct + base;
    double *ts = st->t_sum_conf + base;
    if (lanes_fit(w) && rd_lanes_available()) {
        rd_top1_block tb = { .edges = x->edges, .fine = F, .tc = tc, .tk = tk, .ts = ts };
        for (size_t c = 0; c < 16 && c < w->m->n_values; c++) tb.class16[c] = (uint8_t)w->m->class_of[c];
        for (size_t b = 0; b < n; b += RD_BLOCK) {
            tb.n = n - b < RD_BLOCK ? n - b : RD_BLOCK;
            tb.vmax = (const float *)w->vmax + v0 + b;
            tb.code = (const uint8_t *)w->code + v0 + b;
            rd_lanes_top1(&tb);
        }
    } else
        for (uint64_t v = v0; v < v0 + n; v++) {
            double conf = max_at(w, w->fmax, v);
            int b = cs_ubin_at(conf, x->edges, F);
            tc[b]++;
            ts[b] += conf;
            tk[b] += arg_at(w, w->cells, v) == w->m->class_of[code_at(w, w->cells, v)];
        }
    if (w->unsure != UINT64_MAX) return;
    uint64_t u = next_unsure(w, v0, v0 + n);
    if (u < v0 + n) w->unsure = u;
}

/* What the lanes need of channel j, but for each block's place. */
static void lane_setup(const work *w, size_t j, rd_lane_block *lb)
{
    const cs_segstats *st = w->x->st;
    size_t base = cs_segstats_ci(st, w->ci, j, 0);
    *lb = (rd_lane_block){ .j = j, .ytab = w->ytab, .edges = w->x->edges, .fine = st->fine,
                           .cnt = st->cnt + base, .sy = st->sum_y + base, .sp = st->sum_p + base };
    for (size_t c = 0; c < 16 && c < w->m->n_values; c++) lb->ytab16[c] = w->ytab[c];
}

/* The block of n values at voxel v0 in lanes: 1, or 0 when a value is out of [0, 1]
 * (channel_slab then says which). */
static int lane_block(work *w, rd_lane_block *lb, uint64_t v0, const double *p, uint8_t *ys, size_t n)
{
    lb->p = p;
    lb->n = n;
    lb->ys = ys;
    lb->code = (uint8_t *)w->code + v0;
    lb->vmax = w->m->kind == CS_SEG_SOFTMAX ? (float *)w->vmax + v0 : NULL;
    lb->vsum = w->m->kind == CS_SEG_SOFTMAX ? (uint16_t *)w->vsum + v0 : NULL;
    return rd_lanes_channel(lb);
}

/* Channel j: its one-vs-rest sums and the running softmax values (its scores: score_slab). */
static cs_status read_channel(work *w, size_t j, cs_error *err)
{
    const cs_seg_mapping *m = w->m;
    int soft = m->kind == CS_SEG_SOFTMAX;
    for (size_t c = 0; c < m->n_values; c++)
        w->ytab[c] = soft ? m->class_of[c] == j : m->member[c * m->k + j];
    uint64_t V = w->sh.voxels;
    rd_lane_block lb;
    int lanes = lanes_fit(w) && rd_lanes_available();
    if (lanes) lane_setup(w, j, &lb);
    for (uint64_t v0 = 0; v0 < V;) {
        size_t n = V - v0 < w->slab ? (size_t)(V - v0) : w->slab;
        rd_values vals;
        uint8_t *ys;
        if (rd_stream_next(w->in, n, &vals, &ys, err) != CS_OK) return rd_also(err, "labels", w->c->labels);
        cs_status s = CS_OK;
        double block[RD_BLOCK];
        for (size_t b = 0; s == CS_OK && b < n; b += RD_BLOCK) {
            size_t bn = rd_values_block(&vals, b, block);
            if (lanes && lane_block(w, &lb, v0 + b, block, ys + b, bn)) continue;
#define SLAB(c, f, q) case (c * 2 + f) * 2 + q: s = channel_slab(w, j, v0 + b, block, ys + b, bn, c, f, q, err); break
            switch ((w->cells * 2 + w->fmax) * 2 + w->s16) {
            SLAB(CELL_PACK, 1, 1); SLAB(CELL_PACK, 1, 0); SLAB(CELL_PACK, 0, 1); SLAB(CELL_PACK, 0, 0);
            SLAB(CELL_U8, 1, 1); SLAB(CELL_U8, 1, 0); SLAB(CELL_U8, 0, 1); SLAB(CELL_U8, 0, 0);
            SLAB(CELL_U32, 1, 1); SLAB(CELL_U32, 1, 0); SLAB(CELL_U32, 0, 1);
            default: s = channel_slab(w, j, v0 + b, block, ys + b, bn, CELL_U32, 0, 0, err); break;
            }
#undef SLAB
        }
        if (s != CS_OK) return s;
        if (m->kind == CS_SEG_SOFTMAX && j + 1 == w->sh.channels) top1_slab(w, v0, n);
        v0 += n;
        if ((s = step(w, n, err)) != CS_OK) return s;
    }
    return CS_OK;
}

/* The refusal of voxel v, whose double sum in channel order is s. */
static cs_status bad_sum(const work *w, uint64_t v, double s, cs_error *err)
{
    char vt[128], sum[40], tt[40];
    double tol = w->x->o->sum_tol;
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

/* The sum check made exact from voxel `from` on: the probabilities are read again and the double
 * sums of voxels [a, a + cap) formed in channel order (as the CSV loader's row sum) in acc, for
 * windows starting at each unsure voxel, until a voxel fails (its refusal) or none is left. */
static cs_status exact_sums(work *w, uint64_t from, double *acc, size_t cap, cs_error *err)
{
    uint64_t V = w->sh.voxels;
    double tol = w->x->o->sum_tol;
    double *slab = malloc((V < w->slab ? (size_t)V : w->slab) * sizeof *slab);
    if (!slab) return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
    cs_status st = CS_OK;
    for (uint64_t a = from; st == CS_OK && a < V; a = next_unsure(w, a, V)) {
        uint64_t end = V - a < cap ? V : a + cap;
        cs_vol *pv = NULL;
        if (cs_vol_open(w->c->probs, NULL, &pv, err) != CS_OK) {
            st = rd_also(err, "labels", w->c->labels);
            break;
        }
        for (size_t j = 0; st == CS_OK && j < w->sh.channels; j++) {
            for (uint64_t v0 = 0; st == CS_OK && v0 < V;) {
                size_t n = V - v0 < w->slab ? (size_t)(V - v0) : w->slab;
                if (cs_vol_read(pv, slab, n, err) != CS_OK) {
                    st = rd_also(err, "labels", w->c->labels);
                    break;
                }
                uint64_t lo = v0 > a ? v0 : a, hi = v0 + n < end ? v0 + n : end;
                for (uint64_t v = lo; v < hi; v++)
                    acc[v - a] = j ? acc[v - a] + slab[v - v0] : slab[v - v0];
                v0 += n;
                st = step(w, 0, err);
            }
        }
        cs_vol_close(pv);
        for (uint64_t v = a; st == CS_OK && v < end; v++)
            if (!cs_row_sum_ok(acc[v - a], w->sh.channels, tol)) st = bad_sum(w, v, acc[v - a], err);
        a = end;
    }
    free(slab);
    return st;
}

/* Softmax, after the last channel: the sum check made exact from the first voxel whose running
 * sum was not sure (top1_slab found it), if any. */
static cs_status finish_softmax(work *w, cs_error *err)
{
    uint64_t V = w->sh.voxels;
    if (w->unsure == UINT64_MAX) return CS_OK;
    /* the running max's bytes hold the exact sums of a window of voxels */
    size_t cap = (size_t)V * (w->fmax ? sizeof(float) : sizeof(double)) / sizeof(double);
    double *acc = (double *)w->vmax;
    return exact_sums(w, w->unsure, acc, cap ? cap : 1, err);
}

static void work_free(work *w)
{
    if (w->map) munmap(w->map, w->map_size);
    free(w->ytab);
}

/* What the budget admits for the case: the per-voxel arrays allocate() makes, the stream's slabs
 * (RD_RING of them, in case a helper reads: each value as stored and its y byte, stream.c) and
 * the probability reader's chunk, for an exact sum check (≤ 1 MiB, vol.c). */
static uint64_t case_bytes(const work *w, const cs_vol *pv, const cs_vol *lv)
{
    uint64_t V = w->sh.voxels, per = w->cells == CELL_U32 ? 4 : 1;
    if (w->m->kind == CS_SEG_SOFTMAX)
        per += (w->fmax ? 4 : 8) + (w->s16 ? 2 : 4) + (w->cells == CELL_PACK ? 0 : w->cells == CELL_U32 ? 4 : 1);
    uint64_t slab = V < w->slab ? V : w->slab, chunk = (uint64_t)1 << 20, pn = cs_vol_info_of(pv)->n_values;
    uint64_t pc = pn < chunk / 8 ? pn * 8 : chunk;
    return V * per + RD_RING * slab * rd_slab_value_bytes(lv, pv, 1) + pc;
}

/* The budget's wait ends early when the user cancels or a case before this one failed. */
static int stopped(const void *arg)
{
    const work *w = arg;
    return (w->x->cancel && atomic_load(w->x->cancel)) || atomic_load(w->x->first_fail) < w->ci;
}

static cs_status allocate(work *w, cs_error *err)
{
    uint64_t V = w->sh.voxels;
    size_t es = w->cells == CELL_U32 ? 4 : 1;
    int soft = w->m->kind == CS_SEG_SOFTMAX;
    if (V > SIZE_MAX / 8)
        return cs_error_set(err, CS_ENOMEM, 0, 0, "%s: %llu voxels do not fit in memory", w->c->probs, (unsigned long long)V);
    size_t nv = V ? (size_t)V : 1;
    /* the arrays, each from an 8-aligned offset: running max (at least one double, so that the
     * exact sum check has a window: finish_softmax), running sum, codes, argmaxes */
    size_t mb = soft ? nv * (w->fmax ? sizeof(float) : sizeof(double)) : 0;
    size_t at[4], n[4] = { soft ? (mb < sizeof(double) ? sizeof(double) : mb) : 0,
                           soft ? nv * (w->s16 ? sizeof(uint16_t) : sizeof(float)) : 0, nv * es,
                           soft && w->cells != CELL_PACK ? nv * es : 0 };
    size_t total = 0;
    for (int i = 0; i < 4; i++) {
        at[i] = total;
        total += (n[i] + 7) & ~(size_t)7;
    }
    /* One anonymous mapping, given back to the system when the case ends. From malloc, glibc
     * would serve arrays below its 32 MiB mmap ceiling (once a freed block has raised the
     * threshold) from per-thread arenas that keep the pages, so peak RSS grew with the number
     * of threads that had reduced a case (3 BraTS cases on 2 threads: 98 MiB, 2 cases: 69). */
    void *map = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    w->ytab = malloc(w->m->n_values ? w->m->n_values : 1);
    if (map != MAP_FAILED) {
        w->map = map;
        w->map_size = total;
        char *b = map;
        w->vmax = soft ? b + at[0] : NULL;
        w->vsum = soft ? b + at[1] : NULL;
        w->code = b + at[2];
        w->arg = !soft ? NULL : w->cells == CELL_PACK ? w->code : b + at[3];
    }
    if (!w->map || !w->ytab)
        return cs_error_set(err, CS_ENOMEM, 0, 0, "case '%s': out of memory for %llu voxels", w->c->name, (unsigned long long)V);
    return CS_OK;
}

/* A refused value may be a corrupt stream's: a flipped byte of deflate data inflates to
 * garbage long before the CRC at the stream's end could say so. So the stream whose value was
 * refused is read to its end (the slabs are free by now: the reader's chunk, which the budget
 * counts, is all it needs), and a corruption it finds is the case's message instead. */
static cs_status corrupt_instead(const work *w, cs_vol *pv, cs_vol *lv, cs_error *err)
{
    cs_error e;
    cs_error_clear(&e);
    int labels = w->refused == 1;
    if (cs_vol_check_rest(labels ? lv : pv, &e) != CS_EINPUT) return err->code;
    *err = e;
    return labels ? rd_also(err, "probabilities", w->c->probs) : rd_also(err, "labels", w->c->labels);
}

/* A file that changed while the case read it (a label map rewritten in place, a prediction
 * file replaced) gives sums of neither version: the case is refused, as the CSV loader refuses
 * such a file, whatever else went wrong with it (a change explains a truncation or a wrong
 * value better than they explain themselves). Both files, from their open to here, which
 * covers the exact sum check's second read. */
static cs_status changed_instead(const work *w, const cs_vol *pv, const cs_vol *lv, cs_status st, cs_error *err)
{
    cs_error e;
    cs_error_clear(&e);
    if (pv && cs_vol_unchanged(pv, &e) != CS_OK) {
        *err = e;
        return rd_also(err, "labels", w->c->labels);
    }
    if (lv && cs_vol_unchanged(lv, &e) != CS_OK) {
        *err = e;
        return rd_also(err, "probabilities", w->c->probs);
    }
    return st;
}

static void (*case_hook)(void *, size_t);
static void *case_hook_arg;

void rd_case_hook_set(void (*fn)(void *arg, size_t ci), void *arg)
{
    case_hook = fn;
    case_hook_arg = arg;
}

cs_status rd_reduce_case(const rd_case_ctx *x, size_t ci, cs_error *err)
{
    work w = { .x = x, .ci = ci, .c = &x->plan->cases[ci], .m = x->m, .slab = rd_slab(),
               .unsure = UINT64_MAX };
    w.weight = w.c->probs_size + w.c->labels_size + 1;
    cs_vol *pv = NULL, *lv = NULL;
    cs_status st = cs_vol_open(w.c->probs, NULL, &pv, err);
    if (st != CS_OK) rd_also(err, "labels", w.c->labels);
    if (st == CS_OK && (st = cs_vol_open(w.c->labels, NULL, &lv, err)) != CS_OK) rd_also(err, "probabilities", w.c->probs);
    if (st == CS_OK)
        st = rd_check_pair(w.c, cs_vol_info_of(pv), cs_vol_info_of(lv), x->m, x->o->affine_tol, &w.sh, err);
    if (st == CS_OK) {
        const cs_vol_info *pi = cs_vol_info_of(pv);
        w.f16 = pi->dtype == CS_VDT_F16;
        w.fmax = (pi->dtype == CS_VDT_F16 || pi->dtype == CS_VDT_F32) && pi->scl_slope == 1.0 && pi->scl_inter == 0.0;
        w.cells = x->m->n_values > 256 || x->m->k > 256 ? CELL_U32
                : x->m->kind == CS_SEG_SOFTMAX && x->m->n_values <= 16 && x->m->k <= 16 ? CELL_PACK : CELL_U8;
        w.s16 = x->m->kind == CS_SEG_SOFTMAX && (double)w.sh.channels * RD_S16_STEP <= x->o->sum_tol / 4;
        w.vals_total = w.sh.voxels * (uint64_t)(w.sh.channels + 1);
        w.bytes = case_bytes(&w, pv, lv);
    }
    int admitted = 0, helper = 0;
    if (st == CS_OK) {
        admitted = rd_budget_acquire(x->budget, w.bytes, stopped, &w, &helper);
        if (!admitted) st = cs_error_set(err, CS_ECANCELLED, 0, 0, "cancelled");
    }
    if (st == CS_OK) st = allocate(&w, err);
    if (st == CS_OK) st = rd_stream_open(lv, pv, w.sh.voxels, w.sh.channels, w.slab, helper, score_slab, &w, &w.in, err);
    if (st == CS_OK) st = read_labels(&w, err);
    for (size_t j = 0; st == CS_OK && j < w.sh.channels; j++) st = read_channel(&w, j, err);
    /* every score is in once this returns; the slabs are free before an exact sum check reads
     * again */
    rd_stream_close(w.in, st == CS_OK);
    w.in = NULL;
    if (st == CS_OK && x->m->kind == CS_SEG_SOFTMAX) st = finish_softmax(&w, err);
    if (st == CS_EINPUT && w.refused) st = corrupt_instead(&w, pv, lv, err);
    if (case_hook) case_hook(case_hook_arg, ci);
    if (st == CS_OK || st == CS_EINPUT) st = changed_instead(&w, pv, lv, st, err);
    if (st == CS_OK) {
        x->st->voxels[ci] = w.sh.voxels;
        advance(&w, w.vals_total - w.vals_done);   /* the case's whole weight once done */
    }
    work_free(&w);
    if (admitted) rd_budget_release(x->budget, w.bytes);
    cs_vol_close(pv);
    cs_vol_close(lv);
    return st;
}
