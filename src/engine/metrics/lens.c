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
    free(p->grid_pos);
    free(p->grid_rows);
    free(p->grid_hot);
    free(p->cw_cell);
    free(p->v1);
    free(p->t1);
    free(p->order_c);
    free(p->rank_c);
    free(p->vs_c);
    free(p->ts_c);
    free(p->vs_v);
    free(p->ts_v);
    free(p->rece_w);
    free(p->score);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

size_t cs_prepared_count(const cs_prepared *p) { return p->n; }
const cs_settings *cs_prepared_settings(const cs_prepared *p) { return &p->s; }
size_t cs_prepared_smece_binned(const cs_prepared *p)
{
    return atomic_load_explicit(&((cs_prepared *)p)->smece_binned, memory_order_relaxed);
}
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

/* cs_mx_sort_rows of rows[0..n) on the calling thread. */
static void sort_rows_part(const cs_dataset *d, const uint32_t *rows, size_t n, size_t kk,
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

typedef struct {
    const cs_dataset *d;
    const uint32_t *rows;
    size_t n, kk;
    double *out;
    int32_t *pos;
} sort_half;

static void *run_sort_half(void *arg)
{
    sort_half *h = arg;
    sort_rows_part(h->d, h->rows, h->n, h->kk, h->out, h->pos);
    return NULL;
}

void cs_mx_sort_rows(const cs_dataset *d, const uint32_t *rows, size_t n, size_t kk,
                     double *out, int32_t *pos)
{
    /* every row alone: two fixed halves on two threads give the same buffer */
    size_t half = n / 2;
    sort_half h[2] = {{d, rows, half, kk, out, pos},
                      {d, rows + half, n - half, kk, out + half * kk, pos + half}};
    cs_mx_pair(run_sort_half, &h[0], &h[1], n * d->k >= 1000000);
}

/* Sets err to "out of memory (what)"; returns -1. */
static int nomem_in(cs_error *err, const char *what)
{
    cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory (%s)", what);
    return -1;
}

/* Whether s is pl->s or a variant of it that cs_prepare_planned accepts: the same selection,
 * the same lens or top1 (whose classes the plan needs not resolve). CS_OK, or CS_EUSAGE. */
static cs_status check_variant(const cs_plan *pl, const cs_settings *s, cs_error *err)
{
    if (s == &pl->s) return CS_OK;
    cs_status st = cs_settings_check_scoring(s, err);
    if (st != CS_OK) return st;
    if (strcmp(s->select, pl->s.select) != 0 ||
        (s->lens != CS_LENS_TOP1 && (s->lens != pl->s.lens || strcmp(s->lens_arg, pl->s.lens_arg) != 0 ||
                                     (s->lens == CS_LENS_TOPK && s->topk < 1))))
        return cs_error_set(err, CS_EUSAGE, 0, 0, "settings differ from their plan's in more than what is scored");
    return CS_OK;
}

/* The lens's parameters: top-k's k as used (top-1 when it is 1), the class of --lens class
 * (resolved by the plan). */
static void lens_params(cs_prepared *p, const cs_plan *pl)
{
    const cs_dataset *d = p->d;
    if (p->kind == CS_LENS_TOPK) {
        p->k_eff = p->s.topk > (int)d->k ? (int)d->k : p->s.topk;
        if (p->k_eff == 1) p->kind = CS_LENS_TOP1;
    }
    if (p->kind == CS_LENS_CLASS) p->cls = pl->cls;
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

/* The group lens: each sample's probabilities summed per group of --lens group (the plan's
 * groups). Returns 0, or -1 out of memory. */
static int lens_group(cs_prepared *p, const cs_plan *pl)
{
    const cs_dataset *d = p->d;
    size_t n = p->n, K = d->k, G = pl->n_groups;
    const int32_t *gof = pl->group_of;
    p->vector = 1;
    p->dim = p->nrow = G;
    p->obuf = calloc(n * G, sizeof *p->obuf);
    p->hot = malloc(n * sizeof *p->hot);
    if (!p->obuf || !p->hot) return -1;
    for (size_t i = 0; i < n; i++) {
        const double *g = d->prob + (size_t)p->rows[i] * K;
        double *o = p->obuf + i * G;
        for (size_t j = 0; j < K; j++) o[gof[j]] += g[j];
        p->hot[i] = gof[d->label[p->rows[i]]];
    }
    p->obase = p->obuf;
    p->ostride = G;
    return 0;
}

/* Every sample's scalar (value, target) of the lens: borrowed from the dataset for top-1 over
 * every row (no tta, no selection), else made per selected row; the vector lenses' from
 * their first coordinate. Returns 0, or -1 with err set. */
static int lens_values(cs_prepared *p, const cs_plan *pl, int blank, cs_error *err)
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
        if (lens_group(p, pl) != 0) return nomem_in(err, "group lens");
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

/* A plan whose selection keeps no sample: the error naming the file (and the selection). */
static void none_selected(const cs_plan *pl, const cs_settings *s, cs_error *err)
{
    const char *path = pl->d->path ? pl->d->path : "input";
    if (pl->all)
        cs_error_set(err, CS_EEMPTY, 0, 0, "%s: no samples to measure", path);
    else
        cs_error_set(err, CS_EEMPTY, 0, 0, "%s: the selection '%s' keeps no sample", path, s->select);
}

cs_prepared *cs_prepare_planned(const cs_plan *pl, const cs_settings *s, cs_error *err)
{
    if (!s) s = &pl->s;
    if (check_variant(pl, s, err) != CS_OK) return NULL;
    if (pl->n == 0) {
        none_selected(pl, s, err);
        return NULL;
    }
    cs_prepared *p = malloc(sizeof *p);
    if (!p) { cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory"); return NULL; }
    cs_mx_prepared_init(p);
    p->d = pl->d;
    p->s = *s;
    p->kind = s->lens;
    p->rows = (uint32_t *)pl->rows;   /* borrowed: the plan outlives p */
    p->rows_borrowed = 1;
    p->n = pl->n;
    lens_params(p, pl);
    /* the dataset's own confidences serve top-1 over every sample */
    int every = pl->all && pl->rows == pl->d->sample_rows;
    if (lens_values(p, pl, every, err) != 0) {
        cs_prepared_free(p);
        return NULL;
    }
    /* uniform bins (p->ubin) are built on first use by a subset: cs_mx_ubin_cache */
    return p;
}

cs_prepared *cs_prepare(const cs_dataset *d, const cs_settings *s, cs_error *err)
{
    cs_plan *pl = cs_plan_new(d, s, err);
    if (!pl) return NULL;
    cs_prepared *p = cs_prepare_planned(pl, NULL, err);
    if (p && pl->owned_rows) {   /* p outlives its plan: it takes the rows */
        p->rows_borrowed = 0;
        pl->owned_rows = NULL;
    }
    cs_plan_free(pl);
    return p;
}
