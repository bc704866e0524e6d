/* View 7 (--follow): the run's metrics against epoch — a chart of the chosen metric (`v`) with
 * the best epoch marked, the bootstrap band when the summaries carry intervals, failed files
 * as gaps; under it the table of epochs, the selected one (Left/Right) marked. Everything is
 * drawn from the epochs' summaries (calscope/trend.h); nothing is computed here. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calscope/catalogue.h"
#include "calscope/text.h"
#include "tui/blit.h"
#include "tui/theme.h"
#include "tui/trend.h"
#include "tui/views.h"

enum { PLOT_ROWS = 6, YLABEL_W = 7, NAME_W = 16 };

/* The file name of an epoch as a table shows it: escaped, and head~tail when longer than w. */
static void epoch_name(char *out, size_t size, const char *path, int w)
{
    char esc[512];
    const char *base = tui_basename(path);
    cs_text_escape(esc, sizeof esc, base, strlen(base), 0);
    int len = (int)strlen(esc);
    if (len <= w) { snprintf(out, size, "%s", esc); return; }
    int tail = w / 2, head = w - tail - 1;
    snprintf(out, size, "%.*s~%s", head, esc, esc + len - tail);
}

/* The first epoch a window of `rows` shows so that the selected one is inside it. */
static size_t window_first(size_t n, size_t sel, size_t rows)
{
    if (n <= rows) return 0;
    size_t first = sel > rows / 2 ? sel - rows / 2 : 0;
    return first + rows > n ? n - rows : first;
}

/* The row (0 = top) of value v on a plot of PLOT_ROWS rows from lo to hi. */
static int plot_row(double v, double lo, double hi)
{
    int r = (int)lround((hi - v) / (hi - lo) * (PLOT_ROWS - 1));
    return r < 0 ? 0 : r > PLOT_ROWS - 1 ? PLOT_ROWS - 1 : r;
}

static void draw_chart(const tui_ctx *c, const tui_trend *t, const tui_rect *r)
{
    const cs_trend *tr = &t->trend;
    int id = tui_trend_metrics[c->st->trend_metric];
    const char *label = cs_metric_info_of(id)->label;
    char lens[64];
    cs_settings_lens_name(&c->st->settings, lens, sizeof lens);
    long best = cs_trend_best(tr, id);
    int y = r->y;
    if (best >= 0) {
        char name[64];
        epoch_name(name, sizeof name, tr->epoch[best].path, 24);
        char v[16];
        tui_fmt_value(v, sizeof v, tr->epoch[best].value[id]);
        tui_textf(y, r->x, r->w, CH_ROLE_TITLE, "%s (%s) by epoch   best%s at epoch %ld %s   v: metric", label, lens,
                  v, best + 1, name);
    } else {
        tui_textf(y, r->x, r->w, CH_ROLE_TITLE, "%s (%s) by epoch   v: metric", label, lens);
    }
    y++;
    if (tr->n == 0) {
        tui_text(y + 1, r->x + 2, r->w - 2, CH_ROLE_TEXT,
                 t->n ? "measuring the first epoch..." : "waiting for the first prediction file of the run...");
        return;
    }
    /* the scale: every value and band end shown */
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < tr->n; i++) {
        const cs_trend_epoch *e = &tr->epoch[i];
        double vals[3] = { e->value[id], e->has_ci ? e->lo[id] : NAN, e->has_ci ? e->hi[id] : NAN };
        for (int k = 0; k < 3; k++)
            if (isfinite(vals[k])) { lo = fmin(lo, vals[k]); hi = fmax(hi, vals[k]); }
    }
    if (!isfinite(lo)) { lo = 0; hi = 1; }
    if (hi - lo < 1e-9) { lo -= 0.005; hi += 0.005; }
    int pw = r->w - YLABEL_W - 1;
    int step = pw / (int)tr->n >= 3 ? 3 : pw / (int)tr->n >= 2 ? 2 : 1;
    size_t shown = (size_t)(pw / step);
    size_t sel = c->st->epoch < tr->n ? c->st->epoch : tr->n - 1;
    size_t first = window_first(tr->n, sel, shown);
    const char *dot = c->g->utf8 ? "\xe2\x97\x8f" : "*", *star = c->g->utf8 ? "\xe2\x97\x86" : "@",
               *gap = c->g->utf8 ? "\xc3\x97" : "x", *band = c->g->utf8 ? "\xe2\x96\x91" : ":",
               *sel_mark = "^", *axis = c->g->utf8 ? "\xe2\x94\x80" : "-";
    for (int row = 0; row < PLOT_ROWS; row++) {
        char yl[16] = "";
        if (row == 0) snprintf(yl, sizeof yl, "%.4f", hi);
        else if (row == PLOT_ROWS - 1) snprintf(yl, sizeof yl, "%.4f", lo);
        tui_textf(y + row, r->x, YLABEL_W, CH_ROLE_LABEL, "%6s", yl);
        tui_text(y + row, r->x + YLABEL_W - 1, 1, CH_ROLE_AXIS, c->g->utf8 ? "\xe2\x94\x82" : "|");
    }
    for (size_t i = first; i < tr->n && i < first + shown; i++) {
        const cs_trend_epoch *e = &tr->epoch[i];
        int x = r->x + YLABEL_W + (int)(i - first) * step;
        if (e->message) { tui_text(y + PLOT_ROWS - 1, x, 1, TUI_ROLE_ERROR, gap); continue; }
        if (e->has_ci && isfinite(e->lo[id]) && isfinite(e->hi[id]))
            for (int row = plot_row(e->hi[id], lo, hi); row <= plot_row(e->lo[id], lo, hi); row++)
                tui_text(y + row, x, 1, CH_ROLE_BAND, band);
        if (!isfinite(e->value[id])) continue;
        tui_text(y + plot_row(e->value[id], lo, hi), x, 1, (long)i == best ? CH_ROLE_SERIES2 : CH_ROLE_SERIES1,
                 (long)i == best ? star : dot);
    }
    y += PLOT_ROWS;
    tui_text(y, r->x + YLABEL_W - 1, 1, CH_ROLE_AXIS, c->g->utf8 ? "\xe2\x94\x94" : "+");
    for (int x = 0; x < (int)(shown < tr->n - first ? shown : tr->n - first) * step; x++)
        tui_text(y, r->x + YLABEL_W + x, 1, CH_ROLE_AXIS, axis);
    if (sel >= first && sel < first + shown)
        tui_text(y, r->x + YLABEL_W + (int)(sel - first) * step, 1, TUI_ROLE_HEADING, sel_mark);
    int any_replaced = 0;
    for (size_t i = 0; i < t->n && !any_replaced; i++) any_replaced = t->by[i] != TUI_TREND_BOUND;
    tui_textf(y + 1, r->x, r->w, CH_ROLE_LABEL, "%s %s  %s best  %s failed file  ^ shown (Left/Right)  a: compare%s%s",
              dot, label, star, gap, any_replaced ? "  * replaced" : "",
              t->ci ? (c->g->utf8 ? "  \xe2\x96\x91 95% band" : "  : 95% band") : "");
}

static void draw_table(const tui_ctx *c, const tui_trend *t, const tui_rect *r)
{
    const cs_trend *tr = &t->trend;
    int chosen = tui_trend_metrics[c->st->trend_metric];
    long best = cs_trend_best(tr, chosen);
    char head[160];
    int n = snprintf(head, sizeof head, "   epoch %-*s %7s", NAME_W, "file", "n");
    for (int k = 0; k < TUI_TREND_METRICS; k++) {
        const char *lab = cs_metric_info_of(tui_trend_metrics[k])->label;
        char l[24];
        snprintf(l, sizeof l, k == c->st->trend_metric ? "[%s]" : "%s", lab);
        n += snprintf(head + n, sizeof head - (size_t)n, " %8s", l);
    }
    tui_text(r->y, r->x, r->w, TUI_ROLE_HEADING, head);
    int rows = r->h - 2;
    if (rows < 1 || t->n == 0) return;
    size_t sel = c->st->epoch;
    size_t first = window_first(t->n, sel, (size_t)rows);
    int y = r->y + 1;
    for (size_t i = first; i < t->n && y < r->y + 1 + rows; i++, y++) {
        char name[64], line[256];
        /* `*`: its name now names a later epoch's file (or a changed one); the row is its own */
        int replaced = t->by[i] != TUI_TREND_BOUND;
        epoch_name(name, sizeof name - 1, t->paths[i], NAME_W - replaced);
        if (replaced) strcat(name, "*");
        /* two marks: the shown epoch, the best one (the chart's glyph) */
        char mark[16];
        snprintf(mark, sizeof mark, "%s%s", i == sel ? ">" : " ",
                 (long)i == best ? (c->g->utf8 ? "\xe2\x97\x86" : "@") : " ");
        int role = i == sel ? TUI_ROLE_TAB_ACTIVE : CH_ROLE_TEXT;
        if (i >= tr->n) {
            snprintf(line, sizeof line, "%s%6zu %-*s %s", mark, i + 1, NAME_W, name,
                     i == tr->n ? "measuring..." : "waiting");
            tui_text(y, r->x, r->w, role, line);
            continue;
        }
        const cs_trend_epoch *e = &tr->epoch[i];
        if (e->message) {
            /* the file is named on the row: its message from the line and column on */
            const char *msg = e->message;
            size_t pl = strlen(e->path);
            if (strncmp(msg, e->path, pl) == 0 && msg[pl] == ':') msg += pl + 1 + (msg[pl + 1] == ' ');
            snprintf(line, sizeof line, "%s%6zu %-*s gap: %s", mark, i + 1, NAME_W, name, msg);
            tui_text(y, r->x, r->w, i == sel ? role : TUI_ROLE_ERROR, line);
            continue;
        }
        int m = snprintf(line, sizeof line, "%s%6zu %-*s %7zu", mark, i + 1, NAME_W, name, e->samples);
        for (int k = 0; k < TUI_TREND_METRICS; k++) {
            char v[16];
            tui_fmt_value(v, sizeof v, e->value[tui_trend_metrics[k]]);
            m += snprintf(line + m, sizeof line - (size_t)m, "  %s", v);
        }
        tui_text(y, r->x, r->w, role, line);
    }
    size_t shown = t->n - first < (size_t)rows ? t->n - first : (size_t)rows;
    if (t->n > shown)   /* the window follows the shown epoch */
        tui_textf(r->y + r->h - 1, r->x, r->w, CH_ROLE_LABEL, "epochs %zu-%zu of %zu (Left/Right move)",
                  first + 1, first + shown, t->n);
}

void tui_view_trend(const tui_ctx *c, const tui_trend *t, const tui_layout *l)
{
    draw_chart(c, t, &l->a);
    draw_table(c, t, &l->b);
}
