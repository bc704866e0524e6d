/* The class-naming rule (engine/classes.h): one hash table keyed by a name's lowercase text,
 * or by its value when the name is a number, so that the loader's per-row lookups and the
 * header's duplicate check cost O(1) whatever K. A name that is the number of its own position
 * (p_0, p_1, ... the common case) is not hashed at all: it is found at position v, which keeps
 * a 100,000-column header free of random memory accesses; while every name is such a number
 * the map holds no table and no array of values at all, and over the loader's names
 * (cs_classmap_over) no array of its own either: a wide header costs nothing per class. */
#include "engine/classes.h"
#include "calscope/dataset.h"

#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calscope/text.h"
#include "engine/num/num.h"

struct cs_classmap {
    const char **name;     /* k borrowed names: the map's own array of pointers, or the
                              caller's (cs_classmap_over) */
    int own_names;
    double *value;         /* k values; NaN when the name is not a number. NULL while every
                              class is named by the number of its position (value j is j):
                              p_0..p_{K-1} cost no per-class memory in the map at all */
    size_t k, cap;
    size_t numbered;       /* names that are numbers */
    size_t misplaced;      /* of those, the ones whose value is not their index (hashed) */
    uint32_t *slot;        /* open addressing: class index + 1, 0 = empty; NULL until a name
                              needs hashing (p_0..p_{K-1} never do: no table at all) */
    size_t nslots;         /* a power of two, at least twice k (0 while slot is NULL) */
};

static unsigned char lower(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c - 'A' + 'a') : c;
}

static uint64_t hash_text(const char *p, size_t len)
{
    uint64_t h = 1469598103934665603ull;     /* FNV-1a over the lowercase bytes */
    for (size_t i = 0; i < len; i++) { h ^= lower((unsigned char)p[i]); h *= 1099511628211ull; }
    return h;
}

static uint64_t hash_value(double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    u ^= u >> 33;                            /* murmur3 finaliser */
    u *= 0xff51afd7ed558ccdull;
    u ^= u >> 33;
    u *= 0xc4ceb9fe1a85ec53ull;
    return u ^ (u >> 33);
}

static int same_text(const char *name, const char *p, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (name[i] == '\0' || lower((unsigned char)name[i]) != lower((unsigned char)p[i])) return 0;
    return name[len] == '\0';
}

/* A name or token that is a number: its value with -0 folded into 0. */
static int as_number(const char *p, size_t len, double *v)
{
    if (len && len <= 15) {      /* plain digits (most class names): exact, no parser needed */
        uint64_t u = 0;
        size_t i = 0;
        while (i < len && (unsigned)(p[i] - '0') < 10u) u = u * 10 + (uint64_t)(p[i++] - '0');
        if (i == len) { *v = (double)u; return 1; }
    }
    if (cs_load_parse_double(p, len, v) != CSL_NUM_OK) return 0;
    if (*v == 0) *v = 0.0;
    return 1;
}

/* `#` followed by digits: a position. Sets *pos (SIZE_MAX when it overflows). */
static int as_position(const char *p, size_t len, size_t *pos)
{
    if (len < 2 || p[0] != '#') return 0;
    size_t v = 0;
    for (size_t i = 1; i < len; i++) {
        if (p[i] < '0' || p[i] > '9') return 0;
        size_t d = (size_t)(p[i] - '0');
        v = v > (SIZE_MAX - d) / 10 ? SIZE_MAX : v * 10 + d;
    }
    *pos = v;
    return 1;
}

cs_classmap *cs_classmap_new(size_t cap)
{
    cs_classmap *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    if (cap < 8) cap = 8;
    m->name = malloc(cap * sizeof *m->name);
    m->own_names = 1;
    m->cap = cap;
    if (!m->name) { cs_classmap_free(m); return NULL; }
    return m;
}

cs_classmap *cs_classmap_over(char **names, size_t cap)
{
    cs_classmap *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    m->name = (const char **)names;     /* only read in this mode */
    m->cap = cap;
    return m;
}

void cs_classmap_free(cs_classmap *m)
{
    if (!m) return;
    if (m->own_names) free(m->name);
    free(m->value);
    free(m->slot);
    free(m);
}

/* The slot that holds the class with this key, or the empty slot where it would go (the table
 * must exist). */
static size_t probe_text(const cs_classmap *m, const char *p, size_t len)
{
    size_t h = (size_t)hash_text(p, len) & (m->nslots - 1);
    while (m->slot[h]) {
        size_t j = m->slot[h] - 1;
        if (isnan(m->value[j]) && same_text(m->name[j], p, len)) break;
        h = (h + 1) & (m->nslots - 1);
    }
    return h;
}

/* Class j whose name is the number v and sits at position v (not hashed), or -1. */
static long at_own_position(const cs_classmap *m, double v)
{
    if (!(v >= 0 && v < (double)m->k)) return -1;
    size_t j = (size_t)v;
    if ((double)j != v) return -1;        /* not an integer */
    return !m->value || m->value[j] == v ? (long)j : -1;
}

/* Makes the value array (the first class not named by its own position needs it). */
static int need_values(cs_classmap *m)
{
    if (m->value) return 0;
    if (!(m->value = malloc(m->cap * sizeof *m->value))) return -1;
    for (size_t j = 0; j < m->k; j++) m->value[j] = (double)j;
    return 0;
}

static size_t probe_value(const cs_classmap *m, double v)
{
    size_t h = (size_t)hash_value(v) & (m->nslots - 1);
    while (m->slot[h] && m->value[m->slot[h] - 1] != v) h = (h + 1) & (m->nslots - 1);
    return h;
}

/* The class whose name is the text p[0..len) (not a number), or -1. */
static long find_text(const cs_classmap *m, const char *p, size_t len)
{
    if (!m->slot) return -1;
    size_t h = probe_text(m, p, len);
    return m->slot[h] ? (long)m->slot[h] - 1 : -1;
}

static int rehash(cs_classmap *m, size_t nslots)
{
    uint32_t *old = m->slot;
    size_t old_n = m->nslots;
    m->slot = calloc(nslots, sizeof *m->slot);
    if (!m->slot) { m->slot = old; return -1; }
    m->nslots = nslots;
    for (size_t i = 0; i < old_n; i++) {
        if (!old[i]) continue;   /* (names at their own position are never in the table) */
        size_t j = old[i] - 1;
        size_t h = isnan(m->value[j]) ? probe_text(m, m->name[j], strlen(m->name[j]))
                                      : probe_value(m, m->value[j]);
        m->slot[h] = old[i];
    }
    free(old);
    return 0;
}

long cs_classmap_add(cs_classmap *m, const char *name)
{
    return cs_classmap_add_n(m, name, strlen(name));
}

static long add_general(cs_classmap *m, const char *name, size_t len);

long cs_classmap_add_n(cs_classmap *m, const char *name, size_t len)
{
    /* The common case first, with no floating point: plain digits while every class so far is
     * named by its own position (no value array yet), as in p_0, p_1, ... Same answers as the
     * general path: the number k is added at its own position, a number below k is the class
     * at that position. Apart from the general path so that this one needs no stack frame (a
     * header of 100,000 classes comes here 100,000 times). */
    if (!m->value && len && len <= 9 && m->k < m->cap && m->k < UINT32_MAX - 1) {
        size_t u = 0, i = 0;
        while (i < len && (unsigned)(name[i] - '0') < 10u) u = u * 10 + (size_t)(name[i++] - '0');
        if (i == len && u <= m->k) {
            if (u < m->k) return (long)u;
            if (m->own_names) m->name[m->k] = name;
            m->k++;
            m->numbered++;
            return -1;
        }
    }
    return add_general(m, name, len);
}

#if defined(__GNUC__)
__attribute__((noinline))
#endif
static long add_general(cs_classmap *m, const char *name, size_t len)
{
    size_t pos;
    if (as_position(name, len, &pos)) return CS_CLASSMAP_HASH_NAME;
    if (m->k >= UINT32_MAX - 1) return CS_CLASSMAP_NOMEM;
    double v;
    int num = as_number(name, len, &v);
    if (num) {
        long at = at_own_position(m, v);
        if (at >= 0) return at;
    }
    /* a number at its own position needs no slot; with no number hashed yet nothing to check */
    int own = num && v == (double)m->k;
    size_t h = 0;
    if (!own && need_values(m)) return CS_CLASSMAP_NOMEM;
    if (!own || m->misplaced) {
        if (!m->slot) {          /* the first name that is hashed: the table, sized for cap */
            size_t ns = 16, want = m->cap > m->k + 1 ? m->cap : m->k + 1;
            while (ns < 2 * want) ns *= 2;
            if (!(m->slot = calloc(ns, sizeof *m->slot))) return CS_CLASSMAP_NOMEM;
            m->nslots = ns;
        } else if (2 * (m->k + 1) > m->nslots && rehash(m, m->nslots * 2)) {
            return CS_CLASSMAP_NOMEM;
        }
        h = num ? probe_value(m, v) : probe_text(m, name, len);
        if (m->slot[h]) return (long)m->slot[h] - 1;
    }
    if (m->k == m->cap) {     /* a new class, and no room: grow (the slot table is apart) */
        if (!m->own_names) return CS_CLASSMAP_NOMEM;   /* the caller's array is full */
        size_t nc = m->cap * 2;
        const char **nn = realloc(m->name, nc * sizeof *nn);
        if (!nn) return CS_CLASSMAP_NOMEM;
        m->name = nn;
        if (m->value) {
            double *nv = realloc(m->value, nc * sizeof *nv);
            if (!nv) return CS_CLASSMAP_NOMEM;
            m->value = nv;
        }
        m->cap = nc;
    }
    size_t j = m->k++;
    if (m->own_names) m->name[j] = name;
    if (m->value) m->value[j] = num ? v : NAN;
    if (num) {
        m->numbered++;
        if (v != (double)j) m->misplaced++;
    }
    if (!own) m->slot[h] = (uint32_t)j + 1;
    return -1;
}

cs_classmap *cs_classmap_of(char *const *names, size_t k)
{
    cs_classmap *m = cs_classmap_new(k);
    if (!m) return NULL;
    for (size_t j = 0; j < k; j++) {
        long r = names && names[j] ? cs_classmap_add(m, names[j]) : 0;
        if (r == CS_CLASSMAP_NOMEM) { cs_classmap_free(m); return NULL; }
        if (r != -1) {
            /* keep positions aligned: an unnamed class, a duplicate or a `#N` name is still
             * class j, found by `#j` (and by position when no class is named by a number) */
            if (need_values(m)) { cs_classmap_free(m); return NULL; }
            m->name[m->k] = names && names[j] ? names[j] : "?";
            m->value[m->k] = NAN;
            m->k++;
        }
    }
    return m;
}

int cs_classmap_find_number(const cs_classmap *m, double v, int *why)
{
    if (v == 0) v = 0.0;
    /* names that are exactly their positions (p_0..p_{K-1}) read as positions, messages too */
    if (m->numbered && !(m->numbered == m->k && m->misplaced == 0)) {
        long own = at_own_position(m, v);
        if (own >= 0) return (int)own;
        if (m->misplaced) {               /* else no number is hashed (maybe no table) */
            size_t h = probe_value(m, v);
            if (m->slot[h]) return (int)m->slot[h] - 1;
        }
        *why = m->numbered == m->k ? CS_CLASS_NO_NUMBER : CS_CLASS_AMBIGUOUS;
        return -1;
    }
    if (v != floor(v)) { *why = CS_CLASS_NOT_INT; return -1; }
    if (!(v >= 0 && v < (double)m->k)) { *why = CS_CLASS_RANGE; return -1; }
    return (int)v;
}

int cs_classmap_find(const cs_classmap *m, const char *p, size_t len, int *why)
{
    size_t pos;
    if (as_position(p, len, &pos)) {
        if (pos < m->k) return (int)pos;
        *why = CS_CLASS_POSITION;
        return -1;
    }
    double v;
    if (as_number(p, len, &v)) return cs_classmap_find_number(m, v, why);
    long j = find_text(m, p, len);
    if (j >= 0) return (int)j;
    *why = CS_CLASS_UNKNOWN;
    return -1;
}

size_t cs_classmap_size(const cs_classmap *m) { return m->k; }
size_t cs_classmap_numbered(const cs_classmap *m) { return m->numbered; }

int cs_classmap_numbers_are_positions(const cs_classmap *m)
{
    return m->numbered == 0 || (m->numbered == m->k && m->misplaced == 0);
}

int cs_classmap_out_of_order(const cs_classmap *m) { return m->misplaced != 0; }

char *cs_classmap_list(const cs_classmap *m, char *buf, size_t size)
{
    size_t o = 0;
    buf[0] = '\0';
    for (size_t j = 0; j < m->k && o + 48 < size; j++) {
        char one[48];
        cs_load_excerpt(one, 40, m->name[j], strlen(m->name[j]));
        o += (size_t)snprintf(buf + o, size - o, "%s%s", j ? ", " : "", one);
        if (j + 1 < m->k && o + 48 >= size) {
            snprintf(buf + o, size - o, ", ...");
            break;
        }
    }
    return buf;
}

char *cs_classmap_explain(const cs_classmap *m, int why, const char *p, size_t len, char *buf,
                          size_t size)
{
    char tok[200], names[160];
    cs_load_excerpt(tok, sizeof tok, p, len);
    cs_classmap_list(m, names, sizeof names);
    switch (why) {
    case CS_CLASS_NO_NUMBER:
        snprintf(buf, size, "'%s' names no class (the classes are named by numbers: %s)", tok,
                 names);
        break;
    case CS_CLASS_AMBIGUOUS:
        snprintf(buf, size, "'%s' names no class, and is not read as a position because some"
                            " class names are numbers (classes: %s)", tok, names);
        break;
    case CS_CLASS_POSITION:
        snprintf(buf, size, "'%s' is past the last class, #%zu", tok, m->k ? m->k - 1 : 0);
        break;
    default:
        snprintf(buf, size, "'%s' names no class (classes: %s)", tok, names);
    }
    return buf;
}

/* ---- datasets (declared in calscope/dataset.h: the rule lives here, in one place) ---------- */

/* Counted for the tests that show a measurement resolves its class names once. */
static atomic_ulong class_finds;

unsigned long cs_dataset_class_find_count(void)
{
    return atomic_load_explicit(&class_finds, memory_order_relaxed);
}

int cs_dataset_class_find(const cs_dataset *d, const char *name, int *why)
{
    atomic_fetch_add_explicit(&class_finds, 1, memory_order_relaxed);
    int w = 0;
    if (!why) why = &w;
    *why = 0;
    cs_classmap *m = cs_classmap_of(d->class_names, d->k);
    if (!m) return -1;
    int c = cs_classmap_find(m, name, strlen(name), why);
    cs_classmap_free(m);
    return c;
}

cs_status cs_dataset_class_error(const cs_dataset *d, const char *what, const char *name, int why,
                                 cs_error *err)
{
    if (why == 0) return cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", what);
    if (why == CS_CLASS_NO_NUMBER || why == CS_CLASS_AMBIGUOUS || why == CS_CLASS_POSITION) {
        cs_classmap *m = cs_classmap_of(d->class_names, d->k);
        if (!m) return cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", what);
        char e[400];
        cs_classmap_explain(m, why, name, strlen(name), e, sizeof e);
        cs_classmap_free(m);
        return cs_error_set(err, CS_EUSAGE, 0, 0, "%s: class %s", what, e);
    }
    return cs_error_set(err, CS_EUSAGE, 0, 0, "%s: unknown class '%s' (%zu classes)", what, name,
                        d->k);
}
