/* The one rule for the signals of the threads calscope starts (calscope/thread.h):
 *  - a thread started by cs_helper_start blocks the asynchronous signals (INT, TERM, HUP, QUIT,
 *    WINCH, ...) and never the ones a thread raises itself (BUS, SEGV, FPE, ILL, TRAP, SYS,
 *    ABRT), whatever the caller's mask, which is left as it was;
 *  - so a real fault in such a thread reaches the handler: a helper that reads a mapped file
 *    after the file shrank is rescued by the loader's SIGBUS guard (the mapping reads as zeros
 *    and cs_load_unmap says a page vanished) instead of the process dying of SIGBUS. Each such
 *    read runs in a child process, so that a death is seen as the child's status. */
#include "support/cs_test.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "calscope/thread.h"
#include "engine/load/load_internal.h"

static const int self_raised[] = { SIGBUS, SIGSEGV, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT };
static const int asynchronous[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGWINCH, SIGUSR1, SIGPIPE,
                                    SIGCHLD, SIGALRM };

static void *record_mask(void *arg)
{
    pthread_sigmask(SIG_BLOCK, NULL, arg);
    return NULL;
}

/* The mask of a thread started by cs_helper_start from a caller whose mask is `caller`. */
static void helper_mask_under(const sigset_t *caller, sigset_t *helper)
{
    sigset_t saved, after;
    assert_int_equal(pthread_sigmask(SIG_SETMASK, caller, &saved), 0);
    pthread_t th;
    assert_int_equal(cs_helper_start(&th, record_mask, helper), 1);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(pthread_sigmask(SIG_SETMASK, &saved, &after), 0);
    /* the caller's mask is the one it had */
    for (int s = 1; s < SIGRTMIN; s++)
        if (s != SIGKILL && s != SIGSTOP)
            assert_int_equal(sigismember(&after, s), sigismember(caller, s));
}

static void expect_rule(const sigset_t *helper)
{
    for (size_t i = 0; i < sizeof self_raised / sizeof *self_raised; i++)
        if (sigismember(helper, self_raised[i]))
            fail_msg("signal %d (raised by a fault) is blocked in a helper", self_raised[i]);
    for (size_t i = 0; i < sizeof asynchronous / sizeof *asynchronous; i++)
        if (!sigismember(helper, asynchronous[i]))
            fail_msg("asynchronous signal %d is not blocked in a helper", asynchronous[i]);
}

static void test_helper_mask(void **state)
{
    (void)state;
    sigset_t caller, helper;
    /* a caller that blocks everything (SIGBUS too) does not pass that on */
    sigfillset(&caller);
    helper_mask_under(&caller, &helper);
    expect_rule(&helper);
    /* nor does a caller that blocks nothing leave the asynchronous signals open */
    sigemptyset(&caller);
    helper_mask_under(&caller, &helper);
    expect_rule(&helper);
    /* the published mask is the one given */
    sigset_t published;
    cs_helper_sigmask(&published);
    for (int s = 1; s < SIGRTMIN; s++)
        if (s != SIGKILL && s != SIGSTOP)
            assert_int_equal(sigismember(&published, s), sigismember(&helper, s));
}

/* ---- a fault in a helper reaches the guard -------------------------------------------------- */

typedef struct reader_arg {
    const char *path;
    const volatile char *data;
    size_t len;
    unsigned long sum;
} reader_arg;

/* Shrinks the file to one page, then reads every byte of the mapping: the pages past the first
 * fault (SIGBUS) in this thread. */
static void *shrink_and_read(void *arg)
{
    reader_arg *r = arg;
    if (truncate(r->path, 4096) != 0) abort();
    for (size_t i = 0; i < r->len; i++) r->sum += (unsigned char)r->data[i];
    return NULL;
}

/* In a child: maps the file, has a helper shrink and read it, and exits 0 when the guard says
 * a page vanished and the pages past the new end read as zeros, 1 otherwise. */
static void child_reads_in_helper(const char *path, size_t len)
{
    int fd = open(path, O_RDONLY);
    csl_map m;
    if (fd < 0 || cs_load_map(fd, len, &m) != 0) _exit(2);
    reader_arg r = {path, m.data, len, 0};
    pthread_t th;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, NULL);   /* the caller blocks everything, as a UI may */
    if (!cs_helper_start(&th, shrink_and_read, &r)) _exit(2);
    pthread_join(th, NULL);
    int vanished = cs_load_unmap(&m);
    /* the first page is 'x' bytes, everything after it zeros */
    _exit(vanished == 1 && r.sum == 4096ul * 'x' ? 0 : 1);
}

static void test_fault_in_helper_reaches_guard(void **state)
{
    (void)state;
    size_t len = (size_t)1 << 20;
    char *text = malloc(len);
    assert_non_null(text);
    memset(text, 'x', len);
    const char *path = cs_test_tmpfile(".csv", text, len);
    free(text);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) child_reads_in_helper(path, len);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (WIFSIGNALED(status)) fail_msg("the helper's read of a shrunk mapping killed the process (signal %d)", WTERMSIG(status));
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* A deadline ms from now: its nanoseconds below a second, and it lies between the clock read
 * before the call plus ms and the clock read after it plus ms (bounds that hold whatever the
 * time the call takes). */
static void test_deadline(void **state)
{
    (void)state;
    const long ms[] = { 0, 20, 100, 999, 1000, 1500, 123456 };
    for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) {
        struct timespec before, after;
        clock_gettime(CLOCK_REALTIME, &before);
        struct timespec t = cs_deadline_in(ms[i]);
        clock_gettime(CLOCK_REALTIME, &after);
        assert_true(t.tv_nsec >= 0 && t.tv_nsec < 1000000000L);
        long double at = (long double)t.tv_sec * 1e9L + t.tv_nsec, add = (long double)ms[i] * 1e6L;
        assert_true(at >= (long double)before.tv_sec * 1e9L + before.tv_nsec + add);
        assert_true(at <= (long double)after.tv_sec * 1e9L + after.tv_nsec + add);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_helper_mask),
        cmocka_unit_test(test_deadline),
        cmocka_unit_test(test_fault_in_helper_reaches_guard),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
