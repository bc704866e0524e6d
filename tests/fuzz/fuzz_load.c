/* libFuzzer target for the loader, single-threaded and in memory: any bytes must load or be
 * refused cleanly, without a crash or leak, and the libcsv and fast paths must agree whenever
 * the fast path takes the input. No file and no thread per input (the fast path runs with one
 * thread; the 2-thread fast path over a file mapping is fuzz_load_mt.c), so it runs at tens of
 * thousands of inputs a second. The first byte picks options (skip_bad_rows, renormalize,
 * no_header, label_col) so they are fuzzed too; the length picks the libcsv feed size (1..7
 * bytes), so fields and lines straddle blocks. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    cs_load_options opt;
    fuzz_load_options(data[0], &opt);
    data++;
    size--;

    cs_error e1, e2;
    cs_load_summary s1, s2;
    cs_load_tuning tc = { .path = CSL_PATH_CSV, .block = (size % 7) + 1 };
    cs_dataset *a = cs_load_buffer_tuned("f", data, size, &opt, &s1, &e1, &tc);
    /* The fast path never takes gzip bytes (a FAST request would rerun libcsv): load them once. */
    int gz = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
    cs_dataset *b = NULL;
    memset(&s2, 0, sizeof s2);
    if (!gz) {
        cs_load_tuning tf = { .path = CSL_PATH_FAST, .threads = 1 };
        b = cs_load_buffer_tuned("f", data, size, &opt, &s2, &e2, &tf);
        if (b || e2.code != CS_EUSAGE)  /* the fast path took the input */
            fuzz_same_load(a, &e1, &s1, b, &e2, &s2);
    }
    fuzz_check_dataset(a);
    cs_dataset_free(a);
    cs_dataset_free(b);
    cs_load_summary_free(&s1);
    cs_load_summary_free(&s2);
    return 0;
}
