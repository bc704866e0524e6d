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

#include "engine/volume/volume.h"

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
    assert_int_equal(lines, 36);   /* every fixture was seen (the generator writes 36) */
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
    {"trunc.nii", NULL, 1, "trunc.nii: truncated: 50 of 60 values"},
    /* 37360: what Python's zlib decodes of the cut file (trunc.nii.gz.count) */
    {"trunc.nii.gz", NULL, 1, "trunc.nii.gz: truncated: 37360 of 64000 values"},
    {"crc.nii.gz", NULL, 1, "crc.nii.gz: corrupt gzip data: incorrect data check"},
    {"corrupt.nii.gz", NULL, 0, "corrupt.nii.gz: corrupt gzip data: incorrect data check"},
    {"badmagic.npy", NULL, 0, "badmagic.npy: not an npy file (bad magic)"},
    {"trunc.npy", NULL, 1, "trunc.npy: truncated: 21 of 24 values"},
    {"badver.npy", NULL, 0, "badver.npy: unsupported npy format version 4.0"},
    {"badkey.npy", NULL, 0, "badkey.npy: bad npy header: unknown key"},
    {"short.npz", NULL, 1, "short.npz[probabilities.npy]: truncated: 50 of 100 values"},
    {"complex.npy", NULL, 0, "complex.npy: unsupported dtype '<c8' (want <f2 <f4 <f8 |u1 |i1 <i2 <u2 <i4 "
                             "<u4 <i8 <u8 |b1, or > for big-endian)"},
    {"unicode.npy", NULL, 0, "unicode.npy: unsupported dtype '<U2' (want <f2 <f4 <f8 |u1 |i1 <i2 <u2 <i4 "
                             "<u4 <i8 <u8 |b1, or > for big-endian)"},
    {"struct.npy", NULL, 0, "struct.npy: unsupported dtype: a structured array (want a plain numeric dtype)"},
    {"notzip.npz", NULL, 0, "notzip.npz: not an npz file (bad magic)"},
    {"trunc.npz", NULL, 0, "trunc.npz: truncated or corrupt zip archive (no central directory)"},
    {"crc.npz", "probabilities", 1, "crc.npz[probabilities.npy]: bad CRC (corrupt archive)"},
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_value_as_written),
        cmocka_unit_test(test_affine),
        cmocka_unit_test(test_scaling),
        cmocka_unit_test(test_member_rule),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
