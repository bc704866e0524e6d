/* calscope backend job: every library's numbers beside calscope's (cs_compat_run), plus, for
 * the dashboard's diagram, per library and calscope bin (top1 lens, uniform binning only) the
 * moved samples calscope puts in that bin. Cheap; cancellable before each library
 * (cs_compat_run_cancellable). Borrows data; owns the report and counts. */
#ifndef CALSCOPE_JOBS_COMPAT_H
#define CALSCOPE_JOBS_COMPAT_H

#include "calscope/backend.h"
#include "calscope/compat.h"

typedef struct cs_compat_job {
    cs_job base;
    /* request */
    const cs_dataset *data;    /* borrowed */
    cs_settings settings;
    /* result */
    cs_compat_report report;   /* owned */
    uint32_t *bin_moved;       /* owned, CS_COMPAT_COUNT x report.bins, or NULL */
} cs_compat_job;

/* Compat report of d under s (all libraries). NULL with err: CS_EUSAGE (no dataset), CS_ENOMEM. */
cs_compat_job *cs_compat_job_new(const cs_dataset *d, const cs_settings *s, cs_error *err);

/* j as a compat job, or NULL. */
const cs_compat_job *cs_compat_job_of(const cs_job *j);

#endif
