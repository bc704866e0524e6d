/* The default M values of a bins curve on a statistics dataset (see calscope/segmeasure.h). */
#include "calscope/segmeasure.h"

#include "calscope/resample.h"

void cs_segstats_bins_list(const cs_segstats *st, cs_curve_options *o)
{
    /* every divisor of F from 5 up (F itself included) while it fits the curve and the --bins
     * limit; past CS_CURVE_MAX_POINTS the largest divisors are left out */
    size_t n = 0;
    for (int m = 5; m <= st->fine && m <= CS_BINS_MAX && n < CS_CURVE_MAX_POINTS; m++)
        if (st->fine % m == 0) o->x[n++] = m;
    if (n == 0) o->x[n++] = st->fine;   /* F < 5: its one coarse rule is F itself */
    o->n_points = n;
}
