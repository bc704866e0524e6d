/* calscope engine: the threaded backend (SPEC §3–4; STYLE item 5, after redis src/bio.c).
 *
 * A pool of worker threads runs requests and hands back responses; the front end never blocks.
 *
 *   UI thread                                   worker threads
 *   ---------                                   --------------
 *   b = cs_backend_new(0, &err)
 *   gen = cs_backend_submit(b, &req)  --queue-->  take the oldest queued request, run it,
 *                                                 poll its cancel flag, publish progress
 *   poll({cs_backend_wake_fd(b), stdin})  <--1 byte per completion--  push the response
 *   cs_backend_drain_wake(b)
 *   while ((r = cs_backend_poll(b))) { use r; cs_response_free(r); }
 *   cs_backend_free(b)                            all workers cancelled and joined
 *
 * Slots and generations. Every request names a slot (a view, e.g. "table of file 2", "size
 * curve"), 0 .. CS_BACKEND_MAX_SLOTS-1. cs_backend_submit gives it a generation number, unique
 * and increasing across the backend. A newer request on a slot supersedes the older one: if the
 * older one is still queued it is dropped at once, if it is running its cancel flag is raised and
 * the worker stops at its next poll (every few ms). A superseded request's response — cancelled or
 * finished anyway — is freed by the backend and never returned by cs_backend_poll, so a poll
 * only returns responses whose generation is the latest of their slot at the moment of the poll.
 * The UI may still call cs_backend_is_current later (e.g. after submitting again) to check.
 *
 * Ownership. cs_backend_submit copies the request (settings, options and the path string); the
 * datasets it points to are borrowed: they must stay alive until the request is finished — call
 * cs_backend_release_dataset before freeing a dataset the backend may be using. A response from
 * cs_backend_poll belongs to the caller, including everything it points to (a loaded dataset,
 * load summary, curve, bins...): free it with cs_response_free, or take members first and set
 * them to NULL.
 *
 * Threads. Every cs_backend_* call except cs_backend_progress and cs_backend_is_current must come
 * from one thread (the UI thread, or the test). cs_backend_progress / cs_backend_busy only read
 * atomics and may be called from anywhere. Workers never touch the UI; they block async signals
 * (SIGINT, SIGWINCH, ... are left to the UI thread). A request's computation may itself use
 * `threads` helper threads (cs_run); results do not depend on that count.
 *
 * The wake-up fd is the read end of a non-blocking pipe: one byte is written per response queued
 * for delivery. It is level-triggered: drain it (cs_backend_drain_wake) then call cs_backend_poll
 * until NULL. Spurious wake-ups (a response that was superseded meanwhile) are harmless. */
#ifndef CALSCOPE_BACKEND_H
#define CALSCOPE_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "calscope/cases.h"
#include "calscope/compat.h"
#include "calscope/curves.h"
#include "calscope/dataset.h"
#include "calscope/error.h"
#include "calscope/likert.h"
#include "calscope/load.h"
#include "calscope/methods.h"
#include "calscope/metrics.h"
#include "calscope/recal.h"

#define CS_BACKEND_MAX_SLOTS 80
#define CS_BACKEND_MAX_METHODS 16
#define CS_BACKEND_MAX_TOPK 32

typedef enum cs_job_kind {
    CS_JOB_LOAD,        /* cs_load_file(path, load) -> response.dataset + response.summary */
    CS_JOB_METRICS,     /* cs_prepare + cs_evaluate(want) on data -> response.result;
                           with ci_repeats > 0 also response.ci */
    CS_JOB_SIZE_CURVE,  /* cs_size_curve(data, settings, curve) -> response.curve */
    CS_JOB_BINS_CURVE,  /* cs_bins_curve(data, settings, curve) -> response.curve */
    CS_JOB_TOPK,        /* top-k ECE bars for topk_k[] -> response.topk_value[] */
    CS_JOB_COMPARE,     /* cs_compare_run(data, data_b, ...) -> response.compare */
    CS_JOB_SLEEP,       /* for tests and demos: spin sleep_ms polling cancel, deliver nothing else */
    CS_JOB_CASES,       /* cs_case_metrics_compute(data, settings) -> response.cases (cancellable
                           between cases) */
    CS_JOB_LIKERT       /* cs_likert_compute(data, settings, likert_cuts) -> response.likert; the
                           engine takes no cancel flag, so a superseded one finishes and is
                           dropped (like TOPK) */,
    CS_JOB_RECAL,       /* cs_recal_apply(data, recal, recal_opts) -> response.dataset (owned,
                           prepared, "FILE+ts") + response.recal_info; not cancellable inside
                           the fit (milliseconds): a superseded one finishes and is dropped */
    CS_JOB_METHODS,     /* cs_methods_run(methods[0..n_methods), settings, methods_opts)
                           -> response.methods; `data` must be set too (to methods[0]): it
                           names the dataset the slot's result belongs to */
    CS_JOB_COMPAT       /* cs_compat_run(data, settings, CS_COMPAT_ALL_MASK) -> response.compat,
                           plus response.compat_bin_moved: per library and calscope bin (top1
                           uniform only) the moved samples that calscope puts in that bin */
} cs_job_kind;

/* A full snapshot of what to compute. Zero-initialise, then fill what the kind needs. */
typedef struct cs_request {
    cs_job_kind kind;
    int slot;                    /* 0 .. CS_BACKEND_MAX_SLOTS-1 */
    const cs_dataset *data;      /* borrowed (not for LOAD) */
    const cs_dataset *data_b;    /* COMPARE: the second file */
    const char *path;            /* LOAD: copied by cs_backend_submit */
    cs_load_options load;        /* LOAD: progress/progress_ctx/cancel are replaced by the backend */
    cs_settings settings;        /* METRICS, curves, TOPK, COMPARE */
    unsigned want;               /* METRICS: CS_WANT_* (0 = CS_WANT_ALL) */
    unsigned metrics;            /* CI / COMPARE metric mask (0 = CS_METRICS_DEFAULT) */
    int ci_repeats;              /* METRICS: bootstrap CI resamples, 0 = none */
    int ci_method;               /* METRICS: the intervals' cs_ci_method (0 = percentile) */
    int compare_repeats;         /* COMPARE: resamples (0 = 1000) */
    uint64_t seed;               /* CI / COMPARE seed (curves use curve.seed) */
    cs_curve_options curve;      /* SIZE_CURVE / BINS_CURVE */
    int topk_k[CS_BACKEND_MAX_TOPK]; /* TOPK: the k values */
    size_t n_topk;
    int threads;                 /* helper threads for this request's computation; 0 = the pool
                                    size divided by the jobs running when it starts (results are
                                    identical for any value) */
    unsigned sleep_ms;           /* SLEEP */
    double likert_cuts[CS_LIKERT_MAX + 1]; /* LIKERT: the cut points (copied) */
    size_t n_likert_cuts;        /* LIKERT: 0 = cs_likert_default_cuts */
    int recal;                   /* RECAL: cs_recal_method */
    cs_recal_options recal_opts; /* RECAL (fit_mask must be NULL: it is not copied) */
    const cs_dataset *methods[CS_BACKEND_MAX_METHODS]; /* METHODS: borrowed, like data */
    size_t n_methods;
    cs_methods_options methods_opts; /* METHODS */
} cs_request;

/* A finished request. Owned by the caller of cs_backend_poll; free with cs_response_free. */
typedef struct cs_response {
    cs_job_kind kind;
    int slot;
    uint64_t generation;
    cs_status status;            /* CS_OK, or the error of the job (err has the message) */
    cs_error err;
    double seconds;              /* wall time the job ran */
    const cs_dataset *data;      /* the request's data pointer (borrowed, for the UI's bookkeeping) */
    char *path;                  /* LOAD: the path (owned) */
    cs_dataset *dataset;         /* LOAD: owned, prepared, or NULL on error */
    cs_load_summary summary;     /* LOAD: owned (also filled on rejection) */
    cs_result result;            /* METRICS: owned bins */
    int has_ci;
    cs_ci ci;                    /* METRICS with ci_repeats > 0 */
    cs_curve *curve;             /* SIZE_CURVE / BINS_CURVE: owned */
    cs_compare compare;          /* COMPARE */
    size_t n_topk;               /* TOPK */
    int topk_k[CS_BACKEND_MAX_TOPK];
    double topk_value[CS_BACKEND_MAX_TOPK]; /* ECE of the top-k lens (settings otherwise kept) */
    cs_case_metrics cases;       /* CASES: owned arrays (freed by cs_response_free) */
    cs_likert likert;            /* LIKERT: plain data */
    cs_recal_info recal_info;    /* RECAL: plain data (response.dataset holds the result) */
    cs_methods methods;          /* METHODS: owned (freed by cs_response_free) */
    cs_compat_report compat;     /* COMPAT: owned */
    uint32_t *compat_bin_moved;  /* COMPAT: owned, CS_COMPAT_COUNT x compat.bins, or NULL */
} cs_response;

typedef struct cs_backend cs_backend;

/* Starts `workers` threads (<= 0: the online core count). Returns NULL with err on failure. */
cs_backend *cs_backend_new(int workers, cs_error *err);

/* Number of worker threads. */
int cs_backend_workers(const cs_backend *b);

/* Queues a copy of *req and returns its generation (> 0), superseding the slot's older request.
 * Returns 0 with err set (CS_EUSAGE: bad slot or kind, CS_ENOMEM) when nothing was queued. */
uint64_t cs_backend_submit(cs_backend *b, const cs_request *req, cs_error *err);

/* Supersedes the slot's request without a new one: nothing more is delivered for it. */
void cs_backend_cancel(cs_backend *b, int slot);

/* Cancels every request that uses dataset d and waits until none runs; afterwards d may be freed.
 * Their responses are not delivered (nor those already finished but not yet polled). */
void cs_backend_release_dataset(cs_backend *b, const cs_dataset *d);

/* Read end of the wake-up pipe (non-blocking): poll it for POLLIN together with stdin. */
int cs_backend_wake_fd(const cs_backend *b);

/* Reads and discards every pending wake-up byte. */
void cs_backend_drain_wake(cs_backend *b);

/* Next current response in completion order, or NULL when none is waiting. Ownership moves to
 * the caller. */
cs_response *cs_backend_poll(cs_backend *b);

/* Blocks until a response is waiting or timeout_ms passes (< 0: no limit); then like
 * cs_backend_poll. For headless use and tests. */
cs_response *cs_backend_wait(cs_backend *b, int timeout_ms);

/* Nonzero while r's generation is still the latest submitted on its slot. Any thread. */
int cs_backend_is_current(const cs_backend *b, const cs_response *r);

/* Progress 0..1 of the slot's latest request (1 once finished), or -1 when the slot has none.
 * Any thread. */
double cs_backend_progress(const cs_backend *b, int slot);

/* Nonzero while the slot's latest request is queued or running. Any thread. */
int cs_backend_busy(const cs_backend *b, int slot);

/* Cancels everything, joins every worker (promptly: jobs poll their cancel flags every few ms),
 * frees undelivered responses and the backend. NULL is a no-op. */
void cs_backend_free(cs_backend *b);

/* For tests: the backend's own allocations (a request's queue entry and response, the compat
 * bin counts; not the engine's computations, which report CS_ENOMEM themselves) call fn instead
 * of calloc from now on; NULL restores calloc. fn may be called from any thread. */
void cs_backend_set_calloc(void *(*fn)(size_t count, size_t size));

/* Frees a response and everything it owns. NULL is a no-op. */
void cs_response_free(cs_response *r);

#endif
