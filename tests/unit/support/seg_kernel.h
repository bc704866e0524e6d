/* Test support: the tests' independent reference accumulation of segmentation statistics.
 * The engine has one accumulation rule, the reducer's streaming kernel (src/engine/reduce/
 * case.c: channel by channel over a whole case). This reference adds the same sums in another
 * order — all channels of a voxel at once, in whatever slabs the caller passes, with plain
 * per-voxel logs instead of grouped products — so a test comparing the two checks the rule,
 * not one implementation against itself. It also builds hand-worked statistics objects
 * without writing volume files. */
#ifndef CS_TEST_SEG_KERNEL_H
#define CS_TEST_SEG_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "calscope/segstats.h"

/* Adds n voxels of case c to st. p[j][v] is channel j's probability of voxel v (k arrays of n
 * doubles: a float16/float32 value converted to double exactly). lab[v] is the voxel's label
 * as an index 0..L-1 into the mapping's label values; member (L x k, row-major) says whether
 * label index l is in class/region j (member[l*k + j] != 0). member NULL means lab[v] is the
 * class index itself (softmax, label values in channel order). Top-1 (softmax only: st->t_cnt
 * set) takes the first channel attaining the maximum, as cs_dataset_prepare does; it is
 * correct when the voxel's label is in that channel's class. Adds n to voxels[c]. The caller
 * has checked the values (in [0, 1], labels in the mapping). Single-threaded per case. */
void cs_test_seg_add_voxels(cs_segstats *st, size_t c, const double *const *p,
                            const int32_t *lab, const uint8_t *member, size_t n);

#endif
