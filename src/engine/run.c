/* The thread budget's one parallel-for: see include/calscope/run.h. */
#include "calscope/run.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calscope/thread.h"

int cs_cpu_count(void)
{
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    return c < 1 ? 1 : (c > CS_THREADS_MAX ? CS_THREADS_MAX : (int)c);
}

typedef struct pf_shared {
    void (*task)(void *ctx, size_t i, int worker);
    void *ctx;
    size_t n_tasks;
    atomic_size_t next;
    const atomic_int *cancel;
} pf_shared;

typedef struct pf_arg {
    pf_shared *sh;
    int worker;
} pf_arg;

static void pf_loop(pf_shared *sh, int worker)
{
    for (;;) {
        if (sh->cancel && atomic_load_explicit(sh->cancel, memory_order_relaxed))
            return;
        size_t i = atomic_fetch_add(&sh->next, 1);
        if (i >= sh->n_tasks)
            return;
        sh->task(sh->ctx, i, worker);
    }
}

static void *pf_thread(void *p)
{
    pf_arg *a = p;
    pf_loop(a->sh, a->worker);
    return NULL;
}

int cs_parallel_for(int threads, size_t n_tasks, void (*task)(void *ctx, size_t i, int worker),
                    void *ctx, const atomic_int *cancel)
{
    if (threads <= 0)
        threads = cs_cpu_count();
    if (threads > CS_THREADS_MAX)
        threads = CS_THREADS_MAX;
    if ((size_t)threads > n_tasks)
        threads = n_tasks > 0 ? (int)n_tasks : 1;
    pf_shared sh = { .task = task, .ctx = ctx, .n_tasks = n_tasks, .cancel = cancel };
    atomic_init(&sh.next, 0);
    if (threads == 1) {
        pf_loop(&sh, 0);
        return 0;
    }
    /* on the heap: a thread count is the caller's number, never a stack array's size */
    pthread_t *tid = malloc((size_t)(threads - 1) * sizeof *tid);
    pf_arg *args = malloc((size_t)(threads - 1) * sizeof *args);
    int started = 0, rc = 0;
    if (!tid || !args) {
        threads = 1;   /* no helpers: the caller's thread runs every task */
        rc = -1;
    }
    /* helpers never take SIGINT/SIGWINCH meant for the UI thread (calscope/thread.h) */
    for (int t = 1; t < threads; t++) {
        args[started] = (pf_arg){ &sh, t };
        if (!cs_helper_start(&tid[started], pf_thread, &args[started])) {
            rc = -1;
            break;
        }
        started++;
    }
    pf_loop(&sh, 0);
    for (int t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
    free(tid);
    free(args);
    return rc;
}

/* The part [from, to] of progress_ppm that run owns. */
static void run_part_bounds(const cs_run *run, int *from, int *to)
{
    *from = run->ppm_from;
    *to = run->ppm_from == 0 && run->ppm_to == 0 ? 1000000 : run->ppm_to;
}

cs_run cs_run_part(const cs_run *run, double a, double b)
{
    cs_run sub;
    memset(&sub, 0, sizeof sub);
    if (!run) return sub;
    sub = *run;
    int from, to;
    run_part_bounds(run, &from, &to);
    sub.ppm_from = from + (int)((double)(to - from) * a);
    sub.ppm_to = from + (int)((double)(to - from) * b);
    if (sub.ppm_to == 0) sub.ppm_to = 1;   /* (0, 0) would read as all of it */
    return sub;
}

void cs_run_progress_at(const cs_run *run, double frac)
{
    if (!run || !run->progress_ppm) return;
    int from, to;
    run_part_bounds(run, &from, &to);
    if (frac > 1.0) frac = 1.0;
    int ppm = from + (int)((double)(to - from) * (frac > 0.0 ? frac : 0.0));
    /* concurrent writers may finish out of order: only ever move forward */
    int cur = atomic_load(run->progress_ppm);
    while (cur < ppm && !atomic_compare_exchange_weak(run->progress_ppm, &cur, ppm))
        ;
}
