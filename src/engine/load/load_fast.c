/* The fast path: a whole quote-free file in memory (mmap or a caller's buffer).
 *
 * The data after the header is cut into one chunk per thread at line boundaries. A first
 * parallel pass counts the newlines of each chunk (a vector count, load_scan.h), which gives
 * every chunk its first line number and an upper bound on its rows, so all rows go straight
 * into one preallocated set of flat arrays (each chunk at its own offset, its pages faulted in
 * by its own thread; gaps left by blank or bad lines are closed afterwards). With two threads
 * over numbers only the count is folded into the parse: the second thread counts the first
 * chunk while the first thread parses it, and the second chunk is not counted (cs_load_fast). The second
 * parallel pass reads each row once, straight into the row's place in the arrays: in a file of
 * numbers only (label, probabilities or logits, tta: the common shape) each number is read
 * where it starts and itself says where its field ends (quick_row_num, load_qnum.h), so no
 * other search looks at the line; otherwise the field ends come from the scanner's masks
 * (quick_row, load_scan.h) and the numbers are parsed where they lie. The row-level checks are
 * the shared checker's (cs_load_row_values), and each thread makes its rows' per-row caches
 * (conf, pred, correct: cs_dataset_prepare_rows) while their values are in cache. A line the
 * quick readers do not take whole is split and handed to cs_load_row, which words whatever is
 * wrong with it.
 *
 * Anything this tokeniser does not model exactly like libcsv — a quote character anywhere, a
 * CR that is not part of a CRLF line end, a field longer than the field limit or a line longer
 * than the header's fields could fill within it — makes it give up (CSL_BAIL); the caller then
 * runs the libcsv path on the same bytes, which words the refusal. So a pathological line costs
 * no memory here: it is never searched past that bound. */
#include "engine/load/load_internal.h"
#include "engine/load/load_qnum.h"
#include "engine/load/load_scan.h"
#include "engine/pair.h"

#include "engine/classes.h"
#include "calscope/dataset.h"
#include "engine/metrics/rowsums.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>
#include <unistd.h>

#define TICK_BYTES ((size_t)1 << 20)
#define MAX_THREADS 8
#define MIN_PARALLEL_BYTES ((size_t)4 << 20)
#define FOLD_SHARE 540            /* per mille of the bytes in the first chunk (folded count) */
#define FOLD_KEEP_BYTES ((size_t)256 << 20)   /* of the first chunk, kept mapped by count_prev */

typedef struct fast_ctx {
    const char *name;
    const cs_load_options *opt;
    const csl_schema *s;
    unsigned char cls[256];   /* 1 = delimiter, 2 = give up (quote, CR) */
    char delim;
    size_t field_max;         /* a longer field: give up (libcsv refuses it with its place) */
    size_t line_max;          /* a longer data line holds a longer field or too many fields */
    atomic_size_t done;
    atomic_int stop;
    /* the folded count: how far the first chunk's thread has dropped its pages (uintptr_t of
     * its `released`, 0 before its first tick), for the second thread's count_prev */
    atomic_uintptr_t first_released;
    csl_progress pr;
    size_t total;
    int file_backed;          /* pages of the input may be dropped once read */
    int label_is_index;       /* an integer label is its class index (classes.h rule) */
    size_t page;
    int scan;                 /* CSL_SCAN_SSE2 or CSL_SCAN_SWAR (load_scan.h) */
    const char *data_end;     /* end of the whole input: no load reads past it */
    int numeric;              /* every column a number: rows read by quick_row_num */
    int plain;                /* ... and they are the label, then p_0 .. p_{k-1} in order */
    int sum_bins;             /* the summary's one pass: sum the rows under these bins (0: keep) */
} fast_ctx;

typedef struct chunk {
    fast_ctx *c;
    const char *beg, *end;
    size_t newlines, records, cap, base;
    long line0;
    size_t blank;
    csl_worker w;
    int main_thread, bail, nomem, cancelled;
    long line_next;          /* out of parse_chunk: the line after the last one it read */
    /* the folded count (two threads over numbers: cs_load_fast): the pages of the rows are
     * pre-faulted as the parse goes (prefaulted: rows done so far), and the second chunk's
     * thread counts the first chunk [prev_beg, prev_end) itself to find its place in `all` */
    int progressive;
    size_t prefaulted;
    const char *prev_beg, *prev_end;
    csl_rows *all;
    long first_line;
    /* the summing chunk (fast_ctx.sum_bins; the first of the folded count's two):
     * its rows' probabilities go to `block` (prep_batch rows and one more, rows.pw on), which
     * the caches and the sums take before it is written over; none goes to the arrays */
    cs_rowsums *sums;
    double *block;
    /* the second thread's part in it: its first rows, up to the first chunk of CS_ROWSUMS_CHUNK
     * rows that starts in it (switch_at of them, from its place `base`), are kept in the
     * arrays and summed after the load onto the first thread's sums; then `pending` becomes
     * its sums (whole chunks of its own, which cs_rowsums_append joins after them) */
    cs_rowsums *pending;
    size_t switch_at;
} chunk;

/* The first byte of [p, e) that the splitter must look at (the delimiter, a quote or a CR:
 * c->cls nonzero), or e. Eight bytes at a time where the compiler allows it: a header of
 * 100,000 short names is mostly bytes to skip. */
static inline const char *find_special(const fast_ctx *c, const char *p, const char *e)
{
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    while (e - p >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        uint64_t m = csl_eq8(w, (unsigned char)c->delim) | csl_eq8(w, '"') | csl_eq8(w, '\r');
        if (m) return p + (__builtin_ctzll(m) >> 3);
        p += 8;
    }
#endif
    while (p < e && !c->cls[(unsigned char)*p]) p++;
    return p;
}

/* The next field of a line ending at e, starting at *fs, trimmed of spaces and tabs the way
 * libcsv trims unquoted fields, into *f; *fs moves past its delimiter (NULL after the last
 * field). Returns 1, 0 when no field is left, or -1 to give up (a quote, a CR, or a field
 * longer than the field limit). */
static inline int next_field(const fast_ctx *c, const char **fs, const char *e, csl_field *f)
{
    const char *a = *fs;
    if (!a) return 0;
    const char *q = find_special(c, a, e);
    if (q < e && c->cls[(unsigned char)*q] == 2) return -1;
    if ((size_t)(q - a) > c->field_max) return -1;
    const char *b = q;
    while (a < b && (*a == ' ' || *a == '\t')) a++;
    while (b > a && (b[-1] == ' ' || b[-1] == '\t')) b--;
    f->p = a;
    f->len = (size_t)(b - a);
    *fs = q < e ? q + 1 : NULL;
    return 1;
}

/* Splits [p, e) into fields (next_field). Fills at most `cap` fields (f may be NULL when cap
 * is 0) and returns the true count, or -1 to give up. */
static long split_line(const fast_ctx *c, const char *p, const char *e, csl_field *f, size_t cap)
{
    size_t nf = 0;
    csl_field x;
    int r;
    while ((r = next_field(c, &p, e, &x)) > 0) {
        if (nf < cap) f[nf] = x;
        nf++;
    }
    return r < 0 ? -1 : (long)nf;
}

/* Delimiters in [p, e) plus one: the number of fields of a line with no quote (a line with
 * one is given up on anyway). */
static size_t count_delims(const fast_ctx *c, const char *p, const char *e)
{
    return 1 + csl_count_byte(c->scan, p, e, (unsigned char)c->delim);
}

/* The schema from the header line [p, e) of nf fields (count_delims), one field at a time:
 * no array of the header's fields, whatever its width. Returns CSL_BAIL where split_line
 * would give up on the line (then libcsv words it, as it would before any column's
 * refusal: so a column refused here still has the rest of the line checked), else CSL_DONE
 * with the status in *st. */
static int header_schema(const fast_ctx *c, csl_schema *s, const char *p, const char *e,
                         size_t nf, long line, cs_status *st, cs_error *err)
{
    csl_schema_builder b;
    /* the names' bytes: the line less its nf - 1 delimiters, plus a NUL each */
    cs_status rc = cs_load_schema_begin(&b, s, c->name, nf, (size_t)(e - p) + 1, line, c->opt, err);
    /* the delimiters found by the byte scanner, not field by field: a wide header's names are
     * a few bytes each, too short for a word-at-a-time search to pay */
    csl_scan sc = {.kind = c->scan, .delim = (unsigned char)c->delim, .end = c->data_end};
    csl_scan_at(&sc, p);
    int res = CSL_DONE;
    for (const char *a = p;;) {
        const char *q = csl_scan_next(&sc, e);
        if (!q) q = e;
        else if (*q != c->delim) { res = CSL_BAIL; break; }       /* a quote or a CR */
        if ((size_t)(q - a) > c->field_max) { res = CSL_BAIL; break; }
        if (rc == CS_OK)                   /* it trims the spaces and tabs around a name */
            rc = cs_load_schema_column(&b, (csl_field){.p = a, .len = (size_t)(q - a)});
        if (q == e) break;
        a = q + 1;
    }
    if (res == CSL_DONE && rc == CS_OK) rc = cs_load_schema_end(&b);
    *st = rc;
    return res;
}

/* Not a probability the checker keeps (cs_load_row's range rule: [0, 1]; NaN is not one). A
 * macro: as an inline function GCC 12 made the row loop 2 % more instructions (callgrind). */
#define PROB_BAD(x) (!((x) >= 0.0 && (x) <= 1.0))

/* A numeric field's value x for column cc of the row being read: checked as the checker
 * would (a probability in [0, 1]; a label or tta an integer >= 0 in range) and put in the
 * row's place (v: the row slot; *label, *tta). Returns 1, or 0 when the checker would refuse
 * it (then the line goes through cs_load_row, which words why). */
static inline int take_number(const fast_ctx *c, const csl_col *cc, double x, double *v,
                              int32_t *label, int32_t *tta)
{
    switch (cc->role) {
    case CSL_PROB:
        if (PROB_BAD(x)) return 0;
        v[cc->cls] = x;
        return 1;
    case CSL_BINARY:
        if (PROB_BAD(x)) return 0;
        v[0] = 1.0 - x;
        v[1] = x;
        return 1;
    case CSL_LOGIT:
        v[cc->cls] = x;
        return 1;
    case CSL_LABEL:
        if (!(x >= 0.0) || x != floor(x)) return 0;
        if (c->label_is_index) {
            if (x > (double)(c->s->k - 1)) return 0;
            *label = (int32_t)x;
        } else {                     /* classes named by numbers: engine/classes.h */
            int why, j = cs_classmap_find_number(c->s->classes, x, &why);
            if (j < 0) return 0;
            *label = (int32_t)j;
        }
        return 1;
    case CSL_TTA:
        if (!(x >= 0.0) || x != floor(x) || x > (double)INT32_MAX) return 0;
        *tta = (int32_t)x;
        return 1;
    default:
        return 0;
    }
}

/* Where the line ends after its last field, whose text ends at q (LF, CRLF, or a final CR or
 * nothing at the end of the chunk): the next line's start, or NULL when q is not a line end
 * (more fields, a quote or a lone CR). */
static inline const char *after_last(const char *q, const char *end)
{
    if (q == end) return end;                    /* the last line of the data, no line end */
    if (*q == '\n') return q + 1;
    if (*q == '\r') {
        if (q + 1 == end) return end;
        if (q[1] == '\n') return q + 2;
    }
    return NULL;
}

/* One row in one pass for the common case, from p (a line start) in the chunk ending at `end`:
 * the field ends come from the scanner, the numbers are parsed in place where they lie and go
 * straight into the row of the final arrays. Returns 1 with *next set past the line's end (LF,
 * CRLF, or a final CR or nothing at the end of the chunk) when the row was read, 0 when the line
 * must go through split_line + cs_load_row (which then finds and words any problem; the scanner
 * must then be restarted), -1 on ENOMEM. Only accepts what the checker would accept, with the
 * same bits: a number the quick parser cannot take is asked of cs_load_parse_double, the
 * checker's own parser. */
static int quick_row(const fast_ctx *c, csl_worker *w, csl_scan *sc, const char *p,
                     const char *end, long line, const char **next)
{
    const csl_schema *s = c->s;
    double *v = cs_load_row_slot(w);  /* the values go straight into the row they belong to */
    if (!v) return -1;
    const char delim = c->delim;
    const char *safe = sc->end;
    int32_t label = 0, tta = 0;
    csl_field idf = {NULL, 0}, casef = {NULL, 0}, splitf = {NULL, 0};
    const size_t ncols = s->ncols;
    for (size_t col = 0; col < ncols; col++) {
        const csl_col *cc = &s->col[col];
        /* no line here is longer than line_max (count_chunk gave up on the file otherwise),
         * so the search is bounded; a field over the field limit is worded by libcsv */
        const char *q = csl_scan_next(sc, end);
        if (!q) q = end;                         /* the last line of the data, no line end */
        if ((size_t)(q - p) > c->field_max) return 0;
        if (col + 1 < ncols) {
            if (q == end || *q != delim) return 0;
        } else if (!after_last(q, end)) {
            return 0;
        }
        if (cc->role == CSL_IGNORE || cc->role == CSL_ID || cc->role == CSL_CASE ||
            cc->role == CSL_SPLIT) {             /* the text as it is */
            if (cc->role != CSL_IGNORE) {
                if (q == p || *p == ' ' || *p == '\t' || q[-1] == ' ' || q[-1] == '\t') return 0;
                csl_field *fd = cc->role == CSL_ID ? &idf : cc->role == CSL_CASE ? &casef : &splitf;
                fd->p = p;
                fd->len = (size_t)(q - p);
            }
        } else {
            double x;
            if (!csl_quick_num(p, q, safe, &x) &&
                cs_load_parse_double(p, (size_t)(q - p), &x) != CSL_NUM_OK) return 0;
            if (!take_number(c, cc, x, v, &label, &tta)) return 0;
        }
        if (col + 1 < ncols) {
            p = q + 1;
        } else {
            *next = after_last(q, end);
            if (q < end && *q == '\r' && q + 1 < end)
                csl_scan_next(sc, end);               /* hand out the LF */
        }
    }
    return cs_load_row_values(w, label, tta, idf.p ? &idf : NULL, casef.p ? &casef : NULL,
                              splitf.p ? &splitf : NULL, line, NULL) ? -1 : 1;
}

/* The end of the field starting at p: its delimiter, LF, CR or quote, or `end`; NULL when it
 * is longer than the field limit (libcsv words that). Eight bytes at a time. */
static inline const char *field_end(const fast_ctx *c, const char *p, const char *end)
{
    const char *stop = (size_t)(end - p) > c->field_max + 1 ? p + c->field_max + 1 : end;
    const char *q = p;
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (; stop - q >= 8; q += 8) {
        uint64_t w;
        memcpy(&w, q, 8);
        uint64_t m = csl_eq8(w, (unsigned char)c->delim) | csl_eq8(w, '\n') | csl_eq8(w, '\r') |
                     csl_eq8(w, '"');
        if (m) { q += __builtin_ctzll(m) >> 3; goto found; }
    }
#endif
    while (q < stop && *q != c->delim && *q != '\n' && *q != '\r' && *q != '"') q++;
found:
    return (size_t)(q - p) > c->field_max ? NULL : q;
}

/* The number of the field at p, the last of its line or not: the byte after it (the field's
 * delimiter, or the line's end after the last field) with *x set, or NULL when the field is
 * not a number the checker takes with those bits or does not end as it must (then the line
 * goes through cs_load_row, which words why). The number itself says where the field ends
 * (csl_quick_num_at); a number of another shape, spaces or a quote make it find the field's
 * end the plain way and ask csl_quick_num and cs_load_parse_double, as quick_row does. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline const char *num_field(const fast_ctx *c, const char *p, const char *end,
                                    int last, double *x)
{
    const char *q = csl_quick_num_at(p, c->data_end, c->scan, x);
    if (q && q < end && (last ? *q == '\n' || *q == '\r' : *q == c->delim)) return q;
    if (!(q = field_end(c, p, end))) return NULL;
    if (q == end ? !last : last ? *q != '\n' && *q != '\r' : *q != c->delim) return NULL;
    if (!csl_quick_num(p, q, c->data_end, x) &&
        cs_load_parse_double(p, (size_t)(q - p), x) != CSL_NUM_OK) return NULL;
    return q;
}

/* The probabilities of a row are asked for room this many at a time. */
#define PROB_BLOCK 64

/* The probabilities j..stop-1 of a row of k (the plain layout) after the delimiter at q, into
 * v[j..stop) and *sum (in class order): with csl_quick_prob_at while `room` holds (the caller
 * checked CSL_QUICK_PROB_ROOM for them: each of its numbers moves at most CSL_QUICK_PROB_STEP
 * on), else num_field. The first number it declines goes to num_field, which may move any
 * distance on (a field of 200 digits), so the rest are read by num_field too (a fuzzer found
 * the number after such a field read past the end of the data). Returns the byte after the
 * last, or NULL when one is not a probability the checker takes as read. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline const char *take_probs(const fast_ctx *c, const char *q, const char *end, size_t j,
                                     size_t stop, size_t k, int room, double *v, double *sum)
{
    double x, s = *sum;
    for (; j < stop; j++) {
        int last = j + 1 == k;
        const char *r = room ? csl_quick_prob_at(q + 1, c->scan, &x) : NULL;
        if (r && !(r < end && (last ? *r == '\n' || *r == '\r' : *r == c->delim))) r = NULL;
        if (!r) {
            room = 0;
            if (!(r = num_field(c, q + 1, end, last, &x))) return NULL;
        }
        q = r;
        if (PROB_BAD(x)) return NULL;
        v[j] = x;
        s += x;
    }
    *sum = s;
    return q;
}

/* quick_row for a row of numbers only (every column a label, probability, logit or tta: the
 * common shape): each number is read where it starts and itself says where its field ends
 * (num_field), so neither the scanner nor any other search looks at the bytes of the line.
 * The commonest layout of all (c->plain: the label, then the probabilities of classes 0..k-1
 * in order) has a loop of its own, without a look at each column's role. Same contract and
 * the same rows, values and refusals as quick_row. */
static int quick_row_num(const fast_ctx *c, csl_worker *w, const char *p, const char *end,
                         long line, const char **next)
{
    const csl_schema *s = c->s;
    double *v = cs_load_row_slot(w);
    if (!v) return -1;
    int32_t label = 0, tta = 0;
    const size_t ncols = s->ncols;
    const char *q = p;
    double x;
    if (c->plain) {
        if (!(q = num_field(c, p, end, 0, &x)) || !take_number(c, &s->col[0], x, v, &label, &tta))
            return 0;
        const size_t k = ncols - 1;
        double sum = 0.0;                   /* the checker's sum, taken here (row_values) */
        if ((size_t)(c->data_end - q) >= CSL_QUICK_PROB_ROOM(k)) {
            q = take_probs(c, q, end, 0, k, k, 1, v, &sum);   /* the whole row has room */
        } else {
            /* PROB_BLOCK numbers at a time without a bound while they have room: a row of
             * 100,000 one-byte fields has it for nearly all of them, not for 24 bytes each */
            for (size_t j = 0, stop; j < k && q; j = stop) {
                stop = k - j > PROB_BLOCK ? j + PROB_BLOCK : k;
                q = (size_t)(c->data_end - q) >= CSL_QUICK_PROB_ROOM(stop - j)
                        ? take_probs(c, q, end, j, stop, k, 1, v, &sum)
                        : take_probs(c, q, end, j, stop, k, 0, v, &sum);
            }
        }
        if (!q) return 0;
        if (!(*next = after_last(q, end))) return 0;
        return cs_load_row_values(w, label, tta, NULL, NULL, NULL, line, &sum) ? -1 : 1;
    } else {
        for (size_t col = 0; col < ncols; col++) {
            if (!(q = num_field(c, p, end, col + 1 == ncols, &x)) ||
                !take_number(c, &s->col[col], x, v, &label, &tta))
                return 0;
            p = q + 1;
        }
    }
    if (!(*next = after_last(q, end))) return 0;
    return cs_load_row_values(w, label, tta, NULL, NULL, NULL, line, NULL) ? -1 : 1;
}

/* One line [p, e) without its LF; strips the CR of a CRLF. Looks at most `max` bytes ahead:
 * returns NULL when the line is longer than that. */
static inline const char *line_end(const char *p, const char *end, size_t max, const char **next)
{
    size_t room = (size_t)(end - p);
    const char *nl = memchr(p, '\n', room < max ? room : max);
    if (!nl && room > max) return NULL;
    const char *le = nl ? nl : end;
    *next = nl ? nl + 1 : end;
    if (le > p && le[-1] == '\r') le--;
    return le;
}

/* Drops the whole pages of [*from, to) from the process when the input is a file mapping, so
 * that peak memory is the arrays being filled, not the arrays plus the whole file: the pages
 * stay in the page cache and fault back in cheaply when the parse pass reads them again. */
static void release_read(const fast_ctx *c, const char **from, const char *to)
{
    if (!c->file_backed) return;
    uintptr_t a = ((uintptr_t)*from + c->page - 1) & ~(uintptr_t)(c->page - 1);
    uintptr_t b = (uintptr_t)to & ~(uintptr_t)(c->page - 1);
    if (b > a) madvise((void *)a, b - a, MADV_DONTNEED);
    if (b > (uintptr_t)*from) *from = (const char *)b;
}

/* The next LF in [q, end), or NULL. Searches in TICK_BYTES windows and drops the pages behind
 * (file mappings), so a line of any length never holds more than a window in memory. */
static inline const char *find_nl(const fast_ctx *c, const char *q, const char *end)
{
    const char *released = q;
    while (q < end) {
        size_t win = (size_t)(end - q) < TICK_BYTES ? (size_t)(end - q) : TICK_BYTES;
        const char *nl = memchr(q, '\n', win);
        if (nl) return nl;
        q += win;
        release_read(c, &released, q);
    }
    return NULL;
}

/* Space or tab that a blank line may hold (tab is a field separator when it delimits). */
static inline int blank_byte(const fast_ctx *c, char b)
{
    return b == ' ' || (b == '\t' && c->delim != '\t');
}

/* Counts newlines (an upper bound on rows, for the arrays) and records (non-blank lines, the
 * rows the parse pass will read) exactly, line by line: only when the row limit is in reach. A line longer than line_max makes the
 * parse pass give up, so it gives up here at once (bail) instead of reading the rest of the
 * file; long lines are searched in windows with the pages behind dropped. */
static void *count_exact(void *arg)
{
    chunk *ch = arg;
    const fast_ctx *c = ch->c;
    size_t n = 0, rec = 0;
    const char *released = ch->beg, *end = ch->end;
    for (const char *p = ch->beg; p < end;) {
        const char *stop = (size_t)(end - p) > c->line_max ? p + c->line_max : end;
        const char *q = p;
        while (q < stop && blank_byte(c, *q)) {
            q++;
            if ((size_t)(q - released) >= 2 * TICK_BYTES) release_read(c, &released, q);
        }
        /* blank: nothing, LF, CRLF or a final CR (the parse pass strips it) */
        if (q < end && *q != '\n' && !(*q == '\r' && (q + 1 == end || q[1] == '\n'))) rec++;
        const char *nl = find_nl(c, q, stop);
        if (!nl) {
            if (stop < end) { ch->bail = 1; break; }
            break;
        }
        n++;
        p = nl + 1;
        if ((size_t)(p - released) >= TICK_BYTES) release_read(c, &released, p);
    }
    ch->newlines = n;
    ch->records = rec;
    ch->cap = n + (ch->end > ch->beg && ch->end[-1] != '\n');
    return NULL;
}

/* Counts the newlines of a chunk (they give every chunk its first line number and an upper
 * bound on its rows, for the arrays) with the scanner's vector count; gives up (bail) at the
 * first line longer than line_max, as the parse pass would, without reading the rest of the
 * file. Pages behind are dropped as it goes (file mappings). The records (non-blank lines) are
 * only bounded here (newlines + 1): count_exact counts them when the row limit is in reach. */
static void *count_chunk(void *arg)
{
    chunk *ch = arg;
    const fast_ctx *c = ch->c;
    size_t n = 0;
    int bail = 0;
    const char *start = ch->beg, *released = ch->beg;
    for (const char *p = ch->beg; p < ch->end && !bail;) {
        const char *e = (size_t)(ch->end - p) > TICK_BYTES ? p + TICK_BYTES : ch->end;
        n += csl_count_lf(c->scan, p, e, &start, c->line_max, &bail);
        p = e;
        release_read(c, &released, p);
        if (c->file_backed) (void)cs_load_map_check(p);   /* counts on: the bound must hold */
    }
    if ((size_t)(ch->end - start) > c->line_max) bail = 1;
    ch->bail = bail;
    ch->newlines = n;
    ch->records = n + 1;
    ch->cap = n + (ch->end > ch->beg && ch->end[-1] != '\n');
    return NULL;
}

/* Line of the idx-th (0-based) record of a chunk, counted as count_chunk counts them. Only
 * reached to place the row-limit refusal. */
static long record_line(const chunk *ch, size_t idx)
{
    const fast_ctx *c = ch->c;
    long line = ch->line0;
    for (const char *p = ch->beg; p < ch->end; line++) {
        const char *q = p;
        while (q < ch->end && blank_byte(c, *q)) q++;
        if (q < ch->end && *q != '\n' && !(*q == '\r' && (q + 1 == ch->end || q[1] == '\n'))) {
            if (idx == 0) return line;
            idx--;
        }
        const char *nl = memchr(q, '\n', (size_t)(ch->end - q));
        if (!nl) break;
        p = nl + 1;
    }
    return line;
}

/* Pre-faults rows [from, to) of every array of the chunk's view (populate). */
static void populate_rows(const chunk *ch, size_t from, size_t to)
{
    const fast_ctx *c = ch->c;
    const csl_rows *rw = &ch->w.rows;
    size_t k = c->s->k, n = to - from;
    if (to <= from) return;
    /* the probabilities of the rows kept (the one-pass chunk's go to its block) */
    size_t kept = ch->sums ? 0 : ch->pending ? ch->switch_at : to;
    if (kept > from)
        cs_load_populate(rw->prob + from * k, ((kept < to ? kept : to) - from) * k * sizeof *rw->prob);
    if (rw->logit) cs_load_populate(rw->logit + from * k, n * k * sizeof *rw->logit);
    cs_load_populate(rw->label + from, n * sizeof *rw->label);
    cs_load_populate(rw->line + from, n * sizeof *rw->line);
    if (rw->conf) {
        cs_load_populate(rw->conf + from, n * sizeof *rw->conf);
        cs_load_populate(rw->pred + from, n * sizeof *rw->pred);
        cs_load_populate(rw->correct + from, n * sizeof *rw->correct);
    }
}

/* The folded count does not know a chunk's rows before it is parsed: the rows that the next
 * two ticks of text will fill, at the rate of rows to bytes so far (at the start, at the
 * shortest line a row can come from: 2 bytes a column), are pre-faulted as the parse goes. So
 * no more than about two ticks' rows are faulted in that no row uses. */
static void prefault_ahead(chunk *ch, const char *p)
{
    const csl_rows *rw = &ch->w.rows;
    size_t done = (size_t)(p - ch->beg), left = (size_t)(ch->end - p);
    size_t ahead = left < 2 * TICK_BYTES ? left : 2 * TICK_BYTES;
    size_t more = done && rw->n ? (size_t)((double)rw->n / (double)done * (double)ahead) + 64
                                : ahead / (2 * ch->c->s->ncols) + 1;
    size_t want = rw->n + more;
    if (want > rw->cap) want = rw->cap;
    if (want > ch->prefaulted) {
        populate_rows(ch, ch->prefaulted, want);
        ch->prefaulted = want;
    }
}

/* Progress, cancel and page release every TICK_BYTES of a chunk. Returns 1 to stop. */
static int parse_tick(chunk *ch, size_t *since, const char **released, const char *p)
{
    fast_ctx *c = ch->c;
    size_t d = atomic_fetch_add(&c->done, *since) + *since;
    *since = 0;
    release_read(c, released, p);
    if (c->file_backed && cs_load_map_check(p)) {   /* the file shrank: refused, read no more */
        atomic_store(&c->stop, 1);
        return 1;
    }
    if (ch->progressive && ch->main_thread)
        atomic_store_explicit(&c->first_released, (uintptr_t)*released, memory_order_release);
    if (ch->progressive) prefault_ahead(ch, p);
    if (atomic_load(&c->stop)) return 1;
    if (ch->main_thread ? cs_load_tick(&c->pr, d) : cs_load_cancelled(c->opt)) {
        ch->cancelled = 1;
        atomic_store(&c->stop, 1);
        return 1;
    }
    return 0;
}

/* Rows of the per-row caches made at a time: about 16 KB of values, so that a row's values
 * are still in the first-level cache when its caches are made. */
static size_t prep_batch(size_t k)
{
    size_t r = ((size_t)16 << 10) / (k * sizeof(double));
    return r ? r : 1;
}

/* The per-row caches (conf, pred, correct) of the chunk's rows [*done, rows.n), by the
 * dataset's own rule: cs_dataset_prepare_rows on a view of the chunk's arrays (it reads k,
 * prob and label and writes only those rows' conf, pred and correct). *done moves to rows.n.
 * The one-pass chunk's rows are in its block from rows.pw on (*done == pw): their caches, then
 * their sums (cs_rowsums_add, in row order), and the block is free again (pw = rows.n).
 * Returns 0, or -1 when the sums ran out of memory. */
static int prep_rows(chunk *ch, cs_dataset *view, csl_rows *rw, size_t *done)
{
    if (!ch->sums) {
        if (view->conf && rw->n > *done) cs_dataset_prepare_rows(view, *done, rw->n - *done);
        *done = rw->n;
        if (ch->pending && rw->n == ch->switch_at) {   /* the kept rows are done: sum the rest */
            ch->sums = ch->pending;
            ch->pending = NULL;
            rw->prob = ch->block;
            rw->pw = rw->n;
        }
        return 0;
    }
    if (rw->n <= *done) return 0;
    size_t from = rw->pw, n = rw->n - from;
    cs_dataset v = *view;              /* the block's rows as rows 0..n-1 */
    v.prob = rw->prob;
    v.label = rw->label + from;
    v.conf = rw->conf + from;
    v.pred = rw->pred + from;
    v.correct = rw->correct + from;
    cs_dataset_prepare_rows(&v, 0, n);
    *done = rw->pw = rw->n;
    return cs_rowsums_add(ch->sums, rw->prob, rw->label + from, n);
}

/* Stops every chunk's parse: this one ran out of memory (nomem) or must give up (bail). */
static void stop_parse(chunk *ch, int nomem)
{
    if (nomem) ch->nomem = 1;
    else ch->bail = 1;
    atomic_store(&ch->c->stop, 1);
}

/* The chunk's rows as the dataset prep_rows reads: k, prob, label and the per-row caches (none
 * when the rows have no caches). */
static void rows_view(const chunk *ch, cs_dataset *view)
{
    const csl_rows *rw = &ch->w.rows;
    memset(view, 0, sizeof *view);
    if (!rw->conf) return;
    view->k = ch->c->s->k;
    view->prob = rw->prob;
    view->label = rw->label;
    view->conf = rw->conf;
    view->pred = rw->pred;
    view->correct = rw->correct;
}

/* After a row: the caches (and sums) of a full batch of rows, or of the rows up to the second
 * thread's switch to summing (*stop, which is then done with). Returns 0, or -1 out of memory. */
static inline int prep_due(chunk *ch, cs_dataset *view, size_t *prepped, size_t batch, size_t *stop)
{
    csl_rows *rw = &ch->w.rows;
    if ((rw->n - *prepped >= batch || rw->n == *stop) && prep_rows(ch, view, rw, prepped)) return -1;
    if (rw->n == *stop) *stop = SIZE_MAX;
    return 0;
}

/* A line quick_row cannot take, at p: its end found (line_end's search, in windows whose pages
 * are dropped behind: find_nl, so that a pathological line of a chunk nothing counted, the
 * folded count, costs no memory), split into *f (made when first needed) and read by the
 * general row reader, or counted as blank. *next: the line after it. Returns 0 (a row read),
 * 1 (a blank line), or -1 after stop_parse. */
static int general_line(chunk *ch, csl_field **f, const char *p, const char **next, long line)
{
    fast_ctx *c = ch->c;
    size_t ncols = c->s->ncols;
    size_t room = (size_t)(ch->end - p), look = room < c->line_max ? room : c->line_max;
    const char *nl = find_nl(c, p, p + look), *le = NULL;
    if (nl) { le = nl; *next = nl + 1; }
    else if (room <= c->line_max) { le = ch->end; *next = ch->end; }   /* no LF: the last line */
    if (le && le > p && le[-1] == '\r') le--;
    if (!le) { stop_parse(ch, 0); return -1; }
    if (!*f && !(*f = malloc((ncols + 1) * sizeof **f))) { stop_parse(ch, 1); return -1; }
    long nf = split_line(c, p, le, *f, ncols + 1);
    if (nf < 0) { stop_parse(ch, 0); return -1; }
    if (nf == 1 && (*f)[0].len == 0) {
        /* blank line; a blank tail without a newline is not a line (libcsv agrees) */
        if ((*next)[-1] == '\n' || (le < *next && *le == '\r')) ch->blank++;
        return 1;
    }
    if (cs_load_row(&ch->w, *f, (size_t)nf, line)) { stop_parse(ch, 1); return -1; }
    return 0;
}

static void *parse_chunk(void *arg)
{
    chunk *ch = arg;
    fast_ctx *c = ch->c;
    csl_field *f = NULL;     /* fields of a line quick_row cannot take: made when first needed */
    long line = ch->line0;
    size_t since = 0;
    const char *released = ch->beg;
    csl_scan sc = {c->scan, (unsigned char)c->delim, c->data_end, NULL, 0};
    const int numeric = c->numeric;
    if (!numeric) csl_scan_at(&sc, ch->beg);
    /* this chunk's rows of the output arrays, faulted in by one call each (80 MB of
     * probabilities for 1M x 10 were 20,000 page faults, taken one by one during the parse);
     * each thread its own rows, so the zeroing is shared like the parse */
    csl_rows *rw = &ch->w.rows;
    if (ch->progressive) prefault_ahead(ch, ch->beg);
    else if (!rw->growable) populate_rows(ch, 0, rw->cap);   /* growable: the stream's rows */
    cs_dataset view;                   /* the chunk's rows, for prep_rows */
    rows_view(ch, &view);
    size_t prepped = 0, batch = prep_batch(c->s->k);
    /* the row at which the second thread's one-pass part starts summing (prep_rows) */
    size_t stop = ch->pending ? ch->switch_at : SIZE_MAX;
    if (stop == 0) {
        prep_rows(ch, &view, rw, &prepped);
        stop = SIZE_MAX;
    }
    for (const char *p = ch->beg; p < ch->end;) {
        const char *next = p;
        int qr = numeric ? quick_row_num(c, &ch->w, p, ch->end, line, &next)
                         : quick_row(c, &ch->w, &sc, p, ch->end, line, &next);
        if (qr < 0) { stop_parse(ch, 1); break; }
        if (qr > 0) {
            line++;
            since += (size_t)(next - p);
            p = next;
            if (prep_due(ch, &view, &prepped, batch, &stop)) { stop_parse(ch, 1); break; }
            if (since >= TICK_BYTES && parse_tick(ch, &since, &released, p)) break;
            continue;
        }
        int g = general_line(ch, &f, p, &next, line);
        if (g == 0 && prep_due(ch, &view, &prepped, batch, &stop)) { stop_parse(ch, 1); g = -1; }
        if (g < 0) break;
        line++;
        since += (size_t)(next - p);
        p = next;
        if (!numeric) csl_scan_at(&sc, p);
        if (since >= TICK_BYTES && parse_tick(ch, &since, &released, p)) break;
    }
    if (!ch->nomem && prep_rows(ch, &view, rw, &prepped)) ch->nomem = 1;
    atomic_fetch_add(&c->done, since);
    ch->line_next = line;
    free(f);
    return NULL;
}

/* Runs fn on every chunk, chunk 0 on the calling thread. */
static void run_all(chunk *ch, int n, void *(*fn)(void *))
{
    pthread_t tid[MAX_THREADS];
    int started[MAX_THREADS] = {0};
    for (int i = 1; i < n; i++)
        started[i] = cs_helper_start(&tid[i], fn, &ch[i]);
    fn(&ch[0]);
    for (int i = 1; i < n; i++) {
        if (started[i]) pthread_join(tid[i], NULL);
        else fn(&ch[i]);
    }
}

static void view_rows(csl_rows *v, const csl_rows *all, const csl_schema *s, size_t base,
                      size_t cap);

/* The first chunk's lines, as the second thread of the folded count takes them: only the LFs
 * (csl_count_byte; no long-line check: the first thread's parse bounds every line it reads
 * and gives up on one too long). The pages it reads stay mapped for the first thread, which
 * parses them next and drops them behind it: dropped here, every page of the chunk was mapped
 * twice (1M x 10: the load 102 -> 96 ms with the cut moved to match). Only pages the first
 * thread has already passed (first_released: it may have dropped them before this count read
 * them again) are dropped here after each window; and past FOLD_KEEP_BYTES every page is
 * dropped as counted, so that a file of gigabytes never has more than that mapped ahead of
 * the parse. */
static void count_prev(chunk *ch)
{
    fast_ctx *c = ch->c;
    size_t n = 0;
    const char *keep_end = (size_t)(ch->end - ch->beg) > FOLD_KEEP_BYTES ? ch->beg + FOLD_KEEP_BYTES
                                                                         : ch->end;
    const char *dropped = ch->beg;
    for (const char *p = ch->beg; p < ch->end;) {
        const char *e = (size_t)(ch->end - p) > TICK_BYTES ? p + TICK_BYTES : ch->end;
        n += csl_count_byte(c->scan, p, e, '\n');
        p = e;
        if (c->file_backed) (void)cs_load_map_check(p);   /* counts on: the place must be right */
        const char *passed = (const char *)atomic_load_explicit(&c->first_released,
                                                                memory_order_acquire);
        const char *upto = p > keep_end || (passed && passed >= p) ? p : passed;
        if (upto && upto > dropped) release_read(c, &dropped, upto);
    }
    ch->newlines = n;
    ch->records = n + 1;
    ch->cap = n + (ch->end > ch->beg && ch->end[-1] != '\n');
}

/* The second chunk's thread of the folded count: counts the first chunk's newlines
 * (count_prev), which gives this chunk its place in the arrays (no row of the first chunk goes
 * past its lines) and its first line number; then parses its own chunk, which nothing
 * counted. */
static void *count_then_parse(void *arg)
{
    chunk *ch = arg;
    fast_ctx *c = ch->c;
    chunk prev;
    memset(&prev, 0, sizeof prev);
    prev.c = c;
    prev.beg = ch->prev_beg;
    prev.end = ch->prev_end;
    count_prev(&prev);
    /* no row of the first chunk goes past its lines, nor past the most rows its bytes hold (a
     * row's line has a byte or more per field and a separator or line end after each, but the
     * last line of the data no line end); short bad lines can outnumber those rows */
    size_t most = ((size_t)(prev.end - prev.beg) + 1) / (2 * c->s->ncols) + 1;
    ch->base = prev.cap < most ? prev.cap : most;
    if (ch->base > ch->all->cap) {         /* cannot happen (cs_load_fast's reservation) */
        ch->bail = 1;
        atomic_store(&c->stop, 1);
        return NULL;
    }
    ch->line0 = ch->first_line + (long)prev.newlines;
    view_rows(&ch->w.rows, ch->all, c->s, ch->base, ch->all->cap - ch->base);
    /* one pass: the rows up to the next whole chunk are kept, the rest summed by chunks */
    if (ch->pending) ch->switch_at = (CS_ROWSUMS_CHUNK - ch->base % CS_ROWSUMS_CHUNK) % CS_ROWSUMS_CHUNK;
    return parse_chunk(ch);
}

static void view_rows(csl_rows *v, const csl_rows *all, const csl_schema *s, size_t base, size_t cap)
{
    memset(v, 0, sizeof *v);
    v->cap = cap;
    v->prob = all->prob + base * s->k;
    if (all->logit) v->logit = all->logit + base * s->k;
    v->label = all->label + base;
    v->line = all->line + base;
    if (all->id) v->id = all->id + base;
    if (all->tta) v->tta = all->tta + base;
    if (all->case_id) v->case_id = all->case_id + base;
    if (all->split) v->split = all->split + base;
    if (all->conf) {
        v->conf = all->conf + base;
        v->pred = all->pred + base;
        v->correct = all->correct + base;
    }
}

/* ---- cs_load_fast, in steps ------------------------------------------------------------------ */

/* Not a CSL_* code: a step went well and the load goes on. */
#define FAST_GO_ON (-1)

/* The context of one load: the file's bytes, its options and limits, the progress ticks. */
static void fast_init(fast_ctx *c, const char *name, const char *data, size_t len,
                      const cs_load_options *opt, const csl_limits *lim, int scan, int file_backed)
{
    memset(c, 0, sizeof *c);
    c->name = name;
    c->opt = opt;
    c->pr.opt = opt;
    c->pr.total = len;
    c->total = len;
    c->file_backed = file_backed;
    c->page = (size_t)sysconf(_SC_PAGESIZE);
    c->field_max = lim->field;
    c->scan = cs_load_scan_kind(scan);
    c->data_end = data + len;
    atomic_init(&c->done, 0);
    atomic_init(&c->stop, 0);
    atomic_init(&c->first_released, 0);
}

/* The header: the first non-blank line (or, with no_header, the first line of data) becomes
 * out->schema. *p and *line move to the first data line. Returns FAST_GO_ON, CSL_BAIL, or
 * CSL_DONE (*st says why; a file of blank lines only has no schema, and the finisher says so). */
static int read_header(fast_ctx *c, const char **p, const char *end, long *line,
                       const csl_limits *lim, csl_parsed *out, cs_status *st, cs_error *err)
{
    const cs_load_options *opt = c->opt;
    while (*p < end) {
        const char *next;
        const char *le = line_end(*p, end, lim->header + 2, &next);
        if (!le) {                       /* a first data line (no_header) that long */
            cs_load_parsed_free(out);
            return CSL_BAIL;
        }
        size_t nf = count_delims(c, *p, le);
        if (nf == 1 || opt->no_header) {
            /* a blank line, or a first line of data: every field checked as rows are */
            csl_field first;
            long n = split_line(c, *p, le, &first, 1);
            if (n < 0) { cs_load_parsed_free(out); return CSL_BAIL; }
            if (n == 1 && first.len == 0) {
                if (next[-1] == '\n' || (le < next && *le == '\r')) out->blank_lines++;
                (*line)++;
                *p = next;
                continue;
            }
        }
        int hr = CSL_DONE;
        if (opt->no_header)
            *st = cs_load_schema_build(&out->schema, c->name, NULL, nf, *line, opt, err);
        else hr = header_schema(c, &out->schema, *p, le, nf, *line, st, err);
        out->have_schema = 1;
        if (hr == CSL_BAIL) { cs_load_parsed_free(out); return CSL_BAIL; }
        if (*st != CS_OK) return CSL_DONE;
        if (!opt->no_header) { (*line)++; *p = next; }
        break;
    }
    return out->have_schema ? FAST_GO_ON : CSL_DONE;
}

/* What the schema allows: numbers only (c->numeric), the plain "label,p_0..p_k-1" layout a
 * one-pass load sums (c->plain), the longest line a row may have (c->line_max). */
static void plan_columns(fast_ctx *c, const csl_schema *s, const csl_limits *lim)
{
    c->s = s;
    c->label_is_index = cs_classmap_numbers_are_positions(s->classes);
    c->numeric = 1;
    for (size_t j = 0; j < s->ncols; j++) {
        int role = s->col[j].role;
        if (role != CSL_LABEL && role != CSL_PROB && role != CSL_LOGIT && role != CSL_BINARY &&
            role != CSL_TTA)
            c->numeric = 0;
    }
    c->plain = c->numeric && !s->from_logits && !s->binary && s->ncols == s->k + 1 &&
               s->col[0].role == CSL_LABEL;
    for (size_t j = 1; c->plain && j < s->ncols; j++)
        if (s->col[j].role != CSL_PROB || s->col[j].cls != (int)j - 1) c->plain = 0;
    /* a line that the header's fields, each at the limit, could not fill (saturating) */
    c->line_max = s->ncols + 2 <= SIZE_MAX / (lim->field + 1) ? (s->ncols + 2) * (lim->field + 1)
                                                               : SIZE_MAX;
}

/* The threads of the parse: the caller's budget (threads <= 0: the online cores), one for a
 * small file (unless asked for), for ids, cases or splits (interned in file order) and for
 * fewer bytes than threads. */
static int plan_threads(int threads, size_t bytes, const csl_schema *s)
{
    int nt = threads;
    if (nt <= 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        nt = cpus > 0 ? (int)cpus : 1;
    }
    if (nt > MAX_THREADS) nt = MAX_THREADS;
    if (bytes < MIN_PARALLEL_BYTES && threads <= 0) nt = 1;
    if (s->has_id || s->has_case || s->has_split) nt = 1;  /* interning order must be file order */
    if (bytes < (size_t)nt) nt = 1;
    return nt;
}

/* Cuts [p, end) into nt chunks at line ends: equal shares, or FOLD_SHARE thousandths first
 * when folded. Returns 0, or -1 when a line does not end within c->line_max (the caller bails). */
static int cut_chunks(fast_ctx *c, chunk *ch, int nt, int fold, const char *p, const char *end)
{
    const char *cut = p;
    for (int i = 0; i < nt; i++) {
        ch[i].c = c;
        ch[i].beg = cut;
        if (i == nt - 1) {
            ch[i].end = end;
        } else {
            const char *target = fold ? p + (size_t)(end - p) / 1000 * FOLD_SHARE
                                      : p + (size_t)(end - p) / (size_t)nt * (size_t)(i + 1);
            if (target < cut) target = cut;
            /* the cut is the end of the line holding target: a line that does not end within
             * line_max gives up here, before any counting */
            const char *stop = (size_t)(end - target) > c->line_max ? target + c->line_max : end;
            const char *nl = find_nl(c, target, stop);
            if (!nl && stop < end) return -1;
            ch[i].end = nl ? nl + 1 : end;
        }
        cut = ch[i].end;
    }
    ch[0].main_thread = 1;
    return 0;
}

/* Chunk i's worker over the shared ids, cases and splits: chunk 0 reuses the main worker. */
static void chunk_worker(chunk *ch, int i, csl_parsed *out, const fast_ctx *c)
{
    if (i == 0) ch[0].w = out->w;
    else cs_load_worker_init(&ch[i].w, c->s, c->opt, c->name);
    ch[i].w.ids = &out->ids;
    ch[i].w.cases = &out->cases;
    ch[i].w.splits = &out->splits;
}

/* One pass (fast_ctx.sum_bins): the first chunk sums its rows instead of keeping their
 * probabilities, which then never take a page (engine/metrics/rowsums.h). Its rows are the
 * dataset's first, in order, whatever lines turn out blank or bad. Out of memory, the load
 * keeps every row instead. */
static void start_row_sums(chunk *ch, const fast_ctx *c, const csl_rows *all)
{
    const csl_schema *s = c->s;
    int bins = c->sum_bins;
    if (!(bins > 0 && c->plain && all->conf)) return;
    size_t bb = (prep_batch(s->k) + 1) * s->k * sizeof *ch[0].block;
    ch[0].block = malloc(bb);
    ch[1].block = malloc(bb);
    ch[0].sums = cs_rowsums_new(s->k, bins);
    ch[1].pending = cs_rowsums_new(s->k, bins);
    if (ch[0].block && ch[1].block && ch[0].sums && ch[1].pending) {
        ch[0].w.rows.prob = ch[0].block;
    } else {
        free(ch[0].block);
        free(ch[1].block);
        cs_rowsums_free(ch[0].sums);
        cs_rowsums_free(ch[1].pending);
        ch[0].block = ch[1].block = NULL;
        ch[0].sums = ch[1].pending = NULL;
    }
}

/* The folded mode (two threads over numbers only; see cs_load_fast): rows reserved for the
 * most the bytes could hold, the second thread counting the first chunk's lines while the
 * first parses it. Returns 0, or -1 when the reservation failed (nothing done: the counted
 * mode runs instead). */
static int parse_folded(chunk *ch, csl_parsed *out, csl_rows *all, size_t fold_rows, long line)
{
    const fast_ctx *c = ch[0].c;
    if (cs_load_rows_alloc(all, c->s, fold_rows) != 0) return -1;
    (void)cs_load_rows_alloc_caches(all, fold_rows);
    for (int i = 0; i < 2; i++) {
        chunk_worker(ch, i, out, c);
        ch[i].progressive = 1;
    }
    ch[0].line0 = line;
    view_rows(&ch[0].w.rows, all, c->s, 0, fold_rows);
    start_row_sums(ch, c, all);
    ch[1].prev_beg = ch[0].beg;
    ch[1].prev_end = ch[0].end;
    ch[1].all = all;
    ch[1].first_line = line;
    pthread_t tid;
    int started = cs_helper_start(&tid, count_then_parse, &ch[1]);
    parse_chunk(&ch[0]);
    if (started) pthread_join(tid, NULL);
    else count_then_parse(&ch[1]);
    return 0;
}

/* The counted mode: every chunk counts its lines (exactly when the row limit may bite), the
 * rows are allocated for the count, then every chunk parses into its place. Returns
 * FAST_GO_ON, CSL_BAIL, or CSL_DONE (*st: too many rows, out of memory). */
static int parse_counted(chunk *ch, int nt, csl_parsed *out, csl_rows *all, long line,
                         const csl_limits *lim, cs_status *st, cs_error *err)
{
    const fast_ctx *c = ch[0].c;
    run_all(ch, nt, count_chunk);
    for (int i = 0; i < nt; i++)
        if (ch[i].bail) { cs_load_parsed_free(out); return CSL_BAIL; }

    size_t bound = 0;
    for (int i = 0; i < nt; i++) bound += ch[i].records;
    if (bound > lim->rows)
        run_all(ch, nt, count_exact);              /* the limit may bite: count exactly */
    size_t total_cap = 0, records = 0;
    long l0 = line;
    for (int i = 0; i < nt; i++) {
        ch[i].base = total_cap;
        ch[i].line0 = l0;
        total_cap += ch[i].cap;
        l0 += (long)ch[i].newlines;
        /* refused before any array is allocated for it, at the first row over the limit */
        if (records + ch[i].records > lim->rows) {
            *st = cs_load_too_many_rows(err, c->name, record_line(&ch[i], lim->rows - records),
                                        lim);
            return CSL_DONE;
        }
        records += ch[i].records;
    }
    if (cs_load_rows_alloc(all, c->s, total_cap)) {
        *st = cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", c->name);
        return CSL_DONE;
    }
    /* the per-row caches too, made by the parse threads (without them, by the finisher) */
    (void)cs_load_rows_alloc_caches(all, total_cap);
    for (int i = 0; i < nt; i++) {
        chunk_worker(ch, i, out, c);
        view_rows(&ch[i].w.rows, all, c->s, ch[i].base, ch[i].cap);
    }
    int nomem = 0;
    for (int i = 1; i < nt; i++) nomem |= ch[i].nomem;
    if (!nomem) run_all(ch, nt, parse_chunk);
    return FAST_GO_ON;
}

/* A one-pass load whose second thread summed rows of its own: they are the rows after the
 * first thread's only when no line of the first chunk was blank or bad (its place, base,
 * counted the first chunk's lines); else every row must be loaded again. Frees the parse
 * and returns 1 then (the caller returns CSL_AGAIN), else 0. */
static int row_sums_out_of_step(chunk *ch, csl_parsed *out, const csl_rows *all)
{
    if (!(ch[1].sums && ch[0].w.rows.n != ch[1].base)) return 0;
    for (int i = 0; i < 2; i++) {
        free(ch[i].block);
        cs_rowsums_free(ch[i].sums);
        cs_rowsums_free(ch[i].pending);
        if (i) cs_load_worker_free(&ch[i].w);
    }
    out->w = ch[0].w;
    out->w.rows = *all;
    out->w.rows.n = 0;
    out->w.rows.growable = 1;
    cs_load_parsed_free(out);
    return 1;
}

/* Merges the chunks into chunk 0's worker, closing the gaps between chunks (blank or bad
 * lines) when the parse went well (ok), and gives out that worker over all the rows. Returns
 * the rows kept. */
static size_t merge_chunks(chunk *ch, int nt, csl_parsed *out, csl_rows *all, int ok)
{
    const csl_schema *s = ch[0].c->s;
    csl_worker *w = &ch[0].w;
    size_t dst = w->rows.n;
    out->blank_lines += ch[0].blank;
    for (int i = 1; i < nt; i++) {
        csl_worker *o = &ch[i].w;
        if (ok && o->rows.n && dst != ch[i].base) {
            cs_load_rows_move(all, s, dst, ch[i].base, o->rows.n);   /* gaps: blank or bad lines */
        }
        if (ok) dst += o->rows.n;
        if (o->bad && !w->bad) { w->first_line = o->first_line; w->first_col = o->first_col; }
        w->bad += o->bad;
        w->rows_read += o->rows_read;
        w->renorm += o->renorm;
        out->blank_lines += ch[i].blank;
        for (size_t m = 0; m < o->n_msgs; m++) {
            if (w->n_msgs < CS_LOAD_MAX_SKIP_MESSAGES) w->msgs[w->n_msgs++] = o->msgs[m];
            else free(o->msgs[m]);
        }
        for (size_t m = 0; m < o->n_bad_lines; m++)   /* chunks in file order: stays sorted */
            if (cs_load_bad_line(w, o->bad_lines[m])) break;
        o->n_msgs = 0;
        cs_load_worker_free(o);
    }
    out->w = *w;
    out->w.rows = *all;
    out->w.rows.n = dst;
    out->w.rows.growable = 1;       /* owned now; freed with the worker */
    return dst;
}

/* A summing load's sums, joined: the first chunk's (its rows are the first, `summed` of them),
 * then the rows the second thread kept (right after the first's, no gap: all of its rows when
 * it never reached a whole chunk) and its own sums, which start on a whole chunk: the sums of
 * every row, given to out, whose probabilities then go. Frees what is not given. Returns 0,
 * or -1 out of memory. */
static int finish_row_sums(chunk *ch, csl_parsed *out, size_t summed, size_t dst, int ok)
{
    int nomem = 0;
    free(ch[0].block);
    free(ch[1].block);
    cs_rowsums_free(ch[1].pending);   /* a second thread that never summed a row */
    csl_rows *rows = &out->w.rows;
    if (ch[0].sums && ok && !out->w.nomem) {
        size_t k = ch[0].c->s->k, kept = ch[1].sums ? ch[1].switch_at : dst - summed;
        if (cs_rowsums_add(ch[0].sums, rows->prob + summed * k, rows->label + summed, kept) ||
            (ch[1].sums && cs_rowsums_append(ch[0].sums, ch[1].sums))) {
            nomem = 1;
        } else {
            out->row_sums = ch[0].sums;
            ch[0].sums = NULL;
            free(rows->prob);
            rows->prob = NULL;
        }
    }
    cs_rowsums_free(ch[0].sums);
    cs_rowsums_free(ch[1].sums);
    return nomem ? -1 : 0;
}

/* The header and the delimiter (a quoted field near the start goes to the libcsv path), then
 * the header line into out->schema; *p and *line move to the first data line. Returns
 * FAST_GO_ON, CSL_BAIL or CSL_DONE (*st says why). */
static int open_header(fast_ctx *c, const char *data, size_t len, const csl_limits *lim,
                       const char **p, long *line, csl_parsed *out, cs_status *st, cs_error *err)
{
    const cs_load_options *opt = c->opt;
    const char *d = data, *end = data + len;
    if (len >= 3 && memcmp(d, "\xEF\xBB\xBF", 3) == 0) d += 3;
    size_t ext;
    if (cs_load_header_scan(c->name, d, (size_t)(end - d), 1, opt, lim, &ext, err) == CSL_HEAD_BAD) {
        *st = err->code;
        return CSL_DONE;
    }
    if (memchr(d, '"', (size_t)(end - d) < 65536 ? (size_t)(end - d) : 65536)) return CSL_BAIL;
    char delim = opt->delimiter ? opt->delimiter : cs_load_sniff_delim(d, ext);
    c->cls[(unsigned char)delim] = 1;
    c->delim = delim;
    c->cls['"'] = 2;
    c->cls['\r'] = 2;
    *line = 1;
    *p = d;
    return read_header(c, p, end, line, lim, out, st, err);
}

/* The schema's columns and the worker of chunk 0. */
static void start_worker(fast_ctx *c, csl_parsed *out, const csl_limits *lim)
{
    const csl_schema *s = &out->schema;
    plan_columns(c, s, lim);
    cs_load_worker_init(&out->w, s, c->opt, c->name);
    out->have_worker = 1;
    out->w.ids = &out->ids;
    out->w.cases = &out->cases;
    out->w.splits = &out->splits;
}

/* The thread plan over the data [p, end): its chunks cut into ch. The folded count, for two
 * threads over a file of numbers only (quick_row_num bounds every line it reads, so no line
 * needs the count pass's long-line check): the second thread counts the first chunk's
 * newlines itself while the first thread parses that chunk, and the second chunk is never
 * counted. The arrays are reserved for the most rows the bytes could hold (*fold_rows: a
 * row's line has ncols fields of a byte or more and their separators: address space, not
 * memory; the pages are faulted in as rows fill them) and shrunk to the rows by the
 * finisher. The first chunk is FOLD_SHARE of the bytes, so that the second thread's count
 * and parse end with the first thread's parse. Not when a row limit could bite (records: a
 * line of one byte and its LF), nor when the reservation fails. Returns the chunks, or -1
 * (give up: CSL_BAIL). */
static int plan_parse(fast_ctx *c, chunk *ch, int threads, const char *p, const char *end,
                      const csl_limits *lim, size_t *fold_rows)
{
    const csl_schema *s = c->s;
    size_t bytes = (size_t)(end - p);
    int nt = plan_threads(threads, bytes, s);
    int fold = nt == 2 && c->numeric && bytes / 2 + 1 <= lim->rows;
    *fold_rows = fold ? (bytes + 1) / (2 * s->ncols) + 2 : 0;
    memset(ch, 0, MAX_THREADS * sizeof *ch);
    return cut_chunks(c, ch, nt, fold, p, end) != 0 ? -1 : nt;
}

/* The merge, then the outcome: the first of a changed file, a bail, a cancel, no memory; a
 * summing load whose second thread's sums are out of place is to be loaded again. Returns
 * CSL_DONE (*st), CSL_BAIL or CSL_AGAIN. */
static int outcome(fast_ctx *c, chunk *ch, int nt, const char *data, csl_parsed *out,
                   csl_rows *all, cs_status *st, cs_error *err)
{
    const char *name = c->name;
    int bail = 0, cancelled = 0, nomem = 0;
    for (int i = 0; i < nt; i++) {
        bail |= ch[i].bail;
        cancelled |= ch[i].cancelled;
        nomem |= ch[i].nomem;
    }
    /* the mapping lost pages (the file shrank): the load is refused (cs_load_refuse_changed),
     * so neither the libcsv path nor a second pass reads the zeros that replaced them */
    int vanished = c->file_backed && cs_load_map_check(data);
    int ok = !bail && !cancelled && !nomem;
    if (ok && !vanished && row_sums_out_of_step(ch, out, all)) return CSL_AGAIN;
    size_t summed = ch[0].w.rows.n;
    size_t dst = merge_chunks(ch, nt, out, all, ok);
    if (finish_row_sums(ch, out, summed, dst, ok) != 0) nomem = 1;
    if (vanished) {
        *st = cs_error_set(err, CS_EINPUT, 0, 0, "%s: file changed while loading", name);
        return CSL_DONE;
    }
    if (bail) { cs_load_parsed_free(out); return CSL_BAIL; }
    if (!cancelled && (nomem || out->w.nomem))
        *st = cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", name);
    else if (cancelled || cs_load_tick(&c->pr, c->total))
        *st = cs_error_set(err, CS_ECANCELLED, 0, 0, "%s: loading cancelled", name);
    return CSL_DONE;
}

int cs_load_fast(const char *name, const char *data, size_t len, const cs_load_options *opt,
                 const csl_limits *lim, int threads, int scan, int file_backed, int sum_bins,
                 csl_parsed *out, cs_status *st, cs_error *err)
{
    memset(out, 0, sizeof *out);
    *st = CS_OK;
    fast_ctx c;
    fast_init(&c, name, data, len, opt, lim, scan, file_backed);
    c.sum_bins = sum_bins;
    if (cs_load_tick(&c.pr, 0)) {
        *st = cs_error_set(err, CS_ECANCELLED, 0, 0, "%s: loading cancelled", name);
        return CSL_DONE;
    }
    const char *p;
    long line;
    int r = open_header(&c, data, len, lim, &p, &line, out, st, err);
    if (r != FAST_GO_ON) return r;
    start_worker(&c, out, lim);
    chunk ch[MAX_THREADS];
    size_t fold_rows;
    int nt = plan_parse(&c, ch, threads, p, data + len, lim, &fold_rows);
    if (nt < 0) { cs_load_parsed_free(out); return CSL_BAIL; }
    /* the parse, in one of the two modes */
    csl_rows all;
    if (!(fold_rows && parse_folded(ch, out, &all, fold_rows, line) == 0)) {
        r = parse_counted(ch, nt, out, &all, line, lim, st, err);
        if (r != FAST_GO_ON) return r;
    }
    return outcome(&c, ch, nt, data, out, &all, st, err);
}

/* ---- the fast path over a stream of pieces (a gzip'd file: load_gzflat.c) -------------------- */

struct csl_fast_stream {
    fast_ctx c;
    csl_parsed *out;
    const csl_limits *lim;
    long line;          /* the line number of the next piece's first line */
    int started;        /* the header has been read: the schema and the worker exist */
};

csl_fast_stream *cs_load_fast_stream_new(const char *name, const cs_load_options *opt,
                                         const csl_limits *lim, int scan, csl_parsed *out)
{
    memset(out, 0, sizeof *out);
    csl_fast_stream *fs = malloc(sizeof *fs);
    if (!fs) return NULL;
    /* total 0: the parse reports no progress of its own, the inflation does (load_gzflat.c) */
    fast_init(&fs->c, name, "", 0, opt, lim, scan, 0);
    fs->out = out;
    fs->lim = lim;
    fs->line = 1;
    fs->started = 0;
    return fs;
}

void cs_load_fast_stream_free(csl_fast_stream *fs)
{
    free(fs);
}

size_t cs_load_fast_stream_line_max(const csl_fast_stream *fs)
{
    return fs->started ? fs->c.line_max : 0;
}

/* The row limit over one more piece, the chunk ch: nothing to do while its bytes cannot hold
 * the rows that would pass it (a record is a byte or more); else its records counted exactly
 * and the load refused, as cs_load_fast refuses it, at the first row over the limit. Returns
 * FAST_GO_ON, CSL_BAIL (a line too long, found by the count) or CSL_DONE (*st). */
static int stream_row_limit(chunk *ch, const csl_parsed *out, const csl_limits *lim,
                            cs_status *st, cs_error *err)
{
    size_t done = out->w.rows_read, bytes = (size_t)(ch->end - ch->beg);
    if (done <= lim->rows && bytes <= lim->rows - done) return FAST_GO_ON;
    count_exact(ch);
    if (ch->bail) return CSL_BAIL;
    if (done <= lim->rows && ch->records <= lim->rows - done) return FAST_GO_ON;
    *st = cs_load_too_many_rows(err, ch->c->name, record_line(ch, lim->rows - done), lim);
    return CSL_DONE;
}

/* The lines [p, end) of a piece read into out's growable rows by one parse_chunk, its blank
 * lines counted; fs->line moves past them. Returns CSL_MORE, CSL_BAIL (out freed) or
 * CSL_DONE (*st: too many rows, out of memory, cancelled). */
static int stream_lines(csl_fast_stream *fs, const char *p, const char *end, cs_status *st,
                        cs_error *err)
{
    csl_parsed *out = fs->out;
    chunk ch;
    memset(&ch, 0, sizeof ch);
    ch.c = &fs->c;
    ch.beg = p;
    ch.end = end;
    ch.line0 = fs->line;
    ch.main_thread = 1;
    int r = stream_row_limit(&ch, out, fs->lim, st, err);
    if (r == CSL_BAIL) cs_load_parsed_free(out);
    if (r != FAST_GO_ON) return r;
    ch.w = out->w;
    parse_chunk(&ch);
    out->w = ch.w;
    out->blank_lines += ch.blank;
    fs->line = ch.line_next;
    if (ch.bail) { cs_load_parsed_free(out); return CSL_BAIL; }
    if (ch.cancelled) {
        *st = cs_error_set(err, CS_ECANCELLED, 0, 0, "%s: loading cancelled", fs->c.name);
        return CSL_DONE;
    }
    if (ch.nomem || out->w.nomem) {
        *st = cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", fs->c.name);
        return CSL_DONE;
    }
    return CSL_MORE;
}

int cs_load_fast_stream_feed(csl_fast_stream *fs, const char *data, size_t len, size_t avail,
                             cs_status *st, cs_error *err)
{
    fast_ctx *c = &fs->c;
    const char *p = data, *end = data + len;
    c->data_end = data + avail;     /* the quick readers may look ahead that far */
    if (!fs->started) {
        int r = open_header(c, data, len, fs->lim, &p, &fs->line, fs->out, st, err);
        if (r != FAST_GO_ON) return r;
        start_worker(c, fs->out, fs->lim);
        fs->out->w.rows.growable = 1;   /* no count ahead: the rows grow as pieces come */
        fs->started = 1;
    }
    return p < end ? stream_lines(fs, p, end, st, err) : CSL_MORE;
}
