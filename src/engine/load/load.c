/* Loader entry points: choosing a path, progress and cancel, and the shared finisher that
 * turns a parse into a dataset or into one refusal message. */
#include "engine/load/load_internal.h"

#include "engine/classes.h"
#include "calscope/reduce.h"
#include "engine/metrics/rowsums.h"
#include "calscope/segstats.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void cs_load_options_default(cs_load_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->sum_tol = 1e-3;
    opt->label_col = 1;
    opt->seg_affine_tol = CS_REDUCE_AFFINE_TOL_DEFAULT;
}

/* ---- progress / cancel ---------------------------------------------------------------------- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int cs_load_cancelled(const cs_load_options *opt)
{
    return opt->cancel && atomic_load(opt->cancel);
}

int cs_load_tick(csl_progress *pr, size_t done)
{
    const cs_load_options *o = pr->opt;
    if (o->progress && pr->total) {
        double frac = done >= pr->total ? 1.0 : (double)done / (double)pr->total;
        double t = now_s();
        /* at most ~20 calls a second, but always the first and the final one */
        if (pr->calls == 0 || (frac > pr->last_frac && (frac == 1.0 || t - pr->last >= 0.05))) {
            o->progress(o->progress_ctx, frac);
            pr->last = t;
            pr->last_frac = frac;
            pr->calls++;
        }
    }
    return cs_load_cancelled(o);
}

/* ---- finishing ------------------------------------------------------------------------------ */

void cs_load_parsed_free(csl_parsed *p)
{
    if (p->have_worker) cs_load_worker_free(&p->w);
    cs_load_schema_free(&p->schema);
    cs_load_intern_free(&p->ids);
    cs_load_intern_free(&p->cases);
    cs_load_intern_free(&p->splits);
    cs_rowsums_free(p->row_sums);
    memset(p, 0, sizeof *p);
}

void cs_load_summary_free(cs_load_summary *summary)
{
    if (!summary) return;
    for (size_t i = 0; i < summary->n_ignored; i++) free(summary->ignored_columns[i]);
    free(summary->ignored_columns);
    for (size_t i = 0; i < summary->n_skipped_messages; i++) free(summary->skipped[i]);
    free(summary->skipped);
    free(summary->class_note);
    memset(summary, 0, sizeof *summary);
}

/* "named by numbers other than 0..1 in column order (p_1, p_0): ..." when the names and the
 * positions of numbered classes disagree, so a reader of the summary knows which one labels
 * follow (engine/classes.h). NULL otherwise or when out of memory. */
static char *class_note(const csl_schema *s)
{
    if (!s->classes || !cs_classmap_out_of_order(s->classes)) return NULL;
    char cols[200];
    size_t o = 0, shown = 0;
    cols[0] = '\0';
    const char *name = s->col_text;     /* column c's name: the names are in column order */
    for (size_t c = 0; c < s->named; c++, name += strlen(name) + 1) {
        if (s->col[c].role != CSL_PROB && s->col[c].role != CSL_LOGIT) continue;
        if (shown == 6 || o + 48 >= sizeof cols) {
            snprintf(cols + o, sizeof cols - o, ", ...");
            break;
        }
        char one[48];
        cs_load_excerpt(one, 40, name, strlen(name));
        o += (size_t)snprintf(cols + o, sizeof cols - o, "%s%s", shown ? ", " : "", one);
        shown++;
    }
    char note[320];
    snprintf(note, sizeof note, "named by numbers other than 0..%zu in column order (%s): labels"
             " match names, not positions", s->k - 1, cols);
    return strdup(note);
}

static void fill_summary(cs_load_summary *sum, csl_parsed *ps, int gz)
{
    if (!sum) return;
    sum->gzip = gz;
    sum->blank_lines = ps->blank_lines;
    if (ps->have_schema) {
        sum->from_logits = ps->schema.from_logits;
        sum->class_note = class_note(&ps->schema);
        if (ps->schema.n_ignored) {
            sum->ignored_columns = ps->schema.ignored;
            sum->n_ignored = ps->schema.n_ignored;
            ps->schema.ignored = NULL;
            ps->schema.n_ignored = 0;
        }
    }
    if (ps->have_worker) {
        csl_worker *w = &ps->w;
        sum->rows_read = w->rows_read;
        sum->rows_rejected = w->bad;
        sum->rows_renormalized = w->renorm;
        if (w->n_msgs) {
            sum->skipped = malloc(w->n_msgs * sizeof *sum->skipped);
            if (sum->skipped) {
                memcpy(sum->skipped, w->msgs, w->n_msgs * sizeof *w->msgs);
                sum->n_skipped_messages = w->n_msgs;
                w->n_msgs = 0;
            }
        }
    }
}

static void *shrink(void *p, size_t bytes)
{
    void *q = realloc(p, bytes ? bytes : 1);
    return q ? q : p;
}

/* Moves an interned string column (per-row indices + the names table) into the dataset. */
static void take_interned(int32_t **col, char ***names, size_t *n_names, int32_t **rows,
                          csl_intern *t, size_t n)
{
    if (!*rows) return;
    *col = shrink(*rows, n * sizeof **rows);
    *rows = NULL;
    *names = t->names;
    *n_names = t->n;
    t->names = NULL;
    t->n = 0;
}

cs_dataset *cs_load_finish(const char *name, csl_parsed *ps, const cs_load_options *opt,
                           cs_load_summary *sum, int gz, cs_status st, cs_error *err)
{
    cs_dataset *d = NULL;
    csl_worker *w = &ps->w;
    if (st != CS_OK) goto out;
    if (!ps->have_schema) {
        cs_error_set(err, CS_EINPUT, 1, 1, "%s:1:1: empty file%s", name,
                     ps->blank_lines ? " (only blank lines)" : "");
        goto out;
    }
    if (w->rows_read == 0) {
        cs_error_set(err, CS_EINPUT, ps->schema.header_line, 1,
                     "%s:%ld:1: header only, no data rows", name, ps->schema.header_line);
        goto out;
    }
    if (cs_load_check_tta(w)) goto nomem;
    if (w->bad && !opt->skip_bad_rows) {
        size_t more = w->bad - 1;
        const char *first = w->n_msgs ? w->msgs[0] : name;
        if (more)
            cs_error_set(err, CS_EINPUT, w->first_line, w->first_col, "%s (and %zu more bad row%s)",
                         first, more, more == 1 ? "" : "s");
        else
            cs_error_set(err, CS_EINPUT, w->first_line, w->first_col, "%s", first);
        goto out;
    }
    if (w->rows.n == 0) {
        cs_error_set(err, CS_EINPUT, w->first_line, w->first_col,
                     "%s: no usable rows: all %zu data rows were rejected (first: %s)", name,
                     w->bad, w->n_msgs ? w->msgs[0] : "?");
        goto out;
    }

    d = calloc(1, sizeof *d);
    if (!d || !(d->path = strdup(name))) goto nomem;
    csl_rows *r = &w->rows;
    const csl_schema *s = &ps->schema;
    size_t n = r->n, k = s->k;
    d->n = n;
    d->k = k;
    if (ps->row_sums && ps->rows_summed == n) {   /* a one-pass load summed every row */
        free(r->prob);
        d->prob = NULL;
    } else {
        d->prob = shrink(r->prob, n * k * sizeof *r->prob);
    }
    r->prob = NULL;
    if (r->logit) { d->logit = shrink(r->logit, n * k * sizeof *r->logit); r->logit = NULL; }
    d->label = shrink(r->label, n * sizeof *r->label);
    r->label = NULL;
    if (r->tta) { d->tta = shrink(r->tta, n * sizeof *r->tta); r->tta = NULL; }
    take_interned(&d->id, &d->id_names, &d->n_ids, &r->id, &ps->ids, n);
    take_interned(&d->case_id, &d->case_names, &d->n_cases, &r->case_id, &ps->cases, n);
    take_interned(&d->split, &d->split_names, &d->n_splits, &r->split, &ps->splits, n);
    d->line = shrink(r->line, n * sizeof *r->line);
    r->line = NULL;
    /* columns, for messages that point into the file (--compare) */
    d->header_line = opt->no_header ? 0 : s->header_line;
    d->class_col = calloc(k, sizeof *d->class_col);
    if (!d->class_col) goto nomem;
    cs_load_populate(d->class_col, k * sizeof *d->class_col);
    for (size_t c = 0; c < s->ncols; c++) {
        int role = s->col[c].role;
        if (role == CSL_LABEL) d->label_col = (long)c + 1;
        else if (role == CSL_ID) d->id_col = (long)c + 1;
        else if ((role == CSL_PROB || role == CSL_LOGIT) && s->col[c].cls >= 0 && (size_t)s->col[c].cls < k)
            d->class_col[s->col[c].cls] = (uint32_t)c + 1;
        else if (role == CSL_BINARY && k == 2)
            d->class_col[0] = d->class_col[1] = (uint32_t)c + 1;
    }
    if (r->conf) {          /* the per-row caches the parse threads made (load_fast.c) */
        d->conf = shrink(r->conf, n * sizeof *r->conf);
        d->pred = shrink(r->pred, n * sizeof *r->pred);
        d->correct = shrink(r->correct, n);
        r->conf = NULL;
        r->pred = NULL;
        r->correct = NULL;
    }
    /* a one-pass load: the first rows' sums instead of their probabilities (rowsums.h) */
    d->rows_summed = ps->rows_summed;
    d->row_sums = ps->row_sums;
    d->free_row_sums = cs_rowsums_free;
    ps->row_sums = NULL;
    if (cs_dataset_prepare(d, err) != CS_OK) {
        cs_dataset_free(d);
        d = NULL;
        goto out;
    }
    /* last, once nothing can fail: the block also holds the column names that the summary
     * below still reads, and it must outlive them (calscope/dataset.h layout) */
    d->class_names = ps->schema.class_names;
    ps->schema.class_names = NULL;
    if (sum) sum->rows_used = n;
    goto out;
nomem:
    cs_dataset_free(d);
    d = NULL;
    cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", name);
out:
    fill_summary(sum, ps, gz);
    cs_load_parsed_free(ps);
    return d;
}

/* ---- entry points --------------------------------------------------------------------------- */

static int env_path(void)
{
    const char *e = getenv("CALSCOPE_LOADER");
    if (e && strcmp(e, "csv") == 0) return CSL_PATH_CSV;
    return CSL_PATH_AUTO;
}

/* The fast path's threads: CALSCOPE_LOADER_THREADS=N (1..8) for tests that need one, or three,
 * on any machine; else 0 (the online CPUs, and one for a file under 4 MiB). */
static int env_threads(void)
{
    const char *e = getenv("CALSCOPE_LOADER_THREADS");
    return e && e[0] >= '1' && e[0] <= '8' && !e[1] ? e[0] - '0' : 0;
}

int cs_load_scan_kind(int requested)
{
    if (requested == CSL_SCAN_AUTO) {
        const char *e = getenv("CALSCOPE_SCAN");
        requested = e && strcmp(e, "swar") == 0 ? CSL_SCAN_SWAR : CSL_SCAN_SSE2;
    }
#if !defined(__SSE2__)
    if (requested == CSL_SCAN_SSE2) requested = CSL_SCAN_SWAR;
#endif
    return requested;
}

static int check_options(const char *name, const cs_load_options *opt, cs_error *err)
{
    if (!(opt->sum_tol >= 0.0) || !isfinite(opt->sum_tol)) {
        cs_error_set(err, CS_EUSAGE, 0, 0, "%s: sum tolerance must be a finite number >= 0", name);
        return -1;
    }
    char dl = opt->delimiter;
    if (dl == '"' || dl == '\n' || dl == '\r' || dl == ' ') {
        cs_error_set(err, CS_EUSAGE, 0, 0, "%s: unusable delimiter", name);
        return -1;
    }
    if (opt->split_column && !opt->split_column[0]) {
        cs_error_set(err, CS_EUSAGE, 0, 0, "%s: the split column needs a name", name);
        return -1;
    }
    if (opt->split_column && opt->no_header) {
        cs_error_set(err, CS_EUSAGE, 0, 0, "%s: a split column is found by name: it needs a header row", name);
        return -1;
    }
    if (opt->no_header && opt->label_col < 0) {
        cs_error_set(err, CS_EUSAGE, 0, 0, "%s: label column must be >= 1", name);
        return -1;
    }
    return 0;
}

static cs_dataset *run_csv(const char *name, csl_src *src, size_t total, const cs_load_options *opt,
                           const csl_limits *lim, cs_load_summary *sum, cs_error *err, size_t block)
{
    int gz = 0;
    src = cs_load_src_gunzip_if(src, 0, &gz);    /* decode size fixed: zlib words some corruptions
                                                    differently for tiny output buffers */
    csl_parsed ps;
    memset(&ps, 0, sizeof ps);
    if (!src) {
        cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", name);
        return cs_load_finish(name, &ps, opt, sum, gz, CS_ENOMEM, err);
    }
    cs_status st = cs_load_csv(name, src, total, opt, lim, block, &ps, err);
    cs_load_src_free(src);
    return cs_load_finish(name, &ps, opt, sum, gz, st, err);
}

static cs_dataset *load_mem(const char *name, const void *data, size_t len,
                            const cs_load_options *opt, cs_load_summary *sum, cs_error *err,
                            cs_load_tuning *t, const csl_limits *lim)
{
    const unsigned char *u = data;
    int gz = len >= 2 && u[0] == 0x1f && u[1] == 0x8b;
    if (!gz && t->path != CSL_PATH_CSV) {
        csl_parsed ps;
        cs_status st;
        int r = cs_load_fast(name, data, len, opt, lim, t->threads, t->scan, t->file_backed, &ps, &st, err);
        if (r == CSL_AGAIN) {   /* a one-pass load put out of step: keep every row */
            cs_load_options all = *opt;
            all.row_sums_bins = 0;
            r = cs_load_fast(name, data, len, &all, lim, t->threads, t->scan, t->file_backed, &ps, &st, err);
        }
        if (r == CSL_DONE) {
            t->used_path = CSL_PATH_FAST;
            return cs_load_finish(name, &ps, opt, sum, 0, st, err);
        }
        if (t->path == CSL_PATH_FAST) {
            cs_error_set(err, CS_EUSAGE, 0, 0, "%s: fast path not applicable", name);
            return NULL;
        }
    }
    t->used_path = CSL_PATH_CSV;
    csl_src *src = cs_load_src_mem(data, len);
    if (!src) {
        cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", name);
        return NULL;
    }
    if (t->file_backed) cs_load_src_mem_drop_pages(src);
    return run_csv(name, src, len, opt, lim, sum, err, t->block);
}

cs_dataset *cs_load_buffer_limited(const char *name, const void *data, size_t len,
                                   const cs_load_options *opt, cs_load_summary *summary,
                                   cs_error *err, cs_load_tuning *tuning, const csl_limits *lim)
{
    cs_load_options defaults;
    if (!opt) { cs_load_options_default(&defaults); opt = &defaults; }
    if (summary) memset(summary, 0, sizeof *summary);
    cs_error_clear(err);
    if (!name) name = "(buffer)";
    if (check_options(name, opt, err)) return NULL;
    cs_load_tuning local = {0, 0, 0, 0, 0, 0};
    if (!tuning) tuning = &local;
    if (!data) len = 0;
    csl_limits deflim;
    if (!lim) { cs_load_limits_default(&deflim); lim = &deflim; }
    return load_mem(name, len ? data : "", len, opt, summary, err, tuning, lim);
}

cs_dataset *cs_load_buffer_tuned(const char *name, const void *data, size_t len,
                                 const cs_load_options *opt, cs_load_summary *summary,
                                 cs_error *err, cs_load_tuning *tuning)
{
    return cs_load_buffer_limited(name, data, len, opt, summary, err, tuning, NULL);
}

cs_dataset *cs_load_buffer(const char *name, const void *data, size_t len,
                           const cs_load_options *opt, cs_load_summary *summary, cs_error *err)
{
    cs_load_tuning t = {env_path(), 0, env_threads(), 0, 0, 0};
    return cs_load_buffer_tuned(name, data, len, opt, summary, err, &t);
}

cs_dataset *cs_load_file(const char *path, const cs_load_options *opt,
                         cs_load_summary *summary, cs_error *err)
{
    cs_load_options defaults;
    if (!opt) { cs_load_options_default(&defaults); opt = &defaults; }
    if (summary) memset(summary, 0, sizeof *summary);
    cs_error_clear(err);
    if (check_options(path, opt, err)) return NULL;
    size_t plen = strlen(path);
    if (plen >= 4 && strcmp(path + plen - 4, ".npy") == 0) return cs_load_npy(path, opt, summary, err);
    struct stat dsb;
    if (opt->labels && stat(path, &dsb) == 0 && S_ISDIR(dsb.st_mode))   /* --probs DIR --labels DIR */
        return cs_load_folders(path, opt, summary, err);
    if (opt->seg_prob_suffix) {
        cs_error_set(err, CS_EUSAGE, 0, 0, "%s: --prob-suffix names files in a folder of probabilities (--probs DIR --labels DIR)",
                     path);
        return NULL;
    }
    if (opt->labels || opt->npy_logits) {
        cs_error_set(err, CS_EUSAGE, 0, 0, "%s: %s", path, opt->labels
                     ? "--labels is for .npy prediction files (a CSV file has its own label column)"
                     : "--npy-logits is for .npy prediction files (a CSV file names logit_ columns)");
        return NULL;
    }
    cs_load_tuning t = {env_path(), 0, env_threads(), 0, 0, 0};
    csl_limits lim;
    cs_load_limits_default(&lim);
    struct stat sb;

    if (strcmp(path, "-") == 0) {
        /* stdin redirected from a regular file gets progress and the changed-file check too */
        int reg = fstat(STDIN_FILENO, &sb) == 0 && S_ISREG(sb.st_mode);
        csl_src *src = cs_load_src_fd(STDIN_FILENO, 0);
        if (!src) { cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", path); return NULL; }
        cs_dataset *d = run_csv(path, src, reg ? (size_t)sb.st_size : 0, opt, &lim, summary, err, 0);
        return reg ? cs_load_refuse_changed(path, STDIN_FILENO, &sb, 0, d, summary, err) : d;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        cs_error_set(err, CS_EINPUT, 0, 0, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    if (fstat(fd, &sb) != 0) {
        cs_error_set(err, CS_EINPUT, 0, 0, "%s: cannot read: %s", path, strerror(errno));
        close(fd);
        return NULL;
    }
    if (S_ISDIR(sb.st_mode)) {
        cs_error_set(err, CS_EINPUT, 0, 0, "%s: cannot read: %s", path, strerror(EISDIR));
        close(fd);
        return NULL;
    }
    if (S_ISREG(sb.st_mode) && cs_segstats_sniff(path)) {
        close(fd);
        return cs_load_stats_file(path, opt, err);
    }
    if (S_ISREG(sb.st_mode) && cs_seg_manifest_sniff(path)) {
        close(fd);
        return cs_load_manifest(path, opt, summary, err);
    }
    cs_dataset *d;
    if (S_ISREG(sb.st_mode) && sb.st_size > 0 && (uintmax_t)sb.st_size <= SIZE_MAX) {
        size_t len = (size_t)sb.st_size;
        csl_map map;
        if (cs_load_map(fd, len, &map) == 0) {
            t.file_backed = 1;
            d = load_mem(path, map.data, len, opt, summary, err, &t, &lim);
            int vanished = cs_load_unmap(&map);
            d = cs_load_refuse_changed(path, fd, &sb, vanished, d, summary, err);
            close(fd);
            return d;
        }
    }
    csl_src *src = cs_load_src_fd(fd, 0);
    if (!src) {
        close(fd);
        cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", path);
        return NULL;
    }
    d = run_csv(path, src, S_ISREG(sb.st_mode) ? (size_t)sb.st_size : 0, opt, &lim, summary, err, 0);
    if (S_ISREG(sb.st_mode)) d = cs_load_refuse_changed(path, fd, &sb, 0, d, summary, err);
    close(fd);
    return d;
}

/* See load_internal.h: the rule "a file that changed while it loaded is refused". */
cs_dataset *cs_load_refuse_changed(const char *path, int fd, const struct stat *before,
                                   int vanished, cs_dataset *d, cs_load_summary *summary,
                                   cs_error *err)
{
    if (!d && err->code == CS_ECANCELLED) return NULL;
    if (!vanished && !cs_load_changed(fd, path, before)) return d;
    cs_dataset_free(d);
    cs_load_summary_free(summary);
    cs_error_set(err, CS_EINPUT, 0, 0, "%s: file changed while loading", path);
    return NULL;
}
