/* calscope engine, loader: the one-pass load behind a file's summary (calscope/summarize.h).
 *
 * On a file of a label and probabilities only, read on two threads (the fast path's folded
 * count), the parse threads sum each row's probabilities as they read it (the class-wise
 * sums of `bins` uniform bins, the Brier and NLL sums: engine/metrics/rowsums.h), on rows
 * still in the cache, and keep none of them: the probability matrix never takes a page. The
 * labels and the per-row caches (confidence, prediction, correctness) are kept, so the
 * top-1 lens's metrics are made from the dataset as from any. Any other file, path or layout
 * is loaded whole, as cs_load_file loads it. Only engine/summarize.c (and the tests)
 * include this. */
#ifndef CALSCOPE_LOAD_SUMS_H
#define CALSCOPE_LOAD_SUMS_H

#include "calscope/load.h"
#include "engine/load/load_internal.h"
#include "engine/metrics/rowsums.h"

/* cs_load_file, summing the rows' probabilities under `bins` (1..CS_BINS_MAX) where the file
 * allows it. Returns the dataset (the caller's: cs_dataset_free) or NULL with err set, as
 * cs_load_file does. *sums is then the sums of every row (the caller's: cs_rowsums_free) and
 * the dataset's prob is NULL, or *sums is NULL and the dataset holds every row's
 * probabilities. The calling thread, as cs_load_file. */
cs_dataset *cs_load_file_summed(const char *path, const cs_load_options *opt, int bins,
                                cs_load_summary *summary, cs_rowsums **sums, cs_error *err);

/* The same over a buffer, with the fast path's tuning (calscope/load.h cs_load_buffer,
 * load_internal.h cs_load_tuning): for the tests. */
cs_dataset *cs_load_buffer_summed(const char *name, const void *data, size_t len,
                                  const cs_load_options *opt, cs_load_tuning *tuning, int bins,
                                  cs_load_summary *summary, cs_rowsums **sums, cs_error *err);

#endif
