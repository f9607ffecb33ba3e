/* memallocpp-locality: "cache-locality traversal" (workload published by
 * the MemAlloc README): allocate 500,000 structs of 64 bytes, one after
 * another, then walk them in allocation order summing one field, several
 * passes. What is measured is where the allocator put the structs: packed
 * side by side, a walk streams through memory; with headers or scattered
 * blocks, it touches more cache lines and pages. Metric: nanoseconds per
 * element visited (passes * count), traversal only.
 */
#include "wl_common.h"

/* The field summed sits at the start of each struct; the rest of the
 * struct is there to give it its published size. */
typedef struct loc_node {
    uint64_t value;
} loc_node;

static int run_locality(wl_ctx *ctx)
{
    const size_t count = (size_t)wl_param(ctx, "count");
    const size_t size = (size_t)wl_param(ctx, "size");
    const long long passes = wl_param(ctx, "passes");
    const alloc_table *a = ctx->a;
    const wl_touch_mode touch = wl_touch_param(ctx);

    int rc = -1;
    loc_node **nodes = wl_scratch_get(ctx, count * sizeof *nodes);
    if (nodes == NULL)
        return -1;
    uint64_t expect = 0;
    for (size_t i = 0; i < count; i++) {
        nodes[i] = a->malloc(size);
        if (nodes[i] == NULL) {
            wl_fail(ctx, "malloc(%zu) returned NULL with %zu structs live", size, i);
            goto out;
        }
        wl_touch_block(nodes[i], size, touch);
        nodes[i]->value = i;
        expect += i;
    }

    uint64_t sum = 0;
    uint64_t start = wl_now_ns();
    for (long long p = 0; p < passes; p++)
        for (size_t i = 0; i < count; i++)
            sum += nodes[i]->value;
    uint64_t elapsed = wl_now_ns() - start;
    /* also keeps the compiler from dropping the walk: its result is used */
    if (sum != expect * (uint64_t)passes) {
        wl_fail(ctx, "traversal sum %llu differs from %llu: the structs were overwritten",
                (unsigned long long)sum, (unsigned long long)(expect * (uint64_t)passes));
        goto out;
    }
    wl_metric(ctx, "ns_per_elem", (double)elapsed / ((double)count * (double)passes),
              "ns", "lower");
    rc = 0;
out:
    for (size_t i = 0; i < count; i++)
        a->free(nodes[i]);
    if (rc == 0)
        wl_operations(ctx, 2 * (long long)count);
    wl_scratch_put(nodes, count * sizeof *nodes);
    return rc;
}

const workload wl_memallocpp_locality = {
    .name = "memallocpp-locality",
    .group = "memalloc-cpp",
    .describe = "500,000 structs of 64 B allocated in a row, then walked in that order "
                "summing a field",
    .metric = "ns_per_elem", .unit = "ns", .better = "lower",
    .default_threads = 1, .threaded = 0,
    .params = {
        {"count", 500000, 0, 1, 100000000, "structs allocated and walked"},
        {"size", 64, 0, sizeof(loc_node), 1 << 20, "struct size in bytes"},
        {"passes", 50, 10, 1, 1000000, "walks over all structs"},
        WL_TOUCH_PARAM(WL_TOUCH_FIRST),
        {NULL, 0, 0, 0, 0, NULL},
    },
    .run = run_locality,
};
