/* Liveness limits for tests of threads and cancellation. No test depends on elapsed time (CI
 * shares its machine and `make test` must pass beside `stress --cpu 2`): a test waits for a state
 * (a response, a progress count, a call returning) and these limits only catch hangs. They are far
 * above any legitimate wait on a loaded machine under TSan, and far below the duration of the
 * never-ending work the cancellation tests start (an hour's sleep, hours of resampling), so a
 * cancel flag that is not honoured fails the test instead of passing slowly. */
#ifndef CS_TEST_LIVENESS_H
#define CS_TEST_LIVENESS_H

#include "calscope/backend.h"

#define CS_TEST_LIVENESS_S 180
#define CS_TEST_LIVENESS_MS (CS_TEST_LIVENESS_S * 1000)

/* Arms a watchdog around a call that blocks until other threads stop (cs_backend_free,
 * cs_backend_release_dataset, a cancelled engine call): unless cs_test_liveness_end is reached
 * within CS_TEST_LIVENESS_S, the process prints "liveness: WHAT did not return within 180 s" on
 * stderr and exits with status 1 (a failure for tools/run-tests.sh). Uses alarm()/SIGALRM.
 * Main thread only, one at a time; `what` is borrowed until cs_test_liveness_end. */
void cs_test_liveness_begin(const char *what);
void cs_test_liveness_end(void);

/* Polls ready(ctx) every millisecond until it returns nonzero (returns 1) or CS_TEST_LIVENESS_S
 * pass (returns 0: the caller fails the test). Calls ready from the calling thread only. */
int cs_test_poll_until(int (*ready)(void *ctx), void *ctx);

/* Waits until the backend slot's latest request is running and has published progress (a queued
 * one shows 0: cs_backend_progress > 0 means a worker runs it), so a following cancel, supersede
 * or release hits a running job. Only for jobs that publish progress (SLEEP, the resampling
 * kinds). Fails the test after CS_TEST_LIVENESS_S. The backend's thread (the test's). */
void cs_test_wait_running(cs_backend *b, int slot);

#endif
