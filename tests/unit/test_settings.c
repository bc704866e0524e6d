/* The setting parsers both front ends share (settings.c): documented bounds, messages that
 * name the flag once and echo the user's text, subnormal numbers, the shortest round-trip
 * formatting, the engine's own check of a hand-filled struct, and the thread bound of
 * cs_parallel_for (its helper arrays were a 256-entry stack array before). */
#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calscope/metrics.h"
#include "calscope/resample.h"
#include "support/cs_test.h"

static void test_bins_bounds(void **state)
{
    (void)state;
    cs_settings s;
    cs_error err;
    cs_settings_default(&s);
    assert_int_equal(cs_settings_set_bins(&s, "1000", &err), CS_OK);
    assert_int_equal(s.bins, 1000);
    assert_int_equal(cs_settings_set_bins(&s, "1001", &err), CS_EUSAGE);
    assert_string_equal(err.msg, "--bins: need a whole number between 1 and 1000, got '1001'");
    assert_int_equal(cs_settings_set_bins(&s, "1000000", &err), CS_EUSAGE);
    assert_int_equal(cs_settings_set_bins(&s, " 5", &err), CS_EUSAGE);
    assert_int_equal(s.bins, 1000);                     /* unchanged on error */
    s.bins = 1001;                                      /* filled by hand */
    assert_int_equal(cs_settings_validate(&s, &err), CS_EUSAGE);
    assert_string_equal(err.msg, "bins must be between 1 and 1000 (got 1001)");
}

static void test_sigma_bounds(void **state)
{
    (void)state;
    cs_settings s;
    cs_error err;
    cs_settings_default(&s);
    assert_int_equal(cs_settings_set_sigma(&s, "1e-6", &err), CS_OK);
    assert_true(s.sigma == 1e-6);
    assert_int_equal(cs_settings_set_sigma(&s, "10", &err), CS_OK);
    assert_true(s.sigma == 10.0);
    const char *bad[] = { "1e300", "10.000001", "9.9e-7", "0", "-0.1", "nan", "inf", "" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(cs_settings_set_sigma(&s, bad[i], &err), CS_EUSAGE);
        char want[128];
        snprintf(want, sizeof want, "--sigma: need a number in [1e-06, 10], got '%s'", bad[i]);
        assert_string_equal(err.msg, want);
    }
    assert_true(s.sigma == 10.0);
    s.sigma = 1e300;   /* the engine refuses it too: the Gaussian masses would underflow */
    assert_int_equal(cs_settings_validate(&s, &err), CS_EUSAGE);
    assert_string_equal(err.msg, "sigma must be in [1e-06, 10] (got 1.0000000000000001e+300)");
}

static void test_front_end_parsers(void **state)
{
    (void)state;
    cs_error err;
    int v = -7;
    assert_int_equal(cs_parse_threads("256", &v, &err), CS_OK);
    assert_int_equal(v, 256);
    assert_int_equal(cs_parse_threads("0", &v, &err), CS_OK);
    assert_int_equal(v, 0);
    assert_int_equal(cs_parse_threads("1024", &v, &err), CS_EUSAGE);
    assert_string_equal(err.msg, "--threads: need a whole number between 0 (all cores) and 256, got '1024'");
    assert_int_equal(v, 0);
    assert_int_equal(cs_parse_resamples("--ci", "100000", 1, &v, &err), CS_OK);
    assert_int_equal(v, 100000);
    assert_int_equal(cs_parse_resamples("--ci", "100001", 1, &v, &err), CS_EUSAGE);
    assert_string_equal(err.msg, "--ci: need a whole number between 1 and 100000, got '100001'");
    assert_int_equal(cs_parse_resamples("--ci", "0", 0, &v, &err), CS_OK);
    assert_int_equal(v, 0);
    assert_int_equal(cs_parse_resamples("--repeats", "2.5", 1, &v, &err), CS_EUSAGE);
    assert_string_equal(err.msg, "--repeats: need a whole number between 1 and 100000, got '2.5'");
    double t = -1;
    assert_int_equal(cs_parse_sum_tol("1e-320", &t, &err), CS_OK);   /* strtod: ERANGE */
    assert_true(t > 0 && t < DBL_MIN);
    assert_int_equal(cs_parse_sum_tol("0", &t, &err), CS_OK);
    assert_true(t == 0);
    assert_int_equal(cs_parse_sum_tol("1", &t, &err), CS_EUSAGE);
    assert_string_equal(err.msg, "--sum-tol: need a tolerance in [0, 1), got '1'");
}

static void test_numbers(void **state)
{
    (void)state;
    double v;
    assert_int_equal(cs_parse_number("1e-320", &v), 1);
    assert_true(v == 1e-320);
    assert_int_equal(cs_parse_number("-4.9e-324", &v), 1);
    assert_true(v < 0 && v > -DBL_MIN);
    assert_int_equal(cs_parse_number("1e999", &v), 0);     /* overflow: refused */
    assert_int_equal(cs_parse_number("0x", &v), 0);
    /* no hex float: a data file refuses 0x1p-1 as non-numeric, so a flag does too */
    assert_int_equal(cs_parse_number("0x1p-1", &v), 0);
    assert_int_equal(cs_parse_number("0X10", &v), 0);
    assert_int_equal(cs_parse_number("inf", &v), 0);
    assert_int_equal(cs_parse_number(".5", &v), 1);
    assert_true(v == 0.5);
    assert_int_equal(cs_parse_number(" 1", &v), 0);
    assert_int_equal(cs_parse_number("1 ", &v), 0);
    long l;
    assert_int_equal(cs_parse_whole("+12", 0, 20, &l), 1);
    assert_int_equal(l, 12);
    assert_int_equal(cs_parse_whole("-1", -5, 5, &l), 0);  /* no sign but '+' */
    assert_int_equal(cs_parse_whole("21", 0, 20, &l), 0);
    char buf[40];
    cs_format_number(buf, sizeof buf, 0.1 + 0.2);
    assert_string_equal(buf, "0.30000000000000004");
    cs_format_number(buf, sizeof buf, 1e-320);
    assert_string_equal(buf, "1e-320");
    cs_format_number(buf, sizeof buf, 0.001);
    assert_string_equal(buf, "0.001");
}

/* Every task runs once on at most CS_THREADS_MAX workers whatever the caller asks. */
typedef struct { atomic_int *hits; atomic_int max_worker; } pf_ctx;

static void pf_task(void *ctx, size_t i, int worker)
{
    pf_ctx *c = ctx;
    atomic_fetch_add(&c->hits[i], 1);
    int m = atomic_load(&c->max_worker);
    while (worker > m && !atomic_compare_exchange_weak(&c->max_worker, &m, worker)) {}
}

static void test_parallel_for_thread_bound(void **state)
{
    (void)state;
    size_t n = 3000;
    pf_ctx c;
    c.hits = calloc(n, sizeof *c.hits);
    assert_non_null(c.hits);
    atomic_init(&c.max_worker, -1);
    cs_parallel_for(1024, n, pf_task, &c, NULL);   /* was: index 256 out of bounds */
    for (size_t i = 0; i < n; i++) assert_int_equal(atomic_load(&c.hits[i]), 1);
    assert_true(atomic_load(&c.max_worker) < CS_THREADS_MAX);
    free(c.hits);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bins_bounds),
        cmocka_unit_test(test_sigma_bounds),
        cmocka_unit_test(test_front_end_parsers),
        cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_parallel_for_thread_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
