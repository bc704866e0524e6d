/* Binning helpers: uniform edges and equal-mass group boundaries (the sorts behind them are
 * engine/sort/sort.c). */
#include "mx.h"

void cs_mx_edges(double *e, int M)
{
    for (int i = 0; i <= M; i++) e[i] = cs_ubin_edge(i, M);   /* the rule's edges (engine/num/ubin.h) */
}

size_t cs_mx_split_start(size_t N, size_t M, size_t g)
{
    size_t q = N / M, r = N % M;
    return g * q + (g < r ? g : r);
}
