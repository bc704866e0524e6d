/* Plans (reduce.h): the case list both plan makers fill, its order, and its release. */
#include "engine/reduce/reduce_internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char *dup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

static uint64_t size_of(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (uint64_t)sb.st_size : 0;
}

int rd_plan_add(cs_seg_plan *p, size_t *cap, const char *name, const char *probs,
                const char *labels, const char *probs_rec, const char *labels_rec)
{
    if (p->n == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        cs_seg_case *c = realloc(p->cases, nc * sizeof *c);
        if (!c) return -1;
        p->cases = c;
        *cap = nc;
    }
    cs_seg_case *c = &p->cases[p->n];
    memset(c, 0, sizeof *c);
    p->n++;   /* counted now so that cs_seg_plan_free releases what was copied */
    c->name = dup(name);
    c->probs = dup(probs);
    c->labels = dup(labels);
    c->probs_rec = dup(probs_rec);
    c->labels_rec = dup(labels_rec);
    if (!c->name || !c->probs || !c->labels || !c->probs_rec || !c->labels_rec) return -1;
    c->probs_size = size_of(probs);
    c->labels_size = size_of(labels);
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const cs_seg_case *)a)->name, ((const cs_seg_case *)b)->name);
}

size_t rd_plan_sort(cs_seg_plan *p)
{
    if (p->n > 1) qsort(p->cases, p->n, sizeof *p->cases, by_name);
    for (size_t i = 1; i < p->n; i++)
        if (strcmp(p->cases[i].name, p->cases[i - 1].name) == 0) return i;
    return (size_t)-1;
}

char *rd_path_join(const char *dir, const char *name)
{
    if (!dir[0] || name[0] == '/') return dup(name);
    size_t a = strlen(dir), b = strlen(name);
    int slash = dir[a - 1] != '/';
    char *r = malloc(a + (size_t)slash + b + 1);
    if (!r) return NULL;
    memcpy(r, dir, a);
    if (slash) r[a] = '/';
    memcpy(r + a + (size_t)slash, name, b + 1);
    return r;
}

size_t rd_array_ext(const char *name)
{
    static const char *const ext[] = { ".nii.gz", ".nii", ".npz", ".npy" };
    size_t n = strlen(name);
    for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
        size_t e = strlen(ext[i]);
        if (n >= e && strcmp(name + n - e, ext[i]) == 0) return e;
    }
    return 0;
}

void cs_seg_plan_free(cs_seg_plan *p)
{
    if (!p) return;
    for (size_t i = 0; i < p->n; i++) {
        cs_seg_case *c = &p->cases[i];
        free(c->name);
        free(c->probs);
        free(c->labels);
        free(c->probs_rec);
        free(c->labels_rec);
    }
    free(p->cases);
    free(p);
}
