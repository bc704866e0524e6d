/* Backend job: load a file (calscope/jobs/load.h). */
#include "calscope/jobs/load.h"

#include <stdlib.h>
#include <string.h>

#include "job_kind.h"

/* The loader's progress callback writes straight into the job's progress counter. */
static void load_progress(void *ctx, double fraction)
{
    atomic_int *ppm = ctx;
    int v = (int)(fraction * 1e6);
    if (ppm) atomic_store(ppm, v < 0 ? 0 : (v > 1000000 ? 1000000 : v));
}

static void run(cs_job *job, const cs_run *r)
{
    cs_load_job *j = (cs_load_job *)(void *)job;
    cs_load_options o = j->load;
    o.progress = load_progress;
    o.progress_ctx = r->progress_ppm;
    o.cancel = r->cancel;
    j->dataset = cs_load_file(j->path, &o, &j->summary, &job->err);
    job->status = j->dataset ? CS_OK : job->err.code;
}

static void job_free(cs_job *job)
{
    cs_load_job *j = (cs_load_job *)(void *)job;
    free(j->path);
    cs_dataset_free(j->dataset);
    cs_load_summary_free(&j->summary);
    free(j);
}

static const cs_job_ops ops = { "loading", CS_COST_CHEAP, run, job_free, cs_job_uses_none };

cs_load_job *cs_load_job_new(const char *path, const cs_load_options *o, cs_error *err)
{
    cs_load_job *j = cs_job_kind_new(sizeof *j, &ops, path != NULL, err);
    if (!j) return NULL;
    size_t len = strlen(path);
    j->path = cs_backend_calloc(len + 1, 1);
    if (!j->path) {
        free(j);
        cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
        return NULL;
    }
    memcpy(j->path, path, len);
    if (o) j->load = *o;
    else cs_load_options_default(&j->load);
    return j;
}

CS_JOB_KIND_OF(cs_load_job, ops)
