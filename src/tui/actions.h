/* The one action table of the dashboard: keys, handlers and the `?` help come from it (htop
 * Action.c, nnn bindings[]); the `:` command line comes from the flag table (session/flags.h).
 * No curses calls here (key codes only), so the table is unit-tested without a terminal. UI
 * thread only. */
#ifndef CALSCOPE_TUI_ACTIONS_H
#define CALSCOPE_TUI_ACTIONS_H

#include <stddef.h>

#include "tui/state.h"

typedef unsigned (*tui_handler)(tui_state *st, int key);

#define TUI_ACTION_KEYS 8

typedef struct tui_action {
    int keys[TUI_ACTION_KEYS]; /* key codes (chars or KEY_*), 0-terminated */
    const char *key_label;     /* how the help shows the keys ("+ -", "1-6") */
    const char *name;          /* short name ("bins") */
    tui_handler handler;
    const char *help;          /* one line of help */
} tui_action;

/* The table and its length. */
const tui_action *tui_actions(size_t *count);

/* The action bound to `key`, or NULL. */
const tui_action *tui_action_for_key(int key);

/* Runs the action bound to key (returns its dirty flags; 0 for an unbound key). */
unsigned tui_action_dispatch(tui_state *st, int key);

/* A key while the method picker is open (TUI_OVERLAY_PICKER): Up/Down or j/k move the focus
 * (st->picker_row, a cs_recal_method), space or Enter fits the focused method or removes it
 * (and shows the Compare view's methods panel under the picker), Esc, q or t closes; any other
 * key says these in the message line. Returns dirty flags. */
unsigned tui_picker_key(tui_state *st, int key);

/* Writes the `calscope report ...` command line that reproduces what is on screen (all loaded
 * files at the end), rendered by the session layer's flag table (ss_render). */
void tui_command_line(const tui_state *st, char *buf, size_t size);

/* Called by the prompt on Enter: applies the typed text. Returns dirty flags; on a bad value the
 * old setting is kept and st->message explains (with a caret line for selections). */
unsigned tui_prompt_submit(tui_state *st);

/* Checks a selection expression against the active file; returns 0 when it compiles, else
 * fills err (three lines: reason, expression, caret). Set by the app; NULL = accept anything. */
typedef int (*tui_select_check_fn)(void *ctx, const char *expr, char *err, size_t size);
void tui_actions_set_select_check(tui_select_check_fn fn, void *ctx);

#endif
