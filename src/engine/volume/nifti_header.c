/* The NIfTI header, checked by calscope before nifti_clib sees it. nifti_clib trusts dim[0]
 * (a NIfTI-2 file with dim[0] = 2^40 overflows its stack in nifti_convert_n2hdr2nim), so every
 * field that sizes something is read here from the raw bytes — NIfTI-1 (348 bytes) or NIfTI-2
 * (540), either byte order, plain or gzip — and refused with the file and the field named. */
#define HAVE_ZLIB 1   /* as nifti.c: the Debian libznz is built with zlib */
#include <nifti2_io.h>

#include "engine/volume/vol_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "engine/gz/gz.h"

#define N1_SIZE 348
#define N2_SIZE 540
/* the largest image calscope streams: 1 TiB of voxel data */
#define MAX_DATA_BYTES ((uint64_t)1 << 40)

typedef struct raw_header {
    const unsigned char *b;
    int swap;            /* stored in the other byte order than little-endian reading gives */
    int version;         /* 1 or 2 */
} raw_header;

static uint64_t get(const raw_header *h, size_t off, size_t n)
{
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = h->swap ? i : n - 1 - i;    /* little-endian: the last byte is the highest */
        x = x << 8 | h->b[off + k];
    }
    return x;
}

static int64_t get_i16(const raw_header *h, size_t off) { return (int16_t)get(h, off, 2); }
static int64_t get_i64(const raw_header *h, size_t off) { return (int64_t)get(h, off, 8); }

static double get_f32(const raw_header *h, size_t off)
{
    uint32_t u = (uint32_t)get(h, off, 4);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static int64_t dim_of(const raw_header *h, int i)
{
    return h->version == 1 ? get_i16(h, 40 + 2 * (size_t)i) : get_i64(h, 16 + 8 * (size_t)i);
}

/* The stored value bytes of the datatypes calscope reads; 0 for every other code. */
static unsigned datatype_bytes(int64_t dt)
{
    switch (dt) {
    case 2: case 256: return 1;          /* uint8, int8 */
    case 4: case 512: return 2;          /* int16, uint16 */
    case 8: case 768: case 16: return 4; /* int32, uint32, float32 */
    case 1024: case 1280: case 64: return 8;  /* int64, uint64, float64 */
    default: return 0;
    }
}

/* Reads the first (up to) 540 bytes through zlib (plain files pass as they are). *size is the
 * file's size on disk, *gz whether it is gzip. */
static cs_status read_head(const char *path, unsigned char *b, size_t *got, uint64_t *size, int *gz,
                           cs_error *err)
{
    gzFile g = gzopen(path, "rb");
    if (!g) return cs_error_set(err, CS_EINPUT, 0, 0, "%s: cannot open: %s", path, strerror(errno));
    int k = gzread(g, b, N2_SIZE), zerr = Z_OK;
    const char *zm = gzerror(g, &zerr);
    if (k < 0 || (zerr != Z_OK && zerr != Z_BUF_ERROR)) {
        /* zlib's message without the file name it puts before it ("NAME: incorrect data check") */
        const char *p = zm, *q;
        while ((q = strstr(p, ": ")) != NULL) p = q + 2;
        cs_error_set(err, CS_EINPUT, 0, 0, "%s: corrupt gzip data: %s", path, *p ? p : "read error");
        gzclose(g);
        return CS_EINPUT;
    }
    *got = (size_t)k;
    *gz = !gzdirect(g);
    gzclose(g);
    struct stat sb;
    *size = stat(path, &sb) == 0 ? (uint64_t)sb.st_size : 0;
    return CS_OK;
}

/* sizeof_hdr (348 or 540, either byte order) and the magic of a single-file NIfTI. */
static cs_status version_of(const char *path, const unsigned char *b, size_t got, raw_header *h, cs_error *err)
{
    h->b = b;
    for (h->swap = 0; h->swap < 2; h->swap++) {
        uint64_t n = got >= 4 ? get(h, 0, 4) : 0;
        h->version = n == N1_SIZE ? 1 : n == N2_SIZE ? 2 : 0;
        if (h->version) break;
    }
    if (!h->version) return cs_error_set(err, CS_EINPUT, 0, 0, "%s: not a NIfTI file (bad header size)", path);
    size_t need = h->version == 1 ? N1_SIZE : N2_SIZE;
    if (got < need)
        return cs_error_set(err, CS_EINPUT, 0, 0, "%s: NIfTI header: truncated (%zu of %zu bytes)", path, got, need);
    const char *magic = h->version == 1 ? "n+1" : "n+2\0\r\n\032\n";
    if (memcmp(b + (h->version == 1 ? 344 : 4), magic, h->version == 1 ? 4 : 8) != 0)
        return cs_error_set(err, CS_EINPUT, 0, 0, "%s: NIfTI header: bad magic (want 'n+%d', a single-file NIfTI-%d)",
                            path, h->version, h->version);
    return CS_OK;
}

/* dim[0] in 1..7, dim[1..dim[0]] positive; *values = their product (bounded by the caller). */
static cs_status check_dims(const char *path, const raw_header *h, uint64_t *values, cs_error *err)
{
    int64_t nd = dim_of(h, 0);
    if (nd < 1 || nd > 7)
        return cs_error_set(err, CS_EINPUT, 0, 0, "%s: NIfTI header: dim[0] = %" PRId64 ", must be 1..7", path, nd);
    uint64_t total = 1;
    for (int i = 1; i <= nd; i++) {
        int64_t d = dim_of(h, i);
        if (d < 1)
            return cs_error_set(err, CS_EINPUT, 0, 0, "%s: NIfTI header: dim[%d] = %" PRId64 ", must be positive",
                                path, i, d);
        /* saturate: the caller's bound refuses anything this large */
        total = total > UINT64_MAX / (uint64_t)d ? UINT64_MAX : total * (uint64_t)d;
    }
    *values = total;
    return CS_OK;
}

/* datatype one calscope reads (the name for the others comes from the caller's table) and
 * bitpix its size. *esize = bytes per value. */
static cs_status check_type(const char *path, const raw_header *h, unsigned *esize, cs_error *err)
{
    int64_t dt = get_i16(h, h->version == 1 ? 70 : 12), bitpix = get_i16(h, h->version == 1 ? 72 : 14);
    *esize = datatype_bytes(dt);
    const char *name = nifti_datatype_string((int)dt);
    if (!*esize && strchr(name, '*'))    /* nifti_clib's "**ILLEGAL**": no datatype at all */
        return cs_error_set(err, CS_EINPUT, 0, 0, "%s: unsupported NIfTI datatype code %" PRId64, path, dt);
    if (!*esize)
        return cs_error_set(err, CS_EINPUT, 0, 0, "%s: unsupported NIfTI datatype %s (code %" PRId64 ")", path,
                            name, dt);
    if (bitpix != 8 * (int64_t)*esize)
        return cs_error_set(err, CS_EINPUT, 0, 0, "%s: NIfTI header: bitpix = %" PRId64 ", must be %u for %s",
                            path, bitpix, 8 * *esize, name);
    return CS_OK;
}

/* vox_offset: a whole number of bytes, at least the header's size; NIfTI-1 stores it as a float. */
static cs_status check_offset(const char *path, const raw_header *h, uint64_t *off, cs_error *err)
{
    unsigned hsize = h->version == 1 ? N1_SIZE : N2_SIZE;
    if (h->version == 1) {
        double f = get_f32(h, 108);
        if (!(f >= hsize && f <= 1e15 && f == floor(f)))
            return cs_error_set(err, CS_EINPUT, 0, 0, "%s: NIfTI header: vox_offset = %.9g, must be a whole number "
                                "of bytes, at least %u", path, f, hsize);
        *off = (uint64_t)f;
    } else {
        int64_t o = get_i64(h, 168);
        if (o < (int64_t)hsize)
            return cs_error_set(err, CS_EINPUT, 0, 0, "%s: NIfTI header: vox_offset = %" PRId64 ", must be at least %u",
                                path, o, hsize);
        *off = (uint64_t)o;
    }
    return CS_OK;
}

/* The data the header asks for must fit in what the file can hold: a plain file exactly, a gzip
 * stream at most what its size inflates to (cs_gz_most_inflated); and never more than
 * MAX_DATA_BYTES. */
static cs_status check_fits(const char *path, uint64_t values, unsigned esize, uint64_t off, uint64_t size,
                            int gz, cs_error *err)
{
    uint64_t bytes = values > MAX_DATA_BYTES / esize ? UINT64_MAX : values * esize;
    if (bytes > MAX_DATA_BYTES)
        return cs_error_set(err, CS_EINPUT, 0, 0, "%s: NIfTI header: the dims ask for %" PRIu64 " values, more "
                            "than the %" PRIu64 " bytes of data calscope reads", path, values, MAX_DATA_BYTES);
    if (!gz && off > size)
        return cs_error_set(err, CS_EINPUT, 0, 0, "%s: NIfTI header: vox_offset = %" PRIu64 " is beyond the end of "
                            "the file (%" PRIu64 " bytes)", path, off, size);
    if (!gz && off + bytes > size)
        return cs_error_set(err, CS_EINPUT, 0, 0, "%s: NIfTI header: the dims ask for %" PRIu64 " values, %" PRIu64
                            " bytes from vox_offset %" PRIu64 ", and the file has %" PRIu64 " bytes (truncated?)",
                            path, values, bytes, off, size);
    uint64_t cap = cs_gz_most_inflated(size);
    if (gz && off + bytes > cap)
        return cs_error_set(err, CS_EINPUT, 0, 0, "%s: NIfTI header: the dims ask for %" PRIu64 " values, %" PRIu64
                            " bytes from vox_offset %" PRIu64 ", and %" PRIu64 " bytes of gzip hold at most %"
                            PRIu64, path, values, bytes, off, size, cap);
    return CS_OK;
}

/* The quaternion and offsets of the qform, as stored (NIfTI-1: floats from byte 256, NIfTI-2:
 * doubles from byte 352). */
static void qform_fields(const raw_header *h, double q[6])
{
    for (size_t i = 0; i < 6; i++) {
        if (h->version == 1) {
            q[i] = get_f32(h, 256 + 4 * i);
        } else {
            uint64_t u = get(h, 352 + 8 * i, 8);
            memcpy(&q[i], &u, sizeof q[i]);
        }
    }
}

cs_status cs_vol_nifti_check_header(const char *path, int *is_gz, double quatern[6], cs_error *err)
{
    unsigned char b[N2_SIZE];
    size_t got = 0;
    uint64_t size = 0, values = 0, off = 0;
    int gz = 0;
    unsigned esize = 0;
    raw_header h;
    cs_status st;
    if ((st = read_head(path, b, &got, &size, &gz, err)) != CS_OK) return st;
    *is_gz = gz;
    if ((st = version_of(path, b, got, &h, err)) != CS_OK) return st;
    qform_fields(&h, quatern);
    if ((st = check_dims(path, &h, &values, err)) != CS_OK) return st;
    if ((st = check_type(path, &h, &esize, err)) != CS_OK) return st;
    if ((st = check_offset(path, &h, &off, err)) != CS_OK) return st;
    return check_fits(path, values, esize, off, size, gz, err);
}
