/* Deterministic resampling primitives: see include/calscope/resample.h. */
#include "calscope/resample.h"

#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GOLDEN 0x9e3779b97f4a7c15ull

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void cs_rng_seed(cs_rng *r, uint64_t seed, uint64_t stream, uint64_t point, uint64_t rep)
{
    /* Chained mixing rather than XOR of the parts: (p, r) and (r, p) must give unrelated streams. */
    uint64_t h = mix64(seed + GOLDEN);
    h = mix64(h ^ (stream + 0x632be59bd9b4e019ull));
    h = mix64(h ^ (point + 0x8cb92ba72f3d8dd7ull));
    h = mix64(h ^ (rep + 0xd1b54a32d192ed03ull));
    r->state = h;
}

static inline uint64_t next_inl(cs_rng *r)
{
    r->state += GOLDEN;
    return mix64(r->state);
}

uint64_t cs_rng_next(cs_rng *r)
{
    return next_inl(r);
}

/* Lemire 2019 on a 32-bit bound >= 1: exact and cheap; inlined into the draw loops. */
static inline uint32_t below32(cs_rng *r, uint32_t b)
{
    uint64_t m = (next_inl(r) >> 32) * b;
    uint32_t low = (uint32_t)m;
    if (low < b) {
        uint32_t t = (uint32_t)(-b) % b;
        while (low < t) {
            m = (next_inl(r) >> 32) * b;
            low = (uint32_t)m;
        }
    }
    return (uint32_t)(m >> 32);
}

uint64_t cs_rng_below(cs_rng *r, uint64_t bound)
{
    /* Lemire 2019 on 32-bit bounds (all our index ranges fit): exact and cheap. */
    if (bound <= 1)
        return 0;
    if (bound <= UINT32_MAX)
        return below32(r, (uint32_t)bound);
    /* Larger bounds: plain rejection on the top of the range. */
    uint64_t lim = UINT64_MAX - UINT64_MAX % bound;
    uint64_t x;
    do {
        x = cs_rng_next(r);
    } while (x >= lim);
    return x % bound;
}

size_t cs_subset_size(double fraction, size_t n)
{
    if (!(fraction > 0) || n == 0)
        return 0;
    double x = fraction * (double)n;
    double nearest = nearbyint(x);
    double tol = 1e-9 * (x > 1 ? x : 1);
    double k = fabs(x - nearest) <= tol ? nearest : ceil(x);
    if (k < 1)
        return 1;
    if (k >= (double)n)
        return n;
    return (size_t)k;
}

void cs_draw_without(cs_rng *r, uint32_t *perm, size_t n, size_t k, uint32_t *undo, uint32_t *out)
{
    /* The swap targets j depend only on the generator, not on perm: they are drawn a block
     * ahead (into undo, in the same order) and their perm entries prefetched, so the random
     * accesses overlap. Same draws, same swaps, same output as one step at a time. */
    for (size_t i0 = 0; i0 < k; i0 += 64) {
        size_t i1 = i0 + 64 < k ? i0 + 64 : k;
        for (size_t i = i0; i < i1; i++) {
            size_t j = i + (n - i <= UINT32_MAX ? (n - i > 1 ? (size_t)below32(r, (uint32_t)(n - i)) : 0)
                                                : (size_t)cs_rng_below(r, n - i));
            undo[i] = (uint32_t)j;
            __builtin_prefetch(&perm[j], 1);
        }
        for (size_t i = i0; i < i1; i++) {
            size_t j = undo[i];
            uint32_t t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
            out[i] = perm[i];
        }
    }
    for (size_t i = k; i-- > 0;) {
        size_t j = undo[i];
        uint32_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}

void cs_draw_with(cs_rng *r, size_t n, size_t k, uint32_t *out)
{
    if (n > 1 && n <= UINT32_MAX) {
        for (size_t i = 0; i < k; i++)
            out[i] = below32(r, (uint32_t)n);
        return;
    }
    for (size_t i = 0; i < k; i++)
        out[i] = (uint32_t)cs_rng_below(r, n);
}

double cs_quantile_sorted(const double *sorted, size_t n, double q)
{
    if (n == 0)
        return NAN;
    if (q <= 0)
        return sorted[0];
    if (q >= 1)
        return sorted[n - 1];
    double h = (double)(n - 1) * q;
    size_t lo = (size_t)floor(h);
    if (lo + 1 >= n)
        return sorted[n - 1];
    double frac = h - (double)lo;
    return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void cs_stat_compute(const double *values, size_t n, double reference, double *scratch,
                     cs_stat *out)
{
    size_t m = 0;
    double sum = 0, dev = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(values[i]))
            continue;
        scratch[m++] = values[i];
        sum += values[i];
        dev += fabs(values[i] - reference);
    }
    out->count = m;
    if (m == 0) {
        out->mean = out->sd = out->lo = out->hi = out->abs_dev = NAN;
        return;
    }
    double mean = sum / (double)m;
    double ss = 0;
    for (size_t i = 0; i < m; i++)
        ss += (scratch[i] - mean) * (scratch[i] - mean);
    out->mean = mean;
    out->sd = sqrt(ss / (double)m);
    out->abs_dev = isfinite(reference) ? dev / (double)m : NAN;
    qsort(scratch, m, sizeof *scratch, cmp_double);
    out->lo = cs_quantile_sorted(scratch, m, 0.025);
    out->hi = cs_quantile_sorted(scratch, m, 0.975);
}

int cs_cpu_count(void)
{
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    return c < 1 ? 1 : (c > 256 ? 256 : (int)c);
}

typedef struct pf_shared {
    void (*task)(void *ctx, size_t i, int worker);
    void *ctx;
    size_t n_tasks;
    atomic_size_t next;
    const atomic_int *cancel;
} pf_shared;

typedef struct pf_arg {
    pf_shared *sh;
    int worker;
} pf_arg;

static void pf_loop(pf_shared *sh, int worker)
{
    for (;;) {
        if (sh->cancel && atomic_load_explicit(sh->cancel, memory_order_relaxed))
            return;
        size_t i = atomic_fetch_add(&sh->next, 1);
        if (i >= sh->n_tasks)
            return;
        sh->task(sh->ctx, i, worker);
    }
}

static void *pf_thread(void *p)
{
    pf_arg *a = p;
    pf_loop(a->sh, a->worker);
    return NULL;
}

int cs_parallel_for(int threads, size_t n_tasks, void (*task)(void *ctx, size_t i, int worker),
                    void *ctx, const atomic_int *cancel)
{
    if (threads <= 0)
        threads = cs_cpu_count();
    if ((size_t)threads > n_tasks)
        threads = n_tasks > 0 ? (int)n_tasks : 1;
    pf_shared sh = { .task = task, .ctx = ctx, .n_tasks = n_tasks, .cancel = cancel };
    atomic_init(&sh.next, 0);
    if (threads == 1) {
        pf_loop(&sh, 0);
        return 0;
    }
    pthread_t tid[256];
    pf_arg args[256];
    int started = 0, rc = 0;
    /* Helpers must never take SIGINT/SIGWINCH meant for the UI thread. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    for (int t = 1; t < threads; t++) {
        args[started] = (pf_arg){ &sh, t };
        if (pthread_create(&tid[started], NULL, pf_thread, &args[started]) != 0) {
            rc = -1;
            break;
        }
        started++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pf_loop(&sh, 0);
    for (int t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
    return rc;
}
