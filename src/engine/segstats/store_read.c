/* calscope engine: reading a statistics file (format: docs/segmentation.md, "Statistics files").
 *
 * The whole (decompressed) file is read into memory (gzip inflated by ISA-L, engine/gz; plain
 * input as it is), then split into lines and fields by hand: a 200-case file holds some
 * 300,000 records and must open in well under 50 ms, which rules out a scanf per field.
 * Numbers go through the loader's exact parser (cs_load_parse_double), so a %.17g double reads
 * back bit for bit. Every refusal is "PATH:LINE:COL: reason", COL the 1-based field.
 *
 * The records of a large file are parsed by two threads, each over a block of whole cases
 * (split where the case number changes), through the fast path only. A file as the writer
 * makes it is read that way entirely; the first line either thread cannot take sends the whole
 * record part back to the one-thread reading from its first record (the arrays zeroed again), so
 * what is accepted and every refusal, with its line, are the one-thread reader's. */
#include "engine/segstats/segstats_internal.h"

#include <errno.h>
#include <pthread.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "calscope/mapping.h"
#include "engine/num/ubin.h"
#include "engine/num/num.h"
#include "calscope/thread.h"
#include "engine/filemap/filemap.h"
#include "engine/gz/gz.h"

#define MAGIC "# calscope-stats "

typedef struct field {
    char *p;
    size_t len;
} field;

typedef struct reader {
    const char *path;
    char *buf;
    size_t len, pos;
    long line;
    field *f;
    size_t nf, cap;
    cs_error *err;
} reader;

#define IN_CHUNK ((size_t)1 << 18)

/* Compressed or plain input, a chunk at a time: from a descriptor (stdin, pipes; the bytes read
 * ahead to look at the magic come first), or from a mapped gzip file. */
typedef struct source {
    int fd;                   /* -1: from map */
    unsigned char *chunk;     /* IN_CHUNK bytes (a descriptor) */
    size_t ahead;             /* bytes of chunk read ahead, handed out first */
    const csl_map *map;
    size_t pos;
    int err;                  /* errno of a failed read; -1: the mapped file shrank */
} source;

static int pull_source(void *ctx, const void **p, size_t *n)
{
    source *s = ctx;
    if (s->fd < 0) {
        if (s->pos >= s->map->len) return 0;
        if (cs_load_map_check(s->map->data + s->pos)) { s->err = -1; return -1; }
        *p = s->map->data + s->pos;
        *n = s->map->len - s->pos < IN_CHUNK ? s->map->len - s->pos : IN_CHUNK;
        s->pos += *n;
        return 1;
    }
    if (s->ahead) {
        *p = s->chunk;
        *n = s->ahead;
        s->ahead = 0;
        return 1;
    }
    ssize_t r;
    do r = read(s->fd, s->chunk, IN_CHUNK); while (r < 0 && errno == EINTR);
    if (r < 0) { s->err = errno; return -1; }
    *p = s->chunk;
    *n = (size_t)r;
    return r > 0;
}

/* Up to n bytes of the input (inflated when g), *got of them; 0, or a message's reason. */
static const char *next_bytes(source *s, cs_gz *g, char *dst, size_t n, size_t *got)
{
    const char *why = NULL;
    if (g) {
        int rc = cs_gz_read(g, dst, n, got, &why);
        if (rc == -1) return why;
        if (rc == -2) return s->err < 0 ? "file changed while loading" : strerror(s->err);
        if (*got < n && !cs_gz_finished(g)) return "the gzip stream ends early (a truncated file?)";
        return NULL;
    }
    *got = 0;
    while (*got < n) {
        const void *p;
        size_t k;
        int r = pull_source(s, &p, &k);
        if (r < 0) return strerror(s->err);
        if (r == 0) break;
        memcpy(dst + *got, p, k);     /* k <= IN_CHUNK <= n - *got (the caller's room) */
        *got += k;
        if (*got + IN_CHUNK > n) break;
    }
    return NULL;
}

/* The most text a statistics file read into memory (a gzip'd file, a pipe) may hold: 4 GiB
 * (about 96,000 cases at F = 300 and 4 classes), and for a mapped gzip file no more than its
 * compressed bytes can inflate to (cs_gz_most_inflated, the rule of the .nii.gz reader). */
#define TEXT_MAX CS_SEGSTATS_TEXT_MAX

/* Reads the whole input of s into a buffer, inflating a gzip stream (gzip is told by its magic,
 * never by a name; a plain pipe passes as it is). Refused as soon as the text passes text_max
 * bytes: a gzip bomb costs at most that, never the bytes it would inflate to. */
static cs_status read_all(const char *path, source *s, uint64_t text_max, char **out,
                          size_t *out_len, cs_error *err)
{
    const unsigned char *m = s->fd < 0 ? (const unsigned char *)s->map->data : s->chunk;
    size_t have = s->fd < 0 ? s->map->len : s->ahead;
    cs_gz *g = NULL;
    if (have >= 2 && m[0] == 0x1f && m[1] == 0x8b &&
        !(g = cs_gz_open_pull(pull_source, s, s->fd < 0 ? s->map->data : NULL, s->fd < 0 ? have : 0)))
        return cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", path);
    if (g && s->fd < 0 && cs_gz_most_inflated(have) < text_max) text_max = cs_gz_most_inflated(have);
    size_t cap = (size_t)1 << 20, len = 0;
    char *buf = malloc(cap);
    const char *why = NULL;
    for (;;) {
        if (!buf) { cs_gz_close(g); return cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", path); }
        if (cap - len < IN_CHUNK) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) { free(buf); buf = NULL; continue; }
            buf = nb;
            cap *= 2;
        }
        /* inflated: one byte past the budget at most (a plain pipe's chunks are whole) */
        size_t room = cap - len;
        if (g && room > text_max - len + 1) room = (size_t)(text_max - len + 1);
        size_t got;
        if ((why = next_bytes(s, g, buf + len, room, &got)) != NULL || got == 0) break;
        len += got;
        if (len > text_max) break;
    }
    cs_gz_close(g);
    if (why || len > text_max) {
        free(buf);
        if (why) return cs_error_set(err, CS_EINPUT, 0, 0, "%s: cannot read: %s", path, why);
        return cs_error_set(err, CS_EINPUT, 0, 0, "%s: cannot read: more than %llu bytes of text,"
                            " the most a statistics file read into memory may hold (a gzip bomb?)",
                            path, (unsigned long long)text_max);
    }
    *out = buf;
    *out_len = len;
    return CS_OK;
}

/* A descriptor's input (not a regular file, or stdin): the magic looked at in the first bytes. */
static cs_status slurp_fd(const char *path, int fd, uint64_t text_max, char **out,
                          size_t *out_len, cs_error *err)
{
    source s = {.fd = fd, .chunk = malloc(IN_CHUNK)};
    if (!s.chunk) {
        close(fd);
        return cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", path);
    }
    cs_status st = CS_OK;
    while (s.ahead < 2) {
        ssize_t r = read(fd, s.chunk + s.ahead, IN_CHUNK - s.ahead);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) st = cs_error_set(err, CS_EINPUT, 0, 0, "%s: cannot read: %s", path, strerror(errno));
        if (r <= 0) break;
        s.ahead += (size_t)r;
    }
    if (st == CS_OK) st = read_all(path, &s, text_max, out, out_len, err);
    free(s.chunk);
    close(fd);
    return st;
}

/* The input in memory. A plain regular file is mapped copy-on-write (the parser unescapes
 * quoted header fields in place; the records are only read), which saves copying 10 MB of
 * records, under the loader's SIGBUS guard (a file that shrinks while it is read reads as
 * zeros: load_map.c); anything else is decompressed into a buffer. in->map.slot >= 0 says
 * which to release. A regular file's descriptor stays open in in->fd (else -1), with its
 * state before the read in in->before, for the changed-file check (read_end). */
typedef struct input {
    csl_map map;
    int fd;
    struct stat before;
} input;

static cs_status slurp(const char *path, uint64_t text_max, char **out, size_t *out_len,
                       input *in, cs_error *err)
{
    in->map.slot = -1;
    in->fd = -1;
    if (strcmp(path, "-") == 0) return slurp_fd(path, dup(0), text_max, out, out_len, err);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return cs_error_set(err, CS_EINPUT, 0, 0, "%s: cannot open: %s", path, strerror(errno));
    if (fstat(fd, &in->before) != 0 || !S_ISREG(in->before.st_mode))
        return slurp_fd(path, fd, text_max, out, out_len, err);
    in->fd = fd;
    const struct stat *sb = &in->before;
    unsigned char magic[2] = {0, 0};
    if (sb->st_size > 2 && pread(fd, magic, 2, 0) == 2 && !(magic[0] == 0x1f && magic[1] == 0x8b) &&
        (uintmax_t)sb->st_size < SIZE_MAX && cs_load_map_prot(fd, (size_t)sb->st_size, 1, &in->map) == 0) {
        *out = in->map.data;
        *out_len = in->map.len;
        return CS_OK;
    }
    /* gzip: inflated from a read-only mapping, so zlib can word a corruption (engine/gz) */
    csl_map z;
    if ((uintmax_t)sb->st_size >= SIZE_MAX || cs_load_map_prot(fd, (size_t)sb->st_size, 0, &z) != 0)
        return slurp_fd(path, dup(fd), text_max, out, out_len, err);
    source s = {.fd = -1, .map = &z};
    cs_status st = read_all(path, &s, text_max, out, out_len, err);
    if (cs_load_unmap(&z) && st == CS_OK) {
        free(*out);
        *out = NULL;
        return cs_error_set(err, CS_EINPUT, 0, 0, "%s: file changed while loading", path);
    }
    return st;
}

/* Releases what slurp made, and refuses (s becomes CS_EINPUT "PATH: file changed while
 * loading", whatever the reading said) a regular file that shrank under the mapping or whose
 * size, time or name changed while it was read: its numbers may be half old, half new. */
static cs_status read_end(const char *path, input *in, char *buf, cs_status s, cs_error *err)
{
    int vanished = 0;
    if (in->map.slot >= 0) vanished = cs_load_unmap(&in->map);
    else free(buf);
    if (in->fd >= 0) {
        if (vanished || cs_load_changed(in->fd, path, &in->before))
            s = cs_error_set(err, CS_EINPUT, 0, 0, "%s: file changed while loading", path);
        close(in->fd);
    }
    return s;
}

static cs_status bad(reader *r, size_t col, const char *reason)
{
    return cs_error_set(r->err, CS_EINPUT, r->line, (long)col, "%s:%ld:%zu: %s", r->path, r->line,
                        col, reason);
}

/* The field as text for a message, excerpted. */
static const char *shown(const field *f, char *t, size_t size)
{
    size_t n = f->len < size - 4 ? f->len : size - 4;
    memcpy(t, f->p, n);
    strcpy(t + n, f->len > n ? "..." : "");
    return t;
}

static cs_status bad_field(reader *r, size_t col, const char *what)
{
    char t[64], msg[160];
    snprintf(msg, sizeof msg, "'%s' %s", shown(&r->f[col - 1], t, sizeof t), what);
    return bad(r, col, msg);
}

/* Splits the next line into r->f in one pass over its bytes (a library call per field costs
 * more than the short fields themselves). Quoted fields ("..." with "" for a quote, within
 * the line) are unescaped in place; a CR before the LF is dropped. Returns 1 with a line, 0 at
 * the end of the input, -1 on an error (set). */
static int next_line(reader *r)
{
    if (r->pos >= r->len) return 0;
    r->line++;
    char *p = r->buf + r->pos, *lim = r->buf + r->len;
    r->nf = 0;
    for (;;) {
        if (r->nf == r->cap) {
            size_t nc = r->cap ? r->cap * 2 : 16;
            field *nf = realloc(r->f, nc * sizeof *nf);
            if (!nf) { cs_error_set(r->err, CS_ENOMEM, 0, 0, "%s: out of memory", r->path); return -1; }
            r->f = nf;
            r->cap = nc;
        }
        field *f = &r->f[r->nf++];
        if (p < lim && *p == '"') {
            char *w = ++p;
            f->p = w;
            for (;;) {
                if (p >= lim || *p == '\n') { bad(r, r->nf, "a quoted field is not closed"); return -1; }
                if (*p == '"') {
                    if (p + 1 < lim && p[1] == '"') { *w++ = '"'; p += 2; continue; }
                    p++;
                    break;
                }
                *w++ = *p++;
            }
            f->len = (size_t)(w - f->p);
            if (p < lim && *p == '\r' && (p + 1 == lim || p[1] == '\n')) p++;
            if (p < lim && *p != ',' && *p != '\n') { bad(r, r->nf, "text after a closing quote"); return -1; }
        } else {
            f->p = p;
            while (p < lim && *p != ',' && *p != '\n') p++;
            f->len = (size_t)(p - f->p);
            if (f->len && f->p[f->len - 1] == '\r' && (p == lim || *p == '\n')) f->len--;
        }
        if (p >= lim || *p == '\n') break;
        p++;   /* the comma */
    }
    /* the last line has its line break (check_ending): this only keeps pos <= len */
    r->pos = p < lim ? (size_t)(p - r->buf) + 1 : r->len;
    return 1;
}

static int is(const field *f, const char *s)
{
    size_t n = strlen(s);
    return f->len == n && memcmp(f->p, s, n) == 0;
}

/* A decimal count: digits only, at most UINT64_MAX. */
static int parse_u64(const field *f, uint64_t *v)
{
    if (f->len == 0 || f->len > 20) return -1;
    uint64_t x = 0;
    for (size_t i = 0; i < f->len; i++) {
        unsigned d = (unsigned)(f->p[i] - '0');
        if (d > 9) return -1;
        if (x > (UINT64_MAX - d) / 10) return -1;
        x = x * 10 + d;
    }
    *v = x;
    return 0;
}

static cs_status get_count(reader *r, size_t col, uint64_t *v)
{
    if (parse_u64(&r->f[col - 1], v)) return bad_field(r, col, "is not a count (a non-negative integer)");
    return CS_OK;
}

/* An index field below `n` naming a `what` ("case", "class", "bin"). */
static cs_status get_index(reader *r, size_t col, uint64_t n, const char *what, size_t *v)
{
    uint64_t x;
    cs_status s = get_count(r, col, &x);
    if (s) return s;
    if (x >= n) {
        char msg[160];
        snprintf(msg, sizeof msg, "%s %llu outside 0..%llu (%s)", what, (unsigned long long)x,
                 (unsigned long long)(n - 1),
                 what[1] == 'i' ? "the fine resolution" : "as declared in the header");
        return bad(r, col, msg);
    }
    *v = (size_t)x;
    return CS_OK;
}

/* A finite, non-negative double no larger than `max`. */
static cs_status get_sum(reader *r, size_t col, double max, double *v)
{
    const field *f = &r->f[col - 1];
    if (cs_load_parse_double(f->p, f->len, v) != CSL_NUM_OK || !(*v >= 0))
        return bad_field(r, col, "is not a sum (a finite non-negative number)");
    if (*v > max) {
        char msg[160];
        snprintf(msg, sizeof msg, "sum %.17g exceeds the bin's count %.17g", *v, max);
        return bad(r, col, msg);
    }
    return CS_OK;
}

static char *text(const field *f)
{
    char *s = malloc(f->len + 1);
    if (s) { memcpy(s, f->p, f->len); s[f->len] = '\0'; }
    return s;
}

/* The next line, which must be KEY,... with `nf` fields (0: any number >= 2). */
static cs_status header_line(reader *r, const char *key, size_t nf)
{
    int got = next_line(r);
    if (got < 0) return r->err->code;
    if (got == 0) {
        r->line++;
        char msg[96];
        snprintf(msg, sizeof msg, "the file ends inside the header (expected a '%s' line)", key);
        return bad(r, 1, msg);
    }
    if (!is(&r->f[0], key) || (nf ? r->nf != nf : r->nf < 2)) {
        char msg[96];
        snprintf(msg, sizeof msg, "expected a '%s' line with %zu fields", key, nf ? nf : 2);
        return bad(r, 1, msg);
    }
    return CS_OK;
}

static cs_status read_magic(reader *r)
{
    if (next_line(r) != 1 || r->nf != 1 || r->f[0].len < sizeof MAGIC - 1 ||
        memcmp(r->f[0].p, MAGIC, sizeof MAGIC - 1))
        return cs_error_set(r->err, CS_EINPUT, 1, 1, "%s:1:1: not a calscope statistics file (the"
                            " first line is not '# calscope-stats 1')", r->path);
    field v = {r->f[0].p + sizeof MAGIC - 1, r->f[0].len - (sizeof MAGIC - 1)};
    if (!is(&v, "1")) {
        char t[64], msg[160];
        snprintf(msg, sizeof msg, "statistics format version '%s' is not supported (this calscope"
                 " reads version 1)", shown(&v, t, sizeof t));
        return bad(r, 1, msg);
    }
    return CS_OK;
}

/* Every line the writer makes ends with its line break, so a file whose last byte is not one
 * was cut inside its last line — where a number cut short (0.1234 of 0.12345678) still reads
 * as a number. Refused before anything is read; the line is counted only then. */
static cs_status check_ending(reader *r)
{
    if (r->len == 0 || r->buf[r->len - 1] == '\n') return CS_OK;
    long lines = 1;
    for (const char *p = r->buf, *lim = r->buf + r->len; (p = memchr(p, '\n', (size_t)(lim - p)));
         p++)
        lines++;
    r->line = lines;
    return bad(r, 1, "the file ends inside this line, without its line break (a truncated"
               " file?)");
}

typedef struct named {
    const char *name;
    size_t j;
} named;

static int by_name_then_index(const void *a, const void *b)
{
    const named *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->j > y->j) - (x->j < y->j);
}

/* Class names are distinct (a class is found by its name). The first repeat in file order is
 * named at its column of the classes line (r->line). Sorting keeps 65536 names fast. */
static cs_status check_class_names(reader *r, char **names, size_t k)
{
    named *v = malloc(k * sizeof *v);
    if (!v) return cs_error_set(r->err, CS_ENOMEM, 0, 0, "%s: out of memory", r->path);
    for (size_t j = 0; j < k; j++) v[j] = (named){names[j], j};
    qsort(v, k, sizeof *v, by_name_then_index);
    /* a name's second occurrence is the second of its run; the earliest of those is reported */
    size_t rep = SIZE_MAX, first = 0;
    for (size_t x = 1; x < k; x++)
        if (strcmp(v[x - 1].name, v[x].name) == 0 && (x < 2 || strcmp(v[x - 2].name, v[x].name))
            && v[x].j < rep) {
            rep = v[x].j;
            first = v[x - 1].j;
        }
    free(v);
    if (rep == SIZE_MAX) return CS_OK;
    char msg[300];
    snprintf(msg, sizeof msg, "class name '%.200s' is given twice (also column %zu): class names"
             " must be distinct", names[rep], first + 3);
    return bad(r, rep + 3, msg);
}

/* The mapping line (line 4) must be one that --label-values / --regions gives, and name the
 * classes of the classes line (r->line), in their order: reduce writes both from one mapping,
 * so a disagreement is an edited or spliced file. */
static cs_status check_mapping(reader *r, const char *mapping, cs_seg_kind kind, char **names,
                               size_t k)
{
    cs_seg_mapping *m = NULL;
    cs_error perr;
    cs_status s = kind == CS_SEG_SOFTMAX ? cs_seg_mapping_values(mapping, &m, &perr)
                                         : cs_seg_mapping_regions_names(mapping, &m, &perr);
    char msg[700];
    if (s == CS_ENOMEM) return cs_error_set(r->err, CS_ENOMEM, 0, 0, "%s: out of memory", r->path);
    if (s) {
        long line = r->line;
        r->line = 4;
        snprintf(msg, sizeof msg, "the mapping is not one reduce writes: %.600s", perr.msg);
        s = bad(r, 2, msg);
        r->line = line;
        return s;
    }
    if (m->k != k) {
        snprintf(msg, sizeof msg, "%zu classes, but the mapping '%.500s' (line 4) names %zu", k,
                 mapping, m->k);
        s = bad(r, 2, msg);
    }
    for (size_t j = 0; !s && j < k; j++)
        if (strcmp(m->names[j], names[j])) {
            snprintf(msg, sizeof msg, "class %zu is '%.200s', but the mapping '%.200s' (line 4)"
                     " names it '%.200s'", j, names[j], mapping, m->names[j]);
            s = bad(r, j + 3, msg);
        }
    cs_seg_mapping_free(m);
    return s;
}

/* The least bytes a case takes after the cases line: its case line (17 bytes:
 * "case,0,a,0,,0,,0\n") and its K 's' records (12 bytes each: "s,0,0,0,0,0\n"). */
#define CASE_LINE_MIN 17
#define SCORES_MIN 12

/* ... and a case of V > 0 voxels K 'c' records at least (each class's counts add up to V;
 * 14 bytes: "c,0,0,0,1,0,0\n") and, softmax, a 't' record (12 bytes). */
#define BIN_MIN 14
#define TOP1_MIN 12

/* The header as read, before the object is allocated: the sums' size is decided only when
 * the case lines have shown that the file can hold their records. */
typedef struct head {
    uint64_t fine, k, n;
    cs_seg_kind kind;
    char *mapping;
    char **names;                         /* k */
    char **case_names;                    /* n each, as the object holds them */
    cs_seg_input *probs_in, *labels_in;
    uint64_t *voxels;
} head;

static void head_free(head *h)
{
    for (size_t j = 0; h->names && j < h->k; j++) free(h->names[j]);
    for (size_t c = 0; c < h->n; c++) {
        if (h->case_names) free(h->case_names[c]);
        if (h->probs_in) free(h->probs_in[c].path);
        if (h->labels_in) free(h->labels_in[c].path);
    }
    free(h->names);
    free(h->mapping);
    free(h->case_names);
    free(h->probs_in);
    free(h->labels_in);
    free(h->voxels);
}

static cs_status nomem(reader *r)
{
    return cs_error_set(r->err, CS_ENOMEM, 0, 0, "%s: out of memory", r->path);
}

/* Lines 1-5: magic, fine, kind, mapping, classes. */
static cs_status read_classes(reader *r, head *h)
{
    cs_status s;
    if ((s = read_magic(r)) || (s = check_ending(r)) || (s = header_line(r, "fine", 2)) ||
        (s = get_count(r, 2, &h->fine)))
        return s;
    if (h->fine < 1 || h->fine > CS_SEGSTATS_FINE_MAX) {
        char msg[96];
        snprintf(msg, sizeof msg, "fine resolution %llu outside 1..%d",
                 (unsigned long long)h->fine, CS_SEGSTATS_FINE_MAX);
        return bad(r, 2, msg);
    }
    if ((s = header_line(r, "kind", 2))) return s;
    if (!is(&r->f[1], "softmax") && !is(&r->f[1], "regions"))
        return bad_field(r, 2, "is not a kind (softmax or regions)");
    h->kind = is(&r->f[1], "softmax") ? CS_SEG_SOFTMAX : CS_SEG_REGIONS;
    if ((s = header_line(r, "mapping", 2))) return s;
    if (!(h->mapping = text(&r->f[1]))) return nomem(r);
    uint64_t k;
    if ((s = header_line(r, "classes", 0)) || (s = get_count(r, 2, &k))) return s;
    if (k < 1 || k > 65536) return bad(r, 2, "class count outside 1..65536");
    if (r->nf != k + 2) {
        char msg[96];
        snprintf(msg, sizeof msg, "expected %llu class names after the count, found %zu",
                 (unsigned long long)k, r->nf - 2);
        return bad(r, 1, msg);
    }
    if (!(h->names = calloc(k, sizeof *h->names))) return nomem(r);
    h->k = k;
    for (size_t j = 0; j < k; j++)
        if (!(h->names[j] = text(&r->f[j + 2]))) return nomem(r);
    if ((s = check_class_names(r, h->names, (size_t)k))) return s;
    return check_mapping(r, h->mapping, h->kind, h->names, (size_t)k);
}

/* Line 6, the case count: every case takes a case line and K scores records, so a count the
 * rest of the file cannot hold is refused before anything is allocated for it. */
static cs_status read_case_count(reader *r, head *h)
{
    cs_status s;
    uint64_t n;
    if ((s = header_line(r, "cases", 2)) || (s = get_count(r, 2, &n))) return s;
    uint64_t per_case = CASE_LINE_MIN + SCORES_MIN * h->k, rest = r->len - r->pos;
    if (n > rest / per_case) {
        char msg[300];
        snprintf(msg, sizeof msg, "more cases than the rest of the file can hold (each takes at"
                 " least %llu bytes, its case line and an 's' record per class; %llu take %.0f,"
                 " %llu bytes follow)", (unsigned long long)per_case, (unsigned long long)n,
                 (double)n * (double)per_case, (unsigned long long)rest);
        return bad(r, 2, msg);
    }
    size_t m = n ? (size_t)n : 1;
    h->case_names = calloc(m, sizeof *h->case_names);
    h->probs_in = calloc(m, sizeof *h->probs_in);
    h->labels_in = calloc(m, sizeof *h->labels_in);
    h->voxels = calloc(m, sizeof *h->voxels);
    if (!h->case_names || !h->probs_in || !h->labels_in || !h->voxels) return nomem(r);
    h->n = n;
    return CS_OK;
}

/* Lines 7 .. 6+N; case_line[c] gets each case's line. */
static cs_status read_case_lines(reader *r, head *h, long *case_line)
{
    cs_status s;
    for (size_t c = 0; c < h->n; c++) {
        size_t idx;
        if ((s = header_line(r, "case", 8)) || (s = get_index(r, 2, h->n, "case", &idx)))
            return s;
        if (idx != c) {
            char msg[96];
            snprintf(msg, sizeof msg, "case lines must be numbered in order: expected %zu", c);
            return bad(r, 2, msg);
        }
        if (r->f[2].len == 0) return bad(r, 3, "a case needs a name");
        case_line[c] = r->line;
        if (!(h->case_names[c] = text(&r->f[2])) || !(h->probs_in[c].path = text(&r->f[4])) ||
            !(h->labels_in[c].path = text(&r->f[6])))
            return nomem(r);
        if ((s = get_count(r, 4, &h->voxels[c])) || (s = get_count(r, 6, &h->probs_in[c].size)) ||
            (s = get_count(r, 8, &h->labels_in[c].size)))
            return s;
        if (c && strcmp(h->case_names[c - 1], h->case_names[c]) >= 0) {
            char msg[600];
            snprintf(msg, sizeof msg, "case '%.200s' after '%.200s': case names must be unique and"
                     " in ascending order", h->case_names[c], h->case_names[c - 1]);
            return bad(r, 3, msg);
        }
    }
    return CS_OK;
}

/* With the voxels known, the least bytes the records of every case take against the bytes
 * that follow the case lines: a file cut short, or one declaring many cases it does not hold,
 * is refused here, before its sums are allocated. */
static cs_status check_records_fit(reader *r, const head *h)
{
    uint64_t need = 0, rest = r->len - r->pos;
    for (size_t c = 0; c < h->n; c++) {
        need += SCORES_MIN * h->k;
        if (h->voxels[c]) need += BIN_MIN * h->k + (h->kind == CS_SEG_SOFTMAX ? TOP1_MIN : 0);
    }
    if (need <= rest) return CS_OK;
    char msg[300];
    snprintf(msg, sizeof msg, "the records of %llu cases of %llu classes take at least %llu"
             " bytes, but %llu bytes follow the case lines (a truncated file?)",
             (unsigned long long)h->n, (unsigned long long)h->k, (unsigned long long)need,
             (unsigned long long)rest);
    r->line = 6;
    return bad(r, 2, msg);
}

/* The object for the header, its case arrays moved in from h. */
static cs_segstats *head_to_stats(head *h)
{
    cs_segstats *st = cs_segstats_new((int)h->fine, h->kind, (size_t)h->k,
                                      (const char *const *)h->names, h->mapping, (size_t)h->n);
    if (!st) return NULL;
    free(st->case_names);
    free(st->probs_in);
    free(st->labels_in);
    free(st->voxels);
    st->case_names = h->case_names;
    st->probs_in = h->probs_in;
    st->labels_in = h->labels_in;
    st->voxels = h->voxels;
    h->case_names = NULL;
    h->probs_in = h->labels_in = NULL;
    h->voxels = NULL;
    h->n = 0;
    return st;
}

/* The header through the case lines; creates *out. case_line[c] gets each case's line. */
static cs_status read_header(reader *r, cs_segstats **out, long **case_line)
{
    head h = {0};
    cs_status s = read_classes(r, &h);
    if (!s) s = read_case_count(r, &h);
    if (!s && !(*case_line = malloc((h.n ? h.n : 1) * sizeof **case_line))) s = nomem(r);
    if (!s) s = read_case_lines(r, &h, *case_line);
    if (!s) s = check_records_fit(r, &h);
    if (!s && !(*out = head_to_stats(&h))) s = nomem(r);
    head_free(&h);
    return s;
}

static cs_status wrong_fields(reader *r, size_t want)
{
    char msg[96];
    snprintf(msg, sizeof msg, "a '%c' record has %zu fields, found %zu", r->f[0].p[0], want, r->nf);
    return bad(r, 1, msg);
}

/* The most one voxel adds to an NLL sum: -ln of the clip 1e-15 (reduce/case.c). */
#define NLL_VOXEL_MAX 34.538776394910684

/* Slack for the rounding of a sum of many doubles: a sum of n values each in [lo, hi] lands
 * within n·2^-53 of [n·lo, n·hi] relatively; 1e-6 covers 10^9 voxels with room to spare, and
 * an edited or damaged value is off by far more. */
#define SUM_SLACK 1e-6

/* 1 when `sum` is what `n` values in fine bin i — (i/F, (i+1)/F], 0 in bin 0 — add up to. */
static int sum_fits_bin(double sum, uint64_t n, size_t i, int fine)
{
    double lo = (double)n * cs_ubin_edge((int)i, fine);
    double hi = (double)n * cs_ubin_edge((int)i + 1, fine);
    return sum >= lo * (1 - SUM_SLACK) && sum <= hi * (1 + SUM_SLACK);
}

static cs_status bad_bin_sum(reader *r, size_t col, double sum, uint64_t n, size_t i, int fine)
{
    char msg[200];
    snprintf(msg, sizeof msg, "sum %.17g is not what %llu values in fine bin %zu (%.17g, %.17g]"
             " add up to", sum, (unsigned long long)n, i, cs_ubin_edge((int)i, fine),
             cs_ubin_edge((int)i + 1, fine));
    return bad(r, col, msg);
}

/* The most an 's' record's sums can be for a case of `voxels` voxels: each voxel adds at most
 * 1 to SQ (p and y in [0, 1]) and NLL_VOXEL_MAX to an NLL sum. */
static double score_max(int nll, uint64_t voxels)
{
    return (double)voxels * (nll ? NLL_VOXEL_MAX : 1) * (1 + SUM_SLACK);
}

static cs_status read_bin(reader *r, cs_segstats *st, int top1)
{
    size_t want = top1 ? 6 : 7, col = 2, c, j = 0, i;
    if (r->nf != want) return wrong_fields(r, want);
    if (top1 && !st->t_cnt)
        return bad(r, 1, "a top-1 record in a regions file (top-1 is undefined for independent"
                   " sigmoid regions)");
    cs_status s;
    if ((s = get_index(r, col++, st->n_cases, "case", &c))) return s;
    if (!top1 && (s = get_index(r, col++, st->k, "class", &j))) return s;
    if ((s = get_index(r, col++, (uint64_t)st->fine, "bin", &i))) return s;
    size_t x = top1 ? cs_segstats_ti(st, c, i) : cs_segstats_ci(st, c, j, i);
    uint64_t *cnt = top1 ? st->t_cnt : st->cnt, *sy = top1 ? st->t_sum_correct : st->sum_y;
    double *sp = top1 ? st->t_sum_conf : st->sum_p;
    if (cnt[x]) return bad(r, 1, "a second record for the same case, class and bin");
    uint64_t n, y;
    if ((s = get_count(r, col, &n))) return s;
    if (n == 0) return bad(r, col, "a bin record with count 0 (only non-empty bins are written)");
    if ((s = get_sum(r, col + 1, (double)n, &sp[x])) || (s = get_count(r, col + 2, &y))) return s;
    if (y > n) return bad_field(r, col + 2, "exceeds the bin's count");
    if (!sum_fits_bin(sp[x], n, i, st->fine)) return bad_bin_sum(r, col + 1, sp[x], n, i, st->fine);
    cnt[x] = n;
    sy[x] = y;
    return CS_OK;
}

static cs_status read_scores(reader *r, cs_segstats *st, uint8_t *seen)
{
    if (r->nf != 6) return wrong_fields(r, 6);
    size_t c, j;
    cs_status s;
    if ((s = get_index(r, 2, st->n_cases, "case", &c)) || (s = get_index(r, 3, st->k, "class", &j)))
        return s;
    size_t x = c * st->k + j;
    if (seen[x]) return bad(r, 1, "a second scores record for the same case and class");
    seen[x] = 1;
    double *dst[3] = { &st->sq_err[x], &st->nll_pos[x], &st->nll_neg[x] };
    for (int v = 0; v < 3; v++) {
        if ((s = get_sum(r, 4 + (size_t)v, HUGE_VAL, dst[v]))) return s;
        if (*dst[v] > score_max(v > 0, st->voxels[c])) {
            char msg[300];
            snprintf(msg, sizeof msg, "%s %.17g is more than the case's %llu voxels can give (at"
                     " most %s each)", v == 0 ? "SQ" : v == 1 ? "NLL_POS" : "NLL_NEG", *dst[v],
                     (unsigned long long)st->voxels[c], v ? "-ln 1e-15 = 34.5388" : "1");
            return bad(r, 4 + (size_t)v, msg);
        }
    }
    return CS_OK;
}

/* A refusal about case c, at its case line. */
static cs_status case_fault(reader *r, const cs_segstats *st, size_t c, const long *case_line,
                            size_t col, const char *what)
{
    char msg[1000];
    snprintf(msg, sizeof msg, "case '%.200s': %.700s", st->case_names[c], what);
    r->line = case_line[c];
    return bad(r, col, msg);
}

/* The voxels of case c in the bins of class j (j == k: top-1), and (*labelled, a class) how
 * many of them have the class. */
static uint64_t bin_total(const cs_segstats *st, size_t c, size_t j, uint64_t *labelled)
{
    uint64_t sum = 0, y = 0;
    for (size_t i = 0; i < (size_t)st->fine; i++) {
        if (j == st->k) {
            sum += st->t_cnt[cs_segstats_ti(st, c, i)];
            continue;
        }
        size_t x = cs_segstats_ci(st, c, j, i);
        sum += st->cnt[x];
        y += st->sum_y[x];
    }
    *labelled = y;
    return sum;
}

/* The bin counts of class j (j == k: top-1) of case c add up to its voxels: a truncated or
 * spliced file fails here rather than giving smaller numbers. */
static cs_status check_total(reader *r, const cs_segstats *st, size_t c, size_t j, uint64_t sum,
                             const long *case_line)
{
    if (sum == st->voxels[c]) return CS_OK;
    char what[200], msg[600];
    if (j == st->k) snprintf(what, sizeof what, "the top-1");
    else snprintf(what, sizeof what, "the class '%.100s'", st->class_names[j]);
    snprintf(msg, sizeof msg, "%s bin counts add up to %llu, not the case's %llu voxels (a"
             " truncated or edited file?)", what, (unsigned long long)sum,
             (unsigned long long)st->voxels[c]);
    return case_fault(r, st, c, case_line, 4, msg);
}

/* Class j's NLL sums of case c against its own voxels: NLL_POS comes from the `y` labelled
 * with the class, NLL_NEG from the other voxels - y, each at most -ln 1e-15 a voxel. */
static cs_status check_nll(reader *r, const cs_segstats *st, size_t c, size_t j, uint64_t y,
                           const long *case_line)
{
    size_t x = c * st->k + j;
    uint64_t other = st->voxels[c] - y;
    int pos = st->nll_pos[x] > score_max(1, y);
    if (!pos && !(st->nll_neg[x] > score_max(1, other))) return CS_OK;
    char what[500];
    snprintf(what, sizeof what, "class '%.100s': its 's' record's %s %.17g is more than %.17g,"
             " what its %llu voxels %s class '%.100s' can give", st->class_names[j],
             pos ? "NLL_POS" : "NLL_NEG", pos ? st->nll_pos[x] : st->nll_neg[x],
             (double)(pos ? y : other) * NLL_VOXEL_MAX, (unsigned long long)(pos ? y : other),
             pos ? "of" : "not of", st->class_names[j]);
    return case_fault(r, st, c, case_line, 1, what);
}

/* Case c has its K 's' records. */
static cs_status check_scores_present(reader *r, const cs_segstats *st, size_t c,
                                      const uint8_t *seen, const long *case_line)
{
    for (size_t j = 0; j < st->k; j++)
        if (!seen[c * st->k + j]) {
            char what[300];
            snprintf(what, sizeof what, "no 's' record for class '%.100s' (every case has one"
                     " per class: a truncated or edited file?)", st->class_names[j]);
            return case_fault(r, st, c, case_line, 1, what);
        }
    return CS_OK;
}

/* Every case is complete: it has its K 's' records, each class's (and top-1's) counts add up to
 * its voxels, its NLL sums are what its voxels can give, and (softmax) every voxel is labelled
 * with exactly one class. */
static cs_status check_cases(reader *r, const cs_segstats *st, const uint8_t *seen,
                             const long *case_line)
{
    cs_status s;
    for (size_t c = 0; c < st->n_cases; c++) {
        if ((s = check_scores_present(r, st, c, seen, case_line))) return s;
        uint64_t labelled = 0, y;
        for (size_t j = 0; j < st->k; j++) {
            if ((s = check_total(r, st, c, j, bin_total(st, c, j, &y), case_line)) ||
                (s = check_nll(r, st, c, j, y, case_line)))
                return s;
            labelled += y;
        }
        if (st->t_cnt && (s = check_total(r, st, c, st->k, bin_total(st, c, st->k, &y), case_line)))
            return s;
        if (st->t_cnt && labelled != st->voxels[c]) {
            char what[300];
            snprintf(what, sizeof what, "its classes' labelled voxels add up to %llu, not its %llu"
                     " voxels (each voxel has one class: an edited file?)",
                     (unsigned long long)labelled, (unsigned long long)st->voxels[c]);
            return case_fault(r, st, c, case_line, 4, what);
        }
    }
    return CS_OK;
}

/* ---- the fast path of the bulk records ----------------------------------------------------
 * A `c` or `t` record as the writer spells it (plain digits, no quotes; LF, or CRLF as a
 * file edited elsewhere has them, which next_line takes the same way) is parsed
 * in one pass over its bytes, straight into the arrays. Anything else — including every
 * refusal — returns 0 before changing anything, and the line goes through the general path
 * (next_line + the checked field readers), which accepts or refuses it with its message. */

/* 1..19 digits at *pp, then the byte `end` (consumed) or, for the last field of a line, the
 * end of the input. */
static inline int fast_u64(const char **pp, const char *lim, char end, uint64_t *v)
{
    const char *p = *pp, *s = p;
    uint64_t x = 0;
    while (p < lim && (unsigned)(*p - '0') <= 9) {
        x = x * 10 + (unsigned)(*p - '0');
        p++;
    }
    if (p == s || p - s > 19) return 0;
    if (end == '\n' && lim - p >= 2 && p[0] == '\r' && p[1] == '\n') p++;   /* CRLF, as next_line */
    if (p < lim ? *p != end : end != '\n') return 0;
    *v = x;
    *pp = p + 1;
    return 1;
}

/* The records of cases [clo, chi) from buf[*pos] up to buf[end] (a line start or the end of the
 * input), and the scores records' seen flags. */
typedef struct span {
    const char *buf;
    size_t pos, end;
    size_t clo, chi;
    uint8_t *seen;
} span;

/* A finite non-negative double at *pp ending with `end` (consumed; '\n' also matches the end
 * of the input). The number is parsed where it stands, its end found by its grammar: a field
 * that holds more than a number stops before `end` and is not taken. */
static int fast_sum(const char **pp, const char *lim, char end, double *v)
{
    const char *p = *pp;
    size_t n = cs_load_parse_double_prefix(p, (size_t)(lim - p), v);
    if (n == 0 || !(*v >= 0)) return 0;
    p += n;
    if (end == '\n' && lim - p >= 2 && p[0] == '\r' && p[1] == '\n') p++;   /* CRLF, as next_line */
    if (p < lim ? *p != end : end != '\n') return 0;
    *pp = p + 1;
    return 1;
}

/* A c or t record at sp->pos of a case in [clo, chi), as fast_u64 describes; 1 when taken. */
static int fast_bin(span *sp, cs_segstats *st)
{
    const char *p = sp->buf + sp->pos, *lim = sp->buf + sp->end;
    if (lim - p < 2 || (p[0] != 'c' && p[0] != 't') || p[1] != ',') return 0;
    int top1 = p[0] == 't';
    if (top1 && !st->t_cnt) return 0;
    p += 2;
    uint64_t c, j = 0, i, n, y;
    if (!fast_u64(&p, lim, ',', &c) || c < sp->clo || c >= sp->chi) return 0;
    if (!top1 && (!fast_u64(&p, lim, ',', &j) || j >= st->k)) return 0;
    if (!fast_u64(&p, lim, ',', &i) || i >= (uint64_t)st->fine) return 0;
    if (!fast_u64(&p, lim, ',', &n) || n == 0) return 0;
    double sum;
    if (!fast_sum(&p, lim, ',', &sum) || sum > (double)n) return 0;
    if (!fast_u64(&p, lim, '\n', &y) || y > n || !sum_fits_bin(sum, n, i, st->fine)) return 0;
    size_t x = top1 ? cs_segstats_ti(st, c, i) : cs_segstats_ci(st, c, j, i);
    uint64_t *cnt = top1 ? st->t_cnt : st->cnt;
    if (cnt[x]) return 0;
    cnt[x] = n;
    (top1 ? st->t_sum_conf : st->sum_p)[x] = sum;
    (top1 ? st->t_sum_correct : st->sum_y)[x] = y;
    sp->pos = (size_t)(p - sp->buf);
    return 1;
}

/* An s record at sp->pos of a case in [clo, chi), as read_scores accepts it; 1 when taken. */
static int fast_scores(span *sp, cs_segstats *st)
{
    const char *p = sp->buf + sp->pos, *lim = sp->buf + sp->end;
    if (lim - p < 2 || p[0] != 's' || p[1] != ',') return 0;
    p += 2;
    uint64_t c, j;
    double v[3];
    if (!fast_u64(&p, lim, ',', &c) || c < sp->clo || c >= sp->chi) return 0;
    if (!fast_u64(&p, lim, ',', &j) || j >= st->k) return 0;
    if (!fast_sum(&p, lim, ',', &v[0]) || !fast_sum(&p, lim, ',', &v[1]) || !fast_sum(&p, lim, '\n', &v[2]))
        return 0;
    if (v[0] > score_max(0, st->voxels[c]) || v[1] > score_max(1, st->voxels[c]) ||
        v[2] > score_max(1, st->voxels[c]))
        return 0;
    size_t x = c * st->k + j;
    if (sp->seen[x]) return 0;
    sp->seen[x] = 1;
    st->sq_err[x] = v[0];
    st->nll_pos[x] = v[1];
    st->nll_neg[x] = v[2];
    sp->pos = (size_t)(p - sp->buf);
    return 1;
}

/* Maps the pages of bytes [p, p + n) writable now (MADV_POPULATE_WRITE, Linux 5.14; elsewhere
 * a no-op). The sums are calloc'd fresh pages and a record reads its bin before writing it
 * (the duplicate check): without this, that read maps the shared zero page and the write then
 * faults a second time to replace it, which with two threads also flushes the other core's
 * TLB (an interprocessor interrupt per page: 4 % of opening a 200-case file). */
static void prefault(void *p, size_t n)
{
#ifdef MADV_POPULATE_WRITE
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), a = (uintptr_t)p, b = a + n;
    a = (a + page - 1) / page * page;   /* whole pages inside the range: the edges fault as usual */
    b = b / page * page;
    if (b > a) (void)madvise((void *)a, b - a, MADV_POPULATE_WRITE);
#else
    (void)p; (void)n;
#endif
}

/* prefault of the bin sums of cases [clo, chi). */
static void prefault_cases(const cs_segstats *st, size_t clo, size_t chi)
{
    size_t kf = st->k * (size_t)st->fine, f = (size_t)st->fine, nc = chi - clo;
    prefault(st->cnt + clo * kf, nc * kf * sizeof *st->cnt);
    prefault(st->sum_p + clo * kf, nc * kf * sizeof *st->sum_p);
    prefault(st->sum_y + clo * kf, nc * kf * sizeof *st->sum_y);
    if (!st->t_cnt) return;
    prefault(st->t_cnt + clo * f, nc * f * sizeof *st->t_cnt);
    prefault(st->t_sum_conf + clo * f, nc * f * sizeof *st->t_sum_conf);
    prefault(st->t_sum_correct + clo * f, nc * f * sizeof *st->t_sum_correct);
}

/* 1 when the records fill the sum arrays well enough to map them all in at once: a record of
 * ~30 bytes fills 24 bytes of them, so records of at least a quarter of the arrays' bytes (a
 * file as reduce writes it of real volumes) are. A file whose records fill less gets its
 * pages as records arrive, so its memory follows what it holds, not what it declares. */
static int well_filled(const reader *r, const cs_segstats *st)
{
    double cells = (double)st->n_cases * (double)(st->k + 1) * st->fine;
    return (double)(r->len - r->pos) * 4 >= cells * 24;
}

/* Fast records from sp->pos while they come; returns how many (lines) were taken. */
static long fast_run(span *sp, cs_segstats *st)
{
    long n = 0;
    while (sp->pos < sp->end && (fast_bin(sp, st) || fast_scores(sp, st)))
        if ((++n & 4095) == 0 && cs_load_map_check(sp->buf + sp->pos)) break;
    return n;
}

/* ---- two threads ---------------------------------------------------------------------------- */

/* Below this many bytes of records one thread reads them (a thread costs more than it saves). */
#define PARALLEL_MIN ((size_t)1 << 20)

typedef struct half {
    span sp;
    cs_segstats *st;
    int populate;   /* prefault the half's sums (well_filled) */
} half;

static void *half_main(void *arg)
{
    half *h = arg;
    if (h->populate) prefault_cases(h->st, h->sp.clo, h->sp.chi);
    fast_run(&h->sp, h->st);
    return NULL;
}

/* The case number of the record line at p (c, t or s), or -1. */
static long long line_case(const char *p, const char *lim)
{
    if (lim - p < 3 || (p[0] != 'c' && p[0] != 't' && p[0] != 's') || p[1] != ',') return -1;
    p += 2;
    uint64_t c;
    return fast_u64(&p, lim, ',', &c) && c <= (uint64_t)LLONG_MAX ? (long long)c : -1;
}

/* Splits the records at the first line after their middle whose case differs from the line
 * before it, reads both blocks at once, and returns 1 when both were read to their end (the
 * file is read), 0 when a line stopped either (the arrays hold partial sums: the caller zeroes
 * them and reads on one thread), -1 when it did not try (one CPU, a small file, no split). */
static int read_parallel(reader *r, cs_segstats *st, uint8_t *seen, int populate)
{
    const char *b = r->buf, *lim = b + r->len;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus < 2 || r->pos >= r->len || r->len - r->pos < PARALLEL_MIN) return -1;
    const char *m = memchr(b + r->pos + (r->len - r->pos) / 2, '\n', (size_t)(lim - b) - r->pos - (r->len - r->pos) / 2);
    if (!m) return -1;
    long long prev = -2;
    const char *cut = NULL;
    for (const char *p = m + 1; p < lim;) {
        long long c = line_case(p, lim);
        if (c < 0) return -1;
        if (prev >= 0 && c != prev) { cut = p; break; }
        prev = c;
        const char *nl = memchr(p, '\n', (size_t)(lim - p));
        if (!nl) return -1;
        p = nl + 1;
    }
    if (!cut) return -1;
    size_t split = (size_t)(cut - b), cs = (size_t)line_case(cut, lim);
    if (cs >= st->n_cases) return -1;
    half hi = { { b, split, r->len, cs, st->n_cases, seen }, st, populate };
    pthread_t t;
    if (!cs_helper_start(&t, half_main, &hi)) return -1;
    span lo = { b, r->pos, split, 0, cs, seen };
    if (populate) prefault_cases(st, 0, cs);
    fast_run(&lo, st);
    pthread_join(t, NULL);
    if (lo.pos == lo.end && hi.sp.pos == hi.sp.end) {
        r->pos = r->len;
        return 1;
    }
    return 0;
}

cs_status cs_segstats_read(const char *path, cs_segstats **out, cs_error *err)
{
    return cs_segstats_read_within(path, TEXT_MAX, out, err);
}

/* The text r->buf[0..r->len) parsed into *out (NULL on an error); frees what the parse made
 * but not the buffer. */
static cs_status parse_text(reader *r, cs_segstats **out)
{
    const char *path = r->path;
    cs_error *err = r->err;
    cs_segstats *st = NULL;
    long *case_line = NULL;
    uint8_t *seen = NULL;
    cs_status s = read_header(r, &st, &case_line);
    if (!s) {
        seen = calloc(st->n_cases * st->k + 1, 1);
        if (!seen) s = cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", path);
    }
    size_t first = r->pos;
    long first_line = r->line;
    int populate = !s && well_filled(r, st);
    if (!s && !populate) cs_segstats_advise_sparse(st);
    int par = s ? -1 : read_parallel(r, st, seen, populate);
    if (par == -1 && populate) prefault_cases(st, 0, st->n_cases);
    if (par == 0) {
        /* back to one thread from the first record, as if the two had never run */
        if (cs_segstats_zero_sums(st))
            s = cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", path);
        else if (!populate) cs_segstats_advise_sparse(st);
        memset(seen, 0, st->n_cases * st->k + 1);
        r->pos = first;
        r->line = first_line;
    }
    span one = { r->buf, r->pos, r->len, 0, st ? st->n_cases : 0, seen };
    while (!s && par != 1) {
        one.pos = r->pos;
        long n = fast_run(&one, st);
        r->pos = one.pos;
        r->line += n;
        int got = next_line(r);
        if (got == 0) break;
        if (got < 0) { s = err->code; break; }
        const field *f = &r->f[0];
        if (f->len == 1 && f->p[0] == 'c') s = read_bin(r, st, 0);
        else if (f->len == 1 && f->p[0] == 't') s = read_bin(r, st, 1);
        else if (f->len == 1 && f->p[0] == 's') s = read_scores(r, st, seen);
        else s = bad_field(r, 1, "is not a record type (c, t or s)");
    }
    if (!s) s = check_cases(r, st, seen, case_line);
    free(seen);
    free(case_line);
    free(r->f);
    r->f = NULL;
    if (s) {
        cs_segstats_free(st);
        st = NULL;
    }
    *out = st;
    return s;
}

cs_status cs_segstats_read_within(const char *path, uint64_t text_max, cs_segstats **out,
                                  cs_error *err)
{
    *out = NULL;
    reader r = {.path = path, .err = err};
    input in;
    cs_status s = slurp(path, text_max, &r.buf, &r.len, &in, err);
    if (s) return read_end(path, &in, NULL, s, err);
    cs_segstats *st = NULL;
    s = parse_text(&r, &st);
    s = read_end(path, &in, r.buf, s, err);
    if (s) {
        cs_segstats_free(st);
        return s;
    }
    *out = st;
    return CS_OK;
}

cs_status cs_segstats_parse_text(const char *path, char *text, size_t len, cs_segstats **out,
                                 cs_error *err)
{
    reader r = {.path = path, .buf = text, .len = len, .err = err};
    cs_status s = parse_text(&r, out);
    free(text);
    return s;
}

int cs_segstats_magic(const void *bytes, size_t n)
{
    return n >= sizeof MAGIC - 1 && memcmp(bytes, MAGIC, sizeof MAGIC - 1) == 0;
}

int cs_segstats_sniff(const char *path)
{
    if (strcmp(path, "-") == 0) return 0;
    char first[sizeof MAGIC];
    size_t got = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    got = fread(first, 1, sizeof MAGIC - 1, f);
    fclose(f);
    if (got >= 2 && (unsigned char)first[0] == 0x1f && (unsigned char)first[1] == 0x8b) {
        cs_gz *g = cs_gz_open(path);
        const char *why;
        /* the first line decides, whatever a corruption further on (the reader reports it) */
        if (!g || cs_gz_read(g, first, sizeof MAGIC - 1, &got, &why) == -2) got = 0;
        cs_gz_close(g);
    }
    return cs_segstats_magic(first, got);
}
