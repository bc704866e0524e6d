#include "calscope/dataset.h"
#include "engine/pair.h"
#include "calscope/run.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

static void free_names(char **names, size_t n)
{
    if (!names) return;
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
}

void cs_dataset_free(cs_dataset *d)
{
    if (!d) return;
    free(d->path);
    free(d->prob);
    free(d->logit);
    free(d->label);
    free(d->class_names);          /* one block: pointers and text (cs_names_pack) */
    free(d->id);
    free_names(d->id_names, d->n_ids);
    free(d->tta);
    free(d->case_id);
    free_names(d->case_names, d->n_cases);
    free(d->split);
    free_names(d->split_names, d->n_splits);
    free(d->conf);
    free(d->pred);
    free(d->correct);
    free(d->sample_rows);
    free(d->line);
    free(d->row_pos);
    free(d->class_col);
    if (d->stats && d->free_stats) d->free_stats(d->stats);
    free(d);
}

void cs_dataset_drop_lines(cs_dataset *d)
{
    if (!d) return;
    free(d->line);
    d->line = NULL;
}

cs_status cs_dataset_need_rows(const cs_dataset *d, const char *what, cs_error *err)
{
    if (!d || !d->stats) return CS_OK;
    return cs_error_set(err, CS_EUSAGE, 0, 0,
                        "%s: not from a statistics file, which keeps per-bin sums per case, not per-voxel values",
                        what);
}

char **cs_names_pack(const char *const *names, size_t k)
{
    size_t text = 0;
    for (size_t j = 0; j < k; j++)
        if (names[j]) text += strlen(names[j]) + 1;
    if (k > (SIZE_MAX - text) / sizeof(char *)) return NULL;
    char **block = malloc(k * sizeof(char *) + text + 1);
    if (!block) return NULL;
    char *t = (char *)(block + k);
    for (size_t j = 0; j < k; j++) {
        if (!names[j]) { block[j] = NULL; continue; }
        size_t len = strlen(names[j]) + 1;
        block[j] = memcpy(t, names[j], len);
        t += len;
    }
    return block;
}

cs_status cs_dataset_prepare_alloc(cs_dataset *d, cs_error *err)
{
    if (d->sample_rows) return CS_OK;
    size_t n = d->n;
    if (n > CS_DATASET_MAX_ROWS)   /* sample_rows and the metric code index rows in 32 bits */
        return cs_error_set(err, CS_EINPUT, 0, 0, "%s: %zu rows, more than the %zu a dataset may"
                            " hold", d->path ? d->path : "?", n, CS_DATASET_MAX_ROWS);
    /* conf, pred and correct may be there already (made by the loader while it parsed) */
    int given = d->conf != NULL;
    double *conf = given ? d->conf : malloc((n ? n : 1) * sizeof *conf);
    int32_t *pred = given ? d->pred : malloc((n ? n : 1) * sizeof *pred);
    uint8_t *correct = given ? d->correct : malloc(n ? n : 1);
    uint32_t *rows = malloc((n ? n : 1) * sizeof *rows);
    if (!conf || !pred || !correct || !rows) {
        if (!given) { free(conf); free(pred); free(correct); }
        free(rows);
        return cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", d->path ? d->path : "?");
    }
    d->conf = conf;
    d->pred = pred;
    d->correct = correct;
    d->sample_rows = rows;
    d->n_samples = 0;
    return CS_OK;
}

/* For a row of k >= 64 values (a wide file: 3 rows of 100,000 one-hot values took a fifth of
 * their load in the rule's loop below): the index the rule gives, from the largest value found
 * four lanes at a time and then its first index; k when this path does not apply (no SSE2, or
 * a NaN first value, which the rule keeps), and the caller then runs the rule. The same index:
 * max(x, acc) keeps acc when x is NaN (a NaN is never taken), -0 and +0 compare equal. */
static size_t first_max_wide(const double *g, size_t k)
{
#if defined(__SSE2__)
    if (g[0] == g[0]) {
        __m128d a0 = _mm_set1_pd(g[0]), a1 = a0;
        size_t j = 0;
        for (; j + 4 <= k; j += 4) {
            a0 = _mm_max_pd(_mm_loadu_pd(g + j), a0);
            a1 = _mm_max_pd(_mm_loadu_pd(g + j + 2), a1);
        }
        double lane[2];
        _mm_storeu_pd(lane, _mm_max_pd(a1, a0));
        double m = lane[1] > lane[0] ? lane[1] : lane[0];
        for (; j < k; j++)
            if (g[j] > m) m = g[j];
        for (j = 0; j < k; j++)
            if (g[j] == m) return j;
    }
#endif
    return k;
}

void cs_dataset_prepare_rows(cs_dataset *d, size_t first, size_t count)
{
    size_t k = d->k;
    for (size_t i = first; i < first + count; i++) {
        const double *g = d->prob + i * k;
        size_t best = k >= 64 ? first_max_wide(g, k) : k;
        if (best == k) {
            best = 0;
            for (size_t j = 1; j < k; j++)
                if (g[j] > g[best]) best = j;   /* strict: ties keep the first maximal index */
        }
        d->conf[i] = g[best];
        d->pred[i] = (int32_t)best;
        d->correct[i] = (uint8_t)(d->label[i] == (int32_t)best);
    }
}

/* Whether run's budget leaves a thread for a helper beside the caller (NULL or threads <= 0:
 * the online cores). */
static int budget_has_helper(const cs_run *run)
{
    int threads = run ? run->threads : 0;
    if (threads <= 0) threads = cs_cpu_count();
    return threads >= 2;
}

typedef struct { uint32_t *rows; size_t first, count; } ident_half;

static void *ident_fill(void *arg)
{
    ident_half *h = arg;
    for (size_t i = 0; i < h->count; i++) h->rows[h->first + i] = (uint32_t)(h->first + i);
    return NULL;
}

void cs_dataset_prepare_finish(cs_dataset *d, const cs_run *run)
{
    if (!d->tta) {
        /* every row a sample: the identity, in two halves on two threads for a large file
         * (its fresh pages' faults were 3 ms of a 10^6-row load's end, on one thread) */
        size_t half = d->n / 2;
        ident_half h[2] = { { d->sample_rows, 0, half }, { d->sample_rows, half, d->n - half } };
        cs_run_pair(ident_fill, &h[0], &h[1], d->n >= ((size_t)1 << 18) && budget_has_helper(run));
        d->n_samples = d->n;
        return;
    }
    size_t ns = 0;
    for (size_t i = 0; i < d->n; i++)
        if (d->tta[i] == 0) d->sample_rows[ns++] = (uint32_t)i;
    d->n_samples = ns;
}

typedef struct { cs_dataset *d; size_t first, count; } prep_half;

static void *prep_thread(void *arg)
{
    prep_half *h = arg;
    cs_dataset_prepare_rows(h->d, h->first, h->count);
    return NULL;
}

cs_status cs_dataset_prepare(cs_dataset *d, const cs_run *run, cs_error *err)
{
    if (d->sample_rows) return CS_OK;
    int given = d->conf != NULL;        /* the loader made conf, pred and correct */
    cs_status st = cs_dataset_prepare_alloc(d, err);
    if (st != CS_OK) return st;
    if (given) {
        cs_dataset_prepare_finish(d, run);
        return CS_OK;
    }
    /* rows are independent: two halves on two threads for a large matrix (the values cannot
     * depend on the split) */
    size_t half = d->n / 2;
    prep_half h[2] = { { d, 0, half }, { d, half, d->n - half } };
    cs_run_pair(prep_thread, &h[0], &h[1], d->n * d->k >= 2000000u && budget_has_helper(run));
    cs_dataset_prepare_finish(d, run);
    return CS_OK;
}

int cs_dataset_class_index(const cs_dataset *d, const char *name)
{
    return cs_dataset_class_find(d, name, NULL);
}
