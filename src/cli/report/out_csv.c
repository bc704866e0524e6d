/* `--format csv`: a header row and one row per reported file; a metric that is not available
 * is an empty field. Rejected files have no row (their error is on stderr). With --ci R,
 * <metric>_lo and <metric>_hi follow the metrics (the 95% interval; empty for a metric without
 * one). With --topk-bars LIST, one column topk_<k> per entry of LIST as written (topk_full:
 * k = the file's classes). With --compat all, four columns per library follow: <lib>_ece,
 * <lib>_ace, <lib>_mce, <lib>_moved (empty when the library has no such number, fails, or
 * cannot measure the file at all), then one <lib>_na column per library: why its empty
 * ece/ace/mce fields are empty ("ace: torchmetrics has no such metric; ..."). --curve has no
 * CSV form (rep_parse_args refuses it). */
#include "cli/report/rep.h"

#include "calscope/text.h"

#include <math.h>
#include <string.h>

/* RFC 4180: quote a field holding the delimiter, a quote or a line break. The text is written
 * as valid UTF-8 under the JSON output's rule (cs_text_utf8: a stray byte as its Latin-1
 * character). */
void rep_csv_field(FILE *out, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) { cs_text_utf8(out, s, strlen(s)); return; }
    fputc('"', out);
    for (const char *q; (q = strchr(s, '"')); s = q + 1) {
        cs_text_utf8(out, s, (size_t)(q - s) + 1);
        fputc('"', out);
    }
    cs_text_utf8(out, s, strlen(s));
    fputc('"', out);
}

/* ",value" with %.17g, or an empty field when not finite */
void rep_csv_num(FILE *out, double v)
{
    if (isfinite(v)) fprintf(out, ",%.17g", v);
    else fputc(',', out);
}

void rep_out_csv(FILE *out, const rep_opts *o, const rep_file *files, size_t n)
{
    /* --likert: two columns per category, likert_<lo>_<hi>_count and likert_<lo>_<hi>_ece */
    const double *cuts = o->n_likert_cuts ? o->likert_cuts : cs_likert_default_cuts;
    size_t n_cat = o->likert ? (o->n_likert_cuts ? o->n_likert_cuts : 4) - 1 : 0;
    fputs("path,rows,classes,rejected,selected", out);
    for (size_t m = 0; m < CS_METRIC_COUNT; m++) fprintf(out, ",%s", cs_metric_at(m)->key);
    for (size_t m = 0; o->ci_repeats && m < CS_METRIC_COUNT; m++)
        fprintf(out, ",%s_lo,%s_hi", cs_metric_at(m)->key, cs_metric_at(m)->key);
    for (size_t t = 0; t < o->n_topk; t++)
        if (o->topk[t]) fprintf(out, ",topk_%d", o->topk[t]);
        else fputs(",topk_full", out);
    for (size_t c = 0; c < n_cat; c++)
        fprintf(out, ",likert_%g_%g_count,likert_%g_%g_ece", cuts[c], cuts[c + 1], cuts[c], cuts[c + 1]);
    int compat = o->compat == REP_COMPAT_ALL;
    static const int cm[3] = { CS_CM_ECE, CS_CM_ACE, CS_CM_MCE };
    for (int l = 0; compat && l < CS_COMPAT_COUNT; l++) {
        const char *name = cs_compat_name((cs_compat_lib)l);
        for (int j = 0; j < 3; j++) fprintf(out, ",%s_%s", name, cs_compat_metric_name(cm[j]));
        fprintf(out, ",%s_moved", name);
    }
    for (int l = 0; compat && l < CS_COMPAT_COUNT; l++) fprintf(out, ",%s_na", cs_compat_name((cs_compat_lib)l));
    fputs("\n", out);
    for (size_t i = 0; i < n; i++) {
        const rep_file *f = &files[i];
        if (!f->loaded || f->usage_error) continue;
        rep_csv_field(out, f->path);
        fprintf(out, ",%zu,%zu,%zu,%zu", f->rows, f->classes, f->sum.rows_rejected, f->m.selected);
        for (size_t m = 0; m < CS_METRIC_COUNT; m++) {
            double v = f->m.evaluated ? cs_metric_value(&f->m.result, (int)cs_metric_at(m)->id) : NAN;
            if (isfinite(v)) fprintf(out, ",%.17g", v);
            else fputc(',', out);
        }
        for (size_t m = 0; o->ci_repeats && m < CS_METRIC_COUNT; m++) {
            int id = (int)cs_metric_at(m)->id;
            int have = f->m.has_ci && (f->m.ci.metrics & CS_METRIC_BIT(id));
            rep_csv_num(out, have ? f->m.ci.lo[id] : NAN);
            rep_csv_num(out, have ? f->m.ci.hi[id] : NAN);
        }
        for (size_t t = 0; t < o->n_topk; t++) {
            int k = rep_topk_used(o->topk[t], f->classes);
            double v = NAN;
            for (size_t j = 0; f->m.has_topk && j < f->m.n_topk; j++)
                if (f->m.topk_k[j] == k) v = f->m.topk_ece[j];
            rep_csv_num(out, v);
        }
        for (size_t c = 0; c < n_cat; c++) {
            if (!f->m.has_likert || c >= f->m.likert.n) { fputs(",,", out); continue; }
            fprintf(out, ",%zu", f->m.likert.iv[c].count);
            if (isfinite(f->m.likert.iv[c].ece)) fprintf(out, ",%.17g", f->m.likert.iv[c].ece);
            else fputc(',', out);
        }
        for (int l = 0; compat && l < CS_COMPAT_COUNT; l++) {
            const cs_compat_lib_result *lr = &f->compat.lib[l];
            int have = f->has_compat && (f->compat.mask & (1u << l));
            for (int j = 0; j < 3; j++) {
                if (have && isfinite(lr->m[cm[j]])) fprintf(out, ",%.17g", lr->m[cm[j]]);
                else fputc(',', out);
            }
            if (have && lr->applicable) fprintf(out, ",%zu", lr->moved);
            else fputc(',', out);
        }
        for (int l = 0; compat && l < CS_COMPAT_COUNT; l++) {
            const cs_compat_lib_result *lr = &f->compat.lib[l];
            char why[4 * sizeof lr->notes[0]] = "";
            size_t len = 0;
            for (int j = 0; f->has_compat && (f->compat.mask & (1u << l)) && j < 3; j++)
                if (!isfinite(lr->m[cm[j]]) && lr->notes[cm[j]][0] && len < sizeof why)
                    len += (size_t)snprintf(why + len, sizeof why - len, "%s%s: %s", len ? "; " : "",
                                            cs_compat_metric_name(cm[j]), lr->notes[cm[j]]);
            fputc(',', out);
            rep_csv_field(out, why);
        }
        fputc('\n', out);
    }
}
