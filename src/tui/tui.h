/* The dashboard front end: `calscope [OPTIONS] FILE...` (docs/dashboard.md). */
#ifndef CALSCOPE_TUI_H
#define CALSCOPE_TUI_H

/* argv[0] is the program name. Returns the process exit status (0 ok, 2 usage, 3 input). */
int tui_main(int argc, char **argv);

/* Checks $TERM before curses starts: returns -1 when the dashboard can draw on it, else prints
 * why not (naming `calscope report`) and returns 2. Main thread. */
int tui_term_check(void);

#endif
