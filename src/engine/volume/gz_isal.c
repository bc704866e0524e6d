/* A gzip file streamed through ISA-L's inflate (isal_inflate, ISAL_GZIP: header parsed, CRC-32
 * and length of every member verified), 2.5-2.7x zlib's pace on segmentation volumes.
 * Concatenated members are read one after the other; bytes after the last member that do not
 * start another one are ignored, as zlib's gzread does. The input buffer is the only one held
 * besides ISA-L's state (~ 200 KiB in all). */
#include "engine/volume/vol_internal.h"

#include <isa-l/igzip_lib.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#define GZ_IN_BYTES ((size_t)1 << 17)

struct cs_gz {
    FILE *f;
    size_t in_cap;
    int eof;                 /* the file has no more bytes */
    int done;                /* the last member is finished: nothing more to hand out */
    struct inflate_state st;
    unsigned char in[];      /* in_cap bytes */
};

cs_gz *cs_gz_open(const char *path)
{
    return cs_gz_open_sized(path, GZ_IN_BYTES);
}

cs_gz *cs_gz_open_sized(const char *path, size_t in_bytes)
{
    cs_gz *g = malloc(sizeof *g + in_bytes);
    if (!g) return NULL;
    g->in_cap = in_bytes;
    if (!(g->f = fopen(path, "rb"))) {
        int e = errno;
        free(g);
        errno = e;
        return NULL;
    }
    g->eof = g->done = 0;
    isal_inflate_init(&g->st);
    g->st.crc_flag = ISAL_GZIP;
    g->st.next_in = g->in;
    g->st.avail_in = 0;
    return g;
}

void cs_gz_close(cs_gz *g)
{
    if (!g) return;
    fclose(g->f);
    free(g);
}

/* zlib's words for what ISA-L reports, so a message reads the same whichever inflater found it.
 * ISA-L checks the CRC-32 and the length together: both are "incorrect data check". */
static const char *isal_words(int rc)
{
    switch (rc) {
    case ISAL_INVALID_BLOCK: return "invalid block type";
    case ISAL_INVALID_SYMBOL: return "invalid literal/length code";
    case ISAL_INVALID_LOOKBACK: return "invalid distance too far back";
    case ISAL_INVALID_WRAPPER: return "incorrect header check";
    case ISAL_UNSUPPORTED_METHOD: return "unknown compression method";
    case ISAL_INCORRECT_CHECKSUM: return "incorrect data check";
    default: return "corrupt deflate stream";
    }
}

/* More input when ISA-L has used all it was given: 0, or -2 on a read error (errno set). */
static int refill(cs_gz *g)
{
    if (g->st.avail_in > 0 || g->eof) return 0;
    size_t k = fread(g->in, 1, g->in_cap, g->f);
    if (k == 0) {
        if (ferror(g->f)) return -2;
        g->eof = 1;
    }
    g->st.next_in = g->in;
    g->st.avail_in = (uint32_t)k;
    return 0;
}

/* After a member's trailer: another member starts here, or the data is over. */
static int next_member(cs_gz *g)
{
    if (refill(g) != 0) return -2;
    if (g->st.avail_in == 0 || g->st.next_in[0] != 0x1f) {
        g->done = 1;
        return 0;
    }
    uint8_t *next = g->st.next_in;
    uint32_t avail = g->st.avail_in;
    isal_inflate_reset(&g->st);
    g->st.crc_flag = ISAL_GZIP;
    g->st.next_in = next;
    g->st.avail_in = avail;
    return 0;
}

int cs_gz_read(cs_gz *g, void *dst, size_t n, size_t *got, const char **why)
{
    size_t have = 0;
    *got = 0;
    while (have < n && !g->done) {
        if (g->st.block_state == ISAL_BLOCK_FINISH) {
            if (next_member(g) != 0) return -2;
            continue;
        }
        if (refill(g) != 0) return -2;
        size_t room = n - have;
        g->st.next_out = (uint8_t *)dst + have;
        g->st.avail_out = room > UINT32_MAX ? UINT32_MAX : (uint32_t)room;
        uint32_t out0 = g->st.avail_out, in0 = g->st.avail_in;
        int rc = isal_inflate(&g->st);
        have += out0 - g->st.avail_out;
        if (rc < 0) {
            *got = have;
            *why = isal_words(rc);
            return -1;
        }
        /* the file ended inside a member: a short read (the caller says "truncated") */
        if (g->eof && g->st.avail_in == 0 && out0 == g->st.avail_out && in0 == 0 &&
            g->st.block_state != ISAL_BLOCK_FINISH)
            break;
    }
    *got = have;
    return 0;
}

int cs_gz_finished(const cs_gz *g)
{
    return g->done;
}
