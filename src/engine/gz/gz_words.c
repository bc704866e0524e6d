/* zlib's words for a corrupt gzip stream: the only reading zlib does in calscope, on the error
 * path alone, so that a message names the fault as zlib (and gzip(1)) always has. */
#include "engine/gz/gz.h"

#include <stdint.h>
#include <zlib.h>

const char *cs_gz_zlib_words(const void *data, size_t len)
{
    unsigned char sink[1 << 14];   /* the output is thrown away */
    z_stream z = {.next_in = (Bytef *)(uintptr_t)data};
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) return NULL;
    const char *words = NULL;
    size_t left = len;
    for (;;) {
        if (z.avail_in == 0 && left > 0) {
            z.avail_in = left > UINT32_MAX ? UINT32_MAX : (uInt)left;
            left -= z.avail_in;
        }
        z.next_out = sink;
        z.avail_out = sizeof sink;
        int zr = inflate(&z, Z_NO_FLUSH);
        if (zr == Z_STREAM_END) {
            /* another member follows only when the magic does */
            if (z.avail_in + left == 0 || z.next_in[0] != 0x1f || inflateReset(&z) != Z_OK) break;
            continue;
        }
        if (zr == Z_DATA_ERROR || zr == Z_NEED_DICT || zr == Z_STREAM_ERROR) {
            words = z.msg;
            break;
        }
        if (zr == Z_BUF_ERROR && z.avail_in + left == 0) break;   /* cut short: no corruption */
        if (zr != Z_OK && zr != Z_BUF_ERROR) break;
    }
    inflateEnd(&z);
    return words;
}
