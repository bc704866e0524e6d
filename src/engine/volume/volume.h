/* calscope engine: array files as segmentation and training pipelines write them, read as a
 * stream of values (NIfTI-1/2 `.nii` / `.nii.gz`, numpy `.npy`, and a member of an
 * `.npz` archive, stored or deflated, zip64, with data descriptors).
 *
 * A cs_vol is one open array. Its shape is given fastest-varying axis first (`dim[0]` varies
 * fastest in the file): a NIfTI (X, Y, Z, C) volume is {X, Y, Z, C}; a C-order npy of shape
 * (C, z, y, x) is {x, y, z, C}; a Fortran-order npy of shape (X, Y, Z, C) is {X, Y, Z, C}. So in
 * both of the layouts segmentation pipelines write, the channel is the slowest axis and one
 * channel is one contiguous block of voxels, in the same voxel order as a NIfTI label map.
 * cs_vol_read hands out the values in file order, converted to double exactly (float16, float32
 * and integers are exact in double), with NIfTI's scl_slope / scl_inter applied when the slope
 * is non-zero and not (1, 0). Memory: a reader holds a bounded buffer (≤ 1 MiB plus what ISA-L /
 * minizip keep), never the array.
 *
 * Readers are built on nifti_clib (libnifti2: header, scaling, znz gzip streams) and minizip
 * (zip64 archives); the .npy header is parsed here (no C library exists for it).
 *
 * Errors (CS_EINPUT) read "FILE: reason" or, inside an archive, "FILE[MEMBER]: reason", e.g.
 * "probs.npz[probabilities.npy]: truncated: 1200 of 4096 values". A file that ends early, a bad
 * CRC or a corrupt deflate stream is an error at the read that meets it, never short data.
 *
 * Ownership: cs_vol_open returns a reader the caller closes with cs_vol_close. Threads: one
 * reader belongs to one thread at a time; different readers are independent. */
#ifndef CALSCOPE_VOLUME_H
#define CALSCOPE_VOLUME_H

#include <stddef.h>
#include <stdint.h>

#include "calscope/error.h"

#define CS_VOL_MAX_DIMS 7

typedef enum cs_vol_format { CS_VOL_NIFTI, CS_VOL_NPY, CS_VOL_NPZ } cs_vol_format;

typedef enum cs_vol_dtype {
    CS_VDT_U8, CS_VDT_I8, CS_VDT_U16, CS_VDT_I16, CS_VDT_U32, CS_VDT_I32, CS_VDT_U64, CS_VDT_I64,
    CS_VDT_F16, CS_VDT_F32, CS_VDT_F64
} cs_vol_dtype;

typedef struct cs_vol_info {
    cs_vol_format format;
    cs_vol_dtype dtype;          /* as stored (before scaling) */
    const char *dtype_name;      /* "float32", "int16", ... for messages (static text) */
    int integer;                 /* 1 for integer dtypes with no scaling applied */
    int ndim;                    /* 1..CS_VOL_MAX_DIMS; NIfTI: length-1 dims from the 4th on
                                    (MONAI's (X, Y, Z, 1, C) is {X, Y, Z, C}) and trailing
                                    length-1 dims dropped; npy shape () is {1} */
    int64_t dim[CS_VOL_MAX_DIMS];/* fastest-varying first */
    uint64_t n_values;           /* product of dim */
    int has_affine;              /* NIfTI: sform when sform_code > 0, else qform when > 0 */
    double affine[4][4];         /* voxel index (i, j, k, 1) -> world, row-major */
    double scl_slope, scl_inter; /* applied by cs_vol_read (1, 0 when none) */
    const char *member;          /* npz: the member read, "KEY.npy" (owned by the reader), else NULL */
    int fortran_order;           /* npy/npz: stored in Fortran order (dim is then numpy's shape
                                    as written; in C order it is that shape reversed). Added for
                                    the classification loader: an (N, K) array cannot be told
                                    from a (K, N) one by dim alone */
} cs_vol_info;

typedef struct cs_vol cs_vol;

/* Opens `path` by its name: `.nii` / `.nii.gz` (NIfTI-1 or -2), `.npy`, `.npz`. For an npz,
 * `member` names the array (the key as given to np.savez, without ".npy"); NULL means the only
 * array of the archive, else "probabilities", else "softmax" (nnU-Net v2 / v1), else an error
 * listing the members. Returns CS_OK with *out set, or CS_EINPUT / CS_ENOMEM with err set and
 * *out NULL. */
cs_status cs_vol_open(const char *path, const char *member, cs_vol **out, cs_error *err);

/* Which of `keys` (array keys as given to np.savez, without ".npy"; at most 32) the .npz
 * archive at `path` holds: bit i of *found for keys[i]; `members` (cap bytes) gets its member
 * names for messages, "a.npy, b.npy" ("none" for an empty archive). Returns CS_OK, or
 * CS_EINPUT with err set as cs_vol_open words it (cannot open, bad magic, no central
 * directory). Holds nothing after it returns; any thread. */
cs_status cs_vol_npz_find(const char *path, const char *const *keys, int n_keys, unsigned *found,
                          char *members, size_t cap, cs_error *err);

/* The shape and type of an open reader (owned by it; valid until cs_vol_close). */
const cs_vol_info *cs_vol_info_of(const cs_vol *v);

/* Reads the next n values in file order into dst (converted and scaled). Returns CS_OK when all
 * n were read; CS_EINPUT with err set when the file ends early or is corrupt, or when n goes past
 * n_values. After a read failed so, every later read (and cs_vol_check_rest) gives that same
 * error: an inflater that met a corruption cannot go on. */
cs_status cs_vol_read(cs_vol *v, double *dst, size_t n, cs_error *err);

/* How a reader's values are stored, for turning them into doubles away from the reader. */
typedef struct cs_vol_storage {
    cs_vol_dtype dtype;
    size_t esize;                 /* bytes a value */
    double scl_slope, scl_inter;  /* applied when not (1, 0) */
} cs_vol_storage;

/* cs_vol_read in two steps, for a reader thread that hands values to another:
 * cs_vol_read_stored puts the next n values' stored bytes into dst (n * esize bytes, native
 * byte order), with cs_vol_read's checks and messages; cs_vol_to_double turns such bytes into
 * the doubles cs_vol_read gives, on any thread, from the storage alone (cs_vol_storage_of, taken
 * once). */
cs_status cs_vol_read_stored(cs_vol *v, void *dst, size_t n, cs_error *err);
cs_vol_storage cs_vol_storage_of(const cs_vol *v);
void cs_vol_to_double(const cs_vol_storage *f, const void *stored, size_t n, double *dst);

/* Whether the file changed since cs_vol_open began (size, modification time, or its name now
 * names another file: cs_load_changed's rule, as the CSV loader's): CS_OK when it did not (or
 * is no regular file), else CS_EINPUT "FILE: file changed while loading". A reader that spans
 * a whole use of the file (every read, and any reopening of it) asks at the end, so that values
 * half old, half new are refused. The reader's thread. */
cs_status cs_vol_unchanged(const cs_vol *v, cs_error *err);

/* Reads what is left of the array and throws it away, through the reader's chunk buffer
 * (<= 1 MiB), so that a source that ends in a check (a gzip stream's CRC and length, an npz
 * member's CRC) is checked: for a caller that refused a value and wants to know whether the
 * stream was corrupt rather than the value wrong. CS_OK when the check passes or the source
 * has none (.nii, .npy) and no read failed; else the reader's error (CS_EINPUT "corrupt ...", "bad CRC ...",
 * "truncated ..."), or CS_ENOMEM. The reader's thread. */
cs_status cs_vol_check_rest(cs_vol *v, cs_error *err);

/* Closes the reader and frees it. NULL is a no-op. */
void cs_vol_close(cs_vol *v);

/* Largest |a - b| over the 12 affine entries that matter (rows 0..2), for the pairing check. */
double cs_vol_affine_diff(const cs_vol_info *a, const cs_vol_info *b);

#endif
