/* A file's summary (see calscope/summarize.h): the loader's one pass (engine/load/load_sums.h),
 * then the values of all samples on the top-1 lens — the Brier score, NLL and class-wise ECE
 * from the sums (engine/metrics/rowsums.h), every other value by cs_evaluate from the per-row
 * caches, which is all it reads of the dataset under those settings. */
#include "calscope/summarize.h"

#include <stdlib.h>
#include <string.h>

#include "calscope/measure.h"
#include "engine/load/load_sums.h"
#include "engine/metrics/rowsums.h"

/* What comes from the sums instead of the probability rows. */
#define FROM_SUMS (CS_WANT_BRIER | CS_WANT_NLL | CS_WANT_SCE)

void cs_summary_free(cs_summary *sm)
{
    if (!sm) return;
    cs_result_free(&sm->result);
    free(sm->class_names);   /* one block */
    memset(sm, 0, sizeof *sm);
}

/* The values of d (no probabilities kept) from its per-row caches and the sums of its rows,
 * into out. */
static cs_status values(const cs_dataset *d, const cs_rowsums *sums, const cs_settings *s,
                        const cs_run *run, cs_result *out, cs_error *err)
{
    cs_prepared *p = cs_prepare(d, s, err);
    if (!p) return err->code;
    cs_status st = cs_evaluate(p, NULL, 0, CS_WANT_ALL & ~FROM_SUMS, run, out, err);
    cs_prepared_free(p);
    if (st == CS_OK) st = cs_rowsums_values(sums, s, &out->brier, &out->nll, &out->sce, err);
    if (st != CS_OK) cs_result_free(out);
    return st;
}

cs_status cs_summarize_file(const char *path, const cs_load_options *opt, const cs_settings *s,
                            unsigned parts, const cs_run *run, cs_summary *out,
                            cs_dataset **rows, cs_load_summary *summary, cs_error *err)
{
    memset(out, 0, sizeof *out);
    *rows = NULL;
    cs_rowsums *sums = NULL;
    cs_dataset *d = cs_measure_reads_only_sums(s, parts)
                        ? cs_load_file_summed(path, opt, s->bins, summary, &sums, err)
                        : cs_load_file(path, opt, summary, err);
    if (!d) return err->code != CS_OK ? err->code : CS_EINPUT;
    if (!sums) {   /* the file keeps its rows: the caller measures them */
        *rows = d;
        return CS_OK;
    }
    cs_status st = values(d, sums, s, run, &out->result, err);
    if (st == CS_OK) {
        out->rows_summed = cs_rowsums_rows(sums);
        out->rows = d->n;
        out->classes = d->k;
        out->class_names = d->class_names;
        d->class_names = NULL;
    }
    cs_rowsums_free(sums);
    cs_dataset_free(d);
    return st;
}
