/* calscope engine, statistics-object internals shared by src/engine/segstats/ (not installed).
 * Threads: as segstats.h. */
#ifndef CALSCOPE_SEGSTATS_INTERNAL_H
#define CALSCOPE_SEGSTATS_INTERNAL_H

#include <stdint.h>

#include "calscope/segstats.h"

/* cs_segstats_read with the most text a file read into memory (gzip'd, or from a pipe) may
 * hold: cs_segstats_read gives 4 GiB; the tests give less, to refuse a bomb in little memory.
 * Past it: CS_EINPUT "PATH: cannot read: more than N bytes of text, ...". Any thread. */
cs_status cs_segstats_read_within(const char *path, uint64_t text_max, cs_segstats **out,
                                  cs_error *err);

/* Copies case sc of src (name, inputs, voxels, every sum) into case dc of dst, which has the
 * same fine, kind and k. The strings are duplicated. Returns 0, or -1 when out of memory (dst
 * keeps what it had; cs_segstats_free releases partial copies). */
int cs_segstats_copy_case(cs_segstats *dst, size_t dc, const cs_segstats *src, size_t sc);

/* The text of a kind in files and messages: "softmax" / "regions". */
const char *cs_segstats_kind_name(cs_seg_kind kind);

/* Every sum array of st zeroed again, by releasing its pages and taking fresh ones (a file
 * whose records fill few of them must not touch the rest). Returns 0, or -1 when out of
 * memory (st then holds NULL arrays: only cs_segstats_free may follow). Not thread-safe. */
int cs_segstats_zero_sums(cs_segstats *st);

/* Asks for 4 KiB pages on st's sum arrays (they may have been marked for 2 MiB ones): for a
 * file whose records touch few of their pages, so that memory follows the records. A hint. */
void cs_segstats_advise_sparse(cs_segstats *st);

#endif
