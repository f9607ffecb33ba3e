/* heaplab core test: free memory goes back in batches while the process
 * has other threads. Free ranges kept apart by live blocks (medium blocks,
 * and runs of small blocks), all written, then hl_trim():
 *  - every live block still holds every byte it was written: a batch never
 *    gives back a page a live block overlaps;
 *  - the freed blocks' inner pages are no longer resident (mincore);
 *  - the purge calls: with an idle second thread, where the kernel takes a
 *    batch (probed here as the core probes it), far fewer system calls
 *    than ranges; alone on its thread, with HEAPLAB_PURGE_BATCH=0, or on a
 *    kernel that refuses batches, one call per range at least.
 * Usage: core_purge_batch threaded | alone | off (the last with
 * HEAPLAB_PURGE_BATCH=0 in the environment: threaded, one call a range). */
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "heaplab.h"
#include "idle_threads.h"
#include "testutil.h"

#define OS_PAGE 4096u
#define MEDIUM_BLOCKS 256
#define MEDIUM_SIZE (48u << 10)
#define SMALL_SIZE 2048u
/* runs of 32 small blocks (64 KiB) freed and kept in turn */
#define SMALL_RUN 32
#define SMALL_BLOCKS (SMALL_RUN * 256)

static unsigned char *medium[MEDIUM_BLOCKS];
static unsigned char *small[SMALL_BLOCKS];

/* whether this kernel gives back two ranges of the calling process in one
 * process_madvise call (the sentinel the core uses for "this process") */
static int kernel_takes_batches(void)
{
    unsigned char *m = mmap(NULL, 4 * OS_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return 0;
    m[0] = m[2 * OS_PAGE] = 1;
    struct iovec iov[2] = {{m, OS_PAGE}, {m + 2 * OS_PAGE, OS_PAGE}};
    long rc = syscall(SYS_process_madvise, -10000, iov, 2, MADV_DONTNEED, 0);
    int ok = rc == 2 * OS_PAGE && m[0] == 0 && m[2 * OS_PAGE] == 0;
    munmap(m, 4 * OS_PAGE);
    return ok;
}

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(seed * 131u + i * 7u);
}

static int intact(const unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != (unsigned char)(seed * 131u + i * 7u))
            return 0;
    return 1;
}

/* resident OS pages among the whole ones inside [p + skip, p + n) */
static size_t resident_inside(const unsigned char *p, size_t n, size_t skip)
{
    uintptr_t lo = ((uintptr_t)p + skip + OS_PAGE - 1) & ~(uintptr_t)(OS_PAGE - 1);
    uintptr_t hi = ((uintptr_t)p + n) & ~(uintptr_t)(OS_PAGE - 1);
    size_t resident = 0;
    for (uintptr_t a = lo; a < hi; a += OS_PAGE) {
        unsigned char v = 0;
        if (mincore((void *)a, OS_PAGE, &v) == 0)
            resident += v & 1u;
    }
    return resident;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "threaded") != 0 && strcmp(mode, "alone") != 0 && strcmp(mode, "off") != 0) {
        fprintf(stderr, "usage: core_purge_batch threaded|alone|off\n");
        return 2;
    }
    int threaded = strcmp(mode, "alone") != 0;
    int batched = strcmp(mode, "threaded") == 0;
    int kernel = kernel_takes_batches();
    if (threaded)
        idle_threads_start(1);
    printf("info the kernel %s batches of this process's ranges\n", kernel ? "takes" : "refuses");

    for (unsigned i = 0; i < MEDIUM_BLOCKS; i++) {
        medium[i] = hl_malloc(MEDIUM_SIZE);
        fill(medium[i], MEDIUM_SIZE, i);
    }
    for (unsigned i = 0; i < SMALL_BLOCKS; i++) {
        small[i] = hl_malloc(SMALL_SIZE);
        fill(small[i], SMALL_SIZE, i);
    }
    /* every other medium block, every other run of small blocks: each
     * freed range has live blocks on both sides */
    for (unsigned i = 0; i < MEDIUM_BLOCKS; i += 2)
        hl_free(medium[i]);
    for (unsigned i = 0; i < SMALL_BLOCKS; i++)
        if ((i / SMALL_RUN) % 2 == 0)
            hl_free(small[i]);
    hl_thread_flush();
    hl_stats_t before, after;
    hl_stats(&before);
    hl_trim();
    hl_stats(&after);
    size_t calls = after.purge_count - before.purge_count;
    printf("info %u freed medium blocks and %u freed runs of small blocks given back in %zu system calls\n",
           MEDIUM_BLOCKS / 2, SMALL_BLOCKS / SMALL_RUN / 2, calls);

    int medium_ok = 1, small_ok = 1;
    for (unsigned i = 1; i < MEDIUM_BLOCKS; i += 2)
        medium_ok &= intact(medium[i], MEDIUM_SIZE, i);
    for (unsigned i = 0; i < SMALL_BLOCKS; i++)
        if ((i / SMALL_RUN) % 2 == 1)
            small_ok &= intact(small[i], SMALL_SIZE, i);
    CHECK("every live medium block keeps every byte written", medium_ok);
    CHECK("every live small block keeps every byte written", small_ok);

    /* a freed medium block's first page holds the free-list links */
    size_t medium_resident = 0;
    for (unsigned i = 0; i < MEDIUM_BLOCKS; i += 2)
        medium_resident += resident_inside(medium[i], MEDIUM_SIZE, OS_PAGE);
    CHECK("the freed medium blocks' inner pages went back", medium_resident == 0);
    size_t small_resident = 0;
    for (unsigned i = 0; i < SMALL_BLOCKS; i += 2 * SMALL_RUN)
        small_resident += resident_inside(small[i], (size_t)SMALL_RUN * SMALL_SIZE, 0);
    CHECK("the freed runs of small blocks went back", small_resident == 0);

    /* each freed medium block is a range of its own, and so is each run */
    size_t ranges = MEDIUM_BLOCKS / 2 + SMALL_BLOCKS / SMALL_RUN / 2;
    if (batched && kernel)
        CHECK("batches: far fewer system calls than ranges", calls > 0 && calls * 8 < ranges);
    else
        CHECK("one by one: a system call per range at least", calls >= ranges);

    for (unsigned i = 1; i < MEDIUM_BLOCKS; i += 2)
        hl_free(medium[i]);
    for (unsigned i = 0; i < SMALL_BLOCKS; i++)
        if ((i / SMALL_RUN) % 2 == 1)
            hl_free(small[i]);
    if (threaded)
        idle_threads_stop();
    CHECK("hl_check clean", hl_check() == 0);
    hl_stats_t end;
    hl_stats(&end);
    CHECK("stats balanced", hl_stats_balanced(&end));
    return tu_finish();
}
