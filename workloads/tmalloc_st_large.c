/* tmalloc's single-thread rows for big blocks (workloads published by the
 * tmalloc README): "16-128 KB blocks, 2,000 live, touched" and
 * "1-4 MB blocks, touched". Metric: nanoseconds per allocate+free pair.
 * "Touched" here means one byte written per 4 KiB page of every new block
 * (touch=pages, the default; wl_touch), so the pages are really faulted in;
 * KB and MB are read as KiB and MiB.
 */
#include "wl_steady.h"

enum { KIB = 1024, MIB = 1024 * 1024 };

/* tmalloc-st-medium: a 2,000-block live set replaced one block at a time. */

typedef struct range_cfg {
    uint32_t lo, hi;
} range_cfg;

static uint32_t draw_range(wl_rng *rng, const void *cfgp)
{
    const range_cfg *cfg = cfgp;
    return (uint32_t)wl_rng_range(rng, cfg->lo, cfg->hi);
}

static int run_st_medium(wl_ctx *ctx)
{
    const long long live = wl_param(ctx, "live");
    const long long pairs = wl_param(ctx, "pairs");
    range_cfg cfg = {(uint32_t)wl_param(ctx, "min_size"), (uint32_t)wl_param(ctx, "max_size")};
    if (wl_check_order(ctx, "min_size", cfg.lo, "max_size", cfg.hi) != 0)
        return -1;

    wl_steady st;
    int rc = -1;
    if (wl_steady_prepare(ctx, &st, (size_t)live, pairs, wl_touch_param(ctx), draw_range, &cfg) != 0)
        goto out;
    if (wl_steady_fill(ctx, &st) != 0)
        goto out;
    uint64_t start = wl_now_ns();
    if (wl_steady_churn(ctx, &st, pairs) != 0)
        goto out;
    uint64_t elapsed = wl_now_ns() - start;
    wl_metric(ctx, "ns_per_pair", (double)elapsed / (double)pairs, "ns", "lower");
    rc = 0;
out:
    wl_steady_release(ctx, &st);
    if (rc == 0)
        wl_operations(ctx, wl_steady_operations(live, pairs));
    return rc;
}

const workload wl_tmalloc_st_medium = {
    .name = "tmalloc-st-medium",
    .group = "tmalloc",
    .describe = "16-128 KiB blocks, 2,000 live, touched, steady state",
    .metric = "ns_per_pair", .unit = "ns", .better = "lower",
    .default_threads = 1, .threaded = 0,
    .params = {
        {"live", 2000, 0, 1, 10000000, "blocks live in the steady state"},
        {"pairs", 2000000, 50000, 1, 10000000000LL, "free+allocate pairs in the steady state"},
        {"min_size", 16 * KIB, 0, 1, 1 << 30, "smallest block size in bytes"},
        {"max_size", 128 * KIB, 0, 1, 1 << 30, "largest block size in bytes"},
        WL_TOUCH_PARAM(WL_TOUCH_PAGES),
        {NULL, 0, 0, 0, 0, NULL},
    },
    .run = run_st_medium,
};

/* tmalloc-st-huge: one huge block at a time, touched, then freed. */

static int run_st_huge(wl_ctx *ctx)
{
    const long long pairs = wl_param(ctx, "pairs");
    const long long lo = wl_param(ctx, "min_size");
    const long long hi = wl_param(ctx, "max_size");
    if (wl_check_order(ctx, "min_size", lo, "max_size", hi) != 0)
        return -1;
    const alloc_table *a = ctx->a;
    const wl_touch_mode touch = wl_touch_param(ctx);

    wl_rng rng;
    wl_rng_seed(&rng, ctx->seed);
    uint32_t *sizes = wl_draw_sizes_uniform(ctx, &rng, WL_SIZE_POOL_LEN,
                                            (uint32_t)lo, (uint32_t)hi);
    if (sizes == NULL)
        return -1;
    int rc = -1;
    uint64_t start = wl_now_ns();
    for (long long i = 0; i < pairs; i++) {
        size_t size = sizes[(size_t)i & WL_SIZE_POOL_MASK];
        void *p = a->malloc(size);
        if (p == NULL) {
            wl_fail(ctx, "malloc(%zu) returned NULL", size);
            goto out;
        }
        wl_touch_block(p, size, touch);
        a->free(p);
    }
    uint64_t elapsed = wl_now_ns() - start;
    wl_metric(ctx, "ns_per_pair", (double)elapsed / (double)pairs, "ns", "lower");
    wl_operations(ctx, 2 * pairs);
    rc = 0;
out:
    wl_scratch_put(sizes, WL_SIZE_POOL_LEN * sizeof *sizes);
    return rc;
}

const workload wl_tmalloc_st_huge = {
    .name = "tmalloc-st-huge",
    .group = "tmalloc",
    .describe = "1-4 MiB blocks, touched, allocated and freed one at a time",
    .metric = "ns_per_pair", .unit = "ns", .better = "lower",
    .default_threads = 1, .threaded = 0,
    .params = {
        {"pairs", 50000, 12000, 1, 1000000000, "allocate+touch+free pairs"},
        {"min_size", 1 * MIB, 0, 1, 1 << 30, "smallest block size in bytes"},
        {"max_size", 4 * MIB, 0, 1, 1 << 30, "largest block size in bytes"},
        WL_TOUCH_PARAM(WL_TOUCH_PAGES),
        {NULL, 0, 0, 0, 0, NULL},
    },
    .run = run_st_huge,
};
