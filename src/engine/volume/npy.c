/* numpy .npy: the header parser (format versions 1.0, 2.0, 3.0; no C library exists for it)
 * and the plain-file byte source. The same parser reads an .npz member (npz.c) through that
 * member's byte source.
 *
 * Header: "\x93NUMPY", major, minor, header length (uint16 LE for 1.x, uint32 LE for 2.x/3.x),
 * then a Python dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
 * padded with spaces and a newline. */
#include "engine/volume/vol_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* numpy writes headers of a few hundred bytes; this bounds what a hostile file can make us
 * allocate (numpy itself refuses headers over 10,000 bytes by default). */
#define NPY_MAX_HEADER 65536

static int host_little(void)
{
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 1;
}

/* ---- the dict literal ------------------------------------------------------------------- */

typedef struct hdr_parser {
    const char *p, *end;
} hdr_parser;

static void skip_ws(hdr_parser *h)
{
    while (h->p < h->end && isspace((unsigned char)*h->p)) h->p++;
}

static int eat(hdr_parser *h, char c)
{
    skip_ws(h);
    if (h->p < h->end && *h->p == c) { h->p++; return 1; }
    return 0;
}

/* A quoted string ('...' or "..."), no escapes (numpy writes none in these fields). */
static int str(hdr_parser *h, char *out, size_t cap)
{
    skip_ws(h);
    if (h->p >= h->end || (*h->p != '\'' && *h->p != '"')) return 0;
    char q = *h->p++;
    size_t n = 0;
    while (h->p < h->end && *h->p != q) {
        if (n + 1 >= cap) return 0;
        out[n++] = *h->p++;
    }
    if (h->p >= h->end) return 0;
    h->p++;
    out[n] = '\0';
    return 1;
}

static int word(hdr_parser *h, const char *w)
{
    skip_ws(h);
    size_t n = strlen(w);
    if ((size_t)(h->end - h->p) >= n && memcmp(h->p, w, n) == 0) { h->p += n; return 1; }
    return 0;
}

/* (), (n,), (a, b, ...): up to CS_VOL_MAX_DIMS non-negative integers. Returns the count, or -1. */
static int shape_tuple(hdr_parser *h, int64_t *dims)
{
    if (!eat(h, '(')) return -1;
    int n = 0;
    for (;;) {
        if (eat(h, ')')) return n;
        skip_ws(h);
        if (h->p >= h->end || !isdigit((unsigned char)*h->p)) return -1;
        int64_t d = 0;
        while (h->p < h->end && isdigit((unsigned char)*h->p)) {
            if (d > (INT64_MAX - 9) / 10) return -1;
            d = d * 10 + (*h->p++ - '0');
        }
        if (h->p < h->end && *h->p == 'L') h->p++;          /* Python 2 longs */
        if (n == CS_VOL_MAX_DIMS) return -2;
        dims[n++] = d;
        if (!eat(h, ',')) { if (eat(h, ')')) return n; return -1; }
    }
}

/* descr -> dtype and byte order. Accepted: f2 f4 f8, i1..i8, u1..u8, b1 (bool as uint8), with
 * '<', '>', '|' or '='. */
static int descr_type(const char *d, cs_vol_dtype *t, int *big)
{
    char order = d[0];
    if (order != '<' && order != '>' && order != '|' && order != '=') return 0;
    char kind = d[1];
    if (!kind || !d[2] || d[3]) return 0;
    int size = d[2] - '0';
    *big = order == '>' || (order == '=' && !host_little());
    if (order == '|' && size != 1) return 0;
    switch (kind) {
    case 'f':
        if (size == 2) *t = CS_VDT_F16;
        else if (size == 4) *t = CS_VDT_F32;
        else if (size == 8) *t = CS_VDT_F64;
        else return 0;
        return 1;
    case 'i':
    case 'u': {
        static const cs_vol_dtype s[] = {CS_VDT_I8, CS_VDT_I16, CS_VDT_I32, CS_VDT_I64};
        static const cs_vol_dtype u[] = {CS_VDT_U8, CS_VDT_U16, CS_VDT_U32, CS_VDT_U64};
        int i = size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : size == 8 ? 3 : -1;
        if (i < 0) return 0;
        *t = kind == 'i' ? s[i] : u[i];
        return 1;
    }
    case 'b':
        if (size != 1) return 0;
        *t = CS_VDT_U8;
        return 1;
    default:
        return 0;
    }
}

static cs_status bad_header(cs_vol *v, const char *why, cs_error *err)
{
    char where[1200];
    return cs_error_set(err, CS_EINPUT, 0, 0, "%s: bad npy header: %s", cs_vol_where(v, where, sizeof where), why);
}

static cs_status read_exact(cs_vol *v, void *dst, size_t n, cs_error *err)
{
    size_t got = 0;
    cs_status st = v->ops->read(v, dst, n, &got, 0, err);
    if (st != CS_OK) return st;
    if (got < n) return bad_header(v, "file ends inside the header", err);
    return CS_OK;
}

/* The three header fields, as parsed from the dict. */
typedef struct npy_fields {
    char descr[64];
    int have_descr, have_order, have_shape, fortran, nd;
    int64_t dims[CS_VOL_MAX_DIMS];
} npy_fields;

/* Magic, version and header length, then the header text itself into *text (the caller frees
 * it; NUL-terminated, *hlen bytes). */
static cs_status read_header_text(cs_vol *v, char **text, size_t *hlen, cs_error *err)
{
    char where[1200];
    unsigned char pre[10];
    size_t got = 0;
    cs_status st = v->ops->read(v, pre, 8, &got, 0, err);
    if (st != CS_OK) return st;
    if (got < 8 || memcmp(pre, "\x93NUMPY", 6) != 0)
        return cs_error_set(err, CS_EINPUT, 0, 0, "%s: not an npy file (bad magic)", cs_vol_where(v, where, sizeof where));
    int major = pre[6];
    if (major == 1) {
        if ((st = read_exact(v, pre + 8, 2, err)) != CS_OK) return st;
        *hlen = (size_t)pre[8] | (size_t)pre[9] << 8;
    } else if (major == 2 || major == 3) {
        unsigned char l[4];
        if ((st = read_exact(v, l, 4, err)) != CS_OK) return st;
        *hlen = (size_t)l[0] | (size_t)l[1] << 8 | (size_t)l[2] << 16 | (size_t)l[3] << 24;
    } else {
        return cs_error_set(err, CS_EINPUT, 0, 0, "%s: unsupported npy format version %d.%d",
                            cs_vol_where(v, where, sizeof where), major, pre[7]);
    }
    if (*hlen > NPY_MAX_HEADER) return bad_header(v, "longer than 65536 bytes", err);
    *text = malloc(*hlen + 1);
    if (!*text) return cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", cs_vol_where(v, where, sizeof where));
    if ((st = read_exact(v, *text, *hlen, err)) != CS_OK) { free(*text); *text = NULL; return st; }
    (*text)[*hlen] = '\0';
    return CS_OK;
}

/* The value of one dict key into f. A malformed value sets *why (said as a bad header); a
 * structured dtype or too many dimensions get their own message and status. */
static cs_status dict_value(cs_vol *v, hdr_parser *h, const char *key, npy_fields *f, const char **why, cs_error *err)
{
    char where[1200];
    if (strcmp(key, "descr") == 0) {
        skip_ws(h);
        if (h->p < h->end && *h->p == '[')
            return cs_error_set(err, CS_EINPUT, 0, 0, "%s: unsupported dtype: a structured array "
                                "(want a plain numeric dtype)", cs_vol_where(v, where, sizeof where));
        if (!str(h, f->descr, sizeof f->descr)) *why = "bad descr";
        else f->have_descr = 1;
    } else if (strcmp(key, "fortran_order") == 0) {
        if (word(h, "True")) f->fortran = 1;
        else if (word(h, "False")) f->fortran = 0;
        else { *why = "bad fortran_order"; return CS_OK; }
        f->have_order = 1;
    } else if (strcmp(key, "shape") == 0) {
        f->nd = shape_tuple(h, f->dims);
        if (f->nd == -2)
            return cs_error_set(err, CS_EINPUT, 0, 0, "%s: more than %d dimensions",
                                cs_vol_where(v, where, sizeof where), CS_VOL_MAX_DIMS);
        if (f->nd < 0) *why = "bad shape";
        else f->have_shape = 1;
    } else {
        *why = "unknown key";
    }
    return CS_OK;
}

/* The dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...), } into f; every one
 * of the three keys must be there. */
static cs_status parse_dict(cs_vol *v, const char *text, size_t hlen, npy_fields *f, cs_error *err)
{
    hdr_parser h = {text, text + hlen};
    char key[32];
    if (!eat(&h, '{')) return bad_header(v, "not a dict", err);
    while (!eat(&h, '}')) {
        if (!str(&h, key, sizeof key) || !eat(&h, ':')) return bad_header(v, "not a dict", err);
        const char *why = NULL;
        cs_status st = dict_value(v, &h, key, f, &why, err);
        if (st != CS_OK) return st;
        if (why) return bad_header(v, why, err);
        if (!eat(&h, ',')) { if (eat(&h, '}')) break; return bad_header(v, "not a dict", err); }
    }
    if (!f->have_descr || !f->have_order || !f->have_shape)
        return bad_header(v, "descr, fortran_order or shape missing", err);
    return CS_OK;
}

/* The parsed fields into v: dtype, byte swap, dimensions and value count. */
static cs_status apply_fields(cs_vol *v, const npy_fields *f, cs_error *err)
{
    char where[1200];
    cs_vol_dtype t;
    int big;
    if (!descr_type(f->descr, &t, &big))
        return cs_error_set(err, CS_EINPUT, 0, 0, "%s: unsupported dtype '%s' (want <f2 <f4 <f8 |u1 |i1 "
                            "<i2 <u2 <i4 <u4 <i8 <u8 |b1, or > for big-endian)",
                            cs_vol_where(v, where, sizeof where), f->descr);
    cs_vol_set_dtype(v, t);
    if (f->descr[1] == 'b') v->info.dtype_name = "bool";
    v->swap = v->esize > 1 && big == host_little();
    uint64_t total = 1;
    for (int i = 0; i < f->nd; i++) {
        if (f->dims[i] && total > UINT64_MAX / (uint64_t)f->dims[i])
            return cs_error_set(err, CS_EINPUT, 0, 0, "%s: bad npy header: too many values",
                                cs_vol_where(v, where, sizeof where));
        total *= (uint64_t)f->dims[i];
    }
    /* fastest-varying first: the last axis of a C-order array, the first of a Fortran one */
    v->info.ndim = f->nd ? f->nd : 1;
    v->info.dim[0] = 1;
    for (int i = 0; i < f->nd; i++) v->info.dim[i] = f->fortran ? f->dims[i] : f->dims[f->nd - 1 - i];
    v->info.n_values = total;
    v->info.fortran_order = f->fortran;
    return CS_OK;
}

cs_status cs_vol_npy_header(cs_vol *v, cs_error *err)
{
    char *text = NULL;
    size_t hlen = 0;
    cs_status st = read_header_text(v, &text, &hlen, err);
    if (st != CS_OK) return st;
    npy_fields f = { .descr = "" };
    st = parse_dict(v, text, hlen, &f, err);
    free(text);
    if (st != CS_OK) return st;
    return apply_fields(v, &f, err);
}

/* ---- .npy files ------------------------------------------------------------------------- */

static cs_status file_read(cs_vol *v, void *dst, size_t n, size_t *got, int last, cs_error *err)
{
    (void)last;
    FILE *f = v->impl;
    *got = fread(dst, 1, n, f);
    if (*got < n && ferror(f))
        return cs_error_set(err, CS_EINPUT, 0, 0, "%s: cannot read: %s", v->path, strerror(errno));
    return CS_OK;
}

static void file_close(void *impl)
{
    fclose(impl);
}

static const cs_vol_ops npy_ops = {file_read, file_close};

cs_status cs_vol_open_npy(cs_vol *v, cs_error *err)
{
    FILE *f = fopen(v->path, "rb");
    if (!f) return cs_error_set(err, CS_EINPUT, 0, 0, "%s: cannot open: %s", v->path, strerror(errno));
    v->ops = &npy_ops;
    v->impl = f;
    v->info.format = CS_VOL_NPY;
    cs_status st = cs_vol_npy_header(v, err);
    if (st != CS_OK) return st;
    /* the data is the rest of the file */
    struct stat sb;
    off_t at = ftello(f);
    if (fstat(fileno(f), &sb) != 0 || at < 0 || !S_ISREG(sb.st_mode)) return CS_OK;
    return cs_vol_check_fits(v, sb.st_size > at ? (uint64_t)(sb.st_size - at) : 0, err);
}
