/* Backend glue for the dashboard (see model.h). */
#include "tui/model.h"
#include "tui/views.h"   /* tui_basename */

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calscope/jobs/cases.h"
#include "calscope/jobs/compat.h"
#include "calscope/jobs/curve.h"
#include "calscope/jobs/likert.h"
#include "calscope/jobs/load.h"
#include "calscope/jobs/methods.h"
#include "calscope/jobs/metrics.h"
#include "calscope/jobs/recal.h"
#include "calscope/jobs/topk.h"
#include "calscope/segmeasure.h"
#include "calscope/segstats.h"
#include "calscope/text.h"

const double tui_likert_cuts[TUI_LIKERT_N + 1] = { 0, 0.33, 0.66, 1 };

static cs_job *kept_take(tui_place *pl, int i, tui_key *key);

/* cs_load_options.partial: runs on the loading worker; the UI takes it in
 * tui_model_take_partials. An older dataset not taken yet was never shown: freed here. */
static void put_partial(void *ctx, cs_dataset *so_far)
{
    tui_file *file = ctx;
    pthread_mutex_lock(&file->mu);
    cs_dataset *old = file->so_far;
    file->so_far = so_far;
    pthread_mutex_unlock(&file->mu);
    cs_dataset_free(old);
}

/* Starts loading file f from file->path with options lo; 0, or -1 with msg filled. */
static int start_load(tui_model *m, size_t f, const cs_load_options *lo, char *msg, size_t size)
{
    tui_file *file = &m->files[f];
    const char *base = tui_basename(file->path);
    cs_text_escape(file->name, sizeof file->name, base, strlen(base), 0);
    file->state = TUI_LOADING;
    file->error[0] = 0;
    cs_load_options o = *lo;
    o.partial = put_partial;          /* a manifest's cases appear as they are reduced */
    o.partial_ctx = file;
    cs_error err;
    cs_error_clear(&err);
    cs_load_job *job = cs_load_job_new(file->path, &o, &err);
    uint64_t gen = job ? cs_backend_submit(m->backend, TUI_SLOT_LOAD((int)f), &job->base, &err) : 0;
    tui_place *pl = &m->places[TUI_SLOT_LOAD((int)f)];
    pl->sub_gen = gen;
    pl->has_sub = pl->pending = gen != 0;
    if (!gen) {
        snprintf(msg, size, "%s", err.msg);
        file->state = TUI_FAILED;
        snprintf(file->error, sizeof file->error, "%s", err.msg);
        return -1;
    }
    return 0;
}

int tui_model_init(tui_model *m, cs_backend *b, const tui_state *st, const cs_load_options *lo,
                   char *msg, size_t size)
{
    memset(m, 0, sizeof *m);
    m->backend = b;
    m->n_files = st->n_files;
    for (int i = 0; i < TUI_MAX_RECAL; i++) m->recal[i].method = -1;
    for (size_t f = 0; f < st->n_files; f++) {
        m->files[f].path = st->paths[f];
        pthread_mutex_init(&m->files[f].mu, NULL);
        m->files[f].mu_ready = 1;
        if (start_load(m, f, lo, msg, size)) return -1;
    }
    return 0;
}

void tui_model_free(tui_model *m)
{
    for (int s = 0; s < TUI_PLACE_COUNT; s++) {
        tui_place *pl = &m->places[s];
        cs_job_free(pl->resp);
        pl->resp = NULL;
        while (pl->n_kept) cs_job_free(kept_take(pl, pl->n_kept - 1, NULL));
    }
    for (int i = 0; i < TUI_MAX_RECAL; i++) {
        cs_dataset_free(m->recal[i].data);
        m->recal[i].data = NULL;
        cs_recal_info_clear(&m->recal[i].info);
    }
    for (size_t f = 0; f < TUI_MAX_FILES; f++) {
        if (f < m->n_files) cs_dataset_free(m->files[f].data);
        m->files[f].data = NULL;
        if (!m->files[f].mu_ready) continue;
        cs_dataset_free(m->files[f].so_far);   /* the backend is gone: nobody puts any more */
        m->files[f].so_far = NULL;
        pthread_mutex_destroy(&m->files[f].mu);
        cs_load_summary_free(&m->files[f].summary);
    }
}

static const cs_dataset *loaded(const tui_model *m, size_t f)
{
    return f < m->n_files && m->files[f].state == TUI_LOADED ? m->files[f].data : NULL;
}

/* ---- keys -------------------------------------------------------------------------------- */

/* The copy of s a key holds: every field that matters to a result, with the text fields' bytes
 * after their ends zeroed, so two keys of the same settings compare equal byte for byte. k
 * matters to the topk lens only, the lens argument to class and group: the `l` key leaves k at
 * the topk lens's value when it comes back to top1, and top1's kept result must still match. */
static void key_settings(cs_settings *out, const cs_settings *s)
{
    memset(out, 0, sizeof *out);
    out->lens = s->lens;
    out->topk = s->lens == CS_LENS_TOPK ? s->topk : 0;
    if (s->lens == CS_LENS_CLASS || s->lens == CS_LENS_GROUP)
        snprintf(out->lens_arg, sizeof out->lens_arg, "%s", s->lens_arg);
    out->binning = s->binning;
    out->bins = s->bins;
    out->gamma = s->gamma;
    out->sigma = s->sigma;
    out->distance = s->distance;
    out->interval_lo = s->interval_lo;
    out->interval_hi = s->interval_hi;
    out->mixture = s->mixture;
    out->smece_sigma = s->smece_sigma;
    snprintf(out->select, sizeof out->select, "%s", s->select);
    out->boot_size = s->boot_size;   /* fixed for a session (--boot-size), kept for the intervals */
}

/* A key of one dataset, settings s and up to six numbers. */
static tui_key key_of(const cs_dataset *d, const cs_settings *s, long n0, long n1, long n2, long n3)
{
    tui_key k;
    memset(&k, 0, sizeof k);
    k.data[0] = d;
    key_settings(&k.settings, s);
    k.n[0] = n0;
    k.n[1] = n1;
    k.n[2] = n2;
    k.n[3] = n3;
    return k;
}

static int key_eq(const tui_key *a, const tui_key *b)
{
    return memcmp(a, b, sizeof *a) == 0;
}

/* ---- kept results ----------------------------------------------------------------------- */

/* Removes and returns kept result i of pl (the caller owns it). */
static cs_job *kept_take(tui_place *pl, int i, tui_key *key)
{
    cs_job *j = pl->kept[i];
    if (key) *key = pl->kept_key[i];
    memmove(&pl->kept[i], &pl->kept[i + 1], (size_t)(pl->n_kept - i - 1) * sizeof pl->kept[0]);
    memmove(&pl->kept_key[i], &pl->kept_key[i + 1],
            (size_t)(pl->n_kept - i - 1) * sizeof pl->kept_key[0]);
    pl->n_kept--;
    return j;
}

/* The shown result gives way: it goes first among the kept ones (the least recently shown of
 * a full list is freed), and pl shows nothing until the caller sets resp. */
static void keep_shown(tui_place *pl)
{
    if (!pl->resp) return;
    if (pl->n_kept == TUI_KEPT) cs_job_free(kept_take(pl, TUI_KEPT - 1, NULL));
    memmove(&pl->kept[1], &pl->kept[0], (size_t)pl->n_kept * sizeof pl->kept[0]);
    memmove(&pl->kept_key[1], &pl->kept_key[0], (size_t)pl->n_kept * sizeof pl->kept_key[0]);
    pl->kept[0] = pl->resp;
    pl->kept_key[0] = pl->resp_key;
    pl->n_kept++;
    pl->resp = NULL;
}

/* Index of the kept result of pl computed for key, or -1. */
static int kept_find(const tui_place *pl, const tui_key *key)
{
    for (int i = 0; i < pl->n_kept; i++)
        if (key_eq(&pl->kept_key[i], key)) return i;
    return -1;
}

/* Frees every kept (not shown) result that reads d: d is going, and a later dataset may get
 * its address, which no key may then match. */
static void kept_forget_dataset(tui_model *m, const cs_dataset *d)
{
    for (int p = 0; p < TUI_PLACE_COUNT; p++) {
        tui_place *pl = &m->places[p];
        for (int i = pl->n_kept - 1; i >= 0; i--) {
            const cs_job *j = pl->kept[i];
            if (j->ops && j->ops->uses_dataset && j->ops->uses_dataset(j, d))
                cs_job_free(kept_take(pl, i, NULL));
        }
    }
}

/* ---- submitting ------------------------------------------------------------------------- */

/* The screen needs place's result for key: records it, and returns nonzero when a job must be
 * submitted — no shown or kept result, pending job or refusal has that key. A kept result for
 * key becomes the shown one (the shown one is kept in its turn), and a pending job for another
 * key is cancelled when a result for this one is at hand (a setting changed and back). */
static int need(tui_model *m, int place, const tui_key *key)
{
    tui_place *pl = &m->places[place];
    pl->want = *key;
    pl->wanted = 1;
    if (pl->has_sub && key_eq(&pl->sub_key, key) && (pl->pending || pl->sub_failed)) return 0;
    int k = pl->resp && key_eq(&pl->resp_key, key) ? -1 : kept_find(pl, key);
    if (k >= 0) {
        tui_key kk;
        cs_job *j = kept_take(pl, k, &kk);
        keep_shown(pl);
        pl->resp = j;
        pl->resp_key = kk;
    }
    if (pl->resp && key_eq(&pl->resp_key, key)) {
        if (pl->pending) cs_backend_cancel(m->backend, place);
        pl->pending = 0;
        pl->has_sub = 0;
        pl->sub_failed = 0;
        return 0;
    }
    return 1;
}

/* Submits job on place for its wanted key. job NULL: its constructor failed with *err. */
static int submit(tui_model *m, tui_state *st, int place, cs_job *job, cs_error *err)
{
    tui_place *pl = &m->places[place];
    uint64_t gen = 0;
    if (job) {
        job->threads = st->threads;
        gen = cs_backend_submit(m->backend, place, job, err);
    }
    pl->sub_gen = gen;
    pl->sub_key = pl->want;
    pl->has_sub = 1;
    pl->pending = gen != 0;
    pl->sub_failed = !gen;
    if (gen) return 1;
    /* Refused (out of memory): the error is the place's result for this key — shown in place
     * and on the status line, and asked again only when the key changes. */
    memset(&pl->failed, 0, sizeof pl->failed);
    pl->failed.slot = place;
    pl->failed.status = err->code;
    pl->failed.err = *err;
    tui_state_message(st, 1, "backend: %s", err->msg);
    return 0;
}

/* Forgets recalibration i: its job is cancelled and its dataset handed to the backend, which
 * frees it once no job reads it (a methods job may be): the screen thread never waits. */
static void recal_drop(tui_model *m, int i)
{
    tui_recal *rc = &m->recal[i];
    if (rc->method < 0 && !rc->data) return;
    cs_backend_cancel(m->backend, TUI_SLOT_RECAL(i));
    if (rc->data) kept_forget_dataset(m, rc->data);
    cs_backend_retire_dataset(m->backend, rc->data);
    cs_recal_info_clear(&rc->info);
    memset(rc, 0, sizeof *rc);
    rc->method = -1;
    m->places[TUI_SLOT_RECAL(i)].pending = 0;
    m->places[TUI_SLOT_RECAL(i)].has_sub = 0;
    m->methods_version++;
}

/* Whether st->recal lists the method. */
static int recal_wanted(const tui_state *st, int method)
{
    for (int i = 0; i < st->n_recal; i++)
        if (st->recal[i] == method) return 1;
    return 0;
}

/* The recalibrations of the active file that st->recal asks for, each in its method's place:
 * removing one leaves the others' fits alone. */
static int submit_recal(tui_model *m, tui_state *st)
{
    int n = 0;
    const cs_dataset *src = loaded(m, st->active);
    for (int i = 0; i < TUI_MAX_RECAL; i++) {
        tui_recal *rc = &m->recal[i];
        if (!recal_wanted(st, i)) { recal_drop(m, i); continue; }
        if (rc->method == i && rc->src == st->active && rc->seed == st->seed && rc->state) continue;
        recal_drop(m, i);
        if (!src) continue;
        cs_error err;
        cs_error_clear(&err);
        /* the report's defaults: 5 folds, 15 bins */
        cs_recal_job *job = cs_recal_job_new(src, i, &err);
        uint64_t gen = 0;
        if (job) {
            job->opts.seed = st->seed;
            job->opts.threads = st->threads;
            job->base.threads = st->threads;
            gen = cs_backend_submit(m->backend, TUI_SLOT_RECAL(i), &job->base, &err);
        }
        tui_place *pl = &m->places[TUI_SLOT_RECAL(i)];
        pl->sub_gen = gen;
        pl->has_sub = 1;
        pl->pending = gen != 0;
        rc->method = i;
        rc->src = st->active;
        rc->seed = st->seed;
        rc->state = gen ? 1 : 3;     /* refused: failed, with the reason, until asked again */
        if (!gen) {
            snprintf(rc->error, sizeof rc->error, "%s", err.msg);
            tui_state_message(st, 1, "backend: %s", err.msg);
            m->methods_version++;
            continue;
        }
        n++;
    }
    return n;
}

/* What the methods table compares: the loaded files, then the ready recalibrations, the active
 * file the reference (*ref). When methods is not NULL each method's dataset, file and
 * recalibration (-1: the file itself) go to methods, file and recal. The number of methods, or
 * -1 while a file loads or a recalibration fits (the table waits for them). */
static int methods_inputs(const tui_model *m, const tui_state *st, const cs_dataset **methods,
                          size_t *file, int *recal, size_t *ref)
{
    size_t n = 0;
    for (size_t f = 0; f < m->n_files; f++) {
        if (m->files[f].state == TUI_LOADING) return -1;
        const cs_dataset *d = loaded(m, f);
        if (!d || n >= CS_METHODS_JOB_MAX) continue;
        if (f == st->active && ref) *ref = n;
        if (methods) { file[n] = f; recal[n] = -1; methods[n] = d; }
        n++;
    }
    for (int i = 0; i < st->n_recal; i++) {
        if (st->recal[i] < 0 || st->recal[i] >= TUI_MAX_RECAL) continue;
        const tui_recal *rc = &m->recal[st->recal[i]];
        if (rc->state == 1 || (rc->state == 0 && loaded(m, st->active))) return -1;
        if (!rc->data || n >= CS_METHODS_JOB_MAX) continue;
        if (methods) { file[n] = rc->src; recal[n] = rc->method; methods[n] = rc->data; }
        n++;
    }
    return (int)n;
}

int tui_model_methods_count(const tui_model *m, const tui_state *st)
{
    return methods_inputs(m, st, NULL, NULL, NULL, NULL);
}

/* The methods table of methods_inputs, once there are two methods to compare. */
static int submit_methods(tui_model *m, tui_state *st)
{
    const cs_dataset *methods[CS_METHODS_JOB_MAX];
    size_t ref = 0;
    int got = methods_inputs(m, st, methods, m->sub_method_file, m->sub_method_recal, &ref);
    if (got < 2) return 0;
    size_t n = (size_t)got;
    int ci = st->ci > 0 ? st->ci : CS_METHODS_CI_REPEATS;
    tui_key key = key_of(NULL, &st->settings, ci, st->ci_method, (long)st->seed, (long)ref);
    for (size_t i = 0; i < n; i++) key.data[i] = methods[i];
    key.n[4] = m->methods_version;   /* a recalibration refitted may reuse an address */
    if (!need(m, TUI_SLOT_METHODS, &key)) return 0;
    cs_error err;
    cs_error_clear(&err);
    cs_methods_job *job = cs_methods_job_new(methods, n, &st->settings, &err);
    if (job) {
        job->opts.ref = ref;
        job->opts.k = 0;                    /* the report's --compare-k default (3) */
        /* i: intervals (--ci R); when they are off the values' intervals are still those of the
         * report's --ci default (not drawn), so that `:` reproduces every number on screen */
        job->opts.ci_repeats = ci;
        job->opts.cmp_repeats = 0;          /* the report's --repeats default (1000) */
        job->opts.seed = st->seed;
        job->opts.ci_method = (cs_ci_method)st->ci_method;
        job->opts.select_each = st->select_each;
    }
    int done = submit(m, st, TUI_SLOT_METHODS, job ? &job->base : NULL, &err);
    if (done) m->sub_n_methods = n;
    return done;
}

/* The metrics of file f (every metric, the RECE-G curve of the `g` overlay and the smooth curve
 * of `o`; intervals for the active file). */
static int submit_metrics(tui_model *m, tui_state *st, size_t f)
{
    const cs_dataset *d = loaded(m, f);
    int ci = f == st->active ? st->ci : 0;
    if (!d) return 0;
    tui_key key = key_of(d, &st->settings, ci, ci ? st->ci_method : 0, ci ? (long)st->seed : 0, 0);
    if (!need(m, TUI_SLOT_METRICS((int)f), &key)) return 0;
    cs_error err;
    cs_error_clear(&err);
    cs_metrics_job *job = cs_metrics_job_new(d, &st->settings, &err);
    if (job) {
        job->want = CS_WANT_ALL | CS_WANT_RECE_CURVE | CS_WANT_SMECE_CURVE;
        cs_metrics_job_ci(job, ci, st->ci_method, st->seed);
    }
    return submit(m, st, TUI_SLOT_METRICS((int)f), job ? &job->base : NULL, &err);
}

/* The Top-k view: each file's top-k ECE bars at k = 1, 2, 3, 5, 10, … up to its classes (the
 * bars ignore the lens). Returns the jobs submitted. */
static int submit_topk(tui_model *m, tui_state *st)
{
    int n = 0;
    cs_error err;
    cs_error_clear(&err);
    for (size_t f = 0; f < m->n_files; f++) {
        const cs_dataset *d = loaded(m, f);
        if (!d) continue;
        cs_settings ks = st->settings;
        ks.lens = CS_LENS_TOP1;
        ks.topk = 0;
        ks.lens_arg[0] = '\0';
        tui_key key = key_of(d, &ks, 0, 0, 0, 0);
        if (!need(m, TUI_SLOT_TOPK((int)f), &key)) continue;
        cs_topk_job *job = cs_topk_job_new(d, &st->settings, &err);
        if (job) {
            static const int ks_[] = { 1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000 };
            for (size_t i = 0; i < sizeof ks_ / sizeof ks_[0] && ks_[i] <= (int)d->k; i++)
                job->k[job->n++] = ks_[i];
            if (job->n == 0 || job->k[job->n - 1] != (int)d->k)
                if (job->n < CS_TOPK_JOB_MAX) job->k[job->n++] = (int)d->k;
        }
        n += submit(m, st, TUI_SLOT_TOPK((int)f), job ? &job->base : NULL, &err);
    }
    return n;
}

/* The Variance view: the active file's size curve and bins curve. */
static int submit_curves(tui_model *m, tui_state *st, const cs_dataset *act)
{
    int n = 0;
    cs_error err;
    cs_error_clear(&err);
    for (int bins = 0; bins < 2; bins++) {
        int place = bins ? TUI_SLOT_BINS : TUI_SLOT_SIZE;
        tui_key key = key_of(act, &st->settings, st->repeats, (long)st->seed, bins, 0);
        if (!need(m, place, &key)) continue;
        cs_curve_options o;
        if (bins) cs_curve_options_bins_default(&o, st->settings.binning == CS_BIN_KDTREE);
        else cs_curve_options_size_default(&o);
        if (bins && act->stats) cs_segstats_bins_list(act->stats, &o);   /* M dividing F */
        o.repeats = st->repeats;
        o.seed = st->seed;
        cs_curve_job *job = cs_curve_job_new(bins ? CS_CURVE_BINS : CS_CURVE_SIZE, act,
                                             &st->settings, &o, &err);
        n += submit(m, st, place, job ? &job->base : NULL, &err);
    }
    return n;
}

/* The Classes view's bars: each class's one-vs-rest accuracy and ECE (kd-tree bins become
 * uniform: a class lens has one coordinate). */
static int submit_classes(tui_model *m, tui_state *st, const cs_dataset *act)
{
    int n = 0;
    cs_error err;
    cs_error_clear(&err);
    size_t k = act->k < TUI_MAX_CLASS_SLOTS ? act->k : TUI_MAX_CLASS_SLOTS;
    m->n_class_slots = k;
    for (size_t c = 0; c < k; c++) {
        cs_settings s = st->settings;
        s.lens = CS_LENS_CLASS;
        snprintf(s.lens_arg, sizeof s.lens_arg, "#%zu", c); /* position */
        if (s.binning == CS_BIN_KDTREE) s.binning = CS_BIN_UNIFORM;
        tui_key key = key_of(act, &s, 0, 0, 0, 0);
        if (!need(m, TUI_SLOT_CLASS0 + (int)c, &key)) continue;
        cs_metrics_job *job = cs_metrics_job_new(act, &s, &err);
        if (job) job->want = CS_WANT_ACCURACY | CS_WANT_BINNED;
        n += submit(m, st, TUI_SLOT_CLASS0 + (int)c, job ? &job->base : NULL, &err);
    }
    return n;
}

/* The Classes view's Likert panel (the inter-interval distance of Kirchenbauer, Oaks & Heim
 * 2022, "What is Your Metric Telling You?", §5.3): one engine job, calscope/likert.h. It
 * refuses lenses without a scalar first coordinate; the panel says so before asking. */
static int submit_likert(tui_model *m, tui_state *st, const cs_dataset *act)
{
    cs_lens_kind lk = st->settings.lens;
    tui_key key = key_of(act, &st->settings, 0, 0, 0, 0);
    if (!(lk == CS_LENS_TOP1 || lk == CS_LENS_TOPK || lk == CS_LENS_CLASS) || !need(m, TUI_SLOT_LIKERT, &key))
        return 0;
    cs_error err;
    cs_error_clear(&err);
    cs_likert_job *job = cs_likert_job_new(act, &st->settings, &err);
    if (job) {
        memcpy(job->cuts, tui_likert_cuts, sizeof tui_likert_cuts);
        job->n_cuts = TUI_LIKERT_N + 1;
    }
    return submit(m, st, TUI_SLOT_LIKERT, job ? &job->base : NULL, &err);
}

/* A place that takes one job of the active file under the settings (Cases, compat): made by
 * make when its key changed. */
typedef cs_job *(*one_job_fn)(const cs_dataset *d, const cs_settings *s, cs_error *err);

static cs_job *cases_job(const cs_dataset *d, const cs_settings *s, cs_error *err)
{
    cs_cases_job *job = cs_cases_job_new(d, s, err);
    return job ? &job->base : NULL;
}

static cs_job *compat_job(const cs_dataset *d, const cs_settings *s, cs_error *err)
{
    cs_compat_job *job = cs_compat_job_new(d, s, err);
    return job ? &job->base : NULL;
}

static int submit_one(tui_model *m, tui_state *st, const cs_dataset *act, int place, one_job_fn make)
{
    tui_key key = key_of(act, &st->settings, 0, 0, 0, 0);
    if (!need(m, place, &key)) return 0;
    cs_error err;
    cs_error_clear(&err);
    return submit(m, st, place, make(act, &st->settings, &err), &err);
}

/* What the current view shows besides the metrics. Returns the jobs submitted. */
static int submit_view(tui_model *m, tui_state *st)
{
    const cs_dataset *act = loaded(m, st->active);
    int n = 0;
    switch (st->view) {
    case TUI_VIEW_TOPK:
        n += submit_topk(m, st);
        break;
    case TUI_VIEW_VARIANCE:
        if (act) n += submit_curves(m, st, act);
        break;
    case TUI_VIEW_CLASSES:
        if (!act) break;
        n += submit_classes(m, st, act);   /* the bars first, then the Likert panel */
        n += submit_likert(m, st, act);
        break;
    case TUI_VIEW_COMPARE:
        /* every panel draws from the one methods job: the diagrams panel's paired column is
         * the methods table's ECE column, as `report --compare` prints it */
        n += submit_methods(m, st);
        break;
    case TUI_VIEW_CASES:
        if (act && (act->case_id || act->stats)) n += submit_one(m, st, act, TUI_SLOT_CASES, cases_job);
        break;
    default:
        break;
    }
    if (st->compat && st->view == TUI_VIEW_RELIABILITY && act)
        n += submit_one(m, st, act, TUI_SLOT_COMPAT, compat_job);
    return n;
}

/* Places the view does not show any more: their pending jobs are cancelled (and asked again
 * when the view comes back, unless the kept result still has the wanted key). */
static void cancel_unwanted(tui_model *m)
{
    for (int p = TUI_PLACE_TOPK0; p < TUI_PLACE_COUNT; p++) {
        tui_place *pl = &m->places[p];
        if (pl->wanted || !pl->pending || (p >= TUI_PLACE_RECAL0 && p < TUI_PLACE_METHODS) || p == TUI_PLACE_TREND)
            continue;
        cs_backend_cancel(m->backend, p);
        pl->pending = 0;
        pl->has_sub = 0;
    }
}

int tui_model_submit(tui_model *m, tui_state *st)
{
    for (int p = 0; p < TUI_PLACE_COUNT; p++) m->places[p].wanted = 0;
    int n = submit_recal(m, st);
    /* What is on screen first: the active file's metrics, the view's own places, then the
     * other files' metrics (cheap jobs run in this order; long ones after them). */
    n += submit_metrics(m, st, st->active);
    n += submit_view(m, st);
    for (size_t f = 0; f < m->n_files; f++)
        if (f != st->active) n += submit_metrics(m, st, f);
    cancel_unwanted(m);
    return n;
}

/* ---- collecting ------------------------------------------------------------------------- */

/* A partial dataset gives way to a newer one: the results kept from it go (the views draw a
 * result with the dataset it read, so none may outlive it), then the backend frees it once no
 * running job reads it. */
static void drop_partial(tui_model *m, cs_dataset *d)
{
    kept_forget_dataset(m, d);
    for (int p = 0; p < TUI_PLACE_COUNT; p++) {
        tui_place *pl = &m->places[p];
        if (pl->resp && pl->resp->ops && pl->resp->ops->uses_dataset && pl->resp->ops->uses_dataset(pl->resp, d)) {
            cs_job_free(pl->resp);
            pl->resp = NULL;
        }
        /* its jobs are cancelled below and never delivered; a later dataset may get d's address,
         * so no submission keyed by it may stand */
        for (int i = 0; i < TUI_KEY_DATA && pl->has_sub; i++)
            if (pl->sub_key.data[i] == d) pl->has_sub = pl->pending = pl->sub_failed = 0;
    }
    cs_backend_retire_dataset(m->backend, d);
}

static void collect_load(tui_model *m, tui_state *st, cs_job *r)
{
    cs_load_job *lj = (cs_load_job *)cs_load_job_of(r);   /* ours: we take its members */
    size_t f = (size_t)r->slot;
    if (f < m->n_files) {
        tui_file *file = &m->files[f];
        m->places[r->slot].pending = 0;
        cs_load_summary_free(&file->summary);
        file->summary = lj->summary;
        memset(&lj->summary, 0, sizeof lj->summary);
        if (file->partial) {              /* the cases so far give way to the whole set */
            drop_partial(m, file->data);
            file->data = NULL;
            file->partial = 0;
        }
        if (r->status == CS_OK && lj->dataset) {
            file->data = lj->dataset;
            lj->dataset = NULL;
            file->state = TUI_LOADED;
            if (f == st->active) st->n_classes = file->data->k;
        } else {
            file->state = TUI_FAILED;
            snprintf(file->error, sizeof file->error, "%s", r->err.msg[0] ? r->err.msg : "load failed");
        }
    }
    cs_job_free(r);
}

static void collect_recal(tui_model *m, cs_job *r)
{
    cs_recal_job *rj = (cs_recal_job *)cs_recal_job_of(r);   /* ours: we take the dataset */
    int i = r->slot - TUI_SLOT_RECAL(0);
    tui_recal *rc = i >= 0 && i < TUI_MAX_RECAL ? &m->recal[i] : NULL;
    if (rc && rc->state == 1) {
        if (r->status == CS_OK && rj->dataset) {
            rc->data = rj->dataset;      /* owned by the model from now on */
            rj->dataset = NULL;
            rc->info = rj->info;     /* its parameter vector too */
            rj->info.vec = NULL;
            rc->fit_seconds = rj->fit_seconds;
            rc->state = 2;
        } else {
            snprintf(rc->error, sizeof rc->error, "%s", r->err.msg[0] ? r->err.msg : "failed");
            rc->state = 3;
        }
        m->methods_version++;
    }
    cs_job_free(r);
}

/* The partial dataset a loader put for file (none for a prediction file) goes. */
static void retire_so_far(tui_model *m, tui_file *file)
{
    pthread_mutex_lock(&file->mu);
    cs_dataset *so_far = file->so_far;
    file->so_far = NULL;
    pthread_mutex_unlock(&file->mu);
    cs_backend_retire_dataset(m->backend, so_far);
}

/* File f's load is cancelled, and its dataset and every result read from it go. */
static void drop_file(tui_model *m, size_t f)
{
    tui_file *file = &m->files[f];
    cs_backend_cancel(m->backend, TUI_SLOT_LOAD((int)f));
    m->places[TUI_SLOT_LOAD((int)f)].pending = 0;
    retire_so_far(m, file);
    if (file->data) drop_partial(m, file->data);   /* its results go with it */
    file->data = NULL;
    file->partial = 0;
    cs_load_summary_free(&file->summary);
}

void tui_model_keep_files(tui_model *m, size_t n)
{
    while (m->n_files > n) {
        drop_file(m, m->n_files - 1);
        m->files[m->n_files - 1].state = TUI_LOADING;
        m->n_files--;
    }
}

/* Makes file f (an existing one, or one more) hold `path` with nothing loaded: the old dataset
 * and its results go. NULL when f is out of range. */
static tui_file *take_file(tui_model *m, size_t f, const char *path)
{
    if (f > m->n_files || f >= TUI_MAX_FILES) return NULL;
    tui_file *file = &m->files[f];
    if (f == m->n_files && !file->mu_ready) {
        pthread_mutex_init(&file->mu, NULL);
        file->mu_ready = 1;
    }
    if (f < m->n_files) drop_file(m, f);
    else retire_so_far(m, file);       /* a dropped file's late partial dataset */
    if (f == m->n_files) m->n_files++;
    file->path = path;
    return file;
}

void tui_model_fail_file(tui_model *m, size_t f, const char *path, const char *message)
{
    tui_file *file = take_file(m, f, path);
    if (!file) return;
    const char *base = tui_basename(path);
    cs_text_escape(file->name, sizeof file->name, base, strlen(base), 0);
    file->state = TUI_FAILED;
    snprintf(file->error, sizeof file->error, "%s", message);
}

int tui_model_replace_file(tui_model *m, tui_state *st, size_t f, const char *path, const cs_load_options *lo)
{
    if (!take_file(m, f, path)) return -1;
    char msg[1024];
    if (start_load(m, f, lo, msg, sizeof msg)) {
        tui_state_message(st, 1, "%s", msg);
        return -1;
    }
    return 0;
}

unsigned tui_model_take_partials(tui_model *m, tui_state *st)
{
    unsigned flags = 0;
    for (size_t f = 0; f < m->n_files; f++) {
        tui_file *file = &m->files[f];
        if (!m->places[TUI_SLOT_LOAD((int)f)].pending) continue;   /* loaded, failed or none */
        pthread_mutex_lock(&file->mu);
        cs_dataset *d = file->so_far;
        file->so_far = NULL;
        pthread_mutex_unlock(&file->mu);
        if (!d) continue;
        if (file->partial) drop_partial(m, file->data);
        file->data = d;
        file->partial = 1;
        file->state = TUI_LOADED;
        if (f == st->active) st->n_classes = d->k;
        flags |= TUI_REDRAW;
    }
    return flags;
}

unsigned tui_model_collect(tui_model *m, tui_state *st)
{
    unsigned flags = 0;
    cs_backend_drain_wake(m->backend);
    cs_job *r;
    while ((r = cs_backend_poll(m->backend)) != NULL) {
        flags |= TUI_REDRAW;
        tui_place *pl = r->slot >= 0 && r->slot < TUI_PLACE_COUNT ? &m->places[r->slot] : NULL;
        if (!pl || r->generation != pl->sub_gen) { cs_job_free(r); continue; }
        pl->pending = 0;
        if (r->slot == TUI_SLOT_TREND) {
            if (m->trend_collect) m->trend_collect(m->trend_ctx, r);
            else cs_job_free(r);
            continue;
        }
        if (cs_load_job_of(r)) { collect_load(m, st, r); continue; }
        if (cs_recal_job_of(r)) { collect_recal(m, r); continue; }
        if (cs_methods_job_of(r)) {
            m->n_methods = m->sub_n_methods;
            memcpy(m->method_file, m->sub_method_file, sizeof m->method_file);
            memcpy(m->method_recal, m->sub_method_recal, sizeof m->method_recal);
        }
        if (pl->resp && key_eq(&pl->resp_key, &pl->sub_key)) cs_job_free(pl->resp);
        else keep_shown(pl);       /* a setting may come back to it */
        pl->resp = r;
        pl->resp_key = pl->sub_key;
        pl->has_sub = 0;
    }
    return flags;
}

const cs_job *tui_model_result(const tui_model *m, int place, int *stale)
{
    if (place < 0 || place >= TUI_PLACE_COUNT) { *stale = 0; return NULL; }
    const tui_place *pl = &m->places[place];
    if (pl->sub_failed && key_eq(&pl->sub_key, &pl->want)) { *stale = 0; return &pl->failed; }
    *stale = pl->resp && !key_eq(&pl->resp_key, &pl->want);
    return pl->resp;
}

static const char *job_name(int place)
{
    if (place >= TUI_SLOT_CLASS0 && place < TUI_SLOT_CLASS0 + TUI_MAX_CLASS_SLOTS) return "classes";
    if (place >= TUI_SLOT_RECAL(0) && place < TUI_SLOT_RECAL(TUI_MAX_RECAL)) return "recalibrating";
    if (place == TUI_SLOT_SIZE) return "size curve";
    if (place == TUI_SLOT_BINS) return "bins curve";
    if (place >= TUI_SLOT_TOPK(0) && place < TUI_SLOT_TOPK(TUI_MAX_FILES)) return "top-k";
    if (place == TUI_SLOT_LIKERT) return "likert";
    if (place == TUI_SLOT_METHODS) return "methods";
    if (place == TUI_SLOT_COMPAT) return "compat";
    if (place == TUI_SLOT_CASES) return "cases";
    if (place == TUI_SLOT_TREND) return "trend";
    return "metrics";
}

void tui_model_method_name(const tui_model *m, size_t i, char *buf, size_t size)
{
    if (i >= m->n_methods || m->method_file[i] >= m->n_files) { snprintf(buf, size, "?"); return; }
    const char *base = m->files[m->method_file[i]].name;
    if (m->method_recal[i] < 0) snprintf(buf, size, "%s", base);
    else snprintf(buf, size, "%s+%s", base, cs_recal_name(m->method_recal[i]));
}

/* " ~12s left" / " ~3m left" / " ~2h left" after the busy job's name, nothing while the
 * backend cannot tell yet (eta < 0). */
static void append_eta(char *what, size_t size, double eta)
{
    if (!(eta >= 0)) return;
    size_t n = strlen(what);
    if (n >= size) return;
    if (eta < 90) snprintf(what + n, size - n, " ~%.0fs left", ceil(eta));
    else if (eta < 90 * 60) snprintf(what + n, size - n, " ~%.0fm left", ceil(eta / 60));
    else snprintf(what + n, size - n, " ~%.0fh left", ceil(eta / 3600));
}

int tui_model_busy(const tui_model *m, char *what, size_t size, double *progress)
{
    int busy = 0;
    for (int s = 0; s < TUI_PLACE_COUNT; s++) {
        /* pending: queued, running, or finished and not yet collected (progress 1); a job the
         * backend dropped on its own (a released dataset) has no progress at all */
        double p = m->places[s].pending ? cs_backend_progress(m->backend, s) : -1;
        if (p < 0) continue;
        if (busy++) continue;
        *progress = p;
        if (s < TUI_SLOT_METRICS(0) && (size_t)s < m->n_files)
            snprintf(what, size, "loading %s", m->files[s].name);
        else
            snprintf(what, size, "%s", job_name(s));
        append_eta(what, size, cs_backend_eta(m->backend, s));
    }
    if (busy > 1) {
        size_t n = strlen(what);
        if (n < size) snprintf(what + n, size - n, " +%d", busy - 1);
    }
    return busy;
}
