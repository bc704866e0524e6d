/* Per-case metrics and the dataset reliability histogram (conventions in cases.h).
 * The per-row work (selection, lens) is done once by cs_prepare; each case is then one
 * cs_evaluate call on its own index list, so the cost is linear in the rows overall. */
#include "calscope/cases.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/num/ubin.h"

void cs_case_metrics_free(cs_case_metrics *cm)
{
    if (!cm) return;
    free(cm->case_index);
    free(cm->count);
    free(cm->ece);
    free(cm->ace);
    free(cm->mce);
    free(cm->hist);
    memset(cm, 0, sizeof *cm);
}

cs_case_stat cs_case_stat_of(const double *v, size_t n)
{
    double sum = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(v[i])) { sum += v[i]; k++; }
    cs_case_stat st = { NAN, NAN };
    if (k == 0) return st;
    st.mean = sum / (double)k;
    double ss = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(v[i])) ss += (v[i] - st.mean) * (v[i] - st.mean);
    st.sd = sqrt(ss / (double)k);
    return st;
}

/* Histogram of one case: its selected rows rows[idx[0..n)). `tot`/`hit` are k*m scratch. */
static void case_hist(const cs_dataset *d, const uint32_t *rows, const uint32_t *idx, size_t n,
                      size_t m, uint32_t *tot, uint32_t *hit, uint32_t *hist)
{
    size_t k = d->k;
    memset(tot, 0, k * m * sizeof *tot);
    memset(hit, 0, k * m * sizeof *hit);
    for (size_t q = 0; q < n; q++) {
        size_t r = rows[idx[q]];
        const double *g = d->prob + r * k;
        for (size_t c = 0; c < k; c++) {
            size_t b = (size_t)cs_ubin(g[c], (int)m);
            tot[c * m + b]++;
            hit[c * m + b] += d->label[r] == (int32_t)c;
        }
    }
    for (size_t c = 0; c < k; c++)
        for (size_t i = 0; i < m; i++) {
            uint32_t t = tot[c * m + i];
            if (t == 0) continue;
            size_t j = (size_t)cs_ubin((double)hit[c * m + i] / (double)t, (int)m);
            hist[(c * m + i) * m + j]++;
        }
}

cs_status cs_case_hist_check(size_t k, size_t m, const char *path, cs_error *err)
{
    if ((double)k * (double)m * (double)m > (double)CS_CASE_HIST_MAX_CELLS) {
        /* the largest M whose K*M*M histogram fits, to suggest */
        size_t fit = 1;
        while ((double)k * (double)(fit + 1) * (double)(fit + 1) <= (double)CS_CASE_HIST_MAX_CELLS) fit++;
        if ((double)k > (double)CS_CASE_HIST_MAX_CELLS)
            return cs_error_set(err, CS_EUSAGE, 0, 0,
                                "%s: the per-case reliability histogram of %zu classes needs more than "
                                "%u cells even with 1 bin", path, k, CS_CASE_HIST_MAX_CELLS);
        return cs_error_set(err, CS_EUSAGE, 0, 0,
                            "%s: the per-case reliability histogram needs K*M*M = %zu*%zu*%zu cells, "
                            "more than %u: use --bins %zu or fewer", path, k, m, m,
                            CS_CASE_HIST_MAX_CELLS, fit);
    }
    return CS_OK;
}

/* What per-case metrics refuse before any work: a file without probability rows or without
 * a case column, a histogram of more than CS_CASE_HIST_MAX_CELLS cells. */
static cs_status check_cases(const cs_dataset *d, const cs_settings *s, cs_error *err)
{
    if (cs_dataset_need_rows(d, "per-case metrics of rows", err) != CS_OK) return err->code;
    const char *path = d->path ? d->path : "input";
    if (!d->case_id)
        return cs_error_set(err, CS_EUSAGE, 0, 0,
                            "%s: per-case metrics need a case column (segmentation-style file)", path);
    return cs_case_hist_check(d->k, (size_t)(s->bins > 0 ? s->bins : 1), path, err);
}

/* The prepared samples bucketed by case (a counting sort keeps their order): case c's are
 * idx[start[c] .. start[c+1]); *measured counts the cases that have one. start has nc + 2
 * entries, zeroed. CS_OK, or CS_EINPUT for a row whose case is outside the case table. */
static cs_status bucket_by_case(const cs_dataset *d, const uint32_t *rows, size_t n, size_t *start,
                                uint32_t *idx, size_t *measured, cs_error *err)
{
    size_t nc = d->n_cases;
    for (size_t q = 0; q < n; q++) {
        int32_t c = d->case_id[rows[q]];
        if (c < 0 || (size_t)c >= nc)
            return cs_error_set(err, CS_EINPUT, 0, 0, "%s: row %u has a case outside the case table",
                                d->path ? d->path : "input", (unsigned)rows[q]);
        start[c + 2]++;
    }
    *measured = 0;
    for (size_t c = 0; c < nc; c++) {
        if (start[c + 2]) (*measured)++;
        start[c + 2] += start[c + 1];
    }
    for (size_t q = 0; q < n; q++) idx[start[d->case_id[rows[q]] + 1]++] = (uint32_t)q;
    return CS_OK;
}

/* out's arrays for `measured` cases and the k*m*m histogram. 0, or -1 out of memory. */
static int alloc_cases(cs_case_metrics *out, size_t k, size_t m, size_t measured)
{
    size_t nm = measured ? measured : 1;
    out->k = k;
    out->m = m;
    out->case_index = malloc(nm * sizeof *out->case_index);
    out->count = malloc(nm * sizeof *out->count);
    out->ece = malloc(nm * sizeof *out->ece);
    out->ace = malloc(nm * sizeof *out->ace);
    out->mce = malloc(nm * sizeof *out->mce);
    out->hist = calloc(k * m * m, sizeof *out->hist);
    return out->case_index && out->count && out->ece && out->ace && out->mce && out->hist ? 0 : -1;
}

/* Each case with a sample: its binned metrics (one cs_evaluate on its index list) and its
 * rows of the reliability histogram; then the summary over cases. */
static cs_status measure_cases(const cs_dataset *d, const cs_prepared *p, const size_t *start,
                               const uint32_t *idx, uint32_t *scratch, const atomic_int *cancel,
                               cs_case_metrics *out, cs_error *err)
{
    const uint32_t *rows = cs_prepared_rows(p);
    size_t k = out->k, m = out->m, j = 0;
    for (size_t c = 0; c < d->n_cases; c++) {
        size_t cn = start[c + 1] - start[c];
        if (cn == 0) continue;
        if (cancel && atomic_load(cancel)) return cs_error_set(err, CS_ECANCELLED, 0, 0, "cancelled");
        cs_result r;
        memset(&r, 0, sizeof r);
        cs_status st = cs_evaluate(p, idx + start[c], cn, CS_WANT_BINNED, &(cs_run){ .threads = 1, .cancel = cancel }, &r, err);
        if (st != CS_OK) { cs_result_free(&r); return st; }
        out->case_index[j] = (int32_t)c;
        out->count[j] = cn;
        out->ece[j] = r.ece;
        out->ace[j] = r.ace;
        out->mce[j] = r.mce;
        cs_result_free(&r);
        case_hist(d, rows, idx + start[c], cn, m, scratch, scratch + k * m, out->hist);
        j++;
    }
    out->n_cases = j;
    out->ece_stat = cs_case_stat_of(out->ece, j);
    out->ace_stat = cs_case_stat_of(out->ace, j);
    out->mce_stat = cs_case_stat_of(out->mce, j);
    return CS_OK;
}

/* The binned metrics of all of p's samples pooled, as if one case. */
static cs_status measure_pooled(const cs_prepared *p, const atomic_int *cancel, cs_case_metrics *out,
                                cs_error *err)
{
    cs_result all;
    memset(&all, 0, sizeof all);
    cs_status st = cs_evaluate(p, NULL, 0, CS_WANT_BINNED, &(cs_run){ .threads = 1, .cancel = cancel }, &all, err);
    if (st == CS_OK) {
        out->pooled_ece = all.ece;
        out->pooled_ace = all.ace;
        out->pooled_mce = all.mce;
    }
    cs_result_free(&all);
    return st;
}

/* Per-case metrics of the prepared problem p of d (checked by check_cases): the samples
 * bucketed by case, each case measured, then the pool. */
static cs_status case_metrics_of(const cs_dataset *d, const cs_prepared *p, size_t m,
                                 const atomic_int *cancel, cs_case_metrics *out, cs_error *err)
{
    size_t n = cs_prepared_count(p), nc = d->n_cases, k = d->k, measured = 0;
    size_t *start = calloc(nc + 2, sizeof *start);
    uint32_t *idx = malloc((n ? n : 1) * sizeof *idx);
    uint32_t *scratch = malloc(2 * k * m * sizeof *scratch);
    cs_status st = CS_OK;
    if (!start || !idx || !scratch) st = CS_ENOMEM;
    if (st == CS_OK) st = bucket_by_case(d, cs_prepared_rows(p), n, start, idx, &measured, err);
    if (st == CS_OK && alloc_cases(out, k, m, measured) != 0) st = CS_ENOMEM;
    if (st == CS_OK) st = measure_cases(d, p, start, idx, scratch, cancel, out, err);
    if (st == CS_OK) st = measure_pooled(p, cancel, out, err);
    if (st == CS_ENOMEM) cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", d->path ? d->path : "input");
    free(start);
    free(idx);
    free(scratch);
    if (st != CS_OK) cs_case_metrics_free(out);
    return st;
}

cs_status cs_case_metrics_compute(const cs_dataset *d, const cs_settings *s,
                                  const atomic_int *cancel, cs_case_metrics *out, cs_error *err)
{
    memset(out, 0, sizeof *out);
    if (check_cases(d, s, err) != CS_OK) return err->code;
    cs_prepared *p = cs_prepare(d, s, err);
    if (!p) return err->code;
    cs_status st = case_metrics_of(d, p, (size_t)(s->bins > 0 ? s->bins : 1), cancel, out, err);
    cs_prepared_free(p);
    return st;
}

cs_status cs_case_metrics_planned(const cs_plan *pl, const cs_prepared *p, const atomic_int *cancel,
                                  cs_case_metrics *out, cs_error *err)
{
    memset(out, 0, sizeof *out);
    if (check_cases(pl->d, &pl->s, err) != CS_OK) return err->code;
    return case_metrics_of(pl->d, p, (size_t)(pl->s.bins > 0 ? pl->s.bins : 1), cancel, out, err);
}
