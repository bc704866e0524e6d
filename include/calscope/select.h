/* calscope engine: selection operators (SPEC §2, seed 002 §4.1).
 *
 * Grammar (joined with `and`; class names or indices wherever a class is expected):
 *   cond  := 'y' ('=='|'!=') CLASS | 'y' 'in' '{' CLASS (',' CLASS)* '}'
 *          | 'pred' ('=='|'!=') CLASS | 'pred' 'in' '{' ... '}'
 *          | ('conf' | 'p[' CLASS ']') CMP NUMBER            CMP := < <= > >= == !=
 *          | ('conf' | 'p[' CLASS ']') 'in' ('['|'(') NUM ',' NUM (']'|')')
 *          | 'case' ('=='|'!=') NAME | 'case' 'in' '{' ... '}'
 *   expr  := cond ('and' cond)*
 * Selection is applied to the dataset's samples before the lens.
 * Threads: a compiled cs_select is immutable; cs_select_match may run on many threads. */
#ifndef CALSCOPE_SELECT_H
#define CALSCOPE_SELECT_H

#include <stddef.h>
#include <stdint.h>

#include "calscope/dataset.h"
#include "calscope/error.h"

typedef struct cs_select cs_select;

/* Compiles `expr` against the dataset's class and case names. Returns NULL with err set
 * (CS_EUSAGE) on a bad expression: err->col is the 1-based character position of the bad
 * token and err->msg has three lines: "selection: reason", the expression, and a caret line
 * ("    ^") under the bad token. An empty or all-blank expression selects everything. */
cs_select *cs_select_compile(const char *expr, const cs_dataset *d, cs_error *err);

/* Nonzero when dataset row `row` satisfies the selection. */
int cs_select_match(const cs_select *s, const cs_dataset *d, size_t row);

/* Writes the matching rows among rows[0..n) to out (in order) and returns how many. */
size_t cs_select_filter(const cs_select *s, const cs_dataset *d, const uint32_t *rows, size_t n,
                        uint32_t *out);

void cs_select_free(cs_select *s);

#endif
