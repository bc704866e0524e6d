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
#include <unistd.h>

#include "engine/gz/gz.h"
#include "engine/pair.h"

/* The compressed bytes a MiB at a time from the memory source (a mapped file: its pages are
 * dropped behind, and a file that shrank is refused by the libcsv path the caller falls back
 * to). */
static int pull_src(void *ctx, const void **p, size_t *n)
{
    return cs_load_src_next(ctx, p, n);
}

/* Inflated text: the carried partial line, then the newest step. */
typedef struct gz_text {
    char *buf;
    size_t len, cap;
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

/* One load's reading: the stream, the fast reader and the two texts (text[cur] is read while
 * the other takes the next step, the two swapped each step). */
typedef struct gz_reader {
    const char *name;
    const cs_load_options *opt;
    const csl_limits *lim;
    cs_gz *g;
    csl_src *src;
    csl_fast_stream *fs;
    size_t len, step, total;     /* compressed bytes, the step, text inflated so far */
    gz_text text[2];
    int cur;
    int header;                  /* the header has gone to the fast reader */
    int parallel;                /* the next step is inflated on a helper while text[cur] parses */
    size_t held;                 /* the most bytes of both texts at once */
} gz_reader;

/* A job of one step: the parse of the whole lines of a text (inf NULL), or the inflation of
 * the next step into the other text (run side by side by cs_run_pair: disjoint buffers; the
 * stream and its source are the inflation's alone until it is joined). */
typedef struct inflate_job {
    cs_gz *g;
    char *dst;
    size_t step, got;
    int rc;
} inflate_job;

typedef struct step_job {
    inflate_job *inf;
    csl_fast_stream *fs;
    const char *data;
    size_t len, avail;
    cs_status *st;
    cs_error *err;
    int r;
} step_job;

static void *run_step(void *arg)
{
    step_job *j = arg;
    if (j->inf) {
        const char *why = NULL;
        j->inf->rc = cs_gz_read(j->inf->g, j->inf->dst, j->inf->step, &j->inf->got, &why);
    } else {
        j->r = cs_load_fast_stream_feed(j->fs, j->data, j->len, j->avail, j->st, j->err);
    }
    return NULL;
}

/* Makes room for a step after text t's bytes and points the job at it. Returns 0 or -1. */
static int aim(gz_reader *rd, gz_text *t, inflate_job *inf)
{
    if (reserve(t, rd->step) != 0) return -1;
    size_t both = rd->text[0].cap + rd->text[1].cap;
    if (both > rd->held) rd->held = both;
    inf->dst = t->buf + t->len;
    return 0;
}

/* The step the job inflated, taken into text t: CSL_MORE, or CSL_BAIL for a fault of the
 * stream (corrupt, cut, trailing bytes, a read error), a quote or a stream of no text; *eof. */
static int take_step(gz_reader *rd, gz_text *t, const inflate_job *inf, int *eof)
{
    if (inf->rc != 0) return CSL_BAIL;
    *eof = inf->got < rd->step;
    if (*eof && (!cs_gz_finished(rd->g) || cs_gz_trailing(rd->g))) return CSL_BAIL;
    if (memchr(t->buf + t->len, '"', inf->got)) return CSL_BAIL;
    t->len += inf->got;
    rd->total += inf->got;
    return *eof && rd->total == 0 ? CSL_BAIL : CSL_MORE;
}

/* Whether the text now holds the end of the header: 1 yes, 0 not yet, -1 never (the header is
 * refused: the libcsv path words it). Scanned, past a BOM as the fast reader does, only when
 * the newest bytes bring an LF or the header limit or the end is reached. */
static int header_found(const gz_reader *rd, const gz_text *t, size_t got, int eof, size_t *extent)
{
    if (!memchr(t->buf + t->len - got, '\n', got) && !eof && t->len < rd->lim->header) return 0;
    size_t bom = t->len >= 3 && memcmp(t->buf, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    cs_error scratch;
    cs_error_clear(&scratch);
    int h = cs_load_header_scan(rd->name, t->buf + bom, t->len - bom, eof, rd->opt, rd->lim,
                                extent, &scratch);
    *extent += bom;
    return h == CSL_HEAD_BAD ? -1 : h == CSL_HEAD_OK;
}

/* Where the whole lines of the text end (*end: all of it at the end; 0: none yet), once the
 * header is in it: CSL_MORE with *end, CSL_AGAIN while the header is still to come (more text
 * is needed), or CSL_BAIL (a header the fast reader refuses or that ends with a lone CR). */
static int whole_lines(gz_reader *rd, const gz_text *t, size_t got, int eof, size_t *end)
{
    size_t extent = 0;
    if (!rd->header) {
        int h = header_found(rd, t, got, eof, &extent);
        if (h < 0) return CSL_BAIL;
        if (h == 0) return CSL_AGAIN;
        got = t->len;     /* the header has all its lines here: the first piece holds it whole */
    }
    *end = eof ? t->len : lines_end(t, got);
    if (!rd->header && extent > *end) return CSL_BAIL;
    rd->header = 1;
    return CSL_MORE;
}

/* A partial line past the longest the fast reader takes (or CSL_GZ_LINE_MAX): 1. */
static int line_too_long(const gz_reader *rd, size_t carry)
{
    size_t line_max = cs_load_fast_stream_line_max(rd->fs);
    return carry > CSL_GZ_LINE_MAX || (line_max && carry > line_max);
}

/* The lines of text t up to `end` parsed while the next step is inflated into the other text,
 * which starts with t's partial last line. Returns the parse's CSL_MORE, CSL_DONE or CSL_BAIL
 * (also out of memory, or a partial line past its bound); text[cur] is then the other. */
static int parse_and_inflate(gz_reader *rd, gz_text *t, size_t end, inflate_job *inf,
                             cs_status *st, cs_error *err)
{
    gz_text *next = &rd->text[!rd->cur];
    size_t carry = t->len - end;
    next->len = 0;
    if (reserve(next, carry + rd->step) != 0) return CSL_BAIL;
    memcpy(next->buf, t->buf + end, carry);
    next->len = carry;
    if (aim(rd, next, inf) != 0) return CSL_BAIL;
    step_job parse = { NULL, rd->fs, t->buf, end, t->len, st, err, CSL_MORE };
    step_job inflate = { inf, NULL, NULL, 0, 0, NULL, NULL, CSL_MORE };
    cs_run_pair(run_step, &parse, &inflate, rd->parallel);
    rd->cur = !rd->cur;
    if (parse.r != CSL_MORE) return parse.r;
    return line_too_long(rd, carry) ? CSL_BAIL : CSL_MORE;
}

/* The stream read step by step into the fast reader: CSL_DONE or CSL_BAIL (see
 * cs_load_gz_stream). */
static int read_steps(gz_reader *rd, cs_status *st, cs_error *err)
{
    csl_progress pr = { .opt = rd->opt, .total = rd->len };
    inflate_job inf = { rd->g, NULL, rd->step, 0, 0 };
    if (aim(rd, &rd->text[rd->cur], &inf) != 0) return CSL_BAIL;
    run_step(&(step_job){ .inf = &inf });
    for (;;) {
        gz_text *t = &rd->text[rd->cur];
        int eof = 0, r = take_step(rd, t, &inf, &eof);
        if (r != CSL_MORE) return r;
        if (cs_load_tick(&pr, cs_load_src_consumed(rd->src))) {
            *st = cs_error_set(err, CS_ECANCELLED, 0, 0, "%s: loading cancelled", rd->name);
            return CSL_DONE;
        }
        size_t end = 0;
        if ((r = whole_lines(rd, t, inf.got, eof, &end)) == CSL_BAIL) return r;
        if (eof) {                                 /* the rest, the last piece */
            r = cs_load_fast_stream_feed(rd->fs, t->buf, t->len, t->len, st, err);
            return r == CSL_MORE ? CSL_DONE : r;
        }
        if (r == CSL_AGAIN || end == 0) {          /* no whole line yet: inflate more after it */
            if ((r == CSL_MORE && line_too_long(rd, t->len)) || aim(rd, t, &inf) != 0) return CSL_BAIL;
            run_step(&(step_job){ .inf = &inf });
            continue;
        }
        if ((r = parse_and_inflate(rd, t, end, &inf, st, err)) != CSL_MORE) return r;
    }
}

/* Whether a helper may inflate beside the parse: a budget of more than one thread (0: the
 * online cores). */
static int parallel_budget(int threads)
{
    if (threads <= 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        threads = cpus > 0 ? (int)cpus : 1;
    }
    return threads > 1;
}

int cs_load_gz_stream(const char *name, const void *data, size_t len, int file_backed,
                      const cs_load_options *opt, const csl_limits *lim, size_t step, int scan,
                      int threads, csl_parsed *out, cs_status *st, cs_error *err, size_t *held)
{
    *st = CS_OK;
    memset(out, 0, sizeof *out);
    gz_reader rd;
    memset(&rd, 0, sizeof rd);
    rd.name = name;
    rd.opt = opt;
    rd.lim = lim;
    rd.len = len;
    rd.step = step ? step : CSL_GZ_STEP;
    rd.parallel = parallel_budget(threads);
    rd.src = cs_load_src_mem(data, len);
    if (rd.src && file_backed) cs_load_src_mem_drop_pages(rd.src);
    rd.g = rd.src ? cs_gz_open_pull(pull_src, rd.src, NULL, 0) : NULL;
    rd.fs = rd.g ? cs_load_fast_stream_new(name, opt, lim, scan, out) : NULL;
    int r = rd.fs ? read_steps(&rd, st, err) : CSL_BAIL;
    if (r == CSL_BAIL) cs_load_parsed_free(out);
    cs_load_fast_stream_free(rd.fs);
    cs_gz_close(rd.g);
    cs_load_src_free(rd.src);
    free(rd.text[0].buf);
    free(rd.text[1].buf);
    if (held) *held = rd.held;
    return r;
}
