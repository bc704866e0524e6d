#include "liveness.h"
#include "cs_test.h"

#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *volatile liveness_what;

/* Only async-signal-safe calls: write and _exit. */
static void liveness_expired(int sig)
{
    (void)sig;
#define CS_STR_(x) #x
#define CS_STR(x) CS_STR_(x)
    static const char pre[] = "\nliveness: ",
                      post[] = " did not return within " CS_STR(CS_TEST_LIVENESS_S) " s\n";
    const char *w = liveness_what ? liveness_what : "a guarded call";
    ssize_t n = write(2, pre, sizeof pre - 1);
    n = write(2, w, strlen(w));
    n = write(2, post, sizeof post - 1);
    (void)n;
    _exit(1);
}

void cs_test_liveness_begin(const char *what)
{
    liveness_what = what;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = liveness_expired;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    alarm(CS_TEST_LIVENESS_S);
}

void cs_test_liveness_end(void)
{
    alarm(0);
    liveness_what = NULL;
}

static double monotonic_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int cs_test_poll_until(int (*ready)(void *ctx), void *ctx)
{
    double end = monotonic_s() + CS_TEST_LIVENESS_S;
    for (;;) {
        if (ready(ctx)) return 1;
        if (monotonic_s() > end) return 0;
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
    }
}

typedef struct slot_ref {
    cs_backend *b;
    int slot;
} slot_ref;

static int slot_started(void *ctx)
{
    slot_ref *s = ctx;
    return cs_backend_progress(s->b, s->slot) > 0;
}

void cs_test_wait_running(cs_backend *b, int slot)
{
    slot_ref s = { b, slot };
    if (!cs_test_poll_until(slot_started, &s))
        fail_msg("slot %d: no progress within %d s", slot, CS_TEST_LIVENESS_S);
}
