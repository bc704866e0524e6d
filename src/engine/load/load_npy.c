/* A classification pair of .npy files, `calscope report --labels y.npy probs.npy`, or the two
 * arrays of one .npz archive, `np.savez(f, probs=P, labels=y)` (calscope/load.h names the
 * members read). The predictions are N x K (probabilities, or logits with npy_logits), the
 * labels N. The arrays are
 * read through engine/volume/volume.h, and each row goes through the CSV loader's own row checker
 * (cs_load_row_numbers) and finisher, under a schema built from the column names the same
 * data would have as a CSV (p_0..p_{K-1} or logit_0.., then label): the range, sum, softmax,
 * renormalize and skip-bad-rows rules are the CSV rules, in one place. */
#include "engine/load/load_internal.h"

#include "engine/volume/volume.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Rows converted per block (progress and cancel are checked between blocks). */
#define NPY_BLOCK_ROWS 65536

/* numpy's shape as written, "(3, 4)", for messages. */
static const char *np_shape(const cs_vol_info *in, char *buf, size_t cap)
{
    size_t o = (size_t)snprintf(buf, cap, "(");
    for (int i = 0; i < in->ndim && o < cap; i++) {
        int j = in->fortran_order ? i : in->ndim - 1 - i;
        o += (size_t)snprintf(buf + o, cap - o, "%s%lld", i ? ", " : "", (long long)in->dim[j]);
    }
    if (o < cap) snprintf(buf + o, cap - o, in->ndim == 1 ? ",)" : ")");
    return buf;
}

static int is_npy(const char *path)
{
    size_t n = strlen(path);
    return n >= 4 && strcmp(path + n - 4, ".npy") == 0;
}

/* Where the two arrays are: two .npy files, or two members of one .npz. The names are those
 * of messages: "probs.npy", or "f.npz[probs.npy]" as the array readers word a member. */
typedef struct pair_src {
    const char *path;                 /* the prediction file (the dataset's name) */
    const char *probs_file, *probs_key;   /* cs_vol_open's arguments (key NULL: a .npy) */
    const char *labels_file, *labels_key;
    char probs_name[1200], labels_name[1200];
} pair_src;

/* The labels as doubles (checked per row by the row checker). */
static cs_status read_labels(const pair_src *src, size_t n_rows, double **out, cs_error *err)
{
    *out = NULL;
    const char *path = src->labels_name;
    if (!src->labels_key && !is_npy(src->labels_file))
        return cs_error_set(err, CS_EUSAGE, 0, 0, "%s: the labels of a .npy prediction file must be a .npy file", path);
    cs_vol *v;
    cs_status st = cs_vol_open(src->labels_file, src->labels_key, &v, err);
    if (st != CS_OK) return st;
    const cs_vol_info *in = cs_vol_info_of(v);
    char shape[200];
    int column = in->ndim == 1 || (in->ndim == 2 && (in->dim[0] == 1 || in->dim[1] == 1));
    if (!column) {
        st = cs_error_set(err, CS_EINPUT, 0, 0, "%s: want N labels, shape (N,), not %s", path,
                          np_shape(in, shape, sizeof shape));
    } else if (in->n_values != n_rows) {
        st = cs_error_set(err, CS_EINPUT, 0, 0, "%s: %llu labels, but %s has %zu rows", path,
                          (unsigned long long)in->n_values, src->probs_name, n_rows);
    } else if (!(*out = malloc(n_rows * sizeof **out))) {
        st = cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", path);
    } else {
        st = cs_vol_read(v, *out, n_rows, err);
    }
    cs_vol_close(v);
    if (st != CS_OK) { free(*out); *out = NULL; }
    return st;
}

/* The CSV header the same data would have: p_0..p_{K-1} (or logit_..), label. */
static cs_status build_schema(csl_schema *s, const char *path, size_t k, const cs_load_options *opt,
                              cs_error *err)
{
    csl_schema_builder b;
    size_t text = (k + 1) * 32;
    cs_status st = cs_load_schema_begin(&b, s, path, k + 1, text, 0, opt, err);
    char name[32];
    for (size_t j = 0; j < k && st == CS_OK; j++) {
        snprintf(name, sizeof name, "%s%zu", opt->npy_logits ? "logit_" : "p_", j);
        csl_field f = {name, strlen(name)};
        st = cs_load_schema_column(&b, f);
    }
    if (st == CS_OK) {
        csl_field f = {"label", 5};
        st = cs_load_schema_column(&b, f);
    }
    return st == CS_OK ? cs_load_schema_end(&b) : st;
}

static cs_dataset *load_pair(const pair_src *src, const cs_load_options *opt, cs_load_summary *sum,
                             cs_error *err);

/* The pair as read, refused when either file changed while it was read (read(), not mapped:
 * a file that shrank reads short, one that was rewritten mixes old and new rows), as the CSV
 * loader refuses it. */
static cs_dataset *load_watched(const pair_src *src, const cs_load_options *opt, cs_load_summary *sum,
                                cs_error *err)
{
    struct stat p0, l0;
    const char *path = src->path, *labels = src->labels_key ? NULL : src->labels_file;
    int watch_p = stat(path, &p0) == 0 && S_ISREG(p0.st_mode);
    int watch_l = labels && stat(labels, &l0) == 0 && S_ISREG(l0.st_mode);
    cs_dataset *d = load_pair(src, opt, sum, err);
    if (watch_l && cs_load_changed(-1, labels, &l0))
        return cs_load_refuse_changed(labels, -1, &l0, 1, d, sum, err);
    return watch_p ? cs_load_refuse_changed(path, -1, &p0, 0, d, sum, err) : d;
}

static cs_status npy_nomem(const char *path, cs_error *err)
{
    return cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", path);
}

/* The options a .npy pair (npz 0) or an .npz (1) cannot take: CS_EUSAGE with why, else CS_OK. */
static cs_status refuse_options(const char *path, int npz, const cs_load_options *opt, cs_error *err)
{
    if (!npz && !opt->labels)
        return cs_error_set(err, CS_EUSAGE, 0, 0, "%s: a .npy prediction file needs its labels: --labels FILE.npy", path);
    if (npz && opt->labels)
        return cs_error_set(err, CS_EUSAGE, 0, 0, "%s: --labels is for .npy prediction files (an .npz holds "
                            "its labels: member 'labels' or 'y')", path);
    if (opt->no_header || opt->delimiter || opt->split_column)
        return cs_error_set(err, CS_EUSAGE, 0, 0, "%s: %s is for CSV files, not %s", path,
                            opt->no_header ? "--no-header" : opt->delimiter ? "--delimiter" : "a split column",
                            npz ? "an .npz" : "a .npy pair");
    return CS_OK;
}

/* The rows n and classes k of an N x K array, or CS_EINPUT with why (another shape, fewer
 * than 2 classes, too many rows). */
static cs_status array_shape(const char *path, const cs_load_options *opt, const cs_vol_info *in,
                             size_t *n, size_t *k, cs_error *err)
{
    char shape[200];
    if (in->ndim != 2 || in->n_values == 0)
        return cs_error_set(err, CS_EINPUT, 0, 0, "%s: want an N x K array of %s, not shape %s", path,
                            opt->npy_logits ? "logits" : "probabilities", np_shape(in, shape, sizeof shape));
    /* numpy's (N, K): fastest-first {K, N} in C order, {N, K} in Fortran order */
    *n = (size_t)(in->fortran_order ? in->dim[0] : in->dim[1]);
    *k = (size_t)(in->fortran_order ? in->dim[1] : in->dim[0]);
    if (*k < 2)
        return cs_error_set(err, CS_EINPUT, 0, 0, "%s: shape %s has %zu class column: want K >= 2", path,
                            np_shape(in, shape, sizeof shape), *k);
    if (*n > CS_DATASET_MAX_ROWS)
        return cs_error_set(err, CS_EINPUT, 0, 0, "%s: %zu rows: more than %zu", path, *n, CS_DATASET_MAX_ROWS);
    return CS_OK;
}

/* The schema of K probability (or logit) columns and a worker over exactly n rows. */
static cs_status start_parse(csl_parsed *ps, const char *path, size_t n, size_t k,
                             const cs_load_options *opt, cs_error *err)
{
    cs_status st = build_schema(&ps->schema, path, k, opt, err);
    if (st != CS_OK) return st;
    ps->have_schema = 1;
    cs_load_worker_init(&ps->w, &ps->schema, opt, path);
    ps->have_worker = 1;
    if (cs_load_rows_alloc(&ps->w.rows, &ps->schema, n)) return npy_nomem(path, err);
    ps->w.rows.growable = 1;   /* the worker then owns (and frees) them; exactly n are asked for */
    return CS_OK;
}

/* A Fortran-order array, class after class in the file: each class's values scattered into
 * the rows at base (n x k). */
static cs_status scatter_classes(cs_vol *v, double *base, size_t n, size_t k, const char *path,
                                 cs_error *err)
{
    size_t blk = NPY_BLOCK_ROWS < n ? NPY_BLOCK_ROWS : n;
    double *scratch = malloc(blk * sizeof *scratch);
    if (!scratch) return npy_nomem(path, err);
    cs_status st = CS_OK;
    for (size_t j = 0; j < k && st == CS_OK; j++)
        for (size_t r0 = 0; r0 < n && st == CS_OK; r0 += blk) {
            size_t m = n - r0 < blk ? n - r0 : blk;
            st = cs_vol_read(v, scratch, m, err);
            for (size_t i = 0; i < m && st == CS_OK; i++) base[(r0 + i) * k + j] = scratch[i];
        }
    free(scratch);
    return st;
}

/* The array's values (read by blocks of rows in C order; scattered first in Fortran order)
 * checked row by row with their labels, with progress and the cancel flag between blocks. */
static cs_status read_rows(cs_vol *v, const cs_vol_info *in, csl_parsed *ps, const double *labels,
                           size_t n, size_t k, const char *path, const char *labels_name,
                           const cs_load_options *opt, cs_error *err)
{
    double *base = ps->schema.from_logits ? ps->w.rows.logit : ps->w.rows.prob;
    cs_status st = in->fortran_order ? scatter_classes(v, base, n, k, path, err) : CS_OK;
    if (st != CS_OK) return st;
    csl_progress pr = {opt, n, 0.0, 0.0, 0};
    for (size_t r0 = 0; r0 < n; r0 += NPY_BLOCK_ROWS) {
        size_t m = n - r0 < NPY_BLOCK_ROWS ? n - r0 : NPY_BLOCK_ROWS;
        if (cs_load_tick(&pr, r0))
            return cs_error_set(err, CS_ECANCELLED, 0, 0, "%s: loading cancelled", path);
        if (!in->fortran_order && (st = cs_vol_read(v, base + r0 * k, m * k, err)) != CS_OK) return st;
        for (size_t i = r0; i < r0 + m; i++) {
            /* the next kept row's slot: row i itself until a row is skipped, then earlier */
            double *slot = cs_load_row_slot(&ps->w);
            if (!slot) return npy_nomem(path, err);
            if (slot != base + i * k) memmove(slot, base + i * k, k * sizeof *slot);
            if (cs_load_row_numbers(&ps->w, labels[i], labels_name, (long)i + 1)) return npy_nomem(path, err);
        }
    }
    cs_load_tick(&pr, n);
    return CS_OK;
}

static cs_dataset *load_pair(const pair_src *src, const cs_load_options *opt, cs_load_summary *sum,
                             cs_error *err)
{
    const char *path = src->path, *name = src->probs_name;
    cs_vol *v = NULL;
    if (cs_vol_open(src->probs_file, src->probs_key, &v, err) != CS_OK) return NULL;
    const cs_vol_info *in = cs_vol_info_of(v);
    csl_parsed ps;
    memset(&ps, 0, sizeof ps);
    double *labels = NULL;
    size_t n = 0, k = 0;
    cs_status st = array_shape(name, opt, in, &n, &k, err);
    if (st == CS_OK) st = read_labels(src, n, &labels, err);
    if (st == CS_OK) st = start_parse(&ps, name, n, k, opt, err);
    if (st == CS_OK) st = read_rows(v, in, &ps, labels, n, k, name, src->labels_name, opt, err);
    cs_vol_close(v);
    free(labels);
    if (st != CS_OK) {
        cs_load_parsed_free(&ps);
        return NULL;
    }
    /* logits read as probabilities: every row fails the range or the sum check */
    int like_logits = !opt->npy_logits && ps.w.bad_scale == n;
    cs_dataset *d = cs_load_finish(path, &ps, opt, sum, 0, NULL, CS_OK, err);
    if (d) d->label_col = 0;      /* the labels are in another file: no column of this one */
    if (!d && like_logits && err->code == CS_EINPUT) {
        size_t used = strlen(err->msg);
        snprintf(err->msg + used, sizeof err->msg - used,
                 "; no row of the array is probabilities: if it holds logits, give --npy-logits");
    }
    return d;
}

cs_dataset *cs_load_npy(const char *path, const cs_load_options *opt, cs_load_summary *sum,
                        cs_error *err)
{
    if (refuse_options(path, 0, opt, err) != CS_OK) return NULL;
    pair_src src = {path, path, NULL, opt->labels, NULL, "", ""};
    snprintf(src.probs_name, sizeof src.probs_name, "%s", path);
    snprintf(src.labels_name, sizeof src.labels_name, "%s", opt->labels);
    return load_watched(&src, opt, sum, err);
}

/* ---- .npz: the member rule ------------------------------------------------------------- */

enum { K_PROBS, K_PROBABILITIES, K_LOGITS, K_LABELS, K_Y, N_KEYS };
static const char *const npz_keys[N_KEYS] = {"probs", "probabilities", "logits", "labels", "y"};

/* Of the two names of one array (a, b): the one the archive holds, or an error when it holds
 * both (which one was meant cannot be told) or neither. */
static cs_status one_of(const char *path, unsigned found, int a, int b, const char *what,
                        const char *members, const char **key, cs_error *err)
{
    int has_a = (found >> a) & 1, has_b = (found >> b) & 1;
    if (has_a && has_b)
        return cs_error_set(err, CS_EINPUT, 0, 0, "%s: members '%s' and '%s' are both %s: keep one",
                            path, npz_keys[a], npz_keys[b], what);
    if (!has_a && !has_b)
        return cs_error_set(err, CS_EINPUT, 0, 0, "%s: no %s: want a member '%s' or '%s' (members: %s)",
                            path, what, npz_keys[a], npz_keys[b], members);
    *key = npz_keys[has_a ? a : b];
    return CS_OK;
}

/* The members an .npz is read from: the predictions `probs` or `probabilities` (with
 * --npy-logits: `logits`), the labels `labels` or `y`. */
static cs_status pick_members(const char *path, const cs_load_options *opt, const char **probs,
                              const char **labels, cs_error *err)
{
    unsigned found;
    char members[512];
    cs_status st = cs_vol_npz_find(path, npz_keys, N_KEYS, &found, members, sizeof members, err);
    if (st != CS_OK) return st;
    if (opt->npy_logits) {
        if (!((found >> K_LOGITS) & 1))
            return cs_error_set(err, CS_EINPUT, 0, 0, "%s: no logits: want a member 'logits' with --npy-logits "
                                "(members: %s)", path, members);
        *probs = npz_keys[K_LOGITS];
    } else if ((found >> K_LOGITS) & 1 && !(found & (1u << K_PROBS | 1u << K_PROBABILITIES))) {
        return cs_error_set(err, CS_EINPUT, 0, 0, "%s: the member 'logits' holds logits: give --npy-logits", path);
    } else if ((st = one_of(path, found, K_PROBS, K_PROBABILITIES, "probabilities", members, probs, err)) != CS_OK) {
        return st;
    }
    return one_of(path, found, K_LABELS, K_Y, "labels", members, labels, err);
}

cs_dataset *cs_load_npz(const char *path, const cs_load_options *opt, cs_load_summary *sum,
                        cs_error *err)
{
    if (refuse_options(path, 1, opt, err) != CS_OK) return NULL;
    pair_src src = {path, path, NULL, path, NULL, "", ""};
    if (pick_members(path, opt, &src.probs_key, &src.labels_key, err) != CS_OK) return NULL;
    snprintf(src.probs_name, sizeof src.probs_name, "%s[%s.npy]", path, src.probs_key);
    snprintf(src.labels_name, sizeof src.labels_name, "%s[%s.npy]", path, src.labels_key);
    return load_watched(&src, opt, sum, err);
}
