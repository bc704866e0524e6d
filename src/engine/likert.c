/* Likert view: one prepared problem per interval (conventions in likert.h). Going through
 * the selection text, rather than filtering rows here, keeps the interval's samples exactly
 * those a user gets by typing the same --select and --distance by hand. */
#include "calscope/likert.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calscope/select.h"

const double cs_likert_default_cuts[4] = { 0.0, 0.33, 0.66, 1.0 };

static int blank(const char *s)
{
    for (; *s; s++)
        if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r') return 0;
    return 1;
}

cs_status cs_likert_compute(const cs_dataset *d, const cs_settings *base, const double *cuts,
                            size_t n_cuts, const atomic_int *cancel, cs_likert *out, cs_error *err)
{
    if (cs_dataset_need_rows(d, "the Likert table", err) != CS_OK) { memset(out, 0, sizeof *out); return err->code; }
    memset(out, 0, sizeof *out);
    if (!cuts) { cuts = cs_likert_default_cuts; n_cuts = 4; }
    if (n_cuts < 2 || n_cuts > CS_LIKERT_MAX + 1)
        return cs_error_set(err, CS_EUSAGE, 0, 0, "Likert: need 2 to %d cut points, got %zu",
                            CS_LIKERT_MAX + 1, n_cuts);
    for (size_t i = 0; i < n_cuts; i++) {
        if (!isfinite(cuts[i]))
            return cs_error_set(err, CS_EUSAGE, 0, 0, "Likert: cut point %zu is not finite", i + 1);
        if (i > 0 && !(cuts[i] > cuts[i - 1]))
            return cs_error_set(err, CS_EUSAGE, 0, 0,
                                "Likert: cut points must increase (%.17g then %.17g)", cuts[i - 1], cuts[i]);
    }

    char coord[CS_SPEC_MAX];
    switch (base->lens) {
    case CS_LENS_TOP1:
    case CS_LENS_TOPK:
        snprintf(coord, sizeof coord, "conf");
        break;
    case CS_LENS_CLASS: {
        int why, c = cs_dataset_class_find(d, base->lens_arg, &why);
        if (c < 0) return cs_dataset_class_error(d, "--lens class", base->lens_arg, why, err);
        snprintf(coord, sizeof coord, "p[%d]", c);
        break;
    }
    case CS_LENS_FULL:
        snprintf(coord, sizeof coord, "p[0]");
        break;
    default:
        return cs_error_set(err, CS_EUSAGE, 0, 0,
                            "Likert view: the grouping and classwise lenses have no single first "
                            "coordinate to select on; use top1, topk, class or full");
    }

    /* Validate the user's selection on its own so a caret points into what they typed. */
    cs_select *sel = cs_select_compile(base->select, d, err);
    if (!sel) return err->code;
    cs_select_free(sel);

    int has_base = !blank(base->select);
    out->n = n_cuts - 1;
    for (size_t i = 0; i + 1 < n_cuts; i++) {
        cs_likert_interval *iv = &out->iv[i];
        iv->lo = cuts[i];
        iv->hi = cuts[i + 1];
        iv->hi_closed = i + 2 == n_cuts;
        iv->ece = NAN;

        if (cancel && atomic_load_explicit(cancel, memory_order_relaxed))
            return cs_error_set(err, CS_ECANCELLED, 0, 0, "cancelled");
        cs_settings s = *base;
        s.distance = CS_DIST_INTERVAL;
        s.interval_lo = iv->lo;
        s.interval_hi = iv->hi;
        int len = snprintf(s.select, sizeof s.select, "%s%s%s in [%.17g, %.17g%c",
                           has_base ? base->select : "", has_base ? " and " : "", coord,
                           iv->lo, iv->hi, iv->hi_closed ? ']' : ')');
        if (len < 0 || (size_t)len >= sizeof s.select)
            return cs_error_set(err, CS_EUSAGE, 0, 0, "Likert: the selection is too long (%d characters, at most %d)",
                                len, CS_SPEC_MAX - 1);
        cs_prepared *p = cs_prepare(d, &s, err);
        if (!p) {
            if (err->code == CS_EEMPTY) continue;   /* an empty category is a result, not an error */
            return err->code;
        }
        iv->count = cs_prepared_count(p);
        cs_result r;
        memset(&r, 0, sizeof r);
        cs_status st = cs_evaluate(p, NULL, 0, CS_WANT_BINNED, &(cs_run){ .threads = 1, .cancel = cancel }, &r, err);
        if (st == CS_OK) iv->ece = r.ece;
        cs_result_free(&r);
        cs_prepared_free(p);
        if (st != CS_OK && st != CS_EEMPTY) return st;
    }
    cs_error_clear(err);
    return CS_OK;
}
