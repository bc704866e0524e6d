/* calscope engine: selection operators (Kirchenbauer, Oaks & Heim 2022, "What is Your Metric
 * Telling You?", §4.1; the grammar: docs/metrics.md, "Selections").
 *
 * Grammar (joined with `and`; class names or indices wherever a class is expected):
 *   cond  := 'y' ('=='|'!=') CLASS | 'y' 'in' '{' CLASS (',' CLASS)* '}'
 *          | 'pred' ('=='|'!=') CLASS | 'pred' 'in' '{' ... '}'
 *          | ('conf' | 'p[' CLASS ']') CMP NUMBER            CMP := < <= > >= == !=
 *          | ('conf' | 'p[' CLASS ']') 'in' ('['|'(') NUM ',' NUM (']'|')')
 *          | 'case' ('=='|'!=') NAME | 'case' 'in' '{' ... '}'
 *   expr  := cond ('and' cond)*
 * Keywords (y, label, pred, conf, p, case, in, and) are case-insensitive; `label` is an
 * alias of `y`. CLASS is a class name (case-insensitive, as cs_dataset_class_index) or an
 * index 0..K-1; a name that is not a bare word (spaces, punctuation, a keyword) may be quoted
 * with '...' or "...". Case names match exactly, else case-insensitively when unambiguous.
 * NUMBER is a decimal as strtod reads it (finite). Intervals: '[' / ']' closed ends,
 * '(' / ')' open ends, e.g. `conf in [0.33, 0.66)`; lo > hi is an error, lo == hi is allowed.
 * Fields: y = label, pred = top-1 class (ties: first maximal index), conf = top-1
 * probability, p[c] = probability of class c, case = the row's case (needs a case column).
 * Comparisons are exact on the doubles as parsed.
 * Selection is applied to the dataset's samples before the lens.
 * Threads: a compiled cs_select is immutable; cs_select_match may run on many threads. */
#ifndef CALSCOPE_SELECT_H
#define CALSCOPE_SELECT_H

#include <stddef.h>
#include <stdint.h>

#include "calscope/dataset.h"
#include "calscope/error.h"

typedef struct cs_select cs_select;

/* Compiles `expr` against the dataset's class and case names. Returns a selection owned by
 * the caller (cs_select_free), or NULL with err set: CS_ENOMEM, or CS_EUSAGE on a bad
 * expression, with err->line = 0, err->col = the 1-based character position (UTF-8 code
 * points) of the bad token (length+1 when the problem is the end of the expression), and
 *   err->msg = "selection: <reason>\n  <expr>\n  <col-1 spaces>^"
 * i.e. the reason, the expression indented by two spaces (tabs/newlines shown as spaces),
 * and a caret under the bad token. For an unterminated or empty set / interval the caret is
 * under its opening bracket; for lo > hi under lo. An empty or all-blank expression selects
 * everything. The dataset must outlive the selection. Any thread. */
cs_select *cs_select_compile(const char *expr, const cs_dataset *d, cs_error *err);

/* The grammar of `expr` alone, for a caller that has no dataset yet (the dashboard while a
 * file loads): CS_OK, or the error cs_select_compile gives for the same text on any dataset
 * (same err->msg and err->col) when the problem is one of form; names of classes and cases,
 * and whether the file has a case column, are not checked (cs_select_compile does that once
 * the file is there). CS_ENOMEM as usual. Any thread. */
cs_status cs_select_check_syntax(const char *expr, cs_error *err);

/* Nonzero when dataset row `row` satisfies the selection. Uses d->conf / d->pred when
 * cs_dataset_prepare has filled them, else computes them from d->prob. */
int cs_select_match(const cs_select *s, const cs_dataset *d, size_t row);

/* Writes the matching rows among rows[0..n) to out (in order) and returns how many.
 * out may be rows itself (filtering in place). */
size_t cs_select_filter(const cs_select *s, const cs_dataset *d, const uint32_t *rows, size_t n,
                        uint32_t *out);

/* Nonzero when the selection is empty (keeps every row), so callers can skip filtering. */
int cs_select_is_all(const cs_select *s);

/* Nonzero when every condition of the selection is on `case` (an empty selection too): such a
 * selection keeps whole cases, the only kind a statistics file (calscope/segstats.h) can
 * apply. Any thread. */
int cs_select_only_case(const cs_select *s);

/* A condition `FIELD in [lo, hi]` (hi_closed) or `[lo, hi)` on conf (cls < 0) or p[cls], made
 * without text: the Likert table's categories narrow an already compiled selection's rows
 * with it. cs_select_band_filter writes the rows among rows[0..n) that satisfy it to out (may
 * be rows) and returns how many; exactly what the compiled text "conf in [lo, hi]" keeps.
 * Any thread. */
typedef struct cs_select_band {
    int cls;
    double lo, hi;
    int hi_closed;
} cs_select_band;
size_t cs_select_band_filter(const cs_select_band *b, const cs_dataset *d, const uint32_t *rows,
                             size_t n, uint32_t *out);

/* Test hook: how many expressions have been compiled in this process (cs_select_compile and
 * cs_select_check_syntax). Any thread. */
unsigned long cs_select_compile_count(void);

/* Frees a compiled selection. NULL is a no-op. */
void cs_select_free(cs_select *s);

#endif
