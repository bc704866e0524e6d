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

CS_JOB_USES_DATA(cs_topk_job)

static const cs_job_ops ops = { "top-k", CS_COST_CHEAP, run, cs_job_free_plain, cs_topk_job_uses };

CS_JOB_NEW_DATA_SETTINGS(cs_topk_job, ops)

CS_JOB_KIND_OF(cs_topk_job, ops)
