/* The interval formulas of cs_bootstrap_interval (see calscope/resample.h and ci_internal.h).
 * They follow scipy.stats.bootstrap (scipy 1.10, `_bca_interval`) so that the numbers can be
 * checked against it: z0 from the share of resamples below the estimate with ties counting
 * half, the acceleration from the jackknife skewness, the endpoints as numpy's "linear"
 * quantiles of the resamples. */
#include "ci_internal.h"

#include <math.h>
#include <string.h>

#include "calscope/resample.h"

static const char *const method_names[CS_CI_METHOD_COUNT] = { "percentile", "basic", "bca" };

const char *cs_ci_method_name(int method)
{
    return method >= 0 && method < CS_CI_METHOD_COUNT ? method_names[method] : NULL;
}

int cs_ci_method_from_name(const char *name)
{
    for (int i = 0; i < CS_CI_METHOD_COUNT; i++)
        if (strcmp(name, method_names[i]) == 0)
            return i;
    return -1;
}

int cs_ci_excludes_value(const cs_ci *ci, int id)
{
    if (id < 0 || id >= CS_METRIC_COUNT || !(ci->metrics & CS_METRIC_BIT(id)))
        return 0;
    double v = ci->value[id], lo = ci->lo[id], hi = ci->hi[id];
    return isfinite(v) && isfinite(lo) && isfinite(hi) && (v < lo || v > hi);
}

static int needs_full(size_t draw, size_t units, unsigned metrics, unsigned ok, int id)
{
    return id >= 0 && id < CS_METRIC_COUNT && (metrics & CS_METRIC_BIT(id)) && draw < units &&
           !(ok & CS_METRIC_BIT(id));
}

int cs_ci_needs_full_draws(const cs_ci *ci, int id)
{
    return needs_full(ci->draw_size, ci->units, ci->metrics, ci->m_of_n, id);
}

int cs_compare_needs_full_draws(const cs_compare *c, int id)
{
    unsigned mask = 0;
    for (size_t i = 0; i < c->n_entries; i++) mask |= CS_METRIC_BIT(c->entries[i].metric);
    return needs_full(c->draw_size, c->n_pairs, mask, c->m_of_n, id);
}

double cs_norm_cdf(double x)
{
    return 0.5 * erfc(-x / sqrt(2.0));
}

double cs_norm_ppf(double p)
{
    /* P. J. Acklam's algorithm (2003), then one Halley step against erfc */
    static const double a[] = { -3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                                1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00 };
    static const double b[] = { -5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                                6.680131188771972e+01, -1.328068155288572e+01 };
    static const double c[] = { -7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                                -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00 };
    static const double d[] = { 7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                                3.754408661907416e+00 };
    if (!(p > 0)) return p == 0 ? -INFINITY : NAN;
    if (!(p < 1)) return p == 1 ? INFINITY : NAN;
    double x;
    if (p < 0.02425) {
        double q = sqrt(-2 * log(p));
        x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    } else if (p > 1 - 0.02425) {
        double q = sqrt(-2 * log1p(-p));
        x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    } else {
        double q = p - 0.5, r = q * q;
        x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
            (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
    }
    double e = cs_norm_cdf(x) - p;
    double u = e * sqrt(2 * M_PI) * exp(x * x / 2);
    return x - u / (1 + x * u / 2);
}

void cs_ci_bca(const double *sorted, size_t n, double theta, const double *jack, size_t g,
               double *lo, double *hi, double *z0, double *a)
{
    *lo = *hi = *z0 = *a = NAN;
    if (n == 0 || g == 0 || !isfinite(theta))
        return;
    size_t below = 0, at_or_below = 0;
    for (size_t i = 0; i < n; i++) {
        below += sorted[i] < theta;
        at_or_below += sorted[i] <= theta;
    }
    *z0 = cs_norm_ppf((double)(below + at_or_below) / (2.0 * (double)n));
    double mean = 0;
    for (size_t j = 0; j < g; j++) mean += jack[j];
    mean /= (double)g;
    double s2 = 0, s3 = 0;
    for (size_t j = 0; j < g; j++) {
        double u = mean - jack[j];
        s2 += u * u;
        s3 += u * u * u;
    }
    *a = s2 > 0 ? s3 / (6.0 * pow(s2, 1.5)) : 0.0;
    if (!isfinite(*z0))
        return;   /* every resample on one side of theta: no correction can be estimated */
    double z = cs_norm_ppf(0.025);
    double n1 = *z0 + z, n2 = *z0 - z;
    double a1 = cs_norm_cdf(*z0 + n1 / (1 - *a * n1));
    double a2 = cs_norm_cdf(*z0 + n2 / (1 - *a * n2));
    *lo = cs_quantile_sorted(sorted, n, a1);
    *hi = cs_quantile_sorted(sorted, n, a2);
}
