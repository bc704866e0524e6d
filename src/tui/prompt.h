/* The prompt line: a one-line editor with history (selection, typed bins, typed seed).
 * No curses calls: keys in, state out; app.c draws it. UI thread only. */
#ifndef CALSCOPE_TUI_PROMPT_H
#define CALSCOPE_TUI_PROMPT_H

#include "tui/state.h"

/* Feeds one key to the open prompt (st->prompt.kind != NONE). Enter submits through
 * tui_prompt_submit, Esc / Ctrl-G cancels, Up/Down walk the selection history, Left/Right/
 * Home/End/Backspace/Delete/Ctrl-A/E/K/U/W edit. Returns dirty flags. */
unsigned tui_prompt_key(tui_state *st, int key);

/* The prompt's label ("select: ", "bins: ", ...). */
const char *tui_prompt_label(tui_prompt_kind kind);

#endif
