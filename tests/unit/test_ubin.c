/* The one uniform-bin rule (engine/num/ubin.h): bin i is (i/M, (i+1)/M], decided on the doubles.
 * Values on an edge are worked by hand below (Python: x*M and i/M printed with repr). */
#include "support/cs_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "calscope/metrics.h"
#include "engine/num/cpu.h"
#include "engine/num/ubin.h"

/* Edges where x*M rounds to the wrong side, so a rule written as ceil(x*M)-1 without the
 * correction on the edges (RECE-M's fallback before) puts x in the wrong bin:
 *   M = 100, x = 0.07: 0.07 == 7/100 as doubles (an edge: right-closed, bin 6), but
 *     0.07*100 = 7.000000000000001, ceil - 1 = 7.
 *   M = 3, x = nextafter(1/3, 2) = 0.33333333333333337 > 1/3 (bin 1), but x*3 = 1.0 -> 0.
 *   M = 20, x = 0.8500000000000001 = nextafter(17/20, 2) (bin 17), x*20 = 17.0 -> 16. */
static void test_edges_by_hand(void **state)
{
    (void)state;
    assert_int_equal(cs_ubin(0.07, 100), 6);
    assert_int_equal(cs_ubin(nextafter(0.07, 1), 100), 7);
    assert_int_equal(cs_ubin(nextafter(1.0 / 3.0, 2), 3), 1);
    assert_int_equal(cs_ubin(1.0 / 3.0, 3), 0);
    assert_int_equal(cs_ubin(0.8500000000000001, 20), 17);
    assert_int_equal(cs_ubin(0.85, 20), 16);
    /* 0 and below, NaN: bin 0; 1 and above: the last bin; a single bin holds everything */
    assert_int_equal(cs_ubin(0.0, 10), 0);
    assert_int_equal(cs_ubin(-0.5, 10), 0);
    assert_int_equal(cs_ubin(NAN, 10), 0);
    assert_int_equal(cs_ubin(1.0, 10), 9);
    assert_int_equal(cs_ubin(1.5, 10), 9);
    assert_int_equal(cs_ubin(0.99, 1), 0);
}

/* With a table of edges and without it, every edge and its two neighbours land in the same
 * bin, and that bin is the b with e_b < x <= e_{b+1} (checked by a linear scan). */
static void test_table_and_scan_agree(void **state)
{
    (void)state;
    for (int M = 1; M <= 200; M++) {
        double *e = malloc((size_t)(M + 1) * sizeof *e);
        assert_non_null(e);
        for (int i = 0; i <= M; i++) e[i] = cs_ubin_edge(i, M);
        for (int i = 0; i <= M; i++) {
            double xs[3] = { e[i], nextafter(e[i], -1), nextafter(e[i], 2) };
            for (int k = 0; k < 3; k++) {
                double x = xs[k];
                int scan = 0;
                while (scan < M - 1 && x > (double)(scan + 1) / (double)M) scan++;
                assert_int_equal(cs_ubin(x, M), scan);
                assert_int_equal(cs_ubin_at(x, e, M), scan);
            }
        }
        free(e);
    }
}

/* cs_ubin_at2 bins two values and cs_ubin_at4 four without a branch (a clamped guess and one
 * step down); each lane must give the bin of cs_ubin_at and cs_ubin (edges in a table, on the
 * fly) and of the definition e_b < x <= e_{b+1}, for every edge of every M to 1000 (and a few
 * larger M) and the 4 doubles either side, for 0, 1, -0, below 0, above 1, infinities, NaN,
 * subnormals and random values; each value is paired with the ones checked before it (lanes
 * that differ). */
#if defined(__GNUC__) && defined(__x86_64__)
/* cs_ubin_at4's four lanes, where the CPU has AVX2 (else cs_ubin_at's bins). */
__attribute__((target("avx2"))) static void bins4_avx2(const double *x, const double *e, int M, int *b)
{
    _mm_storeu_si128((__m128i *)(void *)b, cs_ubin_at4(_mm256_loadu_pd(x), e, M));
}
static void bins4(const double *x, const double *e, int M, int *b)
{
    static int avx2 = -1;
    if (avx2 < 0) avx2 = (cs_cpu_features() & CS_CPU_AVX2) != 0;
    if (avx2) bins4_avx2(x, e, M, b);
    else
        for (int i = 0; i < 4; i++) b[i] = cs_ubin_at(x[i], e, M);
}
#endif

static void check_bin(double x, const double *e, int M)
{
    static double last = 0.5;
#if defined(__GNUC__) && defined(__x86_64__)
    /* four lanes: x in each lane, beside the three values checked before it */
    static double before[3] = { 0.25, 0.75, 0.5 };
    for (int lane = 0; lane < 4; lane++) {
        double x4[4];
        int b4[4];
        for (int i = 0, k = 0; i < 4; i++) x4[i] = i == lane ? x : before[k++];
        bins4(x4, e, M, b4);
        for (int i = 0; i < 4; i++) assert_int_equal(b4[i], cs_ubin_at(x4[i], e, M));
    }
    before[0] = before[1];
    before[1] = before[2];
    before[2] = x;
#endif
    int b = cs_ubin_at(x, e, M);
    assert_int_equal(b, cs_ubin(x, M));
    assert_true(b >= 0 && b < M);
    if (b > 0) assert_true(x > e[b]);
    if (b < M - 1) assert_false(x > e[b + 1]);
    double xy[2] = { x, last }, yx[2] = { last, x };
    int b2[2];
    cs_ubin_at2(xy, e, M, b2);
    assert_int_equal(b2[0], b);
    assert_int_equal(b2[1], cs_ubin(last, M));
    cs_ubin_at2(yx, e, M, b2);
    assert_int_equal(b2[1], b);
    assert_int_equal(b2[0], cs_ubin(last, M));
    last = x;
}

static void test_branch_free_table(void **state)
{
    (void)state;
    static const double special[] = { 0.0, -0.0, 1.0, -1.0, 2.0, 1e300, -1e300, 0x1p-1074,
                                      -0x1p-1074, 0x1p-1022, 0.5, 0.1, 0.9, 0.99999999999999989 };
    uint64_t seed = 88172645463325252ull;
    int Ms[1006];
    size_t nm = 0;
    for (int M = 1; M <= 1000; M++) Ms[nm++] = M;
    Ms[nm++] = 1024; Ms[nm++] = 4096; Ms[nm++] = 9999; Ms[nm++] = 65535; Ms[nm++] = 65536;
    Ms[nm++] = 100003;
    for (size_t mi = 0; mi < nm; mi++) {
        int M = Ms[mi];
        double *e = malloc((size_t)(M + 1) * sizeof *e);
        assert_non_null(e);
        for (int i = 0; i <= M; i++) e[i] = cs_ubin_edge(i, M);
        int step = M <= 1000 ? 1 : M / 997;   /* large M: a spread of edges and the last */
        for (int i = 0; i <= M; i += (i + step > M && i < M) ? M - i : step) {
            double lo = e[i], hi = e[i];
            check_bin(e[i], e, M);
            for (int k = 0; k < 4; k++) {
                lo = nextafter(lo, -INFINITY);
                hi = nextafter(hi, INFINITY);
                check_bin(lo, e, M);
                check_bin(hi, e, M);
            }
        }
        for (size_t k = 0; k < sizeof special / sizeof special[0]; k++) check_bin(special[k], e, M);
        check_bin(INFINITY, e, M);
        check_bin(-INFINITY, e, M);
        assert_int_equal(cs_ubin_at(NAN, e, M), 0);
        check_bin(NAN, e, M);
        for (int k = 0; k < 200; k++) {
            seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17;
            check_bin((double)(seed >> 11) * 0x1.0p-53, e, M);
        }
        free(e);
    }
}

/* The metrics bin with the same rule: one sample on the edge 0.07 of M = 100 is counted in
 * bin 6 (0.06, 0.07], the other just above it in bin 7. */
static void test_metrics_use_the_rule(void **state)
{
    (void)state;
    const double prob[] = { 0.07, 0.93, 0.93, 0.07 };   /* top-1 conf .93 each: class 1, class 0 */
    const int32_t label[] = { 1, 0 };
    cs_dataset *d = cs_test_dataset(2, 2, prob, label);
    cs_settings s;
    cs_settings_default(&s);
    s.lens = CS_LENS_CLASS;
    snprintf(s.lens_arg, sizeof s.lens_arg, "0");   /* p[class 0]: 0.07 and 0.93 */
    s.bins = 100;
    cs_error err;
    cs_prepared *p = cs_prepare(d, &s, &err);
    assert_non_null(p);
    cs_result r;
    assert_int_equal(cs_evaluate(p, NULL, 0, CS_WANT_BINNED, NULL, &r, &err), CS_OK);
    assert_int_equal(r.n_bins, 100);
    assert_int_equal(r.bins[6].count, 1);
    assert_int_equal(r.bins[7].count, 0);
    assert_int_equal(r.bins[92].count, 1);   /* 0.93 == 93/100: bin 92 */
    cs_result_free(&r);
    cs_prepared_free(p);
    cs_dataset_free(d);
}

/* cs_cpu_features (the one place that asks the CPU, for the lanes, F16C halves and the
 * register clear after ISA-L) against libgcc's own answers, read independently. */
static void test_cpu_features(void **state)
{
    (void)state;
    unsigned f = cs_cpu_features();
    assert_int_equal(cs_cpu_features(), f);   /* asked once, the same answer */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
    assert_int_equal((f & CS_CPU_AVX) != 0, __builtin_cpu_supports("avx") != 0);
    assert_int_equal((f & CS_CPU_AVX2) != 0, __builtin_cpu_supports("avx2") != 0);
    assert_int_equal((f & CS_CPU_F16C) != 0, __builtin_cpu_supports("f16c") != 0 && (f & CS_CPU_AVX) != 0);
#endif
    if (f & (CS_CPU_AVX2 | CS_CPU_F16C)) assert_true(f & CS_CPU_AVX);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_edges_by_hand),
        cmocka_unit_test(test_table_and_scan_agree),
        cmocka_unit_test(test_branch_free_table),
        cmocka_unit_test(test_metrics_use_the_rule),
        cmocka_unit_test(test_cpu_features),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
