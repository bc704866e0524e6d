/* Smooth ECE internals shared by smece.c (the exact sums, roots, integrals, bandwidth) and
 * smece_grid.c (the view of the kernel's images and the sign grid): the layout of the sorted
 * pairs and of their reflected images. Internal to src/engine/metrics. A view is a value on
 * the caller's stack that borrows the pairs; any thread may read one at a time with others. */
#ifndef CS_METRICS_SMECE_VIEW_H
#define CS_METRICS_SMECE_VIEW_H

#include <stddef.h>
#include <stdint.h>

/* Images farther than CUT * sigma from a point are left out of its kernel sum: their weight is
 * below exp(-CUT^2 / 2) = 3e-18 of the peak, under the last bit of any sum they join. */
#define CUT 9.0

typedef struct img { double c, w; } img;   /* an image's centre and its weight r_i / n */

/* The sorted pairs, distinct values ascending, in one of two layouts: an array of (f, w)
 * (the public functions), or the metrics' columns (cs_mx_smece: 9 bytes a pair where the
 * array takes 16), where a pair of one sample keeps only its target and its weight is formed
 * when read, by the array's own expression (f - y) / n, and the few merged pairs (equal
 * values) keep their summed weight in a side table. */
typedef struct pairs {
    const img *p;        /* (f, w), or NULL for the columns: */
    const double *f;     /* values */
    const uint8_t *y;    /* 0 / 1: one sample with that target; 2: merged */
    double ns;           /* samples (the n of (f - y) / n) */
    const size_t *mk;    /* positions of the merged pairs, ascending */
    const double *mw;    /* their weights */
    size_t nm;
    size_t n;            /* pairs */
} pairs;

static inline double pair_f(const pairs *P, size_t i)
{
    return P->p ? P->p[i].c : P->f[i];
}

static inline double merged_w(const pairs *P, size_t i)
{
    size_t lo = 0, hi = P->nm;
    while (lo + 1 < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (P->mk[mid] <= i) lo = mid;
        else hi = mid;
    }
    return P->mw[lo];
}

static inline double pair_w(const pairs *P, size_t i)
{
    if (P->p) return P->p[i].w;
    uint8_t y = P->y[i];
    return y < 2 ? (P->f[i] - (double)y) / P->ns : merged_w(P, i);
}

/* The images 2k + f and 2k - f of the sorted pairs with their centre in [-CUT s, 1 + CUT s],
 * in centre order, without materialising them (2.5 n images of 16 bytes at s = 0.1, 6 n at
 * s = 0.3: more than the probability matrix of a 10-class file): the images of unit interval
 * [j, j+1] are j + f (j even, f ascending) or j + 1 - f (j odd, f descending), one segment
 * per j; the images kept in a segment are a contiguous run of its pairs (the centre is
 * monotone in the pair), so a segment is j and that run. Every sum walks the images in the
 * same order, with the same centres (the same rounded expressions), as the array did. */
#define MAXSEG 192  /* j in [floor(-CUT s), floor(1 + CUT s)]: 20 segments at s = 1, 182 at s = 10 */

typedef struct seg {
    long j;
    int odd;
    size_t a, z;    /* positions q of the kept run: pair q (even) or n - 1 - q (odd) */
} seg;

typedef struct view {
    const pairs *P;
    size_t n;
    int nseg;
    seg sg[MAXSEG];
} view;

static inline double centre(const view *v, const seg *g, size_t q)
{
    return g->odd ? (double)(g->j + 1) - pair_f(v->P, v->n - 1 - q) : (double)g->j + pair_f(v->P, q);
}

static inline double weight(const view *v, const seg *g, size_t q)
{
    return pair_w(v->P, g->odd ? v->n - 1 - q : q);
}

/* Fills v for the pairs P at bandwidth s. Returns 0, or -1 when s is beyond MAXSEG's reach. */
int cs_smece_view(view *v, const pairs *P, double s);
/* The first image with centre >= x: segment *k, position *q (*k = nseg when none). */
void cs_smece_lower(const view *v, double x, int *k, size_t *q);
/* The sign grid g[0..G] (smece_grid.c). Returns 0 or -1 (out of memory). */
int cs_smece_grid(const view *v, double s, size_t G, double *g);
/* The kernel sum of the view's weights (up to 1 / (s sqrt(2 pi))) at t_j = j / G, j = 0..G,
 * image by image (every image within CUT s of the point; restart as described in
 * smece_grid.c, 0 for none). g has G + 1 entries, the caller's. */
void cs_smece_grid_direct(const view *v, double s, size_t G, size_t restart, double *g);

/* The root in (a, b) of g (fa = g(a), fb = g(b) of opposite signs), g also giving its slope:
 * Newton's method kept inside the bracket, to 1e-15 (smece.c). */
typedef double (*cs_smece_gfn)(const void *ctx, double t, double *slope);
double cs_smece_root(cs_smece_gfn g, const void *ctx, double a, double fa, double b, double fb);

/* Phi(u) - Phi(l), l <= u, from the normal tail on the side that keeps the digits (smece.c). */
double cs_smece_phi_diff(double u, double l);

/* The pairs as moments in boxes (smece_box.c): the distinct values binned on [0, 1] in 2048
 * boxes, each box kept as the sums of w u^p (u the value's offset from the box centre in box
 * widths, p < NP). Built once by a pass over the pairs; then smECE_s at any bandwidth s in
 * [1/1024, 10] costs a few thousand operations however many pairs there are, the same number
 * as the per-pair sums to ~1e-16 of sum |w| (the truncation bound is in smece_box.c). */
#define NP 18
#define CS_SBOX_BOXES 2048                     /* the finest boxes, width 1 / 2048 */
#define CS_SBOX_MIN_SIGMA (2.0 / CS_SBOX_BOXES)  /* a finest box no wider than s / 2 */
#define CS_SBOX_MAX_SIGMA 10.0
typedef struct sbox {
    size_t n;          /* boxes that hold pairs, ascending */
    uint16_t *q;       /* their index 0..2047 */
    double *m;         /* n x NP moments */
    int ok;            /* every value in [0, 1] (else no boxes: use the per-pair sums) */
} sbox;
/* Builds b from the sorted pairs P (on two threads from 100,000 pairs; the same moments on
 * one). 0, or -1 when memory ran out (b then empty). The caller frees b with cs_sbox_free.
 * b is then read-only: any thread may use it, several at once. */
int cs_sbox_build(sbox *b, const pairs *P);
void cs_sbox_free(sbox *b);
/* Whether cs_sbox_smece answers for s (b built with every value in [0, 1], s in [1/1024, 10]). */
int cs_sbox_fits(const sbox *b, double s);
/* The kernel sums sum w exp(-(t_j - f)^2 / 2s^2) over every image, at t_j = j / G, j = 0..G,
 * into g (G + 1, the caller's), from the boxes (cs_sbox_fits true): each box's sum to 1e-19
 * of its weight times exp(x^2/4) where x is the box's distance in s (Cramer's bound: 1e-15 of
 * the peak at 6 s, 1e-10 at 9 s). 0, or -1 when memory ran out. */
int cs_sbox_sums(const sbox *b, double s, size_t G, double *g);
/* smECE_s from the boxes (cs_sbox_fits true). NAN when memory ran out. */
double cs_sbox_smece(const sbox *b, double s);
/* Tests only (not thread-safe, set before the work): 0 makes the box moments and sums take
 * their scalar loops instead of two boxes / two chains in SSE2 lanes, 1 (the default) back.
 * Either gives the same bits. */
void cs_sbox_lanes(int on);
/* cs_smece_at through the boxes (boxes != 0, where they answer) or the per-pair sums only:
 * the tests compare the two. */
double cs_smece_at_by(const double *f, const double *y, size_t n, double sigma, int boxes);

#endif
