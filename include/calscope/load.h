/* calscope engine: loading prediction files (docs/input.md).
 *
 * Columns are found by name in the header (case-insensitive): label|y|target|true,
 * p_<name>|prob_<name> (K >= 2), logit_<name> (softmax applied, logits kept),
 * p|prob|score (binary shorthand), id, tta, case, and the split column when one is named
 * (cs_load_options.split_column). Anything else is ignored and listed in the summary.
 * Input may be gzip-compressed (detected by magic bytes), use `,` `;` or tab as delimiter
 * (sniffed from the header), carry a UTF-8 BOM, CRLF line ends and RFC 4180 quoting.
 *
 * Strict by default: the first bad row refuses the whole file; err->msg then reads
 * "FILE:LINE:COL: reason" followed by how many further rows are bad. With skip_bad_rows
 * the good rows load and every skipped row is counted in the summary.
 *
 * Threads: cs_load_* may run on any thread; it reads `cancel` and calls `progress`
 * from the calling thread only.
 *
 * Limits: the header must end within CS_LOAD_MAX_HEADER_BYTES of the (decompressed) input and
 * hold no control byte but tab, CR and LF; no field may be longer than CS_LOAD_MAX_FIELD_BYTES;
 * a file holds at most CS_DATASET_MAX_ROWS data rows. Each is refused at once with
 * "FILE:LINE:COL: reason" (even with skip_bad_rows), so a load never takes memory for bytes it
 * does not keep.
 *
 * A regular file that changes while it is read (another size or modification time, or its
 * name now pointing to another file) is refused with "FILE: file changed while loading"
 * (CS_EINPUT), never used half-read. A mapped file that shrinks cannot kill the process with
 * SIGBUS: while a file is mapped the loader installs a SIGBUS handler that acts on its own
 * mappings only and hands any other SIGBUS to the action installed before it. A program that
 * installs its own SIGBUS handler does so before it starts loading (else it replaces the
 * loader's mid-load), and a thread that calls the loader must not block SIGBUS (threads from
 * cs_helper_start never do: calscope/thread.h). The same holds for .npy pairs (read, not
 * mapped: compared before and after) and statistics files. */
#ifndef CALSCOPE_LOAD_H
#define CALSCOPE_LOAD_H

#include <stdatomic.h>
#include <stddef.h>

#include "calscope/dataset.h"
#include "calscope/error.h"

/* Called now and then (at most ~20 times a second) with the fraction of input consumed. */
typedef void (*cs_progress_fn)(void *ctx, double fraction);

typedef struct cs_load_options {
    double sum_tol;        /* a probability row must sum to 1 within this (default 1e-3) */
    int renormalize;       /* divide each probability row by its sum instead of using it as written */
    int skip_bad_rows;     /* load the good rows, count and report the bad ones */
    int no_header;         /* the file has no header row: label_col names the label column and
                              every other column is a class probability (p_0, p_1, ...) */
    int label_col;         /* 1-based label column for no_header (default 1) */
    char delimiter;        /* ',' ';' '\t', or 0 to sniff from the first line */
    const char *split_column; /* NULL, or the name (case-insensitive) of a column kept per row as
                              an interned string (cs_dataset.split, e.g. fit / eval): the file
                              is refused when it has no such column, an empty value is a bad
                              row, and the name may not be one of the columns above */
    const char *labels;    /* NULL, or the .npy file of labels that goes with a .npy prediction
                              file (N integers 0..K-1, any integer dtype, or floats with
                              integral values); required for a .npy file, refused (CS_EUSAGE)
                              for any other. Borrowed: it must outlive the load */
    int npy_logits;        /* the .npy prediction file holds logits (softmax applied as for
                              logit_ columns), not probabilities; CS_EUSAGE for other files */
    /* A manifest of segmentation volumes (calscope/reduce.h: header case,probs,labels) is
     * reduced when loaded, into a statistics dataset (dataset.h `stats`), with: the label
     * mapping as --label-values / --regions write it (both NULL: softmax 0..C-1 from the first
     * case), the fine resolution (0: CS_SEGSTATS_FINE_DEFAULT), the largest affine difference
     * (default CS_REDUCE_AFFINE_TOL_DEFAULT), sum_tol above, and the threads the cases run on
     * (0: every core). Borrowed strings, as labels. */
    const char *seg_label_values, *seg_regions;
    /* A FILE that is a folder of probability files is paired by stem with the label maps of
     * the folder `labels` names (--probs DIR --labels DIR), probability files named CASE +
     * seg_prob_suffix + extension (NULL: none), and reduced the same way. */
    const char *seg_prob_suffix;
    int seg_fine;
    double seg_affine_tol;
    int seg_threads;
    cs_progress_fn progress;
    void *progress_ctx;
    /* A manifest or a pair of folders: called on the loading thread with a statistics dataset
     * of the cases reduced so far (owned by the callee from then on), each time more cases are
     * done and some are still running (at most every 20 ms); NULL: no partial results. The
     * dashboard shows them, so cases appear as they finish. */
    void (*partial)(void *ctx, cs_dataset *so_far);
    void *partial_ctx;
    const atomic_int *cancel; /* when non-NULL and set, loading stops with CS_ECANCELLED */
} cs_load_options;

#define CS_LOAD_MAX_SKIP_MESSAGES 20

#define CS_LOAD_MAX_HEADER_BYTES ((size_t)4 << 20)  /* 4 MiB: ~400,000 columns named p_NNNNN */
#define CS_LOAD_MAX_FIELD_BYTES ((size_t)1 << 20)   /* 1 MiB */

typedef struct cs_load_summary {
    size_t rows_read;      /* data records seen */
    size_t rows_used;      /* rows in the dataset */
    size_t rows_rejected;  /* bad rows (strict mode: the whole file is refused when > 0) */
    size_t rows_renormalized; /* rows whose sum differed from 1 and were rescaled (renormalize) */
    char **ignored_columns;   /* header names that were not recognised (owned) */
    size_t n_ignored;
    char **skipped;        /* "FILE:LINE:COL: reason" for the first CS_LOAD_MAX_SKIP_MESSAGES
                              skipped rows (owned) */
    size_t n_skipped_messages;
    int from_logits;       /* probabilities are the softmax of logit_ columns */
    int prob_rows;         /* rows of K >= 2 class probabilities as written, so sum_tol checked
                              them (or renormalize rescaled them): not logits, not a binary p
                              column; a manifest: softmax channels (not --regions), whose sums
                              sum_tol checks when the volumes are reduced. 0 for a statistics
                              file (--sum-tol and --renormalize change nothing there) */
    int gzip;              /* the input was gzip-compressed */
    size_t manifest_cases; /* a manifest of volumes: the cases reduced (rows_* count voxels) */
    size_t blank_lines;    /* empty (or all-space) lines skipped; they hold no data, so nothing
                              is lost, but they are counted (a final newline is not a blank line) */
    char *class_note;      /* NULL, or (owned) when some class is named by a number that is not
                              its position (engine/classes.h), e.g. "named by numbers other
                              than 0..1 in column order (p_1, p_0): labels match names, not
                              positions" (a front end prints it after "classes") */
} cs_load_summary;

/* Fills opt with the defaults above. */
void cs_load_options_default(cs_load_options *opt);

/* Loads `path` ("-" = standard input). A name ending in .npy is a classification pair with
 * opt->labels: an N x K array of probabilities (or logits, opt->npy_logits) of any
 * dtype engine/volume/volume.h reads, C or Fortran order, and N labels; the rows go through the same
 * checks as CSV rows (range, --sum-tol / renormalize, skip_bad_rows) with messages
 * "FILE:ROW:CLASS: reason" (ROW and CLASS 1-based; a label's "LABELS:ROW:1: reason"); the
 * classes are named "0".."K-1". A name ending in .npz holds both arrays (docs/input.md): the
 * member `probs` or `probabilities` (with npy_logits: `logits`) and `labels` or `y`, read the
 * same way, its messages naming "FILE[MEMBER.npy]"; opt->labels is refused for it (CS_EUSAGE).
 * The CSV-only options (no_header, delimiter, split_column) are refused for both with CS_EUSAGE. Returns a prepared dataset (cs_dataset_prepare done)
 * owned by the caller, or NULL with err filled (CS_EINPUT, CS_ENOMEM, CS_ECANCELLED).
 * `summary` may be NULL; when given it is filled on success and on rejection, and must be
 * released with cs_load_summary_free. */
cs_dataset *cs_load_file(const char *path, const cs_load_options *opt,
                         cs_load_summary *summary, cs_error *err);

/* The same from a buffer (plain or gzip bytes); `name` is used in messages. */
cs_dataset *cs_load_buffer(const char *name, const void *data, size_t len,
                           const cs_load_options *opt, cs_load_summary *summary, cs_error *err);

/* Releases what a summary owns and zeroes it. NULL is a no-op. */
void cs_load_summary_free(cs_load_summary *summary);

#endif
