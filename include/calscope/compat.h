/* calscope engine: compat mode, --compat (docs/compat.md).
 *
 * For the same file and settings, the number each popular calibration library would report,
 * with its own conventions (edge side, edge arithmetic and precision, the value 1.0 / 0 / empty
 * bins, equal-mass construction, binary semantics, which bins are summed), next to calscope's
 * own number, plus the samples whose bin differs from calscope's and the rule that moved them.
 *
 *   cs_compat_report r;
 *   cs_compat_run(dataset, settings, CS_COMPAT_ALL_MASK, &r, err);   one call, all libraries
 *   ... r.lib[CS_COMPAT_NETCAL].m[CS_CM_ECE], r.lib[i].moved, r.lib[i].examples ...
 *   cs_compat_report_free(&r);
 *
 * Supported lenses: top1 and classwise (the libraries implement nothing else), and class:C for
 * relplot alone (its smooth ECE and binned ECE of p[C] against label == C); other lenses get
 * CS_EUSAGE. Only the uniform and mass binnings have library counterparts.
 * Threads: cs_compat_run reads the dataset only; any number of threads may run it at once,
 * each with its own report. */
#ifndef CALSCOPE_COMPAT_H
#define CALSCOPE_COMPAT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "calscope/dataset.h"
#include "calscope/error.h"
#include "calscope/metrics.h"

typedef enum cs_compat_lib {
    CS_COMPAT_TORCHMETRICS,        /* multiclass_calibration_error(probs, target, K, n_bins=M, norm) */
    CS_COMPAT_TORCHMETRICS_BINARY, /* binary_calibration_error(p1, target, n_bins=M, norm) */
    CS_COMPAT_NETCAL,              /* netcal 1.3: ECE/ACE/MCE(bins=M).measure(P, y) */
    CS_COMPAT_RELPLOT,             /* relplot.binnedECE(conf, correct, nbins=M) */
    CS_COMPAT_VERIFIED,            /* verified_calibration: get_ece, get_ece_em, marginal */
    CS_COMPAT_ROBUSTCAL,           /* RECE authors' code: ECELoss, MCELoss, AdaptiveECELoss, SCELoss, GECELoss */
    CS_COMPAT_MONAI,               /* MONAI CalibrationErrorMetric (expected/average/maximum) */
    CS_COMPAT_COUNT
} cs_compat_lib;

#define CS_COMPAT_ALL_MASK ((1u << CS_COMPAT_COUNT) - 1u)
/* Option bit for cs_compat_run's mask: torchmetrics gets float64 tensors (torch.tensor(P,
 * dtype=torch.float64)) instead of a model's float32 output (--torch-dtype float64). */
#define CS_COMPAT_TORCH_F64 (1u << 16)

/* Metrics a library may report (NAN when it has no such metric or fails on the input). */
enum {
    CS_CM_ECE,     /* the chosen lens / binning / distance, as `ece` in the report */
    CS_CM_ACE,     /* mean gap over non-empty bins (netcal ACE, MONAI "average") */
    CS_CM_MCE,     /* max gap */
    CS_CM_RMS,     /* L2 / RMS calibration error (torchmetrics norm='l2') */
    CS_CM_AECE,    /* top-1 equal-mass ECE */
    CS_CM_SCE,     /* class-wise ECE */
    CS_CM_RECE_G,  /* RECE-G (robustcal GECELoss, its default Student-t kernel) */
    CS_CM_RECE_G_GAUSS, /* GECELoss with distr_name="gaussian" */
    CS_CM_COUNT
};

/* Why a sample lands in another bin than under calscope's rule. */
typedef enum cs_compat_rule {
    CS_RULE_LEFT_CLOSED,   /* value on an inner edge; [lo, hi) puts it in the upper bin */
    CS_RULE_PHANTOM_ONE,   /* exactly 1.0 goes to an extra bin M */
    CS_RULE_FLOAT32,       /* float32 value / float32 edges put it across an edge */
    CS_RULE_EDGE_ARITH,    /* edges i*(1/M) (linspace) or f/(1/M) differ from i/M */
    CS_RULE_ZERO_NO_BIN,   /* exactly 0 with (lo, hi] bins starting at 0: in no bin */
    CS_RULE_CLIPPED,       /* clipped to [eps, 1-eps] before binning */
    CS_RULE_MASS_TIE,      /* equal-mass: ties at a boundary stay together */
    CS_RULE_MASS_DROPPED,  /* equal-mass: at or below the first edge (strict lower edge): in no bin */
    CS_RULE_MASS_EDGES,    /* equal-mass bins built another way (quantile / sorted[i*floor(N/M)]) */
    CS_RULE_COUNT
} cs_compat_rule;

#define CS_COMPAT_EXAMPLES 20  /* moved samples kept per library (the first ones in row order) */

typedef struct cs_compat_move {
    uint32_t row;          /* dataset row (0-based, as loaded) */
    int32_t cls;           /* class column for class-wise moves, -1 for the top-1 value */
    double value;          /* the value as calscope reads it (double) */
    int cs_bin, lib_bin;   /* 0-based; -1 = in no bin; lib_bin == M is the phantom bin at 1.0 */
    cs_compat_rule rule;
} cs_compat_move;

typedef struct cs_compat_lib_result {
    cs_compat_lib lib;
    int applicable;               /* 0: the library cannot measure this input at all (see note) */
    double m[CS_CM_COUNT];        /* NAN = not provided / fails (see notes[]) */
    char notes[CS_CM_COUNT][200]; /* "" or why m[i] is NAN ("netcal raises ValueError: ...") */
    unsigned na_settings;         /* bit i: m[i] is NAN only because of the chosen lens / binning /
                                     distance (the library has the metric otherwise); the report
                                     and the dashboard print notes[i] beside such an n/a */
    char semantics[240];          /* what is measured, e.g. "positive-class calibration of p[1]" */
    char call[200];               /* the library call a typical user makes */
    size_t moved;                 /* samples whose bin differs from calscope's */
    cs_compat_move examples[CS_COMPAT_EXAMPLES];
    size_t n_examples;
    uint8_t *moved_flag;          /* owned, length n of the report: 1 = this sample moved */
    /* The library's per-bin table behind the reported `ece` (with --distance l2, behind its ace /
     * mce), NULL when the library has none for these settings (bins_note says why). One entry
     * per bin of the library, in its order, empty bins included: lo / hi its edges as doubles
     * (float32 edges widened exactly; an extra bin at 1.0 has lo = hi = 1), count its members,
     * conf / acc the mean value and target, gap |conf - acc| — as the library computes them,
     * also for empty bins: 0 where it fills them with 0 (torchmetrics, netcal, robustcal; the
     * gap of verified and relplot), NAN where it leaves them undefined (MONAI; the conf / acc of
     * verified and relplot). Class-wise: bin j of every class pooled (counts summed, conf / acc
     * the pooled means, lo / hi the widest over classes when the edges are per class). */
    cs_bin *bins;
    size_t n_bins;
    size_t bins_counted;          /* sum of the counts: n, n*K class-wise, fewer when the library
                                     leaves samples in no bin (robustcal: 0, the adaptive minimum) */
    int bins_pooled;              /* 1: class-wise, pooled over classes */
    char bins_note[240];          /* what the table is, or why there is none */
    /* Smooth ECE as the library computes it and the bandwidth it used (relplot only; NAN for
     * the others, smece_note says why). For relplot, smece_note says why its number is not
     * calscope's (the definition's, quoted in it): its grid's unmirrored end nodes. */
    double smece, smece_sigma;
    char smece_note[400];
    /* torchmetrics / torchmetrics-binary only: ece, mce and rms (at CS_CM_*) of the same call on
     * tensors of the other dtype — float64 (`torch.tensor` of a numpy array, e.g. predict_proba's
     * output) when the report asked for float32 (a model's output), and back; other_dtype_f64
     * says which. binary_calibration_error bins in the tensor's dtype, so the two differ when
     * values sit on bin edges. NAN elsewhere and for the other libraries. */
    double other_dtype[CS_CM_COUNT];
    int other_dtype_f64;
} cs_compat_lib_result;

typedef struct cs_compat_report {
    size_t n;                     /* samples measured (after selection) */
    uint32_t *rows;               /* owned, the dataset row of each sample (length n) */
    int bins;                     /* M */
    cs_lens_kind lens;            /* CS_LENS_TOP1 or CS_LENS_CLASSWISE */
    cs_binning binning;           /* CS_BIN_UNIFORM or CS_BIN_MASS */
    double calscope[CS_CM_COUNT]; /* calscope's own numbers for the same metrics */
    unsigned mask;                /* libraries computed (bit CS_COMPAT_x) */
    int torch_f64;                /* 1: CS_COMPAT_TORCH_F64 was asked for */
    cs_compat_lib_result lib[CS_COMPAT_COUNT];
} cs_compat_report;

/* Runs the libraries in `mask` on the samples the settings select (lens, bins, binning,
 * sigma, distance and select are honoured; kdtree binning and vector lenses are CS_EUSAGE);
 * mask may include CS_COMPAT_TORCH_F64.
 * Returns CS_OK, CS_EUSAGE (settings with no library counterpart, bad selection), CS_EEMPTY
 * (selection kept nothing) or CS_ENOMEM. On failure out holds nothing to free (but freeing it
 * is harmless). The dataset must have been prepared (cs_dataset_prepare). */
cs_status cs_compat_run(const cs_dataset *d, const cs_settings *s, unsigned mask,
                        cs_compat_report *out, cs_error *err);
/* The same, stopping with CS_ECANCELLED (out freed) when *cancel is raised: it is polled before
 * each library (each is one pass over the samples). cancel may be NULL. Any thread. */
cs_status cs_compat_run_cancellable(const cs_dataset *d, const cs_settings *s, unsigned mask,
                                    const atomic_int *cancel, cs_compat_report *out, cs_error *err);

/* Frees what the report owns (rows, moved flags, bin tables); the struct itself is the caller's. */
void cs_compat_report_free(cs_compat_report *r);

/* "torchmetrics", "torchmetrics-binary", "netcal", "relplot", "verified", "robustcal",
 * "monai". cs_compat_from_name returns the library or -1. Static strings. */
const char *cs_compat_name(cs_compat_lib lib);
int cs_compat_from_name(const char *name);
/* "ece", "ace", "mce", "rms", "aece", "sce", "rece_g", "rece_g_gaussian". */
const char *cs_compat_metric_name(int metric);
/* Short user-facing text of a rule, e.g. "[lo,hi) edge side". Static string. */
const char *cs_compat_rule_text(cs_compat_rule rule);

/* Copies the library's numbers into a cs_result the way `--compat NAME` reports them: ece,
 * ace, mce, aece, sce, rece_g and smece (with smece_sigma) follow the library (NAN where it
 * has none); l2ce, l2ce_debiased and ece_sweep are NAN (no library's version of them is
 * re-implemented); accuracy, brier, nll and rece_m are left as they are. */
void cs_compat_apply(const cs_compat_report *r, cs_compat_lib lib, cs_result *res);

#endif
