/* Backend job: a variance curve (calscope/jobs/curve.h). */
#include "calscope/jobs/curve.h"

#include <stdlib.h>

#include "job_kind.h"

static void run(cs_job *job, const cs_run *r)
{
    cs_curve_job *j = (cs_curve_job *)(void *)job;
    if (j->kind == CS_CURVE_BINS) {
        j->result = cs_bins_curve(j->data, &j->settings, &j->curve, r, &job->err);
    } else {
        cs_prepared *p = cs_prepare(j->data, &j->settings, &job->err);
        if (p) j->result = cs_size_curve(p, &j->curve, r, &job->err);
        cs_prepared_free(p);
    }
    job->status = j->result ? CS_OK : job->err.code;
}

static void job_free(cs_job *job)
{
    cs_curve_job *j = (cs_curve_job *)(void *)job;
    cs_curve_free(j->result);
    free(j);
}

CS_JOB_USES_DATA(cs_curve_job)

static const cs_job_ops ops = { "curve", CS_COST_LONG, run, job_free, cs_curve_job_uses };

cs_curve_job *cs_curve_job_new(cs_curve_kind kind, const cs_dataset *d, const cs_settings *s,
                               const cs_curve_options *o, cs_error *err)
{
    cs_curve_job *j = cs_job_kind_new(sizeof *j, &ops, d && s && o, err);
    if (!j) return NULL;
    j->kind = kind;
    j->data = d;
    j->settings = *s;
    j->curve = *o;
    return j;
}

CS_JOB_KIND_OF(cs_curve_job, ops)
