/* libFuzzer target for the loader's 2-thread fast path over a file mapping (what cs_load_file
 * does for a large regular file): the bytes are written to a POSIX shared-memory object (RAM,
 * no disk file), mapped read-only and private as cs_load_file maps a file, and loaded with two
 * threads and page dropping on (file_backed). Whenever the fast path takes the input, it must
 * give exactly what the libcsv path gives. Starts a thread per input, so it is slower than
 * fuzz_load.c; the first byte picks the options as there. */
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
    if (size < 1) return 0;
    cs_load_options opt;
    fuzz_load_options(data[0], &opt);
    data++;
    size--;
    if (size == 0) return 0;            /* nothing to map; fuzz_load.c covers empty input */

    int fd = shm_open_once();
    if (ftruncate(fd, 0) != 0 || ftruncate(fd, (off_t)size) != 0 ||
        pwrite(fd, data, size, 0) != (ssize_t)size)
        abort();
    void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) abort();

    cs_error e1, e2;
    cs_load_summary s1, s2;
    cs_load_tuning tc = { .path = CSL_PATH_CSV };
    cs_dataset *a = cs_load_buffer_tuned("f", data, size, &opt, &s1, &e1, &tc);
    cs_load_tuning tf = { .path = CSL_PATH_FAST, .threads = 2, .file_backed = 1 };
    cs_dataset *b = cs_load_buffer_tuned("f", map, size, &opt, &s2, &e2, &tf);
    if (b || e2.code != CS_EUSAGE)
        fuzz_same_load(a, &e1, &s1, b, &e2, &s2);
    munmap(map, size);
    cs_dataset_free(a);
    cs_dataset_free(b);
    cs_load_summary_free(&s1);
    cs_load_summary_free(&s2);
    return 0;
}
