/* calscope engine: segmentation volumes reduced to exact statistics.
 *
 *   mapping   which probability channel is which class: softmax channels ↔ label values
 *             (--label-values 0,1,2,4 or bg=0,NCR=1,ED=2,ET=4), or independent sigmoid
 *             channels ↔ regions (--regions 'WT=1,2,4;TC=1,4;ET=4'); default softmax 0..C-1
 *             from the first case's channel count.
 *   plan      the cases: a manifest CSV `case,probs,labels` or two folders paired by file stem.
 *   checks    every case is refused, naming both files, when its numbers would be silently
 *             wrong: spatial shapes differ, affines differ beyond affine_tol, a channel count
 *             that is not the mapping's, a probability outside [0,1], softmax channels that do
 *             not sum to 1 within sum_tol, a label value the mapping does not have, a truncated
 *             or corrupt file (the reader's message).
 *   reduction each case is streamed into its slice of a cs_segstats (calscope/segstats.h):
 *             the label map is read whole as one class code per voxel, then the probability
 *             channels (the slowest axis, engine/volume/volume.h) in slabs of CS_REDUCE_SLAB values.
 *
 * Memory of one case in flight, per voxel of the case (V voxels):
 *   labels    1 byte (uint8 class code; 4 bytes when the mapping has more than 255 codes)
 *   softmax   + a running sum: 2 bytes (16-bit fixed point) when C·2^-15 <= sum_tol/4 (up to
 *             8 classes at the default 1e-3), else 4 (a float) — the sum check stays exact
 *             (case.c); 4 bytes running max (8 when the values are float64 or scaled); the
 *             argmax, which shares the code's byte when both fit in 4 bits (≤ 16 label values
 *             and classes; else 1 byte, 4 beyond 255): 7 bytes per voxel for float16/float32
 *             maps of ≤ 8 classes (BraTS 240×240×155: 62.5 MB; it was 9, and 18 before that);
 *             regions need no running values: 1 byte per voxel.
 *   plus one slab (CS_REDUCE_SLAB values as stored and a byte each: 640 KiB for float32; three
 *   when a helper thread reads), the readers' state (ISA-L's, minizip's) and the statistics
 *   (st->fine × k × 20 bytes per case). The cases in flight share o->memory for their per-voxel arrays and buffers: a case
 *   waits until it fits beside them, or until it is alone (budget.c), so a BraTS case (66 MiB,
 *   more than the default 48 MiB) is reduced alone whatever --threads says, and a case that runs
 *   while fewer cases than threads are in flight is read by a helper thread a slab ahead
 *   (stream.c), and the NLL terms of the slabs already binned are added by whichever of the two
 *   threads would otherwise wait: the decompression and part of the per-voxel work run beside
 *   the rest. Measured (/usr/bin/time -v, 2
 *   BraTS-size float32 .nii.gz cases, 4 classes): peak RSS 63 MiB with 1 thread and 63-65 MiB
 *   with 2 (were 83 and 163 MiB).
 *
 * Messages (CS_EINPUT, exit status 3, the loader's "FILE: reason" form; a voxel is named by its
 * 0-based indices fastest axis first, i,j,k = x,y,z of a NIfTI, [c, k, j, i] of a C-order npz):
 *   "P and L: spatial shapes differ: 4x5x6 (3 channels) vs 4x5x7 (fastest axis first)"
 *   "P and L: affines differ by 0.5, more than --affine-tol 0.001 (resampled or reoriented?)"
 *   "P: 3 channels, but --label-values 0,1,2,4 has 4 classes (labels: L)"
 *   "P: probability 1.2 outside [0,1] at voxel 1,2,3, channel 2 (labels: L)"
 *   "P: probabilities sum to 1.01, not 1 within 0.001 at voxel 1,2,3 (labels: L)"
 *   "L: label value 3 at voxel 1,2,3 is not in --label-values 0,1,2,4 (probabilities: P)"
 *   a reader's "FILE: reason" followed by " (labels: L)" or " (probabilities: P)"; a reader's
 *   corruption message instead of a refused value when that file's compressed stream proves
 *   corrupt once read to its end; "L: file changed while loading (probabilities: P)" when either
 *   file changed while its case was read.
 *
 * Ownership: every object here is created by its function and freed by its _free (NULL is a
 * no-op). Threads: the parsers and plans are single-threaded calls on their own objects;
 * cs_reduce_* run their cases on run->threads worker threads and may be called from any
 * thread. */
#ifndef CALSCOPE_REDUCE_H
#define CALSCOPE_REDUCE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "calscope/run.h"
#include "calscope/error.h"
#include "calscope/mapping.h"
#include "calscope/segstats.h"

#define CS_REDUCE_SLAB ((size_t)128 * 1024)   /* probability values read at a time */
#define CS_REDUCE_SUM_TOL_DEFAULT 1e-3        /* as the CSV loader's rows (cs_load_options) */
#define CS_REDUCE_AFFINE_TOL_DEFAULT 1e-3
#define CS_REDUCE_MEMORY_DEFAULT ((uint64_t)48 << 20) /* what the cases in flight hold (options) */

/* ---- the plan: which files make which case ------------------------------------------------ */

typedef struct cs_seg_case {
    char *name;
    char *probs, *labels;            /* paths to open */
    char *probs_rec, *labels_rec;    /* as recorded in the statistics file (as written in the
                                        manifest; DIR/FILE for folders) */
    uint64_t probs_size, labels_size;/* bytes on disk when the plan was made */
} cs_seg_case;

typedef struct cs_seg_plan {
    size_t n;
    cs_seg_case *cases;              /* ascending by name (strcmp) */
} cs_seg_plan;

/* A manifest CSV whose header is case,probs,labels (names any case, ',' ';' or tab, a UTF-8
 * BOM, CRLF and RFC 4180 quotes as for prediction files); paths relative to the manifest's
 * folder. Errors (CS_EINPUT) "FILE:LINE:COL: reason": a wrong header, a row without three
 * fields, an empty field, a duplicate case name, a file that cannot be found. */
cs_status cs_seg_plan_manifest(const char *path, cs_seg_plan **out, cs_error *err);
/* Two folders paired by stem: a probability file is CASE + suffix + extension (.nii, .nii.gz,
 * .npz, .npy; a suffix that ends in an extension fixes it: ".npz" picks nnU-Net's CASE.npz
 * beside its CASE.nii.gz), a label file CASE + extension. Other files are ignored. Errors
 * (CS_EINPUT) name both folders and the stem: a case with probabilities and no labels or the
 * reverse, two files with one stem, no case at all. */
cs_status cs_seg_plan_folders(const char *probs_dir, const char *labels_dir, const char *suffix,
                              cs_seg_plan **out, cs_error *err);
void cs_seg_plan_free(cs_seg_plan *p);

/* 1 when the file's first line (after a BOM) is the manifest header case,probs,labels; 0
 * otherwise, also when unreadable. */
int cs_seg_manifest_sniff(const char *path);

/* ---- the reduction ----------------------------------------------------------------------- */

typedef struct cs_reduce_options {
    int fine;                    /* F, 1..CS_SEGSTATS_FINE_MAX (default CS_SEGSTATS_FINE_DEFAULT) */
    double sum_tol;              /* softmax: |Σ_c p_c − 1| <= sum_tol per voxel */
    double affine_tol;           /* largest affine entry difference allowed */
    /* Bytes the cases in flight share — their per-voxel arrays (class codes, running max and
     * sum) and read buffers: a case starts when it fits beside those in flight, or when no
     * other case is in flight (default CS_REDUCE_MEMORY_DEFAULT). */
    uint64_t memory;
    const cs_seg_mapping *mapping; /* NULL: softmax 0..C-1 from the first case's channels */
    /* NULL, or plan->n flags the reduction sets (memory_order_release) to 1 when a case's
     * sums in the statistics are final; a reader that sees 1 (acquire) may read that case
     * while other cases are still being written (cs_segstats_subset). */
    atomic_uchar *done;
} cs_reduce_options;

void cs_reduce_options_default(cs_reduce_options *o);

/* Makes the statistics object the cases will be reduced into: zeroed sums, case names and
 * inputs from the plan, the mapping (opens the first case's probabilities when o->mapping is
 * NULL). Returns CS_OK with *out the caller's, or CS_EINPUT / CS_EUSAGE / CS_ENOMEM. */
cs_status cs_reduce_begin(const cs_seg_plan *plan, const cs_reduce_options *o, cs_segstats **out,
                          cs_error *err);
/* Reduces every case of the plan into st (from cs_reduce_begin with the same plan and
 * options): cases in parallel on run->threads, each case by one thread in file order, so the
 * sums do not depend on the thread count. Progress (run->progress_ppm) by values read,
 * weighted by file size; run->cancel is polled per slab. On failure the error of the first
 * failing case in plan order is returned (CS_EINPUT, CS_ENOMEM, CS_ECANCELLED) and st holds
 * partial sums (free it). */
cs_status cs_reduce_cases(cs_segstats *st, const cs_seg_plan *plan, const cs_reduce_options *o,
                          const cs_run *run, cs_error *err);
/* cs_reduce_begin + cs_reduce_cases; *out is the caller's on CS_OK, NULL otherwise. */
cs_status cs_reduce_run(const cs_seg_plan *plan, const cs_reduce_options *o, const cs_run *run,
                        cs_segstats **out, cs_error *err);

#endif
