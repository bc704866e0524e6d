/* calscope backend job: top-k ECE bars (cs_topk_bars) for up to CS_TOPK_JOB_MAX values of k.
 * Cheap; cancellable between the bars. Borrows data; plain data otherwise. */
#ifndef CALSCOPE_JOBS_TOPK_H
#define CALSCOPE_JOBS_TOPK_H

#include "calscope/backend.h"
#include "calscope/metrics.h"

#define CS_TOPK_JOB_MAX 32

typedef struct cs_topk_job {
    cs_job base;
    /* request */
    const cs_dataset *data;    /* borrowed */
    cs_settings settings;
    int k[CS_TOPK_JOB_MAX];
    size_t n;
    /* result */
    double value[CS_TOPK_JOB_MAX]; /* ECE of the top-k lens (settings otherwise kept) */
} cs_topk_job;

/* Bars of d under s. NULL with err: CS_EUSAGE (no dataset), CS_ENOMEM. */
cs_topk_job *cs_topk_job_new(const cs_dataset *d, const cs_settings *s, cs_error *err);

/* j as a top-k job, or NULL. */
const cs_topk_job *cs_topk_job_of(const cs_job *j);

#endif
