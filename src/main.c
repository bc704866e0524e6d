/* calscope entry point: `calscope report ...` is headless, `calscope reduce ...` turns
 * segmentation volumes into a statistics file, anything else opens the dashboard.
 * Output that could not be written (a full disk, a closed pipe) is an error here, in one place,
 * whatever printed it: --help and --version of both front ends, the report, and the plot that
 * the machine formats send to stderr. */
#include <stdio.h>
#include <string.h>

#include "reduce/reduce_cmd.h"
#include "report/report.h"
#include "tui/tui.h"

/* Exit 3 (with a message while stderr still works) when stdout or stderr lost output. */
static int check_output(int rc)
{
    int out_bad = fflush(stdout) != 0 || ferror(stdout);
    int err_bad = fflush(stderr) != 0 || ferror(stderr);
    if (!out_bad && !err_bad) return rc;
    if (!err_bad) fputs("calscope: error writing the output\n", stderr);
    return 3;
}

int main(int argc, char **argv)
{
    int rc;
    if (argc >= 2 && strcmp(argv[1], "report") == 0) rc = report_main(argc - 1, argv + 1);
    else if (argc >= 2 && strcmp(argv[1], "reduce") == 0) rc = reduce_main(argc - 1, argv + 1);
    else rc = tui_main(argc, argv);
    return check_output(rc);
}
