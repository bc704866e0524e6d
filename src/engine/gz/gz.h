/* calscope engine, base layer: the one gzip reader of the engine. Every compressed stream
 * calscope reads (.nii.gz voxels, gzip'd prediction CSVs, gzip'd statistics files) is inflated
 * here with ISA-L's isal_inflate (ISAL_GZIP: each member's header parsed, CRC-32 and length
 * verified), 2.5-2.7x zlib's pace. zlib serves reading only to word an error the way zlib words
 * it (ISA-L says "invalid block", zlib says which table was bad), on the error path alone.
 * One thread at a time per stream. */
#ifndef CALSCOPE_GZ_H
#define CALSCOPE_GZ_H

#include <stddef.h>

typedef struct cs_gz cs_gz;

/* Where compressed bytes come from when they are not a file: the next chunk of input in *p, *n
 * (valid until the next call). Returns 1 with bytes, 0 at the end, -1 on an error (the pull's
 * owner keeps its reason). */
typedef int (*cs_gz_pull)(void *ctx, const void **p, size_t *n);

/* A gzip file (reads it with an input buffer of 128 KiB). NULL with errno set when the file
 * cannot be opened or memory is short. Free with cs_gz_close. */
cs_gz *cs_gz_open(const char *path);

/* The same with an input buffer of in_bytes (>= 1): the tests split a stream at every offset. */
cs_gz *cs_gz_open_sized(const char *path, size_t in_bytes);

/* A gzip stream from pull(ctx). `whole`, when not NULL, is the entire compressed stream in
 * memory (a mapped file): the words of a corruption are then zlib's own (cs_gz_read). NULL when
 * memory is short. The caller keeps ctx and whole alive until cs_gz_close. */
cs_gz *cs_gz_open_pull(cs_gz_pull pull, void *ctx, const void *whole, size_t whole_len);

/* A raw deflate stream (a zip member: no wrapper, one stream) from pull(ctx); its CRC-32 is
 * computed as it is inflated (cs_gz_crc). NULL when memory is short. */
cs_gz *cs_gz_open_raw(cs_gz_pull pull, void *ctx);

/* The CRC-32 of the bytes a raw stream has handed out so far. */
unsigned long cs_gz_crc(const cs_gz *g);

/* Up to n decompressed bytes into dst, *got of them (fewer only when the data ends, or the input
 * ends inside a member: see cs_gz_finished). Returns 0; -1 for a corrupt stream (*why: zlib's
 * words for it, static text); -2 for a read error (a file: errno set; a pull: its owner's). */
int cs_gz_read(cs_gz *g, void *dst, size_t n, size_t *got, const char **why);

/* 1 once the last member has been read through its trailer (its CRC and length checked); for a
 * raw stream, once its final block has ended. */
int cs_gz_finished(const cs_gz *g);

/* 1 when bytes that start no gzip member follow the last member (zlib's gzread ignores them;
 * a reader may refuse them). */
int cs_gz_trailing(const cs_gz *g);

void cs_gz_close(cs_gz *g);

/* The most bytes `compressed` bytes of gzip or deflate can inflate to: deflate expands at most
 * 1032:1 (RFC 1951: a 258-byte match per 2-bit code, roughly), saturating. The one rule by
 * which a reader bounds what a compressed file may declare or hold (a .nii.gz's dims, a
 * statistics file's text). Any thread. */
#define CS_GZ_MAX_RATIO 1032u
unsigned long long cs_gz_most_inflated(unsigned long long compressed);

/* zlib's words for the first corruption of the gzip stream data[0..len) (concatenated members
 * read in turn), or NULL when zlib finds none. Static text; any thread. */
const char *cs_gz_zlib_words(const void *data, size_t len);

#endif
