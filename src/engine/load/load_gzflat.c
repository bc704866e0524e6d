/* A gzip'd CSV inflated whole into memory, so that the fast reader (load_fast.c) parses it as it
 * parses a mapped plain file: the same checks, messages and numbers, at the plain file's pace
 * instead of the libcsv path's (1.05 s of CPU against ~0.25 s for the 1M x 10 bench file).
 *
 * Holding the inflated bytes costs memory, so the inflation gives up (and the caller streams
 * the file through the libcsv path, as before) whenever the fast reader would give up anyway or
 * the bytes held would no longer follow the data kept:
 *   - a quote character (the fast reader takes no quoted field);
 *   - a header that does not end within the header limit, or holds a control byte;
 *   - a line longer than the header's fields could fill within the field limit (the longest
 *     line the fast reader takes), so a bomb of one endless field is never held;
 *   - more than CSL_GZ_HOLD_MAX bytes inflated;
 *   - any fault of the stream (corrupt, cut, trailing bytes, a read error), which the libcsv
 *     path then words at its place in the file, exactly as before;
 *   - a raised cancel flag (the libcsv path stops at once). */
#include "engine/load/load_internal.h"

#include <stdlib.h>
#include <string.h>

#include "engine/gz/gz.h"

typedef struct mem_pull {
    const unsigned char *data;
    size_t len, pos;
} mem_pull;

/* The compressed bytes a MiB at a time, checking the mapping (a file that shrank is refused by
 * the libcsv path the caller falls back to). */
static int pull_mem(void *ctx, const void **p, size_t *n)
{
    mem_pull *m = ctx;
    if (m->pos >= m->len) return 0;
    if (cs_load_map_check(m->data + m->pos)) return -1;
    size_t take = m->len - m->pos < ((size_t)1 << 20) ? m->len - m->pos : (size_t)1 << 20;
    *p = m->data + m->pos;
    *n = take;
    m->pos += take;
    return 1;
}

/* The inflated bytes so far and what the guards know of them. */
typedef struct flat {
    char *buf;
    size_t len, cap;
    size_t line_len;     /* bytes since the last LF */
    size_t line_max;     /* 0 until the header is found */
} flat;

/* Room for `more` bytes after len (doubling), or -1 past CSL_GZ_HOLD_MAX or out of memory. */
static int reserve(flat *f, size_t more)
{
    if (f->len + more > CSL_GZ_HOLD_MAX) return -1;
    if (f->len + more <= f->cap) return 0;
    size_t cap = f->cap ? f->cap : (size_t)1 << 20;
    while (cap < f->len + more) cap *= 2;
    if (cap > CSL_GZ_HOLD_MAX) cap = CSL_GZ_HOLD_MAX;
    char *nb = realloc(f->buf, cap);
    if (!nb) return -1;
    f->buf = nb;
    f->cap = cap;
    return 0;
}

/* The longest line the fast reader takes under this header (load_fast.c: (ncols + 2) x
 * (field + 1)), from an upper bound on its columns: every byte that may be the delimiter
 * (any of the sniffed ones, or the one given) counted. */
static size_t line_bound(const char *hdr, size_t n, const cs_load_options *opt, const csl_limits *lim)
{
    size_t seps = 0;
    for (size_t i = 0; i < n; i++) {
        char c = hdr[i];
        seps += c == ',' || c == ';' || c == '\t' || (opt->delimiter && c == opt->delimiter);
    }
    size_t cols = seps + 3;
    return cols <= SIZE_MAX / (lim->field + 1) ? cols * (lim->field + 1) : SIZE_MAX;
}

/* The last LF of b[0..n), or NULL (a short walk back: rows are short). */
static const char *last_lf(const char *b, size_t n)
{
    while (n > 0)
        if (b[--n] == '\n') return b + n;
    return NULL;
}

/* The guards on the newest `got` bytes at f->buf + f->len - got: 0 to go on, -1 to give up. */
static int check_block(const char *name, flat *f, size_t got, int eof, const cs_load_options *opt,
                       const csl_limits *lim)
{
    const char *b = f->buf + f->len - got;
    if (memchr(b, '"', got)) return -1;
    const char *lf = last_lf(b, got);
    f->line_len = lf ? (size_t)(b + got - lf - 1) : f->line_len + got;
    if (!f->line_max) {
        if (!lf && !eof && f->len < lim->header) return 0;
        size_t extent = 0;
        cs_error scratch;
        cs_error_clear(&scratch);
        int h = cs_load_header_scan(name, f->buf, f->len, eof, opt, lim, &extent, &scratch);
        if (h == CSL_HEAD_BAD) return -1;
        if (h == CSL_HEAD_MORE) return 0;
        f->line_max = line_bound(f->buf, extent, opt, lim);
    }
    return f->line_len > f->line_max ? -1 : 0;
}

/* The whole stream inflated into f, steps of `step` bytes. 0, or -1 when a guard gave up. */
static int inflate_all(const char *name, cs_gz *g, size_t step, const cs_load_options *opt,
                       const csl_limits *lim, flat *f)
{
    for (;;) {
        if (cs_load_cancelled(opt) || reserve(f, step) != 0) return -1;
        size_t got = 0;
        const char *why = NULL;
        if (cs_gz_read(g, f->buf + f->len, step, &got, &why) != 0) return -1;
        f->len += got;
        int eof = got < step;
        if (eof && (!cs_gz_finished(g) || cs_gz_trailing(g))) return -1;
        if (check_block(name, f, got, eof, opt, lim) != 0) return -1;
        if (eof) return 0;
    }
}

int cs_load_gz_flatten(const char *name, const void *data, size_t len, const cs_load_options *opt,
                       const csl_limits *lim, size_t step, char **out, size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    mem_pull m = { data, len, 0 };
    cs_gz *g = cs_gz_open_pull(pull_mem, &m, NULL, 0);
    if (!g) return 0;
    flat f = { NULL, 0, 0, 0, 0 };
    int r = inflate_all(name, g, step ? step : (size_t)1 << 20, opt, lim, &f);
    cs_gz_close(g);
    if (r != 0 || f.len == 0) {
        free(f.buf);
        return 0;
    }
    *out = f.buf;
    *out_len = f.len;
    return 1;
}
