/* Measuring one file under one set of settings (see calscope/measure.h): the one sequence the
 * report runs per file and the dashboard's jobs run part by part. */
#include "calscope/measure.h"

#include <stdlib.h>
#include <string.h>

#include "calscope/segmeasure.h"
#include "calscope/topk.h"

void cs_measurement_free(cs_measurement *m)
{
    if (!m) return;
    cs_result_free(&m->result);
    cs_case_metrics_free(&m->cases);
    cs_curve_free(m->curve);
    memset(m, 0, sizeof *m);
}

int cs_measure_reads_only_sums(const cs_settings *s, unsigned parts)
{
    /* intervals, curves, top-k bars and the Likert table draw or cut the rows; a selection
     * or another lens scores other numbers than the sums hold */
    const unsigned row_parts = CS_MEASURE_CI | CS_MEASURE_CURVE | CS_MEASURE_TOPK | CS_MEASURE_LIKERT;
    return !s->select[0] && s->lens == CS_LENS_TOP1 && !(parts & row_parts);
}

/* A part's status: CS_OK for a part with nothing to measure (CS_EEMPTY, left out), else st;
 * *has is set when the part was measured. */
static cs_status part_done(cs_status st, int *has)
{
    if (st == CS_OK) *has = 1;
    return st == CS_EEMPTY ? CS_OK : st;
}

/* The parts after the values, each from the measurement's one plan pl and, where it takes
 * it, the same prepared problem p. A part with nothing to measure (CS_EEMPTY) is left out;
 * any other failure ends the measurement. */
static cs_status parts(const cs_plan *pl, const cs_measure_request *q, const cs_run *run,
                       const cs_prepared *p, cs_measurement *out, cs_error *err)
{
    const atomic_int *cancel = run ? run->cancel : NULL;
    cs_status st = CS_OK;
    if ((q->parts & CS_MEASURE_CASES) && pl->d->case_id)
        st = part_done(cs_case_metrics_planned(pl, p, cancel, &out->cases, err), &out->has_cases);
    if (st == CS_OK && (q->parts & CS_MEASURE_CI) && q->ci_repeats > 0) {
        unsigned mask = q->ci_metrics ? q->ci_metrics : CS_METRICS_DEFAULT;
        st = part_done(cs_bootstrap_interval(p, mask, q->ci_repeats, q->seed, q->ci_method, run, &out->ci, err),
                       &out->has_ci);
    }
    if (st == CS_OK && (q->parts & CS_MEASURE_CURVE)) {
        out->curve = q->curve_kind == CS_CURVE_SIZE ? cs_size_curve(p, &q->curve, run, err)
                                                    : cs_bins_curve_planned(pl, &q->curve, run, err);
        if (!out->curve && err->code != CS_EEMPTY) return err->code;
    }
    if (st == CS_OK && (q->parts & CS_MEASURE_TOPK) && q->n_topk) {
        size_t nk = q->n_topk < CS_MEASURE_MAX_TOPK ? q->n_topk : CS_MEASURE_MAX_TOPK;
        memcpy(out->topk_k, q->topk, nk * sizeof *out->topk_k);
        out->n_topk = nk;
        st = part_done(cs_topk_bars_planned(pl, out->topk_k, nk, cancel, out->topk_ece, err), &out->has_topk);
    }
    if (st == CS_OK && (q->parts & CS_MEASURE_LIKERT))
        st = part_done(cs_likert_planned(pl, q->likert_cuts, q->n_likert_cuts, cancel, &out->likert, err),
                       &out->has_likert);
    return st;
}

/* The values of p, then the parts. */
static cs_status measure_planned(const cs_plan *pl, const cs_measure_request *q, const cs_run *run,
                                 cs_measurement *out, cs_error *err)
{
    cs_prepared *p = cs_prepare_planned(pl, NULL, err);
    if (!p) return err->code;
    out->selected = cs_prepared_count(p);
    cs_status st = cs_evaluate(p, NULL, 0, q->want ? q->want : CS_WANT_ALL, run, &out->result, err);
    if (st == CS_OK) {
        out->evaluated = 1;
        st = parts(pl, q, run, p, out, err);
    }
    cs_prepared_free(p);
    return st;
}

cs_status cs_measure(const cs_dataset *d, const cs_settings *s, const cs_measure_request *q,
                     const cs_run *run, cs_measurement *out, cs_error *err)
{
    if (d->stats) return cs_segstats_measure(d->stats, s, q, run, out, err);
    memset(out, 0, sizeof *out);
    /* the settings checked, selected and resolved once; every part reads the plan */
    cs_plan *pl = cs_plan_new(d, s, err);
    if (!pl) return err->code;
    cs_status st = measure_planned(pl, q, run, out, err);
    cs_plan_free(pl);
    return st;
}

int cs_fit_split_held_out(const cs_fit_split *sp)
{
    return sp && (sp->by_column || sp->fraction > 0);
}

uint8_t *cs_fit_mask(const cs_dataset *d, const cs_fit_split *sp, cs_error *err)
{
    if (sp->by_column) return cs_recal_column_mask(d, sp->fit_value, err);
    uint8_t *m = cs_recal_split_mask(d, sp->fraction, sp->seed);
    if (!m) cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", d->path ? d->path : "input");
    return m;
}

cs_dataset *cs_recal_held_out(const cs_dataset *d, int method, const cs_recal_options *o,
                              const uint8_t *mask, cs_recal_info *info, cs_error *err)
{
    cs_recal_options ro = *o;
    ro.fit_mask = mask;
    cs_dataset *full = cs_recal_apply(d, method, &ro, info, err);
    if (!full) return NULL;
    /* fitted on mask 1: every method is measured on the rows the fit never saw */
    const cs_run run = { .threads = o->threads, .cancel = o->cancel };
    cs_dataset *held = cs_dataset_subset(full, mask, 0, "", &run, err);
    cs_dataset_free(full);
    return held;
}

cs_status cs_compare_run(const cs_dataset *a, const cs_dataset *b, const cs_settings *s,
                         unsigned metrics, int repeats, uint64_t seed, const cs_run *run,
                         cs_compare *out, cs_error *err)
{
    /* statistics files are compared case by case (cases are the unit of evidence) */
    if (a->stats && b->stats)
        return cs_segstats_compare(a->stats, a->path, b->stats, b->path, s, metrics, repeats, seed, run, out, err);
    return cs_compare_rows(a, b, s, metrics, repeats, seed, run, out, err);
}
