/* calscope engine, base layer: reading decimal numbers exactly (num.c), for the loader, the
 * class map and the statistics reader. Pure functions; any thread. */
#ifndef CALSCOPE_ENGINE_NUM_H
#define CALSCOPE_ENGINE_NUM_H

#include <stddef.h>
#include <stdint.h>

enum { CSL_NUM_OK = 0, CSL_NUM_EMPTY, CSL_NUM_NONNUM, CSL_NUM_NONFINITE };

/* Parses exactly s[0..len) as a decimal number ([+-]digits[.digits][e[+-]digits]; no hex,
 * no surrounding space). Short decimals are converted exactly without strtod; the result is
 * always bit-identical to glibc strtod. Returns CSL_NUM_*; nan/inf words and overflow give
 * CSL_NUM_NONFINITE. Thread-safe. */
int cs_load_parse_double(const char *s, size_t len, double *out);

/* The decimal at the start of s[0..len), as far as its grammar goes (for callers that know
 * which byte must follow it, so the field's end need not be found first): returns the bytes
 * read with *out set exactly as cs_load_parse_double sets it on those bytes, or 0 when no
 * finite number starts there. The caller checks the byte after it. Thread-safe. */
size_t cs_load_parse_double_prefix(const char *s, size_t len, double *out);

/* ---- word-at-a-time byte tests (header scanning and splitting) -------------------------- */

/* 0x80 in every byte of the 8-byte word w that equals b, 0 in the others: exact (no carry
 * crosses a byte), so the lowest set bit gives the first match on a little-endian load. */
static inline uint64_t csl_eq8(uint64_t w, unsigned char b)
{
    const uint64_t low7 = 0x7f7f7f7f7f7f7f7full;
    uint64_t x = w ^ (0x0101010101010101ull * b);
    return ~(((x & low7) + low7) | x | low7);
}

/* 0x80 in every byte of w below n (n <= 0x80), 0 in the others: exact, like csl_eq8. */
static inline uint64_t csl_lt8(uint64_t w, unsigned char n)
{
    const uint64_t low7 = 0x7f7f7f7f7f7f7f7full;
    return ~(((w & low7) + 0x0101010101010101ull * (unsigned char)(0x80 - n)) | w | low7);
}

/* How many bytes of a csl_eq8 / csl_lt8 mask are set. */
static inline unsigned csl_count8(uint64_t m)
{
    return (unsigned)(((m >> 7) * 0x0101010101010101ull) >> 56);
}

#endif
