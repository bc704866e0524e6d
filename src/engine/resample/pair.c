/* Pairing the samples of two files for --compare (see cs_compare_pair in calscope/curves.h).
 *
 * Every refusal names the place in the file that causes it, as the loader's messages do
 * ("FILE:LINE:COL: reason"), so a user can open the file at the row: the header column of a
 * class without a partner, the row of an id without a partner or of its second occurrence, the
 * first row past the shorter file, or the row of B whose label differs from A's. A is the
 * reference (the first file); each error is found once, scanning A's rows in file order first. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calscope/curves.h"
#include "engine/sort/sort.h"

typedef struct id_ref {
    const char *name;
    uint32_t row;
} id_ref;

/* Order of two entries of an id_ref array (the context): by name, equal names in file order. */
static int cmp_id_ref(uint32_t a, uint32_t b, const void *ctx)
{
    const id_ref *x = (const id_ref *)ctx + a, *y = (const id_ref *)ctx + b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->row > y->row) - (x->row < y->row);
}

static const char *name_of(const cs_dataset *d)
{
    return d->path ? d->path : "(unnamed)";
}

/* "FILE:LINE:COL: " (or "FILE:LINE: ", "FILE: " when a part is unknown) into buf. */
static void place(char *buf, size_t size, const cs_dataset *d, long line, long col)
{
    if (line > 0 && col > 0) snprintf(buf, size, "%s:%ld:%ld: ", name_of(d), line, col);
    else if (line > 0) snprintf(buf, size, "%s:%ld: ", name_of(d), line);
    else snprintf(buf, size, "%s: ", name_of(d));
}

static long row_line(const cs_dataset *d, uint32_t row)
{
    return d->line ? (long)d->line[row] : 0;
}

static const char *class_name(const cs_dataset *d, int c)
{
    return d->class_names && c >= 0 && (size_t)c < d->k ? d->class_names[c] : "?";
}

/* The errors, each with its place. */
static cs_status fail_at(cs_error *err, const cs_dataset *d, long line, long col, const char *what)
{
    char at[1100];
    place(at, sizeof at, d, line, col);
    return cs_error_set(err, CS_EINPUT, line, col, "%s--compare: %s", at, what);
}

static cs_status classes_differ(const cs_dataset *a, const cs_dataset *b, cs_error *err)
{
    /* the first class one file has and the other lacks: its header column */
    const cs_dataset *more = a->k > b->k ? a : b, *less = more == a ? b : a;
    size_t c = less->k;
    char what[600];
    snprintf(what, sizeof what, "class '%s' has no partner: %s has %zu classes, %s has %zu",
             class_name(more, (int)c), name_of(a), a->k, name_of(b), b->k);
    return fail_at(err, more, more->header_line, more->class_col ? more->class_col[c] : 0, what);
}

static cs_status pair_by_row(const cs_dataset *a, const cs_dataset *b, uint32_t *a_to_b,
                             cs_error *err)
{
    if (a->n_samples != b->n_samples) {
        const cs_dataset *more = a->n_samples > b->n_samples ? a : b,
                         *less = more == a ? b : a;
        uint32_t row = more->sample_rows[less->n_samples];
        char what[600];
        snprintf(what, sizeof what, "sample %zu has no partner: %s has %zu samples, %s has %zu "
                 "(no id column in both: samples pair in file order)", less->n_samples + 1,
                 name_of(a), a->n_samples, name_of(b), b->n_samples);
        return fail_at(err, more, row_line(more, row), 0, what);
    }
    for (size_t j = 0; j < a->n_samples; j++)
        a_to_b[a->sample_rows[j]] = b->sample_rows[j];
    return CS_OK;
}

/* Sorted (name, row) of d's samples; a repeated id is an error at its second row. */
static id_ref *sorted_ids(const cs_dataset *d, cs_error *err, cs_status *st)
{
    size_t n = d->n_samples;
    id_ref *in = malloc((n ? n : 1) * sizeof *in), *r = malloc((n ? n : 1) * sizeof *r);
    uint32_t *ord = malloc((n ? n : 1) * sizeof *ord);
    for (size_t j = 0; in && ord && j < n; j++) {
        uint32_t row = d->sample_rows[j];
        in[j] = (id_ref){ d->id_names[d->id[row]], row };
        ord[j] = (uint32_t)j;
    }
    if (!in || !r || !ord || cs_sort_by(ord, n, cmp_id_ref, in) != 0) {
        free(in);
        free(r);
        free(ord);
        *st = cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
        return NULL;
    }
    for (size_t j = 0; j < n; j++) r[j] = in[ord[j]];
    free(in);
    free(ord);
    /* the earliest second occurrence in file order */
    size_t dup = n;
    for (size_t j = 0; j + 1 < n; j++)
        if (strcmp(r[j].name, r[j + 1].name) == 0 && (dup == n || r[j + 1].row < r[dup].row)) dup = j + 1;
    if (dup < n) {
        char what[600];
        long first = row_line(d, r[dup - 1].row);
        if (first > 0) snprintf(what, sizeof what, "id '%s' occurs twice (first on line %ld)", r[dup].name, first);
        else snprintf(what, sizeof what, "id '%s' occurs twice", r[dup].name);
        *st = fail_at(err, d, row_line(d, r[dup].row), d->id_col, what);
        free(r);
        return NULL;
    }
    *st = CS_OK;
    return r;
}

static const id_ref *find_id(const id_ref *refs, size_t n, const char *name)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(refs[mid].name, name);
        if (c == 0) return &refs[mid];
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

static cs_status pair_by_id(const cs_dataset *a, const cs_dataset *b, uint32_t *a_to_b,
                            cs_error *err)
{
    cs_status st;
    id_ref *ra = sorted_ids(a, err, &st);
    if (!ra) return st;
    id_ref *rb = sorted_ids(b, err, &st);
    if (!rb) {
        free(ra);
        return st;
    }
    char what[600];
    /* A's rows in file order, then B's */
    for (size_t j = 0; j < a->n_samples && st == CS_OK; j++) {
        uint32_t row = a->sample_rows[j];
        const char *name = a->id_names[a->id[row]];
        const id_ref *hit = find_id(rb, b->n_samples, name);
        if (!hit) {
            snprintf(what, sizeof what, "id '%s' is not in %s", name, name_of(b));
            st = fail_at(err, a, row_line(a, row), a->id_col, what);
        } else {
            a_to_b[row] = hit->row;
        }
    }
    for (size_t j = 0; j < b->n_samples && st == CS_OK; j++) {
        uint32_t row = b->sample_rows[j];
        const char *name = b->id_names[b->id[row]];
        if (!find_id(ra, a->n_samples, name)) {
            snprintf(what, sizeof what, "id '%s' is not in %s", name, name_of(a));
            st = fail_at(err, b, row_line(b, row), b->id_col, what);
        }
    }
    free(ra);
    free(rb);
    return st;
}

cs_status cs_compare_pair(const cs_dataset *a, const cs_dataset *b, uint32_t *a_to_b, int *by_id,
                          cs_error *err)
{
    if (cs_dataset_need_rows(a, "pairing rows", err) != CS_OK ||
        cs_dataset_need_probs(a, "pairing rows", err) != CS_OK ||
        cs_dataset_need_rows(b, "pairing rows", err) != CS_OK ||
        cs_dataset_need_probs(b, "pairing rows", err) != CS_OK)
        return err->code;
    uint32_t *map = a_to_b ? a_to_b : malloc((a->n ? a->n : 1) * sizeof *map);
    if (!map) return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
    for (size_t i = 0; i < a->n; i++)
        map[i] = UINT32_MAX;
    int ids = a->id && b->id;
    if (by_id) *by_id = ids;
    cs_status st = a->k != b->k ? classes_differ(a, b, err)
                   : ids ? pair_by_id(a, b, map, err) : pair_by_row(a, b, map, err);
    for (size_t j = 0; j < a->n_samples && st == CS_OK; j++) {
        uint32_t ra = a->sample_rows[j], rb = map[ra];
        if (a->label[ra] == b->label[rb]) continue;
        char what[900], in_a[600];
        long la = row_line(a, ra);
        if (la > 0) snprintf(in_a, sizeof in_a, "%s:%ld", name_of(a), la);
        else snprintf(in_a, sizeof in_a, "%s", name_of(a));
        if (ids)
            snprintf(what, sizeof what, "label '%s' of id '%s' differs from %s (label '%s')",
                     class_name(b, b->label[rb]), b->id_names[b->id[rb]], in_a, class_name(a, a->label[ra]));
        else
            snprintf(what, sizeof what, "label '%s' of sample %zu differs from %s (label '%s'); "
                     "no id column in both: samples pair in file order", class_name(b, b->label[rb]), j + 1,
                     in_a, class_name(a, a->label[ra]));
        st = fail_at(err, b, row_line(b, rb), b->label_col, what);
    }
    if (!a_to_b) free(map);
    return st;
}
