/* calscope backend job: per-case metrics of a segmentation file (cs_case_metrics_compute).
 * Cheap; cancellable between cases. Borrows data; owns the result's arrays. */
#ifndef CALSCOPE_JOBS_CASES_H
#define CALSCOPE_JOBS_CASES_H

#include "calscope/backend.h"
#include "calscope/cases.h"

typedef struct cs_cases_job {
    cs_job base;
    /* request */
    const cs_dataset *data;    /* borrowed */
    cs_settings settings;
    /* result */
    cs_case_metrics result;    /* owned (freed by cs_job_free) */
} cs_cases_job;

/* Per-case metrics of d under s. NULL with err: CS_EUSAGE (no dataset), CS_ENOMEM. */
cs_cases_job *cs_cases_job_new(const cs_dataset *d, const cs_settings *s, cs_error *err);

/* j as a cases job, or NULL. */
const cs_cases_job *cs_cases_job_of(const cs_job *j);

#endif
