/* --check gates for CI: "ece<=0.05" fails the run (exit 1) when any file misses it. A metric
 * that is not available for a file (null in JSON, e.g. rece_m without id/tta, or an empty
 * selection) fails its check: a gate must never pass on a number that was not computed. */
#include "cli/report/rep.h"

#include "engine/num/num.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const op_text[] = { "<=", "<", ">=", ">" };

int rep_check_parse(const char *text, rep_check *c, char *msg, size_t msg_size)
{
    const char *p = text;
    while (isspace((unsigned char)*p)) p++;
    const char *name = p;
    while (isalnum((unsigned char)*p) || *p == '_' || *p == '-') p++;
    size_t nl = (size_t)(p - name);
    while (isspace((unsigned char)*p)) p++;

    c->text = text;
    /* as the dashboard labels them too: any case, '-' for '_' (ECE, RECE-G) */
    c->metric = cs_metric_lookup(name, nl);
    if (c->metric < 0) {
        char known[128];
        cs_metric_keys(known, sizeof known);
        snprintf(msg, msg_size, "unknown metric '%.*s' (known: %s)", (int)nl, name, known);
        return -1;
    }
    if (p[0] == '<') c->op = p[1] == '=' ? REP_LE : REP_LT;
    else if (p[0] == '>') c->op = p[1] == '=' ? REP_GE : REP_GT;
    else {
        snprintf(msg, msg_size, "expected one of <= < >= > after '%.*s'", (int)nl, name);
        return -1;
    }
    p += (c->op == REP_LE || c->op == REP_GE) ? 2 : 1;
    while (isspace((unsigned char)*p)) p++;
    /* the number up to trailing blanks, read by the one number rule (cs_parse_number) */
    size_t len = strlen(p);
    while (len && isspace((unsigned char)p[len - 1])) len--;
    char num[128];
    if (len && len < sizeof num) {
        memcpy(num, p, len);
        num[len] = '\0';
        if (cs_parse_number(num, &c->value)) return 0;
    }
    /* not a number by that rule: say where it ends (0x1p-3 is 0 and then x1p-3) */
    double v;
    size_t used = cs_load_parse_double_prefix(p, strlen(p), &v);
    if (!used) {
        snprintf(msg, msg_size, "expected a number after '%s'", op_text[c->op]);
        return -1;
    }
    const char *end = p + used;
    while (isspace((unsigned char)*end)) end++;
    snprintf(msg, msg_size, "unexpected text '%s' after the number", end);
    return -1;
}

static int holds(const rep_check *c, double v)
{
    switch (c->op) {
    case REP_LE: return v <= c->value;
    case REP_LT: return v < c->value;
    case REP_GE: return v >= c->value;
    case REP_GT: return v > c->value;
    }
    return 0;
}

/* The value of a check's line: six digits, unless at six digits it would seem to land on the
 * other side of the bound ("ece = 0.0586385 (want ece<=0.0586385)" for a value just above it):
 * then every digit it takes. */
static void value_text(const rep_check *c, double v, char *txt, size_t size)
{
    snprintf(txt, size, "%.6g", v);
    if (holds(c, strtod(txt, NULL)) != holds(c, v)) cs_format_number(txt, size, v);
}

size_t rep_checks_run(const rep_opts *o, const rep_file *files, size_t n)
{
    size_t failed = 0;
    for (size_t i = 0; i < n; i++) {
        const rep_file *f = &files[i];
        if (!f->loaded || f->usage_error) continue;  /* already an input / usage error */
        for (size_t k = 0; k < o->n_checks; k++) {
            const rep_check *c = &o->checks[k];
            const char *name = cs_metric_name(c->metric);
            double v = f->m.evaluated ? cs_metric_value(&f->m.result, c->metric) : NAN;
            char txt[40], bound[40];
            if (isnan(v)) {
                fprintf(stderr, "calscope: check failed: %s: %s is not available (want %s)\n",
                        f->path, name, c->text);
                failed++;
                continue;
            }
            value_text(c, v, txt, sizeof txt);
            if (holds(c, v)) {
                /* a passing gate says so, once: a CI log then shows what was checked */
                cs_format_number(bound, sizeof bound, c->value);
                fprintf(stderr, "calscope: check passed: %s: %s = %s %s %s\n", f->path, name, txt,
                        op_text[c->op], bound);
            } else {
                fprintf(stderr, "calscope: check failed: %s: %s = %s (want %s)\n",
                        f->path, name, txt, c->text);
                failed++;
            }
        }
    }
    return failed;
}
