/* Smooth ECE's binned replicates (engine/metrics/smece.c, cs_mx_smece_binned): a bootstrap
 * draw of all of at least CS_SMECE_BINNED_MIN samples takes smooth ECE at the fixed bandwidth
 * from its residual weights linearly binned onto CS_SMECE_BIN_PER_SIGMA cells per bandwidth.
 *
 * Checked here: the binned value is within the linear-binning bound
 *   0.121 (1 / (M sigma))^2 mean |r_i|,  M sigma >= CS_SMECE_BIN_PER_SIGMA
 * of the exact one (cs_smece_at, the per-pair definition) on data whose smoothed residual
 * changes sign (where the bound matters), and equal to it when every value sits on a cell's
 * node; a replicate is binned from exactly CS_SMECE_BINNED_MIN samples and exact at one
 * fewer (an exact replicate is its materialised draw evaluated whole, at the whole sample's
 * bandwidth); the value on all samples and the paired comparison's point values stay exact. */
#include "support/cs_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calscope/metrics.h"
#include "calscope/resample.h"
#include "engine/metrics/mx.h"
#include "engine/metrics/smece.h"
#include "engine/resample/ci_internal.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double urand(void) { return cs_test_xorshift(&rng); }

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, z = *(const double *)b;
    return (x > z) - (x < z);
}

/* n (f, y), f ascending from a skewed density on [0, 1], y drawn with P(y = 1) = f + 0.08
 * sin(9 f): a smoothed residual that changes sign several times, so that the integral's pieces
 * move with the binning (a one-signed residual's smooth ECE is |mean r| whatever the binning).
 * y as bytes (the binned path's block) and as doubles (cs_smece_at's). */
typedef struct wavy { double *f, *yd; uint8_t *y; } wavy;

static wavy wavy_pairs(size_t n)
{
    wavy w = { malloc(n * sizeof *w.f), malloc(n * sizeof *w.yd), malloc(n) };
    assert_non_null(w.f);
    assert_non_null(w.yd);
    assert_non_null(w.y);
    for (size_t i = 0; i < n; i++) w.f[i] = pow(urand(), 0.7);
    qsort(w.f, n, sizeof *w.f, by_value);
    for (size_t i = 0; i < n; i++) {
        w.y[i] = urand() < w.f[i] + 0.08 * sin(9.0 * w.f[i]) ? 1 : 0;
        w.yd[i] = w.y[i];
    }
    return w;
}

static void wavy_free(wavy *w)
{
    free(w->f);
    free(w->yd);
    free(w->y);
}

static double bound_of(const double *f, const uint8_t *y, size_t n, double sigma)
{
    double mr = 0.0;
    for (size_t i = 0; i < n; i++) mr += fabs(f[i] - y[i]);
    mr /= (double)n;
    double M = ceil(CS_SMECE_BIN_PER_SIGMA / sigma);
    return 0.121 / ((M * sigma) * (M * sigma)) * mr;
}

/* The binned value against the exact one at bandwidths from the search floor up: within the
 * bound, and not identical everywhere (the binned path is not the exact one by accident). */
static void test_binned_within_bound(void **state)
{
    (void)state;
    enum { N = 30000 };
    wavy w = wavy_pairs(N);
    const double *f = w.f, *yd = w.yd;
    const uint8_t *y = w.y;
    static const double sigmas[] = { 0.001, 0.004, 0.01, 0.03, 0.1, 0.3 };
    int differ = 0;
    for (size_t k = 0; k < sizeof sigmas / sizeof *sigmas; k++) {
        double s = sigmas[k], exact = cs_smece_at(f, yd, N, s), binned;
        assert_int_equal(cs_mx_smece_binned(f, y, N, s, CS_SMECE_BIN_PER_SIGMA, &binned), 1);
        double d = fabs(binned - exact), b = bound_of(f, y, N, s);
        if (d > b) fail_msg("sigma %g: binned %.17g, exact %.17g: off by %.3g, bound %.3g", s, binned, exact, d, b);
        differ |= d > 0;
    }
    assert_true(differ);
    wavy_free(&w);
}

/* Values on the nodes k / M: the binning moves nothing, so the binned value is the exact one
 * to rounding (the weights of a node summed in another order). */
static void test_values_on_nodes_are_exact(void **state)
{
    (void)state;
    enum { N = 5000 };
    double s = 0.02, M = ceil(CS_SMECE_BIN_PER_SIGMA / s);
    wavy w = wavy_pairs(N);
    double *f = w.f, *yd = w.yd;
    const uint8_t *y = w.y;
    for (size_t i = 0; i < N; i++) f[i] = floor(f[i] * M) / M;
    double exact = cs_smece_at(f, yd, N, s), binned;
    assert_int_equal(cs_mx_smece_binned(f, y, N, s, CS_SMECE_BIN_PER_SIGMA, &binned), 1);
    assert_true(fabs(binned - exact) <= 1e-14);
    /* outside the boxes' range, or a value outside [0, 1]: not binned (the exact path) */
    assert_int_equal(cs_mx_smece_binned(f, y, N, 1e-4, CS_SMECE_BIN_PER_SIGMA, &binned), 0);
    f[N - 1] = 1.5;
    assert_int_equal(cs_mx_smece_binned(f, y, N, s, CS_SMECE_BIN_PER_SIGMA, &binned), 0);
    wavy_free(&w);
}

/* n rows of 4 classes with continuous probabilities, labels drawn from a distorted copy of
 * them (a top-1 smoothed residual of both signs). */
static cs_dataset *wavy_dataset(size_t n)
{
    enum { K = 4 };
    double *P = malloc(n * K * sizeof *P);
    int32_t *Y = malloc(n * sizeof *Y);
    assert_non_null(P);
    assert_non_null(Y);
    for (size_t i = 0; i < n; i++) {
        double s = 0.0, t[K], st = 0.0;
        for (size_t j = 0; j < K; j++) {
            double z = 2.5 * (urand() + urand() + urand() - 1.5) + (j == 0 ? 1.0 : 0.0);
            s += P[i * K + j] = exp(z);
            st += t[j] = exp(z * (1.0 + 0.5 * sin(3.0 * z)));
        }
        double u = urand() * st, c = 0.0;
        Y[i] = K - 1;
        for (size_t j = 0; j < K; j++) {
            c += t[j];
            if (u < c) { Y[i] = (int32_t)j; break; }
        }
        for (size_t j = 0; j < K; j++) P[i * K + j] /= s;
    }
    cs_dataset *d = cs_test_dataset(n, K, P, Y);
    free(P);
    free(Y);
    return d;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, z = *(const uint32_t *)b;
    return (x > z) - (x < z);
}

/* The smooth ECE of replicate r of an interval (seed), made by hand: the drawn rows copied into
 * a dataset of their own, evaluated whole at the bandwidth sigma (exact). */
static double materialised(const cs_dataset *d, const cs_prepared *p, uint64_t seed, int r,
                           double sigma)
{
    size_t n = cs_prepared_count(p);
    uint32_t *idx = malloc(n * sizeof *idx);
    double *P = malloc(n * d->k * sizeof *P);
    int32_t *Y = malloc(n * sizeof *Y);
    assert_non_null(idx);
    assert_non_null(P);
    assert_non_null(Y);
    cs_rng g;
    cs_rng_seed(&g, seed, STREAM_CI, 0, (uint64_t)r);
    cs_draw_with(&g, n, n, idx);
    qsort(idx, n, sizeof *idx, cmp_u32);
    const uint32_t *rows = cs_prepared_rows(p);
    for (size_t j = 0; j < n; j++) {
        memcpy(P + j * d->k, d->prob + (size_t)rows[idx[j]] * d->k, d->k * sizeof *P);
        Y[j] = d->label[rows[idx[j]]];
    }
    cs_dataset *x = cs_test_dataset(n, d->k, P, Y);
    cs_settings s;
    cs_settings_default(&s);
    s.smece_sigma = sigma;
    cs_error e;
    cs_prepared *px = cs_prepare(x, &s, &e);
    assert_non_null(px);
    cs_result res;
    assert_int_equal(cs_evaluate(px, NULL, 0, CS_WANT_SMECE, NULL, &res, &e), CS_OK);
    double v = res.smece;
    cs_result_free(&res);
    cs_prepared_free(px);
    cs_dataset_free(x);
    free(idx);
    free(P);
    free(Y);
    return v;
}

/* An interval of R replicates on n samples: binned exactly when n >= CS_SMECE_BINNED_MIN, and
 * then each replicate within the bound of its exact value (else equal to it); the value on all
 * samples and a paired comparison's point values are the whole evaluation's, bit for bit. */
static void interval_at(size_t n, int binned)
{
    enum { R = 4 };
    const uint64_t seed = 5;
    cs_dataset *d = wavy_dataset(n);
    cs_settings s;
    cs_settings_default(&s);
    cs_error e;
    cs_prepared *p = cs_prepare(d, &s, &e);
    assert_non_null(p);
    const cs_run one = { .threads = 1 };
    cs_result whole;
    assert_int_equal(cs_evaluate(p, NULL, 0, CS_WANT_SMECE, &one, &whole, &e), CS_OK);
    unsigned mask = CS_METRIC_BIT(CS_METRIC_SMECE);
    cs_ci ci;
    assert_int_equal(cs_bootstrap_interval(p, mask, R, seed, CS_CI_PERCENTILE, &one, &ci, &e), CS_OK);
    assert_int_equal(ci.smece_binned, binned);
    assert_int_equal(cs_prepared_smece_binned(p), binned ? R : 0);
    assert_memory_equal(&ci.value[CS_METRIC_SMECE], &whole.smece, sizeof whole.smece);
    /* the replicates, by hand: their mean is the driver's */
    double sum = 0.0;
    int differ = 0;
    for (int r = 0; r < R; r++) sum += materialised(d, p, seed, r, whole.smece_sigma);
    double mean = sum / R, gap = fabs(ci.boot_mean[CS_METRIC_SMECE] - mean);
    if (binned) {
        /* mean |r| <= 1 */
        double bound = 0.121 / ((double)CS_SMECE_BIN_PER_SIGMA * CS_SMECE_BIN_PER_SIGMA);
        if (gap > bound) fail_msg("n %zu: binned mean %.17g, exact %.17g", n, ci.boot_mean[CS_METRIC_SMECE], mean);
        differ = gap > 0;
        assert_true(differ);
    } else if (gap > 1e-12 * mean) {
        fail_msg("n %zu: replicates' mean %.17g, the materialised draws' %.17g", n, ci.boot_mean[CS_METRIC_SMECE], mean);
    }
    /* the paired comparison: its point values exact, its replicates binned alike */
    cs_compare c;
    assert_int_equal(cs_compare_rows(d, d, &s, mask, 3, seed, &one, &c, &e), CS_OK);
    assert_int_equal(c.smece_binned, binned);
    assert_int_equal(c.n_entries, 1);
    assert_memory_equal(&c.entries[0].a, &whole.smece, sizeof whole.smece);
    assert_memory_equal(&c.entries[0].b, &whole.smece, sizeof whole.smece);
    cs_result_free(&whole);
    cs_prepared_free(p);
    cs_dataset_free(d);
}

static void test_switch_at_the_threshold(void **state)
{
    (void)state;
    interval_at(CS_SMECE_BINNED_MIN - 1, 0);
    interval_at(CS_SMECE_BINNED_MIN, 1);
}

/* The switch for tests and measurements: off, a large replicate is the exact one. */
static void test_binning_can_be_turned_off(void **state)
{
    (void)state;
    cs_dataset *d = wavy_dataset(CS_SMECE_BINNED_MIN + 10);
    cs_settings s;
    cs_settings_default(&s);
    cs_error e;
    cs_prepared *p = cs_prepare(d, &s, &e);
    assert_non_null(p);
    cs_ci ci;
    const cs_run one = { .threads = 1 };
    cs_mx_smece_bin_replicates(0);
    assert_int_equal(cs_bootstrap_interval(p, CS_METRIC_BIT(CS_METRIC_SMECE), 2, 3, CS_CI_PERCENTILE, &one, &ci, &e), CS_OK);
    cs_mx_smece_bin_replicates(1);
    assert_int_equal(ci.smece_binned, 0);
    assert_int_equal(cs_prepared_smece_binned(p), 0);
    cs_prepared_free(p);
    cs_dataset_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_binned_within_bound),
        cmocka_unit_test(test_values_on_nodes_are_exact),
        cmocka_unit_test(test_switch_at_the_threshold),
        cmocka_unit_test(test_binning_can_be_turned_off),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
