#include "cs_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calscope/load.h"

void cs_test_assert_double(double got, double want, double abs_tol, double rel_tol,
                           const char *expr, const char *file, int line)
{
    if (isnan(got) && isnan(want)) return;
    double tol = abs_tol + rel_tol * fabs(want);
    if (!(fabs(got - want) <= tol)) {
        print_error("%s = %.17g, want %.17g (tolerance %.3g)\n", expr, got, want, tol);
        _fail(file, line);
    }
}

const char *cs_test_sample(const char *name)
{
    static char buf[4096];
    const char *dir = getenv("CALSCOPE_SAMPLES");
    snprintf(buf, sizeof buf, "%s/%s", dir && *dir ? dir : "samples", name);
    return buf;
}

cs_dataset *cs_test_load_sample(const char *name)
{
    cs_load_options lo;
    cs_load_options_default(&lo);
    cs_error err;
    cs_error_clear(&err);
    cs_dataset *d = cs_load_file(cs_test_sample(name), &lo, NULL, &err);
    if (!d) fail_msg("load %s: %s", name, err.msg);
    return d;
}

int cs_test_same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0 || (isnan(a) && isnan(b));
}

static char tmp_paths[8][64];
static int tmp_next;
static int tmp_registered;

static void tmp_cleanup(void)
{
    for (int i = 0; i < 8; i++)
        if (tmp_paths[i][0]) unlink(tmp_paths[i]);
}

const char *cs_test_tmpfile(const char *suffix, const void *text, size_t len)
{
    if (!tmp_registered) { atexit(tmp_cleanup); tmp_registered = 1; }
    char *p = tmp_paths[tmp_next];
    tmp_next = (tmp_next + 1) % 8;
    if (p[0]) unlink(p);
    snprintf(p, 64, "/tmp/cstestXXXXXX%s", suffix);
    int fd = mkstemps(p, (int)strlen(suffix));
    if (fd < 0) { p[0] = '\0'; fail_msg("mkstemps failed"); }
    if (write(fd, text, len) != (ssize_t)len) fail_msg("write failed");
    close(fd);
    return p;
}

static char *dup_checked(const char *s)
{
    char *p = strdup(s);
    assert_non_null(p);
    return p;
}

cs_dataset *cs_test_dataset_new(size_t n, size_t k)
{
    cs_dataset *d = calloc(1, sizeof *d);
    assert_non_null(d);
    d->path = dup_checked("test.csv");
    d->n = n;
    d->k = k;
    d->prob = calloc(n * k > 0 ? n * k : 1, sizeof *d->prob);
    d->label = calloc(n ? n : 1, sizeof *d->label);
    assert_non_null(d->prob);
    assert_non_null(d->label);
    char (*num)[24] = calloc(k ? k : 1, sizeof *num);
    const char **names = calloc(k ? k : 1, sizeof *names);
    assert_non_null(num);
    assert_non_null(names);
    for (size_t c = 0; c < k; c++) {
        snprintf(num[c], sizeof num[c], "%zu", c);
        names[c] = num[c];
    }
    d->class_names = cs_names_pack(names, k);   /* one block, as the loader makes it */
    assert_non_null(d->class_names);
    free(names);
    free(num);
    return d;
}

void cs_test_prepare(cs_dataset *d)
{
    cs_error err;
    assert_int_equal(cs_dataset_prepare(d, NULL, &err), CS_OK);
}

cs_dataset *cs_test_dataset(size_t n, size_t k, const double *prob, const int32_t *label)
{
    cs_dataset *d = cs_test_dataset_new(n, k);
    if (n) {
        memcpy(d->prob, prob, n * k * sizeof *d->prob);
        memcpy(d->label, label, n * sizeof *d->label);
    }
    cs_test_prepare(d);
    return d;
}

void cs_test_set_class_names(cs_dataset *d, const char *const *names)
{
    char **block = cs_names_pack(names, d->k);
    assert_non_null(block);
    free(d->class_names);
    d->class_names = block;
}

void cs_test_set_cases(cs_dataset *d, size_t n_cases, const char *const *names,
                       const int32_t *case_id)
{
    assert_null(d->case_id);
    d->case_id = malloc((d->n ? d->n : 1) * sizeof *d->case_id);
    d->case_names = calloc(n_cases ? n_cases : 1, sizeof *d->case_names);
    assert_non_null(d->case_id);
    assert_non_null(d->case_names);
    if (d->n) memcpy(d->case_id, case_id, d->n * sizeof *d->case_id);
    for (size_t c = 0; c < n_cases; c++) d->case_names[c] = dup_checked(names[c]);
    d->n_cases = n_cases;
}

double cs_test_xorshift(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return (double)(*state >> 11) / 9007199254740992.0;
}

double cs_test_xorshift_star(uint64_t *state)
{
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return (double)((*state * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}
