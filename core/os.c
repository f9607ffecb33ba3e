/* heaplab core: the OS contract of os.h on Linux. This is the only core file
 * allowed platform #ifdefs. */
#include "os.h"

#include <sys/mman.h>
#include <sys/prctl.h>
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
    /* kernels before 5.17, or without CONFIG_ANON_VMA_NAME, refuse: harmless */
    (void)prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)p, size, (unsigned long)name);
#else
    (void)p;
    (void)size;
    (void)name;
#endif
}

void *os_map_aligned(size_t size, size_t align, const char *name)
{
    /* over-map by `align`, then cut the unaligned head and the tail */
    size_t span = size + align;
    if (span < size)
        return NULL;
    void *raw = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == MAP_FAILED)
        return NULL;
    uintptr_t start = (uintptr_t)raw;
    uintptr_t aligned = (start + align - 1) & ~(uintptr_t)(align - 1);
    size_t head = aligned - start;
    size_t tail = span - head - size;
    if (head)
        munmap(raw, head);
    if (tail)
        munmap((void *)(aligned + size), tail);
    name_mapping((void *)aligned, size, name);
    return (void *)aligned;
}

void os_unmap(void *p, size_t size)
{
    munmap(p, size);
}

int os_purge(void *p, size_t size)
{
    return madvise(p, size, MADV_DONTNEED);
}

int os_remap_inplace(void *p, size_t old_size, size_t new_size)
{
    void *q = mremap(p, old_size, new_size, 0);
    return q == MAP_FAILED ? -1 : 0;
}

int os_move_to(void *p, size_t size, void *dst)
{
    void *q = mremap(p, size, size, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
    return q == MAP_FAILED ? -1 : 0;
}

uint64_t os_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}
