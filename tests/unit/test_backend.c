/* Backend: queue, generations, supersession, cancellation, wake-up pipe, shutdown, and real jobs
 * compared with direct engine calls. Built under TSan by `make test`.
 * No check depends on elapsed time (support/liveness.h): a test waits for a state (a job running,
 * a response) and a cancellation test starts work that would never end by itself (an hour's
 * sleep, hours of resampling), so only a cancel that works lets it go on. */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include "calscope/backend.h"
#include "calscope/resample.h"
#include "calscope/jobs/cases.h"
#include "calscope/jobs/compat.h"
#include "calscope/jobs/curve.h"
#include "calscope/jobs/likert.h"
#include "calscope/jobs/load.h"
#include "calscope/jobs/methods.h"
#include "calscope/jobs/metrics.h"
#include "calscope/jobs/recal.h"
#include "engine/jobs/sleep.h"
#include "calscope/jobs/topk.h"
#include "calscope/topk.h"
#include "support/cs_test.h"
#include "support/liveness.h"

/* A sleep job that never ends by itself within any test (an hour, polling its cancel flag every
 * millisecond). Its progress passes 0 after 4 ms of running. */
#define ENDLESS_MS 3600000u

static cs_backend *new_backend(int workers)
{
    cs_error err;
    cs_backend *b = cs_backend_new(workers, &err);
    assert_non_null(b);
    return b;
}

static uint64_t submit_job(cs_backend *b, int slot, void *job)
{
    cs_error err;
    cs_error_clear(&err);
    assert_non_null(job);
    uint64_t g = cs_backend_submit(b, slot, job, &err);
    if (!g) fail_msg("submit: %s", err.msg);
    return g;
}

static uint64_t submit_sleep(cs_backend *b, int slot, unsigned ms)
{
    cs_error err;
    return submit_job(b, slot, cs_sleep_job_new(ms, &err));
}

/* Binary dataset, perfectly calibrated by construction: P(label 1) = q. */
static cs_dataset *make_binary(size_t n, uint64_t seed)
{
    cs_dataset *d = cs_test_dataset_new(n, 2);
    cs_rng r;
    cs_rng_seed(&r, seed, 99, 0, 0);
    for (size_t i = 0; i < n; i++) {
        double q = (double)(cs_rng_next(&r) >> 11) / 9007199254740992.0;
        double u = (double)(cs_rng_next(&r) >> 11) / 9007199254740992.0;
        d->prob[2 * i] = 1 - q;
        d->prob[2 * i + 1] = q;
        d->label[i] = u < q;
    }
    cs_test_prepare(d);
    return d;
}

static void test_basic_delivery(void **state)
{
    (void)state;
    cs_backend *b = new_backend(2);
    assert_int_equal(cs_backend_workers(b), 2);
    assert_true(cs_backend_progress(b, 3) < 0);
    assert_true(cs_backend_eta(b, 3) < 0);     /* no job: no estimate */
    assert_true(cs_backend_eta(b, -1) < 0);
    uint64_t g = submit_sleep(b, 3, 20);
    assert_true(cs_backend_busy(b, 3));
    struct pollfd pfd = { .fd = cs_backend_wake_fd(b), .events = POLLIN };
    assert_int_equal(poll(&pfd, 1, CS_TEST_LIVENESS_MS), 1);
    cs_backend_drain_wake(b);
    cs_job *r = cs_backend_poll(b);
    assert_non_null(r);
    assert_int_equal(r->slot, 3);
    assert_true(r->generation == g);
    assert_int_equal(r->status, CS_OK);
    assert_true(r->seconds > 0);        /* the job reports that it ran (no threshold on time) */
    assert_true(cs_backend_is_current(b, r));
    assert_false(cs_backend_busy(b, 3));
    assert_double_near(cs_backend_progress(b, 3), 1.0, 0);
    assert_true(cs_backend_eta(b, 3) < 0);     /* finished: nothing left to estimate */
    assert_null(cs_backend_poll(b));
    /* Drained: the pipe is empty again. */
    assert_int_equal(poll(&pfd, 1, 0), 0);
    /* A later submit on the slot makes the delivered response stale. */
    submit_sleep(b, 3, 1);
    assert_false(cs_backend_is_current(b, r));
    cs_job_free(r);
    cs_backend_free(b);
}

/* A running job superseded on its slot stops: on a 1-worker pool the newer request can only run
 * once the older one (an endless sleep) has returned. */
static void test_supersede_running(void **state)
{
    (void)state;
    cs_backend *b = new_backend(1);
    submit_sleep(b, 0, ENDLESS_MS);
    cs_test_wait_running(b, 0);
    uint64_t g2 = submit_sleep(b, 0, 5);
    cs_job *r = cs_backend_wait(b, CS_TEST_LIVENESS_MS);
    assert_non_null(r);
    assert_true(r->generation == g2);
    assert_int_equal(r->status, CS_OK);
    cs_job_free(r);
    /* The cancelled one never shows up (it ended before g2 started, so it would be out by now). */
    assert_null(cs_backend_poll(b));
    cs_backend_free(b);
}

static void test_cancel_slot(void **state)
{
    (void)state;
    cs_backend *b = new_backend(1);
    submit_sleep(b, 5, ENDLESS_MS);
    cs_test_wait_running(b, 5);
    submit_sleep(b, 6, 10); /* waits behind slot 5 on a 1-worker pool: runs only once 5 stops */
    cs_backend_cancel(b, 5);
    assert_false(cs_backend_busy(b, 5));
    cs_job *r = cs_backend_wait(b, CS_TEST_LIVENESS_MS);
    assert_non_null(r);
    assert_int_equal(r->slot, 6);
    cs_job_free(r);
    assert_null(cs_backend_wait(b, 50));
    cs_backend_free(b);
}

static void test_rapid_replacement(void **state)
{
    (void)state;
    cs_backend *b = new_backend(2);
    /* Without polling in between: only the very last of each slot may come out. */
    uint64_t last[2] = { 0, 0 };
    for (int i = 0; i < 400; i++) {
        last[0] = submit_sleep(b, 0, (unsigned)(i % 3));
        last[1] = submit_sleep(b, 1, (unsigned)(i % 2));
    }
    int got[2] = { 0, 0 };
    while (got[0] == 0 || got[1] == 0) {
        cs_job *r = cs_backend_wait(b, CS_TEST_LIVENESS_MS);
        assert_non_null(r);
        assert_true(r->slot == 0 || r->slot == 1);
        assert_true(r->generation == last[r->slot]);
        got[r->slot]++;
        cs_job_free(r);
    }
    assert_int_equal(got[0], 1);
    assert_int_equal(got[1], 1);
    assert_null(cs_backend_wait(b, 30));

    /* Interleaved with polling: whatever is delivered is the newest of its slot at that time. */
    uint64_t newest = 0;
    int final_seen = 0;   /* the last request's result came out (in the loop or after it) */
    for (int i = 0; i < 300; i++) {
        newest = submit_sleep(b, 2, (unsigned)(i % 4 == 0));
        cs_job *r = cs_backend_poll(b);
        if (r) {
            assert_true(r->generation == newest);
            assert_true(cs_backend_is_current(b, r));
            final_seen = i == 299;
            cs_job_free(r);
        }
    }
    /* Wait for it (a liveness limit only), then make sure nothing else follows. */
    if (!final_seen) {
        cs_job *r = cs_backend_wait(b, CS_TEST_LIVENESS_MS);
        assert_non_null(r);
        assert_true(r->generation == newest);
        cs_job_free(r);
    }
    assert_null(cs_backend_wait(b, 50));
    cs_backend_free(b);
}

/* Shutting down cancels running jobs: with two endless sleeps running and one queued, both
 * cs_backend_shutdown (returning 1: every job stopped) and cs_backend_free return only because
 * both workers stop. */
static void test_shutdown_mid_job_once(int shutdown_first)
{
    cs_backend *b = new_backend(2);
    submit_sleep(b, 0, ENDLESS_MS);
    submit_sleep(b, 1, ENDLESS_MS);
    cs_test_wait_running(b, 0);
    cs_test_wait_running(b, 1);
    submit_sleep(b, 2, ENDLESS_MS); /* queued behind them */
    assert_true(cs_backend_busy(b, 2));
    if (shutdown_first) {
        cs_test_liveness_begin("cs_backend_shutdown with two endless jobs running");
        assert_int_equal(cs_backend_shutdown(b, CS_TEST_LIVENESS_MS), 1);
        cs_test_liveness_end();
        assert_false(cs_backend_busy(b, 0));
        assert_false(cs_backend_busy(b, 2));   /* the queued one was dropped */
        assert_null(cs_backend_poll(b));
    }
    cs_test_liveness_begin("cs_backend_free with two endless jobs running");
    cs_backend_free(b);
    cs_test_liveness_end();
}

static void test_shutdown_mid_job(void **state)
{
    (void)state;
    test_shutdown_mid_job_once(0);
    test_shutdown_mid_job_once(1);
}

static void test_bad_requests(void **state)
{
    (void)state;
    cs_backend *b = new_backend(1);
    cs_error err;
    /* a bad slot: refused, and the job is freed (ASan checks it is not leaked) */
    assert_true(cs_backend_submit(b, CS_BACKEND_MAX_SLOTS, &cs_sleep_job_new(1, &err)->base, &err) == 0);
    assert_int_equal(err.code, CS_EUSAGE);
    assert_string_equal(err.msg, "backend: slot 80 out of range");
    assert_true(cs_backend_submit(b, -1, &cs_sleep_job_new(1, &err)->base, &err) == 0);
    assert_int_equal(err.code, CS_EUSAGE);
    assert_true(cs_backend_submit(b, 0, NULL, &err) == 0);
    assert_int_equal(err.code, CS_EUSAGE);
    /* incomplete requests are refused by the kinds' constructors */
    cs_error_clear(&err);
    assert_null(cs_metrics_job_new(NULL, NULL, &err));   /* no dataset */
    assert_int_equal(err.code, CS_EUSAGE);
    assert_string_equal(err.msg, "backend: incomplete request");
    cs_error_clear(&err);
    assert_null(cs_load_job_new(NULL, NULL, &err));      /* no path */
    assert_int_equal(err.code, CS_EUSAGE);
    assert_string_equal(err.msg, "backend: incomplete request");
    cs_backend_free(b);
}

/* ---- real jobs (need the metrics engine and loader) ----------------------------------- */

static void test_metrics_job(void **state)
{
    (void)state;
    cs_dataset *d = make_binary(3000, 1);
    cs_settings s;
    cs_settings_default(&s);
    cs_error err;
    cs_prepared *p = cs_prepare(d, &s, &err);
    assert_non_null(p);
    cs_result direct;
    memset(&direct, 0, sizeof direct);
    assert_int_equal(cs_evaluate(p, NULL, 0, CS_WANT_ALL, NULL, &direct, &err), CS_OK);
    cs_ci ci1;
    cs_run run1 = { .threads = 1 };
    assert_int_equal(cs_bootstrap_ci(p, CS_METRICS_DEFAULT, 50, 7, &run1, &ci1, &err), CS_OK);

    cs_backend *b = new_backend(2);
    cs_metrics_job *mq = cs_metrics_job_new(d, &s, &err);
    assert_non_null(mq);
    cs_metrics_job_ci(mq, 50, 0, 7);
    uint64_t g = submit_job(b, 1, mq);
    cs_job *r = cs_backend_wait(b, CS_TEST_LIVENESS_MS);
    assert_non_null(r);
    assert_true(r->generation == g);
    assert_int_equal(r->status, CS_OK);
    const cs_metrics_job *mr = cs_metrics_job_of(r);
    assert_non_null(mr);
    assert_null(cs_sleep_job_of(r));
    assert_ptr_equal(mr->data, d);   /* the dataset the result was computed on */
    assert_double_near(mr->result.ece, direct.ece, 0);
    assert_double_near(mr->result.brier, direct.brier, 0);
    assert_true(mr->has_ci);
    /* The backend used 2 threads, the direct call 1: bit-identical intervals. */
    assert_memory_equal(mr->ci.lo, ci1.lo, sizeof ci1.lo);
    assert_memory_equal(mr->ci.hi, ci1.hi, sizeof ci1.hi);
    assert_true(mr->ci.lo[CS_METRIC_ECE] <= direct.ece + 0.05);
    cs_job_free(r);

    /* A size curve job on 200,000 rows with 100,000 repeats (600,000 evaluations of up to 200,000
     * rows: hours), cancelled by release_dataset once it runs: the release returns (the job
     * stopped) and nothing is delivered. */
    cs_dataset *big = make_binary(200000, 2);
    cs_curve_options co;
    cs_curve_options_size_default(&co);
    co.repeats = 100000;
    submit_job(b, 2, cs_curve_job_new(CS_CURVE_SIZE, big, &s, &co, &err));
    cs_test_wait_running(b, 2);
    cs_test_liveness_begin("cs_backend_release_dataset of a running size curve");
    cs_backend_release_dataset(b, big);
    cs_test_liveness_end();
    assert_false(cs_backend_busy(b, 2));
    assert_null(cs_backend_poll(b));
    cs_dataset_free(big);

    /* ...and the next request on the slot is correct. */
    co.repeats = 10;
    g = submit_job(b, 2, cs_curve_job_new(CS_CURVE_SIZE, d, &s, &co, &err));
    r = cs_backend_wait(b, CS_TEST_LIVENESS_MS);
    assert_non_null(r);
    assert_true(r->generation == g);
    assert_int_equal(r->status, CS_OK);
    const cs_curve *rc = cs_curve_job_of(r)->result;
    assert_non_null(rc);
    assert_int_equal(rc->n_points, 6);
    assert_int_equal(rc->points[0].rows, 30);
    cs_run run = { .threads = 1 };
    cs_curve *c = cs_size_curve(p, &co, &run, &err);
    assert_non_null(c);
    assert_memory_equal(c->points, rc->points, c->n_points * sizeof *c->points);
    cs_curve_free(c);
    cs_job_free(r);

    cs_backend_free(b);
    cs_result_free(&direct);
    cs_prepared_free(p);
    cs_dataset_free(d);
}

static void test_load_job(void **state)
{
    (void)state;
    static const char csv[] = "label,p_0,p_1\n0,0.9,0.1\n1,0.2,0.8\n1,0.4,0.6\n";
    const char *path = cs_test_tmpfile(".csv", csv, sizeof csv - 1);
    cs_backend *b = new_backend(1);
    cs_error err;
    submit_job(b, 0, cs_load_job_new(path, NULL, &err));
    cs_job *r = cs_backend_wait(b, CS_TEST_LIVENESS_MS);
    assert_non_null(r);
    assert_int_equal(r->status, CS_OK);
    const cs_load_job *lr = cs_load_job_of(r);
    assert_non_null(lr->dataset);
    assert_int_equal(lr->dataset->n, 3);
    assert_string_equal(lr->path, path);
    cs_job_free(r);
    cs_backend_free(b);
}

static void test_real_job_storm(void **state)
{
    (void)state;
    cs_dataset *d = make_binary(2000, 3);
    cs_backend *b = new_backend(2);
    cs_settings qs;
    cs_settings_default(&qs);
    cs_error err;
    uint64_t last = 0;
    int last_bins = 0;
    for (int i = 0; i < 300; i++) {
        qs.bins = 5 + i % 40;
        cs_metrics_job *q = cs_metrics_job_new(d, &qs, &err);
        assert_non_null(q);
        cs_metrics_job_ci(q, 20, 0, (uint64_t)i);
        last = submit_job(b, 4, q);
        last_bins = qs.bins;
        if (i % 50 == 0) { /* a few polls in between, like a UI loop */
            cs_job *r = cs_backend_poll(b);
            if (r)
                assert_true(r->generation == last);
            cs_job_free(r);
        }
    }
    /* Only the last generation can still be delivered: wait for it, then nothing follows. */
    cs_job *r = cs_backend_wait(b, CS_TEST_LIVENESS_MS);
    assert_non_null(r);
    assert_true(r->generation == last);
    assert_int_equal(r->status, CS_OK);
    assert_null(cs_backend_wait(b, 30));
    cs_settings s = qs;
    s.bins = last_bins;
    cs_prepared *p = cs_prepare(d, &s, &err);
    cs_result direct;
    memset(&direct, 0, sizeof direct);
    assert_int_equal(cs_evaluate(p, NULL, 0, CS_WANT_ALL, NULL, &direct, &err), CS_OK);
    assert_int_equal(cs_metrics_job_of(r)->result.n_bins, (size_t)last_bins);
    assert_double_near(cs_metrics_job_of(r)->result.ece, direct.ece, 0);
    cs_result_free(&direct);
    cs_prepared_free(p);
    cs_job_free(r);
    cs_backend_free(b);
    cs_dataset_free(d);
}

static void test_topk_job(void **state)
{
    (void)state;
    cs_dataset *d = make_binary(1000, 4);
    cs_backend *b = new_backend(1);
    cs_settings qs;
    cs_settings_default(&qs);
    cs_error err;
    cs_topk_job *q = cs_topk_job_new(d, &qs, &err);
    assert_non_null(q);
    q->k[0] = 1;
    q->k[1] = 2;
    q->n = 2;
    submit_job(b, 0, q);
    cs_job *r = cs_backend_wait(b, CS_TEST_LIVENESS_MS);
    assert_non_null(r);
    assert_int_equal(r->status, CS_OK);
    const cs_topk_job *tr = cs_topk_job_of(r);
    assert_int_equal(tr->n, 2);
    double want[2];
    const int ks[2] = { 1, 2 };
    assert_int_equal(cs_topk_bars(d, &qs, ks, 2, NULL, want, &err), CS_OK);
    assert_double_near(tr->value[0], want[0], 0);
    assert_double_near(tr->value[1], want[1], 0);
    /* top-1 bar is the ordinary ECE */
    cs_prepared *p = cs_prepare(d, &qs, &err);
    cs_result res;
    memset(&res, 0, sizeof res);
    assert_int_equal(cs_evaluate(p, NULL, 0, CS_WANT_BINNED, NULL, &res, &err), CS_OK);
    assert_double_near(tr->value[0], res.ece, 1e-12);
    cs_result_free(&res);
    cs_prepared_free(p);
    cs_job_free(r);
    cs_backend_free(b);
    cs_dataset_free(d);
}

/* make_binary with a case column: n rows spread over n_cases cases (row i -> case i % n_cases). */
static cs_dataset *make_cases(size_t n, size_t n_cases, uint64_t seed)
{
    cs_dataset *d = make_binary(n, seed);
    d->case_id = malloc(n * sizeof *d->case_id);
    d->case_names = calloc(n_cases, sizeof *d->case_names);
    d->n_cases = n_cases;
    for (size_t c = 0; c < n_cases; c++) {
        char name[32];
        snprintf(name, sizeof name, "case%02zu", c);
        d->case_names[c] = strdup(name);
    }
    for (size_t i = 0; i < n; i++) d->case_id[i] = (int32_t)(i % n_cases);
    return d;
}

static void test_cases_job(void **state)
{
    (void)state;
    cs_dataset *d = make_cases(6000, 12, 5);
    cs_backend *b = new_backend(2);
    cs_settings qs;
    cs_settings_default(&qs);
    qs.bins = 10;
    cs_error err;
    uint64_t g = submit_job(b, 9, cs_cases_job_new(d, &qs, &err));
    cs_job *r = cs_backend_wait(b, CS_TEST_LIVENESS_MS);
    assert_non_null(r);
    assert_non_null(cs_cases_job_of(r));
    assert_int_equal(r->status, CS_OK);
    assert_true(r->generation == g);
    const cs_case_metrics *rc = &cs_cases_job_of(r)->result;
    /* the same numbers as a direct engine call */
    cs_case_metrics want;
    assert_int_equal(cs_case_metrics_compute(d, &qs, NULL, &want, &err), CS_OK);
    assert_int_equal(rc->n_cases, 12);
    assert_int_equal(rc->n_cases, want.n_cases);
    for (size_t i = 0; i < want.n_cases; i++) {
        assert_double_near(rc->ace[i], want.ace[i], 0);
        assert_double_near(rc->ece[i], want.ece[i], 0);
        assert_int_equal(rc->count[i], 500);
    }
    assert_double_near(rc->ace_stat.mean, want.ace_stat.mean, 0);
    assert_double_near(rc->ace_stat.sd, want.ace_stat.sd, 0);
    assert_double_near(rc->pooled_ece, want.pooled_ece, 0);
    assert_int_equal(rc->m, 10);
    assert_int_equal(rc->k, 2);
    assert_non_null(rc->hist);
    assert_memory_equal(rc->hist, want.hist, 2 * 10 * 10 * sizeof *want.hist);
    cs_case_metrics_free(&want);
    cs_job_free(r);

    /* no case column: the engine's usage error comes back as the response */
    cs_dataset *plain = make_binary(200, 6);
    submit_job(b, 9, cs_cases_job_new(plain, &qs, &err));
    r = cs_backend_wait(b, CS_TEST_LIVENESS_MS);
    assert_non_null(r);
    assert_int_equal(r->status, CS_EUSAGE);
    assert_true(strstr(r->err.msg, "case") != NULL);
    assert_int_equal(cs_cases_job_of(r)->result.n_cases, 0);
    cs_job_free(r);
    cs_backend_free(b);
    cs_dataset_free(plain);
    cs_dataset_free(d);
}

/* A cases job superseded while queued or running is dropped and only the newer one is delivered;
 * release_dataset of a running one returns with nothing delivered. That the job stops between
 * cases rather than running on is checked on the engine: a raised flag returns CS_ECANCELLED
 * (the jobs publish no progress, and no elapsed time is compared). */
static void test_cases_job_supersede(void **state)
{
    (void)state;
    cs_dataset *d = make_cases(400000, 40000, 8);   /* many small cases: per-case work dominates */
    cs_backend *b = new_backend(1);
    cs_settings qs;
    cs_settings_default(&qs);
    qs.lens = CS_LENS_CLASSWISE;
    cs_error err;
    submit_job(b, 4, cs_cases_job_new(d, &qs, &err));
    cs_job *r = cs_backend_wait(b, CS_TEST_LIVENESS_MS);
    assert_non_null(r);
    assert_int_equal(r->status, CS_OK);
    assert_int_equal(cs_cases_job_of(r)->result.n_cases, 40000);
    cs_job_free(r);

    uint64_t g1 = submit_job(b, 4, cs_cases_job_new(d, &qs, &err));
    qs.lens = CS_LENS_TOP1;
    qs.bins = 5;
    uint64_t g2 = submit_job(b, 4, cs_cases_job_new(d, &qs, &err));
    assert_true(g2 > g1);
    r = cs_backend_wait(b, CS_TEST_LIVENESS_MS);
    assert_non_null(r);
    assert_true(r->generation == g2);
    assert_int_equal(r->status, CS_OK);
    assert_int_equal(cs_cases_job_of(r)->result.m, 5);
    cs_job_free(r);
    assert_null(cs_backend_wait(b, 50));

    qs.lens = CS_LENS_CLASSWISE;
    submit_job(b, 4, cs_cases_job_new(d, &qs, &err));
    cs_backend_release_dataset(b, d);
    assert_false(cs_backend_busy(b, 4));
    assert_null(cs_backend_poll(b));
    cs_backend_free(b);

    /* The engine call the job runs stops at a raised cancel flag, before any case. */
    atomic_int flag;
    atomic_init(&flag, 1);
    cs_case_metrics none;
    memset(&none, 0, sizeof none);
    assert_int_equal(cs_case_metrics_compute(d, &qs, &flag, &none, &err), CS_ECANCELLED);
    assert_int_equal(err.code, CS_ECANCELLED);
    assert_string_equal(err.msg, "cancelled");
    cs_case_metrics_free(&none);
    cs_dataset_free(d);
}

static void test_likert_job(void **state)
{
    (void)state;
    cs_dataset *d = make_binary(5000, 12);
    cs_backend *b = new_backend(2);
    cs_settings qs;
    cs_settings_default(&qs);
    cs_error err;
    /* default cuts */
    submit_job(b, 7, cs_likert_job_new(d, &qs, &err));
    cs_job *r = cs_backend_wait(b, CS_TEST_LIVENESS_MS);
    assert_non_null(r);
    assert_non_null(cs_likert_job_of(r));
    assert_int_equal(r->status, CS_OK);
    const cs_likert *lk = &cs_likert_job_of(r)->result;
    cs_likert want;
    assert_int_equal(cs_likert_compute(d, &qs, NULL, 0, NULL, &want, &err), CS_OK);
    assert_int_equal(lk->n, 3);
    size_t total = 0;
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(lk->iv[i].count, want.iv[i].count);
        assert_double_near(lk->iv[i].ece, want.iv[i].ece, 0);
        assert_double_near(lk->iv[i].lo, cs_likert_default_cuts[i], 0);
        total += lk->iv[i].count;
    }
    assert_int_equal(total, 5000);      /* binary top-1 conf >= .5: all in [.33,.66) or [.66,1] */
    assert_int_equal(lk->iv[0].count, 0);
    cs_job_free(r);
    /* custom cuts are the job's own copy: changing the caller's array afterwards changes nothing */
    double cuts[4] = { 0.5, 0.75, 0.9, 1 };
    cs_likert_job *q = cs_likert_job_new(d, &qs, &err);
    assert_non_null(q);
    memcpy(q->cuts, cuts, sizeof cuts);
    q->n_cuts = 4;
    submit_job(b, 7, q);
    cuts[1] = 0.6;
    r = cs_backend_wait(b, CS_TEST_LIVENESS_MS);
    assert_non_null(r);
    assert_int_equal(r->status, CS_OK);
    lk = &cs_likert_job_of(r)->result;
    assert_int_equal(lk->n, 3);
    assert_double_near(lk->iv[1].lo, 0.75, 0);
    const double cuts0[4] = { 0.5, 0.75, 0.9, 1 };
    assert_int_equal(cs_likert_compute(d, &qs, cuts0, 4, NULL, &want, &err), CS_OK);
    for (size_t i = 0; i < 3; i++) assert_int_equal(lk->iv[i].count, want.iv[i].count);
    cs_job_free(r);
    /* a lens without a scalar first coordinate is refused by the engine */
    qs.lens = CS_LENS_CLASSWISE;
    submit_job(b, 7, cs_likert_job_new(d, &qs, &err));
    r = cs_backend_wait(b, CS_TEST_LIVENESS_MS);
    assert_non_null(r);
    assert_int_equal(r->status, CS_EUSAGE);
    cs_job_free(r);
    /* superseded before it finished: only the newest generation is delivered */
    qs.lens = CS_LENS_TOP1;
    uint64_t last = 0;
    for (int i = 0; i < 5; i++) last = submit_job(b, 7, cs_likert_job_new(d, &qs, &err));
    r = cs_backend_wait(b, CS_TEST_LIVENESS_MS);
    assert_non_null(r);
    assert_true(r->generation == last);
    cs_job_free(r);
    assert_null(cs_backend_wait(b, 100));
    cs_backend_free(b);
    cs_dataset_free(d);
}

/* Nice value of thread `tid` of this process (field 19 of /proc/self/task/TID/stat), or 99;
 * *worker is set when the thread is named "cs-worker". */
static int thread_nice(long tid, int *worker)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/self/task/%ld/stat", tid);
    FILE *f = fopen(path, "r");
    if (!f) return 99;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    *worker = strstr(buf, "(cs-worker)") != NULL;
    const char *p = strrchr(buf, ')');   /* the command name may hold spaces */
    int field = 2, nice = 99;
    for (; p && *p; p++)
        if (*p == ' ' && ++field == 19) { nice = atoi(p + 1); break; }
    return nice;
}

/* Workers run below the thread that started the pool, so the thread that draws the screen wins
 * the cores while every worker computes: the last worker (cheap jobs only) 5 nice levels down,
 * the others (which may run long jobs) 10 levels down, so a cheap job also wins over a curve. */
static void test_workers_yield_to_the_front_end(void **state)
{
    (void)state;
    errno = 0;
    int base = getpriority(PRIO_PROCESS, 0);
    assert_int_equal(errno, 0);
    if (base > 9) skip();   /* no room below: the workers stay at 19 */
    cs_backend *b = new_backend(2);
    submit_sleep(b, 0, ENDLESS_MS);
    submit_sleep(b, 1, ENDLESS_MS);
    cs_test_wait_running(b, 0);      /* both workers have started (and named and niced themselves) */
    cs_test_wait_running(b, 1);
    DIR *dir = opendir("/proc/self/task");
    assert_non_null(dir);
    int workers = 0, cheap = 0, long_ = 0;   /* sanitizer runtimes may add threads of their own */
    for (struct dirent *e; (e = readdir(dir)) != NULL;) {
        long tid = atol(e->d_name);
        if (tid <= 0) continue;
        int is_worker = 0, n = thread_nice(tid, &is_worker);
        workers += is_worker;
        cheap += is_worker && n == base + 5;
        long_ += is_worker && n == base + 10;
    }
    closedir(dir);
    assert_true(workers >= 2);            /* both workers (and any helpers they started) */
    assert_int_equal(cheap + long_, workers);   /* all of them below the caller */
    assert_true(cheap >= 1);
    assert_true(long_ >= 1);
    assert_int_equal(getpriority(PRIO_PROCESS, 0), base);   /* the caller's thread is untouched */
    cs_backend_free(b);
}

/* ---- cancellation everywhere, quit, release --------------------------------------------- */

/* Every job kind observes its cancel flag: run with the flag already raised, each returns
 * CS_ECANCELLED "cancelled" (before this, top-k, Likert, recalibration and compat ran to the
 * end). Called through the kind's ops, as a worker does. */
static void test_every_job_polls_cancel(void **state)
{
    (void)state;
    cs_dataset *d = make_cases(4000, 8, 21);
    cs_dataset *d2 = make_binary(4000, 21);
    static const char csv[] = "label,p_0,p_1\n0,0.9,0.1\n1,0.2,0.8\n1,0.4,0.6\n";
    const char *path = cs_test_tmpfile(".csv", csv, sizeof csv - 1);
    cs_settings s;
    cs_settings_default(&s);
    cs_curve_options size_o, bins_o;
    cs_curve_options_size_default(&size_o);
    cs_curve_options_bins_default(&bins_o, 0);
    cs_error err;
    const cs_dataset *two[2] = { d, d2 };
    cs_metrics_job *ci = cs_metrics_job_new(d, &s, &err);
    assert_non_null(ci);
    cs_metrics_job_ci(ci, 100, 0, 1);
    cs_topk_job *tk = cs_topk_job_new(d, &s, &err);
    assert_non_null(tk);
    tk->k[0] = 1;
    tk->k[1] = 2;
    tk->n = 2;
    cs_job *jobs[] = {
        &cs_load_job_new(path, NULL, &err)->base,
        &cs_metrics_job_new(d, &s, &err)->base,
        &ci->base,
        &cs_curve_job_new(CS_CURVE_SIZE, d, &s, &size_o, &err)->base,
        &cs_curve_job_new(CS_CURVE_BINS, d, &s, &bins_o, &err)->base,
        &tk->base,
        &cs_sleep_job_new(ENDLESS_MS, &err)->base,
        &cs_cases_job_new(d, &s, &err)->base,
        &cs_likert_job_new(d, &s, &err)->base,
        &cs_recal_job_new(d, 0, &err)->base,
        &cs_methods_job_new(two, 2, &s, &err)->base,
        &cs_compat_job_new(d, &s, &err)->base,
    };
    atomic_int flag, ppm;
    atomic_init(&flag, 1);
    atomic_init(&ppm, 0);
    cs_run run = { .threads = 1, .cancel = &flag, .progress_ppm = &ppm };
    for (size_t i = 0; i < sizeof jobs / sizeof jobs[0]; i++) {
        cs_job *j = jobs[i];
        cs_error_clear(&j->err);
        j->ops->run(j, &run);
        if (j->status != CS_ECANCELLED)
            fail_msg("job kind %s ignored its raised cancel flag (status %d)", j->ops->name, j->status);
        assert_non_null(strstr(j->err.msg, "cancelled"));   /* the loader names the file first */
        cs_job_free(j);
    }
    cs_dataset_free(d);
    cs_dataset_free(d2);
}

/* A job kind defined here, through the ops alone (no switch to touch anywhere): it reads its
 * dataset, then blocks until the test releases it, ignoring its cancel flag — the stand-in for
 * an engine call with no cancel point. */
typedef struct blocker_job {
    cs_job base;
    const cs_dataset *data;
    size_t seen_n;               /* d->n, read after the release (ASan: d is still alive) */
} blocker_job;

static pthread_mutex_t blk_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t blk_cv = PTHREAD_COND_INITIALIZER;
static int blk_running, blk_release;

static void blocker_run(cs_job *job, const struct cs_run *run)
{
    (void)run;
    blocker_job *j = (blocker_job *)(void *)job;
    pthread_mutex_lock(&blk_mu);
    blk_running = 1;
    pthread_cond_broadcast(&blk_cv);
    while (!blk_release) pthread_cond_wait(&blk_cv, &blk_mu);
    blk_running = 0;
    pthread_mutex_unlock(&blk_mu);
    j->seen_n = j->data->n;
}

static void blocker_free(cs_job *job) { free(job); }

static int blocker_uses(const cs_job *job, const cs_dataset *d)
{
    return ((const blocker_job *)(const void *)job)->data == d;
}

static const cs_job_ops blocker_ops = { "blocker", CS_COST_CHEAP, blocker_run, blocker_free,
                                        blocker_uses };

static int blocker_started(void *ctx)
{
    (void)ctx;
    pthread_mutex_lock(&blk_mu);
    int r = blk_running;
    pthread_mutex_unlock(&blk_mu);
    return r;
}

static void blocker_release(void)
{
    pthread_mutex_lock(&blk_mu);
    blk_release = 1;
    pthread_cond_broadcast(&blk_cv);
    pthread_mutex_unlock(&blk_mu);
}

/* Quitting does not wait for a blocked job, and handing over a dataset it reads does not wait
 * either: cs_backend_retire_dataset returns at once and frees the dataset only when the job has
 * returned; cs_backend_shutdown returns 0 ("still running") instead of waiting. Before, the
 * dashboard's quit joined such a job (45.7 s after `x` on 3,000,000 rows). The checks are on
 * states: the job stays blocked until the test releases it, whatever the time. */
static void test_quit_and_release_do_not_wait(void **state)
{
    (void)state;
    blk_running = blk_release = 0;
    cs_backend *b = new_backend(2);
    cs_dataset *d = make_binary(100, 31);
    blocker_job *j = (blocker_job *)(void *)cs_job_alloc(sizeof *j, &blocker_ops);
    assert_non_null(j);
    j->data = d;
    submit_job(b, 1, j);
    assert_true(cs_test_poll_until(blocker_started, NULL));
    submit_sleep(b, 2, ENDLESS_MS);            /* a cooperative job beside it */
    cs_test_wait_running(b, 2);

    cs_test_liveness_begin("cs_backend_retire_dataset while a blocked job reads it");
    cs_backend_retire_dataset(b, d);           /* d belongs to the backend now */
    cs_test_liveness_end();
    assert_false(cs_backend_busy(b, 1));       /* superseded: nothing will be delivered */
    assert_true(blocker_started(NULL));        /* ...and it still runs, reading d */

    cs_test_liveness_begin("cs_backend_shutdown with a blocked job");
    assert_int_equal(cs_backend_shutdown(b, 20), 0);   /* does not wait for it */
    cs_test_liveness_end();
    assert_true(blocker_started(NULL));
    assert_false(cs_backend_busy(b, 2));       /* the cooperative one is cancelled */
    assert_null(cs_backend_poll(b));

    blocker_release();                         /* the job reads d (alive) and returns */
    cs_test_liveness_begin("cs_backend_free once the blocked job returned");
    cs_backend_free(b);                        /* frees d (LeakSanitizer checks) */
    cs_test_liveness_end();
}

/* Cheap before long: on two workers a long job never takes the last free
 * one, so a cheap job submitted behind two endless long ones still runs and is delivered; the
 * second long job waits, queued (progress 0). Without the rule the cheap job would wait for an
 * endless one and the test would fail on its liveness limit. */
static void test_cheap_never_waits_behind_long(void **state)
{
    (void)state;
    cs_backend *b = new_backend(2);
    cs_error err;
    submit_job(b, 0, cs_sleep_job_new_long(ENDLESS_MS, &err));
    cs_test_wait_running(b, 0);
    submit_job(b, 1, cs_sleep_job_new_long(ENDLESS_MS, &err));
    uint64_t g = submit_sleep(b, 2, 3);
    cs_job *r = cs_backend_wait(b, CS_TEST_LIVENESS_MS);
    assert_non_null(r);
    assert_true(r->generation == g);
    assert_int_equal(r->status, CS_OK);
    cs_job_free(r);
    assert_true(cs_backend_busy(b, 1));
    assert_true(cs_backend_progress(b, 1) == 0);   /* still queued */
    assert_true(cs_backend_eta(b, 1) < 0);         /* queued: no estimate */
    /* once the first long job is cancelled, the second one starts */
    cs_backend_cancel(b, 0);
    cs_test_wait_running(b, 1);
    cs_backend_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_basic_delivery),
        cmocka_unit_test(test_supersede_running),
        cmocka_unit_test(test_cancel_slot),
        cmocka_unit_test(test_rapid_replacement),
        cmocka_unit_test(test_shutdown_mid_job),
        cmocka_unit_test(test_workers_yield_to_the_front_end),
        cmocka_unit_test(test_bad_requests),
        cmocka_unit_test(test_metrics_job),
        cmocka_unit_test(test_load_job),
        cmocka_unit_test(test_real_job_storm),
        cmocka_unit_test(test_topk_job),
        cmocka_unit_test(test_cases_job),
        cmocka_unit_test(test_cases_job_supersede),
        cmocka_unit_test(test_likert_job),
        cmocka_unit_test(test_every_job_polls_cancel),
        cmocka_unit_test(test_quit_and_release_do_not_wait),
        cmocka_unit_test(test_cheap_never_waits_behind_long),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
