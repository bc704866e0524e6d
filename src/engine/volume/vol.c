/* Array readers: opening by name, the dtype table, conversion of stored values to double
 * (byte swap, float16, NIfTI scaling) through one bounded chunk, and the affine comparison.
 * The format sources (nifti.c, npy.c, npz.c) only hand out bytes. */
#include "engine/volume/vol_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#endif

#include "engine/filemap/filemap.h"
#include "engine/num/cpu.h"

static const struct {
    const char *name;
    size_t size;
    int integer;
} dtypes[] = {
    [CS_VDT_U8] = {"uint8", 1, 1},   [CS_VDT_I8] = {"int8", 1, 1},
    [CS_VDT_U16] = {"uint16", 2, 1}, [CS_VDT_I16] = {"int16", 2, 1},
    [CS_VDT_U32] = {"uint32", 4, 1}, [CS_VDT_I32] = {"int32", 4, 1},
    [CS_VDT_U64] = {"uint64", 8, 1}, [CS_VDT_I64] = {"int64", 8, 1},
    [CS_VDT_F16] = {"float16", 2, 0}, [CS_VDT_F32] = {"float32", 4, 0},
    [CS_VDT_F64] = {"float64", 8, 0},
};

void cs_vol_set_dtype(cs_vol *v, cs_vol_dtype t)
{
    v->info.dtype = t;
    v->info.dtype_name = dtypes[t].name;
    v->info.integer = dtypes[t].integer;
    v->esize = dtypes[t].size;
}

const char *cs_vol_where(const cs_vol *v, char *buf, size_t cap)
{
    if (v->member) snprintf(buf, cap, "%s[%s]", v->path, v->member);
    else snprintf(buf, cap, "%s", v->path);
    return buf;
}

/* The extension decides the format: a name is what the user and the manifest give. */
static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

cs_status cs_vol_open(const char *path, const char *member, cs_vol **out, cs_error *err)
{
    *out = NULL;
    cs_vol *v = calloc(1, sizeof *v);
    if (!v || !(v->path = strdup(path))) {
        free(v);
        return cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", path);
    }
    v->info.scl_slope = 1.0;
    v->info.scl_inter = 0.0;
    cs_status st;
    /* before any open: the file as it was when the reading began (cs_vol_unchanged) */
    int found = stat(path, &v->before) == 0;
    v->watch = found && S_ISREG(v->before.st_mode);
    /* one wording for every format (zlib and minizip would each word a directory their way) */
    int known = ends_with(path, ".nii") || ends_with(path, ".nii.gz") || ends_with(path, ".npy") ||
                ends_with(path, ".npz");
    if (known && found && S_ISDIR(v->before.st_mode)) {
        st = cs_error_set(err, CS_EINPUT, 0, 0, "%s: cannot read: %s", path, strerror(EISDIR));
    } else if (ends_with(path, ".nii") || ends_with(path, ".nii.gz")) {
        st = member ? cs_error_set(err, CS_EUSAGE, 0, 0, "%s: a member is only for .npz archives", path)
                    : cs_vol_open_nifti(v, err);
    } else if (ends_with(path, ".npy")) {
        st = member ? cs_error_set(err, CS_EUSAGE, 0, 0, "%s: a member is only for .npz archives", path)
                    : cs_vol_open_npy(v, err);
    } else if (ends_with(path, ".npz")) {
        st = cs_vol_open_npz(v, member, err);
    } else {
        st = cs_error_set(err, CS_EINPUT, 0, 0,
                          "%s: unknown array file extension (want .nii, .nii.gz, .npy or .npz)", path);
    }
    if (st != CS_OK) {
        cs_vol_close(v);
        return st;
    }
    v->info.member = v->member;
    *out = v;
    return CS_OK;
}

const cs_vol_info *cs_vol_info_of(const cs_vol *v)
{
    return &v->info;
}

void cs_vol_close(cs_vol *v)
{
    if (!v) return;
    if (v->ops && v->impl) v->ops->close(v->impl);
    free(v->buf);
    free(v->failed);
    free(v->member);
    free(v->path);
    free(v);
}

/* IEEE binary16 -> double, exact (every half is a double): a normal half's exponent and
 * mantissa move into a double's fields (no ldexp call: a float16 map converts ~9 million of
 * them per channel); a subnormal is m·2^-24, exact. */
static double half_to_double(uint16_t h)
{
    int sign = h >> 15, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double x;
    if (e == 0) x = (double)m * 0x1p-24;                          /* zero, subnormal */
    else if (e == 31) x = m ? NAN : INFINITY;
    else {
        uint64_t bits = (uint64_t)(e - 15 + 1023) << 52 | (uint64_t)m << 42;
        memcpy(&x, &bits, sizeof x);
    }
    return sign ? -x : x;
}

/* n halves -> doubles with the CPU's F16C conversion (exact, as half_to_double; a NaN stays a
 * NaN), 8 at a time, where the CPU has it: a float16 map's ~36 million halves cost 50 ms of CPU
 * through half_to_double, a tenth of that here. 0 when it has not (the caller converts). GCC
 * ends the function with vzeroupper, so the scalar code after it pays no AVX transition. */
#if defined(__GNUC__) && defined(__x86_64__)
__attribute__((target("avx,f16c"))) static void halves_f16c(const unsigned char *src, size_t n, double *dst)
{
    for (size_t i = 0; i + 8 <= n; i += 8) {
        __m256 f = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(src + 2 * i)));
        _mm256_storeu_pd(dst + i, _mm256_cvtps_pd(_mm256_castps256_ps128(f)));
        _mm256_storeu_pd(dst + i + 4, _mm256_cvtps_pd(_mm256_extractf128_ps(f, 1)));
    }
}
static size_t halves_fast(const unsigned char *src, size_t n, double *dst)
{
    if (!(cs_cpu_features() & CS_CPU_F16C)) return 0;
    halves_f16c(src, n, dst);
    return n - n % 8;
}
#else
static size_t halves_fast(const unsigned char *src, size_t n, double *dst)
{
    (void)src, (void)n, (void)dst;
    return 0;
}
#endif

static void swap_bytes(unsigned char *p, size_t n, size_t esize)
{
    for (size_t i = 0; i < n; i++, p += esize)
        for (size_t a = 0, b = esize - 1; a < b; a++, b--) {
            unsigned char t = p[a];
            p[a] = p[b];
            p[b] = t;
        }
}

/* floats and bytes -> doubles, four at a time in SSE2 (every x86-64 has it): a case's channels
 * are ~36 million floats turned into doubles twice (the channel pass, the scores), its labels
 * ~9 million bytes, and the scalar loop converts one a cycle at best. Exact either way. The
 * count done (n rounded down to 4); the caller converts the rest. */
#if defined(__GNUC__) && defined(__x86_64__)
static size_t floats_fast(const unsigned char *src, size_t n, double *dst)
{
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        __m128 f = _mm_loadu_ps((const float *)(const void *)(src + 4 * i));
        _mm_storeu_pd(dst + i, _mm_cvtps_pd(f));
        _mm_storeu_pd(dst + i + 2, _mm_cvtps_pd(_mm_movehl_ps(f, f)));
    }
    return i;
}
static size_t bytes_fast(const unsigned char *src, size_t n, double *dst)
{
    size_t i = 0;
    const __m128i zero = _mm_setzero_si128();
    for (; i + 4 <= n; i += 4) {
        int32_t four;
        memcpy(&four, src + i, 4);
        __m128i w = _mm_unpacklo_epi16(_mm_unpacklo_epi8(_mm_cvtsi32_si128(four), zero), zero);
        _mm_storeu_pd(dst + i, _mm_cvtepi32_pd(w));
        _mm_storeu_pd(dst + i + 2, _mm_cvtepi32_pd(_mm_shuffle_epi32(w, 0x0e)));
    }
    return i;
}
#else
static size_t floats_fast(const unsigned char *src, size_t n, double *dst)
{
    (void)src, (void)n, (void)dst;
    return 0;
}
static size_t bytes_fast(const unsigned char *src, size_t n, double *dst)
{
    (void)src, (void)n, (void)dst;
    return 0;
}
#endif

/* n stored values at src (native order by now) -> dst. memcpy per value: src need not be
 * aligned for the type. */
static void convert(cs_vol_dtype t, const unsigned char *src, size_t n, double *dst)
{
#define CONV(T) do { for (size_t i = 0; i < n; i++) { T x; memcpy(&x, src + i * sizeof x, sizeof x); dst[i] = (double)x; } } while (0)
    switch (t) {
    case CS_VDT_U8: {
        size_t done = bytes_fast(src, n, dst);
        src += done, dst += done, n -= done;
        CONV(uint8_t);
        break;
    }
    case CS_VDT_I8: CONV(int8_t); break;
    case CS_VDT_U16: CONV(uint16_t); break;
    case CS_VDT_I16: CONV(int16_t); break;
    case CS_VDT_U32: CONV(uint32_t); break;
    case CS_VDT_I32: CONV(int32_t); break;
    case CS_VDT_U64: CONV(uint64_t); break;
    case CS_VDT_I64: CONV(int64_t); break;
    case CS_VDT_F32: {
        size_t done = floats_fast(src, n, dst);
        src += done * sizeof(float), dst += done, n -= done;
        CONV(float);
        break;
    }
    case CS_VDT_F64: CONV(double); break;
    case CS_VDT_F16:
        for (size_t i = halves_fast(src, n, dst); i < n; i++) {
            uint16_t h;
            memcpy(&h, src + 2 * i, 2);
            dst[i] = half_to_double(h);
        }
        break;
    }
#undef CONV
}

/* Keeps a read's error (CS_EINPUT) for the reads after it. */
static cs_status remember(cs_vol *v, cs_status st, const cs_error *err)
{
    if (st == CS_EINPUT && !v->failed && (v->failed = malloc(sizeof *v->failed))) *v->failed = *err;
    return st;
}

/* "FILE: truncated: K of N values": the one wording of an array that ends early. */
static cs_status truncated(const cs_vol *v, uint64_t have, cs_error *err)
{
    char where[1200];
    return cs_error_set(err, CS_EINPUT, 0, 0, "%s: truncated: %llu of %llu values", cs_vol_where(v, where, sizeof where),
                        (unsigned long long)have, (unsigned long long)v->info.n_values);
}

cs_status cs_vol_check_fits(cs_vol *v, uint64_t bytes, cs_error *err)
{
    uint64_t have = bytes / v->esize;
    return have >= v->info.n_values ? CS_OK : truncated(v, have, err);
}

/* n more values' bytes from the source into dst (n * esize bytes), native order. */
static cs_status read_stored(cs_vol *v, unsigned char *dst, size_t n, cs_error *err)
{
    size_t got = 0;
    int last = v->done + n == v->info.n_values;
    if (v->failed) {
        *err = *v->failed;
        return err->code;
    }
    cs_status st = v->ops->read(v, dst, n * v->esize, &got, last, err);
    if (st != CS_OK) return remember(v, st, err);
    if (got < n * v->esize)
        return remember(v, truncated(v, v->done + got / v->esize, err), err);
    if (v->swap && v->esize > 1) swap_bytes(dst, n, v->esize);
    v->done += n;
    return CS_OK;
}

static cs_status past_the_end(const cs_vol *v, size_t n, cs_error *err)
{
    char where[1200];
    uint64_t left = v->info.n_values - v->done;
    if ((uint64_t)n <= left) return CS_OK;
    return cs_error_set(err, CS_EINPUT, 0, 0, "%s: read past the end: %zu values asked, %llu left",
                        cs_vol_where(v, where, sizeof where), n, (unsigned long long)left);
}

cs_status cs_vol_read_stored(cs_vol *v, void *dst, size_t n, cs_error *err)
{
    cs_status st = past_the_end(v, n, err);
    if (st != CS_OK || n == 0) return st;
    return read_stored(v, dst, n, err);
}

cs_vol_storage cs_vol_storage_of(const cs_vol *v)
{
    return (cs_vol_storage){ .dtype = v->info.dtype, .esize = v->esize, .scl_slope = v->info.scl_slope,
                            .scl_inter = v->info.scl_inter };
}

void cs_vol_to_double(const cs_vol_storage *f, const void *stored, size_t n, double *dst)
{
    convert(f->dtype, stored, n, dst);
    if (f->scl_slope != 1.0 || f->scl_inter != 0.0)
        for (size_t i = 0; i < n; i++) dst[i] = dst[i] * f->scl_slope + f->scl_inter;
}

/* The chunk buffer, made at the first use: a small array needs no full chunk (a case may open
 * a few readers). */
static cs_status chunk_buffer(cs_vol *v, cs_error *err)
{
    char where[1200];
    if (v->buf) return CS_OK;
    v->buf_cap = v->info.n_values < CSV_CHUNK_BYTES / v->esize ? (size_t)v->info.n_values * v->esize
                                                                : CSV_CHUNK_BYTES;
    if (!(v->buf = malloc(v->buf_cap ? v->buf_cap : 1)))
        return cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", cs_vol_where(v, where, sizeof where));
    return CS_OK;
}

cs_status cs_vol_read(cs_vol *v, double *dst, size_t n, cs_error *err)
{
    cs_status st = past_the_end(v, n, err);
    if (st != CS_OK || n == 0) return st;
    if ((st = chunk_buffer(v, err)) != CS_OK) return st;
    size_t per = v->buf_cap / v->esize;
    cs_vol_storage f = cs_vol_storage_of(v);
    while (n) {
        size_t m = n < per ? n : per;
        if ((st = read_stored(v, v->buf, m, err)) != CS_OK) return st;
        cs_vol_to_double(&f, v->buf, m, dst);
        dst += m;
        n -= m;
    }
    return CS_OK;
}

cs_status cs_vol_check_rest(cs_vol *v, cs_error *err)
{
    if (v->failed) {
        *err = *v->failed;
        return err->code;
    }
    if (!v->checksummed || v->done >= v->info.n_values) return CS_OK;
    cs_status st = chunk_buffer(v, err);
    size_t per = v->buf_cap / v->esize;
    while (st == CS_OK && v->done < v->info.n_values) {
        uint64_t left = v->info.n_values - v->done;
        st = read_stored(v, v->buf, left < per ? (size_t)left : per, err);
    }
    return st;
}

cs_status cs_vol_unchanged(const cs_vol *v, cs_error *err)
{
    if (!v->watch || !cs_load_changed(-1, v->path, &v->before)) return CS_OK;
    return cs_error_set(err, CS_EINPUT, 0, 0, "%s: file changed while loading", v->path);
}

double cs_vol_affine_diff(const cs_vol_info *a, const cs_vol_info *b)
{
    double d = 0.0;
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 4; c++) {
            double x = fabs(a->affine[r][c] - b->affine[r][c]);
            if (isnan(x)) return x;      /* a NaN entry wins: never "equal" */
            if (x > d) d = x;
        }
    return d;
}
