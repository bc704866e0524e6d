/* libFuzzer target for the follow's pure rules (calscope/follow.h): the .npy size by header and
 * the natural order of names. The input is an .npy head (the bytes a follow reads from a file
 * being written) and, split at its first NUL, two names. Invariants:
 *   - cs_follow_npy_size returns -1 or a size at least its header's end, and reads nothing past
 *     the bytes given (ASan: the bytes are copied to an exact-size buffer);
 *   - a head cut anywhere before its header's end gives -1 (a header not yet whole is never
 *     taken for a size), and any longer head gives the same size;
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
    names(data, size);
    return 0;
}
