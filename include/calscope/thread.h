/* calscope engine: starting a thread, with the one rule for its signals (and the deadline of a
 * timed wait between threads).
 *
 * Every thread calscope starts (the loader's chunks, the engine's halves, the backend's workers,
 * the parallel loops, the reduction and its reader) starts here, so that the rule is in one
 * place:
 *  - asynchronous signals (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGWINCH, ...) are blocked in the
 *    new thread: they stay with the thread that handles them (the dashboard's UI thread, the
 *    reduce command's main thread, which turn them into a cancel or a clean exit);
 *  - the signals a thread raises itself by faulting (SIGBUS, SIGSEGV, SIGFPE, SIGILL, SIGTRAP,
 *    SIGSYS) and SIGABRT are never blocked, whatever the caller's mask. A fault signal that
 *    arrives blocked is not held: the kernel kills the process at once, past every handler. So
 *    a page of a mapped file that shrank, touched by a helper thread, must reach the loader's
 *    SIGBUS guard (engine/load/load_map.c) in that thread, and a crash in a helper must reach
 *    the dashboard's handler, which restores the terminal.
 * The caller's own mask is left as it was. */
#ifndef CALSCOPE_THREAD_H
#define CALSCOPE_THREAD_H

#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <time.h>

/* Starts fn(arg) on a new joinable thread under the rule above: 1 when it runs (the caller
 * joins it), 0 when no thread could be made (the caller then runs fn(arg) itself: no result may
 * depend on it). Nothing to free but the join. Any thread. */
int cs_helper_start(pthread_t *th, void *(*fn)(void *), void *arg);

/* The mask cs_helper_start gives a new thread: every signal but the ones a thread raises
 * itself (above). For tests and for checking a thread's mask. Any thread. */
void cs_helper_sigmask(sigset_t *mask);

/* How many threads cs_helper_start has started in this process so far: a test hook, so that a
 * test can count the helpers a call starts (a thread budget of 1 starts none) instead of
 * timing it. Any thread. */
size_t cs_helper_started(void);

/* The moment ms milliseconds from now on CLOCK_REALTIME, for pthread_cond_timedwait: a thread
 * that waits for another, but must look at a cancel or show progress meanwhile. Any thread. */
struct timespec cs_deadline_in(long ms);

#endif
