/* calscope engine, recalibration: Platt scaling, histogram binning, isotonic regression and
 * the pool-adjacent-violators core (see include/calscope/recal.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/num/ubin.h"
#include "recal_internal.h"

#define LOGP_FLOOR 1e-300

/* ---- Platt ---- */

/* log(1 + e^z) − y·z without overflow. */
static double logistic_loss(double z, int y)
{
    return (z > 0 ? z : 0) + log1p(exp(-fabs(z))) - (y ? z : 0);
}

static double platt_loss(const double *s, const cs_dataset *d, const cs_rc_plan *pl, size_t m,
                         double a, double b)
{
    double L = 0;
    for (size_t j = 0; j < d->n_samples; j++) {
        size_t r = d->sample_rows[j];
        if (cs_rc_uses(pl, m, pl->group[r])) L += logistic_loss(a * s[r] + b, d->label[r] == 1);
    }
    return L;
}

/* Unregularised maximum likelihood by Newton's method with step halving; starts at (1, 0),
 * which is the file itself when s are its log-odds. On separable data a grows until the steps
 * stop lowering the loss (at most 200 iterations). */
static void platt_fit(const double *s, const cs_dataset *d, const cs_rc_plan *pl, size_t m,
                      double *pa, double *pb)
{
    double a = 1, b = 0, L = platt_loss(s, d, pl, m, a, b);
    for (int it = 0; it < 200; it++) {
        double ga = 0, gb = 0, haa = 0, hab = 0, hbb = 0;
        for (size_t j = 0; j < d->n_samples; j++) {
            size_t r = d->sample_rows[j];
            if (!cs_rc_uses(pl, m, pl->group[r])) continue;
            double z = a * s[r] + b, p = 1 / (1 + exp(-z)), w = p * (1 - p), e = p - (d->label[r] == 1);
            ga += e * s[r];
            gb += e;
            haa += w * s[r] * s[r];
            hab += w * s[r];
            hbb += w;
        }
        double ridge = 1e-12 * (haa + hbb) + 1e-300;
        haa += ridge;
        hbb += ridge;
        double det = haa * hbb - hab * hab;
        if (!(det > 0)) break;
        double da = -(hbb * ga - hab * gb) / det, db = -(haa * gb - hab * ga) / det;
        double t = 1, L2 = L;
        int ok = 0;
        for (int h = 0; h < 60; h++, t /= 2) {
            L2 = platt_loss(s, d, pl, m, a + t * da, b + t * db);
            if (L2 <= L) { ok = 1; break; }
        }
        if (!ok) break;
        a += t * da;
        b += t * db;
        int small = fabs(t * da) + fabs(t * db) <= 1e-13 * (1 + fabs(a) + fabs(b));
        L = L2;
        if (small) break;
    }
    *pa = a;
    *pb = b;
}

cs_status cs_rc_platt(const cs_dataset *d, const cs_rc_plan *pl, double *out, cs_recal_info *info,
                      cs_error *err)
{
    double *s = malloc((d->n ? d->n : 1) * sizeof *s);
    if (!s) return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
    info->from_logits = d->logit != NULL;
    for (size_t r = 0; r < d->n; r++) {
        if (d->logit) {
            s[r] = d->logit[r * 2 + 1] - d->logit[r * 2];
        } else {
            double p0 = d->prob[r * 2], p1 = d->prob[r * 2 + 1];
            s[r] = log(p1 > LOGP_FLOOR ? p1 : LOGP_FLOOR) - log(p0 > LOGP_FLOOR ? p0 : LOGP_FLOOR);
        }
    }
    for (size_t m = 0; m < pl->n_models && m <= CS_RECAL_MAX_FOLDS; m++)
        platt_fit(s, d, pl, m, &info->param[m][0], &info->param[m][1]);
    for (size_t r = 0; r < d->n; r++) {
        const double *ab = info->param[cs_rc_model_of(pl, pl->group[r])];
        double z = ab[0] * s[r] + ab[1];
        out[r * 2 + 1] = 1 / (1 + exp(-z));
        out[r * 2] = 1 / (1 + exp(z));
    }
    free(s);
    return CS_OK;
}

/* ---- histogram binning ---- */

cs_status cs_rc_hist(const cs_dataset *d, const cs_rc_plan *pl, int bins, double *out, cs_error *err)
{
    size_t M = (size_t)bins, G = pl->n_groups, k = d->k;
    size_t *cnt = calloc(G * M, sizeof *cnt), *cor = calloc(G * M, sizeof *cor);
    double *acc = malloc(pl->n_models * M * sizeof *acc);
    if (!cnt || !cor || !acc) {
        free(cnt); free(cor); free(acc);
        return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
    }
    for (size_t j = 0; j < d->n_samples; j++) {
        size_t r = d->sample_rows[j], at = pl->group[r] * M + (size_t)cs_ubin(d->conf[r], bins);
        cnt[at]++;
        cor[at] += d->correct[r];
    }
    for (size_t m = 0; m < pl->n_models; m++)
        for (size_t b = 0; b < M; b++) {
            size_t n = 0, c = 0;
            for (size_t g = 0; g < G; g++)
                if (cs_rc_uses(pl, m, g)) { n += cnt[g * M + b]; c += cor[g * M + b]; }
            acc[m * M + b] = n ? (double)c / (double)n : NAN;
        }
    for (size_t r = 0; r < d->n; r++) {
        double a = acc[cs_rc_model_of(pl, pl->group[r]) * M + (size_t)cs_ubin(d->conf[r], bins)];
        cs_rc_rescale_top1(d->prob + r * k, out + r * k, k, isnan(a) ? d->conf[r] : a);
    }
    free(cnt); free(cor); free(acc);
    return CS_OK;
}

/* ---- isotonic regression ---- */

cs_status cs_isotonic_pav(const double *y, const double *w, size_t n, double *out, cs_error *err)
{
    double *bv = malloc((n ? n : 1) * sizeof *bv), *bw = malloc((n ? n : 1) * sizeof *bw);
    size_t *bn = malloc((n ? n : 1) * sizeof *bn);
    if (!bv || !bw || !bn) {
        free(bv); free(bw); free(bn);
        return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
    }
    size_t nb = 0;
    for (size_t i = 0; i < n; i++) {
        bv[nb] = y[i];
        bw[nb] = w ? w[i] : 1.0;
        bn[nb] = 1;
        nb++;
        /* pool while the last two blocks violate the order; the pooled value is the weighted
         * mean, which is the least-squares fit of a constant to the block */
        while (nb > 1 && bv[nb - 2] > bv[nb - 1]) {
            double W = bw[nb - 2] + bw[nb - 1];
            bv[nb - 2] = W > 0 ? (bv[nb - 2] * bw[nb - 2] + bv[nb - 1] * bw[nb - 1]) / W
                               : (bv[nb - 2] + bv[nb - 1]) / 2;
            bw[nb - 2] = W;
            bn[nb - 2] += bn[nb - 1];
            nb--;
        }
    }
    size_t o = 0;
    for (size_t b = 0; b < nb; b++)
        for (size_t i = 0; i < bn[b]; i++) out[o++] = bv[b];
    free(bv); free(bw); free(bn);
    return CS_OK;
}

double cs_rc_interp(const double *ux, const double *fy, size_t n, double x)
{
    if (x <= ux[0]) return fy[0];
    if (x >= ux[n - 1]) return fy[n - 1];
    size_t lo = 0, hi = n - 1;   /* ux[lo] <= x < ux[hi] */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (ux[mid] <= x) lo = mid;
        else hi = mid;
    }
    return fy[lo] + (x - ux[lo]) * (fy[hi] - fy[lo]) / (ux[hi] - ux[lo]);
}

uint64_t cs_rc_prob_key(double x)
{
    if (!(x > 0)) return 0;
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

cs_status cs_rc_iso_fit_rows(const cs_dataset *d, const cs_rc_plan *pl, const double *x, size_t stride,
                             const uint8_t *y, double pool_eps, double *val, cs_error *err)
{
    size_t ns = d->n_samples, n1 = ns ? ns : 1;
    uint64_t *key = malloc(n1 * sizeof *key);
    uint32_t *ord = malloc(n1 * sizeof *ord);
    double *ux = malloc(n1 * sizeof *ux), *uy = malloc(n1 * sizeof *uy), *uw = malloc(n1 * sizeof *uw);
    double *sx = malloc(n1 * sizeof *sx);
    uint8_t *sc = malloc(n1), *sg = malloc(n1);
    cs_status st = CS_OK;
    if (!key || !ord || !ux || !uy || !uw || !sx || !sc || !sg) {
        st = cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
        goto done;
    }
    for (size_t j = 0; j < ns; j++) {
        key[j] = cs_rc_prob_key(x[(size_t)d->sample_rows[j] * stride]);
        ord[j] = d->sample_rows[j];
    }
    if (cs_sort_u64(key, ord, ns)) {
        st = cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
        goto done;
    }
    /* gathered once in sorted order, so every fold below reads sequentially */
    for (size_t j = 0; j < ns; j++) {
        sx[j] = x[(size_t)ord[j] * stride];
        sc[j] = y[ord[j]];
        sg[j] = pl->group[ord[j]];
    }
    int all_samples = ns == d->n;
    /* the all-rows model (index K) is never applied, so only the applied ones are fitted */
    size_t applied = pl->cross ? pl->n_groups : 1;
    for (size_t m = 0; m < applied; m++) {
        size_t nu = 0;
        for (size_t j = 0; j < ns; j++) {
            if (!cs_rc_uses(pl, m, sg[j])) continue;
            if (nu && (pool_eps > 0 ? sx[j] - ux[nu - 1] < pool_eps : sx[j] == ux[nu - 1])) {
                uy[nu - 1] += sc[j];
                uw[nu - 1] += 1;
            } else {
                ux[nu] = sx[j];
                uy[nu] = sc[j];
                uw[nu] = 1;
                nu++;
            }
        }
        for (size_t i = 0; i < nu; i++) uy[i] /= uw[i];
        st = cs_isotonic_pav(uy, uw, nu, uy, err);
        if (st != CS_OK) goto done;
        /* samples: a merge walk of the sorted scores against the fitted points gives the
         * same interval as cs_rc_interp's binary search, in O(n) */
        size_t lo = 0;
        for (size_t j = 0; j < ns; j++) {
            if (cs_rc_model_of(pl, sg[j]) != m) continue;
            double v, xj = sx[j];
            if (xj <= ux[0]) v = uy[0];
            else if (xj >= ux[nu - 1]) v = uy[nu - 1];
            else {
                while (ux[lo + 1] <= xj) lo++;
                v = uy[lo] + (xj - ux[lo]) * (uy[lo + 1] - uy[lo]) / (ux[lo + 1] - ux[lo]);
            }
            val[ord[j]] = v;
        }
        /* TTA observations (rows that are not samples) */
        for (size_t r = 0; !all_samples && r < d->n; r++)
            if ((d->tta && d->tta[r] != 0) && cs_rc_model_of(pl, pl->group[r]) == m)
                val[r] = cs_rc_interp(ux, uy, nu, x[r * stride]);
    }
done:
    free(key); free(ord); free(ux); free(uy); free(uw); free(sx); free(sc); free(sg);
    return st;
}

cs_status cs_rc_iso(const cs_dataset *d, const cs_rc_plan *pl, double *out, cs_error *err)
{
    size_t k = d->k;
    double *newc = malloc((d->n ? d->n : 1) * sizeof *newc);
    if (!newc) return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
    cs_status st = cs_rc_iso_fit_rows(d, pl, d->conf, 1, d->correct, CS_RC_ISO_POOL_EPS, newc, err);
    if (st == CS_OK)
        for (size_t r = 0; r < d->n; r++) cs_rc_rescale_top1(d->prob + r * k, out + r * k, k, newc[r]);
    free(newc);
    return st;
}
