/* calscope engine: top-k ECE bars (Kirchenbauer, Oaks & Heim 2022, "What is Your Metric Telling
 * You?", Fig. 1).
 *
 * Each selected row's probabilities are sorted once per call and shared by every k, so the
 * bars for k in {1,2,3,5,10,...,K} cost about one sort of the matrix.
 * Threads: reads the dataset only; any thread may call it. */
#ifndef CALSCOPE_TOPK_H
#define CALSCOPE_TOPK_H

#include <stdatomic.h>
#include <stddef.h>

#include "calscope/dataset.h"
#include "calscope/error.h"
#include "calscope/metrics.h"

/* ece_out[i] = ECE of lens topk:ks[i] under base's binning, bins, gamma, distance and
 * selection (base's lens is ignored). k = 1 is top1; k larger than the class count is
 * clamped to it (the whole sorted vector plus a zero remainder). Returns CS_OK, CS_EUSAGE
 * (k < 1, bad settings or selection), CS_EEMPTY (selection keeps nothing), CS_ENOMEM or
 * CS_ECANCELLED (cancel, which may be NULL, raised: polled between the bars and inside each).
 * ece_out is owned by the caller (nk doubles). */
cs_status cs_topk_bars(const cs_dataset *d, const cs_settings *base, const int *ks, size_t nk,
                       const atomic_int *cancel, double *ece_out, cs_error *err);
/* The same for a measurement that has prepared its settings once (pl: its selection, read
 * on the top-1 lens). Any thread. */
cs_status cs_topk_bars_planned(const cs_plan *pl, const int *ks, size_t nk, const atomic_int *cancel,
                               double *ece_out, cs_error *err);

#endif
