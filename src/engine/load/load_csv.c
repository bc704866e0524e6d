/* The libcsv reference path: any source, any quoting.
 *
 * libcsv reports records, not lines, so physical lines are counted here: CSV_REPALL_NL makes
 * it report every unquoted CR and LF (a CR immediately followed by LF is one line end), and
 * newlines inside quoted fields are counted from the field text. A row's LINE is the line it
 * starts on. Callbacks cannot stop libcsv, so on a fatal error they set `fatal` and the feeding
 * loop stops.
 *
 * Memory stays bounded by what is kept: libcsv's field buffer may not grow past the field
 * limit (its realloc function refuses, and the refusal is reported as a located error), and a
 * record keeps at most one field more than the header has (the rest are only counted). */
#include "engine/load/load_internal.h"

#include <csv.h>
#include <stdlib.h>
#include <string.h>

typedef struct csv_state {
    const char *name;
    const cs_load_options *opt;
    const csl_limits *lim;
    csl_parsed *out;
    cs_error *err;
    /* current record */
    char *buf;
    size_t blen, bcap;
    size_t *off, *flen;
    size_t nf, fcap;      /* fields seen in the record / room in off, flen */
    size_t nkept;         /* fields stored (nf beyond the header's count + 1 are only counted) */
    csl_field *fields;
    size_t fields_cap;
    long row_line;        /* physical line the current record started on */
    long field_nl;        /* newlines inside quoted fields of the current record */
    int last_cr;          /* the previous event was a CR line end (for CRLF) */
    int any_record;
    int fatal;            /* stop feeding: err is set */
} csv_state;

static void fail_nomem(csv_state *st)
{
    if (!st->fatal) cs_error_set(st->err, CS_ENOMEM, 0, 0, "%s: out of memory", st->name);
    st->fatal = 1;
}

static long count_newlines(const char *p, size_t n)
{
    long c = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '\n') c++;
        else if (p[i] == '\r' && (i + 1 >= n || p[i + 1] != '\n')) c++;
    }
    return c;
}

/* libcsv grows its field buffer through this: a request above the field limit is refused,
 * which stops csv_parse with CSV_ENOMEM; `field_refused` tells that apart from a real
 * allocation failure (libcsv retries smaller steps, so only the last request counts). One
 * parse runs on one thread, hence thread-local state rather than a context pointer libcsv
 * does not offer. */
static _Thread_local size_t field_cap;
static _Thread_local int field_refused;

static void *capped_realloc(void *p, size_t n)
{
    field_refused = n > field_cap;
    return field_refused ? NULL : realloc(p, n);
}

static void on_field(void *data, size_t len, void *ctx)
{
    csv_state *st = ctx;
    if (st->fatal) return;
    st->last_cr = 0;
    st->field_nl += count_newlines(data, len);
    if (len > st->lim->field) {
        cs_load_field_too_long(st->err, st->name, st->row_line, (long)st->nf + 1, st->lim);
        st->fatal = 1;
        return;
    }
    if (st->out->have_schema && st->nf > st->out->schema.ncols) {
        st->nf++;             /* a ragged row says how many fields it has, not what they hold */
        return;
    }
    if (st->nf == st->fcap) {
        size_t nc = st->fcap ? st->fcap * 2 : 64;
        size_t *o = realloc(st->off, nc * sizeof *o);
        if (!o) { fail_nomem(st); return; }
        st->off = o;
        size_t *l = realloc(st->flen, nc * sizeof *l);
        if (!l) { fail_nomem(st); return; }
        st->flen = l;
        st->fcap = nc;
    }
    if (st->blen + len + 1 > st->bcap) {
        size_t nc = st->bcap ? st->bcap : 4096;
        while (nc < st->blen + len + 1) nc *= 2;
        char *b = realloc(st->buf, nc);
        if (!b) { fail_nomem(st); return; }
        st->buf = b;
        st->bcap = nc;
    }
    if (len) memcpy(st->buf + st->blen, data, len);
    st->off[st->nf] = st->blen;
    st->flen[st->nf] = len;
    st->nf++;
    st->nkept = st->nf;
    st->blen += len;
}

static void handle_record(csv_state *st)
{
    csl_parsed *out = st->out;
    if (st->fields_cap < st->nkept) {
        csl_field *f = realloc(st->fields, st->nkept * sizeof *f);
        if (!f) { fail_nomem(st); return; }
        st->fields = f;
        st->fields_cap = st->nkept;
    }
    for (size_t i = 0; i < st->nkept; i++) {
        st->fields[i].p = st->buf + st->off[i];
        st->fields[i].len = st->flen[i];
    }
    st->any_record = 1;
    if (!out->have_schema) {
        cs_status s = cs_load_schema_build(&out->schema, st->name, st->fields, st->nf,
                                           st->row_line, st->opt, st->err);
        out->have_schema = 1;
        if (s != CS_OK) { st->fatal = 1; return; }
        cs_load_worker_init(&out->w, &out->schema, st->opt, st->name);
        out->have_worker = 1;
        out->w.rows.growable = 1;
        out->w.ids = &out->ids;
        out->w.cases = &out->cases;
        out->w.splits = &out->splits;
        if (!st->opt->no_header) return;     /* headerless: the first record is data too */
    }
    if (out->w.rows_read >= st->lim->rows) {
        cs_load_too_many_rows(st->err, st->name, st->row_line, st->lim);
        st->fatal = 1;
        return;
    }
    if (cs_load_row(&out->w, st->fields, st->nf, st->row_line)) fail_nomem(st);
}

static void on_row(int c, void *ctx)
{
    csv_state *st = ctx;
    if (st->fatal) return;
    if (st->nf == 0) {
        /* no fields: the LF of a CRLF pair, or a blank line */
        if (c == '\n' && st->last_cr) { st->last_cr = 0; return; }
        if (c != -1) st->out->blank_lines++;
    } else {
        handle_record(st);
    }
    st->row_line += st->field_nl + (c == -1 ? 0 : 1);
    st->field_nl = 0;
    st->nf = 0;
    st->nkept = 0;
    st->blen = 0;
    st->last_cr = c == '\r';
}

/* A parse, read or decompression failure, placed where the data broke off (every rejection
 * carries FILE:LINE:COL). */
static cs_status error_here(csv_state *st, const char *what)
{
    char pos[512];
    long col = (long)st->nf + 1;
    cs_load_format_pos(pos, sizeof pos, st->name, st->row_line, col);
    return cs_error_set(st->err, CS_EINPUT, st->row_line, col, "%s%s", pos, what);
}

/* csv_parse stopped early: bad quoting, a field over the limit, or no memory. */
static cs_status parse_failed(csv_state *st, struct csv_parser *p)
{
    if (csv_error(p) == CSV_EPARSE)
        return error_here(st, "malformed quoting: a quote inside an unquoted field"
                              " or text after a closing quote");
    if (field_refused)
        return cs_load_field_too_long(st->err, st->name, st->row_line, (long)st->nf + 1, st->lim);
    return cs_error_set(st->err, CS_ENOMEM, 0, 0, "%s: out of memory", st->name);
}

/* A read failure of src, in err: out of memory, or placed where the data broke off. */
static cs_status read_failed(csv_state *st, csl_src *src)
{
    if (cs_load_src_nomem(src)) return cs_error_set(st->err, CS_ENOMEM, 0, 0, "%s: out of memory", st->name);
    return error_here(st, cs_load_src_error(src));
}

/* The header gathered before parsing: it gives the delimiter, and sniffing a fixed extent
 * (ext; not "the first block") keeps the result independent of the block size. */
typedef struct csv_head {
    char *p;
    size_t len, cap, ext;
    int eof;              /* the source ended while it was gathered */
    int bom_checked;      /* the first 3 bytes were looked at (a UTF-8 BOM dropped) */
} csv_head;

/* Appends bn bytes to the head and drops a leading BOM once 3 bytes are there. Returns 0, or
 * -1 out of memory. */
static int head_append(csv_head *h, const void *bp, size_t bn)
{
    if (h->len + bn > h->cap) {
        size_t nc = h->cap ? h->cap : 4096;
        while (nc < h->len + bn) nc *= 2;
        char *q = realloc(h->p, nc);
        if (!q) return -1;
        h->p = q;
        h->cap = nc;
    }
    memcpy(h->p + h->len, bp, bn);
    h->len += bn;
    if (!h->bom_checked && h->len >= 3) {
        h->bom_checked = 1;
        if (memcmp(h->p, "\xEF\xBB\xBF", 3) == 0) { memmove(h->p, h->p + 3, h->len - 3); h->len -= 3; }
    }
    return 0;
}

/* Reads blocks into the head until the header scan has what it needs; the scan bounds what is
 * gathered and refuses binary data at its first byte. Returns CS_OK or the refusal (err). */
static cs_status gather_header(csv_state *st, csl_src *src, csv_head *h)
{
    int hs = CSL_HEAD_MORE;
    while (hs == CSL_HEAD_MORE) {
        const void *bp;
        size_t bn;
        int r = cs_load_src_next(src, &bp, &bn);
        if (r < 0) return read_failed(st, src);
        if (r == 0) h->eof = 1;
        if (!h->eof && head_append(h, bp, bn) != 0)
            return cs_error_set(st->err, CS_ENOMEM, 0, 0, "%s: out of memory", st->name);
        if (h->bom_checked || h->eof)
            hs = cs_load_header_scan(st->name, h->p ? h->p : "", h->len, h->eof, st->opt, st->lim,
                                     &h->ext, st->err);
    }
    return hs == CSL_HEAD_BAD ? st->err->code : CS_OK;
}

/* Hands libcsv the n bytes at cur in `block`-sized pieces. Returns CS_OK, or the failure: a
 * record's (in err) or libcsv's (parse_failed). */
static cs_status feed_bytes(csv_state *st, struct csv_parser *p, const char *cur, size_t n,
                            size_t block)
{
    while (n > 0 && !st->fatal) {
        size_t m = n < block ? n : block;
        size_t used = csv_parse(p, cur, m, on_field, on_row, st);
        if (st->fatal) break;
        if (used != m) return parse_failed(st, p);
        cur += m;
        n -= m;
    }
    return st->fatal ? st->err->code : CS_OK;
}

/* Feeds what was gathered, then the rest of the source, with progress and the cancel flag
 * between blocks; then closes the parse. Returns CS_OK or the first failure (err). */
static cs_status feed(csv_state *st, struct csv_parser *p, csl_src *src, const csv_head *h,
                      size_t block, csl_progress *pr)
{
    const char *cur = h->p;
    size_t left = h->len;
    for (;;) {
        cs_status s = feed_bytes(st, p, cur, left, block);
        if (s != CS_OK) return s;
        if (cs_load_tick(pr, cs_load_src_consumed(src)))
            return cs_error_set(st->err, CS_ECANCELLED, 0, 0, "%s: loading cancelled", st->name);
        if (h->eof) break;
        const void *bp;
        int r = cs_load_src_next(src, &bp, &left);
        if (r < 0) return read_failed(st, src);
        if (r == 0) break;
        cur = bp;
    }
    if (csv_fini(p, on_field, on_row, st) != 0)
        return error_here(st, "unterminated quote: the file ends inside a quoted field");
    return st->fatal ? st->err->code : CS_OK;
}

/* libcsv strict, reporting every line end, its field buffer capped: it holds the field, a
 * closing quote or trailing spaces that are cut at the end of a field (on_field judges the
 * field itself), and libcsv's terminating NUL. Returns 0, or -1 out of memory. */
static int open_parser(struct csv_parser *p, const csl_limits *lim)
{
    if (csv_init(p, CSV_STRICT | CSV_STRICT_FINI | CSV_REPALL_NL | CSV_APPEND_NULL) != 0) return -1;
    field_cap = lim->field < SIZE_MAX - 3 ? lim->field + 3 : SIZE_MAX;
    field_refused = 0;
    csv_set_realloc_func(p, capped_realloc);
    return 0;
}

cs_status cs_load_csv(const char *name, csl_src *src, size_t total, const cs_load_options *opt,
                      const csl_limits *lim, size_t block, csl_parsed *out, cs_error *err)
{
    memset(out, 0, sizeof *out);
    csv_state st = { .name = name, .opt = opt, .lim = lim, .out = out, .err = err, .row_line = 1 };
    struct csv_parser p;
    if (open_parser(&p, lim) != 0) return cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", name);
    csl_progress pr = { opt, total, 0.0, 0.0, 0 };
    csv_head h;
    memset(&h, 0, sizeof h);
    cs_status status = gather_header(&st, src, &h);
    if (status == CS_OK) {
        csv_set_delim(&p, (unsigned char)(opt->delimiter ? opt->delimiter
                                          : cs_load_sniff_delim(h.p ? h.p : "", h.ext)));
        status = feed(&st, &p, src, &h, block ? block : 1u << 20, &pr);
    }
    csv_free(&p);
    free(h.p);
    free(st.buf);
    free(st.off);
    free(st.flen);
    free(st.fields);
    return status;
}
