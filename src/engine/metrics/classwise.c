/* The uniform class-wise sums (the class-wise ECE and the classwise lens's uniform bins,
 * evaluate.c): per class and bin, the count, the label's hits and the sum of the values, in
 * one pass over the probability rows (10^7 values on the 1M x 10 bench file). See
 * cs_mx_classwise_sums in mx.h. The pass reads its rows either through a prepared problem's
 * samples (rows[items[j]], or rows[j]) or as consecutive rows of a block (cs_mx_cw_rows, for
 * sums made as rows arrive): the same code, so the same sums. */
#include "mx.h"

#include <stdlib.h>
#include <string.h>

/* The bins of rows j0..j1-1 of the items (NULL: all samples in order) into ix, as c*M+b for
 * class c, bin b, two classes at a time (cs_ubin_at2: no branch). skip (a constant at each
 * call): a pair of values both at or below e_1 is put in bin 0 without the arithmetic, a
 * branch that pays where nearly every pair is (1000 classes: 0.104 s instead of 0.133 on
 * 50,000 rows) and costs twice the pass where the pairs are mixed (10 classes: a mispredicted
 * branch a row or two). Either way the same bins. *low, *seen: of the pairs looked at (all
 * with skip, the first rows' ~32 without), how many were such a pair. */
/* Row r of item j: rows[items[j]] (items NULL: rows[j]), or j itself when rows is NULL (the
 * consecutive rows of a block). */
#define CW_ROW(rows, items, j) \
    ((rows) ? (size_t)(rows)[(items) ? (items)[j] : (uint32_t)(j)] : (size_t)(j))

static inline __attribute__((always_inline)) void
cw_bins(const double *prob, size_t K, const uint32_t *rows, const uint32_t *items, size_t j0,
        size_t j1, const double *e, size_t M, int skip, uint32_t *ix, size_t *low, size_t *seen)
{
    size_t lo = 0, half = K / 2, look = half ? (32 + half - 1) / half : 0;
    double e1 = e[1];
    for (size_t j = j0; j < j1; j++) {
        const double *g = prob + CW_ROW(rows, items, j) * K;
        uint32_t *o = ix + (j - j0) * K;
        size_t c = 0, at = 0;
        int count = !skip && j - j0 < look;
        for (; c + 2 <= K; c += 2, at += 2 * M) {
            int b[2];
            if (skip && !(g[c] > e1) && !(g[c + 1] > e1)) {
                b[0] = b[1] = 0;
                lo++;
            } else {
                cs_ubin_at2(g + c, e, (int)M, b);
            }
            o[c] = (uint32_t)(at + (size_t)b[0]);
            o[c + 1] = (uint32_t)(at + M + (size_t)b[1]);
        }
        if (c < K) o[c] = (uint32_t)(at + (size_t)cs_ubin_at(g[c], e, (int)M));
        if (count)
            for (size_t q = 0; q + 1 < K; q += 2) lo += o[q] == q * M && o[q + 1] == (q + 1) * M;
    }
    *low = lo;
    *seen = skip ? (j1 - j0) * half : (j1 - j0 < look ? j1 - j0 : look) * half;
}

/* The uniform class-wise sums of the same rows from their bins ix: cnt counts the values, pos
 * those of the label's class, sv sums them, row by row, so each (class, bin) sum takes its
 * values in item order as it always did. The bins are known before the sums (cw_bins): in
 * one pass each sum's load waited for the address of the stores before it, known only at the
 * end of their bin arithmetic (and the label's count at the end of a look-up of its own). */
static inline __attribute__((always_inline)) void
cw_sums(const double *prob, const int32_t *label, size_t K, const uint32_t *rows,
        const uint32_t *items, size_t j0, size_t j1, const uint32_t *ix, size_t *cnt,
        size_t *pos, double *sv)
{
    for (size_t j = j0; j < j1; j++) {
        size_t r = CW_ROW(rows, items, j);
        const double *g = prob + r * K;
        const uint32_t *o = ix + (j - j0) * K;
        for (size_t c = 0; c < K; c++) {
            cnt[o[c]]++;
            sv[o[c]] += g[c];
        }
        pos[o[label[r]]]++;
    }
}

/* The bins of one block (with the skip the last block's pairs chose: on while 15/16 of the
 * pairs looked at are both in bin 0). Returns whether the next block skips. Three
 * specialisations (a sample subset, all samples, consecutive rows), so the tests on items and
 * rows fold away in each. */
static int cw_block_bins(const double *prob, size_t K, const uint32_t *rows, const uint32_t *items,
                         size_t j0, size_t j1, const double *e, size_t M, int skip, uint32_t *ix)
{
    size_t low, seen;
    if (!rows) {
        if (skip) cw_bins(prob, K, NULL, NULL, j0, j1, e, M, 1, ix, &low, &seen);
        else cw_bins(prob, K, NULL, NULL, j0, j1, e, M, 0, ix, &low, &seen);
    } else if (items) {
        if (skip) cw_bins(prob, K, rows, items, j0, j1, e, M, 1, ix, &low, &seen);
        else cw_bins(prob, K, rows, items, j0, j1, e, M, 0, ix, &low, &seen);
    } else {
        if (skip) cw_bins(prob, K, rows, NULL, j0, j1, e, M, 1, ix, &low, &seen);
        else cw_bins(prob, K, rows, NULL, j0, j1, e, M, 0, ix, &low, &seen);
    }
    return seen && low >= seen - seen / 16;
}

/* One block: its bins, then its sums. Returns whether the next block skips. */
static int cw_block(const double *prob, const int32_t *label, size_t K, const uint32_t *rows,
                    const uint32_t *items, size_t j0, size_t j1, const double *e, size_t M,
                    int skip, uint32_t *ix, size_t *cnt, size_t *pos, double *sv)
{
    skip = cw_block_bins(prob, K, rows, items, j0, j1, e, M, skip, ix);
    if (!rows) cw_sums(prob, label, K, NULL, NULL, j0, j1, ix, cnt, pos, sv);
    else if (items) cw_sums(prob, label, K, rows, items, j0, j1, ix, cnt, pos, sv);
    else cw_sums(prob, label, K, rows, NULL, j0, j1, ix, cnt, pos, sv);
    return skip;
}

/* Rows of a block: about 4096 values (K * M < 2^32: at most 1000 bins, and K is a class count). */
static size_t cw_block_rows(size_t K)
{
    return K < 4096 ? 4096 / K : 1;
}

size_t cs_mx_cw_scratch(size_t K)
{
    return cw_block_rows(K) * K;
}

void cs_mx_cw_rows(const double *g, const int32_t *y, size_t nr, size_t K, const double *e,
                   size_t M, int *skip, uint32_t *ix, size_t *cnt, size_t *pos, double *sv)
{
    size_t rows = cw_block_rows(K);
    for (size_t j0 = 0; j0 < nr; j0 += rows) {
        size_t j1 = j0 + rows < nr ? j0 + rows : nr;
        *skip = cw_block(g, y, K, NULL, NULL, j0, j1, e, M, *skip, ix, cnt, pos, sv);
    }
}

void cs_mx_cw_add_chunk(double *sv, const double *chunk, size_t n)
{
    for (size_t i = 0; i < n; i++) sv[i] += chunk[i];
}

/* ---- a subset's sums from every sample's cells, made once per prepared problem ----
 * A bootstrap replicate of n samples binned its n*K values again with arithmetic: the
 * largest part of the pass. The cells of every sample (cw_bins' own, the same arithmetic
 * made once for all samples) are kept in p->cw_cell, and a subset's pass gathers its items'
 * cells instead (cw_sums_cells: cw_sums' operations in the same order, so the same sums). */

/* 0: subsets always bin their items (the tests' reference path); 1 (the default) uses cells. */
static int cw_by_cells = 1;

void cs_mx_cw_by_cells(int on)
{
    cw_by_cells = on;
}

static inline __attribute__((always_inline)) size_t cw_cell_at(const void *cells, int wide, size_t at)
{
    return wide ? ((const uint32_t *)cells)[at] : ((const uint16_t *)cells)[at];
}

static inline __attribute__((always_inline)) void
cw_sums_cells(const double *prob, const int32_t *label, size_t K, const uint32_t *rows,
              const uint32_t *items, size_t j0, size_t j1, const void *cells, int wide,
              size_t *cnt, size_t *pos, double *sv)
{
    for (size_t j = j0; j < j1; j++) {
        size_t i = items[j], r = rows[i], at = i * K;
        const double *g = prob + r * K;
        for (size_t c = 0; c < K; c++) {
            size_t o = cw_cell_at(cells, wide, at + c);
            cnt[o]++;
            sv[o] += g[c];
        }
        pos[cw_cell_at(cells, wide, at + (size_t)label[r])]++;
    }
}

/* Items j0..j1-1's sums from p's cells; two specialisations (2- and 4-byte cells). */
static void cw_block_cells(const cs_prepared *p, const uint32_t *items, size_t j0, size_t j1,
                           const void *cells, int wide, size_t *cnt, size_t *pos, double *sv)
{
    const cs_dataset *d = p->d;
    if (wide)
        cw_sums_cells(d->prob, d->label, d->k, p->rows, items, j0, j1, cells, 1, cnt, pos, sv);
    else
        cw_sums_cells(d->prob, d->label, d->k, p->rows, items, j0, j1, cells, 0, cnt, pos, sv);
}

/* The cells of all of p's samples under the M bins with edges e, K a sample, into a new
 * array (4 bytes a cell when wide, else 2): cw_bins block by block, the skip carried from
 * block to block as in a pass. NULL out of memory. */
static void *cw_cells_make(const cs_prepared *p, const double *e, size_t M, int wide)
{
    size_t K = p->d->k, n = p->n, rows = cw_block_rows(K), nc = n * K;
    void *cells = malloc((nc ? nc : 1) * (wide ? sizeof(uint32_t) : sizeof(uint16_t)));
    uint32_t *ix = wide ? NULL : malloc(rows * K * sizeof *ix);
    if (!cells || (!wide && !ix)) {
        free(cells);
        free(ix);
        return NULL;
    }
    int skip = 0;
    for (size_t j0 = 0; j0 < n; j0 += rows) {
        size_t j1 = j0 + rows < n ? j0 + rows : n;
        uint32_t *out = wide ? (uint32_t *)cells + j0 * K : ix;
        skip = cw_block_bins(p->d->prob, K, p->rows, NULL, j0, j1, e, M, skip, out);
        if (!wide)
            for (size_t q = 0; q < (j1 - j0) * K; q++) ((uint16_t *)cells)[j0 * K + q] = (uint16_t)ix[q];
    }
    free(ix);
    return cells;
}

/* p's cells under M bins (edges e) for a subset of ni items, or NULL (the pass bins its items
 * itself). They are made, once, under p->lock, when the subsets' passes would otherwise
 * have binned as many items as p has samples, this one's included (a draw of n samples
 * makes them at once; a few small subsets never pay for n samples' cells). Any thread. */
static const void *cw_cells(const cs_prepared *cp, const double *e, size_t M, size_t ni, int *wide)
{
    cs_prepared *p = (cs_prepared *)cp;   /* the lazy cache only */
    const void *cells = NULL;
    if (!cw_by_cells || M != (size_t)p->s.bins) return NULL;
    pthread_mutex_lock(&p->lock);
    if (!p->cw_cell && !p->cw_cell_tried) {
        if (p->cw_binned + ni >= p->n) {
            p->cw_cell_wide = p->d->k * M > 65536;   /* cells c*M+b < K*M */
            p->cw_cell = cw_cells_make(p, e, M, p->cw_cell_wide);
            p->cw_cell_tried = 1;   /* out of memory: the passes keep binning */
        } else {
            p->cw_binned += ni;
        }
    }
    cells = p->cw_cell;
    *wide = p->cw_cell_wide;
    pthread_mutex_unlock(&p->lock);
    return cells;
}

int cs_mx_classwise_sums(const cs_prepared *p, const uint32_t *items, size_t ni, const double *e,
                         size_t M, const atomic_int *cancel, size_t *cnt, size_t *pos, double *sv)
{
    const cs_dataset *d = p->d;
    size_t K = d->k, rows = cw_block_rows(K);
    int wide = 0;
    const void *cells = items ? cw_cells(p, e, M, ni, &wide) : NULL;
    uint32_t *ix = cells ? NULL : malloc(rows * K * sizeof *ix);
    double *sc = calloc(K * M, sizeof *sc);    /* the chunk being summed */
    if ((!cells && !ix) || !sc) {
        free(ix);
        free(sc);
        return -1;
    }
    int skip = 0;
    for (size_t j0 = 0, n0 = 0; j0 < ni;) {
        if (j0 >= n0) {   /* the cancel flag about every 4096 rows */
            if (cs_mx_cancelled(cancel)) {
                free(ix);
                free(sc);
                return 1;
            }
            n0 = j0 + 4096;
        }
        /* blocks never straddle a chunk of CS_MX_CHUNK items */
        size_t end = (j0 / CS_MX_CHUNK + 1) * CS_MX_CHUNK, j1 = j0 + rows;
        if (j1 > end) j1 = end;
        if (j1 > ni) j1 = ni;
        if (cells) cw_block_cells(p, items, j0, j1, cells, wide, cnt, pos, sc);
        else skip = cw_block(d->prob, d->label, K, p->rows, items, j0, j1, e, M, skip, ix, cnt, pos, sc);
        if (j1 == end || j1 == ni) {
            cs_mx_cw_add_chunk(sv, sc, K * M);
            memset(sc, 0, K * M * sizeof *sc);
        }
        j0 = j1;
    }
    free(ix);
    free(sc);
    return 0;
}
