/* Shared helpers for the cmocka unit tests. Include this instead of <cmocka.h>. */
#ifndef CS_TEST_H
#define CS_TEST_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "calscope/dataset.h"

/* Fails the test unless |got - want| <= abs_tol + rel_tol*|want|; prints both with %.17g.
 * NAN equals NAN only when both are NAN. */
#define assert_double_near(got, want, tol) \
    cs_test_assert_double((got), (want), (tol), 0.0, #got, __FILE__, __LINE__)
#define assert_double_rel(got, want, abs_tol, rel_tol) \
    cs_test_assert_double((got), (want), (abs_tol), (rel_tol), #got, __FILE__, __LINE__)

void cs_test_assert_double(double got, double want, double abs_tol, double rel_tol,
                           const char *expr, const char *file, int line);

/* Path of a file under samples/ ($CALSCOPE_SAMPLES, default "samples"); static buffer. */
const char *cs_test_sample(const char *name);

/* Loads samples/NAME (cs_test_sample) with the default load options; fails the test with the
 * loader's message when it cannot. Free with cs_dataset_free. */
cs_dataset *cs_test_load_sample(const char *name);

/* 1 when a and b have the same bits (so -0.0 differs from 0.0), or are both NaN (of any
 * payload): "the same number" for results that must not depend on the path computing them. */
int cs_test_same_bits(double a, double b);

/* Uniform doubles in [0, 1) from two small generators the tests seed themselves, so each test
 * file keeps its own stream: xorshift64 (shifts 13, 7, 17) and xorshift64* (Vigna, 2016,
 * "An experimental exploration of Marsaglia's xorshift generators, scrambled"). *state is the
 * caller's, advanced one step. */
double cs_test_xorshift(uint64_t *state);
double cs_test_xorshift_star(uint64_t *state);

/* Writes `text` to a fresh temporary file with the given suffix (".csv", ".csv.gz"...) and
 * returns its path (static storage for up to 8 live paths; removed at exit). */
const char *cs_test_tmpfile(const char *suffix, const void *text, size_t len);

/* Hand-made datasets. Classes are named "0".."k-1" and the path is "test.csv"; every
 * allocation is checked (the test fails on out-of-memory). Free with cs_dataset_free. */

/* n rows of k classes: copies prob (n*k, row-major) and label (n), then cs_test_prepare. */
cs_dataset *cs_test_dataset(size_t n, size_t k, const double *prob, const int32_t *label);

/* The same with prob and label zero-filled for the caller to fill (and add columns such as
 * tta that cs_dataset_prepare reads), not prepared: finish with cs_test_prepare. */
cs_dataset *cs_test_dataset_new(size_t n, size_t k);

/* cs_dataset_prepare; fails the test unless it returns CS_OK. */
void cs_test_prepare(cs_dataset *d);

/* Replaces the class names with copies of names[0..k-1] (one block, cs_names_pack). */
void cs_test_set_class_names(cs_dataset *d, const char *const *names);

/* Adds a case column: copies case_id (n, each < n_cases) and names[0..n_cases-1]. */
void cs_test_set_cases(cs_dataset *d, size_t n_cases, const char *const *names,
                       const int32_t *case_id);

#endif
