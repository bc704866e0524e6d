/* Smooth ECE (engine/metrics/smece.h), the L2 calibration errors and ECE_sweep
 * (engine/metrics/estimators.h): values worked by hand on tiny inputs, properties, and the way
 * cs_evaluate reports them per lens. */
#include "support/cs_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/metrics/estimators.h"
#include "calscope/load.h"
#include "calscope/metrics.h"
#include "engine/metrics/smece.h"
#include "engine/metrics/smece_view.h"

static double Phi(double z) { return 0.5 * erfc(-z / sqrt(2.0)); }

/* Mass on [0, 0.5] of the reflected kernel at f: its images 2k + f and 2k - f, |k| <= 12. */
static double half_mass(double f, double s)
{
    double m = 0.0;
    for (int k = -12; k <= 12; k++)
        m += Phi((0.5 - f - 2 * k) / s) - Phi((-f - 2 * k) / s) + Phi((0.5 + f - 2 * k) / s) - Phi((f - 2 * k) / s);
    return m;
}

/* One sample f = 0.5, y = 0: the smoothed residual is 0.5 K(t, 0.5) > 0 and the reflected
 * kernel has mass 1 on [0, 1], so smECE_s = 0.5 for every s, and the fixed point s = 0.5. */
static void test_smece_one_sample(void **state)
{
    (void)state;
    const double f[] = { 0.5 }, y[] = { 0.0 };
    assert_double_near(cs_smece_at(f, y, 1, 0.1), 0.5, 1e-15);
    assert_double_near(cs_smece_at(f, y, 1, 0.9), 0.5, 1e-15);
    double s;
    assert_double_near(cs_smece_auto(f, y, 1, &s), 0.5, 1e-12);
    assert_double_near(s, 0.5, 1e-12);
    /* a sample on the boundary: K(t, 1) = 2 phi(t - 1) on [0, 1], still mass 1 */
    const double f1[] = { 1.0 };
    assert_double_near(cs_smece_at(f1, y, 1, 0.05), 1.0, 1e-15);
    assert_true(isnan(cs_smece_at(f, y, 0, 0.1)));
    assert_true(isnan(cs_smece_auto(f, y, 0, &s)));
}

/* f = (0.2, 0.8), y = (0, 1): r = (0.2, -0.2), the curve is odd about 0.5 (its one root), so
 * smECE_0.1 = 2 * 0.1 * (m(0.2) - m(0.8)) with m(f) the reflected kernel's mass on [0, 0.5]:
 * m(0.2) = Phi(3) + Phi(7) - 1, m(0.8) = Phi(-3) + Phi(-7) (images farther than 8 sd left out,
 * below 1e-15), so smECE = 0.2 (2 Phi(3) + 2 Phi(7) - 3) = 0.19946004078683602. */
static void test_smece_two_samples(void **state)
{
    (void)state;
    const double f[] = { 0.2, 0.8 }, y[] = { 0.0, 1.0 };
    double want = 0.2 * (2 * Phi(3) + 2 * Phi(7) - 3);
    assert_double_near(want, 0.19946004078683602, 1e-15);
    assert_double_near(cs_smece_at(f, y, 2, 0.1), want, 1e-14);
    /* the root 0.5 on a grid point (G even) or between two, for many bandwidths */
    for (double s = 0.01; s < 1.0; s *= 1.13)
        assert_double_near(cs_smece_at(f, y, 2, s), 0.2 * (half_mass(0.2, s) - half_mass(0.8, s)), 1e-14);
    /* smooth ECE stays below the binned ECE of this monotone example: 15 bins, every sample
     * alone, gaps 0.2 and 0.2, ECE 0.2 */
    double s, v = cs_smece_auto(f, y, 2, &s);
    assert_true(v <= 0.2);
    assert_double_near(v, s, 1e-12);   /* the fixed point: smECE_s* = s* */
    assert_true(s > CS_SMECE_EPS && s < 0.2);
}

/* A calibrated-looking file where every residual cancels its mirror: smECE below eps gives
 * s* = eps (relplot's floor). */
static void test_smece_floor(void **state)
{
    (void)state;
    const double f[] = { 0.5, 0.5 }, y[] = { 0.0, 1.0 };
    double s, v = cs_smece_auto(f, y, 2, &s);
    assert_double_near(v, 0.0, 1e-15);
    assert_true(s == CS_SMECE_EPS);
}

/* Row order changes nothing, to the last bit; a repeated row is the same as its weight. */
static void test_smece_order_invariant(void **state)
{
    (void)state;
    enum { N = 40 };
    double f[N], y[N], fr[N], yr[N];
    for (int i = 0; i < N; i++) {
        f[i] = 0.5 + 0.5 * (double)((i * 17) % N) / N;
        y[i] = (i % 3) != 0;
        fr[N - 1 - i] = f[i];
        yr[N - 1 - i] = y[i];
    }
    double s1, s2;
    double a = cs_smece_auto(f, y, N, &s1), b = cs_smece_auto(fr, yr, N, &s2);
    assert_true(a == b && s1 == s2);
    assert_true(cs_smece_at(f, y, N, 0.07) == cs_smece_at(fr, yr, N, 0.07));
}

/* A hint only starts the bandwidth search: whatever it is (far below s*, far above, out of
 * range, NAN), the fixed point and smECE are the unhinted ones to the root's 1e-15. Also on
 * the floor case (smECE_eps <= eps: s* = eps) and a file whose s* sits near mean |r|. */
static void test_smece_hint_changes_nothing(void **state)
{
    (void)state;
    enum { N = 300 };
    double f[N], y[N], g[N], z[N];
    for (int i = 0; i < N; i++) {
        f[i] = 0.55 + 0.45 * (double)((i * 37) % N) / N;       /* over-confident */
        y[i] = (i % 4) != 0;
        g[i] = (double)(i % 10) / 10.0 + 0.05;                   /* calibrated in expectation */
        z[i] = ((i * 7) % 10) < g[i] * 10.0;
    }
    const double hints[] = { NAN, 0.0, -1.0, 1e-6, 0.0011, 0.01, 0.05, 0.2, 0.9, 5.0 };
    const double *fs[] = { f, g }, *ys[] = { y, z };
    for (int k = 0; k < 2; k++) {
        double s0, v0 = cs_smece_auto(fs[k], ys[k], N, &s0);
        assert_false(isnan(v0));
        for (size_t h = 0; h < sizeof hints / sizeof *hints; h++) {
            double s, v = cs_smece_auto_near(fs[k], ys[k], N, hints[h], &s);
            assert_double_near(s, s0, 1e-14);
            assert_double_near(v, v0, 1e-14);
        }
    }
}

/* The boxes' moments (smece_box.c) against the per-pair sums, which share nothing but the
 * sign grid's step: samples spread, clustered in one box, on 0 and 1, a curve that crosses
 * zero several times, every bandwidth from the boxes' floor 1/1024 to 10, and the automatic
 * one. The truncation bound (1e-19 of sum |w| per term) leaves rounding: 1e-13 absolute. */
static double lcg01(uint64_t *x)
{
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*x >> 11) / 9007199254740992.0;
}

static void test_smece_boxes_match_pairs(void **state)
{
    (void)state;
    enum { N = 3000 };
    double *f = malloc(N * sizeof *f), *y = malloc(N * sizeof *y);
    assert_non_null(f);
    assert_non_null(y);
    const double sig[] = { 1.0 / 1024, 0.001, 0.0013, 0.004, 0.011, 0.05, 0.094, 0.3, 0.77, 1.0, 2.5, 10.0 };
    for (int shape = 0; shape < 5; shape++) {
        uint64_t x = 20261126u + (uint64_t)shape;
        for (int i = 0; i < N; i++) {
            double u = lcg01(&x), v = lcg01(&x);
            switch (shape) {
            case 0: f[i] = u; y[i] = v < u * u; break;                         /* over-confident */
            case 1: f[i] = u; y[i] = v < 0.5 + 0.4 * sin(12.0 * u); break;     /* many roots */
            case 2: f[i] = 0.3 + u * 1e-4; y[i] = v < 0.5; break;             /* one box */
            case 3: f[i] = u < 0.3 ? 0.0 : u > 0.7 ? 1.0 : u; y[i] = v < 0.6; break;   /* ends */
            default: f[i] = floor(u * 20.0) / 20.0; y[i] = v < f[i]; break;   /* ties */
            }
        }
        for (size_t k = 0; k < sizeof sig / sizeof *sig; k++) {
            double b = cs_smece_at_by(f, y, N, sig[k], 1), p = cs_smece_at_by(f, y, N, sig[k], 0);
            assert_false(isnan(b));
            if (fabs(b - p) > 1e-13) fail_msg("shape %d sigma %g: boxes %.17g pairs %.17g", shape, sig[k], b, p);
        }
    }
    /* below the boxes' floor, or a value outside [0, 1]: the per-pair sums, bit for bit */
    assert_true(cs_smece_at_by(f, y, N, 0.0009, 1) == cs_smece_at_by(f, y, N, 0.0009, 0));
    f[7] = 1.25;
    assert_true(cs_smece_at_by(f, y, N, 0.05, 1) == cs_smece_at_by(f, y, N, 0.05, 0));
    free(f);
    free(y);
}

/* The smoothed curve's kernel sums (positive weights) from the boxes against image by image
 * (cs_smece_grid_direct restarted at every point: every term its own exp): relative 1e-12 (the
 * rounding of 10^5 terms at s = 10) where the sum is above 1e-3 of its peak, 1e-15 of the
 * peak elsewhere. Samples spread, clustered, on the ends; the boxes' floor to 10. */
static int by_c(const void *a, const void *b)
{
    double x = ((const img *)a)->c, y = ((const img *)b)->c;
    return (x > y) - (x < y);
}

/* The box moments and kernel sums with two chains / two boxes in SSE2 lanes (the default)
 * and with the scalar loops (cs_sbox_lanes(0)): the same bits, moments, sums on a grid and
 * smECE, on an odd and an even number of pairs (a box left alone at the end of a pass), every
 * shape and bandwidth of the test below. */
static void test_sbox_lanes_match_scalar(void **state)
{
    (void)state;
    enum { G = 199 };
    const double sig[] = { 1.0 / 1024, 0.003, 0.02, 0.094, 0.4, 1.0, 10.0 };
    for (int N = 2000; N <= 2001; N++) {
        img *p = malloc((size_t)N * sizeof *p);
        assert_non_null(p);
        for (int shape = 0; shape < 3; shape++) {
            uint64_t x = 91u + (uint64_t)shape;
            for (int i = 0; i < N; i++) {
                double u = lcg01(&x);
                double f = shape == 0 ? u : shape == 1 ? 0.6 + 0.01 * u : (u < 0.5 ? u * 1e-3 : 1.0 - u * 1e-3);
                p[i] = (img){ f, (lcg01(&x) - 0.3) / N };
            }
            qsort(p, (size_t)N, sizeof *p, by_c);
            pairs P = { .p = p, .n = (size_t)N };
            sbox b[2] = { {0}, {0} };
            for (int lanes = 0; lanes < 2; lanes++) {
                cs_sbox_lanes(lanes);
                assert_int_equal(cs_sbox_build(&b[lanes], &P), 0);
            }
            assert_int_equal(b[0].n, b[1].n);
            assert_memory_equal(b[0].m, b[1].m, b[0].n * NP * sizeof *b[0].m);
            for (size_t k = 0; k < sizeof sig / sizeof *sig; k++) {
                double g[2][G + 1], sm[2];
                for (int lanes = 0; lanes < 2; lanes++) {
                    cs_sbox_lanes(lanes);
                    assert_int_equal(cs_sbox_sums(&b[1], sig[k], G, g[lanes]), 0);
                    sm[lanes] = cs_sbox_smece(&b[1], sig[k]);
                }
                assert_memory_equal(g[0], g[1], sizeof g[0]);
                assert_false(isnan(sm[0]));
                assert_memory_equal(&sm[0], &sm[1], sizeof sm[0]);
            }
            cs_sbox_free(&b[0]);
            cs_sbox_free(&b[1]);
        }
        free(p);
    }
    cs_sbox_lanes(1);
}

static void test_smcurve_boxes_match_images(void **state)
{
    (void)state;
    /* 199 points on one thread; 1024 and 2049 (not a whole number of pieces) are shared with
     * a second thread (GRID_SHARED in smece_box.c): every point must be there, in its place */
    enum { N = 2000, GMAX = 2049 };
    const size_t grids[] = { 199, 1024, GMAX };
    img *p = malloc(N * sizeof *p);
    double *gb = malloc((GMAX + 1) * sizeof *gb), *gi = malloc((GMAX + 1) * sizeof *gi);
    assert_non_null(p);
    assert_non_null(gb);
    assert_non_null(gi);
    const double sig[] = { 1.0 / 1024, 0.003, 0.02, 0.094, 0.4, 1.0, 10.0 };
    for (int shape = 0; shape < 3; shape++) {
        uint64_t x = 77u + (uint64_t)shape;
        for (int i = 0; i < N; i++) {
            double u = lcg01(&x);
            double f = shape == 0 ? u : shape == 1 ? 0.6 + 0.01 * u : (u < 0.5 ? u * 1e-3 : 1.0 - u * 1e-3);
            p[i] = (img){ f, (0.5 + lcg01(&x)) / N };
        }
        qsort(p, N, sizeof *p, by_c);
        pairs P = { .p = p, .n = N };
        sbox b = {0};
        assert_int_equal(cs_sbox_build(&b, &P), 0);
        for (size_t k = 0; k < sizeof sig / sizeof *sig; k++)
            for (size_t gi_ = 0; gi_ < sizeof grids / sizeof *grids; gi_++) {
                size_t G = grids[gi_];
                /* the long grids (the search's, at small sigma) at the first three sigmas:
                 * the per-image sums they are checked against take seconds at sigma >= 0.1 */
                if (G > 199 && sig[k] > 0.02) continue;
                view v;
                for (size_t j = 0; j <= G; j++) gb[j] = NAN;
                assert_true(cs_sbox_fits(&b, sig[k]));
                assert_int_equal(cs_sbox_sums(&b, sig[k], G, gb), 0);
                assert_int_equal(cs_smece_view(&v, &P, sig[k]), 0);
                cs_smece_grid_direct(&v, sig[k], G, 1, gi);
                double peak = 0.0;
                for (size_t j = 0; j <= G; j++) peak = gi[j] > peak ? gi[j] : peak;
                for (size_t j = 0; j <= G; j++) {
                    double tol = gi[j] > 1e-3 * peak ? 1e-12 * gi[j] : 1e-15 * peak;
                    if (!(fabs(gb[j] - gi[j]) <= tol))
                        fail_msg("shape %d sigma %g G %zu t %zu: boxes %.17g images %.17g", shape,
                                 sig[k], G, j, gb[j], gi[j]);
                }
            }
        cs_sbox_free(&b);
    }
    free(p);
    free(gb);
    free(gi);
}

/* relplot's grid on one sample at 0.5 with y = 0: the smoothed residual over the smoothed
 * density is 0.5 wherever the density is well above relplot's eps (1e-4), and near 0 on the
 * points far from 0.5 where the density is below it: those points count in the denominator
 * only (their eps), so relplot's number is a little under 0.5 (by 5e-5 here). */
static void test_smece_relplot_one(void **state)
{
    (void)state;
    const double f[] = { 0.5 }, y[] = { 0.0 };
    double s;
    double v = cs_smece_relplot(f, y, 1, 0.1, &s);
    assert_true(v < 0.5 && v > 0.5 - 1e-4);
    assert_true(s == 0.1);
    /* relplot's search returns a multiple of 1/1024 */
    v = cs_smece_relplot(f, y, 1, 0.0, &s);
    assert_true(s == 0.5);   /* p(0.5) fails, p holds below: the halvings keep 0.5 */
    assert_true(v < 0.5 && v > 0.5 - 1e-4);
}

/* Kumar et al.'s estimators, M = 2 over six sorted pairs, all f = 0.5 (ties keep row order):
 * groups y = (0, 0, 1) and (1, 1, 1).
 *   plug-in:  sqrt(1/2 (1/6)^2 + 1/2 (1/2)^2) = sqrt(5/36)
 *   debiased: 1/2 [(1/6)^2 - (1/3)(2/3)/2] + 1/2 [(1/2)^2 - 0] = 1/2 (-3/36 + 9/36) = 1/12 */
static void test_l2ce_by_hand(void **state)
{
    (void)state;
    const double f[] = { 0.5, 0.5, 0.5, 0.5, 0.5, 0.5 }, y[] = { 0, 0, 1, 1, 1, 1 };
    double p, d, sq;
    cs_l2ce(f, y, 6, 2, &p, &d, &sq);
    assert_double_near(p, sqrt(5.0 / 36.0), 1e-15);
    assert_double_near(sq, 1.0 / 12.0, 1e-15);
    assert_double_near(d, sqrt(1.0 / 12.0), 1e-15);
    /* f = (.2, .4, .6, .8), y = (0, 1, 0, 1), M = 2: gaps 0.2 in both groups, variance terms
     * 1/4: plug-in 0.2, debiased sum 0.04 - 0.25 < 0, clipped to 0 */
    const double f2[] = { 0.2, 0.4, 0.6, 0.8 }, y2[] = { 0, 1, 0, 1 };
    cs_l2ce(f2, y2, 4, 2, &p, &d, &sq);
    assert_double_near(p, 0.2, 1e-15);
    assert_double_near(sq, 0.04 - 0.25, 1e-15);
    assert_true(d == 0.0);
    /* a group of one adds nothing to the debiased sum (M >= n: every pair alone) */
    cs_l2ce(f2, y2, 4, 10, &p, &d, &sq);
    assert_true(sq == 0.0);
    cs_l2ce(f2, y2, 0, 2, &p, &d, &sq);
    assert_true(isnan(p) && isnan(d) && isnan(sq));
}

/* The debiased square is unbiased: on f = (0.3, 0.3, 0.6, 0.6) with y ~ Bernoulli(f) (a file
 * calibrated by construction) its expectation over the 16 label vectors, weighted by their
 * probabilities, is exactly 0 (up to rounding), while the plug-in square's is positive. */
static void test_l2ce_unbiased(void **state)
{
    (void)state;
    const double f[] = { 0.3, 0.3, 0.6, 0.6 };
    double e_deb = 0.0, e_plug = 0.0;
    for (int mask = 0; mask < 16; mask++) {
        double y[4], w = 1.0;
        for (int i = 0; i < 4; i++) {
            y[i] = (mask >> i) & 1;
            w *= y[i] ? f[i] : 1.0 - f[i];
        }
        double p, d, sq;
        cs_l2ce(f, y, 4, 2, &p, &d, &sq);
        e_deb += w * sq;
        e_plug += w * p * p;
    }
    assert_double_near(e_deb, 0.0, 1e-15);
    /* plug-in: E (fbar - ybar)^2 = Var(ybar) = (0.21 / 2 + 0.24 / 2) / 2 = 0.1125 */
    assert_double_near(e_plug, 0.1125, 1e-15);
}

/* ECE_sweep on sorted f = (.1, .2, .3, .4, .5, .6), y = (0, 1, 0, 1, 1, 1).
 * Equal mass: b = 2 {0,1,2}{3,4,5} means 1/3, 1; b = 3 pairs: 1/2, 1/2, 1 (ties are
 * monotone); b = 4 bins floor(4i/6) = 0,0,1,2,2,3: 1/2 then 0: stops, b = 3.
 *   p = 1: (2 |.15 - .5| + 2 |.35 - .5| + 2 |.55 - 1|) / 6 = 1.9 / 6
 *   p = 2: sqrt((2 .35^2 + 2 .15^2 + 2 .45^2) / 6) = sqrt(0.695 / 6)
 * Equal width (right-closed, calscope's rule): b = 2 (0.5 in bin 0): 3/5, 1; b = 3: 1/3, 1;
 * b = 4: 1/2, 2/3, 1; b = 5: {.1,.2} {.3,.4} {.5,.6}: 1/2, 1/2, 1 and two empty bins (skipped);
 * b = n - 1 = 5 is the last tried: b = 5, the same three bins as above. */
static void test_sweep_by_hand(void **state)
{
    (void)state;
    const double f[] = { 0.1, 0.2, 0.3, 0.4, 0.5, 0.6 }, y[] = { 0, 1, 0, 1, 1, 1 };
    int b;
    assert_double_near(cs_ece_sweep(f, y, 6, 1, 1.0, &b), 1.9 / 6.0, 1e-15);
    assert_int_equal(b, 3);
    assert_double_near(cs_ece_sweep(f, y, 6, 1, 2.0, &b), sqrt(0.695 / 6.0), 1e-15);
    assert_int_equal(b, 3);
    assert_double_near(cs_ece_sweep(f, y, 6, 0, 1.0, &b), 1.9 / 6.0, 1e-15);
    assert_int_equal(b, 5);
    /* b = 2 already fails (means 1, 0): one bin, |mean f - mean y| */
    const double f2[] = { 0.2, 0.4, 0.6, 0.8 }, y2[] = { 1, 1, 0, 0 };
    assert_double_near(cs_ece_sweep(f2, y2, 4, 1, 1.0, &b), 0.0, 1e-15);
    assert_int_equal(b, 1);
    /* y non-decreasing in sorted order: every b is monotone, b = n - 1 */
    const double y3[] = { 0, 0, 1, 1 };
    cs_ece_sweep(f2, y3, 4, 1, 1.0, &b);
    assert_int_equal(b, 3);
    cs_ece_sweep(f2, y3, 4, 0, 1.0, &b);
    assert_int_equal(b, 3);
    /* two pairs: no b in 2..n-1, one bin */
    assert_double_near(cs_ece_sweep(f2, y3, 2, 1, 1.0, &b), 0.3, 1e-15);
    assert_int_equal(b, 1);
    assert_true(isnan(cs_ece_sweep(f2, y3, 0, 1, 1.0, &b)));
}

/* ---- relplot's smoothed reliability curve (cs_smece_curve) ------------------------------- */

enum { G = CS_SMECE_CURVE_POINTS };

/* The reflected kernel written out: phi_s at every image 2k + f and 2k - f, |k| <= 4 (the
 * rest is below exp(-(7/s)^2/2) for s <= 1). */
static double K(double t, double f, double s)
{
    double sum = 0.0;
    for (int k = -4; k <= 4; k++) {
        double a = (t - f - 2 * k) / s, b = (t + f - 2 * k) / s;
        sum += exp(-0.5 * a * a) + exp(-0.5 * b * b);
    }
    return sum / (s * sqrt(2.0 * M_PI));
}

static double mesh(int j) { return (double)j / (G - 1); }

/* Two samples worked out: f = (.3, .7), y = (0, 1): mu(t) = K(t,.7) / (K(t,.3) + K(t,.7)),
 * density (K(t,.3) + K(t,.7)) / 2. By the mirror symmetry K(1-t, 1-f) = K(t, f) the curve is
 * antisymmetric: mu(1-t) = 1 - mu(t). One sample: mu is its y wherever it is defined, and the
 * density has mass 1 on [0, 1]. Bad arguments: -1. */
static void test_smcurve_by_hand(void **state)
{
    (void)state;
    const double f[] = { 0.3, 0.7 }, y[] = { 0.0, 1.0 };
    double mu[G], dn[G];
    for (int si = 0; si < 3; si++) {
        const double s = (const double[]){ 0.1, 0.03, 0.5 }[si];
        assert_int_equal(cs_smece_curve(f, y, 2, s, G, mu, dn), 0);
        for (int j = 0; j < G; j++) {
            double t = mesh(j), a = K(t, 0.3, s), b = K(t, 0.7, s);
            assert_double_rel(dn[j], 0.5 * (a + b), 1e-15, 1e-13);
            /* no estimate where both samples are more than 9 sd away (smece.h): there the
             * density is below 1e-18 */
            if (fabs(t - 0.3) > 9 * s && fabs(t - 0.7) > 9 * s) {
                assert_true(isnan(mu[j]) && isnan(mu[G - 1 - j]) && dn[j] < 1e-17);
                continue;
            }
            /* the images beyond 9 sd left out move mu by at most phi_s(9 s) / density */
            double tol = 1e-15 + 3e-18 / (s * dn[j]);
            assert_double_rel(mu[j], b / (a + b), tol, 1e-13);
            assert_double_near(mu[j] + mu[G - 1 - j], 1.0, 1e-13 + 2 * tol);
        }
    }
    /* s = 0.1 at t = 0: K(0, f) = 2 phi_s(f) + (images at 2k +- f, k != 0: 13 sd away or
     * more), so mu(0) = phi(7) / (phi(3) + phi(7)) = 1 / (1 + e^20), density
     * (phi(3) + phi(7)) / s */
    assert_int_equal(cs_smece_curve(f, y, 2, 0.1, G, mu, dn), 0);
    assert_double_rel(mu[0], 1.0 / (1.0 + exp(20.0)), 0, 1e-14);
    assert_double_near(dn[0], (exp(-4.5) + exp(-24.5)) / (0.1 * sqrt(2.0 * M_PI)), 1e-15);

    const double f1[] = { 0.8 }, y1[] = { 1.0 };
    assert_int_equal(cs_smece_curve(f1, y1, 1, 0.2, G, mu, dn), 0);
    double mass = 0.0;
    for (int j = 0; j < G; j++) {
        assert_true(mu[j] == 1.0);
        if (j) mass += 0.5 * (dn[j] + dn[j - 1]) * (mesh(j) - mesh(j - 1));
    }
    assert_double_near(mass, 1.0, 1e-4);    /* the trapezoid rule's error at step 1/199 */
    /* a narrow kernel leaves t = 0 out of reach: no estimate there, density 0 */
    assert_int_equal(cs_smece_curve(f1, y1, 1, 0.05, G, mu, dn), 0);
    assert_true(isnan(mu[0]) && dn[0] == 0.0 && mu[G - 1] == 1.0);

    assert_int_equal(cs_smece_curve(f, y, 0, 0.1, G, mu, dn), -1);
    assert_int_equal(cs_smece_curve(f, y, 2, 0.0, G, mu, dn), -1);
    assert_int_equal(cs_smece_curve(f, y, 2, 0.1, 1, mu, dn), -1);
}

/* Calibrated by construction: at each of the values v = k/20 sit 20 samples, k of them
 * correct, so E[y | f = v] = v. The smoothing of the identity is the identity away from the
 * ends (the reflection bends it within a few sigma of 0 and 1). Row order changes nothing, to
 * the last bit. */
static void test_smcurve_calibrated_and_order(void **state)
{
    (void)state;
    enum { V = 21, PER = 20, N = V * PER };
    double f[N], y[N], fr[N], yr[N];
    for (int k = 0; k < V; k++)
        for (int i = 0; i < PER; i++) {
            f[k * PER + i] = k / 20.0;
            y[k * PER + i] = i < k ? 1.0 : 0.0;
        }
    for (int i = 0; i < N; i++) {      /* a permutation: 233 is prime to 420 */
        fr[i] = f[(i * 233) % N];
        yr[i] = y[(i * 233) % N];
    }
    const double s = 0.05;
    double mu[G], dn[G], mur[G], dnr[G];
    assert_int_equal(cs_smece_curve(f, y, N, s, G, mu, dn), 0);
    assert_int_equal(cs_smece_curve(fr, yr, N, s, G, mur, dnr), 0);
    double worst_in = 0.0;
    for (int j = 0; j < G; j++) {
        double t = mesh(j);
        assert_true(mu[j] == mur[j] && dn[j] == dnr[j]);
        if (t >= 4 * s && t <= 1 - 4 * s && fabs(mu[j] - t) > worst_in) worst_in = fabs(mu[j] - t);
        assert_true(fabs(mu[j] - t) < 0.06);        /* near the ends: pulled inwards by < 1.2 s */
    }
    assert_true(worst_in < 1e-3);
}

/* Against tests/oracles/reference.py's numpy implementation (every image of every sample summed),
 * through cs_evaluate: every sample, top1 and class:1, at smECE's sigma* and at 0.05.
 * tests/fixtures/smece_curve.tsv: /usr/bin/python3 tests/oracles/reference.py --write-smece-curve.
 * mu is compared where the density is at least 1e-3: the images beyond 9 sigma that the exact
 * sums leave out weigh below 3e-18 / (sigma density) of it, which is 1e-12 at sigma 0.001. */
static void test_smcurve_reference(void **state)
{
    (void)state;
    const char *fix = "tests/fixtures/smece_curve.tsv";
    FILE *in = fopen(fix, "r");
    if (!in) fail_msg("%s: cannot open (run the tests from the repository root)", fix);
    char line[1024], path[512] = "", lens[32] = "";
    double sigma = -1;
    cs_dataset *d = NULL;
    cs_result r;
    cs_result_reset(&r);
    int compared = 0, files = 0;
    while (fgets(line, sizeof line, in)) {
        if (line[0] == '#') continue;
        char p[512], l[32];
        double sg, mu, dn;
        int j;
        if (sscanf(line, "%511s\t%31s\t%lf\t%d\t%lf\t%lf", p, l, &sg, &j, &mu, &dn) != 6)
            fail_msg("%s: bad line %s", fix, line);
        if (strcmp(p, path) != 0) {
            cs_dataset_free(d);
            cs_load_options lo;
            cs_load_options_default(&lo);
            cs_error err;
            cs_error_clear(&err);
            /* the fixture's paths are "samples/NAME" */
            d = cs_load_file(cs_test_sample(strchr(p, '/') + 1), &lo, NULL, &err);
            if (!d) fail_msg("load %s: %s", p, err.msg);
            snprintf(path, sizeof path, "%s", p);
            sigma = -1;
            files++;
        }
        if (strcmp(l, lens) != 0 || sg != sigma) {
            cs_result_free(&r);
            cs_settings s;
            cs_settings_default(&s);
            cs_error err;
            if (cs_settings_set_lens(&s, l, &err) != CS_OK) fail_msg("%s", err.msg);
            s.smece_sigma = sg;
            cs_prepared *pp = cs_prepare(d, &s, &err);
            if (!pp) fail_msg("%s %s: %s", p, l, err.msg);
            assert_int_equal(cs_evaluate(pp, NULL, 0, CS_WANT_SMECE_CURVE, NULL, &r, &err), CS_OK);
            cs_prepared_free(pp);
            assert_int_equal(r.n_smece_curve, G);
            assert_true(r.smece_sigma == sg);
            snprintf(lens, sizeof lens, "%s", l);
            sigma = sg;
        }
        assert_true(j >= 0 && j < G);
        assert_double_rel(r.smece_density[j], dn, 1e-15, 1e-12);
        if (dn >= 1e-3) assert_double_near(r.smece_mu[j], mu, 1e-12);
        else assert_true(isnan(r.smece_mu[j]) || (r.smece_mu[j] >= 0 && r.smece_mu[j] <= 1));
        compared++;
    }
    fclose(in);
    cs_result_free(&r);
    cs_dataset_free(d);
    assert_true(files >= 10 && compared >= 1000);
}

/* Through cs_evaluate: the curve at the automatic bandwidth is the one at sigma* (smece and
 * smece_sigma come with it, asked for or not); NULL on the lenses smECE is not defined on. */
static void test_smcurve_evaluate(void **state)
{
    (void)state;
    const double P[] = { 0.8, 0.2, 0.4, 0.6, 0.1, 0.9, 0.7, 0.3 };
    const int32_t L[] = { 0, 0, 1, 1 };
    cs_dataset *d = cs_test_dataset(4, 2, P, L);
    cs_settings s;
    cs_settings_default(&s);
    cs_error err;
    cs_prepared *p = cs_prepare(d, &s, &err);
    cs_result r;
    assert_int_equal(cs_evaluate(p, NULL, 0, CS_WANT_SMECE_CURVE, NULL, &r, &err), CS_OK);
    const double f[] = { 0.6, 0.7, 0.8, 0.9 }, y[] = { 0, 0, 1, 1 };
    double sig, mu[G], dn[G];
    assert_true(r.smece == cs_smece_auto(f, y, 4, &sig) && r.smece_sigma == sig);
    assert_int_equal(cs_smece_curve(f, y, 4, sig, G, mu, dn), 0);
    assert_int_equal(r.n_smece_curve, G);
    assert_memory_equal(r.smece_mu, mu, sizeof mu);
    assert_memory_equal(r.smece_density, dn, sizeof dn);
    assert_null(r.rece_acc);
    cs_result_free(&r);
    assert_null(r.smece_mu);
    assert_int_equal(cs_evaluate(p, NULL, 0, CS_WANT_ALL, NULL, &r, &err), CS_OK);
    assert_null(r.smece_mu);                          /* not in CS_WANT_ALL */
    cs_result_free(&r);
    cs_prepared_free(p);
    static const char *const none[] = { "classwise", "topk:2", "full" };
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(cs_settings_set_lens(&s, none[i], &err), CS_OK);
        p = cs_prepare(d, &s, &err);
        assert_non_null(p);
        assert_int_equal(cs_evaluate(p, NULL, 0, CS_WANT_SMECE_CURVE, NULL, &r, &err), CS_OK);
        assert_null(r.smece_mu);
        assert_null(r.smece_density);
        assert_int_equal(r.n_smece_curve, 0);
        assert_true(isnan(r.smece));
        cs_result_free(&r);
        cs_prepared_free(p);
    }
    cs_dataset_free(d);
}

/* Through cs_evaluate: top1 and class:C give numbers, classwise NAN; --smece-sigma fixes the
 * bandwidth; the sweep follows --binning and --distance. */
static void test_evaluate_lenses(void **state)
{
    (void)state;
    /* two classes; top-1 confidences 0.8, 0.6, 0.9, 0.7 */
    const double P[] = { 0.8, 0.2, 0.4, 0.6, 0.1, 0.9, 0.7, 0.3 };
    const int32_t L[] = { 0, 0, 1, 1 };
    cs_dataset *d = cs_test_dataset(4, 2, P, L);
    cs_settings s;
    cs_settings_default(&s);
    cs_error err;
    cs_prepared *p = cs_prepare(d, &s, &err);
    assert_non_null(p);
    cs_result r;
    assert_int_equal(cs_evaluate(p, NULL, 0, CS_WANT_ALL, NULL, &r, &err), CS_OK);
    /* top-1: f = (.8, .6, .9, .7), correct (1, 0, 1, 0) */
    const double f[] = { 0.6, 0.7, 0.8, 0.9 }, y[] = { 0, 0, 1, 1 };
    double sig, want = cs_smece_auto(f, y, 4, &sig);
    assert_true(r.smece == want && r.smece_sigma == sig);
    double pl, db;
    cs_l2ce(f, y, 4, 15, &pl, &db, NULL);
    assert_true(r.l2ce == pl && r.l2ce_debiased == db);
    int b;
    assert_true(r.ece_sweep == cs_ece_sweep(f, y, 4, 0, 1.0, &b));
    assert_true(r.ece_sweep_bins == b);
    cs_result_free(&r);
    cs_prepared_free(p);

    /* --smece-sigma and a bad value */
    assert_int_equal(cs_settings_set_smece_sigma(&s, "0.05", &err), CS_OK);
    assert_int_equal(cs_settings_set_smece_sigma(&s, "0", &err), CS_EUSAGE);
    assert_string_equal(err.msg, "--smece-sigma: need a number in [0.001, 1], got '0'");
    assert_true(s.smece_sigma == 0.05);
    assert_int_equal(cs_settings_set_lens(&s, "class:1", &err), CS_OK);
    p = cs_prepare(d, &s, &err);
    assert_non_null(p);
    assert_int_equal(cs_evaluate(p, NULL, 0, CS_WANT_SMECE, NULL, &r, &err), CS_OK);
    /* p[1] = (.2, .6, .9, .3), label == 1: (0, 0, 1, 1) */
    const double f1[] = { 0.2, 0.3, 0.6, 0.9 }, y1[] = { 0, 1, 0, 1 };
    assert_true(r.smece == cs_smece_at(f1, y1, 4, 0.05));
    assert_true(r.smece_sigma == 0.05);
    assert_true(isnan(r.l2ce) && isnan(r.ece_sweep));   /* not asked for */
    cs_result_free(&r);
    cs_prepared_free(p);

    /* classwise: no number; kd-tree bins: no sweep */
    assert_int_equal(cs_settings_set_lens(&s, "classwise", &err), CS_OK);
    p = cs_prepare(d, &s, &err);
    assert_int_equal(cs_evaluate(p, NULL, 0, CS_WANT_ALL, NULL, &r, &err), CS_OK);
    assert_true(isnan(r.smece) && isnan(r.smece_sigma) && isnan(r.l2ce) && isnan(r.l2ce_debiased));
    assert_true(isnan(r.ece_sweep) && isnan(r.ece_sweep_bins));
    cs_result_free(&r);
    cs_prepared_free(p);
    assert_int_equal(cs_settings_set_lens(&s, "top1", &err), CS_OK);
    assert_int_equal(cs_settings_set_binning(&s, "kdtree", &err), CS_OK);
    p = cs_prepare(d, &s, &err);
    assert_int_equal(cs_evaluate(p, NULL, 0, CS_WANT_ALL, NULL, &r, &err), CS_OK);
    assert_true(isnan(r.ece_sweep) && !isnan(r.l2ce));
    cs_result_free(&r);
    cs_prepared_free(p);
    cs_dataset_free(d);
}

/* Large samples, where smECE takes its other paths (the grid from moments, the pieces and
 * the integral windows on two threads): values worked out by hand.
 * - Every residual of one sign (y = 0 for all): the smoothed residual never changes sign and
 *   the reflected kernel has mass 1 on [0, 1], so smECE_s = mean f for every s, and the
 *   automatic bandwidth is the fixed point s* = mean f. With y = 1 for all: mean (1 - f).
 * - Two groups far apart against sigma: f in [0.15, 0.25] with y = 0 and f in [0.75, 0.85]
 *   with y = 1 at s = 0.02: one sign change near 0.5, where each group's kernel mass beyond
 *   it is below e^-100; smECE = mean |f - y|.
 * Within 1e-12: the sums of 300,000 terms of ~1e-6 carry rounding near 1e-13 (the former
 * implementation, one image array and one thread, gave the same bits). */
static uint64_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 11;
}

static void test_smece_large_by_hand(void **state)
{
    (void)state;
    size_t n = 300000;
    double *f = malloc(n * sizeof *f), *y = malloc(n * sizeof *y);
    assert_true(f && y);
    uint64_t seed = 7;
    double m0 = 0.0, m1 = 0.0;
    for (size_t i = 0; i < n; i++) {
        f[i] = 0.05 + 0.9 * (double)lcg(&seed) * 0x1.0p-53;
        y[i] = 0.0;
        m0 += f[i];
        m1 += 1.0 - f[i];
    }
    m0 /= (double)n;
    m1 /= (double)n;
    assert_double_near(cs_smece_at(f, y, n, 0.1), m0, 1e-12);
    assert_double_near(cs_smece_at(f, y, n, 0.02), m0, 1e-12);
    double s, v = cs_smece_auto(f, y, n, &s);
    assert_double_near(v, m0, 1e-12);
    assert_double_near(s, m0, 1e-12);
    for (size_t i = 0; i < n; i++) y[i] = 1.0;
    assert_double_near(cs_smece_at(f, y, n, 0.1), m1, 1e-12);

    double mr = 0.0;
    for (size_t i = 0; i < n; i++) {
        int hi = i % 2;
        f[i] = (hi ? 0.75 : 0.15) + 0.1 * (double)lcg(&seed) * 0x1.0p-53;
        y[i] = hi ? 1.0 : 0.0;
        mr += fabs(f[i] - y[i]);
    }
    mr /= (double)n;
    assert_double_near(cs_smece_at(f, y, n, 0.02), mr, 1e-12);
    free(f);
    free(y);
}

/* cs_evaluate on a large file computes smECE, the L2 CE and ECE_sweep on the samples in
 * value order without copying them as doubles (one scratch block): the same numbers, bit for
 * bit, as the public functions on copies sorted stably (ties in row order: the values have
 * four digits, so there are many). shape 1: the lower half distinct (smooth ECE's merge of
 * equal values starts at the first tie, not at the first sample), ties above 0.5; shape 2:
 * no two values equal (no merge at all). */
static int by_f(const void *a, const void *b)
{
    const double *x = a, *y = b;   /* (f, y, row) triples */
    if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
    return (x[2] > y[2]) - (x[2] < y[2]);
}

static void test_evaluate_large_copies(void **state)
{
    (void)state;
    for (int shape = 0; shape < 3; shape++) {
    size_t n = 120000;
    double *P = malloc(2 * n * sizeof *P), *t3 = malloc(3 * n * sizeof *t3);
    int32_t *L = malloc(n * sizeof *L);
    assert_true(P && t3 && L);
    uint64_t seed = 11;
    for (size_t i = 0; i < n; i++) {
        double p1 = (double)(lcg(&seed) % 10001) / 10000.0;
        if (shape == 2 || (shape == 1 && p1 < 0.5)) p1 = 0.5 * (double)i / (double)n + (shape == 2 ? 0.25 : 0.0);
        P[2 * i] = 1.0 - p1;
        P[2 * i + 1] = p1;
        L[i] = (double)(lcg(&seed) % 1000) / 1000.0 < p1 * 0.8 + 0.1 ? 1 : 0;
    }
    cs_dataset *d = cs_test_dataset(n, 2, P, L);
    cs_settings s;
    cs_settings_default(&s);
    cs_error err;
    assert_int_equal(cs_settings_set_lens(&s, "class:1", &err), CS_OK);
    cs_prepared *p = cs_prepare(d, &s, &err);
    assert_non_null(p);
    cs_result r;
    assert_int_equal(cs_evaluate(p, NULL, 0, CS_WANT_ALL, NULL, &r, &err), CS_OK);
    for (size_t i = 0; i < n; i++) {
        t3[3 * i] = P[2 * i + 1];
        t3[3 * i + 1] = L[i] == 1;
        t3[3 * i + 2] = (double)i;
    }
    qsort(t3, n, 3 * sizeof *t3, by_f);
    double *f = malloc(n * sizeof *f), *y = malloc(n * sizeof *y);
    assert_true(f && y);
    for (size_t i = 0; i < n; i++) {
        f[i] = t3[3 * i];
        y[i] = t3[3 * i + 1];
    }
    double sig, want = cs_smece_auto(f, y, n, &sig);
    assert_true(r.smece == want && r.smece_sigma == sig);
    double pl, db;
    cs_l2ce(f, y, n, 15, &pl, &db, NULL);
    assert_true(r.l2ce == pl && r.l2ce_debiased == db);
    int b;
    assert_true(r.ece_sweep == cs_ece_sweep(f, y, n, 0, 1.0, &b));
    assert_true(r.ece_sweep_bins == b);
    cs_result_free(&r);
    cs_prepared_free(p);
    cs_dataset_free(d);
    free(P); free(t3); free(L); free(f); free(y);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_smece_one_sample),
        cmocka_unit_test(test_smece_two_samples),
        cmocka_unit_test(test_smece_floor),
        cmocka_unit_test(test_smece_order_invariant),
        cmocka_unit_test(test_smece_hint_changes_nothing),
        cmocka_unit_test(test_smece_boxes_match_pairs),
        cmocka_unit_test(test_smcurve_boxes_match_images),
        cmocka_unit_test(test_sbox_lanes_match_scalar),
        cmocka_unit_test(test_smece_relplot_one),
        cmocka_unit_test(test_l2ce_by_hand),
        cmocka_unit_test(test_l2ce_unbiased),
        cmocka_unit_test(test_sweep_by_hand),
        cmocka_unit_test(test_evaluate_lenses),
        cmocka_unit_test(test_smece_large_by_hand),
        cmocka_unit_test(test_evaluate_large_copies),
        cmocka_unit_test(test_smcurve_by_hand),
        cmocka_unit_test(test_smcurve_calibrated_and_order),
        cmocka_unit_test(test_smcurve_reference),
        cmocka_unit_test(test_smcurve_evaluate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
