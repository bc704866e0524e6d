/* calscope engine, loader internals shared by the src/engine/load/ sources and the loader tests.
 *
 * Pipeline: input (plain bytes, mmap, fd or gzip) -> one of two tokenisers -> the shared
 * row checker (load_row.c) -> the shared finisher (load.c). Both tokenisers hand the row
 * checker the same trimmed fields with the same physical line numbers, so the arrays and the
 * messages they produce are identical by construction; tests check it anyway.
 *   - load_csv.c:  libcsv, the reference path for everything (quotes, stdin, gzip).
 *   - load_fast.c: a quote-free tokeniser over a whole in-memory file, split at line
 *                  boundaries across threads (byte scanner: load_scan.h; numbers:
 *                  load_qnum.h, which only answers with cs_load_parse_double's bits). It gives up (returns CSL_BAIL) the moment it
 *                  sees a quote or a lone CR, and the caller reruns the libcsv path. A gzip'd
 *                  file is fed to it as it is inflated, whole lines a step at a time
 *                  (load_gzflat.c, cs_load_fast_stream_*). */
#ifndef CALSCOPE_LOAD_INTERNAL_H
#define CALSCOPE_LOAD_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "calscope/load.h"
#include "calscope/text.h"
#include "engine/filemap/filemap.h"
#include "engine/num/num.h"
#include "calscope/run.h"

/* ---- tuning (tests and benchmarks) ---------------------------------------------------- */

enum { CSL_PATH_AUTO = 0, CSL_PATH_CSV = 1, CSL_PATH_FAST = 2 };

/* How the fast path finds delimiters and line ends (load_scan.h): AUTO = the environment
 * variable CALSCOPE_SCAN ("sse2" or "swar") when set, else SSE2 where the compiler has it, else
 * SWAR. Both give the same results bit for bit; the choice exists so that tests run both. */
enum { CSL_SCAN_AUTO = 0, CSL_SCAN_SWAR = 1, CSL_SCAN_SSE2 = 2 };

/* The scanner a load uses for the requested kind: AUTO resolved as above, SSE2 where it is not
 * compiled in becomes SWAR. Thread-safe (reads the environment). */
int cs_load_scan_kind(int requested);

typedef struct cs_load_tuning {
    int path;        /* CSL_PATH_*; AUTO = fast when eligible; FAST = fast or fail (tests) */
    size_t block;    /* libcsv feed size in bytes (0 = 1 MiB); a gzip'd file's inflate step on
                        the fast path (0 = CSL_GZ_STEP) */
    int threads;     /* fast path threads (0 = online CPUs, at most 8) */
    int used_path;   /* out: the path that produced the result */
    int file_backed; /* the data is a read-only private mapping of a file: the fast path may
                        drop pages it has read (they fault back in from the page cache) */
    int scan;        /* CSL_SCAN_*: the fast path's scanner (tests run each) */
} cs_load_tuning;

/* cs_load_buffer with explicit tuning. With path FAST and a file the fast path cannot take,
 * returns NULL with err->code CS_EUSAGE and "fast path not applicable". */
cs_dataset *cs_load_buffer_tuned(const char *name, const void *data, size_t len,
                                 const cs_load_options *opt, cs_load_summary *summary,
                                 cs_error *err, cs_load_tuning *tuning);

/* ---- input limits (load_limits.c) ------------------------------------------------------- */

/* What one load may hold: the header must end within `header` bytes of the (decompressed)
 * input, no field may be longer than `field` bytes, and a file may have at most `rows` data
 * rows. Each is refused at once with FILE:LINE:COL, so the memory of a load follows the data
 * it keeps, never the bytes it would have to skip. */
typedef struct csl_limits {
    size_t rows, header, field;
} csl_limits;

/* CS_DATASET_MAX_ROWS, CS_LOAD_MAX_HEADER_BYTES, CS_LOAD_MAX_FIELD_BYTES. */
void cs_load_limits_default(csl_limits *lim);

/* cs_load_buffer_tuned with explicit limits (tests lower them to reach every refusal with a
 * small input); lim NULL = the defaults. */
cs_dataset *cs_load_buffer_limited(const char *name, const void *data, size_t len,
                                   const cs_load_options *opt, cs_load_summary *summary,
                                   cs_error *err, cs_load_tuning *tuning, const csl_limits *lim);

enum { CSL_HEAD_BAD = -1, CSL_HEAD_MORE = 0, CSL_HEAD_OK = 1 };

/* Looks for the end of the header in buf[0..len) (BOM already skipped): the offset just past
 * the line end (LF, CRLF or a lone CR, outside double quotes) of the first line that holds
 * more than spaces, tabs and CRs. Both paths call it on the same bytes, so they sniff the
 * same extent and refuse with the same words. Returns
 *   CSL_HEAD_OK   with *extent set (len when eof comes first),
 *   CSL_HEAD_MORE when buf holds no end yet and more input may follow (!eof),
 *   CSL_HEAD_BAD  with err filled (CS_EINPUT, "FILE:LINE:COL: ..."): a control byte other
 *                 than tab, CR and LF (and the delimiter) in the header, or no end of the header
 *                 within lim->header bytes. With opt->no_header the first line is data: no
 *                 byte is refused and a first line longer than lim->header gives
 *                 CSL_HEAD_OK with *extent = lim->header (the sniffing extent).
 * Reads at most lim->header + 1 bytes. Thread-safe. */
int cs_load_header_scan(const char *name, const char *buf, size_t len, int eof,
                        const cs_load_options *opt, const csl_limits *lim, size_t *extent,
                        cs_error *err);

/* The located refusals of a field and of a row count over the limits (one wording for both
 * paths). Return CS_EINPUT. */
cs_status cs_load_field_too_long(cs_error *err, const char *name, long line, long col,
                                 const csl_limits *lim);
cs_status cs_load_too_many_rows(cs_error *err, const char *name, long line,
                                const csl_limits *lim);

/* ---- fields, schema (load_header.c) ----------------------------------------------------- */

typedef struct csl_field {
    const char *p;
    size_t len;
} csl_field;

/* The field without the spaces and tabs around it. libcsv and the fast path already trim
 * unquoted fields; trimming again here makes a quoted `" 0.3"` read like an unquoted ` 0.3`
 * (one rule, whatever the quoting). */
static inline csl_field cs_load_trim(csl_field f)
{
    while (f.len && (f.p[0] == ' ' || f.p[0] == '\t')) { f.p++; f.len--; }
    while (f.len && (f.p[f.len - 1] == ' ' || f.p[f.len - 1] == '\t')) f.len--;
    return f;
}

enum csl_role {
    CSL_IGNORE = 0, CSL_LABEL, CSL_PROB, CSL_LOGIT, CSL_BINARY, CSL_ID, CSL_TTA, CSL_CASE,
    CSL_SPLIT                /* the column cs_load_options.split_column names */
};

typedef struct csl_col {  /* 8 bytes a column: a 100,000-column header keeps 100,000 */
    int role;
    int cls;               /* class index for CSL_PROB / CSL_LOGIT */
} csl_col;

typedef struct csl_schema {
    size_t ncols;
    csl_col *col;
    char *col_text;        /* the column names in column order, NUL-separated (only messages
                              read them: cs_load_col_name); inside the class_names block */
    size_t named;          /* columns whose names col_text holds: ncols once the header is
                              built, fewer when a column was refused */
    size_t k;
    char **class_names;    /* ONE block in the dataset's class_names layout (calscope/dataset.h):
                              room for the class pointers, then col_text, then the text of
                              generated names ("0", "1", ...); the k names point into col_text
                              (a class column's name after its prefix) or into that tail. Owned
                              until the finisher moves it into the dataset, so loading K classes
                              costs one allocation, not K. */
    struct cs_classmap *classes; /* the k names as engine/classes.h resolves them (owned;
                              borrows the column names) */
    int binary, from_logits, has_id, has_tta, has_case, has_split;
    long first_prob_col;   /* 1-based column of the first probability/logit column */
    long header_line;      /* physical line of the header (or of the first row, no_header) */
    char **ignored;        /* header names not recognised (owned) */
    size_t n_ignored;
} csl_schema;

/* The header text of column c (0-based), found by walking col_text: O(c), for messages only
 * (a pointer per column would cost 8 bytes a column for them). "" when c >= s->named. */
const char *cs_load_col_name(const csl_schema *s, size_t c);

/* Chooses the delimiter from the first non-blank line of buf[0..len): the most frequent of
 * `,` `;` tab outside double quotes (ties in that order; none -> `,`). */
char cs_load_sniff_delim(const char *buf, size_t len);

/* Offset just past the newline that ends the first non-blank line, or 0 when buf does not
 * contain one yet. Both paths sniff exactly buf[0..this) so they agree. */
size_t cs_load_sniff_extent(const char *buf, size_t len);

/* Builds the schema from header fields (or, with opt->no_header, from the first row's field
 * count). File-level problems fill err (CS_EINPUT) with "FILE:LINE:COL: reason". */
cs_status cs_load_schema_build(csl_schema *s, const char *name, const csl_field *f, size_t nf,
                               long line, const cs_load_options *opt, cs_error *err);

/* The same one column at a time, for a tokeniser that does not keep the header's fields (the
 * fast path: a 100,000-column header then needs no array of fields): begin with the number
 * of columns and a bound on the bytes of their names (sum of field length + 1), then one
 * cs_load_schema_column per field in order (each stops at the first problem), then
 * cs_load_schema_end. Header lines only (not opt->no_header). The schema is filled as by
 * cs_load_schema_build; free it with cs_load_schema_free whatever the outcome. */
typedef struct csl_schema_builder {
    csl_schema *s;
    const char *name;
    long line;
    const cs_load_options *opt;
    cs_error *err;
    size_t c;                       /* columns given so far */
    char *text, *text_end;          /* where the next name is copied, and the bound */
    long seen[CSL_SPLIT + 1];       /* column (1-based) that took each singleton role */
    long prob_col, logit_col, binary_col, label_col;
} csl_schema_builder;

cs_status cs_load_schema_begin(csl_schema_builder *b, csl_schema *s, const char *name,
                               size_t nf, size_t text_bound, long line,
                               const cs_load_options *opt, cs_error *err);
cs_status cs_load_schema_column(csl_schema_builder *b, csl_field f);
cs_status cs_load_schema_end(csl_schema_builder *b);
void cs_load_schema_free(csl_schema *s);

/* ---- rows (load_row.c) ------------------------------------------------------------------ */

typedef struct csl_intern {
    char **names;
    size_t n, cap;
    uint32_t *slots;       /* open addressing, index+1, 0 = empty */
    size_t nslots;
} csl_intern;

typedef struct csl_rows {
    size_t n, cap;
    int growable;          /* libcsv path grows the arrays; the fast path preallocates */
    /* prob and logit hold rows from pw on: row i at prob + (i - pw) * k. 0 but for the
     * one-pass chunk of the fast path (load_fast.c), whose prob is a block of a few rows that
     * are summed and then written over (pw moves on to the next row). */
    size_t pw;
    double *prob, *logit;
    int32_t *label, *id, *tta, *case_id, *split;
    uint32_t *line;        /* physical line of each row (0 beyond UINT32_MAX) */
    /* The dataset's per-row caches (calscope/dataset.h conf, pred, correct), when the parse
     * threads make them as they go (the fast path: each row's while its values are in cache);
     * NULL otherwise, and the finisher makes them after the load. Owned like the arrays
     * above, moved with them by cs_load_rows_move. */
    double *conf;
    int32_t *pred;
    uint8_t *correct;
} csl_rows;

typedef struct csl_worker {
    const csl_schema *s;
    const cs_load_options *opt;
    const char *name;
    csl_rows rows;
    csl_intern *ids, *cases, *splits; /* NULL unless the schema has id / case / split */
    size_t rows_read, blank_lines, renorm, bad;
    size_t bad_scale;      /* of the bad rows, those refused for a value outside [0,1] or their sum */
    long first_line, first_col;
    char *msgs[CS_LOAD_MAX_SKIP_MESSAGES];
    size_t n_msgs;
    /* --skip-bad-rows: the line of every skipped row, in file order, so each kept row knows
     * its data row position in the file (cs_dataset.row_pos: files without ids pair by it) */
    uint32_t *bad_lines;
    size_t n_bad_lines, cap_bad_lines;
    int nomem;
} csl_worker;

/* Prepares a worker; its rows stay empty (the caller sets them, or marks them growable). */
void cs_load_worker_init(csl_worker *w, const csl_schema *s, const cs_load_options *opt,
                         const char *name);
void cs_load_worker_free(csl_worker *w);   /* frees messages, skipped lines and growable rows */
/* Appends a skipped row's line to w->bad_lines (the fast path's merge gathers its chunks'
 * with it); -1 with w->nomem set when out of memory. The worker's thread. */
int cs_load_bad_line(csl_worker *w, uint32_t line);

/* Where the row being read puts its values as written: the next row of the arrays itself (the
 * logit row of a logit file, else the probability row), so a row is never copied and a wide
 * row needs no buffer of its own; a row that turns out bad is simply not counted. Grows
 * growable rows. NULL, with w->nomem set, when out of memory (or out of the room the fast
 * path counted). */
double *cs_load_row_slot(csl_worker *w);

/* Checks one data row (fields already trimmed) and stores it when good. Returns 0, or -1 when
 * out of memory (w->nomem set). */
int cs_load_row(csl_worker *w, const csl_field *f, size_t nf, long line);

/* The same for a row whose fields were already parsed by the fast path's quick scanner (which
 * only accepts fields the checker would accept with the same bits): cs_load_row_slot(w)[0..k)
 * holds the values as written, in class order. Runs the row-level checks (sum) and keeps it.
 * sum: NULL, or the probabilities' sum already taken as the row was read, in class order from
 * 0.0 (the same bits as the checker's own sum; a row of 100,000 classes is one long chain of
 * additions, cheaper beside the parse than after it). Ignored for logits. */
int cs_load_row_values(csl_worker *w, int32_t label, int32_t tta, const csl_field *idf,
                       const csl_field *casef, const csl_field *splitf, long line,
                       const double *sum);

/* The same for a row that came as numbers, not text (the .npy pair loader, load_npy.c):
 * cs_load_row_slot(w)[0..k) holds the values as read, in class order; each is checked as
 * cs_load_row checks a field (finite; a probability in [0, 1]; quoted in the message as the
 * shortest text that reads back), then `label` as cs_load_row checks a label index (an
 * integer in 0..k-1), its messages naming `label_file`, column 1; then the row checks of
 * cs_load_row_values. Returns 0, or -1 when out of memory. */
int cs_load_row_numbers(csl_worker *w, double label, const char *label_file, long line);

/* The checks across the rows of one id in a long test-time-augmentation file (id and tta
 * columns), run once on the stored rows after both tokenisers: each id has exactly one tta 0
 * row, and every row of an id has that row's label. A row that breaks one is a bad row like
 * any other (counted, "FILE:LINE:COL: reason" message) and is removed from the rows; the first
 * tta 0 row of an id is the one kept. Does nothing when the file is refused anyway (strict mode
 * with bad rows: those rows were not stored). Returns 0, or -1 when out of memory. */
int cs_load_check_tta(csl_worker *w);

/* Allocates `cap` rows of every array the schema needs. Returns 0 or -1. */
int cs_load_rows_alloc(csl_rows *r, const csl_schema *s, size_t cap);
/* Allocates `cap` rows of the per-row caches (conf, pred, correct) of r. Returns 0, or -1
 * with none of them allocated (the finisher then makes them after the load). */
int cs_load_rows_alloc_caches(csl_rows *r, size_t cap);
/* Moves rows [src, src+n) to [dst, dst+n) in every array (the ranges may overlap). */
void cs_load_rows_move(csl_rows *r, const csl_schema *s, size_t dst, size_t src, size_t n);
void cs_load_rows_free(csl_rows *r);

void cs_load_intern_free(csl_intern *t);

/* "FILE:LINE:COL: " / "FILE:LINE: " / "FILE: " into buf; returns the length written. */
size_t cs_load_format_pos(char *buf, size_t cap, const char *name, long line, long col);


/* ---- progress / cancel (load.c) --------------------------------------------------------- */

typedef struct csl_progress {
    const cs_load_options *opt;
    size_t total;          /* 0 = unknown */
    double last;           /* monotonic seconds of the last call */
    double last_frac;
    int calls;
} csl_progress;

/* Called per block from the loading thread: reports progress (rate-limited) and returns 1
 * when the cancel flag is raised. */
int cs_load_tick(csl_progress *pr, size_t done);
int cs_load_cancelled(const cs_load_options *opt);

/* ---- the two paths and the finisher ------------------------------------------------------ */

/* CSL_AGAIN (cs_load_fast, a summing load only): the second thread summed rows whose place
 * turned out wrong (blank or bad lines in the first chunk); the caller loads again keeping
 * every row (sum_bins 0). */
enum { CSL_DONE = 0, CSL_BAIL = 1, CSL_AGAIN = 2, CSL_MORE = 3 };

/* Byte source for the libcsv path (load_input.c). */
typedef struct csl_src csl_src;
csl_src *cs_load_src_mem(const void *data, size_t len);
/* For a memory source over a read-only file mapping: the pages of blocks already handed out
 * are dropped (MADV_DONTNEED) as reading goes on, so a long scan keeps only the block in use. */
void cs_load_src_mem_drop_pages(csl_src *src);
csl_src *cs_load_src_fd(int fd, size_t block);
/* Wraps src in a gzip decoder when its first bytes are the gzip magic; sets *gz. Returns the
 * (possibly new) source, or NULL on ENOMEM (src is then freed). */
csl_src *cs_load_src_gunzip_if(csl_src *src, size_t block, int *gz);
/* Next block of bytes: returns 1 with *p,*n set, 0 at the end, -1 on error (message in
 * cs_load_src_error). */
int cs_load_src_next(csl_src *src, const void **p, size_t *n);
/* cs_load_src_next's answer without taking it: the next cs_load_src_next gives the same block
 * (or end, or error) again. Lets the loader look at a pipe's first bytes before choosing a reader. */
int cs_load_src_peek(csl_src *src, const void **p, size_t *n);
const char *cs_load_src_error(const csl_src *src);
int cs_load_src_nomem(const csl_src *src);
size_t cs_load_src_consumed(const csl_src *src);  /* raw (compressed) bytes read so far */
void cs_load_src_free(csl_src *src);

/* Result both paths hand to the finisher. */
typedef struct csl_parsed {
    csl_schema schema;
    int have_schema;
    csl_worker w;
    int have_worker;
    csl_intern ids, cases, splits;
    size_t blank_lines;
    /* a summing load (load_sums.h): the sums of every row, whose probabilities
     * w.rows does not hold (w.rows.prob NULL); owned until the fast path's caller takes them */
    struct cs_rowsums *row_sums;
} csl_parsed;

/* libcsv path over any source. Returns CS_OK with *out filled, or an error in err. */
cs_status cs_load_csv(const char *name, csl_src *src, size_t total, const cs_load_options *opt,
                      const csl_limits *lim, size_t block, csl_parsed *out, cs_error *err);

/* Fast path over a whole file in memory. Returns CSL_DONE (status in *st), CSL_AGAIN or CSL_BAIL; it
 * also bails on a field or line longer than the limits allow, so that libcsv words it.
 * sum_bins > 0: sum the rows' probabilities instead of keeping them where the file allows
 * (out->row_sums; load_sums.h). */
int cs_load_fast(const char *name, const char *data, size_t len, const cs_load_options *opt,
                 const csl_limits *lim, int threads, int scan, int file_backed, int sum_bins,
                 csl_parsed *out, cs_status *st, cs_error *err);

void cs_load_parsed_free(csl_parsed *p);

/* The fast path over a stream of pieces of text (load_gzflat.c feeds it the lines of a gzip'd
 * CSV as they are inflated), into *out (emptied by _new; the rows grow as pieces come, no count
 * ahead). Each piece data[0..len) is whole lines: it ends just past an LF, or is the rest of
 * the input; the first piece holds the whole header (cs_load_header_scan found its end at or
 * before len). The bytes data[len..avail) may be read (the next piece's start): the quick
 * readers look ahead. Line numbers, blank lines, bad rows, the row limit and every refusal are
 * cs_load_fast's over the same text. _feed returns
 *   CSL_MORE  to go on with the next piece;
 *   CSL_BAIL  (out freed): the fast path does not take the text (a quote, a lone CR, a field
 *             or line past the limits): the caller runs the libcsv path from the start;
 *   CSL_DONE  with *st: the load ends here (the header's refusal, a file of blank lines only,
 *             too many rows, out of memory, cancelled); out goes to the finisher.
 * _line_max: the longest line the fast path takes under the header (0 before the first
 * piece): a partial line past it is given up on. One thread; no helper thread is started. */
typedef struct csl_fast_stream csl_fast_stream;
csl_fast_stream *cs_load_fast_stream_new(const char *name, const cs_load_options *opt,
                                         const csl_limits *lim, int scan, csl_parsed *out);
int cs_load_fast_stream_feed(csl_fast_stream *fs, const char *data, size_t len, size_t avail,
                             cs_status *st, cs_error *err);
size_t cs_load_fast_stream_line_max(const csl_fast_stream *fs);
void cs_load_fast_stream_free(csl_fast_stream *fs);

/* A gzip'd CSV, data[0..len) (file_backed: a read-only mapping of the file, whose pages are
 * dropped once inflated, as cs_load_src_mem_drop_pages does), read by the fast path as it is
 * inflated, `step` bytes at a time (0: CSL_GZ_STEP; the tests cut lines at every offset): the
 * complete lines of what is inflated go to cs_load_fast_stream_feed, the partial last line is
 * carried into the next step. So the text held is one step and one partial line (never more
 * than the longest line the fast path takes, nor CSL_GZ_LINE_MAX), whatever the file's size.
 * Returns CSL_DONE (*out for the finisher, status in *st), or CSL_BAIL with nothing held when
 * the fast path does not take the file (a quote; a header, field or line past the limits; a
 * line past CSL_GZ_LINE_MAX; an empty stream) or the stream has a fault (corrupt, cut,
 * trailing bytes, a read error or a file that shrank): the caller then streams it through the
 * libcsv path, which words any fault. With a budget of threads other than 1 (threads <= 0:
 * the online cores), the next step is inflated on a helper (cs_run_pair) while the lines of
 * the last one are parsed, so the text is held twice (two buffers of a step and a line).
 * *held (not NULL): the most bytes of text held at once, both buffers (the tests' measure).
 * Progress is the compressed bytes read. The loading thread. */
#define CSL_GZ_STEP ((size_t)1 << 20)
#define CSL_GZ_LINE_MAX ((size_t)1 << 30)
int cs_load_gz_stream(const char *name, const void *data, size_t len, int file_backed,
                      const cs_load_options *opt, const csl_limits *lim, size_t step, int scan,
                      int threads, csl_parsed *out, cs_status *st, cs_error *err, size_t *held);

/* The finisher both paths end in (load.c): turns a parse into a prepared dataset, or into one
 * refusal message (strict mode), fills the summary and frees what ps holds. The dataset is
 * prepared under run's thread budget (NULL: the online cores). */
cs_dataset *cs_load_finish(const char *name, csl_parsed *ps, const cs_load_options *opt,
                           cs_load_summary *sum, int gz, const cs_run *run, cs_status st,
                           cs_error *err);

/* A .npy prediction file with its labels in opt->labels (load_npy.c): see calscope/load.h. */
cs_dataset *cs_load_npy(const char *path, const cs_load_options *opt, cs_load_summary *sum,
                        cs_error *err);

/* An .npz archive of predictions and labels (load_npy.c): see calscope/load.h. */
cs_dataset *cs_load_npz(const char *path, const cs_load_options *opt, cs_load_summary *sum,
                        cs_error *err);

/* ---- a file that changes while it loads (engine/filemap/filemap.h; the refusal here) ---- */

/* Applies the rule "a file that changed while it loaded is refused": when `vanished` or when fd
 * no longer matches `before` (cs_load_changed), frees d and what summary holds and returns NULL
 * with CS_EINPUT "FILE: file changed while loading" (a cancelled load stays cancelled).
 * Otherwise returns d unchanged. Only meaningful for regular files. cs_load_changed: 1 when fd
 * (fd < 0: the file `path` names) has another size or modification time than `before`, or
 * `path` now names another file (path "-" skips that last check), else 0. Any thread. */
cs_dataset *cs_load_refuse_changed(const char *path, int fd, const struct stat *before,
                                   int vanished, cs_dataset *d, cs_load_summary *summary,
                                   cs_error *err);

/* load_seg.c: a statistics dataset (dataset.h `stats`). cs_load_wrap_stats takes st (freed on
 * failure too) and returns a row-less dataset owned by the caller, or NULL with err (CS_ENOMEM);
 * cs_load_stats_file reads path first (cs_segstats_read's errors; CS_EUSAGE for an option of
 * prediction rows or of the reduction, which would change nothing). Any thread. */
struct cs_segstats;
cs_dataset *cs_load_wrap_stats(const char *path, struct cs_segstats *st, cs_error *err);
cs_dataset *cs_load_stats_file(const char *path, const cs_load_options *opt, cs_error *err);
/* The same for a statistics file arriving through src (a pipe or standard input, its first bytes
 * peeked): read whole into memory (at most CS_SEGSTATS_TEXT_MAX bytes), then parsed. Does not
 * free src. */
cs_dataset *cs_load_stats_stream(const char *path, csl_src *src, const cs_load_options *opt,
                                 cs_error *err);
/* A manifest (cs_seg_manifest_sniff) reduced with opt's seg_* options, sum_tol, progress and
 * cancel: a statistics dataset owned by the caller, or NULL with err (the plan's, the
 * mapping's and the reduction's errors; CS_EUSAGE for --labels / --npy-logits). */
cs_dataset *cs_load_manifest(const char *path, const cs_load_options *opt, cs_load_summary *summary,
                             cs_error *err);
/* A folder of probability files paired by stem with the label maps of the folder opt->labels
 * (cs_seg_plan_folders, with opt->seg_prob_suffix), reduced as cs_load_manifest. */
cs_dataset *cs_load_folders(const char *path, const cs_load_options *opt, cs_load_summary *summary, cs_error *err);

#endif
