/* calscope engine, statistics-file resampling (stats_resample.c): intervals and curves over
 * cases, for cs_segstats_measure. Conventions: calscope/segmeasure.h. Any thread. */
#ifndef CALSCOPE_SEG_MEASURE_RESAMPLE_H
#define CALSCOPE_SEG_MEASURE_RESAMPLE_H

#include "calscope/resample.h"
#include "engine/measure/stats_internal.h"

/* Bootstrap interval of the metrics of `mask` (checked by seg_metric_mask): `repeats` draws of
 * p->na cases with replacement. Fills out like cs_bootstrap_interval. */
cs_status seg_interval(const seg_prob *p, unsigned mask, int repeats, uint64_t seed,
                       cs_ci_method method, const cs_run *run, cs_ci *out, cs_error *err);
/* Size curve over cases; bins curve over the M of o that divide the fine resolution. NULL with
 * err on failure (CS_EUSAGE, CS_EEMPTY, CS_ENOMEM, CS_ECANCELLED). Free with cs_curve_free. */
cs_curve *seg_size_curve(const seg_prob *p, const cs_curve_options *o, const cs_run *run,
                         cs_error *err);
cs_curve *seg_bins_curve(const seg_prob *p, const cs_curve_options *o, const cs_run *run,
                         cs_error *err);

#endif
