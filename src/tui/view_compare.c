/* View 5: the loaded files side by side: small reliability diagrams, and a table of their
 * metrics with the paired-bootstrap difference of ECE against the first file. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calscope/curves.h"
#include "chart/chart.h"
#include "tui/blit.h"
#include "tui/theme.h"
#include "tui/views.h"

static const cs_compare_entry *find_entry(const cs_compare *cmp, int metric)
{
    for (size_t i = 0; i < cmp->n_entries; i++)
        if (cmp->entries[i].metric == metric) return &cmp->entries[i];
    return NULL;
}

static void diagrams(const tui_ctx *c, const tui_rect *a)
{
    size_t n = c->m->n_files;
    int each = n ? a->w / (int)n : a->w;
    if (each < CH_RELIABILITY_MIN_W + 1) each = CH_RELIABILITY_MIN_W + 1;
    size_t fit = (size_t)(a->w / each);
    if (fit > n) fit = n;
    /* keep the active file in sight */
    size_t first = c->st->active >= fit ? c->st->active - fit + 1 : 0;
    for (size_t i = 0; i < fit; i++) {
        size_t f = first + i;
        tui_rect r = { a->x + (int)i * each, a->y, each - 1, a->h };
        const tui_file *file = &c->m->files[f];
        if (file->state != TUI_LOADED) {
            tui_text(r.y, r.x, r.w, CH_ROLE_TITLE, tui_basename(file->path));
            tui_text(r.y + 1, r.x, r.w, file->state == TUI_FAILED ? TUI_ROLE_ERROR : CH_ROLE_TEXT,
                     file->state == TUI_FAILED ? "failed to load" : "loading...");
            continue;
        }
        int stale;
        const cs_response *resp = tui_model_result(c->m, TUI_SLOT_METRICS((int)f), &stale);
        if (!resp || resp->status != CS_OK) {
            tui_text(r.y, r.x, r.w, CH_ROLE_TITLE, tui_basename(file->path));
            tui_text(r.y + 1, r.x, r.w, CH_ROLE_TEXT, resp ? resp->err.msg : "computing...");
            continue;
        }
        ch_buf *b = ch_buf_new(r.w, r.h);
        if (!b) continue;
        char title[96];
        snprintf(title, sizeof title, "%s%s", f == c->st->active ? "> " : "", tui_basename(file->path));
        ch_reliability rel = { resp->result.bins, resp->result.n_bins, 0, title, 0 };
        ch_reliability_draw(b, 0, 0, r.w, r.h, &rel, c->g);
        tui_blit(b, r.y, r.x, stale);
        if (stale) tui_draw_stale_mark(&r, r.y);
        ch_buf_free(b);
    }
}

void tui_view_compare(const tui_ctx *c, const tui_layout *l)
{
    diagrams(c, &l->a);
    const tui_rect *t = &l->b;
    int y = t->y;
    int narrow = t->w < 79;   /* drop Brier and NLL below 79 columns */
    if (narrow)
        tui_textf(y++, t->x, t->w, TUI_ROLE_HEADING, "%-14s %7s  %8s  %-17s  %5s", "file", "ECE",
                  "1st-this", "  95% paired", "P1st<");
    else
        tui_textf(y++, t->x, t->w, TUI_ROLE_HEADING, "%-18s %7s %7s %7s  %8s  %-17s  %5s", "file",
                  "ECE", "Brier", "NLL", "1st-this", "  95% paired", "P1st<");
    for (size_t f = 0; f < c->m->n_files && y < t->y + t->h; f++) {
        const tui_file *file = &c->m->files[f];
        int stale;
        const cs_response *resp = tui_model_result(c->m, TUI_SLOT_METRICS((int)f), &stale);
        char name[20];
        snprintf(name, sizeof name, "%s", tui_basename(file->path));
        if (file->state == TUI_FAILED) {
            tui_textf(y++, t->x, t->w, TUI_ROLE_ERROR, "%-18s %s", name, file->error);
            continue;
        }
        if (!resp || resp->status != CS_OK) {
            tui_textf(y++, t->x, t->w, CH_ROLE_TEXT, "%-18s %s", name,
                      resp ? resp->err.msg : "...");
            continue;
        }
        char e[16], b[16], nl[16], line[2048];
        tui_fmt_value(e, sizeof e, resp->result.ece);
        tui_fmt_value(b, sizeof b, resp->result.brier);
        tui_fmt_value(nl, sizeof nl, resp->result.nll);
        int len = narrow ? snprintf(line, sizeof line, "%-14.14s %s", name, e)
                         : snprintf(line, sizeof line, "%-18s %s %s %s", name, e, b, nl);
        int cstale = 0;
        if (f == 0) {
            snprintf(line + len, sizeof line - (size_t)len, "  (reference)");
        } else {
            const cs_response *cr = tui_model_result(c->m, TUI_SLOT_COMPARE((int)f), &cstale);
            const cs_compare_entry *en = cr && cr->status == CS_OK ? find_entry(&cr->compare, CS_METRIC_ECE) : NULL;
            if (en)
                snprintf(line + len, sizeof line - (size_t)len, "  %+8.4f  [%+.4f,%+.4f]  %5.3f",
                         en->diff, en->lo, en->hi, en->p_better);
            else if (cr && cr->status != CS_OK)
                snprintf(line + len, sizeof line - (size_t)len, "  %s", cr->err.msg);
            else
                snprintf(line + len, sizeof line - (size_t)len, "  paired bootstrap...");
        }
        tui_text(y++, t->x, t->w, stale || cstale ? CH_ROLE_STALE : (f == c->st->active ? TUI_ROLE_PROMPT : CH_ROLE_TEXT), line);
    }
    if (y + 1 < t->y + t->h)
        tui_text(y + 1, t->x, t->w, CH_ROLE_LABEL,
                 c->m->n_files < 2 ? "load two or more files to compare them (calscope A.csv B.csv)"
                                   : "paired by id (else by row); f/F moves the active file");
}
