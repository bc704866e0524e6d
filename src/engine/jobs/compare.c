/* Backend job: paired comparison of two files (calscope/jobs/compare.h). */
#include "calscope/jobs/compare.h"

#include <stdlib.h>

#include "job_kind.h"

static void run(cs_job *job, const cs_run *r)
{
    cs_compare_job *j = (cs_compare_job *)(void *)job;
    job->status = cs_compare_run(j->a, j->b, &j->settings, j->metrics ? j->metrics : CS_METRICS_DEFAULT,
                                 j->repeats > 0 ? j->repeats : 1000, j->seed, r, &j->result,
                                 &job->err);
}

static int uses(const cs_job *job, const cs_dataset *d)
{
    const cs_compare_job *j = (const cs_compare_job *)(const void *)job;
    return j->a == d || j->b == d;
}

static const cs_job_ops ops = { "compare", CS_COST_LONG, run, cs_job_free_plain, uses };

cs_compare_job *cs_compare_job_new(const cs_dataset *a, const cs_dataset *b, const cs_settings *s,
                                   cs_error *err)
{
    cs_compare_job *j = cs_job_kind_new(sizeof *j, &ops, a && b && s, err);
    if (!j) return NULL;
    j->a = a;
    j->b = b;
    j->settings = *s;
    return j;
}

CS_JOB_KIND_OF(cs_compare_job, ops)
