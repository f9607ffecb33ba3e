/* memalloc-mixed: "mixed-size allocation" (workload published by the
 * memalloc README): sizes log-uniform in [8, 4096] bytes, a random subset
 * held live, 10M operations. Each operation picks a random slot of a table:
 * an empty slot gets a new block, a full one is freed, so about half the
 * slots are live at any time. The default 1,600 slots keep ~800 blocks
 * (~0.5 MB) live, the live size the seed reports. An operation is one call,
 * allocate or free. Metric: millions of operations per second.
 *
 * Fragmentation: the phase "end" records, at the end of the operations,
 * the bytes requested and still live; the runner adds RSS and the working
 * set above the process's start to the same record, and the Python side
 * derives rss_over_live = ws_above_start_bytes / live_bytes from it (a
 * workload cannot read RSS through the workload API).
 */
#include "wl_common.h"

/* Slots and sizes are drawn before the clock starts into a ring of at most
 * MIXED_RING_MAX entries (a power of two); a run longer than the ring goes
 * round it again. */
enum { MIXED_RING_MAX = 1 << 20 };

static int run_memalloc_mixed(wl_ctx *ctx)
{
    const long long ops = wl_param(ctx, "ops");
    const size_t slots = (size_t)wl_param(ctx, "slots");
    const long long lo = wl_param(ctx, "min_size");
    const long long hi = wl_param(ctx, "max_size");
    if (wl_check_order(ctx, "min_size", lo, "max_size", hi) != 0)
        return -1;
    const alloc_table *a = ctx->a;
    const wl_touch_mode touch = wl_touch_param(ctx);

    size_t ring = 1;
    while (ring < MIXED_RING_MAX && ring < (unsigned long long)ops)
        ring *= 2;
    int rc = -1;
    wl_rng rng;
    wl_rng_seed(&rng, ctx->seed);
    void **blocks = wl_scratch_get(ctx, slots * sizeof *blocks);
    uint32_t *block_size = blocks ? wl_scratch_get(ctx, slots * sizeof *block_size) : NULL;
    uint32_t *pick = block_size ? wl_scratch_get(ctx, ring * sizeof *pick) : NULL;
    uint32_t *sizes = pick ? wl_draw_sizes_log(ctx, &rng, ring, (uint32_t)lo,
                                               (uint32_t)hi) : NULL;
    if (sizes == NULL)
        goto out;
    for (size_t i = 0; i < ring; i++)
        pick[i] = (uint32_t)wl_rng_range(&rng, 0, slots - 1);

    /* phases end outside the timed stretch: wl_phase reads RSS and stats */
    wl_phase(ctx, "prepared", 0, 0);
    uint64_t start = wl_now_ns();
    for (long long k = 0; k < ops; k++) {
        size_t r = (size_t)k & (ring - 1);
        size_t s = pick[r];
        if (blocks[s] != NULL) {
            a->free(blocks[s]);
            blocks[s] = NULL;
            continue;
        }
        blocks[s] = a->malloc(sizes[r]);
        if (blocks[s] == NULL) {
            wl_fail(ctx, "malloc(%u) returned NULL after %lld operations",
                    (unsigned)sizes[r], k);
            goto out;
        }
        wl_touch_block(blocks[s], sizes[r], touch);
        block_size[s] = sizes[r];
    }
    uint64_t elapsed = wl_now_ns() - start;

    size_t live_bytes = 0;
    for (size_t s = 0; s < slots; s++)
        if (blocks[s] != NULL)
            live_bytes += block_size[s];
    wl_phase(ctx, "end", ops, live_bytes);
    wl_metric(ctx, "mops_per_s", wl_millions_per_s((double)ops, elapsed), "Mops/s", "higher");
    rc = 0;
out:
    if (blocks != NULL)
        for (size_t s = 0; s < slots; s++)
            a->free(blocks[s]);
    if (rc == 0) {
        wl_phase(ctx, "freed", (long long)slots, 0);
        /* one call per operation, then a free per slot, empty ones too */
        wl_operations(ctx, ops + (long long)slots);
    }
    wl_scratch_put(sizes, ring * sizeof *sizes);
    wl_scratch_put(pick, ring * sizeof *pick);
    wl_scratch_put(block_size, slots * sizeof *block_size);
    wl_scratch_put(blocks, slots * sizeof *blocks);
    return rc;
}

const workload wl_memalloc_mixed = {
    .name = "memalloc-mixed",
    .group = "memalloc",
    .describe = "log-uniform 8-4096 B blocks, random slots allocated or freed, "
                "about half of 1,600 live; 10M operations",
    .metric = "mops_per_s", .unit = "Mops/s", .better = "higher",
    .default_threads = 1, .threaded = 0,
    .params = {
        {"ops", 10000000, 3000000, 1, 10000000000LL, "allocate or free operations"},
        {"slots", 1600, 0, 1, 100000000, "slots that may hold a live block"},
        {"min_size", 8, 0, 1, 1 << 30, "smallest block size in bytes"},
        {"max_size", 4096, 0, 1, 1 << 30, "largest block size in bytes"},
        WL_TOUCH_PARAM(WL_TOUCH_FIRST),
        {NULL, 0, 0, 0, 0, NULL},
    },
    .run = run_memalloc_mixed,
};
