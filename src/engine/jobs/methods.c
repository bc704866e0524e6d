/* Backend job: the methods table (calscope/jobs/methods.h). */
#include "calscope/jobs/methods.h"

#include <stdlib.h>

#include "job_kind.h"

static void run(cs_job *job, const cs_run *r)
{
    cs_methods_job *j = (cs_methods_job *)(void *)job;
    job->status = cs_methods_run(j->data, j->n, &j->settings, &j->opts, r, &j->result, &job->err);
}

static void job_free(cs_job *job)
{
    cs_methods_job *j = (cs_methods_job *)(void *)job;
    cs_methods_free(&j->result);
    free(j);
}

static int uses(const cs_job *job, const cs_dataset *d)
{
    const cs_methods_job *j = (const cs_methods_job *)(const void *)job;
    for (size_t i = 0; i < j->n; i++)
        if (j->data[i] == d) return 1;
    return 0;
}

static const cs_job_ops ops = { "methods", CS_COST_LONG, run, job_free, uses };

cs_methods_job *cs_methods_job_new(const cs_dataset *const *d, size_t n, const cs_settings *s,
                                   cs_error *err)
{
    int complete = d && s && n >= 1 && n <= CS_METHODS_JOB_MAX;
    for (size_t i = 0; complete && i < n; i++) complete = d[i] != NULL;
    cs_methods_job *j = cs_job_kind_new(sizeof *j, &ops, complete, err);
    if (!j) return NULL;
    for (size_t i = 0; i < n; i++) j->data[i] = d[i];
    j->n = n;
    j->settings = *s;
    return j;
}

CS_JOB_KIND_OF(cs_methods_job, ops)
