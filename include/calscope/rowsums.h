/* calscope engine: the sums a full evaluation takes over the probability rows, made row by
 * row in file order (issue 14: the report in one pass).
 *
 * On the top-1 lens, cs_evaluate reads the probability matrix for two things only: the
 * class-wise sums of the uniform bins (the class-wise ECE) and the Brier and NLL sums. A
 * loader that makes those sums while it parses, on rows still in the cache, need not keep the
 * rows' probabilities at all. The CSV loader's first thread (of two) does so when
 * cs_load_options.row_sums_bins asks for it (the report does when nothing else it prints
 * reads the matrix): the dataset then holds the sums of its first rows_summed rows
 * (cs_dataset.row_sums) and the probabilities of the others, and cs_evaluate continues the
 * sums over those. The sums are the evaluation's own, taken in its order (classwise.c's pass,
 * scoring.c's chunks of CS_MX_CHUNK rows and groups of 16 for the NLL), so every bit the
 * report prints is the one the whole matrix gives; the tests compare them.
 *
 * A cs_rowsums belongs to one thread at a time; a dataset's is read-only (copy it to go on). */
#ifndef CALSCOPE_ROWSUMS_H
#define CALSCOPE_ROWSUMS_H

#include <stddef.h>
#include <stdint.h>

typedef struct cs_rowsums cs_rowsums;

/* Empty sums for rows of k >= 2 classes under `bins` uniform bins (1..CS_BINS_MAX), or NULL
 * (out of memory, or k or bins out of range). Free with cs_rowsums_free. */
cs_rowsums *cs_rowsums_new(size_t k, int bins);

/* A copy (to continue a dataset's sums without changing them), or NULL out of memory. */
cs_rowsums *cs_rowsums_copy(const cs_rowsums *s);

void cs_rowsums_free(cs_rowsums *s);

/* Adds nr rows, in order: g holds them row-major (k probabilities each), y their labels
 * (0..k-1). Returns 0, or -1 when out of memory (the sums are then unusable). */
int cs_rowsums_add(cs_rowsums *s, const double *g, const int32_t *y, size_t nr);

/* Rows added so far; the bins and classes the sums were made for. */
size_t cs_rowsums_rows(const cs_rowsums *s);
int cs_rowsums_bins(const cs_rowsums *s);
size_t cs_rowsums_classes(const cs_rowsums *s);

#endif
