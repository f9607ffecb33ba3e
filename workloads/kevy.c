/* kevy-alloc's rows (workloads published by the kevy-alloc README):
 * allocate+free pairs of 64, 400 and 4,096 bytes, and "churn 4096 x 400 B,
 * interleaved free".
 *
 * kevy-alloc frees with the size known (Rust's Layout). The parameter
 * `sized` = 1 frees through the allocator's sized free where it has one
 * (mi_free_size, sdallocx, heaplab's) and through plain free elsewhere;
 * the default 0 uses plain free for every allocator, so all are compared
 * on the same call.
 */
#include "wl_common.h"

/* free(p), or free_sized(p, size) when asked for and available */
typedef struct kevy_free {
    const alloc_table *a;
    void (*sized)(void *p, size_t size);
} kevy_free;

static kevy_free kevy_free_for(wl_ctx *ctx)
{
    kevy_free f = {ctx->a, NULL};
    if (wl_param(ctx, "sized") != 0)
        f.sized = ctx->a->free_sized;
    return f;
}

static inline void kevy_release(const kevy_free *f, void *p, size_t size)
{
    if (f->sized != NULL)
        f->sized(p, size);
    else
        f->a->free(p);
}

/* kevy-pair-64, -400, -4096: one block allocated and freed at a time. */

static int run_pair(wl_ctx *ctx)
{
    const long long pairs = wl_param(ctx, "pairs");
    const size_t size = (size_t)wl_param(ctx, "size");
    const kevy_free f = kevy_free_for(ctx);
    const wl_touch_mode touch = wl_touch_param(ctx);
    const alloc_table *a = ctx->a;

    uint64_t start = wl_now_ns();
    for (long long i = 0; i < pairs; i++) {
        void *p = a->malloc(size);
        if (p == NULL) {
            wl_fail(ctx, "malloc(%zu) returned NULL", size);
            return -1;
        }
        wl_touch_block(p, size, touch);
        kevy_release(&f, p, size);
    }
    uint64_t elapsed = wl_now_ns() - start;
    wl_metric(ctx, "ns_per_pair", (double)elapsed / (double)pairs, "ns", "lower");
    wl_operations(ctx, 2 * pairs);
    return 0;
}

#define KEVY_PAIR(suffix, bytes, quick_pairs)                                                 \
    const workload wl_kevy_pair_##suffix = {                                       \
        .name = "kevy-pair-" #suffix,                                              \
        .group = "kevy",                                                           \
        .describe = "one " #bytes "-byte block allocated and freed at a time",    \
        .metric = "ns_per_pair", .unit = "ns", .better = "lower",                  \
        .default_threads = 1, .threaded = 0,                                       \
        .params = {                                                                \
            {"pairs", 50000000, quick_pairs, 1, 10000000000LL, "allocate+free pairs"}, \
            {"size", bytes, 0, 1, 1 << 30, "block size in bytes"},                 \
            {"sized", 0, 0, 0, 1, "1: free with the size where the allocator can"}, \
            WL_TOUCH_PARAM(WL_TOUCH_FIRST), \
            {NULL, 0, 0, 0, 0, NULL},                                              \
        },                                                                         \
        .run = run_pair,                                                           \
    }

KEVY_PAIR(64, 64, 6000000);
KEVY_PAIR(400, 400, 6000000);
KEVY_PAIR(4096, 4096, 4000000);

/* kevy-churn: a table of 4,096 blocks of 400 B; each round frees every
 * other block (even slots in one round, odd in the next) and refills those
 * slots, so live and freed blocks alternate in memory and every block is
 * replaced every two rounds. An operation is one allocate or one free. */

enum { CHURN_STRIDE = 2 };

static int run_churn(wl_ctx *ctx)
{
    const size_t count = (size_t)wl_param(ctx, "count");
    const size_t size = (size_t)wl_param(ctx, "size");
    const long long rounds = wl_param(ctx, "rounds");
    const kevy_free f = kevy_free_for(ctx);
    const wl_touch_mode touch = wl_touch_param(ctx);
    const alloc_table *a = ctx->a;

    int rc = -1;
    void **blocks = wl_scratch_get(ctx, count * sizeof *blocks);
    if (blocks == NULL)
        return -1;
    for (size_t i = 0; i < count; i++) {
        blocks[i] = a->malloc(size);
        if (blocks[i] == NULL) {
            wl_fail(ctx, "malloc(%zu) returned NULL with %zu blocks live", size, i);
            goto out;
        }
        wl_touch_block(blocks[i], size, touch);
    }
    long long ops = 0;
    uint64_t start = wl_now_ns();
    for (long long r = 0; r < rounds; r++) {
        const size_t first = (size_t)r % CHURN_STRIDE;
        for (size_t i = first; i < count; i += CHURN_STRIDE)
            kevy_release(&f, blocks[i], size);
        for (size_t i = first; i < count; i += CHURN_STRIDE) {
            blocks[i] = a->malloc(size);
            if (blocks[i] == NULL) {
                wl_fail(ctx, "malloc(%zu) returned NULL in round %lld", size, r);
                /* the slots not yet refilled hold freed pointers: forget them */
                for (size_t k = i + CHURN_STRIDE; k < count; k += CHURN_STRIDE)
                    blocks[k] = NULL;
                goto out;
            }
            wl_touch_block(blocks[i], size, touch);
        }
        /* one free and one allocation per slot of this parity */
        ops += (long long)(CHURN_STRIDE * ((count - first + 1) / CHURN_STRIDE));
    }
    uint64_t elapsed = wl_now_ns() - start;
    wl_metric(ctx, "ns_per_op", (double)elapsed / (double)ops, "ns", "lower");
    rc = 0;
out:
    for (size_t i = 0; i < count; i++)
        if (blocks[i] != NULL)
            kevy_release(&f, blocks[i], size);
    /* the fill, the churn, and a free per block at the end */
    if (rc == 0)
        wl_operations(ctx, 2 * (long long)count + ops);
    wl_scratch_put(blocks, count * sizeof *blocks);
    return rc;
}

const workload wl_kevy_churn = {
    .name = "kevy-churn",
    .group = "kevy",
    .describe = "4,096 blocks of 400 B; every other one freed and refilled, alternating halves",
    .metric = "ns_per_op", .unit = "ns", .better = "lower",
    .default_threads = 1, .threaded = 0,
    .params = {
        {"count", 4096, 0, 1, 100000000, "blocks in the table"},
        {"size", 400, 0, 1, 1 << 30, "block size in bytes"},
        {"rounds", 20000, 2500, 1, 1000000000, "free-every-other-and-refill rounds"},
        {"sized", 0, 0, 0, 1, "1: free with the size where the allocator can"},
        WL_TOUCH_PARAM(WL_TOUCH_FIRST),
        {NULL, 0, 0, 0, 0, NULL},
    },
    .run = run_churn,
};
