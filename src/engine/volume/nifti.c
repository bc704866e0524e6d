/* NIfTI-1 / NIfTI-2 (.nii, .nii.gz) through nifti_clib: nifti_image_read(path, 0) parses and
 * byte-swaps the header (either version, either byte order) and builds the qform / sform
 * matrices; the voxels are then streamed through znz (plain or gzip) from vox_offset, a chunk
 * at a time, never the whole image. */
#define HAVE_ZLIB 1   /* the Debian libznz is built with zlib: the struct layout must match */
#include <nifti2_io.h>
#include <znzlib.h>

#include "engine/volume/vol_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

typedef struct nifti_src {
    znzFile fp;
    int gz;
} nifti_src;

/* nifti_clib prints its own diagnostics on stderr unless told not to; ours are the messages.
 * The level is a global of the library: set once. */
static pthread_once_t quiet_once = PTHREAD_ONCE_INIT;
static void quiet(void) { nifti_set_debug_level(0); }

/* zlib's message without the file name gzerror puts before it ("NAME: incorrect data check"). */
static const char *zmsg(gzFile g)
{
    int zerr;
    const char *m = gzerror(g, &zerr), *p = m, *q;
    while ((q = strstr(p, ": ")) != NULL) p = q + 2;
    return *p ? p : "read error";
}

static cs_status src_read(cs_vol *v, void *dst, size_t n, size_t *got, int last, cs_error *err)
{
    nifti_src *s = v->impl;
    int zerr = Z_OK;
    size_t r = znzread(dst, 1, n, s->fp);
    int failed = r > n;                          /* znzread passes gzread's -1 on as (size_t)-1 */
    if (failed) r = 0;
    if (s->gz && (failed || r < n)) {
        /* zlib says Z_BUF_ERROR for input that simply ends (a short read: vol.c words it
         * "truncated"); any other error is a corrupt stream */
        gzerror(s->fp->zfptr, &zerr);
        if (zerr != Z_OK && zerr != Z_BUF_ERROR) goto corrupt;
    } else if (failed) {
        goto corrupt;
    }
    *got = r;
    /* the gzip trailer (CRC, length) is checked only when zlib reaches it: read past the data */
    if (last && r == n && s->gz) {
        unsigned char probe[64];
        while (gzread(s->fp->zfptr, probe, sizeof probe) > 0) {}
        gzerror(s->fp->zfptr, &zerr);
        if (zerr != Z_OK) goto corrupt;
    }
    return CS_OK;
corrupt:
    if (s->gz) return cs_error_set(err, CS_EINPUT, 0, 0, "%s: corrupt gzip data: %s", v->path, zmsg(s->fp->zfptr));
    return cs_error_set(err, CS_EINPUT, 0, 0, "%s: cannot read: %s", v->path, strerror(errno));
}

static void src_close(void *impl)
{
    nifti_src *s = impl;
    if (s->fp) znzclose(s->fp);
    free(s);
}

static const cs_vol_ops nifti_ops = {src_read, src_close};

static int vdtype(int dt, cs_vol_dtype *t)
{
    switch (dt) {
    case NIFTI_TYPE_UINT8: *t = CS_VDT_U8; return 1;
    case NIFTI_TYPE_INT8: *t = CS_VDT_I8; return 1;
    case NIFTI_TYPE_UINT16: *t = CS_VDT_U16; return 1;
    case NIFTI_TYPE_INT16: *t = CS_VDT_I16; return 1;
    case NIFTI_TYPE_UINT32: *t = CS_VDT_U32; return 1;
    case NIFTI_TYPE_INT32: *t = CS_VDT_I32; return 1;
    case NIFTI_TYPE_UINT64: *t = CS_VDT_U64; return 1;
    case NIFTI_TYPE_INT64: *t = CS_VDT_I64; return 1;
    case NIFTI_TYPE_FLOAT32: *t = CS_VDT_F32; return 1;
    case NIFTI_TYPE_FLOAT64: *t = CS_VDT_F64; return 1;
    default: return 0;   /* complex, RGB(A), float128, binary */
    }
}

/* Shape: NIfTI dims 1..ndim, fastest first. Length-1 dims from the 4th on are dropped (MONAI
 * writes (X, Y, Z, 1, C): the 4th, time, is 1) and so are trailing length-1 dims, keeping at
 * least one. */
static cs_status shape(cs_vol *v, const nifti_image *nim, cs_error *err)
{
    int64_t nd = nim->dim[0];
    if (nd < 1 || nd > 7)
        return cs_error_set(err, CS_EINPUT, 0, 0, "%s: bad NIfTI header: %lld dimensions", v->path, (long long)nd);
    int m = 0;
    uint64_t total = 1;
    for (int64_t i = 1; i <= nd; i++) {
        int64_t d = nim->dim[i];
        if (d < 1)
            return cs_error_set(err, CS_EINPUT, 0, 0, "%s: bad NIfTI header: dim[%lld] = %lld", v->path,
                                (long long)i, (long long)d);
        if (total > UINT64_MAX / (uint64_t)d)
            return cs_error_set(err, CS_EINPUT, 0, 0, "%s: bad NIfTI header: too many voxels", v->path);
        total *= (uint64_t)d;
        if (d == 1 && i >= 4) continue;
        v->info.dim[m++] = d;
    }
    while (m > 1 && v->info.dim[m - 1] == 1) m--;
    v->info.ndim = m;
    v->info.n_values = total;
    return CS_OK;
}

cs_status cs_vol_open_nifti(cs_vol *v, cs_error *err)
{
    const char *path = v->path;
    /* calscope's own check first: nifti_clib trusts the sizes in the header */
    cs_status st = cs_vol_nifti_check_header(path, err);
    if (st != CS_OK) return st;
    pthread_once(&quiet_once, quiet);
    nifti_image *nim = nifti_image_read(path, 0);
    if (!nim) return cs_error_set(err, CS_EINPUT, 0, 0, "%s: unreadable NIfTI header", path);
    cs_vol_dtype t;
    if (!vdtype(nim->datatype, &t)) {
        st = cs_error_set(err, CS_EINPUT, 0, 0, "%s: unsupported NIfTI datatype %s (code %d)", path,
                          nifti_datatype_string(nim->datatype), nim->datatype);
        goto out;
    }
    cs_vol_set_dtype(v, t);
    v->info.format = CS_VOL_NIFTI;
    if ((st = shape(v, nim, err)) != CS_OK) goto out;
    if (nim->scl_slope != 0.0 && !(nim->scl_slope == 1.0 && nim->scl_inter == 0.0)) {
        v->info.scl_slope = nim->scl_slope;
        v->info.scl_inter = nim->scl_inter;
        v->info.integer = 0;
    }
    const nifti_dmat44 *m = nim->sform_code > 0 ? &nim->sto_xyz : nim->qform_code > 0 ? &nim->qto_xyz : NULL;
    if (m) {
        v->info.has_affine = 1;
        for (int r = 0; r < 4; r++)
            for (int c = 0; c < 4; c++) v->info.affine[r][c] = m->m[r][c];
    }
    v->swap = nim->byteorder != nifti_short_order();
    if (nim->nbyper != (int)v->esize) {
        st = cs_error_set(err, CS_EINPUT, 0, 0, "%s: bad NIfTI header: %d bytes per voxel for %s", path,
                          nim->nbyper, v->info.dtype_name);
        goto out;
    }
    nifti_src *s = calloc(1, sizeof *s);
    if (!s) { st = cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", path); goto out; }
    v->ops = &nifti_ops;
    v->impl = s;
    s->gz = nifti_is_gzfile(nim->iname);
    s->fp = znzopen(nim->iname, "rb", s->gz);
    if (znz_isnull(s->fp)) {
        st = cs_error_set(err, CS_EINPUT, 0, 0, "%s: cannot open: %s", nim->iname, strerror(errno));
        goto out;
    }
    if (nim->iname_offset < 0 || znzseek(s->fp, (znz_off_t)nim->iname_offset, SEEK_SET) < 0) {
        st = cs_error_set(err, CS_EINPUT, 0, 0, "%s: truncated: 0 of %llu values", path,
                          (unsigned long long)v->info.n_values);
        goto out;
    }
    st = CS_OK;
out:
    nifti_image_free(nim);
    return st;
}
