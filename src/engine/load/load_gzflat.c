/* A gzip'd CSV read by the fast reader (load_fast.c) as it is inflated: the same checks,
 * messages and numbers as the plain file, at the plain file's pace plus the inflater's, instead
 * of the libcsv path's (1.05 s of CPU against ~0.25 s for the 1M x 10 bench file), and in the
 * memory of one step of text and one partial line besides the rows.
 *
 * Each step of inflated text is cut after its last LF: the whole lines go to the fast reader
 * (cs_load_fast_stream_feed), the partial last line is carried to the front of the buffer and
 * completed by the next step. The stream is given up on (the caller then streams the file
 * through the libcsv path, as from a pipe, which words whatever is wrong) whenever the fast
 * reader would give up on the whole text, and before the text held could outgrow its bound:
 *   - a quote character (the fast reader takes no quoted field);
 *   - a header that does not end within the header limit, or holds a control byte;
 *   - a partial line longer than the header's fields could fill within the field limit (the
 *     longest line the fast reader takes), so a bomb of one endless field is never held, or
 *     longer than CSL_GZ_LINE_MAX (a header of thousands of columns allows lines of gigabytes);
 *   - any fault of the stream (corrupt, cut, trailing bytes, a read error, a mapped file that
 *     shrank), which the libcsv path then words at its place in the file, exactly as before.
 * A cancel ends the load here ("loading cancelled", the words of both paths). */
#include "engine/load/load_internal.h"

#include <stdlib.h>
#include <string.h>

#include "engine/gz/gz.h"

/* The compressed bytes a MiB at a time from the memory source (a mapped file: its pages are
 * dropped behind, and a file that shrank is refused by the libcsv path the caller falls back
 * to). */
static int pull_src(void *ctx, const void **p, size_t *n)
{
    return cs_load_src_next(ctx, p, n);
}

/* The inflated text not yet read: the carried partial line, then the newest step. */
typedef struct gz_text {
    char *buf;
    size_t len, cap;
    size_t held;         /* the most bytes of buffer held at once */
    int header;          /* the header's end is in the text fed so far */
} gz_text;

/* Room for `more` bytes after len (doubling). Returns 0, or -1 out of memory. */
static int reserve(gz_text *t, size_t more)
{
    if (t->len + more <= t->cap) return 0;
    size_t cap = t->cap ? t->cap : more;
    while (cap < t->len + more) cap *= 2;
    char *nb = realloc(t->buf, cap);
    if (!nb) return -1;
    t->buf = nb;
    t->cap = cap;
    if (cap > t->held) t->held = cap;
    return 0;
}

/* The end of the text's whole lines: just past its last LF among the newest `got` bytes (the
 * carried line has none once the header is found), or 0 when they hold none. */
static size_t lines_end(const gz_text *t, size_t got)
{
    size_t n = t->len, stop = t->len - got;
    while (n > stop)
        if (t->buf[--n] == '\n') return n + 1;
    return 0;
}

/* Whether the text now holds the end of the header: 1 yes, 0 not yet, -1 never (the header is
 * refused: the libcsv path words it). Scanned, past a BOM as the fast reader does, only when
 * the newest bytes bring an LF or the header limit or the end is reached. */
static int header_found(const char *name, gz_text *t, size_t got, int eof,
                        const cs_load_options *opt, const csl_limits *lim, size_t *extent)
{
    if (!memchr(t->buf + t->len - got, '\n', got) && !eof && t->len < lim->header) return 0;
    size_t bom = t->len >= 3 && memcmp(t->buf, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    cs_error scratch;
    cs_error_clear(&scratch);
    int h = cs_load_header_scan(name, t->buf + bom, t->len - bom, eof, opt, lim, extent, &scratch);
    *extent += bom;
    return h == CSL_HEAD_BAD ? -1 : h == CSL_HEAD_OK;
}

/* Hands the text's whole lines (all of it at the end) to the fast reader and carries the
 * partial last line to the front. Returns CSL_MORE, CSL_DONE or CSL_BAIL (the fast reader's,
 * or a carried line past its bound). */
static int feed_lines(const char *name, gz_text *t, size_t got, int eof, csl_fast_stream *fs,
                      const cs_load_options *opt, const csl_limits *lim, cs_status *st,
                      cs_error *err)
{
    size_t extent = 0;
    if (!t->header) {
        int h = header_found(name, t, got, eof, opt, lim, &extent);
        if (h < 0) return CSL_BAIL;
        if (h == 0) return CSL_MORE;
        /* the header has all its lines here, so the first piece holds it whole */
        got = t->len;
    }
    size_t end = eof ? t->len : lines_end(t, got);
    if (!t->header && extent > end) return CSL_BAIL;   /* a header ended by a lone CR */
    t->header = 1;
    if (end) {
        int r = cs_load_fast_stream_feed(fs, t->buf, end, t->len, st, err);
        if (r != CSL_MORE) return r;
        memmove(t->buf, t->buf + end, t->len - end);
        t->len -= end;
    }
    size_t line_max = cs_load_fast_stream_line_max(fs);
    if (t->len > CSL_GZ_LINE_MAX || (line_max && t->len > line_max)) return CSL_BAIL;
    return eof ? CSL_DONE : CSL_MORE;
}

/* The stream read step by step into the fast reader: CSL_DONE or CSL_BAIL (see
 * cs_load_gz_stream). */
static int read_steps(const char *name, cs_gz *g, csl_src *src, size_t len, size_t step,
                      csl_fast_stream *fs, const cs_load_options *opt, const csl_limits *lim,
                      gz_text *t, cs_status *st, cs_error *err)
{
    csl_progress pr = { .opt = opt, .total = len };
    size_t total = 0;
    for (;;) {
        if (cs_load_tick(&pr, cs_load_src_consumed(src))) {
            *st = cs_error_set(err, CS_ECANCELLED, 0, 0, "%s: loading cancelled", name);
            return CSL_DONE;
        }
        if (reserve(t, step) != 0) return CSL_BAIL;
        size_t got = 0;
        const char *why = NULL;
        if (cs_gz_read(g, t->buf + t->len, step, &got, &why) != 0) return CSL_BAIL;
        int eof = got < step;
        if (eof && (!cs_gz_finished(g) || cs_gz_trailing(g))) return CSL_BAIL;
        if (memchr(t->buf + t->len, '"', got)) return CSL_BAIL;
        t->len += got;
        total += got;
        if (eof && total == 0) return CSL_BAIL;    /* no text: the libcsv path words it */
        int r = feed_lines(name, t, got, eof, fs, opt, lim, st, err);
        if (r != CSL_MORE) return r;
    }
}

int cs_load_gz_stream(const char *name, const void *data, size_t len, int file_backed,
                      const cs_load_options *opt, const csl_limits *lim, size_t step, int scan,
                      csl_parsed *out, cs_status *st, cs_error *err, size_t *held)
{
    *st = CS_OK;
    memset(out, 0, sizeof *out);
    gz_text t = { NULL, 0, 0, 0, 0 };
    csl_src *src = cs_load_src_mem(data, len);
    if (src && file_backed) cs_load_src_mem_drop_pages(src);
    cs_gz *g = src ? cs_gz_open_pull(pull_src, src, NULL, 0) : NULL;
    csl_fast_stream *fs = g ? cs_load_fast_stream_new(name, opt, lim, scan, out) : NULL;
    int r = fs ? read_steps(name, g, src, len, step ? step : CSL_GZ_STEP, fs, opt, lim, &t, st, err)
               : CSL_BAIL;
    if (r == CSL_BAIL) cs_load_parsed_free(out);
    cs_load_fast_stream_free(fs);
    cs_gz_close(g);
    cs_load_src_free(src);
    free(t.buf);
    if (held) *held = t.held;
    return r;
}
