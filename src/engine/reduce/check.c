/* The pairing checks of one case (reduce.h): spatial shapes, affines, channel count. Shapes are
 * compared fastest axis first (volume.h), so nnU-Net's (C, z, y, x) C-order npz and a NIfTI
 * (x, y, z) label map agree; trailing length-1 axes are dropped on both sides (NIfTI drops
 * them, npy keeps them). */
#include "engine/reduce/reduce_internal.h"

#include "calscope/metrics.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static int strip(const int64_t *dim, int nd)
{
    while (nd > 0 && dim[nd - 1] == 1) nd--;
    return nd;
}

static int same(const int64_t *a, int na, const int64_t *b, int nb)
{
    return na == nb && memcmp(a, b, (size_t)na * sizeof *a) == 0;
}

static void dims_text(const int64_t *dim, int nd, char *buf, size_t size)
{
    size_t pos = 0;
    buf[0] = '\0';
    if (nd == 0) snprintf(buf, size, "1");
    for (int i = 0; i < nd && pos < size; i++)
        pos += (size_t)snprintf(buf + pos, size - pos, "%s%" PRId64, i ? "x" : "", dim[i]);
}

/* An npy / npz array in Fortran order with two or more axes longer than 1: its values do not
 * come channel by channel in the order the reduction streams them, and a transposed copy would
 * hold the whole array in memory. Refused, naming the member, rather than read as a different
 * shape. */
static cs_status c_order(const char *path, const cs_vol_info *in, const char *other_role, const char *other,
                         cs_error *err)
{
    int long_axes = 0;
    for (int i = 0; i < in->ndim; i++) long_axes += in->dim[i] > 1;
    if (!in->fortran_order || long_axes < 2) return CS_OK;
    return cs_error_set(err, CS_EINPUT, 0, 0, "%s%s%s%s: Fortran order is not supported (write the array in C "
                        "order, e.g. np.ascontiguousarray) (%s: %s)", path, in->member ? "[" : "",
                        in->member ? in->member : "", in->member ? "]" : "", other_role, other);
}

cs_status rd_channels(const cs_seg_case *c, const cs_vol_info *pi, const cs_vol_info *li,
                      rd_shape *sh, cs_error *err)
{
    memset(sh, 0, sizeof *sh);
    cs_status st = c_order(c->probs, pi, "labels", c->labels, err);
    if (st == CS_OK) st = c_order(c->labels, li, "probabilities", c->probs, err);
    if (st != CS_OK) return st;
    int ln = strip(li->dim, li->ndim);
    int pn = strip(pi->dim, pi->ndim);
    int sn = pi->ndim > 0 ? strip(pi->dim, pi->ndim - 1) : 0;
    if (same(pi->dim, pn, li->dim, ln)) {
        sh->channels = 1;
    } else if (pi->ndim > 0 && same(pi->dim, sn, li->dim, ln)) {
        sh->channels = (size_t)pi->dim[pi->ndim - 1];
    } else {
        char a[160], b[160];
        dims_text(pi->dim, pi->ndim > 1 ? sn : pn, a, sizeof a);
        dims_text(li->dim, ln, b, sizeof b);
        if (pi->ndim > 1)
            return cs_error_set(err, CS_EINPUT, 0, 0, "%s and %s: spatial shapes differ: %s (%" PRId64 " channels) vs %s (fastest axis first)",
                                c->probs, c->labels, a, pi->dim[pi->ndim - 1], b);
        return cs_error_set(err, CS_EINPUT, 0, 0, "%s and %s: spatial shapes differ: %s vs %s (fastest axis first)",
                            c->probs, c->labels, a, b);
    }
    sh->nd = ln;
    sh->voxels = 1;
    for (int i = 0; i < ln; i++) {
        sh->dim[i] = li->dim[i];
        sh->voxels *= (uint64_t)li->dim[i];
    }
    return CS_OK;
}

/* An affine element that is not a finite number (a NaN or infinity from the header): a
 * difference with it means nothing, so it is refused, naming the element, before comparing. */
static cs_status finite_affine(const char *path, const cs_vol_info *in, const char *other_role,
                               const char *other, cs_error *err)
{
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 4; c++)
            if (!isfinite(in->affine[r][c]))
                return cs_error_set(err, CS_EINPUT, 0, 0, "%s: affine[%d][%d] is %s, which --affine-tol cannot "
                                    "compare (%s: %s)", path, r, c, isnan(in->affine[r][c]) ? "nan" :
                                    in->affine[r][c] > 0 ? "inf" : "-inf", other_role, other);
    return CS_OK;
}

cs_status rd_check_pair(const cs_seg_case *c, const cs_vol_info *pi, const cs_vol_info *li,
                        const cs_seg_mapping *m, double affine_tol, rd_shape *sh, cs_error *err)
{
    cs_status st = rd_channels(c, pi, li, sh, err);
    if (st != CS_OK) return st;
    if (pi->has_affine && li->has_affine) {
        if ((st = finite_affine(c->probs, pi, "labels", c->labels, err)) != CS_OK) return st;
        if ((st = finite_affine(c->labels, li, "probabilities", c->probs, err)) != CS_OK) return st;
        double d = cs_vol_affine_diff(pi, li);
        if (!(d <= affine_tol)) {
            char dt[40], tt[40];
            cs_format_number(dt, sizeof dt, d);
            cs_format_number(tt, sizeof tt, affine_tol);
            return cs_error_set(err, CS_EINPUT, 0, 0, "%s and %s: affines differ by %s, more than --affine-tol %s (resampled or reoriented?)",
                                c->probs, c->labels, dt, tt);
        }
    }
    if (m && sh->channels != m->k) {
        char d[512];
        cs_seg_mapping_describe(m, d, sizeof d);
        return cs_error_set(err, CS_EINPUT, 0, 0, "%s: %zu channel%s, but %s has %zu %s (labels: %s)", c->probs, sh->channels,
                            sh->channels == 1 ? "" : "s", d, m->k, m->kind == CS_SEG_REGIONS ? "regions" : "classes", c->labels);
    }
    return CS_OK;
}

void rd_voxel_text(const rd_shape *sh, uint64_t v, char *buf, size_t size)
{
    size_t pos = 0;
    buf[0] = '\0';
    if (sh->nd == 0) snprintf(buf, size, "0");
    for (int i = 0; i < sh->nd && pos < size; i++) {
        uint64_t d = (uint64_t)sh->dim[i];
        pos += (size_t)snprintf(buf + pos, size - pos, "%s%" PRIu64, i ? "," : "", v % d);
        v /= d;
    }
}
