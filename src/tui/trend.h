/* The dashboard's --follow: a training run's folder watched by the follow engine
 * (calscope/follow.h), each complete file the next epoch. Every epoch keeps its summary only
 * (calscope/trend.h: metrics, intervals, bins), measured one at a time on TUI_SLOT_TREND (a
 * load job, then a metrics job; the rows are freed once measured); the selected epoch is the
 * model's active file, loaded on demand, so the other views show it — the only file, or with
 * st->trend_compare one of the first, selected and last epochs (the Compare view's files). The follow is scanned from the
 * dashboard's loop (no thread of its own). UI thread only. */
#ifndef CALSCOPE_TUI_TREND_H
#define CALSCOPE_TUI_TREND_H

#include <stddef.h>

#include "calscope/follow.h"
#include "calscope/load.h"
#include "calscope/metrics.h"
#include "calscope/trend.h"
#include "tui/model.h"
#include "tui/state.h"

/* The metrics of the Trend table, in its column order; `v` picks the chart's. */
#define TUI_TREND_METRICS 5

/* tui_trend.by: an epoch bound to its file, or whose file changed with no new epoch yet. */
#define TUI_TREND_BOUND (-1L)
#define TUI_TREND_CHANGED (-2L)
extern const int tui_trend_metrics[TUI_TREND_METRICS];

typedef struct tui_trend {
    cs_follow *f;              /* owned */
    const char **paths;        /* the epochs in order: the follow's strings (it owns them); a
                                  file renamed over a taken name is a later epoch of the same
                                  string */
    cs_follow_id *ids;         /* the file each epoch was taken from (owned; n of them) */
    long *by;                  /* the epoch whose file now has epoch i's name (owned), or
                                  TUI_TREND_BOUND (still its file), TUI_TREND_CHANGED (changed,
                                  no new epoch yet) */
    size_t n, cap;
    cs_trend trend;            /* summaries of paths[0 .. trend.n-1] under `settings` */
    cs_settings settings;      /* what the summaries were measured with */
    int ci, ci_method;
    unsigned long seed;
    cs_dataset *data;          /* the epoch being measured (owned), or NULL */
    int stage;                 /* 0 idle, 1 loading paths[trend.n], 2 measuring it */
    long shown[3];             /* the epochs the model's files hold (-1: none): the selected
                                  one, or the first, selected and last */
    long shown_by[3];          /* by[] of each when it was put there */
    size_t n_shown;
    long removed;              /* an epoch taken back by cs_follow_retry (still being written),
                                  for the next tui_trend_step to renumber the selection; -1 */
} tui_trend;

/* Opens the follow of st->follow and routes TUI_SLOT_TREND's jobs to t. Returns 0, or -1 with
 * msg filled ("DIR: cannot open: ..."). */
int tui_trend_open(tui_trend *t, tui_model *m, const tui_state *st, char *msg, size_t size);

/* The descriptor to poll for news (-1: polling) and how long the loop may sleep (ms) before
 * the follow must be scanned again (the polling interval, a CSV settling). */
int tui_trend_fd(const tui_trend *t);
int tui_trend_wait_ms(const tui_trend *t);

/* One pass of the loop: takes the complete files (new epochs: the view does not move, except
 * to the latest of the files there at the start), keeps st->n_epochs, loads the selected epoch
 * (and with st->trend_compare the first and last) into the model's files when they changed, and measures the next epoch without a summary (all
 * again when the settings changed). Returns dirty flags. */
unsigned tui_trend_step(tui_trend *t, tui_model *m, tui_state *st);

/* The load options of one epoch: --labels only for an .npy (a CSV has its own labels). */
cs_load_options tui_trend_load_options(const tui_state *st, const char *path);

/* Why epoch i cannot be shown or measured: its name now names another file than the one it
 * was taken from (the follow's rule, cs_follow_same_file; checked on disk when `look`, else by
 * what is known). Fills msg ("epoch_1.csv was replaced after epoch 1 was taken (the new file is
 * epoch 5)") and returns 1; 0 when it still names its file. */
int tui_trend_unbound(tui_trend *t, size_t i, int look, char *msg, size_t size);

/* Frees what t holds; call after the backend is shut down (it frees t's dataset itself). */
void tui_trend_close(tui_trend *t);

#endif
