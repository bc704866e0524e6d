/* Backend job: metrics of one dataset (calscope/jobs/metrics.h). */
#include "calscope/jobs/metrics.h"

#include <stdlib.h>
#include <string.h>

#include "calscope/measure.h"

#include "job_kind.h"

/* The dashboard's values and intervals come from the report's routine (calscope/measure.h),
 * so the two front ends cannot drift apart. */
static void run(cs_job *job, const cs_run *r)
{
    cs_metrics_job *j = (cs_metrics_job *)(void *)job;
    cs_measure_request q = { 0 };
    q.want = j->want;
    if (j->ci_repeats > 0) {
        q.parts = CS_MEASURE_CI;
        q.ci_repeats = j->ci_repeats;
        q.ci_method = (cs_ci_method)j->ci_method;
        q.ci_metrics = j->metrics;
        q.seed = j->seed;
    }
    cs_measurement m;
    job->status = cs_measure(j->data, &j->settings, &q, r, &m, &job->err);
    if (m.evaluated) {           /* the values are the job's (moved out of m) */
        j->result = m.result;
        memset(&m.result, 0, sizeof m.result);
    }
    j->has_ci = job->status == CS_OK && m.has_ci;
    if (j->has_ci) j->ci = m.ci;
    cs_measurement_free(&m);
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
