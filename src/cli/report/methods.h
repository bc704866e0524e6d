/* `calscope report --compare` methods table: every loaded file and every post-hoc
 * recalibration (--recal) as one "method", with bootstrap intervals, paired differences to a
 * reference, rankings by each metric, and where each method moves probability mass.
 * Single-threaded front end over the engine (the bootstraps use --threads). */
#ifndef CALSCOPE_REPORT_METHODS_H
#define CALSCOPE_REPORT_METHODS_H

#include <stdint.h>
#include <stdio.h>

#include "calscope/dataset.h"
#include "calscope/recal.h"
#include "session/flags.h"

/* Flags of the methods table (part of rep_opts; parsed by the flag table, session/flags.h). */
typedef ss_methods_opts rep_methods_opts;

typedef struct rep_methods rep_methods;

/* --compare pairing refusals, as printed on stderr (for JSON "errors"). */
#define REP_PAIR_ERRORS 8
typedef struct rep_pair_errors {
    size_t n;
    char path[REP_PAIR_ERRORS][512];   /* the method that does not pair with the reference */
    char msg[REP_PAIR_ERRORS][1100];   /* "FILE:LINE:COL: --compare: reason" */
} rep_pair_errors;


/* Builds the table from the loaded files (data[i] NULL for a file that failed; paths[i] its
 * argument). Borrows data. Every method is first paired with the reference
 * (cs_compare_pair); each refusal is printed once and recorded in *pair (may be NULL). Returns
 * the table (rep_methods_free), or NULL when there is nothing to compare or no table may be
 * built: a method without data (its error was already printed) or one that does not pair.
 * *status is the exit status its failures imply (0, 2 or 3). */
rep_methods *rep_methods_run(const struct ss_opts *o, cs_dataset *const *data, const char *const *paths,
                             size_t n, int *status, rep_pair_errors *pair);
/* 1 when the table replaces the two-file "compare" output (more than two methods, a
 * recalibration, or a reference other than the first file). */
int rep_methods_multi(const rep_methods *m);
/* The paired comparison a − b that the table already resampled, when it is exactly what
 * `report --compare A B`'s two-file table asks for (two files, the first the reference, the
 * rows measured from a and b themselves, the same settings, metrics, repeats and seed); NULL
 * otherwise. Points into m (valid until rep_methods_free). */
const cs_compare *rep_methods_pair_of(const rep_methods *m, const cs_dataset *a, const cs_dataset *b);
/* 1 when the table has no paired differences because of --select-on each (then there is no
 * two-file table either). */
int rep_methods_no_pairs(const rep_methods *m);
/* The comparison's samples: the line saying how many samples without a partner (rows skipped in
 * another file) were left out, when any, and the selection's line (cs_methods_selection_line),
 * nothing without either; the JSON members `, "left_out": N, "selection": {...}` (null without
 * a selection), for compare_info. */
void rep_methods_selection_text(FILE *out, const rep_methods *m);
void rep_methods_selection_json(FILE *out, const rep_methods *m);
/* The comparison's verdict lines (cs_verdict_line): one per method but the reference, first in
 * the text; the JSON member `, "verdict": {...}` of a two-method comparison (null when there
 * is none). The sign is method - reference; "a" is the reference, "b" the method. */
struct rep_compare;
void rep_compare_verdict_text(FILE *out, const struct rep_compare *cmp);
void rep_compare_verdict_json(FILE *out, const struct rep_compare *cmp);
void rep_methods_json(FILE *out, const rep_methods *m);
void rep_methods_text(FILE *out, const rep_methods *m);
void rep_methods_csv(FILE *out, const rep_methods *m);
void rep_methods_free(rep_methods *m);

#endif
