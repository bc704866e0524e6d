/* libFuzzer target for the manifest CSV of `calscope reduce` (calscope/reduce.h): any bytes must
 * give a plan or a clean refusal, never a crash, leak or sanitizer report, and the sniffer must
 * agree with the parser about the header. Manifests are read by path, so each input is written
 * to one scratch file per process; its rows name files beside it (the scratch file itself,
 * "/", "/dev/null"...), which exercises the existence checks too. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calscope/reduce.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/calscope-fuzz-manifest-%d.csv", (int)getpid());
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (size && fwrite(data, 1, size, f) != size) abort();
    fclose(f);
    cs_seg_plan *p = NULL;
    cs_error err;
    cs_error_clear(&err);
    cs_status st = cs_seg_plan_manifest(path, &p, &err);
    if (st == CS_OK) {
        if (!p || p->n == 0) abort();
        for (size_t i = 1; i < p->n; i++)   /* sorted, no duplicate */
            if (strcmp(p->cases[i - 1].name, p->cases[i].name) >= 0) abort();
        if (!cs_seg_manifest_sniff(path) && size <= 4096) abort();
    } else if (p || !err.msg[0]) {
        abort();
    }
    cs_seg_plan_free(p);
    return 0;
}
