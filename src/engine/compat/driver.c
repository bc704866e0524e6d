/* Compat mode driver: selects the samples like every other metric (cs_prepare), computes
 * calscope's own numbers (cs_evaluate), then hands the same samples to each library's
 * re-implementation and keeps the per-sample "moved" bookkeeping they share. */
#include "engine/compat/cx.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/sort/sort.h"

static const char *const lib_names[CS_COMPAT_COUNT] = {
    "torchmetrics", "torchmetrics-binary", "netcal", "relplot", "verified", "robustcal", "monai",
};
static const char *const metric_names[CS_CM_COUNT] = {
    "ece", "ace", "mce", "rms", "aece", "sce", "rece_g", "rece_g_gaussian",
};
static const char *const rule_texts[CS_RULE_COUNT] = {
    "on an inner edge: [lo,hi) puts it in the upper bin",
    "exactly 1.0: extra bin M",
    "float32 value/edges put it across the edge",
    "edge arithmetic (i*(1/M) or f/(1/M), not i/M)",
    "exactly 0: (lo,hi] bins leave it in no bin",
    "clipped to [eps, 1-eps]",
    "tie at an equal-mass boundary stays in one bin",
    "at/below the first equal-mass edge: in no bin",
    "equal-mass bins built another way",
};

const char *cs_compat_name(cs_compat_lib lib)
{
    return (unsigned)lib < CS_COMPAT_COUNT ? lib_names[lib] : "?";
}

int cs_compat_from_name(const char *name)
{
    for (int i = 0; i < CS_COMPAT_COUNT; i++)
        if (strcmp(name, lib_names[i]) == 0) return i;
    return -1;
}

const char *cs_compat_metric_name(int metric)
{
    return metric >= 0 && metric < CS_CM_COUNT ? metric_names[metric] : "?";
}

const char *cs_compat_rule_text(cs_compat_rule rule)
{
    return (unsigned)rule < CS_RULE_COUNT ? rule_texts[rule] : "?";
}

int cx_left_closed_bin(double v, int M)
{
    if (v >= 1.0) return M;
    int b = (int)floor(v * (double)M);
    if (b < 0) b = 0;
    if (b > M - 1) b = M - 1;
    while (b > 0 && v < (double)b / (double)M) b--;
    while (b < M - 1 && v >= (double)(b + 1) / (double)M) b++;
    return b;
}

void cx_linspace_f64(double *e, int M)
{
    double step = 1.0 / (double)M;
    for (int i = 0; i < M; i++) e[i] = (double)i * step + 0.0;
    e[M] = 1.0;
}

void cx_note(cs_compat_lib_result *o, int metric, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(o->notes[metric], sizeof o->notes[metric], fmt, ap);
    va_end(ap);
}

void cx_note_settings(cs_compat_lib_result *o, int metric, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(o->notes[metric], sizeof o->notes[metric], fmt, ap);
    va_end(ap);
    o->na_settings |= 1u << metric;
}

int cx_table_new(cs_compat_lib_result *o, size_t nb, int pooled, const char *fmt, ...)
{
    free(o->bins);
    o->n_bins = 0;
    o->bins = malloc((nb ? nb : 1) * sizeof *o->bins);
    if (!o->bins) return -1;
    for (size_t b = 0; b < nb; b++)
        o->bins[b] = (cs_bin){ INFINITY, -INFINITY, 0, 0.0, 0.0, 0.0 };
    o->n_bins = nb;
    o->bins_pooled = pooled;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(o->bins_note, sizeof o->bins_note, fmt, ap);
    va_end(ap);
    return 0;
}

void cx_table_add(cs_compat_lib_result *o, size_t b, double lo, double hi, double count,
                  double sum_conf, double sum_acc)
{
    cs_bin *t = &o->bins[b];
    if (lo < t->lo) t->lo = lo;
    if (hi > t->hi) t->hi = hi;
    t->count += (size_t)count;
    t->conf += sum_conf;
    t->acc += sum_acc;
}

void cx_table_finish(cs_compat_lib_result *o, int empty)
{
    /* bins no class reached (de-duplicated per-class edges leave fewer bins) are not bins */
    while (o->n_bins && o->bins[o->n_bins - 1].lo == INFINITY) o->n_bins--;
    for (size_t b = 0; b < o->n_bins; b++) {
        cs_bin *t = &o->bins[b];
        if (t->count) {
            t->conf /= (double)t->count;
            t->acc /= (double)t->count;
            t->gap = fabs(t->conf - t->acc);
        } else {
            t->conf = t->acc = empty == CX_EMPTY_ZERO ? 0.0 : NAN;
            t->gap = empty == CX_EMPTY_NAN ? NAN : 0.0;
        }
    }
}

void cx_table_none(cs_compat_lib_result *o, const char *fmt, ...)
{
    free(o->bins);
    o->bins = NULL;
    o->n_bins = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(o->bins_note, sizeof o->bins_note, fmt, ap);
    va_end(ap);
}

void cx_move(cs_compat_lib_result *o, size_t i, const cx_in *in, int cls, double v,
             int csb, int lib_bin, cs_compat_rule rule)
{
    if (!o->moved_flag[i]) {
        o->moved_flag[i] = 1;
        o->moved++;
    }
    if (o->n_examples < CS_COMPAT_EXAMPLES) {
        cs_compat_move *m = &o->examples[o->n_examples++];
        m->row = in->rows[i];
        m->cls = cls;
        m->value = v;
        m->cs_bin = csb;
        m->lib_bin = lib_bin;
        m->rule = rule;
    }
}

int cx_mass_moves(cs_compat_lib_result *o, const cx_in *in, const int *lib_bin, int nb,
                  cs_compat_rule (*rule_of)(const cx_in *in, size_t i, int lib_bin))
{
    /* Bin numbers of two equal-mass schemes are not comparable once one of them merges or
     * drops bins, so each library bin is matched with the calscope group that holds most of
     * its members; only the members outside that group count as moved. */
    int M = in->M;
    size_t *cnt = calloc((size_t)nb * (size_t)M, sizeof *cnt);
    int *match = malloc((size_t)nb * sizeof *match);
    if (!cnt || !match) { free(cnt); free(match); return -1; }
    for (size_t i = 0; i < in->n; i++)
        if (lib_bin[i] >= 0) cnt[(size_t)lib_bin[i] * (size_t)M + (size_t)in->cs_mass[i]]++;
    for (int b = 0; b < nb; b++) {
        int best = -1;
        size_t bc = 0;
        for (int g = 0; g < M; g++)
            if (cnt[(size_t)b * (size_t)M + (size_t)g] > bc) { bc = cnt[(size_t)b * (size_t)M + (size_t)g]; best = g; }
        match[b] = best;
    }
    for (size_t i = 0; i < in->n; i++) {
        int lb = lib_bin[i];
        if (lb < 0 || match[lb] != in->cs_mass[i])
            cx_move(o, i, in, -1, in->conf[i], in->cs_mass[i], lb, rule_of(in, i, lb));
    }
    free(cnt);
    free(match);
    return 0;
}

void cs_compat_report_free(cs_compat_report *r)
{
    if (!r) return;
    free(r->rows);
    r->rows = NULL;
    for (int i = 0; i < CS_COMPAT_COUNT; i++) {
        free(r->lib[i].moved_flag);
        r->lib[i].moved_flag = NULL;
        free(r->lib[i].bins);
        r->lib[i].bins = NULL;
        r->lib[i].n_bins = 0;
    }
}

/* Samples by top-1 confidence, ties in sample order (the engine's one stable sort). */
static int by_conf(uint32_t a, uint32_t b, const void *ctx)
{
    const double *conf = ctx;
    return (conf[a] > conf[b]) - (conf[a] < conf[b]);
}

static void calscope_numbers(const cs_prepared *p, const cs_plan *pl, double *out)
{
    cs_error err;
    cs_result r;
    memset(&r, 0, sizeof r);
    for (int m = 0; m < CS_CM_COUNT; m++) out[m] = NAN;
    if (cs_evaluate(p, NULL, 0, CS_WANT_BINNED | CS_WANT_AECE | CS_WANT_SCE | CS_WANT_RECE_G,
                    NULL, &r, &err) == CS_OK) {
        out[CS_CM_ECE] = r.ece;
        out[CS_CM_ACE] = r.ace;
        out[CS_CM_MCE] = r.mce;
        out[CS_CM_AECE] = r.aece;
        out[CS_CM_SCE] = r.sce;
        out[CS_CM_RECE_G] = r.rece_g;
        out[CS_CM_RECE_G_GAUSS] = r.rece_g;
    }
    cs_result_free(&r);
    /* The RMS is calscope's ECE under the l2 distance with the chosen lens and binning (the
     * ece/ace/mce/rms rows follow the settings; aece, sce and rece_g name their own). */
    cs_settings s2 = pl->s;
    s2.distance = CS_DIST_L2;
    cs_prepared *p2 = cs_prepare_planned(pl, &s2, &err);
    if (p2) {
        memset(&r, 0, sizeof r);
        if (cs_evaluate(p2, NULL, 0, CS_WANT_BINNED, NULL, &r, &err) == CS_OK) out[CS_CM_RMS] = r.ece;
        cs_result_free(&r);
        cs_prepared_free(p2);
    }
}

cs_status cs_compat_run(const cs_dataset *d, const cs_settings *s, unsigned mask,
                        cs_compat_report *out, cs_error *err)
{
    return cs_compat_run_cancellable(d, s, mask, NULL, out, err);
}

/* What --compat refuses before any work: a lens, binning or distance no library measures. */
static cs_status check_compat(const cs_dataset *d, const cs_settings *s, unsigned mask, cs_error *err)
{
    int relplot_only = (mask & CS_COMPAT_ALL_MASK) == (1u << CS_COMPAT_RELPLOT);
    if (s->lens == CS_LENS_CLASS && !relplot_only)
        return cs_error_set(err, CS_EUSAGE, 0, 0,
                            "--compat with --lens class:C needs --compat relplot (the other libraries measure top1 or classwise only)");
    if (s->lens != CS_LENS_TOP1 && s->lens != CS_LENS_CLASSWISE && s->lens != CS_LENS_CLASS)
        return cs_error_set(err, CS_EUSAGE, 0, 0,
                            "--compat needs --lens top1 or classwise (the libraries measure nothing else)");
    if (s->binning != CS_BIN_UNIFORM && s->binning != CS_BIN_MASS)
        return cs_error_set(err, CS_EUSAGE, 0, 0, "--compat needs --binning uniform or mass (no library has kd-tree bins)");
    if (s->distance == CS_DIST_INTERVAL)
        return cs_error_set(err, CS_EUSAGE, 0, 0, "--compat does not apply to the interval distance");
    if (!d->conf) return cs_error_set(err, CS_EUSAGE, 0, 0, "dataset not prepared");
    return CS_OK;
}

/* The libraries' inputs beside out->rows: each sample's value (p[C] of class:C, else the
 * top-1 confidence) and outcome, and its equal-mass bin (by value, ties in sample order). 0,
 * or -1 out of memory. */
static int compat_samples(const cs_dataset *d, int cls, int bins, size_t n, const uint32_t *rows,
                          double *conf, uint8_t *correct, int *cs_mass, uint32_t *order)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t row = rows[i];
        conf[i] = cls >= 0 ? d->prob[(size_t)row * d->k + (size_t)cls] : d->conf[row];
        correct[i] = cls >= 0 ? d->label[row] == cls : d->correct[row];
        order[i] = (uint32_t)i;
    }
    if (cs_sort_by(order, n, by_conf, conf)) return -1;
    for (size_t g = 0, pos = 0; g < (size_t)bins; g++) {
        size_t q = n / (size_t)bins, r = n % (size_t)bins;
        size_t len = q + (g < r);
        for (size_t j = 0; j < len; j++) cs_mass[order[pos++]] = (int)g;
    }
    return 0;
}

/* Library l's numbers into out->lib[l] (every number NAN where it is not asked for). 0; -1
 * out of memory; 1 cancelled. */
static int run_library(int l, const cx_in *in, const atomic_int *cancel, cs_compat_report *out)
{
    cs_compat_lib_result *o = &out->lib[l];
    o->lib = (cs_compat_lib)l;
    for (int m = 0; m < CS_CM_COUNT; m++) o->m[m] = o->other_dtype[m] = NAN;
    o->smece = o->smece_sigma = NAN;
    snprintf(o->smece_note, sizeof o->smece_note, "%s has no smooth ECE", lib_names[l]);
    if (!(out->mask & (1u << l))) return 0;
    if (cancel && atomic_load_explicit(cancel, memory_order_relaxed)) return 1;
    o->applicable = 1;
    o->moved_flag = calloc(in->n ? in->n : 1, 1);
    if (!o->moved_flag) return -1;
    int rc = 0;
    switch ((cs_compat_lib)l) {
    case CS_COMPAT_TORCHMETRICS: rc = cx_torchmetrics(in, o, 0); break;
    case CS_COMPAT_TORCHMETRICS_BINARY: rc = cx_torchmetrics(in, o, 1); break;
    case CS_COMPAT_NETCAL: rc = cx_netcal(in, o); break;
    case CS_COMPAT_RELPLOT: rc = cx_relplot(in, o); break;
    case CS_COMPAT_VERIFIED: rc = cx_verified(in, o); break;
    case CS_COMPAT_ROBUSTCAL: rc = cx_robustcal(in, o); break;
    case CS_COMPAT_MONAI: rc = cx_monai(in, o); break;
    default: break;
    }
    if (rc) return -1;
    o->bins_counted = 0;
    for (size_t b = 0; b < o->n_bins; b++) o->bins_counted += o->bins[b].count;
    if (!o->bins && !o->bins_note[0])
        snprintf(o->bins_note, sizeof o->bins_note, "%s", o->applicable
                 ? "the library has no bin table for these settings"
                 : "the library cannot measure this input");
    return 0;
}

/* Every library over the plan's problem p. */
static cs_status compat_of(const cs_plan *pl, const cs_prepared *p, unsigned mask,
                           const atomic_int *cancel, cs_compat_report *out, cs_error *err)
{
    const cs_dataset *d = pl->d;
    const cs_settings *s = &pl->s;
    size_t n = cs_prepared_count(p);
    out->n = n;
    out->bins = s->bins;
    out->lens = s->lens;
    out->binning = s->binning;
    out->mask = mask & CS_COMPAT_ALL_MASK;
    out->torch_f64 = (mask & CS_COMPAT_TORCH_F64) != 0;
    out->rows = malloc((n ? n : 1) * sizeof *out->rows);
    double *conf = malloc((n ? n : 1) * sizeof *conf);
    uint8_t *correct = malloc(n ? n : 1);
    int *cs_mass = malloc((n ? n : 1) * sizeof *cs_mass);
    uint32_t *order = malloc((n ? n : 1) * sizeof *order);
    int rc = !out->rows || !conf || !correct || !cs_mass || !order ? -1 : 0;
    /* class:C (relplot only; the plan has resolved the class): the value is p[C] */
    int cls = s->lens == CS_LENS_CLASS ? pl->cls : -1;
    if (rc == 0) {
        memcpy(out->rows, cs_prepared_rows(p), n * sizeof *out->rows);
        rc = compat_samples(d, cls, s->bins, n, out->rows, conf, correct, cs_mass, order);
    }
    if (rc == 0) calscope_numbers(p, pl, out->calscope);
    cx_in in = { d, out->rows, n, d->k, s->bins, s->sigma, s->lens == CS_LENS_CLASSWISE,
                 s->binning == CS_BIN_MASS, s->distance == CS_DIST_L2, out->torch_f64, conf, correct,
                 cs_mass, s->smece_sigma, cls };
    for (int l = 0; l < CS_COMPAT_COUNT && rc == 0; l++) rc = run_library(l, &in, cancel, out);
    free(conf);
    free(correct);
    free(cs_mass);
    free(order);
    cs_status st = rc == 0 ? CS_OK
                 : rc > 0 ? cs_error_set(err, CS_ECANCELLED, 0, 0, "cancelled")
                          : cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory in compat mode");
    if (st != CS_OK) cs_compat_report_free(out);
    return st;
}

cs_status cs_compat_run_cancellable(const cs_dataset *d, const cs_settings *s, unsigned mask,
                                    const atomic_int *cancel, cs_compat_report *out, cs_error *err)
{
    if (cs_dataset_need_rows(d, "--compat", err) != CS_OK) { memset(out, 0, sizeof *out); return err->code; }
    memset(out, 0, sizeof *out);
    if (check_compat(d, s, mask, err) != CS_OK) return err->code;
    cs_plan *pl = cs_plan_new(d, s, err);
    cs_prepared *p = pl ? cs_prepare_planned(pl, NULL, err) : NULL;
    cs_status st = p ? compat_of(pl, p, mask, cancel, out, err) : err->code;
    cs_prepared_free(p);
    cs_plan_free(pl);
    return st;
}

void cs_compat_apply(const cs_compat_report *r, cs_compat_lib lib, cs_result *res)
{
    const double *m = r->lib[lib].m;
    res->ece = m[CS_CM_ECE];
    res->ace = m[CS_CM_ACE];
    res->mce = m[CS_CM_MCE];
    res->aece = m[CS_CM_AECE];
    res->sce = m[CS_CM_SCE];
    res->rece_g = m[CS_CM_RECE_G];
    res->smece = r->lib[lib].smece;
    res->smece_sigma = r->lib[lib].smece_sigma;
    res->l2ce = res->l2ce_debiased = res->ece_sweep = res->ece_sweep_bins = NAN;
}
