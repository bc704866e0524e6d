/* Adaptive k-d tree binning (Kirchenbauer, Oaks & Heim 2022, "What is Your Metric Telling You?",
 * appendix B.1; cmu-sei/gce via uu-sml/calibration
 * DataDependentBinning with threshold "mean"):
 *   a node with n >= min_size = round(gamma * N) (halves to even) is split on the coordinate
 *   with the largest population variance (first such coordinate on ties) at that
 *   coordinate's mean, values < mean going low; the split is refused when one side would be
 *   empty. Leaves are listed in pre-order, low side first, as the reference does.
 * Sums are sequential in item order (the reference uses numpy sums; a value lying within an
 * ulp of a node mean could in principle go the other way). */
#include "mx.h"

#include <stdlib.h>
#include <string.h>

typedef struct { size_t start, len; } node;

int cs_mx_kdtree(const uint32_t *items, size_t ni, size_t dim, cs_mx_get get, const void *ctx,
                 double gamma, uint32_t **order_out, size_t **starts_out, size_t *nleaves)
{
    *order_out = NULL;
    *starts_out = NULL;
    *nleaves = 0;
    double *X = malloc((ni ? ni : 1) * dim * sizeof *X);
    uint32_t *pos = malloc((ni ? ni : 1) * sizeof *pos);
    uint32_t *tmp = malloc((ni ? ni : 1) * sizeof *tmp);
    double *mean = malloc(dim * sizeof *mean), *var = malloc(dim * sizeof *var);
    size_t cap = 64, nl = 0;
    size_t *starts = malloc(cap * sizeof *starts);
    node *stack = malloc((ni + 1) * sizeof *stack);
    if (!X || !pos || !tmp || !mean || !var || !starts || !stack) goto fail;

    for (size_t r = 0; r < ni; r++) {
        pos[r] = (uint32_t)r;
        for (size_t j = 0; j < dim; j++) X[r * dim + j] = get(ctx, items[r], j);
    }
    double ms = nearbyint(gamma * (double)ni);   /* default rounding: halves to even */
    size_t min_size = ms > 0 ? (size_t)ms : 0;

    size_t sp = 0;
    if (ni) stack[sp++] = (node){0, ni};
    while (sp) {
        node nd = stack[--sp];
        int split = 0;
        if (nd.len >= min_size && nd.len >= 2) {
            uint32_t *P = pos + nd.start;
            for (size_t j = 0; j < dim; j++) mean[j] = 0.0;
            for (size_t r = 0; r < nd.len; r++)
                for (size_t j = 0; j < dim; j++) mean[j] += X[(size_t)P[r] * dim + j];
            for (size_t j = 0; j < dim; j++) { mean[j] /= (double)nd.len; var[j] = 0.0; }
            for (size_t r = 0; r < nd.len; r++)
                for (size_t j = 0; j < dim; j++) {
                    double dlt = X[(size_t)P[r] * dim + j] - mean[j];
                    var[j] += dlt * dlt;
                }
            size_t ax = 0;
            for (size_t j = 1; j < dim; j++)
                if (var[j] > var[ax]) ax = j;
            double thr = mean[ax];
            size_t nlow = 0;
            for (size_t r = 0; r < nd.len; r++)
                if (X[(size_t)P[r] * dim + ax] < thr) nlow++;
            if (nlow > 0 && nlow < nd.len) {
                size_t a = 0, b = nlow;
                for (size_t r = 0; r < nd.len; r++) {
                    if (X[(size_t)P[r] * dim + ax] < thr) tmp[a++] = P[r];
                    else tmp[b++] = P[r];
                }
                memcpy(P, tmp, nd.len * sizeof *P);
                /* high pushed first so the low child is visited first (pre-order) */
                stack[sp++] = (node){nd.start + nlow, nd.len - nlow};
                stack[sp++] = (node){nd.start, nlow};
                split = 1;
            }
        }
        if (!split) {
            if (nl + 2 > cap) {
                size_t *ns = realloc(starts, cap * 2 * sizeof *ns);
                if (!ns) goto fail;
                starts = ns;
                cap *= 2;
            }
            starts[nl++] = nd.start;
        }
    }
    starts[nl] = ni;
    /* Leaves are contiguous in pos and visited in increasing start order. */
    for (size_t r = 0; r < ni; r++) tmp[r] = items[pos[r]];
    free(X); free(pos); free(mean); free(var); free(stack);
    *order_out = tmp;
    *starts_out = starts;
    *nleaves = nl;
    return 0;
fail:
    free(X); free(pos); free(tmp); free(mean); free(var); free(starts); free(stack);
    return -1;
}
