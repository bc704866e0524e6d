/* Evaluation plumbing that keeps cs_evaluate proportional to the subset (see mx.h, fast.c
 * section):
 * - scratch buffers are pooled in the prepared object and reused by later evaluations (no
 *   fresh large malloc, hence no page faults, per call);
 * - the canonical (ascending) order of a subset is formed without a comparison sort: a
 *   bitmap over the N samples when there are no repeats (the usual case without
 *   replacement), a counting pass when repeats are many, an LSD radix sort otherwise. All
 *   three give the same sorted sequence, so the choice never changes a number;
 * - the same machinery orders a subset by a precomputed rank (equal-mass bins);
 * - cs_mx_chunks: the fixed two-way split used by the full-data passes. */
#include "mx.h"
#include "calscope/thread.h"

#include <stdlib.h>
#include <string.h>

static int grow32(uint32_t **b, size_t *cap, size_t need)
{
    if (*cap >= need && *b) return 0;
    size_t c = need < 1024 ? 1024 : need;
    uint32_t *q = malloc(c * sizeof *q);
    if (!q) return -1;
    free(*b);
    *b = q;
    *cap = c;
    return 0;
}

static int grow64(uint64_t **b, size_t *cap, size_t need)
{
    if (*cap >= need && *b) return 0;
    size_t c = need < 64 ? 64 : need;
    uint64_t *q = malloc(c * sizeof *q);
    if (!q) return -1;
    free(*b);
    *b = q;
    *cap = c;
    return 0;
}

cs_mx_scratch *cs_mx_scratch_get(cs_prepared *p)
{
    pthread_mutex_lock(&p->lock);
    cs_mx_scratch *s = p->pool;
    if (s) p->pool = s->next;
    pthread_mutex_unlock(&p->lock);
    if (!s) s = calloc(1, sizeof *s);
    if (s) s->next = NULL;
    return s;
}

void cs_mx_scratch_put(cs_prepared *p, cs_mx_scratch *s)
{
    if (!s) return;
    pthread_mutex_lock(&p->lock);
    s->next = p->pool;
    p->pool = s;
    pthread_mutex_unlock(&p->lock);
}

void cs_mx_scratch_free_all(cs_prepared *p)
{
    cs_mx_scratch *s = p->pool;
    while (s) {
        cs_mx_scratch *nx = s->next;
        free(s->items);
        free(s->ord);
        free(s->bits);
        free(s->cnt);
        free(s);
        s = nx;
    }
    p->pool = NULL;
}

/* out[0..ni) = the keys key(j) = map ? map[src[j]] : src[j] (all < N) sorted ascending. */
static int sort_keys(cs_mx_scratch *s, const uint32_t *src, const uint32_t *map, size_t ni,
                     size_t N, uint32_t *out)
{
    size_t W = (N + 63) / 64;
    if (W <= ni + 2048) {
        /* bitmap: exact when there are no repeats, which it detects */
        if (grow64(&s->bits, &s->cap_bits, W)) return -1;
        uint64_t *bits = s->bits;
        memset(bits, 0, W * sizeof *bits);
        int dup = 0;
        for (size_t j = 0; j < ni; j++) {
            uint32_t x = map ? map[src[j]] : src[j];
            uint64_t m = 1ull << (x & 63u), *w = &bits[x >> 6];
            if (*w & m) { dup = 1; break; }
            *w |= m;
        }
        if (!dup) {
            size_t k = 0;
            for (size_t w = 0; w < W; w++) {
                uint64_t b = bits[w];
                while (b) {
                    out[k++] = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(b));
                    b &= b - 1;
                }
            }
            return 0;
        }
        if (ni >= N / 8) {
            /* many repeats (bootstrap): counting pass */
            if (grow32(&s->cnt, &s->cap_cnt, N)) return -1;
            uint32_t *cnt = s->cnt;
            memset(cnt, 0, N * sizeof *cnt);
            for (size_t j = 0; j < ni; j++) cnt[map ? map[src[j]] : src[j]]++;
            cs_sort_expand_counts(cnt, N, out, ni);
            return 0;
        }
    }
    for (size_t j = 0; j < ni; j++) out[j] = map ? map[src[j]] : src[j];
    return cs_sort_u32(out, ni, (uint32_t)N);
}

const uint32_t *cs_mx_canonical(cs_mx_scratch *s, const uint32_t *idx, size_t ni, size_t N)
{
    /* already in canonical order (a caller that evaluates one draw several times sorts it
     * once): used as it is; a random order fails this test within a few items */
    size_t j = 1;
    while (j < ni && idx[j - 1] <= idx[j]) j++;
    if (j >= ni) return idx;
    if (grow32(&s->items, &s->cap_items, ni)) return NULL;
    if (sort_keys(s, idx, NULL, ni, N, s->items)) return NULL;
    return s->items;
}

uint64_t *cs_mx_scratch_bits(cs_mx_scratch *s, size_t words)
{
    if (grow64(&s->bits, &s->cap_bits, words)) return NULL;
    memset(s->bits, 0, words * sizeof *s->bits);
    return s->bits;
}

const uint32_t *cs_mx_identity(cs_mx_scratch *s, size_t n)
{
    if (grow32(&s->items, &s->cap_items, n)) return NULL;
    for (size_t i = 0; i < n; i++) s->items[i] = (uint32_t)i;
    return s->items;
}

uint32_t *cs_mx_ranks_sorted(cs_mx_scratch *s, const uint32_t *items, size_t ni,
                             const uint32_t *rank, size_t N)
{
    if (grow32(&s->ord, &s->cap_ord, ni)) return NULL;
    if (sort_keys(s, items, rank, ni, N, s->ord)) return NULL;
    return s->ord;
}

const uint32_t *cs_mx_by_rank(cs_mx_scratch *s, const uint32_t *items, size_t ni,
                              const uint32_t *order, const uint32_t *rank, size_t N)
{
    if (!items) return order;   /* every sample once: rank order is the order itself */
    uint32_t *r = cs_mx_ranks_sorted(s, items, ni, rank, N);
    if (!r) return NULL;
    for (size_t j = 0; j < ni; j++) r[j] = order[r[j]];
    return r;
}

/* ---- the helper budget of an evaluation ---- */

/* The budget of the evaluation this thread works for: set by cs_evaluate on its thread and
 * handed to every helper it starts, so that a pass inside a helper draws from the same spare
 * threads. NULL outside an evaluation (the passes' own thresholds decide, as for top-k bars). */
static _Thread_local cs_mx_budget *mx_budget;

cs_mx_budget *cs_mx_budget_enter(cs_mx_budget *b, const cs_run *run)
{
    int t = run && run->threads > 0 ? run->threads : cs_cpu_count();
    if (t > CS_THREADS_MAX) t = CS_THREADS_MAX;
    atomic_init(&b->spare, t - 1);
    cs_mx_budget *prev = mx_budget;
    mx_budget = b;
    return prev;
}

void cs_mx_budget_leave(cs_mx_budget *prev)
{
    mx_budget = prev;
}

/* One spare thread taken from b (NULL: no budget, always granted): 1, or 0 when none is left. */
static int budget_take(cs_mx_budget *b)
{
    if (!b) return 1;
    int s = atomic_load(&b->spare);
    while (s > 0)
        if (atomic_compare_exchange_weak(&b->spare, &s, s - 1)) return 1;
    return 0;
}

static void *helper_main(void *arg)
{
    cs_mx_helper *h = arg;
    mx_budget = h->budget;   /* its passes spend the same budget */
    return h->fn(h->arg);
}

int cs_mx_helper_start(cs_mx_helper *h, void *(*fn)(void *), void *arg)
{
    h->fn = fn;
    h->arg = arg;
    h->budget = mx_budget;
    h->running = 0;
    if (!budget_take(h->budget)) return 0;
    if (!cs_helper_start(&h->th, helper_main, h)) {
        if (h->budget) atomic_fetch_add(&h->budget->spare, 1);
        return 0;
    }
    h->running = 1;
    return 1;
}

void cs_mx_helper_join(cs_mx_helper *h)
{
    if (!h->running) return;
    pthread_join(h->th, NULL);
    h->running = 0;
    if (h->budget) atomic_fetch_add(&h->budget->spare, 1);
}

int cs_mx_pair(void *(*fn)(void *), void *a, void *b, int parallel)
{
    cs_mx_helper h;
    int threaded = b && parallel && cs_mx_helper_start(&h, fn, b);
    fn(a);
    if (threaded) cs_mx_helper_join(&h);
    else if (b) fn(b);
    return threaded;
}

typedef struct { void (*fn)(void *, size_t); void *ctx; size_t a, z; } chunk_run;

static void *chunk_thread(void *arg)
{
    chunk_run *r = arg;
    for (size_t c = r->a; c < r->z; c++) r->fn(r->ctx, c);
    return NULL;
}

void cs_mx_chunks(size_t nchunks, int big, void (*fn)(void *ctx, size_t c), void *ctx)
{
    chunk_run r[2] = {{fn, ctx, 0, nchunks}, {fn, ctx, nchunks, nchunks}};
    int split = big && nchunks >= 2;
    if (split) r[0].z = r[1].a = nchunks / 2;
    cs_mx_pair(chunk_thread, &r[0], &r[1], split);
}

typedef struct { cs_prepared *p; uint16_t *ub; const double *e; int M; } ubin_ctx;

static void ubin_chunk(void *vctx, size_t c)
{
    ubin_ctx *x = vctx;
    size_t a = c * CS_MX_CHUNK, z = a + CS_MX_CHUNK < x->p->n ? a + CS_MX_CHUNK : x->p->n;
    for (size_t i = a; i < z; i++) x->ub[i] = (uint16_t)cs_ubin_at(x->p->v[i], x->e, x->M);
}

const uint16_t *cs_mx_ubin_cache(cs_prepared *p)
{
    pthread_mutex_lock(&p->lock);
    if (!p->ubin && !p->ubin_tried && p->v && p->s.bins <= 65536) {
        p->ubin_tried = 1;
        int M = p->s.bins;
        double *e = malloc((size_t)(M + 1) * sizeof *e);
        uint16_t *ub = malloc((p->n ? p->n : 1) * sizeof *ub);
        if (e && ub) {
            cs_mx_edges(e, M);
            ubin_ctx x = {p, ub, e, M};
            cs_mx_chunks((p->n + CS_MX_CHUNK - 1) / CS_MX_CHUNK, p->n >= 4 * CS_MX_CHUNK,
                         ubin_chunk, &x);
            p->ubin = ub;
            ub = NULL;
        }
        free(e);
        free(ub);
    }
    const uint16_t *r = p->ubin;
    pthread_mutex_unlock(&p->lock);
    return r;
}

typedef struct {
    const cs_prepared *p;
    const uint32_t *items;
    const uint16_t *ub;
    size_t ni, csz;
    const double *e;
    int M;
    size_t *cnt, *st;        /* per chunk, M each */
    double *sv;
    const atomic_int *cancel;
    atomic_int stop;
} usum;

static void usum_chunk(void *vctx, size_t c)
{
    usum *x = vctx;
    size_t a = c * x->csz, z = a + x->csz < x->ni ? a + x->csz : x->ni, M = (size_t)x->M;
    size_t *cnt = x->cnt + c * M, *st = x->st + c * M;
    double *sv = x->sv + c * M;
    const double *v = x->p->v;
    const uint8_t *t = x->p->t;
    const uint32_t *items = x->items;
    const uint16_t *ub = x->ub;
    for (size_t q0 = a; q0 < z; q0 += 8192) {
        if (cs_mx_cancelled(x->cancel) || atomic_load_explicit(&x->stop, memory_order_relaxed)) {
            atomic_store(&x->stop, 1);
            return;
        }
        size_t q1 = q0 + 8192 < z ? q0 + 8192 : z;
        if (items && ub) {
            for (size_t q = q0; q < q1; q++) {
                uint32_t i = items[q], b = ub[i];
                double vi = v[i];
                size_t ti = t[i];
                cnt[b]++;
                sv[b] += vi;
                st[b] += ti;
            }
        } else if (!items && !ub && x->M <= 65536) {   /* a bin fits 16 bits */
            /* all samples, bins on the fly: the block's bins first, then the sums. In one
             * loop each sum's load waited for the address of the store before it, known only
             * at the end of the bin's arithmetic (~20 cycles a value: most values share the
             * top bin); with the bins known ahead the loads issue at once. */
            uint16_t bb[8192];
            size_t m = q1 - q0, h = 0;
            for (; h + 2 <= m; h += 2) {
                int b2[2];
                cs_ubin_at2(v + q0 + h, x->e, x->M, b2);
                bb[h] = (uint16_t)b2[0];
                bb[h + 1] = (uint16_t)b2[1];
            }
            if (h < m) bb[h] = (uint16_t)cs_ubin_at(v[q0 + h], x->e, x->M);
            for (size_t q = q0; q < q1; q++) {
                uint32_t b = bb[q - q0];
                cnt[b]++;
                sv[b] += v[q];
                st[b] += t[q];
            }
        } else {
            for (size_t q = q0; q < q1; q++) {
                uint32_t i = items ? items[q] : (uint32_t)q;
                double vi = v[i];
                size_t ti = t[i];
                uint32_t b = ub ? ub[i] : (uint32_t)cs_ubin_at(vi, x->e, x->M);
                cnt[b]++;
                sv[b] += vi;
                st[b] += ti;
            }
        }
    }
}

int cs_mx_uniform_sums(cs_prepared *p, const uint32_t *items, size_t ni, const double *e, int M,
                       size_t *cnt, double *sv, size_t *st, const atomic_int *cancel)
{
    size_t Mz = (size_t)M, nc = (ni + CS_MX_CHUNK - 1) / CS_MX_CHUNK, csz = CS_MX_CHUNK;
    if (nc <= 1 || nc * Mz > ((size_t)1 << 22)) { nc = 1; csz = ni ? ni : 1; }
    usum x = {p, items, items ? cs_mx_ubin_cache(p) : NULL, ni, csz, e, M, cnt, st, sv, cancel, 0};
    size_t *pc = NULL;
    double *ps = NULL;
    if (nc > 1) {
        pc = calloc(2 * nc * Mz, sizeof *pc);
        ps = calloc(nc * Mz, sizeof *ps);
        if (!pc || !ps) { free(pc); free(ps); return -1; }
        x.cnt = pc;
        x.st = pc + nc * Mz;
        x.sv = ps;
    }
    cs_mx_chunks(nc, ni >= 4 * CS_MX_CHUNK, usum_chunk, &x);
    if (nc > 1) {
        for (size_t c = 0; c < nc; c++)
            for (size_t b = 0; b < Mz; b++) {
                cnt[b] += x.cnt[c * Mz + b];
                st[b] += x.st[c * Mz + b];
                sv[b] += x.sv[c * Mz + b];
            }
        free(pc);
        free(ps);
    }
    return atomic_load(&x.stop) ? 1 : 0;
}
