/* Backend glue for the dashboard (see model.h). */
#include "tui/model.h"
#include "tui/views.h"   /* tui_basename */

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calscope/jobs/cases.h"
#include "calscope/jobs/compare.h"
#include "calscope/jobs/compat.h"
#include "calscope/jobs/curve.h"
#include "calscope/jobs/likert.h"
#include "calscope/jobs/load.h"
#include "calscope/jobs/methods.h"
#include "calscope/jobs/metrics.h"
#include "calscope/jobs/recal.h"
#include "calscope/jobs/topk.h"
#include "calscope/text.h"

const double tui_likert_cuts[TUI_LIKERT_N + 1] = { 0, 0.33, 0.66, 1 };

int tui_model_init(tui_model *m, cs_backend *b, const tui_state *st, const cs_load_options *lo,
                   char *msg, size_t size)
{
    memset(m, 0, sizeof *m);
    m->backend = b;
    m->n_files = st->n_files;
    for (int s = 0; s < CS_BACKEND_MAX_SLOTS; s++) m->slots[s].sub_epoch = -1;
    for (int i = 0; i < TUI_MAX_RECAL; i++) m->recal[i].method = -1;
    for (size_t f = 0; f < st->n_files; f++) {
        tui_file *file = &m->files[f];
        file->path = st->paths[f];
        const char *base = tui_basename(file->path);
        cs_text_escape(file->name, sizeof file->name, base, strlen(base), 0);
        file->state = TUI_LOADING;
        cs_error err;
        cs_error_clear(&err);
        cs_load_job *job = cs_load_job_new(file->path, lo, &err);
        uint64_t gen = job ? cs_backend_submit(b, TUI_SLOT_LOAD((int)f), &job->base, &err) : 0;
        if (!gen) { snprintf(msg, size, "%s", err.msg); return -1; }
        m->slots[TUI_SLOT_LOAD((int)f)].sub_gen = gen;
        m->slots[TUI_SLOT_LOAD((int)f)].sub_epoch = 0;
    }
    return 0;
}

void tui_model_free(tui_model *m)
{
    for (int s = 0; s < CS_BACKEND_MAX_SLOTS; s++) {
        cs_job_free(m->slots[s].resp);
        m->slots[s].resp = NULL;
    }
    for (int i = 0; i < TUI_MAX_RECAL; i++) {
        cs_dataset_free(m->recal[i].data);
        m->recal[i].data = NULL;
    }
    for (size_t f = 0; f < m->n_files; f++) {
        cs_dataset_free(m->files[f].data);
        m->files[f].data = NULL;
        cs_load_summary_free(&m->files[f].summary);
    }
}

void tui_model_invalidate(tui_model *m) { m->epoch++; }

static const cs_dataset *loaded(const tui_model *m, size_t f)
{
    return f < m->n_files && m->files[f].state == TUI_LOADED ? m->files[f].data : NULL;
}

/* Nonzero when slot already has a submission for this epoch and file: nothing to ask. */
static int asked(const tui_model *m, int slot, size_t file)
{
    const tui_slot *sl = &m->slots[slot];
    return sl->sub_epoch == m->epoch && sl->sub_file == file;
}

/* Submits job on slot for this epoch and file. job NULL: its constructor failed with *err. */
static int submit(tui_model *m, tui_state *st, int slot, cs_job *job, cs_error *err, size_t file)
{
    tui_slot *sl = &m->slots[slot];
    uint64_t gen = 0;
    if (job) {
        job->threads = st->threads;
        gen = cs_backend_submit(m->backend, slot, job, err);
    }
    sl->sub_gen = gen;
    sl->sub_epoch = m->epoch;
    sl->sub_file = file;
    sl->sub_failed = !gen;
    if (gen) return 1;
    /* Refused (out of memory): the error is the slot's result for this epoch — shown in place
     * and on the status line, and asked again only after the next settings change. */
    memset(&sl->failed, 0, sizeof sl->failed);
    sl->failed.slot = slot;
    sl->failed.status = err->code;
    sl->failed.err = *err;
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
    cs_backend_retire_dataset(m->backend, rc->data);
    memset(rc, 0, sizeof *rc);
    rc->method = -1;
    m->slots[TUI_SLOT_RECAL(i)].sub_epoch = -1;
    m->methods_version++;
}

/* The recalibrations of the active file that st->recal asks for. */
static int submit_recal(tui_model *m, tui_state *st)
{
    int n = 0;
    const cs_dataset *src = loaded(m, st->active);
    for (int i = 0; i < TUI_MAX_RECAL; i++) {
        tui_recal *rc = &m->recal[i];
        int want = i < st->n_recal ? st->recal[i] : -1;
        if (want < 0) { recal_drop(m, i); continue; }
        if (rc->method == want && rc->src == st->active && rc->seed == st->seed && rc->state) continue;
        recal_drop(m, i);
        if (!src) continue;
        cs_error err;
        cs_error_clear(&err);
        /* the report's defaults: 5 folds, 15 bins */
        cs_recal_job *job = cs_recal_job_new(src, want, &err);
        uint64_t gen = 0;
        if (job) {
            job->opts.seed = st->seed;
            job->opts.threads = st->threads;
            job->base.threads = st->threads;
            gen = cs_backend_submit(m->backend, TUI_SLOT_RECAL(i), &job->base, &err);
        }
        m->slots[TUI_SLOT_RECAL(i)].sub_gen = gen;
        m->slots[TUI_SLOT_RECAL(i)].sub_epoch = m->epoch;
        rc->method = want;
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

/* The methods table: the loaded files, then the ready recalibrations; the active file is the
 * reference. Waits until no file is loading and no recalibration is fitting. */
static int submit_methods(tui_model *m, tui_state *st)
{
    const cs_dataset *methods[CS_METHODS_JOB_MAX];
    size_t n = 0, ref = 0;
    for (size_t f = 0; f < m->n_files; f++) {
        if (m->files[f].state == TUI_LOADING) return 0;
        const cs_dataset *d = loaded(m, f);
        if (!d || n >= CS_METHODS_JOB_MAX) continue;
        if (f == st->active) ref = n;
        m->sub_method_file[n] = f;
        m->sub_method_recal[n] = -1;
        methods[n++] = d;
    }
    for (int i = 0; i < st->n_recal && i < TUI_MAX_RECAL; i++) {
        const tui_recal *rc = &m->recal[i];
        if (rc->state == 1 || (rc->state == 0 && loaded(m, st->active))) return 0;
        if (!rc->data || n >= CS_METHODS_JOB_MAX) continue;
        m->sub_method_file[n] = rc->src;
        m->sub_method_recal[n] = rc->method;
        methods[n++] = rc->data;
    }
    if (n < 2) return 0;
    tui_slot *sl = &m->slots[TUI_SLOT_METHODS];
    if (m->methods_sub_version != m->methods_version) sl->sub_epoch = -1;
    if (asked(m, TUI_SLOT_METHODS, st->active)) return 0;
    cs_error err;
    cs_error_clear(&err);
    cs_methods_job *job = cs_methods_job_new(methods, n, &st->settings, &err);
    if (job) {
        job->opts.ref = ref;
        job->opts.k = 0;                    /* the report's --compare-k default (3) */
        job->opts.ci_repeats = st->ci;      /* i: intervals (--ci R) */
        job->opts.cmp_repeats = 0;          /* the report's --repeats default (1000) */
        job->opts.seed = st->seed;
        job->opts.ci_method = (cs_ci_method)st->ci_method;
    }
    int done = submit(m, st, TUI_SLOT_METHODS, job ? &job->base : NULL, &err, st->active);
    if (done) {
        m->methods_sub_version = m->methods_version;
        m->sub_n_methods = n;
    }
    return done;
}

int tui_model_submit(tui_model *m, tui_state *st)
{
    int n = 0;
    cs_error err;
    cs_error_clear(&err);
    n += submit_recal(m, st);
    for (size_t f = 0; f < m->n_files; f++) {
        const cs_dataset *d = loaded(m, f);
        int slot = TUI_SLOT_METRICS((int)f);
        if (!d || asked(m, slot, f)) continue;
        cs_metrics_job *job = cs_metrics_job_new(d, &st->settings, &err);
        if (job) {
            job->want = CS_WANT_ALL | CS_WANT_RECE_CURVE;   /* the curve: the `g` overlay */
            cs_metrics_job_ci(job, f == st->active ? st->ci : 0, st->ci_method, st->seed);
        }
        n += submit(m, st, slot, job ? &job->base : NULL, &err, f);
    }
    const cs_dataset *act = loaded(m, st->active);
    switch (st->view) {
    case TUI_VIEW_TOPK:
        for (size_t f = 0; f < m->n_files; f++) {
            const cs_dataset *d = loaded(m, f);
            int slot = TUI_SLOT_TOPK((int)f);
            if (!d || asked(m, slot, f)) continue;
            cs_topk_job *job = cs_topk_job_new(d, &st->settings, &err);
            if (job) {
                static const int ks[] = { 1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000 };
                for (size_t i = 0; i < sizeof ks / sizeof ks[0] && ks[i] <= (int)d->k; i++)
                    job->k[job->n++] = ks[i];
                if (job->n == 0 || job->k[job->n - 1] != (int)d->k)
                    if (job->n < CS_TOPK_JOB_MAX) job->k[job->n++] = (int)d->k;
            }
            n += submit(m, st, slot, job ? &job->base : NULL, &err, f);
        }
        break;
    case TUI_VIEW_VARIANCE:
        if (!act) break;
        for (int bins = 0; bins < 2; bins++) {
            int slot = bins ? TUI_SLOT_BINS : TUI_SLOT_SIZE;
            if (asked(m, slot, st->active)) continue;
            cs_curve_options o;
            if (bins) cs_curve_options_bins_default(&o, st->settings.binning == CS_BIN_KDTREE);
            else cs_curve_options_size_default(&o);
            o.repeats = st->repeats;
            o.seed = st->seed;
            cs_curve_job *job = cs_curve_job_new(bins ? CS_CURVE_BINS : CS_CURVE_SIZE, act,
                                                 &st->settings, &o, &err);
            n += submit(m, st, slot, job ? &job->base : NULL, &err, st->active);
        }
        break;
    case TUI_VIEW_CLASSES: {
        if (!act) break;
        size_t k = act->k < TUI_MAX_CLASS_SLOTS ? act->k : TUI_MAX_CLASS_SLOTS;
        m->n_class_slots = k;
        for (size_t c = 0; c < k; c++) {
            int slot = TUI_SLOT_CLASS0 + (int)c;
            if (asked(m, slot, st->active)) continue;
            cs_settings s = st->settings;
            s.lens = CS_LENS_CLASS;
            snprintf(s.lens_arg, sizeof s.lens_arg, "#%zu", c); /* position */
            if (s.binning == CS_BIN_KDTREE) s.binning = CS_BIN_UNIFORM;
            cs_metrics_job *job = cs_metrics_job_new(act, &s, &err);
            if (job) job->want = CS_WANT_ACCURACY | CS_WANT_BINNED;
            m->slots[slot].class_index = (int)c;
            n += submit(m, st, slot, job ? &job->base : NULL, &err, st->active);
        }
        /* Likert panel (seed 002 §5.3): one engine job, calscope/likert.h. It refuses lenses
         * without a scalar first coordinate; the panel says so before asking. */
        cs_lens_kind lk = st->settings.lens;
        if ((lk == CS_LENS_TOP1 || lk == CS_LENS_TOPK || lk == CS_LENS_CLASS) &&
            !asked(m, TUI_SLOT_LIKERT, st->active)) {
            cs_likert_job *job = cs_likert_job_new(act, &st->settings, &err);
            if (job) {
                memcpy(job->cuts, tui_likert_cuts, sizeof tui_likert_cuts);
                job->n_cuts = TUI_LIKERT_N + 1;
            }
            n += submit(m, st, TUI_SLOT_LIKERT, job ? &job->base : NULL, &err, st->active);
        }
        break;
    }
    case TUI_VIEW_COMPARE: {
        if (st->cmp_panel != TUI_CMP_FILES) n += submit_methods(m, st);
        const cs_dataset *a = loaded(m, 0);
        if (!a || st->cmp_panel != TUI_CMP_FILES) break;
        for (size_t f = 1; f < m->n_files; f++) {
            const cs_dataset *d = loaded(m, f);
            int slot = TUI_SLOT_COMPARE((int)f);
            if (!d || asked(m, slot, f)) continue;
            cs_compare_job *job = cs_compare_job_new(a, d, &st->settings, &err);
            if (job) {
                job->repeats = st->ci > 0 ? st->ci : 200;
                job->seed = st->seed;
            }
            n += submit(m, st, slot, job ? &job->base : NULL, &err, f);
        }
        break;
    }
    case TUI_VIEW_CASES:
        if (!act || !act->case_id || asked(m, TUI_SLOT_CASES, st->active)) break;
        {
            cs_cases_job *job = cs_cases_job_new(act, &st->settings, &err);
            n += submit(m, st, TUI_SLOT_CASES, job ? &job->base : NULL, &err, st->active);
        }
        break;
    default:
        break;
    }
    if (st->compat && st->view == TUI_VIEW_RELIABILITY && act && !asked(m, TUI_SLOT_COMPAT, st->active)) {
        cs_compat_job *job = cs_compat_job_new(act, &st->settings, &err);
        n += submit(m, st, TUI_SLOT_COMPAT, job ? &job->base : NULL, &err, st->active);
    }
    return n;
}

unsigned tui_model_collect(tui_model *m, tui_state *st)
{
    unsigned flags = 0;
    cs_backend_drain_wake(m->backend);
    cs_job *r;
    while ((r = cs_backend_poll(m->backend)) != NULL) {
        flags |= TUI_REDRAW;
        if (r->slot < 0 || r->slot >= CS_BACKEND_MAX_SLOTS) { cs_job_free(r); continue; }
        tui_slot *sl = &m->slots[r->slot];
        cs_load_job *lj = (cs_load_job *)cs_load_job_of(r);   /* ours: we may take members */
        if (lj) {
            size_t f = (size_t)r->slot;
            if (f >= m->n_files) { cs_job_free(r); continue; }
            tui_file *file = &m->files[f];
            cs_load_summary_free(&file->summary);
            file->summary = lj->summary;
            memset(&lj->summary, 0, sizeof lj->summary);
            if (r->status == CS_OK && lj->dataset) {
                file->data = lj->dataset;
                lj->dataset = NULL;
                file->state = TUI_LOADED;
                if (f == st->active) st->n_classes = file->data->k;
            } else {
                file->state = TUI_FAILED;
                snprintf(file->error, sizeof file->error, "%s",
                         r->err.msg[0] ? r->err.msg : "load failed");
            }
            cs_job_free(r);
            continue;
        }
        if (r->generation != sl->sub_gen) { cs_job_free(r); continue; }
        cs_recal_job *rj = (cs_recal_job *)cs_recal_job_of(r);
        if (rj) {
            int i = r->slot - TUI_SLOT_RECAL(0);
            tui_recal *rc = i >= 0 && i < TUI_MAX_RECAL ? &m->recal[i] : NULL;
            if (rc && rc->state == 1) {
                if (r->status == CS_OK && rj->dataset) {
                    rc->data = rj->dataset;      /* owned by the model from now on */
                    rj->dataset = NULL;
                    rc->info = rj->info;
                    rc->state = 2;
                } else {
                    snprintf(rc->error, sizeof rc->error, "%s", r->err.msg[0] ? r->err.msg : "failed");
                    rc->state = 3;
                }
                m->methods_version++;
            }
            cs_job_free(r);
            continue;
        }
        if (cs_methods_job_of(r)) {
            m->n_methods = m->sub_n_methods;
            memcpy(m->method_file, m->sub_method_file, sizeof m->method_file);
            memcpy(m->method_recal, m->sub_method_recal, sizeof m->method_recal);
        }
        cs_job_free(sl->resp);
        sl->resp = r;
        sl->resp_epoch = sl->sub_epoch;
        sl->resp_file = sl->sub_file;
    }
    return flags;
}

const cs_job *tui_model_result(const tui_model *m, int slot, int *stale)
{
    if (slot < 0 || slot >= CS_BACKEND_MAX_SLOTS) { *stale = 0; return NULL; }
    const tui_slot *sl = &m->slots[slot];
    if (sl->sub_failed) { *stale = 0; return &sl->failed; }
    *stale = sl->resp && (sl->resp_epoch != m->epoch || sl->resp_file != sl->sub_file ||
                          sl->sub_epoch != m->epoch);
    return sl->resp;
}

static const char *job_name(int slot)
{
    if (slot < TUI_SLOT_METRICS(0)) return "loading";
    if (slot < TUI_SLOT_TOPK(0)) return "metrics";
    if (slot < TUI_SLOT_COMPARE(0)) return "top-k";
    if (slot < TUI_SLOT_SIZE) return "compare";
    if (slot == TUI_SLOT_SIZE) return "size curve";
    if (slot == TUI_SLOT_BINS) return "bins curve";
    if (slot == TUI_SLOT_LIKERT) return "likert";
    if (slot >= TUI_SLOT_RECAL(0) && slot < TUI_SLOT_RECAL(TUI_MAX_RECAL)) return "recalibrating";
    if (slot == TUI_SLOT_METHODS) return "methods";
    if (slot == TUI_SLOT_COMPAT) return "compat";
    if (slot == TUI_SLOT_CASES) return "cases";
    return "classes";
}

void tui_model_method_name(const tui_model *m, size_t i, char *buf, size_t size)
{
    if (i >= m->n_methods || m->method_file[i] >= m->n_files) { snprintf(buf, size, "?"); return; }
    const char *base = m->files[m->method_file[i]].name;
    if (m->method_recal[i] < 0) snprintf(buf, size, "%s", base);
    else snprintf(buf, size, "%s+%s", base, cs_recal_name(m->method_recal[i]));
}

int tui_model_busy(const tui_model *m, char *what, size_t size, double *progress)
{
    int busy = 0;
    for (int s = 0; s < CS_BACKEND_MAX_SLOTS; s++) {
        if (m->slots[s].sub_epoch < 0 || !cs_backend_busy(m->backend, s)) continue;
        if (busy++) continue;
        double p = cs_backend_progress(m->backend, s);
        *progress = p < 0 ? 0 : p;
        if (s < TUI_SLOT_METRICS(0) && (size_t)s < m->n_files)
            snprintf(what, size, "loading %s", m->files[s].name);
        else
            snprintf(what, size, "%s", job_name(s));
    }
    if (busy > 1) {
        size_t n = strlen(what);
        if (n < size) snprintf(what + n, size - n, " +%d", busy - 1);
    }
    return busy;
}
