/* Internals of compat mode shared by the driver (driver.c) and the one-file-per-library
 * re-implementations (torchmetrics.c, netcal.c, relplot.c, verified.c, robustcal.c, monai.c).
 * Every function here is called from cs_compat_run's thread only. */
#ifndef CALSCOPE_ENGINE_COMPAT_CX_H
#define CALSCOPE_ENGINE_COMPAT_CX_H

#include <stddef.h>
#include <stdint.h>

#include "calscope/compat.h"
#include "engine/num/ubin.h"   /* calscope's own bin of a value: cs_ubin (the one rule) */

/* What every library sees: the selected samples and calscope's own view of them. */
typedef struct cx_in {
    const cs_dataset *d;
    const uint32_t *rows;     /* n dataset rows */
    size_t n, k;
    int M;
    double sigma;
    int classwise;            /* --lens classwise */
    int mass;                 /* --binning mass */
    int l2;                   /* --distance l2: `ece` is the RMS */
    int torch_f64;            /* CS_COMPAT_TORCH_F64: the torch libraries get float64 tensors */
    const double *conf;       /* n, calscope's top-1 confidence (double) */
    const uint8_t *correct;   /* n, label == first argmax */
    const int *cs_mass;       /* n, calscope's equal-mass group of conf (stable sort, array_split) */
    double smece_sigma;       /* --smece-sigma (0: automatic) */
    int cls;                  /* --lens class:C (relplot only): conf is p[C], correct label == C; else -1 */
} cx_in;

/* Probability of class c for sample i. */
static inline double cx_p(const cx_in *in, size_t i, size_t c)
{
    return in->d->prob[(size_t)in->rows[i] * in->k + c];
}
static inline int32_t cx_label(const cx_in *in, size_t i)
{
    return in->d->label[in->rows[i]];
}

/* Bin of v under [i/M, (i+1)/M) on the exact decimal edges i/M, 1.0 in bin M: used to tell an
 * edge-side move from an arithmetic or precision one. */
int cx_left_closed_bin(double v, int M);

/* torch's CPU primitives as torch 1.13 runs them with AVX2 (torchprim.c; checked against torch
 * by test_compat.c through tests/fixtures/torch_prims.txt):
 * torch.linspace(start, end, steps) in float32 / float64 into e[steps]; */
void cx_torch_linspace_f32(float *e, float start, float end, int steps);
void cx_torch_linspace_f64(double *e, double start, double end, int steps);
/* torch.bucketize(v, e[0..n-1], right=True): the number of edges <= v; */
int cx_torch_bucketize_right_f32(const float *e, int n, float v);
int cx_torch_bucketize_right_f64(const double *e, int n, double v);
/* torch.sum(x[0..n-1]) of a contiguous tensor, in its own precision. */
float cx_torch_sum_f32(const float *x, size_t n);
double cx_torch_sum_f64(const double *x, size_t n);
/* np.linspace(0.0, 1.0, M + 1): i * (1.0 / M), the last value set to exactly 1.0
 * (numpy/core/function_base.py linspace: y = arange(0, num) * step + start; y[-1] = stop). */
void cx_linspace_f64(double *e, int M);

/* Records that sample i (class cls, -1 for top-1) is in lib_bin where calscope has cs_bin. */
void cx_move(cs_compat_lib_result *o, size_t i, const cx_in *in, int cls, double v,
             int csb, int lib_bin, cs_compat_rule rule);
/* Equal-mass moves: lib_bin[i] (-1 = in no bin) is the library's bin of sample i's top-1
 * value; each library bin is matched with the calscope group holding most of its members and
 * a sample is moved when its calscope group is not its bin's match. rule_of picks the rule. */
int cx_mass_moves(cs_compat_lib_result *o, const cx_in *in, const int *lib_bin, int nb,
                  cs_compat_rule (*rule_of)(const cx_in *in, size_t i, int lib_bin));

/* Bin tables (cs_compat_lib_result.bins). cx_table_new allocates nb bins ready for cx_table_add
 * (lo = +inf, hi = -inf, sums 0) and sets bins_note; returns -1 when memory ran out. */
int cx_table_new(cs_compat_lib_result *o, size_t nb, int pooled, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* Adds one class's (or the top-1 value's) bin b: its edges widen lo / hi, count and the sums of
 * value and target accumulate in count / conf / acc until cx_table_finish. */
void cx_table_add(cs_compat_lib_result *o, size_t b, double lo, double hi, double count,
                  double sum_conf, double sum_acc);
/* What a library puts in an empty bin. */
enum { CX_EMPTY_ZERO,      /* conf = acc = gap = 0 */
       CX_EMPTY_GAP0,      /* conf, acc undefined (NAN), gap 0 */
       CX_EMPTY_NAN };     /* all NAN */
/* Turns the sums into means (conf, acc) and gap = |conf - acc|. */
void cx_table_finish(cs_compat_lib_result *o, int empty);
/* No table: note why (bins stays NULL). */
void cx_table_none(cs_compat_lib_result *o, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

void cx_note(cs_compat_lib_result *o, int metric, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* cx_note for a metric the library has, but not under the chosen lens / binning / distance
 * (cs_compat_lib_result.na_settings): the report prints these reasons beside the n/a. */
void cx_note_settings(cs_compat_lib_result *o, int metric, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* The libraries. Each fills o->m / notes / semantics / call / moves and returns 0, or -1 when
 * memory ran out. */
int cx_torchmetrics(const cx_in *in, cs_compat_lib_result *o, int binary);
int cx_netcal(const cx_in *in, cs_compat_lib_result *o);
int cx_relplot(const cx_in *in, cs_compat_lib_result *o);
int cx_verified(const cx_in *in, cs_compat_lib_result *o);
int cx_robustcal(const cx_in *in, cs_compat_lib_result *o);
int cx_monai(const cx_in *in, cs_compat_lib_result *o);

#endif
