/* Test support: small random segmentation data (per-voxel probabilities and labels of a few
 * cases), its statistics through the tests' reference accumulation (seg_kernel.h), and the same voxels as a per-voxel
 * dataset with a case column, so statistics-based numbers can be checked against the row
 * engine. Every allocation is checked (the test fails on out-of-memory). */
#ifndef CS_TEST_SEG_DATA_H
#define CS_TEST_SEG_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "calscope/dataset.h"
#include "calscope/segstats.h"

typedef struct cs_test_seg {
    size_t n_cases, k;
    size_t *first;   /* n_cases + 1: case c has voxels first[c] .. first[c+1]-1 */
    double *p;       /* k planes of first[n_cases] voxels: channel j of voxel v at j*N + v */
    int32_t *lab;    /* first[n_cases]: the class index of each voxel */
} cs_test_seg;

/* n_cases softmax cases of k classes, case c with base + 5*c voxels (case 0 of `base`).
 * Probabilities: about a third exact vectors with values on fine edges (1, 0, 0.5, 0.25,
 * 0.75), the rest random rows summing to 1 up to rounding; labels follow the probabilities.
 * When `same` is nonzero every case holds the same voxels. Deterministic for a seed. */
cs_test_seg *cs_test_seg_random(size_t n_cases, size_t k, size_t base, uint64_t seed, int same);
void cs_test_seg_free(cs_test_seg *g);

/* Case names "case00", "case01", ... (static storage for up to 100 cases). */
const char *cs_test_seg_case_name(size_t c);

/* The statistics of g at fine resolution F (softmax, classes "c0".."c{k-1}", mapping
 * "c0=0,c1=1,..", as --label-values writes it), accumulated with cs_test_seg_add_voxels in
 * slabs of 7 voxels; inputs "pC.npz"/"lC.nii.gz". */
cs_segstats *cs_test_seg_stats(const cs_test_seg *g, int fine);

/* The same voxels as a prepared dataset: one row per voxel, case column, classes "c0".. */
cs_dataset *cs_test_seg_dataset(const cs_test_seg *g);

#endif
