/* Shared by the loader fuzz targets: option decoding from the first input byte and the
 * comparison of two loads of the same bytes (the libcsv path is the reference). A difference
 * aborts, which libFuzzer reports as a crash and saves the input. */
#ifndef CALSCOPE_FUZZ_COMMON_H
#define CALSCOPE_FUZZ_COMMON_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "calscope/metrics.h"
#include "engine/metrics/rowsums.h"
#include "engine/load/load_internal.h"
#include "engine/load/load_sums.h"

/* Takes the options byte off the front of the input (bits: skip_bad_rows, renormalize,
 * no_header, label_col 1..4). Returns 0 for an empty input: nothing to load. */
static inline int fuzz_take_options(const uint8_t **data, size_t *size, cs_load_options *opt)
{
    if (*size < 1) return 0;
    uint8_t b = (*data)[0];
    cs_load_options_default(opt);
    opt->skip_bad_rows = b & 1;
    opt->renormalize = (b >> 1) & 1;
    opt->no_header = (b >> 2) & 1;
    opt->label_col = 1 + ((b >> 3) & 3);
    (*data)++;
    (*size)--;
    return 1;
}

static inline int fuzz_same_names(char **a, char **b, size_t n)
{
    if ((a == NULL) != (b == NULL)) return 0;
    for (size_t i = 0; a && i < n; i++)
        if (strcmp(a[i], b[i]) != 0) return 0;
    return 1;
}

static inline int fuzz_same_ints(const int32_t *a, const int32_t *b, size_t n)
{
    if ((a == NULL) != (b == NULL)) return 0;
    return !a || memcmp(a, b, n * sizeof *a) == 0;
}

/* Aborts unless the Brier score, NLL and class-wise ECE of all samples on the top-1 lens of a
 * (every row kept) are the same bits as those of the sums of a summing load (rowsums.h). */
static inline void fuzz_same_sums(const cs_dataset *a, const cs_rowsums *sums)
{
    cs_settings st;
    cs_settings_default(&st);
    st.bins = cs_rowsums_bins(sums);
    cs_error e;
    cs_result r;
    double v[3];
    cs_prepared *p = cs_prepare(a, &st, &e);
    if (!p || cs_evaluate(p, NULL, 0, CS_WANT_BRIER | CS_WANT_NLL | CS_WANT_SCE, NULL, &r, &e) != CS_OK ||
        cs_rowsums_rows(sums) != a->n || cs_rowsums_values(sums, &st, &v[0], &v[1], &v[2], &e) != CS_OK)
        abort();
    cs_prepared_free(p);
    if (memcmp(&r.brier, &v[0], sizeof(double)) != 0 || memcmp(&r.nll, &v[1], sizeof(double)) != 0 ||
        memcmp(&r.sce, &v[2], sizeof(double)) != 0)
        abort();
    cs_result_free(&r);
}

/* Aborts unless loads a (the reference) and b of the same bytes gave the same outcome: the
 * same error text, the same counts and skip messages, and bit-identical arrays; b_sums: the
 * sums of b's rows when b was a summing load that summed them (b keeps no prob then). */
static inline void fuzz_same_load(const cs_dataset *a, const cs_error *ea, const cs_load_summary *sa,
                                  const cs_dataset *b, const cs_error *eb, const cs_load_summary *sb,
                                  const cs_rowsums *b_sums)
{
    if ((a == NULL) != (b == NULL) || strcmp(ea->msg, eb->msg) != 0) abort();
    if (sa->rows_read != sb->rows_read || sa->rows_rejected != sb->rows_rejected ||
        sa->rows_used != sb->rows_used || sa->blank_lines != sb->blank_lines ||
        sa->n_skipped_messages != sb->n_skipped_messages ||
        !fuzz_same_names(sa->skipped, sb->skipped, sa->n_skipped_messages))
        abort();
    if (!a) return;
    size_t n = a->n, k = a->k;
    /* a summing load keeps no probability; its sums must give the whole matrix's values */
    if (n != b->n || k != b->k || (b_sums != NULL) != (b->prob == NULL) ||
        (b->prob && memcmp(a->prob, b->prob, n * k * sizeof(double)) != 0) ||
        !fuzz_same_ints(a->label, b->label, n) || !fuzz_same_names(a->class_names, b->class_names, k))
        abort();
    if (b_sums) fuzz_same_sums(a, b_sums);
    if ((a->logit == NULL) != (b->logit == NULL) ||
        (a->logit && memcmp(a->logit, b->logit, n * k * sizeof(double)) != 0))
        abort();
    /* the per-row caches: the fast path's parse threads make them, libcsv's finisher after */
    if (memcmp(a->conf, b->conf, n * sizeof *a->conf) != 0 ||
        !fuzz_same_ints(a->pred, b->pred, n) || memcmp(a->correct, b->correct, n) != 0 ||
        a->n_samples != b->n_samples ||
        memcmp(a->sample_rows, b->sample_rows, a->n_samples * sizeof *a->sample_rows) != 0)
        abort();
    if (!fuzz_same_ints(a->tta, b->tta, n) || !fuzz_same_ints(a->id, b->id, n) ||
        a->n_ids != b->n_ids || !fuzz_same_names(a->id_names, b->id_names, a->n_ids) ||
        !fuzz_same_ints(a->case_id, b->case_id, n) || a->n_cases != b->n_cases ||
        !fuzz_same_names(a->case_names, b->case_names, a->n_cases))
        abort();
}

/* Properties of any loaded dataset: labels are classes, probabilities are finite in [0,1]. */
static inline void fuzz_check_dataset(const cs_dataset *d)
{
    if (!d) return;
    if (d->k < 2) abort();
    for (size_t i = 0; i < d->n; i++) {
        if (d->label[i] < 0 || (size_t)d->label[i] >= d->k) abort();
        for (size_t c = 0; c < d->k && d->prob; c++) {
            double p = d->prob[i * d->k + c];
            if (!(p >= 0.0 && p <= 1.0)) abort();
        }
    }
}

/* Loads data[0..size) with libcsv (fed `block` bytes at a time), checks the dataset, then, when
 * fast_bytes is given (the same bytes, possibly another copy such as a file mapping), loads those
 * with tuning *tf, summing under sum_bins when it is > 0 (load_sums.h), and aborts unless the
 * outcome is the same whenever the fast path takes them. */
static inline void fuzz_against_csv_sums(const uint8_t *data, size_t size, const cs_load_options *opt,
                                         size_t block, const void *fast_bytes, cs_load_tuning *tf,
                                         int sum_bins)
{
    cs_error e1, e2;
    cs_load_summary s1, s2;
    cs_load_tuning tc = { .path = CSL_PATH_CSV, .block = block };
    cs_dataset *a = cs_load_buffer_tuned("f", data, size, opt, &s1, &e1, &tc);
    fuzz_check_dataset(a);
    cs_dataset *b = NULL;
    cs_rowsums *sums = NULL;
    memset(&s2, 0, sizeof s2);
    if (fast_bytes) {
        b = cs_load_buffer_summed("f", fast_bytes, size, opt, tf, sum_bins, &s2, &sums, &e2);
        fuzz_check_dataset(b);
        if (b || e2.code != CS_EUSAGE)  /* the fast path took the input */
            fuzz_same_load(a, &e1, &s1, b, &e2, &s2, sums);
    }
    cs_rowsums_free(sums);
    cs_dataset_free(a);
    cs_dataset_free(b);
    cs_load_summary_free(&s1);
    cs_load_summary_free(&s2);
}

static inline void fuzz_against_csv(const uint8_t *data, size_t size, const cs_load_options *opt,
                                    size_t block, const void *fast_bytes, cs_load_tuning *tf)
{
    fuzz_against_csv_sums(data, size, opt, block, fast_bytes, tf, 0);
}

#endif
