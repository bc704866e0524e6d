/* The metric catalogue (see calscope/catalogue.h): one table, in the order a user reads the
 * metrics (the report's text, JSON and CSV tables and the dashboard's metrics table). */
#include "calscope/catalogue.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define BINNED (CS_NEEDS_LENS | CS_NEEDS_BINNING | CS_NEEDS_BINS | CS_NEEDS_DISTANCE)
#define AT(field) offsetof(cs_result, field)
#define SCALAR_ONLY "top1/class:C only"

static const cs_metric_info table[CS_METRIC_COUNT] = {
    { CS_METRIC_ACCURACY, "accuracy", "accuracy", "fraction of top-1 predictions that are right",
      CS_WANT_ACCURACY, 0, 0, AT(accuracy), NULL, 1 },
    { CS_METRIC_ECE, "ece", "ECE", "expected calibration error: sum of n_b/N * gap",
      CS_WANT_BINNED, BINNED, 1, AT(ece), NULL, 1 },
    { CS_METRIC_ACE, "ace", "ACE", "mean gap over non-empty bins", CS_WANT_BINNED, BINNED, 1, AT(ace), NULL, 0 },
    { CS_METRIC_MCE, "mce", "MCE", "largest gap over non-empty bins", CS_WANT_BINNED, BINNED, 1, AT(mce), NULL, 0 },
    { CS_METRIC_RECE_G, "rece_g", "RECE-G", "Gaussian-smoothed ECE (sigma, all M bins)",
      CS_WANT_RECE_G, CS_NEEDS_LENS | CS_NEEDS_BINS | CS_NEEDS_SIGMA | CS_NEEDS_PER_CLASS, 1, AT(rece_g), "top1/class:C/classwise only", 1 },
    { CS_METRIC_RECE_M, "rece_m", "RECE-M", "RECE-G over TTA observations",
      CS_WANT_RECE_M, CS_NEEDS_BINS | CS_NEEDS_SIGMA | CS_NEEDS_MIXTURE | CS_NEEDS_TTA, 1, AT(rece_m), "needs id/tta rows", 0 },
    { CS_METRIC_BRIER, "brier", "Brier", "mean squared error, summed over classes", CS_WANT_BRIER, 0, 1, AT(brier), NULL, 1 },
    { CS_METRIC_NLL, "nll", "NLL", "mean -ln p[label]", CS_WANT_NLL, 0, 1, AT(nll), NULL, 1 },
    { CS_METRIC_AECE, "aece", "AECE", "top-1 ECE with equal-mass bins", CS_WANT_AECE, CS_NEEDS_BINS, 1, AT(aece), NULL, 1 },
    { CS_METRIC_SCE, "sce", "SCE", "class-wise ECE, uniform bins", CS_WANT_SCE, CS_NEEDS_BINS, 1, AT(sce), NULL, 0 },
    { CS_METRIC_SMECE, "smece", "smECE", "smooth ECE (relplot), no bins",
      CS_WANT_SMECE, CS_NEEDS_LENS | CS_NEEDS_SMECE_SIGMA | CS_NEEDS_SCALAR, 1, AT(smece), SCALAR_ONLY, 1 },
    { CS_METRIC_L2CE, "l2ce", "L2CE", "RMS gap over M equal-mass bins",
      CS_WANT_L2CE, CS_NEEDS_LENS | CS_NEEDS_BINS | CS_NEEDS_SCALAR, 1, AT(l2ce), SCALAR_ONLY, 1 },
    { CS_METRIC_L2CE_DEBIASED, "l2ce_debiased", "L2CE-deb", "l2ce minus the bins' variance",
      CS_WANT_L2CE, CS_NEEDS_LENS | CS_NEEDS_BINS | CS_NEEDS_SCALAR, 1, AT(l2ce_debiased), SCALAR_ONLY, 1 },
    { CS_METRIC_ECE_SWEEP, "ece_sweep", "ECEsweep", "ECE at most monotone bins",
      CS_WANT_SWEEP, CS_NEEDS_LENS | CS_NEEDS_BINNING | CS_NEEDS_DISTANCE | CS_NEEDS_SCALAR, 1, AT(ece_sweep),
      "top1/class:C; tvd/l2", 1 },
};

const cs_metric_info *cs_metric_at(size_t i)
{
    return i < CS_METRIC_COUNT ? &table[i] : NULL;
}

const cs_metric_info *cs_metric_info_of(int id)
{
    for (size_t i = 0; i < CS_METRIC_COUNT; i++)
        if ((int)table[i].id == id) return &table[i];
    return NULL;
}

const char *cs_metric_name(int id)
{
    const cs_metric_info *m = cs_metric_info_of(id);
    return m ? m->key : NULL;
}

int cs_metric_from_name(const char *name)
{
    for (size_t i = 0; i < CS_METRIC_COUNT; i++)
        if (strcmp(name, table[i].key) == 0) return (int)table[i].id;
    return -1;
}

/* name[0..len) spells k in any case, '-' standing for '_'. */
static int spells(const char *name, size_t len, const char *k)
{
    size_t j = 0;
    while (j < len && k[j] &&
           (tolower((unsigned char)name[j]) == tolower((unsigned char)k[j]) || (name[j] == '-' && k[j] == '_')))
        j++;
    return j == len && k[j] == '\0' && len > 0;
}

int cs_metric_lookup(const char *name, size_t len)
{
    /* the key first, then the dashboard label (a short label such as "L2CE-deb" is not its key) */
    for (size_t i = 0; i < CS_METRIC_COUNT; i++)
        if (spells(name, len, table[i].key)) return (int)table[i].id;
    for (size_t i = 0; i < CS_METRIC_COUNT; i++)
        if (spells(name, len, table[i].label)) return (int)table[i].id;
    return -1;
}

void cs_metric_keys(char *buf, size_t size)
{
    size_t at = 0;
    if (size) buf[0] = '\0';
    for (size_t i = 0; i < CS_METRIC_COUNT && size; i++) {
        int w = snprintf(buf + at, size - at, "%s%s", i ? " " : "", table[i].key);
        if (w < 0 || (size_t)w >= size - at) {   /* cut: keep the whole keys that fitted */
            buf[at] = '\0';
            break;
        }
        at += (size_t)w;
    }
}

unsigned cs_metric_want(unsigned mask)
{
    unsigned w = 0;
    for (size_t i = 0; i < CS_METRIC_COUNT; i++)
        if (mask & CS_METRIC_BIT(table[i].id)) w |= table[i].want;
    return w;
}

double cs_metric_value(const cs_result *r, int id)
{
    const cs_metric_info *m = cs_metric_info_of(id);
    if (!m) return NAN;
    double v;
    memcpy(&v, (const char *)r + m->offset, sizeof v);
    return v;
}

/* One value per sample: top1, class:C, and topk:1 (which is top1). */
static int scalar_lens(const cs_settings *s)
{
    return s->lens == CS_LENS_TOP1 || s->lens == CS_LENS_CLASS || (s->lens == CS_LENS_TOPK && s->topk == 1);
}

int cs_metric_lens_gives(int id, const cs_settings *s)
{
    const cs_metric_info *m = cs_metric_info_of(id);
    if (!m) return 0;
    if (m->needs & CS_NEEDS_SCALAR) return scalar_lens(s);
    if (m->needs & CS_NEEDS_PER_CLASS) return scalar_lens(s) || s->lens == CS_LENS_CLASSWISE;
    return 1;
}

unsigned cs_metric_mask_m_of_n(const cs_settings *s)
{
    int scalar = scalar_lens(s);
    unsigned mask = 0;
    for (size_t i = 0; i < CS_METRIC_COUNT; i++)
        if (table[i].m_of_n && (scalar || !(table[i].needs & CS_NEEDS_LENS)))
            mask |= CS_METRIC_BIT(table[i].id);
    return mask;
}

int cs_metric_lower_is_better(int id)
{
    const cs_metric_info *m = cs_metric_info_of(id);
    return m ? m->lower_better : 0;
}
