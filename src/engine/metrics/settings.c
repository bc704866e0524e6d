/* Settings: the documented defaults and the parsers of their command-line spellings (the flag
 * table, src/session/flags.c, renders them back). */
#include "calscope/metrics.h"
#include "calscope/run.h"
#include "engine/num/num.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void cs_settings_default(cs_settings *s)
{
    memset(s, 0, sizeof *s);
    s->lens = CS_LENS_TOP1;
    s->topk = 1;
    s->binning = CS_BIN_UNIFORM;
    s->bins = 15;
    s->gamma = 0.1;
    s->sigma = 0.1;
    s->distance = CS_DIST_TVD;
    s->interval_lo = 0.0;
    s->interval_hi = 1.0;
    s->mixture = CS_MIX_KDE;
}

/* The loader's number rule (engine/num/num.h), so a flag, a --check bound and a data field
 * read a number alike: the whole string a decimal ([+-]digits[.digits][e[+-]digits]; no hex,
 * no blank), finite; a value that underflows to a subnormal or zero (1e-320) is taken as
 * strtod gives it, an overflow (1e999) is refused. */
int cs_parse_number(const char *t, double *out)
{
    return t && cs_load_parse_double(t, strlen(t), out) == CSL_NUM_OK;
}

int cs_parse_whole(const char *t, long lo, long hi, long *out)
{
    if (!t || !*t || !(*t == '+' || (*t >= '0' && *t <= '9'))) return 0;
    char *end;
    errno = 0;
    long v = strtol(t, &end, 10);
    if (end == t || *end != '\0' || errno == ERANGE || v < lo || v > hi) return 0;
    *out = v;
    return 1;
}

cs_status cs_settings_set_lens(cs_settings *s, const char *text, cs_error *err)
{
    const char *t = text ? text : "";
    if (strcasecmp(t, "top1") == 0) {
        s->lens = CS_LENS_TOP1; s->topk = 1; s->lens_arg[0] = '\0';
        return CS_OK;
    }
    if (strcasecmp(t, "classwise") == 0) {
        s->lens = CS_LENS_CLASSWISE; s->lens_arg[0] = '\0';
        return CS_OK;
    }
    if (strcasecmp(t, "full") == 0) {
        s->lens = CS_LENS_FULL; s->lens_arg[0] = '\0';
        return CS_OK;
    }
    if (strncasecmp(t, "topk:", 5) == 0) {
        long k;
        if (!cs_parse_whole(t + 5, 1, INT_MAX, &k))
            return cs_error_set(err, CS_EUSAGE, 0, 0,
                                "--lens: topk needs a whole number k >= 1 (topk:K), got '%s'", t);
        s->lens = CS_LENS_TOPK; s->topk = (int)k; s->lens_arg[0] = '\0';
        return CS_OK;
    }
    if (strncasecmp(t, "class:", 6) == 0 || strncasecmp(t, "group:", 6) == 0) {
        int group = (t[0] == 'g' || t[0] == 'G');
        const char *arg = t + 6;
        if (!*arg)
            return cs_error_set(err, CS_EUSAGE, 0, 0, "--lens: %s needs an argument (%s)",
                                group ? "group" : "class",
                                group ? "group:A,B;C,D" : "class:C, a class name, number or #index");
        if (strlen(arg) >= CS_SPEC_MAX)
            return cs_error_set(err, CS_EUSAGE, 0, 0, "--lens: argument too long (max %d bytes)",
                                CS_SPEC_MAX - 1);
        s->lens = group ? CS_LENS_GROUP : CS_LENS_CLASS;
        memcpy(s->lens_arg, arg, strlen(arg) + 1);
        return CS_OK;
    }
    return cs_error_set(err, CS_EUSAGE, 0, 0,
                        "--lens: unknown lens '%s' (top1|topk:K|class:C|classwise|group:A,B;C,D|full)",
                        t);
}

cs_status cs_settings_set_binning(cs_settings *s, const char *text, cs_error *err)
{
    const char *t = text ? text : "";
    if (strcasecmp(t, "uniform") == 0) s->binning = CS_BIN_UNIFORM;
    else if (strcasecmp(t, "mass") == 0) s->binning = CS_BIN_MASS;
    else if (strcasecmp(t, "kdtree") == 0) s->binning = CS_BIN_KDTREE;
    else
        return cs_error_set(err, CS_EUSAGE, 0, 0,
                            "--binning: unknown scheme '%s' (uniform|mass|kdtree)", t);
    return CS_OK;
}

cs_status cs_settings_set_distance(cs_settings *s, const char *text, cs_error *err)
{
    const char *t = text ? text : "";
    if (strcasecmp(t, "tvd") == 0) { s->distance = CS_DIST_TVD; return CS_OK; }
    if (strcasecmp(t, "l2") == 0) { s->distance = CS_DIST_L2; return CS_OK; }
    if (strcasecmp(t, "max") == 0) { s->distance = CS_DIST_MAX; return CS_OK; }
    if (strncasecmp(t, "interval:", 9) == 0) {
        char buf[128];
        size_t len = strlen(t + 9);
        if (len >= sizeof buf) goto bad_interval;
        memcpy(buf, t + 9, len + 1);
        char *comma = strchr(buf, ',');
        if (!comma) goto bad_interval;
        *comma = '\0';
        double lo, hi;
        if (!cs_parse_number(buf, &lo) || !cs_parse_number(comma + 1, &hi)) goto bad_interval;
        if (lo < 0 || hi > 1 || lo > hi)
            return cs_error_set(err, CS_EUSAGE, 0, 0,
                                "--distance: interval needs 0 <= L <= H <= 1, got '%s'", t);
        s->distance = CS_DIST_INTERVAL;
        s->interval_lo = lo;
        s->interval_hi = hi;
        return CS_OK;
    bad_interval:
        return cs_error_set(err, CS_EUSAGE, 0, 0,
                            "--distance: interval needs two numbers (interval:L,H), got '%s'", t);
    }
    return cs_error_set(err, CS_EUSAGE, 0, 0,
                        "--distance: unknown distance '%s' (tvd|l2|max|interval:L,H)", t);
}

cs_status cs_settings_set_mixture(cs_settings *s, const char *text, cs_error *err)
{
    const char *t = text ? text : "";
    if (strcasecmp(t, "kde") == 0) s->mixture = CS_MIX_KDE;
    else if (strcasecmp(t, "gmm3") == 0) s->mixture = CS_MIX_GMM3;
    else return cs_error_set(err, CS_EUSAGE, 0, 0, "--mixture: unknown mixture '%s' (kde|gmm3)", t);
    return CS_OK;
}

cs_status cs_settings_set_bins(cs_settings *s, const char *text, cs_error *err)
{
    long m;
    if (!cs_parse_whole(text, 1, CS_BINS_MAX, &m))
        return cs_error_set(err, CS_EUSAGE, 0, 0,
                            "--bins: need a whole number between 1 and %d, got '%s'", CS_BINS_MAX,
                            text ? text : "");
    s->bins = (int)m;
    return CS_OK;
}

cs_status cs_settings_set_gamma(cs_settings *s, const char *text, cs_error *err)
{
    double g;
    if (!cs_parse_number(text, &g) || !(g > 0) || g > 1)
        return cs_error_set(err, CS_EUSAGE, 0, 0, "--gamma: need a number in (0, 1], got '%s'",
                            text ? text : "");
    s->gamma = g;
    return CS_OK;
}

cs_status cs_settings_set_sigma(cs_settings *s, const char *text, cs_error *err)
{
    double v;
    if (!cs_parse_number(text, &v) || !(v >= CS_SIGMA_MIN && v <= CS_SIGMA_MAX))
        return cs_error_set(err, CS_EUSAGE, 0, 0, "--sigma: need a number in [%g, %g], got '%s'",
                            CS_SIGMA_MIN, CS_SIGMA_MAX, text ? text : "");
    s->sigma = v;
    return CS_OK;
}

cs_status cs_settings_set_smece_sigma(cs_settings *s, const char *text, cs_error *err)
{
    double v;
    if (!cs_parse_number(text, &v) || !(v >= CS_SMECE_SIGMA_MIN && v <= CS_SMECE_SIGMA_MAX))
        return cs_error_set(err, CS_EUSAGE, 0, 0, "--smece-sigma: need a number in [%g, %g], got '%s'",
                            CS_SMECE_SIGMA_MIN, CS_SMECE_SIGMA_MAX, text ? text : "");
    s->smece_sigma = v;
    return CS_OK;
}

cs_status cs_settings_set_boot_size(cs_settings *s, const char *text, cs_error *err)
{
    long v;
    if (text && strcmp(text, "auto") == 0) v = 0;
    else if (text && strcmp(text, "full") == 0) v = CS_BOOT_SIZE_FULL;
    else if (!cs_parse_whole(text, CS_BOOT_SIZE_MIN, CS_BOOT_SIZE_MAX, &v))
        return cs_error_set(err, CS_EUSAGE, 0, 0,
                            "--boot-size: need auto, full or a whole number of samples from %ld to %ld, got '%s'",
                            CS_BOOT_SIZE_MIN, CS_BOOT_SIZE_MAX, text ? text : "");
    s->boot_size = v;
    return CS_OK;
}

cs_status cs_parse_threads(const char *text, int *out, cs_error *err)
{
    long v;
    if (!cs_parse_whole(text, 0, CS_THREADS_MAX, &v))
        return cs_error_set(err, CS_EUSAGE, 0, 0,
                            "--threads: need a whole number between 0 (all cores) and %d, got '%s'",
                            CS_THREADS_MAX, text ? text : "");
    *out = (int)v;
    return CS_OK;
}

cs_status cs_parse_resamples(const char *flag, const char *text, long lo, int *out, cs_error *err)
{
    long v;
    if (!cs_parse_whole(text, lo, CS_RESAMPLES_MAX, &v))
        return cs_error_set(err, CS_EUSAGE, 0, 0, "%s: need a whole number between %ld and %d, got '%s'",
                            flag, lo, CS_RESAMPLES_MAX, text ? text : "");
    *out = (int)v;
    return CS_OK;
}

cs_status cs_parse_sum_tol(const char *text, double *out, cs_error *err)
{
    double v;
    if (!cs_parse_number(text, &v) || !(v >= 0 && v < 1))
        return cs_error_set(err, CS_EUSAGE, 0, 0, "--sum-tol: need a tolerance in [0, 1), got '%s'",
                            text ? text : "");
    *out = v;
    return CS_OK;
}

/* The scored fields' checks, shared by the whole validation and a variant's. */
static cs_status check_bins(const cs_settings *s, cs_error *err)
{
    if (s->bins < 1 || s->bins > CS_BINS_MAX)
        return cs_error_set(err, CS_EUSAGE, 0, 0, "bins must be between 1 and %d (got %d)",
                            CS_BINS_MAX, s->bins);
    return CS_OK;
}

static cs_status check_gamma(const cs_settings *s, cs_error *err)
{
    if (!(s->gamma > 0) || s->gamma > 1)
        return cs_error_set(err, CS_EUSAGE, 0, 0, "gamma must be in (0, 1] (got %g)", s->gamma);
    return CS_OK;
}

static cs_status check_interval(const cs_settings *s, cs_error *err)
{
    if (s->distance == CS_DIST_INTERVAL &&
        !(s->interval_lo >= 0 && s->interval_hi <= 1 && s->interval_lo <= s->interval_hi))
        return cs_error_set(err, CS_EUSAGE, 0, 0, "interval needs 0 <= L <= H <= 1");
    return CS_OK;
}

/* Counted for the tests that show a measurement validates its settings once. */
static atomic_ulong validations;

unsigned long cs_settings_validate_count(void)
{
    return atomic_load_explicit(&validations, memory_order_relaxed);
}

cs_status cs_settings_validate(const cs_settings *s, cs_error *err)
{
    atomic_fetch_add_explicit(&validations, 1, memory_order_relaxed);
    cs_status st = check_bins(s, err);
    if (st == CS_OK) st = check_gamma(s, err);
    if (st != CS_OK) return st;
    if (!(s->sigma >= CS_SIGMA_MIN && s->sigma <= CS_SIGMA_MAX))
        return cs_error_set(err, CS_EUSAGE, 0, 0, "sigma must be in [%g, %g] (got %.17g)",
                            CS_SIGMA_MIN, CS_SIGMA_MAX, s->sigma);
    if (s->smece_sigma != 0 && !(s->smece_sigma >= CS_SMECE_SIGMA_MIN && s->smece_sigma <= CS_SMECE_SIGMA_MAX))
        return cs_error_set(err, CS_EUSAGE, 0, 0, "smece_sigma must be 0 (automatic) or in [%g, %g] (got %.17g)",
                            CS_SMECE_SIGMA_MIN, CS_SMECE_SIGMA_MAX, s->smece_sigma);
    if (s->lens == CS_LENS_TOPK && s->topk < 1)
        return cs_error_set(err, CS_EUSAGE, 0, 0, "topk needs k >= 1 (got %d)", s->topk);
    if ((s->lens == CS_LENS_CLASS || s->lens == CS_LENS_GROUP) &&
        memchr(s->lens_arg, '\0', CS_SPEC_MAX) == NULL)
        return cs_error_set(err, CS_EUSAGE, 0, 0, "lens argument is not terminated");
    if ((st = check_interval(s, err)) != CS_OK) return st;
    if (!(s->boot_size == 0 || s->boot_size == CS_BOOT_SIZE_FULL ||
          (s->boot_size >= CS_BOOT_SIZE_MIN && s->boot_size <= CS_BOOT_SIZE_MAX)))
        return cs_error_set(err, CS_EUSAGE, 0, 0, "boot_size must be 0 (automatic), -1 (full) or in [%ld, %ld] (got %ld)",
                            CS_BOOT_SIZE_MIN, CS_BOOT_SIZE_MAX, s->boot_size);
    if ((unsigned)s->lens > CS_LENS_FULL || (unsigned)s->binning > CS_BIN_KDTREE ||
        (unsigned)s->distance > CS_DIST_INTERVAL || (unsigned)s->mixture > CS_MIX_GMM3)
        return cs_error_set(err, CS_EUSAGE, 0, 0, "settings out of range");
    return CS_OK;
}

cs_status cs_settings_check_scoring(const cs_settings *s, cs_error *err)
{
    cs_status st = check_bins(s, err);
    if (st == CS_OK) st = check_gamma(s, err);
    if (st == CS_OK) st = check_interval(s, err);
    return st;
}

void cs_settings_lens_name(const cs_settings *s, char *buf, size_t size)
{
    if (!size) return;
    switch (s->lens) {
    case CS_LENS_TOP1: snprintf(buf, size, "top1"); break;
    case CS_LENS_TOPK: snprintf(buf, size, "topk:%d", s->topk); break;
    case CS_LENS_CLASS: snprintf(buf, size, "class:%s", s->lens_arg); break;
    case CS_LENS_CLASSWISE: snprintf(buf, size, "classwise"); break;
    case CS_LENS_GROUP: snprintf(buf, size, "group:%s", s->lens_arg); break;
    case CS_LENS_FULL: snprintf(buf, size, "full"); break;
    default: snprintf(buf, size, "?"); break;
    }
}

/* Shortest decimal that reads back to the same double, so flags round-trip exactly. */
void cs_format_number(char *out, size_t size, double v)
{
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(out, size, "%.*g", prec, v);
        if (strtod(out, NULL) == v) return;
    }
}
