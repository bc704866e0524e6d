/* Debiased L2 calibration error and ECE_sweep (see engine/metrics/estimators.h). */
#include "engine/metrics/estimators.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "engine/num/ubin.h"
#include "engine/metrics/mx.h"

/* The targets as doubles (the public functions) or as bytes (the metrics' sorted copies,
 * cs_mx_*): one implementation reads both, value for value the same. */
typedef struct ys { const double *d; const uint8_t *b; } ys;
static inline double yat(ys y, size_t i)
{
    return y.d ? y.d[i] : (double)y.b[i];
}

static void l2ce(const double *f, ys y, size_t n, int M, double *plugin, double *debiased,
                 double *debiased_sq)
{
    *plugin = *debiased = NAN;
    if (debiased_sq) *debiased_sq = NAN;
    if (n == 0 || M < 1) return;
    size_t G = (size_t)M < n ? (size_t)M : n;
    double sp = 0.0, sd = 0.0;
    for (size_t g = 0; g < G; g++) {
        size_t a = cs_mx_split_start(n, (size_t)M, g), b = g + 1 < G ? cs_mx_split_start(n, (size_t)M, g + 1) : n;
        size_t c = b - a;
        double sf = 0.0, sy = 0.0;
        for (size_t i = a; i < b; i++) {
            sf += f[i];
            sy += yat(y, i);
        }
        double fm = sf / (double)c, ym = sy / (double)c, w = (double)c / (double)n;
        double sq = (fm - ym) * (fm - ym);
        sp += w * sq;
        if (c >= 2) sd += w * (sq - ym * (1.0 - ym) / ((double)c - 1.0));
    }
    *plugin = sqrt(sp);
    if (debiased_sq) *debiased_sq = sd;
    *debiased = sqrt(sd > 0.0 ? sd : 0.0);
}

void cs_l2ce(const double *f, const double *y, size_t n, int M, double *plugin, double *debiased,
             double *debiased_sq)
{
    l2ce(f, (ys){ y, NULL }, n, M, plugin, debiased, debiased_sq);
}

void cs_mx_l2ce(const double *f, const uint8_t *y, size_t n, int M, double *plugin, double *debiased)
{
    l2ce(f, (ys){ NULL, y }, n, M, plugin, debiased, NULL);
}

/* Start of bin g of b (g == b: n): mass, the first sorted position with floor(i b / n) >= g;
 * width, the first value above the bin's lower edge (bin 0 takes everything up to e_1). */
static size_t bin_start(const double *f, size_t n, int mass, size_t g, size_t b)
{
    if (g == 0) return 0;
    if (g >= b) return n;
    if (mass) return (g * n + b - 1) / b;
    double e = cs_ubin_edge((int)g, (int)b);
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (f[mid] > e) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

/* The number of y = 1 among the first 64 k sorted samples, cy[k]: a bin's y sum is then two
 * reads and at most 2 x 63 targets, and trying b bins costs O(b) where summing the bin's y
 * cost O(n) (ECE_sweep tries every b up to the first non-monotone one: 49 passes over 10^6
 * samples on the bench file). One count per 64 samples (63 KB at 10^6, where one per sample
 * took 4 MB a call, and a resampling job calls it once a draw on each thread). The counts
 * are the same integers the sums gave (y in {0, 1}). NULL on ENOMEM: the sums then. */
#define CY_STEP 64u
static uint32_t *ones_before(ys y, size_t n)
{
    if (n >= UINT32_MAX) return NULL;
    size_t nk = n / CY_STEP + 1;
    uint32_t *cy = malloc(nk * sizeof *cy);
    if (!cy) return NULL;
    uint32_t c = 0;
    cy[0] = 0;
    for (size_t i = 0; i < n; i++) {
        c += yat(y, i) != 0.0;
        if ((i + 1) % CY_STEP == 0) cy[(i + 1) / CY_STEP] = c;
    }
    return cy;
}

/* y = 1 among the first i samples. */
static uint32_t ones_to(ys y, const uint32_t *cy, size_t i)
{
    size_t k = i / CY_STEP;
    uint32_t c = cy[k];
    for (size_t j = k * CY_STEP; j < i; j++) c += yat(y, j) != 0.0;
    return c;
}

static double y_sum(ys y, const uint32_t *cy, size_t a, size_t e)
{
    if (cy) return (double)(ones_to(y, cy, e) - ones_to(y, cy, a));
    double sy = 0.0;
    for (size_t i = a; i < e; i++) sy += yat(y, i);
    return sy;
}

/* 1 when the non-empty bins' mean y do not decrease. */
static int monotone(const double *f, ys y, const uint32_t *cy, size_t n, int mass, size_t b)
{
    double last = -1.0;
    size_t a = 0;
    for (size_t g = 0; g < b; g++) {
        size_t e = bin_start(f, n, mass, g + 1, b);
        if (e > a) {
            double ym = y_sum(y, cy, a, e) / (double)(e - a);
            if (ym < last) return 0;
            last = ym;
        }
        a = e;
    }
    return 1;
}

/* Every split into contiguous runs is monotone when the finest one is: the y in sorted order
 * (mass), or the mean y of the runs of equal f (width: equal values share a bin). */
static int finest_monotone(const double *f, ys y, size_t n, int mass)
{
    double last = -1.0;
    for (size_t a = 0; a < n;) {
        size_t e = a + 1;
        if (!mass)
            while (e < n && f[e] == f[a]) e++;
        double sy = 0.0;
        for (size_t i = a; i < e; i++) sy += yat(y, i);
        double ym = sy / (double)(e - a);
        if (ym < last) return 0;
        last = ym;
        a = e;
    }
    return 1;
}

static double sweep(const double *f, ys y, size_t n, int mass, double p, int *bins_out)
{
    *bins_out = 0;
    if (n == 0) return NAN;
    size_t best = 1;
    if (n >= 3) {
        if (finest_monotone(f, y, n, mass)) best = n - 1;
        else {
            uint32_t *cy = ones_before(y, n);
            for (size_t b = 2; b < n && monotone(f, y, cy, n, mass, b); b++) best = b;
            free(cy);
        }
    }
    double sum = 0.0;
    size_t a = 0;
    for (size_t g = 0; g < best; g++) {
        size_t e = bin_start(f, n, mass, g + 1, best);
        if (e > a) {
            double sf = 0.0, sy = 0.0;
            for (size_t i = a; i < e; i++) {
                sf += f[i];
                sy += yat(y, i);
            }
            double c = (double)(e - a);
            sum += c * pow(fabs(sy / c - sf / c), p);
        }
        a = e;
    }
    *bins_out = (int)best;
    return pow(sum / (double)n, 1.0 / p);
}

double cs_ece_sweep(const double *f, const double *y, size_t n, int mass, double p, int *bins_out)
{
    return sweep(f, (ys){ y, NULL }, n, mass, p, bins_out);
}

double cs_mx_ece_sweep(const double *f, const uint8_t *y, size_t n, int mass, double p, int *bins_out)
{
    return sweep(f, (ys){ NULL, y }, n, mass, p, bins_out);
}
