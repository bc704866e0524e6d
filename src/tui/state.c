/* Dashboard state: defaults and the command-line spellings of settings. UI thread only. */
#include "tui/state.h"

#include "calscope/follow.h"

#include "session/flags.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tui_state_init(tui_state *st)
{
    memset(st, 0, sizeof *st);
    /* The documented defaults (docs/flags.md), written here directly so the state needs
     * nothing but the header. */
    st->settings.lens = CS_LENS_TOP1;
    st->settings.topk = 1;
    st->settings.binning = CS_BIN_UNIFORM;
    st->settings.bins = 15;
    st->settings.gamma = 0.1;
    st->settings.sigma = 0.1;
    st->settings.distance = CS_DIST_TVD;
    st->settings.mixture = CS_MIX_KDE;
    st->view = TUI_VIEW_RELIABILITY;
    st->topk = 2;
    st->ci = 0;
    st->ci_on = 200;
    st->rece_overlay = 1;
    st->repeats = 20;
    st->verdict_metric = CS_METRIC_ECE;
    st->seed = 0;
    st->prompt.hist_pos = -1;
    st->cmp_col = 1;             /* the methods table focuses ECE */
    cs_load_options_default(&st->load);
    cs_follow_options_default(&st->follow_opts);
}

const char *tui_view_name(tui_view v)
{
    static const char *const names[TUI_VIEW_COUNT] = {
        "Reliability", "Top-k", "Variance", "Classes", "Compare", "Cases", "Trend"
    };
    return (unsigned)v < TUI_VIEW_COUNT ? names[v] : "?";
}

int tui_views_shown(const tui_state *st)
{
    return st->follow ? TUI_VIEW_COUNT : TUI_VIEW_TREND;
}

/* The flag table's spellings (session/flags.h), so the status line says what `:` prints. */
const char *tui_binning_spelling(cs_binning b)
{
    return ss_binning_name(b);
}

void tui_distance_spelling(const cs_settings *s, char *buf, size_t size)
{
    ss_distance_name(s, buf, size);
}

void tui_state_from_opts(tui_state *st, const ss_opts *o)
{
    st->settings = o->settings;
    st->load = o->load;
    st->load.split_column = NULL;         /* the dashboard has no held-out split */
    st->ascii = o->ascii;
    st->no_color = o->no_color;
    st->no_mouse = o->no_mouse;
    st->mixture_given = o->mixture_given;
    st->seg_unused = ss_seg_unused(o, 1, 0);
    st->rows_unused = ss_rows_unused(o, 1, 0);
    for (size_t f = 0; f < o->n_files && f < TUI_MAX_FILES; f++) st->paths[f] = o->files[f];
    st->n_files = o->n_files < TUI_MAX_FILES ? o->n_files : TUI_MAX_FILES;
    st->ci = o->ci_repeats;
    if (o->ci_repeats > 0) st->ci_on = o->ci_repeats;
    st->ci_method = o->ci_method;
    st->select_each = o->methods.select_each;
    if (o->methods.verdict_metric_given) st->verdict_metric = o->methods.verdict_metric;
    if (o->repeats) st->repeats = o->repeats;
    st->seed = (unsigned long)o->seed;
    st->threads = o->threads;
    if (st->settings.lens == CS_LENS_TOPK) st->topk = st->settings.topk;
    st->follow = o->follow;
    ss_follow_options(o, &st->follow_opts);
    if (st->follow) st->view = TUI_VIEW_TREND;   /* the run first; Left/Right step the epochs */
    if (st->settings.lens == CS_LENS_CLASS)
        st->klass = atoi(st->settings.lens_arg + (st->settings.lens_arg[0] == '#'));
}

void tui_state_message(tui_state *st, int is_error, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->message, sizeof st->message, fmt, ap);
    va_end(ap);
    st->message_is_error = is_error;
}

void tui_history_add(tui_state *st, const char *text)
{
    if (!text[0]) return;
    if (st->n_history > 0 && strcmp(st->history[st->n_history - 1], text) == 0) return;
    if (st->n_history == TUI_HISTORY) {
        memmove(st->history[0], st->history[1], sizeof st->history[0] * (TUI_HISTORY - 1));
        st->n_history--;
    }
    snprintf(st->history[st->n_history++], CS_SPEC_MAX, "%s", text);
}
