/* calscope engine: one job in two halves, the second on a helper thread.
 *
 * The engine's passes over 10^6 samples split in two on the machine's two cores (RECE-G's
 * weights, the metrics' chunks, the top-k sorts, the per-row caches; the loader's chunks and
 * the class-wise ECE's side thread start their helpers with cs_helper_start, whose signal rule
 * is calscope/thread.h's). When the helper cannot be made the caller runs the second half
 * itself, so the result never depends on whether a thread was had. */
#ifndef CALSCOPE_ENGINE_PAIR_H
#define CALSCOPE_ENGINE_PAIR_H

#include <pthread.h>
#include <stddef.h>

#include "calscope/thread.h"

/* fn(a) on the calling thread and fn(b) on a helper thread at the same time, then joined;
 * fn(b) after fn(a) on the calling thread when `parallel` is 0 or no thread can be made. b may
 * be NULL (fn(a) alone). a and b are the caller's, read and written only by their own call.
 * Returns 1 when the helper ran fn(b). Any thread. */
static inline int cs_run_pair(void *(*fn)(void *), void *a, void *b, int parallel)
{
    pthread_t th;
    int threaded = b && parallel && cs_helper_start(&th, fn, b);
    fn(a);
    if (threaded) pthread_join(th, NULL);
    else if (b) fn(b);
    return threaded;
}

#endif
