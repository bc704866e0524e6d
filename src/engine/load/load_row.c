/* The row checker both tokenisers share: validation, messages, storage, interning.
 * Every rule about what a good row is lives here and nowhere else, so the two paths cannot
 * disagree about it. */
#include "engine/load/load_internal.h"
#include "calscope/metrics.h"

#include "engine/classes.h"
#include "engine/num/rowsum.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum reason {
    R_RAGGED, R_EMPTY, R_NONNUM, R_NONFINITE, R_RANGE, R_SUM, R_SUM_ZERO,
    R_LABEL_RANGE, R_LABEL_INT, R_CLASS, R_TTA,
    R_CLASS_NUMBER, R_CLASS_AMBIGUOUS, R_CLASS_POSITION   /* worded by cs_classmap_explain */
};

/* ---- messages ------------------------------------------------------------------------------ */

size_t cs_load_format_pos(char *buf, size_t cap, const char *name, long line, long col)
{
    int n;
    if (line > 0 && col > 0) n = snprintf(buf, cap, "%s:%ld:%ld: ", name, line, col);
    else if (line > 0) n = snprintf(buf, cap, "%s:%ld: ", name, line);
    else n = snprintf(buf, cap, "%s: ", name);
    if (n < 0) n = 0;
    return (size_t)n < cap ? (size_t)n : cap - 1;
}

/* Appends one line to w's skipped lines; -1 when out of memory (w->nomem set). */
int cs_load_bad_line(csl_worker *w, uint32_t line)
{
    if (w->n_bad_lines == w->cap_bad_lines) {
        size_t cap = w->cap_bad_lines ? 2 * w->cap_bad_lines : 64;
        uint32_t *q = realloc(w->bad_lines, cap * sizeof *q);
        if (!q) { w->nomem = 1; return -1; }
        w->bad_lines = q;
        w->cap_bad_lines = cap;
    }
    w->bad_lines[w->n_bad_lines++] = line;
    return 0;
}

/* Counts a bad row; nonzero when its message is still to be kept. */
static int count_bad(csl_worker *w, long line, long col)
{
    w->bad++;
    if (w->bad == 1) { w->first_line = line; w->first_col = col; }
    if (w->opt->skip_bad_rows)
        cs_load_bad_line(w, line > 0 && (unsigned long)line <= UINT32_MAX ? (uint32_t)line : 0);
    return w->n_msgs < CS_LOAD_MAX_SKIP_MESSAGES;
}

static void keep_msg(csl_worker *w, const char *msg)
{
    char *copy = strdup(msg);
    if (!copy) { w->nomem = 1; return; }
    w->msgs[w->n_msgs++] = copy;
}

static void bad_row(csl_worker *w, int reason, long line, long col, const csl_field *f,
                    double x, size_t nf)
{
    w->bad_scale += reason == R_RANGE || reason == R_SUM || reason == R_SUM_ZERO;
    if (!count_bad(w, line, col)) return;

    char msg[768], txt[200];
    size_t o = cs_load_format_pos(msg, sizeof msg, w->name, line, col);
    const csl_schema *s = w->s;
    /* the column's name, for the reasons that print it (a walk of the header: messages only) */
    const char *cname = (reason == R_EMPTY || reason == R_NONNUM || reason == R_NONFINITE ||
                         reason == R_RANGE) && col > 0 && (size_t)col <= s->ncols
                            ? cs_load_col_name(s, (size_t)col - 1) : "";
    if (f) cs_load_excerpt(txt, sizeof txt, f->p, f->len);
    else txt[0] = '\0';
    char *m = msg + o;
    size_t cap = sizeof msg - o;
    switch (reason) {
    case R_RAGGED:
        snprintf(m, cap, "ragged row: %zu fields, expected %zu", nf, s->ncols);
        break;
    case R_EMPTY:
        snprintf(m, cap, "empty field in column '%s'", cname);
        break;
    case R_NONNUM:
        snprintf(m, cap, "non-numeric value '%s' in column '%s'", txt, cname);
        break;
    case R_NONFINITE:
        snprintf(m, cap, "NaN or infinite value '%s' in column '%s'", txt, cname);
        break;
    case R_RANGE:
        snprintf(m, cap, "probability outside [0,1] '%s' in column '%s'", txt, cname);
        break;
    case R_SUM:
    {
        /* 10 digits read well, but a sum that misses 1 only in its last digits (--sum-tol 0)
         * must not print as 1: then every digit it takes; the tolerance exactly as given */
        char sum[40], tol[40];
        snprintf(sum, sizeof sum, "%.10g", x);
        if (strtod(sum, NULL) == 1.0 && x != 1.0) cs_format_number(sum, sizeof sum, x);
        cs_format_number(tol, sizeof tol, w->opt->sum_tol);
        snprintf(m, cap, "probabilities sum to %s, not 1 within %s", sum, tol);
    }
        break;
    case R_SUM_ZERO:
        snprintf(m, cap, "probabilities sum to %.10g, cannot renormalize", x);
        break;
    case R_LABEL_RANGE:
        snprintf(m, cap, "label '%s' out of range 0..%zu", txt, s->k - 1);
        break;
    case R_LABEL_INT:
        snprintf(m, cap, "label '%s' is not an integer", txt);
        break;
    case R_CLASS: {
        char names[160];
        snprintf(m, cap, "unknown class name '%s' (classes: %s)", txt,
                 cs_classmap_list(s->classes, names, sizeof names));
        break;
    }
    case R_CLASS_NUMBER:
    case R_CLASS_AMBIGUOUS:
    case R_CLASS_POSITION: {
        static const int why[] = {CS_CLASS_NO_NUMBER, CS_CLASS_AMBIGUOUS, CS_CLASS_POSITION};
        char e[400];
        snprintf(m, cap, "label %s", cs_classmap_explain(s->classes, why[reason - R_CLASS_NUMBER],
                                                         f->p, f->len, e, sizeof e));
        break;
    }
    case R_TTA:
        snprintf(m, cap, "tta '%s' is not an integer >= 0", txt);
        break;
    default:
        snprintf(m, cap, "bad row");
    }
    keep_msg(w, msg);
}

/* ---- storage ------------------------------------------------------------------------------- */

void cs_load_rows_free(csl_rows *r)
{
    free(r->prob); free(r->logit); free(r->label);
    free(r->id); free(r->tta); free(r->case_id); free(r->split); free(r->line);
    free(r->conf); free(r->pred); free(r->correct);
    memset(r, 0, sizeof *r);
}

static int grow(void **p, size_t cap, size_t elem)
{
    if (cap && elem > SIZE_MAX / cap) return -1;
    size_t bytes = cap * elem;
    void *q = realloc(*p, bytes ? bytes : 1);
    if (!q) return -1;
    *p = q;
    return 0;
}

static int rows_resize(csl_rows *r, const csl_schema *s, size_t cap)
{
    size_t k = s->k;
    if (cap > SIZE_MAX / k) return -1;
    if (grow((void **)&r->prob, cap * k, sizeof(double))) return -1;
    if (s->from_logits && grow((void **)&r->logit, cap * k, sizeof(double))) return -1;
    if (grow((void **)&r->label, cap, sizeof(int32_t))) return -1;
    if (grow((void **)&r->line, cap, sizeof(uint32_t))) return -1;
    if (s->has_id && grow((void **)&r->id, cap, sizeof(int32_t))) return -1;
    if (s->has_tta && grow((void **)&r->tta, cap, sizeof(int32_t))) return -1;
    if (s->has_case && grow((void **)&r->case_id, cap, sizeof(int32_t))) return -1;
    if (s->has_split && grow((void **)&r->split, cap, sizeof(int32_t))) return -1;
    r->cap = cap;
    return 0;
}

void cs_load_rows_move(csl_rows *r, const csl_schema *s, size_t dst, size_t src, size_t n)
{
    size_t k = s->k;
    memmove(r->prob + dst * k, r->prob + src * k, n * k * sizeof *r->prob);
    if (r->logit) memmove(r->logit + dst * k, r->logit + src * k, n * k * sizeof *r->logit);
    memmove(r->label + dst, r->label + src, n * sizeof *r->label);
    if (r->id) memmove(r->id + dst, r->id + src, n * sizeof *r->id);
    if (r->tta) memmove(r->tta + dst, r->tta + src, n * sizeof *r->tta);
    if (r->case_id) memmove(r->case_id + dst, r->case_id + src, n * sizeof *r->case_id);
    if (r->split) memmove(r->split + dst, r->split + src, n * sizeof *r->split);
    if (r->line) memmove(r->line + dst, r->line + src, n * sizeof *r->line);
    if (r->conf) {
        memmove(r->conf + dst, r->conf + src, n * sizeof *r->conf);
        memmove(r->pred + dst, r->pred + src, n * sizeof *r->pred);
        memmove(r->correct + dst, r->correct + src, n * sizeof *r->correct);
    }
}

int cs_load_rows_alloc(csl_rows *r, const csl_schema *s, size_t cap)
{
    memset(r, 0, sizeof *r);
    if (rows_resize(r, s, cap)) { cs_load_rows_free(r); return -1; }
    return 0;
}

int cs_load_rows_alloc_caches(csl_rows *r, size_t cap)
{
    size_t n = cap ? cap : 1;
    if (n > (size_t)PTRDIFF_MAX / sizeof *r->conf) return -1;
    r->conf = malloc(n * sizeof *r->conf);
    r->pred = malloc(n * sizeof *r->pred);
    r->correct = malloc(n);
    if (r->conf && r->pred && r->correct) return 0;
    free(r->conf); free(r->pred); free(r->correct);
    r->conf = NULL;
    r->pred = NULL;
    r->correct = NULL;
    return -1;
}

/* ---- interning ----------------------------------------------------------------------------- */

static uint64_t hash_bytes(const char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;     /* FNV-1a */
    for (size_t i = 0; i < n; i++) { h ^= (unsigned char)p[i]; h *= 1099511628211ull; }
    return h;
}

void cs_load_intern_free(csl_intern *t)
{
    if (!t) return;
    for (size_t i = 0; i < t->n; i++) free(t->names[i]);
    free(t->names);
    free(t->slots);
    memset(t, 0, sizeof *t);
}

static int intern(csl_intern *t, const char *p, size_t len, int32_t *out)
{
    if (t->n >= INT32_MAX) return -1;
    if ((t->n + 1) * 2 > t->nslots) {
        size_t ns = t->nslots ? t->nslots * 2 : 64;
        uint32_t *slots = calloc(ns, sizeof *slots);
        if (!slots) return -1;
        for (size_t i = 0; i < t->n; i++) {
            size_t h = (size_t)hash_bytes(t->names[i], strlen(t->names[i])) & (ns - 1);
            while (slots[h]) h = (h + 1) & (ns - 1);
            slots[h] = (uint32_t)i + 1;
        }
        free(t->slots);
        t->slots = slots;
        t->nslots = ns;
    }
    /* names are C strings; a NUL byte inside a field ends the name (memchr keeps it consistent) */
    const char *z = memchr(p, '\0', len);
    if (z) len = (size_t)(z - p);
    size_t h = (size_t)hash_bytes(p, len) & (t->nslots - 1);
    while (t->slots[h]) {
        const char *nm = t->names[t->slots[h] - 1];
        if (strlen(nm) == len && memcmp(nm, p, len) == 0) {
            *out = (int32_t)(t->slots[h] - 1);
            return 0;
        }
        h = (h + 1) & (t->nslots - 1);
    }
    if (t->n == t->cap) {
        size_t nc = t->cap ? t->cap * 2 : 64;
        char **names = realloc(t->names, nc * sizeof *names);
        if (!names) return -1;
        t->names = names;
        t->cap = nc;
    }
    char *s = malloc(len + 1);
    if (!s) return -1;
    memcpy(s, p, len);
    s[len] = '\0';
    t->names[t->n] = s;
    t->slots[h] = (uint32_t)t->n + 1;
    *out = (int32_t)t->n++;
    return 0;
}

/* ---- the row checker ----------------------------------------------------------------------- */

void cs_load_worker_init(csl_worker *w, const csl_schema *s, const cs_load_options *opt,
                         const char *name)
{
    memset(w, 0, sizeof *w);
    w->s = s;
    w->opt = opt;
    w->name = name;
}

void cs_load_worker_free(csl_worker *w)
{
    for (size_t i = 0; i < w->n_msgs; i++) free(w->msgs[i]);
    free(w->bad_lines);
    if (w->rows.growable) cs_load_rows_free(&w->rows);
    memset(w, 0, sizeof *w);
}

/* Rows the growable arrays start with: 1024, but no more than 4 MiB of probabilities, so a
 * file of a few very wide rows does not reserve 1024 of them. */
static size_t first_cap(size_t k)
{
    size_t c = ((size_t)4 << 20) / (k * sizeof(double));
    return c < 1 ? 1 : c > 1024 ? 1024 : c;
}

double *cs_load_row_slot(csl_worker *w)
{
    csl_rows *rows = &w->rows;
    const csl_schema *s = w->s;
    if (rows->n == rows->cap) {
        if (!rows->growable) {          /* the fast path sized it from line counts */
            w->nomem = 1;
            return NULL;
        }
        size_t nc = rows->cap ? rows->cap + rows->cap / 2 + 1 : first_cap(s->k);
        if (rows_resize(rows, s, nc)) { w->nomem = 1; return NULL; }
    }
    size_t off = (rows->n - rows->pw) * s->k;
    return s->from_logits ? rows->logit + off : rows->prob + off;
}

static int num_reason(int r)
{
    return r == CSL_NUM_EMPTY ? R_EMPTY : r == CSL_NUM_NONFINITE ? R_NONFINITE : R_NONNUM;
}

/* Integral value in [lo, hi]: 0 ok, else the reason. "1.0" and "1e0" are integers. */
static int parse_index(const csl_field *f, long hi, int32_t *out, int *num_status)
{
    double v;
    int r = cs_load_parse_double(f->p, f->len, &v);
    *num_status = r;
    if (r != CSL_NUM_OK) return -1;
    if (v != floor(v)) return 1;
    if (v < 0 || v > (double)hi) return 2;
    *out = (int32_t)v;
    return 0;
}

static int label_reason(int why)
{
    switch (why) {
    case CS_CLASS_RANGE: return R_LABEL_RANGE;
    case CS_CLASS_NOT_INT: return R_LABEL_INT;
    case CS_CLASS_NO_NUMBER: return R_CLASS_NUMBER;
    case CS_CLASS_AMBIGUOUS: return R_CLASS_AMBIGUOUS;
    case CS_CLASS_POSITION: return R_CLASS_POSITION;
    default: return R_CLASS;
    }
}

static int row_tail(csl_worker *w, int32_t label, int32_t tta, const csl_field *idf,
                    const csl_field *casef, const csl_field *splitf, long line, size_t nf,
                    const double *given_sum)
{
    const csl_schema *s = w->s;
    const cs_load_options *opt = w->opt;
    size_t k = s->k;
    csl_rows *rows = &w->rows;
    size_t i = rows->n;
    double *pr = rows->prob + (i - rows->pw) * k;           /* the probabilities kept */
    double *v = s->from_logits ? rows->logit + (i - rows->pw) * k : pr;   /* as written (slot) */
    int renormalized = 0;
    if (s->from_logits) {
        /* softmax with the maximum subtracted, so large logits cannot overflow exp */
        double mx = v[0];
        for (size_t j = 1; j < k; j++) if (v[j] > mx) mx = v[j];
        double sum = 0.0;
        for (size_t j = 0; j < k; j++) { pr[j] = exp(v[j] - mx); sum += pr[j]; }
        for (size_t j = 0; j < k; j++) pr[j] /= sum;
    } else {
        double sum = 0.0;
        if (given_sum) sum = *given_sum;
        else for (size_t j = 0; j < k; j++) sum += v[j];
        if (opt->renormalize && !s->binary) {
            if (!(sum > 0.0)) { bad_row(w, R_SUM_ZERO, line, s->first_prob_col, NULL, sum, nf); return w->nomem ? -1 : 0; }
            if (sum != 1.0) {
                for (size_t j = 0; j < k; j++) v[j] /= sum;     /* in place: v is pr */
                renormalized = 1;
            }
        } else if (!s->binary && !cs_row_sum_ok(sum, k, opt->sum_tol)) {
            bad_row(w, R_SUM, line, s->first_prob_col, NULL, sum, nf);
            return w->nomem ? -1 : 0;
        }
    }

    if (w->bad && !opt->skip_bad_rows) return 0;   /* refused anyway: keep counting, store nothing */

    rows->label[i] = label;
    rows->line[i] = line > 0 && (unsigned long)line <= UINT32_MAX ? (uint32_t)line : 0;
    if (s->has_tta) rows->tta[i] = tta;
    if (idf && intern(w->ids, idf->p, idf->len, &rows->id[i])) { w->nomem = 1; return -1; }
    if (casef && intern(w->cases, casef->p, casef->len, &rows->case_id[i])) { w->nomem = 1; return -1; }
    if (splitf && intern(w->splits, splitf->p, splitf->len, &rows->split[i])) { w->nomem = 1; return -1; }
    rows->n++;
    w->renorm += (size_t)renormalized;
    return 0;
}

int cs_load_row_values(csl_worker *w, int32_t label, int32_t tta, const csl_field *idf,
                       const csl_field *casef, const csl_field *splitf, long line,
                       const double *sum)
{
    w->rows_read++;
    return row_tail(w, label, tta, idf, casef, splitf, line, w->s->ncols, sum);
}

/* A number's text for the messages that quote a field: the shortest that reads back. */
static csl_field number_field(double x, char *buf, size_t cap)
{
    cs_format_number(buf, cap, x);
    csl_field f = {buf, strlen(buf)};
    return f;
}

int cs_load_row_numbers(csl_worker *w, double label, const char *label_file, long line)
{
    const csl_schema *s = w->s;
    w->rows_read++;
    const double *v = (s->from_logits ? w->rows.logit : w->rows.prob) +
                      (w->rows.n - w->rows.pw) * s->k;
    char txt[64];
    csl_field fx;
    /* the field rules of cs_load_row, in column order */
    for (size_t c = 0; c < s->ncols; c++) {
        int role = s->col[c].role;
        if (role != CSL_PROB && role != CSL_LOGIT) continue;
        double x = v[s->col[c].cls];
        if (!isfinite(x)) {
            fx = number_field(x, txt, sizeof txt);
            bad_row(w, R_NONFINITE, line, (long)c + 1, &fx, 0, s->ncols);
            return w->nomem ? -1 : 0;
        }
        if (role != CSL_LOGIT && !(x >= 0.0 && x <= 1.0)) {
            fx = number_field(x, txt, sizeof txt);
            bad_row(w, R_RANGE, line, (long)c + 1, &fx, 0, s->ncols);
            return w->nomem ? -1 : 0;
        }
    }
    /* the label rule of parse_index, worded against the labels' own file (column 1) */
    int why = !(label == floor(label)) ? R_LABEL_INT : label < 0 || label > (double)(s->k - 1) ? R_LABEL_RANGE : -1;
    if (why >= 0) {
        const char *name = w->name;
        w->name = label_file;
        fx = number_field(label, txt, sizeof txt);
        bad_row(w, why, line, 1, &fx, 0, s->ncols);
        w->name = name;
        return w->nomem ? -1 : 0;
    }
    return row_tail(w, (int32_t)label, 0, NULL, NULL, NULL, line, s->ncols, NULL);
}

int cs_load_row(csl_worker *w, const csl_field *f, size_t nf, long line)
{
    const csl_schema *s = w->s;
    w->rows_read++;
    if (nf != s->ncols) {
        bad_row(w, R_RAGGED, line, (long)(nf < s->ncols ? nf + 1 : s->ncols + 1), NULL, 0, nf);
        return w->nomem ? -1 : 0;
    }
    double *v = cs_load_row_slot(w);   /* values as written, straight into the next row */
    if (!v) return -1;
    int32_t label = 0, tta = 0;
    const csl_field *idf = NULL, *casef = NULL, *splitf = NULL;
    csl_field idv, casev, splitv;

    for (size_t c = 0; c < nf; c++) {
        const csl_col *col = &s->col[c];
        const csl_field fc = cs_load_trim(f[c]);
        long cn = (long)c + 1;
        int r, st;
        double x;
        switch (col->role) {
        case CSL_IGNORE:
            break;
        case CSL_PROB:
        case CSL_BINARY:
        case CSL_LOGIT:
            r = cs_load_parse_double(fc.p, fc.len, &x);
            if (r != CSL_NUM_OK) { bad_row(w, num_reason(r), line, cn, &fc, 0, nf); goto out; }
            if (col->role != CSL_LOGIT && !(x >= 0.0 && x <= 1.0)) {
                bad_row(w, R_RANGE, line, cn, &fc, 0, nf);
                goto out;
            }
            if (col->role == CSL_BINARY) { v[0] = 1.0 - x; v[1] = x; }
            else v[col->cls] = x;
            break;
        case CSL_LABEL: {
            /* empty and NaN/Inf are worded as for any number; the rest is the class rule */
            r = cs_load_parse_double(fc.p, fc.len, &x);
            if (r == CSL_NUM_EMPTY || r == CSL_NUM_NONFINITE) {
                bad_row(w, num_reason(r), line, cn, &fc, 0, nf);
                goto out;
            }
            int why = 0;
            int j = r == CSL_NUM_OK ? cs_classmap_find_number(s->classes, x, &why)
                                    : cs_classmap_find(s->classes, fc.p, fc.len, &why);
            if (j < 0) { bad_row(w, label_reason(why), line, cn, &fc, 0, nf); goto out; }
            label = (int32_t)j;
            break;
        }
        case CSL_TTA:
            r = parse_index(&fc, INT32_MAX, &tta, &st);
            if (r < 0 && st == CSL_NUM_EMPTY) { bad_row(w, R_EMPTY, line, cn, &fc, 0, nf); goto out; }
            if (r != 0) { bad_row(w, R_TTA, line, cn, &fc, 0, nf); goto out; }
            break;
        case CSL_ID:
        case CSL_CASE:
        case CSL_SPLIT:
            if (fc.len == 0) { bad_row(w, R_EMPTY, line, cn, &fc, 0, nf); goto out; }
            if (col->role == CSL_ID) { idv = fc; idf = &idv; }
            else if (col->role == CSL_CASE) { casev = fc; casef = &casev; }
            else { splitv = fc; splitf = &splitv; }
            break;
        }
    }

    return row_tail(w, label, tta, idf, casef, splitf, line, nf, NULL);
out:
    return w->nomem ? -1 : 0;
}

/* ---- checks across the rows of an id ------------------------------------------------------- */

static long column_of(const csl_schema *s, int role)
{
    for (size_t c = 0; c < s->ncols; c++)
        if (s->col[c].role == role) return (long)c + 1;
    return 0;
}

int cs_load_check_tta(csl_worker *w)
{
    const csl_schema *s = w->s;
    csl_rows *r = &w->rows;
    if (!s->has_id || !s->has_tta || !r->line || !r->n || !w->ids) return 0;
    if (w->bad && !w->opt->skip_bad_rows) return 0;
    size_t nid = w->ids->n;
    size_t *clean = malloc((nid ? nid : 1) * sizeof *clean);    /* row + 1 of the tta 0 row */
    if (!clean) { w->nomem = 1; return -1; }
    memset(clean, 0, (nid ? nid : 1) * sizeof *clean);
    for (size_t i = 0; i < r->n; i++)
        if (r->tta[i] == 0 && !clean[r->id[i]]) clean[r->id[i]] = i + 1;
    long id_col = column_of(s, CSL_ID), tta_col = column_of(s, CSL_TTA);
    long label_col = column_of(s, CSL_LABEL);
    size_t out = 0;
    for (size_t i = 0; i < r->n; i++) {
        size_t c = clean[r->id[i]];
        long line = r->line[i], col = 0;
        enum { GOOD, NO_CLEAN, TWO_CLEAN, LABEL } why = GOOD;
        if (!c) { why = NO_CLEAN; col = id_col; }
        else if (r->tta[i] == 0 && c != i + 1) { why = TWO_CLEAN; col = tta_col; }
        else if (r->label[i] != r->label[c - 1]) { why = LABEL; col = label_col; }
        if (why == GOOD) {
            if (out != i) cs_load_rows_move(r, s, out, i, 1);
            out++;
            continue;
        }
        if (!count_bad(w, line, col)) continue;
        char msg[768], id[200], a[200], b[200];
        size_t o = cs_load_format_pos(msg, sizeof msg, w->name, line, col);
        const char *idn = w->ids->names[r->id[i]];
        cs_load_excerpt(id, sizeof id, idn, strlen(idn));
        if (why == NO_CLEAN) {
            snprintf(msg + o, sizeof msg - o, "id '%s' has no tta 0 row (the clean prediction)", id);
        } else if (why == TWO_CLEAN) {
            snprintf(msg + o, sizeof msg - o, "id '%s' has more than one tta 0 row (the first is"
                     " on line %ld)", id, (long)r->line[c - 1]);
        } else {
            const char *la = s->class_names[r->label[i]], *lb = s->class_names[r->label[c - 1]];
            cs_load_excerpt(a, sizeof a, la, strlen(la));
            cs_load_excerpt(b, sizeof b, lb, strlen(lb));
            snprintf(msg + o, sizeof msg - o, "label '%s' differs from the label '%s' of id '%s'"
                     " at tta 0 (line %ld)", a, b, id, (long)r->line[c - 1]);
        }
        keep_msg(w, msg);
    }
    free(clean);
    r->n = out;
    return w->nomem ? -1 : 0;
}
