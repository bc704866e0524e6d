/* calscope engine: the one metric catalogue.
 *
 * Every metric calscope reports, with its id (the bit in a metric mask), its JSON key (also
 * the CSV column and the --check name), its dashboard label, its one-line meaning, what
 * cs_evaluate must compute for it and which settings change it. The report's text, JSON and
 * CSV tables, --check, the dashboard's metrics table, the intervals, curves and comparisons
 * all read this table, so a metric is added (or renamed) in one place.
 *
 * Two orders, both from here: the id order (cs_metric_id: metric masks and the curves,
 * intervals and comparisons, which list metrics by id) and the table order (cs_metric_at:
 * the metrics tables a user reads, report and dashboard alike).
 *
 * Static data: any thread. */
#ifndef CALSCOPE_CATALOGUE_H
#define CALSCOPE_CATALOGUE_H

#include <stddef.h>

#include "calscope/metrics.h"

/* Metrics a curve / interval / comparison can follow. Bit (1u << id) in a metric mask. */
typedef enum cs_metric_id {
    CS_METRIC_ACCURACY, CS_METRIC_ECE, CS_METRIC_ACE, CS_METRIC_MCE, CS_METRIC_AECE,
    CS_METRIC_RECE_G, CS_METRIC_RECE_M, CS_METRIC_SCE, CS_METRIC_BRIER, CS_METRIC_NLL,
    CS_METRIC_SMECE, CS_METRIC_L2CE, CS_METRIC_L2CE_DEBIASED, CS_METRIC_ECE_SWEEP,
    CS_METRIC_COUNT
} cs_metric_id;

#define CS_METRIC_BIT(id) (1u << (id))

/* The settings a metric reads besides the file and the selection (every metric reads those):
 * a change of any other setting leaves its value as it was. */
enum {
    CS_NEEDS_LENS     = 1u << 0,   /* --lens (and its k, class or groups) */
    CS_NEEDS_BINNING  = 1u << 1,   /* --binning and --gamma */
    CS_NEEDS_BINS     = 1u << 2,   /* --bins M */
    CS_NEEDS_DISTANCE = 1u << 3,   /* --distance */
    CS_NEEDS_SIGMA    = 1u << 4,   /* --sigma */
    CS_NEEDS_MIXTURE  = 1u << 5,   /* --mixture */
    CS_NEEDS_TTA      = 1u << 6,   /* a number only on a long id/tta file (NAN otherwise) */
    CS_NEEDS_SMECE_SIGMA = 1u << 7,/* --smece-sigma */
    CS_NEEDS_SCALAR   = 1u << 8,   /* a number only on the top1 and class:C lenses */
    CS_NEEDS_PER_CLASS = 1u << 9   /* a number only on top1, class:C and classwise (RECE-G) */
};

typedef struct cs_metric_info {
    cs_metric_id id;
    const char *key;        /* "rece_g": JSON key, CSV column, --check name */
    const char *label;      /* "RECE-G": the dashboard's table */
    const char *help;       /* one line: what the number is (report text) */
    unsigned want;          /* the CS_WANT_* bits cs_evaluate needs for it */
    unsigned needs;         /* CS_NEEDS_* */
    int lower_better;       /* 1 for every error and scoring rule, 0 for accuracy */
    size_t offset;          /* of its double in cs_result */
    const char *only;       /* where it has a number, said beside an n/a ("needs id/tta rows"),
                               or NULL when every input has one */
    int m_of_n;             /* 1: its intervals may come from draws of m < n samples
                               (calscope/resample.h, cs_boot_draw_size): a sum over samples or
                               bins weighted by their counts, whose spread shrinks as 1/sqrt(n).
                               0: a maximum or an unweighted mean over non-empty bins, or sums
                               in sparse class-wise cells (MCE, ACE, SCE), whose sparse bins are
                               far noisier at m than at n (measured: MCE's interval 3-5x too
                               wide), and RECE-M (not checked) */
} cs_metric_info;

/* The i-th metric of the table order (0 <= i < CS_METRIC_COUNT), or NULL past the end. */
const cs_metric_info *cs_metric_at(size_t i);
/* The metric with this id, or NULL for an unknown id. */
const cs_metric_info *cs_metric_info_of(int id);

/* JSON key ("ece", "rece_g", ...), or NULL for an unknown id. */
const char *cs_metric_name(int id);
/* Id of a JSON key (exact), or -1. */
int cs_metric_from_name(const char *name);
/* Id of the metric named by name[0..len) in any case, '-' standing for '_' ("ECE", "RECE-G",
 * "rece_g"), by its key or by its dashboard label ("L2CE-deb"): the spellings a user copies
 * from the dashboard or the report. -1 when none. */
int cs_metric_lookup(const char *name, size_t len);
/* Writes the keys in table order joined by single blanks ("accuracy ece ace ...") into buf
 * (always terminated when size > 0; 128 bytes hold them all), for messages. */
void cs_metric_keys(char *buf, size_t size);

/* The CS_WANT_* bits cs_evaluate needs for a metric mask. */
unsigned cs_metric_want(unsigned metric_mask);
/* The metric's value in a cs_result (NAN for an unknown id). */
double cs_metric_value(const cs_result *r, int id);
/* The mask of the metrics whose intervals may come from m-out-of-n draws under settings s:
 * those with m_of_n on a scalar lens (top1, class:C, topk:1). On the other lenses (classwise,
 * topk:K > 1, group, full) a lens's bins are cells of several coordinates or classes, as
 * sparse as SCE's (measured: top-k:2 ECE's interval at m = 30,000 of 1,000,000 lay wholly
 * above its value), so only the metrics that do not read the lens (CS_NEEDS_LENS) keep it.
 * Pure; any thread. */
unsigned cs_metric_mask_m_of_n(const cs_settings *s);
/* 1 when the lens of s gives metric id a number on prediction rows (the rule its `only` says:
 * CS_NEEDS_SCALAR on top1, class:C and topk:1; CS_NEEDS_PER_CLASS on those and classwise; any
 * other metric on every lens), else 0 (n/a whatever the file). Pure; any thread. */
int cs_metric_lens_gives(int id, const cs_settings *s);
/* Its lower_better (0 for an unknown id). */
int cs_metric_lower_is_better(int id);

#endif
