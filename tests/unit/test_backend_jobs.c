/* Backend job kinds recal, methods and compat (calscope/jobs/): the delivered result equals
 * the direct engine call (cs_recal_apply / cs_methods_run / cs_compat_run, pinned by test_recal,
 * test_methods and test_compat) with the same inputs; a superseded job on the same slot is never
 * delivered; cs_backend_release_dataset while such a job runs returns and the result is not
 * delivered; responses (delivered, dropped or left undelivered at shutdown) are freed cleanly.
 * Built under TSan by `make test` (test_backend*.c): every assertion is on the test thread.
 * No check depends on elapsed time (support/liveness.h): tests wait for states, and a job that
 * must be cancelled is one that would run for far longer than the liveness limit. */
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "calscope/backend.h"
#include "calscope/compat.h"
#include "calscope/resample.h"
#include "calscope/jobs/compat.h"
#include "calscope/jobs/methods.h"
#include "calscope/jobs/recal.h"
#include "calscope/load.h"
#include "calscope/methods.h"
#include "calscope/recal.h"
#include "support/cs_test.h"
#include "support/liveness.h"

/* ---- helpers ---------------------------------------------------------------------------- */

/* A nudge that makes a worker likely to have started a job, never a sync: every check after it
 * holds whether the job was still queued or already running. */
static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

static cs_backend *new_backend(int workers)
{
    cs_error err;
    cs_backend *b = cs_backend_new(workers, &err);
    assert_non_null(b);
    return b;
}

static uint64_t submit(cs_backend *b, int slot, void *job)
{
    cs_error err;
    cs_error_clear(&err);
    assert_non_null(job);
    uint64_t g = cs_backend_submit(b, slot, job, &err);
    if (!g) fail_msg("submit: %s", err.msg);
    return g;
}

/* Blocks until the wake-up fd is readable (a response was queued for delivery), without
 * draining it or polling the response. */
static void wait_wake(cs_backend *b, int timeout_ms)
{
    struct pollfd pfd = { .fd = cs_backend_wake_fd(b), .events = POLLIN };
    assert_int_equal(poll(&pfd, 1, timeout_ms), 1);
}

/* Multiclass dataset of n rows, K classes, random logits; label drawn from the softmax (so it
 * is roughly calibrated and recalibration has real work to do). */
static cs_dataset *make_big(size_t n, size_t k, uint64_t seed)
{
    double *p = malloc(n * k * sizeof *p);
    int32_t *y = malloc(n * sizeof *y);
    assert_non_null(p);
    assert_non_null(y);
    cs_rng r;
    cs_rng_seed(&r, seed, 7, 0, 0);
    for (size_t i = 0; i < n; i++) {
        double s = 0;
        for (size_t c = 0; c < k; c++) {
            double u = (double)(cs_rng_next(&r) >> 11) / 9007199254740992.0;
            p[i * k + c] = exp(4 * u);
            s += p[i * k + c];
        }
        for (size_t c = 0; c < k; c++) p[i * k + c] /= s;
        double u = (double)(cs_rng_next(&r) >> 11) / 9007199254740992.0, acc = 0;
        y[i] = (int32_t)(k - 1);
        for (size_t c = 0; c < k; c++) {
            acc += p[i * k + c];
            if (u < acc) { y[i] = (int32_t)c; break; }
        }
    }
    cs_dataset *d = cs_test_dataset(n, k, p, y);
    free(p);
    free(y);
    return d;
}

static cs_recal_job *recal_job(const cs_dataset *d, int method, uint64_t seed)
{
    cs_error err;
    cs_recal_job *q = cs_recal_job_new(d, method, &err);
    assert_non_null(q);
    q->opts.seed = seed;
    return q;
}

static cs_methods_job *methods_job(const cs_dataset *const *m, size_t n, size_t ref, int ci,
                                   int cmp, uint64_t seed)
{
    cs_settings s;
    cs_settings_default(&s);
    cs_error err;
    cs_methods_job *q = cs_methods_job_new(m, n, &s, &err);
    assert_non_null(q);
    q->opts.ref = ref;
    q->opts.ci_repeats = ci;
    q->opts.cmp_repeats = cmp;
    q->opts.seed = seed;
    return q;
}

static cs_compat_job *compat_job(const cs_dataset *d, const cs_settings *s)
{
    cs_settings def;
    cs_settings_default(&def);
    cs_error err;
    cs_compat_job *q = cs_compat_job_new(d, s ? s : &def, &err);
    assert_non_null(q);
    return q;
}

static void same_dataset(const cs_dataset *x, const cs_dataset *y)
{
    assert_non_null(x);
    assert_non_null(y);
    assert_string_equal(x->path, y->path);
    assert_int_equal(x->n, y->n);
    assert_int_equal(x->k, y->k);
    assert_int_equal(x->n_samples, y->n_samples);
    assert_memory_equal(x->prob, y->prob, x->n * x->k * sizeof *x->prob);
    assert_memory_equal(x->label, y->label, x->n * sizeof *x->label);
    assert_memory_equal(x->conf, y->conf, x->n * sizeof *x->conf);
    assert_memory_equal(x->pred, y->pred, x->n * sizeof *x->pred);
    assert_true((x->id == NULL) == (y->id == NULL));
    if (x->id) assert_memory_equal(x->id, y->id, x->n * sizeof *x->id);
}

static void same_methods(const cs_methods *x, const cs_methods *y)
{
    assert_int_equal(x->n, y->n);
    assert_int_equal(x->ref, y->ref);
    assert_int_equal(x->k, y->k);
    assert_int_equal(x->classes, y->classes);
    assert_int_equal(x->n_top, y->n_top);
    for (size_t i = 0; i < x->n; i++) {
        const cs_method_row *a = &x->rows[i], *b = &y->rows[i];
        assert_int_equal(a->status, b->status);
        assert_int_equal(a->ok, b->ok);
        assert_int_equal(a->diff_status, b->diff_status);
        assert_string_equal(a->diff_err.msg, b->diff_err.msg);
        assert_int_equal(a->has_diff, b->has_diff);
        assert_int_equal(a->n_pairs, b->n_pairs);
        assert_memory_equal(a->v, b->v, sizeof a->v);
        assert_memory_equal(a->lo, b->lo, sizeof a->lo);
        assert_memory_equal(a->hi, b->hi, sizeof a->hi);
        assert_memory_equal(a->diff, b->diff, sizeof a->diff);
        assert_memory_equal(a->dlo, b->dlo, sizeof a->dlo);
        assert_memory_equal(a->dhi, b->dhi, sizeof a->dhi);
        assert_memory_equal(a->pbetter, b->pbetter, sizeof a->pbetter);
        assert_int_equal(a->mass_ok, b->mass_ok);
        assert_int_equal(a->mass_n, b->mass_n);
        assert_memory_equal(a->top, b->top, x->n_top * sizeof *a->top);
        assert_int_equal(a->k, b->k);
        if (a->cls) assert_memory_equal(a->cls, b->cls, a->k * sizeof *a->cls);
    }
}

static void same_compat(const cs_compat_report *x, const cs_compat_report *y)
{
    assert_int_equal(x->n, y->n);
    assert_memory_equal(x->rows, y->rows, x->n * sizeof *x->rows);
    assert_int_equal(x->bins, y->bins);
    assert_int_equal(x->lens, y->lens);
    assert_int_equal(x->binning, y->binning);
    assert_int_equal(x->mask, y->mask);
    assert_memory_equal(x->calscope, y->calscope, sizeof x->calscope);
    for (int l = 0; l < CS_COMPAT_COUNT; l++) {
        const cs_compat_lib_result *a = &x->lib[l], *b = &y->lib[l];
        assert_int_equal(a->applicable, b->applicable);
        assert_memory_equal(a->m, b->m, sizeof a->m);
        assert_memory_equal(a->notes, b->notes, sizeof a->notes);
        assert_int_equal(a->moved, b->moved);
        assert_int_equal(a->n_examples, b->n_examples);
        for (size_t e = 0; e < a->n_examples; e++) {
            assert_int_equal(a->examples[e].row, b->examples[e].row);
            assert_int_equal(a->examples[e].cls, b->examples[e].cls);
            assert_int_equal(a->examples[e].cs_bin, b->examples[e].cs_bin);
            assert_int_equal(a->examples[e].lib_bin, b->examples[e].lib_bin);
            assert_int_equal(a->examples[e].rule, b->examples[e].rule);
        }
        assert_true((a->moved_flag == NULL) == (b->moved_flag == NULL));
        if (a->moved_flag) assert_memory_equal(a->moved_flag, b->moved_flag, x->n);
    }
}

/* calscope's uniform bin of a confidence by the documented rule, by a plain scan: bin i is
 * (i/M, (i+1)/M], 0 in bin 0. */
static size_t spec_bin(double conf, size_t m)
{
    for (size_t i = 0; i < m; i++)
        if (conf <= (double)(i + 1) / (double)m) return i;
    return m - 1;
}

/* bin_moved counted independently from the report's moved flags. */
static void check_bin_moved(const cs_compat_job *r, const cs_dataset *d)
{
    const cs_compat_report *c = &r->report;
    size_t m = (size_t)c->bins;
    assert_non_null(r->bin_moved);
    for (int l = 0; l < CS_COMPAT_COUNT; l++) {
        uint32_t *want = calloc(m, sizeof *want);
        assert_non_null(want);
        size_t total = 0;
        for (size_t s = 0; s < c->n; s++)
            if (c->lib[l].moved_flag && c->lib[l].moved_flag[s]) want[spec_bin(d->conf[c->rows[s]], m)]++;
        for (size_t i = 0; i < m; i++) total += r->bin_moved[(size_t)l * m + i];
        assert_memory_equal(r->bin_moved + (size_t)l * m, want, m * sizeof *want);
        assert_int_equal(total, c->lib[l].moved);
        free(want);
    }
}

/* ---- recal job --------------------------------------------------------------------------- */

static void test_recal_job(void **state)
{
    (void)state;
    cs_dataset *g = cs_test_load_sample("digits_gnb.csv");
    cs_dataset *bin = cs_test_load_sample("breast_cancer_gnb.csv");
    cs_dataset *iris = cs_test_load_sample("iris_gnb.csv");  /* ms, dir: 76 fits a model, kept small */
    cs_backend *b = new_backend(2);
    for (int method = 0; method < CS_RECAL_COUNT; method++) {
        const cs_dataset *d = method == CS_RECAL_PLATT || method == CS_RECAL_BETA ? bin
                              : method == CS_RECAL_MS || method == CS_RECAL_DIR ? iris : g;
        cs_recal_job *q = recal_job(d, method, 17);
        q->base.threads = 2;                     /* the direct call below uses 1 */
        uint64_t gen = submit(b, 3, q);
        cs_job *job = cs_backend_wait(b, CS_TEST_LIVENESS_MS);
        assert_non_null(job);
        cs_recal_job *r = (cs_recal_job *)cs_recal_job_of(job);
        assert_non_null(r);
        assert_int_equal(job->slot, 3);
        assert_true(job->generation == gen);
        assert_int_equal(job->status, CS_OK);
        assert_ptr_equal(r->data, d);
        /* the fit's wall time comes with the result (its value depends on the machine): a
         * positive, finite number, within the backend's time of the whole job */
        assert_true(r->fit_seconds > 0 && isfinite(r->fit_seconds));
        assert_true(r->fit_seconds <= job->seconds);
        cs_recal_options o;
        cs_recal_options_default(&o);
        o.seed = 17;
        o.threads = 1;
        cs_recal_info info;
        cs_error err;
        cs_dataset *want = cs_recal_apply(d, method, &o, &info, &err);
        assert_non_null(want);
        same_dataset(r->dataset, want);
        assert_int_equal(r->info.method, info.method);
        assert_int_equal(r->info.folds, info.folds);
        assert_int_equal(r->info.fit_rows, info.fit_rows);
        assert_int_equal(r->info.from_logits, info.from_logits);
        assert_memory_equal(r->info.param, info.param, sizeof info.param);
        assert_int_equal(r->info.clamped, info.clamped);
        assert_int_equal(r->info.n_vec, info.n_vec);          /* vs, ets, beta: every model's */
        assert_int_equal(r->info.argmax_changed, info.argmax_changed);
        if (info.vec) assert_memory_equal(r->info.vec, info.vec, info.n_vec * (size_t)(info.folds + 1) * sizeof *info.vec);
        cs_recal_info_clear(&info);
        cs_dataset_free(want);
        if (method == CS_RECAL_TS) {
            /* the caller may take the dataset out of the response and keep it */
            cs_dataset *kept = r->dataset;
            r->dataset = NULL;
            cs_job_free(job);
            assert_int_equal(kept->n, 1797);
            assert_non_null(kept->conf);       /* prepared */
            cs_dataset_free(kept);
        } else {
            cs_job_free(job);
        }
    }
    /* an engine refusal comes back as the response, with the direct call's message */
    submit(b, 3, recal_job(g, CS_RECAL_PLATT, 0));   /* platt on 10 classes */
    cs_job *r = cs_backend_wait(b, CS_TEST_LIVENESS_MS);
    assert_non_null(r);
    assert_int_equal(r->status, CS_EUSAGE);
    assert_null(cs_recal_job_of(r)->dataset);
    cs_recal_options o;
    cs_recal_options_default(&o);
    cs_error err;
    assert_null(cs_recal_apply(g, CS_RECAL_PLATT, &o, NULL, &err));
    assert_int_equal(r->err.code, err.code);
    assert_string_equal(r->err.msg, err.msg);
    cs_job_free(r);
    assert_null(cs_backend_wait(b, 30));
    cs_backend_free(b);
    cs_dataset_free(g);
    cs_dataset_free(bin);
    cs_dataset_free(iris);
}

/* ---- methods job ------------------------------------------------------------------------- */

static void test_methods_job(void **state)
{
    (void)state;
    cs_dataset *g = cs_test_load_sample("digits_gnb.csv");
    cs_dataset *ts = cs_test_load_sample("digits_ts.csv");
    cs_recal_options ro;
    cs_recal_options_default(&ro);
    cs_error err;
    cs_dataset *iso = cs_recal_apply(g, CS_RECAL_ISO, &ro, NULL, &err);
    assert_non_null(iso);
    const cs_dataset *m[3] = { g, ts, iso };
    cs_backend *b = new_backend(2);

    cs_methods_job *q = methods_job(m, 3, 1, 25, 50, 9);
    q->opts.k = 4;
    q->base.threads = 2;
    cs_methods_options qo = q->opts;
    cs_settings qs = q->settings;
    uint64_t gen = submit(b, 5, q);
    cs_job *r = cs_backend_wait(b, CS_TEST_LIVENESS_MS);
    assert_non_null(r);
    assert_non_null(cs_methods_job_of(r));
    assert_true(r->generation == gen);
    assert_int_equal(r->status, CS_OK);
    const cs_methods *rm = &cs_methods_job_of(r)->result;
    cs_methods want;
    cs_run run1 = { .threads = 1 };
    assert_int_equal(cs_methods_run(m, 3, &qs, &qo, &run1, &want, &err), CS_OK);
    assert_int_equal(rm->k, 4);
    assert_int_equal(rm->ref, 1);
    same_methods(rm, &want);
    assert_true(rm->rows[0].has_diff);      /* not a table of empty rows */
    assert_true(rm->rows[2].lo[CS_METHODS_COL_ECE] < rm->rows[2].hi[CS_METHODS_COL_ECE]);
    cs_methods_free(&want);
    cs_job_free(r);

    /* settings travel with the request: another selection gives the direct call's table */
    q = methods_job(m, 2, 0, 0, 30, 2);
    snprintf(q->settings.select, sizeof q->settings.select, "y == 3");
    qo = q->opts;
    qs = q->settings;
    submit(b, 5, q);
    r = cs_backend_wait(b, CS_TEST_LIVENESS_MS);
    assert_non_null(r);
    assert_int_equal(r->status, CS_OK);
    rm = &cs_methods_job_of(r)->result;
    assert_int_equal(cs_methods_run(m, 2, &qs, &qo, &run1, &want, &err), CS_OK);
    same_methods(rm, &want);
    assert_int_equal(rm->rows[1].n_pairs, 183);
    cs_methods_free(&want);
    cs_job_free(r);

    /* the engine's usage error (reference out of range) comes back as the response */
    submit(b, 5, methods_job(m, 2, 2, 0, 10, 0));
    r = cs_backend_wait(b, CS_TEST_LIVENESS_MS);
    assert_non_null(r);
    assert_int_equal(r->status, CS_EUSAGE);
    assert_string_equal(r->err.msg, "methods: 2 methods, reference 2");
    assert_null(cs_methods_job_of(r)->result.rows);
    cs_job_free(r);

    /* the job's own limits: no methods, or more than CS_METHODS_JOB_MAX */
    cs_settings def;
    cs_settings_default(&def);
    cs_error_clear(&err);
    assert_null(cs_methods_job_new(m, 0, &def, &err));
    assert_int_equal(err.code, CS_EUSAGE);
    /* the 16-method table on iris (150 rows): what is checked is the job's limit, and 16
     * measures with smooth ECE on the digits took over a minute under TSan beside stress */
    cs_dataset *small = cs_test_load_sample("iris_gnb.csv");
    const cs_dataset *many[CS_METHODS_JOB_MAX + 1];
    for (size_t i = 0; i <= CS_METHODS_JOB_MAX; i++) many[i] = small;
    cs_error_clear(&err);
    assert_null(cs_methods_job_new(many, CS_METHODS_JOB_MAX + 1, &def, &err));
    assert_int_equal(err.code, CS_EUSAGE);
    q = methods_job(many, CS_METHODS_JOB_MAX, 0, 0, 5, 0);
    submit(b, 5, q);
    r = cs_backend_wait(b, CS_TEST_LIVENESS_MS);
    assert_non_null(r);
    assert_int_equal(r->status, CS_OK);
    assert_int_equal(cs_methods_job_of(r)->result.n, CS_METHODS_JOB_MAX);
    cs_job_free(r);
    assert_null(cs_backend_wait(b, 30));

    cs_backend_free(b);
    cs_dataset_free(small);
    cs_dataset_free(iso);
    cs_dataset_free(g);
    cs_dataset_free(ts);
}

/* ---- compat job ------------------------------------------------------------------------ */

static void test_compat_job(void **state)
{
    (void)state;
    cs_dataset *g = cs_test_load_sample("digits_gnb.csv");
    cs_backend *b = new_backend(2);
    cs_error err;
    cs_settings qs;
    cs_settings_default(&qs);

    /* top1 uniform (the default): report equal to the direct call, plus the moved-per-bin table */
    uint64_t gen = submit(b, 8, compat_job(g, &qs));
    cs_job *r = cs_backend_wait(b, CS_TEST_LIVENESS_MS);
    assert_non_null(r);
    const cs_compat_job *cr = cs_compat_job_of(r);
    assert_non_null(cr);
    assert_true(r->generation == gen);
    assert_int_equal(r->status, CS_OK);
    cs_compat_report want;
    assert_int_equal(cs_compat_run(g, &qs, CS_COMPAT_ALL_MASK, &want, &err), CS_OK);
    same_compat(&cr->report, &want);
    assert_int_equal(cr->report.mask, CS_COMPAT_ALL_MASK);
    check_bin_moved(cr, g);
    cs_compat_report_free(&want);
    cs_job_free(r);

    /* classwise, mass binning: no per-bin table (top1 uniform only), report still equal */
    qs.lens = CS_LENS_CLASSWISE;
    qs.binning = CS_BIN_MASS;
    qs.bins = 10;
    submit(b, 8, compat_job(g, &qs));
    r = cs_backend_wait(b, CS_TEST_LIVENESS_MS);
    assert_non_null(r);
    assert_int_equal(r->status, CS_OK);
    cr = cs_compat_job_of(r);
    assert_null(cr->bin_moved);
    assert_int_equal(cs_compat_run(g, &qs, CS_COMPAT_ALL_MASK, &want, &err), CS_OK);
    same_compat(&cr->report, &want);
    cs_compat_report_free(&want);
    cs_job_free(r);

    /* kd-tree binning has no library counterpart: the engine's error is the response */
    cs_settings_default(&qs);
    qs.binning = CS_BIN_KDTREE;
    submit(b, 8, compat_job(g, &qs));
    r = cs_backend_wait(b, CS_TEST_LIVENESS_MS);
    assert_non_null(r);
    assert_int_equal(r->status, CS_EUSAGE);
    assert_null(cs_compat_job_of(r)->bin_moved);
    assert_int_equal(cs_compat_run(g, &qs, CS_COMPAT_ALL_MASK, &want, &err), CS_EUSAGE);
    assert_string_equal(r->err.msg, err.msg);
    cs_compat_report_free(&want);
    cs_job_free(r);

    /* hand case (test_compat's inner edge, M = 4): rows 0 and 1 have confidence .5, calscope's
     * bin 1 = (.25,.5]; torchmetrics, netcal and relplot bin [lo,hi) and move both to bin 2;
     * the others move nothing. So the table is 2 in bin 1 for those three, 0 elsewhere. */
    static const double p[] = { .5, .3, .2,  .25, .5, .25,  .1, .9, 0,  .2, .1, .7,  .3, .3, .4 };
    static const int32_t y[] = { 0, 1, 1, 0, 2 };
    cs_dataset *h = cs_test_dataset(5, 3, p, y);
    cs_settings_default(&qs);
    qs.bins = 4;
    submit(b, 8, compat_job(h, &qs));
    r = cs_backend_wait(b, CS_TEST_LIVENESS_MS);
    assert_non_null(r);
    assert_int_equal(r->status, CS_OK);
    cr = cs_compat_job_of(r);
    assert_non_null(cr->bin_moved);
    for (int l = 0; l < CS_COMPAT_COUNT; l++) {
        int left_closed = l == CS_COMPAT_TORCHMETRICS || l == CS_COMPAT_NETCAL || l == CS_COMPAT_RELPLOT;
        for (size_t i = 0; i < 4; i++)
            assert_int_equal(cr->bin_moved[(size_t)l * 4 + i], left_closed && i == 1 ? 2 : 0);
    }
    check_bin_moved(cr, h);
    cs_job_free(r);
    assert_null(cs_backend_wait(b, 30));
    cs_backend_free(b);
    cs_dataset_free(h);
    cs_dataset_free(g);
}

/* ---- supersession ----------------------------------------------------------------------- */

/* Submits `first` to a 1-worker backend, then `second` on the same slot: only the second is
 * ever delivered. With `started`, waits until `first` runs (it must publish progress); else
 * `first` may be superseded queued or running, and the outcome must be the same. */
static void check_superseded(cs_backend *b, int slot, void *first, void *second, int started)
{
    const cs_job_ops *second_ops = ((cs_job *)second)->ops;
    uint64_t g1 = submit(b, slot, first);
    if (started)
        cs_test_wait_running(b, slot);
    else
        sleep_ms(5);
    uint64_t g2 = submit(b, slot, second);
    assert_true(g2 > g1);
    /* A liveness limit: a first job that is not cancelled must finish before the second runs
     * on the single worker; a cancelled one must stop. */
    cs_job *r = cs_backend_wait(b, 2 * CS_TEST_LIVENESS_MS);
    assert_non_null(r);
    assert_true(r->generation == g2);
    assert_int_equal(r->status, CS_OK);
    assert_ptr_equal(r->ops, second_ops);
    cs_job_free(r);
    assert_null(cs_backend_wait(b, 100));
    assert_false(cs_backend_busy(b, slot));
}

static void test_superseded_never_delivered(void **state)
{
    (void)state;
    cs_dataset *big = make_big(100000, 10, 1);
    cs_dataset *g = cs_test_load_sample("digits_gnb.csv");
    cs_dataset *ts = cs_test_load_sample("digits_ts.csv");
    cs_backend *b = new_backend(1);

    /* RECAL superseded queued or running: only the newer is delivered */
    check_superseded(b, 2, recal_job(big, CS_RECAL_TS, 1), recal_job(g, CS_RECAL_HIST, 1), 0);

    /* METHODS: a running bootstrap is cancelled when superseded. 200,000 resamples of 100,000
     * rows x 10 classes, twice, would take far beyond the liveness limit on the single worker,
     * so the second request is delivered only because the first stopped. */
    const cs_dataset *mbig[2] = { big, big };
    const cs_dataset *m[2] = { g, ts };
    check_superseded(b, 2, methods_job(mbig, 2, 0, 200000, 10, 0), methods_job(m, 2, 1, 0, 10, 0), 1);

    /* COMPAT */
    check_superseded(b, 2, compat_job(big, NULL), compat_job(g, NULL), 0);

    /* mixed kinds on one slot: the newest wins whatever the kinds */
    check_superseded(b, 2, recal_job(big, CS_RECAL_TS, 3), compat_job(g, NULL), 0);

    /* finished and queued for delivery, then superseded before the poll: dropped at the poll */
    uint64_t g1 = submit(b, 2, recal_job(g, CS_RECAL_HIST, 1));
    wait_wake(b, CS_TEST_LIVENESS_MS);                 /* g1's response is on the done list */
    uint64_t g2 = submit(b, 2, compat_job(g, NULL));
    cs_job *r = cs_backend_wait(b, CS_TEST_LIVENESS_MS);
    assert_non_null(r);
    assert_true(r->generation == g2);
    assert_true(g2 > g1);
    assert_non_null(cs_compat_job_of(r));
    cs_job_free(r);

    /* the same with cs_backend_cancel instead of a new request: nothing at all */
    submit(b, 2, methods_job(m, 2, 0, 0, 10, 0));
    wait_wake(b, CS_TEST_LIVENESS_MS);
    cs_backend_cancel(b, 2);
    assert_null(cs_backend_poll(b));
    assert_null(cs_backend_wait(b, 50));

    cs_backend_free(b);
    cs_dataset_free(big);
    cs_dataset_free(g);
    cs_dataset_free(ts);
}

/* ---- release_dataset while a job runs ---------------------------------------------------- */

static void test_release_while_running(void **state)
{
    (void)state;
    cs_dataset *g = cs_test_load_sample("digits_gnb.csv");
    cs_backend *b = new_backend(1);

    /* METHODS using d only as a later method, released while the first method's bootstrap
     * runs: cancelled (200,000 resamples of 100,000 rows would outlast the liveness limit many
     * times), not delivered, and d may be freed at once (ASan would catch a late read). */
    cs_dataset *first = make_big(100000, 10, 8), *later = make_big(100000, 10, 9);
    const cs_dataset *m[2] = { first, later };
    submit(b, 4, methods_job(m, 2, 0, 200000, 10, 0));
    cs_test_wait_running(b, 4);
    cs_test_liveness_begin("cs_backend_release_dataset of a running methods job");
    cs_backend_release_dataset(b, later);
    cs_test_liveness_end();
    assert_false(cs_backend_busy(b, 4));
    cs_dataset_free(later);
    assert_null(cs_backend_poll(b));
    cs_backend_release_dataset(b, first);   /* nothing uses it any more: returns at once */
    cs_dataset_free(first);

    /* RECAL: release cancels or waits for it, then nothing is delivered */
    cs_dataset *big = make_big(100000, 10, 2);
    submit(b, 6, recal_job(big, CS_RECAL_TS, 0));
    sleep_ms(5);
    cs_backend_release_dataset(b, big);
    assert_false(cs_backend_busy(b, 6));
    cs_dataset_free(big);
    assert_null(cs_backend_wait(b, 100));

    /* COMPAT: the same */
    big = make_big(100000, 10, 3);
    submit(b, 7, compat_job(big, NULL));
    sleep_ms(5);
    cs_backend_release_dataset(b, big);
    assert_false(cs_backend_busy(b, 7));
    cs_dataset_free(big);
    assert_null(cs_backend_wait(b, 100));

    /* a job on another slot that does not use the released dataset is untouched */
    cs_dataset *other = make_big(2000, 4, 4);
    uint64_t gen = submit(b, 7, compat_job(g, NULL));
    submit(b, 6, recal_job(other, CS_RECAL_TS, 0));
    cs_backend_release_dataset(b, other);
    cs_dataset_free(other);
    cs_job *r = cs_backend_wait(b, CS_TEST_LIVENESS_MS);
    assert_non_null(r);
    assert_true(r->generation == gen);
    assert_int_equal(r->status, CS_OK);
    cs_job_free(r);
    assert_null(cs_backend_wait(b, 100));

    /* finished and queued for delivery but not yet polled when the dataset is released:
     * "their results are not delivered" holds for these too (the job's data pointer would
     * dangle once d is freed), whichever request field named d */
    cs_dataset *done_d = make_big(2000, 4, 5);
    submit(b, 6, recal_job(done_d, CS_RECAL_HIST, 0));          /* d as the job's data */
    wait_wake(b, CS_TEST_LIVENESS_MS);
    cs_backend_release_dataset(b, done_d);
    assert_null(cs_backend_poll(b));
    const cs_dataset *m2[2] = { g, done_d };
    submit(b, 4, methods_job(m2, 2, 0, 0, 10, 0));               /* d as data[1] only */
    wait_wake(b, CS_TEST_LIVENESS_MS);
    cs_backend_release_dataset(b, done_d);
    assert_null(cs_backend_poll(b));
    assert_false(cs_backend_busy(b, 4));
    cs_dataset_free(done_d);
    assert_null(cs_backend_wait(b, 50));

    /* the slots work normally afterwards */
    gen = submit(b, 6, recal_job(g, CS_RECAL_HIST, 0));
    r = cs_backend_wait(b, CS_TEST_LIVENESS_MS);
    assert_non_null(r);
    assert_true(r->generation == gen);
    assert_int_equal(r->status, CS_OK);
    assert_non_null(cs_recal_job_of(r)->dataset);
    cs_job_free(r);
    cs_backend_free(b);
    cs_dataset_free(g);
}

/* Responses queued but never polled are freed by cs_backend_free (LeakSanitizer checks). */
static void test_undelivered_freed(void **state)
{
    (void)state;
    cs_dataset *g = cs_test_load_sample("digits_gnb.csv");
    cs_dataset *ts = cs_test_load_sample("digits_ts.csv");
    const cs_dataset *m[2] = { g, ts };
    cs_backend *b = new_backend(2);
    submit(b, 1, recal_job(g, CS_RECAL_TS, 0));
    submit(b, 2, methods_job(m, 2, 0, 10, 10, 0));
    submit(b, 3, compat_job(g, NULL));
    /* three wake-up bytes: all three responses are waiting */
    int n = 0;
    while (n < 3) {
        char buf[8];
        wait_wake(b, CS_TEST_LIVENESS_MS);
        ssize_t got = read(cs_backend_wake_fd(b), buf, sizeof buf);
        if (got > 0) n += (int)got;
    }
    assert_int_equal(n, 3);
    assert_true(cs_backend_busy(b, 1) == 0);
    cs_backend_free(b);
    cs_dataset_free(g);
    cs_dataset_free(ts);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recal_job),
        cmocka_unit_test(test_methods_job),
        cmocka_unit_test(test_compat_job),
        cmocka_unit_test(test_superseded_never_delivered),
        cmocka_unit_test(test_release_while_running),
        cmocka_unit_test(test_undelivered_freed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
