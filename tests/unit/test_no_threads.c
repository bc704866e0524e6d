/* When no thread can be made. The engine splits its large passes over two threads (engine/pair.h:
 * RECE-G's weights, the metrics' chunks, the per-row caches; the class-wise ECE's side thread in
 * cs_evaluate; the loader's second chunk), and a user can hit a limit on threads (`ulimit -u`, a
 * container's pids limit): then the caller runs the second half itself, and every number must be
 * the one the threads give. This binary is linked with -Wl,--wrap=pthread_create (Makefile), so
 * the engine's pthread_create is __wrap_pthread_create below, which refuses with EAGAIN while
 * `refuse` is set. Each test runs the same work with threads and without, compares the results
 * bit for bit, and checks that threads were refused (the path was taken). */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calscope/dataset.h"
#include "calscope/metrics.h"
#include "engine/load/load_internal.h"
#include "engine/pair.h"
#include "support/cs_test.h"

int __real_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg);
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg);

static atomic_int refuse, refused;

int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg)
{
    if (atomic_load(&refuse)) {
        atomic_fetch_add(&refused, 1);
        return EAGAIN;
    }
    return __real_pthread_create(t, a, fn, arg);
}

static void set_refuse(int on)
{
    atomic_store(&refuse, on);
    atomic_store(&refused, 0);
}

/* ---- cs_run_pair ----------------------------------------------------------------------------- */

typedef struct {
    pthread_t ran_on;
    int order;
    atomic_int *turn;      /* a counter: the order the halves ran in */
} half;

static void *mark(void *arg)
{
    half *h = arg;
    h->ran_on = pthread_self();
    h->order = atomic_fetch_add(h->turn, 1);
    return NULL;
}

static void test_pair_without_a_thread(void **state)
{
    (void)state;
    atomic_int turn = 0;
    half a = {0, -1, &turn}, b = {0, -1, &turn};
    set_refuse(1);
    assert_int_equal(cs_run_pair(mark, &a, &b, 1), 0);     /* no helper ran */
    assert_int_equal(atomic_load(&refused), 1);
    assert_true(pthread_equal(a.ran_on, pthread_self()));
    assert_true(pthread_equal(b.ran_on, pthread_self()));
    assert_int_equal(a.order, 0);                          /* the first half first */
    assert_int_equal(b.order, 1);
    /* with a thread: the second half on it */
    set_refuse(0);
    turn = 0;
    assert_int_equal(cs_run_pair(mark, &a, &b, 1), 1);
    assert_true(pthread_equal(a.ran_on, pthread_self()));
    assert_false(pthread_equal(b.ran_on, pthread_self()));
    /* not asked for: no thread tried */
    set_refuse(1);
    assert_int_equal(cs_run_pair(mark, &a, &b, 0), 0);
    assert_int_equal(atomic_load(&refused), 0);
    set_refuse(0);
}

/* ---- cs_evaluate ----------------------------------------------------------------------------- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double urand(void) { return cs_test_xorshift(&rng); }

/* n rows of k classes: sharpened random probabilities, labels drawn from them; with `grid`,
 * each probability then rounded to a multiple of 1/grid (equal values: smooth ECE merges them
 * in the estimators' block once its other readers are done, evaluate.c). */
static cs_dataset *synth_on(size_t n, size_t k, double grid)
{
    double *P = malloc(n * k * sizeof *P);
    int32_t *Y = malloc(n * sizeof *Y);
    assert_non_null(P);
    assert_non_null(Y);
    for (size_t i = 0; i < n; i++) {
        double s = 0;
        for (size_t j = 0; j < k; j++) {
            P[i * k + j] = pow(urand(), 3.0);
            s += P[i * k + j];
        }
        double u = urand(), c = 0;
        Y[i] = (int32_t)(k - 1);
        for (size_t j = 0; j < k; j++) {
            P[i * k + j] /= s;
            c += P[i * k + j];
            if (u < c && Y[i] == (int32_t)(k - 1)) Y[i] = (int32_t)j;
        }
        if (grid > 0)
            for (size_t j = 0; j < k; j++) P[i * k + j] = round(P[i * k + j] * grid) / grid;
    }
    cs_dataset *d = cs_test_dataset(n, k, P, Y);
    free(P);
    free(Y);
    return d;
}

static cs_result evaluate_run(const cs_dataset *d, const char *lens, const cs_run *run)
{
    cs_settings s;
    cs_error e;
    cs_settings_default(&s);
    assert_int_equal(cs_settings_set_lens(&s, lens, &e), CS_OK);
    cs_prepared *p = cs_prepare(d, &s, &e);
    if (!p) fail_msg("cs_prepare: %s", e.msg);
    cs_result r;
    cs_status st = cs_evaluate(p, NULL, 0, CS_WANT_ALL, run, &r, &e);
    if (st != CS_OK) fail_msg("cs_evaluate: %s", e.msg);
    cs_prepared_free(p);
    return r;
}

static cs_result evaluate(const cs_dataset *d, const char *lens)
{
    return evaluate_run(d, lens, NULL);
}

static void same_result(const cs_result *a, const cs_result *b)
{
    const double *x[] = {&a->accuracy, &a->ece, &a->ace, &a->mce, &a->rece_g, &a->brier, &a->nll,
                         &a->aece, &a->sce, &a->smece, &a->smece_sigma, &a->l2ce,
                         &a->l2ce_debiased, &a->ece_sweep, &a->ece_sweep_bins};
    const double *y[] = {&b->accuracy, &b->ece, &b->ace, &b->mce, &b->rece_g, &b->brier, &b->nll,
                         &b->aece, &b->sce, &b->smece, &b->smece_sigma, &b->l2ce,
                         &b->l2ce_debiased, &b->ece_sweep, &b->ece_sweep_bins};
    for (size_t i = 0; i < sizeof x / sizeof *x; i++)
        if (memcmp(x[i], y[i], sizeof(double)) != 0)
            fail_msg("value %zu: %.17g with threads, %.17g without", i, *x[i], *y[i]);
    assert_int_equal(a->n_bins, b->n_bins);
    assert_memory_equal(a->bins, b->bins, a->n_bins * sizeof *a->bins);
}

/* 250,000 x 5: over the class-wise ECE's side-thread threshold (100,000 samples) and the
 * scores' two-thread one (10^6 values), RECE-G's box path in two parts, the estimators' block
 * read beside smooth ECE; then with the probabilities on a grid of 1/256 (ties: smooth ECE
 * merges equal values in that block, after waiting for its readers). */
static void test_metrics_without_threads(void **state)
{
    (void)state;
    static const char *lenses[] = {"top1", "classwise"};
    for (int tied = 0; tied < 2; tied++) {
        cs_dataset *d = synth_on(250000, 5, tied ? 256.0 : 0.0);
        for (size_t l = 0; l < 2; l++) {
            set_refuse(0);
            cs_result a = evaluate(d, lenses[l]);
            set_refuse(1);
            cs_result b = evaluate(d, lenses[l]);
            int no = atomic_load(&refused);
            set_refuse(0);
            if (no < 2) fail_msg("%s: only %d threads were asked for", lenses[l], no);
            assert_false(isnan(a.sce));
            assert_false(isnan(a.brier));
            if (l == 0) assert_false(isnan(a.smece));
            same_result(&a, &b);
            cs_result_free(&a);
            cs_result_free(&b);
        }
        cs_dataset_free(d);
    }
}

/* A caller's budget of one thread (cs_run.threads 1, a task of cs_parallel_for): cs_evaluate
 * asks for no thread at all — not the class-wise ECE's side thread, not the estimators' gather
 * or the reader beside smooth ECE, not the two-part passes inside them (the bins' chunks,
 * RECE-G's parts, smooth ECE's moments) — and gives the same bits as under a budget of two,
 * which asks for several. Counted as refusals, so every thread asked for is seen. */
static void test_metrics_budget_of_one(void **state)
{
    (void)state;
    static const char *lenses[] = {"top1", "classwise"};
    cs_dataset *d = synth_on(300000, 5, 0.0);
    const cs_run one = { .threads = 1 }, two = { .threads = 2 };
    for (size_t l = 0; l < 2; l++) {
        set_refuse(1);
        cs_result a = evaluate_run(d, lenses[l], &two);
        int asked_two = atomic_load(&refused);
        set_refuse(1);
        cs_result b = evaluate_run(d, lenses[l], &one);
        int asked_one = atomic_load(&refused);
        set_refuse(0);
        if (asked_one != 0 || asked_two < 2)
            fail_msg("%s: %d threads asked for under a budget of two, %d under a budget of one",
                     lenses[l], asked_two, asked_one);
        same_result(&a, &b);
        cs_result_free(&a);
        cs_result_free(&b);
    }
    cs_dataset_free(d);
}

/* ---- the loader -------------------------------------------------------------------------------- */

/* A file of rows "label,p_0..p_3" big enough for two chunks. */
static char *csv(size_t rows, size_t *len)
{
    size_t cap = 64 + rows * 80, o = 0;
    char *b = malloc(cap);
    assert_non_null(b);
    o += (size_t)snprintf(b, cap, "label,p_0,p_1,p_2,p_3\n");
    for (size_t i = 0; i < rows; i++) {
        double p[4], s = 0;
        for (int j = 0; j < 4; j++) s += p[j] = pow(urand(), 2.0) + 1e-6;
        o += (size_t)snprintf(b + o, cap - o, "%d", (int)(urand() * 4));
        for (int j = 0; j < 4; j++) o += (size_t)snprintf(b + o, cap - o, ",%.12g", p[j] / s);
        b[o++] = '\n';
    }
    *len = o;
    return b;
}

static cs_dataset *load_on(const char *text, size_t len, int threads)
{
    cs_load_options opt;
    cs_load_options_default(&opt);
    cs_load_summary sum;
    cs_error e;
    cs_load_tuning t = {CSL_PATH_FAST, 0, threads, 0, 0, CSL_SCAN_AUTO};
    cs_dataset *d = cs_load_buffer_tuned("t.csv", text, len, &opt, &sum, &e, &t);
    if (!d) fail_msg("load: %s", e.msg);
    assert_int_equal(t.used_path, CSL_PATH_FAST);
    cs_load_summary_free(&sum);
    return d;
}

/* Two threads (the second counts the first chunk's lines, then parses its own) and three (a
 * count pass, then the parse, each on every chunk). */
static void test_load_without_threads(void **state)
{
    (void)state;
    size_t len;
    char *text = csv(60000, &len);
    for (int threads = 2; threads <= 3; threads++) {
        set_refuse(0);
        cs_dataset *a = load_on(text, len, threads);
        set_refuse(1);
        cs_dataset *b = load_on(text, len, threads);
        int no = atomic_load(&refused);
        set_refuse(0);
        if (no < threads - 1) fail_msg("%d threads: %d refused", threads, no);
        assert_int_equal(a->n, 60000);
        assert_int_equal(b->n, a->n);
        assert_int_equal(b->k, a->k);
        assert_memory_equal(a->prob, b->prob, a->n * a->k * sizeof *a->prob);
        assert_memory_equal(a->label, b->label, a->n * sizeof *a->label);
        assert_memory_equal(a->line, b->line, a->n * sizeof *a->line);
        assert_memory_equal(a->conf, b->conf, a->n * sizeof *a->conf);
        assert_memory_equal(a->pred, b->pred, a->n * sizeof *a->pred);
        assert_memory_equal(a->correct, b->correct, a->n);
        cs_dataset_free(a);
        cs_dataset_free(b);
    }
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pair_without_a_thread),
        cmocka_unit_test(test_metrics_without_threads),
        cmocka_unit_test(test_metrics_budget_of_one),
        cmocka_unit_test(test_load_without_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
