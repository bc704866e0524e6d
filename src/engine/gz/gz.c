/* A gzip stream inflated by ISA-L (isal_inflate, ISAL_GZIP: header parsed, CRC-32 and length of
 * every member verified), 2.5-2.7x zlib's pace on segmentation volumes. Concatenated members are
 * read one after the other; bytes after the last member that do not start another one end the
 * data (cs_gz_trailing says so). Input comes from a file through a buffer of its own, or from a
 * caller's pull function; besides that buffer only ISA-L's state is held (~ 200 KiB in all). */
#include "engine/gz/gz.h"
#include "engine/num/cpu.h"

#include <isa-l/igzip_lib.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>

#define GZ_IN_BYTES ((size_t)1 << 17)

struct cs_gz {
    FILE *f;                 /* a file source, else NULL and pull set */
    cs_gz_pull pull;
    void *ctx;
    const unsigned char *rest;   /* a pulled chunk's bytes not yet given to ISA-L (> 4 GiB) */
    size_t rest_len;
    const void *whole;       /* the whole compressed stream in memory, for zlib's words */
    size_t whole_len;
    size_t in_cap;
    int eof;                 /* the input has no more bytes */
    int done;                /* the last member is finished: nothing more to hand out */
    int trailing;            /* done, and bytes that start no member follow */
    int raw;                 /* one raw deflate stream, no gzip members */
    struct inflate_state st;
    unsigned char in[];      /* in_cap bytes (a file source) */
};

static cs_gz *gz_new(size_t in_bytes)
{
    cs_gz *g = calloc(1, sizeof *g + in_bytes);
    if (!g) return NULL;
    g->in_cap = in_bytes;
    isal_inflate_init(&g->st);
    g->st.crc_flag = ISAL_GZIP;
    g->st.next_in = g->in;
    g->st.avail_in = 0;
    return g;
}

cs_gz *cs_gz_open(const char *path)
{
    return cs_gz_open_sized(path, GZ_IN_BYTES);
}

cs_gz *cs_gz_open_sized(const char *path, size_t in_bytes)
{
    cs_gz *g = gz_new(in_bytes);
    if (!g) return NULL;
    if (!(g->f = fopen(path, "rb"))) {
        int e = errno;
        free(g);
        errno = e;
        return NULL;
    }
    return g;
}

cs_gz *cs_gz_open_pull(cs_gz_pull pull, void *ctx, const void *whole, size_t whole_len)
{
    cs_gz *g = gz_new(0);
    if (!g) return NULL;
    g->pull = pull;
    g->ctx = ctx;
    g->whole = whole;
    g->whole_len = whole_len;
    return g;
}

cs_gz *cs_gz_open_raw(cs_gz_pull pull, void *ctx)
{
    cs_gz *g = cs_gz_open_pull(pull, ctx, NULL, 0);
    if (!g) return NULL;
    g->raw = 1;
    g->st.crc_flag = ISAL_GZIP_NO_HDR;   /* raw deflate, its CRC-32 kept in st.crc */
    return g;
}

unsigned long cs_gz_crc(const cs_gz *g)
{
    return g->st.crc;
}

unsigned long long cs_gz_most_inflated(unsigned long long compressed)
{
    return compressed > ULLONG_MAX / CS_GZ_MAX_RATIO ? ULLONG_MAX : compressed * CS_GZ_MAX_RATIO;
}

void cs_gz_close(cs_gz *g)
{
    if (!g) return;
    if (g->f) fclose(g->f);
    free(g);
}

/* zlib's words for what ISA-L reports, so a message reads the same whichever inflater found it.
 * ISA-L checks the CRC-32 and the length together: both are "incorrect data check". When the
 * whole stream is in memory, zlib itself words any other corruption (ISA-L's codes are coarser:
 * one "invalid block" for zlib's several bad-table messages). */
static const char *isal_words(const cs_gz *g, int rc)
{
    if (rc != ISAL_INCORRECT_CHECKSUM && g->whole) {
        const char *w = cs_gz_zlib_words(g->whole, g->whole_len);
        if (w) return w;
    }
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

/* The next input from a pull source, at most 4 GiB at a time (ISA-L counts in 32 bits). */
static int pull_more(cs_gz *g)
{
    if (g->rest_len == 0) {
        const void *p;
        size_t n;
        int r = g->pull(g->ctx, &p, &n);
        if (r < 0) return -2;
        if (r == 0 || n == 0) {
            g->eof = r == 0;
            g->st.avail_in = 0;
            return 0;
        }
        g->rest = p;
        g->rest_len = n;
    }
    size_t take = g->rest_len > UINT32_MAX ? UINT32_MAX : g->rest_len;
    g->st.next_in = (uint8_t *)(uintptr_t)g->rest;
    g->st.avail_in = (uint32_t)take;
    g->rest += take;
    g->rest_len -= take;
    return 0;
}

/* More input when ISA-L has used all it was given: 0, or -2 on a read error. */
static int refill(cs_gz *g)
{
    if (g->st.avail_in > 0 || g->eof) return 0;
    if (g->pull) return pull_more(g);
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
    if (g->st.avail_in == 0 && !g->eof) return 0;   /* an empty pulled chunk: look again */
    if (g->st.avail_in == 0 || g->st.next_in[0] != 0x1f) {
        g->done = 1;
        g->trailing = g->st.avail_in > 0;
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

/* ISA-L's AVX-512 CRC-32 (crc32_gzip_refl_by16_10, run inside isal_inflate) returns with the
 * upper halves of the vector registers dirty: it ends without vzeroupper, and ISA-L leaves that
 * to the caller (github.com/intel/isa-l/issues/24). Until they are cleared, every legacy-SSE instruction of
 * the code that follows (calscope's scalar double arithmetic, built for baseline x86-64) pays a
 * false dependency on them: the reduction's per-voxel passes ran 2-3x slower after each inflate
 * (a BraTS-size case 1.13 s of CPU, 0.70 s once cleared). The clobbers keep the compiler from
 * holding anything wider than 128 bits across it, in a build that uses AVX itself. */
static void clear_upper_vector_state(void)
{
#if defined(__GNUC__) && defined(__x86_64__)
    if (cs_cpu_features() & CS_CPU_AVX)
        __asm__ volatile("vzeroupper" ::: "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
                         "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
#endif
}

int cs_gz_read(cs_gz *g, void *dst, size_t n, size_t *got, const char **why)
{
    size_t have = 0;
    *got = 0;
    while (have < n && !g->done) {
        if (g->st.block_state == ISAL_BLOCK_FINISH) {
            if (g->raw) g->done = 1;
            else if (next_member(g) != 0) return -2;
            continue;
        }
        if (refill(g) != 0) return -2;
        size_t room = n - have;
        g->st.next_out = (uint8_t *)dst + have;
        g->st.avail_out = room > UINT32_MAX ? UINT32_MAX : (uint32_t)room;
        uint32_t out0 = g->st.avail_out, in0 = g->st.avail_in;
        int rc = isal_inflate(&g->st);
        clear_upper_vector_state();
        have += out0 - g->st.avail_out;
        if (rc < 0) {
            *got = have;
            *why = isal_words(g, rc);
            return -1;
        }
        /* the input ended inside a member: a short read (the caller says "truncated") */
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

int cs_gz_trailing(const cs_gz *g)
{
    return g->trailing;
}
