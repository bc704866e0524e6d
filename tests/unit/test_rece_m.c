/* RECE-M: kde against a RECE-G written here, EM against hand work and a numpy EM; RECE-M is
 * one of cs_evaluate's metrics, so bootstrap intervals and both variance curves carry it
 * (checked replicate by replicate against a RECE-M written here). */
#include "support/cs_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calscope/resample.h"
#include "calscope/metrics.h"
#include "engine/metrics/rece_m.h"
#include "engine/metrics/mx.h"

#define K 5

typedef struct obs_row { const char *id; int tta; int label; double conf; } obs_row;

/* A long file with K = 5 classes: each row puts `conf` on class 0 and (1-conf)/4 on the
 * others, so its top-1 confidence is `conf` (>= 0.2; at 0.2 all tie and class 0 wins) and the
 * row is correct iff label == 0. */
static cs_dataset *make_long(const obs_row *rows, size_t n, int with_tta)
{
    cs_dataset *d = cs_test_dataset_new(n, K);
    d->id = calloc(n, sizeof *d->id);
    d->tta = with_tta ? calloc(n, sizeof *d->tta) : NULL;
    d->id_names = calloc(n, sizeof *d->id_names);
    for (size_t r = 0; r < n; r++) {
        d->prob[r * K] = rows[r].conf;
        for (int j = 1; j < K; j++) d->prob[r * K + j] = (1 - rows[r].conf) / 4;
        d->label[r] = rows[r].label;
        if (with_tta) d->tta[r] = rows[r].tta;
        size_t i = 0;
        while (i < d->n_ids && strcmp(d->id_names[i], rows[r].id) != 0) i++;
        if (i == d->n_ids) d->id_names[d->n_ids++] = strdup(rows[r].id);
        d->id[r] = (int32_t)i;
    }
    cs_test_prepare(d);
    return d;
}

/* Four samples, ids interleaved in the file:
 *   a: clean 0.9 correct;  other observations 0.85 0.8 0.3 0.95 0.88 0.2 0.91
 *   b: clean 0.7 wrong;    0.75 0.6 0.72
 *   c: clean 0.55 correct; 0.95 0.62
 *   d: clean 0.65 correct; 0.65 0.65 (identical observations) */
static const obs_row FOUR[] = {
    { "a", 0, 0, 0.9 }, { "b", 0, 1, 0.7 }, { "a", 1, 0, 0.85 }, { "c", 0, 0, 0.55 },
    { "a", 2, 0, 0.8 }, { "b", 1, 1, 0.75 }, { "a", 3, 0, 0.3 }, { "d", 0, 0, 0.65 },
    { "a", 4, 0, 0.95 }, { "c", 1, 0, 0.95 }, { "a", 5, 0, 0.88 }, { "b", 2, 1, 0.6 },
    { "a", 6, 0, 0.2 }, { "d", 1, 0, 0.65 }, { "c", 2, 0, 0.62 }, { "a", 7, 0, 0.91 },
    { "b", 3, 1, 0.72 }, { "d", 2, 0, 0.65 },
};
#define NFOUR (sizeof FOUR / sizeof FOUR[0])

/* Reference values from this numpy script (run once with /usr/bin/python3):
 *   import numpy as np, math
 *   def gmm3(x):
 *       x=np.asarray(x,float); t=len(x)
 *       mu=np.quantile(x,[1/6,1/2,5/6]); w=np.full(3,1/3); v=np.full(3,max(np.var(x),1e-6))
 *       def estep(w,mu,v):
 *           lp=np.log(w)[None,:]-0.5*(np.log(2*np.pi*v)[None,:]+(x[:,None]-mu[None,:])**2/v[None,:])
 *           lse=np.logaddexp.reduce(lp,axis=1)
 *           return lse.sum(), np.exp(lp-lse[:,None])
 *       ll_prev,r=estep(w,mu,v); it=0
 *       while it<200:
 *           nk=r.sum(0); w=nk/t; mu=(r*x[:,None]).sum(0)/nk
 *           v=np.maximum((r*(x[:,None]-mu[None,:])**2).sum(0)/nk,1e-6)
 *           ll,r=estep(w,mu,v); it+=1
 *           if abs(ll-ll_prev)<1e-10: break
 *           ll_prev=ll
 *       return w,mu,v,it
 *   def Phi(z): return 0.5*(1+math.erf(z/math.sqrt(2)))
 *   def mass(a,b,m,s): return Phi((b-m)/s)-Phi((a-m)/s)
 *   def weights_kde(obs,M,sig):
 *       w=np.array([np.mean([mass(i/M,(i+1)/M,o,sig) for o in obs]) for i in range(M)]); return w/w.sum()
 *   def weights_gmm(obs,M):
 *       g,mu,v,_=gmm3(obs)
 *       w=np.array([sum(g[k]*mass(i/M,(i+1)/M,mu[k],math.sqrt(v[k])) for k in range(3)) for i in range(M)])
 *       return w/w.sum()
 *   def rece(samples,M,wf):
 *       C=np.zeros(M);A=np.zeros(M)
 *       for c,acc,obs in samples:
 *           w=wf(obs); C+=w*c; A+=w*acc
 *       return np.abs(A-C).sum()/len(samples)
 *   S=[(0.9,1,[0.9,0.85,0.8,0.3,0.95,0.88,0.2,0.91]), (0.7,0,[0.7,0.75,0.6,0.72]),
 *      (0.55,1,[0.55,0.95,0.62]), (0.65,1,[0.65,0.65,0.65])]
 *   print(gmm3(S[0][2]), gmm3([0.2,0.2,0.8,0.8]))
 *   print(rece(S,5,lambda o: weights_kde(o,5,0.1)), rece(S,5,lambda o: weights_gmm(o,5)))
 *   print(rece(S,15,lambda o: weights_kde(o,15,0.1)), rece(S,15,lambda o: weights_gmm(o,15)))
 *   print(rece([S[1],S[1],S[3]],5,lambda o: weights_kde(o,5,0.1)))
 */
static void settings(cs_settings *s, int bins, cs_mixture mix)
{
    cs_settings_default(s);
    s->bins = bins;
    s->sigma = 0.1;
    s->mixture = mix;
}

/* RECE-M through the one path every caller uses: cs_prepare, then cs_evaluate on idx[0..n)
 * (NULL = all samples). Returns the status; *v = cs_result.rece_m, err filled on failure. */
static cs_status evaluate_rece_m(const cs_dataset *d, const cs_settings *s, const uint32_t *idx,
                                 size_t n, unsigned want, double *v, cs_error *err)
{
    *v = -1;
    cs_prepared *p = cs_prepare(d, s, err);
    if (!p) return err->code;
    cs_result r;
    cs_status st = cs_evaluate(p, idx, n, want, NULL, &r, err);
    if (st == CS_OK) *v = r.rece_m;
    cs_result_free(&r);
    cs_prepared_free(p);
    return st;
}

static double rece_m_of(const cs_dataset *d, int bins, cs_mixture mix, const char *select)
{
    cs_settings s;
    settings(&s, bins, mix);
    snprintf(s.select, sizeof s.select, "%s", select);
    cs_error err;
    double v;
    if (evaluate_rece_m(d, &s, NULL, 0, CS_WANT_RECE_M, &v, &err) != CS_OK)
        fail_msg("cs_evaluate: %s", err.msg);
    return v;
}

static void test_against_numpy(void **state)
{
    (void)state;
    cs_dataset *d = make_long(FOUR, NFOUR, 1);
    assert_double_near(rece_m_of(d, 5, CS_MIX_KDE, ""), 0.07051809683218602, 1e-12);
    assert_double_near(rece_m_of(d, 15, CS_MIX_KDE, ""), 0.09374858951993226, 1e-12);
    assert_double_near(rece_m_of(d, 5, CS_MIX_GMM3, ""), 0.10308000037864487, 1e-9);
    assert_double_near(rece_m_of(d, 15, CS_MIX_GMM3, ""), 0.3093287096189976, 1e-9);
    cs_dataset_free(d);
}

/* Selection on the clean rows, and idx subsets with repeats. */
static void test_selection_and_idx(void **state)
{
    (void)state;
    cs_dataset *d = make_long(FOUR, NFOUR, 1);
    /* y == 0 keeps a, c, d, all correct: A_i - C_i = Σ_j w_ji (1 - c_j) >= 0 in every bin and
     * the weights sum to 1, so RECE-M = mean(1 - c_j) = (0.1 + 0.45 + 0.35) / 3 = 0.3 */
    assert_double_near(rece_m_of(d, 5, CS_MIX_KDE, "y == 0"), 0.3, 1e-12);
    assert_double_near(rece_m_of(d, 15, CS_MIX_GMM3, "y == 0"), 0.3, 1e-12);
    /* one sample: RECE-M = |acc - c| = |0 - 0.7| */
    assert_double_near(rece_m_of(d, 15, CS_MIX_GMM3, "y == 1"), 0.7, 1e-12);

    cs_settings s;
    settings(&s, 5, CS_MIX_KDE);
    cs_error err;
    cs_prepared *p = cs_prepare(d, &s, &err);
    assert_non_null(p);
    assert_true(cs_prepared_has_tta(p));
    /* samples (the ids) in dataset order of their clean rows: a (row 0), b (1), c (3), d (7) */
    assert_int_equal(cs_prepared_count(p), 4);
    const uint32_t *rows = cs_prepared_rows(p);
    assert_int_equal(rows[0], 0);
    assert_int_equal(rows[1], 1);
    assert_int_equal(rows[2], 3);
    assert_int_equal(rows[3], 7);
    cs_prepared_free(p);
    /* numpy: rece([S[1],S[1],S[3]], 5, kde) -- a bootstrap-like multiset, in any order */
    double v;
    const uint32_t idx[3] = { 1, 1, 3 }, idx2[3] = { 3, 1, 1 };
    assert_int_equal(evaluate_rece_m(d, &s, idx, 3, CS_WANT_RECE_M, &v, &err), CS_OK);
    assert_double_near(v, 0.3499999999999999, 1e-12);
    double v2;
    assert_int_equal(evaluate_rece_m(d, &s, idx2, 3, CS_WANT_RECE_M, &v2, &err), CS_OK);
    assert_memory_equal(&v, &v2, sizeof v);   /* bit-identical whatever the order of idx */
    assert_int_equal(evaluate_rece_m(d, &s, idx, 0, CS_WANT_RECE_M, &v, &err), CS_EEMPTY);

    strcpy(s.select, "conf > 0.95");
    assert_int_equal(evaluate_rece_m(d, &s, NULL, 0, CS_WANT_RECE_M, &v, &err), CS_EEMPTY);
    strcpy(s.select, "y == 9");
    assert_int_equal(evaluate_rece_m(d, &s, NULL, 0, CS_WANT_RECE_M, &v, &err), CS_EUSAGE);
    assert_non_null(strstr(err.msg, "class 9 out of range"));
    cs_dataset_free(d);
}

/* RECE-G as Gupta, Basu & Arora 2023 ("How Reliable are the Metrics Used for Assessing
 * Reliability in Medical Imaging?") eq. 6 writes it, independently of the engine. */
static double rece_g(const double *c, const int *acc, size_t n, int m, double sigma)
{
    double A[64] = { 0 }, C[64] = { 0 };
    for (size_t j = 0; j < n; j++) {
        double w[64], tot = 0;
        for (int i = 0; i < m; i++) {
            double a = (double)i / m, b = (double)(i + 1) / m;
            w[i] = 0.5 * (erf((b - c[j]) / (sigma * sqrt(2.0))) - erf((a - c[j]) / (sigma * sqrt(2.0))));
            tot += w[i];
        }
        for (int i = 0; i < m; i++) { C[i] += w[i] / tot * c[j]; A[i] += w[i] / tot * acc[j]; }
    }
    double s = 0;
    for (int i = 0; i < m; i++) s += fabs(A[i] - C[i]);
    return s / (double)n;
}

/* When every observation equals the clean one, the kde mixture is one Gaussian: RECE-G. */
static void test_kde_identical_is_rece_g(void **state)
{
    (void)state;
    static const obs_row rows[] = {
        { "x", 0, 0, 0.9 }, { "x", 1, 0, 0.9 }, { "x", 2, 0, 0.9 },
        { "y", 0, 1, 0.7 }, { "y", 1, 1, 0.7 }, { "y", 2, 1, 0.7 },
        { "z", 0, 0, 0.55 }, { "z", 1, 0, 0.55 }, { "z", 2, 0, 0.55 },
    };
    cs_dataset *d = make_long(rows, 9, 1);
    const double c[3] = { 0.9, 0.7, 0.55 };
    const int acc[3] = { 1, 0, 1 };
    /* numpy: rece(G,5,...) with G = the three samples, observations repeated = 0.18340720610425132 */
    assert_double_near(rece_g(c, acc, 3, 5, 0.1), 0.18340720610425132, 1e-12);
    assert_double_near(rece_m_of(d, 5, CS_MIX_KDE, ""), 0.18340720610425132, 1e-12);
    for (int m = 1; m <= 40; m += 13)
        assert_double_near(rece_m_of(d, m, CS_MIX_KDE, ""), rece_g(c, acc, 3, m, 0.1), 1e-12);
    cs_settings s;
    settings(&s, 15, CS_MIX_KDE);
    s.sigma = 0.03;
    double v;
    cs_error err;
    assert_int_equal(evaluate_rece_m(d, &s, NULL, 0, CS_WANT_RECE_M, &v, &err), CS_OK);
    assert_double_near(v, rece_g(c, acc, 3, 15, 0.03), 1e-12);
    /* and RECE-G itself, from the same evaluation */
    cs_prepared *p = cs_prepare(d, &s, &err);
    cs_result r;
    assert_int_equal(cs_evaluate(p, NULL, 0, CS_WANT_RECE_G | CS_WANT_RECE_M, NULL, &r, &err), CS_OK);
    assert_double_near(r.rece_m, r.rece_g, 1e-12);
    cs_result_free(&r);
    cs_prepared_free(p);
    cs_dataset_free(d);
}

static void test_gmm_fit(void **state)
{
    (void)state;
    double w[3], mu[3], v[3];
    /* T = 1 by hand: quantiles all x, variance 0 -> 1e-6; responsibilities 1/3 each, the
     * M-step returns the same parameters, the log-likelihood does not change: 1 iteration. */
    const double one = 0.42;
    assert_int_equal(cs_gmm3_fit(&one, 1, w, mu, v), 1);
    for (int k = 0; k < 3; k++) {
        assert_double_near(w[k], 1.0 / 3.0, 1e-15);
        assert_double_near(mu[k], 0.42, 1e-15);
        assert_double_near(v[k], 1e-6, 1e-18);
    }
    const double same[4] = { 0.7, 0.7, 0.7, 0.7 };
    assert_int_equal(cs_gmm3_fit(same, 4, w, mu, v), 1);
    for (int k = 0; k < 3; k++) { assert_double_near(mu[k], 0.7, 1e-15); assert_double_near(v[k], 1e-6, 1e-18); }

    /* numpy gmm3([0.2,0.2,0.8,0.8]): the outer components take the pairs and collapse to the
     * floor, the middle one dies: w [0.5, 7.5e-16, 0.5], mu [0.2, 0.5, 0.8], v [1e-6, 0.09, 1e-6],
     * 9 iterations. (Init by hand: quantile positions 0.5, 1.5, 2.5 -> 0.2, 0.5, 0.8; var 0.09.) */
    const double sym[4] = { 0.2, 0.2, 0.8, 0.8 };
    assert_int_equal(cs_gmm3_fit(sym, 4, w, mu, v), 9);
    assert_double_near(w[0], 0.5, 1e-12);
    assert_double_near(w[1], 0.0, 1e-12);
    assert_double_near(w[2], 0.5, 1e-12);
    assert_double_near(mu[0], 0.2, 1e-12);
    assert_double_near(mu[1], 0.5, 1e-12);
    assert_double_near(mu[2], 0.8, 1e-12);
    assert_double_near(v[0], 1e-6, 1e-15);
    assert_double_near(v[1], 0.09, 1e-12);
    assert_double_near(v[2], 1e-6, 1e-15);

    /* numpy gmm3 of sample a's 8 observations */
    const double a[8] = { 0.9, 0.85, 0.8, 0.3, 0.95, 0.88, 0.2, 0.91 };
    assert_int_equal(cs_gmm3_fit(a, 8, w, mu, v), 76);
    assert_double_near(w[0], 0.25, 1e-9);
    assert_double_near(w[1], 0.12476023076655353, 1e-9);
    assert_double_near(w[2], 0.6252397692334465, 1e-9);
    assert_double_near(mu[0], 0.25, 1e-9);
    assert_double_near(mu[1], 0.8, 1e-9);
    assert_double_near(mu[2], 0.8979624186015766, 1e-9);
    assert_double_near(v[0], 0.0025, 1e-12);
    assert_double_near(v[1], 1e-6, 1e-12);
    assert_double_near(v[2], 0.0010992612665955, 1e-12);

    /* more than the on-stack scratch (64 values) */
    double big[100];
    for (int i = 0; i < 100; i++) big[i] = i < 50 ? 0.3 : 0.9;
    assert_true(cs_gmm3_fit(big, 100, w, mu, v) >= 1);
    assert_double_near(w[0] + w[1] + w[2], 1.0, 1e-12);
}

/* A single observation per id (T = 1): gmm3 puts the sample on N(c, 0.001), which for these
 * confidences lies inside one of 5 bins, so RECE-M is the hard ECE:
 * bins [0.8,1]: 0.9 (acc 1) -> |1 - 0.9| = 0.1; [0.6,0.8]: 0.7 (acc 0) -> 0.7;
 * [0.4,0.6]: 0.55 (acc 1) -> 0.45.  (0.1 + 0.7 + 0.45) / 3 = 0.41666... */
static void test_single_observation(void **state)
{
    (void)state;
    static const obs_row rows[] = { { "x", 0, 0, 0.9 }, { "y", 0, 1, 0.7 }, { "z", 0, 0, 0.55 } };
    cs_dataset *d = make_long(rows, 3, 1);
    assert_double_near(rece_m_of(d, 5, CS_MIX_GMM3, ""), 1.25 / 3, 1e-12);
    cs_dataset_free(d);
}

/* The error paths a user can reach, with their messages verbatim. A long file whose ids do not
 * have exactly one clean row fails RECE-M only: metrics that do not ask for it still work. */
static void test_errors(void **state)
{
    (void)state;
    cs_settings s;
    settings(&s, 15, CS_MIX_KDE);
    cs_error err;
    double v;
    cs_dataset *d = make_long(FOUR, NFOUR, 0);   /* id but no tta: not a long file, no RECE-M */
    assert_int_equal(evaluate_rece_m(d, &s, NULL, 0, CS_WANT_ALL, &v, &err), CS_OK);
    assert_true(isnan(v));
    cs_dataset_free(d);

    static const obs_row no_clean[] = { { "a", 0, 0, 0.9 }, { "b7", 1, 0, 0.8 }, { "b7", 2, 0, 0.6 } };
    d = make_long(no_clean, 3, 1);
    assert_int_equal(evaluate_rece_m(d, &s, NULL, 0, CS_WANT_ALL, &v, &err), CS_EINPUT);
    assert_string_equal(err.msg, "test.csv: id 'b7' has no tta 0 row (the clean prediction RECE-M needs)");
    assert_int_equal(evaluate_rece_m(d, &s, NULL, 0, CS_WANT_BINNED, &v, &err), CS_OK);
    cs_dataset_free(d);

    static const obs_row two_clean[] = { { "a", 0, 0, 0.9 }, { "q", 0, 0, 0.8 }, { "q", 0, 0, 0.6 } };
    d = make_long(two_clean, 3, 1);
    assert_int_equal(evaluate_rece_m(d, &s, NULL, 0, CS_WANT_RECE_M, &v, &err), CS_EINPUT);
    assert_string_equal(err.msg, "test.csv: id 'q' has more than one tta 0 row");
    cs_dataset_free(d);

    d = make_long(FOUR, NFOUR, 1);
    s.sigma = 0;
    assert_int_equal(evaluate_rece_m(d, &s, NULL, 0, CS_WANT_RECE_M, &v, &err), CS_EUSAGE);
    s.sigma = 0.1;
    s.bins = 0;
    assert_int_equal(evaluate_rece_m(d, &s, NULL, 0, CS_WANT_RECE_M, &v, &err), CS_EUSAGE);
    cs_dataset_free(d);
}

/* Worked by hand, M = 2, sigma 0.01 (every kernel lies inside one bin up to ~1e-23):
 *   a: clean 0.9 correct, observations 0.9 0.95  -> w = [0, 1]
 *   b: clean 0.7 wrong,   observations 0.7 0.3   -> w = [1/2, 1/2]
 *   c: clean 0.3 correct, observation  0.3       -> w = [1, 0]
 * C~ = [0.35 + 0.3, 0.9 + 0.35] = [0.65, 1.25], A~ = [1, 1]:
 * RECE-M = (0.35 + 0.25) / 3 = 0.2. gmm3 puts b's two components on 0.3 and 0.7 with half the
 * weight each (and a, c inside one bin), so it gives 0.2 as well.
 * The multiset {b, b, c}: C~ = [1.0, 0.7], A~ = [1, 0] -> (0 + 0.7) / 3. */
static const obs_row HAND[] = {
    { "a", 0, 0, 0.9 }, { "a", 1, 0, 0.95 }, { "b", 0, 1, 0.7 }, { "b", 1, 1, 0.3 },
    { "c", 0, 0, 0.3 },
};

static void test_hand_worked(void **state)
{
    (void)state;
    cs_dataset *d = make_long(HAND, 5, 1);
    cs_settings s;
    cs_error err;
    double v;
    for (int mix = 0; mix < 2; mix++) {
        settings(&s, 2, mix ? CS_MIX_GMM3 : CS_MIX_KDE);
        s.sigma = 0.01;
        assert_int_equal(evaluate_rece_m(d, &s, NULL, 0, CS_WANT_ALL, &v, &err), CS_OK);
        assert_double_near(v, 0.2, 1e-12);
        const uint32_t idx[3] = { 2, 1, 1 };
        assert_int_equal(evaluate_rece_m(d, &s, idx, 3, CS_WANT_RECE_M, &v, &err), CS_OK);
        assert_double_near(v, 0.7 / 3, 1e-12);
    }
    /* M = 1: every weight is 1, RECE-M = |accuracy - mean confidence| = |2/3 - 1.9/3| */
    settings(&s, 1, CS_MIX_KDE);
    assert_int_equal(evaluate_rece_m(d, &s, NULL, 0, CS_WANT_RECE_M, &v, &err), CS_OK);
    assert_double_near(v, 0.1 / 3, 1e-15);
    cs_dataset_free(d);
}

/* A long file of n ids written here: id i has 1 + i % 4 observations (tta 0 first), clean
 * confidences spread over [0.2, 1], and its correctness a fixed pattern. */
typedef struct gen { obs_row rows[200]; char names[60][24]; size_t n_rows, n_ids; } gen;

static cs_dataset *make_gen(gen *g, size_t n_ids)
{
    g->n_rows = 0;
    g->n_ids = n_ids;
    for (size_t i = 0; i < n_ids; i++) {
        snprintf(g->names[i], sizeof g->names[i], "i%zu", i);
        double c = 0.2 + 0.8 * (double)((i * 37) % 101) / 100.0;
        int label = (i * 7) % 3 == 0;   /* wrong (label 1) for one id in three */
        for (size_t t = 0; t <= i % 4; t++) {
            double o = t == 0 ? c : c + 0.13 * (double)t * ((t & 1) ? -1 : 1);
            if (o < 0.2) o = 0.2;
            if (o > 1) o = 1;
            g->rows[g->n_rows++] = (obs_row){ g->names[i], (int)t, label, o };
        }
    }
    return make_long(g->rows, g->n_rows, 1);
}

/* RECE-M (kde) of the multiset idx[0..n) of g's ids, from eq. 7 of Gupta et al. 2023 as
 * written (erf). */
static double rece_m_ref(const gen *g, const uint32_t *idx, size_t n, int m, double sigma)
{
    double *A = calloc((size_t)m, sizeof *A), *C = calloc((size_t)m, sizeof *C);
    double *w = calloc((size_t)m, sizeof *w);
    for (size_t q = 0; q < n; q++) {
        const char *id = g->names[idx[q]];
        double c = 0, tot = 0;
        int acc = 0, T = 0;
        for (int i = 0; i < m; i++) w[i] = 0;
        for (size_t r = 0; r < g->n_rows; r++) {
            if (strcmp(g->rows[r].id, id) != 0) continue;
            if (g->rows[r].tta == 0) { c = g->rows[r].conf; acc = g->rows[r].label == 0; }
            double o = g->rows[r].conf;
            for (int i = 0; i < m; i++) {
                double a = (double)i / m, b = (double)(i + 1) / m;
                w[i] += 0.5 * (erf((b - o) / (sigma * sqrt(2.0))) - erf((a - o) / (sigma * sqrt(2.0))));
            }
            T++;
        }
        for (int i = 0; i < m; i++) tot += w[i] / T;
        for (int i = 0; i < m; i++) { C[i] += w[i] / T / tot * c; A[i] += w[i] / T / tot * acc; }
    }
    double s = 0;
    for (int i = 0; i < m; i++) s += fabs(A[i] - C[i]);
    free(A); free(C); free(w);
    return s / (double)n;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Bootstrap intervals include RECE-M on a long file (and leave it out elsewhere); each
 * replicate is the resampled ids' RECE-M: the interval is the 2.5/97.5 % quantiles of
 * rece_m_ref over the same draws (calscope/resample.h: replicate r of an interval draws from
 * cs_rng_seed(seed, 3, 0, r), N with replacement). */
static void test_bootstrap_ci(void **state)
{
    (void)state;
    static gen g;
    cs_dataset *d = make_gen(&g, 40);
    cs_settings s;
    settings(&s, 15, CS_MIX_KDE);
    cs_error err;
    cs_prepared *p = cs_prepare(d, &s, &err);
    assert_non_null(p);
    assert_int_equal(cs_prepared_count(p), 40);
    cs_run run = { .threads = 2, .cancel = NULL, .progress_ppm = NULL };
    cs_ci ci;
    enum { R = 60 };
    assert_int_equal(cs_bootstrap_ci(p, CS_METRICS_DEFAULT, R, 5, &run, &ci, &err), CS_OK);
    assert_true(ci.metrics & CS_METRIC_BIT(CS_METRIC_RECE_M));
    uint32_t all[40], idx[40];
    for (uint32_t i = 0; i < 40; i++) all[i] = i;
    assert_double_near(ci.value[CS_METRIC_RECE_M], rece_m_ref(&g, all, 40, 15, 0.1), 1e-12);
    double vals[R];
    for (size_t r = 0; r < R; r++) {
        cs_rng rng;
        cs_rng_seed(&rng, 5, 3, 0, r);
        cs_draw_with(&rng, 40, 40, idx);
        vals[r] = rece_m_ref(&g, idx, 40, 15, 0.1);
    }
    qsort(vals, R, sizeof vals[0], cmp_dbl);
    assert_double_near(ci.lo[CS_METRIC_RECE_M], cs_quantile_sorted(vals, R, 0.025), 1e-12);
    assert_double_near(ci.hi[CS_METRIC_RECE_M], cs_quantile_sorted(vals, R, 0.975), 1e-12);
    assert_true(ci.lo[CS_METRIC_RECE_M] < ci.hi[CS_METRIC_RECE_M]);
    /* the same with 1 thread: bit-identical */
    cs_ci ci1;
    run.threads = 1;
    assert_int_equal(cs_bootstrap_ci(p, CS_METRICS_DEFAULT, R, 5, &run, &ci1, &err), CS_OK);
    assert_memory_equal(&ci1.lo[CS_METRIC_RECE_M], &ci.lo[CS_METRIC_RECE_M], sizeof(double));
    assert_memory_equal(&ci1.hi[CS_METRIC_RECE_M], &ci.hi[CS_METRIC_RECE_M], sizeof(double));
    cs_prepared_free(p);
    cs_dataset_free(d);

    /* not a long file: no RECE-M in the interval set */
    d = make_long(FOUR, NFOUR, 0);
    p = cs_prepare(d, &s, &err);
    assert_int_equal(cs_bootstrap_ci(p, CS_METRICS_DEFAULT, 10, 5, &run, &ci, &err), CS_OK);
    assert_false(ci.metrics & CS_METRIC_BIT(CS_METRIC_RECE_M));
    assert_true(ci.metrics & CS_METRIC_BIT(CS_METRIC_RECE_G));
    cs_prepared_free(p);
    cs_dataset_free(d);
}

/* Size curve: RECE-M is a curve metric; at each fraction, each subset's RECE-M is rece_m_ref
 * of the ids drawn (cs_rng_seed(seed, 1, point, rep), k = ceil(f N) without replacement).
 * Bins curve: weights follow M -- each point's full value is rece_m_ref at that M, and its
 * replicates (cs_rng_seed(seed, 2, 0, rep), N with replacement, shared by every M) average to
 * the mean of rece_m_ref over the same draws. */
static void test_curves(void **state)
{
    (void)state;
    static gen g;
    cs_dataset *d = make_gen(&g, 30);
    cs_settings s;
    settings(&s, 15, CS_MIX_KDE);
    s.sigma = 0.05;
    cs_error err;
    cs_run run = { .threads = 2, .cancel = NULL, .progress_ppm = NULL };
    cs_prepared *p = cs_prepare(d, &s, &err);
    cs_curve_options o;
    cs_curve_options_size_default(&o);
    o.repeats = 7;
    o.seed = 11;
    o.n_points = 2;
    o.x[0] = 0.2;
    o.x[1] = 0.5;
    cs_curve *c = cs_size_curve(p, &o, &run, &err);
    assert_non_null(c);
    assert_true(c->metrics & CS_METRIC_BIT(CS_METRIC_RECE_M));
    uint32_t perm[30], undo[30], idx[30], all[30];
    for (uint32_t i = 0; i < 30; i++) perm[i] = all[i] = i;
    double full = rece_m_ref(&g, all, 30, 15, 0.05);
    for (size_t pt = 0; pt < 2; pt++) {
        size_t k = c->points[pt].rows;
        assert_int_equal(k, pt ? 15 : 6);
        double sum = 0, dev = 0;
        for (size_t r = 0; r < 7; r++) {
            cs_rng rng;
            cs_rng_seed(&rng, 11, 1, pt, r);
            cs_draw_without(&rng, perm, 30, k, undo, idx);
            double v = rece_m_ref(&g, idx, k, 15, 0.05);
            sum += v;
            dev += fabs(v - full);
        }
        assert_double_near(c->points[pt].stat[CS_METRIC_RECE_M].mean, sum / 7, 1e-12);
        assert_double_near(c->points[pt].stat[CS_METRIC_RECE_M].abs_dev, dev / 7, 1e-12);
        assert_double_near(c->points[pt].full[CS_METRIC_RECE_M], full, 1e-12);
    }
    cs_curve_free(c);
    cs_prepared_free(p);

    cs_curve_options_bins_default(&o, 0);
    assert_true(o.metrics & CS_METRIC_BIT(CS_METRIC_RECE_M));
    o.repeats = 5;
    o.seed = 4;
    o.n_points = 3;
    o.x[0] = 3;
    o.x[1] = 15;
    o.x[2] = 40;
    c = cs_bins_curve(d, &s, &o, &run, &err);
    assert_non_null(c);
    assert_true(c->metrics & CS_METRIC_BIT(CS_METRIC_RECE_M));
    for (size_t pt = 0; pt < 3; pt++) {
        int m = (int)o.x[pt];
        assert_double_near(c->points[pt].full[CS_METRIC_RECE_M], rece_m_ref(&g, all, 30, m, 0.05), 1e-12);
        double sum = 0;
        for (size_t r = 0; r < 5; r++) {
            cs_rng rng;
            cs_rng_seed(&rng, 4, 2, 0, r);
            cs_draw_with(&rng, 30, 30, idx);
            sum += rece_m_ref(&g, idx, 30, m, 0.05);
        }
        assert_double_near(c->points[pt].stat[CS_METRIC_RECE_M].mean, sum / 5, 1e-12);
    }
    /* the weights do follow M: the three full values differ */
    assert_true(c->points[0].full[CS_METRIC_RECE_M] != c->points[1].full[CS_METRIC_RECE_M]);
    assert_true(c->points[1].full[CS_METRIC_RECE_M] != c->points[2].full[CS_METRIC_RECE_M]);
    cs_curve_free(c);
    cs_dataset_free(d);

    /* not a long file: the default curve sets leave RECE-M out */
    d = make_long(FOUR, NFOUR, 0);
    c = cs_bins_curve(d, &s, &o, &run, &err);
    assert_non_null(c);
    assert_false(c->metrics & CS_METRIC_BIT(CS_METRIC_RECE_M));
    assert_true(c->metrics & CS_METRIC_BIT(CS_METRIC_ECE));
    cs_curve_free(c);
    cs_dataset_free(d);
}

/* Weight rows too large to keep (n*M doubles above both the cache floor and the probability
 * matrix) are made per evaluation by the same function: the same numbers as the formula,
 * repeats included; resampling leaves RECE-M out then. M is bounded by CS_BINS_MAX, so the
 * floor is lowered to 0 here: 8 ids x 1000 bins = 64 KB of rows, above the 8-id matrix. */
static void test_uncached_rows(void **state)
{
    (void)state;
    static gen g;
    cs_dataset *d = make_gen(&g, 8);
    cs_settings s;
    settings(&s, 1000, CS_MIX_KDE);
    cs_error err;
    double v;
    uint32_t all[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
    cs_mx_rece_m_cache_limit(0);
    assert_int_equal(evaluate_rece_m(d, &s, NULL, 0, CS_WANT_RECE_M, &v, &err), CS_OK);
    assert_double_near(v, rece_m_ref(&g, all, 8, 1000, 0.1), 1e-9);
    const uint32_t idx[6] = { 5, 0, 5, 2, 0, 5 };
    assert_int_equal(evaluate_rece_m(d, &s, idx, 6, CS_WANT_RECE_M, &v, &err), CS_OK);
    assert_double_near(v, rece_m_ref(&g, idx, 6, 1000, 0.1), 1e-9);
    /* such rows are not resampled: intervals leave RECE-M out (and keep the rest) */
    cs_prepared *p = cs_prepare(d, &s, &err);
    assert_true(cs_prepared_has_tta(p));
    assert_false(cs_prepared_rece_m_kept(p));
    cs_run run = { .threads = 1, .cancel = NULL, .progress_ppm = NULL };
    cs_ci ci;
    assert_int_equal(cs_bootstrap_ci(p, CS_METRIC_BIT(CS_METRIC_RECE_M) | CS_METRIC_BIT(CS_METRIC_ACCURACY),
                                     3, 1, &run, &ci, &err), CS_OK);
    assert_int_equal(ci.metrics, CS_METRIC_BIT(CS_METRIC_ACCURACY));
    cs_prepared_free(p);
    cs_mx_rece_m_cache_limit((double)(48u << 20));
    s.bins = 15;
    p = cs_prepare(d, &s, &err);
    assert_true(cs_prepared_rece_m_kept(p));
    cs_prepared_free(p);
    cs_dataset_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_numpy),
        cmocka_unit_test(test_selection_and_idx),
        cmocka_unit_test(test_kde_identical_is_rece_g),
        cmocka_unit_test(test_gmm_fit),
        cmocka_unit_test(test_single_observation),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_hand_worked),
        cmocka_unit_test(test_bootstrap_ci),
        cmocka_unit_test(test_curves),
        cmocka_unit_test(test_uncached_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
