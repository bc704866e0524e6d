/* calscope backend job: load a prediction file (cs_load_file). Cheap; cancellable while reading.
 * The job owns its path copy and, once finished, the dataset and summary: take them (set the
 * members to NULL / zero) before cs_job_free to keep them. Any thread may build one; only the
 * backend runs it. */
#ifndef CALSCOPE_JOBS_LOAD_H
#define CALSCOPE_JOBS_LOAD_H

#include "calscope/backend.h"
#include "calscope/load.h"

typedef struct cs_load_job {
    cs_job base;
    /* request */
    char *path;                /* owned copy of the path given to cs_load_job_new */
    cs_load_options load;      /* progress, progress_ctx and cancel are the backend's */
    /* result */
    cs_dataset *dataset;       /* owned, prepared; NULL on error */
    cs_load_summary summary;   /* owned (also filled when the file is refused) */
} cs_load_job;

/* A load of path with options o (NULL = defaults). NULL with err: CS_EUSAGE (no path), CS_ENOMEM. */
cs_load_job *cs_load_job_new(const char *path, const cs_load_options *o, cs_error *err);

/* j as a load job, or NULL when it is another kind. */
const cs_load_job *cs_load_job_of(const cs_job *j);

#endif
