/* What every job kind's file shares: the constructor's checks and errors, and the kind test.
 * Engine-private (src/engine/jobs/). */
#ifndef CALSCOPE_JOB_KIND_H
#define CALSCOPE_JOB_KIND_H

#include <stdatomic.h>
#include <stdlib.h>

#include "calscope/backend.h"
#include "calscope/resample.h"   /* cs_run */

/* A zeroed job of `size` bytes with ops, or NULL with err: CS_EUSAGE "backend: incomplete
 * request" when !complete, CS_ENOMEM "out of memory". */
static inline void *cs_job_kind_new(size_t size, const cs_job_ops *ops, int complete, cs_error *err)
{
    if (!complete) {
        cs_error_set(err, CS_EUSAGE, 0, 0, "backend: incomplete request");
        return NULL;
    }
    cs_job *j = cs_job_alloc(size, ops);
    if (!j) cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
    return j;
}

/* Nonzero once the job's cancel flag is raised. */
static inline int cs_job_cancelled(const cs_run *run)
{
    return run->cancel && atomic_load_explicit(run->cancel, memory_order_relaxed);
}

/* Sets the job's status to CS_ECANCELLED "cancelled" and returns 1 when its flag is raised. */
static inline int cs_job_stop_if_cancelled(cs_job *j, const cs_run *run)
{
    if (!cs_job_cancelled(run)) return 0;
    j->status = cs_error_set(&j->err, CS_ECANCELLED, 0, 0, "cancelled");
    return 1;
}

/* Defines `const T *T_of(const cs_job *j)`: j as a T when its ops are OPS, else NULL. */
#define CS_JOB_KIND_OF(T, OPS)                                          \
    const T *T##_of(const cs_job *j)                                    \
    {                                                                   \
        return j && j->ops == &(OPS) ? (const T *)(const void *)j : NULL; \
    }

/* Defines `T *T_new(const cs_dataset *d, const cs_settings *s, cs_error *err)` for a kind whose
 * request is a borrowed `data` and a copy of `settings` (the rest zeroed). */
#define CS_JOB_NEW_DATA_SETTINGS(T, OPS)                                \
    T *T##_new(const cs_dataset *d, const cs_settings *s, cs_error *err) \
    {                                                                   \
        T *j = cs_job_kind_new(sizeof *j, &(OPS), d && s, err);         \
        if (j) {                                                        \
            j->data = d;                                                \
            j->settings = *s;                                           \
        }                                                               \
        return j;                                                       \
    }

/* uses_dataset of a kind that reads no dataset (load, sleep). */
static inline int cs_job_uses_none(const cs_job *j, const cs_dataset *d)
{
    (void)j;
    (void)d;
    return 0;
}

/* free of a kind whose result owns nothing. */
static inline void cs_job_free_plain(cs_job *j)
{
    free(j);
}

/* uses_dataset of a job with a single borrowed `data` member. */
#define CS_JOB_USES_DATA(T)                                             \
    static int T##_uses(const cs_job *j, const cs_dataset *d)          \
    {                                                                   \
        return ((const T *)(const void *)j)->data == d;                 \
    }

#endif
