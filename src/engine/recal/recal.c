/* calscope engine, recalibration: fold plan, dataset copies, the four fits and their
 * application (see include/calscope/recal.h for the methods and the honesty rules).
 *
 * Layout of a fit: every row belongs to a group (its cross-fitting fold, or 0 = fitting row /
 * 1 = held-out row with a fit mask). Model m is fitted on the samples of the groups it uses:
 * cross-fitting model m < K uses every group but m and is applied to group m; model K uses all
 * groups and is only reported. With a mask, model 0 uses group 0 and is applied to every row.
 * Per-group sums are formed once per pass and combined per model, so K + 1 fits cost about one
 * pass over the data each (temperature scaling) or one sort (isotonic). */
#include "calscope/recal.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "calscope/resample.h"
#include "recal_internal.h"

static const char *const method_names[CS_RECAL_COUNT] = { "ts", "platt", "hist", "iso", "vs", "ets", "beta", "irova", "ms", "dir" };

const char *cs_recal_name(int method)
{
    return method >= 0 && method < CS_RECAL_COUNT ? method_names[method] : NULL;
}

const char *cs_recal_title(int method)
{
    switch (method) {
    case CS_RECAL_TS: return "temperature scaling";
    case CS_RECAL_PLATT: return "Platt scaling";
    case CS_RECAL_HIST: return "histogram binning";
    case CS_RECAL_ISO: return "isotonic regression";
    case CS_RECAL_VS: return "vector scaling";
    case CS_RECAL_ETS: return "ensemble temperature scaling";
    case CS_RECAL_BETA: return "beta calibration";
    case CS_RECAL_IROVA: return "one-vs-rest isotonic regression";
    case CS_RECAL_MS: return "matrix scaling (ODIR)";
    case CS_RECAL_DIR: return "Dirichlet calibration (ODIR)";
    default: return NULL;
    }
}

int cs_recal_from_name(const char *name)
{
    for (int m = 0; m < CS_RECAL_COUNT; m++)
        if (strcasecmp(name, method_names[m]) == 0) return m;
    if (strcasecmp(name, "temperature") == 0) return CS_RECAL_TS;
    if (strcasecmp(name, "histogram") == 0) return CS_RECAL_HIST;
    if (strcasecmp(name, "isotonic") == 0) return CS_RECAL_ISO;
    if (strcasecmp(name, "vector") == 0) return CS_RECAL_VS;
    return -1;
}

int cs_recal_offered(int method, size_t k, char *why, size_t size)
{
    if ((method == CS_RECAL_PLATT || method == CS_RECAL_BETA) && k != 2) {
        if (why) snprintf(why, size, "binary files only: this file has %zu classes", k);
        return 0;
    }
    if ((method == CS_RECAL_MS || method == CS_RECAL_DIR) && k > CS_RECAL_DM_MAX_K) {
        if (why) snprintf(why, size, "up to %d classes: this file has %zu (vs or ts instead)", CS_RECAL_DM_MAX_K, k);
        return 0;
    }
    return 1;
}

void cs_recal_info_clear(cs_recal_info *info)
{
    if (!info) return;
    free(info->vec);
    info->vec = NULL;
    info->n_vec = 0;
}

/* ---- shared by the parametric methods ---- */

#define LOGP_FLOOR 1e-300

void cs_rc_scores(const cs_dataset *d, double *s)
{
    size_t k = d->k;
    if (d->logit) {
        memcpy(s, d->logit, d->n * k * sizeof *s);
        return;
    }
    for (size_t i = 0; i < d->n * k; i++) s[i] = log(d->prob[i] > LOGP_FLOOR ? d->prob[i] : LOGP_FLOOR);
}

void cs_rc_model_name(const cs_rc_plan *pl, size_t m, char *buf, size_t size)
{
    if (!pl->cross) snprintf(buf, size, "the fit");
    else if (m == pl->n_groups) snprintf(buf, size, "the all-rows model");
    else snprintf(buf, size, "cross-fitting fold %zu", m + 1);
}

cs_status cs_rc_unconverged(const cs_dataset *d, const cs_rc_plan *pl, size_t m, const char *method,
                            int budget, double gtol, const cs_rc_min_result *res, cs_recal_info *info,
                            cs_error *err)
{
    char who[64];
    cs_rc_model_name(pl, m, who, sizeof who);
    info->unconverged = 1;
    return cs_error_set(err, CS_EINPUT, 0, 0,
                        "%s: %s did not converge within %d iterations in %s (largest gradient component %.3g, "
                        "wanted <= %g%s); not shown", d->path ? d->path : "?", method, budget, who, res->gnorm, gtol,
                        res->stalled ? ", the line search stalled" : "");
}

cs_status cs_rc_need_every_class(const cs_dataset *d, const cs_rc_plan *pl, const char *method,
                                 cs_error *err)
{
    size_t k = d->k, G = pl->n_groups;
    size_t *cnt = calloc(G * k, sizeof *cnt);
    if (!cnt) return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
    for (size_t j = 0; j < d->n_samples; j++) {
        size_t r = d->sample_rows[j];
        cnt[pl->group[r] * k + d->label[r]]++;
    }
    cs_status st = CS_OK;
    for (size_t m = 0; m < pl->n_models && st == CS_OK; m++)
        for (size_t c = 0; c < k && st == CS_OK; c++) {
            size_t n = 0;
            for (size_t g = 0; g < G; g++) if (cs_rc_uses(pl, m, g)) n += cnt[g * k + c];
            if (n) continue;
            char who[64], cls[64];
            cs_rc_model_name(pl, m, who, sizeof who);
            if (d->class_names && d->class_names[c]) snprintf(cls, sizeof cls, "'%.50s'", d->class_names[c]);
            else snprintf(cls, sizeof cls, "%zu", c);
            st = cs_error_set(err, CS_EINPUT, 0, 0,
                              "%s: %s needs every class among the fitting rows of every model, but class %s has none in %s "
                              "(its parameters would have no finite optimum); use ts, hist or iso, or fewer folds",
                              d->path ? d->path : "?", method, cls, who);
        }
    free(cnt);
    return st;
}

void cs_recal_options_default(cs_recal_options *o)
{
    memset(o, 0, sizeof *o);
    o->folds = 5;
    o->bins = 15;
}

/* ---- hashing and fold assignment ---- */

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

/* Key of a unit (an id name, or a row number without ids): a hash of its name mixed with the
 * seed, so the same id gets the same key in every file and every row order. */
static uint64_t unit_key(const cs_dataset *d, size_t unit, uint64_t seed)
{
    uint64_t h = d->id ? fnv1a(d->id_names[unit]) : cs_splitmix64((uint64_t)unit ^ 0x51ed270b27f1e5d3ull);
    return cs_splitmix64(h ^ cs_splitmix64(seed ^ 0x7265636170ull));
}

uint8_t *cs_recal_split_mask(const cs_dataset *d, double fraction, uint64_t seed)
{
    uint8_t *m = malloc(d->n ? d->n : 1);
    if (!m) return NULL;
    /* key / 2^64 < fraction, in long double-free integer arithmetic */
    double lim = fraction <= 0 ? 0 : fraction >= 1 ? 18446744073709551615.0 : fraction * 18446744073709551616.0;
    for (size_t r = 0; r < d->n; r++) {
        uint64_t k = unit_key(d, d->id ? (size_t)d->id[r] : r, seed);
        m[r] = (uint8_t)((double)k < lim);
    }
    return m;
}

int cs_recal_is_fit_value(const char *v, const char *fit_value)
{
    if (fit_value && fit_value[0]) return strcasecmp(v, fit_value) == 0;
    return strcasecmp(v, "fit") == 0 || strcasecmp(v, "train") == 0;
}

uint8_t *cs_recal_column_mask(const cs_dataset *d, const char *fit_value, cs_error *err)
{
    const char *path = d->path ? d->path : "?";
    if (!d->split || !d->split_names) {
        cs_error_set(err, CS_EUSAGE, 0, 0, "%s: no split column was loaded", path);
        return NULL;
    }
    uint8_t *fit_name = calloc(d->n_splits ? d->n_splits : 1, 1);
    uint8_t *m = malloc(d->n ? d->n : 1);
    if (!fit_name || !m) {
        free(fit_name);
        free(m);
        cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < d->n_splits; i++)
        fit_name[i] = (uint8_t)(d->split_names[i] && cs_recal_is_fit_value(d->split_names[i], fit_value));
    for (size_t r = 0; r < d->n; r++) m[r] = fit_name[d->split[r]];
    free(fit_name);
    size_t n_fit = 0, n_eval = 0;
    for (size_t j = 0; j < d->n_samples; j++) {
        if (m[d->sample_rows[j]]) n_fit++;
        else n_eval++;
    }
    if (n_fit && n_eval) return m;
    free(m);
    /* name what the column holds, so a misspelt value is easy to spot */
    char vals[200];
    size_t o = 0;
    vals[0] = '\0';
    for (size_t i = 0; i < d->n_splits; i++) {
        const char *nm = d->split_names[i] ? d->split_names[i] : "";
        if (o + strlen(nm) + 12 >= sizeof vals) {     /* room for this one and a final ", ..." */
            snprintf(vals + o, sizeof vals - o, "%s...", i ? ", " : "");
            break;
        }
        o += (size_t)snprintf(vals + o, sizeof vals - o, "%s'%s'", i ? ", " : "", nm);
    }
    char want[160];
    if (fit_value && fit_value[0]) snprintf(want, sizeof want, "'%.100s'", fit_value);
    else snprintf(want, sizeof want, "'fit' or 'train'");
    cs_error_set(err, CS_EINPUT, 0, 0, "%s: the split column leaves %s (fitting rows: value %s; its values: %s)",
                 path, n_fit ? "no row to evaluate on" : "no row to fit on", want, vals);
    return NULL;
}

/* Deals the units to K folds in the order of their keys (ties by unit number): fold sizes
 * differ by at most one. Fills pl->group per row. Returns 0 or -1. */
static int plan_folds(const cs_dataset *d, int K, uint64_t seed, cs_rc_plan *pl)
{
    size_t units = d->id ? d->n_ids : d->n;
    uint64_t *key = malloc((units ? units : 1) * sizeof *key);
    uint32_t *val = malloc((units ? units : 1) * sizeof *val);
    uint8_t *fold = malloc(units ? units : 1);
    if (!key || !val || !fold) goto fail;
    for (size_t u = 0; u < units; u++) {
        key[u] = unit_key(d, u, seed);
        val[u] = (uint32_t)u;
    }
    if (cs_sort_u64(key, val, units)) goto fail;
    for (size_t i = 0; i < units; i++) fold[val[i]] = (uint8_t)(i % (size_t)K);
    for (size_t r = 0; r < d->n; r++) pl->group[r] = fold[d->id ? (size_t)d->id[r] : r];
    free(key);
    free(val);
    free(fold);
    return 0;
fail:
    free(key);
    free(val);
    free(fold);
    return -1;
}

/* ---- dataset copies ---- */

static char **copy_names(char **names, size_t n, int *bad)
{
    if (!names) return NULL;
    char **c = calloc(n ? n : 1, sizeof *c);
    if (!c) { *bad = 1; return NULL; }
    for (size_t i = 0; i < n; i++)
        if (names[i] && !(c[i] = strdup(names[i]))) *bad = 1;
    return c;
}

/* Unprepared copy of the rows with mask[r] == keep_value (all rows when mask is NULL); the
 * probabilities are left uninitialised unless copy_prob is set. */
static cs_dataset *copy_rows(const cs_dataset *d, const uint8_t *mask, uint8_t keep_value,
                             const char *suffix, int keep_logits, int copy_prob, cs_error *err)
{
    size_t n = 0, k = d->k;
    for (size_t r = 0; r < d->n; r++) n += !mask || mask[r] == keep_value;
    if (n == 0) {
        cs_error_set(err, CS_EEMPTY, 0, 0, "%s: no row is left", d->path ? d->path : "?");
        return NULL;
    }
    cs_dataset *c = calloc(1, sizeof *c);
    if (!c) goto nomem;
    int bad = 0;
    size_t plen = strlen(d->path ? d->path : "") + strlen(suffix) + 1;
    c->path = malloc(plen);
    if (c->path) snprintf(c->path, plen, "%s%s", d->path ? d->path : "", suffix);
    c->n = n;
    c->k = k;
    c->prob = malloc(n * k * sizeof *c->prob);
    c->logit = keep_logits && d->logit ? malloc(n * k * sizeof *c->logit) : NULL;
    c->label = malloc(n * sizeof *c->label);
    if (d->class_names && !(c->class_names = cs_names_pack((const char *const *)d->class_names, k)))
        bad = 1;                    /* one block, as every dataset holds its class names */
    if (d->id) {
        c->id = malloc(n * sizeof *c->id);
        c->id_names = copy_names(d->id_names, d->n_ids, &bad);
        c->n_ids = d->n_ids;
        bad |= !c->id;
    }
    if (d->tta) bad |= !(c->tta = malloc(n * sizeof *c->tta));
    if (d->case_id) {
        c->case_id = malloc(n * sizeof *c->case_id);
        c->case_names = copy_names(d->case_names, d->n_cases, &bad);
        c->n_cases = d->n_cases;
        bad |= !c->case_id;
    }
    if (d->split) {
        c->split = malloc(n * sizeof *c->split);
        c->split_names = copy_names(d->split_names, d->n_splits, &bad);
        c->n_splits = d->n_splits;
        bad |= !c->split;
    }
    /* rows cut out (or skipped when loading) keep their data row positions: a cut file still
     * pairs by row with the other files' rows (cs_compare_pair) */
    if (d->row_pos || n != d->n) {
        bad |= !(c->row_pos = malloc(n * sizeof *c->row_pos));
        c->data_rows = d->row_pos ? d->data_rows : d->n;
    }
    c->split_col = d->split_col;
    if (bad || !c->path || !c->prob || !c->label || (keep_logits && d->logit && !c->logit)) {
        if (!c->id_names) c->n_ids = 0;
        if (!c->case_names) c->n_cases = 0;
        if (!c->split_names) c->n_splits = 0;
        cs_dataset_free(c);
        goto nomem;
    }
    size_t o = 0;
    for (size_t r = 0; r < d->n; r++) {
        if (mask && mask[r] != keep_value) continue;
        if (copy_prob) memcpy(c->prob + o * k, d->prob + r * k, k * sizeof *c->prob);
        if (c->logit) memcpy(c->logit + o * k, d->logit + r * k, k * sizeof *c->logit);
        c->label[o] = d->label[r];
        if (c->id) c->id[o] = d->id[r];
        if (c->tta) c->tta[o] = d->tta[r];
        if (c->case_id) c->case_id[o] = d->case_id[r];
        if (c->split) c->split[o] = d->split[r];
        if (c->row_pos) c->row_pos[o] = d->row_pos ? d->row_pos[r] : (uint32_t)r;
        o++;
    }
    return c;
nomem:
    cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
    return NULL;
}

cs_dataset *cs_dataset_subset(const cs_dataset *d, const uint8_t *mask, uint8_t keep_value,
                              const char *suffix, const cs_run *run, cs_error *err)
{
    if (cs_dataset_need_rows(d, "a subset of rows", err) != CS_OK) return NULL;
    cs_dataset *c = copy_rows(d, mask, keep_value, suffix, 1, 1, err);
    if (c && cs_dataset_prepare(c, run, err) != CS_OK) {
        cs_dataset_free(c);
        return NULL;
    }
    return c;
}

/* ---- the top-1 rescaling shared by hist and iso ---- */

void cs_rc_rescale_top1(const double *p, double *q, size_t k, double c_new)
{
    size_t top = 0;
    for (size_t j = 1; j < k; j++) if (p[j] > p[top]) top = j;
    double p2 = 0, rest = 0;
    for (size_t j = 0; j < k; j++) {
        if (j == top) continue;
        rest += p[j];
        if (p[j] > p2) p2 = p[j];
    }
    /* floor: the rescaled runner-up p2·(1−c')/rest must not pass c' (keeps the prediction) */
    double fl = rest > 0 ? p2 / (rest + p2) : 1.0 / (double)k;
    if (!(c_new >= fl)) c_new = fl;
    if (c_new > 1) c_new = 1;
    double f = rest > 0 ? (1 - c_new) / rest : 0;
    for (size_t j = 0; j < k; j++)
        q[j] = j == top ? c_new : rest > 0 ? p[j] * f : (1 - c_new) / (double)(k - 1);
    /* at the floor the rescaled runner-up equals c' only up to rounding, and ties go to the
     * first maximal index: lift the top to the runner-up (one ulp above it when the runner-up
     * comes first), so the prediction never changes; the row sum moves by an ulp at most */
    for (size_t j = 0; j < k; j++) {
        if (j == top) continue;
        if (j < top ? q[j] >= q[top] : q[j] > q[top]) q[top] = j < top ? nextafter(q[j], 2.0) : q[j];
    }
}

/* ---- dispatcher ---- */

static size_t argmax(const double *p, size_t k)
{
    size_t top = 0;
    for (size_t j = 1; j < k; j++) if (p[j] > p[top]) top = j;
    return top;
}

/* Samples whose predicted class (first maximal index, as the metrics take it) the
 * recalibrated probabilities q change, among the measured ones: all when cross-fitting, the
 * held-out ones (not the fitting rows) with a fit mask. */
static size_t count_changed(const cs_dataset *d, const cs_rc_plan *pl, const double *q)
{
    size_t n = 0, k = d->k;
    for (size_t j = 0; j < d->n_samples; j++) {
        size_t r = d->sample_rows[j];
        if (!pl->cross && pl->group[r] == 0) continue;
        n += argmax(q + r * k, k) != argmax(d->prob + r * k, k);
    }
    return n;
}

/* What a recalibration refuses before any work: an unknown method, folds or bins out of
 * range, a binary-only method on a multiclass file, an unprepared dataset. */
static cs_status check_method(const cs_dataset *d, int method, const cs_recal_options *o, cs_error *err)
{
    if (!cs_recal_name(method))
        return cs_error_set(err, CS_EUSAGE, 0, 0, "unknown recalibration method %d", method);
    if (!o->fit_mask && !o->split_fit && (o->folds < 2 || o->folds > CS_RECAL_MAX_FOLDS))
        return cs_error_set(err, CS_EUSAGE, 0, 0, "recalibration folds must be 2..%d, not %d", CS_RECAL_MAX_FOLDS, o->folds);
    if (method == CS_RECAL_HIST && (o->bins < 1 || o->bins > 100000))
        return cs_error_set(err, CS_EUSAGE, 0, 0, "histogram binning needs 1..100000 bins, not %d", o->bins);
    int offered = cs_recal_offered(method, d->k, NULL, 0);
    if (method == CS_RECAL_PLATT && !offered)
        return cs_error_set(err, CS_EUSAGE, 0, 0, "%s: Platt scaling needs a binary file (it has %zu classes); "
                            "use ts for multiclass files", d->path ? d->path : "?", d->k);
    if (method == CS_RECAL_BETA && !offered)
        return cs_error_set(err, CS_EUSAGE, 0, 0, "%s: beta calibration needs a binary file (it has %zu classes); "
                            "use ts, vs or ets for multiclass files", d->path ? d->path : "?", d->k);
    if ((method == CS_RECAL_MS || method == CS_RECAL_DIR) && !offered)
        return cs_error_set(err, CS_EUSAGE, 0, 0, "%s: %s fits (K-1)(K+1) = %zu parameters per model and is offered up to "
                            "%d classes (it has %zu); use vs or ts", d->path ? d->path : "?",
                            method == CS_RECAL_MS ? "matrix scaling" : "Dirichlet calibration", d->k * d->k - 1,
                            CS_RECAL_DM_MAX_K, d->k);
    if (!d->conf)
        return cs_error_set(err, CS_EUSAGE, 0, 0, "recalibration needs a prepared dataset");
    return CS_OK;
}

/* Which rows each model fits on and which it recalibrates: the fit mask's two groups (fit_mask
 * given), else o->folds seeded folds plus the model of all rows. pl->group is the caller's
 * (freed by it on success). CS_OK or CS_ENOMEM. */
static cs_status plan_groups(const cs_dataset *d, const cs_recal_options *o, const uint8_t *fit_mask,
                             cs_rc_plan *pl, cs_error *err)
{
    pl->group = malloc(d->n ? d->n : 1);
    if (!pl->group) return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
    if (fit_mask) {
        pl->cross = 0;
        pl->n_groups = 2;
        pl->n_models = 1;
        for (size_t r = 0; r < d->n; r++) pl->group[r] = fit_mask[r] ? 0 : 1;
        return CS_OK;
    }
    pl->cross = 1;
    pl->n_groups = (size_t)o->folds;
    pl->n_models = (size_t)o->folds + 1;
    if (plan_folds(d, o->folds, o->seed, pl)) {
        free(pl->group);
        pl->group = NULL;
        return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
    }
    return CS_OK;
}

/* Every model has a sample to fit on (CS_EEMPTY naming the method otherwise); the last
 * model's count goes to info->fit_rows. */
static cs_status check_fittable(const cs_dataset *d, int method, const cs_rc_plan *pl, cs_recal_info *info,
                                cs_error *err)
{
    size_t per_group[CS_RECAL_MAX_FOLDS] = { 0 };
    for (size_t j = 0; j < d->n_samples; j++) per_group[pl->group[d->sample_rows[j]]]++;
    for (size_t m = 0; m < pl->n_models; m++) {
        size_t nf = 0;
        for (size_t g = 0; g < pl->n_groups; g++) if (cs_rc_uses(pl, m, g)) nf += per_group[g];
        if (nf == 0)
            return cs_error_set(err, CS_EEMPTY, 0, 0, "%s: %s has no row to fit on%s", d->path ? d->path : "?",
                                method_names[method], pl->cross ? " in some cross-fitting fold (too few samples)" : "");
        if (m + 1 == pl->n_models) info->fit_rows = nf;
    }
    return CS_OK;
}

static int cancelled(const cs_recal_options *o)
{
    return o->cancel && atomic_load_explicit(o->cancel, memory_order_relaxed);
}

/* The method's models fitted by pl and applied, their probabilities into prob. */
static cs_status fit(const cs_dataset *d, int method, const cs_rc_plan *pl, const cs_recal_options *o,
                     double *prob, cs_recal_info *info, cs_error *err)
{
    if (cancelled(o)) return cs_error_set(err, CS_ECANCELLED, 0, 0, "cancelled");
    switch (method) {
    case CS_RECAL_TS: return cs_rc_temperature(d, pl, o, prob, info, err);
    case CS_RECAL_PLATT: return cs_rc_platt(d, pl, prob, info, err);
    case CS_RECAL_HIST: return cs_rc_hist(d, pl, o->bins, prob, err);
    case CS_RECAL_VS: return cs_rc_vs(d, pl, o, prob, info, err);
    case CS_RECAL_ETS: return cs_rc_ets(d, pl, o, prob, info, err);
    case CS_RECAL_BETA: return cs_rc_beta(d, pl, o, prob, info, err);
    case CS_RECAL_IROVA: return cs_rc_irova(d, pl, prob, err);
    case CS_RECAL_MS: return cs_rc_ms(d, pl, o, prob, info, err);
    case CS_RECAL_DIR: return cs_rc_dir(d, pl, o, prob, info, err);
    default: return cs_rc_iso(d, pl, prob, err);
    }
}

cs_dataset *cs_recal_apply(const cs_dataset *d, int method, const cs_recal_options *o,
                           cs_recal_info *info, cs_error *err)
{
    if (cs_dataset_need_rows(d, "recalibration", err) != CS_OK) return NULL;
    cs_recal_info tmp;
    if (!info) info = &tmp;
    memset(info, 0, sizeof *info);
    info->method = method;
    if (check_method(d, method, o, err) != CS_OK) return NULL;
    /* the fit mask: given, or from the split column */
    uint8_t *col_mask = NULL;
    if (!o->fit_mask && o->split_fit && !(col_mask = cs_recal_column_mask(d, o->split_fit, err)))
        return NULL;
    const uint8_t *fit_mask = o->fit_mask ? o->fit_mask : col_mask;
    char suffix[16];
    snprintf(suffix, sizeof suffix, "+%s", method_names[method]);
    /* every fit writes every probability, so they are not copied first */
    cs_dataset *c = copy_rows(d, NULL, 0, suffix, 0, 0, err);
    cs_rc_plan pl = { 0 };
    cs_status st = c ? plan_groups(d, o, fit_mask, &pl, err) : CS_ENOMEM;
    free(col_mask);
    if (st == CS_OK) st = check_fittable(d, method, &pl, info, err);
    if (st == CS_OK) {
        info->folds = pl.cross ? o->folds : 0;
        st = fit(d, method, &pl, o, c->prob, info, err);
        if (st == CS_OK) info->argmax_changed = count_changed(d, &pl, c->prob);
        if (st == CS_OK && cancelled(o)) st = cs_error_set(err, CS_ECANCELLED, 0, 0, "cancelled");
        const cs_run run = { .threads = o->threads, .cancel = o->cancel };
        if (st == CS_OK) st = cs_dataset_prepare(c, &run, err);
        if (st != CS_OK) cs_recal_info_clear(info);
    }
    free(pl.group);
    if (st != CS_OK) {
        cs_dataset_free(c);
        return NULL;
    }
    return c;
}
