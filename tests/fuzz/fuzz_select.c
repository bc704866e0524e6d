/* libFuzzer target for the selection-expression parser (src/engine/select.c, the --select flag
 * and the dashboard's `/` prompt). The input is the expression (cut at the first NUL); the first
 * byte picks one of two small datasets (with and without a case column) whose class and case
 * names include the awkward ones: a keyword, a number that is not its index, spaces, non-ASCII,
 * case names that differ only in case. Invariants:
 *   - a refused expression: CS_EUSAGE, line 0, a column within the input (1 .. characters + 1),
 *     and a message "selection: REASON\n  EXPR\n  SPACES^" whose last line puts the caret at
 *     that column under the echoed expression (blanks shown as spaces);
 *   - a compiled one: cs_select_filter keeps exactly the rows cs_select_match accepts, matching
 *     is the same on a prepared and an unprepared dataset, an "all" selection keeps every row,
 *     and `EXPR and conf >= 0` (always true) compiles and keeps the same rows;
 *   - the grammar alone (cs_select_check_syntax, the dashboard's check while a file loads)
 *     accepts every expression that compiles, and an expression it refuses (a well-formed
 *     refusal, as above) does not compile on either dataset. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calscope/load.h"
#include "calscope/select.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Columns: case, label, then classes "cat", "in", "2", "été", "bird", "dog". Row probabilities
 * include ties (first maximal index wins) and 0 / 1 exactly. */
static const char csv_cases[] =
    "case,label,p_cat,p_in,p_2,p_été,p_bird,p_dog\n"
    "c1,#0,0.5,0.1,0.1,0.1,0.1,0.1\n"
    "C1,#1,0.2,0.2,0.2,0.2,0.1,0.1\n"
    "x y,#2,0,0,1,0,0,0\n"
    "c1,#3,0.1,0.1,0.1,0.6,0.05,0.05\n"
    "in,#4,0.3,0.3,0.1,0.1,0.1,0.1\n"
    "x y,#5,0.05,0.05,0.05,0.05,0.4,0.4\n"
    "é,#0,0.33,0.33,0.34,0,0,0\n"
    "2,#1,0.125,0.125,0.125,0.125,0.25,0.25\n";

static cs_dataset *datasets[2];

static cs_dataset *load_once(int with_cases)
{
    if (datasets[with_cases]) return datasets[with_cases];
    /* the same file without its case column: skip "case," and the first field of each row */
    char buf[sizeof csv_cases];
    const char *src = csv_cases;
    if (!with_cases) {
        char *o = buf;
        for (const char *p = csv_cases; *p;) {
            const char *comma = strchr(p, ',');
            const char *nl = strchr(p, '\n');
            size_t len = (size_t)(nl - comma);   /* ",label,...": drop the first field */
            memcpy(o, comma + 1, len);
            o += len;
            p = nl + 1;
        }
        *o = '\0';
        src = buf;
    }
    cs_load_options opt;
    cs_load_options_default(&opt);
    cs_error err;
    datasets[with_cases] = cs_load_buffer("sel.csv", src, strlen(src), &opt, NULL, &err);
    if (!datasets[with_cases]) {
        fprintf(stderr, "fuzz_select: the built-in dataset does not load: %s\n", err.msg);
        abort();
    }
    return datasets[with_cases];
}

static size_t utf8_chars(const char *s)
{
    size_t n = 0;
    for (; *s; s++) n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

static void check_refusal(const char *expr, const cs_error *err)
{
    if (err->code == CS_ENOMEM) return;
    if (err->code != CS_EUSAGE || err->line != 0) abort();
    if (err->col < 1 || (size_t)err->col > utf8_chars(expr) + 1) abort();
    if (strncmp(err->msg, "selection: ", 11) != 0) abort();
    size_t ml = strlen(err->msg);
    if (ml + 1 >= sizeof err->msg) return;      /* truncated: the tail is not all there */
    /* the last line: two spaces, col-1 spaces (at most 480), the caret */
    const char *caret_line = strrchr(err->msg, '\n');
    if (!caret_line) abort();
    caret_line++;
    size_t want_sp = 2 + ((size_t)err->col - 1 < 480 ? (size_t)err->col - 1 : 480);
    if (strlen(caret_line) != want_sp + 1 || caret_line[want_sp] != '^') abort();
    for (size_t i = 0; i < want_sp; i++)
        if (caret_line[i] != ' ') abort();
    /* the line before: two spaces and the expression (first 480 bytes, blanks as spaces) */
    const char *expr_line = caret_line - 1;
    while (expr_line > err->msg && expr_line[-1] != '\n') expr_line--;
    if (expr_line == err->msg || strncmp(expr_line, "  ", 2) != 0) abort();
    size_t shown = (size_t)(caret_line - 1 - (expr_line + 2));
    size_t el = strlen(expr);
    if (shown != (el < 480 ? el : 480)) abort();
    for (size_t i = 0; i < shown; i++) {
        char c = expr[i];
        char want = (c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') ? ' ' : c;
        if (expr_line[2 + i] != want) abort();
    }
}

static void check_selection(const char *expr, const cs_select *s, cs_dataset *d)
{
    uint32_t rows[16], kept[16];
    size_t n = d->n;
    for (size_t i = 0; i < n; i++) rows[i] = (uint32_t)i;
    size_t nk = cs_select_filter(s, d, rows, n, kept);
    if (nk > n) abort();
    int match[16];
    size_t j = 0;
    for (size_t i = 0; i < n; i++) {
        match[i] = cs_select_match(s, d, i) != 0;
        if (match[i]) {
            if (j >= nk || kept[j] != i) abort();
            j++;
        }
    }
    if (j != nk) abort();
    if (cs_select_is_all(s) && nk != n) abort();

    /* unprepared: conf / pred computed from the probabilities give the same answers */
    double *conf = d->conf;
    int32_t *pred = d->pred;
    d->conf = NULL;
    d->pred = NULL;
    for (size_t i = 0; i < n; i++)
        if ((cs_select_match(s, d, i) != 0) != match[i]) abort();
    d->conf = conf;
    d->pred = pred;

    if (cs_select_is_all(s)) return;    /* blank: "and ..." would have nothing before it */
    size_t el = strlen(expr);
    char *more = malloc(el + 16);
    if (!more) return;
    memcpy(more, expr, el);
    memcpy(more + el, " and conf >= 0", 15);
    cs_error err;
    cs_select *t = cs_select_compile(more, d, &err);
    if (!t) {
        if (err.code == CS_ENOMEM) { free(more); return; }
        abort();
    }
    for (size_t i = 0; i < n; i++)
        if ((cs_select_match(t, d, i) != 0) != match[i]) abort();
    cs_select_free(t);
    free(more);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    cs_dataset *d = load_once(data[0] & 1);
    char *expr = malloc(size);
    if (!expr) return 0;
    memcpy(expr, data + 1, size - 1);
    expr[size - 1] = '\0';

    cs_error err;
    cs_select *s = cs_select_compile(expr, d, &err);
    if (s) check_selection(expr, s, d);
    else check_refusal(expr, &err);
    cs_error serr;
    cs_status form = cs_select_check_syntax(expr, &serr);
    if (form != CS_OK) {
        check_refusal(expr, &serr);
        if (s && serr.code != CS_ENOMEM) abort();    /* compiled, yet refused for its form */
    }
    cs_select_free(s);
    free(expr);
    return 0;
}
