/* Following a folder of prediction files (calscope/follow.h): the table of files seen, inotify
 * or polling, and each scan's looks and decisions. No thread: the caller scans. */
#define _GNU_SOURCE
#include "calscope/follow.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

enum { WAITING, TAKEN };

typedef struct entry {
    char *path;            /* "FOLDER/NAME" (owned) */
    const char *name;      /* inside path */
    int kind;              /* CS_FOLLOW_* */
    int state;
    int moved_in;          /* inotify saw it renamed in */
    int looked;            /* look holds a previous look */
    cs_follow_look look;
    double changed_at;     /* last change the follow saw (0: none) */
    dev_t dev;             /* the file of the last look (a rename event for this very file, */
    ino_t ino;             /* read after a listing took it, is not a new file) */
} entry;

struct cs_follow {
    char *dir;             /* the folder, without a trailing '/' */
    char *pattern;         /* glob on names, or NULL for every prediction file */
    cs_follow_options opt;
    dev_t labels_dev;      /* the --labels file, never a prediction file */
    ino_t labels_ino;
    int has_labels;
    int fd, wd;            /* inotify, or -1 */
    int inotify_failed;
    const char *why;
    int dirty;             /* list the folder at the next scan */
    entry *e;
    size_t n, cap;
    size_t *by_name;       /* indexes of e sorted by name, for lookups */
    size_t n_indexed;      /* how many of e by_name holds (entries added since: not yet) */
    const char **out;      /* the last scan's ready paths, or the incomplete ones */
    size_t out_cap;
};

void cs_follow_options_default(cs_follow_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->order = CS_FOLLOW_BY_NAME;
    opt->settle = CS_FOLLOW_SETTLE_DEFAULT;
}

static int has_glob(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] == '*' || s[i] == '?' || s[i] == '[') return 1;
    return 0;
}

/* Splits `where` into the folder and the glob on names (NULL: a folder). */
static cs_status split_where(cs_follow *f, const char *where, cs_error *err)
{
    size_t len = strlen(where);
    if (!has_glob(where, len)) {
        while (len > 1 && where[len - 1] == '/') len--;
        f->dir = strndup(where, len);
        return f->dir ? CS_OK : cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
    }
    const char *slash = strrchr(where, '/');
    if (slash && has_glob(where, (size_t)(slash - where)))
        return cs_error_set(err, CS_EUSAGE, 0, 0, "%s: a glob may match file names only, not folders", where);
    f->dir = slash ? strndup(where, slash == where ? 1 : (size_t)(slash - where)) : strdup(".");
    f->pattern = strdup(slash ? slash + 1 : where);
    return f->dir && f->pattern ? CS_OK : cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
}

static void start_inotify(cs_follow *f)
{
    f->fd = f->wd = -1;
    const char *env = getenv("CALSCOPE_FOLLOW_POLL");
    if (f->opt.poll || (env && strcmp(env, "1") == 0)) return;
    /* CALSCOPE_TEST_NO_INOTIFY=1: the test hook of a file system without inotify */
    const char *no = getenv("CALSCOPE_TEST_NO_INOTIFY");
    f->fd = no && strcmp(no, "1") == 0 ? (errno = ENOSYS, -1) : inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (f->fd >= 0)
        f->wd = inotify_add_watch(f->fd, f->dir, IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO |
                                                   IN_MOVED_FROM | IN_DELETE | IN_ATTRIB | IN_ONLYDIR);
    if (f->fd < 0 || f->wd < 0) {
        f->why = strerror(errno);   /* glibc's static texts */
        if (f->fd >= 0) close(f->fd);
        f->fd = -1;
        f->inotify_failed = 1;
    }
}

cs_status cs_follow_open(const char *where, const cs_follow_options *opt, cs_follow **out, cs_error *err)
{
    *out = NULL;
    cs_follow *f = calloc(1, sizeof *f);
    if (!f) return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
    if (opt) f->opt = *opt;
    else cs_follow_options_default(&f->opt);
    cs_status st = split_where(f, where, err);
    struct stat sb;
    if (st == CS_OK && stat(f->dir, &sb) != 0)
        st = cs_error_set(err, CS_EUSAGE, 0, 0, "%s: cannot open: %s", f->dir, strerror(errno));
    else if (st == CS_OK && !S_ISDIR(sb.st_mode))
        st = cs_error_set(err, CS_EUSAGE, 0, 0, "%s: not a folder (--follow takes a folder or a glob on file names)", f->dir);
    if (st != CS_OK) {
        f->fd = -1;
        cs_follow_close(f);
        return st;
    }
    if (f->opt.labels && stat(f->opt.labels, &sb) == 0) {
        f->has_labels = 1;
        f->labels_dev = sb.st_dev;
        f->labels_ino = sb.st_ino;
    }
    start_inotify(f);
    f->dirty = 1;
    *out = f;
    return CS_OK;
}

int cs_follow_fd(const cs_follow *f) { return f->fd; }

int cs_follow_inotify_failed(const cs_follow *f, const char **why)
{
    if (why) *why = f->why;
    return f->inotify_failed;
}

/* ---- the table of files ------------------------------------------------------------------ */

static int by_name_cmp(const void *a, const void *b, void *ctx)
{
    const cs_follow *f = ctx;
    return strcmp(f->e[*(const size_t *)a].name, f->e[*(const size_t *)b].name);
}

static entry *find(const cs_follow *f, const char *name)
{
    size_t lo = 0, hi = f->n_indexed;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(f->e[f->by_name[mid]].name, name);
        if (c == 0) return &f->e[f->by_name[mid]];
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

static void reindex(cs_follow *f)
{
    for (size_t i = 0; i < f->n; i++) f->by_name[i] = i;
    qsort_r(f->by_name, f->n, sizeof *f->by_name, by_name_cmp, f);
    f->n_indexed = f->n;
}

/* Adds NAME unsorted (the caller reindexes). Returns the entry, or NULL when out of memory. */
static entry *add(cs_follow *f, const char *name, int kind)
{
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 64;
        entry *e = realloc(f->e, cap * sizeof *e);
        if (!e) return NULL;
        f->e = e;
        size_t *ix = realloc(f->by_name, cap * sizeof *ix);
        if (!ix) return NULL;
        f->by_name = ix;
        f->cap = cap;
    }
    size_t dl = strlen(f->dir), nl = strlen(name);
    char *path = malloc(dl + nl + 2);
    if (!path) return NULL;
    memcpy(path, f->dir, dl);
    path[dl] = '/';
    memcpy(path + dl + 1, name, nl + 1);
    entry *e = &f->e[f->n++];
    memset(e, 0, sizeof *e);
    e->path = path;
    e->name = path + dl + 1;
    e->kind = kind;
    e->state = WAITING;
    return e;
}

static int wanted(const cs_follow *f, const char *name)
{
    return cs_follow_kind(name) && (!f->pattern || fnmatch(f->pattern, name, FNM_PERIOD) == 0);
}

/* Adds the wanted names of the folder not yet in the table. */
static cs_status list_folder(cs_follow *f, cs_error *err)
{
    DIR *d = opendir(f->dir);
    if (!d) return cs_error_set(err, CS_EINPUT, 0, 0, "%s: cannot read the folder: %s", f->dir, strerror(errno));
    size_t before = f->n;
    struct dirent *de;
    cs_status st = CS_OK;
    while ((de = readdir(d)) != NULL) {
        if (!wanted(f, de->d_name) || find(f, de->d_name)) continue;
        if (!add(f, de->d_name, cs_follow_kind(de->d_name))) {
            st = cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
            break;
        }
    }
    closedir(d);
    if (f->n != before) reindex(f);
    return st;
}

static cs_follow_id entry_id(const entry *e)
{
    cs_follow_id id = { (uint64_t)e->dev, (uint64_t)e->ino, e->look.size, e->look.mtime };
    return id;
}

int cs_follow_same_file(const char *path, const cs_follow_id *id)
{
    struct stat sb;
    if (stat(path, &sb) != 0) return 0;
    double mtime = (double)sb.st_mtim.tv_sec + (double)sb.st_mtim.tv_nsec * 1e-9;
    return (uint64_t)sb.st_dev == id->dev && (uint64_t)sb.st_ino == id->ino && (int64_t)sb.st_size == id->size &&
           mtime == id->mtime;
}

/* Whether e's name still names the file its last look saw. */
static int same_file(const entry *e)
{
    cs_follow_id id = entry_id(e);
    return e->looked && cs_follow_same_file(e->path, &id);
}

/* Drains the inotify queue: a name renamed in is marked, any event asks for a listing. */
static cs_status read_events(cs_follow *f, cs_error *err)
{
    char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
    for (;;) {
        ssize_t got = read(f->fd, buf, sizeof buf);
        if (got <= 0) break;
        f->dirty = 1;
        for (char *p = buf; p < buf + got;) {
            const struct inotify_event *ev = (const struct inotify_event *)p;
            p += sizeof *ev + ev->len;
            if (!(ev->mask & IN_MOVED_TO) || !ev->len || !wanted(f, ev->name)) continue;
            entry *e = find(f, ev->name);
            if (!e) {
                e = add(f, ev->name, cs_follow_kind(ev->name));
                if (!e) return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
                reindex(f);
                e = find(f, ev->name);
            }
            /* a new file under a taken name is a new epoch's file: taken again; the event of
             * the rename a listing has already seen names the same file, and is not */
            if (e->state == TAKEN && same_file(e)) continue;
            e->state = WAITING;
            e->moved_in = 1;
            e->looked = 0;
        }
    }
    return CS_OK;
}

/* ---- looking at a file ------------------------------------------------------------------- */

/* The size an .npy file announces and the size it has (-1, -1 when it cannot be read). */
static void npy_sizes(int fd, int64_t *want, int64_t *have)
{
    unsigned char head[4096 + 12];
    struct stat sb;
    ssize_t got = pread(fd, head, sizeof head, 0);
    *want = got > 0 ? cs_follow_npy_size(head, (size_t)got) : -1;
    *have = fstat(fd, &sb) == 0 ? (int64_t)sb.st_size : -1;
}

/* Whether the --labels file is there and whole (the second file of an .npy pair may come
 * later: its prediction files wait for it). Notes its identity, so that it is never taken as a
 * prediction file, once it exists. */
static int labels_whole(cs_follow *f)
{
    if (!f->opt.labels) return 1;
    int fd = open(f->opt.labels, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return 0;
    struct stat sb;
    int64_t want, have;
    npy_sizes(fd, &want, &have);
    if (fstat(fd, &sb) == 0) {
        f->has_labels = 1;
        f->labels_dev = sb.st_dev;
        f->labels_ino = sb.st_ino;
    }
    close(fd);
    return want >= 0 && want == have;
}

/* Whether the zip archive open at fd (size bytes) has its whole central directory. */
static int zip_whole(int fd, int64_t size)
{
    size_t len = size < (int64_t)CS_FOLLOW_ZIP_TAIL ? (size_t)size : CS_FOLLOW_ZIP_TAIL;
    unsigned char *tail = malloc(len ? len : 1);
    if (!tail) return 0;
    ssize_t got = pread(fd, tail, len, size - (int64_t)len);
    int whole = got == (ssize_t)len && cs_follow_zip_whole(tail, len, size);
    free(tail);
    return whole;
}

/* Fills *look from the file on disk, and e's file identity; 0 when it is gone (or is the
 * labels file). */
static int look_at(cs_follow *f, entry *e, cs_follow_look *look)
{
    if (e->kind == CS_FOLLOW_NPY && !labels_whole(f) && !f->has_labels) return 0;
    int fd = open(e->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return 0;
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) ||
        (f->has_labels && sb.st_dev == f->labels_dev && sb.st_ino == f->labels_ino)) {
        close(fd);
        return 0;
    }
    memset(look, 0, sizeof *look);
    e->dev = sb.st_dev;
    e->ino = sb.st_ino;
    look->size = (int64_t)sb.st_size;
    look->mtime = (double)sb.st_mtim.tv_sec + (double)sb.st_mtim.tv_nsec * 1e-9;
    look->npy_size = -1;
    if (e->kind == CS_FOLLOW_CSV && sb.st_size > 0) {
        char last = 0;
        look->ends_newline = pread(fd, &last, 1, sb.st_size - 1) == 1 && last == '\n';
    } else if (e->kind == CS_FOLLOW_NPZ) {
        look->zip_whole = zip_whole(fd, look->size);
    } else if (e->kind == CS_FOLLOW_NPY) {
        int64_t have;
        npy_sizes(fd, &look->npy_size, &have);
        if (!labels_whole(f)) look->npy_size = -1;   /* waits for its labels */
    }
    close(fd);
    return 1;
}

static int order_cmp(const void *a, const void *b, void *ctx)
{
    const cs_follow *f = ctx;
    const entry *x = *(entry *const *)a, *y = *(entry *const *)b;
    if (f->opt.order == CS_FOLLOW_BY_MTIME && x->look.mtime != y->look.mtime)
        return x->look.mtime < y->look.mtime ? -1 : 1;
    return cs_follow_natural_cmp(x->name, y->name);
}

static int reserve_out(cs_follow *f, size_t n)
{
    if (n <= f->out_cap) return 1;
    const char **o = realloc(f->out, n * sizeof *o);
    if (!o) return 0;
    f->out = o;
    f->out_cap = n;
    return 1;
}

long cs_follow_scan(cs_follow *f, double now, const char *const **ready, cs_error *err)
{
    *ready = NULL;
    if (f->fd >= 0 && read_events(f, err) != CS_OK) return -1;
    if (f->fd < 0) f->dirty = 1;
    if (f->dirty) {
        if (list_folder(f, err) != CS_OK) return -1;
        f->dirty = 0;
    }
    entry **done = malloc((f->n ? f->n : 1) * sizeof *done);
    if (!done) return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory"), -1;
    size_t n_done = 0;
    for (size_t i = 0; i < f->n; i++) {
        entry *e = &f->e[i];
        if (e->state != WAITING) continue;
        cs_follow_look look;
        if (!look_at(f, e, &look)) continue;
        /* a new size under the same time: the file system's times are coarser than the writes,
         * so the follow's own sight counts; a new time speaks for itself */
        if (e->looked && look.mtime != e->look.mtime) e->changed_at = 0;
        else if (e->looked && look.size != e->look.size) e->changed_at = now;
        e->look = look;
        e->looked = 1;
        if (cs_follow_complete(e->kind, &look, e->changed_at, e->moved_in, now, f->opt.settle)) done[n_done++] = e;
    }
    qsort_r(done, n_done, sizeof *done, order_cmp, f);
    if (!reserve_out(f, n_done + 1)) {
        free(done);
        return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory"), -1;
    }
    for (size_t i = 0; i < n_done; i++) {
        done[i]->state = TAKEN;
        done[i]->moved_in = 0;
        f->out[i] = done[i]->path;
    }
    free(done);
    *ready = f->out;
    return (long)n_done;
}

double cs_follow_settling_until(const cs_follow *f)
{
    double until = -1;
    for (size_t i = 0; i < f->n; i++) {
        const entry *e = &f->e[i];
        if (e->state != WAITING || !e->looked || e->kind == CS_FOLLOW_NPY || e->kind == CS_FOLLOW_NPZ) continue;
        if (e->kind == CS_FOLLOW_CSV && !e->look.ends_newline) continue;
        double last = e->look.mtime > e->changed_at ? e->look.mtime : e->changed_at;
        double t = last + f->opt.settle;
        if (until < 0 || t < until) until = t;
    }
    return until;
}

size_t cs_follow_incomplete(cs_follow *f, const char *const **names)
{
    size_t n = 0;
    *names = NULL;
    if (!reserve_out(f, f->n + 1)) return 0;
    for (size_t i = 0; i < f->n; i++)
        if (f->e[f->by_name[i]].state == WAITING && f->e[f->by_name[i]].looked) f->out[n++] = f->e[f->by_name[i]].path;
    *names = f->out;
    return n;
}

void cs_follow_retry(cs_follow *f, const char *path)
{
    for (size_t i = 0; i < f->n; i++) {
        if (strcmp(f->e[i].path, path) != 0) continue;
        f->e[i].state = WAITING;
        f->e[i].moved_in = 0;   /* it changed after the rename: it must settle */
    }
}

int cs_follow_taken_id(const cs_follow *f, const char *path, cs_follow_id *id)
{
    size_t dl = strlen(f->dir);
    if (strncmp(path, f->dir, dl) != 0 || path[dl] != '/') return 0;
    const entry *e = find(f, path + dl + 1);
    if (!e || !e->looked) return 0;
    *id = entry_id(e);
    return 1;
}

size_t cs_follow_tracked(const cs_follow *f, size_t *bytes)
{
    size_t b = sizeof *f + f->cap * (sizeof *f->e + sizeof *f->by_name) + f->out_cap * sizeof *f->out;
    for (size_t i = 0; i < f->n; i++) b += strlen(f->e[i].path) + 1;
    if (bytes) *bytes = b;
    return f->n;
}

void cs_follow_close(cs_follow *f)
{
    if (!f) return;
    if (f->fd >= 0) close(f->fd);
    for (size_t i = 0; i < f->n; i++) free(f->e[i].path);
    free(f->e);
    free(f->by_name);
    free(f->out);
    free(f->dir);
    free(f->pattern);
    free(f);
}
