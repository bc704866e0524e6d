/* calscope engine: the values of a statistics file from weighted sums of its cases (see
 * stats_internal.h). Bins, gaps and aggregates go through the row engine's functions. */
#include "engine/measure/stats_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/num/ubin.h"
#include "engine/metrics/mx.h"

void seg_prob_free(seg_prob *p)
{
    free(p->act);
    if (!p->borrowed) {
        free(p->cnt);
        free(p->sy);
        free(p->sp);
        free(p->tcnt);
        free(p->tsy);
        free(p->tsc);
    }
    free(p->sq);
    free(p->nll);
    free(p->vox);
    memset(p, 0, sizeof *p);
}

cs_status seg_prob_init(seg_prob *p, const cs_segstats *st, const cs_settings *s, int M,
                        const uint8_t *keep, cs_error *err)
{
    memset(p, 0, sizeof *p);
    p->st = st;
    p->s = *s;
    p->s.bins = M;
    p->k = st->k;
    p->M = (size_t)M;
    for (size_t c = 0; c < st->n_cases; c++) p->na += !keep || keep[c];
    size_t na = p->na ? p->na : 1, kM = p->k * p->M, F = (size_t)st->fine, r = F / p->M;
    /* every case at the fine resolution: the coarse sums are st's own arrays, same layout
     * (a 200-case file at M = F would otherwise copy and fault in megabytes per view) */
    p->borrowed = p->na == st->n_cases && p->M == F;
    p->act = malloc(na * sizeof *p->act);
    p->sq = calloc(na, sizeof *p->sq);
    p->nll = calloc(na, sizeof *p->nll);
    p->vox = calloc(na, sizeof *p->vox);
    if (p->borrowed) {
        p->cnt = st->cnt;
        p->sy = st->sum_y;
        p->sp = st->sum_p;
        p->tcnt = st->t_cnt;
        p->tsy = st->t_sum_correct;
        p->tsc = st->t_sum_conf;
    } else {
        p->cnt = calloc(na * kM, sizeof *p->cnt);
        p->sy = calloc(na * kM, sizeof *p->sy);
        p->sp = calloc(na * kM, sizeof *p->sp);
    }
    int ok = p->act && p->cnt && p->sy && p->sp && p->sq && p->nll && p->vox;
    if (ok && st->t_cnt && !p->borrowed) {
        p->tcnt = calloc(na * p->M, sizeof *p->tcnt);
        p->tsy = calloc(na * p->M, sizeof *p->tsy);
        p->tsc = calloc(na * p->M, sizeof *p->tsc);
        ok = p->tcnt && p->tsy && p->tsc;
    }
    if (!ok) {
        seg_prob_free(p);
        return cs_error_set(err, CS_ENOMEM, 0, 0, "statistics: out of memory");
    }
    size_t a = 0;
    for (size_t c = 0; c < st->n_cases; c++) {
        if (keep && !keep[c]) continue;
        p->act[a] = c;
        p->vox[a] = st->voxels[c];
        /* coarse bin b is the union of fine bins [b·F/M, (b+1)·F/M) (segstats.h) */
        for (size_t j = 0; j < p->k && !p->borrowed; j++)
            for (size_t b = 0, x = cs_segstats_ci(st, c, j, 0); b < p->M; b++) {
                size_t y = (a * p->k + j) * p->M + b;
                for (size_t i = 0; i < r; i++, x++) {
                    p->cnt[y] += st->cnt[x];
                    p->sy[y] += st->sum_y[x];
                    p->sp[y] += st->sum_p[x];
                }
            }
        if (st->t_cnt && !p->borrowed)
            for (size_t b = 0, x = cs_segstats_ti(st, c, 0); b < p->M; b++) {
                size_t y = a * p->M + b;
                for (size_t i = 0; i < r; i++, x++) {
                    p->tcnt[y] += st->t_cnt[x];
                    p->tsy[y] += st->t_sum_correct[x];
                    p->tsc[y] += st->t_sum_conf[x];
                }
            }
        /* Brier: Σ_j sq / N; NLL: softmax Σ_j nll_pos / N, regions Σ_j (pos + neg) / N */
        for (size_t j = 0; j < p->k; j++) {
            size_t x = c * p->k + j;
            p->sq[a] += st->sq_err[x];
            p->nll[a] += st->nll_pos[x] + (st->kind == CS_SEG_REGIONS ? st->nll_neg[x] : 0.0);
        }
        a++;
    }
    return CS_OK;
}

/* Pooled sums of one evaluation. */
typedef struct pooled {
    uint64_t *cnt, *sy, *tcnt, *tsy;
    double *sp, *tsc;
    double sq, nll;
    uint64_t n;
} pooled;

static void pool(const seg_prob *p, const uint32_t *w, long only, pooled *o)
{
    size_t kM = p->k * p->M, M = p->M;
    size_t a0 = only >= 0 ? (size_t)only : 0, a1 = only >= 0 ? (size_t)only + 1 : p->na;
    for (size_t a = a0; a < a1; a++) {
        uint64_t m = w ? w[a] : 1;
        if (!m) continue;
        double dm = (double)m;
        const uint64_t *cnt = p->cnt + a * kM, *sy = p->sy + a * kM;
        const double *sp = p->sp + a * kM;
        for (size_t x = 0; x < kM; x++) {
            o->cnt[x] += m * cnt[x];
            o->sy[x] += m * sy[x];
            o->sp[x] += dm * sp[x];
        }
        if (p->tcnt)
            for (size_t b = 0; b < M; b++) {
                o->tcnt[b] += m * p->tcnt[a * M + b];
                o->tsy[b] += m * p->tsy[a * M + b];
                o->tsc[b] += dm * p->tsc[a * M + b];
            }
        o->sq += dm * p->sq[a];
        o->nll += dm * p->nll[a];
        o->n += m * p->vox[a];
    }
}

/* Uniform bins of one scalar problem from its sums, as uniform_finish in the row engine. */
static void fill_bins(const cs_settings *s, const double *e, size_t M, const uint64_t *cnt,
                      const double *sv, const uint64_t *st, cs_bin *b)
{
    for (size_t i = 0; i < M; i++) {
        uint64_t n = cnt[i];
        b[i].count = (size_t)n;
        b[i].lo = e[i];
        b[i].hi = e[i + 1];
        b[i].conf = n ? sv[i] / (double)n : NAN;
        b[i].acc = n ? (double)st[i] / (double)n : NAN;
        b[i].gap = n ? cs_mx_scalar_gap(s, b[i].conf, b[i].acc) : NAN;
    }
}

/* Class-wise ECE/ACE/MCE (mean over classes of each class's aggregate) under s; with pool_out
 * the bins pooled over classes (bin i of every class together). */
static cs_mx_agg classwise(const seg_prob *p, size_t M, const cs_settings *s, const double *e,
                           const pooled *o, cs_bin *scratch, cs_bin *pool_out)
{
    size_t K = p->k;
    cs_mx_agg sum = {0, 0, 0};
    for (size_t j = 0; j < K; j++) {
        fill_bins(s, e, M, o->cnt + j * M, o->sp + j * M, o->sy + j * M, scratch);
        cs_mx_agg a = cs_mx_aggregate(s, scratch, M, (size_t)o->n);
        sum.ece += a.ece; sum.ace += a.ace; sum.mce += a.mce;
    }
    if (pool_out)
        for (size_t b = 0; b < M; b++) {
            uint64_t n = 0, np = 0;
            double s1 = 0.0;
            for (size_t j = 0; j < K; j++) {
                n += o->cnt[j * M + b]; np += o->sy[j * M + b]; s1 += o->sp[j * M + b];
            }
            pool_out[b].lo = e[b];
            pool_out[b].hi = e[b + 1];
            pool_out[b].count = (size_t)n;
            pool_out[b].conf = n ? s1 / (double)n : NAN;
            pool_out[b].acc = n ? (double)np / (double)n : NAN;
            pool_out[b].gap = n ? cs_mx_scalar_gap(s, pool_out[b].conf, pool_out[b].acc) : NAN;
        }
    cs_mx_agg r = { sum.ece / (double)K, sum.ace / (double)K, sum.mce / (double)K };
    return r;
}

/* The pooled sums' layout in one zeroed block for M bins and k classes: class sums (3 kM),
 * top-1 sums (3 M), then `extra` bytes for the caller. NULL when out of memory. */
static unsigned char *pooled_block(pooled *o, size_t k, size_t M, size_t extra)
{
    size_t kM = k * M, words = 3 * kM + 3 * M;
    unsigned char *blk = calloc(1, words * 8 + extra);
    if (!blk) return NULL;
    memset(o, 0, sizeof *o);
    o->cnt = (uint64_t *)blk;
    o->sy = o->cnt + kM;
    o->sp = (double *)(o->sy + kM);
    o->tcnt = (uint64_t *)(o->sp + kM);
    o->tsy = o->tcnt + M;
    o->tsc = (double *)(o->tsy + M);
    return blk;
}

/* The values of pooled sums at M bins (o->n > 0) under p's settings, lens and classes. e: M + 1
 * edges to fill; scratch: 2 M bins; bins: M bins to fill (NULL: none). */
static void eval_pooled(const seg_prob *p, size_t M, const pooled *o, unsigned want, double *e,
                        cs_bin *scratch, cs_bin *bins, cs_result *out)
{
    for (size_t b = 0; b <= M; b++) e[b] = cs_ubin_edge((int)b, (int)M);
    const cs_settings *s = &p->s;
    size_t N = (size_t)o->n;
    out->n = N;
    if ((want & CS_WANT_ACCURACY) && p->tcnt) {
        uint64_t c = 0;
        for (size_t b = 0; b < M; b++) c += o->tsy[b];
        out->accuracy = (double)c / (double)N;
    }
    if (want & CS_WANT_BRIER) out->brier = o->sq / (double)N;
    if (want & CS_WANT_NLL) out->nll = o->nll / (double)N;
    if (want & CS_WANT_BINNED) {
        cs_bin *b = bins ? bins : scratch + M;
        cs_mx_agg a;
        if (s->lens == CS_LENS_CLASSWISE) {
            a = classwise(p, M, s, e, o, scratch, bins);
        } else {
            if (s->lens == CS_LENS_TOP1) fill_bins(s, e, M, o->tcnt, o->tsc, o->tsy, b);
            else fill_bins(s, e, M, o->cnt + p->cls * M, o->sp + p->cls * M, o->sy + p->cls * M, b);
            a = cs_mx_aggregate(s, b, M, N);
        }
        out->ece = a.ece; out->ace = a.ace; out->mce = a.mce;
    }
    if (want & CS_WANT_SCE) {
        cs_settings t = *s;
        t.distance = CS_DIST_TVD;
        out->sce = classwise(p, M, &t, e, o, scratch, NULL).ece;
    }
}

cs_status seg_eval(const seg_prob *p, const uint32_t *w, long only, unsigned want, int with_bins,
                   cs_result *out, cs_error *err)
{
    cs_result_reset(out);   /* what statistics cannot give stays NAN */
    size_t M = p->M;
    pooled o;
    unsigned char *blk = pooled_block(&o, p->k, M, (M + 1) * 8 + 2 * M * sizeof(cs_bin));
    cs_bin *bins = with_bins ? malloc(M * sizeof *bins) : NULL;
    if (!blk || (with_bins && !bins)) {
        free(blk);
        free(bins);
        return cs_error_set(err, CS_ENOMEM, 0, 0, "statistics: out of memory");
    }
    double *e = (double *)(blk + (3 * p->k * M + 3 * M) * 8);
    cs_bin *scratch = (cs_bin *)(e + M + 1);
    pool(p, w, only, &o);
    if (o.n == 0) {
        free(blk);
        free(bins);
        return cs_error_set(err, CS_EEMPTY, 0, 0, "no samples to measure");
    }
    eval_pooled(p, M, &o, want, e, scratch, bins, out);
    if (bins && (want & CS_WANT_BINNED)) {
        out->bins = bins;
        out->n_bins = M;
        bins = NULL;
    }
    free(bins);
    free(blk);
    return CS_OK;
}

cs_status seg_eval_bins(const seg_prob *p, const uint32_t *w, const int *M, size_t n,
                        unsigned want, cs_result *out, cs_error *err)
{
    for (size_t i = 0; i < n; i++) cs_result_reset(&out[i]);
    size_t F = p->M, K = p->k;
    pooled fine, c;
    unsigned char *fb = pooled_block(&fine, K, F, 0);
    unsigned char *cb = pooled_block(&c, K, F, (F + 1) * 8 + 2 * F * sizeof(cs_bin));
    if (!fb || !cb) {
        free(fb);
        free(cb);
        return cs_error_set(err, CS_ENOMEM, 0, 0, "statistics: out of memory");
    }
    double *e = (double *)(cb + (3 * K * F + 3 * F) * 8);
    cs_bin *scratch = (cs_bin *)(e + F + 1);
    pool(p, w, -1, &fine);
    cs_status rc = fine.n ? CS_OK : cs_error_set(err, CS_EEMPTY, 0, 0, "no samples to measure");
    for (size_t i = 0; rc == CS_OK && i < n; i++) {
        size_t m = (size_t)M[i], r = F / m;
        /* coarse bin b is the union of fine bins [b·r, (b+1)·r) (segstats.h) */
        for (size_t j = 0; j < K; j++)
            for (size_t b = 0; b < m; b++) {
                uint64_t cn = 0, cy = 0;
                double cp = 0.0;
                for (size_t x = (j * F) + b * r, xe = x + r; x < xe; x++) {
                    cn += fine.cnt[x];
                    cy += fine.sy[x];
                    cp += fine.sp[x];
                }
                c.cnt[j * m + b] = cn;
                c.sy[j * m + b] = cy;
                c.sp[j * m + b] = cp;
            }
        for (size_t b = 0; p->tcnt && b < m; b++) {
            uint64_t cn = 0, cy = 0;
            double cp = 0.0;
            for (size_t x = b * r, xe = x + r; x < xe; x++) {
                cn += fine.tcnt[x];
                cy += fine.tsy[x];
                cp += fine.tsc[x];
            }
            c.tcnt[b] = cn;
            c.tsy[b] = cy;
            c.tsc[b] = cp;
        }
        c.sq = fine.sq;
        c.nll = fine.nll;
        c.n = fine.n;
        eval_pooled(p, m, &c, want, e, scratch, NULL, &out[i]);
    }
    free(fb);
    free(cb);
    return rc;
}
