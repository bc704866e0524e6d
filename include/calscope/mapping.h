/* calscope engine: the label mapping of a segmentation test set — which probability channel is
 * which class: softmax channels <-> label values (--label-values 0,1,2,4 or bg=0,NCR=1,ED=2,ET=4),
 * or independent sigmoid channels <-> regions (--regions 'WT=1,2,4;TC=1,4;ET=4'). reduce parses
 * it from the flags; a statistics file stores it on its mapping line and its reader checks it
 * against the classes line, so the parser belongs to the statistics store (segstats), below
 * both.
 *
 * Ownership: a mapping is created by its parser and freed by cs_seg_mapping_free (NULL is a
 * no-op). Threads: any thread, on its own objects; a finished mapping may be read by many. */
#ifndef CALSCOPE_MAPPING_H
#define CALSCOPE_MAPPING_H

#include <stddef.h>

#include "calscope/error.h"
#include "calscope/segstats.h"

#define CS_SEG_MAX_CODES 65536                /* distinct label values a mapping may name */

/* ---- the label mapping ------------------------------------------------------------------- */

typedef struct cs_seg_mapping {
    cs_seg_kind kind;
    size_t k;                    /* channels: classes (softmax) or regions */
    char **names;                /* k class / region names (each malloc'd) */
    char *text;                  /* canonical text, recorded in the statistics file */
    int defaulted;               /* softmax 0..k-1 because no flag was given */
    /* The label values that may occur, ascending (softmax: the k values; regions: the values
     * of every region and 0, the background). A voxel's class code is its index here. */
    size_t n_values;
    int32_t *values;
    /* code -> class: softmax: channel of each code (values[c] is channel class_of[c]'s value);
     * regions: member[c * k + j] = 1 when value c is in region j */
    uint32_t *class_of;
    uint8_t *member;
} cs_seg_mapping;

/* --label-values LIST: comma-separated integers, each optionally NAME=VALUE (the class name;
 * default the value as written). Errors (CS_EUSAGE) name the flag and the bad token:
 * "--label-values: 'x' is not an integer label value (in '0,x,2')", "--label-values: value 2
 * is given twice". *out is the caller's (cs_seg_mapping_free). */
cs_status cs_seg_mapping_values(const char *text, cs_seg_mapping **out, cs_error *err);
/* --regions 'NAME=V,V;NAME=V': one independent sigmoid channel per region, in the order
 * given; y = 1 where the label value is one of the region's. Errors as above. */
cs_status cs_seg_mapping_regions(const char *text, cs_seg_mapping **out, cs_error *err);
/* The same parse and errors without the member matrix (m->member NULL): the names, the values
 * and the canonical text, in memory proportional to TEXT — for checking a statistics file's
 * header, whose regions times label values the file does not bound. */
cs_status cs_seg_mapping_regions_names(const char *text, cs_seg_mapping **out, cs_error *err);
/* Softmax 0..channels-1, defaulted = 1. NULL when out of memory. */
cs_seg_mapping *cs_seg_mapping_default(size_t channels);
void cs_seg_mapping_free(cs_seg_mapping *m);
/* The code of label value x (any double as a reader gives it), or -1 when x is not one of
 * m->values (not an integer, NaN, out of range). Pure. */
long cs_seg_mapping_code(const cs_seg_mapping *m, double x);
/* How a message names the mapping: "--label-values 0,1,2,4", "--regions 'WT=1,2,4'", or
 * "the default 0,1,2 (from the first case's channel count)". */
void cs_seg_mapping_describe(const cs_seg_mapping *m, char *buf, size_t size);

#endif
