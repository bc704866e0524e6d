/* View 1: reliability diagram of the active file (bars, or relplot's smoothed curve: o), its
 * confidence histogram, and the metrics table with bootstrap intervals. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "calscope/compat.h"
#include "calscope/resample.h"
#include "calscope/segstats.h"
#include "calscope/text.h"
#include "chart/chart.h"
#include "chart/histogram.h"
#include "chart/overlay.h"
#include "calscope/jobs/compat.h"
#include "calscope/jobs/metrics.h"
#include "chart/words.h"
#include "tui/blit.h"
#include "tui/theme.h"
#include "tui/views.h"

/* The diagram's plot rectangle in panel a (a title, no legend): what overlays and the
 * histogram under it line up with (chart.h ch_reliability_area). */
static void diagram_area(int w, int h, int *px, int *py, int *pw, int *ph)
{
    ch_reliability shape = { NULL, 0, 0, "", 0 };
    ch_reliability_area(&shape, w, h, px, py, pw, ph);
}

/* One entry of a chart legend: its glyph at (x, y) of the legend's three rows, then its text
 * two columns on (at most w columns; -1: to the edge). glyph CH_G_N: text alone at x. */
typedef struct legend_item {
    int x, y;
    ch_glyph glyph;
    ch_role role;
    int w;
    const char *text;
} legend_item;

/* The legend's three rows at the bottom of r, from its entries. */
static void draw_legend(const tui_ctx *c, const tui_rect *r, const legend_item *it, size_t n)
{
    ch_buf *lb = ch_buf_new(r->w, 3);
    if (!lb) return;
    for (size_t i = 0; i < n; i++) {
        int tx = it[i].x;
        if (it[i].glyph != CH_G_N) {
            ch_buf_glyph(lb, it[i].x, it[i].y, c->g, it[i].glyph, it[i].role);
            tx += 2;
        }
        ch_buf_puts(lb, tx, it[i].y, it[i].w, it[i].text, CH_ROLE_LABEL, 0);
    }
    tui_blit(lb, r->y + r->h - 3, r->x, 0);
    ch_buf_free(lb);
}

/* A line of counts at row y of r, wrapped between words when it is wider than r (a count is
 * never cut: "rows 1000000 used 1000000" then "rejected 0"). Returns the rows it took. */
static int counts_line(const tui_rect *r, int y, int role, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int counts_line(const tui_rect *r, int y, int role, const char *fmt, ...)
{
    char buf[CS_SPEC_MAX + 64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return tui_draw_lines(r, y, role, buf);
}

/* The heading and the catalogue's metrics in its table order, as the report lists them (a
 * metric that needs an id/tta file has no row on another file), with their intervals when the
 * panel is wide. *excl: an interval misses its value. Returns the next free line. */
static int metric_rows(const tui_rect *r, const cs_metrics_job *resp, int stale, int role, int *excl)
{
    int y = r->y, wide = r->w >= 32;
    tui_textf(y, r->x, r->w, TUI_ROLE_HEADING, "%-8s %7s %s", "metric", "value",
              wide ? (resp && resp->has_ci ? "  95% interval  " : "") : "");
    if (stale) tui_draw_stale_mark(r, y);
    y++;
    for (size_t i = 0; i < CS_METRIC_COUNT && y < r->y + r->h; i++) {
        const cs_metric_info *mi = cs_metric_at(i);
        int id = (int)mi->id;
        double v = cs_metric_value(&resp->result, id);
        if ((mi->needs & CS_NEEDS_TTA) && isnan(v)) continue;
        char val[32], ci[48] = "";
        tui_fmt_value(val, sizeof val, v);
        if (wide && resp->has_ci && (resp->ci.metrics & CS_METRIC_BIT(id))) {
            double lo = resp->ci.lo[id], hi = resp->ci.hi[id];
            /* "!" as in the report: the interval misses the value (a biased metric) */
            int x = cs_ci_excludes_value(&resp->ci, id);
            *excl |= x;
            if (isfinite(lo) && isfinite(hi)) snprintf(ci, sizeof ci, "[%.4f,%.4f]%s", lo, hi, x ? "!" : "");
            else if (cs_ci_needs_full_draws(&resp->ci, id)) snprintf(ci, sizeof ci, "n/a: m<n");   /* said below */
            else snprintf(ci, sizeof ci, "[n/a]");
        }
        tui_textf(y++, r->x, r->w, role, "%-8s %s %s", mi->label, val, ci);
    }
    return y;
}

/* What the numbers are over, from line y: samples and bins, the file's rows or statistics, the
 * class note, the selection, the intervals' method and draws, the "!" note. Returns the next
 * free line. */
static int counts_lines(const tui_ctx *c, const tui_rect *r, int y, const cs_metrics_job *resp, int role, int excl)
{
    const tui_state *st = c->st;
    const tui_file *f = &c->m->files[st->active];
    if (y < r->y + r->h) {
        size_t nonempty = 0, thin = 0;
        for (size_t i = 0; i < resp->result.n_bins; i++) {
            if (resp->result.bins[i].count) nonempty++;
            if (resp->result.bins[i].count && resp->result.bins[i].count < CH_THIN_DEFAULT) thin++;
        }
        y += counts_line(r, y, role, "n %zu  bins %zu/%zu  thin %zu", resp->result.n, nonempty,
                         resp->result.n_bins, thin);
    }
    char voxels[32];
    if (y < r->y + r->h && f->data && f->data->stats) {   /* no rows: per-bin sums per case */
        y += counts_line(r, y, CH_ROLE_TEXT, f->partial ? "reducing: %zu cases so far, fine %d"
                         : "statistics: %zu cases, fine %d", f->data->stats->n_cases, f->data->stats->fine);
        if (y < r->y + r->h)   /* what they hold (n above counts the same voxels) */
            y += counts_line(r, y, CH_ROLE_TEXT, "%s voxels%s", cs_text_count(voxels, sizeof voxels, f->data->n),
                             f->partial ? " so far" : "");
    } else if (y < r->y + r->h && f->data)
        y += counts_line(r, y, CH_ROLE_TEXT, "rows %zu used %zu rejected %zu",
                         f->summary.rows_read, f->summary.rows_used, f->summary.rows_rejected);
    if (y < r->y + r->h && f->data && f->summary.class_note)
        y += counts_line(r, y, CH_ROLE_TEXT, "classes %s", f->summary.class_note);
    if (y < r->y + r->h && st->settings.select[0])
        y += counts_line(r, y, CH_ROLE_TEXT, "select %s", st->settings.select);
    if (y < r->y + r->h && resp->has_ci)
    {
        tui_textf(y++, r->x, r->w, CH_ROLE_TEXT, "intervals: %s, R=%d", cs_ci_method_name(resp->ci.method),
                  resp->ci.repeats);
        if (resp->ci.draw_size < resp->ci.units && y < r->y + r->h)   /* m out of n (calscope/resample.h) */
            tui_textf(y++, r->x, r->w, CH_ROLE_TEXT, "m<n: drew %zu of %zu", resp->ci.draw_size, resp->ci.units);
        if (resp->ci.draw_size < resp->ci.units && y < r->y + r->h)
            tui_textf(y++, r->x, r->w, CH_ROLE_TEXT, "n/a: needs --boot-size full");
    }
    if (y < r->y + r->h && excl)   /* the report's note, short: see `calscope report --help` */
        tui_textf(y++, r->x, r->w, CH_ROLE_TEXT, "]! misses the value: biased");
    return y;
}

/* The legend: the same glyphs as the chart, so it reads without colour. */
static void table_legend(const tui_ctx *c, const tui_rect *r, const cs_metrics_job *resp)
{
    char thin[24];
    snprintf(thin, sizeof thin, "thin (<%d)", CH_THIN_DEFAULT);
    if (c->st->smooth && resp->result.smece_mu) {
        static const legend_item curve[] = {
            { 0, 0, CH_G_MARK1, CH_ROLE_SERIES1, 12, "acc, dense" },
            { 14, 0, CH_G_DIAG, CH_ROLE_DIAGONAL, -1, "calibrated" },
            { 0, 1, CH_G_DOT, CH_ROLE_SERIES1, 12, "acc, sparse" },
            { 14, 1, CH_G_VBAR4, CH_ROLE_COUNT, -1, "density (d)" },
            { 0, 2, CH_G_N, 0, -1, "relplot's smoothed curve (o: bars)" },
        };
        draw_legend(c, r, curve, sizeof curve / sizeof curve[0]);
    } else {
        legend_item bars[] = {
            { 0, 0, CH_G_BAR, CH_ROLE_BAR, 14, "accuracy" },
            { 14, 0, CH_G_DIAG, CH_ROLE_DIAGONAL, -1, "calibrated" },
            { 0, 1, CH_G_OVER, CH_ROLE_OVER, 12, "over-conf" },
            { 14, 1, CH_G_UNDER, CH_ROLE_UNDER, -1, "under-conf" },
            { 0, 2, CH_G_THIN, CH_ROLE_THIN, -1, thin },
            { 14, 2, CH_G_MARK1, CH_ROLE_SERIES1, -1, "RECE-G curve (g)" },
        };
        size_t n = sizeof bars / sizeof bars[0];
        if (!(c->st->rece_overlay && resp->result.rece_acc)) n--;   /* the overlay is off */
        draw_legend(c, r, bars, n);
    }
}

static void draw_table(const tui_ctx *c, const tui_rect *r, const cs_metrics_job *resp, int stale)
{
    int role = stale ? CH_ROLE_STALE : CH_ROLE_TEXT, excl = 0;
    int y = metric_rows(r, resp, stale, role, &excl);
    y = counts_lines(c, r, y + 1, resp, role, excl);
    if (y + 2 < r->y + r->h) table_legend(c, r, resp);
}

static const char *const lib_short[CS_COMPAT_COUNT] = {
    "torchm", "tm-bin", "netcal", "relplot", "verified", "robustc", "monai"
};

static const char *moved_glyph(const tui_ctx *c) { return c->g->utf8 ? "\xe2\x96\xb2" : "^"; }

/* The compat panel (x): every library's ECE/ACE/MCE/RMS beside calscope's, and the samples the
 * selected library (X) bins differently, with the rule. */
/* The compat panel's four metrics, in the order its table shows them. */
static const int compat_ms[4] = { CS_CM_ECE, CS_CM_ACE, CS_CM_MCE, CS_CM_RMS };
static const char *const compat_mn[4] = { "ECE", "ACE", "MCE", "RMS" };

/* The heading and a row per library (calscope's first; the chosen one marked), ACE left out
 * when the panel is narrow. Returns the next free line. */
static int compat_table(const tui_ctx *c, const tui_rect *r, const cs_compat_report *cr, int role, int stale)
{
    int y = r->y, lib = c->st->compat_lib % CS_COMPAT_COUNT, four = r->w >= 33;
    char line[256];
    int len = snprintf(line, sizeof line, "%-9s", "compat");
    for (int i = 0; i < 4; i++) if (four || i != 1) len += snprintf(line + len, sizeof line - (size_t)len, "%6s", compat_mn[i]);
    tui_text(y, r->x, r->w, TUI_ROLE_HEADING, line);
    if (stale) tui_draw_stale_mark(r, y);
    y++;
    for (int l = -1; l < CS_COMPAT_COUNT && y < r->y + r->h; l++) {
        if (l >= 0 && !(cr->mask & (1u << l))) continue;
        const double *v = l < 0 ? cr->calscope : cr->lib[l].m;
        len = snprintf(line, sizeof line, "%s%-8s", l == lib ? ">" : " ", l < 0 ? "calscope" : lib_short[l]);
        for (int i = 0; i < 4; i++) {
            if (!four && i == 1) continue;
            double x = v[compat_ms[i]];
            if (isfinite(x)) {
                char num[16];
                snprintf(num, sizeof num, "%.4f", x);
                len += snprintf(line + len, sizeof line - (size_t)len, "%6s", num[0] == '0' ? num + 1 : num);
            } else {
                len += snprintf(line + len, sizeof line - (size_t)len, "%6s", "n/a");
            }
        }
        tui_text(y++, r->x, r->w, l == lib ? TUI_ROLE_PROMPT : role, line);
    }
    return y;
}

/* Why the library has no ECE/ACE/MCE/RMS under this lens / binning / distance: metrics with
 * the same reason on one wrapped line ("ECE MCE RMS n/a: ..."), from line y. Returns the next
 * free line. */
static int compat_na_notes(const tui_rect *r, int y, const cs_compat_lib_result *lr, int role)
{
    char line[256];
    unsigned na_shown = 0;
    for (int i = 0; i < 4 && y < r->y + r->h - 1; i++) {
        if (!(lr->na_settings & (1u << compat_ms[i])) || (na_shown & (1u << i))) continue;
        int len = 0;
        for (int j = i; j < 4; j++)
            if ((lr->na_settings & (1u << compat_ms[j])) && strcmp(lr->notes[compat_ms[j]], lr->notes[compat_ms[i]]) == 0) {
                len += snprintf(line + len, sizeof line - (size_t)len, "%s ", compat_mn[j]);
                na_shown |= 1u << j;
            }
        snprintf(line + len, sizeof line - (size_t)len, "n/a: %s", lr->notes[compat_ms[i]]);
        tui_rect nr = { r->x, y, r->w, r->y + r->h - 1 - y };
        y += tui_draw_lines(&nr, y, role, line);
    }
    return y;
}

/* The moved samples from line y, each with its rule in full (wrapped between words,
 * continuation lines indented); the list scrolls with the arrows when it is longer than the
 * panel. Returns the next free line. */
static int compat_moves(const tui_ctx *c, const tui_rect *r, int y, const cs_compat_lib_result *lr, int role)
{
    enum { LINES_MAX = CS_COMPAT_EXAMPLES * 6 };
    static char lines[LINES_MAX][256];          /* UI thread only */
    int total = 0;
    for (size_t i = 0; i < lr->n_examples && total < LINES_MAX; i++) {
        const cs_compat_move *mv = &lr->examples[i];
        char lb[16], text[256], wrapped[1024];
        if (mv->lib_bin < 0) snprintf(lb, sizeof lb, "none");
        else snprintf(lb, sizeof lb, "%d", mv->lib_bin);
        snprintf(text, sizeof text, "r%-5u %.4f %2d>%-4s %s", (unsigned)mv->row, mv->value,
                 mv->cs_bin, lb, cs_compat_rule_text(mv->rule));
        ch_wrap(text, r->w - 2, wrapped, sizeof wrapped);
        int first = 1;
        for (char *ln = strtok(wrapped, "\n"); ln && total < LINES_MAX; ln = strtok(NULL, "\n")) {
            snprintf(lines[total++], sizeof lines[0], "%s%s", first ? "" : "  ", ln);
            first = 0;
        }
    }
    int shown, marker;
    int top = tui_scroll_window(&c->st->scroll, TUI_SCROLL_COMPAT, total, r->y + r->h - y - 1,
                                &shown, &marker);
    for (int i = top; i < top + shown; i++) tui_text(y++, r->x, r->w, role, lines[i]);
    tui_draw_scroll_marker(r, y, top, shown, total, marker);
    return marker ? y + 1 : y;
}

static void draw_compat(const tui_ctx *c, const tui_rect *r)
{
    int stale;
    const cs_job *job = tui_model_result(c->m, TUI_SLOT_COMPAT, &stale);
    if (cs_backend_busy(c->m->backend, TUI_SLOT_COMPAT)) stale = 1;
    int lib = c->st->compat_lib % CS_COMPAT_COUNT;
    if (!job) { tui_text(r->y, r->x, r->w, CH_ROLE_TEXT, "compat: computing..."); return; }
    if (job->status != CS_OK) {
        tui_draw_lines(r, r->y, TUI_ROLE_ERROR, job->err.msg);
        return;
    }
    const cs_compat_job *resp = cs_compat_job_of(job);
    const cs_compat_report *cr = &resp->report;
    const cs_compat_lib_result *lr = &cr->lib[lib];
    int role = stale ? CH_ROLE_STALE : CH_ROLE_TEXT;
    int y = compat_table(c, r, cr, role, stale);
    char line[sizeof lr->semantics + 64];
    tui_rect below = { r->x, y, r->w, r->y + r->h - 1 - y };
    if (!lr->applicable) {
        /* the library cannot take this file at all: its reason, not a count of 0 moves */
        snprintf(line, sizeof line, "%s (X: lib): %s", cs_compat_name((cs_compat_lib)lib), lr->semantics);
        tui_draw_lines(&below, y, TUI_ROLE_HEADING, line);
        return;
    }
    int len = snprintf(line, sizeof line, "%s moves %zu of %zu", cs_compat_name((cs_compat_lib)lib), lr->moved, cr->n);
    if (len + 9 <= r->w) snprintf(line + len, sizeof line - (size_t)len, " (X: lib)");   /* the hint gives way */
    y += tui_draw_lines(&below, y, TUI_ROLE_HEADING, line);
    y = compat_na_notes(r, y, lr, role);
    y = compat_moves(c, r, y, lr, role);
    if (y < r->y + r->h) {
        if (resp->bin_moved)
            tui_textf(r->y + r->h - 1, r->x, r->w, CH_ROLE_LABEL, "%s bins holding moved samples",
                      moved_glyph(c));
        else
            tui_text(r->y + r->h - 1, r->x, r->w, CH_ROLE_LABEL, "bin marks: top1 uniform only");
    }
}

/* Marks under the x axis the calscope bins that hold samples the selected library bins
 * elsewhere. */
static void mark_moved_bins(const tui_ctx *c, ch_buf *b, int h, int w)
{
    int stale;
    const cs_job *job = tui_model_result(c->m, TUI_SLOT_COMPAT, &stale);
    const cs_compat_job *resp = job && job->status == CS_OK ? cs_compat_job_of(job) : NULL;
    if (!resp || !resp->bin_moved) return;
    int m = resp->report.bins, lib = c->st->compat_lib % CS_COMPAT_COUNT;
    if (m <= 0 || m != c->st->settings.bins) return;
    int px, py, W, H;
    diagram_area(w, h, &px, &py, &W, &H);
    for (int i = 0; i < m; i++) {
        if (!resp->bin_moved[(size_t)lib * (size_t)m + (size_t)i]) continue;
        int x = px + 1 + (int)((i + 0.5) / m * (W - 1));
        ch_buf_puts(b, x, py + H, 1, moved_glyph(c), CH_ROLE_WARNING, 0);
    }
}

/* o: relplot's smoothed reliability curve at smECE's bandwidth in panel a, in the bars' frame
 * (axes, diagonal; the count strip's row holds the density), or why this result has none. The
 * title names the estimate and its bandwidth: the picture is the number's. */
static void draw_smooth(const tui_ctx *c, const tui_rect *a, const cs_metrics_job *resp, int stale)
{
    const cs_result *r = &resp->result;
    const tui_file *f = &c->m->files[c->st->active];
    const char *sig = c->g->utf8 ? "\xcf\x83" : "sigma";
    char lens[64], title[256], why[512];
    cs_settings_lens_name(&resp->settings, lens, sizeof lens);   /* what it was computed for */
    if (!r->smece_mu) {
        if (f->data && f->data->stats)
            snprintf(why, sizeof why, "No smooth curve: a statistics file keeps per-bin sums, not "
                     "the rows the kernel smooths. o: bars.");
        else
            snprintf(why, sizeof why, "No smooth curve: smECE and relplot's curve are defined on the "
                     "top1 and class:C lenses only, not on %s. l: next lens, o: bars.", lens);
        tui_textf(a->y, a->x, a->w, CH_ROLE_TITLE, "%s  %s  smooth", f->name, lens);
        if (stale) tui_draw_stale_mark(a, a->y);
        tui_rect wr = { a->x, a->y + 2, a->w, a->h - 2 };
        tui_draw_lines(&wr, wr.y, stale ? CH_ROLE_STALE : CH_ROLE_TEXT, why);
        return;
    }
    snprintf(title, sizeof title, "%s  %s  smooth  smECE %.4f  %s %.4f", f->name, lens, r->smece,
             sig, r->smece_sigma);
    if (ch_text_width(title) > a->w)
        snprintf(title, sizeof title, "smooth  smECE %.4f  %s %.4f", r->smece, sig, r->smece_sigma);
    ch_buf *b = ch_buf_new(a->w, a->h);
    if (!b) return;
    ch_reliability frame = { NULL, 0, 0, title, 0 };
    if (ch_reliability_draw(b, 0, 0, a->w, a->h, &frame, c->g) < 0) {
        ch_buf_puts(b, 0, 0, -1, "(too small for the diagram)", CH_ROLE_WARNING, 0);
    } else {
        int px, py, W, H;
        diagram_area(a->w, a->h, &px, &py, &W, &H);
        ch_smooth_draw(b, px, py, W, H, r->smece_mu, r->smece_density, r->n_smece_curve,
                       py + H + 2, c->g, CH_G_MARK1, CH_G_DOT, CH_ROLE_SERIES1);
        ch_buf_puts(b, px - 2, py + H + 2, 1, "d", CH_ROLE_LABEL, 0);   /* not the counts' n */
    }
    tui_blit(b, a->y, a->x, stale);
    if (stale) tui_draw_stale_mark(a, a->y);
    ch_buf_free(b);
}

void tui_view_reliability(const tui_ctx *c, const tui_layout *l)
{
    const tui_state *st = c->st;
    tui_rect whole = { l->body.x, l->body.y, l->body.w, l->body.h };
    if (tui_draw_file_state(c, st->active, &whole)) return;
    int stale;
    const cs_job *job = tui_model_result(c->m, TUI_SLOT_METRICS((int)st->active), &stale);
    if (tui_draw_response_state(c, job, &l->a, "metrics")) return;
    const cs_metrics_job *resp = cs_metrics_job_of(job);

    char lens[64], title[256];
    cs_settings_lens_name(&st->settings, lens, sizeof lens);
    snprintf(title, sizeof title, "%s  %s %d %s", c->m->files[st->active].name, lens,
             st->settings.bins, tui_binning_spelling(st->settings.binning));
    if (ch_text_width(title) > l->a.w)        /* narrow: the status line has the settings */
        snprintf(title, sizeof title, "%s", c->m->files[st->active].name);

    ch_buf *b = st->smooth ? NULL : ch_buf_new(l->a.w, l->a.h);
    if (st->smooth) draw_smooth(c, &l->a, resp, stale);
    if (b) {
        ch_reliability rel = { resp->result.bins, resp->result.n_bins, 0, title, 0 };
        if (ch_reliability_draw(b, 0, 0, l->a.w, l->a.h, &rel, c->g) < 0)
            ch_buf_puts(b, 0, 0, -1, "(too small for the diagram)", CH_ROLE_WARNING, 0);
        else if (st->rece_overlay && resp->result.rece_acc) {
            int px, py, W, H;
            diagram_area(l->a.w, l->a.h, &px, &py, &W, &H);
            ch_points_draw(b, px, py, W, H, resp->result.rece_conf, resp->result.rece_acc,
                           resp->result.n_rece, c->g, CH_G_MARK1, CH_ROLE_SERIES1);
        }
        if (st->compat) mark_moved_bins(c, b, l->a.h, l->a.w);
        tui_blit(b, l->a.y, l->a.x, stale);
        if (stale) tui_draw_stale_mark(&l->a, l->a.y);
        ch_buf_free(b);
    }
    if (l->c.h > 0) {
        /* the histogram's [0,1] axis lines up with the diagram's (same margin and width rule) */
        int px, py, W, H;
        diagram_area(l->a.w, l->a.h, &px, &py, &W, &H);
        ch_buf *hb = ch_buf_new(l->c.w, l->c.h);
        if (hb) {
            ch_histogram h = { resp->result.bins, resp->result.n_bins, "hist", px, W };
            ch_histogram_draw(hb, 0, 0, l->c.w, l->c.h, &h, c->g);
            ch_buf_puts(hb, px + W + 2, l->c.h - 1, -1, "samples/bin", CH_ROLE_LABEL, 0);
            tui_blit(hb, l->c.y, l->c.x, stale);
            ch_buf_free(hb);
        }
    }
    if (st->compat) draw_compat(c, &l->b);
    else draw_table(c, &l->b, resp, stale);
}
