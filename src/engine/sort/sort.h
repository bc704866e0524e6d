/* The engine's sorts, in one file (sort.c): every ordering of samples, ids, confidences and
 * resampled values goes through these, so "ties keep row order" (docs/metrics.md) is decided once.
 *
 * All but cs_sort_doubles_desc are stable: equal keys keep their input order, so the result
 * is the one permutation a stable sort gives, whatever the algorithm. Internal to the engine
 * (not a public header). Pure functions of their arguments: any thread. Returns 0, or -1 when
 * a scratch allocation failed (the input is then unchanged). */
#ifndef CALSCOPE_ENGINE_SORT_H
#define CALSCOPE_ENGINE_SORT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* keys[0..n) ascending (each < limit, which bounds the radix passes). */
int cs_sort_u32(uint32_t *keys, size_t n, uint32_t limit);

/* keys[0..n) ascending, carrying vals[0..n) along (LSD radix; digits that are the same for
 * every key are skipped). */
int cs_sort_u64(uint64_t *keys, uint32_t *vals, size_t n);

/* The expansion of a counting sort: out[0..k) = each i < n repeated cnt[i] times, ascending
 * (k the sum of the counts). The same array as the plain loop, without its branch per count
 * (a bootstrap draw's counts are 0, 1, 2... at random: one misprediction in two). */
void cs_sort_expand_counts(const uint32_t *cnt, size_t n, uint32_t *out, size_t k);

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

/* A sort a second thread can help with: cs_sort_order_values_shared offers the buckets of its
 * first pass (1024 at most, sorted independently) to any thread in cs_sort_help, which claims
 * them one at a time, largest first, beside the sorting thread; the order is the same whoever
 * sorts which. The caller owns the struct (init before either thread sees it, destroy after
 * both are done) and calls cs_sort_share_close once no sort will be offered (a helper waits
 * until buckets are offered or the share is closed). The sort closes it when it is done. */
typedef struct cs_sort_share {
    pthread_mutex_t m;
    pthread_cond_t cv;
    int state;                 /* 0: nothing offered yet, 1: buckets offered, 2: closed */
    uint64_t *k;               /* the sort's keys and indices, bucket b at [start[b], start[b+1]) */
    uint32_t *o;
    const size_t *start;
    const uint32_t *by_size;   /* the buckets of two or more pairs, largest first */
    size_t work, done, big;    /* buckets to sort, sorted; the largest's pairs */
    atomic_size_t next;        /* the next of by_size to claim */
} cs_sort_share;
void cs_sort_share_init(cs_sort_share *s);
void cs_sort_share_close(cs_sort_share *s);
void cs_sort_share_destroy(cs_sort_share *s);
/* On a thread that is not sorting: waits until s offers buckets (then sorts those it claims,
 * until none is left) or is closed. Never fails (out of memory it leaves them to the sort). */
void cs_sort_help(cs_sort_share *s);
/* cs_sort_order_values, offering its buckets to helpers through sh (NULL: none). */
int cs_sort_order_values_shared(const double *v, size_t n, uint32_t **order, double *sorted,
                                cs_sort_share *sh);

/* a[0..n) ascending, in place (stable: equal values keep their order). Never fails (out of
 * memory it falls back to an insertion sort). */
void cs_sort_doubles(double *a, size_t n);

/* a[0..n) descending, in place, by value only (for probability rows, where equal values are
 * interchangeable). ka, kb (n keys) and b (n values) are scratch; with any of them NULL a
 * comparison sort is used. Never fails. */
void cs_sort_doubles_desc(double *a, size_t n, uint32_t *ka, uint32_t *kb, double *b);

#endif
