/* Backend job: the compat report and the diagram's per-bin moved counts (calscope/jobs/compat.h). */
#include "calscope/jobs/compat.h"

#include <stdlib.h>

#include "engine/num/ubin.h"   /* the one uniform-bin rule */
#include "job_kind.h"

/* Per library, how many of its moved samples calscope puts in each of its M uniform bins
 * (top1 lens, uniform binning: the metrics' bins). */
static void count_bins(cs_compat_job *j)
{
    const cs_compat_report *c = &j->report;
    if (c->lens != CS_LENS_TOP1 || c->binning != CS_BIN_UNIFORM || c->bins <= 0 || !c->rows) return;
    int m = c->bins;
    j->bin_moved = cs_backend_calloc(CS_COMPAT_COUNT * (size_t)m, sizeof *j->bin_moved);
    if (!j->bin_moved) {
        j->base.status = cs_error_set(&j->base.err, CS_ENOMEM, 0, 0, "out of memory");
        return;
    }
    for (size_t s = 0; s < c->n; s++) {
        size_t bin = (size_t)cs_ubin(j->data->conf[c->rows[s]], m);
        for (int l = 0; l < CS_COMPAT_COUNT; l++)
            if ((c->mask & (1u << l)) && c->lib[l].moved_flag && c->lib[l].moved_flag[s])
                j->bin_moved[(size_t)l * (size_t)m + bin]++;
    }
}

static void run(cs_job *job, const cs_run *r)
{
    cs_compat_job *j = (cs_compat_job *)(void *)job;
    /* the engine polls the flag before each library (one pass over the data each) */
    if (cs_job_stop_if_cancelled(job, r)) return;
    job->status = cs_compat_run_cancellable(j->data, &j->settings, CS_COMPAT_ALL_MASK, r->cancel,
                                            &j->report, &job->err);
    if (job->status == CS_OK && !cs_job_stop_if_cancelled(job, r)) count_bins(j);
}

static void job_free(cs_job *job)
{
    cs_compat_job *j = (cs_compat_job *)(void *)job;
    cs_compat_report_free(&j->report);
    free(j->bin_moved);
    free(j);
}

CS_JOB_USES_DATA(cs_compat_job)

static const cs_job_ops ops = { "compat", CS_COST_CHEAP, run, job_free, cs_compat_job_uses };

CS_JOB_NEW_DATA_SETTINGS(cs_compat_job, ops)

CS_JOB_KIND_OF(cs_compat_job, ops)
