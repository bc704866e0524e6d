/* The pure rules of a follow (calscope/follow.h): which names are prediction files, their
 * natural order, and when a file is complete. */
#include "calscope/follow.h"

#include <ctype.h>
#include <string.h>

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), t = strlen(tail);
    return n > t && strcmp(s + n - t, tail) == 0;
}

int cs_follow_kind(const char *name)
{
    if (!name[0] || name[0] == '.') return 0;   /* a writer's temporary file */
    if (ends_with(name, ".csv") || ends_with(name, ".tsv")) return CS_FOLLOW_CSV;
    if (ends_with(name, ".csv.gz") || ends_with(name, ".tsv.gz")) return CS_FOLLOW_GZ;
    if (ends_with(name, ".npy")) return CS_FOLLOW_NPY;
    return 0;
}

/* Length of the run of digits at s, its leading zeros skipped into *start. */
static size_t digit_run(const char *s, const char **start)
{
    while (*s == '0' && isdigit((unsigned char)s[1])) s++;
    *start = s;
    size_t n = 0;
    while (isdigit((unsigned char)s[n])) n++;
    return n;
}

int cs_follow_natural_cmp(const char *a, const char *b)
{
    while (*a && *b) {
        if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
            const char *da, *db;
            const char *ra = a, *rb = b;
            size_t na = digit_run(a, &da), nb = digit_run(b, &db);
            if (na != nb) return na < nb ? -1 : 1;          /* fewer significant digits: smaller */
            int c = memcmp(da, db, na);
            if (c) return c;
            a = da + na;
            b = db + nb;
            size_t la = (size_t)(a - ra), lb = (size_t)(b - rb);
            if (la != lb) return la < lb ? -1 : 1;          /* equal numbers: fewer zeros first */
            continue;
        }
        if (*a != *b) return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
        a++;
        b++;
    }
    return (unsigned char)*a - (unsigned char)*b;
}

int cs_follow_complete(int kind, const cs_follow_look *look, double changed_at, int moved_in, double now,
                       double settle)
{
    if (kind == CS_FOLLOW_NPY) return look->npy_size >= 0 && look->size == look->npy_size;
    if (moved_in) return 1;
    if (kind == CS_FOLLOW_CSV && !look->ends_newline) return 0;
    /* unchanged for settle seconds, by the file's own time and by what the follow saw change
     * (a file system whose times are coarse may keep the time across a write) */
    double last = look->mtime > changed_at ? look->mtime : changed_at;
    return last + settle <= now;
}

/* The item size of a numpy 'descr' such as '<f8', '|u1', '>i4': the digits after the kind. */
static int64_t descr_size(const char *h)
{
    const char *d = strstr(h, "'descr'");
    if (!d) return -1;
    d = strchr(d + 7, '\'');
    if (!d || !d[1] || !d[2]) return -1;
    d += 3;                                   /* past the quote, the byte order and the kind */
    int64_t s = 0;
    while (isdigit((unsigned char)*d) && s < 1000000) s = s * 10 + (*d++ - '0');
    return *d == '\'' && s > 0 ? s : -1;       /* an item of a million bytes or more: no dtype */
}

/* The product of 'shape': (N, K) -> N*K, () -> 1; -1 when malformed. */
static int64_t shape_count(const char *h)
{
    const char *s = strstr(h, "'shape'");
    if (!s || !(s = strchr(s, '('))) return -1;
    int64_t count = 1;
    for (s++; *s && *s != ')'; s++) {
        if (!isdigit((unsigned char)*s)) continue;
        int64_t v = 0;
        while (isdigit((unsigned char)*s)) {
            if (v > (INT64_MAX - 9) / 10) return -1;
            v = v * 10 + (*s++ - '0');
        }
        if (v && count > INT64_MAX / v) return -1;
        count *= v;
        s--;
    }
    return *s == ')' ? count : -1;
}

int64_t cs_follow_npy_size(const unsigned char *head, size_t len)
{
    if (len < 10 || memcmp(head, "\x93NUMPY", 6) != 0) return -1;
    int major = head[6];
    size_t start = major == 1 ? 10 : 12;
    if (len < start || (major != 1 && major != 2 && major != 3)) return -1;
    size_t hlen = major == 1 ? (size_t)head[8] | (size_t)head[9] << 8
                             : (size_t)head[8] | (size_t)head[9] << 8 | (size_t)head[10] << 16 | (size_t)head[11] << 24;
    if (hlen > len - start) return -1;                 /* the header is not whole yet */
    char h[4096];
    if (hlen >= sizeof h) return -1;
    memcpy(h, head + start, hlen);
    h[hlen] = '\0';
    int64_t item = descr_size(h), count = shape_count(h);
    if (item < 0 || count < 0 || (count && item > (INT64_MAX - (int64_t)(start + hlen)) / count)) return -1;
    return (int64_t)(start + hlen) + count * item;
}
