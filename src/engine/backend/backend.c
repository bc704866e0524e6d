/* Threaded backend: see include/calscope/backend.h for the contract.
 *
 * Design (after redis bio.c): one mutex guards the queue, the per-worker "running" table, the
 * per-slot latest task, the finished list and the retired datasets; workers sleep on a condition
 * variable. Generations are unique across the backend; latest[slot] holds the newest one and is
 * atomic so cs_backend_is_current needs no lock. A task never touches the UI: its finished job
 * goes on the done list and one byte goes down the wake-up pipe. A superseded task's job is
 * dropped when the worker finishes (or, if it raced a newer submit, when polled). The scheduler
 * calls a job only through its cs_job_ops: it never knows what the job computes. */
#include "calscope/backend.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "calscope/run.h"        /* cs_run, cs_cpu_count */
#include "calscope/thread.h"

#define MAX_WORKERS 256

typedef struct done_item done_item;

/* Everything a job needs until it is delivered is allocated by cs_backend_submit, so an
 * allocation failure is reported to the caller there; a worker never has to drop a job for
 * want of memory. */
typedef struct task {
    cs_job *job;
    done_item *done;         /* the done-list entry that will carry job */
    uint64_t gen;
    atomic_int cancel;
    atomic_int progress;     /* parts per million */
    atomic_llong started_us; /* when a worker began running it (monotonic us); 0: queued */
    int share;               /* helper threads when the job leaves it to the pool */
    struct task *next;
} task;

struct done_item {
    cs_job *job;
    struct done_item *next;
};

typedef struct retired {
    cs_dataset *d;
    struct retired *next;
} retired;

struct cs_backend {
    pthread_mutex_t mu;
    pthread_cond_t work;     /* queue changed, a worker became free, or stopping */
    pthread_cond_t idle;     /* a worker finished a task */
    int n_workers;
    int default_threads;     /* read by workers: fixed before the first one starts */
    pthread_t tid[MAX_WORKERS];
    task *running[MAX_WORKERS];
    int cheap_only[MAX_WORKERS]; /* the worker runs cheap jobs only (the last of several) */
    task *q_head;
    done_item *d_head, *d_tail;
    retired *retired;        /* datasets to free once no running task reads them */
    task *slot_task[CS_BACKEND_MAX_SLOTS];    /* latest task while queued/running, else NULL */
    int slot_done[CS_BACKEND_MAX_SLOTS];      /* latest task finished and was delivered */
    _Atomic uint64_t latest[CS_BACKEND_MAX_SLOTS];
    uint64_t gen_counter;
    int stop;
    int pipe_rd, pipe_wr;
};

/* ---- allocation (tests make it fail: cs_backend_set_calloc) ----------------------------- */

static void *(*_Atomic alloc_hook)(size_t, size_t);

void cs_backend_set_calloc(void *(*fn)(size_t count, size_t size))
{
    atomic_store(&alloc_hook, fn);
}

void *cs_backend_calloc(size_t count, size_t size)
{
    void *(*fn)(size_t, size_t) = atomic_load(&alloc_hook);
    return fn ? fn(count, size) : calloc(count, size);
}

cs_job *cs_job_alloc(size_t size, const cs_job_ops *ops)
{
    cs_job *j = size >= sizeof *j ? cs_backend_calloc(1, size) : NULL;
    if (j) j->ops = ops;
    return j;
}

void cs_job_free(cs_job *j)
{
    if (j) j->ops->free(j);
}

static void task_free(task *t)
{
    if (!t)
        return;
    cs_job_free(t->job);
    free(t->done);
    free(t);
}

static int uses(const cs_job *j, const cs_dataset *d)
{
    return j && j->ops->uses_dataset(j, d);
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int is_cancelled(task *t)
{
    return atomic_load_explicit(&t->cancel, memory_order_relaxed) != 0;
}

/* ---- workers ----------------------------------------------------------------------------- */

static void run_task(task *t)
{
    cs_job *j = t->job;
    double t0 = now_seconds();
    atomic_store(&t->started_us, (long long)(t0 * 1e6) + 1);
    cs_error_clear(&j->err);
    j->status = CS_OK;
    cs_run run = { .threads = j->threads > 0 ? j->threads : t->share,
                   .cancel = &t->cancel, .progress_ppm = &t->progress };
    j->ops->run(j, &run);
    if (j->status == CS_OK)
        atomic_store(&t->progress, 1000000);
    j->seconds = now_seconds() - t0;
}

static void wake(cs_backend *b)
{
    char c = 1;
    /* A full pipe is already readable: EAGAIN loses nothing. */
    ssize_t w = write(b->pipe_wr, &c, 1);
    (void)w;
}

/* Workers run at a lower priority than the thread that created the pool (the front end's):
 * with every core computing, a key must still take effect within a frame. The last worker of a
 * pool of several runs cheap jobs only, 5 nice levels down; the others may run long jobs and
 * sit 5 levels further down, so a cheap job on screen wins the cores from a running curve (an
 * unprivileged thread cannot raise its priority back, hence fixed roles). Linux applies nice
 * per thread, and the helper threads a job starts inherit it (and the name "cs-worker", which
 * shows in top -H and lets the tests find them). Failure only costs latency. */
static void lower_priority(int levels)
{
#if defined(__linux__) && defined(SYS_gettid)
    (void)prctl(PR_SET_NAME, "cs-worker", 0, 0, 0);
    id_t tid = (id_t)syscall(SYS_gettid);
    errno = 0;
    int cur = getpriority(PRIO_PROCESS, tid);
    if (errno == 0 && cur < 19)
        (void)setpriority(PRIO_PROCESS, tid, cur + levels < 19 ? cur + levels : 19);
#else
    (void)levels;
#endif
}

/* Under b->mu: unlinks and returns the task worker `me` should run next, or NULL. Cheap tasks
 * first (in queue order); long ones only on the workers that may run them (all but the last of
 * a pool of several: one worker always stays free for a cheap job that may come). */
static task *take_locked(cs_backend *b, int me)
{
    int long_ok = !b->cheap_only[me];
    task **pick = NULL;
    for (task **pp = &b->q_head; *pp; pp = &(*pp)->next) {
        if ((*pp)->job->ops->cost == CS_COST_CHEAP) { pick = pp; break; }
        if (!pick && long_ok) pick = pp;
    }
    if (!pick)
        return NULL;
    task *t = *pick;
    *pick = t->next;
    t->next = NULL;
    return t;
}

/* Under b->mu: frees every retired dataset no running task reads any more. */
static void free_retired_locked(cs_backend *b)
{
    for (retired **pp = &b->retired; *pp;) {
        retired *r = *pp;
        int busy = 0;
        for (int w = 0; w < b->n_workers && !busy; w++)
            busy = b->running[w] && uses(b->running[w]->job, r->d);
        if (busy) { pp = &r->next; continue; }
        *pp = r->next;
        cs_dataset_free(r->d);
        free(r);
    }
}

static void *worker_main(void *arg)
{
    cs_backend *b = ((void **)arg)[0];
    int me = (int)(intptr_t)((void **)arg)[1];
    free(arg);
    lower_priority(b->cheap_only[me] ? 5 : 10);
    pthread_mutex_lock(&b->mu);
    for (;;) {
        task *t = NULL;
        while (!b->stop && !(t = take_locked(b, me)))
            pthread_cond_wait(&b->work, &b->mu);
        if (b->stop) {
            if (t) task_free(t);
            break;
        }
        b->running[me] = t;
        /* Jobs that start while others run get a share of the cores, not all of them: two
         * curves side by side on 2 cores would otherwise run 4 threads and hold 4 threads'
         * scratch memory for no speed. Results do not depend on the count. */
        int busy = 0;
        for (int w = 0; w < b->n_workers; w++)
            busy += b->running[w] != NULL;
        t->share = b->default_threads / busy > 1 ? b->default_threads / busy : 1;
        pthread_mutex_unlock(&b->mu);

        run_task(t);

        pthread_mutex_lock(&b->mu);
        b->running[me] = NULL;
        cs_job *j = t->job;
        int slot = j->slot;
        int current = !b->stop && !is_cancelled(t) && atomic_load(&b->latest[slot]) == t->gen;
        if (b->slot_task[slot] == t)
            b->slot_task[slot] = NULL;
        if (current) {
            done_item *d = t->done;
            t->done = NULL;
            t->job = NULL;
            d->job = j;
            d->next = NULL;
            if (b->d_tail)
                b->d_tail->next = d;
            else
                b->d_head = d;
            b->d_tail = d;
            b->slot_done[slot] = 1;
            wake(b);
        }
        task_free(t);
        free_retired_locked(b);
        pthread_cond_broadcast(&b->idle);
        pthread_cond_broadcast(&b->work);   /* a task may have waited for this worker */
    }
    pthread_mutex_unlock(&b->mu);
    return NULL;
}

/* ---- the UI thread's calls ------------------------------------------------------------- */

cs_backend *cs_backend_new(int workers, cs_error *err)
{
    if (workers <= 0)
        workers = cs_cpu_count();
    if (workers > MAX_WORKERS)
        workers = MAX_WORKERS;
    cs_backend *b = cs_backend_calloc(1, sizeof *b);
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
    /* async signals stay with the UI thread; faults reach the front end's handler, which
     * restores the terminal (calscope/thread.h) */
    pthread_mutex_lock(&b->mu);   /* n_workers is read by running workers */
    for (int i = 0; i < workers; i++) {
        void **wa = cs_backend_calloc(2, sizeof *wa);
        if (!wa)
            break;
        wa[0] = b;
        wa[1] = (void *)(intptr_t)i;
        b->cheap_only[i] = workers > 1 && i == workers - 1;
        if (!cs_helper_start(&b->tid[i], worker_main, wa)) {
            free(wa);
            break;
        }
        b->n_workers++;
    }
    pthread_mutex_unlock(&b->mu);
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

/* Under b->mu: supersedes the slot's current task (queued: dropped; running: cancelled). */
static void supersede_locked(cs_backend *b, int slot)
{
    task *old = b->slot_task[slot];
    b->slot_task[slot] = NULL;
    b->slot_done[slot] = 0;
    if (!old)
        return;
    for (task **pp = &b->q_head; *pp; pp = &(*pp)->next) {
        if (*pp == old) {
            *pp = old->next;
            task_free(old);
            return;
        }
    }
    atomic_store(&old->cancel, 1);
}

uint64_t cs_backend_submit(cs_backend *b, int slot, cs_job *job, cs_error *err)
{
    if (slot < 0 || slot >= CS_BACKEND_MAX_SLOTS || !job) {
        cs_job_free(job);
        cs_error_set(err, CS_EUSAGE, 0, 0, "backend: slot %d out of range", slot);
        if (!job) cs_error_set(err, CS_EUSAGE, 0, 0, "backend: incomplete request");
        return 0;
    }
    task *t = cs_backend_calloc(1, sizeof *t);
    if (t)
        t->done = cs_backend_calloc(1, sizeof *t->done);
    if (!t || !t->done) {
        if (t) free(t);
        cs_job_free(job);
        cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
        return 0;
    }
    t->job = job;
    job->slot = slot;
    atomic_init(&t->cancel, 0);
    atomic_init(&t->progress, 0);
    atomic_init(&t->started_us, 0);
    pthread_mutex_lock(&b->mu);
    supersede_locked(b, slot);
    uint64_t gen = t->gen = job->generation = ++b->gen_counter;
    atomic_store(&b->latest[slot], gen);
    b->slot_task[slot] = t;
    task **pp = &b->q_head;
    while (*pp)
        pp = &(*pp)->next;
    *pp = t;
    pthread_cond_broadcast(&b->work);
    pthread_mutex_unlock(&b->mu);
    /* t belongs to the workers once unlocked (it may already be freed): use the copy. */
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

/* Under b->mu: supersedes every slot whose latest task reads d, raises the flag of every
 * running task that reads d (also superseded ones still winding down) and drops the finished,
 * unpolled jobs that read d (their data pointer would dangle). Returns nonzero when a running
 * task still reads d. */
static int cancel_uses_locked(cs_backend *b, const cs_dataset *d)
{
    for (int s = 0; s < CS_BACKEND_MAX_SLOTS; s++)
        if (b->slot_task[s] && uses(b->slot_task[s]->job, d)) {
            supersede_locked(b, s);
            atomic_store(&b->latest[s], ++b->gen_counter);
        }
    for (done_item **pp = &b->d_head, *prev = NULL; *pp;) {
        done_item *it = *pp;
        if (!uses(it->job, d)) {
            prev = it;
            pp = &it->next;
            continue;
        }
        *pp = it->next;
        if (b->d_tail == it)
            b->d_tail = prev;
        int s = it->job->slot;
        if (atomic_load(&b->latest[s]) == it->job->generation) {
            b->slot_done[s] = 0;
            atomic_store(&b->latest[s], ++b->gen_counter);
        }
        cs_job_free(it->job);
        free(it);
    }
    int busy = 0;
    for (int w = 0; w < b->n_workers; w++)
        if (b->running[w] && uses(b->running[w]->job, d)) {
            atomic_store(&b->running[w]->cancel, 1);
            busy = 1;
        }
    return busy;
}

void cs_backend_release_dataset(cs_backend *b, const cs_dataset *d)
{
    pthread_mutex_lock(&b->mu);
    while (cancel_uses_locked(b, d))
        pthread_cond_wait(&b->idle, &b->mu);
    pthread_mutex_unlock(&b->mu);
}

void cs_backend_retire_dataset(cs_backend *b, cs_dataset *d)
{
    if (!d)
        return;
    pthread_mutex_lock(&b->mu);
    int busy = cancel_uses_locked(b, d);
    retired *r = busy ? calloc(1, sizeof *r) : NULL;
    if (r) {
        r->d = d;
        r->next = b->retired;
        b->retired = r;
    }
    pthread_mutex_unlock(&b->mu);
    if (!busy)
        cs_dataset_free(d);
    else if (!r)   /* out of memory for the note: wait instead, as release_dataset does */
    {
        cs_backend_release_dataset(b, d);
        cs_dataset_free(d);
    }
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

cs_job *cs_backend_poll(cs_backend *b)
{
    cs_job *out = NULL;
    pthread_mutex_lock(&b->mu);
    while (b->d_head && !out) {
        done_item *d = b->d_head;
        b->d_head = d->next;
        if (!b->d_head)
            b->d_tail = NULL;
        if (atomic_load(&b->latest[d->job->slot]) == d->job->generation)
            out = d->job;
        else
            cs_job_free(d->job);
        free(d);
    }
    pthread_mutex_unlock(&b->mu);
    return out;
}

cs_job *cs_backend_wait(cs_backend *b, int timeout_ms)
{
    double deadline = now_seconds() + timeout_ms / 1000.0;
    for (;;) {
        cs_job *j = cs_backend_poll(b);
        if (j)
            return j;
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

int cs_backend_is_current(const cs_backend *b, const cs_job *j)
{
    if (j->slot < 0 || j->slot >= CS_BACKEND_MAX_SLOTS)
        return 0;
    return atomic_load(&((cs_backend *)b)->latest[j->slot]) == j->generation;
}

double cs_backend_progress(const cs_backend *b, int slot)
{
    if (slot < 0 || slot >= CS_BACKEND_MAX_SLOTS)
        return -1;
    cs_backend *m = (cs_backend *)b;
    double p;
    pthread_mutex_lock(&m->mu);
    if (m->slot_task[slot])
        p = atomic_load(&m->slot_task[slot]->progress) / 1e6;
    else
        p = m->slot_done[slot] ? 1.0 : -1.0;
    pthread_mutex_unlock(&m->mu);
    return p;
}

/* The ETA of a job that started at started_us and has done p of its work, seconds; -1 when
 * too little has happened to tell (the first second, the first 2 %). */
static double eta_of(long long started_us, double p)
{
    if (started_us <= 0 || !(p >= 0.02) || p >= 1.0) return -1.0;
    double elapsed = now_seconds() - (double)started_us * 1e-6;
    if (elapsed < 1.0) return -1.0;
    return elapsed * (1.0 - p) / p;
}

double cs_backend_eta(const cs_backend *b, int slot)
{
    if (slot < 0 || slot >= CS_BACKEND_MAX_SLOTS)
        return -1;
    cs_backend *m = (cs_backend *)b;
    double eta = -1.0;
    pthread_mutex_lock(&m->mu);
    task *t = m->slot_task[slot];
    if (t) eta = eta_of(atomic_load(&t->started_us), atomic_load(&t->progress) / 1e6);
    pthread_mutex_unlock(&m->mu);
    return eta;
}

int cs_backend_busy(const cs_backend *b, int slot)
{
    if (slot < 0 || slot >= CS_BACKEND_MAX_SLOTS)
        return 0;
    cs_backend *m = (cs_backend *)b;
    pthread_mutex_lock(&m->mu);
    int busy = m->slot_task[slot] != NULL;
    pthread_mutex_unlock(&m->mu);
    return busy;
}

int cs_backend_shutdown(cs_backend *b, int timeout_ms)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    if (timeout_ms >= 0) {
        until.tv_sec += timeout_ms / 1000;
        until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L) { until.tv_sec++; until.tv_nsec -= 1000000000L; }
    }
    pthread_mutex_lock(&b->mu);
    b->stop = 1;
    while (b->q_head) {
        task *t = b->q_head;
        b->q_head = t->next;
        task_free(t);
    }
    for (int s = 0; s < CS_BACKEND_MAX_SLOTS; s++) {
        b->slot_task[s] = NULL;
        atomic_store(&b->latest[s], ++b->gen_counter);
    }
    pthread_cond_broadcast(&b->work);
    int running = 0;
    for (;;) {
        running = 0;
        for (int w = 0; w < b->n_workers; w++)
            if (b->running[w]) {
                atomic_store(&b->running[w]->cancel, 1);
                running = 1;
            }
        if (!running)
            break;
        if (timeout_ms < 0)
            pthread_cond_wait(&b->idle, &b->mu);
        else if (pthread_cond_timedwait(&b->idle, &b->mu, &until) == ETIMEDOUT)
            break;
    }
    pthread_mutex_unlock(&b->mu);
    return !running;
}

void cs_backend_free(cs_backend *b)
{
    if (!b)
        return;
    cs_backend_shutdown(b, -1);
    for (int w = 0; w < b->n_workers; w++)
        pthread_join(b->tid[w], NULL);
    while (b->d_head) {
        done_item *d = b->d_head;
        b->d_head = d->next;
        cs_job_free(d->job);
        free(d);
    }
    while (b->retired) {
        retired *r = b->retired;
        b->retired = r->next;
        cs_dataset_free(r->d);
        free(r);
    }
    pthread_mutex_destroy(&b->mu);
    pthread_cond_destroy(&b->work);
    pthread_cond_destroy(&b->idle);
    close(b->pipe_rd);
    close(b->pipe_wr);
    free(b);
}
