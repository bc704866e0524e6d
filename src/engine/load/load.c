/* Loader entry points: choosing a path, progress and cancel, and the shared finisher that
 * turns a parse into a dataset or into one refusal message. */
#include "engine/load/load_internal.h"
#include "engine/load/load_sums.h"

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
        sum->prob_rows = !ps->schema.from_logits && !ps->schema.binary;
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

/* Why a parse gives no dataset, in err: an empty file, a header alone, a row of an id that
 * breaks the tta rule or any bad row (strict mode), no usable row; out of memory in the tta
 * check. Returns CS_OK when it gives one. */
static cs_status refusal(const char *name, csl_parsed *ps, const cs_load_options *opt, cs_error *err)
{
    csl_worker *w = &ps->w;
    if (!ps->have_schema)
        return cs_error_set(err, CS_EINPUT, 1, 1, "%s:1:1: empty file%s", name,
                            ps->blank_lines ? " (only blank lines)" : "");
    if (w->rows_read == 0)
        return cs_error_set(err, CS_EINPUT, ps->schema.header_line, 1,
                            "%s:%ld:1: header only, no data rows", name, ps->schema.header_line);
    if (cs_load_check_tta(w)) return cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", name);
    if (w->bad && !opt->skip_bad_rows) {
        size_t more = w->bad - 1;
        const char *first = w->n_msgs ? w->msgs[0] : name;
        if (more)
            return cs_error_set(err, CS_EINPUT, w->first_line, w->first_col,
                                "%s (and %zu more bad row%s)", first, more, more == 1 ? "" : "s");
        return cs_error_set(err, CS_EINPUT, w->first_line, w->first_col, "%s", first);
    }
    if (w->rows.n == 0)
        return cs_error_set(err, CS_EINPUT, w->first_line, w->first_col,
                            "%s: no usable rows: all %zu data rows were rejected (first: %s)", name,
                            w->bad, w->n_msgs ? w->msgs[0] : "?");
    return CS_OK;
}

/* The parse's rows moved into d, shrunk to their count: probabilities (none after a summing
 * load: load_sums.h), logits, labels, tta, the interned columns and the line numbers. */
static void take_rows(cs_dataset *d, csl_parsed *ps)
{
    csl_rows *r = &ps->w.rows;
    size_t n = r->n, k = ps->schema.k;
    d->n = n;
    d->k = k;
    d->prob = r->prob ? shrink(r->prob, n * k * sizeof *r->prob) : NULL;
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
}

/* The kept rows' data row positions when --skip-bad-rows left rows out: row i is data row i
 * plus the skipped rows above it (lines in file order on both sides). Returns 0, or -1 out
 * of memory. */
static int take_positions(cs_dataset *d, const csl_worker *w)
{
    if (!w->n_bad_lines || !d->line) return 0;
    d->row_pos = malloc((d->n ? d->n : 1) * sizeof *d->row_pos);
    if (!d->row_pos) return -1;
    size_t b = 0;
    for (size_t i = 0; i < d->n; i++) {
        while (b < w->n_bad_lines && w->bad_lines[b] < d->line[i]) b++;
        d->row_pos[i] = (uint32_t)(i + b);
    }
    d->data_rows = d->n + w->n_bad_lines;
    return 0;
}

/* Where the header and each column are, for messages that point into the file (--compare).
 * Returns 0, or -1 out of memory. */
static int take_columns(cs_dataset *d, const csl_schema *s, const cs_load_options *opt)
{
    size_t k = s->k;
    d->header_line = opt->no_header ? 0 : s->header_line;
    d->class_col = calloc(k, sizeof *d->class_col);
    if (!d->class_col) return -1;
    cs_load_populate(d->class_col, k * sizeof *d->class_col);
    for (size_t c = 0; c < s->ncols; c++) {
        int role = s->col[c].role;
        if (role == CSL_LABEL) d->label_col = (long)c + 1;
        else if (role == CSL_ID) d->id_col = (long)c + 1;
        else if (role == CSL_SPLIT) d->split_col = (long)c + 1;
        else if ((role == CSL_PROB || role == CSL_LOGIT) && s->col[c].cls >= 0 && (size_t)s->col[c].cls < k)
            d->class_col[s->col[c].cls] = (uint32_t)c + 1;
        else if (role == CSL_BINARY && k == 2)
            d->class_col[0] = d->class_col[1] = (uint32_t)c + 1;
    }
    return 0;
}

/* The per-row caches the parse threads made (load_fast.c), when they made them. */
static void take_caches(cs_dataset *d, csl_rows *r)
{
    if (!r->conf) return;
    size_t n = d->n;
    d->conf = shrink(r->conf, n * sizeof *r->conf);
    d->pred = shrink(r->pred, n * sizeof *r->pred);
    d->correct = shrink(r->correct, n);
    r->conf = NULL;
    r->pred = NULL;
    r->correct = NULL;
}

/* The prepared dataset of a parse that gives one, or NULL with err set. */
static cs_dataset *build(const char *name, csl_parsed *ps, const cs_load_options *opt,
                         const cs_run *run, cs_error *err)
{
    cs_dataset *d = calloc(1, sizeof *d);
    if (!d || !(d->path = strdup(name))) goto nomem;
    take_rows(d, ps);
    if (take_columns(d, &ps->schema, opt) != 0 || take_positions(d, &ps->w) != 0) goto nomem;
    take_caches(d, &ps->w.rows);
    if (cs_dataset_prepare(d, run, err) != CS_OK) {
        cs_dataset_free(d);
        return NULL;
    }
    /* last, once nothing can fail: the block also holds the column names that the summary
     * still reads (fill_summary), and it must outlive them (calscope/dataset.h layout) */
    d->class_names = ps->schema.class_names;
    ps->schema.class_names = NULL;
    return d;
nomem:
    cs_dataset_free(d);
    cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", name);
    return NULL;
}

cs_dataset *cs_load_finish(const char *name, csl_parsed *ps, const cs_load_options *opt,
                           cs_load_summary *sum, int gz, const cs_run *run, cs_status st,
                           cs_error *err)
{
    cs_dataset *d = NULL;
    if (st == CS_OK && refusal(name, ps, opt, err) == CS_OK) d = build(name, ps, opt, run, err);
    if (d && sum) sum->rows_used = d->n;
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

/* src parsed as a CSV file; from_pipe: src is a pipe or standard input, which may also bring a
 * statistics file (a regular file was sniffed by its name's reader, a buffer is a CSV). */
static cs_dataset *run_csv(const char *name, csl_src *src, size_t total, const cs_load_options *opt,
                           const csl_limits *lim, cs_load_summary *sum, cs_error *err, size_t block,
                           int threads, int from_pipe)
{
    const cs_run run = { .threads = threads };
    int gz = 0;
    src = cs_load_src_gunzip_if(src, 0, &gz);    /* decode size fixed: zlib words some corruptions
                                                    differently for tiny output buffers */
    csl_parsed ps;
    memset(&ps, 0, sizeof ps);
    if (!src) {
        cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", name);
        return cs_load_finish(name, &ps, opt, sum, gz, &run, CS_ENOMEM, err);
    }
    const void *head;
    size_t head_len;
    if (from_pipe && cs_load_src_peek(src, &head, &head_len) == 1 && cs_segstats_magic(head, head_len)) {
        cs_dataset *d = cs_load_stats_stream(name, src, opt, err);
        cs_load_src_free(src);
        return d;
    }
    cs_status st = cs_load_csv(name, src, total, opt, lim, block, &ps, err);
    cs_load_src_free(src);
    return cs_load_finish(name, &ps, opt, sum, gz, &run, st, err);
}

/* A summing load's request (load_sums.h): the bins in, the sums of every row out. */
typedef struct csl_summing {
    int bins;
    cs_rowsums *sums;
} csl_summing;

/* The fast path's parse made into a dataset; a summing load's sums go to sm->sums (the
 * dataset then has no prob), or are freed when no dataset comes of it. */
static cs_dataset *finish_fast(const char *name, csl_parsed *ps, const cs_load_options *opt,
                               cs_load_summary *sum, int gz, cs_status st, csl_summing *sm,
                               int threads, cs_error *err)
{
    const cs_run run = { .threads = threads };
    cs_rowsums *sums = ps->row_sums;
    ps->row_sums = NULL;
    cs_dataset *d = cs_load_finish(name, ps, opt, sum, gz, &run, st, err);
    if (d && sums && sm) sm->sums = sums;
    else cs_rowsums_free(sums);
    return d;
}

/* The fast path over the plain bytes data[0..len). *taken is 1 when the fast path took the
 * file (the dataset, or NULL with err: its refusal); 0 when it gave up (the caller runs the
 * libcsv path). */
static cs_dataset *try_fast(const char *name, const char *data, size_t len,
                            const cs_load_options *opt, cs_load_summary *sum, cs_error *err,
                            cs_load_tuning *t, const csl_limits *lim, csl_summing *sm, int *taken)
{
    csl_parsed ps;
    cs_status st;
    int drop = t->file_backed;
    int r = cs_load_fast(name, data, len, opt, lim, t->threads, t->scan, drop, sm ? sm->bins : 0,
                         &ps, &st, err);
    if (r == CSL_AGAIN)   /* a summing load put out of step: keep every row */
        r = cs_load_fast(name, data, len, opt, lim, t->threads, t->scan, drop, 0, &ps, &st, err);
    *taken = r == CSL_DONE;
    if (!*taken) return NULL;
    t->used_path = CSL_PATH_FAST;
    return finish_fast(name, &ps, opt, sum, 0, st, sm, t->threads, err);
}

/* A gzip'd file on the fast path: read as it is inflated, t->block bytes a step (a test hook),
 * when cs_load_gz_stream takes it. The
 * rows are kept (no summing load: the stream has one thread). */
static cs_dataset *try_fast_gz(const char *name, const void *data, size_t len,
                               const cs_load_options *opt, cs_load_summary *sum, cs_error *err,
                               cs_load_tuning *t, const csl_limits *lim, int *taken)
{
    csl_parsed ps;
    cs_status st;
    int r = cs_load_gz_stream(name, data, len, t->file_backed, opt, lim, t->block, t->scan,
                              t->threads, &ps, &st, err, NULL);
    *taken = r == CSL_DONE;
    if (!*taken) return NULL;
    t->used_path = CSL_PATH_FAST;
    return finish_fast(name, &ps, opt, sum, 1, st, NULL, t->threads, err);
}

static cs_dataset *load_mem(const char *name, const void *data, size_t len,
                            const cs_load_options *opt, cs_load_summary *sum, cs_error *err,
                            cs_load_tuning *t, const csl_limits *lim, csl_summing *sm)
{
    const unsigned char *u = data;
    int gz = len >= 2 && u[0] == 0x1f && u[1] == 0x8b;
    if (t->path != CSL_PATH_CSV) {
        int taken = 0;
        cs_dataset *d = gz ? try_fast_gz(name, data, len, opt, sum, err, t, lim, &taken)
                           : try_fast(name, data, len, opt, sum, err, t, lim, sm, &taken);
        if (taken) return d;
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
    return run_csv(name, src, len, opt, lim, sum, err, t->block, t->threads, 0);
}

/* cs_load_buffer_limited, summing when sm asks for it (NULL: keep every row). */
static cs_dataset *load_buffer(const char *name, const void *data, size_t len,
                               const cs_load_options *opt, cs_load_summary *summary, cs_error *err,
                               cs_load_tuning *tuning, const csl_limits *lim, csl_summing *sm)
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
    return load_mem(name, len ? data : "", len, opt, summary, err, tuning, lim, sm);
}

cs_dataset *cs_load_buffer_limited(const char *name, const void *data, size_t len,
                                   const cs_load_options *opt, cs_load_summary *summary,
                                   cs_error *err, cs_load_tuning *tuning, const csl_limits *lim)
{
    return load_buffer(name, data, len, opt, summary, err, tuning, lim, NULL);
}

cs_dataset *cs_load_buffer_summed(const char *name, const void *data, size_t len,
                                  const cs_load_options *opt, cs_load_tuning *tuning, int bins,
                                  cs_load_summary *summary, cs_rowsums **sums, cs_error *err)
{
    csl_summing sm = {bins, NULL};
    cs_dataset *d = load_buffer(name, data, len, opt, summary, err, tuning, NULL, &sm);
    *sums = sm.sums;
    return d;
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

/* The flags of .npy files and folders on a CSV file: CS_EUSAGE with why, else CS_OK. */
static cs_status refuse_npy_flags(const char *path, const cs_load_options *opt, cs_error *err)
{
    if (opt->seg_prob_suffix)
        return cs_error_set(err, CS_EUSAGE, 0, 0, "%s: --prob-suffix names files in a folder of probabilities (--probs DIR --labels DIR)",
                            path);
    if (opt->labels || opt->npy_logits)
        return cs_error_set(err, CS_EUSAGE, 0, 0, "%s: %s", path, opt->labels
                            ? "--labels is for .npy prediction files (a CSV file has its own label column)"
                            : "--npy-logits is for .npy prediction files (a CSV file names logit_ columns)");
    return CS_OK;
}

/* Standard input: a regular file behind it gets progress and the changed-file check too. */
static cs_dataset *load_stdin(const char *path, const cs_load_options *opt, const csl_limits *lim,
                              cs_load_summary *summary, cs_error *err)
{
    struct stat sb;
    int reg = fstat(STDIN_FILENO, &sb) == 0 && S_ISREG(sb.st_mode);
    csl_src *src = cs_load_src_fd(STDIN_FILENO, 0);
    if (!src) { cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", path); return NULL; }
    cs_dataset *d = run_csv(path, src, reg ? (size_t)sb.st_size : 0, opt, lim, summary, err, 0,
                            env_threads(), 1);
    return reg ? cs_load_refuse_changed(path, STDIN_FILENO, &sb, 0, d, summary, err) : d;
}

/* The open file fd (sb its status) as a CSV file: mapped when it is a regular file that maps,
 * read in blocks otherwise; refused when it changed while it loaded. Closes fd. */
static cs_dataset *load_open_csv(const char *path, int fd, const struct stat *sb,
                                 const cs_load_options *opt, cs_load_tuning *t,
                                 const csl_limits *lim, cs_load_summary *summary,
                                 csl_summing *sm, cs_error *err)
{
    cs_dataset *d;
    if (S_ISREG(sb->st_mode) && sb->st_size > 0 && (uintmax_t)sb->st_size <= SIZE_MAX) {
        size_t len = (size_t)sb->st_size;
        csl_map map;
        if (cs_load_map(fd, len, &map) == 0) {
            t->file_backed = 1;
            d = load_mem(path, map.data, len, opt, summary, err, t, lim, sm);
            int vanished = cs_load_unmap(&map);
            d = cs_load_refuse_changed(path, fd, sb, vanished, d, summary, err);
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
    d = run_csv(path, src, S_ISREG(sb->st_mode) ? (size_t)sb->st_size : 0, opt, lim, summary, err, 0,
                t->threads, !S_ISREG(sb->st_mode));
    if (S_ISREG(sb->st_mode)) d = cs_load_refuse_changed(path, fd, sb, 0, d, summary, err);
    close(fd);
    return d;
}

/* The file `path` opened and its status read into *sb: the descriptor, or -1 with err set (a
 * folder cannot be read). */
static int open_input(const char *path, struct stat *sb, cs_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        cs_error_set(err, CS_EINPUT, 0, 0, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    int e = fstat(fd, sb) != 0 ? errno : S_ISDIR(sb->st_mode) ? EISDIR : 0;
    if (e) {
        cs_error_set(err, CS_EINPUT, 0, 0, "%s: cannot read: %s", path, strerror(e));
        close(fd);
        return -1;
    }
    return fd;
}

/* cs_load_file, summing when sm asks for it (NULL: keep every row): picks the reader by what
 * path names (a .npy file, an .npz, a pair of folders, standard input, a statistics file, a manifest,
 * a CSV file). */
static cs_dataset *load_file(const char *path, const cs_load_options *opt, csl_summing *sm,
                             cs_load_summary *summary, cs_error *err)
{
    cs_load_options defaults;
    if (!opt) { cs_load_options_default(&defaults); opt = &defaults; }
    if (summary) memset(summary, 0, sizeof *summary);
    cs_error_clear(err);
    if (check_options(path, opt, err)) return NULL;
    size_t plen = strlen(path);
    if (plen >= 4 && strcmp(path + plen - 4, ".npy") == 0) return cs_load_npy(path, opt, summary, err);
    if (plen >= 4 && strcmp(path + plen - 4, ".npz") == 0) return cs_load_npz(path, opt, summary, err);
    struct stat sb;
    if (opt->labels && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))   /* --probs DIR --labels DIR */
        return cs_load_folders(path, opt, summary, err);
    if (refuse_npy_flags(path, opt, err) != CS_OK) return NULL;
    csl_limits lim;
    cs_load_limits_default(&lim);
    if (strcmp(path, "-") == 0) return load_stdin(path, opt, &lim, summary, err);
    int fd = open_input(path, &sb, err);
    if (fd < 0) return NULL;
    if (S_ISREG(sb.st_mode) && cs_segstats_sniff(path)) {
        close(fd);
        return cs_load_stats_file(path, opt, err);
    }
    if (S_ISREG(sb.st_mode) && cs_seg_manifest_sniff(path)) {
        close(fd);
        return cs_load_manifest(path, opt, summary, err);
    }
    cs_load_tuning t = {env_path(), 0, env_threads(), 0, 0, 0};
    return load_open_csv(path, fd, &sb, opt, &t, &lim, summary, sm, err);
}

cs_dataset *cs_load_file(const char *path, const cs_load_options *opt,
                         cs_load_summary *summary, cs_error *err)
{
    return load_file(path, opt, NULL, summary, err);
}

cs_dataset *cs_load_file_summed(const char *path, const cs_load_options *opt, int bins,
                                cs_load_summary *summary, cs_rowsums **sums, cs_error *err)
{
    csl_summing sm = {bins, NULL};
    cs_dataset *d = load_file(path, opt, &sm, summary, err);
    if (!d) cs_rowsums_free(sm.sums);   /* a file refused after its parse (it changed) */
    *sums = d ? sm.sums : NULL;
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
