/* View 6: segmentation-style files (a `case` column, seed 003): the cases of the active file.
 * The per-case metrics and the dataset reliability histogram need a backend job that computes
 * cs_case_metrics (calscope/cases.h); until the backend offers one this view says so rather
 * than computing in the UI thread. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/blit.h"
#include "tui/theme.h"
#include "tui/views.h"

void tui_view_cases(const tui_ctx *c, const tui_layout *l)
{
    if (tui_draw_file_state(c, c->st->active, &l->body)) return;
    const tui_file *f = &c->m->files[c->st->active];
    const cs_dataset *d = f->data;
    const tui_rect *r = &l->body;
    int y = r->y;
    tui_textf(y++, r->x, r->w, CH_ROLE_TITLE, "per-case calibration: %s", tui_basename(f->path));
    if (!d->case_id) {
        tui_text(y + 1, r->x + 1, r->w - 2, CH_ROLE_TEXT,
                 "this file has no case column: per-case metrics and the dataset reliability");
        tui_text(y + 2, r->x + 1, r->w - 2, CH_ROLE_TEXT,
                 "histogram need a segmentation-style file (case,label,p_... per pixel).");
        return;
    }
    size_t *rows = calloc(d->n_cases ? d->n_cases : 1, sizeof *rows);
    if (!rows) return;
    for (size_t i = 0; i < d->n; i++)
        if (d->case_id[i] >= 0 && (size_t)d->case_id[i] < d->n_cases) rows[d->case_id[i]]++;
    tui_textf(y++, r->x + 1, r->w - 2, CH_ROLE_TEXT, "%zu cases, %zu rows, %zu classes", d->n_cases,
              d->n, d->k);
    tui_text(y++, r->x + 1, r->w - 2, CH_ROLE_WARNING,
             "per-case ECE/ACE/MCE and the reliability histogram: not offered by the backend yet");
    y++;
    tui_textf(y++, r->x + 1, r->w - 2, TUI_ROLE_HEADING, "%-20s %8s", "case", "rows");
    for (size_t i = 0; i < d->n_cases && y < r->y + r->h; i++)
        tui_textf(y++, r->x + 1, r->w - 2, CH_ROLE_TEXT, "%-20.20s %8zu", d->case_names[i], rows[i]);
    free(rows);
}
