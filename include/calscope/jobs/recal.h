/* calscope backend job: fit a recalibration and apply it (cs_recal_apply). Cheap; cancellable
 * between fits and passes. Borrows data; owns the recalibrated dataset and info.vec until
 * taken (set `dataset` and `info.vec` to NULL after taking them). */
#ifndef CALSCOPE_JOBS_RECAL_H
#define CALSCOPE_JOBS_RECAL_H

#include "calscope/backend.h"
#include "calscope/recal.h"

typedef struct cs_recal_job {
    cs_job base;
    /* request */
    const cs_dataset *data;    /* borrowed */
    int method;                /* cs_recal_method */
    cs_recal_options opts;     /* fit_mask and split_fit must be NULL (not copied); cancel is
                                  the backend's; threads <= 0: the job's share */
    /* result */
    cs_dataset *dataset;       /* owned, prepared, path "FILE+name" */
    cs_recal_info info;
    double fit_seconds;        /* wall time of the fit and its application (cs_recal_apply),
                                  set whatever its status */
} cs_recal_job;

/* method fitted on d with the report's defaults (cs_recal_options_default). NULL with err:
 * CS_EUSAGE (no dataset), CS_ENOMEM. */
cs_recal_job *cs_recal_job_new(const cs_dataset *d, int method, cs_error *err);

/* j as a recalibration job, or NULL. */
const cs_recal_job *cs_recal_job_of(const cs_job *j);

#endif
