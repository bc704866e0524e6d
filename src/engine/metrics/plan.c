/* cs_plan: the settings of one measurement checked, selected and resolved against one dataset,
 * once (calscope/metrics.h). The order of the steps is the order of cs_prepare's refusals, so
 * that the first of two problems is the one it has always named. */
#include "mx.h"

#include <stdlib.h>
#include <string.h>

#include "calscope/select.h"

/* 1 when a selection expression keeps every sample (empty, or blanks only). */
static int select_blank(const char *sel)
{
    for (const char *c = sel; *c; c++)
        if (*c != ' ' && *c != '\t') return 0;
    return 1;
}

/* What is refused before any work: a row-less dataset, settings out of range, a dataset not
 * prepared. CS_OK, or the refusal in err. */
static cs_status check_preparable(const cs_dataset *d, const cs_settings *s, cs_error *err)
{
    cs_status st = cs_dataset_need_rows(d, "this measurement", err);
    if (st == CS_OK) st = cs_settings_validate(s, err);
    if (st != CS_OK) return st;
    if (!d->conf || !d->sample_rows)
        return cs_error_set(err, CS_EUSAGE, 0, 0, "dataset not prepared (cs_dataset_prepare)");
    return CS_OK;
}

/* The samples the plan measures: the dataset's list (borrowed) for a blank selection, else
 * those the selection, compiled here once, keeps (maybe none: cs_prepare_planned says so). */
static cs_status select_rows(cs_plan *pl, cs_error *err)
{
    const cs_dataset *d = pl->d;
    pl->all = select_blank(pl->s.select);
    if (pl->all) {
        pl->rows = d->sample_rows;
        pl->n = d->n_samples;
        return CS_OK;
    }
    pl->owned_rows = malloc((d->n_samples ? d->n_samples : 1) * sizeof *pl->owned_rows);
    if (!pl->owned_rows) return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory (selection)");
    cs_select *sel = cs_select_compile(pl->s.select, d, err);
    if (!sel) return err->code;
    pl->n = cs_select_filter(sel, d, d->sample_rows, d->n_samples, pl->owned_rows);
    pl->rows = pl->owned_rows;
    cs_select_free(sel);
    return CS_OK;
}

/* The class names of the lens: --lens class:NAME's column, --lens group's groups. */
static cs_status resolve_classes(cs_plan *pl, cs_error *err)
{
    const cs_dataset *d = pl->d;
    if (pl->s.lens == CS_LENS_CLASS) {
        int why;
        pl->cls = cs_dataset_class_find(d, pl->s.lens_arg, &why);
        if (pl->cls < 0) return cs_dataset_class_error(d, "--lens class", pl->s.lens_arg, why, err);
    }
    if (pl->s.lens == CS_LENS_GROUP) {
        pl->group_of = malloc((d->k ? d->k : 1) * sizeof *pl->group_of);
        if (!pl->group_of) return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory (group lens)");
        return cs_mx_parse_groups(d, pl->s.lens_arg, pl->group_of, &pl->n_groups, err);
    }
    return CS_OK;
}

cs_plan *cs_plan_new(const cs_dataset *d, const cs_settings *s, cs_error *err)
{
    if (check_preparable(d, s, err) != CS_OK) return NULL;
    cs_plan *pl = calloc(1, sizeof *pl);
    if (!pl) {
        cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
        return NULL;
    }
    pl->d = d;
    pl->s = *s;
    pl->cls = -1;
    /* the selection first, then the lens's classes over the selected samples (none when it
     * keeps none: the empty selection is what cs_prepare_planned names first) */
    if (select_rows(pl, err) != CS_OK || (pl->n > 0 && resolve_classes(pl, err) != CS_OK)) {
        cs_plan_free(pl);
        return NULL;
    }
    return pl;
}

void cs_plan_free(cs_plan *pl)
{
    if (!pl) return;
    free(pl->owned_rows);
    free(pl->group_of);
    free(pl);
}
