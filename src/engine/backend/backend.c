/* Threaded backend: see include/calscope/backend.h for the contract.
 *
 * Design (after redis bio.c): one mutex guards the request queue, the per-worker "running"
 * table, the per-slot latest job and the list of finished responses; workers sleep on a
 * condition variable. Generations are unique across the backend; latest[slot] holds the newest
 * one and is atomic so cs_backend_is_current needs no lock. A job never touches the UI: its
 * response goes on the done list and one byte goes down the wake-up pipe. A superseded job's
 * response is dropped when the worker finishes (or, if it raced a newer submit, when polled). */
#include "calscope/backend.h"

#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "calscope/curves.h"
#include "calscope/topk.h"

#define MAX_WORKERS 256

typedef struct done_item done_item;

/* Everything a request needs until it is delivered is allocated by cs_backend_submit, so an
 * allocation failure is reported to the caller there; a worker never has to drop a job or a
 * response for want of memory. */
typedef struct job {
    cs_request req;
    char *path;
    cs_response *resp;       /* filled by the worker, then moved to the done list */
    done_item *done;         /* the done-list entry that will carry resp */
    uint64_t gen;
    atomic_int cancel;
    atomic_int progress;     /* parts per million */
    int share;               /* helper threads when the request leaves it to the pool */
    struct job *next;
} job;

struct done_item {
    cs_response *resp;
    cs_request req;          /* the request's copy: which datasets the response came from */
    struct done_item *next;
};

struct cs_backend {
    pthread_mutex_t mu;
    pthread_cond_t work;     /* queue non-empty or stopping */
    pthread_cond_t idle;     /* a worker finished a job */
    int n_workers;
    int default_threads;     /* read by workers: fixed before the first one starts */
    pthread_t tid[MAX_WORKERS];
    job *running[MAX_WORKERS];
    job *q_head, *q_tail;
    done_item *d_head, *d_tail;
    job *slot_job[CS_BACKEND_MAX_SLOTS];      /* latest job while queued/running, else NULL */
    int slot_done[CS_BACKEND_MAX_SLOTS];      /* latest request finished and was delivered */
    _Atomic uint64_t latest[CS_BACKEND_MAX_SLOTS];
    uint64_t gen_counter;
    int stop;
    int pipe_rd, pipe_wr;
};

/* The backend's own allocations (not the engine's computations) go through bk_calloc so that
 * tests can make them fail (cs_backend_set_calloc). NULL = calloc. */
static void *(*_Atomic alloc_hook)(size_t, size_t);

void cs_backend_set_calloc(void *(*fn)(size_t count, size_t size))
{
    atomic_store(&alloc_hook, fn);
}

static void *bk_calloc(size_t count, size_t size)
{
    void *(*fn)(size_t, size_t) = atomic_load(&alloc_hook);
    return fn ? fn(count, size) : calloc(count, size);
}

typedef struct worker_arg {
    cs_backend *b;
    int index;
} worker_arg;

void cs_response_free(cs_response *r)
{
    if (!r)
        return;
    free(r->path);
    cs_dataset_free(r->dataset);
    cs_load_summary_free(&r->summary);
    cs_result_free(&r->result);
    cs_curve_free(r->curve);
    cs_case_metrics_free(&r->cases);
    cs_methods_free(&r->methods);
    cs_compat_report_free(&r->compat);
    free(r->compat_bin_moved);
    free(r);
}

static void job_free(job *j)
{
    if (!j)
        return;
    free(j->path);
    cs_response_free(j->resp);
    free(j->done);
    free(j);
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void load_progress(void *ctx, double fraction)
{
    job *j = ctx;
    int ppm = (int)(fraction * 1e6);
    atomic_store(&j->progress, ppm < 0 ? 0 : (ppm > 1000000 ? 1000000 : ppm));
}

static int is_cancelled(job *j)
{
    return atomic_load_explicit(&j->cancel, memory_order_relaxed) != 0;
}

static void run_sleep(job *j, cs_response *r)
{
    unsigned ms = j->req.sleep_ms;
    for (unsigned t = 0; t < ms; t++) {
        if (is_cancelled(j)) {
            r->status = cs_error_set(&r->err, CS_ECANCELLED, 0, 0, "cancelled");
            return;
        }
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
        atomic_store(&j->progress, (int)((double)(t + 1) / ms * 1e6));
    }
}

static void run_topk(job *j, cs_response *r)
{
    const cs_request *q = &j->req;
    r->n_topk = q->n_topk > CS_BACKEND_MAX_TOPK ? CS_BACKEND_MAX_TOPK : q->n_topk;
    memcpy(r->topk_k, q->topk_k, r->n_topk * sizeof *r->topk_k);
    /* cs_topk_bars sorts once for every k and takes no cancel flag; it costs about one
     * evaluation, so a superseded request just finishes and is dropped. */
    r->status = cs_topk_bars(q->data, &q->settings, q->topk_k, r->n_topk, r->topk_value, &r->err);
}

/* Per library, how many of its moved samples calscope puts in each of its M uniform bins
 * (top1 lens, uniform binning: bin i = (i/M, (i+1)/M], 0 in bin 0, as the metrics). */
static void compat_bins(const cs_dataset *d, cs_response *r)
{
    const cs_compat_report *c = &r->compat;
    if (c->lens != CS_LENS_TOP1 || c->binning != CS_BIN_UNIFORM || c->bins <= 0 || !c->rows) return;
    size_t m = (size_t)c->bins;
    r->compat_bin_moved = bk_calloc(CS_COMPAT_COUNT * m, sizeof *r->compat_bin_moved);
    if (!r->compat_bin_moved) {
        r->status = cs_error_set(&r->err, CS_ENOMEM, 0, 0, "out of memory");
        return;
    }
    for (size_t s = 0; s < c->n; s++) {
        double conf = d->conf[c->rows[s]];
        double e = ceil(conf * (double)m) - 1;
        size_t bin = e < 0 ? 0 : e >= (double)m ? m - 1 : (size_t)e;
        while (bin > 0 && !(conf > (double)bin / (double)m)) bin--;
        while (bin + 1 < m && conf > (double)(bin + 1) / (double)m) bin++;
        for (int l = 0; l < CS_COMPAT_COUNT; l++)
            if ((c->mask & (1u << l)) && c->lib[l].moved_flag && c->lib[l].moved_flag[s])
                r->compat_bin_moved[(size_t)l * m + bin]++;
    }
}

/* Runs j into its preallocated response and hands the response over. */
static cs_response *run_job(job *j)
{
    cs_response *r = j->resp;
    j->resp = NULL;
    const cs_request *q = &j->req;
    double t0 = now_seconds();
    r->kind = q->kind;
    r->slot = q->slot;
    r->generation = j->gen;
    r->data = q->data;
    cs_error_clear(&r->err);
    cs_run run = { .threads = q->threads > 0 ? q->threads : j->share,
                   .cancel = &j->cancel, .progress_ppm = &j->progress };
    unsigned metrics = q->metrics ? q->metrics : CS_METRICS_DEFAULT;
    cs_prepared *p = NULL;
    switch (q->kind) {
    case CS_JOB_LOAD: {
        cs_load_options o = q->load;
        o.progress = load_progress;
        o.progress_ctx = j;
        o.cancel = &j->cancel;
        r->path = j->path;
        j->path = NULL;
        r->dataset = cs_load_file(r->path, &o, &r->summary, &r->err);
        r->status = r->dataset ? CS_OK : r->err.code;
        break;
    }
    case CS_JOB_METRICS:
        p = cs_prepare(q->data, &q->settings, &r->err);
        if (!p) {
            r->status = r->err.code;
            break;
        }
        r->status = cs_evaluate(p, NULL, 0, q->want ? q->want : CS_WANT_ALL, &j->cancel,
                                &r->result, &r->err);
        if (r->status == CS_OK && q->ci_repeats > 0) {
            r->status = cs_bootstrap_interval(p, metrics, q->ci_repeats, q->seed,
                                              (cs_ci_method)q->ci_method, &run, &r->ci, &r->err);
            r->has_ci = r->status == CS_OK;
        }
        break;
    case CS_JOB_SIZE_CURVE:
        p = cs_prepare(q->data, &q->settings, &r->err);
        if (!p) {
            r->status = r->err.code;
            break;
        }
        r->curve = cs_size_curve(p, &q->curve, &run, &r->err);
        r->status = r->curve ? CS_OK : r->err.code;
        break;
    case CS_JOB_BINS_CURVE:
        r->curve = cs_bins_curve(q->data, &q->settings, &q->curve, &run, &r->err);
        r->status = r->curve ? CS_OK : r->err.code;
        break;
    case CS_JOB_TOPK:
        run_topk(j, r);
        break;
    case CS_JOB_COMPARE:
        r->status = cs_compare_run(q->data, q->data_b, &q->settings, metrics,
                                   q->compare_repeats > 0 ? q->compare_repeats : 1000, q->seed,
                                   &run, &r->compare, &r->err);
        break;
    case CS_JOB_SLEEP:
        run_sleep(j, r);
        break;
    case CS_JOB_CASES:
        r->status = cs_case_metrics_compute(q->data, &q->settings, &j->cancel, &r->cases, &r->err);
        break;
    case CS_JOB_LIKERT: {
        /* cs_likert_compute takes no cancel flag: a superseded request finishes and is dropped */
        size_t nc = q->n_likert_cuts > CS_LIKERT_MAX + 1 ? CS_LIKERT_MAX + 1 : q->n_likert_cuts;
        r->status = cs_likert_compute(q->data, &q->settings, nc ? q->likert_cuts : NULL,
                                      nc ? nc : 4, &r->likert, &r->err);
        break;
    }
    case CS_JOB_RECAL: {
        cs_recal_options ro = q->recal_opts;
        ro.fit_mask = NULL;
        if (ro.threads <= 0) ro.threads = run.threads;
        r->dataset = cs_recal_apply(q->data, q->recal, &ro, &r->recal_info, &r->err);
        r->status = r->dataset ? CS_OK : r->err.code;
        break;
    }
    case CS_JOB_METHODS:
        r->status = cs_methods_run(q->methods, q->n_methods, &q->settings, &q->methods_opts,
                                   &run, &r->methods, &r->err);
        break;
    case CS_JOB_COMPAT:
        r->status = cs_compat_run(q->data, &q->settings, CS_COMPAT_ALL_MASK, &r->compat, &r->err);
        if (r->status == CS_OK) compat_bins(q->data, r);
        break;
    }
    cs_prepared_free(p);
    if (r->status == CS_OK)
        atomic_store(&j->progress, 1000000);
    r->seconds = now_seconds() - t0;
    return r;
}

static void wake(cs_backend *b)
{
    char c = 1;
    /* A full pipe is already readable: EAGAIN loses nothing. */
    ssize_t w = write(b->pipe_wr, &c, 1);
    (void)w;
}

/* Workers run at a lower priority than the thread that created the pool (the front end's):
 * with every core computing, a key must still take effect within a frame. Linux applies nice
 * per thread, and the helper threads a job starts inherit it (and the name "cs-worker", which
 * shows in top -H and lets the tests find them). Failure only costs latency. */
static void lower_priority(void)
{
#if defined(__linux__) && defined(SYS_gettid)
    (void)prctl(PR_SET_NAME, "cs-worker", 0, 0, 0);
    id_t tid = (id_t)syscall(SYS_gettid);
    errno = 0;
    int cur = getpriority(PRIO_PROCESS, tid);
    if (errno == 0 && cur < 19) (void)setpriority(PRIO_PROCESS, tid, cur + 5 < 19 ? cur + 5 : 19);
#endif
}

static void *worker_main(void *arg)
{
    worker_arg *wa = arg;
    cs_backend *b = wa->b;
    int me = wa->index;
    free(wa);
    lower_priority();
    pthread_mutex_lock(&b->mu);
    for (;;) {
        while (!b->stop && !b->q_head)
            pthread_cond_wait(&b->work, &b->mu);
        if (b->stop)
            break;
        job *j = b->q_head;
        b->q_head = j->next;
        if (!b->q_head)
            b->q_tail = NULL;
        j->next = NULL;
        b->running[me] = j;
        /* Jobs that start while others run get a share of the cores, not all of them: two
         * curves side by side on 2 cores would otherwise run 4 threads and hold 4 threads'
         * scratch memory for no speed. Results do not depend on the count. */
        int busy = 0;
        for (int w = 0; w < b->n_workers; w++)
            busy += b->running[w] != NULL;
        j->share = b->default_threads / busy > 1 ? b->default_threads / busy : 1;
        pthread_mutex_unlock(&b->mu);

        cs_response *r = run_job(j);

        pthread_mutex_lock(&b->mu);
        b->running[me] = NULL;
        int slot = j->req.slot;
        int current = !is_cancelled(j) && atomic_load(&b->latest[slot]) == j->gen;
        if (b->slot_job[slot] == j)
            b->slot_job[slot] = NULL;
        done_item *d = j->done;
        j->done = NULL;
        if (current) {
            d->resp = r;
            d->req = j->req;
            d->next = NULL;
            if (b->d_tail)
                b->d_tail->next = d;
            else
                b->d_head = d;
            b->d_tail = d;
            b->slot_done[slot] = 1;
            wake(b);
        } else {
            cs_response_free(r);
            free(d);
        }
        job_free(j);
        pthread_cond_broadcast(&b->idle);
    }
    pthread_mutex_unlock(&b->mu);
    return NULL;
}

cs_backend *cs_backend_new(int workers, cs_error *err)
{
    if (workers <= 0)
        workers = cs_cpu_count();
    if (workers > MAX_WORKERS)
        workers = MAX_WORKERS;
    cs_backend *b = bk_calloc(1, sizeof *b);
    if (!b) {
        cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
        return NULL;
    }
    int fds[2];
    if (pipe(fds) != 0) {
        cs_error_set(err, CS_ENOMEM, 0, 0, "backend: pipe: %s", strerror(errno));
        free(b);
        return NULL;
    }
    b->pipe_rd = fds[0];
    b->pipe_wr = fds[1];
    for (int i = 0; i < 2; i++) {
        fcntl(fds[i], F_SETFL, fcntl(fds[i], F_GETFL) | O_NONBLOCK);
        fcntl(fds[i], F_SETFD, FD_CLOEXEC);
    }
    pthread_mutex_init(&b->mu, NULL);
    pthread_cond_init(&b->work, NULL);
    pthread_cond_init(&b->idle, NULL);
    for (int s = 0; s < CS_BACKEND_MAX_SLOTS; s++)
        atomic_init(&b->latest[s], 0);
    b->default_threads = workers;
    /* Workers inherit this mask: async signals stay with the UI thread. */
    sigset_t all, old;
    sigfillset(&all);
    /* ...but not the faults a worker itself may raise: blocked, they would kill the process
     * without the front end's handler (which restores the terminal). */
    static const int faults[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
    for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++)
        sigdelset(&all, faults[i]);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    for (int i = 0; i < workers; i++) {
        worker_arg *wa = bk_calloc(1, sizeof *wa);
        if (!wa)
            break;
        wa->b = b;
        wa->index = i;
        if (pthread_create(&b->tid[i], NULL, worker_main, wa) != 0) {
            free(wa);
            break;
        }
        b->n_workers++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (b->n_workers == 0) {
        cs_error_set(err, CS_ENOMEM, 0, 0, "backend: cannot start a worker thread");
        cs_backend_free(b);
        return NULL;
    }
    return b;
}

int cs_backend_workers(const cs_backend *b)
{
    return b->n_workers;
}

/* Under b->mu: supersedes the slot's current job (queued: dropped; running: cancelled). */
static void supersede_locked(cs_backend *b, int slot)
{
    job *old = b->slot_job[slot];
    b->slot_job[slot] = NULL;
    b->slot_done[slot] = 0;
    if (!old)
        return;
    for (job **pp = &b->q_head, *prev = NULL; *pp; prev = *pp, pp = &(*pp)->next) {
        if (*pp == old) {
            *pp = old->next;
            if (b->q_tail == old)
                b->q_tail = prev;
            job_free(old);
            return;
        }
    }
    atomic_store(&old->cancel, 1);
}

uint64_t cs_backend_submit(cs_backend *b, const cs_request *req, cs_error *err)
{
    if (req->slot < 0 || req->slot >= CS_BACKEND_MAX_SLOTS) {
        cs_error_set(err, CS_EUSAGE, 0, 0, "backend: slot %d out of range", req->slot);
        return 0;
    }
    if ((int)req->kind < CS_JOB_LOAD || req->kind > CS_JOB_COMPAT ||
        (req->kind == CS_JOB_METHODS &&
         (req->n_methods == 0 || req->n_methods > CS_BACKEND_MAX_METHODS)) ||
        (req->kind == CS_JOB_LOAD && !req->path) ||
        ((req->kind != CS_JOB_LOAD && req->kind != CS_JOB_SLEEP) && !req->data) ||
        (req->kind == CS_JOB_COMPARE && !req->data_b)) {
        cs_error_set(err, CS_EUSAGE, 0, 0, "backend: incomplete request");
        return 0;
    }
    job *j = bk_calloc(1, sizeof *j);
    if (j) {
        j->resp = bk_calloc(1, sizeof *j->resp);
        j->done = j->resp ? bk_calloc(1, sizeof *j->done) : NULL;
    }
    if (j && j->done && req->path) {
        size_t len = strlen(req->path);
        j->path = bk_calloc(len + 1, 1);
        if (j->path) memcpy(j->path, req->path, len);
    }
    if (!j || !j->done || (req->path && !j->path)) {
        job_free(j);
        cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
        return 0;
    }
    j->req = *req;
    j->req.path = NULL;
    atomic_init(&j->cancel, 0);
    atomic_init(&j->progress, 0);
    pthread_mutex_lock(&b->mu);
    supersede_locked(b, req->slot);
    uint64_t gen = j->gen = ++b->gen_counter;
    atomic_store(&b->latest[req->slot], gen);
    b->slot_job[req->slot] = j;
    if (b->q_tail)
        b->q_tail->next = j;
    else
        b->q_head = j;
    b->q_tail = j;
    pthread_cond_signal(&b->work);
    pthread_mutex_unlock(&b->mu);
    /* j belongs to the workers once unlocked (it may already be freed): use the copy. */
    return gen;
}

void cs_backend_cancel(cs_backend *b, int slot)
{
    if (slot < 0 || slot >= CS_BACKEND_MAX_SLOTS)
        return;
    pthread_mutex_lock(&b->mu);
    supersede_locked(b, slot);
    /* A fresh generation with no job: whatever was in flight is no longer current. */
    atomic_store(&b->latest[slot], ++b->gen_counter);
    pthread_mutex_unlock(&b->mu);
}

static int uses_req(const cs_request *q, const cs_dataset *d)
{
    for (size_t i = 0; q->kind == CS_JOB_METHODS && i < q->n_methods; i++)
        if (q->methods[i] == d) return 1;
    return q->data == d || q->data_b == d;
}

static int uses(const job *j, const cs_dataset *d)
{
    return j && uses_req(&j->req, d);
}

void cs_backend_release_dataset(cs_backend *b, const cs_dataset *d)
{
    pthread_mutex_lock(&b->mu);
    for (int s = 0; s < CS_BACKEND_MAX_SLOTS; s++)
        if (uses(b->slot_job[s], d)) {
            supersede_locked(b, s);
            atomic_store(&b->latest[s], ++b->gen_counter);
        }
    for (;;) {
        int busy = 0;
        for (int w = 0; w < b->n_workers; w++)
            if (uses(b->running[w], d)) {
                /* Also superseded jobs still winding down on an older generation. */
                atomic_store(&b->running[w]->cancel, 1);
                busy = 1;
            }
        if (!busy)
            break;
        pthread_cond_wait(&b->idle, &b->mu);
    }
    /* Finished but not yet polled: not delivered either (their data pointer would dangle). */
    for (done_item **pp = &b->d_head, *prev = NULL; *pp;) {
        done_item *it = *pp;
        if (!uses_req(&it->req, d)) {
            prev = it;
            pp = &it->next;
            continue;
        }
        *pp = it->next;
        if (b->d_tail == it)
            b->d_tail = prev;
        int s = it->resp->slot;
        if (atomic_load(&b->latest[s]) == it->resp->generation) {
            b->slot_done[s] = 0;
            atomic_store(&b->latest[s], ++b->gen_counter);
        }
        cs_response_free(it->resp);
        free(it);
    }
    pthread_mutex_unlock(&b->mu);
}

int cs_backend_wake_fd(const cs_backend *b)
{
    return b->pipe_rd;
}

void cs_backend_drain_wake(cs_backend *b)
{
    char buf[256];
    while (read(b->pipe_rd, buf, sizeof buf) > 0)
        ;
}

cs_response *cs_backend_poll(cs_backend *b)
{
    cs_response *out = NULL;
    pthread_mutex_lock(&b->mu);
    while (b->d_head && !out) {
        done_item *d = b->d_head;
        b->d_head = d->next;
        if (!b->d_head)
            b->d_tail = NULL;
        if (atomic_load(&b->latest[d->resp->slot]) == d->resp->generation)
            out = d->resp;
        else
            cs_response_free(d->resp);
        free(d);
    }
    pthread_mutex_unlock(&b->mu);
    return out;
}

cs_response *cs_backend_wait(cs_backend *b, int timeout_ms)
{
    double deadline = now_seconds() + timeout_ms / 1000.0;
    for (;;) {
        cs_response *r = cs_backend_poll(b);
        if (r)
            return r;
        int left = -1;
        if (timeout_ms >= 0) {
            double rem = deadline - now_seconds();
            if (rem <= 0)
                return NULL;
            left = (int)(rem * 1000) + 1;
        }
        struct pollfd pfd = { .fd = b->pipe_rd, .events = POLLIN };
        if (poll(&pfd, 1, left) > 0)
            cs_backend_drain_wake(b);
    }
}

int cs_backend_is_current(const cs_backend *b, const cs_response *r)
{
    if (r->slot < 0 || r->slot >= CS_BACKEND_MAX_SLOTS)
        return 0;
    return atomic_load(&((cs_backend *)b)->latest[r->slot]) == r->generation;
}

double cs_backend_progress(const cs_backend *b, int slot)
{
    if (slot < 0 || slot >= CS_BACKEND_MAX_SLOTS)
        return -1;
    cs_backend *m = (cs_backend *)b;
    double p;
    pthread_mutex_lock(&m->mu);
    if (m->slot_job[slot])
        p = atomic_load(&m->slot_job[slot]->progress) / 1e6;
    else
        p = m->slot_done[slot] ? 1.0 : -1.0;
    pthread_mutex_unlock(&m->mu);
    return p;
}

int cs_backend_busy(const cs_backend *b, int slot)
{
    if (slot < 0 || slot >= CS_BACKEND_MAX_SLOTS)
        return 0;
    cs_backend *m = (cs_backend *)b;
    pthread_mutex_lock(&m->mu);
    int busy = m->slot_job[slot] != NULL;
    pthread_mutex_unlock(&m->mu);
    return busy;
}

void cs_backend_free(cs_backend *b)
{
    if (!b)
        return;
    pthread_mutex_lock(&b->mu);
    b->stop = 1;
    for (int w = 0; w < b->n_workers; w++)
        if (b->running[w])
            atomic_store(&b->running[w]->cancel, 1);
    while (b->q_head) {
        job *j = b->q_head;
        b->q_head = j->next;
        job_free(j);
    }
    b->q_tail = NULL;
    for (int s = 0; s < CS_BACKEND_MAX_SLOTS; s++)
        b->slot_job[s] = NULL;
    pthread_cond_broadcast(&b->work);
    pthread_mutex_unlock(&b->mu);
    for (int w = 0; w < b->n_workers; w++)
        pthread_join(b->tid[w], NULL);
    while (b->d_head) {
        done_item *d = b->d_head;
        b->d_head = d->next;
        cs_response_free(d->resp);
        free(d);
    }
    pthread_mutex_destroy(&b->mu);
    pthread_cond_destroy(&b->work);
    pthread_cond_destroy(&b->idle);
    close(b->pipe_rd);
    close(b->pipe_wr);
    free(b);
}
