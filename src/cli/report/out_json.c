/* `--format json`: one object {"files": [...], "errors": [...]} (docs/json.md). Always valid JSON:
 * strings escaped by one rule (cs_text_json: a byte outside valid UTF-8 as \u00XX, its Latin-1
 * reading), non-finite numbers written as null, doubles with %.17g so they round-trip, counts
 * as integers. */
#include "cli/report/rep.h"

#include "calscope/methods.h"
#include "calscope/text.h"

#include <math.h>
#include <string.h>

void rep_json_str(FILE *out, const char *s)
{
    cs_text_json(out, s);   /* the one rule for JSON strings (calscope/text.h) */
}

void rep_json_num(FILE *out, double v)
{
    if (isfinite(v)) fprintf(out, "%.17g", v);
    else fputs("null", out);
}

const char *const rep_compare_keys[6] = { "a", "b", "diff", "lo", "hi", "p_better" };

void rep_json_fields(FILE *out, const char *const *keys, const double *vals, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        fprintf(out, "%s\"%s\": ", i ? ", " : "", keys[i]);
        rep_json_num(out, vals[i]);
    }
}

static void settings_json(FILE *out, const rep_opts *o)
{
    const cs_settings *s = &o->settings;
    char buf[CS_SPEC_MAX + 32];
    fputs("{\"lens\": ", out);
    cs_settings_lens_name(s, buf, sizeof buf);
    rep_json_str(out, buf);
    fprintf(out, ", \"bins\": %d, \"binning\": ", s->bins);
    rep_json_str(out, ss_binning_name(s->binning));
    fputs(", \"gamma\": ", out);
    rep_json_num(out, s->gamma);
    fputs(", \"sigma\": ", out);
    rep_json_num(out, s->sigma);
    fputs(", \"distance\": ", out);
    ss_distance_name(s, buf, sizeof buf);
    rep_json_str(out, buf);
    fputs(", \"select\": ", out);
    rep_json_str(out, s->select);
    fputs(", \"mixture\": ", out);
    rep_json_str(out, ss_mixture_name(s->mixture));
    fputs(", \"sum_tol\": ", out);
    rep_json_num(out, o->load.sum_tol);
    fputs(", \"smece_sigma\": ", out);   /* --smece-sigma; null: automatic */
    rep_json_num(out, s->smece_sigma > 0 ? s->smece_sigma : NAN);
    if (o->load.split_column) {   /* --recal-split-column: the column every FILE was split by */
        fputs(", \"split_column\": ", out);
        rep_json_str(out, o->load.split_column);
    }
    if (o->ci_repeats || o->compare) fprintf(out, ", \"ci_method\": \"%s\"", cs_ci_method_name(o->ci_method));
    if (o->compat >= 0) {
        fputs(", \"compat\": ", out);
        rep_json_str(out, o->compat == REP_COMPAT_ALL ? "all" : cs_compat_name((cs_compat_lib)o->compat));
    }
    if (o->torch_dtype_given) fprintf(out, ", \"torch_dtype\": \"%s\"", o->torch_f64 ? "float64" : "float32");
    fprintf(out, ", \"renormalize\": %s, \"skip_bad_rows\": %s}",
            o->load.renormalize ? "true" : "false", o->load.skip_bad_rows ? "true" : "false");
}

/* After "metrics": how the intervals were made, the metrics whose interval does not contain
 * the value (the percentile bootstrap of a biased statistic), and each metric's bootstrap bias
 * (mean of the resamples minus the value). */
static void ci_info_json(FILE *out, const cs_ci *ci)
{
    fprintf(out, ", \"ci_info\": {\"method\": \"%s\", \"repeats\": %d", cs_ci_method_name(ci->method), ci->repeats);
    if (ci->method == CS_CI_BCA) fprintf(out, ", \"jackknife_groups\": %zu", ci->jack_groups);
    fprintf(out, ", \"draw_size\": %zu", ci->draw_size);
    rep_smece_binned_json(out, ci->smece_binned);
    /* undefined: BCa's; needs_full_draws: no interval from m-out-of-n draws (--boot-size full) */
    const char *lists[3] = { "excludes_value", "undefined", "needs_full_draws" };
    for (int l = 0; l < 3; l++) {
        fprintf(out, ", \"%s\": [", lists[l]);
        for (size_t m = 0, first = 1; m < CS_METRIC_COUNT; m++) {
            int id = (int)cs_metric_at(m)->id;
            if (!(ci->metrics & CS_METRIC_BIT(id)) || !isfinite(ci->value[id])) continue;
            int full = cs_ci_needs_full_draws(ci, id);
            int hit = l == 0 ? cs_ci_excludes_value(ci, id)
                    : l == 1 ? !full && (!isfinite(ci->lo[id]) || !isfinite(ci->hi[id])) : full;
            if (!hit) continue;
            fprintf(out, "%s\"%s\"", first ? "" : ", ", cs_metric_at(m)->key);
            first = 0;
        }
        fputc(']', out);
    }
    fputs(", \"bias\": {", out);
    for (size_t m = 0, first = 1; m < CS_METRIC_COUNT; m++) {
        int id = (int)cs_metric_at(m)->id;
        if (!(ci->metrics & CS_METRIC_BIT(id))) continue;
        fprintf(out, "%s\"%s\": ", first ? "" : ", ", cs_metric_at(m)->key);
        rep_json_num(out, ci->boot_mean[id] - ci->value[id]);
        first = 0;
    }
    fputs("}}", out);
}

void rep_smece_binned_json(FILE *out, int binned)
{
    if (binned) fputs(", \"smece_replicates\": \"binned\"", out);
}

/* bias: mean - truth (rep_curve_bias), written only when finite. */
static void stat_json(FILE *out, const cs_stat *st, double bias)
{
    static const char *const keys[] = { "mean", "sd", "lo", "hi", "abs_dev", "bias" };
    const double v[] = { st->mean, st->sd, st->lo, st->hi, st->abs_dev, bias };
    fputc('{', out);
    rep_json_fields(out, keys, v, isfinite(bias) ? 6 : 5);
    fputc('}', out);
}

/* by_case: a statistics dataset, whose resamples draw cases (rows = cases per replicate). */
static void curve_json(FILE *out, const cs_curve *c, int by_case, double truth)
{
    const char *xkey = c->kind == CS_CURVE_SIZE ? "fraction" : c->kdtree ? "gamma" : "bins";
    fprintf(out, ",\n     \"curve\": {\"kind\": \"%s\", \"repeats\": %d, \"replace\": %s, \"samples\": %zu",
            c->kind == CS_CURVE_SIZE ? "size" : "bins", c->repeats, c->replace ? "true" : "false", c->n_samples);
    if (by_case) fputs(", \"unit\": \"cases\"", out);
    rep_smece_binned_json(out, c->smece_binned);
    if (c->kind == CS_CURVE_SIZE && isfinite(truth)) {
        fputs(", \"truth\": ", out);
        rep_json_num(out, truth);
    }
    if (c->kind == CS_CURVE_BINS && c->stable_first >= 0) {
        const cs_curve_point *a = &c->points[c->stable_first], *b = &c->points[c->stable_last];
        fprintf(out, ", \"stable\": {\"metric\": \"%s\", \"from\": ", cs_metric_name(c->stable_metric));
        rep_json_num(out, a->x);
        fputs(", \"to\": ", out);
        rep_json_num(out, b->x);
        fputc('}', out);
    } else if (c->kind == CS_CURVE_BINS) {
        fputs(", \"stable\": null", out);   /* no claim (e.g. too few samples per bin everywhere) */
    }
    if (c->kind == CS_CURVE_SIZE) fprintf(out, ", \"too_few_below\": %zu", c->too_few_min);
    if (c->kind == CS_CURVE_BINS && by_case) fprintf(out, ", \"cases\": %zu, \"stable_min_cases\": %d", c->n_cases, CS_TOO_FEW_CASES);
    if (c->kind == CS_CURVE_BINS) {
        fprintf(out, ", \"stable_min_per_bin\": %d, \"sweep_bins\": ", CS_TOO_FEW_PER_BIN);
        rep_json_num(out, c->sweep_bins);   /* null where the sweep is undefined */
    }
    fputs(", \"points\": [", out);
    for (size_t i = 0; i < c->n_points; i++) {
        const cs_curve_point *pt = &c->points[i];
        fprintf(out, "%s\n       {\"%s\": ", i ? "," : "", xkey);
        if (c->kind == CS_CURVE_BINS && !c->kdtree) fprintf(out, "%.0f", pt->x);
        else rep_json_num(out, pt->x);
        fprintf(out, ", \"rows\": %zu, \"too_few\": %s, \"metrics\": {", pt->rows, pt->too_few ? "true" : "false");
        int first = 1;
        for (int id = 0; id < CS_METRIC_COUNT; id++) {
            if (!(c->metrics & CS_METRIC_BIT(id))) continue;
            fprintf(out, "%s\"%s\": ", first ? "" : ", ", cs_metric_name(id));
            stat_json(out, &pt->stat[id], rep_curve_bias(c, pt, id, truth));
            first = 0;
        }
        fputs("}}", out);
    }
    fputs("]}", out);
}

static void case_stat_json(FILE *out, const char *name, cs_case_stat st, double pooled)
{
    fprintf(out, "\"%s\": {\"mean\": ", name);
    rep_json_num(out, st.mean);
    fputs(", \"sd\": ", out);
    rep_json_num(out, st.sd);
    fputs(", \"pooled\": ", out);
    rep_json_num(out, pooled);
    fputc('}', out);
}

/* "cases" (docs/json.md): per-case means and sds, and per class the M x M reliability histogram. */
static void cases_json(FILE *out, const cs_case_metrics *cm)
{
    fprintf(out, ",\n     \"cases\": {\"count\": %zu, \"metrics\": {", cm->n_cases);
    case_stat_json(out, "ece", cm->ece_stat, cm->pooled_ece);
    fputs(", ", out);
    case_stat_json(out, "ace", cm->ace_stat, cm->pooled_ace);
    fputs(", ", out);
    case_stat_json(out, "mce", cm->mce_stat, cm->pooled_mce);
    fputs("},\n       \"reliability_histogram\": [", out);
    for (size_t c = 0; c < cm->k; c++) {
        fputs(c ? ",\n         [" : "\n         [", out);
        for (size_t i = 0; i < cm->m; i++) {
            fputs(i ? ", [" : "[", out);
            for (size_t j = 0; j < cm->m; j++)
                fprintf(out, "%s%u", j ? ", " : "", (unsigned)cm->hist[(c * cm->m + i) * cm->m + j]);
            fputc(']', out);
        }
        fputc(']', out);
    }
    fputs("]}", out);
}

static void compare_json(FILE *out, const rep_compare *cmp)
{
    fputs(",\n  \"compare_info\": {\"a\": ", out);
    rep_json_str(out, cmp->a);
    fputs(", \"b\": ", out);
    rep_json_str(out, cmp->b);
    if (cmp->done)
        fprintf(out, ", \"by_id\": %s, \"pairs\": %zu, \"repeats\": %d, \"draw_size\": %zu",
                cmp->res.by_id ? "true" : "false", cmp->res.n_pairs, cmp->res.repeats, cmp->res.draw_size);
    if (cmp->done) fprintf(out, ", \"too_few\": %s", rep_compare_too_few(cmp) ? "true" : "false");
    if (cmp->done && cmp->by_case) fputs(", \"by_case\": true", out);
    if (cmp->done) rep_smece_binned_json(out, cmp->res.smece_binned);
    if (!cmp->by_case) rep_methods_selection_json(out, cmp->methods);
    rep_compare_verdict_json(out, cmp);
    fputs("},\n  \"compare\": [", out);
    for (size_t i = 0; cmp->done && i < cmp->res.n_entries; i++) {
        const cs_compare_entry *e = &cmp->res.entries[i];
        fprintf(out, "%s\n    {\"metric\": \"%s\", ", i ? "," : "", cs_metric_name(e->metric));
        /* a tie (rounding noise) has no better side: p_better null, equal true */
        const double v[] = { e->a, e->b, e->diff, e->lo, e->hi, e->equal ? NAN : e->p_better };
        rep_json_fields(out, rep_compare_keys, v, 6);
        fputs(", \"p_equal\": ", out);
        rep_json_num(out, e->p_equal);
        fprintf(out, ", \"equal\": %s, \"ci_excludes_diff\": %s}", e->equal ? "true" : "false",
                !e->equal && cs_methods_interval_misses(e->diff, e->lo, e->hi) ? "true" : "false");
    }
    fputs(cmp->done && cmp->res.n_entries ? "\n  ]" : "]", out);
}

/* The "metrics" object: every metric (null when nothing was measured), the bandwidth and bin
 * count two of them chose, and each interval asked for; left open for the caller. */
static void metrics_json(FILE *out, const rep_file *f)
{
    fputs(",\n     \"metrics\": {", out);
    for (size_t m = 0; m < CS_METRIC_COUNT; m++) {
        fprintf(out, "%s\"%s\": ", m ? ", " : "", cs_metric_at(m)->key);
        rep_json_num(out, f->m.evaluated ? cs_metric_value(&f->m.result, (int)cs_metric_at(m)->id) : NAN);
    }
    /* what two of them chose: smooth ECE's bandwidth and ECE_sweep's bin count */
    fputs(", \"smece_sigma\": ", out);
    rep_json_num(out, f->m.evaluated ? f->m.result.smece_sigma : NAN);
    fputs(", \"ece_sweep_bins\": ", out);
    rep_json_num(out, f->m.evaluated ? f->m.result.ece_sweep_bins : NAN);
    if (!f->m.has_ci) return;
    for (size_t m = 0; m < CS_METRIC_COUNT; m++) {
        int id = (int)cs_metric_at(m)->id;
        if (!(f->m.ci.metrics & CS_METRIC_BIT(id))) continue;
        fprintf(out, ", \"%s_ci\": [", cs_metric_at(m)->key);
        rep_json_num(out, f->m.ci.lo[id]);
        fputs(", ", out);
        rep_json_num(out, f->m.ci.hi[id]);
        fputc(']', out);
    }
}

/* whose bins: calscope's, or with --compat NAME the library's own table (its edges, its
 * membership rule and its values for empty bins: 0 where it fills them, null where NaN) */
static void bins_json(FILE *out, const rep_opts *o, const rep_file *f)
{
    const cs_bin *bins;
    size_t nb;
    const char *note;
    const char *from = rep_file_bins(o, f, &bins, &nb, &note);
    int lib = strcmp(from, "calscope") != 0;
    fputs(",\n     \"bins_from\": ", out);
    rep_json_str(out, from);
    if (o->compat >= 0 && o->compat != REP_COMPAT_ALL && f->has_compat) {
        fputs(", \"bins_note\": ", out);
        rep_json_str(out, note);
        if (lib) fprintf(out, ", \"bins_counted\": %zu", f->compat.lib[o->compat].bins_counted);
    }
    fputs(",\n     \"bins\": [", out);
    for (size_t i = 0; f->m.evaluated && i < nb; i++) {
        const cs_bin *b = &bins[i];
        fputs(i ? ",\n       {\"lo\": " : "\n       {\"lo\": ", out);
        rep_json_num(out, b->lo);
        fputs(", \"hi\": ", out);
        rep_json_num(out, b->hi);
        fprintf(out, ", \"count\": %zu, \"conf\": ", b->count);
        rep_json_num(out, b->count || lib ? b->conf : NAN);
        fputs(", \"acc\": ", out);
        rep_json_num(out, b->count || lib ? b->acc : NAN);
        fputs(", \"gap\": ", out);
        rep_json_num(out, b->count || lib ? b->gap : NAN);
        fputc('}', out);
    }
    fputc(']', out);
}

/* What the loader read, changed, ignored and skipped. */
static void load_json(FILE *out, const rep_file *f)
{
    fputs(",\n     \"load\": {", out);
    fprintf(out, "\"rows_read\": %zu, \"rows_used\": %zu, \"rows_rejected\": %zu, \"rows_renormalized\": %zu, "
            "\"blank_lines\": %zu, \"from_logits\": %s, \"gzip\": %s, \"ignored_columns\": [",
            f->sum.rows_read, f->sum.rows_used, f->sum.rows_rejected, f->sum.rows_renormalized, f->sum.blank_lines,
            f->sum.from_logits ? "true" : "false", f->sum.gzip ? "true" : "false");
    for (size_t i = 0; i < f->sum.n_ignored; i++) {
        if (i) fputs(", ", out);
        rep_json_str(out, f->sum.ignored_columns[i]);
    }
    fputs("], \"class_note\": ", out);
    if (f->sum.class_note) rep_json_str(out, f->sum.class_note);
    else fputs("null", out);
    fputs(", \"skipped\": [", out);
    for (size_t i = 0; i < f->sum.n_skipped_messages; i++) {
        if (i) fputs(", ", out);
        rep_json_str(out, f->sum.skipped[i]);
    }
    fputs("]}", out);
}

static void topk_json(FILE *out, const rep_file *f)
{
    fputs(",\n     \"topk\": [", out);
    for (size_t i = 0; i < f->m.n_topk; i++) {
        fprintf(out, "%s{\"k\": %d, \"ece\": ", i ? ", " : "", f->m.topk_k[i]);
        rep_json_num(out, f->m.topk_ece[i]);
        fputc('}', out);
    }
    fputc(']', out);
}

static void likert_json(FILE *out, const rep_file *f)
{
    fputs(",\n     \"likert\": [", out);
    for (size_t i = 0; i < f->m.likert.n; i++) {
        const cs_likert_interval *iv = &f->m.likert.iv[i];
        fputs(i ? ", {\"lo\": " : "{\"lo\": ", out);
        rep_json_num(out, iv->lo);
        fputs(", \"hi\": ", out);
        rep_json_num(out, iv->hi);
        fprintf(out, ", \"count\": %zu, \"ece\": ", iv->count);
        rep_json_num(out, iv->ece);
        fputc('}', out);
    }
    fputc(']', out);
}

static void file_json(FILE *out, const rep_opts *o, const rep_file *f)
{
    fputs("    {\"path\": ", out);
    rep_json_str(out, f->path);
    fprintf(out, ", \"rows\": %zu, \"classes\": %zu, \"rejected\": %zu, \"samples\": %zu",
            f->rows, f->classes, f->sum.rows_rejected, f->samples);
    if (f->stats_fine)
        fprintf(out, ", \"source\": \"statistics\", \"fine\": %d, \"channels\": \"%s\"", f->stats_fine,
                f->stats_regions ? "regions" : "softmax");
    if (o->select_given) fprintf(out, ", \"selected\": %zu", f->m.selected);
    fputs(",\n     \"settings\": ", out);
    settings_json(out, o);
    metrics_json(out, f);
    fputc('}', out);
    if (f->m.has_ci) ci_info_json(out, &f->m.ci);
    bins_json(out, o, f);
    load_json(out, f);
    if (f->m.has_cases) cases_json(out, &f->m.cases);
    if (f->m.curve) curve_json(out, f->m.curve, f->stats_fine != 0, o->true_ece_given ? o->true_ece : NAN);
    if (f->m.has_topk) topk_json(out, f);
    if (f->m.has_likert) likert_json(out, f);
    if (f->has_compat) rep_out_compat_json(out, o, f);
    fputc('}', out);
}

void rep_out_json_file(FILE *out, const rep_opts *o, const rep_file *f)
{
    file_json(out, o, f);
}

void rep_out_json_error(FILE *out, const rep_file *f)
{
    fputs("{\"path\": ", out);
    rep_json_str(out, f->path);
    fprintf(out, ", \"status\": %d, \"message\": ", f->usage_error ? 2 : 3);
    rep_json_str(out, f->error);
    fputc('}', out);
}

void rep_out_json(FILE *out, const rep_opts *o, const rep_file *files, size_t n, const rep_compare *cmp)
{
    fputs("{\"files\": [\n", out);
    int first = 1;
    for (size_t i = 0; i < n; i++) {
        if (!files[i].loaded || files[i].usage_error) continue;
        if (!first) fputs(",\n", out);
        file_json(out, o, &files[i]);
        first = 0;
    }
    fputs("\n  ],\n  \"errors\": [", out);
    first = 1;
    for (size_t i = 0; i < n; i++) {
        if (files[i].loaded && !files[i].usage_error) continue;
        fputs(first ? "\n    " : ",\n    ", out);
        rep_out_json_error(out, &files[i]);
        first = 0;
    }
    for (size_t i = 0; cmp && i < cmp->pair.n; i++) {   /* --compare: files that do not pair */
        fputs(first ? "\n    {\"path\": " : ",\n    {\"path\": ", out);
        rep_json_str(out, cmp->pair.path[i]);
        fputs(", \"status\": 3, \"message\": ", out);
        rep_json_str(out, cmp->pair.msg[i]);
        fputc('}', out);
        first = 0;
    }
    fputs(first ? "]" : "\n  ]", out);
    if (cmp && !rep_methods_multi(cmp->methods)) compare_json(out, cmp);
    if (cmp && cmp->methods) rep_methods_json(out, cmp->methods);   /* methods table (methods.c) */
    fputs("\n}\n", out);
}
