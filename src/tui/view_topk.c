/* View 2: top-k ECE bars (Kirchenbauer, Oaks & Heim 2022, "What is Your Metric Telling You?",
 * Fig. 1), one group per loaded file. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "chart/chart.h"
#include "calscope/jobs/topk.h"
#include "tui/blit.h"
#include "tui/theme.h"
#include "tui/views.h"

void tui_view_topk(const tui_ctx *c, const tui_layout *l)
{
    const tui_rect *r = &l->a;
    int y = r->y;
    tui_text(y++, r->x, r->w, CH_ROLE_TITLE,
             "Top-k ECE: ECE of the topk:k lens per k (other settings kept)");
    /* one common scale for every group, so files compare by bar length */
    double vmax = 0;
    for (size_t f = 0; f < c->m->n_files; f++) {
        int stale;
        const cs_job *job = tui_model_result(c->m, TUI_SLOT_TOPK((int)f), &stale);
        if (!job || job->status != CS_OK) continue;
        const cs_topk_job *resp = cs_topk_job_of(job);
        for (size_t i = 0; i < resp->n; i++)
            if (isfinite(resp->value[i]) && resp->value[i] > vmax) vmax = resp->value[i];
    }
    for (size_t f = 0; f < c->m->n_files && y < r->y + r->h; f++) {
        const tui_file *file = &c->m->files[f];
        int stale;
        const cs_job *job = tui_model_result(c->m, TUI_SLOT_TOPK((int)f), &stale);
        tui_textf(y, r->x, r->w, f == c->st->active ? TUI_ROLE_HEADING : CH_ROLE_TITLE, "%s%s",
                  file->name, file->data ? "" : "");
        if (stale) tui_draw_stale_mark(r, y);
        y++;
        tui_rect rest = { r->x, y, r->w, r->y + r->h - y };
        if (file->state != TUI_LOADED) {
            if (file->state == TUI_FAILED)
                tui_text(y++, r->x + 2, r->w - 2, TUI_ROLE_ERROR, file->error);
            else
                tui_text(y++, r->x + 2, r->w - 2, CH_ROLE_TEXT, "loading...");
            continue;
        }
        if (!job || job->status != CS_OK) {
            tui_draw_response_state(c, job, &rest, "top-k bars");
            y += 2;
            continue;
        }
        const cs_topk_job *resp = cs_topk_job_of(job);
        ch_bar bars[CS_TOPK_JOB_MAX];
        char labels[CS_TOPK_JOB_MAX][16];
        for (size_t i = 0; i < resp->n; i++) {
            snprintf(labels[i], sizeof labels[i], "k=%d", resp->k[i]);
            bars[i] = (ch_bar){ labels[i], resp->value[i], NAN, NAN, stale };
        }
        int w = r->w - 2 < 70 ? r->w - 2 : 70;
        ch_buf *b = ch_buf_new(w, (int)resp->n);
        if (!b) continue;
        ch_bars bc;
        memset(&bc, 0, sizeof bc);
        bc.bars = bars;
        bc.n = resp->n;
        bc.vmax = vmax;
        int rows = ch_bars_draw(b, 0, 0, w, (int)resp->n, &bc, c->g);
        tui_blit(b, y, r->x + 2, stale);
        ch_buf_free(b);
        y += rows > 0 ? rows : 1;
    }
}
