/* The uniform grid of a vector lens (top-k, group, full): each sample's cell is the tuple of
 * the uniform bins of its coordinates but the last (implied by the others), and the bins are
 * the non-empty cells in lexicographic cell order, each cell's items in canonical order.
 *
 * Cell keys are sparse: only coordinates above the first bin edge are stored (a probability
 * vector has few), and comparing two keys walks both. Sorting the keys of every evaluation
 * under that comparison (a merge sort) was the largest cost of a bootstrap replicate on this
 * lens. Instead the cells of all samples are numbered once in key order (cs_prepared's grid
 * cache, built on first use; the keys packed into 64-bit numbers in the same order and radix
 * sorted when they fit), and any evaluation, a subset or the whole, is put in cell order by a
 * counting pass over the numbers. The permutation is the sort's: both sorts are stable and the
 * counting pass keeps the canonical order inside a cell, so the bins and every number are bit
 * for bit the same (cs_mx_grid_by_cells(0) keeps the merge sort for the tests). */
#include "mx.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Sample q's non-zero cells are coord/cell[off[q]..off[q+1]); up to N*(K-1) keys in all, so
 * the offsets are size_t: 32-bit ones would wrap above 4.29e9. */
typedef struct gridkey {
    size_t *off;
    uint32_t *coord, *cell;
} gridkey;

static void gridkey_free(gridkey *g)
{
    free(g->off);
    free(g->coord);
    free(g->cell);
}

static int cmp_grid(uint32_t a, uint32_t b, const void *vctx)
{
    const gridkey *g = vctx;
    size_t ia = g->off[a], ea = g->off[a + 1], ib = g->off[b], eb = g->off[b + 1];
    for (;; ia++, ib++) {
        if (ia == ea) return ib == eb ? 0 : -1;   /* b has a non-zero cell where a has 0 */
        if (ib == eb) return 1;
        if (g->coord[ia] != g->coord[ib]) return g->coord[ia] < g->coord[ib] ? 1 : -1;
        if (g->cell[ia] != g->cell[ib]) return g->cell[ia] < g->cell[ib] ? -1 : 1;
    }
}

/* The keys of items[0..ni) (edges e, M bins) into g. 0, or -1 out of memory (g freed). */
static int grid_keys(const cs_prepared *p, const uint32_t *items, size_t ni, const double *e,
                     int M, gridkey *g)
{
    size_t kc = p->dim - 1;   /* the last coordinate is implied by the others */
    memset(g, 0, sizeof *g);
    g->off = malloc((ni + 1) * sizeof *g->off);
    if (!g->off) return -1;
    size_t tot = 0;
    for (size_t q = 0; q < ni; q++) {
        g->off[q] = tot;
        for (size_t j = 0; j < kc && M > 1; j++) {
            if (cs_mx_coord(p, items[q], j) > e[1]) tot++;
            else if (p->sorted_desc) break;   /* the rest are smaller still */
        }
    }
    g->off[ni] = tot;
    g->coord = malloc((tot ? tot : 1) * sizeof *g->coord);
    g->cell = malloc((tot ? tot : 1) * sizeof *g->cell);
    if (!g->coord || !g->cell) {
        gridkey_free(g);
        return -1;
    }
    for (size_t q = 0, w = 0; q < ni; q++)
        for (size_t j = 0; j < kc && M > 1; j++) {
            double x = cs_mx_coord(p, items[q], j);
            if (x > e[1]) {
                g->coord[w] = (uint32_t)j;
                g->cell[w] = (uint32_t)cs_ubin_at(x, e, M);
                w++;
            } else if (p->sorted_desc) {
                break;
            }
        }
    return 0;
}

/* The first coordinate's bin of key q (0 when it is not stored: below the first edge). */
static uint32_t first_bin(const gridkey *g, uint32_t q)
{
    return g->off[q] < g->off[q + 1] && g->coord[g->off[q]] == 0 ? g->cell[g->off[q]] : 0;
}

/* The keys as numbers: a key is a tuple of kc cells (a coordinate not stored counts 0, every
 * stored one is 1..M-1), and the order cmp_grid walks is the tuple's lexicographic order, which
 * is the order of the numbers sum cell_j M^(kc-1-j) when M^kc fits in 64 bits (top-k lenses,
 * the full lens up to ~16 classes at 15 bins). keys[q] for q < ni; 0, or -1 when they do not
 * fit. */
static int packed_keys(const gridkey *g, size_t ni, size_t kc, int M, uint64_t *keys)
{
    double span = pow((double)M, (double)kc);
    if (!(span < 1.8e19)) return -1;
    uint64_t *pw = malloc((kc ? kc : 1) * sizeof *pw);
    if (!pw) return -1;
    for (size_t j = kc, w = 1; j-- > 0; w *= (uint64_t)M) pw[j] = w;
    for (size_t q = 0; q < ni; q++) {
        uint64_t k = 0;
        for (size_t i = g->off[q]; i < g->off[q + 1]; i++) k += (uint64_t)g->cell[i] * pw[g->coord[i]];
        keys[q] = k;
    }
    free(pw);
    return 0;
}

/* 0: the reference path of the tests, every grid sorting its own keys under cmp_grid. */
static int grid_by_cells = 1;

void cs_mx_grid_by_cells(int on)
{
    grid_by_cells = on;
}

/* pos[0..ni) (positions into the keys) stably sorted by key: a radix sort of the packed keys
 * when they fit (the same permutation: both sorts are stable; *sorted then holds the keys in
 * that order, malloc'd), else a merge sort under cmp_grid (*sorted NULL). 0 or -1. */
static int sort_by_key(const gridkey *g, size_t ni, size_t kc, int M, uint32_t *pos, uint64_t **sorted)
{
    for (size_t q = 0; q < ni; q++) pos[q] = (uint32_t)q;
    uint64_t *keys = grid_by_cells ? malloc((ni ? ni : 1) * sizeof *keys) : NULL;
    *sorted = NULL;
    if (keys && packed_keys(g, ni, kc, M, keys) == 0) {
        if (cs_sort_u64(keys, pos, ni) != 0) {
            free(keys);
            return -1;
        }
        *sorted = keys;
        return 0;
    }
    free(keys);
    return cs_sort_by(pos, ni, cmp_grid, g);
}

/* Whether sorted position q starts a cell (a key unlike the one before). */
static int cell_starts(const gridkey *g, const uint32_t *pos, const uint64_t *sorted, size_t q)
{
    if (q == 0) return 1;
    return sorted ? sorted[q - 1] != sorted[q] : cmp_grid(pos[q - 1], pos[q], g) != 0;
}

/* Items sorted by key: pos[0..ni) (positions into items, stably sorted), *ng distinct keys,
 * starts[0..ng] (malloc'd) and each group's first bin in c0 (malloc'd). 0 or -1. */
static int sort_cells(const gridkey *g, size_t ni, size_t kc, int M, uint32_t *pos, size_t **starts,
                      uint32_t **c0, size_t *ng)
{
    uint64_t *sorted;
    if (sort_by_key(g, ni, kc, M, pos, &sorted) != 0) return -1;
    size_t n = 0;
    for (size_t q = 0; q < ni; q++) n += (size_t)cell_starts(g, pos, sorted, q);
    *starts = malloc((n + 1) * sizeof **starts);
    *c0 = malloc((n ? n : 1) * sizeof **c0);
    if (!*starts || !*c0) {
        free(*starts);
        free(*c0);
        free(sorted);
        return -1;
    }
    for (size_t q = 0, k = 0; q < ni; q++)
        if (cell_starts(g, pos, sorted, q)) {
            (*starts)[k] = q;
            (*c0)[k++] = first_bin(g, pos[q]);
        }
    (*starts)[n] = ni;
    *ng = n;
    free(sorted);
    return 0;
}

/* A problem's copy in cell order as one grid found it under p->lock (NULLs: none). */
typedef struct grid_copy {
    const uint32_t *place;
    const double *rows;
    const int32_t *hot;
} grid_copy;

/* The bins of the groups order[starts[g]..starts[g+1]), first bins c0[g], into *bins; order
 * holds samples, or places in the copy when it has rows. */
static cs_status grid_bins(const cs_prepared *p, grid_copy cp, const uint32_t *order, const size_t *starts,
                           const uint32_t *c0, size_t ng, const double *e, cs_bin **bins,
                           size_t *nb, cs_error *err)
{
    cs_bin *b = malloc((ng ? ng : 1) * sizeof *b);
    if (!b || cs_mx_vector_groups_packed(p, cp.rows, cp.hot, order, starts, ng, b) != 0) {
        free(b);
        return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory (grid)");
    }
    for (size_t g = 0; g < ng; g++) {
        b[g].lo = e[c0[g]];
        b[g].hi = e[c0[g] + 1];
    }
    *bins = b;
    *nb = ng;
    return CS_OK;
}

/* The grid by sorting the items' own keys (the reference path: cs_mx_grid_by_cells(0)). */
static cs_status grid_sorted(const cs_prepared *p, const uint32_t *items, size_t ni,
                             const double *e, cs_bin **bins, size_t *nb, cs_error *err)
{
    gridkey g;
    uint32_t *pos = malloc((ni ? ni : 1) * sizeof *pos), *order = malloc((ni ? ni : 1) * sizeof *order);
    uint32_t *c0 = NULL;
    size_t *starts = NULL, ng = 0;
    cs_status rc = CS_OK;
    if (!pos || !order || grid_keys(p, items, ni, e, p->s.bins, &g) != 0) {
        free(pos);
        free(order);
        return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory (grid)");
    }
    if (sort_cells(&g, ni, p->dim - 1, p->s.bins, pos, &starts, &c0, &ng) != 0) {
        rc = cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory (grid)");
    } else {
        for (size_t q = 0; q < ni; q++) order[q] = items[pos[q]];
        rc = grid_bins(p, (grid_copy){ NULL, NULL, NULL }, order, starts, c0, ng, e, bins, nb, err);
    }
    gridkey_free(&g);
    free(pos);
    free(order);
    free(starts);
    free(c0);
    return rc;
}

/* The packed copy's limit in bytes of coordinates: a top-k lens (k + 1 coordinates) of a few
 * million samples; the full lens of many classes keeps reading the lens's rows. */
static size_t grid_pack_max = (size_t)64 << 20;

void cs_mx_grid_pack_max(size_t bytes)
{
    grid_pack_max = bytes;
}

/* p's coordinates and targets copied in cell order (a cell's samples in ascending order,
 * as a counting pass over the cell numbers places them), so that a grid's groups read them
 * in ascending places instead of gathering rows from all over the lens's arrays:
 * p->grid_pos/rows/hot, or nothing when too large or out of memory (the groups then read the
 * lens). Under p->lock, with the cell numbers built. */
static void grid_pack(cs_prepared *p)
{
    size_t n = p->n, D = p->dim, nd = n * D, C = p->grid_cells;
    if (nd > grid_pack_max / sizeof(double)) return;
    size_t *first = calloc(C + 1, sizeof *first);
    uint32_t *place = malloc((n ? n : 1) * sizeof *place);
    double *rows = malloc((nd ? nd : 1) * sizeof *rows);
    int32_t *hot = malloc((n ? n : 1) * sizeof *hot);
    if (!first || !place || !rows || !hot) {
        free(first);
        free(place);
        free(rows);
        free(hot);
        return;
    }
    const uint32_t *cell = p->grid_cell;
    for (size_t i = 0; i < n; i++) first[cell[i] + 1]++;
    for (size_t k = 0; k < C; k++) first[k + 1] += first[k];
    for (size_t i = 0; i < n; i++) {
        size_t q = first[cell[i]]++;
        place[i] = (uint32_t)q;
        for (size_t c = 0; c < D; c++) rows[q * D + c] = cs_mx_coord(p, (uint32_t)i, c);
        hot[q] = p->hot[i];
    }
    free(first);
    p->grid_pos = place;
    p->grid_rows = rows;
    p->grid_hot = hot;
}

/* The cell number of every sample (cells numbered in key order) and each cell's first bin,
 * built on first use under p->lock; from the second grid on (a replicate: one whole
 * evaluation makes none), the packed copy too (grid_pack), which *cp receives as it is under
 * the lock (another grid may be making it meanwhile: its fields are read only here). 0, or
 * -1 out of memory (no cell numbers). */
static int grid_cache(cs_prepared *p, const double *e, grid_copy *cp)
{
    int rc = 0;
    pthread_mutex_lock(&p->lock);
    if (p->grid_cell && !p->grid_pack_tried) {
        grid_pack(p);
        p->grid_pack_tried = 1;
    }
    if (!p->grid_cell) {
        rc = -1;
        uint32_t *all = malloc((p->n ? p->n : 1) * sizeof *all);
        uint32_t *pos = malloc((p->n ? p->n : 1) * sizeof *pos);
        uint32_t *cell = malloc((p->n ? p->n : 1) * sizeof *cell), *c0 = NULL;
        size_t *starts = NULL, ng = 0;
        gridkey g;
        if (all && pos && cell) {
            for (size_t i = 0; i < p->n; i++) all[i] = (uint32_t)i;
            if (grid_keys(p, all, p->n, e, p->s.bins, &g) == 0) {
                if (sort_cells(&g, p->n, p->dim - 1, p->s.bins, pos, &starts, &c0, &ng) == 0) {
                    for (size_t k = 0; k < ng; k++)
                        for (size_t q = starts[k]; q < starts[k + 1]; q++) cell[pos[q]] = (uint32_t)k;
                    p->grid_cell = cell;
                    p->grid_c0 = c0;
                    p->grid_cells = ng;
                    cell = NULL;
                    c0 = NULL;
                    rc = 0;
                }
                gridkey_free(&g);
            }
        }
        free(all);
        free(pos);
        free(cell);
        free(c0);
        free(starts);
    }
    cp->place = p->grid_pos;
    cp->rows = p->grid_rows;
    cp->hot = p->grid_hot;
    pthread_mutex_unlock(&p->lock);
    return rc;
}

/* The items' positions q in cell order, each cell's in item order (a stable sort), into
 * order_q, when the subset is much smaller than the grid (an m-out-of-n draw of 30,000 of a
 * grid of 100,000 cells): a radix sort of the ni cell numbers instead of a count over all C
 * cells. The same order as the counting pass. -1 out of memory. */
static int cells_sorted(const uint32_t *cell, const uint32_t *items, size_t ni, uint32_t *order_q)
{
    uint64_t *keys = malloc((ni ? ni : 1) * sizeof *keys);
    if (!keys) return -1;
    for (size_t q = 0; q < ni; q++) {
        if (q + CS_MX_AHEAD < ni) CS_MX_FETCH(&cell[items[q + CS_MX_AHEAD]]);
        keys[q] = cell[items[q]];
        order_q[q] = (uint32_t)q;
    }
    int rc = cs_sort_u64(keys, order_q, ni);
    free(keys);
    return rc;
}

/* The grid of a subset from the cache: a counting pass over the items' cell numbers (stable,
 * so each cell keeps the canonical order), the empty cells left out; the groups read the
 * packed copy when there is one (an item's place in it, in place of the item: a cell's places
 * ascend with its items). A subset far smaller than the grid sorts its cell numbers instead
 * (cells_sorted): the same groups. */
/* grid_counted's groups by cells_sorted: cell by cell, each cell's members in item order. */
static cs_status grid_by_sort(cs_prepared *p, grid_copy cp, const uint32_t *items, size_t ni,
                             const double *e, cs_bin **bins, size_t *nb, cs_error *err)
{
    const uint32_t *cell = p->grid_cell;
    uint32_t *oq = malloc(ni * sizeof *oq), *order = malloc(ni * sizeof *order), *c0 = malloc(ni * sizeof *c0);
    size_t *starts = malloc((ni + 1) * sizeof *starts);
    cs_status rc;
    if (!oq || !order || !c0 || !starts || cells_sorted(cell, items, ni, oq) != 0) {
        rc = cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory (grid)");
    } else {
        size_t ng = 0;
        uint32_t prev = UINT32_MAX;
        for (size_t r = 0; r < ni; r++) {
            uint32_t it = items[oq[r]], k = cell[it];
            if (r == 0 || k != prev) {   /* a new non-empty cell: a bin */
                starts[ng] = r;
                c0[ng++] = p->grid_c0[k];
                prev = k;
            }
            order[r] = cp.place ? cp.place[it] : it;
        }
        starts[ng] = ni;
        rc = grid_bins(p, cp, order, starts, c0, ng, e, bins, nb, err);
    }
    free(oq);
    free(order);
    free(c0);
    free(starts);
    return rc;
}

static cs_status grid_counted(cs_prepared *p, const uint32_t *items, size_t ni, const double *e,
                              cs_bin **bins, size_t *nb, cs_error *err)
{
    grid_copy cp;
    if (grid_cache(p, e, &cp) != 0) return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory (grid)");
    size_t C = p->grid_cells;
    const uint32_t *cell = p->grid_cell;
    if (ni && ni * 4 < C) return grid_by_sort(p, cp, items, ni, e, bins, nb, err);
    size_t *at = calloc(C + 1, sizeof *at), *starts = malloc((C + 1) * sizeof *starts);
    uint32_t *order = malloc((ni ? ni : 1) * sizeof *order), *c0 = malloc((C ? C : 1) * sizeof *c0);
    cs_status rc;
    if (!at || !starts || !order || !c0) {
        rc = cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory (grid)");
    } else {
        for (size_t q = 0; q < ni; q++) {
            if (q + CS_MX_AHEAD < ni) CS_MX_FETCH(&cell[items[q + CS_MX_AHEAD]]);
            at[cell[items[q]] + 1]++;
        }
        size_t ng = 0;
        for (size_t k = 0; k < C; k++) {
            if (at[k + 1]) {   /* a non-empty cell: a bin */
                starts[ng] = at[k];
                c0[ng++] = p->grid_c0[k];
            }
            at[k + 1] += at[k];
        }
        starts[ng] = ni;
        if (cp.place)
            for (size_t q = 0; q < ni; q++) {
                if (q + CS_MX_AHEAD < ni) {
                    CS_MX_FETCH(&cell[items[q + CS_MX_AHEAD]]);
                    CS_MX_FETCH(&cp.place[items[q + CS_MX_AHEAD]]);
                }
                order[at[cell[items[q]]]++] = cp.place[items[q]];
            }
        else
            for (size_t q = 0; q < ni; q++) order[at[cell[items[q]]]++] = items[q];
        rc = grid_bins(p, cp, order, starts, c0, ng, e, bins, nb, err);
    }
    free(at);
    free(starts);
    free(order);
    free(c0);
    return rc;
}

cs_status cs_mx_vector_grid(const cs_prepared *cp, const uint32_t *items, size_t ni,
                            cs_bin **bins, size_t *nb, cs_error *err)
{
    cs_prepared *p = (cs_prepared *)cp;   /* the lazy cache only */
    int M = p->s.bins;
    double *e = malloc((size_t)(M + 1) * sizeof *e);
    if (!e) return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory (grid)");
    cs_mx_edges(e, M);
    cs_status rc = grid_by_cells ? grid_counted(p, items, ni, e, bins, nb, err)
                                 : grid_sorted(p, items, ni, e, bins, nb, err);
    free(e);
    return rc;
}
