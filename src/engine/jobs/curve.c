/* Backend job: a variance curve (calscope/jobs/curve.h). */
#include "calscope/jobs/curve.h"

#include <stdlib.h>

#include "calscope/measure.h"

#include "job_kind.h"

static void run(cs_job *job, const cs_run *r)
{
    cs_curve_job *j = (cs_curve_job *)(void *)job;
    if (j->data->stats) {
        /* a statistics dataset resamples cases: its curves come with its measurement */
        cs_measure_request q = { 0 };
        q.parts = CS_MEASURE_CURVE;
        q.curve_kind = j->kind;
        q.curve = j->curve;
        cs_measurement m;
        job->status = cs_measure(j->data, &j->settings, &q, r, &m, &job->err);
        if (job->status == CS_OK) {
            j->result = m.curve;
            m.curve = NULL;
            if (!j->result) job->status = cs_error_set(&job->err, CS_EEMPTY, 0, 0, "no curve to draw");
        }
        cs_measurement_free(&m);
        return;
    }
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
