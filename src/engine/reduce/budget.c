/* The memory budget the cases of one reduction share (reduce_internal.h): a case's per-voxel
 * arrays (its class codes and, for softmax, the running max and sum) and read buffers are
 * admitted while those of the cases in flight fit in cs_reduce_options.memory, and always when
 * no other case is in flight. So peak RSS does not grow with --threads beyond one case or the
 * budget. A case admitted while fewer cases than threads are in flight reads its files on a
 * helper thread (stream.c), which keeps the threads busy when cases wait. The decision is taken
 * at admission: the first cases of a run may get a helper although other cases start just
 * after them (the helpers then share the cores for those cases). */
#include "engine/reduce/reduce_internal.h"

#include "calscope/thread.h"

#include <time.h>

int rd_budget_init(rd_budget *b, uint64_t limit, int threads)
{
    *b = (rd_budget){ .limit = limit, .threads = threads };
    if (pthread_mutex_init(&b->mu, NULL) != 0) return -1;
    if (pthread_cond_init(&b->cv, NULL) != 0) {
        pthread_mutex_destroy(&b->mu);
        return -1;
    }
    return 0;
}

void rd_budget_destroy(rd_budget *b)
{
    pthread_cond_destroy(&b->cv);
    pthread_mutex_destroy(&b->mu);
}

int rd_budget_acquire(rd_budget *b, uint64_t need, int (*stopped)(const void *), const void *arg, int *helper)
{
    pthread_mutex_lock(&b->mu);
    while (b->in_flight > 0 && need > b->limit - (b->used < b->limit ? b->used : b->limit)) {
        if (stopped(arg)) {
            pthread_mutex_unlock(&b->mu);
            return 0;
        }
        /* a cancel raises no signal here: look again every 20 ms */
        struct timespec t = cs_deadline_in(20);
        int rc = pthread_cond_timedwait(&b->cv, &b->mu, &t);
        (void)rc;   /* ETIMEDOUT or a release: test again either way */
    }
    b->used += need;
    b->in_flight++;
    *helper = b->in_flight < b->threads;
    pthread_mutex_unlock(&b->mu);
    return 1;
}

void rd_budget_release(rd_budget *b, uint64_t need)
{
    pthread_mutex_lock(&b->mu);
    b->used -= need;
    b->in_flight--;
    pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
}
