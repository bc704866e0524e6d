/* calscope engine: the one uniform-bin rule (SPEC §2 "uniform": M bins of equal width).
 *
 * Bin i of M is (e_i, e_{i+1}] with e_i = i/M computed as one correctly rounded division, so a
 * decimal edge (0.3 = 3/10) is the same double as the parsed literal and membership at an edge
 * is decided on the doubles, never on x*M's rounding. 0 and below (and NaN) are in bin 0;
 * above 1 in bin M-1. Every caller that puts a value in a uniform bin (the metrics, RECE-G,
 * the recalibration fits, the per-case histograms, RECE-M's fallback, the dashboard's compat
 * panel) uses this function, so their bins cannot disagree.
 *
 * Header-only (static inline: it runs once per sample in the hottest loops). Pure: any thread. */
#ifndef CALSCOPE_UBIN_H
#define CALSCOPE_UBIN_H

/* The edge e_i = i/M (0 <= i <= M). */
static inline double cs_ubin_edge(int i, int M)
{
    return (double)i / (double)M;
}

/* Bin of x among M >= 1 uniform bins. `e` is either NULL or a table of the M+1 edges
 * cs_ubin_edge(i, M) (callers that bin many values precompute it); both give the same bin. */
static inline int cs_ubin_at(double x, const double *e, int M)
{
#define CS_UBIN_E_(i) (e ? e[(i)] : cs_ubin_edge((i), M))
    if (M <= 1 || !(x > CS_UBIN_E_(1))) return 0;
    if (x > CS_UBIN_E_(M - 1)) return M - 1;
    /* a guess off by at most one (truncation, no ceil call), corrected on the exact edges:
     * the answer is the b with e_b < x <= e_{b+1} whatever the guess */
    double f = x * (double)M;
    int b = f < 1.0 ? 0 : f >= (double)(M - 1) ? M - 1 : (int)f;
    while (b > 0 && !(x > CS_UBIN_E_(b))) b--;
    while (b < M - 1 && x > CS_UBIN_E_(b + 1)) b++;
    return b;
#undef CS_UBIN_E_
}

/* Bin of x among M >= 1 uniform bins, edges computed on the fly. */
static inline int cs_ubin(double x, int M)
{
    return cs_ubin_at(x, (const double *)0, M);
}

#endif
