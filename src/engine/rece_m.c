/* RECE-M (seed 000 eq. 7): RECE-G's soft binning with a per-sample mixture fitted to the
 * test-time-augmentation observations. Conventions are written down in rece_m.h. */
#include "calscope/rece_m.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calscope/select.h"

#define VAR_FLOOR 1e-6
#define EM_TOL 1e-10
#define EM_MAX_ITER 200

/* Mass of Normal(mu, sd) on [a, b]. erfc keeps the far tails accurate, where 1 - Φ would
 * cancel to zero; choosing the side by sign keeps both differences small-minus-small. */
static double normal_mass(double a, double b, double mu, double sd)
{
    double za = (a - mu) / (sd * M_SQRT2), zb = (b - mu) / (sd * M_SQRT2);
    if (za >= 0) return 0.5 * (erfc(za) - erfc(zb));
    if (zb <= 0) return 0.5 * (erfc(-zb) - erfc(-za));
    return 1.0 - 0.5 * (erfc(-za) + erfc(zb));
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* numpy.quantile's default ("linear"): position q*(t-1) in the sorted values. */
static double quantile_sorted(const double *s, size_t t, double q)
{
    double pos = q * (double)(t - 1);
    size_t lo = (size_t)floor(pos);
    if (lo + 1 >= t) return s[t - 1];
    double frac = pos - (double)lo;
    return s[lo] + frac * (s[lo + 1] - s[lo]);
}

/* E-step: responsibilities r[t*3] and the log-likelihood, with log-sum-exp so a point far
 * from every (floored, narrow) component does not underflow to log 0. */
static double em_estep(const double *x, size_t t, const double w[3], const double mu[3],
                       const double var[3], double *r)
{
    double ll = 0;
    for (size_t i = 0; i < t; i++) {
        double lp[3], top = -INFINITY;
        for (int k = 0; k < 3; k++) {
            if (w[k] > 0) {
                double dx = x[i] - mu[k];
                lp[k] = log(w[k]) - 0.5 * (log(2 * M_PI * var[k]) + dx * dx / var[k]);
            } else {
                lp[k] = -INFINITY;
            }
            if (lp[k] > top) top = lp[k];
        }
        double sum = 0;
        for (int k = 0; k < 3; k++) sum += lp[k] == -INFINITY ? 0 : exp(lp[k] - top);
        double lse = top + log(sum);
        for (int k = 0; k < 3; k++) r[i * 3 + k] = lp[k] == -INFINITY ? 0 : exp(lp[k] - lse);
        ll += lse;
    }
    return ll;
}

static void em_mstep(const double *x, size_t t, const double *r, double w[3], double mu[3],
                     double var[3])
{
    for (int k = 0; k < 3; k++) {
        double nk = 0, sx = 0;
        for (size_t i = 0; i < t; i++) { nk += r[i * 3 + k]; sx += r[i * 3 + k] * x[i]; }
        if (!(nk > 0)) { w[k] = 0; continue; }   /* dead component: keep mean and variance */
        double m = sx / nk, sv = 0;
        for (size_t i = 0; i < t; i++) { double dx = x[i] - m; sv += r[i * 3 + k] * dx * dx; }
        w[k] = nk / (double)t;
        mu[k] = m;
        var[k] = fmax(sv / nk, VAR_FLOOR);
    }
}

int cs_gmm3_fit(const double *x, size_t t, double weight[3], double mean[3], double var[3])
{
    double stack_r[3 * 64], stack_s[64];
    double *r = t <= 64 ? stack_r : malloc(3 * t * sizeof *r);
    double *s = t <= 64 ? stack_s : malloc(t * sizeof *s);
    if (!r || !s) {
        if (t > 64) { free(r); free(s); }
        return -1;
    }
    memcpy(s, x, t * sizeof *s);
    qsort(s, t, sizeof *s, cmp_double);
    double sum = 0, sv = 0;
    for (size_t i = 0; i < t; i++) sum += x[i];
    double avg = sum / (double)t;
    for (size_t i = 0; i < t; i++) sv += (x[i] - avg) * (x[i] - avg);
    double v0 = fmax(sv / (double)t, VAR_FLOOR);
    static const double q[3] = { 1.0 / 6.0, 0.5, 5.0 / 6.0 };
    for (int k = 0; k < 3; k++) {
        mean[k] = quantile_sorted(s, t, q[k]);
        weight[k] = 1.0 / 3.0;
        var[k] = v0;
    }
    double ll_prev = em_estep(x, t, weight, mean, var, r);
    int it = 0;
    while (it < EM_MAX_ITER) {
        em_mstep(x, t, r, weight, mean, var);
        double ll = em_estep(x, t, weight, mean, var, r);
        it++;
        if (fabs(ll - ll_prev) < EM_TOL) break;
        ll_prev = ll;
    }
    if (t > 64) { free(r); free(s); }
    return it;
}

/* Normalised bin weights of one sample from its observations obs[0..t). Returns 0, or -1
 * when out of memory. A total mass of 0 cannot happen for sd > 0 and means in [0, 1], but
 * if rounding ever made it so, the sample falls back to the hard bin of `clean`. */
static int sample_weights(const double *obs, size_t t, double clean, const cs_settings *s,
                          double *w)
{
    size_t m = (size_t)s->bins;
    double gw[3], gm[3], gv[3];
    if (s->mixture == CS_MIX_GMM3 && cs_gmm3_fit(obs, t, gw, gm, gv) < 0) return -1;
    double total = 0;
    for (size_t i = 0; i < m; i++) {
        double a = (double)i / (double)m, b = (double)(i + 1) / (double)m, mass = 0;
        if (s->mixture == CS_MIX_GMM3) {
            for (int k = 0; k < 3; k++)
                if (gw[k] > 0) mass += gw[k] * normal_mass(a, b, gm[k], sqrt(gv[k]));
        } else {
            for (size_t j = 0; j < t; j++) mass += normal_mass(a, b, obs[j], s->sigma);
            mass /= (double)t;
        }
        w[i] = mass;
        total += mass;
    }
    if (!(total > 0)) {
        size_t hard = clean <= 0 ? 0 : (size_t)ceil(clean * (double)m) - 1;
        if (hard >= m) hard = m - 1;
        for (size_t i = 0; i < m; i++) w[i] = i == hard;
        return 0;
    }
    for (size_t i = 0; i < m; i++) w[i] /= total;
    return 0;
}

void cs_rece_m_weights_free(cs_rece_m_weights *w)
{
    if (!w) return;
    free(w->rows);
    free(w->conf);
    free(w->acc);
    free(w->w);
    free(w);
}

static double row_conf(const cs_dataset *d, size_t row)
{
    if (d->conf) return d->conf[row];
    const double *g = d->prob + row * d->k;
    double best = g[0];
    for (size_t j = 1; j < d->k; j++)
        if (g[j] > best) best = g[j];
    return best;
}

static int row_correct(const cs_dataset *d, size_t row)
{
    if (d->correct) return d->correct[row];
    const double *g = d->prob + row * d->k;
    size_t best = 0;
    for (size_t j = 1; j < d->k; j++)
        if (g[j] > g[best]) best = j;
    return d->label[row] == (int32_t)best;
}

static const char *id_name(const cs_dataset *d, int32_t id)
{
    return d->id_names && id >= 0 && (size_t)id < d->n_ids && d->id_names[id] ? d->id_names[id] : "?";
}

cs_rece_m_weights *cs_rece_m_prepare(const cs_dataset *d, const cs_settings *s, cs_error *err)
{
    const char *path = d->path ? d->path : "input";
    if (!d->id || !d->tta) {
        cs_error_set(err, CS_EUSAGE, 0, 0,
                     "%s: RECE-M needs a long test-time-augmentation file with id and tta columns "
                     "(tta 0 = the clean prediction)", path);
        return NULL;
    }
    if (s->bins < 1) {
        cs_error_set(err, CS_EUSAGE, 0, 0, "RECE-M: bins must be at least 1, not %d", s->bins);
        return NULL;
    }
    if (s->mixture == CS_MIX_KDE && !(s->sigma > 0 && isfinite(s->sigma))) {
        cs_error_set(err, CS_EUSAGE, 0, 0, "RECE-M: sigma must be positive, not %g", s->sigma);
        return NULL;
    }
    size_t n = d->n, nid = d->n_ids, m = (size_t)s->bins;
    for (size_t r = 0; r < n; r++)
        if (d->id[r] < 0 || (size_t)d->id[r] >= nid) {
            cs_error_set(err, CS_EINPUT, 0, 0, "%s: row %zu has an id outside the id table", path, r);
            return NULL;
        }

    /* Group rows by id (counting sort, stable) and find each id's clean row. */
    size_t *start = calloc(nid + 1, sizeof *start);
    int64_t *clean = malloc((nid ? nid : 1) * sizeof *clean);
    uint32_t *order = malloc((n ? n : 1) * sizeof *order);
    double *obs = malloc((n ? n : 1) * sizeof *obs);
    cs_rece_m_weights *out = calloc(1, sizeof *out);
    cs_select *sel = NULL;
    if (!start || !clean || !order || !obs || !out) goto nomem;
    for (size_t i = 0; i < nid; i++) clean[i] = -1;
    for (size_t r = 0; r < n; r++) {
        size_t id = (size_t)d->id[r];
        start[id + 1]++;
        if (d->tta[r] == 0) {
            if (clean[id] >= 0) {
                cs_error_set(err, CS_EINPUT, 0, 0, "%s: id '%s' has more than one tta 0 row", path,
                             id_name(d, d->id[r]));
                goto fail;
            }
            clean[id] = (int64_t)r;
        }
    }
    for (size_t i = 0; i < nid; i++) {
        if (start[i + 1] > 0 && clean[i] < 0) {
            cs_error_set(err, CS_EINPUT, 0, 0,
                         "%s: id '%s' has no tta 0 row (the clean prediction RECE-M needs)", path,
                         id_name(d, (int32_t)i));
            goto fail;
        }
        start[i + 1] += start[i];
    }
    {
        size_t *fill = malloc((nid ? nid : 1) * sizeof *fill);
        if (!fill) goto nomem;
        memcpy(fill, start, (nid ? nid : 1) * sizeof *fill);
        for (size_t r = 0; r < n; r++) order[fill[d->id[r]]++] = (uint32_t)r;
        free(fill);
    }

    sel = cs_select_compile(s->select, d, err);
    if (!sel) goto fail;

    /* Samples in dataset order of their clean rows, as cs_prepare orders them. */
    size_t ns = 0;
    for (size_t r = 0; r < n; r++)
        if (d->tta[r] == 0 && cs_select_match(sel, d, r)) ns++;
    if (ns == 0) {
        cs_error_set(err, CS_EEMPTY, 0, 0, "%s: RECE-M: the selection keeps no sample", path);
        goto fail;
    }
    out->n = ns;
    out->m = m;
    out->rows = malloc(ns * sizeof *out->rows);
    out->conf = malloc(ns * sizeof *out->conf);
    out->acc = malloc(ns * sizeof *out->acc);
    out->w = malloc(ns * m * sizeof *out->w);
    if (!out->rows || !out->conf || !out->acc || !out->w) goto nomem;
    size_t j = 0;
    for (size_t r = 0; r < n; r++) {
        if (d->tta[r] != 0 || !cs_select_match(sel, d, r)) continue;
        size_t id = (size_t)d->id[r], t = start[id + 1] - start[id];
        for (size_t q = 0; q < t; q++) obs[q] = row_conf(d, order[start[id] + q]);
        out->rows[j] = (uint32_t)r;
        out->conf[j] = row_conf(d, r);
        out->acc[j] = row_correct(d, r);
        if (sample_weights(obs, t, out->conf[j], s, out->w + j * m) < 0) goto nomem;
        j++;
    }
    cs_select_free(sel);
    free(start); free(clean); free(order); free(obs);
    return out;

nomem:
    cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", path);
fail:
    cs_select_free(sel);
    free(start); free(clean); free(order); free(obs);
    cs_rece_m_weights_free(out);
    return NULL;
}

double cs_rece_m_eval(const cs_rece_m_weights *w, const uint32_t *idx, size_t n)
{
    if (!idx) n = w->n;
    if (n == 0) return NAN;
    size_t m = w->m;
    double *acc = calloc(2 * m, sizeof *acc);
    if (!acc) return NAN;
    double *cc = acc + m;
    for (size_t q = 0; q < n; q++) {
        size_t j = idx ? idx[q] : q;
        const double *wj = w->w + j * m;
        for (size_t i = 0; i < m; i++) {
            cc[i] += wj[i] * w->conf[j];
            acc[i] += wj[i] * w->acc[j];
        }
    }
    double sum = 0;
    for (size_t i = 0; i < m; i++) sum += fabs(acc[i] - cc[i]);
    free(acc);
    return sum / (double)n;
}

cs_status cs_rece_m(const cs_dataset *d, const cs_settings *s, double *out, cs_error *err)
{
    cs_rece_m_weights *w = cs_rece_m_prepare(d, s, err);
    if (!w) return err->code;
    *out = cs_rece_m_eval(w, NULL, 0);
    cs_rece_m_weights_free(w);
    return CS_OK;
}
