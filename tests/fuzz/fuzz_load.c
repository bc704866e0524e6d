/* libFuzzer target for the loader: any bytes must load or be refused cleanly, without a crash
 * or leak, and the libcsv and fast paths must agree whenever the fast path takes the input.
 * The first byte picks options (skip_bad_rows, renormalize, no_header) so they are fuzzed too. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/load/load_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    cs_load_options opt;
    cs_load_options_default(&opt);
    opt.skip_bad_rows = data[0] & 1;
    opt.renormalize = (data[0] >> 1) & 1;
    opt.no_header = (data[0] >> 2) & 1;
    opt.label_col = 1 + ((data[0] >> 3) & 3);
    data++;
    size--;

    cs_error e1, e2;
    cs_load_summary s1, s2;
    cs_load_tuning tc = {CSL_PATH_CSV, (size % 7) + 1, 0, 0, 0};
    cs_dataset *a = cs_load_buffer_tuned("f", data, size, &opt, &s1, &e1, &tc);
    cs_load_tuning tf = {CSL_PATH_FAST, 0, 2, 0, 0};
    cs_dataset *b = cs_load_buffer_tuned("f", data, size, &opt, &s2, &e2, &tf);
    int fast_taken = b || e2.code != CS_EUSAGE;
    if (fast_taken) {
        if ((a == NULL) != (b == NULL) || strcmp(e1.msg, e2.msg) != 0) abort();
        if (s1.rows_read != s2.rows_read || s1.rows_rejected != s2.rows_rejected) abort();
        if (a && (a->n != b->n || a->k != b->k ||
                  memcmp(a->prob, b->prob, a->n * a->k * sizeof(double)) != 0 ||
                  memcmp(a->label, b->label, a->n * sizeof(int32_t)) != 0))
            abort();
    }
    if (a) {
        for (size_t i = 0; i < a->n; i++)
            if (a->label[i] < 0 || (size_t)a->label[i] >= a->k) abort();
    }
    cs_dataset_free(a);
    cs_dataset_free(b);
    cs_load_summary_free(&s1);
    cs_load_summary_free(&s2);
    return 0;
}
