#include "cs_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void cs_test_assert_double(double got, double want, double abs_tol, double rel_tol,
                           const char *expr, const char *file, int line)
{
    if (isnan(got) && isnan(want)) return;
    double tol = abs_tol + rel_tol * fabs(want);
    if (!(fabs(got - want) <= tol)) {
        print_error("%s = %.17g, want %.17g (tolerance %.3g)\n", expr, got, want, tol);
        _fail(file, line);
    }
}

const char *cs_test_sample(const char *name)
{
    static char buf[4096];
    const char *dir = getenv("CALSCOPE_SAMPLES");
    snprintf(buf, sizeof buf, "%s/%s", dir && *dir ? dir : "samples", name);
    return buf;
}

static char tmp_paths[8][64];
static int tmp_next;
static int tmp_registered;

static void tmp_cleanup(void)
{
    for (int i = 0; i < 8; i++)
        if (tmp_paths[i][0]) unlink(tmp_paths[i]);
}

const char *cs_test_tmpfile(const char *suffix, const void *text, size_t len)
{
    if (!tmp_registered) { atexit(tmp_cleanup); tmp_registered = 1; }
    char *p = tmp_paths[tmp_next];
    tmp_next = (tmp_next + 1) % 8;
    if (p[0]) unlink(p);
    snprintf(p, 64, "/tmp/cstestXXXXXX%s", suffix);
    int fd = mkstemps(p, (int)strlen(suffix));
    if (fd < 0) { p[0] = '\0'; fail_msg("mkstemps failed"); }
    if (write(fd, text, len) != (ssize_t)len) fail_msg("write failed");
    close(fd);
    return p;
}
