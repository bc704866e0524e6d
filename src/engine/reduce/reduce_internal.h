/* calscope engine, reduce internals shared by src/engine/reduce/ (plans, checks, one case). */
#ifndef CALSCOPE_REDUCE_INTERNAL_H
#define CALSCOPE_REDUCE_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "calscope/reduce.h"
#include "engine/volume/volume.h"

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

/* ---- the memory budget the cases share (budget.c) --------------------------------------- */

typedef struct rd_budget {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint64_t limit, used;            /* bytes of per-voxel arrays: allowed, admitted */
    int in_flight;                   /* cases admitted and not yet released */
    int threads;                     /* the reduction's worker threads */
} rd_budget;

/* 0, or -1 when the mutex or condition cannot be made. rd_budget_destroy undoes it. */
int rd_budget_init(rd_budget *b, uint64_t limit, int threads);
void rd_budget_destroy(rd_budget *b);
/* Waits until `need` more bytes fit in the limit or no case is in flight, then admits them.
 * While waiting, stopped(arg) is polled (every 20 ms); when it returns non-zero nothing is
 * admitted and 0 is returned. Returns 1 when admitted, with *helper = 1 when fewer cases than
 * threads are now in flight (the case may read on a helper thread). Any thread. */
int rd_budget_acquire(rd_budget *b, uint64_t need, int (*stopped)(const void *), const void *arg, int *helper);
/* Gives back what rd_budget_acquire admitted. Any thread. */
void rd_budget_release(rd_budget *b, uint64_t need);

/* ---- the values of one case, in slabs (stream.c) ------------------------------------------ */

typedef struct rd_stream rd_stream;

/* The slabs a stream read by a helper thread holds at once (one without a helper): the
 * consumer's, one being read, one being scored (stream.c). */
#define RD_RING 3

/* A slab's values as their reader stored them: n values of how->esize bytes, turned into
 * doubles a block at a time (rd_values_block) by the thread that uses them, so that the doubles
 * stay in that thread's cache and only the stored bytes (4 a float32 value, 1 a uint8 label)
 * pass from the reader's thread to the others. */
typedef struct rd_values {
    const unsigned char *stored;
    const cs_vol_storage *how;
    size_t n;
} rd_values;

/* The values turned into doubles at a time (8 KiB of them). */
#define RD_BLOCK ((size_t)1024)

/* The block of v's values from at, as doubles into dst (RD_BLOCK of them, fewer at the end):
 * their count. Any thread. */
static inline size_t rd_values_block(const rd_values *v, size_t at, double *dst)
{
    size_t m = v->n - at < RD_BLOCK ? v->n - at : RD_BLOCK;
    cs_vol_to_double(v->how, v->stored + at * v->how->esize, m, dst);
    return m;
}

/* The second stage of a slab (stream.c): the values of part (0 the labels, 1 + j channel j) from
 * voxel pos, and the vals->n bytes the consumer wrote beside them (aux). */
typedef void (*rd_after_fn)(void *arg, size_t part, uint64_t pos, const rd_values *vals, const uint8_t *aux);

/* The bytes a stream's slot holds a value: as stored by the larger of the two readers' types,
 * and the after stage's byte (after set). Any thread. */
size_t rd_slab_value_bytes(const cs_vol *lv, const cs_vol *pv, int after);

/* The values of a slab: CS_REDUCE_SLAB, or what a test set with rd_slab_set (0: back to
 * CS_REDUCE_SLAB), so that small cases span many slabs. Set only while no reduction runs. Any
 * thread. */
size_t rd_slab(void);
void rd_slab_set(size_t values);

/* A stream of lv's V label values, then pv's C channels of V values, in slabs of
 * min(slab, what is left of the part) values. Each slab goes to the consumer
 * (rd_stream_next), then to after(after_arg, ...) (NULL: none) once the consumer has asked for
 * the next slab or closed the stream with finish set: slabs reach both stages in stream order.
 * threaded: a helper thread reads a slab ahead (falls back to the caller's thread, at those
 * same two points, when no thread can be made) and the after stage runs on whichever of the two
 * threads would otherwise wait, one slab at a time in stream order; the readers then belong to
 * the helper until rd_stream_close. *out is the caller's
 * (rd_stream_close); CS_ENOMEM otherwise. */
cs_status rd_stream_open(cs_vol *lv, cs_vol *pv, uint64_t V, size_t C, size_t slab, int threaded,
                         rd_after_fn after, void *after_arg, rd_stream **out, cs_error *err);
/* The next slab, of n values (the size above): *vals, and *aux (n bytes for the after stage,
 * when there is one; aux may be NULL) stay the consumer's until the next call or the close. A
 * reader's error (its message, without the other file) at the slab where it occurred. The
 * consumer's thread only. */
cs_status rd_stream_next(rd_stream *s, size_t n, rd_values *vals, uint8_t **aux, cs_error *err);
/* finish: the slab last handed out goes to the after stage too, and every after stage has run
 * when this returns (0: those still pending are dropped: the case failed). Stops and joins the
 * helper, frees the slabs. NULL is a no-op. The consumer's thread. */
void rd_stream_close(rd_stream *s, int finish);

/* ---- the 16-bit running sum of a softmax voxel (case.c, lanes.c) ------------------------- */

/* Steps of 2^-15, rounded to nearest, saturating at 65535: s >= 65535·2^-15 gives 65535, else
 * trunc(s·32768 + 0.5). case.c says why 16 bits suffice. Pure: any thread. */
#define RD_S16_STEP 0x1p-15
static inline uint16_t rd_s16_of(double s)
{
    return s >= 65535.0 * RD_S16_STEP ? (uint16_t)65535 : (uint16_t)(s * 32768.0 + 0.5);
}

/* ---- a channel's block in vector lanes (lanes.c) ------------------------------------------ */

/* n values of channel j from voxel v0 (n <= RD_BLOCK), and the case's per-voxel arrays from v0. */
typedef struct rd_lane_block {
    const double *p;
    size_t n, j;
    uint8_t *code;              /* class codes: softmax, code | argmax << 4; regions, one a byte */
    const uint8_t *ytab;        /* regions: code -> y */
    uint8_t ytab16[16];         /* softmax: code -> y */
    float *vmax;                /* softmax: the running max (NULL: regions) */
    uint16_t *vsum;             /* softmax: the 16-bit running sum */
    uint8_t *ys;                /* out: each value's y */
    const double *edges;        /* the fine edges (cs_ubin_edge), fine + 1 of them */
    int fine;
    uint64_t *cnt, *sy;         /* the channel's fine-bin sums */
    double *sp;
} rd_lane_block;

/* Whether the CPU has the lanes (AVX2) and a test has not turned them off. Any thread. */
int rd_lanes_available(void);
/* Tests: 0 turns the lanes off (rd_lanes_available says 0), 1 back on. Only while no
 * reduction runs. */
void rd_lanes_allow(int on);
/* The block as case.c's channel_slab would do it, to the same bits: 1. 0 when a value is
 * outside [0, 1] (or the lanes are not built in): nothing was changed, and channel_slab finds the
 * value and says so. The caller's thread; rd_lanes_available() must be 1. */
int rd_lanes_channel(const rd_lane_block *b);

/* The top-1 sums of a softmax case's n voxels from v0, once the last channel is in. */
typedef struct rd_top1_block {
    size_t n;
    const float *vmax;          /* the running max from v0 */
    const uint8_t *code;        /* code | argmax << 4 from v0 */
    uint8_t class16[16];        /* code -> class */
    const double *edges;
    int fine;
    uint64_t *tc, *tk;          /* the case's top-1 bin sums */
    double *ts;
} rd_top1_block;

/* The block's top-1 sums, as case.c's top1_slab adds them, to the same bits. The caller's
 * thread; rd_lanes_available() must be 1 (n <= RD_BLOCK). */
void rd_lanes_top1(const rd_top1_block *b);

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
    rd_budget *budget;               /* shared by the cases of the reduction */
} rd_case_ctx;

/* Reduces case ci into st's slices of that case. CS_ECANCELLED when the user cancelled or a
 * case before it failed. A case whose file changed while it was read is refused with that
 * file's "FILE: file changed while loading" (cs_vol_unchanged); one refused for a value whose
 * stream then proves corrupt, with the corruption. */
cs_status rd_reduce_case(const rd_case_ctx *x, size_t ci, cs_error *err);

/* Tests: fn(arg, ci) runs in each case after its last read and before the check that its files
 * did not change, on the case's thread (NULL: none), so that a test changes a file at that
 * point without a clock. Set only while no reduction runs. */
void rd_case_hook_set(void (*fn)(void *arg, size_t ci), void *arg);

#endif
