/* calscope engine: cs_segstats_measure (calscope/segmeasure.h) — the values, the per-case
 * metrics and the parts, in cs_measure's order, from a statistics file. */
#include "calscope/segmeasure.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/num/ubin.h"
#include "engine/measure/stats_internal.h"
#include "engine/measure/stats_resample.h"

/* Per-case metrics and the dataset reliability histogram, by cases.h's rules: each case's
 * ECE/ACE/MCE under the lens; cell [j][i][f] counts the cases whose observed frequency of
 * class j among their voxels with p_j in bin i falls in frequency bin f. */
static cs_status case_metrics(const seg_prob *p, const atomic_int *cancel, cs_case_metrics *out,
                              cs_error *err)
{
    memset(out, 0, sizeof *out);
    size_t k = p->k, m = p->M, measured = 0;
    cs_status rc = cs_case_hist_check(k, m, "statistics", err);
    if (rc) return rc;
    for (size_t a = 0; a < p->na; a++) measured += p->vox[a] > 0;
    size_t mm = measured ? measured : 1;
    out->k = k;
    out->m = m;
    out->case_index = malloc(mm * sizeof *out->case_index);
    out->count = malloc(mm * sizeof *out->count);
    out->ece = malloc(mm * sizeof *out->ece);
    out->ace = malloc(mm * sizeof *out->ace);
    out->mce = malloc(mm * sizeof *out->mce);
    out->hist = calloc(k * m * m, sizeof *out->hist);
    if (!out->case_index || !out->count || !out->ece || !out->ace || !out->mce || !out->hist) {
        cs_case_metrics_free(out);
        return cs_error_set(err, CS_ENOMEM, 0, 0, "statistics: out of memory");
    }
    size_t i = 0;
    for (size_t a = 0; a < p->na; a++) {
        if (!p->vox[a]) continue;
        if (cancel && atomic_load(cancel)) {
            cs_case_metrics_free(out);
            return cs_error_set(err, CS_ECANCELLED, 0, 0, "cancelled");
        }
        cs_result r;
        rc = seg_eval(p, NULL, (long)a, CS_WANT_BINNED, 0, &r, err);
        if (rc) {
            cs_case_metrics_free(out);
            return rc;
        }
        out->case_index[i] = (int32_t)p->act[a];
        out->count[i] = (size_t)p->vox[a];
        out->ece[i] = r.ece;
        out->ace[i] = r.ace;
        out->mce[i] = r.mce;
        cs_result_free(&r);
        for (size_t j = 0; j < k; j++)
            for (size_t b = 0; b < m; b++) {
                uint64_t t = p->cnt[(a * k + j) * m + b];
                if (t == 0) continue;
                double f = (double)p->sy[(a * k + j) * m + b] / (double)t;
                out->hist[(j * m + b) * m + (size_t)cs_ubin(f, (int)m)]++;
            }
        i++;
    }
    out->n_cases = measured;
    out->ece_stat = cs_case_stat_of(out->ece, measured);
    out->ace_stat = cs_case_stat_of(out->ace, measured);
    out->mce_stat = cs_case_stat_of(out->mce, measured);
    cs_result all;
    rc = seg_eval(p, NULL, -1, CS_WANT_BINNED, 0, &all, err);
    if (rc) {
        cs_case_metrics_free(out);
        return rc;
    }
    out->pooled_ece = all.ece;
    out->pooled_ace = all.ace;
    out->pooled_mce = all.mce;
    cs_result_free(&all);
    return CS_OK;
}

/* The parts a statistics file cannot give, refused before any work. */
static cs_status check_parts(const cs_measure_request *q, cs_error *err)
{
    if ((q->parts & CS_MEASURE_TOPK) && q->n_topk)
        return cs_error_set(err, CS_EUSAGE, 0, 0, "top-k bars need each voxel's probability"
                            " vector; a statistics file keeps per-bin sums per class");
    if (q->parts & CS_MEASURE_LIKERT)
        return cs_error_set(err, CS_EUSAGE, 0, 0, "the Likert table needs each voxel's"
                            " confidence; a statistics file keeps per-bin sums");
    return CS_OK;
}

cs_status cs_segstats_measure(const cs_segstats *st, const cs_settings *s,
                              const cs_measure_request *q, const cs_run *run,
                              cs_measurement *out, cs_error *err)
{
    memset(out, 0, sizeof *out);
    size_t cls = 0;
    cs_status rc = seg_check_settings(st, s, &cls, err);
    if (!rc) rc = check_parts(q, err);
    unsigned ci_mask = 0;
    if (!rc && (q->parts & CS_MEASURE_CI) && q->ci_repeats > 0)
        rc = seg_metric_mask(st, q->ci_metrics, "--ci", &ci_mask, err);
    if (rc) return rc;
    uint8_t *keep = seg_select(st, s, err);
    if (!keep) return err->code;
    seg_prob p;
    rc = seg_prob_init(&p, st, s, s->bins, keep, err);
    free(keep);
    if (rc) return rc;
    p.cls = cls;
    for (size_t a = 0; a < p.na; a++) out->selected += (size_t)p.vox[a];
    if (out->selected == 0) {
        seg_prob_free(&p);
        return cs_error_set(err, CS_EEMPTY, 0, 0, "the selection keeps no sample");
    }
    rc = seg_eval(&p, NULL, -1, q->want ? q->want : CS_WANT_ALL, 1, &out->result, err);
    if (rc == CS_OK) out->evaluated = 1;
    const atomic_int *cancel = run ? run->cancel : NULL;
    if (rc == CS_OK && (q->parts & CS_MEASURE_CASES)) {
        rc = case_metrics(&p, cancel, &out->cases, err);
        if (rc == CS_OK) out->has_cases = 1;
    }
    if (rc == CS_OK && (q->parts & CS_MEASURE_CI) && q->ci_repeats > 0) {
        rc = seg_interval(&p, ci_mask, q->ci_repeats, q->seed, q->ci_method, run, &out->ci, err);
        if (rc == CS_OK) out->has_ci = 1;
    }
    if (rc == CS_OK && (q->parts & CS_MEASURE_CURVE)) {
        out->curve = q->curve_kind == CS_CURVE_SIZE ? seg_size_curve(&p, &q->curve, run, err)
                                                    : seg_bins_curve(&p, &q->curve, run, err);
        if (!out->curve && err->code != CS_EEMPTY) rc = err->code;   /* nothing to resample:
                                                                         absent, as cs_measure */
    }
    seg_prob_free(&p);
    return rc;
}
