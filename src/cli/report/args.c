/* argv of `calscope report`: the session layer's flag table (session/flags.h) parses it; the
 * report adds its --check gates, whose metric names are its own (checks.c). */
#include "cli/report/rep.h"

#include <stdarg.h>
#include <stdlib.h>

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
int rep_usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("calscope: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\nTry `calscope report --help`.\n", stderr);
    return 2;
}

void rep_opts_free(rep_opts *o)
{
    ss_opts_free(o);
}

/* --check TEXT, as the flag table reads it: parsed at once, so its error comes in argv order. */
static int add_check(ss_opts *o, const char *text)
{
    char msg[256];
    rep_check c;
    if (rep_check_parse(text, &c, msg, sizeof msg)) return rep_usage_error("--check '%s': %s", text, msg);
    rep_check *n = realloc(o->checks, (o->n_checks + 1) * sizeof *n);
    if (!n) return rep_usage_error("out of memory");
    o->checks = n;
    o->checks[o->n_checks] = c;     /* the table counts n_checks */
    return 0;
}

int rep_parse_args(int argc, char **argv, rep_opts *o)
{
    o->check_fn = add_check;
    return ss_parse(argc, argv, SS_REPORT, o);
}
