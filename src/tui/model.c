/* Backend glue for the dashboard (see model.h). */
#include "tui/model.h"
#include "tui/views.h"   /* tui_basename */

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calscope/curves.h"

const double tui_likert_cuts[TUI_LIKERT_N + 1] = { 0, 0.33, 0.66, 1 };

int tui_model_init(tui_model *m, cs_backend *b, const tui_state *st, const cs_load_options *lo,
                   char *msg, size_t size)
{
    memset(m, 0, sizeof *m);
    m->backend = b;
    m->n_files = st->n_files;
    for (int s = 0; s < CS_BACKEND_MAX_SLOTS; s++) m->slots[s].sub_epoch = -1;
    for (size_t f = 0; f < st->n_files; f++) {
        tui_file *file = &m->files[f];
        file->path = st->paths[f];
        file->state = TUI_LOADING;
        cs_request req;
        memset(&req, 0, sizeof req);
        req.kind = CS_JOB_LOAD;
        req.slot = TUI_SLOT_LOAD((int)f);
        req.path = file->path;
        req.load = *lo;
        cs_error err;
        cs_error_clear(&err);
        uint64_t gen = cs_backend_submit(b, &req, &err);
        if (!gen) { snprintf(msg, size, "%s", err.msg); return -1; }
        m->slots[req.slot].sub_gen = gen;
        m->slots[req.slot].sub_epoch = 0;
    }
    return 0;
}

void tui_model_free(tui_model *m)
{
    for (int s = 0; s < CS_BACKEND_MAX_SLOTS; s++) {
        cs_response_free(m->slots[s].resp);
        m->slots[s].resp = NULL;
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

/* Submits req on its slot unless that slot already has a submission for this epoch and file. */
static int submit(tui_model *m, tui_state *st, cs_request *req, size_t file)
{
    tui_slot *sl = &m->slots[req->slot];
    if (sl->sub_epoch == m->epoch && sl->sub_file == file) return 0;
    req->threads = st->threads;
    cs_error err;
    cs_error_clear(&err);
    uint64_t gen = cs_backend_submit(m->backend, req, &err);
    if (!gen) { tui_state_message(st, 1, "backend: %s", err.msg); return 0; }
    sl->sub_gen = gen;
    sl->sub_epoch = m->epoch;
    sl->sub_file = file;
    return 1;
}

static void base_request(cs_request *req, const tui_state *st, int kind, int slot,
                         const cs_dataset *d)
{
    memset(req, 0, sizeof *req);
    req->kind = (cs_job_kind)kind;
    req->slot = slot;
    req->data = d;
    req->settings = st->settings;
    req->seed = st->seed;
}

int tui_model_submit(tui_model *m, tui_state *st)
{
    int n = 0;
    cs_request req;
    for (size_t f = 0; f < m->n_files; f++) {
        const cs_dataset *d = loaded(m, f);
        if (!d) continue;
        base_request(&req, st, CS_JOB_METRICS, TUI_SLOT_METRICS((int)f), d);
        req.want = CS_WANT_ALL;
        req.ci_repeats = f == st->active ? st->ci : 0;
        n += submit(m, st, &req, f);
    }
    const cs_dataset *act = loaded(m, st->active);
    switch (st->view) {
    case TUI_VIEW_TOPK:
        for (size_t f = 0; f < m->n_files; f++) {
            const cs_dataset *d = loaded(m, f);
            if (!d) continue;
            base_request(&req, st, CS_JOB_TOPK, TUI_SLOT_TOPK((int)f), d);
            static const int ks[] = { 1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000 };
            for (size_t i = 0; i < sizeof ks / sizeof ks[0] && ks[i] <= (int)d->k; i++)
                req.topk_k[req.n_topk++] = ks[i];
            if (req.n_topk == 0 || req.topk_k[req.n_topk - 1] != (int)d->k)
                if (req.n_topk < CS_BACKEND_MAX_TOPK) req.topk_k[req.n_topk++] = (int)d->k;
            n += submit(m, st, &req, f);
        }
        break;
    case TUI_VIEW_VARIANCE:
        if (!act) break;
        base_request(&req, st, CS_JOB_SIZE_CURVE, TUI_SLOT_SIZE, act);
        cs_curve_options_size_default(&req.curve);
        req.curve.repeats = st->repeats;
        req.curve.seed = st->seed;
        n += submit(m, st, &req, st->active);
        base_request(&req, st, CS_JOB_BINS_CURVE, TUI_SLOT_BINS, act);
        cs_curve_options_bins_default(&req.curve, st->settings.binning == CS_BIN_KDTREE);
        req.curve.repeats = st->repeats;
        req.curve.seed = st->seed;
        n += submit(m, st, &req, st->active);
        break;
    case TUI_VIEW_CLASSES: {
        if (!act) break;
        size_t k = act->k < TUI_MAX_CLASS_SLOTS ? act->k : TUI_MAX_CLASS_SLOTS;
        m->n_class_slots = k;
        for (size_t c = 0; c < k; c++) {
            base_request(&req, st, CS_JOB_METRICS, TUI_SLOT_CLASS0 + (int)c, act);
            req.settings.lens = CS_LENS_CLASS;
            snprintf(req.settings.lens_arg, sizeof req.settings.lens_arg, "%zu", c);
            if (req.settings.binning == CS_BIN_KDTREE) req.settings.binning = CS_BIN_UNIFORM;
            req.want = CS_WANT_ACCURACY | CS_WANT_BINNED;
            m->slots[req.slot].class_index = (int)c;
            n += submit(m, st, &req, st->active);
        }
        /* Likert panel: each confidence interval measured with its output selection and the
         * inter-interval distance (the construction of calscope/likert.h, run as metrics jobs).
         * Scalar lenses only: the interval is on the lens's first coordinate. */
        const char *x = st->settings.lens == CS_LENS_TOP1 || st->settings.lens == CS_LENS_TOPK
                        ? "conf" : NULL;
        char xc[CS_SPEC_MAX + 8];
        if (st->settings.lens == CS_LENS_CLASS) {
            snprintf(xc, sizeof xc, "p[%s]", st->settings.lens_arg);
            x = xc;
        }
        for (int i = 0; x && i < TUI_LIKERT_N; i++) {
            double lo = tui_likert_cuts[i], hi = tui_likert_cuts[i + 1];
            base_request(&req, st, CS_JOB_METRICS, TUI_SLOT_LIKERT0 + i, act);
            char sel[CS_SPEC_MAX];
            int len = snprintf(sel, sizeof sel, "%s%s%s in [%.17g, %.17g%c", st->settings.select,
                               st->settings.select[0] ? " and " : "", x, lo, hi,
                               i == TUI_LIKERT_N - 1 ? ']' : ')');
            if (len < 0 || (size_t)len >= sizeof sel) break;
            snprintf(req.settings.select, sizeof req.settings.select, "%s", sel);
            req.settings.distance = CS_DIST_INTERVAL;
            req.settings.interval_lo = lo;
            req.settings.interval_hi = hi;
            req.want = CS_WANT_ACCURACY | CS_WANT_BINNED;
            n += submit(m, st, &req, st->active);
        }
        break;
    }
    case TUI_VIEW_COMPARE: {
        const cs_dataset *a = loaded(m, 0);
        if (!a) break;
        for (size_t f = 1; f < m->n_files; f++) {
            const cs_dataset *d = loaded(m, f);
            if (!d) continue;
            base_request(&req, st, CS_JOB_COMPARE, TUI_SLOT_COMPARE((int)f), d);
            req.data = a;
            req.data_b = d;
            req.compare_repeats = st->ci > 0 ? st->ci : 200;
            n += submit(m, st, &req, f);
        }
        break;
    }
    default:
        break;
    }
    return n;
}

unsigned tui_model_collect(tui_model *m, tui_state *st)
{
    unsigned flags = 0;
    cs_backend_drain_wake(m->backend);
    cs_response *r;
    while ((r = cs_backend_poll(m->backend)) != NULL) {
        flags |= TUI_REDRAW;
        if (r->slot < 0 || r->slot >= CS_BACKEND_MAX_SLOTS) { cs_response_free(r); continue; }
        tui_slot *sl = &m->slots[r->slot];
        if (r->kind == CS_JOB_LOAD) {
            size_t f = (size_t)r->slot;
            if (f >= m->n_files) { cs_response_free(r); continue; }
            tui_file *file = &m->files[f];
            cs_load_summary_free(&file->summary);
            file->summary = r->summary;
            memset(&r->summary, 0, sizeof r->summary);
            if (r->status == CS_OK && r->dataset) {
                file->data = r->dataset;
                r->dataset = NULL;
                file->state = TUI_LOADED;
                if (f == st->active) st->n_classes = file->data->k;
            } else {
                file->state = TUI_FAILED;
                snprintf(file->error, sizeof file->error, "%s",
                         r->err.msg[0] ? r->err.msg : "load failed");
            }
            cs_response_free(r);
            continue;
        }
        if (r->generation != sl->sub_gen) { cs_response_free(r); continue; }
        cs_response_free(sl->resp);
        sl->resp = r;
        sl->resp_epoch = sl->sub_epoch;
        sl->resp_file = sl->sub_file;
    }
    return flags;
}

const cs_response *tui_model_result(const tui_model *m, int slot, int *stale)
{
    if (slot < 0 || slot >= CS_BACKEND_MAX_SLOTS) { *stale = 0; return NULL; }
    const tui_slot *sl = &m->slots[slot];
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
    if (slot >= TUI_SLOT_LIKERT0) return "likert";
    return "classes";
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
            snprintf(what, size, "loading %s", tui_basename(m->files[s].path));
        else
            snprintf(what, size, "%s", job_name(s));
    }
    if (busy > 1) {
        size_t n = strlen(what);
        if (n < size) snprintf(what + n, size - n, " +%d", busy - 1);
    }
    return busy;
}
