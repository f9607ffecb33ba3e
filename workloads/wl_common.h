/* Helpers shared by the built-in workloads: bookkeeping memory that is not
 * the measured allocator's, sizes and orders drawn before the timed loop,
 * and reporting an allocation that failed on a worker thread.
 *
 * Why bookkeeping memory bypasses the table: pointer arrays, pre-drawn
 * sizes and latency samples are the workload's own instruments. Taking them
 * from ctx->a would add the same few megabytes to every allocator's heap in
 * a different shape; taking them from libc malloc would mix glibc into a
 * mimalloc run. They come straight from the kernel instead, already faulted
 * in, so they cost every allocator the same and no page fault lands inside
 * a timed loop.
 */
#ifndef HEAPLAB_WORKLOADS_WL_COMMON_H
#define HEAPLAB_WORKLOADS_WL_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "workload.h"

/* Per-thread records sit on their own cache line so that one thread's
 * counters never share a line with another's (no false sharing). */
enum { WL_CACHE_LINE = 64 };

/* Pre-drawn size pools have this many entries and are indexed with
 * `i & WL_SIZE_POOL_MASK`, so a loop of any length reads sizes from an
 * array the compiler cannot fold, at the cost of one load. */
enum { WL_SIZE_POOL_LEN = 1 << 16, WL_SIZE_POOL_MASK = WL_SIZE_POOL_LEN - 1 };

/* Bookkeeping memory (see above): `bytes` from the kernel, zeroed and
 * faulted in. Returns NULL after calling wl_fail() when the kernel refuses. */
void *wl_scratch_get(wl_ctx *ctx, size_t bytes);
/* Gives back what wl_scratch_get returned (NULL is ignored). */
void wl_scratch_put(void *p, size_t bytes);

/* n sizes uniform in [lo, hi], or log-uniform in [lo, hi], into scratch
 * memory the caller gives back with wl_scratch_put(p, n * sizeof *p). */
uint32_t *wl_draw_sizes_uniform(wl_ctx *ctx, wl_rng *rng, size_t n,
                                uint32_t lo, uint32_t hi);
uint32_t *wl_draw_sizes_log(wl_ctx *ctx, wl_rng *rng, size_t n,
                            uint32_t lo, uint32_t hi);

/* A random permutation of 0 .. n-1 (Fisher-Yates) in scratch memory. */
uint32_t *wl_draw_permutation(wl_ctx *ctx, wl_rng *rng, size_t n);

/* Refuses a run whose parameter `lo_name` is above `hi_name`; returns -1
 * after wl_fail(), else 0. */
int wl_check_order(wl_ctx *ctx, const char *lo_name, long long lo,
                   const char *hi_name, long long hi);

/* What a worker thread records when the allocator returns NULL: worker
 * threads do not call wl_fail() themselves; the calling thread reports the
 * first failure after the threads have been joined. */
typedef struct wl_thread_failure {
    int failed;
    size_t size;
} wl_thread_failure;

/* Calls wl_fail() for the first failure among `n` records spaced `stride`
 * bytes apart starting at `first`; returns -1 if there was one, else 0. */
int wl_report_thread_failure(wl_ctx *ctx, const wl_thread_failure *first,
                             size_t stride, int n);

/* A thread's count of the blocks it freed, and of those it freed although
 * another thread had allocated them. Each worker keeps its own (in its
 * cache-line-aligned record, bumped where the workload already knows which
 * kind of free it makes), so counting adds no shared write to a timed loop. */
typedef struct wl_free_count {
    long long frees;
    long long cross_thread;
} wl_free_count;

/* Adds b to a. */
static inline void wl_free_count_add(wl_free_count *a, wl_free_count b)
{
    a->frees += b.frees;
    a->cross_thread += b.cross_thread;
}

/* Sums `n` counts spaced `stride` bytes apart starting at `first`, adds
 * `extra` (the calling thread's own) and records the total (wl_frees). */
void wl_report_frees(wl_ctx *ctx, const wl_free_count *first, size_t stride, int n,
                     wl_free_count extra);

/* `count` events in `ns` nanoseconds as millions per second (count per
 * nanosecond times one thousand). */
static inline double wl_millions_per_s(double count, uint64_t ns)
{
    enum { NS_PER_S_OVER_MILLION = 1000 };
    return count / (double)ns * NS_PER_S_OVER_MILLION;
}

/* Seeds a worker's generator from the run's seed and the worker's index,
 * so each thread draws its own stream and a run is reproducible. */
void wl_rng_seed_thread(wl_rng *r, uint64_t seed, int index);

#endif
