/* Refuses a terminal the dashboard cannot draw on before curses starts: newterm exits the
 * process with ncurses' bare "Error opening terminal" on an unknown TERM, and on TERM=dumb (no
 * cursor addressing) it starts and shows a dead screen. Main thread, before newterm. */
#include "tui/tui.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tui/tui_curses.h"
#include <term.h>

/* A capability string that is present (tigetstr gives NULL when absent, -1 when not a string). */
static int has_cap(const char *name)
{
    const char *s = tigetstr(name);
    return s != NULL && s != (const char *)-1;
}

int tui_term_check(void)
{
    const char *term = getenv("TERM");
    if (!term || !term[0]) {
        fputs("calscope: TERM is not set, so the dashboard cannot draw; set it to your terminal "
              "(e.g. TERM=xterm-256color) or use `calscope report` for headless output\n", stderr);
        return 2;
    }
    int err = 0;
    if (setupterm(term, STDOUT_FILENO, &err) != OK) {
        fprintf(stderr, "calscope: TERM=%s: %s; set TERM to your terminal (e.g. "
                        "TERM=xterm-256color) or use `calscope report` for headless output\n", term,
                err == 1 ? "a hardcopy terminal, the dashboard cannot draw on it"
                         : "unknown terminal type (no terminfo entry)");
        return 2;
    }
    /* the dashboard moves the cursor and clears the screen: without these it cannot draw */
    int ok = has_cap("cup") && has_cap("clear");
    del_curterm(cur_term);
    if (!ok) {
        fprintf(stderr, "calscope: TERM=%s: this terminal cannot move the cursor, so the "
                        "dashboard cannot draw on it; set TERM to your terminal (e.g. "
                        "TERM=xterm-256color) or use `calscope report` for headless output\n", term);
        return 2;
    }
    return -1;
}
