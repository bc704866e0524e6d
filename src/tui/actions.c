/* The action table (see actions.h) and its handlers. Handlers only change tui_state and return
 * dirty flags; the loop decides what to recompute and draws once. UI thread only. */
#include "tui/actions.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calscope/compat.h"
#include "calscope/methods.h"
#include "calscope/recal.h"
#include "session/flags.h"
#include "tui/trend.h"
#include "tui/tui_curses.h"   /* KEY_* codes only */

#define CTRL(c) ((c) & 0x1f)

static tui_select_check_fn select_check;
static void *select_check_ctx;

void tui_actions_set_select_check(tui_select_check_fn fn, void *ctx)
{
    select_check = fn;
    select_check_ctx = ctx;
}

/* Ladders for the stepped settings: literals, so the command line prints the exact double. */
static const double sigma_ladder[] = { 0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5 };
static const double gamma_ladder[] = { 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 1 };
static const int repeat_ladder[] = { 5, 10, 20, 50, 100, 200, 500, 1000, 2000 };
#define LADDER_N(a) (sizeof(a) / sizeof((a)[0]))

enum { BINS_MIN = 1, BINS_MAX = 1000 };

/* The next rung of a ladder above (up) or below cur; returns 0 when there is none. A value off
 * the ladder (typed on the command line) steps to its neighbour. */
static int ladder_step(const double *l, size_t n, double cur, int up, double *out)
{
    for (size_t k = 0; k < n; k++) {
        size_t i = up ? k : n - 1 - k;
        if (up ? l[i] > cur : l[i] < cur) { *out = l[i]; return 1; }
    }
    return 0;
}

/* ---- handlers ---------------------------------------------------------------------------- */

static unsigned h_view(tui_state *st, int key)
{
    tui_view v = (tui_view)(key - '1');
    if (v == TUI_VIEW_TREND && !st->follow) {
        tui_state_message(st, 0, "7 is the Trend view of a followed run (calscope --follow DIR)");
        return TUI_REDRAW | TUI_RELAYOUT;
    }
    if ((unsigned)v >= TUI_VIEW_COUNT || v == st->view) return 0;
    st->view = v;
    st->overlay = TUI_OVERLAY_NONE;
    return TUI_REDRAW | TUI_RELAYOUT | TUI_RECOMPUTE;
}

static unsigned h_view_cycle(tui_state *st, int key)
{
    int n = tui_views_shown(st);
    int step = key == KEY_BTAB ? n - 1 : 1;
    st->view = (tui_view)((st->view + step) % n);
    st->overlay = TUI_OVERLAY_NONE;
    return TUI_REDRAW | TUI_RELAYOUT | TUI_RECOMPUTE;
}

/* `#N` names the N-th column whatever the class names (engine/classes.h) */
static void set_class_arg(tui_state *st)
{
    snprintf(st->settings.lens_arg, sizeof st->settings.lens_arg, "#%d", st->klass);
}

/* l: top1 > topk > class > classwise > full (> the --lens group: it started with) > top1 */
static unsigned h_lens(tui_state *st, int key)
{
    (void)key;
    cs_settings *s = &st->settings;
    switch (s->lens) {
    case CS_LENS_TOP1: s->lens = CS_LENS_TOPK; s->topk = st->topk; break;
    case CS_LENS_TOPK: s->lens = CS_LENS_CLASS; set_class_arg(st); break;
    case CS_LENS_CLASS: s->lens = CS_LENS_CLASSWISE; s->lens_arg[0] = 0; break;
    case CS_LENS_CLASSWISE: s->lens = CS_LENS_FULL; break;
    case CS_LENS_FULL:
        if (st->group_arg[0]) {
            s->lens = CS_LENS_GROUP;
            snprintf(s->lens_arg, sizeof s->lens_arg, "%s", st->group_arg);
            break;
        }
        s->lens = CS_LENS_TOP1; s->lens_arg[0] = 0; break;
    default:                                   /* group: kept to come back to */
        snprintf(st->group_arg, sizeof st->group_arg, "%s", s->lens_arg);
        s->lens = CS_LENS_TOP1; s->lens_arg[0] = 0; break;
    }
    return TUI_REDRAW | TUI_RECOMPUTE;
}

static unsigned h_k(tui_state *st, int key)
{
    int kmax = st->n_classes > 1 ? (int)st->n_classes : 100;
    int k = st->topk + (key == 'K' ? -1 : 1);
    if (k < 1) k = 1;
    if (k > kmax) k = kmax;
    if (k == st->topk) return 0;
    st->topk = k;
    if (st->settings.lens == CS_LENS_TOPK) {
        st->settings.topk = k;
        return TUI_REDRAW | TUI_RECOMPUTE;
    }
    tui_state_message(st, 0, "k = %d, for the topk lens (l selects it)", k);
    return TUI_REDRAW | TUI_RELAYOUT;
}

static unsigned h_class(tui_state *st, int key)
{
    int n = st->n_classes > 0 ? (int)st->n_classes : 2;
    st->klass = (st->klass + (key == 'C' ? n - 1 : 1)) % n;
    tui_scroll_show(&st->scroll, TUI_SCROLL_CLASSES, st->klass);   /* the table follows */
    if (st->settings.lens != CS_LENS_CLASS) return TUI_REDRAW;   /* only what is shown changes */
    set_class_arg(st);
    return TUI_REDRAW | TUI_RECOMPUTE;
}

static unsigned h_bins(tui_state *st, int key)
{
    int b = st->settings.bins + ((key == '-' || key == '_') ? -1 : 1);
    if (b < BINS_MIN || b > BINS_MAX) return 0;
    st->settings.bins = b;
    return TUI_REDRAW | TUI_RECOMPUTE;
}

static unsigned open_prompt(tui_state *st, tui_prompt_kind kind, const char *initial)
{
    tui_prompt *p = &st->prompt;
    p->kind = kind;
    snprintf(p->text, sizeof p->text, "%s", initial);
    p->len = p->cursor = strlen(p->text);
    p->hist_pos = -1;
    p->saved[0] = 0;
    p->refused = 0;
    return TUI_REDRAW | TUI_PROMPT;
}

static unsigned h_bins_typed(tui_state *st, int key)
{
    (void)key;
    char buf[32];
    snprintf(buf, sizeof buf, "%d", st->settings.bins);
    return open_prompt(st, TUI_PROMPT_BINS, buf);
}

/* m: uniform > mass > kdtree, for every lens (the estimators all take scalar and vector lenses) */
static unsigned h_binning(tui_state *st, int key)
{
    (void)key;
    cs_settings *s = &st->settings;
    s->binning = s->binning == CS_BIN_UNIFORM ? CS_BIN_MASS
               : s->binning == CS_BIN_MASS ? CS_BIN_KDTREE : CS_BIN_UNIFORM;
    return TUI_REDRAW | TUI_RECOMPUTE;
}

static unsigned h_sigma(tui_state *st, int key)
{
    double v;
    if (!ladder_step(sigma_ladder, LADDER_N(sigma_ladder), st->settings.sigma, key != 'S', &v)) return 0;
    st->settings.sigma = v;
    return TUI_REDRAW | TUI_RECOMPUTE;
}

/* y Y: the kd-tree's largest bin fraction gamma (--gamma); it means nothing to other binnings */
static unsigned h_gamma(tui_state *st, int key)
{
    if (st->settings.binning != CS_BIN_KDTREE) {
        tui_state_message(st, 0, "gamma sets the kd-tree's bins: m switches the binning to kdtree first");
        return TUI_REDRAW | TUI_RELAYOUT;
    }
    double v;
    if (!ladder_step(gamma_ladder, LADDER_N(gamma_ladder), st->settings.gamma, key != 'Y', &v)) return 0;
    st->settings.gamma = v;
    return TUI_REDRAW | TUI_RECOMPUTE;
}

static unsigned h_distance(tui_state *st, int key)
{
    (void)key;
    cs_settings *s = &st->settings;
    s->distance = s->distance == CS_DIST_TVD ? CS_DIST_L2
                : s->distance == CS_DIST_L2 ? CS_DIST_MAX : CS_DIST_TVD;
    return TUI_REDRAW | TUI_RECOMPUTE;
}

static unsigned h_select(tui_state *st, int key)
{
    (void)key;
    return open_prompt(st, TUI_PROMPT_SELECT, st->settings.select);
}

static unsigned h_file(tui_state *st, int key)
{
    if (st->n_files < 2) {
        tui_state_message(st, 0, "one file loaded: f switches between files (calscope A.csv B.csv)");
        return TUI_REDRAW | TUI_RELAYOUT;
    }
    st->active = (st->active + (key == 'F' ? st->n_files - 1 : 1)) % st->n_files;
    return TUI_REDRAW | TUI_RECOMPUTE;
}

static unsigned h_repeats(tui_state *st, int key)
{
    size_t n = LADDER_N(repeat_ladder), i = 0;
    while (i + 1 < n && repeat_ladder[i] < st->repeats) i++;
    if (key == 'R') { if (i == 0) return 0; i--; }
    else { if (repeat_ladder[i] > st->repeats) ; else if (i + 1 < n) i++; else return 0; }
    if (repeat_ladder[i] == st->repeats) return 0;
    st->repeats = repeat_ladder[i];
    if (st->view != TUI_VIEW_VARIANCE) {
        tui_state_message(st, 0, "variance curve repeats %d (the curves are in view 3)", st->repeats);
        return TUI_REDRAW | TUI_RELAYOUT | TUI_CURVES;
    }
    return TUI_REDRAW | TUI_CURVES;
}

static unsigned h_seed(tui_state *st, int key)
{
    (void)key;
    st->seed++;
    return TUI_REDRAW | TUI_RECOMPUTE;
}

static unsigned h_seed_typed(tui_state *st, int key)
{
    (void)key;
    char buf[32];
    snprintf(buf, sizeof buf, "%lu", st->seed);
    return open_prompt(st, TUI_PROMPT_SEED, buf);
}

static unsigned h_ci(tui_state *st, int key)
{
    (void)key;
    st->ci = st->ci ? 0 : (st->ci_on > 0 ? st->ci_on : 200);
    return TUI_REDRAW | TUI_RECOMPUTE;
}

static unsigned h_rece_overlay(tui_state *st, int key)
{
    (void)key;
    st->rece_overlay = !st->rece_overlay;
    return TUI_REDRAW;
}

/* o: the Reliability view draws relplot's smoothed curve instead of the bars, or the bars
 * again; from another view it shows the Reliability view. Only the drawing changes: the
 * metrics result already holds the curve (model.c), so nothing is recomputed. */
static unsigned h_smooth(tui_state *st, int key)
{
    (void)key;
    st->smooth = !st->smooth;
    unsigned f = TUI_REDRAW;
    if (st->view != TUI_VIEW_RELIABILITY) {
        st->view = TUI_VIEW_RELIABILITY;
        st->overlay = TUI_OVERLAY_NONE;
        f |= TUI_RELAYOUT | TUI_RECOMPUTE;
    }
    return f;
}

/* The Compare view's methods panel, where the recalibrations show (the picker may stay over it). */
static unsigned show_methods(tui_state *st)
{
    st->view = TUI_VIEW_COMPARE;
    if (st->cmp_panel == TUI_CMP_FILES) st->cmp_panel = TUI_CMP_TABLE;
    return TUI_REDRAW | TUI_RELAYOUT | TUI_RECOMPUTE;
}

/* t: the method picker (every recalibration, tui_picker_key); T: removes the method added last
 * and shows the methods panel. `t` no longer adds the next method itself: a picker and a quick
 * add cannot share one key, and the picker reaches every method in two keys or three. */
static unsigned h_recal(tui_state *st, int key)
{
    st->message[0] = 0;
    if (key == 't') {
        st->overlay = TUI_OVERLAY_PICKER;
        return TUI_REDRAW;
    }
    if (st->n_recal == 0) {
        tui_state_message(st, 0, "no recalibration to remove (t lists the methods)");
        return TUI_REDRAW | TUI_RELAYOUT;
    }
    st->n_recal--;
    st->overlay = TUI_OVERLAY_NONE;
    return show_methods(st);
}

/* Adds the method, or removes it when st->recal has it (the order of the others kept). A
 * method the active file cannot take is refused with the reason (cs_recal_offered); before
 * the file has loaded its class count is unknown, and the fit says so if it fails. */
static unsigned picker_toggle(tui_state *st, int method)
{
    for (int i = 0; i < st->n_recal; i++)
        if (st->recal[i] == method) {
            memmove(&st->recal[i], &st->recal[i + 1], (size_t)(st->n_recal - i - 1) * sizeof st->recal[0]);
            st->n_recal--;
            return show_methods(st);
        }
    char why[128];
    if (st->n_classes > 0 && !cs_recal_offered(method, st->n_classes, why, sizeof why)) {
        tui_state_message(st, 1, "%s: %s", cs_recal_name(method), why);
        return TUI_REDRAW | TUI_RELAYOUT;
    }
    if (st->n_recal >= CS_RECAL_COUNT) return TUI_REDRAW;   /* every method is listed once */
    st->recal[st->n_recal++] = method;
    return show_methods(st);
}

unsigned tui_picker_key(tui_state *st, int key)
{
    int row = st->picker_row;
    st->message[0] = 0;
    switch (key) {
    case KEY_UP: case 'k': st->picker_row = (row + CS_RECAL_COUNT - 1) % CS_RECAL_COUNT; return TUI_REDRAW | TUI_RELAYOUT;
    case KEY_DOWN: case 'j': st->picker_row = (row + 1) % CS_RECAL_COUNT; return TUI_REDRAW | TUI_RELAYOUT;
    case KEY_HOME: st->picker_row = 0; return TUI_REDRAW | TUI_RELAYOUT;
    case KEY_END: st->picker_row = CS_RECAL_COUNT - 1; return TUI_REDRAW | TUI_RELAYOUT;
    case ' ': case '\r': case '\n': case KEY_ENTER: return picker_toggle(st, row);
    case 27: case 'q': case 'Q': case 't':
        st->overlay = TUI_OVERLAY_NONE;
        return TUI_REDRAW | TUI_RELAYOUT;
    case KEY_RESIZE: return TUI_REDRAW | TUI_RELAYOUT;
    default:
        tui_state_message(st, 0, "methods: Up/Down or j/k move, space or Enter fits or removes, Esc or q closes");
        return TUI_REDRAW | TUI_RELAYOUT;
    }
}

static unsigned h_cmp_panel(tui_state *st, int key)
{
    (void)key;
    st->cmp_panel = (st->cmp_panel + 1) % TUI_CMP_COUNT;
    unsigned f = TUI_REDRAW;
    if (st->view != TUI_VIEW_COMPARE) { st->view = TUI_VIEW_COMPARE; f |= TUI_RELAYOUT | TUI_RECOMPUTE; }
    return f;
}

static unsigned h_cmp_col(tui_state *st, int key)
{
    st->cmp_col = (st->cmp_col + (key == '[' ? CS_METHODS_NCOL - 1 : 1)) % CS_METHODS_NCOL;
    if (st->view != TUI_VIEW_COMPARE || st->cmp_panel == TUI_CMP_FILES) {
        tui_state_message(st, 0, "[ ] move the focus in the methods table (view 5, p)");
        return TUI_REDRAW | TUI_RELAYOUT;
    }
    return TUI_REDRAW;
}

static unsigned h_compat(tui_state *st, int key)
{
    if (key == 'X') {
        st->compat_lib = (st->compat_lib + 1) % CS_COMPAT_COUNT;
        if (!st->compat) st->compat = 1;
    } else {
        st->compat = !st->compat;
    }
    unsigned f = TUI_REDRAW;
    if (st->compat && st->view != TUI_VIEW_RELIABILITY) {
        st->view = TUI_VIEW_RELIABILITY;
        f |= TUI_RELAYOUT;
    }
    return f | (st->compat ? TUI_RECOMPUTE : 0);
}

/* The table the arrows move in the current view, or -1 with *why saying why none does. */
static int scroll_table(const tui_state *st, const char **why)
{
    switch (st->view) {
    case TUI_VIEW_CLASSES: return TUI_SCROLL_CLASSES;
    case TUI_VIEW_CASES: return TUI_SCROLL_CASES;
    case TUI_VIEW_COMPARE:
        if (st->cmp_panel == TUI_CMP_TABLE) return TUI_SCROLL_METHODS;
        if (st->cmp_panel == TUI_CMP_RANKS) return TUI_SCROLL_RANKS;
        return TUI_SCROLL_FILES;
    case TUI_VIEW_RELIABILITY:
        if (st->compat) return TUI_SCROLL_COMPAT;
        *why = "nothing to scroll: this view fits (x shows the compat panel, which scrolls)";
        return -1;
    default:
        *why = "nothing to scroll in this view (tables scroll in Classes, Compare, Cases, compat)";
        return -1;
    }
}

static unsigned h_scroll(tui_state *st, int key)
{
    const char *why = "";
    int t = scroll_table(st, &why);
    if (t < 0) { tui_state_message(st, 0, "%s", why); return TUI_REDRAW | TUI_RELAYOUT; }
    tui_scroll_motion m = key == KEY_UP ? TUI_SCROLL_UP : key == KEY_DOWN ? TUI_SCROLL_DOWN
                        : key == KEY_PPAGE ? TUI_SCROLL_PGUP : key == KEY_NPAGE ? TUI_SCROLL_PGDN
                        : key == KEY_HOME ? TUI_SCROLL_HOME : TUI_SCROLL_END;
    return tui_scroll_move(&st->scroll, (tui_scroll_table)t, m) ? TUI_REDRAW : 0;
}

static unsigned h_help(tui_state *st, int key)
{
    (void)key;
    if (st->overlay == TUI_OVERLAY_HELP && st->help_page + 1 < st->help_pages) {
        st->help_page++;                     /* a small terminal: next page */
        return TUI_REDRAW;
    }
    st->help_page = 0;
    st->overlay = st->overlay == TUI_OVERLAY_HELP ? TUI_OVERLAY_NONE : TUI_OVERLAY_HELP;
    return TUI_REDRAW;
}

static unsigned h_cmdline(tui_state *st, int key)
{
    (void)key;
    st->overlay = st->overlay == TUI_OVERLAY_CMDLINE ? TUI_OVERLAY_NONE : TUI_OVERLAY_CMDLINE;
    return TUI_REDRAW;
}

static unsigned h_escape(tui_state *st, int key)
{
    (void)key;
    if (st->overlay == TUI_OVERLAY_NONE && !st->message[0]) return 0;
    st->overlay = TUI_OVERLAY_NONE;
    st->message[0] = 0;
    return TUI_REDRAW;
}

static unsigned h_repaint(tui_state *st, int key)
{
    (void)st; (void)key;
    return TUI_REDRAW | TUI_RELAYOUT;
}

static unsigned h_quit(tui_state *st, int key)
{
    (void)st; (void)key;
    return TUI_QUIT;
}

/* Left/Right: the previous / next epoch of a followed run; every view shows the selected one.
 * A step also counts the epochs that arrived since as seen (the status line's "+N new"). */
static unsigned h_epoch(tui_state *st, int key)
{
    if (!st->follow) {
        tui_state_message(st, 0, "Left/Right step through the epochs of a followed run (calscope --follow DIR)");
        return TUI_REDRAW | TUI_RELAYOUT;
    }
    st->epochs_seen = st->n_epochs;
    if (st->n_epochs == 0) return TUI_REDRAW;
    if (key == KEY_LEFT && st->epoch > 0) st->epoch--;
    else if (key == KEY_RIGHT && st->epoch + 1 < st->n_epochs) st->epoch++;
    return TUI_REDRAW | TUI_RECOMPUTE;
}

/* v: the metric the Trend chart draws and marks the best epoch by. */
static unsigned h_trend_metric(tui_state *st, int key)
{
    (void)key;
    if (!st->follow) {
        tui_state_message(st, 0, "v picks the Trend chart's metric of a followed run (calscope --follow DIR)");
        return TUI_REDRAW | TUI_RELAYOUT;
    }
    st->trend_metric = (st->trend_metric + 1) % TUI_TREND_METRICS;
    if (st->view != TUI_VIEW_TREND) { st->view = TUI_VIEW_TREND; return TUI_REDRAW | TUI_RELAYOUT | TUI_RECOMPUTE; }
    return TUI_REDRAW;
}

/* a: the Compare view on the first, selected and last epochs of a followed run (the selected
 * one stays the active file; Left/Right still step it); a again: the selected epoch alone. */
static unsigned h_trend_compare(tui_state *st, int key)
{
    (void)key;
    if (!st->follow) {
        tui_state_message(st, 0, "a compares the first, selected and last epochs of a followed run (calscope --follow DIR)");
        return TUI_REDRAW | TUI_RELAYOUT;
    }
    st->trend_compare = !st->trend_compare;
    if (st->trend_compare) {
        st->view = TUI_VIEW_COMPARE;
        st->overlay = TUI_OVERLAY_NONE;
    }
    return TUI_REDRAW | TUI_RELAYOUT | TUI_RECOMPUTE;
}

/* ---- the table --------------------------------------------------------------------------- */

static const tui_action actions[] = {
    { { '1', '2', '3', '4', '5', '6', '7' }, "1-7", "view", h_view,
      "views (the tabs on the top row; 7 Trend: --follow)" },
    { { '\t', KEY_BTAB }, "Tab", "next view", h_view_cycle, "next / previous view (Shift-Tab)" },
    { { 'l' }, "l", "lens", h_lens, "next lens (top1 topk class ...)" },
    { { 'k', 'K' }, "k K", "k", h_k, "k of the topk lens up / down" },
    { { 'c', 'C' }, "c C", "class", h_class, "class next / prev (lens, views)" },
    { { '+', '=', '-', '_' }, "+ -", "bins", h_bins, "number of bins M up / down" },
    { { 'b' }, "b", "bins typed", h_bins_typed, "type the number of bins" },
    { { 'm' }, "m", "binning", h_binning, "binning: uniform > mass > kdtree" },
    { { 'y', 'Y' }, "y Y", "gamma", h_gamma, "kd-tree bin fraction gamma up / down" },
    { { 's', 'S' }, "s S", "sigma", h_sigma, "RECE-G/M kernel sigma up / down" },
    { { 'd' }, "d", "distance", h_distance, "distance: tvd > l2 > max" },
    { { 'g' }, "g", "RECE-G curve", h_rece_overlay, "RECE-G smoothed curve on / off" },
    { { 'o' }, "o", "smooth curve", h_smooth, "Reliability: bars / smooth curve (relplot)" },
    { { '/' }, "/", "select", h_select, "selection (Up/Down: history)" },
    { { 'f', 'F' }, "f F", "file", h_file, "active file next / previous" },
    { { 'i' }, "i", "intervals", h_ci, "bootstrap 95% intervals on / off" },
    { { 'r', 'R' }, "r R", "repeats", h_repeats, "variance curve repeats up / down" },
    { { 't', 'T' }, "t T", "recalibrate", h_recal,
      "methods: pick, fit, remove, fit times; T drops" },
    { { 'p' }, "p", "compare panel", h_cmp_panel, "Compare: diagrams > methods > rankings+mass" },
    { { '[', ']' }, "[ ]", "column", h_cmp_col, "methods table: focus previous / next metric" },
    { { KEY_LEFT, KEY_RIGHT }, "Lt Rt", "epoch", h_epoch, "--follow: previous / next epoch (every view)" },
    { { 'v' }, "v", "trend metric", h_trend_metric, "Trend: chart metric ECE > smECE > Brier ..." },
    { { 'a' }, "a", "compare epochs", h_trend_compare, "--follow: Compare first/selected/last epoch (a: off)" },
    { { 'x', 'X' }, "x X", "compat", h_compat, "compat panel on / off; X next library" },
    { { 'e' }, "e", "seed", h_seed, "next random seed" },
    { { 'E' }, "E", "seed typed", h_seed_typed, "type the random seed" },
    { { KEY_UP, KEY_DOWN, KEY_PPAGE, KEY_NPAGE, KEY_HOME, KEY_END }, "Up/Dn", "scroll", h_scroll,
      "scroll a long table (PgUp PgDn Home End too)" },
    { { ':' }, ":", "command line", h_cmdline, "settings as a report command" },
    { { '?', 'h', KEY_F(1) }, "?", "help", h_help, "this help" },
    { { 27 }, "Esc", "close", h_escape, "close help / methods / messages" },
    { { CTRL('l') }, "^L", "repaint", h_repaint, "repaint the screen" },
    { { 'q', 'Q' }, "q", "quit", h_quit, "quit (at once, even mid-job)" },
};

const tui_action *tui_actions(size_t *count)
{
    *count = sizeof actions / sizeof actions[0];
    return actions;
}

const tui_action *tui_action_for_key(int key)
{
    if (key == 0) return NULL;
    for (size_t i = 0; i < sizeof actions / sizeof actions[0]; i++) {
        if (!actions[i].handler) continue;
        for (int j = 0; j < TUI_ACTION_KEYS && actions[i].keys[j]; j++)
            if (actions[i].keys[j] == key) return &actions[i];
    }
    return NULL;
}

unsigned tui_action_dispatch(tui_state *st, int key)
{
    const tui_action *a = tui_action_for_key(key);
    if (a) return a->handler(st, key);
    if (key > ' ' && key < 127) {            /* a typed key that means nothing: say so */
        tui_state_message(st, 0, "%c does nothing here (? lists the keys)", key);
        return TUI_REDRAW | TUI_RELAYOUT;
    }
    return 0;
}

/* ---- command line ------------------------------------------------------------------------ */

/* The methods table's numbers are on screen: any panel of the Compare view (the diagrams
 * panel's paired column is the table's ECE column), with two methods or more. */
static int methods_shown(const tui_state *st)
{
    return st->view == TUI_VIEW_COMPARE && st->n_files + (size_t)st->n_recal >= 2;
}

/* What is on screen as report options: the settings, the loading flags, and the curve, the
 * comparison or the compat table only when their view shows them. The flag table renders it. */
static void screen_opts(const tui_state *st, ss_opts *o, const char **files)
{
    memset(o, 0, sizeof *o);
    ss_opts_init(o, SS_DASH);
    o->settings = st->settings;
    o->load = st->load;
    o->ci_repeats = st->ci;
    o->ci_method = st->ci_method;
    if (st->view == TUI_VIEW_VARIANCE) {
        o->curve = 1;
        o->repeats = st->repeats;
    }
    if (methods_shown(st)) {
        o->compare = 1;
        for (int i = 0; i < st->n_recal && i < CS_RECAL_COUNT; i++) o->methods.recal[i] = st->recal[i];
        o->methods.n_recal = st->n_recal < CS_RECAL_COUNT ? st->n_recal : CS_RECAL_COUNT;
        if (st->active > 0) o->methods.reference = (int)st->active + 1;
        o->methods.verdict_metric = st->verdict_metric;
        o->methods.verdict_metric_given = st->verdict_metric != CS_METRIC_ECE;
    }
    if (st->compat && st->view == TUI_VIEW_RELIABILITY) o->compat = st->compat_lib;
    o->seed = st->seed;
    o->seed_given = 1;                 /* printed only where something is random */
    for (size_t f = 0; f < st->n_files; f++) files[f] = st->paths[f];
    o->files = files;
    o->n_files = st->n_files;
}

void tui_command_line(const tui_state *st, char *buf, size_t size)
{
    ss_opts o;
    const char *files[TUI_MAX_FILES];
    screen_opts(st, &o, files);
    ss_render(&o, buf, size);
}

/* ---- prompt submit ----------------------------------------------------------------------- */

static int parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    while (*end == ' ') end++;
    if (errno || end == s || *end || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

unsigned tui_prompt_submit(tui_state *st)
{
    tui_prompt *p = &st->prompt;
    tui_prompt_kind kind = p->kind;
    p->kind = TUI_PROMPT_NONE;
    long v;
    switch (kind) {
    case TUI_PROMPT_SELECT: {
        char err[CS_SPEC_MAX * 2];
        tui_history_add(st, p->text);
        if (select_check && select_check(select_check_ctx, p->text, err, sizeof err) != 0) {
            tui_state_message(st, 1, "%s", err);     /* the old selection stays */
            return TUI_REDRAW | TUI_RELAYOUT;
        }
        if (strcmp(p->text, st->settings.select) == 0) return TUI_REDRAW;
        snprintf(st->settings.select, sizeof st->settings.select, "%s", p->text);
        st->message[0] = 0;
        return TUI_REDRAW | TUI_RECOMPUTE | TUI_RELAYOUT;
    }
    case TUI_PROMPT_BINS:
        if (parse_long(p->text, BINS_MIN, BINS_MAX, &v) != 0) {
            tui_state_message(st, 1, "bins: want an integer 1..1000, got '%s'", p->text);
            return TUI_REDRAW;
        }
        if (v == st->settings.bins) return TUI_REDRAW;
        st->settings.bins = (int)v;
        return TUI_REDRAW | TUI_RECOMPUTE;
    case TUI_PROMPT_SEED: {
        uint64_t seed;                         /* the --seed rule (session/flags.h) */
        if (!ss_parse_seed(p->text, &seed)) {
            tui_state_message(st, 1, "seed: want a non-negative integer, got '%s'", p->text);
            return TUI_REDRAW;
        }
        if ((unsigned long)seed == st->seed) return TUI_REDRAW;
        st->seed = (unsigned long)seed;
        return TUI_REDRAW | TUI_RECOMPUTE;
    }
    default:
        return TUI_REDRAW;
    }
}
