/* calscope engine: a file's summary — the metric row of all its samples on the top-1 lens and
 * what its load says — made in one pass over the file, without keeping its probabilities.
 *
 * On the top-1 lens the values read the probability rows for the Brier score, the NLL and
 * the class-wise ECE only, and those are sums over the rows. A file of a label and
 * probabilities only, loaded on two threads, has its rows summed as they are parsed and its
 * probability matrix never kept (engine/load/load_sums.h): on the 1M x 10 bench file that is
 * 80 MB never written nor read again. Every other value comes from the per-row confidence
 * and correctness, as cs_evaluate makes it; every bit is the one a whole load and cs_measure
 * give (tests/unit/test_rowsums.c compares them).
 *
 * A request that reads the rows (cs_measure_reads_only_sums is 0: a selection, another lens,
 * intervals, a curve, top-k bars, the Likert table), a file of another layout or kind than a
 * label then p_0 .. p_k-1 in a CSV file the fast path reads (an id, tta or case column,
 * logits, quotes, gzip, .npy, statistics, a manifest), or a load on one thread is loaded
 * whole instead and handed back as a dataset, to be measured as any. */
#ifndef CALSCOPE_SUMMARIZE_H
#define CALSCOPE_SUMMARIZE_H

#include <stddef.h>

#include "calscope/dataset.h"
#include "calscope/error.h"
#include "calscope/load.h"
#include "calscope/metrics.h"
#include "calscope/run.h"

typedef struct cs_summary {
    size_t rows_summed;    /* rows whose probabilities were summed and never kept: all of them */
    size_t rows;           /* rows loaded; every one is a sample (a summed file has no tta) */
    size_t classes;
    char **class_names;    /* `classes` names, one block (calscope/dataset.h), owned */
    cs_result result;      /* the values of all samples on the top-1 lens, owned; what
                              cs_measure's result holds under the same settings */
} cs_summary;

/* Summarizes the file at path (loaded with opt, as cs_load_file loads it) under the settings
 * s, for a caller that measures the parts `parts` (CS_MEASURE_*) and reads nothing else of
 * the rows. Returns:
 *   CS_OK, *rows NULL     out holds the summary (out->rows_summed == out->rows);
 *   CS_OK, *rows set      the request or the file needs the rows: the dataset, loaded whole
 *                         (the caller's: cs_dataset_free; measure it with cs_measure), out
 *                         zeroed;
 *   anything else         err says why (a load's refusal, as cs_load_file's, or the
 *                         evaluation's), *rows NULL, out zeroed.
 * summary (may be NULL) receives the load summary in every case, as cs_load_file fills it
 * (cs_load_summary_free). run: the thread budget and cancel flag of the evaluation (NULL: no
 * budget, no cancel). Free out with cs_summary_free. The calling thread; any number of calls
 * at once. */
cs_status cs_summarize_file(const char *path, const cs_load_options *opt, const cs_settings *s,
                            unsigned parts, const cs_run *run, cs_summary *out,
                            cs_dataset **rows, cs_load_summary *summary, cs_error *err);

/* Frees what a summary owns and zeroes it (the struct is the caller's). NULL-safe. */
void cs_summary_free(cs_summary *sm);

#endif
