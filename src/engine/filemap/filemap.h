/* A file mapped under a SIGBUS guard, so that one that shrinks while it is read is refused
 * instead of killing calscope: the loaders' mapped CSVs and the statistics reader use it, so it
 * sits in the base layer, below both. Ownership: a csl_map is the caller's; cs_load_unmap
 * releases it. Threads: as each function says. */
#ifndef CALSCOPE_ENGINE_FILEMAP_H
#define CALSCOPE_ENGINE_FILEMAP_H

#include <stddef.h>

struct stat;

typedef struct csl_map {
    char *data;            /* written only when mapped writable */
    size_t len;
    int slot;              /* guard slot, -1 = none */
} csl_map;

/* Maps len bytes of the regular file fd read-only (MAP_PRIVATE) under a SIGBUS guard: when
 * the file shrinks under the mapping, a page that vanished reads as zeros instead of killing
 * the process (the guard maps zero pages over the rest of the mapping), and cs_load_unmap
 * says so. The guard is a SIGBUS handler installed while at least one guarded mapping is
 * alive, restored to the previous action after the last; a SIGBUS at any other address is
 * handed to the previous action. Returns 0, or -1 when the file cannot be mapped (read it
 * instead). Any thread; a thread that reads the mapping must not block SIGBUS (threads from
 * cs_helper_start never do, calscope/thread.h): blocked, the fault kills the process. */
int cs_load_map(int fd, size_t len, csl_map *m);

/* cs_load_map, or when `writable` a copy-on-write mapping the caller may write into (the
 * statistics reader unescapes its header in place), populated at once. */
int cs_load_map_prot(int fd, size_t len, int writable, csl_map *m);

/* Every reader of a mapping calls it with where it has got to (p in or just past the
 * mapping), at least every MiB: the fast path's counts and parse, the libcsv feed, the
 * statistics reader. Returns 1 when that mapping has lost pages (the file shrank): the load
 * will be refused, so the reader stops instead of parsing the zeros that replaced them;
 * else 0 (also for memory that is no guarded mapping). The test hook lives
 * here: with CALSCOPE_TEST_SHRINK=AT,TO in the environment, the first call at or past byte
 * AT of a guarded mapping truncates its file to TO bytes, once per load. Any thread. */
int cs_load_map_check(const void *p);

/* Unmaps and unregisters; returns 1 when a page vanished while it was mapped (the file shrank),
 * else 0. Call it after every thread that read the mapping has finished. */
int cs_load_unmap(csl_map *m);

/* Pre-faults the whole pages inside [p, p + bytes) with one call (MADV_POPULATE_WRITE, Linux
 * 5.14) instead of one fault per page as they are first written: the row arrays as the parse
 * goes, and a wide header's arrays (100,000 columns: some 700 faults, a third of its load).
 * A hint: an older kernel refuses it and the pages fault in as before; under two pages it does
 * nothing. p is memory the caller owns (NULL is a no-op). Any thread. */
void cs_load_populate(void *p, size_t bytes);

/* 1 when fd (fd < 0: the file `path` names) has another size or modification time than
 * `before`, or `path` now names another file (path "-" skips that last check), else 0. Any
 * thread. */
int cs_load_changed(int fd, const char *path, const struct stat *before);

#endif
