/* calscope engine, metrics module: internals shared by the files of src/engine/metrics only.
 *
 * Design (why it looks like this):
 * - cs_prepare does the per-row work once (selection, lens); cs_evaluate works on "items"
 *   (indices of prepared samples, possibly repeated) and is proportional to the subset.
 * - Order independence: cs_evaluate first puts the items in ascending order (fast.c: bitmap,
 *   counting or radix; nothing at all for idx == NULL), so every sum is formed in one
 *   canonical order, in fixed chunks of that order (CS_MX_CHUNK); the same multiset gives
 *   bit-identical results whatever the thread count.
 * - Caches that only some metrics need (ranks for equal-mass bins, RECE-G weights, per-sample
 *   Brier/NLL) are built lazily under p->lock on first use; once built they are read-only. */
#ifndef CS_METRICS_MX_H
#define CS_METRICS_MX_H

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "calscope/catalogue.h"
#include "calscope/metrics.h"
#include "engine/num/ubin.h"
#include "engine/sort/sort.h"

struct cs_prepared {
    const cs_dataset *d;
    cs_settings s;
    cs_lens_kind kind;     /* effective lens: topk with k == 1 becomes top1 */
    int k_eff;             /* topk: k clamped to the class count */
    int cls;               /* class lens: class index */
    size_t n;              /* prepared (selected) samples */
    uint32_t *rows;        /* dataset row of each sample */

    /* First coordinate of the lensed output / target, for every lens but classwise. */
    double *v;
    uint8_t *t;
    uint16_t *ubin;        /* scalar lenses: uniform bin of v under s.bins (M <= 65536 only:
                              2 bytes a sample keeps the cache small beside the data) */

    /* Vector lenses (topk, group, full): coordinate j < nrow of sample i is
     * obase[(by_row ? rows[i] : i) * ostride + j]; coordinate nrow (if rem) is rem[i]. */
    int vector;
    size_t dim, nrow;
    const double *obase;
    size_t ostride;
    int by_row;
    double *obuf;          /* owned storage behind obase, or NULL */
    int obuf_shared;       /* obuf belongs to someone else (top-k bars) */
    int sorted_desc;       /* coordinates 0..nrow-1 are non-increasing (top-k) */
    double *rem;
    int32_t *hot;          /* index of the target's 1 in 0..dim-1 */

    pthread_mutex_t lock;
    uint32_t *order_v, *rank_v;   /* stable sort of v */
    double *v1;                   /* top-1 confidence / correctness per sample when the lens */
    uint8_t *t1;                  /*   is not top1 (AECE), built lazily */
    uint32_t *order_c, *rank_c;   /* stable sort of the top-1 confidence (AECE) */
    double *vs_c;                 /* top-1 confidence / correctness in that order (AECE of */
    uint8_t *ts_c;                /*   subsets, evaluate.c), built lazily; the lens's own */
    double *vs_v;                 /*   values and targets in their order (a subset's */
    uint8_t *ts_v;                /*   estimators) when they are not those (class:C) */
    double *rece_w;               /* n*M normalised RECE-G weights, or NULL */
    int rece_w_tried;
    double *score;                /* per-sample terms side by side: Brier 2i, clipped p[label]
                                     2i+1 (a drawn sample's two in one cache line) */
    uint32_t *grid_cell;          /* vector lens, uniform grid: each sample's cell number (cells */
    uint32_t *grid_c0;            /*   in key order) and each cell's first-coordinate bin, */
    size_t grid_cells;            /*   built by a subset's first grid (grid.c); */
    uint32_t *grid_pos;           /*   each sample's place in cell order, and its coordinates */
    double *grid_rows;            /*   (dim a sample) and target coordinate in that order */
    int32_t *grid_hot;            /*   (NULL when too large to copy, or before a second grid) */
    int grid_pack_tried;
    void *cw_cell;                /* class-wise sums: each sample's K cells c*M+b under the */
    int cw_cell_wide;             /*   s.bins uniform bins, 4 bytes each when wide (K*M > */
    int cw_cell_tried;            /*   65536), else 2; made once subsets have needed them */
    size_t cw_binned;             /*   (classwise.c); items subsets binned before them */
    double smece_hint;            /* the whole problem's automatic smooth-ECE bandwidth, the
                                   * start of every draw's search (0: not known yet, -1: none) */
    atomic_size_t smece_binned;   /* draws whose smooth ECE was binned (cs_mx_smece_binned) */
    double full_value[CS_METRIC_COUNT];   /* the metrics of full_metrics on all samples, as the */
    unsigned full_metrics;                /*   last full cs_evaluate made them (under lock) */

    /* Speed (fast.c): rows/v/t may borrow the dataset's arrays instead of copying them;
     * ubin is built lazily (cs_mx_ubin_cache) for subsets, a full evaluation bins on the fly;
     * rece_d caches w_ji (acc_j - c_j) per sample; pool holds reusable evaluation scratch. */
    int rows_borrowed;            /* rows == d->sample_rows (not owned) */
    int vt_borrowed;              /* v == d->conf, t == d->correct (not owned) */
    int ubin_tried;
    double *rece_d;
    int rece_d_tried;
    struct cs_mx_scratch *pool;

    /* RECE-M (rece_m.c): each sample's mixture and weight row, built on first use; NULL
     * before, and always for files without id/tta. */
    struct cs_mx_rm *rece_m;
};

/* ---- fast.c: evaluation scratch, canonical item order, chunked sums ----
 * Canonical order: the items of a subset sorted ascending; an items pointer of NULL means
 * all samples 0..n-1 (a full evaluation, nothing materialised). Sums over items are formed
 * in fixed chunks of CS_MX_CHUNK consecutive canonical positions (sequential inside a
 * chunk, chunks added in order), so they depend on the multiset only, never on threads. */
#define CS_MX_CHUNK 65536u

/* How far ahead a pass over a subset's items fetches what later items read. A draw's items
 * ascend but are scattered (an m-out-of-n draw of 50,000 of 1,000,000 samples reads one
 * cache line in twenty), so each read would otherwise wait for memory; the hardware's
 * prefetcher cannot guess the next address. The fetch changes no value. */
#define CS_MX_AHEAD 16
#define CS_MX_FETCH(addr) __builtin_prefetch(addr)
typedef struct cs_mx_scratch {
    struct cs_mx_scratch *next;
    uint32_t *items; size_t cap_items;   /* canonical items / identity */
    uint32_t *ord; size_t cap_ord;       /* rank order (AECE) */
    uint64_t *bits; size_t cap_bits;     /* bitmap words */
    uint32_t *cnt; size_t cap_cnt;       /* counting sort */
} cs_mx_scratch;
cs_mx_scratch *cs_mx_scratch_get(cs_prepared *p);   /* NULL on ENOMEM */
void cs_mx_scratch_put(cs_prepared *p, cs_mx_scratch *s);
void cs_mx_scratch_free_all(cs_prepared *p);
/* idx[0..ni) (values < N) in ascending order: idx itself when it is already sorted, else a
 * sorted copy in s->items; NULL on ENOMEM. */
const uint32_t *cs_mx_canonical(cs_mx_scratch *s, const uint32_t *idx, size_t ni, size_t N);
/* A bitmap of `words` zeroed words in s->bits; NULL on ENOMEM. */
uint64_t *cs_mx_scratch_bits(cs_mx_scratch *s, size_t words);
/* 0..n-1 in s->items (for the paths that need an explicit array); NULL on ENOMEM. */
const uint32_t *cs_mx_identity(cs_mx_scratch *s, size_t n);
/* Sample indices of items ordered by rank[] (rank: a permutation of 0..N-1 whose inverse is
 * order[]): order[sorted ranks]. items NULL: order itself. NULL on ENOMEM. */
const uint32_t *cs_mx_by_rank(cs_mx_scratch *s, const uint32_t *items, size_t ni,
                              const uint32_t *order, const uint32_t *rank, size_t N);
/* The ranks of items (rank[items[j]], a subset: items not NULL) in ascending order, in s->ord
 * (the caller may overwrite them); NULL on ENOMEM. */
uint32_t *cs_mx_ranks_sorted(cs_mx_scratch *s, const uint32_t *items, size_t ni,
                             const uint32_t *rank, size_t N);
/* Lazily built uniform bin of every sample (scalar lenses but classwise); NULL on ENOMEM. */
const uint16_t *cs_mx_ubin_cache(cs_prepared *p);
/* The helper budget of one evaluation (its caller's cs_run): cs_evaluate enters it on its
 * thread (cs_mx_budget_enter: spare = threads - 1; run NULL or threads <= 0: the core count)
 * and leaves it before it returns (cs_mx_budget_leave(prev), prev what enter returned). Every
 * helper a metric pass starts takes one spare thread from it (cs_mx_helper_start, cs_mx_pair,
 * cs_mx_chunks) and gives it back when joined, and runs its own passes under the same budget:
 * at most `threads` threads work for one evaluation at any time, and a budget of 1 starts none.
 * Outside an evaluation (no budget entered on the thread) helpers are started as the passes'
 * size thresholds say. The numbers never depend on it. */
typedef struct cs_mx_budget { atomic_int spare; } cs_mx_budget;
cs_mx_budget *cs_mx_budget_enter(cs_mx_budget *b, const cs_run *run);
void cs_mx_budget_leave(cs_mx_budget *prev);
/* A helper of the current budget: fn(arg) on a new thread (cs_helper_start) when a spare thread
 * is left: 1 (join it with cs_mx_helper_join, which gives the thread back), else 0 (the caller
 * runs fn(arg) itself). h is the caller's until joined. Any thread. */
typedef struct cs_mx_helper {
    pthread_t th;
    void *(*fn)(void *);
    void *arg;
    cs_mx_budget *budget;
    int running;
} cs_mx_helper;
int cs_mx_helper_start(cs_mx_helper *h, void *(*fn)(void *), void *arg);
void cs_mx_helper_join(cs_mx_helper *h);
/* cs_run_pair (engine/pair.h) under the budget: fn(b) on a helper when parallel and a spare
 * thread is left, else after fn(a) on the calling thread. Returns 1 when a helper ran it. */
int cs_mx_pair(void *(*fn)(void *), void *a, void *b, int parallel);
/* Runs fn(ctx, c) for the chunks c = 0..nchunks-1, on two threads (fixed halves) when
 * `big` and the budget has a spare thread; every chunk writes only its own partial results. */
void cs_mx_chunks(size_t nchunks, int big, void (*fn)(void *ctx, size_t c), void *ctx);
/* Uniform-bin sums of a scalar lens (not classwise) over items (NULL = all, bins computed on
 * the fly): cnt/st/sv (M each, zeroed by the caller) get the count, the sum of t and the
 * chunked sum of v per bin. Returns 0, -1 (ENOMEM) or 1 (cancelled). */
int cs_mx_uniform_sums(cs_prepared *p, const uint32_t *items, size_t ni, const double *e, int M,
                       size_t *cnt, double *sv, size_t *st, const atomic_int *cancel);

/* ---- binning.c ---- */
void cs_mx_edges(double *e, int M);
/* The bin of a value: cs_ubin_at (engine/num/ubin.h), with the edges of cs_mx_edges. */
/* First index of group g when N items are split into M groups (numpy array_split). */
size_t cs_mx_split_start(size_t N, size_t M, size_t g);

static inline int cs_mx_cancelled(const atomic_int *cancel)
{
    return cancel && atomic_load_explicit(cancel, memory_order_relaxed);
}

/* ---- gap.c: bins -> numbers ---- */
typedef struct cs_mx_agg { double ece, ace, mce; } cs_mx_agg;
double cs_mx_scalar_gap(const cs_settings *s, double conf, double acc);
/* ece/ace/mce over the non-empty bins (l2: ece = sqrt of the weighted mean square). */
cs_mx_agg cs_mx_aggregate(const cs_settings *s, const cs_bin *b, size_t nb, size_t N);
/* Scalar groups: order[starts[g]..starts[g+1]) are the sample indices of bin g (order NULL:
 * the indices themselves, for v and t already in value order); fills count, lo/hi (min/max
 * value), conf, acc, gap. Empty groups get NAN conf/acc/gap. */
void cs_mx_scalar_groups(const cs_settings *s, const double *v, const uint8_t *t,
                         const uint32_t *order, const size_t *starts, size_t ng, cs_bin *out);
/* Vector groups of a prepared vector lens (same layout). Returns 0 or -1 (ENOMEM). */
int cs_mx_vector_groups(const cs_prepared *p, const uint32_t *order, const size_t *starts,
                        size_t ng, cs_bin *out);
/* The same from packed rows: member j of a group is row order[j] of packed (dim values each:
 * the lens's coordinates, cs_mx_coord's, in order), its target's coordinate packed_hot[order[j]];
 * the same sums as cs_mx_vector_groups over the samples those rows were copied from. */
int cs_mx_vector_groups_packed(const cs_prepared *p, const double *packed, const int32_t *packed_hot,
                               const uint32_t *order, const size_t *starts, size_t ng, cs_bin *out);
static inline double cs_mx_coord(const cs_prepared *p, uint32_t i, size_t j)
{
    if (j < p->nrow) return p->obase[(size_t)(p->by_row ? p->rows[i] : i) * p->ostride + j];
    return p->rem[i];
}

/* ---- grid.c ---- */
/* The uniform grid of a vector lens over items (canonical order): the non-empty cells in
 * lexicographic cell order, each a bin (*bins malloc'd, *nb of them). A subset is put in cell
 * order by counting against the samples' cell numbers (built on first use under p's lock),
 * the whole problem by sorting its keys: the same bins either way. Any thread. */
cs_status cs_mx_vector_grid(const cs_prepared *p, const uint32_t *items, size_t ni,
                            cs_bin **bins, size_t *nb, cs_error *err);
/* Tests: 0 makes every grid sort its own keys (the path before the cell numbers), 1 (the
 * default) counts. Not thread-safe: call before any evaluation. */
void cs_mx_grid_by_cells(int on);
/* The largest packed copy of a problem's coordinates in cell order (grid.c: grid_pack), in
 * bytes; 64 MiB by default. Tests lower it to 0 to reach the counting path without the copy.
 * Not thread-safe: call before any evaluation. */
void cs_mx_grid_pack_max(size_t bytes);

/* ---- kdtree.c ---- */
/* Splits the items (sample indices, canonical order) of a dim-dimensional problem whose
 * coordinate j of sample i is get(ctx, i, j). On success *order_out (ni) / *starts_out
 * (nleaves+1) are malloc'd, leaves in pre-order (low side first). Returns 0 or -1. */
typedef double (*cs_mx_get)(const void *ctx, uint32_t i, size_t j);
int cs_mx_kdtree(const uint32_t *items, size_t ni, size_t dim, cs_mx_get get, const void *ctx,
                 double gamma, uint32_t **order_out, size_t **starts_out, size_t *nleaves);

/* ---- evaluate.c ---- */
/* ECE/ACE/MCE and the bin table of the prepared lens over items (sorted ascending). */
cs_status cs_mx_binned(const cs_prepared *p, const uint32_t *items, size_t ni,
                       const atomic_int *cancel, cs_result *out, cs_error *err);
/* Lazy caches (thread-safe). Return NULL on ENOMEM. */
const uint32_t *cs_mx_order_v(cs_prepared *p);
const uint32_t *cs_mx_rank_v(cs_prepared *p);

/* ---- rece_g.c ---- */
cs_status cs_mx_rece_g(const cs_prepared *p, const uint32_t *items, size_t ni,
                       const atomic_int *cancel, double *out, cs_error *err);
/* RECE-G and, per uniform bin, A~_i/W_i -> curve_acc[i], C~_i/W_i -> curve_conf[i] (M each,
 * NAN where W_i = 0). Scalar lenses except classwise (CS_EUSAGE otherwise). */
cs_status cs_mx_rece_curve(const cs_prepared *p, const uint32_t *items, size_t ni,
                           const atomic_int *cancel, double *out, double *curve_acc,
                           double *curve_conf, cs_error *err);
/* The cached per-sample RECE-G rows d_j = w_j (acc_j - c_j) of a scalar lens (not classwise),
 * *stride doubles each (M rounded up to a multiple of 8, zero padded), built on first use;
 * NULL when too large to cache, not a scalar lens, or ENOMEM -- and whenever the box path
 * can start at or below CS_MX_CHUNK items (the default), since a caller that sums rows for
 * such a subset would take another path than cs_mx_rece_g. Summing the rows of the items
 * bin by bin in canonical order (from 0.0) and then sum |acc_b| / ni is RECE-G for ni <
 * 200000 (cs_mx_rece_g splits larger inputs in two fixed halves). */
const double *cs_mx_rece_rows(cs_prepared *p, size_t *stride);
/* Phi(z) for z <= 0, 1 - Phi(z) for z > 0 (table + Taylor; exposed for its unit test). */
double cs_mx_normal_tail(double z);
/* Mass of Normal(c, sigma) on each of the M uniform bins, normalised to sum 1. */
void cs_mx_gauss_weights(double c, double sigma, const double *e, int M, double *w);

/* Sets the smallest item count for which RECE-G takes the box path (rece_g_box.c; default
 * 2048). Tests move it to compare both paths on the same data (0 = always, SIZE_MAX = never).
 * Not thread-safe: call before any evaluation. */
void cs_mx_rece_box_min(size_t items);

/* ---- rece_g_box.c: RECE-G from per-box moments (see the comment at the top there) ----
 * A plan: box q = [q/B, (q+1)/B) with centre tq[q] (q = (int)(v * B), B - 1 for v = 1); a
 * value v in it is tq[q] + s/twoB with s = (v - tq[q]) * twoB, and
 * w_b(v) = sum_{p<P1} coef[(q*M + b)*P1 + p] s^p within 1e-17. The moments G (B x P1) of a
 * problem are G[q*P1 + p] = sum over its values in box q of f s^p (rece_g.c: box_add). */
typedef struct cs_mx_rgbox {
    int B, P1, M;
    double twoB;
    const double *tq;     /* B box centres (read-only) */
    const double *coef;   /* B x M x P1 (read-only) */
    struct shared_coef *shared;   /* one reference to the block holding both */
} cs_mx_rgbox;
/* Makes the plan for (sigma, M) when the truncation bound holds with a table cheaper than
 * ni per-sample weights: returns 1 (free it with cs_mx_rgbox_free), 0 (no plan: keep the
 * per-sample path; nothing to free) or -1 (ENOMEM). Any thread; the plan is read-only. */
int cs_mx_rgbox_init(cs_mx_rgbox *x, double sigma, int M, size_t ni);
/* Drops x's reference to the table (the last one frees it); any thread. */
void cs_mx_rgbox_free(cs_mx_rgbox *x);
/* D_b = sum over boxes and orders of coef * G (into D, M doubles, the caller's); returns
 * sum_b |D_b|. The same G gives the same bits (a fixed order of additions). Any thread. */
double cs_mx_rgbox_gap(const cs_mx_rgbox *x, const double *G, double *D);

/* ---- rece_m.c ---- */
/* Sets the floor of the weight-row cache (default 48 MiB): tests lower it to reach the
 * uncached path with few samples, since M is bounded by CS_BINS_MAX. Not thread-safe: call
 * before any prepared problem is made. */
void cs_mx_rece_m_cache_limit(double bytes);
typedef struct cs_mx_rm cs_mx_rm;
/* RECE-M of the items (canonical order; NULL = all) into *out: NAN (and CS_OK) when the file
 * has no id/tta columns. The per-sample state is built on the first call (CS_EINPUT when an
 * id has no tta 0 row or several; CS_ECANCELLED / CS_ENOMEM leave nothing built). */
cs_status cs_mx_rece_m(const cs_prepared *p, const uint32_t *items, size_t ni,
                       const atomic_int *cancel, double *out, cs_error *err);
void cs_mx_rm_free(cs_mx_rm *rm);

/* ---- classwise.c ----
 * cs_mx_classwise_sums: the uniform class-wise sums of the items (NULL: all samples in order)
 * under the M bins with edges e (cs_mx_edges): for class c and bin b, at c*M+b, cnt[] += the
 * values' count, pos[] += those of the label's class, sv[] += their sum under the chunk rule
 * (each chunk of CS_MX_CHUNK items summed in item order from 0, the chunks' sums added to sv
 * in order: cs_mx_cw_add_chunk), so that rows summed in separate chunks by separate threads
 * give the same bits. cnt, pos, sv: K*M, the caller's (zeroed). Returns 0, 1 when
 * cancel was raised (sums partial), -1 out of memory. Any thread (reads p only). */
int cs_mx_classwise_sums(const cs_prepared *p, const uint32_t *items, size_t ni, const double *e,
                         size_t M, const atomic_int *cancel, size_t *cnt, size_t *pos, double *sv);
/* cs_mx_cw_rows: the same sums over nr consecutive rows g (row-major, K values each) with
 * labels y, in row order, added to cnt/pos/sv (no chunks: the caller keeps them, for sums
 * made as rows arrive). *skip carries the pass's state from one call to the next (0 at the start; it
 * changes the speed, never the sums); ix is scratch of cs_mx_cw_scratch(K) words. Any thread
 * (only the caller's arrays are written). */
size_t cs_mx_cw_scratch(size_t K);
/* Tests: 0 makes every subset's class-wise pass bin its items itself (the path before the
 * cells of every sample), 1 (the default) reads the cells. Not thread-safe: call before any
 * evaluation. */
void cs_mx_cw_by_cells(int on);
/* sv[i] += chunk[i], i < n: one chunk's sums into the total, in chunk order. */
void cs_mx_cw_add_chunk(double *sv, const double *chunk, size_t n);
void cs_mx_cw_rows(const double *g, const int32_t *y, size_t nr, size_t K, const double *e,
                   size_t M, int *skip, uint32_t *ix, size_t *cnt, size_t *pos, double *sv);

/* cs_mx_cw_values (evaluate.c): the class-wise ECE, ACE and MCE (summed over the classes:
 * the caller divides by K) and, when bins is not NULL, the pooled bin table (malloc'd into
 * *bins, M entries) from the uniform class-wise sums cnt/pos/sv (K * M, as
 * cs_mx_classwise_sums leaves them) of ni items: the one place those sums become values.
 * Returns CS_OK or CS_ENOMEM. Any thread. */
cs_status cs_mx_cw_values(const cs_settings *s, size_t K, size_t M, const size_t *cnt,
                          const size_t *pos, const double *sv, size_t ni, cs_mx_agg *agg,
                          cs_bin **bins, size_t *nb, cs_error *err);

/* ---- scoring.c ----
 * The Brier term and the clipped probability of the label, q = max(g_y, 1e-15), of the row g
 * of K values with label y: sum_c (g_c - y_c)^2 in class order, without a per-class branch
 * (g_c - 0 == g_c). The one expression of both (scoring.c's passes, sums made row by row). The NLL sums
 * ln of products of CS_MX_NLL_GROUP consecutive q (one log per group; it divides
 * CS_MX_CHUNK, so groups never straddle chunks). */
#define CS_MX_NLL_GROUP 16
static inline void cs_mx_score_terms(const double *g, int32_t y, size_t K, double *b, double *q)
{
    double sum = 0.0, gy = g[y] - 1.0;
    size_t c = 0;
    for (; c < (size_t)y; c++) sum += g[c] * g[c];
    sum += gy * gy;
    for (c++; c < K; c++) sum += g[c] * g[c];
    *b = sum;
    *q = g[y] > 1e-15 ? g[y] : 1e-15;
}

/* ---- smece.c, estimators.c: on the samples in value order, without copies ----
 * The samples v[order[j]], t[order[j]], j = 0..n-1, ascending in v (a stable sort's order).
 * cs_mx_smece: smooth ECE at sigma > 0, or at the automatic bandwidth for sigma 0 (its
 * *sigma_out, may be NULL; the search started near hint, as cs_smece_auto_near); work is n doubles then n bytes of scratch (double-aligned, as
 * malloc gives). NAN when n == 0 or out of memory. The same numbers as cs_smece_at /
 * cs_smece_auto on copies f, y in that order. cs_mx_l2ce / cs_mx_ece_sweep: cs_l2ce and
 * cs_ece_sweep with the targets as bytes (0/1) instead of doubles, the same numbers. */
double cs_mx_smece(const double *v, const uint8_t *t, const uint32_t *order, size_t n, double sigma,
                   double hint, void *work, double *sigma_out);
/* cs_mx_smece_sorted: the same on samples already in work (n values f ascending, then n
 * targets 0/1 as bytes: what cs_mx_smece copies there first), so that a caller which has
 * them in value order for other estimators does not gather them again. Writes work only
 * where two values are equal (it merges them in place): before the first write it calls
 * before_write(ctx) (NULL: none), so that another thread may read work until then; without
 * equal values work is left as it is and before_write is not called. */
double cs_mx_smece_sorted(void *work, size_t n, double sigma, double hint, double *sigma_out,
                          void (*before_write)(void *ctx), void *ctx);
/* cs_mx_smece_binned: a bootstrap replicate's smooth ECE at the fixed bandwidth sigma on n
 * samples f ascending, y 0/1 (the block cs_mx_smece_sorted takes; only read), from their
 * weights linearly binned onto ceil(per_sigma / sigma) cells of [0, 1] (smece.c gives the
 * method and its error bound). Returns 1 and *out (NAN when out of memory), or 0 when it does
 * not apply (a value outside [0, 1], sigma outside the boxes' range): the exact path then.
 * Any thread. */
int cs_mx_smece_binned(const double *f, const uint8_t *y, size_t n, double sigma,
                       size_t per_sigma, double *out);
/* Tests and measurements only (not thread-safe, set before the work): 0 makes every replicate
 * take the exact smooth ECE whatever its size, 1 (the default) bins from CS_SMECE_BINNED_MIN. */
void cs_mx_smece_bin_replicates(int on);
/* cs_mx_smece_curve: cs_smece_curve on those samples, without copying them (one array of
 * pairs, 16 bytes a sample, at a time). */
int cs_mx_smece_curve(const double *v, const uint8_t *t, const uint32_t *order, size_t n, double sigma,
                      size_t points, double *mu, double *density);
void cs_mx_l2ce(const double *f, const uint8_t *y, size_t n, int M, double *plugin, double *debiased);
double cs_mx_ece_sweep(const double *f, const uint8_t *y, size_t n, int mass, double p, int *bins_out);

/* ---- scoring.c ---- */
/* Brier and NLL of the items (NULL: all samples) into *brier / *nll (as want asks). split: a
 * large input's chunks may run on a second thread (0 from a thread that already runs beside
 * another: the same sums either way). Any thread; builds p's per-sample cache under its lock
 * for a subset. */
cs_status cs_mx_scores(const cs_prepared *p, const uint32_t *items, size_t ni, unsigned want,
                       int split, double *brier, double *nll, cs_error *err);

/* ---- lens.c ---- */
cs_status cs_mx_parse_groups(const cs_dataset *d, const char *spec, int32_t *group_of,
                             size_t *ngroups, cs_error *err);
void cs_mx_prepared_init(cs_prepared *p);
/* Sorts each selected row descending into out (n x kk, row stride kk) and fills hot with
 * the label's position (ties: lower class index first) or kk when not in the first kk. Large
 * inputs (n·K >= 1,000,000) run in two fixed halves on two threads under the budget
 * (cs_mx_pair): the same buffer whatever the machine. */
void cs_mx_sort_rows(const cs_dataset *d, const uint32_t *rows, size_t n, size_t kk,
                     double *out, int32_t *pos);

#endif
