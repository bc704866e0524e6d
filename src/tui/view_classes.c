/* View 4: per-class calibration of the active file: ECE of each class:c lens as bars, a table
 * with the mean predicted probability and the observed frequency of each class, and the Likert
 * panel (low / medium / high confidence bands — ranges of the predicted probability, not
 * statistical intervals — as in Kirchenbauer, Oaks & Heim 2022, "What is Your Metric Telling
 * You?", §5.3). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "chart/chart.h"
#include "calscope/jobs/likert.h"
#include "calscope/jobs/metrics.h"
#include "tui/blit.h"
#include "tui/theme.h"
#include "tui/views.h"

/* Count-weighted means of the bins' first coordinates = mean p_c and frequency of c. */
static void class_means(const cs_result *r, double *conf, double *acc)
{
    double n = 0, sc = 0, sa = 0;
    for (size_t i = 0; i < r->n_bins; i++) {
        if (r->bins[i].count == 0) continue;
        n += (double)r->bins[i].count;
        sc += (double)r->bins[i].count * r->bins[i].conf;
        sa += (double)r->bins[i].count * r->bins[i].acc;
    }
    *conf = n > 0 ? sc / n : NAN;
    *acc = n > 0 ? sa / n : NAN;
}

static void likert_panel(const tui_ctx *c, const tui_rect *r)
{
    if (r->w < 20) return;
    int y = r->y;
    tui_text(y++, r->x, r->w, CH_ROLE_TITLE, "Likert: confidence bands");
    tui_text(y++, r->x, r->w, CH_ROLE_LABEL, "ECE under the interval distance");
    cs_lens_kind lk = c->st->settings.lens;
    if (lk != CS_LENS_TOP1 && lk != CS_LENS_TOPK && lk != CS_LENS_CLASS) {
        tui_text(y + 1, r->x, r->w, CH_ROLE_WARNING, "needs a top1/topk/class lens");
        return;
    }
    static const char *names[TUI_LIKERT_N] = { "low", "medium", "high" };
    int stale;
    const cs_job *resp = tui_model_result(c->m, TUI_SLOT_LIKERT, &stale);
    const cs_likert *lkr = resp && resp->status == CS_OK ? &cs_likert_job_of(resp)->result : NULL;
    tui_textf(y, r->x, r->w, TUI_ROLE_HEADING, "%-6s %-11s %6s %7s", "", "band", "n", "ECE");
    if (stale) tui_draw_stale_mark(r, y);
    y++;
    if (resp && resp->status != CS_OK) {
        tui_rect in = { r->x, y, r->w, r->y + r->h - y };
        tui_draw_lines(&in, y, TUI_ROLE_ERROR, resp->err.msg);
        return;
    }
    for (int i = 0; i < TUI_LIKERT_N && y < r->y + r->h; i++) {
        char iv[32];
        snprintf(iv, sizeof iv, "[%.2f,%.2f%c", tui_likert_cuts[i], tui_likert_cuts[i + 1],
                 i == TUI_LIKERT_N - 1 ? ']' : ')');
        if (!lkr || (size_t)i >= lkr->n) {
            tui_textf(y++, r->x, r->w, CH_ROLE_TEXT, "%-6s %-11s     ...", names[i], iv);
            continue;
        }
        const cs_likert_interval *v = &lkr->iv[i];
        char val[32];
        tui_fmt_value(val, sizeof val, v->ece);
        tui_textf(y++, r->x, r->w, stale ? CH_ROLE_STALE : CH_ROLE_TEXT, "%-6s %-11s %6zu %s",
                  names[i], iv, v->count, val);
    }
}

/* First of k bars shown in *rows rows so that the chosen class is among them. */
static size_t bars_window(size_t k, int klass, const int *rows)
{
    return (int)k > *rows && klass >= *rows ? (size_t)klass - (size_t)*rows + 1 : 0;
}

/* The ECE bars of the first k classes in a, a window of them that holds the chosen class; the
 * classes without a bar said on the last row. */
static void class_bars(const tui_ctx *c, const cs_dataset *d, size_t k, const tui_rect *a)
{
    const tui_state *st = c->st;
    ch_bar bars[TUI_MAX_CLASS_SLOTS];
    char labels[TUI_MAX_CLASS_SLOTS][24];
    int any_stale = 0, missing = 0;
    for (size_t i = 0; i < k; i++) {
        int stale;
        const cs_job *resp = tui_model_result(c->m, TUI_SLOT_CLASS0 + (int)i, &stale);
        snprintf(labels[i], sizeof labels[i], "%s%s", (int)i == st->klass ? ">" : "",
                 d->class_names[i]);
        double v = resp && resp->status == CS_OK ? cs_metrics_job_of(resp)->result.ece : NAN;
        if (!resp) missing++;
        any_stale |= stale;
        bars[i] = (ch_bar){ labels[i], v, NAN, NAN, stale };
    }
    char title[128];
    snprintf(title, sizeof title, "per-class ECE (class:c lens)%s",
             k < d->k ? ", first classes" : "");
    tui_text(a->y, a->x, a->w, CH_ROLE_TITLE, title);
    if (any_stale || missing) tui_draw_stale_mark(a, a->y);
    int rows = a->h - 1;
    size_t first = bars_window(k, st->klass, &rows);
    /* the classes without a bar (past the window, or past the first TUI_MAX_CLASS_SLOTS):
     * said on the last row, which the bars give up for it */
    size_t drawn = k - first < (size_t)rows ? k - first : (size_t)rows;
    if (drawn < d->k && rows >= 2) {
        rows--;
        first = bars_window(k, st->klass, &rows);
        drawn = k - first < (size_t)rows ? k - first : (size_t)rows;
        tui_textf(a->y + 1 + rows, a->x, a->w, CH_ROLE_LABEL, "+ %zu class%s not shown", d->k - drawn,
                  d->k - drawn == 1 ? "" : "es");
    }
    ch_buf *b = ch_buf_new(a->w, rows);
    if (!b) return;
    ch_bars bc;
    memset(&bc, 0, sizeof bc);
    bc.bars = bars + first;
    bc.n = k - first;
    bc.vmax = NAN;
    ch_bars_draw(b, 0, 0, a->w, rows, &bc, c->g);
    tui_blit(b, a->y + 1, a->x, 0);
    ch_buf_free(b);
}

/* The table of the selected class and its neighbours in t: ECE, mean p, frequency, n. */
static void class_table(const tui_ctx *c, const cs_dataset *d, size_t k, const tui_rect *t)
{
    const tui_state *st = c->st;
    int y = t->y;
    tui_textf(y++, t->x, t->w, TUI_ROLE_HEADING, "%-12s %7s %7s %7s %6s", "class", "ECE", "mean p",
              "freq", "n");
    int shown, marker;
    size_t start = (size_t)tui_scroll_window(&c->st->scroll, TUI_SCROLL_CLASSES, (int)k, t->h - 1,
                                             &shown, &marker);
    for (size_t i = start; i < start + (size_t)shown && y < t->y + t->h; i++) {
        int stale;
        const cs_job *resp = tui_model_result(c->m, TUI_SLOT_CLASS0 + (int)i, &stale);
        if (!resp || resp->status != CS_OK) {
            tui_textf(y++, t->x, t->w, CH_ROLE_TEXT, "%-12.12s %s", d->class_names[i],
                      resp ? resp->err.msg : "...");
            continue;
        }
        const cs_result *res = &cs_metrics_job_of(resp)->result;
        double mc, fr;
        class_means(res, &mc, &fr);
        char e[16], p[16], f[16];
        tui_fmt_value(e, sizeof e, res->ece);
        tui_fmt_value(p, sizeof p, mc);
        tui_fmt_value(f, sizeof f, fr);
        tui_textf(y++, t->x, t->w, (int)i == st->klass ? TUI_ROLE_PROMPT : (stale ? CH_ROLE_STALE : CH_ROLE_TEXT),
                  "%-12.12s %s %s %s %6zu", d->class_names[i], e, p, f, res->n);
    }
    tui_draw_scroll_marker(t, y, (int)start, shown, (int)k, marker);
}

void tui_view_classes(const tui_ctx *c, const tui_layout *l)
{
    const tui_state *st = c->st;
    if (tui_draw_file_state(c, st->active, &l->body)) return;
    const cs_dataset *d = c->m->files[st->active].data;
    size_t k = c->m->n_class_slots;
    if (k > d->k) k = d->k;
    if (k == 0) k = d->k < TUI_MAX_CLASS_SLOTS ? d->k : TUI_MAX_CLASS_SLOTS;
    class_bars(c, d, k, &l->a);
    class_table(c, d, k, &l->b);
    likert_panel(c, &l->c);
}
