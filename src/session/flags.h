/* The session layer's flag table: one entry per command-line flag of both front ends
 * (`calscope report` and the dashboard), with its parser, its printer and its help text.
 * Everything that reads or writes a flag comes from it: argv parsing (ss_parse), `--help`
 * (ss_help), the dashboard's `:` command line (ss_render), the man page and the flag
 * reference of docs/flags.md (ss_man, ss_readme; tools build them with build/gen_flags).
 *
 * Neither engine nor curses: it includes engine headers only. Single-threaded (the front ends
 * call it from their main thread); nothing here keeps state between calls. */
#ifndef CALSCOPE_SESSION_FLAGS_H
#define CALSCOPE_SESSION_FLAGS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "calscope/compat.h"
#include "calscope/follow.h"
#include "calscope/resample.h"
#include "calscope/likert.h"
#include "calscope/load.h"
#include "calscope/metrics.h"
#include "calscope/recal.h"

/* Which front end parses: a flag's `fronts` is a mask of these (SS_REDUCE: `calscope reduce`,
 * segmentation volumes to a statistics file). */
enum { SS_REPORT = 1u << 0, SS_DASH = 1u << 1, SS_REDUCE = 1u << 2 };

/* Help sections, in the order --help, the man page and docs/flags.md print them. */
enum { SS_SEC_METRIC, SS_SEC_OUTPUT, SS_SEC_INPUT, SS_SEC_RESAMPLING, SS_SEC_VOLUMES, SS_SEC_FOLLOW,
       SS_SEC_OTHER, SS_SEC_COUNT };

typedef enum ss_format { SS_FORMAT_TEXT, SS_FORMAT_JSON, SS_FORMAT_CSV, SS_FORMAT_NDJSON } ss_format;

/* The methods-table flags (--recal, --reference, --compare-k, --recal-*). Zero = default. */
typedef struct ss_methods_opts {
    int recal[CS_RECAL_COUNT];   /* --recal ts,platt,hist,iso: methods in the order given */
    int n_recal;
    int recal_all;               /* --recal all: every method (binary-only ones skipped for K > 2) */
    int reference;               /* --reference N, 1-based over files then recalibrations */
    int k;                       /* --compare-k K: the top-k ECE column (default 3, <= classes) */
    int folds;                   /* --recal-folds K (default 5) */
    int bins;                    /* --recal-bins M for hist (default 15) */
    int max_iter;                /* --recal-max-iter N: the parametric fits' budget (default 1000) */
    double split;                /* --recal-split F: fit on fraction F, evaluate on the rest */
    char split_column[128];      /* --recal-split-column COL[=FITVALUE]: fit on the rows whose COL */
    char split_fit[128];         /* is FITVALUE ("" = fit or train), evaluate on the rest */
    int select_each;             /* --select-on each (default reference): cs_methods_options */
    int select_on_given;
    int verdict_metric;          /* --verdict-metric M: a cs_metric id (read when given) */
    int verdict_metric_given;
    unsigned text_metrics;       /* --metrics LIST: bit (1u << cs_metric id) per metric the text */
    int text_metrics_given;      /* tables show, SS_METRICS_TOPK_BIT for top-k ECE */
} ss_methods_opts;

#define SS_METRICS_TOPK_BIT (1u << 31)

#define SS_TOPK_MAX 32
#define SS_DASH_MAX_FILES 8

struct ss_opts;
/* A front end's check of one --check text (the metric names belong to the report): returns 0,
 * or prints a usage error and returns 2. */
typedef int (*ss_check_fn)(struct ss_opts *o, const char *text);

/* Everything argv says, for either front end. Plain data apart from `files` and `checks`
 * (ss_opts_free). The report uses it as its rep_opts. */
typedef struct ss_opts {
    unsigned front;              /* SS_REPORT or SS_DASH: which front end parses */
    cs_settings settings;
    cs_load_options load;
    int select_given;
    ss_format format;
    int plot, ascii, no_color, no_mouse;
    uint64_t seed;
    /* given on the command line: a flag that would change nothing is refused (report) */
    int seed_given, threads_given, gamma_given, label_col_given, sum_tol_given, mixture_given;
    int sigma_given, smece_sigma_given;
    int threads;
    int ci_repeats;        /* --ci R, 0 = none (the dashboard accepts 0 = off) */
    int ci_method;         /* --ci-method: a cs_ci_method (default percentile) */
    int ci_method_given;
    int boot_size_given;   /* --boot-size (the value is settings.boot_size) */
    int curve;             /* 0 none, 1 size, 2 bins */
    double curve_x[CS_CURVE_MAX_POINTS]; /* --fractions / --bins-list */
    size_t n_curve_x;
    const char *curve_tok[CS_CURVE_MAX_POINTS]; /* each value as written (in argv, not owned) */
    int curve_tok_len[CS_CURVE_MAX_POINTS];
    int curve_list_flag;   /* 1 --fractions, 2 --bins-list given */
    int repeats;           /* --repeats, 0 = the curve's default */
    int replace;
    int compare;
    int topk[SS_TOPK_MAX]; /* --topk-bars; 0 = full (K) */
    size_t n_topk;
    int likert;            /* --likert or --likert-cuts */
    double likert_cuts[CS_LIKERT_MAX + 1]; /* --likert-cuts; n_likert_cuts == 0: the defaults */
    size_t n_likert_cuts;
    ss_methods_opts methods;
    int compat;            /* --compat: -1 none, a cs_compat_lib, or SS_COMPAT_ALL */
    int torch_f64, torch_dtype_given; /* --torch-dtype float64 / given at all */
    /* --check: the report's parsed gates (owned, malloc; filled by check_fn); check_text keeps
     * every text as written (owned array of argv strings) for ss_render */
    struct rep_check *checks;
    size_t n_checks;
    const char **check_text;
    ss_check_fn check_fn;  /* set before ss_parse by the report; NULL: texts only */
    const char **files;    /* argv entries (owned array, borrowed strings) */
    size_t n_files;
    /* calscope reduce (argv strings, not owned; NULL = not given) */
    const char *out_path;  /* -o STATS ("-" = stdout, the default) */
    int fine;              /* --fine F, 0 = CS_SEGSTATS_FINE_DEFAULT */
    const char *label_values, *regions;  /* --label-values LIST / --regions SPEC (checked) */
    const char *probs_dir, *prob_suffix;  /* --probs DIR --prob-suffix S; --labels DIR is load.labels */
    double affine_tol;     /* --affine-tol T (default CS_REDUCE_AFFINE_TOL_DEFAULT) */
    int affine_tol_given, merge;
    int memory_mb;         /* --memory MB, -1 = CS_REDUCE_MEMORY_DEFAULT */
    double true_ece;       /* --true-ece X: the file's true top-1 ECE (size curve bias) */
    int true_ece_given;
    /* --follow WHERE: a training run's folder (or a glob on its file names), file by file
     * (calscope/follow.h); argv string, NULL = not given. The rest need it. */
    const char *follow;
    int follow_by_mtime;   /* --order mtime (default: natural order of the names) */
    int order_given;
    double settle;         /* --settle SECONDS (default CS_FOLLOW_SETTLE_DEFAULT) */
    int settle_given;
    double idle_exit;      /* --idle-exit SECONDS: end after so long without a new file */
    int idle_exit_given;
    long max_files;        /* --max-files N: end after N files (0 = not given) */
    int fail_fast;         /* --fail-fast: end with status 1 at the first failed --check */
} ss_opts;

#define SS_COMPAT_ALL CS_COMPAT_COUNT

/* One flag. `parse` applies a value (NULL for a flag without one) and returns 0, or prints a
 * usage error and returns 2. `print` writes the value the report would need to reproduce `o`
 * ("" = leave the flag out; for a flag without a value any non-empty text prints it alone);
 * NULL for --help and --version, which ss_parse handles itself. */
typedef struct ss_flag {
    const char *name;            /* "--bins" */
    const char *metavar;         /* "M", or NULL for a flag without a value */
    unsigned fronts;             /* SS_REPORT | SS_DASH */
    int section;                 /* index into the help's sections */
    int (*parse)(ss_opts *o, const char *val);
    void (*print)(const ss_opts *o, size_t i, char *buf, size_t size); /* i-th occurrence */
    int repeatable;              /* --check: printed once per value (print's i = 0, 1, ...) */
    const char *help;            /* lines joined by '\n'; the first says what it does */
    const char *dash_help;       /* the dashboard's wording when it differs, else NULL */
} ss_flag;

/* The table's length is at most this (ss_parse counts the uses of each flag). */
#define SS_FLAGS_MAX 128

/* The table, in help order, and its length. */
const ss_flag *ss_flags(size_t *count);
/* The entry named `name` ("--bins"), or NULL. */
const ss_flag *ss_flag_find(const char *name);

/* Fills the defaults for `front` (the documented settings, text format, no compat...). */
void ss_opts_init(ss_opts *o, unsigned front);

/* Parses argv (argv[0] is skipped: "report" or the program name) into o, which ss_parse
 * initialises (o->check_fn is kept). Returns 0 to go on, SS_EXIT_HELP after printing --help
 * or --version on stdout, or 2 after printing a usage error on stderr. o must be freed with
 * ss_opts_free in every case. */
#define SS_EXIT_HELP (-1)
int ss_parse(int argc, char **argv, unsigned front, ss_opts *o);
void ss_opts_free(ss_opts *o);

/* Prints "calscope: <message>" and the front end's pointer to --help on stderr; returns 2. */
int ss_usage_error(unsigned front, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* The rule between --mixture and the loaded files, for both front ends once their files are
 * loaded: --mixture changes RECE-M only, which needs an id/tta long file, so it is refused (a
 * flag that would change nothing) when some FILE loaded and none has id and tta columns.
 * Returns the message (static) for ss_usage_error, or NULL when the flag is fine. Pure. */
const char *ss_mixture_unused(int mixture_given, int any_loaded, int any_tta);
/* The rule between the volume flags (--label-values, --regions, --fine, --affine-tol) and the
 * loaded files of the report and the dashboard: the message when one was given and no loaded
 * FILE is a manifest of volumes (it would change nothing), else NULL. Pure. */
const char *ss_seg_unused(const struct ss_opts *o, int any_loaded, int any_manifest);

/* The rule between --renormalize / --sum-tol and the loaded files, for both front ends once
 * their files are loaded: both act on rows of class probabilities (cs_load_summary.prob_rows:
 * not logits, not a binary p column, not a statistics file), so either is refused when some
 * FILE loaded and none has such rows. Returns the message (static) or NULL. Pure. */
const char *ss_rows_unused(const struct ss_opts *o, int any_loaded, int any_prob_rows);
/* The rule between --sigma / --smece-sigma and the lens and loaded files of the report (the
 * dashboard's lens changes at a key, so it keeps them): the message, written to buf, when every
 * metric the flag changes is n/a: --sigma changes RECE-G (a lens cs_metric_lens_gives it, a
 * FILE with prediction rows) and RECE-M (an id/tta FILE); --smece-sigma changes smECE (a lens
 * that gives it, a FILE with prediction rows). any_rows: some loaded FILE is not a statistics
 * file. With any_loaded = any_rows = any_tta = 1 it says what the lens alone decides (the
 * report asks so before loading). Returns buf or NULL. Pure. */
const char *ss_sigma_unused(const struct ss_opts *o, int any_loaded, int any_rows, int any_tta, char *buf,
                            size_t size);

/* The options of the follow of o->follow from --order, --settle and --labels (a .npy
 * prediction file's labels), as both front ends open it; fo borrows o->load.labels (an argv
 * string). Pure. */
void ss_follow_options(const ss_opts *o, cs_follow_options *fo);

/* Writes `calscope report FLAGS FILES` reproducing o: every report flag whose printer gives a
 * value, in table order, then o->files, each word shell-quoted (ss_shell_quote). Truncated to
 * size (always terminated). */
void ss_render(const ss_opts *o, char *buf, size_t size);

/* Appends `s` to the string in buf as one shell word: bare when it needs no quoting, else in
 * single quotes ('\'' for a quote), or as $'...' with \xNN when it holds control bytes. */
void ss_shell_quote(char *buf, size_t size, const char *s);

/* The one --seed rule (both front ends and the dashboard's typed seed): a decimal uint64_t (an
 * optional '+', no blank). Returns 1 and sets *out, or 0. Any thread. */
int ss_parse_seed(const char *text, uint64_t *out);

/* The setting spellings the printers use, also for headers and status lines. */
const char *ss_binning_name(cs_binning b);
const char *ss_mixture_name(cs_mixture m);
void ss_distance_name(const cs_settings *s, char *buf, size_t size);

/* Documents: `--help` of a front end; the man page (troff); the flag reference of docs/flags.md
 * (markdown, the text between its flag-reference markers). */
void ss_help(FILE *out, unsigned front);
void ss_man(FILE *out);
void ss_readme(FILE *out);

#endif
