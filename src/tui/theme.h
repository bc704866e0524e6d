/* Colour by role, with an attribute-only theme: chart roles (ch_role) plus the dashboard's own,
 * each mapped to curses attributes by the theme picked once at start-up. The mono theme uses only
 * reverse, bold, underline and dim, and is chosen for --no-color, a non-empty NO_COLOR or a
 * terminal without colours. UI thread only; call tui_theme_init after initscr. */
#ifndef CALSCOPE_TUI_THEME_H
#define CALSCOPE_TUI_THEME_H

#include "chart/cells.h"
#include "tui/tui_curses.h"

enum {
    TUI_ROLE_STATUS = CH_ROLE_N,  /* status line */
    TUI_ROLE_TAB,                 /* view tabs */
    TUI_ROLE_TAB_ACTIVE,
    TUI_ROLE_ERROR,
    TUI_ROLE_PROMPT,
    TUI_ROLE_HEADING,             /* table headings */
    TUI_ROLE_PROGRESS,            /* progress bar fill */
    TUI_ROLE_N
};

/* Picks the theme: returns 1 when colour is used, 0 for mono. */
int tui_theme_init(int no_color);

/* Attributes (colour pair included) of a role. */
attr_t tui_theme_attr(int role);
/* Colour pair of a role (0 in mono). */
short tui_theme_pair(int role);

/* Name of the theme in use ("color", "8-color", "mono"). */
const char *tui_theme_name(void);

#endif
