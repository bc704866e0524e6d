/* calscope backend job: a variance curve (cs_size_curve / cs_bins_curve). Long; cancellable
 * between replicates. Borrows data; owns the curve (freed by cs_job_free). */
#ifndef CALSCOPE_JOBS_CURVE_H
#define CALSCOPE_JOBS_CURVE_H

#include "calscope/backend.h"
#include "calscope/resample.h"

typedef struct cs_curve_job {
    cs_job base;
    /* request */
    cs_curve_kind kind;        /* CS_CURVE_SIZE or CS_CURVE_BINS */
    const cs_dataset *data;    /* borrowed */
    cs_settings settings;
    cs_curve_options curve;
    /* result */
    cs_curve *result;          /* owned */
} cs_curve_job;

/* A curve of d under s with options o. NULL with err: CS_EUSAGE (no dataset), CS_ENOMEM. */
cs_curve_job *cs_curve_job_new(cs_curve_kind kind, const cs_dataset *d, const cs_settings *s,
                               const cs_curve_options *o, cs_error *err);

/* j as a curve job, or NULL. */
const cs_curve_job *cs_curve_job_of(const cs_job *j);

#endif
