/* A channel's block in vector lanes (reduce_internal.h): what case.c's channel_slab does to a
 * block of values, in four AVX2 lanes where the CPU has them, for the layouts segmentation
 * pipelines write — float16/float32 softmax maps of up to 16 classes (the running max a float,
 * the running sum 16-bit, code and argmax in one byte) and region maps (no running values).
 *
 * Why: channel_slab spends most of its time on branches no predictor guesses (which channel is
 * the running max, which bin a value falls in); in lanes there are none. The result is the same
 * bits, by construction: the same double operations in the same order for each voxel (the bins
 * by cs_ubin_at4, the one bin rule's four-lane form; the max, argmax and 16-bit sum as
 * channel_slab's max_put, arg_put and sum_put: a multiply and an add, never fused), and the
 * bin sums added by one scalar loop in voxel order, as channel_slab adds them. test_reduce
 * reduces random cases with the lanes and without and compares the bytes. */
#include "engine/reduce/reduce_internal.h"

#include <stdatomic.h>
#include <string.h>

#include "engine/num/cpu.h"
#include "engine/num/ubin.h"

static atomic_int lanes_allowed = 1;

void rd_lanes_allow(int on)
{
    atomic_store(&lanes_allowed, on != 0);
}

#if defined(__GNUC__) && defined(__x86_64__)

int rd_lanes_available(void)
{
    return (cs_cpu_features() & CS_CPU_AVX2) && atomic_load_explicit(&lanes_allowed, memory_order_relaxed);
}

/* Every value in [0, 1] (NaN is not). */
__attribute__((target("avx2"))) static int all_in_unit(const double *p, size_t n)
{
    __m256d ok = _mm256_castsi256_pd(_mm256_set1_epi64x(-1)), zero = _mm256_setzero_pd(), one = _mm256_set1_pd(1.0);
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        __m256d x = _mm256_loadu_pd(p + i);
        ok = _mm256_and_pd(ok, _mm256_and_pd(_mm256_cmp_pd(x, zero, _CMP_GE_OQ), _mm256_cmp_pd(x, one, _CMP_LE_OQ)));
    }
    int good = _mm256_movemask_pd(ok) == 15;
    for (; i < n; i++) good &= p[i] >= 0.0 && p[i] <= 1.0;
    return good;
}

/* The bin of each value (cs_ubin_at4; the last n % 4 by cs_ubin_at). */
__attribute__((target("avx2"))) static void bins_of(const double *p, size_t n, const double *e, int M, int32_t *bins)
{
    size_t i = 0;
    for (; i + 4 <= n; i += 4)
        _mm_storeu_si128((__m128i *)(void *)(bins + i), cs_ubin_at4(_mm256_loadu_pd(p + i), e, M));
    for (; i < n; i++) bins[i] = cs_ubin_at(p[i], e, M);
}

/* Bin sums, in voxel order (the order case.c adds them in): cnt[k]++, sx[k] += x[i],
 * sy[k] += y[i] for k = bins[i]. The sum of the bin the last value went to stays in a register
 * while the values stay in it: a run of values in one bin (a segmentation map's background is
 * one long run) then adds at the add's latency, not the add's plus a store and a load of the
 * same address. */
static void add_runs(const int32_t *bins, const double *x, const uint8_t *y, size_t n, uint64_t *cnt, double *sx,
                     uint64_t *sy)
{
    if (n == 0) return;
    int32_t cur = bins[0];
    double acc = sx[cur];
    uint64_t c = 0, t = 0;   /* the run's count and y sum, added at its end (integers: any order) */
    for (size_t i = 0; i < n; i++) {
        int32_t k = bins[i];
        if (k != cur) {
            sx[cur] = acc;
            cnt[cur] += c;
            sy[cur] += t;
            cur = k;
            acc = sx[k];
            c = t = 0;
        }
        acc += x[i];
        c++;
        t += y[i];
    }
    sx[cur] = acc;
    cnt[cur] += c;
    sy[cur] += t;
}

/* Softmax: the running max (a float), the argmax (the high nibble of code: strictly greater
 * moves it, so ties keep the first channel) and the 16-bit running sum, with y from the class
 * code (the low nibble) through ytab. */
__attribute__((target("avx2"))) static void softmax_lanes(const rd_lane_block *b)
{
    const double *p = b->p;
    size_t n = b->n, i = 0;
    uint8_t *code = b->code;
    float *vmax = b->vmax;
    uint16_t *vsum = b->vsum;
    const __m256d step = _mm256_set1_pd(RD_S16_STEP), scale = _mm256_set1_pd(32768.0), half = _mm256_set1_pd(0.5),
                  top = _mm256_set1_pd(65535.0);
    const int first = b->j == 0;
    uint8_t gt[RD_BLOCK];
    for (; i + 4 <= n; i += 4) {
        __m256d x = _mm256_loadu_pd(p + i);
        __m256d m = _mm256_cvtps_pd(_mm_loadu_ps(vmax + i));
        __m256d up = first ? _mm256_castsi256_pd(_mm256_set1_epi64x(-1)) : _mm256_cmp_pd(x, m, _CMP_GT_OQ);
        _mm_storeu_ps(vmax + i, _mm256_cvtpd_ps(_mm256_blendv_pd(m, x, up)));   /* exact: both floats */
        int bits = _mm256_movemask_pd(up);
        uint32_t g4 = (bits & 1 ? 0xffu : 0) | (bits & 2 ? 0xff00u : 0) | (bits & 4 ? 0xff0000u : 0) | (bits & 8 ? 0xff000000u : 0);
        memcpy(gt + i, &g4, 4);
        /* s = u·2^-15 + p (p alone in the first channel); 65535 where s >= 65535·2^-15, else
         * trunc(s·32768 + 0.5): as rd_s16_of, since min(s·32768 + 0.5, 65535) truncates the same */
        __m256d s = x;
        if (!first) {
            uint64_t u4;
            memcpy(&u4, vsum + i, 8);
            __m256d u = _mm256_cvtepi32_pd(_mm_cvtepu16_epi32(_mm_cvtsi64_si128((long long)u4)));
            s = _mm256_add_pd(_mm256_mul_pd(u, step), x);
        }
        __m256d t = _mm256_min_pd(_mm256_add_pd(_mm256_mul_pd(s, scale), half), top);
        __m128i t32 = _mm256_cvttpd_epi32(t);
        uint64_t out = (uint64_t)_mm_cvtsi128_si64(_mm_packus_epi32(t32, t32));
        memcpy(vsum + i, &out, 8);
    }
    /* the tail as channel_slab: same operations, one value at a time */
    for (; i < n; i++) {
        double x = p[i];
        int up = first || x > (double)vmax[i];
        if (up) vmax[i] = (float)x;
        gt[i] = up ? 0xff : 0;
        vsum[i] = rd_s16_of(first ? x : (double)vsum[i] * RD_S16_STEP + x);
    }
    /* y from the code nibble, and the argmax nibble moved to j where the value went up */
    const __m128i tab = _mm_loadu_si128((const __m128i *)(const void *)b->ytab16), low = _mm_set1_epi8(15);
    const __m128i jj = _mm_set1_epi8((char)(b->j << 4));
    for (i = 0; i + 16 <= n; i += 16) {
        __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(code + i));
        __m128i k = _mm_and_si128(c, low);
        _mm_storeu_si128((__m128i *)(void *)(b->ys + i), _mm_shuffle_epi8(tab, k));
        __m128i moved = _mm_or_si128(k, jj);
        __m128i g = _mm_loadu_si128((const __m128i *)(const void *)(gt + i));
        _mm_storeu_si128((__m128i *)(void *)(code + i), _mm_blendv_epi8(c, moved, g));
    }
    for (; i < n; i++) {
        uint8_t k = code[i] & 15u;
        b->ys[i] = b->ytab16[k];
        if (gt[i]) code[i] = (uint8_t)(k | (b->j << 4));
    }
}

int rd_lanes_channel(const rd_lane_block *b)
{
    if (!all_in_unit(b->p, b->n)) return 0;
    int32_t bins[RD_BLOCK];
    bins_of(b->p, b->n, b->edges, b->fine, bins);
    if (b->vmax) softmax_lanes(b);
    else
        for (size_t i = 0; i < b->n; i++) b->ys[i] = b->ytab[b->code[i]];
    add_runs(bins, b->p, b->ys, b->n, b->cnt, b->sp, b->sy);
    return 1;
}

/* n voxels' running max (a float) as doubles, and whether each voxel's argmax (the high nibble
 * of code) is its class (class_of through the low nibble), 0 or 1. */
__attribute__((target("avx2"))) static void top1_values(const rd_top1_block *b, double *conf, uint8_t *right)
{
    size_t i = 0;
    for (; i + 4 <= b->n; i += 4) _mm256_storeu_pd(conf + i, _mm256_cvtps_pd(_mm_loadu_ps(b->vmax + i)));
    for (; i < b->n; i++) conf[i] = (double)b->vmax[i];
    const __m128i tab = _mm_loadu_si128((const __m128i *)(const void *)b->class16), low = _mm_set1_epi8(15),
                  one = _mm_set1_epi8(1);
    for (i = 0; i + 16 <= b->n; i += 16) {
        __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(b->code + i));
        __m128i arg = _mm_and_si128(_mm_srli_epi16(c, 4), low);
        __m128i eq = _mm_cmpeq_epi8(arg, _mm_shuffle_epi8(tab, _mm_and_si128(c, low)));
        _mm_storeu_si128((__m128i *)(void *)(right + i), _mm_and_si128(eq, one));
    }
    for (; i < b->n; i++) right[i] = (uint8_t)((b->code[i] >> 4) == b->class16[b->code[i] & 15u]);
}

void rd_lanes_top1(const rd_top1_block *b)
{
    double conf[RD_BLOCK];
    uint8_t right[RD_BLOCK];
    int32_t bins[RD_BLOCK];
    top1_values(b, conf, right);
    bins_of(conf, b->n, b->edges, b->fine, bins);
    add_runs(bins, conf, right, b->n, b->tc, b->ts, b->tk);
}

#else

int rd_lanes_available(void)
{
    return 0;
}

int rd_lanes_channel(const rd_lane_block *b)
{
    (void)b;
    return 0;
}

void rd_lanes_top1(const rd_top1_block *b)
{
    (void)b;
}

#endif
