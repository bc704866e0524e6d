/* Prints the documents the flag table renders (src/session/flags.h): `man` the man page calscope.1,
 * `readme` the flag reference of docs/flags.md, `help` / `help-dashboard` the two --help texts.
 * Built and run by the Makefile (calscope.1, make readme-flags). */
#include <stdio.h>
#include <string.h>

#include "session/flags.h"

int main(int argc, char **argv)
{
    const char *what = argc == 2 ? argv[1] : "";
    if (strcmp(what, "man") == 0) ss_man(stdout);
    else if (strcmp(what, "readme") == 0) ss_readme(stdout);
    else if (strcmp(what, "help") == 0) ss_help(stdout, SS_REPORT);
    else if (strcmp(what, "help-dashboard") == 0) ss_help(stdout, SS_DASH);
    else if (strcmp(what, "help-reduce") == 0) ss_help(stdout, SS_REDUCE);
    else {
        fputs("usage: gen_flags man|readme|help|help-dashboard|help-reduce\n", stderr);
        return 2;
    }
    return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
}
