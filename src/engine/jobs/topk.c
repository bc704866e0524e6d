/* Backend job: top-k ECE bars (calscope/jobs/topk.h). */
#include "calscope/jobs/topk.h"

#include <stdlib.h>

#include "calscope/topk.h"
#include "job_kind.h"

static void run(cs_job *job, const cs_run *r)
{
    cs_topk_job *j = (cs_topk_job *)(void *)job;
    size_t n = j->n > CS_TOPK_JOB_MAX ? CS_TOPK_JOB_MAX : j->n;
    job->status = cs_topk_bars(j->data, &j->settings, j->k, n, r->cancel, j->value, &job->err);
}

static void job_free(cs_job *job)
{
    free(job);
}

CS_JOB_USES_DATA(cs_topk_job)

static const cs_job_ops ops = { "top-k", CS_COST_CHEAP, run, job_free, cs_topk_job_uses };

cs_topk_job *cs_topk_job_new(const cs_dataset *d, const cs_settings *s, cs_error *err)
{
    cs_topk_job *j = cs_job_kind_new(sizeof *j, &ops, d && s, err);
    if (!j) return NULL;
    j->data = d;
    j->settings = *s;
    return j;
}

CS_JOB_KIND_OF(cs_topk_job, ops)
