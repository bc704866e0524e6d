/* calscope backend job: the methods table (cs_methods_run) of up to CS_METHODS_JOB_MAX
 * datasets. Long; cancellable. Borrows the datasets; owns the table (freed by cs_job_free). */
#ifndef CALSCOPE_JOBS_METHODS_H
#define CALSCOPE_JOBS_METHODS_H

#include "calscope/backend.h"
#include "calscope/methods.h"

#define CS_METHODS_JOB_MAX 18   /* the dashboard's 8 files and its 10 recalibrations */

typedef struct cs_methods_job {
    cs_job base;
    /* request */
    const cs_dataset *data[CS_METHODS_JOB_MAX];  /* borrowed */
    size_t n;
    cs_settings settings;
    cs_methods_options opts;
    /* result */
    cs_methods result;         /* owned */
} cs_methods_job;

/* The table of d[0..n) (2 <= n <= CS_METHODS_JOB_MAX) under s. NULL with err: CS_EUSAGE (bad
 * n or a dataset missing), CS_ENOMEM. */
cs_methods_job *cs_methods_job_new(const cs_dataset *const *d, size_t n, const cs_settings *s,
                                   cs_error *err);

/* j as a methods job, or NULL. */
const cs_methods_job *cs_methods_job_of(const cs_job *j);

#endif
