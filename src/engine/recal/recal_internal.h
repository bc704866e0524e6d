/* calscope engine, recalibration: internals shared by the files of src/engine/recal only. */
#ifndef CS_RECAL_INTERNAL_H
#define CS_RECAL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "calscope/recal.h"
#include "engine/sort/sort.h"

/* Which rows fit which model (see recal.c's header comment). */
typedef struct cs_rc_plan {
    size_t n_groups;   /* K folds, or 2 with a fit mask (0 = fit rows, 1 = the rest) */
    size_t n_models;   /* K + 1 (the last on every row, reported only), or 1 with a mask */
    uint8_t *group;    /* per dataset row (owned by the caller of the fits) */
    int cross;
} cs_rc_plan;

/* Model m is fitted on group g's samples. */
static inline int cs_rc_uses(const cs_rc_plan *p, size_t m, size_t g)
{
    if (!p->cross) return g == 0;
    return m == p->n_groups || g != m;
}

/* The model applied to a row of group g. */
static inline size_t cs_rc_model_of(const cs_rc_plan *p, size_t g)
{
    return p->cross ? g : 0;
}

/* q = p with its top-1 probability set to c_new (floored so the prediction stays) and the
 * others rescaled proportionally. q may not alias p. */
void cs_rc_rescale_top1(const double *p, double *q, size_t k, double c_new);

/* The fits: each writes the recalibrated probabilities of every row of d into out (n*k). */
cs_status cs_rc_temperature(const cs_dataset *d, const cs_rc_plan *pl, const cs_recal_options *o,
                            double *out, cs_recal_info *info, cs_error *err);
cs_status cs_rc_platt(const cs_dataset *d, const cs_rc_plan *pl, double *out, cs_recal_info *info,
                      cs_error *err);
cs_status cs_rc_hist(const cs_dataset *d, const cs_rc_plan *pl, int bins, double *out, cs_error *err);
cs_status cs_rc_iso(const cs_dataset *d, const cs_rc_plan *pl, double *out, cs_error *err);

#endif
