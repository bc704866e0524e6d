/* Binning helpers: uniform edges, equal-mass group boundaries and the sorts behind them. */
#include "mx.h"

#include <stdlib.h>
#include <string.h>

void cs_mx_edges(double *e, int M)
{
    for (int i = 0; i <= M; i++) e[i] = cs_ubin_edge(i, M);   /* the rule's edges (calscope/ubin.h) */
}

size_t cs_mx_split_start(size_t N, size_t M, size_t g)
{
    size_t q = N / M, r = N % M;
    return g * q + (g < r ? g : r);
}

/* LSD radix sort with 11-bit digits; only as many passes as `limit` needs. */
int cs_mx_radix_sort(uint32_t *keys, uint32_t *vals, size_t n, uint32_t limit)
{
    if (n < 2) return 0;
    uint32_t *k2 = malloc(n * sizeof *k2);
    uint32_t *v2 = vals ? malloc(n * sizeof *v2) : NULL;
    if (!k2 || (vals && !v2)) { free(k2); free(v2); return -1; }
    uint32_t *ka = keys, *kb = k2, *va = vals, *vb = v2;
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
        for (size_t i = 0; i < n; i++) {
            size_t o = cnt[(ka[i] >> sh) & 2047u]++;
            kb[o] = ka[i];
            if (va) vb[o] = va[i];
        }
        uint32_t *t = ka; ka = kb; kb = t;
        t = va; va = vb; vb = t;
    }
    if (ka != keys) {
        memcpy(keys, ka, n * sizeof *keys);
        if (vals) memcpy(vals, va, n * sizeof *vals);
    }
    free(k2);
    free(v2);
    return 0;
}

int cs_mx_radix_sort_keys(uint32_t *keys, size_t n, uint32_t limit)
{
    return cs_mx_radix_sort(keys, NULL, n, limit);
}

static void msort_rec(uint32_t *a, uint32_t *tmp, size_t n, cs_mx_cmp cmp, const void *ctx)
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

int cs_mx_msort(uint32_t *a, size_t n, cs_mx_cmp cmp, const void *ctx)
{
    if (n < 2) return 0;
    uint32_t *tmp = malloc((n / 2 + 1) * sizeof *tmp);
    if (!tmp) return -1;
    msort_rec(a, tmp, n, cmp, ctx);
    free(tmp);
    return 0;
}

/* Order-preserving map of a double to an unsigned key (sign-magnitude to two's order). */
static inline uint64_t dkey(double x)
{
    uint64_t b;
    if (x == 0) x = 0.0;   /* -0 sorts with +0 */
    memcpy(&b, &x, sizeof b);
    return (b >> 63) ? ~b : (b | 0x8000000000000000ull);
}

int cs_mx_order(const double *v, size_t n, uint32_t **order, uint32_t **rank)
{
    size_t nn = n ? n : 1;
    uint32_t *o = malloc(nn * sizeof *o), *r = malloc(nn * sizeof *r);
    uint64_t *k = malloc(nn * sizeof *k), *k2 = malloc(nn * sizeof *k2);
    if (!o || !r || !k || !k2) { free(o); free(r); free(k); free(k2); return -1; }
    /* LSD radix sort on 16-bit digits: stable, so ties keep row order (SPEC: "ties by row
     * order"); digits that are the same for every key are skipped. */
    uint64_t andv = ~0ull, orv = 0;
    for (size_t i = 0; i < n; i++) {
        k[i] = dkey(v[i]);
        o[i] = (uint32_t)i;
        andv &= k[i];
        orv |= k[i];
    }
    uint32_t *o2 = r;   /* r doubles as the scratch buffer until the end */
    size_t *cnt = malloc(65536 * sizeof *cnt);
    if (!cnt) { free(o); free(r); free(k); free(k2); return -1; }
    for (int sh = 0; sh < 64; sh += 16) {
        if ((((andv ^ orv) >> sh) & 0xffffu) == 0) continue;
        memset(cnt, 0, 65536 * sizeof *cnt);
        for (size_t i = 0; i < n; i++) cnt[(k[i] >> sh) & 0xffffu]++;
        size_t sum = 0;
        for (size_t b = 0; b < 65536; b++) { size_t c = cnt[b]; cnt[b] = sum; sum += c; }
        for (size_t i = 0; i < n; i++) {
            size_t p = cnt[(k[i] >> sh) & 0xffffu]++;
            k2[p] = k[i];
            o2[p] = o[i];
        }
        uint64_t *tk = k; k = k2; k2 = tk;
        uint32_t *to = o; o = o2; o2 = to;
    }
    free(cnt);
    free(k);
    free(k2);
    /* o holds the order; o2 is the other buffer, reused for the ranks */
    for (size_t i = 0; i < n; i++) o2[o[i]] = (uint32_t)i;
    *order = o;
    *rank = o2;
    return 0;
}
