/* The dashboard's --follow (see trend.h). */
#include "tui/trend.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "calscope/jobs/load.h"
#include "calscope/jobs/metrics.h"
#include "tui/views.h"   /* tui_basename */

const int tui_trend_metrics[TUI_TREND_METRICS] = {
    CS_METRIC_ECE, CS_METRIC_SMECE, CS_METRIC_BRIER, CS_METRIC_NLL, CS_METRIC_ACCURACY
};

#define POLL_MS 250   /* the follow's listing interval without inotify (docs/follow.md) */

static double realtime_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

cs_load_options tui_trend_load_options(const tui_state *st, const char *path)
{
    cs_load_options o = st->load;
    const char *slash = strrchr(path, '/');
    if (cs_follow_kind(slash ? slash + 1 : path) != CS_FOLLOW_NPY) o.labels = NULL;
    return o;
}

/* A job of TUI_SLOT_TREND came back (tui_model_collect): a loaded epoch waits for its metrics
 * job; a failure or a measurement becomes the epoch's summary. */
static void on_job(void *ctx, cs_job *r)
{
    tui_trend *t = ctx;
    const char *path = t->paths[t->trend.n];
    cs_error err;
    cs_error_clear(&err);
    if (t->stage == 1) {
        cs_load_job *lj = (cs_load_job *)cs_load_job_of(r);
        if (r->status == CS_OK && lj && lj->dataset) {
            t->data = lj->dataset;     /* ours until measured */
            lj->dataset = NULL;
            t->stage = 2;
        } else if (strstr(r->err.msg, "file changed while loading")) {
            /* still being written: taken again when complete, never shown half-read */
            cs_follow_retry(t->f, path);
            long gone = (long)t->trend.n;
            t->removed = gone;
            for (size_t i = 0; i < t->n_shown; i++) {   /* a file shown half-read is read again */
                if (t->shown[i] == gone) t->shown[i] = -1;
                else if (t->shown[i] > gone) t->shown[i]--;
            }
            for (size_t i = 0; i < t->n; i++) {   /* an epoch it replaced: changed, no new epoch */
                if (t->by[i] == gone) t->by[i] = TUI_TREND_CHANGED;
                else if (t->by[i] > gone) t->by[i]--;
            }
            size_t tail = t->n - t->trend.n - 1;
            memmove(&t->paths[gone], &t->paths[gone + 1], tail * sizeof *t->paths);
            memmove(&t->ids[gone], &t->ids[gone + 1], tail * sizeof *t->ids);
            memmove(&t->by[gone], &t->by[gone + 1], tail * sizeof *t->by);
            t->n--;
            t->stage = 0;
        } else {
            cs_trend_add_gap(&t->trend, path, r->err.msg[0] ? r->err.msg : "load failed", &err);
            t->stage = 0;
        }
    } else if (t->stage == 2) {
        const cs_metrics_job *mj = cs_metrics_job_of(r);
        if (r->status == CS_OK && mj) {
            cs_measurement mm;           /* a view of the job's result: cs_trend_add copies */
            memset(&mm, 0, sizeof mm);
            mm.evaluated = 1;
            mm.result = mj->result;
            mm.has_ci = mj->has_ci;
            mm.ci = mj->ci;
            cs_trend_add(&t->trend, path, &mm, &err);
        } else {
            cs_trend_add_gap(&t->trend, path, r->status == CS_EEMPTY ? "the selection kept no sample"
                             : r->err.msg[0] ? r->err.msg : "not measured", &err);
        }
        t->stage = 0;
    }
    cs_job_free(r);
}

int tui_trend_open(tui_trend *t, tui_model *m, const tui_state *st, char *msg, size_t size)
{
    memset(t, 0, sizeof *t);
    cs_error err;
    cs_error_clear(&err);
    if (cs_follow_open(st->follow, &st->follow_opts, &t->f, &err) != CS_OK) {
        snprintf(msg, size, "%s", err.msg);
        return -1;
    }
    t->settings = st->settings;
    t->ci = st->ci;
    t->ci_method = st->ci_method;
    t->seed = st->seed;
    t->removed = -1;
    for (int i = 0; i < 3; i++) t->shown[i] = t->shown_by[i] = -1;
    m->trend_collect = on_job;
    m->trend_ctx = t;
    return 0;
}

int tui_trend_fd(const tui_trend *t)
{
    return t->f ? cs_follow_fd(t->f) : -1;
}

int tui_trend_wait_ms(const tui_trend *t)
{
    if (!t->f) return 1000;
    int ms = cs_follow_fd(t->f) < 0 ? POLL_MS : 1000;
    double settling = cs_follow_settling_until(t->f);
    if (settling >= 0) {
        double left = (settling - realtime_s()) * 1e3;
        if (left < ms) ms = left < 10 ? 10 : (int)ceil(left);
    }
    return ms;
}

/* Appends the files the follow found complete. */
static unsigned take_news(tui_trend *t, tui_state *st)
{
    const char *const *ready;
    cs_error err;
    cs_error_clear(&err);
    long n = cs_follow_scan(t->f, realtime_s(), &ready, &err);
    if (n < 0) {
        tui_state_message(st, 1, "%s", err.msg);
        return TUI_REDRAW | TUI_RELAYOUT;
    }
    if (n == 0) return 0;
    if (t->n + (size_t)n > t->cap) {
        size_t cap = t->cap ? t->cap : 64;
        while (cap < t->n + (size_t)n) cap *= 2;
        const char **p = realloc(t->paths, cap * sizeof *p);
        if (p) t->paths = p;
        cs_follow_id *ids = p ? realloc(t->ids, cap * sizeof *ids) : NULL;
        if (ids) t->ids = ids;
        long *by = ids ? realloc(t->by, cap * sizeof *by) : NULL;
        if (by) t->by = by;
        if (!by) { tui_state_message(st, 1, "--follow: out of memory"); return TUI_REDRAW | TUI_RELAYOUT; }
        t->cap = cap;
    }
    int first = t->n == 0;
    for (long i = 0; i < n; i++) {
        size_t j = t->n++;
        t->paths[j] = ready[i];
        t->by[j] = TUI_TREND_BOUND;
        if (!cs_follow_taken_id(t->f, ready[i], &t->ids[j])) memset(&t->ids[j], 0, sizeof t->ids[j]);
        /* a file renamed over an epoch's name: the follow hands out the same string again, and
         * the earlier epochs of that name now name this file */
        for (size_t e = 0; e < j; e++)
            if (t->paths[e] == ready[i] && t->by[e] < 0 && !cs_follow_same_file(ready[i], &t->ids[e])) t->by[e] = (long)j;
    }
    if (first) {                      /* the files already there: the latest is shown */
        st->epoch = t->n - 1;
        st->epochs_seen = t->n;
    }
    return TUI_REDRAW;
}

/* Whether the summaries were measured with other settings than the screen's. */
static int settings_changed(const tui_trend *t, const tui_state *st)
{
    return memcmp(&t->settings, &st->settings, sizeof t->settings) != 0 || t->ci != st->ci ||
           (st->ci && (t->ci_method != st->ci_method || t->seed != st->seed));
}

/* Forgets every summary and the epoch being measured: measured again under st's settings. */
static void restart(tui_trend *t, tui_model *m, const tui_state *st)
{
    cs_backend_cancel(m->backend, TUI_SLOT_TREND);
    m->places[TUI_SLOT_TREND].pending = 0;
    m->places[TUI_SLOT_TREND].sub_gen = 0;
    cs_backend_retire_dataset(m->backend, t->data);
    t->data = NULL;
    t->stage = 0;
    cs_trend_free(&t->trend);
    memset(&t->trend, 0, sizeof t->trend);
    t->settings = st->settings;
    t->ci = st->ci;
    t->ci_method = st->ci_method;
    t->seed = st->seed;
}

static void submit(tui_model *m, tui_state *st, cs_job *job, cs_error *err)
{
    tui_place *pl = &m->places[TUI_SLOT_TREND];
    uint64_t gen = job ? cs_backend_submit(m->backend, TUI_SLOT_TREND, job, err) : 0;
    pl->sub_gen = gen;
    pl->pending = gen != 0;
    if (!gen) tui_state_message(st, 1, "backend: %s", err->msg);
}

/* The message of an epoch whose name names another file: in full for the views, or short for
 * a gap row of the table ("PATH: replaced (...)", the row names the file). */
static int unbound_message(tui_trend *t, size_t i, int look, int full, char *msg, size_t size)
{
    if (t->by[i] == TUI_TREND_BOUND && (!look || cs_follow_same_file(t->paths[i], &t->ids[i]))) return 0;
    if (t->by[i] == TUI_TREND_BOUND) t->by[i] = TUI_TREND_CHANGED;
    const char *base = tui_basename(t->paths[i]);
    if (t->by[i] >= 0 && full)
        snprintf(msg, size, "%s was replaced after epoch %zu was taken (the new file is epoch %ld)", base, i + 1,
                 t->by[i] + 1);
    else if (t->by[i] >= 0)
        snprintf(msg, size, "%s: replaced (the new file is epoch %ld)", t->paths[i], t->by[i] + 1);
    else if (full)
        snprintf(msg, size, "%s changed after epoch %zu was taken (not measured again)", base, i + 1);
    else
        snprintf(msg, size, "%s: changed after it was taken", t->paths[i]);
    return 1;
}

int tui_trend_unbound(tui_trend *t, size_t i, int look, char *msg, size_t size)
{
    return unbound_message(t, i, look, 1, msg, size);
}

/* Starts the next step of measuring epoch trend.n: its load, or its metrics once loaded. */
static void measure_next(tui_trend *t, tui_model *m, tui_state *st)
{
    if (m->places[TUI_SLOT_TREND].pending) return;
    cs_error err;
    cs_error_clear(&err);
    if (t->stage == 2 && t->data) {
        cs_metrics_job *job = cs_metrics_job_new(t->data, &t->settings, &err);
        if (job) {
            job->want = CS_WANT_ALL;
            job->base.threads = st->threads;
            cs_metrics_job_ci(job, t->ci, t->ci_method, t->seed);
        }
        submit(m, st, job ? &job->base : NULL, &err);
        if (!m->places[TUI_SLOT_TREND].pending) { cs_backend_retire_dataset(m->backend, t->data); t->data = NULL; t->stage = 0; }
        return;
    }
    if (t->stage == 2) return;
    if (t->data) {                    /* measured: the rows go, the summary stays */
        cs_backend_retire_dataset(m->backend, t->data);
        t->data = NULL;
    }
    char msg[1024];
    /* an epoch is measured from its own file only: one whose name names another is a gap */
    while (t->trend.n < t->n && unbound_message(t, t->trend.n, 1, 0, msg, sizeof msg))
        if (cs_trend_add_gap(&t->trend, t->paths[t->trend.n], msg, &err) != CS_OK) {
            tui_state_message(st, 1, "--follow: %s", err.msg);
            return;
        }
    if (t->trend.n >= t->n) return;
    cs_load_options o = tui_trend_load_options(st, t->paths[t->trend.n]);
    cs_load_job *job = cs_load_job_new(t->paths[t->trend.n], &o, &err);
    if (job) job->base.threads = st->threads;
    submit(m, st, job ? &job->base : NULL, &err);
    if (m->places[TUI_SLOT_TREND].pending) t->stage = 1;
}

/* The epochs the model's files are to hold: the selected one; with st->trend_compare the
 * first, selected and last, each once, in epoch order. Returns how many; *active is the
 * selected one's file. */
static size_t wanted_epochs(const tui_trend *t, const tui_state *st, size_t want[3], size_t *active, long *left_out)
{
    size_t cand[3] = {0, st->epoch, t->n - 1}, n = 0;
    *active = 0;
    *left_out = -1;
    if (!st->trend_compare) {
        want[0] = st->epoch;
        return 1;
    }
    for (int i = 0; i < 3; i++) {
        /* the first or last epoch whose name now names another file is not compared */
        if (i != 1 && t->by[cand[i]] != TUI_TREND_BOUND) { *left_out = (long)cand[i]; continue; }
        if (!n || want[n - 1] != cand[i]) want[n++] = cand[i];
    }
    for (size_t i = 0; i < n; i++)
        if (want[i] == st->epoch) *active = i;
    return n;
}

/* Loads into the model's files the epochs they are to hold and have not (each file that
 * already holds its epoch keeps its rows and results), and drops the files no longer used. */
static unsigned show_epochs(tui_trend *t, tui_model *m, tui_state *st)
{
    size_t want[3], active;
    long left_out;
    size_t n = wanted_epochs(t, st, want, &active, &left_out);
    unsigned flags = 0;
    char msg[1024];
    for (size_t i = 0; i < n; i++) {
        long e = (long)want[i];
        const char *path = t->paths[e];
        /* kept: the same epoch, loaded from its file, or its message still true */
        if (i < t->n_shown && t->shown[i] == e && (t->shown_by[i] == TUI_TREND_BOUND || t->shown_by[i] == t->by[e]))
            continue;
        if (tui_trend_unbound(t, (size_t)e, 1, msg, sizeof msg)) {
            tui_model_fail_file(m, i, path, msg);
        } else {
            cs_load_options o = tui_trend_load_options(st, path);
            tui_model_replace_file(m, st, i, path, &o);
        }
        st->paths[i] = path;                  /* the `:` line names them */
        t->shown[i] = e;
        t->shown_by[i] = t->by[e];
        flags |= TUI_REDRAW | TUI_RECOMPUTE;
    }
    if (flags && left_out >= 0 && tui_trend_unbound(t, (size_t)left_out, 0, msg, sizeof msg))
        tui_state_message(st, 0, "epoch %ld left out: %s", left_out + 1, msg);
    if (n < m->n_files) {
        tui_model_keep_files(m, n);
        flags |= TUI_REDRAW | TUI_RECOMPUTE;
    }
    t->n_shown = n;
    st->n_files = n;
    if (st->active != active) {
        st->active = active;
        flags |= TUI_REDRAW | TUI_RECOMPUTE;
    }
    return flags;
}

unsigned tui_trend_step(tui_trend *t, tui_model *m, tui_state *st)
{
    if (t->removed >= 0) {              /* an epoch went back to waiting: the shown one stays */
        if (st->epoch > (size_t)t->removed) st->epoch--;
        if (st->epochs_seen > (size_t)t->removed) st->epochs_seen--;
        t->removed = -1;
    }
    unsigned flags = take_news(t, st);
    st->n_epochs = t->n;
    if (st->epoch >= t->n && t->n) st->epoch = t->n - 1;
    if (t->n) flags |= show_epochs(t, m, st);
    if (settings_changed(t, st)) restart(t, m, st);
    measure_next(t, m, st);
    return flags;
}

void tui_trend_close(tui_trend *t)
{
    cs_dataset_free(t->data);
    cs_trend_free(&t->trend);
    free(t->paths);
    free(t->ids);
    free(t->by);
    if (t->f) cs_follow_close(t->f);
    memset(t, 0, sizeof *t);
}
