/* RECE-M (Gupta, Basu & Arora 2023, "How Reliable are the Metrics Used for Assessing Reliability
 * in Medical Imaging?", eq. 7) on a prepared problem: RECE-G's soft binning, with each sample's
 * weight row over the M uniform bins given by a mixture fitted to its test-time-augmentation
 * observations. The conventions (which rows are observations, the kde and gmm3 mixtures, the
 * EM) are written down in src/engine/metrics/rece_m.h.
 *
 * Why it is built this way: RECE-M = sum_i |sum_j w_ji (acc_j - c_j)| / N has RECE-G's
 * structure; only the weight row w_j of a sample differs, and it depends on the file, M,
 * sigma and the mixture but never on the subset. So the prepared problem carries, for each of
 * its samples (the selected tta 0 rows, in cs_prepared_rows order), c_j, acc_j, its mixture
 * and -- when n*M doubles fit beside the data -- its weight row, built once on the first
 * evaluation that asks for RECE-M (under p->lock). Every evaluation of a subset (the full
 * table, a bootstrap resample, a size-curve subset) then only sums rows over its items, in
 * canonical order; the bins curve prepares one problem per M, so weights follow M.
 *
 * Numbers: each bin's mass is the same expression as the former per-bin rule (erfc of |z| on
 * the side where the difference is accurate), and the sums run in the same order, so RECE-M
 * on all samples is bit-identical to what the report printed before this path existed. */
#include "mx.h"

#include <stdlib.h>
#include <string.h>

#include "engine/metrics/rece_m.h"

#define VAR_FLOOR 1e-6
#define EM_TOL 1e-10
#define EM_MAX_ITER 200

/* numpy.quantile's default ("linear"): position q*(t-1) in the sorted values. */
static double quantile_sorted(const double *s, size_t t, double q)
{
    double pos = q * (double)(t - 1);
    size_t lo = (size_t)floor(pos);
    if (lo + 1 >= t) return s[t - 1];
    double frac = pos - (double)lo;
    return s[lo] + frac * (s[lo + 1] - s[lo]);
}

/* E-step: responsibilities r[t*3] and the log-likelihood, with log-sum-exp so a point far
 * from every (floored, narrow) component does not underflow to log 0. */
static double em_estep(const double *x, size_t t, const double w[3], const double mu[3],
                       const double var[3], double *r)
{
    double ll = 0;
    for (size_t i = 0; i < t; i++) {
        double lp[3], top = -INFINITY;
        for (int k = 0; k < 3; k++) {
            if (w[k] > 0) {
                double dx = x[i] - mu[k];
                lp[k] = log(w[k]) - 0.5 * (log(2 * M_PI * var[k]) + dx * dx / var[k]);
            } else {
                lp[k] = -INFINITY;
            }
            if (lp[k] > top) top = lp[k];
        }
        double sum = 0;
        for (int k = 0; k < 3; k++) sum += lp[k] == -INFINITY ? 0 : exp(lp[k] - top);
        double lse = top + log(sum);
        for (int k = 0; k < 3; k++) r[i * 3 + k] = lp[k] == -INFINITY ? 0 : exp(lp[k] - lse);
        ll += lse;
    }
    return ll;
}

static void em_mstep(const double *x, size_t t, const double *r, double w[3], double mu[3],
                     double var[3])
{
    for (int k = 0; k < 3; k++) {
        double nk = 0, sx = 0;
        for (size_t i = 0; i < t; i++) { nk += r[i * 3 + k]; sx += r[i * 3 + k] * x[i]; }
        if (!(nk > 0)) { w[k] = 0; continue; }   /* dead component: keep mean and variance */
        double m = sx / nk, sv = 0;
        for (size_t i = 0; i < t; i++) { double dx = x[i] - m; sv += r[i * 3 + k] * dx * dx; }
        w[k] = nk / (double)t;
        mu[k] = m;
        var[k] = fmax(sv / nk, VAR_FLOOR);
    }
}

int cs_gmm3_fit(const double *x, size_t t, double weight[3], double mean[3], double var[3])
{
    double stack_r[3 * 64], stack_s[64];
    double *r = t <= 64 ? stack_r : malloc(3 * t * sizeof *r);
    double *s = t <= 64 ? stack_s : malloc(t * sizeof *s);
    if (!r || !s) {
        if (t > 64) { free(r); free(s); }
        return -1;
    }
    memcpy(s, x, t * sizeof *s);
    cs_sort_doubles(s, t);
    double sum = 0, sv = 0;
    for (size_t i = 0; i < t; i++) sum += x[i];
    double avg = sum / (double)t;
    for (size_t i = 0; i < t; i++) sv += (x[i] - avg) * (x[i] - avg);
    double v0 = fmax(sv / (double)t, VAR_FLOOR);
    static const double q[3] = { 1.0 / 6.0, 0.5, 5.0 / 6.0 };
    for (int k = 0; k < 3; k++) {
        mean[k] = quantile_sorted(s, t, q[k]);
        weight[k] = 1.0 / 3.0;
        var[k] = v0;
    }
    double ll_prev = em_estep(x, t, weight, mean, var, r);
    int it = 0;
    while (it < EM_MAX_ITER) {
        em_mstep(x, t, r, weight, mean, var);
        double ll = em_estep(x, t, weight, mean, var, r);
        it++;
        if (fabs(ll - ll_prev) < EM_TOL) break;
        ll_prev = ll;
    }
    if (t > 64) { free(r); free(s); }
    return it;
}


/* Per-sample RECE-M state of a prepared problem (mx.h: p->rece_m). Immutable once built. */
struct cs_mx_rm {
    size_t n, m;          /* samples (= p->n), bins */
    double *e;            /* m+1 edges i/m */
    double *conf;         /* n: c_j, the tta 0 row's top-1 confidence */
    uint8_t *acc;         /* n: acc_j */
    double sigma;         /* kde kernel sd */
    size_t *obs_start;    /* kde: n+1 offsets into obs (sample j: obs[obs_start[j]..[j+1])) */
    double *obs;          /* kde: the observations' top-1 confidences, file order per id */
    double *gmm;          /* gmm3: n*9 = weights[3], means[3], sds[3]; NULL for kde */
    double *w;            /* n*m normalised weight rows, or NULL (too large: made per use) */
};

void cs_mx_rm_free(cs_mx_rm *rm)
{
    if (!rm) return;
    free(rm->e);
    free(rm->conf);
    free(rm->acc);
    free(rm->obs_start);
    free(rm->obs);
    free(rm->gmm);
    free(rm->w);
    free(rm);
}


/* Adds (scale ? g * mass : mass) of Normal(mu, sd) on each bin [e_i, e_i+1] to w[0..m).
 * z/q: m+1 scratch. Each edge's erfc is taken once, q_i = erfc(|z_i|); a bin's mass is
 * erfc(z_a) - erfc(z_b) above the mean, erfc(-z_b) - erfc(-z_a) below it, 1 - both tails
 * across it (halved), so far tails are not lost to cancellation. */
static void add_component(const double *e, size_t m, double mu, double sd, double g, int scale,
                          double *z, double *q, double *w)
{
    double den = sd * M_SQRT2;
    for (size_t i = 0; i <= m; i++) {
        z[i] = (e[i] - mu) / den;
        q[i] = erfc(fabs(z[i]));
    }
    for (size_t i = 0; i < m; i++) {
        double mass;
        if (z[i] >= 0) mass = 0.5 * (q[i] - q[i + 1]);
        else if (z[i + 1] <= 0) mass = 0.5 * (q[i + 1] - q[i]);
        else mass = 1.0 - 0.5 * (q[i] + q[i + 1]);
        w[i] += scale ? g * mass : mass;
    }
}

/* The normalised weight row of sample j into w[0..m); z, q: m+1 scratch each. A total mass
 * of 0 cannot happen for sd > 0 and means in [0, 1], but if rounding ever made it so, the
 * sample falls back to the hard bin of its clean confidence. */
static void sample_weights(const cs_mx_rm *rm, size_t j, double *z, double *q, double *w)
{
    size_t m = rm->m;
    for (size_t i = 0; i < m; i++) w[i] = 0.0;
    if (rm->gmm) {
        const double *g = rm->gmm + 9 * j;
        for (int k = 0; k < 3; k++)
            if (g[k] > 0) add_component(rm->e, m, g[3 + k], g[6 + k], g[k], 1, z, q, w);
    } else {
        size_t a = rm->obs_start[j], b = rm->obs_start[j + 1];
        for (size_t o = a; o < b; o++) add_component(rm->e, m, rm->obs[o], rm->sigma, 1.0, 0, z, q, w);
        for (size_t i = 0; i < m; i++) w[i] /= (double)(b - a);
    }
    double total = 0;
    for (size_t i = 0; i < m; i++) total += w[i];
    if (!(total > 0)) {
        size_t hard = (size_t)cs_ubin_at(rm->conf[j], rm->e, (int)m);
        for (size_t i = 0; i < m; i++) w[i] = i == hard;
        return;
    }
    for (size_t i = 0; i < m; i++) w[i] /= total;
}

static const char *id_name(const cs_dataset *d, int32_t id)
{
    return d->id_names && id >= 0 && (size_t)id < d->n_ids && d->id_names[id] ? d->id_names[id] : "?";
}

/* ---- building the per-sample state: mixtures, then weight rows (both per sample, so they
 * are made in chunks of samples, on two threads when large; a value never depends on that) */
#define RM_CHUNK 512u
typedef struct {
    cs_mx_rm *rm;
    const atomic_int *cancel;
    atomic_int status;    /* 0, 1 cancelled, -1 ENOMEM */
} build_ctx;

/* Samples [*a, *z) of chunk c, or 0 when the build stops (an error, or a raised cancel flag,
 * which is recorded as status 1). */
static int chunk_range(build_ctx *x, size_t c, size_t *a, size_t *z)
{
    if (atomic_load(&x->status) || cs_mx_cancelled(x->cancel)) {
        int zero = 0;
        atomic_compare_exchange_strong(&x->status, &zero, 1);
        return 0;
    }
    size_t n = x->rm->n;
    *a = c * RM_CHUNK;
    *z = *a + RM_CHUNK < n ? *a + RM_CHUNK : n;
    return 1;
}

static void fit_chunk(void *vctx, size_t c)
{
    build_ctx *x = vctx;
    cs_mx_rm *rm = x->rm;
    size_t a, z;
    if (!chunk_range(x, c, &a, &z)) return;
    for (size_t j = a; j < z; j++) {
        double *g = rm->gmm + 9 * j, var[3];
        size_t o = rm->obs_start[j];
        if (cs_gmm3_fit(rm->obs + o, rm->obs_start[j + 1] - o, g, g + 3, var) < 0) {
            atomic_store(&x->status, -1);
            return;
        }
        for (int k = 0; k < 3; k++) g[6 + k] = sqrt(var[k]);
    }
}

static void weight_chunk(void *vctx, size_t c)
{
    build_ctx *x = vctx;
    cs_mx_rm *rm = x->rm;
    size_t a, z;
    if (!chunk_range(x, c, &a, &z)) return;
    double *zq = malloc(2 * (rm->m + 1) * sizeof *zq);
    if (!zq) { atomic_store(&x->status, -1); return; }
    for (size_t j = a; j < z; j++) sample_weights(rm, j, zq, zq + rm->m + 1, rm->w + j * rm->m);
    free(zq);
}

/* Weight rows are cached when they take no more memory than the probability matrix already
 * loaded, or 48 MiB, whichever is larger; beyond that each evaluation remakes the rows of its
 * items (the same function, so the same numbers). */
static double rm_cache_min = (double)(48u << 20);

void cs_mx_rece_m_cache_limit(double bytes)
{
    rm_cache_min = bytes;
}

static int cache_fits(const cs_dataset *d, size_t n, size_t m)
{
    double need = (double)n * (double)m * sizeof(double);
    double have = (double)d->n * (double)d->k * sizeof(double);
    return need <= (have > rm_cache_min ? have : rm_cache_min);
}

int cs_prepared_has_tta(const cs_prepared *p)
{
    return p->d->id && p->d->tta;
}

int cs_prepared_rece_m_kept(const cs_prepared *p)
{
    return cs_prepared_has_tta(p) && cache_fits(p->d, p->n, (size_t)p->s.bins);
}

/* Every row's id inside the id table. CS_OK or CS_EINPUT naming the row. */
static cs_status check_ids(const cs_dataset *d, const char *path, cs_error *err)
{
    for (size_t r = 0; r < d->n; r++)
        if (d->id[r] < 0 || (size_t)d->id[r] >= d->n_ids)
            return cs_error_set(err, CS_EINPUT, 0, 0, "%s: row %zu has an id outside the id table",
                                path, r);
    return CS_OK;
}

/* The rows grouped by id (a counting sort, stable: file order within an id): id i's rows are
 * order[start[i] .. start[i+1]). Every id has exactly one clean (tta 0) row, else CS_EINPUT
 * naming it. start has n_ids + 1 entries, zeroed; clean n_ids; order and fill are set here
 * (the caller frees them). CS_OK, CS_EINPUT or CS_ENOMEM (err not set). */
static cs_status group_by_id(const cs_dataset *d, const char *path, size_t *start, int64_t *clean,
                             uint32_t **order, size_t **fill, cs_error *err)
{
    size_t n = d->n, nid = d->n_ids;
    for (size_t i = 0; i < nid; i++) clean[i] = -1;
    for (size_t r = 0; r < n; r++) {
        size_t id = (size_t)d->id[r];
        start[id + 1]++;
        if (d->tta[r] != 0) continue;
        if (clean[id] >= 0)
            return cs_error_set(err, CS_EINPUT, 0, 0, "%s: id '%s' has more than one tta 0 row",
                                path, id_name(d, d->id[r]));
        clean[id] = (int64_t)r;
    }
    for (size_t i = 0; i < nid; i++) {
        if (start[i + 1] > 0 && clean[i] < 0)
            return cs_error_set(err, CS_EINPUT, 0, 0,
                                "%s: id '%s' has no tta 0 row (the clean prediction RECE-M needs)",
                                path, id_name(d, (int32_t)i));
        start[i + 1] += start[i];
    }
    *order = malloc((n ? n : 1) * sizeof **order);
    *fill = malloc((nid ? nid : 1) * sizeof **fill);
    if (!*order || !*fill) return CS_ENOMEM;
    memcpy(*fill, start, (nid ? nid : 1) * sizeof **fill);
    for (size_t r = 0; r < n; r++) (*order)[(*fill)[d->id[r]]++] = (uint32_t)r;
    return CS_OK;
}

/* rm's samples (p's rows: selected tta 0 rows) with their bin edges, confidence, correctness
 * and observations: all the rows of the sample's id, tta 0 included. *tot = observations.
 * 0, or -1 out of memory. */
static int gather_observations(const cs_prepared *p, const size_t *start, const uint32_t *order,
                               cs_mx_rm *rm, size_t *tot)
{
    const cs_dataset *d = p->d;
    size_t ns = p->n, m = (size_t)p->s.bins;
    rm->n = ns;
    rm->m = m;
    rm->sigma = p->s.sigma;
    rm->e = malloc((m + 1) * sizeof *rm->e);
    rm->conf = malloc(ns * sizeof *rm->conf);
    rm->acc = malloc(ns);
    rm->obs_start = malloc((ns + 1) * sizeof *rm->obs_start);
    if (!rm->e || !rm->conf || !rm->acc || !rm->obs_start) return -1;
    cs_mx_edges(rm->e, (int)m);
    *tot = 0;
    for (size_t j = 0; j < ns; j++) {
        size_t id = (size_t)d->id[p->rows[j]];
        rm->obs_start[j] = *tot;
        *tot += start[id + 1] - start[id];
    }
    rm->obs_start[ns] = *tot;
    rm->obs = malloc((*tot ? *tot : 1) * sizeof *rm->obs);
    if (!rm->obs) return -1;
    for (size_t j = 0; j < ns; j++) {
        uint32_t r = p->rows[j];
        size_t id = (size_t)d->id[r];
        rm->conf[j] = d->conf[r];
        rm->acc[j] = d->correct[r];
        for (size_t q = start[id]; q < start[id + 1]; q++)
            rm->obs[rm->obs_start[j] + (q - start[id])] = d->conf[order[q]];
    }
    return 0;
}

/* The mixture fits (GMM3, replacing the observations) and, when they fit in memory, every
 * sample's weight row; in chunks, on helper threads for large work. 0, -1 out of memory, 1
 * cancelled. */
static int fit_and_weigh(const cs_prepared *p, cs_mx_rm *rm, size_t tot, const atomic_int *cancel)
{
    size_t ns = rm->n, m = rm->m;
    build_ctx x = { .rm = rm, .cancel = cancel };
    atomic_init(&x.status, 0);
    size_t nchunks = (ns + RM_CHUNK - 1) / RM_CHUNK;
    if (p->s.mixture == CS_MIX_GMM3) {
        rm->gmm = malloc(ns * 9 * sizeof *rm->gmm);
        if (!rm->gmm) return -1;
        cs_mx_chunks(nchunks, tot >= 20000, fit_chunk, &x);
        free(rm->obs_start); rm->obs_start = NULL;   /* the fits replace the observations */
        free(rm->obs); rm->obs = NULL;
    }
    if (!atomic_load(&x.status) && cache_fits(p->d, ns, m)) {
        rm->w = malloc((ns ? ns : 1) * m * sizeof *rm->w);
        if (!rm->w) return -1;
        double work = (double)(rm->gmm ? 3 * ns : tot) * (double)(m + 1);
        cs_mx_chunks(nchunks, work >= 300000, weight_chunk, &x);
    }
    return atomic_load(&x.status);
}

static cs_status build(const cs_prepared *p, const atomic_int *cancel, cs_mx_rm **out,
                       cs_error *err)
{
    const cs_dataset *d = p->d;
    const char *path = d->path ? d->path : "input";
    cs_status rc = check_ids(d, path, err);
    if (rc != CS_OK) return rc;
    size_t nid = d->n_ids, tot = 0, *fill = NULL;
    size_t *start = calloc(nid + 1, sizeof *start);
    int64_t *clean = malloc((nid ? nid : 1) * sizeof *clean);
    cs_mx_rm *rm = calloc(1, sizeof *rm);
    uint32_t *order = NULL;
    rc = !start || !clean || !rm ? CS_ENOMEM : group_by_id(d, path, start, clean, &order, &fill, err);
    if (rc == CS_OK && gather_observations(p, start, order, rm, &tot) != 0) rc = CS_ENOMEM;
    free(order);
    free(fill);
    free(start);
    free(clean);
    if (rc == CS_OK) {
        int st = fit_and_weigh(p, rm, tot, cancel);
        rc = st < 0 ? CS_ENOMEM : st > 0 ? cs_error_set(err, CS_ECANCELLED, 0, 0, "cancelled") : CS_OK;
    }
    if (rc == CS_ENOMEM) cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory (RECE-M)", path);
    if (rc != CS_OK) {
        cs_mx_rm_free(rm);
        return rc;
    }
    *out = rm;
    return CS_OK;
}

cs_status cs_mx_rece_m(const cs_prepared *cp, const uint32_t *items, size_t ni,
                       const atomic_int *cancel, double *out, cs_error *err)
{
    cs_prepared *p = (cs_prepared *)cp;   /* the lazy state only, under the lock */
    *out = NAN;
    if (!cs_prepared_has_tta(p)) return CS_OK;   /* not a long TTA file: no RECE-M */
    pthread_mutex_lock(&p->lock);
    cs_status rc = p->rece_m ? CS_OK : build(p, cancel, &p->rece_m, err);
    const cs_mx_rm *rm = p->rece_m;
    pthread_mutex_unlock(&p->lock);
    if (rc != CS_OK) return rc;
    size_t m = rm->m;
    /* A~ and C~ (m each), and without cached rows one row and its m+1 edge scratch twice */
    double *A = calloc(rm->w ? 2 * m : 5 * m + 2, sizeof *A);
    if (!A) return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory (RECE-M)");
    double *C = A + m, *row = C + m, *z = row + m, *q = z + m + 1;
    size_t last = SIZE_MAX;
    for (size_t k = 0; k < ni; k++) {
        if ((k & 4095) == 0 && cs_mx_cancelled(cancel)) {
            free(A);
            return cs_error_set(err, CS_ECANCELLED, 0, 0, "cancelled");
        }
        size_t j = items ? items[k] : k;
        const double *wj = rm->w ? rm->w + j * m : row;
        if (!rm->w && j != last) {   /* canonical order: a repeated item is adjacent */
            sample_weights(rm, j, z, q, row);
            last = j;
        }
        double c = rm->conf[j];
        for (size_t i = 0; i < m; i++) C[i] += wj[i] * c;
        if (rm->acc[j])
            for (size_t i = 0; i < m; i++) A[i] += wj[i];
    }
    double sum = 0;
    for (size_t i = 0; i < m; i++) sum += fabs(A[i] - C[i]);
    free(A);
    *out = sum / (double)ni;
    return CS_OK;
}
