/* calscope engine: writing a statistics file (format: docs/segmentation.md, "Statistics files").
 *
 * Output goes through one buffer that flushes to stdio or to zlib's gzip writer, so the plain
 * and the .gz file carry the same bytes. Doubles are written with %.17g (17 significant
 * digits round-trip every double exactly), counts as decimal integers, and only the non-empty
 * fine bins, so a file is as small as its data. */
#include "engine/segstats/segstats_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

enum { OUT_BUF = 1 << 20 };

typedef struct sink {
    FILE *f;
    gzFile gz;
    char buf[OUT_BUF];
    size_t len;
    int failed;
} sink;

static void flush(sink *o)
{
    if (o->failed || !o->len) { o->len = 0; return; }
    if (o->gz) {
        if (gzwrite(o->gz, o->buf, (unsigned)o->len) != (int)o->len) o->failed = 1;
    } else if (fwrite(o->buf, 1, o->len, o->f) != o->len) {
        o->failed = 1;
    }
    o->len = 0;
}

static void put(sink *o, const char *s, size_t n)
{
    if (o->len + n > OUT_BUF) flush(o);
    if (n > OUT_BUF) { o->failed = 1; return; }   /* no field of ours is this long */
    memcpy(o->buf + o->len, s, n);
    o->len += n;
}

static void puts_(sink *o, const char *s) { put(o, s, strlen(s)); }

static void put_u64(sink *o, uint64_t v)
{
    char t[24];
    size_t i = sizeof t;
    do { t[--i] = (char)('0' + v % 10); v /= 10; } while (v);
    put(o, t + i, sizeof t - i);
}

static void put_double(sink *o, double v)
{
    char t[40];
    int n = snprintf(t, sizeof t, "%.17g", v);
    put(o, t, (size_t)n);
}

/* A text field: quoted (quotes doubled) when empty or when it holds a comma, a quote or
 * leading/trailing spaces, so that every string reads back as written. */
static void put_text(sink *o, const char *s)
{
    size_t n = strlen(s);
    int q = n == 0 || strpbrk(s, ",\"") || s[0] == ' ' || s[n - 1] == ' ';
    if (!q) { put(o, s, n); return; }
    put(o, "\"", 1);
    for (const char *p = s; *p; p++) {
        if (*p == '"') put(o, "\"", 1);
        put(o, p, 1);
    }
    put(o, "\"", 1);
}

/* The first string of st that a line-based file cannot hold (a line break), or NULL. */
static const char *unwritable(const cs_segstats *st, const char **what)
{
    *what = "the mapping";
    if (strpbrk(st->mapping, "\r\n")) return st->mapping;
    *what = "a class name";
    for (size_t j = 0; j < st->k; j++)
        if (strpbrk(st->class_names[j], "\r\n")) return st->class_names[j];
    for (size_t c = 0; c < st->n_cases; c++) {
        *what = "a case name";
        if (strpbrk(st->case_names[c], "\r\n")) return st->case_names[c];
        *what = "an input path";
        if (st->probs_in[c].path && strpbrk(st->probs_in[c].path, "\r\n"))
            return st->probs_in[c].path;
        if (st->labels_in[c].path && strpbrk(st->labels_in[c].path, "\r\n"))
            return st->labels_in[c].path;
    }
    return NULL;
}

static void write_header(sink *o, const cs_segstats *st)
{
    puts_(o, "# calscope-stats 1\nfine,");
    put_u64(o, (uint64_t)st->fine);
    puts_(o, "\nkind,");
    puts_(o, cs_segstats_kind_name(st->kind));
    puts_(o, "\nmapping,");
    put_text(o, st->mapping);
    puts_(o, "\nclasses,");
    put_u64(o, st->k);
    for (size_t j = 0; j < st->k; j++) {
        put(o, ",", 1);
        put_text(o, st->class_names[j]);
    }
    puts_(o, "\ncases,");
    put_u64(o, st->n_cases);
    put(o, "\n", 1);
    for (size_t c = 0; c < st->n_cases; c++) {
        puts_(o, "case,");
        put_u64(o, c);
        put(o, ",", 1);
        put_text(o, st->case_names[c]);
        put(o, ",", 1);
        put_u64(o, st->voxels[c]);
        put(o, ",", 1);
        put_text(o, st->probs_in[c].path ? st->probs_in[c].path : "");
        put(o, ",", 1);
        put_u64(o, st->probs_in[c].size);
        put(o, ",", 1);
        put_text(o, st->labels_in[c].path ? st->labels_in[c].path : "");
        put(o, ",", 1);
        put_u64(o, st->labels_in[c].size);
        put(o, "\n", 1);
    }
}

static void write_case(sink *o, const cs_segstats *st, size_t c)
{
    for (size_t j = 0; j < st->k; j++)
        for (size_t i = 0; i < (size_t)st->fine; i++) {
            size_t x = cs_segstats_ci(st, c, j, i);
            if (!st->cnt[x]) continue;
            puts_(o, "c,");
            put_u64(o, c); put(o, ",", 1);
            put_u64(o, j); put(o, ",", 1);
            put_u64(o, i); put(o, ",", 1);
            put_u64(o, st->cnt[x]); put(o, ",", 1);
            put_double(o, st->sum_p[x]); put(o, ",", 1);
            put_u64(o, st->sum_y[x]); put(o, "\n", 1);
        }
    if (st->t_cnt)
        for (size_t i = 0; i < (size_t)st->fine; i++) {
            size_t x = cs_segstats_ti(st, c, i);
            if (!st->t_cnt[x]) continue;
            puts_(o, "t,");
            put_u64(o, c); put(o, ",", 1);
            put_u64(o, i); put(o, ",", 1);
            put_u64(o, st->t_cnt[x]); put(o, ",", 1);
            put_double(o, st->t_sum_conf[x]); put(o, ",", 1);
            put_u64(o, st->t_sum_correct[x]); put(o, "\n", 1);
        }
    for (size_t j = 0; j < st->k; j++) {
        size_t x = c * st->k + j;
        puts_(o, "s,");
        put_u64(o, c); put(o, ",", 1);
        put_u64(o, j); put(o, ",", 1);
        put_double(o, st->sq_err[x]); put(o, ",", 1);
        put_double(o, st->nll_pos[x]); put(o, ",", 1);
        put_double(o, st->nll_neg[x]); put(o, "\n", 1);
    }
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

cs_status cs_segstats_write(const cs_segstats *st, const char *path, cs_error *err)
{
    const char *what, *bad = unwritable(st, &what);
    if (bad)
        return cs_error_set(err, CS_EINPUT, 0, 0, "%s: %s contains a line break, which a"
                            " statistics file cannot hold", path, what);
    for (size_t c = 0; c < st->n_cases; c++)
        if (!st->case_names[c] || !st->case_names[c][0])
            return cs_error_set(err, CS_EINPUT, 0, 0, "%s: case %zu has no name", path, c);
    sink *o = calloc(1, sizeof *o);
    if (!o) return cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", path);
    int to_stdout = strcmp(path, "-") == 0;
    if (!to_stdout && ends_with(path, ".gz")) o->gz = gzopen(path, "wb6");
    else o->f = to_stdout ? stdout : fopen(path, "wb");
    if (!o->gz && !o->f) {
        int e = errno;
        free(o);
        return cs_error_set(err, CS_EINPUT, 0, 0, "%s: cannot write: %s", path, strerror(e));
    }
    write_header(o, st);
    for (size_t c = 0; c < st->n_cases && !o->failed; c++) write_case(o, st, c);
    flush(o);
    int e = errno;
    if (o->gz) { if (gzclose(o->gz) != Z_OK) o->failed = 1; }
    else if (to_stdout) { if (fflush(stdout)) o->failed = 1; }
    else if (fclose(o->f)) o->failed = 1;
    int failed = o->failed;
    free(o);
    if (failed)
        return cs_error_set(err, CS_EINPUT, 0, 0, "%s: cannot write: %s", path,
                            e ? strerror(e) : "write failed");
    return CS_OK;
}
