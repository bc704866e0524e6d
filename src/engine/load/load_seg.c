/* Segmentation inputs as datasets: a statistics file (calscope/segstats.h) is read,
 * or a manifest of volumes reduced (calscope/reduce.h), and wrapped in a row-less cs_dataset (dataset.h, `stats`), so the report and the dashboard
 * open it like any prediction file and cs_measure hands it to cs_segstats_measure. */
#include "engine/load/load_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "calscope/reduce.h"
#include "calscope/segstats.h"
#include "calscope/thread.h"

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
    d->free_stats = cs_segstats_free;
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

/* Options for prediction rows mean nothing to volumes or statistics: refused, never ignored. */
static int refuse_row_options(const char *path, const cs_load_options *opt, const char *what, cs_error *err)
{
    const char *flag = opt->renormalize ? "--renormalize" : opt->skip_bad_rows ? "--skip-bad-rows"
                     : opt->no_header ? "--no-header" : opt->delimiter ? "--delimiter"
                     : opt->split_column ? "--recal-split-column" : opt->labels ? "--labels"
                     : opt->npy_logits ? "--npy-logits" : NULL;
    if (!flag) return 0;
    cs_error_set(err, CS_EUSAGE, 0, 0, "%s: %s applies to prediction rows; this is %s", path, flag, what);
    return 1;
}

/* 1 (err set, CS_EUSAGE) when opt holds an option a statistics file cannot use. */
static int refuse_stats_options(const char *path, const cs_load_options *opt, cs_error *err)
{
    if (refuse_row_options(path, opt, "a statistics file", err)) return 1;
    const char *flag = opt->seg_label_values ? "--label-values" : opt->seg_regions ? "--regions"
                     : opt->seg_fine ? "--fine" : opt->sum_tol != 1e-3 ? "--sum-tol"
                     : opt->seg_affine_tol != CS_REDUCE_AFFINE_TOL_DEFAULT ? "--affine-tol" : NULL;
    if (!flag) return 0;
    cs_error_set(err, CS_EUSAGE, 0, 0, "%s: %s applies when volumes are reduced; a statistics file is reduced already",
                 path, flag);
    return 1;
}

cs_dataset *cs_load_stats_file(const char *path, const cs_load_options *opt, cs_error *err)
{
    if (refuse_stats_options(path, opt, err)) return NULL;
    cs_segstats *st = NULL;
    if (cs_segstats_read(path, &st, err) != CS_OK) return NULL;
    return cs_load_wrap_stats(path, st, err);
}

cs_dataset *cs_load_stats_stream(const char *path, csl_src *src, const cs_load_options *opt,
                                 cs_error *err)
{
    if (refuse_stats_options(path, opt, err)) return NULL;
    size_t cap = (size_t)1 << 20, len = 0;
    char *text = malloc(cap);
    for (;;) {
        const void *p;
        size_t n;
        int r = text ? cs_load_src_next(src, &p, &n) : 0;
        if (r == 0) break;
        if (r < 0) {
            free(text);
            cs_error_set(err, CS_EINPUT, 0, 0, "%s: cannot read: %s", path, cs_load_src_error(src));
            return NULL;
        }
        if ((uint64_t)len + n > CS_SEGSTATS_TEXT_MAX) {
            free(text);
            cs_error_set(err, CS_EINPUT, 0, 0, "%s: cannot read: more than %llu bytes of text, the"
                         " most a statistics file read into memory may hold (a gzip bomb?)", path,
                         (unsigned long long)CS_SEGSTATS_TEXT_MAX);
            return NULL;
        }
        while (text && cap - len < n) {
            char *bigger = realloc(text, cap * 2);
            if (!bigger) { free(text); text = NULL; }
            text = bigger;
            cap *= 2;
        }
        if (text) memcpy(text + len, p, n);
        len += n;
    }
    if (!text) {
        cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", path);
        return NULL;
    }
    cs_segstats *st = NULL;
    if (cs_segstats_parse_text(path, text, len, &st, err) != CS_OK) return NULL;
    return cs_load_wrap_stats(path, st, err);
}

/* ---- a manifest, reduced when loaded -------------------------------------------------------- */

typedef struct seg_job {
    cs_segstats *st;
    const cs_seg_plan *plan;
    const cs_reduce_options *ro;
    cs_run run;
    cs_error err;
    cs_status status;
    atomic_int finished;
} seg_job;

static void *seg_worker(void *vj)
{
    seg_job *j = vj;
    j->status = cs_reduce_cases(j->st, j->plan, j->ro, &j->run, &j->err);
    atomic_store(&j->finished, 1);
    return NULL;
}

/* The loader's callbacks are called from the loading thread only: the reduction runs on a
 * thread of its own while this one forwards its progress every 20 ms, and the cases done so
 * far when their number grew (opt->partial; cancel goes straight to the reduction, which polls
 * it per slab). */
static cs_status reduce_watched(seg_job *j, const char *path, const cs_load_options *opt, atomic_uchar *done)
{
    pthread_t th;
    if ((!opt->progress && !opt->partial) || !cs_helper_start(&th, seg_worker, j)) {
        seg_worker(j);
        return j->status;
    }
    size_t n = j->plan->n, shown = 0;
    uint8_t *keep = opt->partial ? calloc(n ? n : 1, 1) : NULL;
    while (!atomic_load(&j->finished)) {
        if (opt->progress) opt->progress(opt->progress_ctx, atomic_load(j->run.progress_ppm) / 1e6);
        size_t now = 0;
        for (size_t c = 0; keep && c < n; c++)
            now += keep[c] = atomic_load_explicit(&done[c], memory_order_acquire) != 0;
        if (keep && now > shown && now < n) {
            /* a copy of the finished cases: the others are still being written */
            cs_segstats *sub = cs_segstats_subset(j->st, keep);
            cs_error e;
            cs_dataset *d = sub ? cs_load_wrap_stats(path, sub, &e) : NULL;
            if (d) {
                opt->partial(opt->partial_ctx, d);
                shown = now;
            }
        }
        struct timespec ts = { 0, 20 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    pthread_join(th, NULL);
    free(keep);
    if (opt->progress) opt->progress(opt->progress_ctx, 1.0);
    return j->status;
}

/* The cases of a manifest (folder NULL) or of a folder of probability files paired with
 * opt->labels, the folder of label maps, reduced as the options say. */
static cs_dataset *load_plan(const char *path, int folder, const cs_load_options *opt, cs_load_summary *summary,
                             cs_error *err)
{
    cs_seg_mapping *map = NULL;
    cs_seg_plan *plan = NULL;
    cs_segstats *st = NULL;
    cs_status s = CS_OK;
    if (opt->seg_label_values) s = cs_seg_mapping_values(opt->seg_label_values, &map, err);
    else if (opt->seg_regions) s = cs_seg_mapping_regions(opt->seg_regions, &map, err);
    if (s == CS_OK)
        s = folder ? cs_seg_plan_folders(path, opt->labels, opt->seg_prob_suffix, &plan, err)
                   : cs_seg_plan_manifest(path, &plan, err);
    cs_reduce_options ro;
    cs_reduce_options_default(&ro);
    if (opt->seg_fine) ro.fine = opt->seg_fine;
    ro.sum_tol = opt->sum_tol;
    ro.affine_tol = opt->seg_affine_tol;
    ro.mapping = map;
    if (s == CS_OK) s = cs_reduce_begin(plan, &ro, &st, err);
    atomic_uchar *done = NULL;
    if (s == CS_OK && opt->partial && !(done = calloc(plan->n ? plan->n : 1, sizeof *done)))
        s = cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", path);
    if (s == CS_OK) {
        atomic_int ppm = 0;
        ro.done = done;
        seg_job j = { .st = st, .plan = plan, .ro = &ro,
                      .run = { .threads = opt->seg_threads, .cancel = opt->cancel, .progress_ppm = &ppm } };
        cs_error_clear(&j.err);
        atomic_init(&j.finished, 0);
        s = reduce_watched(&j, path, opt, done);
        if (s != CS_OK) *err = j.err;
    }
    free(done);
    if (s == CS_OK && summary) {
        summary->rows_read = summary->rows_used = 0;
        summary->manifest_cases = plan->n;
        summary->prob_rows = !opt->seg_regions;   /* softmax channels: sum_tol checked each voxel */
        for (size_t c = 0; c < st->n_cases; c++) summary->rows_used += st->voxels[c];
        summary->rows_read = summary->rows_used;
    }
    cs_seg_plan_free(plan);
    cs_seg_mapping_free(map);
    if (s != CS_OK) {
        cs_segstats_free(st);
        return NULL;
    }
    return cs_load_wrap_stats(path, st, err);
}

cs_dataset *cs_load_manifest(const char *path, const cs_load_options *opt, cs_load_summary *summary,
                             cs_error *err)
{
    if (refuse_row_options(path, opt, "a manifest of segmentation volumes", err)) return NULL;
    if (opt->seg_prob_suffix) {
        cs_error_set(err, CS_EUSAGE, 0, 0, "%s: --prob-suffix pairs the files of two folders; a manifest names them", path);
        return NULL;
    }
    return load_plan(path, 0, opt, summary, err);
}

cs_dataset *cs_load_folders(const char *path, const cs_load_options *opt, cs_load_summary *summary, cs_error *err)
{
    /* --labels names the folder of label maps here, not a .npy file */
    cs_load_options o = *opt;
    o.labels = NULL;
    if (refuse_row_options(path, &o, "a folder of segmentation volumes", err)) return NULL;
    return load_plan(path, 1, opt, summary, err);
}
