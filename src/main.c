/* calscope entry point: the first argument names a command of the table below (`calscope
 * report ...` is headless, `calscope reduce ...` turns segmentation volumes into a statistics
 * file); anything else opens the dashboard.
 * Output that could not be written (a full disk, a closed pipe) is an error here, in one place,
 * whatever printed it: --help and --version of both front ends, the report, and the plot that
 * the machine formats send to stderr. */
#include <stdio.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <string.h>

#include "cli/reduce/reduce_cmd.h"
#include "cli/report/report.h"
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

/* Large blocks from mmap, always. glibc raises its mmap threshold each time an mmapped block
 * is freed (up to 32 MB), after which the per-draw blocks of the resampling jobs (a few MB
 * each, on every worker) come from the heap and stay resident once freed: the dashboard on
 * the 10^6 x 10 bench file, with a size curve, a bins curve and recomputes running, peaked at
 * 184-209 MB that way and at 150-161 MB with the threshold fixed at its 128 KiB default
 * (bench/tui_latency.sh; target 178 MB). The report's time is the same either way (perf stat
 * -r 5: 0.21-0.24 s both). */
static void large_blocks_from_mmap(void)
{
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
}

/* A command of `calscope COMMAND ...`: its handler gets argv from the command's name on and
 * returns the exit status. `help` says in one line what it does (the flag table in
 * src/session/flags.c holds the help a user reads). */
typedef struct command {
    const char *name;
    int (*handler)(int argc, char **argv);
    const char *help;
} command;

static const command COMMANDS[] = {
    {"report", report_main, "headless metrics as text, JSON or CSV, with exit codes for CI"},
    {"reduce", reduce_main, "segmentation volumes to a statistics file; --merge joins them"},
};

/* The command argv[1] names, or NULL: then the dashboard opens on the whole command line. */
static const command *find_command(int argc, char **argv)
{
    if (argc < 2) return NULL;
    for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
        if (strcmp(argv[1], COMMANDS[i].name) == 0) return &COMMANDS[i];
    return NULL;
}

int main(int argc, char **argv)
{
    large_blocks_from_mmap();
    const command *cmd = find_command(argc, argv);
    int rc = cmd ? cmd->handler(argc - 1, argv + 1) : tui_main(argc, argv);
    return check_output(rc);
}
