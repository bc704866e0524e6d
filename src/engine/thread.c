/* Starting a thread (calscope/thread.h): the one place where a thread's signal mask is set. */
#include "calscope/thread.h"

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
    return started;
}
