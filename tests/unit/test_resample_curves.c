/* Variance curves, bootstrap intervals and paired comparison (docs/metrics.md): thread-count
 * independence, statistical sanity against known distributions, hand-worked rules. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "calscope/resample.h"
#include "calscope/measure.h"
#include "engine/metrics/smece.h"
#include "support/cs_test.h"
#include "support/liveness.h"

static double unif(cs_rng *r)
{
    return (double)(cs_rng_next(r) >> 11) / 9007199254740992.0;
}

/* Perfectly calibrated: q uniform, label 1 with probability q. `sharpen` > 1 makes the same
 * draws overconfident (q pushed away from 0.5), a worse-calibrated twin with the same labels. */
static cs_dataset *calibrated(size_t n, uint64_t seed, double sharpen)
{
    cs_dataset *d = cs_test_dataset_new(n, 2);
    cs_rng r;
    cs_rng_seed(&r, seed, 77, 0, 0);
    for (size_t i = 0; i < n; i++) {
        double q = unif(&r), u = unif(&r);
        d->label[i] = u < q;
        if (sharpen != 1) {
            double a = pow(q, sharpen), b = pow(1 - q, sharpen);
            q = a / (a + b);
        }
        d->prob[2 * i] = 1 - q;
        d->prob[2 * i + 1] = q;
    }
    cs_test_prepare(d);
    return d;
}

static void add_ids(cs_dataset *d, int reverse)
{
    d->n_ids = d->n;
    d->id = malloc(d->n * sizeof *d->id);
    d->id_names = malloc(d->n * sizeof *d->id_names);
    for (size_t i = 0; i < d->n; i++) {
        char buf[32];
        size_t src = reverse ? d->n - 1 - i : i;
        snprintf(buf, sizeof buf, "s%zu", src);
        d->id_names[i] = strdup(buf);
        d->id[i] = (int32_t)i;
    }
}

/* Copy with rows in reverse order (ids follow their rows). */
static cs_dataset *reversed_copy(const cs_dataset *a)
{
    cs_dataset *d = cs_test_dataset_new(a->n, 2);
    for (size_t i = 0; i < a->n; i++) {
        size_t s = a->n - 1 - i;
        d->prob[2 * i] = a->prob[2 * s];
        d->prob[2 * i + 1] = a->prob[2 * s + 1];
        d->label[i] = a->label[s];
    }
    add_ids(d, 1);
    cs_test_prepare(d);
    return d;
}

static cs_prepared *prep(const cs_dataset *d)
{
    cs_settings s;
    cs_settings_default(&s);
    cs_error err;
    cs_prepared *p = cs_prepare(d, &s, &err);
    assert_non_null(p);
    return p;
}

static const unsigned FIVE = CS_METRIC_BIT(CS_METRIC_ECE) | CS_METRIC_BIT(CS_METRIC_ACE) |
                             CS_METRIC_BIT(CS_METRIC_MCE) | CS_METRIC_BIT(CS_METRIC_AECE) |
                             CS_METRIC_BIT(CS_METRIC_RECE_G);

static void test_thread_independence(void **state)
{
    (void)state;
    cs_dataset *d = calibrated(3000, 1, 1.5);
    cs_dataset *d2 = calibrated(3000, 1, 1.0);
    cs_prepared *p = prep(d);
    cs_error err;
    const int threads[3] = { 1, 2, 8 };
    for (int replace = 0; replace < 2; replace++) {
        cs_curve *c[3];
        cs_curve_options o;
        cs_curve_options_size_default(&o);
        o.repeats = 12;
        o.seed = 1234;
        o.replace = replace;
        o.metrics = FIVE | CS_METRIC_BIT(CS_METRIC_BRIER) | CS_METRIC_BIT(CS_METRIC_ACCURACY);
        for (int t = 0; t < 3; t++) {
            cs_run run = { .threads = threads[t] };
            c[t] = cs_size_curve(p, &o, &run, &err);
            assert_non_null(c[t]);
        }
        for (int t = 1; t < 3; t++)
            assert_memory_equal(c[0]->points, c[t]->points, o.n_points * sizeof *c[0]->points);
        /* A different seed changes the numbers (the comparison above can fail). */
        o.seed = 1235;
        cs_run run1 = { .threads = 1 };
        cs_curve *other = cs_size_curve(p, &o, &run1, &err);
        assert_true(other->points[0].stat[CS_METRIC_ECE].mean !=
                    c[0]->points[0].stat[CS_METRIC_ECE].mean);
        cs_curve_free(other);
        for (int t = 0; t < 3; t++)
            cs_curve_free(c[t]);
    }
    cs_curve_options ob;
    cs_curve_options_bins_default(&ob, 0);
    ob.repeats = 8;
    ob.n_points = 5;
    cs_settings s;
    cs_settings_default(&s);
    cs_curve *bc[3];
    cs_ci ci[3];
    cs_compare cmp[3];
    for (int t = 0; t < 3; t++) {
        cs_run run = { .threads = threads[t] };
        bc[t] = cs_bins_curve(d, &s, &ob, &run, &err);
        assert_non_null(bc[t]);
        assert_int_equal(cs_bootstrap_ci(p, FIVE, 16, 3, &run, &ci[t], &err), CS_OK);
        assert_int_equal(cs_compare_run(d, d2, &s, FIVE, 16, 3, &run, &cmp[t], &err), CS_OK);
    }
    for (int t = 1; t < 3; t++) {
        assert_memory_equal(bc[0]->points, bc[t]->points, ob.n_points * sizeof *bc[0]->points);
        assert_int_equal(bc[0]->stable_first, bc[t]->stable_first);
        assert_memory_equal(&ci[0], &ci[t], sizeof ci[0]);
        assert_memory_equal(&cmp[0], &cmp[t], sizeof cmp[0]);
    }
    for (int t = 0; t < 3; t++)
        cs_curve_free(bc[t]);
    cs_prepared_free(p);
    cs_dataset_free(d);
    cs_dataset_free(d2);
}

static void test_size_rows_and_defaults(void **state)
{
    (void)state;
    cs_dataset *d = calibrated(100, 2, 1.0);
    cs_prepared *p = prep(d);
    cs_curve_options o;
    cs_curve_options_size_default(&o);
    assert_int_equal(o.repeats, 20);
    assert_int_equal(o.n_points, 6);
    o.n_points = 3;
    o.x[0] = 0.07;
    o.x[1] = 0.29;
    o.x[2] = 1.0;
    o.metrics = CS_METRIC_BIT(CS_METRIC_ECE);
    atomic_int progress;
    atomic_init(&progress, -5);
    cs_run run = { .threads = 2, .progress_ppm = &progress };
    cs_error err;
    cs_curve *c = cs_size_curve(p, &o, &run, &err);
    assert_non_null(c);
    assert_int_equal(c->points[0].rows, 7);
    assert_int_equal(c->points[1].rows, 29);
    assert_int_equal(c->points[2].rows, 100);
    assert_int_equal(atomic_load(&progress), 1000000);
    /* Fraction 1 without replacement is the whole set every time. */
    const cs_stat *s = &c->points[2].stat[CS_METRIC_ECE];
    assert_double_near(s->mean, c->points[2].full[CS_METRIC_ECE], 1e-12);
    assert_double_near(s->sd, 0, 1e-12);
    assert_double_near(s->abs_dev, 0, 1e-12);
    assert_int_equal(s->count, 20);
    /* Unselected metrics stay NAN. */
    assert_true(isnan(c->points[0].stat[CS_METRIC_BRIER].mean));
    cs_curve_free(c);

    o.x[0] = 0;
    assert_null(cs_size_curve(p, &o, &run, &err));
    assert_int_equal(err.code, CS_EUSAGE);
    o.x[0] = 0.5;
    o.repeats = 0;
    assert_null(cs_size_curve(p, &o, &run, &err));
    assert_int_equal(err.code, CS_EUSAGE);
    cs_prepared_free(p);
    cs_dataset_free(d);
}

static void test_ece_bias_shrinks(void **state)
{
    (void)state;
    cs_dataset *d = calibrated(20000, 3, 1.0);
    cs_prepared *p = prep(d);
    cs_curve_options o;
    cs_curve_options_size_default(&o);
    o.repeats = 40;
    o.metrics = CS_METRIC_BIT(CS_METRIC_ECE);
    cs_run run = { 0 };
    cs_error err;
    cs_curve *c = cs_size_curve(p, &o, &run, &err);
    assert_non_null(c);
    for (size_t i = 1; i < c->n_points; i++)
        assert_true(c->points[i].stat[CS_METRIC_ECE].mean <
                    c->points[i - 1].stat[CS_METRIC_ECE].mean);
    /* 200 rows in 15 bins: the sampling bias alone is several times the full-data ECE. */
    assert_true(c->points[0].stat[CS_METRIC_ECE].mean >
                4 * c->points[5].stat[CS_METRIC_ECE].mean);
    assert_true(c->points[0].stat[CS_METRIC_ECE].abs_dev >
                c->points[3].stat[CS_METRIC_ECE].abs_dev);
    assert_true(c->points[0].stat[CS_METRIC_ECE].lo <= c->points[0].stat[CS_METRIC_ECE].mean);
    assert_true(c->points[0].stat[CS_METRIC_ECE].hi >= c->points[0].stat[CS_METRIC_ECE].mean);
    cs_curve_free(c);
    cs_prepared_free(p);
    cs_dataset_free(d);
}

static void test_bernoulli_bootstrap_sd(void **state)
{
    (void)state;
    /* Prediction is always class 0 (p = 0.8); the label is 0 with probability 0.7, so the
     * correctness column is Bernoulli(0.7) and the bootstrap sd of accuracy is sqrt(a(1-a)/N). */
    const size_t n = 2000;
    cs_dataset *d = cs_test_dataset_new(n, 2);
    cs_rng r;
    cs_rng_seed(&r, 11, 0, 0, 0);
    size_t correct = 0;
    for (size_t i = 0; i < n; i++) {
        d->prob[2 * i] = 0.8;
        d->prob[2 * i + 1] = 0.2;
        d->label[i] = unif(&r) < 0.7 ? 0 : 1;
        correct += d->label[i] == 0;
    }
    cs_test_prepare(d);
    double a = (double)correct / (double)n, want = sqrt(a * (1 - a) / (double)n);
    cs_prepared *p = prep(d);
    cs_curve_options o;
    cs_curve_options_size_default(&o);
    o.n_points = 1;
    o.x[0] = 1.0;
    o.replace = 1;
    o.repeats = 4000;
    o.metrics = CS_METRIC_BIT(CS_METRIC_ACCURACY);
    cs_run run = { 0 };
    cs_error err;
    cs_curve *c = cs_size_curve(p, &o, &run, &err);
    assert_non_null(c);
    const cs_stat *s = &c->points[0].stat[CS_METRIC_ACCURACY];
    /* sd of an sd estimate from R draws is about sd/sqrt(2R) = 1.1 %; allow 5 %. */
    assert_double_rel(s->sd, want, 0, 0.05);
    assert_double_near(s->mean, a, 4 * want / sqrt(4000.0));
    /* The 95 % interval is about ±1.96 sd. */
    assert_double_rel(s->hi - s->lo, 2 * 1.96 * want, 0, 0.08);
    cs_ci ci;
    assert_int_equal(cs_bootstrap_ci(p, CS_METRIC_BIT(CS_METRIC_ACCURACY), 4000, 5, &run, &ci,
                                     &err), CS_OK);
    assert_double_near(ci.value[CS_METRIC_ACCURACY], a, 1e-15);
    assert_double_rel(ci.hi[CS_METRIC_ACCURACY] - ci.lo[CS_METRIC_ACCURACY], 2 * 1.96 * want, 0,
                      0.08);
    cs_curve_free(c);
    cs_prepared_free(p);
    cs_dataset_free(d);
}

/* A job made of steps (the methods table: each method's interval, then its paired
 * differences) gives each step a part of one progress: after the first step it stands at
 * the end of that part, and the next step's start never lowers it (progress used to restart
 * at 0 with each step). */
static void test_progress_parts_never_restart(void **state)
{
    (void)state;
    cs_dataset *a = calibrated(400, 3, 1.0);
    cs_dataset *b = calibrated(400, 3, 2.0);
    cs_settings s;
    cs_settings_default(&s);
    atomic_int ppm;
    atomic_init(&ppm, 0);
    cs_run run = { .threads = 2, .cancel = NULL, .progress_ppm = &ppm };
    cs_run first = cs_run_part(&run, 0.0, 0.25), second = cs_run_part(&run, 0.25, 1.0);
    cs_error err;
    cs_compare c;
    unsigned mask = CS_METRIC_BIT(CS_METRIC_ECE);
    assert_int_equal(cs_compare_run(a, b, &s, mask, 50, 1, &first, &c, &err), CS_OK);
    assert_int_equal(atomic_load(&ppm), 250000);
    /* a step whose part starts below where progress stands does not lower it */
    cs_run inner = cs_run_part(&run, 0.0, 0.1);
    assert_int_equal(cs_compare_run(a, b, &s, mask, 50, 1, &inner, &c, &err), CS_OK);
    assert_int_equal(atomic_load(&ppm), 250000);
    assert_int_equal(cs_compare_run(a, b, &s, mask, 50, 1, &second, &c, &err), CS_OK);
    assert_int_equal(atomic_load(&ppm), 1000000);
    /* parts of parts: [0.25, 1] halved is [0.25, 0.625] of the whole */
    cs_run half = cs_run_part(&second, 0.0, 0.5);
    assert_int_equal(half.ppm_from, 250000);
    assert_int_equal(half.ppm_to, 625000);
    cs_dataset_free(a);
    cs_dataset_free(b);
}

static void test_compare_self_and_worse(void **state)
{
    (void)state;
    cs_dataset *a = calibrated(3000, 4, 1.0);
    cs_dataset *b = calibrated(3000, 4, 2.0); /* same labels, overconfident */
    cs_settings s;
    cs_settings_default(&s);
    cs_run run = { 0 };
    cs_error err;
    cs_compare c;
    unsigned mask = FIVE | CS_METRIC_BIT(CS_METRIC_BRIER) | CS_METRIC_BIT(CS_METRIC_NLL);
    assert_int_equal(cs_compare_run(a, a, &s, mask, 200, 1, &run, &c, &err), CS_OK);
    assert_int_equal(c.n_entries, 7);
    assert_int_equal(c.n_pairs, 3000);
    assert_false(c.by_id);
    for (size_t i = 0; i < c.n_entries; i++) {
        assert_true(c.entries[i].diff == 0);
        assert_true(c.entries[i].lo == 0 && c.entries[i].hi == 0);
        assert_true(c.entries[i].p_better == 0);
        assert_true(c.entries[i].a == c.entries[i].b);
    }
    assert_int_equal(cs_compare_run(a, b, &s, mask, 200, 1, &run, &c, &err), CS_OK);
    for (size_t i = 0; i < c.n_entries; i++) {
        const cs_compare_entry *e = &c.entries[i];
        assert_double_near(e->diff, e->a - e->b, 0);
        assert_true(e->lo <= e->hi);
        if (e->metric == CS_METRIC_ECE || e->metric == CS_METRIC_BRIER ||
            e->metric == CS_METRIC_NLL) {
            assert_true(e->diff < 0);
            assert_true(e->hi < 0);
            assert_true(e->p_better > 0.95);
        }
    }
    cs_dataset_free(a);
    cs_dataset_free(b);
}

static void test_compare_pairing(void **state)
{
    (void)state;
    cs_dataset *a = calibrated(500, 5, 1.0);
    add_ids(a, 0);
    cs_dataset *b = reversed_copy(a);
    cs_settings s;
    cs_settings_default(&s);
    cs_run run = { .threads = 2 };
    cs_error err;
    cs_compare c;
    unsigned mask = CS_METRIC_BIT(CS_METRIC_ECE) | CS_METRIC_BIT(CS_METRIC_BRIER);
    assert_int_equal(cs_compare_run(a, b, &s, mask, 50, 1, &run, &c, &err), CS_OK);
    assert_true(c.by_id);
    assert_int_equal(c.n_pairs, 500);
    for (size_t i = 0; i < c.n_entries; i++) {
        assert_double_near(c.entries[i].diff, 0, 1e-12);
        assert_double_near(c.entries[i].lo, 0, 1e-12);
        assert_double_near(c.entries[i].hi, 0, 1e-12);
    }
    /* Label disagreement on one id. */
    b->label[10] = 1 - b->label[10];
    assert_int_equal(cs_compare_run(a, b, &s, mask, 50, 1, &run, &c, &err), CS_EINPUT);
    assert_non_null(strstr(err.msg, "label '"));
    assert_non_null(strstr(err.msg, "of id 's489' differs"));
    b->label[10] = 1 - b->label[10];
    /* An id of a that b lacks. */
    free(b->id_names[3]);
    b->id_names[3] = strdup("other");
    assert_int_equal(cs_compare_run(a, b, &s, mask, 50, 1, &run, &c, &err), CS_EINPUT);
    assert_non_null(strstr(err.msg, "is not in"));
    /* By row: different sample counts, then a label mismatch. */
    cs_dataset *r1 = calibrated(100, 6, 1.0), *r2 = calibrated(101, 6, 1.0);
    assert_int_equal(cs_compare_run(r1, r2, &s, mask, 10, 1, &run, &c, &err), CS_EINPUT);
    cs_dataset *r3 = calibrated(100, 6, 1.0);
    r3->label[41] = 1 - r3->label[41];
    r3->correct[41] = !r3->correct[41];
    assert_int_equal(cs_compare_run(r1, r3, &s, mask, 10, 1, &run, &c, &err), CS_EINPUT);
    assert_non_null(strstr(err.msg, "sample 42"));
    cs_dataset_free(r1);
    cs_dataset_free(r2);
    cs_dataset_free(r3);
    cs_dataset_free(a);
    cs_dataset_free(b);
}

static void test_stable_rule(void **state)
{
    (void)state;
    cs_curve c;
    cs_curve_point pts[5];
    memset(&c, 0, sizeof c);
    memset(pts, 0, sizeof pts);
    const double mean[5] = { 0.10, 0.05, 0.049, 0.051, 0.08 };
    const double sd[5] = { 0.001, 0.002, 0.002, 0.002, 0.002 };
    for (int i = 0; i < 5; i++) {
        pts[i].stat[CS_METRIC_ECE].mean = mean[i];
        pts[i].stat[CS_METRIC_ECE].sd = sd[i];
    }
    c.points = pts;
    c.n_points = 5;
    c.metrics = CS_METRIC_BIT(CS_METRIC_ECE);
    cs_curve_flag_stable(&c, CS_METRIC_ECE);
    assert_int_equal(c.stable_metric, CS_METRIC_ECE);
    assert_int_equal(c.stable_first, 1);
    assert_int_equal(c.stable_last, 3);
    /* Nothing agrees: the first single point. */
    pts[2].stat[CS_METRIC_ECE].mean = 0.2;
    pts[3].stat[CS_METRIC_ECE].mean = 0.3;
    cs_curve_flag_stable(&c, CS_METRIC_ECE);
    assert_int_equal(c.stable_first, 0);
    assert_int_equal(c.stable_last, 0);
    /* A metric outside the mask: undefined. */
    cs_curve_flag_stable(&c, CS_METRIC_MCE);
    assert_int_equal(c.stable_first, -1);
}

static void test_bins_curve(void **state)
{
    (void)state;
    cs_dataset *d = calibrated(4000, 8, 1.0);
    cs_settings s;
    cs_settings_default(&s);
    cs_curve_options o;
    cs_curve_options_bins_default(&o, 0);
    assert_int_equal(o.n_points, 10);
    o.repeats = 20;
    cs_run run = { 0 };
    cs_error err;
    cs_curve *c = cs_bins_curve(d, &s, &o, &run, &err);
    assert_non_null(c);
    assert_int_equal(c->kind, CS_CURVE_BINS);
    assert_true(c->stable_first >= 0 && c->stable_first <= c->stable_last &&
                c->stable_last < 10);
    /* Each point's full value is the metric with that M, computed directly. */
    s.bins = 50;
    cs_prepared *p = prep(d);
    cs_prepared_free(p);
    p = cs_prepare(d, &s, &err);
    cs_result res;
    memset(&res, 0, sizeof res);
    assert_int_equal(cs_evaluate(p, NULL, 0, CS_WANT_BINNED | CS_WANT_SWEEP, NULL, &res, &err), CS_OK);
    assert_double_near(c->points[5].full[CS_METRIC_ECE], res.ece, 0);
    /* The sweep's bin count on all samples, whatever M the evaluation used. */
    assert_true(res.ece_sweep_bins >= 1);
    assert_double_near(c->sweep_bins, res.ece_sweep_bins, 0);
    assert_double_near(c->points[5].x, 50, 0);
    /* On calibrated data more bins mean more estimation bias (fewer samples per bin). */
    assert_true(c->points[9].stat[CS_METRIC_ECE].mean > c->points[0].stat[CS_METRIC_ECE].mean);
    cs_result_free(&res);
    cs_prepared_free(p);
    cs_curve_free(c);
    o.x[0] = 2.5;
    assert_null(cs_bins_curve(d, &s, &o, &run, &err));
    assert_int_equal(err.code, CS_EUSAGE);
    cs_dataset_free(d);
}

typedef struct cancel_arg {
    atomic_int *flag;
    atomic_int *progress;
    int seen;                    /* progress (ppm) when the flag was raised */
} cancel_arg;

/* Raises the cancel flag once the call has finished at least one replicate. A liveness limit
 * only catches a call that never reports progress. */
static void *raise_after_progress(void *arg)
{
    cancel_arg *a = arg;
    for (int waited = 0; (a->seen = atomic_load(a->progress)) == 0; waited++) {
        if (waited > CS_TEST_LIVENESS_MS) break;
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
    }
    atomic_store(a->flag, 1);
    return NULL;
}

/* Smooth ECE is resampled at every size (its bandwidth search works on the draw's box
 * moments; it used to be left out above 5000 samples): on 12,000 samples the available mask
 * keeps it, and a size curve gives it at every fraction, the fraction-1 draws equal to the
 * whole set's value. */
static void test_smece_resampled_large(void **state)
{
    (void)state;
    cs_dataset *d = calibrated(12000, 5, 1.0);
    cs_prepared *p = prep(d);
    unsigned sm = CS_METRIC_BIT(CS_METRIC_SMECE);
    assert_true(cs_metrics_available(p, CS_METRICS_DEFAULT) & sm);
    cs_curve_options o;
    cs_curve_options_size_default(&o);
    o.repeats = 3;
    o.n_points = 2;
    o.x[0] = 0.5;
    o.x[1] = 1.0;
    o.metrics = sm;
    cs_run run = { .threads = 2 };
    cs_error err;
    cs_curve *c = cs_size_curve(p, &o, &run, &err);
    assert_non_null(c);
    assert_true(c->metrics & sm);
    assert_false(isnan(c->points[0].stat[CS_METRIC_SMECE].mean));
    assert_double_near(c->points[1].stat[CS_METRIC_SMECE].mean, c->points[1].full[CS_METRIC_SMECE], 1e-15);
    assert_false(isnan(c->points[1].full[CS_METRIC_SMECE]));
    cs_curve_free(c);
    cs_prepared_free(p);
    cs_dataset_free(d);
}

/* Smooth ECE of a draw from the 2-class file d (top-1: confidence max(q, 1-q), correct when
 * the label is the argmax), computed on copies by the library's direct functions: at the
 * bandwidth sigma, or (sigma 0) at the draw's own automatic bandwidth. */
static double smece_of_draw(const cs_dataset *d, const uint32_t *idx, size_t k, double sigma)
{
    double *f = malloc(k * sizeof *f), *y = malloc(k * sizeof *y), used;
    for (size_t j = 0; j < k; j++) {
        size_t i = idx[j];
        double q = d->prob[2 * i + 1];
        int top = q > 1 - q;   /* ties (q = 0.5 exactly) do not occur in these draws */
        f[j] = top ? q : 1 - q;
        y[j] = (int)d->label[i] == top;
    }
    double v = sigma > 0 ? cs_smece_at(f, y, k, sigma) : cs_smece_auto(f, y, k, &used);
    free(f);
    free(y);
    return v;
}

/* A bootstrap replicate (n of n samples, with replacement) of a file of at least
 * CS_SMECE_FIXED_BW_MIN samples takes its smooth ECE at the whole file's bandwidth; a smaller
 * draw (a size curve's subsample), or a replicate of a smaller file, searches its own. */
static void test_smece_replicate_at_whole_bandwidth(void **state)
{
    (void)state;
    for (int big = 0; big < 2; big++) {
        size_t n = big ? CS_SMECE_FIXED_BW_MIN + 200 : CS_SMECE_FIXED_BW_MIN - 200;
        cs_dataset *d = calibrated(n, 12, 1.0);   /* residuals of both signs: smECE depends on s */
        cs_prepared *p = prep(d);
        cs_error err;
        cs_result whole, draw;
        memset(&whole, 0, sizeof whole);
        memset(&draw, 0, sizeof draw);
        assert_int_equal(cs_evaluate(p, NULL, 0, CS_WANT_SMECE, NULL, &whole, &err), CS_OK);
        uint32_t *idx = malloc(n * sizeof *idx);
        cs_rng r;
        cs_rng_seed(&r, 5, 91, 0, 0);
        for (size_t j = 0; j < n; j++) idx[j] = (uint32_t)(unif(&r) * (double)n);
        assert_int_equal(cs_evaluate(p, idx, n, CS_WANT_SMECE, NULL, &draw, &err), CS_OK);
        double at_whole = smece_of_draw(d, idx, n, whole.smece_sigma);
        double own = smece_of_draw(d, idx, n, 0.0);
        assert_true(fabs(at_whole - own) > 1e-6);   /* the two rules differ on this draw */
        assert_double_near(draw.smece, big ? at_whole : own, 1e-12);
        assert_double_near(draw.smece_sigma, big ? whole.smece_sigma : draw.smece_sigma, 0);
        cs_result_free(&draw);
        memset(&draw, 0, sizeof draw);
        /* half the samples: a subsample keeps its own search at any size */
        assert_int_equal(cs_evaluate(p, idx, n / 2, CS_WANT_SMECE, NULL, &draw, &err), CS_OK);
        assert_double_near(draw.smece, smece_of_draw(d, idx, n / 2, 0.0), 1e-12);
        cs_result_free(&draw);
        cs_result_free(&whole);
        free(idx);
        cs_prepared_free(p);
        cs_dataset_free(d);
    }
}

/* A cancelled call returns CS_ECANCELLED having done fewer replicates than asked for: the
 * flag is raised mid-run (after the first replicates, as the progress shows), and a million
 * repeats of six subsets of 5,000 rows would take minutes, so a call that ignored the flag would
 * report full progress (1,000,000 ppm) or trip the liveness limit. */
static void test_cancel(void **state)
{
    (void)state;
    cs_dataset *d = calibrated(5000, 9, 1.0);
    cs_prepared *p = prep(d);
    atomic_int cancel, progress;
    atomic_init(&cancel, 1);
    atomic_init(&progress, -1);
    cs_run run = { .threads = 2, .cancel = &cancel, .progress_ppm = &progress };
    cs_curve_options o;
    cs_curve_options_size_default(&o);
    cs_error err;
    assert_null(cs_size_curve(p, &o, &run, &err));
    assert_int_equal(err.code, CS_ECANCELLED);
    assert_int_equal(atomic_load(&progress), 0);   /* raised before: not one replicate */
    atomic_store(&cancel, 0);
    o.repeats = 1000000;
    pthread_t t;
    cancel_arg a = { &cancel, &progress, 0 };
    assert_int_equal(pthread_create(&t, NULL, raise_after_progress, &a), 0);
    cs_test_liveness_begin("cs_size_curve with its cancel flag raised");
    assert_null(cs_size_curve(p, &o, &run, &err));
    cs_test_liveness_end();
    pthread_join(t, NULL);
    assert_int_equal(err.code, CS_ECANCELLED);
    assert_true(a.seen > 0);                        /* it was running when the flag went up */
    int done = atomic_load(&progress);
    if (!(done < 1000000)) fail_msg("cancelled call reports %d ppm done", done);
    cs_prepared_free(p);
    cs_dataset_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stable_rule),
        cmocka_unit_test(test_thread_independence),
        cmocka_unit_test(test_size_rows_and_defaults),
        cmocka_unit_test(test_ece_bias_shrinks),
        cmocka_unit_test(test_bernoulli_bootstrap_sd),
        cmocka_unit_test(test_compare_self_and_worse),
        cmocka_unit_test(test_compare_pairing),
        cmocka_unit_test(test_bins_curve),
        cmocka_unit_test(test_smece_resampled_large),
        cmocka_unit_test(test_cancel),
        cmocka_unit_test(test_smece_replicate_at_whole_bandwidth),
        cmocka_unit_test(test_progress_parts_never_restart),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
