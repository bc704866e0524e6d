/* Header handling: delimiter sniffing and the mapping of column names to roles. */
#include "engine/load/load_internal.h"
#include "engine/load/load_scan.h"

#include "engine/classes.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int blank_char(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

size_t cs_load_sniff_extent(const char *buf, size_t len)
{
    size_t start = 0;
    while (start < len) {
        const char *nl = memchr(buf + start, '\n', len - start);
        if (!nl) return 0;
        size_t end = (size_t)(nl - buf);
        for (size_t i = start; i < end; i++)
            if (!blank_char(buf[i])) return end + 1;
        start = end + 1;
    }
    return 0;
}

char cs_load_sniff_delim(const char *buf, size_t len)
{
    /* find the first non-blank line */
    size_t start = 0, end = len;
    for (;;) {
        const char *nl = memchr(buf + start, '\n', len - start);
        end = nl ? (size_t)(nl - buf) : len;
        int blank = 1;
        for (size_t i = start; i < end && blank; i++)
            if (!blank_char(buf[i])) blank = 0;
        if (!blank || !nl) break;
        start = end + 1;
    }
    /* up to the first quote, three vector counts (a wide header is 100,000 names long);
     * from there byte by byte, skipping what the quotes hold */
    const char *q = memchr(buf + start, '"', end - start);
    size_t upto = q ? (size_t)(q - buf) : end;
    const int kind = cs_load_scan_kind(CSL_SCAN_AUTO);
    size_t comma = csl_count_byte(kind, buf + start, buf + upto, ','),
           semi = csl_count_byte(kind, buf + start, buf + upto, ';'),
           tab = csl_count_byte(kind, buf + start, buf + upto, '\t');
    int quoted = 0;
    for (size_t i = upto; i < end; i++) {
        char c = buf[i];
        if (c == '"') quoted = !quoted;
        else if (quoted) continue;
        else if (c == ',') comma++;
        else if (c == ';') semi++;
        else if (c == '\t') tab++;
    }
    if (semi > comma && semi >= tab) return ';';
    if (tab > comma && tab > semi) return '\t';
    return ',';
}

const char *cs_load_col_name(const csl_schema *s, size_t c)
{
    if (c >= s->named) return "";
    const char *t = s->col_text;
    while (c--) t += strlen(t) + 1;
    return t;
}

void cs_load_schema_free(csl_schema *s)
{
    if (!s) return;
    free(s->col);
    free(s->class_names);          /* col_text and every class name live in this block */
    for (size_t i = 0; i < s->n_ignored; i++) free(s->ignored[i]);
    free(s->ignored);
    cs_classmap_free(s->classes);
    memset(s, 0, sizeof *s);
}

/* The schema's one block of names: `slots` class pointers, then `text` bytes for col_text and
 * generated names. Returns 0 or -1 (out of memory, or sizes that overflow). */
static int alloc_names(csl_schema *s, size_t slots, size_t text)
{
    if (slots > (SIZE_MAX - text) / sizeof(char *)) return -1;
    s->class_names = malloc(slots * sizeof(char *) + text);
    if (!s->class_names) return -1;
    s->col_text = (char *)(s->class_names + slots);
    return 0;
}

static unsigned char lower_ascii(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c - 'A' + 'a') : c;
}

/* p[0..n) equals the lowercase word w[0..n) ignoring ASCII case (no locale: a header is
 * compared byte by byte, the same on every machine). */
static int same_ci(const char *p, const char *w, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (lower_ascii((unsigned char)p[i]) != (unsigned char)w[i]) return 0;
    return 1;
}

/* The field is the word w (lowercase, a string literal) ignoring ASCII case. */
#define NAME_IS(f, w) ((f)->len == sizeof(w) - 1 && same_ci((f)->p, (w), sizeof(w) - 1))
/* The field starts with the prefix pre (a literal) and has more after it: the prefix length,
 * else 0. */
#define PREFIX_LEN(f, pre) \
    ((f)->len > sizeof(pre) - 1 && same_ci((f)->p, (pre), sizeof(pre) - 1) ? sizeof(pre) - 1 : 0)

/* The role a header name gives its column (before the split column is considered), with the
 * length of its class prefix in *pl for CSL_PROB and CSL_LOGIT. */
static int name_role(const csl_field *f, size_t *pl)
{
    if (f->len == 0) return CSL_IGNORE;
    switch (lower_ascii((unsigned char)f->p[0])) {   /* one test per column for most names */
    case 'l':
        if (NAME_IS(f, "label")) return CSL_LABEL;
        if ((*pl = PREFIX_LEN(f, "logit_"))) return CSL_LOGIT;
        break;
    case 'y': if (NAME_IS(f, "y")) return CSL_LABEL; break;
    case 't':
        if (NAME_IS(f, "target") || NAME_IS(f, "true")) return CSL_LABEL;
        if (NAME_IS(f, "tta")) return CSL_TTA;
        break;
    case 'p':
        if (NAME_IS(f, "p") || NAME_IS(f, "prob")) return CSL_BINARY;
        if ((*pl = PREFIX_LEN(f, "p_")) || (*pl = PREFIX_LEN(f, "prob_"))) return CSL_PROB;
        break;
    case 's': if (NAME_IS(f, "score")) return CSL_BINARY; break;
    case 'i': if (NAME_IS(f, "id")) return CSL_ID; break;
    case 'c': if (NAME_IS(f, "case")) return CSL_CASE; break;
    default: break;
    }
    return CSL_IGNORE;
}

static char *dup_n(const char *p, size_t n)
{
    char *s = malloc(n + 1);
    if (!s) return NULL;
    memcpy(s, p, n);
    s[n] = '\0';
    return s;
}

/* Appends a copy of an unrecognised name to s->ignored (grown as needed: a wide header of
 * class columns reserves nothing for it). Returns 0 or -1. */
static int add_ignored(csl_schema *s, const csl_field *f)
{
    size_t n = s->n_ignored;
    if ((n & (n - 1)) == 0) {                 /* 0, 1, 2, 4, ...: full, double it */
        char **g = realloc(s->ignored, (n ? 2 * n : 1) * sizeof *g);
        if (!g) return -1;
        s->ignored = g;
    }
    if (!(s->ignored[n] = dup_n(f->p, f->len))) return -1;
    s->n_ignored = n + 1;
    return 0;
}

static cs_status nomem(const char *name, cs_error *err)
{
    return cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", name);
}

static cs_status header_error(cs_error *err, const char *name, long line, long col,
                              const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

static cs_status header_error(cs_error *err, const char *name, long line, long col,
                              const char *fmt, ...)
{
    char pos[512];
    cs_load_format_pos(pos, sizeof pos, name, line, col);
    char what[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return cs_error_set(err, CS_EINPUT, line, col, "%s%s", pos, what);
}

static cs_status build_headerless(csl_schema *s, const char *name, size_t nf, long line,
                                  const cs_load_options *opt, cs_error *err)
{
    long lc = opt->label_col > 0 ? opt->label_col : 1;
    char a[32], b[32];
    if (nf < 2 || (size_t)lc > nf) {
        snprintf(a, sizeof a, "%ld", lc);
        snprintf(b, sizeof b, "%zu", nf);
        if (nf < 2)
            return header_error(err, name, line, 1,
                                "headerless file needs a label and a probability column"
                                " (the first row has %s field)", b);
        return header_error(err, name, line, 1,
                            "label column %s does not exist (the first row has %s fields)", a, b);
    }
    s->ncols = nf;
    size_t nprob = nf - 1;
    s->binary = nprob == 1;
    s->k = s->binary ? 2 : nprob;
    s->col = calloc(nf, sizeof *s->col);
    /* "label" or "p_<index>": under 24 bytes a column; then "<index>" per class, under 24 too */
    if (!s->col || nf > SIZE_MAX / 48 || alloc_names(s, s->k, (nf + s->k) * 24))
        return nomem(name, err);
    char *text = s->col_text;
    size_t cls = 0;
    for (size_t c = 0; c < nf; c++) {
        if ((long)c + 1 == lc) {
            s->col[c].role = CSL_LABEL;
            text += snprintf(text, 24, "label") + 1;
        } else {
            s->col[c].role = s->binary ? CSL_BINARY : CSL_PROB;
            s->col[c].cls = (int)cls;
            if (s->binary) text += snprintf(text, 24, "p") + 1;
            else text += snprintf(text, 24, "p_%zu", cls) + 1;
            if (!s->first_prob_col) s->first_prob_col = (long)c + 1;
            cls++;
        }
    }
    s->named = nf;
    if (!(s->classes = cs_classmap_over(s->class_names, s->k))) return nomem(name, err);
    for (size_t j = 0; j < s->k; j++) {
        s->class_names[j] = text;
        text += snprintf(text, 24, "%zu", j) + 1;
        if (cs_classmap_add(s->classes, s->class_names[j]) != -1) return nomem(name, err);
    }
    return CS_OK;
}

cs_status cs_load_schema_begin(csl_schema_builder *b, csl_schema *s, const char *name,
                               size_t nf, size_t text_bound, long line,
                               const cs_load_options *opt, cs_error *err)
{
    memset(b, 0, sizeof *b);
    memset(s, 0, sizeof *s);
    b->s = s;
    b->name = name;
    b->line = line;
    b->opt = opt;
    b->err = err;
    s->header_line = line;
    s->ncols = nf;
    s->col = calloc(nf ? nf : 1, sizeof *s->col);
    /* every header name and every class name in one block: one allocation, not one per column, so a
     * header of 100,000 classes costs no allocation per class; a class name is its column's name
     * past the prefix. The 4 bytes after the names hold "0" and "1" for a binary file. */
    size_t slots = nf < 2 ? 2 : nf;
    if (text_bound > SIZE_MAX - 5 || !s->col || alloc_names(s, slots, text_bound + 4) ||
        !(s->classes = cs_classmap_over(s->class_names, slots)))   /* no copy of the names */
        return nomem(name, err);
    cs_load_populate(s->col, nf * sizeof *s->col);           /* a fault a page otherwise */
    cs_load_populate(s->class_names, slots * sizeof(char *) + text_bound);
    b->text = s->col_text;
    b->text_end = s->col_text + text_bound;
    return CS_OK;
}

#if defined(__GNUC__)
#define COLD __attribute__((noinline, cold))
#else
#define COLD
#endif

/* The refusals of a class column (c, 0-based, named cname): the classmap's answer dup when it
 * is not -1, else the mixes of kinds. Apart from cs_load_schema_column, so that the common
 * column needs no room for the messages (a header of 100,000 columns). */
static COLD cs_status class_refused(csl_schema_builder *b, size_t c, const char *cname, long dup)
{
    const csl_schema *s = b->s;
    const char *name = b->name;
    cs_error *err = b->err;
    long line = b->line;
    if (dup == CS_CLASSMAP_NOMEM) return nomem(name, err);
    if (dup == CS_CLASSMAP_HASH_NAME)
        return header_error(err, name, line, (long)c + 1,
                            "column '%s': a class name cannot be '#' and digits (that"
                            " spells a class position)", cname);
    if (dup >= 0) {
        char other[32];
        long oc = 0;
        for (size_t q = 0; q < c && !oc; q++)
            if ((s->col[q].role == CSL_PROB || s->col[q].role == CSL_LOGIT) &&
                s->col[q].cls == (int)dup)
                oc = (long)q + 1;
        snprintf(other, sizeof other, "%ld", oc);
        return header_error(err, name, line, (long)c + 1,
                            "duplicate column '%s' (class already given by column %s)",
                            cname, other);
    }
    if (b->prob_col && b->logit_col)
        return header_error(err, name, line, (long)c + 1,
                            "column '%s' mixes logit and probability columns"
                            " (give one kind)", cname);
    return header_error(err, name, line, (long)c + 1,
                        "column '%s' mixes per-class columns with the binary column"
                        " '%s'", cname, cs_load_col_name(s, (size_t)b->binary_col - 1));
}

/* Any other column's role (not a class column): its refusals and what it sets. */
static COLD cs_status other_column(csl_schema_builder *b, size_t c, const char *cname,
                                   const csl_field *fc, int role)
{
    csl_schema *s = b->s;
    const char *name = b->name;
    cs_error *err = b->err;
    long line = b->line;
    if (role == CSL_IGNORE) return add_ignored(s, fc) ? nomem(name, err) : CS_OK;
    int slot = role == CSL_BINARY ? 0 : role;
    if (b->seen[slot]) {
        char other[32];
        snprintf(other, sizeof other, "%ld", b->seen[slot]);
        return header_error(err, name, line, (long)c + 1,
                            "duplicate column '%s' (same meaning as column %s)",
                            cname, other);
    }
    b->seen[slot] = (long)c + 1;
    if (role == CSL_LABEL) b->label_col = (long)c + 1;
    if (role == CSL_BINARY) {
        if (s->k)
            return header_error(err, name, line, (long)c + 1,
                                "column '%s' mixes the binary column with per-class columns"
                                " like '%s'", cname,
                                cs_load_col_name(s, (size_t)s->first_prob_col - 1));
        b->binary_col = (long)c + 1;
        s->first_prob_col = (long)c + 1;
    }
    if (role == CSL_ID) s->has_id = 1;
    if (role == CSL_TTA) s->has_tta = 1;
    if (role == CSL_CASE) s->has_case = 1;
    if (role == CSL_SPLIT) s->has_split = 1;
    return CS_OK;
}

cs_status cs_load_schema_column(csl_schema_builder *b, csl_field f)
{
    csl_schema *s = b->s;
    size_t c = b->c;
    const csl_field fc = cs_load_trim(f);   /* quoted or not, spaces around a name do not count */
    if (c == s->ncols || (size_t)(b->text_end - b->text) < fc.len + 1)
        return nomem(b->name, b->err);      /* past what begin was told: cannot happen */
    b->c++;
    csl_col *col = &s->col[c];
    char *cname = b->text;                 /* this column's name, copied into col_text */
    memcpy(cname, fc.p, fc.len);
    cname[fc.len] = '\0';
    b->text = cname + fc.len + 1;
    s->named = c + 1;
    size_t pl = 0;
    int role = name_role(&fc, &pl);
    const char *split = b->opt->split_column;
    if (split && fc.len == strlen(split) && strncasecmp(fc.p, split, fc.len) == 0) {
        if (role != CSL_IGNORE)
            return header_error(b->err, b->name, b->line, (long)c + 1,
                                "column '%s' cannot be the split column: it already has a"
                                " meaning (label, probability, id, tta or case)", cname);
        role = CSL_SPLIT;
    }
    col->role = role;
    if (role != CSL_PROB && role != CSL_LOGIT) return other_column(b, c, cname, &fc, role);
    const char *suffix = cname + pl;
    s->class_names[s->k] = (char *)suffix;         /* the map reads it from there */
    long dup = cs_classmap_add_n(s->classes, suffix, fc.len - pl);
    if (dup != -1) return class_refused(b, c, cname, dup);
    if (role == CSL_PROB && !b->prob_col) b->prob_col = (long)c + 1;
    if (role == CSL_LOGIT && !b->logit_col) b->logit_col = (long)c + 1;
    if ((b->prob_col && b->logit_col) || b->binary_col) return class_refused(b, c, cname, -1);
    col->cls = (int)s->k++;
    if (!s->first_prob_col) s->first_prob_col = (long)c + 1;
    return CS_OK;
}

cs_status cs_load_schema_end(csl_schema_builder *b)
{
    csl_schema *s = b->s;
    const char *name = b->name;
    cs_error *err = b->err;
    long line = b->line;
    if (b->c != s->ncols) return nomem(name, err);   /* fewer columns than begin was told */
    if (!b->label_col)
        return header_error(err, name, line, 1,
                            "no label column (name one label, y, target or true)");
    if (!s->k && !b->binary_col)
        return header_error(err, name, line, 1,
                            "no probability columns (want p_<class>, prob_<class> or logit_<class>"
                            " columns, or one p, prob or score column)");
    if (b->binary_col) {
        s->binary = 1;
        s->k = 2;
        char *text = b->text;                          /* the 4 bytes kept after the names */
        memcpy(text, "0\0" "1", 4);
        s->class_names[0] = text;
        s->class_names[1] = text + 2;
        if (cs_classmap_add(s->classes, s->class_names[0]) != -1 ||
            cs_classmap_add(s->classes, s->class_names[1]) != -1)
            return nomem(name, err);
    } else if (s->k < 2) {
        return header_error(err, name, line, s->first_prob_col,
                            "only one class column '%s' (need two or more, or name it p, prob or"
                            " score for a binary file)",
                            cs_load_col_name(s, (size_t)s->first_prob_col - 1));
    }
    if (s->has_tta && !s->has_id)   /* its rows would be observations of nothing: refuse */
        return header_error(err, name, line, b->seen[CSL_TTA],
                            "a tta column needs an id column (the rows of one sample share"
                            " an id; tta 0 is its clean prediction)");
    if (b->opt->split_column && !s->has_split)
        return header_error(err, name, line, 1, "no split column '%s' in the header",
                            b->opt->split_column);
    s->from_logits = b->logit_col != 0;
    return CS_OK;
}

cs_status cs_load_schema_build(csl_schema *s, const char *name, const csl_field *f, size_t nf,
                               long line, const cs_load_options *opt, cs_error *err)
{
    if (opt->no_header) {
        memset(s, 0, sizeof *s);
        s->header_line = line;
        return build_headerless(s, name, nf, line, opt, err);
    }
    size_t text = 0;
    for (size_t c = 0; c < nf; c++) text += f[c].len + 1;
    csl_schema_builder b;
    cs_status st = cs_load_schema_begin(&b, s, name, nf, text, line, opt, err);
    for (size_t c = 0; c < nf && st == CS_OK; c++) st = cs_load_schema_column(&b, f[c]);
    return st == CS_OK ? cs_load_schema_end(&b) : st;
}
