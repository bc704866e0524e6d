/* Segmentation inputs as datasets (issue 12): a statistics file (calscope/segstats.h) is read
 * and wrapped in a row-less cs_dataset (dataset.h, `stats`), so the report and the dashboard
 * open it like any prediction file and cs_measure hands it to cs_segstats_measure. */
#include "engine/load/load_internal.h"

#include <stdlib.h>
#include <string.h>

#include "calscope/segstats.h"

cs_dataset *cs_load_wrap_stats(const char *path, cs_segstats *st, cs_error *err)
{
    cs_dataset *d = calloc(1, sizeof *d);
    char **cases = st->n_cases ? calloc(st->n_cases, sizeof *cases) : NULL;
    char **names = cs_names_pack((const char *const *)st->class_names, st->k);
    if (!d || (st->n_cases && !cases) || !names || !(d->path = strdup(path))) goto oom;
    for (size_t c = 0; c < st->n_cases; c++)
        if (!(cases[c] = strdup(st->case_names[c]))) goto oom;
    d->k = st->k;
    d->class_names = names;
    d->case_names = cases;
    d->n_cases = st->n_cases;
    for (size_t c = 0; c < st->n_cases; c++) d->n += st->voxels[c];
    d->n_samples = d->n;
    d->stats = st;
    return d;
oom:
    if (cases)
        for (size_t c = 0; c < st->n_cases; c++) free(cases[c]);
    free(cases);
    free(names);
    if (d) free(d->path);
    free(d);
    cs_segstats_free(st);
    cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", path);
    return NULL;
}

cs_dataset *cs_load_stats_file(const char *path, cs_error *err)
{
    cs_segstats *st = NULL;
    if (cs_segstats_read(path, &st, err) != CS_OK) return NULL;
    return cs_load_wrap_stats(path, st, err);
}
