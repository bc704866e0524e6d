/* Test support: see seg_data.h. */
#include "seg_data.h"
#include "cs_test.h"
#include "seg_kernel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static double unit(uint64_t *s)
{
    return (double)(next(s) >> 11) / 9007199254740992.0;
}

const char *cs_test_seg_case_name(size_t c)
{
    static char names[100][32];
    snprintf(names[c % 100], sizeof names[0], "case%02zu", c);
    return names[c % 100];
}

/* Exact rows on fine edges (k >= 3 uses the first three values; the rest 0). */
static const double EDGE_ROWS[][4] = {
    { 1, 0, 0, 0 }, { 0.5, 0.25, 0.25, 0 }, { 0.25, 0.75, 0, 0 }, { 0, 0.5, 0.5, 0 },
    { 0.25, 0.25, 0.5, 0 }, { 0, 0, 1, 0 }, { 0.5, 0.5, 0, 0 },
};

cs_test_seg *cs_test_seg_random(size_t n_cases, size_t k, size_t base, uint64_t seed, int same)
{
    cs_test_seg *g = calloc(1, sizeof *g);
    assert_non_null(g);
    g->n_cases = n_cases;
    g->k = k;
    g->first = calloc(n_cases + 1, sizeof *g->first);
    assert_non_null(g->first);
    for (size_t c = 0; c < n_cases; c++) g->first[c + 1] = g->first[c] + base + (same ? 0 : 5 * c);
    size_t N = g->first[n_cases];
    g->p = calloc(N * k, sizeof *g->p);
    g->lab = calloc(N ? N : 1, sizeof *g->lab);
    assert_non_null(g->p);
    assert_non_null(g->lab);
    uint64_t s0 = seed * 2654435761u + 1;
    for (size_t c = 0; c < n_cases; c++) {
        uint64_t s = same ? s0 : s0 + c * 7919;
        for (size_t v = g->first[c]; v < g->first[c + 1]; v++) {
            double row[16];
            int kind = (int)(next(&s) % 3);
            if (kind == 0 && k <= 4) {
                const double *e = EDGE_ROWS[next(&s) % (sizeof EDGE_ROWS / sizeof EDGE_ROWS[0])];
                for (size_t j = 0; j < k; j++) row[j] = j < 3 ? e[j] : 0;
                if (k == 2) { row[1] = 1 - row[0]; }
            } else {
                double t = 0;
                for (size_t j = 0; j < k; j++) {
                    double u = unit(&s);
                    row[j] = u * u * u;   /* peaked rows: a range of confidences */
                    t += row[j];
                }
                for (size_t j = 0; j < k; j++) row[j] /= t;
            }
            /* the label: drawn from the row (calibrated-ish), sometimes uniform */
            double u = unit(&s), acc = 0;
            int32_t y = (int32_t)(k - 1);
            for (size_t j = 0; j < k; j++) {
                acc += row[j];
                if (u < acc) { y = (int32_t)j; break; }
            }
            if (next(&s) % 5 == 0) y = (int32_t)(next(&s) % k);
            for (size_t j = 0; j < k; j++) g->p[j * N + v] = row[j];
            g->lab[v] = y;
        }
    }
    return g;
}

void cs_test_seg_free(cs_test_seg *g)
{
    if (!g) return;
    free(g->first);
    free(g->p);
    free(g->lab);
    free(g);
}

static const char *const *class_names(size_t k)
{
    static const char *const names[] = { "c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7" };
    assert_true(k <= 8);
    return names;
}

cs_segstats *cs_test_seg_stats(const cs_test_seg *g, int fine)
{
    char mapping[128] = "";
    for (size_t j = 0; j < g->k; j++)
        snprintf(mapping + strlen(mapping), sizeof mapping - strlen(mapping), "%sc%zu=%zu",
                 j ? "," : "", j, j);
    cs_segstats *st = cs_segstats_new(fine, CS_SEG_SOFTMAX, g->k, class_names(g->k), mapping,
                                      g->n_cases);
    assert_non_null(st);
    size_t N = g->first[g->n_cases];
    for (size_t c = 0; c < g->n_cases; c++) {
        char path[32];
        st->case_names[c] = strdup(cs_test_seg_case_name(c));
        snprintf(path, sizeof path, "p%zu.npz", c);
        st->probs_in[c].path = strdup(path);
        st->probs_in[c].size = 1000 + c;
        snprintf(path, sizeof path, "l%zu.nii.gz", c);
        st->labels_in[c].path = strdup(path);
        st->labels_in[c].size = 500 + c;
        assert_non_null(st->case_names[c]);
        for (size_t v = g->first[c]; v < g->first[c + 1]; v += 7) {
            size_t n = g->first[c + 1] - v < 7 ? g->first[c + 1] - v : 7;
            const double *planes[16];
            for (size_t j = 0; j < g->k; j++) planes[j] = g->p + j * N + v;
            cs_test_seg_add_voxels(st, c, planes, g->lab + v, NULL, n);
        }
    }
    return st;
}

cs_dataset *cs_test_seg_dataset(const cs_test_seg *g)
{
    size_t N = g->first[g->n_cases], k = g->k;
    cs_dataset *d = cs_test_dataset_new(N, k);
    cs_test_set_class_names(d, class_names(k));
    int32_t *case_id = malloc((N ? N : 1) * sizeof *case_id);
    assert_non_null(case_id);
    const char *names[100];
    for (size_t c = 0; c < g->n_cases; c++) {
        names[c] = cs_test_seg_case_name(c);
        for (size_t v = g->first[c]; v < g->first[c + 1]; v++) case_id[v] = (int32_t)c;
    }
    for (size_t v = 0; v < N; v++) {
        for (size_t j = 0; j < k; j++) d->prob[v * k + j] = g->p[j * N + v];
        d->label[v] = g->lab[v];
    }
    cs_test_set_cases(d, g->n_cases, names, case_id);
    free(case_id);
    cs_test_prepare(d);
    return d;
}
