/* The engine's sorts, in one file (sort.c): every ordering of samples, ids, confidences and
 * resampled values goes through these, so "ties keep row order" (SPEC) is decided once.
 *
 * All but cs_sort_doubles_desc are stable: equal keys keep their input order, so the result
 * is the one permutation a stable sort gives, whatever the algorithm. Internal to the engine
 * (not a public header). Pure functions of their arguments: any thread. Returns 0, or -1 when
 * a scratch allocation failed (the input is then unchanged). */
#ifndef CALSCOPE_ENGINE_SORT_H
#define CALSCOPE_ENGINE_SORT_H

#include <stddef.h>
#include <stdint.h>

/* keys[0..n) ascending (each < limit, which bounds the radix passes). */
int cs_sort_u32(uint32_t *keys, size_t n, uint32_t limit);

/* keys[0..n) ascending, carrying vals[0..n) along (LSD radix; digits that are the same for
 * every key are skipped). */
int cs_sort_u64(uint64_t *keys, uint32_t *vals, size_t n);

/* a[0..n) ascending under cmp (negative, 0, positive) with a context: a merge sort. */
typedef int (*cs_sort_cmp)(uint32_t a, uint32_t b, const void *ctx);
int cs_sort_by(uint32_t *a, size_t n, cs_sort_cmp cmp, const void *ctx);

/* An unsigned key in the order of the doubles (-0 with +0; NaN after +inf). */
uint64_t cs_sort_key(double x);

/* The stable ascending order of v[0..n) (*order: order[i] = index of the i-th smallest) and
 * its inverse (*rank; rank NULL: not made); both malloc'd, the caller frees them. */
int cs_sort_order(const double *v, size_t n, uint32_t **order, uint32_t **rank);

/* The same order (*order malloc'd, the caller frees it), and sorted[i] = v[order[i]] bit for
 * bit (-0.0 too) in the caller's block of n doubles, which the sort uses as its scratch: no
 * gather through the order afterwards, no second n-word block. */
int cs_sort_order_values(const double *v, size_t n, uint32_t **order, double *sorted);

/* a[0..n) ascending, in place (stable: equal values keep their order). Never fails (out of
 * memory it falls back to an insertion sort). */
void cs_sort_doubles(double *a, size_t n);

/* a[0..n) descending, in place, by value only (for probability rows, where equal values are
 * interchangeable). ka, kb (n keys) and b (n values) are scratch; with any of them NULL a
 * comparison sort is used. Never fails. */
void cs_sort_doubles_desc(double *a, size_t n, uint32_t *ka, uint32_t *kb, double *b);

#endif
