/* calscope engine: the statistics object — allocation, release, subsets, and the voxel kernel
 * that turns per-voxel probabilities into the sums of segstats.h (the reducer and the tests
 * both use it, so there is one accumulation rule). */
#include "engine/segstats/segstats_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calscope/dataset.h"
#include "calscope/ubin.h"

const char *cs_segstats_kind_name(cs_seg_kind kind)
{
    return kind == CS_SEG_REGIONS ? "regions" : "softmax";
}

/* n elements of `size` bytes, zeroed; NULL when n * size overflows or memory is short. */
static void *zarray(size_t n, size_t size)
{
    return calloc(n ? n : 1, size);
}

cs_segstats *cs_segstats_new(int fine, cs_seg_kind kind, size_t k, const char *const *class_names,
                             const char *mapping, size_t n_cases)
{
    if (fine < 1 || fine > CS_SEGSTATS_FINE_MAX || k == 0) return NULL;
    size_t per_case = k * (size_t)fine;
    if (per_case / k != (size_t)fine) return NULL;
    if (n_cases && per_case > SIZE_MAX / sizeof(double) / n_cases) return NULL;
    size_t nb = per_case * n_cases, nt = (size_t)fine * n_cases, ns = k * n_cases;

    cs_segstats *st = calloc(1, sizeof *st);
    if (!st) return NULL;
    st->fine = fine;
    st->kind = kind;
    st->k = k;
    st->n_cases = n_cases;
    st->class_names = cs_names_pack(class_names, k);
    st->mapping = strdup(mapping ? mapping : "");
    st->case_names = zarray(n_cases, sizeof *st->case_names);
    st->probs_in = zarray(n_cases, sizeof *st->probs_in);
    st->labels_in = zarray(n_cases, sizeof *st->labels_in);
    st->voxels = zarray(n_cases, sizeof *st->voxels);
    st->cnt = zarray(nb, sizeof *st->cnt);
    st->sum_p = zarray(nb, sizeof *st->sum_p);
    st->sum_y = zarray(nb, sizeof *st->sum_y);
    st->sq_err = zarray(ns, sizeof *st->sq_err);
    st->nll_pos = zarray(ns, sizeof *st->nll_pos);
    st->nll_neg = zarray(ns, sizeof *st->nll_neg);
    int ok = st->class_names && st->mapping && st->case_names && st->probs_in && st->labels_in &&
             st->voxels && st->cnt && st->sum_p && st->sum_y && st->sq_err && st->nll_pos &&
             st->nll_neg;
    if (ok && kind == CS_SEG_SOFTMAX) {
        st->t_cnt = zarray(nt, sizeof *st->t_cnt);
        st->t_sum_conf = zarray(nt, sizeof *st->t_sum_conf);
        st->t_sum_correct = zarray(nt, sizeof *st->t_sum_correct);
        ok = st->t_cnt && st->t_sum_conf && st->t_sum_correct;
    }
    if (!ok) {
        cs_segstats_free(st);
        return NULL;
    }
    return st;
}

void cs_segstats_free(cs_segstats *st)
{
    if (!st) return;
    for (size_t c = 0; c < st->n_cases; c++) {
        if (st->case_names) free(st->case_names[c]);
        if (st->probs_in) free(st->probs_in[c].path);
        if (st->labels_in) free(st->labels_in[c].path);
    }
    free(st->class_names);
    free(st->mapping);
    free(st->case_names);
    free(st->probs_in);
    free(st->labels_in);
    free(st->voxels);
    free(st->cnt);
    free(st->sum_p);
    free(st->sum_y);
    free(st->t_cnt);
    free(st->t_sum_conf);
    free(st->t_sum_correct);
    free(st->sq_err);
    free(st->nll_pos);
    free(st->nll_neg);
    free(st);
}

static int dup_into(char **dst, const char *s)
{
    if (!s) return 0;
    char *d = strdup(s);
    if (!d) return -1;
    free(*dst);
    *dst = d;
    return 0;
}

int cs_segstats_copy_case(cs_segstats *dst, size_t dc, const cs_segstats *src, size_t sc)
{
    if (dup_into(&dst->case_names[dc], src->case_names[sc]) ||
        dup_into(&dst->probs_in[dc].path, src->probs_in[sc].path) ||
        dup_into(&dst->labels_in[dc].path, src->labels_in[sc].path))
        return -1;
    dst->probs_in[dc].size = src->probs_in[sc].size;
    dst->labels_in[dc].size = src->labels_in[sc].size;
    dst->voxels[dc] = src->voxels[sc];
    size_t kf = src->k * (size_t)src->fine, f = (size_t)src->fine, k = src->k;
    memcpy(dst->cnt + dc * kf, src->cnt + sc * kf, kf * sizeof *src->cnt);
    memcpy(dst->sum_p + dc * kf, src->sum_p + sc * kf, kf * sizeof *src->sum_p);
    memcpy(dst->sum_y + dc * kf, src->sum_y + sc * kf, kf * sizeof *src->sum_y);
    if (src->t_cnt && dst->t_cnt) {
        memcpy(dst->t_cnt + dc * f, src->t_cnt + sc * f, f * sizeof *src->t_cnt);
        memcpy(dst->t_sum_conf + dc * f, src->t_sum_conf + sc * f, f * sizeof *src->t_sum_conf);
        memcpy(dst->t_sum_correct + dc * f, src->t_sum_correct + sc * f,
               f * sizeof *src->t_sum_correct);
    }
    memcpy(dst->sq_err + dc * k, src->sq_err + sc * k, k * sizeof *src->sq_err);
    memcpy(dst->nll_pos + dc * k, src->nll_pos + sc * k, k * sizeof *src->nll_pos);
    memcpy(dst->nll_neg + dc * k, src->nll_neg + sc * k, k * sizeof *src->nll_neg);
    return 0;
}

cs_segstats *cs_segstats_subset(const cs_segstats *st, const uint8_t *keep)
{
    size_t n = 0;
    for (size_t c = 0; c < st->n_cases; c++) n += keep[c] != 0;
    cs_segstats *out = cs_segstats_new(st->fine, st->kind, st->k,
                                       (const char *const *)st->class_names, st->mapping, n);
    if (!out) return NULL;
    size_t d = 0;
    for (size_t c = 0; c < st->n_cases; c++) {
        if (!keep[c]) continue;
        if (cs_segstats_copy_case(out, d++, st, c)) {
            cs_segstats_free(out);
            return NULL;
        }
    }
    return out;
}

/* -ln max(x, 1e-15): SPEC §2's clipped log loss term. Saturated maps are full of exact 1s
 * (and of 0s, whose complement is 1): -ln 1 is -0.0, which adds nothing to a sum that starts
 * at +0.0, so those skip the log; `lmin` is -ln 1e-15, computed once by the caller. */
static inline double neg_log_clipped(double x, double lmin)
{
    return x == 1.0 ? 0.0 : x > 1e-15 ? -log(x) : lmin;
}

void cs_segstats_add_voxels(cs_segstats *st, size_t c, const double *const *p,
                            const int32_t *lab, const uint8_t *member, size_t n)
{
    size_t k = st->k, F = (size_t)st->fine;
    uint64_t *cnt = st->cnt + cs_segstats_ci(st, c, 0, 0);
    double *sum_p = st->sum_p + cs_segstats_ci(st, c, 0, 0);
    uint64_t *sum_y = st->sum_y + cs_segstats_ci(st, c, 0, 0);
    double *sq = st->sq_err + c * k, *npos = st->nll_pos + c * k, *nneg = st->nll_neg + c * k;
    /* the F+1 edges once per call (cs_ubin_at gives the same bin as cs_ubin); for F > 1024
     * they are computed per value instead */
    double edges[1025];
    const double *e = F < sizeof edges / sizeof edges[0] ? edges : NULL;
    if (e)
        for (size_t i = 0; i <= F; i++) edges[i] = cs_ubin_edge((int)i, st->fine);
    const double lmin = -log(1e-15);
    /* one pass per channel over its plane (the sums stay in registers; each bin and each
     * score still adds the voxels in order), then one pass for top-1 */
    for (size_t j = 0; j < k; j++) {
        const double *pj = p[j];
        uint64_t *cj = cnt + j * F, *yj = sum_y + j * F;
        double *sj = sum_p + j * F, s2 = sq[j], lp = npos[j], ln = nneg[j];
        for (size_t v = 0; v < n; v++) {
            double x = pj[v];
            int y = member ? member[(size_t)lab[v] * k + j] != 0 : lab[v] == (int32_t)j;
            size_t b = (size_t)cs_ubin_at(x, e, st->fine);
            cj[b]++;
            sj[b] += x;
            yj[b] += (uint64_t)y;
            double d = x - (double)y;
            s2 += d * d;
            if (y) lp += neg_log_clipped(x, lmin);
            else ln += neg_log_clipped(1.0 - x, lmin);
        }
        sq[j] = s2;
        npos[j] = lp;
        nneg[j] = ln;
    }
    if (st->t_cnt) {
        uint64_t *tc = st->t_cnt + cs_segstats_ti(st, c, 0), *ty = st->t_sum_correct + cs_segstats_ti(st, c, 0);
        double *ts = st->t_sum_conf + cs_segstats_ti(st, c, 0);
        for (size_t v = 0; v < n; v++) {
            size_t best = 0;
            double conf = p[0][v];
            for (size_t j = 1; j < k; j++)
                if (p[j][v] > conf) { conf = p[j][v]; best = j; }   /* ties: the first maximal */
            int correct = member ? member[(size_t)lab[v] * k + best] != 0 : lab[v] == (int32_t)best;
            size_t b = (size_t)cs_ubin_at(conf, e, st->fine);
            tc[b]++;
            ts[b] += conf;
            ty[b] += (uint64_t)correct;
        }
    }
    st->voxels[c] += n;
}
