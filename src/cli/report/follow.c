/* `calscope report --follow DIR --format ndjson`: a training run's prediction files, each
 * measured as the report measures a FILE and printed as one JSON line as soon as it is complete
 * (docs/follow.md). The line is the report's own "files" entry (rep_out_json_file) made one
 * line, with "seq" first; a file that cannot be measured is its "errors" entry with "seq".
 *
 * Single-threaded: the follow (calscope/follow.h) starts no thread; the loop waits in poll() on
 * inotify's descriptor (or a timeout when polling) and on a pipe the SIGINT / SIGTERM handler
 * writes to, so a signal ends the wait at once and the status is 0 after the lines so far. */
#define _GNU_SOURCE
#include "cli/report/rep.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "calscope/follow.h"
#include "calscope/trend.h"

/* How often a folder without inotify is listed again. */
#define POLL_INTERVAL_MS 250

static int stop_pipe[2] = { -1, -1 };
static volatile sig_atomic_t stop_signal;

static void on_stop(int sig)
{
    int saved = errno;
    stop_signal = sig;
    if (write(stop_pipe[1], "x", 1) < 0) { /* the flag is set: poll's timeout finds it */ }
    errno = saved;
}

/* SIGINT / SIGTERM end the follow after the lines printed so far; the previous actions come
 * back in restore_signals. */
static struct sigaction old_int, old_term;
static int install_signals(void)
{
    if (pipe2(stop_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return -1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    return 0;
}

static void restore_signals(void)
{
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    close(stop_pipe[0]);
    close(stop_pipe[1]);
    stop_pipe[0] = stop_pipe[1] = -1;
}

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Writes an indented, multi-line JSON object as one line with "seq" first: the report's
 * writers put newlines and indentation only between tokens (strings escape theirs). */
static void print_line(const char *obj, size_t len, long seq)
{
    size_t i = 0;
    while (i < len && obj[i] != '{') i++;
    printf("{\"seq\": %ld, ", seq);
    char prev = '{';
    for (i++; i < len; i++) {
        if (obj[i] == '\n') {   /* ",\n     \"key\"" reads ", \"key\"", as the one-line parts do */
            while (i + 1 < len && obj[i + 1] == ' ') i++;
            if (prev == ',') putchar(' ');
            continue;
        }
        putchar(obj[i]);
        prev = obj[i];
    }
    putchar('\n');
    fflush(stdout);
}

/* Whether the file changed between two looks (size, time or the file the name points to). */
static int changed(const struct stat *a, const struct stat *b)
{
    return a->st_size != b->st_size || a->st_ino != b->st_ino || a->st_mtim.tv_sec != b->st_mtim.tv_sec ||
           a->st_mtim.tv_nsec != b->st_mtim.tv_nsec;
}

typedef struct follow_run {
    rep_opts *o;
    rep_opts csv;          /* o without --labels, which is for the .npy files only */
    cs_follow *f;
    long seq;
    size_t failed_checks;
    cs_trend trend;        /* each file's summary (no rows): the closing line's best epoch */
} follow_run;

/* Measures one complete file and prints its line. Returns 0 to go on, 1 when it was retried
 * (it changed while it was read: nothing printed), 2 when --fail-fast ends the run. */
static int one_file(follow_run *r, const char *path)
{
    struct stat before, after;
    int had = stat(path, &before) == 0;
    rep_file file;
    memset(&file, 0, sizeof file);
    file.path = path;
    const char *slash = strrchr(path, '/');
    const rep_opts *o = cs_follow_kind(slash ? slash + 1 : path) == CS_FOLLOW_NPY ? r->o : &r->csv;
    rep_measure_file(o, &file);
    int ok = file.loaded && !file.usage_error;
    if (!ok && had && (stat(path, &after) != 0 || changed(&before, &after) || strstr(file.error, "file changed while loading"))) {
        /* still being written: read again when it is complete, never reported half-read */
        rep_file_release(&file);
        cs_follow_retry(r->f, path);
        return 1;
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (mem) {
        if (ok) rep_out_json_file(mem, o, &file);
        else rep_out_json_error(mem, &file);
        fclose(mem);
        print_line(buf, len, r->seq++);
    }
    free(buf);
    cs_error err;
    cs_error_clear(&err);
    if (ok && file.m.evaluated) cs_trend_add(&r->trend, path, &file.m, &err);
    else cs_trend_add_gap(&r->trend, path, ok ? "the selection kept no sample" : file.error, &err);
    size_t failed = ok ? rep_checks_run(o, &file, 1) : 0;
    r->failed_checks += failed;
    rep_file_release(&file);
    return failed && r->o->fail_fast ? 2 : 0;
}

/* How long to wait for news (ms, -1 = until something happens), or 0 to end (idle). */
static int wait_ms(const follow_run *r, double last_news)
{
    double now = clock_s(CLOCK_REALTIME), mono = clock_s(CLOCK_MONOTONIC);
    double t = cs_follow_fd(r->f) < 0 ? POLL_INTERVAL_MS / 1e3 : INFINITY;
    double settling = cs_follow_settling_until(r->f);
    if (settling >= 0) t = fmin(t, fmax(settling - now, 0.01));
    if (r->o->idle_exit_given) {
        double left = last_news + r->o->idle_exit - mono;
        if (left <= 0 && settling < 0) return 0;     /* a settling file is news on its way */
        t = fmin(t, fmax(left, 0.01));
    }
    return isinf(t) ? -1 : (int)ceil(t * 1e3);
}

/* Says which files were still incomplete when the follow ended. */
static void say_incomplete(cs_follow *f)
{
    const char *const *names;
    size_t n = cs_follow_incomplete(f, &names);
    for (size_t i = 0; i < n; i++) fprintf(stderr, "calscope: %s: not complete when the follow ended; not reported\n", names[i]);
}

/* The loop: scan, print what is complete, wait. Returns the exit status. */
static int follow_loop(follow_run *r)
{
    double last_news = clock_s(CLOCK_MONOTONIC);
    for (;;) {
        const char *const *ready;
        cs_error err;
        cs_error_clear(&err);
        long n = cs_follow_scan(r->f, clock_s(CLOCK_REALTIME), &ready, &err);
        if (n < 0) {
            fprintf(stderr, "calscope: %s\n", err.msg);
            return 3;
        }
        for (long i = 0; i < n && !stop_signal; i++) {
            int rc = one_file(r, ready[i]);
            if (rc == 2) return 1;
            if (rc == 0) last_news = clock_s(CLOCK_MONOTONIC);
            if (r->o->max_files && r->seq >= r->o->max_files) return r->failed_checks ? 1 : 0;
        }
        if (stop_signal) return r->failed_checks ? 1 : 0;
        int ms = wait_ms(r, last_news);
        if (ms == 0) {
            say_incomplete(r->f);
            return r->failed_checks ? 1 : 0;
        }
        struct pollfd pf[2] = { { stop_pipe[0], POLLIN, 0 }, { cs_follow_fd(r->f), POLLIN, 0 } };
        poll(pf, cs_follow_fd(r->f) >= 0 ? 2 : 1, ms);
        if (stop_signal) return r->failed_checks ? 1 : 0;
    }
}

/* The closing line on stderr: how many files, and the best epoch by the first --check's metric
 * (else ECE): "calscope: --follow: 30 files; best ece 0.0094 at runs/epoch_29.csv". */
static void say_best(const follow_run *r)
{
    if (!r->trend.n) return;
    int id = r->o->n_checks ? r->o->checks[0].metric : CS_METRIC_ECE;
    long b = cs_trend_best(&r->trend, id);
    fprintf(stderr, "calscope: --follow: %zu file%s", r->trend.n, r->trend.n == 1 ? "" : "s");
    if (b >= 0) fprintf(stderr, "; best %s %.4g at %s", cs_metric_name(id), r->trend.epoch[b].value[id], r->trend.epoch[b].path);
    fputc('\n', stderr);
}

int rep_follow_main(rep_opts *o)
{
    cs_follow_options fo;
    ss_follow_options(o, &fo);
    cs_error err;
    cs_error_clear(&err);
    static follow_run r;   /* static: rep_opts is large */
    memset(&r, 0, sizeof r);
    r.o = o;
    r.csv = *o;
    r.csv.load.labels = NULL;
    if (cs_follow_open(o->follow, &fo, &r.f, &err) != CS_OK) {
        fprintf(stderr, "calscope: --follow %s\n", err.msg);
        return err.code == CS_EUSAGE ? 2 : 3;
    }
    const char *why;
    if (cs_follow_inotify_failed(r.f, &why))
        fprintf(stderr, "calscope: --follow: no inotify here (%s): the folder is listed every %.2g s\n", why,
                POLL_INTERVAL_MS / 1e3);
    if (install_signals() != 0) {
        fprintf(stderr, "calscope: --follow: cannot make a pipe: %s\n", strerror(errno));
        cs_follow_close(r.f);
        return 3;
    }
    int rc = follow_loop(&r);
    say_best(&r);
    cs_trend_free(&r.trend);
    restore_signals();
    cs_follow_close(r.f);
    return rc;
}
