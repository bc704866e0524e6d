/* Allocation failures in the backend and the dashboard's model: a job whose
 * own struct, queue entry or delivery cannot be allocated is either refused (by its kind's
 * constructor or by cs_backend_submit) with CS_ENOMEM "out of memory", or delivered as an error
 * with that message — never dropped, and its slot is never left busy. The dashboard's model turns a
 * refused submission into an error result for the slot (shown in place, not "stale") and a
 * status-line message, without retrying on every pass of the loop.
 *
 * Failures are injected with cs_backend_set_calloc: the n-th allocation of the backend fails,
 * for n = 1, 2, ... until a request completes without reaching the n-th allocation, so every
 * allocation point of each job kind is exercised. No test depends on elapsed time: waits are
 * liveness limits (CS_TEST_LIVENESS_S) that only catch a response that never comes. Built under TSan too. */
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calscope/backend.h"
#include "calscope/compat.h"
#include "calscope/jobs/compat.h"
#include "calscope/jobs/load.h"
#include "calscope/jobs/metrics.h"
#include "engine/jobs/sleep.h"
#include "calscope/load.h"
#include "support/cs_test.h"
#include "tui/model.h"
#include "tui/state.h"

#define LIVENESS_MS 60000

static atomic_int calls, fail_at;

/* Fails the fail_at-th call (counting from 1); 0 = never. Called from workers too. */
static void *failing_calloc(size_t count, size_t size)
{
    int c = atomic_fetch_add(&calls, 1) + 1;
    if (c == atomic_load(&fail_at)) return NULL;
    return calloc(count, size);
}

/* Fails only the compat job's per-bin counts (CS_COMPAT_COUNT x 15 bins of uint32_t), made in
 * a worker after the job ran. */
static void *failing_compat_bins(size_t count, size_t size)
{
    atomic_fetch_add(&calls, 1);
    if (count == (size_t)CS_COMPAT_COUNT * 15 && size == sizeof(uint32_t)) return NULL;
    return calloc(count, size);
}

static void arm(int n)
{
    atomic_store(&calls, 0);
    atomic_store(&fail_at, n);
    cs_backend_set_calloc(failing_calloc);
}

static int disarm(void)
{
    cs_backend_set_calloc(NULL);
    return atomic_load(&calls);
}

/* The job kinds exercised here. */
typedef enum { K_SLEEP, K_LOAD, K_METRICS, K_COMPAT } kind;

/* A job of `kind`, or NULL with err when its constructor's allocation failed. */
static cs_job *make_job(kind k, const cs_dataset *d, cs_error *err)
{
    cs_settings s;
    cs_settings_default(&s);
    switch (k) {
    case K_SLEEP: { cs_sleep_job *j = cs_sleep_job_new(1, err); return j ? &j->base : NULL; }
    case K_LOAD: {
        cs_load_job *j = cs_load_job_new(cs_test_sample("breast_cancer_gnb.csv"), NULL, err);
        return j ? &j->base : NULL;
    }
    case K_METRICS: { cs_metrics_job *j = cs_metrics_job_new(d, &s, err); return j ? &j->base : NULL; }
    default: { cs_compat_job *j = cs_compat_job_new(d, &s, err); return j ? &j->base : NULL; }
    }
}

/* Builds and submits one job of `kind` with the n-th backend allocation failing. Returns 1
 * when the failure was reached (checked to be reported), 0 when the job completed without it. */
static int run_with_failure(cs_backend *b, kind k, int slot, const cs_dataset *d, int n)
{
    cs_error err;
    cs_error_clear(&err);
    arm(n);
    cs_job *job = make_job(k, d, &err);
    uint64_t gen = job ? cs_backend_submit(b, slot, job, &err) : 0;
    cs_job *r = gen ? cs_backend_wait(b, LIVENESS_MS) : NULL;
    int reached = disarm() >= n;
    if (!gen) {
        assert_true(reached);
        assert_int_equal(err.code, CS_ENOMEM);
        assert_string_equal(err.msg, "out of memory");
    } else {
        if (!r) fail_msg("kind %d, allocation %d failed: no response (dropped silently)", k, n);
        assert_int_equal(r->slot, slot);
        assert_int_equal(r->generation, gen);
        if (reached) {
            assert_int_equal(r->status, CS_ENOMEM);
            assert_string_equal(r->err.msg, "out of memory");
        } else {
            assert_int_equal(r->status, CS_OK);
        }
        cs_job_free(r);
    }
    /* the slot is never left busy, and the backend still works afterwards */
    assert_false(cs_backend_busy(b, slot));
    gen = cs_backend_submit(b, slot, make_job(k, d, &err), &err);
    assert_true(gen > 0);
    r = cs_backend_wait(b, LIVENESS_MS);
    assert_non_null(r);
    assert_int_equal(r->generation, gen);
    assert_int_equal(r->status, CS_OK);
    cs_job_free(r);
    return reached;
}

static void every_allocation(kind k, int min_points)
{
    cs_error err;
    cs_backend *b = cs_backend_new(2, &err);
    assert_non_null(b);
    cs_dataset *d =
        k == K_LOAD || k == K_SLEEP ? NULL : cs_test_load_sample("breast_cancer_gnb.csv");
    int n = 1;
    while (run_with_failure(b, k, 3, d, n)) {
        n++;
        if (n > 64) fail_msg("more than 64 backend allocations for one request");
    }
    /* every point before the completing run was reached and reported */
    if (n - 1 < min_points) fail_msg("kind %d: only %d allocation points", k, n - 1);
    cs_backend_free(b);
    cs_dataset_free(d);
}

static void sleep_job_failures_are_reported(void **state)
{
    (void)state;
    every_allocation(K_SLEEP, 3);          /* the job, its queue entry, its delivery */
}

static void load_job_failures_are_reported(void **state)
{
    (void)state;
    every_allocation(K_LOAD, 4);           /* + the path copy */
}

static void metrics_job_failures_are_reported(void **state)
{
    (void)state;
    every_allocation(K_METRICS, 3);
}

static void compat_job_failures_are_reported(void **state)
{
    (void)state;
    every_allocation(K_COMPAT, 4);         /* + the per-bin counts, in the worker */
}

/* cs_backend_new: a failed allocation is an error, or fewer workers; never a crash. */
static void backend_new_failures(void **state)
{
    (void)state;
    for (int n = 1; n <= 3; n++) {
        cs_error err;
        cs_error_clear(&err);
        arm(n);
        cs_backend *b = cs_backend_new(2, &err);
        disarm();
        if (!b) {
            assert_int_equal(err.code, CS_ENOMEM);
            continue;
        }
        assert_true(cs_backend_workers(b) >= 1);
        cs_backend_free(b);
    }
}

/* ---- the dashboard's model ------------------------------------------------------------- */

static void model_wait(tui_model *m, tui_state *st)
{
    struct pollfd pfd = { .fd = cs_backend_wake_fd(m->backend), .events = POLLIN };
    assert_int_equal(poll(&pfd, 1, LIVENESS_MS), 1);
    tui_model_collect(m, st);
}

static void model_shows_a_refused_request_in_place(void **state)
{
    (void)state;
    static tui_state st;
    static tui_model m;
    tui_state_init(&st);
    st.paths[0] = cs_test_sample("breast_cancer_gnb.csv");
    st.n_files = 1;
    cs_load_options lo;
    cs_load_options_default(&lo);
    cs_error err;
    cs_backend *b = cs_backend_new(2, &err);
    assert_non_null(b);
    char msg[256];
    assert_int_equal(tui_model_init(&m, b, &st, &lo, msg, sizeof msg), 0);
    while (m.files[0].state == TUI_LOADING) model_wait(&m, &st);
    assert_int_equal(m.files[0].state, TUI_LOADED);

    arm(1);                                   /* the metrics job itself */
    tui_model_submit(&m, &st);
    disarm();
    int stale = -1;
    const cs_job *r = tui_model_result(&m, TUI_SLOT_METRICS(0), &stale);
    assert_non_null(r);
    assert_int_equal(r->status, CS_ENOMEM);
    assert_string_equal(r->err.msg, "out of memory");
    assert_int_equal(stale, 0);
    assert_false(cs_backend_busy(b, TUI_SLOT_METRICS(0)));
    assert_string_equal(st.message, "backend: out of memory");
    assert_int_equal(st.message_is_error, 1);
    /* not retried on every pass of the loop: only a settings change (a new key) asks again */
    assert_int_equal(tui_model_submit(&m, &st), 0);
    st.settings.bins++;
    assert_int_equal(tui_model_submit(&m, &st), 1);
    while (cs_backend_busy(b, TUI_SLOT_METRICS(0)) || !tui_model_result(&m, TUI_SLOT_METRICS(0), &stale) ||
           tui_model_result(&m, TUI_SLOT_METRICS(0), &stale)->status != CS_OK)
        model_wait(&m, &st);
    r = tui_model_result(&m, TUI_SLOT_METRICS(0), &stale);
    assert_int_equal(r->status, CS_OK);
    assert_int_equal(stale, 0);

    cs_backend_free(b);
    tui_model_free(&m);
}

/* A failure inside a worker arrives as an error response and is kept as the slot's result. */
static void model_keeps_a_worker_failure(void **state)
{
    (void)state;
    static tui_state st;
    static tui_model m;
    tui_state_init(&st);
    st.paths[0] = cs_test_sample("breast_cancer_gnb.csv");
    st.n_files = 1;
    st.compat = 1;                            /* the compat panel's job */
    cs_load_options lo;
    cs_load_options_default(&lo);
    cs_error err;
    cs_backend *b = cs_backend_new(2, &err);
    assert_non_null(b);
    char msg[256];
    assert_int_equal(tui_model_init(&m, b, &st, &lo, msg, sizeof msg), 0);
    while (m.files[0].state == TUI_LOADING) model_wait(&m, &st);
    /* metrics first, with no failure */
    tui_model_submit(&m, &st);
    int stale;
    while (!tui_model_result(&m, TUI_SLOT_METRICS(0), &stale) ||
           !tui_model_result(&m, TUI_SLOT_COMPAT, &stale))
        model_wait(&m, &st);
    /* a settings change: metrics and compat again; the compat job's bin counts fail in the
     * worker */
    st.settings.sigma = 0.2;                  /* metrics and compat depend on it; M stays 15 */
    cs_backend_set_calloc(failing_compat_bins);
    assert_int_equal(tui_model_submit(&m, &st), 2);
    const cs_job *r;
    while (!(r = tui_model_result(&m, TUI_SLOT_COMPAT, &stale)) || stale ||
           cs_backend_busy(b, TUI_SLOT_METRICS(0)))
        model_wait(&m, &st);
    disarm();
    assert_int_equal(r->status, CS_ENOMEM);
    assert_string_equal(r->err.msg, "out of memory");
    cs_backend_free(b);
    tui_model_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sleep_job_failures_are_reported),
        cmocka_unit_test(load_job_failures_are_reported),
        cmocka_unit_test(metrics_job_failures_are_reported),
        cmocka_unit_test(compat_job_failures_are_reported),
        cmocka_unit_test(backend_new_failures),
        cmocka_unit_test(model_shows_a_refused_request_in_place),
        cmocka_unit_test(model_keeps_a_worker_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
