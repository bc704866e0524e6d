/* Files that change while they load.
 *
 * The loader maps a regular file (the fast path and its page dropping need the whole file in
 * memory without a copy). If the file then shrinks — a training script rewriting preds.csv —
 * touching a page past the new end raises SIGBUS, which would kill the process. The guard here
 * catches it without jumping out of the parser: the SIGBUS handler maps anonymous zero pages
 * over the rest of the faulting mapping and returns, so the access repeats and reads zeros;
 * the readers see at their next tick (cs_load_map_check, about every MiB) that the mapping
 * lost pages and stop as on a cancel, with no lock or allocation cut in half, and
 * cs_load_unmap reports the mapping as damaged. The caller then refuses the load
 * (cs_load_refuse_changed), which also catches growth and in-place rewrites by comparing the
 * file's size and modification time before and after, for mapped and read() inputs alike.
 *
 * Threads: the handler only reads lock-free atomics and calls mmap, so it runs safely in any
 * thread (the fast path's workers fault in their own threads). A SIGBUS from a fault is taken
 * by the thread that faulted, and only if that thread does not block it: blocked, the kernel
 * kills the process outright. So no thread calscope starts ever blocks it (calscope/thread.h).
 * The handler is installed while at least one guarded mapping exists and the previous action
 * is restored after the last; a SIGBUS outside every guarded mapping goes to that previous
 * action.
 *
 * A test hook (CALSCOPE_TEST_SHRINK=AT,TO) truncates the mapped file to TO bytes when the first
 * reader reaches byte AT of it (cs_load_map_check): a shrink that lands mid-load on the
 * thread chosen by the offset, without a clock. */
#include "engine/filemap/filemap.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define GUARD_SLOTS 64

typedef struct guard_slot {
    atomic_int used;
    _Atomic uintptr_t base;     /* 0 = not armed */
    atomic_size_t len;          /* whole pages */
    atomic_int hit;
    atomic_int prot;            /* of the mapping, for the zero pages that replace it */
    atomic_int fd;              /* the mapped file (the test hook truncates it) */
} guard_slot;

static guard_slot slots[GUARD_SLOTS];
static pthread_mutex_t guard_mu = PTHREAD_MUTEX_INITIALIZER;
static int guard_users;
static struct sigaction guard_prev;
static atomic_size_t guard_page;

/* Hands a SIGBUS that is not ours to the action that was installed before the guard. */
static void chain(int sig, siginfo_t *si, void *uc)
{
    const struct sigaction *p = &guard_prev;
    if (p->sa_flags & SA_SIGINFO) {
        if (p->sa_sigaction) { p->sa_sigaction(sig, si, uc); return; }
    } else if (p->sa_handler != SIG_DFL && p->sa_handler != SIG_IGN) {
        p->sa_handler(sig);
        return;
    }
    /* default action: restore it; a fault repeats on return and takes it, a sent signal is
     * raised again (it stays pending until this handler returns) */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(SIGBUS, &dfl, NULL);
    if (si->si_code <= 0) raise(sig);
}

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
    int saved = errno;
    uintptr_t a = (uintptr_t)si->si_addr;
    size_t page = atomic_load(&guard_page);
    /* only a fault (si_code > 0) has an address; a SIGBUS sent by kill() or raise() is not ours */
    for (int i = 0; i < GUARD_SLOTS && si->si_code > 0; i++) {
        uintptr_t b = atomic_load(&slots[i].base);
        size_t n = atomic_load(&slots[i].len);
        if (!b || a < b || a - b >= n) continue;
        uintptr_t pg = a & ~(uintptr_t)(page - 1);
        /* everything from the faulting page on is past the new end of the file (or about to be
         * discarded anyway): one mapping for the rest instead of one signal per page */
        void *z = mmap((void *)pg, (size_t)(b + n - pg), atomic_load(&slots[i].prot),
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
        if (z != MAP_FAILED) {
            atomic_store(&slots[i].hit, 1);
            errno = saved;
            return;
        }
        break;
    }
    errno = saved;
    chain(sig, si, uc);
}

/* ---- the test hook ---------------------------------------------------------------------- */

static atomic_int shrink_armed;
static size_t shrink_at, shrink_to;

static void shrink_read_env(void)
{
    const char *e = getenv("CALSCOPE_TEST_SHRINK");
    unsigned long long at, to;
    char end;
    int armed = e && sscanf(e, "%llu,%llu%c", &at, &to, &end) == 2;
    if (armed) {
        shrink_at = (size_t)at;
        shrink_to = (size_t)to;
    }
    atomic_store(&shrink_armed, armed);
}

/* Truncates slot i's file when a reader at offset `off` of it is at or past the hook's AT. */
static void shrink_hook(int i, size_t off)
{
    int armed = 1;
    if (off < shrink_at || !atomic_compare_exchange_strong(&shrink_armed, &armed, 0)) return;
    char self[64];    /* the fd is read-only: truncate the file it names */
    snprintf(self, sizeof self, "/proc/self/fd/%d", atomic_load(&slots[i].fd));
    if (truncate(self, (off_t)shrink_to) != 0) abort();   /* a test that cannot shrink */
}

int cs_load_map_check(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    for (int i = 0; i < GUARD_SLOTS; i++) {
        uintptr_t b = atomic_load_explicit(&slots[i].base, memory_order_relaxed);
        if (!b || a < b || a - b > atomic_load_explicit(&slots[i].len, memory_order_relaxed)) continue;
        if (atomic_load_explicit(&shrink_armed, memory_order_relaxed)) shrink_hook(i, (size_t)(a - b));
        return atomic_load(&slots[i].hit);
    }
    return 0;
}

static int guard_enter(void)
{
    int rc = 0;
    pthread_mutex_lock(&guard_mu);
    if (guard_users == 0) {
        shrink_read_env();      /* each load of a test may ask for another shrink */
        atomic_store(&guard_page, (size_t)sysconf(_SC_PAGESIZE));
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_sigbus;
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&sa.sa_mask);
        rc = sigaction(SIGBUS, &sa, &guard_prev);
    }
    if (rc == 0) guard_users++;
    pthread_mutex_unlock(&guard_mu);
    return rc;
}

static void guard_leave(void)
{
    pthread_mutex_lock(&guard_mu);
    if (--guard_users == 0) {
        /* restore only what we installed: a handler set by the program meanwhile stays */
        struct sigaction cur;
        if (sigaction(SIGBUS, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
            cur.sa_sigaction == on_sigbus)
            sigaction(SIGBUS, &guard_prev, NULL);
    }
    pthread_mutex_unlock(&guard_mu);
}

/* ---- mapping -------------------------------------------------------------------------------- */

int cs_load_map(int fd, size_t len, csl_map *m)
{
    return cs_load_map_prot(fd, len, 0, m);
}

int cs_load_map_prot(int fd, size_t len, int writable, csl_map *m)
{
    memset(m, 0, sizeof *m);
    m->slot = -1;
    if (len == 0 || guard_enter() != 0) return -1;
    int slot = -1;
    for (int i = 0; i < GUARD_SLOTS && slot < 0; i++) {
        int free_slot = 0;
        if (atomic_compare_exchange_strong(&slots[i].used, &free_slot, 1)) slot = i;
    }
    if (slot < 0) { guard_leave(); return -1; }     /* 64 files mapped at once: read() this one */
    /* writable: populated read-only (a writable private mapping is populated by copying every
     * page), then made writable, so only the pages written are copied */
    void *p = mmap(NULL, len, PROT_READ, MAP_PRIVATE | (writable ? MAP_POPULATE : 0), fd, 0);
    if (p != MAP_FAILED && writable && mprotect(p, len, PROT_READ | PROT_WRITE) != 0) {
        munmap(p, len);
        p = MAP_FAILED;
    }
    if (p == MAP_FAILED) {
        atomic_store(&slots[slot].used, 0);
        guard_leave();
        return -1;
    }
    if (!writable) madvise(p, len, MADV_SEQUENTIAL);
    size_t page = atomic_load(&guard_page);
    atomic_store(&slots[slot].hit, 0);
    atomic_store(&slots[slot].prot, writable ? PROT_READ | PROT_WRITE : PROT_READ);
    atomic_store(&slots[slot].fd, fd);
    atomic_store(&slots[slot].len, (len + page - 1) & ~(page - 1));
    atomic_store(&slots[slot].base, (uintptr_t)p);     /* armed last: len is valid by then */
    m->data = p;
    m->len = len;
    m->slot = slot;
    return 0;
}

int cs_load_unmap(csl_map *m)
{
    if (m->slot < 0) return 0;
    guard_slot *s = &slots[m->slot];
    int hit = atomic_load(&s->hit);
    atomic_store(&s->base, 0);
    munmap(m->data, m->len);
    atomic_store(&s->used, 0);
    guard_leave();
    memset(m, 0, sizeof *m);
    m->slot = -1;
    return hit;
}

int cs_load_changed(int fd, const char *path, const struct stat *b)
{
    struct stat a;
    if (fd >= 0 ? fstat(fd, &a) != 0 : stat(path, &a) != 0) return 1;
    if (fd < 0 && (a.st_dev != b->st_dev || a.st_ino != b->st_ino)) return 1;
    if (a.st_size != b->st_size || a.st_mtim.tv_sec != b->st_mtim.tv_sec ||
        a.st_mtim.tv_nsec != b->st_mtim.tv_nsec)
        return 1;
    if (strcmp(path, "-") != 0) {
        /* replaced under its name (written elsewhere and renamed over it) or removed */
        struct stat p;
        if (stat(path, &p) != 0 || p.st_dev != a.st_dev || p.st_ino != a.st_ino) return 1;
    }
    return 0;
}


/* Not in transparent huge pages (MADV_HUGEPAGE): populating 88 MB took 8 ms instead of 27 ms
 * when loads ran back to back, but on a virtual machine whose free memory goes back to the
 * host (virtio free page reporting hands back free 2 MB blocks, the very blocks huge pages
 * take) a load after a few idle seconds took 106-193 ms instead of 76-116 ms (400 MB: 1.1-1.3 s
 * instead of 0.32 s), and `calscope report` run once got slower. */
void cs_load_populate(void *p, size_t bytes)
{
#if defined(__linux__)
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
    const uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
    if (!p || bytes < 2 * pg) return;
    uintptr_t a = ((uintptr_t)p + pg - 1) & ~(pg - 1), b = ((uintptr_t)p + bytes) & ~(pg - 1);
    if (b <= a) return;
    /* memory the allocator gave back and took again is still backed: walking its pages again
     * costs about what the faults would (loads back to back in one process). Its last page
     * says: a fresh mapping has none of its pages yet. */
    unsigned char last = 0;
    if (mincore((void *)(b - pg), pg, &last) == 0 && (last & 1)) return;
    madvise((void *)a, b - a, MADV_POPULATE_WRITE);
#else
    (void)p;
    (void)bytes;
#endif
}
