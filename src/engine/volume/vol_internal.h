/* calscope engine, array readers: what vol.c (dispatch, conversion, the chunk buffer) shares with
 * the format sources nifti.c, npy.c and npz.c.
 *
 * A format source only hands out raw bytes (ops->read); vol.c turns them into doubles (byte
 * swap, float16, scaling), bounds the buffer, counts values and words "truncated". So the
 * conversion rule and the wording of every data error live in one place. */
#ifndef CALSCOPE_VOL_INTERNAL_H
#define CALSCOPE_VOL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "engine/gz/gz.h"
#include "engine/volume/volume.h"

/* The chunk a reader converts at a time: the only buffer it holds besides the libraries'. */
#define CSV_CHUNK_BYTES ((size_t)1 << 20)

typedef struct cs_vol_ops {
    /* Reads up to n bytes into dst; *got = how many (fewer only at the end of the data).
     * `last` is 1 when these bytes end the array: the source then checks what only the end can
     * tell (gzip / zip CRC). Returns CS_OK or CS_EINPUT with err set (message complete). */
    cs_status (*read)(cs_vol *v, void *dst, size_t n, size_t *got, int last, cs_error *err);
    void (*close)(void *impl);
} cs_vol_ops;

struct cs_vol {
    cs_vol_info info;
    char *path;               /* as given */
    char *member;             /* npz member name ("probabilities.npy"), else NULL */
    size_t esize;             /* bytes per stored value */
    int swap;                 /* stored in the other byte order */
    uint64_t done;            /* values handed out so far */
    unsigned char *buf;       /* buf_cap <= CSV_CHUNK_BYTES, allocated at the first read */
    size_t buf_cap;
    const cs_vol_ops *ops;
    void *impl;
    struct stat before;       /* the file when cs_vol_open began (watch: a regular file) */
    int watch;
    int checksummed;          /* the source ends in a check (gzip / zip CRC): cs_vol_check_rest */
    cs_error *failed;         /* the first error of a read (CS_EINPUT), said again by every later
                                 one: an inflater that met a corruption cannot go on */
};

/* "FILE" or "FILE[MEMBER]" into buf (for messages). */
const char *cs_vol_where(const cs_vol *v, char *buf, size_t cap);

/* The array against the bytes of data its source holds after the header (what a reader would
 * get): CS_OK when n_values fit, else CS_EINPUT with the message the read that meets the end
 * would give, "FILE: truncated: K of N values" — said before anything is allocated for a shape
 * that a tiny file cannot hold. */
cs_status cs_vol_check_fits(cs_vol *v, uint64_t bytes, cs_error *err);

/* Sets dtype, dtype_name and esize together (one table). */
void cs_vol_set_dtype(cs_vol *v, cs_vol_dtype t);

/* Opens a NIfTI-1/2 file (.nii, .nii.gz) into v (path set, info zeroed). */
cs_status cs_vol_open_nifti(cs_vol *v, cs_error *err);

/* Checks the NIfTI-1/2 header of path (plain or gzip, either byte order) before nifti_clib reads
 * it: sizeof_hdr and magic, dim[0] in 1..7, every used dim positive, datatype one calscope reads
 * and bitpix its size, vox_offset at least the header's size, and the data the dims ask for no
 * more than the file can hold. *gz = 1 when the file is gzip (whatever its name says);
 * quatern[0..5] = quatern_b, quatern_c, quatern_d, qoffset_x, qoffset_y, qoffset_z as stored
 * (nifti_clib puts 0 for a NaN or an infinity there). Returns CS_OK or CS_EINPUT with err naming
 * the file and field.
 * Any thread; holds nothing. */
cs_status cs_vol_nifti_check_header(const char *path, int *gz, double quatern[6], cs_error *err);

/* Opens an .npy file into v. */
cs_status cs_vol_open_npy(cs_vol *v, cs_error *err);

/* Opens member `key` (NULL: the selection rule of volume.h) of an .npz archive into v. */
cs_status cs_vol_open_npz(cs_vol *v, const char *key, cs_error *err);

/* Parses an npy header read through v->ops (v->member / v->path name it in messages) and fills
 * v->info (ndim, dim, n_values, dtype) and v->swap. Leaves the source at the first data byte. */
cs_status cs_vol_npy_header(cs_vol *v, cs_error *err);

#endif
