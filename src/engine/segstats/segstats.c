/* calscope engine: the statistics object — allocation, release, subsets. (The one accumulation
 * rule that fills it is the reducer's, src/engine/reduce/case.c.) */
#include "engine/segstats/segstats_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "calscope/dataset.h"

const char *cs_segstats_kind_name(cs_seg_kind kind)
{
    return kind == CS_SEG_REGIONS ? "regions" : "softmax";
}

/* Large sum arrays get a mapping of their own in whole 2 MiB pages marked for transparent huge
 * pages: a 200-case file's three class arrays are 1.9 MB each, and faulting them in (and
 * unmapping them) 4 KiB at a time was a seventh of the CPU time of opening the file; as one
 * huge page each it is 2 ms less. Only where the rounding wastes at most an eighth; the rest,
 * and systems without MADV_HUGEPAGE, use calloc. zarray and zfree take the same n and size,
 * so they agree on which it was. */
#define HUGE_PAGE ((size_t)2 << 20)

static int huge_mapped(size_t bytes)
{
#if defined(MADV_HUGEPAGE) && defined(MAP_ANONYMOUS)
    size_t r = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    return bytes >= (HUGE_PAGE >> 1) && r - bytes <= bytes / 8;
#else
    (void)bytes;
    return 0;
#endif
}

/* n elements of `size` bytes, zeroed; NULL when n * size overflows or memory is short. Free
 * with zfree(p, n, size). */
static void *zarray(size_t n, size_t size)
{
    if (n && size > SIZE_MAX / n) return NULL;
#if defined(MADV_HUGEPAGE) && defined(MAP_ANONYMOUS)
    size_t bytes = n * size;
    if (huge_mapped(bytes) && bytes < SIZE_MAX - 2 * HUGE_PAGE) {
        size_t r = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
        char *m = mmap(NULL, r + HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) return NULL;
        /* keep the 2 MiB-aligned r bytes inside, unmap the rest (fresh pages are zero) */
        char *a = (char *)(((uintptr_t)m + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE);
        if (a > m) munmap(m, (size_t)(a - m));
        if (a + r < m + r + HUGE_PAGE) munmap(a + r, (size_t)(m + r + HUGE_PAGE - (a + r)));
        (void)madvise(a, r, MADV_HUGEPAGE);   /* a hint: without it, plain pages */
        return a;
    }
#endif
    return calloc(n ? n : 1, size);
}

static void zfree(void *p, size_t n, size_t size)
{
    if (!p) return;
    if (huge_mapped(n * size))
        munmap(p, (n * size + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE);
    else
        free(p);
}

cs_segstats *cs_segstats_new(int fine, cs_seg_kind kind, size_t k, const char *const *class_names,
                             const char *mapping, size_t n_cases)
{
    if (fine < 1 || fine > CS_SEGSTATS_FINE_MAX || k == 0) return NULL;
    size_t per_case = k * (size_t)fine;
    if (per_case / k != (size_t)fine) return NULL;
    if (n_cases && per_case > SIZE_MAX / sizeof(double) / n_cases) return NULL;
    size_t nb = per_case * n_cases, nt = (size_t)fine * n_cases, ns = k * n_cases;

    cs_segstats *st = calloc(1, sizeof *st);
    if (!st) return NULL;
    st->fine = fine;
    st->kind = kind;
    st->k = k;
    st->n_cases = n_cases;
    st->class_names = cs_names_pack(class_names, k);
    st->mapping = strdup(mapping ? mapping : "");
    st->case_names = calloc(n_cases ? n_cases : 1, sizeof *st->case_names);
    st->probs_in = calloc(n_cases ? n_cases : 1, sizeof *st->probs_in);
    st->labels_in = calloc(n_cases ? n_cases : 1, sizeof *st->labels_in);
    st->voxels = calloc(n_cases ? n_cases : 1, sizeof *st->voxels);
    st->cnt = zarray(nb, sizeof *st->cnt);
    st->sum_p = zarray(nb, sizeof *st->sum_p);
    st->sum_y = zarray(nb, sizeof *st->sum_y);
    st->sq_err = zarray(ns, sizeof *st->sq_err);
    st->nll_pos = zarray(ns, sizeof *st->nll_pos);
    st->nll_neg = zarray(ns, sizeof *st->nll_neg);
    int ok = st->class_names && st->mapping && st->case_names && st->probs_in && st->labels_in &&
             st->voxels && st->cnt && st->sum_p && st->sum_y && st->sq_err && st->nll_pos &&
             st->nll_neg;
    if (ok && kind == CS_SEG_SOFTMAX) {
        st->t_cnt = zarray(nt, sizeof *st->t_cnt);
        st->t_sum_conf = zarray(nt, sizeof *st->t_sum_conf);
        st->t_sum_correct = zarray(nt, sizeof *st->t_sum_correct);
        ok = st->t_cnt && st->t_sum_conf && st->t_sum_correct;
    }
    if (!ok) {
        cs_segstats_free(st);
        return NULL;
    }
    return st;
}

void cs_segstats_free(cs_segstats *st)
{
    if (!st) return;
    for (size_t c = 0; c < st->n_cases; c++) {
        if (st->case_names) free(st->case_names[c]);
        if (st->probs_in) free(st->probs_in[c].path);
        if (st->labels_in) free(st->labels_in[c].path);
    }
    free(st->class_names);
    free(st->mapping);
    free(st->case_names);
    free(st->probs_in);
    free(st->labels_in);
    free(st->voxels);
    size_t nb = st->n_cases * st->k * (size_t)st->fine, nt = st->n_cases * (size_t)st->fine;
    size_t ns = st->k * st->n_cases;
    zfree(st->cnt, nb, sizeof *st->cnt);
    zfree(st->sum_p, nb, sizeof *st->sum_p);
    zfree(st->sum_y, nb, sizeof *st->sum_y);
    zfree(st->t_cnt, nt, sizeof *st->t_cnt);
    zfree(st->t_sum_conf, nt, sizeof *st->t_sum_conf);
    zfree(st->t_sum_correct, nt, sizeof *st->t_sum_correct);
    zfree(st->sq_err, ns, sizeof *st->sq_err);
    zfree(st->nll_pos, ns, sizeof *st->nll_pos);
    zfree(st->nll_neg, ns, sizeof *st->nll_neg);
    free(st);
}

/* The nine sum arrays of st with their lengths, for the helpers below. */
typedef struct sum_array {
    void **p;
    size_t n, size;
} sum_array;

static size_t sum_arrays(cs_segstats *st, sum_array *a)
{
    size_t nb = st->n_cases * st->k * (size_t)st->fine, nt = st->n_cases * (size_t)st->fine;
    size_t ns = st->k * st->n_cases, m = 0;
    a[m++] = (sum_array){(void **)&st->cnt, nb, sizeof *st->cnt};
    a[m++] = (sum_array){(void **)&st->sum_p, nb, sizeof *st->sum_p};
    a[m++] = (sum_array){(void **)&st->sum_y, nb, sizeof *st->sum_y};
    a[m++] = (sum_array){(void **)&st->sq_err, ns, sizeof *st->sq_err};
    a[m++] = (sum_array){(void **)&st->nll_pos, ns, sizeof *st->nll_pos};
    a[m++] = (sum_array){(void **)&st->nll_neg, ns, sizeof *st->nll_neg};
    if (st->t_cnt) {
        a[m++] = (sum_array){(void **)&st->t_cnt, nt, sizeof *st->t_cnt};
        a[m++] = (sum_array){(void **)&st->t_sum_conf, nt, sizeof *st->t_sum_conf};
        a[m++] = (sum_array){(void **)&st->t_sum_correct, nt, sizeof *st->t_sum_correct};
    }
    return m;
}

int cs_segstats_zero_sums(cs_segstats *st)
{
    sum_array a[9];
    size_t m = sum_arrays(st, a);
    int ok = 1;
    for (size_t x = 0; x < m; x++) {
        zfree(*a[x].p, a[x].n, a[x].size);
        ok &= (*a[x].p = zarray(a[x].n, a[x].size)) != NULL;
    }
    return ok ? 0 : -1;
}

void cs_segstats_advise_sparse(cs_segstats *st)
{
#if defined(MADV_NOHUGEPAGE)
    sum_array a[9];
    size_t m = sum_arrays(st, a);
    for (size_t x = 0; x < m; x++)
        if (*a[x].p && huge_mapped(a[x].n * a[x].size))
            (void)madvise(*a[x].p, (a[x].n * a[x].size + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE,
                          MADV_NOHUGEPAGE);
#else
    (void)st;
#endif
}

static int dup_into(char **dst, const char *s)
{
    if (!s) return 0;
    char *d = strdup(s);
    if (!d) return -1;
    free(*dst);
    *dst = d;
    return 0;
}

/* dst[0..n) = src[0..n) for 8-byte cells (counts or doubles, compared as bits), writing only
 * the cells that differ: the bins of a case are mostly empty, and a fresh object's pages that
 * stay zero are never touched, so a merge's memory follows the non-empty bins. */
static void copy_differing(void *dst, const void *src, size_t n)
{
    uint64_t *d = dst;
    const uint64_t *s = src;
    for (size_t i = 0; i < n; i++)
        if (d[i] != s[i]) d[i] = s[i];
}

int cs_segstats_copy_case(cs_segstats *dst, size_t dc, const cs_segstats *src, size_t sc)
{
    if (dup_into(&dst->case_names[dc], src->case_names[sc]) ||
        dup_into(&dst->probs_in[dc].path, src->probs_in[sc].path) ||
        dup_into(&dst->labels_in[dc].path, src->labels_in[sc].path))
        return -1;
    dst->probs_in[dc].size = src->probs_in[sc].size;
    dst->labels_in[dc].size = src->labels_in[sc].size;
    dst->voxels[dc] = src->voxels[sc];
    size_t kf = src->k * (size_t)src->fine, f = (size_t)src->fine, k = src->k;
    copy_differing(dst->cnt + dc * kf, src->cnt + sc * kf, kf);
    copy_differing(dst->sum_p + dc * kf, src->sum_p + sc * kf, kf);
    copy_differing(dst->sum_y + dc * kf, src->sum_y + sc * kf, kf);
    if (src->t_cnt && dst->t_cnt) {
        copy_differing(dst->t_cnt + dc * f, src->t_cnt + sc * f, f);
        copy_differing(dst->t_sum_conf + dc * f, src->t_sum_conf + sc * f, f);
        copy_differing(dst->t_sum_correct + dc * f, src->t_sum_correct + sc * f, f);
    }
    memcpy(dst->sq_err + dc * k, src->sq_err + sc * k, k * sizeof *src->sq_err);
    memcpy(dst->nll_pos + dc * k, src->nll_pos + sc * k, k * sizeof *src->nll_pos);
    memcpy(dst->nll_neg + dc * k, src->nll_neg + sc * k, k * sizeof *src->nll_neg);
    return 0;
}

cs_segstats *cs_segstats_subset(const cs_segstats *st, const uint8_t *keep)
{
    size_t n = 0;
    for (size_t c = 0; c < st->n_cases; c++) n += keep[c] != 0;
    cs_segstats *out = cs_segstats_new(st->fine, st->kind, st->k,
                                       (const char *const *)st->class_names, st->mapping, n);
    if (!out) return NULL;
    size_t d = 0;
    for (size_t c = 0; c < st->n_cases; c++) {
        if (!keep[c]) continue;
        if (cs_segstats_copy_case(out, d++, st, c)) {
            cs_segstats_free(out);
            return NULL;
        }
    }
    return out;
}
