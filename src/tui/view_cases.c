/* View 6: segmentation-style files (a `case` column; the per-case metrics and dataset
 * reliability histograms of Barfoot et al. 2024, "Average Calibration Error"): the cases of the
 * active file.
 *
 *   a  the dataset reliability histogram of one class (c / C cycle the class): probability bin
 *      x observed-frequency bin, each cell shaded by its number of cases, the mean curve over it
 *   b  the distribution of per-case ACE as a dot plot with mean ± sd, and the pooled values
 *   c  the per-case table (worst ACE first; the arrows scroll it, scroll.h)
 *
 * Everything comes from one per-case job (calscope/jobs/cases.h, cs_case_metrics_compute on
 * the backend), drawn with the dataset that job read; the view only draws. The mean curve is taken from the histogram (frequency-bin centres
 * weighted by their case counts), so it is the mean to within half a bin. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chart/heatmap.h"
#include "calscope/jobs/cases.h"
#include "tui/blit.h"
#include "tui/theme.h"
#include "tui/views.h"

/* Mean frequency per probability bin of class cls from the M x M histogram (NAN: no case). */
static void mean_curve(const cs_case_metrics *cm, size_t cls, double *out)
{
    size_t m = cm->m;
    for (size_t i = 0; i < m; i++) {
        const uint32_t *row = cm->hist + (cls * m + i) * m;
        double n = 0, s = 0;
        for (size_t j = 0; j < m; j++) {
            n += row[j];
            s += row[j] * ((double)j + 0.5) / (double)m;
        }
        out[i] = n > 0 ? s / n : NAN;
    }
}

static void draw_heatmap(const tui_ctx *c, const tui_rect *r, const cs_case_metrics *cm,
                         const cs_dataset *d, int stale)
{
    size_t cls = (size_t)c->st->klass < cm->k ? (size_t)c->st->klass : 0;
    char title[160];
    snprintf(title, sizeof title, "obs. freq vs p, class %s (%zu/%zu, c C)",
             d->class_names ? d->class_names[cls] : "?", cls + 1, cm->k);
    if (ch_text_width(title) > r->w)
        snprintf(title, sizeof title, "class %s %zu/%zu (c C)",
                 d->class_names ? d->class_names[cls] : "?", cls + 1, cm->k);
    double *curve = malloc(cm->m * sizeof *curve);
    ch_buf *b = ch_buf_new(r->w, r->h);
    if (curve && b) {
        mean_curve(cm, cls, curve);
        ch_heatmap hm = { cm->hist + cls * cm->m * cm->m, cm->m, curve, title };
        if (ch_heatmap_draw(b, 0, 0, r->w, r->h, &hm, c->g) < 0)
            ch_buf_puts(b, 0, 0, -1, "(too small for the heat map)", CH_ROLE_WARNING, 0);
        tui_blit(b, r->y, r->x, stale);
        if (stale) tui_draw_stale_mark(r, r->y);
    }
    ch_buf_free(b);
    free(curve);
}

static void draw_distribution(const tui_ctx *c, const tui_rect *r, const cs_case_metrics *cm,
                              int stale)
{
    if (r->w < 20 || r->h < 4) return;
    int role = stale ? CH_ROLE_STALE : CH_ROLE_TEXT;
    int y = r->y;
    tui_textf(y++, r->x, r->w, CH_ROLE_TITLE, "per-case ACE, %zu case%s", cm->n_cases,
              cm->n_cases == 1 ? "" : "s");
    char mean[16], sd[16], pe[16], pa[16];
    tui_fmt_cell(mean, sizeof mean, 0, cm->ace_stat.mean);
    tui_fmt_cell(sd, sizeof sd, 0, cm->ace_stat.sd);
    tui_fmt_cell(pe, sizeof pe, 0, cm->pooled_ece);
    tui_fmt_cell(pa, sizeof pa, 0, cm->pooled_ace);
    tui_textf(y++, r->x, r->w, role, "mean %s %s sd %s", mean, c->g->utf8 ? "\xc2\xb1" : "+-", sd);
    if (r->w >= 27)
        tui_textf(y++, r->x, r->w, role, "pooled ECE %s ACE %s", pe, pa);
    else
        tui_textf(y++, r->x, r->w, role, "pooled ACE %s", pa);
    int h = r->y + r->h - y;
    if (h < 4) return;
    ch_buf *b = ch_buf_new(r->w, h);
    if (!b) return;
    ch_strip s = { cm->ace, cm->n_cases, cm->ace_stat.mean, cm->ace_stat.sd, 0, "ACE " };
    ch_strip_draw(b, 0, 0, r->w, h, &s, c->g);
    tui_blit(b, y, r->x, stale);
    ch_buf_free(b);
}

static const cs_case_metrics *sort_cm;
static int by_ace_desc(const void *a, const void *b)
{
    double x = sort_cm->ace[*(const size_t *)a], y = sort_cm->ace[*(const size_t *)b];
    if (isnan(x)) return isnan(y) ? 0 : 1;
    if (isnan(y)) return -1;
    return x < y ? 1 : x > y ? -1 : 0;
}

static void draw_table(const tui_ctx *c, const tui_rect *r, const cs_case_metrics *cm,
                       const cs_dataset *d, int stale)
{
    if (r->w < 20 || r->h < 2) return;
    int role = stale ? CH_ROLE_STALE : CH_ROLE_TEXT;
    int y = r->y;
    /* the name column is as wide as the longest case name (1800 cases named case0000..case1799
     * must not all read "case169"): the ECE and MCE columns go first when the panel is narrow */
    int nm = 4;
    for (size_t i = 0; d->case_names && i < cm->n_cases; i++) {
        int len = (int)ch_text_width(d->case_names[cm->case_index[i]]);
        if (len > nm) nm = len;
    }
    int wide = r->w >= nm + 27;             /* narrow: case, n and ACE only */
    if (nm > r->w - 13) nm = r->w - 13 > 4 ? r->w - 13 : 4;
    if (wide)
        tui_textf(y++, r->x, r->w, TUI_ROLE_HEADING, "%-*s %5s %6s %6s %6s", nm, "case", "n", "ECE",
                  "ACE", "MCE");
    else
        tui_textf(y++, r->x, r->w, TUI_ROLE_HEADING, "%-*s %5s %6s", nm, "case", "n", "ACE");
    size_t *order = malloc((cm->n_cases ? cm->n_cases : 1) * sizeof *order);
    if (!order) return;
    for (size_t i = 0; i < cm->n_cases; i++) order[i] = i;
    sort_cm = cm;                            /* UI thread only: qsort has no context argument */
    qsort(order, cm->n_cases, sizeof *order, by_ace_desc);
    int shown, marker;
    size_t first = (size_t)tui_scroll_window(&c->st->scroll, TUI_SCROLL_CASES, (int)cm->n_cases,
                                             r->y + r->h - y, &shown, &marker);
    for (size_t s = first; s < first + (size_t)shown; s++) {
        size_t i = order[s];
        const char *name = d->case_names ? d->case_names[cm->case_index[i]] : "?";
        char e[16], a[16], m[16];
        tui_fmt_cell(e, sizeof e, 6, cm->ece[i]);
        tui_fmt_cell(a, sizeof a, 6, cm->ace[i]);
        tui_fmt_cell(m, sizeof m, 6, cm->mce[i]);
        if (wide)
            tui_textf(y++, r->x, r->w, role, "%-*.*s %5zu %s %s %s", nm, nm, name, cm->count[i], e, a, m);
        else
            tui_textf(y++, r->x, r->w, role, "%-*.*s %5zu %s", nm, nm, name, cm->count[i], a);
    }
    tui_draw_scroll_marker(r, y, (int)first, shown, (int)cm->n_cases, marker);
    free(order);
}

void tui_view_cases(const tui_ctx *c, const tui_layout *l)
{
    if (tui_draw_file_state(c, c->st->active, &l->body)) return;
    const tui_file *f = &c->m->files[c->st->active];
    const cs_dataset *d = f->data;
    const tui_rect *r = &l->body;
    if (!d->case_id && !d->stats) {
        int y = r->y;
        tui_textf(y++, r->x, r->w, CH_ROLE_TITLE, "per-case calibration: %s", f->name);
        tui_text(y + 1, r->x + 1, r->w - 2, CH_ROLE_TEXT,
                 "this file has no case column: per-case metrics and the dataset reliability");
        tui_text(y + 2, r->x + 1, r->w - 2, CH_ROLE_TEXT,
                 "histogram need a segmentation-style file (case,label,p_... per pixel),");
        tui_text(y + 3, r->x + 1, r->w - 2, CH_ROLE_TEXT,
                 "e.g. samples/seg_cases.csv, or segmentation volumes (calscope reduce).");
        return;
    }
    int stale;
    const cs_job *resp = tui_model_result(c->m, TUI_SLOT_CASES, &stale);
    if (tui_draw_response_state(c, resp, &l->a, "per-case metrics")) return;
    /* The result with the dataset it was computed on: never another file's arrays. */
    const cs_cases_job *job = cs_cases_job_of(resp);
    const cs_case_metrics *cm = &job->result;
    d = job->data;
    if (d != f->data) stale = 1;
    if (cm->n_cases == 0 || !cm->hist) {
        tui_text(r->y + 1, r->x + 1, r->w - 2, CH_ROLE_WARNING, "no case has a selected sample");
        return;
    }
    draw_heatmap(c, &l->a, cm, d, stale);
    draw_distribution(c, &l->b, cm, stale);
    draw_table(c, &l->c, cm, d, stale);
}
