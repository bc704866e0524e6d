/* calscope engine, base layer: how a call runs — its thread budget, cancel flag and progress
 * (cs_run), and the one parallel-for that starts worker threads for it.
 *
 * Threads: cs_cpu_count is pure; cs_parallel_for runs a task function on up to `threads` threads
 * (the caller's thread takes part) and may be called from any thread. */
#ifndef CALSCOPE_RUN_H
#define CALSCOPE_RUN_H

#include <stdatomic.h>
#include <stddef.h>

/* Threads, cancellation and progress of one call. Zero-initialise for "all cores, no cancel". */
typedef struct cs_run {
    int threads;                 /* <= 0: online core count */
    const atomic_int *cancel;    /* may be NULL */
    atomic_int *progress_ppm;    /* may be NULL; set to 0..1000000 (monotonic) as replicates end */
    /* The part of progress_ppm this call owns: [ppm_from, ppm_to] (both 0: all of it). A call
     * made of steps gives each step its own part (cs_run_part), so progress only ever moves
     * forward across the steps instead of starting again at 0 for each one. */
    int ppm_from, ppm_to;
} cs_run;

/* The sub-run of run (NULL: a zeroed one) owning the fraction [a, b] (0 <= a <= b <= 1) of
 * run's progress part; threads and cancel as run's. Pure; any thread. */
cs_run cs_run_part(const cs_run *run, double a, double b);

/* Raises run's progress to the point `frac` (0..1) of its part; never lowers it. Any thread. */
void cs_run_progress_at(const cs_run *run, double frac);

/* Runs task(ctx, i, worker) for every i in [0, n_tasks) on min(threads, n_tasks,
 * CS_THREADS_MAX) threads (threads <= 0: the online core count); `worker` is 0..threads-1 and lets a task use per-thread
 * scratch. Tasks are taken in index order from a shared counter. When `cancel` is raised no new
 * task is started. Async signals are blocked in the extra threads. Returns 0, or -1 when a thread
 * could not be created (the remaining tasks then run on the caller's thread). */
#define CS_THREADS_MAX 256   /* --threads; cs_parallel_for never starts more */
int cs_parallel_for(int threads, size_t n_tasks, void (*task)(void *ctx, size_t i, int worker),
                    void *ctx, const atomic_int *cancel);

/* Online processor count, at least 1. */
int cs_cpu_count(void);

#endif
