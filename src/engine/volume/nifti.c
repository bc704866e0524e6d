/* NIfTI-1 / NIfTI-2 (.nii, .nii.gz): calscope checks the raw header first (nifti_header.c);
 * nifti_clib's nifti_image_read(path, 0) then parses and byte-swaps it (either version, either
 * byte order) and builds the qform / sform matrices. The voxels are streamed from vox_offset a
 * chunk at a time, never the whole image: a gzip file through ISA-L's inflate (engine/gz), a
 * plain one through znz. */
#define HAVE_ZLIB 1   /* the Debian libznz is built with zlib: the struct layout must match */
#include <nifti2_io.h>
#include <znzlib.h>

#include "engine/volume/vol_internal.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct nifti_src {
    znzFile fp;      /* a plain file */
    cs_gz *gz;       /* a gzip file */
} nifti_src;

/* nifti_clib prints its own diagnostics on stderr unless told not to; ours are the messages.
 * The level is a global of the library: set once. */
static pthread_once_t quiet_once = PTHREAD_ONCE_INIT;
static void quiet(void) { nifti_set_debug_level(0); }

static cs_status gz_failed(cs_vol *v, int rc, const char *why, cs_error *err)
{
    if (rc == -1) return cs_error_set(err, CS_EINPUT, 0, 0, "%s: corrupt gzip data: %s", v->path, why);
    return cs_error_set(err, CS_EINPUT, 0, 0, "%s: cannot read: %s", v->path, strerror(errno));
}

/* The gzip source: a short read is the caller's "truncated"; the trailer (CRC, length) is
 * checked only when the inflater reaches it, so the read that ends the array reads past the
 * data, through the last member. */
static cs_status gz_src_read(cs_vol *v, cs_gz *g, void *dst, size_t n, size_t *got, int last, cs_error *err)
{
    const char *why = NULL;
    int rc = cs_gz_read(g, dst, n, got, &why);
    if (rc != 0) return gz_failed(v, rc, why, err);
    if (last && *got == n) {
        unsigned char probe[4096];
        size_t k;
        do {
            if ((rc = cs_gz_read(g, probe, sizeof probe, &k, &why)) != 0) return gz_failed(v, rc, why, err);
        } while (k > 0);
        /* zlib's words for a file that ends inside the last member's trailer */
        if (!cs_gz_finished(g)) return gz_failed(v, -1, "unexpected end of file", err);
    }
    return CS_OK;
}

static cs_status src_read(cs_vol *v, void *dst, size_t n, size_t *got, int last, cs_error *err)
{
    nifti_src *s = v->impl;
    if (s->gz) return gz_src_read(v, s->gz, dst, n, got, last, err);
    size_t r = znzread(dst, 1, n, s->fp);
    if (r > n) /* znzread passes a -1 on as (size_t)-1 */
        return cs_error_set(err, CS_EINPUT, 0, 0, "%s: cannot read: %s", v->path, strerror(errno));
    *got = r;
    return CS_OK;
}

static void src_close(void *impl)
{
    nifti_src *s = impl;
    if (s->fp) znzclose(s->fp);
    cs_gz_close(s->gz);
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

/* Opens the data stream and moves it to vox_offset. */
static cs_status open_data(cs_vol *v, nifti_src *s, int gz, int64_t offset, cs_error *err)
{
    if (gz ? !(s->gz = cs_gz_open(v->path)) : znz_isnull(s->fp = znzopen(v->path, "rb", 0)))
        return cs_error_set(err, errno == ENOMEM ? CS_ENOMEM : CS_EINPUT, 0, 0, "%s: cannot open: %s", v->path,
                            strerror(errno));
    int reached = offset >= 0;
    if (reached && !gz) reached = znzseek(s->fp, (znz_off_t)offset, SEEK_SET) >= 0;
    for (int64_t left = offset; reached && gz && left > 0;) {
        unsigned char skip[4096];
        size_t want = left < (int64_t)sizeof skip ? (size_t)left : sizeof skip, got = 0;
        const char *why = NULL;
        int rc = cs_gz_read(s->gz, skip, want, &got, &why);
        if (rc != 0) return gz_failed(v, rc, why, err);
        reached = got == want;
        left -= (int64_t)got;
    }
    if (!reached)
        return cs_error_set(err, CS_EINPUT, 0, 0, "%s: truncated: 0 of %llu values", v->path,
                            (unsigned long long)v->info.n_values);
    return CS_OK;
}

/* nifti_clib builds the qform from a quaternion and offsets in which it has put 0 for each NaN
 * or infinity (its FIXED_FLOAT): a broken qform would pass for a plain one. The value as
 * stored goes back where it acts: an offset into its row's translation, a quaternion entry
 * into the whole rotation (every element depends on it), so that the pairing check refuses the
 * affine, naming the element. */
static void unfixed_qform(cs_vol *v, const double quatern[6])
{
    for (int i = 0; i < 3; i++)
        if (!isfinite(quatern[i]))
            for (int r = 0; r < 3; r++)
                for (int c = 0; c < 3; c++) v->info.affine[r][c] = quatern[i];
    for (int i = 0; i < 3; i++)
        if (!isfinite(quatern[3 + i])) v->info.affine[i][3] = quatern[3 + i];
}

cs_status cs_vol_open_nifti(cs_vol *v, cs_error *err)
{
    const char *path = v->path;
    /* calscope's own check first: nifti_clib trusts the sizes in the header */
    int gz = 0;
    double quatern[6];
    cs_status st = cs_vol_nifti_check_header(path, &gz, quatern, err);
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
        if (m == &nim->qto_xyz) unfixed_qform(v, quatern);
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
    v->checksummed = gz;
    if ((st = open_data(v, s, gz, nim->iname_offset, err)) != CS_OK) goto out;
    st = CS_OK;
out:
    nifti_image_free(nim);
    return st;
}
