/* The small-sample rule (calscope/metrics.h, docs/metrics.md "Too few to say"): the one place
 * that decides when a resampled number rests on too few samples or cases to claim anything. */
#include "calscope/metrics.h"
#include "mx.h"

#include <math.h>

int cs_too_few(size_t units, double bins, int by_case)
{
    if (by_case) return units < CS_TOO_FEW_CASES;
    double per_bin = bins > 0 ? (double)units / bins : (double)units;
    return !(per_bin >= CS_TOO_FEW_PER_BIN);
}

size_t cs_too_few_min(double bins, int by_case)
{
    if (by_case) return CS_TOO_FEW_CASES;
    return (size_t)ceil(CS_TOO_FEW_PER_BIN * (bins > 0 ? bins : 1.0));
}

double cs_too_few_bins(const cs_settings *s)
{
    return s->binning == CS_BIN_KDTREE ? 1.0 / s->gamma : (double)s->bins;
}

double cs_prepared_too_few_bins(const cs_prepared *p)
{
    return cs_too_few_bins(&p->s);
}
