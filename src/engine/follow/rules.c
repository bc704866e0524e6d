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
    if (ends_with(name, ".npz")) return CS_FOLLOW_NPZ;
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
    if (kind == CS_FOLLOW_NPZ) return look->zip_whole;
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

static uint64_t le(const unsigned char *p, int bytes)
{
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

/* Where the central directory ends by the zip64 records before the end record at `at` (the
 * zip64 end-of-central-directory locator, then its record): 1 with *cd_off, *cd_size and *end
 * (where the directory must end: the zip64 record) when they are in the tail, else 0. */
static int zip64_directory(const unsigned char *tail, size_t at, int64_t base, uint64_t *cd_off,
                           uint64_t *cd_size, uint64_t *end)
{
    if (at < 20 || memcmp(tail + at - 20, "PK\6\7", 4) != 0) return 0;
    uint64_t rec = le(tail + at - 12, 8);
    /* the 56-byte record must lie in the tail, before the locator; compared by subtraction,
     * since a forged offset near 2^64 would wrap an addition */
    if (rec < (uint64_t)base || at < 20 + 56 || rec - (uint64_t)base > at - 20 - 56) return 0;
    const unsigned char *r = tail + (rec - (uint64_t)base);
    if (memcmp(r, "PK\6\6", 4) != 0) return 0;
    *cd_size = le(r + 40, 8);
    *cd_off = le(r + 48, 8);
    *end = rec;
    return 1;
}

int cs_follow_zip_whole(const unsigned char *tail, size_t len, int64_t size)
{
    if (size < 22 || len < 22 || (int64_t)len > size) return 0;
    int64_t base = size - (int64_t)len;              /* the file offset of tail[0] */
    for (size_t at = len - 22 + 1; at-- > 0;) {
        const unsigned char *e = tail + at;
        /* the end record, its comment reaching exactly the end of the file */
        if (memcmp(e, "PK\5\6", 4) != 0 || at + 22 + le(e + 20, 2) != len) continue;
        uint64_t cd_size = le(e + 12, 4), cd_off = le(e + 16, 4), end = (uint64_t)base + at;
        int zip64 = cd_size == 0xFFFFFFFFu || cd_off == 0xFFFFFFFFu || le(e + 10, 2) == 0xFFFF;
        if (zip64 && !zip64_directory(tail, at, base, &cd_off, &cd_size, &end)) return 0;
        if (cd_off > end || cd_size != end - cd_off) return 0;
        /* the directory's first entry, when the tail holds it */
        if (cd_size && cd_off >= (uint64_t)base && memcmp(tail + (cd_off - (uint64_t)base), "PK\1\2", 4) != 0)
            return 0;
        return 1;
    }
    return 0;
}
