/* calscope backend job: the Likert intervals (cs_likert_compute). Cheap; cancellable between
 * intervals. Borrows data; plain data otherwise. */
#ifndef CALSCOPE_JOBS_LIKERT_H
#define CALSCOPE_JOBS_LIKERT_H

#include "calscope/backend.h"
#include "calscope/likert.h"

typedef struct cs_likert_job {
    cs_job base;
    /* request */
    const cs_dataset *data;    /* borrowed */
    cs_settings settings;
    double cuts[CS_LIKERT_MAX + 1];
    size_t n_cuts;             /* 0 = cs_likert_default_cuts */
    /* result */
    cs_likert result;
} cs_likert_job;

/* Likert intervals of d under s. NULL with err: CS_EUSAGE (no dataset), CS_ENOMEM. */
cs_likert_job *cs_likert_job_new(const cs_dataset *d, const cs_settings *s, cs_error *err);

/* j as a Likert job, or NULL. */
const cs_likert_job *cs_likert_job_of(const cs_job *j);

#endif
