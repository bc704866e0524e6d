/* View 3: bootstrap variance curves of the active file (Gupta, Basu & Arora 2023, "How Reliable
 * are the Metrics Used for Assessing Reliability in Medical Imaging?", Fig. 1-2; Kirchenbauer,
 * Oaks & Heim 2022, "What is Your Metric Telling You?", Fig. 7):
 * the size curve (metric mean with its 95% band, and |subset - full|) and the bins curve (ECE
 * against M with its band and the stable range). A long TTA file's curves also carry RECE-M
 * (the engine lists it in cu->metrics only for such files). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calscope/resample.h"
#include "chart/chart.h"
#include "calscope/jobs/curve.h"
#include "tui/blit.h"
#include "tui/theme.h"
#include "tui/views.h"

/* A row count in at most 5 columns (the table's width at 80 columns): 99999, then 100k..999k,
 * 1.0M..9.9M, 10M.. (a 10^6-row file's fractions printed 7 digits and pushed the deviations
 * out of their columns). */
static const char *rows5(char buf[8], size_t n)
{
    if (n < 100000) snprintf(buf, 8, "%5zu", n);
    else if (n < 999500) snprintf(buf, 8, "%4zuk", (n + 500) / 1000);
    else if (n < 9950000) snprintf(buf, 8, "%4.1fM", (double)n / 1e6);
    else snprintf(buf, 8, "%4.0fM", fmin((double)n / 1e6, 9999.0));
    return buf;
}

static void draw_curve(const tui_ctx *c, const tui_rect *r, const ch_curve *cv, int stale)
{
    ch_buf *b = ch_buf_new(r->w, r->h);
    if (!b) return;
    if (ch_curve_draw(b, 0, 0, r->w, r->h, cv, c->g) < 0)
        ch_buf_puts(b, 0, 0, -1, cv->title ? cv->title : "", CH_ROLE_TITLE, !c->g->utf8);
    tui_blit(b, r->y, r->x, stale);
    if (stale) tui_draw_stale_mark(r, r->y);
    ch_buf_free(b);
}

/* The curve in `slot`, or NULL after drawing its state (waiting, error) and progress into r. */
static const cs_curve *curve_result(const tui_ctx *c, int slot, const tui_rect *r,
                                    const char *name, int *stale, int *by_case)
{
    char what[32];
    snprintf(what, sizeof what, "the %s", name);
    const cs_job *resp = tui_model_result(c->m, slot, stale);
    if (!tui_draw_response_state(c, resp, r, what)) {
        const cs_curve_job *j = cs_curve_job_of(resp);
        *by_case = j->data->stats != NULL;   /* a statistics dataset resamples cases */
        return j->result;
    }
    tui_text(r->y, r->x, r->w, CH_ROLE_TITLE, name);
    if (cs_backend_busy(c->m->backend, slot))
        tui_draw_progress(c, r->y + 2, r->x + 1, 30, cs_backend_progress(c->m->backend, slot));
    return NULL;
}

/* A curve's series of one metric over its points (at most CS_CURVE_MAX_POINTS): the means,
 * and the 95 % band when lo and hi are given (NULL: no band). */
typedef struct point_series {
    double mean[CS_CURVE_MAX_POINTS], lo[CS_CURVE_MAX_POINTS], hi[CS_CURVE_MAX_POINTS];
} point_series;

static ch_series series_of(const cs_curve *cu, int metric, point_series *ps, const char *name,
                           int marker, int band)
{
    for (size_t i = 0; i < cu->n_points && i < CS_CURVE_MAX_POINTS; i++) {
        const cs_stat *st = &cu->points[i].stat[metric];
        ps->mean[i] = st->mean;
        ps->lo[i] = st->lo;
        ps->hi[i] = st->hi;
    }
    return (ch_series){ name, ps->mean, band ? ps->lo : NULL, band ? ps->hi : NULL, marker };
}

/* The points' x values. */
static void points_x(const cs_curve *cu, double *x)
{
    for (size_t i = 0; i < cu->n_points && i < CS_CURVE_MAX_POINTS; i++) x[i] = cu->points[i].x;
}

static void size_panel(const tui_ctx *c, const tui_layout *l)
{
    int stale;
    int by_case = 0;
    const cs_curve *cu = curve_result(c, TUI_SLOT_SIZE, &l->a, "size curve", &stale, &by_case);
    if (!cu) return;
    size_t n = cu->n_points;
    double x[CS_CURVE_MAX_POINTS], dev[CS_CURVE_MAX_POINTS];
    int has_rm = (cu->metrics & CS_METRIC_BIT(CS_METRIC_RECE_M)) != 0;
    int has_rg = (cu->metrics & CS_METRIC_BIT(CS_METRIC_RECE_G)) != 0;   /* not from statistics */
    points_x(cu, x);
    for (size_t i = 0; i < n && i < CS_CURVE_MAX_POINTS; i++)
        dev[i] = cu->points[i].stat[CS_METRIC_ECE].abs_dev;
    /* markers: one glyph per metric in both charts of the view (RECE-M is marker 4 in each) */
    point_series pe, pg, pm;
    const ch_series all[4] = {
        series_of(cu, CS_METRIC_ECE, &pe, "ECE", 1, 1),
        series_of(cu, CS_METRIC_RECE_G, &pg, "RECE-G", 2, 1),
        { "|ECE sub-full|", dev, NULL, NULL, 3 },
        series_of(cu, CS_METRIC_RECE_M, &pm, "RECE-M", 4, 1),
    };
    ch_series s[4];
    int ns = 0;
    for (int i = 0; i < 4; i++)
        if ((i != 1 || has_rg) && (i != 3 || has_rm)) s[ns++] = all[i];
    char title[128];
    snprintf(title, sizeof title, "%s: mean and 95%% band over %d subsets%s", by_case ? "cases" : "size curve",
             cu->repeats, cu->replace ? " (with replacement)" : "");
    ch_curve cv;
    memset(&cv, 0, sizeof cv);
    cv.title = title;
    cv.x = x;
    cv.n = n;
    cv.log_x = 1;
    cv.x_label = "fraction";
    cv.series = s;
    cv.n_series = (size_t)ns;
    cv.y_min = NAN;
    cv.y_max = NAN;
    draw_curve(c, &l->a, &cv, stale);

    /* the deviation table beside it: |metric(subset) - metric(all)| per fraction */
    const tui_rect *t = &l->c;
    if (t->w == 0) return;
    int role = stale ? CH_ROLE_STALE : CH_ROLE_TEXT;
    /* with RECE-M its column takes the place of rows (28 columns: rows = ceil(frac N)) */
    tui_text(t->y, t->x, t->w, TUI_ROLE_HEADING,
             has_rm ? " frac |ECE d| |RG d| |RM d|" : by_case ? " frac cases |ECE d|"
             : " frac  rows  |ECE d| |RG d|");
    char nb[8];
    int marked = 0;
    size_t i = 0;
    for (; i < n && (int)i + 1 < t->h; i++) {
        const cs_curve_point *p = &cu->points[i];
        const char *few = p->too_few ? "<" : "";   /* under the small-sample rule */
        marked |= p->too_few;
        char e[16], g[16], rm[16];
        tui_fmt_cell(e, sizeof e, 6, p->stat[CS_METRIC_ECE].abs_dev);
        tui_fmt_cell(g, sizeof g, 6, p->stat[CS_METRIC_RECE_G].abs_dev);
        tui_fmt_cell(rm, sizeof rm, 6, p->stat[CS_METRIC_RECE_M].abs_dev);
        if (has_rm)
            tui_textf(t->y + 1 + (int)i, t->x, t->w, role, "%5.2f  %s %s %s%s", p->x, e, g, rm, few);
        else if (by_case)
            tui_textf(t->y + 1 + (int)i, t->x, t->w, role, "%5.2f %s  %s%s", p->x, rows5(nb, p->rows), e, few);
        else
            tui_textf(t->y + 1 + (int)i, t->x, t->w, role, "%5.2f %s  %s %s%s", p->x, rows5(nb, p->rows), e, g,
                      few);
    }
    if (marked && (int)i + 2 < t->h)
        tui_textf(t->y + 2 + (int)i, t->x, t->w, role, "< too few: under %zu %s", cu->too_few_min,
                  by_case ? "cases" : "rows");
}

static void bins_panel(const tui_ctx *c, const tui_layout *l)
{
    int stale;
    int by_case = 0;
    const cs_curve *cu = curve_result(c, TUI_SLOT_BINS, &l->b, "bins curve", &stale, &by_case);
    if (!cu) return;
    size_t n = cu->n_points;
    double x[CS_CURVE_MAX_POINTS];
    int has_rm = (cu->metrics & CS_METRIC_BIT(CS_METRIC_RECE_M)) != 0;
    points_x(cu, x);
    point_series pe, pa, pm;
    ch_series s[3] = {
        series_of(cu, CS_METRIC_ECE, &pe, "ECE", 1, 1),
        series_of(cu, CS_METRIC_ACE, &pa, "ACE", 2, 0),
        series_of(cu, CS_METRIC_RECE_M, &pm, "RECE-M", 4, 1),
    };
    char title[160], range[64] = "no stable range";
    if (cu->stable_thin && cu->stable_first < 0 && by_case)   /* no claim under the small-sample rule */
        snprintf(range, sizeof range, "no stable range (%zu cases, <%d)", cu->n_cases, CS_TOO_FEW_CASES);
    else if (cu->stable_thin && cu->stable_first < 0)
        snprintf(range, sizeof range, "no stable range (<%d per bin)", CS_TOO_FEW_PER_BIN);
    if (cu->stable_first >= 0 && cu->stable_last >= cu->stable_first)
        snprintf(range, sizeof range, "stable %s %g..%g", cu->kdtree ? "gamma" : "M",
                 cu->points[cu->stable_first].x, cu->points[cu->stable_last].x);
    char sweep[32] = "";   /* the bin count ECE_sweep chooses on all samples (calscope/resample.h) */
    if (isfinite(cu->sweep_bins))
        snprintf(sweep, sizeof sweep, "; sweep M=%.0f", cu->sweep_bins);
    snprintf(title, sizeof title, "bins curve: ECE vs %s, %d resamples%s; %s%s",
             cu->kdtree ? "gamma" : "M", cu->repeats, by_case ? " of the cases" : "", range, sweep);
    ch_curve cv;
    memset(&cv, 0, sizeof cv);
    cv.title = title;
    cv.x = x;
    cv.n = n;
    cv.log_x = 1;
    cv.x_label = cu->kdtree ? "gamma" : "M";
    cv.series = s;
    cv.n_series = has_rm ? 3 : 2;
    cv.y_min = NAN;
    cv.y_max = NAN;
    draw_curve(c, &l->b, &cv, stale);
}

void tui_view_variance(const tui_ctx *c, const tui_layout *l)
{
    if (tui_draw_file_state(c, c->st->active, &l->body)) return;
    size_panel(c, l);
    bins_panel(c, l);
}
