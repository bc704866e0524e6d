/* libFuzzer target for statistics files (calscope/segstats.h): any bytes must be read into a
 * complete statistics object or refused with a message, never crash, leak or trip a sanitizer;
 * and what is accepted must hold the file's promises. For an accepted input:
 *   - every case's class (and top-1) bin counts add up to its voxels, and its Brier / NLL sums
 *     are finite (what a truncated or edited file used to break);
 *   - it measures (cases included) to finite Brier and NLL, or is refused with a message;
 *   - written back (plain or gzip, by the first input byte), the file reads back, and writing
 *     that gives the same bytes;
 *   - its cases split in two, each half written, re-read and merged, give the same bytes too.
 * Files are read by path, so the input goes to a scratch file per process. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calscope/segmeasure.h"
#include "calscope/segstats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Dense cells above which the measure and round trips are skipped: a small input may declare
 * F = 100000 fine bins over hundreds of cases, which is valid but costs seconds per input under
 * the sanitizers; the reading, where the damage is found, is always fuzzed. */
#define MEASURE_CELLS_MAX 250000

static const char *scratch(const char *what, const char *suffix)
{
    static char path[4][96];
    static int next;
    char *p = path[next++ % 4];
    snprintf(p, sizeof path[0], "/tmp/calscope-fuzz-stats-%d-%s%s", (int)getpid(), what, suffix);
    return p;
}

static void write_bytes(const char *path, const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (size && fwrite(data, 1, size, f) != size) abort();
    fclose(f);
}

/* The whole file, or NULL when it cannot be read; *len its length. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) { free(buf); buf = NULL; }
            buf = nb;
        }
    }
    fclose(f);
    *len = n;
    return buf;
}

static int same_file(const char *a, const char *b)
{
    size_t la = 0, lb = 0;
    char *x = slurp(a, &la), *y = slurp(b, &lb);
    if (!x || !y) abort();
    int same = la == lb && memcmp(x, y, la) == 0;
    free(x);
    free(y);
    return same;
}

/* The reader's promises about an object it accepted. */
static void check_complete(const cs_segstats *st)
{
    for (size_t c = 0; c < st->n_cases; c++) {
        for (size_t j = 0; j <= st->k; j++) {
            if (j == st->k && !st->t_cnt) break;
            uint64_t sum = 0;
            for (size_t i = 0; i < (size_t)st->fine; i++)
                sum += j == st->k ? st->t_cnt[cs_segstats_ti(st, c, i)]
                                  : st->cnt[cs_segstats_ci(st, c, j, i)];
            if (sum != st->voxels[c]) abort();
        }
        for (size_t j = 0; j < st->k; j++) {
            size_t x = c * st->k + j;
            if (!isfinite(st->sq_err[x]) || !isfinite(st->nll_pos[x]) || !isfinite(st->nll_neg[x]))
                abort();
        }
    }
}

static void check_measures(const cs_segstats *st)
{
    cs_settings s;
    cs_settings_default(&s);
    s.bins = 1;   /* divides every F */
    cs_error err;
    if (st->kind == CS_SEG_REGIONS && cs_settings_set_lens(&s, "classwise", &err) != CS_OK) abort();
    cs_measure_request q = { .parts = CS_MEASURE_CASES };
    cs_measurement m;
    cs_status r = cs_segstats_measure(st, &s, &q, NULL, &m, &err);
    if (r == CS_OK && m.evaluated && (!isfinite(m.result.brier) || !isfinite(m.result.nll)))
        abort();
    if (r != CS_OK && r != CS_EEMPTY && !err.msg[0]) abort();
    cs_measurement_free(&m);
}

/* st written to `path`; the file must read back and write back to the same bytes. */
static void check_round_trip(const cs_segstats *st, const char *path, const char *suffix)
{
    cs_error err;
    if (cs_segstats_write(st, path, &err) != CS_OK) return;   /* e.g. a name with a line break */
    cs_segstats *back = NULL;
    if (cs_segstats_read(path, &back, &err) != CS_OK) abort();   /* the writer's file is valid */
    const char *again = scratch("again", suffix);
    if (cs_segstats_write(back, again, &err) != CS_OK || !same_file(path, again)) abort();
    cs_segstats_free(back);
    unlink(again);
}

/* The cases split in two halves, each written and read back, merged: the whole file again. */
static void check_merge(const cs_segstats *st, const char *whole)
{
    uint8_t *keep = calloc(st->n_cases + 1, 1);
    if (!keep) abort();
    cs_segstats *part[2] = { NULL, NULL };
    const char *path[2] = { scratch("half0", ".csv"), scratch("half1", ".csv") };
    cs_error err;
    for (int h = 0; h < 2; h++) {
        for (size_t c = 0; c < st->n_cases; c++) keep[c] = (c < st->n_cases / 2) == (h == 0);
        cs_segstats *sub = cs_segstats_subset(st, keep);
        if (!sub) abort();
        if (cs_segstats_write(sub, path[h], &err) != CS_OK ||
            cs_segstats_read(path[h], &part[h], &err) != CS_OK)
            abort();
        cs_segstats_free(sub);
    }
    cs_segstats *merged = NULL;
    const char *merged_path = scratch("merged", ".csv");
    if (cs_segstats_merge((const cs_segstats *const *)part, path, 2, &merged, &err) != CS_OK ||
        cs_segstats_write(merged, merged_path, &err) != CS_OK || !same_file(whole, merged_path))
        abort();
    cs_segstats_free(merged);
    for (int h = 0; h < 2; h++) {
        cs_segstats_free(part[h]);
        unlink(path[h]);
    }
    unlink(merged_path);
    free(keep);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    int gzip = data[0] & 1;
    const char *in = scratch("in", ".csv");
    write_bytes(in, data + 1, size - 1);
    cs_segstats *st = NULL;
    cs_error err;
    cs_error_clear(&err);
    cs_status r = cs_segstats_read(in, &st, &err);
    if (r != CS_OK) {
        if (st || !err.msg[0]) abort();
        return 0;
    }
    check_complete(st);
    if ((double)st->n_cases * (double)(st->k + 1) * st->fine <= MEASURE_CELLS_MAX) {
        check_measures(st);
        const char *suffix = gzip ? ".csv.gz" : ".csv";
        const char *out = scratch("out", suffix);
        check_round_trip(st, out, suffix);
        cs_segstats *back = NULL;
        if (!gzip && cs_segstats_read(out, &back, &err) == CS_OK) {
            check_merge(back, out);
            cs_segstats_free(back);
        }
        unlink(out);
    }
    cs_segstats_free(st);
    return 0;
}
