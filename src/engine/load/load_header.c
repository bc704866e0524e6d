/* Header handling: delimiter sniffing and the mapping of column names to roles. */
#include "engine/load/load_internal.h"

#include "calscope/classes.h"

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
    size_t comma = 0, semi = 0, tab = 0;
    int quoted = 0;
    for (size_t i = start; i < end; i++) {
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

void cs_load_schema_free(csl_schema *s)
{
    if (!s) return;
    free(s->col_text);
    free(s->col);
    if (s->class_names)
        for (size_t j = 0; j < s->k; j++) free(s->class_names[j]);
    free(s->class_names);
    for (size_t i = 0; i < s->n_ignored; i++) free(s->ignored[i]);
    free(s->ignored);
    cs_classmap_free(s->classes);
    memset(s, 0, sizeof *s);
}

static char *dup_n(const char *p, size_t n)
{
    char *s = malloc(n + 1);
    if (!s) return NULL;
    memcpy(s, p, n);
    s[n] = '\0';
    return s;
}

static int name_is(const csl_field *f, const char *w)
{
    return f->len == strlen(w) && strncasecmp(f->p, w, f->len) == 0;
}

/* "p_", "prob_", "logit_" prefixes; returns the prefix length or 0. */
static size_t prefix_len(const csl_field *f, const char *pre)
{
    size_t n = strlen(pre);
    return f->len > n && strncasecmp(f->p, pre, n) == 0 ? n : 0;
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
    s->col = calloc(nf, sizeof *s->col);
    s->col_text = malloc(nf * 24);            /* "label" or "p_<index>": under 24 bytes each */
    if (!s->col || !s->col_text) return nomem(name, err);
    char *text = s->col_text;
    size_t nprob = nf - 1;
    s->binary = nprob == 1;
    s->k = s->binary ? 2 : nprob;
    s->class_names = calloc(s->k, sizeof *s->class_names);
    if (!s->class_names) return nomem(name, err);
    for (size_t j = 0; j < s->k; j++) {
        snprintf(a, sizeof a, "%zu", j);
        if (!(s->class_names[j] = dup_n(a, strlen(a)))) return nomem(name, err);
    }
    if (!(s->classes = cs_classmap_of(s->class_names, s->k))) return nomem(name, err);
    size_t cls = 0;
    for (size_t c = 0; c < nf; c++) {
        s->col[c].name = text;
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
    return CS_OK;
}

cs_status cs_load_schema_build(csl_schema *s, const char *name, const csl_field *f, size_t nf,
                               long line, const cs_load_options *opt, cs_error *err)
{
    memset(s, 0, sizeof *s);
    s->header_line = line;
    if (opt->no_header) return build_headerless(s, name, nf, line, opt, err);

    s->ncols = nf;
    s->col = calloc(nf ? nf : 1, sizeof *s->col);
    s->class_names = calloc(nf ? nf : 1, sizeof *s->class_names);
    s->ignored = calloc(nf ? nf : 1, sizeof *s->ignored);
    s->classes = cs_classmap_new(nf);
    /* every header name in one block: one allocation, not one per column (issue 15.6) */
    size_t text_len = 1;
    for (size_t c = 0; c < nf; c++) text_len += f[c].len + 1;
    s->col_text = malloc(text_len);
    if (!s->col || !s->class_names || !s->ignored || !s->classes || !s->col_text)
        return nomem(name, err);
    char *text = s->col_text;

    long seen[CSL_SPLIT + 1] = {0}; /* column (1-based) that took each singleton role */
    long prob_col = 0, logit_col = 0, binary_col = 0, label_col = 0;
    for (size_t c = 0; c < nf; c++) {
        csl_col *col = &s->col[c];
        const csl_field fc = cs_load_trim(f[c]);   /* quoted or not, spaces around a name do not count */
        col->name = text;
        memcpy(text, fc.p, fc.len);
        text[fc.len] = '\0';
        text += fc.len + 1;
        size_t pl;
        int role = CSL_IGNORE;
        const char *suffix = NULL;
        if (name_is(&fc, "label") || name_is(&fc, "y") || name_is(&fc, "target") ||
            name_is(&fc, "true"))
            role = CSL_LABEL;
        else if (name_is(&fc, "p") || name_is(&fc, "prob") || name_is(&fc, "score"))
            role = CSL_BINARY;
        else if (name_is(&fc, "id"))
            role = CSL_ID;
        else if (name_is(&fc, "tta"))
            role = CSL_TTA;
        else if (name_is(&fc, "case"))
            role = CSL_CASE;
        else if ((pl = prefix_len(&fc, "p_")) || (pl = prefix_len(&fc, "prob_"))) {
            role = CSL_PROB;
            suffix = col->name + pl;
        } else if ((pl = prefix_len(&fc, "logit_"))) {
            role = CSL_LOGIT;
            suffix = col->name + pl;
        }
        if (opt->split_column && fc.len == strlen(opt->split_column) &&
            strncasecmp(fc.p, opt->split_column, fc.len) == 0) {
            if (role != CSL_IGNORE)
                return header_error(err, name, line, (long)c + 1,
                                    "column '%s' cannot be the split column: it already has a"
                                    " meaning (label, probability, id, tta or case)", col->name);
            role = CSL_SPLIT;
        }
        col->role = role;
        if (role == CSL_IGNORE) {
            if (!(s->ignored[s->n_ignored++] = dup_n(fc.p, fc.len))) return nomem(name, err);
            continue;
        }
        if (role == CSL_PROB || role == CSL_LOGIT) {
            long dup = cs_classmap_add(s->classes, suffix);
            if (dup == CS_CLASSMAP_NOMEM) return nomem(name, err);
            if (dup == CS_CLASSMAP_HASH_NAME)
                return header_error(err, name, line, (long)c + 1,
                                    "column '%s': a class name cannot be '#' and digits (that"
                                    " spells a class position)", col->name);
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
                                    col->name, other);
            }
            if (role == CSL_PROB && !prob_col) prob_col = (long)c + 1;
            if (role == CSL_LOGIT && !logit_col) logit_col = (long)c + 1;
            if (prob_col && logit_col)
                return header_error(err, name, line, (long)c + 1,
                                    "column '%s' mixes logit and probability columns"
                                    " (give one kind)", col->name);
            if (binary_col)
                return header_error(err, name, line, (long)c + 1,
                                    "column '%s' mixes per-class columns with the binary column"
                                    " '%s'", col->name, s->col[binary_col - 1].name);
            col->cls = (int)s->k;
            if (!(s->class_names[s->k++] = dup_n(suffix, strlen(suffix)))) return nomem(name, err);
            if (!s->first_prob_col) s->first_prob_col = (long)c + 1;
            continue;
        }
        int slot = role == CSL_BINARY ? 0 : role;
        if (seen[slot]) {
            char other[32];
            snprintf(other, sizeof other, "%ld", seen[slot]);
            return header_error(err, name, line, (long)c + 1,
                                "duplicate column '%s' (same meaning as column %s)",
                                col->name, other);
        }
        seen[slot] = (long)c + 1;
        if (role == CSL_LABEL) label_col = (long)c + 1;
        if (role == CSL_BINARY) {
            if (s->k)
                return header_error(err, name, line, (long)c + 1,
                                    "column '%s' mixes the binary column with per-class columns"
                                    " like '%s'", col->name, s->col[s->first_prob_col - 1].name);
            binary_col = (long)c + 1;
            s->first_prob_col = (long)c + 1;
        }
        if (role == CSL_ID) s->has_id = 1;
        if (role == CSL_TTA) s->has_tta = 1;
        if (role == CSL_CASE) s->has_case = 1;
        if (role == CSL_SPLIT) s->has_split = 1;
    }
    if (!label_col)
        return header_error(err, name, line, 1,
                            "no label column (name one label, y, target or true)");
    if (!s->k && !binary_col)
        return header_error(err, name, line, 1,
                            "no probability columns (want p_<class>, prob_<class> or logit_<class>"
                            " columns, or one p, prob or score column)");
    if (binary_col) {
        s->binary = 1;
        s->k = 2;
        if (!(s->class_names[0] = dup_n("0", 1)) || !(s->class_names[1] = dup_n("1", 1)) ||
            cs_classmap_add(s->classes, "0") != -1 || cs_classmap_add(s->classes, "1") != -1)
            return nomem(name, err);
    } else if (s->k < 2) {
        return header_error(err, name, line, s->first_prob_col,
                            "only one class column '%s' (need two or more, or name it p, prob or"
                            " score for a binary file)", s->col[s->first_prob_col - 1].name);
    }
    if (opt->split_column && !s->has_split)
        return header_error(err, name, line, 1, "no split column '%s' in the header",
                            opt->split_column);
    s->from_logits = logit_col != 0;
    return CS_OK;
}
