/* The manifest CSV (reduce.h): `case,probs,labels`, paths relative to the manifest's folder.
 * Read whole (a manifest is a list of file names, so small; refused above MANIFEST_MAX) and
 * tokenised here with the prediction files' conventions: ',' ';' or tab (the one the header is
 * written with), a UTF-8 BOM, LF / CRLF / CR line ends, RFC 4180 quotes ("" inside), fields
 * trimmed of spaces and tabs, blank lines skipped. Messages are FILE:LINE:COL as the loader's. */
#include "engine/reduce/reduce_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#define MANIFEST_MAX ((size_t)64 << 20)
#define NF 3

static const char *const want[NF] = { "case", "probs", "labels" };

typedef struct tok {
    const char *buf;
    size_t len, pos;
    long line;                 /* physical line of pos */
    char delim;
    char *field[NF + 1];       /* the record's first NF + 1 fields (malloc'd, unquoted) */
    size_t nf;                 /* fields in the record (all counted) */
    long rec_line;
} tok;

static void tok_clear(tok *t)
{
    for (size_t i = 0; i < NF + 1; i++) {
        free(t->field[i]);
        t->field[i] = NULL;
    }
    t->nf = 0;
}

static int line_end(tok *t)
{
    if (t->pos >= t->len) return 0;
    char c = t->buf[t->pos];
    if (c == '\n') { t->pos++; t->line++; return 1; }
    if (c == '\r') {
        t->pos++;
        if (t->pos < t->len && t->buf[t->pos] == '\n') t->pos++;
        t->line++;
        return 1;
    }
    return 0;
}

/* One field starting at pos: returns 0, or -1 when out of memory, -2 for an unclosed quote. */
static int tok_field(tok *t)
{
    const char *b = t->buf;
    size_t p = t->pos, cap = 64, n = 0;
    char *out = malloc(cap);
    if (!out) return -1;
    while (p < t->len && (b[p] == ' ' || b[p] == '\t') && b[p] != t->delim) p++;
    int quoted = p < t->len && b[p] == '"';
    if (quoted) {
        p++;
        for (;;) {
            if (p >= t->len) { free(out); return -2; }
            if (b[p] == '"') {
                if (p + 1 < t->len && b[p + 1] == '"') p++;
                else { p++; break; }
            } else if (b[p] == '\n' || (b[p] == '\r' && !(p + 1 < t->len && b[p + 1] == '\n'))) {
                t->line++;
            }
            if (n + 2 > cap) {
                char *r = realloc(out, cap *= 2);
                if (!r) { free(out); return -1; }
                out = r;
            }
            out[n++] = b[p++];
        }
        while (p < t->len && b[p] != t->delim && b[p] != '\n' && b[p] != '\r') p++;   /* after the quote */
    } else {
        size_t s = p;
        while (p < t->len && b[p] != t->delim && b[p] != '\n' && b[p] != '\r') p++;
        size_t e = p;
        while (e > s && (b[e - 1] == ' ' || b[e - 1] == '\t')) e--;
        if (e - s + 1 > cap) {
            char *r = realloc(out, cap = e - s + 1);
            if (!r) { free(out); return -1; }
            out = r;
        }
        memcpy(out, b + s, e - s);
        n = e - s;
    }
    out[n] = '\0';
    t->pos = p;
    if (t->nf < NF + 1) t->field[t->nf] = out;
    else free(out);
    t->nf++;
    return 0;
}

/* The next record: 1 when one was read, 0 at the end, -1 out of memory, -2 unclosed quote. */
static int tok_record(tok *t)
{
    tok_clear(t);
    if (t->pos >= t->len) return 0;
    t->rec_line = t->line;
    for (;;) {
        int rc = tok_field(t);
        if (rc) return rc;
        if (t->pos < t->len && t->buf[t->pos] == t->delim) { t->pos++; continue; }
        line_end(t);
        return 1;
    }
}

static int header_is(tok *t)
{
    if (t->nf != NF) return 0;
    for (size_t i = 0; i < NF; i++)
        if (strcasecmp(t->field[i], want[i]) != 0) return 0;
    return 1;
}

/* Finds the delimiter the header is written with; leaves t after the header. 1 when found. */
static int header(tok *t)
{
    static const char delims[] = { ',', ';', '\t' };
    size_t start = t->len >= 3 && memcmp(t->buf, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    for (size_t d = 0; d < sizeof delims; d++) {
        t->pos = start;
        t->line = 1;
        t->delim = delims[d];
        if (tok_record(t) == 1 && header_is(t)) return 1;
    }
    return 0;
}

static char *slurp(const char *path, size_t max, size_t *len, int *errnum)
{
    FILE *f = fopen(path, "rb");
    if (!f) { *errnum = errno; return NULL; }
    size_t cap = 4096, n = 0;
    char *b = malloc(cap);
    while (b) {
        if (n == cap) {
            if (cap >= max) { *errnum = EFBIG; free(b); b = NULL; break; }
            char *r = realloc(b, cap *= 2);
            if (!r) { *errnum = ENOMEM; free(b); b = NULL; break; }
            b = r;
        }
        size_t got = fread(b + n, 1, cap - n, f);
        n += got;
        if (got == 0) {
            if (ferror(f)) { *errnum = EIO; free(b); b = NULL; }
            break;
        }
    }
    if (!b && !*errnum) *errnum = ENOMEM;
    fclose(f);
    *len = n;
    return b;
}

int cs_seg_manifest_sniff(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    tok t = { .buf = buf, .len = n };
    int ok = header(&t);
    tok_clear(&t);
    return ok;
}

/* The manifest's folder ("" for a bare name). */
static char *folder_of(const char *path)
{
    const char *s = strrchr(path, '/');
    size_t n = s ? (size_t)(s - path) + 1 : 0;
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, path, n);
        d[n] = '\0';
    }
    return d;
}

typedef struct seen { const char *name; long line; } seen;

static int seen_cmp(const void *a, const void *b)
{
    const seen *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->line > y->line) - (x->line < y->line);
}

/* One data record into the plan (or an error). */
static cs_status row(const char *path, const char *dir, tok *t, cs_seg_plan *p, size_t *cap,
                     long **lines, cs_error *err)
{
    long L = t->rec_line;
    if (t->nf < NF)
        return cs_error_set(err, CS_EINPUT, L, (long)t->nf + 1, "%s:%ld:%zu: missing field '%s' (the header is case,probs,labels)",
                            path, L, t->nf + 1, want[t->nf]);
    if (t->nf > NF)
        return cs_error_set(err, CS_EINPUT, L, NF + 1, "%s:%ld:%d: %zu fields, the header has 3 (case,probs,labels)",
                            path, L, NF + 1, t->nf);
    for (size_t i = 0; i < NF; i++)
        if (!t->field[i][0])
            return cs_error_set(err, CS_EINPUT, L, (long)i + 1, "%s:%ld:%zu: empty '%s'", path, L, i + 1, want[i]);
    /* the statistics file is line-based: said here, at the manifest's line, not when it is written */
    for (size_t i = 0; i < NF; i++)
        if (strpbrk(t->field[i], "\r\n"))
            return cs_error_set(err, CS_EINPUT, L, (long)i + 1, "%s:%ld:%zu: '%s' contains a line break, which a "
                                "statistics file cannot hold", path, L, i + 1, want[i]);
    char *pp = rd_path_join(dir, t->field[1]), *lp = rd_path_join(dir, t->field[2]);
    cs_status st = CS_OK;
    if (!pp || !lp) st = cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", path);
    for (int i = 1; i <= 2 && st == CS_OK; i++) {
        struct stat sb;
        const char *full = i == 1 ? pp : lp;
        if (stat(full, &sb) != 0)
            st = cs_error_set(err, CS_EINPUT, L, i + 1, "%s:%ld:%d: %s '%s': %s", path, L, i + 1, want[i], full, strerror(errno));
        else if (S_ISDIR(sb.st_mode))
            st = cs_error_set(err, CS_EINPUT, L, i + 1, "%s:%ld:%d: %s '%s' is a folder", path, L, i + 1, want[i], full);
    }
    if (st == CS_OK) {
        long *nl = realloc(*lines, (p->n + 1) * sizeof *nl);
        if (nl) *lines = nl;
        if (!nl || rd_plan_add(p, cap, t->field[0], pp, lp, t->field[1], t->field[2]))
            st = cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", path);
        else (*lines)[p->n - 1] = L;
    }
    free(pp);
    free(lp);
    return st;
}

/* Duplicate case names, located at the later line. */
static cs_status duplicates(const char *path, const cs_seg_plan *p, const long *lines, cs_error *err)
{
    seen *s = malloc((p->n ? p->n : 1) * sizeof *s);
    if (!s) return cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", path);
    for (size_t i = 0; i < p->n; i++) s[i] = (seen){ p->cases[i].name, lines[i] };
    qsort(s, p->n, sizeof *s, seen_cmp);
    cs_status st = CS_OK;
    for (size_t i = 1; i < p->n && st == CS_OK; i++)
        if (strcmp(s[i].name, s[i - 1].name) == 0)
            st = cs_error_set(err, CS_EINPUT, s[i].line, 1, "%s:%ld:1: case '%s' is already on line %ld",
                              path, s[i].line, s[i].name, s[i - 1].line);
    free(s);
    return st;
}

cs_status cs_seg_plan_manifest(const char *path, cs_seg_plan **out, cs_error *err)
{
    *out = NULL;
    int errnum = 0;
    size_t len = 0;
    char *buf = slurp(path, MANIFEST_MAX, &len, &errnum);
    if (!buf)
        return errnum == EFBIG ? cs_error_set(err, CS_EINPUT, 0, 0, "%s: larger than %zu MiB, too large for a manifest", path, MANIFEST_MAX >> 20)
                               : cs_error_set(err, errnum == ENOMEM ? CS_ENOMEM : CS_EINPUT, 0, 0, "%s: %s", path, strerror(errnum));
    tok t = { .buf = buf, .len = len };
    cs_seg_plan *p = calloc(1, sizeof *p);
    char *dir = folder_of(path);
    long *lines = NULL;
    size_t cap = 0;
    cs_status st = CS_OK;
    if (!p || !dir) st = cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", path);
    else if (!header(&t)) st = cs_error_set(err, CS_EINPUT, 1, 1, "%s:1:1: not a manifest: the header must be case,probs,labels", path);
    while (st == CS_OK) {
        int rc = tok_record(&t);
        if (rc == 0) break;
        if (rc == -1) { st = cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", path); break; }
        if (rc == -2) { st = cs_error_set(err, CS_EINPUT, t.rec_line, 0, "%s:%ld: a quoted field is not closed", path, t.rec_line); break; }
        if (t.nf == 1 && !t.field[0][0]) continue;   /* a blank line */
        st = row(path, dir, &t, p, &cap, &lines, err);
    }
    tok_clear(&t);
    if (st == CS_OK && p->n == 0) st = cs_error_set(err, CS_EINPUT, 2, 0, "%s:2: no case (a manifest lists case,probs,labels rows)", path);
    if (st == CS_OK) st = duplicates(path, p, lines, err);
    if (st == CS_OK) rd_plan_sort(p);
    free(lines);
    free(dir);
    free(buf);
    if (st != CS_OK) { cs_seg_plan_free(p); return st; }
    *out = p;
    return CS_OK;
}
