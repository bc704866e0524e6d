/* The dashboard's view of the backend: loaded files and the latest result of every slot.
 *
 * Work goes out only as backend jobs (calscope/backend.h, calscope/jobs/); every result is the
 * finished cs_job — its request, the dataset it read and its result — owned here until a newer
 * one for the same slot replaces it. Each submission is stamped with the settings epoch (bumped by every settings change); a kept result whose epoch
 * is older than the current one is stale and drawn dimmed with a "stale" mark until its
 * replacement arrives. UI thread only. */
#ifndef CALSCOPE_TUI_MODEL_H
#define CALSCOPE_TUI_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "calscope/backend.h"
#include "calscope/jobs/methods.h"
#include "calscope/load.h"
#include "calscope/recal.h"
#include "tui/state.h"

#define TUI_SLOT_LOAD(f)    (f)
#define TUI_SLOT_METRICS(f) (TUI_MAX_FILES + (f))
#define TUI_SLOT_TOPK(f)    (2 * TUI_MAX_FILES + (f))
#define TUI_SLOT_COMPARE(f) (3 * TUI_MAX_FILES + (f))
#define TUI_SLOT_SIZE       (4 * TUI_MAX_FILES)
#define TUI_SLOT_BINS       (4 * TUI_MAX_FILES + 1)
#define TUI_SLOT_CLASS0     (4 * TUI_MAX_FILES + 2)
#define TUI_LIKERT_N        3   /* low / medium / high confidence (seed 002 §5.3) */
#define TUI_SLOT_LIKERT     63   /* one Likert job for the panel */
#define TUI_SLOT_CASES      62   /* the per-case job of the active file */
#define TUI_MAX_RECAL       4
#define TUI_SLOT_RECAL(i)   (64 + (i))   /* recalibration job i (state.recal[i]) */
#define TUI_SLOT_METHODS    68           /* the Compare view's methods table */
#define TUI_SLOT_COMPAT     69           /* the compat job of the active file */
#define TUI_MAX_CLASS_SLOTS (TUI_SLOT_CASES - TUI_SLOT_CLASS0)

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
} tui_file;

/* A recalibration of a loaded file (a "method" beside the files). */
typedef struct tui_recal {
    int method;                /* cs_recal_method; -1 = unused */
    size_t src;                /* the file it recalibrates */
    unsigned long seed;        /* fold seed it was fitted with */
    int state;                 /* 0 = not requested, 1 = fitting, 2 = ready, 3 = failed */
    cs_dataset *data;          /* owned once ready; released from the backend before freeing */
    cs_recal_info info;
    char error[1024];
} tui_recal;

/* What a slot holds. */
typedef struct tui_slot {
    cs_job *resp;              /* latest delivered job (its request and result), owned (NULL =
                                  none yet) */
    long resp_epoch;           /* epoch it was requested at */
    size_t resp_file;          /* file it was requested for */
    long sub_epoch;            /* epoch of the latest submission (-1 = never) */
    size_t sub_file;
    uint64_t sub_gen;
    int class_index;           /* class slots: which class */
    int sub_failed;            /* the latest submission was refused (out of memory): `failed`
                                  is the slot's result until the next submission */
    cs_job failed;             /* status and err of that refusal (no ops: no kind's result) */
} tui_slot;

typedef struct tui_model {
    cs_backend *backend;
    tui_file files[TUI_MAX_FILES];
    size_t n_files;
    tui_slot slots[CS_BACKEND_MAX_SLOTS];
    long epoch;                /* bumped on every settings change */
    size_t n_class_slots;      /* classes shown in the Classes view */
    tui_recal recal[TUI_MAX_RECAL];  /* state.recal[i] of state.active, when present */
    long methods_version;      /* bumped when a recalibration arrives or goes */
    long methods_sub_version;  /* version of the latest methods submission */
    /* The methods of the shown methods table (rows of TUI_SLOT_METHODS's response): files,
     * then recalibrations. method_file: the file, or for a recalibration the file it
     * recalibrates; method_recal: -1 for a file. sub_*: the latest submission's. */
    size_t method_file[CS_METHODS_JOB_MAX], sub_method_file[CS_METHODS_JOB_MAX];
    int method_recal[CS_METHODS_JOB_MAX], sub_method_recal[CS_METHODS_JOB_MAX];
    size_t n_methods, sub_n_methods;
} tui_model;

/* Starts loading every path (st->paths). Returns 0, or -1 with msg filled. */
int tui_model_init(tui_model *m, cs_backend *b, const tui_state *st, const cs_load_options *lo,
                   char *msg, size_t size);

/* Frees every result and dataset (the backend must already be freed or idle). */
void tui_model_free(tui_model *m);

/* Settings changed: later results are stamped with a new epoch; old ones become stale. */
void tui_model_invalidate(tui_model *m);

/* Submits what the current view needs and is not yet requested for this epoch. Returns the
 * number of requests submitted. */
int tui_model_submit(tui_model *m, tui_state *st);

/* Takes every delivered response from the backend. Returns TUI_REDRAW when anything arrived
 * (and updates st->n_classes when the active file finished loading). */
unsigned tui_model_collect(tui_model *m, tui_state *st);

/* The response of a slot, or NULL; *stale set when it belongs to an older epoch or is still
 * being recomputed. A refused submission is the slot's result too: an error, not stale. */
const cs_job *tui_model_result(const tui_model *m, int slot, int *stale);

/* Name of method i of the shown methods table ("digits_gnb.csv", "digits_gnb.csv+ts") into buf. */
void tui_model_method_name(const tui_model *m, size_t i, char *buf, size_t size);

/* Nonzero when any slot is queued or running; fills a short description and the progress of
 * the first busy one (loads first). */
int tui_model_busy(const tui_model *m, char *what, size_t size, double *progress);

#endif
