/* Documents rendered from the flag table: `--help` of each front end, the man page and the
 * flag reference of docs/flags.md. The texts around the flags (usage lines, the metric
 * glossary, exit statuses) are here once too, so the three documents say the same. */
#include "session/flags.h"

#include <string.h>

#include "calscope/version.h"

static const char *const section_title[SS_SEC_COUNT] = {
    "Metric settings", "Output", "Input",
    "Resampling (deterministic for a --seed whatever --threads)",
    "Segmentation volumes (calscope reduce)",
    "Following a training run (calscope report --follow DIR --format ndjson)", "Other",
};

static const char report_usage[] =
    "Usage: calscope report [OPTIONS] FILE...\n"
    "       calscope report --follow DIR|'DIR/GLOB' --format ndjson [OPTIONS]\n"
    "Prints the calibration metrics of prediction files (CSV, .csv.gz; \"-\" reads stdin).\n";

static const char dash_usage[] =
    "Usage: calscope [OPTIONS] FILE...        the dashboard (press ? inside for the keys)\n"
    "       cat FILE | calscope [OPTIONS] -    data from standard input, keys from /dev/tty\n"
    "       calscope report [OPTIONS] FILE... headless report (calscope report --help)\n";

static const char reduce_usage[] =
    "Usage: calscope reduce [OPTIONS] MANIFEST.csv           cases from a case,probs,labels manifest\n"
    "       calscope reduce [OPTIONS] --probs DIR --labels DIR  cases paired by file stem\n"
    "       calscope reduce --merge [-o STATS] A B ...        sums statistics files (shards)\n"
    "Reduces segmentation volumes (NIfTI .nii/.nii.gz, numpy .npy/.npz) to a statistics file\n"
    "that `calscope report STATS` and the dashboard read. Cases run in parallel (--threads)\n"
    "while their label maps and running values fit in --memory; a larger case runs alone\n"
    "(README \"Volumes in, statistics out\").\n";

static const char *const reduce_notes[] = {
    "Exit status: 0 ok, 2 usage error, 3 input error (a file unreadable or a case refused: the",
    "message names both files), 130 interrupted (no output file is left).",
    NULL,
};

/* Lines of the glossary, shared by --help and the man page. */
static const char *const metrics_notes[] = {
    "accuracy; ece = sum over bins of n_b/N * gap (with --binning mass it is the",
    "adaptive ECE, with --lens classwise the class-wise ECE / SCE); ace = mean gap over",
    "non-empty bins, not Nixon's adaptive ECE; mce = max over non-empty bins; rece_g =",
    "Gaussian-smoothed ECE summed over all M bins; rece_m = its test-time-augmentation",
    "mixture form (null without id/tta); brier = mean squared error summed over classes;",
    "nll = mean -ln p[y] (clipped at 1e-15); aece = top-1 equal-mass ECE; sce = class-wise",
    "uniform ECE.",
    NULL,
};

static const char *const report_notes[] = {
    "Several files are reported one after the other; a rejected file is reported on stderr and",
    "the others still appear (JSON lists it under \"errors\"), and the exit status is then 3.",
    "Exit status: 0 ok, 1 a --check failed, 2 usage error, 3 input error (file unreadable or",
    "rejected). Errors read `calscope: FILE:LINE:COL: reason`.",
    NULL,
};

static const char dash_notes[] =
    "The settings are spelled as for `calscope report`; `:` inside shows the report command\n"
    "that reproduces the screen. The dashboard needs a terminal that curses knows (TERM).\n"
    "CALSCOPE_TRACE=FILE writes key-to-draw latencies (microseconds), one line per key.\n";

static const char *help_of(const ss_flag *f, unsigned front)
{
    return front == SS_DASH && f->dash_help ? f->dash_help : f->help;
}

/* "  --flag META         first line\n                      next line\n" */
static void help_entry(FILE *out, const ss_flag *f, unsigned front)
{
    char left[64];
    if (strcmp(f->name, "--help") == 0) snprintf(left, sizeof left, "-h, --help");
    else snprintf(left, sizeof left, "%s%s%s", f->name, f->metavar ? " " : "", f->metavar ? f->metavar : "");
    const char *h = help_of(f, front);
    if (strlen(left) > 18) fprintf(out, "  %s\n%22s", left, "");
    else fprintf(out, "  %-20s", left);
    for (const char *p = h; *p; p++) {
        fputc(*p, out);
        if (*p == '\n') fprintf(out, "%22s", "");
    }
    fputc('\n', out);
}

void ss_help(FILE *out, unsigned front)
{
    size_t n;
    const ss_flag *t = ss_flags(&n);
    fputs(front == SS_DASH ? dash_usage : front == SS_REDUCE ? reduce_usage : report_usage, out);
    for (int s = 0; s < SS_SEC_COUNT; s++) {
        int any = 0;
        for (size_t i = 0; i < n; i++) {
            if (t[i].section != s || !(t[i].fronts & front)) continue;
            if (!any++) fprintf(out, "\n%s:\n", section_title[s]);
            help_entry(out, &t[i], front);
        }
    }
    fputc('\n', out);
    if (front == SS_DASH) { fputs(dash_notes, out); return; }
    if (front == SS_REDUCE) {
        for (int i = 0; reduce_notes[i]; i++) fprintf(out, "%s\n", reduce_notes[i]);
        return;
    }
    fputs("Metrics: ", out);
    for (int i = 0; metrics_notes[i]; i++) fprintf(out, "%s\n", metrics_notes[i]);
    fputc('\n', out);
    for (int i = 0; report_notes[i]; i++) fprintf(out, "%s\n", report_notes[i]);
}

/* ---- the man page (troff -man) ----------------------------------------------------------- */

/* Text with troff's specials escaped: backslash, a leading dot or quote, and '-' as \- so
 * flags copy as ASCII hyphens. */
static void roff(FILE *out, const char *s, int line_start)
{
    for (const char *p = s; *p; p++) {
        if (line_start && (*p == '.' || *p == '\'')) fputs("\\&", out);
        line_start = 0;
        if (*p == '\\') fputs("\\e", out);
        else if (*p == '-') fputs("\\-", out);
        else if (*p == '\n') { fputc('\n', out); line_start = 1; }
        else fputc(*p, out);
    }
}

static const char *fronts_word(unsigned fronts)
{
    return fronts == SS_REPORT ? "report only" : fronts == SS_DASH ? "dashboard only"
         : fronts == SS_REDUCE ? "calscope reduce only" : NULL;
}

void ss_man(FILE *out)
{
    size_t n;
    const ss_flag *t = ss_flags(&n);
    fprintf(out, ".TH CALSCOPE 1 \"\" \"calscope %s\" \"User Commands\"\n", CALSCOPE_VERSION);
    fputs(".\\\" Generated from the flag table (src/session/flags.c) by build/gen_flags man; do not edit.\n", out);
    fputs(".SH NAME\ncalscope \\- calibration dashboard and report for classifier predictions\n", out);
    fputs(".SH SYNOPSIS\n.B calscope\n[\\fIOPTIONS\\fR] \\fIFILE\\fR...\n.br\n"
          ".B calscope report\n[\\fIOPTIONS\\fR] \\fIFILE\\fR...\n.br\n"
          ".B calscope reduce\n[\\fIOPTIONS\\fR] \\fIMANIFEST.csv\\fR | \\fB\\-\\-probs\\fR \\fIDIR\\fR \\fB\\-\\-labels\\fR \\fIDIR\\fR\n.br\n"
          ".B calscope reduce \\-\\-merge\n[\\fB\\-o\\fR \\fISTATS\\fR] \\fISTATS\\fR...\n", out);
    fputs(".SH DESCRIPTION\n"
          "\\fBcalscope\\fR opens an interactive terminal dashboard of the calibration of\n"
          "classifier prediction files (CSV, .csv.gz; \\fB\\-\\fR reads standard input, the keys\n"
          "then come from /dev/tty). Press \\fB?\\fR inside for the keys and \\fB:\\fR for the report\n"
          "command that reproduces the screen. The dashboard needs a terminal that curses\n"
          "knows; elsewhere use \\fBcalscope report\\fR, which prints the same numbers as text,\n"
          "JSON or CSV. \\fBcalscope reduce\\fR reduces segmentation volumes (NIfTI, numpy) to a\n"
          "statistics file of exact per-case sums that both read.\n", out);
    fputs(".SH OPTIONS\nFlags take their value as \\fB\\-\\-flag value\\fR or \\fB\\-\\-flag=value\\fR and may\n"
          "follow the files; \\fB\\-\\-\\fR ends the flags. A flag that would change nothing is\n"
          "refused (exit 2). Unless marked, a flag applies to both the dashboard and the report.\n", out);
    for (int s = 0; s < SS_SEC_COUNT; s++) {
        fputs(".SS ", out);
        roff(out, section_title[s], 1);
        fputc('\n', out);
        for (size_t i = 0; i < n; i++) {
            if (t[i].section != s) continue;
            fputs(".TP\n.B ", out);
            roff(out, strcmp(t[i].name, "--help") == 0 ? "-h, --help" : t[i].name, 0);
            if (t[i].metavar) {
                fputs(" \\fI", out);
                roff(out, t[i].metavar, 0);
                fputs("\\fR", out);
            }
            fputc('\n', out);
            roff(out, t[i].help, 1);
            fputc('\n', out);
            if (t[i].dash_help) {
                fputs("In the dashboard: ", out);
                roff(out, t[i].dash_help, 0);
                fputc('\n', out);
            }
            const char *w = fronts_word(t[i].fronts);
            if (w) fprintf(out, "(%s)\n", w);
        }
    }
    fputs(".SH METRICS\n", out);
    for (int i = 0; metrics_notes[i]; i++) { roff(out, metrics_notes[i], 1); fputc('\n', out); }
    fputs(".SH EXIT STATUS\n", out);
    for (int i = 0; report_notes[i]; i++) { roff(out, report_notes[i], 1); fputc('\n', out); }
    fputs(".PP\n\\fBcalscope reduce\\fR:\n", out);
    for (int i = 0; reduce_notes[i]; i++) { roff(out, reduce_notes[i], 1); fputc('\n', out); }
    fputs(".SH ENVIRONMENT\n.TP\n.B NO_COLOR\nthe dashboard's monochrome theme (as \\fB\\-\\-no\\-color\\fR)\n"
          ".TP\n.B CALSCOPE_TRACE\na file the dashboard writes key\\-to\\-draw latencies to\n"
          ".TP\n.B TERM\nthe terminal the dashboard draws on; a terminal curses cannot drive is refused\n", out);
    fputs(".SH SEE ALSO\nREADME.md of the calscope sources.\n", out);
}

/* ---- the flag reference of docs/flags.md (markdown) ------------------------------------- */

/* A table cell: one line, '|' escaped. */
static void cell(FILE *out, const char *s)
{
    for (const char *p = s; *p; p++) {
        if (*p == '\n') fputc(' ', out);
        else if (*p == '|') fputs("\\|", out);
        else fputc(*p, out);
    }
}

void ss_readme(FILE *out)
{
    size_t n;
    const ss_flag *t = ss_flags(&n);
    fputs("| flag | in | meaning |\n|---|---|---|\n", out);
    for (size_t i = 0; i < n; i++) {
        fputs("| `", out);
        cell(out, strcmp(t[i].name, "--help") == 0 ? "-h, --help" : t[i].name);
        if (t[i].metavar) { fputc(' ', out); cell(out, t[i].metavar); }
        fputs("` | ", out);
        unsigned fr = t[i].fronts;
        fputs((fr & ~SS_REDUCE) == SS_REPORT ? "report" : (fr & ~SS_REDUCE) == SS_DASH ? "dashboard"
              : (fr & ~SS_REDUCE) ? "both" : "reduce", out);
        if ((fr & SS_REDUCE) && fr != SS_REDUCE) fputs(", reduce", out);
        fputs(" | ", out);
        cell(out, t[i].help);
        if (t[i].dash_help) {
            fputs(" (dashboard: ", out);
            cell(out, t[i].dash_help);
            fputc(')', out);
        }
        fputs(" |\n", out);
    }
}
