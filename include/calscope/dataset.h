/* calscope engine: a loaded prediction file, as flat arrays.
 *
 * One cs_dataset owns every array it points to; cs_dataset_free releases them all.
 * Rows are in file order (rows rejected with --skip-bad-rows are absent).
 * A dataset is immutable once loaded, except for the derived per-row caches that
 * cs_dataset_prepare fills; after cs_dataset_prepare returns, any number of threads may
 * read the dataset concurrently. */
#ifndef CALSCOPE_DATASET_H
#define CALSCOPE_DATASET_H

#include <stddef.h>
#include <stdint.h>

#include "calscope/error.h"

struct cs_run;   /* calscope/run.h */

/* Most rows a dataset may have: row indices are kept in 32 bits across the engine
 * (uint32_t sample rows, int32_t interned indices). The loader refuses a longer file. */
#define CS_DATASET_MAX_ROWS ((size_t)INT32_MAX)

typedef struct cs_dataset {
    char *path;            /* file name as the user gave it ("-" for stdin) */
    size_t n;              /* rows loaded (all rows, including tta > 0 observations) */
    size_t k;              /* classes, >= 2 */
    double *prob;          /* n*k, row-major; probabilities (softmax of logits for logit files) */
    double *logit;         /* n*k raw logits as written, or NULL when the file gave probabilities */
    int32_t *label;        /* n, 0..k-1 */
    char **class_names;    /* k names: the p_/prob_/logit_ suffixes ("0","1" for the binary
                              shorthand). ONE allocation: the k pointers, then the text they
                              point into (a loaded file's whole header); free(class_names)
                              releases it all and a name is never freed alone. Make one with
                              cs_names_pack. */

    /* Optional columns: NULL when the file has no such column. Strings are interned:
     * the per-row array holds an index into the names table. */
    int32_t *id;           /* n, index into id_names */
    char **id_names;
    size_t n_ids;
    int32_t *tta;          /* n, observation index (0 = the clean prediction) */
    int32_t *case_id;      /* n, index into case_names */
    char **case_names;
    size_t n_cases;
    int32_t *split;        /* n, index into split_names: the column cs_load_options.split_column
                              named (NULL when none was asked for) */
    char **split_names;
    size_t n_splits;

    /* Where the rows came from, for messages that point into the file (--compare pairing).
     * NULL / 0 when unknown (a dataset not read from a file). */
    uint32_t *line;        /* n, 1-based physical line of each row (0 beyond UINT32_MAX) */
    long header_line;      /* the header's line (0: no header) */
    long label_col, id_col;/* 1-based columns of label and id (0: none) */
    long split_col;        /* 1-based column of the split column (0: none) */
    uint32_t *class_col;   /* k, 1-based column of each class's probability or logit (4 bytes:
                              a header holds at most CS_LOAD_MAX_HEADER_BYTES of columns) */

    /* Where each row stands among the file's data rows, counting the rows --skip-bad-rows
     * left out: files without ids pair rows by it (cs_compare_pair), so a skipped row leaves
     * its partner without one instead of moving every later row. NULL when row r is data row
     * r (nothing skipped, nothing cut); data_rows is then unused. A subset keeps its rows'
     * positions. Kept with the rows, unlike line. */
    uint32_t *row_pos;     /* n, 0-based data row of each row */
    size_t data_rows;      /* the data rows the positions count (rows read, skipped included) */

    /* Derived once per file by cs_dataset_prepare (NULL before). */
    double *conf;          /* n, max_j prob[i][j] */
    int32_t *pred;         /* n, first index attaining the max (ties: the first maximal index) */
    uint8_t *correct;      /* n, label == pred */
    uint32_t *sample_rows; /* the rows that are samples: all rows, or those with tta == 0 */
    size_t n_samples;

    /* A statistics dataset (calscope/segstats.h): a statistics file, or a manifest of
     * segmentation volumes reduced when loaded. Owned (freed with the dataset). Then there are
     * no rows: prob, label, case_id and every per-row array above are NULL; n = n_samples = the
     * voxels of all cases; k, class_names, case_names and n_cases are the statistics'. It is
     * measured by cs_measure (and compared by cs_compare_run), which hand it to
     * cs_segstats_measure; every row-level routine refuses it through cs_dataset_need_rows. */
    struct cs_segstats *stats;
    void (*free_stats)(struct cs_segstats *);   /* set with stats (cs_segstats_free); the
                                                   dataset, in the base layer, knows no more */
} cs_dataset;

/* The one refusal of a statistics dataset by a routine that needs per-sample values: CS_OK
 * when d has rows; else CS_EUSAGE with "WHAT: not from a statistics file, which keeps per-bin sums
 * per case, not per-voxel values" (what: "--compat", "recalibration", ...). Any thread. */
cs_status cs_dataset_need_rows(const cs_dataset *d, const char *what, cs_error *err);

/* Fills conf/pred/correct/sample_rows. Idempotent. Not thread-safe: call it once
 * (the loader does) before sharing the dataset. A large dataset's caches are made in two
 * halves, the second on a helper thread, only when run's budget has a thread to spare
 * (run->threads >= 2, or <= 0 with two cores online; NULL: the online cores): a budget of 1
 * starts no thread. Returns CS_OK, CS_ENOMEM, or CS_EINPUT when
 * n > CS_DATASET_MAX_ROWS (checked before anything is read or allocated). When conf, pred and
 * correct are already there (all three, made by cs_dataset_prepare_rows over every row: the
 * CSV loader's parse threads do), only sample_rows is made. */
cs_status cs_dataset_prepare(cs_dataset *d, const struct cs_run *run, cs_error *err);

/* The same in three steps, for a loader that fills the per-row caches while it parses
 * (each row's caches made while its probabilities are still in cache, instead of a
 * second pass over the whole matrix):
 *   cs_dataset_prepare_alloc   once n is known, before any rows call: allocates conf, pred,
 *                              correct (unless conf is there: then all three are) and
 *                              sample_rows (CS_OK, CS_ENOMEM, or CS_EINPUT when
 *                              n > CS_DATASET_MAX_ROWS); a no-op when sample_rows is there.
 *   cs_dataset_prepare_rows    conf/pred/correct of rows [first, first + count) from their
 *                              final prob and label. Any thread; calls on disjoint row ranges
 *                              may run at the same time (each writes only its rows). It reads
 *                              only k, prob and label and writes only conf, pred and correct,
 *                              so a loader may call it on a cs_dataset that merely points at
 *                              its arrays while it parses (load_fast.c does, per thread).
 *   cs_dataset_prepare_finish  after every row has been through prepare_rows: sample_rows and
 *                              n_samples (reads tta). One thread, and a helper beside it for a
 *                              large file when run's budget allows (as cs_dataset_prepare).
 * cs_dataset_prepare is alloc, rows over all rows (two halves on two threads for a large
 * matrix), finish. A dataset whose alloc failed is freed as usual by cs_dataset_free. */
cs_status cs_dataset_prepare_alloc(cs_dataset *d, cs_error *err);
void cs_dataset_prepare_rows(cs_dataset *d, size_t first, size_t count);
void cs_dataset_prepare_finish(cs_dataset *d, const struct cs_run *run);

/* Frees everything the dataset owns, then the struct itself. NULL is a no-op. */
void cs_dataset_free(cs_dataset *d);
/* Frees d->line and sets it NULL: the rows' line numbers only point a pairing error
 * (cs_compare_rows) into the file, and they are n words of the peak memory, so a caller that
 * pairs nothing drops them once loaded. Error messages then name no line. NULL-safe; the
 * thread that owns d, before it is shared. */
void cs_dataset_drop_lines(cs_dataset *d);

/* names[0..k) copied into one block of the class_names layout: k pointers followed by the text
 * (a NULL name stays NULL). The caller owns the block and frees it with free(). NULL when out
 * of memory. Any thread; names is only read. */
char **cs_names_pack(const char *const *names, size_t k);

/* Index of the class that `name` names under the rule of engine/classes.h (a class name,
 * the number a class is named by, an index 0..k-1 when no class is named by a number, or
 * `#N`), or -1. Builds a lookup table per call (O(k)); any thread. */
int cs_dataset_class_index(const cs_dataset *d, const char *name);

/* The same with the reason (CS_CLASS_*) in *why when it returns -1 (why may be NULL); also -1
 * with *why 0 when out of memory. */
int cs_dataset_class_find(const cs_dataset *d, const char *name, int *why);

/* Test hook: how many times cs_dataset_class_find has run in this process. Any thread. */
unsigned long cs_dataset_class_find_count(void);

/* Fills err for a class token that cs_dataset_class_find refused with `why`, prefixed by
 * `what` (e.g. "--lens class"): "WHAT: unknown class 'x' (K classes)", the classes.h wording
 * for numbers and positions, or out of memory (why 0). Returns the status set. */
cs_status cs_dataset_class_error(const cs_dataset *d, const char *what, const char *name, int why,
                                 cs_error *err);

#endif
