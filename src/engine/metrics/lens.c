/* cs_prepare: selection, then the lens (definitions of cmu-sei/gce; docs/metrics.md).
 *
 * Decisions:
 * - topk:1 is exactly top1 (a scalar lens), so every distance acts on |conf - acc|.
 * - topk:K with K >= the class count is clamped to the class count: o is the whole sorted
 *   vector plus a remainder (1 - sum, zero up to rounding), t the label indicator plus 0.
 * - Ties in top-k: equal probabilities are ordered by class index (lower first), the top-1
 *   tie rule extended; only t depends on it.
 * - group: classes by name or index, ',' within a group, ';' between groups; classes not
 *   named form a last group; at least two groups in all; unknown class, a class named twice
 *   or an empty group is a usage error.
 * - classwise keeps no per-class copy: it reads the probability matrix through rows. */
#include "mx.h"

#include <ctype.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "calscope/select.h"

void cs_mx_prepared_init(cs_prepared *p)
{
    memset(p, 0, sizeof *p);
    pthread_mutex_init(&p->lock, NULL);
}

void cs_prepared_free(cs_prepared *p)
{
    if (!p) return;
    if (!p->rows_borrowed) free(p->rows);
    if (!p->vt_borrowed) {
        free(p->v);
        free(p->t);
    }
    free(p->ubin);
    free(p->rece_d);
    cs_mx_rm_free(p->rece_m);
    cs_mx_scratch_free_all(p);
    if (!p->obuf_shared) free(p->obuf);
    free(p->rem);
    free(p->hot);
    free(p->order_v);
    free(p->rank_v);
    free(p->grid_cell);
    free(p->grid_c0);
    free(p->v1);
    free(p->t1);
    free(p->order_c);
    free(p->rank_c);
    free(p->vs_c);
    free(p->ts_c);
    free(p->rece_w);
    free(p->brier);
    free(p->nll);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

size_t cs_prepared_count(const cs_prepared *p) { return p->n; }
const uint32_t *cs_prepared_rows(const cs_prepared *p) { return p->rows; }

void cs_result_free(cs_result *r)
{
    if (!r) return;
    free(r->bins);
    r->bins = NULL;
    r->n_bins = 0;
    free(r->rece_acc);
    free(r->rece_conf);
    r->rece_acc = r->rece_conf = NULL;
    r->n_rece = 0;
    free(r->smece_mu);
    free(r->smece_density);
    r->smece_mu = r->smece_density = NULL;
    r->n_smece_curve = 0;
}

static void trim(char **a, char **z)
{
    while (*a < *z && isspace((unsigned char)**a)) (*a)++;
    while (*z > *a && isspace((unsigned char)(*z)[-1])) (*z)--;
}

cs_status cs_mx_parse_groups(const cs_dataset *d, const char *spec, int32_t *group_of,
                             size_t *ngroups, cs_error *err)
{
    size_t K = d->k, g = 0;
    for (size_t j = 0; j < K; j++) group_of[j] = -1;
    char buf[CS_SPEC_MAX];
    size_t len = strnlen(spec, CS_SPEC_MAX - 1);
    memcpy(buf, spec, len);
    buf[len] = '\0';
    char *p = buf;
    for (;;) {
        char *semi = strchr(p, ';');
        char *gend = semi ? semi : p + strlen(p);
        size_t members = 0;
        char *q = p;
        for (;;) {
            char *comma = memchr(q, ',', (size_t)(gend - q));
            char *a = q, *z = comma ? comma : gend;
            trim(&a, &z);
            if (a == z)
                return cs_error_set(err, CS_EUSAGE, 0, 0,
                                    "--lens group: empty class name in group %zu of '%s'", g + 1,
                                    spec);
            char save = *z;
            *z = '\0';
            int why, c = cs_dataset_class_find(d, a, &why);
            if (c < 0) return cs_dataset_class_error(d, "--lens group", a, why, err);
            if (group_of[c] >= 0) {
                cs_error_set(err, CS_EUSAGE, 0, 0,
                             "--lens group: class '%s' is named more than once", a);
                return CS_EUSAGE;
            }
            *z = save;
            group_of[c] = (int32_t)g;
            members++;
            if (!comma) break;
            q = comma + 1;
        }
        (void)members;
        g++;
        if (!semi) break;
        p = semi + 1;
    }
    int rest = 0;
    for (size_t j = 0; j < K; j++)
        if (group_of[j] < 0) { group_of[j] = (int32_t)g; rest = 1; }
    if (rest) g++;
    if (g < 2)
        return cs_error_set(err, CS_EUSAGE, 0, 0,
                            "--lens group: '%s' makes a single group; need at least two", spec);
    *ngroups = g;
    return CS_OK;
}

void cs_mx_sort_rows(const cs_dataset *d, const uint32_t *rows, size_t n, size_t kk,
                     double *out, int32_t *pos)
{
    size_t K = d->k;
    double *tmp = malloc(K * sizeof *tmp), *scr = malloc(K * sizeof *scr);
    uint32_t *ka = malloc(K * sizeof *ka), *kb = malloc(K * sizeof *kb);
    int radix = tmp && scr && ka && kb;
    for (size_t i = 0; i < n; i++) {
        const double *g = d->prob + (size_t)rows[i] * K;
        int32_t y = d->label[rows[i]];
        double gy = g[y];
        size_t rank = 0;
        for (size_t j = 0; j < K; j++)
            rank += (g[j] > gy) || (g[j] == gy && j < (size_t)y);
        pos[i] = (int32_t)(rank < kk ? rank : kk);
        double *o = out + i * kk;
        if (kk < K && (kk <= 8 || !tmp)) {
            /* keep the kk largest in a sorted buffer */
            size_t m = 0;
            for (size_t j = 0; j < K; j++) {
                double x = g[j];
                if (m == kk && !(x > o[kk - 1])) continue;
                size_t q = m < kk ? m++ : kk - 1;
                while (q > 0 && o[q - 1] < x) { o[q] = o[q - 1]; q--; }
                o[q] = x;
            }
        } else if (kk >= K) {
            memcpy(o, g, K * sizeof *o);
            cs_sort_doubles_desc(o, K, radix ? ka : NULL, kb, scr);
        } else {
            memcpy(tmp, g, K * sizeof *tmp);
            cs_sort_doubles_desc(tmp, K, radix ? ka : NULL, kb, scr);
            memcpy(o, tmp, kk * sizeof *o);
        }
    }
    free(scr);
    free(ka);
    free(kb);
    free(tmp);
}

/* Sets err to "out of memory (what)"; returns -1. */
static int nomem_in(cs_error *err, const char *what)
{
    cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory (%s)", what);
    return -1;
}

/* 1 when a selection expression keeps every sample (empty, or blanks only). */
static int select_blank(const char *sel)
{
    for (const char *c = sel; *c; c++)
        if (*c != ' ' && *c != '\t') return 0;
    return 1;
}

/* What cs_prepare refuses before any work: a row-less dataset, settings out of range, a
 * one-pass dataset under anything but all its samples on the top-1 lens (engine/metrics/rowsums.h),
 * a dataset not prepared. Returns 0, or -1 with err set. */
static int check_preparable(const cs_dataset *d, const cs_settings *s, cs_error *err)
{
    if (cs_dataset_need_rows(d, "this measurement", err) != CS_OK) return -1;
    if (cs_settings_validate(s, err) != CS_OK) return -1;
    if (d->row_sums && (s->lens != CS_LENS_TOP1 || !select_blank(s->select) || d->n_samples != d->n)) {
        cs_dataset_need_probs(d, s->lens != CS_LENS_TOP1 ? "a lens other than top1" : "a selection", err);
        return -1;
    }
    if (!d->conf || !d->sample_rows) {
        cs_error_set(err, CS_EUSAGE, 0, 0, "dataset not prepared (cs_dataset_prepare)");
        return -1;
    }
    return 0;
}

/* The samples p measures: every one (the dataset's list, borrowed: it outlives p, without a
 * per-row call) for a blank selection, else those the selection keeps; none is an error
 * naming the file. Returns 0, or -1 with err set. */
static int select_rows(cs_prepared *p, const cs_settings *s, int blank, cs_error *err)
{
    const cs_dataset *d = p->d;
    if (blank) {
        p->rows = d->sample_rows;
        p->rows_borrowed = 1;
        p->n = d->n_samples;
    } else {
        p->rows = malloc((d->n_samples ? d->n_samples : 1) * sizeof *p->rows);
        if (!p->rows) return nomem_in(err, "selection");
        cs_select *sel = cs_select_compile(s->select, d, err);
        if (!sel) return -1;
        p->n = cs_select_filter(sel, d, d->sample_rows, d->n_samples, p->rows);
        cs_select_free(sel);
    }
    if (p->n == 0) {
        if (blank)
            cs_error_set(err, CS_EEMPTY, 0, 0, "%s: no samples to measure",
                         d->path ? d->path : "input");
        else
            cs_error_set(err, CS_EEMPTY, 0, 0, "%s: the selection '%s' keeps no sample",
                         d->path ? d->path : "input", s->select);
        return -1;
    }
    return 0;
}

/* The lens's parameters: top-k's k as used (top-1 when it is 1), the class of --lens class.
 * Returns 0, or -1 with err set (an unknown class). */
static int resolve_lens(cs_prepared *p, const cs_settings *s, cs_error *err)
{
    const cs_dataset *d = p->d;
    if (p->kind == CS_LENS_TOPK) {
        p->k_eff = s->topk > (int)d->k ? (int)d->k : s->topk;
        if (p->k_eff == 1) p->kind = CS_LENS_TOP1;
    }
    if (p->kind == CS_LENS_CLASS) {
        int why;
        p->cls = cs_dataset_class_find(d, s->lens_arg, &why);
        if (p->cls < 0) {
            cs_dataset_class_error(d, "--lens class", s->lens_arg, why, err);
            return -1;
        }
    }
    return 0;
}

/* The top-k lens: each sample's k largest probabilities in descending order and the rest's
 * mass. Returns 0, or -1 out of memory. */
static int lens_topk(cs_prepared *p)
{
    size_t n = p->n, kk = (size_t)p->k_eff;
    p->vector = 1;
    p->dim = kk + 1;
    p->nrow = kk;
    p->obuf = malloc(n * kk * sizeof *p->obuf);
    p->rem = malloc(n * sizeof *p->rem);
    p->hot = malloc(n * sizeof *p->hot);
    if (!p->obuf || !p->rem || !p->hot) return -1;
    cs_mx_sort_rows(p->d, p->rows, n, kk, p->obuf, p->hot);
    p->obase = p->obuf;
    p->ostride = kk;
    p->sorted_desc = 1;
    for (size_t i = 0; i < n; i++) {
        double sum = 0.0;
        for (size_t j = 0; j < kk; j++) sum += p->obuf[i * kk + j];
        p->rem[i] = 1.0 - sum;
    }
    return 0;
}

/* The group lens: each sample's probabilities summed per group of --lens group. Returns 0,
 * or -1 with err set (a bad group list; out of memory). */
static int lens_group(cs_prepared *p, const cs_settings *s, cs_error *err)
{
    const cs_dataset *d = p->d;
    size_t n = p->n, K = d->k;
    int32_t *gof = malloc(K * sizeof *gof);
    size_t G = 0;
    if (!gof) return nomem_in(err, "group lens");
    if (cs_mx_parse_groups(d, s->lens_arg, gof, &G, err) != CS_OK) {
        free(gof);
        return -1;
    }
    p->vector = 1;
    p->dim = p->nrow = G;
    p->obuf = calloc(n * G, sizeof *p->obuf);
    p->hot = malloc(n * sizeof *p->hot);
    if (!p->obuf || !p->hot) {
        free(gof);
        return nomem_in(err, "group lens");
    }
    for (size_t i = 0; i < n; i++) {
        const double *g = d->prob + (size_t)p->rows[i] * K;
        double *o = p->obuf + i * G;
        for (size_t j = 0; j < K; j++) o[gof[j]] += g[j];
        p->hot[i] = gof[d->label[p->rows[i]]];
    }
    free(gof);
    p->obase = p->obuf;
    p->ostride = G;
    return 0;
}

/* Every sample's scalar (value, target) of the lens: borrowed from the dataset for top-1 over
 * every row (no tta, no selection), else made per selected row; the vector lenses' from
 * their first coordinate. Returns 0, or -1 with err set. */
static int lens_values(cs_prepared *p, const cs_settings *s, int blank, cs_error *err)
{
    const cs_dataset *d = p->d;
    size_t n = p->n, K = d->k;
    if (p->kind == CS_LENS_TOP1 && blank && d->n_samples == d->n) {
        p->v = d->conf;
        p->t = d->correct;
        p->vt_borrowed = 1;
    } else if (p->kind != CS_LENS_CLASSWISE) {
        p->v = malloc(n * sizeof *p->v);
        p->t = malloc(n);
        if (!p->v || !p->t) return nomem_in(err, "lens");
    }
    switch (p->kind) {
    case CS_LENS_TOP1:
        for (size_t i = 0; i < n && !p->vt_borrowed; i++) {
            p->v[i] = d->conf[p->rows[i]];
            p->t[i] = d->correct[p->rows[i]];
        }
        break;
    case CS_LENS_CLASS:
        for (size_t i = 0; i < n; i++) {
            p->v[i] = d->prob[(size_t)p->rows[i] * K + (size_t)p->cls];
            p->t[i] = d->label[p->rows[i]] == p->cls;
        }
        break;
    case CS_LENS_CLASSWISE:
        break;
    case CS_LENS_TOPK:
        if (lens_topk(p) != 0) return nomem_in(err, "top-k lens");
        break;
    case CS_LENS_GROUP:
        if (lens_group(p, s, err) != 0) return -1;
        break;
    case CS_LENS_FULL:
        p->vector = 1;
        p->dim = p->nrow = K;
        p->obase = d->prob;
        p->ostride = K;
        p->by_row = 1;
        p->hot = malloc(n * sizeof *p->hot);
        if (!p->hot) return nomem_in(err, "full lens");
        for (size_t i = 0; i < n; i++) p->hot[i] = d->label[p->rows[i]];
        break;
    }
    if (p->vector) {
        for (size_t i = 0; i < n; i++) {
            p->v[i] = cs_mx_coord(p, (uint32_t)i, 0);
            p->t[i] = p->hot[i] == 0;
        }
    }
    return 0;
}

cs_prepared *cs_prepare(const cs_dataset *d, const cs_settings *s, cs_error *err)
{
    if (check_preparable(d, s, err) != 0) return NULL;
    cs_prepared *p = malloc(sizeof *p);
    if (!p) { cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory"); return NULL; }
    cs_mx_prepared_init(p);
    p->d = d;
    p->s = *s;
    p->kind = s->lens;
    /* the selection first, then the lens over the selected samples */
    int blank = select_blank(s->select);
    if (select_rows(p, s, blank, err) != 0 || resolve_lens(p, s, err) != 0 ||
        lens_values(p, s, blank, err) != 0) {
        cs_prepared_free(p);
        return NULL;
    }
    /* uniform bins (p->ubin) are built on first use by a subset: cs_mx_ubin_cache */
    return p;
}
