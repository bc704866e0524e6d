/* The engine's sorts (engine/sort/sort.c) against a stable insertion sort written here: the
 * same permutation (ties keep their input order), for small inputs and for inputs large enough
 * to take the 16-bit digit path; -0 sorts with +0 in input order. */
#include "support/cs_test.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "engine/sort/sort.h"

static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Reference: stable insertion sort of (key, val) pairs. */
static void ref_sort_u64(uint64_t *k, uint32_t *v, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        uint64_t x = k[i];
        uint32_t y = v[i];
        size_t j = i;
        while (j > 0 && k[j - 1] > x) { k[j] = k[j - 1]; v[j] = v[j - 1]; j--; }
        k[j] = x;
        v[j] = y;
    }
}

static void test_u64_stable(void **state)
{
    (void)state;
    uint64_t seed = 88172645463325252ull;
    static const size_t sizes[] = { 0, 1, 2, 17, 300, 70000 };
    for (size_t t = 0; t < sizeof sizes / sizeof sizes[0]; t++) {
        size_t n = sizes[t];
        uint64_t *k = malloc((n + 1) * sizeof *k), *rk = malloc((n + 1) * sizeof *rk);
        uint32_t *v = malloc((n + 1) * sizeof *v), *rv = malloc((n + 1) * sizeof *rv);
        assert_true(k && rk && v && rv);
        for (size_t i = 0; i < n; i++) {
            /* few distinct keys spread over high and low digits: many ties */
            uint64_t r = next(&seed) % 50;
            k[i] = rk[i] = (r << 40) | (r * 7 % 13);
            v[i] = rv[i] = (uint32_t)i;
        }
        assert_int_equal(cs_sort_u64(k, v, n), 0);
        if (n <= 300) {
            ref_sort_u64(rk, rv, n);
            assert_memory_equal(k, rk, n * sizeof *k);
            assert_memory_equal(v, rv, n * sizeof *v);
        } else {
            for (size_t i = 1; i < n; i++) {   /* sorted, ties in input order */
                assert_true(k[i - 1] <= k[i]);
                if (k[i - 1] == k[i]) assert_true(v[i - 1] < v[i]);
            }
        }
        free(k); free(rk); free(v); free(rv);
    }
}

static void test_u32_and_order(void **state)
{
    (void)state;
    uint32_t keys[] = { 9, 3, 3000, 0, 3, 70000, 9, 1 };
    assert_int_equal(cs_sort_u32(keys, 8, 70001), 0);
    const uint32_t want[] = { 0, 1, 3, 3, 9, 9, 3000, 70000 };
    assert_memory_equal(keys, want, sizeof want);

    /* stable order of doubles (ties and -0/+0 by index) and its inverse */
    const double v[] = { 0.5, 0.25, -0.0, 0.5, 0.0, 1.0, 0.25, -1.0 };
    uint32_t *o, *rk;
    assert_int_equal(cs_sort_order(v, 8, &o, &rk), 0);
    const uint32_t want_o[] = { 7, 2, 4, 1, 6, 0, 3, 5 };
    for (int i = 0; i < 8; i++) {
        assert_int_equal(o[i], want_o[i]);
        assert_int_equal(rk[o[i]], i);
    }
    free(o);
    free(rk);
}

static void check_order(const double *v, size_t n);

/* Below the bucket pass's 65536 (the LSD path): the order and the values from the keys. */
static void test_order_small_values(void **state)
{
    (void)state;
    const double v[] = { 0.5, 0.25, -0.0, 0.5, 0.0, 1.0, 0.25, -1.0, -0.0, 1e-310, -1e300 };
    check_order(v, sizeof v / sizeof v[0]);
    check_order(v, 1);
}

static int by_tens(uint32_t a, uint32_t b, const void *ctx)
{
    (void)ctx;
    return (int)(a / 10) - (int)(b / 10);
}

static void test_by_comparator_stable(void **state)
{
    (void)state;
    uint32_t a[40];
    for (uint32_t i = 0; i < 40; i++) a[i] = (i * 17) % 40;   /* a permutation of 0..39 */
    uint32_t ref[40];
    memcpy(ref, a, sizeof a);
    for (size_t i = 1; i < 40; i++) {   /* stable insertion sort by tens */
        uint32_t x = ref[i];
        size_t j = i;
        while (j > 0 && ref[j - 1] / 10 > x / 10) { ref[j] = ref[j - 1]; j--; }
        ref[j] = x;
    }
    assert_int_equal(cs_sort_by(a, 40, by_tens, NULL), 0);
    assert_memory_equal(a, ref, sizeof a);
}

static void test_doubles(void **state)
{
    (void)state;
    double a[] = { 0.3, -0.0, 0.1, 0.0, 0.3, -2.5, 1e-300 };
    cs_sort_doubles(a, 7);
    const double want[] = { -2.5, -0.0, 0.0, 1e-300, 0.1, 0.3, 0.3 };
    for (int i = 0; i < 7; i++) assert_true(memcmp(&a[i], &want[i], sizeof a[i]) == 0);

    /* descending rows: both paths (comparison and radix, above 64 values) give the sorted row */
    uint64_t seed = 99;
    for (size_t n = 5; n <= 1000; n = n * 3 + 1) {
        double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *b = malloc(n * sizeof *b);
        uint32_t *ka = malloc(n * sizeof *ka), *kb = malloc(n * sizeof *kb);
        assert_true(x && y && b && ka && kb);
        for (size_t i = 0; i < n; i++) x[i] = y[i] = (double)(next(&seed) % 97) / 96.0;
        cs_sort_doubles_desc(x, n, ka, kb, b);
        cs_sort_doubles_desc(y, n, NULL, NULL, NULL);
        for (size_t i = 1; i < n; i++) assert_true(x[i - 1] >= x[i]);
        assert_memory_equal(x, y, n * sizeof *x);
        free(x); free(y); free(b); free(ka); free(kb);
    }
}

/* cs_sort_order on inputs large enough for its bucket pass (>= 65536): the order is sorted
 * with ties in input order, rank is its inverse, and rank NULL gives the same order alone.
 * Values: many ties, -0 and +0, negatives, tiny and huge magnitudes; and a skewed input whose
 * values nearly all fall into one bucket of the first pass. */
static void check_order(const double *v, size_t n)
{
    uint32_t *o = NULL, *r = NULL, *o2 = NULL;
    assert_int_equal(cs_sort_order(v, n, &o, &r), 0);
    assert_int_equal(cs_sort_order(v, n, &o2, NULL), 0);
    assert_memory_equal(o, o2, n * sizeof *o);
    for (size_t i = 0; i < n; i++) assert_int_equal(r[o[i]], i);
    for (size_t i = 1; i < n; i++) {
        double a = v[o[i - 1]] == 0 ? 0.0 : v[o[i - 1]], b = v[o[i]] == 0 ? 0.0 : v[o[i]];
        assert_true(a <= b);
        if (a == b) assert_true(o[i - 1] < o[i]);
    }
    /* the values in that order from the sort's keys: the same order, each value bit for bit
     * (-0.0 and +0.0 keep their signs) */
    uint32_t *o3 = NULL;
    double *sv = malloc((n ? n : 1) * sizeof *sv);
    assert_non_null(sv);
    assert_int_equal(cs_sort_order_values(v, n, &o3, sv), 0);
    assert_memory_equal(o, o3, n * sizeof *o);
    for (size_t i = 0; i < n; i++) assert_memory_equal(&sv[i], &v[o[i]], sizeof *sv);
    free(sv);
    free(o3);
    free(o);
    free(r);
    free(o2);
}

static void test_order_large(void **state)
{
    (void)state;
    uint64_t seed = 2463534242ull;
    size_t n = 200000;
    double *v = malloc(n * sizeof *v);
    assert_non_null(v);
    for (size_t i = 0; i < n; i++) {
        uint64_t r = next(&seed);
        switch (r % 6) {
        case 0: v[i] = (double)(r % 1000) / 1000.0; break;          /* ties */
        case 1: v[i] = (r & 64) ? -0.0 : 0.0; break;
        case 2: v[i] = -(double)(r % 777) / 7.0; break;
        case 3: v[i] = ldexp((double)(r >> 11), -1000 - (int)(r % 40)); break;
        case 4: v[i] = (double)(r >> 11) * 1e200; break;
        default: v[i] = (double)(r >> 11) * 0x1.0p-53; break;     /* distinct in [0, 1) */
        }
    }
    check_order(v, n);
    /* skewed: everything in [0.9999, 1) but one 0 (the first pass's digit is the exponent) */
    for (size_t i = 0; i < n; i++) v[i] = 0.9999 + (double)(next(&seed) % 100000) * 1e-9;
    v[n / 2] = 0.0;
    check_order(v, n);
    /* a top-1 confidence's shape: crowded near 1 (buckets of every size the MSD passes
     * treat differently: > 1024, 33..1024, <= 32), random low mantissa bits, some ties */
    for (size_t i = 0; i < n; i++) {
        uint64_t r = next(&seed);
        double u = (double)(r >> 11) * 0x1.0p-53;
        v[i] = (r & 7) == 0 ? 1.0 : 1.0 - 0.9 * u * u * u;
    }
    check_order(v, n);
    free(v);
}

/* The sort with a helper (cs_sort_share): a second thread that waits in cs_sort_help and
 * sorts the buckets it claims gives the order and values of the sort alone, bit for bit; the
 * helper is seen to take buckets (it claims before the sorting thread is done with its first
 * one on inputs this large, or not: either way the same result), and a helper that arrives
 * after the sort, or on a share closed without a sort, returns. */
typedef struct { cs_sort_share *sh; } helper_arg;
static void *helper(void *a)
{
    cs_sort_help(((helper_arg *)a)->sh);
    return NULL;
}

static void test_order_shared(void **state)
{
    (void)state;
    uint64_t seed = 99991ull;
    size_t n = 300000;
    double *v = malloc(n * sizeof *v), *s1 = malloc(n * sizeof *s1), *s2 = malloc(n * sizeof *s2);
    assert_non_null(v);
    assert_non_null(s1);
    assert_non_null(s2);
    for (size_t i = 0; i < n; i++) {
        uint64_t r = next(&seed);
        double u = (double)(r >> 11) * 0x1.0p-53;
        v[i] = (r & 7) == 0 ? 1.0 : (r & 15) == 1 ? -0.0 : 1.0 - 0.9 * u * u * u;
    }
    uint32_t *o1 = NULL, *o2 = NULL;
    assert_int_equal(cs_sort_order_values(v, n, &o1, s1), 0);
    for (int round = 0; round < 3; round++) {
        cs_sort_share sh;
        cs_sort_share_init(&sh);
        helper_arg a = {&sh};
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, helper, &a), 0);
        assert_int_equal(cs_sort_order_values_shared(v, n, &o2, s2, &sh), 0);
        pthread_join(t, NULL);
        assert_memory_equal(o1, o2, n * sizeof *o1);
        assert_memory_equal(s1, s2, n * sizeof *s1);
        assert_int_equal(sh.state, 2);
        assert_true(sh.done == sh.work && sh.work > 0);
        /* after the sort: a late helper returns at once */
        cs_sort_help(&sh);
        cs_sort_share_destroy(&sh);
        free(o2);
        o2 = NULL;
    }
    /* closed without a sort: the waiting helper returns */
    cs_sort_share sh;
    cs_sort_share_init(&sh);
    helper_arg a = {&sh};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, helper, &a), 0);
    cs_sort_share_close(&sh);
    pthread_join(t, NULL);
    cs_sort_share_destroy(&sh);
    free(o1);
    free(v);
    free(s1);
    free(s2);
}

/* The expansion of counts: each i repeated cnt[i] times in ascending order, checked place by
 * place against a list built by hand, on counts like a bootstrap draw's (0..3, now and then
 * 9 or 40), on runs of zeros at either end, and on totals below four; the places past k are
 * left as they were (a guard region of 8). */
static void test_expand_counts(void **state)
{
    (void)state;
    uint64_t r = 99;
    enum { N = 3000, G = 8 };
    uint32_t *cnt = malloc(N * sizeof *cnt), *want = malloc(60 * N * sizeof *want);
    uint32_t *out = malloc((60 * N + G) * sizeof *out);
    assert_non_null(cnt);
    assert_non_null(want);
    assert_non_null(out);
    for (int t = 0; t < 40; t++) {
        size_t n = t < 10 ? (size_t)t + 1 : N - (size_t)t;
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            uint64_t u = next(&r) % 64;
            cnt[i] = u < 24 ? 0 : u < 46 ? 1 : u < 56 ? 2 : u < 61 ? 3 : u < 63 ? 9 : 40;
            if (t % 3 == 1 && (i < 20 || i + 20 >= n)) cnt[i] = 0;   /* zeros at both ends */
            if (t < 10 && i > 0) cnt[i] = 0;   /* one count: totals 0..40 */
            if (t < 10 && i == 0) cnt[i] = (uint32_t)t;
            for (uint32_t c = 0; c < cnt[i]; c++) want[k++] = (uint32_t)i;
        }
        for (size_t g = 0; g < k + G; g++) out[g] = 0xdeadbeefu;
        cs_sort_expand_counts(cnt, n, out, k);
        if (k) assert_memory_equal(out, want, k * sizeof *out);
        for (size_t g = k; g < k + G; g++) assert_int_equal(out[g], 0xdeadbeefu);
    }
    /* two small counts and a total of 5: four places left only at the start */
    uint32_t c2[] = {2, 0, 3};
    uint32_t w2[] = {0, 0, 2, 2, 2};
    for (size_t g = 0; g < 5 + G; g++) out[g] = 0xdeadbeefu;
    cs_sort_expand_counts(c2, 3, out, 5);
    assert_memory_equal(out, w2, sizeof w2);
    for (size_t g = 5; g < 5 + G; g++) assert_int_equal(out[g], 0xdeadbeefu);
    free(cnt);
    free(want);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_u64_stable),
        cmocka_unit_test(test_u32_and_order),
        cmocka_unit_test(test_by_comparator_stable),
        cmocka_unit_test(test_doubles),
        cmocka_unit_test(test_order_small_values),
        cmocka_unit_test(test_order_large),
        cmocka_unit_test(test_order_shared),
        cmocka_unit_test(test_expand_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
