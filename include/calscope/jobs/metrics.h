/* calscope backend job: the metrics of one dataset under one settings, measured by cs_measure
 * (the report's routine): the values, and bootstrap intervals when ci_repeats > 0. Cheap without
 * intervals, long with them. Cancellable. The job borrows data; its result owns the bins (freed by
 * cs_job_free). */
#ifndef CALSCOPE_JOBS_METRICS_H
#define CALSCOPE_JOBS_METRICS_H

#include "calscope/backend.h"
#include "calscope/resample.h"
#include "calscope/metrics.h"

typedef struct cs_metrics_job {
    cs_job base;
    /* request */
    const cs_dataset *data;    /* borrowed */
    cs_settings settings;
    unsigned want;             /* CS_WANT_* (0 = CS_WANT_ALL) */
    unsigned metrics;          /* interval metric mask (0 = CS_METRICS_DEFAULT) */
    int ci_repeats;            /* set by cs_metrics_job_ci: bootstrap resamples, 0 = none */
    int ci_method;             /* cs_ci_method of the intervals (0 = percentile) */
    uint64_t seed;             /* bootstrap seed */
    /* result */
    cs_result result;          /* owned bins */
    int has_ci;
    cs_ci ci;
} cs_metrics_job;

/* Metrics of d under s. NULL with err: CS_EUSAGE (no dataset), CS_ENOMEM. */
cs_metrics_job *cs_metrics_job_new(const cs_dataset *d, const cs_settings *s, cs_error *err);

/* Asks for intervals too: `repeats` resamples (0 = none), cs_ci_method `method`, `seed`. With
 * repeats > 0 the job is of the long cost class (it resamples). */
void cs_metrics_job_ci(cs_metrics_job *j, int repeats, int method, uint64_t seed);

/* j as a metrics job, or NULL. */
const cs_metrics_job *cs_metrics_job_of(const cs_job *j);

#endif
