/* calscope entry point: `calscope report ...` is headless, anything else opens the dashboard. */
#include <string.h>

#include "report/report.h"
#include "tui/tui.h"

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "report") == 0) return report_main(argc - 1, argv + 1);
    return tui_main(argc, argv);
}
