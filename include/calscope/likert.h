/* calscope engine: the Likert view (Kirchenbauer, Oaks & Heim 2022, "What is Your Metric Telling
 * You?", §5.3): confidence categories as intervals, each
 * measured with an output selection and the inter-interval distance.
 *
 * Cut points c_0 < c_1 < ... < c_n give n intervals [c_i, c_{i+1}), the last one closed
 * [c_{n-1}, c_n]. For each interval the settings are the base ones with
 *   select   = "<base select> and X in [l, h)"   (or "X in [l, h)" when the base has none;
 *                                                 "[l, h]" for the last interval)
 *   distance = interval:l,h                       (max(0, l − ȳ, ȳ − h) on the first coordinate)
 *   binning, bins, gamma, lens = the base ones,
 * where X is the lens's first coordinate: `conf` (top-1 confidence) for top1 and topk,
 * `p[#c]` for class:c (c the lens class's column), `p[#0]` for full: a column by position, so
 * X is the lens's column whatever the classes are named, and means what it means in --select
 * (a bare `p[N]` names the class named N). Grouping and classwise lenses have no
 * single first coordinate to select on and are refused. The interval's count is the number of
 * samples that selection keeps, its ece the lens ECE on them (NAN when the count is 0).
 * Bounds are written with %.17g, so the selection uses exactly the doubles given.
 *
 * Threads: reads the dataset only; any thread. */
#ifndef CALSCOPE_LIKERT_H
#define CALSCOPE_LIKERT_H

#include <stdatomic.h>
#include <stddef.h>

#include "calscope/dataset.h"
#include "calscope/error.h"
#include "calscope/metrics.h"

#define CS_LIKERT_MAX 16   /* at most this many intervals */

/* The default cut points 0, 0.33, 0.66, 1 (low / medium / high, Kirchenbauer et al. 2022 §5.3). */
extern const double cs_likert_default_cuts[4];

typedef struct cs_likert_interval {
    double lo, hi;
    int hi_closed;           /* the last interval includes its upper end */
    size_t count;            /* samples in the interval (after the base selection) */
    double ece;              /* inter-interval ECE, NAN when count == 0 */
} cs_likert_interval;

typedef struct cs_likert {
    size_t n;                            /* intervals */
    cs_likert_interval iv[CS_LIKERT_MAX];
} cs_likert;

/* Fills out for the cut points cuts[0..n_cuts) (NULL = the defaults; n_cuts >= 2, strictly
 * increasing, finite, at most CS_LIKERT_MAX + 1). Returns CS_OK, or CS_EUSAGE (bad cuts, a lens
 * without a scalar first coordinate, a bad base selection — its message points into the base
 * expression), CS_ENOMEM, CS_ECANCELLED (cancel, which may be NULL, raised: polled between
 * intervals and inside each). Plain data: nothing to free. */
cs_status cs_likert_compute(const cs_dataset *d, const cs_settings *base, const double *cuts,
                            size_t n_cuts, const atomic_int *cancel, cs_likert *out, cs_error *err);
/* The same for a measurement that has prepared its settings once (pl: its dataset, settings,
 * selection and class). Any thread. */
cs_status cs_likert_planned(const cs_plan *pl, const double *cuts, size_t n_cuts,
                            const atomic_int *cancel, cs_likert *out, cs_error *err);

#endif
