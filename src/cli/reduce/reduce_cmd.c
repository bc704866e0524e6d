/* `calscope reduce` (docs/segmentation.md): parses argv through the flag table,
 * builds the plan and the mapping, runs the reduction on a worker thread while this thread
 * shows `case i/n` on a terminal's stderr and watches for the ending signals (INT, TERM, HUP,
 * QUIT), then writes the statistics file whole: to a temporary name in the same folder,
 * renamed over STATS at the end, so an interrupted or failed run leaves no partial file. A run
 * killed outright (SIGKILL, a power cut) leaves its temporary file: the next run into the same
 * folder removes it, and says so. */
#include "cli/reduce/reduce_cmd.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "calscope/reduce.h"
#include "calscope/text.h"
#include "calscope/segstats.h"
#include "calscope/text.h"
#include "calscope/thread.h"
#include "session/flags.h"

#define EXIT_INTERRUPTED 130

static atomic_int interrupted;

/* The signals that end a run: each becomes a cancel (the reduction stops at its next slab, a
 * write in progress finishes and its temporary file is removed), never a death that leaves the
 * temporary file behind. QUIT too: its core dump would show nothing but this wait. */
static const int ending_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
#define N_ENDING (sizeof ending_signals / sizeof ending_signals[0])

static void on_signal(int sig)
{
    (void)sig;
    atomic_store(&interrupted, 1);
}

/* Installs on_signal for the ending signals, keeping the actions it replaces in old[N_ENDING]. */
static void catch_ending_signals(struct sigaction *old)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;   /* a read of the manifest or a file goes on; the flag is polled */
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < N_ENDING; i++) sigaction(ending_signals[i], &sa, &old[i]);
}

static void restore_ending_signals(const struct sigaction *old)
{
    for (size_t i = 0; i < N_ENDING; i++) sigaction(ending_signals[i], &old[i], NULL);
}

static int exit_of(cs_status s)
{
    return s == CS_OK ? 0 : s == CS_EUSAGE ? 2 : s == CS_ECANCELLED ? EXIT_INTERRUPTED : 3;
}

static int fail(const cs_error *err)
{
    if (err->code == CS_ECANCELLED) fputs("calscope: interrupted; nothing written\n", stderr);
    else fprintf(stderr, "calscope: %s\n", err->msg);
    return exit_of(err->code);
}

/* ---- writing whole or not at all ---------------------------------------------------------- */

#define TEMP_PREFIX ".calscope-tmp-"

/* DIR/.calscope-tmp-PID-BASE: the same folder (rename stays on one file system) and the same
 * ending (.gz decides compression). */
static char *temp_name(const char *path)
{
    const char *base = strrchr(path, '/');
    size_t dir = base ? (size_t)(base - path) + 1 : 0;
    base = base ? base + 1 : path;
    size_t n = dir + strlen(base) + 48;
    char *t = malloc(n);
    if (t) snprintf(t, n, "%.*s" TEMP_PREFIX "%ld-%s", (int)dir, path, (long)getpid(), base);
    return t;
}

/* The PID in a temporary file's name (.calscope-tmp-PID-BASE, BASE not empty), or 0 when the
 * name is not one. */
static long temp_owner(const char *name)
{
    size_t np = strlen(TEMP_PREFIX);
    if (strncmp(name, TEMP_PREFIX, np) != 0) return 0;
    const char *p = name + np;
    long pid = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (pid > 99999999) return 0;
        pid = pid * 10 + (*p - '0');
    }
    return p[0] == '-' && p[1] && pid > 0 ? pid : 0;
}

/* Whether the temporary file `path` of process pid is stale: the process is gone here, and no
 * process holds the file's lock (write_stats holds it while it writes: a run on another
 * machine writing into a shared folder has a PID that means nothing here). A file that cannot
 * be locked (a file system without locks) is kept. */
static int temp_stale(const char *path, long pid)
{
    if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) return 0;
    int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);   /* NFS locks need write */
    if (fd < 0) return 0;
    struct stat sb;
    int stale = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && flock(fd, LOCK_EX | LOCK_NB) == 0;
    close(fd);
    return stale;
}

/* Removes the temporary files that runs killed outright (SIGKILL) left in STATS's folder, one
 * line on stderr for each. Only names of the temporary pattern whose process is gone. */
static void remove_stale_temps(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t dl = slash ? (size_t)(slash - path) + 1 : 0;
    char *dir = dl ? strndup(path, dl) : strdup("./");
    DIR *d = dir ? opendir(dir) : NULL;
    for (struct dirent *e; d && (e = readdir(d));) {
        long pid = temp_owner(e->d_name);
        if (!pid) continue;
        size_t n = dl + strlen(e->d_name) + 1;
        char *full = malloc(n);
        if (!full) break;
        snprintf(full, n, "%.*s%s", (int)dl, path, e->d_name);
        if (temp_stale(full, pid) && unlink(full) == 0) {
            char shown[1024];
            cs_text_escape(shown, sizeof shown, full, strlen(full), 0);
            fprintf(stderr, "calscope: removed %s: a temporary file left by process %ld, which is gone\n",
                    shown, pid);
        }
        free(full);
    }
    if (d) closedir(d);
    free(dir);
}

/* Fails early (before minutes of reduction) when STATS's folder takes no file: creates and
 * removes the temporary name write_stats will use. 0, or 3 after the message. */
/* STATS names something that is not a regular file (/dev/null, a FIFO, a terminal): it is
 * written in place. A temporary name renamed over it would replace the device itself (as root,
 * `-o /dev/null` turned /dev/null into a plain file). */
static int in_place(const char *path)
{
    struct stat sb;
    return strcmp(path, "-") == 0 || (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode));
}

static int probe_output(const char *path)
{
    if (in_place(path)) return 0;
    char *tmp = temp_name(path);
    if (!tmp) {
        fputs("calscope: out of memory\n", stderr);
        return 3;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
    int e = errno;
    if (fd >= 0) {
        close(fd);
        unlink(tmp);
    }
    free(tmp);
    if (fd >= 0) return 0;
    fprintf(stderr, "calscope: %s: cannot write: %s\n", path, strerror(e));
    return 3;
}

static int write_stats(const cs_segstats *st, const char *path)
{
    cs_error err;
    cs_error_clear(&err);
    if (in_place(path)) return cs_segstats_write(st, path, &err) == CS_OK ? 0 : fail(&err);
    char *tmp = temp_name(path);
    if (!tmp) {
        fputs("calscope: out of memory\n", stderr);
        return 3;
    }
    /* created and locked first: the lock says "being written" to a later run's cleanup, here or
     * on another machine sharing the folder, and goes with this process however it ends */
    int lock = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (lock >= 0) (void)flock(lock, LOCK_EX | LOCK_NB);
    int rc = 0;
    if (cs_segstats_write(st, tmp, &err) != CS_OK) rc = fail(&err);
    else if (atomic_load(&interrupted)) rc = fail(&(cs_error){ .code = CS_ECANCELLED });
    else if (rename(tmp, path) != 0) {
        fprintf(stderr, "calscope: %s: %s\n", path, strerror(errno));
        rc = 3;
    }
    if (rc) unlink(tmp);
    if (lock >= 0) close(lock);
    free(tmp);
    return rc;
}

/* STATS names a file the reduction reads (the same file by device and inode, through whatever
 * path): renamed over it at the end, the statistics would replace that input. Said before any
 * case is read, as a usage error. STATS that does not exist, or is written in place (-, a
 * device), is no input. */
static cs_status output_is_input(const char *out, const char *manifest, const cs_seg_plan *plan, cs_error *err)
{
    struct stat o;
    if (in_place(out) || stat(out, &o) != 0) return CS_OK;
    size_t n = plan->n;
    for (size_t i = 0; i <= 2 * n; i++) {
        const char *path = i == 2 * n ? manifest : i % 2 ? plan->cases[i / 2].labels : plan->cases[i / 2].probs;
        struct stat s;
        if (!path || stat(path, &s) != 0 || s.st_dev != o.st_dev || s.st_ino != o.st_ino) continue;
        if (i == 2 * n)
            return cs_error_set(err, CS_EUSAGE, 0, 0, "%s: -o names an input of the reduction (the manifest)", out);
        return cs_error_set(err, CS_EUSAGE, 0, 0, "%s: -o names an input of the reduction (%s of case '%s')", out,
                            i % 2 ? "labels" : "probabilities", plan->cases[i / 2].name);
    }
    return CS_OK;
}

/* ---- the closing summary --------------------------------------------------------------------- */

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* "calscope: WHAT 3 cases, 1,234,567 voxels in 0.8 s" on stderr, once the statistics file is
 * written: what the run did, so a log shows it (stdout may be the statistics themselves). */
static void say_done(const char *what, const cs_segstats *st, double t0)
{
    unsigned long long voxels = 0;
    for (size_t c = 0; c < st->n_cases; c++) voxels += st->voxels[c];
    char n[32];
    fprintf(stderr, "calscope: %s %zu case%s, %s voxels in %.1f s\n", what, st->n_cases,
            st->n_cases == 1 ? "" : "s", cs_text_count(n, sizeof n, voxels), now_seconds() - t0);
}

/* ---- --merge -------------------------------------------------------------------------------- */

static int merge(const ss_opts *o, const char *out)
{
    double t0 = now_seconds();
    cs_segstats **parts = calloc(o->n_files, sizeof *parts);
    if (!parts) {
        fputs("calscope: out of memory\n", stderr);
        return 3;
    }
    cs_error err;
    cs_error_clear(&err);
    cs_status s = CS_OK;
    for (size_t i = 0; i < o->n_files && s == CS_OK; i++) s = cs_segstats_read(o->files[i], &parts[i], &err);
    cs_segstats *all = NULL;
    if (s == CS_OK)
        s = cs_segstats_merge((const cs_segstats *const *)parts, (const char *const *)o->files, o->n_files, &all, &err);
    int rc = s == CS_OK ? write_stats(all, out) : fail(&err);
    if (rc == 0) {
        char what[64];
        snprintf(what, sizeof what, "merged %zu file%s:", o->n_files, o->n_files == 1 ? "" : "s");
        say_done(what, all, t0);
    }
    cs_segstats_free(all);
    for (size_t i = 0; i < o->n_files; i++) cs_segstats_free(parts[i]);
    free(parts);
    return rc;
}

/* ---- the reduction on a worker thread ------------------------------------------------------- */

typedef struct job {
    cs_segstats *st;
    const cs_seg_plan *plan;
    const cs_reduce_options *opt;
    cs_run run;
    cs_error err;
    cs_status status;
    atomic_int finished;
    pthread_mutex_t mu;       /* with cv: the worker says it has finished */
    pthread_cond_t cv;
} job;

static void *worker(void *vj)
{
    job *j = vj;
    j->status = cs_reduce_cases(j->st, j->plan, j->opt, &j->run, &j->err);
    pthread_mutex_lock(&j->mu);
    atomic_store(&j->finished, 1);
    pthread_cond_signal(&j->cv);
    pthread_mutex_unlock(&j->mu);
    return NULL;
}

/* Waits up to 100 ms for the worker to finish: woken at once when it does (a fixed sleep made
 * every reduction end on the next tenth of a second), else in time to show progress and to
 * see an interrupt. */
static void wait_a_tick(job *j)
{
    struct timespec t = cs_deadline_in(100);
    pthread_mutex_lock(&j->mu);
    if (!atomic_load(&j->finished)) pthread_cond_timedwait(&j->cv, &j->mu, &t);
    pthread_mutex_unlock(&j->mu);
}

/* Runs the job, showing progress on a terminal and turning the ending signals into a cancel. */
static cs_status run_job(job *j, const atomic_uchar *done, size_t n, atomic_int *cancel)
{
    pthread_t th;   /* the ending signals stay with this thread (calscope/thread.h) */
    int started = cs_helper_start(&th, worker, j);
    if (!started) worker(j);
    int tty = isatty(STDERR_FILENO);
    size_t shown = (size_t)-1;
    int shown_ppm = -1;
    while (started && !atomic_load(&j->finished)) {
        if (atomic_load(&interrupted)) atomic_store(cancel, 1);
        if (tty) {
            size_t d = 0;
            for (size_t i = 0; i < n; i++) d += atomic_load_explicit(&done[i], memory_order_relaxed) != 0;
            int ppm = atomic_load(j->run.progress_ppm);
            if (d != shown || ppm / 10000 != shown_ppm / 10000) {
                fprintf(stderr, "\rcalscope reduce: case %zu/%zu done, %d%%", d, n, ppm / 10000);
                fflush(stderr);
                shown = d;
                shown_ppm = ppm;
            }
        }
        wait_a_tick(j);
    }
    if (started) pthread_join(th, NULL);
    if (tty && shown != (size_t)-1) fputs("\r\033[K", stderr);
    return j->status;
}

/* glibc serves a block below its mmap threshold from the thread's arena, which keeps the pages
 * when the block is freed; and it raises that threshold to the size of every mmapped block
 * freed (up to 32 MiB). The reduction frees and makes 1-2 MiB buffers per case on worker and
 * helper threads, so each arena kept a few MiB and peak RSS grew with the threads that had
 * reduced a case (3 BraTS-size cases on 2 threads: 73.5 MiB against 68.5 for 2). A fixed
 * threshold keeps such buffers in their own mappings, given back when freed. */
static void fixed_mmap_threshold(void)
{
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, 256 * 1024);
#endif
}

static int reduce(const ss_opts *o, const char *out)
{
    double t0 = now_seconds();
    fixed_mmap_threshold();
    cs_error err;
    cs_error_clear(&err);
    cs_seg_mapping *m = NULL;
    cs_seg_plan *plan = NULL;
    cs_segstats *st = NULL;
    atomic_uchar *done = NULL;
    cs_status s = CS_OK;
    if (o->label_values) s = cs_seg_mapping_values(o->label_values, &m, &err);
    else if (o->regions) s = cs_seg_mapping_regions(o->regions, &m, &err);
    if (s == CS_OK)
        s = o->probs_dir ? cs_seg_plan_folders(o->probs_dir, o->load.labels, o->prob_suffix, &plan, &err)
                         : cs_seg_plan_manifest(o->files[0], &plan, &err);
    if (s == CS_OK) s = output_is_input(out, o->probs_dir ? NULL : o->files[0], plan, &err);
    cs_reduce_options opt;
    cs_reduce_options_default(&opt);
    opt.fine = o->fine ? o->fine : CS_SEGSTATS_FINE_DEFAULT;
    opt.sum_tol = o->load.sum_tol;
    opt.affine_tol = o->affine_tol;
    if (o->memory_mb >= 0) opt.memory = (uint64_t)o->memory_mb << 20;
    opt.mapping = m;
    if (s == CS_OK && !(done = calloc(plan->n, sizeof *done))) s = cs_error_set(&err, CS_ENOMEM, 0, 0, "out of memory");
    opt.done = done;
    if (s == CS_OK) s = cs_reduce_begin(plan, &opt, &st, &err);
    int rc;
    if (s == CS_OK) {
        atomic_int cancel = 0, ppm = 0;
        job j = { .st = st, .plan = plan, .opt = &opt, .run = { .threads = o->threads, .cancel = &cancel, .progress_ppm = &ppm },
                  .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };
        cs_error_clear(&j.err);
        atomic_init(&j.finished, 0);
        s = run_job(&j, done, plan->n, &cancel);
        if (s != CS_OK) err = j.err;
    }
    if (s == CS_OK && atomic_load(&interrupted)) s = cs_error_set(&err, CS_ECANCELLED, 0, 0, "cancelled");
    rc = s == CS_OK ? write_stats(st, out) : fail(&err);
    if (rc == 0) say_done("reduced", st, t0);
    cs_segstats_free(st);
    free(done);
    cs_seg_plan_free(plan);
    cs_seg_mapping_free(m);
    return rc;
}

int reduce_main(int argc, char **argv)
{
    ss_opts o;
    o.check_fn = NULL;
    int rc = ss_parse(argc, argv, SS_REDUCE, &o);
    if (rc) {
        ss_opts_free(&o);
        return rc == SS_EXIT_HELP ? 0 : rc;
    }
    struct sigaction old[N_ENDING];
    catch_ending_signals(old);
    const char *out = o.out_path ? o.out_path : "-";
    if (!in_place(out)) remove_stale_temps(out);
    rc = probe_output(out);
    if (!rc) rc = o.merge ? merge(&o, out) : reduce(&o, out);
    restore_ending_signals(old);
    ss_opts_free(&o);
    return rc;
}
