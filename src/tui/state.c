/* Dashboard state: defaults and the command-line spellings of settings. UI thread only. */
#include "tui/state.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tui_state_init(tui_state *st)
{
    memset(st, 0, sizeof *st);
    /* The SPEC defaults, written here directly so the state needs nothing but the header. */
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
    st->seed = 0;
    st->prompt.hist_pos = -1;
    st->cmp_col = 1;             /* the methods table focuses ECE */
}

const char *tui_view_name(tui_view v)
{
    static const char *const names[TUI_VIEW_COUNT] = {
        "Reliability", "Top-k", "Variance", "Classes", "Compare", "Cases"
    };
    return (unsigned)v < TUI_VIEW_COUNT ? names[v] : "?";
}

void tui_fmt_double(char *buf, size_t size, double v)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) return;
    }
}


const char *tui_binning_spelling(cs_binning b)
{
    switch (b) {
    case CS_BIN_UNIFORM: return "uniform";
    case CS_BIN_MASS: return "mass";
    case CS_BIN_KDTREE: return "kdtree";
    }
    return "?";
}

void tui_distance_spelling(const cs_settings *s, char *buf, size_t size)
{
    switch (s->distance) {
    case CS_DIST_TVD: snprintf(buf, size, "tvd"); break;
    case CS_DIST_L2: snprintf(buf, size, "l2"); break;
    case CS_DIST_MAX: snprintf(buf, size, "max"); break;
    case CS_DIST_INTERVAL:
    {
        char lo[32], hi[32];
        tui_fmt_double(lo, sizeof lo, s->interval_lo);
        tui_fmt_double(hi, sizeof hi, s->interval_hi);
        snprintf(buf, size, "interval:%s,%s", lo, hi);
    }
        break;
    default: snprintf(buf, size, "?"); break;
    }
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
