/* calscope engine, recalibration: temperature scaling by NLL, cross-fitted.
 *
 * Why it is fast: all K + 1 models are fitted from the same passes over the data. A pass at
 * beta = c computes, per group (fold), the NLL and its first four derivatives in beta (for a
 * row: E[s] − s_y and the 2nd, 3rd and 4th cumulants of s under softmax(beta·s)); a model's
 * sums are the sum over the groups it uses. From the pass each model gets a cubic Taylor model
 * of its NLL derivative around c and solves it; a model whose root lies within 1 % of c is
 * settled there (the neglected fifth-order term moves the root by about (0.01)^4 / 24, 4e-10
 * relative), the others move to their root (a Newton step, kept within [c/2, 2c]) and the next
 * pass is centred on the first unsettled model — the all-rows model leads, and the fold models
 * usually settle on its last pass. The first passes run on every 16th sample (a warm start:
 * far from the optimum precision is not needed), so a 50,000 × 1000 file takes one or two full
 * passes plus the one that applies the fits, instead of about 6 × (K + 1).
 *
 * The NLL is convex in beta = 1/T (its second derivative is a variance), so Newton with that
 * trust region converges; beta is kept in [1e-4, 1e4]. Sums are formed per chunk of 1024
 * samples and reduced in chunk order, so T does not depend on the thread count. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calscope/resample.h"
#include "recal_internal.h"

#define LOGP_FLOOR 1e-300
#define BETA_MIN 1e-4
#define BETA_MAX 1e4
#define CHUNK 1024
#define NS 5                 /* sums per group: nll, d1, d2, d3, d4 */

typedef struct ts_ctx {
    const cs_dataset *d;
    const cs_rc_plan *pl;
    const uint32_t *rows;    /* the samples a pass reads (all, or a stride subsample) */
    size_t n_rows;
    double beta;
    const double *beta_of;   /* apply: beta per model */
    double *sums;            /* [task][group][NS] */
    double *scratch;         /* [worker][k] log-probabilities */
    double *out;
    double tab[64];          /* 2^(j/64) for fast_exp */
} ts_ctx;

/* exp(x) for x <= 0, the only arguments here (s − max scaled by beta > 0), table-driven:
 * x = (64m + j)·ln2/64 + r with |r| <= ln2/128 (ln2/64 split in two parts, so r is exact),
 * e^x = 2^m · 2^(j/64) · e^r, e^r by its degree-5 Taylor polynomial (the first omitted term is
 * below 4e-17 relative). About 1 ulp from libm's exp, but inlined, with a short dependency
 * chain and no errno handling or call: the passes are a loop of n·K of these, and libm's exp
 * was most of their time. Below -708 it returns 0 (such a term cannot move a sum whose largest
 * term is 1). tab[j] = 2^(j/64), filled per call (no shared state between threads). */
static void exp_table_init(double *tab)
{
    for (int j = 0; j < 64; j++) tab[j] = exp2((double)j / 64.0);
}

static inline double fast_exp(const double *tab, double x)
{
    if (!(x > -708.0)) return 0.0;
    const double shift = 0x1.8p52;
    double kd = x * (64.0 * 1.4426950408889634) + shift;   /* round to nearest integer */
    double n = kd - shift;
    double r = (x - n * 0x1.62e42fef00000p-7) - n * 0x1.473de6af278edp-40;
    double p = 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    int64_t ni = (int64_t)n;                 /* <= 0 */
    int64_t m = (ni - (ni & 63)) / 64;       /* floor(ni / 64) */
    uint64_t bits = (uint64_t)(m + 1023) << 52;
    double scale;
    memcpy(&scale, &bits, sizeof scale);
    return p * tab[ni & 63] * scale;
}

/* Scores of row r: the logits, or the clipped log-probabilities written into buf. */
static const double *row_scores(const cs_dataset *d, size_t r, double *buf)
{
    size_t k = d->k;
    if (d->logit) return d->logit + r * k;
    const double *p = d->prob + r * k;
    for (size_t j = 0; j < k; j++) buf[j] = log(p[j] > LOGP_FLOOR ? p[j] : LOGP_FLOOR);
    return buf;
}

static void pass_task(void *vctx, size_t t, int worker)
{
    ts_ctx *x = vctx;
    const cs_dataset *d = x->d;
    size_t k = d->k, G = x->pl->n_groups;
    double *S = x->sums + t * G * NS, beta = x->beta;
    memset(S, 0, G * NS * sizeof *S);
    size_t lo = t * CHUNK, hi = lo + CHUNK < x->n_rows ? lo + CHUNK : x->n_rows;
    for (size_t j = lo; j < hi; j++) {
        size_t r = x->rows[j];
        const double *s = row_scores(d, r, x->scratch + (size_t)worker * k);
        double mx = s[0];
        for (size_t c = 1; c < k; c++) if (s[c] > mx) mx = s[c];
        /* raw moments of t = s − max under the softmax; the mass sits near t = 0, so the
         * central moments below lose little to cancellation */
        /* two interleaved sets of sums (even and odd classes), so the five add chains do not
         * bound the loop by their latency; added in a fixed order, so still deterministic */
        double z = 0, m1 = 0, m2 = 0, m3 = 0, m4 = 0, zb = 0, m1b = 0, m2b = 0, m3b = 0, m4b = 0;
        size_t c = 0;
        for (; c + 1 < k; c += 2) {
            double tt = s[c] - mx, e = fast_exp(x->tab, beta * tt), et = e * tt, et2 = et * tt;
            double tu = s[c + 1] - mx, f = fast_exp(x->tab, beta * tu), fu = f * tu, fu2 = fu * tu;
            z += e;
            m1 += et;
            m2 += et2;
            m3 += et2 * tt;
            m4 += et2 * tt * tt;
            zb += f;
            m1b += fu;
            m2b += fu2;
            m3b += fu2 * tu;
            m4b += fu2 * tu * tu;
        }
        if (c < k) {
            double tt = s[c] - mx, e = fast_exp(x->tab, beta * tt), et = e * tt, et2 = et * tt;
            z += e;
            m1 += et;
            m2 += et2;
            m3 += et2 * tt;
            m4 += et2 * tt * tt;
        }
        z += zb;
        m1 += m1b;
        m2 += m2b;
        m3 += m3b;
        m4 += m4b;
        m1 /= z; m2 /= z; m3 /= z; m4 /= z;
        double var = m2 - m1 * m1;
        if (var < 0) var = 0;
        double mu3 = m3 - 3 * m1 * m2 + 2 * m1 * m1 * m1;
        double mu4 = m4 - 4 * m1 * m3 + 6 * m1 * m1 * m2 - 3 * m1 * m1 * m1 * m1;
        double sy = s[d->label[r]] - mx;
        double *g = S + (size_t)x->pl->group[r] * NS;
        g[0] += log(z) - beta * sy;
        g[1] += m1 - sy;
        g[2] += var;
        g[3] += mu3;
        g[4] += mu4 - 3 * var * var;
    }
}

static void apply_task(void *vctx, size_t t, int worker)
{
    ts_ctx *x = vctx;
    const cs_dataset *d = x->d;
    size_t k = d->k;
    size_t lo = t * CHUNK, hi = lo + CHUNK < d->n ? lo + CHUNK : d->n;
    for (size_t r = lo; r < hi; r++) {
        const double *s = row_scores(d, r, x->scratch + (size_t)worker * k);
        double beta = x->beta_of[cs_rc_model_of(x->pl, x->pl->group[r])];
        double mx = s[0], z = 0;
        for (size_t c = 1; c < k; c++) if (s[c] > mx) mx = s[c];
        double *q = x->out + r * k;
        for (size_t c = 0; c < k; c++) z += (q[c] = fast_exp(x->tab, beta * (s[c] - mx)));
        double iz = 1.0 / z;
        for (size_t c = 0; c < k; c++) q[c] *= iz;
    }
}

static double clampd(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* Root of the model's cubic Taylor model of dNLL/dbeta around c, as an offset from c within
 * the trust region [max(c/2, BETA_MIN), min(2c, BETA_MAX)]. */
static double model_step(const double *T, double c)
{
    double lo = clampd(c / 2, BETA_MIN, BETA_MAX) - c, hi = clampd(c * 2, BETA_MIN, BETA_MAX) - c;
    if (!(T[2] > 0)) {
        /* no variance: the NLL is linear (or flat) in beta; go to the bound it falls towards */
        return T[1] < 0 ? hi : T[1] > 0 ? lo : 0;
    }
    double dl = clampd(-T[1] / T[2], lo, hi);
    if (fabs(dl) <= 0.1 * c) {
        for (int it = 0; it < 30; it++) {
            double f = T[1] + T[2] * dl + T[3] * dl * dl / 2 + T[4] * dl * dl * dl / 6;
            double fp = T[2] + T[3] * dl + T[4] * dl * dl / 2;
            if (!(fp > 0)) break;
            double nd = clampd(dl - f / fp, lo, hi);
            if (fabs(nd - dl) <= 1e-15 * c) { dl = nd; break; }
            dl = nd;
        }
    }
    return dl;
}

/* Runs passes until every model not yet done is settled (see the header comment); beta[m]
 * gets the fits, cen[m] the starting centres. Returns the number of passes, or -1 when the
 * cancel flag was raised before a pass. */
static int fit_loop(ts_ctx *x, int threads, double *cen, double *beta, int *done,
                    const atomic_int *cancel)
{
    const cs_rc_plan *pl = x->pl;
    size_t G = pl->n_groups, M = pl->n_models;
    size_t tasks = (x->n_rows + CHUNK - 1) / CHUNK;
    int pass;
    for (pass = 0; pass < 400; pass++) {
        /* the lead: the all-rows model first, then the folds in order */
        size_t lead = M;
        for (size_t i = 0; i < M && lead == M; i++) {
            size_t m = (M - 1 + i) % M;
            if (!done[m]) lead = m;
        }
        if (lead == M) break;
        if (cancel && atomic_load_explicit(cancel, memory_order_relaxed)) return -1;
        double c = cen[lead];
        x->beta = c;
        cs_parallel_for(threads, tasks, pass_task, x, NULL);
        double S[CS_RECAL_MAX_FOLDS][NS];
        memset(S, 0, sizeof S);
        for (size_t t = 0; t < tasks; t++)
            for (size_t g = 0; g < G; g++)
                for (int q = 0; q < NS; q++) S[g][q] += x->sums[(t * G + g) * NS + (size_t)q];
        for (size_t m = 0; m < M; m++) {
            if (done[m]) continue;
            double T[NS] = { 0 };
            for (size_t g = 0; g < G; g++)
                if (cs_rc_uses(pl, m, g))
                    for (int q = 0; q < NS; q++) T[q] += S[g][q];
            double dl = model_step(T, c);
            if (fabs(dl) <= 1e-2 * c) {
                done[m] = 1;
                beta[m] = clampd(c + dl, BETA_MIN, BETA_MAX);
            } else {
                cen[m] = clampd(c + dl, BETA_MIN, BETA_MAX);
            }
        }
    }
    for (size_t m = 0; m < M; m++) if (!done[m]) beta[m] = cen[m];
    return pass;
}

cs_status cs_rc_temperature(const cs_dataset *d, const cs_rc_plan *pl, const cs_recal_options *o,
                            double *out, cs_recal_info *info, cs_error *err)
{
    int threads = o->threads > 0 ? o->threads : cs_cpu_count();
    size_t G = pl->n_groups, M = pl->n_models, k = d->k;
    size_t tasks = (d->n_samples + CHUNK - 1) / CHUNK;
    ts_ctx x = { .d = d, .pl = pl, .out = out };
    x.sums = malloc((tasks ? tasks : 1) * G * NS * sizeof *x.sums);
    x.scratch = malloc((size_t)threads * k * sizeof *x.scratch);
    double *cen = malloc(M * sizeof *cen), *beta = malloc(M * sizeof *beta);
    int *done = calloc(M, sizeof *done);
    /* a start from every 16th sample: the early Newton steps, far from the optimum, need no
     * precision, and from that start the full passes usually settle every model at once */
    size_t stride = 16, n_sub = d->n_samples >= 32768 ? d->n_samples / stride : 0;
    uint32_t *sub = n_sub ? malloc(n_sub * sizeof *sub) : NULL;
    if (!x.sums || !x.scratch || !cen || !beta || !done || (n_sub && !sub)) {
        free(x.sums); free(x.scratch); free(cen); free(beta); free(done); free(sub);
        return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
    }
    info->from_logits = d->logit != NULL;
    exp_table_init(x.tab);
    for (size_t m = 0; m < M; m++) cen[m] = beta[m] = 1.0;
    int passes = 0;
    if (n_sub) {
        for (size_t j = 0; j < n_sub; j++) sub[j] = d->sample_rows[j * stride];
        x.rows = sub;
        x.n_rows = n_sub;
        for (size_t m = 0; m + 1 < M; m++) done[m] = 1;   /* only the all-rows model */
        passes = fit_loop(&x, threads, cen, beta, done, o->cancel);
        for (size_t m = 0; m < M; m++) {
            cen[m] = beta[M - 1];
            done[m] = 0;
        }
    }
    x.rows = d->sample_rows;
    x.n_rows = d->n_samples;
    if (passes >= 0) passes = fit_loop(&x, threads, cen, beta, done, o->cancel);
    if (passes < 0) {
        free(x.sums); free(x.scratch); free(cen); free(beta); free(done); free(sub);
        return cs_error_set(err, CS_ECANCELLED, 0, 0, "cancelled");
    }
    info->passes = passes;
    for (size_t m = 0; m < M && m <= CS_RECAL_MAX_FOLDS; m++) {
        info->param[m][0] = 1.0 / beta[m];
        if (beta[m] <= BETA_MIN || beta[m] >= BETA_MAX) info->clamped = 1;
    }
    x.beta_of = beta;
    cs_parallel_for(threads, (d->n + CHUNK - 1) / CHUNK, apply_task, &x, NULL);
    free(x.sums); free(x.scratch); free(cen); free(beta); free(done); free(sub);
    return CS_OK;
}
