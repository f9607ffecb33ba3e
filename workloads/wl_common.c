/* Helpers shared by the built-in workloads (see wl_common.h for why
 * bookkeeping memory comes from the kernel and not from the table). */
#include "wl_common.h"

#include <string.h>
#include <sys/mman.h>

/* Mixed into a worker's seed so thread k's stream differs from the run's
 * own stream and from thread k+1's (the golden-ratio increment splitmix64
 * uses, which spreads consecutive indices far apart). */
static const uint64_t THREAD_SEED_STEP = 0x9e3779b97f4a7c15ULL;

void *wl_scratch_get(wl_ctx *ctx, size_t bytes)
{
    if (bytes == 0)
        bytes = 1;
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        wl_fail(ctx, "could not map %zu bytes of bookkeeping memory", bytes);
        return NULL;
    }
    /* fault every page in now, so no timed loop pays for it */
    memset(p, 0, bytes);
    return p;
}

void wl_scratch_put(void *p, size_t bytes)
{
    if (p == NULL)
        return;
    if (bytes == 0)
        bytes = 1;
    munmap(p, bytes);
}

uint32_t *wl_draw_sizes_uniform(wl_ctx *ctx, wl_rng *rng, size_t n,
                                uint32_t lo, uint32_t hi)
{
    uint32_t *sizes = wl_scratch_get(ctx, n * sizeof *sizes);
    if (sizes == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++)
        sizes[i] = (uint32_t)wl_rng_range(rng, lo, hi);
    return sizes;
}

uint32_t *wl_draw_sizes_log(wl_ctx *ctx, wl_rng *rng, size_t n,
                            uint32_t lo, uint32_t hi)
{
    uint32_t *sizes = wl_scratch_get(ctx, n * sizeof *sizes);
    if (sizes == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++)
        sizes[i] = (uint32_t)wl_rng_logrange(rng, lo, hi);
    return sizes;
}

uint32_t *wl_draw_permutation(wl_ctx *ctx, wl_rng *rng, size_t n)
{
    uint32_t *perm = wl_scratch_get(ctx, n * sizeof *perm);
    if (perm == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++)
        perm[i] = (uint32_t)i;
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)wl_rng_range(rng, 0, i - 1);
        uint32_t t = perm[i - 1];
        perm[i - 1] = perm[j];
        perm[j] = t;
    }
    return perm;
}

int wl_check_order(wl_ctx *ctx, const char *lo_name, long long lo,
                   const char *hi_name, long long hi)
{
    if (lo <= hi)
        return 0;
    wl_fail(ctx, "parameter %s=%lld is above %s=%lld", lo_name, lo, hi_name, hi);
    return -1;
}

int wl_report_thread_failure(wl_ctx *ctx, const wl_thread_failure *first,
                             size_t stride, int n)
{
    const unsigned char *at = (const unsigned char *)first;
    for (int i = 0; i < n; i++) {
        const wl_thread_failure *f = (const wl_thread_failure *)(at + (size_t)i * stride);
        if (f->failed) {
            wl_fail(ctx, "thread %d: malloc(%zu) returned NULL", i, f->size);
            return -1;
        }
    }
    return 0;
}

void wl_report_frees(wl_ctx *ctx, const wl_free_count *first, size_t stride, int n,
                     wl_free_count extra)
{
    const unsigned char *at = (const unsigned char *)first;
    wl_free_count sum = extra;
    for (int i = 0; i < n; i++)
        wl_free_count_add(&sum, *(const wl_free_count *)(at + (size_t)i * stride));
    wl_frees(ctx, sum.frees, sum.cross_thread);
}

void wl_rng_seed_thread(wl_rng *r, uint64_t seed, int index)
{
    wl_rng_seed(r, seed + THREAD_SEED_STEP * (uint64_t)(index + 1));
}
