/* calscope engine: deterministic resampling primitives (docs/metrics.md, "Variance curves").
 *
 * Every random stream is counter-based: the generator for replicate `rep` of curve point `point`
 * is seeded from a hash of (seed, stream, point, rep), never from a thread, so any split of the
 * replicates over threads gives bit-identical results. The generator is splitmix64 (Steele,
 * Lea & Flood 2014); bounded integers use Lemire's multiply-and-reject method, so they are exact
 * (unbiased) and identical on every platform.
 *
 * Threads: everything here is a pure function of its arguments. (cs_parallel_for, which runs a
 * task function on up to `threads` threads, is in calscope/run.h, included here.) */
#ifndef CALSCOPE_RESAMPLE_H
#define CALSCOPE_RESAMPLE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "calscope/run.h"

typedef struct cs_rng {
    uint64_t state;
} cs_rng;

/* Seeds the stream for (seed, stream, point, rep); `stream` separates unrelated uses (curves,
 * intervals, comparisons) that share a user seed. */
void cs_rng_seed(cs_rng *r, uint64_t seed, uint64_t stream, uint64_t point, uint64_t rep);
/* Next 64 random bits. */
uint64_t cs_rng_next(cs_rng *r);
/* What cs_rng_next draws from the state z (splitmix64's step: the mix of z + the golden
 * gamma): a 64-bit hash of z, for seeds made from names or indices (recalibration's folds).
 * Pure; any thread. */
uint64_t cs_splitmix64(uint64_t z);
/* Uniform integer in [0, bound), bound >= 1, unbiased. */
uint64_t cs_rng_below(cs_rng *r, uint64_t bound);

/* Rows in a subset of fraction f of n rows: ceil(f·n), with f·n first snapped to the nearest
 * integer when it lies within 1e-9·max(1, f·n) of it — in double, 0.07*100 is 7.000000000000001
 * and a plain ceil would give 8. Clamped to [1, n] for f > 0 and n > 0; 0 when f <= 0 or n == 0. */
size_t cs_subset_size(double fraction, size_t n);

/* Draws k of n indices without replacement into out[0..k) by a partial Fisher–Yates shuffle of
 * `perm`, which must hold the identity 0..n-1 on entry and holds it again on return (the swaps are
 * undone in reverse order), so a caller reuses one perm per thread at O(k) cost per draw.
 * `undo` is scratch for k entries. Requires k <= n <= UINT32_MAX. */
void cs_draw_without(cs_rng *r, uint32_t *perm, size_t n, size_t k, uint32_t *undo, uint32_t *out);
/* The same draw as cs_draw_without (same generator use, the same k indices) written to out[0..k)
 * in ascending order, the order cs_evaluate would put it in anyway. `bits` holds (n+63)/64 words,
 * all zero on entry and again on return; the output pass reads all of them, so this pays when
 * k is not far below n/64. */
void cs_draw_without_sorted(cs_rng *r, uint32_t *perm, size_t n, size_t k, uint32_t *undo,
                            uint64_t *bits, uint32_t *out);
/* Draws k indices uniformly from 0..n-1 with replacement. */
void cs_draw_with(cs_rng *r, size_t n, size_t k, uint32_t *out);

/* Quantile q in [0,1] of sorted[0..n), numpy's default rule ("linear", type 7 of Hyndman & Fan):
 * h = (n−1)·q, result = x[⌊h⌋] + (h − ⌊h⌋)·(x[⌊h⌋+1] − x[⌊h⌋]). NAN when n == 0. */
double cs_quantile_sorted(const double *sorted, size_t n, double q);

/* Summary of a metric over R replicates. */
typedef struct cs_stat {
    double mean;       /* NAN when no replicate gave a finite value */
    double sd;         /* population sd (divide by the count) */
    double lo, hi;     /* 2.5 % and 97.5 % quantiles (cs_quantile_sorted) */
    double abs_dev;    /* mean |value − reference| (NAN when the reference is NAN) */
    size_t count;      /* replicates with a finite value (non-finite ones are left out) */
} cs_stat;

/* Summarises values[0..n) (read only; `scratch` holds n doubles) against `reference`. The sum is
 * taken in index order, so the result depends only on the values, never on the thread count.
 * On return scratch[0..out->count) holds the finite values in ascending order. */
void cs_stat_compute(const double *values, size_t n, double reference, double *scratch,
                     cs_stat *out);

#endif
