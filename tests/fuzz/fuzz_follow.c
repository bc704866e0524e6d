/* libFuzzer target for the follow's pure rules (calscope/follow.h): the .npy size by header and
 * the natural order of names. The input is an .npy head (the bytes a follow reads from a file
 * being written) and, split at its first NUL, two names. Invariants:
 *   - cs_follow_npy_size returns -1 or a size at least its header's end, and reads nothing past
 *     the bytes given (ASan: the bytes are copied to an exact-size buffer);
 *   - a head cut anywhere before its header's end gives -1 (a header not yet whole is never
 *     taken for a size), and any longer head gives the same size;
 *   - cs_follow_zip_whole, given the bytes as a whole file or as the tail of a longer one,
 *     returns 0 or 1 and reads nothing past them; a whole file stays whole seen through any
 *     tail that still holds its end record and, when the directory's offset is in the zip64
 *     record, that record (the directory's first entry is checked only when the tail holds it);
 *   - cs_follow_natural_cmp is antisymmetric, and two names compare equal only when they are the
 *     same bytes (e2 and e02: the fewer zeros first). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "calscope/follow.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int sign(int v) { return (v > 0) - (v < 0); }

static void npy(const uint8_t *data, size_t size)
{
    unsigned char *head = malloc(size ? size : 1);
    if (!head) return;
    memcpy(head, data, size);
    int64_t s = cs_follow_npy_size(head, size);
    if (s < -1) abort();
    if (s >= 0) {
        size_t start = head[6] == 1 ? 10 : 12;
        size_t hlen = head[6] == 1 ? (size_t)head[8] | (size_t)head[9] << 8
                                   : (size_t)head[8] | (size_t)head[9] << 8 | (size_t)head[10] << 16 | (size_t)head[11] << 24;
        if ((uint64_t)s < start + hlen) abort();
        for (size_t cut = 0; cut < start + hlen; cut += 1 + cut / 8)
            if (cs_follow_npy_size(head, cut) != -1) abort();
        if (cs_follow_npy_size(head, start + hlen) != s) abort();
    }
    free(head);
}

static uint64_t le(const unsigned char *p, int bytes)
{
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static void zip(const uint8_t *data, size_t size)
{
    unsigned char *z = malloc(size ? size : 1);
    if (!z) return;
    memcpy(z, data, size);
    int whole = cs_follow_zip_whole(z, size, (int64_t)size);
    if (whole != 0 && whole != 1) abort();
    int t = cs_follow_zip_whole(z, size, (int64_t)size + 100000);   /* the tail of a longer file */
    if (t != 0 && t != 1) abort();
    if (whole && size >= 22 && memcmp(z + size - 22, "PK\5\6", 4) == 0 && le(z + size - 20 + 18, 2) == 0 &&
        le(z + size - 22 + 12, 4) != 0xFFFFFFFFu && le(z + size - 22 + 16, 4) != 0xFFFFFFFFu &&
        le(z + size - 22 + 10, 2) != 0xFFFF) {
        /* a plain end record without a comment: every tail holding it says whole */
        for (size_t cut = 0; cut + 22 <= size; cut += 1 + cut / 4)
            if (cs_follow_zip_whole(z + cut, size - cut, (int64_t)size) != 1) abort();
    }
    free(z);
}

static void names(const uint8_t *data, size_t size)
{
    char *buf = malloc(size + 2);
    if (!buf) return;
    memcpy(buf, data, size);
    buf[size] = buf[size + 1] = '\0';
    const char *a = buf, *b = buf + strlen(buf) + 1;
    if (b > buf + size) b = buf + size;
    if (sign(cs_follow_natural_cmp(a, b)) != -sign(cs_follow_natural_cmp(b, a))) abort();
    if (cs_follow_natural_cmp(a, a) != 0 || cs_follow_natural_cmp(b, b) != 0) abort();
    /* equal only when the same bytes: equal numbers with more leading zeros come later */
    if ((cs_follow_natural_cmp(a, b) == 0) != (strcmp(a, b) == 0)) abort();
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    npy(data, size);
    zip(data, size);
    names(data, size);
    return 0;
}
