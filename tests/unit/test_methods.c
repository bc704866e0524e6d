/* Unit tests: the multi-method comparison table (calscope/methods.h, cs_methods_run).
 *
 * Expected values come from (a) hand computation on tiny hand-made datasets, (b) numpy on the
 * bundled samples (script quoted where used), or (c) the independent engine entry points the
 * table is documented to be built from — cs_prepare/cs_evaluate, cs_bootstrap_ci and
 * cs_compare_run on one dataset (or one pair) alone with the same settings — whose own tests
 * (test_metrics, test_resample_curves, test_recal) pin them. */
#include "support/cs_test.h"
#include "support/liveness.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "calscope/catalogue.h"
#include "calscope/resample.h"
#include "calscope/measure.h"
#include "calscope/load.h"
#include "calscope/methods.h"
#include "calscope/metrics.h"

/* ---- helpers ---------------------------------------------------------------------------- */

/* A dataset built by hand: n rows of k probabilities (row-major) and labels; prepared. */
static cs_dataset *make_ds(const char *path, size_t n, size_t k, const double *prob,
                           const int *label)
{
    cs_dataset *d = cs_test_dataset_new(n, k);
    free(d->path);
    d->path = strdup(path);
    assert_non_null(d->path);
    memcpy(d->prob, prob, n * k * sizeof *prob);
    for (size_t i = 0; i < n; i++) d->label[i] = label[i];
    cs_test_prepare(d);
    return d;
}

/* Binary, 4 rows, labels 0,0,0,1; every row of the method gets p(class 0) = p0[i]. */
static const int LAB4[4] = { 0, 0, 0, 1 };

static cs_dataset *make_bin4(const char *path, const double p0[4], const int label[4])
{
    double prob[8];
    for (int i = 0; i < 4; i++) { prob[2 * i] = p0[i]; prob[2 * i + 1] = 1 - p0[i]; }
    return make_ds(path, 4, 2, prob, label);
}

/* Hand-made methods on the 4 samples above (labels 0,0,0,1), top1, 15 uniform bins:
 *   A  p0 = .75 everywhere: acc .75, conf .75 in one bin     -> ECE 0
 *      Brier: correct rows 2·.25² = .125, the wrong row 2·.75² = 1.125 -> 1.5/4 = .375
 *   B  p0 = .95,.95,.95,.2: all correct, confs .95 ×3 (one bin, gap .05) and .8 (gap .2)
 *      -> ECE (3·.05 + .2)/4 = .0875; Brier (3·2·.05² + 2·.2²)/4 = .095/4 = .02375
 *   C  p0 = .6 everywhere: acc .75, conf .6 -> ECE .15; Brier (3·2·.4² + 2·.6²)/4 = .42
 *   D  p0 = .7 everywhere: acc .75, conf .7 -> ECE .05; Brier (3·2·.3² + 2·.7²)/4 = .38
 * ECE orders A < B < C but Brier B < A < C: the trio A,B,C disagrees; A,D,C agree
 * (ECE A < D < C, Brier .375 < .38 < .42). */
static const double P_A[4] = { 0.75, 0.75, 0.75, 0.75 };
static const double P_B[4] = { 0.95, 0.95, 0.95, 0.2 };
static const double P_C[4] = { 0.6, 0.6, 0.6, 0.6 };
static const double P_D[4] = { 0.7, 0.7, 0.7, 0.7 };

/* Gives d an id column with the given (distinct) names, one per row. */
static void add_ids(cs_dataset *d, const char *const *names)
{
    d->id = malloc(d->n * sizeof *d->id);
    d->id_names = calloc(d->n, sizeof *d->id_names);
    assert_non_null(d->id);
    assert_non_null(d->id_names);
    for (size_t i = 0; i < d->n; i++) {
        d->id[i] = (int32_t)i;
        d->id_names[i] = strdup(names[i]);
    }
    d->n_ids = d->n;
}

static cs_methods_options opts(size_t ref, int k, int ci, int cmp, uint64_t seed)
{
    cs_methods_options o;
    memset(&o, 0, sizeof o);
    o.ref = ref;
    o.k = k;
    o.ci_repeats = ci;
    o.cmp_repeats = cmp;
    o.seed = seed;
    return o;
}

/* The fourteen table columns read straight off a cs_result (not through cs_methods_col_metric). */
static void result_cols(const cs_result *r, double *v)
{
    v[0] = r->accuracy;
    v[1] = r->ece;
    v[2] = r->ace;
    v[3] = r->mce;
    v[4] = r->aece;
    v[5] = r->rece_g;
    v[6] = r->sce;
    v[7] = r->brier;
    v[8] = r->nll;
    v[9] = r->smece;
    v[10] = r->l2ce;
    v[11] = r->l2ce_debiased;
    v[12] = r->ece_sweep;
}

/* Expected row values of method d alone: cs_prepare + cs_evaluate under s, and the top-k ECE
 * under s with lens topk:k (top1 when k == 1). */
static void direct_values(const cs_dataset *d, const cs_settings *s, int k, double *v)
{
    cs_error err;
    cs_prepared *p = cs_prepare(d, s, &err);
    assert_non_null(p);
    cs_result r;
    memset(&r, 0, sizeof r);
    assert_int_equal(cs_evaluate(p, NULL, 0, CS_WANT_ALL, NULL, &r, &err), CS_OK);
    result_cols(&r, v);
    cs_result_free(&r);
    cs_prepared_free(p);
    cs_settings sk = *s;
    sk.lens = k == 1 ? CS_LENS_TOP1 : CS_LENS_TOPK;
    sk.topk = k;
    p = cs_prepare(d, &sk, &err);
    assert_non_null(p);
    memset(&r, 0, sizeof r);
    assert_int_equal(cs_evaluate(p, NULL, 0, CS_WANT_ALL, NULL, &r, &err), CS_OK);
    v[CS_METHODS_COL_TOPK] = r.ece;
    cs_result_free(&r);
    cs_prepared_free(p);
}

/* Column c of the table against a cs_compare entry of the same metric. */
static const cs_compare_entry *entry_of(const cs_compare *c, int metric)
{
    for (size_t e = 0; e < c->n_entries; e++)
        if (c->entries[e].metric == metric) return &c->entries[e];
    return NULL;
}

/* Every value and difference of t against the direct engine calls (exactly: same code path,
 * same seeds, so bit-identical is the contract). */
static void check_against_direct(const cs_methods *t, const cs_dataset *const *d, size_t n,
                                 const cs_settings *s, const cs_methods_options *o)
{
    static const int metric_of_col[CS_METHODS_COL_TOPK] = {
        CS_METRIC_ACCURACY, CS_METRIC_ECE, CS_METRIC_ACE, CS_METRIC_MCE, CS_METRIC_AECE,
        CS_METRIC_RECE_G, CS_METRIC_SCE, CS_METRIC_BRIER, CS_METRIC_NLL, CS_METRIC_SMECE,
        CS_METRIC_L2CE, CS_METRIC_L2CE_DEBIASED, CS_METRIC_ECE_SWEEP
    };
    assert_int_equal(t->n, n);
    cs_settings sk = *s;
    sk.lens = t->k == 1 ? CS_LENS_TOP1 : CS_LENS_TOPK;
    sk.topk = t->k;
    for (size_t i = 0; i < n; i++) {
        const cs_method_row *row = &t->rows[i];
        assert_int_equal(row->status, CS_OK);
        assert_true(row->ok);
        double want[CS_METHODS_NCOL];
        direct_values(d[i], s, t->k, want);
        for (int c = 0; c < CS_METHODS_NCOL; c++) assert_double_near(row->v[c], want[c], 0);
        cs_error err;
        if (o->ci_repeats > 0) {
            cs_ci ci, cik;
            cs_run run1 = { .threads = 1 };
            cs_prepared *p = cs_prepare(d[i], s, &err);
            assert_int_equal(cs_bootstrap_ci(p, CS_METRICS_DEFAULT, o->ci_repeats, o->seed, &run1, &ci, &err), CS_OK);
            cs_prepared_free(p);
            p = cs_prepare(d[i], &sk, &err);
            assert_int_equal(cs_bootstrap_ci(p, CS_METRIC_BIT(CS_METRIC_ECE), o->ci_repeats, o->seed, &run1, &cik, &err), CS_OK);
            cs_prepared_free(p);
            for (int c = 0; c < CS_METHODS_COL_TOPK; c++) {
                assert_double_near(row->lo[c], ci.lo[metric_of_col[c]], 0);
                assert_double_near(row->hi[c], ci.hi[metric_of_col[c]], 0);
                assert_true(row->lo[c] <= row->hi[c]);
            }
            assert_double_near(row->lo[CS_METHODS_COL_TOPK], cik.lo[CS_METRIC_ECE], 0);
            assert_double_near(row->hi[CS_METHODS_COL_TOPK], cik.hi[CS_METRIC_ECE], 0);
        } else {
            for (int c = 0; c < CS_METHODS_NCOL; c++) {
                assert_true(isnan(row->lo[c]));
                assert_true(isnan(row->hi[c]));
            }
        }
        if (i == o->ref) {
            assert_false(row->has_diff);
            for (int c = 0; c < CS_METHODS_NCOL; c++) assert_true(isnan(row->diff[c]));
            continue;
        }
        assert_int_equal(row->diff_status, CS_OK);
        assert_true(row->has_diff);
        int R = o->cmp_repeats > 0 ? o->cmp_repeats : 1000;   /* header: 0 = 1000 */
        assert_int_equal(t->cmp_repeats, R);
        /* the row is reference − method turned round: `report --compare REF METHOD`'s entry
         * with its interval negated and P(method better) its p_worse */
        cs_compare cmp, cmpk;
        cs_run run2 = { .threads = 2 };
        assert_int_equal(cs_compare_run(d[o->ref], d[i], s, CS_METRICS_DEFAULT, R, o->seed, &run2, &cmp, &err), CS_OK);
        assert_int_equal(cs_compare_run(d[o->ref], d[i], &sk, CS_METRIC_BIT(CS_METRIC_ECE), R, o->seed, &run2, &cmpk, &err), CS_OK);
        assert_int_equal(row->n_pairs, cmp.n_pairs);
        for (int c = 0; c < CS_METHODS_COL_TOPK; c++) {
            const cs_compare_entry *e = entry_of(&cmp, metric_of_col[c]);
            assert_non_null(e);
            assert_double_near(row->diff[c], -e->diff, 0);
            assert_double_near(row->dlo[c], -e->hi, 0);
            assert_double_near(row->dhi[c], -e->lo, 0);
            assert_double_near(row->pbetter[c], e->p_worse, 0);
            /* every resample is one of: A better, tied, B better */
            assert_double_near(e->p_better + e->p_equal + e->p_worse, 1.0, 1e-12);
            /* and the difference is that of the two rows' own values */
            assert_double_near(row->diff[c], row->v[c] - t->rows[o->ref].v[c], 1e-12);
        }
        assert_double_near(row->diff[CS_METHODS_COL_TOPK], -cmpk.entries[0].diff, 0);
        assert_double_near(row->dlo[CS_METHODS_COL_TOPK], -cmpk.entries[0].hi, 0);
        assert_double_near(row->dhi[CS_METHODS_COL_TOPK], -cmpk.entries[0].lo, 0);
        assert_double_near(row->pbetter[CS_METHODS_COL_TOPK], cmpk.entries[0].p_worse, 0);
    }
}

/* ---- tests ------------------------------------------------------------------------------ */

static void test_columns(void **state)
{
    (void)state;
    static const char *names[CS_METHODS_NCOL] = {
        "accuracy", "ece", "ace", "mce", "aece", "rece_g", "sce", "brier", "nll", "smece", "l2ce",
        "l2ce_debiased", "ece_sweep", "topk_ece"
    };
    for (int c = 0; c < CS_METHODS_NCOL; c++) {
        assert_string_equal(cs_methods_col_name(c), names[c]);
        assert_int_equal(cs_methods_lower_better(c), c != 0);
    }
    assert_int_equal(cs_methods_col_metric(CS_METHODS_COL_ECE), CS_METRIC_ECE);
    assert_int_equal(cs_methods_col_metric(CS_METHODS_COL_TOPK), CS_METRIC_ECE);
    assert_int_equal(cs_methods_col_metric(6), CS_METRIC_SCE);
    assert_int_equal(cs_methods_excludes_zero(0.1, 0.2), 1);
    assert_int_equal(cs_methods_excludes_zero(-0.2, -0.1), 1);
    assert_int_equal(cs_methods_excludes_zero(-0.1, 0.1), 0);
    assert_int_equal(cs_methods_excludes_zero(0, 0), 0);
    assert_int_equal(cs_methods_excludes_zero(NAN, 0.3), 0);
    assert_int_equal(cs_methods_excludes_zero(0.1, INFINITY), 0);
}

/* Hand values on the hand-made trio, and every cell equal to the direct engine calls. */
static void test_hand_trio_values(void **state)
{
    (void)state;
    cs_dataset *a = make_bin4("a.csv", P_A, LAB4), *b = make_bin4("b.csv", P_B, LAB4),
               *c = make_bin4("c.csv", P_C, LAB4);
    const cs_dataset *d[3] = { a, b, c };
    cs_settings s;
    cs_settings_default(&s);
    cs_methods_options o = opts(0, 0, 0, 0, 11);    /* cmp_repeats 0 -> 1000 */
    cs_methods t;
    cs_error err;
    assert_int_equal(cs_methods_run(d, 3, &s, &o, NULL, &t, &err), CS_OK);
    assert_int_equal(t.n, 3);
    assert_int_equal(t.ref, 0);
    assert_int_equal(t.classes, 2);
    assert_int_equal(t.k, 2);           /* default 3, clamped to K = 2 */
    assert_int_equal(t.n_top, 2);
    /* by hand (see P_A..P_D) */
    const double acc[3] = { 0.75, 1.0, 0.75 }, ece[3] = { 0, 0.0875, 0.15 },
                 brier[3] = { 0.375, 0.02375, 0.42 };
    /* NLL = −mean ln p(label): A (3 ln .75 + ln .25)/4; B (3 ln .95 + ln .8)/4; C (3 ln .6 + ln .4)/4 */
    const double nll[3] = { -(3 * log(0.75) + log(0.25)) / 4, -(3 * log(0.95) + log(0.8)) / 4,
                            -(3 * log(0.6) + log(0.4)) / 4 };
    for (int i = 0; i < 3; i++) {
        assert_double_near(t.rows[i].v[0], acc[i], 1e-15);
        assert_double_near(t.rows[i].v[CS_METHODS_COL_ECE], ece[i], 1e-12);
        assert_double_near(t.rows[i].v[7], brier[i], 1e-12);
        assert_double_near(t.rows[i].v[8], nll[i], 1e-12);
        /* one bin holds everything for A and C: ACE = MCE = ECE */
        if (i != 1) {
            assert_double_near(t.rows[i].v[2], ece[i], 1e-12);
            assert_double_near(t.rows[i].v[3], ece[i], 1e-12);
        }
    }
    /* B: two non-empty bins with gaps .05 and .2 -> ACE .125, MCE .2 */
    assert_double_near(t.rows[1].v[2], 0.125, 1e-12);
    assert_double_near(t.rows[1].v[3], 0.2, 1e-12);
    /* paired differences on the full sample are the differences of the values */
    assert_double_near(t.rows[1].diff[CS_METHODS_COL_ECE], 0.0875, 1e-12);
    assert_double_near(t.rows[1].diff[7], 0.02375 - 0.375, 1e-12);
    assert_double_near(t.rows[2].diff[0], 0, 1e-15);
    assert_int_equal(t.rows[1].n_pairs, 4);
    check_against_direct(&t, d, 3, &s, &o);
    cs_methods_free(&t);
    assert_null(t.rows);
    cs_methods_free(&t);              /* twice: harmless */
    cs_methods_free(NULL);
    cs_dataset_free(a);
    cs_dataset_free(b);
    cs_dataset_free(c);
}

/* Samples: digits_gnb and digits_ts (same 1797 samples, id column), with intervals, several
 * references, k and settings. */
static void test_samples_match_direct(void **state)
{
    (void)state;
    cs_dataset *g = cs_test_load_sample("digits_gnb.csv");
    cs_dataset *ts = cs_test_load_sample("digits_ts.csv");
    const cs_dataset *d[2] = { g, ts };
    cs_settings s;
    cs_settings_default(&s);
    cs_error err;
    cs_methods t;

    cs_methods_options o = opts(0, 0, 40, 60, 3);
    assert_int_equal(cs_methods_run(d, 2, &s, &o, NULL, &t, &err), CS_OK);
    assert_int_equal(t.classes, 10);
    assert_int_equal(t.k, 3);
    assert_int_equal(t.n_top, 10);
    assert_int_equal(t.rows[1].n_pairs, 1797);
    check_against_direct(&t, d, 2, &s, &o);
    /* digits_gnb is far worse calibrated than the temperature-scaled regression (docs/compare.md:
     * ECE .137 vs .0072): the ts row's ECE difference is negative and its interval excludes 0 */
    assert_true(t.rows[1].diff[CS_METHODS_COL_ECE] < -0.1);
    assert_true(cs_methods_excludes_zero(t.rows[1].dlo[CS_METHODS_COL_ECE], t.rows[1].dhi[CS_METHODS_COL_ECE]));
    assert_double_near(t.rows[1].pbetter[CS_METHODS_COL_ECE], 1.0, 0);
    cs_methods_free(&t);

    /* other reference, k, bins, binning and a selection */
    cs_settings_set_binning(&s, "mass", &err);
    s.bins = 10;
    snprintf(s.select, sizeof s.select, "y == 3");
    o = opts(1, 5, 0, 50, 9);
    assert_int_equal(cs_methods_run(d, 2, &s, &o, NULL, &t, &err), CS_OK);
    assert_int_equal(t.k, 5);
    assert_int_equal(t.rows[0].n_pairs, 183);     /* numpy: (label == 3).sum() */
    check_against_direct(&t, d, 2, &s, &o);
    cs_methods_free(&t);

    /* k = 1: the top-k column is the top-1 ECE */
    cs_settings_default(&s);
    o = opts(0, 1, 0, 20, 1);
    assert_int_equal(cs_methods_run(d, 2, &s, &o, NULL, &t, &err), CS_OK);
    assert_int_equal(t.k, 1);
    for (size_t i = 0; i < 2; i++)
        assert_double_near(t.rows[i].v[CS_METHODS_COL_TOPK], t.rows[i].v[CS_METHODS_COL_ECE], 0);
    check_against_direct(&t, d, 2, &s, &o);
    cs_methods_free(&t);

    /* k larger than the class count is clamped */
    o = opts(0, 50, 0, 20, 1);
    assert_int_equal(cs_methods_run(d, 2, &s, &o, NULL, &t, &err), CS_OK);
    assert_int_equal(t.k, 10);
    check_against_direct(&t, d, 2, &s, &o);
    cs_methods_free(&t);
    cs_dataset_free(g);
    cs_dataset_free(ts);
}

/* The paired difference does not depend on the method file's row order: pairs are drawn in the
 * reference's order (resampled in the method's order, a file with its rows shuffled would give
 * another interval than the report's two-file table). Method B' is B with its rows reversed,
 * paired by id. */
static void test_method_row_order(void **state)
{
    (void)state;
    enum { N = 40 };
    double pa[N * 2], pb[N * 2], pr[N * 2];
    int la[N], lr[N];
    char nm[N][16];
    const char *names[N], *rnames[N];
    for (int i = 0; i < N; i++) {
        double a = 0.5 + 0.0123 * i, b = 0.97 - 0.011 * ((i * 7) % N);
        la[i] = (i % 3 == 0);
        pa[2 * i] = a; pa[2 * i + 1] = 1 - a;
        pb[2 * i] = b; pb[2 * i + 1] = 1 - b;
        snprintf(nm[i], sizeof nm[i], "s%02d", i);
        names[i] = nm[i];
    }
    for (int i = 0; i < N; i++) {
        int j = N - 1 - i;
        pr[2 * i] = pb[2 * j]; pr[2 * i + 1] = pb[2 * j + 1];
        lr[i] = la[j];
        rnames[i] = names[j];
    }
    cs_dataset *a = make_ds("a.csv", N, 2, pa, la), *b = make_ds("b.csv", N, 2, pb, la),
               *r = make_ds("r.csv", N, 2, pr, lr);
    add_ids(a, names);
    add_ids(b, names);
    add_ids(r, rnames);
    cs_settings s;
    cs_settings_default(&s);
    cs_error err;
    cs_methods tb, tr;
    cs_methods_options o = opts(0, 0, 0, 300, 11);
    const cs_dataset *db[2] = { a, b }, *dr[2] = { a, r };
    assert_int_equal(cs_methods_run(db, 2, &s, &o, NULL, &tb, &err), CS_OK);
    assert_int_equal(cs_methods_run(dr, 2, &s, &o, NULL, &tr, &err), CS_OK);
    assert_true(tb.rows[1].has_diff && tr.rows[1].has_diff);
    for (int c = 0; c < CS_METHODS_NCOL; c++) {
        assert_double_near(tr.rows[1].diff[c], tb.rows[1].diff[c], 1e-12);
        assert_double_near(tr.rows[1].dlo[c], tb.rows[1].dlo[c], 1e-12);
        assert_double_near(tr.rows[1].dhi[c], tb.rows[1].dhi[c], 1e-12);
        assert_double_near(tr.rows[1].pbetter[c], tb.rows[1].pbetter[c], 0);
    }
    /* the interval has width: the check above compares resampled numbers, not constants */
    assert_true(tb.rows[1].dhi[CS_METHODS_COL_ECE] - tb.rows[1].dlo[CS_METHODS_COL_ECE] > 1e-3);
    cs_methods_free(&tb);
    cs_methods_free(&tr);
    cs_dataset_free(a);
    cs_dataset_free(b);
    cs_dataset_free(r);
}

/* A method compared with itself: diff 0, a zero-width interval at 0, p_better 0 (never strictly
 * better), for every column; with and without intervals. */
static void check_self(const cs_dataset *x, int ci)
{
    const cs_dataset *d[2] = { x, x };
    cs_settings s;
    cs_settings_default(&s);
    cs_methods_options o = opts(0, 0, ci, 100, 5);
    cs_methods t;
    cs_error err;
    assert_int_equal(cs_methods_run(d, 2, &s, &o, NULL, &t, &err), CS_OK);
    const cs_method_row *r = &t.rows[1];
    assert_int_equal(r->diff_status, CS_OK);
    assert_true(r->has_diff);
    assert_int_equal(r->n_pairs, x->n_samples);
    for (int c = 0; c < CS_METHODS_NCOL; c++) {
        assert_double_near(r->diff[c], 0, 0);
        assert_double_near(r->dlo[c], 0, 0);
        assert_double_near(r->dhi[c], 0, 0);
        assert_double_near(r->pbetter[c], 0, 0);
        assert_false(cs_methods_excludes_zero(r->dlo[c], r->dhi[c]));
        assert_double_near(r->v[c], t.rows[0].v[c], 0);
        assert_double_near(r->lo[c], t.rows[0].lo[c], 0);
        assert_double_near(r->hi[c], t.rows[0].hi[c], 0);
    }
    /* same values: every rank is 1 and no column disagrees */
    int rank[2];
    for (int c = 0; c < CS_METHODS_NCOL; c++) {
        cs_methods_ranks(&t, c, rank);
        assert_int_equal(rank[0], 1);
        assert_int_equal(rank[1], 1);
        assert_int_equal(cs_methods_ranking_differs(&t, c), 0);
    }
    cs_methods_free(&t);
}

static void test_self_compare(void **state)
{
    (void)state;
    cs_dataset *b = make_bin4("b.csv", P_B, LAB4);
    check_self(b, 0);
    check_self(b, 30);
    cs_dataset_free(b);
    cs_dataset *g = cs_test_load_sample("digits_gnb.csv");
    check_self(g, 0);
    cs_dataset_free(g);
}

static void test_rankings(void **state)
{
    (void)state;
    cs_dataset *a = make_bin4("a.csv", P_A, LAB4), *b = make_bin4("b.csv", P_B, LAB4),
               *c = make_bin4("c.csv", P_C, LAB4), *dd = make_bin4("d.csv", P_D, LAB4);
    cs_settings s;
    cs_settings_default(&s);
    cs_methods_options o = opts(0, 0, 0, 20, 1);
    cs_methods t;
    cs_error err;
    int rank[3];

    /* disagreeing trio A, B, C (see P_A) */
    const cs_dataset *dis[3] = { a, b, c };
    assert_int_equal(cs_methods_run(dis, 3, &s, &o, NULL, &t, &err), CS_OK);
    cs_methods_ranks(&t, CS_METHODS_COL_ECE, rank);
    assert_int_equal(rank[0], 1);
    assert_int_equal(rank[1], 2);
    assert_int_equal(rank[2], 3);
    cs_methods_ranks(&t, 7 /* brier */, rank);
    assert_int_equal(rank[0], 2);
    assert_int_equal(rank[1], 1);
    assert_int_equal(rank[2], 3);
    assert_int_equal(cs_methods_ranking_differs(&t, 7), 1);
    assert_int_equal(cs_methods_ranking_differs(&t, CS_METHODS_COL_ECE), 0);
    /* accuracy (higher is better): B 1.0 first, A and C tie at .75 and share rank 2; B beats A
     * there while A beats B under ECE -> a disagreement too */
    cs_methods_ranks(&t, 0, rank);
    assert_int_equal(rank[0], 2);
    assert_int_equal(rank[1], 1);
    assert_int_equal(rank[2], 2);
    assert_int_equal(cs_methods_ranking_differs(&t, 0), 1);
    cs_methods_free(&t);

    /* agreeing trio A, D, C: ECE 0 < .05 < .15, Brier .375 < .38 < .42; accuracy all .75 (a tie
     * is not a disagreement) */
    const cs_dataset *agr[3] = { a, dd, c };
    assert_int_equal(cs_methods_run(agr, 3, &s, &o, NULL, &t, &err), CS_OK);
    assert_double_near(t.rows[1].v[CS_METHODS_COL_ECE], 0.05, 1e-12);
    assert_double_near(t.rows[1].v[7], 0.38, 1e-12);
    cs_methods_ranks(&t, 7, rank);
    assert_int_equal(rank[0], 1);
    assert_int_equal(rank[1], 2);
    assert_int_equal(rank[2], 3);
    assert_int_equal(cs_methods_ranking_differs(&t, 7), 0);
    cs_methods_ranks(&t, 0, rank);
    assert_int_equal(rank[0], 1);
    assert_int_equal(rank[1], 1);
    assert_int_equal(rank[2], 1);
    assert_int_equal(cs_methods_ranking_differs(&t, 0), 0);
    cs_methods_free(&t);

    /* a method without data gets rank 0 and takes no part in the disagreement test */
    const cs_dataset *gap[4] = { a, NULL, b, c };
    assert_int_equal(cs_methods_run(gap, 4, &s, &o, NULL, &t, &err), CS_OK);
    int r4[4];
    cs_methods_ranks(&t, 7, r4);
    assert_int_equal(r4[0], 2);
    assert_int_equal(r4[1], 0);
    assert_int_equal(r4[2], 1);
    assert_int_equal(r4[3], 3);
    assert_int_equal(cs_methods_ranking_differs(&t, 7), 1);
    cs_methods_free(&t);

    cs_dataset_free(a);
    cs_dataset_free(b);
    cs_dataset_free(c);
    cs_dataset_free(dd);
}

static void rows_identical(const cs_methods *x, const cs_methods *y)
{
    assert_int_equal(x->n, y->n);
    assert_int_equal(x->k, y->k);
    assert_int_equal(x->n_top, y->n_top);
    for (size_t i = 0; i < x->n; i++) {
        const cs_method_row *a = &x->rows[i], *b = &y->rows[i];
        assert_int_equal(a->status, b->status);
        assert_int_equal(a->ok, b->ok);
        assert_int_equal(a->has_diff, b->has_diff);
        assert_int_equal(a->n_pairs, b->n_pairs);
        assert_memory_equal(a->v, b->v, sizeof a->v);
        assert_memory_equal(a->lo, b->lo, sizeof a->lo);
        assert_memory_equal(a->hi, b->hi, sizeof a->hi);
        assert_memory_equal(a->diff, b->diff, sizeof a->diff);
        assert_memory_equal(a->dlo, b->dlo, sizeof a->dlo);
        assert_memory_equal(a->dhi, b->dhi, sizeof a->dhi);
        assert_memory_equal(a->pbetter, b->pbetter, sizeof a->pbetter);
        assert_int_equal(a->mass_n, b->mass_n);
        assert_memory_equal(a->top, b->top, x->n_top * sizeof *a->top);
        assert_int_equal(a->k, b->k);
        assert_memory_equal(a->cls, b->cls, a->k * sizeof *a->cls);
    }
}

static void test_threads_identical(void **state)
{
    (void)state;
    cs_dataset *g = cs_test_load_sample("digits_gnb.csv");
    cs_dataset *ts = cs_test_load_sample("digits_ts.csv");
    const cs_dataset *d[3] = { ts, g, ts };
    cs_settings s;
    cs_settings_default(&s);
    cs_methods_options o = opts(1, 0, 40, 80, 123);
    cs_methods t1, t2, t3;
    cs_error err;
    cs_run r1 = { .threads = 1 }, r2 = { .threads = 2 };
    assert_int_equal(cs_methods_run(d, 3, &s, &o, &r1, &t1, &err), CS_OK);
    assert_int_equal(cs_methods_run(d, 3, &s, &o, &r2, &t2, &err), CS_OK);
    rows_identical(&t1, &t2);
    /* the intervals really were resampled (not a degenerate, trivially equal table) */
    assert_true(t1.rows[0].lo[CS_METHODS_COL_ECE] < t1.rows[0].hi[CS_METHODS_COL_ECE]);
    assert_true(t1.rows[0].dlo[CS_METHODS_COL_ECE] < t1.rows[0].dhi[CS_METHODS_COL_ECE]);
    /* another seed gives other intervals */
    o.seed = 124;
    assert_int_equal(cs_methods_run(d, 3, &s, &o, &r2, &t3, &err), CS_OK);
    assert_true(memcmp(t1.rows[0].lo, t3.rows[0].lo, sizeof t1.rows[0].lo) != 0 ||
                memcmp(t1.rows[0].hi, t3.rows[0].hi, sizeof t1.rows[0].hi) != 0);
    assert_memory_equal(t1.rows[0].v, t3.rows[0].v, sizeof t1.rows[0].v);
    cs_methods_free(&t1);
    cs_methods_free(&t2);
    cs_methods_free(&t3);
    cs_dataset_free(g);
    cs_dataset_free(ts);
}

typedef struct canceller {
    atomic_int *flag;
    atomic_int *progress;
    int seen;                    /* progress (ppm) when the flag was raised */
} canceller;

/* Raises the flag once the resampling under way has finished a replicate (no elapsed time: a
 * liveness limit only catches a run that never reports progress). */
static void *cancel_after_progress(void *arg)
{
    canceller *c = arg;
    for (int waited = 0; (c->seen = atomic_load(c->progress)) <= 0; waited++) {
        if (waited > CS_TEST_LIVENESS_MS) break;
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
    }
    atomic_store(c->flag, 1);
    return NULL;
}

static void test_cancel(void **state)
{
    (void)state;
    cs_dataset *g = cs_test_load_sample("digits_gnb.csv");
    cs_dataset *ts = cs_test_load_sample("digits_ts.csv");
    const cs_dataset *d[2] = { g, ts };
    cs_settings s;
    cs_settings_default(&s);
    cs_error err;
    cs_methods t;

    /* raised before the call: nothing is measured */
    atomic_int flag;
    atomic_init(&flag, 1);
    cs_run run = { .threads = 2, .cancel = &flag };
    cs_methods_options o = opts(0, 0, 0, 0, 0);
    cs_error_clear(&err);
    assert_int_equal(cs_methods_run(d, 2, &s, &o, &run, &t, &err), CS_ECANCELLED);
    assert_int_equal(err.code, CS_ECANCELLED);
    assert_null(t.rows);
    assert_int_equal(t.n, 0);
    cs_methods_free(&t);

    /* raised while the first row's bootstrap runs (after its first replicates, as its progress
     * shows): the bootstrap stops part-way (its progress stays below 1,000,000 ppm; one that
     * ignored the flag would finish all 200,000 and only then the row loop would notice) and
     * the call returns CS_ECANCELLED with nothing in out */
    atomic_int progress;
    atomic_init(&progress, 0);
    run.progress_ppm = &progress;
    atomic_store(&flag, 0);
    o = opts(0, 0, 200000, 0, 0);
    canceller c = { &flag, &progress, 0 };
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, cancel_after_progress, &c), 0);
    cs_error_clear(&err);
    cs_status st = cs_methods_run(d, 2, &s, &o, &run, &t, &err);
    pthread_join(th, NULL);
    assert_int_equal(st, CS_ECANCELLED);
    assert_int_equal(err.code, CS_ECANCELLED);
    assert_null(t.rows);
    assert_int_equal(t.n, 0);
    assert_true(c.seen > 0);
    if (!(atomic_load(&progress) < 1000000))
        fail_msg("the cancelled bootstrap reports %d ppm done", atomic_load(&progress));

    /* raised during the paired comparison of the second row (the only resampling: no ci) */
    atomic_store(&flag, 0);
    atomic_store(&progress, 0);
    o = opts(0, 0, 0, 400000, 0);
    c.seen = 0;
    assert_int_equal(pthread_create(&th, NULL, cancel_after_progress, &c), 0);
    cs_error_clear(&err);
    st = cs_methods_run(d, 2, &s, &o, &run, &t, &err);
    pthread_join(th, NULL);
    assert_int_equal(st, CS_ECANCELLED);
    assert_null(t.rows);
    assert_true(c.seen > 0);
    if (!(atomic_load(&progress) < 1000000))
        fail_msg("the cancelled comparison reports %d ppm done", atomic_load(&progress));
    cs_dataset_free(g);
    cs_dataset_free(ts);
}

static void test_usage_errors(void **state)
{
    (void)state;
    cs_dataset *a = make_bin4("a.csv", P_A, LAB4);
    const cs_dataset *many[CS_METHODS_MAX + 1];
    for (size_t i = 0; i <= CS_METHODS_MAX; i++) many[i] = a;
    cs_settings s;
    cs_settings_default(&s);
    cs_methods t;
    cs_error err;
    cs_methods_options o = opts(0, 0, 0, 10, 0);

    assert_int_equal(cs_methods_run(many, 0, &s, &o, NULL, &t, &err), CS_EUSAGE);
    assert_int_equal(err.code, CS_EUSAGE);
    assert_string_equal(err.msg, "methods: 0 methods, reference 0");
    assert_null(t.rows);

    assert_int_equal(cs_methods_run(many, CS_METHODS_MAX + 1, &s, &o, NULL, &t, &err), CS_EUSAGE);
    assert_string_equal(err.msg, "methods: 65 methods, reference 0");
    assert_null(t.rows);

    o.ref = 3;
    assert_int_equal(cs_methods_run(many, 3, &s, &o, NULL, &t, &err), CS_EUSAGE);
    assert_string_equal(err.msg, "methods: 3 methods, reference 3");
    assert_null(t.rows);

    /* the maximum itself is allowed */
    o.ref = CS_METHODS_MAX - 1;
    assert_int_equal(cs_methods_run(many, CS_METHODS_MAX, &s, &o, NULL, &t, &err), CS_OK);
    assert_int_equal(t.n, CS_METHODS_MAX);
    assert_true(t.rows[0].has_diff);
    assert_false(t.rows[CS_METHODS_MAX - 1].has_diff);
    cs_methods_free(&t);
    cs_dataset_free(a);
}

/* Per-method failures are recorded in the rows with the engine's own messages; the call still
 * succeeds and the other rows are measured. */
static void test_row_errors(void **state)
{
    (void)state;
    cs_dataset *a = make_bin4("a.csv", P_A, LAB4);
    static const int lab_e[4] = { 0, 1, 0, 1 };       /* differs from a at sample 2 */
    cs_dataset *e = make_bin4("e.csv", P_B, lab_e);
    const double p3[6] = { 0.9, 0.1, 0.8, 0.2, 0.3, 0.7 };
    const int l3[3] = { 0, 0, 1 };
    cs_dataset *f = make_ds("f.csv", 3, 2, p3, l3);  /* 3 samples, a has 4 */
    const double pk3[12] = { .5, .3, .2, .6, .2, .2, .7, .2, .1, .1, .3, .6 };
    cs_dataset *g3 = make_ds("g.csv", 4, 3, pk3, LAB4); /* 3 classes, a has 2 */
    cs_settings s;
    cs_settings_default(&s);
    cs_methods t;
    cs_error err;
    cs_methods_options o = opts(0, 0, 0, 10, 0);

    const cs_dataset *d[5] = { a, e, f, g3, NULL };
    assert_int_equal(cs_methods_run(d, 5, &s, &o, NULL, &t, &err), CS_OK);
    assert_int_equal(t.classes, 2);
    /* mismatched labels */
    assert_int_equal(t.rows[1].status, CS_OK);
    assert_true(t.rows[1].ok);
    assert_int_equal(t.rows[1].diff_status, CS_EINPUT);
    assert_int_equal(t.rows[1].diff_err.code, CS_EINPUT);
    assert_string_equal(t.rows[1].diff_err.msg,
                        "e.csv: --compare: label '1' of sample 2 differs from a.csv (label '0'); "
                        "no id column in both: samples pair in file order");
    assert_false(t.rows[1].has_diff);
    for (int c = 0; c < CS_METHODS_NCOL; c++) assert_true(isnan(t.rows[1].diff[c]));
    /* e's own values are still its values: B's predictions 0,0,0,1 against labels 0,1,0,1 */
    assert_double_near(t.rows[1].v[0], 0.75, 1e-15);
    /* mismatched sample counts */
    assert_true(t.rows[2].ok);
    assert_int_equal(t.rows[2].diff_status, CS_EINPUT);
    assert_string_equal(t.rows[2].diff_err.msg,
                        "a.csv: --compare: sample 4 has no partner: a.csv has 4 samples, f.csv has 3 "
                        "(no id column in both: samples pair in file order)");
    assert_false(t.rows[2].has_diff);
    /* mismatched class counts */
    assert_int_equal(t.rows[3].diff_status, CS_EINPUT);
    assert_string_equal(t.rows[3].diff_err.msg, "g.csv: --compare: class '2' has no partner: a.csv has 2 classes, g.csv has 3");
    assert_int_equal(t.rows[3].k, 3);
    /* no data */
    assert_int_equal(t.rows[4].status, CS_EUSAGE);
    assert_false(t.rows[4].ok);
    assert_false(t.rows[4].has_diff);
    assert_false(t.rows[4].mass_ok);
    assert_null(t.rows[4].cls);
    for (int c = 0; c < CS_METHODS_NCOL; c++) assert_true(isnan(t.rows[4].v[c]));
    cs_methods_free(&t);

    /* with an id column in both files samples are paired by id: m holds B's rows in reverse
     * order (ids s4..s1) and pairs with a row by row of the same id; n holds an id a lacks */
    const double p_rev[4] = { P_B[3], P_B[2], P_B[1], P_B[0] };
    const int l_rev[4] = { LAB4[3], LAB4[2], LAB4[1], LAB4[0] };
    cs_dataset *ai = make_bin4("a.csv", P_A, LAB4), *m = make_bin4("m.csv", p_rev, l_rev),
               *nn = make_bin4("n.csv", P_B, LAB4);
    static const char *ids_a[4] = { "s1", "s2", "s3", "s4" }, *ids_m[4] = { "s4", "s3", "s2", "s1" },
                      *ids_n[4] = { "s1", "s2", "s3", "s9" };
    add_ids(ai, ids_a);
    add_ids(m, ids_m);
    add_ids(nn, ids_n);
    const cs_dataset *dl[3] = { ai, m, nn };
    assert_int_equal(cs_methods_run(dl, 3, &s, &o, NULL, &t, &err), CS_OK);
    assert_int_equal(t.rows[1].diff_status, CS_OK);
    assert_true(t.rows[1].has_diff);
    assert_int_equal(t.rows[1].n_pairs, 4);
    assert_double_near(t.rows[1].diff[CS_METHODS_COL_ECE], 0.0875, 1e-12);   /* B − A by hand */
    assert_double_near(t.rows[1].diff[7], 0.02375 - 0.375, 1e-12);
    assert_int_equal(t.rows[2].diff_status, CS_EINPUT);
    /* the first id of the reference (A) that n lacks, scanning A in file order */
    assert_string_equal(t.rows[2].diff_err.msg, "a.csv: --compare: id 's4' is not in n.csv");
    assert_false(t.rows[2].has_diff);
    cs_methods_free(&t);
    cs_dataset_free(ai);
    cs_dataset_free(m);
    cs_dataset_free(nn);

    /* reference without data: values but no differences */
    const cs_dataset *dn[2] = { NULL, a };
    assert_int_equal(cs_methods_run(dn, 2, &s, &o, NULL, &t, &err), CS_OK);
    assert_int_equal(t.classes, 2);
    assert_true(t.rows[1].ok);
    assert_false(t.rows[1].has_diff);
    assert_int_equal(t.rows[1].diff_status, CS_OK);
    assert_double_near(t.rows[1].v[0], 0.75, 1e-15);
    cs_methods_free(&t);

    /* a bad selection: every row fails with cs_prepare's own message */
    snprintf(s.select, sizeof s.select, "y ==");
    cs_error perr;
    assert_null(cs_prepare(a, &s, &perr));
    const cs_dataset *d2[2] = { a, a };
    assert_int_equal(cs_methods_run(d2, 2, &s, &o, NULL, &t, &err), CS_OK);
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(t.rows[i].status, perr.code);
        assert_int_equal(t.rows[i].status, CS_EUSAGE);
        assert_string_equal(t.rows[i].err.msg, perr.msg);
        assert_false(t.rows[i].ok);
        assert_false(t.rows[i].has_diff);
        assert_false(t.rows[i].mass_ok);
    }
    cs_methods_free(&t);

    /* a selection that keeps nothing: CS_EEMPTY in the rows */
    snprintf(s.select, sizeof s.select, "conf > 0.99");
    assert_int_equal(cs_methods_run(d2, 2, &s, &o, NULL, &t, &err), CS_OK);
    assert_int_equal(t.rows[0].status, CS_EEMPTY);
    assert_false(t.rows[0].ok);
    assert_false(t.rows[0].mass_ok);
    cs_methods_free(&t);

    cs_dataset_free(a);
    cs_dataset_free(e);
    cs_dataset_free(f);
    cs_dataset_free(g3);
}

/* One sample set: a selection on a prediction-dependent field (conf) is evaluated on the
 * reference's samples only, and every number of the table is on those samples of every method,
 * matched by id. A (the reference) keeps s1..s4 under 'conf > 0.8'; B moves its confidences so
 * that on its own rows it would keep s2, s4, s5 instead, and it lists its rows in reverse order
 * (s6..s1), so row order cannot stand in for the ids. The expected values come from
 * cs_prepare/cs_evaluate on datasets built by hand from just those rows. */
static const double SEL_A[6] = { 0.95, 0.9, 0.85, 0.82, 0.6, 0.55 };
static const double SEL_B[6] = { 0.7, 0.97, 0.6, 0.9, 0.95, 0.52 };   /* by id s1..s6 */
static const int SEL_LAB[6] = { 0, 0, 1, 0, 1, 0 };

static void selection_pair(cs_dataset **a, cs_dataset **b)
{
    static const char *ids[6] = { "s1", "s2", "s3", "s4", "s5", "s6" };
    static const char *rev[6] = { "s6", "s5", "s4", "s3", "s2", "s1" };
    double pa[12], pb[12];
    int lb[6];
    for (int i = 0; i < 6; i++) {
        pa[2 * i] = SEL_A[i];
        pa[2 * i + 1] = 1 - SEL_A[i];
        pb[2 * i] = SEL_B[5 - i];
        pb[2 * i + 1] = 1 - SEL_B[5 - i];
        lb[i] = SEL_LAB[5 - i];
    }
    *a = make_ds("a.csv", 6, 2, pa, SEL_LAB);
    *b = make_ds("b.csv", 6, 2, pb, lb);
    add_ids(*a, ids);
    add_ids(*b, rev);
}

/* The samples of p0 (by id s1..s6) listed in keep, as a dataset of their own. */
static cs_dataset *by_hand(const char *path, const double *p0, const int *keep, size_t n)
{
    double prob[12];
    int lab[6];
    for (size_t j = 0; j < n; j++) {
        prob[2 * j] = p0[keep[j]];
        prob[2 * j + 1] = 1 - p0[keep[j]];
        lab[j] = SEL_LAB[keep[j]];
    }
    return make_ds(path, n, 2, prob, lab);
}

static void test_selection_on_reference(void **state)
{
    (void)state;
    cs_dataset *a, *b;
    selection_pair(&a, &b);
    cs_settings s, none;
    cs_settings_default(&s);
    none = s;
    snprintf(s.select, sizeof s.select, "conf > 0.8");
    static const int on_a[4] = { 0, 1, 2, 3 };       /* s1..s4: A's confidences above 0.8 */
    cs_dataset *a4 = by_hand("a4", SEL_A, on_a, 4), *b4 = by_hand("b4", SEL_B, on_a, 4);
    double va[CS_METHODS_NCOL], vb[CS_METHODS_NCOL];
    direct_values(a4, &none, 2, va);
    direct_values(b4, &none, 2, vb);
    /* by hand: B on s1..s4 predicts class 0 four times, with s3 (label 1) wrong */
    assert_double_near(vb[0], 0.75, 1e-15);

    cs_methods t;
    cs_error err;
    cs_methods_options o = opts(0, 0, 0, 50, 7);
    const cs_dataset *d[2] = { a, b };
    assert_int_equal(cs_methods_run(d, 2, &s, &o, NULL, &t, &err), CS_OK);
    assert_true(t.selected);
    assert_false(t.select_each);
    assert_int_equal(t.sel_samples, 4);
    assert_int_equal(t.sel_of, 6);
    for (int c = 0; c < CS_METHODS_NCOL; c++) {
        if (isnan(va[c])) continue;
        assert_double_near(t.rows[0].v[c], va[c], 1e-12);
        assert_double_near(t.rows[1].v[c], vb[c], 1e-12);
        /* the difference is method - reference of those very values */
        assert_true(t.rows[1].has_diff);
        assert_double_near(t.rows[1].diff[c], vb[c] - va[c], 1e-12);
    }
    assert_int_equal(t.rows[0].samples, 4);
    assert_int_equal(t.rows[1].samples, 4);
    assert_int_equal(t.rows[1].n_pairs, 4);
    assert_int_equal(t.rows[1].mass_n, 4);
    /* the rankings read the same values: ECE and accuracy order A and B as the direct values do */
    int rank[2];
    cs_methods_ranks(&t, CS_METHODS_COL_ECE, rank);
    assert_int_equal(rank[0], va[1] < vb[1] ? 1 : 2);
    assert_int_equal(rank[1], va[1] < vb[1] ? 2 : 1);
    char line[400];
    cs_methods_selection_line(&t, s.select, "a.csv", line, sizeof line);
    assert_string_equal(line, "selection: conf > 0.8 on the reference (a.csv): 4 of 6 samples, the same for every method");
    cs_methods_free(&t);

    /* each: B on its own s2, s4, s5 (s5 is wrong): accuracy 2/3; no paired differences */
    o.select_each = 1;
    assert_int_equal(cs_methods_run(d, 2, &s, &o, NULL, &t, &err), CS_OK);
    assert_true(t.select_each);
    assert_int_equal(t.rows[1].samples, 3);
    assert_double_near(t.rows[1].v[0], 2.0 / 3.0, 1e-15);
    assert_double_near(t.rows[0].v[0], va[0], 1e-15);
    assert_false(t.rows[1].has_diff);
    assert_int_equal(t.rows[1].diff_status, CS_OK);
    assert_string_equal(t.rows[1].diff_err.msg, CS_METHODS_EACH_NO_PAIRS);
    for (int c = 0; c < CS_METHODS_NCOL; c++) assert_true(isnan(t.rows[1].diff[c]));
    cs_methods_selection_line(&t, s.select, "a.csv", line, sizeof line);
    assert_string_equal(line, "selection: conf > 0.8 on each method's own samples (4, 3 of 6); values only, no paired differences");
    cs_methods_free(&t);

    /* a selection that keeps none of the reference's samples: every row says so, and whose */
    o.select_each = 0;
    cs_settings s2 = s;
    snprintf(s2.select, sizeof s2.select, "conf > 2");
    assert_int_equal(cs_methods_run(d, 2, &s2, &o, NULL, &t, &err), CS_OK);
    assert_int_equal(t.sel_samples, 0);
    assert_int_equal(t.rows[0].status, CS_EEMPTY);
    assert_string_equal(t.rows[0].err.msg, "a.csv: the selection 'conf > 2' keeps no sample");
    assert_int_equal(t.rows[1].status, CS_EEMPTY);
    assert_string_equal(t.rows[1].err.msg, "a.csv: the selection 'conf > 2' keeps no sample (it is evaluated on the reference)");
    assert_false(t.rows[1].ok);
    cs_verdict nv = cs_methods_verdict(&t, 1, CS_METRIC_ECE, 15);
    assert_int_equal(nv.kind, CS_VERDICT_NA);
    cs_verdict_line(&nv, "b.csv", "a.csv", line, sizeof line);
    assert_string_equal(line, "verdict: n/a for b.csv; no paired samples");
    cs_methods_free(&t);
    o.select_each = 1;

    /* each without a selection: one set anyway, so the differences stay */
    assert_int_equal(cs_methods_run(d, 2, &none, &o, NULL, &t, &err), CS_OK);
    assert_false(t.selected);
    assert_true(t.rows[1].has_diff);
    cs_methods_selection_line(&t, none.select, "a.csv", line, sizeof line);
    assert_string_equal(line, "");
    cs_methods_free(&t);

    cs_dataset_free(a);
    cs_dataset_free(b);
    cs_dataset_free(a4);
    cs_dataset_free(b4);
}

/* The table of reference a and method b under the default settings, no value intervals, cmp
 * paired resamples. */
static void run_two(const cs_dataset *a, const cs_dataset *b, int cmp, uint64_t seed, cs_methods *t)
{
    cs_settings s;
    cs_settings_default(&s);
    cs_error err;
    cs_methods_options o = opts(0, 0, 0, cmp, seed);
    const cs_dataset *d[2] = { a, b };
    assert_int_equal(cs_methods_run(d, 2, &s, &o, NULL, t, &err), CS_OK);
}

/* "!" on a paired interval: flat.csv predicts class 0 at 0.75 for all 180 samples (135 right:
 * ECE 0), spread.csv at c = 0.55, 0.60, ..., 0.95 for 20 samples each with 20c right (every
 * group calibrated: ECE 0 too). The difference of MCE is 0, but every resample draws repeated
 * rows into spread's nine small groups, so its MCE rises more than flat's: the percentile
 * interval of spread - flat lies above 0 and misses the difference itself. */
static void test_paired_interval_misses(void **state)
{
    (void)state;
    double pf[360], ps[360];
    int lab[180];
    for (int g = 0, i = 0; g < 9; g++) {
        double c = (11 + g) / 20.0;
        for (int j = 0; j < 20; j++, i++) {
            lab[i] = j < (int)lround(c * 20) ? 0 : 1;
            pf[2 * i] = 0.75;
            pf[2 * i + 1] = 0.25;
            ps[2 * i] = c;
            ps[2 * i + 1] = 1 - c;
        }
    }
    cs_dataset *flat = make_ds("flat.csv", 180, 2, pf, lab), *spread = make_ds("spread.csv", 180, 2, ps, lab);
    cs_methods t;
    run_two(flat, spread, 200, 1, &t);
    const cs_method_row *r = &t.rows[1];
    assert_true(r->has_diff);
    int col_mce = 3, marked = 0, unmarked = 0;
    assert_double_near(r->diff[col_mce], 0.0, 1e-12);
    assert_true(r->dlo[col_mce] > 0.01);                 /* the interval lies above its 0 */
    assert_true(r->diff_excludes[col_mce]);
    /* the mark is the definition, column by column */
    for (int c = 0; c < CS_METHODS_NCOL; c++) {
        int want = !r->equal[c] && isfinite(r->diff[c]) && (r->diff[c] < r->dlo[c] - cs_metric_tie_tol(r->dlo[c], r->dhi[c]) ||
                                                           r->diff[c] > r->dhi[c] + cs_metric_tie_tol(r->dlo[c], r->dhi[c]));
        assert_int_equal(r->diff_excludes[c], want);
        marked += want;
        unmarked += !want;
    }
    assert_true(marked >= 1 && unmarked >= 1);           /* accuracy's interval holds its 0 */
    assert_false(r->diff_excludes[0]);
    cs_methods_free(&t);
    cs_dataset_free(flat);
    cs_dataset_free(spread);

    /* by hand */
    assert_true(cs_methods_interval_misses(0.0, 0.01, 0.2));
    assert_true(cs_methods_interval_misses(0.3, 0.01, 0.2));
    assert_false(cs_methods_interval_misses(0.1, 0.01, 0.2));
    assert_false(cs_methods_interval_misses(0.01, 0.01, 0.2));   /* on a bound */
    assert_false(cs_methods_interval_misses(NAN, 0.01, 0.2));
    assert_false(cs_methods_interval_misses(0.0, NAN, 0.2));
    /* the reasons beside an n/a */
    assert_string_equal(cs_methods_na_reason(5), "top1/class:C/classwise only");   /* RECE-G */
    assert_string_equal(cs_methods_na_reason(9), "top1/class:C only");            /* smooth ECE */
    assert_string_equal(cs_methods_na_reason(CS_METHODS_COL_TOPK), "undefined on these samples");
}

/* The verdict: its kind from the paired difference method - reference, and its one line. */
static void test_verdict(void **state)
{
    (void)state;
    char line[600];
    /* ECE lower is better: an interval below 0 says the method is better */
    cs_verdict v = cs_verdict_make(CS_METRIC_ECE, -0.0507, -0.0621, -0.0152, 1.0, 0, 1797, 0, 15);
    assert_int_equal(v.kind, CS_VERDICT_BETTER);
    cs_verdict_line(&v, "B", "A", line, sizeof line);
    assert_string_equal(line, "verdict: B is better calibrated than A; ECE -0.0507 [-0.0621, -0.0152], P(better) 1.000, 1,797 paired samples");
    /* above 0: the reference is */
    v = cs_verdict_make(CS_METRIC_ECE, 0.02, 0.01, 0.03, 0.0, 0, 1797, 0, 15);
    assert_int_equal(v.kind, CS_VERDICT_WORSE);
    cs_verdict_line(&v, "B", "A", line, sizeof line);
    assert_string_equal(line, "verdict: A is better calibrated than B; ECE +0.0200 [+0.0100, +0.0300], P(better) 0.000, 1,797 paired samples");
    /* accuracy-like direction is the metric's own: NLL lower is better too; an interval over 0 says nothing */
    v = cs_verdict_make(CS_METRIC_NLL, -0.01, -0.03, 0.01, 0.8, 0, 500, 0, 15);
    assert_int_equal(v.kind, CS_VERDICT_NO_DIFFERENCE);
    cs_verdict_line(&v, "B", "A", line, sizeof line);
    assert_string_equal(line, "verdict: no significant difference between B and A; NLL -0.0100 [-0.0300, +0.0100], P(better) 0.800, 500 paired samples");
    /* an interval beside its own difference decides nothing */
    v = cs_verdict_make(CS_METRIC_MCE, 0.0, 0.04, 0.25, 0.0, 0, 180, 0, 15);
    assert_int_equal(v.kind, CS_VERDICT_NO_DIFFERENCE);
    assert_true(v.misses);
    cs_verdict_line(&v, "B", "A", line, sizeof line);
    assert_string_equal(line, "verdict: no significant difference between B and A; MCE +0.0000 [+0.0400, +0.2500]!, P(better) 0.000, 180 paired samples");
    /* a tie */
    v = cs_verdict_make(CS_METRIC_ECE, 0.0, 0.0, 0.0, 0.0, 1, 300, 0, 15);
    assert_int_equal(v.kind, CS_VERDICT_NO_DIFFERENCE);
    assert_true(isnan(v.p_better));   /* the table's row has no P(better) on a tie either */
    cs_verdict_line(&v, "B", "A", line, sizeof line);
    assert_string_equal(line, "verdict: no significant difference between B and A; ECE +0.0000 [+0.0000, +0.0000], P(better) n/a (a tie), 300 paired samples");
    /* too few: 149 of the 150 a binned error needs, and cases */
    v = cs_verdict_make(CS_METRIC_ECE, -0.05, -0.06, -0.04, 1.0, 0, 149, 0, 15);
    assert_int_equal(v.kind, CS_VERDICT_TOO_FEW);
    cs_verdict_line(&v, "B", "A", line, sizeof line);
    assert_string_equal(line, "verdict: too few paired samples to say (fewer than 150); ECE -0.0500 [-0.0600, -0.0400], P(better) 1.000, 149 paired samples");
    v = cs_verdict_make(CS_METRIC_ECE, -0.05, -0.06, -0.04, 1.0, 0, 4, 1, 15);
    cs_verdict_line(&v, "B", "A", line, sizeof line);
    assert_string_equal(line, "verdict: too few paired cases to say (fewer than 10); ECE -0.0500 [-0.0600, -0.0400], P(better) 1.000, 4 paired cases");
    /* cases at the rule's boundary: 9 too few, 10 and 11 enough, whatever the bins */
    v = cs_verdict_make(CS_METRIC_ECE, -0.05, -0.06, -0.04, 1.0, 0, 9, 1, 15);
    assert_int_equal(v.kind, CS_VERDICT_TOO_FEW);
    assert_int_equal(v.min_pairs, 10);
    v = cs_verdict_make(CS_METRIC_ECE, -0.05, -0.06, -0.04, 1.0, 0, 10, 1, 15);
    assert_int_equal(v.kind, CS_VERDICT_BETTER);
    v = cs_verdict_make(CS_METRIC_ECE, -0.05, -0.06, -0.04, 1.0, 0, 11, 1, 15);
    assert_int_equal(v.kind, CS_VERDICT_BETTER);
    /* a tie turned round (B - A of an A - B table) prints +0.0000, not -0.0000 */
    v = cs_verdict_make(CS_METRIC_ECE, -0.0, -0.0, -0.0, 0.0, 1, 4, 1, 15);
    cs_verdict_line(&v, "B", "A", line, sizeof line);
    assert_string_equal(line, "verdict: too few paired cases to say (fewer than 10); ECE +0.0000 [+0.0000, +0.0000], P(better) n/a (a tie), 4 paired cases");
    v = cs_verdict_make(CS_METRIC_ECE, -0.05, -0.06, -0.04, 1.0, 0, 150, 0, 15);
    assert_int_equal(v.kind, CS_VERDICT_BETTER);        /* 150 is enough */
    assert_int_equal(v.min_pairs, 150);
    v = cs_verdict_make(CS_METRIC_ECE, -0.05, -0.06, -0.04, 1.0, 0, 151, 0, 15);
    assert_int_equal(v.kind, CS_VERDICT_BETTER);
    /* no number */
    v = cs_verdict_make(CS_METRIC_SMECE, NAN, NAN, NAN, NAN, 0, 400, 0, 15);
    assert_int_equal(v.kind, CS_VERDICT_NA);
    cs_verdict_line(&v, "B", "A", line, sizeof line);
    assert_string_equal(line, "verdict: n/a; smECE has no paired difference here (top1/class:C only)");

    /* from a table: the hand-made trio's B against A (ECE .0875 - 0 on 4 samples) */
    cs_dataset *a = make_bin4("a.csv", P_A, LAB4), *b = make_bin4("b.csv", P_B, LAB4);
    cs_methods t;
    run_two(a, b, 20, 0, &t);
    v = cs_methods_verdict(&t, 1, CS_METRIC_ECE, 15);
    assert_int_equal(v.kind, CS_VERDICT_TOO_FEW);
    assert_int_equal(v.pairs, 4);
    assert_double_near(v.diff, 0.0875, 1e-12);
    assert_double_near(v.diff, t.rows[1].diff[CS_METHODS_COL_ECE], 0);
    v = cs_methods_verdict(&t, 1, CS_METRIC_RECE_M, 15);    /* not a column of the table */
    assert_int_equal(v.kind, CS_VERDICT_NA);
    cs_methods_free(&t);

    /* a row whose pairs are cases (two statistics files) counts cases: 9 too few, 10 enough,
     * where 10 paired samples at M = 15 would be too few */
    cs_method_row rows[2];
    memset(rows, 0, sizeof rows);
    cs_methods ct = { .n = 2, .rows = rows, .ref = 0 };
    rows[1].has_diff = 1;
    rows[1].by_case = 1;
    rows[1].diff[CS_METHODS_COL_ECE] = -0.05;
    rows[1].dlo[CS_METHODS_COL_ECE] = -0.06;
    rows[1].dhi[CS_METHODS_COL_ECE] = -0.04;
    rows[1].pbetter[CS_METHODS_COL_ECE] = 1.0;
    rows[1].n_pairs = 9;
    v = cs_methods_verdict(&ct, 1, CS_METRIC_ECE, 15);
    assert_int_equal(v.kind, CS_VERDICT_TOO_FEW);
    cs_verdict_line(&v, "B", "A", line, sizeof line);
    assert_string_equal(line, "verdict: too few paired cases to say (fewer than 10); ECE -0.0500 [-0.0600, -0.0400], P(better) 1.000, 9 paired cases");
    rows[1].n_pairs = 10;
    assert_int_equal(cs_methods_verdict(&ct, 1, CS_METRIC_ECE, 15).kind, CS_VERDICT_BETTER);
    rows[1].by_case = 0;
    assert_int_equal(cs_methods_verdict(&ct, 1, CS_METRIC_ECE, 15).kind, CS_VERDICT_TOO_FEW);
    cs_dataset_free(a);
    cs_dataset_free(b);
}

static void test_count_grouping(void **state)
{
    (void)state;
    char b[32];
    static const struct { size_t n; const char *s; } cases[] = {
        { 0, "0" }, { 999, "999" }, { 1000, "1,000" }, { 1797, "1,797" }, { 1000000, "1,000,000" }, { 12345678, "12,345,678" }
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cs_methods_count(cases[i].n, b, sizeof b);
        assert_string_equal(b, cases[i].s);
    }
}

/* The mass profile: mean k-th largest probability and mean probability per class. */
static void test_mass_profile(void **state)
{
    (void)state;
    /* rows (label): (.5,.3,.2) 0; (.1,.6,.3) 1; (.2,.2,.6) 2; (.3,.45,.25) 0 */
    const double p[12] = { .5, .3, .2, .1, .6, .3, .2, .2, .6, .3, .45, .25 };
    const int lab[4] = { 0, 1, 2, 0 };
    cs_dataset *x = make_ds("x.csv", 4, 3, p, lab);
    cs_dataset *b = make_bin4("b.csv", P_B, LAB4);
    cs_settings s;
    cs_settings_default(&s);
    cs_methods_options o = opts(0, 0, 0, 10, 0);
    cs_methods t;
    cs_error err;
    const cs_dataset *d[2] = { x, b };
    assert_int_equal(cs_methods_run(d, 2, &s, &o, NULL, &t, &err), CS_OK);
    assert_int_equal(t.classes, 3);
    assert_int_equal(t.n_top, 3);
    const cs_method_row *r = &t.rows[0];
    assert_true(r->mass_ok);
    assert_int_equal(r->mass_n, 4);
    assert_int_equal(r->k, 3);
    /* sorted rows: (.5,.3,.2) (.6,.3,.1) (.6,.2,.2) (.45,.3,.25) */
    assert_double_near(r->top[0], 2.15 / 4, 1e-15);
    assert_double_near(r->top[1], 1.1 / 4, 1e-15);
    assert_double_near(r->top[2], 0.75 / 4, 1e-15);
    assert_double_near(r->cls[0], 1.1 / 4, 1e-15);
    assert_double_near(r->cls[1], 1.55 / 4, 1e-15);
    assert_double_near(r->cls[2], 1.35 / 4, 1e-15);
    /* binary B (a different K than the reference): its own K; top (3·.95 + .8)/4, (3·.05 + .2)/4;
     * class means (3·.95 + .2)/4, (3·.05 + .8)/4 */
    r = &t.rows[1];
    assert_true(r->mass_ok);
    assert_int_equal(r->k, 2);
    assert_double_near(r->top[0], 0.9125, 1e-15);
    assert_double_near(r->top[1], 0.0875, 1e-15);
    assert_double_near(r->cls[0], 0.7625, 1e-15);
    assert_double_near(r->cls[1], 0.2375, 1e-15);
    cs_methods_free(&t);

    /* on the selected samples only: y == 0 keeps rows 0 and 3 */
    snprintf(s.select, sizeof s.select, "y == 0");
    const cs_dataset *d1[1] = { x };
    assert_int_equal(cs_methods_run(d1, 1, &s, &o, NULL, &t, &err), CS_OK);
    r = &t.rows[0];
    assert_true(r->mass_ok);
    assert_int_equal(r->mass_n, 2);
    assert_double_near(r->top[0], 0.475, 1e-15);
    assert_double_near(r->top[1], 0.3, 1e-15);
    assert_double_near(r->top[2], 0.225, 1e-15);
    assert_double_near(r->cls[0], 0.4, 1e-15);
    assert_double_near(r->cls[1], 0.375, 1e-15);
    assert_double_near(r->cls[2], 0.225, 1e-15);
    cs_methods_free(&t);
    cs_dataset_free(x);
    cs_dataset_free(b);

    /* digits_ts (10 classes, n_top = 10), against numpy:
     *   a = np.loadtxt('samples/digits_ts.csv', delimiter=',', skiprows=1); p = a[:, 2:]
     *   s = -np.sort(-p, axis=1); s.mean(axis=0); p.mean(axis=0)
     *   sel = a[:, 1] == 3; s[sel].mean(axis=0); sel.sum()  -> 183 */
    static const double top_all[10] = {
        0.96431522807121306, 0.027587081521742544, 0.0054683430310731159, 0.0016724596913258753,
        0.0005818921776726602, 0.00025179094691819571, 8.6268940495961514e-05,
        2.8996816853814869e-05, 6.8216002859436888e-06, 1.1172024185212429e-06 };
    static const double cls_all[10] = {
        0.098171455631775928, 0.10451976648895217, 0.098714704257982122, 0.099120831598029535,
        0.099729006882113502, 0.10164775737455388, 0.10053160812498863, 0.10100221568345526,
        0.095813717061032158, 0.10074893689711643 };
    static const double top_y3[10] = {
        0.95067586595856501, 0.037416246713904172, 0.0086648578064805661, 0.0025308134098342818,
        0.00054051391762528485, 0.00012114279025673822, 4.16811000580778e-05,
        6.5050203363417961e-06, 1.9444689548932445e-06, 4.2881398451199715e-07 };
    cs_dataset *ts = cs_test_load_sample("digits_ts.csv");
    cs_dataset *g = cs_test_load_sample("digits_gnb.csv");
    const cs_dataset *dg[2] = { g, ts };
    cs_settings_default(&s);
    assert_int_equal(cs_methods_run(dg, 2, &s, &o, NULL, &t, &err), CS_OK);
    assert_int_equal(t.n_top, 10);
    r = &t.rows[1];
    assert_true(r->mass_ok);
    assert_int_equal(r->mass_n, 1797);
    for (int j = 0; j < 10; j++) {
        assert_double_rel(r->top[j], top_all[j], 1e-17, 1e-12);
        assert_double_rel(r->cls[j], cls_all[j], 1e-17, 1e-12);
    }
    /* the reference row too: digits_gnb's mean top-1 probability (numpy, same script) */
    assert_double_rel(t.rows[0].top[0], 0.98776365372302166, 0, 1e-12);
    assert_double_rel(t.rows[0].top[1], 0.011848905450002266, 0, 1e-12);
    cs_methods_free(&t);
    snprintf(s.select, sizeof s.select, "y == 3");
    assert_int_equal(cs_methods_run(dg, 2, &s, &o, NULL, &t, &err), CS_OK);
    r = &t.rows[1];
    assert_int_equal(r->mass_n, 183);
    for (int j = 0; j < 10; j++) assert_double_rel(r->top[j], top_y3[j], 1e-17, 1e-12);
    cs_methods_free(&t);
    cs_dataset_free(ts);
    cs_dataset_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_columns),
        cmocka_unit_test(test_hand_trio_values),
        cmocka_unit_test(test_samples_match_direct),
        cmocka_unit_test(test_method_row_order),
        cmocka_unit_test(test_self_compare),
        cmocka_unit_test(test_rankings),
        cmocka_unit_test(test_threads_identical),
        cmocka_unit_test(test_cancel),
        cmocka_unit_test(test_usage_errors),
        cmocka_unit_test(test_row_errors),
        cmocka_unit_test(test_mass_profile),
        cmocka_unit_test(test_selection_on_reference),
        cmocka_unit_test(test_count_grouping),
        cmocka_unit_test(test_paired_interval_misses),
        cmocka_unit_test(test_verdict),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
