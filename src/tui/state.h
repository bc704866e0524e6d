/* Dashboard state: everything a key can change, and nothing about curses.
 *
 * Owned by the UI thread only. Handlers in actions.c change it and return dirty flags; the loop
 * in app.c turns the flags into backend requests and one redraw per pass. */
#ifndef CALSCOPE_TUI_STATE_H
#define CALSCOPE_TUI_STATE_H

#include <stddef.h>

#include "calscope/follow.h"
#include "calscope/load.h"
#include "calscope/metrics.h"
#include "calscope/recal.h"
#include "tui/scroll.h"

typedef enum tui_view {
    TUI_VIEW_RELIABILITY, TUI_VIEW_TOPK, TUI_VIEW_VARIANCE, TUI_VIEW_CLASSES,
    TUI_VIEW_COMPARE, TUI_VIEW_CASES, TUI_VIEW_TREND, TUI_VIEW_COUNT
} tui_view;

typedef enum tui_overlay {
    TUI_OVERLAY_NONE, TUI_OVERLAY_HELP, TUI_OVERLAY_CMDLINE,
    TUI_OVERLAY_PICKER          /* `t`: every recalibration method, to fit or remove */
} tui_overlay;

/* Dirty flags returned by handlers (HandlerResult in htop's words). */
enum {
    TUI_REDRAW    = 1u << 0,  /* draw the screen again */
    TUI_RELAYOUT  = 1u << 1,  /* recompute the layout (size or view changed) */
    TUI_RECOMPUTE = 1u << 2,  /* settings changed (the model notices by itself which results
                                 depend on them: tui_model_submit compares keys) */
    TUI_QUIT      = 1u << 3,
    TUI_PROMPT    = 1u << 4,  /* a prompt was opened (the loop routes keys to it) */
    TUI_RELOAD    = 1u << 5,  /* files must be (re)loaded */
    TUI_CURVES    = 1u << 6   /* only the variance curves need recomputing */
};

#define TUI_MAX_FILES 8

enum { TUI_CMP_FILES, TUI_CMP_TABLE, TUI_CMP_RANKS, TUI_CMP_COUNT };
#define TUI_HISTORY 32

/* What the prompt line is asking for. */
typedef enum tui_prompt_kind {
    TUI_PROMPT_NONE, TUI_PROMPT_SELECT, TUI_PROMPT_BINS, TUI_PROMPT_SEED, TUI_PROMPT_SIGMA
} tui_prompt_kind;

typedef struct tui_prompt {
    tui_prompt_kind kind;
    char text[CS_SPEC_MAX];
    size_t len, cursor;
    int hist_pos;               /* -1 = editing a fresh line, else index into history */
    char saved[CS_SPEC_MAX];    /* the fresh line while browsing history */
    int refused;                /* the first key refused for want of room since the text last
                                   changed (0: none): a run of refused keys (typed on, or a
                                   paste) names where the refusal began, not its last key */
} tui_prompt;

typedef struct tui_state {
    cs_settings settings;       /* the metric settings (lens, bins, sigma, selection...) */
    tui_view view;
    tui_overlay overlay;
    int help_page, help_pages;  /* `?` pages through the help when it needs more than one screen
                                   (help_pages is set by the drawing code) */
    int ascii, no_color;
    int mixture_given;         /* --mixture (refused once loaded when no file has id/tta) */
    const char *seg_unused;    /* a volume flag's message (ss_seg_unused, static text), shown
                                  and exit 2 once loaded when no file is a manifest; else NULL */
    const char *rows_unused;   /* --renormalize / --sum-tol's message (ss_rows_unused, static),
                                  exit 2 once loaded when no file has rows of probabilities */

    const char *paths[TUI_MAX_FILES]; /* argv strings, not owned */
    size_t n_files;
    size_t active;              /* index of the active file */

    size_t n_classes;           /* K of the active file (0 until loaded) */
    int klass;                  /* class index for the class:c lens and the Classes view */
    int topk;                   /* k used by the topk lens toggle */
    char group_arg[CS_SPEC_MAX];/* the --lens group: spec the dashboard started with, so `l`
                                   comes back to it ("" = none) */

    int rece_overlay;           /* draw the RECE-G smoothed curve on the reliability diagram */
    int smooth;                 /* Reliability view: relplot's smoothed curve instead of the bars */
    int ci;                     /* bootstrap repeats for intervals (0 = off) */
    int ci_on;                  /* what `i` turns intervals on with (--ci R, default 200) */
    int ci_method;              /* --ci-method: cs_ci_method of the intervals (0 = percentile) */
    int select_each;            /* --select-on each: the Compare view's methods keep their own
                                   selections (values only); default: the active file's */
    int verdict_metric;         /* --verdict-metric: the Compare view's verdict (default ECE) */
    int repeats;                /* variance curve repeats */
    unsigned long seed;
    int threads;                /* 0 = backend default */
    cs_load_options load;       /* --sum-tol, --renormalize, ... as given (the `:` line repeats them) */

    /* Methods (Compare view): recalibrations of the active file shown beside the loaded files,
     * in the order added (cs_recal_method values, each at most once); the active file is the
     * reference. The methods table scrolls, so every method may be shown at once. */
    int recal[CS_RECAL_COUNT];
    int n_recal;
    int picker_row;             /* the method picker's focused row (a cs_recal_method) */
    int cmp_panel;              /* Compare view panel: TUI_CMP_FILES (diagrams), _TABLE, _RANKS */
    int cmp_col;                /* focused column of the methods table (0..9, calscope/methods.h) */
    /* Compat panel (Reliability view): every library's numbers beside calscope's */
    int compat;                 /* panel shown */
    int compat_lib;             /* cs_compat_lib whose moved samples are listed and marked */
    tui_scroll scroll;          /* positions of the tables longer than their panel (scroll.h) */
    int no_mouse;               /* --no-mouse: leave the mouse to the terminal */

    /* --follow: a training run's folder; each complete file is the next epoch (tui/trend.h).
     * The active file is the selected epoch, loaded on demand; the others keep summaries. */
    const char *follow;         /* argv string, NULL = not following (no Trend tab) */
    cs_follow_options follow_opts; /* --order, --settle, --labels (ss_follow_options) */
    size_t epoch;               /* the selected epoch (0-based; Left/Right step it) */
    size_t n_epochs;            /* epochs known (set by the follow each pass) */
    size_t epochs_seen;         /* epochs known when the user last stepped: the rest are "new" */
    int trend_metric;           /* the Trend chart's metric: index into tui_trend_metrics */
    int trend_compare;          /* `a`: the files are the first, selected and last epochs
                                   (each once), for the Compare view; the selected is active */

    tui_prompt prompt;
    char history[TUI_HISTORY][CS_SPEC_MAX]; /* selection history, oldest first */
    int n_history;
    char message[CS_SPEC_MAX * 2];  /* one-off message for the status area (errors, notes) */
    int message_is_error;
} tui_state;

/* Defaults: the documented settings (docs/flags.md), Reliability view, ci 0 (off), repeats 20,
 * seed 0. */
void tui_state_init(tui_state *st);

/* Short name of a view ("Reliability", ...). */
const char *tui_view_name(tui_view v);
/* How many views have a tab: the Trend view's only while following a run. */
int tui_views_shown(const tui_state *st);

/* Spellings of the binning and the distance (the flag table's, session/flags.h). */
const char *tui_binning_spelling(cs_binning b);
void tui_distance_spelling(const cs_settings *s, char *buf, size_t size);

struct ss_opts;
/* The dashboard's start state from its parsed argv (session/flags.h): settings, files, loading
 * options, --ci/--ci-method/--repeats/--seed/--threads, --ascii/--no-color. */
void tui_state_from_opts(tui_state *st, const struct ss_opts *o);

/* Sets st->message (printf-style). */
void tui_state_message(tui_state *st, int is_error, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Appends a selection to the history (skips empty and repeats of the last one). */
void tui_history_add(tui_state *st, const char *text);

#endif
