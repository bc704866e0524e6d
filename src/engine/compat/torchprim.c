/* The torch CPU primitives that torchmetrics and MONAI call, reproduced bit for bit for the
 * kernels torch 1.13 runs on an x86-64 CPU with AVX2 (ATen's CPU capability "AVX2"; a CPU
 * without AVX2, or one where torch picks AVX-512, fills linspace in other blocks and sums in
 * other lanes). Checked against torch itself, not against this transcription:
 * tests/oracles/torchmetrics_check.py writes tests/fixtures/torch_prims.txt from torch, test_compat.c
 * compares these functions with it, tests/e2e/test_torchmetrics.sh regenerates it live.
 *
 * Each expression below is split into one rounding per statement on purpose: a compiler that
 * fuses a*b + c would change the last bit (clang's default -ffp-contract=on fuses within one
 * expression; GCC under -std=c11, as calscope builds, never does — under -std=gnu11 with FMA it
 * would fuse across statements too). Where torch's AVX2 build does fuse (GCC -mfma in the scalar
 * lambdas of linspace), fmaf / fma say so. */
#include "engine/compat/cx.h"

#include <math.h>

/* Vectorized<float> / Vectorized<double>::size() under AVX2: 256-bit registers. */
enum { LANES_F32 = 8, LANES_F64 = 4 };

/* aten/src/ATen/native/cpu/RangeFactoriesKernel.cpp linspace_kernel through cpu_serial_kernel_vec
 * (Loops.h vectorized_loop): step = (end - start) / (steps - 1); blocks of 2 * LANES indices from
 * 0 are filled by two Vectorized::arange(base, step) calls, base computed from the block's first
 * index (start + step*i below halfway = steps / 2, else end - step*(steps - i - 1), fused), lane j
 * = base + j*step (not fused); the remaining steps % (2 * LANES) indices use the scalar formula. */
#define LINSPACE_BODY(T, LANES, FMA)                                                        \
    if (steps == 1) { e[0] = start; return; }                                               \
    const T step = (end - start) / (T)(steps - 1);                                          \
    const int halfway = steps / 2;                                                          \
    const int nvec = steps / (2 * LANES) * (2 * LANES);                                     \
    int i = 0;                                                                              \
    for (; i < nvec; i += LANES) {                                                          \
        T base = i < halfway ? FMA(step, (T)i, start) : FMA(-step, (T)(steps - i - 1), end); \
        e[i] = base;                                                                        \
        for (int j = 1; j < LANES; j++) {                                                   \
            T js = (T)j * step;                                                             \
            e[i + j] = base + js;                                                           \
        }                                                                                   \
    }                                                                                       \
    for (; i < steps; i++)                                                                  \
        e[i] = i < halfway ? FMA(step, (T)i, start) : FMA(-step, (T)(steps - i - 1), end);

void cx_torch_linspace_f32(float *e, float start, float end, int steps)
{
    LINSPACE_BODY(float, LANES_F32, fmaf)
}

void cx_torch_linspace_f64(double *e, double start, double end, int steps)
{
    LINSPACE_BODY(double, LANES_F64, fma)
}

/* torch.bucketize(v, edges, right=True) (aten/src/ATen/native/Bucketization.cpp
 * cus_upper_bound): the number of edges <= v, by binary search on the sorted edges. */
#define BUCKETIZE_BODY                                          \
    int lo = 0, hi = n;                                         \
    while (lo < hi) {                                           \
        int mid = lo + ((hi - lo) >> 1);                        \
        if (!(e[mid] > v)) lo = mid + 1;                        \
        else hi = mid;                                          \
    }                                                           \
    return lo;

int cx_torch_bucketize_right_f32(const float *e, int n, float v) { BUCKETIZE_BODY }
int cx_torch_bucketize_right_f64(const double *e, int n, double v) { BUCKETIZE_BODY }

/* torch.sum of a contiguous 1-D tensor on CPU (aten/src/ATen/native/cpu/SumKernel.cpp
 * cascade_sum, one thread below 32768 elements). n >= LANES: vectorized_inner_sum — the first
 * n / LANES vectors are summed lane-wise by row_sum (4 interleaved accumulators, multi_row_sum's
 * 4-level cascade), then the n % LANES tail elements in order, then the LANES lanes in order.
 * n < LANES: scalar row_sum. The accumulator type is the element type (float for float). */
#define CEIL_LOG2(x, out) do { long long t_ = (x); int r_ = 1; if (t_ > 2) { r_ = 0;      \
        unsigned long long u_ = (unsigned long long)(t_ - 1); while (u_) { r_++; u_ >>= 1; } } \
        (out) = r_; } while (0)

/* row_sum over `size` elements of w lanes each (w = 1: scalars), element r at x + r*w. */
#define ROW_SUM(T, NAME, MAXW)                                                              \
static void NAME(const T *x, int w, long long size, T *out)                                 \
{                                                                                           \
    enum { ILP = 4, LEVELS = 4 };                                                           \
    long long size_ilp = size / ILP;                                                        \
    T acc[LEVELS][ILP][MAXW] = { { { 0 } } };                                               \
    int cl;                                                                                 \
    CEIL_LOG2(size_ilp, cl);                                                                \
    int level_power = cl / LEVELS > 4 ? cl / LEVELS : 4;                                    \
    long long level_step = 1LL << level_power, level_mask = level_step - 1;                 \
    long long i = 0;                                                                        \
    for (; i + level_step <= size_ilp;) {                                                   \
        for (long long j = 0; j < level_step; ++j, ++i)                                     \
            for (int k = 0; k < ILP; k++)                                                   \
                for (int l = 0; l < w; l++) acc[0][k][l] += x[(i * ILP + k) * w + l];       \
        for (int j = 1; j < LEVELS; ++j) {                                                  \
            for (int k = 0; k < ILP; k++)                                                   \
                for (int l = 0; l < w; l++) { acc[j][k][l] += acc[j - 1][k][l]; acc[j - 1][k][l] = 0; } \
            if ((i & (level_mask << (j * level_power))) != 0) break;                        \
        }                                                                                   \
    }                                                                                       \
    for (; i < size_ilp; ++i)                                                               \
        for (int k = 0; k < ILP; k++)                                                       \
            for (int l = 0; l < w; l++) acc[0][k][l] += x[(i * ILP + k) * w + l];           \
    for (int j = 1; j < LEVELS; ++j)                                                        \
        for (int k = 0; k < ILP; k++)                                                       \
            for (int l = 0; l < w; l++) acc[0][k][l] += acc[j][k][l];                       \
    for (long long r = size_ilp * ILP; r < size; ++r)                                       \
        for (int l = 0; l < w; l++) acc[0][0][l] += x[r * w + l];                           \
    for (int k = 1; k < ILP; ++k)                                                           \
        for (int l = 0; l < w; l++) acc[0][0][l] += acc[0][k][l];                           \
    for (int l = 0; l < w; l++) out[l] = acc[0][0][l];                                      \
}

ROW_SUM(float, row_sum_f32, LANES_F32)
ROW_SUM(double, row_sum_f64, LANES_F64)

#define SUM_BODY(T, LANES, ROW)                                                             \
    T lanes[LANES];                                                                         \
    if (n < LANES) {                                                                        \
        ROW(x, 1, (long long)n, lanes);                                                     \
        return lanes[0];                                                                    \
    }                                                                                       \
    size_t nv = n / LANES;                                                                  \
    ROW(x, LANES, (long long)nv, lanes);                                                    \
    T fin = 0;                                                                              \
    for (size_t k = nv * LANES; k < n; k++) fin += x[k];                                    \
    for (int l = 0; l < LANES; l++) fin += lanes[l];                                        \
    return fin;

float cx_torch_sum_f32(const float *x, size_t n) { SUM_BODY(float, LANES_F32, row_sum_f32) }
double cx_torch_sum_f64(const double *x, size_t n) { SUM_BODY(double, LANES_F64, row_sum_f64) }
