/* calscope backend job for tests and demos: sleeps ms milliseconds in 1 ms steps, polling its
 * cancel flag and publishing progress; computes nothing. Cheap (for the scheduler's order),
 * unless made long with cs_sleep_job_new_long. */
#ifndef CALSCOPE_JOBS_SLEEP_H
#define CALSCOPE_JOBS_SLEEP_H

#include "calscope/backend.h"

typedef struct cs_sleep_job {
    cs_job base;
    unsigned ms;
} cs_sleep_job;

/* NULL with err (CS_ENOMEM) when out of memory. */
cs_sleep_job *cs_sleep_job_new(unsigned ms, cs_error *err);
/* The same sleep in cost class CS_COST_LONG. */
cs_sleep_job *cs_sleep_job_new_long(unsigned ms, cs_error *err);

/* j as a sleep job (either class), or NULL. */
const cs_sleep_job *cs_sleep_job_of(const cs_job *j);

#endif
