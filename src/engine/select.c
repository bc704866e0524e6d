/* Selection operators: a hand-written lexer and recursive-descent parser (grammar in
 * select.h), compiled to a flat list of conditions that are ANDed per row.
 *
 * Class- and case-valued conditions compile to a membership table (one byte per class or
 * per case) so `in {…}` costs one load per row whatever the size of the set. */
#include "calscope/select.h"

#include "engine/classes.h"
#include "engine/num/num.h"

#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---------------------------------------------------------------- lexer */

typedef enum tok_kind {
    T_END, T_WORD, T_STR, T_OP, T_LBRACE, T_RBRACE, T_LBRACK, T_RBRACK, T_LPAREN, T_RPAREN,
    T_COMMA, T_BAD
} tok_kind;

typedef enum cmp_op { OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE } cmp_op;

typedef struct token {
    tok_kind kind;
    size_t off, len;   /* bytes of the expression; for T_STR the quotes included */
    cmp_op op;         /* T_OP */
} token;

/* Characters that end a bare word: punctuation of the grammar, quotes and blanks. */
static int is_word_char(unsigned char c)
{
    return c > ' ' && !strchr("{}[](),<>=!\"'", c);
}

/* Splits expr into tokens. Never fails: lexical problems become T_BAD tokens that the
 * parser reports where it meets them. Returns the array (caller frees) ending with T_END. */
static token *lex(const char *expr, size_t *count)
{
    size_t len = strlen(expr), cap = len + 2, n = 0;
    token *t = malloc(cap * sizeof *t);
    if (!t) return NULL;
    size_t i = 0;
    while (i < len) {
        unsigned char c = (unsigned char)expr[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') { i++; continue; }
        token k = { T_BAD, i, 1, OP_EQ };
        switch (c) {
        case '{': k.kind = T_LBRACE; break;
        case '}': k.kind = T_RBRACE; break;
        case '[': k.kind = T_LBRACK; break;
        case ']': k.kind = T_RBRACK; break;
        case '(': k.kind = T_LPAREN; break;
        case ')': k.kind = T_RPAREN; break;
        case ',': k.kind = T_COMMA; break;
        case '<': case '>': case '=': case '!': {
            int eq = expr[i + 1] == '=';
            k.kind = T_OP;
            k.len = eq ? 2 : 1;
            if (c == '<') k.op = eq ? OP_LE : OP_LT;
            else if (c == '>') k.op = eq ? OP_GE : OP_GT;
            else if (c == '=') { k.op = OP_EQ; if (!eq) k.kind = T_BAD; }
            else { k.op = OP_NE; if (!eq) k.kind = T_BAD; }
            break;
        }
        case '"': case '\'': {
            const char *close = strchr(expr + i + 1, (char)c);
            if (close) { k.kind = T_STR; k.len = (size_t)(close - (expr + i)) + 1; }
            else { k.kind = T_BAD; k.len = len - i; }
            break;
        }
        default:
            if (is_word_char(c)) {
                size_t j = i;
                while (j < len && is_word_char((unsigned char)expr[j])) j++;
                k.kind = T_WORD;
                k.len = j - i;
            }
            break;
        }
        t[n++] = k;
        i += k.len;
    }
    t[n].kind = T_END;
    t[n].off = len;
    t[n].len = 0;
    t[n].op = OP_EQ;
    *count = n + 1;
    return t;
}

/* ---------------------------------------------------------------- compiled form */

typedef enum field { F_Y, F_PRED, F_CONF, F_P, F_CASE } field;

typedef struct cond {
    field f;
    int cls;              /* F_P: the class */
    /* class / case conditions: row matches when member[v] != negate */
    uint8_t *member;
    size_t n_member;
    int negate;
    /* numeric conditions: either a comparison with x, or an interval */
    int is_interval;
    cmp_op op;
    double x;
    double lo, hi;
    int lo_open, hi_open;
} cond;

struct cs_select {
    cond *c;
    size_t n;
};

void cs_select_free(cs_select *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->n; i++) free(s->c[i].member);
    free(s->c);
    free(s);
}

/* ---------------------------------------------------------------- parser */

/* Longest expression echoed in full in a message (cs_error.msg holds 1024 bytes). */
#define SHOW_MAX 480

typedef struct parser {
    const char *expr;
    const cs_dataset *d;
    token *t;
    size_t pos;
    cs_error *err;
    cs_classmap *classes; /* the dataset's class names, built at the first class token */
    char buf[128];        /* scratch for token text */
} parser;

/* 1-based character position of byte offset `off` (UTF-8 continuation bytes do not count,
 * so the caret lines up under non-ASCII names too). */
static long char_col(const char *expr, size_t off)
{
    long col = 1;
    for (size_t i = 0; i < off && expr[i]; i++)
        if (((unsigned char)expr[i] & 0xC0) != 0x80) col++;
    return col;
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static cs_status fail_at(parser *p, const token *at, const char *fmt, ...)
{
    char reason[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);

    long col = char_col(p->expr, at->off);
    /* The echoed expression has blanks flattened to spaces so the caret stays aligned. */
    char shown[SHOW_MAX + 1];
    size_t i = 0;
    for (; p->expr[i] && i < SHOW_MAX; i++) {
        char c = p->expr[i];
        shown[i] = (c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') ? ' ' : c;
    }
    shown[i] = '\0';
    char caret[SHOW_MAX + 2];
    long nsp = col - 1 < SHOW_MAX ? col - 1 : SHOW_MAX;
    memset(caret, ' ', (size_t)nsp);
    caret[nsp] = '^';
    caret[nsp + 1] = '\0';
    cs_error_set(p->err, CS_EUSAGE, 0, col, "selection: %s\n  %s\n  %s", reason, shown, caret);
    return CS_EUSAGE;
}

/* Text of a token for messages and lookups (quotes stripped from T_STR); scratch buffer. */
static const char *tok_text(parser *p, const token *k)
{
    if (k->kind == T_END) return "end of expression";
    size_t off = k->off, len = k->len;
    if (k->kind == T_STR && len >= 2) { off++; len -= 2; }
    if (len >= sizeof p->buf) len = sizeof p->buf - 1;
    memcpy(p->buf, p->expr + off, len);
    p->buf[len] = '\0';
    return p->buf;
}

/* "'x'" for a token in a message, or "end of expression". */
static const char *tok_desc(parser *p, const token *k, char *out, size_t size)
{
    if (k->kind == T_END) snprintf(out, size, "end of expression");
    else snprintf(out, size, "'%s'", tok_text(p, k));
    return out;
}

static int word_is(parser *p, const token *k, const char *kw)
{
    return k->kind == T_WORD && k->len == strlen(kw)
        && strncasecmp(p->expr + k->off, kw, k->len) == 0;
}

static const token *peek(parser *p) { return &p->t[p->pos]; }
static const token *next(parser *p) { const token *k = &p->t[p->pos]; if (k->kind != T_END) p->pos++; return k; }

/* Resolves a class token to its index, or reports unknown / out of range. */
static cs_status parse_class(parser *p, int *out)
{
    const token *k = next(p);
    char desc[160];
    if (k->kind == T_BAD && (p->expr[k->off] == '"' || p->expr[k->off] == '\''))
        return fail_at(p, k, "unterminated quoted name");
    if (k->kind != T_WORD && k->kind != T_STR)
        return fail_at(p, k, "expected a class name or index, got %s", tok_desc(p, k, desc, sizeof desc));
    const char *name = tok_text(p, k);
    if (!p->d) { *out = 0; return CS_OK; }   /* the grammar only (cs_select_check_syntax) */
    if (!p->classes && !(p->classes = cs_classmap_of(p->d->class_names, p->d->k)))
        return cs_error_set(p->err, CS_ENOMEM, 0, 0, "selection: out of memory");
    int why = 0;
    int c = cs_classmap_find(p->classes, name, strlen(name), &why);
    if (c >= 0) { *out = c; return CS_OK; }
    char e[400];
    switch (why) {
    case CS_CLASS_RANGE:
        return fail_at(p, k, "class %s out of range: the file has %zu classes (0..%zu)", name,
                       p->d->k, p->d->k - 1);
    case CS_CLASS_NO_NUMBER:
    case CS_CLASS_AMBIGUOUS:
    case CS_CLASS_POSITION:
        return fail_at(p, k, "class %s",
                       cs_classmap_explain(p->classes, why, name, strlen(name), e, sizeof e));
    default:
        return fail_at(p, k, "unknown class '%s'", name);
    }
}

/* Resolves a case token to its index in d->case_names. Exact match first, then
 * case-insensitive, so `case == Img01` finds "img01" when that is unambiguous. */
static cs_status parse_case(parser *p, int *out)
{
    const token *k = next(p);
    char desc[160];
    if (k->kind == T_BAD && (p->expr[k->off] == '"' || p->expr[k->off] == '\''))
        return fail_at(p, k, "unterminated quoted name");
    if (k->kind != T_WORD && k->kind != T_STR)
        return fail_at(p, k, "expected a case name, got %s", tok_desc(p, k, desc, sizeof desc));
    const char *name = tok_text(p, k);
    if (!p->d) { *out = 0; return CS_OK; }   /* the grammar only (cs_select_check_syntax) */
    for (size_t i = 0; i < p->d->n_cases; i++)
        if (p->d->case_names[i] && strcmp(p->d->case_names[i], name) == 0) { *out = (int)i; return CS_OK; }
    int found = -1;
    for (size_t i = 0; i < p->d->n_cases; i++)
        if (p->d->case_names[i] && strcasecmp(p->d->case_names[i], name) == 0) {
            if (found >= 0) { found = -2; break; }
            found = (int)i;
        }
    if (found >= 0) { *out = found; return CS_OK; }
    return fail_at(p, k, "unknown case '%s'", name);
}

static cs_status parse_number(parser *p, double *out, const token **tok)
{
    const token *k = next(p);
    if (tok) *tok = k;
    char desc[160];
    if (k->kind == T_END) return fail_at(p, k, "expected a number, got end of expression");
    if (k->kind != T_WORD)
        return fail_at(p, k, "expected a number, got %s", tok_desc(p, k, desc, sizeof desc));
    const char *text = tok_text(p, k);
    double v;
    /* the loader's number rule, as for flags (cs_parse_number): a subnormal is a number */
    if (cs_load_parse_double(text, strlen(text), &v) != CSL_NUM_OK)
        return fail_at(p, k, "bad number '%s'", text);
    *out = v;
    return CS_OK;
}

/* `{ item (, item)* }` after `in`; items are classes or cases. Fills c->member. */
static cs_status parse_set(parser *p, cond *c, int is_case)
{
    const token *open = next(p);
    char desc[160];
    if (open->kind != T_LBRACE)
        return fail_at(p, open, "expected '{' after 'in', got %s", tok_desc(p, open, desc, sizeof desc));
    if (peek(p)->kind == T_RBRACE) return fail_at(p, open, "empty set");
    if (peek(p)->kind == T_END) return fail_at(p, open, "unterminated set: missing '}'");
    for (;;) {
        int v;
        if (peek(p)->kind == T_END) return fail_at(p, open, "unterminated set: missing '}'");
        cs_status st = is_case ? parse_case(p, &v) : parse_class(p, &v);
        if (st != CS_OK) return st;
        c->member[v] = 1;
        const token *k = next(p);
        if (k->kind == T_RBRACE) return CS_OK;
        if (k->kind == T_END) return fail_at(p, open, "unterminated set: missing '}'");
        if (k->kind != T_COMMA)
            return fail_at(p, k, "expected ',' or '}' in set, got %s", tok_desc(p, k, desc, sizeof desc));
    }
}

/* `[lo, hi]` with '[' / '(' and ']' / ')' choosing closed / open ends. */
static cs_status parse_interval(parser *p, cond *c)
{
    const token *open = next(p);
    char desc[160];
    if (open->kind != T_LBRACK && open->kind != T_LPAREN)
        return fail_at(p, open, "expected '[' or '(' after 'in', got %s", tok_desc(p, open, desc, sizeof desc));
    c->is_interval = 1;
    c->lo_open = open->kind == T_LPAREN;
    const token *lo_tok, *hi_tok;
    if (peek(p)->kind == T_END) return fail_at(p, open, "unterminated interval: missing ']' or ')'");
    cs_status st = parse_number(p, &c->lo, &lo_tok);
    if (st != CS_OK) return st;
    const token *k = next(p);
    if (k->kind == T_END) return fail_at(p, open, "unterminated interval: missing ']' or ')'");
    if (k->kind != T_COMMA)
        return fail_at(p, k, "expected ',' in interval, got %s", tok_desc(p, k, desc, sizeof desc));
    if (peek(p)->kind == T_END) return fail_at(p, open, "unterminated interval: missing ']' or ')'");
    st = parse_number(p, &c->hi, &hi_tok);
    if (st != CS_OK) return st;
    k = next(p);
    if (k->kind == T_END) return fail_at(p, open, "unterminated interval: missing ']' or ')'");
    if (k->kind != T_RBRACK && k->kind != T_RPAREN)
        return fail_at(p, k, "expected ']' or ')' to close the interval, got %s",
                       tok_desc(p, k, desc, sizeof desc));
    c->hi_open = k->kind == T_RPAREN;
    if (c->lo > c->hi) {
        char lo_text[128];
        snprintf(lo_text, sizeof lo_text, "%s", tok_text(p, lo_tok));
        return fail_at(p, lo_tok, "interval lower bound %s is above its upper bound %s", lo_text,
                       tok_text(p, hi_tok));
    }
    return CS_OK;
}

static const char *op_text(cmp_op op)
{
    static const char *const names[] = { "==", "!=", "<", "<=", ">", ">=" };
    return names[op];
}

static cs_status parse_cond(parser *p, cond *c)
{
    const token *f = next(p);
    char desc[160], fname[64];
    int class_valued = 1, is_case = 0;
    if (word_is(p, f, "y") || word_is(p, f, "label")) c->f = F_Y;
    else if (word_is(p, f, "pred")) c->f = F_PRED;
    else if (word_is(p, f, "conf")) { c->f = F_CONF; class_valued = 0; }
    else if (word_is(p, f, "p")) {
        c->f = F_P;
        class_valued = 0;
        const token *k = next(p);
        if (k->kind != T_LBRACK)
            return fail_at(p, k, "expected '[' after 'p', got %s", tok_desc(p, k, desc, sizeof desc));
        cs_status st = parse_class(p, &c->cls);
        if (st != CS_OK) return st;
        k = next(p);
        if (k->kind != T_RBRACK)
            return fail_at(p, k, "expected ']' after the class in p[...], got %s",
                           tok_desc(p, k, desc, sizeof desc));
    } else if (word_is(p, f, "case")) {
        if (p->d && !p->d->case_id) return fail_at(p, f, "the file has no case column");
        c->f = F_CASE;
        is_case = 1;
    } else if (f->kind == T_END) {
        return fail_at(p, f, "expected a condition, got end of expression");
    } else {
        return fail_at(p, f, "unexpected %s: expected a condition on y, label, pred, conf, p[CLASS] or case",
                       tok_desc(p, f, desc, sizeof desc));
    }
    /* The field as typed ("y", "p[cat]") for messages. */
    const token *last = &p->t[p->pos - 1];
    snprintf(fname, sizeof fname, "'%.*s'", (int)(last->off + last->len - f->off), p->expr + f->off);

    const token *op = peek(p);
    if (class_valued) {
        c->n_member = !p->d ? 1 : is_case ? p->d->n_cases : p->d->k;
        c->member = calloc(c->n_member ? c->n_member : 1, 1);
        if (!c->member) return cs_error_set(p->err, CS_ENOMEM, 0, 0, "selection: out of memory");
        if (op->kind == T_OP && (op->op == OP_EQ || op->op == OP_NE)) {
            next(p);
            int v;
            cs_status st = is_case ? parse_case(p, &v) : parse_class(p, &v);
            if (st != CS_OK) return st;
            c->member[v] = 1;
            c->negate = op->op == OP_NE;
            return CS_OK;
        }
        if (word_is(p, op, "in")) { next(p); return parse_set(p, c, is_case); }
        if (op->kind == T_OP)
            return fail_at(p, op, "operator '%s' does not apply to %s: use ==, != or in",
                           op_text(op->op), fname);
        return fail_at(p, op, "expected an operator (==, != or in) after %s, got %s", fname,
                       tok_desc(p, op, desc, sizeof desc));
    }
    if (op->kind == T_OP) {
        next(p);
        c->op = op->op;
        return parse_number(p, &c->x, NULL);
    }
    if (word_is(p, op, "in")) { next(p); return parse_interval(p, c); }
    if (op->kind == T_BAD && p->expr[op->off] == '=')
        return fail_at(p, op, "expected an operator (<, <=, >, >=, ==, != or in) after %s, got '=' (use '==')",
                       fname);
    return fail_at(p, op, "expected an operator (<, <=, >, >=, ==, != or in) after %s, got %s", fname,
                   tok_desc(p, op, desc, sizeof desc));
}

/* d NULL: the grammar only, every class and case name taken as the first (never matched). */
static cs_select *compile(const char *expr, const cs_dataset *d, cs_error *err)
{
    if (!expr) expr = "";
    size_t nt = 0;
    token *t = lex(expr, &nt);
    cs_select *s = calloc(1, sizeof *s);
    cond *conds = calloc(nt ? nt : 1, sizeof *conds);   /* at most one condition per token */
    if (!t || !s || !conds) {
        free(t); free(s); free(conds);
        cs_error_set(err, CS_ENOMEM, 0, 0, "selection: out of memory");
        return NULL;
    }
    s->c = conds;
    parser p = { .expr = expr, .d = d, .t = t, .pos = 0, .err = err };
    char desc[160];
    cs_status st = CS_OK;
    if (t[0].kind != T_END) {
        for (;;) {
            st = parse_cond(&p, &s->c[s->n]);
            s->n++;   /* counted even on failure so cs_select_free releases its table */
            if (st != CS_OK) break;
            const token *k = next(&p);
            if (k->kind == T_END) break;
            if (word_is(&p, k, "and")) {
                if (peek(&p)->kind == T_END) {
                    st = fail_at(&p, k, "'and' at end of expression: expected a condition after it");
                    break;
                }
                continue;
            }
            st = fail_at(&p, k, "trailing input %s: expected 'and' or end of expression",
                         tok_desc(&p, k, desc, sizeof desc));
            break;
        }
    }
    free(t);
    cs_classmap_free(p.classes);
    if (st != CS_OK) { cs_select_free(s); return NULL; }
    return s;
}

/* Counted for the tests that show a measurement compiles its selection once. */
static atomic_ulong compilations;

unsigned long cs_select_compile_count(void)
{
    return atomic_load_explicit(&compilations, memory_order_relaxed);
}

cs_select *cs_select_compile(const char *expr, const cs_dataset *d, cs_error *err)
{
    atomic_fetch_add_explicit(&compilations, 1, memory_order_relaxed);
    return compile(expr, d, err);
}

cs_status cs_select_check_syntax(const char *expr, cs_error *err)
{
    atomic_fetch_add_explicit(&compilations, 1, memory_order_relaxed);
    cs_select *s = compile(expr, NULL, err);
    if (!s) return err->code;
    cs_select_free(s);
    return CS_OK;
}

/* ---------------------------------------------------------------- evaluation */

/* Top-1 confidence / prediction of a row; from the prepared caches when present, so an
 * unprepared dataset still gives the same answer (ties: the first maximal index). */
static size_t row_pred(const cs_dataset *d, size_t row)
{
    if (d->pred) return (size_t)d->pred[row];
    const double *g = d->prob + row * d->k;
    size_t best = 0;
    for (size_t j = 1; j < d->k; j++)
        if (g[j] > g[best]) best = j;
    return best;
}

static int cmp_holds(cmp_op op, double v, double x)
{
    switch (op) {
    case OP_EQ: return v == x;
    case OP_NE: return v != x;
    case OP_LT: return v < x;
    case OP_LE: return v <= x;
    case OP_GT: return v > x;
    case OP_GE: return v >= x;
    }
    return 0;
}

static int member_holds(const cond *c, long v)
{
    if (v < 0 || (size_t)v >= c->n_member) return c->negate;
    return (c->member[v] != 0) != (c->negate != 0);
}

static int cond_holds(const cond *c, const cs_dataset *d, size_t row)
{
    double x;
    switch (c->f) {
    case F_Y: return member_holds(c, d->label[row]);
    case F_PRED: return member_holds(c, (long)row_pred(d, row));
    case F_CASE: return member_holds(c, d->case_id[row]);
    case F_CONF: x = d->conf ? d->conf[row] : d->prob[row * d->k + row_pred(d, row)]; break;
    case F_P: x = d->prob[row * d->k + (size_t)c->cls]; break;
    default: return 0;
    }
    if (!c->is_interval) return cmp_holds(c->op, x, c->x);
    if (c->lo_open ? !(x > c->lo) : !(x >= c->lo)) return 0;
    if (c->hi_open ? !(x < c->hi) : !(x <= c->hi)) return 0;
    return 1;
}

int cs_select_match(const cs_select *s, const cs_dataset *d, size_t row)
{
    for (size_t i = 0; i < s->n; i++)
        if (!cond_holds(&s->c[i], d, row)) return 0;
    return 1;
}

size_t cs_select_filter(const cs_select *s, const cs_dataset *d, const uint32_t *rows, size_t n,
                        uint32_t *out)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (cs_select_match(s, d, rows[i])) out[m++] = rows[i];
    return m;
}

size_t cs_select_band_filter(const cs_select_band *b, const cs_dataset *d, const uint32_t *rows,
                             size_t n, uint32_t *out)
{
    /* the condition the parser makes of "conf in [lo, hi]" (or p[c], hi open), so the rows
     * are those of the text */
    cond c = { .f = b->cls < 0 ? F_CONF : F_P, .cls = b->cls, .is_interval = 1,
               .lo = b->lo, .hi = b->hi, .lo_open = 0, .hi_open = !b->hi_closed };
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (cond_holds(&c, d, rows[i])) out[m++] = rows[i];
    return m;
}

int cs_select_only_case(const cs_select *s)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->c[i].f != F_CASE) return 0;
    return 1;
}

int cs_select_is_all(const cs_select *s)
{
    return s->n == 0;
}
