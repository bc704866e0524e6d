/* Backend job: per-case metrics (calscope/jobs/cases.h). */
#include "calscope/jobs/cases.h"

#include <stdlib.h>
#include <string.h>

#include "calscope/measure.h"

#include "job_kind.h"

static void run(cs_job *job, const cs_run *r)
{
    cs_cases_job *j = (cs_cases_job *)(void *)job;
    if (!j->data->stats) {
        job->status = cs_case_metrics_compute(j->data, &j->settings, r->cancel, &j->result, &job->err);
        return;
    }
    /* a statistics dataset: its per-case metrics come with its measurement (calscope/measure.h) */
    cs_measure_request q = { 0 };
    q.parts = CS_MEASURE_CASES;
    cs_measurement m;
    job->status = cs_measure(j->data, &j->settings, &q, r, &m, &job->err);
    if (job->status == CS_OK && m.has_cases) {
        j->result = m.cases;
        memset(&m.cases, 0, sizeof m.cases);
    } else if (job->status == CS_OK) {
        job->status = cs_error_set(&job->err, CS_EEMPTY, 0, 0, "no case to measure");
    }
    cs_measurement_free(&m);
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
