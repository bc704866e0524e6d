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
#include "calscope/compat.h"
#include "calscope/curves.h"
#include "calscope/likert.h"
#include "calscope/load.h"
#include "calscope/metrics.h"
#include "chart/cells.h"
#include "report/methods.h"

typedef enum rep_format { REP_TEXT, REP_JSON, REP_CSV } rep_format;

typedef enum rep_op { REP_LE, REP_LT, REP_GE, REP_GT } rep_op;

typedef struct rep_check {
    const char *text;   /* as the user wrote it (argv, not owned) */
    int metric;         /* index into rep_metric_names */
    rep_op op;
    double value;
} rep_check;

typedef struct rep_opts {
    cs_settings settings;
    cs_load_options load;
    int select_given;
    rep_format format;
    int plot, ascii;
    uint64_t seed;
    /* given on the command line: a flag that would change nothing is refused (rep_parse_args) */
    int seed_given, threads_given, gamma_given, label_col_given, sum_tol_given, mixture_given;
    int threads;
    int ci_repeats;        /* --ci R, 0 = none */
    int ci_method;         /* --ci-method: a cs_ci_method (default percentile) */
    int ci_method_given;
    int curve;             /* 0 none, 1 size, 2 bins */
    double curve_x[CS_CURVE_MAX_POINTS]; /* --fractions / --bins-list */
    size_t n_curve_x;
    const char *curve_tok[CS_CURVE_MAX_POINTS]; /* each value as written (in argv, not owned) */
    int curve_tok_len[CS_CURVE_MAX_POINTS];
    int curve_list_flag;   /* 1 --fractions, 2 --bins-list given */
    int repeats;           /* --repeats, 0 = the curve's default */
    int replace;
    int compare;
    int topk[32];          /* --topk-bars; 0 = full (K) */
    size_t n_topk;
    int likert;            /* --likert or --likert-cuts */
    double likert_cuts[CS_LIKERT_MAX + 1]; /* --likert-cuts; n_likert_cuts == 0: the defaults */
    size_t n_likert_cuts;
    rep_methods_opts methods; /* --recal, --reference, --compare-k, --recal-* (methods.c) */
    int compat;            /* --compat: -1 none, a cs_compat_lib, or REP_COMPAT_ALL */
    int torch_f64, torch_dtype_given; /* --torch-dtype float64 / given at all */
    rep_check *checks;  /* owned (malloc) */
    size_t n_checks;
    const char **files; /* argv entries (owned array, borrowed strings) */
    size_t n_files;
} rep_opts;

#define REP_COMPAT_ALL CS_COMPAT_COUNT

/* Parses argv (argv[0] = "report"). Returns 0 to go on, REP_EXIT_HELP after printing --help,
 * or 2 after printing a usage error. o must be freed with rep_opts_free in every case. */
#define REP_EXIT_HELP (-1)
int rep_parse_args(int argc, char **argv, rep_opts *o);
void rep_opts_free(rep_opts *o);

/* Metrics that --check and the outputs know, in output order. */
enum { REP_M_ACCURACY, REP_M_ECE, REP_M_ACE, REP_M_MCE, REP_M_RECE_G, REP_M_RECE_M,
       REP_M_BRIER, REP_M_NLL, REP_M_AECE, REP_M_SCE, REP_M_COUNT };
extern const char *const rep_metric_names[REP_M_COUNT];
double rep_metric_value(const cs_result *r, int metric);

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
    size_t selected;       /* samples the selection kept (all samples without --select) */
    int evaluated;         /* res is valid (0 when the selection kept nothing) */
    cs_result res;
    int has_ci;
    cs_ci ci;
    cs_curve *curve;       /* owned, --curve */
    int has_cases;
    cs_case_metrics cases; /* owned, for a file with a case column */
    int has_compat;
    cs_compat_report compat; /* owned, --compat */
    int has_topk;
    size_t n_topk;         /* distinct k of --topk-bars for this file */
    double topk_ece[32];
    int topk_k[32];        /* k as used (full and k > K -> K), each once */
    int has_likert;
    cs_likert likert;      /* --likert: one entry per confidence category */
} rep_file;

/* The k a --topk-bars entry measures on a file of `classes` classes: full (0) and k above the
 * class count are the class count (the top-K set is every class). */
int rep_topk_used(int k, size_t classes);

/* --check: parses "ece<=0.05" (blanks allowed around the parts). Returns 0, or -1 with a
 * message in msg. */
int rep_check_parse(const char *text, rep_check *c, char *msg, size_t msg_size);
/* Evaluates every check on every evaluated file; prints each failure to stderr as
 * "calscope: check failed: FILE: ece = 0.0812 (want ece<=0.05)". Returns the failure count. */
size_t rep_checks_run(const rep_opts *o, const rep_file *files, size_t n);

/* --compare of files A and B. */
typedef struct rep_compare {
    const char *a, *b;
    int done;              /* res is valid */
    int status;            /* exit status the failure implies (0 when done or not asked) */
    cs_compare res;
    const rep_methods *methods; /* the --compare methods table (methods.c), or NULL */
    rep_pair_errors pair;  /* files that do not pair with the reference (then no table) */
} rep_compare;

/* Output writers (stdout). cmp is NULL without --compare. */
void rep_out_json(FILE *out, const rep_opts *o, const rep_file *files, size_t n, const rep_compare *cmp);
void rep_out_compare_text(FILE *out, const rep_compare *cmp);
/* The note under intervals marked "!" (an interval that does not contain its value): why it
 * happens under the given cs_ci_method and what to do about it. */
void rep_ci_note(FILE *out, int method);
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

/* Settings spelled as on the command line: "top1", "topk:3", "interval:0.2,0.4"... */
void rep_lens_text(const cs_settings *s, char *buf, size_t size);
void rep_distance_text(const cs_settings *s, char *buf, size_t size);
const char *rep_binning_text(cs_binning b);
const char *rep_mixture_text(cs_mixture m);

/* Prints "calscope: <message>" and a pointer to --help on stderr; returns 2 (usage error). */
int rep_usage_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* JSON writers shared by the report's outputs (out_json.c): a quoted, escaped string; a number
 * with %.17g, or null when not finite; `"key": value` pairs joined with ", " (no braces). */
void rep_json_str(FILE *out, const char *s);
void rep_json_num(FILE *out, double v);
void rep_json_fields(FILE *out, const char *const *keys, const double *vals, size_t n);
/* The keys of a paired-comparison entry, in order: a, b, diff, lo, hi, p_better. */
extern const char *const rep_compare_keys[6];

#endif
