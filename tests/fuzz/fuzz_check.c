/* libFuzzer target for the --check parser (rep_check_parse, src/cli/report/checks.c). The input is
 * the gate text (cut at the first NUL). Invariants:
 *   - it returns 0 or -1; a refusal leaves a non-empty, terminated message;
 *   - an accepted gate names a known metric and operator and a finite number, and prints back
 *     ("NAME OP %.17g", the canonical spelling) to text that parses to the same gate, bit for
 *     bit (parse -> print -> parse);
 *   - blanks around the gate change nothing: accepted or refused alike, with the same gate. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/report/rep.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *op_spelling(rep_op op)
{
    switch (op) {
    case REP_LE: return "<=";
    case REP_LT: return "<";
    case REP_GE: return ">=";
    case REP_GT: return ">";
    }
    abort();
}

static int parse(const char *text, rep_check *c)
{
    char msg[512];
    memset(msg, 'x', sizeof msg);
    memset(c, 0, sizeof *c);
    int rc = rep_check_parse(text, c, msg, sizeof msg);
    if (rc != 0 && rc != -1) abort();
    if (rc == -1 && (memchr(msg, '\0', sizeof msg) == NULL || msg[0] == '\0')) abort();
    if (rc == 0 && (c->metric < 0 || c->metric >= CS_METRIC_COUNT || !isfinite(c->value) ||
                    (c->op != REP_LE && c->op != REP_LT && c->op != REP_GE && c->op != REP_GT)))
        abort();
    return rc;
}

static int same_gate(const rep_check *a, const rep_check *b)
{
    return a->metric == b->metric && a->op == b->op &&
           memcmp(&a->value, &b->value, sizeof a->value) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1), *padded = malloc(size + 5);
    if (!text || !padded) { free(text); free(padded); return 0; }
    memcpy(text, data, size);
    text[size] = '\0';
    rep_check c, again;
    int rc = parse(text, &c);

    snprintf(padded, size + 5, " \t%s \n", text);
    if (parse(padded, &again) != rc || (rc == 0 && !same_gate(&c, &again))) abort();

    if (rc == 0) {
        char printed[128];
        snprintf(printed, sizeof printed, "%s%s%.17g", cs_metric_name(c.metric),
                 op_spelling(c.op), c.value);
        if (parse(printed, &again) != 0 || !same_gate(&c, &again)) abort();
    }
    free(text);
    free(padded);
    return 0;
}
