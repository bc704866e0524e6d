/* calscope engine benchmark driver (`make bench` runs it through bench/run.sh).
 *
 *   bench_engine [-r REPEATS] [-c CASE] FILE.csv
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "calscope/dataset.h"
#include "calscope/error.h"
#include "calscope/load.h"
#include "calscope/metrics.h"

typedef struct bench_ctx {
    const char *path;
    double file_mb;        /* file size in MB (10^6 bytes) */
    cs_dataset *d;         /* loaded by the load case, used by the later ones */
    uint32_t *idx;         /* 0..n-1, for the subset cases */
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
    double t0 = now();
    cs_dataset *d = cs_load_file(c->path, &opt, &sum, &err);
    *secs = now() - t0;
    if (!d) {
        snprintf(note, n, "load failed: %s", err.msg);
        cs_load_summary_free(&sum);
        return -1;
    }
    snprintf(note, n, "%.0f MB/s; %zu rows x %zu classes; %.1f MB file; peak RSS %.0f MB",
             c->file_mb / *secs, d->n, d->k, c->file_mb, peak_rss_mb());
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

/* Later: "topk_bars" (top-k ECE bars on 50,000 x 1000), "size_curve" (size curve, R=20). */
static const bench_case cases[] = {
    {"load", "cs_load_file", 3, case_load},
    {"metrics", "accuracy+ECE+ACE+MCE+Brier+NLL", 0, case_metrics},
    {"rece_g_50k", "RECE-G, first 50,000 rows", 0, case_rece_g_50k},
    {"rece_g", "RECE-G, all rows", 0, case_rece_g_1m},
};

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    int repeats = 5;
    const char *only = NULL;
    int a = 1;
    for (; a < argc && argv[a][0] == '-' && argv[a][1]; a++) {
        if (!strcmp(argv[a], "-r") && a + 1 < argc) repeats = atoi(argv[++a]);
        else if (!strcmp(argv[a], "-c") && a + 1 < argc) only = argv[++a];
        else break;
    }
    if (a != argc - 1 || repeats < 1) {
        fprintf(stderr, "usage: bench_engine [-r REPEATS] [-c CASE] FILE.csv\n");
        return 2;
    }
    bench_ctx c = {.path = argv[a]};
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
    printf("peak_rss_mb\t%.1f\t%.1f\tpeak resident memory of the driver\n", peak_rss_mb(),
           peak_rss_mb());
    cs_dataset_free(c.d);
    free(c.idx);
    return 0;
}
