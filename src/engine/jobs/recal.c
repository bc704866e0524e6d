/* Backend job: fit and apply a recalibration (calscope/jobs/recal.h). */
#include "calscope/jobs/recal.h"

#include <stdlib.h>
#include <time.h>

#include "job_kind.h"

static double seconds_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) * 1e-9;
}

static void run(cs_job *job, const cs_run *r)
{
    cs_recal_job *j = (cs_recal_job *)(void *)job;
    cs_recal_options o = j->opts;
    o.fit_mask = NULL;
    o.split_fit = NULL;
    o.cancel = r->cancel;
    if (o.threads <= 0) o.threads = r->threads;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    j->dataset = cs_recal_apply(j->data, j->method, &o, &j->info, &job->err);
    j->fit_seconds = seconds_since(&t0);
    job->status = j->dataset ? CS_OK : job->err.code;
}

static void job_free(cs_job *job)
{
    cs_recal_job *j = (cs_recal_job *)(void *)job;
    cs_dataset_free(j->dataset);
    cs_recal_info_clear(&j->info);
    free(j);
}

CS_JOB_USES_DATA(cs_recal_job)

static const cs_job_ops ops = { "recalibrating", CS_COST_CHEAP, run, job_free, cs_recal_job_uses };

cs_recal_job *cs_recal_job_new(const cs_dataset *d, int method, cs_error *err)
{
    cs_recal_job *j = cs_job_kind_new(sizeof *j, &ops, d != NULL, err);
    if (!j) return NULL;
    j->data = d;
    j->method = method;
    cs_recal_options_default(&j->opts);
    return j;
}

CS_JOB_KIND_OF(cs_recal_job, ops)
