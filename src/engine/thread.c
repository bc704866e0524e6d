/* Starting a thread (calscope/thread.h): the one place where a thread's signal mask is set; and
 * the deadline of a timed wait between threads. */
#include "calscope/thread.h"

#include <stdatomic.h>

/* Threads started so far (cs_helper_started): a count for tests, never read by calscope. */
static atomic_size_t started_total;

/* Raised by the thread that executes the faulting instruction (and abort's SIGABRT): blocked,
 * such a signal kills the process without running its handler. */
static const int self_raised[] = { SIGBUS, SIGSEGV, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT };

void cs_helper_sigmask(sigset_t *mask)
{
    sigfillset(mask);
    for (size_t i = 0; i < sizeof self_raised / sizeof self_raised[0]; i++)
        sigdelset(mask, self_raised[i]);
}

int cs_helper_start(pthread_t *th, void *(*fn)(void *), void *arg)
{
    /* a new thread inherits its creator's mask: set the helper's for the creation (absolute,
     * not added to the caller's: a caller with SIGBUS blocked must not pass that on) */
    sigset_t helper, old;
    cs_helper_sigmask(&helper);
    pthread_sigmask(SIG_SETMASK, &helper, &old);
    int started = pthread_create(th, NULL, fn, arg) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (started) atomic_fetch_add_explicit(&started_total, 1, memory_order_relaxed);
    return started;
}

size_t cs_helper_started(void)
{
    return atomic_load_explicit(&started_total, memory_order_relaxed);
}

struct timespec cs_deadline_in(long ms)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_sec += ms / 1000;
    t.tv_nsec += (ms % 1000) * 1000 * 1000;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}
