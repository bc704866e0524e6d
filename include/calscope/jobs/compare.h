/* calscope backend job: paired comparison of two files (cs_compare_run). Long; cancellable
 * between resamples. Borrows both datasets; plain data otherwise. */
#ifndef CALSCOPE_JOBS_COMPARE_H
#define CALSCOPE_JOBS_COMPARE_H

#include "calscope/backend.h"
#include "calscope/curves.h"

typedef struct cs_compare_job {
    cs_job base;
    /* request */
    const cs_dataset *a, *b;   /* borrowed: A (the reference) and B */
    cs_settings settings;
    unsigned metrics;          /* 0 = CS_METRICS_DEFAULT */
    int repeats;               /* resamples (0 = 1000) */
    uint64_t seed;
    /* result */
    cs_compare result;
} cs_compare_job;

/* A against b under s. NULL with err: CS_EUSAGE (a dataset missing), CS_ENOMEM. */
cs_compare_job *cs_compare_job_new(const cs_dataset *a, const cs_dataset *b, const cs_settings *s,
                                   cs_error *err);

/* j as a compare job, or NULL. */
const cs_compare_job *cs_compare_job_of(const cs_job *j);

#endif
