/* calscope engine: merging statistics shards (segstats.h). A case's sums are copied, never
 * re-added, so shards merged in any grouping give the bytes a single run writes. */
#include "engine/segstats/segstats_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct src_case {
    const char *name;
    size_t part, c;
} src_case;

static int by_name(const void *a, const void *b)
{
    return strcmp(((const src_case *)a)->name, ((const src_case *)b)->name);
}

/* What differs between the headers of a and b, or NULL. */
static const char *header_diff(const cs_segstats *a, const cs_segstats *b, char *buf, size_t size)
{
    if (a->fine != b->fine)
        snprintf(buf, size, "fine resolution %d vs %d", a->fine, b->fine);
    else if (a->kind != b->kind)
        snprintf(buf, size, "kind %s vs %s", cs_segstats_kind_name(a->kind),
                 cs_segstats_kind_name(b->kind));
    else if (strcmp(a->mapping, b->mapping))
        snprintf(buf, size, "mapping '%.200s' vs '%.200s'", a->mapping, b->mapping);
    else if (a->k != b->k)
        snprintf(buf, size, "%zu classes vs %zu", a->k, b->k);
    else {
        for (size_t j = 0; j < a->k; j++)
            if (strcmp(a->class_names[j], b->class_names[j])) {
                snprintf(buf, size, "class %zu is '%.200s' vs '%.200s'", j, a->class_names[j],
                         b->class_names[j]);
                return buf;
            }
        return NULL;
    }
    return buf;
}

cs_status cs_segstats_merge(const cs_segstats *const *parts, const char *const *names, size_t n,
                            cs_segstats **out, cs_error *err)
{
    *out = NULL;
    if (n == 0) return cs_error_set(err, CS_EUSAGE, 0, 0, "merge: no statistics files given");
    char why[600];
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        if (i && header_diff(parts[0], parts[i], why, sizeof why))
            return cs_error_set(err, CS_EINPUT, 0, 0, "%s and %s cannot be merged: %s", names[0],
                                names[i], why);
        total += parts[i]->n_cases;
    }
    src_case *all = malloc((total ? total : 1) * sizeof *all);
    if (!all) return cs_error_set(err, CS_ENOMEM, 0, 0, "merge: out of memory");
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t c = 0; c < parts[i]->n_cases; c++)
            all[m++] = (src_case){parts[i]->case_names[c], i, c};
    qsort(all, total, sizeof *all, by_name);
    for (size_t x = 1; x < total; x++)
        if (strcmp(all[x - 1].name, all[x].name) == 0) {
            size_t a = all[x - 1].part < all[x].part ? all[x - 1].part : all[x].part;
            size_t b = all[x - 1].part < all[x].part ? all[x].part : all[x - 1].part;
            cs_status s = cs_error_set(err, CS_EINPUT, 0, 0, a == b ? "case '%.200s' is twice in %s"
                                       "%.0s" : "case '%.200s' is in both %s and %s", all[x].name,
                                       names[a], names[b]);
            free(all);
            return s;
        }
    const cs_segstats *p0 = parts[0];
    cs_segstats *st = cs_segstats_new(p0->fine, p0->kind, p0->k,
                                      (const char *const *)p0->class_names, p0->mapping, total);
    int ok = st != NULL;
    if (ok) cs_segstats_advise_sparse(st);   /* only the non-empty bins are touched */
    for (size_t x = 0; ok && x < total; x++)
        ok = cs_segstats_copy_case(st, x, parts[all[x].part], all[x].c) == 0;
    free(all);
    if (!ok) {
        cs_segstats_free(st);
        return cs_error_set(err, CS_ENOMEM, 0, 0, "merge: out of memory");
    }
    *out = st;
    return CS_OK;
}
