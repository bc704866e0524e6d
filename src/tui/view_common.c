/* Helpers shared by the views (see views.h). */
#include "tui/views.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "chart/words.h"
#include "tui/blit.h"
#include "tui/theme.h"

const char *tui_basename(const char *path)
{
    const char *s = strrchr(path, '/');
    return s && s[1] ? s + 1 : path;
}

void tui_fmt_cell(char *buf, size_t size, int width, double v)
{
    if (isnan(v)) snprintf(buf, size, "%*s", width, "n/a");
    else if (fabs(v) >= 1000) snprintf(buf, size, "%*.1f", width, v);   /* inf too: a value */
    else snprintf(buf, size, "%*.4f", width, v);
}

void tui_fmt_value(char *buf, size_t size, double v)
{
    tui_fmt_cell(buf, size, 7, v);
}

void tui_draw_progress(const tui_ctx *c, int y, int x, int w, double p)
{
    if (w < 3) return;
    if (p < 0) p = 0;
    if (p > 1) p = 1;
    int inner = w - 2, fill = (int)(p * inner + 0.5);
    tui_text(y, x, 1, CH_ROLE_AXIS, "[");
    for (int i = 0; i < inner; i++) {
        uint32_t cp = i < fill ? c->g->cp[CH_G_BAR] : (c->g->utf8 ? 0x00B7 : '.');
        char u[8];
        /* encode as UTF-8 */
        if (cp < 0x80) { u[0] = (char)cp; u[1] = 0; }
        else if (cp < 0x800) { u[0] = (char)(0xC0 | (cp >> 6)); u[1] = (char)(0x80 | (cp & 0x3F)); u[2] = 0; }
        else { u[0] = (char)(0xE0 | (cp >> 12)); u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
               u[2] = (char)(0x80 | (cp & 0x3F)); u[3] = 0; }
        tui_text(y, x + 1 + i, 1, i < fill ? TUI_ROLE_PROGRESS : CH_ROLE_AXIS, u);
    }
    tui_text(y, x + w - 1, 1, CH_ROLE_AXIS, "]");
}

int tui_draw_lines(const tui_rect *r, int y, int role, const char *text)
{
    if (r->w < 1) return 0;
    char wrapped[4096];                 /* breaks between words (chart/words.h), never mid-word */
    ch_wrap(text, r->w, wrapped, sizeof wrapped);
    int rows = 0;
    for (const char *s = wrapped; *s && y + rows < r->y + r->h; rows++) {
        const char *nl = strchr(s, '\n');
        size_t len = nl ? (size_t)(nl - s) : strlen(s);
        char line[1024];
        if (len >= sizeof line) len = sizeof line - 1;
        memcpy(line, s, len);
        line[len] = 0;
        tui_text(y + rows, r->x, r->w, role, line);
        if (!nl) { rows++; break; }
        s = nl + 1;
    }
    return rows;
}

int tui_draw_file_state(const tui_ctx *c, size_t file, const tui_rect *r)
{
    if (file >= c->m->n_files) {
        tui_text(r->y + 1, r->x + 1, r->w - 1, CH_ROLE_TEXT, "no file");
        return 1;
    }
    const tui_file *f = &c->m->files[file];
    if (f->state == TUI_LOADED) return 0;
    if (f->state == TUI_LOADING) {
        double p = cs_backend_progress(c->m->backend, TUI_SLOT_LOAD((int)file));
        tui_textf(r->y + 1, r->x + 1, r->w - 2, CH_ROLE_TEXT, "loading %s  %3.0f%%",
                  f->path, (p < 0 ? 0 : p) * 100);
        int w = r->w - 4 < 50 ? r->w - 4 : 50;
        tui_draw_progress(c, r->y + 2, r->x + 1, w, p);
        return 1;
    }
    tui_text(r->y + 1, r->x + 1, r->w - 2, TUI_ROLE_ERROR, "cannot load this file:");
    tui_rect in = { r->x + 1, r->y + 2, r->w - 2, r->h - 2 };
    int n = tui_draw_lines(&in, in.y, TUI_ROLE_ERROR, f->error);
    int y = in.y + n + 1;
    if (f->summary.n_skipped_messages || f->summary.rows_rejected) {
        tui_textf(y, in.x, in.w, CH_ROLE_TEXT, "rows read %zu, rejected %zu",
                  f->summary.rows_read, f->summary.rows_rejected);
        y++;
    }
    /* --skip-bad-rows helps only when some rows are bad and some good: not for a missing
     * file, a header problem, memory, or a file whose every row is bad */
    int skip_helps = f->summary.rows_rejected > 0 && f->summary.rows_rejected < f->summary.rows_read;
    tui_text(y + 1, in.x, in.w, CH_ROLE_TEXT,
             skip_helps ? "(--skip-bad-rows loads the good rows; f switches file; q quits)"
                        : "(f switches file; q quits)");
    return 1;
}

int tui_draw_response_state(const tui_ctx *c, const cs_job *resp, const tui_rect *r,
                            const char *what)
{
    (void)c;
    if (!resp) {
        tui_textf(r->y + 1, r->x + 1, r->w - 2, CH_ROLE_TEXT, "computing %s...", what);
        return 1;
    }
    if (resp->status == CS_OK) return 0;
    if (resp->status == CS_EEMPTY) {
        tui_text(r->y + 1, r->x + 1, r->w - 2, CH_ROLE_WARNING, "the selection keeps no sample");
        return 1;
    }
    tui_rect in = { r->x + 1, r->y + 1, r->w - 2, r->h - 1 };
    tui_draw_lines(&in, in.y, TUI_ROLE_ERROR, resp->err.msg[0] ? resp->err.msg : "failed");
    return 1;
}

void tui_draw_scroll_marker(const tui_rect *r, int y, int first, int shown, int total, int marker)
{
    if (!marker || r->w < 1 || y >= r->y + r->h) return;
    char t[256];
    tui_scroll_marker(t, r->w < (int)sizeof t - 1 ? r->w : (int)sizeof t - 1, first, shown, total);
    tui_text(y, r->x, r->w, CH_ROLE_LABEL, t);
}

void tui_draw_stale_mark(const tui_rect *r, int y)
{
    tui_text(y, r->x + r->w - 8, 8, CH_ROLE_WARNING, " ~stale ");
}
