/* The label mapping (reduce.h): --label-values, --regions and the default. Every label value
 * the mapping names gets a code (its index among the sorted values); the reduction keeps one
 * code per voxel and reads y from class_of / member. */
#include "calscope/mapping.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cs_seg_mapping_free(cs_seg_mapping *m)
{
    if (!m) return;
    for (size_t j = 0; j < m->k && m->names; j++) free(m->names[j]);
    free(m->names);
    free(m->text);
    free(m->values);
    free(m->class_of);
    free(m->member);
    free(m);
}

static char *dup_n(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

/* An integer label value written in decimal (optional sign), int32 range. */
static int parse_value(const char *s, size_t n, int32_t *out)
{
    char buf[32];
    if (n == 0 || n >= sizeof buf) return 0;
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *end;
    errno = 0;
    long v = strtol(buf, &end, 10);
    if (end == buf || *end || errno == ERANGE || v < INT32_MIN || v > INT32_MAX) return 0;
    *out = (int32_t)v;
    return 1;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static cs_status nomem(cs_error *err)
{
    return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
}

/* A name for a class or region: non-empty, no separator or control byte. */
static int good_name(const char *s, size_t n)
{
    if (n == 0) return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || strchr(",;=", s[i])) return 0;
    return 1;
}

/* ---- "given twice" in linear time -------------------------------------------------------
 * A mapping may name 65536 classes (a statistics file's header is parsed with these functions,
 * so its size is the file's to choose): each value and name is looked up among the earlier ones
 * in a hash set of their indices, so the first repeat in the order given is still the one
 * reported, without comparing every pair. */
typedef struct seen_set {
    size_t *slot;   /* index + 1, 0 = empty; capacity a power of two, at most half full */
    size_t mask;
} seen_set;

static int seen_init(seen_set *h, size_t n)
{
    size_t cap = 16;
    while (cap < 2 * n + 2) cap *= 2;
    h->slot = calloc(cap, sizeof *h->slot);
    h->mask = cap - 1;
    return h->slot ? 0 : -1;
}

static uint64_t hash_bytes(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t x = 1469598103934665603u;   /* FNV-1a */
    for (size_t i = 0; i < n; i++) x = (x ^ b[i]) * 1099511628211u;
    return x;
}

/* 1 when values[j] equals an earlier values[i] in h; else adds j and returns 0. */
static int seen_value(seen_set *h, const int32_t *values, size_t j)
{
    size_t at = (size_t)hash_bytes(&values[j], sizeof values[j]) & h->mask;
    for (; h->slot[at]; at = (at + 1) & h->mask)
        if (values[h->slot[at] - 1] == values[j]) return 1;
    h->slot[at] = j + 1;
    return 0;
}

/* The same for names[j] among earlier names. */
static int seen_name(seen_set *h, char *const *names, size_t j)
{
    size_t at = (size_t)hash_bytes(names[j], strlen(names[j])) & h->mask;
    for (; h->slot[at]; at = (at + 1) & h->mask)
        if (strcmp(names[h->slot[at] - 1], names[j]) == 0) return 1;
    h->slot[at] = j + 1;
    return 0;
}

typedef struct value_at {
    int32_t v;
    uint32_t j;
} value_at;

static int cmp_value_at(const void *a, const void *b)
{
    return cmp_i32(&((const value_at *)a)->v, &((const value_at *)b)->v);
}

/* Softmax: channel j has label value v[j]. Builds the sorted codes and class_of. */
static cs_status finish_softmax(cs_seg_mapping *m, const int32_t *v, cs_error *err)
{
    m->n_values = m->k;
    m->values = malloc(m->k * sizeof *m->values);
    m->class_of = malloc(m->k * sizeof *m->class_of);
    if (!m->values || !m->class_of) return nomem(err);
    value_at *by = malloc((m->k ? m->k : 1) * sizeof *by);
    if (!by) return nomem(err);
    for (size_t j = 0; j < m->k; j++) by[j] = (value_at){v[j], (uint32_t)j};
    qsort(by, m->k, sizeof *by, cmp_value_at);   /* the values are distinct */
    for (size_t c = 0; c < m->k; c++) {
        m->values[c] = by[c].v;
        m->class_of[c] = by[c].j;
    }
    free(by);
    return CS_OK;
}

/* The bytes held for a text of `used` bytes (its terminator included): powers of two, so that
 * appending 60,000 pieces (a 20,000-region mapping) copies the text a few times, not once a
 * piece. */
static size_t text_cap(size_t used)
{
    size_t c = 64;
    while (c < used) c *= 2;
    return c;
}

/* Appends "NAME=V" / "V" to the canonical text (*t NULL or grown only here). */
static int text_add(char **t, size_t *len, const char *piece)
{
    size_t n = strlen(piece);
    if (!*t || text_cap(*len + n + 1) > text_cap(*len + 1)) {
        char *r = realloc(*t, text_cap(*len + n + 1));
        if (!r) return -1;
        *t = r;
    }
    memcpy(*t + *len, piece, n + 1);
    *len += n;
    return 0;
}

cs_status cs_seg_mapping_values(const char *text, cs_seg_mapping **out, cs_error *err)
{
    *out = NULL;
    cs_seg_mapping *m = calloc(1, sizeof *m);
    size_t cap = 1;
    for (const char *c = text; *c; c++) cap += *c == ',';
    int32_t *v = malloc(cap * sizeof *v);
    if (m) m->names = calloc(cap, sizeof *m->names);
    seen_set seen_v = {0}, seen_n = {0};
    if (!m || !v || !m->names || seen_init(&seen_v, cap) || seen_init(&seen_n, cap)) {
        free(v);
        free(seen_v.slot);
        free(seen_n.slot);
        cs_seg_mapping_free(m);
        return nomem(err);
    }
    m->kind = CS_SEG_SOFTMAX;
    size_t tlen = 0;
    cs_status st = CS_OK;
    const char *p = text;
    for (;;) {
        size_t n = strcspn(p, ",");
        const char *eq = memchr(p, '=', n);
        const char *num = eq ? eq + 1 : p;
        size_t nn = eq ? n - (size_t)(eq + 1 - p) : n;
        int32_t x;
        if (!parse_value(num, nn, &x)) {
            st = cs_error_set(err, CS_EUSAGE, 0, 0, "--label-values: '%.*s' is not an integer label value%s (in '%s')",
                              (int)n, p, eq ? " after NAME=" : "", text);
            break;
        }
        if (eq && !good_name(p, (size_t)(eq - p))) {
            st = cs_error_set(err, CS_EUSAGE, 0, 0, "--label-values: '%.*s' has no usable class name before '='", (int)n, p);
            break;
        }
        v[m->k] = x;
        if (seen_value(&seen_v, v, m->k)) {
            st = cs_error_set(err, CS_EUSAGE, 0, 0, "--label-values: value %ld is given twice (in '%s')", (long)x, text);
            break;
        }
        size_t j = m->k++;
        char num_text[16];
        snprintf(num_text, sizeof num_text, "%ld", (long)x);
        m->names[j] = eq ? dup_n(p, (size_t)(eq - p)) : dup_n(num_text, strlen(num_text));
        if (!m->names[j] || (j && text_add(&m->text, &tlen, ","))
            || (eq && (text_add(&m->text, &tlen, m->names[j]) || text_add(&m->text, &tlen, "=")))
            || text_add(&m->text, &tlen, num_text)) { st = nomem(err); break; }
        if (seen_name(&seen_n, m->names, j)) {
            st = cs_error_set(err, CS_EUSAGE, 0, 0, "--label-values: class name '%s' is given twice", m->names[j]);
            break;
        }
        if (p[n] == '\0') break;
        p += n + 1;
    }
    if (st == CS_OK) st = finish_softmax(m, v, err);
    free(v);
    free(seen_v.slot);
    free(seen_n.slot);
    if (st != CS_OK) { cs_seg_mapping_free(m); return st; }
    *out = m;
    return CS_OK;
}

cs_seg_mapping *cs_seg_mapping_default(size_t channels)
{
    cs_seg_mapping *m = calloc(1, sizeof *m);
    int32_t *v = malloc((channels ? channels : 1) * sizeof *v);
    if (m) m->names = calloc(channels ? channels : 1, sizeof *m->names);
    if (!m || !v || !m->names || channels > INT32_MAX) { free(v); cs_seg_mapping_free(m); return NULL; }
    m->kind = CS_SEG_SOFTMAX;
    m->defaulted = 1;
    size_t tlen = 0;
    int bad = 0;
    for (size_t j = 0; j < channels && !bad; j++) {
        char t[24];
        snprintf(t, sizeof t, "%zu", j);
        v[j] = (int32_t)j;
        m->names[j] = dup_n(t, strlen(t));
        m->k++;
        bad = !m->names[j] || (j && text_add(&m->text, &tlen, ",")) || text_add(&m->text, &tlen, t);
    }
    cs_error err;
    if (!bad && !m->text) bad = text_add(&m->text, &tlen, "");
    if (bad || finish_softmax(m, v, &err) != CS_OK) { free(v); cs_seg_mapping_free(m); return NULL; }
    free(v);
    return m;
}

/* ---- regions ----------------------------------------------------------------------------- */

typedef struct region_tmp {
    int32_t *v;
    size_t n;
} region_tmp;

/* The values of region `name` from q to end, into r, each checked against the earlier ones
 * (values), and onto the canonical text. */
static cs_status region_values(const char *q, const char *end, const char *text, const char *name,
                               region_tmp *r, char **canon, size_t *tlen, seen_set *values,
                               cs_error *err)
{
    for (;;) {
        const char *c = memchr(q, ',', (size_t)(end - q));
        size_t tn = c ? (size_t)(c - q) : (size_t)(end - q);
        int32_t x;
        if (!parse_value(q, tn, &x))
            return cs_error_set(err, CS_EUSAGE, 0, 0, "--regions: '%.*s' is not an integer label value (region '%s' in '%s')",
                                (int)tn, q, name, text);
        r->v[r->n] = x;
        if (seen_value(values, r->v, r->n))
            return cs_error_set(err, CS_EUSAGE, 0, 0, "--regions: value %ld is given twice in region '%s'", (long)x, name);
        r->n++;
        char t[16];
        snprintf(t, sizeof t, "%s%ld", r->n > 1 ? "," : "", (long)x);
        if (text_add(canon, tlen, t)) return nomem(err);
        if (!c) break;
        q = c + 1;
    }
    return CS_OK;
}

static cs_status parse_region(const char *p, size_t n, const char *text, cs_seg_mapping *m,
                              region_tmp *r, size_t *tlen, seen_set *names, cs_error *err)
{
    const char *eq = memchr(p, '=', n);
    if (!eq || !good_name(p, (size_t)(eq - p)))
        return cs_error_set(err, CS_EUSAGE, 0, 0, "--regions: '%.*s' is not NAME=VALUE,VALUE,... (in '%s')", (int)n, p, text);
    size_t j = m->k;
    m->names[j] = dup_n(p, (size_t)(eq - p));
    if (!m->names[j]) return nomem(err);
    m->k++;
    if (seen_name(names, m->names, j))
        return cs_error_set(err, CS_EUSAGE, 0, 0, "--regions: region '%s' is given twice", m->names[j]);
    const char *q = eq + 1, *end = p + n;
    size_t most = (size_t)(end - q) / 2 + 1;
    r->v = malloc(most * sizeof *r->v);
    seen_set values = {0};
    if (!r->v || seen_init(&values, most)) { free(values.slot); return nomem(err); }
    cs_status st = CS_OK;
    if ((j && text_add(&m->text, tlen, ";")) || text_add(&m->text, tlen, m->names[j]) || text_add(&m->text, tlen, "="))
        st = nomem(err);
    if (!st) st = region_values(q, end, text, m->names[j], r, &m->text, tlen, &values, err);
    free(values.slot);
    return st;
}

/* --regions TEXT; with_member 0 leaves out the codes-by-regions matrix (cs_seg_mapping_regions_names). */
static cs_status regions_parse(const char *text, int with_member, cs_seg_mapping **out, cs_error *err)
{
    *out = NULL;
    size_t cap = 1;
    for (const char *c = text; *c; c++) cap += *c == ';';
    cs_seg_mapping *m = calloc(1, sizeof *m);
    region_tmp *r = calloc(cap, sizeof *r);
    if (m) m->names = calloc(cap, sizeof *m->names);
    seen_set names = {0};
    if (!m || !r || !m->names || seen_init(&names, cap)) {
        free(r);
        free(names.slot);
        cs_seg_mapping_free(m);
        return nomem(err);
    }
    m->kind = CS_SEG_REGIONS;
    size_t tlen = 0, total = 1;
    cs_status st = CS_OK;
    const char *p = text;
    for (size_t j = 0; st == CS_OK; j++) {
        size_t n = strcspn(p, ";");
        st = parse_region(p, n, text, m, &r[j], &tlen, &names, err);
        total += r[j].n;
        if (p[n] == '\0') break;
        p += n + 1;
    }
    int32_t *all = st == CS_OK ? malloc(total * sizeof *all) : NULL;
    if (st == CS_OK && !all) st = nomem(err);
    if (st == CS_OK) {
        /* the codes: every value named, and 0 (background: in no region unless named) */
        size_t na = 0;
        all[na++] = 0;
        for (size_t j = 0; j < m->k; j++)
            for (size_t i = 0; i < r[j].n; i++) all[na++] = r[j].v[i];
        qsort(all, na, sizeof *all, cmp_i32);
        size_t u = 0;
        for (size_t i = 0; i < na; i++)
            if (u == 0 || all[i] != all[u - 1]) all[u++] = all[i];
        m->n_values = u;
        m->values = all;
        all = NULL;
        m->member = u <= CS_SEG_MAX_CODES && with_member ? calloc(u * m->k, 1) : NULL;
        if (u > CS_SEG_MAX_CODES) st = cs_error_set(err, CS_EUSAGE, 0, 0, "--regions: more than %d label values", CS_SEG_MAX_CODES);
        else if (with_member && !m->member) st = nomem(err);
        for (size_t j = 0; st == CS_OK && with_member && j < m->k; j++)
            for (size_t i = 0; i < r[j].n; i++) {
                long c = cs_seg_mapping_code(m, r[j].v[i]);
                m->member[(size_t)c * m->k + j] = 1;
            }
    }
    free(all);
    free(names.slot);
    for (size_t j = 0; j < cap; j++) free(r[j].v);
    free(r);
    if (st != CS_OK) { cs_seg_mapping_free(m); return st; }
    *out = m;
    return CS_OK;
}

cs_status cs_seg_mapping_regions(const char *text, cs_seg_mapping **out, cs_error *err)
{
    return regions_parse(text, 1, out, err);
}

cs_status cs_seg_mapping_regions_names(const char *text, cs_seg_mapping **out, cs_error *err)
{
    return regions_parse(text, 0, out, err);
}

long cs_seg_mapping_code(const cs_seg_mapping *m, double x)
{
    if (!(x >= (double)INT32_MIN && x <= (double)INT32_MAX) || x != floor(x)) return -1;
    int32_t v = (int32_t)x;
    size_t lo = 0, hi = m->n_values;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->values[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return lo < m->n_values && m->values[lo] == v ? (long)lo : -1;
}

void cs_seg_mapping_describe(const cs_seg_mapping *m, char *buf, size_t size)
{
    if (m->defaulted)
        snprintf(buf, size, "the default %s (from the first case's channel count)", m->text);
    else if (m->kind == CS_SEG_SOFTMAX)
        snprintf(buf, size, "--label-values %s", m->text);
    else
        snprintf(buf, size, "--regions '%s'", m->text);
}
