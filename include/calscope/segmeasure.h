/* calscope engine: metrics computed exactly from a statistics file (calscope/segstats.h).
 *
 * cs_segstats_measure fills the same cs_measurement as cs_measure (calscope/measure.h), with
 * every field meaning what it means there, so the report's writers and the dashboard's views
 * print it unchanged. Exact (the row engine's number on the same voxels, up to the order of
 * floating-point additions): lenses top1 (softmax maps only), classwise and class:C; uniform
 * binning with M dividing the fine resolution F; distances tvd / l2 / max / interval;
 * accuracy (softmax), ECE / ACE / MCE, SCE, Brier, NLL, the bin table; per-case metrics and
 * the dataset reliability histogram; selections made of `case` conditions.
 * NAN (not computable from per-bin sums): AECE (equal-mass bins), RECE-G, RECE-M; asking for
 * them by name in intervals or curves is refused (CS_EUSAGE, with the reason), as are
 * equal-mass / k-d-tree binning, the vector lenses, Likert tables and top-k bars.
 *
 * Cases are the unit of evidence (voxels of one volume are not independent): intervals
 * resample cases with replacement (n_cases draws, their statistics summed), the size curve is
 * the metric against the number of cases (a point's `rows` is its number of cases, the
 * curve's n_samples the number of selected cases), the bins curve resamples cases and runs over
 * the M that divide F (the default M list keeps those; an M asked for that does not divide F
 * is refused); its rows and n_samples are voxels, as the stability rule counts voxels per bin.
 * Streams and summaries are the row engine's (same seed conventions, same interval methods),
 * so results are deterministic for a seed whatever run->threads.
 *
 * Threads: any thread; the statistics are only read. */
#ifndef CALSCOPE_SEGMEASURE_H
#define CALSCOPE_SEGMEASURE_H

#include "calscope/resample.h"
#include "calscope/error.h"
#include "calscope/measure.h"
#include "calscope/segstats.h"

/* Measures st under s: the values, then the parts q asks for (cases, intervals, a curve).
 * The case metrics' case_index indexes st->case_names. Returns CS_OK; CS_EEMPTY when the
 * selection keeps no voxel (out->selected = 0); CS_EUSAGE for settings a statistics file
 * cannot answer (the message says why); CS_ENOMEM; CS_ECANCELLED. out is always initialised:
 * free it with cs_measurement_free. */
cs_status cs_segstats_measure(const cs_segstats *st, const cs_settings *s,
                              const cs_measure_request *q, const cs_run *run,
                              cs_measurement *out, cs_error *err);

/* Paired comparison of two statistics files of the same cases (matched by name; name_a and
 * name_b name the files in messages): `repeats` resamples of the cases with replacement, each
 * summing the same drawn cases in A and in B. Fills the cs_compare of cs_compare_run
 * (by_id = 1: paired by case name; n_pairs = the paired cases). metrics 0 = the exact default
 * set. Returns CS_OK, CS_EINPUT when the classes differ (as the per-sample compare says it:
 * "A:5:6: --compare: class '4' has no partner: A has 4 classes, B has 3", at the class's column
 * of the classes line) or the case sets do ("A: case 'X' is not in B"), CS_EUSAGE, CS_EEMPTY,
 * CS_ENOMEM or CS_ECANCELLED. */
cs_status cs_segstats_compare(const cs_segstats *a, const char *name_a, const cs_segstats *b,
                              const char *name_b, const cs_settings *s, unsigned metrics,
                              int repeats, uint64_t seed, const cs_run *run, cs_compare *out,
                              cs_error *err);

/* The M values of a bins curve when the user names none: every divisor of F from 5 to
 * min(F, CS_BINS_MAX), at most CS_CURVE_MAX_POINTS of them (sets o->x and o->n_points only). */
void cs_segstats_bins_list(const cs_segstats *st, cs_curve_options *o);

#endif
