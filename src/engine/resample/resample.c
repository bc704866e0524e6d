/* Deterministic resampling primitives: see include/calscope/resample.h. */
#include "calscope/resample.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "calscope/thread.h"
#include "engine/sort/sort.h"

#define GOLDEN 0x9e3779b97f4a7c15ull

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void cs_rng_seed(cs_rng *r, uint64_t seed, uint64_t stream, uint64_t point, uint64_t rep)
{
    /* Chained mixing rather than XOR of the parts: (p, r) and (r, p) must give unrelated streams. */
    uint64_t h = mix64(seed + GOLDEN);
    h = mix64(h ^ (stream + 0x632be59bd9b4e019ull));
    h = mix64(h ^ (point + 0x8cb92ba72f3d8dd7ull));
    h = mix64(h ^ (rep + 0xd1b54a32d192ed03ull));
    r->state = h;
}

static inline uint64_t next_inl(cs_rng *r)
{
    r->state += GOLDEN;
    return mix64(r->state);
}

uint64_t cs_rng_next(cs_rng *r)
{
    return next_inl(r);
}

uint64_t cs_splitmix64(uint64_t z)
{
    return mix64(z + GOLDEN);
}

/* Lemire 2019 on a 32-bit bound >= 1: exact and cheap; inlined into the draw loops. */
static inline uint32_t below32(cs_rng *r, uint32_t b)
{
    uint64_t m = (next_inl(r) >> 32) * b;
    uint32_t low = (uint32_t)m;
    if (low < b) {
        uint32_t t = (uint32_t)(-b) % b;
        while (low < t) {
            m = (next_inl(r) >> 32) * b;
            low = (uint32_t)m;
        }
    }
    return (uint32_t)(m >> 32);
}

uint64_t cs_rng_below(cs_rng *r, uint64_t bound)
{
    /* Lemire 2019 on 32-bit bounds (all our index ranges fit): exact and cheap. */
    if (bound <= 1)
        return 0;
    if (bound <= UINT32_MAX)
        return below32(r, (uint32_t)bound);
    /* Larger bounds: plain rejection on the top of the range. */
    uint64_t lim = UINT64_MAX - UINT64_MAX % bound;
    uint64_t x;
    do {
        x = cs_rng_next(r);
    } while (x >= lim);
    return x % bound;
}

size_t cs_subset_size(double fraction, size_t n)
{
    if (!(fraction > 0) || n == 0)
        return 0;
    double x = fraction * (double)n;
    double nearest = nearbyint(x);
    double tol = 1e-9 * (x > 1 ? x : 1);
    double k = fabs(x - nearest) <= tol ? nearest : ceil(x);
    if (k < 1)
        return 1;
    if (k >= (double)n)
        return n;
    return (size_t)k;
}

#ifdef __SSE2__
/* pos_tab[b]: the positions of the set bits of byte b, ascending; pos_cnt[b]: how many */
static uint8_t pos_tab[256][8], pos_cnt[256];
static pthread_once_t pos_once = PTHREAD_ONCE_INIT;

static void pos_init(void)
{
    for (unsigned b = 0; b < 256; b++) {
        unsigned c = 0;
        for (unsigned q = 0; q < 8; q++)
            if (b >> q & 1u) pos_tab[b][c++] = (uint8_t)q;
        pos_cnt[b] = (uint8_t)c;
    }
}
#endif

/* The swap targets j of steps i0..i1-1 (into undo, in order), their perm entries
 * prefetched: they depend only on the generator, not on perm, so the random accesses of a
 * block overlap. */
static inline void draw_targets(cs_rng *r, const uint32_t *perm, size_t n, size_t i0, size_t i1,
                                uint32_t *undo)
{
    for (size_t i = i0; i < i1; i++) {
        size_t j = i + (n - i <= UINT32_MAX ? (n - i > 1 ? (size_t)below32(r, (uint32_t)(n - i)) : 0)
                                            : (size_t)cs_rng_below(r, n - i));
        undo[i] = (uint32_t)j;
        __builtin_prefetch(&perm[j], 1);
    }
}

/* Back to the identity: every position a step touched (i < k and its j) gets its own index,
 * which is what undoing the swaps in reverse order gives, without the loads. */
static inline void restore_identity(uint32_t *perm, size_t k, const uint32_t *undo)
{
    for (size_t i = 0; i < k; i++) perm[undo[i]] = undo[i];
    for (size_t i = 0; i < k; i++) perm[i] = (uint32_t)i;
}

void cs_draw_without(cs_rng *r, uint32_t *perm, size_t n, size_t k, uint32_t *undo, uint32_t *out)
{
    /* Step i swaps perm[i] and perm[j] (j >= i) and outputs the new perm[i]. Position i is
     * never read again by later steps (their j is > i), so it is not written back. */
    for (size_t i0 = 0; i0 < k; i0 += 64) {
        size_t i1 = i0 + 64 < k ? i0 + 64 : k;
        draw_targets(r, perm, n, i0, i1, undo);
        for (size_t i = i0; i < i1; i++) {
            size_t j = undo[i];
            uint32_t x = perm[j];
            perm[j] = perm[i];
            out[i] = x;
        }
    }
    restore_identity(perm, k, undo);
}

void cs_draw_without_sorted(cs_rng *r, uint32_t *perm, size_t n, size_t k, uint32_t *undo,
                            uint64_t *bits, uint32_t *out)
{
    /* The steps of cs_draw_without, the drawn index marked in the bitmap instead of written
     * out; then the bitmap read in order (and cleared). */
    for (size_t i0 = 0; i0 < k; i0 += 64) {
        size_t i1 = i0 + 64 < k ? i0 + 64 : k;
        draw_targets(r, perm, n, i0, i1, undo);
        for (size_t i = i0; i < i1; i++) {
            size_t j = undo[i];
            uint32_t x = perm[j];
            perm[j] = perm[i];
            bits[x >> 6] |= 1ull << (x & 63u);
        }
    }
    restore_identity(perm, k, undo);
    size_t m = 0, W = (n + 63) / 64, w = 0;
#ifdef __SSE2__
    if (k >= n / 4) {
        /* dense: the positions of each byte's bits from a table, 8 lanes stored at once (no
         * bit-by-bit chain, no data-dependent branch) while 64 more cannot pass k */
        pthread_once(&pos_once, pos_init);
        const __m128i z = _mm_setzero_si128();
        for (; w < W && m + 64 <= k; w++) {
            uint64_t b = bits[w];
            bits[w] = 0;
            for (unsigned q = 0; q < 8; q++) {
                unsigned by = (unsigned)(b >> (8 * q)) & 255u;
                __m128i e = _mm_loadl_epi64((const __m128i *)pos_tab[by]);
                __m128i base = _mm_set1_epi32((int)(w * 64 + 8 * q));
                __m128i h = _mm_unpacklo_epi8(e, z);
                _mm_storeu_si128((__m128i *)(out + m), _mm_add_epi32(_mm_unpacklo_epi16(h, z), base));
                _mm_storeu_si128((__m128i *)(out + m + 4),
                                 _mm_add_epi32(_mm_unpackhi_epi16(h, z), base));
                m += pos_cnt[by];
            }
        }
    }
#endif
    for (; w < W && m < k; w++) {
        uint64_t b = bits[w];
        if (!b) continue;
        bits[w] = 0;
        do {
            out[m++] = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(b));
            b &= b - 1;
        } while (b);
    }
}

void cs_draw_with(cs_rng *r, size_t n, size_t k, uint32_t *out)
{
    if (n > 1 && n <= UINT32_MAX) {
        for (size_t i = 0; i < k; i++)
            out[i] = below32(r, (uint32_t)n);
        return;
    }
    for (size_t i = 0; i < k; i++)
        out[i] = (uint32_t)cs_rng_below(r, n);
}

size_t cs_boot_draw_size(size_t n, long boot_size, int bins)
{
    size_t cap;
    if (boot_size == CS_BOOT_SIZE_FULL) return n;
    if (boot_size > 0) {
        cap = (size_t)boot_size;
    } else {
        cap = bins > 0 ? (size_t)bins * CS_BOOT_PER_BIN : 0;
        if (cap < CS_BOOT_DRAW_MIN) cap = CS_BOOT_DRAW_MIN;
    }
    return n > cap ? cap : n;
}

void cs_boot_shrink(double *values, size_t R, const double *full, size_t k, size_t n, unsigned ok)
{
    if (k >= n) return;
    double s = sqrt((double)k / (double)n);
    for (size_t r = 0; r < R; r++)
        for (int m = 0; m < CS_METRIC_COUNT; m++) {
            double *v = &values[r * CS_METRIC_COUNT + (size_t)m];
            if (!(ok & CS_METRIC_BIT(m))) *v = NAN;
            else if (isfinite(*v) && isfinite(full[m])) *v = full[m] + s * (*v - full[m]);
        }
}

double cs_quantile_sorted(const double *sorted, size_t n, double q)
{
    if (n == 0)
        return NAN;
    if (q <= 0)
        return sorted[0];
    if (q >= 1)
        return sorted[n - 1];
    double h = (double)(n - 1) * q;
    size_t lo = (size_t)floor(h);
    if (lo + 1 >= n)
        return sorted[n - 1];
    double frac = h - (double)lo;
    return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

void cs_stat_compute(const double *values, size_t n, double reference, double *scratch,
                     cs_stat *out)
{
    size_t m = 0;
    double sum = 0, dev = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(values[i]))
            continue;
        scratch[m++] = values[i];
        sum += values[i];
        dev += fabs(values[i] - reference);
    }
    out->count = m;
    if (m == 0) {
        out->mean = out->sd = out->lo = out->hi = out->abs_dev = NAN;
        return;
    }
    double mean = sum / (double)m;
    double ss = 0;
    for (size_t i = 0; i < m; i++)
        ss += (scratch[i] - mean) * (scratch[i] - mean);
    out->mean = mean;
    out->sd = sqrt(ss / (double)m);
    out->abs_dev = isfinite(reference) ? dev / (double)m : NAN;
    cs_sort_doubles(scratch, m);
    out->lo = cs_quantile_sorted(scratch, m, 0.025);
    out->hi = cs_quantile_sorted(scratch, m, 0.975);
}
