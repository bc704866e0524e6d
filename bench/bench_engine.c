/* calscope engine benchmark driver (`make bench` runs it through bench/run.sh).
 *
 *   bench_engine [-r REPEATS] [-c CASE] [-w WIDE.raw] FILE.csv
 *
 * Times the engine API directly (no CLI) on one large prediction file with clock_gettime
 * (CLOCK_MONOTONIC), best of REPEATS runs (default 5; the load case uses min(3, REPEATS)), and
 * prints one tab-separated line per case for bench/reference_bench.py to put beside the Python
 * reference:
 *
 *   case <TAB> best seconds <TAB> median seconds <TAB> note
 *
 * A case that cannot run prints "NA" as its time and the reason as the note. Timing never makes
 * the program fail: the exit status is 0 unless the arguments are wrong.
 *
 * Adding a case: write `static int case_xxx(bench_ctx *c, double *secs, char *note, size_t n)`
 * that does the work once and stores the elapsed time of the measured part in *secs (setup done
 * inside it may be excluded), then add a row to `cases[]`. Cases run in table order and may use
 * what earlier cases left in the context (the loaded dataset). The key must match the key of the
 * same work in bench/reference_bench.py (`PY_CASES` and `ROWS` there). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "calscope/resample.h"
#include "calscope/dataset.h"
#include "calscope/error.h"
#include "calscope/load.h"
#include "calscope/metrics.h"
#include "calscope/recal.h"
#include "calscope/topk.h"

typedef struct bench_ctx {
    const char *path;
    double file_mb;        /* file size in MB (10^6 bytes) */
    cs_dataset *d;         /* loaded by the load case, used by the later ones */
    uint32_t *idx;         /* 0..n-1, for the subset cases */
    cs_dataset *wide;      /* WIDE_N x WIDE_K generated in memory (top-k bars, classwise) */
    const char *wide_out;  /* -w PATH: the wide dataset is also written there for python */
    int wide_tried;
    double rss_before_wide; /* peak RSS (MB) before the wide dataset was built, or 0 */
    cs_dataset head;       /* shallow view of the first 50,000 rows of d (curve cases) */
} bench_ctx;

typedef int (*case_fn)(bench_ctx *c, double *secs, char *note, size_t n);

typedef struct bench_case {
    const char *key;       /* shared with bench/reference_bench.py */
    const char *what;
    int max_repeats;       /* 0 = the -r value */
    case_fn run;
} bench_case;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* User + system CPU seconds of the whole process (every thread). */
static double cpu_secs(void) {
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) return 0.0;
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
           (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

static double peak_rss_mb(void) {
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) return -1.0;
    return (double)ru.ru_maxrss / 1024.0; /* Linux: KiB */
}

/* ---- cases -------------------------------------------------------------------------------- */

static int case_load(bench_ctx *c, double *secs, char *note, size_t n) {
    cs_load_options opt;
    cs_load_options_default(&opt);
    cs_load_summary sum;
    memset(&sum, 0, sizeof sum);
    cs_error err;
    cs_error_clear(&err);
    cs_dataset_free(c->d); /* one dataset at a time, so the peak RSS is that of one load */
    c->d = NULL;
    double c0 = cpu_secs(), t0 = now();
    cs_dataset *d = cs_load_file(c->path, &opt, &sum, &err);
    *secs = now() - t0;
    double cpu = cpu_secs() - c0;
    if (!d) {
        snprintf(note, n, "load failed: %s", err.msg);
        cs_load_summary_free(&sum);
        return -1;
    }
    /* the CPU time (all threads, user + system) moves much less than the wall clock when the
     * machine is shared: wall = CPU / 2 is what two idle cores would give */
    snprintf(note, n, "last run %.2f GB/s (%.0f MB/s), CPU %.3f s (%.2f GB/s at CPU/2); %zu rows x %zu classes;"
             " %.1f MB file; peak RSS %.0f MB", c->file_mb / 1e3 / *secs, c->file_mb / *secs, cpu,
             c->file_mb / 1e3 / (cpu / 2), d->n, d->k, c->file_mb, peak_rss_mb());
    cs_load_summary_free(&sum);
    c->d = d;
    return 0;
}

/* Seconds spent in cs_prepare by the last evaluate() call. */
static double last_prepare_secs;

static int evaluate(bench_ctx *c, unsigned want, size_t subset, int time_prepare, double *secs,
                    char *note, size_t n, cs_result *res_out) {
    if (!c->d) return snprintf(note, n, "no dataset (load failed)"), -1;
    cs_settings s;
    cs_settings_default(&s);
    cs_error err;
    cs_error_clear(&err);
    double t0 = now();
    cs_prepared *p = cs_prepare(c->d, &s, &err);
    if (!p) return snprintf(note, n, "cs_prepare: %s", err.msg), -1;
    size_t np = cs_prepared_count(p);
    if (subset > np) subset = np;
    double t1 = now();
    last_prepare_secs = t1 - t0;
    if (!time_prepare) t0 = t1;
    cs_result r;
    memset(&r, 0, sizeof r);
    cs_status st = cs_evaluate(p, subset ? c->idx : NULL, subset, want, NULL, &r, &err);
    *secs = now() - t0;
    cs_prepared_free(p);
    if (st != CS_OK) return snprintf(note, n, "cs_evaluate: %s", err.msg), -1;
    *res_out = r;
    return 0;
}

static int case_metrics(bench_ctx *c, double *secs, char *note, size_t n) {
    cs_result r;
    if (evaluate(c, CS_WANT_ACCURACY | CS_WANT_BINNED | CS_WANT_BRIER | CS_WANT_NLL, 0, 1, secs,
                 note, n, &r) != 0)
        return -1;
    snprintf(note, n, "cs_prepare %.2f ms + cs_evaluate %.2f ms, n=%zu: acc %.9f ece %.9f ace %.9f mce %.9f "
             "brier %.9f nll %.9f", 1e3 * last_prepare_secs, 1e3 * (*secs - last_prepare_secs), r.n,
             r.accuracy, r.ece, r.ace, r.mce, r.brier, r.nll);
    cs_result_free(&r);
    return 0;
}

static int rece_case(bench_ctx *c, size_t subset, double *secs, char *note, size_t n) {
    cs_result r;
    if (evaluate(c, CS_WANT_RECE_G, subset, 0, secs, note, n, &r) != 0) return -1;
    snprintf(note, n, "cs_evaluate(RECE_G), M=15 sigma=0.1, n=%zu: rece_g %.9f", r.n, r.rece_g);
    cs_result_free(&r);
    return 0;
}

static int case_rece_g_50k(bench_ctx *c, double *secs, char *note, size_t n) {
    return rece_case(c, 50000, secs, note, n);
}

static int case_rece_g_1m(bench_ctx *c, double *secs, char *note, size_t n) {
    return rece_case(c, 0, secs, note, n);
}

/* ---- the 50,000 x 1000 dataset, generated in memory ------------------------------------- *
 * Same model as bench/gen_data.c (logits Normal(0, 2.5), one random class boosted by 3..9,
 * label ~ softmax(0.7 z), p = softmax(z)) but kept in double, never printed: a CSV of it would
 * be 600 MB. With -w PATH the driver also writes it for bench/reference_bench.py as raw
 * little-endian binary: uint64 n, uint64 k, int32 label[n], float64 prob[n*k] (row-major). */
#define WIDE_N 50000
#define WIDE_K 1000
#define WIDE_SEED 20261122u

static uint64_t wide_rng;

static uint64_t wide_next(void) {
    uint64_t z = (wide_rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double wide_u01(void) { return (double)(wide_next() >> 11) * 0x1.0p-53; }

static double wide_normal(void) {
    double u1 = wide_u01(), u2 = wide_u01();
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

static int write_wide(const cs_dataset *d, const char *path) {
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (!f) return -1;
    uint64_t hdr[2] = {d->n, d->k};
    int ok = fwrite(hdr, sizeof hdr, 1, f) == 1 &&
             fwrite(d->label, sizeof *d->label, d->n, f) == d->n &&
             fwrite(d->prob, sizeof *d->prob, d->n * d->k, f) == d->n * d->k;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        remove(tmp);
        return -1;
    }
    return 0;
}

static int make_wide(bench_ctx *c, char *note, size_t n) {
    if (c->wide) return 0;
    if (c->wide_tried) return snprintf(note, n, "the 50,000 x 1000 dataset could not be built"), -1;
    c->wide_tried = 1;
    c->rss_before_wide = peak_rss_mb();
    size_t N = WIDE_N, K = WIDE_K;
    cs_dataset *d = calloc(1, sizeof *d);
    double *z = malloc(K * sizeof *z);
    if (!d || !z) goto nomem;
    d->n = N;
    d->k = K;
    d->path = strdup("generated:50000x1000");
    d->prob = malloc(N * K * sizeof *d->prob);
    d->label = malloc(N * sizeof *d->label);
    {
        /* class names "0".."K-1" in the dataset's one-block layout (calscope/dataset.h) */
        char (*num)[24] = malloc(K * sizeof *num);
        const char **names = malloc(K * sizeof *names);
        for (size_t j = 0; num && names && j < K; j++) {
            snprintf(num[j], sizeof num[j], "%zu", j);
            names[j] = num[j];
        }
        d->class_names = num && names ? cs_names_pack(names, K) : NULL;
        free(names);
        free(num);
    }
    if (!d->path || !d->prob || !d->label || !d->class_names) goto nomem;
    wide_rng = WIDE_SEED;
    for (size_t r = 0; r < N; r++) {
        double *p = d->prob + r * K;
        for (size_t j = 0; j < K; j++) z[j] = 2.5 * wide_normal();
        z[wide_next() % K] += 3.0 + 6.0 * wide_u01();
        double m = z[0];
        for (size_t j = 1; j < K; j++) if (z[j] > m) m = z[j];
        double s = 0.0;
        for (size_t j = 0; j < K; j++) s += (p[j] = exp(0.7 * (z[j] - m)));
        double u = wide_u01() * s, acc = 0.0;
        int32_t label = (int32_t)K - 1;
        for (size_t j = 0; j < K; j++) {
            acc += p[j];
            if (u < acc) { label = (int32_t)j; break; }
        }
        d->label[r] = label;
        s = 0.0;
        for (size_t j = 0; j < K; j++) s += (p[j] = exp(z[j] - m));
        for (size_t j = 0; j < K; j++) p[j] /= s;
    }
    free(z);
    z = NULL;
    cs_error err;
    cs_error_clear(&err);
    if (cs_dataset_prepare(d, NULL, &err) != CS_OK) goto nomem;
    if (c->wide_out && write_wide(d, c->wide_out) != 0)
        fprintf(stderr, "bench_engine: could not write %s\n", c->wide_out);
    c->wide = d;
    return 0;
nomem:
    free(z);
    cs_dataset_free(d);
    return snprintf(note, n, "out of memory building the 50,000 x 1000 dataset"), -1;
}

static const int topk_ks[] = {1, 2, 3, 5, 10, 20, 50, 100, 1000};
#define N_TOPK (sizeof topk_ks / sizeof topk_ks[0])

static int case_topk_bars(bench_ctx *c, double *secs, char *note, size_t n) {
    if (make_wide(c, note, n) != 0) return -1;
    cs_settings s;
    cs_settings_default(&s);
    double ece[N_TOPK];
    cs_error err;
    cs_error_clear(&err);
    double t0 = now();
    cs_status st = cs_topk_bars(c->wide, &s, topk_ks, N_TOPK, NULL, ece, &err);
    *secs = now() - t0;
    if (st != CS_OK) return snprintf(note, n, "cs_topk_bars: %s", err.msg), -1;
    size_t o = (size_t)snprintf(note, n, "cs_topk_bars, n=%zu K=%zu, uniform M=15 (grid), tvd:",
                                c->wide->n, c->wide->k);
    for (size_t i = 0; i < N_TOPK && o < n; i++)
        o += (size_t)snprintf(note + o, n - o, " k%d %.12f", topk_ks[i], ece[i]);
    return 0;
}

static int case_classwise(bench_ctx *c, double *secs, char *note, size_t n) {
    if (make_wide(c, note, n) != 0) return -1;
    cs_settings s;
    cs_settings_default(&s);
    cs_error err;
    cs_error_clear(&err);
    if (cs_settings_set_lens(&s, "classwise", &err) != CS_OK)
        return snprintf(note, n, "lens: %s", err.msg), -1;
    double t0 = now();
    cs_prepared *p = cs_prepare(c->wide, &s, &err);
    if (!p) return snprintf(note, n, "cs_prepare: %s", err.msg), -1;
    double t1 = now();
    cs_result r;
    memset(&r, 0, sizeof r);
    cs_status st = cs_evaluate(p, NULL, 0, CS_WANT_BINNED, NULL, &r, &err);
    *secs = now() - t0;
    cs_prepared_free(p);
    if (st != CS_OK) return snprintf(note, n, "cs_evaluate: %s", err.msg), -1;
    snprintf(note, n, "cs_prepare %.2f ms + cs_evaluate %.2f ms, n=%zu K=%zu M=15: classwise_ece %.12f",
             1e3 * (t1 - t0), 1e3 * (*secs - (t1 - t0)), c->wide->n, c->wide->k, r.ece);
    cs_result_free(&r);
    return 0;
}

/* The first 50,000 rows of the loaded file as a dataset of their own (a view sharing the
 * arrays; the file has no tta column, so its samples are rows 0..n-1). */
static const cs_dataset *head_view(bench_ctx *c) {
    if (!c->d || c->d->tta || !c->d->conf) return NULL;
    c->head = *c->d;
    if (c->head.n > 50000) c->head.n = 50000;
    c->head.n_samples = c->head.n;
    return &c->head;
}

#define SIZE_METRICS (CS_METRIC_BIT(CS_METRIC_ECE) | CS_METRIC_BIT(CS_METRIC_ACE) | \
                      CS_METRIC_BIT(CS_METRIC_MCE) | CS_METRIC_BIT(CS_METRIC_AECE) | \
                      CS_METRIC_BIT(CS_METRIC_RECE_G))

static int size_curve_case(bench_ctx *c, int threads, double *secs, char *note, size_t n) {
    const cs_dataset *h = head_view(c);
    if (!h) return snprintf(note, n, "no dataset (load failed)"), -1;
    cs_settings s;
    cs_settings_default(&s);
    cs_curve_options o;
    cs_curve_options_size_default(&o);
    o.repeats = 200;
    o.seed = 1;
    o.metrics = SIZE_METRICS;
    cs_run run = {.threads = threads};
    cs_error err;
    cs_error_clear(&err);
    double t0 = now();
    cs_prepared *p = cs_prepare(h, &s, &err);
    if (!p) return snprintf(note, n, "cs_prepare: %s", err.msg), -1;
    cs_curve *cv = cs_size_curve(p, &o, &run, &err);
    *secs = now() - t0;
    cs_prepared_free(p);
    if (!cv) return snprintf(note, n, "cs_size_curve: %s", err.msg), -1;
    const double *f = cv->points[0].full;
    snprintf(note, n, "cs_size_curve, %zu fractions x %d subsets without replacement, n=%zu, %d "
             "thread(s); on all rows: ece %.12f ace %.12f mce %.12f aece %.12f rece_g %.12f",
             cv->n_points, cv->repeats, cv->n_samples, threads, f[CS_METRIC_ECE], f[CS_METRIC_ACE],
             f[CS_METRIC_MCE], f[CS_METRIC_AECE], f[CS_METRIC_RECE_G]);
    cs_curve_free(cv);
    return 0;
}

static int bins_curve_case(bench_ctx *c, int threads, double *secs, char *note, size_t n) {
    const cs_dataset *h = head_view(c);
    if (!h) return snprintf(note, n, "no dataset (load failed)"), -1;
    cs_settings s;
    cs_settings_default(&s);
    cs_curve_options o;
    cs_curve_options_bins_default(&o, 0);
    o.repeats = 200;
    o.seed = 1;
    cs_run run = {.threads = threads};
    cs_error err;
    cs_error_clear(&err);
    double t0 = now();
    cs_curve *cv = cs_bins_curve(h, &s, &o, &run, &err);
    *secs = now() - t0;
    if (!cv) return snprintf(note, n, "cs_bins_curve: %s", err.msg), -1;
    size_t w = (size_t)snprintf(note, n, "cs_bins_curve, %zu M values x %d bootstrap resamples, "
                                "n=%zu, ece/ace/mce, %d thread(s); ece on all rows:",
                                cv->n_points, cv->repeats, cv->n_samples, threads);
    for (size_t i = 0; i < cv->n_points && w < n; i++)
        w += (size_t)snprintf(note + w, n - w, " M%g %.12f", cv->points[i].x,
                              cv->points[i].full[CS_METRIC_ECE]);
    cs_curve_free(cv);
    return 0;
}

static int case_size_curve_t1(bench_ctx *c, double *secs, char *note, size_t n) {
    return size_curve_case(c, 1, secs, note, n);
}
static int case_size_curve_t2(bench_ctx *c, double *secs, char *note, size_t n) {
    return size_curve_case(c, 2, secs, note, n);
}
static int case_bins_curve_t1(bench_ctx *c, double *secs, char *note, size_t n) {
    return bins_curve_case(c, 1, secs, note, n);
}
static int case_bins_curve_t2(bench_ctx *c, double *secs, char *note, size_t n) {
    return bins_curve_case(c, 2, secs, note, n);
}

/* ---- post-hoc recalibration (include/calscope/recal.h) ---- */

/* Temperature scaling, 5-fold cross-fitted (6 fits: 5 folds + all rows) and applied, on the
 * 50,000 x 1000 dataset with logits: ln p of the generated probabilities (softmax-equivalent to
 * the generating logits). The logit matrix is built once, outside the timing, and kept for the
 * process (400 MB). */
static int case_recal_ts(bench_ctx *c, double *secs, char *note, size_t n) {
    static cs_dataset view;
    static double *logits;
    if (make_wide(c, note, n) != 0) return -1;
    if (!logits) {
        size_t nk = c->wide->n * c->wide->k;
        if (!(logits = malloc(nk * sizeof *logits))) return snprintf(note, n, "out of memory"), -1;
        for (size_t i = 0; i < nk; i++) logits[i] = log(c->wide->prob[i]);
        view = *c->wide;
        view.logit = logits;
    }
    cs_recal_options o;
    cs_recal_options_default(&o);
    o.threads = 2;
    cs_recal_info info;
    cs_error err;
    cs_error_clear(&err);
    double t0 = now();
    cs_dataset *r = cs_recal_apply(&view, CS_RECAL_TS, &o, &info, &err);
    *secs = now() - t0;
    if (!r) return snprintf(note, n, "cs_recal_apply: %s", err.msg), -1;
    snprintf(note, n, "cs_recal_apply ts, n=%zu K=%zu, 5 folds + all rows, 2 threads, %d full passes "
             "+ apply: temperature %.9f fold1 %.6f fold5 %.6f", view.n, view.k, info.passes,
             info.param[5][0], info.param[0][0], info.param[4][0]);
    cs_dataset_free(r);
    return 0;
}

/* Isotonic regression on the top-1 confidence, 5-fold cross-fitted and applied (the other
 * classes rescaled), on the loaded 1M x 10 file. */
static int case_recal_iso(bench_ctx *c, double *secs, char *note, size_t n) {
    if (!c->d) return snprintf(note, n, "no dataset"), -1;
    cs_recal_options o;
    cs_recal_options_default(&o);
    cs_recal_info info;
    cs_error err;
    cs_error_clear(&err);
    double t0 = now();
    cs_dataset *r = cs_recal_apply(c->d, CS_RECAL_ISO, &o, &info, &err);
    *secs = now() - t0;
    if (!r) return snprintf(note, n, "cs_recal_apply: %s", err.msg), -1;
    double mc = 0;
    for (size_t i = 0; i < r->n; i++) mc += r->conf[i];
    snprintf(note, n, "cs_recal_apply iso, n=%zu K=%zu, 5 folds (sort once, PAV per fold), copy + rescale "
             "included: mean_conf %.6f", r->n, r->k, mc / (double)r->n);
    cs_dataset_free(r);
    return 0;
}

/* The header of a wide file must cost no more than the same bytes of rows.
 * Builds, in memory, a file with K = 100,000 probability columns and 3 rows, and a file of the
 * same size with K = 10 (as many rows as it takes), and times cs_load_buffer on each two ways:
 *   - warm: in this process, in blocks of WIDE_HDR_BLOCK loads of one file, the two files
 *     alternating, best of all (a load right after one of the other file would fault in the
 *     memory the allocator just gave back, which says more about malloc than about the
 *     loader); the process CPU time beside the wall clock (on a shared machine a wall clock
 *     of a few milliseconds moves with the load average, the CPU time much less);
 *   - cold: one load in a fresh child process each (every page it touches is new, as for
 *     `calscope report FILE`), alternating, best of WIDE_HDR_REPS.
 * The target (wide / narrow <= 1) is met when both ratios are. *secs is the warm wide load;
 * the note carries every figure, the target and the load average for bench/reference_bench.py. */
enum { WIDE_HDR_K = 100000, WIDE_HDR_ROWS = 3, WIDE_HDR_REPS = 7, WIDE_HDR_BLOCK = 3 };
#define WIDE_HDR_TARGET 1.0     /* wide / narrow load time, at most */

static double cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One load of text in a fresh child process: its wall time, or -1 when it failed. */
static double cold_load(const char *text, size_t len, const cs_load_options *opt) {
    int fd[2];
    if (pipe(fd) != 0) return -1;
    pid_t pid = fork();
    if (pid < 0) { close(fd[0]); close(fd[1]); return -1; }
    if (pid == 0) {
        close(fd[0]);
        cs_error err;
        double t0 = now();
        cs_dataset *d = cs_load_buffer("cold.csv", text, len, opt, NULL, &err);
        double t = d ? now() - t0 : -1;
        ssize_t w = write(fd[1], &t, sizeof t);
        _exit(w == (ssize_t)sizeof t ? 0 : 1);
    }
    close(fd[1]);
    double t = -1;
    if (read(fd[0], &t, sizeof t) != (ssize_t)sizeof t) t = -1;
    close(fd[0]);
    int status;
    waitpid(pid, &status, 0);
    return t;
}

static char *wide_header_file(size_t k, size_t rows, size_t min_len, size_t *len) {
    size_t cap = 64, o = 0;
    char *b = NULL;
    for (int pass = 0; pass < 2; pass++) {
        o = 0;
#define PUT(...) do { int w_ = snprintf(b ? b + o : NULL, b ? cap - o : 0, __VA_ARGS__); o += (size_t)w_; } while (0)
        PUT("label");
        for (size_t j = 0; j < k; j++) PUT(",p_%zu", j);
        PUT("\n");
        for (size_t r = 0; r < rows || o < min_len; r++) {
            PUT("%zu", r % k);
            /* one-hot rows: every cell a short number, like a sparse classifier output */
            for (size_t j = 0; j < k; j++) PUT(",%s", j == r % k ? "1" : "0");
            PUT("\n");
        }
#undef PUT
        if (b) break;
        cap = o + 1;
        b = malloc(cap);
        if (!b) return NULL;
    }
    *len = o;
    return b;
}

static int case_wide_header(bench_ctx *c, double *secs, char *note, size_t n) {
    (void)c;
    size_t len[2];
    char *text[2];
    text[0] = wide_header_file(WIDE_HDR_K, WIDE_HDR_ROWS, 0, &len[0]);
    text[1] = text[0] ? wide_header_file(10, 0, len[0], &len[1]) : NULL;
    if (!text[0] || !text[1]) {
        free(text[0]);
        free(text[1]);
        return snprintf(note, n, "out of memory"), -1;
    }
    cs_load_options opt;
    cs_load_options_default(&opt);
    /* [0] wide, [1] narrow */
    double warm[2] = {1e300, 1e300}, cpu[2] = {1e300, 1e300}, cold[2] = {1e300, 1e300};
    size_t rows_n = 0;
    int failed = 0;
    /* cold first, while this process's heap holds little a child could inherit and write to */
    for (int rep = 0; rep < WIDE_HDR_REPS && !failed; rep++) {
        for (int which = 0; which < 2 && !failed; which++) {
            double t = cold_load(text[which], len[which], &opt);
            if (t < 0) {
                snprintf(note, n, "cold load in a child process failed");
                failed = 1;
            }
            if (t >= 0 && t < cold[which]) cold[which] = t;
        }
    }
    for (int rep = 0; rep < WIDE_HDR_REPS && !failed; rep++) {
        for (int which = 0; which < 2 && !failed; which++) {
            for (int b = 0; b < WIDE_HDR_BLOCK; b++) {
                cs_error err;
                double t0 = now(), c0 = cpu_now();
                cs_dataset *d = cs_load_buffer(which ? "narrow.csv" : "wide.csv", text[which],
                                               len[which], &opt, NULL, &err);
                double t = now() - t0, ct = cpu_now() - c0;
                if (!d) {
                    snprintf(note, n, "load failed: %s", err.msg);
                    failed = 1;
                    break;
                }
                if (which) rows_n = d->n;
                if (t < warm[which]) warm[which] = t;
                if (ct < cpu[which]) cpu[which] = ct;
                cs_dataset_free(d);
            }
        }
    }
    free(text[0]);
    free(text[1]);
    if (failed) return -1;
    double rw = warm[0] / warm[1], rc = cold[0] / cold[1], load[1] = {-1};
    if (getloadavg(load, 1) != 1) load[0] = -1;
    *secs = warm[0];
    snprintf(note, n, "K=100000 x %d rows %.2f MB vs K=10 x %zu rows %.2f MB (target: wide / narrow"
             " <= %.1f warm and cold: %s): warm k100000 %.6f s, k10 %.6f s, ratio %.3f, cpu_k100000"
             " %.6f s, cpu_k10 %.6f s, cpu_ratio %.3f, cold k100000_cold %.6f s, k10_cold %.6f s,"
             " cold_ratio %.3f, best of %d (warm: blocks of %d loads), load average %.2f",
             WIDE_HDR_ROWS, (double)len[0] / 1e6, rows_n, (double)len[1] / 1e6, WIDE_HDR_TARGET,
             rw <= WIDE_HDR_TARGET && rc <= WIDE_HDR_TARGET ? "met" : "NOT met", warm[0],
             warm[1], rw, cpu[0], cpu[1], cpu[0] / cpu[1], cold[0], cold[1], rc, WIDE_HDR_REPS,
             WIDE_HDR_BLOCK, load[0]);
    return 0;
}

static const bench_case cases[] = {
    {"load", "cs_load_file", 3, case_load},
    {"metrics", "accuracy+ECE+ACE+MCE+Brier+NLL", 0, case_metrics},
    {"rece_g_50k", "RECE-G, first 50,000 rows", 0, case_rece_g_50k},
    {"rece_g", "RECE-G, all rows", 0, case_rece_g_1m},
    {"topk_bars", "top-k bars, k = 1,2,3,5,10,20,50,100,1000", 3, case_topk_bars},
    {"classwise_1000", "classwise ECE over 1000 classes (prepare + evaluate)", 0, case_classwise},
    {"size_curve_t1", "size curve, 1 thread", 3, case_size_curve_t1},
    {"size_curve", "size curve, 2 threads", 3, case_size_curve_t2},
    {"bins_curve_t1", "bins curve, 1 thread", 3, case_bins_curve_t1},
    {"bins_curve", "bins curve, 2 threads", 3, case_bins_curve_t2},
    {"recal_iso_1m", "isotonic recalibration, 5-fold cross-fitted", 3, case_recal_iso},
    {"recal_ts", "temperature scaling, 5-fold cross-fitted", 3, case_recal_ts},
    {"wide_header", "load of a K = 100,000 header vs the same bytes at K = 10", 1, case_wide_header},
};

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    int repeats = 5;
    const char *only = NULL, *wide_out = NULL;
    int a = 1;
    for (; a < argc && argv[a][0] == '-' && argv[a][1]; a++) {
        if (!strcmp(argv[a], "-r") && a + 1 < argc) repeats = atoi(argv[++a]);
        else if (!strcmp(argv[a], "-c") && a + 1 < argc) only = argv[++a];
        else if (!strcmp(argv[a], "-w") && a + 1 < argc) wide_out = argv[++a];
        else break;
    }
    if (a != argc - 1 || repeats < 1) {
        fprintf(stderr, "usage: bench_engine [-r REPEATS] [-c CASE] [-w WIDE.raw] FILE.csv\n");
        return 2;
    }
    bench_ctx c = {.path = argv[a], .wide_out = wide_out};
    struct stat st;
    if (stat(c.path, &st) != 0) {
        fprintf(stderr, "bench_engine: cannot stat %s\n", c.path);
        return 2;
    }
    c.file_mb = (double)st.st_size / 1e6;
    c.idx = malloc(50000 * sizeof *c.idx);
    if (!c.idx) return 1;
    for (uint32_t i = 0; i < 50000; i++) c.idx[i] = i;

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const bench_case *bc = &cases[i];
        /* the load case always runs: the others need the dataset */
        if (only && strcmp(only, bc->key) && strcmp(bc->key, "load")) continue;
        int reps = bc->max_repeats && bc->max_repeats < repeats ? bc->max_repeats : repeats;
        double times[16];
        if (reps > 16) reps = 16;
        char note[1400] = "", last_note[1400] = "";
        int got = 0, failed = 0;
        for (int rep = 0; rep < reps; rep++) {
            double t = 0.0;
            if (bc->run(&c, &t, note, sizeof note) != 0) {
                failed = 1;
                break;
            }
            times[got++] = t;
            memcpy(last_note, note, sizeof note);
        }
        if (failed && got == 0) {
            printf("%s\tNA\tNA\t%s\n", bc->key, note);
        } else {
            qsort(times, (size_t)got, sizeof times[0], cmp_double);
            printf("%s\t%.6f\t%.6f\t%s (%s; best of %d)\n", bc->key, times[0], times[got / 2],
                   last_note, bc->what, got);
        }
        fflush(stdout);
    }
    if (c.rss_before_wide > 0)
        printf("peak_rss_mb\t%.1f\t%.1f\tpeak resident memory of the driver before the 50,000 x 1000 "
               "cases (%.0f MB after them)\n", c.rss_before_wide, c.rss_before_wide, peak_rss_mb());
    else
        printf("peak_rss_mb\t%.1f\t%.1f\tpeak resident memory of the driver\n", peak_rss_mb(),
               peak_rss_mb());
    cs_dataset_free(c.d);
    cs_dataset_free(c.wide);
    free(c.idx);
    return 0;
}
