/* Internals of `calscope report` shared by its files: parsed options (args.c), per-file results
 * (report.c), --check gates (checks.c) and the three output formats (out_*.c).
 * Single-threaded; everything here belongs to report_main's call. */
#ifndef CALSCOPE_REPORT_REP_H
#define CALSCOPE_REPORT_REP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "calscope/dataset.h"
#include "calscope/cases.h"
#include "calscope/catalogue.h"
#include "calscope/compat.h"
#include "calscope/resample.h"
#include "calscope/likert.h"
#include "calscope/load.h"
#include "calscope/measure.h"
#include "calscope/metrics.h"
#include "chart/cells.h"
#include "cli/report/methods.h"
#include "session/flags.h"

/* --format (the flag table's values, session/flags.h) */
typedef ss_format rep_format;
#define REP_TEXT SS_FORMAT_TEXT
#define REP_JSON SS_FORMAT_JSON
#define REP_CSV SS_FORMAT_CSV

typedef enum rep_op { REP_LE, REP_LT, REP_GE, REP_GT } rep_op;

typedef struct rep_check {
    const char *text;   /* as the user wrote it (argv, not owned) */
    int metric;         /* a cs_metric_id (calscope/catalogue.h) */
    rep_op op;
    double value;
} rep_check;

/* The report's options are the session layer's parse of argv (flags.h): one table for both
 * front ends. */
typedef ss_opts rep_opts;

#define REP_COMPAT_ALL SS_COMPAT_ALL

/* Parses argv (argv[0] = "report") with the flag table, --check gates included. Returns 0 to go
 * on, REP_EXIT_HELP after printing --help, or 2 after printing a usage error. o must be freed
 * with rep_opts_free in every case. */
#define REP_EXIT_HELP SS_EXIT_HELP
int rep_parse_args(int argc, char **argv, rep_opts *o);
void rep_opts_free(rep_opts *o);

/* One FILE argument and what became of it. */
typedef struct rep_file {
    const char *path;
    cs_load_summary sum;   /* filled when the loader got far enough (rows_read etc.) */
    int loaded;            /* 0: rejected or unreadable; error holds the message */
    int usage_error;       /* the settings do not apply to this file (bad class name...) */
    char error[1100];      /* "FILE:LINE:COL: reason" when !loaded or usage_error */
    size_t rows, classes;
    size_t samples;        /* rows that are samples (tta == 0 rows of a long TTA file) */
    int tta;               /* an id/tta long file (RECE-M applies) */
    int stats_fine;        /* a statistics dataset: its fine resolution F, else 0 */
    int stats_regions;     /* ... whose channels are independent sigmoid regions */
    size_t stats_cases;    /* ... its cases (rows are then its voxels) */
    /* what cs_measure measured (calscope/measure.h): m.selected, the values m.result (valid
     * when m.evaluated; 0 when the selection kept nothing), m.ci (--ci), m.curve (--curve),
     * m.cases (a file with a case column), m.topk_* (--topk-bars: each k as used, once),
     * m.likert (--likert). Owned. */
    cs_measurement m;
    int has_compat;
    cs_compat_report compat; /* owned, --compat */
} rep_file;

/* The k a --topk-bars entry measures on a file of `classes` classes: full (0) and k above the
 * class count are the class count (the top-K set is every class). */
int rep_topk_used(int k, size_t classes);

/* --check: parses "ece<=0.05" (blanks allowed around the parts). Returns 0, or -1 with a
 * message in msg. */
int rep_check_parse(const char *text, rep_check *c, char *msg, size_t msg_size);
/* Evaluates every check on every evaluated file and prints one line per check and file to
 * stderr: "calscope: check passed: FILE: ece = 0.0147 <= 0.02", or
 * "calscope: check failed: FILE: ece = 0.0812 (want ece<=0.05)". Returns the failure count. */
size_t rep_checks_run(const rep_opts *o, const rep_file *files, size_t n);

/* --compare of files A and B. */
typedef struct rep_compare {
    int by_case;           /* two statistics files: paired over their cases */
    const char *a, *b;
    int done;              /* res is valid */
    int status;            /* exit status the failure implies (0 when done or not asked) */
    cs_compare res;
    const rep_methods *methods; /* the --compare methods table (methods.c), or NULL */
    rep_pair_errors pair;  /* files that do not pair with the reference (then no table) */
    int verdict_metric;    /* --verdict-metric (default ece) */
    unsigned text_metrics; /* --metrics: the text tables' metrics (rep_text_metrics) */
    double bins;           /* the small-sample rule's bins (cs_too_few_bins of the settings) */
} rep_compare;

/* 1 when the done comparison has too few pairs (cases by_case) under the small-sample rule
 * (cs_too_few): its intervals and p_better are marked "?" and decide nothing. */
int rep_compare_too_few(const rep_compare *cmp);
/* The "?" note under a table whose paired numbers rest on too few pairs (`pairs`, fewer than
 * `min`). */
void rep_too_few_note(FILE *out, size_t pairs, size_t min, int by_case);

/* Output writers (stdout). cmp is NULL without --compare. */
void rep_out_json(FILE *out, const rep_opts *o, const rep_file *files, size_t n, const rep_compare *cmp);
/* One loaded file's entry of the "files" array, as rep_out_json writes it (indented, on
 * several lines), and one rejected file's entry of "errors" ({"path", "status", "message"}). */
void rep_out_json_file(FILE *out, const rep_opts *o, const rep_file *f);
void rep_out_json_error(FILE *out, const rep_file *f);

/* Loads and measures one file as the report does for each FILE (f->path set, the rest zero);
 * frees the dataset. f then holds what rep_out_json_file prints, or the error; the caller
 * releases it with rep_file_release. */
void rep_measure_file(const rep_opts *o, rep_file *f);
void rep_file_release(rep_file *f);

/* --follow DIR --format ndjson (follow.c): the whole command after parsing. Returns the exit
 * status. */
int rep_follow_main(rep_opts *o);
void rep_out_compare_text(FILE *out, const rep_compare *cmp);
/* The note under intervals marked "!" (an interval that does not contain its value): why it
 * happens under the given cs_ci_method and what to do about it. */
void rep_ci_note(FILE *out, int method);
/* The footnote of a paired interval marked "!" (it misses its own difference). */
void rep_paired_note(FILE *out);
/* The line saying that smooth ECE's resamples were binned (cs_ci.smece_binned), and its JSON
 * member `, "smece_replicates": "binned"`: nothing is written when they were exact. */
void rep_smece_binned_note(FILE *out, int binned);
/* Under m-out-of-n draws (draw < units): how many samples a draw took and what that leaves
 * out, two lines; nothing otherwise. */
void rep_draws_line(FILE *out, size_t draw, size_t units);
void rep_smece_binned_json(FILE *out, int binned);

/* The report's text width: every line of the text output fits it (display columns). */
#define REP_TEXT_WIDTH 80
/* Writes text word-wrapped at REP_TEXT_WIDTH, continuation lines indented by indent spaces; a
 * word longer than a line (a long file name) is broken across lines. Ends with a newline. */
void rep_wrap(FILE *out, const char *text, int indent);
/* The metrics mask of the text tables: --metrics when given, else the readable default set
 * (ece, ace, mce, brier, nll, smece). Bits as in ss_methods_opts.text_metrics. */
unsigned rep_text_metrics(const ss_methods_opts *mo);
/* Whether the text tables show methods column col (cs_methods_col_name) under mask. */
int rep_text_shows_col(unsigned mask, int col);
void rep_out_text(FILE *out, const rep_opts *o, const rep_file *files, size_t n);
/* --compat: JSON object / text table of one file (out_compat.c). */
void rep_out_compat_json(FILE *out, const rep_opts *o, const rep_file *f);
void rep_out_compat_text(FILE *out, const rep_opts *o, const rep_file *f);
void rep_out_csv(FILE *out, const rep_opts *o, const rep_file *files, size_t n);
/* The bin table a file's output shows (JSON "bins", the text table, --plot): with --compat NAME
 * the library's when it has one for these settings, else calscope's. Returns whose they are
 * ("calscope" or the library's name); *note (may be NULL) gets the library's description of its
 * table or why there is none, "" without --compat NAME. */
const char *rep_file_bins(const rep_opts *o, const rep_file *f, const cs_bin **bins, size_t *n,
                          const char **note);
/* The --plot reliability diagram of one evaluated file, at most 80 columns. */
void rep_out_plot(FILE *out, const rep_opts *o, const rep_file *f, const ch_glyphs *g);

/* Prints "calscope: <message>" and a pointer to --help on stderr; returns 2 (usage error). */
int rep_usage_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* JSON writers shared by the report's outputs (out_json.c): a quoted, escaped string; a number
 * with %.17g, or null when not finite; `"key": value` pairs joined with ", " (no braces). */
void rep_json_str(FILE *out, const char *s);
/* CSV (out_csv.c): a field, quoted by RFC 4180 when it must be; ",value" (%.17g) or an empty
 * field when not finite. */
void rep_csv_field(FILE *out, const char *s);
void rep_csv_num(FILE *out, double v);
void rep_json_num(FILE *out, double v);
void rep_json_fields(FILE *out, const char *const *keys, const double *vals, size_t n);
/* The size curve's bias against --true-ece (a top-1 ECE): the metric's mean over the subsets
 * minus the truth, for the metrics that estimate that quantity (ece, ace, rece_g, smece,
 * ece_sweep), NAN for the others (accuracy, mce, Brier, NLL, L2 errors measure something else)
 * and when no truth was given (truth NAN). Text and JSON both take it from here (out_text.c). */
double rep_curve_bias(const cs_curve *c, const cs_curve_point *pt, int id, double truth);
/* The keys of a paired-comparison entry, in order: a, b, diff, lo, hi, p_better. */
extern const char *const rep_compare_keys[6];

#endif
