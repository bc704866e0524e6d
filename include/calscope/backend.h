/* calscope engine: the threaded backend (curses in one thread, workers post results and wake
 * it; after redis src/bio.c).
 *
 * A pool of worker threads runs jobs and hands them back finished; the front end never blocks.
 * The scheduler knows nothing about what a job computes: a job is a struct that starts with a
 * cs_job header, whose cs_job_ops give {run, free, uses_dataset, cost class}. Each job kind is a
 * small file of its own (calscope/jobs/<kind>.h, src/engine/jobs/<kind>.c) that owns its request
 * and result types; adding a kind touches no switch here.
 *
 *   UI thread                                   worker threads
 *   ---------                                   --------------
 *   b = cs_backend_new(0, &err)
 *   j = cs_metrics_job_new(data, &settings, &err)      (a job kind's constructor)
 *   gen = cs_backend_submit(b, slot, &j->base, &err)   --queue-->  take the next job (cheap ones
 *                                                 first), run it, poll its cancel flag, publish
 *                                                 progress
 *   poll({cs_backend_wake_fd(b), stdin})  <--1 byte per completion--  push the finished job
 *   cs_backend_drain_wake(b)
 *   while ((j = cs_backend_poll(b))) { m = cs_metrics_job_of(j); use m->result; cs_job_free(j); }
 *   cs_backend_shutdown(b, CS_BACKEND_QUIT_WAIT_MS)   every job cancelled; waits at most 100 ms
 *   cs_backend_free(b)                            all workers joined
 *
 * Slots and generations. Every job is submitted on a slot (a view, e.g. "table of file 2",
 * "size curve"), 0 .. CS_BACKEND_MAX_SLOTS-1. cs_backend_submit gives it a generation number,
 * unique and increasing across the backend. A newer job on a slot supersedes the older one: if
 * the older one is still queued it is dropped at once, if it is running its cancel flag is raised
 * and the worker stops at its next poll (every job polls: every few ms). A superseded job —
 * cancelled or finished anyway — is freed by the backend and never returned by cs_backend_poll,
 * so a poll only returns jobs whose generation is the latest of their slot at the moment of the
 * poll. The UI may still call cs_backend_is_current later (e.g. after submitting again).
 *
 * Order. Queued jobs of cost class CS_COST_CHEAP run before queued CS_COST_LONG ones, and the
 * last worker of a pool of several runs cheap jobs only, at a higher priority (nice) than the
 * workers that run long ones: a metrics recompute never waits behind a resampling curve, and
 * wins the cores from it while both run (a pool of one worker runs in queue order).
 *
 * Ownership. cs_backend_submit takes the job (also when it refuses it: then it frees it). The
 * datasets a job points to are borrowed: they must stay alive until the job is finished — call
 * cs_backend_release_dataset (waits) or hand the dataset to cs_backend_retire_dataset (never
 * waits) instead of freeing a dataset the backend may be using. A job from cs_backend_poll
 * belongs to the caller, including everything its result owns: free it with cs_job_free, or
 * take members first and set them to NULL (each kind's header says which).
 *
 * Threads. Every cs_backend_* call except cs_backend_progress, cs_backend_busy and
 * cs_backend_is_current must come from one thread (the UI thread, or the test); those three only
 * read atomics or take the lock briefly and may be called from anywhere. Workers never touch the
 * UI; they block async signals (SIGINT, SIGWINCH, ... are left to the UI thread). A job's
 * computation may itself use `threads` helper threads; results do not depend on that count.
 *
 * The wake-up fd is the read end of a non-blocking pipe: one byte is written per job queued for
 * delivery. It is level-triggered: drain it (cs_backend_drain_wake) then call cs_backend_poll
 * until NULL. Spurious wake-ups (a job that was superseded meanwhile) are harmless. */
#ifndef CALSCOPE_BACKEND_H
#define CALSCOPE_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "calscope/dataset.h"
#include "calscope/error.h"

#define CS_BACKEND_MAX_SLOTS 80

struct cs_run;   /* calscope/resample.h: threads, cancel flag and progress of one engine call */

typedef struct cs_job cs_job;

/* How long a job may run: the scheduler's only hint about what it computes. */
typedef enum cs_job_cost {
    CS_COST_CHEAP,   /* one pass over the data: a load, an evaluation, a fit (ms to seconds) */
    CS_COST_LONG     /* resampling: curves, paired bootstraps, methods tables (up to minutes) */
} cs_job_cost;

/* What the scheduler knows about a job kind. One static instance per kind. */
typedef struct cs_job_ops {
    const char *name;          /* "metrics", "size curve", ... (messages and status lines) */
    cs_job_cost cost;
    /* Worker thread: computes the result into the job and sets job->status (job->err on error).
     * Must poll run->cancel (at least every few ms of work) and return CS_ECANCELLED soon after
     * it is raised; may publish run->progress_ppm. */
    void (*run)(cs_job *job, const struct cs_run *run);
    /* Frees the job and everything it owns (never the datasets it borrows). Any thread. */
    void (*free)(cs_job *job);
    /* Nonzero when the job reads dataset d. Called under the backend's lock: no blocking. */
    int (*uses_dataset)(const cs_job *job, const cs_dataset *d);
} cs_job_ops;

/* The header every job starts with. A kind's constructor sets ops; the caller may set threads;
 * the backend fills the rest. */
struct cs_job {
    const cs_job_ops *ops;
    int threads;               /* helper threads for this job; 0 = the pool size divided by the
                                  jobs running when it starts (results are identical) */
    int slot;                  /* set by cs_backend_submit */
    uint64_t generation;       /* set by cs_backend_submit */
    cs_status status;          /* CS_OK, or the job's error (err has the message) */
    cs_error err;
    double seconds;            /* wall time the job ran */
};

typedef struct cs_backend cs_backend;

/* Starts `workers` threads (<= 0: the online core count). Returns NULL with err on failure. */
cs_backend *cs_backend_new(int workers, cs_error *err);

/* Number of worker threads. */
int cs_backend_workers(const cs_backend *b);

/* Queues job on slot and returns its generation (> 0), superseding the slot's older job. Takes
 * the job in every case: returns 0 with err set (CS_EUSAGE: bad slot or NULL job, CS_ENOMEM)
 * after freeing it when nothing was queued. */
uint64_t cs_backend_submit(cs_backend *b, int slot, cs_job *job, cs_error *err);

/* Supersedes the slot's job without a new one: nothing more is delivered for it. */
void cs_backend_cancel(cs_backend *b, int slot);

/* Cancels every job that uses dataset d and waits until none runs; afterwards d may be freed.
 * Their results are not delivered (nor those already finished but not yet polled). Waits only
 * as long as the jobs take to notice their cancel flags. */
void cs_backend_release_dataset(cs_backend *b, const cs_dataset *d);

/* Like cs_backend_release_dataset but never waits: takes d and frees it (cs_dataset_free) as
 * soon as no job reads it — now, or when the last running one returns. */
void cs_backend_retire_dataset(cs_backend *b, cs_dataset *d);

/* Read end of the wake-up pipe (non-blocking): poll it for POLLIN together with stdin. */
int cs_backend_wake_fd(const cs_backend *b);

/* Reads and discards every pending wake-up byte. */
void cs_backend_drain_wake(cs_backend *b);

/* Next current finished job in completion order, or NULL when none is waiting. Ownership moves
 * to the caller (cs_job_free). */
cs_job *cs_backend_poll(cs_backend *b);

/* Blocks until a job is waiting or timeout_ms passes (< 0: no limit); then like cs_backend_poll.
 * For headless use and tests. */
cs_job *cs_backend_wait(cs_backend *b, int timeout_ms);

/* Nonzero while j's generation is still the latest submitted on its slot. Any thread. */
int cs_backend_is_current(const cs_backend *b, const cs_job *j);

/* Progress 0..1 of the slot's latest job (1 once finished), or -1 when the slot has none.
 * Any thread. */
double cs_backend_progress(const cs_backend *b, int slot);

/* Estimated seconds until the slot's running job ends, from its progress so far at its
 * average rate since it started (elapsed * (1 - p) / p): -1 while there is nothing to go on
 * (queued, under 1 s or under 2 % done, finished, or no job). Any thread. */
double cs_backend_eta(const cs_backend *b, int slot);

/* Nonzero while the slot's latest job is queued or running. Any thread. */
int cs_backend_busy(const cs_backend *b, int slot);

/* Cancels everything (queued jobs are dropped, running ones see their flags) and waits at most
 * timeout_ms (< 0: no limit) for the running ones to return. Returns 1 when no job runs any
 * more (cs_backend_free then returns at once), 0 when one is still running: a front end that is
 * quitting may then exit without cs_backend_free, and without freeing the datasets that job
 * borrows. Nothing is delivered afterwards. */
int cs_backend_shutdown(cs_backend *b, int timeout_ms);

/* How long a front end that is quitting gives its jobs to notice their flags (they poll every
 * few ms) before it exits without them: `q` must end the program within 0.5 s. */
#define CS_BACKEND_QUIT_WAIT_MS 100

/* Cancels everything, joins every worker (promptly: jobs poll their cancel flags every few ms),
 * frees undelivered jobs, retired datasets and the backend. NULL is a no-op. */
void cs_backend_free(cs_backend *b);

/* Frees a job through its kind (ops->free). NULL is a no-op. Any thread. */
void cs_job_free(cs_job *j);

/* For job kinds: allocates a zeroed job of `size` bytes (>= sizeof(cs_job)) with the given ops,
 * through the allocator below. NULL when out of memory. Free with cs_job_free. */
cs_job *cs_job_alloc(size_t size, const cs_job_ops *ops);

/* The backend's own allocations and the jobs' (cs_job_alloc, queue entries, the compat bin
 * counts) go through cs_backend_calloc. For tests: cs_backend_set_calloc makes them call fn
 * instead of calloc from now on; NULL restores calloc. fn may be called from any thread. */
void cs_backend_set_calloc(void *(*fn)(size_t count, size_t size));
void *cs_backend_calloc(size_t count, size_t size);

#endif
