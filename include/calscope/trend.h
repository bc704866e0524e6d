/* calscope engine: a training run's trend — one summary per epoch file (follow.h), kept
 * instead of the file's rows, so that a run of a thousand epochs of a million rows costs the
 * summaries only (docs/follow.md#memory).
 *
 * An epoch keeps its path, its sample count, every metric of the catalogue (NAN: not
 * measured), the interval of each when --ci was on, and the reliability bins (the diagram's
 * table); or, for a file that could not be measured, its message (a gap in the trend).
 *
 * Ownership: a cs_trend is the caller's (zero it to start); cs_trend_free releases what it
 * holds. Threads: one trend belongs to one thread at a time. */
#ifndef CALSCOPE_TREND_H
#define CALSCOPE_TREND_H

#include <stddef.h>

#include "calscope/catalogue.h"
#include "calscope/error.h"
#include "calscope/measure.h"

typedef struct cs_trend_epoch {
    char *path;                        /* owned */
    char *message;                     /* owned: why the file could not be measured, else NULL */
    size_t samples;
    double value[CS_METRIC_COUNT];     /* by metric id */
    int has_ci;
    double lo[CS_METRIC_COUNT], hi[CS_METRIC_COUNT];
    cs_bin *bins;                      /* owned copy of the result's bins */
    size_t n_bins;
} cs_trend_epoch;

typedef struct cs_trend {
    cs_trend_epoch *epoch;
    size_t n, cap;
} cs_trend;

/* Appends the summary of a measurement (m->evaluated) of `path`: copies what it keeps, so the
 * caller frees m and the dataset at once. Returns CS_OK or CS_ENOMEM (err set). */
cs_status cs_trend_add(cs_trend *t, const char *path, const cs_measurement *m, cs_error *err);
/* Appends a gap: a file that could not be measured, with its message. */
cs_status cs_trend_add_gap(cs_trend *t, const char *path, const char *message, cs_error *err);

/* The epoch that is best by metric id (lowest, or highest for accuracy: the catalogue's
 * lower_better), gaps and NANs skipped; the first on a tie. -1 when there is none. */
long cs_trend_best(const cs_trend *t, int id);

/* The bytes the trend holds (its array and what each epoch owns): what a long run costs. */
size_t cs_trend_bytes(const cs_trend *t);

void cs_trend_free(cs_trend *t);

#endif
