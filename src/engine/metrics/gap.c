/* Distances between bin means and their aggregation into ECE / ACE / MCE (docs/metrics.md). */
#include "mx.h"

#include <stdlib.h>
#include <string.h>

double cs_mx_scalar_gap(const cs_settings *s, double conf, double acc)
{
    if (s->distance == CS_DIST_INTERVAL) {
        double d = s->interval_lo - acc, u = acc - s->interval_hi;
        double m = d > u ? d : u;
        return m > 0 ? m : 0.0;
    }
    return fabs(conf - acc);
}

cs_mx_agg cs_mx_aggregate(const cs_settings *s, const cs_bin *b, size_t nb, size_t N)
{
    cs_mx_agg a = {0.0, 0.0, 0.0};
    size_t nonempty = 0;
    double acc = 0.0, sum_gap = 0.0, mx = 0.0;
    for (size_t i = 0; i < nb; i++) {
        if (b[i].count == 0) continue;
        double w = (double)b[i].count / (double)N, g = b[i].gap;
        acc += s->distance == CS_DIST_L2 ? w * g * g : w * g;
        sum_gap += g;
        if (g > mx) mx = g;
        nonempty++;
    }
    a.ece = s->distance == CS_DIST_L2 ? sqrt(acc) : acc;
    a.ace = nonempty ? sum_gap / (double)nonempty : NAN;
    a.mce = nonempty ? mx : NAN;
    return a;
}

void cs_mx_scalar_groups(const cs_settings *s, const double *v, const uint8_t *t,
                         const uint32_t *order, const size_t *starts, size_t ng, cs_bin *out)
{
    for (size_t g = 0; g < ng; g++) {
        size_t a = starts[g], z = starts[g + 1];
        cs_bin *b = &out[g];
        b->count = z - a;
        if (z == a) {
            b->lo = b->hi = b->conf = b->acc = b->gap = NAN;
            continue;
        }
        double sv = 0.0, lo = INFINITY, hi = -INFINITY;
        size_t st = 0;
        for (size_t j = a; j < z; j++) {
            size_t i = order ? order[j] : j;
            double x = v[i];
            sv += x;
            st += t[i];
            if (x < lo) lo = x;
            if (x > hi) hi = x;
        }
        b->lo = lo;
        b->hi = hi;
        b->conf = sv / (double)(z - a);
        b->acc = (double)st / (double)(z - a);
        b->gap = cs_mx_scalar_gap(s, b->conf, b->acc);
    }
}

/* A vector group's bin from its sums: so (D coordinate sums), ct (D target counts) of n > 0
 * members whose first coordinates lie in [lo, hi]. */
static void vector_bin(const cs_prepared *p, const double *so, const size_t *ct, size_t n,
                       double lo, double hi, cs_bin *b)
{
    double dn = (double)n, l1 = 0.0, l2 = 0.0, lm = 0.0;
    for (size_t c = 0; c < p->dim; c++) {
        double diff = fabs(so[c] / dn - (double)ct[c] / dn);
        l1 += diff;
        l2 += diff * diff;
        if (diff > lm) lm = diff;
    }
    b->lo = lo;
    b->hi = hi;
    b->conf = so[0] / dn;
    b->acc = (double)ct[0] / dn;
    switch (p->s.distance) {
    case CS_DIST_TVD: b->gap = 0.5 * l1; break;
    case CS_DIST_L2: b->gap = sqrt(l2); break;
    case CS_DIST_MAX: b->gap = lm; break;
    default: b->gap = cs_mx_scalar_gap(&p->s, b->conf, b->acc); break;
    }
}

/* Group g's sums: its members' coordinates from the prepared lens (packed NULL: member j is
 * sample order[j]) or from packed rows of D values (member j is packed row order[j], its
 * target packed_hot[order[j]]), each coordinate summed in member order. */
static inline __attribute__((always_inline)) void
vector_group(const cs_prepared *p, const double *packed, const int32_t *packed_hot,
             const uint32_t *order, size_t a, size_t z, size_t end, double *so, size_t *ct, cs_bin *b)
{
    size_t D = p->dim;
    memset(so, 0, D * sizeof *so);
    memset(ct, 0, D * sizeof *ct);
    double lo = INFINITY, hi = -INFINITY;
    for (size_t j = a; j < z; j++) {
        uint32_t i = order[j];
        double x;
        /* ahead across groups (end: all of them): a draw's groups hold a member or two */
        if (packed && j + CS_MX_AHEAD < end) {
            CS_MX_FETCH(packed + (size_t)order[j + CS_MX_AHEAD] * D);
            CS_MX_FETCH(&packed_hot[order[j + CS_MX_AHEAD]]);
        }
        if (packed) {
            const double *row = packed + (size_t)i * D;
            for (size_t c = 0; c < D; c++) so[c] += row[c];
            ct[packed_hot[i]]++;
            x = row[0];
        } else {
            const double *row = p->obase + (size_t)(p->by_row ? p->rows[i] : i) * p->ostride;
            for (size_t c = 0; c < p->nrow; c++) so[c] += row[c];
            if (p->nrow < D) so[p->nrow] += p->rem[i];
            ct[p->hot[i]]++;
            x = p->nrow ? row[0] : p->rem[i];
        }
        if (x < lo) lo = x;
        if (x > hi) hi = x;
    }
    vector_bin(p, so, ct, z - a, lo, hi, b);
}

static int vector_groups(const cs_prepared *p, const double *packed, const int32_t *packed_hot,
                         const uint32_t *order, const size_t *starts, size_t ng, cs_bin *out)
{
    size_t D = p->dim;
    double *so = malloc(D * sizeof *so);
    size_t *ct = malloc(D * sizeof *ct);
    if (!so || !ct) { free(so); free(ct); return -1; }
    for (size_t g = 0; g < ng; g++) {
        size_t a = starts[g], z = starts[g + 1];
        cs_bin *b = &out[g];
        b->count = z - a;
        if (z == a) b->lo = b->hi = b->conf = b->acc = b->gap = NAN;
        else if (packed) vector_group(p, packed, packed_hot, order, a, z, starts[ng], so, ct, b);
        else vector_group(p, NULL, NULL, order, a, z, starts[ng], so, ct, b);
    }
    free(so);
    free(ct);
    return 0;
}

int cs_mx_vector_groups(const cs_prepared *p, const uint32_t *order, const size_t *starts,
                        size_t ng, cs_bin *out)
{
    return vector_groups(p, NULL, NULL, order, starts, ng, out);
}

int cs_mx_vector_groups_packed(const cs_prepared *p, const double *packed, const int32_t *packed_hot,
                               const uint32_t *order, const size_t *starts, size_t ng, cs_bin *out)
{
    return vector_groups(p, packed, packed_hot, order, starts, ng, out);
}
