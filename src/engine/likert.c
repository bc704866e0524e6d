/* Likert view: one prepared problem per interval (conventions in likert.h). Going through
 * the selection text, rather than filtering rows here, keeps the interval's samples exactly
 * those a user gets by typing the same --select and --distance by hand. */
#include "calscope/likert.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calscope/select.h"

const double cs_likert_default_cuts[4] = { 0.0, 0.33, 0.66, 1.0 };

static int blank(const char *s)
{
    for (; *s; s++)
        if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r') return 0;
    return 1;
}

/* n_cuts in 2..CS_LIKERT_MAX+1, finite, strictly increasing. */
static cs_status check_cuts(const double *cuts, size_t n_cuts, cs_error *err)
{
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
    return CS_OK;
}

/* The lens's first coordinate: its text in a selection (coord) and the column it reads (*col,
 * -1 for conf). `cls` is the column of --lens class. A column is written `p[#N]`, which the
 * selection language reads as the N-th column whatever the classes are named (a bare `p[N]`
 * names the class named N, another column when classes are numbers out of column order).
 * CS_EUSAGE for a lens without one. */
static cs_status first_coordinate(cs_lens_kind lens, int cls, char *coord, size_t size, int *col,
                                  cs_error *err)
{
    switch (lens) {
    case CS_LENS_TOP1:
    case CS_LENS_TOPK:
        snprintf(coord, size, "conf");
        *col = -1;
        return CS_OK;
    case CS_LENS_CLASS:
        snprintf(coord, size, "p[#%d]", cls);
        *col = cls;
        return CS_OK;
    case CS_LENS_FULL:
        snprintf(coord, size, "p[#0]");
        *col = 0;
        return CS_OK;
    default:
        return cs_error_set(err, CS_EUSAGE, 0, 0,
                            "Likert view: the grouping and classwise lenses have no single first "
                            "coordinate to select on; use top1, topk, class or full");
    }
}

/* The settings of interval iv: base's, scored on the interval distance over [lo, hi], the
 * selection narrowed to the interval in text (as a user would type it). CS_EUSAGE when that
 * text does not fit. */
static cs_status interval_settings(const cs_settings *base, const char *coord, const cs_likert_interval *iv,
                                   cs_settings *s, cs_error *err)
{
    int has_base = !blank(base->select);
    *s = *base;
    s->distance = CS_DIST_INTERVAL;
    s->interval_lo = iv->lo;
    s->interval_hi = iv->hi;
    int len = snprintf(s->select, sizeof s->select, "%s%s%s in [%.17g, %.17g%c",
                       has_base ? base->select : "", has_base ? " and " : "", coord,
                       iv->lo, iv->hi, iv->hi_closed ? ']' : ')');
    if (len < 0 || (size_t)len >= sizeof s->select)
        return cs_error_set(err, CS_EUSAGE, 0, 0, "Likert: the selection is too long (%d characters, at most %d)",
                            len, CS_SPEC_MAX - 1);
    return CS_OK;
}

/* One interval's count and ECE: the plan's samples whose coordinate falls in the interval
 * (rows, scratch of pl->n), prepared and binned. A category with no sample is left empty. */
static cs_status measure_interval(const cs_plan *pl, const cs_settings *s, const cs_select_band *band,
                                  uint32_t *rows, const atomic_int *cancel, cs_likert_interval *iv,
                                  cs_error *err)
{
    cs_plan narrow = *pl;   /* s is checked (cs_settings_check_scoring) and names these rows */
    narrow.s = *s;
    narrow.all = 0;
    narrow.rows = rows;
    narrow.n = cs_select_band_filter(band, pl->d, pl->rows, pl->n, rows);
    cs_prepared *p = cs_prepare_planned(&narrow, NULL, err);
    if (!p) return err->code == CS_EEMPTY ? CS_OK : err->code;   /* an empty category is a result */
    iv->count = cs_prepared_count(p);
    cs_result r;
    memset(&r, 0, sizeof r);
    cs_status st = cs_evaluate(p, NULL, 0, CS_WANT_BINNED, &(cs_run){ .threads = 1, .cancel = cancel }, &r, err);
    if (st == CS_OK) iv->ece = r.ece;
    cs_result_free(&r);
    cs_prepared_free(p);
    return st == CS_EEMPTY ? CS_OK : st;
}

/* The table over plan pl, whose lens has the first coordinate coord (column col, -1 conf). */
static cs_status likert_table(const cs_plan *pl, const char *coord, int col, const double *cuts,
                              size_t n_cuts, const atomic_int *cancel, cs_likert *out, cs_error *err)
{
    uint32_t *rows = malloc((pl->n ? pl->n : 1) * sizeof *rows);
    if (!rows) return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory (Likert)");
    cs_status st = CS_OK;
    out->n = n_cuts - 1;
    for (size_t i = 0; i + 1 < n_cuts && st == CS_OK; i++) {
        cs_likert_interval *iv = &out->iv[i];
        iv->lo = cuts[i];
        iv->hi = cuts[i + 1];
        iv->hi_closed = i + 2 == n_cuts;
        iv->ece = NAN;
        if (cancel && atomic_load_explicit(cancel, memory_order_relaxed)) {
            st = cs_error_set(err, CS_ECANCELLED, 0, 0, "cancelled");
            break;
        }
        cs_settings s;
        st = interval_settings(&pl->s, coord, iv, &s, err);
        if (st == CS_OK) st = cs_settings_check_scoring(&s, err);
        if (st != CS_OK) continue;
        if (pl->n == 0) continue;   /* every category is empty */
        cs_select_band band = { .cls = col, .lo = iv->lo, .hi = iv->hi, .hi_closed = iv->hi_closed };
        st = measure_interval(pl, &s, &band, rows, cancel, iv, err);
    }
    free(rows);
    if (st == CS_OK) cs_error_clear(err);
    return st;
}

cs_status cs_likert_planned(const cs_plan *pl, const double *cuts, size_t n_cuts,
                            const atomic_int *cancel, cs_likert *out, cs_error *err)
{
    memset(out, 0, sizeof *out);
    if (cs_dataset_need_rows(pl->d, "the Likert table", err) != CS_OK) return err->code;
    if (!cuts) { cuts = cs_likert_default_cuts; n_cuts = 4; }
    if (check_cuts(cuts, n_cuts, err) != CS_OK) return err->code;
    char coord[CS_SPEC_MAX];
    int col;
    int cls = pl->cls;
    if (pl->s.lens == CS_LENS_CLASS && pl->n == 0) {   /* a plan keeping nothing left it unresolved */
        int why;
        cls = cs_dataset_class_find(pl->d, pl->s.lens_arg, &why);
        if (cls < 0) return cs_dataset_class_error(pl->d, "--lens class", pl->s.lens_arg, why, err);
    }
    if (first_coordinate(pl->s.lens, cls, coord, sizeof coord, &col, err) != CS_OK) return err->code;
    return likert_table(pl, coord, col, cuts, n_cuts, cancel, out, err);
}

cs_status cs_likert_compute(const cs_dataset *d, const cs_settings *base, const double *cuts,
                            size_t n_cuts, const atomic_int *cancel, cs_likert *out, cs_error *err)
{
    memset(out, 0, sizeof *out);
    if (cs_dataset_need_rows(d, "the Likert table", err) != CS_OK) return err->code;
    if (!cuts) { cuts = cs_likert_default_cuts; n_cuts = 4; }
    if (check_cuts(cuts, n_cuts, err) != CS_OK) return err->code;
    char coord[CS_SPEC_MAX];
    int col;
    if (base->lens != CS_LENS_CLASS &&
        first_coordinate(base->lens, -1, coord, sizeof coord, &col, err) != CS_OK) return err->code;
    cs_plan *pl = cs_plan_new(d, base, err);
    if (!pl) return err->code;
    cs_status st = cs_likert_planned(pl, cuts, n_cuts, cancel, out, err);
    cs_plan_free(pl);
    return st;
}
