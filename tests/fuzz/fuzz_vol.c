/* libFuzzer target for the array readers of engine/volume/volume.h that parse bytes here: the .npy
 * header parser (npy.c) and the .npz member streaming (npz.c, over minizip). Any bytes must open
 * and read to the end, or be refused cleanly, without a crash, leak or sanitizer report. The
 * first byte picks the format (bit 0: .npy / .npz) and whether a member is named (bit 1). The
 * readers open by path, so each input is written to one scratch file per process. NIfTI is left
 * to fuzz_nifti. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/volume/volume.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    char path[64];
    snprintf(path, sizeof path, "/tmp/calscope-fuzz-vol-%d%s", (int)getpid(), (data[0] & 1) ? ".npz" : ".npy");
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (size > 1 && fwrite(data + 1, 1, size - 1, f) != size - 1) abort();
    fclose(f);
    cs_vol *v = NULL;
    cs_error err;
    cs_error_clear(&err);
    const char *member = (data[0] & 1) && (data[0] & 2) ? "probabilities" : NULL;
    cs_status st = cs_vol_open(path, member, &v, &err);
    if (st == CS_OK) {
        const cs_vol_info *in = cs_vol_info_of(v);
        if (in->ndim < 1 || in->ndim > CS_VOL_MAX_DIMS || !in->dtype_name) abort();
        /* read everything (a huge declared shape ends at the file's end: "truncated") */
        static double buf[4096];
        uint64_t left = in->n_values;
        while (left) {
            size_t m = left < 4096 ? (size_t)left : 4096;
            if (cs_vol_read(v, buf, m, &err) != CS_OK) break;
            left -= m;
        }
        if (left == 0 && cs_vol_read(v, buf, 1, &err) == CS_OK) abort();   /* nothing past the end */
        cs_vol_close(v);
    } else if (v || !err.msg[0] || strncmp(err.msg, path, strlen(path)) != 0) {
        abort();   /* a refusal returns no reader and a message that names the file */
    }
    unlink(path);
    return 0;
}
