/* The one curses shim of the dashboard: every src/tui file that draws includes this, never
 * <curses.h> directly, so the wide-character API is always on. */
#ifndef CALSCOPE_TUI_CURSES_H
#define CALSCOPE_TUI_CURSES_H

#ifndef NCURSES_WIDECHAR
#define NCURSES_WIDECHAR 1
#endif
#include <curses.h>

#endif
