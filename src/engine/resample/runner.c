/* The run state of a parallel resampling call (ci_internal.h): cancel, progress and the first
 * hard error, of curves.c's drivers (evaluator.h). */
#include "engine/resample/ci_internal.h"

#include "calscope/resample.h"

void cs_runner_init(cs_runner *rn, const cs_run *run, size_t total)
{
    rn->cancel = run ? run->cancel : NULL;
    rn->progress = run ? run->progress_ppm : NULL;
    rn->part = cs_run_part(run, 0.0, 1.0);
    int t = run && run->threads > 0 ? run->threads : cs_cpu_count();
    rn->threads = t > CS_THREADS_MAX ? CS_THREADS_MAX : t;
    rn->total = total ? total : 1;
    atomic_init(&rn->done, 0);
    atomic_init(&rn->failed, CS_OK);
    /* no reset to 0: a call that is one step of a longer job starts where the step before
     * ended, so the job's progress never restarts (a fresh job's progress starts at 0) */
    cs_run_progress_at(&rn->part, 0.0);
}

int cs_runner_cancelled(const cs_runner *rn)
{
    return rn->cancel && atomic_load_explicit(rn->cancel, memory_order_relaxed);
}

void cs_runner_tick(cs_runner *rn)
{
    size_t d = atomic_fetch_add(&rn->done, 1) + 1;
    if (!rn->progress) return;
    cs_run_progress_at(&rn->part, (double)d / (double)rn->total);
}

void cs_runner_fail(cs_runner *rn, cs_status st)
{
    int expect = CS_OK;
    if (st != CS_OK && st != CS_ECANCELLED) atomic_compare_exchange_strong(&rn->failed, &expect, (int)st);
}

cs_status cs_runner_finish(cs_runner *rn, cs_error *err)
{
    int f = atomic_load(&rn->failed);
    if (f != CS_OK)
        return cs_error_set(err, (cs_status)f, 0, 0, "resampling: %s",
                            f == CS_ENOMEM ? "out of memory" : "a replicate could not be evaluated");
    if (cs_runner_cancelled(rn)) return cs_error_set(err, CS_ECANCELLED, 0, 0, "cancelled");
    cs_run_progress_at(&rn->part, 1.0);
    return CS_OK;
}
