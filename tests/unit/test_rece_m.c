/* RECE-M: kde against a RECE-G written here, EM against hand work and a numpy EM. */
#include "support/cs_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calscope/rece_m.h"

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
    memset(s, 0, sizeof *s);
    s->bins = bins;
    s->sigma = 0.1;
    s->mixture = mix;
}

static double rece_m_of(const cs_dataset *d, int bins, cs_mixture mix, const char *select)
{
    cs_settings s;
    settings(&s, bins, mix);
    snprintf(s.select, sizeof s.select, "%s", select);
    cs_error err;
    double v = -1;
    cs_status st = cs_rece_m(d, &s, &v, &err);
    if (st != CS_OK) fail_msg("cs_rece_m: %s", err.msg);
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
    cs_rece_m_weights *w = cs_rece_m_prepare(d, &s, &err);
    assert_non_null(w);
    assert_int_equal(w->n, 4);
    /* samples in dataset order of their clean rows: a (row 0), b (1), c (3), d (7) */
    assert_int_equal(w->rows[0], 0);
    assert_int_equal(w->rows[1], 1);
    assert_int_equal(w->rows[2], 3);
    assert_int_equal(w->rows[3], 7);
    for (size_t j = 0; j < w->n; j++) {
        double sum = 0;
        for (size_t i = 0; i < w->m; i++) sum += w->w[j * w->m + i];
        assert_double_near(sum, 1.0, 1e-12);
    }
    const uint32_t idx[3] = { 1, 1, 3 };
    assert_double_near(cs_rece_m_eval(w, idx, 3), 0.3499999999999999, 1e-12);
    assert_true(isnan(cs_rece_m_eval(w, idx, 0)));
    cs_rece_m_weights_free(w);

    strcpy(s.select, "conf > 0.95");
    assert_null(cs_rece_m_prepare(d, &s, &err));
    assert_int_equal(err.code, CS_EEMPTY);
    strcpy(s.select, "y == 9");
    assert_null(cs_rece_m_prepare(d, &s, &err));
    assert_int_equal(err.code, CS_EUSAGE);
    assert_non_null(strstr(err.msg, "class 9 out of range"));
    cs_dataset_free(d);
}

/* RECE-G as seed 000 eq. 6 writes it, independently of the engine. */
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
    assert_int_equal(cs_rece_m(d, &s, &v, &err), CS_OK);
    assert_double_near(v, rece_g(c, acc, 3, 15, 0.03), 1e-12);
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

static void test_errors(void **state)
{
    (void)state;
    cs_settings s;
    settings(&s, 15, CS_MIX_KDE);
    cs_error err;
    double v;
    cs_dataset *d = make_long(FOUR, NFOUR, 0);   /* id but no tta */
    assert_int_equal(cs_rece_m(d, &s, &v, &err), CS_EUSAGE);
    assert_non_null(strstr(err.msg, "id and tta columns"));
    cs_dataset_free(d);

    static const obs_row no_clean[] = { { "a", 0, 0, 0.9 }, { "b7", 1, 0, 0.8 }, { "b7", 2, 0, 0.6 } };
    d = make_long(no_clean, 3, 1);
    assert_int_equal(cs_rece_m(d, &s, &v, &err), CS_EINPUT);
    assert_non_null(strstr(err.msg, "id 'b7' has no tta 0 row"));
    cs_dataset_free(d);

    static const obs_row two_clean[] = { { "a", 0, 0, 0.9 }, { "q", 0, 0, 0.8 }, { "q", 0, 0, 0.6 } };
    d = make_long(two_clean, 3, 1);
    assert_int_equal(cs_rece_m(d, &s, &v, &err), CS_EINPUT);
    assert_non_null(strstr(err.msg, "id 'q' has more than one tta 0 row"));
    cs_dataset_free(d);

    d = make_long(FOUR, NFOUR, 1);
    s.sigma = 0;
    assert_int_equal(cs_rece_m(d, &s, &v, &err), CS_EUSAGE);
    s.sigma = 0.1;
    s.bins = 0;
    assert_int_equal(cs_rece_m(d, &s, &v, &err), CS_EUSAGE);
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
