/* calscope engine: the row-sum rule ("row not summing to 1 within the tolerance"; docs/input.md),
 * one place for the CSV, .npy and segmentation loaders (load_row.c, reduce/case.c). */
#ifndef CALSCOPE_ROWSUM_H
#define CALSCOPE_ROWSUM_H

#include <math.h>
#include <stddef.h>

/* Whether a row of k values (each >= 0) whose double sum, in class order, is s sums to 1
 * within tol. The test is on the numbers as written, not on the last bits of their double sum:
 * each value is the double nearest its text and k - 1 additions follow, so s is within
 * k * 2^-53 * s of the written numbers' exact sum, and that much (at the edge, s <= 1 + tol) is
 * granted beyond tol. Without it, a row written with 3 decimals such as 0.334,0.334,0.333
 * (exactly 1.001, within 1e-3) was refused: its double sum is 1.0010000000000001. A NaN or
 * infinite sum is refused. Pure; any thread. */
static inline int cs_row_sum_ok(double s, size_t k, double tol)
{
    return fabs(s - 1.0) <= tol + (double)k * 0x1p-53 * (1.0 + tol);
}

#endif
