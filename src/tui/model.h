/* The dashboard's view of the backend: loaded files and, for every place on the screen, the
 * latest result and what it was computed for.
 *
 * A place is one result a view shows (the metrics of file 2, the size curve, class 3's row...);
 * it is also the backend slot its jobs run on. Every pass of the loop, tui_model_submit works
 * out for each place the view needs its key — the datasets it reads and the settings that matter
 * to that result — and submits a job only when no result or pending job has that key: a settings
 * change re-runs only what depends on it, and going back to an earlier setting shows the kept
 * result at once. A result is the finished cs_job itself (calscope/jobs/): its request, the
 * dataset it read and its result, so a view draws a result with the dataset it was computed on
 * and never indexes one file's arrays with another's result; a kept result whose key differs
 * from the wanted one is stale, drawn dimmed with a "stale" mark until its replacement arrives.
 * Places the view no longer shows have their pending jobs cancelled (leaving the Variance view
 * stops its curves). UI thread only. */
#ifndef CALSCOPE_TUI_MODEL_H
#define CALSCOPE_TUI_MODEL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "calscope/backend.h"
#include "calscope/jobs/methods.h"
#include "calscope/load.h"
#include "calscope/recal.h"
#include "tui/state.h"

#define TUI_LIKERT_N        3   /* low / medium / high confidence (Kirchenbauer et al. 2022, §5.3) */
#define TUI_MAX_RECAL       CS_RECAL_COUNT   /* one place per method: recal[method] */
#define TUI_MAX_CLASS_SLOTS 28  /* classes shown in the Classes view */

/* The places, laid out by the compiler (each is a backend slot). */
enum {
    TUI_PLACE_LOAD0 = 0,                                     /* loading file f */
    TUI_PLACE_METRICS0 = TUI_PLACE_LOAD0 + TUI_MAX_FILES,    /* metrics of file f */
    TUI_PLACE_TOPK0 = TUI_PLACE_METRICS0 + TUI_MAX_FILES,    /* top-k bars of file f */
    TUI_PLACE_SIZE = TUI_PLACE_TOPK0 + TUI_MAX_FILES,        /* the size curve */
    TUI_PLACE_BINS,                                          /* the bins curve */
    TUI_PLACE_CLASS0,                                        /* class c's row */
    TUI_PLACE_LIKERT = TUI_PLACE_CLASS0 + TUI_MAX_CLASS_SLOTS,
    TUI_PLACE_CASES,                                         /* per-case metrics */
    TUI_PLACE_RECAL0,                                        /* recalibration i */
    TUI_PLACE_METHODS = TUI_PLACE_RECAL0 + TUI_MAX_RECAL,    /* the methods table */
    TUI_PLACE_COMPAT,                                        /* the compat panel */
    TUI_PLACE_TREND,                                         /* --follow: the next epoch's
                                                                summary (tui/trend.h) */
    TUI_PLACE_COUNT
};
_Static_assert(TUI_PLACE_COUNT <= CS_BACKEND_MAX_SLOTS, "more places than backend slots");
_Static_assert(TUI_MAX_FILES + TUI_MAX_RECAL <= CS_METHODS_JOB_MAX, "a methods job takes every file and method");

#define TUI_SLOT_LOAD(f)    (TUI_PLACE_LOAD0 + (f))
#define TUI_SLOT_METRICS(f) (TUI_PLACE_METRICS0 + (f))
#define TUI_SLOT_TOPK(f)    (TUI_PLACE_TOPK0 + (f))
#define TUI_SLOT_SIZE       TUI_PLACE_SIZE
#define TUI_SLOT_BINS       TUI_PLACE_BINS
#define TUI_SLOT_CLASS0     TUI_PLACE_CLASS0
#define TUI_SLOT_LIKERT     TUI_PLACE_LIKERT
#define TUI_SLOT_CASES      TUI_PLACE_CASES
#define TUI_SLOT_RECAL(i)   (TUI_PLACE_RECAL0 + (i))
#define TUI_SLOT_METHODS    TUI_PLACE_METHODS
#define TUI_SLOT_COMPAT     TUI_PLACE_COMPAT
#define TUI_SLOT_TREND      TUI_PLACE_TREND

/* Cut points of the Likert panel: [0, .33) [.33, .66) [.66, 1]. */
extern const double tui_likert_cuts[TUI_LIKERT_N + 1];

typedef enum tui_load_state { TUI_LOADING, TUI_LOADED, TUI_FAILED } tui_load_state;

typedef struct tui_file {
    const char *path;
    char name[256];            /* base name of path as shown: escaped (calscope/text.h) */
    tui_load_state state;
    cs_dataset *data;          /* owned once loaded */
    cs_load_summary summary;   /* owned */
    char error[1024];          /* "FILE:LINE:COL: reason" when FAILED */
    /* A manifest or folder pair being reduced: the loader's latest dataset of the cases done so
     * far (cs_load_options.partial, put by the loading worker, taken by the UI thread under
     * mu), and whether `data` is such a partial dataset (shown LOADED while the load runs). */
    pthread_mutex_t mu;
    cs_dataset *so_far;
    int partial;
    int mu_ready;              /* mu is initialised (it stays so when the file is dropped: a
                                  cancelled loader may still put a partial dataset) */
} tui_file;

/* A recalibration of a loaded file (a "method" beside the files). */
typedef struct tui_recal {
    int method;                /* cs_recal_method; -1 = unused */
    size_t src;                /* the file it recalibrates */
    unsigned long seed;        /* fold seed it was fitted with */
    int state;                 /* 0 = not requested, 1 = fitting, 2 = ready, 3 = failed */
    double fit_seconds;        /* wall time of the fit (cs_recal_job.fit_seconds) once ready */
    cs_dataset *data;          /* owned once ready; released from the backend before freeing */
    cs_recal_info info;
    char error[1024];
} tui_recal;

/* What a place's result depends on: the datasets it reads, the settings and the numbers of
 * its request (repeats, seed, class...). Built zeroed and compared whole. */
#define TUI_KEY_DATA CS_METHODS_JOB_MAX
typedef struct tui_key {
    const void *data[TUI_KEY_DATA];
    cs_settings settings;
    long n[6];
} tui_key;

/* Results a place keeps besides the one it shows, for keys the screen may come back to (the
 * lens cycles through six values: going round once more finds each of them kept). */
#define TUI_KEPT 8

/* What a place holds. */
typedef struct tui_place {
    cs_job *resp;              /* latest delivered job (request, dataset, result), owned, or NULL */
    tui_key resp_key;          /* what resp was computed for */
    cs_job *kept[TUI_KEPT];    /* earlier results for other keys, most recently shown first;
                                  owned; a request for one of their keys is served from here */
    tui_key kept_key[TUI_KEPT];
    int n_kept;
    tui_key want;              /* what the screen needs now (set by every tui_model_submit) */
    int wanted;                /* the current view shows this place */
    tui_key sub_key;           /* the latest submission's key (valid when has_sub) */
    int has_sub;
    int pending;               /* the latest submission is queued, running, or finished and not
                                  yet collected: the status line says busy until it arrives */
    uint64_t sub_gen;
    int sub_failed;            /* the latest submission was refused (out of memory): `failed`
                                  is the place's result until its key changes */
    cs_job failed;             /* status and err of that refusal (no ops: no kind's result) */
} tui_place;

typedef struct tui_model {
    cs_backend *backend;
    tui_file files[TUI_MAX_FILES];
    size_t n_files;
    tui_place places[TUI_PLACE_COUNT];
    size_t n_class_slots;      /* classes shown in the Classes view */
    tui_recal recal[TUI_MAX_RECAL];  /* recal[method]: that method of state.active, when
                                        state.recal lists it */
    long methods_version;      /* bumped when a recalibration arrives or goes */
    /* The methods of the shown methods table (rows of TUI_SLOT_METHODS's response): files,
     * then recalibrations. method_file: the file, or for a recalibration the file it
     * recalibrates; method_recal: -1 for a file. sub_*: the latest submission's. */
    size_t method_file[CS_METHODS_JOB_MAX], sub_method_file[CS_METHODS_JOB_MAX];
    int method_recal[CS_METHODS_JOB_MAX], sub_method_recal[CS_METHODS_JOB_MAX];
    size_t n_methods, sub_n_methods;
    /* TUI_SLOT_TREND's jobs go to their owner (tui/trend.h), which takes r. */
    void (*trend_collect)(void *ctx, cs_job *r);
    void *trend_ctx;
} tui_model;

/* Starts loading every path (st->paths). Returns 0, or -1 with msg filled. */
int tui_model_init(tui_model *m, cs_backend *b, const tui_state *st, const cs_load_options *lo,
                   char *msg, size_t size);

/* Makes file f (f <= m->n_files: an existing one, or one more) the file at `path` (borrowed
 * until the model is freed or the file replaced again): the old dataset and every result
 * read from it go (the backend frees the dataset once no job reads it) and the new file loads
 * with options lo. Used by --follow, whose selected epoch is file 0. Returns 0, or -1 with the
 * reason in st->message (the file then shows the error). UI thread. */
int tui_model_replace_file(tui_model *m, tui_state *st, size_t f, const char *path, const cs_load_options *lo);

/* Makes file f (f <= m->n_files) the file at `path` (borrowed as above) that is not loaded: it
 * shows `message` (copied) as its error in every view, as a file that failed to load. Used by
 * --follow for an epoch whose name now names another file. UI thread. */
void tui_model_fail_file(tui_model *m, size_t f, const char *path, const char *message);

/* Keeps files 0..n-1 only (n <= m->n_files): the others' loads are cancelled and their datasets
 * and results go, as tui_model_replace_file drops a file's. Used by --follow when the Compare
 * of the first, selected and last epochs closes or holds fewer epochs. UI thread. */
void tui_model_keep_files(tui_model *m, size_t n);

/* Frees every result and dataset (the backend must already be freed or idle). */
void tui_model_free(tui_model *m);

/* Works out what the current view needs (every place's key), submits what no result or pending
 * job already has, and cancels the pending jobs of places the view no longer shows. Call it
 * before drawing, every pass of the loop. Returns the number of jobs submitted. */
int tui_model_submit(tui_model *m, tui_state *st);

/* Takes every delivered response from the backend. Returns TUI_REDRAW when anything arrived
 * (and updates st->n_classes when the active file finished loading). */
unsigned tui_model_collect(tui_model *m, tui_state *st);
/* Shows the cases reduced so far of every manifest still loading (the loader's partial
 * datasets): the file's data becomes the newest one, the one it replaces is retired to the
 * backend. Returns TUI_REDRAW when something changed. UI thread. */
unsigned tui_model_take_partials(tui_model *m, tui_state *st);

/* The result of a place (the finished job: its request, the dataset it read and its result),
 * or NULL; *stale set when it was computed for another key than the one the screen now wants.
 * A refused submission is the place's result too: an error, not stale. Borrowed until the next
 * tui_model_collect. */
const cs_job *tui_model_result(const tui_model *m, int place, int *stale);

/* How many methods (loaded files, ready recalibrations) the methods table compares, or -1 while
 * it waits for a file to load or a recalibration to fit: below 2 there is no table to wait for.
 * The rule tui_model_submit follows. UI thread only. */
int tui_model_methods_count(const tui_model *m, const tui_state *st);

/* Name of method i of the shown methods table ("digits_gnb.csv", "digits_gnb.csv+ts") into buf. */
void tui_model_method_name(const tui_model *m, size_t i, char *buf, size_t size);

/* Nonzero while any submission is pending (queued, running, or finished and not yet collected:
 * never "ready" beside a result still to come); fills a short description and the progress of
 * the first pending one (loads first). */
int tui_model_busy(const tui_model *m, char *what, size_t size, double *progress);

#endif
