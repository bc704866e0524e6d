/* The headless front end: `calscope report [OPTIONS] FILE...` (docs/json.md for its JSON). */
#ifndef CALSCOPE_REPORT_H
#define CALSCOPE_REPORT_H

/* argv[0] is "report". Returns the process exit status: 0 ok, 1 a --check failed,
 * 2 usage error, 3 input error. Lost output (stdout/stderr write errors) is main's to check. */
int report_main(int argc, char **argv);

#endif
