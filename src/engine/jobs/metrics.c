/* Backend job: metrics of one dataset (calscope/jobs/metrics.h). */
#include "calscope/jobs/metrics.h"

#include <stdlib.h>

#include "job_kind.h"

static void run(cs_job *job, const cs_run *r)
{
    cs_metrics_job *j = (cs_metrics_job *)(void *)job;
    cs_prepared *p = cs_prepare(j->data, &j->settings, &job->err);
    if (!p) {
        job->status = job->err.code;
        return;
    }
    job->status = cs_evaluate(p, NULL, 0, j->want ? j->want : CS_WANT_ALL, r->cancel, &j->result,
                              &job->err);
    if (job->status == CS_OK && j->ci_repeats > 0) {
        job->status = cs_bootstrap_interval(p, j->metrics ? j->metrics : CS_METRICS_DEFAULT,
                                            j->ci_repeats, j->seed, (cs_ci_method)j->ci_method, r,
                                            &j->ci, &job->err);
        j->has_ci = job->status == CS_OK;
    }
    cs_prepared_free(p);
}

static void job_free(cs_job *job)
{
    cs_metrics_job *j = (cs_metrics_job *)(void *)job;
    cs_result_free(&j->result);
    free(j);
}

CS_JOB_USES_DATA(cs_metrics_job)

static const cs_job_ops ops = { "metrics", CS_COST_CHEAP, run, job_free, cs_metrics_job_uses };

/* With intervals the job resamples: the scheduler must not let it hold up a plain recompute. */
static const cs_job_ops ops_ci = { "metrics", CS_COST_LONG, run, job_free, cs_metrics_job_uses };

cs_metrics_job *cs_metrics_job_new(const cs_dataset *d, const cs_settings *s, cs_error *err)
{
    cs_metrics_job *j = cs_job_kind_new(sizeof *j, &ops, d != NULL, err);
    if (!j) return NULL;
    j->data = d;
    if (s) j->settings = *s;
    else cs_settings_default(&j->settings);
    return j;
}

void cs_metrics_job_ci(cs_metrics_job *j, int repeats, int method, uint64_t seed)
{
    j->ci_repeats = repeats > 0 ? repeats : 0;
    j->ci_method = method;
    j->seed = seed;
    j->base.ops = repeats > 0 ? &ops_ci : &ops;
}

const cs_metrics_job *cs_metrics_job_of(const cs_job *j)
{
    return j && (j->ops == &ops || j->ops == &ops_ci) ? (const cs_metrics_job *)(const void *)j : NULL;
}
