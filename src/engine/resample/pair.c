/* Pairing the samples of two files for --compare (see cs_compare_pair in calscope/resample.h).
 *
 * Every refusal names the place in the file that causes it, as the loader's messages do
 * ("FILE:LINE:COL: reason"), so a user can open the file at the row: the header column of a
 * class without a partner, the row of an id without a partner or of its second occurrence, the
 * first row past the shorter file, or the row of B whose label differs from A's. A is the
 * reference (the first file); each error is found once, scanning A's rows in file order first. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calscope/resample.h"
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

/* ---- class order: two files naming the same classes in another column order ---- */

static int cmp_class_name(uint32_t a, uint32_t b, const void *ctx)
{
    const char *const *names = ctx;
    return strcmp(names[a], names[b]);
}

/* d's class indices sorted by name (NULL when out of memory). */
static uint32_t *by_name(const cs_dataset *d)
{
    uint32_t *ord = malloc(d->k * sizeof *ord);
    if (!ord) return NULL;
    for (size_t j = 0; j < d->k; j++) ord[j] = (uint32_t)j;
    if (cs_sort_by(ord, d->k, cmp_class_name, d->class_names) != 0) {
        free(ord);
        return NULL;
    }
    return ord;
}

static int named(const cs_dataset *d)
{
    if (!d->class_names) return 0;
    for (size_t j = 0; j < d->k; j++)
        if (!d->class_names[j]) return 0;
    return 1;
}

int cs_compare_class_map(const cs_dataset *a, const cs_dataset *b, uint32_t *map)
{
    if (a->k != b->k || !named(a) || !named(b)) return 0;
    size_t same = 0;
    while (same < a->k && strcmp(a->class_names[same], b->class_names[same]) == 0) same++;
    if (same == a->k) return 0;                      /* the same order: nothing to do */
    uint32_t *oa = by_name(a), *ob = by_name(b);
    int have = oa && ob, ok = have;
    for (size_t t = 0; ok && t < a->k; t++) {
        /* the same names once each: equal sorted lists without repeats */
        ok = strcmp(a->class_names[oa[t]], b->class_names[ob[t]]) == 0 &&
             (t == 0 || strcmp(a->class_names[oa[t]], a->class_names[oa[t - 1]]) != 0);
        map[oa[t]] = ob[t];
    }
    free(oa);
    free(ob);
    return ok ? 1 : have ? 0 : -1;
}

void cs_class_order_view_free(cs_dataset *v)
{
    if (!v) return;
    free(v->prob);
    free(v->logit);
    free(v->label);
    free(v->class_names);   /* the pointers only: the names are b's */
    free(v->class_col);
    free(v->conf);
    free(v->pred);
    free(v->correct);
    free(v);
}

cs_dataset *cs_class_order_view(const cs_dataset *b, const uint32_t *map, cs_error *err)
{
    size_t n = b->n, k = b->k;
    cs_dataset *v = malloc(sizeof *v);
    int32_t *to_a = malloc(k * sizeof *to_a);
    if (!v || !to_a) {
        free(v);
        free(to_a);
        cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
        return NULL;
    }
    *v = *b;   /* rows, ids, cases, lines and sample_rows are b's (read only) */
    v->logit = NULL;
    v->class_col = NULL;
    v->prob = malloc((n ? n : 1) * k * sizeof *v->prob);
    v->label = malloc((n ? n : 1) * sizeof *v->label);
    v->class_names = malloc(k * sizeof *v->class_names);
    v->conf = malloc((n ? n : 1) * sizeof *v->conf);
    v->pred = malloc((n ? n : 1) * sizeof *v->pred);
    v->correct = malloc((n ? n : 1) * sizeof *v->correct);
    if (b->logit) v->logit = malloc((n ? n : 1) * k * sizeof *v->logit);
    if (b->class_col) v->class_col = malloc(k * sizeof *v->class_col);
    if (!v->prob || !v->label || !v->class_names || !v->conf || !v->pred || !v->correct ||
        (b->logit && !v->logit) || (b->class_col && !v->class_col)) {
        free(to_a);
        cs_class_order_view_free(v);
        cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
        return NULL;
    }
    for (size_t j = 0; j < k; j++) {
        to_a[map[j]] = (int32_t)j;
        v->class_names[j] = b->class_names[map[j]];
        if (v->class_col) v->class_col[j] = b->class_col[map[j]];
    }
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < k; j++) {
            v->prob[i * k + j] = b->prob[i * k + map[j]];
            if (v->logit) v->logit[i * k + j] = b->logit[i * k + map[j]];
        }
        v->label[i] = to_a[b->label[i]];
    }
    free(to_a);
    cs_dataset_prepare_rows(v, 0, n);   /* conf, pred (ties: the first in a's order), correct */
    return v;
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

/* Data row position of row r (calscope/dataset.h: r itself unless rows were skipped or cut). */
static size_t pos_of(const cs_dataset *d, uint32_t row)
{
    return d->row_pos ? d->row_pos[row] : row;
}

/* The file's data rows (skipped ones counted). */
static size_t data_rows_of(const cs_dataset *d)
{
    return d->row_pos ? d->data_rows : d->n_samples;
}

/* Rows paired by their data row position in the file: a row whose partner was skipped
 * (--skip-bad-rows) or cut out has none (UINT32_MAX). Files of different lengths are refused
 * as by pair_by_row. */
static cs_status pair_by_position(const cs_dataset *a, const cs_dataset *b, uint32_t *a_to_b,
                                  cs_error *err)
{
    size_t na = data_rows_of(a), nb = data_rows_of(b);
    if (na != nb) {
        const cs_dataset *more = na > nb ? a : b;
        size_t first = na < nb ? na : nb;   /* the first position the shorter file lacks */
        long line = 0;
        for (size_t j = 0; j < more->n_samples && !line; j++)
            if (pos_of(more, more->sample_rows[j]) >= first) line = row_line(more, more->sample_rows[j]);
        char what[600];
        snprintf(what, sizeof what, "sample %zu has no partner: %s has %zu data rows, %s has %zu "
                 "(rows skipped by --skip-bad-rows counted; no id column in both: samples pair in "
                 "file order)", first + 1, name_of(a), na, name_of(b), nb);
        return fail_at(err, more, line, 0, what);
    }
    size_t j = 0, k = 0;   /* both in file order: one walk */
    while (j < a->n_samples && k < b->n_samples) {
        uint32_t ra = a->sample_rows[j], rb = b->sample_rows[k];
        size_t pa = pos_of(a, ra), pb = pos_of(b, rb);
        if (pa == pb) a_to_b[ra] = rb;
        j += pa <= pb;
        k += pb <= pa;
    }
    return CS_OK;
}

static cs_status pair_by_row(const cs_dataset *a, const cs_dataset *b, uint32_t *a_to_b,
                             cs_error *err)
{
    /* positions only where a row was skipped or cut: otherwise row j is sample j in both (and
     * test-time observations, which need ids, never reach here) */
    if ((a->row_pos || b->row_pos) && !a->tta && !b->tta) return pair_by_position(a, b, a_to_b, err);
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

/* The first position where a's and b's class names differ, or k (also when either is unnamed). */
static size_t first_name_difference(const cs_dataset *a, const cs_dataset *b)
{
    if (!named(a) || !named(b)) return a->k;
    size_t j = 0;
    while (j < a->k && strcmp(a->class_names[j], b->class_names[j]) == 0) j++;
    return j;
}

/* The refusal of the pair (ra of a, rb of b, the j-th sample) whose labels differ. by_name:
 * the files name the same classes (labels were compared by name); otherwise classes pair by
 * column, and when their names differ that is said, as the likelier cause than the labels. */
static cs_status labels_differ(const cs_dataset *a, const cs_dataset *b, uint32_t ra, uint32_t rb,
                               size_t j, int ids, int by_name, cs_error *err)
{
    char what[1200], in_a[600], pairing[120], names[300] = "";   /* what holds them all */
    long la = row_line(a, ra);
    if (la > 0) snprintf(in_a, sizeof in_a, "%s:%ld", name_of(a), la);
    else snprintf(in_a, sizeof in_a, "%s", name_of(a));
    if (ids) snprintf(pairing, sizeof pairing, "of id '%s'", b->id_names[b->id[rb]]);
    else snprintf(pairing, sizeof pairing, "of sample %zu", j + 1);
    size_t c = by_name ? a->k : first_name_difference(a, b);
    if (c < a->k)
        snprintf(names, sizeof names, "; the files name different classes, which then pair by position: "
                 "class %zu of %zu is '%s' in %s and '%s' here", c + 1, a->k, a->class_names[c], name_of(a),
                 b->class_names[c]);
    snprintf(what, sizeof what, "label '%s' %s differs from %s (label '%s')%s%s", class_name(b, b->label[rb]),
             pairing, in_a, class_name(a, a->label[ra]), names,
             ids ? "" : "; no id column in both: samples pair in file order");
    return fail_at(err, b, row_line(b, rb), b->label_col, what);
}

cs_status cs_compare_pair(const cs_dataset *a, const cs_dataset *b, uint32_t *a_to_b, int *by_id,
                          cs_error *err)
{
    if (cs_dataset_need_rows(a, "pairing rows", err) != CS_OK ||
        cs_dataset_need_rows(b, "pairing rows", err) != CS_OK)
        return err->code;
    uint32_t *map = a_to_b ? a_to_b : malloc((a->n ? a->n : 1) * sizeof *map);
    if (!map) return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
    for (size_t i = 0; i < a->n; i++)
        map[i] = UINT32_MAX;
    int ids = a->id && b->id;
    if (by_id) *by_id = ids;
    /* b's column of each of a's classes: by name when b names a's classes in another order */
    uint32_t *cls = malloc((a->k ? a->k : 1) * sizeof *cls);
    int moved = cls ? cs_compare_class_map(a, b, cls) : -1;
    cs_status st = moved < 0 ? cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory")
                   : a->k != b->k ? classes_differ(a, b, err)
                   : ids ? pair_by_id(a, b, map, err) : pair_by_row(a, b, map, err);
    for (size_t j = 0; j < a->n_samples && st == CS_OK; j++) {
        uint32_t ra = a->sample_rows[j], rb = map[ra];
        if (rb == UINT32_MAX) continue;   /* its partner was skipped: left out */
        if (b->label[rb] == (moved ? (int32_t)cls[a->label[ra]] : a->label[ra])) continue;
        st = labels_differ(a, b, ra, rb, j, ids, moved == 1 || first_name_difference(a, b) == a->k, err);
    }
    free(cls);
    if (!a_to_b) free(map);
    return st;
}
