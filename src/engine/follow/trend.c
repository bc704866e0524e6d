/* A run's trend (calscope/trend.h): per epoch a summary copied out of its measurement. */
#include "calscope/trend.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static cs_trend_epoch *append(cs_trend *t, const char *path)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        cs_trend_epoch *e = realloc(t->epoch, cap * sizeof *e);
        if (!e) return NULL;
        t->epoch = e;
        t->cap = cap;
    }
    cs_trend_epoch *e = &t->epoch[t->n];
    memset(e, 0, sizeof *e);
    for (int i = 0; i < CS_METRIC_COUNT; i++) e->value[i] = e->lo[i] = e->hi[i] = NAN;
    e->path = strdup(path);
    if (!e->path) return NULL;
    t->n++;
    return e;
}

cs_status cs_trend_add(cs_trend *t, const char *path, const cs_measurement *m, cs_error *err)
{
    cs_trend_epoch *e = append(t, path);
    if (!e) return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
    e->samples = m->result.n;
    for (size_t i = 0; i < CS_METRIC_COUNT; i++) {
        int id = (int)cs_metric_at(i)->id;
        e->value[id] = m->evaluated ? cs_metric_value(&m->result, id) : NAN;
        if (m->has_ci && (m->ci.metrics & CS_METRIC_BIT(id))) {
            e->lo[id] = m->ci.lo[id];
            e->hi[id] = m->ci.hi[id];
        }
    }
    e->has_ci = m->has_ci;
    if (m->evaluated && m->result.n_bins) {
        e->bins = malloc(m->result.n_bins * sizeof *e->bins);
        if (!e->bins) return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
        memcpy(e->bins, m->result.bins, m->result.n_bins * sizeof *e->bins);
        e->n_bins = m->result.n_bins;
    }
    return CS_OK;
}

cs_status cs_trend_add_gap(cs_trend *t, const char *path, const char *message, cs_error *err)
{
    cs_trend_epoch *e = append(t, path);
    if (!e || !(e->message = strdup(message))) return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
    return CS_OK;
}

long cs_trend_best(const cs_trend *t, int id)
{
    const cs_metric_info *mi = cs_metric_info_of(id);
    if (!mi) return -1;
    long best = -1;
    for (size_t i = 0; i < t->n; i++) {
        double v = t->epoch[i].value[id];
        if (t->epoch[i].message || !isfinite(v)) continue;
        double b = best < 0 ? 0 : t->epoch[best].value[id];
        if (best < 0 || (mi->lower_better ? v < b : v > b)) best = (long)i;
    }
    return best;
}

size_t cs_trend_bytes(const cs_trend *t)
{
    size_t b = t->cap * sizeof *t->epoch;
    for (size_t i = 0; i < t->n; i++) {
        const cs_trend_epoch *e = &t->epoch[i];
        b += strlen(e->path) + 1 + (e->message ? strlen(e->message) + 1 : 0) + e->n_bins * sizeof *e->bins;
    }
    return b;
}

void cs_trend_free(cs_trend *t)
{
    for (size_t i = 0; i < t->n; i++) {
        free(t->epoch[i].path);
        free(t->epoch[i].message);
        free(t->epoch[i].bins);
    }
    free(t->epoch);
    memset(t, 0, sizeof *t);
}
