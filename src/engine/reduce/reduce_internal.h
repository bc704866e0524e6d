/* calscope engine, reduce internals shared by src/engine/reduce/ (plans, checks, one case). */
#ifndef CALSCOPE_REDUCE_INTERNAL_H
#define CALSCOPE_REDUCE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "calscope/reduce.h"
#include "calscope/volume.h"

/* ---- plans (plan.c) ---------------------------------------------------------------------- */

/* Appends a case whose strings are copied. Returns 0, or -1 when out of memory. */
int rd_plan_add(cs_seg_plan *p, size_t *cap, const char *name, const char *probs,
                const char *labels, const char *probs_rec, const char *labels_rec);
/* Sorts the cases by name; returns the index of a case whose name repeats the one before it
 * (after sorting), or (size_t)-1. */
size_t rd_plan_sort(cs_seg_plan *p);
/* "DIR/NAME" (NAME alone when dir is "" or NAME is absolute). malloc'd, NULL when out of
 * memory. */
char *rd_path_join(const char *dir, const char *name);
/* Whether `name` ends in an array extension (.nii, .nii.gz, .npz, .npy; the name may be the
 * extension alone): its length, else 0. */
size_t rd_array_ext(const char *name);

/* ---- checks (check.c) -------------------------------------------------------------------- */

/* The shape of one case once both files are open and agree. */
typedef struct rd_shape {
    size_t channels;
    uint64_t voxels;
    int nd;                          /* spatial dims (trailing length-1 axes dropped) */
    int64_t dim[CS_VOL_MAX_DIMS];
} rd_shape;

/* Shapes, affines and the channel count against the mapping (m NULL: no channel check).
 * Fills *sh. Messages as reduce.h. */
cs_status rd_check_pair(const cs_seg_case *c, const cs_vol_info *pi, const cs_vol_info *li,
                        const cs_seg_mapping *m, double affine_tol, rd_shape *sh, cs_error *err);
/* The channel count of a probability file against a label map's shape (no mapping). */
cs_status rd_channels(const cs_seg_case *c, const cs_vol_info *pi, const cs_vol_info *li,
                      rd_shape *sh, cs_error *err);
/* Voxel v as "i,j,k" over the spatial dims. */
void rd_voxel_text(const rd_shape *sh, uint64_t v, char *buf, size_t size);

/* Appends " (WHAT: OTHER)" to a reader's CS_EINPUT message, so that every refusal names both
 * files of the case. Returns err->code. */
cs_status rd_also(cs_error *err, const char *what, const char *other);

/* ---- one case (case.c) ------------------------------------------------------------------- */

typedef struct rd_case_ctx {
    cs_segstats *st;
    const cs_seg_plan *plan;
    const cs_reduce_options *o;
    const cs_seg_mapping *m;
    const double *edges;             /* fine + 1 */
    const atomic_int *cancel;        /* user's, may be NULL */
    atomic_size_t *first_fail;       /* lowest failing case index so far (SIZE_MAX: none) */
    /* progress: each case weighs its files' bytes; values read advance it */
    atomic_uint_fast64_t *units_done;
    uint64_t units_total;
    atomic_int *progress_ppm;
} rd_case_ctx;

/* Reduces case ci into st's slices of that case. CS_ECANCELLED when the user cancelled or a
 * case before it failed. */
cs_status rd_reduce_case(const rd_case_ctx *x, size_t ci, cs_error *err);

#endif
