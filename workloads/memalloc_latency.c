/* memalloc-latency: "single-threaded latency" (workload published by the
 * memalloc README): p50 / p99 / p99.9 of the time one 64-byte allocation
 * takes. Each allocation is timed on its own with the monotonic clock
 * (wl_now_ns before and after the call). Allocations come in batches of
 * `batch`; each batch is then freed untimed, so the heap grows and shrinks
 * as a program's would and the tail includes the allocator's refills.
 *
 * The clock's own cost is inside every sample. It is measured separately
 * (the median of back-to-back clock reads, recorded as clock_overhead_ns)
 * and NOT subtracted: a subtracted median would make fast allocations look
 * negative or zero, and the seed's figures include the clock too.
 */
#include "wl_common.h"

/* Sorting: least-significant-digit radix sort, one byte per pass, so the
 * percentiles cost no allocation (qsort may call libc malloc, which would
 * put glibc's heap into another allocator's figures). */
enum { RADIX_BITS = 8, RADIX_BUCKETS = 1 << RADIX_BITS, RADIX_PASSES = 32 / RADIX_BITS };

static void sort_u32(uint32_t *v, uint32_t *tmp, size_t n)
{
    uint32_t *src = v, *dst = tmp;
    for (int pass = 0; pass < RADIX_PASSES; pass++) {
        const int shift = pass * RADIX_BITS;
        size_t count[RADIX_BUCKETS] = {0};
        for (size_t i = 0; i < n; i++)
            count[(src[i] >> shift) & (RADIX_BUCKETS - 1)]++;
        size_t at = 0;
        for (int b = 0; b < RADIX_BUCKETS; b++) {
            size_t c = count[b];
            count[b] = at;
            at += c;
        }
        for (size_t i = 0; i < n; i++)
            dst[count[(src[i] >> shift) & (RADIX_BUCKETS - 1)]++] = src[i];
        uint32_t *t = src;
        src = dst;
        dst = t;
    }
    /* an even number of passes leaves the sorted data back in v */
    _Static_assert(RADIX_PASSES % 2 == 0, "sorted data must end in v");
}

/* Nearest-rank percentile of sorted samples: the smallest value with at
 * least per100k/100,000 of the samples at or below it. */
static uint32_t percentile(const uint32_t *sorted, size_t n, uint64_t per100k)
{
    enum { HUNDRED_K = 100000 };
    uint64_t rank = ((uint64_t)n * per100k + HUNDRED_K - 1) / HUNDRED_K;
    if (rank == 0)
        rank = 1;
    return sorted[rank - 1];
}

/* Per-100,000 ranks of the three published percentiles. */
enum { P50 = 50000, P99 = 99000, P999 = 99900 };

/* A sample that does not fit 32 bits of nanoseconds (4 s) is clamped. */
static uint32_t clamp_ns(uint64_t ns)
{
    return ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;
}

static int run_latency(wl_ctx *ctx)
{
    const size_t samples = (size_t)wl_param(ctx, "samples");
    const size_t batch = (size_t)wl_param(ctx, "batch");
    const size_t size = (size_t)wl_param(ctx, "size");
    const size_t calib = (size_t)wl_param(ctx, "clock_samples");
    const alloc_table *a = ctx->a;
    const wl_touch_mode touch = wl_touch_param(ctx);

    int rc = -1;
    const size_t nsort = samples > calib ? samples : calib;
    uint32_t *ns = wl_scratch_get(ctx, nsort * sizeof *ns);
    uint32_t *tmp = ns ? wl_scratch_get(ctx, nsort * sizeof *tmp) : NULL;
    void **blocks = tmp ? wl_scratch_get(ctx, batch * sizeof *blocks) : NULL;
    if (blocks == NULL)
        goto out;

    /* the clock's own cost: two reads with nothing between them */
    for (size_t i = 0; i < calib; i++) {
        uint64_t t0 = wl_now_ns();
        uint64_t t1 = wl_now_ns();
        ns[i] = clamp_ns(t1 - t0);
    }
    sort_u32(ns, tmp, calib);
    const double clock_ns = percentile(ns, calib, P50);

    for (size_t done = 0; done < samples;) {
        size_t n = samples - done < batch ? samples - done : batch;
        for (size_t i = 0; i < n; i++) {
            uint64_t t0 = wl_now_ns();
            void *p = a->malloc(size);
            uint64_t t1 = wl_now_ns();
            if (p == NULL) {
                wl_fail(ctx, "malloc(%zu) returned NULL with %zu blocks live", size, i);
                for (size_t k = 0; k < i; k++)
                    a->free(blocks[k]);
                goto out;
            }
            /* written after the second clock read: the sample is the call alone */
            wl_touch_block(p, size, touch);
            blocks[i] = p;
            ns[done + i] = clamp_ns(t1 - t0);
        }
        for (size_t i = 0; i < n; i++)
            a->free(blocks[i]);
        done += n;
    }
    sort_u32(ns, tmp, samples);
    wl_metric(ctx, "p50_ns", percentile(ns, samples, P50), "ns", "lower");
    wl_metric(ctx, "p99_ns", percentile(ns, samples, P99), "ns", "lower");
    wl_metric(ctx, "p999_ns", percentile(ns, samples, P999), "ns", "lower");
    wl_metric(ctx, "clock_overhead_ns", clock_ns, "ns", "lower");
    wl_operations(ctx, 2 * (long long)samples);
    rc = 0;
out:
    wl_scratch_put(blocks, batch * sizeof *blocks);
    wl_scratch_put(tmp, nsort * sizeof *tmp);
    wl_scratch_put(ns, nsort * sizeof *ns);
    return rc;
}

const workload wl_memalloc_latency = {
    .name = "memalloc-latency",
    .group = "memalloc",
    .describe = "per-call latency of 64-byte allocations (p50/p99/p99.9), batches of 1,000 "
                "freed untimed",
    .metric = "p99_ns", .unit = "ns", .better = "lower",
    .default_threads = 1, .threaded = 0,
    .params = {
        {"samples", 10000000, 1000000, 1, 1000000000, "allocations timed"},
        {"batch", 1000, 0, 1, 100000000, "allocations before the batch is freed (untimed)"},
        {"size", 64, 0, 1, 1 << 30, "block size in bytes"},
        {"clock_samples", 100000, 0, 1, 100000000, "back-to-back clock reads for clock_overhead_ns"},
        WL_TOUCH_PARAM(WL_TOUCH_FIRST),
        {NULL, 0, 0, 0, 0, NULL},
    },
    .run = run_latency,
};
