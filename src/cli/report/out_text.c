/* `--format text` (the default): per file a load line, a settings line, the metrics with six
 * decimals and the bin table; `--plot` adds the reliability diagram (chart module). */
#include "cli/report/rep.h"

#include "calscope/text.h"

#include <math.h>
#include <string.h>

#include "calscope/methods.h"
#include "chart/chart.h"


double rep_curve_bias(const cs_curve *c, const cs_curve_point *pt, int id, double truth)
{
    int estimates = id == CS_METRIC_ECE || id == CS_METRIC_ACE || id == CS_METRIC_RECE_G ||
                    id == CS_METRIC_SMECE || id == CS_METRIC_ECE_SWEEP;
    return c->kind == CS_CURVE_SIZE && estimates && isfinite(truth) ? pt->stat[id].mean - truth : NAN;
}

/* The notes under a curve's table: the small-sample rule's marks and claims. */
static void curve_too_few_note(FILE *out, const cs_curve *c, int by_case)
{
    int marked = 0;
    for (size_t i = 0; i < c->n_points; i++) marked |= c->points[i].too_few;
    if (c->kind == CS_CURVE_BINS && c->stable_thin && by_case)
        fprintf(out, "  %s: stability is only claimed on at least %d cases (%zu here)\n",
                c->stable_first < 0 ? "no stable range" : "stable range over the dense points only",
                CS_TOO_FEW_CASES, c->n_cases);
    else if (c->kind == CS_CURVE_BINS && c->stable_thin)
        fprintf(out, "  %s: stability is only claimed where there are at least %d samples per bin\n"
                "  (N/M for M bins, gamma*N for kd-tree cells)\n",
                c->stable_first < 0 ? "no stable range" : "stable range over the dense points only",
                CS_TOO_FEW_PER_BIN);
    else if (c->kind == CS_CURVE_SIZE && marked && by_case)
        fprintf(out, "  too few: fewer than %zu cases per subset (cases are the unit resampled): its\n"
                "  spread is that of a handful of cases\n", c->too_few_min);
    else if (c->kind == CS_CURVE_SIZE && marked)
        fprintf(out, "  too few: fewer than %zu rows per subset (%d per bin): its spread is that of a\n"
                "  handful of samples per bin\n", c->too_few_min, CS_TOO_FEW_PER_BIN);
}

/* by_case: a statistics dataset, whose resamples draw cases. truth: --true-ece or NAN. */
static void curve_text(FILE *out, const cs_curve *c, int by_case, double truth)
{
    const char *xname = c->kind == CS_CURVE_SIZE ? "fraction" : c->kdtree ? "gamma" : "bins";
    char n[64];
    if (by_case && c->kind == CS_CURVE_BINS) snprintf(n, sizeof n, "%zu cases, %zu voxels", c->n_cases, c->n_samples);
    else snprintf(n, sizeof n, "%zu%s", c->n_samples, by_case ? " cases" : "");
    fprintf(out, "  %s curve: %d repeats %s replacement, N=%s%s; mean, sd, 2.5-97.5%% range, mean |dev|\n",
            c->kind == CS_CURVE_SIZE ? "size" : "bins", c->repeats, c->replace ? "with" : "without", n,
            by_case ? " (cases are resampled, not voxels)" : "");
    const char *unit = !by_case ? "rows" : c->kind == CS_CURVE_SIZE ? "cases" : "voxels";
    for (int id = 0; id < CS_METRIC_COUNT; id++) {
        if (!(c->metrics & CS_METRIC_BIT(id))) continue;
        fprintf(out, "  %-8s %8s %7s %9s %9s %9s %9s %9s\n", cs_metric_name(id), xname, unit, "mean", "sd", "lo",
                "hi", "abs_dev");
        for (size_t i = 0; i < c->n_points; i++) {
            const cs_curve_point *pt = &c->points[i];
            const cs_stat *st = &pt->stat[id];
            fprintf(out, "  %-8s %8g %7zu %9.6f %9.6f %9.6f %9.6f %9.6f%s", "", pt->x, pt->rows, st->mean, st->sd,
                    st->lo, st->hi, st->abs_dev,
                    c->kind == CS_CURVE_BINS && id == c->stable_metric && (int)i >= c->stable_first &&
                    (int)i <= c->stable_last && c->stable_first >= 0 ? "  stable"
                    : pt->too_few ? "  too few" : "");
            double bias = rep_curve_bias(c, pt, id, truth);
            if (isfinite(bias)) fprintf(out, "  bias %+.6f", bias);
            fputc('\n', out);
        }
    }
    curve_too_few_note(out, c, by_case);
    if (c->kind == CS_CURVE_SIZE && isfinite(truth))
        fprintf(out, "  true top-1 ECE %.6f (--true-ece); bias = mean - true ECE, for the estimators of it\n"
                "  (ece, ace, rece_g, smece, ece_sweep)\n", truth);
    else if (c->kind == CS_CURVE_SIZE)
        fputs("  abs_dev is the deviation from the metric on all samples, not bias (the true value is\n"
              "  unknown; on a synthetic file give it with --true-ece X)\n", out);
    if (c->kind == CS_CURVE_BINS && isfinite(c->sweep_bins))
        fprintf(out, "  ECE_sweep on all samples chooses M=%.0f (the report's ece_sweep_bins)\n", c->sweep_bins);
    rep_smece_binned_note(out, c->smece_binned);
    fputc('\n', out);
}

void rep_ci_note(FILE *out, int method)
{
    if (method == CS_CI_PERCENTILE)
        fputs("  ! the interval does not contain the value: it is the percentile bootstrap of a\n"
              "    biased statistic (binned errors are biased upwards, resamples with their\n"
              "    repeated rows more so); --ci-method bca (or basic) gives a bias-corrected\n"
              "    interval\n", out);
    else
        fprintf(out, "  ! the %s interval does not contain the value: the value itself is biased by\n"
                "    more than its sampling spread (the bias-corrected interval is where the metric\n"
                "    likely is)\n",
                method == CS_CI_BCA ? "BCa" : "basic");
}

void rep_paired_note(FILE *out)
{
    fputs("  ! the paired interval does not contain the difference: it is the percentile\n"
          "    bootstrap of a difference of biased statistics (resamples with their\n"
          "    repeated rows bias binned errors upwards, and not by the same amount in\n"
          "    both methods)\n", out);
}

void rep_draws_line(FILE *out, size_t draw, size_t units)
{
    if (draw >= units) return;
    fprintf(out, "  draws     %zu of the %zu samples each (m out of n), spread scaled by\n"
            "            sqrt(m/n); no interval where marked n/a (--boot-size full)\n", draw, units);
}

void rep_smece_binned_note(FILE *out, int binned)
{
    if (binned)
        fprintf(out, "  smece's resamples: each draw's samples linearly binned onto %d cells per\n"
                "    bandwidth (files of %d samples and more; the value itself is exact)\n",
                CS_SMECE_BIN_PER_SIGMA, CS_SMECE_BINNED_MIN);
}

void rep_wrap(FILE *out, const char *text, int indent)
{
    int col = 0, words = 0;
    const char *p = text;
    while (*p == ' ' && col < indent) { fputc(' ', out); col++; p++; }   /* the text's own indent */
    while (*p) {
        size_t gap = strspn(p, " ");   /* kept as written when the word stays on the line */
        p += gap;
        size_t len = strcspn(p, " ");
        if (!len) break;
        int fits_a_line = (int)len <= REP_TEXT_WIDTH - indent;   /* else it is broken where it stands */
        if (words && fits_a_line && col + (int)gap + (int)len > REP_TEXT_WIDTH) {   /* on the next line */
            fprintf(out, "\n%*s", indent, "");
            col = indent;
        } else if (words) {
            fprintf(out, "%*s", (int)gap, "");
            col += (int)gap;
        }
        while ((int)len > REP_TEXT_WIDTH - col) {   /* longer than a line: break it */
            int room = REP_TEXT_WIDTH - col;
            fprintf(out, "%.*s\n%*s", room, p, indent, "");
            p += room;
            len -= (size_t)room;
            col = indent;
        }
        fprintf(out, "%.*s", (int)len, p);
        col += (int)len;
        p += len;
        words++;
    }
    fputc('\n', out);
}

unsigned rep_text_metrics(const ss_methods_opts *mo)
{
    if (mo->text_metrics_given) return mo->text_metrics;
    return 1u << CS_METRIC_ECE | 1u << CS_METRIC_ACE | 1u << CS_METRIC_MCE | 1u << CS_METRIC_BRIER
         | 1u << CS_METRIC_NLL | 1u << CS_METRIC_SMECE;
}

int rep_text_shows_col(unsigned mask, int col)
{
    if (col == CS_METHODS_COL_TOPK) return (mask & SS_METRICS_TOPK_BIT) != 0;
    return (mask >> cs_methods_col_metric(col)) & 1u;
}

int rep_compare_too_few(const rep_compare *cmp)
{
    return cmp->done && cs_too_few(cmp->res.n_pairs, cmp->bins, cmp->by_case);
}

void rep_too_few_note(FILE *out, size_t pairs, size_t min, int by_case)
{
    char line[256];
    snprintf(line, sizeof line, "  ? too few paired %s (%zu, fewer than %zu): the interval and p_better rest on a "
             "bootstrap over too few %s to decide anything", by_case ? "cases" : "samples", pairs, min,
             by_case ? "cases" : "samples per bin");
    rep_wrap(out, line, 4);
}

void rep_out_compare_text(FILE *out, const rep_compare *cmp)
{
    if (!cmp->done) return;
    /* one sign everywhere in the text: method - reference, here B - A (JSON keeps a - b) */
    char line[4096];
    snprintf(line, sizeof line, "compare  A = %s (reference)", cmp->a);
    rep_wrap(out, line, 13);
    snprintf(line, sizeof line, "         B = %s", cmp->b);
    rep_wrap(out, line, 13);
    if (cmp->by_case)
        snprintf(line, sizeof line, "  %zu paired cases (by name), %d resamples of the cases; diff = B - A (method - "
                 "reference) with its 95%% interval, p_better = share of resamples where B is better",
                 cmp->res.n_pairs, cmp->res.repeats);
    else
        snprintf(line, sizeof line, "  %zu paired samples (by %s), %d resamples; diff = B - A (method - reference) "
                 "with its 95%% interval, p_better = share of resamples where B is better",
                 cmp->res.n_pairs, cmp->res.by_id ? "id" : "row", cmp->res.repeats);
    rep_wrap(out, line, 2);
    rep_draws_line(out, cmp->res.draw_size, cmp->res.n_pairs);
    fprintf(out, "  %-13s %10s %10s %10s  %-22s%8s\n", "metric", "A", "B", "diff", "95% interval", "p_better");
    int ties = 0, misses = 0, few = rep_compare_too_few(cmp), shown_few = 0;
    for (size_t i = 0; i < cmp->res.n_entries; i++) {
        const cs_compare_entry *e = &cmp->res.entries[i];
        if (!((cmp->text_metrics >> e->metric) & 1u)) continue;   /* --metrics: JSON has it */
        if (e->equal) {   /* rounding noise: no side is better */
            fprintf(out, "  %-13s %10.6f %10.6f %10.6f  [%9.6f, %9.6f] %7s\n", cs_metric_name(e->metric), e->a, e->b,
                    0.0, 0.0, 0.0, "=");
            ties = 1;
        } else if (isfinite(e->diff) && cs_compare_needs_full_draws(&cmp->res, e->metric)) {
            fprintf(out, "  %-13s %10.6f %10.6f %10.6f  %s\n", cs_metric_name(e->metric), e->a, e->b, -e->diff,
                    CS_NEEDS_FULL_DRAWS_TEXT);
        } else if (!isfinite(e->diff)) {   /* no number in either file: say where there is one */
            const cs_metric_info *mi = cs_metric_info_of(e->metric);
            fprintf(out, "  %-13s %10s %10s %10s   (%s)\n", cs_metric_name(e->metric), "n/a", "n/a", "n/a",
                    mi && mi->only ? mi->only : "undefined on these samples");
        } else {
            int miss = !few && cs_methods_interval_misses(e->diff, e->lo, e->hi);
            misses |= miss;
            shown_few |= few;
            fprintf(out, "  %-13s %10.6f %10.6f %10.6f  [%9.6f, %9.6f]%c%7.3f\n", cs_metric_name(e->metric), e->a, e->b,
                    -e->diff, -e->hi, -e->lo, few ? '?' : miss ? '!' : ' ', e->p_worse);
        }
    }
    if (misses) rep_paired_note(out);
    rep_smece_binned_note(out, cmp->res.smece_binned);
    if (shown_few) rep_too_few_note(out, cmp->res.n_pairs, cs_too_few_min(cmp->bins, cmp->by_case), cmp->by_case);
    if (ties)
        fprintf(out, "  = : a tie, A and B and every resample within %g of the metric's scale\n"
                "      (rounding noise)\n", CS_TIE_REL);
    fputc('\n', out);
}

static void settings_line(FILE *out, const rep_opts *o)
{
    const cs_settings *s = &o->settings;
    char lens[CS_SPEC_MAX + 16], dist[80];
    cs_settings_lens_name(s, lens, sizeof lens);
    ss_distance_name(s, dist, sizeof dist);
    fprintf(out, "  settings  lens %s, %d %s bins", lens, s->bins, ss_binning_name(s->binning));
    if (s->binning == CS_BIN_KDTREE) fprintf(out, " (gamma %g)", s->gamma);
    fprintf(out, ", distance %s, sigma %g, mixture %s", dist, s->sigma, ss_mixture_name(s->mixture));
    if (s->smece_sigma > 0) fprintf(out, ", smece sigma %g", s->smece_sigma);
    fputc('\n', out);
}

/* What the loader read: rows (or a statistics file's cases and voxels), what it changed and
 * skipped, the columns it ignored. */
static void load_text(FILE *out, const rep_file *f)
{
    char voxels[32];
    if (f->stats_fine)   /* statistics: no rows were read, its cases' voxels were summed */
        fprintf(out, "  load      %zu case%s, %s voxels; %zu classes", f->stats_cases, f->stats_cases == 1 ? "" : "s",
                cs_text_count(voxels, sizeof voxels, f->rows), f->classes);
    else
        fprintf(out, "  load      %zu rows read, %zu used, %zu rejected; %zu classes", f->sum.rows_read,
                f->sum.rows_used, f->sum.rows_rejected, f->classes);
    if (f->samples != f->rows) fprintf(out, "; %zu samples (tta 0)", f->samples);
    if (f->sum.from_logits) fputs("; softmax of logits", out);
    if (f->sum.rows_renormalized) fprintf(out, "; %zu rows renormalized", f->sum.rows_renormalized);
    if (f->sum.blank_lines)   /* skipped, holding no data, but counted */
        fprintf(out, "; %zu blank line%s skipped", f->sum.blank_lines, f->sum.blank_lines == 1 ? "" : "s");
    if (f->sum.class_note) fprintf(out, "\n  classes   %s", f->sum.class_note);
    fputs("\n  ignored   ", out);
    if (!f->sum.n_ignored) fputs("no columns", out);
    for (size_t i = 0; i < f->sum.n_ignored; i++) {
        const char *name = f->sum.ignored_columns[i];   /* a header ending in a delimiter has one */
        fprintf(out, "%s%s", i ? ", " : "", name[0] ? name : "a column with no name");
    }
    fputc('\n', out);
    for (size_t i = 0; i < f->sum.n_skipped_messages; i++) fprintf(out, "  skipped   %s\n", f->sum.skipped[i]);
    if (f->sum.rows_rejected > f->sum.n_skipped_messages)
        fprintf(out, "  skipped   ... and %zu more rows\n", f->sum.rows_rejected - f->sum.n_skipped_messages);
    if (f->stats_fine)
        fprintf(out, "  source    statistics: %s channels, fine resolution %d (exact for every M dividing it)\n",
                f->stats_regions ? "independent sigmoid region" : "softmax", f->stats_fine);
}

/* One metric's value with its interval (or n/a); sets *excl when the interval misses the
 * value, *undefined when it has no interval. */
static void metric_ci_line(FILE *out, const rep_file *f, const cs_metric_info *mi, double v, int *excl, int *undefined)
{
    int id = (int)mi->id;
    int x = cs_ci_excludes_value(&f->m.ci, id);
    *excl |= x;
    if (isfinite(f->m.ci.lo[id]) && isfinite(f->m.ci.hi[id]))
        fprintf(out, "  %-13s %10.6f   [%9.6f, %9.6f]%s\n", mi->key, v, f->m.ci.lo[id], f->m.ci.hi[id], x ? " !" : "");
    else {
        fprintf(out, "  %-13s %10.6f   [%9s, %9s]\n", mi->key, v, "n/a", "n/a");
        *undefined = 1;
    }
}

/* A metric with no value: n/a, and why (statistics are exact only for some metrics). */
static void metric_na_line(FILE *out, const rep_file *f, const cs_metric_info *mi)
{
    int id = (int)mi->id;
    fprintf(out, "  %-13s %10s   %s%s%s%s\n", mi->key, "n/a", mi->help,
            f->stats_fine ? " (" : mi->only ? " (" : "",
            f->stats_fine ? (f->stats_regions && id == CS_METRIC_ACCURACY
                             ? "top-1 is undefined for independent sigmoid regions"
                             : "not exact from statistics")
            : mi->only ? mi->only : "",
            f->stats_fine || mi->only ? ")" : "");
}

/* The metric table, with intervals under --ci, and the notes its marks need. */
static void metrics_text(FILE *out, const rep_opts *o, const rep_file *f)
{
    if (f->m.has_ci) {   /* the interval's method on its own line: the header fits 80 columns */
        fprintf(out, "  intervals %s, %d resamples, seed %llu\n", cs_ci_method_name(f->m.ci.method),
                f->m.ci.repeats, (unsigned long long)o->seed);
        rep_draws_line(out, f->m.ci.draw_size, f->m.ci.units);
        fprintf(out, "  %-13s %10s   %-22s\n", "metric", "value", "95% interval");
    } else {
        fprintf(out, "  %-13s %10s\n", "metric", "value");
    }
    int excl = 0, undefined = 0;
    for (size_t m = 0; m < CS_METRIC_COUNT; m++) {
        const cs_metric_info *mi = cs_metric_at(m);
        int id = (int)mi->id;
        double v = cs_metric_value(&f->m.result, id);
        if (f->m.has_ci && cs_ci_needs_full_draws(&f->m.ci, id) && isfinite(v))
            fprintf(out, "  %-13s %10.6f   %s\n", mi->key, v, CS_NEEDS_FULL_DRAWS_TEXT);
        else if (f->m.has_ci && (f->m.ci.metrics & CS_METRIC_BIT(id)) && isfinite(v)) metric_ci_line(out, f, mi, v, &excl, &undefined);
        else if (isfinite(v)) fprintf(out, "  %-13s %10.6f   %s\n", mi->key, v, mi->help);
        else metric_na_line(out, f, mi);
    }
    if (excl) rep_ci_note(out, f->m.ci.method);
    if (f->m.has_ci) rep_smece_binned_note(out, f->m.ci.smece_binned);
    if (undefined)
        fputs("  n/a: BCa is undefined when every resample lies on one side of the value (the bias exceeds\n"
              "  the resampling spread); --ci-method basic still gives a bias-corrected interval\n", out);
}

/* The reliability bins: calscope's, or under --compat NAME that library's. */
static void bins_text(FILE *out, const rep_opts *o, const rep_file *f)
{
    const cs_bin *bins;
    size_t nb;
    const char *note;
    const char *from = rep_file_bins(o, f, &bins, &nb, &note);
    int lib = strcmp(from, "calscope") != 0;
    fputc('\n', out);
    if (note[0]) fprintf(out, "  bins from %s: %s\n", from, note);
    fprintf(out, "  %4s %8s %8s %8s %9s %9s %9s\n", "bin", "lo", "hi", "count", "conf", "acc", "gap");
    for (size_t i = 0; i < nb; i++) {
        const cs_bin *b = &bins[i];
        fprintf(out, "  %4zu %8.4f %8.4f %8zu", i + 1, b->lo, b->hi, b->count);
        /* a library's empty bins show what it puts there (0), "-" where it has nothing */
        const double v[3] = { b->conf, b->acc, b->gap };
        for (int j = 0; j < 3; j++) {
            if ((b->count || lib) && isfinite(v[j])) fprintf(out, " %9.6f", v[j]);
            else fprintf(out, " %9s", "-");
        }
        fputc('\n', out);
    }
    fputc('\n', out);
}

static void cases_text(FILE *out, const cs_case_metrics *cm)
{
    fprintf(out, "  per case  %zu cases: mean +- population sd over cases, and pooled over all rows\n", cm->n_cases);
    fprintf(out, "  ece       %.6f +- %.6f   pooled %.6f\n", cm->ece_stat.mean, cm->ece_stat.sd, cm->pooled_ece);
    fprintf(out, "  ace       %.6f +- %.6f   pooled %.6f\n", cm->ace_stat.mean, cm->ace_stat.sd, cm->pooled_ace);
    fprintf(out, "  mce       %.6f +- %.6f   pooled %.6f\n\n", cm->mce_stat.mean, cm->mce_stat.sd, cm->pooled_mce);
}

static void topk_text(FILE *out, const rep_opts *o, const rep_file *f)
{
    fprintf(out, "  top-k ECE (%d %s bins)\n", o->settings.bins, ss_binning_name(o->settings.binning));
    for (size_t i = 0; i < f->m.n_topk; i++) {
        if (isfinite(f->m.topk_ece[i])) fprintf(out, "  k=%-6d %10.6f\n", f->m.topk_k[i], f->m.topk_ece[i]);
        else fprintf(out, "  k=%-6d %10s\n", f->m.topk_k[i], "n/a");
    }
    fputc('\n', out);
}

static void likert_text(FILE *out, const rep_opts *o, const rep_file *f)
{
    char lens[64];
    cs_settings_lens_name(&o->settings, lens, sizeof lens);
    fprintf(out, "  Likert categories (%s, %d %s bins, distance interval:lo,hi)\n", lens,
            o->settings.bins, ss_binning_name(o->settings.binning));
    fprintf(out, "  %-16s %8s %10s\n", "category", "count", "ece");
    for (size_t i = 0; i < f->m.likert.n; i++) {
        const cs_likert_interval *iv = &f->m.likert.iv[i];
        char cat[48];
        snprintf(cat, sizeof cat, "[%g, %g%c", iv->lo, iv->hi, iv->hi_closed ? ']' : ')');
        if (isfinite(iv->ece)) fprintf(out, "  %-16s %8zu %10.6f\n", cat, iv->count, iv->ece);
        else fprintf(out, "  %-16s %8zu %10s\n", cat, iv->count, "n/a");
    }
    fputc('\n', out);
}

static void file_text(FILE *out, const rep_opts *o, const rep_file *f)
{
    rep_wrap(out, f->path, 0);
    load_text(out, f);
    settings_line(out, o);
    if (o->select_given)
        fprintf(out, "  select    '%s' kept %zu of %zu samples\n", o->settings.select, f->m.selected, f->samples);
    fputc('\n', out);
    if (!f->m.evaluated) {
        fputs("  no sample to measure: every metric is n/a\n\n", out);
        return;
    }
    metrics_text(out, o, f);
    bins_text(out, o, f);
    if (f->m.has_cases) cases_text(out, &f->m.cases);
    if (f->m.curve) curve_text(out, f->m.curve, f->stats_fine != 0, o->true_ece_given ? o->true_ece : NAN);
    if (f->m.has_topk) topk_text(out, o, f);
    if (f->m.has_likert) likert_text(out, o, f);
    if (f->has_compat) rep_out_compat_text(out, o, f);
}

void rep_out_text(FILE *out, const rep_opts *o, const rep_file *files, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (files[i].loaded && !files[i].usage_error) file_text(out, o, &files[i]);
}

/* The ECE variance curve (mean with its 2.5-97.5 % band) and, when followed, RECE-G. */
static void plot_curve(FILE *out, const cs_curve *c, ch_buf *b, const ch_glyphs *g)
{
    enum { P = CS_CURVE_MAX_POINTS };
    double x[P], y[2][P], lo[2][P], hi[2][P];
    static const int ids[2] = { CS_METRIC_ECE, CS_METRIC_RECE_G };
    ch_series se[2];
    size_t ns = 0, n = c->n_points < P ? c->n_points : P;
    for (size_t i = 0; i < n; i++) x[i] = c->points[i].x;
    for (int s = 0; s < 2; s++) {
        if (!(c->metrics & CS_METRIC_BIT(ids[s]))) continue;
        for (size_t i = 0; i < n; i++) {
            y[ns][i] = c->points[i].stat[ids[s]].mean;
            lo[ns][i] = c->points[i].stat[ids[s]].lo;
            hi[ns][i] = c->points[i].stat[ids[s]].hi;
        }
        se[ns] = (ch_series){ cs_metric_name(ids[s]), y[ns], lo[ns], hi[ns], 0 };
        ns++;
    }
    if (!ns) return;
    /* x on a log scale only when it is increasing and positive (fractions, M); gamma curves run
     * downwards, so they are drawn in index order on a linear scale of the values reversed */
    int increasing = 1;
    for (size_t i = 1; i < n; i++) if (!(x[i] > x[i - 1])) increasing = 0;
    if (!increasing) return;
    char title[96];
    snprintf(title, sizeof title, "%s curve: mean and 2.5-97.5%% band over %d repeats",
             c->kind == CS_CURVE_SIZE ? "Size" : "Bins", c->repeats);
    ch_curve cc = { title, x, n, x[0] > 0, c->kind == CS_CURVE_SIZE ? "sample fraction" : "bins M",
                    se, ns, NAN, NAN };
    ch_buf_clear(b);
    if (ch_curve_draw(b, 0, 0, 80, 18, &cc, g) > 0) {
        ch_buf_write(b, out);
        fputc('\n', out);
    }
}

void rep_out_plot(FILE *out, const rep_opts *o, const rep_file *f, const ch_glyphs *g)
{
    if (!f->m.evaluated) return;
    char lens[CS_SPEC_MAX + 16], title[CS_SPEC_MAX + 512];
    cs_settings_lens_name(&o->settings, lens, sizeof lens);
    /* the path goes last so a long one is what gets clipped */
    const cs_bin *bins;
    size_t nb;
    const char *from = rep_file_bins(o, f, &bins, &nb, NULL);
    char whose[64] = "";
    if (strcmp(from, "calscope") != 0) snprintf(whose, sizeof whose, " (%s's)", from);
    snprintf(title, sizeof title, "Reliability: %s, %d %s bins%s, N=%zu, ECE %.4f  %s", lens, o->settings.bins,
             ss_binning_name(o->settings.binning), whose, f->m.result.n, f->m.result.ece, f->path);
    ch_buf *b = ch_buf_new(80, 24);
    if (!b) return;
    ch_reliability r = { bins, nb, 0, title, 1 };
    if (ch_reliability_draw(b, 0, 0, 80, 23, &r, g) > 0) {
        ch_buf_write(b, out);
        fputc('\n', out);
    }
    if (f->m.curve) plot_curve(out, f->m.curve, b, g);
    if (f->m.has_topk) {
        ch_bar bars[32];
        char labels[32][16];
        for (size_t i = 0; i < f->m.n_topk; i++) {
            snprintf(labels[i], sizeof labels[i], "k=%d", f->m.topk_k[i]);
            bars[i] = (ch_bar){ labels[i], f->m.topk_ece[i], NAN, NAN, 0 };
        }
        ch_bars bc = { "Top-k ECE", bars, f->m.n_topk, 0, 4 };
        ch_buf_clear(b);
        if (ch_bars_draw(b, 0, 0, 60, 24, &bc, g) > 0) {
            ch_buf_write(b, out);
            fputc('\n', out);
        }
    }
    ch_buf_free(b);
}
