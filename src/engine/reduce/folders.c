/* Two folders paired by file stem (reduce.h): --probs DIR --labels DIR [--prob-suffix S]. */
#include "engine/reduce/reduce_internal.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry { char *case_name, *file; } entry;
typedef struct listing { entry *e; size_t n, cap; } listing;

static void listing_free(listing *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->e[i].case_name);
        free(l->e[i].file);
    }
    free(l->e);
}

static int by_case(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    int c = strcmp(x->case_name, y->case_name);
    return c ? c : strcmp(x->file, y->file);
}

/* The case a probability file belongs to (its name without suffix and extension): its length,
 * or 0 when the name is no probability file. A suffix that itself ends in an extension
 * fixes the extension. */
static size_t probs_case(const char *name, const char *suffix)
{
    size_t n = strlen(name), s = strlen(suffix);
    if (s && rd_array_ext(suffix) == s)
        return n > s && strcmp(name + n - s, suffix) == 0 ? n - s : 0;
    size_t e = rd_array_ext(name);
    if (!e || n - e <= s || strncmp(name + n - e - s, suffix, s) != 0) return 0;
    return n - e - s;
}

/* Lists the array files of dir: probability files (suffix non-NULL) or label files (skipping
 * the probability files `skip_suffix` names, when the folders are the same). */
static cs_status list(const char *dir, const char *suffix, const char *skip_suffix, listing *l, cs_error *err)
{
    DIR *d = opendir(dir);
    if (!d) return cs_error_set(err, CS_EINPUT, 0, 0, "%s: %s", dir, strerror(errno));
    cs_status st = CS_OK;
    for (struct dirent *de; st == CS_OK && (de = readdir(d));) {
        const char *name = de->d_name;
        if (name[0] == '.') continue;
        size_t cn = suffix ? probs_case(name, suffix) : strlen(name) - rd_array_ext(name);
        if (!suffix && (cn == strlen(name) || (skip_suffix && probs_case(name, skip_suffix)))) continue;
        if (!cn) continue;
        if (l->n == l->cap) {
            size_t nc = l->cap ? l->cap * 2 : 64;
            entry *ne = realloc(l->e, nc * sizeof *ne);
            if (!ne) { st = cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", dir); break; }
            l->e = ne;
            l->cap = nc;
        }
        entry *e = &l->e[l->n];
        e->case_name = malloc(cn + 1);
        e->file = rd_path_join(dir, name);
        if (!e->case_name || !e->file) {
            free(e->case_name);
            free(e->file);
            st = cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", dir);
            break;
        }
        memcpy(e->case_name, name, cn);
        e->case_name[cn] = '\0';
        l->n++;
    }
    closedir(d);
    if (st == CS_OK && l->n > 1) qsort(l->e, l->n, sizeof *l->e, by_case);
    for (size_t i = 1; st == CS_OK && i < l->n; i++)
        if (strcmp(l->e[i].case_name, l->e[i - 1].case_name) == 0)
            st = cs_error_set(err, CS_EINPUT, 0, 0, "%s and %s have the same stem '%s'%s", l->e[i - 1].file, l->e[i].file,
                              l->e[i].case_name, suffix ? " (--prob-suffix with an extension, e.g. .npz, picks one)" : "");
    return st;
}

/* The folder named the same way after dropping trailing slashes. */
static int same_folder(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    while (na > 1 && a[na - 1] == '/') na--;
    while (nb > 1 && b[nb - 1] == '/') nb--;
    return na == nb && strncmp(a, b, na) == 0;
}

cs_status cs_seg_plan_folders(const char *probs_dir, const char *labels_dir, const char *suffix,
                              cs_seg_plan **out, cs_error *err)
{
    *out = NULL;
    if (!suffix) suffix = "";
    int same = same_folder(probs_dir, labels_dir);
    if (same && !suffix[0])
        return cs_error_set(err, CS_EUSAGE, 0, 0, "--probs and --labels name the same folder %s: give --prob-suffix to tell the probability files apart", probs_dir);
    listing P = { 0 }, L = { 0 };
    cs_seg_plan *p = calloc(1, sizeof *p);
    size_t cap = 0;
    cs_status st = p ? CS_OK : cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
    if (st == CS_OK) st = list(probs_dir, suffix, NULL, &P, err);
    if (st == CS_OK) st = list(labels_dir, NULL, same ? suffix : NULL, &L, err);
    if (st == CS_OK && P.n == 0)
        st = cs_error_set(err, CS_EINPUT, 0, 0, "%s: no probability file (CASE%s%s)", probs_dir, suffix,
                          suffix[0] && rd_array_ext(suffix) == strlen(suffix) ? "" : " with .nii, .nii.gz, .npz or .npy");
    size_t i = 0, j = 0;
    while (st == CS_OK && (i < P.n || j < L.n)) {
        int c = i == P.n ? 1 : j == L.n ? -1 : strcmp(P.e[i].case_name, L.e[j].case_name);
        if (c < 0)
            st = cs_error_set(err, CS_EINPUT, 0, 0, "case '%s': %s has no label file %s.* in %s",
                              P.e[i].case_name, P.e[i].file, P.e[i].case_name, labels_dir);
        else if (c > 0)
            st = cs_error_set(err, CS_EINPUT, 0, 0, "case '%s': %s has no probability file %s%s%s in %s",
                              L.e[j].case_name, L.e[j].file, L.e[j].case_name, suffix,
                              suffix[0] && rd_array_ext(suffix) == strlen(suffix) ? "" : ".*", probs_dir);
        else if (rd_plan_add(p, &cap, P.e[i].case_name, P.e[i].file, L.e[j].file, P.e[i].file, L.e[j].file))
            st = cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
        else { i++; j++; }
    }
    listing_free(&P);
    listing_free(&L);
    if (st != CS_OK) { cs_seg_plan_free(p); return st; }
    *out = p;
    return CS_OK;
}
