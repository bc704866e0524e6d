/* Unit tests: post-hoc recalibration (temperature, Platt, histogram binning, isotonic), the
 * cross-fitting plan, held-out splits, the mass profile, and the paired comparison of a file with
 * itself. Expected values are worked by hand or come from scikit-learn 1.2 (scripts quoted). */
#include "support/cs_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calscope/resample.h"
#include "calscope/measure.h"
#include "calscope/load.h"
#include "calscope/metrics.h"
#include "calscope/recal.h"
#include "engine/recal/recal_internal.h"

/* ---- helpers ---- */

typedef struct sbuf {
    char *s;
    size_t len, cap;
} sbuf;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (b->s && b->len + (size_t)n < b->cap) { b->len += (size_t)n; return; }
        b->cap = (b->cap + (size_t)n + 1) * 2;
        b->s = realloc(b->s, b->cap);
        assert_non_null(b->s);
    }
}

static cs_dataset *load_text(const char *text)
{
    cs_load_options lo;
    cs_load_options_default(&lo);
    cs_error err;
    cs_error_clear(&err);
    cs_dataset *d = cs_load_buffer("t.csv", text, strlen(text), &lo, NULL, &err);
    if (!d) fprintf(stderr, "load: %s\n", err.msg);
    assert_non_null(d);
    return d;
}

static uint64_t lcg_state;
static double urand(void)
{
    lcg_state = lcg_state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(lcg_state >> 11) / 9007199254740992.0;
}
static double nrand(void)
{
    double u = urand(), v = urand();
    return sqrt(-2 * log(u + 1e-300)) * cos(6.283185307179586 * v);
}

static cs_dataset *recal(const cs_dataset *d, int method, const uint8_t *mask, int folds, cs_recal_info *info)
{
    cs_recal_options o;
    cs_recal_options_default(&o);
    o.fit_mask = mask;
    if (folds) o.folds = folds;
    cs_error err;
    cs_error_clear(&err);
    cs_dataset *r = cs_recal_apply(d, method, &o, info, &err);
    if (!r) fprintf(stderr, "recal: %s\n", err.msg);
    assert_non_null(r);
    return r;
}

/* Every row of r sums to 1 within 1e-14. */
static void assert_rows_sum_to_1(const cs_dataset *r)
{
    for (size_t i = 0; i < r->n; i++) {
        double sum = 0;
        for (size_t c = 0; c < r->k; c++) sum += r->prob[i * r->k + c];
        assert_double_near(sum, 1, 1e-14);
    }
}

static double top1_ece(const cs_dataset *d, int bins)
{
    cs_settings s;
    cs_settings_default(&s);
    s.bins = bins;
    cs_error err;
    cs_error_clear(&err);
    cs_prepared *p = cs_prepare(d, &s, &err);
    assert_non_null(p);
    cs_result r;
    assert_int_equal(cs_evaluate(p, NULL, 0, CS_WANT_BINNED, NULL, &r, &err), CS_OK);
    double e = r.ece;
    cs_result_free(&r);
    cs_prepared_free(p);
    return e;
}

/* ---- temperature scaling ---- */

/* Rows whose labels follow softmax(z) exactly: pattern counts (6,3,1) give z = ln(0.6, 0.3, 0.1)
 * and 10 rows with labels 0×6, 1×3, 2×1. On such data dNLL/dbeta at beta = 1 is
 * Σ (E[z] − z_y) = 10·E[z] − Σ z_y = 0 by construction, so the NLL-optimal temperature of the
 * file z·T0 is exactly T0. */
static cs_dataset *exact_temperature_file(double T0, int logits, int copies)
{
    static const int counts[4][3] = { { 6, 3, 1 }, { 2, 5, 3 }, { 1, 1, 8 }, { 4, 4, 2 } };
    sbuf b = { 0 };
    sb_printf(&b, logits ? "id,label,logit_a,logit_b,logit_c\n" : "id,label,p_a,p_b,p_c\n");
    int id = 0;
    for (int c = 0; c < copies; c++)
        for (int pat = 0; pat < 4; pat++)
            for (int y = 0; y < 3; y++)
                for (int rep = 0; rep < counts[pat][y]; rep++) {
                    double v[3], z = 0;
                    for (int j = 0; j < 3; j++) v[j] = T0 * log(counts[pat][j] / 10.0);
                    if (!logits) {
                        for (int j = 0; j < 3; j++) z += exp(v[j]);
                        for (int j = 0; j < 3; j++) v[j] = exp(v[j]) / z;
                    }
                    sb_printf(&b, "r%d,%d,%.17g,%.17g,%.17g\n", id++, y, v[0], v[1], v[2]);
                }
    cs_dataset *d = load_text(b.s);
    free(b.s);
    return d;
}

static void test_ts_recovers_temperature(void **state)
{
    (void)state;
    for (int logits = 1; logits >= 0; logits--) {
        cs_dataset *d = exact_temperature_file(2.5, logits, 10);
        uint8_t *all = malloc(d->n);
        memset(all, 1, d->n);
        cs_recal_info info;
        cs_dataset *r = recal(d, CS_RECAL_TS, all, 0, &info);
        assert_int_equal(info.from_logits, logits);
        assert_int_equal(info.folds, 0);
        assert_double_near(info.param[0][0], 2.5, 1e-6);
        /* the recalibrated file is the calibrated one: p = (0.6, 0.3, 0.1) on the first rows */
        assert_double_near(r->prob[0], 0.6, 1e-6);
        assert_double_near(r->prob[1], 0.3, 1e-6);
        cs_dataset_free(r);
        /* cross-fitted: the all-rows model (index K) is the same fit */
        r = recal(d, CS_RECAL_TS, NULL, 5, &info);
        assert_int_equal(info.folds, 5);
        assert_double_near(info.param[5][0], 2.5, 1e-6);
        assert_string_equal(r->path, "t.csv+ts");
        cs_dataset_free(r);
        free(all);
        cs_dataset_free(d);
    }
}

/* Labels drawn from softmax(z / temp) for z ~ scale·N(0,1) (temp > 1: an over-confident file). */
static cs_dataset *random_file(size_t n, int k, double temp, int with_id, uint64_t seed, double scale)
{
    lcg_state = seed;
    sbuf b = { 0 };
    sb_printf(&b, with_id ? "id,label" : "label");
    for (int j = 0; j < k; j++) sb_printf(&b, ",logit_%d", j);
    sb_printf(&b, "\n");
    double *z = malloc((size_t)k * sizeof *z);
    for (size_t i = 0; i < n; i++) {
        double mx = -1e300, s = 0;
        for (int j = 0; j < k; j++) { z[j] = scale * nrand(); if (z[j] > mx) mx = z[j]; }
        for (int j = 0; j < k; j++) s += exp((z[j] - mx) / temp);
        double u = urand() * s, acc = 0;
        int y = k - 1;
        for (int j = 0; j < k; j++) { acc += exp((z[j] - mx) / temp); if (u < acc) { y = j; break; } }
        if (with_id) sb_printf(&b, "s%zu,", i);
        sb_printf(&b, "%d", y);
        for (int j = 0; j < k; j++) sb_printf(&b, ",%.17g", z[j]);
        sb_printf(&b, "\n");
    }
    free(z);
    cs_dataset *d = load_text(b.s);
    free(b.s);
    return d;
}

/* The shared-pass Taylor fit of the K fold models must equal fitting each fold on its own:
 * read the temperature each row was scaled with off the output ((s1 − s0) / ln(q1 / q0)), group
 * the rows by it (= by fold), and refit every fold's complement alone through a fit mask. */
static void test_ts_crossfit_matches_single_fits(void **state)
{
    (void)state;
    cs_dataset *d = random_file(3000, 5, 1.7, 1, 7, 3);
    cs_recal_info info;
    cs_dataset *r = recal(d, CS_RECAL_TS, NULL, 5, &info);
    double T[5];
    for (int m = 0; m < 5; m++) T[m] = info.param[m][0];
    /* over-confident logits: T near 1.7 (the truth), the folds close but not equal */
    assert_true(fabs(info.param[5][0] - 1.7) < 0.15);
    uint8_t *mask = malloc(d->n);
    size_t seen[5] = { 0 };
    for (int m = 0; m < 5; m++) {
        for (size_t i = 0; i < d->n; i++) {
            const double *s = d->logit + i * 5, *q = r->prob + i * 5;
            double t = (s[1] - s[0]) / log(q[1] / q[0]);
            int mine = fabs(t - T[m]) < 1e-7 * T[m];
            mask[i] = !mine;
            seen[m] += mine;
        }
        assert_true(seen[m] > 500 && seen[m] < 700);   /* 3000 / 5, balanced folds */
        cs_recal_info one;
        cs_dataset *r1 = recal(d, CS_RECAL_TS, mask, 0, &one);
        assert_double_rel(one.param[0][0], T[m], 0, 1e-8);
        cs_dataset_free(r1);
    }
    assert_int_equal(seen[0] + seen[1] + seen[2] + seen[3] + seen[4], d->n);
    /* deterministic: the same seed gives the same folds and temperatures, 1 thread or 2 */
    cs_recal_options o;
    cs_recal_options_default(&o);
    o.threads = 1;
    cs_error err;
    cs_recal_info info1;
    cs_dataset *r2 = cs_recal_apply(d, CS_RECAL_TS, &o, &info1, &err);
    assert_non_null(r2);
    for (int m = 0; m <= 5; m++) assert_true(info1.param[m][0] == info.param[m][0]);
    assert_memory_equal(r2->prob, r->prob, d->n * 5 * sizeof *r->prob);
    cs_dataset_free(r2);
    free(mask);
    cs_dataset_free(r);
    cs_dataset_free(d);
}


/* ---- vector scaling ---- */

/* w = 1, b = 0 on the log-probabilities gives the file back (the identity the fit starts from). */
static void test_vs_identity_gives_file_back(void **state)
{
    (void)state;
    static const double p[2][4] = { { 0.7, 0.2, 0.05, 0.05 }, { 1e-3, 0.25, 0.5, 0.249 } };
    double w[4] = { 1, 1, 1, 1 }, b[4] = { 0 }, s[4], q[4];
    for (int r = 0; r < 2; r++) {
        for (int c = 0; c < 4; c++) s[c] = log(p[r][c]);
        cs_rc_vs_apply_row(s, w, b, 4, q);
        for (int c = 0; c < 4; c++) assert_double_rel(q[c], p[r][c], 0, 1e-15);
    }
}

/* ms and dir, cross-fitted: every row sums to 1; each model stores W (last row 0), b (last 0)
 * and a λ, μ of the grid. */
static void test_dm_rows_sum_and_params(void **state)
{
    (void)state;
    cs_dataset *d = random_file(400, 3, 1.5, 1, 21, 1);
    static const int methods[] = { CS_RECAL_MS, CS_RECAL_DIR };
    for (int mi = 0; mi < 2; mi++) {
        cs_recal_info info;
        cs_dataset *r = recal(d, methods[mi], NULL, 5, &info);
        assert_int_equal(info.n_vec, 3 * 3 + 3 + 2);
        for (size_t m = 0; m <= 5; m++) {
            const double *x = info.vec + m * info.n_vec;
            for (int j = 0; j < 3; j++) assert_true(x[6 + j] == 0);
            assert_true(x[9 + 2] == 0);
            assert_true(x[12] >= 1e-4 && x[12] <= 1 && x[13] >= 1e-4 && x[13] <= 1);
        }
        assert_rows_sum_to_1(r);
        cs_recal_info_clear(&info);
        cs_dataset_free(r);
    }
    cs_dataset_free(d);
}

/* The cross-fitted fit keeps every row summing to 1, reports K scales and biases per model
 * (b with sum 0), and a budget too small to converge is an error naming the model. */
static void test_vs_rows_sum_and_budget(void **state)
{
    (void)state;
    cs_dataset *d = exact_temperature_file(2.5, 1, 10);
    cs_recal_info info;
    cs_dataset *r = recal(d, CS_RECAL_VS, NULL, 5, &info);
    assert_int_equal(info.n_vec, 6);
    assert_non_null(info.vec);
    for (size_t m = 0; m <= 5; m++) {
        const double *x = info.vec + m * 6;
        assert_double_near(x[3] + x[4] + x[5], 0, 1e-12);
    }
    /* the data follow softmax(z) with z = ln(counts/10), scores 2.5·z: w = 0.4 fits exactly */
    for (int c = 0; c < 3; c++) assert_double_rel(info.vec[5 * 6 + c], 0.4, 0, 1e-6);
    assert_rows_sum_to_1(r);
    assert_false(info.unconverged);
    cs_recal_info_clear(&info);
    assert_null(info.vec);
    cs_dataset_free(r);

    cs_recal_options o;
    cs_recal_options_default(&o);
    o.max_iter = 1;
    cs_error err;
    cs_error_clear(&err);
    assert_null(cs_recal_apply(d, CS_RECAL_VS, &o, &info, &err));
    assert_int_equal(err.code, CS_EINPUT);
    assert_true(info.unconverged);
    assert_null(info.vec);
    assert_non_null(strstr(err.msg, "t.csv: vs did not converge within 1 iterations in cross-fitting fold 1 (largest gradient component"));
    cs_dataset_free(d);
}


/* ---- ensemble temperature scaling ---- */

/* w = (0, 1, 0) gives the file back whatever T; w = (0, 0, 1) the uniform row. */
static void test_ets_identity_gives_file_back(void **state)
{
    (void)state;
    static const double p[4] = { 1e-3, 0.25, 0.5, 0.249 };
    double s[4], q[4], scratch[4], keep[3] = { 0, 1, 0 }, flat[3] = { 0, 0, 1 };
    for (int c = 0; c < 4; c++) s[c] = log(p[c]);
    cs_rc_ets_apply_row(s, 3.7, keep, 4, q, scratch);
    for (int c = 0; c < 4; c++) assert_double_rel(q[c], p[c], 0, 1e-15);
    cs_rc_ets_apply_row(s, 3.7, flat, 4, q, scratch);
    for (int c = 0; c < 4; c++) assert_true(q[c] == 0.25);
}

/* With G = I the problem is the Euclidean projection of h on the simplex, worked by hand:
 * h inside it is its own projection; h = (1, 0.2, 0) -> (0.9, 0.1, 0) (subtract 0.1 from the
 * two kept); h = (2, 0, 0) -> the vertex (1, 0, 0). */
static void test_ets_simplex_qp_by_hand(void **state)
{
    (void)state;
    const double I[3][3] = { { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } };
    const double h1[3] = { 0.6, 0.3, 0.1 }, h2[3] = { 1, 0.2, 0 }, h3[3] = { 2, 0, 0 };
    double w[3];
    cs_rc_simplex_qp3(I, h1, w);
    assert_double_near(w[0], 0.6, 1e-15); assert_double_near(w[1], 0.3, 1e-15); assert_double_near(w[2], 0.1, 1e-15);
    cs_rc_simplex_qp3(I, h2, w);
    assert_double_near(w[0], 0.9, 1e-15); assert_double_near(w[1], 0.1, 1e-15); assert_true(w[2] == 0);
    cs_rc_simplex_qp3(I, h3, w);
    assert_true(w[0] == 1 && w[1] == 0 && w[2] == 0);
}

/* Cross-fitted: rows sum to 1, the weights of every model are on the simplex and T is ts's. */
static void test_ets_rows_sum_and_simplex(void **state)
{
    (void)state;
    cs_dataset *d = exact_temperature_file(2.5, 0, 10);
    cs_recal_info info, ts;
    cs_dataset *r = recal(d, CS_RECAL_ETS, NULL, 5, &info);
    cs_dataset *t = recal(d, CS_RECAL_TS, NULL, 5, &ts);
    assert_int_equal(info.n_vec, 4);
    for (size_t m = 0; m <= 5; m++) {
        const double *x = info.vec + m * 4;
        assert_true(x[0] >= 0 && x[1] >= 0 && x[2] >= 0);
        assert_double_near(x[0] + x[1] + x[2], 1, 1e-14);
        assert_true(x[3] == ts.param[m][0]);
    }
    /* the data follow softmax(ln p / 2.5): T = 2.5 and all the weight on softmax(s/T) */
    assert_double_rel(info.vec[5 * 4 + 3], 2.5, 0, 1e-6);
    assert_double_near(info.vec[5 * 4], 1, 1e-9);
    assert_rows_sum_to_1(r);
    cs_recal_info_clear(&info);
    cs_dataset_free(r);
    cs_dataset_free(t);
    cs_dataset_free(d);
}


/* ---- beta calibration ---- */

/* p in {0.2, 0.5, 0.75} with exactly that fraction of positives: the identity map a = b = 1,
 * c = 0 (logit p' = ln p − ln(1 − p) = logit p) reproduces the frequencies, so it is the
 * maximum-likelihood fit; rows sum to 1; a multiclass file is a usage error. */
static void test_beta_identity_and_usage(void **state)
{
    (void)state;
    static const double ps[3] = { 0.2, 0.5, 0.75 };
    static const int pos[3] = { 4, 10, 15 };
    sbuf b = { 0 };
    sb_printf(&b, "id,label,p_0,p_1\n");
    int id = 0;
    for (int g = 0; g < 3; g++)
        for (int i = 0; i < 20; i++) sb_printf(&b, "r%d,%d,%.17g,%.17g\n", id++, i < pos[g], 1 - ps[g], ps[g]);
    cs_dataset *d = load_text(b.s);
    free(b.s);
    uint8_t *all = malloc(d->n);
    memset(all, 1, d->n);
    cs_recal_info info;
    cs_dataset *r = recal(d, CS_RECAL_BETA, all, 0, &info);
    assert_int_equal(info.n_vec, 3);
    assert_double_near(info.vec[0], 1, 1e-8);
    assert_double_near(info.vec[1], 1, 1e-8);
    assert_double_near(info.vec[2], 0, 1e-8);
    for (size_t i = 0; i < r->n; i++) {
        assert_double_near(r->prob[i * 2] + r->prob[i * 2 + 1], 1, 1e-15);
        assert_double_near(r->prob[i * 2 + 1], d->prob[i * 2 + 1], 1e-8);
    }
    cs_recal_info_clear(&info);
    cs_dataset_free(r);
    free(all);
    cs_dataset_free(d);

    cs_dataset *m = exact_temperature_file(1.0, 0, 1);
    cs_recal_options o;
    cs_recal_options_default(&o);
    cs_error err;
    cs_error_clear(&err);
    assert_null(cs_recal_apply(m, CS_RECAL_BETA, &o, NULL, &err));
    assert_int_equal(err.code, CS_EUSAGE);
    assert_string_equal(err.msg, "t.csv: beta calibration needs a binary file (it has 3 classes); use ts, vs or ets for multiclass files");
    cs_dataset_free(m);
}


/* Which methods a file of k classes takes, and why not, by the documented limits; the names and
 * titles of every method (the picker lists them). */
static void test_offered_and_titles(void **state)
{
    (void)state;
    char why[128];
    for (int m = 0; m < CS_RECAL_COUNT; m++) {
        assert_non_null(cs_recal_name(m));
        assert_non_null(cs_recal_title(m));
        int binary = m == CS_RECAL_PLATT || m == CS_RECAL_BETA, dm = m == CS_RECAL_MS || m == CS_RECAL_DIR;
        assert_int_equal(cs_recal_offered(m, 2, NULL, 0), 1);
        assert_int_equal(cs_recal_offered(m, 10, why, sizeof why), !binary);
        if (binary) assert_string_equal(why, "binary files only: this file has 10 classes");
        assert_int_equal(cs_recal_offered(m, CS_RECAL_DM_MAX_K, NULL, 0), !binary);
        why[0] = 0;
        assert_int_equal(cs_recal_offered(m, CS_RECAL_DM_MAX_K + 1, why, sizeof why), !binary && !dm);
        if (dm) assert_string_equal(why, "up to 20 classes: this file has 21 (vs or ts instead)");
    }
    assert_null(cs_recal_title(-1));
    assert_null(cs_recal_title(CS_RECAL_COUNT));
    assert_string_equal(cs_recal_title(CS_RECAL_MS), "matrix scaling (ODIR)");
}

/* ---- one-vs-rest isotonic ---- */

/* Worked by hand, fitted and applied on all rows: rows A = (0.6, 0.4) labelled 1 (twice), B =
 * (0.7, 0.3) labelled 0 (twice), C = (0.65, 0.35) labelled 0. Class 0's isotonic fit on p_0:
 * 0.6 -> 0, 0.65 -> 1, 0.7 -> 1; class 1's on p_1: 0.3 -> 0, 0.35 -> 0, 0.4 -> 1. So A becomes
 * (0, 1): its prediction changes; B and C (1, 0). Rows sum to 1. */
static void test_irova_by_hand(void **state)
{
    (void)state;
    cs_dataset *d = load_text("id,label,p_0,p_1\na1,1,0.6,0.4\na2,1,0.6,0.4\nb1,0,0.7,0.3\nb2,0,0.7,0.3\n"
                              "c,0,0.65,0.35\n");
    uint8_t all[5] = { 1, 1, 1, 1, 1 };
    cs_recal_info info;
    cs_dataset *r = recal(d, CS_RECAL_IROVA, all, 0, &info);
    static const double want[5][2] = { { 0, 1 }, { 0, 1 }, { 1, 0 }, { 1, 0 }, { 1, 0 } };
    for (size_t i = 0; i < 5; i++) {
        assert_true(r->prob[i * 2] == want[i][0]);
        assert_true(r->prob[i * 2 + 1] == want[i][1]);
    }
    /* fitted and measured on the same rows (a mask of all rows): none is held out, none counted */
    assert_int_equal(info.argmax_changed, 0);
    cs_dataset_free(r);
    /* cross-fitted on 20 copies: every fold sees every pattern, the two A rows of each copy
     * change their prediction */
    sbuf b = { 0 };
    sb_printf(&b, "id,label,p_0,p_1\n");
    for (int c = 0; c < 20; c++)
        sb_printf(&b, "a1_%d,1,0.6,0.4\na2_%d,1,0.6,0.4\nb1_%d,0,0.7,0.3\nb2_%d,0,0.7,0.3\nc_%d,0,0.65,0.35\n", c, c, c, c, c);
    cs_dataset *big = load_text(b.s);
    free(b.s);
    r = recal(big, CS_RECAL_IROVA, NULL, 5, &info);
    assert_int_equal(info.argmax_changed, 40);
    for (size_t i = 0; i < r->n; i++) assert_double_near(r->prob[i * 2] + r->prob[i * 2 + 1], 1, 1e-15);
    cs_dataset_free(r);
    cs_dataset_free(big);
    cs_dataset_free(d);
}

/* ---- Platt ---- */

/* sklearn 1.2:
 *   s = [-2,-1.5,-1,-.5,0,.3,.6,1,1.4,2,2.5,3,-.8,.9,1.7,-2.4]
 *   y = [0,0,1,0,0,1,0,1,1,1,0,1,1,0,1,0]
 *   LogisticRegression(C=1e12, tol=1e-14, solver='newton-cg').fit(s[:,None], y)
 *   -> coef 0.5865745364387269, intercept -0.19524320959482688 */
static void test_platt_matches_sklearn(void **state)
{
    (void)state;
    static const double s[16] = { -2, -1.5, -1, -.5, 0, .3, .6, 1, 1.4, 2, 2.5, 3, -.8, .9, 1.7, -2.4 };
    static const int y[16] = { 0, 0, 1, 0, 0, 1, 0, 1, 1, 1, 0, 1, 1, 0, 1, 0 };
    sbuf b = { 0 };
    sb_printf(&b, "label,logit_0,logit_1\n");
    for (int i = 0; i < 16; i++) sb_printf(&b, "%d,0,%.17g\n", y[i], s[i]);
    cs_dataset *d = load_text(b.s);
    free(b.s);
    uint8_t all[16];
    memset(all, 1, sizeof all);
    cs_recal_info info;
    cs_dataset *r = recal(d, CS_RECAL_PLATT, all, 0, &info);
    assert_double_near(info.param[0][0], 0.5865745364387269, 1e-7);
    assert_double_near(info.param[0][1], -0.19524320959482688, 1e-7);
    /* p1 of the first row = sigmoid(a·(−2) + b) */
    assert_double_near(r->prob[1], 1 / (1 + exp(-(0.5865745364387269 * -2 - 0.19524320959482688))), 1e-7);
    cs_dataset_free(r);
    /* multiclass: refused with a usage error */
    cs_dataset *m = exact_temperature_file(1, 1, 1);
    cs_recal_options o;
    cs_recal_options_default(&o);
    cs_error err;
    cs_error_clear(&err);
    assert_null(cs_recal_apply(m, CS_RECAL_PLATT, &o, NULL, &err));
    assert_int_equal(err.code, CS_EUSAGE);
    cs_dataset_free(m);
    cs_dataset_free(d);
}

/* ---- isotonic ---- */

/* sklearn: IsotonicRegression().fit_transform(arange(10), y, sample_weight=w) with
 * y = [.2,.9,.4,.4,1,.1,.7,.8,.3,1], w = [1,2,1,3,1,1,2,1,1,1]
 * -> [.2, .5625 ×5, .625 ×3, 1] */
static void test_pav_sklearn_monotone_idempotent(void **state)
{
    (void)state;
    static const double y[10] = { .2, .9, .4, .4, 1, .1, .7, .8, .3, 1 };
    static const double w[10] = { 1, 2, 1, 3, 1, 1, 2, 1, 1, 1 };
    static const double want[10] = { .2, .5625, .5625, .5625, .5625, .5625, .625, .625, .625, 1 };
    double out[10], again[10];
    cs_error err;
    assert_int_equal(cs_isotonic_pav(y, w, 10, out, &err), CS_OK);
    for (int i = 0; i < 10; i++) assert_double_near(out[i], want[i], 1e-15);
    /* random data: non-decreasing, and a second pass changes nothing */
    lcg_state = 3;
    enum { N = 5000 };
    static double ry[N], ro[N], r2[N];
    for (int i = 0; i < N; i++) ry[i] = urand() + i * 1e-4;
    assert_int_equal(cs_isotonic_pav(ry, NULL, N, ro, &err), CS_OK);
    for (int i = 1; i < N; i++) assert_true(ro[i] >= ro[i - 1]);
    assert_int_equal(cs_isotonic_pav(ro, NULL, N, r2, &err), CS_OK);
    assert_memory_equal(ro, r2, sizeof ro);
    assert_int_equal(cs_isotonic_pav(out, w, 10, again, &err), CS_OK);
    assert_memory_equal(out, again, sizeof out);
}

/* Through the engine on a K = 20 file whose top class is 0 with confidence x and the other 19
 * share 1 − x equally (so the prediction-keeping floor is 1/20 and never binds here). Fitted
 * on the first 12 rows (mask), applied to 5 more. sklearn:
 *   x = [.5,.6,.6,.7,.8,.8,.9,.95,.55,.75,.3,.35]; c = [0,1,0,1,0,1,1,1,1,0,1,0]
 *   ir = IsotonicRegression(out_of_bounds='clip').fit(x, c)
 *   ir.predict(x) -> [1/3, 4/7, 4/7, 4/7, 4/7, 4/7, 1, 1, 4/7, 4/7, 1/3, 1/3]
 *   ir.predict([.52,.65,.72,.97,.2]) -> [0.42857142857142855, 4/7, 4/7, 1, 1/3] */
static void test_iso_engine_matches_sklearn(void **state)
{
    (void)state;
    static const double x[17] = { .5, .6, .6, .7, .8, .8, .9, .95, .55, .75, .3, .35, .52, .65, .72, .97, .2 };
    static const int c[17] = { 0, 1, 0, 1, 0, 1, 1, 1, 1, 0, 1, 0, 1, 1, 1, 1, 1 };
    static const double want[17] = { 1. / 3, 4. / 7, 4. / 7, 4. / 7, 4. / 7, 4. / 7, 1, 1, 4. / 7, 4. / 7,
                                     1. / 3, 1. / 3, 0.42857142857142855, 4. / 7, 4. / 7, 1, 1. / 3 };
    sbuf b = { 0 };
    sb_printf(&b, "label");
    for (int j = 0; j < 20; j++) sb_printf(&b, ",p_%d", j);
    sb_printf(&b, "\n");
    for (int i = 0; i < 17; i++) {
        sb_printf(&b, "%d,%.17g", c[i] ? 0 : 1, x[i]);
        for (int j = 1; j < 20; j++) sb_printf(&b, ",%.17g", (1 - x[i]) / 19);
        sb_printf(&b, "\n");
    }
    cs_dataset *d = load_text(b.s);
    free(b.s);
    uint8_t mask[17];
    for (int i = 0; i < 17; i++) mask[i] = i < 12;
    cs_dataset *r = recal(d, CS_RECAL_ISO, mask, 0, NULL);
    for (int i = 0; i < 17; i++) {
        assert_double_near(r->conf[i], want[i], 1e-12);
        assert_int_equal(r->pred[i], 0);
        /* the others keep their (equal) proportions and the row sums to 1 */
        double sum = 0;
        for (int j = 0; j < 20; j++) sum += r->prob[i * 20 + j];
        assert_double_near(sum, 1, 1e-12);
        assert_double_near(r->prob[i * 20 + 5], (1 - want[i]) / 19, 1e-12);
    }
    /* idempotent: isotonic recalibration of the in-sample output changes nothing */
    uint8_t all[17];
    memset(all, 1, sizeof all);
    cs_dataset *in = recal(d, CS_RECAL_ISO, all, 0, NULL);
    cs_dataset *twice = recal(in, CS_RECAL_ISO, all, 0, NULL);
    for (int i = 0; i < 17; i++) assert_double_near(twice->conf[i], in->conf[i], 1e-15);
    cs_dataset_free(twice);
    cs_dataset_free(in);
    cs_dataset_free(r);
    cs_dataset_free(d);
}

/* ---- histogram binning ---- */

static void test_hist_zero_in_sample_honest_crossfit(void **state)
{
    (void)state;
    /* K = 10, top class 0 with confidence x ~ U(0.15, 1) and the other nine sharing 1 − x
     * (the prediction-keeping floor is then 1/10); correct with probability 0.5 + 0.5·x, an
     * under-confident file whose bin accuracies (>= 0.5) stay above that floor */
    lcg_state = 11;
    sbuf b = { 0 };
    sb_printf(&b, "label,p_0,p_1,p_2,p_3,p_4,p_5,p_6,p_7,p_8,p_9\n");
    for (int i = 0; i < 2000; i++) {
        double x = 0.15 + 0.85 * urand();
        int y = urand() < 0.5 + 0.5 * x ? 0 : 1 + (int)(urand() * 9);
        sb_printf(&b, "%d,%.17g", y, x);
        for (int j = 1; j < 10; j++) sb_printf(&b, ",%.17g", (1 - x) / 9);
        sb_printf(&b, "\n");
    }
    cs_dataset *d = load_text(b.s);
    free(b.s);
    uint8_t *all = malloc(d->n);
    memset(all, 1, d->n);
    cs_dataset *in = recal(d, CS_RECAL_HIST, all, 0, NULL);
    /* every fitted bin's rows get its accuracy: the in-sample ECE is 0 (binned at the same M,
     * and at any coarser M too, since merged bins stay balanced) */
    assert_double_near(top1_ece(in, 15), 0, 1e-12);
    assert_double_near(top1_ece(in, 5), 0, 1e-12);
    for (size_t i = 0; i < d->n; i++) assert_int_equal(in->pred[i], d->pred[i]);
    cs_dataset *cf = recal(d, CS_RECAL_HIST, NULL, 5, NULL);
    double e_cf = top1_ece(cf, 15), e_raw = top1_ece(d, 15);
    /* honest: cross-fitted ECE is clearly above 0, and far below the raw file's */
    assert_true(e_cf > 0.005);
    assert_true(e_cf < e_raw / 2);
    cs_dataset_free(cf);
    cs_dataset_free(in);
    free(all);
    cs_dataset_free(d);
}

/* ---- paired comparison of a file with itself ---- */

static void test_self_compare_is_zero(void **state)
{
    (void)state;
    cs_dataset *d = load_text(
        "id,label,p_0,p_1,p_2\n"
        "a,0,0.7,0.2,0.1\n"
        "b,1,0.1,0.5,0.4\n"
        "c,2,0.3,0.3,0.4\n"
        "d,0,0.2,0.6,0.2\n");
    cs_settings s;
    cs_settings_default(&s);
    cs_compare cmp;
    cs_run run = { .threads = 2, .cancel = NULL, .progress_ppm = NULL };
    cs_error err;
    assert_int_equal(cs_compare_run(d, d, &s, CS_METRICS_DEFAULT, 100, 1, &run, &cmp, &err), CS_OK);
    assert_true(cmp.n_entries > 0);
    for (size_t i = 0; i < cmp.n_entries; i++) {
        assert_true(cmp.entries[i].diff == 0);
        assert_true(cmp.entries[i].lo == 0 && cmp.entries[i].hi == 0);
        assert_true(cmp.entries[i].p_better == 0);
    }
    cs_dataset_free(d);
}

/* ---- mass profile ---- */

static void test_mass_profile_by_hand(void **state)
{
    (void)state;
    cs_dataset *d = load_text("label,p_0,p_1,p_2\n0,0.7,0.2,0.1\n1,0.1,0.5,0.4\n");
    double top[3], cls[3];
    size_t n;
    cs_error err;
    assert_int_equal(cs_mass_profile(d, "", 3, top, cls, &n, NULL, &err), CS_OK);
    assert_int_equal(n, 2);
    /* sorted rows (.7,.2,.1) and (.5,.4,.1): means .6, .3, .1; classes (.4, .35, .25) */
    assert_double_near(top[0], 0.6, 1e-15);
    assert_double_near(top[1], 0.3, 1e-15);
    assert_double_near(top[2], 0.1, 1e-15);
    assert_double_near(cls[0], 0.4, 1e-15);
    assert_double_near(cls[1], 0.35, 1e-15);
    assert_double_near(cls[2], 0.25, 1e-15);
    assert_int_equal(cs_mass_profile(d, "y == 1", 2, top, cls, &n, NULL, &err), CS_OK);
    assert_int_equal(n, 1);
    assert_double_near(top[0], 0.5, 1e-15);
    assert_double_near(top[1], 0.4, 1e-15);
    assert_double_near(cls[2], 0.4, 1e-15);
    assert_int_equal(cs_mass_profile(d, "y ==", 2, top, cls, &n, NULL, &err), CS_EUSAGE);
    cs_dataset_free(d);
}

/* ---- held-out split ---- */

static void test_split_mask_and_subset(void **state)
{
    (void)state;
    cs_dataset *d = random_file(1000, 3, 1, 1, 5, 3);
    uint8_t *m = cs_recal_split_mask(d, 0.3, 9);
    size_t fit = 0;
    for (size_t i = 0; i < d->n; i++) fit += m[i];
    assert_true(fit > 240 && fit < 360);
    /* the same ids split the same way in a reordered copy: the mask depends on the id only */
    uint8_t *m2 = cs_recal_split_mask(d, 0.3, 9);
    assert_memory_equal(m, m2, d->n);
    cs_error err;
    cs_dataset *ev = cs_dataset_subset(d, m, 0, "@eval", NULL, &err);
    assert_non_null(ev);
    assert_int_equal(ev->n, d->n - fit);
    assert_string_equal(ev->path, "t.csv@eval");
    assert_non_null(ev->logit);
    size_t o = 0;
    for (size_t i = 0; i < d->n; i++) {
        if (m[i]) continue;
        assert_string_equal(ev->id_names[ev->id[o]], d->id_names[d->id[i]]);
        assert_int_equal(ev->label[o], d->label[i]);
        o++;
    }
    /* fitting on the mask's rows: the fit row count is reported */
    cs_recal_info info;
    cs_dataset *r = recal(d, CS_RECAL_TS, m, 0, &info);
    assert_int_equal(info.fit_rows, fit);
    cs_dataset_free(r);
    cs_dataset_free(ev);
    free(m);
    free(m2);
    cs_dataset_free(d);
}

/* ---- a named split column (--recal-split-column) ---- */

static cs_dataset *load_split(const char *text)
{
    cs_load_options lo;
    cs_load_options_default(&lo);
    lo.split_column = "split";
    cs_error err;
    cs_error_clear(&err);
    cs_dataset *d = cs_load_buffer("t.csv", text, strlen(text), &lo, NULL, &err);
    if (!d) fprintf(stderr, "load: %s\n", err.msg);
    assert_non_null(d);
    return d;
}

/* Seven fitting rows (fit / train, any case) and four others. Histogram binning with M = 4 bins
 * ((0,.25] (.25,.5] (.5,.75] (.75,1]) fitted on the fitting rows only:
 *   bin 2 (conf .6 .7 .65): correct, wrong, correct          -> 2/3
 *   bin 3 (conf .9 .8 .95 .85): correct, correct, wrong, correct -> 3/4
 * The evaluation rows are all wrong; had they been fitted on, bin 2 would hold 2/5 and bin 3
 * 3/6. Binary file, so the other class gets 1 - c' (the floor p2/(1-c+p2) is at most 1/2). */
static const char split_csv[] =
    "label,p_a,p_b,split\n"
    "0,0.6,0.4,fit\n"
    "1,0.7,0.3,fit\n"
    "0,0.65,0.35,Train\n"
    "0,0.9,0.1,fit\n"
    "1,0.2,0.8,fit\n"
    "0,0.05,0.95,train\n"
    "1,0.15,0.85,fit\n"
    "1,0.55,0.45,eval\n"        /* conf .55 -> bin 2 -> 2/3, pred a */
    "1,0.8,0.2,eval\n"          /* conf .8  -> bin 3 -> 3/4, pred a */
    "0,0.3,0.7,test\n"          /* conf .7  -> bin 2 -> 2/3, pred b */
    "1,0.99,0.01,eval\n";       /* conf .99 -> bin 3 -> 3/4, pred a */

static void test_split_column_mask(void **state)
{
    (void)state;
    cs_dataset *d = load_split(split_csv);
    cs_error err;
    cs_error_clear(&err);
    uint8_t *m = cs_recal_column_mask(d, NULL, &err);
    assert_non_null(m);
    const uint8_t want[11] = {1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0};
    assert_memory_equal(m, want, sizeof want);
    uint8_t *m2 = cs_recal_column_mask(d, "", &err);          /* "" = the defaults too */
    assert_memory_equal(m2, want, sizeof want);
    free(m2);
    m2 = cs_recal_column_mask(d, "EVAL", &err);                /* a named value, any case */
    assert_non_null(m2);
    const uint8_t want_eval[11] = {0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 1};
    assert_memory_equal(m2, want_eval, sizeof want_eval);
    free(m2);

    /* the engine option fits on the same rows as the mask, and only on them */
    cs_recal_options o;
    cs_recal_options_default(&o);
    o.bins = 4;
    o.split_fit = "";
    o.folds = 0;                   /* not used without cross-fitting */
    cs_recal_info info;
    cs_dataset *r = cs_recal_apply(d, CS_RECAL_HIST, &o, &info, &err);
    if (!r) fail_msg("%s", err.msg);
    assert_int_equal(info.fit_rows, 7);
    assert_int_equal(info.folds, 0);
    const double want_p[4][2] = {{2.0 / 3, 1.0 / 3}, {0.75, 0.25}, {1.0 / 3, 2.0 / 3}, {0.75, 0.25}};
    for (size_t i = 0; i < 4; i++)
        for (size_t j = 0; j < 2; j++) assert_double_near(r->prob[(7 + i) * 2 + j], want_p[i][j], 1e-15);
    assert_double_near(r->prob[0], 2.0 / 3, 1e-15);       /* a fitting row: its own bin too */
    assert_double_near(r->prob[2 * 3], 0.75, 1e-15);
    o.split_fit = NULL;
    o.fit_mask = m;
    o.folds = 5;
    cs_dataset *r2 = cs_recal_apply(d, CS_RECAL_HIST, &o, NULL, &err);
    assert_non_null(r2);
    assert_memory_equal(r->prob, r2->prob, d->n * d->k * sizeof(double));
    cs_dataset_free(r2);

    /* the evaluation rows of the recalibration, split column carried along */
    cs_dataset *ev = cs_dataset_subset(r, m, 0, "", NULL, &err);
    assert_non_null(ev);
    assert_int_equal(ev->n, 4);
    assert_non_null(ev->split);
    assert_string_equal(ev->split_names[ev->split[2]], "test");
    assert_string_equal(ev->split_names[ev->split[3]], "eval");
    assert_double_near(ev->conf[0], 2.0 / 3, 1e-15);
    assert_double_near(ev->conf[1], 0.75, 1e-15);
    assert_int_equal(ev->correct[0] + ev->correct[1] + ev->correct[2] + ev->correct[3], 0);
    cs_dataset_free(ev);
    cs_dataset_free(r);
    free(m);

    /* refusals: no fitting row, no evaluation row, no split column */
    assert_null(cs_recal_column_mask(d, "holdout", &err));
    assert_int_equal(err.code, CS_EINPUT);
    assert_string_equal(err.msg, "t.csv: the split column leaves no row to fit on (fitting rows: value "
                                 "'holdout'; its values: 'fit', 'Train', 'train', 'eval', 'test')");
    o.fit_mask = NULL;
    o.split_fit = "holdout";
    assert_null(cs_recal_apply(d, CS_RECAL_TS, &o, NULL, &err));
    assert_int_equal(err.code, CS_EINPUT);
    cs_dataset_free(d);
    d = load_split("label,p_a,p_b,split\n0,0.6,0.4,fit\n1,0.7,0.3,train\n");
    assert_null(cs_recal_column_mask(d, NULL, &err));
    assert_int_equal(err.code, CS_EINPUT);
    assert_non_null(strstr(err.msg, "leaves no row to evaluate on (fitting rows: value 'fit' or 'train'"));
    cs_dataset_free(d);
    d = load_text("label,p_a,p_b,split\n0,0.6,0.4,fit\n1,0.7,0.3,eval\n");
    assert_null(d->split);
    assert_null(cs_recal_column_mask(d, NULL, &err));
    assert_int_equal(err.code, CS_EUSAGE);
    cs_dataset_free(d);

    /* many values: the list in the message is cut, not overrun */
    sbuf b = {0};
    sb_printf(&b, "label,p_a,p_b,split\n");
    for (int i = 0; i < 60; i++) sb_printf(&b, "0,0.6,0.4,value_number_%02d\n", i);
    d = load_split(b.s);
    assert_null(cs_recal_column_mask(d, NULL, &err));
    assert_non_null(strstr(err.msg, "'value_number_00', "));
    assert_non_null(strstr(err.msg, ", ...)"));
    assert_null(strstr(err.msg, "value_number_59"));
    cs_dataset_free(d);
    free(b.s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ts_recovers_temperature),
        cmocka_unit_test(test_ts_crossfit_matches_single_fits),
        cmocka_unit_test(test_platt_matches_sklearn),
        cmocka_unit_test(test_pav_sklearn_monotone_idempotent),
        cmocka_unit_test(test_iso_engine_matches_sklearn),
        cmocka_unit_test(test_hist_zero_in_sample_honest_crossfit),
        cmocka_unit_test(test_self_compare_is_zero),
        cmocka_unit_test(test_mass_profile_by_hand),
        cmocka_unit_test(test_split_mask_and_subset),
        cmocka_unit_test(test_split_column_mask),
        cmocka_unit_test(test_vs_identity_gives_file_back),
        cmocka_unit_test(test_vs_rows_sum_and_budget),
        cmocka_unit_test(test_ets_identity_gives_file_back),
        cmocka_unit_test(test_ets_simplex_qp_by_hand),
        cmocka_unit_test(test_ets_rows_sum_and_simplex),
        cmocka_unit_test(test_beta_identity_and_usage),
        cmocka_unit_test(test_irova_by_hand),
        cmocka_unit_test(test_offered_and_titles),
        cmocka_unit_test(test_dm_rows_sum_and_params),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
