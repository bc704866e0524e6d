/* libFuzzer target for the NIfTI reader of engine/volume/volume.h (nifti.c, nifti_header.c): any
 * bytes, as a .nii or .nii.gz file, must open and read to the end, or be refused cleanly, without
 * a crash, leak or sanitizer report. calscope checks the header before nifti_clib parses it
 * (the library trusts dim[0]: a NIfTI-2 dim[0] of 2^40 overflowed its stack), so everything that
 * reaches nifti_clib has passed that check. The first byte picks how the rest is written:
 *   0 a plain .nii; 1 gzip-compressed here into a .nii.gz (the header stays mutable); 2 as is,
 *   as a .nii.gz (the gzip stream itself is fuzzed). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "engine/volume/volume.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void write_input(const char *path, int mode, const uint8_t *p, size_t n)
{
    if (mode == 1) {
        gzFile g = gzopen(path, "wb1");
        if (!g || (n && gzwrite(g, p, (unsigned)n) != (int)n) || gzclose(g) != Z_OK) abort();
        return;
    }
    FILE *f = fopen(path, "wb");
    if (!f || (n && fwrite(p, 1, n, f) != n) || fclose(f) != 0) abort();
}

/* Reads every value (a huge declared shape ends at the file's end: "truncated"), then checks
 * that nothing is handed out past the end. */
static void read_all(cs_vol *v)
{
    const cs_vol_info *in = cs_vol_info_of(v);
    if (in->ndim < 1 || in->ndim > CS_VOL_MAX_DIMS || !in->dtype_name || in->n_values == 0) abort();
    static double buf[4096];
    cs_error err;
    cs_error_clear(&err);
    uint64_t left = in->n_values;
    while (left) {
        size_t m = left < 4096 ? (size_t)left : 4096;
        if (cs_vol_read(v, buf, m, &err) != CS_OK) break;
        left -= m;
    }
    if (left == 0 && cs_vol_read(v, buf, 1, &err) == CS_OK) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    int mode = data[0] % 3;
    char path[64];
    snprintf(path, sizeof path, "/tmp/calscope-fuzz-nifti-%d%s", (int)getpid(), mode ? ".nii.gz" : ".nii");
    write_input(path, mode, data + 1, size - 1);
    cs_vol *v = NULL;
    cs_error err;
    cs_error_clear(&err);
    if (cs_vol_open(path, NULL, &v, &err) == CS_OK) {
        read_all(v);
        cs_vol_close(v);
    } else if (v || !err.msg[0] || strncmp(err.msg, path, strlen(path)) != 0) {
        abort();   /* a refusal returns no reader and a message that names the file */
    }
    unlink(path);
    return 0;
}
