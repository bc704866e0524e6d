/* --compat output: the "compat" JSON object (docs/json.md) and the text table of one file —
 * every library's number beside calscope's, and per library the samples that change bin. */
#include "cli/report/rep.h"

#include <math.h>
#include <string.h>

#define TEXT_EXAMPLES 5   /* moved samples listed per library in text */
#define JSON_EXAMPLES 10  /* ... and in JSON */

static void cnum(FILE *out, double v)
{
    if (isfinite(v)) fprintf(out, "%.17g", v);
    else fputs("null", out);
}

static void metrics_json(FILE *out, const double *m)
{
    for (int i = 0; i < CS_CM_COUNT; i++) {
        fprintf(out, "%s\"%s\": ", i ? ", " : "", cs_compat_metric_name(i));
        cnum(out, m[i]);
    }
}

/* The torch libraries' numbers on tensors of the other dtype: {"dtype", "ece", "mce", "rms"},
 * null for the other libraries and where nothing was measured. */
static void other_dtype_json(FILE *out, const cs_compat_lib_result *lr)
{
    if (!isfinite(lr->other_dtype[CS_CM_ECE])) {
        fputs("null", out);
        return;
    }
    fprintf(out, "{\"dtype\": \"%s\"", lr->other_dtype_f64 ? "float64" : "float32");
    static const int shown[] = { CS_CM_ECE, CS_CM_MCE, CS_CM_RMS };
    for (size_t i = 0; i < sizeof shown / sizeof *shown; i++) {
        fprintf(out, ", \"%s\": ", cs_compat_metric_name(shown[i]));
        cnum(out, lr->other_dtype[shown[i]]);
    }
    fputc('}', out);
}

/* Text: what the same call gives on the other dtype's tensors, and whether it differs. */
static void other_dtype_text(FILE *out, const cs_compat_lib_result *lr)
{
    if (!isfinite(lr->other_dtype[CS_CM_ECE])) return;
    int same = lr->other_dtype[CS_CM_ECE] == lr->m[CS_CM_ECE] && lr->other_dtype[CS_CM_MCE] == lr->m[CS_CM_MCE]
               && lr->other_dtype[CS_CM_RMS] == lr->m[CS_CM_RMS];
    fprintf(out, "    %s tensors (%s, --torch-dtype %s): ece %.6f mce %.6f rms %.6f (%s)\n",
            lr->other_dtype_f64 ? "float64" : "float32",
            lr->other_dtype_f64 ? "torch.tensor of a numpy array" : "a model's output",
            lr->other_dtype_f64 ? "float64" : "float32", lr->other_dtype[CS_CM_ECE],
            lr->other_dtype[CS_CM_MCE], lr->other_dtype[CS_CM_RMS],
            same ? "the same bits"
                 : lr->lib == CS_COMPAT_TORCHMETRICS_BINARY ? "differs: binary_calibration_error bins in the tensor's dtype"
                                                           : "differs: the argmax is taken in the tensor's dtype");
}

void rep_out_compat_json(FILE *out, const rep_opts *o, const rep_file *f)
{
    (void)o;
    const cs_compat_report *r = &f->compat;
    fputs(",\n     \"compat\": {\"calscope\": {", out);
    metrics_json(out, r->calscope);
    fputc('}', out);
    for (int l = 0; l < CS_COMPAT_COUNT; l++) {
        if (!(r->mask & (1u << l))) continue;
        const cs_compat_lib_result *lr = &r->lib[l];
        fputs(",\n       ", out);
        rep_json_str(out, cs_compat_name((cs_compat_lib)l));
        fputs(": {", out);
        metrics_json(out, lr->m);
        fprintf(out, ", \"applicable\": %s, \"call\": ", lr->applicable ? "true" : "false");
        rep_json_str(out, lr->call);
        fputs(", \"semantics\": ", out);
        rep_json_str(out, lr->semantics);
        fputs(", \"notes\": {", out);
        int first = 1;
        for (int m = 0; m < CS_CM_COUNT; m++) {
            if (!lr->notes[m][0] || isfinite(lr->m[m])) continue;
            fprintf(out, "%s\"%s\": ", first ? "" : ", ", cs_compat_metric_name(m));
            rep_json_str(out, lr->notes[m]);
            first = 0;
        }
        fputc('}', out);
        if (lr->lib == CS_COMPAT_RELPLOT) {   /* its smooth ECE and why it is not calscope's */
            fputs(", \"smece\": ", out);
            cnum(out, lr->smece);
            fputs(", \"smece_sigma\": ", out);
            cnum(out, lr->smece_sigma);
            fputs(", \"smece_note\": ", out);
            rep_json_str(out, lr->smece_note);
        }
        fputs(", \"other_dtype\": ", out);
        other_dtype_json(out, lr);
        fprintf(out, ", \"moved\": %zu, \"examples\": [", lr->moved);
        for (size_t e = 0; e < lr->n_examples && e < JSON_EXAMPLES; e++) {
            const cs_compat_move *mv = &lr->examples[e];
            fprintf(out, "%s{\"row\": %u, \"class\": ", e ? ", " : "", (unsigned)mv->row);
            if (mv->cls < 0) fputs("null", out);
            else fprintf(out, "%d", (int)mv->cls);
            fputs(", \"value\": ", out);
            cnum(out, mv->value);
            fprintf(out, ", \"calscope_bin\": %d, \"library_bin\": ", mv->cs_bin);
            if (mv->lib_bin < 0) fputs("null", out);
            else fprintf(out, "%d", mv->lib_bin);
            fputs(", \"rule\": ", out);
            rep_json_str(out, cs_compat_rule_text(mv->rule));
            fputc('}', out);
        }
        fputs("]}", out);
    }
    fputc('}', out);
}

const char *rep_file_bins(const rep_opts *o, const rep_file *f, const cs_bin **bins, size_t *n,
                          const char **note)
{
    *bins = f->m.result.bins;
    *n = f->m.result.n_bins;
    if (note) *note = "";
    if (o->compat < 0 || o->compat == REP_COMPAT_ALL || !f->has_compat) return "calscope";
    const cs_compat_lib_result *lr = &f->compat.lib[o->compat];
    if (note) *note = lr->bins_note;
    if (!lr->bins) return "calscope";
    *bins = lr->bins;
    *n = lr->n_bins;
    return cs_compat_name(lr->lib);
}

static const char *const short_names[CS_COMPAT_COUNT] = {
    "torchm", "tm-bin", "netcal", "relplot", "verified", "robustc", "monai",
};
static const char *const short_metric[CS_CM_COUNT] = {
    "ece", "ace", "mce", "rms", "aece", "sce", "rece_g", "receGN",
};

void rep_out_compat_text(FILE *out, const rep_opts *o, const rep_file *f)
{
    const cs_compat_report *r = &f->compat;
    fprintf(out, "  Compat: what each library reports (%s lens, %d %s bins; n/a = no such metric or it fails)\n",
            r->lens == CS_LENS_CLASSWISE ? "classwise" : "top1", r->bins,
            r->binning == CS_BIN_MASS ? "equal-mass" : "uniform");
    fprintf(out, "  %-6s %8s", "metric", "calscope");
    for (int l = 0; l < CS_COMPAT_COUNT; l++)
        if (r->mask & (1u << l)) fprintf(out, " %8s", short_names[l]);
    fputc('\n', out);
    for (int m = 0; m < CS_CM_COUNT; m++) {
        /* a row some library fills, or would fill under other settings (its n/a is explained) */
        int any = 0;
        for (int l = 0; l < CS_COMPAT_COUNT; l++)
            if ((r->mask & (1u << l)) && (isfinite(r->lib[l].m[m]) || (r->lib[l].na_settings & (1u << m))))
                any = 1;
        if (!any) continue;
        fprintf(out, "  %-6s", short_metric[m]);
        if (isfinite(r->calscope[m])) fprintf(out, " %8.5f", r->calscope[m]);
        else fprintf(out, " %8s", "n/a");
        for (int l = 0; l < CS_COMPAT_COUNT; l++) {
            if (!(r->mask & (1u << l))) continue;
            if (isfinite(r->lib[l].m[m])) fprintf(out, " %8.5f", r->lib[l].m[m]);
            else fprintf(out, " %8s", "n/a");
        }
        fputc('\n', out);
    }
    fprintf(out, "  (receGN: robustcal GECELoss with the Gaussian kernel; its default is Student-t df=3)\n");
    for (int l = 0; l < CS_COMPAT_COUNT; l++) {
        if (!(r->mask & (1u << l))) continue;
        const cs_compat_lib_result *lr = &r->lib[l];
        fprintf(out, "  %s: %s\n", cs_compat_name((cs_compat_lib)l), lr->call);
        fprintf(out, "    measures: %s\n", lr->semantics);
        other_dtype_text(out, lr);
        if (lr->lib == CS_COMPAT_RELPLOT && isfinite(lr->smece))
            fprintf(out, "    smECE: relplot's %.6f (sigma %.6f); %s\n", lr->smece,
                    lr->smece_sigma, lr->smece_note);
        else if (lr->lib == CS_COMPAT_RELPLOT)
            fprintf(out, "    smECE: n/a: %s\n", lr->smece_note);
        if (lr->applicable)
            fprintf(out, "    moved: %zu of %zu samples land in another bin than calscope's\n", lr->moved, r->n);
        for (size_t e = 0; e < lr->n_examples && e < TEXT_EXAMPLES; e++) {
            const cs_compat_move *mv = &lr->examples[e];
            char lb[16];
            if (mv->lib_bin < 0) snprintf(lb, sizeof lb, "none");
            else snprintf(lb, sizeof lb, "%d", mv->lib_bin);
            char cls[24] = "";
            if (mv->cls >= 0) snprintf(cls, sizeof cls, " class %d", (int)mv->cls);
            fprintf(out, "      row %u%s value %.17g: calscope bin %d, %s bin %s (%s)\n",
                    (unsigned)mv->row, cls, mv->value, mv->cs_bin, cs_compat_name((cs_compat_lib)l), lb,
                    cs_compat_rule_text(mv->rule));
        }
        for (int m = 0; m < CS_CM_COUNT; m++) {
            if (!lr->notes[m][0] || isfinite(lr->m[m])) continue;
            /* the failures and the metrics these settings take away; a plain "has no" is
             * implied by n/a */
            if (strstr(lr->notes[m], "raises") || strstr(lr->notes[m], "needs"))
                fprintf(out, "    %s: %s\n", cs_compat_metric_name(m), lr->notes[m]);
            else if (lr->na_settings & (1u << m))
                fprintf(out, "    %s: n/a under these settings: %s\n", cs_compat_metric_name(m), lr->notes[m]);
        }
    }
    (void)o;
    fputc('\n', out);
}
