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

cs_cases_job *cs_cases_job_new(const cs_dataset *d, const cs_settings *s, cs_error *err)
{
    cs_cases_job *j = cs_job_kind_new(sizeof *j, &ops, d && s, err);
    if (!j) return NULL;
    j->data = d;
    j->settings = *s;
    return j;
}

CS_JOB_KIND_OF(cs_cases_job, ops)
