/* Backend job for tests and demos: a sleep that polls its cancel flag (engine/jobs/sleep.h). */
#include "engine/jobs/sleep.h"

#include <stdlib.h>
#include <time.h>

#include "job_kind.h"

static void run(cs_job *job, const cs_run *r)
{
    const cs_sleep_job *j = (const cs_sleep_job *)(const void *)job;
    for (unsigned t = 0; t < j->ms; t++) {
        if (cs_job_stop_if_cancelled(job, r)) return;
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
        if (r->progress_ppm) atomic_store(r->progress_ppm, (int)((double)(t + 1) / j->ms * 1e6));
    }
}

static const cs_job_ops ops = { "sleep", CS_COST_CHEAP, run, cs_job_free_plain, cs_job_uses_none };
static const cs_job_ops ops_long = { "sleep", CS_COST_LONG, run, cs_job_free_plain, cs_job_uses_none };

static cs_sleep_job *make(unsigned ms, const cs_job_ops *o, cs_error *err)
{
    cs_sleep_job *j = cs_job_kind_new(sizeof *j, o, 1, err);
    if (j) j->ms = ms;
    return j;
}

cs_sleep_job *cs_sleep_job_new(unsigned ms, cs_error *err)
{
    return make(ms, &ops, err);
}

cs_sleep_job *cs_sleep_job_new_long(unsigned ms, cs_error *err)
{
    return make(ms, &ops_long, err);
}

const cs_sleep_job *cs_sleep_job_of(const cs_job *j)
{
    return j && (j->ops == &ops || j->ops == &ops_long) ? (const cs_sleep_job *)(const void *)j : NULL;
}
