/* The reduction driver (reduce.h): the statistics object for a plan, then its cases in
 * parallel on cs_parallel_for, one case per task. A failing case stops the cases after it
 * (cs_parallel_for starts tasks in index order, so every case before it has started and runs
 * to its end); the error reported is the first failing case's in plan order, whatever the
 * thread count. */
#include "engine/reduce/reduce_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calscope/run.h"
#include "engine/num/ubin.h"

void cs_reduce_options_default(cs_reduce_options *o)
{
    memset(o, 0, sizeof *o);
    o->fine = CS_SEGSTATS_FINE_DEFAULT;
    o->sum_tol = CS_REDUCE_SUM_TOL_DEFAULT;
    o->affine_tol = CS_REDUCE_AFFINE_TOL_DEFAULT;
    o->memory = CS_REDUCE_MEMORY_DEFAULT;
}

static cs_status check_options(const cs_seg_plan *plan, const cs_reduce_options *o, cs_error *err)
{
    if (o->fine < 1 || o->fine > CS_SEGSTATS_FINE_MAX)
        return cs_error_set(err, CS_EUSAGE, 0, 0, "--fine: %d is not in 1..%d", o->fine, CS_SEGSTATS_FINE_MAX);
    if (!(o->sum_tol >= 0 && isfinite(o->sum_tol)) || !(o->affine_tol >= 0 && isfinite(o->affine_tol)))
        return cs_error_set(err, CS_EUSAGE, 0, 0, "a tolerance is negative or not finite");
    if (!plan->n) return cs_error_set(err, CS_EINPUT, 0, 0, "no case to reduce");
    return CS_OK;
}

/* The default mapping: softmax over the first case's channels. */
static cs_status first_channels(const cs_seg_case *c, size_t *channels, cs_error *err)
{
    cs_vol *pv = NULL, *lv = NULL;
    cs_status st = cs_vol_open(c->probs, NULL, &pv, err);
    if (st != CS_OK) rd_also(err, "labels", c->labels);
    if (st == CS_OK && (st = cs_vol_open(c->labels, NULL, &lv, err)) != CS_OK) rd_also(err, "probabilities", c->probs);
    rd_shape sh;
    if (st == CS_OK) st = rd_channels(c, cs_vol_info_of(pv), cs_vol_info_of(lv), &sh, err);
    if (st == CS_OK) *channels = sh.channels;
    cs_vol_close(pv);
    cs_vol_close(lv);
    return st;
}

static char *dup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

/* Case names and inputs from the plan (the arrays are allocated here when cs_segstats_new left
 * them NULL). */
static int fill_cases(cs_segstats *st, const cs_seg_plan *plan)
{
    size_t n = plan->n;
    if (!st->case_names && !(st->case_names = calloc(n, sizeof *st->case_names))) return -1;
    if (!st->probs_in && !(st->probs_in = calloc(n, sizeof *st->probs_in))) return -1;
    if (!st->labels_in && !(st->labels_in = calloc(n, sizeof *st->labels_in))) return -1;
    if (!st->voxels && !(st->voxels = calloc(n, sizeof *st->voxels))) return -1;
    for (size_t i = 0; i < n; i++) {
        const cs_seg_case *c = &plan->cases[i];
        if (!(st->case_names[i] = dup(c->name)) || !(st->probs_in[i].path = dup(c->probs_rec))
            || !(st->labels_in[i].path = dup(c->labels_rec)))
            return -1;
        st->probs_in[i].size = c->probs_size;
        st->labels_in[i].size = c->labels_size;
    }
    return 0;
}

cs_status cs_reduce_begin(const cs_seg_plan *plan, const cs_reduce_options *o, cs_segstats **out,
                          cs_error *err)
{
    *out = NULL;
    cs_status s = check_options(plan, o, err);
    if (s != CS_OK) return s;
    cs_seg_mapping *own = NULL;
    const cs_seg_mapping *m = o->mapping;
    if (!m) {
        size_t channels = 0;
        if ((s = first_channels(&plan->cases[0], &channels, err)) != CS_OK) return s;
        if (!(m = own = cs_seg_mapping_default(channels))) return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
    }
    cs_segstats *st = cs_segstats_new(o->fine, m->kind, m->k, (const char *const *)m->names, m->text, plan->n);
    if (!st || fill_cases(st, plan)) {
        cs_segstats_free(st);
        cs_seg_mapping_free(own);
        return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory for the statistics of %zu cases", plan->n);
    }
    cs_seg_mapping_free(own);
    *out = st;
    return CS_OK;
}

typedef struct pool {
    rd_case_ctx x;
    cs_error *errs;
    cs_status *status;
    atomic_int stop;          /* no new case: cancelled, or a case failed */
    const atomic_int *cancel;
    atomic_uchar *done;
} pool;

static void task(void *vp, size_t i, int worker)
{
    (void)worker;
    pool *p = vp;
    cs_error_clear(&p->errs[i]);
    cs_status s = rd_reduce_case(&p->x, i, &p->errs[i]);
    p->status[i] = s;
    if (s == CS_OK) {
        if (p->done) atomic_store_explicit(&p->done[i], 1, memory_order_release);
        return;
    }
    if (s != CS_ECANCELLED) {
        size_t cur = atomic_load(p->x.first_fail);
        while (i < cur && !atomic_compare_exchange_weak(p->x.first_fail, &cur, i)) {}
    }
    atomic_store(&p->stop, 1);
}

cs_status cs_reduce_cases(cs_segstats *st, const cs_seg_plan *plan, const cs_reduce_options *o,
                          const cs_run *run, cs_error *err)
{
    cs_status s = check_options(plan, o, err);
    if (s != CS_OK) return s;
    cs_seg_mapping *own = o->mapping ? NULL : cs_seg_mapping_default(st->k);
    const cs_seg_mapping *m = o->mapping ? o->mapping : own;
    size_t n = plan->n;
    double *edges = malloc(((size_t)o->fine + 1) * sizeof *edges);
    pool p = { .cancel = run ? run->cancel : NULL, .done = o->done };
    p.errs = malloc(n * sizeof *p.errs);
    p.status = malloc(n * sizeof *p.status);
    atomic_size_t first_fail = SIZE_MAX;
    atomic_uint_fast64_t units = 0;
    int threads = run && run->threads > 0 ? run->threads : cs_cpu_count();
    if (threads > CS_THREADS_MAX) threads = CS_THREADS_MAX;
    rd_budget budget;
    int have_budget = rd_budget_init(&budget, o->memory, threads) == 0;
    if (!m || !edges || !p.errs || !p.status || !have_budget) {
        s = cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
        goto out;
    }
    if (m->k != st->k || m->kind != st->kind || st->n_cases != n || st->fine != o->fine) {
        s = cs_error_set(err, CS_EUSAGE, 0, 0, "cs_reduce_cases: statistics not made by cs_reduce_begin with this plan");
        goto out;
    }
    for (int i = 0; i <= o->fine; i++) edges[i] = cs_ubin_edge(i, o->fine);
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        total += plan->cases[i].probs_size + plan->cases[i].labels_size + 1;
        p.status[i] = CS_ECANCELLED;   /* a case never started */
    }
    atomic_init(&p.stop, 0);
    p.x = (rd_case_ctx){ .st = st, .plan = plan, .o = o, .m = m, .edges = edges, .cancel = p.cancel,
                         .first_fail = &first_fail, .units_done = &units, .units_total = total,
                         .progress_ppm = run ? run->progress_ppm : NULL, .budget = &budget };
    /* the user's cancel also stops new cases: a task that finds it raised says so first */
    if (p.cancel && atomic_load(p.cancel)) atomic_store(&p.stop, 1);
    cs_parallel_for(threads, n, task, &p, &p.stop);
    s = CS_OK;
    size_t ff = atomic_load(&first_fail);
    if (ff != SIZE_MAX) {
        *err = p.errs[ff];
        s = p.status[ff];
    } else {
        for (size_t i = 0; i < n && s == CS_OK; i++)
            if (p.status[i] != CS_OK) s = cs_error_set(err, CS_ECANCELLED, 0, 0, "cancelled");
    }
out:
    if (have_budget) rd_budget_destroy(&budget);
    cs_seg_mapping_free(own);
    free(edges);
    free(p.errs);
    free(p.status);
    return s;
}

cs_status cs_reduce_run(const cs_seg_plan *plan, const cs_reduce_options *o, const cs_run *run,
                        cs_segstats **out, cs_error *err)
{
    cs_segstats *st = NULL;
    cs_status s = cs_reduce_begin(plan, o, &st, err);
    if (s == CS_OK) s = cs_reduce_cases(st, plan, o, run, err);
    if (s != CS_OK) {
        cs_segstats_free(st);
        st = NULL;
    }
    *out = st;
    return s;
}
