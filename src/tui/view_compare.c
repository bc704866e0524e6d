/* View 5: the loaded files side by side: small reliability diagrams, and a table of their
 * metrics with the paired-bootstrap difference of ECE against the reference (the active file),
 * taken from the methods table so that every panel shows the numbers `report --compare` prints. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "calscope/catalogue.h"
#include "calscope/resample.h"
#include "calscope/methods.h"
#include "calscope/recal.h"
#include "chart/chart.h"
#include "calscope/jobs/methods.h"
#include "calscope/jobs/metrics.h"
#include "chart/words.h"
#include "tui/blit.h"
#include "tui/theme.h"
#include "tui/views.h"

/* 1 when row's paired numbers rest on too few pairs under the small-sample rule (cs_too_few):
 * marked "?" instead of "*" or "!", they decide nothing. */
static int too_few_pairs(const tui_ctx *c, const cs_method_row *row)
{
    return row->has_diff && cs_too_few(row->n_pairs, cs_too_few_bins(&c->st->settings), row->by_case);
}

/* The legend of "?" when some row of t has too few pairs (c's settings give the rule's bins). */
static int too_few_note(const tui_ctx *c, const cs_methods *t, char *buf, size_t size)
{
    for (size_t i = 0; i < t->n; i++)
        if (too_few_pairs(c, &t->rows[i])) {
            snprintf(buf, size, "? too few paired %s (%zu, fewer than %zu) to decide anything",
                     t->rows[i].by_case ? "cases" : "samples", t->rows[i].n_pairs,
                     cs_too_few_min(cs_too_few_bins(&c->st->settings), t->rows[i].by_case));
            return 1;
        }
    return 0;
}

/* Column col's paired difference of a method's row ("-0.0073 [-0.0110,-0.0006]* 0.982": method
 * - reference, its 95% interval, * when it excludes 0, ? when `few` pairs, P<), or why there is
 * none. The methods table and the diagrams panel both print it, so they cannot differ. */
static void paired_text(const cs_method_row *row, int col, int few, char *buf, size_t size)
{
    if (row->has_diff && row->equal[col])   /* rounding noise: a tie */
        snprintf(buf, size, "%+8.4f [%+.4f,%+.4f]  %5s", 0.0, 0.0, 0.0, "=");
    else if (row->has_diff && !isfinite(row->diff[col]))   /* no number: say where there is one */
        snprintf(buf, size, "%8s (%s)", "n/a", cs_methods_na_reason(col));
    else if (row->has_diff && !(isfinite(row->dlo[col]) && isfinite(row->dhi[col])))   /* m out of n */
        snprintf(buf, size, "%+8.4f %s", row->diff[col], CS_NEEDS_FULL_DRAWS_TEXT);
    else if (row->has_diff && few)   /* under the small-sample rule: neither ! nor * */
        snprintf(buf, size, "%+8.4f [%+.4f,%+.4f]? %5.3f", row->diff[col], row->dlo[col], row->dhi[col],
                 row->pbetter[col]);
    else if (row->has_diff)   /* ! the interval misses its own difference (the legend says why) */
        snprintf(buf, size, "%+8.4f [%+.4f,%+.4f]%s%c %5.3f", row->diff[col], row->dlo[col], row->dhi[col],
                 row->diff_excludes[col] ? "!" : "", cs_methods_excludes_zero(row->dlo[col], row->dhi[col]) ? '*' : ' ',
                 row->pbetter[col]);
    else
        snprintf(buf, size, "%s", row->diff_err.msg[0] ? row->diff_err.msg : row->err.msg);
}

static const cs_methods *methods_result(const tui_model *m, int *stale);

/* The methods table's row of file f (methods: the files, then recalibrations), or NULL. */
static const cs_method_row *file_row(const tui_model *m, const cs_methods *mt, size_t f)
{
    for (size_t i = 0; mt && i < mt->n && i < m->n_methods; i++)
        if (m->method_recal[i] < 0 && m->method_file[i] == f) return &mt->rows[i];
    return NULL;
}

/* Under a selection on the reference (--select-on reference) every panel shows the methods
 * table's numbers: they are on the reference's selected samples, a file's own metrics are on
 * its own. Returns the row to read, or NULL to read the file's metrics. */
static const cs_method_row *cut_row(const tui_model *m, const cs_methods *mt, size_t f)
{
    const cs_method_row *row = mt && mt->selected && !mt->select_each ? file_row(m, mt, f) : NULL;
    return row && row->ok ? row : NULL;
}

/* The selection's line (cs_methods_selection_line) under the reference's file name. */
static void selection_line(const tui_ctx *c, const cs_methods *t, char *buf, size_t size)
{
    char ref[256];
    tui_model_method_name(c->m, t->ref, ref, sizeof ref);
    cs_methods_selection_line(t, c->st->settings.select, ref, buf, size);
}

/* Method i's verdict line on --verdict-metric (default ECE), as the report's (cs_verdict_line). */
static void verdict_line(const tui_ctx *c, const cs_methods *t, size_t i, char *buf, size_t size)
{
    char me[256], ref[256];
    tui_model_method_name(c->m, i, me, sizeof me);
    tui_model_method_name(c->m, t->ref, ref, sizeof ref);
    if (t->select_each) {
        snprintf(buf, size, "verdict: n/a; %s", CS_METHODS_EACH_NO_PAIRS);
        return;
    }
    cs_verdict v = cs_methods_verdict(t, i, c->st->verdict_metric, cs_too_few_bins(&c->st->settings));
    cs_verdict_line(&v, me, ref, buf, size);
}

/* The files' names in w columns each: the shortest forms that still tell them apart
 * (chart/words.h; "resnet5~_seed1.csv" beside "resnet5~_seed2.csv"). */
typedef char file_label[64];
static void file_names(const tui_ctx *c, int w, file_label *out)
{
    const char *names[TUI_MAX_FILES];
    char *dst[TUI_MAX_FILES];
    size_t n = c->m->n_files < TUI_MAX_FILES ? c->m->n_files : TUI_MAX_FILES;
    for (size_t f = 0; f < n; f++) {
        names[f] = c->m->files[f].name;
        dst[f] = out[f];
    }
    ch_short_names(names, n, w, dst, sizeof out[0]);
}

static void diagrams(const tui_ctx *c, const tui_rect *a)
{
    int mstale = 0;
    const cs_methods *mt = methods_result(c->m, &mstale);
    size_t n = c->m->n_files;
    int each = n ? a->w / (int)n : a->w;
    if (each < CH_RELIABILITY_MIN_W + 1) each = CH_RELIABILITY_MIN_W + 1;
    size_t fit = (size_t)(a->w / each);
    if (fit > n) fit = n;
    /* the files not drawn are named, never dropped silently: on the panel's last row when the
     * diagrams can spare it, else in the last diagram's place */
    int h = a->h;
    tui_rect more = { 0, 0, 0, 0 };
    if (fit < n && h - 1 >= CH_RELIABILITY_MIN_H) {
        h--;
        more = (tui_rect){ a->x, a->y + h, a->w, 1 };
    } else if (fit < n && fit > 1) {
        fit--;
        more = (tui_rect){ a->x + (int)fit * each, a->y, a->w - (int)fit * each, a->h };
    }
    /* keep the active file in sight */
    size_t first = c->st->active >= fit ? c->st->active - fit + 1 : 0;
    if (fit < n) {
        char note[TUI_MAX_FILES * 280];
        int len = snprintf(note, sizeof note, "+%zu more (f F):", n - fit);
        const char *sep = " ";
        for (size_t f = 0; f < n; f++)
            if (f < first || f >= first + fit) {
                len += snprintf(note + len, sizeof note - (size_t)len, "%s%s", sep, c->m->files[f].name);
                sep = ", ";
            }
        tui_draw_lines(&more, more.y, CH_ROLE_LABEL, note);
    }
    file_label names[TUI_MAX_FILES];
    file_names(c, each - 3, names);        /* "> " and the gap */
    for (size_t i = 0; i < fit; i++) {
        size_t f = first + i;
        tui_rect r = { a->x + (int)i * each, a->y, each - 1, h };
        const tui_file *file = &c->m->files[f];
        if (file->state != TUI_LOADED) {
            tui_text(r.y, r.x, r.w, CH_ROLE_TITLE, names[f]);
            tui_text(r.y + 1, r.x, r.w, file->state == TUI_FAILED ? TUI_ROLE_ERROR : CH_ROLE_TEXT,
                     file->state == TUI_FAILED ? "failed to load" : "loading...");
            continue;
        }
        int stale;
        const cs_job *resp = tui_model_result(c->m, TUI_SLOT_METRICS((int)f), &stale);
        const cs_method_row *row = cut_row(c->m, mt, f);
        if (row) stale = mstale;
        else if (!resp || resp->status != CS_OK) {
            tui_text(r.y, r.x, r.w, CH_ROLE_TITLE, names[f]);
            tui_text(r.y + 1, r.x, r.w, CH_ROLE_TEXT, resp ? resp->err.msg : "computing...");
            continue;
        }
        ch_buf *b = ch_buf_new(r.w, r.h);
        if (!b) continue;
        char title[96];
        snprintf(title, sizeof title, "%s%s", f == c->st->active ? "> " : "", names[f]);
        const cs_result *res = row ? NULL : &cs_metrics_job_of(resp)->result;
        ch_reliability rel = { row ? row->bins : res->bins, row ? row->n_bins : res->n_bins, 0, title, 0 };
        ch_reliability_draw(b, 0, 0, r.w, r.h, &rel, c->g);
        tui_blit(b, r.y, r.x, stale);
        if (stale) tui_draw_stale_mark(&r, r.y);
        ch_buf_free(b);
    }
}

/* ---- methods: the table, the rankings and the mass panel (calscope/methods.h) ---- */

static const char *const col_label[CS_METHODS_NCOL] = {
    "acc", "ECE", "ACE", "MCE", "AECE", "RECE-G", "SCE", "Brier", "NLL", "smECE", "L2CE",
    "L2CE-deb", "ECEsweep", "topk"
};

static void col_text(const cs_methods *t, int col, char *buf, size_t size)
{
    if (col == CS_METHODS_COL_TOPK) snprintf(buf, size, "top%d", t->k);
    else snprintf(buf, size, "%s", col_label[col]);
}

/* The methods' names in w columns each: the shortest names that still tell them apart
 * (chart/words.h; "breast_ca~lr+platt"), the rule the report's tables use. */
typedef char method_label[64];
static void method_names(const tui_ctx *c, size_t n, int w, method_label *out)
{
    static char full[CS_METHODS_MAX][256];
    const char *names[CS_METHODS_MAX];
    char *dst[CS_METHODS_MAX];
    if (n > CS_METHODS_MAX) n = CS_METHODS_MAX;
    for (size_t i = 0; i < n; i++) {
        tui_model_method_name(c->m, i, full[i], sizeof full[i]);
        names[i] = full[i];
        dst[i] = out[i];
    }
    ch_short_names(names, n, w, dst, sizeof out[0]);
}

/* First column shown so that the focused one is visible with `fit` columns. */
static int first_col(int focus, int fit)
{
    if (fit < 1) fit = 1;
    return focus < fit ? 0 : focus - fit + 1;
}

/* The methods table when it is current for the methods the model shows, else NULL; *stale
 * when a newer one is being computed. */
static const cs_methods *methods_result(const tui_model *m, int *stale)
{
    const cs_job *resp = tui_model_result(m, TUI_SLOT_METHODS, stale);
    if (cs_backend_busy(m->backend, TUI_SLOT_METHODS)) *stale = 1;
    for (int i = 0; i < TUI_MAX_RECAL; i++)
        if (m->recal[i].method >= 0 && m->recal[i].state == 1) *stale = 1;
    const cs_methods_job *mj = resp && resp->status == CS_OK ? cs_methods_job_of(resp) : NULL;
    return mj && mj->result.n == m->n_methods ? &mj->result : NULL;
}

/* Methods table, or draws why there is none; returns NULL then. */
static const cs_methods *methods_resp(const tui_ctx *c, const tui_rect *r, int *stale)
{
    const tui_model *m = c->m;
    const cs_methods *t = methods_result(m, stale);
    if (t) return t;
    const cs_job *resp = tui_model_result(m, TUI_SLOT_METHODS, stale);
    size_t loadedn = 0;
    for (size_t f = 0; f < m->n_files; f++) loadedn += m->files[f].state == TUI_LOADED;
    int y = r->y;
    if (resp && resp->status != CS_OK)
        y += tui_draw_lines(r, y, TUI_ROLE_ERROR, resp->err.msg);
    else if (loadedn + (size_t)c->st->n_recal < 2)
        y += tui_draw_lines(r, y, CH_ROLE_TEXT,
                            "methods: load two or more files (calscope A.csv B.csv),\n"
                            "or press t to pick a recalibration of the active file");
    else
        y += tui_draw_lines(r, y, CH_ROLE_TEXT, "methods: computing (recalibration, paired bootstrap)...");
    for (int i = 0; i < TUI_MAX_RECAL && y < r->y + r->h; i++)
        if (c->m->recal[i].state == 3)
            tui_textf(y++, r->x, r->w, TUI_ROLE_ERROR, "%s: %s", cs_recal_name(c->m->recal[i].method),
                      c->m->recal[i].error);
    return NULL;
}

/* ---- a methods panel scrolls: its title and column header stay, the lines under them move ----
 * A panel's body is written as numbered lines; a first pass only counts them (rows 0), then
 * the window is taken from the panel's scroll position (scroll.h) and a second pass draws the
 * lines inside it, so the table, the fitted parameters and the legends all stay reachable. */
typedef struct panel_lines {
    const tui_rect *r;
    int y0;      /* screen row of the window's first line */
    int first;   /* first line drawn */
    int rows;    /* lines drawn (0: count only) */
    int n;       /* lines written so far */
} panel_lines;

static void line_put(panel_lines *L, int role, const char *text)
{
    int i = L->n++;
    if (i >= L->first && i < L->first + L->rows)
        tui_text(L->y0 + i - L->first, L->r->x, L->r->w, role, text);
}

static void line_putf(panel_lines *L, int role, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void line_putf(panel_lines *L, int role, const char *fmt, ...)
{
    char buf[2400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    line_put(L, role, buf);
}

/* The footnote of "!" on a paired interval, and whether column col has one to explain. */
#define PAIRED_MISS_NOTE "! the paired interval misses its difference: a percentile bootstrap of biased statistics"
static int any_misses(const cs_methods *t, int col)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->rows[i].has_diff && t->rows[i].diff_excludes[col]) return 1;
    return 0;
}

/* text word-wrapped to w columns, a line each (chart/words.h) */
static void line_put_wrapped(panel_lines *L, int role, const char *text, int w)
{
    char wrapped[4096];
    ch_wrap(text, w > 1 ? w : 1, wrapped, sizeof wrapped);
    for (char *s = wrapped, *nl; s; s = nl ? nl + 1 : NULL) {
        nl = strchr(s, '\n');
        if (nl) *nl = '\0';
        if (*s || nl) line_put(L, role, s);   /* not the empty rest after a last newline */
    }
}

/* What a panel body needs to write its lines: the table, the names, the first column shown. */
typedef struct panel_args {
    const tui_ctx *c;
    const cs_methods *t;
    method_label *names;   /* shortest distinguishing names (method_names) */
    int nw, cw, first, fit, focus, role, w;   /* name and metric column widths, columns shown */
    int stale;   /* the files' table: the methods table is being recomputed */
    int skip;    /* the files' table: the first method whose verdict was not pinned above it */
} panel_args;

/* Draws the body below the `pinned` rows already drawn at the top of r, in a window kept by
 * scroll position s, with the "more" marker on its last row when it does not fit. */
static void draw_scrolled(const panel_args *a, const tui_rect *r, int pinned, tui_scroll_table s,
                          void (*body)(const panel_args *, panel_lines *))
{
    panel_lines count = { r, 0, 0, 0, 0 };
    body(a, &count);
    int y0 = r->y + pinned, rows = r->y + r->h - y0, shown, marker;
    if (rows < 1) return;
    int top = tui_scroll_window(&a->c->st->scroll, s, count.n, rows, &shown, &marker);
    panel_lines draw = { r, y0, top, shown, 0 };
    body(a, &draw);
    tui_draw_scroll_marker(r, y0 + shown, top, shown, count.n, marker);
}

/* Under m-out-of-n draws (calscope/resample.h): how many pairs a draw took, and that the
 * metrics marked n/a (MCE, ACE, SCE; on a lens of several coordinates every metric that reads
 * it) have no paired interval from them. */
static void draws_note(const cs_methods *t, panel_lines *L, int w)
{
    for (size_t i = 0; i < t->n; i++) {
        const cs_compare *c = &t->rows[i].cmp;
        if (!t->rows[i].has_cmp || c->draw_size >= c->n_pairs) continue;
        char line[160];
        snprintf(line, sizeof line, "draws of %zu of the %zu pairs (m out of n); no interval where "
                 "marked n/a (--boot-size full)", c->draw_size, c->n_pairs);
        line_put_wrapped(L, CH_ROLE_LABEL, line, w);
        return;
    }
}

/* A row per method: its value in each column that fits, "*" where its paired interval excludes
 * 0, "?" where too few pairs. */
static void method_rows(const panel_args *a, panel_lines *L)
{
    const cs_methods *t = a->t;
    char line[2400];
    for (size_t i = 0; i < t->n; i++) {
        const cs_method_row *row = &t->rows[i];
        int len = snprintf(line, sizeof line, "%s%-*.*s", i == t->ref ? ">" : " ", a->nw - 1, a->nw - 2, a->names[i]);
        for (int col = a->first; col < CS_METHODS_NCOL && col < a->first + a->fit; col++) {
            int few = too_few_pairs(a->c, row);
            int mark = row->has_diff && cs_methods_excludes_zero(row->dlo[col], row->dhi[col]);
            if (row->ok && isfinite(row->v[col]))
                len += snprintf(line + len, sizeof line - (size_t)len, "%8.4f%c", row->v[col],
                                few ? '?' : mark ? '*' : ' ');
            else len += snprintf(line + len, sizeof line - (size_t)len, "%8s ", "n/a");
        }
        line_put(L, i == t->ref ? TUI_ROLE_PROMPT : a->role, line);
    }
}

/* The fitted parameters beside the methods they made (as the report's Methods lines). */
static void fitted_lines(const tui_ctx *c, panel_lines *L)
{
    for (int i = 0; i < TUI_MAX_RECAL; i++) {
        const tui_recal *rc = &c->m->recal[i];
        if (rc->state != 2) continue;
        const double *x = rc->info.vec ? rc->info.vec + (size_t)(rc->info.folds > 0 ? rc->info.folds : 0) * rc->info.n_vec
                                       : NULL;
        if (rc->method == CS_RECAL_VS && x) {
            size_t k = rc->info.n_vec / 2;
            double wlo = x[0], whi = x[0];
            for (size_t j = 1; j < k; j++) { if (x[j] < wlo) wlo = x[j]; if (x[j] > whi) whi = x[j]; }
            line_putf(L, CH_ROLE_LABEL, " +vs: %zu scales in [%.4f, %.4f] and biases (all rows; %d-fold cross-fitted)",
                      k, wlo, whi, rc->info.folds);
        }
        if ((rc->method == CS_RECAL_MS || rc->method == CS_RECAL_DIR) && x)
            line_putf(L, CH_ROLE_LABEL, " +%s: ODIR lambda = %g, mu = %g by inner CV (all rows; %d-fold cross-fitted)",
                      cs_recal_name(rc->method), x[rc->info.n_vec - 2], x[rc->info.n_vec - 1], rc->info.folds);
        if (rc->method == CS_RECAL_IROVA)
            line_putf(L, CH_ROLE_LABEL, " +irova: the predicted class changed on %zu samples (%d-fold cross-fitted)",
                      rc->info.argmax_changed, rc->info.folds);
        if (rc->method == CS_RECAL_BETA && x)
            line_putf(L, CH_ROLE_LABEL, " +beta: logit p' = %.4f ln p - %.4f ln(1-p) %c %.4f (all rows; %d-fold cross-fitted)",
                      x[0], x[1], x[2] < 0 ? '-' : '+', fabs(x[2]), rc->info.folds);
        if (rc->method == CS_RECAL_ETS && x)
            line_putf(L, CH_ROLE_LABEL, " +ets: w = (%.3f, %.3f, %.3f), T = %.4f (all rows; %d-fold cross-fitted)",
                      x[0], x[1], x[2], x[3], rc->info.folds);
        if (rc->method != CS_RECAL_TS && rc->method != CS_RECAL_PLATT) continue;
        const double *p = rc->info.param[rc->info.folds > 0 ? rc->info.folds : 0];
        if (rc->method == CS_RECAL_TS)
            line_putf(L, CH_ROLE_LABEL, " +ts: fitted temperature T = %.4f%s (all rows; %d-fold cross-fitted)",
                      p[0], rc->info.clamped ? " [at bound]" : "", rc->info.folds);
        else
            line_putf(L, CH_ROLE_LABEL, " +platt: a = %.4f, b = %.4f (all rows; %d-fold cross-fitted)",
                      p[0], p[1], rc->info.folds);
    }
}

/* The focused metric in full, a row per method: value [interval], paired difference [interval];
 * h its column's name. */
static void focus_rows(const panel_args *a, panel_lines *L, const char *h)
{
    const cs_methods *t = a->t;
    int nw = a->nw, focus = a->focus;
    char line[2400];
    /* with intervals the row is 61 columns past the names ("[-0.0114,-0.0012]* 0.993" needs
     * them all): the names give way, down to 12 columns, re-shortened so they stay distinct */
    int ci = a->c->st->ci > 0 && a->w - 61 >= 12;
    method_label ci_names[CS_METHODS_MAX];
    method_label *names = a->names;
    if (ci && a->w - 61 < nw) {
        nw = a->w - 61;
        method_names(a->c, t->n, nw - 2, ci_names);
        names = ci_names;
    }
    line_putf(L, TUI_ROLE_HEADING, "%-*s %7s %-*s%8s %-19s %s", nw, h, "value",
              ci ? 18 : 1, ci ? "  95% interval" : "", "-ref", "  95% paired", "P<");
    for (size_t i = 0; i < t->n; i++) {
        const cs_method_row *row = &t->rows[i];
        char v[16], iv[48] = "";
        tui_fmt_value(v, sizeof v, row->ok ? row->v[focus] : NAN);
        if (ci && row->ok && isfinite(row->lo[focus]))
            snprintf(iv, sizeof iv, "[%.4f,%.4f]%s", row->lo[focus], row->hi[focus],
                     row->ci_excludes[focus] ? "!" : "");   /* misses the value, as in the report */
        int len = snprintf(line, sizeof line, "%s%-*.*s %s %-*s", i == t->ref ? ">" : " ", nw - 1, nw - 2,
                           names[i], v, ci ? 17 : 0, iv);
        if (i == t->ref) {
            snprintf(line + len, sizeof line - (size_t)len, " (reference)");
        } else {
            char pd[1100];
            paired_text(row, focus, too_few_pairs(a->c, row), pd, sizeof pd);
            snprintf(line + len, sizeof line - (size_t)len, " %s", pd);
        }
        line_put(L, a->role, line);
    }
}

static void table_body(const panel_args *a, panel_lines *L)
{
    const cs_methods *t = a->t;
    char line[2400], h[32];
    method_rows(a, L);
    fitted_lines(a->c, L);
    line_put(L, CH_ROLE_TEXT, "");
    col_text(t, a->focus, h, sizeof h);
    focus_rows(a, L, h);
    line_put(L, CH_ROLE_TEXT, "");
    line_put(L, CH_ROLE_LABEL, "* paired 95% interval of method-ref excludes 0; > reference (f F)");
    line_putf(L, CH_ROLE_LABEL, "P<: share of %d resamples where it beats the ref", t->cmp_repeats);
    draws_note(t, L, a->w);
    if (any_misses(t, a->focus)) line_put_wrapped(L, CH_ROLE_LABEL, PAIRED_MISS_NOTE, a->w);
    if (too_few_note(a->c, t, line, sizeof line)) line_put_wrapped(L, CH_ROLE_LABEL, line, a->w);
    if (!isfinite(t->rows[t->ref].v[a->focus]) && t->rows[t->ref].ok)
        line_putf(L, CH_ROLE_LABEL, "n/a: %s has no number here (%s)", h, cs_methods_na_reason(a->focus));
}

static void ranks_body(const panel_args *a, panel_lines *L)
{
    const cs_methods *t = a->t;
    int nw = a->nw, cw = a->cw;
    char line[2400];
    int len;
    int rank[CS_METHODS_NCOL][CS_METHODS_MAX];
    for (int col = 0; col < CS_METHODS_NCOL; col++) cs_methods_ranks(t, col, rank[col]);
    for (size_t i = 0; i < t->n; i++) {
        len = snprintf(line, sizeof line, "%s%-*.*s", i == t->ref ? ">" : " ", nw - 1, nw - 2, a->names[i]);
        for (int col = a->first; col < CS_METHODS_NCOL && col < a->first + a->fit; col++) {
            if (rank[col][i]) len += snprintf(line + len, sizeof line - (size_t)len, "%*d", cw, rank[col][i]);
            else len += snprintf(line + len, sizeof line - (size_t)len, "%*s", cw, "-");
        }
        line_put(L, a->role, line);
    }
    /* mass (Kirchenbauer, Oaks & Heim 2022, Fig. 2): mean k-th largest probability, the others
     * minus the reference */
    line_put(L, CH_ROLE_TEXT, "");
    line_put(L, TUI_ROLE_HEADING, "mass: mean k-th largest p; others minus the ref");
    int mw = 8, mfit = (a->w - nw) / mw;
    len = snprintf(line, sizeof line, "%-*s", nw, "method");
    for (size_t j = 0; j < t->n_top && (int)j < mfit; j++) {
        char lab[16];
        snprintf(lab, sizeof lab, "k=%zu", j + 1);
        len += snprintf(line + len, sizeof line - (size_t)len, "%*s", mw, lab);
    }
    line_put(L, TUI_ROLE_HEADING, line);
    const cs_method_row *ref = &t->rows[t->ref];
    for (size_t i = 0; i < t->n; i++) {
        const cs_method_row *row = &t->rows[i];
        len = snprintf(line, sizeof line, "%s%-*.*s", i == t->ref ? ">" : " ", nw - 1, nw - 2, a->names[i]);
        for (size_t j = 0; j < t->n_top && (int)j < mfit; j++) {
            if (!row->mass_ok || !ref->mass_ok) len += snprintf(line + len, sizeof line - (size_t)len, "%*s", mw, "n/a");
            else if (i == t->ref) len += snprintf(line + len, sizeof line - (size_t)len, "%*.4f", mw, row->top[j]);
            else len += snprintf(line + len, sizeof line - (size_t)len, "%+*.4f", mw, row->top[j] - ref->top[j]);
        }
        line_put(L, a->role, line);
    }
}

/* A column's heading in the methods panel ("[ECE]" when focused) and in the rankings panel
 * ("ACE!" when it orders a pair unlike ECE). */
static void table_label(const cs_methods *t, int col, int focus, char *buf, size_t size)
{
    char h[32];
    col_text(t, col, h, sizeof h);
    snprintf(buf, size, col == focus ? "[%s]" : "%s", h);
}

static void ranks_label(const cs_methods *t, int col, int focus, char *buf, size_t size)
{
    (void)focus;
    char h[32];
    col_text(t, col, h, sizeof h);
    snprintf(buf, size, "%s%s", h, col != CS_METHODS_COL_ECE && cs_methods_ranking_differs(t, col) ? "!" : "");
}

/* The two methods panels: widths of the name and metric columns (name wide at 76 columns),
 * their heading, body and scroll position. */
typedef struct panel_spec {
    int nw_wide, nw_narrow, cw;
    int tail;    /* columns after a value's last digit in its cell (the methods table's '*') */
    void (*label)(const cs_methods *t, int col, int focus, char *buf, size_t size);
    void (*body)(const panel_args *, panel_lines *);
    tui_scroll_table scroll;
} panel_spec;

static const panel_spec table_panel = { 22, 16, 9, 1, table_label, table_body, TUI_SCROLL_METHODS };
static const panel_spec ranks_panel = { 20, 16, 9, 0, ranks_label, ranks_body, TUI_SCROLL_RANKS };

/* The column header of a methods panel into line (the name column's heading first): each label
 * ends over its values' last digit; one wider than that takes room on its left, and moves right
 * when the label before it has that room, so labels never run together ("L2CE L2CE-deb", not
 * "L2CEL2CE-deb"). Returns its width. */
static int panel_header(const cs_methods *t, const panel_spec *p, int nw, int first, int fit,
                        int focus, char *line, size_t size)
{
    int len = snprintf(line, size, "%-*s", nw, "method");
    for (int col = first; col < CS_METHODS_NCOL && col < first + fit; col++) {
        char lab[48];
        p->label(t, col, focus, lab, sizeof lab);
        int end = nw + (col - first + 1) * p->cw - p->tail;   /* one past the last digit */
        int start = end - (int)strlen(lab);
        if (start < len + 1) start = len + 1;                 /* a space after the one before */
        len += snprintf(line + len, size - (size_t)len, "%*s%s", start - len, "", lab);
    }
    return len;
}

/* The methods table's answer, pinned under its title and above its column header, so that
 * the header heads the rows it names: one verdict per method beside the reference, then the
 * selection line, in at most half of r (the rows need the rest). Returns the next row. */
static int pinned_answer(const tui_ctx *c, const cs_methods *t, const tui_rect *r, int y, int stale)
{
    char line[2400];
    tui_rect at = { r->x, y, r->w, r->h / 2 };
    for (size_t i = 0; i < t->n && y < at.y + at.h; i++) {
        if (i == t->ref) continue;
        verdict_line(c, t, i, line, sizeof line);
        y += tui_draw_lines(&at, y, stale ? CH_ROLE_STALE : TUI_ROLE_HEADING, line);
    }
    selection_line(c, t, line, sizeof line);
    if (line[0] && y < at.y + at.h) y += tui_draw_lines(&at, y, stale ? CH_ROLE_STALE : CH_ROLE_LABEL, line);
    return y;
}

/* Draws a methods panel in r: its title, answer and column header stay, its body scrolls. */
static void methods_panel(const tui_ctx *c, const tui_rect *r, const panel_spec *p)
{
    int stale;
    const cs_methods *t = methods_resp(c, r, &stale);
    if (!t) return;
    int nw = r->w >= 76 ? p->nw_wide : p->nw_narrow;
    method_label names[CS_METHODS_MAX];
    method_names(c, t->n, nw - 2, names);
    int fit = (r->w - nw) / p->cw;
    int focus = c->st->cmp_col % CS_METHODS_NCOL, first = first_col(focus, fit);
    char line[2400];
    /* a header pushed right by wide labels past the edge: a column fewer, never a cut label */
    while (panel_header(t, p, nw, first, fit, focus, line, sizeof line) > r->w && fit > 1)
        first = first_col(focus, --fit);
    int y = r->y;
    if (p == &table_panel)
        tui_textf(y, r->x, r->w, TUI_ROLE_HEADING, "methods (p panel, [ ] column %d/%d, t T recal)",
                  focus + 1, CS_METHODS_NCOL);
    else
        tui_text(y, r->x, r->w, TUI_ROLE_HEADING, "rankings (1 = best; ! = orders a pair unlike ECE)");
    if (stale) tui_draw_stale_mark(r, y);
    y++;
    if (p == &table_panel) y = pinned_answer(c, t, r, y, stale);
    tui_text(y++, r->x, r->w, TUI_ROLE_HEADING, line);
    panel_args a = { c, t, names, nw, p->cw, first, fit, focus, stale ? CH_ROLE_STALE : CH_ROLE_TEXT, r->w, 0, 0 };
    draw_scrolled(&a, r, y - r->y, p->scroll, p->body);
}

/* The files' verdicts beside the reference (the recalibrations' verdicts head the methods
 * panel: up to ten of them would push the files' table off this one): methods i of mt that are
 * files, not the reference. */
static int file_verdict(const tui_ctx *c, const cs_methods *mt, size_t i)
{
    return i != mt->ref && i < c->m->n_methods && c->m->method_recal[i] < 0;
}

/* The answer first: the verdicts that fit whole in at most half of t, from row y, as the report
 * begins (the table's rows need the rest). Returns the number of methods looked at: the
 * verdicts from there on go below the table (files_body), so none is lost. *y is the next row. */
static size_t pinned_verdicts(const tui_ctx *c, const cs_methods *mt, int mstale, const tui_rect *t, int *y)
{
    tui_rect at = { t->x, *y, t->w, t->h / 2 };
    size_t i = 0;
    for (; mt && i < mt->n; i++) {
        if (!file_verdict(c, mt, i)) continue;
        char v[2 * CS_SPEC_MAX + 600], wrapped[4096];
        verdict_line(c, mt, i, v, sizeof v);
        int rows = ch_wrap(v, t->w, wrapped, sizeof wrapped);
        if (*y + rows > at.y + at.h) break;
        *y += tui_draw_lines(&at, *y, mstale ? CH_ROLE_STALE : TUI_ROLE_HEADING, v);
    }
    return i;
}

/* The row of the only file that loaded, when the others failed and nothing else is left to
 * compare it with (the reference: the active file when it loaded), else n_files. */
static size_t lone_file(const tui_ctx *c)
{
    const tui_model *m = c->m;
    if (m->n_files < 2 || tui_model_methods_count(m, c->st) != 1) return m->n_files;
    if (m->files[c->st->active].state == TUI_LOADED) return c->st->active;
    for (size_t f = 0; f < m->n_files; f++)
        if (m->files[f].state == TUI_LOADED) return f;
    return m->n_files;
}

/* File f's row of the files' table: its ECE (Brier and NLL unless narrow) and its paired
 * difference from the reference, or its load error (wrapped between words). */
static void file_line(const panel_args *a, panel_lines *L, size_t f, size_t lone)
{
    const tui_ctx *c = a->c;
    const cs_methods *mt = a->t;
    const char *name = a->names[f];
    int narrow = a->nw < 18;
    const tui_file *file = &c->m->files[f];
    char line[2400];
    int stale;
    const cs_job *resp = tui_model_result(c->m, TUI_SLOT_METRICS((int)f), &stale);
    if (file->state == TUI_FAILED) {
        snprintf(line, sizeof line, "%-*s %s", a->nw, name, file->error);
        line_put_wrapped(L, TUI_ROLE_ERROR, line, a->w);
        return;
    }
    if (!resp || resp->status != CS_OK) {
        snprintf(line, sizeof line, "%-*s %s", a->nw, name, resp ? resp->err.msg : "...");
        line_put_wrapped(L, CH_ROLE_TEXT, line, a->w);
        return;
    }
    /* the methods table's row of this file; under a selection on the reference its values
     * too, so that ECE and -ref are on the same samples */
    const cs_method_row *row = file_row(c->m, mt, f), *cut = cut_row(c->m, mt, f);
    const cs_result *res = &cs_metrics_job_of(resp)->result;
    char e[16], b[16], nl[16];
    tui_fmt_value(e, sizeof e, cut ? cut->v[CS_METHODS_COL_ECE] : res->ece);
    tui_fmt_value(b, sizeof b, cut ? cut->v[7] : res->brier);
    tui_fmt_value(nl, sizeof nl, cut ? cut->v[8] : res->nll);
    int len = narrow ? snprintf(line, sizeof line, "%-14.14s %s", name, e)
                     : snprintf(line, sizeof line, "%-18s %s %s %s", name, e, b, nl);
    if ((row && row == &mt->rows[mt->ref]) || f == lone) {
        snprintf(line + len, sizeof line - (size_t)len, " (reference)");
    } else if (row) {
        char pd[1100];
        paired_text(row, CS_METHODS_COL_ECE, too_few_pairs(c, row), pd, sizeof pd);
        snprintf(line + len, sizeof line - (size_t)len, " %s", pd);
    } else if (c->m->n_files >= 2) {
        snprintf(line + len, sizeof line - (size_t)len, " paired bootstrap...");
    }
    line_put(L, stale || a->stale ? CH_ROLE_STALE : (f == c->st->active ? TUI_ROLE_PROMPT : CH_ROLE_TEXT), line);
}

/* The files' table under its pinned column header: a row per file, then what -ref and P< mean,
 * the notes on misses and too few pairs, the selection, and the verdicts that did not fit above
 * it (from a->skip on). It scrolls (TUI_SCROLL_FILES), so every file is reachable. */
static void files_body(const panel_args *a, panel_lines *L)
{
    const tui_ctx *c = a->c;
    const cs_methods *mt = a->t;
    size_t lone = lone_file(c);
    for (size_t f = 0; f < c->m->n_files; f++) file_line(a, L, f, lone);
    line_put(L, CH_ROLE_TEXT, "");
    if (lone < c->m->n_files) {
        char why[256];
        snprintf(why, sizeof why, "nothing to compare %s with: the other file%s failed to load",
                 a->names[lone], c->m->n_files > 2 ? "s" : "");
        line_put_wrapped(L, CH_ROLE_LABEL, why, a->w);
    } else {
        line_put_wrapped(L, CH_ROLE_LABEL,
                         c->m->n_files >= 2 ? "-ref: ECE minus the reference's (> marks it, f F), paired bootstrap"
                         : c->st->follow ? "a compares the first, selected and last epochs of the run"
                                         : "load two or more files to compare them (calscope A.csv B.csv)",
                         a->w);
    }
    if (!mt) return;
    char line[2 * CS_SPEC_MAX + 600];
    if (c->m->n_files >= 2) {
        snprintf(line, sizeof line, "P<: share of %d resamples where it beats the ref; * excludes 0", mt->cmp_repeats);
        line_put_wrapped(L, CH_ROLE_LABEL, line, a->w);
    }
    if (any_misses(mt, CS_METHODS_COL_ECE)) line_put_wrapped(L, CH_ROLE_LABEL, PAIRED_MISS_NOTE, a->w);
    if (too_few_note(c, mt, line, sizeof line)) line_put_wrapped(L, CH_ROLE_LABEL, line, a->w);
    selection_line(c, mt, line, sizeof line);
    if (line[0]) line_put_wrapped(L, CH_ROLE_LABEL, line, a->w);
    for (size_t i = (size_t)a->skip; i < mt->n; i++) {
        if (!file_verdict(c, mt, i)) continue;
        verdict_line(c, mt, i, line, sizeof line);
        line_put_wrapped(L, a->stale ? CH_ROLE_STALE : TUI_ROLE_HEADING, line, a->w);
    }
}

void tui_view_compare(const tui_ctx *c, const tui_layout *l)
{
    if (c->st->cmp_panel != TUI_CMP_FILES) {
        tui_rect whole = l->body;
        methods_panel(c, &whole, c->st->cmp_panel == TUI_CMP_TABLE ? &table_panel : &ranks_panel);
        return;
    }
    diagrams(c, &l->a);
    const tui_rect *t = &l->b;
    int narrow = t->w < 79;   /* drop Brier and NLL below 79 columns */
    int mstale = 0;
    const cs_methods *mt = methods_result(c->m, &mstale);
    int y = t->y;
    size_t skip = pinned_verdicts(c, mt, mstale, t, &y);
    if (narrow)
        tui_textf(y++, t->x, t->w, TUI_ROLE_HEADING, "%-14s %7s %8s %-17s   %5s", "file", "ECE",
                  "-ref", "  95% paired", "P<");
    else
        tui_textf(y++, t->x, t->w, TUI_ROLE_HEADING, "%-18s %7s %7s %7s %8s %-17s   %5s", "file",
                  "ECE", "Brier", "NLL", "-ref", "  95% paired", "P<");
    file_label names[TUI_MAX_FILES];
    file_names(c, narrow ? 14 : 18, names);
    panel_args a = { c, mt, names, narrow ? 14 : 18, 0, 0, 0, 0, CH_ROLE_TEXT, t->w, mstale, (int)skip };
    draw_scrolled(&a, t, y - t->y, TUI_SCROLL_FILES, files_body);
}
