/* calscope engine: the sums a full evaluation takes over the probability rows, made row by
 * row in file order (the summary of a file, calscope/summarize.h, in one pass).
 *
 * On the top-1 lens, cs_evaluate reads the probability matrix for two things only: the
 * class-wise sums of the uniform bins (the class-wise ECE) and the Brier and NLL sums. A
 * loader that makes those sums while it parses, on rows still in the cache, need not keep the
 * rows' probabilities at all: the CSV loader's two threads do so for cs_summarize_file
 * (engine/load/load_sums.h), and cs_rowsums_values turns the sums into those three values.
 * The sums are the evaluation's own, taken in its order: in chunks of CS_ROWSUMS_CHUNK
 * (65,536) rows, each summed from 0 in row order (classwise.c's pass, scoring.c's terms and
 * groups of 16 for the NLL), the chunks' sums added in order. So every bit the summary holds
 * is the one the whole matrix gives (the tests compare them), and sums made in whole chunks
 * on separate threads join into those bits (cs_rowsums_append).
 *
 * A cs_rowsums belongs to one thread at a time. */
#ifndef CALSCOPE_ROWSUMS_H
#define CALSCOPE_ROWSUMS_H

#include <stddef.h>
#include <stdint.h>

#include "calscope/error.h"
#include "calscope/metrics.h"

typedef struct cs_rowsums cs_rowsums;

/* The rows of a chunk of the sums' rule (the metrics' CS_MX_CHUNK: rowsums.c checks). */
#define CS_ROWSUMS_CHUNK 65536u

/* Empty sums for rows of k >= 2 classes under `bins` uniform bins (1..CS_BINS_MAX), or NULL
 * (out of memory, or k or bins out of range). Free with cs_rowsums_free. */
cs_rowsums *cs_rowsums_new(size_t k, int bins);

void cs_rowsums_free(cs_rowsums *s);

/* Adds nr rows, in order: g holds them row-major (k probabilities each), y their labels
 * (0..k-1). Returns 0, or -1 when out of memory (the sums are then unusable). */
int cs_rowsums_add(cs_rowsums *s, const double *g, const int32_t *y, size_t nr);

/* Appends t's rows after s's (t's first row follows s's last): s must end on a chunk of
 * CS_MX_CHUNK rows (its rows a multiple of 65,536, 0 included) and t start on one (a fresh
 * cs_rowsums that rows were then added to), both for the same classes and bins; then s holds
 * the sums of the rows of both as one cs_rowsums_add of them all would. Returns 0, or -1
 * (s is then unchanged when the shapes do not fit; out of memory, unusable). t is read only. */
int cs_rowsums_append(cs_rowsums *s, const cs_rowsums *t);

/* Rows added so far; the bins and classes the sums were made for. */
size_t cs_rowsums_rows(const cs_rowsums *s);
int cs_rowsums_bins(const cs_rowsums *s);
size_t cs_rowsums_classes(const cs_rowsums *s);

/* The Brier score, the NLL and the class-wise ECE of the rows summed, bit for bit what
 * cs_evaluate makes of the whole matrix of those rows (all of them samples, on the top-1
 * lens) under the settings s, whose bins must be the sums' (CS_EUSAGE else). Any of the
 * three outputs may be NULL. Returns CS_OK, CS_EUSAGE, CS_EEMPTY (no row) or CS_ENOMEM with
 * err set. Reads s only: any thread. */
cs_status cs_rowsums_values(const cs_rowsums *rs, const cs_settings *s, double *brier,
                            double *nll, double *sce, cs_error *err);

#endif
