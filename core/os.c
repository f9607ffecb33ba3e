/* heaplab core: the OS contract of os.h on Linux. This is the only core file
 * allowed platform #ifdefs.
 *
 * No function here changes errno: a call that fails may not fail the
 * allocation (a mapping the kernel will not name, an in-place mremap that
 * finds its neighbours taken), and a program's errno must survive a
 * successful malloc. Callers that do fail set ENOMEM themselves. */
#include "os.h"

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

int os_init(void)
{
    long page = sysconf(_SC_PAGESIZE);
    return page == (long)OS_PAGE ? 0 : -1;
}

static void name_mapping(void *p, size_t size, const char *name)
{
#if defined(PR_SET_VMA) && defined(PR_SET_VMA_ANON_NAME)
    /* Kernels before 5.17, or without CONFIG_ANON_VMA_NAME, refuse with
     * EINVAL, and will refuse every later mapping too: after one refusal
     * no fresh mapping pays the system call. */
    static _Atomic int refused;
    if (atomic_load_explicit(&refused, memory_order_relaxed))
        return;
    /* (errno: its callers restore it) */
    if (prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)p, size, (unsigned long)name) != 0 && errno == EINVAL)
        atomic_store_explicit(&refused, 1, memory_order_relaxed);
#else
    (void)p;
    (void)size;
    (void)name;
#endif
}

/* Fresh zero-filled read-write memory at `at` (replacing what was mapped
 * there), or anywhere when `at` is NULL; named `name`. NULL on failure. */
static void *map_fresh(void *at, size_t size, const char *name)
{
    int flags = MAP_PRIVATE | MAP_ANONYMOUS | (at ? MAP_FIXED : 0);
    void *p = mmap(at, size, PROT_READ | PROT_WRITE, flags, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    name_mapping(p, size, name);
    return p;
}

/* Of a reservation [start, start + span), the lowest m with (m + at) a
 * multiple of align; the rest of the span around [m, m + size) is unmapped,
 * through libc or (`raw`) the system call, as the reservation was made. */
static void unmap_part(uintptr_t p, size_t len, bool raw)
{
    if (len == 0)
        return;
    if (raw)
        syscall(SYS_munmap, p, len);
    else
        munmap((void *)p, len);
}

static uintptr_t keep_aligned(uintptr_t start, size_t span, size_t size, size_t align, size_t at, bool raw)
{
    uintptr_t m = ((start + at + align - 1) & ~(uintptr_t)(align - 1)) - at;
    unmap_part(start, m - start, raw);
    unmap_part(m + size, start + span - (m + size), raw);
    return m;
}

void *os_map_aligned_at(size_t size, size_t align, size_t at, const char *name)
{
    int saved = errno;
    void *result = NULL;
    if (at >= align)
        goto out;
    if (align <= OS_PAGE) {
        /* every mapping is page-aligned: one system call, not the four of
         * a reservation trimmed to its place (each takes the process's
         * mapping lock, which stalls the page faults of its other
         * threads) */
        result = map_fresh(NULL, size, name);
        goto out;
    }
    /* Reserve size + align of address space, keep the place inside it, and
     * only then map the block itself there, accounted. The reservation is
     * PROT_NONE and MAP_NORESERVE, so the kernel charges nothing for it:
     * an alignment of a GiB costs no commit, while the block is charged as
     * the overcommit policy says (a request the heuristic would refuse
     * fails here, not later when the program touches it). */
    size_t span = size + align;
    if (span < size)
        goto out;
    void *raw = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == MAP_FAILED)
        goto out;
    uintptr_t m = keep_aligned((uintptr_t)raw, span, size, align, at, false);
    result = map_fresh((void *)m, size, name);
    if (!result)
        munmap((void *)m, size);
out:
    errno = saved;
    return result;
}

void *os_map_aligned(size_t size, size_t align, const char *name)
{
    return os_map_aligned_at(size, align, 0, name);
}

void os_unmap(void *p, size_t size)
{
    int saved = errno;
    munmap(p, size);
    errno = saved;
}

void *os_reserve_readable(size_t size)
{
    int saved = errno;
    void *result = NULL;
    struct rlimit as;
    if (getrlimit(RLIMIT_AS, &as) != 0 || as.rlim_cur != RLIM_INFINITY)
        goto out;
    size_t span = 2 * size;
    long raw = syscall(SYS_mmap, NULL, span, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == -1)
        goto out;
    uintptr_t m = keep_aligned((uintptr_t)raw, span, size, size, 0, true);
    /* a core dump leaves it out (the segments mapped over it are dumped) */
    syscall(SYS_madvise, m, size, MADV_DONTDUMP);
    result = (void *)m;
out:
    errno = saved;
    return result;
}

int os_commit_fixed(void *p, size_t size, const char *name)
{
    int saved = errno;
    void *got = map_fresh(p, size, name);
    errno = saved;
    return got ? 0 : -1;
}

void os_decommit_readable(void *p, size_t size)
{
    int saved = errno;
    /* (out of mappings, the kernel may refuse to split one: the pages are
     * then dropped in place, and read as zeros all the same) */
    if (mmap(p, size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0) == MAP_FAILED)
        madvise(p, size, MADV_DONTNEED);
    else
        madvise(p, size, MADV_DONTDUMP);
    errno = saved;
}

/* The calling process (thread) for process_madvise, without opening a
 * pidfd: nothing to close, and in a fork child it means the child. A kernel
 * that predates the sentinel refuses it (EBADF), one that allows only the
 * cold and pageout hints refuses MADV_DONTNEED (EINVAL), one without
 * process_madvise (before 5.10) says ENOSYS, and a seccomp filter may say
 * EPERM: each leaves batches to one madvise per range. */
#define PIDFD_SELF_THREAD (-10000)
_Static_assert(sizeof(struct os_range) == sizeof(struct iovec), "os_range is laid out as struct iovec");

/* 0: not tried yet, 1: the kernel takes batches, -1: it does not */
static _Atomic int batch_support;

static size_t purge_one_by_one(const struct os_purge_batch *b)
{
    size_t calls = 0;
    for (unsigned i = 0; i < b->n; i++)
        calls += madvise(b->range[i].base, b->range[i].len, MADV_DONTNEED) == 0;
    return calls;
}

size_t os_purge_flush(struct os_purge_batch *b)
{
    if (b->n == 0)
        return 0;
    int saved = errno;
    size_t calls;
    if (!b->combine || b->n == 1 || atomic_load_explicit(&batch_support, memory_order_relaxed) < 0) {
        calls = purge_one_by_one(b);
    } else {
        size_t total = 0;
        for (unsigned i = 0; i < b->n; i++)
            total += b->range[i].len;
        long rc = syscall(SYS_process_madvise, PIDFD_SELF_THREAD, (const struct iovec *)b->range, (size_t)b->n,
                          MADV_DONTNEED, 0u);
        if (rc >= 0 && (size_t)rc == total) {
            atomic_store_explicit(&batch_support, 1, memory_order_relaxed);
            calls = 1;
        } else {
            /* refused, or stopped part way: every range again, one by
             * one (giving a range back twice does no harm), and batches
             * never again */
            atomic_store_explicit(&batch_support, -1, memory_order_relaxed);
            calls = purge_one_by_one(b);
        }
    }
    b->n = 0;
    errno = saved;
    return calls;
}

void os_purge_batches_off(void)
{
    atomic_store_explicit(&batch_support, -1, memory_order_relaxed);
}

size_t os_purge_add(struct os_purge_batch *b, void *p, size_t size)
{
    size_t calls = b->n == OS_PURGE_BATCH ? os_purge_flush(b) : 0;
    b->range[b->n++] = (struct os_range){p, size};
    return calls;
}

int os_remap_inplace(void *p, size_t old_size, size_t new_size)
{
    int saved = errno;
    void *q = mremap(p, old_size, new_size, 0);
    errno = saved;
    return q == MAP_FAILED ? -1 : 0;
}

int os_move_to(void *p, size_t size, void *dst)
{
    int saved = errno;
    void *q = mremap(p, size, size, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
    errno = saved;
    return q == MAP_FAILED ? -1 : 0;
}

uint64_t os_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void os_futex_wait(_Atomic uint32_t *word, uint32_t expected)
{
    /* a wait that finds the word changed fails with EAGAIN: the program's
     * errno must not see it */
    int saved = errno;
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
    errno = saved;
}

void os_futex_wake_one(_Atomic uint32_t *word)
{
    int saved = errno;
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    errno = saved;
}

void os_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

unsigned os_cpu_count(void)
{
    int saved = errno;
    cpu_set_t set;
    int count = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    errno = saved;
    return count > 0 ? (unsigned)count : 1;
}

const char *os_getenv(const char *name)
{
    return getenv(name);
}

static pthread_key_t exit_key;

int os_thread_exit_init(void (*on_exit)(void *))
{
    return pthread_key_create(&exit_key, on_exit) == 0 ? 0 : -1;
}

void os_thread_exit_arm(void *arg)
{
    (void)pthread_setspecific(exit_key, arg);
}

int os_on_fork(void (*prepare)(void), void (*parent)(void), void (*child)(void))
{
    return pthread_atfork(prepare, parent, child) == 0 ? 0 : -1;
}
