/* The tests' reference accumulation (seg_kernel.h): moved here from the engine, which now has
 * the reducer's kernel only. */
#include "seg_kernel.h"

#include <math.h>

#include "engine/num/ubin.h"

/* -ln max(x, 1e-15): the clipped log loss term of NLL; -ln 1 adds nothing (-0.0 to a +0.0
 * sum), so exact 1s skip the log. `lmin` is -ln 1e-15, computed once by the caller. */
static inline double neg_log_clipped(double x, double lmin)
{
    return x == 1.0 ? 0.0 : x > 1e-15 ? -log(x) : lmin;
}

void cs_test_seg_add_voxels(cs_segstats *st, size_t c, const double *const *p,
                            const int32_t *lab, const uint8_t *member, size_t n)
{
    size_t k = st->k, F = (size_t)st->fine;
    uint64_t *cnt = st->cnt + cs_segstats_ci(st, c, 0, 0);
    double *sum_p = st->sum_p + cs_segstats_ci(st, c, 0, 0);
    uint64_t *sum_y = st->sum_y + cs_segstats_ci(st, c, 0, 0);
    double *sq = st->sq_err + c * k, *npos = st->nll_pos + c * k, *nneg = st->nll_neg + c * k;
    const double lmin = -log(1e-15);
    for (size_t v = 0; v < n; v++) {
        size_t best = 0;
        double conf = p[0][v];
        for (size_t j = 0; j < k; j++) {
            double x = p[j][v];
            int y = member ? member[(size_t)lab[v] * k + j] != 0 : lab[v] == (int32_t)j;
            size_t b = (size_t)cs_ubin(x, st->fine);
            cnt[j * F + b]++;
            sum_p[j * F + b] += x;
            sum_y[j * F + b] += (uint64_t)y;
            double d = x - (double)y;
            sq[j] += d * d;
            if (y) npos[j] += neg_log_clipped(x, lmin);
            else nneg[j] += neg_log_clipped(1.0 - x, lmin);
            if (x > conf) { conf = x; best = j; }   /* ties: the first maximal */
        }
        if (!st->t_cnt) continue;
        int correct = member ? member[(size_t)lab[v] * k + best] != 0 : lab[v] == (int32_t)best;
        size_t b = (size_t)cs_ubin(conf, st->fine);
        st->t_cnt[cs_segstats_ti(st, c, b)]++;
        st->t_sum_conf[cs_segstats_ti(st, c, b)] += conf;
        st->t_sum_correct[cs_segstats_ti(st, c, b)] += (uint64_t)correct;
    }
    st->voxels[c] += n;
}
