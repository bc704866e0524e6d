/* Backend job: Likert intervals (calscope/jobs/likert.h). */
#include "calscope/jobs/likert.h"

#include <stdlib.h>

#include "job_kind.h"

static void run(cs_job *job, const cs_run *r)
{
    cs_likert_job *j = (cs_likert_job *)(void *)job;
    size_t nc = j->n_cuts > CS_LIKERT_MAX + 1 ? CS_LIKERT_MAX + 1 : j->n_cuts;
    job->status = cs_likert_compute(j->data, &j->settings, nc ? j->cuts : NULL, nc ? nc : 4,
                                    r->cancel, &j->result, &job->err);
}

CS_JOB_USES_DATA(cs_likert_job)

static const cs_job_ops ops = { "likert", CS_COST_CHEAP, run, cs_job_free_plain, cs_likert_job_uses };

CS_JOB_NEW_DATA_SETTINGS(cs_likert_job, ops)

CS_JOB_KIND_OF(cs_likert_job, ops)
