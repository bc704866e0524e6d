/* The dashboard front end: `calscope [OPTIONS] FILE...` (SPEC §4). */
#ifndef CALSCOPE_TUI_H
#define CALSCOPE_TUI_H

/* argv[0] is the program name. Returns the process exit status (0 ok, 2 usage, 3 input). */
int tui_main(int argc, char **argv);

#endif
