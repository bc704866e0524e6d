/* The prompt line editor (see prompt.h). */
#include "tui/prompt.h"

#include <stdio.h>
#include <string.h>

#include "tui/actions.h"
#include "tui/tui_curses.h"   /* KEY_* codes only */

#define CTRL(c) ((c) & 0x1f)

const char *tui_prompt_label(tui_prompt_kind kind)
{
    switch (kind) {
    case TUI_PROMPT_SELECT: return "select: ";
    case TUI_PROMPT_BINS: return "bins: ";
    case TUI_PROMPT_SEED: return "seed: ";
    case TUI_PROMPT_SIGMA: return "sigma: ";
    default: return "";
    }
}

static void set_text(tui_prompt *p, const char *s)
{
    snprintf(p->text, sizeof p->text, "%s", s);
    p->len = p->cursor = strlen(p->text);
}

static void history_move(tui_state *st, int dir)
{
    tui_prompt *p = &st->prompt;
    if (p->kind != TUI_PROMPT_SELECT || st->n_history == 0) return;
    int pos = p->hist_pos;
    if (dir < 0) {                                   /* Up: older */
        if (pos == -1) { snprintf(p->saved, sizeof p->saved, "%s", p->text); pos = st->n_history - 1; }
        else if (pos > 0) pos--;
        else return;
    } else {                                         /* Down: newer, then the fresh line */
        if (pos == -1) return;
        pos = pos + 1 < st->n_history ? pos + 1 : -1;
    }
    p->hist_pos = pos;
    set_text(p, pos == -1 ? p->saved : st->history[pos]);
}

unsigned tui_prompt_key(tui_state *st, int key)
{
    tui_prompt *p = &st->prompt;
    int refused = p->refused;
    p->refused = 0;                 /* any key but another refused one ends the run */
    switch (key) {
    case '\n': case '\r': case KEY_ENTER:
        return tui_prompt_submit(st);
    case 27: case CTRL('g'):
        p->kind = TUI_PROMPT_NONE;
        return TUI_REDRAW;
    case KEY_UP: history_move(st, -1); return TUI_REDRAW;
    case KEY_DOWN: history_move(st, +1); return TUI_REDRAW;
    case KEY_LEFT: if (p->cursor > 0) p->cursor--; return TUI_REDRAW;
    case KEY_RIGHT: if (p->cursor < p->len) p->cursor++; return TUI_REDRAW;
    case KEY_HOME: case CTRL('a'): p->cursor = 0; return TUI_REDRAW;
    case KEY_END: case CTRL('e'): p->cursor = p->len; return TUI_REDRAW;
    case CTRL('k'): p->text[p->cursor] = 0; p->len = p->cursor; return TUI_REDRAW;
    case CTRL('u'):
        memmove(p->text, p->text + p->cursor, p->len - p->cursor + 1);
        p->len -= p->cursor; p->cursor = 0;
        return TUI_REDRAW;
    case CTRL('w'): {
        size_t c = p->cursor;
        while (c > 0 && p->text[c - 1] == ' ') c--;
        while (c > 0 && p->text[c - 1] != ' ') c--;
        memmove(p->text + c, p->text + p->cursor, p->len - p->cursor + 1);
        p->len -= p->cursor - c; p->cursor = c;
        return TUI_REDRAW;
    }
    case KEY_BACKSPACE: case 127: case CTRL('h'):
        if (p->cursor == 0) return 0;
        memmove(p->text + p->cursor - 1, p->text + p->cursor, p->len - p->cursor + 1);
        p->cursor--; p->len--;
        return TUI_REDRAW;
    case KEY_DC: case CTRL('d'):
        if (p->cursor == p->len) return 0;
        memmove(p->text + p->cursor, p->text + p->cursor + 1, p->len - p->cursor);
        p->len--;
        return TUI_REDRAW;
    default:
        if (key < 32 || key >= 127) return 0;
        if (p->len + 1 >= sizeof p->text) {
            /* the settings hold at most this much: refuse the key where it shows, never cut
             * the text silently (a cut selection would be refused later for a wrong reason) */
            p->refused = refused ? refused : key;
            tui_state_message(st, 1, "%stoo long: at most %zu characters; '%c' and what follows "
                              "were not typed", tui_prompt_label(p->kind), sizeof p->text - 1,
                              (char)p->refused);
            return TUI_REDRAW | TUI_RELAYOUT;
        }
        memmove(p->text + p->cursor + 1, p->text + p->cursor, p->len - p->cursor + 1);
        p->text[p->cursor++] = (char)key;
        p->len++;
        return TUI_REDRAW;
    }
}
