/* calscope engine: the one uniform-bin rule ("uniform": M bins of equal width; docs/metrics.md).
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

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

/* The bins of x[0] and x[1] among M >= 1 uniform bins, with the table e (as cs_ubin_at):
 * b[i] = cs_ubin_at(x[i], e, M), two lanes at a time and without a branch where SSE2 is
 * there (it is on every x86-64), for the metrics' passes over 10^6-10^7 values whose bins
 * no predictor guesses. cs_ubin_at keeps its early exits: a value at or below e_1 costs one
 * well-predicted branch there, what most of a segmentation volume's voxels are.
 *
 * Why one step suffices. Let b be the answer (e_b < x <= e_{b+1}). x > e_b puts x above the
 * real b/M (e_b is b/M rounded to nearest, so the next double up is past it), so x*M > b and
 * its rounding is >= b; and x <= e_{b+1} <= (b+1)/M (1 + 2^-53) keeps the rounded x*M below
 * b+2. So the guess trunc(x*M), clamped to [0, M-1] (maxpd(f, 0) is 0 for NaN: the second
 * operand), is b or b+1, and one step down where the guess is > 0 (f >= 1) and x is not
 * above its lower edge decides. test_ubin compares the two on every edge of every M to 1000
 * and the 4 doubles either side. */
static inline void cs_ubin_at2(const double *x, const double *e, int M, int *b)
{
#if defined(__SSE2__)
    if (M > 1) {
        __m128d v = _mm_loadu_pd(x), one = _mm_set1_pd(1.0);
        __m128d f = _mm_mul_pd(v, _mm_set1_pd((double)M));
        f = _mm_min_pd(_mm_max_pd(f, _mm_setzero_pd()), _mm_set1_pd((double)(M - 1)));
        __m128i g = _mm_cvttpd_epi32(f);
        int b0 = _mm_cvtsi128_si32(g), b1 = _mm_cvtsi128_si32(_mm_shuffle_epi32(g, 1));
        __m128d eb = _mm_set_pd(e[b1], e[b0]);
        /* down one where the guess is > 0 and x is not above its lower edge */
        int m = _mm_movemask_pd(_mm_andnot_pd(_mm_cmpgt_pd(v, eb), _mm_cmpge_pd(f, one)));
        b[0] = b0 - (m & 1);
        b[1] = b1 - (m >> 1);
        return;
    }
#endif
    b[0] = cs_ubin_at(x[0], e, M);
    b[1] = cs_ubin_at(x[1], e, M);
}

/* cs_ubin_at2's guess and step in four AVX2 lanes (the same proof): b[i] = cs_ubin_at(x[i], e, M)
 * for i < 4, the edges gathered from the table e. Callable only from code built for AVX2 (a
 * function with target("avx2"), run where the CPU has it: engine/reduce/lanes.c). */
#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
__attribute__((target("avx2"))) static inline __m128i cs_ubin_at4(__m256d v, const double *e, int M)
{
    if (M <= 1) return _mm_setzero_si128();
    __m256d f = _mm256_mul_pd(v, _mm256_set1_pd((double)M));
    f = _mm256_min_pd(_mm256_max_pd(f, _mm256_setzero_pd()), _mm256_set1_pd((double)(M - 1)));
    __m128i g = _mm256_cvttpd_epi32(f);
    __m256d eb = _mm256_i32gather_pd(e, g, 8);
    /* down one (all ones: -1 in each lane) where the guess is > 0 and x is not above its lower
     * edge */
    __m256d down = _mm256_andnot_pd(_mm256_cmp_pd(v, eb, _CMP_GT_OQ), _mm256_cmp_pd(f, _mm256_set1_pd(1.0), _CMP_GE_OQ));
    __m128i d32 = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(_mm256_castpd_si256(down),
                                                                     _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6)));
    return _mm_add_epi32(g, d32);
}
#endif

/* Bin of x among M >= 1 uniform bins, edges computed on the fly. */
static inline int cs_ubin(double x, int M)
{
    return cs_ubin_at(x, (const double *)0, M);
}

#endif
