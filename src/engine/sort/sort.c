/* The engine's sorts (see sort.h). Radix sorts where the keys are integers (sample indices,
 * ranks, hashed ids, doubles mapped to order-preserving integers), one merge sort for orders
 * that need a comparator, and the descending sort of probability rows the top-k lenses make
 * per sample. */
#include "engine/sort/sort.h"

#include <stdlib.h>
#include <string.h>

/* LSD radix sort with 11-bit digits; only as many passes as `limit` needs. */
int cs_sort_u32(uint32_t *keys, size_t n, uint32_t limit)
{
    if (n < 2) return 0;
    uint32_t *k2 = malloc(n * sizeof *k2);
    if (!k2) return -1;
    uint32_t *ka = keys, *kb = k2;
    int passes = 0;
    for (uint64_t top = limit; top > 0; top >>= 11) passes++;
    if (passes == 0) passes = 1;
    size_t cnt[2048];
    for (int pass = 0; pass < passes; pass++) {
        int sh = 11 * pass;
        memset(cnt, 0, sizeof cnt);
        for (size_t i = 0; i < n; i++) cnt[(ka[i] >> sh) & 2047u]++;
        size_t sum = 0;
        for (size_t b = 0; b < 2048; b++) { size_t c = cnt[b]; cnt[b] = sum; sum += c; }
        for (size_t i = 0; i < n; i++) kb[cnt[(ka[i] >> sh) & 2047u]++] = ka[i];
        uint32_t *t = ka; ka = kb; kb = t;
    }
    if (ka != keys) memcpy(keys, ka, n * sizeof *keys);
    free(k2);
    return 0;
}

/* LSD radix sort, 16-bit digits for large inputs (fewer passes) and 8-bit ones for small
 * inputs (a smaller count table); the digit width does not change the (stable) result. */
int cs_sort_u64(uint64_t *keys, uint32_t *vals, size_t n)
{
    if (n < 2) return 0;
    uint64_t andv = ~0ull, orv = 0;
    for (size_t i = 0; i < n; i++) {
        andv &= keys[i];
        orv |= keys[i];
    }
    int bits = n >= 65536 ? 16 : 8;
    size_t nb = (size_t)1 << bits, mask = nb - 1;
    uint64_t *k2 = malloc(n * sizeof *k2);
    uint32_t *v2 = vals ? malloc(n * sizeof *v2) : NULL;
    size_t *cnt = malloc(nb * sizeof *cnt);
    if (!k2 || (vals && !v2) || !cnt) {
        free(k2);
        free(v2);
        free(cnt);
        return -1;
    }
    uint64_t *ka = keys, *kb = k2;
    uint32_t *va = vals, *vb = v2;
    for (int sh = 0; sh < 64; sh += bits) {
        if ((((andv ^ orv) >> sh) & mask) == 0) continue;   /* the same digit in every key */
        memset(cnt, 0, nb * sizeof *cnt);
        for (size_t i = 0; i < n; i++) cnt[(ka[i] >> sh) & mask]++;
        size_t sum = 0;
        for (size_t b = 0; b < nb; b++) { size_t c = cnt[b]; cnt[b] = sum; sum += c; }
        for (size_t i = 0; i < n; i++) {
            size_t at = cnt[(ka[i] >> sh) & mask]++;
            kb[at] = ka[i];
            if (va) vb[at] = va[i];
        }
        uint64_t *tk = ka; ka = kb; kb = tk;
        uint32_t *tv = va; va = vb; vb = tv;
    }
    if (ka != keys) {
        memcpy(keys, ka, n * sizeof *keys);
        if (vals) memcpy(vals, va, n * sizeof *vals);
    }
    free(k2);
    free(v2);
    free(cnt);
    return 0;
}

static void msort_rec(uint32_t *a, uint32_t *tmp, size_t n, cs_sort_cmp cmp, const void *ctx)
{
    if (n < 16) {
        for (size_t i = 1; i < n; i++) {
            uint32_t x = a[i];
            size_t j = i;
            while (j > 0 && cmp(a[j - 1], x, ctx) > 0) { a[j] = a[j - 1]; j--; }
            a[j] = x;
        }
        return;
    }
    size_t h = n / 2;
    msort_rec(a, tmp, h, cmp, ctx);
    msort_rec(a + h, tmp, n - h, cmp, ctx);
    if (cmp(a[h - 1], a[h], ctx) <= 0) return;
    memcpy(tmp, a, h * sizeof *a);
    size_t i = 0, j = h, o = 0;
    while (i < h && j < n) a[o++] = cmp(a[j], tmp[i], ctx) < 0 ? a[j++] : tmp[i++];
    while (i < h) a[o++] = tmp[i++];
}

int cs_sort_by(uint32_t *a, size_t n, cs_sort_cmp cmp, const void *ctx)
{
    if (n < 2) return 0;
    uint32_t *tmp = malloc((n / 2 + 1) * sizeof *tmp);
    if (!tmp) return -1;
    msort_rec(a, tmp, n, cmp, ctx);
    free(tmp);
    return 0;
}

uint64_t cs_sort_key(double x)
{
    uint64_t b;
    if (x == 0) x = 0.0;   /* -0 sorts with +0 */
    memcpy(&b, &x, sizeof b);
    return (b >> 63) ? ~b : (b | 0x8000000000000000ull);
}

/* A short bucket (10^6 values spread over 65536 buckets: ~15 each) by insertion, stable:
 * an element moves left only past strictly greater keys. Where the radix sort's count table
 * and scratch per bucket cost more than the sort. */
static void insertion_u64(uint64_t *k, uint32_t *o, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        uint64_t x = k[i];
        uint32_t y = o[i];
        size_t j = i;
        for (; j > 0 && k[j - 1] > x; j--) {
            k[j] = k[j - 1];
            o[j] = o[j - 1];
        }
        k[j] = x;
        o[j] = y;
    }
}

/* A bucket of m (key, index) pairs sorted stably: one MSD pass on the highest bits that
 * differ inside it into ks/os (in index order inside each sub-bucket), copied back, then each
 * sub-bucket the same way; runs of at most 32 by insertion. Where an LSD radix of the bucket
 * made a pass (and a count table) for each of the ~6 random low bytes of a double. ks/os:
 * scratch of at least m. Each level consumes >= 8 bits: depth <= 8. */
/* Digit widths of the MSD passes: a first pass into 1024 buckets keeps its write streams
 * in the cache (65536 of them missed on every write: 9 of the 18 ms on 10^6 values), then
 * 11-bit passes on buckets above SUB_WIDE values and 8-bit ones below (a count table the size
 * of the bucket or smaller). The widths never change the (stable) result. */
#define FIRST_BITS 10
#define SUB_WIDE 1024

static void msd_bucket(uint64_t *k, uint32_t *o, size_t m, uint64_t *ks, uint32_t *os)
{
    if (m <= 32) {
        insertion_u64(k, o, m);
        return;
    }
    uint64_t andv = ~0ull, orv = 0;
    for (size_t i = 0; i < m; i++) {
        andv &= k[i];
        orv |= k[i];
    }
    uint64_t diff = andv ^ orv;
    if (!diff) return;   /* all equal: the index order is the stable order */
    int top = 63 - __builtin_clzll(diff), bits = m > SUB_WIDE ? 11 : 8;
    int sh = top >= bits - 1 ? top - (bits - 1) : 0;
    size_t nb = (size_t)1 << bits, mask = nb - 1;
    uint32_t cnt[2049], st[2049];   /* m < 2^32 (sample indices are 32-bit) */
    memset(cnt, 0, (nb + 1) * sizeof *cnt);
    for (size_t i = 0; i < m; i++) cnt[((k[i] >> sh) & mask) + 1]++;
    for (size_t b = 1; b <= nb; b++) cnt[b] += cnt[b - 1];
    memcpy(st, cnt, (nb + 1) * sizeof *st);
    for (size_t i = 0; i < m; i++) {
        uint32_t at = cnt[(k[i] >> sh) & mask]++;
        ks[at] = k[i];
        os[at] = o[i];
    }
    memcpy(k, ks, m * sizeof *k);
    memcpy(o, os, m * sizeof *o);
    for (size_t b = 0; b < nb; b++) {
        size_t a = st[b], z = st[b + 1];
        if (z - a > 1) msd_bucket(k + a, o + a, z - a, ks + a, os + a);
    }
}

/* Sorts the buckets listed in s->by_size from index s->next on, claimed one at a time, with
 * the scratch ks, os (of s->big each); every finished bucket is counted under s->m (the
 * thread that sorts waits for them all). Any thread; the buckets are disjoint, so the order is
 * the same whoever sorts which. */
static void sort_claimed(cs_sort_share *s, uint64_t *ks, uint32_t *os)
{
    for (;;) {
        size_t i = atomic_fetch_add(&s->next, 1);
        if (i >= s->work) break;
        size_t b = s->by_size[i], a = s->start[b], m = s->start[b + 1] - a;
        msd_bucket(s->k + a, s->o + a, m, ks, os);
        pthread_mutex_lock(&s->m);
        if (++s->done == s->work) pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->m);
    }
}

/* The scratch of a bucket sort for buckets of up to `big` pairs (none below 33): 0, or -1. */
static int scratch(size_t big, uint64_t **ks, uint32_t **os)
{
    *ks = big > 32 ? malloc(big * sizeof **ks) : NULL;
    *os = big > 32 ? malloc(big * sizeof **os) : NULL;
    if (big > 32 && (!*ks || !*os)) {
        free(*ks);
        free(*os);
        return -1;
    }
    return 0;
}

void cs_sort_share_init(cs_sort_share *s)
{
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->m, NULL);
    pthread_cond_init(&s->cv, NULL);
    atomic_init(&s->next, 0);
}

void cs_sort_share_close(cs_sort_share *s)
{
    pthread_mutex_lock(&s->m);
    s->state = 2;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->m);
}

void cs_sort_share_destroy(cs_sort_share *s)
{
    pthread_mutex_destroy(&s->m);
    pthread_cond_destroy(&s->cv);
}

void cs_sort_help(cs_sort_share *s)
{
    pthread_mutex_lock(&s->m);
    while (s->state == 0) pthread_cond_wait(&s->cv, &s->m);
    int open = s->state == 1;
    pthread_mutex_unlock(&s->m);
    uint64_t *ks;
    uint32_t *os;
    if (!open || scratch(s->big, &ks, &os)) return;   /* no scratch: the sorting thread does it all */
    sort_claimed(s, ks, os);
    free(ks);
    free(os);
}

/* Bucket ids by size, largest first, ties by id (so the list is the same every time): the
 * claims then end with small buckets, and no thread is left with a large one alone at the
 * end. Only buckets of two or more pairs (the others are sorted already): *n of them.
 * 0, or -1 out of memory. */
typedef struct { size_t size; uint32_t id; } bucket_size;

static int larger_first(const void *a, const void *b)
{
    const bucket_size *x = a, *y = b;
    if (x->size != y->size) return x->size < y->size ? 1 : -1;
    return (x->id > y->id) - (x->id < y->id);
}

static int by_size(const size_t *start, size_t nb, uint32_t *ids, size_t *work)
{
    bucket_size *bs = malloc((nb ? nb : 1) * sizeof *bs);
    if (!bs) return -1;
    size_t n = 0;
    for (size_t b = 0; b < nb; b++)
        if (start[b + 1] - start[b] > 1) bs[n++] = (bucket_size){start[b + 1] - start[b], (uint32_t)b};
    qsort(bs, n, sizeof *bs, larger_first);
    for (size_t i = 0; i < n; i++) ids[i] = bs[i].id;
    free(bs);
    *work = n;
    return 0;
}

/* The keys and indices in stable key order, in 12 bytes a value (plus the largest bucket's)
 * where an LSD radix of the whole array needs 24 (keys and indices twice): one MSD pass on the
 * FIRST_BITS most significant bits that differ between the keys puts (key, index) pairs in
 * their buckets, in index order inside each (stable), then each bucket is sorted on the rest
 * by msd_bucket: here, or with sh (not NULL) also by a thread in cs_sort_help, the buckets
 * claimed one at a time. The same permutation as any stable sort. */
static int order_msd(const double *v, size_t n, uint64_t *k, uint32_t *o, cs_sort_share *sh)
{
    uint64_t andv = ~0ull, orv = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t x = cs_sort_key(v[i]);
        andv &= x;
        orv |= x;
    }
    uint64_t diff = andv ^ orv;
    int top = 63;
    while (top > 0 && !((diff >> top) & 1u)) top--;
    int sh_bits = top >= FIRST_BITS - 1 ? top - (FIRST_BITS - 1) : 0;
    size_t nb = (size_t)1 << FIRST_BITS, mask = nb - 1;
    size_t *cnt = calloc(nb + 1, sizeof *cnt), *start = malloc((nb + 1) * sizeof *start);
    uint32_t *ids = malloc(nb * sizeof *ids);
    if (!cnt || !start || !ids) {
        free(cnt);
        free(start);
        free(ids);
        return -1;
    }
    for (size_t i = 0; i < n; i++) cnt[((cs_sort_key(v[i]) >> sh_bits) & mask) + 1]++;
    size_t big = 0;
    for (size_t b = 1; b <= nb; b++) {
        if (cnt[b] > big) big = cnt[b];
        cnt[b] += cnt[b - 1];
    }
    memcpy(start, cnt, (nb + 1) * sizeof *start);
    /* cnt[b] is now the start of bucket b; the scatter advances it to the bucket's end */
    for (size_t i = 0; i < n; i++) {
        uint64_t x = cs_sort_key(v[i]);
        size_t at = cnt[(x >> sh_bits) & mask]++;
        k[at] = x;
        o[at] = (uint32_t)i;
    }
    free(cnt);
    uint64_t *ks;
    uint32_t *os;
    size_t work;
    if (by_size(start, nb, ids, &work) || scratch(big, &ks, &os)) {
        free(start);
        free(ids);
        return -1;   /* (cs_evaluate closes sh before it waits for its helper) */
    }
    cs_sort_share local;
    cs_sort_share *s = sh ? sh : &local;
    if (!sh) cs_sort_share_init(s);
    pthread_mutex_lock(&s->m);
    s->k = k;
    s->o = o;
    s->start = start;
    s->by_size = ids;
    s->big = big;
    s->work = work;
    s->done = 0;
    atomic_store(&s->next, 0);
    s->state = 1;   /* open: a helper may claim buckets from now on */
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->m);
    sort_claimed(s, ks, os);
    free(ks);
    free(os);
    pthread_mutex_lock(&s->m);
    while (s->done < s->work) pthread_cond_wait(&s->cv, &s->m);   /* a helper's last bucket */
    s->state = 2;   /* closed: the arrays below are about to be freed */
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->m);
    if (!sh) cs_sort_share_destroy(s);
    free(start);
    free(ids);
    return 0;
}

/* o = the stable order of v, with k (n keys) as scratch: k holds the sorted keys after. */
static int order_keys(const double *v, size_t n, uint32_t *o, uint64_t *k, cs_sort_share *sh)
{
    /* stable, so ties keep row order (equal-mass bins: "ties by row order") */
    if (n < 65536) {
        for (size_t i = 0; i < n; i++) {
            k[i] = cs_sort_key(v[i]);
            o[i] = (uint32_t)i;
        }
        return cs_sort_u64(k, o, n);
    }
    return order_msd(v, n, k, o, sh);
}

int cs_sort_order(const double *v, size_t n, uint32_t **order, uint32_t **rank)
{
    size_t nn = n ? n : 1;
    uint32_t *o = malloc(nn * sizeof *o), *r = NULL;
    uint64_t *k = malloc(nn * sizeof *k);
    if (!o || !k || order_keys(v, n, o, k, NULL) != 0) goto fail;
    free(k);
    k = NULL;
    /* the inverse only when asked for, and only once the keys are gone (peak memory) */
    if (rank) {
        if (!(r = malloc(nn * sizeof *r))) goto fail;
        for (size_t i = 0; i < n; i++) r[o[i]] = (uint32_t)i;
        *rank = r;
    }
    *order = o;
    return 0;
fail:
    free(o);
    free(r);
    free(k);
    return -1;
}

int cs_sort_order_values(const double *v, size_t n, uint32_t **order, double *sorted)
{
    return cs_sort_order_values_shared(v, n, order, sorted, NULL);
}

int cs_sort_order_values_shared(const double *v, size_t n, uint32_t **order, double *sorted,
                                cs_sort_share *sh)
{
    uint32_t *o = malloc((n ? n : 1) * sizeof *o);
    /* the caller's block is the keys' scratch (8 bytes each, as a double), then the keys are
     * turned back into the doubles they came from: a bijection but for -0, which has +0's
     * key, so a zero is read from v itself */
    uint64_t *k = (uint64_t *)(void *)sorted;
    if (!o || order_keys(v, n, o, k, sh) != 0) {
        free(o);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t b = k[i];
        b = (b >> 63) ? (b & ~0x8000000000000000ull) : ~b;
        double x;
        memcpy(&x, &b, sizeof x);
        if (x == 0) x = v[o[i]];
        memcpy(&sorted[i], &x, sizeof x);
    }
    *order = o;
    return 0;
}

static int cmp_value(uint32_t a, uint32_t b, const void *ctx)
{
    const double *v = ctx;
    return (v[a] > v[b]) - (v[a] < v[b]);
}

void cs_sort_doubles(double *a, size_t n)
{
    if (n < 2) return;
    uint32_t *ix = malloc(n * sizeof *ix);
    double *copy = malloc(n * sizeof *copy);
    int done = 0;
    if (ix && copy) {
        for (size_t i = 0; i < n; i++) ix[i] = (uint32_t)i;
        memcpy(copy, a, n * sizeof *a);
        if (cs_sort_by(ix, n, cmp_value, copy) == 0) {
            for (size_t i = 0; i < n; i++) a[i] = copy[ix[i]];
            done = 1;
        }
    }
    free(ix);
    free(copy);
    if (done) return;
    /* out of memory: the same stable order by insertion, in place (slow, never wrong) */
    for (size_t i = 1; i < n; i++) {
        double x = a[i];
        size_t j = i;
        while (j > 0 && a[j - 1] > x) { a[j] = a[j - 1]; j--; }
        a[j] = x;
    }
}

/* Descending by value: insertion sort for short runs, quicksort otherwise. */
static void quick_desc(double *a, size_t n)
{
    while (n > 24) {
        double x = a[0], y = a[n / 2], z = a[n - 1];
        double piv = (x > y) ? ((y > z) ? y : (x > z ? z : x)) : ((x > z) ? x : (y > z ? z : y));
        ptrdiff_t i = -1, j = (ptrdiff_t)n;
        for (;;) {
            do i++; while (a[i] > piv);
            do j--; while (a[j] < piv);
            if (i >= j) break;
            double t = a[i]; a[i] = a[j]; a[j] = t;
        }
        if (j + 1 <= 0 || (size_t)(j + 1) >= n) break;   /* cannot happen; insertion-sort it */
        /* recurse on the smaller side */
        size_t left = (size_t)j + 1;
        if (left < n - left) { quick_desc(a, left); a += left; n -= left; }
        else { quick_desc(a + left, n - left); n = left; }
    }
    for (size_t i = 1; i < n; i++) {
        double x = a[i];
        size_t j = i;
        while (j > 0 && a[j - 1] < x) { a[j] = a[j - 1]; j--; }
        a[j] = x;
    }
}

/* Descending by an LSD radix sort on the top 32 bits of the order-preserving key (4 passes
 * of 8 bits, constant digits skipped), then an insertion pass that orders the rare values
 * equal in those bits: about 5x faster than quicksort for rows of 1000 classes. */
static void radix_desc(double *a, size_t n, uint32_t *ka, uint32_t *kb, double *b)
{
    uint32_t andv = ~0u, orv = 0;
    for (size_t i = 0; i < n; i++) {
        ka[i] = ~(uint32_t)(cs_sort_key(a[i]) >> 32);   /* descending */
        andv &= ka[i];
        orv |= ka[i];
    }
    double *va = a, *vb = b;
    for (int sh = 0; sh < 32; sh += 8) {
        if ((((andv ^ orv) >> sh) & 0xffu) == 0) continue;
        size_t cnt[256] = {0};
        for (size_t i = 0; i < n; i++) cnt[(ka[i] >> sh) & 0xffu]++;
        size_t sum = 0;
        for (int d = 0; d < 256; d++) { size_t c = cnt[d]; cnt[d] = sum; sum += c; }
        for (size_t i = 0; i < n; i++) {
            size_t o = cnt[(ka[i] >> sh) & 0xffu]++;
            kb[o] = ka[i];
            vb[o] = va[i];
        }
        uint32_t *tk = ka; ka = kb; kb = tk;
        double *tv = va; va = vb; vb = tv;
    }
    if (va != a) memcpy(a, va, n * sizeof *a);
    for (size_t i = 1; i < n; i++) {
        double x = a[i];
        size_t j = i;
        while (j > 0 && a[j - 1] < x) { a[j] = a[j - 1]; j--; }
        a[j] = x;
    }
}

void cs_sort_doubles_desc(double *a, size_t n, uint32_t *ka, uint32_t *kb, double *b)
{
    if (ka && kb && b && n > 64) radix_desc(a, n, ka, kb, b);
    else quick_desc(a, n);
}

/* Four copies of each value are stored whatever its count while four places are left (the
 * places past its count are overwritten by the next values), the rare count above four
 * finished by a loop; the last places by the plain loop. */
void cs_sort_expand_counts(const uint32_t *cnt, size_t n, uint32_t *out, size_t k)
{
    size_t i = 0, j = 0;
    for (; i < n && j + 4 <= k; i++) {
        uint32_t c = cnt[i], v = (uint32_t)i;
        out[j] = v;
        out[j + 1] = v;
        out[j + 2] = v;
        out[j + 3] = v;
        for (uint32_t q = 4; q < c; q++) out[j + q] = v;
        j += c;
    }
    for (; i < n; i++)
        for (uint32_t c = cnt[i]; c > 0; c--) out[j++] = (uint32_t)i;
}
