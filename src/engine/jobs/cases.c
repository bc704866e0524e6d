/* Backend job: per-case metrics (calscope/jobs/cases.h). */
#include "calscope/jobs/cases.h"

#include <stdlib.h>

#include "job_kind.h"

static void run(cs_job *job, const cs_run *r)
{
    cs_cases_job *j = (cs_cases_job *)(void *)job;
    job->status = cs_case_metrics_compute(j->data, &j->settings, r->cancel, &j->result, &job->err);
}

static void job_free(cs_job *job)
{
    cs_cases_job *j = (cs_cases_job *)(void *)job;
    cs_case_metrics_free(&j->result);
    free(j);
}

CS_JOB_USES_DATA(cs_cases_job)

static const cs_job_ops ops = { "cases", CS_COST_CHEAP, run, job_free, cs_cases_job_uses };

CS_JOB_NEW_DATA_SETTINGS(cs_cases_job, ops)

CS_JOB_KIND_OF(cs_cases_job, ops)
