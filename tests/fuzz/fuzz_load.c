/* libFuzzer target for the loader, single-threaded and in memory: any bytes must load or be
 * refused cleanly, without a crash or leak, and the libcsv and fast paths must agree whenever
 * the fast path takes the input. No file and no thread per input (the fast path runs with one
 * thread; the 2-thread fast path over a file mapping is fuzz_load_mt.c), so it runs at tens of
 * thousands of inputs a second. The first byte picks options (skip_bad_rows, renormalize,
 * no_header, label_col) so they are fuzzed too; the length picks the libcsv feed size (1..7
 * bytes), so fields and lines straddle blocks, and the fast path's scanner (SSE2 or SWAR,
 * load_scan.h): both must give libcsv's outcome. Gzip bytes too: the fast path reads them as
 * they are inflated (load_gzflat.c, in steps of 1..5 bytes here, so lines straddle every
 * step), against libcsv's streaming. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cs_load_options opt;
    if (!fuzz_take_options(&data, &size, &opt)) return 0;
    cs_load_tuning tf = { .path = CSL_PATH_FAST, .threads = 1, .block = (size % 5) + 1,
                          .scan = (size / 7) % 2 ? CSL_SCAN_SWAR : CSL_SCAN_SSE2 };
    fuzz_against_csv(data, size, &opt, (size % 7) + 1, data, &tf);
    return 0;
}
