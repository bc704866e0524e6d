/* The method picker (`t`): every recalibration the engine has, in the engine's order
 * (cs_recal_name), each with whether it is applied, whether the active file can take it (and
 * why not), and its fit time once fitted. Drawn over the current view, between two rules like
 * the `:` overlay; its keys are tui_picker_key's (actions.c). */
#include <stdio.h>
#include <string.h>

#include "calscope/recal.h"
#include "tui/blit.h"
#include "tui/theme.h"
#include "tui/tui_curses.h"
#include "tui/views.h"

#define PICKER_ROWS (CS_RECAL_COUNT + 4)   /* title rule, methods, two detail lines, rule */

/* A fit's wall time as the picker shows it: "45 ms", "3.4 s", "127 s". */
static void fmt_seconds(char *buf, size_t size, double s)
{
    if (s < 0.1) snprintf(buf, size, "%.0f ms", s * 1e3);
    else if (s < 100) snprintf(buf, size, "%.1f s", s);
    else snprintf(buf, size, "%.0f s", s);
}

static int applied(const tui_state *st, int method)
{
    for (int i = 0; i < st->n_recal; i++)
        if (st->recal[i] == method) return 1;
    return 0;
}

/* Method row: "> [x] ms     matrix scaling (ODIR)          12.3 s" (w >= 56 shows every title
 * whole), or with the reason in place
 * of the title when the active file cannot take it. */
static void method_row(const tui_ctx *c, int method, int y, int x, int w)
{
    const tui_state *st = c->st;
    const tui_recal *rc = &c->m->recal[method];
    int on = applied(st, method), focus = method == st->picker_row;
    char why[128], right[32] = "", line[256];
    int offered = st->n_classes == 0 || cs_recal_offered(method, st->n_classes, why, sizeof why);
    int role = focus ? TUI_ROLE_PROMPT : CH_ROLE_TEXT;
    if (on && rc->method == method && rc->state == 2) fmt_seconds(right, sizeof right, rc->fit_seconds);
    else if (on && rc->state == 3) { snprintf(right, sizeof right, "failed"); role = TUI_ROLE_ERROR; }
    else if (on) snprintf(right, sizeof right, "fitting");
    int tw = w - 2 - 4 - 7 - 8;              /* "> ", "[x] ", name, the time column */
    if (!offered) {
        snprintf(line, sizeof line, "%s  -  %-6s %s", focus ? ">" : " ", cs_recal_name(method), why);
        if (!focus) role = CH_ROLE_LABEL;
    } else {
        snprintf(line, sizeof line, "%s [%c] %-6s %-*.*s %7s", focus ? ">" : " ", on ? 'x' : ' ',
                 cs_recal_name(method), tw, tw, cs_recal_title(method), right);
    }
    tui_text(y, x, w, role, line);
}

/* The focused method's detail: why its fit failed, else the keys. */
static void detail(const tui_ctx *c, const tui_rect *r)
{
    const tui_recal *rc = &c->m->recal[c->st->picker_row];
    if (applied(c->st, c->st->picker_row) && rc->state == 3) {
        tui_draw_lines(r, r->y, TUI_ROLE_ERROR, rc->error);
        return;
    }
    tui_text(r->y, r->x, r->w, CH_ROLE_LABEL, "space/Enter fit or remove  j/k move  Esc/q close");
    tui_text(r->y + 1, r->x, r->w, CH_ROLE_LABEL, "time: wall time of the fit (5 folds and all rows)");
}

void tui_draw_picker(const tui_ctx *c, const tui_layout *l)
{
    /* whole rows, as the `:` overlay: no half-hidden chart beside the list */
    int w = l->cols - 4 < 72 ? l->cols - 4 : 72, h = PICKER_ROWS;
    if (h > l->body.h) h = l->body.h;
    int x = 2, y = l->body.y + (l->body.h - h) / 2;
    for (int r = y; r < y + h; r++) { move(r, 0); clrtoeol(); }
    mvhline(y, 0, ACS_HLINE, l->cols);
    const char *file = c->st->active < c->m->n_files ? c->m->files[c->st->active].name : "";
    tui_textf(y, x + 2, w - 4, CH_ROLE_TITLE, " methods of %s (t) ", file);
    for (int m = 0; m < CS_RECAL_COUNT && y + 1 + m < y + h - 1; m++) method_row(c, m, y + 1 + m, x + 1, w - 2);
    tui_rect d = { x + 1, y + 1 + CS_RECAL_COUNT, w - 2, 2 };
    if (d.y + d.h < y + h) detail(c, &d);
    mvhline(y + h - 1, 0, ACS_HLINE, l->cols);
}
