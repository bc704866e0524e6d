/* RECE-G's box path (src/engine/metrics/rece_g_box.c, rece_g.c): the per-box moment
 * expansion against the per-sample weights on the same data (the switch moved with
 * cs_mx_rece_box_min), against values worked by hand, the plan's series against
 * cs_mx_gauss_weights directly, and the conditions under which the box path is (not) taken. */
#include "support/cs_test.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calscope/dataset.h"
#include "calscope/metrics.h"
#include "engine/metrics/mx.h"

static uint64_t st = 0x2545f4914f6cdd1dull;
static double urand(void) { return cs_test_xorshift_star(&st); }

/* n x k rows: softmax-like probabilities (sharp when `sharp`), labels drawn from them. */
static cs_dataset *mk(size_t n, size_t k, int sharp)
{
    cs_dataset *d = cs_test_dataset_new(n, k);
    for (size_t i = 0; i < n; i++) {
        double s = 0, *r = d->prob + i * k;
        for (size_t j = 0; j < k; j++) s += (r[j] = exp((sharp ? 6.0 : 2.0) * urand()));
        for (size_t j = 0; j < k; j++) r[j] /= s;
        double u = urand(), c = 0;
        d->label[i] = (int32_t)(k - 1);
        for (size_t j = 0; j < k; j++) {
            c += r[j];
            if (u < c) { d->label[i] = (int32_t)j; break; }
        }
    }
    cs_test_prepare(d);
    return d;
}

/* Two-class rows whose class-0 probability is v[i] and whose label is 0 when y[i]. */
static cs_dataset *mk2(size_t n, const double *v, const uint8_t *y)
{
    cs_dataset *d = cs_test_dataset_new(n, 2);
    for (size_t i = 0; i < n; i++) {
        d->prob[2 * i] = v[i];
        d->prob[2 * i + 1] = 1.0 - v[i];
        d->label[i] = y[i] ? 0 : 1;
    }
    cs_test_prepare(d);
    return d;
}

/* RECE-G of a lens with the box path from `box_min` items on. */
static double rece(const cs_dataset *d, const char *lens, int bins, double sigma, size_t box_min,
                   const uint32_t *idx, size_t ni)
{
    cs_settings s;
    cs_settings_default(&s);
    cs_error e;
    assert_int_equal(cs_settings_set_lens(&s, lens, &e), CS_OK);
    s.bins = bins;
    s.sigma = sigma;
    cs_mx_rece_box_min(box_min);
    cs_prepared *p = cs_prepare(d, &s, &e);
    assert_non_null(p);
    cs_result r;
    assert_int_equal(cs_evaluate(p, idx, ni, CS_WANT_RECE_G, NULL, &r, &e), CS_OK);
    double v = r.rece_g;
    cs_result_free(&r);
    cs_prepared_free(p);
    cs_mx_rece_box_min(2048);
    return v;
}

static void near_rel(double got, double want, double rel, const char *what)
{
    if (!(fabs(got - want) <= rel * fabs(want) + 1e-300))
        fail_msg("%s: box %.17g, per sample %.17g (rel %.3g)", what, got, want,
                 fabs(got - want) / fabs(want));
}

/* RECE-G of the whole file by the box path and by the per-sample path: equal to 1e-13. */
static void both_paths(const cs_dataset *d, const char *lens, int bins, double sigma, const char *what)
{
    near_rel(rece(d, lens, bins, sigma, 0, NULL, 0), rece(d, lens, bins, sigma, SIZE_MAX, NULL, 0), 1e-13, what);
}

/* Box path == per-sample path to 1e-13 (relative) over sigma, M and lenses. */
static void test_box_vs_per_sample(void **state)
{
    (void)state;
    cs_dataset *d = mk(6000, 5, 0), *sharp = mk(6000, 5, 1);
    static const double sig[] = {10.0, 1.0, 0.3, 0.1, 0.05, 0.01};
    static const int bins[] = {1, 2, 15, 64, 65, 100, 1000};
    char what[96];
    for (size_t a = 0; a < sizeof sig / sizeof sig[0]; a++)
        for (size_t b = 0; b < sizeof bins / sizeof bins[0]; b++) {
            if (bins[b] == 1000 && sig[a] < 0.05) continue;   /* per-sample side too slow */
            const cs_dataset *dd = (a + b) % 2 ? sharp : d;
            const char *lens = b % 3 == 0 ? "class:2" : "top1";
            snprintf(what, sizeof what, "sigma %g M %d %s", sig[a], bins[b], lens);
            both_paths(dd, lens, bins[b], sig[a], what);
        }
    cs_dataset_free(d);
    cs_dataset_free(sharp);
}

/* Adversarial placements: all the mass in one box, values exactly 0 and 1 (the first and
 * the last box's far ends, v * B == B), a single value repeated, bins at M = 1 and 1000. */
static void test_adversarial(void **state)
{
    (void)state;
    size_t n = 5000;
    double *v = malloc(n * sizeof *v);
    uint8_t *y = malloc(n);
    char what[64];
    for (int c = 0; c < 4; c++) {
        for (size_t i = 0; i < n; i++) {
            double u = urand();
            v[i] = c == 0 ? 0.41 + 0.01 * u                       /* one box at sigma 0.1 */
                 : c == 1 ? (u < 0.5 ? 0.0 : 1.0)                 /* the ends only */
                 : c == 2 ? (u < 0.3 ? 0.0 : u < 0.6 ? 1.0 : u)   /* ends and inside */
                 : 0.5 + 1e-9 * (double)(i % 3);                  /* nearly one value */
            y[i] = urand() < 0.6;
        }
        cs_dataset *d = mk2(n, v, y);
        static const int bins[] = {1, 15, 1000};
        static const double sig[] = {0.1, 0.02, 3.0};
        for (int b = 0; b < 3; b++)
            for (int s = 0; s < 3; s++) {
                if (bins[b] == 1000 && s == 1) continue;
                snprintf(what, sizeof what, "case %d M %d sigma %g", c, bins[b], sig[s]);
                both_paths(d, "class:0", bins[b], sig[s], what);
            }
        cs_dataset_free(d);
    }
    free(v);
    free(y);
}

/* Values worked by hand. (a) Every confidence 0.3, 70 % correct: each bin's weight w_b is the
 * same for all samples and they sum to 1, so RECE-G = sum_b w_b |0.7 - 0.3| = 0.4. (b) M = 1:
 * the single weight is 1, RECE-G = |mean(y) - mean(c)|. (c) M = 2, sigma 0.2, half the samples
 * at 0.25 (all correct), half at 0.75 (none): w_0(0.25) = (Phi(1.25) - Phi(-1.25)) /
 * (Phi(3.75) - Phi(-1.25)) and w_0(0.75) = 1 - w_0(0.25) by symmetry, so D_0 = (n/2)(w 0.75 -
 * (1-w) 0.75), D_1 = (n/2)((1-w) 0.75 - w 0.75) and RECE-G = 0.75 |2w - 1|.
 * Tolerance 1e-12: both paths add n = 10000 equal terms in sequence, whose rounding errors do
 * not cancel (n eps); the per-sample path is off by 6e-14 on (a), the box path by 7e-14. */
static void test_by_hand(void **state)
{
    (void)state;
    size_t n = 10000;
    double *v = malloc(n * sizeof *v);
    uint8_t *y = malloc(n);
    for (size_t i = 0; i < n; i++) {
        v[i] = 0.3;
        y[i] = i % 10 < 7;
    }
    cs_dataset *d = mk2(n, v, y);
    assert_double_near(rece(d, "class:0", 15, 0.1, 0, NULL, 0), 0.4, 1e-12);
    assert_double_near(rece(d, "class:0", 1000, 0.05, 0, NULL, 0), 0.4, 1e-12);
    cs_dataset_free(d);

    double sv = 0, sy = 0;
    for (size_t i = 0; i < n; i++) {
        v[i] = urand();
        y[i] = urand() < 0.4;
        sv += v[i];
        sy += y[i];
    }
    d = mk2(n, v, y);
    assert_double_near(rece(d, "class:0", 1, 0.1, 0, NULL, 0), fabs(sy - sv) / (double)n, 1e-12);
    cs_dataset_free(d);

    for (size_t i = 0; i < n; i++) {
        v[i] = i % 2 ? 0.75 : 0.25;
        y[i] = !(i % 2);
    }
    d = mk2(n, v, y);
    double Phi125 = 0.5 * erfc(-1.25 / sqrt(2.0)), Phim125 = 0.5 * erfc(1.25 / sqrt(2.0));
    double Phi375 = 0.5 * erfc(-3.75 / sqrt(2.0));
    double w = (Phi125 - Phim125) / (Phi375 - Phim125);
    assert_double_near(rece(d, "class:0", 2, 0.2, 0, NULL, 0), 0.75 * fabs(2.0 * w - 1.0), 1e-12);
    cs_dataset_free(d);
    free(v);
    free(y);
}

/* The plan's series at points across every box against cs_mx_gauss_weights itself: the
 * truncation (<= 1e-17) is far below rounding, so they agree to the per-sample weights' own
 * rounding. */
static void test_series_against_weights(void **state)
{
    (void)state;
    static const double sig[] = {10.0, 0.7, 0.1, 0.013, 0.002};
    static const int bins[] = {1, 15, 100};
    for (size_t a = 0; a < sizeof sig / sizeof sig[0]; a++)
        for (size_t b = 0; b < sizeof bins / sizeof bins[0]; b++) {
            int M = bins[b];
            cs_mx_rgbox x;
            assert_int_equal(cs_mx_rgbox_init(&x, sig[a], M, 100000000), 1);
            double *e = malloc((size_t)(M + 1) * sizeof *e), *w = malloc((size_t)M * sizeof *w);
            cs_mx_edges(e, M);
            double worst = 0;
            for (int q = 0; q < x.B; q += x.B > 50 ? 7 : 1)
                for (int k = 0; k <= 8; k++) {
                    /* s from the rounded c, as the moment pass forms it: the weights move by
                     * phi / sigma per unit of c, so an ulp of c matters at small sigma */
                    double c = x.tq[q] + (-1.0 + 0.25 * k) / x.twoB;
                    if (c < 0 || c > 1) continue;
                    double s = (c - x.tq[q]) * x.twoB;
                    cs_mx_gauss_weights(c, sig[a], e, M, w);
                    for (int bin = 0; bin < M; bin++) {
                        const double *cf = x.coef + ((size_t)q * (size_t)M + (size_t)bin) * (size_t)x.P1;
                        double ser = 0, f = 1;
                        for (int p = 0; p < x.P1; p++, f *= s) ser += cf[p] * f;
                        if (fabs(ser - w[bin]) > worst) worst = fabs(ser - w[bin]);
                    }
                }
            /* cs_mx_gauss_weights forms each mass as a difference of tails up to 1/2, then
             * divides by Z >= Phi(1/sigma) - 1/2: its own rounding is ~1e-16 / Z */
            double zmin = 0.5 * erfc(-1.0 / sig[a] / sqrt(2.0)) - 0.5, tol = 1e-15 + 4e-16 / zmin;
            if (!(worst <= tol))
                fail_msg("sigma %g M %d: series off the weights by %.3g (tol %.3g)", sig[a], M, worst, tol);
            free(e);
            free(w);
            cs_mx_rgbox_free(&x);
        }
}

/* When the box path is (not) taken: no plan for sigma below 2/4096 (more boxes than B_MAX)
 * or where the table would cost more than the per-sample weights of the items; the default
 * switch at 2048 items; and a value outside [0,1] sends the problem to the per-sample path
 * (the same bits as with the box path switched off). */
static void test_switch(void **state)
{
    (void)state;
    cs_mx_rgbox x;
    assert_int_equal(cs_mx_rgbox_init(&x, 1e-6, 15, 100000000), 0);
    assert_int_equal(cs_mx_rgbox_init(&x, 2.0 / 4096 * 0.999, 15, 100000000), 0);
    assert_int_equal(cs_mx_rgbox_init(&x, 2.0 / 4096 * 1.001, 15, 100000000), 1);
    assert_int_equal(x.B, 4092);   /* ceil(2 / sigma) */
    cs_mx_rgbox_free(&x);
    /* 4096 boxes x 15 bins x 17 orders are worth it for a million items, not for 2048 */
    assert_int_equal(cs_mx_rgbox_init(&x, 2.0 / 4096 * 1.001, 15, 2048), 0);
    assert_int_equal(cs_mx_rgbox_init(&x, 0.1, 15, 2048), 1);
    assert_int_equal(x.B, 80);   /* 1 / (2 sigma RHO_FINE) */
    cs_mx_rgbox_free(&x);
    assert_int_equal(cs_mx_rgbox_init(&x, 0.1, 15, 1), 0);

    /* either side of sigma's switch on 100000 items: boxes (1e-13 of the weights), or the
     * per-sample path itself (the same bits) */
    cs_dataset *big = mk(100000, 3, 1);
    double hi = 2.0 / 4096 * 1.001, lo = 2.0 / 4096 * 0.999;
    assert_int_equal(cs_mx_rgbox_init(&x, hi, 15, 100000), 1);
    cs_mx_rgbox_free(&x);
    near_rel(rece(big, "top1", 15, hi, 0, NULL, 0), rece(big, "top1", 15, hi, SIZE_MAX, NULL, 0),
             1e-13, "sigma above the switch");
    double b0 = rece(big, "top1", 15, lo, 0, NULL, 0), b1 = rece(big, "top1", 15, lo, SIZE_MAX, NULL, 0);
    assert_memory_equal(&b0, &b1, sizeof b0);
    cs_dataset_free(big);

    /* default switch: 2047 items per sample (identical to the box path off), 2048 boxes */
    cs_dataset *d = mk(2048, 4, 0);
    uint32_t idx[2048];
    for (uint32_t i = 0; i < 2048; i++) idx[i] = i;
    cs_settings s;
    cs_settings_default(&s);
    cs_error e;
    cs_prepared *p = cs_prepare(d, &s, &e);
    cs_result r1, r2;
    cs_mx_rece_box_min(2048);
    assert_int_equal(cs_evaluate(p, idx, 2047, CS_WANT_RECE_G, NULL, &r1, &e), CS_OK);
    cs_prepared_free(p);
    double off = rece(d, "top1", 15, 0.1, SIZE_MAX, idx, 2047);
    assert_memory_equal(&r1.rece_g, &off, sizeof off);
    p = cs_prepare(d, &s, &e);
    assert_int_equal(cs_evaluate(p, NULL, 0, CS_WANT_RECE_G, NULL, &r2, &e), CS_OK);
    cs_prepared_free(p);
    double on = rece(d, "top1", 15, 0.1, 0, NULL, 0);
    assert_memory_equal(&r2.rece_g, &on, sizeof on);
    cs_result_free(&r1);
    cs_result_free(&r2);
    cs_dataset_free(d);

    /* a class column with a value above 1 */
    d = mk(5000, 3, 0);
    d->prob[3 * 17 + 1] = 1.25;
    d->prob[3 * 4000 + 1] = -0.5;
    double a = rece(d, "class:1", 15, 0.1, 0, NULL, 0), b = rece(d, "class:1", 15, 0.1, SIZE_MAX, NULL, 0);
    assert_memory_equal(&a, &b, sizeof a);
    cs_dataset_free(d);
}

/* Class-wise: the mean of the class:C values bit for bit with the box path (item halves from
 * 200000 items, class halves below), one class with a value outside [0,1] (that class per
 * sample), and within 1e-13 of the per-sample class-wise value. */
static void test_classwise(void **state)
{
    (void)state;
    static const size_t N[] = {7000, 210000};
    static const size_t K[] = {9, 3};
    for (int t = 0; t < 2; t++) {
        cs_dataset *d = mk(N[t], K[t], t == 0);
        if (t == 0) d->prob[K[t] * 99 + 4] = 1.5;
        for (int bins = 15; bins <= 100; bins += 85) {
            double cw = rece(d, "classwise", bins, 0.1, 0, NULL, 0), total = 0;
            for (size_t c = 0; c < K[t]; c++) {
                char lens[32];
                snprintf(lens, sizeof lens, "class:%zu", c);
                total += rece(d, lens, bins, 0.1, 0, NULL, 0);
            }
            double mean = total / (double)K[t];
            if (!(cw == mean)) fail_msg("n %zu M %d: classwise %.17g, mean of classes %.17g", N[t], bins, cw, mean);
            double ps = rece(d, "classwise", bins, 0.1, SIZE_MAX, NULL, 0);
            near_rel(cw, ps, 1e-13, "classwise");
        }
        cs_dataset_free(d);
    }
}

/* Class-wise with more box moments than fit beside each other (sigma 0.005: 400 boxes x 17
 * orders a class; 320 classes x 6800 x 2 > CW_MAX_ACC): class by class over column copies,
 * still the mean of the class:C values bit for bit. */
static void test_classwise_columns(void **state)
{
    (void)state;
    size_t n = 7000, k = 320;
    cs_dataset *d = mk(n, k, 1);
    cs_mx_rgbox x;
    assert_int_equal(cs_mx_rgbox_init(&x, 0.005, 15, n), 1);
    assert_true((double)k * x.B * x.P1 * 2.0 > (double)(1 << 22));
    cs_mx_rgbox_free(&x);
    double cw = rece(d, "classwise", 15, 0.005, 2048, NULL, 0), total = 0;
    for (size_t c = 0; c < k; c++) {
        char lens[32];
        snprintf(lens, sizeof lens, "class:%zu", c);
        total += rece(d, lens, 15, 0.005, 2048, NULL, 0);
    }
    double mean = total / (double)k;
    if (!(cw == mean)) fail_msg("classwise %.17g, mean of classes %.17g", cw, mean);
    cs_dataset_free(d);
}

/* Large inputs: the two fixed item halves; a full evaluation (NULL) and the same rows listed
 * in reverse give the same bits, and bootstrap-like subsets with repeats match per sample. */
static void test_large_and_subsets(void **state)
{
    (void)state;
    size_t n = 250000;
    cs_dataset *d = mk(n, 4, 0);
    uint32_t *rev = malloc(n * sizeof *rev), *boot = malloc(n * sizeof *boot);
    for (size_t i = 0; i < n; i++) {
        rev[i] = (uint32_t)(n - 1 - i);
        boot[i] = (uint32_t)(urand() * (double)n);
    }
    double a = rece(d, "top1", 15, 0.1, 2048, NULL, 0);
    double b = rece(d, "top1", 15, 0.1, 2048, rev, n);
    assert_memory_equal(&a, &b, sizeof a);
    near_rel(a, rece(d, "top1", 15, 0.1, SIZE_MAX, NULL, 0), 1e-13, "full 250000");
    double c = rece(d, "top1", 15, 0.1, 2048, boot, 5000);
    near_rel(c, rece(d, "top1", 15, 0.1, SIZE_MAX, boot, 5000), 1e-13, "subset 5000");
    c = rece(d, "top1", 15, 0.1, 2048, boot, n);
    near_rel(c, rece(d, "top1", 15, 0.1, SIZE_MAX, boot, n), 1e-13, "bootstrap 250000");
    free(rev);
    free(boot);
    cs_dataset_free(d);
}

/* The smoothed curve (A~/W~, C~/W~ per bin) of a lens with the box path from box_min items. */
static void curve(const cs_dataset *d, const char *lens, int bins, double sigma, size_t box_min,
                  double *acc, double *conf)
{
    cs_settings s;
    cs_settings_default(&s);
    cs_error e;
    assert_int_equal(cs_settings_set_lens(&s, lens, &e), CS_OK);
    s.bins = bins;
    s.sigma = sigma;
    cs_mx_rece_box_min(box_min);
    cs_prepared *p = cs_prepare(d, &s, &e);
    assert_non_null(p);
    cs_result r;
    assert_int_equal(cs_evaluate(p, NULL, 0, CS_WANT_RECE_CURVE, NULL, &r, &e), CS_OK);
    assert_int_equal(r.n_rece, bins);
    memcpy(acc, r.rece_acc, (size_t)bins * sizeof *acc);
    memcpy(conf, r.rece_conf, (size_t)bins * sizeof *conf);
    cs_result_free(&r);
    cs_prepared_free(p);
    cs_mx_rece_box_min(2048);
}

/* The curve by boxes == per sample to 1e-12 where every bin has weight; where a bin's weight
 * is below 1e-9 of the items (a bin far from every value) the per-sample path is taken, the
 * same bits. */
static void test_curve(void **state)
{
    (void)state;
    cs_dataset *d = mk(6000, 5, 0), *sharp = mk(6000, 40, 1);
    struct { const cs_dataset *d; const char *lens; int bins; double sigma; int far; } cases[] = {
        {d, "top1", 15, 0.1, 0}, {d, "class:2", 15, 0.1, 0}, {d, "class:2", 40, 0.3, 0},
        {sharp, "class:0", 50, 0.02, 1}, {sharp, "class:0", 15, 0.1, 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int M = cases[c].bins;
        double a0[64], c0[64], a1[64], c1[64];
        curve(cases[c].d, cases[c].lens, M, cases[c].sigma, 0, a0, c0);
        curve(cases[c].d, cases[c].lens, M, cases[c].sigma, SIZE_MAX, a1, c1);
        if (cases[c].far) {
            assert_memory_equal(a0, a1, (size_t)M * sizeof *a0);
            assert_memory_equal(c0, c1, (size_t)M * sizeof *c0);
            continue;
        }
        for (int b = 0; b < M; b++) {
            char what[64];
            snprintf(what, sizeof what, "case %zu bin %d acc", c, b);
            near_rel(a0[b], a1[b], 1e-13, what);
            snprintf(what, sizeof what, "case %zu bin %d conf", c, b);
            near_rel(c0[b], c1[b], 1e-13, what);
        }
    }
    cs_dataset_free(d);
    cs_dataset_free(sharp);
}

/* The last plan is kept and shared between threads: two threads evaluating alternately at
 * two sigmas (each evaluation may replace the kept plan the other is using) get exactly the
 * numbers of one thread alone (run under ThreadSanitizer in CI's tsan job). */
typedef struct { const cs_prepared *p[2]; double want[2]; int bad; } conc;

static void *conc_run(void *arg)
{
    conc *c = arg;
    for (int r = 0; r < 40; r++) {
        int k = r % 2;
        cs_result res;
        cs_error e;
        if (cs_evaluate(c->p[k], NULL, 0, CS_WANT_RECE_G, NULL, &res, &e) != CS_OK ||
            memcmp(&res.rece_g, &c->want[k], sizeof res.rece_g) != 0)
            c->bad = 1;
        cs_result_free(&res);
    }
    return NULL;
}

static void test_concurrent_plans(void **state)
{
    (void)state;
    cs_dataset *d = mk(5000, 3, 0);
    cs_settings s;
    cs_settings_default(&s);
    cs_error e;
    conc c[2];
    cs_prepared *p[2];
    double want[2];
    for (int k = 0; k < 2; k++) {
        s.sigma = k ? 0.07 : 0.1;
        p[k] = cs_prepare(d, &s, &e);
        assert_non_null(p[k]);
        want[k] = rece(d, "top1", 15, s.sigma, 2048, NULL, 0);
    }
    for (int t = 0; t < 2; t++) c[t] = (conc){{p[t], p[1 - t]}, {want[t], want[1 - t]}, 0};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, conc_run, &c[1]), 0);
    conc_run(&c[0]);
    pthread_join(th, NULL);
    assert_int_equal(c[0].bad, 0);
    assert_int_equal(c[1].bad, 0);
    cs_prepared_free(p[0]);
    cs_prepared_free(p[1]);
    cs_dataset_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_series_against_weights),
        cmocka_unit_test(test_box_vs_per_sample),
        cmocka_unit_test(test_adversarial),
        cmocka_unit_test(test_by_hand),
        cmocka_unit_test(test_switch),
        cmocka_unit_test(test_classwise),
        cmocka_unit_test(test_classwise_columns),
        cmocka_unit_test(test_large_and_subsets),
        cmocka_unit_test(test_concurrent_plans),
        cmocka_unit_test(test_curve),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
