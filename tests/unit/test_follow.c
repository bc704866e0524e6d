/* Following a folder (calscope/follow.h): natural order, the completeness rule from given sizes
 * and times, .npy sizes by header against numpy's own files, and scans of a real folder with an
 * injected clock (no test waits for time to pass), by inotify and by polling. */
#define _GNU_SOURCE
#include "support/cs_test.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "calscope/follow.h"

static void test_natural_order(void **state)
{
    (void)state;
    assert_true(cs_follow_natural_cmp("epoch_2.csv", "epoch_10.csv") < 0);
    assert_true(cs_follow_natural_cmp("epoch_10.csv", "epoch_9.csv") > 0);
    assert_true(cs_follow_natural_cmp("epoch_002.csv", "epoch_10.csv") < 0);
    assert_true(cs_follow_natural_cmp("a.csv", "a.csv") == 0);
    assert_true(cs_follow_natural_cmp("e2.csv", "e02.csv") < 0);    /* equal numbers: fewer zeros first */
    assert_true(cs_follow_natural_cmp("run1_epoch_10", "run2_epoch_1") < 0);
    assert_true(cs_follow_natural_cmp("b", "a10") > 0);
    assert_true(cs_follow_natural_cmp("x", "x1") < 0);
    /* 30 names sorted by it: epoch_1 .. epoch_30 in numeric order */
    char names[30][32];
    const char *p[30];
    for (int i = 0; i < 30; i++) {
        snprintf(names[i], sizeof names[i], "epoch_%d.csv", 30 - i);
        p[i] = names[i];
    }
    for (int i = 1; i < 30; i++)
        for (int j = i; j > 0 && cs_follow_natural_cmp(p[j - 1], p[j]) > 0; j--) {
            const char *t = p[j]; p[j] = p[j - 1]; p[j - 1] = t;
        }
    for (int i = 0; i < 30; i++) {
        char want[32];
        snprintf(want, sizeof want, "epoch_%d.csv", i + 1);
        assert_string_equal(p[i], want);
    }
}

static void test_kinds(void **state)
{
    (void)state;
    assert_int_equal(cs_follow_kind("e1.csv"), CS_FOLLOW_CSV);
    assert_int_equal(cs_follow_kind("e1.tsv"), CS_FOLLOW_CSV);
    assert_int_equal(cs_follow_kind("e1.csv.gz"), CS_FOLLOW_GZ);
    assert_int_equal(cs_follow_kind("e1.npy"), CS_FOLLOW_NPY);
    assert_int_equal(cs_follow_kind(".e1.csv"), 0);          /* a temporary file */
    assert_int_equal(cs_follow_kind("e1.csv.tmp"), 0);
    assert_int_equal(cs_follow_kind("e1.npz"), CS_FOLLOW_NPZ);
    assert_int_equal(cs_follow_kind("e1.npz.tmp"), 0);
    assert_int_equal(cs_follow_kind(".csv"), 0);
}

static void test_complete_rule(void **state)
{
    (void)state;
    cs_follow_look l = { .size = 100, .mtime = 1000.0, .ends_newline = 1, .npy_size = -1 };
    /* a CSV: newline and settle seconds unchanged, by its time */
    assert_false(cs_follow_complete(CS_FOLLOW_CSV, &l, 0, 0, 1000.5, 1.0));
    assert_true(cs_follow_complete(CS_FOLLOW_CSV, &l, 0, 0, 1001.0, 1.0));
    /* ... and by what the follow saw change (a coarse file time) */
    assert_false(cs_follow_complete(CS_FOLLOW_CSV, &l, 1000.8, 0, 1001.5, 1.0));
    assert_true(cs_follow_complete(CS_FOLLOW_CSV, &l, 1000.8, 0, 1001.8, 1.0));
    /* no final newline: never, however old */
    l.ends_newline = 0;
    assert_false(cs_follow_complete(CS_FOLLOW_CSV, &l, 0, 0, 99999.0, 1.0));
    /* renamed in: at once */
    assert_true(cs_follow_complete(CS_FOLLOW_CSV, &l, 0, 1, 1000.0, 1.0));
    /* a .gz: settle only */
    assert_false(cs_follow_complete(CS_FOLLOW_GZ, &l, 0, 0, 1000.9, 1.0));
    assert_true(cs_follow_complete(CS_FOLLOW_GZ, &l, 0, 0, 1001.0, 1.0));
    /* settle 0: at once when it ends with a newline */
    l.ends_newline = 1;
    assert_true(cs_follow_complete(CS_FOLLOW_CSV, &l, 0, 0, 1000.0, 0.0));
    /* an .npy: its size by its header, whatever the time */
    cs_follow_look n = { .size = 128, .mtime = 1000.0, .npy_size = 208 };
    assert_false(cs_follow_complete(CS_FOLLOW_NPY, &n, 0, 0, 99999.0, 1.0));
    assert_false(cs_follow_complete(CS_FOLLOW_NPY, &n, 0, 1, 99999.0, 1.0));
    n.size = 208;
    assert_true(cs_follow_complete(CS_FOLLOW_NPY, &n, 0, 0, 1000.0, 1.0));
    n.npy_size = -1;
    assert_false(cs_follow_complete(CS_FOLLOW_NPY, &n, 0, 0, 99999.0, 1.0));
}

/* An .npy header as numpy 1.x writes it (format 1.0, padded to 64 bytes). */
static size_t npy_header(unsigned char *buf, const char *dict)
{
    size_t dl = strlen(dict);
    size_t total = (10 + dl + 1 + 63) / 64 * 64;
    size_t hlen = total - 10;
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (unsigned char)(hlen & 0xff);
    buf[9] = (unsigned char)(hlen >> 8);
    memcpy(buf + 10, dict, dl);
    memset(buf + 10 + dl, ' ', hlen - dl - 1);
    buf[total - 1] = '\n';
    return total;
}

static void test_npy_size(void **state)
{
    (void)state;
    unsigned char b[256];
    size_t h = npy_header(b, "{'descr': '<f8', 'fortran_order': False, 'shape': (20, 3), }");
    assert_int_equal(h, 128);
    assert_int_equal(cs_follow_npy_size(b, h), 128 + 20 * 3 * 8);
    assert_int_equal(cs_follow_npy_size(b, h - 1), -1);        /* the header is not whole */
    assert_int_equal(cs_follow_npy_size(b, 9), -1);
    h = npy_header(b, "{'descr': '<i8', 'fortran_order': False, 'shape': (20,), }");
    assert_int_equal(cs_follow_npy_size(b, h), (int64_t)h + 160);
    h = npy_header(b, "{'descr': '|u1', 'fortran_order': False, 'shape': (), }");
    assert_int_equal(cs_follow_npy_size(b, h), (int64_t)h + 1);
    h = npy_header(b, "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 5), }");
    assert_int_equal(cs_follow_npy_size(b, h), (int64_t)h);
    /* an item size past any dtype, a count past int64: no size (the fuzzer's find) */
    h = npy_header(b, "{'descr': '<f77777777777777777777777', 'fortran_order': False, 'shape': (2,), }");
    assert_int_equal(cs_follow_npy_size(b, h), -1);
    h = npy_header(b, "{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 4), }");
    assert_int_equal(cs_follow_npy_size(b, h), -1);
    memcpy(b, "\x93NUMPX", 6);
    assert_int_equal(cs_follow_npy_size(b, h), -1);
}

static void put_le(unsigned char *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++) p[i] = (unsigned char)(v >> (8 * i));
}

/* A zip of one stored member "a.npy" (3 bytes) as a writer lays it out: the local header and
 * the data (0..37), the central directory (38..88), then with zip64 the zip64 record (56 bytes)
 * and its locator (20), then the end record (22) and its comment. Returns the size. Only the
 * signatures, sizes and offsets the rule reads are filled in. */
static size_t small_zip(unsigned char *z, int zip64, const char *comment)
{
    memset(z, 0, 512);
    memcpy(z, "PK\3\4", 4);
    memcpy(z + 30, "a.npy", 5);
    memcpy(z + 35, "abc", 3);
    memcpy(z + 38, "PK\1\2", 4);
    memcpy(z + 38 + 46, "a.npy", 5);
    size_t at = 89;
    if (zip64) {
        memcpy(z + at, "PK\6\6", 4);
        put_le(z + at + 40, 51, 8);            /* the directory's size and offset */
        put_le(z + at + 48, 38, 8);
        memcpy(z + at + 56, "PK\6\7", 4);
        put_le(z + at + 56 + 8, at, 8);        /* where the zip64 record is */
        at += 56 + 20;
    }
    memcpy(z + at, "PK\5\6", 4);
    put_le(z + at + 8, zip64 ? 0xFFFF : 1, 2);
    put_le(z + at + 10, zip64 ? 0xFFFF : 1, 2);
    put_le(z + at + 12, zip64 ? 0xFFFFFFFFu : 51, 4);
    put_le(z + at + 16, zip64 ? 0xFFFFFFFFu : 38, 4);
    put_le(z + at + 20, strlen(comment), 2);
    memcpy(z + at + 22, comment, strlen(comment));
    return at + 22 + strlen(comment);
}

/* Every prefix of the archive is not whole; the whole one is (what a tail of it shows too). */
static void zip_prefixes(const unsigned char *z, size_t size)
{
    for (size_t n = 0; n < size; n++) assert_int_equal(cs_follow_zip_whole(z, n, (int64_t)n), 0);
    assert_int_equal(cs_follow_zip_whole(z, size, (int64_t)size), 1);
    assert_int_equal(cs_follow_zip_whole(z + 60, size - 60, (int64_t)size), 1);   /* a tail */
}

static void test_zip_whole(void **state)
{
    (void)state;
    unsigned char z[512];
    size_t n = small_zip(z, 0, "");
    assert_int_equal(n, 111);
    zip_prefixes(z, n);
    zip_prefixes(z, small_zip(z, 0, "a comment"));
    zip_prefixes(z, small_zip(z, 1, ""));
    /* a directory that does not end where the end record starts, or does not start with an
     * entry: not whole */
    n = small_zip(z, 0, "");
    put_le(z + 89 + 16, 37, 4);
    assert_int_equal(cs_follow_zip_whole(z, n, (int64_t)n), 0);
    n = small_zip(z, 0, "");
    memcpy(z + 38, "PK\3\4", 4);
    assert_int_equal(cs_follow_zip_whole(z, n, (int64_t)n), 0);
    /* a zip64 locator whose record offset wraps to 56 bytes before the tail, where a forged
     * record and directory wait: no record (the fuzzer's find). An unchecked rule would read
     * before the buffer and call the archive whole. */
    unsigned char forged[128 + 512] = {0};
    unsigned char *t = forged + 128;
    n = small_zip(t, 1, "");
    put_le(t + 89 + 56 + 8, UINT64_MAX - 55, 8);         /* t - 56 once added to t */
    memcpy(t - 56, "PK\6\6", 4);
    put_le(t - 16, 51, 8);                                /* cd_size */
    put_le(t - 8, UINT64_MAX - 55 - 51, 8);               /* cd_off: ends at the record */
    memcpy(t - 107, "PK\1\2", 4);
    assert_int_equal(cs_follow_zip_whole(t, n, (int64_t)n), 0);
    /* an empty archive is its end record alone */
    n = small_zip(z, 0, "");
    memset(z + 89 + 8, 0, 12);
    assert_int_equal(cs_follow_zip_whole(z + 89, 22, 22), 1);
}

/* ---- scans of a real folder ---------------------------------------------------------------- */

static char tmpdir[256];

static void put(const char *name, const char *text, double mtime)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", tmpdir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    if (mtime > 0) {
        struct timespec ts[2] = { { (time_t)mtime, 0 }, { (time_t)mtime, 0 } };
        assert_int_equal(utimensat(AT_FDCWD, p, ts, 0), 0);
    }
}

static void make_dir(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/cs_follow_XXXXXX");
    assert_non_null(mkdtemp(tmpdir));
}

static void remove_dir(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    assert_int_equal(system(cmd), 0);
}

static const char *base(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* Scans at `now` and returns the names taken, joined by spaces. */
static const char *scan_names(cs_follow *f, double now)
{
    static char out[4096];
    const char *const *ready;
    cs_error err;
    cs_error_clear(&err);
    long n = cs_follow_scan(f, now, &ready, &err);
    assert_true(n >= 0);
    out[0] = '\0';
    for (long i = 0; i < n; i++)
        snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s", i ? " " : "", base(ready[i]));
    return out;
}

/* Opens a follow of `where` under o (NULL: the defaults); the test fails unless it opens. */
static cs_follow *open_ok(const char *where, const cs_follow_options *o)
{
    cs_follow *f;
    cs_error err;
    cs_error_clear(&err);
    if (cs_follow_open(where, o, &f, &err) != CS_OK) fail_msg("%s: %s", where, err.msg);
    return f;
}

static const char CSV[] = "label,p_0,p_1\n0,0.9,0.1\n1,0.2,0.8\n";

static void scans(int poll)
{
    make_dir();
    put("epoch_10.csv", CSV, 1000);
    put("epoch_2.csv", CSV, 1000);
    put("epoch_1.csv", CSV, 1000);
    put("notes.txt", "x\n", 1000);
    put(".epoch_3.csv", CSV, 1000);
    cs_follow_options o;
    cs_follow_options_default(&o);
    o.poll = poll;
    cs_follow *f = open_ok(tmpdir, &o);
    assert_int_equal(cs_follow_fd(f) >= 0, !poll);
    /* the files already there, old: at once, in natural order */
    assert_string_equal(scan_names(f, 5000), "epoch_1.csv epoch_2.csv epoch_10.csv");
    assert_string_equal(scan_names(f, 5001), "");
    /* written in place: no newline yet, then a newline, then settled */
    put("epoch_11.csv", "label,p_0,p_1\n0,0.9,0.1\n1,0.2", 6000);
    assert_string_equal(scan_names(f, 6000.5), "");
    assert_string_equal(scan_names(f, 7000), "");   /* never without its final newline */
    const char *const *names;
    assert_int_equal(cs_follow_incomplete(f, &names), 1);
    assert_string_equal(base(names[0]), "epoch_11.csv");
    assert_true(cs_follow_settling_until(f) < 0);         /* nothing settles without its newline */
    put("epoch_11.csv", CSV, 7000);
    /* complete one second after its time */
    assert_string_equal(scan_names(f, 7000.5), "");
    assert_true(cs_follow_settling_until(f) == 7001);
    assert_string_equal(scan_names(f, 7000.9), "");
    assert_string_equal(scan_names(f, 7001), "epoch_11.csv");
    /* its load failed because it changed: waits again, settles again */
    char p[512];
    snprintf(p, sizeof p, "%s/epoch_11.csv", tmpdir);
    cs_follow_retry(f, p);
    put("epoch_11.csv", "label,p_0,p_1\n0,0.5,0.5\n", 7002);
    assert_string_equal(scan_names(f, 7002.5), "");
    assert_string_equal(scan_names(f, 7003), "epoch_11.csv");
    /* a coarse file time: the size grows under the same time; the follow's sight counts */
    put("epoch_12.csv", "label,p_0,p_1\n", 8000);
    assert_string_equal(scan_names(f, 8000.5), "");
    put("epoch_12.csv", CSV, 8000);
    assert_string_equal(scan_names(f, 8000.7), "");
    assert_true(cs_follow_settling_until(f) == 8001.7);
    assert_string_equal(scan_names(f, 8001.6), "");
    assert_string_equal(scan_names(f, 8001.7), "epoch_12.csv");
    size_t bytes;
    assert_int_equal(cs_follow_tracked(f, &bytes), 5);   /* notes.txt and the dot file are not tracked */
    assert_true(bytes > 0 && bytes < 16384);
    cs_follow_close(f);
    remove_dir();
}

static void test_scans_polling(void **state) { (void)state; scans(1); }
static void test_scans_inotify(void **state) { (void)state; scans(0); }

/* A file renamed in (inotify) is taken at once, whatever its time; polling cannot see the
 * rename and waits for it to settle. */
static void renamed_in(int poll)
{
    make_dir();
    cs_follow_options o;
    cs_follow_options_default(&o);
    o.poll = poll;
    o.settle = 3600;
    cs_follow *f = open_ok(tmpdir, &o);
    assert_string_equal(scan_names(f, 100), "");
    put(".tmp_epoch_1", CSV, 5000);
    char a[512], b[512];
    snprintf(a, sizeof a, "%s/.tmp_epoch_1", tmpdir);
    snprintf(b, sizeof b, "%s/epoch_1.csv", tmpdir);
    assert_int_equal(rename(a, b), 0);
    assert_string_equal(scan_names(f, 5000), poll ? "" : "epoch_1.csv");
    assert_string_equal(scan_names(f, 8600), poll ? "epoch_1.csv" : "");
    cs_follow_close(f);
    remove_dir();
}

/* A rename event read after the file was taken (a listing saw it first, as when the rename
 * lands between the scan's read of the events and its listing) names the same file: it is not
 * a new epoch. Moving the taken file out and back in gives the same event for the same file;
 * another file renamed over the name is a new epoch. */
static void test_rename_event_of_taken_file(void **state)
{
    (void)state;
    make_dir();
    cs_follow_options o;
    cs_follow_options_default(&o);
    o.settle = 3600;
    cs_follow *f = open_ok(tmpdir, &o);
    put(".tmp_epoch_1", CSV, 5000);
    char a[512], b[512];
    snprintf(a, sizeof a, "%s/.tmp_epoch_1", tmpdir);
    snprintf(b, sizeof b, "%s/epoch_1.csv", tmpdir);
    assert_int_equal(rename(a, b), 0);
    assert_string_equal(scan_names(f, 5000), "epoch_1.csv");
    cs_follow_id first, now;                 /* the identity a caller keeps for its epoch */
    assert_int_equal(cs_follow_taken_id(f, b, &first), 1);
    assert_int_equal(cs_follow_taken_id(f, a, &now), 0);    /* not a file the follow took */
    assert_int_equal(rename(b, a), 0);
    assert_int_equal(rename(a, b), 0);
    assert_string_equal(scan_names(f, 5001), "");    /* the same file: not taken twice */
    assert_int_equal(cs_follow_same_file(b, &first), 1);
    put(".tmp_epoch_1", "label,p_0,p_1\n1,0.3,0.7\n", 5002);
    assert_int_equal(rename(a, b), 0);
    assert_int_equal(cs_follow_same_file(b, &first), 0);    /* the name names another file */
    assert_string_equal(scan_names(f, 5002), "epoch_1.csv");   /* a new file under the name */
    assert_int_equal(cs_follow_taken_id(f, b, &now), 1);
    assert_int_equal(cs_follow_same_file(b, &now), 1);
    assert_int_equal(cs_follow_same_file(b, &first), 0);
    cs_follow_close(f);
    remove_dir();
}

static void test_renamed_in_inotify(void **state) { (void)state; renamed_in(0); }
static void test_renamed_in_polling(void **state) { (void)state; renamed_in(1); }

static void test_glob_and_mtime_order(void **state)
{
    (void)state;
    make_dir();
    put("b_1.csv", CSV, 3000);
    put("a_2.csv", CSV, 1000);
    put("a_1.csv", CSV, 2000);
    put("other.csv", CSV, 500);
    char where[300];
    snprintf(where, sizeof where, "%s/?_*.csv", tmpdir);
    cs_follow_options o;
    cs_follow_options_default(&o);
    o.order = CS_FOLLOW_BY_MTIME;
    cs_follow *f = open_ok(where, &o);
    assert_string_equal(scan_names(f, 5000), "a_2.csv a_1.csv b_1.csv");
    cs_follow_close(f);
    remove_dir();
}

/* Writes an .npy of `n` float64 values (shape (n,)), or only its first `keep` bytes. */
static void put_npy(const char *name, size_t n, size_t keep)
{
    unsigned char buf[1024];
    char dict[128];
    snprintf(dict, sizeof dict, "{'descr': '<f8', 'fortran_order': False, 'shape': (%zu,), }", n);
    size_t h = npy_header(buf, dict);
    memset(buf + h, 0, n * 8);
    char p[512];
    snprintf(p, sizeof p, "%s/%s", tmpdir, name);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    size_t total = h + n * 8;
    fwrite(buf, 1, keep < total ? keep : total, f);
    fclose(f);
}

/* An .npy pair whose labels come later: the prediction files wait for the labels to be whole,
 * and the labels file, in the folder, is never taken. */
static void test_npy_waits_for_labels(void **state)
{
    (void)state;
    make_dir();
    char labels[512];
    snprintf(labels, sizeof labels, "%s/labels.npy", tmpdir);
    cs_follow_options o;
    cs_follow_options_default(&o);
    o.labels = labels;
    cs_follow *f = open_ok(tmpdir, &o);
    put_npy("e1.npy", 20, 10000);
    assert_string_equal(scan_names(f, 100), "");           /* no labels yet */
    put_npy("labels.npy", 10, 100);
    assert_string_equal(scan_names(f, 200), "");           /* labels not whole */
    put_npy("labels.npy", 10, 10000);
    assert_string_equal(scan_names(f, 300), "e1.npy");
    put_npy("e2.npy", 20, 150);
    assert_string_equal(scan_names(f, 400), "");           /* shorter than its header says */
    put_npy("e2.npy", 20, 10000);
    assert_string_equal(scan_names(f, 400), "e2.npy");
    assert_int_equal(cs_follow_tracked(f, NULL), 3);       /* e1, e2 and the labels' name */
    cs_follow_close(f);
    remove_dir();
}

static void test_open_errors(void **state)
{
    (void)state;
    cs_follow *f;
    cs_error err;
    cs_error_clear(&err);
    assert_int_equal(cs_follow_open("/nonexistent/runs", NULL, &f, &err), CS_EUSAGE);
    assert_string_equal(err.msg, "/nonexistent/runs: cannot open: No such file or directory");
    assert_null(f);
    assert_int_equal(cs_follow_open("/etc/passwd", NULL, &f, &err), CS_EUSAGE);
    assert_string_equal(err.msg, "/etc/passwd: not a folder (--follow takes a folder or a glob on file names)");
    assert_int_equal(cs_follow_open("/tmp/run*/e.csv", NULL, &f, &err), CS_EUSAGE);
    assert_string_equal(err.msg, "/tmp/run*/e.csv: a glob may match file names only, not folders");
}

/* inotify_init1 failing (the hook stands for a file system without it): polling, and said. */
static void test_inotify_fallback(void **state)
{
    (void)state;
    make_dir();
    setenv("CALSCOPE_TEST_NO_INOTIFY", "1", 1);
    cs_follow *f;
    cs_error err;
    assert_int_equal(cs_follow_open(tmpdir, NULL, &f, &err), CS_OK);
    unsetenv("CALSCOPE_TEST_NO_INOTIFY");
    const char *why;
    assert_int_equal(cs_follow_fd(f), -1);
    assert_true(cs_follow_inotify_failed(f, &why));
    assert_string_equal(why, "Function not implemented");
    put("e1.csv", CSV, 1000);
    assert_string_equal(scan_names(f, 2000), "e1.csv");
    cs_follow_close(f);
    /* asked to poll: no failure to report */
    setenv("CALSCOPE_FOLLOW_POLL", "1", 1);
    assert_int_equal(cs_follow_open(tmpdir, NULL, &f, &err), CS_OK);
    unsetenv("CALSCOPE_FOLLOW_POLL");
    assert_int_equal(cs_follow_fd(f), -1);
    assert_false(cs_follow_inotify_failed(f, NULL));
    cs_follow_close(f);
    remove_dir();
}

/* 1000 files: each taken once, in natural order; what the follow keeps per file is counted. */
static void test_many_files(void **state)
{
    (void)state;
    make_dir();
    for (int i = 1000; i >= 1; i--) {
        char n[32];
        snprintf(n, sizeof n, "epoch_%d.csv", i);
        put(n, CSV, 1000);
    }
    cs_follow *f;
    cs_error err;
    assert_int_equal(cs_follow_open(tmpdir, NULL, &f, &err), CS_OK);
    const char *const *ready;
    assert_int_equal(cs_follow_scan(f, 5000, &ready, &err), 1000);
    for (int i = 0; i < 1000; i++) {
        char n[32];
        snprintf(n, sizeof n, "epoch_%d.csv", i + 1);
        assert_string_equal(base(ready[i]), n);
    }
    assert_int_equal(cs_follow_scan(f, 5001, &ready, &err), 0);
    size_t bytes;
    assert_int_equal(cs_follow_tracked(f, &bytes), 1000);
    /* per file: its entry, its index, its path and a pointer: well under 200 bytes */
    assert_true(bytes < 1000 * 200 + 4096);
    cs_follow_close(f);
    remove_dir();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_natural_order),
        cmocka_unit_test(test_kinds),
        cmocka_unit_test(test_complete_rule),
        cmocka_unit_test(test_npy_size),
        cmocka_unit_test(test_zip_whole),
        cmocka_unit_test(test_scans_polling),
        cmocka_unit_test(test_scans_inotify),
        cmocka_unit_test(test_renamed_in_inotify),
        cmocka_unit_test(test_renamed_in_polling),
        cmocka_unit_test(test_rename_event_of_taken_file),
        cmocka_unit_test(test_glob_and_mtime_order),
        cmocka_unit_test(test_npy_waits_for_labels),
        cmocka_unit_test(test_open_errors),
        cmocka_unit_test(test_inotify_fallback),
        cmocka_unit_test(test_many_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
