/* libFuzzer target for the loader's 2-thread fast path over a file mapping (what cs_load_file
 * does for a large regular file): the bytes are written to a POSIX shared-memory object (RAM,
 * no disk file), mapped read-only and private as cs_load_file maps a file, and loaded with two
 * threads and page dropping on (file_backed). Whenever the fast path takes the input, it must
 * give exactly what the libcsv path gives. Starts a thread per input, so it is slower than
 * fuzz_load.c; the first byte picks the options as there, and its bit 5 a one-pass load
 * (engine/metrics/rowsums.h) on the fast path. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int shm_fd = -1;

/* One shared-memory object for the whole run, unlinked at once (it lives while open). */
static int shm_open_once(void)
{
    if (shm_fd >= 0) return shm_fd;
    char name[64];
    snprintf(name, sizeof name, "/calscope-fuzz-%ld", (long)getpid());
    shm_fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (shm_fd < 0) abort();
    shm_unlink(name);
    return shm_fd;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cs_load_options opt;
    int one_pass = size > 0 && (data[0] >> 5) & 1;
    if (!fuzz_take_options(&data, &size, &opt)) return 0;
    if (size == 0) return 0;            /* nothing to map; fuzz_load.c covers empty input */

    int fd = shm_open_once();
    if (ftruncate(fd, 0) != 0 || ftruncate(fd, (off_t)size) != 0 ||
        pwrite(fd, data, size, 0) != (ssize_t)size)
        abort();
    void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) abort();
    /* bit 5 of the options byte: a summing load (load_sums.h) on the fast path, whose sums
     * must give the values of every row kept by libcsv */
    cs_load_tuning tf = { .path = CSL_PATH_FAST, .threads = 2, .file_backed = 1 };
    fuzz_against_csv_sums(data, size, &opt, 0, map, &tf, one_pass ? 15 : 0);
    munmap(map, size);
    return 0;
}
