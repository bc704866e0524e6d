/* The rules of every resampling call, on rows or on statistics files: how many resamples a
 * call may ask for, what a curve's options must hold, how a curve starts, and how its table of
 * resampled values becomes each point's statistics. Declared in ci_internal.h. */
#include "ci_internal.h"

#include <math.h>
#include <stdlib.h>

cs_status cs_resample_repeats_check(int repeats, cs_error *err)
{
    if (repeats < 1 || repeats > CS_RESAMPLE_REPEATS_MAX)
        return cs_error_set(err, CS_EUSAGE, 0, 0, "repeats must be between 1 and %d (got %d)",
                            CS_RESAMPLE_REPEATS_MAX, repeats);
    return CS_OK;
}

cs_status cs_curve_options_check(const cs_curve_options *o, cs_error *err)
{
    if (o->n_points < 1 || o->n_points > CS_CURVE_MAX_POINTS)
        return cs_error_set(err, CS_EUSAGE, 0, 0, "a curve needs 1 to %d points", CS_CURVE_MAX_POINTS);
    if (!(o->metrics & ((1u << CS_METRIC_COUNT) - 1)))
        return cs_error_set(err, CS_EUSAGE, 0, 0, "no metric selected for the curve");
    return cs_resample_repeats_check(o->repeats, err);
}

cs_status cs_curve_fractions_check(const cs_curve_options *o, cs_error *err)
{
    for (size_t i = 0; i < o->n_points; i++)
        if (!(o->x[i] > 0 && o->x[i] <= 1))
            return cs_error_set(err, CS_EUSAGE, 0, 0, "fraction %g is not in (0, 1]", o->x[i]);
    return CS_OK;
}

cs_curve *cs_curve_start(cs_curve_kind kind, const cs_curve_options *o, size_t n_points,
                         unsigned metrics, size_t n_samples, cs_error *err)
{
    cs_curve *c = calloc(1, sizeof *c);
    if (c) c->points = calloc(n_points ? n_points : 1, sizeof *c->points);
    if (!c || !c->points) {
        free(c);
        cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
        return NULL;
    }
    c->kind = kind;
    c->repeats = o->repeats;
    c->replace = kind == CS_CURVE_BINS ? 1 : o->replace;   /* a bins curve always draws with */
    c->metrics = metrics;
    c->n_samples = n_samples;
    c->n_points = n_points;
    c->stable_metric = -1;
    c->stable_first = c->stable_last = -1;
    c->sweep_bins = NAN;
    return c;
}

cs_status cs_curve_reduce(cs_curve *c, const double *values, size_t R, cs_error *err)
{
    double *col = malloc((R ? R : 1) * sizeof *col), *tmp = malloc((R ? R : 1) * sizeof *tmp);
    if (!col || !tmp) {
        free(col);
        free(tmp);
        return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
    }
    for (size_t pt = 0; pt < c->n_points; pt++)
        for (int m = 0; m < CS_METRIC_COUNT; m++) {
            cs_stat *s = &c->points[pt].stat[m];
            if (!(c->metrics & CS_METRIC_BIT(m))) {
                *s = (cs_stat){ NAN, NAN, NAN, NAN, NAN, 0 };
                continue;
            }
            for (size_t r = 0; r < R; r++) col[r] = values[(pt * R + r) * CS_METRIC_COUNT + (size_t)m];
            cs_stat_compute(col, R, c->points[pt].full[m], tmp, s);
        }
    free(col);
    free(tmp);
    return CS_OK;
}
