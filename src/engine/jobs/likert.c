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

static void job_free(cs_job *job)
{
    free(job);
}

CS_JOB_USES_DATA(cs_likert_job)

static const cs_job_ops ops = { "likert", CS_COST_CHEAP, run, job_free, cs_likert_job_uses };

cs_likert_job *cs_likert_job_new(const cs_dataset *d, const cs_settings *s, cs_error *err)
{
    cs_likert_job *j = cs_job_kind_new(sizeof *j, &ops, d && s, err);
    if (!j) return NULL;
    j->data = d;
    j->settings = *s;
    return j;
}

CS_JOB_KIND_OF(cs_likert_job, ops)
