/* Byte sources for the libcsv path: memory (a buffer or an mmap'd file), a file descriptor
 * (stdin, pipes) and a gzip decoder over either. Gzip is recognised by its magic bytes, never
 * by the file name. */
#include "engine/load/load_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "engine/gz/gz.h"

enum { SRC_MEM, SRC_FD, SRC_GZ };

struct csl_src {
    int kind;
    /* SRC_MEM */
    const unsigned char *mem;
    size_t len, pos;
    size_t page;              /* SRC_MEM over a file mapping: page size, 0 = keep every page */
    size_t dropped;           /* bytes of mem whose pages were dropped */
    /* SRC_FD */
    int fd;
    unsigned char *buf;       /* SRC_FD read buffer / SRC_GZ output buffer */
    size_t block;
    unsigned char *peek;      /* SRC_FD: bytes read ahead to look at the magic */
    size_t peek_len;
    size_t consumed;
    /* SRC_GZ */
    csl_src *inner;
    cs_gz *gz;                /* ISA-L's inflate over inner (engine/gz) */
    size_t filled;            /* bytes of buf the last inflate filled */
    int z_end;
    int pending_err;          /* an error found after some output: report it on the next call */
    /* cs_load_src_peek: the block (or end, or error) the next cs_load_src_next gives again */
    int replay, replay_r;
    const void *replay_p;
    size_t replay_n;
    char err[256];
    int nomem;
};

csl_src *cs_load_src_mem(const void *data, size_t len)
{
    csl_src *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->kind = SRC_MEM;
    s->mem = data;
    s->len = len;
    return s;
}

void cs_load_src_mem_drop_pages(csl_src *src)
{
    if (src->kind == SRC_MEM) src->page = (size_t)sysconf(_SC_PAGESIZE);
}

/* Everything before pos has been handed out and consumed (callers copy what they keep), so its
 * whole pages can go: they fault back in from the page cache if anything reads them again. */
static void mem_drop_consumed(csl_src *s)
{
    uintptr_t from = ((uintptr_t)s->mem + s->dropped + s->page - 1) & ~(uintptr_t)(s->page - 1);
    uintptr_t to = ((uintptr_t)s->mem + s->pos) & ~(uintptr_t)(s->page - 1);
    if (to > from) madvise((void *)from, (size_t)(to - from), MADV_DONTNEED);
    if (to > (uintptr_t)s->mem + s->dropped) s->dropped = (size_t)(to - (uintptr_t)s->mem);
}

csl_src *cs_load_src_fd(int fd, size_t block)
{
    csl_src *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->kind = SRC_FD;
    s->fd = fd;
    s->block = block ? block : (1u << 20);
    s->buf = malloc(s->block);
    if (!s->buf) { free(s); return NULL; }
    return s;
}

static ssize_t read_full(csl_src *s, unsigned char *buf, size_t cap)
{
    size_t got = 0;
    while (got < cap) {
        ssize_t r = read(s->fd, buf + got, cap - got);
        if (r < 0) {
            if (errno == EINTR) continue;
            snprintf(s->err, sizeof s->err, "read error: %s", strerror(errno));
            return -1;
        }
        if (r == 0) break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

static int raw_next(csl_src *s, const void **p, size_t *n)
{
    if (s->kind == SRC_MEM) {
        if (s->page) mem_drop_consumed(s);
        if (s->pos >= s->len) return 0;
        if (cs_load_map_check(s->mem + s->pos)) {   /* refused anyway: no need to read on */
            snprintf(s->err, sizeof s->err, "file changed while loading");
            return -1;
        }
        size_t b = s->block ? s->block : (1u << 20);
        size_t take = s->len - s->pos < b ? s->len - s->pos : b;
        *p = s->mem + s->pos;
        *n = take;
        s->pos += take;
        s->consumed += take;
        return 1;
    }
    if (s->peek_len) {
        *p = s->peek;
        *n = s->peek_len;
        s->peek_len = 0;
        return 1;
    }
    ssize_t r = read_full(s, s->buf, s->block);
    if (r < 0) return -1;
    if (r == 0) return 0;
    s->consumed += (size_t)r;
    *p = s->buf;
    *n = (size_t)r;
    return 1;
}

/* Inflate into s->buf (ISA-L); concatenated gzip members are read one after another (gzip(1)
 * does); bytes after the last member that start no member are refused, as is a stream cut short. */
static int gz_fill(csl_src *s, const void **p, size_t *n)
{
    if (s->z_end) return 0;
    const char *why = NULL;
    int r = cs_gz_read(s->gz, s->buf, s->block, &s->filled, &why);
    if (r == -2) {
        snprintf(s->err, sizeof s->err, "%s", cs_load_src_error(s->inner));
        return -1;
    }
    if (r == -1) {
        snprintf(s->err, sizeof s->err, "corrupt gzip data: %s", why);
        return -1;
    }
    if (s->filled < s->block) {
        if (!cs_gz_finished(s->gz)) {
            snprintf(s->err, sizeof s->err, "corrupt gzip data: truncated (unexpected end of file)");
            return -1;
        }
        if (cs_gz_trailing(s->gz)) {
            snprintf(s->err, sizeof s->err, "corrupt gzip data: trailing garbage after the"
                     " compressed stream");
            return -1;
        }
        s->z_end = 1;
        if (s->filled == 0) return 0;
    }
    *p = s->buf;
    *n = s->filled;
    return 1;
}

static int pull_inner(void *ctx, const void **p, size_t *n)
{
    return raw_next(ctx, p, n);
}

/* Bytes decoded before a corruption are handed out first, so the parser meets problems in file
 * order whatever the block size (a bad header before a bad gzip trailer is reported as such). */
static int gz_next(csl_src *s, const void **p, size_t *n)
{
    if (s->pending_err) return -1;
    int r = gz_fill(s, p, n);
    if (r < 0 && s->filled > 0) {
        s->pending_err = 1;
        *p = s->buf;
        *n = s->filled;
        return 1;
    }
    return r;
}

csl_src *cs_load_src_gunzip_if(csl_src *src, size_t block, int *gz)
{
    *gz = 0;
    unsigned char magic[2];
    size_t have = 0;
    if (src->kind == SRC_MEM) {
        have = src->len < 2 ? src->len : 2;
        memcpy(magic, src->mem, have);
    } else {
        /* read ahead once; the bytes are handed out first by raw_next */
        ssize_t r = read_full(src, src->buf, src->block);
        if (r < 0) return src;      /* the error resurfaces on the next read */
        src->consumed += (size_t)r;
        src->peek = src->buf;
        src->peek_len = (size_t)r;
        have = (size_t)r < 2 ? (size_t)r : 2;
        memcpy(magic, src->buf, have);
        if (r > 0 && (size_t)r < src->block) {
            /* keep the peeked bytes stable while later reads reuse buf */
            unsigned char *copy = malloc((size_t)r);
            if (!copy) { cs_load_src_free(src); return NULL; }
            memcpy(copy, src->buf, (size_t)r);
            src->peek = copy;
        } else if (r > 0) {
            unsigned char *nb = malloc(src->block);
            if (!nb) { cs_load_src_free(src); return NULL; }
            src->peek = src->buf;        /* hand the full block out, read into a new buffer */
            src->buf = nb;
        }
    }
    if (have < 2 || magic[0] != 0x1f || magic[1] != 0x8b) return src;

    csl_src *g = calloc(1, sizeof *g);
    if (!g) { cs_load_src_free(src); return NULL; }
    g->kind = SRC_GZ;
    g->inner = src;
    g->block = block ? block : (1u << 20);
    g->buf = malloc(g->block);
    /* a mapped file is there whole: a corruption is worded by zlib itself (engine/gz) */
    const void *whole = src->kind == SRC_MEM ? src->mem : NULL;
    if (!g->buf || !(g->gz = cs_gz_open_pull(pull_inner, src, whole, whole ? src->len : 0))) {
        free(g->buf);
        free(g);
        cs_load_src_free(src);
        return NULL;
    }
    *gz = 1;
    return g;
}

int cs_load_src_next(csl_src *src, const void **p, size_t *n)
{
    if (src->replay) {
        src->replay = 0;
        *p = src->replay_p;
        *n = src->replay_n;
        return src->replay_r;
    }
    return src->kind == SRC_GZ ? gz_next(src, p, n) : raw_next(src, p, n);
}

int cs_load_src_peek(csl_src *src, const void **p, size_t *n)
{
    if (!src->replay) {
        src->replay_p = NULL;
        src->replay_n = 0;
        src->replay_r = cs_load_src_next(src, &src->replay_p, &src->replay_n);
        src->replay = 1;
    }
    *p = src->replay_p;
    *n = src->replay_n;
    return src->replay_r;
}

const char *cs_load_src_error(const csl_src *src)
{
    return src->err[0] ? src->err : "read error";
}

int cs_load_src_nomem(const csl_src *src)
{
    return src->nomem;
}

size_t cs_load_src_consumed(const csl_src *src)
{
    return src->kind == SRC_GZ ? src->inner->consumed : src->consumed;
}

void cs_load_src_free(csl_src *src)
{
    if (!src) return;
    if (src->kind == SRC_GZ) {
        cs_gz_close(src->gz);
        cs_load_src_free(src->inner);
    }
    if (src->kind == SRC_FD && src->peek && src->peek != src->buf) free(src->peek);
    free(src->buf);
    free(src);
}
