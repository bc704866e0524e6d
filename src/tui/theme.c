/* Themes: role -> attributes (see theme.h). */
#include "tui/theme.h"

#include <stdlib.h>

typedef struct role_style { short fg, bg; attr_t color_attr; attr_t mono_attr; } role_style;

/* fg/bg -1 = terminal default. Mono attributes must tell the roles apart on their own where it
 * matters (gaps, stale values, errors); chart glyphs already differ per role. */
static const role_style styles[TUI_ROLE_N] = {
    [CH_ROLE_TEXT]     = { -1, -1, 0, 0 },
    [CH_ROLE_TITLE]    = { -1, -1, A_BOLD, A_BOLD },
    [CH_ROLE_AXIS]     = { -1, -1, 0, 0 },
    [CH_ROLE_LABEL]    = { -1, -1, 0, 0 },
    [CH_ROLE_DIAGONAL] = { COLOR_YELLOW, -1, 0, A_BOLD },
    [CH_ROLE_BAR]      = { COLOR_BLUE, -1, 0, 0 },
    [CH_ROLE_OVER]     = { COLOR_RED, -1, 0, 0 },
    [CH_ROLE_UNDER]    = { COLOR_GREEN, -1, 0, 0 },
    [CH_ROLE_BAND]     = { COLOR_CYAN, -1, 0, A_DIM },
    [CH_ROLE_SERIES1]  = { COLOR_BLUE, -1, A_BOLD, A_BOLD },
    [CH_ROLE_SERIES2]  = { COLOR_MAGENTA, -1, A_BOLD, 0 },
    [CH_ROLE_SERIES3]  = { COLOR_GREEN, -1, A_BOLD, A_UNDERLINE },
    [CH_ROLE_SERIES4]  = { COLOR_RED, -1, A_BOLD, A_BOLD },
    [CH_ROLE_THIN]     = { COLOR_YELLOW, -1, A_BOLD, A_BOLD },
    [CH_ROLE_COUNT]    = { -1, -1, 0, 0 },
    [CH_ROLE_WARNING]  = { COLOR_YELLOW, -1, A_BOLD, A_BOLD },
    [CH_ROLE_STALE]    = { -1, -1, A_DIM, A_DIM },
    [TUI_ROLE_STATUS]  = { COLOR_BLACK, COLOR_CYAN, 0, A_REVERSE },
    [TUI_ROLE_TAB]     = { -1, -1, 0, 0 },
    [TUI_ROLE_TAB_ACTIVE] = { COLOR_BLACK, COLOR_YELLOW, A_BOLD, A_REVERSE | A_BOLD },
    [TUI_ROLE_ERROR]   = { COLOR_RED, -1, A_BOLD, A_BOLD | A_UNDERLINE },
    [TUI_ROLE_PROMPT]  = { -1, -1, A_BOLD, A_BOLD },
    [TUI_ROLE_HEADING] = { -1, -1, A_BOLD | A_UNDERLINE, A_BOLD | A_UNDERLINE },
    [TUI_ROLE_PROGRESS]= { COLOR_CYAN, -1, A_BOLD, A_BOLD },
};

static int use_color;

int tui_theme_init(int no_color)
{
    const char *nc = getenv("NO_COLOR");
    use_color = !no_color && !(nc && nc[0]) && has_colors();
    if (!use_color) return 0;
    if (start_color() == ERR) { use_color = 0; return 0; }
    int def = use_default_colors() == OK;
    for (int r = 1; r < TUI_ROLE_N; r++) {
        short fg = styles[r].fg, bg = styles[r].bg;
        if (!def) { if (fg < 0) fg = COLOR_WHITE; if (bg < 0) bg = COLOR_BLACK; }
        if (r < COLOR_PAIRS) init_pair((short)r, fg, bg);
    }
    return 1;
}

short tui_theme_pair(int role)
{
    if (!use_color || role <= 0 || role >= TUI_ROLE_N || role >= COLOR_PAIRS) return 0;
    if (styles[role].fg == -1 && styles[role].bg == -1) return 0;
    return (short)role;
}

attr_t tui_theme_attr(int role)
{
    if (role < 0 || role >= TUI_ROLE_N) return 0;
    if (!use_color) return styles[role].mono_attr;
    return styles[role].color_attr | (attr_t)COLOR_PAIR(tui_theme_pair(role));
}

const char *tui_theme_name(void)
{
    if (!use_color) return "mono";
    return COLORS >= 256 ? "color" : "8-color";
}
