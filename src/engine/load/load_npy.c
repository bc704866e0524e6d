/* A classification pair of .npy files: `calscope report --labels y.npy probs.npy`.
 * probs.npy is N x K (probabilities, or logits with npy_logits), y.npy N labels. The arrays are
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

/* The labels as doubles (checked per row by the row checker). */
static cs_status read_labels(const char *path, size_t n_rows, const char *probs, double **out,
                             cs_error *err)
{
    *out = NULL;
    if (!is_npy(path))
        return cs_error_set(err, CS_EUSAGE, 0, 0, "%s: the labels of a .npy prediction file must be a .npy file", path);
    cs_vol *v;
    cs_status st = cs_vol_open(path, NULL, &v, err);
    if (st != CS_OK) return st;
    const cs_vol_info *in = cs_vol_info_of(v);
    char shape[200];
    int column = in->ndim == 1 || (in->ndim == 2 && (in->dim[0] == 1 || in->dim[1] == 1));
    if (!column) {
        st = cs_error_set(err, CS_EINPUT, 0, 0, "%s: want N labels, shape (N,), not %s", path,
                          np_shape(in, shape, sizeof shape));
    } else if (in->n_values != n_rows) {
        st = cs_error_set(err, CS_EINPUT, 0, 0, "%s: %llu labels, but %s has %zu rows", path,
                          (unsigned long long)in->n_values, probs, n_rows);
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

static cs_dataset *load_npy(const char *path, const cs_load_options *opt, cs_load_summary *sum,
                            cs_error *err);

/* The pair as read, refused when either file changed while it was read (read(), not mapped:
 * a file that shrank reads short, one that was rewritten mixes old and new rows), as the CSV
 * loader refuses it. */
cs_dataset *cs_load_npy(const char *path, const cs_load_options *opt, cs_load_summary *sum,
                        cs_error *err)
{
    struct stat p0, l0;
    int watch_p = stat(path, &p0) == 0 && S_ISREG(p0.st_mode);
    int watch_l = opt->labels && stat(opt->labels, &l0) == 0 && S_ISREG(l0.st_mode);
    cs_dataset *d = load_npy(path, opt, sum, err);
    if (watch_l && cs_load_changed(-1, opt->labels, &l0))
        return cs_load_refuse_changed(opt->labels, -1, &l0, 1, d, sum, err);
    return watch_p ? cs_load_refuse_changed(path, -1, &p0, 0, d, sum, err) : d;
}

static cs_status npy_nomem(const char *path, cs_error *err)
{
    return cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", path);
}

/* The options a .npy pair cannot take: CS_EUSAGE with why, else CS_OK. */
static cs_status refuse_options(const char *path, const cs_load_options *opt, cs_error *err)
{
    if (!opt->labels)
        return cs_error_set(err, CS_EUSAGE, 0, 0, "%s: a .npy prediction file needs its labels: --labels FILE.npy", path);
    if (opt->no_header || opt->delimiter || opt->split_column)
        return cs_error_set(err, CS_EUSAGE, 0, 0, "%s: %s is for CSV files, not a .npy pair", path,
                            opt->no_header ? "--no-header" : opt->delimiter ? "--delimiter" : "a split column");
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
                           size_t n, size_t k, const char *path, const cs_load_options *opt,
                           cs_error *err)
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
            if (cs_load_row_numbers(&ps->w, labels[i], opt->labels, (long)i + 1)) return npy_nomem(path, err);
        }
    }
    cs_load_tick(&pr, n);
    return CS_OK;
}

static cs_dataset *load_npy(const char *path, const cs_load_options *opt, cs_load_summary *sum,
                            cs_error *err)
{
    if (refuse_options(path, opt, err) != CS_OK) return NULL;
    cs_vol *v = NULL;
    if (cs_vol_open(path, NULL, &v, err) != CS_OK) return NULL;
    const cs_vol_info *in = cs_vol_info_of(v);
    csl_parsed ps;
    memset(&ps, 0, sizeof ps);
    double *labels = NULL;
    size_t n = 0, k = 0;
    cs_status st = array_shape(path, opt, in, &n, &k, err);
    if (st == CS_OK) st = read_labels(opt->labels, n, path, &labels, err);
    if (st == CS_OK) st = start_parse(&ps, path, n, k, opt, err);
    if (st == CS_OK) st = read_rows(v, in, &ps, labels, n, k, path, opt, err);
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
