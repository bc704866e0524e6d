/* Resampling primitives: subset sizes, quantile rule, summary stats, RNG streams, draws,
 * cs_parallel_for. Expected values are worked by hand (quantiles checked against numpy's
 * default "linear" method). */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calscope/resample.h"
#include "support/cs_test.h"

static void test_subset_size(void **state)
{
    (void)state;
    assert_int_equal(cs_subset_size(0.07, 100), 7);     /* 0.07*100 = 7.000000000000001 */
    assert_int_equal(cs_subset_size(0.29, 100), 29);    /* 28.999999999999996 */
    assert_int_equal(cs_subset_size(0.01, 50000), 500);
    assert_int_equal(cs_subset_size(0.3331, 1000), 334); /* 333.1 really is above 333 */
    assert_int_equal(cs_subset_size(0.333, 1000), 333);
    assert_int_equal(cs_subset_size(0.5, 3), 2);
    assert_int_equal(cs_subset_size(0.1, 3), 1);
    assert_int_equal(cs_subset_size(1e-9, 10), 1);
    assert_int_equal(cs_subset_size(1.0, 12345), 12345);
    assert_int_equal(cs_subset_size(0.0, 10), 0);
    assert_int_equal(cs_subset_size(0.5, 0), 0);
    assert_int_equal(cs_subset_size(0.25, 1001), 251);  /* 250.25 */
}

static void test_quantile_rule(void **state)
{
    (void)state;
    const double x[] = { 1, 2, 3, 4 };
    /* numpy.quantile([1,2,3,4], q): h = 3q */
    assert_double_near(cs_quantile_sorted(x, 4, 0.025), 1.075, 1e-15);
    assert_double_near(cs_quantile_sorted(x, 4, 0.975), 3.925, 1e-15);
    assert_double_near(cs_quantile_sorted(x, 4, 0.5), 2.5, 1e-15);
    assert_double_near(cs_quantile_sorted(x, 4, 0.0), 1, 0);
    assert_double_near(cs_quantile_sorted(x, 4, 1.0), 4, 0);
    const double one[] = { 7 };
    assert_double_near(cs_quantile_sorted(one, 1, 0.975), 7, 0);
    assert_true(isnan(cs_quantile_sorted(x, 0, 0.5)));
    /* 20 repeats (the default R): h = 19*0.025 = 0.475 */
    double y[20];
    for (int i = 0; i < 20; i++)
        y[i] = 10.0 * i;
    assert_double_near(cs_quantile_sorted(y, 20, 0.025), 4.75, 1e-12);
    assert_double_near(cs_quantile_sorted(y, 20, 0.975), 185.25, 1e-12);
}

static void test_stat(void **state)
{
    (void)state;
    const double v[] = { 4, NAN, 1, 3, 2 };
    double tmp[5];
    cs_stat s;
    cs_stat_compute(v, 5, 2.0, tmp, &s);
    assert_int_equal(s.count, 4);
    assert_double_near(s.mean, 2.5, 1e-15);
    assert_double_near(s.sd, sqrt(1.25), 1e-15);   /* population sd */
    assert_double_near(s.abs_dev, 1.0, 1e-15);     /* (2+1+1+0)/4 */
    assert_double_near(s.lo, 1.075, 1e-15);
    assert_double_near(s.hi, 3.925, 1e-15);
    assert_double_near(v[0], 4, 0);                /* input untouched */
    const double none[] = { NAN, INFINITY };
    cs_stat_compute(none, 2, 0.0, tmp, &s);
    assert_int_equal(s.count, 0);
    assert_true(isnan(s.mean) && isnan(s.lo));
}

static void test_rng_streams(void **state)
{
    (void)state;
    cs_rng a, b, c;
    cs_rng_seed(&a, 42, 1, 3, 5);
    cs_rng_seed(&b, 42, 1, 3, 5);
    cs_rng_seed(&c, 42, 1, 5, 3);
    uint64_t xa = cs_rng_next(&a), xb = cs_rng_next(&b), xc = cs_rng_next(&c);
    assert_true(xa == xb);
    assert_true(xa != xc);
    cs_rng_seed(&c, 43, 1, 3, 5);
    assert_true(cs_rng_next(&c) != xa);
    /* splitmix64 reference: seed state 0 -> first output 0xe220a8397b1dcdaf */
    cs_rng z = { 0 };
    assert_true(cs_rng_next(&z) == 0xe220a8397b1dcdafull);
    /* Uniformity of cs_rng_below: 100000 draws in 10 cells, each within ~5 sd of 10000. */
    size_t count[10] = { 0 };
    cs_rng_seed(&a, 7, 0, 0, 0);
    for (int i = 0; i < 100000; i++) {
        uint64_t v = cs_rng_below(&a, 10);
        assert_true(v < 10);
        count[v]++;
    }
    for (int i = 0; i < 10; i++)
        assert_true(count[i] > 9500 && count[i] < 10500);
    assert_true(cs_rng_below(&a, 1) == 0);
}

/* cs_splitmix64 is splitmix64's step (Steele, Lea and Flood 2014; Vigna's splitmix64.c): from
 * state 0 the reference generator's first outputs are 0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4
 * and 0x06c45d188009454f; and it is what cs_rng_next draws from the same state. */
static void test_splitmix64(void **state)
{
    (void)state;
    assert_true(cs_splitmix64(0) == 0xe220a8397b1dcdafull);
    assert_true(cs_splitmix64(0x9e3779b97f4a7c15ull) == 0x6e789e6aa1b965f4ull);
    assert_true(cs_splitmix64(2 * 0x9e3779b97f4a7c15ull) == 0x06c45d188009454full);
    cs_rng r;
    cs_rng_seed(&r, 7, 1, 2, 3);
    for (int i = 0; i < 100; i++) {
        uint64_t z = r.state;
        assert_true(cs_rng_next(&r) == cs_splitmix64(z));
    }
}

static void test_draw_without(void **state)
{
    (void)state;
    enum { N = 10, K = 3, TRIES = 20000 };
    uint32_t perm[N], undo[K], out[K];
    size_t count[N] = { 0 };
    for (uint32_t i = 0; i < N; i++)
        perm[i] = i;
    cs_rng r;
    cs_rng_seed(&r, 1, 0, 0, 0);
    for (int t = 0; t < TRIES; t++) {
        cs_draw_without(&r, perm, N, K, undo, out);
        for (int i = 0; i < K; i++) {
            assert_true(out[i] < N);
            count[out[i]]++;
            for (int j = 0; j < i; j++)
                assert_true(out[i] != out[j]);
        }
        for (uint32_t i = 0; i < N; i++)
            assert_int_equal(perm[i], i);
    }
    /* Each index appears with probability K/N = 0.3: 6000 ± ~5 sd (65 each). */
    for (int i = 0; i < N; i++)
        assert_true(count[i] > 5670 && count[i] < 6330);
    /* k == n is a permutation */
    uint32_t full[N], u2[N];
    cs_draw_without(&r, perm, N, N, u2, full);
    uint32_t seen = 0;
    for (int i = 0; i < N; i++)
        seen |= 1u << full[i];
    assert_int_equal(seen, (1u << N) - 1);
}

static void test_draw_with(void **state)
{
    (void)state;
    uint32_t out[5000];
    cs_rng r;
    cs_rng_seed(&r, 9, 0, 0, 0);
    cs_draw_with(&r, 7, 5000, out);
    size_t count[7] = { 0 };
    for (int i = 0; i < 5000; i++) {
        assert_true(out[i] < 7);
        count[out[i]]++;
    }
    int repeated = 0;
    for (int i = 0; i < 7; i++)
        repeated += count[i] > 1;
    assert_int_equal(repeated, 7);
}

typedef struct pf_ctx {
    atomic_int hits[1000];
    int worker_max;
    double out[1000];
} pf_ctx;

static void pf_task(void *vctx, size_t i, int worker)
{
    pf_ctx *c = vctx;
    atomic_fetch_add(&c->hits[i], 1);
    cs_rng r;
    cs_rng_seed(&r, 5, 0, 0, i);
    c->out[i] = (double)cs_rng_next(&r);
    (void)worker;
}

/* The draw size rule: all n up to max(30,000, 2,000 x M), that many above; full: all; N: at
 * most N. The shrink: sqrt(k/n) towards the whole value, worked by hand; no interval for the
 * metrics without m-out-of-n intervals. */
static void test_boot_draw_size(void **state)
{
    (void)state;
    assert_int_equal(cs_boot_draw_size(30000, 0, 15), 30000);
    assert_int_equal(cs_boot_draw_size(30001, 0, 15), 30000);
    assert_int_equal(cs_boot_draw_size(1000000, 0, 15), 30000);
    assert_int_equal(cs_boot_draw_size(1000000, 0, 20), 40000);
    assert_int_equal(cs_boot_draw_size(1000000, 0, 100), 200000);   /* 2,000 a bin */
    assert_int_equal(cs_boot_draw_size(150000, 0, 100), 150000);
    assert_int_equal(cs_boot_draw_size(1000000, CS_BOOT_SIZE_FULL, 15), 1000000);
    assert_int_equal(cs_boot_draw_size(1000000, 20000, 15), 20000);
    assert_int_equal(cs_boot_draw_size(3000, 20000, 15), 3000);
    assert_int_equal(cs_boot_draw_size(0, 0, 15), 0);

    double full[CS_METRIC_COUNT], v[2 * CS_METRIC_COUNT];
    for (int m = 0; m < CS_METRIC_COUNT; m++) {
        full[m] = 1.0;
        v[m] = 3.0;
        v[CS_METRIC_COUNT + m] = NAN;
    }
    cs_settings top1;
    cs_settings_default(&top1);
    unsigned ok = cs_metric_mask_m_of_n(&top1);
    cs_boot_shrink(v, 2, full, 100, 100, ok);   /* k = n: nothing */
    assert_double_near(v[CS_METRIC_ECE], 3.0, 0);
    cs_boot_shrink(v, 2, full, 25, 100, ok);    /* sqrt(1/4): 1 + (3 - 1) / 2 */
    assert_double_near(v[CS_METRIC_ECE], 2.0, 1e-15);
    assert_double_near(v[CS_METRIC_NLL], 2.0, 1e-15);
    assert_true(isnan(v[CS_METRIC_MCE]) && isnan(v[CS_METRIC_ACE]) && isnan(v[CS_METRIC_SCE]));
    assert_true(isnan(v[CS_METRIC_COUNT + CS_METRIC_ECE]));   /* a replicate with no value */

    cs_settings s;
    cs_error e;
    cs_settings_default(&s);
    assert_int_equal(s.boot_size, 0);
    assert_int_equal(cs_settings_set_boot_size(&s, "full", &e), CS_OK);
    assert_int_equal(s.boot_size, CS_BOOT_SIZE_FULL);
    assert_int_equal(cs_settings_set_boot_size(&s, "20000", &e), CS_OK);
    assert_int_equal(s.boot_size, 20000);
    assert_int_equal(cs_settings_validate(&s, &e), CS_OK);
    assert_int_equal(cs_settings_set_boot_size(&s, "auto", &e), CS_OK);
    assert_int_equal(s.boot_size, 0);
    const char *bad[] = { "999", "-1", "1e5", "", "fulll", "50000 " };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char want[160];
        snprintf(want, sizeof want, "--boot-size: need auto, full or a whole number of samples from 1000 "
                 "to 4294967295, got '%s'", bad[i]);
        assert_int_equal(cs_settings_set_boot_size(&s, bad[i], &e), CS_EUSAGE);
        assert_string_equal(e.msg, want);
    }
    s.boot_size = 5;   /* a library caller's value out of range */
    assert_int_equal(cs_settings_validate(&s, &e), CS_EUSAGE);
    assert_string_equal(e.msg, "boot_size must be 0 (automatic), -1 (full) or in [1000, 4294967295] (got 5)");
}

static void test_parallel_for(void **state)
{
    (void)state;
    static pf_ctx c[3];
    const int threads[3] = { 1, 2, 8 };
    for (int t = 0; t < 3; t++) {
        for (int i = 0; i < 1000; i++)
            atomic_init(&c[t].hits[i], 0);
        assert_int_equal(cs_parallel_for(threads[t], 1000, pf_task, &c[t], NULL), 0);
        for (int i = 0; i < 1000; i++)
            assert_int_equal(atomic_load(&c[t].hits[i]), 1);
    }
    assert_memory_equal(c[0].out, c[1].out, sizeof c[0].out);
    assert_memory_equal(c[0].out, c[2].out, sizeof c[0].out);
    /* A raised cancel flag starts nothing. */
    atomic_int cancel;
    atomic_init(&cancel, 1);
    for (int i = 0; i < 1000; i++)
        atomic_init(&c[0].hits[i], 0);
    cs_parallel_for(2, 1000, pf_task, &c[0], &cancel);
    int any = 0;
    for (int i = 0; i < 1000; i++)
        any += atomic_load(&c[0].hits[i]);
    assert_int_equal(any, 0);
    assert_true(cs_cpu_count() >= 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_subset_size),
        cmocka_unit_test(test_quantile_rule),
        cmocka_unit_test(test_stat),
        cmocka_unit_test(test_rng_streams),
        cmocka_unit_test(test_splitmix64),
        cmocka_unit_test(test_draw_without),
        cmocka_unit_test(test_draw_with),
        cmocka_unit_test(test_boot_draw_size),
        cmocka_unit_test(test_parallel_for),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
