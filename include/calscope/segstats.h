/* calscope engine: exact sufficient statistics of segmentation predictions.
 *
 * A volume of V voxels with C probability channels is reduced, per case, to sums over F "fine" bins
 * of the metrics' uniform rule (engine/num/ubin.h) — fine bin i is (i/F, (i+1)/F], 0 in bin 0,
 * membership by cs_ubin(p, F) on the value as a double. For every M dividing F the coarse bin b is
 * exactly the union of fine bins [b·F/M, (b+1)·F/M): b/M and (b·F/M)/F are the same rational, so
 * their correctly rounded doubles are the same edge. Hence ECE / ACE / MCE for those M, the
 * per-case values (mL1-ECE/ACE/MCE) and the dataset reliability histogram are exact from the sums —
 * the same numbers `calscope report` gives on the voxels written as a per-voxel CSV, up to the
 * order of floating-point additions.
 *
 * Kept per case (the unit of evidence: cases are resampled, never voxels):
 *   class one-vs-rest  per (class j, fine bin i): count of voxels with p_j in i, Σ p_j, Σ y_j
 *   top-1              per fine bin i of the confidence max_j p_j: count, Σ conf, Σ correct
 *                      (softmax maps only; with independent sigmoid regions top-1 is undefined)
 *   scores             per class j: Σ (p_j − y_j)², Σ_{y_j=1} −ln max(p_j, 1e-15),
 *                      Σ_{y_j=0} −ln max(1 − p_j, 1e-15)
 * y_j is 1 when the voxel's label maps to class j (softmax: its label value is class j's value;
 * regions: its label value is one of region j's values). Brier = Σ_j sq / N and NLL =
 * Σ_j nll_pos / N for softmax maps (as for rows, g[y] clipped at 1e-15); for regions Brier and NLL
 * are the sums over regions of the binary ones, Σ_j sq / N and Σ_j (nll_pos + nll_neg) / N.
 *
 * Arrays are dense; index helpers below. File format (CSV, optionally gzip): docs/segmentation.md,
 * "Statistics files", written and read by cs_segstats_write / cs_segstats_read.
 *
 * Ownership: a cs_segstats owns every array and string it points to; cs_segstats_free releases
 * them. Threads: immutable once built; any number of threads may read one concurrently. */
#ifndef CALSCOPE_SEGSTATS_H
#define CALSCOPE_SEGSTATS_H

#include <stddef.h>
#include <stdint.h>

#include "calscope/error.h"

/* Default fine resolution: the least common multiple of 5, 10, 15, 20, 25, 30, 50 and 100. */
#define CS_SEGSTATS_FINE_DEFAULT 300
#define CS_SEGSTATS_FINE_MAX 100000

typedef enum cs_seg_kind { CS_SEG_SOFTMAX, CS_SEG_REGIONS } cs_seg_kind;

/* One input of a case, as recorded in the header (what was reduced, for provenance and for
 * refusing to merge the same case twice). */
typedef struct cs_seg_input {
    char *path;                  /* as written in the manifest / found in the folder */
    uint64_t size;               /* bytes on disk when reduced */
} cs_seg_input;

typedef struct cs_segstats {
    int fine;                    /* F */
    cs_seg_kind kind;
    size_t k;                    /* classes (softmax channels) or regions */
    char **class_names;          /* k, packed (cs_names_pack layout; free(class_names)) */
    /* The label mapping as given: softmax "0,1,2,4" (the label value of each channel); regions
     * "WT=1,2,4;TC=1,4;ET=4". Compared verbatim when merging. */
    char *mapping;
    size_t n_cases;
    char **case_names;           /* n_cases, ascending by strcmp (the writer's order), each
                                    malloc'd */
    cs_seg_input *probs_in, *labels_in;  /* n_cases each */
    uint64_t *voxels;            /* n_cases: voxels of each case */

    /* Class one-vs-rest, index cs_segstats_ci(st, case, class, bin). */
    uint64_t *cnt;
    double *sum_p;
    uint64_t *sum_y;
    /* Top-1 (NULL for regions), index cs_segstats_ti(st, case, bin). */
    uint64_t *t_cnt;
    double *t_sum_conf;
    uint64_t *t_sum_correct;
    /* Scores, index case * k + class. */
    double *sq_err, *nll_pos, *nll_neg;
} cs_segstats;

static inline size_t cs_segstats_ci(const cs_segstats *st, size_t c, size_t j, size_t i)
{
    return (c * st->k + j) * (size_t)st->fine + i;
}
static inline size_t cs_segstats_ti(const cs_segstats *st, size_t c, size_t i)
{
    return c * (size_t)st->fine + i;
}

/* A zeroed statistics object for n_cases cases (names, inputs NULL; arrays zero), with copies of
 * class_names (k) and mapping. Caller frees with cs_segstats_free. NULL when out of memory or
 * when the dense arrays would not fit in size_t. */
cs_segstats *cs_segstats_new(int fine, cs_seg_kind kind, size_t k, const char *const *class_names,
                             const char *mapping, size_t n_cases);

/* Frees everything st owns, then st. NULL is a no-op. */
void cs_segstats_free(cs_segstats *st);

/* Writes st to path ("-" = stdout); a name ending in ".gz" is gzip-compressed. Cases are written
 * in st's order (ascending names). Returns CS_OK or CS_EINPUT ("PATH: reason") / CS_ENOMEM. */
cs_status cs_segstats_write(const cs_segstats *st, const char *path, cs_error *err);

/* 1 when the file at path starts with the statistics header line (gzip or not); 0 otherwise,
 * also when it cannot be read (the caller's loader then reports that). */
int cs_segstats_sniff(const char *path);

/* Reads a statistics file. Returns CS_OK with *out owned by the caller, or CS_EINPUT with
 * "PATH:LINE:COL: reason" (bad header, bad field, a count that is not an integer, a bin outside
 * 0..F-1, a case or class not declared, a duplicate record) / CS_ENOMEM. A file is accepted only
 * whole: its last line ends with a line break; its class names are distinct and the mapping's;
 * every case has its K 's' records, bin counts adding up to its voxels and (softmax) one class
 * per voxel; every sum lies where its bin or its case's voxels put it. The sums are allocated
 * only once the case lines show the file has room for their records. Any thread. */
cs_status cs_segstats_read(const char *path, cs_segstats **out, cs_error *err);

/* The most text a statistics file read into memory (gzip'd, or from a pipe) may hold: past it
 * the file is refused, so a gzip bomb costs at most this. */
#define CS_SEGSTATS_TEXT_MAX ((uint64_t)1 << 32)

/* cs_segstats_read over text already in memory (a pipe's, inflated), named path in messages.
 * Takes text (malloc'd; freed here, whatever the outcome). Any thread. */
cs_status cs_segstats_parse_text(const char *path, char *text, size_t len, cs_segstats **out,
                                 cs_error *err);

/* 1 when bytes[0..n) begin with the statistics header line's "# calscope-stats " (the rule
 * cs_segstats_sniff applies to a file's first inflated bytes). Any thread. */
int cs_segstats_magic(const void *bytes, size_t n);

/* Sums shards: every input must have the same fine resolution, kind, classes and mapping
 * (else CS_EINPUT naming both files and what differs), and no case may appear in two of them
 * ("case 'X' is in both A and B"). The result has the union of the cases, ascending by name;
 * since a case's sums are copied, not re-added, merging shards gives the file a single run
 * over all cases writes. names[i] names shard i in messages. */
cs_status cs_segstats_merge(const cs_segstats *const *parts, const char *const *names, size_t n,
                            cs_segstats **out, cs_error *err);

/* The cases c with keep[c] != 0 (n_cases flags), in st's order, copied (names, inputs, sums):
 * a partially reduced set, or the cases a selection keeps. Caller frees with
 * cs_segstats_free. NULL when out of memory. (Added by the statistics helper: the reducer and
 * the selections both need it.) */
cs_segstats *cs_segstats_subset(const cs_segstats *st, const uint8_t *keep);

#endif
