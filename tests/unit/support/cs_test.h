/* Shared helpers for the cmocka unit tests. Include this instead of <cmocka.h>. */
#ifndef CS_TEST_H
#define CS_TEST_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

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

/* Writes `text` to a fresh temporary file with the given suffix (".csv", ".csv.gz"...) and
 * returns its path (static storage for up to 8 live paths; removed at exit). */
const char *cs_test_tmpfile(const char *suffix, const void *text, size_t len);

#endif
