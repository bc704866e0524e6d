/* The array readers (engine/volume/volume.h) over files written by the real writers: nibabel for
 * NIfTI-1/2, numpy's save / savez / savez_compressed for npy and npz. tools/gen/make_vol_fixtures.py
 * writes them into tests/fixtures/vol/ with expected.txt, the values each writer was given (as
 * %.17g), so every value read is compared, bit for bit, with an independent source. Broken
 * copies (cut short, a flipped byte) check each refusal verbatim. Run from the repository root. */
#include "support/cs_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/volume/volume.h"
#include "engine/volume/vol_internal.h"

#include <zlib.h>

#define FIX "tests/fixtures/vol/"

/* One expected.txt line: FILE MEMBER NDIM DIM... DTYPE INTEGER N VALUE... */
static void check_line(char *line)
{
    char *save = NULL;
    char *file = strtok_r(line, " \n", &save), *member = strtok_r(NULL, " \n", &save);
    int ndim = atoi(strtok_r(NULL, " \n", &save));
    int64_t dim[CS_VOL_MAX_DIMS];
    for (int i = 0; i < ndim; i++) dim[i] = atoll(strtok_r(NULL, " \n", &save));
    char *dtype = strtok_r(NULL, " \n", &save);
    int integer = atoi(strtok_r(NULL, " \n", &save));
    size_t n = (size_t)atoll(strtok_r(NULL, " \n", &save));
    double *want = malloc((n + 1) * sizeof *want), *got = malloc((n + 1) * sizeof *got);
    assert_non_null(want);
    assert_non_null(got);
    for (size_t i = 0; i < n; i++) want[i] = strtod(strtok_r(NULL, " \n", &save), NULL);

    char path[512], key[128];
    snprintf(path, sizeof path, FIX "%s", file);
    const char *k = NULL;
    if (strcmp(member, "-") != 0) {
        snprintf(key, sizeof key, "%.*s", (int)(strlen(member) - 4), member);   /* without .npy */
        k = key;
    }
    cs_vol *v = NULL;
    cs_error err;
    cs_error_clear(&err);
    if (cs_vol_open(path, k, &v, &err) != CS_OK) fail_msg("%s: %s", path, err.msg);
    const cs_vol_info *in = cs_vol_info_of(v);
    if (in->ndim != ndim) fail_msg("%s: ndim %d, want %d", path, in->ndim, ndim);
    for (int i = 0; i < ndim; i++)
        if (in->dim[i] != dim[i]) fail_msg("%s: dim[%d] = %lld, want %lld", path, i, (long long)in->dim[i], (long long)dim[i]);
    if (strcmp(in->dtype_name, dtype) != 0) fail_msg("%s: dtype %s, want %s", path, in->dtype_name, dtype);
    assert_int_equal(in->integer, integer);
    assert_int_equal(in->n_values, n);
    if (k) assert_string_equal(in->member, member);
    else assert_null(in->member);
    /* two reads of uneven size: values carry across the reader's chunks */
    size_t first = n > 7 ? 7 : n;
    if (cs_vol_read(v, got, first, &err) != CS_OK) fail_msg("%s: %s", path, err.msg);
    if (cs_vol_read(v, got + first, n - first, &err) != CS_OK) fail_msg("%s: %s", path, err.msg);
    for (size_t i = 0; i < n; i++)
        if (memcmp(&got[i], &want[i], sizeof got[i]) != 0)   /* bit for bit: -0.0 too */
            fail_msg("%s: value %zu = %.17g, want %.17g", path, i, got[i], want[i]);
    /* nothing is left to read */
    char msg[600];
    snprintf(msg, sizeof msg, "%s%s%s%s: read past the end: 1 values asked, 0 left", path,
             k ? "[" : "", k ? member : "", k ? "]" : "");
    assert_int_equal(cs_vol_read(v, got, 1, &err), CS_EINPUT);
    assert_string_equal(err.msg, msg);
    cs_vol_close(v);
    free(want);
    free(got);
}

static void test_every_value_as_written(void **state)
{
    (void)state;
    FILE *f = fopen(FIX "expected.txt", "r");
    if (!f) fail_msg(FIX "expected.txt: cannot open (run the tests from the repository root)");
    static char line[1 << 16];
    int lines = 0;
    while (fgets(line, sizeof line, f)) {
        check_line(line);
        lines++;
    }
    fclose(f);
    assert_int_equal(lines, 40);   /* every fixture was seen (the generator writes 40) */
}

static cs_vol *open_ok(const char *path, const char *member)
{
    cs_vol *v = NULL;
    cs_error err;
    if (cs_vol_open(path, member, &v, &err) != CS_OK) fail_msg("%s: %s", path, err.msg);
    return v;
}

/* The sform of affine() in make_vol_fixtures.py; NIfTI-1 keeps it in float32, NIfTI-2 in
 * float64. The qform-only file gives nibabel's own reading of its quaternion. */
static void test_affine(void **state)
{
    (void)state;
    static const double a[3][4] = {{0.9, 0.1, 0.0, -90.5}, {-0.1, 1.1, 0.0, 12.25}, {0.0, 0.0, 2.5, 3.0}};
    cs_vol *v1 = open_ok(FIX "n1_f32.nii", NULL), *v2 = open_ok(FIX "n2_f32.nii.gz", NULL);
    const cs_vol_info *i1 = cs_vol_info_of(v1), *i2 = cs_vol_info_of(v2);
    assert_int_equal(i1->has_affine, 1);
    assert_int_equal(i2->has_affine, 1);
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 4; c++) {
            assert_true(i1->affine[r][c] == (double)(float)a[r][c]);
            assert_true(i2->affine[r][c] == a[r][c]);
        }
    assert_true(i1->affine[3][3] == 1.0 && i1->affine[3][0] == 0.0);
    /* float32 rounding of 0.9, 1.1, 0.1: |0.9 - (float)0.9| = 2.38e-8 is the largest */
    assert_double_near(cs_vol_affine_diff(i1, i2), fabs(0.9 - (double)(float)0.9), 0.0);
    assert_true(cs_vol_affine_diff(i1, i1) == 0.0);
    /* a NaN anywhere is never "within tolerance", whatever the elements after it differ by */
    cs_vol_info n1 = *i1, n2 = *i1;
    n1.affine[0][0] = NAN;
    n2.affine[2][3] += 7.0;
    assert_true(isnan(cs_vol_affine_diff(&n1, &n2)));
    assert_true(isnan(cs_vol_affine_diff(&n2, &n1)));
    cs_vol_close(v1);
    cs_vol_close(v2);

    cs_vol *q = open_ok(FIX "n1_qform.nii", NULL);
    const cs_vol_info *iq = cs_vol_info_of(q);
    assert_int_equal(iq->has_affine, 1);
    FILE *f = fopen(FIX "n1_qform.affine", "r");
    assert_non_null(f);
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 4; c++) {
            double w;
            assert_int_equal(fscanf(f, "%lf", &w), 1);
            assert_double_near(iq->affine[r][c], w, 1e-6);
        }
    fclose(f);
    cs_vol_close(q);

    cs_vol *n = open_ok(FIX "a_lef4.npy", NULL);
    assert_int_equal(cs_vol_info_of(n)->has_affine, 0);
    assert_int_equal(cs_vol_info_of(n)->format, CS_VOL_NPY);
    assert_int_equal(cs_vol_info_of(n)->fortran_order, 0);
    cs_vol_close(n);
    n = open_ok(FIX "fortran_f4.npy", NULL);
    assert_int_equal(cs_vol_info_of(n)->fortran_order, 1);
    cs_vol_close(n);
}

/* scl_slope / scl_inter as nibabel chose them for its int16 map, reported and not integer. */
static void test_scaling(void **state)
{
    (void)state;
    cs_vol *v = open_ok(FIX "n1_i16_scl.nii.gz", NULL);
    const cs_vol_info *in = cs_vol_info_of(v);
    assert_true(in->scl_slope != 1.0 && in->scl_slope != 0.0 && in->scl_inter != 0.0);
    assert_int_equal(in->integer, 0);
    assert_int_equal(in->format, CS_VOL_NIFTI);
    cs_vol_close(v);
    v = open_ok(FIX "n2_i16.nii", NULL);
    in = cs_vol_info_of(v);
    assert_true(in->scl_slope == 1.0 && in->scl_inter == 0.0);
    assert_int_equal(in->integer, 1);
    cs_vol_close(v);
}

/* No member named: the only array, else probabilities, else softmax. */
static void test_member_rule(void **state)
{
    (void)state;
    static const struct { const char *file, *member; } cases[] = {
        {"stored.npz", "probabilities.npy"},
        {"deflated_f16.npz", "softmax.npy"},
        {"single.npz", "x.npy"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[256];
        snprintf(path, sizeof path, FIX "%s", cases[i].file);
        cs_vol *v = open_ok(path, NULL);
        assert_string_equal(cs_vol_info_of(v)->member, cases[i].member);
        assert_int_equal(cs_vol_info_of(v)->format, CS_VOL_NPZ);
        cs_vol_close(v);
    }
}

/* The whole decompressed stream of a gzip file by zlib's gzread: the oracle for ISA-L. */
static unsigned char *zlib_all(const char *path, size_t *n)
{
    gzFile g = gzopen(path, "rb");
    assert_non_null(g);
    size_t cap = 1 << 20;
    unsigned char *b = malloc(cap);
    assert_non_null(b);
    int k = gzread(g, b, (unsigned)cap);
    assert_true(k > 0 && (size_t)k < cap);
    gzclose(g);
    *n = (size_t)k;
    return b;
}

/* ISA-L's stream (engine/gz) with its input buffer cut to every size from 1 byte to the whole
 * file: a member, its header and its trailer split at every offset, read in 7-byte pieces, give
 * zlib's bytes exactly and end with every member checked. */
static void test_gzip_split_everywhere(void **state)
{
    (void)state;
    static const char *const files[] = {FIX "n1_members.nii.gz", FIX "n1_gz9.nii.gz", FIX "n1_igzip.nii.gz"};
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        size_t n = 0;
        unsigned char *want = zlib_all(files[f], &n), *got = malloc(n + 7);
        assert_non_null(got);
        FILE *fp = fopen(files[f], "rb");
        assert_non_null(fp);
        fseek(fp, 0, SEEK_END);
        size_t fsize = (size_t)ftell(fp);
        fclose(fp);
        for (size_t cap = 1; cap <= fsize; cap++) {
            cs_gz *g = cs_gz_open_sized(files[f], cap);
            assert_non_null(g);
            size_t have = 0, k = 0;
            const char *why = NULL;
            do {
                assert_int_equal(cs_gz_read(g, got + have, 7, &k, &why), 0);
                have += k;
            } while (k > 0 && have <= n);
            if (have != n || memcmp(got, want, n) != 0) fail_msg("%s: input buffer of %zu bytes: %zu of %zu bytes", files[f], cap, have, n);
            assert_int_equal(cs_gz_finished(g), 1);
            cs_gz_close(g);
        }
        free(want);
        free(got);
    }
    /* the trailer's CRC flipped: found at every split, in zlib's words */
    for (size_t cap = 1; cap <= 1200; cap++) {
        cs_gz *g = cs_gz_open_sized(FIX "crc.nii.gz", cap);
        assert_non_null(g);
        static unsigned char buf[1 << 17];
        size_t k = 0;
        const char *why = NULL;
        int rc;
        while ((rc = cs_gz_read(g, buf, sizeof buf, &k, &why)) == 0 && k > 0) {}
        assert_int_equal(rc, -1);
        assert_string_equal(why, "incorrect data check");
        cs_gz_close(g);
    }
}

typedef struct bad_case {
    const char *file, *member;
    int at_read;          /* 1: the open succeeds, reading everything fails */
    const char *msg;      /* after "tests/fixtures/vol/" */
} bad_case;

static const bad_case bad[] = {
    {"missing.nii.gz", NULL, 0, "missing.nii.gz: cannot open: No such file or directory"},
    {"missing.npy", NULL, 0, "missing.npy: cannot open: No such file or directory"},
    {"missing.npz", NULL, 0, "missing.npz: cannot open: No such file or directory"},
    {"noext.dat", NULL, 0, "noext.dat: unknown array file extension (want .nii, .nii.gz, .npy or .npz)"},
    {"notnifti.nii", NULL, 0, "notnifti.nii: not a NIfTI file (bad header size)"},
    {"n1_complex.nii", NULL, 0, "n1_complex.nii: unsupported NIfTI datatype COMPLEX64 (code 32)"},
    {"n1_rgb.nii", NULL, 0, "n1_rgb.nii: unsupported NIfTI datatype RGB24 (code 128)"},
    /* a plain file is checked against its size before anything is read */
    {"trunc.nii", NULL, 0, "trunc.nii: NIfTI header: the dims ask for 60 values, 240 bytes from vox_offset 352, "
                           "and the file has 552 bytes (truncated?)"},
    /* headers that lie about sizes, refused before nifti_clib sees them (NIfTI-1 and -2, both
     * byte orders, plain and gzip) */
    {"n2_dim0_huge.nii", NULL, 0, "n2_dim0_huge.nii: NIfTI header: dim[0] = 1099511627776, must be 1..7"},
    {"n2_dim0_neg.nii.gz", NULL, 0, "n2_dim0_neg.nii.gz: NIfTI header: dim[0] = -5, must be 1..7"},
    {"n1_be_dim0.nii", NULL, 0, "n1_be_dim0.nii: NIfTI header: dim[0] = 8, must be 1..7"},
    {"n1_dim_neg.nii", NULL, 0, "n1_dim_neg.nii: NIfTI header: dim[2] = -4, must be positive"},
    {"n2_dims_huge.nii.gz", NULL, 0, "n2_dims_huge.nii.gz: NIfTI header: the dims ask for 1152921504606846976 "
                                     "values, more than the 1099511627776 bytes of data calscope reads"},
    /* 3 x 30000 x 5 float64 from a 623-byte gzip file: deflate expands at most 1032-fold */
    {"n1_dims_gz.nii.gz", NULL, 0, "n1_dims_gz.nii.gz: NIfTI header: the dims ask for 450000 values, 3600000 "
                                   "bytes from vox_offset 352, and 623 bytes of gzip hold at most 642936"},
    {"n1_voxoff_low.nii", NULL, 0, "n1_voxoff_low.nii: NIfTI header: vox_offset = 100, must be a whole number "
                                   "of bytes, at least 348"},
    {"n1_voxoff_frac.nii", NULL, 0, "n1_voxoff_frac.nii: NIfTI header: vox_offset = 352.5, must be a whole "
                                    "number of bytes, at least 348"},
    {"n2_voxoff_far.nii", NULL, 0, "n2_voxoff_far.nii: NIfTI header: vox_offset = 1000000 is beyond the end of "
                                   "the file (664 bytes)"},
    {"n1_dtype_unknown.nii", NULL, 0, "n1_dtype_unknown.nii: unsupported NIfTI datatype code 77"},
    {"n1_bitpix.nii", NULL, 0, "n1_bitpix.nii: NIfTI header: bitpix = 16, must be 32 for FLOAT32"},
    {"n1_magic.nii", NULL, 0, "n1_magic.nii: NIfTI header: bad magic (want 'n+1', a single-file NIfTI-1)"},
    {"n1_short.nii", NULL, 0, "n1_short.nii: NIfTI header: truncated (200 of 348 bytes)"},
    /* 37360: what Python's zlib decodes of the cut file (trunc.nii.gz.count) */
    {"trunc.nii.gz", NULL, 1, "trunc.nii.gz: truncated: 37360 of 64000 values"},
    {"crc.nii.gz", NULL, 1, "crc.nii.gz: corrupt gzip data: incorrect data check"},
    /* a flipped byte deep inside incompressible data: decoded, then the CRC disagrees */
    {"flip.nii.gz", NULL, 1, "flip.nii.gz: corrupt gzip data: incorrect data check"},
    {"corrupt.nii.gz", NULL, 0, "corrupt.nii.gz: corrupt gzip data: incorrect data check"},
    {"badmagic.npy", NULL, 0, "badmagic.npy: not an npy file (bad magic)"},
    /* a plain .npy, and an npz member, are checked against their size at the open */
    {"trunc.npy", NULL, 0, "trunc.npy: truncated: 21 of 24 values"},
    {"badver.npy", NULL, 0, "badver.npy: unsupported npy format version 4.0"},
    {"badkey.npy", NULL, 0, "badkey.npy: bad npy header: unknown key"},
    {"short.npz", NULL, 0, "short.npz[probabilities.npy]: truncated: 50 of 100 values"},
    {"complex.npy", NULL, 0, "complex.npy: unsupported dtype '<c8' (want <f2 <f4 <f8 |u1 |i1 <i2 <u2 <i4 "
                             "<u4 <i8 <u8 |b1, or > for big-endian)"},
    {"unicode.npy", NULL, 0, "unicode.npy: unsupported dtype '<U2' (want <f2 <f4 <f8 |u1 |i1 <i2 <u2 <i4 "
                             "<u4 <i8 <u8 |b1, or > for big-endian)"},
    {"struct.npy", NULL, 0, "struct.npy: unsupported dtype: a structured array (want a plain numeric dtype)"},
    {"bzip2.npz", NULL, 0, "bzip2.npz[probabilities.npy]: compressed with bzip2 (zip method 12); calscope reads "
                           "only stored or deflated members (np.savez, np.savez_compressed)"},
    {"lzma.npz", NULL, 0, "lzma.npz[probabilities.npy]: compressed with lzma (zip method 14); calscope reads "
                          "only stored or deflated members (np.savez, np.savez_compressed)"},
    {"notzip.npz", NULL, 0, "notzip.npz: not an npz file (bad magic)"},
    {"trunc.npz", NULL, 0, "trunc.npz: truncated or corrupt zip archive (no central directory)"},
    {"empty.npz", NULL, 0, "empty.npz: empty archive (no arrays)"},
    {"empty.npz", "probabilities", 0, "empty.npz: no member 'probabilities.npy' (members: none)"},
    /* shapes of 4e9 values in files of a few bytes: said at the open, nothing allocated */
    {"huge.npy", NULL, 0, "huge.npy: truncated: 17 of 4000000000 values"},
    {"huge_stored.npz", NULL, 0, "huge_stored.npz[probabilities.npy]: truncated: 17 of 4000000000 values"},
    {"huge_deflated.npz", NULL, 0, "huge_deflated.npz[probabilities.npy]: truncated: 17 of 4000000000 values"},
    {"crc.npz", "probabilities", 1, "crc.npz[probabilities.npy]: bad CRC (corrupt archive)"},
    {"crc_deflated.npz", NULL, 1, "crc_deflated.npz[softmax.npy]: bad CRC (corrupt archive)"},
    {"corrupt.npz", NULL, 1, "corrupt.npz[probabilities.npy]: corrupt deflate data (stream ends at byte 607 of 608)"},
    {"two.npz", NULL, 0, "two.npz: 2 arrays and none is 'probabilities' or 'softmax': name one "
                         "(members: a.npy, b.npy)"},
    {"stored.npz", "softmax", 0, "stored.npz: no member 'softmax.npy' (members: probabilities.npy, other.npy)"},
    {"n1_f32.nii", "x", 0, "n1_f32.nii: a member is only for .npz archives"},
    {"dir.nii.gz", NULL, 0, "dir.nii.gz: cannot read: Is a directory"},
    {"dir.npz", NULL, 0, "dir.npz: cannot read: Is a directory"},
};

static void test_refusals(void **state)
{
    (void)state;
    /* an empty archive is no error to the member search: it has no members */
    unsigned found = 1;
    char members[64];
    cs_error e;
    cs_error_clear(&e);
    assert_int_equal(cs_vol_npz_find(FIX "empty.npz", (const char *const[]){ "probabilities" }, 1, &found, members,
                                     sizeof members, &e), CS_OK);
    assert_int_equal(found, 0);
    assert_string_equal(members, "none");
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const bad_case *b = &bad[i];
        char path[256], want[512];
        snprintf(path, sizeof path, FIX "%s", b->file);
        snprintf(want, sizeof want, FIX "%s", b->msg);
        cs_vol *v = NULL;
        cs_error err;
        cs_error_clear(&err);
        cs_status st = cs_vol_open(path, b->member, &v, &err);
        if (b->at_read) {
            if (st != CS_OK) fail_msg("%s: open: %s", path, err.msg);
            const cs_vol_info *in = cs_vol_info_of(v);
            double *buf = malloc(in->n_values * sizeof *buf);
            assert_non_null(buf);
            st = cs_vol_read(v, buf, in->n_values, &err);
            free(buf);
            /* a failed reader stays failed: reading on (the rest of a stream checked after a
             * value was refused) gives the same error */
            cs_error again;
            cs_error_clear(&again);
            assert_int_equal(cs_vol_check_rest(v, &again), err.code);
            assert_string_equal(again.msg, err.msg);
            cs_vol_close(v);
        } else {
            assert_null(v);
        }
        if (st == CS_OK) fail_msg("%s: accepted", path);
        assert_int_equal(err.code, strcmp(b->msg + strlen(b->file), ": a member is only for .npz archives") == 0
                                   ? CS_EUSAGE : CS_EINPUT);
        assert_int_equal(st, err.code);
        if (strcmp(err.msg, want) != 0) fail_msg("%s:\n got  '%s'\n want '%s'", path, err.msg, want);
    }
}

/* Every float16 bit pattern, read from a '<f2' .npy, is the double that the formula of IEEE
 * binary16 gives (m·2^-24 for subnormals, (1024 + m)·2^(e-25) for normals, by ldexp: another
 * method than the reader's bit fields), bit for bit (-0 too); the NaNs are NaNs. */
static void test_every_float16(void **state)
{
    (void)state;
    char path[] = "/tmp/test_volume_f16.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "wb");
    assert_non_null(f);
    char hdr[118];
    int n = snprintf(hdr, sizeof hdr, "{'descr': '<f2', 'fortran_order': False, 'shape': (65536,), }");
    while (n < (int)sizeof hdr - 1) hdr[n++] = ' ';
    hdr[n++] = '\n';   /* 10 + 118 = 128 bytes of preamble */
    fwrite("\x93NUMPY\x01\x00", 1, 8, f);
    unsigned char hl[2] = { (unsigned char)n, 0 };
    fwrite(hl, 1, 2, f);
    fwrite(hdr, 1, (size_t)n, f);
    for (unsigned h = 0; h < 65536; h++) {
        unsigned char b[2] = { (unsigned char)(h & 0xff), (unsigned char)(h >> 8) };
        fwrite(b, 1, 2, f);
    }
    fclose(f);
    char npy[64];
    snprintf(npy, sizeof npy, "%s.npy", path);
    assert_int_equal(rename(path, npy), 0);
    cs_vol *v = open_ok(npy, NULL);
    double *got = malloc(65536 * sizeof *got);
    assert_non_null(got);
    cs_error err;
    if (cs_vol_read(v, got, 65536, &err) != CS_OK) fail_msg("%s", err.msg);
    for (unsigned h = 0; h < 65536; h++) {
        int e = (h >> 10) & 0x1f, m = h & 0x3ff;
        if (e == 31 && m) {
            if (!isnan(got[h])) fail_msg("0x%04x: %.17g, want a NaN", h, got[h]);
            continue;
        }
        double want = e == 0 ? ldexp((double)m, -24) : e == 31 ? INFINITY : ldexp((double)(m | 0x400), e - 25);
        if (h >> 15) want = -want;
        if (memcmp(&got[h], &want, sizeof want) != 0) fail_msg("0x%04x: %.17g, want %.17g", h, got[h], want);
    }
    free(got);
    cs_vol_close(v);
    remove(npy);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_value_as_written),
        cmocka_unit_test(test_affine),
        cmocka_unit_test(test_scaling),
        cmocka_unit_test(test_every_float16),
        cmocka_unit_test(test_member_rule),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_gzip_split_everywhere),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
