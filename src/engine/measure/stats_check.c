/* calscope engine: what a statistics file can answer — the settings, metric and selection
 * checks of cs_segstats_measure / cs_segstats_compare, each refusal with its reason. */
#include "engine/measure/stats_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calscope/catalogue.h"
#include "engine/classes.h"
#include "calscope/resample.h"
#include "calscope/select.h"

/* A dataset that stands for st's cases: one row per case (case_id = row) with st's class and
 * case names, so the class-token rule and the selection compiler apply unchanged. Borrows st's
 * arrays; case_id is the caller's (n_cases entries, or NULL). */
static cs_dataset proxy(const cs_segstats *st, int32_t *case_id)
{
    cs_dataset d;
    memset(&d, 0, sizeof d);
    d.path = (char *)"statistics";
    d.n = st->n_cases;
    d.k = st->k;
    d.class_names = st->class_names;
    d.case_id = case_id;
    d.case_names = st->case_names;
    d.n_cases = st->n_cases;
    return d;
}

cs_status seg_check_bins(const cs_segstats *st, int M, cs_error *err)
{
    if (M >= 1 && st->fine % M == 0) return CS_OK;
    char list[400] = "";
    size_t len = 0;
    for (int d = 1; d <= st->fine && d <= CS_BINS_MAX; d++) {
        if (st->fine % d) continue;
        if (len > sizeof list - 16) { strcpy(list + len, " ..."); break; }
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%d", len ? " " : "", d);
    }
    return cs_error_set(err, CS_EUSAGE, 0, 0, "--bins %d does not divide the statistics' fine"
                        " resolution %d (use one of %s)", M, st->fine, list);
}

cs_status seg_check_settings(const cs_segstats *st, const cs_settings *s, size_t *cls,
                             cs_error *err)
{
    cs_status rc = cs_settings_validate(s, err);
    if (rc) return rc;
    char lens[CS_SPEC_MAX + 16];
    cs_settings_lens_name(s, lens, sizeof lens);
    switch (s->lens) {
    case CS_LENS_TOPK: case CS_LENS_GROUP: case CS_LENS_FULL:
        return cs_error_set(err, CS_EUSAGE, 0, 0, "--lens %s: a vector lens needs each voxel's"
                            " probability vector; a statistics file keeps per-bin sums per class"
                            " (use --lens top1, classwise or class:C)", lens);
    case CS_LENS_TOP1:
        if (st->kind == CS_SEG_REGIONS)
            return cs_error_set(err, CS_EUSAGE, 0, 0, "top-1 is undefined for independent sigmoid"
                                " regions; use --lens classwise or class:C");
        break;
    case CS_LENS_CLASS: {
        int32_t none = 0;
        cs_dataset d = proxy(st, &none);
        int why;
        int c = cs_dataset_class_find(&d, s->lens_arg, &why);
        if (c < 0) return cs_dataset_class_error(&d, "--lens class", s->lens_arg, why, err);
        *cls = (size_t)c;
        break;
    }
    case CS_LENS_CLASSWISE:
        break;
    }
    if (s->binning == CS_BIN_MASS)
        return cs_error_set(err, CS_EUSAGE, 0, 0, "--binning mass: equal-mass bins need the voxels'"
                            " order; a statistics file keeps per-bin sums");
    if (s->binning == CS_BIN_KDTREE)
        return cs_error_set(err, CS_EUSAGE, 0, 0, "--binning kdtree: k-d-tree cells need the"
                            " voxels' order; a statistics file keeps per-bin sums");
    return seg_check_bins(st, s->bins, err);
}

/* The bins curve's default metrics (cs_curve_options_bins_default). */
static unsigned bins_default_mask(void)
{
    cs_curve_options o;
    cs_curve_options_bins_default(&o, 0);
    return o.metrics;
}

cs_status seg_metric_mask(const cs_segstats *st, unsigned asked, const char *what,
                          unsigned *mask, cs_error *err)
{
    unsigned exact = CS_METRIC_BIT(CS_METRIC_ECE) | CS_METRIC_BIT(CS_METRIC_ACE) |
                     CS_METRIC_BIT(CS_METRIC_MCE) | CS_METRIC_BIT(CS_METRIC_SCE) |
                     CS_METRIC_BIT(CS_METRIC_BRIER) | CS_METRIC_BIT(CS_METRIC_NLL) |
                     (st->kind == CS_SEG_SOFTMAX ? CS_METRIC_BIT(CS_METRIC_ACCURACY) : 0u);
    if (asked == 0 || asked == CS_METRICS_DEFAULT || asked == bins_default_mask()) {
        *mask = (asked ? asked : CS_METRICS_DEFAULT) & exact;
        return CS_OK;
    }
    static const struct { int id; const char *why; } inexact[] = {
        { CS_METRIC_AECE, "equal-mass bins need the voxels' order" },
        { CS_METRIC_RECE_G, "its kernel needs each voxel's confidence" },
        { CS_METRIC_RECE_M, "it needs test-time augmentation rows" },
    };
    for (size_t i = 0; i < sizeof inexact / sizeof inexact[0]; i++)
        if (asked & CS_METRIC_BIT(inexact[i].id))
            return cs_error_set(err, CS_EUSAGE, 0, 0, "%s: %s cannot be computed from a statistics"
                                " file (%s; a statistics file keeps per-bin sums)", what,
                                cs_metric_name(inexact[i].id), inexact[i].why);
    if ((asked & CS_METRIC_BIT(CS_METRIC_ACCURACY)) && st->kind == CS_SEG_REGIONS)
        return cs_error_set(err, CS_EUSAGE, 0, 0, "%s: accuracy is undefined for independent"
                            " sigmoid regions", what);
    *mask = asked;
    return CS_OK;
}

uint8_t *seg_select(const cs_segstats *st, const cs_settings *s, cs_error *err)
{
    size_t n = st->n_cases;
    uint8_t *keep = malloc(n ? n : 1);
    int32_t *ids = malloc((n ? n : 1) * sizeof *ids);
    if (!keep || !ids) {
        free(keep);
        free(ids);
        cs_error_set(err, CS_ENOMEM, 0, 0, "statistics: out of memory");
        return NULL;
    }
    for (size_t c = 0; c < n; c++) ids[c] = (int32_t)c;
    memset(keep, 1, n);
    cs_dataset d = proxy(st, ids);
    cs_select *sel = cs_select_compile(s->select, &d, err);
    if (!sel) {
        free(keep);
        free(ids);
        return NULL;
    }
    if (!cs_select_only_case(sel)) {
        cs_select_free(sel);
        free(keep);
        free(ids);
        cs_error_set(err, CS_EUSAGE, 0, 0, "selection: a statistics file keeps per-bin sums per"
                     " case; only `case` conditions apply");
        return NULL;
    }
    for (size_t c = 0; c < n; c++) keep[c] = (uint8_t)cs_select_match(sel, &d, c);
    cs_select_free(sel);
    free(ids);
    return keep;
}
