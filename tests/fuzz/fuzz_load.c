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

#include <zlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input gzip'd here (zlib, level 1) and read by the fast path as it is inflated, `step`
 * bytes a step: whenever it takes the text, the outcome must be libcsv's over the plain bytes
 * (the line and column of every message included), whatever step cuts the lines. */
static void gz_against_csv(const uint8_t *data, size_t size, const cs_load_options *opt,
                           size_t step, int scan)
{
    size_t cap = compressBound((uLong)size) + 64;
    unsigned char *gz = malloc(cap);
    if (!gz) return;
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 1, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) { free(gz); return; }
    z.next_in = (Bytef *)(uintptr_t)data;
    z.avail_in = (uInt)size;
    z.next_out = gz;
    z.avail_out = (uInt)cap;
    if (deflate(&z, Z_FINISH) != Z_STREAM_END) abort();
    size_t n = z.total_out;
    deflateEnd(&z);
    cs_error e1, e2;
    cs_load_summary s1, s2;
    cs_load_tuning tc = { .path = CSL_PATH_CSV, .block = (size % 7) + 1 };
    cs_dataset *a = cs_load_buffer_tuned("f", data, size, opt, &s1, &e1, &tc);
    cs_load_tuning tg = { .path = CSL_PATH_FAST, .threads = 1, .block = step, .scan = scan };
    cs_dataset *b = cs_load_buffer_tuned("f", gz, n, opt, &s2, &e2, &tg);
    fuzz_check_dataset(b);
    if (b || e2.code != CS_EUSAGE) fuzz_same_load(a, &e1, &s1, b, &e2, &s2, NULL);
    cs_dataset_free(a);
    cs_dataset_free(b);
    cs_load_summary_free(&s1);
    cs_load_summary_free(&s2);
    free(gz);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cs_load_options opt;
    if (!fuzz_take_options(&data, &size, &opt)) return 0;
    cs_load_tuning tf = { .path = CSL_PATH_FAST, .threads = 1, .block = (size % 5) + 1,
                          .scan = (size / 7) % 2 ? CSL_SCAN_SWAR : CSL_SCAN_SSE2 };
    fuzz_against_csv(data, size, &opt, (size % 7) + 1, data, &tf);
    if (!(size >= 2 && data[0] == 0x1f && data[1] == 0x8b))
        gz_against_csv(data, size, &opt, (size % 5) + 1, tf.scan);
    return 0;
}
