/* RECE-G (seed 000 eq. 6): each confidence c_j is spread over the M uniform bins by the mass
 * of Normal(c_j, sigma) on each bin interval, normalised over the M bins;
 * RECE-G = sum over ALL M bins of |A~_i - C~_i| / N.
 *
 * Interval masses are differences of normal tails taken on the side where they are accurate
 * (erfc of |z|), so a bin far in a tail is not lost to cancellation. Tails beyond 9 sigma
 * are taken as exactly 0 (the mass there is < 1.2e-19, far below double resolution of the
 * weights that matter).
 *
 * Speed: per-sample weights are cached in the prepared object when n*M doubles fit in
 * 48 MiB (bootstrap curves reuse them); otherwise they are computed on the fly, in two
 * threads when there are >= 200k items. The split into halves is fixed by the item count,
 * never by the machine, so the result does not depend on the thread count. */
#include "mx.h"

#include <stdlib.h>
#include <string.h>

#define CACHE_BYTES (48u << 20)
#define PAR_MIN 200000u

/* Normal tail Q(a) = P(X > a), a >= 0, by a 7-term Taylor expansion around the nearest
 * node of a 1/64 grid on [0, 9] whose values come from erfc/exp. The remainder is below
 * 1e-19 absolute (|d| <= 1/128, the 8th term is He_7(a) phi(a) d^8 / 8!), so this agrees
 * with 0.5*erfc(a/sqrt 2) to rounding, at a fraction of its cost: RECE-G needs (M+1)
 * tails per sample. */
#define TAB_STEP 64
#define TAB_N (9 * TAB_STEP + 1)
static double tab[TAB_N][8];   /* Q(a0), then phi(a0)*(-1)^n He_n(a0)/(n+1)! for n = 0..6 */
static pthread_once_t tab_once = PTHREAD_ONCE_INIT;

static void tab_init(void)
{
    for (int i = 0; i < TAB_N; i++) {
        double a = (double)i / TAB_STEP;
        double phi = exp(-0.5 * a * a) * 0.39894228040143267794;
        double he[7] = {1.0, a, a * a - 1.0, a * a * a - 3.0 * a,
                        a * a * a * a - 6.0 * a * a + 3.0,
                        a * a * a * a * a - 10.0 * a * a * a + 15.0 * a,
                        a * a * a * a * a * a - 15.0 * a * a * a * a + 45.0 * a * a - 15.0};
        double fact = 1.0;
        tab[i][0] = 0.5 * erfc(a * 0.70710678118654752440);
        for (int n = 0; n <= 6; n++) {
            fact *= (double)(n + 1);
            tab[i][n + 1] = ((n & 1) ? -1.0 : 1.0) * he[n] * phi / fact;
        }
    }
}

/* Tail of the standard normal beyond |z| on the side of z's sign: Phi(z) for z <= 0,
 * 1 - Phi(z) for z > 0. Beyond 9 the tail is < 1.2e-19 and taken as 0. */
static inline double tail(double z)
{
    double a = fabs(z);
    if (a >= 9.0) return 0.0;
    int i = (int)(a * TAB_STEP + 0.5);
    double d = a - (double)i / TAB_STEP;
    const double *c = tab[i];
    double poly = c[7];
    for (int n = 6; n >= 1; n--) poly = poly * d + c[n];
    return c[0] - poly * d;
}

double cs_mx_normal_tail(double z)
{
    pthread_once(&tab_once, tab_init);
    return tail(z);
}

void cs_mx_gauss_weights(double c, double sigma, const double *e, int M, double *w)
{
    pthread_once(&tab_once, tab_init);
    double zp = (e[0] - c) / sigma, tp = tail(zp), Z = 0.0;
    for (int i = 0; i < M; i++) {
        double zn = (e[i + 1] - c) / sigma, tn = tail(zn), m;
        if (zn <= 0) m = tn - tp;           /* both below the mean: Phi(zn) - Phi(zp) */
        else if (zp >= 0) m = tp - tn;      /* both above: Q(zp) - Q(zn) */
        else m = 1.0 - tp - tn;             /* straddles the mean */
        w[i] = m > 0 ? m : 0.0;
        Z += w[i];
        zp = zn;
        tp = tn;
    }
    if (!(Z > 0)) {
        /* only for c outside [0,1] with a tiny sigma: fall back to the hard bin */
        for (int i = 0; i < M; i++) w[i] = 0.0;
        w[cs_mx_ubin(c, e, M)] = 1.0;
        return;
    }
    double inv = 1.0 / Z;
    for (int i = 0; i < M; i++) w[i] *= inv;
}

typedef struct {
    const double *v;
    const uint8_t *t;
    const double *W;      /* cached weights or NULL */
    const uint32_t *items;
    size_t ni;
    const double *e;
    int M;
    double sigma;
    double *C, *A;        /* M each, zeroed by the caller */
    const atomic_int *cancel;
    int cancelled;
} part;

static void *run_part(void *arg)
{
    part *q = arg;
    int M = q->M;
    double *w = q->W ? NULL : malloc((size_t)M * sizeof *w);
    if (!q->W && !w) { q->cancelled = -1; return NULL; }
    for (size_t j = 0; j < q->ni; j++) {
        if ((j & 4095) == 0 && cs_mx_cancelled(q->cancel)) { q->cancelled = 1; break; }
        uint32_t i = q->items[j];
        const double *wi;
        if (q->W) wi = q->W + (size_t)i * (size_t)M;
        else { cs_mx_gauss_weights(q->v[i], q->sigma, q->e, M, w); wi = w; }
        double c = q->v[i];
        for (int b = 0; b < M; b++) q->C[b] += wi[b] * c;
        if (q->t[i])
            for (int b = 0; b < M; b++) q->A[b] += wi[b];
    }
    free(w);
    return NULL;
}

/* One scalar problem (values v, targets t indexed by sample). */
static cs_status rece_scalar(const double *v, const uint8_t *t, const double *W, size_t n_all,
                             const uint32_t *items, size_t ni, const cs_settings *s,
                             const atomic_int *cancel, double *out, cs_error *err)
{
    (void)n_all;
    int M = s->bins;
    double *e = malloc((size_t)(M + 1) * sizeof *e);
    double *acc = calloc((size_t)M * 4, sizeof *acc);
    if (!e || !acc) { free(e); free(acc); return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory (RECE-G)"); }
    cs_mx_edges(e, M);
    part pt[2];
    int np = ni >= PAR_MIN ? 2 : 1;
    size_t half = np == 2 ? ni / 2 : ni;
    for (int k = 0; k < np; k++) {
        pt[k] = (part){v, t, W, items + (k ? half : 0), k ? ni - half : half, e, M, s->sigma,
                       acc + (size_t)M * (size_t)(2 * k), acc + (size_t)M * (size_t)(2 * k + 1),
                       cancel, 0};
    }
    pthread_t th;
    int threaded = np == 2 && pthread_create(&th, NULL, run_part, &pt[1]) == 0;
    run_part(&pt[0]);
    if (np == 2) {
        if (threaded) pthread_join(th, NULL);
        else run_part(&pt[1]);
    }
    cs_status rc = CS_OK;
    for (int k = 0; k < np; k++) {
        if (pt[k].cancelled < 0) rc = cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory (RECE-G)");
        else if (pt[k].cancelled > 0 && rc == CS_OK)
            rc = cs_error_set(err, CS_ECANCELLED, 0, 0, "cancelled");
    }
    if (rc == CS_OK) {
        double sum = 0.0;
        for (int b = 0; b < M; b++) {
            double C = acc[b], A = acc[M + b];
            if (np == 2) { C += acc[2 * M + b]; A += acc[3 * M + b]; }
            sum += fabs(A - C);
        }
        *out = sum / (double)ni;
    }
    free(e);
    free(acc);
    return rc;
}

static const double *weights_cache(cs_prepared *p)
{
    int M = p->s.bins;
    if ((double)p->n * (double)M * sizeof(double) > (double)CACHE_BYTES) return NULL;
    pthread_mutex_lock(&p->lock);
    if (!p->rece_w && !p->rece_w_tried) {
        p->rece_w_tried = 1;
        double *e = malloc((size_t)(M + 1) * sizeof *e);
        double *W = malloc(p->n * (size_t)M * sizeof *W);
        if (e && W) {
            cs_mx_edges(e, M);
            for (size_t i = 0; i < p->n; i++)
                cs_mx_gauss_weights(p->v[i], p->s.sigma, e, M, W + i * (size_t)M);
            p->rece_w = W;
            W = NULL;
        }
        free(e);
        free(W);
    }
    const double *W = p->rece_w;
    pthread_mutex_unlock(&p->lock);
    return W;
}

cs_status cs_mx_rece_g(const cs_prepared *cp, const uint32_t *items, size_t ni,
                       const atomic_int *cancel, double *out, cs_error *err)
{
    cs_prepared *p = (cs_prepared *)cp;   /* lazy cache only, under the lock */
    *out = NAN;
    if (p->vector) return CS_OK;          /* defined for scalar lenses only */
    if (p->kind != CS_LENS_CLASSWISE) {
        /* A cache is worth building only when it will be reused (subsets) or is cheap. */
        const double *W;
        if (ni < p->n || p->n <= 65536) {
            W = weights_cache(p);
        } else {
            pthread_mutex_lock(&p->lock);
            W = p->rece_w;
            pthread_mutex_unlock(&p->lock);
        }
        return rece_scalar(p->v, p->t, W, p->n, items, ni, &p->s, cancel, out, err);
    }
    const cs_dataset *d = p->d;
    size_t K = d->k;
    double *v = malloc(p->n * sizeof *v);
    uint8_t *t = malloc(p->n);
    if (!v || !t) { free(v); free(t); return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory (RECE-G)"); }
    double total = 0.0;
    cs_status rc = CS_OK;
    for (size_t c = 0; c < K && rc == CS_OK; c++) {
        for (size_t i = 0; i < p->n; i++) {
            v[i] = d->prob[(size_t)p->rows[i] * K + c];
            t[i] = d->label[p->rows[i]] == (int32_t)c;
        }
        double r;
        rc = rece_scalar(v, t, NULL, p->n, items, ni, &p->s, cancel, &r, err);
        total += r;
    }
    free(v);
    free(t);
    if (rc == CS_OK) *out = total / (double)K;
    return rc;
}
