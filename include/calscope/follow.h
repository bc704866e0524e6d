/* calscope engine: following a training run — the prediction files a folder (or a glob) fills
 * epoch by epoch, each taken once, in order, and only when it is complete (docs/follow.md).
 *
 * A follow watches one folder: FOLDER (every prediction file in it) or FOLDER/PATTERN (a glob on
 * the file names; only the last part of the path may hold * ? [...]). Prediction files are the
 * ones `calscope report` takes: NAME.csv, NAME.tsv, NAME.csv.gz, NAME.tsv.gz, NAME.npz (its own labels) and NAME.npy (with
 * fixed labels: cs_follow_options.labels, which is never a prediction file itself). Names
 * starting with '.' are skipped (an editor's or a writer's temporary file).
 *
 * Order: the files present when the follow opens come first, in natural order of their names
 * (digits compare as numbers: epoch_2 before epoch_10) or by modification time; later files in
 * the order they become complete (those completing in one scan, in the same order).
 *
 * Never half a file. A file renamed into the folder (inotify's IN_MOVED_TO: a writer's
 * os.replace) is complete at once. A file written in place is complete when:
 *  - .npy: its size is the size its header announces, and so is the labels file's (the second
 *    file of the pair may come later);
 *  - .csv / .tsv: it ends with a newline and neither its size nor its modification time has
 *    changed for `settle` seconds;
 *  - .npz: its zip central directory is whole (cs_follow_zip_whole), whatever the time;
 *  - .gz: its size and modification time have not changed for `settle` seconds.
 * A file whose load then fails while it changed (the loader's "file changed while loading", or
 * another size or time after the failure) goes back to waiting (cs_follow_retry), so it is never
 * reported half-read.
 *
 * Watching: inotify on the folder; when inotify cannot be had (inotify_init1 fails, e.g. no
 * inotify on the file system, or CALSCOPE_FOLLOW_POLL=1 in the environment, or options.poll),
 * the folder is listed again at each scan (polling). Either way the caller scans: the follow
 * starts no thread and keeps no rows — per file a name, a size, two times and a state.
 *
 * Ownership: cs_follow_open returns a follow the caller closes with cs_follow_close. Threads:
 * one follow belongs to one thread at a time. The pure functions may be called from any
 * thread. */
#ifndef CALSCOPE_FOLLOW_H
#define CALSCOPE_FOLLOW_H

#include <stddef.h>
#include <stdint.h>

#include "calscope/error.h"

typedef enum cs_follow_order { CS_FOLLOW_BY_NAME, CS_FOLLOW_BY_MTIME } cs_follow_order;

#define CS_FOLLOW_SETTLE_DEFAULT 1.0

typedef struct cs_follow_options {
    cs_follow_order order;
    double settle;        /* seconds a CSV or .gz must stay unchanged (default 1) */
    int poll;             /* 1: list the folder at each scan, never inotify */
    const char *labels;   /* NULL, or the labels .npy of every .npy prediction file (borrowed) */
} cs_follow_options;

void cs_follow_options_default(cs_follow_options *opt);

typedef struct cs_follow cs_follow;

/* Opens a follow of `where` (a folder, or a folder and a glob on names). Returns CS_OK with
 * *out set, or CS_EUSAGE with err set: "DIR: not a folder", "DIR: cannot open: REASON", a glob
 * above the last part of the path. The caller closes *out with cs_follow_close. */
cs_status cs_follow_open(const char *where, const cs_follow_options *opt, cs_follow **out, cs_error *err);

/* The descriptor to wait on for news (poll() for POLLIN), or -1 when polling. */
int cs_follow_fd(const cs_follow *f);

/* 1 when the follow fell back to polling because inotify_init1 failed (not when asked to poll);
 * then *why (may be NULL) gets the reason (static text). */
int cs_follow_inotify_failed(const cs_follow *f, const char **why);

/* Reads the news (the inotify events, or a new listing of the folder when polling) and appends
 * to *ready the paths that are complete at time `now` (seconds on the clock of the files'
 * modification times: CLOCK_REALTIME) and were not taken before, in order; each path is
 * "FOLDER/NAME", owned by the follow until cs_follow_close. Returns how many were appended
 * (*ready then holds them, an array the follow owns until the next scan), or -1 with err set
 * when the folder cannot be read (CS_EINPUT) or memory runs out. */
long cs_follow_scan(cs_follow *f, double now, const char *const **ready, cs_error *err);

/* The earliest time (same clock as cs_follow_scan) at which a file seen but not yet complete
 * may become complete by settling alone (a CSV ending with a newline), or a negative number
 * when no file is settling. A caller's idle timeout must not run out before it. */
double cs_follow_settling_until(const cs_follow *f);

/* The files seen but not complete (a CSV without its final newline, an .npy shorter than its
 * header says) — a caller that gives up says so. Appends their paths (owned by the follow) to
 * *names, an array the follow owns until the next call; returns how many. */
size_t cs_follow_incomplete(cs_follow *f, const char *const **names);

/* Puts a taken path back to waiting: its load failed because it was still changing. It is
 * taken again when it is complete by the rules above (a renamed-in file: when it settles). */
void cs_follow_retry(cs_follow *f, const char *path);

/* The identity of a file: what says that a name still names the file it named (a file renamed
 * over the name, or written again in place, has another). */
typedef struct cs_follow_id {
    uint64_t dev, ino;
    int64_t size;
    double mtime;          /* seconds, CLOCK_REALTIME */
} cs_follow_id;

/* The identity of the file `path` (one the follow returned) named when the follow last took it
 * (its look at that scan). Returns 1 with *id filled, 0 when the follow does not know path. */
int cs_follow_taken_id(const cs_follow *f, const char *path, cs_follow_id *id);

/* Whether `path` names the file of identity *id now: the same device and inode (numbers are
 * reused once a file is replaced, so the same size and modification time too). The follow's
 * own rule for a rename event of a file already taken. Any thread. */
int cs_follow_same_file(const char *path, const cs_follow_id *id);

/* How many files the follow tracks (taken or waiting) and the bytes it holds for them: what a
 * long run costs it. */
size_t cs_follow_tracked(const cs_follow *f, size_t *bytes);

void cs_follow_close(cs_follow *f);

/* ---- pure rules, for the follow and its tests ------------------------------------------- */

/* Natural order of names: runs of digits compare as numbers (epoch_2 < epoch_10; leading zeros
 * make no difference, then the shorter run first), everything else byte by byte. <0, 0, >0. */
int cs_follow_natural_cmp(const char *a, const char *b);

/* The kind of a file name: 0 not a prediction file, else one of these. */
enum { CS_FOLLOW_CSV = 1, CS_FOLLOW_GZ, CS_FOLLOW_NPY, CS_FOLLOW_NPZ };
int cs_follow_kind(const char *name);

/* What one look at a file saw. */
typedef struct cs_follow_look {
    int64_t size;
    double mtime;          /* seconds, CLOCK_REALTIME */
    int ends_newline;      /* CSV: the last byte is '\n' */
    int64_t npy_size;      /* .npy: the size its header announces, -1 when the header is not
                              whole (or not an .npy header) */
    int zip_whole;         /* .npz: the zip's central directory is whole (cs_follow_zip_whole) */
} cs_follow_look;

/* Whether a file of `kind` is complete at `now`: `look` is what is on disk, `changed_at` the
 * last time (same clock) the follow saw its size change under the same modification time (a
 * file system whose times are coarser than the writes; 0 when it never did: the file's own time
 * speaks for it), `moved_in` whether it was renamed into the folder. Pure. */
int cs_follow_complete(int kind, const cs_follow_look *look, double changed_at, int moved_in, double now,
                       double settle);

/* The size an .npy file must have by its header (magic, version, header length, 'descr' and
 * 'shape'), from its first `len` bytes; -1 when they do not hold a whole valid header. Pure. */
int64_t cs_follow_npy_size(const unsigned char *head, size_t len);

/* How many bytes of a file's end cs_follow_zip_whole wants to see (the end record with the
 * longest comment, the zip64 locator and record). */
#define CS_FOLLOW_ZIP_TAIL ((size_t)65536 + 22 + 20 + 56)

/* Whether a zip archive of `size` bytes, whose last `len` bytes are `tail`, is whole: it ends
 * with an end-of-central-directory record (zip64 too) whose central directory ends where that
 * record (or the zip64 record) starts, and starts with a directory entry when the tail holds
 * it. A zip being written has no such end yet (the directory is written last). Pure. */
int cs_follow_zip_whole(const unsigned char *tail, size_t len, int64_t size);

#endif
