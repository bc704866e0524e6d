/* Settings back to a command line: the one renderer (the dashboard's `:` line) and the one
 * shell-quoting rule, driven by the flag table's printers. */
#include "session/flags.h"

#include <string.h>

const char *ss_binning_name(cs_binning b)
{
    return b == CS_BIN_MASS ? "mass" : b == CS_BIN_KDTREE ? "kdtree" : "uniform";
}

const char *ss_mixture_name(cs_mixture m)
{
    return m == CS_MIX_GMM3 ? "gmm3" : "kde";
}

/* Numbers as the shortest decimal that reads back to the same double, so the flag means
 * exactly the value used. */
void ss_distance_name(const cs_settings *s, char *buf, size_t size)
{
    char lo[40], hi[40];
    switch (s->distance) {
    case CS_DIST_L2: snprintf(buf, size, "l2"); break;
    case CS_DIST_MAX: snprintf(buf, size, "max"); break;
    case CS_DIST_INTERVAL:
        cs_format_number(lo, sizeof lo, s->interval_lo);
        cs_format_number(hi, sizeof hi, s->interval_hi);
        snprintf(buf, size, "interval:%s,%s", lo, hi);
        break;
    default: snprintf(buf, size, "tvd"); break;
    }
}

static void append(char *buf, size_t size, const char *s)
{
    size_t n = strlen(buf);
    if (n + 1 >= size) return;
    snprintf(buf + n, size - n, "%s", s);
}

void ss_shell_quote(char *buf, size_t size, const char *s)
{
    int plain = s[0] != 0;
    for (const char *c = s; *c; c++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.,:/=+-@%", *c))
            plain = 0;
    if (plain) { append(buf, size, s); return; }
    int controls = 0;
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) controls |= *c < 0x20 || *c == 0x7f;
    if (controls) {
        /* $'...' (bash, zsh, ksh, POSIX.1-2024 sh): the control bytes as \xNN paste back as
         * the same bytes, and a screen shows no raw control */
        append(buf, size, "$'");
        for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
            char one[8];
            if (*c < 0x20 || *c == 0x7f) snprintf(one, sizeof one, "\\x%02x", *c);
            else if (*c == '\'' || *c == '\\') snprintf(one, sizeof one, "\\%c", *c);
            else snprintf(one, sizeof one, "%c", *c);
            append(buf, size, one);
        }
        append(buf, size, "'");
        return;
    }
    append(buf, size, "'");
    for (const char *c = s; *c; c++) {
        char one[2] = { *c, 0 };
        append(buf, size, *c == '\'' ? "'\\''" : one);
    }
    append(buf, size, "'");
}

void ss_render(const ss_opts *o, char *buf, size_t size)
{
    if (size == 0) return;
    buf[0] = 0;
    append(buf, size, "calscope report");
    size_t n;
    const ss_flag *t = ss_flags(&n);
    for (size_t i = 0; i < n; i++) {
        if (!t[i].print || !(t[i].fronts & SS_REPORT)) continue;
        for (size_t k = 0; k == 0 || t[i].repeatable; k++) {
            char val[CS_SPEC_MAX + 64];
            t[i].print(o, k, val, sizeof val);
            if (!val[0]) break;
            append(buf, size, " ");
            append(buf, size, t[i].name);
            if (!t[i].metavar) continue;
            append(buf, size, " ");
            ss_shell_quote(buf, size, val);
        }
    }
    /* a file named like a flag ("-x.csv") only after `--`, as it was given */
    for (size_t f = 0; f < o->n_files; f++)
        if (o->files[f][0] == '-' && o->files[f][1]) { append(buf, size, " --"); break; }
    for (size_t f = 0; f < o->n_files; f++) {
        append(buf, size, " ");
        ss_shell_quote(buf, size, o->files[f]);
    }
}
